// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// Passive-CM system tests: the real driver (Cm::listen / poll_event / reject) against the
// verilated bouncer_core with simulated iWARP initiators on the wire. Every frame Bouncer
// sends on a connection is compared byte for byte with the golden builders (tb/golden),
// the peers' outcomes with what the host posted, and every test ends with the connection
// table empty and nothing held in the driver. One Platform per process: each TEST runs in
// its own process (gtest_discover_tests PRE_TEST); the data width is the parameter.
//
// This file: the full exchange per FIN policy, peer RSTs, no listener, malformed requests,
// the MPA v1 retry after a RST, segmented requests and the latency table. The tests that
// check what the initiator received run against each initiator personality (siw, irdma,
// cxgb4: sim/peer/README.md) and assert what its application gets. Loss: test_system_cm_loss.cpp;
// duplicate and out-of-window segments: test_system_cm_oow.cpp; scale and auto-reject:
// test_system_cm_scale.cpp. Shared helpers: system_fixture.hpp.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "system_fixture.hpp"

namespace {

using namespace systest;
using golden::TcpCtrlKind;

class SystemCm : public ::testing::TestWithParam<unsigned> {};

class SystemCmPeer : public ::testing::TestWithParam<WidthPersonality> {
 protected:
  unsigned width() const { return std::get<0>(GetParam()); }
  peer::Personality pers() const { return std::get<1>(GetParam()); }
};

// ------------------------------------------------------------------ the full exchange

// Checks the whole transcript of one host-rejected connection against the golden frames:
//   ->B SYN, B-> SYN-ACK (keyed ISS, MSS/WS options), ->B ACK, ->B request, B-> ACK,
//   B-> reject [+FIN], then per policy
//   SIW_SAFE: a bare FIN only after the peer's ACK of the reject, then ACKs of its FIN;
//   IRDMA:    FIN in the reject segment, then an ACK of the peer's FIN;
//   ABORT:    RST|ACK right behind the reject; later only RSTs (to the peer's segments for
//             the freed node).
// An initiator that answers the reject with ACK, RST (cxgb4; siw when the FIN rode in the
// reject segment) gets at most our FIN (SIW_SAFE) and no ACK of a FIN of its own.
void check_exchange(const sim::Platform& plat, const Conn& c, R::FinPolicy policy) {
  const peer::Personality pers = c.cfg.personality;
  const bool peer_resets = peer_resets_after_reject(pers, policy);
  const auto t = transcript(plat, c.cfg.ip, c.cfg.port);
  SCOPED_TRACE("connection " + ip_str(c.cfg.ip) + ":" + std::to_string(c.cfg.port) + " policy " +
               R::name(policy) + " initiator " + peer::to_string(pers) + "\n" + dump(t));
  Expect ex;
  ex.peer = c.cfg;
  ex.req_len = request_len(c.cfg);
  ex.vlan = c.cfg.vlan_tci;
  ASSERT_GE(t.size(), 6u);

  EXPECT_TRUE(t[0].to_bouncer && t[0].seg.flags == kSyn && t[0].seg.seq == c.cfg.isn);
  ASSERT_FALSE(t[1].to_bouncer);
  const Seg& sa = t[1].seg;
  ASSERT_EQ(sa.flags, kSyn | kAck);
  ex.iss = sa.seq;
  ex.ip_id0 = sa.ip_id;
  EXPECT_TRUE(isn_plausible(ex.iss, c.cfg, t[0].last - 64, t[1].first + 64))
      << "ISS " << ex.iss << " is not the keyed hash of the tuple";
  EXPECT_EQ(sa.mss, std::optional<uint16_t>(test_tcp().mss));
  EXPECT_EQ(sa.wscale, std::optional<uint8_t>(test_tcp().wscale));
  EXPECT_EQ(t[1].bytes, ex.synack()) << "SYN-ACK vs golden";

  EXPECT_TRUE(t[2].to_bouncer && t[2].seg.bare(kAck) && t[2].seg.ack == ex.iss + 1);
  EXPECT_TRUE(t[3].to_bouncer && t[3].seg.mpa_request());
  EXPECT_EQ(t[3].seg.payload, peer::Initiator(c.cfg).request_bytes());

  const uint32_t rcv = ex.rcv_after_request();
  ASSERT_FALSE(t[4].to_bouncer);
  EXPECT_EQ(t[4].bytes,
            ex.ctrl(TcpCtrlKind::kAck, ex.iss + 1, rcv, static_cast<uint16_t>(ex.ip_id0 + 1)))
      << "ACK of the request vs golden";

  ASSERT_FALSE(t[5].to_bouncer);
  ASSERT_TRUE(t[5].seg.mpa_reply());
  const bool fin_in_reject = policy == R::FinPolicy::IRDMA;
  const auto rp = ex.reject_params(c.reject_pd, fin_in_reject, c.opts.ird_ord);
  EXPECT_EQ(t[5].bytes, golden::build_mpa_reject_frame(rp)) << "reject vs golden";
  const uint32_t rej_end = ex.iss + 1 + static_cast<uint32_t>(golden::mpa_reply_len(rp));
  EXPECT_EQ(t[5].seg.end(), rej_end + (fin_in_reject ? 1 : 0));
  ASSERT_TRUE(c.completion.has_value());
  EXPECT_TRUE(c.completion->ok()) << c.completion->status();
  EXPECT_EQ(c.completion->tcp_seq, ex.iss + 1);
  EXPECT_EQ(c.completion->frame_len, t[5].bytes.size());
  EXPECT_EQ(c.completion->cm_id, *c.cm_id);

  // after the reject
  bool peer_fin_seen = false;  // a FIN from the peer ended before the frame at hand began
  size_t fins = 0, rsts = 0, acks = 0;
  uint64_t reject_acked_at = 0;
  for (size_t i = 6; i < t.size(); ++i) {
    const WireSeg& w = t[i];
    if (w.to_bouncer) {
      if (w.seg.has(kAck) && !w.seg.has(kRst) && w.seg.ack - rej_end < 0x8000'0000u &&
          reject_acked_at == 0) {
        reject_acked_at = w.last;
      }
      if (w.seg.has(kFin)) peer_fin_seen = true;
      continue;
    }
    const Seg& s = w.seg;
    EXPECT_FALSE(s.mpa_reply()) << "reject sent again without loss";
    const uint32_t ack_now = rcv + (peer_fin_seen ? 1 : 0);
    switch (policy) {
      case R::FinPolicy::SIW_SAFE:
        EXPECT_TRUE(!peer_resets || s.has(kFin)) << "only our FIN before the peer's RST";
        if (s.has(kFin)) {
          ++fins;
          EXPECT_EQ(fins, 1u) << "a second FIN without loss";
          EXPECT_NE(reject_acked_at, 0u) << "FIN before the peer ACKed the reject";
          EXPECT_GT(w.first, reject_acked_at);
          // the ACK number is the one in force when the FIN was planned: the peer's FIN may
          // have reached the port and not yet the engine
          const auto f0 =
              ex.ctrl(TcpCtrlKind::kFinAck, rej_end, rcv, static_cast<uint16_t>(ex.ip_id0 + 2));
          const auto f1 =
              ex.ctrl(TcpCtrlKind::kFinAck, rej_end, ack_now, static_cast<uint16_t>(ex.ip_id0 + 2));
          EXPECT_TRUE(w.bytes == f0 || w.bytes == f1) << "FIN vs golden";
        } else {
          ++acks;
          EXPECT_EQ(fins, 1u) << "an ACK before our FIN";
          EXPECT_EQ(w.bytes, ex.ctrl(TcpCtrlKind::kAck, rej_end + 1, rcv + 1,
                                     static_cast<uint16_t>(ex.ip_id0 + 3)))
              << "ACK of the peer's FIN vs golden";
        }
        break;
      case R::FinPolicy::IRDMA:
        ++acks;
        EXPECT_EQ(w.bytes, ex.ctrl(TcpCtrlKind::kAck, rej_end + 1, rcv + 1,
                                   static_cast<uint16_t>(ex.ip_id0 + 2)))
            << "ACK of the peer's FIN vs golden";
        break;
      case R::FinPolicy::ABORT:
        EXPECT_TRUE(s.has(kRst)) << "only RSTs after an ABORT reject";
        if (rsts == 0) {  // the first frame Bouncer sends after the reject
          EXPECT_EQ(w.bytes, ex.ctrl(TcpCtrlKind::kRstAck, rej_end, rcv,
                                     static_cast<uint16_t>(ex.ip_id0 + 2)))
              << "RST behind the reject vs golden";
          EXPECT_LT(w.first - t[5].last, 64u) << "RST not right behind the reject";
        }
        ++rsts;
        break;
      default:
        break;
    }
  }
  const auto& o = plat.peer(c.peer).outcome();
  switch (policy) {
    case R::FinPolicy::SIW_SAFE:
      if (peer_resets) {
        EXPECT_LE(fins, 1u);
        EXPECT_EQ(o.state, peer::State::kAborted) << o.error;
      } else {
        EXPECT_EQ(fins, 1u);
        // the peer's FIN is acknowledged (by an ACK, or by our FIN if it came first)
        EXPECT_EQ(tx_only(t).back()->seg.ack, rcv + 1);
        EXPECT_EQ(o.state, peer::State::kDone) << o.error;
      }
      EXPECT_FALSE(o.reply_had_fin);
      break;
    case R::FinPolicy::IRDMA:
      EXPECT_EQ(acks, peer_resets ? 0u : 1u);
      EXPECT_EQ(o.state, peer_resets ? peer::State::kAborted : peer::State::kDone) << o.error;
      EXPECT_TRUE(o.reply_had_fin);
      break;
    case R::FinPolicy::ABORT:
      EXPECT_GE(rsts, 1u) << "no RST behind the reject";
      // cxgb4 resets on the reject itself, before our RST arrives
      EXPECT_EQ(o.state,
                pers == peer::Personality::kCxgb4 ? peer::State::kAborted : peer::State::kReset)
          << o.error;
      break;
    default:
      break;
  }
  EXPECT_TRUE(o.peer_fin || policy == R::FinPolicy::ABORT ||
              (peer_resets && policy == R::FinPolicy::SIW_SAFE));
  EXPECT_EQ(o.retransmits, 0u);
  // the driver consumed exactly one terminal event: CLOSED (ABORT: CLOSED reason 1), RESET
  // when the initiator reset the connection
  EXPECT_EQ(c.terminals, std::vector<R::AeqEvent>{expected_terminal(pers, policy)});
}

// Three connections, one per FIN policy (one of them through the listener's default), with
// initiators of personality `pers`. siw loses the PD of the IRDMA policy's reject + FIN (the
// FIN is processed first): asserted as the expected loss.
void full_exchange(unsigned width, peer::Personality pers, uint8_t rev) {
  // rev 1: listener SIW_SAFE, peer 0 DEFAULT; rev 2: listener IRDMA, peer 1 DEFAULT
  const R::FinPolicy lst = rev == 1 ? R::FinPolicy::SIW_SAFE : R::FinPolicy::IRDMA;
  CmTest ct{.cfg = platform_config(width), .listen = listen_options(lst)};
  ct.run([&](sim::Platform& plat, bouncer::hal::Device& hal, Device& dev, Cm&, Scenario& sc) {
    const R::FinPolicy pol[3] = {R::FinPolicy::SIW_SAFE, R::FinPolicy::IRDMA, R::FinPolicy::ABORT};
    const size_t req_pd[3] = {0, 40, rev == 1 ? 512u : 300u};
    const size_t rej_pd[3] = {12, rev == 1 ? 0u : 33u, 200};
    const uint64_t t0 = hal.now_cycles() + 100;
    for (unsigned i = 0; i < 3; ++i) {
      auto pc = peer_config(
          i, rev, true, text_pd("request from peer " + std::to_string(i), req_pd[i]), kPort, pers);
      RejectOptions o;
      o.fin_policy = pol[i] == lst ? R::FinPolicy::DEFAULT : pol[i];
      if (rev == 2 && i == 1) o.ird_ord = ird_ord_word(4, 2);
      // an 802.1Q-tagged initiator: every frame of ours carries its tag back
      if (i == 1) pc.vlan_tci = static_cast<uint16_t>((5u << 13) | (100u + rev));
      o.wr_id = 0x100 + i;
      const size_t k = sc.add(pc, t0 + 3000 * i,
                              to_bytes(text_pd("no, peer " + std::to_string(i), rej_pd[i])), o);
      sc.conns[k].expect_lost =
          pers == peer::Personality::kSiw && pol[i] == R::FinPolicy::IRDMA && rej_pd[i] > 0;
    }
    ASSERT_TRUE(sc.settle(3'000'000)) << sc.status();
    for (unsigned i = 0; i < 3; ++i) {
      SCOPED_TRACE("peer " + std::to_string(i));
      expect_request_matches(sc.conns[i]);
      expect_rejected_as_planned(sc, sc.conns[i]);
      check_exchange(plat, sc.conns[i], pol[i]);
    }
    expect_clean_end(sc);
    EXPECT_EQ(reg(hal, R::reg::STAT_CONN_ESTABLISHED), 3u);
    EXPECT_EQ(reg(hal, R::reg::STAT_MPA_REQ), 3u);
    EXPECT_EQ(reg(hal, R::reg::STAT_REJECT_HOST), 3u);
    EXPECT_EQ(reg(hal, R::reg::STAT_REJECT_AUTO), 0u);
    EXPECT_EQ(reg(hal, R::reg::STAT_RTX), 0u);
    // SIW_SAFE alone (unless cxgb4's RST came first), IRDMA in the reject
    if (pers == peer::Personality::kCxgb4) {
      EXPECT_GE(reg(hal, R::reg::STAT_FIN_TX), 1u);
      EXPECT_LE(reg(hal, R::reg::STAT_FIN_TX), 2u);
    } else {
      EXPECT_EQ(reg(hal, R::reg::STAT_FIN_TX), 2u);
    }
    EXPECT_EQ(reg(hal, R::reg::STAT_EVENTS), 6u);  // 3 requests + 3 terminal
    EXPECT_EQ(reg(hal, R::reg::STAT_CLOSED), 3u);  // nodes freed, whichever way
    EXPECT_EQ(reg(hal, R::reg::STAT_RX_BAD), 0u);
    EXPECT_EQ(reg(hal, R::reg::STAT_RX_OVERFLOW), 0u);
    std::printf("[ stats    ] %s\n", stats_line(dev).c_str());
    ct.wants = pcap_wants(sc);
  });
}

TEST_P(SystemCmPeer, FullExchangeRev1) { full_exchange(width(), pers(), 1); }
TEST_P(SystemCmPeer, FullExchangeRev2) { full_exchange(width(), pers(), 2); }

// ------------------------------------------------------------------ peer RST in each state

// kRstAfterSynAck: handshake ACK, then RST instead of a request. The node is freed without
// an event (the host never saw it).
TEST_P(SystemCm, PeerRstAfterSynAck) {
  CmTest ct{.cfg = platform_config(GetParam())};
  ct.run([&](sim::Platform& plat, bouncer::hal::Device& hal, Device&, Cm&, Scenario& sc) {
    auto pc = peer_config(0, 2, true, text_pd("x", 10));
    pc.fault = peer::InitiatorConfig::Fault::kRstAfterSynAck;
    sc.add(pc, hal.now_cycles() + 100);
    ASSERT_TRUE(sc.settle(1'000'000)) << sc.status();
    // some time for anything late (a retransmitted SYN-ACK, an event)
    ASSERT_FALSE(sc.pump([] { return false; }, 4 * kRto));
    const auto& c = sc.conns[0];
    EXPECT_TRUE(c.requests.empty());
    EXPECT_TRUE(c.terminals.empty());
    EXPECT_EQ(plat.peer(c.peer).outcome().state, peer::State::kAborted);
    const auto t = transcript(plat, pc.ip, pc.port);
    SCOPED_TRACE(dump(t));
    const auto tx = tx_only(t);
    ASSERT_EQ(tx.size(), 1u) << "only the SYN-ACK";
    EXPECT_EQ(tx[0]->seg.flags, kSyn | kAck);
    EXPECT_EQ(reg(hal, R::reg::STAT_RST_RX), 1u);
    EXPECT_EQ(reg(hal, R::reg::STAT_EVENTS), 0u);
    EXPECT_EQ(reg(hal, R::reg::STAT_CLOSED), 1u);
    EXPECT_EQ(reg(hal, R::reg::STAT_RTX), 0u);
    expect_clean_end(sc);
  });
}

// kRstAfterRequest: the RST arrives while the host holds the request. PeerReset event; the
// later reject returns CTX/PEER_RESET, sends nothing and frees the cm_id.
TEST_P(SystemCm, PeerRstWhileHostHoldsRequest) {
  CmTest ct{.cfg = platform_config(GetParam())};
  ct.run([&](sim::Platform& plat, bouncer::hal::Device& hal, Device& dev, Cm& cm, Scenario& sc) {
    auto pc = peer_config(0, 2, true, text_pd("about to vanish", 30));
    pc.fault = peer::InitiatorConfig::Fault::kRstAfterRequest;
    const size_t i = sc.add(pc, hal.now_cycles() + 100, to_bytes(text_pd("late", 4)));
    sc.conns[i].hold = true;
    ASSERT_TRUE(sc.pump([&] { return !sc.conns[i].resets.empty(); }, 1'000'000)) << sc.status();
    Conn& c = sc.conns[i];
    expect_request_matches(c);
    ASSERT_EQ(c.resets.size(), 1u);
    EXPECT_EQ(c.resets[0].cm_id, *c.cm_id);
    EXPECT_EQ(cm.node_state(*c.cm_id), bouncer::NodeState::kHeldReset);
    EXPECT_EQ(dev.cm_conns(), 1u) << "the node stays until the host rejects it";
    const size_t tx_before = plat.tx_frames().size();
    auto r = cm.reject(c.handle, c.reject_pd);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, bouncer::Errc::kHardware);
    EXPECT_EQ(r.error().hw_major, static_cast<uint16_t>(R::CqMajor::CTX));
    EXPECT_EQ(r.error().hw_minor, static_cast<uint16_t>(R::CqMinor::PEER_RESET));
    ASSERT_TRUE(sc.settle(1'000'000)) << sc.status();
    hal.wait_cycles(2 * kRto);
    EXPECT_EQ(plat.tx_frames().size(), tx_before) << "nothing sent for the late reject";
    EXPECT_EQ(cm.node_state(*c.cm_id), bouncer::NodeState::kFree);
    EXPECT_EQ(cm.stats().late_resets, 1u);
    EXPECT_EQ(cm.stats().peer_resets, 1u);
    EXPECT_TRUE(c.terminals.empty());
    EXPECT_EQ(plat.peer(c.peer).outcome().state, peer::State::kAborted);
    EXPECT_EQ(reg(hal, R::reg::STAT_REJECT_LATE), 1u);
    EXPECT_EQ(reg(hal, R::reg::STAT_REJECT_HOST), 0u);
    EXPECT_EQ(reg(hal, R::reg::STAT_RST_RX), 1u);
    EXPECT_EQ(reg(hal, R::reg::STAT_EVENTS), 2u);  // CONNECT_REQUEST, RESET
    expect_clean_end(sc);
  });
}

