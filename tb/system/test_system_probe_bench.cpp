// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// The backend-neutral probe bench (bouncer/probe_bench.hpp: `bouncer bench`, `bouncer card
// bench`) on the co-simulated core: its figures come from the probes alone, so here they are
// checked against what the testbench saw (register-write edges, TX beats), and with
// CTRL.LOOPBACK (how a card runs it) nothing may cross the port. One Platform per process:
// each test is its own ctest process (gtest_discover_tests).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "bouncer/cm.hpp"
#include "bouncer/device.hpp"
#include "bouncer/probe_bench.hpp"
#include "bouncer/regs.hpp"
#include "bouncer/sim/platform.hpp"

using namespace std::chrono_literals;

namespace {

namespace R = bouncer::regs;
namespace sim = bouncer::sim;

struct BenchRun {
  std::vector<bouncer::ProbeLatency> recs;
  std::vector<sim::TxFrame> tx;
  std::vector<sim::MmioWrite> mmio;
  uint32_t ctrl_after = 0;
};

BenchRun run_bench(unsigned width, const bouncer::ProbeBenchConfig& cfg, bool* ok,
                   std::string* err) {
  BenchRun out;
  sim::PlatformConfig pc;
  pc.data_width = width;
  pc.mem_latency_cycles = 100;
  sim::Platform plat(pc);
  plat.run([&](bouncer::hal::Device& hal) {
    bouncer::DeviceConfig dc;
    dc.num_sq = cfg.sqs.empty() ? 1 : *std::max_element(cfg.sqs.begin(), cfg.sqs.end());
    auto dev = bouncer::Device::open(hal, dc);
    ASSERT_TRUE(dev.ok()) << dev.error().message;
    ASSERT_TRUE((*dev)->wait_cm_ready(4ms).ok());
    bouncer::ContextDiag diag(**dev);
    auto r = bouncer::run_probe_bench(**dev, diag, cfg);
    *ok = r.ok();
    if (r.ok()) {
      out.recs = *r;
    } else {
      *err = r.error().message;
    }
    out.ctrl_after = hal.read32(R::reg::CTRL);
  });
  out.tx = plat.tx_frames();
  out.mmio = plat.mmio_writes();
  return out;
}

class ProbeBench : public ::testing::TestWithParam<unsigned> {};

// One reject outstanding at a time, every path: the probe figures are deterministic (min =
// max) and doorbell -> first / last beat equals what the testbench saw for the last reject of
// each point (the doorbell register write's edge, the TX port's beats).
TEST_P(ProbeBench, FiguresMatchTheTestbench) {
  bouncer::ProbeBenchConfig cfg;
  cfg.paths = {"push", "dma_inline", "dma_buffer"};
  cfg.pd_lens = {0, 48};
  cfg.revs = {1};
  cfg.outstanding = {1};
  cfg.samples = 4;
  cfg.mem_latency = 100;
  bool ok = false;
  std::string err;
  const BenchRun r = run_bench(GetParam(), cfg, &ok, &err);
  ASSERT_TRUE(ok) << err;
  // dma_inline with PD 48 is skipped (inline holds 32 bytes): 5 points x 5 stages
  ASSERT_EQ(r.recs.size(), 25u);
  ASSERT_EQ(r.tx.size(), 5u * 4u);  // every reject on the wire, nothing else
  // The doorbell writes (SQ_DB or SQ_PUSH_DB), in order: one per reject.
  std::vector<uint64_t> db;
  for (const auto& w : r.mmio) {
    if (w.offset == R::reg::SQ_DB || w.offset == R::reg::SQ_PUSH_DB) db.push_back(w.cycle);
  }
  ASSERT_EQ(db.size(), r.tx.size());
  std::map<std::string, const bouncer::ProbeLatency*> first, last;
  for (const auto& x : r.recs) {
    EXPECT_EQ(x.width, GetParam());
    EXPECT_EQ(x.samples, 4u);
    EXPECT_EQ(x.sqs, 1u);
    EXPECT_EQ(x.mem_latency, 100u);
    EXPECT_LE(x.min, x.median);
    EXPECT_LE(x.median, x.p99);
    EXPECT_LE(x.p99, x.max);
    EXPECT_EQ(x.min, x.max) << x.stage << " " << x.path << " pd " << x.pd_len
                            << ": one outstanding should not vary";
    const std::string key = x.path + "/" + std::to_string(x.pd_len);
    if (x.stage == "doorbell_to_first_beat") first[key] = &x;
    if (x.stage == "doorbell_to_last_beat") last[key] = &x;
  }
  // points in sweep order: push/0, push/48, dma_inline/0, dma_buffer/0, dma_buffer/48
  const char* order[] = {"push/0", "push/48", "dma_inline/0", "dma_buffer/0", "dma_buffer/48"};
  for (unsigned p = 0; p < 5; ++p) {
    ASSERT_TRUE(first.count(order[p]) && last.count(order[p])) << order[p];
    for (unsigned s = 0; s < 4; ++s) {
      const unsigned i = 4 * p + s;
      EXPECT_EQ(r.tx[i].first_cycle - db[i], first[order[p]]->min) << order[p] << " #" << s;
      EXPECT_EQ(r.tx[i].last_cycle - db[i], last[order[p]]->min) << order[p] << " #" << s;
    }
  }
  // a push reaches the wire sooner than a WQE fetched by DMA (one memory latency of 100)
  EXPECT_LT(first["push/0"]->min + 100, first["dma_buffer/0"]->min);
}

// As on a card: CTRL.LOOPBACK set for the run (and restored), every reject still measured,
// and no frame crosses the port in either direction.
TEST_P(ProbeBench, LoopbackKeepsEverythingOnTheDevice) {
  bouncer::ProbeBenchConfig cfg;
  cfg.paths = {"dma_buffer"};
  cfg.pd_lens = {16};
  cfg.revs = {2};
  cfg.outstanding = {1, 4};
  cfg.samples = 8;
  cfg.loopback = true;
  bool ok = false;
  std::string err;
  const BenchRun r = run_bench(GetParam(), cfg, &ok, &err);
  ASSERT_TRUE(ok) << err;
  EXPECT_EQ(r.recs.size(), 10u);
  EXPECT_TRUE(r.tx.empty()) << r.tx.size() << " frames left the device";
  EXPECT_EQ(r.ctrl_after & R::field::CTRL::LOOPBACK.mask(), 0u);
  bool saw_loop_on = false;
  for (const auto& w : r.mmio) {
    if (w.offset == R::reg::CTRL && (w.value & R::field::CTRL::LOOPBACK.mask())) saw_loop_on = true;
  }
  EXPECT_TRUE(saw_loop_on);
  for (const auto& x : r.recs) {
    if (x.outstanding == 4 && x.stage == "doorbell_to_first_beat") {
      // rejects queue behind each other in the one SQ: the later ones wait longer
      EXPECT_LT(x.min, x.max);
    }
  }
}

// The sqs dimension: the same rejects spread over 4 SQs. At 1 outstanding every SQ takes the
// same path through the engine, so each stage's figure equals the one-SQ figure exactly; with
// 4 outstanding every reject still completes and is measured, and the records say sqs 4.
// Every doorbell written names the SQ of its reject (i % 4 within each point).
TEST_P(ProbeBench, SpreadOverFourSqs) {
  bouncer::ProbeBenchConfig cfg;
  cfg.paths = {"push", "dma_buffer"};
  cfg.pd_lens = {0};
  cfg.revs = {1};
  cfg.outstanding = {1, 4};
  cfg.sqs = {1, 4};
  cfg.samples = 8;
  bool ok = false;
  std::string err;
  const BenchRun r = run_bench(GetParam(), cfg, &ok, &err);
  ASSERT_TRUE(ok) << err;
  ASSERT_EQ(r.recs.size(), 2u * 2u * 2u * 5u);
  ASSERT_EQ(r.tx.size(), 2u * 2u * 2u * 8u);
  std::map<std::string, const bouncer::ProbeLatency*> one, four;
  for (const auto& x : r.recs) {
    ASSERT_TRUE(x.sqs == 1 || x.sqs == 4);
    EXPECT_EQ(x.samples, 8u);
    const std::string key = x.stage + "/" + x.path + "/" + std::to_string(x.outstanding);
    (x.sqs == 1 ? one : four)[key] = &x;
  }
  ASSERT_EQ(one.size(), 20u);
  ASSERT_EQ(four.size(), 20u);
  for (const auto& [key, x] : one) {
    if (x->outstanding != 1) continue;
    const auto* y = four.at(key);
    EXPECT_EQ(y->min, x->min) << key;
    EXPECT_EQ(y->max, x->max) << key;
  }
  // the doorbells of the sqs-4 points name SQ 0, 1, 2, 3, 0, ... in posting order
  std::vector<unsigned> sq_of_db;
  for (const auto& w : r.mmio) {
    if (w.offset == R::reg::SQ_DB || w.offset == R::reg::SQ_PUSH_DB)
      sq_of_db.push_back(R::field::SQ_DB::SQ.get(w.value));
  }
  ASSERT_EQ(sq_of_db.size(), r.tx.size());
  // points in sweep order per path: (out 1, sqs 1), (out 1, sqs 4), (out 4, sqs 1), (out 4, sqs 4)
  for (size_t i = 0; i < sq_of_db.size(); ++i) {
    const size_t point = i / 8, j = i % 8;
    const bool spread = point % 2 == 1;
    EXPECT_EQ(sq_of_db[i], spread ? j % 4 : 0u) << "doorbell " << i;
  }
}

// More SQs than the Device was opened with: refused before anything is posted.
TEST(ProbeBenchConfig, MoreSqsThanOpenedIsRefused) {
  sim::Platform plat(sim::PlatformConfig{});
  bool ok = true;
  std::string err;
  plat.run([&](bouncer::hal::Device& hal) {
    auto dev = bouncer::Device::open(hal);  // num_sq 1
    ASSERT_TRUE(dev.ok()) << dev.error().message;
    bouncer::ContextDiag diag(**dev);
    bouncer::ProbeBenchConfig cfg;
    cfg.sqs = {1, 2};
    auto res = bouncer::run_probe_bench(**dev, diag, cfg);
    ok = res.ok();
    if (!ok) err = res.error().message;
  });
  EXPECT_FALSE(ok);
  EXPECT_NE(err.find("2 SQs asked for"), std::string::npos) << err;
  EXPECT_TRUE(plat.tx_frames().empty());
}

INSTANTIATE_TEST_SUITE_P(Width, ProbeBench, ::testing::Values(64u, 512u),
                         [](const auto& info) { return "w" + std::to_string(info.param); });

// Bad sweeps are refused before anything is posted.
TEST(ProbeBenchConfig, BadSweepIsRefused) {
  bouncer::ProbeBenchConfig cfg;
  cfg.paths = {"carrier_pigeon"};
  bool ok = true;
  std::string err;
  const BenchRun r = run_bench(64, cfg, &ok, &err);
  EXPECT_FALSE(ok);
  EXPECT_NE(err.find("unknown path"), std::string::npos) << err;
  EXPECT_TRUE(r.tx.empty());
}

}  // namespace

// libsystemc provides main() and calls sc_main().
extern "C" int sc_main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
