// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// cosim_bench: reject latency and back-to-back throughput of the co-simulated core. Every
// latency comes from the RTL latency probes (bouncer_probe, read through PROBE_* registers
// with Device::read_probes, the same code that runs over XRT on a card); the testbench's own
// observation of the same events is kept as a cross-check. One Platform per process (SystemC
// elaborates once), so one process per data width and host-memory latency;
// bench/bench_report.py merges the output of several.
//
//   cosim_bench --width 64|512 --mem-latency N [--pd 0,4,...] [--rev 1,2]
//               [--paths push,dma_inline,dma_buffer] [--outstanding 1,8,64] [--sqs 1,4]
//               [--samples N] [--fst PATH] [--out FILE]
//   cosim_bench --rx --width 64|512 --mem-latency N [--rev 1,2] [--rx-pd 0,4,...]
//               [--rx-samples N] [--out FILE]       (the RX-side points only, see below)
//
// The host is the real driver (bouncer_driver) on host-written contexts
// (ContextDiag::write_context, the diagnostic path, so no peer traffic shares the TX port). For
// each point (path, PD length, rev, outstanding k, SQ count s) it writes `samples` contexts (at
// least 2k), then posts one reject per context (ContextDiag::post_reject / post_rejects),
// reject i on SQ i % s (the Device is opened with the largest s of --sqs), while keeping at
// most k posted rejects whose CQE is not yet in host memory, advancing the simulation one cycle at
// a time (and reading the probe FIFO while it waits, and every 8 posts of a burst, so that it does
// not overflow). The ring paths post the rejects there is room for (at most 8 at a time) with one
// doorbell per SQ (ContextDiag::post_rejects, irdma's list post); push posts one WQE per push write
// and doorbell, so at several outstanding the push figures are the host's posting rate
// (host_limited below). Stages
// (cycles, from the probe records of each reject, matched by tag: SQ and wqe_idx, SQ and producer
// index, the context's remote port):
//   doorbell_to_desc        DOORBELL -> DESC_AVAIL (WQE in the SQ engine);
//   doorbell_to_pd          DOORBELL -> PD_READY (the reject builder has the PD and starts);
//   doorbell_to_first_beat  DOORBELL -> REJ_FIRST_HOST (first TX beat);
//   doorbell_to_last_beat   DOORBELL -> REJ_LAST (tlast beat);
//   doorbell_to_cqe         DOORBELL -> CQE_WRITTEN (CQE write handed to host memory).
// Cross-check, every sample (exit 1 on a mismatch): DOORBELL = the edge at which the device
// registered the SQ_DB / SQ_PUSH_DB write (Platform::mmio_writes()), REJ_FIRST_HOST /
// REJ_LAST = the first / tlast beat in tx_frames(), CQE_WRITTEN <= the first cycle the
// testbench, looking at the CQ every cycle, sees the CQE (equal at outstanding 1; with more
// outstanding the host may be in a register access when it lands). If the probe FIFO
// overflowed during a point (PROBE_LOST), that point falls back to the testbench figures
// (source "testbench") and the meta record counts it.
// RX side (--rx, a process of its own: the TX sweep uses host-written contexts on the cm_ids
// the passive CM would allocate): simulated initiators (bouncer::peer), one at a
// time, connect to an auto-reject listener (PD template of each --rx-pd length, read by DMA:
// path dma_buffer) or to a listener whose host (this program: poll_event, then post_reject)
// rejects with that PD (path dma_inline when <= 32 bytes, else dma_buffer). Stages:
//   syn_to_synack_first_beat         SYN_IN -> SYNACK_FIRST (auto and host connections);
//   auto_mpa_req_to_first_beat       MPA_REQ_LAST -> REJ_FIRST_AUTO (the auto-reject
//                                    target: <= 32 cycles);
//   mpa_req_to_event                 MPA_REQ_LAST -> EVENT_WRITTEN (CONNECT_REQUEST);
//   event_to_first_beat              EVENT_WRITTEN -> REJ_FIRST_HOST (includes the simulated
//                                    host's reaction: AEQ poll, WQE post, doorbell);
//   host_mpa_req_to_first_beat       MPA_REQ_LAST -> REJ_FIRST_HOST.
// Cross-check: SYN_IN / MPA_REQ_LAST = the tlast beat in rx_frames(), SYNACK_FIRST and the
// reject's first beat = tx_frames().
// Paths: push (WQE through the push page; PD inline when <= 32 bytes, else in a PD buffer),
// dma_inline (doorbell, WQE fetched by DMA, PD inline: PD <= 32 only), dma_buffer (doorbell,
// PD in a host buffer). rev 2 is enhanced (IRD/ORD word), so PD 512 exists for rev 1 only.
// Every frame is compared byte for byte with the golden builder; the CQE's LATENCY field
// (the hardware's doorbell-to-first-beat counter) is compared with the testbench's figure.
//
// Output: one JSON object per line (kind latency / throughput / meta). Throughput comes from
// the points at the largest outstanding count: frames/s over the last 3/4 of the frames
// (first-beat to first-beat) at the width's clock, and the ratio to the beat ceiling
// (bench/line_rate.hpp). Every TX record carries "push_dropped": the rejects of the point
// whose CQE has PSHDROP (posted through the push page, fetched from the ring instead). A
// throughput record carries "host_waits" (frames of the window whose doorbell came only after
// the previous reject's CQE was in host memory: the device had run dry) and "host_limited"
// (at least 1/8 of the window did: the figure is the host model's rate, not the device's).
// Exit status 1 on any mismatch or error.
#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "bouncer/cm.hpp"
#include "bouncer/cm_diag.hpp"
#include "bouncer/device.hpp"
#include "bouncer/peer/initiator.hpp"
#include "bouncer/probe_bench.hpp"
#include "bouncer/regs.hpp"
#include "bouncer/sim/platform.hpp"
#include "golden/frame_parser.hpp"
#include "golden/reject_frame.hpp"
#include "line_rate.hpp"