// fin_after_reject = false: the peer answers the reject with ACK, RST (SIW_SAFE: the reject
// has no FIN; with IRDMA's reject + FIN the initiator closes normally). Bouncer's FIN may
// already be out (it answers the ACK); the RST then ends the node with a RESET the driver
// consumes (the application never sees it). Nothing is retransmitted, no RST of ours.
TEST_P(SystemCm, PeerRstAfterReject) {
  CmTest ct{.cfg = platform_config(GetParam())};
  ct.run([&](sim::Platform& plat, bouncer::hal::Device& hal, Device&, Cm&, Scenario& sc) {
    auto pc = peer_config(0, 1, false, text_pd("rst after reject", 20));
    pc.fin_after_reject = false;
    // lingers long enough for a retransmission, were the node still alive
    run_one(sc, pc, to_bytes(text_pd("go away", 7)), 2'000'000, 3 * kRto,
            [&](const Conn& c, const std::vector<WireSeg>& t) {
              EXPECT_EQ(plat.peer(c.peer).outcome().state, peer::State::kAborted);
              EXPECT_EQ(c.terminals, std::vector<R::AeqEvent>{R::AeqEvent::RESET});
              uint64_t rst_at = 0, rej_at = 0;
              for (const auto& w : t) {
                if (w.to_bouncer && w.seg.has(kRst)) rst_at = w.last;
                if (!w.to_bouncer && w.seg.mpa_reply()) rej_at = w.first;
              }
              ASSERT_NE(rst_at, 0u);
              ASSERT_NE(rej_at, 0u);
              size_t after = 0;
              for (const auto& w : t) {
                if (w.to_bouncer || w.first <= rej_at) continue;
                ++after;
                EXPECT_TRUE(w.seg.bare(kFin | kAck))
                    << "after the reject only our FIN: " << describe(w.seg);
                EXPECT_LT(w.first, rst_at + 200) << "a frame long after the peer's RST";
              }
              EXPECT_LE(after, 1u);
              EXPECT_EQ(reg(hal, R::reg::STAT_RST_RX), 1u);
              EXPECT_EQ(reg(hal, R::reg::STAT_RST_TX), 0u);
              EXPECT_EQ(reg(hal, R::reg::STAT_RTX), 0u);
              expect_clean_end(sc);
              ct.wants = pcap_wants(sc);
            });
  });
}

