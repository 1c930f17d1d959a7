#include "golden/reject_frame.hpp"

#include <algorithm>
#include <cstring>

namespace golden {
namespace {

constexpr std::array<uint8_t, 16> kKeyReply = {'M', 'P', 'A', ' ', 'I', 'D', ' ', 'R',
                                               'e', 'p', ' ', 'F', 'r', 'a', 'm', 'e'};
constexpr std::array<uint8_t, 16> kKeyRequest = {'M', 'P', 'A', ' ', 'I', 'D', ' ', 'R',
                                                 'e', 'q', ' ', 'F', 'r', 'a', 'm', 'e'};

constexpr size_t kEthLen = 14;
constexpr size_t kVlanLen = 4;
constexpr size_t kIpLen = 20;
constexpr size_t kTcpLen = 20;

void put16(std::vector<uint8_t>& v, uint16_t x) {
  v.push_back(static_cast<uint8_t>(x >> 8));
  v.push_back(static_cast<uint8_t>(x));
}

void put32(std::vector<uint8_t>& v, uint32_t x) {
  put16(v, static_cast<uint16_t>(x >> 16));
  put16(v, static_cast<uint16_t>(x));
}

void poke16(std::vector<uint8_t>& v, size_t off, uint16_t x) {
  v[off] = static_cast<uint8_t>(x >> 8);
  v[off + 1] = static_cast<uint8_t>(x);
}

// Ones' complement sum of big-endian 16-bit words, folded to 16 bits (not complemented).
uint16_t ones_sum16(std::span<const uint8_t> data, uint16_t start) {
  uint16_t acc = start;
  auto add = [&acc](uint16_t w) {
    const uint32_t s = static_cast<uint32_t>(acc) + w;
    acc = static_cast<uint16_t>((s & 0xFFFF) + (s >> 16));  // end-around carry
  };
  size_t i = 0;
  for (; i + 1 < data.size(); i += 2) add(static_cast<uint16_t>(data[i] << 8 | data[i + 1]));
  if (i < data.size()) add(static_cast<uint16_t>(data[i] << 8));
  return acc;
}

// One segment: who sends it and what it carries.
struct Segment {
  Mac src_mac, dst_mac;
  bool vlan_en;
  uint16_t vlan_tci;
  uint32_t src_ip, dst_ip;
  uint8_t tos, ttl;
  uint16_t ip_id;
  uint16_t src_port, dst_port;
  uint32_t seq, ack;
  uint8_t tcp_flags;
  uint16_t window;
};

std::vector<uint8_t> assemble(const Segment& s, std::span<const uint8_t> payload) {
  std::vector<uint8_t> f;
  f.reserve(kEthLen + kVlanLen + kIpLen + kTcpLen + payload.size());
  f.insert(f.end(), s.dst_mac.b.begin(), s.dst_mac.b.end());
  f.insert(f.end(), s.src_mac.b.begin(), s.src_mac.b.end());
  if (s.vlan_en) {
    put16(f, 0x8100);
    put16(f, s.vlan_tci);
  }
  put16(f, 0x0800);

  const size_t l3 = f.size();
  const size_t tcp_len = kTcpLen + payload.size();
  f.push_back(0x45);
  f.push_back(s.tos);
  put16(f, static_cast<uint16_t>(kIpLen + tcp_len));
  put16(f, s.ip_id);
  put16(f, 0x4000);  // DF, fragment offset 0
  f.push_back(s.ttl);
  f.push_back(6);  // TCP
  put16(f, 0);     // header checksum, filled below
  put32(f, s.src_ip);
  put32(f, s.dst_ip);
  poke16(f, l3 + 10, internet_checksum(std::span<const uint8_t>(f).subspan(l3, kIpLen)));

  const size_t l4 = f.size();
  put16(f, s.src_port);
  put16(f, s.dst_port);
  put32(f, s.seq);
  put32(f, s.ack);
  f.push_back(0x50);  // data offset 5, no options
  f.push_back(s.tcp_flags);
  put16(f, s.window);
  put16(f, 0);  // checksum, filled below
  put16(f, 0);  // urgent pointer
  f.insert(f.end(), payload.begin(), payload.end());

  std::vector<uint8_t> pseudo;
  put32(pseudo, s.src_ip);
  put32(pseudo, s.dst_ip);
  put16(pseudo, 6);
  put16(pseudo, static_cast<uint16_t>(tcp_len));
  const uint16_t partial = ones_sum16(pseudo, 0);
  const uint16_t sum = ones_sum16(std::span<const uint8_t>(f).subspan(l4), partial);
  poke16(f, l4 + 16, static_cast<uint16_t>(~sum));
  return f;
}

}  // namespace

uint16_t internet_checksum(std::span<const uint8_t> data) {
  return static_cast<uint16_t>(~ones_sum16(data, 0));
}

bool is_enhanced(uint8_t rev, uint8_t flags) { return rev == 2 && (flags & kMpaFlagEnhanced) != 0; }

uint32_t default_reply_ird_ord(uint32_t req_ird_ord) {
  const uint16_t req_ord = static_cast<uint16_t>(req_ird_ord);
  uint16_t rtr = 0x4000;  // RDMA Read RTR unless only Write RTR was requested
  if ((req_ord & 0x4000) == 0 && (req_ord & 0x8000) != 0) rtr = 0x8000;
  const uint32_t ctrl_ird = 0x8000 | 0x3FFF;
  const uint32_t ctrl_ord = rtr | 0x3FFF;
  return ctrl_ird << 16 | ctrl_ord;
}

uint8_t reply_mpa_flags(const RejectParams& p) {
  uint8_t f =
      static_cast<uint8_t>((p.req_flags & (kMpaFlagMarkers | kMpaFlagCrc)) | kMpaFlagReject);
  if (is_enhanced(p.req_rev, p.req_flags)) f |= kMpaFlagEnhanced;
  return f;
}

uint16_t reply_pd_length(const RejectParams& p) {
  const size_t n = p.pd.size() + (is_enhanced(p.req_rev, p.req_flags) ? kMpaIrdOrdLen : 0);
  return static_cast<uint16_t>(n);
}

size_t mpa_reply_len(const RejectParams& p) {
  return kMpaHeaderLen + p.pd.size() + (is_enhanced(p.req_rev, p.req_flags) ? kMpaIrdOrdLen : 0);
}

uint32_t reject_seq_advance(const RejectParams& p) {
  return static_cast<uint32_t>(mpa_reply_len(p)) + (p.fin ? 1u : 0u);
}

RejectStatus validate_reject(const RejectParams& p) {
  if (p.req_rev != 1 && p.req_rev != 2) return RejectStatus::kBadRev;
  const size_t pd_length = p.pd.size() + (is_enhanced(p.req_rev, p.req_flags) ? kMpaIrdOrdLen : 0);
  if (pd_length > kMpaPdMax) return RejectStatus::kPdTooLong;
  return RejectStatus::kOk;
}

namespace {

// The MPA reply bytes: key, flags, rev, PD_Length, [IRD/ORD], PD.
std::vector<uint8_t> mpa_reply_bytes(const RejectParams& p) {
  std::vector<uint8_t> mpa(kKeyReply.begin(), kKeyReply.end());
  mpa.push_back(reply_mpa_flags(p));
  mpa.push_back(p.req_rev);
  put16(mpa, reply_pd_length(p));
  if (is_enhanced(p.req_rev, p.req_flags))
    put32(mpa, p.ird_ord_override.value_or(default_reply_ird_ord(p.req_ird_ord)));
  mpa.insert(mpa.end(), p.pd.begin(), p.pd.end());
  return mpa;
}

// Our side of the connection, as segment k of the reject (with FIN when `fin`).
Segment reject_segment(const RejectParams& p, uint32_t offset, uint16_t k, bool fin) {
  return Segment{.src_mac = p.loc_mac,
                 .dst_mac = p.rem_mac,
                 .vlan_en = p.vlan_en,
                 .vlan_tci = p.vlan_tci,
                 .src_ip = p.loc_ip,
                 .dst_ip = p.rem_ip,
                 .tos = p.tos,
                 .ttl = p.ttl,
                 .ip_id = static_cast<uint16_t>(p.ip_id + k),
                 .src_port = p.loc_port,
                 .dst_port = p.rem_port,
                 .seq = p.snd_nxt + offset,
                 .ack = p.rcv_nxt,
                 .tcp_flags = static_cast<uint8_t>(kTcpAck | kTcpPsh | (fin ? kTcpFin : 0)),
                 .window = p.rcv_wnd};
}

}  // namespace

std::vector<uint8_t> build_mpa_reject_frame(const RejectParams& p) {
  if (validate_reject(p) != RejectStatus::kOk) return {};
  return assemble(reject_segment(p, 0, 0, p.fin), mpa_reply_bytes(p));
}

size_t reject_segment_count(const RejectParams& p, size_t mss) {
  const size_t m = mpa_reply_len(p);
  if (mss == 0 || mss >= m) return 1;
  return (m + mss - 1) / mss;
}

std::vector<std::vector<uint8_t>> build_mpa_reject_segments(const RejectParams& p, size_t mss) {
  std::vector<std::vector<uint8_t>> out;
  if (validate_reject(p) != RejectStatus::kOk) return out;
  const std::vector<uint8_t> mpa = mpa_reply_bytes(p);
  const size_t piece = (mss == 0) ? mpa.size() : mss;
  const std::span<const uint8_t> all(mpa);
  for (size_t off = 0, k = 0; off < mpa.size(); off += piece, ++k) {
    const size_t len = std::min(piece, mpa.size() - off);
    const bool last = off + len == mpa.size();
    out.push_back(assemble(
        reject_segment(p, static_cast<uint32_t>(off), static_cast<uint16_t>(k), last && p.fin),
        all.subspan(off, len)));
  }
  return out;
}

size_t mpa_request_payload_len(const RejectParams& p, size_t req_pd_len) {
  return kMpaHeaderLen + req_pd_len + (is_enhanced(p.req_rev, p.req_flags) ? kMpaIrdOrdLen : 0);
}

std::vector<uint8_t> build_mpa_request_frame(const RejectParams& p,
                                             std::span<const uint8_t> req_pd) {
  const bool enh = is_enhanced(p.req_rev, p.req_flags);
  std::vector<uint8_t> mpa(kKeyRequest.begin(), kKeyRequest.end());
  mpa.push_back(p.req_flags);
  mpa.push_back(p.req_rev);
  put16(mpa, static_cast<uint16_t>(req_pd.size() + (enh ? kMpaIrdOrdLen : 0)));
  if (enh) put32(mpa, p.req_ird_ord);
  mpa.insert(mpa.end(), req_pd.begin(), req_pd.end());

  const uint32_t len = static_cast<uint32_t>(mpa_request_payload_len(p, req_pd.size()));
  const Segment s{.src_mac = p.rem_mac,
                  .dst_mac = p.loc_mac,
                  .vlan_en = p.vlan_en,
                  .vlan_tci = p.vlan_tci,
                  .src_ip = p.rem_ip,
                  .dst_ip = p.loc_ip,
                  .tos = p.tos,
                  .ttl = p.ttl,
                  .ip_id = static_cast<uint16_t>(p.ip_id ^ 0x8000),
                  .src_port = p.rem_port,
                  .dst_port = p.loc_port,
                  .seq = p.rcv_nxt - len,
                  .ack = p.snd_nxt,
                  .tcp_flags = static_cast<uint8_t>(kTcpAck | kTcpPsh),
                  .window = p.rcv_wnd};
  return assemble(s, mpa);
}

}  // namespace golden