namespace {

[[maybe_unused]] const int kQuietSystemC = setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);

namespace R = bouncer::regs;
namespace sim = bouncer::sim;

struct Options {
  unsigned width = 64;
  uint64_t mem_latency = 200;
  std::vector<unsigned> pds{0, 4, 16, 64, 128, 255, 512};
  std::vector<unsigned> revs{1, 2};
  std::vector<std::string> paths{"push", "dma_inline", "dma_buffer"};
  std::vector<unsigned> outstanding{1, 8, 64};
  std::vector<unsigned> sqs{1};
  unsigned samples = 64;
  std::vector<unsigned> rx_pds{0, 4, 16, 64, 128, 255};
  unsigned rx_samples = 8;
  bool rx = false;
  std::string fst;
  std::string out;
};

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> r;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (!item.empty()) r.push_back(item);
  }
  return r;
}

std::vector<unsigned> split_u(const std::string& s) {
  std::vector<unsigned> r;
  for (const auto& x : split(s)) r.push_back(static_cast<unsigned>(std::stoul(x, nullptr, 0)));
  return r;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto val = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
      return argv[++i];
    };
    if (a == "--width") {
      o.width = static_cast<unsigned>(std::stoul(val()));
    } else if (a == "--mem-latency") {
      o.mem_latency = std::stoull(val());
    } else if (a == "--pd") {
      o.pds = split_u(val());
    } else if (a == "--rev") {
      o.revs = split_u(val());
    } else if (a == "--paths") {
      o.paths = split(val());
    } else if (a == "--outstanding") {
      o.outstanding = split_u(val());
    } else if (a == "--sqs") {
      o.sqs = split_u(val());
    } else if (a == "--samples") {
      o.samples = static_cast<unsigned>(std::stoul(val()));
    } else if (a == "--rx") {
      o.rx = true;
    } else if (a == "--rx-pd") {
      o.rx_pds = split_u(val());
    } else if (a == "--rx-samples") {
      o.rx_samples = static_cast<unsigned>(std::stoul(val()));
    } else if (a == "--fst") {
      o.fst = val();
    } else if (a == "--out") {
      o.out = val();
    } else {
      throw std::invalid_argument("unknown argument " + a);
    }
  }
  if (o.width != 64 && o.width != 512) throw std::invalid_argument("--width is 64 or 512");
  for (unsigned r : o.revs) {
    if (r != 1 && r != 2) throw std::invalid_argument("--rev values are 1 and 2");
  }
  for (const auto& p : o.paths) {
    if (p != "push" && p != "dma_inline" && p != "dma_buffer") {
      throw std::invalid_argument("unknown path " + p);
    }
  }
  if (o.samples == 0 || o.outstanding.empty() || o.sqs.empty())
    throw std::invalid_argument("nothing to measure");
  for (unsigned q : o.sqs) {
    if (q == 0 || q > R::kNumSqMax) throw std::invalid_argument("--sqs values are 1..4");
  }
  return o;
}

std::vector<uint8_t> golden_frame(const bouncer::CmContext& c, std::span<const std::byte> pd) {
  golden::RejectParams p;
  std::copy(c.rem_mac.begin(), c.rem_mac.end(), p.rem_mac.b.begin());
  std::copy(c.loc_mac.begin(), c.loc_mac.end(), p.loc_mac.b.begin());
  p.vlan_en = c.vlan_en;
  p.vlan_tci = c.vlan_tci;
  p.loc_ip = c.loc_ip;
  p.rem_ip = c.rem_ip;
  p.tos = c.tos;
  p.ttl = c.ttl;
  p.ip_id = c.ip_id;
  p.loc_port = c.loc_port;
  p.rem_port = c.rem_port;
  p.snd_nxt = c.snd_nxt;
  p.rcv_nxt = c.rcv_nxt;
  p.rcv_wnd = c.rcv_wnd;
  p.req_rev = c.req_rev;
  p.req_flags = c.req_flags;
  p.req_ird_ord = c.req_ird_ord;
  for (auto b : pd) p.pd.push_back(static_cast<uint8_t>(b));
  return golden::build_mpa_reject_frame(p);
}

struct Stats {
  uint64_t min = 0, median = 0, p99 = 0, max = 0;
};

