// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// The RTL latency probes (bouncer_probe, PROBE_* registers, Device::read_probes) against the
// co-simulation testbench: every stamp the testbench can see is compared exactly with the
// cycle at which the testbench saw the event ("the probes agree with the cycle at
// which the testbench sees each event").
//  - HostPath: host-written contexts, one reject at a time on each descriptor path (push with
//    inline PD, push with a PD buffer, doorbell + DMA with inline PD, doorbell + DMA with a PD
//    buffer, empty PD). DOORBELL = the edge at which the device registered the SQ_DB /
//    SQ_PUSH_DB write (Platform::mmio_writes), REJ_FIRST_HOST / REJ_LAST = the first / tlast
//    beat at the TX port (tx_frames), CQE_WRITTEN = the first cycle at which the testbench,
//    looking at host memory every cycle, sees the CQE. DESC_AVAIL and PD_READY are internal:
//    checked for order, tags, and (DMA) at least one memory latency after the doorbell.
//    The CQE's own LATENCY field equals REJ_FIRST_HOST - DOORBELL.
//  - Passive: two simulated initiators, one to a listener whose host rejects, one to an
//    auto-reject listener. SYN_IN / MPA_REQ_LAST = the tlast beat of the SYN / the request
//    segment at the RX port (rx_frames), SYNACK_FIRST and REJ_FIRST_HOST / _AUTO / REJ_LAST =
//    the TX port, EVENT_WRITTEN = the first cycle the testbench sees the CONNECT_REQUEST AEQE
//    in host memory.
//  - Overflow: more events than the FIFO holds: OVERFLOW sticky, LOST counted, the datapath
//    unaffected (every reject still completes), CLEAR resets it all.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "bouncer/cm.hpp"
#include "bouncer/cm_diag.hpp"
#include "bouncer/device.hpp"
#include "bouncer/peer/initiator.hpp"
#include "bouncer/regs.hpp"
#include "bouncer/sim/platform.hpp"
#include "golden/frame_parser.hpp"

using namespace std::chrono_literals;

