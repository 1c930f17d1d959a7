// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// Unit test of rtl/rx/bouncer_rx_parser at both data widths. Frames come from the golden
// model (MPA requests and rejects) and from a small builder here (SYN/SYN-ACK with options,
// IPv4 options, padding, UDP, ARP, corruptions, truncations). Every record is compared with
// an independent C++ reading of the same bytes (expect_record) and, for golden frames, with
// the parameters the frame was built from; the payload stream must equal the TCP payload.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <deque>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

// Verilator 5.006's headers trip -Wunused-parameter; they are not ours.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "Vrx_parser_w512.h"
#include "Vrx_parser_w64.h"
#include "axis_lanes.hpp"
#include "verilated.h"
#pragma GCC diagnostic pop
#include "golden/reject_frame.hpp"

namespace {

using axis::keep_bit;
using axis::lane_byte;
using axis::mac_field;

using Bytes = std::vector<uint8_t>;

// ---------------------------------------------------------------- the record
// clang-format off
#define REC_FIELDS(X) \
  X(eth_dst) X(eth_src) X(vlan_present) X(vlan_tci) X(ethertype) X(ipv4) X(ip_ihl) \
  X(ip_tos) X(ip_total_len) X(ip_id) X(ip_df) X(ip_mf) X(ip_frag_off) X(ip_ttl) \
  X(ip_proto) X(ip_src) X(ip_dst) X(ip_csum_ok) X(tcp) X(tcp_src_port) X(tcp_dst_port) \
  X(tcp_seq) X(tcp_ack) X(tcp_doff) X(tcp_flags) X(tcp_window) X(tcp_csum_ok) \
  X(tcp_mss_present) X(tcp_mss) X(tcp_ws_present) X(tcp_ws) X(tcp_opt_err) X(payload_len) \
  X(frame_len) X(runt) X(len_err) X(hdr_err) X(bad)
// clang-format on

struct Rec {
#define REC_DECL(f) uint64_t f = 0;
  REC_FIELDS(REC_DECL)
#undef REC_DECL
};

std::string diff(const Rec& got, const Rec& want) {
  std::ostringstream os;
#define REC_CMP(f) \
  if (got.f != want.f) os << #f << ": got 0x" << std::hex << got.f << " want 0x" << want.f << "; ";
  REC_FIELDS(REC_CMP)
#undef REC_CMP
  return os.str();
}

// ---------------------------------------------------------------- independent reference
uint16_t be16(const Bytes& f, size_t i) {
  auto b = [&](size_t k) -> uint16_t { return k < f.size() ? f[k] : 0; };
  return static_cast<uint16_t>(b(i) << 8 | b(i + 1));
}
uint32_t be32(const Bytes& f, size_t i) { return uint32_t{be16(f, i)} << 16 | be16(f, i + 2); }
uint8_t byte_at(const Bytes& f, size_t i) { return i < f.size() ? f[i] : 0; }

uint32_t fold(uint64_t s) {
  while (s >> 16) s = (s & 0xFFFF) + (s >> 16);
  return static_cast<uint32_t>(s);
}

struct Expect {
  Rec rec;
  Bytes payload;
};

// What the parser must report, read straight from the bytes (bytes past the end read as 0).
Expect expect_record(const Bytes& f) {
  Expect e;
  Rec& r = e.rec;
  const size_t n = f.size();
  r.frame_len = n;
  for (int i = 0; i < 6; ++i) {
    r.eth_dst = r.eth_dst << 8 | byte_at(f, i);
    r.eth_src = r.eth_src << 8 | byte_at(f, 6 + i);
  }
  r.vlan_present = byte_at(f, 12) == 0x81 && byte_at(f, 13) == 0x00;
  const size_t l2 = r.vlan_present ? 18 : 14;
  r.vlan_tci = r.vlan_present ? be16(f, 14) : 0;
  r.ethertype = be16(f, l2 - 2);
  r.runt = n < 14 || (r.vlan_present && n < 18);
  r.ipv4 = r.ethertype == 0x0800;
  if (!r.ipv4) {
    r.bad = r.runt;
    return e;
  }

  const unsigned ver = byte_at(f, l2) >> 4, ihl = byte_at(f, l2) & 15;
  const bool ihl_ok = ver == 4 && ihl >= 5;
  r.ip_ihl = ihl;
  r.ip_tos = byte_at(f, l2 + 1);
  r.ip_total_len = be16(f, l2 + 2);
  r.ip_id = be16(f, l2 + 4);
  const uint16_t frag = be16(f, l2 + 6);
  r.ip_df = (frag >> 14) & 1;
  r.ip_mf = (frag >> 13) & 1;
  r.ip_frag_off = frag & 0x1FFF;
  r.ip_ttl = byte_at(f, l2 + 8);
  r.ip_proto = byte_at(f, l2 + 9);
  r.ip_src = be32(f, l2 + 12);
  r.ip_dst = be32(f, l2 + 16);
  uint64_t s = 0;
  for (size_t w = 0; w < 2 * ihl; ++w) s += be16(f, l2 + 2 * w);
  r.ip_csum_ok = fold(s) == 0xFFFF;
  r.hdr_err = !ihl_ok;
  r.runt |= n < l2 + 20 || (ihl_ok && n < l2 + 4 * ihl);
  const size_t ip_end = l2 + r.ip_total_len;
  r.tcp = ihl_ok && r.ip_proto == 6 && !r.ip_mf && r.ip_frag_off == 0;
  if (r.tcp) {
    const size_t to = l2 + 4 * ihl;
    r.tcp_src_port = be16(f, to);
    r.tcp_dst_port = be16(f, to + 2);
    r.tcp_seq = be32(f, to + 4);
    r.tcp_ack = be32(f, to + 8);
    r.tcp_doff = byte_at(f, to + 12) >> 4;
    r.tcp_flags = byte_at(f, to + 13);
    r.tcp_window = be16(f, to + 14);
    const bool doff_ok = r.tcp_doff >= 5;
    r.hdr_err |= !doff_ok;
    r.runt |= n < to + 20 || (doff_ok && n < to + 4 * r.tcp_doff);
    // checksum: pseudo header + [to, ip_end) of the bytes present
    uint64_t t = (r.ip_src >> 16) + (r.ip_src & 0xFFFF) + (r.ip_dst >> 16) + (r.ip_dst & 0xFFFF) +
                 6 + static_cast<uint16_t>(r.ip_total_len - 4 * ihl);
    for (size_t i = to; i < ip_end && i < n; i += 2)
      t += be16(f, i) & (i + 1 < ip_end ? 0xFFFF : 0xFF00);
    r.tcp_csum_ok = fold(t) == 0xFFFF;
    if (doff_ok) {
      // options walk
      const size_t optlen = 4 * r.tcp_doff - 20;
      size_t p = 0;
      while (p < optlen) {
        const uint8_t kind = byte_at(f, to + 20 + p);
        if (kind == 0) break;
        if (kind == 1) {
          ++p;
          continue;
        }
        const size_t rem = optlen - p;
        const uint8_t len = byte_at(f, to + 21 + p);
        if (rem < 2 || len < 2 || len > rem || (kind == 2 && len != 4) || (kind == 3 && len != 3)) {
          r.tcp_opt_err = 1;
          break;
        }
        if (kind == 2) {
          r.tcp_mss_present = 1;
          r.tcp_mss = be16(f, to + 22 + p);
        }
        if (kind == 3) {
          r.tcp_ws_present = 1;
          r.tcp_ws = byte_at(f, to + 22 + p);
        }
        p += len;
      }
      const size_t pay = to + 4 * r.tcp_doff;
      const size_t pe = std::min(ip_end, n);
      if (pe > pay) {
        r.payload_len = pe - pay;
        e.payload.assign(f.begin() + static_cast<ptrdiff_t>(pay),
                         f.begin() + static_cast<ptrdiff_t>(pe));
      }
    }
  }
  const size_t ihl4 = 4 * ihl, doff4 = 4 * r.tcp_doff;
  r.len_err = ip_end > n || r.ip_total_len < ihl4 || (r.tcp && r.ip_total_len < ihl4 + doff4);
  r.bad = r.runt || r.len_err || r.hdr_err || !r.ip_csum_ok ||
          (r.tcp && (!r.tcp_csum_ok || r.tcp_opt_err));
  return e;
}

// ---------------------------------------------------------------- frame builder
struct Spec {
  std::array<uint8_t, 6> dst{0x02, 0, 0, 0, 0, 1}, src{0x02, 0, 0, 0, 0, 2};
  bool vlan = false;
  uint16_t tci = 0;
  uint16_t ethertype = 0x0800;
  uint8_t tos = 0, ttl = 64, proto = 6;
  uint16_t ip_id = 0x1234;
  bool df = true, mf = false;
  uint16_t frag_off = 0;
  uint32_t sip = 0x0A000001, dip = 0x0A000002;
  Bytes ip_opts;  // multiple of 4
  uint16_t sport = 1000, dport = 2000;
  uint32_t seq = 0, ack = 0;
  uint8_t flags = 0x02;
  uint16_t window = 0xFFFF;
  Bytes tcp_opts;  // multiple of 4
  Bytes payload;
  size_t min_len = 60;
  uint8_t pad_byte = 0xA5;  // padding is not zero on purpose: it must not count
};

void p16(Bytes& v, uint16_t x) {
  v.push_back(static_cast<uint8_t>(x >> 8));
  v.push_back(static_cast<uint8_t>(x));
}
void p32(Bytes& v, uint32_t x) {
  p16(v, static_cast<uint16_t>(x >> 16));
  p16(v, static_cast<uint16_t>(x));
}

Bytes build(const Spec& s) {
  Bytes f(s.dst.begin(), s.dst.end());
  f.insert(f.end(), s.src.begin(), s.src.end());
  if (s.vlan) {
    p16(f, 0x8100);
    p16(f, s.tci);
  }
  p16(f, s.ethertype);
  Bytes l4;
  if (s.proto == 6) {
    p16(l4, s.sport);
    p16(l4, s.dport);
    p32(l4, s.seq);
    p32(l4, s.ack);
    l4.push_back(static_cast<uint8_t>((20 + s.tcp_opts.size()) / 4 << 4));
    l4.push_back(s.flags);
    p16(l4, s.window);
    p16(l4, 0);
    p16(l4, 0);
    l4.insert(l4.end(), s.tcp_opts.begin(), s.tcp_opts.end());
  } else if (s.proto == 17) {
    p16(l4, s.sport);
    p16(l4, s.dport);
    p16(l4, static_cast<uint16_t>(8 + s.payload.size()));
    p16(l4, 0);
  }
  l4.insert(l4.end(), s.payload.begin(), s.payload.end());
  const size_t ihl = (20 + s.ip_opts.size()) / 4;
  Bytes ip;
  ip.push_back(static_cast<uint8_t>(0x40 | ihl));
  ip.push_back(s.tos);
  p16(ip, static_cast<uint16_t>(4 * ihl + l4.size()));
  p16(ip, s.ip_id);
  p16(ip, static_cast<uint16_t>((s.df ? 0x4000 : 0) | (s.mf ? 0x2000 : 0) | s.frag_off));
  ip.push_back(s.ttl);
  ip.push_back(s.proto);
  p16(ip, 0);
  p32(ip, s.sip);
  p32(ip, s.dip);
  ip.insert(ip.end(), s.ip_opts.begin(), s.ip_opts.end());
  const uint16_t ipc = golden::internet_checksum(ip);
  ip[10] = static_cast<uint8_t>(ipc >> 8);
  ip[11] = static_cast<uint8_t>(ipc);
  if (s.proto == 6) {
    Bytes ph;
    p32(ph, s.sip);
    p32(ph, s.dip);
    p16(ph, 6);
    p16(ph, static_cast<uint16_t>(l4.size()));
    ph.insert(ph.end(), l4.begin(), l4.end());
    const uint16_t c = golden::internet_checksum(ph);
    l4[16] = static_cast<uint8_t>(c >> 8);
    l4[17] = static_cast<uint8_t>(c);
  }
  f.insert(f.end(), ip.begin(), ip.end());
  f.insert(f.end(), l4.begin(), l4.end());
  while (f.size() < s.min_len) f.push_back(s.pad_byte);
  return f;
}

Bytes syn_options(uint16_t mss, uint8_t ws) {  // irdma: MSS, WS, EOL
  return {2, 4, static_cast<uint8_t>(mss >> 8), static_cast<uint8_t>(mss), 3, 3, ws, 0};
}

Bytes arp_frame() {
  Bytes f = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x02, 0, 0, 0, 0, 2, 0x08, 0x06};
  const uint8_t body[28] = {0,  1, 8, 0, 6, 4, 0, 1, 2, 0, 0,  0, 0, 2,
                            10, 0, 0, 2, 0, 0, 0, 0, 0, 0, 10, 0, 0, 1};
  f.insert(f.end(), body, body + 28);
  while (f.size() < 60) f.push_back(0);
  return f;
}

