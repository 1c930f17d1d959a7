// Tests of the golden reject-frame model, its independent parser, pcap I/O and tshark checks.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "golden/frame_parser.hpp"
#include "golden/gtest_tools.hpp"
#include "golden/pcap_io.hpp"
#include "golden/reject_frame.hpp"
#include "golden/segment.hpp"
#include "golden/tshark.hpp"

namespace golden {
namespace {

using Bytes = std::vector<uint8_t>;

const Bytes kRepKey = {0x4D, 0x50, 0x41, 0x20, 0x49, 0x44, 0x20, 0x52,
                       0x65, 0x70, 0x20, 0x46, 0x72, 0x61, 0x6D, 0x65};

Bytes cat(Bytes a, const Bytes& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

Bytes tail(const Bytes& v, size_t n) { return Bytes(v.end() - static_cast<long>(n), v.end()); }

RejectParams base_params() {
  RejectParams p;
  p.rem_mac.b = {0x00, 0x11, 0x22, 0x33, 0x44, 0x55};
  p.loc_mac.b = {0x02, 0xaa, 0xbb, 0xcc, 0xdd, 0xee};
  p.loc_ip = 0x0A000001;
  p.rem_ip = 0x0A000002;
  p.ttl = 64;
  p.ip_id = 0x3b48;
  p.loc_port = 20049;
  p.rem_port = 49152;
  p.snd_nxt = 0x01020304;
  p.rcv_nxt = 0xA0B0C0D0;
  p.rcv_wnd = 0xFFFF;
  return p;
}

std::string temp_path(const std::string& name) {
  return testing::TempDir() + "golden_" + std::to_string(getpid()) + "_" + name;
}

// Recomputes both checksums of an untagged/tagged frame after a test edits it, using the
// builder's routine (the parser then checks them with its own).
void fix_checksums(Bytes& f) {
  const size_t l3 = (f[12] == 0x81 && f[13] == 0x00) ? 18 : 14;
  f[l3 + 10] = f[l3 + 11] = 0;
  const uint16_t ipc = internet_checksum(std::span<const uint8_t>(f).subspan(l3, 20));
  f[l3 + 10] = static_cast<uint8_t>(ipc >> 8);
  f[l3 + 11] = static_cast<uint8_t>(ipc);
  const size_t l4 = l3 + 20;
  const size_t tcp_len = f.size() - l4;
  f[l4 + 16] = f[l4 + 17] = 0;
  Bytes pseudo(f.begin() + static_cast<long>(l3 + 12), f.begin() + static_cast<long>(l3 + 20));
  pseudo.push_back(0);
  pseudo.push_back(6);
  pseudo.push_back(static_cast<uint8_t>(tcp_len >> 8));
  pseudo.push_back(static_cast<uint8_t>(tcp_len));
  pseudo.insert(pseudo.end(), f.begin() + static_cast<long>(l4), f.end());
  const uint16_t tc = internet_checksum(pseudo);
  f[l4 + 16] = static_cast<uint8_t>(tc >> 8);
  f[l4 + 17] = static_cast<uint8_t>(tc);
}

// ---------------------------------------------------------------------------------------------
// Known answers

TEST(RejectFrame, ReferenceVectorV2EnhancedOverride) {
  RejectParams p = base_params();
  p.req_rev = 2;
  p.req_flags = 0x50;  // C | enhanced
  p.ird_ord_override = 0x80104010;
  p.pd = {'A', 'B', 'C', 'D'};
  const Bytes f = build_mpa_reject_frame(p);
  ASSERT_EQ(f.size(), 14u + 20 + 20 + 28);
  EXPECT_EQ(tail(f, 28),
            cat(kRepKey, {0x70, 0x02, 0x00, 0x08, 0x80, 0x10, 0x40, 0x10, 0x41, 0x42, 0x43, 0x44}));
}

TEST(RejectFrame, ReferenceVectorV1NoPd) {
  RejectParams p = base_params();
  p.req_rev = 1;
  p.req_flags = 0x40;
  const Bytes f = build_mpa_reject_frame(p);
  ASSERT_EQ(f.size(), 14u + 20 + 20 + 20);
  EXPECT_EQ(tail(f, 20), cat(kRepKey, {0x60, 0x01, 0x00, 0x00}));
}

// Whole frames computed by a separate one-off script (Python struct + RFC 1071 sum).
TEST(RejectFrame, WholeFrameV1FinOddPd) {
  RejectParams p = base_params();
  p.req_rev = 1;
  p.req_flags = 0x40;
  p.fin = true;
  p.pd = {'h', 'i', '!'};
  const Bytes want = {0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x02, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0x08,
                      0x00, 0x45, 0x00, 0x00, 0x3f, 0x3b, 0x48, 0x40, 0x00, 0x40, 0x06, 0xeb, 0x6e,
                      0x0a, 0x00, 0x00, 0x01, 0x0a, 0x00, 0x00, 0x02, 0x4e, 0x51, 0xc0, 0x00, 0x01,
                      0x02, 0x03, 0x04, 0xa0, 0xb0, 0xc0, 0xd0, 0x50, 0x19, 0xff, 0xff, 0xe0, 0xe6,
                      0x00, 0x00, 0x4d, 0x50, 0x41, 0x20, 0x49, 0x44, 0x20, 0x52, 0x65, 0x70, 0x20,
                      0x46, 0x72, 0x61, 0x6d, 0x65, 0x60, 0x01, 0x00, 0x03, 0x68, 0x69, 0x21};
  EXPECT_EQ(build_mpa_reject_frame(p), want);
  EXPECT_EQ(reject_seq_advance(p), 24u);  // M = 23, +1 for FIN
}

TEST(RejectFrame, WholeFrameV2VlanSeqWrap) {
  RejectParams p = base_params();
  p.vlan_en = true;
  p.vlan_tci = 0x6064;
  p.ip_id = 0xfffe;
  p.snd_nxt = 0xfffffff0;
  p.rcv_nxt = 0x12345678;
  p.req_rev = 2;
  p.req_flags = 0x50;
  p.ird_ord_override = 0x80104010;
  p.pd = {'A', 'B', 'C', 'D'};
  const Bytes want = {0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x02, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0x81,
                      0x00, 0x60, 0x64, 0x08, 0x00, 0x45, 0x00, 0x00, 0x44, 0xff, 0xfe, 0x40, 0x00,
                      0x40, 0x06, 0x26, 0xb3, 0x0a, 0x00, 0x00, 0x01, 0x0a, 0x00, 0x00, 0x02, 0x4e,
                      0x51, 0xc0, 0x00, 0xff, 0xff, 0xff, 0xf0, 0x12, 0x34, 0x56, 0x78, 0x50, 0x18,
                      0xff, 0xff, 0x12, 0x89, 0x00, 0x00, 0x4d, 0x50, 0x41, 0x20, 0x49, 0x44, 0x20,
                      0x52, 0x65, 0x70, 0x20, 0x46, 0x72, 0x61, 0x6d, 0x65, 0x70, 0x02, 0x00, 0x08,
                      0x80, 0x10, 0x40, 0x10, 0x41, 0x42, 0x43, 0x44};
  EXPECT_EQ(build_mpa_reject_frame(p), want);
}

TEST(RejectFrame, DefaultIrdOrdWord) {
  EXPECT_EQ(default_reply_ird_ord(0x80104010), 0xBFFF7FFFu);  // READ RTR
  EXPECT_EQ(default_reply_ird_ord(0x80108010), 0xBFFFBFFFu);  // only WRITE RTR
  EXPECT_EQ(default_reply_ird_ord(0x80100010), 0xBFFF7FFFu);  // no RTR bit
  EXPECT_EQ(default_reply_ird_ord(0x0000C000), 0xBFFF7FFFu);  // both: READ wins
  EXPECT_EQ(default_reply_ird_ord(0xC0000000), 0xBFFF7FFFu);  // A/B bits are not RTR bits

  RejectParams p = base_params();
  p.req_rev = 2;
  p.req_flags = 0x50;
  p.req_ird_ord = 0x80108010;
  EXPECT_EQ(tail(build_mpa_reject_frame(p), 8),
            Bytes({0x70, 0x02, 0x00, 0x04, 0xBF, 0xFF, 0xBF, 0xFF}));
}

TEST(RejectFrame, FlagsAndEnhancedRules) {
  EXPECT_TRUE(is_enhanced(2, 0x10));
  EXPECT_TRUE(is_enhanced(2, 0xD0));
  EXPECT_FALSE(is_enhanced(2, 0x40));
  EXPECT_FALSE(is_enhanced(1, 0x50));
  RejectParams p = base_params();
  p.req_rev = 1;
  p.req_flags = 0xDF;  // M and C echo; enhanced and reserved bits do not
  EXPECT_EQ(reply_mpa_flags(p), 0xE0);
  p.req_rev = 2;
  EXPECT_EQ(reply_mpa_flags(p), 0xF0);
  p.req_flags = 0x10;
  EXPECT_EQ(reply_mpa_flags(p), 0x30);
  p.req_flags = 0x08;  // siw's private GSO bit is not echoed
  EXPECT_EQ(reply_mpa_flags(p), 0x20);
}

TEST(RejectFrame, LimitsAndBadRev) {
  RejectParams p = base_params();
  for (uint8_t rev : {0, 3, 255}) {
    p.req_rev = rev;
    EXPECT_EQ(validate_reject(p), RejectStatus::kBadRev);
    EXPECT_TRUE(build_mpa_reject_frame(p).empty());
  }
  p.req_rev = 1;
  p.pd.assign(512, 0x5A);
  EXPECT_EQ(validate_reject(p), RejectStatus::kOk);
  EXPECT_EQ(build_mpa_reject_frame(p).size(), 14u + 40 + 20 + 512);
  p.pd.push_back(0);
  EXPECT_EQ(validate_reject(p), RejectStatus::kPdTooLong);
  EXPECT_TRUE(build_mpa_reject_frame(p).empty());
  p.req_rev = 2;
  p.req_flags = 0x50;
  p.pd.assign(508, 1);
  EXPECT_EQ(validate_reject(p), RejectStatus::kOk);
  EXPECT_EQ(reply_pd_length(p), 512);
  p.pd.push_back(1);
  EXPECT_EQ(validate_reject(p), RejectStatus::kPdTooLong);
  p.req_flags = 0x40;  // rev 2 but not enhanced: 509 bytes fit
  EXPECT_EQ(validate_reject(p), RejectStatus::kOk);
}

TEST(Checksum, ClassicIpv4Header) {
  const Bytes hdr = {0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
                     0x00, 0x00, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7};
  EXPECT_EQ(internet_checksum(hdr), 0xb861);
  Bytes with = hdr;
  with[10] = 0xb8;
  with[11] = 0x61;
  EXPECT_TRUE(ipv4_header_checksum_ok(with));
  EXPECT_EQ(internet_checksum(with), 0);
  with[11] = 0x62;
  EXPECT_FALSE(ipv4_header_checksum_ok(with));
}

TEST(Checksum, OddLengthPadsWithZero) {
  EXPECT_EQ(internet_checksum(Bytes{0x01}), static_cast<uint16_t>(~0x0100));
  EXPECT_EQ(internet_checksum(Bytes{0xff, 0xff, 0xff}), static_cast<uint16_t>(~0xff00));
  EXPECT_EQ(internet_checksum(Bytes{}), 0xffff);
}

// ---------------------------------------------------------------------------------------------
// Builder -> parser

TEST(RoundTrip, AllShapesAndSingleByteCorruption) {
  std::mt19937 rng(20261202);
  auto rnd = [&rng](uint32_t n) { return static_cast<uint32_t>(rng() % n); };
  const size_t pd_lens[] = {0, 1, 3, 4, 5, 63, 64, 65, 255, 508, 512};
  int frames = 0;
  for (uint8_t rev : {1, 2}) {
    for (uint8_t req_flags : {0x40, 0x50, 0xD0, 0x00, 0x9F}) {
      for (bool vlan : {false, true}) {
        for (bool fin : {false, true}) {
          for (size_t pd_len : pd_lens) {
            RejectParams p;
            for (auto& b : p.rem_mac.b) b = static_cast<uint8_t>(rnd(256));
            for (auto& b : p.loc_mac.b) b = static_cast<uint8_t>(rnd(256));
            p.vlan_en = vlan;
            p.vlan_tci = static_cast<uint16_t>(rnd(65536));
            p.loc_ip = static_cast<uint32_t>(rng());
            p.rem_ip = static_cast<uint32_t>(rng());
            p.tos = static_cast<uint8_t>(rnd(256));
            p.ttl = static_cast<uint8_t>(rnd(256));
            p.ip_id = static_cast<uint16_t>(rnd(65536));
            p.loc_port = static_cast<uint16_t>(rnd(65536));
            p.rem_port = static_cast<uint16_t>(rnd(65536));
            p.snd_nxt = static_cast<uint32_t>(rng());
            p.rcv_nxt = static_cast<uint32_t>(rng());
            p.rcv_wnd = static_cast<uint16_t>(rnd(65536));
            p.req_rev = rev;
            p.req_flags = req_flags;
            p.req_ird_ord = static_cast<uint32_t>(rng());
            if (rnd(2) != 0) p.ird_ord_override = static_cast<uint32_t>(rng());
            p.fin = fin;
            p.pd.resize(pd_len);
            for (auto& b : p.pd) b = static_cast<uint8_t>(rnd(256));
            const bool enh = is_enhanced(rev, req_flags);
            const bool legal = pd_len + (enh ? 4 : 0) <= 512;
            SCOPED_TRACE("rev " + std::to_string(rev) + " flags " + std::to_string(req_flags) +
                         " vlan " + std::to_string(vlan) + " fin " + std::to_string(fin) + " pd " +
                         std::to_string(pd_len));
            const Bytes f = build_mpa_reject_frame(p);
            if (!legal) {
              EXPECT_TRUE(f.empty());
              continue;
            }
            ++frames;
            ASSERT_EQ(f.size(), (vlan ? 18u : 14u) + 40 + mpa_reply_len(p));
            std::string why;
            const auto r = parse_mpa_reply(f, &why);
            ASSERT_TRUE(r.has_value()) << why;
            EXPECT_TRUE(reject_matches_params(*r, p, &why)) << why;
            EXPECT_EQ(r->private_data, p.pd);
            EXPECT_EQ(r->enhanced, enh);
            EXPECT_EQ(r->mpa_flags & 0x20, 0x20);
            EXPECT_EQ(r->ip_total_length, 40 + mpa_reply_len(p));

            // Any single-byte change in the IP header or TCP segment must be caught.
            const size_t l3 = vlan ? 18 : 14;
            for (size_t i = l3; i < f.size(); ++i) {
              Bytes g = f;
              g[i] ^= static_cast<uint8_t>(1 + rnd(255));
              std::string why2;
              const auto bad = parse_mpa_reply(g, &why2);
              ASSERT_FALSE(bad.has_value()) << "byte " << i << " corruption accepted";
              if (i != l3) {  // byte 0 of IP may first fail the IHL check
                ASSERT_NE(why2.find("checksum"), std::string::npos) << "byte " << i << ": " << why2;
              }
            }
          }
        }
      }
    }
  }
  EXPECT_GT(frames, 200);
}

// ---------------------------------------------------------------------------------------------
// Segments bounded by the peer's MSS

TEST(RejectSegments, KnownSplitV2Enhanced) {
  RejectParams p = base_params();
  p.req_rev = 2;
  p.req_flags = 0x50;
  p.ird_ord_override = 0x80018002;
  p.fin = true;
  p.ip_id = 0xFFFF;  // the IPv4 ID wraps from segment 0 to 1
  p.snd_nxt = 0xFFFFFFF0;
  p.pd.resize(100);
  for (size_t i = 0; i < p.pd.size(); ++i) p.pd[i] = static_cast<uint8_t>(i + 1);
  // M = 20 + 4 + 100 = 124: 48 + 48 + 28
  const auto segs = build_mpa_reject_segments(p, 48);
  ASSERT_EQ(segs.size(), 3u);
  EXPECT_EQ(reject_segment_count(p, 48), 3u);
  const size_t lens[] = {48, 48, 28};
  const uint16_t ids[] = {0xFFFF, 0x0000, 0x0001};
  const uint32_t seqs[] = {0xFFFFFFF0, 0x00000020, 0x00000050};
  Bytes payload;
  for (size_t k = 0; k < 3; ++k) {
    std::string why;
    const auto s = parse_tcp_segment(segs[k], &why);
    ASSERT_TRUE(s.has_value()) << "segment " << k << ": " << why;
    EXPECT_EQ(segs[k].size(), 54 + lens[k]);
    EXPECT_EQ(s->payload.size(), lens[k]);
    EXPECT_EQ(s->ip_total_length, 40 + lens[k]);
    EXPECT_EQ(s->ip_id, ids[k]);
    EXPECT_EQ(s->seq, seqs[k]);
    EXPECT_EQ(s->ack, p.rcv_nxt);
    EXPECT_EQ(s->tcp_flags, k == 2 ? 0x19 : 0x18) << "segment " << k;
    payload = cat(payload, s->payload);
  }
  // the reply's bytes in order: key, flags 0x70 (M, C echoed; R; enhanced), rev 2, PD_Length 104,
  // IRD/ORD, PD
  ASSERT_EQ(payload.size(), 124u);
  EXPECT_EQ(Bytes(payload.begin(), payload.begin() + 16), kRepKey);
  EXPECT_EQ(payload[16], 0x70);
  EXPECT_EQ(payload[17], 2);
  EXPECT_EQ(payload[18], 0);
  EXPECT_EQ(payload[19], 104);
  EXPECT_EQ(Bytes(payload.begin() + 20, payload.begin() + 24), (Bytes{0x80, 0x01, 0x80, 0x02}));
  EXPECT_EQ(tail(payload, 100), p.pd);
}

TEST(RejectSegments, SplitsEveryShapeAndMss) {
  std::mt19937 rng(20270101);
  int split = 0;
  for (size_t pd_len : {0, 1, 27, 28, 29, 100, 255, 507, 508, 512}) {
    for (bool enh : {false, true}) {
      if (enh && pd_len > 508) continue;
      for (bool vlan : {false, true}) {
        for (bool fin : {false, true}) {
          RejectParams p = base_params();
          p.req_rev = enh ? 2 : 1;
          p.req_flags = enh ? 0x50 : 0x40;
          p.vlan_en = vlan;
          p.vlan_tci = 0x2064;
          p.fin = fin;
          p.ip_id = static_cast<uint16_t>(rng());
          p.snd_nxt = static_cast<uint32_t>(rng());
          p.pd.resize(pd_len);
          for (auto& b : p.pd) b = static_cast<uint8_t>(rng());
          const size_t m = mpa_reply_len(p);
          const Bytes whole = build_mpa_reject_frame(p);
          const size_t hdr = vlan ? 58 : 54;
          for (size_t mss : {size_t{0}, size_t{48}, size_t{49}, size_t{63}, size_t{64}, size_t{100},
                             m - 1, m, m + 1, size_t{1460}}) {
            SCOPED_TRACE("pd " + std::to_string(pd_len) + " enh " + std::to_string(enh) + " vlan " +
                         std::to_string(vlan) + " fin " + std::to_string(fin) + " mss " +
                         std::to_string(mss));
            const auto segs = build_mpa_reject_segments(p, mss);
            const size_t n = (mss == 0 || mss >= m) ? 1 : (m + mss - 1) / mss;
            ASSERT_EQ(segs.size(), n);
            EXPECT_EQ(reject_segment_count(p, mss), n);
            if (n == 1) {
              EXPECT_EQ(segs[0], whole);
              continue;
            }
            ++split;
            Bytes payload;
            for (size_t k = 0; k < n; ++k) {
              std::string why;
              const auto s = parse_tcp_segment(segs[k], &why);
              ASSERT_TRUE(s.has_value()) << "segment " << k << ": " << why;
              const size_t len = (k + 1 < n) ? mss : m - (n - 1) * mss;
              EXPECT_EQ(s->payload.size(), len);
              EXPECT_EQ(segs[k].size(), hdr + len);
              EXPECT_EQ(s->seq, p.snd_nxt + static_cast<uint32_t>(k * mss));
              EXPECT_EQ(s->ip_id, static_cast<uint16_t>(p.ip_id + k));
              EXPECT_EQ(s->tcp_flags, (fin && k + 1 == n) ? 0x19 : 0x18);
              // everything in front of the IPv4 total length is the single frame's
              EXPECT_EQ(Bytes(segs[k].begin(), segs[k].begin() + static_cast<long>(hdr - 38)),
                        Bytes(whole.begin(), whole.begin() + static_cast<long>(hdr - 38)));
              payload = cat(payload, s->payload);
            }
            EXPECT_EQ(payload, Bytes(whole.begin() + static_cast<long>(hdr), whole.end()));
          }
        }
      }
    }
  }
  EXPECT_GT(split, 100);
}

TEST(Parser, RejectsInconsistentLengths) {
  RejectParams p = base_params();
  p.req_rev = 2;
  p.req_flags = 0x50;
  p.pd = {1, 2, 3, 4, 5};
  const Bytes good = build_mpa_reject_frame(p);
  std::string why;
  ASSERT_TRUE(parse_mpa_reply(good, &why).has_value()) << why;
  const size_t mpa = 14 + 40;

  Bytes g = good;  // PD_Length one more than present
  g[mpa + 19] += 1;
  fix_checksums(g);
  EXPECT_FALSE(parse_mpa_reply(g, &why).has_value());
  EXPECT_NE(why.find("PD_Length"), std::string::npos) << why;

  g = good;  // PD_Length one less than present
  g[mpa + 19] -= 1;
  fix_checksums(g);
  EXPECT_FALSE(parse_mpa_reply(g, &why).has_value());
  EXPECT_NE(why.find("PD_Length"), std::string::npos) << why;

  g = good;  // IP total length one more than the bytes present, checksums valid
  g[14 + 3] += 1;
  fix_checksums(g);
  EXPECT_FALSE(parse_mpa_reply(g, &why).has_value());
  EXPECT_NE(why.find("total length"), std::string::npos) << why;

  g = good;  // extra trailing byte, lengths not updated
  g.push_back(0);
  EXPECT_FALSE(parse_mpa_reply(g, &why).has_value());
  EXPECT_NE(why.find("total length"), std::string::npos) << why;

  g = good;  // enhanced with PD_Length < 4
  g.resize(mpa + 22);
  g[14 + 2] = 0;
  g[14 + 3] = static_cast<uint8_t>(g.size() - 14);
  g[mpa + 18] = 0;
  g[mpa + 19] = 2;
  fix_checksums(g);
  EXPECT_FALSE(parse_mpa_reply(g, &why).has_value());
  EXPECT_NE(why.find("PD_Length < 4"), std::string::npos) << why;

  p.req_flags = 0x40;  // PD_Length 513 with 513 bytes present: over MPA_PD_MAX
  p.pd.assign(512, 7);
  g = build_mpa_reject_frame(p);
  ASSERT_FALSE(g.empty());
  g.push_back(7);
  g[mpa + 18] = 0x02;
  g[mpa + 19] = 0x01;
  g[14 + 2] = static_cast<uint8_t>((g.size() - 14) >> 8);
  g[14 + 3] = static_cast<uint8_t>(g.size() - 14);
  fix_checksums(g);
  EXPECT_FALSE(parse_mpa_reply(g, &why).has_value());
  EXPECT_NE(why.find("> 512"), std::string::npos) << why;

  for (size_t n : {0, 13, 17, 33, 53, 73}) {  // truncated anywhere
    EXPECT_FALSE(parse_mpa_reply(std::span<const uint8_t>(good).first(n), &why).has_value());
  }
  EXPECT_FALSE(parse_mpa_reply(good, nullptr) == std::nullopt);  // null why is allowed
}

TEST(Parser, ReportsKeyAndChecksFields) {
  RejectParams p = base_params();
  p.req_rev = 1;
  p.req_flags = 0x40;
  p.pd = {9, 9};
  Bytes g = build_mpa_reject_frame(p);
  g[14 + 40 + 9] = 'q';  // "MPA ID Req Frame"
  fix_checksums(g);
  std::string why;
  const auto r = parse_mpa_reply(g, &why);
  ASSERT_TRUE(r.has_value()) << why;
  EXPECT_FALSE(r->key_reply_ok);
  EXPECT_TRUE(r->key_request_ok);
  EXPECT_FALSE(reject_matches_params(*r, p, &why));

  const auto ok = parse_mpa_reply(build_mpa_reject_frame(p), &why);
  ASSERT_TRUE(ok.has_value());
  RejectParams q = p;
  q.snd_nxt += 1;
  EXPECT_FALSE(reject_matches_params(*ok, q, &why));
  EXPECT_NE(why.find("TCP sequence"), std::string::npos) << why;
  q = p;
  q.fin = true;
  EXPECT_FALSE(reject_matches_params(*ok, q, &why));
  EXPECT_NE(why.find("TCP flags"), std::string::npos) << why;
}

TEST(RequestFrame, MirrorsTheConnection) {
  RejectParams p = base_params();
  p.vlan_en = true;
  p.vlan_tci = 0x0123;
  p.req_rev = 2;
  p.req_flags = 0x50;
  p.req_ird_ord = 0x80104010;
  const Bytes req_pd = {0xde, 0xad, 0xbe};
  EXPECT_EQ(mpa_request_payload_len(p, req_pd.size()), 27u);
  p.rcv_nxt = 1000 + 27;
  const Bytes f = build_mpa_request_frame(p, req_pd);
  std::string why;
  const auto r = parse_mpa_reply(f, &why);  // same wire layout as a reply
  ASSERT_TRUE(r.has_value()) << why;
  EXPECT_TRUE(r->key_request_ok);
  EXPECT_EQ(r->dst_mac, p.loc_mac.b);
  EXPECT_EQ(r->src_mac, p.rem_mac.b);
  EXPECT_TRUE(r->vlan);
  EXPECT_EQ(r->vlan_tci, 0x0123);
  EXPECT_EQ(r->src_ip, p.rem_ip);
  EXPECT_EQ(r->dst_ip, p.loc_ip);
  EXPECT_EQ(r->src_port, p.rem_port);
  EXPECT_EQ(r->dst_port, p.loc_port);
  EXPECT_EQ(r->seq, 1000u);
  EXPECT_EQ(r->ack, p.snd_nxt);
  EXPECT_EQ(r->tcp_flags, 0x18);
  EXPECT_EQ(r->mpa_flags, 0x50);
  EXPECT_EQ(r->rev, 2);
  EXPECT_EQ(r->pd_length, 7);
  EXPECT_EQ(r->ird_ord, 0x80104010u);
  EXPECT_EQ(r->private_data, req_pd);

  p.req_rev = 1;
  p.req_flags = 0x40;
  EXPECT_EQ(mpa_request_payload_len(p, 0), 20u);
  const auto r1 = parse_mpa_reply(build_mpa_request_frame(p, {}), &why);
  ASSERT_TRUE(r1.has_value()) << why;
  EXPECT_EQ(r1->pd_length, 0);
  EXPECT_FALSE(r1->ird_ord.has_value());
  EXPECT_EQ(r1->seq, p.rcv_nxt - 20);
}

// ---------------------------------------------------------------------------------------------
// pcap

TEST(Pcap, WriteReadRoundTrip) {
  RejectParams p = base_params();
  p.pd.assign(300, 0xA5);
  const std::vector<Packet> pk = {build_mpa_reject_frame(p), Bytes(60, 0x11), Bytes(1514, 0x22),
                                  Bytes{0x01}};
  const std::string path = temp_path("roundtrip.pcap");
  std::string err;
  ASSERT_TRUE(write_pcap(path, pk, &err)) << err;
  const auto back = read_pcap(path, &err);
  ASSERT_TRUE(back.has_value()) << err;
  EXPECT_EQ(*back, pk);

  ASSERT_TRUE(write_pcap(path, {}, &err)) << err;
  const auto empty = read_pcap(path, &err);
  ASSERT_TRUE(empty.has_value()) << err;
  EXPECT_TRUE(empty->empty());
  std::remove(path.c_str());
}

TEST(Pcap, ReadErrors) {
  std::string err;
  EXPECT_FALSE(read_pcap("/nonexistent/dir/x.pcap", &err).has_value());
  EXPECT_FALSE(err.empty());
  const std::string path = temp_path("garbage.pcap");
  FILE* fp = std::fopen(path.c_str(), "wb");
  ASSERT_NE(fp, nullptr);
  std::fputs("this is not a capture file at all", fp);
  std::fclose(fp);
  err.clear();
  EXPECT_FALSE(read_pcap(path, &err).has_value());
  EXPECT_FALSE(err.empty());
  std::remove(path.c_str());
}

// ---------------------------------------------------------------------------------------------
// tshark as a third-party check

struct Conn {
  RejectParams p;
  Bytes req_pd;
};

std::vector<Conn> tshark_connections() {
  std::vector<Conn> out;
  uint16_t port = 20000;
  for (uint8_t rev : {1, 2}) {
    for (bool vlan : {false, true}) {
      for (bool fin : {false, true}) {
        Conn c;
        c.p = base_params();
        c.p.vlan_en = vlan;
        c.p.vlan_tci = 0x2005;
        c.p.loc_port = port++;
        c.p.rem_port = static_cast<uint16_t>(port + 30000);
        c.p.req_rev = rev;
        c.p.req_flags = rev == 2 ? 0x50 : 0x40;
        c.p.req_ird_ord = 0x80104010;
        c.p.fin = fin;
        c.p.pd.clear();
        for (size_t i = 0; i < 5u + port % 7; ++i) c.p.pd.push_back(static_cast<uint8_t>(i * 37));
        c.req_pd = {'h', 'e', 'l', 'l', 'o'};
        c.p.rcv_nxt = 0x70000000u + mpa_request_payload_len(c.p, c.req_pd.size());
        out.push_back(c);
      }
    }
  }
  return out;
}

TEST(Tshark, DissectsRejectsV1V2VlanFin) {
  GOLDEN_REQUIRE_TSHARK();
  const auto conns = tshark_connections();
  std::vector<Packet> pk;
  for (const Conn& c : conns) {
    pk.push_back(build_mpa_request_frame(c.p, c.req_pd));
    pk.push_back(build_mpa_reject_frame(c.p));
  }
  const std::string path = temp_path("tshark.pcap");
  std::string err;
  ASSERT_TRUE(write_pcap(path, pk, &err)) << err;
  const TsharkReport rep = tshark_check_mpa(path);
  std::remove(path.c_str());
  ASSERT_TRUE(rep.ok) << rep.error;
  EXPECT_TRUE(rep.clean()) << rep.summary();
  EXPECT_EQ(rep.frames, pk.size());
  ASSERT_EQ(rep.replies.size(), conns.size());
  for (size_t i = 0; i < conns.size(); ++i) {
    const RejectParams& p = conns[i].p;
    const TsharkMpaRow& row = rep.replies[i];
    SCOPED_TRACE("connection " + std::to_string(i));
    EXPECT_EQ(row.frame, 2 * i + 2);
    EXPECT_TRUE(row.rej_flag);
    EXPECT_EQ(row.rev, p.req_rev);
    EXPECT_EQ(row.pd_length, reply_pd_length(p));
    Bytes want = p.pd;
    if (is_enhanced(p.req_rev, p.req_flags)) {
      want = cat({0xBF, 0xFF, 0x7F, 0xFF}, p.pd);  // default word, READ RTR requested
    }
    EXPECT_EQ(row.private_data, want);
  }
}

// The clean result above means something only if tshark's checks really fire: bad
// checksums and warning-level expert infos (here TCP Zero Window) must be reported.
TEST(Tshark, FlagsBadChecksums) {
  GOLDEN_REQUIRE_TSHARK();
  const auto conns = tshark_connections();
  std::vector<Packet> pk;
  pk.push_back(build_mpa_request_frame(conns[0].p, conns[0].req_pd));
  pk.push_back(build_mpa_reject_frame(conns[0].p));
  pk.back()[14 + 20 + 16] ^= 0x01;                                     // TCP checksum of frame 2
  pk.push_back(build_mpa_request_frame(conns[2].p, conns[2].req_pd));  // VLAN
  pk.push_back(build_mpa_reject_frame(conns[2].p));
  pk.back()[18 + 10] ^= 0x80;          // IPv4 checksum of frame 4
  RejectParams zero_wnd = conns[4].p;  // a valid pair that tshark warns about
  zero_wnd.rcv_wnd = 0;
  pk.push_back(build_mpa_request_frame(zero_wnd, conns[4].req_pd));
  pk.push_back(build_mpa_reject_frame(zero_wnd));
  const std::string path = temp_path("tshark_bad.pcap");
  std::string err;
  ASSERT_TRUE(write_pcap(path, pk, &err)) << err;
  const TsharkReport rep = tshark_check_mpa(path);
  std::remove(path.c_str());
  ASSERT_TRUE(rep.ok) << rep.error;
  EXPECT_FALSE(rep.clean());
  EXPECT_EQ(rep.tcp_checksum_bad, std::vector<uint32_t>{2});
  EXPECT_EQ(rep.ip_checksum_bad, std::vector<uint32_t>{4});
  EXPECT_TRUE(rep.malformed.empty());
  ASSERT_FALSE(rep.experts.empty());
  bool zero_window_seen = false;
  for (const TsharkExpert& e : rep.experts) {
    EXPECT_GE(e.severity, 0x600000u);
    if (e.frame >= 5 && e.message.find("Zero Window") != std::string::npos) {
      zero_window_seen = true;
    }
  }
  EXPECT_TRUE(zero_window_seen) << rep.summary();
  EXPECT_EQ(rep.replies.size(), 3u);  // a bad checksum does not stop the MPA dissection
}

TEST(Tshark, MissingFileIsAnError) {
  GOLDEN_REQUIRE_TSHARK();
  const TsharkReport rep = tshark_check_mpa("/nonexistent/dir/x.pcap");
  EXPECT_FALSE(rep.ok);
  EXPECT_FALSE(rep.error.empty());
}

// ---- test-side segments (segment.hpp): builder and lenient decoder

SegmentSpec sample_spec() {
  SegmentSpec s;
  s.dst_mac = {0x02, 0xbb, 0xcc, 0xdd, 0xee, 0x01};
  s.src_mac = {0x02, 0x00, 0x00, 0x01, 0x00, 0x07};
  s.vlan = 0x2064;
  s.tos = 0x28;
  s.ip_id = 0x1234;
  s.ttl = 61;
  s.src_ip = 0x0A000102;
  s.dst_ip = 0x0A000001;
  s.sport = 40007;
  s.dport = 20049;
  s.seq = 0xFFFFFFF0;
  s.ack = 0x01020304;
  s.flags = 0x12;
  s.window = 0x7000;
  s.tcp_opts = {2, 4, 0x05, 0x78, 1, 3, 3, 5};  // MSS 1400, NOP, WS 5
  s.payload = {'M', 'P', 'A', 0x00, 0xFF};      // odd length
  return s;
}

TEST(Segment, BuildDecodeRoundTrip) {
  const SegmentSpec spec = sample_spec();
  const auto f = build_segment(spec);
  ASSERT_EQ(f.size(), 18u + 20 + 28 + 5);
  std::string why;
  const auto d = decode_segment(f, &why);
  ASSERT_TRUE(d) << why;
  EXPECT_EQ(d->dst_mac, spec.dst_mac);
  EXPECT_EQ(d->src_mac, spec.src_mac);
  EXPECT_EQ(d->vlan_tci, spec.vlan);
  EXPECT_EQ(d->tos, spec.tos);
  EXPECT_EQ(d->ttl, spec.ttl);
  EXPECT_EQ(d->ip_id, spec.ip_id);
  EXPECT_EQ(d->ip_frag, 0x4000);
  EXPECT_EQ(d->src_ip, spec.src_ip);
  EXPECT_EQ(d->dst_ip, spec.dst_ip);
  EXPECT_EQ(d->sport, spec.sport);
  EXPECT_EQ(d->dport, spec.dport);
  EXPECT_EQ(d->seq, spec.seq);
  EXPECT_EQ(d->ack, spec.ack);
  EXPECT_EQ(d->flags, spec.flags);
  EXPECT_EQ(d->window, spec.window);
  EXPECT_EQ(d->mss, std::optional<uint16_t>(1400));
  EXPECT_EQ(d->wscale, std::optional<uint8_t>(5));
  EXPECT_EQ(d->payload, spec.payload);
  EXPECT_TRUE(d->ip_csum_ok);
  EXPECT_TRUE(d->tcp_csum_ok);
  // the strict parser takes the same frame and reads the same fields
  const auto p = parse_tcp_segment(f, &why);
  ASSERT_TRUE(p) << why;
  EXPECT_EQ(p->seq, spec.seq);
  EXPECT_EQ(p->mss, d->mss);
  EXPECT_EQ(p->payload, spec.payload);
}

TEST(Segment, PadsToTheEthernetMinimum) {
  SegmentSpec s = sample_spec();
  s.vlan.reset();
  s.tcp_opts.clear();
  s.payload.clear();
  EXPECT_EQ(build_segment(s).size(), 60u);
  s.pad = false;
  EXPECT_EQ(build_segment(s).size(), 54u);
}

TEST(Segment, ChecksumKnobsAreReportedNotRefused) {
  SegmentSpec s = sample_spec();
  s.ip_csum_xor = 0x0001;
  auto d = decode_segment(build_segment(s), nullptr);
  ASSERT_TRUE(d);
  EXPECT_FALSE(d->ip_csum_ok);
  EXPECT_TRUE(d->tcp_csum_ok);
  EXPECT_FALSE(parse_tcp_segment(build_segment(s), nullptr));
  s.ip_csum_xor = 0;
  s.tcp_csum_xor = 0x8000;
  d = decode_segment(build_segment(s), nullptr);
  ASSERT_TRUE(d);
  EXPECT_TRUE(d->ip_csum_ok);
  EXPECT_FALSE(d->tcp_csum_ok);
  EXPECT_FALSE(parse_tcp_segment(build_segment(s), nullptr));
  // one payload bit flipped after building: the TCP checksum no longer matches
  s.tcp_csum_xor = 0;
  auto f = build_segment(s);
  f.back() ^= 0x01;
  d = decode_segment(f, nullptr);
  ASSERT_TRUE(d);
  EXPECT_FALSE(d->tcp_csum_ok);
}

TEST(Segment, MalformedHeadersAreRefusedWithAReason) {
  struct Case {
    const char* why;
    void (*edit)(SegmentSpec&);
  };
  const Case cases[] = {
      {"not IPv4", [](SegmentSpec& s) { s.ethertype = 0x86DD; }},
      {"bad IPv4 header", [](SegmentSpec& s) { s.version = 6; }},
      {"bad IPv4 header", [](SegmentSpec& s) { s.ihl = 4; }},
      {"not TCP", [](SegmentSpec& s) { s.proto = 17; }},
      {"bad IPv4 total length", [](SegmentSpec& s) { s.total_len = 1500; }},
      {"bad IPv4 total length", [](SegmentSpec& s) { s.total_len = 39; }},
      {"bad TCP data offset", [](SegmentSpec& s) { s.doff = 4; }},
      {"bad TCP data offset", [](SegmentSpec& s) { s.doff = 15; }},
  };
  for (const Case& c : cases) {
    SegmentSpec s = sample_spec();
    c.edit(s);
    std::string why;
    EXPECT_FALSE(decode_segment(build_segment(s), &why)) << c.why;
    EXPECT_EQ(why, c.why);
  }
  std::string why;
  const auto f = build_segment(sample_spec());
  EXPECT_FALSE(decode_segment(std::span<const uint8_t>(f).first(13), &why));
  EXPECT_EQ(why, "runt");
  EXPECT_FALSE(decode_segment(std::span<const uint8_t>(f).first(17), &why));
  EXPECT_EQ(why, "runt vlan");
}

}  // namespace
}  // namespace golden
