// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// Where an Ethernet frame goes and what its TCP segment carries: the one walk over Ethernet II,
// an optional 802.1Q tag, IPv4 (any IHL) and TCP that the network dispatcher (sim/net) and the
// `bouncer sim` reports use. Not a validator: checksums and most lengths are not checked; the
// golden parser (tb/golden) is the tests' independent judge of a frame.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

namespace bouncer::sim {

// Destination of an Ethernet frame: IPv4 address and TCP port (host order).
struct TcpEndpoint {
  uint32_t ip = 0;
  uint16_t port = 0;
  bool operator==(const TcpEndpoint&) const = default;
};

// The TCP destination. nullopt if the frame is not IPv4/TCP, is truncated, or is a non-first
// IPv4 fragment.
std::optional<TcpEndpoint> tcp_destination(std::span<const uint8_t> frame);

// The TCP payload: from the data offset to the end of the IPv4 datagram (Ethernet padding
// excluded) or of the frame, whichever comes first. Empty where tcp_destination is nullopt or
// the segment carries no data.
std::span<const uint8_t> tcp_payload(std::span<const uint8_t> frame);

}  // namespace bouncer::sim
