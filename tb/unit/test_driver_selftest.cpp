// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// The loopback self-test's logic (hostsw/device/selftest.cpp) against the fake hardware.
//
// LoopFake adds to FakeHal what the self-test depends on and FakeHal does not model: the TX
// counters, CTRL.LOOPBACK (a transmitted frame re-enters RX), the CM engine's answer to a
// segment for no connection on a listening port (RST|ACK, which loops back too and is
// dropped), and the write-back of a host-written context after its reject (STATE,
// REJ_PD_LEN). Faults are knobs, so each failure the self-test must report is provoked.
// The real RTL is checked by tb/system/test_system_selftest.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "bouncer/device.hpp"
#include "bouncer/selftest.hpp"
#include "test_driver_fake_hal.hpp"

using namespace std::chrono_literals;

namespace bouncer {
namespace {

using testing::FakeHal;
namespace r = regs::reg;
namespace x = regs::cm_ctx;

class LoopFake : public FakeHal {
 public:
  // ---- knobs
  bool loop_implemented = true;  // false: LOOPBACK is ignored, frames go to the wire
  bool corrupt_rx = false;       // RX finds a bad checksum in every looped frame
  bool engine_answers = true;    // false: no RST for a segment to a listening port
  unsigned wire_frames = 0;      // frames from the network during the loop (dropped, counted)
  bool stuck_loopback = false;   // CTRL.LOOPBACK cannot be cleared

  // ---- observations
  std::vector<uint32_t> ctrl_writes;
  unsigned wire_tx = 0;  // frames that left on m_axis_tx
  unsigned rst_sent = 0;

  uint32_t read32(uint32_t off) override {
    if (off == r::STAT_TX_FRAMES) return tx_frames_;
    if (off == r::STAT_TX_BYTES) return tx_bytes_;
    if (off == r::CTRL && stuck_loopback) {
      return FakeHal::read32(off) | regs::field::CTRL::LOOPBACK.mask();
    }
    return FakeHal::read32(off);
  }
  void write32(uint32_t off, uint32_t v) override {
    if (off == r::CTRL) {
      ctrl_writes.push_back(v);
      if (regs::field::CTRL::LOOPBACK.get(v) != 0 && loop_implemented) {
        cm_stats[r::STAT_RX_OVERFLOW] += wire_frames;
      }
    }
    FakeHal::write32(off, v);
  }
  void wait_cycles(uint64_t cycles) override {
    FakeHal::wait_cycles(cycles);
    for (; seen_ < frames.size(); ++seen_) transmit(frames[seen_]);
  }
  void preset_tx(uint32_t frames_count, uint32_t bytes) {
    tx_frames_ = frames_count;
    tx_bytes_ = bytes;
  }

