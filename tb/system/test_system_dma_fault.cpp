// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// DMA faults: the real driver against the verilated bouncer_core, with the
// simulated host memory answering SLVERR or DECERR, answering late, or never answering
// (sim::DmaFault) on the one range a test names.
//
// For every DMA kind the engines use: the affected WQE gets exactly one completion with the
// documented code (docs/errors.md), nothing goes on the wire for it, the WQEs after it complete
// normally, STAT_DMA_RD_ERR / STAT_DMA_WR_ERR / STAT_DMA_TIMEOUT count it, and every wait is
// bounded. Posted writes (CQE, AEQE) cannot be reported in a completion: they set
// STATUS.DMA_WR_ERR, and the hardware goes on with the next slot. The DMA path does not depend
// on the stream width, so these run at DATA_W 64 (the watchdog test also at 512).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <ostream>
#include <string>
#include <vector>

#include "bouncer/device.hpp"
#include "bouncer/peer/initiator.hpp"
#include "bouncer/regs.hpp"
#include "bouncer/sim/platform.hpp"
#include "host_context.hpp"

using namespace std::chrono_literals;

namespace {

namespace R = bouncer::regs;
namespace sim = bouncer::sim;
namespace peer = bouncer::peer;
using bouncer::CmContext;
using bouncer::Completion;
using bouncer::Device;
using bouncer::RejectWqe;
using bouncer::testing::host_ctx;
using bouncer::testing::pattern_pd;
using sim::DmaFault;

constexpr uint32_t kDmaTimeout = 2'000;            // DMA_TIMEOUT of these tests (cycles)
constexpr std::chrono::nanoseconds kWait = 800us;  // bound of every wait (200 000 cycles)

const char* fault_name(DmaFault f) {
  switch (f) {
    case DmaFault::kSlvErr:
      return "SlvErr";
    case DmaFault::kDecErr:
      return "DecErr";
    case DmaFault::kNoResponse:
      return "NoResponse";
    case DmaFault::kLate:
      return "Late";
  }
  return "?";
}

}  // namespace

// gtest prints the parameter with this (ctest names: "GetParam() = SlvErr").
namespace bouncer::sim {
void PrintTo(DmaFault f, std::ostream* os) { *os << fault_name(f); }
}  // namespace bouncer::sim

namespace {

uint16_t tcp_dport(const std::vector<uint8_t>& f) {
  return f.size() < 38 ? 0 : static_cast<uint16_t>(f[36] << 8 | f[37]);
}

// The TCP destination ports of every frame sent so far, in order.
std::vector<uint16_t> wire_ports(const sim::Platform& plat) {
  std::vector<uint16_t> out;
  for (const auto& f : plat.tx_frames()) out.push_back(tcp_dport(f.bytes));
  return out;
}

struct Counters {
  uint32_t rd_err = 0, wr_err = 0, timeout = 0;
  bool wr_err_sticky = false;
};

Counters counters(bouncer::hal::Device& hal) {
  Counters c;
  c.rd_err = hal.read32(R::reg::STAT_DMA_RD_ERR);
  c.wr_err = hal.read32(R::reg::STAT_DMA_WR_ERR);
  c.timeout = hal.read32(R::reg::STAT_DMA_TIMEOUT);
  c.wr_err_sticky = R::field::STATUS::DMA_WR_ERR.get(hal.read32(R::reg::STATUS)) != 0;
  return c;
}

// What a read fault must leave in the counters: a bad response counts in RD_ERR, a read that
// never (or too late) returns in TIMEOUT.
void expect_read_fault_counted(bouncer::hal::Device& hal, DmaFault f) {
  const Counters c = counters(hal);
  const bool bad_resp = f == DmaFault::kSlvErr || f == DmaFault::kDecErr;
  EXPECT_EQ(c.rd_err, bad_resp ? 1u : 0u);
  EXPECT_EQ(c.timeout, bad_resp ? 0u : 1u);
  EXPECT_EQ(c.wr_err, 0u);
  EXPECT_FALSE(c.wr_err_sticky);
}

bouncer::DeviceConfig base_config() {
  bouncer::DeviceConfig dc;
  dc.isn_key = std::array<uint32_t, 4>{1, 2, 3, 4};
  dc.cqp_entries = 4;
  dc.ccq_entries = 4;
  dc.dma_timeout_cycles = kDmaTimeout;
  dc.cqp_timeout = kWait;
  return dc;
}

sim::PlatformConfig platform_config(unsigned width = 64) {
  sim::PlatformConfig pc;
  pc.data_width = width;
  return pc;
}

// Posts an MPA_REJECT of cm_id's host-written context. allow_inline = false: the PD is read by
// DMA from the SQ slot's PD buffer (pd_slot_addr).
uint16_t post(Device& d, uint32_t cm_id, std::span<const std::byte> pd, bool allow_inline) {
  RejectWqe w;
  w.cm_id = cm_id;
  w.pd = pd;
  w.allow_inline = allow_inline;
  w.wr_id = 1000 + cm_id;
  auto r = d.post_reject(w);
  EXPECT_TRUE(r.ok()) << r.error().message;
  return r.ok() ? *r : 0;
}

// The completion of wqe_idx must come (bounded wait) with this code.
void expect_completion(Device& d, uint16_t idx, uint32_t cm_id, R::CqMajor major,
                       R::CqMinor minor) {
  auto c = d.wait_completion_for(idx, kWait);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->wqe_idx, idx);
  EXPECT_EQ(c->cm_id, cm_id);
  EXPECT_EQ(c->wr_id, 1000u + cm_id);
  EXPECT_EQ(c->major, static_cast<uint16_t>(major)) << c->status();
  EXPECT_EQ(c->minor, static_cast<uint16_t>(minor)) << c->status();
  EXPECT_EQ(c->error, major != R::CqMajor::OK);
  if (major != R::CqMajor::OK) {
    EXPECT_EQ(c->frame_len, 0u);
  }
}

