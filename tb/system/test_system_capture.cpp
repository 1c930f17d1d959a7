// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// The capture ring (rtl/top/bouncer_capture.sv) read by the driver (bouncer::read_capture)
// against what the platform saw cross the port, at both widths: every held frame's bytes (its
// first 128), original length and first/last-beat stamps equal the platform's record of that
// frame (RxFrame / TxFrame first_cycle, last_cycle); the ring keeps exactly the last 16 frames
// of a direction; FREEZE stops capturing and CLEAR forgets; the driver's open (CTRL.RESET)
// keeps what the ring holds; TX frames (ARP replies) are captured at m_axis_tx.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "system_fixture.hpp"

namespace {

using namespace systest;
using Bytes = std::vector<uint8_t>;
using bouncer::CapturedFrame;
namespace reg = bouncer::regs::reg;

constexpr unsigned kSlots = 16;
constexpr size_t kSnap = 128;

// A frame the core ignores (a local experimental EtherType, 0x88B5), `len` bytes, its bytes
// numbered from `seed`.
Bytes frame(size_t len, uint8_t seed) {
  Bytes f(len);
  for (size_t i = 0; i < len; ++i) f[i] = static_cast<uint8_t>(seed + 3 * i);
  f[0] = 0x02;  // unicast destination
  f[12] = 0x88;
  f[13] = 0xB5;
  return f;
}

// An ARP request for PORT_IP (answered by the core).
Bytes arp_request() {
  Bytes f = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0, 0, 0x0a, 0, 7, 0x08, 0x06, 0, 1,
             0x08, 0,    6,    4,    0,    1,    0x02, 0, 0, 0x0a, 0, 7, 10,   0,    0, 7};
  f.insert(f.end(), 6, 0);
  for (int s = 24; s >= 0; s -= 8) f.push_back(static_cast<uint8_t>(kLocalIp >> s));
  f.resize(60, 0);
  return f;
}

class CaptureTest : public ::testing::TestWithParam<unsigned> {};

// The held frame `c` is the platform's record (bytes, first and last cycle) of a frame.
template <class Rec>
void expect_same(const CapturedFrame& c, const Rec& r, const std::string& what) {
  EXPECT_EQ(c.orig_len, r.bytes.size()) << what;
  const size_t kept = std::min(r.bytes.size(), kSnap);
  EXPECT_EQ(c.bytes, Bytes(r.bytes.begin(), r.bytes.begin() + static_cast<std::ptrdiff_t>(kept)))
      << what;
  EXPECT_EQ(c.cycle, r.first_cycle) << what;
  EXPECT_EQ(c.end_cycle, r.last_cycle) << what;
}

std::vector<CapturedFrame> of_dir(const std::vector<CapturedFrame>& v, CapturedFrame::Dir d) {
  std::vector<CapturedFrame> out;
  for (const auto& f : v) {
    if (f.dir == d) out.push_back(f);
  }
  return out;
}

TEST_P(CaptureTest, HeldFramesAreThePortsFramesLastSixteenFreezeClear) {
  auto pc = platform_config(GetParam(), false);
  sim::Platform plat(pc);
  plat.run([&](bouncer::hal::Device& hal) {
    // frames before the driver opens the device: the open's CTRL.RESET keeps them
    const std::vector<size_t> lens = {60, 61, 64, 127, 128, 129, 200, 1514};
    for (size_t i = 0; i < lens.size(); ++i) plat.inject_rx(frame(lens[i], uint8_t(i)), 0);
    hal.wait_cycles(3000);
    auto dc = device_config();
    dc.tcp->port_mac = kLocalMac;
    dc.tcp->port_ip = kLocalIp;
    auto dev = Device::open(hal, dc);
    ASSERT_TRUE(dev.ok()) << dev.error().message;
    auto st = (*dev)->capture_status();
    ASSERT_TRUE(st.ok()) << st.error().message;
    EXPECT_EQ(st->slots, kSlots);
    EXPECT_EQ(st->snap, kSnap);
    EXPECT_EQ(st->rx_count, lens.size());
    EXPECT_EQ(st->tx_count, 0u);

    auto got = (*dev)->read_capture();
    ASSERT_TRUE(got.ok()) << got.error().message;
    ASSERT_EQ(got->size(), lens.size());
    for (size_t i = 0; i < lens.size(); ++i) {
      EXPECT_EQ((*got)[i].dir, CapturedFrame::Dir::kRx);
      expect_same((*got)[i], plat.rx_frames()[i], "frame " + std::to_string(i));
    }

    // 20 more: the ring holds the last 16 (of all 28), in order
    for (unsigned i = 0; i < 20; ++i) plat.inject_rx(frame(60 + 7 * i, uint8_t(100 + i)), 0);
    hal.wait_cycles(6000);
    got = (*dev)->read_capture();
    ASSERT_TRUE(got.ok());
    ASSERT_EQ(got->size(), kSlots);
    const size_t n = plat.rx_frames().size();
    ASSERT_EQ(n, lens.size() + 20);
    for (unsigned i = 0; i < kSlots; ++i) {
      expect_same((*got)[i], plat.rx_frames()[n - kSlots + i], "wrapped " + std::to_string(i));
    }

    // an ARP request and the core's reply: one RX, one TX frame, merged by stamp
    (void)(*dev)->read_capture(/*clear=*/true);
    const size_t tx0 = plat.tx_frames().size();
    plat.inject_rx(arp_request(), 0);
    hal.wait_cycles(2000);
    ASSERT_EQ(plat.tx_frames().size(), tx0 + 1);
    got = (*dev)->read_capture();
    ASSERT_TRUE(got.ok());
    ASSERT_EQ(got->size(), 2u);
    EXPECT_EQ((*got)[0].dir, CapturedFrame::Dir::kRx);
    EXPECT_EQ((*got)[1].dir, CapturedFrame::Dir::kTx);
    expect_same((*got)[0], plat.rx_frames().back(), "ARP request");
    expect_same((*got)[1], plat.tx_frames().back(), "ARP reply");

    // FREEZE: nothing new is held; after the readout (which thaws) frames are held again
    hal.write32(reg::CAP_CTRL, 1);
    plat.inject_rx(frame(90, 7), 0);
    hal.wait_cycles(1000);
    got = (*dev)->read_capture();
    ASSERT_TRUE(got.ok());
    EXPECT_EQ(got->size(), 2u) << "a frame was captured while frozen";
    plat.inject_rx(frame(91, 8), 0);
    hal.wait_cycles(1000);
    got = (*dev)->read_capture(/*clear=*/true);
    ASSERT_TRUE(got.ok());
    ASSERT_EQ(got->size(), 3u);
    expect_same(got->back(), plat.rx_frames().back(), "after the thaw");
    // CLEAR (by the last readout): empty
    got = (*dev)->read_capture();
    ASSERT_TRUE(got.ok());
    EXPECT_TRUE(got->empty());
    EXPECT_EQ(of_dir(*got, CapturedFrame::Dir::kTx).size(), 0u);
  });
}

INSTANTIATE_TEST_SUITE_P(Widths, CaptureTest, ::testing::Values(64u, 512u), width_name);

}  // namespace

// libsystemc provides main() and calls sc_main().
extern "C" int sc_main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
