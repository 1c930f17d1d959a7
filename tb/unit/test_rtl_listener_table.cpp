// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// Unit test of rtl/cm/bouncer_listener_table (16 listeners). CREATE/DESTROY WQE images are
// built with bouncer/regs.hpp (the generated field map) with random reserved bits; a C++
// model of the table (entries, match priority, backlog counters) is compared every cycle
// on cfg_ok, the registered lookup result (hit, index, full, the winner's AUTO_REJECT) and
// the combinational read port.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <utility>

#include "bouncer/regs.hpp"

// Verilator 5.006's verilated_types.h has an unused parameter; not our code.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "Vlistener_table.h"
#include "verilated.h"
#pragma GCC diagnostic pop

namespace {

namespace regs = bouncer::regs;
namespace lw = bouncer::regs::cqp_listen_wqe;

constexpr unsigned kN = 16;

struct Listener {
  bool valid = false;
  uint32_t ip = 0;
  uint16_t port = 0;
  uint16_t backlog = 0;
  uint8_t fin = 0;
  uint8_t auto_rej = 0;
  bool tmpl_bank = false;  // flips with every create; kept across a destroy
  uint16_t tmpl_len = 0;
  bool tmpl_iov = false;
  uint32_t tmpl_ird_ord = 0;
  uint64_t mac = 0;
  uint8_t ttl = 0;
  uint8_t tos = 0;
  uint16_t max_ird = 0;
  uint16_t max_ord = 0;
};

// A CREATE/DESTROY_LISTENER WQE image: the listener's fields as the host writes them (raw,
// before normalisation), everything else random.
struct Wqe {
  std::array<std::byte, 64> img{};
  unsigned idx = 0;
};

struct LkResult {
  bool hit = false;
  unsigned idx = 0;
  bool full = false;
  uint8_t auto_rej = 0;
};

// Reference model.
class RefTable {
 public:
  // Returns cfg_ok.
  bool cfg(bool create, const Wqe& w) {
    std::span<const std::byte> img(w.img);
    unsigned i = static_cast<unsigned>(regs::get(img, lw::LISTENER)) % kN;
    if (!create) {
      bool ok = e_[i].valid;
      e_[i].valid = false;
      return ok;
    }
    Listener& l = e_[i];
    l.valid = true;
    l.ip = static_cast<uint32_t>(regs::get(img, lw::LOC_IP));
    l.port = static_cast<uint16_t>(regs::get(img, lw::LOC_PORT));
    l.backlog = static_cast<uint16_t>(regs::get(img, lw::BACKLOG));
    auto fin = static_cast<regs::FinPolicy>(regs::get(img, lw::FIN_POLICY));
    if (fin == regs::FinPolicy::DEFAULT) fin = regs::FinPolicy::SIW_SAFE;
    l.fin = static_cast<uint8_t>(fin);
    l.auto_rej = static_cast<uint8_t>(regs::get(img, lw::AUTO_REJECT));
    l.tmpl_bank = !l.tmpl_bank;
    l.tmpl_len = static_cast<uint16_t>(regs::get(img, lw::TMPL_LEN));
    l.tmpl_iov = regs::get(img, lw::TMPL_IRD_ORD_VALID) != 0;
    l.tmpl_ird_ord = static_cast<uint32_t>(regs::get(img, lw::TMPL_IRD_ORD));
    l.mac = regs::get(img, lw::LOC_MAC);
    l.ttl = static_cast<uint8_t>(regs::get(img, lw::TTL));
    if (l.ttl == 0) l.ttl = 64;
    l.tos = static_cast<uint8_t>(regs::get(img, lw::TOS));
    l.max_ird = static_cast<uint16_t>(regs::get(img, lw::MAX_IRD));
    l.max_ord = static_cast<uint16_t>(regs::get(img, lw::MAX_ORD));
    return true;
  }

  LkResult lookup(uint32_t ip, uint16_t port) const {
    LkResult r;
    std::optional<unsigned> exact, wild;
    for (unsigned i = 0; i < kN; ++i) {
      const Listener& l = e_[i];
      if (!l.valid || l.port != port) continue;
      if (l.ip == ip && !exact) exact = i;
      if (l.ip == 0 && !wild) wild = i;
    }
    auto win = exact ? exact : wild;
    if (win) {
      r.hit = true;
      r.idx = *win;
      r.full = e_[*win].backlog != 0 && pending_[*win] >= e_[*win].backlog;
      r.auto_rej = e_[*win].auto_rej;
    }
    return r;
  }

