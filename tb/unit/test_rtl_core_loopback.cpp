// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// Core-level test of CTRL.LOOPBACK in rtl/top/bouncer_core, at DATA_W 64 and 512, through the
// verilated core the co-simulation already uses (bouncer_rtl: no extra verilation).
//
// The only frame source used is the CM engine's answer to a SYN for which no listener exists
// (RST|ACK, seq 0, ack SEG.SEQ + 1; docs/cm-state-machine.md), so no DMA is involved: the
// test asserts that the core never touches m_axi. Every cycle it also checks that
// s_axis_rx_tready is 1 and that m_axis_tx never withdraws or changes a beat it offered.
// What is checked:
// - normal mode: the SYN's RST|ACK leaves on m_axis_tx (parsed by the golden parser);
// - loopback: a SYN arriving on s_axis_rx is discarded whole (STAT_RX_OVERFLOW + 1, nothing
//   reaches the parser or the CM engine, m_axis_tx stays idle);
// - switching on while a SYN is half received: the SYN is still received whole, and its
//   RST|ACK is looped into the core's own RX path (STAT_TX_FRAMES + 1 and STAT_RX_FRAMES + 2,
//   no bad frame, m_axis_tx idle), where the CM engine drops it (a RST gets no answer);
// - switching off while a SYN is half received: that SYN is still discarded whole (no partial
//   frame reaches the parser: STAT_RX_BAD and STAT_RX_NOT_TCP stay 0), the next one is
//   answered on m_axis_tx;
// - a RST|ACK waiting on m_axis_tx (tready low) when loopback is switched on is not
//   withdrawn: it leaves on m_axis_tx once tready rises, and only then the TX side loops.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <random>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "bouncer/regs.hpp"
#include "golden/frame_parser.hpp"
#include "golden/reject_frame.hpp"
#include "golden/tcp_ctrl.hpp"

// Verilator 5.006's headers trip -Wunused-parameter; they are not ours.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "Vbouncer_core_w512.h"
#include "Vbouncer_core_w64.h"
#include "axis_lanes.hpp"
#include "verilated.h"
#pragma GCC diagnostic pop

namespace {

namespace reg = bouncer::regs::reg;
namespace field = bouncer::regs::field;

using Bytes = std::vector<uint8_t>;

template <typename T>
void set_byte(T& p, unsigned i, uint8_t v) {
  if constexpr (std::is_integral_v<T>) {
    const uint64_t m = uint64_t{0xFF} << (8 * i);
    p = static_cast<T>((static_cast<uint64_t>(p) & ~m) | (uint64_t{v} << (8 * i)));
  } else {
    const unsigned s = 8 * (i % 4);
    p[i / 4] = (p[i / 4] & ~(0xFFu << s)) | (uint32_t{v} << s);
  }
}

constexpr uint32_t kLocIp = 0x0A000001;  // 10.0.0.1
constexpr uint32_t kRemIp = 0x0A000002;  // 10.0.0.2
constexpr uint16_t kLocPort = 20049;
constexpr uint16_t kVlanTci =
    0x2064;  // 802.1Q tag (PCP 1, VID 100): 66-byte SYN, 2 beats at 512 bits

golden::Mac mac(uint8_t last) { return golden::Mac{{0x02, 0x00, 0x00, 0x00, 0x00, last}}; }

// A SYN from kRemIp:rem_port to kLocIp:kLocPort (nobody listens there), 802.1Q-tagged so
// that it takes two beats even at 512 bits (66 bytes): the golden SYN-ACK with the flags made
// SYN, ack 0, checksum redone.
Bytes syn_frame(uint16_t rem_port, uint32_t seq) {
  golden::TcpCtrlParams p;
  p.kind = golden::TcpCtrlKind::kSynAck;
  p.loc_mac = mac(0x02);  // builder's "local" = the SYN's sender
  p.rem_mac = mac(0x01);
  p.loc_ip = kRemIp;
  p.rem_ip = kLocIp;
  p.loc_port = rem_port;
  p.rem_port = kLocPort;
  p.seq = seq;
  p.ack = 0;
  p.ip_id = 0x1234;
  p.vlan_en = true;
  p.vlan_tci = kVlanTci;
  p.pad_min = false;
  Bytes f = golden::build_tcp_ctrl_frame(p);
  constexpr size_t kIp = 14 + 4, kTcp = kIp + 20;
  const size_t tcp_len = f.size() - kTcp;
  for (size_t i = 8; i < 12; ++i) f[kTcp + i] = 0;  // ack
  f[kTcp + 13] = golden::kTcpSyn;
  f[kTcp + 16] = f[kTcp + 17] = 0;
  Bytes pseudo(f.begin() + kIp + 12, f.begin() + kIp + 20);  // source and destination IP
  pseudo.insert(pseudo.end(),
                {0, 6, static_cast<uint8_t>(tcp_len >> 8), static_cast<uint8_t>(tcp_len)});
  pseudo.insert(pseudo.end(), f.begin() + kTcp, f.end());
  const uint16_t cs = golden::internet_checksum(pseudo);
  f[kTcp + 16] = static_cast<uint8_t>(cs >> 8);
  f[kTcp + 17] = static_cast<uint8_t>(cs);
  std::string why;
  const auto s = golden::parse_tcp_segment(f, &why);
  EXPECT_TRUE(s.has_value()) << why;
  if (s) {
    EXPECT_EQ(s->tcp_flags, golden::kTcpSyn);
  }
  return f;
}

template <typename Model, unsigned DataW>
class Core {
 public:
  static constexpr unsigned kWb = DataW / 8;

