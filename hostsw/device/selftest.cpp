// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// The loopback self-test (bouncer/selftest.hpp). Every number it expects is derived here from
// the frame layout (docs/reject-frame.md) and the CM engine's rules (docs/cm-state-machine.md),
// never read back from the device first.
#include "bouncer/selftest.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <map>
#include <utility>

namespace bouncer {

namespace {

namespace r = regs::reg;

// Addresses of the test connections (link-local style, never routed): Bouncer's side and the
// "peer" whose address the borrowed listener listens on.
constexpr MacAddr kLocMac = {0x02, 0x42, 0x4E, 0x43, 0x52, 0x01};
constexpr MacAddr kRemMac = {0x02, 0x42, 0x4E, 0x43, 0x52, 0x02};
constexpr uint32_t kLocIp = 0x0AFF4201;  // 10.255.66.1
constexpr uint32_t kRemIp = 0x0AFF4202;  // 10.255.66.2
constexpr uint16_t kLocPortA = 20049;
constexpr uint16_t kLocPortB = 20050;
constexpr uint16_t kRemPort = 50000;   // the listener's port
constexpr uint16_t kVlanTci = 0x0064;  // VID 100, PCP 0

constexpr size_t kPdLenA = 16;   // inline (<= 32)
constexpr size_t kPdLenB = 100;  // DMA-read from the SQ slot's PD buffer

constexpr uint32_t kEthHdr = 14, kVlanHdr = 4, kIpTcpHdr = 40, kMpaHdr = 20, kMinFrame = 60;

uint32_t reject_frame_bytes(const CmContext& c, size_t pd_len) {
  return kEthHdr + (c.vlan_en ? kVlanHdr : 0) + kIpTcpHdr + kMpaHdr + c.wire_pd_len(pd_len);
}

// RST|ACK for a segment without a node: no payload, no options, padded to 60 bytes; it
// copies the segment's 802.1Q tag.
uint32_t rst_frame_bytes(bool vlan) {
  return std::max(kMinFrame, kEthHdr + (vlan ? kVlanHdr : 0) + kIpTcpHdr);
}

CmContext context_a() {
  CmContext c;
  c.rem_mac = kRemMac;
  c.loc_mac = kLocMac;
  c.loc_ip = kLocIp;
  c.rem_ip = kRemIp;
  c.loc_port = kLocPortA;
  c.rem_port = kRemPort;
  c.rcv_wnd = 0x4000;
  c.ttl = 64;
  c.tos = 0;
  c.snd_nxt = 0x5E1F7E57;
  c.rcv_nxt = 0x0B0C0D0E;
  c.req_rev = 2;
  c.req_flags = 0x40 | CmContext::kMpaFlagEnhanced;  // CRC + enhanced (RFC 6581)
  c.ip_id = 0x1234;
  c.req_ird_ord = 0x80104008;
  return c;
}

// Sequence number and IP ID both wrap in this one: the reject + FIN crosses 2**32.
CmContext context_b() {
  CmContext c;
  c.rem_mac = kRemMac;
  c.loc_mac = kLocMac;
  c.vlan_en = true;
  c.vlan_tci = kVlanTci;
  c.loc_ip = kLocIp;
  c.rem_ip = kRemIp;
  c.loc_port = kLocPortB;
  c.rem_port = kRemPort;
  c.rcv_wnd = 0xFFFF;
  c.ttl = 32;
  c.tos = 0x10;
  c.snd_nxt = 0xFFFFFFC0;
  c.rcv_nxt = 0x12345678;
  c.req_rev = 1;
  c.req_flags = 0;
  c.ip_id = 0xFFFF;
  return c;
}

std::vector<std::byte> test_pd(size_t len, uint8_t seed) {
  std::vector<std::byte> pd(len);
  for (size_t i = 0; i < len; ++i) pd[i] = std::byte{static_cast<uint8_t>(seed + 7 * i)};
  return pd;
}

uint32_t stat_of(const std::vector<StatValue>& v, uint32_t offset) {
  for (const auto& s : v) {
    if (s.offset == offset) return s.value;
  }
  return 0;
}

class Checker {
 public:
  explicit Checker(std::vector<SelftestCheck>& out) : out_(out) {}

