// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// The scenario library of the system tests (scenario.hpp has what each part is for).
#include "scenario.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <set>
#include <variant>

#include "golden/tshark.hpp"

namespace systest {

// ------------------------------------------------------------------ failures

namespace {

FailureSink& failure_sink() {
  static FailureSink sink;
  return sink;
}

std::string show(bool v) { return v ? "true" : "false"; }
std::string show(uint8_t v) { return std::to_string(unsigned{v}); }
std::string show(uint16_t v) { return std::to_string(v); }
std::string show(int v) { return std::to_string(v); }
std::string show(unsigned v) { return std::to_string(v); }
std::string show(unsigned long v) { return std::to_string(v); }
std::string show(const std::vector<uint8_t>& v) {
  return std::to_string(v.size()) + " bytes " + hex(v);
}
std::string show(const std::optional<uint32_t>& v) {
  if (!v) return "nullopt";
  char b[16];
  std::snprintf(b, sizeof b, "0x%08x", *v);
  return b;
}
std::string show(peer::AppEvent e) { return peer::to_string(e); }
std::string show(const bouncer::Tuple& t) {
  return "{local " + ip_str(t.local_ip) + ":" + std::to_string(t.local_port) + ", remote " +
         ip_str(t.remote_ip) + ":" + std::to_string(t.remote_port) + "}";
}

// Collects failed checks with the condition as written and the values compared. A failed
// require() is fatal: its caller returns the list right away.
class Checker {
 public:
  explicit Checker(std::string where) : where_(std::move(where)) {}

  bool expect(bool ok, const char* cond, const std::string& why = {}) {
    if (!ok) add(std::string("Expected: ") + cond + why_str(why), false);
    return ok;
  }
  bool require(bool ok, const char* cond, const std::string& why = {}) {
    if (!ok) add(std::string("Required: ") + cond + why_str(why), true);
    return ok;
  }
  template <class A, class B>
  bool eq(const A& a, const B& b, const char* ea, const char* eb, const std::string& why = {}) {
    const bool ok = a == b;
    if (!ok) {
      add(std::string("Expected equality of ") + ea + " (" + show(a) + ") and " + eb + " (" +
              show(b) + ")" + why_str(why),
          false);
    }
    return ok;
  }
  Failures take() { return std::move(list_); }

