// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// Connection storm: many simulated initiators at once, each doing SYN -> MPA
// request -> reject, against the co-simulated core, with the reject decided either by the
// hardware (a listener with AUTO_REJECT ALL) or by the host (CONNECT_REQUEST event, reject()
// through the SQ, pipelined). One process per run (one Platform per process).
//
//   storm_bench --width 512 --mode auto --peers 2000 --interval 16 --out out/storm_w512_auto.json
//
// Measured from the simulation only (cycle stamps of the frames on the core's ports):
// - rejects: MPA replies with the R bit that left the core, with their first-beat cycle;
// - rate: rejects per simulated second at the width's clock (250 MHz for 64 bits, 322.27 MHz
//   for 512) over the window first SYN in -> last reject out, and over the middle 80 % of
//   the rejects (the steady state, without the ramp-up and the tail), and over the window in
//   which the SYNs are offered (first SYN in -> last initiator's first SYN + one interval);
// - occupancy: CM_CONNS (nodes in the connection table) sampled every --sample cycles
//   (absolute simulated cycles, like first_syn_cycle);
// - drops: SYNs dropped for a full table (STAT_SYN_DROP_FULL), SYNs dropped at the RX port's
//   SYN queue (STAT_SYN_DROP_QUEUE), other frames dropped at the RX port (STAT_RX_OVERFLOW).
// bench/storm_sweep.py runs it at 2x and 10x the capacity it measures first.
// The run also checks what it measures: every reject reached its initiator, the hardware counted
// exactly that many, and the table drains (exit 1 otherwise; --expect-all: also every initiator
// was rejected, rather than given up under overload).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "scenario.hpp"

namespace {

using namespace systest;

struct Sample {
  uint64_t cycle;
  uint32_t conns;
};

double clock_hz(unsigned width) { return width == 512 ? 322.265625e6 : 250e6; }

}  // namespace