void expect_ok(Device& d, uint16_t idx, uint32_t cm_id) {
  expect_completion(d, idx, cm_id, R::CqMajor::OK, R::CqMinor::NONE);
}

// Exactly one completion per WQE: nothing outstanding, nothing unexpected, and no further CQE
// shows up while the device runs on.
void expect_no_more_completions(Device& d, bouncer::hal::Device& hal) {
  hal.wait_cycles(5'000);
  EXPECT_FALSE(d.poll_cq().has_value());
  EXPECT_EQ(d.sq_outstanding(), 0u);
  EXPECT_EQ(d.stats().unexpected_cqes, 0u);
  EXPECT_EQ(d.stats().unexpected_ccqes, 0u);
}

void expect_hw_error(const bouncer::Result<void>& r, R::CqMinor minor) {
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, bouncer::Errc::kHardware) << r.error().message;
  EXPECT_EQ(r.error().hw_major, static_cast<uint16_t>(R::CqMajor::DMA)) << r.error().message;
  EXPECT_EQ(r.error().hw_minor, static_cast<uint16_t>(minor)) << r.error().message;
}

uint64_t load64(sim::Platform& plat, uint64_t addr) {
  auto m = plat.host_memory(addr, 8);
  uint64_t v = 0;
  if (m.size() == 8) std::memcpy(&v, m.data(), 8);
  return v;
}

