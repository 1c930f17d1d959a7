// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// Whole-offload tests: the real driver (hostsw/) against the verilated bouncer_core in the
// SystemC/TLM co-simulation (sim/). Every frame on the TX port is compared byte for byte with
// the independent golden model (tb/golden/), and every WQE must produce exactly one CQE.
// Each TEST runs in its own process (SystemC elaborates once per process); the data width is
// the test parameter.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "bouncer/cm.hpp"
#include "bouncer/cm_diag.hpp"
#include "bouncer/device.hpp"
#include "bouncer/device_faults.hpp"
#include "bouncer/regs.hpp"
#include "bouncer/sim/platform.hpp"
#include "golden/frame_parser.hpp"
#include "golden/gtest_tools.hpp"
#include "golden/pcap_io.hpp"
#include "golden/reject_frame.hpp"
#include "golden/tshark.hpp"
#include "reject_params.hpp"

using namespace std::chrono_literals;

namespace {

using bouncer::CmContext;
using bouncer::Completion;
using bouncer::ContextDiag;
using bouncer::Device;
using bouncer::RejectOptions;
namespace R = bouncer::regs;
namespace sim = bouncer::sim;

// ------------------------------------------------------------------ helpers

// A plausible passive-side connection: we are 10.0.0.1:port, the peer 10.0.1.x.
CmContext make_ctx(std::mt19937_64& rng, uint32_t cm_id, uint8_t rev, bool enhanced, bool vlan) {
  CmContext c;
  c.rem_mac = {
      0x02, 0x00, 0x5e, 0x10, static_cast<uint8_t>(cm_id >> 8), static_cast<uint8_t>(cm_id)};
  c.loc_mac = {0x02, 0xbb, 0xcc, 0xdd, 0xee, 0x01};
  c.vlan_en = vlan;
  c.vlan_tci = static_cast<uint16_t>((3u << 13) | (100 + (cm_id % 3000)));
  c.loc_ip = 0x0A000001;
  c.rem_ip = 0x0A000100 | (cm_id & 0xFF);
  c.loc_port = 4791 + (cm_id % 3);
  c.rem_port = static_cast<uint16_t>(40000 + cm_id);
  c.rcv_wnd = static_cast<uint16_t>(0x1000 + (rng() & 0xFFF));
  c.ttl = 64;
  c.tos = static_cast<uint8_t>(rng() & 0xFC);
  c.snd_nxt = static_cast<uint32_t>(rng());
  c.rcv_nxt = static_cast<uint32_t>(rng());
  c.req_rev = rev;
  c.req_flags = static_cast<uint8_t>(0x40 | (enhanced ? 0x10 : 0x00) | ((rng() & 1) ? 0x80 : 0));
  c.ip_id = static_cast<uint16_t>(rng());
  c.req_ird_ord = (rng() & 1) ? 0x80104010u : 0x00080008u;
  return c;
}

golden::RejectParams to_params(const CmContext& c, std::span<const std::byte> pd,
                               const RejectOptions& o) {
  golden::RejectParams p = bouncer::testing::reject_params(c, pd);
  p.ird_ord_override = o.ird_ord;
  p.fin = o.fin_policy == bouncer::regs::FinPolicy::IRDMA;
  return p;
}

std::vector<std::byte> make_pd(std::mt19937_64& rng, size_t n) {
  std::vector<std::byte> pd(n);
  for (auto& b : pd) b = static_cast<std::byte>(rng());
  return pd;
}

// One expected frame and the completion it must come with.
struct Expect {
  golden::RejectParams params;
  std::vector<uint8_t> frame;
  uint32_t cm_id;
};

// Compares every TX frame of the platform with the expectations, in order.
void check_frames(const sim::Platform& plat, const std::vector<Expect>& exp) {
  const auto& got = plat.tx_frames();
  ASSERT_EQ(got.size(), exp.size()) << "frames on the wire vs. successful rejects";
  for (size_t i = 0; i < exp.size(); ++i) {
    ASSERT_EQ(got[i].bytes.size(), exp[i].frame.size())
        << "frame " << i << " cm_id " << exp[i].cm_id;
    for (size_t b = 0; b < exp[i].frame.size(); ++b) {
      ASSERT_EQ(got[i].bytes[b], exp[i].frame[b])
          << "frame " << i << " byte " << b << " cm_id " << exp[i].cm_id;
    }
    std::string why;
    auto parsed = golden::parse_mpa_reply(got[i].bytes, &why);
    ASSERT_TRUE(parsed) << why;
    EXPECT_TRUE(golden::reject_matches_params(*parsed, exp[i].params, &why)) << why;
  }
}

// Rejects cm_id through the CM API and records the expected frame. Asserts success.
void reject_ok(ContextDiag& cm, const CmContext& ctx, uint32_t cm_id, std::span<const std::byte> pd,
               const RejectOptions& o, std::vector<Expect>& exp, Completion* out = nullptr) {
  auto p = to_params(ctx, pd, o);
  auto want = golden::build_mpa_reject_frame(p);
  ASSERT_FALSE(want.empty());
  auto c = cm.reject(cm_id, pd, o);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_TRUE(c->ok()) << c->status();
  EXPECT_EQ(c->cm_id, cm_id);
  EXPECT_EQ(c->frame_len, want.size());
  EXPECT_EQ(c->tcp_seq, ctx.snd_nxt);
  EXPECT_EQ(c->wr_id, o.wr_id);
  EXPECT_GT(c->latency_cycles, 0u);
  exp.push_back({p, want, cm_id});
  if (out) *out = *c;
}

sim::PlatformConfig config(unsigned width) {
  sim::PlatformConfig cfg;
  cfg.data_width = width;
  return cfg;
}

uint32_t reg(bouncer::hal::Device& hal, uint32_t off) { return hal.read32(off); }

class SystemReject : public ::testing::TestWithParam<unsigned> {};

// A random reply IRD/ORD word that an irdma initiator accepts for this request (the driver
// refuses any other: check_reply_ird_ord): P2P, one or both RTR bits, and either a 0x3FFF
// field or an ORD within the request's IRD (no IRD 0 with the Read RTR bit).
uint32_t acceptable_ird_ord(std::mt19937_64& rng, uint32_t req) {
  const uint32_t rtr = 0x4000u << (rng() % 2) | ((rng() % 4 == 0) ? 0xC000u : 0u);
  const uint32_t req_ird = (req >> 16) & 0x3FFF;
  uint32_t ird = static_cast<uint32_t>(rng() % 0x4000), ord = 0;
  if (rng() % 3 == 0) {
    ord = 0x3FFF;
  } else {
    ord = static_cast<uint32_t>(rng() % (req_ird + 1));
    if (ird == 0 && (rtr & 0x4000) != 0) ird = 1;
  }
  const uint32_t w = 0x8000'0000u | ird << 16 | rtr | ord;
  EXPECT_TRUE(bouncer::check_reply_ird_ord(w, req)) << fmt::format("0x{:08X}", w);
  return w;
}

// ------------------------------------------------------------------ tests

// MPA rev 1 and 2 (enhanced or not), VLAN on and off, every PD length the issue names.
TEST_P(SystemReject, RevVlanPdLengthMatrix) {
  sim::Platform plat(config(GetParam()));
  std::vector<Expect> exp;
  plat.run([&](bouncer::hal::Device& hal) {
    auto dev = Device::open(hal);
    ASSERT_TRUE(dev.ok()) << dev.error().message;
    EXPECT_EQ((*dev)->caps().data_bytes, GetParam() / 8);
    ContextDiag cm(**dev);
    std::mt19937_64 rng(GetParam());
    const size_t lens[] = {0, 1, 3, 4, 5, 63, 64, 65, 255, 512};
    uint32_t id = 0;
    for (int shape = 0; shape < 3; ++shape) {  // rev 1, rev 2 enhanced, rev 2 plain
      for (bool vlan : {false, true}) {
        for (size_t len : lens) {
          const uint8_t rev = shape == 0 ? 1 : 2;
          const bool enh = shape == 1;
          auto ctx = make_ctx(rng, id, rev, enh, vlan);
          ASSERT_TRUE(cm.write_context(id, ctx).ok());
          auto pd = make_pd(rng, len);
          RejectOptions o;
          o.unsafe_wire_pd = true;
          o.push = (id % 2) == 1;
          o.wr_id = 0x1000 + id;
          if (enh && len > 508) {
            // PD_Length would be 516: the driver refuses before posting anything
            auto c = cm.reject(id, pd, o);
            ASSERT_FALSE(c.ok());
            EXPECT_EQ(c.error().code, bouncer::Errc::kInvalidArgument);
          } else {
            reject_ok(cm, ctx, id, pd, o, exp);
            auto back = cm.read_context(id);
            ASSERT_TRUE(back.ok());
            EXPECT_TRUE(back->rejected);
            EXPECT_EQ(back->snd_nxt, ctx.snd_nxt + golden::reject_seq_advance(exp.back().params));
            EXPECT_EQ(back->ip_id, static_cast<uint16_t>(ctx.ip_id + 1));
          }
          ++id;
        }
      }
    }
    EXPECT_EQ(reg(hal, R::reg::STAT_TX_FRAMES), exp.size());
    EXPECT_EQ(reg(hal, R::reg::STAT_SQ_ERRORS), 0u);
  });
  check_frames(plat, exp);
}

// Push page vs. doorbell + descriptor fetch, inline vs. buffer PD; the hardware latency probe
// in the CQE must equal what the platform saw between the doorbell write and the first beat.
TEST_P(SystemReject, PushDoorbellInlineBuffer) {
  sim::Platform plat(config(GetParam()));
  std::vector<Expect> exp;
  struct Probe {
    bool push, inl;
    size_t len;
    Completion c;
    uint64_t db_cycle;
  };
  std::vector<Probe> probes;
  plat.run([&](bouncer::hal::Device& hal) {
    auto dev = Device::open(hal);
    ASSERT_TRUE(dev.ok()) << dev.error().message;
    ContextDiag cm(**dev);
    std::mt19937_64 rng(7);
    uint32_t id = 0;
    for (bool push : {false, true}) {
      for (bool inl : {true, false}) {
        for (size_t len : {0, 1, 16, 32, 33, 200}) {
          if (inl && len > 32) continue;
          auto ctx = make_ctx(rng, id, 2, true, false);
          ASSERT_TRUE(cm.write_context(id, ctx).ok());
          auto pd = make_pd(rng, len);
          RejectOptions o;
          o.push = push;
          o.allow_inline = inl;
          Completion c;
          reject_ok(cm, ctx, id, pd, o, exp, &c);
          EXPECT_FALSE(c.pshdrop);
          const auto& w = plat.mmio_writes();
          const uint32_t db = push ? R::reg::SQ_PUSH_DB : R::reg::SQ_DB;
          uint64_t db_cycle = 0;
          for (auto it = w.rbegin(); it != w.rend(); ++it) {
            if (it->offset == db) {
              db_cycle = it->cycle;
              break;
            }
          }
          probes.push_back({push, inl, len, c, db_cycle});
          ++id;
        }
      }
    }
    EXPECT_EQ(reg(hal, R::reg::STAT_PUSH_USED), 10u);
    EXPECT_EQ(reg(hal, R::reg::STAT_PUSH_DROPPED), 0u);
  });
  check_frames(plat, exp);
  ASSERT_EQ(probes.size(), plat.tx_frames().size());
  for (size_t i = 0; i < probes.size(); ++i) {
    const auto& p = probes[i];
    const uint64_t seen = plat.tx_frames()[i].first_cycle - p.db_cycle;
    EXPECT_EQ(p.c.latency_cycles, seen) << "CQE latency probe vs. platform, frame " << i;
    std::printf("[ latency  ] %-8s %-6s pd %3zu: doorbell-to-first-byte %u cycles\n",
                p.push ? "push" : "doorbell", p.inl ? "inline" : "buffer", p.len,
                p.c.latency_cycles);
  }
}

// A small SQ (8 slots) and CQ driven through five laps with several WQEs in flight: polarity
// flips on both rings, wqe_idx wraps, every WQE completes once and in order.
TEST_P(SystemReject, RingWrapSeveralLaps) {
  sim::Platform plat(config(GetParam()));
  std::vector<Expect> exp;
  plat.run([&](bouncer::hal::Device& hal) {
    bouncer::DeviceConfig dc;
    dc.sq_entries = 8;
    dc.cq_entries = 8;
    dc.cqp_entries = 4;
    dc.ccq_entries = 4;
    auto dev = Device::open(hal, dc);
    ASSERT_TRUE(dev.ok()) << dev.error().message;
    ContextDiag cm(**dev);
    std::mt19937_64 rng(11);
    std::map<uint16_t, uint32_t> idx_to_id;
    uint32_t next_expected_idx = 0;
    const uint32_t total = 40;
    for (uint32_t id = 0; id < total; ++id) {
      auto ctx = make_ctx(rng, id, (id % 2) ? 2 : 1, (id % 2) != 0, (id % 3) == 0);
      ASSERT_TRUE(cm.write_context(id, ctx).ok());
      auto pd = make_pd(rng, rng() % 100);
      RejectOptions o;
      o.push = (id % 4) == 0;
      o.wr_id = id;
      auto p = to_params(ctx, pd, o);
      exp.push_back({p, golden::build_mpa_reject_frame(p), id});
      auto idx = cm.post_reject(id, pd, o);
      ASSERT_TRUE(idx.ok()) << idx.error().message;
      idx_to_id[*idx] = id;
      // keep up to 5 in flight
      while ((*dev)->sq_outstanding() >= 5) {
        auto c = (*dev)->wait_completion(4ms);
        ASSERT_TRUE(c.ok()) << c.error().message;
        EXPECT_TRUE(c->ok()) << c->status();
        EXPECT_EQ(c->wqe_idx, next_expected_idx % 8);
        EXPECT_EQ(c->wr_id, idx_to_id[c->wqe_idx]);
        ++next_expected_idx;
      }
    }
    while ((*dev)->sq_outstanding() > 0) {
      auto c = (*dev)->wait_completion(4ms);
      ASSERT_TRUE(c.ok()) << c.error().message;
      EXPECT_TRUE(c->ok()) << c->status();
      EXPECT_EQ(c->wqe_idx, next_expected_idx % 8);
      ++next_expected_idx;
    }
    EXPECT_EQ(next_expected_idx, total);
    // the host sees a CQE once its data is in memory; the engine counts it at the write
    // response, a memory latency later
    hal.wait_cycles(1000);
    EXPECT_EQ(reg(hal, R::reg::SQ_CI), total % 8);
    EXPECT_EQ(reg(hal, R::reg::CQ_TAIL), total % 8);
    EXPECT_EQ(reg(hal, R::reg::STAT_SQ_WQES), total);
  });
  check_frames(plat, exp);
}

// Random TX backpressure and random host-memory latency: same bytes, nothing lost.
TEST_P(SystemReject, RandomBackpressureAndDmaLatency) {
  auto cfg = config(GetParam());
  cfg.tx_ready_prob = 0.35;
  cfg.mem_latency_cycles = 50;
  cfg.mem_latency_jitter = 400;
  cfg.seed = 99;
  sim::Platform plat(cfg);
  std::vector<Expect> exp;
  plat.run([&](bouncer::hal::Device& hal) {
    auto dev = Device::open(hal);
    ASSERT_TRUE(dev.ok()) << dev.error().message;
    ContextDiag cm(**dev);
    std::mt19937_64 rng(1234);
    for (uint32_t id = 0; id < 30; ++id) {
      auto ctx = make_ctx(rng, id, (rng() & 1) ? 2 : 1, rng() & 1, rng() & 1);
      ASSERT_TRUE(cm.write_context(id, ctx).ok());
      auto pd = make_pd(rng, rng() % 256);
      RejectOptions o;
      o.push = rng() & 1;
      if ((rng() % 4) == 0) o.fin_policy = bouncer::regs::FinPolicy::IRDMA;
      o.unsafe_wire_pd = true;  // up to 255 bytes + the IRD/ORD word
      if (rng() % 4 == 0) o.ird_ord = acceptable_ird_ord(rng, ctx.req_ird_ord);
      reject_ok(cm, ctx, id, pd, o, exp);
    }
  });
  check_frames(plat, exp);
  EXPECT_GT(plat.stats().tx_stall_cycles, 0u);
}

// Bad input: each bad WQE gets an error CQE with the right codes, sends nothing, and the
// engine carries on with the next (good) WQE.
TEST_P(SystemReject, BadInputErrorCqeNoFrame) {
  sim::Platform plat(config(GetParam()));
  std::vector<Expect> exp;
  plat.run([&](bouncer::hal::Device& hal) {
    auto dev = Device::open(hal);
    ASSERT_TRUE(dev.ok()) << dev.error().message;
    Device& d = **dev;
    ContextDiag cm(d);
    std::mt19937_64 rng(5);
    const uint32_t depth = d.caps().ctx_depth;
    uint32_t good_id = 100;
    auto good = [&]() {
      auto ctx = make_ctx(rng, good_id, 2, true, false);
      ASSERT_TRUE(cm.write_context(good_id, ctx).ok());
      auto pd = make_pd(rng, 20);
      reject_ok(cm, ctx, good_id, pd, {}, exp);
      ++good_id;
    };
    auto expect_error = [&](const bouncer::testing::FaultyRejectWqe& w, R::CqMajor maj,
                            R::CqMinor min) {
      auto idx = bouncer::testing::DeviceFaults::post_reject(d, w);
      ASSERT_TRUE(idx.ok()) << idx.error().message;
      auto c = d.wait_completion_for(*idx, 4ms);
      ASSERT_TRUE(c.ok()) << c.error().message;
      EXPECT_TRUE(c->error);
      EXPECT_EQ(c->major, static_cast<uint16_t>(maj)) << c->status();
      EXPECT_EQ(c->minor, static_cast<uint16_t>(min)) << c->status();
      EXPECT_EQ(c->frame_len, 0);
      EXPECT_EQ(c->latency_cycles, 0u);
    };
    // a valid context that the bad WQEs point at
    auto ctx = make_ctx(rng, 1, 1, false, false);
    ASSERT_TRUE(cm.write_context(1, ctx).ok());
    auto pd = make_pd(rng, 40);

    good();
    bouncer::testing::FaultyRejectWqe w;
    w.cm_id = 1;
    w.pd = pd;
    w.opcode = 0x3F;  // unknown opcode
    expect_error(w, R::CqMajor::WQE, R::CqMinor::BAD_OPCODE);
    good();
    w = {};
    w.cm_id = 1;
    w.pd = pd;
    w.pd_len = 513;  // over MPA_PD_MAX
    expect_error(w, R::CqMajor::WQE, R::CqMinor::PD_TOO_LONG);
    w.pd_len = 600;
    expect_error(w, R::CqMajor::WQE, R::CqMinor::PD_TOO_LONG);
    good();
    w = {};
    w.cm_id = 1;
    w.pd = pd;  // 40 bytes claimed inline
    w.force_inline = true;
    expect_error(w, R::CqMajor::WQE, R::CqMinor::PD_TOO_LONG);
    w = {};
    w.cm_id = depth;  // cm_id out of range
    w.pd = pd;
    expect_error(w, R::CqMajor::CTX, R::CqMinor::CM_ID_RANGE);
    w.cm_id = 0xFFFFFF;
    expect_error(w, R::CqMajor::CTX, R::CqMinor::CM_ID_RANGE);
    good();
    w = {};
    w.cm_id = 777;  // in range, never written
    w.pd = pd;
    expect_error(w, R::CqMajor::CTX, R::CqMinor::NO_CONTEXT);
    w = {};
    w.cm_id = 1;
    w.pd = pd;
    w.stale = true;  // valid bit of the wrong polarity
    expect_error(w, R::CqMajor::WQE, R::CqMinor::STALE_WQE);
    w.push = true;  // the same through the push page
    expect_error(w, R::CqMajor::WQE, R::CqMinor::STALE_WQE);
    good();
    w = {};
    w.cm_id = 1;
    w.pd = pd;
    w.pd_addr = d.pd_slot_addr(0) + 4;  // not 8-byte aligned
    expect_error(w, R::CqMajor::WQE, R::CqMinor::ADDR_MISALIGNED);
    // a zero-length buffer with a non-zero length: PD_LEN 16 at address 0, where the host
    // has nothing mapped. The engine cannot know the buffer's size; the read fails (DECERR).
    w = {};
    w.cm_id = 1;
    w.pd_addr = 0;
    w.pd_len = 16;
    expect_error(w, R::CqMajor::DMA, R::CqMinor::DMA_PD);
    good();
    // bad revision stored in the context
    auto bad_rev = make_ctx(rng, 2, 3, false, false);
    ASSERT_TRUE(d.cqp_write_context(2, bad_rev).ok());
    w = {};
    w.cm_id = 2;
    w.pd = pd;
    expect_error(w, R::CqMajor::CTX, R::CqMinor::BAD_REV);
    // enhanced rev 2 with 509 bytes: PD_Length 513 on the wire (the hardware's own check)
    auto enh = make_ctx(rng, 3, 2, true, false);
    ASSERT_TRUE(d.cqp_write_context(3, enh).ok());
    auto big = make_pd(rng, 509);
    w = {};
    w.cm_id = 3;
    w.pd = big;
    expect_error(w, R::CqMajor::WQE, R::CqMinor::PD_TOO_LONG);
    // a second reject of an already rejected connection
    good();
    w = {};
    w.cm_id = good_id - 1;
    w.pd = pd;
    expect_error(w, R::CqMajor::CTX, R::CqMinor::BAD_STATE);
    // an SQ NOP completes with success and sends nothing
    auto nop = d.post_nop(42);
    ASSERT_TRUE(nop.ok());
    auto nc = d.wait_completion_for(*nop, 400us);
    ASSERT_TRUE(nc.ok());
    EXPECT_TRUE(nc->ok());
    EXPECT_EQ(nc->frame_len, 0);
    good();
    EXPECT_EQ(reg(hal, R::reg::STAT_SQ_ERRORS), 14u);
    EXPECT_EQ(reg(hal, R::reg::STAT_TX_FRAMES), exp.size());
    EXPECT_EQ(d.stats().unexpected_cqes, 0u);
  });
  check_frames(plat, exp);
}

// A DMA error on the PD read: error CQE, no frame, the next reject still goes out.
TEST_P(SystemReject, PdDmaErrorSendsNothing) {
  sim::Platform plat(config(GetParam()));
  std::vector<Expect> exp;
  plat.run([&](bouncer::hal::Device& hal) {
    auto dev = Device::open(hal);
    ASSERT_TRUE(dev.ok()) << dev.error().message;
    Device& d = **dev;
    ContextDiag cm(d);
    std::mt19937_64 rng(3);
    auto ctx = make_ctx(rng, 9, 2, true, true);
    ASSERT_TRUE(cm.write_context(9, ctx).ok());
    auto pd = make_pd(rng, 100);
    const uint64_t slot0 = d.pd_slot_addr(d.sq().head());
    plat.inject_dma_error(slot0, slot0 + 8);
    RejectOptions o;
    o.allow_inline = false;
    auto c = cm.reject(9, pd, o);
    ASSERT_FALSE(c.ok());
    EXPECT_EQ(c.error().hw_major, static_cast<uint16_t>(R::CqMajor::DMA));
    EXPECT_EQ(c.error().hw_minor, static_cast<uint16_t>(R::CqMinor::DMA_PD));
    plat.clear_dma_errors();
    // the context was not touched: a rewrite and a retry go through
    ASSERT_TRUE(cm.write_context(9, ctx).ok());
    reject_ok(cm, ctx, 9, pd, o, exp);
  });
  check_frames(plat, exp);
}

// Push image overwritten before the engine reached its WQE: that WQE is fetched from the ring
// and completes with PSHDROP; the later push is used. Both frames are right.
TEST_P(SystemReject, PushDropFallsBackToRing) {
  sim::Platform plat(config(GetParam()));
  std::vector<Expect> exp;
  plat.run([&](bouncer::hal::Device& hal) {
    auto dev = Device::open(hal);
    ASSERT_TRUE(dev.ok()) << dev.error().message;
    ContextDiag cm(**dev);
    std::mt19937_64 rng(21);
    std::vector<CmContext> ctxs;
    for (uint32_t id = 0; id < 3; ++id) {
      ctxs.push_back(make_ctx(rng, id, 2, true, false));
      ASSERT_TRUE(cm.write_context(id, ctxs.back()).ok());
    }
    auto pd0 = make_pd(rng, 300);  // keeps the engine busy with a PD DMA
    auto pd1 = make_pd(rng, 8);
    auto pd2 = make_pd(rng, 12);
    RejectOptions slow;
    slow.unsafe_wire_pd = true;
    RejectOptions push;
    push.push = true;
    std::vector<uint16_t> idx;
    for (auto [id, pd, o] : {std::tuple{0u, &pd0, slow}, {1u, &pd1, push}, {2u, &pd2, push}}) {
      auto p = to_params(ctxs[id], *pd, o);
      exp.push_back({p, golden::build_mpa_reject_frame(p), id});
      auto i = cm.post_reject(id, *pd, o);
      ASSERT_TRUE(i.ok()) << i.error().message;
      idx.push_back(*i);
    }
    std::vector<Completion> cs;
    for (auto i : idx) {
      auto c = cm.wait(i, 4ms);
      ASSERT_TRUE(c.ok()) << c.error().message;
      EXPECT_TRUE(c->ok()) << c->status();
      cs.push_back(*c);
    }
    EXPECT_FALSE(cs[0].pshdrop);
    EXPECT_TRUE(cs[1].pshdrop) << "its push image was overwritten by the next push";
    EXPECT_FALSE(cs[2].pshdrop);
    EXPECT_EQ(reg(hal, R::reg::STAT_PUSH_USED), 1u);
    EXPECT_EQ(reg(hal, R::reg::STAT_PUSH_DROPPED), 1u);
  });
  check_frames(plat, exp);
}

// Control queue: context round trip through READ_CM_CONTEXT, NOP, and its error codes.
TEST_P(SystemReject, ControlQueueContexts) {
  sim::Platform plat(config(GetParam()));
  plat.run([&](bouncer::hal::Device& hal) {
    bouncer::DeviceConfig dc;
    dc.cqp_entries = 4;
    dc.ccq_entries = 4;
    auto dev = Device::open(hal, dc);
    ASSERT_TRUE(dev.ok()) << dev.error().message;
    Device& d = **dev;
    std::mt19937_64 rng(8);
    const uint32_t depth = d.caps().ctx_depth;
    for (uint32_t i = 0; i < 12; ++i) {  // three CQP laps
      const uint32_t id = static_cast<uint32_t>(rng() % depth);
      auto ctx = make_ctx(rng, id, (i % 2) ? 2 : 1, i % 3 == 0, i % 2 == 0);
      ASSERT_TRUE(d.cqp_write_context(id, ctx).ok());
      auto back = d.cqp_read_context(id);
      ASSERT_TRUE(back.ok()) << back.error().message;
      EXPECT_EQ(*back, ctx);
    }
    EXPECT_TRUE(d.cqp_nop().ok());
    auto never = d.cqp_read_context(depth - 1);  // reads back an invalid (zeroed) entry
    ASSERT_TRUE(never.ok());
    EXPECT_FALSE(never->valid);
    auto r = d.cqp_read_context(depth);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().hw_minor, static_cast<uint16_t>(R::CqMinor::CM_ID_RANGE));
    auto bad = bouncer::testing::DeviceFaults::cqp_raw(d, 0x3E, 0);
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().hw_minor, static_cast<uint16_t>(R::CqMinor::BAD_OPCODE));
    EXPECT_TRUE(d.cqp_nop().ok());
    hal.wait_cycles(1000);  // the last CCQE's write response
    EXPECT_EQ(reg(hal, R::reg::STAT_CQP_WQES), 12u * 2 + 5);
  });
  EXPECT_TRUE(plat.tx_frames().empty());
}