// Nearest-rank percentiles (median: the lower middle element).
Stats stats(std::vector<uint64_t> v) {
  std::sort(v.begin(), v.end());
  Stats s;
  s.min = v.front();
  s.max = v.back();
  s.median = v[(v.size() - 1) / 2];
  const size_t rank = (v.size() * 99 + 99) / 100;  // ceil(0.99 n)
  s.p99 = v[std::max<size_t>(rank, 1) - 1];
  return s;
}

class Bench {
 public:
  Bench(const Options& o, sim::Platform& plat, bouncer::hal::Device& hal, bouncer::Device& dev,
        bouncer::Cm& cm, bouncer::ContextDiag& diag, FILE* out)
      : o_(o), plat_(plat), hal_(hal), dev_(dev), cm_(cm), diag_(diag), out_(out) {}

  // One point; false on an error (printed).
  bool point(const std::string& path, unsigned pd_len, unsigned rev, unsigned k, unsigned sqs) {
    const unsigned n = std::max(o_.samples, 2 * k);
    if (n > dev_.caps().ctx_depth || (n + sqs - 1) / sqs >= dev_.sq().size()) {
      return fail("too many samples for the context table / SQ");
    }
    std::vector<bouncer::CmContext> ctx(n);
    std::vector<std::vector<std::byte>> pd(n);
    for (unsigned i = 0; i < n; ++i) {
      ctx[i] = bouncer::bench_context(rng_, i, rev, kLocalMac);
      if (!diag_.write_context(i, ctx[i]).ok()) return fail("write_context");
      pd[i].resize(pd_len);
      for (auto& b : pd[i]) b = static_cast<std::byte>(rng_());
    }
    bouncer::RejectOptions opt;
    opt.push = path == "push";
    opt.allow_inline = path != "dma_buffer";
    opt.unsafe_wire_pd = true;
    const uint32_t db_reg = opt.push ? R::reg::SQ_PUSH_DB : R::reg::SQ_DB;

    const size_t tx0 = plat_.tx_frames().size();
    std::vector<uint64_t> db(n), cqe(n);
    std::vector<uint16_t> idx(n);
    std::map<uint32_t, unsigned> waiting;  // (sq << 16 | wqe_idx) -> reject, CQE not seen yet
    unsigned posted = 0, seen = 0, drained_at = 0;
    if (!start_probes()) return false;
    const uint64_t deadline =
        hal_.now_cycles() + 200'000 + uint64_t{n} * (4 * o_.mem_latency + 2000);
    while (seen < n) {
      // Read the probe FIFO while the host would only wait: at 1 outstanding after each CQE
      // (all of that reject's records are in), else whenever the SQ holds k rejects.
      const bool idle = posted == n || posted - seen >= k;
      if (k == 1 ? seen != drained_at : idle) {
        drained_at = seen;
        if (!drain_probes()) return false;
      }
      while (posted < n && posted - seen < k) {
        // A burst of posts keeps the host away from the probe FIFO: read it every few posts
        // too (each reject leaves up to 6 records; the FIFO holds 64).
        if (k > 1 && posted != 0 && posted % kDrainEvery == 0) {
          if (!drain_probes()) return false;
        }
        if (opt.push) {  // one 64-byte push write and its doorbell per reject
          opt.wr_id = posted;
          opt.sq = posted % sqs;
          auto r = diag_.post_reject(posted, pd[posted], opt);
          if (!r.ok()) return fail("post_reject: " + r.error().message);
          idx[posted] = *r;
          db[posted] = last_write(db_reg);
          waiting[opt.sq << 16 | *r] = posted;
          ++posted;
          continue;
        }
        // Ring path: the rejects there is room for, up to the next probe read, with one
        // doorbell per SQ (ContextDiag::post_rejects), as irdma posts a list.
        const unsigned m = std::min(
            {n - posted, k - (posted - seen), kDrainEvery - (k > 1 ? posted % kDrainEvery : 0)});
        std::vector<bouncer::RejectRequest> reqs(m);
        for (unsigned j = 0; j < m; ++j) {
          reqs[j].cm_id = posted + j;
          reqs[j].pd = pd[posted + j];
          reqs[j].opts = opt;
          reqs[j].opts.wr_id = posted + j;
          reqs[j].opts.sq = (posted + j) % sqs;
        }
        auto r = diag_.post_rejects(reqs);
        if (!r.ok()) return fail("post_rejects: " + r.error().message);
        for (size_t j = 0; j < r->size(); ++j, ++posted) {
          const unsigned sq = posted % sqs;
          idx[posted] = (*r)[j];
          db[posted] = last_doorbell(sq);
          waiting[sq << 16 | (*r)[j]] = posted;
        }
      }
      // At 1 outstanding, with the reject posted and its probes read, the next iterations only
      // wait and look at the CQ until the device writes host memory: sleep until then (the
      // same cycles as stepping one at a time, without the host's work per cycle).
      if (k == 1 && seen == drained_at && !(posted < n && posted - seen < k)) {
        const uint64_t now = hal_.now_cycles();
        plat_.wait_event(now > deadline ? 1 : deadline + 1 - now);
      } else {
        hal_.wait_cycles(1);
      }
      scan_cq([&](uint64_t cycle, std::span<const std::byte> e) {
        const uint32_t key =
            static_cast<uint32_t>(R::get(e, R::cqe::SQ_IDX) << 16 | R::get(e, R::cqe::WQEIDX));
        if (auto it = waiting.find(key); it != waiting.end()) {
          cqe[it->second] = cycle;
          waiting.erase(it);
          ++seen;
        }
      });
      if (hal_.now_cycles() > deadline) return fail("timeout waiting for CQEs");
    }
    if (!drain_probes()) return false;
    // Consume the completions (driver state, CQ_HEAD) and check them.
    std::vector<bouncer::Completion> comp;
    while (comp.size() < n) {
      auto c = diag_.poll();
      if (!c) return fail("CQE seen in memory but not by the driver");
      comp.push_back(*c);
    }
    const auto& tx = plat_.tx_frames();
    if (tx.size() != tx0 + n) return fail("TX frames vs. rejects");
    // the probe records of this point, by tag
    bouncer::RejectProbeIndex pidx;
    if (const size_t other = pidx.add(probes_); other != 0) {
      return fail(std::to_string(other) + " unexpected probe records (not of a host reject)");
    }
    const bool use_probes = probes_lost_ == 0;
    if (!use_probes) ++probe_fallback_;
    uint64_t point_pshdrop = 0;
    std::vector<uint64_t> to_desc(n), to_pd(n), first(n), last(n), to_cqe(n);
    std::vector<bool> done(n, false);
    for (unsigned j = 0; j < n; ++j) {
      // the frames leave in CQE order (one WQE at a time); with several SQs that may differ
      // from the posting order, so reject i is the one the j-th completion names
      const auto& f = tx[tx0 + j];
      const uint64_t i = comp[j].wr_id;
      if (!comp[j].ok() || i >= n || done[i] || comp[j].sq != i % sqs || comp[j].wqe_idx != idx[i])
        return fail("completion " + comp[j].status());
      done[i] = true;
      if (f.bytes != golden_frame(ctx[i], pd[i])) return fail("frame differs from golden");
      if (opt.push && comp[j].pshdrop) {
        ++pshdrop_;
        ++point_pshdrop;
      }
      // testbench figures
      first[i] = f.first_cycle - db[i];
      last[i] = f.last_cycle - db[i];
      to_cqe[i] = cqe[i] - db[i];
      // The CQE's LATENCY counts from the doorbell or from the end of the previous WQE,
      // whichever is later: the testbench's figure must match it exactly when one reject
      // is outstanding at a time.
      if (k == 1) {
        ++cqe_lat_total_;
        if (comp[j].latency_cycles != first[i]) {
          return fail("CQE LATENCY " + std::to_string(comp[j].latency_cycles) +
                      " != testbench doorbell-to-first-beat " + std::to_string(first[i]));
        }
        ++cqe_lat_agree_;
      }
      if (!use_probes) continue;
      const auto st =
          pidx.find(static_cast<unsigned>(i % sqs), idx[i], ctx[i].rem_port, dev_.sq().size());
      if (!st) return fail("a probe record is missing for reject " + std::to_string(i));
      const uint64_t d = st->doorbell;
      // cross-check with the testbench (exact: doorbell, first and last beat)
      if (d != db[i] || st->first != f.first_cycle || st->last != f.last_cycle ||
          st->cqe > cqe[i] || (k == 1 && st->cqe != cqe[i])) {
        return fail("probe vs. testbench mismatch at reject " + std::to_string(i) + ": doorbell " +
                    std::to_string(d) + "/" + std::to_string(db[i]) + ", first " +
                    std::to_string(st->first) + "/" + std::to_string(f.first_cycle) + ", last " +
                    std::to_string(st->last) + "/" + std::to_string(f.last_cycle) + ", CQE " +
                    std::to_string(st->cqe) + "/" + std::to_string(cqe[i]));
      }
      ++probe_agree_;
      to_desc[i] = st->desc - d;
      to_pd[i] = st->pd - d;
      to_cqe[i] = st->cqe - d;  // the probe's figure (first/last are equal anyway)
      cqe[i] = st->cqe;         // exact: the testbench sees it only between host accesses
    }
    const char* src = use_probes ? "probes" : "testbench";
    if (use_probes) {
      emit_latency("doorbell_to_desc", path, pd_len, rev, k, to_desc, src, sqs, point_pshdrop);
      emit_latency("doorbell_to_pd", path, pd_len, rev, k, to_pd, src, sqs, point_pshdrop);
    }
    emit_latency("doorbell_to_first_beat", path, pd_len, rev, k, first, src, sqs, point_pshdrop);
    emit_latency("doorbell_to_last_beat", path, pd_len, rev, k, last, src, sqs, point_pshdrop);
    emit_latency("doorbell_to_cqe", path, pd_len, rev, k, to_cqe, src, sqs, point_pshdrop);
    if (k == *std::max_element(o_.outstanding.begin(), o_.outstanding.end())) {
      const unsigned a = n / 4, b = n - 1;
      const double cycles = static_cast<double>(tx[tx0 + b].first_cycle - tx[tx0 + a].first_cycle);
      const double clock = bouncer::bench::default_clock_hz(o_.width);
      const double fps = static_cast<double>(b - a) / cycles * clock;
      const uint32_t bytes = static_cast<uint32_t>(tx[tx0].bytes.size());
      const double ceil = bouncer::bench::beat_ceiling_fps(bytes, o_.width, clock);
      // Host-limited: the device waited for the host. A frame of the window counts when the
      // doorbell that posted it came after the previous reject's CQE was written (the engine
      // had finished everything it was given; the probe's CQE stamp, exact); a point where
      // at least 1/8 of the frames did so measures the host model, not the hardware.
      unsigned host_waits = 0;
      for (unsigned j = a + 1; j <= b; ++j) {
        if (db[comp[j].wr_id] >= cqe[comp[j - 1].wr_id]) ++host_waits;
      }
      const bool host_limited = host_waits * 8 >= b - a;
      std::fprintf(out_,
                   "{\"kind\": \"throughput\", \"pd_len\": %u, \"width\": %u, \"rev\": %u, "
                   "\"frames_per_s\": %.1f, \"ceiling_ratio\": %.6f, \"path\": \"%s\", "
                   "\"mem_latency\": %llu, \"outstanding\": %u, \"sqs\": %u, \"frames\": %u, "
                   "\"cycles\": %.0f, \"frame_bytes\": %u, \"source\": \"%s\", "
                   "\"push_dropped\": %llu, \"host_waits\": %u, \"host_limited\": %s}\n",
                   pd_len, o_.width, rev, fps, fps / ceil, path.c_str(),
                   static_cast<unsigned long long>(o_.mem_latency), k, sqs, b - a, cycles, bytes,
                   src, static_cast<unsigned long long>(point_pshdrop), host_waits,
                   host_limited ? "true" : "false");
    }
    std::fflush(out_);
    return true;
  }

