// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include "card_stats.hpp"

#include <fmt/format.h>

#include "bouncer/regs.hpp"

namespace bouncer::cli {

StatsSample sample_stats(hal::Device& hal) {
  StatsSample s;
  s.host = hal.host_now();
  s.cycles = hal.now_cycles();
  for (const StatValue& r : Device::stat_registers()) {
    s.stats.push_back({r.name, r.offset, hal.read32(r.offset)});
  }
  s.cm_conns = hal.read32(regs::reg::CM_CONNS);
  s.status = hal.read32(regs::reg::STATUS);
  s.qerr = hal.read32(regs::reg::QERR);
  const uint32_t caps = hal.read32(regs::reg::CAPS);
  unsigned num_sq = regs::field::CAPS::NUM_SQ.get(caps);
  if (caps == 0xFFFFFFFFu || num_sq == 0 || num_sq > regs::kNumSqMax) num_sq = regs::kNumSqMax;
  for (unsigned n = 0; n < num_sq; ++n) {
    s.rings.push_back({fmt::format("SQ{}", n), "ci",
                       hal.read32(regs::reg::SQ_CI + n * regs::reg::SQ_CI_STRIDE), "pi",
                       hal.read32(regs::reg::SQ_PI + n * regs::reg::SQ_PI_STRIDE)});
  }
  s.rings.push_back(
      {"CQ", "head", hal.read32(regs::reg::CQ_HEAD), "tail", hal.read32(regs::reg::CQ_TAIL)});
  s.rings.push_back({"CQP", "ci", hal.read32(regs::reg::CQP_CI), nullptr, 0});
  s.rings.push_back(
      {"CCQ", "head", hal.read32(regs::reg::CCQ_HEAD), "tail", hal.read32(regs::reg::CCQ_TAIL)});
  s.rings.push_back(
      {"AEQ", "head", hal.read32(regs::reg::AEQ_HEAD), "tail", hal.read32(regs::reg::AEQ_TAIL)});
  return s;
}

double sample_interval_s(const StatsSample& prev, const StatsSample& cur, double clock_mhz) {
  if (clock_mhz > 0 && cur.cycles > prev.cycles) {
    return static_cast<double>(cur.cycles - prev.cycles) / (clock_mhz * 1e6);
  }
  const auto d = cur.host - prev.host;
  return d.count() > 0 ? static_cast<double>(d.count()) / 1e9 : 0.0;
}

std::optional<double> counter_rate(uint32_t before, uint32_t after, const StatsSample& prev,
                                   const StatsSample& cur, double clock_mhz) {
  const double s = sample_interval_s(prev, cur, clock_mhz);
  if (!(s > 0)) return std::nullopt;
  return static_cast<double>(static_cast<uint32_t>(after - before)) / s;
}

std::string format_stats(const StatsSample& cur, const StatsSample* prev, double clock_mhz) {
  std::string out;
  if (prev != nullptr) {
    out +=
        fmt::format("interval {:.6f} s ({} core cycles at {:.3f} MHz)\n",
                    sample_interval_s(*prev, cur, clock_mhz), cur.cycles - prev->cycles, clock_mhz);
  } else {
    out += fmt::format("cycle {}\n", cur.cycles);
  }
  for (size_t i = 0; i < cur.stats.size(); ++i) {
    const StatValue& v = cur.stats[i];
    out += fmt::format("  {:<22} {:>10}", v.name, v.value);
    if (v.offset == regs::reg::STAT_LAST_LATENCY) {
      out += "  (cycles, last reject)";
    } else if (prev != nullptr && i < prev->stats.size() && prev->stats[i].offset == v.offset) {
      if (auto r = counter_rate(prev->stats[i].value, v.value, *prev, cur, clock_mhz)) {
        out += fmt::format("  {:>12.1f}/s", *r);
      }
    }
    out += "\n";
  }
  out += fmt::format("  {:<22} {:>10}\n", "CM_CONNS", cur.cm_conns);
  out += fmt::format("  {:<22} 0x{:08X}\n", "STATUS", cur.status);
  out += fmt::format("  {:<22} 0x{:08X}\n", "QERR", cur.qerr);
  out += "rings:";
  for (const RingIndices& r : cur.rings) {
    out += fmt::format(" {} {} {}", r.name, r.first_name, r.first);
    if (r.second_name != nullptr) out += fmt::format(" {} {}", r.second_name, r.second);
    out += ";";
  }
  out.back() = '\n';
  return out;
}

}  // namespace bouncer::cli
