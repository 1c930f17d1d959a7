// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include "platform/core_model.hpp"

#include <Vbouncer_core_w512.h>
#include <Vbouncer_core_w64.h>
#include <verilated.h>
#include <verilated_fst_c.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "net/network.hpp"
#include "net/rx_source.hpp"
#include "net/tx_sink.hpp"
#include "platform/axi_dma_adapter.hpp"
#include "platform/sim_util.hpp"

namespace bouncer::sim {
namespace {

using ull = unsigned long long;

// The AXI4-Lite master that SimDevice's MMIO transactions turn into.
struct AxilOp {
  bool pending = false;  // becomes active at the next drive phase
  bool active = false;
  bool write = false;
  uint32_t addr = 0;
  const uint32_t* wdata = nullptr;
  uint32_t* rdata = nullptr;
  size_t n = 0;
  size_t a_done = 0;     // AW (write) or AR (read) handshakes
  size_t w_done = 0;     // W handshakes
  size_t resp_done = 0;  // B or R handshakes
  size_t logged = 0;     // writes entered into the MMIO log
  uint8_t resp = 0;
};

template <class V>
class CoreImpl final : public CoreModel {
 public:
  CoreImpl(const CoreConfig& cfg, AxiDmaAdapter& dma, TxSink& tx, RxSource& rx, Network& net,
           std::vector<MmioWrite>& log, PlatformStats& stats, std::vector<RxBeat>* rx_beats)
      : cfg_(cfg),
        dma_(dma),
        tx_(tx),
        rx_(rx),
        net_(net),
        log_(log),
        stats_(stats),
        rx_beats_(rx_beats) {
    ctx_ = std::make_unique<VerilatedContext>();
    if (!cfg.fst_path.empty()) ctx_->traceEverOn(true);
    m_ = std::make_unique<V>(ctx_.get(), "bouncer_core");
    const double period_ps = 1e6 / cfg.clock_mhz;
    period_ps_ = static_cast<uint64_t>(std::llround(period_ps));
    if (period_ps_ < 2) period_ps_ = 2;
    if (!cfg.fst_path.empty()) {
      tfp_ = std::make_unique<VerilatedFstC>();
      m_->trace(tfp_.get(), 99);
      tfp_->open(cfg.fst_path.c_str());
      if (!tfp_->isOpen()) fatal("cannot open FST '%s'", cfg.fst_path.c_str());
    }
    reset();
  }

  ~CoreImpl() override { finish(); }

  void run(uint64_t n) override {
    const InLoop guard(in_loop_);
    for (uint64_t i = 0; i < n; ++i) tick();
  }

  uint64_t run_until(uint64_t max, const std::function<bool()>& until) override {
    const InLoop guard(in_loop_);
    const uint64_t w0 = dma_.writes_ended();
    for (uint64_t i = 1; i <= max; ++i) {
      tick();
      if (dma_.writes_ended() != w0 || (until && until())) return i;
    }
    return max;
  }

  AxilResult axil_write(uint32_t addr, const uint32_t* words, size_t n) override {
    return axil(true, addr, words, nullptr, n);
  }
  AxilResult axil_read(uint32_t addr, uint32_t* out, size_t n) override {
    return axil(false, addr, nullptr, out, n);
  }

  bool irq() const override { return m_ && m_->irq != 0; }

  void poke() override {
    if (in_loop_ || finished_) return;
    const InLoop guard(in_loop_);
    drive_net(*m_, cycle_ + 1);
    m_->eval();
  }

  void set_reset(bool hold) override {
    if (finished_ || hold == held_) return;
    V& m = *m_;
    if (hold) {
      held_ = true;
      held_edges_ = 0;
      ++stats_.reset_holds;
      stats_.dma_abandoned += dma_.reset();
      if (tx_.abort()) ++stats_.tx_frames_aborted;
      m.rst = 1;
      drive_idle_bus(m);
      m.eval();
      return;
    }
    const uint64_t need = std::max(1u, cfg_.reset_cycles);
    if (held_edges_ < need) run(need - held_edges_);
    held_ = false;
    m.rst = 0;
    dma_.drive(m, cycle_);
    tx_.drive(m);
    m.eval();
  }

  bool reset_held() const override { return held_; }
  bool in_loop() const override { return in_loop_; }

  void flush_trace() override {
    if (tfp_) tfp_->flush();
  }

  void finish() override {
    if (finished_) return;
    finished_ = true;
    m_->final();
    if (tfp_) {
      tfp_->close();
      tfp_.reset();
    }
  }

