// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// The golden model's reject parameters for a connection context the driver wrote: the one
// place the system tests map bouncer::CmContext onto golden::RejectParams.
#pragma once

#include <algorithm>
#include <cstring>
#include <span>

#include "bouncer/device.hpp"
#include "golden/reject_frame.hpp"

namespace bouncer::testing {

inline golden::RejectParams reject_params(const CmContext& c, std::span<const std::byte> pd) {
  golden::RejectParams p;
  std::copy(c.rem_mac.begin(), c.rem_mac.end(), p.rem_mac.b.begin());
  std::copy(c.loc_mac.begin(), c.loc_mac.end(), p.loc_mac.b.begin());
  p.vlan_en = c.vlan_en;
  p.vlan_tci = c.vlan_tci;
  p.loc_ip = c.loc_ip;
  p.rem_ip = c.rem_ip;
  p.tos = c.tos;
  p.ttl = c.ttl;
  p.ip_id = c.ip_id;
  p.loc_port = c.loc_port;
  p.rem_port = c.rem_port;
  p.snd_nxt = c.snd_nxt;
  p.rcv_nxt = c.rcv_nxt;
  p.rcv_wnd = c.rcv_wnd;
  p.req_rev = c.req_rev;
  p.req_flags = c.req_flags;
  p.req_ird_ord = c.req_ird_ord;
  p.pd.resize(pd.size());
  if (!pd.empty()) std::memcpy(p.pd.data(), pd.data(), pd.size());
  return p;
}

}  // namespace bouncer::testing