// ---------------------------------------------------------------- port access
template <typename T>
void put_beat(T& port, const Bytes& f, size_t off, unsigned wb) {
  if constexpr (std::is_integral_v<std::remove_reference_t<T>>) {
    uint64_t v = 0;
    for (unsigned i = 0; i < wb; ++i)
      if (off + i < f.size()) v |= uint64_t{f[off + i]} << (8 * i);
    port = v;
  } else {
    for (auto& w : port.m_storage) w = 0;
    for (unsigned i = 0; i < wb && off + i < f.size(); ++i)
      port[i / 4] |= uint32_t{f[off + i]} << (8 * (i % 4));
  }
}

template <typename Model>
Rec read_rec(const Model& m) {
  Rec r;
#define REC_READ(f) r.f = m.m_meta_##f;
  REC_FIELDS(REC_READ)
#undef REC_READ
  return r;
}

struct RunOut {
  std::vector<Rec> recs;
  std::vector<Bytes> payloads;
  uint64_t first_accept = 0, last_accept = 0, in_beats = 0;
  std::vector<uint64_t> frame_end_cycle, meta_cycle;
};

template <typename Model>
class Harness {
 public:
  static constexpr unsigned kWb = sizeof(Model::s_axis_tkeep) * 8;

  explicit Harness(uint64_t seed) : rng_(seed) {
    ctx_.randReset(0);
    m_ = std::make_unique<Model>(&ctx_, "rx");
    m_->rst = 1;
    for (int i = 0; i < 4; ++i) tick();
    m_->rst = 0;
    tick();
  }