  Core() : rng_(DataW) {
    ctx_.randReset(2);
    m_ = std::make_unique<Model>(&ctx_, "core");
    m_->s_axil_awvalid = 0;
    m_->s_axil_wvalid = 0;
    m_->s_axil_arvalid = 0;
    m_->s_axil_bready = 1;
    m_->s_axil_rready = 1;
    m_->s_axil_awprot = 0;
    m_->s_axil_arprot = 0;
    m_->m_axi_awready = 0;
    m_->m_axi_wready = 0;
    m_->m_axi_bvalid = 0;
    m_->m_axi_arready = 0;
    m_->m_axi_rvalid = 0;
    m_->s_axis_rx_tvalid = 0;
    m_->m_axis_tx_tready = 1;
    m_->rst = 1;
    for (int i = 0; i < 4; ++i) cycle();
    m_->rst = 0;
    for (int n = 0; !field::STATUS::CM_READY.get(read(reg::STATUS)); ++n)
      if (n > 100000) {
        ADD_FAILURE() << "CM never ready";
        break;
      }
  }

  // One clock cycle with the inputs as they are; the checks and the TX capture happen at
  // the settled low phase, before the rising edge.
  void cycle() {
    m_->clk = 0;
    m_->eval();
    if (!m_->rst) check_and_capture();
    m_->clk = 1;
    m_->eval();
    ++cycles_;
  }

  void write(uint32_t addr, uint32_t data) {
    m_->s_axil_awaddr = static_cast<uint16_t>(addr);
    m_->s_axil_wdata = data;
    m_->s_axil_wstrb = 0xF;
    m_->s_axil_awvalid = 1;
    m_->s_axil_wvalid = 1;
    for (int n = 0;; ++n) {
      m_->clk = 0;
      m_->eval();
      const bool fire = m_->s_axil_awready && m_->s_axil_wready;
      cycle();
      if (fire) break;
      ASSERT_LT(n, 100) << "write not accepted";
    }
    m_->s_axil_awvalid = 0;
    m_->s_axil_wvalid = 0;
    cycle();  // B (bready = 1)
  }