// The capture: read back with libpcap, every frame checked by the golden parser's own
// checksum code; with the peer's MPA requests added, tshark's iwarp_mpa dissector must see a
// reject (rej_flag 1) with the PD as posted and no checksum error.
TEST_P(SystemReject, PcapReadBackAndTshark) {
  const std::string path =
      ::testing::TempDir() + "bouncer_system_w" + std::to_string(GetParam()) + ".pcap";
  auto cfg = config(GetParam());
  cfg.pcap_path = path;
  std::vector<std::vector<uint8_t>> pds;
  {
    sim::Platform plat(cfg);
    plat.run([&](bouncer::hal::Device& hal) {
      auto dev = Device::open(hal);
      ASSERT_TRUE(dev.ok()) << dev.error().message;
      ContextDiag cm(**dev);
      std::mt19937_64 rng(77);
      for (uint32_t id = 0; id < 6; ++id) {
        auto ctx = make_ctx(rng, id, id < 3 ? 1 : 2, id >= 3, id % 2 == 1);
        ASSERT_TRUE(cm.write_context(id, ctx).ok());
        const std::string text = "bouncer says no #" + std::to_string(id);
        std::vector<std::byte> pd(text.size());
        std::memcpy(pd.data(), text.data(), text.size());
        // the peer's request, as it would have arrived before the reject
        auto p = to_params(ctx, pd, {});
        std::vector<uint8_t> req_pd = {'h', 'e', 'l', 'l', 'o'};
        plat.write_pcap_frame(golden::build_mpa_request_frame(p, req_pd), hal.now_cycles());
        std::vector<Expect> unused;
        reject_ok(cm, ctx, id, pd, {}, unused);
        pds.emplace_back(text.begin(), text.end());
      }
    });
  }
  std::string err;
  auto pkts = golden::read_pcap(path, &err);
  ASSERT_TRUE(pkts) << err;
  ASSERT_EQ(pkts->size(), 12u);
  size_t rejects = 0;
  for (const auto& pkt : *pkts) {
    std::string why;
    auto r = golden::parse_mpa_reply(pkt, &why);
    ASSERT_TRUE(r) << why;
    if (r->key_request_ok) continue;
    ASSERT_TRUE(r->key_reply_ok);
    EXPECT_EQ(r->mpa_flags & 0x20, 0x20);
    EXPECT_EQ(r->private_data, pds[rejects]);
    ++rejects;
  }
  EXPECT_EQ(rejects, 6u);
  GOLDEN_REQUIRE_TSHARK();
  auto rep = golden::tshark_check_mpa(path);
  ASSERT_TRUE(rep.ok) << rep.error;
  EXPECT_TRUE(rep.clean()) << rep.summary();
  ASSERT_EQ(rep.replies.size(), 6u) << rep.summary();
  for (size_t i = 0; i < rep.replies.size(); ++i) {
    EXPECT_TRUE(rep.replies[i].rej_flag);
    const auto& want = pds[i];
    const size_t extra = i >= 3 ? 4 : 0;  // tshark 4.0 counts the IRD/ORD word as PD
    EXPECT_EQ(rep.replies[i].pd_length, want.size() + extra);
    ASSERT_EQ(rep.replies[i].private_data.size(), want.size() + extra);
    EXPECT_TRUE(std::equal(want.begin(), want.end(), rep.replies[i].private_data.begin() + extra));
  }
}

INSTANTIATE_TEST_SUITE_P(Width, SystemReject, ::testing::Values(64u, 512u),
                         [](const auto& info) { return "w" + std::to_string(info.param); });

}  // namespace

// libsystemc provides main() and calls sc_main().
extern "C" int sc_main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
