// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// The GoogleTest side of the passive-CM system tests, on top of the scenario library
// (scenario.hpp): test names per width / personality, per-test pcap paths, the library's
// checks as GoogleTest assertions (a Failure is an ADD_FAILURE, a fatal one a FAIL), the
// frame of a test (`CmTest`: platform, driver, listener, Scenario, pcap check) and the host
// program around an opened device (`with_cm`). Including it sends the host program's own
// errors (set_failure_sink) to the running test.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <utility>

#include "golden/gtest_tools.hpp"
#include "scenario.hpp"

namespace systest {

// Every Failure of a check as a failure of the running test, fatal ones as fatal (a failed
// ASSERT_: ::testing::Test::HasFatalFailure() holds afterwards). A fatal Failure is the last
// of its list.
inline void report(const Failures& failures) {
  for (const auto& f : failures) {
    if (f.fatal) {
      GTEST_FAIL() << f.message;
    }
    ADD_FAILURE() << f.message;
  }
}

inline const bool kFailuresToGtest = [] {
  set_failure_sink([](const std::string& m) { ADD_FAILURE() << m; });
  return true;
}();

inline std::string width_name(const ::testing::TestParamInfo<unsigned>& info) {
  return "w" + std::to_string(info.param);
}

// Tests that check what the initiator received run per data width and initiator personality.
using WidthPersonality = std::tuple<unsigned, bouncer::peer::Personality>;
inline std::string width_personality_name(const ::testing::TestParamInfo<WidthPersonality>& info) {
  return "w" + std::to_string(std::get<0>(info.param)) + "_" +
         bouncer::peer::to_string(std::get<1>(info.param));
}

inline std::string pcap_path(const std::string& name) {
  return ::testing::TempDir() + "bouncer_cm_" + name + ".pcap";
}

// The current test's name with '/' replaced: a file-name stem.
inline std::string test_stem() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string s = std::string(info->test_suite_name()) + "_" + info->name();
  for (char& c : s) {
    if (c == '/') c = '_';
  }
  return s;
}

inline sim::PlatformConfig platform_config(unsigned width, bool pcap = true) {
  sim::PlatformConfig pc;
  pc.data_width = width;
  if (pcap) pc.pcap_path = pcap_path(test_stem());
  return pc;
}

// ------------------------------------------------------------------ checks as assertions

// The end of every scenario: table empty, nothing held or awaiting, no surprise.
inline void expect_clean_end(Scenario& sc) { report(sc.check_clean_end()); }

// Peer c got exactly the reject its plan asked for (and its application what its
// personality makes of it).
inline void expect_rejected_as_planned(Scenario& sc, const Conn& c) {
  report(sc.check_rejected_as_planned(c));
}

// What c's application got is what its personality makes of the reject.
inline void expect_app_got_planned(Scenario& sc, const Conn& c) {
  report(sc.check_app_got_planned(c));
}

// The ConnectRequest carries exactly what peer c sent.
inline void expect_request_matches(const Conn& c) { report(check_request_matches(c)); }

// A scenario of one connection: peer `cfg` starts 100 cycles from now and is rejected
// with `pd`; settled within `max_cycles`, then `linger` more cycles of polling (for
// anything late: a retransmission, an event). The request and the reject are checked
// against the plan; `check(c, t)` gets the connection and its transcript (the trace of
// every failure from here on).
template <class F>
void run_one(Scenario& sc, const peer::InitiatorConfig& cfg, std::vector<std::byte> pd,
             uint64_t max_cycles, uint64_t linger, F&& check) {
  sc.add(cfg, sc.hal().now_cycles() + 100, std::move(pd));
  ASSERT_TRUE(sc.settle(max_cycles)) << sc.status();
  if (linger != 0) {
    ASSERT_FALSE(sc.pump([] { return false; }, linger));
  }
  const Conn& c = sc.conns.back();
  const auto t = transcript(sc.platform(), c.cfg.ip, c.cfg.port);
  SCOPED_TRACE(dump(t));
  expect_request_matches(c);
  expect_rejected_as_planned(sc, c);
  check(c, t);
}

// The capture's checks (check_pcap_file); without tshark the test is skipped after our own
// checksum check (a failure under CI=true).
inline void check_pcap(const std::string& path, const PcapWants& want, bool every = true) {
  const PcapCheck r = check_pcap_file(path, want, every);
  report(r.failures);
  if (r.tshark_missing) {
    GOLDEN_REQUIRE_TSHARK();
  }
}

// ------------------------------------------------------------------ test frames

// Runs `body(hal, dev, cm)` as the host program with an opened device and a Cm.
template <class F>
void with_cm(sim::Platform& plat, const bouncer::DeviceConfig& dc, F&& body) {
  plat.run([&](bouncer::hal::Device& hal) {
    auto dev = Device::open(hal, dc);
    ASSERT_TRUE(dev.ok()) << dev.error().message;
    Cm cm(**dev);
    body(hal, **dev, cm);
  });
}

// The frame of a passive-CM system test. A Platform of `cfg` (with the drop hook `drop`, if
// any) runs the host program: the driver opened with `dc`, a Cm listening on
// kLocalIp:kPort with `listen` (none: the body sets up its listeners) and a Scenario, handed
// to `body(plat, hal, dev, cm, sc)`. Once the platform is gone (the capture complete), the
// pcap is dissected against `wants` (filled by the body; empty: no reject expected in it),
// `every` as in check_pcap.
struct CmTest {
  sim::PlatformConfig cfg;
  bouncer::DeviceConfig dc = device_config();
  std::optional<bouncer::ListenOptions> listen = listen_options();
  sim::DropHook drop = {};
  bool every = true;
  PcapWants wants = {};

  template <class Body>
  void run(Body&& body) {
    {
      sim::Platform plat(cfg);
      if (drop) plat.set_drop_hook(drop);
      with_cm(plat, dc, [&](bouncer::hal::Device& hal, Device& dev, Cm& cm) {
        if (listen) {
          ASSERT_TRUE(cm.listen(kLocalIp, kPort, *listen).ok());
        }
        Scenario sc(plat, hal, dev, cm);
        body(plat, hal, dev, cm, sc);
      });
    }
    check_pcap(cfg.pcap_path, wants, every);
  }
};

}  // namespace systest
