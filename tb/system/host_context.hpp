// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// Host-written connection contexts and private data for the system tests that post rejects
// without a handshake (test_system_hung, test_system_dma_fault): one definition of both.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "bouncer/device.hpp"

namespace bouncer::testing {

// A host-written context for cm_id: we are 10.0.0.1:4791, the peer 10.0.1.x:(40000 + cm_id).
// No VLAN, so a frame's TCP destination port is at bytes 36..37.
inline CmContext host_ctx(uint32_t cm_id) {
  CmContext c;
  c.rem_mac = {0x02, 0x00, 0x5e, 0x10, 0x00, static_cast<uint8_t>(cm_id)};
  c.loc_mac = {0x02, 0xbb, 0xcc, 0xdd, 0xee, 0x01};
  c.loc_ip = 0x0A000001;
  c.rem_ip = 0x0A000100 | (cm_id & 0xFF);
  c.loc_port = 4791;
  c.rem_port = static_cast<uint16_t>(40000 + cm_id);
  c.rcv_wnd = 0x2000;
  c.snd_nxt = 0x10000000u + cm_id * 0x1000u;
  c.rcv_nxt = 0x20000000u + cm_id * 0x1000u;
  c.req_rev = 1;
  c.req_flags = 0x40;
  c.ip_id = static_cast<uint16_t>(0x100 * cm_id);
  return c;
}

// n bytes of private data: seed, seed + 3, seed + 6, ... (mod 256).
inline std::vector<std::byte> pattern_pd(size_t n, uint8_t seed) {
  std::vector<std::byte> pd(n);
  for (size_t i = 0; i < n; ++i) pd[i] = std::byte{static_cast<uint8_t>(seed + 3 * i)};
  return pd;
}

}  // namespace bouncer::testing
