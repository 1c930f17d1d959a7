// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// Unit test of rtl/host/bouncer_axil_regs on its own, through AXI4-Lite reads and writes:
// the passive-CM registers (reset values as stated in docs/register-map.md, read/write masks,
// byte strobes, the write-only ISN key, the AEQ_SIZE pulse), the 24 CM statistics counters,
// CM_CONNS and STATUS from the inputs, and ID/VERSION; the per-SQ register blocks, push pages
// and the SQ_DB / SQ_PUSH_DB decode (SQ number in bits 23:16, a bad SQ ignored and counted in
// STAT_SQ_DB_BAD), with NUM_SQ = 4 and NUM_SQ = 1. Offsets come from the generated
// bouncer/regs.hpp; expected values are written here from the register descriptions.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <memory>
#include <random>
#include <type_traits>
#include <vector>

#include "bouncer/regs.hpp"

// Verilator 5.006's headers trip -Wunused-parameter; they are not ours.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "Vaxil_regs.h"
#include "Vaxil_regs_sq1.h"
#include "verilated.h"
#pragma GCC diagnostic pop

namespace {

namespace reg = bouncer::regs::reg;
namespace field = bouncer::regs::field;

constexpr unsigned kStatCm = (reg::STAT_ACK_TX - reg::STAT_RX_FRAMES) / 4 + 1;
static_assert(kStatCm == 24);

// Bits [lsb, lsb + w) (w <= 64) of a verilated port, narrow or wide.
template <class T>
uint64_t bits(const T& v, unsigned lsb, unsigned w) {
  uint64_t r = 0;
  for (unsigned i = 0; i < w; ++i) {
    const unsigned b = lsb + i;
    uint64_t bit;
    if constexpr (std::is_integral_v<T>) {
      bit = (static_cast<uint64_t>(v) >> b) & 1;
    } else {
      bit = (v[b / 32] >> (b % 32)) & 1;
    }
    r |= bit << i;
  }
  return r;
}
template <class T>
void set_bits(T& v, unsigned lsb, unsigned w, uint64_t x) {
  for (unsigned i = 0; i < w; ++i) {
    const unsigned b = lsb + i;
    const uint64_t bit = (x >> i) & 1;
    if constexpr (std::is_integral_v<T>) {
      v = static_cast<T>((v & ~(T{1} << b)) | (static_cast<T>(bit) << b));
    } else {
      v[b / 32] = (v[b / 32] & ~(1u << (b % 32))) | (static_cast<uint32_t>(bit) << (b % 32));
    }
  }
}

// One registered doorbell pulse as the engine sees it.
struct Db {
  unsigned sq;
  bool push;
  uint32_t pi;
  bool operator==(const Db&) const = default;
};

template <class M>
class RegsT {
 public:
  RegsT() {
    ctx_.randReset(0);
    m_ = std::make_unique<M>(&ctx_, "regs");
    m_->s_axil_awvalid = 0;
    m_->s_axil_wvalid = 0;
    m_->s_axil_arvalid = 0;
    m_->s_axil_bready = 1;
    m_->s_axil_rready = 1;
    m_->stat_cm = 0;
    m_->rst = 1;
    for (int i = 0; i < 3; ++i) tick();
    m_->rst = 0;
    tick();
    aeq_pulses_ = 0;
  }

  void settle() {
    m_->clk = 0;
    m_->eval();
  }
  void tick() {
    settle();
    aeq_pulses_ += m_->aeq_reset;
    for (unsigned n = 0; n < 4; ++n) sq_reset_pulses_[n] += (m_->sq_reset >> n) & 1;
    if (m_->sq_db) dbs_.push_back({m_->sq_db_sq, m_->sq_db_push != 0, m_->sq_db_pi});
    m_->clk = 1;
    m_->eval();
  }

  void write(uint32_t addr, uint32_t data, uint8_t strb = 0xF) {
    m_->s_axil_awaddr = addr;
    m_->s_axil_awvalid = 1;
    m_->s_axil_wdata = data;
    m_->s_axil_wstrb = strb;
    m_->s_axil_wvalid = 1;
    for (int n = 0;; ++n) {
      settle();
      const bool fire = m_->s_axil_awready && m_->s_axil_wready;
      tick();
      if (fire) break;
      ASSERT_LT(n, 100) << "write not accepted";
    }
    m_->s_axil_awvalid = 0;
    m_->s_axil_wvalid = 0;
    settle();
    EXPECT_TRUE(m_->s_axil_bvalid);
    EXPECT_EQ(m_->s_axil_bresp, 0);
    tick();  // bready = 1
  }

  uint32_t read(uint32_t addr) {
    m_->s_axil_araddr = addr;
    m_->s_axil_arvalid = 1;
    for (int n = 0;; ++n) {
      settle();
      const bool fire = m_->s_axil_arready;
      tick();
      if (fire) break;
      if (n > 100) {
        ADD_FAILURE() << "read not accepted";
        return 0;
      }
    }
    m_->s_axil_arvalid = 0;
    settle();
    EXPECT_TRUE(m_->s_axil_rvalid);
    EXPECT_EQ(m_->s_axil_rresp, 0);
    const uint32_t v = m_->s_axil_rdata;
    tick();
    return v;
  }

  M& dut() { return *m_; }
  unsigned aeq_pulses_ = 0;
  std::array<unsigned, 4> sq_reset_pulses_{};
  std::vector<Db> dbs_;

