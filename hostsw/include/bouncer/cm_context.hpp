// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// The connection context (regs cm_ctx): what the hardware needs to answer one MPA request.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "bouncer/regs.hpp"

namespace bouncer {

using MacAddr = std::array<uint8_t, 6>;  // [0] is the first byte on the wire

/// All cm_ctx fields as plain host-order integers; the hardware produces network order.
struct CmContext {
  MacAddr rem_mac{};  // peer MAC: frame destination
  MacAddr loc_mac{};  // our MAC: frame source
  bool vlan_en = false;
  uint16_t vlan_tci = 0;  // PCP 15:13, DEI 12, VID 11:0
  bool valid = true;      // CTX_VALID; writing false frees the entry
  bool rejected = false;  // set by hardware after the reject was sent
  uint32_t loc_ip = 0;    // e.g. 0x0A000001 = 10.0.0.1
  uint32_t rem_ip = 0;
  uint16_t loc_port = 0;
  uint16_t rem_port = 0;
  uint16_t rcv_wnd = 0xFFFF;
  uint8_t ttl = 64;
  uint8_t tos = 0;
  uint32_t snd_nxt = 0;      // our next sequence number (hardware advances it)
  uint32_t rcv_nxt = 0;      // byte after the peer's MPA request
  uint8_t req_rev = 2;       // MPA Rev of the request (1 or 2)
  uint8_t req_flags = 0;     // request flags: M 0x80, C 0x40, enhanced 0x10
  uint16_t ip_id = 0;        // IPv4 ID of the next frame (hardware increments it)
  uint32_t req_ird_ord = 0;  // request's ctrl_ird << 16 | ctrl_ord (rev 2 enhanced only)
  /// The peer's MSS: no reject segment carries more payload (a longer reject is split).
  /// 0 means 536, TCP's default, which every reject (at most 532 bytes) fits.
  uint16_t peer_mss = 0;

  bool operator==(const CmContext&) const = default;

  /// RFC 6581 enhanced: rev 2 with the 0x10 flag. The reply then carries the IRD/ORD word.
  bool enhanced() const { return req_rev == 2 && (req_flags & kMpaFlagEnhanced) != 0; }
  /// PD_Length on the wire for `pd_len` bytes of private data (+4 when enhanced).
  uint32_t wire_pd_len(size_t pd_len) const {
    return static_cast<uint32_t>(pd_len) + (enhanced() ? 4u : 0u);
  }

  /// The 64-byte little-endian image the CQP WRITE_CM_CONTEXT DMA-reads.
  std::array<std::byte, regs::kCmCtxBytes> pack() const;
  /// Decodes an image (at least 64 bytes), e.g. from READ_CM_CONTEXT.
  static CmContext unpack(std::span<const std::byte> image);

  static constexpr uint8_t kMpaFlagEnhanced = 0x10;
};

/// MAC <-> 48-bit field: byte 0 of the address in bits 47:40.
uint64_t mac_to_field(const MacAddr& mac);
MacAddr mac_from_field(uint64_t v);

}  // namespace bouncer