  void tick() {
    m_->clk = 0;
    m_->eval();
    m_->clk = 1;
    m_->eval();
    ++cycle_;
  }

  // Streams the frames (valid with probability in_p while a beat is pending, held until
  // accepted), payload/meta ready with probabilities pay_p / meta_p.
  RunOut run(const std::vector<Bytes>& frames, double in_p, double pay_p, double meta_p) {
    std::bernoulli_distribution in_b(in_p), pay_b(pay_p), meta_b(meta_p);
    RunOut out;
    size_t fi = 0, off = 0;
    bool holding = false;
    Bytes cur_pay;
    bool first = true;
    size_t idle_after = 0;
    for (uint64_t guard = 0; guard < 2000000; ++guard) {
      const bool have = fi < frames.size();
      const bool valid = have && (holding || in_b(rng_));
      m_->s_axis_tvalid = valid;
      if (valid) {
        const Bytes& f = frames[fi];
        put_beat(m_->s_axis_tdata, f, off, kWb);
        const size_t left = f.size() - off;
        const unsigned nb = left >= kWb ? kWb : static_cast<unsigned>(left);
        uint64_t keep = nb >= 64 ? ~uint64_t{0} : (uint64_t{1} << nb) - 1;
        m_->s_axis_tkeep = static_cast<std::remove_reference_t<decltype(m_->s_axis_tkeep)>>(keep);
        m_->s_axis_tlast = left <= kWb;
      }
      m_->m_axis_payload_tready = pay_b(rng_);
      m_->m_meta_ready = meta_b(rng_);
      m_->clk = 0;
      m_->eval();
      if (valid && m_->s_axis_tready) {
        if (first) out.first_accept = cycle_;
        first = false;
        out.last_accept = cycle_;
        ++out.in_beats;
        holding = false;
        off += kWb;
        if (off >= frames[fi].size()) {
          out.frame_end_cycle.push_back(cycle_);
          ++fi;
          off = 0;
        }
      } else {
        holding = valid;
      }
      if (m_->m_axis_payload_tvalid && m_->m_axis_payload_tready) {
        bool seen_gap = false;
        for (unsigned lane = 0; lane < kWb; ++lane) {
          const bool k = (static_cast<uint64_t>(m_->m_axis_payload_tkeep) >> lane) & 1;
          if (k) {
            EXPECT_FALSE(seen_gap) << "tkeep not contiguous";
            cur_pay.push_back(lane_byte(m_->m_axis_payload_tdata, lane));
          } else {
            seen_gap = true;
            EXPECT_EQ(lane_byte(m_->m_axis_payload_tdata, lane), 0) << "data past tkeep";
          }
        }
        if (!m_->m_axis_payload_tlast) {
          EXPECT_EQ(cur_pay.size() % kWb, 0u) << "partial beat without tlast";
        }
        if (m_->m_axis_payload_tlast) {
          out.payloads.push_back(cur_pay);
          cur_pay.clear();
        }
      }
      if (m_->m_meta_valid && m_->m_meta_ready) {
        out.recs.push_back(read_rec(*m_));
        out.meta_cycle.push_back(cycle_);
      }
      m_->clk = 1;
      m_->eval();
      ++cycle_;
      if (fi == frames.size() && out.recs.size() >= frames.size()) {
        if (++idle_after > 40) break;  // watch for stray output
      }
    }
    m_->s_axis_tvalid = 0;
    EXPECT_EQ(out.recs.size(), frames.size()) << "records";
    EXPECT_TRUE(cur_pay.empty()) << "payload without tlast";
    return out;
  }

