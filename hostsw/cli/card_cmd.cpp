// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include "card_cmd.hpp"

#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>

#include "bouncer/cmac_link.hpp"
#include "bouncer/device.hpp"
#include "bouncer/selftest.hpp"
#include "bouncer/xrt_device.hpp"
#include "card_stats.hpp"
#include "output_file.hpp"
#include "serve.hpp"

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
  xo.cmac_ip = o.cmac_ip;
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

// The driver's settings in core cycles that are durations, for the kernel clock in use: the
// timers keep their tick's length (TIMER_TICK = 256 cycles at 250 MHz, so every timeout in
// ticks keeps its meaning) and the DMA watchdog stays 1 ms.
DeviceConfig card_device_config(const card::XrtInfo& info) {
  DeviceConfig dc;
  const double mhz = info.kernel_clock_mhz;
  if (mhz > 0 && mhz != card::kDefaultKernelClockMhz) {
    TimerConfig t;
    t.tick_cycles = static_cast<uint32_t>(
        std::max(1.0, std::round(t.tick_cycles * mhz / card::kDefaultKernelClockMhz)));
    dc.timers = t;
    dc.dma_timeout_cycles = static_cast<uint32_t>(std::round(mhz * 1000.0));
  }
  return dc;
}

std::string clock_source(const CardOptions& o, const card::XrtInfo& info) {
  if (o.clock_mhz > 0) return "--clock-mhz";
  return info.xclbin_clock_mhz > 0 ? "the xclbin" : "the default: the xclbin names none";
}

// Measures the kernel clock over 100 ms of the host's steady clock and prints it; false (with
// the reason on stderr) when it cannot be measured or is more than 2 % off the one in use.
bool check_clock(card::XrtDevice& xrt, const CardOptions& o, const char* who) {
  const auto& info = xrt.info();
  auto m = measure_core_clock(xrt, std::chrono::milliseconds(100));
  if (!m) {
    fmt::print(stderr, "{}: {}\n", who, m.error().message);
    return false;
  }
  fmt::print("kernel clock: measured {:.3f} MHz; in use {:.3f} MHz ({}); xclbin {}\n", m->mhz,
             info.kernel_clock_mhz, clock_source(o, info),
             info.xclbin_clock_mhz > 0 ? fmt::format("{:.0f} MHz", info.xclbin_clock_mhz)
                                       : std::string("(no clock section)"));
  if (auto mm = clock_mismatch(m->mhz, info.kernel_clock_mhz)) {
    fmt::print(stderr, "{}: {}\n", who, *mm);
    return false;
  }
  return true;
}

