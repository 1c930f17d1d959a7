// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// cosim_bench: reject latency and back-to-back throughput of the co-simulated core, measured
// from the testbench side (exact simulated cycles), until the RTL latency probes of issue 4
// exist. One Platform per process (SystemC elaborates once), so one process per data width
// and host-memory latency; bench/bench_report.py merges the output of several.
//
//   cosim_bench --width 64|512 --mem-latency N [--pd 0,4,...] [--rev 1,2]
//               [--paths push,dma_inline,dma_buffer] [--outstanding 1,8,64] [--samples N]
//               [--fst PATH] [--out FILE]
//
// The host is the real driver (bouncer_driver) on host-written contexts (Cm::write_context,
// the diagnostic path, so no peer traffic shares the TX port). For each point (path, PD
// length, rev, outstanding k) it writes `samples` contexts (at least 2k), then posts one
// reject per context with Cm::post_reject while keeping at most k posted rejects whose CQE
// is not yet in host memory, advancing the simulation one cycle at a time. Stages (cycles):
//   doorbell_to_first_beat  SQ_DB / SQ_PUSH_DB write (Platform::mmio_writes(): the edge at
//                           which the device registered it) -> first TX beat (tx_frames());
//   doorbell_to_last_beat   ... -> tlast beat;
//   doorbell_to_cqe         ... -> the first cycle at which the CQE's VALID bit is seen in
//                           host memory (the testbench looks at the CQ every cycle; exact at
//                           outstanding 1; at 8 and 64 a CQE that lands while the host is in
//                           a doorbell write is seen when that write ends).
// Paths: push (WQE through the push page; PD inline when <= 32 bytes, else in a PD buffer),
// dma_inline (doorbell, WQE fetched by DMA, PD inline: PD <= 32 only), dma_buffer (doorbell,
// PD in a host buffer). rev 2 is enhanced (IRD/ORD word), so PD 512 exists for rev 1 only.
// Every frame is compared byte for byte with the golden builder; the CQE's LATENCY field
// (the hardware's doorbell-to-first-beat counter) is compared with the testbench's figure.
//
// Output: one JSON object per line (kind latency / throughput / meta). Throughput comes from
// the points at the largest outstanding count: frames/s over the last 3/4 of the frames
// (first-beat to first-beat) at the width's clock, and the ratio to the beat ceiling
// (bench/line_rate.hpp). Exit status 1 on any mismatch or error.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "bouncer/cm.hpp"
#include "bouncer/device.hpp"
#include "bouncer/regs.hpp"
#include "bouncer/sim/platform.hpp"
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
  unsigned samples = 64;
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
    } else if (a == "--samples") {
      o.samples = static_cast<unsigned>(std::stoul(val()));
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
  if (o.samples == 0 || o.outstanding.empty()) throw std::invalid_argument("nothing to measure");
  return o;
}

