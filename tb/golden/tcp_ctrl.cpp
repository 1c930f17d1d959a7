// Golden model of the TCP control segments and the keyed ISN (see golden/tcp_ctrl.hpp).
#include "golden/tcp_ctrl.hpp"

#include <span>

namespace golden {

namespace {

void push16(std::vector<uint8_t>& f, uint16_t v) {
  f.push_back(static_cast<uint8_t>(v >> 8));
  f.push_back(static_cast<uint8_t>(v));
}

void push32(std::vector<uint8_t>& f, uint32_t v) {
  push16(f, static_cast<uint16_t>(v >> 16));
  push16(f, static_cast<uint16_t>(v));
}

void store16(std::vector<uint8_t>& f, size_t off, uint16_t v) {
  f[off] = static_cast<uint8_t>(v >> 8);
  f[off + 1] = static_cast<uint8_t>(v);
}

constexpr uint64_t rotl64(uint64_t x, unsigned n) { return (x << n) | (x >> (64 - n)); }

struct SipState {
  uint64_t v0, v1, v2, v3;
  void round() {
    v0 += v1;
    v1 = rotl64(v1, 13);
    v1 ^= v0;
    v0 = rotl64(v0, 32);
    v2 += v3;
    v3 = rotl64(v3, 16);
    v3 ^= v2;
    v0 += v3;
    v3 = rotl64(v3, 21);
    v3 ^= v0;
    v2 += v1;
    v1 = rotl64(v1, 17);
    v1 ^= v2;
    v2 = rotl64(v2, 32);
  }
};

}  // namespace

uint8_t tcp_ctrl_flags(TcpCtrlKind kind) {
  switch (kind) {
    case TcpCtrlKind::kSynAck:
      return kTcpSyn | kTcpAck;
    case TcpCtrlKind::kAck:
      return kTcpAck;
    case TcpCtrlKind::kFinAck:
      return kTcpFin | kTcpAck;
    case TcpCtrlKind::kRstAck:
      return kTcpRst | kTcpAck;
  }
  return 0;
}

std::vector<uint8_t> build_tcp_ctrl_frame(const TcpCtrlParams& p) {
  const bool syn = p.kind == TcpCtrlKind::kSynAck;
  const size_t opt_len = syn ? 8 : 0;
  const size_t tcp_len = 20 + opt_len;

  std::vector<uint8_t> f;
  f.insert(f.end(), p.rem_mac.b.begin(), p.rem_mac.b.end());
  f.insert(f.end(), p.loc_mac.b.begin(), p.loc_mac.b.end());
  if (p.vlan_en) {
    push16(f, 0x8100);
    push16(f, p.vlan_tci);
  }
  push16(f, 0x0800);

  const size_t l3 = f.size();
  f.push_back(0x45);
  f.push_back(p.tos);
  push16(f, static_cast<uint16_t>(20 + tcp_len));
  push16(f, p.ip_id);
  push16(f, 0x4000);
  f.push_back(p.ttl);
  f.push_back(6);
  push16(f, 0);
  push32(f, p.loc_ip);
  push32(f, p.rem_ip);
  store16(f, l3 + 10, internet_checksum(std::span<const uint8_t>(f).subspan(l3, 20)));

  const size_t l4 = f.size();
  push16(f, p.loc_port);
  push16(f, p.rem_port);
  push32(f, p.seq);
  push32(f, p.ack);
  f.push_back(static_cast<uint8_t>((tcp_len / 4) << 4));
  f.push_back(tcp_ctrl_flags(p.kind));
  push16(f, p.window);
  push16(f, 0);  // checksum
  push16(f, 0);  // urgent pointer
  if (syn) {
    f.push_back(2);  // MSS
    f.push_back(4);
    push16(f, p.mss);
    if (p.ws) {
      f.push_back(3);  // window scale
      f.push_back(3);
      f.push_back(p.wscale);
    } else {
      f.insert(f.end(), {1, 1, 1});  // NOPs: the SYN had no window-scale option
    }
    f.push_back(0);  // EOL
  }

  std::vector<uint8_t> ph;
  push32(ph, p.loc_ip);
  push32(ph, p.rem_ip);
  push16(ph, 6);
  push16(ph, static_cast<uint16_t>(tcp_len));
  ph.insert(ph.end(), f.begin() + static_cast<std::ptrdiff_t>(l4), f.end());
  store16(f, l4 + 16, internet_checksum(ph));

  if (p.pad_min && f.size() < kEthMinFrame) f.resize(kEthMinFrame, 0);
  return f;
}

uint32_t isn_hash(const IsnKey& key, const IsnTuple& tuple, uint64_t time, unsigned shift) {
  const uint64_t m0 = uint64_t{tuple.loc_ip} << 32 | tuple.rem_ip;
  const uint64_t m1 = uint64_t{tuple.loc_port} << 16 | tuple.rem_port;
  SipState s{key.lo ^ 0x736f6d6570736575ull, key.hi ^ 0x646f72616e646f6dull,
             key.lo ^ 0x6c7967656e657261ull, key.hi ^ 0x7465646279746573ull};
  for (uint64_t m : {m0, m1}) {
    s.v3 ^= m;
    s.round();
    s.v0 ^= m;
  }
  s.v2 ^= 0xff;
  for (int i = 0; i < 3; ++i) s.round();
  const uint64_t h = s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
  const uint32_t f = static_cast<uint32_t>(h >> 32) ^ static_cast<uint32_t>(h);
  return f + static_cast<uint32_t>(time >> shift);
}

}  // namespace golden
