#include "golden/frame_parser.hpp"

#include <algorithm>
#include <cstdio>

#include "golden/segment.hpp"

namespace golden {
namespace {

uint16_t rd16(std::span<const uint8_t> b, size_t off) {
  return static_cast<uint16_t>(b[off] << 8 | b[off + 1]);
}

uint32_t rd32(std::span<const uint8_t> b, size_t off) {
  return static_cast<uint32_t>(rd16(b, off)) << 16 | rd16(b, off + 2);
}

// Plain 32-bit accumulation byte by byte (even offsets are high bytes), folded at the end.
uint32_t accumulate(std::span<const uint8_t> bytes, uint32_t acc) {
  for (size_t i = 0; i < bytes.size(); ++i) {
    acc += (i % 2 == 0) ? static_cast<uint32_t>(bytes[i]) * 256u : bytes[i];
  }
  return acc;
}

uint32_t fold(uint32_t acc) {
  while (acc > 0xFFFF) acc = (acc & 0xFFFF) + (acc >> 16);
  return acc;
}

bool fail(std::string* why, const std::string& msg) {
  if (why != nullptr) *why = msg;
  return false;
}

std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

constexpr char kKeyRep[] = "MPA ID Rep Frame";
constexpr char kKeyReq[] = "MPA ID Req Frame";

bool key_equals(std::span<const uint8_t> b, const char* key) {
  for (size_t i = 0; i < 16; ++i) {
    if (b[i] != static_cast<uint8_t>(key[i])) return false;
  }
  return true;
}

}  // namespace

bool ipv4_header_checksum_ok(std::span<const uint8_t> ip_header) {
  if (ip_header.size() < 20) return false;
  const size_t ihl_bytes = static_cast<size_t>(ip_header[0] & 0x0F) * 4;
  if (ihl_bytes < 20 || ihl_bytes > ip_header.size()) return false;
  return fold(accumulate(ip_header.first(ihl_bytes), 0)) == 0xFFFF;
}

std::optional<ParsedReject> parse_mpa_reply(std::span<const uint8_t> f, std::string* why) {
  ParsedReject r;
  auto bad = [why](const std::string& msg) -> std::optional<ParsedReject> {
    fail(why, msg);
    return std::nullopt;
  };

  // Ethernet and the optional 802.1Q tag.
  if (f.size() < 14) return bad("frame shorter than an Ethernet header");
  for (size_t i = 0; i < 6; ++i) {
    r.dst_mac[i] = f[i];
    r.src_mac[i] = f[6 + i];
  }
  size_t l3 = 14;
  uint16_t ethertype = rd16(f, 12);
  if (ethertype == 0x8100) {
    if (f.size() < 18) return bad("frame truncated in the 802.1Q tag");
    r.vlan = true;
    r.vlan_tci = rd16(f, 14);
    ethertype = rd16(f, 16);
    l3 = 18;
  }
  if (ethertype != 0x0800) return bad("EtherType " + hex(ethertype) + " is not IPv4");

  // IPv4.
  if (f.size() < l3 + 20) return bad("frame truncated in the IPv4 header");
  // The checksum is verified before any other header field is trusted.
  const auto ip = f.subspan(l3);
  const size_t ihl = static_cast<size_t>(ip[0] & 0x0F) * 4;
  if (ihl < 20) return bad("IPv4 IHL below 5");
  if (ip.size() < ihl) return bad("frame truncated in the IPv4 options");
  if (!ipv4_header_checksum_ok(ip)) {
    return bad("IPv4 header checksum bad (stored " + hex(rd16(ip, 10)) + ")");
  }
  if ((ip[0] >> 4) != 4) return bad("IP version " + std::to_string(ip[0] >> 4));
  r.tos = ip[1];
  r.ip_total_length = rd16(ip, 2);
  r.ip_id = rd16(ip, 4);
  r.ip_flags_frag = rd16(ip, 6);
  r.ttl = ip[8];
  r.src_ip = rd32(ip, 12);
  r.dst_ip = rd32(ip, 16);
  if (r.ip_total_length != ip.size()) {
    return bad("IP total length " + std::to_string(r.ip_total_length) + " but " +
               std::to_string(ip.size()) + " bytes follow the L2 header");
  }
  if ((r.ip_flags_frag & 0x3FFF) != 0) return bad("IPv4 fragment (MF or offset set)");
  if (ip[9] != 6) return bad("IP protocol " + std::to_string(ip[9]) + " is not TCP");

  // TCP, checksummed over the pseudo-header, header and payload.
  const auto tcp = ip.subspan(ihl);
  if (tcp.size() < 20) return bad("segment shorter than a TCP header");
  r.src_port = rd16(tcp, 0);
  r.dst_port = rd16(tcp, 2);
  r.seq = rd32(tcp, 4);
  r.ack = rd32(tcp, 8);
  r.tcp_data_offset = tcp[12] >> 4;
  r.tcp_flags = tcp[13];
  r.window = rd16(tcp, 14);
  r.urgent = rd16(tcp, 18);
  uint32_t acc = accumulate(ip.subspan(12, 8), 0);  // source and destination addresses
  acc += 6;                                         // zero, protocol
  acc += static_cast<uint32_t>(tcp.size());         // TCP length
  acc = accumulate(tcp, acc);
  if (fold(acc) != 0xFFFF) return bad("TCP checksum bad (stored " + hex(rd16(tcp, 16)) + ")");
  const size_t thl = static_cast<size_t>(r.tcp_data_offset) * 4;
  if (thl < 20 || thl > tcp.size()) return bad("TCP data offset out of range");

  // MPA request/reply header.
  const auto mpa = tcp.subspan(thl);
  if (mpa.size() < 20) {
    return bad("TCP payload of " + std::to_string(mpa.size()) + " bytes, no MPA header");
  }
  r.key_reply_ok = key_equals(mpa, kKeyRep);
  r.key_request_ok = key_equals(mpa, kKeyReq);
  r.mpa_flags = mpa[16];
  r.rev = mpa[17];
  r.pd_length = rd16(mpa, 18);
  r.mpa_len = 20 + static_cast<size_t>(r.pd_length);
  if (r.pd_length > 512) return bad("PD_Length " + std::to_string(r.pd_length) + " > 512");
  if (mpa.size() != r.mpa_len) {
    return bad("PD_Length " + std::to_string(r.pd_length) + " but " +
               std::to_string(mpa.size() - 20) + " bytes follow the MPA header");
  }
  r.enhanced = r.rev == 2 && (r.mpa_flags & 0x10) != 0;
  size_t pd_off = 20;
  if (r.enhanced) {
    if (r.pd_length < 4) return bad("enhanced MPA frame with PD_Length < 4");
    r.ird_ord = rd32(mpa, 20);
    pd_off = 24;
  }
  r.private_data.assign(mpa.begin() + static_cast<std::ptrdiff_t>(pd_off), mpa.end());
  return r;
}

bool reject_matches_params(const ParsedReject& r, const RejectParams& p, std::string* why) {
  auto ne = [why](const char* what, uint64_t got, uint64_t want) {
    return fail(why, std::string(what) + ": got " + hex(got) + ", want " + hex(want));
  };
  if (r.dst_mac != p.rem_mac.b) return fail(why, "Ethernet destination != REM_MAC");
  if (r.src_mac != p.loc_mac.b) return fail(why, "Ethernet source != LOC_MAC");
  if (r.vlan != p.vlan_en) return ne("VLAN tag present", r.vlan, p.vlan_en);
  if (p.vlan_en && r.vlan_tci != p.vlan_tci) return ne("VLAN TCI", r.vlan_tci, p.vlan_tci);
  if (r.tos != p.tos) return ne("TOS", r.tos, p.tos);
  if (r.ttl != p.ttl) return ne("TTL", r.ttl, p.ttl);
  if (r.ip_id != p.ip_id) return ne("IP ID", r.ip_id, p.ip_id);
  if (r.ip_flags_frag != 0x4000) return ne("IP flags/fragment", r.ip_flags_frag, 0x4000);
  if (r.src_ip != p.loc_ip) return ne("IP source", r.src_ip, p.loc_ip);
  if (r.dst_ip != p.rem_ip) return ne("IP destination", r.dst_ip, p.rem_ip);
  if (r.src_port != p.loc_port) return ne("TCP source port", r.src_port, p.loc_port);
  if (r.dst_port != p.rem_port) return ne("TCP destination port", r.dst_port, p.rem_port);
  if (r.seq != p.snd_nxt) return ne("TCP sequence", r.seq, p.snd_nxt);
  if (r.ack != p.rcv_nxt) return ne("TCP acknowledgment", r.ack, p.rcv_nxt);
  if (r.tcp_data_offset != 5) return ne("TCP data offset", r.tcp_data_offset, 5);
  const uint8_t want_flags = p.fin ? 0x19 : 0x18;
  if (r.tcp_flags != want_flags) return ne("TCP flags", r.tcp_flags, want_flags);
  if (r.window != p.rcv_wnd) return ne("TCP window", r.window, p.rcv_wnd);
  if (r.urgent != 0) return ne("TCP urgent pointer", r.urgent, 0);
  if (!r.key_reply_ok) return fail(why, "MPA key is not \"MPA ID Rep Frame\"");
  // The contract's rules, restated here rather than calling the builder's helpers.
  const bool enh = p.req_rev == 2 && (p.req_flags & 0x10) != 0;
  const uint8_t want_mpa_flags =
      static_cast<uint8_t>((p.req_flags & 0xC0) | 0x20 | (enh ? 0x10 : 0));
  if (r.mpa_flags != want_mpa_flags) return ne("MPA flags", r.mpa_flags, want_mpa_flags);
  if (r.rev != p.req_rev) return ne("MPA rev", r.rev, p.req_rev);
  const size_t want_pdl = p.pd.size() + (enh ? 4 : 0);
  if (r.pd_length != want_pdl) return ne("PD_Length", r.pd_length, want_pdl);
  if (enh) {
    uint32_t want_word;
    if (p.ird_ord_override) {
      want_word = *p.ird_ord_override;
    } else {
      const bool read_rtr = (p.req_ird_ord & 0x4000) != 0;
      const bool write_rtr = (p.req_ird_ord & 0x8000) != 0;
      want_word = (!read_rtr && write_rtr) ? 0xBFFFBFFFu : 0xBFFF7FFFu;
    }
    if (!r.ird_ord || *r.ird_ord != want_word) {
      return ne("IRD/ORD word", r.ird_ord.value_or(0), want_word);
    }
  } else if (r.ird_ord) {
    return fail(why, "IRD/ORD word present in a non-enhanced reply");
  }
  if (r.private_data != p.pd) return fail(why, "private data differs");
  return true;
}

std::optional<ParsedSegment> parse_tcp_segment(std::span<const uint8_t> f, std::string* why) {
  constexpr size_t kMinFrame = 60;  // Ethernet minimum without FCS
  ParsedSegment s;
  auto bad = [why](const std::string& msg) -> std::optional<ParsedSegment> {
    fail(why, msg);
    return std::nullopt;
  };

  if (f.size() < 14) return bad("frame shorter than an Ethernet header");
  for (size_t i = 0; i < 6; ++i) {
    s.dst_mac[i] = f[i];
    s.src_mac[i] = f[6 + i];
  }
  size_t l3 = 14;
  uint16_t ethertype = rd16(f, 12);
  if (ethertype == 0x8100) {
    if (f.size() < 18) return bad("frame truncated in the 802.1Q tag");
    s.vlan = true;
    s.vlan_tci = rd16(f, 14);
    ethertype = rd16(f, 16);
    l3 = 18;
  }
  if (ethertype != 0x0800) return bad("EtherType " + hex(ethertype) + " is not IPv4");

  if (f.size() < l3 + 20) return bad("frame truncated in the IPv4 header");
  const auto after_l2 = f.subspan(l3);
  const size_t ihl = static_cast<size_t>(after_l2[0] & 0x0F) * 4;
  if (ihl < 20) return bad("IPv4 IHL below 5");
  if (after_l2.size() < ihl) return bad("frame truncated in the IPv4 options");
  if (!ipv4_header_checksum_ok(after_l2)) {
    return bad("IPv4 header checksum bad (stored " + hex(rd16(after_l2, 10)) + ")");
  }
  if ((after_l2[0] >> 4) != 4) return bad("IP version " + std::to_string(after_l2[0] >> 4));
  s.tos = after_l2[1];
  s.ip_total_length = rd16(after_l2, 2);
  s.ip_id = rd16(after_l2, 4);
  s.ip_flags_frag = rd16(after_l2, 6);
  s.ttl = after_l2[8];
  s.src_ip = rd32(after_l2, 12);
  s.dst_ip = rd32(after_l2, 16);
  if (s.ip_total_length < ihl || s.ip_total_length > after_l2.size()) {
    return bad("IP total length " + std::to_string(s.ip_total_length) + " but " +
               std::to_string(after_l2.size()) + " bytes follow the L2 header");
  }
  s.eth_padding = after_l2.size() - s.ip_total_length;
  if (s.eth_padding != 0 && f.size() != kMinFrame) {
    return bad(std::to_string(s.eth_padding) + " bytes after the IP datagram in a " +
               std::to_string(f.size()) + "-byte frame (only a 60-byte frame is padded)");
  }
  if ((s.ip_flags_frag & 0x3FFF) != 0) return bad("IPv4 fragment (MF or offset set)");
  if (after_l2[9] != 6) return bad("IP protocol " + std::to_string(after_l2[9]) + " is not TCP");
  const auto ip = after_l2.first(s.ip_total_length);

  const auto tcp = ip.subspan(ihl);
  if (tcp.size() < 20) return bad("segment shorter than a TCP header");
  s.src_port = rd16(tcp, 0);
  s.dst_port = rd16(tcp, 2);
  s.seq = rd32(tcp, 4);
  s.ack = rd32(tcp, 8);
  s.tcp_data_offset = tcp[12] >> 4;
  s.tcp_flags = tcp[13];
  s.window = rd16(tcp, 14);
  s.urgent = rd16(tcp, 18);
  uint32_t acc = accumulate(ip.subspan(12, 8), 0);  // source and destination addresses
  acc += 6;                                         // zero, protocol
  acc += static_cast<uint32_t>(tcp.size());         // TCP length
  acc = accumulate(tcp, acc);
  if (fold(acc) != 0xFFFF) return bad("TCP checksum bad (stored " + hex(rd16(tcp, 16)) + ")");
  const size_t thl = static_cast<size_t>(s.tcp_data_offset) * 4;
  if (thl < 20 || thl > tcp.size()) return bad("TCP data offset out of range");

  // Options: EOL (0) ends the list, NOP (1) is one byte, every other kind has a length byte.
  for (size_t i = 20; i < thl;) {
    const uint8_t kind = tcp[i];
    if (kind == 0) break;
    if (kind == 1) {
      ++i;
      continue;
    }
    if (i + 1 >= thl) return bad("TCP option " + std::to_string(kind) + " without a length");
    const size_t len = tcp[i + 1];
    if (len < 2 || i + len > thl) {
      return bad("TCP option " + std::to_string(kind) + " length " + std::to_string(len) +
                 " out of range");
    }
    if (kind == 2) {
      if (len != 4) return bad("TCP MSS option of length " + std::to_string(len));
      s.mss = rd16(tcp, i + 2);
    } else if (kind == 3) {
      if (len != 3) return bad("TCP window scale option of length " + std::to_string(len));
      s.wscale = tcp[i + 2];
    }
    i += len;
  }
  s.payload.assign(tcp.begin() + static_cast<std::ptrdiff_t>(thl), tcp.end());
  return s;
}

std::optional<DecodedSegment> decode_segment(std::span<const uint8_t> f, std::string* why) {
  auto bad = [&](const char* w) -> std::optional<DecodedSegment> {
    fail(why, w);
    return std::nullopt;
  };
  DecodedSegment s;
  if (f.size() < 14) return bad("runt");
  std::copy_n(f.begin(), 6, s.dst_mac.begin());
  std::copy_n(f.begin() + 6, 6, s.src_mac.begin());
  size_t o = 12;
  uint16_t type = rd16(f, o);
  if (type == 0x8100) {
    if (f.size() < 18) return bad("runt vlan");
    s.vlan_tci = rd16(f, 14);
    type = rd16(f, 16);
    o = 16;
  }
  o += 2;
  if (type != 0x0800) return bad("not IPv4");
  if (f.size() < o + 20) return bad("short IPv4");
  const size_t ihl = size_t{f[o] & 0x0Fu} * 4;
  if ((f[o] >> 4) != 4 || ihl < 20 || f.size() < o + ihl) return bad("bad IPv4 header");
  s.tos = f[o + 1];
  const size_t total = rd16(f, o + 2);
  s.ip_id = rd16(f, o + 4);
  s.ip_frag = rd16(f, o + 6);
  s.ttl = f[o + 8];
  if (f[o + 9] != 6) return bad("not TCP");
  s.src_ip = rd32(f, o + 12);
  s.dst_ip = rd32(f, o + 16);
  s.ip_csum_ok = ipv4_header_checksum_ok(f.subspan(o, ihl));
  if (total < ihl + 20 || f.size() < o + total) return bad("bad IPv4 total length");
  const size_t t = o + ihl;
  const size_t tcp_len = total - ihl;
  s.sport = rd16(f, t);
  s.dport = rd16(f, t + 2);
  s.seq = rd32(f, t + 4);
  s.ack = rd32(f, t + 8);
  const size_t doff = static_cast<size_t>(f[t + 12] >> 4) * 4;
  if (doff < 20 || doff > tcp_len) return bad("bad TCP data offset");
  s.flags = f[t + 13];
  s.window = rd16(f, t + 14);
  for (size_t k = t + 20; k < t + doff;) {
    const uint8_t kind = f[k];
    if (kind == 0) break;
    if (kind == 1) {
      ++k;
      continue;
    }
    if (k + 1 >= t + doff) break;
    const uint8_t len = f[k + 1];
    if (len < 2 || k + len > t + doff) break;
    if (kind == 2 && len == 4) s.mss = rd16(f, k + 2);
    if (kind == 3 && len == 3) s.wscale = f[k + 2];
    k += len;
  }
  s.payload.assign(f.begin() + static_cast<std::ptrdiff_t>(t + doff),
                   f.begin() + static_cast<std::ptrdiff_t>(o + total));
  // TCP, checksummed over the pseudo-header (addresses, protocol, length), header and payload.
  uint32_t acc = accumulate(f.subspan(o + 12, 8), 0);
  acc += 6;
  acc += static_cast<uint32_t>(tcp_len);
  acc = accumulate(f.subspan(t, tcp_len), acc);
  s.tcp_csum_ok = fold(acc) == 0xFFFF;
  return s;
}

MpaKey mpa_key_of(std::span<const uint8_t> p) {
  if (p.size() < 16) return MpaKey::kNone;
  if (key_equals(p, kKeyReq)) return MpaKey::kRequest;
  if (key_equals(p, kKeyRep)) return MpaKey::kReply;
  return MpaKey::kNone;
}

}  // namespace golden
