// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// The simulated iWARP initiator: TCP (RFC 793 / 5961 subset, as Linux behaves) + MPA request,
// and the reply, RST, timeout and close rules of siw, irdma or cxgb4 with what rdma_cm hands
// the application. See include/bouncer/peer/initiator.hpp and README.md (each rule names the
// kernel function it comes from).
#include "bouncer/peer/initiator.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <utility>

namespace bouncer::peer {
namespace {

constexpr uint64_t kOff = std::numeric_limits<uint64_t>::max();
constexpr size_t kEthLen = 14;
constexpr size_t kVlanLen = 4;
constexpr size_t kIpLen = 20;
constexpr size_t kTcpLen = 20;
constexpr size_t kMinFrame = 60;           // Ethernet minimum without FCS
constexpr size_t kOooMax = 64;             // out-of-order segments kept for reassembly
constexpr uint16_t kDefaultPeerMss = 536;  // RFC 1122, when the SYN-ACK has no MSS option

// Sequence-number comparisons modulo 2^32.
bool seq_lt(uint32_t a, uint32_t b) { return static_cast<int32_t>(a - b) < 0; }
bool seq_le(uint32_t a, uint32_t b) { return static_cast<int32_t>(a - b) <= 0; }
bool seq_gt(uint32_t a, uint32_t b) { return seq_lt(b, a); }
bool seq_ge(uint32_t a, uint32_t b) { return seq_le(b, a); }

uint16_t get16(std::span<const uint8_t> b, size_t off) {
  return static_cast<uint16_t>(static_cast<unsigned>(b[off]) << 8 | b[off + 1]);
}
uint32_t get32(std::span<const uint8_t> b, size_t off) {
  return static_cast<uint32_t>(get16(b, off)) << 16 | get16(b, off + 2);
}
void set16(std::vector<uint8_t>& v, size_t off, uint16_t x) {
  v[off] = static_cast<uint8_t>(x >> 8);
  v[off + 1] = static_cast<uint8_t>(x & 0xFF);
}
void set32(std::vector<uint8_t>& v, size_t off, uint32_t x) {
  set16(v, off, static_cast<uint16_t>(x >> 16));
  set16(v, off + 2, static_cast<uint16_t>(x & 0xFFFF));
}
void append16(std::vector<uint8_t>& v, uint16_t x) {
  v.push_back(static_cast<uint8_t>(x >> 8));
  v.push_back(static_cast<uint8_t>(x & 0xFF));
}
void append32(std::vector<uint8_t>& v, uint32_t x) {
  append16(v, static_cast<uint16_t>(x >> 16));
  append16(v, static_cast<uint16_t>(x & 0xFFFF));
}

// RFC 1071 ones'-complement sum, 64-bit accumulator over big-endian 16-bit words (odd tail
// padded with zero), folded at the end. Not complemented.
uint64_t csum_add(uint64_t acc, std::span<const uint8_t> b) {
  size_t i = 0;
  for (; i + 1 < b.size(); i += 2) acc += get16(b, i);
  if (i < b.size()) acc += static_cast<uint64_t>(b[i]) << 8;
  return acc;
}
uint16_t csum_fold(uint64_t acc) {
  while ((acc >> 16) != 0) acc = (acc & 0xFFFF) + (acc >> 16);
  return static_cast<uint16_t>(acc);
}
// Sum of the TCP pseudo-header (IPv4 source, destination, protocol 6, TCP length).
uint64_t pseudo_sum(uint32_t src, uint32_t dst, size_t tcp_len) {
  return (src >> 16) + (src & 0xFFFF) + (dst >> 16) + (dst & 0xFFFF) + 6u + tcp_len;
}

}  // namespace

// A validated segment for our 4-tuple. `payload` points into the caller's frame.
struct Initiator::Rx {
  uint32_t seq = 0, ack = 0;
  uint8_t flags = 0;
  uint16_t window = 0;
  std::span<const uint8_t> payload;
  std::optional<uint16_t> mss;
  std::optional<uint8_t> wscale;
};

const char* to_string(State s) {
  switch (s) {
    case State::kClosed:
      return "CLOSED";
    case State::kSynSent:
      return "SYN_SENT";
    case State::kEstablished:
      return "ESTABLISHED";
    case State::kReplyReceived:
      return "REPLY_RECEIVED";
    case State::kFinWait1:
      return "FIN_WAIT1";
    case State::kFinWait2:
      return "FIN_WAIT2";
    case State::kClosing:
      return "CLOSING";
    case State::kTimeWait:
      return "TIME_WAIT";
    case State::kLastAck:
      return "LAST_ACK";
    case State::kDone:
      return "DONE";
    case State::kReset:
      return "RESET";
    case State::kAborted:
      return "ABORTED";
    case State::kFailed:
      return "FAILED";
  }
  return "?";
}

const char* to_string(Personality p) {
  switch (p) {
    case Personality::kSiw:
      return "siw";
    case Personality::kIrdma:
      return "irdma";
    case Personality::kCxgb4:
      return "cxgb4";
  }
  return "?";
}

const char* to_string(AppEvent e) {
  switch (e) {
    case AppEvent::kNone:
      return "none";
    case AppEvent::kEstablished:
      return "RDMA_CM_EVENT_ESTABLISHED";
    case AppEvent::kRejected:
      return "RDMA_CM_EVENT_REJECTED";
    case AppEvent::kConnectError:
      return "RDMA_CM_EVENT_CONNECT_ERROR";
    case AppEvent::kUnreachable:
      return "RDMA_CM_EVENT_UNREACHABLE";
    case AppEvent::kConnectFailed:
      return "rdma_connect() failed";
  }
  return "?";
}

void InitiatorConfig::set_kernel(Personality p, uint16_t ird, uint16_t ord) {
  personality = p;
  mpa_rev = 2;
  enhanced = true;
  markers = false;
  window = 0xFFFF;
  const uint32_t i14 = std::min<uint32_t>(ird, 0x3FFF);
  switch (p) {
    case Personality::kSiw:
      // siw_connect with mpa_version 2, peer_to_peer off, mpa_crc_required off: flags 0x10,
      // the application's IRD/ORD without P2P or RTR bits. Linux TCP: SYN with SACK and
      // timestamps, window 64240; tcp_syn_retries 6; MPAREQ_TIMEOUT 10 s.
      crc = false;
      ird_ord = uint32_t{ird} << 16 | ord;
      syn_options = SynOptions::kLinux;
      wscale = 7;
      window = 64240;
      max_retransmits = 6;
      reply_timeout_cycles = 10 * rto_cycles;
      fin_after_reject = true;
      break;
    case Personality::kIrdma:
      // irdma_build_mpa_v2 (MPA_KEY_REQUEST): CRC | 0x10; ctrl_ird = IRD | P2P, ctrl_ord = ORD
      // | WRITE | READ RTR (irdma_record_ird_ord: ORD 0 becomes 1 with READ_ZERO). SYN from
      // irdma_send_syn with rcv_wscale IRDMA_CM_DEFAULT_RCV_WND_SCALE 2; IRDMA_DEFAULT_RETRANS 8.
      crc = true;
      ird_ord = (0x8000u | i14) << 16 | (0xC000u | std::clamp<uint32_t>(ord, 1, 0x3FFF));
      syn_options = SynOptions::kIrdma;
      wscale = 2;
      max_retransmits = 8;
      reply_timeout_cycles = 0;
      break;
    case Personality::kCxgb4:
      // send_mpa_req with mpa_rev 2, crc_enabled 1, markers_enabled 0, peer2peer 1, p2p_type
      // READ_REQ: CRC | 0x10; ctrl_ird = IRD | P2P, ctrl_ord = ORD | READ RTR (c4iw_connect:
      // ORD 0 becomes 1). Window scale from rcv_win 256 KiB; ep_timeout_secs 60.
      crc = true;
      ird_ord = (0x8000u | i14) << 16 | (0x4000u | std::clamp<uint32_t>(ord, 1, 0x3FFF));
      syn_options = SynOptions::kMssNopWs;
      wscale = 3;
      reply_timeout_cycles = 60 * rto_cycles;
      fin_after_reject = false;
      break;
  }
}

Initiator::Initiator(InitiatorConfig cfg)
    : cfg_(std::move(cfg)),
      ip_id_(cfg_.ip_id),
      rev_(cfg_.mpa_rev),
      enh_(cfg_.mpa_rev == 2 && cfg_.enhanced),
      rto_deadline_(kOff),
      reply_deadline_(kOff),
      close_deadline_(kOff),
      tw_deadline_(kOff),
      fw2_deadline_(kOff),
      rto_cur_(cfg_.rto_cycles) {
  if (cfg_.rto_cycles == 0) throw std::invalid_argument("bouncer::peer: rto_cycles is 0");
  req_ = build_request(rev_, enh_, true);
}

std::vector<uint8_t> Initiator::build_request(uint8_t rev, bool enhanced, bool faults) const {
  using Fault = InitiatorConfig::Fault;
  const Fault fault = faults ? cfg_.fault : Fault::kNone;
  std::vector<uint8_t> pd = cfg_.private_data;
  size_t pd_length = pd.size() + (enhanced ? kMpaIrdOrdLen : 0);
  if (fault == Fault::kPdTooLong) {
    if (pd_length < kFaultPdLength) {
      pd.resize(pd.size() + (kFaultPdLength - pd_length), 0);
      pd_length = kFaultPdLength;
    }
    if (pd_length > 0xFFFF) throw std::invalid_argument("bouncer::peer: PD over 65535 bytes");
  } else if (pd_length > kMpaPdMax) {
    throw std::invalid_argument("bouncer::peer: request PD_Length " + std::to_string(pd_length) +
                                " > 512");
  }
  const std::string_view key = fault == Fault::kBadKey ? kMpaKeyBad : kMpaKeyRequest;
  std::vector<uint8_t> r(key.begin(), key.end());
  r.push_back(static_cast<uint8_t>((cfg_.markers ? kMpaFlagMarkers : 0) |
                                   (cfg_.crc ? kMpaFlagCrc : 0) |
                                   (enhanced ? kMpaFlagEnhanced : 0)));
  r.push_back(fault == Fault::kRev3 ? uint8_t{3} : rev);
  append16(r, static_cast<uint16_t>(pd_length));
  if (enhanced) append32(r, cfg_.ird_ord);
  r.insert(r.end(), pd.begin(), pd.end());
  return r;
}

std::vector<uint8_t> Initiator::retry_request_bytes() const {
  return build_request(1, false, false);
}

bool Initiator::terminal() const {
  switch (out_.state) {
    case State::kDone:
    case State::kReset:
    case State::kAborted:
    case State::kFailed:
      return true;
    default:
      return false;
  }
}

bool Initiator::finished() const { return terminal() && txq_.empty(); }

bool Initiator::awaiting_reply() const { return out_.state == State::kEstablished && !reply_done_; }

uint64_t Initiator::next_deadline() const {
  if (!txq_.empty()) return last_cycle_;
  return std::min({rto_deadline_, reply_deadline_, close_deadline_, tw_deadline_, fw2_deadline_});
}

uint32_t Initiator::rcv_wnd() const {
  const unsigned shift = ws_ok_ ? std::min<unsigned>(cfg_.wscale, 14) : 0;
  return static_cast<uint32_t>(cfg_.window) << shift;
}

// ---------------------------------------------------------------------------------------------
// Frame building

std::vector<uint8_t> Initiator::build(uint32_t seq, uint32_t ack, uint8_t flags, uint16_t ip_id,
                                      std::span<const uint8_t> payload, bool syn_options) const {
  const size_t opt_len =
      !syn_options ? 0 : (cfg_.syn_options == SynOptions::kLinux ? size_t{20} : size_t{8});
  const size_t tcp_len = kTcpLen + opt_len + payload.size();
  const size_t l3 = kEthLen + (cfg_.vlan_tci ? kVlanLen : 0);
  const size_t l4 = l3 + kIpLen;
  std::vector<uint8_t> f(l4 + tcp_len, 0);
  std::copy(cfg_.peer_mac.begin(), cfg_.peer_mac.end(), f.begin());
  std::copy(cfg_.mac.begin(), cfg_.mac.end(), f.begin() + 6);
  if (cfg_.vlan_tci) {
    set16(f, 12, 0x8100);
    set16(f, 14, *cfg_.vlan_tci);
  }
  set16(f, l3 - 2, 0x0800);

  f[l3] = 0x45;
  f[l3 + 1] = cfg_.tos;
  set16(f, l3 + 2, static_cast<uint16_t>(kIpLen + tcp_len));
  set16(f, l3 + 4, ip_id);
  set16(f, l3 + 6, 0x4000);  // DF
  f[l3 + 8] = cfg_.ttl;
  f[l3 + 9] = 6;
  set32(f, l3 + 12, cfg_.ip);
  set32(f, l3 + 16, cfg_.peer_ip);
  const uint16_t ip_sum = csum_fold(csum_add(0, std::span<const uint8_t>(f).subspan(l3, kIpLen)));
  set16(f, l3 + 10, static_cast<uint16_t>(~ip_sum));

  set16(f, l4, cfg_.port);
  set16(f, l4 + 2, cfg_.peer_port);
  set32(f, l4 + 4, seq);
  set32(f, l4 + 8, ack);
  f[l4 + 12] = static_cast<uint8_t>(((kTcpLen + opt_len) / 4) << 4);
  f[l4 + 13] = flags;
  // RFC 793/Linux: a RST carries window 0; every other segment the configured field.
  set16(f, l4 + 14, (flags & kTcpRst) ? uint16_t{0} : cfg_.window);
  size_t p = l4 + kTcpLen;
  if (syn_options) {
    f[p++] = 2;  // MSS
    f[p++] = 4;
    set16(f, p, cfg_.mss);
    p += 2;
    if (cfg_.syn_options == SynOptions::kLinux) {
      // tcp_options_write: SACK-permitted and timestamps share a word, TSecr 0 in a SYN
      f[p++] = 4;
      f[p++] = 2;
      f[p++] = 8;
      f[p++] = 10;
      set32(f, p, cfg_.ts_val);
      p += 8;
    }
    if (cfg_.syn_options == SynOptions::kIrdma) {
      f[p++] = 3;  // window scale, then EOL (irdma_send_syn)
      f[p++] = 3;
      f[p++] = cfg_.wscale;
      f[p++] = 0;
    } else {
      f[p++] = 1;  // NOP
      f[p++] = 3;  // window scale
      f[p++] = 3;
      f[p++] = cfg_.wscale;
    }
  }
  std::copy(payload.begin(), payload.end(), f.begin() + static_cast<std::ptrdiff_t>(p));
  uint64_t acc = pseudo_sum(cfg_.ip, cfg_.peer_ip, tcp_len);
  acc = csum_add(acc, std::span<const uint8_t>(f).subspan(l4));
  set16(f, l4 + 16, static_cast<uint16_t>(~csum_fold(acc)));
  if (cfg_.pad_min_frame && f.size() < kMinFrame) f.resize(kMinFrame, 0);
  return f;
}

void Initiator::queue_seg(const Seg& s, bool retransmission, bool last_request) {
  uint32_t seq = s.seq, off = s.data_off, len = s.len;
  if (retransmission && len > 0 && seq_lt(seq, snd_una_)) {  // partially acknowledged
    const uint32_t cut = std::min(snd_una_ - seq, len);
    seq += cut;
    off += cut;
    len -= cut;
  }
  const bool syn = (s.flags & kTcpSyn) != 0;
  const auto payload = std::span<const uint8_t>(req_).subspan(off, len);
  TxItem item;
  item.frame = build(seq, syn ? 0u : rcv_nxt_, s.flags, s.ip_id, payload, syn);
  item.seq_space = true;
  item.syn = syn;
  item.last_request = last_request;
  txq_.push_back(std::move(item));
}

void Initiator::queue_ack() {
  TxItem item;
  item.frame = build(snd_nxt_, rcv_nxt_, kTcpAck, next_ip_id(), {}, false);
  txq_.push_back(std::move(item));
}

void Initiator::send_rst() {
  TxItem item;
  item.frame = build(snd_nxt_, rcv_nxt_, kTcpRst | kTcpAck, next_ip_id(), {}, false);
  item.rst = true;
  txq_.push_back(std::move(item));
  out_.rst_sent = true;
}

void Initiator::send_fin() {
  const Seg s{snd_nxt_, 0, 0, kTcpFin | kTcpAck, next_ip_id()};
  rtxq_.push_back(s);
  fin_seq_ = snd_nxt_;
  snd_nxt_ += 1;
  fin_sent_ = true;
  queue_seg(s, false);
}

void Initiator::queue_request() {
  out_.request_rev = rev_;
  const uint32_t total = static_cast<uint32_t>(req_.size());
  const uint32_t eff_mss = std::max<uint32_t>(1, std::min<uint32_t>(cfg_.mss, out_.peer_mss));
  uint32_t n = std::max(1u, cfg_.request_segments);
  n = std::min(n, total);
  if ((total + n - 1) / n > eff_mss) n = (total + eff_mss - 1) / eff_mss;
  const uint32_t base = total / n, extra = total % n;
  uint32_t off = 0;
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t len = base + (i < extra ? 1 : 0);
    const Seg s{snd_nxt_, off, len, kTcpPsh | kTcpAck, next_ip_id()};
    rtxq_.push_back(s);
    snd_nxt_ += len;
    off += len;
    queue_seg(s, false, i + 1 == n);
  }
}

