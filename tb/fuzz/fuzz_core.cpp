// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// libFuzzer harness ("Fuzzing"): the verilated bouncer_core (DATA_W 64, a 64-entry
// connection table, SystemVerilog port assertions from fuzz_checks.svh, verilator --assert)
// under the real driver (hostsw/), fed a sequence of frames and descriptor posts decoded from
// the fuzz input. Plain C++ bus models (no SystemC): AXI4-Lite master, AXI4 host-memory slave
// with an input-chosen latency, TX sink with an input-chosen tready pattern, RX source.
//
// Input: a byte string read front to back (missing bytes read as 0), see tb/fuzz/README.md.
// Byte 0 picks the host listener's FIN policy; then up to kMaxOps operations, each one opcode
// byte and its arguments: SYN / handshake ACK / MPA request (rev, flags, PD, lying PD_Length,
// split) / RST / FIN / data from one of four peers (checksums computed, seq/ack tracked from
// the SYN-ACKs seen), the last frame with byte edits, a raw frame, host event handling
// (reject or keep each held request: PD length, FIN policy, push), a raw SQ WQE (any cm_id,
// opcode, PD length/address/inline), a wait, and knob changes (TX tready pattern, DMA latency).
// After the input, the host rejects every request it still holds and the timers run.
//
// Invariants (a violation aborts: libFuzzer reports a crash and saves the input):
//  - every TX frame parses (golden parse_tcp_segment: lengths, checksums, options) and its
//    4-tuple is the reverse of a frame that entered the RX port (no TX frame for an unseen
//    tuple);
//  - every descriptor posted gets exactly one completion (none unknown or twice:
//    DeviceStats::unexpected_cqes 0; none missing: nothing outstanding at the end);
//  - the connection table drains (CM_CONNS 0) once the host has rejected what it held and the
//    timers have run, within kDrainCycles;
//  - the SV assertions (AXI-Stream/AXI4/AXI4-Lite port rules) and no AXI4-Lite hang.
#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "bouncer/cm.hpp"
#include "bouncer/device.hpp"
#include "bouncer/device_faults.hpp"
#include "bouncer/hal.hpp"
#include "bouncer/regs.hpp"
#include "golden/frame_parser.hpp"
#include "golden/reject_frame.hpp"
#include "golden/segment.hpp"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "Vfuzz_top.h"
#include "verilated.h"
#if VM_COVERAGE
#include "verilated_cov.h"
#endif
#pragma GCC diagnostic pop

namespace {

namespace R = bouncer::regs;
using Bytes = std::vector<uint8_t>;

constexpr unsigned kMaxOps = 48;
constexpr uint64_t kOpCycles = 40'000;  // no more operations after this many cycles
constexpr uint64_t kDrainCycles = 400'000;
constexpr uint64_t kMemBase = 0x1'0000'0000ull;
constexpr size_t kMemBytes = 256u << 10;
constexpr uint32_t kLocalIp = 0x0A000001;
constexpr uint16_t kHostPort = 20049, kAutoPort = 20050;
constexpr std::array<uint8_t, 6> kLocalMac = {0x02, 0xbb, 0xcc, 0xdd, 0xee, 0x01};

// BOUNCER_FUZZ_VERBOSE=1: every TX frame, event and completion, and a summary per input.
bool verbose() {
  static const bool v = std::getenv("BOUNCER_FUZZ_VERBOSE") != nullptr;
  return v;
}

[[noreturn]] void violation(const char* fmt, const std::string& detail = {}) {
  std::fprintf(stderr, "fuzz_core: INVARIANT VIOLATED: %s %s\n", fmt, detail.c_str());
  std::fflush(stderr);
  std::abort();
}

// ------------------------------------------------------------------ input reader

class Input {
 public:
  Input(const uint8_t* d, size_t n) : d_(d), n_(n) {}
  uint8_t u8() { return i_ < n_ ? d_[i_++] : 0; }
  uint16_t u16() { return static_cast<uint16_t>(u8() << 8 | u8()); }
  uint32_t u32() { return uint32_t{u16()} << 16 | u16(); }
  bool empty() const { return i_ >= n_; }