  // RX side: `rx_samples` initiators, one at a time, to a fresh listener that auto-rejects
  // with a template of pd_len bytes (autorej) or whose host rejects with pd_len bytes.
  bool rx_point(bool autorej, unsigned rev, unsigned pd_len) {
    std::vector<std::byte> pd(pd_len);
    for (auto& b : pd) b = static_cast<std::byte>(rng_());
    bouncer::ListenOptions lo;
    lo.local_mac = kLocalMac;
    if (autorej) {
      lo.auto_reject = R::AutoReject::ALL;
      lo.template_pd = pd;
      lo.unsafe_wire_pd = true;  // as the host path's RejectOptions: the sweep goes past 251
    }
    const uint16_t lport = static_cast<uint16_t>(5000 + listen_seq_++);
    auto l = cm_.listen(kLocalIp, lport, lo);
    if (!l.ok()) return fail("listen: " + l.error().message);
    const size_t rx0 = plat_.rx_frames().size(), tx0 = plat_.tx_frames().size();
    if (!start_probes()) return false;
    std::vector<uint16_t> ports;
    std::map<uint32_t, uint16_t> port_of;  // cm_id -> peer port (host path)
    bouncer::RejectOptions ro;
    ro.unsafe_wire_pd = true;
    for (unsigned j = 0; j < o_.rx_samples; ++j) {
      bouncer::peer::InitiatorConfig ic;
      const uint16_t port = static_cast<uint16_t>(20000 + peer_seq_++);
      ic.mac = {0x02, 0x10, 0, 0, static_cast<uint8_t>(port >> 8), static_cast<uint8_t>(port)};
      ic.peer_mac = kLocalMac;
      ic.ip = 0x0B000000u | port;
      ic.peer_ip = kLocalIp;
      ic.port = port;
      ic.peer_port = lport;
      ic.isn = static_cast<uint32_t>(rng_());
      ic.mpa_rev = static_cast<uint8_t>(rev);
      ic.enhanced = rev == 2;
      ic.private_data.assign(16, 0x42);
      ic.rto_cycles = 40'000;
      ic.time_wait_cycles = 2'000;
      plat_.add_peer(ic, plat_.cycles() + 1);
      ports.push_back(port);
      const uint64_t deadline = hal_.now_cycles() + 400'000 + 20 * o_.mem_latency;
      while (!plat_.peers_finished()) {
        const uint64_t c0 = hal_.now_cycles();
        const auto heads0 = std::make_pair(dev_.cq().head(), dev_.aeq().head());
        bool quiet = true;  // this look found nothing, consumed nothing and did no MMIO
        auto e = cm_.poll_event();
        if (!e.ok()) return fail("poll_event: " + e.error().message);
        if (e->has_value()) {
          quiet = false;
          if (const auto* rc = std::get_if<bouncer::RejectComplete>(&**e)) {
            if (!rc->completion.ok()) return fail("completion " + rc->completion.status());
            continue;
          }
          const auto* cr = std::get_if<bouncer::ConnectRequest>(&**e);
          if (!cr || autorej)
            return fail(std::string("unexpected event ") + bouncer::event_name(**e));
          port_of[cr->cm_id] = cr->tuple.remote_port;
          auto r = cm_.post_reject(cr->handle, pd, ro);
          if (!r.ok()) return fail("post_reject: " + r.error().message);
        }
        // A quiet look repeats as is until the device writes host memory or the peers are
        // done: sleep until then (the same cycles as stepping one at a time).
        const uint64_t now = hal_.now_cycles();
        if (quiet && now == c0 && heads0 == std::make_pair(dev_.cq().head(), dev_.aeq().head())) {
          plat_.wait_event(now > deadline ? 1 : deadline + 1 - now,
                           [this] { return plat_.peers_finished(); });
        } else {
          hal_.wait_cycles(1);
        }
        if (hal_.now_cycles() > deadline) return fail("RX point: peer did not finish");
      }
      if (!plat_.peer(plat_.num_peers() - 1).outcome().rejected) return fail("peer not rejected");
      if (!drain_probes()) return false;
    }
    if (!cm_.destroy_listener(*l).ok()) return fail("destroy_listener");
    if (probes_lost_ != 0) return fail("probe FIFO overflow on the RX side");
    // probe records by (stage, tag)
    std::map<std::pair<R::ProbeStage, uint32_t>, uint64_t> pr;
    for (const auto& r : probes_) pr[{r.stage, r.tag}] = r.cycle;
    auto get = [&](R::ProbeStage st, uint32_t tag, uint64_t& v) {
      auto it = pr.find({st, tag});
      if (it == pr.end()) return false;
      v = it->second;
      return true;
    };
    std::map<uint16_t, uint32_t> cm_of;
    for (const auto& [id, port] : port_of) cm_of[port] = id;
    const auto& rxf = plat_.rx_frames();
    const auto& txf = plat_.tx_frames();
    auto frame = [&](const std::vector<sim::TxFrame>& v, size_t from,
                     auto pred) -> const sim::TxFrame* {
      for (size_t i = from; i < v.size(); ++i) {
        auto seg = golden::parse_tcp_segment(v[i].bytes, nullptr);
        if (seg && pred(*seg)) return &v[i];
      }
      return nullptr;
    };
    std::vector<uint64_t> syn_sa, req_first, req_evt, evt_first;
    for (uint16_t port : ports) {
      const auto* f_syn = frame(rxf, rx0, [&](const golden::ParsedSegment& g) {
        return g.src_port == port && (g.tcp_flags & 0x12) == 0x02;
      });
      const auto* f_req = frame(rxf, rx0, [&](const golden::ParsedSegment& g) {
        return g.src_port == port && golden::mpa_key_of(g.payload) == golden::MpaKey::kRequest;
      });
      const auto* f_sa = frame(txf, tx0, [&](const golden::ParsedSegment& g) {
        return g.dst_port == port && (g.tcp_flags & 0x12) == 0x12;
      });
      const auto* f_rej = frame(txf, tx0, [&](const golden::ParsedSegment& g) {
        return g.dst_port == port && golden::mpa_key_of(g.payload) == golden::MpaKey::kReply;
      });
      if (!f_syn || !f_req || !f_sa || !f_rej) return fail("RX point: frame missing");
      uint64_t syn = 0, sa = 0, req = 0, first = 0, evt = 0;
      const auto first_st = autorej ? R::ProbeStage::REJ_FIRST_AUTO : R::ProbeStage::REJ_FIRST_HOST;
      if (!get(R::ProbeStage::SYN_IN, port, syn) || !get(R::ProbeStage::SYNACK_FIRST, port, sa) ||
          !get(R::ProbeStage::MPA_REQ_LAST, port, req) || !get(first_st, port, first)) {
        return fail("RX point: a probe record is missing for port " + std::to_string(port));
      }
      if (syn != f_syn->last_cycle || sa != f_sa->first_cycle || req != f_req->last_cycle ||
          first != f_rej->first_cycle) {
        return fail("RX point: probe vs. testbench mismatch for port " + std::to_string(port));
      }
      ++probe_agree_;
      syn_sa.push_back(sa - syn);
      req_first.push_back(first - req);
      if (!autorej) {
        const uint32_t tag =
            (static_cast<uint32_t>(R::AeqEvent::CONNECT_REQUEST) << 16) | cm_of.at(port);
        if (!get(R::ProbeStage::EVENT_WRITTEN, tag, evt)) return fail("RX point: no event record");
        req_evt.push_back(evt - req);
        evt_first.push_back(first - evt);
      }
    }
    const std::string path = autorej || pd_len > R::kInlinePdMax ? "dma_buffer" : "dma_inline";
    emit_latency("syn_to_synack_first_beat", path, pd_len, rev, 1, syn_sa, "probes");
    if (autorej) {
      emit_latency("auto_mpa_req_to_first_beat", path, pd_len, rev, 1, req_first, "probes");
    } else {
      emit_latency("mpa_req_to_event", path, pd_len, rev, 1, req_evt, "probes");
      emit_latency("event_to_first_beat", path, pd_len, rev, 1, evt_first, "probes");
      emit_latency("host_mpa_req_to_first_beat", path, pd_len, rev, 1, req_first, "probes");
    }
    std::fflush(out_);
    return true;
  }

