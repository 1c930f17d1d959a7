// Independent parser/validator for MPA reply frames (Ethernet [802.1Q] IPv4 TCP MPA).
//
// Shares no code with the builder (reject_frame.cpp): its checksum routine is written
// differently on purpose so that one bug cannot hide in both.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "golden/reject_frame.hpp"

namespace golden {

struct ParsedReject {
  // Ethernet / 802.1Q
  std::array<uint8_t, 6> dst_mac{}, src_mac{};
  bool vlan = false;
  uint16_t vlan_tci = 0;
  // IPv4
  uint8_t tos = 0, ttl = 0;
  uint16_t ip_total_length = 0, ip_id = 0, ip_flags_frag = 0;
  uint32_t src_ip = 0, dst_ip = 0;  // host-order integers
  // TCP
  uint16_t src_port = 0, dst_port = 0;
  uint32_t seq = 0, ack = 0;
  uint8_t tcp_data_offset = 0;  // in 32-bit words
  uint8_t tcp_flags = 0;
  uint16_t window = 0, urgent = 0;
  // MPA
  bool key_reply_ok = false;    // key == "MPA ID Rep Frame"
  bool key_request_ok = false;  // key == "MPA ID Req Frame"
  uint8_t mpa_flags = 0, rev = 0;
  uint16_t pd_length = 0;
  bool enhanced = false;              // rev 2 && (flags & 0x10)
  std::optional<uint32_t> ird_ord;    // present iff enhanced
  std::vector<uint8_t> private_data;  // excluding the IRD/ORD word
  size_t mpa_len = 0;                 // 20 + PD_Length
};

// Decodes and validates one frame (no FCS). Fails (nullopt, reason in *why if non-null) on:
// truncation, EtherType other than IPv4 (after an optional 802.1Q tag), IPv4 version != 4 or
// IHL < 5, bad IPv4 header checksum, IP total length != bytes present, fragments, protocol
// != TCP, TCP data offset < 5 or beyond the segment, bad TCP checksum, TCP payload shorter
// than the 20-byte MPA header, PD_Length > 512, TCP payload length != 20 + PD_Length,
// enhanced with PD_Length < 4. The key is reported (key_*_ok), not required.
std::optional<ParsedReject> parse_mpa_reply(std::span<const uint8_t> frame, std::string* why);

// True if the 20-byte-or-longer IPv4 header's checksum verifies (sum over the header == 0xFFFF).
bool ipv4_header_checksum_ok(std::span<const uint8_t> ip_header);

// Field-by-field check of a parsed frame against the contract for the given inputs
// (docs/reject-frame.md), without building the expected bytes. Returns true if all match;
// otherwise false with the first mismatch in *why.
bool reject_matches_params(const ParsedReject& r, const RejectParams& p, std::string* why);

// ---- Any TCP segment (for captures holding both directions of a connection)

// One Ethernet [802.1Q] IPv4 TCP frame, decoded and validated (see parse_tcp_segment).
struct ParsedSegment {
  std::array<uint8_t, 6> dst_mac{}, src_mac{};
  bool vlan = false;
  uint16_t vlan_tci = 0;
  uint8_t tos = 0, ttl = 0;
  uint16_t ip_total_length = 0, ip_id = 0, ip_flags_frag = 0;
  uint32_t src_ip = 0, dst_ip = 0;  // host-order integers
  uint16_t src_port = 0, dst_port = 0;
  uint32_t seq = 0, ack = 0;
  uint8_t tcp_data_offset = 0;  // in 32-bit words
  uint8_t tcp_flags = 0;
  uint16_t window = 0, urgent = 0;
  std::optional<uint16_t> mss;    // TCP option 2
  std::optional<uint8_t> wscale;  // TCP option 3 (shift as sent)
  std::vector<uint8_t> payload;   // TCP payload
  size_t eth_padding = 0;         // bytes after the IP datagram (minimum-frame padding)
};

// Decodes and validates one frame (no FCS), whatever its TCP flags and payload. Fails
// (nullopt, reason in *why if non-null) on: truncation, EtherType other than IPv4 (after an
// optional 802.1Q tag), IPv4 version != 4 or IHL < 5, bad IPv4 header checksum, IP total
// length beyond the bytes present, bytes after the datagram unless the frame is exactly a
// padded minimum frame (kEthMinFrame = 60 bytes), fragments, protocol != TCP, TCP data offset
// < 5 or beyond the segment, bad TCP checksum, malformed TCP options (a length below 2 or
// past the header; MSS not 4 bytes long, window scale not 3).
std::optional<ParsedSegment> parse_tcp_segment(std::span<const uint8_t> frame, std::string* why);

// What the first 16 bytes of a TCP payload are: the MPA request key, the reply key, or
// neither (also when the payload is shorter than 16 bytes).
enum class MpaKey : uint8_t { kNone, kRequest, kReply };
MpaKey mpa_key_of(std::span<const uint8_t> tcp_payload);

}  // namespace golden
