// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// Device: the passive connection manager's side of the hardware. Listeners (CQP
// CREATE/DESTROY_LISTENER), the event ring (AEQ), the private-data area, the timer and TCP
// registers, ISN_KEY, CM_CONNS/CM_READY and the statistics counters.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <utility>

#include "bouncer/device.hpp"
#include "passive_internal.hpp"

namespace bouncer {

namespace r = regs::reg;

// The AEQ is consumed with the CQ ring code: same entry size, VALID in the same place.
static_assert(regs::kAeqeBytes == regs::kCqeBytes);
static_assert(regs::aeqe::VALID.qword == regs::cqe::VALID.qword &&
              regs::aeqe::VALID.lsb == regs::cqe::VALID.lsb);

namespace detail {

Result<void> validate_timers(const TimerConfig& t) {
  if (t.tick_cycles == 0) {
    return make_error(Errc::kInvalidArgument, "TIMER_TICK must be at least 1 cycle");
  }
  if (t.rto_init == 0 || t.rto_init > t.rto_max) {
    return make_error(Errc::kInvalidArgument,
                      fmt::format("RTO_INIT {} must be in [1, RTO_MAX {}]", t.rto_init, t.rto_max));
  }
  if (t.rtx_max > 15) {
    return make_error(Errc::kInvalidArgument,
                      fmt::format("RTX_MAX {} does not fit its 4 bits", t.rtx_max));
  }
  if (t.mpa_timeout == 0 || t.mpa_reasm_timeout == 0 || t.fin_timeout == 0 || t.time_wait == 0) {
    return make_error(Errc::kInvalidArgument,
                      "MPA_TIMEOUT, MPA_REASM_TIMEOUT, FIN_TIMEOUT and TIME_WAIT must be > 0");
  }
  return {};
}

Result<void> validate_tcp(const TcpConfig& t) {
  if (t.wscale > 14) {
    return make_error(Errc::kInvalidArgument,
                      fmt::format("window scale {} exceeds 14 (RFC 7323)", t.wscale));
  }
  if (t.mss < 88) {  // below any MSS a stack accepts (Linux TCP_MIN_MSS)
    return make_error(Errc::kInvalidArgument, fmt::format("MSS {} is below 88", t.mss));
  }
  const uint64_t mac = mac_to_field(t.port_mac);
  if (!t.promisc && (mac == 0 || (mac >> 40 & 1) != 0)) {
    return make_error(Errc::kInvalidArgument,
                      fmt::format("promiscuous mode off needs the port's unicast MAC "
                                  "(port_mac {:012x} would drop every frame)",
                                  mac));
  }
  if (t.port_ip >> 28 == 0xE || t.port_ip == 0xFFFFFFFF) {
    return make_error(Errc::kInvalidArgument,
                      fmt::format("port_ip {:08x} is a multicast or broadcast address, not a "
                                  "host's own (0: take any destination)",
                                  t.port_ip));
  }
  return {};
}

void write_timers(hal::Device& hal, const TimerConfig& t) {
  hal.write32(r::TIMER_TICK, t.tick_cycles);
  // RTO_MAX before RTO_INIT: the pair is never seen inverted.
  hal.write32(r::RTO_MAX, t.rto_max);
  hal.write32(r::RTO_INIT, t.rto_init);
  hal.write32(r::RTX_MAX, t.rtx_max);
  hal.write32(r::MPA_TIMEOUT, t.mpa_timeout);
  hal.write32(r::MPA_REASM_TIMEOUT, t.mpa_reasm_timeout);
  hal.write32(r::FIN_TIMEOUT, t.fin_timeout);
  hal.write32(r::TIME_WAIT, t.time_wait);
}

void write_tcp(hal::Device& hal, const TcpConfig& t) {
  namespace fc = regs::field::TCP_CFG;
  hal.write32(r::TCP_CFG, fc::MSS.put(t.mss) | fc::WSCALE.put(t.wscale));
  hal.write32(r::TCP_WND, t.window);
  // the MAC before the filter that uses it
  const uint64_t mac = mac_to_field(t.port_mac);
  hal.write32(r::PORT_MAC_LO, static_cast<uint32_t>(mac));
  hal.write32(r::PORT_MAC_HI, static_cast<uint32_t>(mac >> 32));
  hal.write32(r::PORT_IP, t.port_ip);
  hal.write32(r::CM_ROUTE, regs::field::CM_ROUTE::PROMISC.put(t.promisc));
}

std::array<uint32_t, 4> random_isn_key() {
  std::random_device rd;
  return {rd(), rd(), rd(), rd()};
}

uint32_t random_hash_key() {
  std::random_device rd;
  return rd();
}

}  // namespace detail

// ------------------------------------------------------------------------------- decoding

Aeqe Aeqe::unpack(std::span<const std::byte> img) {
  namespace f = regs::aeqe;
  Aeqe e;
  e.rem_ip = static_cast<uint32_t>(regs::get(img, f::REM_IP));
  e.loc_ip = static_cast<uint32_t>(regs::get(img, f::LOC_IP));
  e.rem_port = static_cast<uint16_t>(regs::get(img, f::REM_PORT));
  e.loc_port = static_cast<uint16_t>(regs::get(img, f::LOC_PORT));
  e.ird_ord = static_cast<uint32_t>(regs::get(img, f::IRD_ORD));
  e.pd_offset = static_cast<uint32_t>(regs::get(img, f::PD_OFFSET));
  e.pd_len = static_cast<uint16_t>(regs::get(img, f::PD_LEN));
  e.rev = static_cast<uint8_t>(regs::get(img, f::REV));
  e.flags = static_cast<uint8_t>(regs::get(img, f::FLAGS));
  e.cm_id = static_cast<uint32_t>(regs::get(img, f::CM_ID));
  e.listener = static_cast<uint8_t>(regs::get(img, f::LISTENER));
  e.event = static_cast<uint8_t>(regs::get(img, f::EVENT_CODE));
  e.reason = static_cast<uint8_t>(regs::get(img, f::REASON));
  return e;
}

CmNodeStatus CmNodeStatus::unpack(std::span<const std::byte> img) {
  namespace f = regs::cm_ctx;
  CmNodeStatus n;
  n.ctx = CmContext::unpack(img);
  n.state = static_cast<regs::CmState>(regs::get(img, f::STATE));
  n.fin_policy = static_cast<regs::FinPolicy>(regs::get(img, f::FIN_POLICY));
  n.rtx_cnt = static_cast<unsigned>(regs::get(img, f::RTX_CNT));
  n.listener = static_cast<unsigned>(regs::get(img, f::LISTENER));
  n.rej_pd_len = static_cast<unsigned>(regs::get(img, f::REJ_PD_LEN));
  n.rej_ird_ord_valid = regs::get(img, f::REJ_IRD_ORD_VALID) != 0;
  n.auto_rej = regs::get(img, f::AUTO_REJ) != 0;
  n.hosted = regs::get(img, f::HOSTED) != 0;
  n.peer_fin = regs::get(img, f::PEER_FIN) != 0;
  n.timer_on = regs::get(img, f::TIMER_ON) != 0;
  n.rej_fin = regs::get(img, f::REJ_FIN) != 0;
  n.ws_ok = regs::get(img, f::WS_OK) != 0;
  n.iss = static_cast<uint32_t>(regs::get(img, f::ISS));
  n.deadline = static_cast<uint32_t>(regs::get(img, f::DEADLINE));
  return n;
}

Result<CmNodeStatus> Device::cqp_read_node(uint32_t cm_id) {
  std::lock_guard lk(mu_);
  std::array<std::byte, regs::kCmCtxBytes> img{};
  auto r = cqp_exec(static_cast<uint8_t>(regs::CqpOp::READ_CM_CONTEXT), cm_id, {}, img);
  if (!r) return r.error();
  return CmNodeStatus::unpack(img);
}

// ------------------------------------------------------------------------------- listeners

Result<void> Device::cqp_create_listener(const ListenerConfig& c,
                                         std::span<const std::byte> template_pd) {
  std::lock_guard lk(mu_);
  if (c.index >= caps_.num_listeners) {
    return make_error(Errc::kInvalidArgument, fmt::format("listener index {} is not below {}",
                                                          c.index, caps_.num_listeners));
  }
  if (template_pd.size() > regs::kMpaPdMax - 4) {
    return make_error(Errc::kInvalidArgument,
                      fmt::format("{}-byte PD template exceeds {} (the rev-2 IRD/ORD word must "
                                  "fit in PD_Length {})",
                                  template_pd.size(), regs::kMpaPdMax - 4, regs::kMpaPdMax));
  }
  if (c.max_ird > 0x3FFF || c.max_ord > 0x3FFF) {
    return make_error(Errc::kInvalidArgument,
                      fmt::format("max_ird {} / max_ord {} exceed 14 bits", c.max_ird, c.max_ord));
  }
  // The hardware copies the template on chip while it executes the command (one DMA read, in
  // whole 8-byte words: the buffer is rounded up so no read runs past it, which an IOMMU
  // would fault on); the buffer is not needed once the command has completed.
  auto buf = hal_.alloc_dma(std::max<size_t>((template_pd.size() + 63) & ~size_t{63}, 64), 64);
  if (!buf) return buf.error();
  if (!template_pd.empty()) {
    std::memcpy((*buf)->bytes().data(), template_pd.data(), template_pd.size());
    (*buf)->sync_to_device(0, template_pd.size());
  }
  namespace f = regs::cqp_listen_wqe;
  std::array<std::byte, regs::kCqpWqeBytes> img{};
  regs::put(img, f::TMPL_ADDR, (*buf)->device_addr());
  regs::put(img, f::LOC_IP, c.loc_ip);
  regs::put(img, f::LOC_PORT, c.loc_port);
  regs::put(img, f::TMPL_LEN, template_pd.size());
  regs::put(img, f::LISTENER, c.index);
  regs::put(img, f::BACKLOG, c.backlog);
  regs::put(img, f::FIN_POLICY, static_cast<uint64_t>(c.fin_policy));
  regs::put(img, f::AUTO_REJECT, static_cast<uint64_t>(c.auto_reject));
  regs::put(img, f::TMPL_IRD_ORD_VALID, c.tmpl_ird_ord.has_value());
  regs::put(img, f::AEQ_FULL_RST, c.aeq_full_rst);
  regs::put(img, f::LOC_MAC, mac_to_field(c.loc_mac));
  regs::put(img, f::TTL, c.ttl);
  regs::put(img, f::TOS, c.tos);
  regs::put(img, f::MAX_IRD, c.max_ird);
  regs::put(img, f::MAX_ORD, c.max_ord);
  regs::put(img, f::TMPL_IRD_ORD, c.tmpl_ird_ord.value_or(0));
  constexpr auto op = static_cast<uint8_t>(regs::CqpOp::CREATE_LISTENER);
  auto idx = cqp_submit(op, img);
  if (!idx) return idx.error();
  auto done = cqp_finish(*idx, op, c.index);
  if (!done) {
    // A timed-out command may still be executed: its template must outlive that (until
    // close(), which resets the core first).
    if (done.error().code == Errc::kTimeout) retired_tmpl_.push_back(std::move(buf).value());
    return done;
  }
  installed_.set(c.index);
  return {};
}

Result<void> Device::cqp_destroy_listener(unsigned index) {
  std::lock_guard lk(mu_);
  if (index >= caps_.num_listeners) {
    return make_error(Errc::kInvalidArgument,
                      fmt::format("listener index {} is not below {}", index, caps_.num_listeners));
  }
  namespace f = regs::cqp_listen_wqe;
  std::array<std::byte, regs::kCqpWqeBytes> img{};
  regs::put(img, f::LISTENER, index);
  constexpr auto op = static_cast<uint8_t>(regs::CqpOp::DESTROY_LISTENER);
  auto idx = cqp_submit(op, img);
  if (!idx) return idx.error();
  auto done = cqp_finish(*idx, op, index);
  const bool gone =
      done || (done.error().code == Errc::kHardware &&
               done.error().hw_minor == static_cast<uint16_t>(regs::CqMinor::BAD_LISTENER));
  // Connections the listener accepted run to their end on their own: an auto-reject's bytes
  // were copied into the node's PD slot, which its retransmissions read.
  if (gone) installed_.reset(index);
  return done;
}

bool Device::listener_installed(unsigned index) const {
  return index < installed_.size() && installed_.test(index);
}

// ------------------------------------------------------------------------------- registers

Result<void> Device::set_timers(const TimerConfig& t) {
  std::lock_guard lk(mu_);
  if (auto v = detail::validate_timers(t); !v) return v;
  detail::write_timers(hal_, t);
  return {};
}

TimerConfig Device::read_timers() {
  std::lock_guard lk(mu_);
  TimerConfig t;
  t.tick_cycles = hal_.read32(r::TIMER_TICK);
  t.rto_init = hal_.read32(r::RTO_INIT);
  t.rto_max = hal_.read32(r::RTO_MAX);
  t.rtx_max = static_cast<uint8_t>(hal_.read32(r::RTX_MAX) & 0xF);
  t.mpa_timeout = hal_.read32(r::MPA_TIMEOUT);
  t.mpa_reasm_timeout = hal_.read32(r::MPA_REASM_TIMEOUT);
  t.fin_timeout = hal_.read32(r::FIN_TIMEOUT);
  t.time_wait = hal_.read32(r::TIME_WAIT);
  return t;
}

Result<void> Device::set_tcp(const TcpConfig& t) {
  std::lock_guard lk(mu_);
  if (auto v = detail::validate_tcp(t); !v) return v;
  detail::write_tcp(hal_, t);
  return {};
}

TcpConfig Device::read_tcp() {
  std::lock_guard lk(mu_);
  namespace fc = regs::field::TCP_CFG;
  TcpConfig t;
  const uint32_t cfg = hal_.read32(r::TCP_CFG);
  t.mss = static_cast<uint16_t>(fc::MSS.get(cfg));
  t.wscale = static_cast<uint8_t>(fc::WSCALE.get(cfg));
  t.window = static_cast<uint16_t>(hal_.read32(r::TCP_WND) & 0xFFFF);
  t.promisc = regs::field::CM_ROUTE::PROMISC.get(hal_.read32(r::CM_ROUTE)) != 0;
  t.port_mac = mac_from_field(uint64_t{hal_.read32(r::PORT_MAC_HI) & 0xFFFF} << 32 |
                              hal_.read32(r::PORT_MAC_LO));
  t.port_ip = hal_.read32(r::PORT_IP);
  return t;
}

uint32_t Device::cm_conns() {
  std::lock_guard lk(mu_);
  return hal_.read32(r::CM_CONNS);
}

bool Device::cm_ready() {
  std::lock_guard lk(mu_);
  const uint32_t status = hal_.read32(r::STATUS);
  // All ones is no device answering (a failed PCIe read, a core held in reset), never a real
  // STATUS: its bits above CM_READY read 0.
  return status != 0xFFFF'FFFFu && regs::field::STATUS::CM_READY.get(status) != 0;
}

Result<void> Device::wait_cm_ready(std::chrono::nanoseconds timeout) {
  std::lock_guard lk(mu_);
  hal::Deadline dl(hal_, timeout);
  while (!cm_ready()) {
    if (dl.passed()) {
      return make_error(Errc::kTimeout,
                        fmt::format("STATUS.CM_READY still 0 after {}: the connection table's "
                                    "sweep after a reset has not finished; {}",
                                    format_duration(timeout), state_text()));
    }
    dl.pause(cfg_.poll_interval);
  }
  return {};
}

namespace {
#define BOUNCER_STAT(n) \
  StatValue { #n, regs::reg::n, 0 }
constexpr StatValue kStats[] = {
    BOUNCER_STAT(STAT_TX_FRAMES),      BOUNCER_STAT(STAT_TX_BYTES),
    BOUNCER_STAT(STAT_SQ_WQES),        BOUNCER_STAT(STAT_SQ_ERRORS),
    BOUNCER_STAT(STAT_PUSH_USED),      BOUNCER_STAT(STAT_PUSH_DROPPED),
    BOUNCER_STAT(STAT_CQP_WQES),       BOUNCER_STAT(STAT_LAST_LATENCY),
    BOUNCER_STAT(STAT_SQ_DB_BAD),      BOUNCER_STAT(STAT_RX_FRAMES),
    BOUNCER_STAT(STAT_RX_BAD),         BOUNCER_STAT(STAT_RX_NOT_TCP),
    BOUNCER_STAT(STAT_RX_OVERFLOW),    BOUNCER_STAT(STAT_SYN_NO_LISTENER),
    BOUNCER_STAT(STAT_SYN_DROP_FULL),  BOUNCER_STAT(STAT_SYN_DROP_BACKLOG),
    BOUNCER_STAT(STAT_SYN_DUP),        BOUNCER_STAT(STAT_CONN_ESTABLISHED),
    BOUNCER_STAT(STAT_MPA_REQ),        BOUNCER_STAT(STAT_MPA_ERR),
    BOUNCER_STAT(STAT_MPA_TIMEOUT),    BOUNCER_STAT(STAT_REJECT_HOST),
    BOUNCER_STAT(STAT_REJECT_AUTO),    BOUNCER_STAT(STAT_RTX),
    BOUNCER_STAT(STAT_RTX_EXHAUSTED),  BOUNCER_STAT(STAT_RST_TX),
    BOUNCER_STAT(STAT_RST_RX),         BOUNCER_STAT(STAT_OOW),
    BOUNCER_STAT(STAT_FIN_TX),         BOUNCER_STAT(STAT_CLOSED),
    BOUNCER_STAT(STAT_EVENTS),         BOUNCER_STAT(STAT_REJECT_LATE),
    BOUNCER_STAT(STAT_ACK_TX),         BOUNCER_STAT(STAT_DMA_RD_ERR),
    BOUNCER_STAT(STAT_DMA_WR_ERR),     BOUNCER_STAT(STAT_DMA_TIMEOUT),
    BOUNCER_STAT(STAT_RX_FILTERED),    BOUNCER_STAT(STAT_RX_STRAY),
    BOUNCER_STAT(STAT_AEQ_REFUSED),    BOUNCER_STAT(STAT_EVT_COALESCED),
    BOUNCER_STAT(STAT_ARP_REPLIED),    BOUNCER_STAT(STAT_ARP_DROPPED),
    BOUNCER_STAT(STAT_SYN_DROP_QUEUE),
};
#undef BOUNCER_STAT
}  // namespace

std::span<const StatValue> Device::stat_registers() { return kStats; }

std::vector<StatValue> Device::read_stats() {
  std::lock_guard lk(mu_);
  std::vector<StatValue> out(std::begin(kStats), std::end(kStats));
  for (auto& s : out) s.value = hal_.read32(s.offset);
  return out;
}

// ------------------------------------------------------------------------------- AEQ, PD area

std::optional<Aeqe> Device::poll_aeq() {
  std::lock_guard lk(mu_);
  auto img = aeq_.peek();
  if (!img) return std::nullopt;
  aeq_.advance();
  ++stats_.aeq_consumed;
  if (++aeq_unflushed_ >= aeq_batch_) flush_aeq_head();
  return Aeqe::unpack(*img);
}

void Device::flush_aeq_head() {
  std::lock_guard lk(mu_);
  if (aeq_unflushed_ == 0) return;
  hal::write_doorbell(hal_, r::AEQ_HEAD, aeq_.head());
  aeq_unflushed_ = 0;
  ++stats_.aeq_head_writes;
}

uint64_t Device::pd_area_base() const { return pd_area_->device_addr(); }

uint64_t Device::pd_area_addr(uint32_t cm_id) const {
  return pd_area_->device_addr() + uint64_t{cm_id} * regs::kPdSlotBytes;
}

size_t Device::pd_area_bytes() const { return pd_area_->bytes().size(); }

std::vector<std::byte> Device::read_pd_area(uint64_t offset, size_t len) {
  std::lock_guard lk(mu_);
  const size_t size = pd_area_->bytes().size();
  if (offset > size || len > size - offset) return {};
  if (len == 0) return {};
  pd_area_->sync_from_device(static_cast<size_t>(offset), len);
  const auto* p = pd_area_->bytes().data() + offset;
  return std::vector<std::byte>(p, p + len);
}

std::span<const std::byte> Device::pd_area_slot(uint32_t cm_id) const {
  if (cm_id >= caps_.ctx_depth) return {};
  return std::span<const std::byte>(pd_area_->bytes())
      .subspan(size_t{cm_id} * regs::kPdSlotBytes, regs::kPdSlotBytes);
}

}  // namespace bouncer