// Polls a register until it reads `want` (bounded); returns the last value read.
uint32_t wait_reg(bouncer::hal::Device& hal, uint32_t off, uint32_t want) {
  uint32_t v = hal.read32(off);
  for (int i = 0; i < 400 && v != want; ++i) {
    hal.wait_cycles(1'000);
    v = hal.read32(off);
  }
  return v;
}

// ------------------------------------------------------------------ read faults

class ReadFault : public ::testing::TestWithParam<DmaFault> {};

// The SQ engine's WQE fetch fails: DMA/DMA_WQE, no frame; the next WQEs go out.
TEST_P(ReadFault, SqWqeFetch) {
  const DmaFault f = GetParam();
  sim::Platform plat(platform_config());
  plat.run([&](bouncer::hal::Device& hal) {
    auto dev = Device::open(hal, base_config());
    ASSERT_TRUE(dev.ok()) << dev.error().message;
    Device& d = **dev;
    for (uint32_t id = 1; id <= 3; ++id) ASSERT_TRUE(d.cqp_write_context(id, host_ctx(id)).ok());
    const uint64_t slot = d.sq().device_addr() + uint64_t{d.sq().head()} * R::kSqWqeBytes;
    plat.inject_dma_fault(slot, slot + R::kSqWqeBytes, f);
    const auto pd = pattern_pd(20, 1);  // inline: the WQE fetch is the only read
    const uint64_t t0 = hal.now_cycles();
    const uint16_t a = post(d, 1, pd, true);
    const uint16_t b = post(d, 2, pd, true);
    expect_completion(d, a, 1, R::CqMajor::DMA, R::CqMinor::DMA_WQE);
    const uint64_t ta = hal.now_cycles() - t0;
    if (f == DmaFault::kNoResponse) {
      EXPECT_GE(ta, kDmaTimeout) << "the watchdog fired early";
      EXPECT_LT(ta, 2 * kDmaTimeout) << "the watchdog fired late";
    }
    expect_ok(d, b, 2);
    plat.clear_dma_errors();
    expect_ok(d, post(d, 3, pd, true), 3);
    expect_read_fault_counted(hal, f);
    EXPECT_EQ(hal.read32(R::reg::STAT_SQ_WQES), 3u);
    EXPECT_EQ(hal.read32(R::reg::STAT_SQ_ERRORS), 1u);
    expect_no_more_completions(d, hal);
  });
  EXPECT_EQ(wire_ports(plat), (std::vector<uint16_t>{40002, 40003}));
}

// The reject PD cannot be read: DMA/DMA_PD, nothing sent, the node unchanged (a retry works).
TEST_P(ReadFault, SqPdRead) {
  const DmaFault f = GetParam();
  sim::Platform plat(platform_config());
  plat.run([&](bouncer::hal::Device& hal) {
    auto dev = Device::open(hal, base_config());
    ASSERT_TRUE(dev.ok()) << dev.error().message;
    Device& d = **dev;
    for (uint32_t id = 1; id <= 2; ++id) ASSERT_TRUE(d.cqp_write_context(id, host_ctx(id)).ok());
    const uint64_t pd_addr = d.pd_slot_addr(static_cast<uint16_t>(d.sq().head()));
    plat.inject_dma_fault(pd_addr, pd_addr + 8, f);
    const auto pd = pattern_pd(100, 7);  // 13 beats by DMA
    const uint64_t t0 = hal.now_cycles();
    const uint16_t a = post(d, 1, pd, false);
    const uint16_t b = post(d, 2, pd, false);
    expect_completion(d, a, 1, R::CqMajor::DMA, R::CqMinor::DMA_PD);
    if (f == DmaFault::kNoResponse) {
      EXPECT_GE(hal.now_cycles() - t0, kDmaTimeout);
    }
    expect_ok(d, b, 2);
    plat.clear_dma_errors();
    expect_ok(d, post(d, 1, pd, false), 1);
    expect_read_fault_counted(hal, f);
    EXPECT_EQ(hal.read32(R::reg::STAT_REJECT_HOST), 2u);
    EXPECT_EQ(hal.read32(R::reg::STAT_SQ_ERRORS), 1u);
    expect_no_more_completions(d, hal);
  });
  EXPECT_EQ(wire_ports(plat), (std::vector<uint16_t>{40002, 40001}));
}

// The control queue: its WQE fetch (DMA/DMA_WQE) and the context image read of
// WRITE_CM_CONTEXT (DMA/DMA_CTX) fail; the next commands succeed.
TEST_P(ReadFault, ControlQueue) {
  const DmaFault f = GetParam();
  sim::Platform plat(platform_config());
  plat.run([&](bouncer::hal::Device& hal) {
    auto dev = Device::open(hal, base_config());
    ASSERT_TRUE(dev.ok()) << dev.error().message;
    Device& d = **dev;
    // slot 0's WQE names its context buffer; slot i's is kCmCtxBytes * i further
    ASSERT_TRUE(d.cqp_write_context(0, host_ctx(0)).ok());
    const uint64_t ctx0 = load64(plat, d.cqp().device_addr());
    ASSERT_NE(ctx0, 0u);
    uint64_t ctx = ctx0 + uint64_t{d.cqp().head()} * R::kCmCtxBytes;
    plat.inject_dma_fault(ctx, ctx + R::kCmCtxBytes, f);
    expect_hw_error(d.cqp_write_context(1, host_ctx(1)), R::CqMinor::DMA_CTX);
    plat.clear_dma_errors();
    ASSERT_TRUE(d.cqp_write_context(1, host_ctx(1)).ok());
    auto back = d.cqp_read_context(1);
    ASSERT_TRUE(back.ok()) << back.error().message;
    EXPECT_EQ(*back, host_ctx(1));

    const uint64_t wqe = d.cqp().device_addr() + uint64_t{d.cqp().head()} * R::kCqpWqeBytes;
    plat.inject_dma_fault(wqe, wqe + R::kCqpWqeBytes, f);
    expect_hw_error(d.cqp_nop(), R::CqMinor::DMA_WQE);
    plat.clear_dma_errors();
    EXPECT_TRUE(d.cqp_nop().ok());

    const Counters c = counters(hal);
    const bool bad_resp = f == DmaFault::kSlvErr || f == DmaFault::kDecErr;
    EXPECT_EQ(c.rd_err, bad_resp ? 2u : 0u);
    EXPECT_EQ(c.timeout, bad_resp ? 0u : 2u);
    EXPECT_EQ(c.wr_err, 0u);
    EXPECT_FALSE(c.wr_err_sticky);
    expect_no_more_completions(d, hal);
  });
  EXPECT_TRUE(plat.tx_frames().empty());
}

INSTANTIATE_TEST_SUITE_P(Fault, ReadFault,
                         ::testing::Values(DmaFault::kSlvErr, DmaFault::kDecErr,
                                           DmaFault::kNoResponse),
                         [](const auto& i) { return std::string(fault_name(i.param)); });

// ------------------------------------------------------------------ write faults

class WriteFault : public ::testing::TestWithParam<DmaFault> {};

// READ_CM_CONTEXT's write-back waits for its write response: DMA/DMA_CTX in the CCQE,
// STAT_DMA_WR_ERR, and no sticky STATUS.DMA_WR_ERR (the error was reported).
TEST_P(WriteFault, ContextReadBack) {
  sim::Platform plat(platform_config());
  plat.run([&](bouncer::hal::Device& hal) {
    auto dev = Device::open(hal, base_config());
    ASSERT_TRUE(dev.ok()) << dev.error().message;
    Device& d = **dev;
    ASSERT_TRUE(d.cqp_write_context(1, host_ctx(1)).ok());
    const uint64_t ctx0 = load64(plat, d.cqp().device_addr());
    const uint64_t ctx = ctx0 + uint64_t{d.cqp().head()} * R::kCmCtxBytes;
    plat.inject_dma_fault(ctx, ctx + R::kCmCtxBytes, GetParam());
    auto r = d.cqp_read_context(1);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().hw_major, static_cast<uint16_t>(R::CqMajor::DMA));
    EXPECT_EQ(r.error().hw_minor, static_cast<uint16_t>(R::CqMinor::DMA_CTX));
    plat.clear_dma_errors();
    auto back = d.cqp_read_context(1);
    ASSERT_TRUE(back.ok()) << back.error().message;
    EXPECT_EQ(*back, host_ctx(1));
    const Counters c = counters(hal);
    EXPECT_EQ(c.wr_err, 1u);
    EXPECT_FALSE(c.wr_err_sticky);
    EXPECT_EQ(c.rd_err, 0u);
    EXPECT_EQ(c.timeout, 0u);
    expect_no_more_completions(d, hal);
  });
}

