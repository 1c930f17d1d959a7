// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// What a reject puts on the wire, against the rules real initiators hold it to (the real
// driver, the verilated core and simulated initiators, as in test_system_cm.cpp):
//  - a retransmitted reject repeats the first transmission's bytes, whatever became of the
//    PD's source (a listener template replaced, an inline WQE whose slot was overwritten, a
//    PD_ADDR buffer other than the node's slot);
//  - the hardware refuses an IRD/ORD word an irdma initiator would answer with a RST, and
//    replaces a template word that does not fit a request by its default word;
//  - the peer's MSS and window-scale option are kept in the node;
//  - a request that arrives in pieces must be whole within MPA_REASM_TIMEOUT.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "system_fixture.hpp"

using namespace std::chrono_literals;

namespace {

using namespace systest;

class SystemRejectWire : public ::testing::TestWithParam<unsigned> {};

// MPA replies Bouncer sent to one peer, in order (retransmissions included).
std::vector<std::vector<uint8_t>> replies_to(const sim::Platform& plat, uint32_t ip,
                                             uint16_t port) {
  std::vector<std::vector<uint8_t>> out;
  for (const auto& w : transcript(plat, ip, port)) {
    if (!w.to_bouncer && w.seg.mpa_reply()) out.push_back(w.bytes);
  }
  return out;
}

// Loses every frame from a peer to Bouncer while `*lose` is set and an MPA reply has gone out
// to that peer: its ACKs (and FINs) of the reject, so that Bouncer retransmits it.
sim::DropHook lose_after_reply(std::shared_ptr<bool> lose) {
  auto replied = std::make_shared<std::set<std::pair<uint32_t, uint16_t>>>();
  return [lose, replied](sim::Direction d, const std::vector<uint8_t>& f, uint64_t) {
    auto s = decode(f);
    if (!s) return false;
    if (d == sim::Direction::kFromBouncer) {
      if (s->mpa_reply()) replied->insert({s->dst_ip, s->dport});
      return false;
    }
    return *lose && replied->count({s->src_ip, s->sport}) != 0;
  };
}

std::vector<std::byte> bytes_of(const std::string& s) {
  return to_bytes(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(s.data()), s.size()));
}

