// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include "test_driver_fake_hal.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>

namespace bouncer::testing {

namespace r = regs::reg;

class FakeHal::Buf : public hal::DmaBuffer {
 public:
  Buf(FakeHal* owner, uint64_t addr, size_t bytes, bool coherent, uint32_t seed)
      : owner_(owner), addr_(addr), mem_(bytes, coherent, seed) {}
  ~Buf() override { owner_->unregister(addr_); }
  std::span<std::byte> bytes() override { return mem_.cpu(); }
  uint64_t device_addr() const override { return addr_; }
  void sync_to_device(size_t off, size_t len) override {
    owner_->record_sync(addr_ + off, len);
    mem_.to_device(off, len);
  }
  void sync_from_device(size_t off, size_t len) override {
    owner_->record_sync_from(addr_ + off, len);
    mem_.from_device(off, len);
  }
  /// Device memory.
  std::span<std::byte> mem() { return mem_.device(); }

 private:
  FakeHal* owner_;
  uint64_t addr_;
  FakeDmaMemory mem_;
};

FakeHal::FakeHal() : FakeHal(Config{}) {}
FakeHal::FakeHal(Config c) : cfg(c) {
  // Reset values of the passive CM's registers (their descriptions in the TOML).
  regs_[r::TIMER_TICK] = 256;
  regs_[r::RTO_INIT] = 976563;
  regs_[r::RTO_MAX] = 11718750;
  regs_[r::RTX_MAX] = 8;
  regs_[r::MPA_TIMEOUT] = 63476563;
  regs_[r::MPA_REASM_TIMEOUT] = 1953125;
  regs_[r::FIN_TIMEOUT] = 58593750;
  regs_[r::TIME_WAIT] = 97656;
  regs_[r::TCP_CFG] = regs::field::TCP_CFG::MSS.put(1460) | regs::field::TCP_CFG::WSCALE.put(0);
  regs_[r::TCP_WND] = regs::kMpaReqMax;
  regs_[r::CM_ROUTE] = 1;
  if (threaded()) {
    dma_ = std::make_unique<FakeDmaEngine>(FakeDmaEngine::Options{
        cfg.memory == FakeMemory::kThreaded, cfg.dma_seed, cfg.dma_max_delay});
  }
}
FakeHal::~FakeHal() = default;

void FakeHal::unregister(uint64_t addr) {
  // The device never writes memory the driver has freed: what is in flight lands first.
  if (dma_) dma_->drain();
  bufs_.erase(addr);
}

void FakeHal::settle() {
  if (dma_) dma_->drain();
}

std::byte* FakeHal::dev_ptr(uint64_t addr, size_t len) const {
  auto it = bufs_.upper_bound(addr);
  if (it == bufs_.begin()) return nullptr;
  --it;
  auto mem = it->second->mem();
  const uint64_t off = addr - it->first;
  if (off + len > mem.size()) return nullptr;
  return mem.data() + off;
}

bool FakeHal::read_fails(uint64_t addr, size_t len) const {
  for (const auto& [lo, hi] : dma_read_errors) {
    if (addr < hi && addr + len > lo) return true;
  }
  return false;
}

bool FakeHal::dev_write(uint64_t addr, std::span<const std::byte> in, int valid_qword) {
  std::byte* p = dev_ptr(addr, in.size());
  if (p == nullptr) return false;
  if (!dma_) {
    if (!in.empty()) std::memcpy(p, in.data(), in.size());
    return true;
  }
  for (size_t off = 0; off < in.size(); off += FakeDmaEngine::kMaxJob) {
    const size_t n = std::min(FakeDmaEngine::kMaxJob, in.size() - off);
    const int q = valid_qword - static_cast<int>(off / 8);
    dma_->post(p + off, in.subspan(off, n), q >= 0 && static_cast<size_t>(q) * 8 < n ? q : -1);
  }
  return true;
}

std::optional<std::array<std::byte, 64>> FakeHal::fetch_wqe(uint64_t addr) const {
  std::array<std::byte, 64> w{};
  const std::byte* p = dev_ptr(addr, w.size());
  if (p == nullptr) return std::nullopt;
  std::memcpy(w.data(), p, w.size());
  return w;
}

Result<std::unique_ptr<hal::DmaBuffer>> FakeHal::alloc_dma(size_t bytes, size_t align) {
  if (fail_alloc_after >= 0 && allocs_ >= fail_alloc_after) {
    return make_error(Errc::kNoMemory, "fake: allocation refused");
  }
  ++allocs_;
  const uint64_t a = std::max<uint64_t>(align, 64);
  next_addr_ = (next_addr_ + a - 1) / a * a;
  auto b = std::make_unique<Buf>(this, next_addr_, bytes, cfg.memory != FakeMemory::kNonCoherent,
                                 cfg.dma_seed + ++buf_seed_);
  bufs_[next_addr_] = b.get();
  next_addr_ += bytes + 4096;  // gaps: a stray address hits nothing
  return std::unique_ptr<hal::DmaBuffer>(std::move(b));
}

bool FakeHal::dma_read(uint64_t addr, std::span<std::byte> out) const {
  if (read_fails(addr, out.size())) return false;
  const std::byte* p = dev_ptr(addr, out.size());
  if (p == nullptr) return false;
  // The device's own writes to the range land before it reads it back.
  if (dma_ && dma_->pending(p, out.size())) dma_->drain();
  if (!out.empty()) std::memcpy(out.data(), p, out.size());
  return true;
}

bool FakeHal::dma_write(uint64_t addr, std::span<const std::byte> in) {
  std::byte* p = dev_ptr(addr, in.size());
  if (p == nullptr) return false;
  if (dma_ && dma_->pending(p, in.size())) dma_->drain();
  if (!in.empty()) std::memcpy(p, in.data(), in.size());
  return true;
}

uint32_t FakeHal::reg(uint32_t offset) const {
  auto it = regs_.find(offset);
  return it == regs_.end() ? 0 : it->second;
}

std::optional<uint32_t> FakeHal::last_write(uint32_t offset) const {
  for (auto it = writes.rbegin(); it != writes.rend(); ++it) {
    if (it->offset == offset) return it->value;
  }
  return std::nullopt;
}

void FakeHal::reset_state() {
  settle();  // the core resets only once its DMA is done
  ++resets_;
  dma_wr_err_ = false;
  qerr = 0;
  listeners = {};
  nodes.clear();
  aeq_pending_.clear();
  for (auto& q : sqs_) q = SqHw{};
  cqp_ = WqRing{};
  cqp_fetched_.clear();
  cq_ = CqRingHw{};
  ccq_ = CqRingHw{};
  aeq_ = CqRingHw{};
  for (uint32_t o :
       {r::CQ_BASE_LO, r::CQ_BASE_HI, r::CQP_BASE_LO, r::CQP_BASE_HI, r::CCQ_BASE_LO,
        r::CCQ_BASE_HI, r::AEQ_BASE_LO, r::AEQ_BASE_HI, r::PD_BASE_LO, r::PD_BASE_HI}) {
    regs_.erase(o);
  }
  for (unsigned n = 0; n < regs::kNumSqMax; ++n) {
    regs_.erase(r::sq_base_lo(n));
    regs_.erase(r::sq_base_lo(n) + 4);
  }
}

uint64_t FakeHal::base(const std::map<uint32_t, uint32_t>& rg, uint32_t lo) {
  auto get = [&](uint32_t o) -> uint64_t {
    auto it = rg.find(o);
    return it == rg.end() ? 0 : it->second;
  };
  return get(lo) | (get(lo + 4) << 32);
}

void FakeHal::count_read() {
  if (++reads_since_wait_ > 1'000'000) {
    throw std::runtime_error("fake: a million reads without a wait: a driver loop that spins");
  }
}

uint64_t FakeHal::now_cycles() {
  count_read();
  switch (cfg.cycles) {
    case Config::Cycles::kRunning:
      break;
    case Config::Cycles::kStuck:
      return kStuckCycles;
    case Config::Cycles::kTorn:
      if (cycle_reads_++ % 2 == 1) return now_ + (uint64_t{1} << 32);
      break;
  }
  return now_;
}

bool FakeHal::sq_pending() const {
  for (unsigned n = 0; n < cfg.num_sq; ++n) {
    if (sqs_[n].ring.ci != sqs_[n].ring.pi) return true;
  }
  return false;
}

uint32_t FakeHal::read32(uint32_t off) {
  count_read();
  const uint32_t v = read_reg(off);
  if (on_read) on_read(off);
  return v;
}

uint32_t FakeHal::read_reg(uint32_t off) {
  switch (off) {
    case r::ID:
      return cfg.id;
    case r::VERSION:
      return cfg.version;
    case r::CAPS:
      return regs::field::CAPS::DATA_BYTES.put(cfg.data_bytes) |
             regs::field::CAPS::CTX_LOG2.put(cfg.ctx_log2) |
             regs::field::CAPS::NUM_SQ.put(cfg.num_sq) | regs::field::CAPS::PUSH.put(cfg.push) |
             regs::field::CAPS::INLINE.put(cfg.inline_pd);
    case r::STATUS:
      return regs::field::STATUS::AEQ_FULL.put(!aeq_pending_.empty()) |
             regs::field::STATUS::CQ_FULL.put(sq_pending() && !cq_.room()) |
             regs::field::STATUS::DMA_WR_ERR.put(dma_wr_err_) |
             regs::field::STATUS::CM_READY.put(now_ >= cfg.cm_ready_cycles);
    case r::QERR:
      return qerr;
    case r::AEQ_TAIL:
      return aeq_.tail;
    case r::CM_CONNS:
      return static_cast<uint32_t>(nodes.size());
    case r::STAT_SQ_DB_BAD:
      return stat_db_bad_;
    case r::CQ_TAIL:
      return cq_.tail;
    case r::CQP_CI:
      return cqp_.ci;
    case r::CCQ_TAIL:
      return ccq_.tail;
    case r::CYCLE_LO: {
      const uint64_t c = now_cycles();
      cycle_hi_latch_ = static_cast<uint32_t>(c >> 32);
      return static_cast<uint32_t>(c);
    }
    case r::CYCLE_HI:
      return cycle_hi_latch_;
    case r::STAT_PUSH_USED:
      return stat_push_used_;
    case r::STAT_PUSH_DROPPED:
      return stat_push_dropped_;
    case r::STAT_SQ_WQES:
      return stat_sq_wqes_;
    case r::STAT_CQP_WQES:
      return stat_cqp_wqes_;
    case r::SQ_DB:
    case r::SQ_PUSH_DB:
    case r::CQP_DB:
      return 0;  // write-only
    default:
      if (off >= r::SQ_BASE_LO && off < r::sq_base_lo(r::SQ_BASE_LO_ARRAY)) {
        const unsigned n = (off - r::SQ_BASE_LO) / r::SQ_BASE_LO_STRIDE;
        const uint32_t in = (off - r::SQ_BASE_LO) % r::SQ_BASE_LO_STRIDE;
        if (n >= cfg.num_sq) return 0;  // no such SQ
        if (in == r::SQ_CI - r::SQ_BASE_LO) return sqs_[n].ring.ci;
        if (in == r::SQ_PI - r::SQ_BASE_LO) return sqs_[n].ring.pi;
        return reg(off);
      }
      if (off >= r::ISN_KEY && off < r::ISN_KEY + 4 * r::ISN_KEY_COUNT) return 0;  // wo
      if ((off >= r::STAT_RX_FRAMES && off <= r::STAT_ACK_TX) ||
          (off >= r::STAT_DMA_RD_ERR && off <= r::STAT_DMA_TIMEOUT) || off == r::STAT_RX_FILTERED ||
          off == r::STAT_RX_STRAY || off == r::STAT_AEQ_REFUSED || off == r::STAT_EVT_COALESCED ||
          off == r::STAT_ARP_REPLIED || off == r::STAT_ARP_DROPPED ||
          off == r::STAT_SYN_DROP_QUEUE) {
        auto it = cm_stats.find(off);
        return it == cm_stats.end() ? 0 : it->second;
      }
      return reg(off);
  }
}

void FakeHal::write32(uint32_t off, uint32_t v) {
  writes.push_back({off, v});
  if (off >= r::PUSH_PAGE && off < r::push_page(r::PUSH_PAGE_ARRAY)) {
    const unsigned n = (off - r::PUSH_PAGE) / r::PUSH_PAGE_STRIDE;
    if (n < cfg.num_sq) sqs_[n].push_page[(off - r::push_page(n)) / 4] = v;
    return;
  }
  if (off >= r::SQ_BASE_LO && off < r::sq_base_lo(r::SQ_BASE_LO_ARRAY)) {
    const unsigned n = (off - r::SQ_BASE_LO) / r::SQ_BASE_LO_STRIDE;
    if (n >= cfg.num_sq) return;                           // no such SQ: ignored
    if (off == r::sq_ci(n) || off == r::sq_pi(n)) return;  // read only
    regs_[off] = v;
    if (off == r::sq_size(n)) {
      qerr &= ~(0xFu << (regs::field::QERR::SQ0.lsb + 4 * n));
      const uint32_t lg = std::clamp<uint32_t>(v, regs::kRingLog2Min, regs::kRingLog2Max);
      regs_[off] = lg;
      sqs_[n] = SqHw{};
      sqs_[n].ring = WqRing{base(regs_, r::sq_base_lo(n)), lg, 0, 0, 1};
    }
    return;
  }
  regs_[off] = v;
  if (off >= r::ISN_KEY && off < r::ISN_KEY + 4 * r::ISN_KEY_COUNT) {
    isn_key_[(off - r::ISN_KEY) / 4] = v;
    regs_.erase(off);
    return;
  }
  switch (off) {
    case r::CTRL:
      if (regs::field::CTRL::RESET.get(v) != 0 && !cfg.reset_hangs) {
        regs_[r::CTRL] = v & ~regs::field::CTRL::RESET.mask();
        reset_state();
      }
      break;
    case r::AEQ_SIZE:
      aeq_ = CqRingHw{base(regs_, r::AEQ_BASE_LO), v, 0, 0, 1};
      aeq_pending_.clear();
      break;
    case r::AEQ_HEAD:
      aeq_.head = v % aeq_.size();
      pump_aeq();
      break;
    case r::CQ_SIZE:
      cq_ = CqRingHw{base(regs_, r::CQ_BASE_LO), v, 0, 0, 1};
      break;
    case r::CQP_SIZE:
      cqp_ = WqRing{base(regs_, r::CQP_BASE_LO), v, 0, 0, 1};
      cqp_fetched_.clear();
      break;
    case r::CCQ_SIZE:
      ccq_ = CqRingHw{base(regs_, r::CCQ_BASE_LO), v, 0, 0, 1};
      break;
    case r::CQ_HEAD:
      if (!freeze_cq_head) cq_.head = v % cq_.size();
      break;
    case r::CCQ_HEAD:
      ccq_.head = v % ccq_.size();
      break;
    case r::SQ_DB:
    case r::SQ_PUSH_DB: {
      const unsigned q = regs::field::SQ_DB::SQ.get(v);
      if (q >= cfg.num_sq) {  // ignored, counted
        ++stat_db_bad_;
        break;
      }
      if (((qerr >> (regs::field::QERR::SQ0.lsb + 4 * q)) & 0xFu) != 0) break;  // queue error
      SqHw& sq = sqs_[q];
      const uint32_t pi = regs::field::SQ_DB::PI.get(v);
      const uint32_t n = sq.ring.size();
      for (uint32_t i = sq.ring.pi; i != pi % n; i = (i + 1) % n) {
        sq.db_cycle[i] = now_;
        if (threaded()) sq.fetched[i] = fetch_wqe(sq.ring.base + uint64_t{i} * 64);
      }
      sq.ring.pi = pi % n;
      if (off == r::SQ_PUSH_DB) {
        std::array<std::byte, 64> img;
        std::memcpy(img.data(), sq.push_page.data(), 64);
        sq.pushed[(pi + n - 1) % n] = img;
      }
      break;
    }
    case r::CQP_DB:
      if (threaded()) {
        for (uint32_t i = cqp_.pi; i != v % cqp_.size(); i = (i + 1) % cqp_.size()) {
          cqp_fetched_[i] = fetch_wqe(cqp_.base + uint64_t{i} * 64);
        }
      }
      cqp_.pi = v % cqp_.size();
      break;
    default:
      break;
  }
}

void FakeHal::write_block(uint32_t offset, std::span<const uint32_t> words) {
  if (offset >= r::PUSH_PAGE && offset < r::push_page(r::PUSH_PAGE_ARRAY) &&
      (offset - r::PUSH_PAGE) % r::PUSH_PAGE_STRIDE == 0 && words.size() == 16) {
    std::array<uint32_t, 16> img;
    std::copy(words.begin(), words.end(), img.begin());
    push_images.push_back(img);
  }
  hal::Device::write_block(offset, words);
}

void FakeHal::write_push(uint32_t offset, std::span<const uint64_t, 8> qwords) {
  push_bursts.push_back(offset);
  hal::Device::write_push(offset, qwords);  // the default: write_block of 16 words
}

void FakeHal::advance_host(uint64_t cycles) {
  reads_since_wait_ = 0;
  if (dma_ && dma_->busy()) {
    // Device writes in flight: time stands still until they land (the header).
    std::this_thread::yield();
    return;
  }
  host_ += kCycle * static_cast<int64_t>(cycles);
  if (host_ > cfg.host_time_limit) {
    throw std::runtime_error("fake: host clock at " + std::to_string(host_.count()) +
                             " ns, past Config::host_time_limit: a wait that does not end");
  }
}

void FakeHal::wait_cycles(uint64_t cycles) {
  if (!(dma_ && dma_->busy())) now_ += cycles;
  advance_host(cycles);
  step();  // the driver's own waits: what the engines write lands later, while it polls
}

void FakeHal::wait_for(std::chrono::nanoseconds d) {
  if (d <= std::chrono::nanoseconds::zero()) return;
  const auto cycles = static_cast<uint64_t>((d + kCycle - std::chrono::nanoseconds(1)) / kCycle);
  wait_cycles(cycles);
}

void FakeHal::step() {
  pump_aeq();
  if (hold || (reg(r::CTRL) & 1) == 0) return;
  process_cqp();
  process_sq();
}

void FakeHal::run() {
  step();
  settle();
}

bool FakeHal::write_failed(uint64_t addr, size_t len) {
  for (const auto& [lo, hi] : dma_write_errors) {
    if (addr < hi && addr + len > lo) {
      dma_wr_err_ = true;
      return true;
    }
  }
  return false;
}

void FakeHal::write_cqe(CqRingHw& cq, std::array<std::byte, 32>& img) {
  regs::put(img, regs::cqe::VALID, cq.pol);
  const uint64_t at = cq.base + uint64_t{cq.tail} * 32;
  if (!write_failed(at, img.size())) dev_write(at, img, regs::cqe::VALID.qword);
  cq.tail = (cq.tail + 1) % cq.size();
  if (cq.tail == 0) cq.pol ^= 1;
}

void FakeHal::inject_cqe(std::span<const std::byte> cqe32) {
  std::array<std::byte, 32> img;
  std::memcpy(img.data(), cqe32.data(), 32);
  write_cqe(cq_, img);
}

void FakeHal::process_cqp() {
  namespace w = regs::cqp_wqe;
  namespace c = regs::cqe;
  while (cqp_.ci != cqp_.pi && ccq_.room()) {
    const uint32_t idx = cqp_.ci;
    std::array<std::byte, 64> wqe{};
    uint16_t major = 0, minor = 0;
    bool fetched = false;
    if (auto f = cqp_fetched_.find(idx); f != cqp_fetched_.end()) {
      // fetched at the doorbell; a read error still fails it
      fetched = f->second.has_value() && !read_fails(cqp_.base + uint64_t{idx} * 64, 64);
      if (fetched) wqe = *f->second;
      cqp_fetched_.erase(f);
    } else {
      fetched = dma_read(cqp_.base + uint64_t{idx} * 64, wqe);
    }
    const auto op = static_cast<uint8_t>(regs::get(wqe, w::OPCODE));
    const auto cm_id = static_cast<uint32_t>(regs::get(wqe, w::CM_ID));
    const uint64_t ctx_addr = regs::get(wqe, w::CTX_ADDR);
    auto err = [&](regs::CqMajor ma, regs::CqMinor mi) {
      major = static_cast<uint16_t>(ma);
      minor = static_cast<uint16_t>(mi);
    };
    const bool in_range = cm_id < (1u << cfg.ctx_log2);
    if (!fetched) {
      err(regs::CqMajor::DMA, regs::CqMinor::DMA_WQE);
    } else if (regs::get(wqe, w::VALID) != cqp_.pol) {
      err(regs::CqMajor::WQE, regs::CqMinor::STALE_WQE);
    } else if ((op == static_cast<uint8_t>(regs::CqpOp::WRITE_CM_CONTEXT) ||
                op == static_cast<uint8_t>(regs::CqpOp::READ_CM_CONTEXT)) &&
               ctx_addr % 64 != 0) {
      err(regs::CqMajor::WQE, regs::CqMinor::ADDR_MISALIGNED);
    } else if (op == static_cast<uint8_t>(regs::CqpOp::WRITE_CM_CONTEXT)) {
      std::array<std::byte, 64> ctx{};
      if (!in_range) {
        err(regs::CqMajor::CTX, regs::CqMinor::CM_ID_RANGE);
      } else if (!dma_read(ctx_addr, ctx)) {
        err(regs::CqMajor::DMA, regs::CqMinor::DMA_CTX);
      } else {
        contexts[cm_id] = ctx;
      }
    } else if (op == static_cast<uint8_t>(regs::CqpOp::CREATE_LISTENER) ||
               op == static_cast<uint8_t>(regs::CqpOp::DESTROY_LISTENER)) {
      process_listener_op(wqe, op == static_cast<uint8_t>(regs::CqpOp::CREATE_LISTENER), major,
                          minor);
    } else if (op == static_cast<uint8_t>(regs::CqpOp::READ_CM_CONTEXT)) {
      std::array<std::byte, 64> ctx{};
      if (auto it = contexts.find(cm_id); it != contexts.end()) ctx = it->second;
      if (auto n = nodes.find(cm_id); n != nodes.end()) ctx = node_context(n->second);
      if (!in_range) {
        err(regs::CqMajor::CTX, regs::CqMinor::CM_ID_RANGE);
      } else if (!dev_write(ctx_addr, ctx)) {
        err(regs::CqMajor::DMA, regs::CqMinor::DMA_CTX);
      }
    } else if (op != static_cast<uint8_t>(regs::CqpOp::NOP)) {
      err(regs::CqMajor::WQE, regs::CqMinor::BAD_OPCODE);
    }
    std::array<std::byte, 32> cqe{};
    regs::put(cqe, c::WR_ID, regs::get(wqe, w::SCRATCH));
    regs::put(cqe, c::CM_ID, cm_id);
    regs::put(cqe, c::MINERR, minor);
    regs::put(cqe, c::MAJERR, major);
    regs::put(cqe, c::WQEIDX, idx);
    regs::put(cqe, c::ERROR, major != 0);
    regs::put(cqe, c::OP, op);
    regs::put(cqe, c::SQ, 0);
    write_cqe(ccq_, cqe);
    ++stat_cqp_wqes_;
    cqp_.ci = (cqp_.ci + 1) % cqp_.size();
    if (cqp_.ci == 0) cqp_.pol ^= 1;
  }
}

// One WQE per turn, round-robin over the SQs with work (the RTL's order: with every SQ
// pending, 0, 1, 2, 3, 0, ...).
void FakeHal::process_sq() {
  for (;;) {
    if (!cq_.room() || (cfg.sq_waits_for_aeq && !aeq_pending_.empty())) return;
    std::optional<unsigned> pick;
    for (unsigned k = 1; k <= cfg.num_sq && !pick; ++k) {
      const unsigned q = (rr_last_ + k) % cfg.num_sq;
      if (sqs_[q].ring.ci != sqs_[q].ring.pi) pick = q;
    }
    if (!pick) return;
    rr_last_ = *pick;
    (void)process_one_sq_wqe(*pick);
  }
}

bool FakeHal::process_one_sq_wqe(unsigned q) {
  namespace w = regs::sq_wqe;
  namespace c = regs::cqe;
  namespace x = regs::cm_ctx;
  SqHw& sq = sqs_[q];
  WqRing& ring = sq.ring;
  {
    const uint32_t idx = ring.ci;
    std::array<std::byte, 64> wqe{};
    bool from_push = false;
    bool fetched = true;
    if (auto it = sq.pushed.find(idx); it != sq.pushed.end()) {
      if (cfg.accept_push) {
        wqe = it->second;
        from_push = true;
        ++stat_push_used_;
      } else {
        ++stat_push_dropped_;
      }
      sq.pushed.erase(it);
    }
    if (auto f = sq.fetched.find(idx); f != sq.fetched.end()) {
      if (!from_push) {  // fetched at the doorbell; a read error still fails it
        fetched = f->second.has_value() && !read_fails(ring.base + uint64_t{idx} * 64, 64);
        if (fetched) wqe = *f->second;
      }
      sq.fetched.erase(f);
    } else if (!from_push) {
      fetched = dma_read(ring.base + uint64_t{idx} * 64, wqe);
    }
    const bool pshdrop = !from_push && regs::get(wqe, w::PUSHWQE) != 0;
    const auto op = static_cast<uint8_t>(regs::get(wqe, w::OPCODE));
    const auto cm_id = static_cast<uint32_t>(regs::get(wqe, w::CM_ID));
    const auto pd_len = static_cast<uint16_t>(regs::get(wqe, w::PD_LEN));
    const bool inl = regs::get(wqe, w::PD_INLINE) != 0;
    const uint64_t pd_addr = regs::get(wqe, w::PD_ADDR);
    const bool fin = regs::get(wqe, w::FIN_POLICY) == static_cast<uint64_t>(regs::FinPolicy::IRDMA);
    uint16_t major = 0, minor = 0;
    auto err = [&](regs::CqMajor ma, regs::CqMinor mi) {
      major = static_cast<uint16_t>(ma);
      minor = static_cast<uint16_t>(mi);
    };
    uint32_t latency = 0, tcp_seq = 0;
    uint16_t frame_len = 0;
    const uint64_t start = std::max(sq.db_cycle[idx], busy_until_);
    now_ = std::max(now_, start);
    if (!fetched) {
      err(regs::CqMajor::DMA, regs::CqMinor::DMA_WQE);
    } else if (regs::get(wqe, w::VALID) != ring.pol) {
      err(regs::CqMajor::WQE, regs::CqMinor::STALE_WQE);
    } else if (op == static_cast<uint8_t>(regs::SqOp::NOP)) {
      // nothing
    } else if (op != static_cast<uint8_t>(regs::SqOp::MPA_REJECT)) {
      err(regs::CqMajor::WQE, regs::CqMinor::BAD_OPCODE);
    } else if (inl && pd_len > regs::kInlinePdMax) {
      err(regs::CqMajor::WQE, regs::CqMinor::PD_TOO_LONG);
    } else if (!inl && pd_len > 0 && pd_addr % 8 != 0) {
      err(regs::CqMajor::WQE, regs::CqMinor::ADDR_MISALIGNED);
    } else if (cm_id >= (1u << cfg.ctx_log2)) {
      err(regs::CqMajor::CTX, regs::CqMinor::CM_ID_RANGE);
    } else if (node_reject(cm_id, wqe, from_push, q, idx, major, minor, tcp_seq, frame_len)) {
      if (major == 0) latency = static_cast<uint32_t>(now_ - start + 10);
    } else {
      auto it = contexts.find(cm_id);
      std::array<std::byte, 64> none{};
      std::span<std::byte> ctx = it == contexts.end() ? std::span<std::byte>(none) : it->second;
      const auto rev = regs::get(ctx, x::REQ_REV);
      const auto flags = regs::get(ctx, x::REQ_FLAGS);
      const bool enhanced = rev == 2 && (flags & 0x10) != 0;
      const uint32_t wire = pd_len + (enhanced ? 4u : 0u);
      std::vector<uint8_t> pd(pd_len);
      if (regs::get(ctx, x::CTX_VALID) == 0) {
        err(regs::CqMajor::CTX, regs::CqMinor::NO_CONTEXT);
      } else if (regs::get(ctx, x::REJECTED) != 0) {
        err(regs::CqMajor::CTX, regs::CqMinor::BAD_STATE);
      } else if (rev != 1 && rev != 2) {
        err(regs::CqMajor::CTX, regs::CqMinor::BAD_REV);
      } else if (wire > regs::kMpaPdMax) {
        err(regs::CqMajor::WQE, regs::CqMinor::PD_TOO_LONG);
      } else if (inl) {
        std::copy_n(wqe.begin() + 32, pd_len, reinterpret_cast<std::byte*>(pd.data()));
      } else if (pd_len > 0 && !dma_read(pd_addr, std::as_writable_bytes(std::span(pd)))) {
        err(regs::CqMajor::DMA, regs::CqMinor::DMA_PD);
      }
      if (major == 0) {
        const uint32_t m = 20 + wire;
        tcp_seq = static_cast<uint32_t>(regs::get(ctx, x::SND_NXT));
        frame_len = static_cast<uint16_t>(14 + (regs::get(ctx, x::VLAN_EN) ? 4 : 0) + 40 + m);
        regs::put(ctx, x::SND_NXT, tcp_seq + m + (fin ? 1 : 0));
        regs::put(ctx, x::IP_ID, regs::get(ctx, x::IP_ID) + 1);
        regs::put(ctx, x::REJECTED, 1);
        latency = static_cast<uint32_t>(now_ - start + 10);
        FakeFrame fr;
        fr.sq = q;
        fr.wqe_idx = static_cast<uint16_t>(idx);
        fr.cm_id = cm_id;
        fr.pd = pd;
        fr.fin = fin;
        fr.ird_ord_valid = regs::get(wqe, w::IRD_ORD_VALID) != 0;
        fr.ird_ord = static_cast<uint32_t>(regs::get(wqe, w::IRD_ORD));
        fr.from_push = from_push;
        fr.tcp_seq = tcp_seq;
        fr.wire_pd_len = static_cast<uint16_t>(wire);
        fr.fin_policy = static_cast<regs::FinPolicy>(regs::get(wqe, w::FIN_POLICY));
        frames.push_back(std::move(fr));
      }
    }
    now_ += cfg.wqe_cycles;
    busy_until_ = now_;
    std::array<std::byte, 32> cqe{};
    regs::put(cqe, c::LATENCY, latency);
    regs::put(cqe, c::FRAME_LEN, frame_len);
    regs::put(cqe, c::WR_ID, regs::get(wqe, w::WR_ID));
    regs::put(cqe, c::TCP_SEQ, tcp_seq);
    regs::put(cqe, c::CM_ID, cm_id);
    regs::put(cqe, c::MINERR, minor);
    regs::put(cqe, c::MAJERR, major);
    regs::put(cqe, c::WQEIDX, idx);
    regs::put(cqe, c::SQ_IDX, q);
    regs::put(cqe, c::PSHDROP, pshdrop);
    regs::put(cqe, c::ERROR, major != 0);
    regs::put(cqe, c::OP, op);
    regs::put(cqe, c::SQ, 1);
    write_cqe(cq_, cqe);
    last_cqe_ = cqe;
    ++stat_sq_wqes_;
    sq.db_cycle.erase(idx);
    ring.ci = (ring.ci + 1) % ring.size();
    if (ring.ci == 0) ring.pol ^= 1;
  }
  return true;
}

// ------------------------------------------------------------------------------- passive CM

namespace {
constexpr uint32_t kSlot = regs::kPdSlotBytes;

regs::FinPolicy resolve(regs::FinPolicy p) {
  return p == regs::FinPolicy::DEFAULT ? regs::FinPolicy::SIW_SAFE : p;
}

bool after_reject_state(regs::CmState s) {
  switch (s) {
    case regs::CmState::REJ_SENT:
    case regs::CmState::FIN_WAIT1:
    case regs::CmState::FIN_WAIT2:
    case regs::CmState::CLOSING:
    case regs::CmState::TIME_WAIT:
    case regs::CmState::LAST_ACK:
      return true;
    default:
      return false;
  }
}
}  // namespace

void FakeHal::process_listener_op(std::span<const std::byte> wqe, bool create, uint16_t& major,
                                  uint16_t& minor) {
  namespace l = regs::cqp_listen_wqe;
  auto err = [&](regs::CqMajor ma, regs::CqMinor mi) {
    major = static_cast<uint16_t>(ma);
    minor = static_cast<uint16_t>(mi);
  };
  const auto index = static_cast<unsigned>(regs::get(wqe, l::LISTENER));
  if (index >= cfg.num_listeners) return err(regs::CqMajor::CTX, regs::CqMinor::BAD_LISTENER);
  if (!create) {
    if (!listeners[index]) return err(regs::CqMajor::CTX, regs::CqMinor::BAD_LISTENER);
    listeners[index].reset();
    return;
  }
  FakeListener fl;
  fl.tmpl_addr = regs::get(wqe, l::TMPL_ADDR);
  fl.tmpl_len = static_cast<uint16_t>(regs::get(wqe, l::TMPL_LEN));
  if (fl.tmpl_len > regs::kMpaPdMax) return err(regs::CqMajor::WQE, regs::CqMinor::PD_TOO_LONG);
  if (fl.tmpl_len > 0 && fl.tmpl_addr % 8 != 0) {
    return err(regs::CqMajor::WQE, regs::CqMinor::ADDR_MISALIGNED);
  }
  fl.loc_ip = static_cast<uint32_t>(regs::get(wqe, l::LOC_IP));
  fl.loc_port = static_cast<uint16_t>(regs::get(wqe, l::LOC_PORT));
  fl.backlog = static_cast<uint16_t>(regs::get(wqe, l::BACKLOG));
  fl.fin_policy = static_cast<regs::FinPolicy>(regs::get(wqe, l::FIN_POLICY));
  fl.auto_reject = static_cast<regs::AutoReject>(regs::get(wqe, l::AUTO_REJECT));
  fl.tmpl_ird_ord_valid = regs::get(wqe, l::TMPL_IRD_ORD_VALID) != 0;
  fl.tmpl_ird_ord = static_cast<uint32_t>(regs::get(wqe, l::TMPL_IRD_ORD));
  fl.aeq_full_rst = regs::get(wqe, l::AEQ_FULL_RST) != 0;
  fl.loc_mac = regs::get(wqe, l::LOC_MAC);
  fl.ttl = static_cast<uint8_t>(regs::get(wqe, l::TTL));
  fl.tos = static_cast<uint8_t>(regs::get(wqe, l::TOS));
  fl.max_ird = static_cast<uint16_t>(regs::get(wqe, l::MAX_IRD));
  fl.max_ord = static_cast<uint16_t>(regs::get(wqe, l::MAX_ORD));
  // the template is copied on chip now; a read error installs nothing
  fl.tmpl.resize(fl.tmpl_len);
  if (fl.tmpl_len > 0 && !dma_read(fl.tmpl_addr, fl.tmpl)) {
    return err(regs::CqMajor::DMA, regs::CqMinor::DMA_PD);
  }
  listeners[index] = fl;  // replaces a valid entry
}

std::optional<unsigned> FakeHal::match_listener(uint32_t ip, uint16_t port) const {
  std::optional<unsigned> wild;
  for (unsigned i = 0; i < listeners.size(); ++i) {
    const auto& l = listeners[i];
    if (!l || l->loc_port != port) continue;
    if (l->loc_ip == ip) return i;  // an exact-address listener wins
    if (l->loc_ip == 0 && !wild) wild = i;
  }
  return wild;
}

std::optional<uint32_t> FakeHal::alloc_cm_id(const std::optional<uint32_t>& want) const {
  const uint32_t depth = 1u << cfg.ctx_log2;
  auto taken = [&](uint32_t id) {
    if (nodes.count(id) != 0) return true;
    auto c = contexts.find(id);
    return c != contexts.end() && regs::get(c->second, regs::cm_ctx::CTX_VALID) != 0;
  };
  if (want) {
    if (*want >= depth || nodes.count(*want) != 0) return std::nullopt;
    return want;
  }
  for (uint32_t id = 0; id < depth; ++id) {
    if (!taken(id)) return id;
  }
  return std::nullopt;
}

std::array<std::byte, 32> FakeHal::event_image(uint32_t cm_id, const FakeNode& n,
                                               regs::AeqEvent code) const {
  namespace a = regs::aeqe;
  std::array<std::byte, 32> img{};
  regs::put(img, a::REM_IP, n.req.rem_ip);
  regs::put(img, a::LOC_IP, n.req.loc_ip);
  regs::put(img, a::REM_PORT, n.req.rem_port);
  regs::put(img, a::LOC_PORT, n.req.loc_port);
  regs::put(img, a::CM_ID, cm_id);
  regs::put(img, a::LISTENER, n.listener);
  regs::put(img, a::EVENT_CODE, static_cast<uint64_t>(code));
  if (code == regs::AeqEvent::CONNECT_REQUEST) {
    regs::put(img, a::IRD_ORD, n.req.enhanced() ? n.req.ird_ord : 0);
    regs::put(img, a::PD_OFFSET, cm_id * kSlot);
    regs::put(img, a::PD_LEN, n.req.pd.size());
    regs::put(img, a::REV, n.req.rev);
    regs::put(img, a::FLAGS, n.req.flags);
  }
  return img;
}

void FakeHal::queue_event(const std::array<std::byte, 32>& img, std::optional<uint32_t> frees) {
  aeq_pending_.push_back(PendingEvent{img, frees});
  pump_aeq();
}

void FakeHal::pump_aeq() {
  // The CM engine waits while the ring is full (tail + 1 == head): nothing is overwritten.
  while (!aeq_pending_.empty() && aeq_.base != 0 && aeq_.room()) {
    PendingEvent ev = aeq_pending_.front();
    aeq_pending_.pop_front();
    regs::put(ev.img, regs::aeqe::VALID, aeq_.pol);
    const uint64_t at = aeq_.base + uint64_t{aeq_.tail} * 32;
    if (!write_failed(at, ev.img.size())) dev_write(at, ev.img, regs::aeqe::VALID.qword);
    events_written.push_back(ev.img);
    aeq_.tail = (aeq_.tail + 1) % aeq_.size();
    if (aeq_.tail == 0) aeq_.pol ^= 1;
    bump(r::STAT_EVENTS);
    if (ev.frees) {
      nodes.erase(*ev.frees);  // a cm_id is reused only after its terminal event is written
      bump(r::STAT_CLOSED);
    }
  }
}

void FakeHal::inject_aeqe(std::span<const std::byte> aeqe32) {
  std::array<std::byte, 32> img{};
  std::memcpy(img.data(), aeqe32.data(), 32);
  queue_event(img, std::nullopt);
}

void FakeHal::write_stale_aeqe(std::span<const std::byte> aeqe32) {
  std::array<std::byte, 32> img{};
  std::memcpy(img.data(), aeqe32.data(), 32);
  regs::put(img, regs::aeqe::VALID, aeq_.pol ^ 1u);
  dev_write(aeq_.base + uint64_t{aeq_.tail} * 32, img, regs::aeqe::VALID.qword);
}

std::optional<uint32_t> FakeHal::inject_connect_request(const FakeRequest& r) {
  auto li = match_listener(r.loc_ip, r.loc_port);
  if (!li) {
    bump(r::STAT_SYN_NO_LISTENER);
    bump(r::STAT_RST_TX);
    return std::nullopt;
  }
  const FakeListener& l = *listeners[*li];
  unsigned waiting = 0;
  for (const auto& [id, n] : nodes) {
    waiting += n.listener == *li && !n.auto_rej &&
               (n.state == regs::CmState::MPAREQ_RCVD || n.state == regs::CmState::PEER_RESET);
  }
  bool autorej = l.auto_reject == regs::AutoReject::ALL;
  if (l.auto_reject == regs::AutoReject::IRD_ORD && r.enhanced()) {
    const uint32_t ird = (r.ird_ord >> 16) & 0x3FFF, ord = r.ird_ord & 0x3FFF;
    autorej = ird > l.max_ird || ord > l.max_ord;
  }
  if (!autorej && l.backlog != 0 && waiting >= l.backlog) {
    if (l.auto_reject != regs::AutoReject::BACKLOG) {
      bump(r::STAT_SYN_DROP_BACKLOG);
      return std::nullopt;
    }
    autorej = true;
  }
  auto id = alloc_cm_id(r.cm_id);
  if (!id) {
    bump(r::STAT_SYN_DROP_FULL);
    return std::nullopt;
  }
  FakeNode n;
  n.req = r;
  n.listener = *li;
  n.fin_policy = resolve(l.fin_policy);
  n.iss = next_iss_;
  next_iss_ += 0x01000193;
  bump(r::STAT_CONN_ESTABLISHED);
  bump(r::STAT_MPA_REQ);
  FakeNode& node = nodes[*id] = n;
  if (autorej) {
    auto_reject(*id, node, l);
    return id;
  }
  // The request PD goes to slot cm_id first, then the event that points at it.
  node.hosted = true;
  if (!r.pd.empty()) dev_write(pd_base() + uint64_t{*id} * kSlot, std::as_bytes(std::span(r.pd)));
  queue_event(event_image(*id, node, regs::AeqEvent::CONNECT_REQUEST), std::nullopt);
  return id;
}

void FakeHal::auto_reject(uint32_t cm_id, FakeNode& n, const FakeListener& l) {
  n.auto_rej = true;
  FakeFrame fr;
  fr.wqe_idx = 0xFFFF;
  fr.cm_id = cm_id;
  fr.pd.resize(l.tmpl.size());
  if (!l.tmpl.empty()) std::memcpy(fr.pd.data(), l.tmpl.data(), l.tmpl.size());
  // what the reject sent goes to the node's slot, which its retransmissions read
  if (!l.tmpl.empty()) dev_write(pd_base() + uint64_t{cm_id} * kSlot, l.tmpl);
  fr.auto_reject = true;
  fr.fin_policy = n.fin_policy;
  fr.fin = n.fin_policy == regs::FinPolicy::IRDMA;
  fr.rst_after = n.fin_policy == regs::FinPolicy::ABORT;
  fr.ird_ord_valid = n.req.enhanced() && l.tmpl_ird_ord_valid;
  fr.ird_ord = fr.ird_ord_valid ? l.tmpl_ird_ord : 0;
  fr.tcp_seq = n.iss + 1;
  fr.wire_pd_len = static_cast<uint16_t>(l.tmpl_len + (n.req.enhanced() ? 4 : 0));
  frames.push_back(fr);
  n.rej_pd_len = l.tmpl_len;
  bump(r::STAT_REJECT_AUTO);
  after_reject(cm_id, n);
}

// Where a node goes once its reject is out.
void FakeHal::after_reject(uint32_t cm_id, FakeNode& n) {
  switch (n.fin_policy) {
    case regs::FinPolicy::IRDMA:
      n.state = regs::CmState::FIN_WAIT1;
      bump(r::STAT_FIN_TX);
      break;
    case regs::FinPolicy::ABORT:
      bump(r::STAT_RST_TX);
      if (n.hosted) {
        // Freed at once; the host is owed its terminal event (CLOSED in this model).
        n.ending = true;
        queue_event(event_image(cm_id, n, regs::AeqEvent::CLOSED), cm_id);
      } else {
        nodes.erase(cm_id);
        bump(r::STAT_CLOSED);
      }
      break;
    default:
      n.state = regs::CmState::REJ_SENT;
      break;
  }
}

std::optional<uint32_t> FakeHal::inject_mpa_error(const FakeRequest& r, regs::MpaError reason) {
  auto li = match_listener(r.loc_ip, r.loc_port);
  if (!li) return std::nullopt;
  auto id = alloc_cm_id(r.cm_id);
  if (!id) return std::nullopt;
  FakeNode n;
  n.req = r;
  n.listener = *li;
  n.state = regs::CmState::ESTABLISHED;
  n.ending = true;
  nodes[*id] = n;
  auto img = event_image(*id, n, regs::AeqEvent::MPA_ERROR);
  regs::put(img, regs::aeqe::REASON, static_cast<uint64_t>(reason));
  bump(r::STAT_MPA_ERR);
  bump(r::STAT_RST_TX);
  queue_event(img, *id);
  return id;
}

bool FakeHal::inject_peer_reset(uint32_t cm_id) {
  auto it = nodes.find(cm_id);
  if (it == nodes.end() || it->second.ending) return false;
  FakeNode& n = it->second;
  bump(r::STAT_RST_RX);
  if (n.auto_rej) {
    nodes.erase(it);
    bump(r::STAT_CLOSED);
    return true;
  }
  if (n.state == regs::CmState::MPAREQ_RCVD) {
    n.state = regs::CmState::PEER_RESET;  // held: the host's reject frees it
    queue_event(event_image(cm_id, n, regs::AeqEvent::RESET), std::nullopt);
    return true;
  }
  if (!after_reject_state(n.state)) return false;
  n.ending = true;
  queue_event(event_image(cm_id, n, regs::AeqEvent::RESET), cm_id);
  return true;
}

bool FakeHal::finish_node(uint32_t cm_id, regs::AeqEvent code) {
  auto it = nodes.find(cm_id);
  if (it == nodes.end() || it->second.ending || !after_reject_state(it->second.state)) {
    return false;
  }
  if (code == regs::AeqEvent::RTX_EXHAUSTED) bump(r::STAT_RTX_EXHAUSTED);
  if (it->second.auto_rej) {
    nodes.erase(it);
    bump(r::STAT_CLOSED);
    return true;
  }
  it->second.ending = true;
  queue_event(event_image(cm_id, it->second, code), cm_id);
  return true;
}

bool FakeHal::retransmit(uint32_t cm_id) {
  auto it = nodes.find(cm_id);
  if (it == nodes.end()) return false;
  const FakeNode& n = it->second;
  if (n.state != regs::CmState::REJ_SENT && n.state != regs::CmState::FIN_WAIT1) return false;
  FakeFrame fr;
  fr.wqe_idx = 0xFFFF;
  fr.cm_id = cm_id;
  fr.retransmit = true;
  fr.auto_reject = n.auto_rej;
  fr.fin_policy = n.fin_policy;
  fr.fin = n.fin_policy == regs::FinPolicy::IRDMA;
  fr.pd.resize(n.rej_pd_len);
  const uint64_t src = pd_base() + uint64_t{cm_id} * kSlot;
  if (!dma_read(src, std::as_writable_bytes(std::span(fr.pd)))) return false;
  fr.tcp_seq = n.iss + 1;
  fr.wire_pd_len = static_cast<uint16_t>(n.rej_pd_len + (n.req.enhanced() ? 4 : 0));
  frames.push_back(fr);
  bump(r::STAT_RTX);
  return true;
}

std::array<std::byte, 64> FakeHal::node_context(const FakeNode& n) const {
  namespace x = regs::cm_ctx;
  std::array<std::byte, 64> c{};
  regs::put(c, x::CTX_VALID, 1);
  regs::put(c, x::REJECTED, after_reject_state(n.state));
  regs::put(c, x::LOC_IP, n.req.loc_ip);
  regs::put(c, x::REM_IP, n.req.rem_ip);
  regs::put(c, x::LOC_PORT, n.req.loc_port);
  regs::put(c, x::REM_PORT, n.req.rem_port);
  regs::put(c, x::REQ_REV, n.req.rev);
  regs::put(c, x::REQ_FLAGS, n.req.flags);
  regs::put(c, x::REQ_IRD_ORD, n.req.enhanced() ? n.req.ird_ord : 0);
  regs::put(c, x::STATE, static_cast<uint64_t>(n.state));
  regs::put(c, x::FIN_POLICY, static_cast<uint64_t>(n.fin_policy));
  regs::put(c, x::LISTENER, n.listener);
  regs::put(c, x::REJ_PD_LEN, n.rej_pd_len);
  regs::put(c, x::AUTO_REJ, n.auto_rej);
  regs::put(c, x::HOSTED, n.hosted);
  regs::put(c, x::ISS, n.iss);
  return c;
}

// MPA_REJECT for a cm_id that is a node of the passive CM. false: no such node (the
// host-written-context path applies).
bool FakeHal::node_reject(uint32_t cm_id, std::span<const std::byte> wqe, bool from_push,
                          unsigned sq, uint32_t idx, uint16_t& major, uint16_t& minor,
                          uint32_t& tcp_seq, uint16_t& frame_len) {
  namespace w = regs::sq_wqe;
  auto it = nodes.find(cm_id);
  if (it == nodes.end() || it->second.ending) return false;
  FakeNode& n = it->second;
  auto err = [&](regs::CqMajor ma, regs::CqMinor mi) {
    major = static_cast<uint16_t>(ma);
    minor = static_cast<uint16_t>(mi);
  };
  if (n.state == regs::CmState::PEER_RESET) {
    // The RESET event was written when the RST came; the reject frees the node, sends nothing.
    err(regs::CqMajor::CTX, regs::CqMinor::PEER_RESET);
    nodes.erase(it);
    bump(r::STAT_REJECT_LATE);
    bump(r::STAT_CLOSED);
    return true;
  }
  if (n.auto_rej || n.state != regs::CmState::MPAREQ_RCVD) {
    err(regs::CqMajor::CTX, regs::CqMinor::BAD_STATE);
    return true;
  }
  const auto pd_len = static_cast<uint16_t>(regs::get(wqe, w::PD_LEN));
  const uint32_t wire = pd_len + (n.req.enhanced() ? 4u : 0u);
  if (wire > regs::kMpaPdMax) {
    err(regs::CqMajor::WQE, regs::CqMinor::PD_TOO_LONG);
    return true;
  }
  std::vector<uint8_t> pd(pd_len);
  if (regs::get(wqe, w::PD_INLINE) != 0) {
    std::copy_n(wqe.begin() + 32, pd_len, reinterpret_cast<std::byte*>(pd.data()));
  } else if (pd_len > 0 &&
             !dma_read(regs::get(wqe, w::PD_ADDR), std::as_writable_bytes(std::span(pd)))) {
    err(regs::CqMajor::DMA, regs::CqMinor::DMA_PD);
    return true;
  }
  const auto wqe_policy = static_cast<regs::FinPolicy>(regs::get(wqe, w::FIN_POLICY));
  if (wqe_policy != regs::FinPolicy::DEFAULT) n.fin_policy = wqe_policy;
  FakeFrame fr;
  fr.sq = sq;
  fr.wqe_idx = static_cast<uint16_t>(idx);
  fr.cm_id = cm_id;
  fr.pd = std::move(pd);
  fr.slot_pd.resize(pd_len);
  (void)dma_read(pd_base() + uint64_t{cm_id} * kSlot,
                 std::as_writable_bytes(std::span(fr.slot_pd)));
  fr.fin_policy = n.fin_policy;
  fr.fin = n.fin_policy == regs::FinPolicy::IRDMA;
  fr.rst_after = n.fin_policy == regs::FinPolicy::ABORT;
  fr.ird_ord_valid = regs::get(wqe, w::IRD_ORD_VALID) != 0;
  fr.ird_ord = static_cast<uint32_t>(regs::get(wqe, w::IRD_ORD));
  fr.from_push = from_push;
  fr.tcp_seq = tcp_seq = n.iss + 1;
  fr.wire_pd_len = static_cast<uint16_t>(wire);
  frames.push_back(std::move(fr));
  frame_len = static_cast<uint16_t>(14 + 40 + 20 + wire);
  n.rej_pd_len = pd_len;
  bump(r::STAT_REJECT_HOST);
  after_reject(cm_id, n);
  return true;
}

}  // namespace bouncer::testing