  struct Counters {
    uint64_t cqe_lat_agree = 0, cqe_lat_total = 0, pshdrop = 0, probe_agree = 0, probe_fallback = 0;
  };
  Counters counters() const {
    return {cqe_lat_agree_, cqe_lat_total_, pshdrop_, probe_agree_, probe_fallback_};
  }

 private:
  static constexpr uint32_t kLocalIp = 0x0A000001;
  static constexpr unsigned kDrainEvery = 8;  // posts between probe reads in a burst
  static constexpr std::array<uint8_t, 6> kLocalMac = {0x02, 0xbb, 0xcc, 0xdd, 0xee, 0x01};

  bool fail(const std::string& why) {
    std::fprintf(stderr, "cosim_bench: %s\n", why.c_str());
    return false;
  }

  // A probe record with its full cycle number.

  // Empties the probe FIFO and starts capturing (PROBE_CTRL), forgetting earlier records.
  bool start_probes() {
    probes_.clear();
    probes_lost_ = 0;
    if (auto r = dev_.probes_start(); !r.ok()) return fail("probes: " + r.error().message);
    return true;
  }

  // Reads every record waiting (and PROBE_LOST) into probes_.
  bool drain_probes() {
    auto recs = dev_.read_probes();
    if (!recs.ok()) return fail("read_probes: " + recs.error().message);
    const uint64_t now = hal_.now_cycles();
    for (const auto& r : *recs)
      probes_.push_back({bouncer::probe_cycle64(r.cycle, now), r.stage, r.tag});
    auto st = dev_.probe_status();
    if (!st.ok()) return fail("probe_status: " + st.error().message);
    probes_lost_ = st->lost;
    return true;
  }

