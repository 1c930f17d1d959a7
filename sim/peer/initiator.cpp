// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// The simulated iWARP initiator: TCP (RFC 793 / 5961 subset, as Linux behaves) + MPA request,
// reply parsing as siw/irdma do. See include/bouncer/peer/initiator.hpp and README.md.
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
constexpr size_t kSynOptLen = 8;           // MSS(4) NOP(1) WS(3), as Linux without SACK/timestamps
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

Initiator::Initiator(InitiatorConfig cfg)
    : cfg_(std::move(cfg)),
      ip_id_(cfg_.ip_id),
      rto_deadline_(kOff),
      reply_deadline_(kOff),
      close_deadline_(kOff),
      tw_deadline_(kOff),
      rto_cur_(cfg_.rto_cycles) {
  if (cfg_.rto_cycles == 0) throw std::invalid_argument("bouncer::peer: rto_cycles is 0");
  using Fault = InitiatorConfig::Fault;
  const bool enh = cfg_.mpa_rev == 2 && cfg_.enhanced;
  std::vector<uint8_t> pd = cfg_.private_data;
  size_t pd_length = pd.size() + (enh ? kMpaIrdOrdLen : 0);
  if (cfg_.fault == Fault::kPdTooLong) {
    if (pd_length < kFaultPdLength) {
      pd.resize(pd.size() + (kFaultPdLength - pd_length), 0);
      pd_length = kFaultPdLength;
    }
    if (pd_length > 0xFFFF) throw std::invalid_argument("bouncer::peer: PD over 65535 bytes");
  } else if (pd_length > kMpaPdMax) {
    throw std::invalid_argument("bouncer::peer: request PD_Length " + std::to_string(pd_length) +
                                " > 512");
  }
  const std::string_view key = cfg_.fault == Fault::kBadKey ? kMpaKeyBad : kMpaKeyRequest;
  req_.assign(key.begin(), key.end());
  req_.push_back(static_cast<uint8_t>((cfg_.markers ? kMpaFlagMarkers : 0) |
                                      (cfg_.crc ? kMpaFlagCrc : 0) | (enh ? kMpaFlagEnhanced : 0)));
  req_.push_back(cfg_.fault == Fault::kRev3 ? uint8_t{3} : cfg_.mpa_rev);
  append16(req_, static_cast<uint16_t>(pd_length));
  if (enh) append32(req_, cfg_.ird_ord);
  req_.insert(req_.end(), pd.begin(), pd.end());
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

uint64_t Initiator::next_deadline() const {
  if (!txq_.empty()) return last_cycle_;
  return std::min({rto_deadline_, reply_deadline_, close_deadline_, tw_deadline_});
}

uint32_t Initiator::rcv_wnd() const {
  const unsigned shift = ws_ok_ ? std::min<unsigned>(cfg_.wscale, 14) : 0;
  return static_cast<uint32_t>(cfg_.window) << shift;
}

// ---------------------------------------------------------------------------------------------
// Frame building

std::vector<uint8_t> Initiator::build(uint32_t seq, uint32_t ack, uint8_t flags, uint16_t ip_id,
                                      std::span<const uint8_t> payload, bool syn_options) const {
  const size_t opt_len = syn_options ? kSynOptLen : 0;
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
    f[p++] = 1;  // NOP
    f[p++] = 3;  // window scale
    f[p++] = 3;
    f[p++] = cfg_.wscale;
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
  queue_seg(s, false);
}

void Initiator::advance(uint64_t cycle) {
  last_cycle_ = std::max(last_cycle_, cycle);
  for (;;) {
    const uint64_t t = std::min({rto_deadline_, reply_deadline_, close_deadline_, tw_deadline_});
    if (t == kOff || t > cycle) return;
    // A timer fires at its own deadline, so late polling does not shift the schedule.
    if (t == rto_deadline_) {
      on_rto(t);
    } else if (t == reply_deadline_) {
      reply_deadline_ = kOff;
      fail("no MPA reply within reply_timeout_cycles", true, t);
    } else if (t == close_deadline_) {
      close(t);
    } else {
      tw_deadline_ = kOff;
      finish(State::kDone, t);
    }
  }
}

void Initiator::on_rto(uint64_t cycle) {
  if (rtxq_.empty()) {
    rto_deadline_ = kOff;
    return;
  }
  if (backoff_ >= cfg_.max_retransmits) {
    // Linux gives up without sending anything (tcp_write_err -> tcp_done).
    fail(std::string("retransmissions exhausted in ") + to_string(out_.state), false, cycle);
    return;
  }
  ++backoff_;
  rto_cur_ *= 2;
  rto_deadline_ = cycle + rto_cur_;
  for (const Seg& s : rtxq_) {
    queue_seg(s, true);
    ++out_.retransmits;
  }
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
    if (out_.state == State::kEstablished && !reply_done_ && cfg_.reply_timeout_cycles != 0) {
      reply_deadline_ = cycle + cfg_.reply_timeout_cycles;
    }
  }
  if (item.rst) out_.rst_cycle = cycle;
  return std::move(item.frame);
}

