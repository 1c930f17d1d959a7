// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include "bouncer/result.hpp"

#include <fmt/format.h>

namespace bouncer {

const char* errc_name(Errc e) {
  switch (e) {
    case Errc::kInvalidArgument:
      return "invalid argument";
    case Errc::kRingFull:
      return "ring full";
    case Errc::kTimeout:
      return "timeout";
    case Errc::kHardware:
      return "hardware error";
    case Errc::kNoDevice:
      return "no device";
    case Errc::kState:
      return "bad state";
    case Errc::kQueueError:
      return "queue error";
    case Errc::kNoMemory:
      return "out of DMA memory";
    case Errc::kNotSupported:
      return "not supported";
  }
  return "unknown error";
}

std::string format_duration(std::chrono::nanoseconds d) {
  const int64_t ns = d.count();
  struct Unit {
    int64_t scale;
    const char* name;
  } const units[] = {{1'000'000'000, "s"}, {1'000'000, "ms"}, {1'000, "us"}};
  const int64_t mag = ns < 0 ? -ns : ns;
  for (const Unit& u : units) {
    // the largest unit of which d is at least one, shown with up to three decimals when exact
    if (mag < u.scale) continue;
    if (ns % (u.scale / 1000) != 0) continue;
    std::string v = fmt::format("{:.3f}", static_cast<double>(ns) / static_cast<double>(u.scale));
    while (v.back() == '0') v.pop_back();
    if (v.back() == '.') v.pop_back();
    return v + " " + u.name;
  }
  return fmt::format("{} ns", ns);
}

}  // namespace bouncer