  // The cycle of the last SQ_DB write for SQ `sq`.
  uint64_t last_doorbell(unsigned sq) const {
    const auto& w = plat_.mmio_writes();
    for (auto it = w.rbegin(); it != w.rend(); ++it) {
      if (it->offset == R::reg::SQ_DB && R::field::SQ_DB::SQ.get(it->value) == sq) return it->cycle;
    }
    return 0;
  }

  uint64_t last_write(uint32_t offset) const {
    const auto& w = plat_.mmio_writes();
    for (auto it = w.rbegin(); it != w.rend(); ++it) {
      if (it->offset == offset) return it->cycle;
    }
    return 0;
  }

  // Calls f(now, cqe) for every CQE that appeared in host memory since the last call (the
  // testbench's own watch index and polarity, independent of the driver's consumption).
  template <typename F>
  void scan_cq(F&& f) {
    const auto& cq = dev_.cq();
    for (;;) {
      auto e =
          plat_.host_memory(cq.device_addr() + uint64_t{watch_} * R::cqe::kBytes, R::cqe::kBytes);
      if (e.empty() || R::get(e, R::cqe::VALID) != watch_pol_) return;
      f(hal_.now_cycles(), std::span<const std::byte>(e));
      if (++watch_ == cq.size()) {
        watch_ = 0;
        watch_pol_ ^= 1u;
      }
    }
  }