// ------------------------------------------------------------------ no listener

// A SYN to a port nobody listens on (and one to a destroyed listener's port): RST|ACK with
// <SEQ=0><ACK=SEG.SEQ+1>, STAT_SYN_NO_LISTENER; the peer ends reset. irdma retries each
// rev-2 attempt once with MPA v1 (irdma_handle_rst_pkt: another SYN at the next sequence
// number, answered the same way). The application: siw's rdma_connect() fails with
// ECONNREFUSED; irdma and cxgb4 report REJECTED -104 (irdma with its own request's PD).
TEST_P(SystemCmPeer, NoListenerRst) {
  CmTest ct{.cfg = platform_config(width())};
  const bool retry = pers() == peer::Personality::kIrdma;
  ct.run([&](sim::Platform& plat, bouncer::hal::Device& hal, Device&, Cm& cm, Scenario& sc) {
    auto gone = cm.listen(kLocalIp, kPort2, listen_options());
    ASSERT_TRUE(gone.ok());
    ASSERT_TRUE(cm.destroy_listener(*gone).ok());
    auto p0 = peer_config(0, 2, true, text_pd("anyone?", 7), 7777, pers());
    auto p1 = peer_config(1, 2, true, text_pd("anyone?", 7), kPort2, pers());
    sc.add(p0, hal.now_cycles() + 100);
    sc.add(p1, hal.now_cycles() + 3000);
    ASSERT_TRUE(sc.settle(1'000'000)) << sc.status();
    for (const auto* p : {&p0, &p1}) {
      const auto t = transcript(plat, p->ip, p->port);
      SCOPED_TRACE(dump(t));
      ASSERT_EQ(t.size(), retry ? 4u : 2u);
      for (size_t k = 0; k < t.size(); k += 2) {
        // the retry's SYN carries the sequence number after the first SYN's
        const uint32_t seq = p->isn + static_cast<uint32_t>(k / 2);
        EXPECT_TRUE(t[k].to_bouncer && t[k].seg.flags == kSyn && t[k].seg.seq == seq);
        ASSERT_FALSE(t[k + 1].to_bouncer);
        // RFC 793: <SEQ=0><ACK=SEG.SEQ+SEG.LEN><CTL=RST,ACK>; the frame goes back to the
        // sender's MAC from the MAC it addressed; no listener: TTL 64, the SYN's TOS
        Expect ex;
        ex.peer = *p;
        ex.ttl = 64;
        ex.tos = 0;
        ex.peer_ws = false;  // no SYN-ACK agreed on window scaling: TCP_WND as is
        EXPECT_EQ(t[k + 1].bytes, ex.ctrl(TcpCtrlKind::kRstAck, 0, seq + 1, 0)) << "RST vs golden";
      }
    }
    for (const auto& c : sc.conns) {
      const auto& o = plat.peer(c.peer).outcome();
      EXPECT_EQ(o.state, peer::State::kReset);
      EXPECT_TRUE(c.requests.empty());
      EXPECT_EQ(o.attempts, retry ? 2u : 1u);
      switch (pers()) {
        case peer::Personality::kSiw:
          EXPECT_EQ(o.app_event, peer::AppEvent::kConnectFailed);
          EXPECT_EQ(o.app_status, peer::kECONNREFUSED);
          break;
        case peer::Personality::kIrdma:
          EXPECT_EQ(o.app_event, peer::AppEvent::kRejected);
          EXPECT_EQ(o.app_status, peer::kECONNRESET);
          EXPECT_EQ(o.app_pd, text_pd("anyone?", 7));
          break;
        case peer::Personality::kCxgb4:
          EXPECT_EQ(o.app_event, peer::AppEvent::kRejected);
          EXPECT_EQ(o.app_status, peer::kECONNRESET);
          EXPECT_TRUE(o.app_pd.empty());
          break;
      }
    }
    EXPECT_EQ(reg(hal, R::reg::STAT_SYN_NO_LISTENER), retry ? 4u : 2u);
    EXPECT_EQ(reg(hal, R::reg::STAT_RST_TX), retry ? 4u : 2u);
    EXPECT_EQ(reg(hal, R::reg::STAT_EVENTS), 0u);
    expect_clean_end(sc);
  });
}