  uint32_t read(uint32_t addr) {
    m_->s_axil_araddr = static_cast<uint16_t>(addr);
    m_->s_axil_arvalid = 1;
    for (int n = 0;; ++n) {
      m_->clk = 0;
      m_->eval();
      const bool fire = m_->s_axil_arready;
      cycle();
      if (fire) break;
      if (n > 100) {
        ADD_FAILURE() << "read not accepted";
        return 0;
      }
    }
    m_->s_axil_arvalid = 0;
    m_->clk = 0;
    m_->eval();
    EXPECT_TRUE(m_->s_axil_rvalid);
    const uint32_t v = m_->s_axil_rdata;
    cycle();
    return v;
  }

  // Beats [from, to) of a frame on s_axis_rx, one per cycle; tvalid low afterwards.
  void send_beats(const Bytes& f, size_t from, size_t to) {
    for (size_t b = from; b < to; ++b) {
      uint64_t keep = 0;
      for (unsigned i = 0; i < kWb; ++i) {
        const size_t k = b * kWb + i;
        set_byte(m_->s_axis_rx_tdata, i, k < f.size() ? f[k] : uint8_t{0xEE});
        if (k < f.size()) keep |= uint64_t{1} << i;
      }
      m_->s_axis_rx_tkeep =
          static_cast<std::remove_reference_t<decltype(m_->s_axis_rx_tkeep)>>(keep);
      m_->s_axis_rx_tlast = (b + 1) * kWb >= f.size();
      m_->s_axis_rx_tvalid = 1;
      cycle();
    }
    m_->s_axis_rx_tvalid = 0;
    m_->s_axis_rx_tlast = 0;
  }
  static size_t beats(const Bytes& f) { return (f.size() + kWb - 1) / kWb; }
  void send(const Bytes& f) { send_beats(f, 0, beats(f)); }

  void run(unsigned n) {
    for (unsigned i = 0; i < n; ++i) {
      if (random_tready_) m_->m_axis_tx_tready = rng_() & 1;
      cycle();
    }
    m_->m_axis_tx_tready = tready_hold_;
  }

  // Run until a frame has left on m_axis_tx (or `limit` cycles).
  std::optional<Bytes> next_tx(unsigned limit = 5000) {
    for (unsigned i = 0; i < limit && tx_frames_.empty(); ++i) run(1);
    if (tx_frames_.empty()) return std::nullopt;
    Bytes f = tx_frames_.front();
    tx_frames_.erase(tx_frames_.begin());
    return f;
  }

  void set_tready(bool r) {
    tready_hold_ = r;
    m_->m_axis_tx_tready = r;
  }

  Model& dut() { return *m_; }
  bool random_tready_ = false;
  std::vector<Bytes> tx_frames_;
  uint64_t cycles_ = 0;
  uint64_t tx_valid_cycles_ = 0;

 private:
  void check_and_capture() {
    Model& m = *m_;
    ASSERT_TRUE(m.s_axis_rx_tready) << "cycle " << cycles_;
    ASSERT_FALSE(m.m_axi_awvalid || m.m_axi_wvalid || m.m_axi_arvalid) << "unexpected DMA";
    if (m.m_axis_tx_tvalid) ++tx_valid_cycles_;
    // AXI-Stream: an offered beat stays, unchanged, until taken
    if (pending_) {
      ASSERT_TRUE(m.m_axis_tx_tvalid) << "m_axis_tx withdrew a beat, cycle " << cycles_;
      EXPECT_EQ(read_beat(), *pending_) << "m_axis_tx changed a waiting beat";
    }
    pending_.reset();
    if (!m.m_axis_tx_tvalid) return;
    const auto beat = read_beat();
    if (!m.m_axis_tx_tready) {
      pending_ = beat;
      return;
    }
    for (unsigned i = 0; i < kWb; ++i)
      if (axis::keep_bit(static_cast<uint64_t>(m.m_axis_tx_tkeep), i))
        cur_.push_back(axis::lane_byte(m.m_axis_tx_tdata, i));
    if (m.m_axis_tx_tlast) {
      tx_frames_.push_back(cur_);
      cur_.clear();
    }
  }
  Bytes read_beat() const {
    Bytes b(kWb + 9);
    for (unsigned i = 0; i < kWb; ++i) b[i] = axis::lane_byte(m_->m_axis_tx_tdata, i);
    const uint64_t keep = static_cast<uint64_t>(m_->m_axis_tx_tkeep);
    for (unsigned i = 0; i < 8; ++i) b[kWb + i] = static_cast<uint8_t>(keep >> (8 * i));
    b[kWb + 8] = m_->m_axis_tx_tlast;
    return b;
  }