 private:
  // Marks "inside the clock loop" (tick() may run callbacks that queue frames).
  struct InLoop {
    explicit InLoop(bool& f) : f_(f), prev_(f) { f_ = true; }
    ~InLoop() { f_ = prev_; }
    InLoop(const InLoop&) = delete;
    InLoop& operator=(const InLoop&) = delete;
    bool& f_;
    bool prev_;
  };

  void reset() {
    V& m = *m_;
    m.clk = 0;
    m.rst = 1;
    drive_idle_inputs(m);
    m.eval();
    dump(0);
    const unsigned n = std::max(1u, cfg_.reset_cycles);
    for (unsigned i = 0; i < n; ++i) {
      m.clk = 1;
      m.eval();
      ++edges_;
      dump(edges_ * period_ps_);
      if (i + 1 == n) {
        m.rst = 0;
        dma_.drive(m, 0);
        tx_.drive(m);
        drive_net(m, 1);
      }
      m.clk = 0;
      m.eval();
      dump(edges_ * period_ps_ + period_ps_ / 2);
    }
    cycle_ = 0;
  }

  static void drive_idle_inputs(V& m) {
    m.s_axil_awaddr = 0;
    m.s_axil_awprot = 0;
    m.s_axil_awvalid = 0;
    m.s_axil_wdata = 0;
    m.s_axil_wstrb = 0;
    m.s_axil_wvalid = 0;
    m.s_axil_bready = 0;
    m.s_axil_araddr = 0;
    m.s_axil_arprot = 0;
    m.s_axil_arvalid = 0;
    m.s_axil_rready = 0;
    m.m_axi_awready = 0;
    m.m_axi_wready = 0;
    m.m_axi_bid = 0;
    m.m_axi_bresp = 0;
    m.m_axi_bvalid = 0;
    m.m_axi_arready = 0;
    m.m_axi_rid = 0;
    m.m_axi_rdata = 0;
    m.m_axi_rresp = 0;
    m.m_axi_rlast = 0;
    m.m_axi_rvalid = 0;
    m.m_axis_tx_tready = 0;
    std::memset(static_cast<void*>(&m.s_axis_rx_tdata), 0, sizeof(m.s_axis_rx_tdata));
    m.s_axis_rx_tkeep = 0;
    m.s_axis_rx_tlast = 0;
    m.s_axis_rx_tvalid = 0;
  }

  // The inputs the host side drives (AXI4-Lite master, DMA slave, TX tready) idle; the RX
  // port is left to the RX source.
  static void drive_idle_bus(V& m) {
    m.s_axil_awvalid = 0;
    m.s_axil_wvalid = 0;
    m.s_axil_bready = 0;
    m.s_axil_arvalid = 0;
    m.s_axil_rready = 0;
    m.m_axi_awready = 0;
    m.m_axi_wready = 0;
    m.m_axi_bvalid = 0;
    m.m_axi_arready = 0;
    m.m_axi_rvalid = 0;
    m.m_axi_rlast = 0;
    m.m_axis_tx_tready = 0;
  }

  // One cycle with reset held: only the network side and the RX port run; the DMA slave and
  // the TX sink neither look nor drive (their inputs stay idle).
  void held_tick() {
    V& m = *m_;
    const uint64_t edge = cycle_ + 1;
    if (rx_beats_ != nullptr) log_rx_beat(m, edge);
    rx_.pre_edge(m, edge);
    m.clk = 1;
    m.eval();
    ++edges_;
    if (tfp_) tfp_->dump(edges_ * period_ps_);
    cycle_ = edge;
    ++held_edges_;
    ++stats_.reset_held_cycles;
    drive_net(m, edge + 1);
    m.clk = 0;
    m.eval();
    if (tfp_) tfp_->dump(edges_ * period_ps_ + period_ps_ / 2);
  }

  void dump(uint64_t t) {
    if (tfp_) tfp_->dump(t);
  }

  // One core clock cycle (see core_model.hpp).
  inline void tick() {
    if (held_) [[unlikely]] {
      held_tick();
      return;
    }
    V& m = *m_;
    const uint64_t edge = cycle_ + 1;
    if (op_.active) axil_pre_edge(m, edge);
    dma_.pre_edge(m, edge);
    tx_.pre_edge(m, edge);
    if (rx_beats_ != nullptr) log_rx_beat(m, edge);
    rx_.pre_edge(m, edge);

    m.clk = 1;
    m.eval();
    ++edges_;
    if (tfp_) tfp_->dump(edges_ * period_ps_);
    cycle_ = edge;

    if (op_.active || op_.pending) axil_drive(m);
    dma_.drive(m, edge);
    tx_.drive(m);
    drive_net(m, edge + 1);
    m.clk = 0;
    m.eval();
    if (tfp_) tfp_->dump(edges_ * period_ps_ + period_ps_ / 2);
  }