// ------------------------------------------------------------------ malformed MPA requests

// Bad key, rev 3, PD_Length 513: each gets a RST (seq = ISS + 1, which the peer accepts) and
// an MpaError event with the right reason; the node is freed.
TEST_P(SystemCm, MalformedMpaRequests) {
  CmTest ct{.cfg = platform_config(GetParam()), .listen = std::nullopt};
  ct.run([&](sim::Platform& plat, bouncer::hal::Device& hal, Device&, Cm& cm, Scenario& sc) {
    auto lid = cm.listen(kLocalIp, kPort, listen_options());
    ASSERT_TRUE(lid.ok());
    using F = peer::InitiatorConfig::Fault;
    const F faults[3] = {F::kBadKey, F::kRev3, F::kPdTooLong};
    const R::MpaError reasons[3] = {R::MpaError::BAD_KEY, R::MpaError::BAD_REV,
                                    R::MpaError::PD_TOO_LONG};
    for (unsigned i = 0; i < 3; ++i) {
      auto pc = peer_config(i, 2, true, text_pd("malformed", 24));
      pc.fault = faults[i];
      sc.add(pc, hal.now_cycles() + 100 + 4000 * i);
    }
    ASSERT_TRUE(sc.settle(2'000'000)) << sc.status();
    for (unsigned i = 0; i < 3; ++i) {
      const Conn& c = sc.conns[i];
      const auto t = transcript(plat, c.cfg.ip, c.cfg.port);
      SCOPED_TRACE(std::string("reason ") + R::name(reasons[i]) + "\n" + dump(t));
      EXPECT_TRUE(c.requests.empty());
      ASSERT_EQ(c.mpa_errors.size(), 1u);
      EXPECT_EQ(c.mpa_errors[0].reason, reasons[i]);
      EXPECT_EQ(c.mpa_errors[0].listener, *lid);
      EXPECT_EQ(c.mpa_errors[0].tuple, (bouncer::Tuple{kLocalIp, kPort, c.cfg.ip, c.cfg.port}));
      const auto tx = tx_only(t);
      ASSERT_GE(tx.size(), 2u);
      EXPECT_EQ(tx[0]->seg.flags, kSyn | kAck);
      const uint32_t iss = tx[0]->seg.seq;
      const auto& rst = *tx.back();
      EXPECT_TRUE(rst.seg.has(kRst));
      EXPECT_EQ(rst.seg.seq, iss + 1);
      EXPECT_TRUE(rst.seg.ip_csum_ok && rst.seg.tcp_csum_ok);
      for (const auto* w : tx) EXPECT_FALSE(w->seg.mpa_reply());
      const auto& o = plat.peer(c.peer).outcome();
      EXPECT_EQ(o.state, peer::State::kReset) << o.error;
      EXPECT_FALSE(o.rejected);
    }
    EXPECT_EQ(cm.stats().mpa_errors, 3u);
    EXPECT_EQ(reg(hal, R::reg::STAT_MPA_ERR), 3u);
    EXPECT_EQ(reg(hal, R::reg::STAT_MPA_REQ), 0u);
    EXPECT_EQ(reg(hal, R::reg::STAT_EVENTS), 3u);
    expect_clean_end(sc);
  });
}

