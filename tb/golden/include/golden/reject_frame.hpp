// Golden reference model of the MPA reject frame (docs/reject-frame.md).
//
// Independent of rtl/ and hostsw/: plain structs in, exact wire bytes out. The frame is the
// Ethernet frame without FCS, byte 0 = first byte on the wire.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace golden {

inline constexpr size_t kMpaHeaderLen = 20;  // key(16) + flags + rev + PD_Length(2)
inline constexpr size_t kMpaIrdOrdLen = 4;   // RFC 6581 IRD/ORD word
inline constexpr size_t kMpaPdMax = 512;     // MPA_PD_MAX: maximum PD_Length
inline constexpr uint8_t kMpaFlagMarkers = 0x80;
inline constexpr uint8_t kMpaFlagCrc = 0x40;
inline constexpr uint8_t kMpaFlagReject = 0x20;
inline constexpr uint8_t kMpaFlagEnhanced = 0x10;
inline constexpr uint8_t kTcpFin = 0x01;
inline constexpr uint8_t kTcpPsh = 0x08;
inline constexpr uint8_t kTcpAck = 0x10;

struct Mac {
  std::array<uint8_t, 6> b{};  // b[0] is the first byte on the wire
};

struct RejectParams {
  Mac rem_mac, loc_mac;
  bool vlan_en = false;
  uint16_t vlan_tci = 0;
  uint32_t loc_ip = 0, rem_ip = 0;  // host-order integers, e.g. 0x0A000001 = 10.0.0.1
  uint8_t tos = 0, ttl = 64;
  uint16_t ip_id = 0;
  uint16_t loc_port = 0, rem_port = 0;
  uint32_t snd_nxt = 0, rcv_nxt = 0;
  uint16_t rcv_wnd = 0;
  uint8_t req_rev = 1, req_flags = 0;
  uint32_t req_ird_ord = 0;
  std::optional<uint32_t> ird_ord_override;
  bool fin = false;
  std::vector<uint8_t> pd;
};

// Why a reject cannot be built (the WQE fails and nothing is sent).
enum class RejectStatus { kOk, kBadRev, kPdTooLong };

// kBadRev if req_rev is not 1 or 2; kPdTooLong if PD_Length would exceed kMpaPdMax.
RejectStatus validate_reject(const RejectParams& p);

// Exact frame bytes per docs/reject-frame.md, no FCS. Returns an empty vector when
// validate_reject(p) != RejectStatus::kOk.
std::vector<uint8_t> build_mpa_reject_frame(const RejectParams& p);

// The reject as TCP segments whose payload is at most `mss` bytes (RFC 9293 3.7.1: the
// peer's MSS bounds every segment we send). The MPA reply (M = mpa_reply_len(p) bytes) is cut
// into ceil(M / mss) pieces, all but the last exactly mss bytes; segment k carries the reply
// bytes from k * mss, with sequence number SND_NXT + k * mss, IPv4 identification IP_ID + k
// (mod 2^16), flags ACK|PSH, FIN on the last segment only (when p.fin), and its own IPv4 and
// TCP checksums; everything else as in build_mpa_reject_frame. mss == 0 means no bound: one
// segment, equal to build_mpa_reject_frame(p) (as is any mss >= M). Returns no segments when
// validate_reject(p) != RejectStatus::kOk.
std::vector<std::vector<uint8_t>> build_mpa_reject_segments(const RejectParams& p, size_t mss);

// ceil(mpa_reply_len(p) / mss), 1 when mss == 0 (the number of segments above).
size_t reject_segment_count(const RejectParams& p, size_t mss);

// The IRD/ORD word sent when the WQE carries no override (ctrl_ird << 16 | ctrl_ord).
uint32_t default_reply_ird_ord(uint32_t req_ird_ord);

// RFC 6581 enhanced connection setup: rev 2 with the 0x10 flag.
bool is_enhanced(uint8_t rev, uint8_t flags);

// The MPA reply's flags byte, PD_Length and total length M (= 20 + PD_Length).
uint8_t reply_mpa_flags(const RejectParams& p);
uint16_t reply_pd_length(const RejectParams& p);
size_t mpa_reply_len(const RejectParams& p);

// Sequence space consumed by the reject: M, +1 with FIN (SND_NXT advances by this).
uint32_t reject_seq_advance(const RejectParams& p);

// The peer's side, for building a readable capture: the MPA request segment the initiator
// would have sent on this connection (peer->us: src=rem, dst=loc, seq=rcv_nxt - request_len,
// ack=snd_nxt, flags ACK|PSH, key "MPA ID Req Frame", flags=req_flags, rev=req_rev,
// PD_Length = req_pd.size() (+4 and the req_ird_ord word when enhanced)). Its IPv4
// identification is ip_id ^ 0x8000 so the two directions never share an ID.
std::vector<uint8_t> build_mpa_request_frame(const RejectParams& p,
                                             std::span<const uint8_t> req_pd);

// The request's length in sequence space, so callers can set rcv_nxt consistently.
size_t mpa_request_payload_len(const RejectParams& p, size_t req_pd_len);

// RFC 1071 Internet checksum (ones' complement of the ones' complement 16-bit sum) of
// `data`, big-endian words, odd trailing byte padded with 0. Checksum fields must be 0.
uint16_t internet_checksum(std::span<const uint8_t> data);

}  // namespace golden
