// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// The Vitis kernel top (rtl/kernel/bouncer_kernel) across its two clocks: DATA_W 64,
// CTX_DEPTH_LOG2 6, ASYNC_STREAMS 1 (s_axis_rx and m_axis_tx on ap_clk_2 behind the two async
// FIFOs, everything else on ap_clk). One time base in picoseconds drives ap_clk and ap_clk_2
// at unrelated periods (4.000 ns vs 3.103 ns both ways, equal clocks in phase and out of
// phase, 6.4 ns vs 2.0 ns both ways); every test runs at every ratio. Each
// domain samples its handshakes just before its own rising edge and drives just after it.
// The RX side behaves like a MAC: a frame's beats go out back to back and s_axis_rx_tready is
// not waited for (the kernel documents it as constant 1, which is checked). A small AXI4
// slave serves m_axi_host from a host-memory arena, so the real driver (hostsw) runs on the
// kernel through a hal::Device in this file.
// Checked on every edge: m_axis_tx never withdraws or changes a beat it offered, and once a
// frame has started it has a beat on every edge up to its tlast (store and forward: no gap
// inside a frame, whatever tready does); no DMA unless the test uses the driver.
// Tests:
// - reset release in both orders: the core leaves reset exactly 3 ap_clk edges after the
//   later of ap_rst_n / ap_rst_n_2 rises (CYCLE_LO read back), ID/VERSION/CAPS read through
//   s_axi_control, STATUS.CM_READY rises; ap_rst_n_2 alone resets the ap_clk domain too;
// - a SYN to a port without a listener is answered by a RST|ACK on m_axis_tx (golden parser:
//   checksums, addresses, seq 0 / ack SEG.SEQ + 1), counters read via AXI-Lite;
// - many SYNs with m_axis_tx_tready random: every RST|ACK leaves intact, in order;
// - CTRL.LOOPBACK through the kernel: the driver's loopback self-test passes (every predicted
//   frame and counter) and nothing leaves m_axis_tx meanwhile; a SYN arriving in loopback is
//   discarded; with the loop off again a SYN is answered on m_axis_tx;
// - an RX burst of full-size frames faster than ap_clk drains it overflows the RX CDC FIFO
//   (2048 beats): frames are dropped whole (STAT_RX_BAD stays 0, every SYN that got through
//   is answered), and with ap_clk the faster clock the same burst loses nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <deque>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "bouncer/device.hpp"
#include "bouncer/hal.hpp"
#include "bouncer/regs.hpp"
#include "bouncer/selftest.hpp"
#include "golden/frame_parser.hpp"
#include "golden/reject_frame.hpp"
#include "golden/tcp_ctrl.hpp"

// Verilator 5.006's headers trip -Wunused-parameter; they are not ours.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "Vbouncer_kernel_w64.h"
#include "axis_lanes.hpp"
#include "verilated.h"
#pragma GCC diagnostic pop