// ------------------------------------------------------------------ MPA v1 retry

// Bouncer resets a request it cannot parse (bad key: MPA_ERROR, RST) while the initiator
// waits for the reply. irdma (irdma_handle_rst_pkt) and cxgb4 (peer_abort -> c4iw_reconnect)
// tell the application nothing and connect again from the same address and port with an
// MPA v1 request: the host sees a rev-1 CONNECT_REQUEST and rejects it, and the application
// gets that reject. siw reports the RST as REJECTED -104 without PD.
TEST_P(SystemCmPeer, MpaV1RetryAfterRst) {
  CmTest ct{.cfg = platform_config(width())};
  const bool retry = pers() != peer::Personality::kSiw;
  ct.run([&](sim::Platform& plat, bouncer::hal::Device& hal, Device&, Cm&, Scenario& sc) {
    auto pc = peer_config(0, 2, true, text_pd("retry me", 8), kPort, pers());
    pc.fault = peer::InitiatorConfig::Fault::kBadKey;  // the first attempt only
    const auto rej = text_pd("v1 says no", 10);
    sc.add(pc, hal.now_cycles() + 100, to_bytes(rej));
    ASSERT_TRUE(sc.settle(3'000'000)) << sc.status();
    const Conn& c = sc.conns[0];
    const auto t = transcript(plat, pc.ip, pc.port);
    SCOPED_TRACE(dump(t));
    const auto& o = plat.peer(c.peer).outcome();
    ASSERT_EQ(c.mpa_errors.size(), 1u);
    EXPECT_EQ(c.mpa_errors[0].reason, R::MpaError::BAD_KEY);
    std::vector<uint32_t> syns;
    for (const auto& w : t) {
      if (w.to_bouncer && w.seg.flags == kSyn) syns.push_back(w.seg.seq);
    }
    if (!retry) {
      EXPECT_EQ(syns, std::vector<uint32_t>{pc.isn});
      EXPECT_TRUE(c.requests.empty());
      EXPECT_EQ(o.state, peer::State::kReset);
      EXPECT_EQ(o.app_event, peer::AppEvent::kRejected);
      EXPECT_EQ(o.app_status, peer::kECONNRESET);
      EXPECT_TRUE(o.app_pd.empty());
      EXPECT_EQ(reg(hal, R::reg::STAT_MPA_REQ), 0u);
      expect_clean_end(sc);
      return;
    }
    // the retry: same tuple, irdma continues after the first request (20 + 4 + 8 bytes),
    // cxgb4 starts over with another ISN
    const uint32_t first_req = 20 + 4 + 8;
    const uint32_t retry_isn = pers() == peer::Personality::kIrdma
                                   ? pc.isn + 1 + first_req
                                   : ((pc.isn + 0x4000'0000u) & ~7u) + 3u;
    EXPECT_EQ(syns, (std::vector<uint32_t>{pc.isn, retry_isn}));
    EXPECT_EQ(o.attempts, 2u);
    EXPECT_EQ(o.retry_syn_seq, retry_isn);
    ASSERT_EQ(c.requests.size(), 1u) << "the host sees the v1 attempt";
    const auto& r = c.requests[0];
    EXPECT_EQ(r.tuple, (bouncer::Tuple{kLocalIp, kPort, pc.ip, pc.port}));
    EXPECT_EQ(r.rev, 1);
    EXPECT_EQ(r.flags, 0x40);  // CRC, no enhanced flag, no IRD/ORD word
    EXPECT_FALSE(r.ird_ord.has_value());
    EXPECT_EQ(to_u8(r.private_data), pc.private_data);
    ASSERT_TRUE(c.completion.has_value());
    EXPECT_TRUE(c.completion->ok());
    EXPECT_TRUE(o.rejected);
    EXPECT_EQ(o.reply_rev, 1);
    EXPECT_EQ(o.reject_pd, rej);
    EXPECT_EQ(o.request_rev, 1);
    EXPECT_EQ(o.app_event, peer::AppEvent::kRejected);
    EXPECT_EQ(o.app_status, peer::kECONNREFUSED);
    EXPECT_EQ(o.app_pd, rej) << "a rev-1 reject reaches irdma and cxgb4 exactly";
    EXPECT_EQ(c.terminals,
              std::vector<R::AeqEvent>{expected_terminal(pers(), R::FinPolicy::SIW_SAFE)});
    EXPECT_EQ(reg(hal, R::reg::STAT_MPA_ERR), 1u);
    EXPECT_EQ(reg(hal, R::reg::STAT_MPA_REQ), 1u);
    EXPECT_EQ(reg(hal, R::reg::STAT_REJECT_HOST), 1u);
    expect_clean_end(sc);
    ct.wants[{pc.ip, pc.port}] = {rej, false};
  });
}

// ------------------------------------------------------------------ MPA timeout

// kNoRequest: the handshake completes and no request follows. MPA_TIMEOUT after the
// handshake ACK the node is reset (RST|ACK at ISS + 1) and freed; no event (the host never
// saw it); the initiator ends reset.
TEST_P(SystemCm, MpaTimeoutWithoutRequest) {
  constexpr uint32_t kMpaTicks = 60'000 / kTick;
  CmTest ct{.cfg = platform_config(GetParam())};
  ct.dc.timers->mpa_timeout = kMpaTicks;
  ct.run([&](sim::Platform& plat, bouncer::hal::Device& hal, Device&, Cm&, Scenario& sc) {
    auto pc = peer_config(0, 2, true, text_pd("never sent", 10));
    pc.fault = peer::InitiatorConfig::Fault::kNoRequest;
    sc.add(pc, hal.now_cycles() + 100);
    ASSERT_TRUE(sc.settle(1'000'000)) << sc.status();
    const auto t = transcript(plat, pc.ip, pc.port);
    SCOPED_TRACE(dump(t));
    ASSERT_EQ(t.size(), 4u);  // SYN, SYN-ACK, ACK, RST
    ASSERT_TRUE(t[2].to_bouncer && t[2].seg.bare(kAck));
    ASSERT_FALSE(t[3].to_bouncer);
    Expect ex;
    ex.peer = pc;
    ex.iss = t[1].seg.seq;
    ex.ip_id0 = t[1].seg.ip_id;
    EXPECT_EQ(t[3].bytes, ex.ctrl(TcpCtrlKind::kRstAck, ex.iss + 1, pc.isn + 1,
                                  static_cast<uint16_t>(ex.ip_id0 + 1)))
        << "RST vs golden";
    const uint64_t gap = t[3].first - t[2].last;
    const uint64_t want = uint64_t{kMpaTicks} * kTick;
    EXPECT_GE(gap + kTick + kSweep + 64, want) << "gap " << gap;
    EXPECT_LE(gap, want + kTick + kSweep + 64) << "gap " << gap;
    std::printf("[ timeout  ] handshake ACK -> RST %" PRIu64 " cycles, MPA_TIMEOUT %" PRIu64 "\n",
                gap, want);
    EXPECT_TRUE(sc.conns[0].requests.empty());
    EXPECT_EQ(plat.peer(0).outcome().state, peer::State::kReset);
    EXPECT_EQ(reg(hal, R::reg::STAT_MPA_TIMEOUT), 1u);
    EXPECT_EQ(reg(hal, R::reg::STAT_RST_TX), 1u);
    EXPECT_EQ(reg(hal, R::reg::STAT_EVENTS), 0u);
    EXPECT_EQ(reg(hal, R::reg::STAT_CLOSED), 1u);
    expect_clean_end(sc);
  });
}

// ------------------------------------------------------------------ segmented requests

// The request over 2..4 TCP segments (PD up to 508 + the IRD/ORD word = PD_Length 512): one
// ConnectRequest with the whole PD; every partial segment is ACKed. The listener's IRDMA
// policy puts the FIN in the reject segment: siw loses the PD (asserted), cxgb4 resets.
TEST_P(SystemCmPeer, SegmentedRequest) {
  // Wireshark's heuristic decodes a reply only when it parsed the request of the
  // conversation, which it does not reassemble across segments: PD checked where dissected.
  CmTest ct{.cfg = platform_config(width()),
            .listen = listen_options(R::FinPolicy::IRDMA),
            .every = false};
  ct.run([&](sim::Platform& plat, bouncer::hal::Device& hal, Device&, Cm&, Scenario& sc) {
    struct Shape {
      unsigned segs;
      uint8_t rev;
      size_t pd;
    };
    // the last two: the initiator's sequence numbers wrap inside the request; an MSS of
    // 80 bytes cuts a 532-byte request into 7 segments
    const Shape shapes[] = {{2, 2, 100}, {3, 2, 508}, {4, 1, 512}, {4, 2, 1},
                            {2, 1, 0},   {3, 2, 300}, {7, 2, 508}};
    unsigned i = 0;
    for (const auto& s : shapes) {
      auto pc = peer_config(i, s.rev, true, text_pd("segmented #" + std::to_string(i), s.pd), kPort,
                            pers());
      pc.request_segments = s.segs;
      if (i == 5) pc.isn = 0xFFFF'FF80u;
      if (i == 6) {
        pc.mss = 80;
        pc.request_segments = 1;
      }
      const size_t k = sc.add(pc, hal.now_cycles() + 100 + 2500 * i, to_bytes(text_pd("no", 2)));
      sc.conns[k].expect_lost = pers() == peer::Personality::kSiw;
      ++i;
    }
    ASSERT_TRUE(sc.settle(3'000'000)) << sc.status();
    for (unsigned k = 0; k < sc.conns.size(); ++k) {
      const Conn& c = sc.conns[k];
      const auto t = transcript(plat, c.cfg.ip, c.cfg.port);
      SCOPED_TRACE("segments " + std::to_string(shapes[k].segs) + "\n" + dump(t));
      expect_request_matches(c);
      expect_rejected_as_planned(sc, c);
      // the request's segments reached the port, in order
      size_t req_segs = 0;
      for (const auto& w : t) {
        if (w.to_bouncer && !w.seg.payload.empty()) ++req_segs;
      }
      EXPECT_EQ(req_segs, shapes[k].segs);
      // one ACK per request segment, ack = the segment's end, before the reject
      std::vector<uint32_t> data_ends, acks;
      for (const auto& w : t) {
        if (w.to_bouncer && !w.seg.payload.empty()) data_ends.push_back(w.seg.end());
        if (!w.to_bouncer && w.seg.mpa_reply()) break;
        if (!w.to_bouncer && w.seg.bare(kAck)) acks.push_back(w.seg.ack);
      }
      EXPECT_EQ(acks, data_ends);
      EXPECT_EQ(c.terminals,
                std::vector<R::AeqEvent>{expected_terminal(pers(), R::FinPolicy::IRDMA)});
    }
    EXPECT_EQ(reg(hal, R::reg::STAT_MPA_REQ), sc.conns.size());
    EXPECT_EQ(reg(hal, R::reg::STAT_MPA_ERR), 0u);
    expect_clean_end(sc);
    ct.wants = pcap_wants(sc);
  });
}

// ------------------------------------------------------------------ listeners, AEQ

// A wildcard listener (0.0.0.0:port, AUTO_REJECT ALL) and an exact one (10.0.0.1:port, host):
// the exact listener wins for its address, the wildcard takes every other local address.
TEST_P(SystemCmPeer, ExactListenerWinsOverWildcard) {
  CmTest ct{.cfg = platform_config(width()), .listen = std::nullopt};
  ct.run([&](sim::Platform& plat, bouncer::hal::Device& hal, Device&, Cm& cm, Scenario& sc) {
    const auto tmpl = text_pd("wildcard says no", 16);
    auto wl = listen_options();
    wl.auto_reject = R::AutoReject::ALL;
    wl.template_pd = to_bytes(tmpl);
    auto lw = cm.listen(0, kPort, wl);
    ASSERT_TRUE(lw.ok()) << lw.error().message;
    auto le = cm.listen(kLocalIp, kPort, listen_options());
    ASSERT_TRUE(le.ok()) << le.error().message;
    for (unsigned i = 0; i < 4; ++i) {
      auto pc = peer_config(i, 2, true, text_pd("which listener?", 15), kPort, pers());
      const bool exact = i % 2 == 0;
      if (!exact) pc.peer_ip = kLocalIp + 1 + i;  // another address of ours
      const size_t k = sc.add(pc, hal.now_cycles() + 100 + 3000 * i,
                              exact ? to_bytes(text_pd("exact says no", 13)) : to_bytes(tmpl));
      sc.conns[k].hold = !exact;
    }
    ASSERT_TRUE(sc.settle(2'000'000)) << sc.status();
    for (unsigned i = 0; i < 4; ++i) {
      const Conn& c = sc.conns[i];
      SCOPED_TRACE(dump(transcript(plat, c.cfg.ip, c.cfg.port)));
      expect_rejected_as_planned(sc, c);
      if (i % 2 == 0) {
        expect_request_matches(c);
        EXPECT_EQ(c.requests[0].listener, *le);
      } else {
        EXPECT_TRUE(c.requests.empty());
        ct.wants[{c.cfg.ip, c.cfg.port}] = {tmpl, true};
        // our frames come from the address the initiator connected to
        const auto tr = transcript(plat, c.cfg.ip, c.cfg.port);  // outlives the pointers
        for (const auto* w : tx_only(tr)) {
          EXPECT_EQ(w->seg.src_ip, c.cfg.peer_ip);
        }
      }
    }
    EXPECT_EQ(reg(hal, R::reg::STAT_REJECT_AUTO), 2u);
    EXPECT_EQ(reg(hal, R::reg::STAT_REJECT_HOST), 2u);
    expect_clean_end(sc);
    for (const auto& [k, v] : pcap_wants(sc)) ct.wants[k] = v;
  });
}

// A 4-entry AEQ (3 events) and a host that looks away while 12 requests arrive: the engine
// hands the host only what the ring can hold with the terminal events it will owe (one
// request: its CONNECT_REQUEST and its end), never waits for room (STATUS.AEQ_FULL stays 0),
// and auto-rejects the other 11 with the listener's template while the host is away
// (STAT_AEQ_REFUSED). The host's request ends with exactly one terminal event. (The IRDMA
// policy's reject + FIN costs siw the PD: asserted.)
TEST_P(SystemCmPeer, AeqWithoutRoomRefusesInsteadOfStalling) {
  auto lo = listen_options(R::FinPolicy::IRDMA);
  const auto tmpl = text_pd("busy", 12);
  lo.template_pd = to_bytes(tmpl);
  CmTest ct{.cfg = platform_config(width()), .dc = device_config(8), .listen = lo};
  ct.dc.aeq_entries = 4;
  ct.dc.aeq_head_batch = 1;
  ct.run([&](sim::Platform& plat, bouncer::hal::Device& hal, Device& dev, Cm&, Scenario& sc) {
    for (unsigned i = 0; i < 12; ++i) {
      auto pc =
          peer_config(i, 2, true, text_pd("queue #" + std::to_string(i), 20 + i), kPort, pers());
      pc.rto_cycles = kRto;
      pc.max_retransmits = 12;
      // the first request reaches the host; the others get the template
      const auto pd = i == 0 ? to_bytes(text_pd("no #", 4)) : to_bytes(tmpl);
      const size_t k = sc.add(pc, hal.now_cycles() + 100 + 300 * i, pd);
      sc.conns[k].expect_lost = pers() == peer::Personality::kSiw;
    }
    hal.wait_cycles(60'000);  // the host is busy elsewhere
    EXPECT_EQ(reg(hal, R::reg::STATUS) & (1u << 5), 0u) << "STATUS.AEQ_FULL: the CM waited";
    EXPECT_EQ(reg(hal, R::reg::STAT_AEQ_REFUSED), 11u);
    EXPECT_EQ(reg(hal, R::reg::STAT_REJECT_AUTO), 11u);
    ASSERT_TRUE(sc.settle(6'000'000)) << sc.status();
    for (const auto& c : sc.conns) {
      SCOPED_TRACE(dump(transcript(plat, c.cfg.ip, c.cfg.port)));
      expect_rejected_as_planned(sc, c);
      if (&c == &sc.conns.front()) {
        expect_request_matches(c);
        EXPECT_EQ(c.terminals,
                  std::vector<R::AeqEvent>{expected_terminal(pers(), R::FinPolicy::IRDMA)});
      } else {
        EXPECT_TRUE(c.requests.empty());
        EXPECT_TRUE(c.terminals.empty());
      }
    }
    EXPECT_EQ(reg(hal, R::reg::STAT_EVENTS), 2u);
    std::printf("[ stats    ] %s\n", stats_line(dev).c_str());
    expect_clean_end(sc);
    for (const auto& c : sc.conns) {
      ct.wants[{c.cfg.ip, c.cfg.port}] = {to_u8(c.reject_pd), c.cfg.mpa_rev == 2 && c.cfg.enhanced};
    }
  });
}

// ------------------------------------------------------------------ latency

// Latency figures of the passive CM, measured at the ports (simulated cycles):
//  a. SYN: last byte into RX -> first SYN-ACK byte on TX;
//  b. MPA request: last byte into RX -> the AEQE in host memory (polled every cycle);
//  c. host: AEQE in memory -> reject doorbell (driver, in simulation) -> first reject byte,
//     the CQE's latency field being doorbell -> first byte;
//  d. auto-reject: last request byte into RX -> first reject byte.
TEST_P(SystemCm, Latency) {
  const auto cfg = platform_config(GetParam());
  struct Row {
    std::string what;
    uint64_t syn_synack, req_event, event_db, db_first, cqe_latency, req_reject;
  };
  std::vector<Row> rows;
  PcapWants wants;
  {
    sim::Platform plat(cfg);
    with_cm(plat, device_config(), [&](bouncer::hal::Device& hal, Device& dev, Cm& cm) {
      ASSERT_TRUE(cm.listen(kLocalIp, kPort, listen_options()).ok());
      auto alo = listen_options();
      alo.auto_reject = R::AutoReject::ALL;
      alo.template_pd = to_bytes(text_pd("auto", 16));
      ASSERT_TRUE(cm.listen(kLocalIp, kPort2, alo).ok());
      Scenario sc(plat, hal, dev, cm);
      const uint64_t aeq = dev.aeq().device_addr();
      struct Case {
        std::string name;
        uint16_t port;
        uint8_t rev;
        size_t req_pd, rej_pd;
        bool push;
      };
      const Case cases[] = {{"host rev1 pd 0/0", kPort, 1, 0, 0, false},
                            {"host rev2 pd 16/16 inline", kPort, 2, 16, 16, false},
                            {"host rev2 pd 16/16 push", kPort, 2, 16, 16, true},
                            {"host rev2 pd 200/200 dma", kPort, 2, 200, 200, false},
                            {"host rev2 pd 508/255", kPort, 2, 508, 255, false},
                            {"auto rev2 pd 16/16", kPort2, 2, 16, 16, false}};
      unsigned i = 0;
      for (const auto& k : cases) {
        SCOPED_TRACE(k.name);
        // PD_Length 259 (255 + the word) is past siw's and cxgb4's limit: irdma takes it
        auto pc =
            peer_config(i, k.rev, true, text_pd("latency", k.req_pd), k.port,
                        k.rej_pd > 252 ? std::optional(peer::Personality::kIrdma) : std::nullopt);
        RejectOptions o;
        o.push = k.push && dev.caps().push;
        const size_t ci = sc.add(pc, hal.now_cycles() + 50, to_bytes(text_pd("no", k.rej_pd)), o);
        sc.conns[ci].hold = true;
        Row row{k.name, 0, 0, 0, 0, 0, 0};
        const bool host = k.port == kPort;
        uint64_t event_cycle = 0;
        if (host) {
          // the AEQE's VALID bit (byte 31, bit 7 of the slot) at the ring's polarity
          const uint8_t pol = dev.aeq().polarity();
          const uint64_t slot = aeq + 32ull * dev.aeq().head();
          const uint64_t until = hal.now_cycles() + 500'000;
          while (hal.now_cycles() < until) {
            auto m = plat.host_memory(slot, 32);
            ASSERT_EQ(m.size(), 32u);
            if (((std::to_integer<uint8_t>(m[31]) >> 7) & 1) == pol) break;
            hal.wait_cycles(1);
          }
          event_cycle = hal.now_cycles();
          ASSERT_TRUE(sc.pump([&] { return !sc.conns[ci].requests.empty(); }, 100'000));
          Conn& c = sc.conns[ci];
          sc.reject(c);
          ASSERT_TRUE(c.completion.has_value()) << c.reject_error->message;
          row.cqe_latency = c.completion->latency_cycles;
        }
        ASSERT_TRUE(sc.settle(2'000'000)) << sc.status();
        const auto t = transcript(plat, pc.ip, pc.port);
        SCOPED_TRACE(dump(t));
        uint64_t syn_last = 0, synack_first = 0, req_last = 0, rej_first = 0;
        for (const auto& w : t) {
          if (w.to_bouncer && w.seg.flags == kSyn && !syn_last) syn_last = w.last;
          if (!w.to_bouncer && w.seg.flags == (kSyn | kAck) && !synack_first)
            synack_first = w.first;
          if (w.to_bouncer && !w.seg.payload.empty()) req_last = w.last;
          if (!w.to_bouncer && w.seg.mpa_reply() && !rej_first) rej_first = w.first;
        }
        ASSERT_TRUE(syn_last && synack_first && req_last && rej_first);
        row.syn_synack = synack_first - syn_last;
        row.req_reject = rej_first - req_last;
        if (host) {
          row.req_event = event_cycle - req_last;
          const auto& w = plat.mmio_writes();
          const uint32_t db = o.push ? R::reg::SQ_PUSH_DB : R::reg::SQ_DB;
          uint64_t db_cycle = 0;
          for (auto it = w.rbegin(); it != w.rend(); ++it) {
            if (it->offset == db && it->cycle < rej_first) {
              db_cycle = it->cycle;
              break;
            }
          }
          ASSERT_NE(db_cycle, 0u);
          row.event_db = db_cycle - event_cycle;
          row.db_first = rej_first - db_cycle;
          EXPECT_EQ(row.cqe_latency, row.db_first) << "CQE latency field vs the port";
        }
        // sanity bounds (deterministic simulated cycles; generous)
        EXPECT_LT(row.syn_synack, 200u) << "SYN -> SYN-ACK";
        if (host) {
          // PD DMA write + AEQE write, each a host-memory latency (200 cycles)
          EXPECT_LT(row.req_event, 1500u) << "request -> event in memory";
          EXPECT_LT(row.db_first, 1000u) << "doorbell -> first reject byte";
        } else {
          EXPECT_LT(row.req_reject, 1000u) << "request -> auto-reject (template DMA read)";
        }
        rows.push_back(row);
        ++i;
      }
      expect_clean_end(sc);
      wants = pcap_wants(sc);
      for (const auto& c : sc.conns) {
        if (c.cfg.peer_port == kPort2) {
          wants[{c.cfg.ip, c.cfg.port}] = {text_pd("auto", 16), c.cfg.enhanced};
        }
      }
    });
  }
  std::printf("\n[ latency  ] w%u, cycles at %.0f MHz (host memory latency %" PRIu64 ")\n",
              GetParam(), cfg.clock_mhz, cfg.mem_latency_cycles);
  std::printf("[ latency  ] %-26s %10s %10s %10s %10s %10s %12s\n", "case", "SYN>SYNACK",
              "req>AEQE", "AEQE>db", "db>reject", "CQE.lat", "req>reject");
  for (const auto& r : rows) {
    auto v = [](uint64_t x) { return x ? std::to_string(x) : std::string("-"); };
    std::printf("[ latency  ] %-26s %10s %10s %10s %10s %10s %12s\n", r.what.c_str(),
                v(r.syn_synack).c_str(), v(r.req_event).c_str(), v(r.event_db).c_str(),
                v(r.db_first).c_str(), v(r.cqe_latency).c_str(), v(r.req_reject).c_str());
  }
  check_pcap(cfg.pcap_path, wants);
}

INSTANTIATE_TEST_SUITE_P(Width, SystemCm, ::testing::Values(64u, 512u), width_name);
INSTANTIATE_TEST_SUITE_P(WidthPersonality, SystemCmPeer,
                         ::testing::Combine(::testing::Values(64u, 512u),
                                            ::testing::ValuesIn(kPersonalities)),
                         width_personality_name);

}  // namespace

// libsystemc provides main() and calls sc_main().
extern "C" int sc_main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