// An auto-reject is retransmitted after its listener was destroyed and its index re-created
// with another template (other bytes, another length): the retransmission carries the first
// transmission's bytes, which the engine copied into the node's slot.
TEST_P(SystemRejectWire, RetransmittedAutoRejectRepeatsItsFirstBytes) {
  sim::Platform plat(platform_config(GetParam(), /*pcap=*/false));
  auto lose = std::make_shared<bool>(true);
  plat.set_drop_hook(lose_after_reply(lose));
  with_cm(plat, device_config(), [&](bouncer::hal::Device& hal, Device& dev, Cm& cm) {
    auto lo = listen_options();
    lo.auto_reject = R::AutoReject::ALL;
    lo.index = 3;
    lo.template_pd = bytes_of("first template: these bytes go out once and again");
    ASSERT_TRUE(cm.listen(kLocalIp, kPort, lo).ok());
    Scenario sc(plat, hal, dev, cm);
    auto pc = peer_config(0, 2, true, text_pd("retransmit me", 13));
    pc.peer_port = kPort;
    sc.add(pc, hal.now_cycles() + 100);
    ASSERT_TRUE(sc.pump([&] { return replies_to(plat, pc.ip, pc.port).size() == 1; }, 400'000));

    ASSERT_TRUE(cm.destroy_listener(bouncer::ListenerId{3}).ok());
    lo.template_pd = bytes_of("second template, another length");
    ASSERT_TRUE(cm.listen(kLocalIp, kPort, lo).ok());
    ASSERT_TRUE(sc.pump([&] { return replies_to(plat, pc.ip, pc.port).size() == 2; }, 400'000))
        << "no retransmission";
    *lose = false;
    ASSERT_TRUE(sc.settle(2'000'000)) << sc.status();

    const auto r = replies_to(plat, pc.ip, pc.port);
    ASSERT_GE(r.size(), 2u);
    for (size_t i = 1; i < r.size(); ++i) {
      EXPECT_EQ(hex(r[i], 200), hex(r[0], 200)) << "retransmission " << i;
    }
    const auto& out = plat.peer(0).outcome();
    EXPECT_TRUE(out.rejected);
    EXPECT_EQ(to_bytes(out.reject_pd),
              bytes_of("first template: these bytes go out once and again"));
    EXPECT_GE(reg(hal, R::reg::STAT_RTX), 1u);
  });
}

// A host reject with inline PD: the driver also writes the slot, and a host that later
// scribbles over the slot (here: right after posting, before the engine ran) does not change
// what a retransmission sends, because the engine writes the slot from what it sent.
TEST_P(SystemRejectWire, RetransmittedInlineRejectRepeatsItsFirstBytes) {
  sim::Platform plat(platform_config(GetParam(), /*pcap=*/false));
  auto lose = std::make_shared<bool>(true);
  plat.set_drop_hook(lose_after_reply(lose));
  with_cm(plat, device_config(), [&](bouncer::hal::Device& hal, Device& dev, Cm& cm) {
    ASSERT_TRUE(cm.listen(kLocalIp, kPort, listen_options()).ok());
    Scenario sc(plat, hal, dev, cm);
    auto pc = peer_config(1, 2, true, text_pd("inline please", 13));
    const size_t k = sc.add(pc, hal.now_cycles() + 100);
    sc.conns[k].hold = true;
    ASSERT_TRUE(sc.pump([&] { return sc.conns[k].cm_id.has_value(); }, 400'000));
    const uint32_t id = *sc.conns[k].cm_id;
    const auto pd = bytes_of("24 bytes inline in WQE.");
    auto posted = cm.post_reject(sc.conns[k].handle, pd);
    ASSERT_TRUE(posted.ok()) << posted.error().message;
    auto slot = plat.host_memory(dev.pd_area_addr(id), pd.size());
    std::fill(slot.begin(), slot.end(), std::byte{0xEE});
    auto e = cm.wait_event(1600us);
    ASSERT_TRUE(e.ok()) << e.error().message;
    const auto* rc = std::get_if<bouncer::RejectComplete>(&*e);
    ASSERT_NE(rc, nullptr) << bouncer::event_name(*e);
    ASSERT_TRUE(rc->completion.ok()) << rc->completion.status();
    ASSERT_TRUE(sc.pump([&] { return replies_to(plat, pc.ip, pc.port).size() == 2; }, 400'000))
        << "no retransmission";
    *lose = false;
    ASSERT_TRUE(sc.settle(2'000'000)) << sc.status();
    const auto r = replies_to(plat, pc.ip, pc.port);
    ASSERT_GE(r.size(), 2u);
    EXPECT_EQ(hex(r[1], 200), hex(r[0], 200));
    EXPECT_EQ(to_bytes(plat.peer(k).outcome().reject_pd), pd);
    EXPECT_EQ(to_u8(dev.pd_area_slot(id).first(pd.size())), to_u8(pd)) << "slot written back";
  });
}

// A raw WQE whose PD_ADDR is a buffer of its own (not the node's slot, which holds other
// bytes): the first transmission reads the buffer, and the retransmission repeats it.
TEST_P(SystemRejectWire, RetransmittedRejectFromAnotherBufferRepeatsItsFirstBytes) {
  sim::Platform plat(platform_config(GetParam(), /*pcap=*/false));
  auto lose = std::make_shared<bool>(true);
  plat.set_drop_hook(lose_after_reply(lose));
  with_cm(plat, device_config(), [&](bouncer::hal::Device& hal, Device& dev, Cm& cm) {
    ASSERT_TRUE(cm.listen(kLocalIp, kPort, listen_options()).ok());
    Scenario sc(plat, hal, dev, cm);
    auto pc = peer_config(2, 2, true, text_pd("elsewhere", 9));
    const size_t k = sc.add(pc, hal.now_cycles() + 100);
    sc.conns[k].hold = true;
    ASSERT_TRUE(sc.pump([&] { return sc.conns[k].cm_id.has_value(); }, 400'000));
    const uint32_t id = *sc.conns[k].cm_id;

    const std::vector<uint8_t> mine =
        text_pd("from a buffer of the caller's own, 70 bytes long", 70);
    auto buf = hal.alloc_dma(512, 64);
    ASSERT_TRUE(buf.ok());
    std::copy(mine.begin(), mine.end(), reinterpret_cast<uint8_t*>((*buf)->bytes().data()));
    (*buf)->sync_to_device(0, mine.size());
    const auto slot_pd = bytes_of("the slot holds these other bytes");
    bouncer::testing::FaultyRejectWqe w;
    w.cm_id = id;
    w.pd = slot_pd;  // what the driver writes into the slot
    w.pd_area = true;
    w.allow_inline = false;
    w.pd_addr = (*buf)->device_addr();
    w.pd_len = static_cast<uint16_t>(mine.size());
    auto idx = bouncer::testing::DeviceFaults::post_reject(dev, w);
    ASSERT_TRUE(idx.ok()) << idx.error().message;
    auto c = dev.wait_completion_for(*idx, 1600us);
    ASSERT_TRUE(c.ok()) << c.error().message;
    ASSERT_TRUE(c->ok()) << c->status();
    // the caller may reuse its buffer once the reject completed
    std::fill((*buf)->bytes().begin(), (*buf)->bytes().end(), std::byte{0x55});
    (*buf)->sync_to_device(0, 512);
    ASSERT_TRUE(sc.pump([&] { return replies_to(plat, pc.ip, pc.port).size() == 2; }, 400'000, {}))
        << "no retransmission";
    *lose = false;
    ASSERT_TRUE(sc.pump([&] { return plat.peers_finished() && dev.cm_conns() == 0; }, 2'000'000))
        << sc.status();
    const auto r = replies_to(plat, pc.ip, pc.port);
    ASSERT_GE(r.size(), 2u);
    EXPECT_EQ(hex(r[1], 200), hex(r[0], 200));
    EXPECT_EQ(plat.peer(k).outcome().reject_pd, mine);
  });
}

// The hardware refuses an IRD/ORD word that irdma's negotiation would answer with a RST
// (WQE/BAD_IRD_ORD, nothing sent, the request still held), the driver refuses it before
// posting, and a good word goes through.
TEST_P(SystemRejectWire, HardwareRefusesAnIrdOrdWordIrdmaWouldReset) {
  sim::Platform plat(platform_config(GetParam(), /*pcap=*/false));
  with_cm(plat, device_config(), [&](bouncer::hal::Device& hal, Device& dev, Cm& cm) {
    ASSERT_TRUE(cm.listen(kLocalIp, kPort, listen_options()).ok());
    Scenario sc(plat, hal, dev, cm);
    auto pc = peer_config(3, 2, true, text_pd("ird", 3));
    pc.ird_ord = ird_ord_word(8, 8);  // the initiator's IRD is 8
    const size_t k = sc.add(pc, hal.now_cycles() + 100);
    sc.conns[k].hold = true;
    ASSERT_TRUE(sc.pump([&] { return sc.conns[k].cm_id.has_value(); }, 400'000));
    const uint32_t id = *sc.conns[k].cm_id;
    const size_t frames = plat.tx_frames().size();
    for (uint32_t bad : {0x00104010u, 0x80100010u, 0x80104009u, 0x80004001u}) {
      SCOPED_TRACE(fmt::format("word 0x{:08X}", bad));
      bouncer::RejectWqe w;
      w.cm_id = id;
      w.pd_area = true;
      w.ird_ord = bad;
      auto idx = dev.post_reject(w);
      ASSERT_TRUE(idx.ok()) << idx.error().message;
      auto c = dev.wait_completion_for(*idx, 1600us);
      ASSERT_TRUE(c.ok()) << c.error().message;
      EXPECT_EQ(c->major, static_cast<uint16_t>(R::CqMajor::WQE));
      EXPECT_EQ(c->minor, static_cast<uint16_t>(R::CqMinor::BAD_IRD_ORD)) << c->status();
      RejectOptions o;
      o.ird_ord = bad;
      auto r = cm.reject(sc.conns[k].handle, {}, o);
      ASSERT_FALSE(r.ok());
      EXPECT_EQ(r.error().code, bouncer::Errc::kInvalidArgument);
    }
    EXPECT_EQ(plat.tx_frames().size(), frames) << "nothing went out";
    auto node = dev.cqp_read_node(id);
    ASSERT_TRUE(node.ok());
    EXPECT_EQ(node->state, R::CmState::MPAREQ_RCVD);
    EXPECT_FALSE(node->ctx.rejected);
    // ORD 8 = the initiator's IRD; a 0x3FFF field skips the numbers
    RejectOptions o;
    o.ird_ord = 0x80084008u;
    sc.conns[k].opts = o;
    sc.conns[k].reject_pd = bytes_of("good word");
    sc.reject(sc.conns[k]);
    ASSERT_TRUE(sc.conns[k].completion.has_value());
    ASSERT_TRUE(sc.settle(2'000'000)) << sc.status();
    EXPECT_EQ(plat.peer(k).outcome().reply_ird_ord, std::optional<uint32_t>(0x80084008u));
  });
}

// A listener's template IRD/ORD word goes out where it fits the request; for an initiator
// whose IRD is below the word's ORD, the hardware sends its default word instead.
TEST_P(SystemRejectWire, TemplateWordThatDoesNotFitIsReplacedByTheDefault) {
  sim::Platform plat(platform_config(GetParam(), /*pcap=*/false));
  with_cm(plat, device_config(), [&](bouncer::hal::Device& hal, Device& dev, Cm& cm) {
    auto lo = listen_options();
    lo.auto_reject = R::AutoReject::ALL;
    lo.template_pd = bytes_of("template");
    lo.template_ird_ord = ird_ord_word(4, 20);  // ORD 20
    ASSERT_TRUE(cm.listen(kLocalIp, kPort, lo).ok());
    Scenario sc(plat, hal, dev, cm);
    auto big = peer_config(4, 2, true, {});
    big.ird_ord = ird_ord_word(64, 64);
    auto small = peer_config(5, 2, true, {});
    small.ird_ord = ird_ord_word(16, 16);
    const size_t a = sc.add(big, hal.now_cycles() + 100);
    const size_t b = sc.add(small, hal.now_cycles() + 3000);
    ASSERT_TRUE(sc.settle(2'000'000)) << sc.status();
    EXPECT_EQ(plat.peer(a).outcome().reply_ird_ord, lo.template_ird_ord);
    EXPECT_EQ(plat.peer(b).outcome().reply_ird_ord, std::optional<uint32_t>(0xBFFF7FFFu));
    EXPECT_TRUE(plat.peer(a).outcome().rejected && plat.peer(b).outcome().rejected);
    EXPECT_EQ(to_bytes(plat.peer(b).outcome().reject_pd), lo.template_pd);
  });
}

// The node keeps the peer's MSS (536 without the option, at least 48) and whether its SYN
// had a window-scale option; our window field is then TCP_WND scaled.
TEST_P(SystemRejectWire, PeerMssAndWindowScaleAreKept) {
  sim::Platform plat(platform_config(GetParam(), /*pcap=*/false));
  with_cm(plat, device_config(), [&](bouncer::hal::Device& hal, Device& dev, Cm& cm) {
    ASSERT_TRUE(cm.listen(kLocalIp, kPort, listen_options()).ok());
    Scenario sc(plat, hal, dev, cm);
    struct Want {
      uint16_t mss;
      uint16_t kept;
    } const wants[] = {{1000, 1000}, {600, 600}, {20, 48}};
    std::vector<size_t> ks;
    for (unsigned i = 0; i < std::size(wants); ++i) {
      auto pc = peer_config(6 + i, 2, true, {});
      pc.mss = wants[i].mss;
      ks.push_back(sc.add(pc, hal.now_cycles() + 100 + 3000 * i));
      sc.conns[ks.back()].hold = true;
    }
    ASSERT_TRUE(sc.pump(
        [&] {
          for (size_t k : ks) {
            if (!sc.conns[k].cm_id) return false;
          }
          return true;
        },
        800'000));
    for (unsigned i = 0; i < std::size(wants); ++i) {
      auto n = dev.cqp_read_node(*sc.conns[ks[i]].cm_id);
      ASSERT_TRUE(n.ok());
      EXPECT_EQ(n->ctx.peer_mss, wants[i].kept) << "MSS option " << wants[i].mss;
      EXPECT_TRUE(n->ws_ok);
      EXPECT_EQ(n->ctx.rcv_wnd, Expect{}.wnd_field());
      sc.reject(sc.conns[ks[i]]);
    }
    ASSERT_TRUE(sc.settle(2'000'000)) << sc.status();
  });
}

// A request in two pieces whose second never arrives: the node is reset MPA_REASM_TIMEOUT
// after the first piece, long before MPA_TIMEOUT.
TEST_P(SystemRejectWire, SplitRequestMustBeWholeWithinTheReassemblyTimeout) {
  sim::Platform plat(platform_config(GetParam(), /*pcap=*/false));
  auto dc = device_config();
  dc.timers->mpa_timeout = 4'000'000 / kTick;
  dc.timers->mpa_reasm_timeout = 40'000 / kTick;
  // the second piece and its retransmissions are lost
  plat.set_drop_hook([](sim::Direction d, const std::vector<uint8_t>& f, uint64_t) {
    if (d != sim::Direction::kToBouncer) return false;
    auto s = decode(f);
    return s && !s->payload.empty() && !s->mpa_request();
  });
  with_cm(plat, dc, [&](bouncer::hal::Device& hal, Device& dev, Cm& cm) {
    ASSERT_TRUE(cm.listen(kLocalIp, kPort, listen_options()).ok());
    Scenario sc(plat, hal, dev, cm);
    auto pc = peer_config(9, 2, true, text_pd("a request in two pieces", 40));
    pc.request_segments = 2;
    pc.reply_timeout_cycles = 0;
    sc.add(pc, hal.now_cycles() + 100);
    ASSERT_TRUE(sc.pump([&] { return reg(hal, R::reg::STAT_MPA_TIMEOUT) == 1; }, 1'000'000))
        << "no reset within the reassembly timeout";
    uint64_t first_piece = 0, rst = 0;
    for (const auto& w : transcript(plat, pc.ip, pc.port)) {
      if (w.to_bouncer && w.seg.mpa_request() && first_piece == 0) first_piece = w.last;
      if (!w.to_bouncer && w.seg.has(kRst)) rst = w.first;
    }
    ASSERT_NE(first_piece, 0u);
    ASSERT_NE(rst, 0u);
    const uint64_t reasm = uint64_t{dc.timers->mpa_reasm_timeout} * kTick;
    EXPECT_GE(rst - first_piece, reasm);
    EXPECT_LT(rst - first_piece, reasm + 20'000) << "reset long after the reassembly deadline";
    EXPECT_EQ(dev.cm_conns(), 0u);
    EXPECT_EQ(cm.stats().requests, 0u) << "the host never saw the request";
  });
}

// A reject longer than the peer's MSS goes out as MSS-sized segments (RFC 9293 3.7.1), each
// byte for byte the golden model's; a retransmission resends them all, byte-identical. siw and
// cxgb4 reassemble them through their TCP stacks (irdma does not, but it never announces an
// MSS below 536, so a reject, at most 532 bytes, always fits its segments).
TEST_P(SystemRejectWire, RejectLongerThanThePeersMssGoesOutInSegments) {
  sim::Platform plat(platform_config(GetParam(), /*pcap=*/true));
  auto lose = std::make_shared<bool>(true);
  plat.set_drop_hook(lose_after_reply(lose));
  with_cm(plat, device_config(), [&](bouncer::hal::Device& hal, Device& dev, Cm& cm) {
    ASSERT_TRUE(cm.listen(kLocalIp, kPort, listen_options()).ok());
    Scenario sc(plat, hal, dev, cm);
    const auto pd = to_bytes(text_pd("a reject cut into the peer's segments, ", 200));
    std::vector<size_t> ks;
    for (auto pers : {peer::Personality::kSiw, peer::Personality::kCxgb4}) {
      auto pc = peer_config(30 + static_cast<unsigned>(ks.size()), 2, true, text_pd("small", 5));
      pc.personality = pers;
      pc.mss = 100;
      ks.push_back(sc.add(pc, hal.now_cycles() + 100 + 5000 * ks.size(), pd));
    }
    ASSERT_TRUE(sc.pump(
        [&] {
          for (size_t k : ks) {
            size_t n = 0;  // Bouncer's segments with payload: the three, and their retransmission
            for (const auto& w : transcript(plat, sc.conns[k].cfg.ip, sc.conns[k].cfg.port)) {
              n += !w.to_bouncer && !w.seg.payload.empty();
            }
            if (n < 6) return false;
          }
          return true;
        },
        800'000))
        << "no retransmission\n"
        << dump(transcript(plat, sc.conns[ks[0]].cfg.ip, sc.conns[ks[0]].cfg.port));
    *lose = false;
    ASSERT_TRUE(sc.settle(3'000'000)) << sc.status();
    for (size_t k : ks) {
      const Conn& c = sc.conns[k];
      SCOPED_TRACE(peer::to_string(c.cfg.personality));
      Expect ex;
      ex.peer = c.cfg;
      ex.req_len = request_len(c.cfg);
      const auto t = transcript(plat, c.cfg.ip, c.cfg.port);
      std::vector<std::vector<uint8_t>> data;  // Bouncer's segments with payload
      for (const auto& w : t) {
        if (!w.to_bouncer && !w.seg.payload.empty()) data.push_back(w.bytes);
        if (!w.to_bouncer && w.seg.flags == (kSyn | kAck)) {
          ex.iss = w.seg.seq;
          ex.ip_id0 = w.seg.ip_id;
        }
      }
      auto rp = ex.reject_params(c.reject_pd, false, std::nullopt);
      const auto want = golden::build_mpa_reject_segments(rp, 100);
      ASSERT_EQ(want.size(), 3u);  // 20 + 4 + 200 bytes: 100, 100, 24
      ASSERT_GE(data.size(), 6u);
      for (size_t i = 0; i < 3; ++i) {
        EXPECT_EQ(hex(data[i], 200), hex(want[i], 200)) << "segment " << i;
        EXPECT_EQ(hex(data[3 + i], 200), hex(want[i], 200)) << "retransmitted segment " << i;
      }
      ASSERT_TRUE(c.completion.has_value());
      EXPECT_EQ(c.completion->frame_len, want[0].size()) << "the first segment's length";
      const auto& out = plat.peer(c.peer).outcome();
      EXPECT_TRUE(out.rejected);
      EXPECT_EQ(to_bytes(out.reject_pd), c.reject_pd);
    }
  });
}

INSTANTIATE_TEST_SUITE_P(Width, SystemRejectWire, ::testing::Values(64u, 512u), width_name);

}  // namespace

// libsystemc provides main() and calls sc_main().
extern "C" int sc_main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