namespace {

namespace R = bouncer::regs;
namespace reg = bouncer::regs::reg;
namespace field = bouncer::regs::field;

using Bytes = std::vector<uint8_t>;
constexpr unsigned kWb = 8;              // DATA_W 64
constexpr unsigned kCtxLog2 = 6;         // -GCTX_DEPTH_LOG2
constexpr unsigned kRxFifoBeats = 2048;  // RX_FIFO_LOG2 = 11 at DATA_W 64

constexpr uint32_t kLocIp = 0x0A000001;  // 10.0.0.1
constexpr uint32_t kRemIp = 0x0A000002;  // 10.0.0.2
constexpr uint16_t kLocPort = 20049;     // nobody listens there

golden::Mac mac(uint8_t last) { return golden::Mac{{0x02, 0x00, 0x00, 0x00, 0x00, last}}; }

// Fix the IPv4 header checksum and the TCP checksum of an Ethernet/IPv4/TCP frame (no VLAN)
// whose datagram ends at `end`.
void fix_checksums(Bytes& f, size_t end) {
  constexpr size_t kIp = 14, kTcp = kIp + 20;
  f[kIp + 10] = f[kIp + 11] = 0;
  const uint16_t ipcs = golden::internet_checksum(std::span(f).subspan(kIp, 20));
  f[kIp + 10] = static_cast<uint8_t>(ipcs >> 8);
  f[kIp + 11] = static_cast<uint8_t>(ipcs);
  const size_t tcp_len = end - kTcp;
  f[kTcp + 16] = f[kTcp + 17] = 0;
  Bytes pseudo(f.begin() + kIp + 12, f.begin() + kIp + 20);
  pseudo.insert(pseudo.end(),
                {0, 6, static_cast<uint8_t>(tcp_len >> 8), static_cast<uint8_t>(tcp_len)});
  pseudo.insert(pseudo.end(), f.begin() + kTcp, f.begin() + static_cast<std::ptrdiff_t>(end));
  const uint16_t cs = golden::internet_checksum(pseudo);
  f[kTcp + 16] = static_cast<uint8_t>(cs >> 8);
  f[kTcp + 17] = static_cast<uint8_t>(cs);
}

// A TCP segment from kRemIp:rem_port to kLocIp:kLocPort with `flags` and `payload` bytes of
// payload, no options; zero bytes after the datagram up to the 60-byte minimum, as a MAC pads.
Bytes tcp_frame(uint16_t rem_port, uint32_t seq, uint8_t flags, size_t payload, uint8_t fill) {
  Bytes f(std::max<size_t>(14 + 20 + 20 + payload, golden::kEthMinFrame), 0);
  const auto put16 = [&](size_t o, uint32_t v) {
    f[o] = static_cast<uint8_t>(v >> 8);
    f[o + 1] = static_cast<uint8_t>(v);
  };
  const auto put32 = [&](size_t o, uint32_t v) {
    put16(o, v >> 16);
    put16(o + 2, v & 0xFFFF);
  };
  std::memcpy(&f[0], mac(0x01).b.data(), 6);  // to the kernel
  std::memcpy(&f[6], mac(0x02).b.data(), 6);
  put16(12, 0x0800);
  f[14] = 0x45;
  put16(16, static_cast<uint32_t>(20 + 20 + payload));
  put16(18, 0x4321);
  put16(20, 0x4000);
  f[22] = 64;
  f[23] = 6;
  put32(26, kRemIp);
  put32(30, kLocIp);
  put16(34, rem_port);
  put16(36, kLocPort);
  put32(38, seq);
  put32(42, (flags & golden::kTcpAck) ? 0x01020304u : 0u);
  f[46] = 0x50;
  f[47] = flags;
  put16(48, 0xFFFF);
  for (size_t i = 0; i < payload; ++i) f[54 + i] = static_cast<uint8_t>(fill + 7 * i);
  fix_checksums(f, 14 + 20 + 20 + payload);
  std::string why;
  const auto s = golden::parse_tcp_segment(f, &why);
  EXPECT_TRUE(s.has_value()) << why;
  return f;
}

// A SYN (SYN alone, no payload: a padded 60-byte frame, 8 beats).
Bytes syn_frame(uint16_t rem_port, uint32_t seq) {
  return tcp_frame(rem_port, seq, golden::kTcpSyn, 0, 0);
}
// A full-size data segment (ACK|PSH, 1460 bytes: a 1514-byte frame, 190 beats) to the port
// nobody listens on: the CM engine drops it silently (docs/cm-state-machine.md, "no node").
Bytes data_frame(uint16_t rem_port, uint32_t seq, uint8_t fill) {
  return tcp_frame(rem_port, seq, golden::kTcpAck | golden::kTcpPsh, 1460, fill);
}

// The RST|ACK the CM engine owes a SYN (seq `seq`, from `rem_port`) without listener.
void expect_rst_for(const Bytes& f, uint16_t rem_port, uint32_t seq) {
  std::string why;
  const auto s = golden::parse_tcp_segment(f, &why);
  ASSERT_TRUE(s.has_value()) << why;
  EXPECT_EQ(s->tcp_flags, golden::kTcpRst | golden::kTcpAck);
  EXPECT_EQ(s->src_ip, kLocIp);
  EXPECT_EQ(s->dst_ip, kRemIp);
  EXPECT_EQ(s->src_port, kLocPort);
  EXPECT_EQ(s->dst_port, rem_port);
  EXPECT_EQ(s->seq, 0u);
  EXPECT_EQ(s->ack, seq + 1);
  EXPECT_EQ(s->src_mac, mac(0x01).b);
  EXPECT_EQ(s->dst_mac, mac(0x02).b);
  EXPECT_FALSE(s->vlan);
  EXPECT_TRUE(s->payload.empty());
}

struct Clock {
  uint64_t period = 0;  // ps
  uint64_t rise = 0, fall = 0;
  void init(uint64_t first_rise) {
    rise = first_rise;
    fall = first_rise + period / 2;
  }
};

// ap_clk period, ap_clk_2 period, offset of ap_clk_2's first edge (ps)
struct Ratio {
  uint64_t ap_ps, ap2_ps, ap2_phase;
};
// 250 vs 322.27 MHz both ways, equal clocks in phase and out of phase, 1:3.2 both ways
constexpr Ratio kRatios[] = {{4000, 3103, 1234}, {3103, 4000, 777}, {4000, 4000, 0},
                             {4000, 4000, 1999}, {6400, 2000, 333}, {2000, 6400, 900}};

std::string ratio_name(const Ratio& r) {
  return "ap_clk " + std::to_string(r.ap_ps) + " ps, ap_clk_2 " + std::to_string(r.ap2_ps) + " ps";
}

// ---------------------------------------------------------------------------------------
class Kernel {
 public:
  static constexpr uint64_t kMemBase = 0x0000'0010'0000'0000ull;  // above 32 bits
  static constexpr size_t kMemBytes = 4u << 20;

  Kernel(const Ratio& r, uint64_t seed) : rng_(seed), mem_(kMemBytes) {
    ctx_.randReset(2);
    m_ = std::make_unique<Vbouncer_kernel_w64>(&ctx_, "kernel");
    ap_.period = r.ap_ps;
    ap2_.period = r.ap2_ps;
    ap_.init(r.ap_ps);
    ap2_.init(r.ap2_ps + r.ap2_phase);
    auto& m = *m_;
    m.ap_clk = 0;
    m.ap_clk_2 = 0;
    m.ap_rst_n = 0;
    m.ap_rst_n_2 = 0;
    m.s_axi_control_awvalid = 0;
    m.s_axi_control_wvalid = 0;
    m.s_axi_control_arvalid = 0;
    m.s_axi_control_bready = 1;
    m.s_axi_control_rready = 1;
    m.s_axi_control_wstrb = 0xF;
    m.m_axi_host_awready = 1;
    m.m_axi_host_wready = 1;
    m.m_axi_host_arready = 1;
    m.m_axi_host_bvalid = 0;
    m.m_axi_host_rvalid = 0;
    m.s_axis_rx_tvalid = 0;
    m.m_axis_tx_tready = 1;
    m.eval();
  }