 private:
  bool looping() const {
    return loop_implemented && regs::field::CTRL::LOOPBACK.get(reg(r::CTRL)) != 0;
  }
  void count_tx(uint32_t len) {
    ++tx_frames_;
    tx_bytes_ += len;
    if (!looping()) ++wire_tx;
  }
  // A reject the fake SQ engine sent on a host-written context.
  void transmit(const testing::FakeFrame& f) {
    auto& ctx = contexts.at(f.cm_id);
    const bool vlan = regs::get(ctx, x::VLAN_EN) != 0;
    regs::put(ctx, x::STATE,
              static_cast<uint64_t>(f.fin ? regs::CmState::FIN_WAIT1 : regs::CmState::REJ_SENT));
    regs::put(ctx, x::REJ_PD_LEN, f.pd.size());
    ++cm_stats[r::STAT_REJECT_HOST];
    if (f.fin) ++cm_stats[r::STAT_FIN_TX];
    count_tx(14 + (vlan ? 4 : 0) + 40 + 20 + f.wire_pd_len);
    if (!looping()) return;
    ++cm_stats[r::STAT_RX_FRAMES];
    // the looped frame is addressed to the context's remote MAC and IP, never PORT_MAC /
    // PORT_IP (the RTL's destination filters)
    const auto rem_ip = static_cast<uint32_t>(regs::get(ctx, x::REM_IP));
    if (regs::field::CM_ROUTE::PROMISC.get(reg(r::CM_ROUTE)) == 0 ||
        (reg(r::PORT_IP) != 0 && reg(r::PORT_IP) != rem_ip)) {
      ++cm_stats[r::STAT_RX_FILTERED];
      return;
    }
    if (corrupt_rx) {
      ++cm_stats[r::STAT_RX_BAD];
      return;
    }
    // The looped reject is addressed to the context's remote side: a listener there and no
    // connection for the tuple -> RST|ACK, which loops back and is dropped (RST, no node).
    const auto ip = rem_ip;
    const auto port = static_cast<uint16_t>(regs::get(ctx, x::REM_PORT));
    const bool listening = std::any_of(listeners.begin(), listeners.end(), [&](const auto& l) {
      return l && (l->loc_ip == ip || l->loc_ip == 0) && l->loc_port == port;
    });
    if (!listening || !engine_answers) return;
    ++cm_stats[r::STAT_RST_TX];
    ++rst_sent;
    count_tx(std::max(60, 14 + (vlan ? 4 : 0) + 40));
    if (looping()) {  // the RST|ACK comes back: a RST for no connection
      ++cm_stats[r::STAT_RX_FRAMES];
      ++cm_stats[r::STAT_RX_STRAY];
    }
  }

  uint32_t tx_frames_ = 0, tx_bytes_ = 0;
  size_t seen_ = 0;
};

class SelftestTest : public ::testing::Test {
 protected:
  void SetUp() override {
    DeviceConfig cfg;
    cfg.cqp_timeout = 80us;
    auto d = Device::open(hal, cfg);
    ASSERT_TRUE(d) << d.error().message;
    dev = std::move(d).value();
  }
  Result<SelftestReport> run(SelftestOptions o = {}) {
    o.timeout = 200us;
    o.settle_cycles = 1'000;
    return run_loopback_selftest(*dev, o);
  }
  const SelftestCheck* check(const SelftestReport& rep, const std::string& name) {
    for (const auto& c : rep.checks) {
      if (c.name == name) return &c;
    }
    ADD_FAILURE() << "no check named " << name;
    return nullptr;
  }
  void expect_check(const SelftestReport& rep, const std::string& name, const std::string& want,
                    const std::string& got, bool ok) {
    const auto* c = check(rep, name);
    if (c == nullptr) return;
    EXPECT_EQ(c->expected, want) << name;
    EXPECT_EQ(c->actual, got) << name;
    EXPECT_EQ(c->ok, ok) << name;
    if (!ok) {
      EXPECT_FALSE(c->hint.empty()) << name;
    }
  }
  // LOOPBACK was set once and the last CTRL write cleared it, ENABLE kept.
  void expect_restored() {
    ASSERT_FALSE(hal.ctrl_writes.empty());
    EXPECT_EQ(regs::field::CTRL::LOOPBACK.get(hal.ctrl_writes.back()), 0u);
    EXPECT_EQ(regs::field::CTRL::ENABLE.get(hal.ctrl_writes.back()), 1u);
    EXPECT_TRUE(std::any_of(hal.ctrl_writes.begin(), hal.ctrl_writes.end(),
                            [](uint32_t v) { return regs::field::CTRL::LOOPBACK.get(v) != 0; }));
  }