  void pend(std::optional<unsigned> inc, std::optional<unsigned> dec) {
    for (unsigned i = 0; i < kN; ++i) {
      int v = pending_[i] + (inc == i) - (dec == i);
      pending_[i] = static_cast<uint16_t>(std::clamp(v, 0, 0xFFFF));
    }
  }

  void reset() {
    e_ = {};
    pending_ = {};
  }

  std::array<Listener, kN> e_{};
  std::array<uint16_t, kN> pending_{};
};

struct Op {
  std::optional<std::pair<bool, Wqe>> cfg;  // create?, image
  std::optional<std::pair<uint32_t, uint16_t>> lk;
  std::optional<unsigned> inc, dec;
  unsigned rd_idx = 0;

  Op& with_cfg(bool create, const Wqe& w) {
    cfg = std::make_pair(create, w);
    return *this;
  }
  Op& with_lk(uint32_t ip, uint16_t port) {
    lk = std::make_pair(ip, port);
    return *this;
  }
  Op& with_inc(unsigned i) {
    inc = i;
    return *this;
  }
  Op& with_dec(unsigned i) {
    dec = i;
    return *this;
  }
  Op& rd(unsigned i) {
    rd_idx = i;
    return *this;
  }
};

class Harness {
 public:
  explicit Harness(uint64_t seed) : rng_(seed) {
    ctx_.randReset(2);
    m_ = std::make_unique<Vlistener_table>(&ctx_, "lt");
    reset();
  }

  void reset() {
    m_->cfg_valid = 0;
    m_->lk_valid = 0;
    m_->pend_inc = 0;
    m_->pend_dec = 0;
    m_->rst = 1;
    for (int i = 0; i < 2; ++i) tick();
    m_->rst = 0;
    ref_.reset();
    exp_lk_.reset();
    exp_lk1_.reset();
  }

  void settle() {
    m_->clk = 0;
    m_->eval();
  }
  void tick() {
    settle();
    m_->clk = 1;
    m_->eval();
  }

  void check_read(unsigned i) {
    const Listener& l = ref_.e_[i];
    EXPECT_EQ(m_->rd_valid_entry, l.valid) << "entry " << i;
    EXPECT_EQ(m_->rd_pending, ref_.pending_[i]) << "entry " << i;
    if (!l.valid) return;  // fields of an invalid entry are don't-care
    EXPECT_EQ(m_->rd_loc_ip, l.ip);
    EXPECT_EQ(m_->rd_loc_port, l.port);
    EXPECT_EQ(m_->rd_backlog, l.backlog);
    EXPECT_EQ(m_->rd_fin_policy, l.fin);
    EXPECT_EQ(m_->rd_auto_reject, l.auto_rej);
    EXPECT_EQ(m_->rd_tmpl_bank, l.tmpl_bank);
    EXPECT_EQ(m_->rd_tmpl_len, l.tmpl_len);
    EXPECT_EQ(m_->rd_tmpl_ird_ord_valid, l.tmpl_iov);
    EXPECT_EQ(m_->rd_tmpl_ird_ord, l.tmpl_ird_ord);
    EXPECT_EQ(m_->rd_loc_mac, l.mac);
    EXPECT_EQ(m_->rd_ttl, l.ttl);
    EXPECT_EQ(m_->rd_tos, l.tos);
    EXPECT_EQ(m_->rd_max_ird, l.max_ird);
    EXPECT_EQ(m_->rd_max_ord, l.max_ord);
  }