 private:
  VerilatedContext ctx_;
  std::unique_ptr<Model> m_;
  std::mt19937_64 rng_;
  uint64_t cycle_ = 0;
};

// Compare every record and payload with the reference; returns false on first mismatch.
void check_all(const std::vector<Bytes>& frames, const RunOut& out, const char* what) {
  ASSERT_EQ(out.recs.size(), frames.size()) << what;
  size_t pi = 0;
  for (size_t i = 0; i < frames.size(); ++i) {
    const Expect e = expect_record(frames[i]);
    const std::string d = diff(out.recs[i], e.rec);
    ASSERT_TRUE(d.empty()) << what << " frame " << i << " (len " << frames[i].size() << "): " << d;
    if (e.payload.empty()) continue;
    ASSERT_LT(pi, out.payloads.size()) << what << " frame " << i << ": payload missing";
    ASSERT_EQ(out.payloads[pi], e.payload) << what << " frame " << i << ": payload bytes";
    ++pi;
  }
  EXPECT_EQ(pi, out.payloads.size()) << what << ": extra payload streams";
}

// ---------------------------------------------------------------- frame sets
golden::RejectParams random_params(std::mt19937_64& rng, size_t pd_len) {
  golden::RejectParams p;
  for (auto& b : p.rem_mac.b) b = static_cast<uint8_t>(rng());
  for (auto& b : p.loc_mac.b) b = static_cast<uint8_t>(rng());
  p.vlan_en = rng() & 1;
  p.vlan_tci = static_cast<uint16_t>(rng());
  p.loc_ip = static_cast<uint32_t>(rng());
  p.rem_ip = static_cast<uint32_t>(rng());
  p.tos = static_cast<uint8_t>(rng());
  p.ttl = static_cast<uint8_t>(rng() | 1);
  p.ip_id = static_cast<uint16_t>(rng());
  p.loc_port = static_cast<uint16_t>(rng());
  p.rem_port = static_cast<uint16_t>(rng());
  p.snd_nxt = static_cast<uint32_t>(rng());
  p.rcv_nxt = static_cast<uint32_t>(rng());
  p.rcv_wnd = static_cast<uint16_t>(rng() | 1);
  p.req_rev = (rng() & 1) ? 2 : 1;
  p.req_flags = static_cast<uint8_t>(rng() & 0xD0);
  p.req_ird_ord = static_cast<uint32_t>(rng());
  p.fin = (rng() % 4) == 0;
  p.pd.resize(pd_len);
  for (auto& b : p.pd) b = static_cast<uint8_t>(rng());
  if (golden::is_enhanced(p.req_rev, p.req_flags) && pd_len > 508) p.pd.resize(508);
  return p;
}

uint64_t mac_u64(const golden::Mac& m) {
  uint64_t v = 0;
  for (uint8_t b : m.b) v = v << 8 | b;
  return v;
}

Bytes random_tcp_options(std::mt19937_64& rng) {
  Bytes o;
  const int n = static_cast<int>(rng() % 6);
  for (int i = 0; i < n; ++i) {
    const size_t before = o.size();
    switch (rng() % 7) {
      case 0:
        o.push_back(1);
        break;
      case 1:
        o.insert(o.end(), {2, 4, static_cast<uint8_t>(rng()), static_cast<uint8_t>(rng())});
        break;
      case 2:
        o.insert(o.end(), {3, 3, static_cast<uint8_t>(rng() % 15)});
        break;
      case 3:
        o.insert(o.end(), {4, 2});
        break;   // SACK permitted
      case 4: {  // timestamps
        o.insert(o.end(), {8, 10});
        for (int k = 0; k < 8; ++k) o.push_back(static_cast<uint8_t>(rng()));
        break;
      }
      case 5:
        o.insert(o.end(), {static_cast<uint8_t>(30 + rng() % 200), 5, 1, 2, 3});
        break;
      default:
        o.push_back(0);
        break;
    }
    if (o.size() > 40) o.resize(before);  // only whole options
  }
  while (o.size() % 4) o.push_back(rng() & 1 ? 0 : 1);
  return o;
}

