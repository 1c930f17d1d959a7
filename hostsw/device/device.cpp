// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include "bouncer/device.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>

#include "bouncer/device_faults.hpp"
#include "passive_internal.hpp"

namespace bouncer {

namespace {

using detail::random_hash_key;
using detail::random_isn_key;
using detail::validate_tcp;
using detail::validate_timers;
using detail::write_tcp;
using detail::write_timers;

namespace r = regs::reg;

constexpr size_t kCtxBytes = regs::kCmCtxBytes;

const char* cqp_op_name(uint8_t op) { return regs::name(static_cast<regs::CqpOp>(op)); }

std::string qerr_text(uint8_t cause) {
  switch (cause) {
    case static_cast<uint8_t>(regs::QerrCause::DB_RANGE):
      return "DB_RANGE (doorbell index at or above the ring size)";
    case static_cast<uint8_t>(regs::QerrCause::DB_LAP):
      return "DB_LAP (the producer index lapped the consumer)";
    case static_cast<uint8_t>(regs::QerrCause::RING_ALIGN):
      return "RING_ALIGN (ring base not 64-byte aligned)";
    case static_cast<uint8_t>(regs::QerrCause::CQ_ALIGN):
      return "CQ_ALIGN (completion ring base not 32-byte aligned)";
    default:
      return fmt::format("cause {}", cause);
  }
}

// SQ_DB / SQ_PUSH_DB value: the SQ number and its new producer index.
uint32_t doorbell(unsigned sq, uint32_t pi) {
  return regs::field::SQ_DB::SQ.put(sq) | regs::field::SQ_DB::PI.put(pi);
}

void write_base(hal::Device& hal, uint32_t lo_reg, uint64_t addr) {
  hal.write32(lo_reg, static_cast<uint32_t>(addr));
  hal.write32(lo_reg + 4, static_cast<uint32_t>(addr >> 32));
}

// A completion for a WQE whose fetch failed (DMA/DMA_WQE): its WQE fields (wr_id, cm_id,
// scratch) are 0, only WQEIDX is the engine's own.
bool is_wqe_dma_error(std::span<const std::byte> cqe) {
  return regs::get(cqe, regs::cqe::MAJERR) == static_cast<uint16_t>(regs::CqMajor::DMA) &&
         regs::get(cqe, regs::cqe::MINERR) == static_cast<uint16_t>(regs::CqMinor::DMA_WQE);
}

constexpr uint32_t kAllOnes = 0xFFFF'FFFFu;

// The STATUS bits set in `st`, by name, with what each means for a wait that does not end.
std::string status_names(uint32_t st) {
  namespace fs = regs::field::STATUS;
  struct Bit {
    uint32_t mask;
    const char* name;
  } const bits[] = {
      {fs::SQ_BUSY.mask(), "SQ_BUSY"},
      {fs::CQP_BUSY.mask(), "CQP_BUSY"},
      {fs::CM_BUSY.mask(), "CM_BUSY"},
      {fs::DMA_BUSY.mask(), "DMA_BUSY (a host-memory access is unanswered)"},
      {fs::CQ_FULL.mask(),
       "CQ_FULL (the SQ engine waits for room in the CQ: CQ_HEAD has not moved on)"},
      {fs::CCQ_FULL.mask(), "CCQ_FULL (the control engine waits for room in the CCQ)"},
      {fs::AEQ_FULL.mask(),
       "AEQ_FULL (the CM engine, and every reject queued behind it, waits until events are "
       "consumed: Cm::poll_event or Device::poll_aeq)"},
      {fs::DMA_WR_ERR.mask(),
       "DMA_WR_ERR (a completion, event or request-PD write failed and is lost: the driver reads "
       "its rings in order and stops at a lost entry, so close and reopen the Device)"},
      {fs::CM_READY.mask(), "CM_READY"},
  };
  std::string out;
  for (const Bit& b : bits) {
    if ((st & b.mask) == 0) continue;
    if (!out.empty()) out += ", ";
    out += b.name;
  }
  return out.empty() ? "none" : out;
}

// CTRL.RESET with ENABLE 0: the core forgets every connection, listener and queue once nothing
// is in flight (regs/bouncer.toml). Waits until it has: CTRL.RESET reads 0 again. The tables'
// sweep that follows is STATUS.CM_READY's business (wait_cm_ready; the engines wait for it).
Result<void> reset_core(hal::Device& hal, std::chrono::nanoseconds timeout,
                        std::chrono::nanoseconds interval) {
  namespace fc = regs::field::CTRL;
  hal.write32(r::CTRL, fc::RESET.put(1));
  hal::Deadline dl(hal, timeout);
  while (fc::RESET.get(hal.read32(r::CTRL)) != 0) {
    if (dl.passed()) {
      const uint32_t st = hal.read32(r::STATUS);
      return make_error(
          Errc::kTimeout,
          fmt::format("{}: the core did not carry out CTRL.RESET within {} (STATUS "
                      "0x{:03X}: {}); it resets only once no engine, DMA or frame is in flight: "
                      "reprogram the card or reset it (docs/operations.md)",
                      hal.name(), format_duration(timeout), st, status_names(st)));
    }
    dl.pause(interval);
  }
  return {};
}

// The QERR causes of the rings in use, by name: "QERR 0", "QERR 0x00010: SQ 1 DB_RANGE (...)".
std::string qerr_names(uint32_t q, unsigned num_sq) {
  if (q == 0) return "QERR 0";
  std::string out;
  auto add = [&](const std::string& what, uint32_t cause) {
    if (cause == 0) return;
    out += out.empty() ? "" : ", ";
    out += what + " " + qerr_text(static_cast<uint8_t>(cause));
  };
  for (unsigned n = 0; n < num_sq && n < regs::kNumSqMax; ++n) {
    add(fmt::format("SQ {}", n), (q >> (regs::field::QERR::SQ0.lsb + 4 * n)) & 0xFu);
  }
  add("CQP", regs::field::QERR::CQP.get(q));
  return fmt::format("QERR 0x{:05X}: {}", q, out.empty() ? "none in use" : out);
}

Completion decode_cqe(std::span<const std::byte> img) {
  namespace f = regs::cqe;
  Completion c;
  c.latency_cycles = static_cast<uint32_t>(regs::get(img, f::LATENCY));
  c.frame_len = static_cast<uint16_t>(regs::get(img, f::FRAME_LEN));
  c.wr_id = regs::get(img, f::WR_ID);
  c.tcp_seq = static_cast<uint32_t>(regs::get(img, f::TCP_SEQ));
  c.cm_id = static_cast<uint32_t>(regs::get(img, f::CM_ID));
  c.minor = static_cast<uint16_t>(regs::get(img, f::MINERR));
  c.major = static_cast<uint16_t>(regs::get(img, f::MAJERR));
  c.wqe_idx = static_cast<uint16_t>(regs::get(img, f::WQEIDX));
  c.sq = static_cast<uint8_t>(regs::get(img, f::SQ_IDX));
  c.pshdrop = regs::get(img, f::PSHDROP) != 0;
  c.error = regs::get(img, f::ERROR) != 0;
  c.op = static_cast<uint8_t>(regs::get(img, f::OP));
  return c;
}

// Advances a producer ring's tail past every slot that is no longer busy (in-order
// completions make this exactly "ci = wqe_idx + 1").
template <typename Slots>
void advance_tail(queues::SqRing& ring, const Slots& slots) {
  uint32_t t = ring.tail();
  while (t != ring.head() && !slots[t].busy) t = (t + 1) % ring.size();
  ring.set_tail(t);
}

}  // namespace

const char* cq_major_name(uint16_t major) { return regs::name(static_cast<regs::CqMajor>(major)); }

const char* cq_minor_name(uint16_t minor) { return regs::name(static_cast<regs::CqMinor>(minor)); }

std::string cq_status_name(uint16_t major, uint16_t minor) {
  return fmt::format("{}/{} (0x{:04X}/0x{:04X})", cq_major_name(major), cq_minor_name(minor), major,
                     minor);
}

std::string Completion::status() const {
  if (unexpected) {
    return fmt::format(
        "unexpected CQE for wqe_idx {} of SQ {} (nothing outstanding: duplicate or unknown)",
        wqe_idx, sq);
  }
  if (ok()) return "ok";
  return cq_status_name(major, minor);
}

// ------------------------------------------------------------------------------- open

Device::Device(hal::Device& hal, DeviceConfig cfg, Caps caps, Parts parts)
    : hal_(hal),
      cfg_(std::move(cfg)),
      caps_(caps),
      cq_(std::move(parts.cq)),
      cqp_(std::move(parts.cqp)),
      ccq_(std::move(parts.ccq)),
      pd_pool_(std::move(parts.pd_pool)),
      ctx_pool_(std::move(parts.ctx_pool)),
      aeq_(std::move(parts.aeq)),
      pd_area_(std::move(parts.pd_area)),
      cqp_slots_(cqp_.size()) {
  for (auto& ring : parts.sqs) {
    const uint32_t n = ring.size();
    sqs_.push_back(Sq{std::move(ring), std::vector<SqSlot>(n), 0});
  }
  aeq_batch_ = cfg_.aeq_head_batch != 0 ? cfg_.aeq_head_batch : aeq_.size() / 4;
  aeq_batch_ = std::clamp<uint32_t>(aeq_batch_, 1, aeq_.size() - 1);
}

Result<std::unique_ptr<Device>> Device::open(hal::Device& hal, DeviceConfig cfg) {
  const uint32_t id = hal.read32(r::ID);
  if (id != regs::kIdValue) {
    return make_error(Errc::kNoDevice, fmt::format("{}: ID reads 0x{:08X}, expected 0x{:08X}",
                                                   hal.name(), id, regs::kIdValue));
  }
  namespace fv = regs::field::VERSION;
  const uint32_t ver = hal.read32(r::VERSION);
  Caps caps;
  caps.version_major = static_cast<uint8_t>(fv::MAJOR.get(ver));
  caps.version_minor = static_cast<uint8_t>(fv::MINOR.get(ver));
  caps.version_patch = static_cast<uint8_t>(fv::PATCH.get(ver));
  // Semantic versioning: in 0.y any minor step may change the formats, so 0.y must match.
  if (caps.version_major != regs::kVersionMajor ||
      (regs::kVersionMajor == 0 && caps.version_minor != regs::kVersionMinor)) {
    return make_error(
        Errc::kNoDevice,
        fmt::format("{}: device version {}.{}.{}, driver built for {}.{}.{}", hal.name(),
                    caps.version_major, caps.version_minor, caps.version_patch, regs::kVersionMajor,
                    regs::kVersionMinor, regs::kVersionPatch));
  }
  namespace fc = regs::field::CAPS;
  const uint32_t c = hal.read32(r::CAPS);
  caps.data_bytes = fc::DATA_BYTES.get(c);
  caps.ctx_log2 = fc::CTX_LOG2.get(c);
  caps.ctx_depth = 1u << caps.ctx_log2;
  caps.num_sq = fc::NUM_SQ.get(c);
  caps.push = fc::PUSH.get(c) != 0;
  caps.inline_pd = fc::INLINE.get(c) != 0;
  caps.probes = fc::PROBES.get(c) != 0;
  if (caps.num_sq == 0) {
    return make_error(Errc::kNoDevice,
                      fmt::format("{}: CAPS 0x{:08X} reports no SQ", hal.name(), c));
  }

  for (uint32_t n :
       {cfg.sq_entries, cfg.cq_entries, cfg.cqp_entries, cfg.ccq_entries, cfg.aeq_entries}) {
    if (auto lg = queues::ring_log2(n); !lg) return lg.error();
  }
  if (cfg.timers) {
    if (auto v = validate_timers(*cfg.timers); !v) return v.error();
  }
  if (cfg.tcp) {
    if (auto v = validate_tcp(*cfg.tcp); !v) return v.error();
  }
  if (cfg.num_sq == 0 || cfg.num_sq > caps.num_sq) {
    return make_error(Errc::kInvalidArgument,
                      fmt::format("num_sq {}: this device has {} reject SQ(s) (CAPS.NUM_SQ)",
                                  cfg.num_sq, caps.num_sq));
  }
  if (cfg.cq_entries < cfg.sq_entries || cfg.ccq_entries < cfg.cqp_entries) {
    return make_error(Errc::kInvalidArgument,
                      "each completion ring must be at least as large as its WQE ring "
                      "(cq_entries >= sq_entries, ccq_entries >= cqp_entries)");
  }
  if (cfg.cqp_timeout < std::chrono::nanoseconds::zero() ||
      cfg.reset_timeout < std::chrono::nanoseconds::zero()) {
    return make_error(Errc::kInvalidArgument, "cqp_timeout and reset_timeout must not be negative");
  }
  // a wait that pauses for no time would never reach its deadline on a simulated clock
  cfg.poll_interval = std::max(cfg.poll_interval, std::chrono::nanoseconds(1));

  // Whatever a previous owner left (enabled engines, listeners, connections whose PD slots
  // and templates live in memory it no longer owns, full rings) goes before anything new.
  // The reset also makes the connection table take the new bucket-hash key.
  hal.write32(r::HASH_KEY, cfg.hash_key ? *cfg.hash_key : random_hash_key());
  if (auto rc = reset_core(hal, cfg.reset_timeout, cfg.poll_interval); !rc) {
    return rc.error();
  }

  std::vector<queues::SqRing> sqs;
  for (unsigned n = 0; n < cfg.num_sq; ++n) {
    auto sq = queues::SqRing::create(hal, cfg.sq_entries, regs::kSqWqeBytes);
    if (!sq) return sq.error();
    sqs.push_back(std::move(sq).value());
  }
  auto cq = queues::CqRing::create(hal, cfg.cq_entries);
  if (!cq) return cq.error();
  auto cqp = queues::SqRing::create(hal, cfg.cqp_entries, regs::kCqpWqeBytes);
  if (!cqp) return cqp.error();
  auto ccq = queues::CqRing::create(hal, cfg.ccq_entries);
  if (!ccq) return ccq.error();
  auto pd_pool = hal.alloc_dma(size_t{cfg.num_sq} * cfg.sq_entries * kPdSlotBytes, 64);
  if (!pd_pool) return pd_pool.error();
  auto ctx_pool = hal.alloc_dma(size_t{cfg.cqp_entries} * kCtxBytes, 64);
  if (!ctx_pool) return ctx_pool.error();
  auto aeq = queues::CqRing::create(hal, cfg.aeq_entries);
  if (!aeq) return aeq.error();
  auto pd_area = hal.alloc_dma(size_t{caps.ctx_depth} * regs::kPdSlotBytes, regs::kPdSlotBytes);
  if (!pd_area) return pd_area.error();

  for (unsigned n = 0; n < cfg.num_sq; ++n) {
    write_base(hal, r::sq_base_lo(n), sqs[n].device_addr());
    hal.write32(r::sq_size(n), sqs[n].log2_size());
  }
  write_base(hal, r::CQ_BASE_LO, cq->device_addr());
  hal.write32(r::CQ_SIZE, cq->log2_size());
  write_base(hal, r::CQP_BASE_LO, cqp->device_addr());
  hal.write32(r::CQP_SIZE, cqp->log2_size());
  write_base(hal, r::CCQ_BASE_LO, ccq->device_addr());
  hal.write32(r::CCQ_SIZE, ccq->log2_size());
  hal.write32(r::CQ_HEAD, 0);
  hal.write32(r::CCQ_HEAD, 0);
  write_base(hal, r::AEQ_BASE_LO, aeq->device_addr());
  hal.write32(r::AEQ_SIZE, aeq->log2_size());
  hal.write32(r::AEQ_HEAD, 0);
  write_base(hal, r::PD_BASE_LO, (*pd_area)->device_addr());
  const std::array<uint32_t, 4> key = cfg.isn_key ? *cfg.isn_key : random_isn_key();
  for (uint32_t i = 0; i < r::ISN_KEY_COUNT; ++i) hal.write32(r::ISN_KEY + 4 * i, key[i]);
  if (cfg.timers) write_timers(hal, *cfg.timers);
  if (cfg.tcp) write_tcp(hal, *cfg.tcp);
  hal.write32(r::DMA_TIMEOUT, cfg.dma_timeout_cycles);
  // Last, and through the barrier: the rings, zeroed, are the device's from here on.
  hal::write_doorbell(hal, r::CTRL, regs::field::CTRL::ENABLE.put(1));

  Parts parts{std::move(sqs),
              std::move(cq).value(),
              std::move(cqp).value(),
              std::move(ccq).value(),
              std::move(aeq).value(),
              std::move(pd_pool).value(),
              std::move(ctx_pool).value(),
              std::move(pd_area).value()};
  return std::unique_ptr<Device>(new Device(hal, std::move(cfg), caps, std::move(parts)));
}

Result<void> Device::close() {
  std::lock_guard lk(mu_);
  if (closed_) return {};
  closed_ = true;
  auto rc = reset_core(hal_, cfg_.reset_timeout, cfg_.poll_interval);
  if (!rc) {
    // The core may still read or write this memory: it is never handed back.
    struct Abandoned {
      std::vector<Sq> sqs;
      queues::CqRing cq;
      queues::SqRing cqp;
      queues::CqRing ccq;
      queues::CqRing aeq;
      std::unique_ptr<hal::DmaBuffer> pd_pool, ctx_pool, pd_area;
      std::vector<std::unique_ptr<hal::DmaBuffer>> retired_tmpl;
    };
    // kept reachable (a leak checker would report the memory otherwise)
    static std::mutex graveyard_mu;
    static auto* graveyard = new std::vector<std::unique_ptr<Abandoned>>();
    std::lock_guard g(graveyard_mu);
    graveyard->push_back(std::make_unique<Abandoned>(Abandoned{
        std::move(sqs_), std::move(cq_), std::move(cqp_), std::move(ccq_), std::move(aeq_),
        std::move(pd_pool_), std::move(ctx_pool_), std::move(pd_area_), std::move(retired_tmpl_)}));
    return make_error(rc.error().code, rc.error().message + "; its host memory is kept (leaked)");
  }
  return {};
}

Device::~Device() {
  if (auto rc = close(); !rc)
    fmt::print(stderr, "bouncer: closing the device: {}\n", rc.error().message);
}

uint64_t Device::pd_slot_addr(uint16_t wqe_idx, unsigned sq) const {
  return pd_pool_->device_addr() + (size_t{sq} * cfg_.sq_entries + size_t{wqe_idx}) * kPdSlotBytes;
}

uint32_t Device::sq_outstanding(unsigned sq) const {
  return sq < sqs_.size() ? sqs_[sq].outstanding : 0;
}

Result<queues::WqeSlot> Device::next_sq_slot(unsigned sq) {
  if (sq >= sqs_.size()) {
    return make_error(Errc::kInvalidArgument,
                      fmt::format("SQ {} is not in use (num_sq {})", sq, sqs_.size()));
  }
  Sq& q = sqs_[sq];
  // The slot at the head may wait for a CQE that is in the CQ already (an abandoned WQE's,
  // whose slot is released as soon as it is reaped): reap before saying the ring is full.
  if (q.slots[q.ring.head()].busy || q.ring.full()) {
    while (auto c = reap_one()) stash_.push_back(*c);
  }
  // After reset_sq() the ring restarts at 0 while flushed completions may still be waiting in
  // stash_ with their slots reserved; the ring's own count does not see those.
  std::optional<queues::WqeSlot> slot;
  if (!q.slots[q.ring.head()].busy) slot = q.ring.get_next_wqe();
  if (!slot) return ring_full(sq);
  return *slot;
}

Error Device::ring_full(unsigned sq) {
  Sq& q = sqs_[sq];
  // The slot that keeps the next WQE out: the head itself, or (ring full) the oldest one.
  const uint32_t at = q.slots[q.ring.head()].busy ? q.ring.head() : q.ring.tail();
  const SqSlot& s = q.slots[at];
  const auto reserved =
      std::count_if(q.slots.begin(), q.slots.end(), [](const SqSlot& x) { return x.busy; });
  std::string why;
  if (s.reaped) {
    why = fmt::format(
        "slot {} holds the completion of wr_id {} (cm_id {}), reaped but not collected: collect "
        "it with poll_cq(), wait_completion() or wait_completion_for({}, {}), or abandon() it",
        at, s.wr_id, s.cm_id, sq, at);
  } else {
    why = fmt::format(
        "slot {} still waits for the completion of wr_id {} (cm_id {}; SQ_CI {}, SQ_PI {}); {}", at,
        s.wr_id, s.cm_id, hal_.read32(r::sq_ci(sq)), hal_.read32(r::sq_pi(sq)), state_text());
  }
  return make_error(Errc::kRingFull, fmt::format("SQ {} full ({} of {} slots reserved): {}", sq,
                                                 reserved, q.ring.size(), why));
}

// ------------------------------------------------------------------------------- CQP

Result<uint16_t> Device::cqp_post(uint8_t opcode, uint32_t cm_id,
                                  std::span<const std::byte> ctx_image) {
  auto slot = cqp_.get_next_wqe();
  if (!slot) {
    return make_error(Errc::kRingFull,
                      fmt::format("CQP full ({} control WQEs outstanding)", cqp_.used()));
  }
  const size_t ctx_off = size_t{slot->wqe_idx} * kCtxBytes;
  auto ctx = ctx_pool_->bytes().subspan(ctx_off, kCtxBytes);
  std::fill(ctx.begin(), ctx.end(), std::byte{0});
  std::copy_n(ctx_image.begin(), std::min(ctx_image.size(), kCtxBytes), ctx.begin());
  ctx_pool_->sync_to_device(ctx_off, kCtxBytes);

  namespace f = regs::cqp_wqe;
  std::array<std::byte, regs::kCqpWqeBytes> img{};
  regs::put(img, f::CTX_ADDR, ctx_pool_->device_addr() + ctx_off);
  regs::put(img, f::CM_ID, cm_id);
  return cqp_write_and_ring(*slot, opcode, img);
}

// Claims a CQP slot for a WQE that does not use the slot's context buffer (listener ops).
Result<uint16_t> Device::cqp_submit(uint8_t opcode, std::span<std::byte> image) {
  auto slot = cqp_.get_next_wqe();
  if (!slot) {
    return make_error(Errc::kRingFull,
                      fmt::format("CQP full ({} control WQEs outstanding)", cqp_.used()));
  }
  return cqp_write_and_ring(*slot, opcode, image);
}

uint16_t Device::cqp_write_and_ring(queues::WqeSlot slot, uint8_t opcode,
                                    std::span<std::byte> image) {
  // SCRATCH and OPCODE sit in the same place in every CQP WQE format.
  static_assert(regs::cqp_listen_wqe::SCRATCH.qword == regs::cqp_wqe::SCRATCH.qword &&
                regs::cqp_listen_wqe::OPCODE.qword == regs::cqp_wqe::OPCODE.qword &&
                regs::cqp_listen_wqe::OPCODE.lsb == regs::cqp_wqe::OPCODE.lsb);
  namespace f = regs::cqp_wqe;
  const uint64_t scratch = next_scratch_++;
  regs::put(image, f::SCRATCH, scratch);
  regs::put(image, f::OPCODE, opcode);
  cqp_.write_wqe(slot, image);
  cqp_slots_[slot.wqe_idx] = CqpSlot{true, scratch, opcode};
  ++stats_.cqp_ops;
  // irdma_sc_cqp_post_sq: writel(sq_ring.head, cqp_db).
  hal::write_doorbell(hal_, r::CQP_DB, cqp_.head());
  return slot.wqe_idx;
}

Result<Device::CqpDone> Device::cqp_poll_for_done(uint16_t wqe_idx, uint8_t opcode,
                                                  uint32_t cm_id) {
  hal::Deadline dl(hal_, cfg_.cqp_timeout);
  for (;;) {
    while (auto cqe = ccq_.peek()) {
      ccq_.advance();
      hal::write_doorbell(hal_, r::CCQ_HEAD, ccq_.head());
      const std::span<const std::byte> img(*cqe);
      const auto idx = static_cast<uint16_t>(regs::get(img, regs::cqe::WQEIDX));
      const bool from_sq = regs::get(img, regs::cqe::SQ) != 0;
      const uint64_t scratch = regs::get(img, regs::cqe::WR_ID);
      // A WQE the hardware could not read (DMA/DMA_WQE) completes without its scratch value.
      const bool unread = is_wqe_dma_error(img);
      if (from_sq || idx >= cqp_slots_.size() || !cqp_slots_[idx].busy ||
          (cqp_slots_[idx].scratch != scratch && !unread)) {
        ++stats_.unexpected_ccqes;  // irdma skips these with a debug print
        continue;
      }
      cqp_slots_[idx].busy = false;
      advance_tail(cqp_, cqp_slots_);
      if (idx != wqe_idx) continue;  // a command that timed out earlier finally completed
      CqpDone d;
      d.major = static_cast<uint16_t>(regs::get(img, regs::cqe::MAJERR));
      d.minor = static_cast<uint16_t>(regs::get(img, regs::cqe::MINERR));
      if (regs::get(img, regs::cqe::ERROR) != 0 && d.major == 0) {
        d.major = static_cast<uint16_t>(regs::CqMajor::DRV);  // ERROR without a code
      }
      return d;
    }
    if (dl.passed()) {
      if (const auto q = regs::field::QERR::CQP.get(read_qerr()); q != 0) {
        return make_error(
            Errc::kQueueError,
            fmt::format("CQP {} cm_id {}: the CQP is in queue error: {}; its "
                        "doorbells are ignored until Device::reset_cqp()",
                        cqp_op_name(opcode), cm_id, qerr_text(static_cast<uint8_t>(q))));
      }
      return make_error(
          Errc::kTimeout,
          fmt::format("CQP {} cm_id {}: no CCQE after {} (wqe_idx {}, CQP_CI {}, CCQ head {}, "
                      "CCQ_TAIL {}); {}. The command stays posted: its slot is freed when its "
                      "CCQE comes (consumed on the way to a later command's) or by reset_cqp()",
                      cqp_op_name(opcode), cm_id, format_duration(cfg_.cqp_timeout), wqe_idx,
                      hal_.read32(r::CQP_CI), ccq_.head(), hal_.read32(r::CCQ_TAIL), state_text()));
    }
    dl.pause(cfg_.poll_interval);
  }
}

Result<void> Device::cqp_exec(uint8_t opcode, uint32_t cm_id, std::span<const std::byte> ctx_in,
                              std::span<std::byte> ctx_out) {
  if (cm_id > 0xFFFFFF) {
    return make_error(Errc::kInvalidArgument, fmt::format("cm_id {} exceeds 24 bits", cm_id));
  }
  auto idx = cqp_post(opcode, cm_id, ctx_in);
  if (!idx) return idx.error();
  if (auto r = cqp_finish(*idx, opcode, cm_id); !r) return r;
  if (!ctx_out.empty()) {
    const size_t off = size_t{*idx} * kCtxBytes;
    ctx_pool_->sync_from_device(off, kCtxBytes);
    std::memcpy(ctx_out.data(), ctx_pool_->bytes().data() + off,
                std::min(ctx_out.size(), kCtxBytes));
  }
  return {};
}

// Polls for the CCQE of wqe_idx and turns an error completion into kHardware.
Result<void> Device::cqp_finish(uint16_t wqe_idx, uint8_t opcode, uint32_t id) {
  auto done = cqp_poll_for_done(wqe_idx, opcode, id);
  if (!done) return done.error();
  if (done->major != 0) {
    ++stats_.cqp_errors;
    const bool listener_op = opcode == static_cast<uint8_t>(regs::CqpOp::CREATE_LISTENER) ||
                             opcode == static_cast<uint8_t>(regs::CqpOp::DESTROY_LISTENER);
    Error e{Errc::kHardware,
            fmt::format("CQP {} {} {}: {}", cqp_op_name(opcode), listener_op ? "listener" : "cm_id",
                        id, cq_status_name(done->major, done->minor))};
    e.hw_major = done->major;
    e.hw_minor = done->minor;
    return e;
  }
  return {};
}

Result<void> Device::cqp_write_context(uint32_t cm_id, const CmContext& ctx) {
  std::lock_guard lk(mu_);
  const auto img = ctx.pack();
  return cqp_exec(static_cast<uint8_t>(regs::CqpOp::WRITE_CM_CONTEXT), cm_id, img, {});
}

Result<CmContext> Device::cqp_read_context(uint32_t cm_id) {
  std::lock_guard lk(mu_);
  std::array<std::byte, kCtxBytes> img{};
  auto r = cqp_exec(static_cast<uint8_t>(regs::CqpOp::READ_CM_CONTEXT), cm_id, {}, img);
  if (!r) return r.error();
  return CmContext::unpack(img);
}

Result<void> Device::cqp_nop() {
  std::lock_guard lk(mu_);
  return cqp_exec(static_cast<uint8_t>(regs::CqpOp::NOP), 0, {}, {});
}

Result<void> Device::cqp_raw(uint8_t opcode, uint32_t cm_id, std::span<const std::byte> ctx_image) {
  std::lock_guard lk(mu_);
  return cqp_exec(opcode, cm_id, ctx_image, {});
}

// ------------------------------------------------------------------------------- SQ

Result<uint16_t> Device::post_reject(const RejectWqe& w) { return post_reject_with(w, nullptr); }

// `faults` (tests only, bouncer/device_faults.hpp): raw WQE fields the hardware must refuse.
Result<uint16_t> Device::post_reject_with(const RejectWqe& w,
                                          const testing::RejectWqeFaults* faults) {
  std::lock_guard lk(mu_);
  const testing::RejectWqeFaults none;
  if (auto v = check_reject_wqe(w); !v) return v.error();
  auto slot = next_sq_slot(w.sq);
  if (!slot) return slot.error();
  write_reject(w, *slot, faults != nullptr ? *faults : none, true);
  return slot->wqe_idx;
}

// irdma_uk_post_send with the doorbell left to the end of the list (irdma_uk_qp_post_wr):
// the WQEs go into their rings in order, then one SQ_DB per SQ that got any. The producer
// index in that doorbell covers every WQE written before it.
Result<std::vector<uint16_t>> Device::post_rejects(std::span<const RejectWqe> wqes) {
  std::lock_guard lk(mu_);
  for (size_t i = 0; i < wqes.size(); ++i) {
    if (wqes[i].push) {
      return make_error(Errc::kInvalidArgument,
                        fmt::format("WQE {} of the batch asks for push: a push WQE carries its "
                                    "own doorbell, post it with post_reject()",
                                    i));
    }
    if (auto v = check_reject_wqe(wqes[i]); !v) {
      return make_error(v.error().code, fmt::format("WQE {} of the batch: {} (nothing posted)", i,
                                                    v.error().message));
    }
  }
  const testing::RejectWqeFaults none;
  std::vector<uint16_t> idx;
  idx.reserve(wqes.size());
  std::vector<bool> ring(sqs_.size(), false);
  std::optional<Error> full;
  for (const RejectWqe& w : wqes) {
    auto slot = next_sq_slot(w.sq);
    if (!slot) {
      full = slot.error();
      break;
    }
    write_reject(w, *slot, none, false);
    ring[w.sq] = true;
    idx.push_back(slot->wqe_idx);
  }
  for (unsigned sq = 0; sq < sqs_.size(); ++sq) {
    if (!ring[sq]) continue;
    hal::to_device_barrier();
    hal::write_doorbell(hal_, r::SQ_DB, doorbell(sq, sqs_[sq].ring.head()));
    ++stats_.sq_doorbells;
  }
  if (idx.empty() && full) return *full;
  return idx;
}

Result<void> Device::check_reject_wqe(const RejectWqe& w) const {
  if (w.cm_id > 0xFFFFFF) {
    return make_error(Errc::kInvalidArgument, fmt::format("cm_id {} exceeds 24 bits", w.cm_id));
  }
  if (w.pd.size() > kPdSlotBytes) {
    return make_error(Errc::kInvalidArgument,
                      fmt::format("{} bytes of private data exceed the {}-byte PD buffer",
                                  w.pd.size(), kPdSlotBytes));
  }
  if (w.push && !caps_.push) {
    return make_error(Errc::kInvalidArgument, "push mode requested but CAPS.PUSH is 0");
  }
  if (w.pd_area && w.cm_id >= caps_.ctx_depth) {
    return make_error(Errc::kInvalidArgument, fmt::format("cm_id {} has no PD-area slot (depth {})",
                                                          w.cm_id, caps_.ctx_depth));
  }
  if (w.sq >= sqs_.size()) {
    return make_error(Errc::kInvalidArgument,
                      fmt::format("SQ {} is not in use (num_sq {})", w.sq, sqs_.size()));
  }
  return {};
}

void Device::write_reject(const RejectWqe& w, queues::WqeSlot slot,
                          const testing::RejectWqeFaults& x, bool doorbell) {
  namespace f = regs::sq_wqe;
  // The reject PD always goes to the cm_id's PD-area slot: the hardware re-reads it there
  // (REJ_PD_LEN bytes) for every retransmission until the node ends.
  if (w.cm_id < caps_.ctx_depth && !w.pd.empty()) {
    const size_t off = size_t{w.cm_id} * regs::kPdSlotBytes;
    std::copy_n(w.pd.begin(), w.pd.size(), pd_area_->bytes().begin() + off);
    pd_area_->sync_to_device(off, w.pd.size());
  }
  std::array<std::byte, regs::kSqWqeBytes> img{};
  const bool inline_pd = x.force_inline || (!x.pd_addr && w.allow_inline && caps_.inline_pd &&
                                            w.pd.size() <= regs::kInlinePdMax);
  if (inline_pd) {
    std::copy_n(w.pd.begin(), std::min<size_t>(w.pd.size(), regs::kInlinePdMax),
                img.begin() + f::INLINE_PD.byte_offset());
  } else if (w.pd_area && !x.pd_addr) {
    regs::put(img, f::PD_ADDR, pd_area_addr(w.cm_id));
  } else {
    // rdma_reject semantics: the caller's buffer may be reused on return, so copy the PD into
    // this slot's buffer; it is not reused before the slot's completion has been polled.
    const size_t off = (size_t{w.sq} * cfg_.sq_entries + slot.wqe_idx) * kPdSlotBytes;
    std::copy_n(w.pd.begin(), w.pd.size(), pd_pool_->bytes().begin() + off);
    pd_pool_->sync_to_device(off, std::max<size_t>(w.pd.size(), 1));
    regs::put(img, f::PD_ADDR, x.pd_addr.value_or(pd_pool_->device_addr() + off));
  }
  regs::put(img, f::CM_ID, w.cm_id);
  regs::put(img, f::PD_LEN, x.pd_len.value_or(static_cast<uint16_t>(w.pd.size())));
  regs::put(img, f::WR_ID, w.wr_id);
  regs::put(img, f::IRD_ORD, w.ird_ord.value_or(0));
  regs::put(img, f::OPCODE, x.opcode.value_or(static_cast<uint8_t>(regs::SqOp::MPA_REJECT)));
  regs::put(img, f::PUSHWQE, w.push);
  regs::put(img, f::PD_INLINE, inline_pd);
  regs::put(img, f::IRD_ORD_VALID, w.ird_ord.has_value());
  regs::put(img, f::FIN_POLICY, static_cast<uint64_t>(w.fin_policy));
  queues::WqeSlot pub = slot;
  if (x.stale) pub.polarity ^= 1u;  // a slot the hardware must see as not written on this lap
  publish_sq(w.sq, pub, img, w.push, w.wr_id, w.cm_id, doorbell);
}

Result<uint16_t> Device::post_nop(uint64_t wr_id, bool push, unsigned sq) {
  std::lock_guard lk(mu_);
  namespace f = regs::sq_wqe;
  if (push && !caps_.push) {
    return make_error(Errc::kInvalidArgument, "push mode requested but CAPS.PUSH is 0");
  }
  auto slot = next_sq_slot(sq);
  if (!slot) return slot.error();
  std::array<std::byte, regs::kSqWqeBytes> img{};
  regs::put(img, f::WR_ID, wr_id);
  regs::put(img, f::OPCODE, static_cast<uint8_t>(regs::SqOp::NOP));
  regs::put(img, f::PUSHWQE, push);
  publish_sq(sq, *slot, img, push, wr_id, 0);
  return slot->wqe_idx;
}

void Device::publish_sq(unsigned sq, queues::WqeSlot slot, std::span<const std::byte> image,
                        bool push, uint64_t wr_id, uint32_t cm_id, bool ring_doorbell) {
  Sq& q = sqs_[sq];
  q.ring.write_wqe(slot, image);
  q.slots[slot.wqe_idx] = SqSlot{true, false, false, push, wr_id, cm_id};
  ++q.outstanding;
  ++sq_outstanding_;
  ++stats_.sq_posted;
  if (push) {
    // irdma_qp_push_wqe: copy the WQE as it sits in the ring (valid bit included) to the
    // push page as one 64-byte burst (write_push: write-combined where the backend can), then
    // the push doorbell. The barrier puts the ring copy first: a push the device drops is
    // fetched from the ring. write_push orders its words before the doorbell.
    const auto wqe = q.ring.wqe(slot.wqe_idx);
    std::array<uint64_t, 8> qwords{};
    static_assert(sizeof(qwords) == 4 * regs::reg::PUSH_PAGE_COUNT);
    std::memcpy(qwords.data(), wqe.data(), sizeof(qwords));  // little-endian host (hal.hpp)
    hal::to_device_barrier();
    hal_.write_push(r::push_page(sq), qwords);
    ++stats_.sq_pushed;
    hal::write_doorbell(hal_, r::SQ_PUSH_DB, doorbell(sq, q.ring.head()));
  } else if (ring_doorbell) {
    hal::write_doorbell(hal_, r::SQ_DB, doorbell(sq, q.ring.head()));
    ++stats_.sq_doorbells;
  }
}

// The next CQE for the callers, or nullopt. The completions of abandoned WQEs are taken on the
// way (retire_abandoned), never returned.
std::optional<Completion> Device::reap_one() {
  for (;;) {
    auto cqe = cq_.peek();
    if (!cqe) return std::nullopt;
    cq_.advance();
    hal::write_doorbell(hal_, r::CQ_HEAD, cq_.head());
    Completion c = decode_cqe(*cqe);
    const bool from_sq = regs::get(*cqe, regs::cqe::SQ) != 0;
    if (!from_sq || c.sq >= sqs_.size() || c.wqe_idx >= sqs_[c.sq].slots.size() ||
        !sqs_[c.sq].slots[c.wqe_idx].busy || sqs_[c.sq].slots[c.wqe_idx].reaped) {
      c.unexpected = true;
      ++stats_.unexpected_cqes;
      return c;
    }
    Sq& q = sqs_[c.sq];
    SqSlot& s = q.slots[c.wqe_idx];
    c.push = s.push;
    if (is_wqe_dma_error(*cqe)) {  // the hardware never read the WQE: its fields are 0
      c.wr_id = s.wr_id;
      c.cm_id = s.cm_id;
    }
    s.reaped = true;  // the slot stays reserved until handed_out() releases it
    --q.outstanding;
    --sq_outstanding_;
    ++stats_.sq_completed;
    if (!c.ok()) ++stats_.sq_errors;
    if (c.pshdrop) ++stats_.push_dropped;
    if (!s.abandoned) return c;
    retire_abandoned(c);
  }
}

void Device::retire_abandoned(const Completion& c) {
  Sq& q = sqs_[c.sq];
  q.slots[c.wqe_idx] = SqSlot{};
  advance_tail(q.ring, q.slots);
  ++stats_.abandoned_completed;
  size_t cap = 0;
  for (const Sq& x : sqs_) cap += x.ring.size();
  if (abandoned_.size() >= cap) {
    abandoned_.pop_front();
    ++stats_.abandoned_dropped;
  }
  abandoned_.push_back(c);
}

Result<void> Device::abandon(unsigned sq, uint16_t wqe_idx) {
  std::lock_guard lk(mu_);
  if (sq >= sqs_.size() || wqe_idx >= sqs_[sq].slots.size() || !sqs_[sq].slots[wqe_idx].busy ||
      sqs_[sq].slots[wqe_idx].abandoned) {
    return make_error(Errc::kInvalidArgument,
                      fmt::format("SQ {} wqe_idx {} has no outstanding WQE", sq, wqe_idx));
  }
  SqSlot& s = sqs_[sq].slots[wqe_idx];
  s.abandoned = true;
  ++stats_.sq_abandoned;
  if (s.reaped) {  // its completion waits in stash_: it goes now
    for (auto it = stash_.begin(); it != stash_.end(); ++it) {
      if (!it->unexpected && it->sq == sq && it->wqe_idx == wqe_idx) {
        const Completion c = *it;
        stash_.erase(it);
        retire_abandoned(c);
        break;
      }
    }
  }
  return {};
}

std::optional<Completion> Device::poll_abandoned() {
  std::lock_guard lk(mu_);
  if (abandoned_.empty()) return std::nullopt;
  Completion c = abandoned_.front();
  abandoned_.pop_front();
  return c;
}

std::string Device::state_text() {
  std::lock_guard lk(mu_);
  const uint32_t st = hal_.read32(r::STATUS);
  if (st == kAllOnes) {
    return "STATUS reads 0xFFFFFFFF: no device answering (held in reset, a link down or a "
           "removed card)";
  }
  std::string out = fmt::format("STATUS 0x{:03X}: {}", st, status_names(st));
  if (regs::field::CTRL::ENABLE.get(hal_.read32(r::CTRL)) == 0) {
    out += "; CTRL.ENABLE 0 (the engines take no new work)";
  }
  out += "; " + qerr_names(hal_.read32(r::QERR), static_cast<unsigned>(sqs_.size()));
  return out;
}

std::optional<Completion> Device::poll_cq() {
  std::lock_guard lk(mu_);
  if (!stash_.empty()) {
    Completion c = stash_.front();
    stash_.pop_front();
    return handed_out(c);
  }
  if (auto c = reap_one()) return handed_out(*c);
  return std::nullopt;
}

Completion Device::handed_out(const Completion& c) {
  if (!c.unexpected && c.sq < sqs_.size()) {
    Sq& q = sqs_[c.sq];
    if (c.wqe_idx < q.slots.size() && q.slots[c.wqe_idx].reaped) {
      q.slots[c.wqe_idx] = SqSlot{};
      advance_tail(q.ring, q.slots);
    }
  }
  return c;
}

Result<Completion> Device::wait_completion(std::chrono::nanoseconds timeout) {
  std::lock_guard lk(mu_);
  hal::Deadline dl(hal_, timeout);
  for (;;) {
    if (auto c = poll_cq()) return *c;
    if (dl.passed()) {
      if (auto q = any_sq_queue_error()) return *q;
      return make_error(
          Errc::kTimeout,
          fmt::format("no SQ completion after {} ({} WQEs outstanding, SQ 0 CI {}, "
                      "CQ head {}, CQ_TAIL {}); {}",
                      format_duration(timeout), sq_outstanding_, hal_.read32(r::sq_ci(0)),
                      cq_.head(), hal_.read32(r::CQ_TAIL), state_text()));
    }
    dl.pause(cfg_.poll_interval);
  }
}

uint32_t Device::read_qerr() {
  // All ones: no device answering (held in reset, surprise removal), not a queue error; the
  // caller's timeout stands, as for cm_ready().
  const uint32_t v = hal_.read32(r::QERR);
  return v == 0xFFFF'FFFFu ? 0 : v;
}

namespace {
// QERR.SQn (SQ n's cause): the fields SQ0..SQ3 are 4 bits apart.
uint8_t qerr_sq_cause(uint32_t qerr, unsigned sq) {
  static_assert(regs::field::QERR::SQ1.lsb == regs::field::QERR::SQ0.lsb + 4 &&
                regs::field::QERR::SQ3.lsb == regs::field::QERR::SQ0.lsb + 12);
  return static_cast<uint8_t>((qerr >> (regs::field::QERR::SQ0.lsb + 4 * sq)) & 0xFu);
}
}  // namespace

Device::QueueError Device::queue_error() {
  std::lock_guard lk(mu_);
  const uint32_t v = read_qerr();
  QueueError q;
  for (unsigned n = 0; n < q.sq.size(); ++n) q.sq[n] = qerr_sq_cause(v, n);
  q.cqp = static_cast<uint8_t>(regs::field::QERR::CQP.get(v));
  return q;
}

std::optional<Error> Device::sq_queue_error(unsigned sq) {
  const uint8_t c = sq < regs::kNumSqMax ? qerr_sq_cause(read_qerr(), sq) : 0;
  if (c == 0) return std::nullopt;
  return make_error(Errc::kQueueError,
                    fmt::format("SQ {} is in queue error: {}; its doorbells are ignored until "
                                "Device::reset_sq({})",
                                sq, qerr_text(c), sq));
}

std::optional<Error> Device::any_sq_queue_error() {
  const uint32_t v = read_qerr();
  for (unsigned n = 0; n < sqs_.size(); ++n) {
    if (qerr_sq_cause(v, n) != 0) return sq_queue_error(n);
  }
  return std::nullopt;
}

// reset_sq's rule: flush only what the hardware provably no longer touches. The SQ_CI the
// device shows moves past a WQE only after the WQE's CQE has been written (the SQ's CQE queue
// publishes it at the CQ writer's done: a posted write, which the register read that sees the
// new CI cannot overtake), and the engine takes work from an SQ only while its own CI != PI,
// running at most the CQE queue's depth + 1 WQEs ahead of SQ_CI. A queue error stops new doorbells
// but not the WQEs accepted before it. So once SQ_CI == SQ_PI, with the driver (holding the lock)
// ringing no doorbell, nothing of this SQ is in flight, every CQE it will ever write is in the CQ,
// and the WQEs the driver still holds are the ones the hardware never accepted (or whose CQE write
// was lost: DMA_WR_ERR).
Result<uint32_t> Device::reset_sq(unsigned sq) {
  std::lock_guard lk(mu_);
  if (sq >= sqs_.size()) {
    return make_error(Errc::kInvalidArgument,
                      fmt::format("SQ {} is not in use (num_sq {})", sq, sqs_.size()));
  }
  hal::Deadline dl(hal_, cfg_.cqp_timeout);
  for (;;) {
    // PI before and after CI: a doorbell from outside the driver in between shows up.
    const uint32_t pi = hal_.read32(r::sq_pi(sq));
    const uint32_t ci = hal_.read32(r::sq_ci(sq));
    if (pi != kAllOnes && ci == pi && hal_.read32(r::sq_pi(sq)) == pi) break;
    // The engine may be waiting for room in the CQ: make it.
    while (auto c = reap_one()) stash_.push_back(*c);
    if (dl.passed()) {
      return make_error(
          Errc::kTimeout,
          fmt::format("SQ {} not reset: the engine did not finish the WQEs it had accepted within "
                      "{} (SQ_CI {}, SQ_PI {}); {}. Nothing was flushed: remove the cause and "
                      "call reset_sq({}) again, or close and reopen the Device",
                      sq, format_duration(cfg_.cqp_timeout), ci, pi, state_text(), sq));
    }
    dl.pause(cfg_.poll_interval);
  }
  // Every CQE of this SQ's accepted WQEs is in the CQ now.
  while (auto c = reap_one()) stash_.push_back(*c);
  Sq& q = sqs_[sq];
  q.ring.reset();
  hal::write_doorbell(hal_, r::sq_size(sq), q.ring.log2_size());
  uint32_t flushed = 0;
  for (size_t i = 0; i < q.slots.size(); ++i) {
    SqSlot& s = q.slots[i];
    if (!s.busy || s.reaped) continue;
    Completion c;
    c.sq = static_cast<uint8_t>(sq);
    c.wqe_idx = static_cast<uint16_t>(i);
    c.wr_id = s.wr_id;
    c.cm_id = s.cm_id;
    c.push = s.push;
    c.error = true;
    c.major = static_cast<uint16_t>(regs::CqMajor::DRV);
    c.minor = static_cast<uint16_t>(regs::CqMinor::FLUSHED);
    s.reaped = true;  // reserved until its owner collects the FLUSHED completion
    ++flushed;
    ++stats_.sq_completed;
    ++stats_.sq_errors;
    if (s.abandoned) {
      retire_abandoned(c);  // nobody collects it from stash_: the slot goes back now
    } else {
      stash_.push_back(c);
    }
  }
  sq_outstanding_ -= q.outstanding;
  q.outstanding = 0;
  return flushed;
}

Result<void> Device::reset_cqp() {
  std::lock_guard lk(mu_);
  hal::Deadline dl(hal_, cfg_.cqp_timeout);
  while (regs::field::STATUS::CQP_BUSY.get(hal_.read32(r::STATUS)) != 0) {
    if (dl.passed()) {
      return make_error(Errc::kTimeout,
                        fmt::format("CQP engine still busy after {}; CQP not reset; {}",
                                    format_duration(cfg_.cqp_timeout), state_text()));
    }
    dl.pause(cfg_.poll_interval);
  }
  cqp_.reset();
  hal::write_doorbell(hal_, r::CQP_SIZE, cqp_.log2_size());
  for (auto& s : cqp_slots_) s.busy = false;
  return {};
}

Result<std::optional<Completion>> Device::poll_completion_for(unsigned sq, uint16_t wqe_idx) {
  std::lock_guard lk(mu_);
  for (auto it = stash_.begin(); it != stash_.end(); ++it) {
    if (!it->unexpected && it->sq == sq && it->wqe_idx == wqe_idx) {
      Completion c = *it;
      stash_.erase(it);
      return std::optional<Completion>{handed_out(c)};
    }
  }
  if (sq >= sqs_.size() || wqe_idx >= sqs_[sq].slots.size() || !sqs_[sq].slots[wqe_idx].busy) {
    return make_error(Errc::kInvalidArgument,
                      fmt::format("SQ {} wqe_idx {} has no outstanding WQE", sq, wqe_idx));
  }
  if (sqs_[sq].slots[wqe_idx].abandoned) {
    return make_error(Errc::kInvalidArgument,
                      fmt::format("SQ {} wqe_idx {} was abandoned: its completion goes to "
                                  "poll_abandoned()",
                                  sq, wqe_idx));
  }
  while (auto c = reap_one()) {
    if (!c->unexpected && c->sq == sq && c->wqe_idx == wqe_idx) {
      return std::optional<Completion>{handed_out(*c)};
    }
    stash_.push_back(*c);
  }
  return std::optional<Completion>{};
}

Error Device::completion_timeout(unsigned sq, uint16_t wqe_idx, std::chrono::nanoseconds timeout) {
  std::lock_guard lk(mu_);
  if (auto q = sq_queue_error(sq)) return *q;
  std::string where;
  if (sq < sqs_.size()) {
    const uint32_t ci = hal_.read32(r::sq_ci(sq));
    const uint32_t pi = hal_.read32(r::sq_pi(sq));
    if (ci != kAllOnes && pi != kAllOnes) {
      // queued in the hardware: wqe_idx lies in [CI, PI) of the ring
      const uint32_t n = sqs_[sq].ring.size();
      const bool queued = (wqe_idx + n - ci % n) % n < (pi + n - ci % n) % n;
      where = fmt::format(
          "SQ_CI {}, SQ_PI {}: {}; ", ci, pi,
          queued ? "the engine has not finished it" : "the engine is past it, its CQE is missing");
    }
  }
  return make_error(
      Errc::kTimeout,
      fmt::format("no completion for SQ {} wqe_idx {} after {} ({}CQ head {}, CQ_TAIL {}); {}", sq,
                  wqe_idx, format_duration(timeout), where, cq_.head(), hal_.read32(r::CQ_TAIL),
                  state_text()));
}

Result<Completion> Device::wait_completion_for(unsigned sq, uint16_t wqe_idx,
                                               std::chrono::nanoseconds timeout) {
  std::lock_guard lk(mu_);
  hal::Deadline dl(hal_, timeout);
  for (;;) {
    auto c = poll_completion_for(sq, wqe_idx);
    if (!c) return c.error();
    if (*c) return **c;
    if (dl.passed()) {
      Error e = completion_timeout(sq, wqe_idx, timeout);
      if (e.code == Errc::kTimeout) {
        e.message += fmt::format(
            ". The WQE stays posted and its slot reserved: wait again, collect it with poll_cq(), "
            "or give it up with Device::abandon({}, {})",
            sq, wqe_idx);
      }
      return e;
    }
    dl.pause(cfg_.poll_interval);
  }
}

// ------------------------------------------------------------------------------- for the Cm

std::chrono::nanoseconds Device::host_now() {
  std::lock_guard lk(mu_);
  return hal_.host_now();
}

void Device::pause(std::chrono::nanoseconds d) {
  std::lock_guard lk(mu_);
  hal_.wait_for(d);
}

std::optional<Completion> Device::poll_cq_if(const std::function<bool(const Completion&)>& mine) {
  std::lock_guard lk(mu_);
  for (auto it = stash_.begin(); it != stash_.end(); ++it) {
    if (mine(*it)) {
      const Completion c = *it;
      stash_.erase(it);
      return handed_out(c);
    }
  }
  while (auto c = reap_one()) {
    if (mine(*c)) return handed_out(*c);
    stash_.push_back(*c);
  }
  return std::nullopt;
}

unsigned Device::listeners_installed() {
  std::lock_guard lk(mu_);
  return static_cast<unsigned>(installed_.count());
}

}  // namespace bouncer