// ---------------------------------------------------------------------------------------------
// Time

void Initiator::start(uint64_t cycle) {
  if (out_.state != State::kClosed) return;
  last_cycle_ = std::max(last_cycle_, cycle);
  snd_una_ = cfg_.isn;
  const Seg s{cfg_.isn, 0, 0, kTcpSyn, next_ip_id()};
  rtxq_.push_back(s);
  snd_nxt_ = cfg_.isn + 1;
  out_.state = State::kSynSent;
  out_.attempts = 1;
  queue_seg(s, false);
}

void Initiator::advance(uint64_t cycle) {
  last_cycle_ = std::max(last_cycle_, cycle);
  for (;;) {
    const uint64_t t =
        std::min({rto_deadline_, reply_deadline_, close_deadline_, tw_deadline_, fw2_deadline_});
    if (t == kOff || t > cycle) return;
    // A timer fires at its own deadline, so late polling does not shift the schedule.
    if (t == rto_deadline_) {
      on_rto(t);
    } else if (t == reply_deadline_) {
      reply_deadline_ = kOff;
      on_reply_timeout(t);
    } else if (t == close_deadline_) {
      close(t);
    } else if (t == fw2_deadline_) {
      // tcp_fin_timeout: the orphaned socket gives up waiting for the peer's FIN, silently
      fw2_deadline_ = kOff;
      if (out_.error.empty()) out_.error = "no FIN from the peer within fin_wait2_cycles";
      finish(State::kFailed, t);
    } else {
      tw_deadline_ = kOff;
      finish(State::kDone, t);
    }
  }
}