Spec random_spec(std::mt19937_64& rng) {
  Spec s;
  for (auto& b : s.dst) b = static_cast<uint8_t>(rng());
  for (auto& b : s.src) b = static_cast<uint8_t>(rng());
  s.vlan = rng() & 1;
  s.tci = static_cast<uint16_t>(rng());
  s.tos = static_cast<uint8_t>(rng());
  s.ttl = static_cast<uint8_t>(rng());
  s.ip_id = static_cast<uint16_t>(rng());
  s.df = rng() & 1;
  s.sip = static_cast<uint32_t>(rng());
  s.dip = static_cast<uint32_t>(rng());
  if (rng() % 3 == 0) {
    s.ip_opts.resize(4 * (1 + rng() % 10));
    for (auto& b : s.ip_opts) b = static_cast<uint8_t>(rng());
  }
  s.sport = static_cast<uint16_t>(rng());
  s.dport = static_cast<uint16_t>(rng());
  s.seq = static_cast<uint32_t>(rng());
  s.ack = static_cast<uint32_t>(rng());
  s.flags = static_cast<uint8_t>(rng());
  s.window = static_cast<uint16_t>(rng());
  s.tcp_opts = random_tcp_options(rng);
  const size_t plen = rng() % 4 == 0 ? rng() % 8 : rng() % 300;
  s.payload.resize(plen);
  for (auto& b : s.payload) b = static_cast<uint8_t>(rng());
  s.pad_byte = static_cast<uint8_t>(rng() | 1);
  return s;
}

// ---------------------------------------------------------------- tests
struct Rates {
  double in, pay, meta;
};
constexpr Rates kFull{1.0, 1.0, 1.0};
constexpr Rates kRandom{0.6, 0.5, 0.4};

template <typename Model>
void golden_mpa(uint64_t seed, Rates rt) {
  Harness<Model> h(seed);
  std::mt19937_64 rng(seed * 3 + 1);
  std::vector<Bytes> frames;
  std::vector<golden::RejectParams> ps;
  std::vector<Bytes> pds;
  const size_t lens[] = {0,  1,  2,  3,  4,  5,   7,   8,   9,   31,
                         32, 33, 63, 64, 65, 255, 256, 508, 511, 512};
  for (int rep = 0; rep < 2; ++rep) {
    for (size_t len : lens) {
      auto p = random_params(rng, len);
      Bytes pd(len);
      for (auto& b : pd) b = static_cast<uint8_t>(rng());
      if (golden::is_enhanced(p.req_rev, p.req_flags) && len > 508) pd.resize(508);
      frames.push_back(golden::build_mpa_request_frame(p, pd));
      ps.push_back(p);
      pds.push_back(pd);
      frames.push_back(golden::build_mpa_reject_frame(p));
      ps.push_back(p);
      pds.push_back({});
    }
  }
  auto out = h.run(frames, rt.in, rt.pay, rt.meta);
  check_all(frames, out, "mpa");
  // the exact fields the frames were built from
  size_t pi = 0;
  for (size_t i = 0; i < frames.size(); ++i) {
    const Rec& r = out.recs[i];
    const auto& p = ps[i];
    const bool req = (i % 2) == 0;
    SCOPED_TRACE("frame " + std::to_string(i) + (req ? " request" : " reject"));
    EXPECT_EQ(r.bad, 0u);
    EXPECT_EQ(r.tcp, 1u);
    EXPECT_EQ(r.ip_csum_ok, 1u);
    EXPECT_EQ(r.tcp_csum_ok, 1u);
    EXPECT_EQ(r.vlan_present, p.vlan_en ? 1u : 0u);
    if (p.vlan_en) {
      EXPECT_EQ(r.vlan_tci, p.vlan_tci);
    }
    EXPECT_EQ(r.ethertype, 0x0800u);
    EXPECT_EQ(r.ip_tos, p.tos);
    EXPECT_EQ(r.ip_ttl, p.ttl);
    EXPECT_EQ(r.ip_ihl, 5u);
    EXPECT_EQ(r.tcp_doff, 5u);
    EXPECT_EQ(r.tcp_window, p.rcv_wnd);
    EXPECT_EQ(r.tcp_mss_present, 0u);
    size_t mpa_len;
    if (req) {
      mpa_len = golden::mpa_request_payload_len(p, pds[i].size());
      EXPECT_EQ(r.eth_dst, mac_u64(p.loc_mac));
      EXPECT_EQ(r.eth_src, mac_u64(p.rem_mac));
      EXPECT_EQ(r.ip_src, p.rem_ip);
      EXPECT_EQ(r.ip_dst, p.loc_ip);
      EXPECT_EQ(r.ip_id, static_cast<uint16_t>(p.ip_id ^ 0x8000));
      EXPECT_EQ(r.tcp_src_port, p.rem_port);
      EXPECT_EQ(r.tcp_dst_port, p.loc_port);
      EXPECT_EQ(r.tcp_seq, static_cast<uint32_t>(p.rcv_nxt - mpa_len));
      EXPECT_EQ(r.tcp_ack, p.snd_nxt);
      EXPECT_EQ(r.tcp_flags, uint64_t{golden::kTcpAck | golden::kTcpPsh});
    } else {
      mpa_len = golden::mpa_reply_len(p);
      EXPECT_EQ(r.eth_dst, mac_u64(p.rem_mac));
      EXPECT_EQ(r.eth_src, mac_u64(p.loc_mac));
      EXPECT_EQ(r.ip_src, p.loc_ip);
      EXPECT_EQ(r.ip_dst, p.rem_ip);
      EXPECT_EQ(r.ip_id, p.ip_id);
      EXPECT_EQ(r.tcp_seq, p.snd_nxt);
      EXPECT_EQ(r.tcp_ack, p.rcv_nxt);
      EXPECT_EQ(r.tcp_flags, uint64_t{0x18u | (p.fin ? 1u : 0u)});
    }
    ASSERT_EQ(r.payload_len, mpa_len);
    const Bytes& pay = out.payloads[pi++];
    ASSERT_EQ(pay.size(), mpa_len);
    const char* key = req ? "MPA ID Req Frame" : "MPA ID Rep Frame";
    EXPECT_EQ(0, std::memcmp(pay.data(), key, 16));
    if (req) {
      const size_t pd_at = mpa_len - pds[i].size();
      EXPECT_TRUE(
          std::equal(pds[i].begin(), pds[i].end(), pay.begin() + static_cast<ptrdiff_t>(pd_at)));
    } else {
      EXPECT_TRUE(
          std::equal(p.pd.begin(), p.pd.end(), pay.end() - static_cast<ptrdiff_t>(p.pd.size())));
    }
  }
}

