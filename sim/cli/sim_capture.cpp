// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// `bouncer sim ... --capture FILE`: the core's capture ring, read at the end of a run through
// the driver (bouncer::read_capture, as `bouncer card capture` reads a card's), as pcap.
#include <fmt/format.h>

#include "sim_cmd.hpp"

namespace bouncer::cli {

std::string save_capture(Device& dev, const SimOptions& o, double clock_mhz) {
  if (o.capture.empty()) return {};
  auto frames = dev.read_capture();
  if (!frames) {
    const std::string e = fmt::format("--capture: {}", frames.error().message);
    fmt::print(stderr, "bouncer sim: {}\n", e);
    return e;
  }
  auto n = write_capture_pcap(o.capture, *frames, clock_mhz);
  if (!n) {
    const std::string e = fmt::format("--capture: {}", n.error().message);
    fmt::print(stderr, "bouncer sim: {}\n", e);
    return e;
  }
  size_t rx = 0;
  for (const auto& f : *frames) rx += f.dir == CapturedFrame::Dir::kRx;
  fmt::print("capture ring: {} frames ({} RX, {} TX) -> {}\n", *n, rx, *n - rx, o.capture);
  return {};
}

}  // namespace bouncer::cli
