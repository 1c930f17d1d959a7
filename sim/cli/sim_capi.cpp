// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// `bouncer sim --mode capi`: the C example server (hostsw/capi/example/reject_server.c,
// written against bouncer/bouncer_cma.h as one would against librdmacm) is the host program:
// simulated initiators connect, the server prints each request and rejects it with its
// reason (--pd-text, default below), and every initiator must receive exactly that reason.
#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include "bouncer/capi.hpp"
#include "bouncer/device.hpp"
#include "bouncer/peer/initiator.hpp"
#include "bouncer/sim/platform.hpp"
#include "reject_server.h"
#include "sim_cmd.hpp"

namespace bouncer::cli {

namespace {
constexpr uint32_t kServerIp = 0x0A000001;  // 10.0.0.1
constexpr uint16_t kServerPort = 20049;
constexpr MacAddr kServerMac = {0x02, 0x00, 0x00, 0x00, 0x00, 0x01};
constexpr uint64_t kPeersStart = 50'000;  // cycles after open: the server listens by then
}  // namespace

int run_capi_mode(const SimOptions& o) {
  const std::string reason = o.pd_text.value_or("bouncer: the C example server says no");
  const sim::PlatformConfig pc = platform_config(o);
  int rc = 0;
  try {
    const SimSpeed speed(pc.data_width);
    sim::Platform platform(pc);
    platform.run([&](hal::Device& hal) {
      DeviceConfig dc;
      auto dev = open_device(hal, dc, "bouncer sim");
      if (!dev) {
        rc = 1;
        return;
      }
      ListenOptions lo;
      lo.local_mac = kServerMac;
      bouncer_capi_attach(*dev, lo);
      for (unsigned i = 0; i < o.connections; ++i) {
        peer::InitiatorConfig p;
        p.mac = {0x02, 0x00, 0x00, 0x02, static_cast<uint8_t>(i >> 8), static_cast<uint8_t>(i)};
        p.peer_mac = kServerMac;
        p.ip = 0x0A000000u | ((i / 250) << 8) | (2 + i % 250);
        p.peer_ip = kServerIp;
        p.port = static_cast<uint16_t>(49152 + i % 16000);
        p.peer_port = kServerPort;
        p.isn = 0x9E3779B9u * (i + 1);
        p.mpa_rev = static_cast<uint8_t>(o.rev);
        p.enhanced = o.rev == 2;
        const std::string pd = fmt::format("client {}", i);
        p.private_data.assign(pd.begin(), pd.end());
        p.rto_cycles = 20'000;
        p.time_wait_cycles = 8'000;
        platform.add_peer(p, platform.cycles() + kPeersStart + 2'000 * i);
      }
      fmt::print("C example server on {}.{}.{}.{}:{}, rejecting {} request(s) with \"{}\"\n",
                 kServerIp >> 24, (kServerIp >> 16) & 0xFF, (kServerIp >> 8) & 0xFF,
                 kServerIp & 0xFF, kServerPort, o.connections, reason);
      std::fflush(stdout);
      if (reject_server(kServerIp, kServerPort, static_cast<int>(o.connections), reason.c_str(),
                        stdout) != 0) {
        fmt::print(stderr, "bouncer sim: reject_server: {}\n", std::strerror(errno));
        rc = 1;
      }
      std::fflush(stdout);
      for (uint64_t waited = 0; waited < o.max_cycles && !platform.peers_finished();
           waited += 1'000) {
        hal.wait_cycles(1'000);
      }
      bouncer_capi_detach();
      if (!save_capture(*dev, o, pc.clock_mhz).empty()) rc = 1;
    });
    unsigned got = 0;
    for (unsigned i = 0; i < o.connections; ++i) {
      const auto& out = platform.peer(i).outcome();
      const bool ok =
          out.rejected && std::string(out.reject_pd.begin(), out.reject_pd.end()) == reason;
      if (ok) ++got;
      if (!ok) {
        fmt::print(
            "peer {}: {}\n", i,
            out.rejected ? "rejected with other private data" : "not rejected: " + out.error);
      }
    }
    fmt::print("\n{}\n", speed.line(platform));
    if (const std::string err = platform.finish_pcap(); !err.empty()) {
      fmt::print(stderr, "bouncer sim: --pcap: {}\n", err);
      rc = 1;
    } else if (!o.pcap.empty()) {
      fmt::print("pcap (both directions): {}\n", o.pcap);
    }
    const bool all = platform.peers_finished() && got == o.connections;
    fmt::print("check: every initiator got the server's reason ({} of {}){:>18}\n", got,
               o.connections, all ? "ok" : "FAILED");
    if (!all) rc = 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "bouncer sim: simulation failed: {}\n", e.what());
    return 3;
  }
  return rc;
}

}  // namespace bouncer::cli
