// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include "test_driver_fake_hal.hpp"

#include <algorithm>
#include <cstring>

namespace bouncer::testing {

namespace r = regs::reg;

class FakeHal::Buf : public hal::DmaBuffer {
 public:
  Buf(FakeHal* owner, uint64_t addr, size_t bytes) : owner_(owner), addr_(addr), mem_(bytes) {}
  ~Buf() override { owner_->unregister(addr_); }
  std::span<std::byte> bytes() override { return mem_; }
  uint64_t device_addr() const override { return addr_; }
  void sync_to_device(size_t off, size_t len) override { owner_->record_sync(addr_ + off, len); }
  void sync_from_device(size_t, size_t) override {}
  std::span<std::byte> mem() { return mem_; }

 private:
  FakeHal* owner_;
  uint64_t addr_;
  std::vector<std::byte> mem_;
};

FakeHal::FakeHal() : FakeHal(Config{}) {}
FakeHal::FakeHal(Config c) : cfg(c) {}
FakeHal::~FakeHal() = default;

Result<std::unique_ptr<hal::DmaBuffer>> FakeHal::alloc_dma(size_t bytes, size_t align) {
  if (fail_alloc_after >= 0 && allocs_ >= fail_alloc_after) {
    return make_error(Errc::kNoMemory, "fake: allocation refused");
  }
  ++allocs_;
  const uint64_t a = std::max<uint64_t>(align, 64);
  next_addr_ = (next_addr_ + a - 1) / a * a;
  auto b = std::make_unique<Buf>(this, next_addr_, bytes);
  bufs_[next_addr_] = b.get();
  next_addr_ += bytes + 4096;  // gaps: a stray address hits nothing
  return std::unique_ptr<hal::DmaBuffer>(std::move(b));
}

bool FakeHal::dma_read(uint64_t addr, std::span<std::byte> out) const {
  auto it = bufs_.upper_bound(addr);
  if (it == bufs_.begin()) return false;
  --it;
  auto mem = it->second->mem();
  const uint64_t off = addr - it->first;
  if (off + out.size() > mem.size()) return false;
  std::memcpy(out.data(), mem.data() + off, out.size());
  return true;
}

bool FakeHal::dma_write(uint64_t addr, std::span<const std::byte> in) {
  auto it = bufs_.upper_bound(addr);
  if (it == bufs_.begin()) return false;
  --it;
  auto mem = it->second->mem();
  const uint64_t off = addr - it->first;
  if (off + in.size() > mem.size()) return false;
  std::memcpy(mem.data() + off, in.data(), in.size());
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

uint64_t FakeHal::base(const std::map<uint32_t, uint32_t>& rg, uint32_t lo) {
  auto get = [&](uint32_t o) -> uint64_t {
    auto it = rg.find(o);
    return it == rg.end() ? 0 : it->second;
  };
  return get(lo) | (get(lo + 4) << 32);
}

uint32_t FakeHal::read32(uint32_t off) {
  switch (off) {
    case r::ID:
      return cfg.id;
    case r::VERSION:
      return cfg.version;
    case r::CAPS:
      return regs::field::CAPS::DATA_BYTES.put(cfg.data_bytes) |
             regs::field::CAPS::CTX_LOG2.put(cfg.ctx_log2) | regs::field::CAPS::NUM_SQ.put(1) |
             regs::field::CAPS::PUSH.put(cfg.push) | regs::field::CAPS::INLINE.put(cfg.inline_pd);
    case r::STATUS:
      return 0;
    case r::SQ_CI:
      return sq_.ci;
    case r::SQ_PI:
      return sq_.pi;
    case r::CQ_TAIL:
      return cq_.tail;
    case r::CQP_CI:
      return cqp_.ci;
    case r::CCQ_TAIL:
      return ccq_.tail;
    case r::CYCLE_LO:
      return static_cast<uint32_t>(now_);
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
      return reg(off);
  }
}

void FakeHal::write32(uint32_t off, uint32_t v) {
  writes.push_back({off, v});
  regs_[off] = v;
  if (off >= r::PUSH_PAGE && off < r::PUSH_PAGE + 4 * r::PUSH_PAGE_COUNT) {
    push_page_[(off - r::PUSH_PAGE) / 4] = v;
    return;
  }
  switch (off) {
    case r::SQ_SIZE:
      sq_ = WqRing{base(regs_, r::SQ_BASE_LO), v, 0, 0, 1};
      break;
    case r::CQ_SIZE:
      cq_ = CqRingHw{base(regs_, r::CQ_BASE_LO), v, 0, 0, 1};
      break;
    case r::CQP_SIZE:
      cqp_ = WqRing{base(regs_, r::CQP_BASE_LO), v, 0, 0, 1};
      break;
    case r::CCQ_SIZE:
      ccq_ = CqRingHw{base(regs_, r::CCQ_BASE_LO), v, 0, 0, 1};
      break;
    case r::CQ_HEAD:
      cq_.head = v % cq_.size();
      break;
    case r::CCQ_HEAD:
      ccq_.head = v % ccq_.size();
      break;
    case r::SQ_DB:
    case r::SQ_PUSH_DB: {
      const uint32_t n = sq_.size();
      for (uint32_t i = sq_.pi; i != v % n; i = (i + 1) % n) db_cycle_[i] = now_;
      sq_.pi = v % n;
      if (off == r::SQ_PUSH_DB) {
        std::array<std::byte, 64> img;
        std::memcpy(img.data(), push_page_.data(), 64);
        pushed_[(v + n - 1) % n] = img;
      }
      break;
    }
    case r::CQP_DB:
      cqp_.pi = v % cqp_.size();
      break;
    default:
      break;
  }
}

void FakeHal::write_block(uint32_t offset, std::span<const uint32_t> words) {
  if (offset == r::PUSH_PAGE && words.size() == 16) {
    std::array<uint32_t, 16> img;
    std::copy(words.begin(), words.end(), img.begin());
    push_images.push_back(img);
  }
  hal::Device::write_block(offset, words);
}

void FakeHal::wait_cycles(uint64_t cycles) {
  now_ += cycles;
  run();
}

void FakeHal::run() {
  if (hold || (reg(r::CTRL) & 1) == 0) return;
  process_cqp();
  process_sq();
}

void FakeHal::write_cqe(CqRingHw& cq, std::array<std::byte, 32>& img) {
  regs::put(img, regs::cqe::VALID, cq.pol);
  dma_write(cq.base + uint64_t{cq.tail} * 32, img);
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
    const bool fetched = dma_read(cqp_.base + uint64_t{idx} * 64, wqe);
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
    } else if (op == static_cast<uint8_t>(regs::CqpOp::READ_CM_CONTEXT)) {
      std::array<std::byte, 64> ctx{};
      if (auto it = contexts.find(cm_id); it != contexts.end()) ctx = it->second;
      if (!in_range) {
        err(regs::CqMajor::CTX, regs::CqMinor::CM_ID_RANGE);
      } else if (!dma_write(ctx_addr, ctx)) {
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

void FakeHal::process_sq() {
  namespace w = regs::sq_wqe;
  namespace c = regs::cqe;
  namespace x = regs::cm_ctx;
  while (sq_.ci != sq_.pi && cq_.room()) {
    const uint32_t idx = sq_.ci;
    std::array<std::byte, 64> wqe{};
    bool from_push = false;
    bool fetched = true;
    if (auto it = pushed_.find(idx); it != pushed_.end()) {
      if (cfg.accept_push) {
        wqe = it->second;
        from_push = true;
        ++stat_push_used_;
      } else {
        ++stat_push_dropped_;
      }
      pushed_.erase(it);
    }
    if (!from_push) fetched = dma_read(sq_.base + uint64_t{idx} * 64, wqe);
    const bool pshdrop = !from_push && regs::get(wqe, w::PUSHWQE) != 0;
    const auto op = static_cast<uint8_t>(regs::get(wqe, w::OPCODE));
    const auto cm_id = static_cast<uint32_t>(regs::get(wqe, w::CM_ID));
    const auto pd_len = static_cast<uint16_t>(regs::get(wqe, w::PD_LEN));
    const bool inl = regs::get(wqe, w::PD_INLINE) != 0;
    const uint64_t pd_addr = regs::get(wqe, w::PD_ADDR);
    const bool fin = regs::get(wqe, w::FIN) != 0;
    uint16_t major = 0, minor = 0;
    auto err = [&](regs::CqMajor ma, regs::CqMinor mi) {
      major = static_cast<uint16_t>(ma);
      minor = static_cast<uint16_t>(mi);
    };
    uint32_t latency = 0, tcp_seq = 0;
    uint16_t frame_len = 0;
    const uint64_t start = std::max(db_cycle_[idx], busy_until_);
    now_ = std::max(now_, start);
    if (!fetched) {
      err(regs::CqMajor::DMA, regs::CqMinor::DMA_WQE);
    } else if (regs::get(wqe, w::VALID) != sq_.pol) {
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
        frames.push_back(FakeFrame{static_cast<uint16_t>(idx), cm_id, pd, fin,
                                   regs::get(wqe, w::IRD_ORD_VALID) != 0,
                                   static_cast<uint32_t>(regs::get(wqe, w::IRD_ORD)), from_push,
                                   tcp_seq, static_cast<uint16_t>(wire)});
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
    regs::put(cqe, c::PSHDROP, pshdrop);
    regs::put(cqe, c::ERROR, major != 0);
    regs::put(cqe, c::OP, op);
    regs::put(cqe, c::SQ, 1);
    write_cqe(cq_, cqe);
    last_cqe_ = cqe;
    ++stat_sq_wqes_;
    db_cycle_.erase(idx);
    sq_.ci = (sq_.ci + 1) % sq_.size();
    if (sq_.ci == 0) sq_.pol ^= 1;
  }
}

}  // namespace bouncer::testing