  void emit_latency(const char* stage, const std::string& path, unsigned pd_len, unsigned rev,
                    unsigned k, const std::vector<uint64_t>& v, const char* source,
                    unsigned sqs = 1, uint64_t push_dropped = 0) {
    const Stats s = stats(v);
    std::fprintf(out_,
                 "{\"kind\": \"latency\", \"stage\": \"%s\", \"path\": \"%s\", \"pd_len\": %u, "
                 "\"rev\": %u, \"width\": %u, \"mem_latency\": %llu, \"outstanding\": %u, "
                 "\"sqs\": %u, \"min\": %llu, \"median\": %llu, \"p99\": %llu, \"max\": %llu, "
                 "\"samples\": %zu, \"source\": \"%s\", \"push_dropped\": %llu}\n",
                 stage, path.c_str(), pd_len, rev, o_.width,
                 static_cast<unsigned long long>(o_.mem_latency), k, sqs,
                 static_cast<unsigned long long>(s.min), static_cast<unsigned long long>(s.median),
                 static_cast<unsigned long long>(s.p99), static_cast<unsigned long long>(s.max),
                 v.size(), source, static_cast<unsigned long long>(push_dropped));
  }

  const Options& o_;
  sim::Platform& plat_;
  bouncer::hal::Device& hal_;
  bouncer::Device& dev_;
  bouncer::Cm& cm_;
  bouncer::ContextDiag& diag_;
  FILE* out_;
  std::mt19937_64 rng_{42};
  uint32_t watch_ = 0;
  uint64_t watch_pol_ = 1;
  uint64_t cqe_lat_agree_ = 0, cqe_lat_total_ = 0, pshdrop_ = 0;
  std::vector<bouncer::ProbeStamp> probes_;
  uint32_t probes_lost_ = 0;
  uint64_t probe_agree_ = 0, probe_fallback_ = 0;
  unsigned listen_seq_ = 0, peer_seq_ = 0;
};

}  // namespace