  VerilatedContext ctx_;
  std::unique_ptr<Model> m_;
  std::mt19937_64 rng_;
  bool tready_hold_ = true;
  std::optional<Bytes> pending_;
  Bytes cur_;
};

struct Stats {
  uint32_t rx_frames, rx_bad, rx_not_tcp, rx_overflow, syn_no_listener, tx_frames;
  bool operator==(const Stats&) const = default;
};
template <typename C>
Stats stats(C& c) {
  return {c.read(reg::STAT_RX_FRAMES),       c.read(reg::STAT_RX_BAD),
          c.read(reg::STAT_RX_NOT_TCP),      c.read(reg::STAT_RX_OVERFLOW),
          c.read(reg::STAT_SYN_NO_LISTENER), c.read(reg::STAT_TX_FRAMES)};
}
std::ostream& operator<<(std::ostream& o, const Stats& s) {
  return o << "rx " << s.rx_frames << " bad " << s.rx_bad << " not_tcp " << s.rx_not_tcp << " ovf "
           << s.rx_overflow << " syn_no_lst " << s.syn_no_listener << " tx " << s.tx_frames;
}

// The RST|ACK the CM engine owes a SYN (seq `seq`, from port `rem_port`) without listener.
void expect_rst_for(const std::optional<Bytes>& f, uint16_t rem_port, uint32_t seq) {
  ASSERT_TRUE(f.has_value()) << "no frame on m_axis_tx";
  std::string why;
  const auto s = golden::parse_tcp_segment(*f, &why);
  ASSERT_TRUE(s.has_value()) << why;
  EXPECT_EQ(s->tcp_flags, golden::kTcpRst | 0x10);
  EXPECT_EQ(s->src_ip, kLocIp);
  EXPECT_EQ(s->dst_ip, kRemIp);
  EXPECT_EQ(s->src_port, kLocPort);
  EXPECT_EQ(s->dst_port, rem_port);
  EXPECT_EQ(s->seq, 0u);
  EXPECT_EQ(s->ack, seq + 1);
  EXPECT_EQ(s->src_mac, mac(0x01).b);
  EXPECT_EQ(s->dst_mac, mac(0x02).b);
  EXPECT_TRUE(s->vlan);
  EXPECT_EQ(s->vlan_tci, kVlanTci);
}

const uint32_t kEnable = field::CTRL::ENABLE.put(1);
const uint32_t kLoop = field::CTRL::ENABLE.put(1) | field::CTRL::LOOPBACK.put(1);

template <typename C>
void switching_test() {
  C c;
  EXPECT_EQ(c.read(reg::CTRL), 0u);
  c.write(reg::CTRL, kEnable);
  EXPECT_EQ(c.read(reg::CTRL), kEnable);
  c.random_tready_ = true;

  // normal mode: the answer leaves on m_axis_tx
  c.send(syn_frame(1000, 0x11111111));
  expect_rst_for(c.next_tx(), 1000, 0x11111111);
  EXPECT_EQ(stats(c), (Stats{1, 0, 0, 0, 1, 1}));

  // loopback: an arriving SYN is discarded whole, nothing is answered
  c.write(reg::CTRL, kLoop);
  EXPECT_EQ(c.read(reg::CTRL), kLoop);
  c.send(syn_frame(1001, 0x22222222));
  c.run(3000);
  EXPECT_TRUE(c.tx_frames_.empty());
  EXPECT_EQ(stats(c), (Stats{1, 0, 0, 1, 1, 1}));

  // off, then on again while a SYN is half received: the SYN is received whole, and its
  // RST|ACK goes into the core's own RX path instead of m_axis_tx
  c.write(reg::CTRL, kEnable);
  EXPECT_EQ(c.read(reg::CTRL), kEnable);
  const Bytes syn3 = syn_frame(1002, 0x33333333);
  const size_t half = C::beats(syn3) / 2;
  ASSERT_GE(half, 1u);
  c.send_beats(syn3, 0, half);
  c.write(reg::CTRL, kLoop);
  c.run(5);
  c.send_beats(syn3, half, C::beats(syn3));
  const uint64_t tx_valid_before = c.tx_valid_cycles_;
  c.run(3000);
  EXPECT_TRUE(c.tx_frames_.empty());
  EXPECT_EQ(c.tx_valid_cycles_, tx_valid_before) << "m_axis_tx_tvalid rose in loopback";
  // SYN + its looped RST|ACK received, both good TCP; the RST|ACK was transmitted (looped)
  EXPECT_EQ(stats(c), (Stats{3, 0, 0, 1, 2, 2}));

  // on, then off while a SYN is half received: that SYN is still discarded whole
  const Bytes syn4 = syn_frame(1003, 0x44444444);
  c.send_beats(syn4, 0, half);
  c.write(reg::CTRL, kEnable);
  c.run(5);
  c.send_beats(syn4, half, C::beats(syn4));
  c.run(3000);
  EXPECT_TRUE(c.tx_frames_.empty());
  EXPECT_EQ(stats(c), (Stats{3, 0, 0, 2, 2, 2}));

  // normal again
  c.send(syn_frame(1004, 0x55555555));
  expect_rst_for(c.next_tx(), 1004, 0x55555555);
  c.run(500);
  EXPECT_TRUE(c.tx_frames_.empty());
  EXPECT_EQ(stats(c), (Stats{4, 0, 0, 2, 3, 3}));
}

TEST(CoreLoopback, SwitchingW64) { switching_test<Core<Vbouncer_core_w64, 64>>(); }
TEST(CoreLoopback, SwitchingW512) { switching_test<Core<Vbouncer_core_w512, 512>>(); }

template <typename C>
void stalled_tx_test() {
  C c;
  c.write(reg::CTRL, kEnable);
  c.set_tready(false);
  c.send(syn_frame(2000, 0x66666666));
  for (int n = 0; !c.dut().m_axis_tx_tvalid; ++n) {
    c.run(1);
    ASSERT_LT(n, 5000) << "no RST|ACK offered";
  }
  // switch while the RST|ACK waits: it is neither withdrawn nor looped (checked every cycle)
  c.write(reg::CTRL, kLoop);
  c.run(200);
  EXPECT_TRUE(c.dut().m_axis_tx_tvalid);
  EXPECT_TRUE(c.tx_frames_.empty());
  c.set_tready(true);
  expect_rst_for(c.next_tx(), 2000, 0x66666666);
  // now looped: the RX side already discards arriving frames
  c.send(syn_frame(2001, 0x77777777));
  c.run(2000);
  EXPECT_TRUE(c.tx_frames_.empty());
  EXPECT_FALSE(c.dut().m_axis_tx_tvalid);
  EXPECT_EQ(stats(c), (Stats{1, 0, 0, 1, 1, 1}));
}

TEST(CoreLoopback, StalledTxFrameW64) { stalled_tx_test<Core<Vbouncer_core_w64, 64>>(); }
TEST(CoreLoopback, StalledTxFrameW512) { stalled_tx_test<Core<Vbouncer_core_w512, 512>>(); }

}  // namespace