namespace {

namespace R = bouncer::regs;
namespace sim = bouncer::sim;
namespace peer = bouncer::peer;
using Stage = R::ProbeStage;

constexpr uint32_t lo32(uint64_t c) { return static_cast<uint32_t>(c); }

std::vector<bouncer::ProbeRecord> of(const std::vector<bouncer::ProbeRecord>& v, Stage s) {
  std::vector<bouncer::ProbeRecord> r;
  for (const auto& x : v) {
    if (x.stage == s) r.push_back(x);
  }
  return r;
}

std::optional<bouncer::ProbeRecord> find(const std::vector<bouncer::ProbeRecord>& v, Stage s,
                                         uint32_t tag, uint32_t tag_mask = 0xFFFFFF) {
  for (const auto& x : v) {
    if (x.stage == s && (x.tag & tag_mask) == tag) return x;
  }
  return std::nullopt;
}

bouncer::CmContext make_ctx(uint32_t cm_id) {
  bouncer::CmContext c;
  c.rem_mac = {0x02, 0x00, 0x5e, 0x10, 0x00, static_cast<uint8_t>(cm_id)};
  c.loc_mac = {0x02, 0xbb, 0xcc, 0xdd, 0xee, 0x01};
  c.loc_ip = 0x0A000001;
  c.rem_ip = 0x0A000100 | cm_id;
  c.loc_port = 4791;
  c.rem_port = static_cast<uint16_t>(40000 + cm_id);
  c.rcv_wnd = 0x1000;
  c.ttl = 64;
  c.snd_nxt = 0x1000 * (cm_id + 1);
  c.rcv_nxt = 0x2000 * (cm_id + 1);
  c.req_rev = 2;
  c.req_flags = 0x40 | bouncer::CmContext::kMpaFlagEnhanced;
  c.ip_id = static_cast<uint16_t>(100 + cm_id);
  c.req_ird_ord = 0x80104010u;
  return c;
}

uint64_t last_write(const sim::Platform& plat, uint32_t offset) {
  const auto& w = plat.mmio_writes();
  for (auto it = w.rbegin(); it != w.rend(); ++it) {
    if (it->offset == offset) return it->cycle;
  }
  return 0;
}

// Watches a 32-byte-entry ring in host memory every cycle (its own index and polarity).
struct RingWatch {
  uint64_t base = 0;
  uint32_t size = 0;
  uint32_t idx = 0;
  uint64_t pol = 1;
  template <class F>
  void scan(sim::Platform& plat, uint64_t now, const bouncer::regs::Field& valid, F&& f) {
    for (;;) {
      auto e = plat.host_memory(base + uint64_t{idx} * 32, 32);
      if (e.empty() || R::get(e, valid) != pol) return;
      f(now, std::span<const std::byte>(e));
      if (++idx == size) {
        idx = 0;
        pol ^= 1u;
      }
    }
  }
};

class Probes : public ::testing::TestWithParam<unsigned> {};

struct Case {
  const char* name;
  bool push;
  bool allow_inline;
  unsigned pd_len;
};

TEST_P(Probes, HostPathStagesMatchTestbench) {
  sim::PlatformConfig pc;
  pc.data_width = GetParam();
  pc.mem_latency_cycles = 100;
  sim::Platform plat(pc);
  const std::vector<Case> cases = {{"push inline", true, true, 4},
                                   {"push buffer", true, true, 100},
                                   {"dma inline", false, true, 16},
                                   {"dma buffer", false, false, 64},
                                   {"dma empty", false, false, 0}};
  plat.run([&](bouncer::hal::Device& hal) {
    bouncer::DeviceConfig dc;
    dc.sq_entries = 64;
    dc.cq_entries = 64;
    auto dev = bouncer::Device::open(hal, dc);
    ASSERT_TRUE(dev.ok()) << dev.error().message;
    ASSERT_TRUE((*dev)->caps().probes) << "CAPS.PROBES is 0";
    bouncer::ContextDiag cm(**dev);
    ASSERT_TRUE((*dev)->wait_cm_ready(400us).ok());
    for (uint32_t i = 0; i < cases.size(); ++i) {
      ASSERT_TRUE(cm.write_context(i, make_ctx(i)).ok());
    }
    ASSERT_TRUE((*dev)->probes_start().ok());
    RingWatch cqw{(*dev)->cq().device_addr(), (*dev)->cq().size()};
    std::vector<uint64_t> db(cases.size()), cqe(cases.size());
    std::vector<uint16_t> idx(cases.size());
    std::vector<bouncer::Completion> comp;
    const size_t tx0 = plat.tx_frames().size();
    for (uint32_t i = 0; i < cases.size(); ++i) {
      const Case& k = cases[i];
      std::vector<std::byte> pd(k.pd_len);
      for (size_t b = 0; b < pd.size(); ++b) pd[b] = static_cast<std::byte>(b * 7 + i);
      bouncer::RejectOptions opt;
      opt.push = k.push;
      opt.allow_inline = k.allow_inline;
      opt.wr_id = i;
      auto r = cm.post_reject(i, pd, opt);
      ASSERT_TRUE(r.ok()) << r.error().message;
      idx[i] = *r;
      db[i] = last_write(plat, k.push ? R::reg::SQ_PUSH_DB : R::reg::SQ_DB);
      bool seen = false;
      for (int t = 0; t < 100'000 && !seen; ++t) {
        hal.wait_cycles(1);
        cqw.scan(plat, hal.now_cycles(), R::cqe::VALID,
                 [&](uint64_t now, std::span<const std::byte> e) {
                   EXPECT_EQ(R::get(e, R::cqe::WQEIDX), idx[i]);
                   cqe[i] = now;
                   seen = true;
                 });
      }
      ASSERT_TRUE(seen) << k.name << ": no CQE";
      auto c = cm.poll();
      ASSERT_TRUE(c.has_value());
      ASSERT_TRUE(c->ok()) << k.name << ": " << c->status();
      comp.push_back(*c);
    }
    auto recs = (*dev)->read_probes();
    ASSERT_TRUE(recs.ok()) << recs.error().message;
    auto st = (*dev)->probe_status();
    ASSERT_TRUE(st.ok());
    EXPECT_FALSE(st->overflow);
    EXPECT_EQ(st->lost, 0u);
    EXPECT_EQ(st->count, 0u);
    for (const auto& x : *recs) {
      std::printf("  probe %-15s tag 0x%06x @%u\n", R::name(x.stage), x.tag, x.cycle);
    }

    const auto& tx = plat.tx_frames();
    ASSERT_EQ(tx.size(), tx0 + cases.size());
    const auto dbs = of(*recs, Stage::DOORBELL), descs = of(*recs, Stage::DESC_AVAIL),
               pds = of(*recs, Stage::PD_READY), firsts = of(*recs, Stage::REJ_FIRST_HOST),
               lasts = of(*recs, Stage::REJ_LAST), cqes = of(*recs, Stage::CQE_WRITTEN);
    ASSERT_EQ(dbs.size(), cases.size());
    ASSERT_EQ(descs.size(), cases.size());
    ASSERT_EQ(pds.size(), cases.size());
    ASSERT_EQ(firsts.size(), cases.size());
    ASSERT_EQ(lasts.size(), cases.size());
    ASSERT_EQ(cqes.size(), cases.size());
    EXPECT_TRUE(of(*recs, Stage::REJ_FIRST_AUTO).empty());
    const uint32_t mask = (*dev)->sq().size() - 1;
    for (uint32_t i = 0; i < cases.size(); ++i) {
      SCOPED_TRACE(cases[i].name);
      const uint32_t port = 40000 + i;
      // exact: the testbench's own observations
      EXPECT_EQ(dbs[i].cycle, lo32(db[i]));
      EXPECT_EQ(firsts[i].cycle, lo32(tx[tx0 + i].first_cycle));
      EXPECT_EQ(lasts[i].cycle, lo32(tx[tx0 + i].last_cycle));
      EXPECT_EQ(cqes[i].cycle, lo32(cqe[i]));
      EXPECT_EQ(comp[i].latency_cycles, firsts[i].cycle - dbs[i].cycle);
      // tags
      EXPECT_EQ(dbs[i].tag, ((idx[i] + 1u) & mask) | (cases[i].push ? 0x8000u : 0u));
      EXPECT_EQ(descs[i].tag, idx[i] | (cases[i].push ? 0x8000u : 0u));
      EXPECT_EQ(pds[i].tag, port | 0x10000u);
      EXPECT_EQ(firsts[i].tag, port);
      EXPECT_EQ(lasts[i].tag, port | 0x10000u);
      EXPECT_EQ(cqes[i].tag, idx[i]);
      // internal stages: in order; the ring path waits one memory latency for the WQE
      EXPECT_GT(descs[i].cycle, dbs[i].cycle);
      EXPECT_GT(pds[i].cycle, descs[i].cycle);
      EXPECT_GT(firsts[i].cycle, pds[i].cycle);
      EXPECT_GT(cqes[i].cycle, lasts[i].cycle);
      if (!cases[i].push) {
        EXPECT_GE(descs[i].cycle - dbs[i].cycle, pc.mem_latency_cycles);
      }
      if (!cases[i].allow_inline && cases[i].pd_len > 0) {
        EXPECT_GE(pds[i].cycle - descs[i].cycle, pc.mem_latency_cycles);
      }
    }
  });
}

peer::InitiatorConfig initiator(uint8_t n, uint16_t port, uint16_t listen_port) {
  peer::InitiatorConfig ic;
  ic.mac = {0x02, 0, 0, 0, 0, static_cast<uint8_t>(0x10 + n)};
  ic.peer_mac = {0x02, 0, 0, 0, 0, 0x01};
  ic.ip = 0x0A000002 + n;
  ic.peer_ip = 0x0A000001;
  ic.port = port;
  ic.peer_port = listen_port;
  ic.isn = 0x12345678u * (n + 1);
  ic.mpa_rev = 2;
  ic.private_data = {'p', 'r', 'o', 'b', 'e'};
  ic.rto_cycles = 20'000;
  ic.time_wait_cycles = 2'000;
  return ic;
}

// The TX / RX frame of a given kind to / from `port`.
template <class Pred>
const sim::TxFrame* frame_of(const std::vector<sim::TxFrame>& v, Pred pred) {
  for (const auto& f : v) {
    auto s = golden::parse_tcp_segment(f.bytes, nullptr);
    if (s && pred(*s)) return &f;
  }
  return nullptr;
}

TEST_P(Probes, PassiveStagesMatchTestbench) {
  sim::PlatformConfig pc;
  pc.data_width = GetParam();
  pc.mem_latency_cycles = 100;
  sim::Platform plat(pc);
  constexpr uint16_t kHostPort = 41000, kAutoPort = 41001;
  uint32_t host_cm_id = 0;
  uint64_t evt_seen = 0;
  plat.run([&](bouncer::hal::Device& hal) {
    bouncer::DeviceConfig dc;
    dc.isn_key = std::array<uint32_t, 4>{1, 2, 3, 4};
    bouncer::TimerConfig t;
    t.tick_cycles = 16;
    t.rto_init = 2'000;
    t.rto_max = 16'000;
    t.mpa_timeout = 100'000;
    t.fin_timeout = 100'000;
    t.time_wait = 500;
    dc.timers = t;
    auto dev = bouncer::Device::open(hal, dc);
    ASSERT_TRUE(dev.ok()) << dev.error().message;
    bouncer::Cm cm(**dev);
    bouncer::ListenOptions lo;
    lo.local_mac = {0x02, 0, 0, 0, 0, 0x01};
    ASSERT_TRUE(cm.listen(0x0A000001, 4791, lo).ok());
    bouncer::ListenOptions la = lo;
    la.auto_reject = R::AutoReject::ALL;
    la.template_pd = {std::byte{'a'}, std::byte{'u'}, std::byte{'t'}, std::byte{'o'}};
    ASSERT_TRUE(cm.listen(0x0A000001, 4792, la).ok());
    ASSERT_TRUE((*dev)->wait_cm_ready(400us).ok());
    ASSERT_TRUE((*dev)->probes_start().ok());

    plat.add_peer(initiator(0, kHostPort, 4791), plat.cycles() + 10);
    plat.add_peer(initiator(1, kAutoPort, 4792), plat.cycles() + 200);
    // watch the AEQ every cycle until the CONNECT_REQUEST lands
    RingWatch aw{(*dev)->aeq().device_addr(), (*dev)->aeq().size()};
    for (int i = 0; i < 400'000 && evt_seen == 0; ++i) {
      hal.wait_cycles(1);
      aw.scan(plat, hal.now_cycles(), R::aeqe::VALID,
              [&](uint64_t now, std::span<const std::byte> e) {
                if (R::get(e, R::aeqe::EVENT_CODE) ==
                    static_cast<uint64_t>(R::AeqEvent::CONNECT_REQUEST)) {
                  evt_seen = now;
                }
              });
    }
    ASSERT_NE(evt_seen, 0u) << "no CONNECT_REQUEST";
    auto ev = cm.wait_event(400us);
    ASSERT_TRUE(ev.ok()) << ev.error().message;
    auto* req = std::get_if<bouncer::ConnectRequest>(&*ev);
    ASSERT_NE(req, nullptr);
    host_cm_id = req->cm_id;
    std::vector<std::byte> pd = {std::byte{'n'}, std::byte{'o'}};
    auto c = cm.reject(req->handle, pd, {});
    ASSERT_TRUE(c.ok()) << c.error().message;
    for (int i = 0; i < 200 && !plat.peers_finished(); ++i) {
      (void)cm.poll_event();
      hal.wait_cycles(2'000);
    }
    ASSERT_TRUE(plat.peers_finished());
    auto recs = (*dev)->read_probes();
    ASSERT_TRUE(recs.ok()) << recs.error().message;
    for (const auto& x : *recs) {
      std::printf("  probe %-15s tag 0x%06x @%u\n", R::name(x.stage), x.tag, x.cycle);
    }
    auto st = (*dev)->probe_status();
    ASSERT_TRUE(st.ok());
    EXPECT_FALSE(st->overflow);
    EXPECT_EQ(st->lost, 0u);

    const auto& rx = plat.rx_frames();
    const auto& tx = plat.tx_frames();
    for (uint16_t port : {kHostPort, kAutoPort}) {
      SCOPED_TRACE(port);
      const auto* syn = frame_of(rx, [&](const golden::ParsedSegment& s) {
        return s.src_port == port && (s.tcp_flags & 0x12) == 0x02;
      });
      const auto* req_f = frame_of(rx, [&](const golden::ParsedSegment& s) {
        return s.src_port == port && golden::mpa_key_of(s.payload) == golden::MpaKey::kRequest;
      });
      const auto* synack = frame_of(tx, [&](const golden::ParsedSegment& s) {
        return s.dst_port == port && (s.tcp_flags & 0x12) == 0x12;
      });
      const auto* rej = frame_of(tx, [&](const golden::ParsedSegment& s) {
        return s.dst_port == port && golden::mpa_key_of(s.payload) == golden::MpaKey::kReply;
      });
      ASSERT_TRUE(syn && req_f && synack && rej);
      const auto p_syn = find(*recs, Stage::SYN_IN, port);
      const auto p_sa = find(*recs, Stage::SYNACK_FIRST, port);
      const auto p_req = find(*recs, Stage::MPA_REQ_LAST, port);
      const bool host = port == kHostPort;
      const auto p_first = find(*recs, host ? Stage::REJ_FIRST_HOST : Stage::REJ_FIRST_AUTO, port);
      const auto p_last = find(*recs, Stage::REJ_LAST, port | (host ? 0x10000u : 0u));
      const auto p_pd = find(*recs, Stage::PD_READY, port | (host ? 0x10000u : 0u));
      ASSERT_TRUE(p_syn && p_sa && p_req && p_first && p_last && p_pd);
      EXPECT_EQ(p_syn->cycle, lo32(syn->last_cycle));
      EXPECT_EQ(p_sa->cycle, lo32(synack->first_cycle));
      EXPECT_EQ(p_req->cycle, lo32(req_f->last_cycle));
      EXPECT_EQ(p_first->cycle, lo32(rej->first_cycle));
      EXPECT_EQ(p_last->cycle, lo32(rej->last_cycle));
      EXPECT_LT(p_req->cycle, p_pd->cycle);
      EXPECT_LT(p_pd->cycle, p_first->cycle);
      EXPECT_EQ(of(*recs, Stage::SYN_IN).size(), 2u);
      EXPECT_EQ(of(*recs, Stage::SYNACK_FIRST).size(), 2u);
      EXPECT_EQ(of(*recs, Stage::MPA_REQ_LAST).size(), 2u);
      if (host) {
        const uint32_t tag = (uint32_t{0x01} << 16) | host_cm_id;
        const auto p_evt = find(*recs, Stage::EVENT_WRITTEN, tag);
        ASSERT_TRUE(p_evt);
        EXPECT_EQ(p_evt->cycle, lo32(evt_seen));
        EXPECT_LT(p_req->cycle, p_evt->cycle);
        EXPECT_LT(p_evt->cycle, p_first->cycle);
      } else {
        std::printf("auto-reject: last MPA-request beat -> first reject beat: %u cycles\n",
                    p_first->cycle - p_req->cycle);
      }
    }
  });
}

// More events than the 64-record FIFO holds: nothing stalls, OVERFLOW is sticky, LOST counts
// every record that did not fit, CLEAR starts over.
TEST_P(Probes, OverflowIsCountedAndNeverStalls) {
  sim::PlatformConfig pc;
  pc.data_width = GetParam();
  pc.mem_latency_cycles = 20;
  sim::Platform plat(pc);
  plat.run([&](bouncer::hal::Device& hal) {
    bouncer::DeviceConfig dc;
    dc.sq_entries = 64;
    dc.cq_entries = 64;
    auto dev = bouncer::Device::open(hal, dc);
    ASSERT_TRUE(dev.ok()) << dev.error().message;
    bouncer::ContextDiag cm(**dev);
    ASSERT_TRUE((*dev)->wait_cm_ready(400us).ok());
    constexpr uint32_t kN = 20;  // 6 records each: 120 > 64
    for (uint32_t i = 0; i < kN; ++i) ASSERT_TRUE(cm.write_context(i, make_ctx(i)).ok());
    ASSERT_TRUE((*dev)->probes_start().ok());
    const size_t tx0 = plat.tx_frames().size();
    std::vector<std::byte> pd(8, std::byte{0x5a});
    for (uint32_t i = 0; i < kN; ++i) {
      auto c = cm.reject(i, pd, {});
      ASSERT_TRUE(c.ok()) << c.error().message;
      ASSERT_TRUE(c->ok()) << c->status();
    }
    EXPECT_EQ(plat.tx_frames().size(), tx0 + kN);
    auto st = (*dev)->probe_status();
    ASSERT_TRUE(st.ok());
    EXPECT_TRUE(st->overflow);
    EXPECT_EQ(st->count, 64u);
    EXPECT_EQ(st->lost, kN * 6 - 64);
    auto recs = (*dev)->read_probes();
    ASSERT_TRUE(recs.ok());
    ASSERT_EQ(recs->size(), 64u);
    // the FIFO kept the oldest records: the first reject's doorbell comes first
    EXPECT_EQ(recs->front().stage, Stage::DOORBELL);
    // still sticky after the FIFO drained; an empty pop reads stage NONE
    st = (*dev)->probe_status();
    EXPECT_TRUE(st->overflow);
    EXPECT_EQ(st->count, 0u);
    EXPECT_EQ(hal.read32(R::reg::PROBE_DATA_LO), 0u);
    EXPECT_EQ(hal.read32(R::reg::PROBE_DATA_HI), 0u);
    ASSERT_TRUE((*dev)->probes_start().ok());  // CLEAR + ENABLE
    st = (*dev)->probe_status();
    EXPECT_FALSE(st->overflow);
    EXPECT_EQ(st->lost, 0u);
    EXPECT_EQ(st->count, 0u);
    // the FIFO pointers wrap (more than 128 records through it), COUNT stays exact
    size_t total = 0;
    for (uint32_t i = 0; i < 2 * kN; ++i) {
      ASSERT_TRUE(cm.write_context(i % kN, make_ctx(i % kN)).ok());
      auto c = cm.reject(i % kN, pd, {});
      ASSERT_TRUE(c.ok() && c->ok());
      st = (*dev)->probe_status();
      EXPECT_EQ(st->count, 6u) << "reject " << i;
      auto r = (*dev)->read_probes();
      ASSERT_TRUE(r.ok()) << r.error().message;
      ASSERT_EQ(r->size(), 6u);
      EXPECT_EQ((*r)[0].stage, Stage::DOORBELL);
      EXPECT_EQ((*r)[5].stage, Stage::CQE_WRITTEN);
      total += r->size();
    }
    EXPECT_GT(total, 128u);
    EXPECT_FALSE((*dev)->probe_status()->overflow);
    ASSERT_TRUE((*dev)->probes_stop().ok());
    (void)cm.reject(kN, pd, {});  // no context: completes with an error; probes are off
    EXPECT_EQ((*dev)->probe_status()->count, 0u);
  });
}

INSTANTIATE_TEST_SUITE_P(Width, Probes, ::testing::Values(64u, 512u),
                         [](const auto& i) { return "w" + std::to_string(i.param); });

}  // namespace

// libsystemc provides main() and calls sc_main().
extern "C" int sc_main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
