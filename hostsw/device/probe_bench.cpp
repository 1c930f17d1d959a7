// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// The probe-measured reject bench over any hal::Device (bouncer/probe_bench.hpp).
#include "bouncer/probe_bench.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <random>

#include "bouncer/regs.hpp"

namespace bouncer {
namespace {

namespace R = regs;

// Nearest-rank percentiles (median: the lower middle element).
void fill_stats(ProbeLatency& r, std::vector<uint64_t> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  r.samples = static_cast<unsigned>(n);
  r.min = v.front();
  r.max = v.back();
  r.median = v[(n - 1) / 2];
  r.p99 = v[std::min(n - 1, (99 * n + 99) / 100 - 1)];
}

class ProbeBench {
 public:
  ProbeBench(Device& dev, ContextDiag& cm, const ProbeBenchConfig& cfg)
      : dev_(dev), cm_(cm), hal_(dev.hal()), cfg_(cfg) {}

  Result<void> point(const std::string& path, unsigned pd_len, unsigned rev, unsigned k,
                     unsigned sqs, std::vector<ProbeLatency>& out) {
    const unsigned n = std::max(cfg_.samples, 2 * k);
    if (sqs == 0 || sqs > dev_.num_sq()) {
      return Error{
          Errc::kInvalidArgument,
          fmt::format("{} SQs asked for; the device was opened with {}", sqs, dev_.num_sq())};
    }
    if (n > dev_.caps().ctx_depth || (n + sqs - 1) / sqs >= dev_.sq().size()) {
      return Error{Errc::kInvalidArgument,
                   fmt::format("{} samples do not fit the context table ({}) and {} SQ(s) of {}", n,
                               dev_.caps().ctx_depth, sqs, dev_.sq().size())};
    }
    std::vector<CmContext> ctx(n);
    std::vector<std::vector<std::byte>> pd(n);
    for (unsigned i = 0; i < n; ++i) {
      ctx[i] = bench_context(rng_, i, rev, own_mac_);
      if (auto r = cm_.write_context(i, ctx[i]); !r.ok()) return r.error();
      pd[i].resize(pd_len);
      for (auto& b : pd[i]) b = static_cast<std::byte>(rng_());
    }
    RejectOptions opt;
    opt.push = path == "push";
    opt.allow_inline = path != "dma_buffer";
    opt.unsafe_wire_pd = true;
    records_.clear();
    if (auto r = dev_.probes_start(); !r.ok()) return r.error();
    std::vector<uint16_t> idx(n);
    std::vector<bool> done(n, false);
    unsigned posted = 0, completed = 0;
    hal::Deadline dl(hal_, cfg_.point_timeout);
    while (completed < n) {
      while (posted < n && posted - completed < k) {
        opt.wr_id = posted;
        opt.sq = posted % sqs;
        auto r = cm_.post_reject(posted, pd[posted], opt);
        if (!r.ok()) return r.error();
        idx[posted] = *r;
        ++posted;
      }
      bool any = false;
      while (auto c = cm_.poll()) {
        any = true;
        if (!c->ok() || c->wr_id >= n || done[c->wr_id]) {
          return Error{Errc::kHardware, "bench: completion " + c->status()};
        }
        done[c->wr_id] = true;
        ++completed;
      }
      // Empty the probe FIFO on every pass, not only while waiting: with several SQs (one push
      // page each) completions can arrive back to back for a whole point and the FIFO would
      // overflow. The reads cost host time only; the stamps are taken by the hardware.
      if (auto r = drain(); !r.ok()) return r.error();
      if (!any) hal_.wait_cycles(1);
      if (dl.passed()) {
        return Error{Errc::kTimeout,
                     fmt::format("bench: {} of {} completions after {}; {}", completed, n,
                                 format_duration(cfg_.point_timeout), dev_.state_text())};
      }
    }
    if (auto r = drain(); !r.ok()) return r.error();
    auto st = dev_.probe_status();
    if (!st.ok()) return st.error();
    if (st->lost != 0) {
      return Error{Errc::kHardware,
                   fmt::format("bench: the probe FIFO overflowed ({} records lost): the host "
                               "could not read the records of {} rejects in flight fast enough; "
                               "use a lower outstanding count",
                               st->lost, k)};
    }
    RejectProbeIndex pidx;
    pidx.add(records_);
    std::vector<uint64_t> s_desc(n), s_pd(n), s_first(n), s_last(n), s_cqe(n);
    for (unsigned i = 0; i < n; ++i) {
      const auto st = pidx.find(i % sqs, idx[i], ctx[i].rem_port, dev_.sq().size());
      if (!st) {
        return Error{Errc::kHardware,
                     fmt::format("bench: a probe record is missing for reject {}", i)};
      }
      s_desc[i] = st->desc - st->doorbell;
      s_pd[i] = st->pd - st->doorbell;
      s_first[i] = st->first - st->doorbell;
      s_last[i] = st->last - st->doorbell;
      s_cqe[i] = st->cqe - st->doorbell;
    }
    const std::pair<const char*, std::vector<uint64_t>*> stages[] = {
        {"doorbell_to_desc", &s_desc},
        {"doorbell_to_pd", &s_pd},
        {"doorbell_to_first_beat", &s_first},
        {"doorbell_to_last_beat", &s_last},
        {"doorbell_to_cqe", &s_cqe}};
    for (const auto& [name, v] : stages) {
      ProbeLatency r;
      r.stage = name;
      r.path = path;
      r.pd_len = pd_len;
      r.rev = rev;
      r.width = dev_.caps().data_bytes * 8;
      r.mem_latency = cfg_.mem_latency;
      r.clock_mhz = cfg_.clock_mhz;
      r.outstanding = k;
      r.sqs = sqs;
      fill_stats(r, *v);
      out.push_back(std::move(r));
    }
    return {};
  }

