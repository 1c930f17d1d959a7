// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// The C API's example server (hostsw/capi/example/reject_server.c, written in C against
// bouncer/bouncer_cma.h) runs as the host program of the co-simulation: three simulated
// initiators connect, the server prints each request and rejects it with its reason, and each
// initiator receives that reason as the reject's private data.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <string>
#include <vector>

#include "bouncer/bouncer_cma.h"
#include "bouncer/capi.hpp"
#include "bouncer/device.hpp"
#include "bouncer/peer/initiator.hpp"
#include "bouncer/regs.hpp"
#include "bouncer/sim/platform.hpp"
#include "reject_server.h"

namespace {

namespace sim = bouncer::sim;
namespace peer = bouncer::peer;

constexpr uint32_t kLocalIp = 0x0A000001;
constexpr uint16_t kPort = 4791;

peer::InitiatorConfig initiator(unsigned i) {
  peer::InitiatorConfig ic;
  ic.mac = {0x02, 0, 0, 0, 0, static_cast<uint8_t>(0x10 + i)};
  ic.peer_mac = {0x02, 0, 0, 0, 0, 0x01};
  ic.ip = 0x0A000002 + i;
  ic.peer_ip = kLocalIp;
  ic.port = static_cast<uint16_t>(40000 + i);
  ic.peer_port = kPort;
  ic.isn = 0x12345678u * (i + 1);
  ic.mpa_rev = 2;
  ic.enhanced = true;
  const std::string pd = "client " + std::to_string(i);
  ic.private_data.assign(pd.begin(), pd.end());
  ic.rto_cycles = 20'000;
  ic.time_wait_cycles = 2'000;
  return ic;
}

std::string slurp(FILE* f) {
  std::rewind(f);
  std::string s;
  std::array<char, 256> buf{};
  while (std::fgets(buf.data(), static_cast<int>(buf.size()), f) != nullptr) s += buf.data();
  return s;
}

// One platform per process (SystemC elaborates once): the 64-bit datapath.
TEST(SystemCapi, ExampleServerRejectsEveryRequestWithItsReason) {
  constexpr unsigned kPeers = 3;
  const std::string reason = "bouncer says no";
  sim::PlatformConfig pc;
  pc.data_width = 64;
  sim::Platform plat(pc);
  std::string printed;
  plat.run([&](bouncer::hal::Device& hal) {
    EXPECT_EQ(bouncer_create_event_channel(), nullptr) << "no device attached yet";
    EXPECT_EQ(errno, ENODEV);
    bouncer::DeviceConfig dc;
    bouncer::TimerConfig t;
    t.tick_cycles = 16;
    t.rto_init = 2'000;
    t.rto_max = 16'000;
    t.mpa_timeout = 100'000;
    t.fin_timeout = 100'000;
    t.time_wait = 500;
    dc.timers = t;
    auto dev = bouncer::Device::open(hal, dc);
    ASSERT_TRUE(dev.has_value()) << dev.error().message;
    bouncer::ListenOptions lo;
    lo.local_mac = initiator(0).peer_mac;
    bouncer::bouncer_capi_attach(**dev, lo);
    // The peers start once the server listens (a SYN before that gets a RST).
    for (unsigned i = 0; i < kPeers; ++i)
      plat.add_peer(initiator(i), plat.cycles() + 50'000 + 500 * i);
    FILE* out = std::tmpfile();
    ASSERT_NE(out, nullptr);
    EXPECT_EQ(reject_server(kLocalIp, kPort, kPeers, reason.c_str(), out), 0);
    printed = slurp(out);
    std::fclose(out);
    for (int i = 0; i < 400 && !plat.peers_finished(); ++i) hal.wait_cycles(1'000);
    bouncer::bouncer_capi_detach();
  });
  std::printf("%s", printed.c_str());
  ASSERT_TRUE(plat.peers_finished());
  for (unsigned i = 0; i < kPeers; ++i) {
    const auto& o = plat.peer(i).outcome();
    EXPECT_TRUE(o.rejected) << i << ": " << o.error;
    EXPECT_EQ(std::string(o.reject_pd.begin(), o.reject_pd.end()), reason) << i;
    EXPECT_NE(printed.find("\"client " + std::to_string(i) + "\""), std::string::npos) << printed;
  }
  // The initiators' IRD/ORD word reaches initiator_depth / responder_resources.
  const auto ic = initiator(0);
  const std::string ird_ord = "ird " + std::to_string((ic.ird_ord >> 16) & 0x3FFF) + ", ord " +
                              std::to_string(ic.ird_ord & 0x3FFF);
  EXPECT_NE(printed.find(ird_ord), std::string::npos) << printed;
  EXPECT_EQ(std::count(printed.begin(), printed.end(), '\n'), 2 * kPeers);
}

}  // namespace

// libsystemc provides main() and calls sc_main().
extern "C" int sc_main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