  // Step 3 of a cycle for the network side: events due by `next` edge, then the RX port.
  [[gnu::always_inline]] inline void drive_net(V& m, uint64_t next) {
    if (next >= net_.next_event()) net_.advance(next);
    if (rx_.needs_drive(next)) rx_.drive(m, next);
  }

  void log_rx_beat(const V& m, uint64_t edge) {
    if (!(m.s_axis_rx_tvalid && m.s_axis_rx_tready)) return;
    RxBeat b{edge, std::vector<uint8_t>(sizeof(m.s_axis_rx_tdata)),
             static_cast<uint64_t>(m.s_axis_rx_tkeep), m.s_axis_rx_tlast != 0};
    std::memcpy(b.data.data(), static_cast<const void*>(&m.s_axis_rx_tdata), b.data.size());
    rx_beats_->push_back(std::move(b));
  }

  AxilResult axil(bool write, uint32_t addr, const uint32_t* wdata, uint32_t* rdata, size_t n) {
    const uint64_t start = cycle_;
    if (n == 0) return {0, 0};
    const InLoop guard(in_loop_);
    if (cfg_.mmio_cycles != 0) run(cfg_.mmio_cycles);
    if (held_) return axil_in_reset(write, rdata, n, start);
    op_ = AxilOp{};
    op_.pending = true;
    op_.write = write;
    op_.addr = addr;
    op_.wdata = wdata;
    op_.rdata = rdata;
    op_.n = n;
    const uint64_t t0 = cycle_;
    while (op_.pending || op_.active) {
      tick();
      if (cycle_ - t0 > cfg_.mmio_timeout_cycles) {
        fatal(
            "AXI4-Lite %s of %zu word(s) at 0x%04x: no complete response after %llu cycles "
            "(addr handshakes %zu, data handshakes %zu, responses %zu) at cycle %llu",
            write ? "write" : "read", n, addr, static_cast<ull>(cfg_.mmio_timeout_cycles),
            op_.a_done, op_.w_done, op_.resp_done, static_cast<ull>(cycle_));
      }
    }
    if (write)
      stats_.mmio_writes += n;
    else
      stats_.mmio_reads += n;
    if (op_.resp != 0) ++stats_.mmio_errors;
    return {cycle_ - start, op_.resp};
  }

  // Reset held: the platform answers in the core's place (see Platform::hold_reset), 2 cycles
  // per word (address, response); writes are dropped, reads return reset_read_value.
  AxilResult axil_in_reset(bool write, uint32_t* rdata, size_t n, uint64_t start) {
    for (size_t i = 0; i < n; ++i) {
      tick();
      tick();
      if (!write) rdata[i] = cfg_.reset_read_value;
    }
    if (write)
      stats_.mmio_writes += n;
    else
      stats_.mmio_reads += n;
    stats_.mmio_in_reset += n;
    ++stats_.mmio_errors;
    return {cycle_ - start, 2};
  }

  void axil_pre_edge(const V& m, uint64_t edge) {
    AxilOp& op = op_;
    if (op.write) {
      if (m.s_axil_awvalid && m.s_axil_awready) ++op.a_done;
      if (m.s_axil_wvalid && m.s_axil_wready) ++op.w_done;
      if (m.s_axil_bvalid && m.s_axil_bready) {
        if (op.resp_done >= std::min(op.a_done, op.w_done)) {
          fatal("AXI4-Lite violation at cycle %llu: BVALID for a write that was not accepted yet",
                static_cast<ull>(edge));
        }
        ++op.resp_done;
        op.resp = std::max<uint8_t>(op.resp, m.s_axil_bresp);
      }
      const size_t accepted = std::min(op.a_done, op.w_done);
      while (op.logged < accepted) {
        log_.push_back(
            MmioWrite{op.addr + 4u * static_cast<uint32_t>(op.logged), op.wdata[op.logged], edge});
        ++op.logged;
      }
    } else {
      if (m.s_axil_arvalid && m.s_axil_arready) ++op.a_done;
      if (m.s_axil_rvalid && m.s_axil_rready) {
        if (op.resp_done >= op.a_done) {
          fatal("AXI4-Lite violation at cycle %llu: RVALID for a read that was not accepted yet",
                static_cast<ull>(edge));
        }
        op.rdata[op.resp_done++] = m.s_axil_rdata;
        op.resp = std::max<uint8_t>(op.resp, m.s_axil_rresp);
      }
    }
  }