void Initiator::on_rto(uint64_t cycle) {
  // irdma keeps the request's retransmission entry after the ACK and lets it run out without
  // resending (irdma_cm_timer_tick skips the send while ack_rcvd): its only reply timeout.
  const bool countdown = irdma() && awaiting_reply();
  if (rtxq_.empty() && !countdown) {
    rto_deadline_ = kOff;
    return;
  }
  if (backoff_ >= cfg_.max_retransmits) {
    on_retransmit_exhausted(cycle);
    return;
  }
  ++backoff_;
  rto_cur_ *= 2;
  // irdma: the next timeout is IRDMA_RETRY_TIMEOUT << n, at most IRDMA_MAX_TIMEOUT (12 s).
  if (irdma()) rto_cur_ = std::min(rto_cur_, 12 * cfg_.rto_cycles);
  rto_deadline_ = cycle + rto_cur_;
  for (const Seg& s : rtxq_) {
    queue_seg(s, true);
    ++out_.retransmits;
  }
}

void Initiator::on_retransmit_exhausted(uint64_t cycle) {
  const std::string why = std::string("retransmissions exhausted in ") + to_string(out_.state);
  if (out_.state == State::kSynSent) {
    switch (cfg_.personality) {
      case Personality::kSiw:  // kernel_bindconnect: connect() fails with ETIMEDOUT
        app(AppEvent::kConnectFailed, kETIMEDOUT, {}, cycle);
        break;
      case Personality::kIrdma:  // irdma_retrans_expired: RST, ABORTED -> connect error
        app(AppEvent::kRejected, kECONNRESET, own_pd(), cycle);
        break;
      case Personality::kCxgb4:  // act_open_rpl CPL_ERR_CONN_TIMEDOUT
        app(AppEvent::kUnreachable, kETIMEDOUT, {}, cycle);
        break;
    }
  } else if (awaiting_reply()) {
    switch (cfg_.personality) {
      case Personality::kSiw:  // tcp_write_err -> TCP_CLOSE -> siw PEER_CLOSE
        app(AppEvent::kRejected, kECONNRESET, {}, cycle);
        break;
      case Personality::kIrdma:
        app(AppEvent::kRejected, kECONNRESET, own_pd(), cycle);
        break;
      case Personality::kCxgb4:
        app(AppEvent::kUnreachable, kETIMEDOUT, {}, cycle);
        break;
    }
  }
  // Linux TCP gives up without sending anything (tcp_write_err -> tcp_done); irdma sends a RST
  // from every state it can be in here (irdma_retrans_expired).
  fail(why, irdma(), cycle);
}

void Initiator::on_reply_timeout(uint64_t cycle) {
  const std::string why = "no MPA reply within reply_timeout_cycles";
  switch (cfg_.personality) {
    case Personality::kSiw:
      // SIW_CM_WORK_MPATIMEOUT: CONNECT_REPLY(-ETIMEDOUT), then sock_release: nothing unread,
      // so an orderly FIN.
      app(AppEvent::kUnreachable, kETIMEDOUT, {}, cycle);
      if (out_.error.empty()) out_.error = why;
      fin_close();
      return;
    case Personality::kIrdma:
      app(AppEvent::kRejected, kECONNRESET, own_pd(), cycle);
      break;
    case Personality::kCxgb4:  // process_timeout MPA_REQ_SENT, then abort
      app(AppEvent::kUnreachable, kETIMEDOUT, {}, cycle);
      break;
  }
  fail(why, true, cycle);
}