  LoopFake hal;
  std::unique_ptr<Device> dev;
};

TEST_F(SelftestTest, PassesWhenTheLoopBehaves) {
  auto rep = run();
  ASSERT_TRUE(rep) << rep.error().message;
  EXPECT_TRUE(rep->passed()) << rep->failures();
  EXPECT_EQ(rep->failures(), "");
  EXPECT_EQ(rep->backend, "fake");
  EXPECT_EQ(rep->listener, regs::kNumListeners - 1);  // the highest free entry
  EXPECT_EQ(rep->cm_id_a, 63u);                       // ctx_log2 6
  EXPECT_EQ(rep->cm_id_b, 62u);
  EXPECT_TRUE(rep->loopback_restored);
  expect_restored();
  // The predicted frames: 16 B PD + IRD/ORD word, 100 B PD behind a VLAN tag, two RSTs.
  ASSERT_EQ(rep->frames.size(), 4u);
  EXPECT_EQ(rep->frames[0].bytes, 94u);
  EXPECT_EQ(rep->frames[1].bytes, 60u);
  EXPECT_EQ(rep->frames[2].bytes, 178u);
  EXPECT_EQ(rep->frames[3].bytes, 60u);
  expect_check(*rep, "STAT_TX_FRAMES delta", "4", "4", true);
  expect_check(*rep, "STAT_TX_BYTES delta", "392", "392", true);
  expect_check(*rep, "STAT_RX_FRAMES delta", "4", "4", true);
  expect_check(*rep, "STAT_RST_TX delta", "2", "2", true);
  expect_check(*rep, "STAT_PUSH_USED delta", "1", "1", true);
  expect_check(*rep, "STAT_CQP_WQES delta", "5", "5", true);
  expect_check(*rep, "CQE B TCP_SEQ", "0xFFFFFFC0", "0xFFFFFFC0", true);
  // SND_NXT wraps: 0xFFFFFFC0 + 20 + 100 + FIN
  expect_check(*rep, "context B SND_NXT", "0x00000039", "0x00000039", true);
  expect_check(*rep, "context B IP_ID", "0", "0", true);
  expect_check(*rep, "context A STATE", "REJ_SENT", "REJ_SENT", true);
  expect_check(*rep, "context B STATE", "FIN_WAIT1", "FIN_WAIT1", true);
  // What went out: A by the push page with its 16 bytes inline, B by DMA with the FIN.
  ASSERT_EQ(hal.frames.size(), 2u);
  EXPECT_TRUE(hal.frames[0].from_push);
  EXPECT_EQ(hal.frames[0].pd.size(), 16u);
  EXPECT_FALSE(hal.frames[0].fin);
  EXPECT_EQ(hal.frames[0].wire_pd_len, 20u);
  EXPECT_FALSE(hal.frames[1].from_push);
  EXPECT_EQ(hal.frames[1].pd.size(), 100u);
  EXPECT_TRUE(hal.frames[1].fin);
  EXPECT_EQ(hal.wire_tx, 0u);  // nothing left the port
  EXPECT_EQ(hal.rst_sent, 2u);
  // Cleaned up: listener gone, both contexts invalid, the device still usable.
  EXPECT_FALSE(hal.listeners[regs::kNumListeners - 1].has_value());
  for (uint32_t id : {63u, 62u}) {
    EXPECT_EQ(regs::get(hal.contexts.at(id), x::CTX_VALID), 0u);
  }
  EXPECT_EQ(dev->sq_outstanding(), 0u);
  EXPECT_TRUE(dev->cqp_nop());
  const std::string text = format_selftest_report(*rep);
  std::printf("%s", text.c_str());
  EXPECT_NE(text.find("self-test: PASS"), std::string::npos) << text;
  EXPECT_NE(text.find("loopback off again"), std::string::npos) << text;
}

// A port with the destination filters on (CM_ROUTE.PROMISC 0, PORT_IP set): the looped frames
// are not addressed to PORT_MAC / PORT_IP, so the test turns the filters off while it runs and
// restores them.
TEST_F(SelftestTest, MacFilterIsOffDuringTheTestAndRestoredAfter) {
  hal.write32(r::PORT_MAC_LO, 0x22334455);
  hal.write32(r::PORT_MAC_HI, 0x0211);
  hal.write32(r::PORT_IP, 0x0A000001);
  hal.write32(r::CM_ROUTE, 0);
  auto rep = run();
  ASSERT_TRUE(rep) << rep.error().message;
  EXPECT_TRUE(rep->passed()) << rep->failures();
  expect_check(*rep, "STAT_RX_FILTERED delta", "0", "0", true);
  expect_check(*rep, "STAT_RX_STRAY delta", "2", "2", true);
  EXPECT_EQ(hal.reg(r::CM_ROUTE), 0u) << "filter on again";
  EXPECT_EQ(hal.reg(r::PORT_MAC_LO), 0x22334455u);
  EXPECT_EQ(hal.reg(r::PORT_IP), 0x0A000001u) << "IP filter on again";
  expect_restored();
}

// With only the IP filter on, a self-test that forgot to clear PORT_IP would see its looped
// frames filtered: the fake port models the filter, so this guards the save/clear/restore.
TEST_F(SelftestTest, IpFilterAloneIsOffDuringTheTestAndRestoredAfter) {
  hal.write32(r::PORT_IP, 0xC0A80001);
  auto rep = run();
  ASSERT_TRUE(rep) << rep.error().message;
  EXPECT_TRUE(rep->passed()) << rep->failures();
  expect_check(*rep, "STAT_RX_FILTERED delta", "0", "0", true);
  EXPECT_EQ(hal.reg(r::PORT_IP), 0xC0A80001u);
  expect_restored();
}

TEST_F(SelftestTest, CountersAreDeltasAcrossWrap) {
  hal.preset_tx(0xFFFFFFFE, 0xFFFFFF00);
  hal.cm_stats[r::STAT_RX_FRAMES] = 0xFFFFFFFF;
  hal.cm_stats[r::STAT_RST_TX] = 0xFFFFFFFF;
  hal.cm_stats[r::STAT_OOW] = 1234;  // old counts do not matter
  auto rep = run();
  ASSERT_TRUE(rep) << rep.error().message;
  EXPECT_TRUE(rep->passed()) << rep->failures();
}

TEST_F(SelftestTest, FailsClearlyWithoutTheLoop) {
  hal.loop_implemented = false;
  auto rep = run();
  ASSERT_TRUE(rep) << rep.error().message;
  EXPECT_FALSE(rep->passed());
  expect_check(*rep, "STAT_RX_FRAMES delta", "4", "0", false);
  expect_check(*rep, "STAT_TX_FRAMES delta", "4", "2", false);
  expect_check(*rep, "STAT_RST_TX delta", "2", "0", false);
  expect_check(*rep, "CQE A status", "ok", "ok", true);  // the rejects themselves went out
  const std::string f = rep->failures();
  EXPECT_NE(f.find("STAT_RX_FRAMES delta: expected 4, got 0 -- every transmitted frame must come "
                   "back into RX: is CTRL.LOOPBACK implemented"),
            std::string::npos)
      << f;
  EXPECT_EQ(hal.wire_tx, 2u);
  expect_restored();
  const std::string text = format_selftest_report(*rep);
  std::printf("%s", text.c_str());
  EXPECT_NE(text.find("self-test: FAIL"), std::string::npos);
}

TEST_F(SelftestTest, RxChecksumErrorFails) {
  hal.corrupt_rx = true;
  auto rep = run();
  ASSERT_TRUE(rep) << rep.error().message;
  EXPECT_FALSE(rep->passed());
  expect_check(*rep, "STAT_RX_BAD delta", "0", "2", false);
  expect_check(*rep, "STAT_RX_FRAMES delta", "4", "2", false);
  expect_check(*rep, "STAT_RST_TX delta", "2", "0", false);
  EXPECT_NE(rep->failures().find("RX rejected a frame TX built"), std::string::npos);
  expect_restored();
}

TEST_F(SelftestTest, MissingRstFails) {
  hal.engine_answers = false;
  auto rep = run();
  ASSERT_TRUE(rep) << rep.error().message;
  EXPECT_FALSE(rep->passed());
  expect_check(*rep, "STAT_RST_TX delta", "2", "0", false);
  expect_check(*rep, "STAT_TX_BYTES delta", "392", "272", false);
  EXPECT_NE(rep->failures().find("the engine must answer RST|ACK"), std::string::npos);
}

TEST_F(SelftestTest, FramesFromTheWireDuringTheLoopFail) {
  hal.wire_frames = 3;
  auto rep = run();
  ASSERT_TRUE(rep) << rep.error().message;
  EXPECT_FALSE(rep->passed());
  expect_check(*rep, "STAT_RX_OVERFLOW delta", "0", "3", false);
  // Only that one: everything else was as predicted.
  EXPECT_EQ(std::count_if(rep->checks.begin(), rep->checks.end(),
                          [](const SelftestCheck& c) { return !c.ok; }),
            1);
}

TEST_F(SelftestTest, ErrorCompletionFails) {
  // Reject B's PD buffer (SQ slot 1) cannot be read: CQE B comes back DMA/DMA_PD.
  const uint64_t pd_b = dev->pd_slot_addr(1);
  hal.dma_read_errors.push_back({pd_b, pd_b + kPdSlotBytes});
  auto rep = run();
  ASSERT_TRUE(rep) << rep.error().message;
  EXPECT_FALSE(rep->passed());
  const auto* c = check(*rep, "CQE B status");
  ASSERT_NE(c, nullptr);
  EXPECT_FALSE(c->ok);
  EXPECT_NE(c->actual.find("DMA/DMA_PD"), std::string::npos) << c->actual;
  expect_check(*rep, "CQE A status", "ok", "ok", true);
  expect_check(*rep, "STAT_TX_FRAMES delta", "4", "2", false);
  expect_restored();
}

TEST_F(SelftestTest, LoopbackThatStaysOnFails) {
  hal.stuck_loopback = true;
  auto rep = run();
  ASSERT_TRUE(rep) << rep.error().message;
  EXPECT_FALSE(rep->passed());
  EXPECT_FALSE(rep->loopback_restored);
  const auto* c = check(*rep, "CTRL after the test");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->expected, "0x00000001");
  EXPECT_EQ(c->actual, "0x00000003");
  EXPECT_NE(format_selftest_report(*rep).find("loopback STILL ON"), std::string::npos);
}

TEST_F(SelftestTest, RefusesABusyDevice) {
  ListenerConfig lc;
  lc.index = 0;
  lc.loc_ip = 0x0A000001;
  lc.loc_port = 20049;
  ASSERT_TRUE(dev->cqp_create_listener(lc));
  testing::FakeRequest req;
  ASSERT_TRUE(hal.inject_connect_request(req));
  hal.ctrl_writes.clear();
  auto rep = run();
  ASSERT_FALSE(rep);
  EXPECT_EQ(rep.error().code, Errc::kState);
  EXPECT_NE(rep.error().message.find("1 connection(s) in the table"), std::string::npos)
      << rep.error().message;
  EXPECT_TRUE(hal.ctrl_writes.empty());  // nothing was touched
}

TEST_F(SelftestTest, RefusesAListenerInUse) {
  ListenerConfig lc;
  lc.index = 3;
  lc.loc_port = 4791;
  ASSERT_TRUE(dev->cqp_create_listener(lc));
  SelftestOptions o;
  o.listener = 3;
  auto rep = run(o);
  ASSERT_FALSE(rep);
  EXPECT_EQ(rep.error().code, Errc::kState);
  EXPECT_NE(rep.error().message.find("listener 3 is in use"), std::string::npos);
  // Without a choice the test borrows the highest free entry instead.
  auto ok = run();
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_EQ(ok->listener, regs::kNumListeners - 1);
  EXPECT_TRUE(ok->passed()) << ok->failures();
  EXPECT_TRUE(hal.listeners[3].has_value());  // the user's listener is untouched
}

TEST_F(SelftestTest, HungHardwareIsAnErrorAndStillRestoresCtrl) {
  hal.hold = true;
  auto rep = run();
  ASSERT_FALSE(rep);
  EXPECT_EQ(rep.error().code, Errc::kTimeout);
  EXPECT_EQ(rep.error().message.rfind("self-test: CREATE_LISTENER: ", 0), 0u)
      << rep.error().message;
  expect_restored();
}

}  // namespace
}  // namespace bouncer