 private:
  const uint8_t* d_;
  size_t n_;
  size_t i_ = 0;
};

// ------------------------------------------------------------------ the model + bus models

class Core {
 public:
  explicit Core(VerilatedContext* ctx) : top_(std::make_unique<Vfuzz_top>(ctx, "top")) { reset(); }
  // Reset: the bus models emptied, host memory zeroed, rst held for 16 edges.
  void reset() {
    mem_.assign(kMemBytes, std::byte{0});
    next_ = kMemBase;
    rd_.clear();
    wr_.clear();
    b_.clear();
    wb_err_ = false;
    rx_q_.clear();
    rx_off_ = 0;
    rx_gap_until_ = 0;
    rx_last_ = 0;
    tx_cur_.clear();
    tx_done_.clear();
    tready_pattern = 0xFFFFFFFF;
    mem_latency = 4;
    top_->s_axil_awvalid = top_->s_axil_wvalid = top_->s_axil_arvalid = 0;
    top_->s_axil_bready = top_->s_axil_rready = 0;
    top_->rst = 1;
    cycles_ = 0;
    for (int i = 0; i < 16; ++i) edge();
    top_->rst = 0;
    cycles_ = 0;
  }
  ~Core() { top_->final(); }

  uint64_t cycles() const { return cycles_; }
  void run(uint64_t n) {
    for (uint64_t i = 0; i < n; ++i) edge();
  }