 private:
  static std::string why_str(const std::string& why) { return why.empty() ? "" : "\n  " + why; }
  void add(std::string m, bool fatal) { list_.push_back({where_ + ": " + m, fatal}); }
  std::string where_;
  Failures list_;
};

}  // namespace

void set_failure_sink(FailureSink sink) { failure_sink() = std::move(sink); }

void report_failure(const std::string& message) {
  if (failure_sink()) {
    failure_sink()(message);
  } else {
    std::fprintf(stderr, "systest failure: %s\n", message.c_str());
  }
}

// ------------------------------------------------------------------ settings, helpers

bouncer::TimerConfig test_timers(uint8_t rtx_max) {
  bouncer::TimerConfig t;
  t.tick_cycles = kTick;
  t.rto_init = kRtoTicks;
  t.rto_max = 8 * kRtoTicks;
  t.rtx_max = rtx_max;
  t.mpa_timeout = 400'000 / kTick;
  t.fin_timeout = 600'000 / kTick;
  t.time_wait = kTimeWaitTicks;
  return t;
}

bouncer::TcpConfig test_tcp() {
  bouncer::TcpConfig t;
  t.mss = 1400;
  t.wscale = 5;
  t.window = 0x7000;
  return t;
}

bouncer::DeviceConfig device_config(uint8_t rtx_max) {
  bouncer::DeviceConfig dc;
  dc.isn_key = kIsnKey;
  dc.hash_key = kHashKey;
  dc.timers = test_timers(rtx_max);
  dc.tcp = test_tcp();
  return dc;
}

peer::InitiatorConfig peer_config(unsigned i, uint8_t rev, bool enhanced, std::vector<uint8_t> pd,
                                  uint16_t port, std::optional<peer::Personality> kernel) {
  peer::InitiatorConfig p;
  if (kernel) {
    p.set_kernel(*kernel, static_cast<uint16_t>(16 + i % 8), static_cast<uint16_t>(8 + i % 4));
  }
  p.mac = {0x02, 0x00, 0x00, 0x01, static_cast<uint8_t>(i >> 8), static_cast<uint8_t>(i)};
  p.peer_mac = kLocalMac;
  p.ip = 0x0A000000u | ((1 + i / 250) << 8) | (2 + i % 250);
  p.peer_ip = kLocalIp;
  p.port = static_cast<uint16_t>(40000 + i);
  p.peer_port = port;
  p.isn = 0x1000'0000u + i * 0x0101'0101u;
  p.ip_id = static_cast<uint16_t>(0x2000 + 16 * i);
  p.mpa_rev = rev;
  p.enhanced = rev == 2 && enhanced;
  if (!kernel) p.ird_ord = ird_ord_word(16 + i % 8, 8 + i % 4);
  p.private_data = std::move(pd);
  p.rto_cycles = 3 * kRto;  // slower than ours: the retransmissions seen are Bouncer's
  p.max_retransmits = 8;
  p.time_wait_cycles = 8'000;
  p.reply_timeout_cycles = 6'000'000;
  return p;
}

std::vector<uint8_t> text_pd(const std::string& base, size_t len) {
  std::vector<uint8_t> pd(len);
  for (size_t k = 0; k < len; ++k) pd[k] = static_cast<uint8_t>(base[k % base.size()]);
  return pd;
}

std::vector<std::byte> to_bytes(std::span<const uint8_t> v) {
  std::vector<std::byte> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = std::byte{v[i]};
  return out;
}

std::vector<uint8_t> to_u8(std::span<const std::byte> v) {
  std::vector<uint8_t> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = std::to_integer<uint8_t>(v[i]);
  return out;
}

std::string ip_str(uint32_t ip) {
  char b[24];
  std::snprintf(b, sizeof b, "%u.%u.%u.%u", ip >> 24, (ip >> 16) & 0xFF, (ip >> 8) & 0xFF,
                ip & 0xFF);
  return b;
}

std::string hex(std::span<const uint8_t> v, size_t max) {
  std::string s;
  char b[4];
  for (size_t i = 0; i < v.size() && i < max; ++i) {
    std::snprintf(b, sizeof b, "%02x", v[i]);
    s += b;
  }
  if (v.size() > max) s += "...";
  return s;
}

std::string flag_str(uint8_t f) {
  std::string s;
  if (f & kSyn) s += 'S';
  if (f & kFin) s += 'F';
  if (f & kRst) s += 'R';
  if (f & kPsh) s += 'P';
  if (f & kAck) s += '.';
  return s.empty() ? "none" : s;
}

std::optional<Seg> decode(std::span<const uint8_t> f, std::string* why) {
  auto d = golden::decode_segment(f, why);
  if (!d) return std::nullopt;
  return Seg{std::move(*d)};
}

std::string describe(const Seg& s) {
  char b[200];
  std::snprintf(b, sizeof b, "%s:%u > %s:%u [%s] seq %08x ack %08x win %u len %zu id %04x",
                ip_str(s.src_ip).c_str(), s.sport, ip_str(s.dst_ip).c_str(), s.dport,
                flag_str(s.flags).c_str(), s.seq, s.ack, s.window, s.payload.size(), s.ip_id);
  std::string r = b;
  if (s.mpa_reply()) r += " MPA-reply";
  if (s.mpa_request()) r += " MPA-request";
  if (!s.ip_csum_ok || !s.tcp_csum_ok) r += " BAD-CHECKSUM";
  return r;
}

std::vector<WireSeg> transcript(const sim::Platform& plat, uint32_t rem_ip, uint16_t rem_port) {
  std::vector<WireSeg> out;
  auto add = [&](const std::vector<sim::TxFrame>& frames, bool rx) {
    for (size_t i = 0; i < frames.size(); ++i) {
      auto s = decode(frames[i].bytes);
      if (!s) continue;
      const bool mine = rx ? (s->src_ip == rem_ip && s->sport == rem_port)
                           : (s->dst_ip == rem_ip && s->dport == rem_port);
      if (!mine) continue;
      out.push_back(
          {rx, frames[i].first_cycle, frames[i].last_cycle, i, std::move(*s), frames[i].bytes});
    }
  };
  add(plat.rx_frames(), true);
  add(plat.tx_frames(), false);
  std::stable_sort(out.begin(), out.end(), [](const WireSeg& a, const WireSeg& b) {
    if (a.first != b.first) return a.first < b.first;
    return a.to_bouncer && !b.to_bouncer;
  });
  return out;
}

std::string dump(const std::vector<WireSeg>& t) {
  std::string s;
  for (const auto& w : t) {
    char b[64];
    std::snprintf(b, sizeof b, "  %9" PRIu64 " %s ", w.first, w.to_bouncer ? "->B" : "B->");
    s += b + describe(w.seg) + "\n";
  }
  return s;
}

std::vector<const WireSeg*> tx_only(const std::vector<WireSeg>& t) {
  std::vector<const WireSeg*> v;
  for (const auto& w : t) {
    if (!w.to_bouncer) v.push_back(&w);
  }
  return v;
}

// ------------------------------------------------------------------ expected frames

uint16_t Expect::wnd_field() const {
  if (!peer_ws) return tcp.window;
  return static_cast<uint16_t>((uint32_t{tcp.window} + (1u << tcp.wscale) - 1) >> tcp.wscale);
}

golden::Mac Expect::gmac(const std::array<uint8_t, 6>& m) const {
  golden::Mac g;
  g.b = m;
  return g;
}

namespace {
// The connection's addressing, from Bouncer's side, as both golden builders take it:
// Ethernet, VLAN tag, IPv4 (TOS, TTL, ID) and the TCP ports.
template <class Params>
void address(const Expect& ex, Params& p, uint16_t ip_id) {
  p.rem_mac = ex.gmac(ex.peer.mac);
  p.loc_mac = ex.gmac(ex.loc_mac);
  p.vlan_en = ex.vlan.has_value();
  p.vlan_tci = ex.vlan.value_or(0);
  p.loc_ip = ex.peer.peer_ip;
  p.rem_ip = ex.peer.ip;
  p.tos = ex.tos;
  p.ttl = ex.ttl;
  p.ip_id = ip_id;
  p.loc_port = ex.peer.peer_port;
  p.rem_port = ex.peer.port;
}
}  // namespace

std::vector<uint8_t> Expect::ctrl(golden::TcpCtrlKind kind, uint32_t seq, uint32_t ack,
                                  uint16_t ip_id) const {
  golden::TcpCtrlParams p;
  p.kind = kind;
  address(*this, p, ip_id);
  p.seq = seq;
  p.ack = ack;
  p.window = kind == golden::TcpCtrlKind::kSynAck ? tcp.window : wnd_field();
  p.mss = tcp.mss;
  p.wscale = tcp.wscale;
  p.ws = peer_ws;
  return golden::build_tcp_ctrl_frame(p);
}
std::vector<uint8_t> Expect::synack() const {
  return ctrl(golden::TcpCtrlKind::kSynAck, iss, peer.isn + 1, ip_id0);
}
golden::RejectParams Expect::reject_params(std::span<const std::byte> pd, bool fin,
                                           std::optional<uint32_t> ird_ord_override) const {
  golden::RejectParams p;
  address(*this, p, static_cast<uint16_t>(ip_id0 + 1));
  p.snd_nxt = iss + 1;
  p.rcv_nxt = rcv_after_request();
  p.rcv_wnd = wnd_field();
  p.req_rev = peer.mpa_rev;
  p.req_flags = static_cast<uint8_t>((peer.markers ? 0x80 : 0) | (peer.crc ? 0x40 : 0) |
                                     (peer.enhanced && peer.mpa_rev == 2 ? 0x10 : 0));
  p.req_ird_ord = peer.ird_ord;
  p.ird_ord_override = ird_ord_override;
  p.fin = fin;
  p.pd = to_u8(pd);
  return p;
}

uint32_t request_len(const peer::InitiatorConfig& c) {
  return static_cast<uint32_t>(peer::Initiator(c).request_bytes().size());
}

bool isn_plausible(uint32_t iss, const peer::InitiatorConfig& p, uint64_t lo, uint64_t hi) {
  golden::IsnKey k;
  k.lo = uint64_t{kIsnKey[1]} << 32 | kIsnKey[0];
  k.hi = uint64_t{kIsnKey[3]} << 32 | kIsnKey[2];
  golden::IsnTuple t{p.peer_ip, p.ip, p.peer_port, p.port};
  const uint32_t f0 = golden::isn_hash(k, t, 0);
  const uint64_t d = static_cast<uint32_t>(iss - f0);
  return d >= (lo >> 4) && d <= (hi >> 4);
}

std::vector<uint8_t> build_peer_segment(const PeerFrame& pf, uint8_t flags, uint32_t seq,
                                        uint32_t ack, std::span<const uint8_t> payload,
                                        bool syn_options) {
  golden::SegmentSpec s;
  s.dst_mac = pf.dst_mac;
  s.src_mac = pf.src_mac;
  s.ip_id = pf.ip_id;
  s.ttl = pf.ttl;
  s.src_ip = pf.src_ip;
  s.dst_ip = pf.dst_ip;
  s.sport = pf.sport;
  s.dport = pf.dport;
  s.seq = seq;
  s.ack = ack;
  s.flags = flags;
  s.window = pf.window;
  if (syn_options) s.tcp_opts = {2, 4, 0x05, 0xb4, 1, 3, 3, 7};  // MSS 1460, NOP, WS 7
  s.payload.assign(payload.begin(), payload.end());
  return golden::build_segment(s);
}

std::vector<uint8_t> mpa_request_payload(uint8_t rev, bool enhanced, uint32_t ird_ord,
                                         std::span<const uint8_t> pd) {
  std::vector<uint8_t> m(16);
  std::memcpy(m.data(), "MPA ID Req Frame", 16);
  const bool enh = rev == 2 && enhanced;
  m.push_back(static_cast<uint8_t>(0x40 | (enh ? 0x10 : 0)));
  m.push_back(rev);
  const size_t pdl = pd.size() + (enh ? 4 : 0);
  m.push_back(static_cast<uint8_t>(pdl >> 8));
  m.push_back(static_cast<uint8_t>(pdl));
  if (enh) {
    for (int sh = 24; sh >= 0; sh -= 8) m.push_back(static_cast<uint8_t>(ird_ord >> sh));
  }
  m.insert(m.end(), pd.begin(), pd.end());
  return m;
}

AppWant app_for_reject(const peer::InitiatorConfig& own, std::span<const uint8_t> pd,
                       bool fin_in_reject, uint32_t reply_word) {
  using E = peer::AppEvent;
  const bool rev2 = own.mpa_rev == 2;
  const bool enh = rev2 && own.enhanced;
  const size_t pd_length = pd.size() + (enh ? 4 : 0);
  auto first = [](std::vector<uint8_t> v, size_t n) {
    v.resize(std::min(n, v.size()));
    return v;
  };
  const std::vector<uint8_t> ulp(pd.begin(), pd.end());
  switch (own.personality) {
    case peer::Personality::kSiw: {
      // FIN with the reply: PEER_CLOSE before the read (no PD). siw_recv_mpa_rr: PD_Length
      // <= 256, else CONNECT_REPLY(-EINVAL) with a NULL (+ 4) pointer. siw_cm_upcall:
      // (u8)PD_Length, 4 less when the request was enhanced.
      if (fin_in_reject) return {E::kRejected, -104, {}};
      if (pd_length > 256) {
        const size_t len = ((pd_length & 0xFF) - (enh ? 4 : 0)) & 0xFF;
        return {E::kConnectError, -22, {}, len != 0};
      }
      if (pd_length == 0) return {E::kRejected, -104, {}};
      const size_t len = ((pd_length & 0xFF) - (enh ? 4 : 0)) & 0xFF;
      return {E::kRejected, -104, first(ulp, len)};
    }
    case peer::Personality::kIrdma: {
      // irdma_parse_mpa: a rev-2 reply's bytes 20..23 are the IRD/ORD word (the first PD
      // bytes when Bouncer sent none); it must pass irdma_negotiate_mpa_v2_ird_ord, else RST
      // and our own PD with -ECONNRESET. Then (u8)PD_Length bytes from offset 24 (rev 2) or
      // 20, the frame's bytes where there are any and junk past its end.
      std::vector<uint8_t> frame(20, 0);
      if (enh) {
        for (int sh = 24; sh >= 0; sh -= 8) frame.push_back(static_cast<uint8_t>(reply_word >> sh));
      }
      frame.insert(frame.end(), pd.begin(), pd.end());
      auto at = [&](size_t i) { return i < frame.size() ? frame[i] : peer::kAppPdJunk; };
      if (rev2) {
        const uint16_t ci = static_cast<uint16_t>(at(20) << 8 | at(21));
        const uint16_t co = static_cast<uint16_t>(at(22) << 8 | at(23));
        const uint16_t ird = ci & 0x3FFF, ord = co & 0x3FFF;
        const uint16_t own_ird = static_cast<uint16_t>((own.ird_ord >> 16) & 0x3FFF);
        bool ok = (ci & 0x8000) != 0 && (co & 0xC000) != 0;
        if (ok && ird != 0x3FFF && ord != 0x3FFF) {
          ok = !(ird == 0 && (co & 0x4000) != 0) && own_ird >= ord;
        }
        if (!ok)
          return {E::kRejected, -104, first(own.private_data, own.private_data.size() & 0xFF)};
      }
      std::vector<uint8_t> seen(pd_length & 0xFF);
      for (size_t i = 0; i < seen.size(); ++i) seen[i] = at((rev2 ? 24 : 20) + i);
      return {E::kRejected, -111, seen};
    }
    case peer::Personality::kCxgb4: {
      // process_mpa_reply: at most 20 + 256 bytes (one segment: -EINVAL), (u8)plen; a rev-2
      // attempt hands out 4 bytes less from mpa_pkt + 24, where the word would be or not.
      // mpa_pkt held our own request PD at + 20 (c4iw_connect) before the reply came.
      if (pd_length > 256) return {E::kConnectError, -22, {}};
      std::vector<uint8_t> buf(276, 0);
      const size_t own_len = std::min<size_t>(own.private_data.size() & 0xFF, 256);
      std::copy_n(own.private_data.begin(), own_len, buf.begin() + 20);
      size_t o = 20;
      if (enh) {
        for (int sh = 24; sh >= 0; sh -= 8) buf[o++] = static_cast<uint8_t>(reply_word >> sh);
      }
      std::copy(pd.begin(), pd.end(), buf.begin() + static_cast<std::ptrdiff_t>(o));
      const size_t len = ((pd_length & 0xFF) - (rev2 ? 4 : 0)) & 0xFF;
      const size_t from = rev2 ? 24 : 20;
      std::vector<uint8_t> seen(len);
      for (size_t i = 0; i < len; ++i) {
        seen[i] = from + i < buf.size() ? buf[from + i] : peer::kAppPdJunk;
      }
      return {E::kRejected, -111, seen};
    }
  }
  return {};
}

bool delivered_intact(const AppWant& w, std::span<const uint8_t> pd) {
  return w.ev == peer::AppEvent::kRejected && !w.kernel_fault && w.pd.size() >= pd.size() &&
         std::equal(pd.begin(), pd.end(), w.pd.begin());
}

bool peer_resets_after_reject(peer::Personality p, R::FinPolicy policy) {
  return p == peer::Personality::kCxgb4 ||
         (p == peer::Personality::kSiw && policy == R::FinPolicy::IRDMA);
}

R::AeqEvent expected_terminal(peer::Personality p, R::FinPolicy policy) {
  if (policy == R::FinPolicy::ABORT) return R::AeqEvent::CLOSED;
  return peer_resets_after_reject(p, policy) ? R::AeqEvent::RESET : R::AeqEvent::CLOSED;
}

std::string stats_line(Device& d) {
  std::string s;
  for (const auto& v : d.read_stats()) {
    if (v.value == 0) continue;
    s += std::string(v.name) + "=" + std::to_string(v.value) + " ";
  }
  return s;
}

// ------------------------------------------------------------------ the host program

Failures Scenario::check_clean_end() {
  Checker ck("clean end");
  ck.eq(dev_.cm_conns(), 0u, "dev.cm_conns()", "0u", "CM_CONNS: the connection table is not empty");
  const auto s = cm_.stats();
  ck.eq(s.nodes_held, 0u, "s.nodes_held", "0u");
  ck.eq(s.nodes_awaiting_terminal, 0u, "s.nodes_awaiting_terminal", "0u");
  ck.eq(s.unexpected_events, 0u, "s.unexpected_events", "0u");
  ck.eq(s.missing_terminal, 0u, "s.missing_terminal", "0u");
  ck.eq(s.bad_pd, 0u, "s.bad_pd", "0u");
  ck.eq(s.cleanup_rejects, 0u, "s.cleanup_rejects", "0u");
  ck.expect(unknown.empty(), "unknown.empty()",
            std::to_string(unknown.size()) + " events for no peer of this test");
  ck.expect(stray_terminals.empty(), "stray_terminals.empty()",
            std::to_string(stray_terminals.size()) + " terminal events for cm_ids of no peer");
  ck.eq(stray_completions, 0u, "stray_completions", "0u");
  return ck.take();
}

Failures Scenario::check_rejected_as_planned(const Conn& c) {
  const auto& o = plat_.peer(c.peer).outcome();
  const std::string who = ip_str(c.cfg.ip) + ":" + std::to_string(c.cfg.port);
  Checker ck("rejected as planned");
  ck.expect(o.rejected, "o.rejected", who + " " + peer::to_string(o.state) + " " + o.error);
  ck.expect(!o.accepted, "!o.accepted", who);
  ck.eq(o.reject_pd, to_u8(c.reject_pd), "o.reject_pd", "to_u8(c.reject_pd)", who);
  ck.eq(o.reply_rev, c.cfg.mpa_rev, "o.reply_rev", "c.cfg.mpa_rev", who);
  const bool enh = c.cfg.mpa_rev == 2 && c.cfg.enhanced;
  ck.eq(o.reply_pd_length, c.reject_pd.size() + (enh ? 4 : 0), "o.reply_pd_length",
        "c.reject_pd.size() + (enh ? 4 : 0)", who);
  ck.eq(o.reply_flags & peer::kMpaFlagReject, peer::kMpaFlagReject,
        "o.reply_flags & peer::kMpaFlagReject", "peer::kMpaFlagReject", who);
  if (enh) {
    if (!ck.require(o.reply_ird_ord.has_value(), "o.reply_ird_ord.has_value()", who)) {
      return ck.take();
    }
    const uint32_t want =
        c.opts.ird_ord ? *c.opts.ird_ord : golden::default_reply_ird_ord(c.cfg.ird_ord);
    ck.eq(o.reply_ird_ord, std::optional<uint32_t>(want), "*o.reply_ird_ord", "want", who);
  } else {
    ck.expect(!o.reply_ird_ord.has_value(), "!o.reply_ird_ord.has_value()", who);
  }
  Failures f = ck.take();
  for (auto& x : check_app_got_planned(c)) f.push_back(std::move(x));
  return f;
}

Failures Scenario::check_app_got_planned(const Conn& c) {
  const auto& o = plat_.peer(c.peer).outcome();
  const std::string who = ip_str(c.cfg.ip) + ":" + std::to_string(c.cfg.port) + " (" +
                          peer::to_string(c.cfg.personality) + ")";
  const auto pd = to_u8(c.reject_pd);
  const AppWant w = app_for_reject(c.cfg, pd, o.reply_had_fin, o.reply_ird_ord.value_or(0));
  Checker ck("application got the planned reject");
  ck.eq(o.app_event, w.ev, "o.app_event", "w.ev", who);
  ck.eq(o.app_status, w.status, "o.app_status", "w.status", who);
  ck.eq(o.app_pd, w.pd, "o.app_pd", "w.pd", who);
  ck.eq(o.app_kernel_fault, w.kernel_fault, "o.app_kernel_fault", "w.kernel_fault", who);
  if (c.expect_lost) {
    ck.expect(!delivered_intact(w, pd), "!delivered_intact(w, pd)",
              who + ": expected to lose this reject");
  } else {
    ck.expect(delivered_intact(w, pd), "delivered_intact(w, pd)",
              who + " would not deliver this reject intact: " + peer::to_string(w.ev) + " " +
                  std::to_string(w.status) + ", " + std::to_string(w.pd.size()) + " of " +
                  std::to_string(pd.size()) + " bytes" + (w.kernel_fault ? ", kernel fault" : ""));
  }
  return ck.take();
}

Failures check_request_matches(const Conn& c) {
  Checker ck("request matches");
  if (!ck.eq(c.requests.size(), size_t{1}, "c.requests.size()", "1u",
             ip_str(c.cfg.ip) + ":" + std::to_string(c.cfg.port))) {
    Failures f = ck.take();
    f.back().fatal = true;
    return f;
  }
  const auto& r = c.requests[0];
  const bool enh = c.cfg.mpa_rev == 2 && c.cfg.enhanced;
  ck.eq(r.tuple, (bouncer::Tuple{c.cfg.peer_ip, c.cfg.peer_port, c.cfg.ip, c.cfg.port}), "r.tuple",
        "Tuple{peer_ip, peer_port, ip, port}");
  ck.eq(r.rev, c.cfg.mpa_rev, "r.rev", "c.cfg.mpa_rev");
  ck.eq(r.flags, (c.cfg.crc ? 0x40 : 0) | (c.cfg.markers ? 0x80 : 0) | (enh ? 0x10 : 0), "r.flags",
        "(crc ? 0x40 : 0) | (markers ? 0x80 : 0) | (enh ? 0x10 : 0)");
  ck.eq(r.enhanced(), enh, "r.enhanced()", "enh");
  if (enh) {
    ck.eq(r.ird_ord, std::optional<uint32_t>(c.cfg.ird_ord), "r.ird_ord",
          "std::optional<uint32_t>(c.cfg.ird_ord)");
  } else {
    ck.expect(!r.ird_ord.has_value(), "!r.ird_ord.has_value()");
  }
  ck.eq(to_u8(r.private_data), c.cfg.private_data, "to_u8(r.private_data)", "c.cfg.private_data");
  return ck.take();
}

Scenario::Scenario(sim::Platform& plat, bouncer::hal::Device& hal, Device& dev, Cm& cm)
    : plat_(plat), hal_(hal), dev_(dev), cm_(cm) {
  cm_.set_terminal_observer([this](uint32_t cm_id, R::AeqEvent code) {
    auto it = by_cm_id_.find(cm_id);
    if (it == by_cm_id_.end()) {
      stray_terminals.push_back({cm_id, code});
    } else {
      conns[it->second].terminals.push_back(code);
    }
  });
}
Scenario::~Scenario() { cm_.set_terminal_observer({}); }

size_t Scenario::add(peer::InitiatorConfig cfg, uint64_t start, std::vector<std::byte> pd,
                     RejectOptions opts) {
  Conn c;
  c.cfg = cfg;
  c.reject_pd = std::move(pd);
  c.opts = opts;
  // the driver refuses a reject whose PD_Length on the wire would exceed 255 unless told
  const bool enh = cfg.mpa_rev == 2 && cfg.enhanced;
  c.opts.unsafe_wire_pd = c.reject_pd.size() + (enh ? 4 : 0) > R::kWirePdSafeMax;
  c.peer = plat_.add_peer(cfg, start);
  by_tuple_[{cfg.ip, cfg.port}] = conns.size();
  conns.push_back(std::move(c));
  return conns.size() - 1;
}

void Scenario::handle(const bouncer::Event& e) {
  const uint64_t now = hal_.now_cycles();
  if (const auto* cr = std::get_if<bouncer::ConnectRequest>(&e)) {
    auto it = by_tuple_.find({cr->tuple.remote_ip, cr->tuple.remote_port});
    if (it == by_tuple_.end()) {
      unknown.push_back(e);
      (void)cm_.reject(cr->handle, {});
      return;
    }
    Conn& c = conns[it->second];
    by_cm_id_[cr->cm_id] = it->second;
    c.cm_id = cr->cm_id;
    c.handle = cr->handle;
    c.requests.push_back(*cr);
    c.event_cycle = now;
    if (c.hold) return;
    reject(c);
  } else if (const auto* pr = std::get_if<bouncer::PeerReset>(&e)) {
    auto it = by_cm_id_.find(pr->cm_id);
    if (it == by_cm_id_.end()) {
      unknown.push_back(e);
      return;
    }
    Conn& c = conns[it->second];
    c.resets.push_back(*pr);
    if (!c.hold && !c.completion && !c.reject_error) reject(c);
  } else if (const auto* me = std::get_if<bouncer::MpaError>(&e)) {
    auto it = by_tuple_.find({me->tuple.remote_ip, me->tuple.remote_port});
    if (it == by_tuple_.end()) {
      unknown.push_back(e);
      return;
    }
    conns[it->second].mpa_errors.push_back(*me);
    conns[it->second].cm_id = me->cm_id;
  } else if (const auto* rc = std::get_if<bouncer::RejectComplete>(&e)) {
    auto it = inflight_.find({rc->handle.cm_id, rc->handle.gen});
    if (it == inflight_.end()) {
      ++stray_completions;
      return;
    }
    Conn& c = conns[it->second];
    inflight_.erase(it);
    if (rc->completion.ok()) {
      c.completion = rc->completion;
    } else {
      c.reject_error = bouncer::completion_error(rc->completion);
    }
  }
}

void Scenario::reject(Conn& c) {
  if (pipelined) {
    for (;;) {
      auto r = cm_.post_reject(c.handle, c.reject_pd, c.opts);
      if (r) {
        inflight_[{c.handle.cm_id, c.handle.gen}] = static_cast<size_t>(&c - conns.data());
        break;
      }
      if (r.error().code != bouncer::Errc::kRingFull) {
        c.reject_error = r.error();
        return;
      }
      // The SQ is full: let completions come back (as events, handled after this one).
      hal_.wait_cycles(32);
      auto ev = cm_.poll_event();
      if (ev && *ev) deferred_.push_back(**ev);
    }
    c.posted_cycle = hal_.now_cycles();
    return;
  }
  auto r = cm_.reject(c.handle, c.reject_pd, c.opts);
  c.posted_cycle = hal_.now_cycles();
  if (r) {
    c.completion = *r;
  } else {
    c.reject_error = r.error();
  }
}

bool Scenario::pump(const std::function<bool()>& done, uint64_t max_cycles,
                    const std::function<void(const bouncer::Event&)>& on_event, uint64_t poll) {
  const uint64_t deadline = hal_.now_cycles() + max_cycles;
  for (;;) {
    if (!deferred_.empty()) {
      const bouncer::Event e = deferred_.front();
      deferred_.pop_front();
      if (on_event) {
        on_event(e);
      } else {
        handle(e);
      }
      continue;
    }
    auto ev = cm_.poll_event();
    if (!ev) {
      report_failure("poll_event: " + ev.error().message);
      return false;
    }
    if (*ev) {
      if (on_event) {
        on_event(**ev);
      } else {
        handle(**ev);
      }
      continue;
    }
    if (done()) return true;
    if (hal_.now_cycles() >= deadline) return false;
    hal_.wait_cycles(poll);
  }
}

bool Scenario::settled() {
  const auto s = cm_.stats();
  return plat_.peers_finished() && s.nodes_held == 0 && s.nodes_awaiting_terminal == 0 &&
         inflight_.empty() && dev_.cm_conns() == 0;
}

bool Scenario::settle(uint64_t max_cycles,
                      const std::function<void(const bouncer::Event&)>& on_event) {
  return pump([this] { return settled(); }, max_cycles, on_event);
}

std::string Scenario::status() {
  const auto s = cm_.stats();
  std::string r = "peers finished " + std::string(plat_.peers_finished() ? "yes" : "no") +
                  ", held " + std::to_string(s.nodes_held) + ", awaiting terminal " +
                  std::to_string(s.nodes_awaiting_terminal) + ", inflight " +
                  std::to_string(inflight_.size()) + ", CM_CONNS " +
                  std::to_string(dev_.cm_conns()) + "\n";
  for (const auto& c : conns) {
    const auto& o = plat_.peer(c.peer).outcome();
    if (plat_.peer(c.peer).finished() && (c.requests.empty() || c.completion)) continue;
    r += "  peer " + ip_str(c.cfg.ip) + ":" + std::to_string(c.cfg.port) + " " +
         peer::to_string(o.state) + (o.error.empty() ? "" : " (" + o.error + ")") + ", requests " +
         std::to_string(c.requests.size()) +
         (c.cm_id ? ", cm_id " + std::to_string(*c.cm_id) + " driver " +
                        bouncer::node_state_name(cm_.node_state(*c.cm_id))
                  : std::string()) +
         "\n";
  }
  return r;
}

std::string Scenario::problems(const Conn& c) {
  std::string r;
  const auto& o = plat_.peer(c.peer).outcome();
  const bool enh = c.cfg.mpa_rev == 2 && c.cfg.enhanced;
  if (c.requests.size() != 1) {
    r += " requests=" + std::to_string(c.requests.size());
  } else if (to_u8(c.requests[0].private_data) != c.cfg.private_data ||
             c.requests[0].rev != c.cfg.mpa_rev ||
             c.requests[0].ird_ord !=
                 (enh ? std::optional<uint32_t>(c.cfg.ird_ord) : std::optional<uint32_t>())) {
    r += " request-differs";
  }
  if (!o.rejected) r += " not-rejected";
  if (o.reject_pd != to_u8(c.reject_pd)) r += " wrong-reject-pd";
  const AppWant w =
      app_for_reject(c.cfg, to_u8(c.reject_pd), o.reply_had_fin, o.reply_ird_ord.value_or(0));
  if (o.app_event != w.ev || o.app_status != w.status || o.app_pd != w.pd) {
    r += std::string(" app-differs(") + peer::to_string(o.app_event) + ")";
  }
  if (delivered_intact(w, to_u8(c.reject_pd)) == c.expect_lost) {
    r += c.expect_lost ? " app-not-lost" : " app-not-intact";
  }
  if (enh) {
    const uint32_t want =
        c.opts.ird_ord ? *c.opts.ird_ord : golden::default_reply_ird_ord(c.cfg.ird_ord);
    if (o.reply_ird_ord != std::optional<uint32_t>(want)) r += " wrong-ird-ord";
  }
  if (c.terminals.size() != 1) r += " terminals=" + std::to_string(c.terminals.size());
  if (!r.empty()) {
    r = ip_str(c.cfg.ip) + ":" + std::to_string(c.cfg.port) + r + " (peer " +
        peer::to_string(o.state) + (o.error.empty() ? "" : ": " + o.error) + ")";
  }
  return r;
}

bouncer::ListenOptions listen_options(R::FinPolicy policy) {
  bouncer::ListenOptions lo;
  lo.fin_policy = policy;
  lo.local_mac = kLocalMac;
  lo.ttl = kTtl;
  lo.tos = kTos;
  return lo;
}

// ------------------------------------------------------------------ pcap + tshark

PcapCheck check_pcap_file(const std::string& path, const PcapWants& want, bool every) {
  PcapCheck out;
  Checker ck("pcap " + path);
  auto done = [&] {
    out.failures = ck.take();
    return out;
  };
  std::string err;
  auto pkts = golden::read_pcap(path, &err);
  if (!ck.require(pkts.has_value(), "golden::read_pcap(path)", err)) return done();
  size_t bad_csum = 0;
  for (const auto& p : *pkts) {
    auto s = decode(p);
    if (s && (!s->ip_csum_ok || !s->tcp_csum_ok)) ++bad_csum;
  }
  ck.eq(bad_csum, size_t{0}, "bad_csum", "0u", "frames with a bad checksum in " + path);
  if (!golden::tshark_available()) {
    out.tshark_missing = true;
    return done();
  }
  auto rep = golden::tshark_check_mpa(path);
  if (!ck.require(rep.ok, "rep.ok", rep.error)) return done();
  ck.eq(size_t{rep.frames}, pkts->size(), "rep.frames", "pkts->size()");
  ck.expect(rep.ip_checksum_bad.empty(), "rep.ip_checksum_bad.empty()", rep.summary());
  ck.expect(rep.tcp_checksum_bad.empty(), "rep.tcp_checksum_bad.empty()", rep.summary());
  // Malformed frames and error-level expert infos are judged on Bouncer's frames only: the
  // peers' frames include deliberately malformed MPA requests (fault knobs).
  auto from_bouncer = [&](uint32_t frame) {
    if (frame == 0 || frame > pkts->size()) return true;
    auto s = decode((*pkts)[frame - 1]);
    return !s || s->src_ip == kLocalIp;
  };
  for (uint32_t f : rep.malformed) {
    ck.expect(!from_bouncer(f), "!from_bouncer(f)",
              "frame " + std::to_string(f) + " (from Bouncer) is malformed\n" + rep.summary());
  }
  size_t warnings = 0;
  for (const auto& e : rep.experts) {
    const bool bad = e.severity >= 0x800000 || e.message.find("hecksum") != std::string::npos ||
                     e.message.find("alformed") != std::string::npos;
    if (bad && from_bouncer(e.frame)) {
      ck.expect(false, "no error-level expert info on Bouncer's frames",
                "frame " + std::to_string(e.frame) + " (from Bouncer): " + e.message);
    } else {
      ++warnings;
    }
  }
  std::set<std::pair<uint32_t, uint16_t>> seen;
  for (const auto& row : rep.replies) {
    const std::string fr = "frame " + std::to_string(row.frame);
    if (!ck.require(row.frame >= 1u, "row.frame >= 1", fr)) return done();
    if (!ck.require(row.frame <= pkts->size(), "row.frame <= pkts->size()", fr)) return done();
    auto s = decode((*pkts)[row.frame - 1]);
    if (!ck.require(s.has_value(), "decode(frame)", fr)) return done();
    const std::pair<uint32_t, uint16_t> key{s->dst_ip, s->dport};
    ck.expect(row.rej_flag, "row.rej_flag", fr);
    auto it = want.find(key);
    if (it == want.end()) {
      ck.expect(false, "a reply only to a connection in `want`",
                fr + ": a reply to " + ip_str(key.first) + ":" + std::to_string(key.second) +
                    ", which should get none");
      continue;
    }
    const size_t extra = it->second.enhanced ? 4 : 0;
    ck.eq(size_t{row.pd_length}, it->second.pd.size() + extra, "row.pd_length", "pd.size() + extra",
          fr);
    ck.eq(row.private_data.size(), it->second.pd.size() + extra, "row.private_data.size()",
          "pd.size() + extra", fr);
    if (row.private_data.size() == it->second.pd.size() + extra) {
      ck.expect(std::equal(it->second.pd.begin(), it->second.pd.end(),
                           row.private_data.begin() + static_cast<std::ptrdiff_t>(extra)),
                "the reply's private data is the planned PD", fr);
    }
    seen.insert(key);
  }
  if (every) {
    for (const auto& [key, w] : want) {
      ck.expect(seen.count(key) != 0, "seen.count(key)",
                "tshark dissected no reject to " + ip_str(key.first) + ":" +
                    std::to_string(key.second) + " in " + path);
    }
  }
  std::printf(
      "[ tshark   ] %s: %u frames, %zu MPA replies (rej_flag 1), %zu expert infos "
      "not about Bouncer's frames' form (TCP analysis, peer faults)\n",
      path.c_str(), rep.frames, rep.replies.size(), warnings);
  return done();
}

PcapWants pcap_wants(const Scenario& sc) {
  PcapWants w;
  for (const auto& c : sc.conns) {
    if (c.requests.empty() || !c.completion) continue;
    w[{c.cfg.ip, c.cfg.port}] = {to_u8(c.reject_pd), c.cfg.mpa_rev == 2 && c.cfg.enhanced};
  }
  return w;
}

}  // namespace systest