  Result<void> drain() {
    auto recs = dev_.read_probes();
    if (!recs.ok()) return recs.error();
    const uint64_t now = hal_.now_cycles();
    for (const auto& r : *recs) records_.push_back({probe_cycle64(r.cycle, now), r.stage, r.tag});
    return {};
  }

  std::array<uint8_t, 6> own_mac_ = {0x02, 0xbb, 0xcc, 0xdd, 0xee, 0x01};

 private:
  Device& dev_;
  ContextDiag& cm_;
  hal::Device& hal_;
  const ProbeBenchConfig& cfg_;
  std::mt19937_64 rng_{4791};
  std::vector<ProbeStamp> records_;
};

}  // namespace

size_t RejectProbeIndex::add(std::span<const ProbeStamp> recs) {
  size_t other = 0;
  for (const auto& r : recs) {
    switch (r.stage) {
      case R::ProbeStage::DOORBELL:  // SQ (19:16) and PI (14:0); bit 15 is the push flag
        db_[r.tag & 0xF7FFF] = r.cycle;
        break;
      case R::ProbeStage::DESC_AVAIL:  // SQ and wqe_idx, likewise
        desc_[r.tag & 0xF7FFF] = r.cycle;
        break;
      case R::ProbeStage::PD_READY:
        pd_[r.tag] = r.cycle;
        break;
      case R::ProbeStage::REJ_FIRST_HOST:
        first_[r.tag] = r.cycle;
        break;
      case R::ProbeStage::REJ_LAST:
        last_[r.tag] = r.cycle;
        break;
      case R::ProbeStage::CQE_WRITTEN:
        cqe_[r.tag] = r.cycle;
        break;
      default:
        ++other;
    }
  }
  return other;
}

std::optional<RejectStamps> RejectProbeIndex::find(unsigned sq, uint16_t wqe_idx, uint16_t rem_port,
                                                   uint32_t sq_size) const {
  const uint32_t port = rem_port, host_port = port | 0x10000u;
  const uint32_t wqe = (sq << 16) | wqe_idx;
  auto get = [](const std::map<uint32_t, uint64_t>& m, uint32_t k) -> std::optional<uint64_t> {
    auto it = m.find(k);
    if (it == m.end()) return std::nullopt;
    return it->second;
  };
  // The doorbell that published the WQE: PI = wqe_idx + 1, or, when several WQEs went out
  // with one doorbell (Device::post_rejects), the first doorbell whose PI lies past it.
  std::optional<uint64_t> db;
  for (uint32_t k = 1; k < sq_size && !db; ++k) {
    db = get(db_, (sq << 16) | ((wqe_idx + k) & (sq_size - 1)));
  }
  const auto desc = get(desc_, wqe), pd = get(pd_, host_port), first = get(first_, port),
             last = get(last_, host_port), cqe = get(cqe_, wqe);
  if (!db || !desc || !pd || !first || !last || !cqe) return std::nullopt;
  return RejectStamps{*db, *desc, *pd, *first, *last, *cqe};
}

CmContext bench_context(std::mt19937_64& rng, uint32_t cm_id, unsigned rev,
                        const std::array<uint8_t, 6>& own_mac) {
  CmContext c;
  // 02:00:5e:10:xx:xx, never the device's own MAC: a looped-back reject is dropped at RX
  c.rem_mac = {
      0x02, 0x00, 0x5e, 0x10, static_cast<uint8_t>(cm_id >> 8), static_cast<uint8_t>(cm_id)};
  if (c.rem_mac == own_mac) c.rem_mac[2] ^= 1;
  c.loc_mac = own_mac;
  c.loc_ip = 0x0A000001;
  c.rem_ip = 0x0A000100 | (cm_id & 0xFF);
  c.loc_port = 4791;
  c.rem_port = static_cast<uint16_t>(40000 + cm_id);
  c.rcv_wnd = static_cast<uint16_t>(0x1000 + (rng() & 0xFFF));
  c.ttl = 64;
  c.snd_nxt = static_cast<uint32_t>(rng());
  c.rcv_nxt = static_cast<uint32_t>(rng());
  c.req_rev = static_cast<uint8_t>(rev);
  c.req_flags = static_cast<uint8_t>(0x40 | (rev == 2 ? CmContext::kMpaFlagEnhanced : 0));
  c.ip_id = static_cast<uint16_t>(rng());
  c.req_ird_ord = 0x80104010u;
  return c;
}

Result<std::vector<ProbeLatency>> run_probe_bench(Device& dev, ContextDiag& cm,
                                                  const ProbeBenchConfig& cfg) {
  if (!dev.caps().probes) {
    return Error{Errc::kState, "this build has no latency probes (CAPS.PROBES = 0)"};
  }
  for (const auto& p : cfg.paths) {
    if (p != "push" && p != "dma_inline" && p != "dma_buffer") {
      return Error{Errc::kInvalidArgument, "bench: unknown path " + p};
    }
  }
  if (cfg.samples == 0 || cfg.outstanding.empty() || cfg.pd_lens.empty() || cfg.revs.empty() ||
      cfg.sqs.empty()) {
    return Error{Errc::kInvalidArgument, "bench: nothing to measure"};
  }
  for (unsigned s : cfg.sqs) {
    if (s == 0 || s > dev.num_sq()) {
      return Error{Errc::kInvalidArgument,
                   fmt::format("bench: {} SQs asked for; the device was opened with {} "
                               "(DeviceConfig::num_sq, at most CAPS.NUM_SQ = {})",
                               s, dev.num_sq(), dev.caps().num_sq)};
    }
  }
  hal::Device& hal = dev.hal();
  const uint32_t ctrl = hal.read32(R::reg::CTRL);
  if (cfg.loopback) hal.write32(R::reg::CTRL, ctrl | R::field::CTRL::LOOPBACK.mask());
  ProbeBench b(dev, cm, cfg);
  std::vector<ProbeLatency> out;
  Result<void> status{};
  for (const auto& path : cfg.paths) {
    for (unsigned rev : cfg.revs) {
      for (unsigned pd : cfg.pd_lens) {
        if (path == "dma_inline" && (pd > R::kInlinePdMax || !dev.caps().inline_pd)) continue;
        if (path == "push" && !dev.caps().push) continue;
        const unsigned max_pd = rev == 2 ? R::kMpaPdMax - 4 : R::kMpaPdMax;
        if (pd > max_pd) continue;
        for (unsigned k : cfg.outstanding) {
          for (unsigned s : cfg.sqs) {
            if (status = b.point(path, pd, rev, k, s, out); !status.ok()) break;
          }
          if (!status.ok()) break;
        }
        if (!status.ok()) break;
      }
      if (!status.ok()) break;
    }
    if (!status.ok()) break;
  }
  (void)dev.probes_stop();
  if (cfg.loopback) hal.write32(R::reg::CTRL, ctrl);
  if (!status.ok()) return status.error();
  return out;
}

std::string probe_bench_jsonl(const std::vector<ProbeLatency>& recs) {
  std::string s;
  for (const auto& r : recs) {
    s += fmt::format(
        "{{\"kind\": \"latency\", \"stage\": \"{}\", \"path\": \"{}\", \"pd_len\": {}, \"rev\": "
        "{}, \"width\": {}, \"mem_latency\": {}, \"outstanding\": {}, \"sqs\": {}, \"min\": {}, "
        "\"median\": {}, \"p99\": {}, \"max\": {}, \"samples\": {}, \"clock_mhz\": {:.6g}, "
        "\"source\": \"probes\"}}\n",
        r.stage, r.path, r.pd_len, r.rev, r.width, r.mem_latency, r.outstanding, r.sqs, r.min,
        r.median, r.p99, r.max, r.samples, r.clock_mhz);
  }
  return s;
}

}  // namespace bouncer