  // ---- time
  void step() {
    auto& m = *m_;
    const uint64_t t = std::min(std::min(ap_.rise, ap_.fall), std::min(ap2_.rise, ap2_.fall));
    now_ = t;
    bool fell = false;
    if (ap_.fall == t) {
      m.ap_clk = 0;
      ap_.fall += ap_.period;
      fell = true;
    }
    if (ap2_.fall == t) {
      m.ap_clk_2 = 0;
      ap2_.fall += ap2_.period;
      fell = true;
    }
    if (fell) m.eval();
    const bool r1 = ap_.rise == t, r2 = ap2_.rise == t;
    if (!r1 && !r2) return;
    if (r1) sample_ap();
    if (r2) sample_ap2();
    if (r1) {
      m.ap_clk = 1;
      ap_.rise += ap_.period;
      ++ap_cycles_;
    }
    if (r2) {
      m.ap_clk_2 = 1;
      ap2_.rise += ap2_.period;
    }
    m.eval();
    if (r1) drive_ap();
    if (r2) drive_ap2();
    m.eval();
  }
  void run_ap_cycles(uint64_t n) {
    const uint64_t end = ap_cycles_ + n;
    while (ap_cycles_ < end) step();
  }
  void run_ps(uint64_t ps) {
    const uint64_t end = now_ + ps;
    while (now_ < end) step();
  }

  // ---- resets (each applied right after an edge of its own clock)
  void set_resets(bool ap_rst_n, bool ap_rst_n_2) {
    want_rst_n_ = ap_rst_n;
    want_rst_n_2_ = ap_rst_n_2;
    while (m_->ap_rst_n != want_rst_n_ || m_->ap_rst_n_2 != want_rst_n_2_) step();
  }
  // Both resets high: ap_clk rising edges since the later one rose.
  uint64_t edges_since_release() const { return edges_since_release_; }

  // ---- AXI4-Lite master (ap_clk)
  void write(uint32_t addr, uint32_t data) {
    lite_ = Lite{};
    lite_.active = true;
    lite_.write = true;
    lite_.addr = addr;
    lite_.data = data;
    run_lite();
  }
  uint32_t read(uint32_t addr) {
    lite_ = Lite{};
    lite_.active = true;
    lite_.addr = addr;
    run_lite();
    return lite_.data;
  }
  // edges_since_release() at the edge that took the last read's address
  uint64_t last_ar_edge() const { return lite_.ar_edge; }

  // ---- streams (ap_clk_2)
  void send(const Bytes& f, unsigned idle_after = 0) { rx_queue_.push_back({f, idle_after}); }
  bool rx_idle() const { return rx_queue_.empty() && !rx_cur_; }
  void wait_rx_sent() {
    for (uint64_t n = 0; !rx_idle() || m_->s_axis_rx_tvalid; ++n) {
      step();
      ASSERT_LT(n, 100'000'000u) << "RX never drained";
    }
  }
  // Run until `n` frames have left m_axis_tx (or `limit_ps`); true if they did.
  bool wait_tx(size_t n, uint64_t limit_ps = 200'000'000) {
    const uint64_t end = now_ + limit_ps;
    while (tx_frames_.size() < n && now_ < end) step();
    return tx_frames_.size() >= n;
  }
  void set_tready_p(double p) { tready_p_ = p; }

  // ---- host memory for m_axi_host
  std::span<std::byte> mem(uint64_t addr, size_t len) {
    EXPECT_TRUE(addr >= kMemBase && addr + len <= kMemBase + kMemBytes)
        << std::hex << "DMA outside host memory: 0x" << addr;
    if (addr < kMemBase || addr + len > kMemBase + kMemBytes) return {};
    return std::span(mem_).subspan(addr - kMemBase, len);
  }
  uint64_t alloc(size_t bytes, size_t align) {
    mem_top_ = (mem_top_ + align - 1) & ~(uint64_t{align} - 1);
    const uint64_t a = kMemBase + mem_top_;
    mem_top_ += bytes;
    EXPECT_LE(mem_top_, kMemBytes) << "host memory arena exhausted";
    std::fill_n(mem_.begin() + static_cast<std::ptrdiff_t>(a - kMemBase), bytes, std::byte{0});
    return a;
  }

  Vbouncer_kernel_w64& dut() { return *m_; }
  uint64_t ap_cycles() const { return ap_cycles_; }

  bool allow_dma_ = false;
  std::vector<Bytes> tx_frames_;  // frames that left m_axis_tx, in order
  uint64_t tx_valid_edges_ = 0;   // ap_clk_2 edges with m_axis_tx_tvalid high
  uint64_t rx_beats_sent_ = 0;

 private:
  struct Lite {
    bool active = false, write = false;
    bool aw_done = false, w_done = false, ar_done = false;
    uint32_t addr = 0, data = 0;
    uint64_t ar_edge = 0;
  };
  struct RxFrame {
    Bytes bytes;
    unsigned idle_after;
  };
  struct Burst {
    uint64_t addr;
    unsigned beats_left;
    unsigned id;
  };