std::optional<std::vector<uint8_t>> Initiator::poll_tx(uint64_t cycle) {
  advance(cycle);
  if (txq_.empty()) return std::nullopt;
  TxItem item = std::move(txq_.front());
  txq_.pop_front();
  ++out_.stats.tx_frames;
  if (item.seq_space && rto_deadline_ == kOff && !rtxq_.empty() && !terminal()) {
    rto_deadline_ = cycle + rto_cur_;
  }
  if (item.syn && !syn_out_) {
    syn_out_ = true;
    out_.syn_cycle = cycle;
  }
  if (item.last_request && !req_out_) {
    req_out_ = true;
    out_.request_last_cycle = cycle;
    if (out_.state == State::kEstablished && !reply_done_ && cfg_.reply_timeout_cycles != 0 &&
        !irdma()) {
      reply_deadline_ = cycle + cfg_.reply_timeout_cycles;
    }
  }
  if (item.rst) out_.rst_cycle = cycle;
  return std::move(item.frame);
}

void Initiator::finish(State s, uint64_t cycle) {
  out_.state = s;
  out_.closed_cycle = cycle;
  rto_deadline_ = reply_deadline_ = close_deadline_ = tw_deadline_ = fw2_deadline_ = kOff;
  rtxq_.clear();
  ooo_.clear();
}

void Initiator::fail(std::string why, bool send_reset, uint64_t cycle) {
  if (out_.error.empty()) out_.error = std::move(why);
  if (send_reset) send_rst();
  finish(State::kFailed, cycle);
}

void Initiator::app(AppEvent e, int status, std::vector<uint8_t> pd, uint64_t cycle) {
  if (out_.app_event != AppEvent::kNone) return;  // the first report is what rdma_cm delivers
  out_.app_event = e;
  out_.app_status = status;
  out_.app_pd = std::move(pd);
  out_.app_cycle = cycle;
}

// ---------------------------------------------------------------------------------------------
// Receive

void Initiator::on_rx(std::span<const uint8_t> f, uint64_t cycle) {
  advance(cycle);
  Stats& st = out_.stats;
  ++st.rx_frames;
  if (out_.state == State::kClosed || terminal()) {
    ++st.ignored;
    return;
  }
  // Ethernet, 802.1Q
  if (f.size() < kEthLen) {
    ++st.malformed;
    return;
  }
  if (!std::equal(cfg_.mac.begin(), cfg_.mac.end(), f.begin())) {
    ++st.foreign;
    return;
  }
  size_t l3 = kEthLen;
  uint16_t type = get16(f, 12);
  const bool tagged = type == 0x8100;
  if (tagged) {
    if (f.size() < kEthLen + kVlanLen) {
      ++st.malformed;
      return;
    }
    type = get16(f, 16);
    l3 += kVlanLen;
  }
  if (tagged != cfg_.vlan_tci.has_value() ||
      (tagged && ((get16(f, 14) ^ *cfg_.vlan_tci) & 0x0FFF) != 0)) {
    ++st.foreign;
    return;
  }
  if (type != 0x0800) {
    ++st.foreign;
    return;
  }
  // IPv4: header checksum first, then addresses, then the TCP checksum, then ports.
  if (f.size() < l3 + kIpLen) {
    ++st.malformed;
    return;
  }
  const auto ip = f.subspan(l3);
  const size_t ihl = static_cast<size_t>(ip[0] & 0x0F) * 4;
  if ((ip[0] >> 4) != 4 || ihl < kIpLen || ip.size() < ihl) {
    ++st.malformed;
    return;
  }
  if (csum_fold(csum_add(0, ip.first(ihl))) != 0xFFFF) {
    ++st.bad_ip_checksum;
    return;
  }
  const size_t total = get16(ip, 2);
  if (total < ihl + kTcpLen || total > ip.size() || (get16(ip, 6) & 0x3FFF) != 0) {
    ++st.malformed;  // truncated, or a fragment; bytes beyond `total` are Ethernet padding
    return;
  }
  if (ip[9] != 6 || get32(ip, 12) != cfg_.peer_ip || get32(ip, 16) != cfg_.ip) {
    ++st.foreign;
    return;
  }
  const auto tcp = ip.subspan(ihl, total - ihl);
  const size_t thl = static_cast<size_t>(tcp[12] >> 4) * 4;
  if (thl < kTcpLen || thl > tcp.size()) {
    ++st.malformed;
    return;
  }
  if (csum_fold(csum_add(pseudo_sum(get32(ip, 12), get32(ip, 16), tcp.size()), tcp)) != 0xFFFF) {
    ++st.bad_tcp_checksum;
    return;
  }
  if (get16(tcp, 0) != cfg_.peer_port || get16(tcp, 2) != cfg_.port) {
    ++st.foreign;
    return;
  }
  Rx s;
  s.seq = get32(tcp, 4);
  s.ack = get32(tcp, 8);
  s.flags = tcp[13];
  s.window = get16(tcp, 14);
  s.payload = tcp.subspan(thl);
  for (size_t i = kTcpLen; i < thl;) {  // options
    const uint8_t kind = tcp[i];
    if (kind == 0) break;
    if (kind == 1) {
      ++i;
      continue;
    }
    if (i + 1 >= thl || tcp[i + 1] < 2 || i + tcp[i + 1] > thl) break;
    const uint8_t len = tcp[i + 1];
    if (kind == 2 && len == 4) s.mss = get16(tcp, i + 2);
    if (kind == 3 && len == 3) s.wscale = std::min<uint8_t>(tcp[i + 2], 14);
    i += len;
  }
  if (out_.state == State::kSynSent) {
    on_segment_syn_sent(s, cycle);
  } else {
    on_segment(s, cycle);
  }
}

void Initiator::on_segment_syn_sent(const Rx& s, uint64_t cycle) {
  const bool ack = (s.flags & kTcpAck) != 0;
  if ((s.flags & kTcpRst) != 0) {
    // Linux takes a RST in SYN_SENT only with an acceptable ACK; irdma takes any RST for the
    // node (irdma_process_pkt -> irdma_handle_rst_pkt, no sequence check).
    if (!irdma() && (!ack || s.ack != snd_nxt_)) {
      ++out_.stats.ignored;
      return;
    }
    out_.error = "connection refused: RST in SYN_SENT";
    on_reset(cycle, State::kSynSent);
    return;
  }
  if (ack && s.ack != snd_nxt_) {
    if (irdma() && (s.flags & kTcpSyn) != 0) {
      // irdma_check_syn: irdma_active_open_err(reset) -> RST, connect error
      app(AppEvent::kRejected, kECONNRESET, own_pd(), cycle);
      fail("SYN-ACK acknowledges " + std::to_string(s.ack) + ", not our SYN", true, cycle);
      return;
    }
    ++out_.stats.bad_ack_in_syn_sent;  // RFC 793: <SEQ=SEG.ACK><CTL=RST>
    TxItem item;
    item.frame = build(s.ack, 0, kTcpRst, next_ip_id(), {}, false);
    txq_.push_back(std::move(item));
    return;
  }
  if ((s.flags & kTcpSyn) == 0 || !ack) {
    ++out_.stats.ignored;  // no simultaneous open
    return;
  }
  out_.peer_isn = s.seq;
  out_.peer_mss = s.mss.value_or(kDefaultPeerMss);
  out_.peer_wscale = s.wscale;
  out_.synack_cycle = cycle;
  ws_ok_ = s.wscale.has_value();
  rcv_nxt_ = s.seq + 1;
  snd_una_ = s.ack;
  snd_wnd_ = s.window;  // never scaled in a SYN
  rtxq_.clear();
  rto_deadline_ = kOff;
  backoff_ = 0;
  rto_cur_ = cfg_.rto_cycles;
  out_.state = State::kEstablished;
  queue_ack();
  using Fault = InitiatorConfig::Fault;
  switch (retried_ ? Fault::kNone : cfg_.fault) {
    case Fault::kRstAfterSynAck:
      send_rst();
      finish(State::kAborted, cycle);
      return;
    case Fault::kNoRequest:
      if (cfg_.reply_timeout_cycles != 0) reply_deadline_ = cycle + cfg_.reply_timeout_cycles;
      return;
    case Fault::kRstAfterRequest:
      queue_request();
      send_rst();
      finish(State::kAborted, cycle);
      return;
    default:
      queue_request();
      return;
  }
}

