// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// `bouncer card stats` and the clock measurement of `bouncer card selftest` on the
// co-simulated core: the same code the card runs (hostsw/cli/card_stats.cpp,
// measure_core_clock), over the simulation's HAL, around the loopback self-test, whose frames
// the counters must show exactly. Simulated time is exact, so rates and the clock are too.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <string>

#include "bouncer/device.hpp"
#include "bouncer/regs.hpp"
#include "bouncer/selftest.hpp"
#include "bouncer/sim/platform.hpp"
#include "card_stats.hpp"
#include "system_fixture.hpp"

using namespace std::chrono_literals;

namespace {

namespace R = bouncer::regs;
namespace cli = bouncer::cli;

uint32_t stat(const cli::StatsSample& s, uint32_t off) {
  for (const auto& v : s.stats) {
    if (v.offset == off) return v.value;
  }
  ADD_FAILURE() << "no statistics register at " << off;
  return 0;
}

class CardStatsCosim : public ::testing::TestWithParam<double> {};

TEST_P(CardStatsCosim, CountersRatesAndClockOfTheSelftest) {
  const double mhz = GetParam();
  bouncer::sim::PlatformConfig pc = systest::platform_config(64, false);
  pc.clock_mhz = mhz;
  bouncer::sim::Platform plat(pc);
  plat.run([&](bouncer::hal::Device& hal) {
    auto dev = bouncer::Device::open(hal, systest::device_config());
    ASSERT_TRUE(dev) << dev.error().message;
    ASSERT_TRUE((*dev)->wait_cm_ready(400us));

    auto clk = bouncer::measure_core_clock(hal, 50us);
    ASSERT_TRUE(clk) << clk.error().message;
    EXPECT_DOUBLE_EQ(clk->mhz, mhz) << "simulated time: the configured clock exactly";

    const cli::StatsSample before = cli::sample_stats(hal);
    auto rep = bouncer::run_loopback_selftest(**dev);
    ASSERT_TRUE(rep) << rep.error().message;
    ASSERT_TRUE(rep->passed()) << rep->failures();
    const cli::StatsSample after = cli::sample_stats(hal);

    const uint32_t frames = static_cast<uint32_t>(rep->frames.size());
    EXPECT_EQ(stat(after, R::reg::STAT_TX_FRAMES) - stat(before, R::reg::STAT_TX_FRAMES), frames);
    EXPECT_EQ(stat(after, R::reg::STAT_RX_FRAMES) - stat(before, R::reg::STAT_RX_FRAMES), frames)
        << "every frame looped back";
    const double secs = static_cast<double>(after.cycles - before.cycles) / (mhz * 1e6);
    EXPECT_DOUBLE_EQ(cli::sample_interval_s(before, after, mhz), secs);
    const auto rate = cli::counter_rate(stat(before, R::reg::STAT_TX_FRAMES),
                                        stat(after, R::reg::STAT_TX_FRAMES), before, after, mhz);
    ASSERT_TRUE(rate);
    EXPECT_DOUBLE_EQ(*rate, frames / secs);
    EXPECT_EQ(after.cm_conns, 0u) << "the self-test's connections are gone";
    // Every ring is drained: the core's head and tail (or CI and PI) agree.
    ASSERT_EQ(after.rings.size(), (*dev)->caps().num_sq + 4u);
    for (const auto& r : after.rings) {
      if (r.second_name != nullptr) {
        EXPECT_EQ(r.first, r.second) << r.name;
      }
    }
    const std::string text = cli::format_stats(after, &before, mhz);
    std::printf("%s", text.c_str());
    EXPECT_NE(text.find("STAT_TX_FRAMES"), std::string::npos);
    EXPECT_NE(text.find(fmt::format("{:.3f} MHz", mhz)), std::string::npos);
  });
}

INSTANTIATE_TEST_SUITE_P(Clock, CardStatsCosim, ::testing::Values(250.0, 200.0),
                         [](const ::testing::TestParamInfo<double>& i) {
                           return "mhz" + std::to_string(static_cast<int>(i.param));
                         });

}  // namespace

// libsystemc provides main() and calls sc_main().
extern "C" int sc_main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