void Initiator::finish(State s, uint64_t cycle) {
  out_.state = s;
  out_.closed_cycle = cycle;
  rto_deadline_ = reply_deadline_ = close_deadline_ = tw_deadline_ = kOff;
  rtxq_.clear();
  ooo_.clear();
}

void Initiator::fail(std::string why, bool send_reset, uint64_t cycle) {
  if (out_.error.empty()) out_.error = std::move(why);
  if (send_reset) send_rst();
  finish(State::kFailed, cycle);
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
  if (ack && s.ack != snd_nxt_) {
    if ((s.flags & kTcpRst) == 0) {  // RFC 793: <SEQ=SEG.ACK><CTL=RST>
      ++out_.stats.bad_ack_in_syn_sent;
      TxItem item;
      item.frame = build(s.ack, 0, kTcpRst, next_ip_id(), {}, false);
      txq_.push_back(std::move(item));
    } else {
      ++out_.stats.ignored;
    }
    return;
  }
  if ((s.flags & kTcpRst) != 0) {
    if (!ack) {
      ++out_.stats.ignored;
      return;
    }
    out_.rst_received = true;
    out_.rst_cycle = cycle;
    out_.error = "connection refused: RST in SYN_SENT";
    finish(State::kReset, cycle);
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
  switch (cfg_.fault) {
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

void Initiator::on_segment(const Rx& s, uint64_t cycle) {
  Stats& st = out_.stats;
  const State prev = out_.state;
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
      out_.rst_received = true;
      out_.rst_cycle = cycle;
      out_.error = std::string("connection reset by peer in ") + to_string(prev);
      finish(State::kReset, cycle);
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
  if (seq_gt(s.ack, snd_nxt_)) {
    ++st.ack_beyond_snd_nxt;
    queue_ack();
    return;
  }
  if (seq_gt(s.ack, snd_una_)) {
    snd_una_ = s.ack;
    std::erase_if(rtxq_, [this](const Seg& g) { return seq_le(g.end(), snd_una_); });
    backoff_ = 0;
    rto_cur_ = cfg_.rto_cycles;
    rto_deadline_ = rtxq_.empty() ? kOff : cycle + rto_cur_;
  }
  snd_wnd_ = static_cast<uint32_t>(s.window) << (ws_ok_ ? out_.peer_wscale.value_or(0) : 0);
  const bool our_fin_acked = fin_sent_ && seq_gt(snd_una_, fin_seq_);

  bool need_ack = false, fin_now = false;
  accept_data(s, need_ack, fin_now);
  if (need_ack) queue_ack();

  if (out_.state == State::kEstablished && !reply_done_) {
    try_parse_reply(cycle);
    if (reply_done_ && fin_now) out_.reply_had_fin = true;
    if (terminal()) return;
  }
  if (out_.state != prev) return;  // the reply moved us on (close() handled a FIN too)

  auto enter_time_wait = [&] {
    out_.state = State::kTimeWait;
    rtxq_.clear();
    rto_deadline_ = kOff;
    tw_deadline_ = cycle + cfg_.time_wait_cycles;
  };
  switch (prev) {
    case State::kEstablished:
      if (fin_now) {  // the peer closed without (a complete) MPA reply
        out_.error = "peer closed the connection before a complete MPA reply";
        reply_deadline_ = kOff;
        close(cycle);
      }
      break;
    case State::kFinWait1:
      if (our_fin_acked) {
        if (fin_now) {
          enter_time_wait();
        } else {
          out_.state = State::kFinWait2;
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
      break;  // kReplyReceived: a FIN is remembered in out_.peer_fin for close()
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
  if (reply_done_ || out_.state != State::kEstablished) return;
  rx_.insert(rx_.end(), data.begin(), data.end());
}

// siw_proc_mpareply order: Rev, key, then the R bit; PD_Length as siw_recv_mpa_rr/irdma.
void Initiator::try_parse_reply(uint64_t cycle) {
  if (rx_.size() < kMpaHeaderLen) return;
  const std::span<const uint8_t> m(rx_);
  out_.reply_flags = m[16];
  out_.reply_rev = m[17];
  out_.reply_pd_length = get16(m, 18);
  const size_t pdl = out_.reply_pd_length;
  if (out_.reply_rev > 2) {
    return fail("MPA reply Rev " + std::to_string(out_.reply_rev) + " > 2", true, cycle);
  }
  if (!std::equal(kMpaKeyReply.begin(), kMpaKeyReply.end(), m.begin())) {
    return fail("MPA reply key is not \"MPA ID Rep Frame\"", true, cycle);
  }
  if (pdl > kMpaPdMax) {
    return fail("MPA reply PD_Length " + std::to_string(pdl) + " > 512", true, cycle);
  }
  if (m.size() < kMpaHeaderLen + pdl) return;  // wait for the rest of the private data
  const bool enh = out_.reply_rev == 2 && (out_.reply_flags & kMpaFlagEnhanced) != 0;
  if (enh && pdl < kMpaIrdOrdLen) {
    return fail("enhanced MPA reply with PD_Length " + std::to_string(pdl) + " < 4", true, cycle);
  }
  if (enh) out_.reply_ird_ord = get32(m, kMpaHeaderLen);
  if (cfg_.strict_ird_ord && out_.reply_rev == 2) {
    if (pdl < kMpaIrdOrdLen) return fail("rev-2 MPA reply without IRD/ORD word", true, cycle);
    const uint32_t w = get32(m, kMpaHeaderLen);
    if ((w & 0x80000000u) == 0) return fail("reply IRD/ORD lacks the P2P bit", true, cycle);
    if ((w & 0xC000u) == 0) return fail("reply IRD/ORD has no RTR bit", true, cycle);
  }
  reply_done_ = true;
  reply_deadline_ = kOff;
  out_.reply_cycle = cycle;
  if ((out_.reply_flags & kMpaFlagReject) != 0) {
    out_.rejected = true;
    const size_t skip = kMpaHeaderLen + (enh ? kMpaIrdOrdLen : 0);
    out_.reject_pd.assign(m.begin() + static_cast<std::ptrdiff_t>(skip),
                          m.begin() + static_cast<std::ptrdiff_t>(kMpaHeaderLen + pdl));
  } else {
    out_.accepted = true;
  }
  after_reply(cycle);
}

void Initiator::after_reply(uint64_t cycle) {
  out_.state = State::kReplyReceived;
  if (cfg_.close_delay_cycles == 0) {
    close(cycle);
  } else {
    close_deadline_ = cycle + cfg_.close_delay_cycles;
  }
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
