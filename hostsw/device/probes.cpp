// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// Latency probes: PROBE_CTRL / PROBE_STATUS / PROBE_LOST / PROBE_DATA_LO / _HI.
#include <fmt/format.h>

#include "bouncer/device.hpp"

namespace bouncer {

namespace {
namespace r = regs::reg;
namespace fc = regs::field::PROBE_CTRL;
namespace fs = regs::field::PROBE_STATUS;
namespace fh = regs::field::PROBE_DATA_HI;
}  // namespace

static Result<void> need_probes(const Caps& caps) {
  if (!caps.probes) {
    return make_error(Errc::kState, "this build has no latency probes (CAPS.PROBES = 0)");
  }
  return {};
}

Result<void> Device::probes_start() {
  std::lock_guard lk(mu_);
  if (auto ok = need_probes(caps_); !ok) return ok;
  hal_.write32(r::PROBE_CTRL, fc::ENABLE.put(0) | fc::CLEAR.put(1));
  hal_.write32(r::PROBE_CTRL, fc::ENABLE.put(1));
  return {};
}

Result<void> Device::probes_stop() {
  std::lock_guard lk(mu_);
  if (auto ok = need_probes(caps_); !ok) return ok;
  hal_.write32(r::PROBE_CTRL, 0);
  return {};
}

Result<ProbeStatus> Device::probe_status() {
  std::lock_guard lk(mu_);
  if (auto ok = need_probes(caps_); !ok) return ok.error();
  const uint32_t st = hal_.read32(r::PROBE_STATUS);
  ProbeStatus s;
  s.count = fs::COUNT.get(st);
  s.overflow = fs::OVERFLOW.get(st) != 0;
  s.lost = hal_.read32(r::PROBE_LOST);
  return s;
}

Result<std::vector<ProbeRecord>> Device::read_probes(size_t max) {
  std::lock_guard lk(mu_);
  if (auto ok = need_probes(caps_); !ok) return ok.error();
  std::vector<ProbeRecord> out;
  while (out.size() < max) {
    const unsigned n = fs::COUNT.get(hal_.read32(r::PROBE_STATUS));
    if (n == 0) break;
    for (unsigned i = 0; i < n && out.size() < max; ++i) {
      ProbeRecord rec;
      rec.cycle = hal_.read32(r::PROBE_DATA_LO);
      const uint32_t hi = hal_.read32(r::PROBE_DATA_HI);
      rec.stage = static_cast<regs::ProbeStage>(fh::STAGE.get(hi));
      rec.tag = fh::TAG.get(hi);
      if (rec.stage == regs::ProbeStage::NONE) {
        return make_error(Errc::kHardware,
                          fmt::format("PROBE_STATUS.COUNT was {} but record {} was empty", n, i));
      }
      out.push_back(rec);
    }
  }
  return out;
}

}  // namespace bouncer