  void axil_drive(V& m) {
    AxilOp& op = op_;
    if (op.pending) {
      op.pending = false;
      op.active = true;
    }
    if (op.resp_done == op.n) {
      op.active = false;
      m.s_axil_awvalid = 0;
      m.s_axil_wvalid = 0;
      m.s_axil_bready = 0;
      m.s_axil_arvalid = 0;
      m.s_axil_rready = 0;
      return;
    }
    if (op.write) {
      const bool aw = op.a_done < op.n;
      m.s_axil_awvalid = aw ? 1 : 0;
      m.s_axil_awaddr =
          static_cast<uint16_t>(op.addr + 4u * static_cast<uint32_t>(aw ? op.a_done : 0));
      const bool w = op.w_done < op.n;
      m.s_axil_wvalid = w ? 1 : 0;
      m.s_axil_wdata = w ? op.wdata[op.w_done] : 0;
      m.s_axil_wstrb = 0xF;
      m.s_axil_bready = 1;
    } else {
      const bool ar = op.a_done < op.n;
      m.s_axil_arvalid = ar ? 1 : 0;
      m.s_axil_araddr =
          static_cast<uint16_t>(op.addr + 4u * static_cast<uint32_t>(ar ? op.a_done : 0));
      m.s_axil_rready = 1;
    }
  }

  CoreConfig cfg_;
  AxiDmaAdapter& dma_;
  TxSink& tx_;
  RxSource& rx_;
  Network& net_;
  std::vector<MmioWrite>& log_;
  PlatformStats& stats_;
  std::vector<RxBeat>* rx_beats_;
  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<V> m_;
  std::unique_ptr<VerilatedFstC> tfp_;
  uint64_t period_ps_ = 4000;
  uint64_t edges_ = 0;  // all rising edges including reset (waveform time base)
  AxilOp op_;
  bool finished_ = false;
  bool in_loop_ = false;
  bool held_ = false;        // reset held at run time (set_reset)
  uint64_t held_edges_ = 0;  // edges since the assertion
};

// The bare model: its own context and instance, reset as the platform resets it, then
// clocked with every input idle (two evals per cycle, as CoreImpl::tick), no tracing.
template <class V>
BareCoreSpeed bare_core_speed(uint64_t cycles) {
  VerilatedContext ctx;
  V m(&ctx, "bouncer_core");
  m.clk = 0;
  m.rst = 1;
  m.eval();
  for (int i = 0; i < 16; ++i) {
    m.clk = 1;
    m.eval();
    if (i == 15) m.rst = 0;
    m.clk = 0;
    m.eval();
  }
  const CpuWallClock t0;
  for (uint64_t i = 0; i < cycles; ++i) {
    m.clk = 1;
    m.eval();
    m.clk = 0;
    m.eval();
  }
  BareCoreSpeed r{cycles, t0.wall(), t0.cpu()};
  m.final();
  return r;
}

}  // namespace

BareCoreSpeed measure_bare_core(unsigned data_width, uint64_t cycles) {
  switch (data_width) {
    case 64:
      return bare_core_speed<Vbouncer_core_w64>(cycles);
    case 512:
      return bare_core_speed<Vbouncer_core_w512>(cycles);
    default:
      throw std::invalid_argument("measure_bare_core: data_width must be 64 or 512");
  }
}

std::unique_ptr<CoreModel> make_core_model(const CoreConfig& cfg, AxiDmaAdapter& dma, TxSink& tx,
                                           RxSource& rx, Network& net,
                                           std::vector<MmioWrite>& mmio_log, PlatformStats& stats,
                                           std::vector<RxBeat>* rx_beats) {
  switch (cfg.data_width) {
    case 64:
      return std::make_unique<CoreImpl<Vbouncer_core_w64>>(cfg, dma, tx, rx, net, mmio_log, stats,
                                                           rx_beats);
    case 512:
      return std::make_unique<CoreImpl<Vbouncer_core_w512>>(cfg, dma, tx, rx, net, mmio_log, stats,
                                                            rx_beats);
    default:
      fatal("PlatformConfig::data_width must be 64 or 512 (got %u)", cfg.data_width);
  }
}

}  // namespace bouncer::sim
