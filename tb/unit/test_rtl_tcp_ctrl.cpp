// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// Unit tests of rtl/tx/bouncer_tcp_ctrl_builder (both data widths) and rtl/cm/bouncer_isn_hash:
// every segment kind x VLAN on/off with random fields, random request gaps and random TX
// backpressure must equal the golden model byte for byte and carry valid checksums;
// back-to-back segments must stream at one beat per cycle; the ISN hash must match the golden
// model bit for bit and show avalanche on the tuple and key.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdio>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

// verilated_types.h (Verilator 5.006) has an unused parameter; not our code.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "Visn_hash.h"
#include "Vtcp_ctrl_w512.h"
#include "Vtcp_ctrl_w64.h"
#include "axis_lanes.hpp"
#include "golden/gtest_tools.hpp"
#include "verilated.h"
#pragma GCC diagnostic pop

#include "golden/frame_parser.hpp"
#include "golden/pcap_io.hpp"
#include "golden/tcp_ctrl.hpp"
#include "golden/tshark.hpp"

namespace {

using axis::keep_bit;
using axis::lane_byte;
using axis::mac_field;

golden::TcpCtrlParams random_params(std::mt19937_64& rng, golden::TcpCtrlKind kind, bool vlan) {
  golden::TcpCtrlParams p;
  p.kind = kind;
  for (auto& b : p.rem_mac.b) b = static_cast<uint8_t>(rng());
  for (auto& b : p.loc_mac.b) b = static_cast<uint8_t>(rng());
  p.vlan_en = vlan;
  p.vlan_tci = static_cast<uint16_t>(rng());
  p.loc_ip = static_cast<uint32_t>(rng());
  p.rem_ip = static_cast<uint32_t>(rng());
  p.tos = static_cast<uint8_t>(rng());
  p.ttl = (rng() & 1) ? 64 : static_cast<uint8_t>(rng());
  p.ip_id = static_cast<uint16_t>(rng());
  p.loc_port = static_cast<uint16_t>(rng());
  p.rem_port = static_cast<uint16_t>(rng());
  p.seq = static_cast<uint32_t>(rng());
  p.ack = static_cast<uint32_t>(rng());
  p.window = static_cast<uint16_t>(rng());
  p.mss = static_cast<uint16_t>(rng());
  p.wscale = static_cast<uint8_t>(rng() % 15);
  p.ws = rng() % 4 != 0;
  return p;
}

// Independent TCP checksum check: the ones' complement sum over pseudo-header and segment
// (checksum field included) must be 0xFFFF.
bool tcp_checksum_ok(const std::vector<uint8_t>& f) {
  size_t l3 = 14;
  if (f.size() >= 14 && f[12] == 0x81 && f[13] == 0x00) l3 = 18;
  if (f.size() < l3 + 20) return false;
  const size_t ihl = (f[l3] & 0x0F) * 4u;
  const size_t total = size_t{f[l3 + 2]} << 8 | f[l3 + 3];
  if (total < ihl + 20 || l3 + total > f.size()) return false;
  const size_t tcp_len = total - ihl;
  uint64_t sum = 0;
  for (size_t i = 0; i < 8; i += 2) sum += size_t{f[l3 + 12 + i]} << 8 | f[l3 + 13 + i];
  sum += 6 + tcp_len;
  const size_t l4 = l3 + ihl;
  for (size_t i = 0; i < tcp_len; ++i) sum += (i % 2 == 0) ? uint64_t{f[l4 + i]} << 8 : f[l4 + i];
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  return sum == 0xFFFF;
}

template <typename Model>
class CtrlHarness {
 public:
  explicit CtrlHarness(uint64_t seed) : rng_(seed) {
    ctx_.randReset(0);
    m_ = std::make_unique<Model>(&ctx_, "tcp_ctrl");
    m_->rst = 1;
    for (int i = 0; i < 4; ++i) tick();
    m_->rst = 0;
    tick();
  }

  struct Result {
    std::vector<std::vector<uint8_t>> frames;
    uint64_t first_accept = 0, first_beat = 0, last_beat = 0, beats = 0;
  };

