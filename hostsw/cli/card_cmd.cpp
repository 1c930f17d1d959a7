// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include "card_cmd.hpp"

#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <memory>

#include "bouncer/device.hpp"
#include "bouncer/selftest.hpp"
#include "bouncer/xrt_device.hpp"
#include "output_file.hpp"

namespace bouncer::cli {

namespace {

constexpr int kExitFailed = 1;
constexpr int kExitCannotRun = 2;

int run_probe(const CardOptions& o) {
  const auto rep = card::probe_cards(o.device, o.sysfs_root);
  fmt::print("{}", card::format_probe_report(rep));
  return rep.ok() ? 0 : kExitCannotRun;
}

// Loads the xclbin and opens the card for `who`; prints why and returns nullptr when it cannot.
std::unique_ptr<card::XrtDevice> open_card(const CardOptions& o, const char* who) {
  card::XrtOptions xo;
  xo.device = o.device;
  xo.xclbin = o.xclbin;
  xo.kernel_clock_mhz = o.clock_mhz;
  auto xrt = card::XrtDevice::open(xo);
  if (!xrt) {
    fmt::print(stderr, "{}: {}\n", who, xrt.error().message);
    if (xrt.error().code == Errc::kNoDevice) {
      fmt::print(stderr, "(`bouncer card probe` lists what this machine has)\n");
    }
    return nullptr;
  }
  return std::move(xrt).value();
}

int run_selftest(const CardOptions& o) {
  auto xrt = open_card(o, "bouncer card selftest");
  if (!xrt) return kExitCannotRun;
  const auto& info = xrt->info();
  fmt::print("device {} ({}), xclbin {}, IP {}, host memory bank {} ({})\n", info.bdf, info.name,
             info.xclbin_uuid, info.ip_name, info.host_bank, info.host_bank_tag);
  int rc = 0;
  {
    auto dev = Device::open(*xrt);
    if (!dev) {
      fmt::print(stderr, "bouncer card selftest: {}\n", dev.error().message);
      rc = kExitCannotRun;
    } else if (auto ready = (*dev)->wait_cm_ready(std::chrono::milliseconds(40)); !ready) {
      fmt::print(stderr, "bouncer card selftest: {}\n", ready.error().message);
      rc = kExitFailed;
    } else {
      SelftestOptions so;
      if (o.timeout_ms > 0) {
        so.timeout = std::chrono::nanoseconds(static_cast<int64_t>(o.timeout_ms * 1e6));
      }
      auto rep = run_loopback_selftest(**dev, so);
      if (!rep) {
        fmt::print(stderr, "bouncer card selftest: {}\n", rep.error().message);
        rc = kExitFailed;
      } else {
        fmt::print("{}", format_selftest_report(*rep));
        rc = rep->passed() ? 0 : kExitFailed;
      }
    }
  }  // Device closed (CTRL = 0) before the XRT device goes
  if (const auto& f = xrt->fault()) {
    fmt::print(stderr, "bouncer card selftest: {}\n", f->message);
    rc = kExitFailed;
  }
  return rc;
}

int run_bench(const CardOptions& o) {
  ProbeBenchConfig cfg;
  try {
    cfg = bench_config(o.bench_opts);
  } catch (const CLI::Error& e) {
    fmt::print(stderr, "bouncer card bench: {}\n", e.what());
    return kExitCannotRun;
  }
  if (auto e = check_output_file("--out", o.bench_opts.out)) {
    fmt::print(stderr, "bouncer card bench: {}\n", *e);
    return kExitCannotRun;
  }
  cfg.loopback = true;  // nothing leaves the card: the rejects are dropped at its own RX
  auto xrt = open_card(o, "bouncer card bench");
  if (!xrt) return kExitCannotRun;
  int rc = 0;
  {
    DeviceConfig dc;
    dc.num_sq = *std::max_element(cfg.sqs.begin(), cfg.sqs.end());
    auto dev = Device::open(*xrt, dc);
    if (!dev) {
      fmt::print(stderr, "bouncer card bench: {}\n", dev.error().message);
      rc = kExitCannotRun;
    } else {
      rc = run_bench_on(**dev, o.bench_opts, cfg, "bouncer card bench") == 0 ? 0 : kExitFailed;
    }
  }
  if (const auto& f = xrt->fault()) {
    fmt::print(stderr, "bouncer card bench: {}\n", f->message);
    rc = kExitFailed;
  }
  return rc;
}

}  // namespace

void add_card_commands(CLI::App& card, CardOptions& o) {
  card.require_subcommand(1);
  o.probe = card.add_subcommand(
      "probe", "List Alveo cards, their driver and the XRT runtime; exit 2 when XRT can open none");
  o.probe->add_option("--device,-d", o.device, "Only this PCI function (BDF)");
  o.probe->add_option("--sysfs-root", o.sysfs_root, "Where sysfs is (tests)")
      ->capture_default_str()
      ->group("");  // hidden
  o.selftest = card.add_subcommand(
      "selftest", "Load the xclbin, open the card and run the loopback self-test (CTRL.LOOPBACK)");
  o.selftest->add_option("--device,-d", o.device, "User-PF BDF (0000:3b:00.1) or XRT index")
      ->required();
  o.selftest->add_option("--xclbin", o.xclbin, "xclbin to load first (default: the loaded one)");
  o.selftest->add_option("--clock-mhz", o.clock_mhz, "Kernel clock (ap_clk) in MHz")
      ->check(CLI::Range(1.0, 1000.0))
      ->capture_default_str();
  o.selftest
      ->add_option("--timeout-ms", o.timeout_ms,
                   "Bound of each wait in milliseconds of host time (default 8)")
      ->check(CLI::Range(0.0, 3.6e6));
  o.bench = card.add_subcommand(
      "bench", "Reject latency per stage on the card from the RTL probes (CTRL.LOOPBACK set)");
  o.bench->add_option("--device,-d", o.device, "User-PF BDF (0000:3b:00.1) or XRT index")
      ->required();
  o.bench->add_option("--xclbin", o.xclbin, "xclbin to load first (default: the loaded one)");
  o.bench->add_option("--clock-mhz", o.clock_mhz, "Kernel clock (ap_clk) in MHz")
      ->check(CLI::Range(1.0, 1000.0))
      ->capture_default_str();
  add_bench_options(*o.bench, o.bench_opts, /*sim=*/false);
}

int run_card(const CardOptions& o) {
  if (o.probe != nullptr && *o.probe) return run_probe(o);
  if (o.selftest != nullptr && *o.selftest) return run_selftest(o);
  return run_bench(o);
}

}  // namespace bouncer::cli