// A RST was accepted. Before a reply, irdma and cxgb4 retry a rev-2 attempt with MPA v1;
// otherwise the connection is over and the application learns it.
void Initiator::on_reset(uint64_t cycle, State prev) {
  out_.rst_received = true;
  out_.rst_cycle = cycle;
  const bool before_reply =
      prev == State::kSynSent || (prev == State::kEstablished && !reply_done_);
  if (before_reply && rev_ == 2 && !retried_) {
    // irdma_handle_rst_pkt: SYN_SENT or MPAREQ_SENT with mpa_frame_rev 2 -> rev 1, another SYN.
    // cxgb4 peer_abort: MPA_REQ_SENT with mpa_rev 2, not yet tried v1 -> c4iw_reconnect.
    if (irdma() || (cxgb4() && prev == State::kEstablished)) {
      retry_v1(cycle);
      return;
    }
  }
  if (prev == State::kSynSent) {
    switch (cfg_.personality) {
      case Personality::kSiw:  // the blocking connect() in siw_connect fails: no event
        app(AppEvent::kConnectFailed, kECONNREFUSED, {}, cycle);
        break;
      case Personality::kIrdma:  // irdma_active_open_err(false) -> irdma_event_connect_error
        app(AppEvent::kRejected, kECONNRESET, own_pd(), cycle);
        break;
      case Personality::kCxgb4:  // act_open_rpl CPL_ERR_CONN_RESET: no private data
        app(AppEvent::kRejected, kECONNRESET, {}, cycle);
        break;
    }
  } else if (before_reply) {
    switch (cfg_.personality) {
      case Personality::kSiw:  // TCP_CLOSE -> SIW_CM_WORK_PEER_CLOSE in AWAIT_MPAREP
        app(AppEvent::kRejected, kECONNRESET, {}, cycle);
        break;
      case Personality::kIrdma:
        app(AppEvent::kRejected, kECONNRESET, own_pd(), cycle);
        break;
      case Personality::kCxgb4:  // peer_abort after the v1 retry: connect_reply_upcall
        app(AppEvent::kRejected, kECONNRESET, {}, cycle);
        break;
    }
  }
  if (out_.error.empty())
    out_.error = std::string("connection reset by peer in ") + to_string(prev);
  finish(State::kReset, cycle);
}