// libsystemc provides main() and calls sc_main().
extern "C" int sc_main(int argc, char** argv) {
  CLI::App app{"Bouncer connection-storm bench (co-simulation)"};
  unsigned width = 64;
  std::string mode = "auto";
  unsigned peers = 1000;
  uint64_t interval = 16;
  uint64_t sample = 2000;
  std::string out;
  std::string pcap;
  uint64_t mem_latency = 200;
  app.add_option("--width", width, "data width")->check(CLI::IsMember({64u, 512u}));
  app.add_option("--mode", mode, "auto: hardware auto-reject; host: the host rejects each request")
      ->check(CLI::IsMember({std::string("auto"), std::string("host")}));
  app.add_option("--peers", peers, "initiators")->check(CLI::Range(1u, 60000u));
  app.add_option("--interval", interval, "cycles between two initiators' SYNs")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1'000'000}));
  app.add_option("--sample", sample, "cycles between two occupancy samples")
      ->check(CLI::Range(uint64_t{1}, uint64_t{100'000'000}));
  app.add_option("--out", out, "JSON result file")->required();
  app.add_option("--pcap", pcap, "also write a capture");
  bool expect_all = false;
  app.add_flag("--expect-all", expect_all, "fail unless every initiator is rejected");
  app.add_option("--mem-latency", mem_latency, "host memory latency in cycles")
      ->check(CLI::Range(uint64_t{0}, uint64_t{100'000}));
  CLI11_PARSE(app, argc, argv);

  sim::PlatformConfig pc;
  pc.data_width = width;
  pc.pcap_path = pcap;
  pc.mem_latency_cycles = mem_latency;
  std::vector<Sample> samples;
  uint64_t t0 = 0, settle_cycle = 0;
  uint32_t peak = 0;
  unsigned rejected_peers = 0, not_rejected = 0;
  uint64_t rx_overflow = 0, rst_tx = 0;
  uint64_t hw_rejects = 0, syn_drop_full = 0, syn_drop_queue = 0, rtx = 0;
  double wall = 0;
  std::vector<uint64_t> reject_cycles;
  uint64_t first_syn = 0;
  uint64_t reject_rtx = 0;
  std::map<std::string, unsigned>
      end_states;  // peers' final states  // reject frames sent again (retransmissions)
  bool ok = true;
  std::string why;
  {
    sim::Platform plat(pc);
    auto dc = device_config(8);
    dc.timers->mpa_timeout = 8'000'000 / kTick;
    dc.aeq_entries = 4096;
    dc.sq_entries = 1024;
    dc.cq_entries = 1024;
    plat.run([&](bouncer::hal::Device& hal) {
      auto dev = Device::open(hal, dc);
      if (!dev.ok()) {
        ok = false;
        why = "open: " + dev.error().message;
        return;
      }
      Cm cm(**dev);
      auto lo = listen_options(R::FinPolicy::IRDMA);
      const auto tmpl = text_pd("storm: no", 16);
      if (mode == "auto") {
        lo.auto_reject = R::AutoReject::ALL;
        lo.template_pd = to_bytes(tmpl);
      }
      if (auto l = cm.listen(kLocalIp, kPort, lo); !l.ok()) {
        ok = false;
        why = "listen: " + l.error().message;
        return;
      }
      Scenario sc(plat, hal, **dev, cm);
      sc.pipelined = true;
      t0 = hal.now_cycles() + 100;
      for (unsigned i = 0; i < peers; ++i) {
        auto p = peer_config(i, 2, false, text_pd("req #" + std::to_string(i), 8));
        p.rto_cycles = kRto;
        p.max_retransmits = 12;
        p.reply_timeout_cycles = 50'000'000;
        p.time_wait_cycles = 4 * kRto;
        const size_t k = sc.add(p, t0 + interval * i,
                                mode == "auto" ? to_bytes(tmpl) : std::vector<std::byte>{});
        sc.conns[k].hold = mode == "auto";  // an event in auto mode would be a bug
      }
      uint64_t next_sample = 0;
      ok = sc.pump(
          [&] {
            const uint64_t now = hal.now_cycles();
            if (now >= next_sample) {
              const uint32_t c = (*dev)->cm_conns();
              samples.push_back({now, c});
              peak = std::max(peak, c);
              next_sample = now + sample;
            }
            return sc.settled();
          },
          400'000'000ull);
      settle_cycle = hal.now_cycles();
      if (!ok) why = "did not settle: " + sc.status().substr(0, 2000);
      for (const auto& c : sc.conns) {
        const auto& o = plat.peer(c.peer).outcome();
        rejected_peers += o.rejected;
        ++end_states[std::string(peer::to_string(o.state)) + (o.rejected ? "" : " (not rejected)")];
      }
      not_rejected = static_cast<unsigned>(sc.conns.size()) - rejected_peers;
      rx_overflow = reg(hal, R::reg::STAT_RX_OVERFLOW);
      rst_tx = reg(hal, R::reg::STAT_RST_TX);
      hw_rejects = reg(hal, mode == "auto" ? R::reg::STAT_REJECT_AUTO : R::reg::STAT_REJECT_HOST);
      syn_drop_full = reg(hal, R::reg::STAT_SYN_DROP_FULL);
      syn_drop_queue = reg(hal, R::reg::STAT_SYN_DROP_QUEUE);
      rtx = reg(hal, R::reg::STAT_RTX);
      if (mode == "host" && cm.stats().requests != hw_rejects) {
        ok = false;
        why += " host saw " + std::to_string(cm.stats().requests) + " requests";
      }
      if (mode == "auto" && cm.stats().requests != 0) {
        ok = false;
        why += " auto-rejected requests reached the host";
      }
    });
    wall = plat.wall_seconds();
    if (!plat.rx_frames().empty()) first_syn = plat.rx_frames().front().first_cycle;
    std::set<std::pair<uint32_t, uint16_t>> seen;
    for (const auto& f : plat.tx_frames()) {
      std::string w;
      auto r = golden::parse_mpa_reply(f.bytes, &w);
      if (!r || !r->key_reply_ok || !(r->mpa_flags & peer::kMpaFlagReject)) continue;
      if (seen.insert({r->dst_ip, r->dst_port}).second) {
        reject_cycles.push_back(f.first_cycle);
      } else {
        ++reject_rtx;
      }
    }
  }
  // Every reject on the wire reached its initiator and was counted once by the hardware. Under
  // overload an initiator may give up instead (Bouncer resets it after RTX_MAX SYN-ACKs when
  // its ACK and MPA request kept being dropped at the full RX FIFO): reported, and an error
  // only with --expect-all.
  if (rejected_peers != reject_cycles.size() || hw_rejects != reject_cycles.size() ||
      (expect_all && rejected_peers != peers)) {
    ok = false;
    why += " rejected peers " + std::to_string(rejected_peers) + ", hardware count " +
           std::to_string(hw_rejects) + ", reject frames " + std::to_string(reject_cycles.size());
  }
  std::sort(reject_cycles.begin(), reject_cycles.end());
  const double hz = clock_hz(width);
  double rate_all = 0, rate_mid = 0;
  if (!reject_cycles.empty() && reject_cycles.back() > first_syn) {
    rate_all = static_cast<double>(reject_cycles.size()) /
               (static_cast<double>(reject_cycles.back() - first_syn) / hz);
    const size_t a = reject_cycles.size() / 10, b = reject_cycles.size() - 1 - a;
    if (b > a && reject_cycles[b] > reject_cycles[a]) {
      rate_mid = static_cast<double>(b - a) /
                 (static_cast<double>(reject_cycles[b] - reject_cycles[a]) / hz);
    }
  }
  // While the load is offered (first SYN in -> the last initiator's first SYN + one
  // interval): under overload the initiators whose SYNs were dropped retry later, spread
  // out by their backoff, so the rate after that window says more about the retry schedule
  // than about the core.
  double rate_offered = 0;
  const uint64_t window = interval * peers;
  if (first_syn != 0) {
    const size_t n = static_cast<size_t>(
        std::upper_bound(reject_cycles.begin(), reject_cycles.end(), first_syn + window) -
        reject_cycles.begin());
    rate_offered = static_cast<double>(n) / (static_cast<double>(window) / hz);
  }
  nlohmann::json j;
  j["width"] = width;
  j["mode"] = mode;
  j["peers"] = peers;
  j["interval_cycles"] = interval;
  j["offered_per_s"] = hz / static_cast<double>(interval);
  j["clock_mhz"] = hz / 1e6;
  j["mem_latency"] = mem_latency;
  j["rejects"] = reject_cycles.size();
  j["reject_retransmissions"] = reject_rtx;
  j["first_syn_cycle"] = first_syn;
  j["last_reject_cycle"] = reject_cycles.empty() ? 0 : reject_cycles.back();
  j["settle_cycle"] = settle_cycle;
  j["rejects_per_s"] = rate_all;
  j["rejects_per_s_mid80"] = rate_mid;
  j["rejects_per_s_offered"] = rate_offered;
  j["peak_conns"] = peak;
  j["syn_drop_full"] = syn_drop_full;
  j["syn_drop_queue"] = syn_drop_queue;
  j["rtx"] = rtx;
  j["rejected_peers"] = rejected_peers;
  j["not_rejected_peers"] = not_rejected;
  j["rx_overflow_frames"] = rx_overflow;
  j["rst_tx"] = rst_tx;
  j["wall_s"] = wall;
  j["peer_end_states"] = end_states;
  j["ok"] = ok;
  if (!ok) j["error"] = why;
  auto& s = j["occupancy"] = nlohmann::json::array();
  for (const auto& x : samples) s.push_back({x.cycle, x.conns});
  std::ofstream(out) << j.dump(1) << "\n";
  std::printf("storm w%u %s: %u peers every %" PRIu64
              " cycles: %zu rejects, %.3g rejects/s (middle 80 %%: %.3g), peak CM_CONNS %u, "
              "SYN dropped (table full) %" PRIu64 ", SYN dropped at the port %" PRIu64
              ", RX FIFO drops %" PRIu64 ", %u gave up, %.1f s wall%s%s\n",
              width, mode.c_str(), peers, interval, reject_cycles.size(), rate_all, rate_mid, peak,
              syn_drop_full, syn_drop_queue, rx_overflow, not_rejected, wall, ok ? "" : ": FAILED ",
              ok ? "" : why.c_str());
  return ok ? 0 : 1;
}