  // One cycle; the lookup result of this cycle is checked two cycles later.
  void step(const Op& op) {
    m_->cfg_valid = op.cfg.has_value();
    if (op.cfg) {
      m_->cfg_create = op.cfg->first;
      for (unsigned w = 0; w < 16; ++w) {
        uint32_t v = 0;
        std::memcpy(&v, op.cfg->second.img.data() + 4 * w, 4);
        m_->cfg_wqe[w] = v;
      }
    }
    m_->lk_valid = op.lk.has_value();
    if (op.lk) {
      m_->lk_ip = op.lk->first;
      m_->lk_port = op.lk->second;
    }
    m_->pend_inc = op.inc.has_value();
    m_->pend_inc_idx = op.inc.value_or(rng_() % kN);
    m_->pend_dec = op.dec.has_value();
    m_->pend_dec_idx = op.dec.value_or(rng_() % kN);
    m_->rd_idx = op.rd_idx;
    settle();
    // registered result of the lookup two cycles ago (latency 2)
    EXPECT_EQ(m_->lk_res_valid, exp_lk_.has_value());
    if (exp_lk_ && m_->lk_res_valid) {
      EXPECT_EQ(m_->lk_hit, exp_lk_->hit) << "lookup #" << lookups_;
      if (exp_lk_->hit) {
        EXPECT_EQ(m_->lk_idx, exp_lk_->idx) << "lookup #" << lookups_;
        EXPECT_EQ(m_->lk_full, exp_lk_->full) << "lookup #" << lookups_;
        EXPECT_EQ(m_->lk_auto_reject, exp_lk_->auto_rej) << "lookup #" << lookups_;
        hits_ += 1;
        full_ += exp_lk_->full;
      } else {
        EXPECT_FALSE(m_->lk_full);
        EXPECT_EQ(m_->lk_auto_reject, 0u);
      }
      ++lookups_;
    }
    check_read(op.rd_idx);
    // this cycle's lookup sees the table before this cycle's updates
    exp_lk_ = exp_lk1_;
    exp_lk1_.reset();
    if (op.lk) exp_lk1_ = ref_.lookup(op.lk->first, op.lk->second);
    if (op.cfg) {
      // the bank a create copies its template into: the one the entry does not use
      const unsigned ci = op.cfg->second.idx % kN;
      EXPECT_EQ(m_->cfg_tmpl_bank, !ref_.e_[ci].tmpl_bank) << "entry " << ci;
      bool ok = ref_.cfg(op.cfg->first, op.cfg->second);
      EXPECT_EQ(m_->cfg_ok, ok) << (op.cfg->first ? "create" : "destroy");
      bad_destroys_ += !ok;
    }
    ref_.pend(op.inc, op.dec);
    tick();
  }

  void idle(int n = 1) {
    for (int i = 0; i < n; ++i) step(Op().rd(static_cast<unsigned>(rng_() % kN)));
  }

  // A WQE for listener `idx` with random fields; ip/port/backlog/fin/ttl as given.
  Wqe make_wqe(unsigned idx, uint32_t ip, uint16_t port, uint16_t backlog,
               std::optional<uint8_t> fin = std::nullopt,
               std::optional<uint8_t> ttl = std::nullopt) {
    Wqe w;
    for (auto& b : w.img) b = static_cast<std::byte>(rng_());  // reserved bits random too
    std::span<std::byte> img(w.img);
    regs::put(img, lw::LISTENER, idx);
    regs::put(img, lw::LOC_IP, ip);
    regs::put(img, lw::LOC_PORT, port);
    regs::put(img, lw::BACKLOG, backlog);
    if (fin) regs::put(img, lw::FIN_POLICY, *fin);
    if (ttl) regs::put(img, lw::TTL, *ttl);
    regs::put(img, lw::OPCODE, static_cast<uint64_t>(regs::CqpOp::CREATE_LISTENER));
    w.idx = idx;
    return w;
  }

  void create(const Wqe& w) { step(Op().with_cfg(true, w).rd(w.idx)); }
  void destroy(unsigned idx) {
    Wqe w = make_wqe(idx, static_cast<uint32_t>(rng_()), static_cast<uint16_t>(rng_()), 0);
    step(Op().with_cfg(false, w).rd(idx));
  }
  LkResult lookup(uint32_t ip, uint16_t port) {
    step(Op().with_lk(ip, port));
    idle();  // latency 2: the result is registered at the second edge
    settle();
    LkResult r{m_->lk_hit != 0, m_->lk_idx, m_->lk_full != 0,
               static_cast<uint8_t>(m_->lk_auto_reject)};
    idle();  // checks it against the model
    return r;
  }