// A second TCP connection from the same 4-tuple with an MPA v1 request (no IRD/ORD word, no
// fault): irdma continues its sequence numbers (irdma_send_syn at loc_seq_num), cxgb4 opens
// a fresh connection (send_connect picks another ISN).
void Initiator::retry_v1(uint64_t cycle) {
  retried_ = true;
  ++out_.attempts;
  out_.retry_cycle = cycle;
  uint32_t isn = snd_nxt_;
  if (cxgb4()) isn = cfg_.retry_isn.value_or(((cfg_.isn + 0x4000'0000u) & ~7u) + 3u);
  rev_ = 1;
  enh_ = false;
  req_ = build_request(1, false, false);
  rtxq_.clear();
  ooo_.clear();
  rx_.clear();
  cx_overflow_ = false;
  rcv_nxt_ = 0;
  snd_wnd_ = 0;
  ws_ok_ = false;
  fin_sent_ = false;
  rto_deadline_ = reply_deadline_ = close_deadline_ = tw_deadline_ = fw2_deadline_ = kOff;
  rto_cur_ = cfg_.rto_cycles;
  backoff_ = 0;
  req_out_ = false;
  reply_done_ = false;
  out_.peer_fin = false;
  out_.reply_rev = out_.reply_flags = 0;
  out_.reply_pd_length = 0;
  out_.reply_ird_ord.reset();
  out_.retry_syn_seq = isn;
  snd_una_ = isn;
  const Seg s{isn, 0, 0, kTcpSyn, next_ip_id()};
  rtxq_.push_back(s);
  snd_nxt_ = isn + 1;
  out_.state = State::kSynSent;
  queue_seg(s, false);
}

void Initiator::on_segment(const Rx& s, uint64_t cycle) {
  Stats& st = out_.stats;
  const State prev = out_.state;
  if ((s.flags & kTcpRst) != 0 && irdma()) {  // no sequence check (irdma_process_pkt)
    out_.error = std::string("connection reset by peer in ") + to_string(prev);
    on_reset(cycle, prev);
    return;
  }
  const uint32_t seg_len = static_cast<uint32_t>(s.payload.size()) + ((s.flags & kTcpFin) ? 1 : 0) +
                           ((s.flags & kTcpSyn) ? 1 : 0);
  const uint32_t wnd = rcv_wnd();
  auto in_window = [&](uint32_t x) { return seq_ge(x, rcv_nxt_) && seq_lt(x, rcv_nxt_ + wnd); };
  bool acceptable;
  if (seg_len == 0) {
    acceptable = wnd == 0 ? s.seq == rcv_nxt_ : in_window(s.seq);
  } else {
    acceptable = wnd != 0 && (in_window(s.seq) || in_window(s.seq + seg_len - 1));
  }
  if (!acceptable) {
    if ((s.flags & kTcpRst) != 0) {
      ++st.ignored;
    } else {
      ++st.out_of_window;
      if (!s.payload.empty() && seq_lt(s.seq, rcv_nxt_)) ++st.duplicate_data;
      queue_ack();
    }
    return;
  }
  if ((s.flags & kTcpRst) != 0) {
    if (s.seq == rcv_nxt_) {
      out_.error = std::string("connection reset by peer in ") + to_string(prev);
      on_reset(cycle, prev);
    } else {
      ++st.challenge_acks;
      queue_ack();
    }
    return;
  }
  if ((s.flags & kTcpSyn) != 0) {
    ++st.challenge_acks;
    queue_ack();
    return;
  }
  if ((s.flags & kTcpAck) == 0) {
    ++st.ignored;
    return;
  }
  if (irdma() && awaiting_reply() && !s.payload.empty() && s.ack != snd_nxt_) {
    ++st.irdma_bad_ack;  // irdma_check_seq: ack_seq must be loc_seq_num; dropped, no ACK
    return;
  }
  if (seq_gt(s.ack, snd_nxt_)) {
    ++st.ack_beyond_snd_nxt;
    queue_ack();
    return;
  }
  if (seq_gt(s.ack, snd_una_)) {
    snd_una_ = s.ack;
    std::erase_if(rtxq_, [this](const Seg& g) { return seq_le(g.end(), snd_una_); });
    // irdma's retransmission entry of the request keeps its schedule when the ACK comes
    // (irdma_handle_ack_pkt only sets ack_rcvd); everything else restarts on progress.
    if (!(irdma() && awaiting_reply())) {
      backoff_ = 0;
      rto_cur_ = cfg_.rto_cycles;
      rto_deadline_ = rtxq_.empty() ? kOff : cycle + rto_cur_;
    }
  }
  snd_wnd_ = static_cast<uint32_t>(s.window) << (ws_ok_ ? out_.peer_wscale.value_or(0) : 0);
  const bool our_fin_acked = fin_sent_ && seq_gt(snd_una_, fin_seq_);

  if (irdma() && awaiting_reply() && (!s.payload.empty() || (s.flags & kTcpFin) != 0)) {
    // irdma_handle_ack_pkt: the segment's data alone is the MPA reply (no reassembly); a FIN
    // is handled after it (irdma_process_pkt).
    const bool fin = (s.flags & kTcpFin) != 0;
    if (!s.payload.empty()) {
      rcv_nxt_ = s.seq + static_cast<uint32_t>(s.payload.size());
      parse_irdma_segment(s.payload, cycle);
      if (terminal() || !fin) return;
    }
    if (out_.state == State::kEstablished) {
      // irdma_handle_fin_pkt in MPAREQ_SENT: ABORTED event, RST
      rcv_nxt_ += 1;
      out_.peer_fin = true;
      peer_closed_before_reply(false, cycle);
      return;
    }
    // MPAREJ_RCVD: irdma_handle_fin_pkt -> LAST_ACK, FIN
    rcv_nxt_ += 1;
    out_.peer_fin = true;
    out_.reply_had_fin = true;
    send_fin();
    out_.state = State::kLastAck;
    return;
  }

  bool need_ack = false, fin_now = false;
  accept_data(s, need_ack, fin_now);
  // irdma answers a FIN after a reject with its own FIN|ACK only (irdma_handle_fin_pkt)
  if (need_ack && !(irdma() && prev == State::kReplyReceived && fin_now)) queue_ack();

  if (awaiting_reply()) {
    if (siw() && fin_now) {
      // Linux TCP runs tcp_fin (sk_state_change) before sk_data_ready: siw's PEER_CLOSE work
      // comes first and the reply bytes of this segment are never read.
      record_wire(rx_);
      if (out_.rejected || out_.accepted) out_.reply_had_fin = true;
      peer_closed_before_reply(!s.payload.empty(), cycle);
      return;
    }
    parse_stream_reply(cycle);
    if (reply_done_ && fin_now && (out_.rejected || out_.accepted)) out_.reply_had_fin = true;
    if (terminal()) return;
    if (awaiting_reply() && fin_now) {
      peer_closed_before_reply(false, cycle);
      return;
    }
  }
  if (out_.state != prev) return;  // the reply moved us on (close() handled a FIN too)

  auto enter_time_wait = [&] {
    out_.state = State::kTimeWait;
    rtxq_.clear();
    rto_deadline_ = kOff;
    tw_deadline_ = cycle + cfg_.time_wait_cycles;
    fw2_deadline_ = kOff;
  };
  switch (prev) {
    case State::kReplyReceived:
      // irdma waits for the peer's FIN after a reject, then sends its own (MPAREJ_RCVD ->
      // LAST_ACK); siw remembers it in out_.peer_fin for close()
      if (irdma() && fin_now) {
        send_fin();
        out_.state = State::kLastAck;
      }
      break;
    case State::kFinWait1:
      if (our_fin_acked) {
        if (fin_now) {
          enter_time_wait();
        } else {
          out_.state = State::kFinWait2;
          if (cfg_.fin_wait2_cycles != 0) fw2_deadline_ = cycle + cfg_.fin_wait2_cycles;
        }
      } else if (fin_now) {
        out_.state = State::kClosing;
      }
      break;
    case State::kFinWait2:
      if (fin_now) enter_time_wait();
      break;
    case State::kClosing:
      if (our_fin_acked) enter_time_wait();
      break;
    case State::kLastAck:
      if (our_fin_acked) finish(State::kDone, cycle);
      break;
    default:
      break;
  }
}

// In-order data is delivered; out-of-order data is buffered (up to kOooMax segments, then
// dropped) and delivered once the gap is filled, as Linux does; every data or FIN segment is
// acknowledged at once (no delayed ACK).
void Initiator::accept_data(const Rx& s, bool& need_ack, bool& fin_now) {
  Stats& st = out_.stats;
  std::span<const uint8_t> data = s.payload;
  bool fin = (s.flags & kTcpFin) != 0;
  if (data.empty() && !fin) return;
  need_ack = true;
  if (out_.peer_fin) {  // nothing can follow the peer's FIN
    ++st.duplicate_data;
    return;
  }
  uint32_t seq = s.seq;
  if (seq_lt(seq, rcv_nxt_)) {
    const uint32_t old = rcv_nxt_ - seq;
    if (old >= data.size() + (fin ? 1u : 0u)) {
      ++st.duplicate_data;
      return;
    }
    const uint32_t cut = std::min<uint32_t>(old, static_cast<uint32_t>(data.size()));
    data = data.subspan(cut);
    seq += cut;
  }
  const uint32_t room = rcv_nxt_ + rcv_wnd() - seq;  // seq is in the window here
  if (data.size() > room) {
    data = data.first(room);
    fin = false;
  }
  if (seq != rcv_nxt_) {
    if (ooo_.size() < kOooMax) {
      ++st.out_of_order;
      ooo_.push_back(OooSeg{seq, std::vector<uint8_t>(data.begin(), data.end()), fin});
    } else {
      ++st.ooo_dropped;
    }
    return;
  }
  deliver(data);
  rcv_nxt_ += static_cast<uint32_t>(data.size());
  if (fin) {
    rcv_nxt_ += 1;
    fin_now = true;
  }
  // Drain the out-of-order buffer.
  for (bool progress = true; progress && !fin_now;) {
    progress = false;
    for (size_t i = 0; i < ooo_.size(); ++i) {
      OooSeg& o = ooo_[i];
      const uint32_t end = o.seq + static_cast<uint32_t>(o.data.size());
      if (seq_gt(o.seq, rcv_nxt_)) continue;
      if (seq_gt(end, rcv_nxt_)) {
        const uint32_t cut = rcv_nxt_ - o.seq;
        deliver(std::span<const uint8_t>(o.data).subspan(cut));
        rcv_nxt_ = end;
      }
      if (o.fin && rcv_nxt_ == end) {
        rcv_nxt_ += 1;
        fin_now = true;
      }
      ooo_.erase(ooo_.begin() + static_cast<std::ptrdiff_t>(i));
      progress = true;
      break;
    }
  }
  if (fin_now) {
    out_.peer_fin = true;
    ooo_.clear();
  }
}

void Initiator::deliver(std::span<const uint8_t> data) {
  // Only the MPA reply matters; whatever follows it (FPDUs after an accept) is discarded.
  if (!awaiting_reply()) return;
  // cxgb4 (process_mpa_reply): more than mpa_pkt holds fails the connection before the copy;
  // rx_ keeps the bytes anyway, for the wire's view of the reply
  if (cxgb4() && (cx_overflow_ || rx_.size() + data.size() > kCxgb4MpaBuf)) cx_overflow_ = true;
  rx_.insert(rx_.end(), data.begin(), data.end());
}

// The wire's view of a reply (Outcome::rejected, reject_pd, reply_*), whatever the
// personality made of it.
void Initiator::record_wire(std::span<const uint8_t> m) {
  if (m.size() < kMpaHeaderLen) return;
  out_.reply_flags = m[16];
  out_.reply_rev = m[17];
  out_.reply_pd_length = get16(m, 18);
  const size_t pdl = out_.reply_pd_length;
  if (m.size() < kMpaHeaderLen + pdl || out_.reply_rev > 2 || pdl > kMpaPdMax ||
      !std::equal(kMpaKeyReply.begin(), kMpaKeyReply.end(), m.begin())) {
    return;
  }
  const bool enh = out_.reply_rev == 2 && (out_.reply_flags & kMpaFlagEnhanced) != 0;
  if (enh && pdl >= kMpaIrdOrdLen) out_.reply_ird_ord = get32(m, kMpaHeaderLen);
  if ((out_.reply_flags & kMpaFlagReject) != 0) {
    out_.rejected = true;
    const size_t skip = kMpaHeaderLen + (enh ? std::min(kMpaIrdOrdLen, pdl) : 0);
    out_.reject_pd.assign(m.begin() + static_cast<std::ptrdiff_t>(skip),
                          m.begin() + static_cast<std::ptrdiff_t>(kMpaHeaderLen + pdl));
  } else {
    out_.accepted = true;
  }
}

// siw and cxgb4 read the reply from the byte stream; the checks and their order are the
// kernel's (siw_recv_mpa_rr + siw_proc_mpareply, process_mpa_reply).
void Initiator::parse_stream_reply(uint64_t cycle) {
  const std::span<const uint8_t> m(rx_);
  if (cx_overflow_) {
    record_wire(m);
    return reply_refused("more than " + std::to_string(kCxgb4MpaBuf) + " reply bytes",
                         AppEvent::kConnectError, kEINVAL, {}, true, cycle);
  }
  if (m.size() < kMpaHeaderLen) return;
  out_.reply_flags = m[16];
  out_.reply_rev = m[17];
  out_.reply_pd_length = get16(m, 18);
  const size_t pdl = out_.reply_pd_length;
  const bool key_ok = std::equal(kMpaKeyReply.begin(), kMpaKeyReply.end(), m.begin());
  const bool reject = (out_.reply_flags & kMpaFlagReject) != 0;
  if (siw()) {
    if (pdl > kSiwPdMax) {
      // siw_recv_mpa_rr: -EPROTO on the header; siw_proc_mpareply still upcalls
      // CONNECT_REPLY(-EINVAL) with private_data_len (u8)pd_len (- 4 when enhanced) and
      // private_data = NULL (+ 4): iw_cm's kmemdup faults unless that length is 0.
      size_t len = pdl & 0xFF;
      if (enh_) len = (len - kMpaIrdOrdLen) & 0xFF;
      out_.app_kernel_fault = len != 0;
      record_wire(m);
      return reply_refused("MPA reply PD_Length " + std::to_string(pdl) + " > 256 (siw)",
                           AppEvent::kConnectError, kEINVAL, {}, true, cycle);
    }
    if (m.size() < kMpaHeaderLen + pdl) return;  // wait for the private data
    const auto pd = m.subspan(kMpaHeaderLen, pdl);
    record_wire(m);
    if (out_.reply_rev > 2 || !key_ok) {
      // siw_proc_mpareply -> out_err: CONNECT_REPLY(-EINVAL) with the private data read;
      // the socket is released with nothing unread: FIN
      return reply_refused(out_.reply_rev > 2 ? "MPA reply Rev > 2" : "MPA reply key",
                           AppEvent::kConnectError, kEINVAL, siw_pd(pd, pdl), false, cycle);
    }
    if (reject) return reply_taken(AppEvent::kRejected, kECONNRESET, siw_pd(pd, pdl), cycle);
    const bool enh_reply = out_.reply_rev == 2 && (out_.reply_flags & kMpaFlagEnhanced) != 0;
    if (enh_ && !enh_reply) {  // "the responder MUST reply with MPA version 2 ..."
      return reply_taken(AppEvent::kRejected, kECONNRESET, siw_pd(pd, pdl), cycle);
    }
    return reply_taken(AppEvent::kEstablished, 0, siw_pd(pd, pdl), cycle);
  }
  // cxgb4
  std::string why;
  if (out_.reply_rev > 2) {
    why = "MPA reply Rev > 2";
  } else if (!key_ok) {
    why = "MPA reply key";
  } else if (pdl > kCxgb4PdMax) {
    why = "MPA reply PD_Length " + std::to_string(pdl) + " > 256 (cxgb4)";
  } else if (m.size() > kMpaHeaderLen + pdl) {
    why = "more reply bytes than PD_Length announces";
  }
  if (!why.empty()) {
    record_wire(m);
    return reply_refused(why, AppEvent::kConnectError, kEPROTO, {}, true, cycle);
  }
  if (m.size() < kMpaHeaderLen + pdl) return;
  record_wire(m);
  if (reject) return reply_taken(AppEvent::kRejected, kECONNREFUSED, cxgb4_pd(pdl), cycle);
  return reply_taken(AppEvent::kEstablished, 0, cxgb4_pd(pdl), cycle);
}

// irdma_parse_mpa on one segment's data, in its order; then irdma_handle_rcv_mpa.
void Initiator::parse_irdma_segment(std::span<const uint8_t> seg, uint64_t cycle) {
  auto refuse = [&](std::string why) {
    // irdma_active_open_err(reset): RST, ABORTED -> CONNECT_REPLY(-ECONNRESET) carrying
    // pdata_buf, which still holds our own request's private data
    record_wire(seg);
    reply_refused(std::move(why), AppEvent::kRejected, kECONNRESET, own_pd(), true, cycle);
  };
  if (seg.size() < kMpaHeaderLen)
    return refuse("MPA reply segment of " + std::to_string(seg.size()) + " bytes");
  out_.reply_flags = seg[16];
  out_.reply_rev = seg[17];
  out_.reply_pd_length = get16(seg, 18);
  const size_t pdl = out_.reply_pd_length;
  if (pdl > kMpaPdMax) return refuse("MPA reply PD_Length " + std::to_string(pdl) + " > 512");
  if ((out_.reply_rev != 1 && out_.reply_rev != 2) || out_.reply_rev > rev_) {
    return refuse("MPA reply Rev " + std::to_string(out_.reply_rev));
  }
  if (!std::equal(kMpaKeyReply.begin(), kMpaKeyReply.end(), seg.begin())) {
    return refuse("MPA reply key");
  }
  if (kMpaHeaderLen + pdl > seg.size()) {
    return refuse("MPA reply not in one segment (" + std::to_string(seg.size()) + " of " +
                  std::to_string(kMpaHeaderLen + pdl) + " bytes)");
  }
  if (seg.size() > kIrdmaMaxCmBuf) return refuse("MPA reply segment over 544 bytes");
  // Bytes the driver reads beyond the segment are not on the wire.
  auto at = [&](size_t i) { return i < seg.size() ? seg[i] : kAppPdJunk; };
  size_t hdr = kMpaHeaderLen;
  if (out_.reply_rev == 2) {
    // irdma_negotiate_mpa_v2_ird_ord, for any rev-2 reply (the enhanced flag is not looked at)
    hdr += kMpaIrdOrdLen;
    const uint16_t ctrl_ird = static_cast<uint16_t>(at(20) << 8 | at(21));
    const uint16_t ctrl_ord = static_cast<uint16_t>(at(22) << 8 | at(23));
    const uint16_t ird = ctrl_ird & 0x3FFF, ord = ctrl_ord & 0x3FFF;
    const uint16_t own_ird = static_cast<uint16_t>((cfg_.ird_ord >> 16) & 0x3FFF);
    if ((ctrl_ird & 0x8000) == 0) return refuse("reply IRD/ORD lacks the P2P bit");
    if (ird != 0x3FFF && ord != 0x3FFF) {
      if (ird == 0 && (ctrl_ord & 0x4000) != 0) return refuse("reply IRD 0 with READ RTR");
      if (own_ird < ord) return refuse("reply ORD " + std::to_string(ord) + " > our IRD");
    }
    if ((ctrl_ord & 0xC000) == 0) return refuse("reply IRD/ORD has no RTR bit");
  }
  record_wire(seg);
  // memcpy(pdata_buf, buf + hdr, priv_data_len); the event has (u8)pdata.size bytes: for
  // rev 2 that is the PD and 4 bytes past the end of the frame
  std::vector<uint8_t> pd(pdl & 0xFF);
  for (size_t i = 0; i < pd.size(); ++i) pd[i] = at(hdr + i);
  queue_ack();  // irdma_send_ack
  if ((out_.reply_flags & kMpaFlagReject) != 0) {
    return reply_taken(AppEvent::kRejected, kECONNREFUSED, std::move(pd), cycle);
  }
  return reply_taken(AppEvent::kEstablished, 0, std::move(pd), cycle);
}

// The personality took a complete reply: the application's event, then the close.
void Initiator::reply_taken(AppEvent e, int status, std::vector<uint8_t> pd, uint64_t cycle) {
  reply_done_ = true;
  reply_deadline_ = kOff;
  out_.reply_cycle = cycle;
  app(e, status, std::move(pd), cycle);
  if (irdma()) {
    // no timer is left: the entry of the request is freed (irdma_handle_rcv_mpa)
    rtxq_.clear();
    rto_deadline_ = kOff;
  }
  out_.state = State::kReplyReceived;
  if (cxgb4() && e == AppEvent::kRejected) {
    // process_mpa_reply returns 2: c4iw_ep_disconnect(abrupt) -> the adapter sends RST
    send_rst();
    finish(State::kAborted, cycle);
    return;
  }
  if (irdma()) {
    // MPAREJ_RCVD: irdma sends nothing until the peer's FIN (irdma_handle_fin_pkt); a FIN in
    // the reply's segment is handled by the caller
    return;
  }
  if (cfg_.close_delay_cycles == 0) {
    close(cycle);
  } else {
    close_deadline_ = cycle + cfg_.close_delay_cycles;
  }
}

void Initiator::reply_refused(std::string why, AppEvent e, int status, std::vector<uint8_t> pd,
                              bool reset, uint64_t cycle) {
  reply_done_ = true;
  reply_deadline_ = kOff;
  app(e, status, std::move(pd), cycle);
  if (reset) {
    fail(std::move(why), true, cycle);
    return;
  }
  if (out_.error.empty()) out_.error = std::move(why);
  fin_close();
}

// An orderly close from ESTABLISHED (the peer's FIN may have come already).
void Initiator::fin_close() {
  reply_done_ = true;
  close_deadline_ = kOff;
  reply_deadline_ = kOff;
  send_fin();
  out_.state = out_.peer_fin ? State::kLastAck : State::kFinWait1;
}

// The peer's FIN came before a complete reply the personality took.
void Initiator::peer_closed_before_reply(bool unread, uint64_t cycle) {
  const std::string why = "peer closed the connection before a complete MPA reply";
  switch (cfg_.personality) {
    case Personality::kSiw:
      // SIW_CM_WORK_PEER_CLOSE in AWAIT_MPAREP: CONNECT_REPLY(-ECONNRESET), no private data
      // (siw_connect zeroed pd_len); sock_release sends RST when data is left unread
      app(AppEvent::kRejected, kECONNRESET, {}, cycle);
      reply_done_ = true;
      reply_deadline_ = kOff;
      if (unread) {
        if (out_.error.empty()) out_.error = why + " (reply bytes unread)";
        send_rst();
        finish(State::kAborted, cycle);
        return;
      }
      if (out_.error.empty()) out_.error = why;
      fin_close();
      return;
    case Personality::kIrdma:
      app(AppEvent::kRejected, kECONNRESET, own_pd(), cycle);
      reply_done_ = true;
      fail(why, true, cycle);
      return;
    case Personality::kCxgb4:
      // peer_close in MPA_REQ_SENT: connect_reply_upcall(-ECONNRESET), then a half close
      app(AppEvent::kRejected, kECONNRESET, {}, cycle);
      if (out_.error.empty()) out_.error = why;
      fin_close();
      return;
  }
}

// irdma's pdata_buf before a reply is parsed: our own request's private data, (u8) long.
std::vector<uint8_t> Initiator::own_pd() const {
  const size_t n = cfg_.private_data.size() & 0xFF;
  return {cfg_.private_data.begin(), cfg_.private_data.begin() + static_cast<std::ptrdiff_t>(n)};
}

// siw_cm_upcall: private_data_len = (u8)pd_len, 4 less (and the pointer 4 on) when our own
// request was enhanced; the buffer holds the pd_len bytes received.
std::vector<uint8_t> Initiator::siw_pd(std::span<const uint8_t> written, size_t pd_len) const {
  if (pd_len == 0) return {};
  size_t len = pd_len & 0xFF, off = 0;
  if (enh_) {
    len = (len - kMpaIrdOrdLen) & 0xFF;
    off = kMpaIrdOrdLen;
  }
  std::vector<uint8_t> pd(len);
  for (size_t i = 0; i < len; ++i) pd[i] = off + i < written.size() ? written[off + i] : kAppPdJunk;
  return pd;
}

// connect_reply_upcall: ep->plen = (u8)plen; a rev-2 attempt hands out plen - 4 bytes from
// mpa_pkt + 24, a rev-1 attempt plen bytes from mpa_pkt + 20. mpa_pkt held our own request's
// private data at + 20 (c4iw_connect) before the reply overwrote its start.
std::vector<uint8_t> Initiator::cxgb4_pd(size_t pd_len) const {
  std::vector<uint8_t> buf(kCxgb4MpaBuf, 0);
  const size_t own = std::min(cfg_.private_data.size() & 0xFF, kCxgb4MpaBuf - kMpaHeaderLen);
  std::copy_n(cfg_.private_data.begin(), own, buf.begin() + kMpaHeaderLen);
  std::copy_n(rx_.begin(), std::min(rx_.size(), buf.size()), buf.begin());
  size_t len = pd_len & 0xFF, off = kMpaHeaderLen;
  if (rev_ == 2) {
    len = (len - kMpaIrdOrdLen) & 0xFF;
    off += kMpaIrdOrdLen;
  }
  std::vector<uint8_t> pd(len);
  for (size_t i = 0; i < len; ++i) pd[i] = off + i < buf.size() ? buf[off + i] : kAppPdJunk;
  return pd;
}

void Initiator::close(uint64_t cycle) {
  close_deadline_ = kOff;
  if (out_.peer_fin) {
    send_fin();
    out_.state = State::kLastAck;
  } else if (out_.rejected && !cfg_.fin_after_reject) {
    send_rst();
    finish(State::kAborted, cycle);
  } else {
    send_fin();
    out_.state = State::kFinWait1;
  }
}

}  // namespace bouncer::peer