int run_selftest(const CardOptions& o) {
  auto xrt = open_card(o, "bouncer card selftest");
  if (!xrt) return kExitCannotRun;
  const auto& info = xrt->info();
  fmt::print("device {} ({}), xclbin {}, IP {}, host memory bank {} ({})\n", info.bdf, info.name,
             info.xclbin_uuid, info.ip_name, info.host_bank, info.host_bank_tag);
  int rc = 0;
  if (!check_clock(*xrt, o, "bouncer card selftest")) rc = kExitFailed;
  {
    auto dev = Device::open(*xrt, card_device_config(info));
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
        if (!rep->passed()) rc = kExitFailed;
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
  cfg.clock_mhz = xrt->info().kernel_clock_mhz;
  int rc = 0;
  {
    DeviceConfig dc = card_device_config(xrt->info());
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

// The listeners of `card serve`: the configuration file, or one from the options.
std::optional<ServeConfig> serve_config(const CardOptions& o, const char* who) {
  ServeConfig c;
  if (!o.config.empty()) {
    for (const char* opt : {"--ip", "--port", "--mac", "--pd", "--template-pd", "--fin-policy",
                            "--auto-reject", "--backlog"}) {
      if (o.serve->count(opt) > 0) {
        fmt::print(stderr, "{}: {} and --config: the listeners come from one or the other\n", who,
                   opt);
        return std::nullopt;
      }
    }
    auto f = load_serve_config(o.config);
    if (!f) {
      fmt::print(stderr, "{}: --config {}\n", who, f.error().message);
      return std::nullopt;
    }
    c = std::move(f).value();
  } else {
    ServeListener l;
    const auto ip = parse_ipv4(o.ip);
    if (!ip) {
      fmt::print(stderr, "{}: --ip {}: not a dotted-quad IPv4 address\n", who, o.ip);
      return std::nullopt;
    }
    if (o.mac.empty()) {
      fmt::print(stderr,
                 "{}: --mac is needed (the card port's MAC address, source of every frame it "
                 "sends), or --config\n",
                 who);
      return std::nullopt;
    }
    const auto mac = parse_mac(o.mac);
    if (!mac) {
      fmt::print(stderr, "{}: --mac {}: not a MAC address (02:00:00:00:00:02)\n", who, o.mac);
      return std::nullopt;
    }
    l.ip = *ip;
    l.port = o.port;
    l.mac = *mac;
    l.pd = o.pd;
    l.template_pd = o.template_pd;
    l.fin_policy = o.fin_policy;
    l.auto_reject = o.auto_reject;
    l.backlog = o.backlog;
    c.listeners.push_back(l);
  }
  // Options given on the command line win over the file's.
  if (o.serve->count("--stop-after") > 0 || o.config.empty()) c.stop_after = o.stop_after;
  if (o.serve->count("--max-wall") > 0 || o.config.empty()) c.max_wall_s = o.max_wall_s;
  if (o.unsafe_wire_pd) c.unsafe_wire_pd = true;
  if (auto e = serve_config_error(c)) {
    fmt::print(stderr, "{}: {}{}\n", who, o.config.empty() ? "" : "--config " + o.config + ": ",
               *e);
    return std::nullopt;
  }
  if (o.mac_filter && c.listeners.size() != 1) {
    fmt::print(stderr,
               "{}: --mac-filter takes the one listener's MAC and address; with {} "
               "listeners leave it off\n",
               who, c.listeners.size());
    return std::nullopt;
  }
  return c;
}

int run_serve(const CardOptions& o) {
  constexpr const char* kWho = "bouncer card serve";
  const auto cfg = serve_config(o, kWho);
  if (!cfg) return kExitCannotRun;
  auto xrt = open_card(o, kWho);
  if (!xrt) return kExitCannotRun;
  int rc = 0;
  {
    DeviceConfig dc = card_device_config(xrt->info());
    if (o.mac_filter) {
      const ServeListener& l = cfg->listeners.front();
      dc.tcp = TcpConfig{.promisc = false, .port_mac = l.mac, .port_ip = l.ip};
    }
    auto dev = Device::open(*xrt, dc);
    if (!dev) {
      fmt::print(stderr, "{}: {}\n", kWho, dev.error().message);
      rc = kExitCannotRun;
    } else {
      clear_serve_stop();
      install_serve_signals();
      ServeHooks h;
      h.who = kWho;
      h.listening_extra = fmt::format(R"(,"device":"{}","kernel_clock_mhz":{:.3f})",
                                      xrt->info().bdf, xrt->info().kernel_clock_mhz);
      const auto t0 = std::chrono::steady_clock::now();
      h.summary_extra = [&] {
        return fmt::format(
            R"(,"wall_s":{:.3f})",
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      };
      rc = serve(**dev, *cfg, h) == 0 ? 0 : kExitFailed;
    }
  }
  if (const auto& f = xrt->fault()) {
    fmt::print(stderr, "{}: {}\n", kWho, f->message);
    rc = kExitFailed;
  }
  return rc;
}

int run_stats(const CardOptions& o) {
  constexpr const char* kWho = "bouncer card stats";
  auto xrt = open_card(o, kWho);
  if (!xrt) return kExitCannotRun;
  const double mhz = xrt->info().kernel_clock_mhz;
  const double every = o.watch_s > 0 ? o.watch_s : o.interval_s;
  const auto pause = std::chrono::nanoseconds(static_cast<int64_t>(every * 1e9));
  clear_serve_stop();
  if (o.watch_s > 0) install_serve_signals();
  StatsSample prev = sample_stats(*xrt);
  do {
    // Short slices, so that a signal ends --watch within 100 ms.
    for (auto left = pause; left > std::chrono::nanoseconds::zero() && !serve_stop_requested();
         left -= std::chrono::milliseconds(100)) {
      xrt->wait_for(std::min<std::chrono::nanoseconds>(left, std::chrono::milliseconds(100)));
    }
    StatsSample cur = sample_stats(*xrt);
    fmt::print("{}", format_stats(cur, &prev, mhz));
    std::fflush(stdout);
    prev = std::move(cur);
  } while (o.watch_s > 0 && !serve_stop_requested());
  if (const auto& f = xrt->fault()) {
    fmt::print(stderr, "{}: {}\n", kWho, f->message);
    return kExitFailed;
  }
  return 0;
}

int run_link(const CardOptions& o) {
  constexpr const char* kWho = "bouncer card link";
  auto xrt = open_card(o, kWho);
  if (!xrt) return kExitCannotRun;
  auto regs = xrt->open_cmac();
  if (!regs) {
    fmt::print(stderr, "{}: {}\n", kWho, regs.error().message);
    return kExitCannotRun;
  }
  cmac::CmacLink link(**regs);
  if (!o.rs_fec.empty()) link.set_rs_fec(o.rs_fec == "on");
  int rc = 0;
  cmac::LinkStatus st = link.status();
  if (o.wait_up_s > 0) {
    auto up = link.wait_link_up(std::chrono::nanoseconds(static_cast<int64_t>(o.wait_up_s * 1e9)));
    if (!up) {
      fmt::print(stderr, "{}: {}\n", kWho, up.error().message);
      rc = kExitFailed;
    } else {
      st = *up;
    }
  }
  fmt::print("{} ({})\n{}", cmac::format_link_status(st), xrt->info().cmac_ip,
             cmac::format_counters(link.snapshot()));
  if (!st.up()) rc = kExitFailed;
  if (const auto& f = xrt->fault()) {
    fmt::print(stderr, "{}: {}\n", kWho, f->message);
    rc = kExitFailed;
  }
  return rc;
}

// --device, --xclbin and --clock-mhz of every command that opens the card.
void add_card_options(CLI::App& c, CardOptions& o) {
  c.add_option("--device,-d", o.device, "User-PF BDF (0000:3b:00.1) or XRT index")->required();
  c.add_option("--xclbin", o.xclbin, "xclbin to load first (default: the loaded one)");
  c.add_option("--clock-mhz", o.clock_mhz,
               "Kernel clock (ap_clk) in MHz (default: the xclbin's, else 250)")
      ->check(CLI::Range(1.0, 1000.0));
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
  add_card_options(*o.selftest, o);
  o.selftest
      ->add_option("--timeout-ms", o.timeout_ms,
                   "Bound of each wait in milliseconds of host time (default 8)")
      ->check(CLI::Range(0.0, 3.6e6));
  o.bench = card.add_subcommand(
      "bench", "Reject latency per stage on the card from the RTL probes (CTRL.LOOPBACK set)");
  add_card_options(*o.bench, o);
  add_bench_options(*o.bench, o.bench_opts, /*sim=*/false);

  o.serve = card.add_subcommand(
      "serve",
      "Listen and reject every CONNECT_REQUEST until SIGINT/SIGTERM (JSON lines on stdout)");
  add_card_options(*o.serve, o);
  o.serve->add_option("--config", o.config,
                      "JSON file with the listeners (docs/operations.md); else one from the "
                      "options below");
  o.serve->add_option("--ip", o.ip, "Listener's IPv4 address (0.0.0.0: every address)")
      ->capture_default_str();
  o.serve->add_option("--port", o.port, "Listener's TCP port")->capture_default_str();
  o.serve->add_option("--mac", o.mac, "The card port's MAC address (source of its frames)");
  o.serve->add_option("--pd", o.pd, "Reject private data; every %n is the request's ordinal")
      ->capture_default_str();
  o.serve->add_option("--template-pd", o.template_pd, "Auto-reject private data")
      ->capture_default_str();
  o.serve->add_option("--fin-policy", o.fin_policy, "siw | irdma | abort")
      ->check(CLI::IsMember({"siw", "irdma", "abort"}))
      ->capture_default_str();
  o.serve->add_option("--auto-reject", o.auto_reject, "off | all | backlog | ird-ord")
      ->check(CLI::IsMember({"off", "all", "backlog", "ird-ord"}))
      ->capture_default_str();
  o.serve->add_option("--backlog", o.backlog, "Listener backlog (0: no limit)")
      ->check(CLI::Range(0u, 65535u))
      ->capture_default_str();
  o.serve->add_option("--stop-after", o.stop_after,
                      "Stop once this many requests were rejected and settled (0: never)");
  o.serve->add_option("--max-wall", o.max_wall_s, "Stop after this many seconds (0: never)")
      ->check(CLI::Range(0.0, 1e9));
  o.serve->add_flag("--unsafe-wire-pd", o.unsafe_wire_pd,
                    "Allow a PD_Length above 255 (Linux initiators do not take it intact)");
  o.serve->add_flag("--mac-filter", o.mac_filter,
                    "Take only frames to the listener's MAC and address (CM_ROUTE.PROMISC 0)");

  o.stats = card.add_subcommand(
      "stats", "Every counter with its rate, CM_CONNS and the ring indices (reads only)");
  add_card_options(*o.stats, o);
  o.stats->add_option("--interval", o.interval_s, "Seconds between the two reads of a rate")
      ->check(CLI::Range(0.001, 3600.0))
      ->capture_default_str();
  o.stats->add_option("--watch", o.watch_s, "Print every SECONDS until SIGINT/SIGTERM")
      ->check(CLI::Range(0.001, 3600.0));

  o.link = card.add_subcommand("link",
                               "The CMAC's link status, RS-FEC and counters (xup's cmac_0 kernel)");
  add_card_options(*o.link, o);
  o.link->add_option("--rs-fec", o.rs_fec, "Switch RS-FEC (the datapaths are reset)")
      ->check(CLI::IsMember({"on", "off"}));
  o.link
      ->add_option("--wait-up", o.wait_up_s,
                   "Wait up to SECONDS of wall time for the link to come up")
      ->check(CLI::Range(0.0, 3600.0));
  o.link->add_option("--cmac-ip", o.cmac_ip, "The CMAC compute unit in the xclbin")
      ->capture_default_str();
}

int run_card(const CardOptions& o) {
  if (o.probe != nullptr && *o.probe) return run_probe(o);
  if (o.selftest != nullptr && *o.selftest) return run_selftest(o);
  if (o.serve != nullptr && *o.serve) return run_serve(o);
  if (o.stats != nullptr && *o.stats) return run_stats(o);
  if (o.link != nullptr && *o.link) return run_link(o);
  return run_bench(o);
}

}  // namespace bouncer::cli
