// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include "card_capture.hpp"

#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "bouncer/device.hpp"
#include "bouncer/xrt_device.hpp"
#include "output_file.hpp"

namespace bouncer::cli {

namespace {

constexpr int kExitFailed = 1;
constexpr int kExitCannotRun = 2;
constexpr const char* kWho = "bouncer card capture";

struct CaptureOptions {
  std::string device;
  std::string xclbin;
  std::string out;
  double clock_mhz = 250.0;
  bool clear = false;
};

int run_capture(const CaptureOptions& o) {
  if (auto e = check_output_file("-o", o.out)) {
    fmt::print(stderr, "{}: {}\n", kWho, *e);
    return kExitCannotRun;
  }
  card::XrtOptions xo;
  xo.device = o.device;
  xo.xclbin = o.xclbin;
  xo.kernel_clock_mhz = o.clock_mhz;
  auto xrt = card::XrtDevice::open(xo);
  if (!xrt) {
    fmt::print(stderr, "{}: {}\n", kWho, xrt.error().message);
    if (xrt.error().code == Errc::kNoDevice) {
      fmt::print(stderr, "(`bouncer card probe` lists what this machine has)\n");
    }
    return kExitCannotRun;
  }
  auto frames = read_capture(**xrt, o.clear);
  if (!frames) {
    fmt::print(stderr, "{}: {}\n", kWho, frames.error().message);
    return frames.error().code == Errc::kNotSupported ? kExitCannotRun : kExitFailed;
  }
  if (const auto& f = (*xrt)->fault()) {
    fmt::print(stderr, "{}: {}\n", kWho, f->message);
    return kExitFailed;
  }
  auto n = write_capture_pcap(o.out, *frames, o.clock_mhz);
  if (!n) {
    fmt::print(stderr, "{}: {}\n", kWho, n.error().message);
    return kExitFailed;
  }
  size_t rx = 0;
  for (const auto& f : *frames) rx += f.dir == CapturedFrame::Dir::kRx;
  fmt::print("{} frames ({} RX, {} TX) -> {}\n", *n, rx, *n - rx, o.out);
  return 0;
}

}  // namespace

void add_card_capture_command(CLI::App& card) {
  auto o = std::make_shared<CaptureOptions>();
  CLI::App* c = card.add_subcommand(
      "capture", "Read the card's capture ring (the last frames of each direction) into a pcap");
  c->add_option("--device,-d", o->device, "User-PF BDF (0000:3b:00.1) or XRT index")->required();
  c->add_option("--output,-o", o->out, "pcap file to write")->required();
  c->add_option("--xclbin", o->xclbin, "xclbin to load first (default: the loaded one)");
  c->add_option("--clock-mhz", o->clock_mhz, "Kernel clock (ap_clk) in MHz, for the stamps")
      ->check(CLI::Range(1.0, 1000.0))
      ->capture_default_str();
  c->add_flag("--clear", o->clear, "Empty the ring after reading it");
  // the exit code ends the parse (CLI11_PARSE returns it; a RuntimeError prints nothing)
  c->callback([o] { throw CLI::RuntimeError(run_capture(*o)); });
}

}  // namespace bouncer::cli