  // Sends all requests (valid with probability valid_prob per cycle, tready with ready_prob)
  // and collects the frames.
  Result run(const std::vector<golden::TcpCtrlParams>& reqs, double valid_prob, double ready_prob) {
    std::bernoulli_distribution vdist(valid_prob), rdist(ready_prob);
    Result res;
    size_t next = 0;
    bool first_acc = true, first_beat = true;
    std::vector<uint8_t> cur;
    for (uint64_t guard = 0; guard < 100000 && res.frames.size() < reqs.size(); ++guard) {
      const bool offer = next < reqs.size() && vdist(rng_);
      if (offer) drive(reqs[next]);
      m_->s_req_valid = offer;
      m_->m_axis_tready = rdist(rng_);
      m_->clk = 0;
      m_->eval();
      if (offer && m_->s_req_ready) {
        if (first_acc) res.first_accept = cycle_;
        first_acc = false;
        ++next;
      }
      if (m_->m_axis_tvalid && m_->m_axis_tready) {
        if (first_beat) res.first_beat = cycle_;
        first_beat = false;
        res.last_beat = cycle_;
        ++res.beats;
        const unsigned nbytes = sizeof(m_->m_axis_tkeep) * 8;
        for (unsigned lane = 0; lane < nbytes; ++lane) {
          if (keep_bit(m_->m_axis_tkeep, lane))
            cur.push_back(lane_byte(m_->m_axis_tdata, lane));
          else
            EXPECT_EQ(lane_byte(m_->m_axis_tdata, lane), 0) << "data past tkeep not zero";
        }
        if (m_->m_axis_tlast) res.frames.push_back(std::move(cur)), cur.clear();
      }
      m_->clk = 1;
      m_->eval();
      ++cycle_;
    }
    m_->s_req_valid = 0;
    EXPECT_TRUE(cur.empty()) << "partial frame left";
    return res;
  }

 private:
  void tick() {
    m_->clk = 0;
    m_->eval();
    m_->clk = 1;
    m_->eval();
    ++cycle_;
  }

  void drive(const golden::TcpCtrlParams& p) {
    m_->s_req_kind = static_cast<uint8_t>(p.kind);
    m_->s_req_rem_mac = mac_field(p.rem_mac);
    m_->s_req_loc_mac = mac_field(p.loc_mac);
    m_->s_req_vlan_en = p.vlan_en;
    m_->s_req_vlan_tci = p.vlan_tci;
    m_->s_req_loc_ip = p.loc_ip;
    m_->s_req_rem_ip = p.rem_ip;
    m_->s_req_tos = p.tos;
    m_->s_req_ttl = p.ttl;
    m_->s_req_ip_id = p.ip_id;
    m_->s_req_loc_port = p.loc_port;
    m_->s_req_rem_port = p.rem_port;
    m_->s_req_seq = p.seq;
    m_->s_req_ack = p.ack;
    m_->s_req_window = p.window;
    m_->s_req_mss = p.mss;
    m_->s_req_wscale = p.wscale;
    m_->s_req_ws_en = p.ws;
  }