TEST(RtlRxParser, W64GoldenMpaFrames) { golden_mpa<Vrx_parser_w64>(1, kFull); }
TEST(RtlRxParser, W512GoldenMpaFrames) { golden_mpa<Vrx_parser_w512>(2, kFull); }
TEST(RtlRxParser, W64GoldenMpaFramesBackpressure) { golden_mpa<Vrx_parser_w64>(3, kRandom); }
TEST(RtlRxParser, W512GoldenMpaFramesBackpressure) { golden_mpa<Vrx_parser_w512>(4, kRandom); }

// SYN / SYN-ACK with irdma's options, IP options, padding to 60 bytes.
template <typename Model>
void syn_frames(uint64_t seed, Rates rt) {
  Harness<Model> h(seed);
  std::vector<Bytes> frames;
  std::vector<Spec> specs;
  for (int vlan = 0; vlan < 2; ++vlan) {
    for (int ipo = 0; ipo <= 40; ipo += 8) {
      for (int synack = 0; synack < 2; ++synack) {
        Spec s;
        s.vlan = vlan;
        s.tci = 0x2064;
        s.ip_opts.assign(static_cast<size_t>(ipo), 0x01);  // NOPs, then EOL
        if (ipo) s.ip_opts.back() = 0;
        s.flags = synack ? 0x12 : 0x02;
        s.seq = 0x11223344u + static_cast<uint32_t>(ipo);
        s.ack = synack ? 0x55667788u : 0;
        s.tcp_opts = syn_options(static_cast<uint16_t>(1460 - ipo), static_cast<uint8_t>(2 + vlan));
        specs.push_back(s);
        frames.push_back(build(s));
      }
    }
  }
  // short payload, padded to 60 bytes: padding must not be forwarded
  for (size_t plen = 0; plen <= 6; ++plen) {
    Spec s;
    s.flags = 0x18;
    s.payload.assign(plen, static_cast<uint8_t>(0x40 + plen));
    specs.push_back(s);
    frames.push_back(build(s));
    EXPECT_EQ(frames.back().size(), 60u);
  }
  auto out = h.run(frames, rt.in, rt.pay, rt.meta);
  check_all(frames, out, "syn");
  for (size_t i = 0; i < frames.size(); ++i) {
    const Rec& r = out.recs[i];
    const Spec& s = specs[i];
    EXPECT_EQ(r.bad, 0u) << i;
    EXPECT_EQ(r.ip_ihl, 5 + s.ip_opts.size() / 4) << i;
    EXPECT_EQ(r.tcp_flags, s.flags) << i;
    EXPECT_EQ(r.tcp_seq, s.seq) << i;
    EXPECT_EQ(r.payload_len, s.payload.size()) << i;
    if (!s.tcp_opts.empty()) {
      EXPECT_EQ(r.tcp_doff, 7u);
      EXPECT_EQ(r.tcp_mss_present, 1u);
      EXPECT_EQ(r.tcp_mss, uint64_t{s.tcp_opts[2]} << 8 | s.tcp_opts[3]);
      EXPECT_EQ(r.tcp_ws_present, 1u);
      EXPECT_EQ(r.tcp_ws, s.tcp_opts[6]);
    }
  }
}

TEST(RtlRxParser, W64SynOptionsIpOptionsPadding) { syn_frames<Vrx_parser_w64>(5, kFull); }
TEST(RtlRxParser, W512SynOptionsIpOptionsPadding) { syn_frames<Vrx_parser_w512>(6, kFull); }
TEST(RtlRxParser, W64SynBackpressure) { syn_frames<Vrx_parser_w64>(7, kRandom); }
TEST(RtlRxParser, W512SynBackpressure) { syn_frames<Vrx_parser_w512>(8, kRandom); }

