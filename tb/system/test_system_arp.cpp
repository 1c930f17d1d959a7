// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// The ARP responder (rtl/tx/bouncer_arp_responder.sv): the real driver against the verilated
// core at both widths, ARP frames built here byte by byte (RFC 826 layout), not by the RTL.
// Each case asserts exactly which frames leave the TX port (none, or the reply, byte for byte
// against the reply built here) and how far every STAT_* counter moved (the ones not named must
// not move):
//  - requests for PORT_IP to the broadcast MAC and to PORT_MAC, from any sender IP (an RFC 5227
//    probe with sender IP 0 included): answered from PORT_MAC;
//  - requests for another address, to another unicast MAC, gratuitous requests (sender IP =
//    target IP), replies, unknown opcodes, wrong htype / ptype / hlen / plen, a group sender
//    MAC, an 802.1Q-tagged request: dropped (STAT_ARP_DROPPED, not for the tagged one);
//  - the responder off (PORT_IP 0, or CTRL.ENABLE 0 after close): every request dropped;
//  - a burst of requests back to back: one reply waits at a time, the rest are dropped and
//    counted, every reply sent is exact, and a SYN behind the burst still gets its SYN-ACK.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "system_fixture.hpp"

namespace {

using namespace systest;
using Bytes = std::vector<uint8_t>;
using Stats = std::map<std::string, uint64_t>;

const bouncer::MacAddr kPeerMac = {0x02, 0x00, 0x00, 0x0a, 0x00, 0x07};
constexpr uint32_t kPeerIp = 0x0A000007;  // 10.0.0.7
const bouncer::MacAddr kBroadcast = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

void put_be(Bytes& b, uint64_t v, unsigned n) {
  for (unsigned i = n; i-- > 0;) b.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
void put_mac(Bytes& b, const bouncer::MacAddr& m) { b.insert(b.end(), m.begin(), m.end()); }

// One ARP frame (RFC 826), padded with zeros to `pad_to` bytes.
struct Arp {
  bouncer::MacAddr eth_dst = kBroadcast;
  bouncer::MacAddr eth_src = kPeerMac;
  std::optional<uint16_t> vlan;
  uint16_t htype = 1, ptype = 0x0800;
  uint8_t hlen = 6, plen = 4;
  uint16_t oper = 1;
  bouncer::MacAddr sha = kPeerMac;
  uint32_t spa = kPeerIp;
  bouncer::MacAddr tha{};
  uint32_t tpa = kLocalIp;
  size_t pad_to = 60;

  Bytes bytes() const {
    Bytes b;
    put_mac(b, eth_dst);
    put_mac(b, eth_src);
    if (vlan) {
      put_be(b, 0x8100, 2);
      put_be(b, *vlan, 2);
    }
    put_be(b, 0x0806, 2);
    put_be(b, htype, 2);
    put_be(b, ptype, 2);
    b.push_back(hlen);
    b.push_back(plen);
    put_be(b, oper, 2);
    put_mac(b, sha);
    put_be(b, spa, 4);
    put_mac(b, tha);
    put_be(b, tpa, 4);
    if (b.size() < pad_to) b.resize(pad_to, 0);
    return b;
  }
};

// The reply Bouncer owes the request `q`: to q's sender, from PORT_MAC for PORT_IP.
Bytes reply_to(const Arp& q) {
  Arp r;
  r.eth_dst = q.sha;
  r.eth_src = kLocalMac;
  r.oper = 2;
  r.sha = kLocalMac;
  r.spa = kLocalIp;
  r.tha = q.sha;
  r.tpa = q.spa;
  return r.bytes();
}

bouncer::DeviceConfig arp_config() {
  auto dc = device_config();
  dc.tcp->port_mac = kLocalMac;
  dc.tcp->port_ip = kLocalIp;
  return dc;
}

class ArpTest : public ::testing::TestWithParam<unsigned> {};

struct Bench {
  sim::Platform& plat;
  bouncer::hal::Device& hal;
  Device& dev;
  size_t seen = 0;

  Stats stats() {
    Stats s;
    for (const auto& v : dev.read_stats()) {
      if (std::string(v.name) != "STAT_LAST_LATENCY") s[v.name] = v.value;
    }
    return s;
  }

  // Injects `frames` back to back, runs `cycles`; returns the frames sent meanwhile and
  // checks that every counter moved exactly as `want` says (names without "STAT_"; RX frames,
  // TX frames and bytes derived from what went in and out).
  std::vector<Bytes> send(const std::vector<Bytes>& frames, std::map<std::string, uint64_t> want,
                          const std::string& what, uint64_t cycles = 2000) {
    const Stats before = stats();
    for (const auto& f : frames) plat.inject_rx(f, 0);
    hal.wait_cycles(cycles);
    std::vector<Bytes> tx;
    for (; seen < plat.tx_frames().size(); ++seen) tx.push_back(plat.tx_frames()[seen].bytes);
    const Stats after = stats();
    std::map<std::string, uint64_t> w;
    for (const auto& [k, v] : want) w["STAT_" + k] = v;
    w["STAT_RX_FRAMES"] = frames.size();
    w["STAT_TX_FRAMES"] = tx.size();
    uint64_t bytes = 0;
    for (const auto& f : tx) bytes += f.size();
    w["STAT_TX_BYTES"] = bytes;
    for (const auto& [k, v] : w) EXPECT_TRUE(after.count(k)) << what << ": no counter " << k;
    for (const auto& [k, v] : after) {
      const uint64_t d = static_cast<uint32_t>(v - before.at(k));
      const uint64_t exp = w.count(k) ? w.at(k) : 0;
      EXPECT_EQ(d, exp) << what << ": " << k;
    }
    return tx;
  }

  // One request answered: exactly its reply.
  void answered(const Arp& q, const std::string& what) {
    auto tx = send({q.bytes()}, {{"RX_NOT_TCP", 1}, {"ARP_REPLIED", 1}}, what);
    ASSERT_EQ(tx.size(), 1u) << what;
    EXPECT_EQ(tx[0], reply_to(q)) << what;
  }
  // One ARP frame dropped: nothing sent.
  void dropped(const Arp& q, const std::string& what) {
    auto tx = send({q.bytes()}, {{"RX_NOT_TCP", 1}, {"ARP_DROPPED", 1}}, what);
    EXPECT_TRUE(tx.empty()) << what << ": " << tx.size() << " frames sent";
  }
};

template <class F>
void with_bench(unsigned width, F&& body) {
  sim::Platform plat(platform_config(width, false));
  plat.run([&](bouncer::hal::Device& hal) {
    auto dev = Device::open(hal, arp_config());
    ASSERT_TRUE(dev.ok()) << dev.error().message;
    Bench b{plat, hal, **dev, plat.tx_frames().size()};
    body(b);
  });
}

TEST_P(ArpTest, RequestsForPortIpAreAnswered) {
  with_bench(GetParam(), [](Bench& b) {
    Arp q;
    b.answered(q, "broadcast request");
    q.eth_dst = kLocalMac;
    q.tha = kLocalMac;
    b.answered(q, "unicast request to PORT_MAC (neighbour re-validation)");
    Arp other;
    other.sha = other.eth_src = {0x02, 0x11, 0x22, 0x33, 0x44, 0x55};
    other.spa = 0xC0A80101;
    b.answered(other, "another sender");
    Arp probe;
    probe.spa = 0;
    b.answered(probe, "RFC 5227 probe (sender IP 0)");
    Arp long_frame;
    long_frame.pad_to = 200;
    b.answered(long_frame, "request in a 200-byte frame");
  });
}

TEST_P(ArpTest, OtherArpIsDroppedAndCounted) {
  with_bench(GetParam(), [](Bench& b) {
    Arp q;
    q.tpa = kLocalIp + 1;
    b.dropped(q, "request for another address");
    q = Arp{};
    q.eth_dst = {0x02, 0xbb, 0xcc, 0xdd, 0xee, 0x02};
    b.dropped(q, "request to another unicast MAC");
    q = Arp{};
    q.spa = kLocalIp;
    b.dropped(q, "gratuitous request for PORT_IP (address conflict)");
    q = Arp{};
    q.spa = q.tpa = kPeerIp;
    b.dropped(q, "gratuitous announcement of the peer");
    q = Arp{};
    q.oper = 2;
    b.dropped(q, "reply");
    q.oper = 3;
    b.dropped(q, "RARP opcode");
    q = Arp{};
    q.htype = 6;
    b.dropped(q, "htype 6");
    q = Arp{};
    q.ptype = 0x86DD;
    b.dropped(q, "ptype IPv6");
    q = Arp{};
    q.hlen = 8;
    b.dropped(q, "hlen 8");
    q = Arp{};
    q.plen = 16;
    b.dropped(q, "plen 16");
    q = Arp{};
    q.sha = {0x03, 0x00, 0x00, 0x0a, 0x00, 0x07};
    b.dropped(q, "group sender MAC");
    // shorter than the ARP body (the MAC gave 41 bytes)
    q = Arp{};
    q.pad_to = 0;
    Bytes shortf = q.bytes();
    shortf.resize(41);
    auto tx = b.send({shortf}, {{"RX_NOT_TCP", 1}, {"RX_BAD", 0}, {"ARP_DROPPED", 1}}, "41 bytes");
    EXPECT_TRUE(tx.empty());
    // 802.1Q-tagged: not looked at by the responder (EtherType 0x8100)
    q = Arp{};
    q.vlan = 5;
    tx = b.send({q.bytes()}, {{"RX_NOT_TCP", 1}}, "tagged request");
    EXPECT_TRUE(tx.empty());
    // still answering afterwards
    b.answered(Arp{}, "request after the drops");
  });
}

TEST_P(ArpTest, OffWithoutPortIp) {
  with_bench(GetParam(), [](Bench& b) {
    auto tcp = *arp_config().tcp;
    tcp.port_ip = 0;
    ASSERT_TRUE(b.dev.set_tcp(tcp).ok());
    Arp q;
    q.tpa = 0;
    b.dropped(q, "PORT_IP 0, request for 0.0.0.0");
    b.dropped(Arp{}, "PORT_IP 0, request for the old address");
    ASSERT_TRUE(b.dev.set_tcp(*arp_config().tcp).ok());
    b.answered(Arp{}, "PORT_IP set again");
  });
}

// A burst against a slow TX port: one reply waits at a time, so some of the requests are
// dropped (how many depends on how fast the port takes the replies), every reply is exact, and
// the TCP sources still get the port: a SYN right behind the burst is answered.
TEST_P(ArpTest, BurstHoldsOneReplyAndTcpStillGetsThrough) {
  with_bench(GetParam(), [](Bench& b) {
    Cm cm(b.dev);
    ASSERT_TRUE(cm.listen(kLocalIp, kPort, listen_options()).ok());
    constexpr unsigned kBurst = 24;
    std::vector<Bytes> frames;
    std::vector<Arp> reqs;
    for (unsigned i = 0; i < kBurst; ++i) {
      Arp q;
      q.sha = q.eth_src = {0x02, 0x00, 0x00, 0x0b, 0x00, static_cast<uint8_t>(i)};
      q.spa = 0x0A000100u + i;
      reqs.push_back(q);
      frames.push_back(q.bytes());
    }
    golden::SegmentSpec syn;
    syn.src_mac = {0x02, 0x00, 0x00, 0x0c, 0x00, 0x01};
    syn.dst_mac = kLocalMac;
    syn.src_ip = 0x0A000200;
    syn.dst_ip = kLocalIp;
    syn.sport = 41000;
    syn.dport = kPort;
    syn.flags = kSyn;
    syn.seq = 0x1234'5678;
    frames.push_back(golden::build_segment(syn));

    // a slow TX port (tready 1 cycle in 8): the replies drain slower than requests arrive
    const Stats before = b.stats();
    b.plat.set_tx_ready_prob(0.125);
    for (const auto& f : frames) b.plat.inject_rx(f, 0);
    b.hal.wait_cycles(6000);
    b.plat.set_tx_ready_prob(1.0);
    b.hal.wait_cycles(1000);
    std::vector<Bytes> tx;
    for (; b.seen < b.plat.tx_frames().size(); ++b.seen)
      tx.push_back(b.plat.tx_frames()[b.seen].bytes);
    const Stats after = b.stats();
    const uint64_t replied = after.at("STAT_ARP_REPLIED") - before.at("STAT_ARP_REPLIED");
    const uint64_t dropped = after.at("STAT_ARP_DROPPED") - before.at("STAT_ARP_DROPPED");
    EXPECT_EQ(replied + dropped, kBurst);
    EXPECT_GE(replied, 1u);
    EXPECT_GE(dropped, 1u) << "one reply slot: a back-to-back burst must overrun it";
    EXPECT_EQ(after.at("STAT_RX_NOT_TCP") - before.at("STAT_RX_NOT_TCP"), kBurst);
    // the replies, in order, each to one of the requests (in request order); one SYN-ACK
    size_t next = 0, synacks = 0, arps = 0;
    for (const auto& f : tx) {
      if (f.size() >= 14 && f[12] == 0x08 && f[13] == 0x06) {
        bool found = false;
        for (; next < reqs.size() && !found; ++next) found = f == reply_to(reqs[next]);
        EXPECT_TRUE(found) << "ARP reply " << arps << " matches no request (in order)";
        ++arps;
      } else {
        auto s = decode(f);
        ASSERT_TRUE(s.has_value());
        EXPECT_EQ(s->flags, kSyn | kAck);
        EXPECT_EQ(s->ack, syn.seq + 1);
        ++synacks;
      }
    }
    EXPECT_EQ(arps, replied);
    EXPECT_EQ(synacks, 1u) << "the SYN behind the ARP burst must be answered";
  });
}

INSTANTIATE_TEST_SUITE_P(Widths, ArpTest, ::testing::Values(64u, 512u), width_name);

}  // namespace

// libsystemc provides main() and calls sc_main().
extern "C" int sc_main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