  VerilatedContext ctx_;
  std::unique_ptr<Model> m_;
  std::mt19937_64 rng_;
  uint64_t cycle_ = 0;
};

constexpr golden::TcpCtrlKind kKinds[] = {golden::TcpCtrlKind::kSynAck, golden::TcpCtrlKind::kAck,
                                          golden::TcpCtrlKind::kFinAck,
                                          golden::TcpCtrlKind::kRstAck};

template <typename Model>
void sweep(uint64_t seed, double valid_prob, double ready_prob) {
  CtrlHarness<Model> h(seed);
  std::mt19937_64 rng(seed * 13 + 5);
  std::vector<golden::TcpCtrlParams> reqs;
  for (int rep = 0; rep < 40; ++rep)
    for (auto kind : kKinds)
      for (bool vlan : {false, true}) reqs.push_back(random_params(rng, kind, vlan));
  std::shuffle(reqs.begin(), reqs.end(), rng);
  auto res = h.run(reqs, valid_prob, ready_prob);
  ASSERT_EQ(res.frames.size(), reqs.size());
  for (size_t i = 0; i < reqs.size(); ++i) {
    const auto& p = reqs[i];
    const auto want = golden::build_tcp_ctrl_frame(p);
    const auto& got = res.frames[i];
    ASSERT_EQ(got.size(), want.size()) << "kind=" << int(p.kind) << " vlan=" << p.vlan_en;
    for (size_t b = 0; b < want.size(); ++b)
      ASSERT_EQ(got[b], want[b]) << "byte " << b << " kind=" << int(p.kind)
                                 << " vlan=" << p.vlan_en;
    ASSERT_GE(got.size(), golden::kEthMinFrame);
    const size_t l3 = p.vlan_en ? 18 : 14;
    EXPECT_TRUE(golden::ipv4_header_checksum_ok(std::span<const uint8_t>(got).subspan(l3, 20)));
    EXPECT_TRUE(tcp_checksum_ok(got)) << "kind=" << int(p.kind);
  }
}

TEST(RtlTcpCtrl, W64MatchesGolden) { sweep<Vtcp_ctrl_w64>(1, 1.0, 1.0); }
TEST(RtlTcpCtrl, W512MatchesGolden) { sweep<Vtcp_ctrl_w512>(2, 1.0, 1.0); }
TEST(RtlTcpCtrl, W64RandomGapsAndBackpressure) { sweep<Vtcp_ctrl_w64>(3, 0.5, 0.4); }
TEST(RtlTcpCtrl, W512RandomGapsAndBackpressure) { sweep<Vtcp_ctrl_w512>(4, 0.3, 0.5); }
TEST(RtlTcpCtrl, W512SlowConsumer) { sweep<Vtcp_ctrl_w512>(5, 1.0, 0.1); }

// Third-party dissector: RTL frames of every kind must decode without checksum errors or
// malformed packets; the SYN-ACK options must read back as MSS and window scale.
TEST(RtlTcpCtrl, TsharkAcceptsFrames) {
  GOLDEN_REQUIRE_TSHARK();
  CtrlHarness<Vtcp_ctrl_w64> h(77);
  std::mt19937_64 rng(78);
  std::vector<golden::TcpCtrlParams> reqs;
  for (auto kind : kKinds)
    for (bool vlan : {false, true}) reqs.push_back(random_params(rng, kind, vlan));
  auto res = h.run(reqs, 1.0, 0.7);
  ASSERT_EQ(res.frames.size(), reqs.size());
  const std::string path = ::testing::TempDir() + "tcp_ctrl_rtl.pcap";
  std::string err;
  ASSERT_TRUE(golden::write_pcap(path, res.frames, &err)) << err;
  auto rep = golden::tshark_check_mpa(path);
  ASSERT_TRUE(rep.ok) << rep.error;
  EXPECT_EQ(rep.frames, reqs.size());
  EXPECT_TRUE(rep.ip_checksum_bad.empty()) << rep.summary();
  EXPECT_TRUE(rep.tcp_checksum_bad.empty()) << rep.summary();
  EXPECT_TRUE(rep.malformed.empty()) << rep.summary();
}

TEST(GoldenTcpCtrl, LengthsAndPadding) {
  golden::TcpCtrlParams p;
  p.kind = golden::TcpCtrlKind::kAck;
  EXPECT_EQ(golden::build_tcp_ctrl_frame(p).size(), 60u);
  p.pad_min = false;
  EXPECT_EQ(golden::build_tcp_ctrl_frame(p).size(), 54u);
  p.kind = golden::TcpCtrlKind::kSynAck;
  EXPECT_EQ(golden::build_tcp_ctrl_frame(p).size(), 62u);
  p.vlan_en = true;
  auto f = golden::build_tcp_ctrl_frame(p);
  ASSERT_EQ(f.size(), 66u);
  EXPECT_EQ(f[18 + 20 + 12], 0x70);  // doff 7
  EXPECT_EQ(f[18 + 20 + 13], 0x12);  // SYN|ACK
}

// Latency request -> first beat and beats per cycle for back-to-back requests, tready high.
template <typename Model>
void throughput(uint64_t seed, unsigned bytes_per_beat) {
  std::mt19937_64 rng(seed);
  {
    CtrlHarness<Model> h(seed);
    std::vector<golden::TcpCtrlParams> one{random_params(rng, golden::TcpCtrlKind::kAck, false)};
    auto r = h.run(one, 1.0, 1.0);
    // counted like the reject builder: clock edges after the accepting edge until tvalid
    EXPECT_EQ(r.first_beat - r.first_accept - 1, 3u) << "request to first beat (cycles)";
  }
  CtrlHarness<Model> h(seed + 1);
  std::vector<golden::TcpCtrlParams> reqs;
  uint64_t want_beats = 0;
  for (int i = 0; i < 400; ++i) {
    reqs.push_back(random_params(rng, kKinds[rng() % 4], rng() & 1));
    want_beats +=
        (golden::build_tcp_ctrl_frame(reqs.back()).size() + bytes_per_beat - 1) / bytes_per_beat;
  }
  auto r = h.run(reqs, 1.0, 1.0);
  ASSERT_EQ(r.frames.size(), reqs.size());
  EXPECT_EQ(r.beats, want_beats);
  const double bpc = double(r.beats) / double(r.last_beat - r.first_beat + 1);
  ::testing::Test::RecordProperty("beats_per_cycle", std::to_string(bpc));
  std::printf("W%u: %llu beats in %llu cycles (%.3f beats/cycle), %zu segments\n",
              bytes_per_beat * 8, static_cast<unsigned long long>(r.beats),
              static_cast<unsigned long long>(r.last_beat - r.first_beat + 1), bpc, reqs.size());
  EXPECT_EQ(r.last_beat - r.first_beat + 1, r.beats) << "not one beat per cycle";
}

TEST(RtlTcpCtrl, W64BackToBack) { throughput<Vtcp_ctrl_w64>(10, 8); }
TEST(RtlTcpCtrl, W512BackToBack) { throughput<Vtcp_ctrl_w512>(11, 64); }

// ------------------------------------------------------------------ ISN hash
struct IsnReq {
  golden::IsnKey key;
  golden::IsnTuple t;
  uint64_t time = 0;
};

IsnReq random_isn(std::mt19937_64& rng) {
  IsnReq r;
  r.key = {rng(), rng()};
  r.t.loc_ip = static_cast<uint32_t>(rng());
  r.t.rem_ip = static_cast<uint32_t>(rng());
  r.t.loc_port = static_cast<uint16_t>(rng());
  r.t.rem_port = static_cast<uint16_t>(rng());
  r.time = rng();
  return r;
}

class IsnHarness {
 public:
  explicit IsnHarness(uint64_t seed) : rng_(seed) {
    ctx_.randReset(0);
    m_ = std::make_unique<Visn_hash>(&ctx_, "isn");
    m_->rst = 1;
    for (int i = 0; i < 3; ++i) step();
    m_->rst = 0;
    step();
  }