bouncer::CmContext make_ctx(std::mt19937_64& rng, uint32_t cm_id, unsigned rev) {
  bouncer::CmContext c;
  c.rem_mac = {
      0x02, 0x00, 0x5e, 0x10, static_cast<uint8_t>(cm_id >> 8), static_cast<uint8_t>(cm_id)};
  c.loc_mac = {0x02, 0xbb, 0xcc, 0xdd, 0xee, 0x01};
  c.loc_ip = 0x0A000001;
  c.rem_ip = 0x0A000100 | (cm_id & 0xFF);
  c.loc_port = 4791;
  c.rem_port = static_cast<uint16_t>(40000 + cm_id);
  c.rcv_wnd = static_cast<uint16_t>(0x1000 + (rng() & 0xFFF));
  c.ttl = 64;
  c.snd_nxt = static_cast<uint32_t>(rng());
  c.rcv_nxt = static_cast<uint32_t>(rng());
  c.req_rev = static_cast<uint8_t>(rev);
  c.req_flags = static_cast<uint8_t>(0x40 | (rev == 2 ? bouncer::CmContext::kMpaFlagEnhanced : 0));
  c.ip_id = static_cast<uint16_t>(rng());
  c.req_ird_ord = 0x80104010u;
  return c;
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
        bouncer::Cm& cm, FILE* out)
      : o_(o), plat_(plat), hal_(hal), dev_(dev), cm_(cm), out_(out) {}

  // One point; false on an error (printed).
  bool point(const std::string& path, unsigned pd_len, unsigned rev, unsigned k) {
    const unsigned n = std::max(o_.samples, 2 * k);
    if (n > dev_.caps().ctx_depth || n >= dev_.sq().size()) {
      return fail("too many samples for the context table / SQ");
    }
    std::vector<bouncer::CmContext> ctx(n);
    std::vector<std::vector<std::byte>> pd(n);
    for (unsigned i = 0; i < n; ++i) {
      ctx[i] = make_ctx(rng_, i, rev);
      if (!cm_.write_context(i, ctx[i]).ok()) return fail("write_context");
      pd[i].resize(pd_len);
      for (auto& b : pd[i]) b = static_cast<std::byte>(rng_());
    }
    bouncer::RejectOptions opt;
    opt.push = path == "push";
    opt.allow_inline = path != "dma_buffer";
    opt.allow_long_pd = true;
    const uint32_t db_reg = opt.push ? R::reg::SQ_PUSH_DB : R::reg::SQ_DB;

    const size_t tx0 = plat_.tx_frames().size();
    std::vector<uint64_t> db(n), cqe(n);
    std::vector<uint16_t> idx(n);
    unsigned posted = 0, seen = 0;
    const uint64_t deadline =
        hal_.now_cycles() + 200'000 + uint64_t{n} * (4 * o_.mem_latency + 2000);
    while (seen < n) {
      while (posted < n && posted - seen < k) {
        opt.wr_id = posted;
        auto r = cm_.post_reject(posted, pd[posted], opt);
        if (!r.ok()) return fail("post_reject: " + r.error().message);
        idx[posted] = *r;
        db[posted] = last_write(db_reg);
        ++posted;
      }
      hal_.wait_cycles(1);
      scan_cq([&](uint64_t cycle, std::span<const std::byte> e) {
        if (seen < n && R::get(e, R::cqe::WQEIDX) == idx[seen]) cqe[seen++] = cycle;
      });
      if (hal_.now_cycles() > deadline) return fail("timeout waiting for CQEs");
    }
    // Consume the completions (driver state, CQ_HEAD) and check them.
    std::vector<bouncer::Completion> comp;
    while (comp.size() < n) {
      auto c = cm_.poll();
      if (!c) return fail("CQE seen in memory but not by the driver");
      comp.push_back(*c);
    }
    const auto& tx = plat_.tx_frames();
    if (tx.size() != tx0 + n) return fail("TX frames vs. rejects");
    std::vector<uint64_t> first(n), last(n), to_cqe(n);
    for (unsigned i = 0; i < n; ++i) {
      const auto& f = tx[tx0 + i];
      if (!comp[i].ok() || comp[i].wr_id != i) return fail("completion " + comp[i].status());
      if (f.bytes != golden_frame(ctx[i], pd[i])) return fail("frame differs from golden");
      if (opt.push && comp[i].pshdrop) ++pshdrop_;
      first[i] = f.first_cycle - db[i];
      last[i] = f.last_cycle - db[i];
      to_cqe[i] = cqe[i] - db[i];
      // The CQE's LATENCY counts from the doorbell or from the end of the previous WQE,
      // whichever is later: the testbench's figure must match it exactly when one reject
      // is outstanding at a time.
      if (k == 1) {
        ++cqe_lat_total_;
        if (comp[i].latency_cycles != first[i]) {
          return fail("CQE LATENCY " + std::to_string(comp[i].latency_cycles) +
                      " != testbench doorbell-to-first-beat " + std::to_string(first[i]));
        }
        ++cqe_lat_agree_;
      }
    }
    emit_latency("doorbell_to_first_beat", path, pd_len, rev, k, first);
    emit_latency("doorbell_to_last_beat", path, pd_len, rev, k, last);
    emit_latency("doorbell_to_cqe", path, pd_len, rev, k, to_cqe);
    if (k == *std::max_element(o_.outstanding.begin(), o_.outstanding.end())) {
      const unsigned a = n / 4, b = n - 1;
      const double cycles = static_cast<double>(tx[tx0 + b].first_cycle - tx[tx0 + a].first_cycle);
      const double clock = bouncer::bench::default_clock_hz(o_.width);
      const double fps = static_cast<double>(b - a) / cycles * clock;
      const uint32_t bytes = static_cast<uint32_t>(tx[tx0].bytes.size());
      const double ceil = bouncer::bench::beat_ceiling_fps(bytes, o_.width, clock);
      std::fprintf(out_,
                   "{\"kind\": \"throughput\", \"pd_len\": %u, \"width\": %u, \"rev\": %u, "
                   "\"frames_per_s\": %.1f, \"ceiling_ratio\": %.6f, \"path\": \"%s\", "
                   "\"mem_latency\": %llu, \"outstanding\": %u, \"frames\": %u, "
                   "\"cycles\": %.0f, \"frame_bytes\": %u, \"source\": \"testbench\"}\n",
                   pd_len, o_.width, rev, fps, fps / ceil, path.c_str(),
                   static_cast<unsigned long long>(o_.mem_latency), k, b - a, cycles, bytes);
    }
    std::fflush(out_);
    return true;
  }

  struct Counters {
    uint64_t cqe_lat_agree = 0, cqe_lat_total = 0, pshdrop = 0;
  };
  Counters counters() const { return {cqe_lat_agree_, cqe_lat_total_, pshdrop_}; }

 private:
  bool fail(const std::string& why) {
    std::fprintf(stderr, "cosim_bench: %s\n", why.c_str());
    return false;
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
                    unsigned k, const std::vector<uint64_t>& v) {
    const Stats s = stats(v);
    std::fprintf(
        out_,
        "{\"kind\": \"latency\", \"stage\": \"%s\", \"path\": \"%s\", \"pd_len\": %u, "
        "\"rev\": %u, \"width\": %u, \"mem_latency\": %llu, \"outstanding\": %u, "
        "\"sqs\": 1, \"min\": %llu, \"median\": %llu, \"p99\": %llu, \"max\": %llu, "
        "\"samples\": %zu, \"source\": \"testbench\"}\n",
        stage, path.c_str(), pd_len, rev, o_.width, static_cast<unsigned long long>(o_.mem_latency),
        k, static_cast<unsigned long long>(s.min), static_cast<unsigned long long>(s.median),
        static_cast<unsigned long long>(s.p99), static_cast<unsigned long long>(s.max), v.size());
  }

  const Options& o_;
  sim::Platform& plat_;
  bouncer::hal::Device& hal_;
  bouncer::Device& dev_;
  bouncer::Cm& cm_;
  FILE* out_;
  std::mt19937_64 rng_{42};
  uint32_t watch_ = 0;
  uint64_t watch_pol_ = 1;
  uint64_t cqe_lat_agree_ = 0, cqe_lat_total_ = 0, pshdrop_ = 0;
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
  {
    sim::Platform plat(cfg);
    plat.run([&](bouncer::hal::Device& hal) {
      bouncer::DeviceConfig dc;
      dc.sq_entries = 1024;
      dc.cq_entries = 1024;
      auto dev = bouncer::Device::open(hal, dc);
      if (!dev.ok()) {
        std::fprintf(stderr, "cosim_bench: open: %s\n", dev.error().message.c_str());
        ok = false;
        return;
      }
      if ((*dev)->caps().num_sq != 1) {
        std::fprintf(stderr, "cosim_bench: CAPS.NUM_SQ is %u; this bench drives SQ 0 only\n",
                     (*dev)->caps().num_sq);
      }
      bouncer::Cm cm(**dev);
      Bench b(o, plat, hal, **dev, cm, out);
      for (const auto& path : o.paths) {
        for (unsigned rev : o.revs) {
          for (unsigned pd : o.pds) {
            if (path == "dma_inline" && pd > R::kInlinePdMax) continue;
            if (rev == 2 && pd + golden::kMpaIrdOrdLen > golden::kMpaPdMax) continue;
            for (unsigned k : o.outstanding) {
              if (!b.point(path, pd, rev, k)) {
                std::fprintf(stderr, "cosim_bench: failed at path %s rev %u pd %u outstanding %u\n",
                             path.c_str(), rev, pd, k);
                ok = false;
                return;
              }
            }
          }
        }
      }
      counters = b.counters();
    });
    const double wall = plat.wall_seconds();
    std::fprintf(out,
                 "{\"kind\": \"meta\", \"width\": %u, \"mem_latency\": %llu, \"fst\": %s, "
                 "\"sim_cycles\": %llu, \"wall_s\": %.3f, \"cycles_per_s\": %.0f, "
                 "\"cqe_latency_agree\": %llu, \"cqe_latency_total\": %llu, "
                 "\"push_dropped\": %llu, \"ok\": %s}\n",
                 o.width, static_cast<unsigned long long>(o.mem_latency),
                 o.fst.empty() ? "false" : "true", static_cast<unsigned long long>(plat.cycles()),
                 wall, wall > 0 ? static_cast<double>(plat.cycles()) / wall : 0.0,
                 static_cast<unsigned long long>(counters.cqe_lat_agree),
                 static_cast<unsigned long long>(counters.cqe_lat_total),
                 static_cast<unsigned long long>(counters.pshdrop), ok ? "true" : "false");
  }
  if (out != stdout) std::fclose(out);
  return ok ? 0 : 1;
}