// Random TCP frames (options of every kind, IP options, payload 0..299) plus broken ones.
template <typename Model>
void random_and_broken(uint64_t seed, Rates rt) {
  Harness<Model> h(seed);
  std::mt19937_64 rng(seed);
  std::vector<Bytes> frames;
  std::vector<std::string> kinds;
  for (int i = 0; i < 300; ++i) {
    Spec s = random_spec(rng);
    Bytes f = build(s);
    const size_t l2 = s.vlan ? 18 : 14;
    const size_t to = l2 + 20 + s.ip_opts.size();
    std::string kind = "ok";
    switch (rng() % 10) {
      case 0:  // IP checksum
        f[l2 + 10] ^= static_cast<uint8_t>(1 + rng() % 255);
        kind = "ipcsum";
        break;
      case 1:  // TCP checksum
        f[to + 16 + rng() % 2] ^= static_cast<uint8_t>(1 + rng() % 255);
        kind = "tcpcsum";
        break;
      case 2:  // truncated anywhere
        f.resize(1 + rng() % f.size());
        kind = "trunc";
        break;
      case 3: {  // IP total length too big / too small (header checksum fixed up)
        uint16_t tl = static_cast<uint16_t>(f[l2 + 2] << 8 | f[l2 + 3]);
        tl = static_cast<uint16_t>((rng() & 1) ? tl + 1 + rng() % 64 : rng() % 40);
        f[l2 + 2] = static_cast<uint8_t>(tl >> 8);
        f[l2 + 3] = static_cast<uint8_t>(tl);
        f[l2 + 10] = f[l2 + 11] = 0;
        Bytes iph(f.begin() + static_cast<ptrdiff_t>(l2), f.begin() + static_cast<ptrdiff_t>(to));
        const uint16_t c = golden::internet_checksum(iph);
        f[l2 + 10] = static_cast<uint8_t>(c >> 8);
        f[l2 + 11] = static_cast<uint8_t>(c);
        kind = "iplen";
        break;
      }
      case 4:  // malformed option length
        if (!s.tcp_opts.empty()) {
          f[to + 20] = static_cast<uint8_t>(2 + rng() % 3);
          f[to + 21] = static_cast<uint8_t>(rng() % 50);
          kind = "opt";
        }
        break;
      case 5:  // fragment / bad data offset / bad IHL
        if (rng() & 1) {
          f[l2 + 6] |= 0x20;
          kind = "frag";
        } else {
          f[to + 12] = static_cast<uint8_t>((rng() % 5) << 4);
          kind = "doff";
        }
        break;
      default:
        break;
    }
    frames.push_back(f);
    kinds.push_back(kind);
  }
  // non-TCP: UDP and ARP
  for (int i = 0; i < 10; ++i) {
    Spec s = random_spec(rng);
    s.proto = 17;
    s.ip_opts.clear();
    frames.push_back(build(s));
    frames.push_back(arp_frame());
  }
  auto out = h.run(frames, rt.in, rt.pay, rt.meta);
  check_all(frames, out, "random");
  for (size_t i = 0; i < kinds.size(); ++i) {
    const Rec& r = out.recs[i];
    if (kinds[i] == "ok") {
      EXPECT_EQ(r.bad, 0u) << i;
    }
    if (kinds[i] == "ipcsum") {
      EXPECT_TRUE(r.bad && !r.ip_csum_ok) << i;
    }
    if (kinds[i] == "tcpcsum") {
      EXPECT_TRUE(r.bad && !r.tcp_csum_ok) << i;
    }
    if (kinds[i] == "iplen") {
      EXPECT_TRUE(r.bad && r.len_err) << i;
    }
    if (kinds[i] == "frag") {
      EXPECT_EQ(r.tcp, 0u) << i;
    }
  }
  for (size_t i = kinds.size(); i < frames.size(); ++i) {
    EXPECT_EQ(out.recs[i].tcp, 0u);
    EXPECT_EQ(out.recs[i].payload_len, 0u);
    EXPECT_EQ(out.recs[i].ipv4, (i - kinds.size()) % 2 == 0 ? 1u : 0u);
  }
}

TEST(RtlRxParser, W64RandomAndBroken) { random_and_broken<Vrx_parser_w64>(9, kFull); }
TEST(RtlRxParser, W512RandomAndBroken) { random_and_broken<Vrx_parser_w512>(10, kFull); }
TEST(RtlRxParser, W64RandomAndBrokenBackpressure) {
  random_and_broken<Vrx_parser_w64>(11, kRandom);
}
TEST(RtlRxParser, W512RandomAndBrokenBackpressure) {
  random_and_broken<Vrx_parser_w512>(12, kRandom);
}

// Every truncation point of a SYN with options and of a request with IP options.
template <typename Model>
void truncations(uint64_t seed) {
  Harness<Model> h(seed);
  Spec s;
  s.vlan = true;
  s.ip_opts.assign(8, 1);
  s.tcp_opts = syn_options(1460, 7);
  s.payload.assign(70, 0x5A);
  const Bytes full = build(s);
  std::vector<Bytes> frames;
  for (size_t n = 1; n <= full.size(); ++n)
    frames.emplace_back(full.begin(), full.begin() + static_cast<ptrdiff_t>(n));
  auto out = h.run(frames, 0.8, 0.7, 0.7);
  check_all(frames, out, "trunc");
  const size_t hdr = 18 + 28 + 28;
  for (size_t n = 1; n < full.size(); ++n) {
    EXPECT_EQ(out.recs[n - 1].bad, 1u) << n;
    EXPECT_EQ(out.recs[n - 1].runt, n < hdr ? 1u : 0u) << n;
    if (n >= 38) {
      EXPECT_EQ(out.recs[n - 1].len_err, 1u) << n;
    }
  }
  EXPECT_EQ(out.recs.back().bad, 0u);
}

TEST(RtlRxParser, W64EveryTruncation) { truncations<Vrx_parser_w64>(13); }
TEST(RtlRxParser, W512EveryTruncation) { truncations<Vrx_parser_w512>(14); }