  // Returns the ISNs in order; *latency = cycles from the first accept to the first output.
  std::vector<uint32_t> run(const std::vector<IsnReq>& reqs, double valid_prob, double ready_prob,
                            uint64_t* latency = nullptr) {
    std::bernoulli_distribution vdist(valid_prob), rdist(ready_prob);
    std::vector<uint32_t> out;
    size_t next = 0;
    int64_t first_acc = -1;
    for (uint64_t guard = 0; guard < 1000000 && out.size() < reqs.size(); ++guard) {
      const bool offer = next < reqs.size() && vdist(rng_);
      if (offer) {
        const auto& r = reqs[next];
        m_->key[0] = static_cast<uint32_t>(r.key.lo);
        m_->key[1] = static_cast<uint32_t>(r.key.lo >> 32);
        m_->key[2] = static_cast<uint32_t>(r.key.hi);
        m_->key[3] = static_cast<uint32_t>(r.key.hi >> 32);
        m_->s_loc_ip = r.t.loc_ip;
        m_->s_rem_ip = r.t.rem_ip;
        m_->s_loc_port = r.t.loc_port;
        m_->s_rem_port = r.t.rem_port;
        m_->time_cnt = r.time;
      }
      m_->s_valid = offer;
      m_->m_ready = rdist(rng_);
      m_->clk = 0;
      m_->eval();
      if (offer && m_->s_ready) {
        if (first_acc < 0) first_acc = static_cast<int64_t>(cycle_);
        ++next;
      }
      if (m_->m_valid && m_->m_ready) {
        if (out.empty() && latency) *latency = cycle_ - static_cast<uint64_t>(first_acc) - 1;
        if (out.empty()) first_out_ = cycle_;
        last_out_ = cycle_;
        out.push_back(m_->m_isn);
      }
      m_->clk = 1;
      m_->eval();
      ++cycle_;
    }
    m_->s_valid = 0;
    return out;
  }

 private:
  void step() {
    m_->clk = 0;
    m_->eval();
    m_->clk = 1;
    m_->eval();
    ++cycle_;
  }

  VerilatedContext ctx_;
  std::unique_ptr<Visn_hash> m_;

 public:
  uint64_t first_out_ = 0, last_out_ = 0;