extern "C" int sc_main(int argc, char** argv) {
  Options o;
  try {
    o = parse(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cosim_bench: %s\n", e.what());
    return 2;
  }
  FILE* out = stdout;
  if (!o.out.empty()) {
    out = std::fopen(o.out.c_str(), "w");
    if (!out) {
      std::fprintf(stderr, "cosim_bench: cannot write %s\n", o.out.c_str());
      return 2;
    }
  }
  sim::PlatformConfig cfg;
  cfg.data_width = o.width;
  cfg.mem_latency_cycles = o.mem_latency;
  cfg.clock_mhz = bouncer::bench::default_clock_hz(o.width) / 1e6;
  cfg.fst_path = o.fst;
  bool ok = true;
  Bench::Counters counters;
  // The bare verilated core's speed on this machine now, before the platform's model exists:
  // the meta record gives the platform's cost relative to it (CPU time per simulated cycle).
  const sim::BareCoreSpeed bare = sim::measure_bare_core(o.width, 50'000);
  {
    sim::Platform plat(cfg);
    plat.run([&](bouncer::hal::Device& hal) {
      bouncer::DeviceConfig dc;
      dc.num_sq = *std::max_element(o.sqs.begin(), o.sqs.end());
      dc.sq_entries = 1024;
      dc.cq_entries = 1024;
      if (o.rx) {  // short timers: connections end (and free their cm_id) quickly
        bouncer::TimerConfig t;
        t.tick_cycles = 16;
        t.rto_init = 4'000;
        t.rto_max = 32'000;
        t.mpa_timeout = 200'000;
        t.fin_timeout = 200'000;
        t.time_wait = 500;
        dc.timers = t;
      }
      auto dev = bouncer::Device::open(hal, dc);
      if (!dev.ok()) {
        std::fprintf(stderr, "cosim_bench: open: %s\n", dev.error().message.c_str());
        ok = false;
        return;
      }
      bouncer::Cm cm(**dev);
      bouncer::ContextDiag diag(**dev);
      Bench b(o, plat, hal, **dev, cm, diag, out);
      if (!(*dev)->caps().probes) {
        std::fprintf(stderr, "cosim_bench: CAPS.PROBES is 0: this build has no latency probes\n");
        ok = false;
        return;
      }
      if (!(*dev)->wait_cm_ready(std::chrono::milliseconds(4)).ok()) {
        std::fprintf(stderr, "cosim_bench: STATUS.CM_READY never came\n");
        ok = false;
        return;
      }
      for (unsigned rev : o.rx ? o.revs : std::vector<unsigned>{}) {
        for (unsigned pd : o.rx_pds) {
          if (pd + (rev == 2 ? golden::kMpaIrdOrdLen : 0) > golden::kMpaPdMax) continue;
          for (bool autorej : {true, false}) {
            if (!b.rx_point(autorej, rev, pd)) {
              std::fprintf(stderr, "cosim_bench: failed at RX point %s rev %u pd %u\n",
                           autorej ? "auto" : "host", rev, pd);
              ok = false;
              return;
            }
          }
        }
      }
      for (const auto& path : o.rx ? std::vector<std::string>{} : o.paths) {
        for (unsigned rev : o.revs) {
          for (unsigned pd : o.pds) {
            if (path == "dma_inline" && pd > R::kInlinePdMax) continue;
            if (rev == 2 && pd + golden::kMpaIrdOrdLen > golden::kMpaPdMax) continue;
            for (unsigned k : o.outstanding) {
              for (unsigned q : o.sqs) {
                if (!b.point(path, pd, rev, k, q)) {
                  std::fprintf(
                      stderr, "cosim_bench: failed at path %s rev %u pd %u outstanding %u sqs %u\n",
                      path.c_str(), rev, pd, k, q);
                  ok = false;
                  return;
                }
              }
            }
          }
        }
      }
      counters = b.counters();
    });
    const double wall = plat.wall_seconds(), cpu = plat.cpu_seconds();
    const double cyc = static_cast<double>(plat.cycles());
    const double cost = cyc > 0 && bare.cpu_s > 0
                            ? (cpu / cyc) / (bare.cpu_s / static_cast<double>(bare.cycles))
                            : 0.0;
    std::fprintf(out,
                 "{\"kind\": \"meta\", \"width\": %u, \"mem_latency\": %llu, \"fst\": %s, "
                 "\"sim_cycles\": %llu, \"wall_s\": %.3f, \"cycles_per_s\": %.0f, "
                 "\"cpu_s\": %.3f, \"cycles_per_cpu_s\": %.0f, \"bare_cycles_per_s\": %.0f, "
                 "\"bare_cycles_per_cpu_s\": %.0f, \"cost_vs_bare\": %.3f, "
                 "\"cqe_latency_agree\": %llu, \"cqe_latency_total\": %llu, "
                 "\"push_dropped\": %llu, \"probe_agree\": %llu, \"probe_fallback\": %llu, "
                 "\"rx\": %s, \"ok\": %s}\n",
                 o.width, static_cast<unsigned long long>(o.mem_latency),
                 o.fst.empty() ? "false" : "true", static_cast<unsigned long long>(plat.cycles()),
                 wall, wall > 0 ? cyc / wall : 0.0, cpu, cpu > 0 ? cyc / cpu : 0.0,
                 bare.cycles_per_s(), bare.cycles_per_cpu_s(), cost,
                 static_cast<unsigned long long>(counters.cqe_lat_agree),
                 static_cast<unsigned long long>(counters.cqe_lat_total),
                 static_cast<unsigned long long>(counters.pshdrop),
                 static_cast<unsigned long long>(counters.probe_agree),
                 static_cast<unsigned long long>(counters.probe_fallback), o.rx ? "true" : "false",
                 ok ? "true" : "false");
  }
  if (out != stdout) std::fclose(out);
  return ok ? 0 : 1;
}