// The largest frames (the contract is up to 65535 bytes): the beat offset must reach the
// last beat, so the frame length, the IP end compare, the checksum byte mask and the payload
// realignment hold to the last byte. Lengths around the last few beat boundaries, with and
// without VLAN and IP options, one of them with a corrupted TCP checksum in the last byte.
template <typename Model>
void max_length(uint64_t seed) {
  Harness<Model> h(seed);
  std::mt19937_64 rng(seed);
  std::vector<Bytes> frames;
  for (size_t len : {65535u, 65534u, 65473u, 65472u, 65471u, 65409u, 65408u, 65407u, 65000u}) {
    for (int v = 0; v < 2; ++v) {
      Spec s;
      s.vlan = v != 0;
      s.tci = 0x0123;
      if (len % 3 == 0) s.ip_opts.assign(4, 1);
      const size_t hdr = (s.vlan ? 18u : 14u) + 20u + s.ip_opts.size() + 20u;
      s.payload.resize(len - hdr);
      for (auto& b : s.payload) b = static_cast<uint8_t>(rng());
      frames.push_back(build(s));
      ASSERT_EQ(frames.back().size(), len);
    }
  }
  frames.push_back(frames.front());
  frames.back().back() ^= 0x40;  // the TCP checksum must cover the last byte
  auto out = h.run(frames, 0.9, 0.8, 0.9);
  check_all(frames, out, "maxlen");
  for (size_t i = 0; i + 1 < frames.size(); ++i) {
    EXPECT_EQ(out.recs[i].bad, 0u) << i;
    EXPECT_EQ(out.recs[i].frame_len, frames[i].size()) << i;
  }
  EXPECT_EQ(out.recs.back().tcp_csum_ok, 0u);
  EXPECT_EQ(out.recs.back().bad, 1u);
}

TEST(RtlRxParser, W64MaxLengthFrames) { max_length<Vrx_parser_w64>(19); }
TEST(RtlRxParser, W512MaxLengthFrames) { max_length<Vrx_parser_w512>(20); }

// Back to back, no gaps, outputs always ready: all frames in order, and the beat rate.
template <typename Model>
void back_to_back(uint64_t seed, const char* name) {
  constexpr unsigned wb = Harness<Model>::kWb;
  std::mt19937_64 rng(seed);
  struct Mix {
    const char* what;
    std::vector<Bytes> frames;
  };
  std::vector<Mix> mixes(4);
  mixes[0].what = "MPA requests, PD 0..512";
  mixes[1].what = "irdma SYNs (MSS, WS, EOL)";
  mixes[2].what = "minimum 60-byte frames";
  mixes[3].what = "random TCP";
  for (int i = 0; i < 200; ++i) {
    auto p = random_params(rng, rng() % 513);
    mixes[0].frames.push_back(golden::build_mpa_request_frame(p, p.pd));
    Spec syn;
    syn.vlan = rng() & 1;
    syn.tcp_opts = syn_options(1460, 2);
    mixes[1].frames.push_back(build(syn));
    Spec small;
    small.flags = 0x10;
    mixes[2].frames.push_back(build(small));
    mixes[3].frames.push_back(build(random_spec(rng)));
  }
  for (auto& mix : mixes) {
    Harness<Model> h(seed);
    auto out = h.run(mix.frames, 1.0, 1.0, 1.0);
    check_all(mix.frames, out, mix.what);
    const double cycles = static_cast<double>(out.last_accept - out.first_accept + 1);
    const double rate = static_cast<double>(out.in_beats) / cycles;
    size_t min_beats = 1000;
    for (auto& f : mix.frames) min_beats = std::min(min_beats, (f.size() + wb - 1) / wb);
    std::printf(
        "[ %s ] %-28s %6llu beats in %6.0f cycles: %.3f beats/cycle (frames >= %zu beats)\n", name,
        mix.what, static_cast<unsigned long long>(out.in_beats), cycles, rate, min_beats);
    if (mix.what == mixes[0].what) {
      EXPECT_EQ(rate, 1.0) << mix.what;
    }
  }
}

TEST(RtlRxParser, W64BackToBackThroughput) { back_to_back<Vrx_parser_w64>(15, "w64"); }
TEST(RtlRxParser, W512BackToBackThroughput) { back_to_back<Vrx_parser_w512>(16, "w512"); }

// Latency: last beat accepted -> record valid, frames sent one at a time.
template <typename Model>
void latency(uint64_t seed, const char* name) {
  Harness<Model> h(seed);
  Spec plain;
  plain.flags = 0x10;
  plain.payload.assign(100, 1);
  Spec syn;
  syn.tcp_opts = syn_options(1460, 2);
  for (const auto& [what, s, steps] :
       {std::tuple{"no options", plain, 0}, std::tuple{"MSS, WS, EOL", syn, 3}}) {
    const Bytes f = build(s);
    auto out = h.run({f}, 1.0, 1.0, 1.0);
    ASSERT_EQ(out.meta_cycle.size(), 1u);
    const uint64_t lat = out.meta_cycle[0] - out.frame_end_cycle[0];
    std::printf("[ %s ] latency (%s): %llu cycles\n", name, what,
                static_cast<unsigned long long>(lat));
    EXPECT_EQ(lat, 7u + static_cast<uint64_t>(steps)) << what;
  }
}

TEST(RtlRxParser, W64Latency) { latency<Vrx_parser_w64>(17, "w64"); }
TEST(RtlRxParser, W512Latency) { latency<Vrx_parser_w512>(18, "w512"); }

}  // namespace