 private:
  std::mt19937_64 rng_;
  uint64_t cycle_ = 0;
};

TEST(RtlIsnHash, MatchesGolden10k) {
  std::mt19937_64 rng(42);
  std::vector<IsnReq> reqs;
  for (int i = 0; i < 10000; ++i) reqs.push_back(random_isn(rng));
  IsnHarness h(7);
  uint64_t lat = 0;
  auto got = h.run(reqs, 1.0, 1.0, &lat);
  ASSERT_EQ(got.size(), reqs.size());
  EXPECT_EQ(lat, 11u) << "accept to output (cycles)";
  for (size_t i = 0; i < reqs.size(); ++i)
    ASSERT_EQ(got[i], golden::isn_hash(reqs[i].key, reqs[i].t, reqs[i].time, 4)) << "i=" << i;
}

TEST(RtlIsnHash, MatchesGoldenWithStalls) {
  std::mt19937_64 rng(43);
  std::vector<IsnReq> reqs;
  for (int i = 0; i < 3000; ++i) reqs.push_back(random_isn(rng));
  IsnHarness h(8);
  auto got = h.run(reqs, 0.7, 0.5);
  ASSERT_EQ(got.size(), reqs.size());
  for (size_t i = 0; i < reqs.size(); ++i)
    ASSERT_EQ(got[i], golden::isn_hash(reqs[i].key, reqs[i].t, reqs[i].time, 4)) << "i=" << i;
}

TEST(RtlIsnHash, OnePerCycle) {
  std::mt19937_64 rng(44);
  std::vector<IsnReq> reqs;
  for (int i = 0; i < 1000; ++i) reqs.push_back(random_isn(rng));
  IsnHarness h(9);
  auto got = h.run(reqs, 1.0, 1.0);
  ASSERT_EQ(got.size(), reqs.size());
  EXPECT_EQ(h.last_out_ - h.first_out_ + 1, reqs.size()) << "not one result per cycle";
}

// Avalanche: flipping any one input bit of the tuple or key flips ~16 of 32 output bits on
// average; the time term is linear by design (one step per 2^shift time units).
TEST(GoldenIsnHash, Avalanche) {
  std::mt19937_64 rng(99);
  constexpr int kTrials = 200;
  double sum_tuple = 0, sum_key = 0;
  int n_tuple = 0, n_key = 0;
  double worst_bit = 32;
  for (int t = 0; t < kTrials; ++t) {
    auto r = random_isn(rng);
    const uint32_t base = golden::isn_hash(r.key, r.t, r.time);
    for (int b = 0; b < 96; ++b) {
      auto q = r;
      if (b < 32)
        q.t.loc_ip ^= 1u << b;
      else if (b < 64)
        q.t.rem_ip ^= 1u << (b - 32);
      else if (b < 80)
        q.t.loc_port ^= static_cast<uint16_t>(1u << (b - 64));
      else
        q.t.rem_port ^= static_cast<uint16_t>(1u << (b - 80));
      sum_tuple += std::popcount(base ^ golden::isn_hash(q.key, q.t, q.time));
      ++n_tuple;
    }
    for (int b = 0; b < 128; ++b) {
      auto q = r;
      if (b < 64)
        q.key.lo ^= 1ull << b;
      else
        q.key.hi ^= 1ull << (b - 64);
      sum_key += std::popcount(base ^ golden::isn_hash(q.key, q.t, q.time));
      ++n_key;
    }
    auto q = r;
    q.time += 16;
    EXPECT_EQ(golden::isn_hash(q.key, q.t, q.time), base + 1);
  }
  // per input bit, averaged over the trials
  for (int b = 0; b < 96; ++b) {
    double s = 0;
    std::mt19937_64 r2(1000 + b);
    for (int t = 0; t < 100; ++t) {
      auto r = random_isn(r2);
      auto q = r;
      if (b < 32)
        q.t.loc_ip ^= 1u << b;
      else if (b < 64)
        q.t.rem_ip ^= 1u << (b - 32);
      else if (b < 80)
        q.t.loc_port ^= static_cast<uint16_t>(1u << (b - 64));
      else
        q.t.rem_port ^= static_cast<uint16_t>(1u << (b - 80));
      s += std::popcount(golden::isn_hash(r.key, r.t, r.time) ^
                         golden::isn_hash(q.key, q.t, q.time));
    }
    worst_bit = std::min(worst_bit, s / 100);
  }
  const double avg_tuple = sum_tuple / n_tuple, avg_key = sum_key / n_key;
  std::printf("avalanche: tuple %.2f, key %.2f bits of 32; worst tuple bit %.2f\n", avg_tuple,
              avg_key, worst_bit);
  EXPECT_NEAR(avg_tuple, 16.0, 0.5);
  EXPECT_NEAR(avg_key, 16.0, 0.5);
  EXPECT_GT(worst_bit, 13.0);
}

}  // namespace
