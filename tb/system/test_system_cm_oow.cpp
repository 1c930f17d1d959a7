// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// Passive-CM system tests, duplicate and out-of-window segments. The test plays the
// initiator itself with hand-made frames (inject_rx; built here and by tb/golden, not by
// the peer model) and checks each answer of Bouncer byte for byte against the golden
// control-segment and reject builders:
//   duplicate SYN          -> the same SYN-ACK again (STAT_SYN_DUP)
//   old data (the request again, while the host holds it) -> duplicate ACK (STAT_OOW)
//   RST with a wrong sequence number -> ignored, the connection continues (STAT_OOW)
//   ACK of unsent data     -> ACK, segment dropped (STAT_OOW)
//   data beyond RCV.NXT    -> ACK, not accepted (STAT_OOW)
// then the host's reject (IRDMA: reject + FIN), the peer's FIN|ACK, our ACK, TIME_WAIT and
// the CLOSED event the driver consumes.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "system_fixture.hpp"

using namespace std::chrono_literals;

namespace {

using namespace systest;
using golden::TcpCtrlKind;

class SystemCmOow : public ::testing::TestWithParam<unsigned> {};

TEST_P(SystemCmOow, DuplicateAndOutOfWindowSegments) {
  const auto cfg = platform_config(GetParam());
  PcapWants wants;
  {
    sim::Platform plat(cfg);
    with_cm(plat, device_config(), [&](bouncer::hal::Device& hal, Device& dev, Cm& cm) {
      ASSERT_TRUE(cm.listen(kLocalIp, kPort, listen_options(R::FinPolicy::IRDMA)).ok());
      std::vector<R::AeqEvent> terminals;
      cm.set_terminal_observer([&](uint32_t, R::AeqEvent e) { terminals.push_back(e); });

      // the initiator we play
      PeerFrame pf;
      pf.src_mac = {0x02, 0x00, 0x00, 0x07, 0x07, 0x07};
      pf.src_ip = 0x0A000909;
      pf.sport = 45001;
      const uint32_t S = 0x7000'0000;  // our (the initiator's) ISN
      Expect ex;                       // Bouncer's frames for this connection (golden)
      ex.peer.mac = pf.src_mac;
      ex.peer.ip = pf.src_ip;
      ex.peer.port = pf.sport;
      ex.peer.peer_ip = kLocalIp;
      ex.peer.peer_port = kPort;
      ex.peer.isn = S;
      ex.peer.mpa_rev = 2;
      ex.peer.enhanced = true;
      ex.peer.ird_ord = ird_ord_word(8, 8);
      ex.peer.crc = true;
      ex.peer.markers = false;
      const auto req_pd = text_pd("hand-made request", 33);
      const auto req = mpa_request_payload(2, true, ex.peer.ird_ord, req_pd);
      ex.req_len = static_cast<uint32_t>(req.size());
      const uint32_t rcv = S + 1 + ex.req_len;

      size_t seen = 0;  // tx_frames() consumed so far
      // Injects `f`, runs `cycles`, returns the TX frames Bouncer sent meanwhile.
      auto exchange = [&](const std::vector<uint8_t>& f, uint64_t cycles = 3000) {
        plat.inject_rx(f, 0);
        hal.wait_cycles(cycles);
        std::vector<std::vector<uint8_t>> out;
        for (; seen < plat.tx_frames().size(); ++seen) out.push_back(plat.tx_frames()[seen].bytes);
        return out;
      };
      auto one = [&](const std::vector<std::vector<uint8_t>>& got, const std::string& what) {
        std::string all;
        for (const auto& g : got) {
          auto s = decode(g);
          all += "  " + (s ? describe(*s) : std::string("undecodable")) + "\n";
        }
        EXPECT_EQ(got.size(), 1u) << what << ": frames from Bouncer:\n" << all;
        return got.empty() ? std::vector<uint8_t>{} : got[0];
      };

      // 1. SYN -> SYN-ACK
      const auto syn = build_peer_segment(pf, kSyn, S, 0, {}, /*syn_options=*/true);
      const auto syn_rx_cycle = hal.now_cycles();
      const auto sa1 = one(exchange(syn), "SYN");
      auto s1 = decode(sa1);
      ASSERT_TRUE(s1);
      ASSERT_EQ(s1->flags, kSyn | kAck);
      ex.iss = s1->seq;
      ex.ip_id0 = s1->ip_id;
      EXPECT_TRUE(isn_plausible(ex.iss, ex.peer, syn_rx_cycle, hal.now_cycles()));
      EXPECT_EQ(sa1, ex.synack()) << "SYN-ACK vs golden";

      // 2. the same SYN again (SYN_RCVD) -> the same SYN-ACK
      const auto sa2 = one(exchange(syn), "duplicate SYN");
      EXPECT_EQ(sa2, sa1) << "the duplicate SYN's answer differs";
      EXPECT_EQ(reg(hal, R::reg::STAT_SYN_DUP), 1u);

      // 3. handshake ACK: nothing sent
      pf.ip_id++;
      EXPECT_TRUE(exchange(build_peer_segment(pf, kAck, S + 1, ex.iss + 1, {})).empty());
      EXPECT_EQ(reg(hal, R::reg::STAT_CONN_ESTABLISHED), 1u);

      // 4. the request -> ACK, CONNECT_REQUEST
      pf.ip_id++;
      const auto req_frame = build_peer_segment(pf, kAck | kPsh, S + 1, ex.iss + 1, req);
      const auto ack_req =
          ex.ctrl(TcpCtrlKind::kAck, ex.iss + 1, rcv, static_cast<uint16_t>(ex.ip_id0 + 1));
      EXPECT_EQ(one(exchange(req_frame), "request"), ack_req) << "ACK of the request vs golden";
      auto ev = cm.wait_event(400us);
      ASSERT_TRUE(ev.ok()) << ev.error().message;
      const auto* cr = std::get_if<bouncer::ConnectRequest>(&*ev);
      ASSERT_NE(cr, nullptr) << bouncer::event_name(*ev);
      EXPECT_EQ(cr->tuple, (bouncer::Tuple{kLocalIp, kPort, pf.src_ip, pf.sport}));
      EXPECT_EQ(cr->rev, 2);
      EXPECT_EQ(cr->flags, 0x50);
      EXPECT_EQ(cr->ird_ord, std::optional<uint32_t>(ex.peer.ird_ord));
      EXPECT_EQ(to_u8(cr->private_data), req_pd);
      const uint32_t cm_id = cr->cm_id;
      const uint32_t oow0 = reg(hal, R::reg::STAT_OOW);

      // 5. old data: the request again -> duplicate ACK, same bytes
      pf.ip_id++;
      EXPECT_EQ(
          one(exchange(build_peer_segment(pf, kAck | kPsh, S + 1, ex.iss + 1, req)), "old data"),
          ack_req)
          << "duplicate ACK vs golden";
      EXPECT_EQ(reg(hal, R::reg::STAT_OOW), oow0 + 1);

      // 6. RST in the window but not at RCV_NXT -> challenge ACK (RFC 5961 3.2), the same
      // bytes as the ACK of the request; outside the window -> ignored
      pf.ip_id++;
      EXPECT_EQ(one(exchange(build_peer_segment(pf, kRst | kAck, rcv + 5, ex.iss + 1, {})),
                    "challenge ACK"),
                ack_req)
          << "challenge ACK vs golden";
      pf.ip_id++;
      EXPECT_TRUE(
          exchange(build_peer_segment(pf, kRst | kAck, rcv + 0x8000'0000u, ex.iss + 1, {})).empty())
          << "an answer to a RST outside the window";
      EXPECT_EQ(reg(hal, R::reg::STAT_OOW), oow0 + 3);
      EXPECT_EQ(reg(hal, R::reg::STAT_RST_RX), 0u);
      EXPECT_EQ(dev.cm_conns(), 1u);

      // 7. ACK of data we never sent -> ACK with our numbers, segment dropped
      pf.ip_id++;
      EXPECT_EQ(one(exchange(build_peer_segment(pf, kAck, rcv, ex.iss + 1 + 1000, {})),
                    "ACK of unsent data"),
                ack_req)
          << "ACK vs golden";
      EXPECT_EQ(reg(hal, R::reg::STAT_OOW), oow0 + 4);

      // 8. data beyond RCV.NXT (a gap) -> ACK of what we have, not accepted
      pf.ip_id++;
      const std::vector<uint8_t> junk(10, 0xAB);
      EXPECT_EQ(one(exchange(build_peer_segment(pf, kAck | kPsh, rcv + 100, ex.iss + 1, junk)),
                    "future data"),
                ack_req)
          << "ACK vs golden";
      EXPECT_EQ(reg(hal, R::reg::STAT_OOW), oow0 + 5);

      // the connection is still the held request: no event, nothing reset
      auto none = cm.poll_event();
      ASSERT_TRUE(none.ok());
      EXPECT_FALSE(none->has_value()) << "an event after the out-of-window segments";
      EXPECT_EQ(cm.node_state(cm_id), bouncer::NodeState::kHeld);
      auto node = dev.cqp_read_node(cm_id);
      ASSERT_TRUE(node.ok());
      EXPECT_EQ(node->state, R::CmState::MPAREQ_RCVD);
      EXPECT_EQ(node->ctx.rcv_nxt, rcv);
      EXPECT_EQ(node->ctx.snd_nxt, ex.iss + 1);

      // 9. the host rejects (listener policy IRDMA: reject + FIN)
      const auto rej_pd = to_bytes(text_pd("not today", 9));
      auto comp = cm.reject(cr->handle, rej_pd);
      ASSERT_TRUE(comp.ok()) << comp.error().message;
      hal.wait_cycles(2000);
      std::vector<std::vector<uint8_t>> got;
      for (; seen < plat.tx_frames().size(); ++seen) got.push_back(plat.tx_frames()[seen].bytes);
      const auto rp = ex.reject_params(rej_pd, /*fin=*/true, std::nullopt);
      EXPECT_EQ(one(got, "reject"), golden::build_mpa_reject_frame(rp)) << "reject vs golden";
      const uint32_t fin_end = ex.iss + 1 + static_cast<uint32_t>(golden::mpa_reply_len(rp)) + 1;

      // 10. the initiator's FIN|ACK acknowledging reject + FIN -> our ACK; TIME_WAIT; CLOSED
      pf.ip_id++;
      EXPECT_EQ(one(exchange(build_peer_segment(pf, kFin | kAck, rcv, fin_end, {})), "FIN"),
                ex.ctrl(TcpCtrlKind::kAck, fin_end, rcv + 1, static_cast<uint16_t>(ex.ip_id0 + 2)))
          << "ACK of the FIN vs golden";
      const uint64_t until = hal.now_cycles() + 200'000;
      while (terminals.empty() && hal.now_cycles() < until) {
        auto e = cm.poll_event();
        ASSERT_TRUE(e.ok());
        EXPECT_FALSE(e->has_value());
        hal.wait_cycles(256);
      }
      EXPECT_EQ(terminals, std::vector<R::AeqEvent>{R::AeqEvent::CLOSED});
      EXPECT_EQ(dev.cm_conns(), 0u);
      const auto st = cm.stats();
      EXPECT_EQ(st.nodes_held + st.nodes_awaiting_terminal, 0u);
      EXPECT_EQ(st.unexpected_events, 0u);
      EXPECT_EQ(reg(hal, R::reg::STAT_RTX), 0u);
      EXPECT_EQ(reg(hal, R::reg::STAT_RX_BAD), 0u);
      EXPECT_EQ(plat.tx_frames().size(), seen) << "frames after the close";
      std::printf("[ stats    ] %s\n", stats_line(dev).c_str());
      wants[{pf.src_ip, pf.sport}] = {to_u8(rej_pd), true};
      cm.set_terminal_observer({});
    });
  }
  check_pcap(cfg.pcap_path, wants);
}

// ------------------------------------------------------------------ hand-made closes

// One hand-played initiator: frames built here, Bouncer's answers collected from the TX port.
class HandPeer {
 public:
  HandPeer(sim::Platform& plat, bouncer::hal::Device& hal, unsigned n, uint32_t isn)
      : plat_(plat), hal_(hal), seen_(plat.tx_frames().size()) {
    pf.src_mac = {0x02, 0x00, 0x00, 0x08, 0x00, static_cast<uint8_t>(n)};
    pf.src_ip = 0x0A000A00 | n;
    pf.sport = static_cast<uint16_t>(46000 + n);
    pf.ip_id = static_cast<uint16_t>(0x5000 + 0x100 * n);
    ex.peer.mac = pf.src_mac;
    ex.peer.ip = pf.src_ip;
    ex.peer.port = pf.sport;
    ex.peer.peer_ip = kLocalIp;
    ex.peer.peer_port = kPort;
    ex.peer.isn = isn;
    ex.peer.mpa_rev = 2;
    ex.peer.enhanced = true;
    ex.peer.ird_ord = ird_ord_word(4, 4);
  }
  // Sends one segment, runs `cycles`, returns what Bouncer sent to us meanwhile.
  std::vector<std::vector<uint8_t>> send(uint8_t flags, uint32_t seq, uint32_t ack,
                                         std::span<const uint8_t> payload = {},
                                         uint64_t cycles = 3000) {
    pf.ip_id++;
    plat_.inject_rx(build_peer_segment(pf, flags, seq, ack, payload, (flags & kSyn) != 0), 0);
    hal_.wait_cycles(cycles);
    return collect();
  }
  std::vector<std::vector<uint8_t>> collect() {
    std::vector<std::vector<uint8_t>> out;
    for (; seen_ < plat_.tx_frames().size(); ++seen_) {
      auto s = decode(plat_.tx_frames()[seen_].bytes);
      if (s && s->dst_ip == pf.src_ip && s->dport == pf.sport) {
        out.push_back(plat_.tx_frames()[seen_].bytes);
        last_cycle = plat_.tx_frames()[seen_].first_cycle;
      }
    }
    return out;
  }
  // SYN, SYN-ACK (checked against golden), ACK: the connection is ESTABLISHED.
  void handshake() {
    auto got = send(kSyn, isn(), 0);
    ASSERT_EQ(got.size(), 1u);
    auto s = decode(got[0]);
    ASSERT_TRUE(s && s->flags == (kSyn | kAck));
    ex.iss = s->seq;
    ex.ip_id0 = s->ip_id;
    EXPECT_EQ(got[0], ex.synack()) << "SYN-ACK vs golden";
    EXPECT_TRUE(send(kAck, isn() + 1, ex.iss + 1).empty());
  }
  uint32_t isn() const { return ex.peer.isn; }
  uint16_t id(unsigned k) const { return static_cast<uint16_t>(ex.ip_id0 + k); }

  PeerFrame pf;
  Expect ex;
  uint64_t last_cycle = 0;  // first cycle of the last frame collect() returned

 private:
  sim::Platform& plat_;
  bouncer::hal::Device& hal_;
  size_t seen_;
};

std::string frames_text(const std::vector<std::vector<uint8_t>>& got) {
  std::string all;
  for (const auto& g : got) {
    auto s = decode(g);
    all += "  " + (s ? describe(*s) : std::string("undecodable")) + "\n";
  }
  return all;
}

// Closes and errors the peer model does not produce, played by hand:
//  A. FIN_WAIT2 timeout: the initiator ACKs our reject + FIN but never sends its FIN: RST
//     after FIN_TIMEOUT, TIMEOUT consumed by the driver;
//  B. FIN before any request: RST|ACK (acknowledging the FIN), node freed, no event;
//  C. a request segment with bytes beyond the announced PD_Length: RST, MpaError TOO_LONG;
//  D. Rev 0: RST, MpaError BAD_REV;
//  E. RST in SYN_RCVD (exact sequence): node freed, nothing sent;
//  F. SIW_SAFE, the initiator's FIN|ACK acknowledges the reject: our FIN (ACKing theirs),
//     LAST_ACK, their ACK, CLOSED;
//  G. the initiator's FIN while the host holds the request: ACK, no event; the reject (with
//     FIN) then acknowledges it, LAST_ACK, CLOSED;
//  H. a SYN on an established connection: challenge ACK, nothing changes.
TEST_P(SystemCmOow, HandMadeClosesAndErrors) {
  const auto cfg = platform_config(GetParam());
  constexpr uint32_t kFinTicks = 100'000 / kTick;
  PcapWants wants;
  {
    sim::Platform plat(cfg);
    auto dc = device_config();
    dc.timers->fin_timeout = kFinTicks;
    with_cm(plat, dc, [&](bouncer::hal::Device& hal, Device& dev, Cm& cm) {
      ASSERT_TRUE(cm.listen(kLocalIp, kPort, listen_options(R::FinPolicy::IRDMA)).ok());
      std::map<uint32_t, std::vector<R::AeqEvent>> terminals;
      cm.set_terminal_observer([&](uint32_t id, R::AeqEvent e) { terminals[id].push_back(e); });
      auto next_event = [&]() -> std::optional<bouncer::Event> {
        auto ev = cm.wait_event(400us);
        if (!ev.ok()) {
          ADD_FAILURE() << ev.error().message;
          return std::nullopt;
        }
        return *ev;
      };
      const auto pd = text_pd("by hand", 7);
      const auto req = mpa_request_payload(2, true, ird_ord_word(4, 4), pd);
      const auto rej_pd = to_bytes(text_pd("no", 2));

      // ---- A: FIN_WAIT2 timeout
      {
        SCOPED_TRACE("A: FIN_WAIT2 timeout");
        HandPeer a(plat, hal, 1, 0x1111'0000);
        a.ex.req_len = static_cast<uint32_t>(req.size());
        a.handshake();
        const uint32_t rcv = a.ex.rcv_after_request();
        auto got = a.send(kAck | kPsh, a.isn() + 1, a.ex.iss + 1, req);
        EXPECT_EQ(got.size(), 1u) << frames_text(got);
        auto ev = next_event();
        ASSERT_TRUE(ev);
        const auto* cr = std::get_if<bouncer::ConnectRequest>(&*ev);
        ASSERT_NE(cr, nullptr);
        EXPECT_EQ(to_u8(cr->private_data), pd);
        const uint32_t id = cr->cm_id;
        ASSERT_TRUE(cm.reject(cr->handle, rej_pd).ok());
        got = a.collect();
        hal.wait_cycles(1000);
        auto more = a.collect();
        got.insert(got.end(), more.begin(), more.end());
        const auto rp = a.ex.reject_params(rej_pd, true, std::nullopt);
        ASSERT_EQ(got.size(), 1u) << frames_text(got);
        EXPECT_EQ(got[0], golden::build_mpa_reject_frame(rp)) << "reject + FIN vs golden";
        wants[{a.pf.src_ip, a.pf.sport}] = {to_u8(rej_pd), true};
        const uint32_t fin_end =
            a.ex.iss + 1 + static_cast<uint32_t>(golden::mpa_reply_len(rp)) + 1;
        // ACK of reject + FIN, no FIN of ours: FIN_WAIT2
        EXPECT_TRUE(a.send(kAck, rcv, fin_end, {}, 100).empty());
        const uint64_t acked = hal.now_cycles() - 100;
        const uint64_t until = hal.now_cycles() + 2 * uint64_t{kFinTicks} * kTick;
        while (terminals[id].empty() && hal.now_cycles() < until) {
          auto e = cm.poll_event();
          ASSERT_TRUE(e.ok());
          EXPECT_FALSE(e->has_value());
          hal.wait_cycles(512);
        }
        got = a.collect();
        ASSERT_EQ(got.size(), 1u) << frames_text(got);
        EXPECT_EQ(got[0], a.ex.ctrl(TcpCtrlKind::kRstAck, fin_end, rcv, a.id(2)))
            << "RST vs golden";
        const uint64_t gap = a.last_cycle - acked;
        const uint64_t want = uint64_t{kFinTicks} * kTick;
        EXPECT_GE(gap + kTick + kSweep + 200, want) << "gap " << gap;
        EXPECT_LE(gap, want + kTick + kSweep + 200) << "gap " << gap;
        EXPECT_EQ(terminals[id], std::vector<R::AeqEvent>{R::AeqEvent::TIMEOUT});
        EXPECT_EQ(cm.stats().terminal.timeout, 1u);
      }
      EXPECT_EQ(dev.cm_conns(), 0u);

      // ---- B: FIN before the request
      {
        SCOPED_TRACE("B: FIN before the request");
        HandPeer b(plat, hal, 2, 0x2222'0000);
        b.handshake();
        auto got = b.send(kFin | kAck, b.isn() + 1, b.ex.iss + 1);
        ASSERT_EQ(got.size(), 1u) << frames_text(got);
        EXPECT_EQ(got[0], b.ex.ctrl(TcpCtrlKind::kRstAck, b.ex.iss + 1, b.isn() + 2, b.id(1)))
            << "RST vs golden";
        EXPECT_EQ(dev.cm_conns(), 0u);
      }

      // ---- C: more bytes than the request announces; D: Rev 0
      struct Bad {
        unsigned n;
        std::vector<uint8_t> payload;
        R::MpaError reason;
      };
      auto too_long = req;
      too_long.insert(too_long.end(), 10, 0xEE);
      auto rev0 = mpa_request_payload(1, false, 0, pd);
      rev0[17] = 0;
      for (const Bad& bad :
           {Bad{3, too_long, R::MpaError::TOO_LONG}, Bad{4, rev0, R::MpaError::BAD_REV}}) {
        SCOPED_TRACE(std::string("bad request ") + R::name(bad.reason));
        HandPeer c(plat, hal, bad.n, 0x3333'0000 + bad.n);
        c.handshake();
        auto got = c.send(kAck | kPsh, c.isn() + 1, c.ex.iss + 1, bad.payload);
        ASSERT_EQ(got.size(), 1u) << frames_text(got);
        auto s = decode(got[0]);
        ASSERT_TRUE(s);
        EXPECT_TRUE(s->has(kRst));
        EXPECT_EQ(s->seq, c.ex.iss + 1);
        auto ev = next_event();
        ASSERT_TRUE(ev);
        const auto* me = std::get_if<bouncer::MpaError>(&*ev);
        ASSERT_NE(me, nullptr) << bouncer::event_name(*ev);
        EXPECT_EQ(me->reason, bad.reason);
        EXPECT_EQ(me->tuple, (bouncer::Tuple{kLocalIp, kPort, c.pf.src_ip, c.pf.sport}));
        EXPECT_EQ(dev.cm_conns(), 0u);
      }

      // ---- E: RST in SYN_RCVD
      {
        SCOPED_TRACE("E: RST in SYN_RCVD");
        HandPeer e(plat, hal, 5, 0x5555'0000);
        auto got = e.send(kSyn, e.isn(), 0);
        ASSERT_EQ(got.size(), 1u);
        const uint32_t iss = decode(got[0])->seq;
        EXPECT_EQ(dev.cm_conns(), 1u);
        EXPECT_TRUE(e.send(kRst | kAck, e.isn() + 1, iss + 1).empty());
        EXPECT_EQ(dev.cm_conns(), 0u);
        hal.wait_cycles(2 * kRto);
        EXPECT_TRUE(e.collect().empty()) << "a SYN-ACK retransmission after the RST";
      }

      // ---- F: SIW_SAFE, FIN|ACK acknowledging the reject -> our FIN, LAST_ACK, CLOSED
      {
        SCOPED_TRACE("F: passive close after a SIW_SAFE reject");
        HandPeer f(plat, hal, 6, 0x6666'0000);
        f.ex.req_len = static_cast<uint32_t>(req.size());
        f.handshake();
        const uint32_t rcv = f.ex.rcv_after_request();
        f.send(kAck | kPsh, f.isn() + 1, f.ex.iss + 1, req);
        auto ev = next_event();
        ASSERT_TRUE(ev);
        const auto* cr = std::get_if<bouncer::ConnectRequest>(&*ev);
        ASSERT_NE(cr, nullptr);
        const uint32_t id = cr->cm_id;
        RejectOptions o;
        o.fin_policy = R::FinPolicy::SIW_SAFE;
        ASSERT_TRUE(cm.reject(cr->handle, rej_pd, o).ok());
        hal.wait_cycles(1000);
        auto got = f.collect();
        const auto rp = f.ex.reject_params(rej_pd, false, std::nullopt);
        ASSERT_EQ(got.size(), 1u) << frames_text(got);
        EXPECT_EQ(got[0], golden::build_mpa_reject_frame(rp)) << "reject vs golden";
        wants[{f.pf.src_ip, f.pf.sport}] = {to_u8(rej_pd), true};
        const uint32_t rej_end = f.ex.iss + 1 + static_cast<uint32_t>(golden::mpa_reply_len(rp));
        got = f.send(kFin | kAck, rcv, rej_end);
        ASSERT_EQ(got.size(), 1u) << frames_text(got);
        EXPECT_EQ(got[0], f.ex.ctrl(TcpCtrlKind::kFinAck, rej_end, rcv + 1, f.id(2)))
            << "FIN (acknowledging theirs) vs golden";
        auto node = dev.cqp_read_node(id);
        ASSERT_TRUE(node.ok());
        EXPECT_EQ(node->state, R::CmState::LAST_ACK);
        EXPECT_TRUE(f.send(kAck, rcv + 1, rej_end + 1).empty());
        auto e = cm.poll_event();
        ASSERT_TRUE(e.ok());
        EXPECT_FALSE(e->has_value());
        EXPECT_EQ(terminals[id], std::vector<R::AeqEvent>{R::AeqEvent::CLOSED});
      }

      // ---- G: the initiator closes while the host holds its request; then the reject
      //      (IRDMA: reject + FIN acknowledging their FIN, LAST_ACK) and their ACK: CLOSED.
      //      H (same connection, first): a SYN on the established connection gets a
      //      challenge ACK and changes nothing.
      {
        SCOPED_TRACE("G/H: FIN while the host holds the request; SYN when established");
        HandPeer g(plat, hal, 7, 0x7777'0000);
        g.ex.req_len = static_cast<uint32_t>(req.size());
        g.handshake();
        const uint32_t rcv = g.ex.rcv_after_request();
        auto got = g.send(kSyn, g.isn(), 0);
        ASSERT_EQ(got.size(), 1u) << frames_text(got);
        EXPECT_EQ(got[0], g.ex.ctrl(TcpCtrlKind::kAck, g.ex.iss + 1, g.isn() + 1, g.id(1)))
            << "challenge ACK vs golden";
        g.send(kAck | kPsh, g.isn() + 1, g.ex.iss + 1, req);
        auto ev = next_event();
        ASSERT_TRUE(ev);
        const auto* cr = std::get_if<bouncer::ConnectRequest>(&*ev);
        ASSERT_NE(cr, nullptr);
        const uint32_t id = cr->cm_id;
        got = g.send(kFin | kAck, rcv, g.ex.iss + 1);
        ASSERT_EQ(got.size(), 1u) << frames_text(got);
        EXPECT_EQ(got[0], g.ex.ctrl(TcpCtrlKind::kAck, g.ex.iss + 1, rcv + 1, g.id(1)))
            << "ACK of the FIN vs golden";
        auto none = cm.poll_event();
        ASSERT_TRUE(none.ok());
        EXPECT_FALSE(none->has_value()) << "the peer's FIN is no event for the application";
        ASSERT_TRUE(cm.reject(cr->handle, rej_pd).ok());
        hal.wait_cycles(1000);
        got = g.collect();
        auto rp = g.ex.reject_params(rej_pd, true, std::nullopt);
        rp.rcv_nxt = rcv + 1;  // their FIN is acknowledged by the reject
        ASSERT_EQ(got.size(), 1u) << frames_text(got);
        EXPECT_EQ(got[0], golden::build_mpa_reject_frame(rp)) << "reject + FIN vs golden";
        wants[{g.pf.src_ip, g.pf.sport}] = {to_u8(rej_pd), true};
        auto node = dev.cqp_read_node(id);
        ASSERT_TRUE(node.ok());
        EXPECT_EQ(node->state, R::CmState::LAST_ACK);
        const uint32_t fin_end =
            g.ex.iss + 1 + static_cast<uint32_t>(golden::mpa_reply_len(rp)) + 1;
        EXPECT_TRUE(g.send(kAck, rcv + 1, fin_end).empty());
        auto e = cm.poll_event();
        ASSERT_TRUE(e.ok());
        EXPECT_FALSE(e->has_value());
        EXPECT_EQ(terminals[id], std::vector<R::AeqEvent>{R::AeqEvent::CLOSED});
      }

      EXPECT_EQ(dev.cm_conns(), 0u);
      const auto st = cm.stats();
      EXPECT_EQ(st.nodes_held + st.nodes_awaiting_terminal, 0u);
      EXPECT_EQ(st.unexpected_events, 0u);
      EXPECT_EQ(st.mpa_errors, 2u);
      EXPECT_EQ(reg(hal, R::reg::STAT_MPA_ERR), 2u);
      EXPECT_EQ(reg(hal, R::reg::STAT_RST_RX), 1u);
      EXPECT_EQ(reg(hal, R::reg::STAT_RTX), 0u);
      std::printf("[ stats    ] %s\n", stats_line(dev).c_str());
      cm.set_terminal_observer({});
    });
  }
  check_pcap(cfg.pcap_path, wants);
}

INSTANTIATE_TEST_SUITE_P(Width, SystemCmOow, ::testing::Values(64u, 512u), width_name);

}  // namespace

extern "C" int sc_main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