  // AXI4-Lite master
  void write(uint32_t addr, uint32_t data) {
    top_->s_axil_awaddr = static_cast<uint16_t>(addr);
    top_->s_axil_wdata = data;
    top_->s_axil_wstrb = 0xF;
    top_->s_axil_awvalid = 1;
    top_->s_axil_wvalid = 1;
    top_->s_axil_bready = 1;
    bool aw = false, w = false;
    for (uint64_t t = 0;; ++t) {
      if (t > 100'000) violation("AXI4-Lite write hang", std::to_string(addr));
      const bool b = top_->s_axil_bvalid && aw && w;
      aw = aw || top_->s_axil_awready;
      w = w || top_->s_axil_wready;
      const bool aw_now = top_->s_axil_awvalid && top_->s_axil_awready;
      const bool w_now = top_->s_axil_wvalid && top_->s_axil_wready;
      edge();
      if (aw_now) top_->s_axil_awvalid = 0;
      if (w_now) top_->s_axil_wvalid = 0;
      if (b) break;
    }
    top_->s_axil_bready = 0;
    settle();
  }
  uint32_t read(uint32_t addr) {
    top_->s_axil_araddr = static_cast<uint16_t>(addr);
    top_->s_axil_arvalid = 1;
    top_->s_axil_rready = 1;
    bool ar = false;
    for (uint64_t t = 0;; ++t) {
      if (t > 100'000) violation("AXI4-Lite read hang", std::to_string(addr));
      const bool r = top_->s_axil_rvalid && ar;
      const uint32_t v = top_->s_axil_rdata;
      const bool ar_now = top_->s_axil_arvalid && top_->s_axil_arready;
      ar = ar || ar_now;
      edge();
      if (ar_now) top_->s_axil_arvalid = 0;
      if (r) {
        top_->s_axil_rready = 0;
        settle();
        return v;
      }
    }
  }

  // host memory
  uint64_t alloc(size_t bytes, size_t align) {
    align = std::max<size_t>(align, 64);
    uint64_t a = (next_ + align - 1) & ~(uint64_t{align} - 1);
    if (a - kMemBase + bytes > kMemBytes) violation("harness: host memory exhausted");
    next_ = a + bytes;
    return a;
  }
  std::span<std::byte> mem(uint64_t addr, size_t len) {
    return std::span<std::byte>(mem_).subspan(addr - kMemBase, len);
  }

  // RX / TX
  void send(Bytes f) {
    if (!f.empty()) rx_q_.push_back(std::move(f));
  }
  // Nothing queued and the last frame entered the core at least `quiet` cycles ago (frames
  // wait in the core's RX FIFO while the CM engine works: ~50 cycles per SYN).
  bool rx_idle(uint64_t quiet = 2000) const { return rx_q_.empty() && cycles_ >= rx_last_ + quiet; }
  std::vector<Bytes> take_tx() { return std::exchange(tx_done_, {}); }
  uint32_t tready_pattern = 0xFFFFFFFF;  // bit (cycle % 32): m_axis_tx_tready
  uint32_t mem_latency = 4;

 private:
  struct ReadBurst {
    uint64_t addr;
    unsigned beats, done;
    uint8_t id;
    uint64_t due;
  };
  struct WriteBurst {
    uint64_t addr;
    unsigned beats, done;
    uint8_t id;
  };
  struct BResp {
    uint8_t id, resp;
    uint64_t due;
  };

  bool in_mem(uint64_t a, size_t n) const { return a >= kMemBase && a - kMemBase + n <= kMemBytes; }

  // Drives the inputs for the next edge from the models' state, evaluates (clk low).
  void settle() {
    // R
    if (!rd_.empty() && rd_.front().due <= cycles_) {
      const auto& r = rd_.front();
      const uint64_t a = (r.addr & ~uint64_t{7}) + 8ull * r.done;
      uint64_t v = 0;
      const bool ok = in_mem(r.addr & ~uint64_t{7}, 8ull * r.beats);
      if (ok) std::memcpy(&v, mem_.data() + (a - kMemBase), 8);
      top_->m_axi_rvalid = 1;
      top_->m_axi_rdata = v;
      top_->m_axi_rid = r.id;
      top_->m_axi_rresp = ok ? 0 : 3;
      top_->m_axi_rlast = r.done + 1 == r.beats;
    } else {
      top_->m_axi_rvalid = 0;
      top_->m_axi_rlast = 0;
    }
    // B
    if (!b_.empty() && b_.front().due <= cycles_) {
      top_->m_axi_bvalid = 1;
      top_->m_axi_bid = b_.front().id;
      top_->m_axi_bresp = b_.front().resp;
    } else {
      top_->m_axi_bvalid = 0;
    }
    top_->m_axi_arready = rd_.size() < 8;
    top_->m_axi_awready = wr_.size() < 2;
    top_->m_axi_wready = !wr_.empty();
    top_->m_axis_tx_tready = (tready_pattern >> (cycles_ % 32)) & 1u;
    // RX beat
    if (!rx_q_.empty() && cycles_ >= rx_gap_until_) {
      const Bytes& f = rx_q_.front();
      uint64_t d = 0;
      uint8_t keep = 0;
      for (unsigned i = 0; i < 8 && rx_off_ + i < f.size(); ++i) {
        d |= uint64_t{f[rx_off_ + i]} << (8 * i);
        keep = static_cast<uint8_t>(keep | (1u << i));
      }
      top_->s_axis_rx_tvalid = 1;
      top_->s_axis_rx_tdata = d;
      top_->s_axis_rx_tkeep = keep;
      top_->s_axis_rx_tlast = rx_off_ + 8 >= f.size();
    } else {
      top_->s_axis_rx_tvalid = 0;
    }
    top_->clk = 0;
    top_->eval();
  }

  // One rising edge: handshakes sampled before it, then the models advance.
  void edge() {
    settle();
    const bool ar = top_->m_axi_arvalid && top_->m_axi_arready;
    const bool r = top_->m_axi_rvalid && top_->m_axi_rready;
    const bool aw = top_->m_axi_awvalid && top_->m_axi_awready;
    const bool w = top_->m_axi_wvalid && top_->m_axi_wready;
    const bool b = top_->m_axi_bvalid && top_->m_axi_bready;
    const bool tx = top_->m_axis_tx_tvalid && top_->m_axis_tx_tready;
    const bool rx = top_->s_axis_rx_tvalid && top_->s_axis_rx_tready;
    const ReadBurst arb{top_->m_axi_araddr, top_->m_axi_arlen + 1u, 0,
                        static_cast<uint8_t>(top_->m_axi_arid), cycles_ + mem_latency};
    const WriteBurst awb{top_->m_axi_awaddr, top_->m_axi_awlen + 1u, 0,
                         static_cast<uint8_t>(top_->m_axi_awid)};
    const uint64_t wdata = top_->m_axi_wdata;
    const uint8_t wstrb = top_->m_axi_wstrb;
    const uint64_t tdata = top_->m_axis_tx_tdata;
    const uint8_t tkeep = top_->m_axis_tx_tkeep;
    const bool tlast = top_->m_axis_tx_tlast;
    top_->clk = 1;
    top_->eval();
    ++cycles_;
    if (r && ++rd_.front().done == rd_.front().beats) rd_.pop_front();
    if (ar) rd_.push_back(arb);
    if (b) b_.pop_front();
    if (aw) wr_.push_back(awb);
    if (w && !wr_.empty()) {
      auto& wb = wr_.front();
      const uint64_t a = (wb.addr & ~uint64_t{7}) + 8ull * wb.done;
      if (in_mem(a, 8)) {
        for (unsigned i = 0; i < 8; ++i) {
          if (wstrb >> i & 1) mem_[a - kMemBase + i] = std::byte(wdata >> (8 * i));
        }
      } else {
        wb_err_ = true;
      }
      if (++wb.done == wb.beats) {
        b_.push_back({wb.id, static_cast<uint8_t>(wb_err_ ? 3 : 0), cycles_ + mem_latency});
        wb_err_ = false;
        wr_.pop_front();
      }
    }
    if (tx) {
      for (unsigned i = 0; i < 8; ++i) {
        if (tkeep >> i & 1) tx_cur_.push_back(static_cast<uint8_t>(tdata >> (8 * i)));
      }
      if (tlast) tx_done_.push_back(std::exchange(tx_cur_, {}));
    }
    if (rx) {
      rx_last_ = cycles_;
      rx_off_ += 8;
      if (rx_off_ >= rx_q_.front().size()) {
        rx_q_.pop_front();
        rx_off_ = 0;
        rx_gap_until_ = cycles_ + 3;
      }
    }
  }

  std::unique_ptr<Vfuzz_top> top_;
  uint64_t cycles_ = 0;
  std::vector<std::byte> mem_;
  uint64_t next_ = kMemBase;
  std::deque<ReadBurst> rd_;
  std::deque<WriteBurst> wr_;
  std::deque<BResp> b_;
  bool wb_err_ = false;
  std::deque<Bytes> rx_q_;
  size_t rx_off_ = 0;
  uint64_t rx_gap_until_ = 0;
  uint64_t rx_last_ = 0;
  Bytes tx_cur_;
  std::vector<Bytes> tx_done_;
};

class Hal final : public bouncer::hal::Device {
 public:
  explicit Hal(Core& c) : c_(c) {}
  uint32_t read32(uint32_t off) override { return c_.read(off); }
  void write32(uint32_t off, uint32_t v) override { c_.write(off, v); }
  bouncer::Result<std::unique_ptr<bouncer::hal::DmaBuffer>> alloc_dma(size_t bytes,
                                                                      size_t align) override {
    const uint64_t a = c_.alloc(bytes, align);
    return std::unique_ptr<bouncer::hal::DmaBuffer>(new Buf(c_.mem(a, bytes), a));
  }
  void wait_cycles(uint64_t n) override { c_.run(n); }
  uint64_t now_cycles() override { return c_.cycles(); }
  // The host lives in simulated time: 4 ns per core cycle (the driver's deadlines).
  std::chrono::nanoseconds host_now() override {
    return std::chrono::nanoseconds(4 * static_cast<int64_t>(c_.cycles()));
  }
  void wait_for(std::chrono::nanoseconds d) override {
    if (d.count() > 0) c_.run(static_cast<uint64_t>((d.count() + 3) / 4));
  }
  const char* name() const override { return "fuzz"; }

 private:
  class Buf final : public bouncer::hal::DmaBuffer {
   public:
    Buf(std::span<std::byte> b, uint64_t a) : b_(b), a_(a) {}
    std::span<std::byte> bytes() override { return b_; }
    uint64_t device_addr() const override { return a_; }
    void sync_to_device(size_t, size_t) override {}
    void sync_from_device(size_t, size_t) override {}

   private:
    std::span<std::byte> b_;
    uint64_t a_;
  };
  Core& c_;
};

// ------------------------------------------------------------------ frames

struct Peer {
  std::array<uint8_t, 6> mac{};
  uint32_t ip = 0;
  uint16_t port = 0, dport = 0;
  uint32_t isn = 0;
  uint32_t snd = 0;             // next seq we send
  std::optional<uint32_t> iss;  // Bouncer's, from the last SYN-ACK
  uint16_t ip_id = 0;
};

// Ethernet / IPv4 (IHL 5, DF) / TCP (+ MSS/WS on a SYN), checksums right, padded to 60
// (golden::build_segment).
Bytes build(Peer& p, uint8_t flags, uint32_t seq, uint32_t ack, std::span<const uint8_t> pay,
            bool syn_opts) {
  golden::SegmentSpec s;
  s.dst_mac = kLocalMac;
  s.src_mac = p.mac;
  s.ip_id = p.ip_id++;
  s.src_ip = p.ip;
  s.dst_ip = kLocalIp;
  s.sport = p.port;
  s.dport = p.dport;
  s.seq = seq;
  s.ack = ack;
  s.flags = flags;
  if (syn_opts) s.tcp_opts = {2, 4, 0x05, 0xb4, 1, 3, 3, 7};  // MSS 1460, NOP, WS 7
  s.payload.assign(pay.begin(), pay.end());
  return golden::build_segment(s);
}

// Addresses of a frame as the core might read them (any IHL, optional VLAN tag), whether or
// not the frame is valid: the tuples a TX frame may answer.
using Tuple = std::tuple<uint32_t, uint16_t, uint32_t, uint16_t>;  // src ip/port, dst ip/port
void rx_tuples(const Bytes& f, std::set<Tuple>& out) {
  for (size_t eth : {size_t{14}, size_t{18}}) {
    if (f.size() < eth + 20) continue;
    const size_t ihl = size_t{f[eth] & 0x0Fu} * 4;
    for (size_t l4 : {eth + ihl, eth + 20}) {
      if (f.size() < l4 + 4) continue;
      auto be32 = [&](size_t o) {
        return uint32_t{f[o]} << 24 | uint32_t{f[o + 1]} << 16 | uint32_t{f[o + 2]} << 8 | f[o + 3];
      };
      out.insert({be32(eth + 12), static_cast<uint16_t>(f[l4] << 8 | f[l4 + 1]), be32(eth + 16),
                  static_cast<uint16_t>(f[l4 + 2] << 8 | f[l4 + 3])});
    }
  }
}

// ------------------------------------------------------------------ one run

class Run {
 public:
  Run(Core& core, Input& in) : core_(core), in_(in), hal_(core) {}

  void go() {
    bouncer::DeviceConfig dc;
    dc.sq_entries = 8;
    dc.cq_entries = 8;
    dc.aeq_entries = 64;
    dc.isn_key = std::array<uint32_t, 4>{0x01234567, 0x89abcdef, 0xdeadbeef, 0x0badf00d};
    bouncer::TimerConfig t;
    t.tick_cycles = 16;
    t.rto_init = 16;
    t.rto_max = 64;
    t.rtx_max = 2;
    t.mpa_timeout = 128;
    t.fin_timeout = 256;
    t.time_wait = 8;
    dc.timers = t;
    auto dev = bouncer::Device::open(hal_, dc);
    if (!dev) violation("Device::open failed:", dev.error().message);
    dev_ = dev->get();
    bouncer::Cm cm(*dev_);
    cm_ = &cm;
    const R::FinPolicy pols[3] = {R::FinPolicy::SIW_SAFE, R::FinPolicy::IRDMA, R::FinPolicy::ABORT};
    bouncer::ListenOptions lo;
    lo.fin_policy = pols[in_.u8() % 3];
    lo.local_mac = kLocalMac;
    lo.backlog = 0;
    if (!cm.listen(kLocalIp, kHostPort, lo)) violation("listen failed");
    bouncer::ListenOptions la = lo;
    la.auto_reject = R::AutoReject::ALL;
    const std::string tmpl = "fuzz: no";
    for (char ch : tmpl) la.template_pd.push_back(std::byte(ch));
    if (!cm.listen(kLocalIp, kAutoPort, la)) violation("listen (auto) failed");
    for (unsigned i = 0; i < peers_.size(); ++i) {
      Peer& p = peers_[i];
      p.mac = {0x02, 0, 0, 0, 1, static_cast<uint8_t>(i)};
      p.ip = 0x0A000100u + 2 + i;
      p.port = static_cast<uint16_t>(40000 + i);
      p.dport = i == 3 ? kAutoPort : kHostPort;
      p.isn = 0x1000'0000u * (i + 1);
      p.snd = p.isn;
      p.ip_id = static_cast<uint16_t>(0x100 * i);
    }

    for (unsigned op = 0; op < kMaxOps && !in_.empty() && core_.cycles() < kOpCycles; ++op) step();
    drain();
    if (verbose()) {
      std::fprintf(
          stderr,
          "fuzz_core: %llu cycles, %zu RX frames, %llu TX frames (%llu SYN-ACK, %llu "
          "MPA reject), %llu requests, %llu descriptors completed\n",
          static_cast<unsigned long long>(core_.cycles()), rx_frames_,
          static_cast<unsigned long long>(tx_frames_), static_cast<unsigned long long>(synacks_),
          static_cast<unsigned long long>(rejects_), static_cast<unsigned long long>(requests_),
          static_cast<unsigned long long>(completed_));
    }
    dev_ = nullptr;
    cm_ = nullptr;
  }

 private:
  Peer& peer() { return peers_[in_.u8() % peers_.size()]; }

  void send(Bytes f) {
    ++rx_frames_;
    rx_tuples(f, seen_);
    last_ = f;
    core_.send(std::move(f));
  }

  void step() {
    const uint8_t op = in_.u8();
    if (verbose()) {
      static const char* const names[12] = {"SYN", "ACK", "MPA",  "RST", "FIN",  "DATA",
                                            "MUT", "RAW", "HOST", "WQE", "WAIT", "KNOB"};
      std::fprintf(stderr, "fuzz_core: cycle %6llu op %s\n",
                   static_cast<unsigned long long>(core_.cycles()), names[op % 12]);
    }
    switch (op % 12) {
      case 0: {  // SYN (a new connection: seq from the input or the peer's ISN)
        Peer& p = peer();
        if (in_.u8() & 1) p.isn = in_.u32();
        p.snd = p.isn + 1;
        p.iss.reset();
        send(build(p, 0x02, p.isn, 0, {}, true));
        break;
      }
      case 1: {  // handshake ACK
        Peer& p = peer();
        send(build(p, 0x10, p.snd, p.iss ? *p.iss + 1 : in_.u32(), {}, false));
        break;
      }
      case 2: {  // MPA request, possibly lying about PD_Length, possibly in two segments
        Peer& p = peer();
        const uint8_t rev = static_cast<uint8_t>(in_.u8() % 4);
        const uint8_t flags = in_.u8();
        const size_t pd = in_.u8() * 3u % 530;
        const uint8_t ctl = in_.u8();
        Bytes m(16);
        std::memcpy(m.data(), (ctl & 0x80) ? "MPA ID Rep Frame" : "MPA ID Req Frame", 16);
        m.push_back(flags);
        m.push_back(rev);
        const uint16_t pdl = (ctl & 0x40) ? in_.u16() : static_cast<uint16_t>(pd);
        m.push_back(static_cast<uint8_t>(pdl >> 8));
        m.push_back(static_cast<uint8_t>(pdl));
        for (size_t k = 0; k < pd; ++k) m.push_back(static_cast<uint8_t>(k * 7 + ctl));
        const uint32_t ack = p.iss ? *p.iss + 1 : 0;
        const size_t cut = (ctl & 0x20) ? std::min<size_t>(m.size(), 1 + in_.u8() % 40) : m.size();
        send(build(p, 0x18, p.snd, ack, std::span<const uint8_t>(m).first(cut), false));
        if (!(ctl & 0x10)) p.snd += static_cast<uint32_t>(cut);
        if (cut < m.size()) {
          send(build(p, 0x18, p.snd, ack, std::span<const uint8_t>(m).subspan(cut), false));
          if (!(ctl & 0x10)) p.snd += static_cast<uint32_t>(m.size() - cut);
        }
        break;
      }
      case 3: {  // RST or RST|ACK, seq exact or off by the input
        Peer& p = peer();
        const uint8_t v = in_.u8();
        const uint32_t seq = (v & 1) ? p.snd : p.snd + in_.u16();
        send(build(p, (v & 2) ? 0x14 : 0x04, seq, p.iss ? *p.iss + 1 : 0, {}, false));
        break;
      }
      case 4: {  // FIN|ACK, acking what the input says (nothing, the reject, or more)
        Peer& p = peer();
        const uint32_t adv = in_.u16() % 600;
        send(build(p, 0x11, p.snd, p.iss ? *p.iss + 1 + adv : adv, {}, false));
        p.snd += 1;
        break;
      }
      case 5: {  // ACK of Bouncer's data/FIN, or data
        Peer& p = peer();
        const uint32_t adv = in_.u16() % 600;
        const uint8_t len = in_.u8() % 64;
        Bytes d(len, 0x5A);
        send(build(p, len ? 0x18 : 0x10, p.snd, p.iss ? *p.iss + 1 + adv : adv, d, false));
        p.snd += len;
        break;
      }
      case 6: {  // the last frame again with byte edits (header fields, checksums, lengths)
        if (last_.empty()) break;
        Bytes f = last_;
        const unsigned n = 1 + in_.u8() % 4;
        for (unsigned k = 0; k < n; ++k) {
          const size_t at = in_.u8() % f.size();
          f[at] = static_cast<uint8_t>(f[at] ^ (in_.u8() | 1));
        }
        if (in_.u8() & 1) f.resize(1 + in_.u8() % f.size());
        send(std::move(f));
        break;
      }
      case 7: {  // a raw frame from the input
        const size_t n = 1 + in_.u8() % 96;
        Bytes f(n);
        for (auto& b : f) b = in_.u8();
        send(std::move(f));
        break;
      }
      case 8:  // host: events, reject or keep each held request
        host(true);
        break;
      case 9:  // a raw SQ WQE, bypassing the Cm layer
        raw_wqe();
        break;
      case 10: {  // wait
        core_.run(16u * (1 + in_.u8() % 64));
        sync_tx();
        break;
      }
      case 11: {  // knobs
        const uint8_t v = in_.u8();
        core_.tready_pattern = (v & 1) ? 0xFFFFFFFFu : in_.u32() | 1u;
        core_.mem_latency = 1 + (v >> 1) % 64;
        break;
      }
    }
    sync_tx();
  }

  // Reads the TX frames: every one must parse and answer a tuple seen on RX; SYN-ACKs teach
  // the peers Bouncer's ISS.
  void sync_tx() {
    for (auto& f : core_.take_tx()) {
      std::string why;
      auto s = golden::parse_tcp_segment(f, &why);
      if (!s) violation("TX frame does not parse:", why);
      if (!seen_.count({s->dst_ip, s->dst_port, s->src_ip, s->src_port})) {
        char b[96];
        std::snprintf(b, sizeof b, "%08x:%u -> %08x:%u flags %02x", s->src_ip, s->src_port,
                      s->dst_ip, s->dst_port, s->tcp_flags);
        violation("TX frame for a tuple never seen on RX:", b);
      }
      if (verbose()) {
        std::fprintf(stderr,
                     "fuzz_core: cycle %6llu TX %4zu B flags %02x to port %u seq %08x ack %08x%s\n",
                     static_cast<unsigned long long>(core_.cycles()), f.size(), s->tcp_flags,
                     s->dst_port, s->seq, s->ack,
                     golden::mpa_key_of(s->payload) == golden::MpaKey::kReply ? " MPA reply" : "");
      }
      rejects_ += golden::mpa_key_of(s->payload) == golden::MpaKey::kReply;
      if (s->tcp_flags == 0x12) {
        ++synacks_;
        for (auto& p : peers_) {
          if (p.ip == s->dst_ip && p.port == s->dst_port) p.iss = s->seq;
        }
      }
      ++tx_frames_;
    }
  }

  void complete(const bouncer::Completion& c) {
    if (c.unexpected) violation("a CQE for no outstanding descriptor", c.status());
    auto it = posted_.find(c.wqe_idx);
    if (it == posted_.end()) violation("a completion for a descriptor never posted", c.status());
    posted_.erase(it);
    ++completed_;
    if (verbose()) std::fprintf(stderr, "fuzz_core: CQE %s\n", c.status().c_str());
  }

  // The raw WQEs' completions. The Cm claims its own (and CQEs that match nothing) from the
  // same CQ in its pump, so this reader takes only what it posted: a CQE reaped by the wrong
  // owner would be lost to the one waiting for it.
  void poll_completions() {
    while (auto c = dev_->poll_cq_if([this](const bouncer::Completion& x) {
      return !x.unexpected && x.sq == 0 && posted_.count(x.wqe_idx) != 0;
    })) {
      complete(*c);
    }
  }

  // One event: requests and resets are held; a RejectComplete ends a Cm reject.
  void on_event(const bouncer::Event& e) {
    if (verbose()) std::fprintf(stderr, "fuzz_core: event %s\n", bouncer::event_name(e));
    if (const auto* cr = std::get_if<bouncer::ConnectRequest>(&e)) {
      held_[cr->cm_id] = cr->handle;
      ++requests_;
    }
    if (const auto* pr = std::get_if<bouncer::PeerReset>(&e)) held_[pr->cm_id] = pr->handle;
    if (const auto* rc = std::get_if<bouncer::RejectComplete>(&e)) {
      if (cm_posted_.erase({rc->handle.cm_id, rc->handle.gen}) != 1) {
        violation("a RejectComplete for no reject posted", rc->completion.status());
      }
      ++completed_;
    }
  }

  // Events; each held request is rejected (PD length, FIN policy, push from the input) or
  // kept, as the input says; `all` = false rejects every held request (the end).
  void host(bool from_input) {
    for (;;) {
      auto ev = cm_->poll_event();
      if (!ev) violation("poll_event failed:", ev.error().message);
      if (!*ev) break;
      on_event(**ev);
    }
    for (auto it = held_.begin(); it != held_.end();) {
      const uint8_t v = from_input ? in_.u8() : 0;
      if (from_input && (v & 1)) {
        ++it;
        continue;
      }
      const auto st = cm_->node_state(it->second);
      if (st != bouncer::NodeState::kHeld && st != bouncer::NodeState::kHeldReset) {
        it = held_.erase(it);
        continue;
      }
      std::vector<std::byte> pd((v >> 1) % 2 ? in_.u8() : (v >> 2) % 40, std::byte{0x42});
      bouncer::RejectOptions o;
      const R::FinPolicy pols[4] = {R::FinPolicy::DEFAULT, R::FinPolicy::SIW_SAFE,
                                    R::FinPolicy::IRDMA, R::FinPolicy::ABORT};
      o.fin_policy = pols[(v >> 3) & 3];
      o.push = (v >> 5) & 1;
      o.unsafe_wire_pd = true;
      const bouncer::ConnHandle h = it->second;
      post_until_room([&] { return cm_->post_reject(h, pd, o); },
                      [&] {
                        cm_posted_.insert({h.cm_id, h.gen});
                      });
      it = held_.erase(it);
    }
    poll_completions();
  }

  // post() until it finds room; `posted` runs once it succeeded (a Cm reject: its
  // RejectComplete is awaited), a wqe_idx is recorded (a raw WQE).
  template <class F, class G>
  void post_until_room(F&& post, G&& posted) {
    for (int tries = 0; tries < 1000; ++tries) {
      auto r = post();
      if (r) {
        if constexpr (std::is_same_v<std::decay_t<decltype(r)>, bouncer::Result<uint16_t>>) {
          if (!posted_.insert(*r).second) violation("wqe_idx posted twice while outstanding");
        }
        posted();
        return;
      }
      if (r.error().code != bouncer::Errc::kRingFull) return;  // refused, nothing posted
      core_.run(32);
      sync_tx();
      poll_completions();
      // the engine may wait for AEQ room before it sends a reject
      drain_events();
    }
    violation("SQ full for 1000 tries: completions stopped");
  }

  void drain_events() {
    for (;;) {
      auto ev = cm_->poll_event();
      if (!ev || !*ev) break;
      on_event(**ev);
    }
  }

  void raw_wqe() {
    bouncer::testing::FaultyRejectWqe w;
    w.cm_id = in_.u8() % 80;  // 64 cm_ids: some out of range
    const uint8_t v = in_.u8();
    std::vector<std::byte> pd(in_.u8() % 64, std::byte{0x33});
    w.pd = pd;
    w.pd_area = v & 1;
    w.push = (v >> 1) & 1;
    w.allow_inline = (v >> 2) & 1;
    w.fin_policy = static_cast<R::FinPolicy>((v >> 3) & 3);
    if ((v >> 5) & 1) w.opcode = in_.u8();
    if ((v >> 6) & 1) w.pd_len = in_.u16() % 1100;
    if ((v >> 7) & 1) {
      const uint8_t a = in_.u8();
      w.pd_addr = (a & 1) ? 0x40000000ull + a : kMemBase + kMemBytes - 64 + (a >> 1);
    }
    post_until_room([&] { return bouncer::testing::DeviceFaults::post_reject(*dev_, w); }, [] {});
    poll_completions();
  }

  // The end: reject everything held, let the timers run; the table must drain.
  void drain() {
    // TX back to full speed: with a sparse tready pattern the CM engine waits on TX, and
    // frames sit in the core's RX FIFO long after they entered it. The table is judged only
    // once the RX port has been quiet long enough for every frame to be processed (~50
    // cycles per frame at most with TX free).
    core_.tready_pattern = 0xFFFFFFFF;
    core_.mem_latency = 4;
    const uint64_t quiet = 2000 + 64 * uint64_t{rx_frames_};
    const uint64_t t0 = core_.cycles();
    while (core_.cycles() - t0 < kDrainCycles) {
      host(false);
      core_.run(256);
      sync_tx();
      poll_completions();
      if (core_.rx_idle(quiet) && held_.empty() && posted_.empty() && cm_posted_.empty() &&
          dev_->sq_outstanding() == 0 && dev_->cm_conns() == 0) {
        if (verbose()) {
          std::fprintf(stderr, "fuzz_core: cycle %6llu drained\n",
                       static_cast<unsigned long long>(core_.cycles()));
        }
        core_.run(2000);  // nothing may follow
        sync_tx();
        host(false);
        if (dev_->cm_conns() != 0) {
          violation("a node appeared after the table drained:",
                    "CM_CONNS " + std::to_string(dev_->cm_conns()) + " at cycle " +
                        std::to_string(core_.cycles()));
        }
        if (dev_->stats().unexpected_cqes != 0) violation("unexpected CQEs");
        return;
      }
    }
    char b[200];
    std::snprintf(b, sizeof b,
                  "CM_CONNS %u, held %zu, descriptors without completion %zu (driver: %u), "
                  "cycles %llu",
                  dev_->cm_conns(), held_.size(), posted_.size(), dev_->sq_outstanding(),
                  static_cast<unsigned long long>(core_.cycles()));
    violation("the table did not drain:", b);
  }

  Core& core_;
  Input& in_;
  Hal hal_;
  bouncer::Device* dev_ = nullptr;
  bouncer::Cm* cm_ = nullptr;
  std::array<Peer, 4> peers_;
  std::set<Tuple> seen_;
  Bytes last_;
  std::map<uint32_t, bouncer::ConnHandle> held_;       // cm_id -> the request's handle
  std::set<uint16_t> posted_;                          // wqe_idx of raw WQEs in flight
  std::set<std::pair<uint32_t, uint32_t>> cm_posted_;  // (cm_id, gen) of Cm rejects in flight
  uint64_t tx_frames_ = 0, synacks_ = 0, rejects_ = 0, requests_ = 0, completed_ = 0;
  size_t rx_frames_ = 0;
};

VerilatedContext* context() {
  static VerilatedContext* ctx = [] {
    auto* c = new VerilatedContext;
    c->fatalOnError(true);
    return c;
  }();
  return ctx;
}

#if VM_COVERAGE
// The coverage build replays inputs on one model, reset between them (the counters live in
// the model), and writes coverage.dat (or $BOUNCER_FUZZ_COV) at exit.
Core& shared_core() {
  static Core* core = [] {
    std::atexit([] {
      const char* p = std::getenv("BOUNCER_FUZZ_COV");
      context()->coveragep()->write(p ? p : "coverage.dat");
    });
    return new Core(context());
  }();
  return *core;
}
#endif

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Input in(data, size);
#if VM_COVERAGE
  Core& core = shared_core();
  core.reset();
#else
  Core core(context());
#endif
  Run run(core, in);
  run.go();
  return 0;
}
