// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// Unit test of rtl/host/bouncer_axil_regs on its own, through AXI4-Lite reads and writes:
// the passive-CM registers (reset values as stated in docs/register-map.md, read/write masks,
// byte strobes, the write-only ISN key, the AEQ_SIZE pulse), the 24 CM statistics counters,
// CM_CONNS and STATUS from the inputs, and ID/VERSION. Offsets come from the generated
// bouncer/regs.hpp; expected values are written here from the register descriptions.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "bouncer/regs.hpp"

// Verilator 5.006's headers trip -Wunused-parameter; they are not ours.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "Vaxil_regs.h"
#include "verilated.h"
#pragma GCC diagnostic pop

namespace {

namespace reg = bouncer::regs::reg;
namespace field = bouncer::regs::field;

constexpr unsigned kStatCm = (reg::STAT_ACK_TX - reg::STAT_RX_FRAMES) / 4 + 1;
static_assert(kStatCm == 24);

class Regs {
 public:
  Regs() {
    ctx_.randReset(0);
    m_ = std::make_unique<Vaxil_regs>(&ctx_, "regs");
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

  Vaxil_regs& dut() { return *m_; }
  unsigned aeq_pulses_ = 0;

 private:
  VerilatedContext ctx_;
  std::unique_ptr<Vaxil_regs> m_;
};

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
      {reg::MPA_TIMEOUT, 1953125, 0xFFFFFFFF, "MPA_TIMEOUT"},
      {reg::FIN_TIMEOUT, 58593750, 0xFFFFFFFF, "FIN_TIMEOUT"},
      {reg::TIME_WAIT, 97656, 0xFFFFFFFF, "TIME_WAIT"},
      {reg::TCP_CFG, field::TCP_CFG::MSS.put(1460) | field::TCP_CFG::WSCALE.put(7),
       field::TCP_CFG::MSS.mask() | field::TCP_CFG::WSCALE.mask(), "TCP_CFG"},
      {reg::TCP_WND, 65535, 0xFFFF, "TCP_WND"},
      {reg::CM_ROUTE, field::CM_ROUTE::PROMISC.put(1), field::CM_ROUTE::PROMISC.mask(), "CM_ROUTE"},
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
  EXPECT_EQ(m.fin_timeout, at(reg::FIN_TIMEOUT));
  EXPECT_EQ(m.time_wait, at(reg::TIME_WAIT));
  EXPECT_EQ(m.tcp_mss, field::TCP_CFG::MSS.get(at(reg::TCP_CFG)));
  EXPECT_EQ(m.tcp_wscale, field::TCP_CFG::WSCALE.get(at(reg::TCP_CFG)));
  EXPECT_EQ(m.tcp_wnd, at(reg::TCP_WND));
  EXPECT_EQ(m.cm_promisc, field::CM_ROUTE::PROMISC.get(at(reg::CM_ROUTE)));
}

TEST(AxilRegs, IdAndVersionUnchanged) {
  Regs r;
  EXPECT_EQ(r.read(reg::ID), bouncer::regs::kIdValue);
  const uint32_t v = r.read(reg::VERSION);
  EXPECT_EQ(field::VERSION::MAJOR.get(v), bouncer::regs::kVersionMajor);
  EXPECT_EQ(field::VERSION::MINOR.get(v), bouncer::regs::kVersionMinor);
  EXPECT_EQ(field::VERSION::PATCH.get(v), bouncer::regs::kVersionPatch);
  EXPECT_EQ(v, 0x000600u);  // 0.6.0
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
  EXPECT_EQ(r.read(reg::QERR), 0u);
  r.write(reg::SQ_BASE_LO, 0x1000);
  r.write(reg::CQ_BASE_LO, 0x2000);
  r.write(reg::CQP_BASE_LO, 0x3000);
  r.write(reg::CCQ_BASE_LO, 0x4000);
  r.write(reg::SQ_SIZE, 4);  // 16 entries
  r.write(reg::CQP_SIZE, 4);
  r.write(reg::SQ_DB, 3);
  r.settle();
  EXPECT_EQ(m.sq_pi, 3u);
  EXPECT_EQ(r.read(reg::QERR), 0u);

  // Index at the ring size: ignored, DB_RANGE; later good doorbells ignored too.
  r.write(reg::SQ_DB, 16);
  r.settle();
  EXPECT_EQ(m.sq_pi, 3u);
  EXPECT_EQ(q::SQ.get(r.read(reg::QERR)), cause(QerrCause::DB_RANGE));
  EXPECT_EQ(q::CQP.get(r.read(reg::QERR)), 0u);
  r.write(reg::SQ_DB, 4);
  r.write(reg::SQ_PUSH_DB, 5);
  r.settle();
  EXPECT_EQ(m.sq_pi, 3u);
  EXPECT_FALSE(m.push_armed);
  EXPECT_EQ(q::SQ.get(r.read(reg::QERR)), cause(QerrCause::DB_RANGE)) << "first cause kept";
  r.write(reg::CQP_DB, 2);  // the CQP still works
  r.settle();
  EXPECT_EQ(m.cqp_pi, 2u);

  // SIZE clears it; then a producer index that would go backwards past the consumer.
  r.write(reg::SQ_SIZE, 4);
  EXPECT_EQ(r.read(reg::QERR), 0u);
  r.write(reg::SQ_DB, 9);
  r.settle();
  EXPECT_EQ(m.sq_pi, 9u);
  m.sq_ci = 2;             // the engine took two
  r.write(reg::SQ_DB, 9);  // the same index again is harmless
  EXPECT_EQ(r.read(reg::QERR), 0u);
  r.write(reg::SQ_DB, 1);  // 1 - 2 wraps to 15 pending: fine; 15 > 7 so not a lap
  r.settle();
  EXPECT_EQ(m.sq_pi, 1u);
  EXPECT_EQ(r.read(reg::QERR), 0u);
  r.write(reg::SQ_DB, 0);  // 14 pending after 15: the count would fall
  r.settle();
  EXPECT_EQ(m.sq_pi, 1u);
  EXPECT_EQ(q::SQ.get(r.read(reg::QERR)), cause(QerrCause::DB_LAP));
  m.sq_ci = 0;

  // Misaligned ring base, then misaligned CQ base (checked at the doorbell).
  r.write(reg::SQ_SIZE, 4);
  r.write(reg::SQ_BASE_LO, 0x1020);
  r.write(reg::SQ_PUSH_DB, 1);
  r.settle();
  EXPECT_EQ(m.sq_pi, 0u);
  EXPECT_FALSE(m.push_armed);
  EXPECT_EQ(q::SQ.get(r.read(reg::QERR)), cause(QerrCause::RING_ALIGN));
  r.write(reg::SQ_BASE_LO, 0x1040);
  r.write(reg::CQ_BASE_LO, 0x2010);
  r.write(reg::SQ_SIZE, 4);
  r.write(reg::SQ_DB, 1);
  EXPECT_EQ(q::SQ.get(r.read(reg::QERR)), cause(QerrCause::CQ_ALIGN));
  r.write(reg::CQ_BASE_LO, 0x2020);  // 32-byte aligned is enough for CQEs
  r.write(reg::SQ_SIZE, 4);
  r.write(reg::SQ_PUSH_DB, 1);
  r.settle();
  EXPECT_EQ(m.sq_pi, 1u);
  EXPECT_TRUE(m.push_armed);
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
  EXPECT_EQ(q::SQ.get(r.read(reg::QERR)), 0u);
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

}  // namespace
