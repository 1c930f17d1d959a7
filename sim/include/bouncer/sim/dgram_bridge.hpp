// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// Network-port bridge to QEMU's `-netdev dgram` (and the older `-netdev socket,udp=`):
// one UDP datagram on 127.0.0.1 = one Ethernet frame, destination MAC first, no FCS, no
// padding, no header. The bridge owns one UDP socket bound to 127.0.0.1:<local port> and sends
// to 127.0.0.1:<remote port> (the port QEMU binds as `local.port`).
//
// Containment: both ends are the IPv4 loopback address, and a datagram from any source other
// than 127.0.0.1:<remote port> is discarded and counted, so no frame from elsewhere can reach
// the simulated RNIC and nothing the RNIC sends leaves the host.
//
// This class knows nothing of the simulation: `bouncer sim --mode bridge` (sim/cli) moves
// frames between it and bouncer::sim::Platform (TX observer -> send, receive -> inject_rx).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace bouncer::sim {

struct DgramBridgeStats {
  uint64_t sent = 0;         // datagrams sent (frames to the peer)
  uint64_t received = 0;     // datagrams accepted (frames from the peer)
  uint64_t send_errors = 0;  // sendto() failures (e.g. nobody listening yet: ECONNREFUSED)
  uint64_t foreign = 0;      // datagrams from another source, discarded
  uint64_t bad_size = 0;     // datagrams shorter than an Ethernet header or truncated, discarded
  uint64_t bytes_sent = 0;
  uint64_t bytes_received = 0;
};

class DgramBridge {
 public:
  // Largest frame accepted or sent (the RX port's own limit).
  static constexpr size_t kMaxFrame = 65535;
  static constexpr size_t kMinFrame = 14;  // an Ethernet header

  // Binds 127.0.0.1:local_port (0: the kernel picks one, see local_port()) and sends to
  // 127.0.0.1:remote_port. Throws std::runtime_error naming the failing call and errno text,
  // std::invalid_argument for remote_port 0.
  DgramBridge(uint16_t local_port, uint16_t remote_port);
  ~DgramBridge();
  DgramBridge(const DgramBridge&) = delete;
  DgramBridge& operator=(const DgramBridge&) = delete;

  uint16_t local_port() const { return local_port_; }
  uint16_t remote_port() const { return remote_port_; }

  // Sends one frame as one datagram. false (counted in send_errors) if the kernel refused it,
  // e.g. because QEMU is not running yet; the frame is then lost, as on a cable with no link.
  bool send(std::span<const uint8_t> frame);
  // Returns the frames waiting on the socket, at most `max`, oldest first. Waits up to
  // `timeout_ms` for the first one (0: do not wait).
  std::vector<std::vector<uint8_t>> receive(int timeout_ms, size_t max = 64);

  const DgramBridgeStats& stats() const { return stats_; }

 private:
  int fd_ = -1;
  uint16_t local_port_ = 0;
  uint16_t remote_port_ = 0;
  DgramBridgeStats stats_;
  std::vector<uint8_t> buf_;
};

// Parses "PORT" or "127.0.0.1:PORT" (also "localhost:PORT"). Anything that is not the IPv4
// loopback address, or a port outside 1..65535, gives 0 and a message in *error.
uint16_t parse_loopback_port(std::string_view spec, std::string* error);

}  // namespace bouncer::sim