 private:
  VerilatedContext ctx_;
  std::unique_ptr<M> m_;
};
using Regs = RegsT<Vaxil_regs>;
using Regs1 = RegsT<Vaxil_regs_sq1>;

uint64_t isn_word(const Vaxil_regs& m, unsigned i) { return m.isn_key[i]; }

// The plain 32-bit (or masked) read/write registers: offset, reset value, writable bits.
struct RwReg {
  uint32_t off;
  uint32_t reset;
  uint32_t mask;
  const char* name;
};
const std::vector<RwReg>& rw_regs() {
  static const std::vector<RwReg> v = {
      {reg::AEQ_BASE_LO, 0, 0xFFFFFFFF, "AEQ_BASE_LO"},
      {reg::AEQ_BASE_HI, 0, 0xFFFFFFFF, "AEQ_BASE_HI"},
      {reg::AEQ_HEAD, 0, 0x7FFF, "AEQ_HEAD"},
      {reg::PD_BASE_LO, 0, 0xFFFFFFFF, "PD_BASE_LO"},
      {reg::PD_BASE_HI, 0, 0xFFFFFFFF, "PD_BASE_HI"},
      {reg::RTO_INIT, 976563, 0xFFFFFFFF, "RTO_INIT"},
      {reg::RTO_MAX, 11718750, 0xFFFFFFFF, "RTO_MAX"},
      {reg::RTX_MAX, 8, 0xF, "RTX_MAX"},
      {reg::MPA_TIMEOUT, 63476563, 0xFFFFFFFF, "MPA_TIMEOUT"},
      {reg::MPA_REASM_TIMEOUT, 1953125, 0xFFFFFFFF, "MPA_REASM_TIMEOUT"},
      {reg::FIN_TIMEOUT, 58593750, 0xFFFFFFFF, "FIN_TIMEOUT"},
      {reg::TIME_WAIT, 97656, 0xFFFFFFFF, "TIME_WAIT"},
      {reg::TCP_CFG, field::TCP_CFG::MSS.put(1460) | field::TCP_CFG::WSCALE.put(0),
       field::TCP_CFG::MSS.mask() | field::TCP_CFG::WSCALE.mask(), "TCP_CFG"},
      {reg::TCP_WND, 532, 0xFFFF, "TCP_WND"},
      {reg::CM_ROUTE, field::CM_ROUTE::PROMISC.put(1), field::CM_ROUTE::PROMISC.mask(), "CM_ROUTE"},
      {reg::PORT_MAC_LO, 0, 0xFFFFFFFF, "PORT_MAC_LO"},
      {reg::PORT_MAC_HI, 0, 0xFFFF, "PORT_MAC_HI"},
      {reg::PORT_IP, 0, 0xFFFFFFFF, "PORT_IP"},
  };
  return v;
}

// What the output ports must show, from the register values a test believes in.
void expect_ports(Regs& r, const std::array<uint32_t, 0x400 / 4>& v) {
  auto at = [&](uint32_t off) { return v[off / 4]; };
  Vaxil_regs& m = r.dut();
  r.settle();
  EXPECT_EQ(m.aeq_base, uint64_t{at(reg::AEQ_BASE_HI)} << 32 | at(reg::AEQ_BASE_LO));
  EXPECT_EQ(m.aeq_head, at(reg::AEQ_HEAD));
  EXPECT_EQ(m.pd_base, uint64_t{at(reg::PD_BASE_HI)} << 32 | at(reg::PD_BASE_LO));
  EXPECT_EQ(m.rto_init, at(reg::RTO_INIT));
  EXPECT_EQ(m.rto_max, at(reg::RTO_MAX));
  EXPECT_EQ(m.rtx_max, at(reg::RTX_MAX));
  EXPECT_EQ(m.mpa_timeout, at(reg::MPA_TIMEOUT));
  EXPECT_EQ(m.mpa_reasm_timeout, at(reg::MPA_REASM_TIMEOUT));
  EXPECT_EQ(m.fin_timeout, at(reg::FIN_TIMEOUT));
  EXPECT_EQ(m.time_wait, at(reg::TIME_WAIT));
  EXPECT_EQ(m.tcp_mss, field::TCP_CFG::MSS.get(at(reg::TCP_CFG)));
  EXPECT_EQ(m.tcp_wscale, field::TCP_CFG::WSCALE.get(at(reg::TCP_CFG)));
  EXPECT_EQ(m.tcp_wnd, at(reg::TCP_WND));
  EXPECT_EQ(m.cm_promisc, field::CM_ROUTE::PROMISC.get(at(reg::CM_ROUTE)));
  EXPECT_EQ(m.port_mac, uint64_t{at(reg::PORT_MAC_HI)} << 32 | at(reg::PORT_MAC_LO));
  EXPECT_EQ(m.port_ip, at(reg::PORT_IP));
}

TEST(AxilRegs, IdAndVersionUnchanged) {
  Regs r;
  EXPECT_EQ(r.read(reg::ID), bouncer::regs::kIdValue);
  const uint32_t v = r.read(reg::VERSION);
  EXPECT_EQ(field::VERSION::MAJOR.get(v), bouncer::regs::kVersionMajor);
  EXPECT_EQ(field::VERSION::MINOR.get(v), bouncer::regs::kVersionMinor);
  EXPECT_EQ(field::VERSION::PATCH.get(v), bouncer::regs::kVersionPatch);
  EXPECT_EQ(v, 0x000A00u);  // 0.10.0
  // an existing register still works
  r.write(reg::SCRATCH, 0xA5A55A5A);
  EXPECT_EQ(r.read(reg::SCRATCH), 0xA5A55A5Au);
}

TEST(AxilRegs, ResetValues) {
  Regs r;
  std::array<uint32_t, 0x400 / 4> v{};
  for (const RwReg& g : rw_regs()) {
    EXPECT_EQ(r.read(g.off), g.reset) << g.name;
    v[g.off / 4] = g.reset;
  }
  EXPECT_EQ(r.read(reg::AEQ_SIZE), 2u);  // RING_LOG2_MIN
  EXPECT_EQ(r.read(reg::TIMER_TICK), 256u);
  r.settle();
  EXPECT_EQ(r.dut().aeq_size_log2, 2u);
  EXPECT_EQ(r.dut().timer_tick, 256u);
  for (unsigned i = 0; i < 4; ++i) EXPECT_EQ(isn_word(r.dut(), i), 0u);
  for (unsigned i = 0; i < bouncer::regs::reg::ISN_KEY_COUNT; ++i)
    EXPECT_EQ(r.read(reg::ISN_KEY + 4 * i), 0u);
  for (unsigned i = 0; i < kStatCm; ++i) EXPECT_EQ(r.read(reg::STAT_RX_FRAMES + 4 * i), 0u);
  expect_ports(r, v);
  EXPECT_EQ(r.aeq_pulses_, 0u);
}

TEST(AxilRegs, ReadWriteMasksAndStrobes) {
  Regs r;
  std::mt19937 rng(7);
  std::array<uint32_t, 0x400 / 4> v{};
  for (const RwReg& g : rw_regs()) v[g.off / 4] = g.reset;
  for (const RwReg& g : rw_regs()) {
    SCOPED_TRACE(g.name);
    r.write(g.off, 0xFFFFFFFF);
    EXPECT_EQ(r.read(g.off), g.mask);
    r.write(g.off, 0);
    EXPECT_EQ(r.read(g.off), 0u);
    for (int k = 0; k < 4; ++k) {
      const uint32_t x = rng();
      r.write(g.off, x);
      EXPECT_EQ(r.read(g.off), x & g.mask);
      v[g.off / 4] = x & g.mask;
      expect_ports(r, v);
    }
    // a partial write changes only the strobed bytes
    const uint32_t before = v[g.off / 4];
    const uint32_t x = rng();
    const uint8_t strb = static_cast<uint8_t>(1 + rng() % 14);
    r.write(g.off, x, strb);
    uint32_t bytes = 0;
    for (int b = 0; b < 4; ++b)
      if (strb >> b & 1) bytes |= 0xFFu << (8 * b);
    const uint32_t want = ((x & bytes) | (before & ~bytes)) & g.mask;
    EXPECT_EQ(r.read(g.off), want) << "strb " << int(strb);
    v[g.off / 4] = want;
    expect_ports(r, v);
  }
  // TIMER_TICK: >= 1, a write of 0 is taken as 1
  r.write(reg::TIMER_TICK, 0);
  EXPECT_EQ(r.read(reg::TIMER_TICK), 1u);
  r.write(reg::TIMER_TICK, 0xDEADBEEF);
  EXPECT_EQ(r.read(reg::TIMER_TICK), 0xDEADBEEFu);
  r.settle();
  EXPECT_EQ(r.dut().timer_tick, 0xDEADBEEFu);
  // read-only registers ignore writes
  r.dut().cm_conns = 0x1ABCD;
  r.dut().aeq_tail = 0x1234;
  r.write(reg::CM_CONNS, 0);
  r.write(reg::AEQ_TAIL, 0);
  EXPECT_EQ(r.read(reg::CM_CONNS), 0x1ABCDu);
  EXPECT_EQ(r.read(reg::AEQ_TAIL), 0x1234u);
  for (unsigned i = 0; i < kStatCm; ++i) {
    r.write(reg::STAT_RX_FRAMES + 4 * i, 0xFFFFFFFF);
    EXPECT_EQ(r.read(reg::STAT_RX_FRAMES + 4 * i), 0u);
  }
}

TEST(AxilRegs, AeqSizeClampsResetsHeadAndPulses) {
  Regs r;
  r.write(reg::AEQ_HEAD, 77);
  EXPECT_EQ(r.read(reg::AEQ_HEAD), 77u);
  EXPECT_EQ(r.aeq_pulses_, 0u);
  for (uint32_t w : {0u, 1u, 2u, 3u, 9u, 15u, 16u, 31u, 0xFFFFFFFFu}) {
    const unsigned before = r.aeq_pulses_;
    r.write(reg::AEQ_HEAD, 5);
    r.write(reg::AEQ_SIZE, w);
    EXPECT_EQ(r.aeq_pulses_, before + 1) << "one aeq_reset pulse per AEQ_SIZE write";
    const uint32_t want = w < 2 ? 2 : (w > 15 ? 15 : w);
    EXPECT_EQ(r.read(reg::AEQ_SIZE), want) << w;
    EXPECT_EQ(r.read(reg::AEQ_HEAD), 0u) << "AEQ_SIZE write clears the head";
    r.settle();
    EXPECT_EQ(r.dut().aeq_size_log2, want);
    EXPECT_EQ(r.dut().aeq_head, 0u);
  }
  // no pulse from any other register
  const unsigned before = r.aeq_pulses_;
  r.write(reg::AEQ_BASE_LO, 1);
  r.write(reg::AEQ_HEAD, 3);
  r.write(reg::CQ_SIZE, 4);
  r.write(reg::SQ_SIZE, 4);
  EXPECT_EQ(r.aeq_pulses_, before);
}

uint32_t db_value(unsigned sq, uint32_t pi) { return (sq << 16) | pi; }

TEST(AxilRegs, CapsReportNumSq) {
  Regs r;
  EXPECT_EQ(field::CAPS::NUM_SQ.get(r.read(reg::CAPS)), 4u);
  Regs1 r1;
  EXPECT_EQ(field::CAPS::NUM_SQ.get(r1.read(reg::CAPS)), 1u);
  // the rest of CAPS does not depend on NUM_SQ
  EXPECT_EQ(r.read(reg::CAPS) & ~field::CAPS::NUM_SQ.mask(),
            r1.read(reg::CAPS) & ~field::CAPS::NUM_SQ.mask());
}

// SQ n's block (0x0500 + n * 0x20): base, size (clamped, one sq_reset pulse for that SQ
// only), CI from the engine, PI from the doorbell; the ports show SQ n's values at bits n*W.
TEST(AxilRegs, PerSqBlocks) {
  Regs r;
  r.settle();
  for (unsigned n = 0; n < 4; ++n) {
    EXPECT_EQ(r.read(reg::sq_size(n)), 2u) << n;
    EXPECT_EQ(r.read(reg::sq_base_lo(n)), 0u) << n;
    EXPECT_EQ(bits(r.dut().sq_size_log2, 4 * n, 4), 2u) << n;
  }
  for (unsigned n = 0; n < 4; ++n) {
    r.write(reg::sq_base_lo(n), 0x1000u * (n + 1) + 0x40);
    r.write(reg::sq_base_hi(n), 0xA0 + n);
    r.write(reg::sq_size(n), 3 + n);
  }
  for (unsigned n = 0; n < 4; ++n) {
    SCOPED_TRACE(n);
    EXPECT_EQ(r.sq_reset_pulses_[n], 1u) << "one sq_reset pulse per SQ_SIZE write, own SQ only";
    EXPECT_EQ(r.read(reg::sq_base_lo(n)), 0x1000u * (n + 1) + 0x40);
    EXPECT_EQ(r.read(reg::sq_base_hi(n)), 0xA0 + n);
    EXPECT_EQ(r.read(reg::sq_size(n)), 3 + n);
    r.settle();
    EXPECT_EQ(bits(r.dut().sq_base, 64 * n, 64),
              (uint64_t{0xA0 + n} << 32) | (0x1000u * (n + 1) + 0x40));
    EXPECT_EQ(bits(r.dut().sq_size_log2, 4 * n, 4), 3 + n);
  }
  // clamping per SQ
  r.write(reg::sq_size(2), 0);
  r.write(reg::sq_size(3), 99);
  EXPECT_EQ(r.read(reg::sq_size(2)), 2u);
  EXPECT_EQ(r.read(reg::sq_size(3)), 15u);
  EXPECT_EQ(r.read(reg::sq_size(1)), 4u);
  // CI comes from the engine, per SQ
  for (unsigned n = 0; n < 4; ++n) set_bits(r.dut().sq_ci, 15 * n, 15, 0x100 + 7 * n);
  for (unsigned n = 0; n < 4; ++n) EXPECT_EQ(r.read(reg::sq_ci(n)), 0x100u + 7 * n);
  // CI and PI are read only
  r.write(reg::sq_ci(1), 0);
  r.write(reg::sq_pi(1), 0x55);
  EXPECT_EQ(r.read(reg::sq_ci(1)), 0x107u);
  EXPECT_EQ(r.read(reg::sq_pi(1)), 0u);
  // unused words of a block read 0
  EXPECT_EQ(r.read(reg::sq_base_lo(1) + 0x14), 0u);
  EXPECT_EQ(r.read(reg::sq_base_lo(1) + 0x1C), 0u);
}

// SQ_DB / SQ_PUSH_DB: SQ in bits 23:16, PI in 14:0. A valid SQ gives one pulse naming it and
// updates only its PI (and, for a push, only its push state); SQ >= NUM_SQ changes nothing
// and counts in STAT_SQ_DB_BAD.
TEST(AxilRegs, DoorbellDecode) {
  Regs r;
  for (unsigned n = 0; n < 4; ++n) r.write(reg::sq_size(n), 15);  // PIs up to 0x7FFF in range
  std::array<uint32_t, 4> pi{};
  auto check_pis = [&] {
    r.settle();
    for (unsigned n = 0; n < 4; ++n) {
      EXPECT_EQ(r.read(reg::sq_pi(n)), pi[n]) << n;
      EXPECT_EQ(bits(r.dut().sq_pi, 15 * n, 15), pi[n]) << n;
    }
  };
  for (unsigned n : {2u, 0u, 3u, 1u}) {
    r.dbs_.clear();
    r.write(reg::SQ_DB, db_value(n, 5 + n));
    pi[n] = 5 + n;
    ASSERT_EQ(r.dbs_.size(), 1u);
    EXPECT_EQ(r.dbs_[0], (Db{n, false, 5 + n}));
    check_pis();
  }
  r.settle();
  EXPECT_EQ(r.dut().push_armed, 0u) << "SQ_DB does not arm a push page";
  // bits 31:24 and 15 are ignored
  r.dbs_.clear();
  r.write(reg::SQ_DB, 0xAB000000u | db_value(1, 0x8000 | 0x1234));
  pi[1] = 0x1234;
  ASSERT_EQ(r.dbs_.size(), 1u);
  EXPECT_EQ(r.dbs_[0], (Db{1, false, 0x1234}));
  check_pis();
  // push doorbell: arms SQ n's page for PI - 1
  r.dbs_.clear();
  r.write(reg::SQ_PUSH_DB, db_value(3, 9));
  pi[3] = 9;
  ASSERT_EQ(r.dbs_.size(), 1u);
  EXPECT_EQ(r.dbs_[0], (Db{3, true, 9}));
  check_pis();
  r.settle();
  EXPECT_EQ(r.dut().push_armed, 0b1000u);
  EXPECT_EQ(bits(r.dut().push_idx, 15 * 3, 15), 8u);
  set_bits(r.dut().sq_ci, 0, 15, 5);         // the engine took SQ 0's 5 WQEs
  r.write(reg::SQ_PUSH_DB, db_value(0, 0));  // index 0 - 1 wraps in 15 bits
  pi[0] = 0;
  r.settle();
  EXPECT_EQ(r.dut().push_armed, 0b1001u);
  EXPECT_EQ(bits(r.dut().push_idx, 0, 15), 0x7FFFu);
  EXPECT_EQ(bits(r.dut().push_idx, 15 * 3, 15), 8u);
  // bad SQ numbers: nothing changes, each counted
  EXPECT_EQ(r.read(reg::STAT_SQ_DB_BAD), 0u);
  r.dbs_.clear();
  unsigned bad = 0;
  for (unsigned sq : {4u, 5u, 15u, 16u, 0xFFu}) {
    r.write(reg::SQ_DB, db_value(sq, 77));
    r.write(reg::SQ_PUSH_DB, db_value(sq, 78));
    bad += 2;
  }
  EXPECT_TRUE(r.dbs_.empty()) << "no doorbell pulse for a bad SQ";
  EXPECT_EQ(r.read(reg::STAT_SQ_DB_BAD), bad);
  check_pis();
  r.settle();
  EXPECT_EQ(r.dut().push_armed, 0b1001u);
  // the counter is read only
  r.write(reg::STAT_SQ_DB_BAD, 0);
  EXPECT_EQ(r.read(reg::STAT_SQ_DB_BAD), bad);
  // SQ_SIZE of SQ 3 clears its PI and disarms its page only
  r.write(reg::sq_size(3), 5);
  pi[3] = 0;
  check_pis();
  r.settle();
  EXPECT_EQ(r.dut().push_armed, 0b0001u);
  EXPECT_EQ(r.read(reg::QERR), 0u) << "none of these doorbells was a queue error";
}

// Push page n at PUSH_PAGE + n * 0x40: its words land in SQ n's image only; a write to page n
// disarms SQ n only; push_take[n] disarms SQ n only.
TEST(AxilRegs, PushPagesPerSq) {
  Regs r;
  for (unsigned n = 0; n < 4; ++n)
    for (unsigned w = 0; w < 16; ++w)
      r.write(reg::push_page(n) + 4 * w, (n << 24) | (w << 16) | 0xBEEF);
  r.settle();
  for (unsigned n = 0; n < 4; ++n)
    for (unsigned w = 0; w < 16; ++w)
      EXPECT_EQ(bits(r.dut().push_wqe, 512 * n + 32 * w, 32), (n << 24) | (w << 16) | 0xBEEF)
          << n << "/" << w;
  for (unsigned n = 0; n < 4; ++n) r.write(reg::SQ_PUSH_DB, db_value(n, 1));
  r.settle();
  EXPECT_EQ(r.dut().push_armed, 0xFu);
  r.write(reg::push_page(2) + 8, 0x12345678, 0b0011);  // strobes merge
  r.settle();
  EXPECT_EQ(r.dut().push_armed, 0b1011u);
  EXPECT_EQ(bits(r.dut().push_wqe, 512 * 2 + 64, 32), (2u << 24) | (2u << 16) | 0x5678);
  EXPECT_EQ(bits(r.dut().push_wqe, 512 * 1 + 64, 32), (1u << 24) | (2u << 16) | 0xBEEF);
  r.dut().push_take = 0b0010;
  r.tick();
  r.dut().push_take = 0;
  r.settle();
  EXPECT_EQ(r.dut().push_armed, 0b1001u);
}

// NUM_SQ = 1: SQ 0 works as with 4; blocks, pages and doorbells of SQ 1..3 are ignored.
TEST(AxilRegs, OneSqIgnoresTheOthers) {
  Regs1 r;
  r.write(reg::sq_base_lo(0), 0x4000);
  r.write(reg::sq_size(0), 6);
  r.write(reg::sq_base_lo(1), 0x8000);
  r.write(reg::sq_size(1), 7);
  EXPECT_EQ(r.read(reg::sq_base_lo(0)), 0x4000u);
  EXPECT_EQ(r.read(reg::sq_size(0)), 6u);
  EXPECT_EQ(r.read(reg::sq_base_lo(1)), 0u);
  EXPECT_EQ(r.read(reg::sq_size(1)), 0u);
  EXPECT_EQ(r.sq_reset_pulses_[0], 1u);
  r.write(reg::SQ_DB, db_value(0, 3));
  r.write(reg::SQ_DB, db_value(1, 4));
  r.write(reg::SQ_PUSH_DB, db_value(3, 4));
  ASSERT_EQ(r.dbs_.size(), 1u);
  EXPECT_EQ(r.dbs_[0], (Db{0, false, 3}));
  EXPECT_EQ(r.read(reg::sq_pi(0)), 3u);
  EXPECT_EQ(r.read(reg::STAT_SQ_DB_BAD), 2u);
  r.write(reg::push_page(0), 0x11);
  r.write(reg::push_page(1), 0x22);  // no page 1: ignored
  r.settle();
  EXPECT_EQ(bits(r.dut().push_wqe, 0, 32), 0x11u);
  EXPECT_EQ(r.dut().push_armed, 0u);
}

TEST(AxilRegs, IsnKeyIsWriteOnly) {
  Regs r;
  const std::array<uint32_t, 4> key = {0x01234567, 0x89ABCDEF, 0xFEDCBA98, 0x76543210};
  for (unsigned i = 0; i < 4; ++i) r.write(reg::ISN_KEY + 4 * i, key[i]);
  for (unsigned i = 0; i < 4; ++i) EXPECT_EQ(r.read(reg::ISN_KEY + 4 * i), 0u);
  r.settle();
  for (unsigned i = 0; i < 4; ++i) EXPECT_EQ(isn_word(r.dut(), i), key[i]) << "word " << i;
  // byte strobes merge; other words untouched
  r.write(reg::ISN_KEY + 8, 0xAABBCCDD, 0b0101);
  r.settle();
  EXPECT_EQ(isn_word(r.dut(), 2), 0xFEBBBADDu);
  EXPECT_EQ(isn_word(r.dut(), 0), key[0]);
  EXPECT_EQ(isn_word(r.dut(), 1), key[1]);
  EXPECT_EQ(isn_word(r.dut(), 3), key[3]);
}

TEST(AxilRegs, EachStatBitCountsItsOwnCounter) {
  Regs r;
  std::mt19937 rng(3);
  std::array<uint32_t, kStatCm> want{};
  // one bit at a time: exactly its counter moves
  for (unsigned i = 0; i < kStatCm; ++i) {
    r.dut().stat_cm = 1u << i;
    r.tick();
    r.dut().stat_cm = 0;
    ++want[i];
    for (unsigned j = 0; j < kStatCm; ++j)
      ASSERT_EQ(r.read(reg::STAT_RX_FRAMES + 4 * j), want[j])
          << "after bit " << i << ", counter " << j;
  }
  // random patterns, several bits per cycle, some cycles with none
  for (int c = 0; c < 3000; ++c) {
    const uint32_t p = (rng() % 4 == 0) ? 0 : rng() & 0xFFFFFF;
    r.dut().stat_cm = p;
    r.tick();
    for (unsigned i = 0; i < kStatCm; ++i) want[i] += p >> i & 1;
  }
  r.dut().stat_cm = 0;
  for (unsigned i = 0; i < kStatCm; ++i)
    EXPECT_EQ(r.read(reg::STAT_RX_FRAMES + 4 * i), want[i]) << "counter " << i;
  // the TX counters are separate
  EXPECT_EQ(r.read(reg::STAT_TX_FRAMES), 0u);
}

// The CM counters outside the stat_cm block (STAT_RX_FILTERED, STAT_RX_STRAY,
// STAT_AEQ_REFUSED, STAT_EVT_COALESCED, STAT_SYN_DROP_QUEUE) count their own pulses only, and
// stat_cm never moves them.
TEST(AxilRegs, RxFilteredAndStrayCounters) {
  Regs r;
  EXPECT_EQ(r.read(reg::STAT_RX_FILTERED), 0u);
  EXPECT_EQ(r.read(reg::STAT_RX_STRAY), 0u);
  EXPECT_EQ(r.read(reg::STAT_AEQ_REFUSED), 0u);
  EXPECT_EQ(r.read(reg::STAT_EVT_COALESCED), 0u);
  EXPECT_EQ(r.read(reg::STAT_SYN_DROP_QUEUE), 0u);
  std::mt19937 rng(11);
  uint32_t filt = 0, stray = 0, refused = 0, coalesced = 0, synq = 0;
  for (int c = 0; c < 500; ++c) {
    const uint32_t p = rng();
    r.dut().stat_rx_filtered = p & 1;
    r.dut().stat_rx_stray = p >> 1 & 1;
    r.dut().stat_aeq_refused = p >> 2 & 1;
    r.dut().stat_evt_coalesced = (p >> 3 & 3) == 0;
    r.dut().stat_syn_drop_queue = p >> 5 & p >> 6 & 1;
    r.dut().stat_cm = p >> 8 & 0xFFFFFF;
    r.tick();
    filt += p & 1;
    stray += p >> 1 & 1;
    refused += p >> 2 & 1;
    coalesced += (p >> 3 & 3) == 0;
    synq += p >> 5 & p >> 6 & 1;
  }
  r.dut().stat_rx_filtered = 0;
  r.dut().stat_rx_stray = 0;
  r.dut().stat_aeq_refused = 0;
  r.dut().stat_evt_coalesced = 0;
  r.dut().stat_syn_drop_queue = 0;
  r.dut().stat_cm = 0;
  EXPECT_EQ(r.read(reg::STAT_RX_FILTERED), filt);
  EXPECT_EQ(r.read(reg::STAT_RX_STRAY), stray);
  EXPECT_EQ(r.read(reg::STAT_AEQ_REFUSED), refused);
  EXPECT_EQ(r.read(reg::STAT_EVT_COALESCED), coalesced);
  EXPECT_EQ(r.read(reg::STAT_SYN_DROP_QUEUE), synq);
  EXPECT_GT(filt, 0u);
  EXPECT_NE(filt, stray);
  EXPECT_NE(refused, coalesced);
  EXPECT_NE(synq, filt);
  EXPECT_NE(synq, stray);
  // read-only: writes are ignored
  r.write(reg::STAT_RX_FILTERED, 0);
  r.write(reg::STAT_RX_STRAY, 0);
  r.write(reg::STAT_SYN_DROP_QUEUE, 0);
  EXPECT_EQ(r.read(reg::STAT_RX_FILTERED), filt);
  EXPECT_EQ(r.read(reg::STAT_RX_STRAY), stray);
  EXPECT_EQ(r.read(reg::STAT_SYN_DROP_QUEUE), synq);
}

TEST(AxilRegs, CmConnsAndStatusFollowInputs) {
  Regs r;
  std::mt19937 rng(9);
  for (int k = 0; k < 50; ++k) {
    const uint32_t conns = rng() & 0x1FFFF;
    const uint32_t status = rng() & 0x7F;
    const uint32_t tail = rng() & 0x7FFF;
    r.dut().cm_conns = conns;
    r.dut().status = status;
    r.dut().aeq_tail = tail;
    EXPECT_EQ(r.read(reg::CM_CONNS), conns);
    const uint32_t s = r.read(reg::STATUS);
    EXPECT_EQ(s, status);
    EXPECT_EQ(field::STATUS::AEQ_FULL.get(s), status >> 5 & 1);
    EXPECT_EQ(field::STATUS::CM_READY.get(s), status >> 6 & 1);
    EXPECT_EQ(r.read(reg::AEQ_TAIL), tail);
  }
}

// QERR: a doorbell past the ring size, one that laps the consumer, or one to a ring whose
// base (64 B) or completion-ring base (32 B) is misaligned is ignored and latches its cause;
// every later doorbell to that ring is ignored until its SIZE write. The other ring is not
// affected.
TEST(AxilRegs, BadDoorbellsLatchQerrUntilSizeWrite) {
  using bouncer::regs::QerrCause;
  namespace q = field::QERR;
  auto cause = [](QerrCause c) { return static_cast<uint32_t>(c); };
  Regs r;
  Vaxil_regs& m = r.dut();
  auto sq0_pi = [&] {
    r.settle();
    return bits(m.sq_pi, 0, 15);
  };
  auto sq0_armed = [&] {
    r.settle();
    return (m.push_armed & 1u) != 0;
  };
  EXPECT_EQ(r.read(reg::QERR), 0u);
  r.write(reg::sq_base_lo(0), 0x1000);
  r.write(reg::CQ_BASE_LO, 0x2000);
  r.write(reg::CQP_BASE_LO, 0x3000);
  r.write(reg::CCQ_BASE_LO, 0x4000);
  r.write(reg::sq_size(0), 4);  // 16 entries
  r.write(reg::CQP_SIZE, 4);
  r.write(reg::SQ_DB, db_value(0, 3));
  EXPECT_EQ(sq0_pi(), 3u);
  EXPECT_EQ(r.read(reg::QERR), 0u);

  // Index at the ring size: ignored, DB_RANGE; later good doorbells ignored too.
  r.write(reg::SQ_DB, db_value(0, 16));
  EXPECT_EQ(sq0_pi(), 3u);
  EXPECT_EQ(q::SQ0.get(r.read(reg::QERR)), cause(QerrCause::DB_RANGE));
  EXPECT_EQ(q::CQP.get(r.read(reg::QERR)), 0u);
  r.write(reg::SQ_DB, db_value(0, 4));
  r.write(reg::SQ_PUSH_DB, db_value(0, 5));
  EXPECT_EQ(sq0_pi(), 3u);
  EXPECT_FALSE(sq0_armed());
  EXPECT_EQ(q::SQ0.get(r.read(reg::QERR)), cause(QerrCause::DB_RANGE)) << "first cause kept";
  r.write(reg::CQP_DB, 2);  // the CQP still works
  r.settle();
  EXPECT_EQ(m.cqp_pi, 2u);

  // SIZE clears it; then a producer index that would go backwards past the consumer.
  r.write(reg::sq_size(0), 4);
  EXPECT_EQ(r.read(reg::QERR), 0u);
  r.write(reg::SQ_DB, db_value(0, 9));
  EXPECT_EQ(sq0_pi(), 9u);
  set_bits(m.sq_ci, 0, 15, 2);          // the engine took two
  r.write(reg::SQ_DB, db_value(0, 9));  // the same index again is harmless
  EXPECT_EQ(r.read(reg::QERR), 0u);
  r.write(reg::SQ_DB, db_value(0, 1));  // 1 - 2 wraps to 15 pending: fine; 15 > 7 so not a lap
  EXPECT_EQ(sq0_pi(), 1u);
  EXPECT_EQ(r.read(reg::QERR), 0u);
  r.write(reg::SQ_DB, db_value(0, 0));  // 14 pending after 15: the count would fall
  EXPECT_EQ(sq0_pi(), 1u);
  EXPECT_EQ(q::SQ0.get(r.read(reg::QERR)), cause(QerrCause::DB_LAP));
  set_bits(m.sq_ci, 0, 15, 0);

  // Misaligned ring base, then misaligned CQ base (checked at the doorbell).
  r.write(reg::sq_size(0), 4);
  r.write(reg::sq_base_lo(0), 0x1020);
  r.write(reg::SQ_PUSH_DB, db_value(0, 1));
  EXPECT_EQ(sq0_pi(), 0u);
  EXPECT_FALSE(sq0_armed());
  EXPECT_EQ(q::SQ0.get(r.read(reg::QERR)), cause(QerrCause::RING_ALIGN));
  r.write(reg::sq_base_lo(0), 0x1040);
  r.write(reg::CQ_BASE_LO, 0x2010);
  r.write(reg::sq_size(0), 4);
  r.write(reg::SQ_DB, db_value(0, 1));
  EXPECT_EQ(q::SQ0.get(r.read(reg::QERR)), cause(QerrCause::CQ_ALIGN));
  r.write(reg::CQ_BASE_LO, 0x2020);  // 32-byte aligned is enough for CQEs
  r.write(reg::sq_size(0), 4);
  r.write(reg::SQ_PUSH_DB, db_value(0, 1));
  EXPECT_EQ(sq0_pi(), 1u);
  EXPECT_TRUE(sq0_armed());
  EXPECT_EQ(r.read(reg::QERR), 0u);

  // The CQP's own checks, its own field; the SQ is untouched.
  r.write(reg::CQP_SIZE, 4);
  r.write(reg::CQP_DB, 2);
  m.cqp_ci = 2;
  r.write(reg::CQP_DB, 1);  // 15 pending after 0: allowed
  EXPECT_EQ(q::CQP.get(r.read(reg::QERR)), 0u) << "15 pending after 0 is not a lap";
  r.write(reg::CQP_DB, 0);
  r.settle();
  EXPECT_EQ(m.cqp_pi, 1u);
  EXPECT_EQ(q::CQP.get(r.read(reg::QERR)), cause(QerrCause::DB_LAP));
  EXPECT_EQ(q::SQ0.get(r.read(reg::QERR)), 0u);
  r.write(reg::CQP_SIZE, 4);
  m.cqp_ci = 0;
  r.write(reg::CCQ_BASE_LO, 0x4008);
  r.write(reg::CQP_DB, 1);
  r.settle();
  EXPECT_EQ(m.cqp_pi, 0u);
  EXPECT_EQ(q::CQP.get(r.read(reg::QERR)), cause(QerrCause::CQ_ALIGN));
  r.write(reg::CCQ_BASE_LO, 0x4000);
  r.write(reg::CQP_BASE_LO, 0x3001);
  r.write(reg::CQP_SIZE, 4);
  r.write(reg::CQP_DB, 1);
  EXPECT_EQ(q::CQP.get(r.read(reg::QERR)), cause(QerrCause::RING_ALIGN));
  r.write(reg::CQP_DB, 17);
  EXPECT_EQ(q::CQP.get(r.read(reg::QERR)), cause(QerrCause::RING_ALIGN));
  // A core reset clears both.
  m.rst = 1;
  r.tick();
  m.rst = 0;
  r.tick();
  EXPECT_EQ(r.read(reg::QERR), 0u);
}

// Each SQ has its own QERR field (SQn at bits 4n+3:4n, CQP at 19:16), checked against its own
// size, PI, CI and base (and the shared CQ base): an SQ in error ignores its doorbells while
// the others keep taking theirs; its SQ_SIZE write clears its cause only. A doorbell naming an
// SQ >= NUM_SQ is counted in STAT_SQ_DB_BAD, not a queue error.
TEST(AxilRegs, QerrPerSq) {
  using bouncer::regs::QerrCause;
  namespace q = field::QERR;
  auto cause = [](QerrCause c) { return static_cast<uint32_t>(c); };
  Regs r;
  auto pi = [&](unsigned n) {
    r.settle();
    return bits(r.dut().sq_pi, 15 * n, 15);
  };
  r.write(reg::CQ_BASE_LO, 0x2000);
  for (unsigned n = 0; n < 4; ++n) {
    r.write(reg::sq_base_lo(n), 0x1000 * (n + 1));
    r.write(reg::sq_size(n), 2 + n);  // 4, 8, 16, 32 entries
  }
  // SQ 1 (8 entries): index 8 is out of range there; 8 is fine for SQ 2 (16 entries)
  r.write(reg::SQ_DB, db_value(1, 8));
  r.write(reg::SQ_DB, db_value(2, 8));
  EXPECT_EQ(r.read(reg::QERR), cause(QerrCause::DB_RANGE) << q::SQ1.lsb);
  EXPECT_EQ(pi(1), 0u);
  EXPECT_EQ(pi(2), 8u);
  r.dbs_.clear();
  r.write(reg::SQ_DB, db_value(1, 1));  // SQ 1 stays deaf
  r.write(reg::SQ_DB, db_value(0, 3));  // the others go on
  r.write(reg::SQ_PUSH_DB, db_value(3, 20));
  ASSERT_EQ(r.dbs_.size(), 2u);
  EXPECT_EQ(r.dbs_[0], (Db{0, false, 3}));
  EXPECT_EQ(r.dbs_[1], (Db{3, true, 20}));
  EXPECT_EQ(pi(1), 0u);
  // SQ 3 laps its consumer (20 pending, then 2): DB_LAP in SQ3 only, its push disarmed
  set_bits(r.dut().sq_ci, 15 * 3, 15, 0);
  r.write(reg::SQ_PUSH_DB, db_value(3, 2));
  r.settle();
  EXPECT_EQ(r.dut().push_armed & 0b1000u, 0u);
  EXPECT_EQ(pi(3), 20u);
  uint32_t v = r.read(reg::QERR);
  EXPECT_EQ(q::SQ0.get(v), 0u);
  EXPECT_EQ(q::SQ1.get(v), cause(QerrCause::DB_RANGE));
  EXPECT_EQ(q::SQ2.get(v), 0u);
  EXPECT_EQ(q::SQ3.get(v), cause(QerrCause::DB_LAP));
  EXPECT_EQ(q::CQP.get(v), 0u);
  // SQ 2's own base misaligned: RING_ALIGN for SQ 2 only
  r.write(reg::sq_base_lo(2), 0x3008);
  r.write(reg::SQ_DB, db_value(2, 9));
  set_bits(r.dut().sq_ci, 0, 15, 3);  // the engine took SQ 0's 3 WQEs
  r.write(reg::SQ_DB, db_value(0, 1));
  EXPECT_EQ(q::SQ2.get(r.read(reg::QERR)), cause(QerrCause::RING_ALIGN));
  EXPECT_EQ(q::SQ0.get(r.read(reg::QERR)), 0u);
  EXPECT_EQ(pi(2), 8u);
  EXPECT_EQ(pi(0), 1u);
  // SQ_SIZE of SQ 1 clears SQ1 alone
  r.write(reg::sq_size(1), 3);
  v = r.read(reg::QERR);
  EXPECT_EQ(q::SQ1.get(v), 0u);
  EXPECT_EQ(q::SQ2.get(v), cause(QerrCause::RING_ALIGN));
  EXPECT_EQ(q::SQ3.get(v), cause(QerrCause::DB_LAP));
  r.write(reg::SQ_DB, db_value(1, 5));
  EXPECT_EQ(pi(1), 5u);
  // the shared CQ base, misaligned, is checked at each SQ's doorbell: only the SQ rung fails
  r.write(reg::CQ_BASE_LO, 0x2010);
  r.write(reg::SQ_DB, db_value(0, 2));
  v = r.read(reg::QERR);
  EXPECT_EQ(q::SQ0.get(v), cause(QerrCause::CQ_ALIGN));
  EXPECT_EQ(q::SQ1.get(v), 0u);
  // a doorbell for an SQ the build does not have: counted, no QERR field changes
  const uint32_t before = r.read(reg::QERR);
  r.write(reg::SQ_DB, db_value(4, 99));
  EXPECT_EQ(r.read(reg::QERR), before);
  EXPECT_EQ(r.read(reg::STAT_SQ_DB_BAD), 1u);
  r.write(reg::CQ_BASE_LO, 0x2000);
  for (unsigned n = 0; n < 4; ++n) r.write(reg::sq_size(n), 2 + n);
  EXPECT_EQ(r.read(reg::QERR), 0u);

  // NUM_SQ = 1: the fields of SQ 1..3 stay 0, a doorbell to SQ 1 is a bad-SQ doorbell
  Regs1 r1;
  r1.write(reg::SQ_DB, db_value(1, 100));
  EXPECT_EQ(r1.read(reg::QERR), 0u);
  EXPECT_EQ(r1.read(reg::STAT_SQ_DB_BAD), 1u);
  r1.write(reg::SQ_DB, db_value(0, 100));  // 4 entries
  EXPECT_EQ(r1.read(reg::QERR), cause(QerrCause::DB_RANGE));
}

// AR and R timing: the address is decoded into a registered select first, so ARREADY rises
// the cycle after ARVALID and RVALID the cycle after the AR handshake (2 cycles from ARVALID).
// With RREADY low, RVALID and RDATA are held and the next read is not taken; with RREADY
// high, back-to-back reads take 2 cycles each (the next address is decoded in the cycle of
// the R handshake).
TEST(AxilRegs, ReadHandshakeTiming) {
  Regs r;
  auto& m = r.dut();
  r.write(reg::SCRATCH, 0x12345678);
  r.write(reg::PORT_IP, 0x0A000001);
  r.settle();
  EXPECT_FALSE(m.s_axil_arready) << "no ARREADY while idle";
  m.s_axil_rready = 0;
  m.s_axil_araddr = reg::SCRATCH;
  m.s_axil_arvalid = 1;
  r.settle();
  EXPECT_FALSE(m.s_axil_arready) << "AR is taken the cycle after ARVALID rises";
  EXPECT_FALSE(m.s_axil_rvalid);
  r.tick();
  r.settle();
  EXPECT_TRUE(m.s_axil_arready);
  EXPECT_FALSE(m.s_axil_rvalid);
  r.tick();  // AR handshake
  // the master offers the next read at once: it waits for the R handshake
  m.s_axil_araddr = reg::PORT_IP;
  for (int k = 0; k < 5; ++k) {
    r.settle();
    EXPECT_TRUE(m.s_axil_rvalid) << k;
    EXPECT_EQ(m.s_axil_rdata, 0x12345678u) << k;
    EXPECT_EQ(m.s_axil_rresp, 0u);
    EXPECT_FALSE(m.s_axil_arready) << k;
    r.tick();
  }
  m.s_axil_rready = 1;
  r.settle();
  EXPECT_TRUE(m.s_axil_rvalid);
  EXPECT_FALSE(m.s_axil_arready);
  r.tick();  // R handshake; PORT_IP is decoded in the same cycle
  r.settle();
  EXPECT_FALSE(m.s_axil_rvalid);
  EXPECT_TRUE(m.s_axil_arready);
  r.tick();  // AR handshake
  m.s_axil_arvalid = 0;
  r.settle();
  EXPECT_TRUE(m.s_axil_rvalid);
  EXPECT_EQ(m.s_axil_rdata, 0x0A000001u);
  r.tick();
  r.settle();
  EXPECT_FALSE(m.s_axil_rvalid);
  EXPECT_FALSE(m.s_axil_arready);

  // ARVALID held high over a list of addresses, RREADY high: one AR every 2 cycles, the R
  // beats in order with their values
  const std::array<std::pair<uint32_t, uint32_t>, 5> seq = {{{reg::SCRATCH, 0x12345678},
                                                             {reg::PORT_IP, 0x0A000001},
                                                             {reg::ID, bouncer::regs::kIdValue},
                                                             {reg::TIMER_TICK, 256},
                                                             {reg::RTO_INIT, 976563}}};
  unsigned ar = 0, rb = 0;
  m.s_axil_araddr = seq[0].first;
  m.s_axil_arvalid = 1;
  for (int c = 0; c < 40; ++c) {
    r.settle();
    const bool ar_fire = m.s_axil_arvalid && m.s_axil_arready;
    if (m.s_axil_rvalid) {
      ASSERT_LT(rb, ar) << "R before its AR";
      EXPECT_EQ(m.s_axil_rdata, seq[rb % seq.size()].second) << "beat " << rb;
      ++rb;
    }
    r.tick();
    if (ar_fire) m.s_axil_araddr = seq[++ar % seq.size()].first;
  }
  m.s_axil_arvalid = 0;
  EXPECT_EQ(ar, 20u) << "one read every 2 cycles";
  EXPECT_EQ(rb, 19u);
}

// The value read is the register's value in the AR handshake cycle, and CYCLE_HI returns the
// high word latched by the CYCLE_LO read (once per read: a later CYCLE_HI read returns the
// same word until CYCLE_LO is read again).
TEST(AxilRegs, ReadValueIsTheHandshakeCyclesOne) {
  Regs r;
  auto& m = r.dut();
  m.stat_tx_bytes = 0;
  m.stat_tx_frame = 1;  // STAT_TX_FRAMES counts every cycle
  uint32_t frames = 0;  // its value after the edges ticked so far
  auto timed_read = [&](uint32_t addr, uint64_t& cycle_at_ar, uint32_t& frames_at_ar) {
    m.s_axil_araddr = addr;
    m.s_axil_arvalid = 1;
    for (int n = 0; n < 10; ++n) {
      r.settle();
      const bool fire = m.s_axil_arready;
      cycle_at_ar = m.cycle_count;
      frames_at_ar = frames;
      r.tick();
      ++frames;
      if (fire) break;
    }
    m.s_axil_arvalid = 0;
    r.settle();
    EXPECT_TRUE(m.s_axil_rvalid);
    const uint32_t v = m.s_axil_rdata;
    r.tick();
    ++frames;
    return v;
  };
  uint64_t c0 = 0, c1 = 0;
  uint32_t f0 = 0, f1 = 0;
  for (int k = 0; k < 3; ++k) {
    uint32_t v = timed_read(reg::STAT_TX_FRAMES, c0, f0);
    EXPECT_EQ(v, f0);
    EXPECT_GT(f0, 0u);
    v = timed_read(reg::CYCLE_LO, c0, f0);
    EXPECT_EQ(v, static_cast<uint32_t>(c0));
    EXPECT_GT(c0, 0u);
    v = timed_read(reg::CYCLE_HI, c1, f1);
    EXPECT_EQ(v, static_cast<uint32_t>(c0 >> 32));
    v = timed_read(reg::CYCLE_HI, c1, f1);
    EXPECT_EQ(v, static_cast<uint32_t>(c0 >> 32));
  }
  m.stat_tx_frame = 0;
}

// Words that hold no readable register read 0: gaps, the write-only ISN key and push pages,
// the blocks of SQs >= NUM_SQ, and addresses past the register space (no aliasing onto a
// register through the high address bits). Address bits 1:0 are ignored.
TEST(AxilRegs, UnmappedReadsAreZero) {
  Regs r;
  r.write(reg::SCRATCH, 0xFFFFFFFF);
  r.write(reg::PORT_IP, 0xC0A80001);
  for (unsigned w = 0; w < 16; ++w) r.write(reg::push_page(0) + 4 * w, 0xDEAD0000 + w);
  EXPECT_EQ(r.read(reg::SCRATCH), 0xFFFFFFFFu);
  EXPECT_EQ(r.read(reg::SCRATCH + 2), 0xFFFFFFFFu);
  EXPECT_EQ(r.read(reg::PORT_IP + 3), 0xC0A80001u);
  for (uint32_t a :
       {uint32_t{0x001C}, uint32_t{0x002C}, uint32_t{0x02C0}, uint32_t{0x036C}, uint32_t{0x0414},
        uint32_t{0x0580}, uint32_t{0x07FC}, uint32_t{reg::SCRATCH + 0x0800},
        uint32_t{reg::SCRATCH + 0x8000}, uint32_t{reg::PORT_IP + 0x1000},
        uint32_t{reg::push_page(0)}, uint32_t{reg::push_page(0) + 0x3C}, uint32_t{0xFFFC}})
    EXPECT_EQ(r.read(a), 0u) << std::hex << a;
  Regs1 r1;
  r1.write(reg::sq_base_lo(0), 0x1000);
  EXPECT_EQ(r1.read(reg::sq_base_lo(0)), 0x1000u);
  for (unsigned n = 1; n < 4; ++n) {
    EXPECT_EQ(r1.read(reg::sq_base_lo(n)), 0u) << n;
    EXPECT_EQ(r1.read(reg::sq_size(n)), 0u) << n;
  }
}

}  // namespace