// A CQE write fails. It cannot be reported in a completion: STATUS.DMA_WR_ERR (sticky) and
// STAT_DMA_WR_ERR say so. The reject itself went out; the hardware goes on and writes the
// next CQE to the next slot. The driver, which reads the ring in order, sees no completion for
// the lost slot: its bounded wait returns kTimeout (the device must be reset).
TEST_P(WriteFault, CqeWrite) {
  sim::Platform plat(platform_config());
  plat.run([&](bouncer::hal::Device& hal) {
    auto dev = Device::open(hal, base_config());
    ASSERT_TRUE(dev.ok()) << dev.error().message;
    Device& d = **dev;
    for (uint32_t id = 1; id <= 2; ++id) ASSERT_TRUE(d.cqp_write_context(id, host_ctx(id)).ok());
    const uint64_t cq = d.cq().device_addr();
    const uint32_t h = d.cq().head();
    plat.inject_dma_fault(cq + h * R::kCqeBytes, cq + (h + 1) * R::kCqeBytes, GetParam());
    const auto pd = pattern_pd(16, 3);
    const uint16_t a = post(d, 1, pd, true);
    const uint16_t b = post(d, 2, pd, true);
    EXPECT_EQ(wait_reg(hal, R::reg::CQ_TAIL, h + 2), h + 2);
    const Counters c = counters(hal);
    EXPECT_EQ(c.wr_err, 1u);
    EXPECT_TRUE(c.wr_err_sticky);
    EXPECT_EQ(c.rd_err, 0u);
    EXPECT_EQ(c.timeout, 0u);
    // B's CQE, in the next slot, is complete and right
    auto img = plat.host_memory(cq + (h + 1) * R::kCqeBytes, R::kCqeBytes);
    ASSERT_EQ(img.size(), R::kCqeBytes);
    EXPECT_EQ(R::get(img, R::cqe::VALID), 1u);
    EXPECT_EQ(R::get(img, R::cqe::WQEIDX), b);
    EXPECT_EQ(R::get(img, R::cqe::ERROR), 0u);
    EXPECT_EQ(R::get(img, R::cqe::MAJERR), 0u);
    EXPECT_EQ(R::get(img, R::cqe::CM_ID), 2u);
    // A's slot was never written
    auto lost = plat.host_memory(cq + h * R::kCqeBytes, R::kCqeBytes);
    EXPECT_EQ(R::get(lost, R::cqe::VALID), 0u);
    auto ca = d.wait_completion_for(a, 80us);
    ASSERT_FALSE(ca.ok());
    EXPECT_EQ(ca.error().code, bouncer::Errc::kTimeout);
    // the error says why: the engine is done with the WQE, its CQE write failed
    EXPECT_NE(ca.error().message.find("the engine is past it, its CQE is missing"),
              std::string::npos)
        << ca.error().message;
    EXPECT_NE(ca.error().message.find("DMA_WR_ERR (a completion"), std::string::npos)
        << ca.error().message;
    EXPECT_EQ(hal.read32(R::reg::STAT_SQ_ERRORS), 0u);
  });
  EXPECT_EQ(wire_ports(plat), (std::vector<uint16_t>{40001, 40002}));
}