  VerilatedContext ctx_;
  std::unique_ptr<Vlistener_table> m_;
  std::mt19937_64 rng_;
  RefTable ref_;
  std::optional<LkResult> exp_lk_;   // checked in this cycle (looked up two cycles ago)
  std::optional<LkResult> exp_lk1_;  // looked up in the previous cycle
  uint64_t lookups_ = 0;
  uint64_t hits_ = 0;
  uint64_t full_ = 0;
  uint64_t bad_destroys_ = 0;
};

constexpr uint32_t kIpA = 0x0A000001;
constexpr uint32_t kIpB = 0x0A000002;

TEST(ListenerTable, ResetEmpty) {
  Harness h(1);
  for (unsigned i = 0; i < kN; ++i) h.step(Op().with_lk(kIpA, 4791).rd(i));
  h.idle(2);  // latency 2: the last lookup is checked two cycles later
  EXPECT_EQ(h.hits_, 0u);
  EXPECT_EQ(h.lookups_, kN);
}

TEST(ListenerTable, CreateDestroyOverwrite) {
  Harness h(2);
  h.create(h.make_wqe(3, kIpA, 4791, 0));
  h.idle();
  LkResult r = h.lookup(kIpA, 4791);
  EXPECT_TRUE(r.hit);
  EXPECT_EQ(r.idx, 3u);
  // overwrite index 3 with another port: the old port misses
  h.create(h.make_wqe(3, kIpA, 5000, 0));
  EXPECT_FALSE(h.lookup(kIpA, 4791).hit);
  EXPECT_TRUE(h.lookup(kIpA, 5000).hit);
  h.destroy(3);
  EXPECT_FALSE(h.lookup(kIpA, 5000).hit);
  // destroy of an invalid entry: cfg_ok 0 (checked against the model in step())
  h.destroy(3);
  h.destroy(9);
  EXPECT_EQ(h.bad_destroys_, 2u);
  h.idle(2);
}

TEST(ListenerTable, ExactBeatsWildcardAndLowestIndex) {
  Harness h(3);
  h.create(h.make_wqe(7, 0, 4791, 0));      // wildcard
  h.create(h.make_wqe(5, 0, 4791, 0));      // wildcard, lower index
  h.create(h.make_wqe(12, kIpA, 4791, 0));  // exact
  h.create(h.make_wqe(14, kIpA, 4791, 0));  // exact, higher index
  h.create(h.make_wqe(1, kIpA, 4792, 0));   // other port
  LkResult r = h.lookup(kIpA, 4791);
  EXPECT_TRUE(r.hit);
  EXPECT_EQ(r.idx, 12u);
  r = h.lookup(kIpB, 4791);  // only the wildcards match
  EXPECT_TRUE(r.hit);
  EXPECT_EQ(r.idx, 5u);
  r = h.lookup(kIpB, 4792);  // port 4792 is exact kIpA only
  EXPECT_FALSE(r.hit);
  r = h.lookup(kIpA, 4793);
  EXPECT_FALSE(r.hit);
  h.destroy(12);
  EXPECT_EQ(h.lookup(kIpA, 4791).idx, 14u);
  h.destroy(14);
  EXPECT_EQ(h.lookup(kIpA, 4791).idx, 5u);
  h.destroy(5);
  EXPECT_EQ(h.lookup(kIpA, 4791).idx, 7u);
}

TEST(ListenerTable, Normalisation) {
  Harness h(4);
  h.create(h.make_wqe(0, kIpA, 1, 0, uint8_t{0}, uint8_t{0}));  // DEFAULT, TTL 0
  h.settle();
  h.m_->rd_idx = 0;
  h.settle();
  EXPECT_EQ(h.m_->rd_fin_policy, static_cast<unsigned>(regs::FinPolicy::SIW_SAFE));
  EXPECT_EQ(h.m_->rd_ttl, 64u);
  for (uint8_t fin = 1; fin < 4; ++fin) {
    h.create(h.make_wqe(fin, kIpA, 1, 0, fin, static_cast<uint8_t>(fin * 50)));
    h.m_->rd_idx = fin;
    h.settle();
    EXPECT_EQ(h.m_->rd_fin_policy, fin);
    EXPECT_EQ(h.m_->rd_ttl, fin * 50u);
  }
  h.idle(2);
}

TEST(ListenerTable, BacklogFull) {
  Harness h(5);
  h.create(h.make_wqe(2, kIpA, 4791, 3));  // backlog 3
  h.create(h.make_wqe(4, kIpB, 4791, 0));  // no limit
  for (int i = 0; i < 3; ++i) {
    EXPECT_FALSE(h.lookup(kIpA, 4791).full) << i;
    h.step(Op().with_inc(2u).rd(2));
  }
  EXPECT_TRUE(h.lookup(kIpA, 4791).full);
  for (int i = 0; i < 100; ++i) h.step(Op().with_inc(4u).rd(4));
  EXPECT_FALSE(h.lookup(kIpB, 4791).full);
  h.step(Op().with_dec(2u).rd(2));
  EXPECT_FALSE(h.lookup(kIpA, 4791).full);
  // create keeps pending: re-creating with backlog 2 makes it full at once
  h.create(h.make_wqe(2, kIpA, 4791, 2));
  EXPECT_TRUE(h.lookup(kIpA, 4791).full);
  // destroy keeps pending too
  h.destroy(2);
  h.step(Op().rd(2));  // rd_pending checked against the model
  EXPECT_EQ(h.ref_.pending_[2], 2u);
  h.create(h.make_wqe(2, kIpA, 4791, 2));
  EXPECT_TRUE(h.lookup(kIpA, 4791).full);
}

TEST(ListenerTable, ConcurrentIncDec) {
  Harness h(6);
  // dec at 0 saturates; inc+dec on one entry at 0 stays 0; inc+dec on two entries
  h.step(Op().with_dec(1u).rd(1));
  h.step(Op().with_inc(1u).with_dec(1u).rd(1));
  h.step(Op().with_inc(1u).rd(1));
  h.step(Op().with_inc(1u).with_dec(1u).rd(1));
  h.step(Op().with_inc(2u).with_dec(1u).rd(1));
  h.step(Op().with_inc(1u).with_dec(2u).rd(2));
  h.step(Op().rd(1));
  h.step(Op().rd(2));
  EXPECT_EQ(h.ref_.pending_[1], 1u);
  EXPECT_EQ(h.ref_.pending_[2], 0u);
  // saturation at 0xFFFF
  for (int i = 0; i < 0x10005; ++i) h.step(Op().with_inc(3u).rd(3));
  h.step(Op().rd(3));
  EXPECT_EQ(h.ref_.pending_[3], 0xFFFFu);
}

// Random operations every cycle: creates/destroys over all indices with IPs and ports from
// small pools (wildcards included), lookups, inc/dec, read port at a random index.
TEST(ListenerTable, RandomOps) {
  Harness h(7);
  std::array<uint32_t, 4> ips{0, kIpA, kIpB, 0xC0A80001};
  std::array<uint16_t, 3> ports{4791, 5000, 80};
  for (int i = 0; i < 60000; ++i) {
    Op op;
    op.rd_idx = static_cast<unsigned>(h.rng_() % kN);
    unsigned r = static_cast<unsigned>(h.rng_() % 100);
    if (r < 10) {
      bool create = h.rng_() % 3 != 0;
      uint16_t backlog = static_cast<uint16_t>(h.rng_() % 4 == 0 ? 0 : h.rng_() % 6);
      Wqe w = h.make_wqe(static_cast<unsigned>(h.rng_() % kN), ips[h.rng_() % ips.size()],
                         ports[h.rng_() % ports.size()], backlog);
      op.cfg = std::make_pair(create, w);
    }
    if (h.rng_() % 2) {
      uint32_t ip = ips[1 + h.rng_() % (ips.size() - 1)];
      if (h.rng_() % 20 == 0) ip = static_cast<uint32_t>(h.rng_());
      op.lk = std::make_pair(ip, ports[h.rng_() % ports.size()]);
    }
    if (h.rng_() % 3 == 0) op.inc = static_cast<unsigned>(h.rng_() % kN);
    if (h.rng_() % 3 == 0) op.dec = static_cast<unsigned>(h.rng_() % kN);
    if (h.rng_() % 8 == 0) op.dec = op.inc;  // same entry
    h.step(op);
  }
  h.idle();
  EXPECT_GT(h.hits_, 10000u);
  EXPECT_GT(h.full_, 1000u);
  EXPECT_GT(h.lookups_ - h.hits_, 1000u);
  EXPECT_GT(h.bad_destroys_, 100u);
}

}  // namespace