  void run_lite() {
    for (uint64_t n = 0; lite_.active; ++n) {
      step();
      if (n > 100'000) {
        ADD_FAILURE() << "AXI-Lite access to 0x" << std::hex << lite_.addr << " never completed";
        lite_.active = false;
      }
    }
  }

  bool in_reset() const { return !m_->ap_rst_n || !m_->ap_rst_n_2; }

  // Before an ap_clk rising edge: every handshake that this edge completes.
  void sample_ap() {
    auto& m = *m_;
    if (!in_reset()) ++edges_since_release_;
    // AXI4-Lite
    if (lite_.active) {
      if (lite_.write) {
        if (m.s_axi_control_awvalid && m.s_axi_control_awready) lite_.aw_done = true;
        if (m.s_axi_control_wvalid && m.s_axi_control_wready) lite_.w_done = true;
        if (m.s_axi_control_bvalid) {  // bready = 1
          EXPECT_TRUE(lite_.aw_done && lite_.w_done) << "B before the write was taken";
          EXPECT_EQ(m.s_axi_control_bresp, 0u);
          lite_.active = false;
        }
      } else {
        if (m.s_axi_control_rvalid && lite_.ar_done) {  // rready = 1
          EXPECT_EQ(m.s_axi_control_rresp, 0u);
          lite_.data = m.s_axi_control_rdata;
          lite_.active = false;
        }
        if (m.s_axi_control_arvalid && m.s_axi_control_arready) {
          lite_.ar_done = true;
          lite_.ar_edge = edges_since_release_;
        }
      }
    }
    // AXI4 slave (host memory): AR, AW and W always ready; R and B one at a time. In reset
    // the core's outputs are not defined yet (random initial state): nothing is sampled.
    if (in_reset()) {
      rd_.clear();
      wr_.clear();
      w_beats_.clear();
      b_.clear();
      return;
    }
    const bool dma = m.m_axi_host_arvalid || m.m_axi_host_awvalid || m.m_axi_host_wvalid;
    if (dma && !allow_dma_) {
      ADD_FAILURE() << "unexpected DMA at " << now_ << " ps";
      allow_dma_ = true;  // report once, then serve it
    }
    if (m.m_axi_host_arvalid) {
      EXPECT_EQ(m.m_axi_host_arsize, 3u);
      EXPECT_EQ(m.m_axi_host_arburst, 1u);
      rd_.push_back({m.m_axi_host_araddr, m.m_axi_host_arlen + 1u, m.m_axi_host_arid});
    }
    if (m.m_axi_host_rvalid && m.m_axi_host_rready) {
      rd_.front().addr += 8;
      if (--rd_.front().beats_left == 0) rd_.pop_front();
    }
    if (m.m_axi_host_awvalid) {
      EXPECT_EQ(m.m_axi_host_awsize, 3u);
      EXPECT_EQ(m.m_axi_host_awburst, 1u);
      wr_.push_back({m.m_axi_host_awaddr, m.m_axi_host_awlen + 1u, m.m_axi_host_awid});
    }
    if (m.m_axi_host_wvalid)
      w_beats_.push_back(
          {m.m_axi_host_wdata, m.m_axi_host_wstrb, static_cast<bool>(m.m_axi_host_wlast)});
    if (m.m_axi_host_bvalid && m.m_axi_host_bready) b_.pop_front();
    // W beats against the oldest write burst
    while (!wr_.empty() && !w_beats_.empty()) {
      const WBeat w = w_beats_.front();
      w_beats_.pop_front();
      Burst& b = wr_.front();
      const auto dst = mem(b.addr, 8);
      if (!dst.empty())
        for (unsigned i = 0; i < 8; ++i)
          if ((w.strb >> i) & 1) dst[i] = static_cast<std::byte>(w.data >> (8 * i));
      b.addr += 8;
      const bool last = --b.beats_left == 0;
      EXPECT_EQ(w.last, last) << "wlast";
      if (last) {
        b_.push_back(b.id);
        wr_.pop_front();
      }
    }
  }

  // After an ap_clk rising edge: the next values of everything driven in that domain.
  void drive_ap() {
    auto& m = *m_;
    m.ap_rst_n = want_rst_n_;
    if (!m.ap_rst_n) edges_since_release_ = 0;
    const bool w = lite_.active && lite_.write, r = lite_.active && !lite_.write;
    m.s_axi_control_awvalid = w && !lite_.aw_done;
    m.s_axi_control_wvalid = w && !lite_.w_done;
    m.s_axi_control_awaddr = static_cast<uint16_t>(lite_.addr);
    m.s_axi_control_wdata = lite_.data;
    m.s_axi_control_arvalid = r && !lite_.ar_done;
    m.s_axi_control_araddr = static_cast<uint16_t>(lite_.addr);
    m.m_axi_host_rvalid = !rd_.empty();
    if (!rd_.empty()) {
      uint64_t v = 0;
      const auto src = mem(rd_.front().addr, 8);
      for (size_t i = 0; i < src.size(); ++i)
        v |= uint64_t{std::to_integer<uint8_t>(src[i])} << (8 * i);
      m.m_axi_host_rdata = v;
      m.m_axi_host_rid = rd_.front().id;
      m.m_axi_host_rresp = 0;
      m.m_axi_host_rlast = rd_.front().beats_left == 1;
    }
    m.m_axi_host_bvalid = !b_.empty();
    if (!b_.empty()) {
      m.m_axi_host_bid = b_.front();
      m.m_axi_host_bresp = 0;
    }
  }