// An AEQE write fails (a peer's CONNECT_REQUEST): STATUS.DMA_WR_ERR and STAT_DMA_WR_ERR; the
// event is lost, the CM engine goes on, and the next connection's event lands in the next slot.
TEST_P(WriteFault, AeqeWrite) {
  sim::Platform plat(platform_config());
  const bouncer::MacAddr mac = {0x02, 0xbb, 0xcc, 0xdd, 0xee, 0x01};
  auto peer_cfg = [&](unsigned i) {
    peer::InitiatorConfig p;
    p.mac = {0x02, 0, 0, 0, 0, static_cast<uint8_t>(0x10 + i)};
    p.peer_mac = mac;
    p.ip = 0x0A000002 + i;
    p.peer_ip = 0x0A000001;
    p.port = static_cast<uint16_t>(41000 + i);
    p.peer_port = 4791;
    p.isn = 0x12345678u + 0x1000u * i;
    p.mpa_rev = 1;
    p.private_data = {'h', 'i'};
    p.rto_cycles = 400'000;
    p.reply_timeout_cycles = 4'000'000;
    return p;
  };
  plat.run([&](bouncer::hal::Device& hal) {
    auto dev = Device::open(hal, base_config());
    ASSERT_TRUE(dev.ok()) << dev.error().message;
    Device& d = **dev;
    ASSERT_TRUE(d.wait_cm_ready(kWait).ok());
    bouncer::ListenerConfig lc;
    lc.index = 0;
    lc.loc_ip = 0x0A000001;
    lc.loc_port = 4791;
    lc.loc_mac = mac;
    ASSERT_TRUE(d.cqp_create_listener(lc).ok());
    const uint64_t aeq = d.aeq().device_addr();
    plat.inject_dma_fault(aeq, aeq + R::aeqe::kBytes, GetParam());
    plat.add_peer(peer_cfg(0), plat.cycles() + 10);
    ASSERT_EQ(wait_reg(hal, R::reg::STAT_EVENTS, 1), 1u);
    hal.wait_cycles(1'000);  // the write response
    Counters c = counters(hal);
    EXPECT_EQ(c.wr_err, 1u);
    EXPECT_TRUE(c.wr_err_sticky);
    EXPECT_FALSE(d.poll_aeq().has_value()) << "slot 0 was never written";
    plat.clear_dma_errors();
    plat.add_peer(peer_cfg(1), plat.cycles() + 10);
    ASSERT_EQ(wait_reg(hal, R::reg::STAT_EVENTS, 2), 2u);
    hal.wait_cycles(1'000);
    EXPECT_EQ(hal.read32(R::reg::AEQ_TAIL), 2u);
    auto img = plat.host_memory(aeq + R::aeqe::kBytes, R::aeqe::kBytes);
    ASSERT_EQ(img.size(), R::aeqe::kBytes);
    EXPECT_EQ(R::get(img, R::aeqe::VALID), 1u);
    EXPECT_EQ(R::get(img, R::aeqe::EVENT_CODE),
              static_cast<uint64_t>(R::AeqEvent::CONNECT_REQUEST));
    EXPECT_EQ(R::get(img, R::aeqe::REM_PORT), 41001u);
    EXPECT_EQ(hal.read32(R::reg::CM_CONNS), 2u);
    c = counters(hal);
    EXPECT_EQ(c.wr_err, 1u);
    EXPECT_EQ(c.rd_err, 0u);
    EXPECT_EQ(c.timeout, 0u);
    EXPECT_EQ(R::field::STATUS::AEQ_FULL.get(hal.read32(R::reg::STATUS)), 0u);
  });
}

// A CCQE write fails: the command ran, its CCQE is lost (STATUS.DMA_WR_ERR, STAT_DMA_WR_ERR),
// the driver's bounded wait ends with kTimeout, and the next CCQE lands in the next slot.
TEST_P(WriteFault, CcqeWrite) {
  sim::Platform plat(platform_config());
  plat.run([&](bouncer::hal::Device& hal) {
    auto dc = base_config();
    dc.cqp_timeout = 80us;
    auto dev = Device::open(hal, dc);
    ASSERT_TRUE(dev.ok()) << dev.error().message;
    Device& d = **dev;
    const uint64_t ccq = d.ccq().device_addr();
    const uint32_t h = d.ccq().head();
    plat.inject_dma_fault(ccq + h * R::kCqeBytes, ccq + (h + 1) * R::kCqeBytes, GetParam());
    auto r = d.cqp_write_context(1, host_ctx(1));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, bouncer::Errc::kTimeout);
    EXPECT_NE(r.error().message.find("DMA_WR_ERR"), std::string::npos) << r.error().message;
    EXPECT_EQ(hal.read32(R::reg::CCQ_TAIL), h + 1);
    Counters c = counters(hal);
    EXPECT_EQ(c.wr_err, 1u);
    EXPECT_TRUE(c.wr_err_sticky);
    plat.clear_dma_errors();
    EXPECT_FALSE(d.cqp_nop().ok()) << "the driver still waits at the lost slot";
    EXPECT_EQ(hal.read32(R::reg::CCQ_TAIL), h + 2);
    auto img = plat.host_memory(ccq + (h + 1) * R::kCqeBytes, R::kCqeBytes);
    ASSERT_EQ(img.size(), R::kCqeBytes);
    EXPECT_EQ(R::get(img, R::cqe::VALID), 1u);
    EXPECT_EQ(R::get(img, R::cqe::ERROR), 0u);
    EXPECT_EQ(R::get(img, R::cqe::WQEIDX), h + 1);
    c = counters(hal);
    EXPECT_EQ(c.wr_err, 1u);
    EXPECT_EQ(c.rd_err, 0u);
    EXPECT_EQ(c.timeout, 0u);
  });
}

// The request PD write into the PD area fails: STATUS.DMA_WR_ERR and STAT_DMA_WR_ERR; the
// CONNECT_REQUEST event still comes (it is a separate write), its PD slot holds no PD.
TEST_P(WriteFault, RequestPdWrite) {
  sim::Platform plat(platform_config());
  const bouncer::MacAddr mac = {0x02, 0xbb, 0xcc, 0xdd, 0xee, 0x01};
  plat.run([&](bouncer::hal::Device& hal) {
    auto dev = Device::open(hal, base_config());
    ASSERT_TRUE(dev.ok()) << dev.error().message;
    Device& d = **dev;
    ASSERT_TRUE(d.wait_cm_ready(kWait).ok());
    bouncer::ListenerConfig lc;
    lc.loc_ip = 0x0A000001;
    lc.loc_port = 4791;
    lc.loc_mac = mac;
    ASSERT_TRUE(d.cqp_create_listener(lc).ok());
    plat.inject_dma_fault(d.pd_area_base(), d.pd_area_base() + d.pd_area_bytes(), GetParam());
    peer::InitiatorConfig p;
    p.mac = {0x02, 0, 0, 0, 0, 0x10};
    p.peer_mac = mac;
    p.ip = 0x0A000002;
    p.peer_ip = 0x0A000001;
    p.port = 41000;
    p.peer_port = 4791;
    p.isn = 0x12345678u;
    p.mpa_rev = 1;
    p.private_data = {'h', 'i', '!', '?'};
    p.rto_cycles = 400'000;
    p.reply_timeout_cycles = 4'000'000;
    plat.add_peer(p, plat.cycles() + 10);
    ASSERT_EQ(wait_reg(hal, R::reg::STAT_EVENTS, 1), 1u);
    hal.wait_cycles(1'000);
    auto ev = d.poll_aeq();
    ASSERT_TRUE(ev.has_value());
    EXPECT_EQ(ev->event, static_cast<uint8_t>(R::AeqEvent::CONNECT_REQUEST));
    EXPECT_EQ(ev->rem_port, 41000u);
    EXPECT_EQ(ev->pd_len, 4u);
    auto slot = plat.host_memory(d.pd_area_addr(ev->cm_id), 4);
    ASSERT_EQ(slot.size(), 4u);
    for (auto b : slot) EXPECT_EQ(b, std::byte{0}) << "the PD was not committed";
    const Counters c = counters(hal);
    EXPECT_EQ(c.wr_err, 1u);
    EXPECT_TRUE(c.wr_err_sticky);
    EXPECT_EQ(c.rd_err, 0u);
  });
}

INSTANTIATE_TEST_SUITE_P(Fault, WriteFault, ::testing::Values(DmaFault::kSlvErr, DmaFault::kDecErr),
                         [](const auto& i) { return std::string(fault_name(i.param)); });

// ------------------------------------------------------------------ the watchdog

class Watchdog : public ::testing::TestWithParam<unsigned> {};

// A WQE read answered after the watchdog fired: the WQE completes with DMA/DMA_WQE, the late
// data (old AXI ID) is discarded, and the next WQE, whose data the in-order memory returns
// only after the late burst, gets its own data and goes out.
TEST_P(Watchdog, LateDataIsDiscarded) {
  sim::Platform plat(platform_config(GetParam()));
  constexpr uint64_t kLate = 3 * kDmaTimeout / 2;
  plat.run([&](bouncer::hal::Device& hal) {
    auto dev = Device::open(hal, base_config());
    ASSERT_TRUE(dev.ok()) << dev.error().message;
    Device& d = **dev;
    for (uint32_t id = 1; id <= 2; ++id) ASSERT_TRUE(d.cqp_write_context(id, host_ctx(id)).ok());
    const uint64_t slot = d.sq().device_addr() + uint64_t{d.sq().head()} * R::kSqWqeBytes;
    plat.inject_dma_fault(slot, slot + R::kSqWqeBytes, DmaFault::kLate, kLate);
    const auto pd = pattern_pd(24, 9);
    const uint64_t beats0 = plat.stats().dma_read_beats;
    const uint64_t t0 = hal.now_cycles();
    const uint16_t a = post(d, 1, pd, true);
    const uint16_t b = post(d, 2, pd, true);
    expect_completion(d, a, 1, R::CqMajor::DMA, R::CqMinor::DMA_WQE);
    EXPECT_GE(hal.now_cycles() - t0, kDmaTimeout);
    expect_ok(d, b, 2);
    EXPECT_GE(hal.now_cycles() - t0, kLate) << "B's data came behind the late burst";
    // both WQE bursts were delivered in full (8 beats each): A's to nobody
    EXPECT_EQ(plat.stats().dma_read_beats - beats0, 16u);
    expect_read_fault_counted(hal, DmaFault::kLate);
    expect_no_more_completions(d, hal);
  });
  EXPECT_EQ(wire_ports(plat), (std::vector<uint16_t>{40002}));
}

// DMA_TIMEOUT = 0 turns the watchdog off: a read that never returns stalls the SQ engine (the
// driver's wait is bounded and says so). Turning the watchdog on frees it.
TEST_P(Watchdog, OffStallsOnFrees) {
  sim::Platform plat(platform_config(GetParam()));
  plat.run([&](bouncer::hal::Device& hal) {
    EXPECT_EQ(hal.read32(R::reg::DMA_TIMEOUT), 250'000u) << "reset value";
    auto dc = base_config();
    dc.dma_timeout_cycles = 0;
    auto dev = Device::open(hal, dc);
    ASSERT_TRUE(dev.ok()) << dev.error().message;
    Device& d = **dev;
    EXPECT_EQ(hal.read32(R::reg::DMA_TIMEOUT), 0u);
    for (uint32_t id = 1; id <= 2; ++id) ASSERT_TRUE(d.cqp_write_context(id, host_ctx(id)).ok());
    const uint64_t slot = d.sq().device_addr() + uint64_t{d.sq().head()} * R::kSqWqeBytes;
    plat.inject_dma_fault(slot, slot + R::kSqWqeBytes, DmaFault::kNoResponse);
    const auto pd = pattern_pd(8, 5);
    const uint16_t a = post(d, 1, pd, true);
    const uint16_t b = post(d, 2, pd, true);
    auto stuck = d.wait_completion_for(a, 4ns * (20 * kDmaTimeout));
    ASSERT_FALSE(stuck.ok());
    EXPECT_EQ(stuck.error().code, bouncer::Errc::kTimeout);
    EXPECT_EQ(R::field::STATUS::SQ_BUSY.get(hal.read32(R::reg::STATUS)), 1u);
    EXPECT_EQ(hal.read32(R::reg::STAT_DMA_TIMEOUT), 0u);
    hal.write32(R::reg::DMA_TIMEOUT, kDmaTimeout);
    expect_completion(d, a, 1, R::CqMajor::DMA, R::CqMinor::DMA_WQE);
    expect_ok(d, b, 2);
    expect_read_fault_counted(hal, DmaFault::kNoResponse);
    EXPECT_EQ(plat.stats().dma_unanswered, 1u);
    expect_no_more_completions(d, hal);
  });
  EXPECT_EQ(wire_ports(plat), (std::vector<uint16_t>{40002}));
}

INSTANTIATE_TEST_SUITE_P(Width, Watchdog, ::testing::Values(64u, 512u),
                         [](const auto& i) { return "w" + std::to_string(i.param); });

// Writes whose B never comes are not timed out (AXI cannot retire a write without its B):
// bouncer_dma_wr keeps up to 8 bursts waiting, then takes no more commands, so every queue
// that writes (CQ, CCQ, AEQ) stops. The driver's waits end with kTimeout.
TEST(WriteNoResponse, StopsAfterEightBursts) {
  sim::Platform plat(platform_config());
  plat.run([&](bouncer::hal::Device& hal) {
    auto dc = base_config();
    dc.sq_entries = 16;
    dc.cq_entries = 16;
    dc.cqp_timeout = 80us;
    auto dev = Device::open(hal, dc);
    ASSERT_TRUE(dev.ok()) << dev.error().message;
    Device& d = **dev;
    const uint64_t cq = d.cq().device_addr();
    plat.inject_dma_fault(cq, cq + 16 * R::kCqeBytes, DmaFault::kNoResponse);
    for (int i = 0; i < 12; ++i) ASSERT_TRUE(d.post_nop(static_cast<uint64_t>(i)).ok());
    hal.wait_cycles(20'000);
    EXPECT_EQ(hal.read32(R::reg::CQ_TAIL), 8u);
    EXPECT_EQ(R::field::STATUS::SQ_BUSY.get(hal.read32(R::reg::STATUS)), 1u);
    EXPECT_EQ(plat.stats().dma_unanswered, 8u);
    auto nop = d.cqp_nop();
    ASSERT_FALSE(nop.ok());
    EXPECT_EQ(nop.error().code, bouncer::Errc::kTimeout);
    const Counters c = counters(hal);
    EXPECT_EQ(c.wr_err, 0u);
    EXPECT_FALSE(c.wr_err_sticky);
  });
}

}  // namespace

// libsystemc provides main() and calls sc_main().
extern "C" int sc_main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
