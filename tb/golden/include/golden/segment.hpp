// Test-side TCP segments both ways: one builder of Ethernet [802.1Q] / IPv4 / TCP frames with
// the knobs hostile inputs need (any field, wrong lengths, options, corrupted checksums), and
// one lenient decoder that reports what a frame says, checksums included, without refusing
// it for a bad checksum (parse_tcp_segment in frame_parser.hpp is the strict one).
//
// Independent of rtl/, hostsw/ and sim/: plain structs in and out. The builder's checksums
// come from reject_frame.cpp's internet_checksum, the decoder's from frame_parser.cpp's own
// routine, so one checksum bug cannot both build a wrong frame and accept it.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace golden {

// Everything a frame builder may set. Defaults: a well-formed segment (IPv4 version 4, DF,
// protocol 6, IHL and data offset from the options, lengths and checksums right), padded to
// the 60-byte Ethernet minimum. Addresses and ports are the caller's.
struct SegmentSpec {
  std::array<uint8_t, 6> dst_mac{}, src_mac{};
  std::optional<uint16_t> vlan;  // 802.1Q TCI: tag 0x8100 before the EtherType
  uint16_t ethertype = 0x0800;
  uint8_t version = 4;
  std::optional<uint8_t> ihl;  // IHL nibble; unset: 5 + ip_opts / 4
  std::vector<uint8_t> ip_opts;
  uint8_t tos = 0;
  uint16_t ip_id = 0x4000;
  uint16_t frag = 0x4000;  // flags + fragment offset: DF
  uint8_t ttl = 64, proto = 6;
  uint32_t src_ip = 0, dst_ip = 0;    // host-order integers
  std::optional<uint16_t> total_len;  // unset: the bytes built
  uint16_t sport = 0, dport = 0;
  uint32_t seq = 0, ack = 0;
  uint8_t flags = 0;
  std::optional<uint8_t> doff;  // data offset nibble; unset: 5 + tcp_opts / 4
  std::vector<uint8_t> tcp_opts;
  uint16_t window = 0xFFFF;
  std::vector<uint8_t> payload;
  uint16_t ip_csum_xor = 0, tcp_csum_xor = 0;  // XORed into the right checksums
  bool pad = true;                             // zero bytes up to 60
};

// The frame's bytes (no FCS).
std::vector<uint8_t> build_segment(const SegmentSpec& spec);

// The internet checksum over the TCP pseudo-header (source, destination, protocol 6, the
// segment's length) and `segment` (TCP header and payload): 0 when the segment's checksum
// field is right, the value to put there when that field is zero. The builder's routine.
uint16_t tcp_checksum(uint32_t src_ip, uint32_t dst_ip, std::span<const uint8_t> segment);

// One frame as decode_segment reads it.
struct DecodedSegment {
  std::array<uint8_t, 6> dst_mac{}, src_mac{};
  std::optional<uint16_t> vlan_tci;
  uint8_t tos = 0, ttl = 0;
  uint16_t ip_id = 0, ip_frag = 0;
  uint32_t src_ip = 0, dst_ip = 0;
  uint16_t sport = 0, dport = 0;
  uint32_t seq = 0, ack = 0;
  uint8_t flags = 0;
  uint16_t window = 0;
  std::optional<uint16_t> mss;
  std::optional<uint8_t> wscale;
  std::vector<uint8_t> payload;
  bool ip_csum_ok = false, tcp_csum_ok = false;
};

// Ethernet [802.1Q] IPv4 TCP, any IHL, TCP options MSS / WS recognized (a malformed option
// ends the list). nullopt (reason in *why if non-null) for anything else or a truncated
// frame. Checksums are reported, not required; bytes after the IP datagram are ignored.
std::optional<DecodedSegment> decode_segment(std::span<const uint8_t> frame, std::string* why);

}  // namespace golden
