// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include "bouncer/cm_context.hpp"

namespace bouncer {

uint64_t mac_to_field(const MacAddr& mac) {
  uint64_t v = 0;
  for (uint8_t b : mac) v = (v << 8) | b;
  return v;
}

MacAddr mac_from_field(uint64_t v) {
  MacAddr mac{};
  for (int i = 5; i >= 0; --i) {
    mac[static_cast<size_t>(i)] = static_cast<uint8_t>(v & 0xFF);
    v >>= 8;
  }
  return mac;
}

std::array<std::byte, regs::kCmCtxBytes> CmContext::pack() const {
  namespace f = regs::cm_ctx;
  std::array<std::byte, regs::kCmCtxBytes> img{};
  std::span<std::byte> s(img);
  regs::put(s, f::REM_MAC, mac_to_field(rem_mac));
  regs::put(s, f::VLAN_TCI, vlan_tci);
  regs::put(s, f::LOC_MAC, mac_to_field(loc_mac));
  regs::put(s, f::VLAN_EN, vlan_en);
  regs::put(s, f::CTX_VALID, valid);
  regs::put(s, f::REJECTED, rejected);
  regs::put(s, f::LOC_IP, loc_ip);
  regs::put(s, f::REM_IP, rem_ip);
  regs::put(s, f::LOC_PORT, loc_port);
  regs::put(s, f::REM_PORT, rem_port);
  regs::put(s, f::RCV_WND, rcv_wnd);
  regs::put(s, f::TTL, ttl);
  regs::put(s, f::TOS, tos);
  regs::put(s, f::SND_NXT, snd_nxt);
  regs::put(s, f::RCV_NXT, rcv_nxt);
  regs::put(s, f::REQ_REV, req_rev);
  regs::put(s, f::REQ_FLAGS, req_flags);
  regs::put(s, f::IP_ID, ip_id);
  regs::put(s, f::REQ_IRD_ORD, req_ird_ord);
  regs::put(s, f::PEER_MSS, peer_mss);
  return img;
}

CmContext CmContext::unpack(std::span<const std::byte> s) {
  namespace f = regs::cm_ctx;
  CmContext c;
  c.rem_mac = mac_from_field(regs::get(s, f::REM_MAC));
  c.vlan_tci = static_cast<uint16_t>(regs::get(s, f::VLAN_TCI));
  c.loc_mac = mac_from_field(regs::get(s, f::LOC_MAC));
  c.vlan_en = regs::get(s, f::VLAN_EN) != 0;
  c.valid = regs::get(s, f::CTX_VALID) != 0;
  c.rejected = regs::get(s, f::REJECTED) != 0;
  c.loc_ip = static_cast<uint32_t>(regs::get(s, f::LOC_IP));
  c.rem_ip = static_cast<uint32_t>(regs::get(s, f::REM_IP));
  c.loc_port = static_cast<uint16_t>(regs::get(s, f::LOC_PORT));
  c.rem_port = static_cast<uint16_t>(regs::get(s, f::REM_PORT));
  c.rcv_wnd = static_cast<uint16_t>(regs::get(s, f::RCV_WND));
  c.ttl = static_cast<uint8_t>(regs::get(s, f::TTL));
  c.tos = static_cast<uint8_t>(regs::get(s, f::TOS));
  c.snd_nxt = static_cast<uint32_t>(regs::get(s, f::SND_NXT));
  c.rcv_nxt = static_cast<uint32_t>(regs::get(s, f::RCV_NXT));
  c.req_rev = static_cast<uint8_t>(regs::get(s, f::REQ_REV));
  c.req_flags = static_cast<uint8_t>(regs::get(s, f::REQ_FLAGS));
  c.ip_id = static_cast<uint16_t>(regs::get(s, f::IP_ID));
  c.req_ird_ord = static_cast<uint32_t>(regs::get(s, f::REQ_IRD_ORD));
  c.peer_mss = static_cast<uint16_t>(regs::get(s, f::PEER_MSS));
  return c;
}

}  // namespace bouncer