  // Before an ap_clk_2 rising edge: the RX beat on the bus is taken (a MAC does not wait),
  // the TX beat checked and taken if tready.
  void sample_ap2() {
    auto& m = *m_;
    if (in_reset()) {
      tx_pending_.reset();
      tx_cur_.clear();
      return;
    }
    EXPECT_TRUE(m.s_axis_rx_tready) << "s_axis_rx_tready low at " << now_ << " ps";
    if (m.s_axis_rx_tvalid) ++rx_beats_sent_;
    if (m.m_axis_tx_tvalid) ++tx_valid_edges_;
    if (tx_pending_) {
      ASSERT_TRUE(m.m_axis_tx_tvalid) << "m_axis_tx withdrew a beat at " << now_ << " ps";
      EXPECT_EQ(tx_beat(), *tx_pending_) << "m_axis_tx changed a waiting beat";
    }
    tx_pending_.reset();
    EXPECT_TRUE(tx_cur_.empty() || m.m_axis_tx_tvalid)
        << "gap inside a TX frame at " << now_ << " ps";
    if (!m.m_axis_tx_tvalid) return;
    if (!m.m_axis_tx_tready) {
      tx_pending_ = tx_beat();
      return;
    }
    const uint8_t keep = m.m_axis_tx_tkeep;
    EXPECT_TRUE(m.m_axis_tx_tlast ? (keep != 0 && (keep & (keep + 1)) == 0) : keep == 0xFF)
        << "tkeep " << unsigned{keep};
    for (unsigned i = 0; i < kWb; ++i)
      if (axis::keep_bit(keep, i)) tx_cur_.push_back(axis::lane_byte(m.m_axis_tx_tdata, i));
    if (m.m_axis_tx_tlast) {
      tx_frames_.push_back(tx_cur_);
      tx_cur_.clear();
    }
  }

  void drive_ap2() {
    auto& m = *m_;
    m.ap_rst_n_2 = want_rst_n_2_;
    if (!m.ap_rst_n_2) edges_since_release_ = 0;
    m.m_axis_tx_tready = std::bernoulli_distribution(tready_p_)(rng_);
    // RX: the next beat of the current frame, or idle
    if (!rx_cur_ && rx_idle_ > 0) --rx_idle_;
    if (!rx_cur_ && rx_idle_ == 0 && !rx_queue_.empty() && !in_reset()) {
      rx_cur_ = rx_queue_.front();
      rx_queue_.pop_front();
      rx_off_ = 0;
    }
    if (!rx_cur_) {
      m.s_axis_rx_tvalid = 0;
      m.s_axis_rx_tdata = rng_();  // garbage while idle
      m.s_axis_rx_tlast = rng_() & 1;
      return;
    }
    const Bytes& f = rx_cur_->bytes;
    uint64_t d = 0;
    uint8_t keep = 0;
    for (unsigned i = 0; i < kWb; ++i) {
      const size_t k = rx_off_ + i;
      const uint8_t b = k < f.size() ? f[k] : static_cast<uint8_t>(rng_());
      d |= uint64_t{b} << (8 * i);
      if (k < f.size()) keep |= static_cast<uint8_t>(1u << i);
    }
    m.s_axis_rx_tdata = d;
    m.s_axis_rx_tkeep = keep;
    m.s_axis_rx_tvalid = 1;
    rx_off_ += kWb;
    m.s_axis_rx_tlast = rx_off_ >= f.size();
    if (rx_off_ >= f.size()) {
      rx_idle_ = rx_cur_->idle_after;
      rx_cur_.reset();
    }
  }

  Bytes tx_beat() const {
    Bytes b(kWb + 2);
    for (unsigned i = 0; i < kWb; ++i) b[i] = axis::lane_byte(m_->m_axis_tx_tdata, i);
    b[kWb] = m_->m_axis_tx_tkeep;
    b[kWb + 1] = m_->m_axis_tx_tlast;
    return b;
  }

  struct WBeat {
    uint64_t data;
    uint8_t strb;
    bool last;
  };