  template <typename T>
  void eq(std::string name, T expected, T actual, std::string hint) {
    const bool ok = expected == actual;
    out_.push_back({std::move(name), fmt::format("{}", expected), fmt::format("{}", actual), ok,
                    ok ? std::string() : std::move(hint)});
  }
  void hex(std::string name, uint32_t expected, uint32_t actual, std::string hint) {
    const bool ok = expected == actual;
    out_.push_back({std::move(name), fmt::format("0x{:08X}", expected),
                    fmt::format("0x{:08X}", actual), ok, ok ? std::string() : std::move(hint)});
  }
  void text(std::string name, std::string expected, std::string actual, std::string hint) {
    const bool ok = expected == actual;
    out_.push_back({std::move(name), std::move(expected), std::move(actual), ok,
                    ok ? std::string() : std::move(hint)});
  }

 private:
  std::vector<SelftestCheck>& out_;
};

// What each counter must have moved by, with what a mismatch most likely means.
struct CounterWant {
  uint32_t delta;
  const char* hint;
};

std::map<uint32_t, CounterWant> expected_counters(uint32_t tx_bytes, bool push, uint32_t cqp_ops) {
  constexpr const char* kNone = "nothing in the self-test does this";
  std::map<uint32_t, CounterWant> w;
  w[r::STAT_TX_FRAMES] = {4, "two rejects and the engine's two RSTs must leave the TX arbiter"};
  w[r::STAT_TX_BYTES] = {tx_bytes,
                         "the frames' number or lengths differ from docs/reject-frame.md"};
  w[r::STAT_SQ_WQES] = {2, "two reject WQEs were posted"};
  w[r::STAT_SQ_ERRORS] = {0, "a reject WQE completed with an error"};
  w[r::STAT_PUSH_USED] = {push ? 1u : 0u, "reject A went through the push page"};
  w[r::STAT_PUSH_DROPPED] = {0, "the idle engine must take a pushed WQE"};
  w[r::STAT_CQP_WQES] = {cqp_ops, "control commands of the test (listener, 2 writes, 2 reads)"};
  w[r::STAT_RX_FRAMES] = {4,
                          "every transmitted frame must come back into RX: is CTRL.LOOPBACK "
                          "implemented by this bitstream?"};
  w[r::STAT_RX_BAD] = {0, "RX rejected a frame TX built (length, header or checksum)"};
  w[r::STAT_RX_NOT_TCP] = {0, "RX did not see IPv4/TCP in a frame TX built"};
  w[r::STAT_RX_OVERFLOW] = {0,
                            "frames were dropped at RX: frames from the network arrive while "
                            "in loopback (they are dropped and counted here), or the RX FIFO "
                            "overflowed"};
  w[r::STAT_SYN_NO_LISTENER] = {0, kNone};
  w[r::STAT_SYN_DROP_FULL] = {0, kNone};
  w[r::STAT_SYN_DROP_BACKLOG] = {0, kNone};
  w[r::STAT_SYN_DUP] = {0, kNone};
  w[r::STAT_CONN_ESTABLISHED] = {0, kNone};
  w[r::STAT_MPA_REQ] = {0, kNone};
  w[r::STAT_MPA_ERR] = {0, kNone};
  w[r::STAT_MPA_TIMEOUT] = {0, kNone};
  w[r::STAT_REJECT_HOST] = {2, "both host rejects must be sent"};
  w[r::STAT_REJECT_AUTO] = {0, kNone};
  w[r::STAT_RTX] = {0, "host-written contexts have no timer: nothing is retransmitted"};
  w[r::STAT_RTX_EXHAUSTED] = {0, kNone};
  w[r::STAT_RST_TX] = {2,
                       "each looped reject reaches a listening port with no connection: the "
                       "engine must answer RST|ACK"};
  w[r::STAT_RST_RX] = {0, "a RST for no connection is not a valid RST of a connection"};
  w[r::STAT_RX_STRAY] = {2, "the two looped RST|ACKs belong to no connection: dropped, counted"};
  w[r::STAT_AEQ_REFUSED] = {0, kNone};
  w[r::STAT_EVT_COALESCED] = {0, kNone};
  w[r::STAT_RX_FILTERED] = {
      0, "the self-test turns the destination filters off (PROMISC 1, PORT_IP 0)"};
  w[r::STAT_OOW] = {0, "no frame may hit a connection"};
  w[r::STAT_SYN_DROP_QUEUE] = {0, "no SYN is looped back, so none can be dropped at the SYN queue"};
  w[r::STAT_FIN_TX] = {1, "reject B (IRDMA policy) carries the FIN"};
  w[r::STAT_CLOSED] = {0, "host-written contexts are never freed by the engine"};
  w[r::STAT_EVENTS] = {0, "no event may be written for host-written contexts or stray segments"};
  w[r::STAT_REJECT_LATE] = {0, kNone};
  w[r::STAT_ACK_TX] = {0, "no bare ACK: the looped frames belong to no connection"};
  w[r::STAT_DMA_RD_ERR] = {0, "a DMA read got SLVERR/DECERR: is host memory mapped for the card?"};
  w[r::STAT_DMA_WR_ERR] = {0, "a DMA write got SLVERR/DECERR: is host memory mapped for the card?"};
  w[r::STAT_DMA_TIMEOUT] = {0, "a DMA read never returned (DMA_TIMEOUT watchdog)"};
  return w;
}

std::optional<unsigned> free_listener(const Device& dev) {
  for (unsigned i = dev.caps().num_listeners; i-- > 0;) {
    if (!dev.listener_installed(i)) return i;
  }
  return std::nullopt;
}

// Undoes what the test changed, in reverse order; each step is attempted even if one fails.
class Restore {
 public:
  Restore(Device& dev, uint32_t ctrl, uint32_t route, uint32_t port_ip)
      : dev_(dev), ctrl_(ctrl), route_(route), port_ip_(port_ip) {}
  ~Restore() { (void)run(); }
  Restore(const Restore&) = delete;
  Restore& operator=(const Restore&) = delete;

