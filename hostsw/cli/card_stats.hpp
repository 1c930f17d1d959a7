// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// `bouncer card stats`: every statistics register (Device::stat_registers) with its rate,
// CM_CONNS, STATUS/QERR and the ring indices the core shows (SQ CI/PI, CQ, CCQ and AEQ
// head/tail, CQP CI). Register reads only, over any HAL backend: nothing is written, so the
// device is not reset or taken over (tb/unit/test_card_stats.cpp runs it on the fake HAL).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bouncer/device.hpp"
#include "bouncer/hal.hpp"

namespace bouncer::cli {

/// One register-visible index pair of a ring ("SQ0": CI, PI; "CQ": head, tail ...).
struct RingIndices {
  std::string name;
  const char* first_name;  // "ci", "head"
  uint32_t first;
  const char* second_name;  // "pi", "tail"; nullptr when the ring shows one index
  uint32_t second;
};

struct StatsSample {
  std::chrono::nanoseconds host{};  // hal.host_now() when the sample was taken
  uint64_t cycles = 0;              // CYCLE_LO/CYCLE_HI
  std::vector<StatValue> stats;     // every STAT_* register, in address order
  uint32_t cm_conns = 0;
  uint32_t status = 0;
  uint32_t qerr = 0;
  std::vector<RingIndices> rings;
};

/// Reads everything once (SQ blocks for CAPS.NUM_SQ SQs).
StatsSample sample_stats(hal::Device& hal);

/// Per-second rate of a counter between two samples: the 32-bit difference (a counter that
/// wrapped once counts right) over the time between them, measured by the core's cycle
/// counter at `clock_mhz` (the kernel clock); by the host clock when the cycle counter did not
/// advance or the clock is unknown (0). nullopt when no time passed.
std::optional<double> counter_rate(uint32_t before, uint32_t after, const StatsSample& prev,
                                   const StatsSample& cur, double clock_mhz);
/// Seconds between two samples, as counter_rate() measures them.
double sample_interval_s(const StatsSample& prev, const StatsSample& cur, double clock_mhz);

/// The sample as text: one line per counter (name, value, rate per second when `prev` is
/// given; STAT_LAST_LATENCY is a value, not a counter), then CM_CONNS, STATUS/QERR and the
/// rings. `clock_mhz` is the kernel clock the rates are taken against.
std::string format_stats(const StatsSample& cur, const StatsSample* prev, double clock_mhz);

}  // namespace bouncer::cli