  VerilatedContext ctx_;
  std::unique_ptr<Vbouncer_kernel_w64> m_;
  std::mt19937_64 rng_;
  Clock ap_, ap2_;
  uint64_t now_ = 0, ap_cycles_ = 0, edges_since_release_ = 0;
  bool want_rst_n_ = false, want_rst_n_2_ = false;
  Lite lite_;
  // streams
  std::deque<RxFrame> rx_queue_;
  std::optional<RxFrame> rx_cur_;
  size_t rx_off_ = 0;
  unsigned rx_idle_ = 0;
  double tready_p_ = 1.0;
  std::optional<Bytes> tx_pending_;
  Bytes tx_cur_;
  // host memory
  std::vector<std::byte> mem_;
  uint64_t mem_top_ = 0;
  std::deque<Burst> rd_, wr_;
  std::deque<WBeat> w_beats_;
  std::deque<unsigned> b_;
};

// CYCLE_LO counts ap_clk cycles from the first edge out of reset: the edge that takes the
// read (edge h after both resets are high) returns h - 1 - 3 when the kernel leaves reset
// exactly 3 ap_clk edges after the release. (A read taken while the core is still in reset
// is lost, so the read waits 5 edges.)
void expect_release_3_edges(Kernel& k) {
  k.run_ap_cycles(5);
  const uint32_t c = k.read(reg::CYCLE_LO);
  ASSERT_GE(k.last_ar_edge(), 5u);
  EXPECT_EQ(c, k.last_ar_edge() - 4) << "reset not released 3 ap_clk edges after both resets";
}

// Both resets released (ap_rst_n first, or ap_rst_n_2 first), the core out of reset and
// swept: the CYCLE_LO check proves that the kernel left reset 3 ap_clk edges after the later
// reset rose.
void bring_up(Kernel& k, bool ap_first = true) {
  k.set_resets(false, false);
  k.run_ps(20'000);
  if (ap_first) {
    k.set_resets(true, false);
    k.run_ps(50'000);  // the core stays in reset while ap_rst_n_2 is low
  } else {
    k.set_resets(false, true);
    k.run_ps(50'000);
  }
  k.set_resets(true, true);
  expect_release_3_edges(k);
  for (int n = 0; !field::STATUS::CM_READY.get(k.read(reg::STATUS)); ++n)
    if (n > 10'000) {
      ADD_FAILURE() << "CM never ready";
      break;
    }
}

struct Stats {
  uint32_t rx_frames, rx_bad, rx_not_tcp, rx_overflow, syn_no_listener, rst_tx, tx_frames;
  bool operator==(const Stats&) const = default;
};
Stats stats(Kernel& k) {
  return {k.read(reg::STAT_RX_FRAMES),       k.read(reg::STAT_RX_BAD),
          k.read(reg::STAT_RX_NOT_TCP),      k.read(reg::STAT_RX_OVERFLOW),
          k.read(reg::STAT_SYN_NO_LISTENER), k.read(reg::STAT_RST_TX),
          k.read(reg::STAT_TX_FRAMES)};
}
std::ostream& operator<<(std::ostream& o, const Stats& s) {
  return o << "{rx " << s.rx_frames << " bad " << s.rx_bad << " not_tcp " << s.rx_not_tcp << " ovf "
           << s.rx_overflow << " syn_no_lst " << s.syn_no_listener << " rst_tx " << s.rst_tx
           << " tx " << s.tx_frames << "}";
}

const uint32_t kEnable = field::CTRL::ENABLE.put(1);
const uint32_t kLoop = field::CTRL::ENABLE.put(1) | field::CTRL::LOOPBACK.put(1);

// ---------------------------------------------------------------------------------------
TEST(KernelCdc, ResetAndRegisters) {
  uint64_t seed = 1;
  for (const Ratio& r : kRatios)
    for (bool ap_first : {true, false}) {
      SCOPED_TRACE(ratio_name(r) + (ap_first ? ", ap_rst_n first" : ", ap_rst_n_2 first"));
      Kernel k(r, seed++);
      bring_up(k, ap_first);
      EXPECT_EQ(k.read(reg::ID), R::kIdValue);
      const uint32_t v = k.read(reg::VERSION);
      EXPECT_EQ(field::VERSION::MAJOR.get(v), R::kVersionMajor);
      EXPECT_EQ(field::VERSION::MINOR.get(v), R::kVersionMinor);
      EXPECT_EQ(field::VERSION::PATCH.get(v), R::kVersionPatch);
      const uint32_t caps = k.read(reg::CAPS);
      EXPECT_EQ(field::CAPS::DATA_BYTES.get(caps), kWb);
      EXPECT_EQ(field::CAPS::CTX_LOG2.get(caps), kCtxLog2);
      k.write(reg::SCRATCH, 0xA5C3'0F96);
      EXPECT_EQ(k.read(reg::SCRATCH), 0xA5C3'0F96u);
      EXPECT_EQ(k.read(reg::CTRL), 0u);
      EXPECT_EQ(stats(k), (Stats{0, 0, 0, 0, 0, 0, 0}));

      // a SYN answered, then ap_rst_n_2 alone pulsed: the ap_clk domain is reset too
      // (counters and SCRATCH back to 0, CYCLE_LO restarts 3 edges after the release)
      k.write(reg::CTRL, kEnable);
      k.send(syn_frame(1000, 0x1000));
      ASSERT_TRUE(k.wait_tx(1));
      EXPECT_EQ(k.read(reg::STAT_SYN_NO_LISTENER), 1u);
      k.set_resets(true, false);
      k.run_ps(30'000);
      k.set_resets(true, true);
      expect_release_3_edges(k);
      EXPECT_EQ(k.read(reg::SCRATCH), 0u);
      EXPECT_EQ(k.read(reg::CTRL), 0u);
      EXPECT_EQ(stats(k), (Stats{0, 0, 0, 0, 0, 0, 0}));
      for (int n = 0; !field::STATUS::CM_READY.get(k.read(reg::STATUS)); ++n)
        ASSERT_LT(n, 10'000) << "CM never ready after the second reset";
      // and works again
      k.write(reg::CTRL, kEnable);
      k.send(syn_frame(1001, 0x2000));
      ASSERT_TRUE(k.wait_tx(2));
      expect_rst_for(k.tx_frames_[1], 1001, 0x2000);
    }
}

// One SYN to a port without a listener: RST|ACK on m_axis_tx, counters.
TEST(KernelCdc, SynWithoutListenerGetsRst) {
  uint64_t seed = 10;
  for (const Ratio& r : kRatios) {
    SCOPED_TRACE(ratio_name(r));
    Kernel k(r, seed++);
    bring_up(k);
    k.write(reg::CTRL, kEnable);
    k.send(syn_frame(4242, 0xDEAD'BEEF));
    ASSERT_TRUE(k.wait_tx(1)) << "no RST|ACK";
    expect_rst_for(k.tx_frames_[0], 4242, 0xDEAD'BEEF);
    EXPECT_EQ(k.tx_frames_[0].size(), golden::kEthMinFrame);
    k.run_ap_cycles(2000);
    EXPECT_EQ(k.tx_frames_.size(), 1u);
    EXPECT_EQ(stats(k), (Stats{1, 0, 0, 0, 1, 1, 1}));
    EXPECT_EQ(k.read(reg::STAT_TX_BYTES), golden::kEthMinFrame);
  }
}

// Back-to-back SYNs while m_axis_tx_tready is random: every RST|ACK leaves intact and in
// order, none is lost (the TX CDC FIFO back-pressures the core), no gap inside a frame.
TEST(KernelCdc, TxBackpressureKeepsFramesWhole) {
  uint64_t seed = 20;
  for (const Ratio& r : kRatios)
    for (double p : {0.5, 0.15}) {
      SCOPED_TRACE(ratio_name(r) + ", tready p " + std::to_string(p));
      Kernel k(r, seed);
      std::mt19937 rng(static_cast<uint32_t>(seed++));
      bring_up(k);
      k.write(reg::CTRL, kEnable);
      k.set_tready_p(p);
      constexpr unsigned kN = 40;
      std::vector<uint32_t> seqs;
      for (unsigned i = 0; i < kN; ++i) {
        seqs.push_back(static_cast<uint32_t>(rng()));
        k.send(syn_frame(static_cast<uint16_t>(3000 + i), seqs.back()), rng() % 4);
      }
      ASSERT_TRUE(k.wait_tx(kN)) << k.tx_frames_.size() << " RST|ACKs";
      for (unsigned i = 0; i < kN; ++i) {
        SCOPED_TRACE("frame " + std::to_string(i));
        expect_rst_for(k.tx_frames_[i], static_cast<uint16_t>(3000 + i), seqs[i]);
      }
      k.set_tready_p(1.0);
      k.run_ap_cycles(2000);
      EXPECT_EQ(k.tx_frames_.size(), kN);
      EXPECT_EQ(stats(k), (Stats{kN, 0, 0, 0, kN, kN, kN}));
    }
}

// ---------------------------------------------------------------------------------------
// hal::Device on the kernel model: registers through s_axi_control, DMA buffers in the
// arena m_axi_host serves, time in ap_clk cycles.
class KernelHal final : public bouncer::hal::Device {
 public:
  explicit KernelHal(Kernel& k) : k_(k) {}
  uint32_t read32(uint32_t offset) override { return k_.read(offset); }
  void write32(uint32_t offset, uint32_t value) override { k_.write(offset, value); }
  bouncer::Result<std::unique_ptr<bouncer::hal::DmaBuffer>> alloc_dma(size_t bytes,
                                                                      size_t align) override {
    const uint64_t a = k_.alloc(bytes, std::max<size_t>(align, 8));
    return std::unique_ptr<bouncer::hal::DmaBuffer>(new Buffer(k_.mem(a, bytes), a));
  }
  void wait_cycles(uint64_t cycles) override { k_.run_ap_cycles(cycles); }
  uint64_t now_cycles() override { return k_.ap_cycles(); }
  // The host lives in simulated time: 4 ns per ap_clk cycle (the driver's deadlines).
  std::chrono::nanoseconds host_now() override {
    return std::chrono::nanoseconds(4 * static_cast<int64_t>(k_.ap_cycles()));
  }
  void wait_for(std::chrono::nanoseconds d) override {
    if (d.count() > 0) k_.run_ap_cycles(static_cast<uint64_t>((d.count() + 3) / 4));
  }
  const char* name() const override { return "kernel-model"; }

 private:
  class Buffer final : public bouncer::hal::DmaBuffer {
   public:
    Buffer(std::span<std::byte> b, uint64_t a) : b_(b), a_(a) {}
    std::span<std::byte> bytes() override { return b_; }
    uint64_t device_addr() const override { return a_; }
    void sync_to_device(size_t, size_t) override {}
    void sync_from_device(size_t, size_t) override {}

   private:
    std::span<std::byte> b_;
    uint64_t a_;
  };
  Kernel& k_;
};

// CTRL.LOOPBACK through the kernel: the driver's loopback self-test (the code `bouncer card
// selftest` runs) passes, and m_axis_tx stays idle while the loop is on.
TEST(KernelCdc, LoopbackSelftestThroughKernel) {
  uint64_t seed = 30;
  for (const Ratio& r : kRatios) {
    SCOPED_TRACE(ratio_name(r));
    Kernel k(r, seed++);
    bring_up(k);
    k.allow_dma_ = true;
    KernelHal hal(k);
    bouncer::DeviceConfig cfg;
    cfg.isn_key = std::array<uint32_t, 4>{1, 2, 3, 4};
    auto dev = bouncer::Device::open(hal, cfg);
    ASSERT_TRUE(dev.ok()) << dev.error().message;
    ASSERT_TRUE((*dev)->wait_cm_ready(std::chrono::microseconds(400)).ok());

    // a SYN arriving while the loop is on is discarded whole, nothing leaves
    k.write(reg::CTRL, kLoop);
    k.send(syn_frame(5000, 0x5000));
    k.wait_rx_sent();
    k.run_ap_cycles(3000);
    EXPECT_EQ(k.read(reg::STAT_RX_OVERFLOW), 1u);
    EXPECT_EQ(k.read(reg::STAT_RX_FRAMES), 0u);
    k.write(reg::CTRL, kEnable);

    const uint64_t valid_before = k.tx_valid_edges_;
    auto rep = bouncer::run_loopback_selftest(**dev);
    ASSERT_TRUE(rep.ok()) << rep.error().message;
    EXPECT_TRUE(rep->passed()) << bouncer::format_selftest_report(*rep);
    EXPECT_TRUE(rep->loopback_restored);
    EXPECT_EQ(rep->frames.size(), 4u);
    EXPECT_TRUE(k.tx_frames_.empty());
    EXPECT_EQ(k.tx_valid_edges_, valid_before) << "m_axis_tx_tvalid rose in loopback";
    EXPECT_EQ(field::CTRL::LOOPBACK.get(k.read(reg::CTRL)), 0u);

    // loop off again: a SYN is answered on m_axis_tx
    k.allow_dma_ = false;
    k.send(syn_frame(5001, 0x5001));
    ASSERT_TRUE(k.wait_tx(1));
    expect_rst_for(k.tx_frames_[0], 5001, 0x5001);
    k.allow_dma_ = true;  // the Device's destructor stops the engines
  }
}

// ---------------------------------------------------------------------------------------
// An RX burst of full-size frames (190 beats each at 64 bits) arriving back to back with
// ap_clk_2 faster than ap_clk: the core takes one beat per ap_clk cycle, so the RX CDC FIFO
// (2048 beats) fills and frames are dropped whole. No corrupted frame reaches the core
// (STAT_RX_BAD stays 0: a truncated or spliced 1514-byte segment fails its length or its
// checksums), every SYN that got through is answered, and the port works after the burst.
// With ap_clk the faster clock nothing is dropped.
TEST(KernelCdc, RxOverrunDropsWholeFrames) {
  uint64_t seed = 40;
  for (const Ratio& r : kRatios) {
    const bool core_slower = r.ap_ps > r.ap2_ps;
    SCOPED_TRACE(ratio_name(r));
    Kernel k(r, seed++);
    bring_up(k);
    k.write(reg::CTRL, kEnable);
    constexpr unsigned kFrames = 100;  // 80 data segments and 20 SYNs: 15360 beats
    std::vector<uint32_t> syn_seq(kFrames, 0);
    unsigned syns = 0;
    uint64_t beats = 0;
    for (unsigned i = 0; i < kFrames; ++i) {
      Bytes f;
      if (i % 5 == 4) {
        syn_seq[i] = 0x7000'0000u + 17 * i;
        f = syn_frame(static_cast<uint16_t>(6000 + i), syn_seq[i]);
        ++syns;
      } else {
        f = data_frame(static_cast<uint16_t>(6000 + i), 0x100 * i, static_cast<uint8_t>(i));
      }
      beats += (f.size() + kWb - 1) / kWb;
      k.send(f);  // back to back: no idle cycle between frames
    }
    EXPECT_GT(beats, kRxFifoBeats);
    k.wait_rx_sent();
    EXPECT_EQ(k.rx_beats_sent_, beats);
    k.run_ap_cycles(20'000);
    const Stats s = stats(k);
    SCOPED_TRACE(::testing::Message() << s);
    EXPECT_EQ(s.rx_bad, 0u);
    EXPECT_EQ(s.rx_not_tcp, 0u);
    EXPECT_EQ(s.rx_overflow, 0u);
    EXPECT_EQ(s.rst_tx, s.syn_no_listener);
    EXPECT_EQ(s.tx_frames, s.syn_no_listener);
    ASSERT_EQ(k.tx_frames_.size(), s.syn_no_listener);
    if (core_slower) {
      // 15360 beats in; ap_clk drains at most 15360 * ap2_ps / ap_ps of them meanwhile (11916
      // at 4.0 vs 3.103 ns): more than a FIFO of excess, several frames must go
      EXPECT_LE(s.rx_frames, kFrames - 3) << "the burst did not overrun the RX CDC FIFO";
      // the first frames fit before the FIFO fills
      EXPECT_GT(s.rx_frames, kRxFifoBeats / 190);
    } else {
      EXPECT_EQ(s.rx_frames, kFrames);
      EXPECT_EQ(s.syn_no_listener, syns);
    }
    // every RST|ACK answers a distinct SYN that was sent, in order
    unsigned next = 0;
    for (const Bytes& f : k.tx_frames_) {
      std::string why;
      const auto seg = golden::parse_tcp_segment(f, &why);
      ASSERT_TRUE(seg.has_value()) << why;
      const unsigned i = seg->dst_port - 6000u;
      ASSERT_TRUE(i < kFrames && i % 5 == 4 && i >= next) << "RST|ACK for port " << seg->dst_port;
      expect_rst_for(f, seg->dst_port, syn_seq[i]);
      next = i + 1;
    }
    // after the burst the port works
    const size_t before = k.tx_frames_.size();
    k.send(syn_frame(7000, 0x7000));
    ASSERT_TRUE(k.wait_tx(before + 1));
    expect_rst_for(k.tx_frames_.back(), 7000, 0x7000);
    EXPECT_EQ(k.read(reg::STAT_RX_BAD), 0u);
  }
}

}  // namespace