  void listener(unsigned index) { listener_ = index; }
  void context(uint32_t cm_id) { contexts_.push_back(cm_id); }

  /// The first failure, if any.
  Result<void> run() {
    if (done_) return {};
    done_ = true;
    std::optional<Error> first;
    auto note = [&](Result<void> res) {
      if (!res && !first) first = res.error();
    };
    CmContext gone;
    gone.valid = false;
    for (uint32_t id : contexts_) note(dev_.cqp_write_context(id, gone));
    if (listener_) note(dev_.cqp_destroy_listener(*listener_));
    // Frames in flight finish first: the switch takes effect at frame boundaries.
    dev_.hal().write32(r::CTRL, ctrl_ & ~regs::field::CTRL::LOOPBACK.mask());
    dev_.hal().write32(r::CM_ROUTE, route_);
    dev_.hal().write32(r::PORT_IP, port_ip_);
    if (first) return *first;
    return {};
  }

 private:
  Device& dev_;
  uint32_t ctrl_, route_, port_ip_;
  std::optional<unsigned> listener_;
  std::vector<uint32_t> contexts_;
  bool done_ = false;
};

Error stage_error(const Error& e, const char* stage) {
  Error out = e;
  out.message = fmt::format("self-test: {}: {}", stage, e.message);
  return out;
}

}  // namespace

bool SelftestReport::passed() const {
  if (checks.empty()) return false;
  return std::all_of(checks.begin(), checks.end(), [](const SelftestCheck& c) { return c.ok; });
}

std::string SelftestReport::failures() const {
  std::string s;
  for (const auto& c : checks) {
    if (c.ok) continue;
    s += fmt::format("{}: expected {}, got {}{}{}\n", c.name, c.expected, c.actual,
                     c.hint.empty() ? "" : " -- ", c.hint);
  }
  return s;
}

Result<SelftestReport> run_loopback_selftest(Device& dev, const SelftestOptions& opts) {
  hal::Device& hal = dev.hal();
  const Caps& caps = dev.caps();
  SelftestReport rep;
  rep.backend = hal.name();
  rep.caps = caps;

  // ---- preconditions
  const uint32_t ctrl = hal.read32(r::CTRL);
  if (regs::field::CTRL::ENABLE.get(ctrl) == 0) {
    return make_error(Errc::kState, "self-test: CTRL.ENABLE is 0 (open the device first)");
  }
  if (const uint32_t conns = dev.cm_conns(); conns != 0) {
    return make_error(Errc::kState,
                      fmt::format("self-test: {} connection(s) in the table (CM_CONNS); the "
                                  "self-test needs an idle device",
                                  conns));
  }
  if (dev.sq_outstanding() != 0) {
    return make_error(Errc::kState,
                      fmt::format("self-test: {} SQ WQE(s) outstanding", dev.sq_outstanding()));
  }
  if (caps.ctx_depth < 2) {
    return make_error(Errc::kState, "self-test: the connection table has fewer than 2 entries");
  }
  std::optional<unsigned> lst = opts.listener ? opts.listener : free_listener(dev);
  if (!lst || *lst >= caps.num_listeners) {
    return make_error(Errc::kState, "self-test: no free listener entry to borrow");
  }
  if (dev.listener_installed(*lst)) {
    return make_error(Errc::kState, fmt::format("self-test: listener {} is in use", *lst));
  }
  rep.listener = *lst;
  rep.cm_id_a = caps.ctx_depth - 1;
  rep.cm_id_b = caps.ctx_depth - 2;

  const CmContext ctx_a = context_a();
  const CmContext ctx_b = context_b();
  const auto pd_a = test_pd(kPdLenA, 0xA0);
  const auto pd_b = test_pd(kPdLenB, 0xB0);
  const bool push_a = caps.push;
  const uint32_t rej_a = reject_frame_bytes(ctx_a, kPdLenA);
  const uint32_t rej_b = reject_frame_bytes(ctx_b, kPdLenB);
  const uint32_t rst_a = rst_frame_bytes(ctx_a.vlan_en);
  const uint32_t rst_b = rst_frame_bytes(ctx_b.vlan_en);
  rep.frames = {
      {fmt::format("reject A  cm_id {} rev 2 PD {} B{}, SIW_SAFE", rep.cm_id_a, kPdLenA,
                   push_a ? " (push page)" : ""),
       rej_a},
      {"RST|ACK   the engine's answer to looped reject A (listening port, no connection)", rst_a},
      {fmt::format("reject B  cm_id {} rev 1 PD {} B, VLAN {}, IRDMA (FIN in the reject)",
                   rep.cm_id_b, kPdLenB, kVlanTci & 0xFFF),
       rej_b},
      {"RST|ACK   the engine's answer to looped reject B (tag copied)", rst_b},
  };
  constexpr uint32_t kCqpOps = 5;  // CREATE_LISTENER, 2 x WRITE_CM_CONTEXT, 2 x READ_CM_CONTEXT

  const auto before = dev.read_stats();
  const uint64_t t0 = hal.now_cycles();
  // The looped frames are addressed to the test's own MACs and IPs, not PORT_MAC / PORT_IP:
  // the destination filters are off for the test (CM_ROUTE.PROMISC 1, PORT_IP 0) and
  // restored after it.
  const uint32_t route = hal.read32(r::CM_ROUTE);
  const uint32_t port_ip = hal.read32(r::PORT_IP);
  Restore restore(dev, ctrl, route, port_ip);
  hal.write32(r::CM_ROUTE, route | regs::field::CM_ROUTE::PROMISC.mask());
  hal.write32(r::PORT_IP, 0);
  hal.write32(r::CTRL, ctrl | regs::field::CTRL::LOOPBACK.mask());

  // ---- the listener on the remote address, the two contexts
  ListenerConfig lc;
  lc.index = *lst;
  lc.loc_ip = kRemIp;
  lc.loc_port = kRemPort;
  lc.fin_policy = regs::FinPolicy::SIW_SAFE;
  lc.auto_reject = regs::AutoReject::OFF;
  lc.loc_mac = kRemMac;
  if (auto res = dev.cqp_create_listener(lc); !res) {
    return stage_error(res.error(), "CREATE_LISTENER");
  }
  restore.listener(*lst);
  restore.context(rep.cm_id_a);
  if (auto res = dev.cqp_write_context(rep.cm_id_a, ctx_a); !res) {
    return stage_error(res.error(), "WRITE_CM_CONTEXT A");
  }
  restore.context(rep.cm_id_b);
  if (auto res = dev.cqp_write_context(rep.cm_id_b, ctx_b); !res) {
    return stage_error(res.error(), "WRITE_CM_CONTEXT B");
  }

  // ---- the two rejects
  RejectWqe wa;
  wa.cm_id = rep.cm_id_a;
  wa.pd = pd_a;
  wa.push = push_a;
  wa.fin_policy = regs::FinPolicy::SIW_SAFE;
  wa.wr_id = 0x5E1F7E57A;
  RejectWqe wb;
  wb.cm_id = rep.cm_id_b;
  wb.pd = pd_b;
  wb.allow_inline = false;
  wb.fin_policy = regs::FinPolicy::IRDMA;
  wb.wr_id = 0x5E1F7E57B;
  auto idx_a = dev.post_reject(wa);
  if (!idx_a) return stage_error(idx_a.error(), "post reject A");
  auto idx_b = dev.post_reject(wb);
  if (!idx_b) return stage_error(idx_b.error(), "post reject B");
  auto cqe_a = dev.wait_completion_for(*idx_a, opts.timeout);
  if (!cqe_a) return stage_error(cqe_a.error(), "completion of reject A");
  auto cqe_b = dev.wait_completion_for(*idx_b, opts.timeout);
  if (!cqe_b) return stage_error(cqe_b.error(), "completion of reject B");

  // ---- the looped frames: wait for all four to come back, then watch for strays
  auto delta = [&](uint32_t off) { return hal.read32(off) - stat_of(before, off); };
  hal::Deadline dl(hal, opts.timeout);
  while ((delta(r::STAT_RX_FRAMES) < 4 || delta(r::STAT_TX_FRAMES) < 4) && !dl.passed()) {
    dl.pause(dev.config().poll_interval);
  }
  hal.wait_cycles(opts.settle_cycles);

  auto node_a = dev.cqp_read_node(rep.cm_id_a);
  if (!node_a) return stage_error(node_a.error(), "READ_CM_CONTEXT A");
  auto node_b = dev.cqp_read_node(rep.cm_id_b);
  if (!node_b) return stage_error(node_b.error(), "READ_CM_CONTEXT B");
  const auto after = dev.read_stats();
  const uint32_t status = hal.read32(r::STATUS);
  const uint32_t conns = dev.cm_conns();

  // ---- compare
  Checker ck(rep.checks);
  auto cqe_checks = [&](const char* n, const Completion& c, const CmContext& ctx, uint32_t len,
                        bool pushed) {
    ck.text(fmt::format("CQE {} status", n), "ok", c.status(),
            "the hardware refused the reject (see docs/errors.md)");
    ck.eq(fmt::format("CQE {} FRAME_LEN", n), len, uint32_t{c.frame_len},
          "the reject frame length differs from docs/reject-frame.md");
    ck.hex(fmt::format("CQE {} TCP_SEQ", n), ctx.snd_nxt, c.tcp_seq,
           "the reject must go out at the context's SND_NXT");
    ck.eq(fmt::format("CQE {} PSHDROP", n), false, c.pshdrop,
          pushed ? "the idle engine must take the pushed WQE" : "no push was requested");
  };
  cqe_checks("A", *cqe_a, ctx_a, rej_a, push_a);
  cqe_checks("B", *cqe_b, ctx_b, rej_b, false);

  auto node_checks = [&](const char* n, const CmNodeStatus& s, const CmContext& ctx, size_t pd_len,
                         bool fin, regs::CmState want) {
    const uint32_t adv = kMpaHdr + ctx.wire_pd_len(pd_len) + (fin ? 1u : 0u);
    ck.text(fmt::format("context {} STATE", n), regs::name(want), regs::name(s.state),
            "the CM engine's reject of a host-written context (docs/cm-state-machine.md)");
    ck.eq(fmt::format("context {} REJECTED", n), true, s.ctx.rejected,
          "set once the reject is out");
    ck.hex(fmt::format("context {} SND_NXT", n), ctx.snd_nxt + adv, s.ctx.snd_nxt,
           "SND_NXT advances by 20 + PD_Length (+1 for a FIN)");
    ck.eq(fmt::format("context {} IP_ID", n), static_cast<uint16_t>(ctx.ip_id + 1), s.ctx.ip_id,
          "the reject consumes one IPv4 ID");
    ck.eq(fmt::format("context {} REJ_PD_LEN", n), static_cast<unsigned>(pd_len), s.rej_pd_len,
          "the PD length of the reject");
  };
  node_checks("A", *node_a, ctx_a, kPdLenA, false, regs::CmState::REJ_SENT);
  node_checks("B", *node_b, ctx_b, kPdLenB, true, regs::CmState::FIN_WAIT1);

  const auto want = expected_counters(rej_a + rst_a + rej_b + rst_b, push_a, kCqpOps);
  for (const auto& s : after) {
    auto it = want.find(s.offset);
    if (it == want.end()) continue;  // STAT_LAST_LATENCY is a value, not a counter
    ck.eq(fmt::format("{} delta", s.name), it->second.delta, s.value - stat_of(before, s.offset),
          it->second.hint);
  }
  ck.eq("CM_CONNS", 0u, conns, "host-written contexts and stray segments create no connection");
  ck.eq("STATUS.DMA_WR_ERR", 0u, regs::field::STATUS::DMA_WR_ERR.get(status),
        "a posted DMA write got an error response");
  ck.eq("STATUS.AEQ_FULL", 0u, regs::field::STATUS::AEQ_FULL.get(status),
        "no event was expected at all");

  // ---- undo, and prove the loop is off again
  const auto undone = restore.run();
  const uint32_t ctrl_end = hal.read32(r::CTRL);
  rep.cycles = hal.now_cycles() - t0;
  rep.loopback_restored = regs::field::CTRL::LOOPBACK.get(ctrl_end) == 0;
  ck.text("cleanup (contexts invalidated, listener destroyed)", "ok",
          undone ? std::string("ok") : undone.error().message, "a control command failed");
  ck.hex("CTRL after the test", ctrl & ~regs::field::CTRL::LOOPBACK.mask(), ctrl_end,
         "CTRL must be restored with LOOPBACK = 0");
  return rep;
}

std::string format_selftest_report(const SelftestReport& r) {
  std::string s = fmt::format(
      "loopback self-test on the {} backend: {}-bit stream, {} cm_ids, listener {} borrowed, "
      "cm_ids {} and {}\n",
      r.backend, r.caps.data_bytes * 8, r.caps.ctx_depth, r.listener, r.cm_id_a, r.cm_id_b);
  s += "frames expected on the looped port, in order:\n";
  for (const auto& f : r.frames) s += fmt::format("  {:4} B  {}\n", f.bytes, f.what);
  size_t width = 0;
  for (const auto& c : r.checks) width = std::max(width, c.name.size());
  for (const auto& c : r.checks) {
    s += fmt::format("  {:<{}}  expected {:>12}  got {:>12}  {}\n", c.name, width, c.expected,
                     c.actual, c.ok ? "ok" : "FAIL");
    if (!c.ok && !c.hint.empty()) s += fmt::format("  {:<{}}  -> {}\n", "", width, c.hint);
  }
  const size_t failed = static_cast<size_t>(
      std::count_if(r.checks.begin(), r.checks.end(), [](const auto& c) { return !c.ok; }));
  s += fmt::format("{} checks, {} failed, {} core cycles; loopback {}\n", r.checks.size(), failed,
                   r.cycles, r.loopback_restored ? "off again" : "STILL ON");
  s += r.passed() ? "self-test: PASS\n" : "self-test: FAIL\n";
  return s;
}

Result<ClockMeasurement> measure_core_clock(hal::Device& hal, std::chrono::nanoseconds window) {
  if (window <= std::chrono::nanoseconds::zero()) {
    return make_error(Errc::kInvalidArgument, "clock measurement: the window must be positive");
  }
  const uint64_t c0 = hal.now_cycles();
  const std::chrono::nanoseconds h0 = hal.host_now();
  hal.wait_for(window);
  const uint64_t c1 = hal.now_cycles();
  const std::chrono::nanoseconds h1 = hal.host_now();
  if (c1 <= c0 || h1 <= h0) {
    return make_error(Errc::kHardware,
                      fmt::format("clock measurement: the cycle counter went from {} to {} in "
                                  "{} ns of host time (core clock stopped or no device)",
                                  c0, c1, (h1 - h0).count()));
  }
  ClockMeasurement m;
  m.cycles = c1 - c0;
  m.host = h1 - h0;
  m.mhz = static_cast<double>(m.cycles) * 1e3 / static_cast<double>(m.host.count());
  return m;
}

std::optional<std::string> clock_mismatch(double measured_mhz, double expected_mhz,
                                          double tolerance) {
  if (!(expected_mhz > 0)) return std::nullopt;
  const double rel = (measured_mhz - expected_mhz) / expected_mhz;
  if (rel <= tolerance && rel >= -tolerance) return std::nullopt;
  return fmt::format(
      "the core clock measures {:.3f} MHz, {:+.1f} % off the {:.3f} MHz assumed "
      "(timers, the DMA watchdog and latency figures in ns are off by as much): "
      "give --clock-mhz, or check the xclbin's kernel_frequency",
      measured_mhz, rel * 100, expected_mhz);
}

}  // namespace bouncer
