// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// Several reject SQs (NUM_SQ = 4, the default build) end to end: the real driver against the
// verilated bouncer_core in the co-simulation, both widths (the test parameter).
//  - Interleaved posts on the 4 SQs, ring and push: every WQE gets exactly one CQE carrying
//    its SQ_IDX and wqe_idx, and every frame on the wire equals the golden model's.
//  - With all 4 SQs loaded before the engine starts, the service order (CQE order) rotates
//    strictly, one WQE per SQ per turn.
//  - Ring wrap and polarity are per SQ: 4-entry rings wrapping at different times.
//  - A doorbell for SQ >= NUM_SQ is ignored and counted in STAT_SQ_DB_BAD: no CQE, no frame,
//    no index changed.
//  - Error WQEs (stale polarity, bad opcode) on one SQ complete with their error on that SQ and
//    do not disturb the others.
//  - Completions are posted (a CQE queue in front of the CQ writer): with the CQ full the
//    engine runs ahead by the queue's depth, SQ_CI counts only written CQEs, and every WQE
//    still completes exactly once.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <deque>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "bouncer/cm.hpp"
#include "bouncer/cm_diag.hpp"
#include "bouncer/device.hpp"
#include "bouncer/device_faults.hpp"
#include "bouncer/regs.hpp"
#include "bouncer/sim/platform.hpp"
#include "golden/frame_parser.hpp"
#include "golden/reject_frame.hpp"
#include "reject_params.hpp"

using namespace std::chrono_literals;

namespace {

using bouncer::CmContext;
using bouncer::Completion;
using bouncer::ContextDiag;
using bouncer::Device;
using bouncer::DeviceConfig;
using bouncer::RejectOptions;
namespace R = bouncer::regs;
namespace sim = bouncer::sim;

constexpr unsigned kSqs = 4;
constexpr std::chrono::nanoseconds kTimeout = 1600us;  // 400 000 cycles

CmContext make_ctx(std::mt19937_64& rng, uint32_t cm_id) {
  CmContext c;
  c.rem_mac = {
      0x02, 0x00, 0x5e, 0x20, static_cast<uint8_t>(cm_id >> 8), static_cast<uint8_t>(cm_id)};
  c.loc_mac = {0x02, 0xbb, 0xcc, 0xdd, 0xee, 0x02};
  c.loc_ip = 0x0A000001;
  c.rem_ip = 0x0A000200 | (cm_id & 0xFF);
  c.loc_port = 20049;
  c.rem_port = static_cast<uint16_t>(41000 + cm_id);
  c.rcv_wnd = 0x2000;
  c.ttl = 64;
  c.snd_nxt = static_cast<uint32_t>(rng());
  c.rcv_nxt = static_cast<uint32_t>(rng());
  c.req_rev = (cm_id % 2) ? 2 : 1;
  c.req_flags = static_cast<uint8_t>(0x40 | ((cm_id % 2) ? 0x10 : 0));
  c.ip_id = static_cast<uint16_t>(rng());
  c.req_ird_ord = 0x00080008u;
  return c;
}

using Key = std::pair<unsigned, uint16_t>;  // (sq, wqe_idx)

// What a test posted and expects back.
struct Posted {
  uint32_t cm_id = 0;
  uint64_t wr_id = 0;
  bool push = false;
  bool error = false;          // an error CQE, no frame
  std::vector<uint8_t> frame;  // the golden frame (success)
  golden::RejectParams params;
};

// Test bench around one Device with 4 SQs and the diagnostic context path (ContextDiag).
struct Bench {
  Device& dev;
  ContextDiag cm;
  std::mt19937_64 rng{11};
  uint32_t next_id = 0;
  std::map<Key, std::deque<Posted>> posted;  // per (sq, wqe_idx), one per lap of the ring
  size_t n_posted = 0;
  std::vector<Completion> done;  // in CQE order

  std::map<uint32_t, CmContext> ready;  // contexts written ahead (the CQP needs CTRL.ENABLE)

  explicit Bench(Device& d) : dev(d), cm(d) {}

  // Writes the contexts of the next n posts now.
  void prepare(uint32_t n) {
    for (uint32_t id = next_id; id < next_id + n; ++id) {
      auto ctx = make_ctx(rng, id);
      ASSERT_TRUE(cm.write_context(id, ctx).ok());
      ready[id] = ctx;
    }
  }

  // A host-written context (unless prepared) and one reject of it on SQ sq.
  void post(unsigned sq, bool push, size_t pd_len) {
    const uint32_t id = next_id++;
    if (!ready.contains(id)) prepare_one(id);
    const CmContext ctx = ready[id];
    std::vector<std::byte> pd(pd_len);
    for (auto& b : pd) b = static_cast<std::byte>(rng());
    RejectOptions o;
    o.sq = sq;
    o.push = push;
    o.wr_id = 0xAB00'0000ull | (uint64_t{sq} << 16) | id;
    auto idx = cm.post_reject(id, pd, o);
    ASSERT_TRUE(idx.ok()) << idx.error().message;
    Posted p;
    p.cm_id = id;
    p.wr_id = o.wr_id;
    p.push = push;
    p.params = bouncer::testing::reject_params(ctx, pd);
    p.frame = golden::build_mpa_reject_frame(p.params);
    posted[Key{sq, *idx}].push_back(std::move(p));
    ++n_posted;
  }

  void prepare_one(uint32_t id) {
    auto ctx = make_ctx(rng, id);
    ASSERT_TRUE(cm.write_context(id, ctx).ok());
    ready[id] = ctx;
  }

  // A raw WQE the hardware must refuse (stale polarity or a bad opcode) on SQ sq.
  void post_bad(unsigned sq, bool stale) {
    bouncer::testing::FaultyRejectWqe w;
    w.sq = sq;
    w.cm_id = 900 + sq;
    w.wr_id = 0xEE00ull | sq;
    if (stale) {
      w.stale = true;
    } else {
      w.opcode = 0x3F;
    }
    auto idx = bouncer::testing::DeviceFaults::post_reject(dev, w);
    ASSERT_TRUE(idx.ok()) << idx.error().message;
    Posted p;
    p.cm_id = w.cm_id;
    p.wr_id = w.wr_id;
    p.error = true;
    posted[Key{sq, *idx}].push_back(std::move(p));
    ++n_posted;
  }

  // Collects n completions in CQE order; each must match a posted WQE not yet completed.
  void reap(size_t n) {
    for (size_t i = 0; i < n; ++i) {
      auto c = dev.wait_completion(kTimeout);
      ASSERT_TRUE(c.ok()) << c.error().message;
      ASSERT_FALSE(c->unexpected) << c->status();
      done.push_back(*c);
    }
  }

  // Every posted WQE completed exactly once, on its SQ, with its wr_id and status; the TX
  // frames are the golden frames of the successful ones, in CQE order.
  void check(const sim::Platform& plat, size_t tx0) {
    std::vector<Posted> frames;
    auto left = posted;
    for (const Completion& c : done) {
      const Key k{c.sq, c.wqe_idx};
      auto it = left.find(k);
      ASSERT_TRUE(it != left.end() && !it->second.empty())
          << "CQE for SQ " << k.first << " wqe_idx " << k.second << ": nothing outstanding";
      const Posted p = it->second.front();  // the oldest lap: the ring completes in order
      it->second.pop_front();
      EXPECT_EQ(c.wr_id, p.wr_id) << "SQ " << k.first << " wqe_idx " << k.second;
      EXPECT_EQ(c.cm_id, p.cm_id);
      if (p.error) {
        EXPECT_TRUE(c.error) << c.status();
        EXPECT_EQ(c.frame_len, 0u);
      } else {
        EXPECT_TRUE(c.ok()) << c.status();
        EXPECT_EQ(c.frame_len, p.frame.size());
        frames.push_back(p);
      }
    }
    for (const auto& [k, q] : left)
      EXPECT_TRUE(q.empty()) << "SQ " << k.first << " wqe_idx " << k.second << ": no CQE";
    EXPECT_EQ(done.size(), n_posted) << "every WQE gets exactly one CQE";
    const auto& tx = plat.tx_frames();
    ASSERT_EQ(tx.size() - tx0, frames.size()) << "frames on the wire vs. successful rejects";
    for (size_t i = 0; i < frames.size(); ++i) {
      const auto& got = tx[tx0 + i].bytes;
      ASSERT_EQ(got, frames[i].frame) << "frame " << i << " cm_id " << frames[i].cm_id;
      std::string why;
      auto parsed = golden::parse_mpa_reply(got, &why);
      ASSERT_TRUE(parsed) << why;
      EXPECT_TRUE(golden::reject_matches_params(*parsed, frames[i].params, &why)) << why;
    }
  }
};

sim::PlatformConfig config(unsigned width) {
  sim::PlatformConfig cfg;
  cfg.data_width = width;
  return cfg;
}

Device* open4(bouncer::hal::Device& hal, std::unique_ptr<Device>& keep, uint32_t sq_entries,
              uint32_t cq_entries = 64) {
  DeviceConfig cfg;
  cfg.num_sq = kSqs;
  cfg.sq_entries = sq_entries;
  cfg.cq_entries = cq_entries;
  auto d = Device::open(hal, cfg);
  EXPECT_TRUE(d.ok()) << d.error().message;
  if (!d.ok()) return nullptr;
  keep = std::move(d).value();
  EXPECT_EQ(keep->caps().num_sq, kSqs) << "CAPS.NUM_SQ of the default build";
  EXPECT_TRUE(keep->wait_cm_ready(400us).ok());
  return keep.get();
}

class MultiSq : public ::testing::TestWithParam<unsigned> {};

// Interleaved ring and push posts on the 4 SQs, a few in flight on each.
TEST_P(MultiSq, InterleavedRingAndPushEachGetOneCqe) {
  sim::Platform plat(config(GetParam()));
  plat.run([&](bouncer::hal::Device& hal) {
    std::unique_ptr<Device> keep;
    Device* dev = open4(hal, keep, 16);
    ASSERT_NE(dev, nullptr);
    Bench b(*dev);
    const size_t lens[] = {0, 7, 32, 33, 120};
    unsigned pushes = 0;
    for (unsigned round = 0; round < 6; ++round) {
      for (unsigned k = 0; k < kSqs; ++k) {
        const unsigned sq = (round + 3 * k) % kSqs;  // a different SQ order each round
        const bool push = ((round + sq) % 2) == 1;
        pushes += push;
        b.post(sq, push, lens[(round * kSqs + k) % 5]);
      }
      b.reap(round == 5 ? b.n_posted - b.done.size() : 2);
    }
    b.check(plat, 0);
    for (unsigned q = 0; q < kSqs; ++q) {
      EXPECT_EQ(dev->sq_outstanding(q), 0u);
      EXPECT_EQ(hal.read32(R::reg::sq_ci(q)), 6u) << "SQ " << q;
    }
    EXPECT_EQ(hal.read32(R::reg::STAT_PUSH_USED) + hal.read32(R::reg::STAT_PUSH_DROPPED), pushes)
        << "every pushed WQE taken from its page or fetched (and counted)";
    EXPECT_EQ(hal.read32(R::reg::STAT_SQ_WQES), 24u);
    EXPECT_EQ(hal.read32(R::reg::STAT_SQ_ERRORS), 0u);
    EXPECT_EQ(hal.read32(R::reg::STAT_SQ_DB_BAD), 0u);
  });
}

// All 4 SQs loaded while the engines are stopped: once enabled, the CQE order rotates
// strictly over the SQs, one WQE each per turn; then a shorter SQ drops out of the rotation.
TEST_P(MultiSq, ServiceOrderRotatesStrictly) {
  sim::Platform plat(config(GetParam()));
  plat.run([&](bouncer::hal::Device& hal) {
    std::unique_ptr<Device> keep;
    Device* dev = open4(hal, keep, 8);
    ASSERT_NE(dev, nullptr);
    Bench b(*dev);
    b.prepare(18);
    hal.write32(R::reg::CTRL, 0);
    const unsigned per_sq[kSqs] = {5, 5, 5, 3};
    for (unsigned i = 0; i < 5; ++i)
      for (unsigned q = 0; q < kSqs; ++q)
        if (i < per_sq[q]) b.post(q, false, 16);
    EXPECT_EQ(hal.read32(R::reg::STAT_SQ_WQES), 0u) << "nothing runs while CTRL.ENABLE is 0";
    hal.write32(R::reg::CTRL, R::field::CTRL::ENABLE.put(1));
    b.reap(b.n_posted);
    ASSERT_EQ(b.done.size(), 18u);
    const unsigned s = b.done[0].sq;
    for (size_t i = 0; i < 12; ++i) {
      EXPECT_EQ(b.done[i].sq, (s + i) % kSqs) << "CQE " << i;
      EXPECT_EQ(b.done[i].wqe_idx, i / kSqs) << "CQE " << i;
    }
    // SQ 3 is empty after three turns: 0, 1, 2 keep rotating without it
    for (size_t i = 12; i < 18; ++i) EXPECT_NE(b.done[i].sq, 3u) << "CQE " << i;
    std::vector<unsigned> tail;
    for (size_t i = 12; i < 18; ++i) tail.push_back(b.done[i].sq);
    for (size_t i = 3; i < tail.size(); ++i) EXPECT_EQ(tail[i], tail[i - 3]) << i;
    EXPECT_NE(tail[0], tail[1]);
    EXPECT_NE(tail[1], tail[2]);
    EXPECT_NE(tail[0], tail[2]);
    b.check(plat, 0);
  });
}

// 4-entry rings, a different number of WQEs per SQ, a few at a time: each SQ wraps (and
// flips its polarity) on its own schedule and every WQE still completes once.
TEST_P(MultiSq, RingWrapAndPolarityPerSq) {
  sim::Platform plat(config(GetParam()));
  plat.run([&](bouncer::hal::Device& hal) {
    std::unique_ptr<Device> keep;
    Device* dev = open4(hal, keep, 4);
    ASSERT_NE(dev, nullptr);
    Bench b(*dev);
    const unsigned total[kSqs] = {5, 11, 2, 9};
    unsigned sent[kSqs] = {};
    for (bool more = true; more;) {
      more = false;
      size_t batch = 0;
      for (unsigned q = 0; q < kSqs; ++q) {
        for (unsigned k = 0; k < 3 && sent[q] < total[q]; ++k, ++sent[q], ++batch)
          b.post(q, (sent[q] % 3) == 2, 8);
        more |= sent[q] < total[q];
      }
      b.reap(batch);
    }
    b.check(plat, 0);
    for (unsigned q = 0; q < kSqs; ++q) {
      EXPECT_EQ(hal.read32(R::reg::sq_ci(q)), total[q] % 4) << "SQ " << q;
      EXPECT_EQ(hal.read32(R::reg::sq_pi(q)), total[q] % 4) << "SQ " << q;
    }
    EXPECT_EQ(hal.read32(R::reg::STAT_SQ_ERRORS), 0u) << "no stale WQE after any wrap";
  });
}

// Doorbells naming SQ 4 .. 255: ignored and counted, nothing sent, no CQE, no index moved;
// the SQs still work afterwards.
TEST_P(MultiSq, DoorbellForAnAbsentSqIsIgnoredAndCounted) {
  sim::Platform plat(config(GetParam()));
  plat.run([&](bouncer::hal::Device& hal) {
    std::unique_ptr<Device> keep;
    Device* dev = open4(hal, keep, 8);
    ASSERT_NE(dev, nullptr);
    Bench b(*dev);
    b.post(1, false, 4);
    b.reap(1);
    const uint32_t cq_tail = hal.read32(R::reg::CQ_TAIL);
    const size_t tx = plat.tx_frames().size();
    namespace db = R::field::SQ_DB;
    unsigned bad = 0;
    for (unsigned q : {4u, 5u, 15u, 255u}) {
      hal.write32(R::reg::SQ_DB, db::SQ.put(q) | db::PI.put(3));
      hal.write32(R::reg::SQ_PUSH_DB, db::SQ.put(q) | db::PI.put(2));
      bad += 2;
    }
    hal.wait_cycles(5000);
    EXPECT_EQ(hal.read32(R::reg::STAT_SQ_DB_BAD), bad);
    EXPECT_EQ(hal.read32(R::reg::CQ_TAIL), cq_tail) << "no CQE";
    EXPECT_EQ(plat.tx_frames().size(), tx) << "no frame";
    EXPECT_FALSE(dev->poll_cq());
    for (unsigned q = 0; q < kSqs; ++q) {
      EXPECT_EQ(hal.read32(R::reg::sq_pi(q)), q == 1 ? 1u : 0u) << "SQ " << q;
      EXPECT_EQ(hal.read32(R::reg::sq_ci(q)), q == 1 ? 1u : 0u) << "SQ " << q;
    }
    EXPECT_EQ(hal.read32(R::reg::STAT_SQ_WQES), 1u);
    for (unsigned q = 0; q < kSqs; ++q) b.post(q, q == 2, 4);
    b.reap(kSqs);
    b.check(plat, 0);
  });
}

// A stale WQE on SQ 1 and a bad opcode on SQ 2, among good rejects on every SQ: the errors
// complete on their SQs with their codes, nothing is sent for them, and every other WQE
// completes and sends its frame.
TEST_P(MultiSq, ErrorWqeOnOneSqDoesNotDisturbTheOthers) {
  sim::Platform plat(config(GetParam()));
  plat.run([&](bouncer::hal::Device& hal) {
    std::unique_ptr<Device> keep;
    Device* dev = open4(hal, keep, 8);
    ASSERT_NE(dev, nullptr);
    Bench b(*dev);
    b.prepare(8);
    hal.write32(R::reg::CTRL, 0);  // load everything, then run: the errors sit mid-rotation
    for (unsigned q = 0; q < kSqs; ++q) b.post(q, false, 10);
    b.post_bad(1, true);
    b.post_bad(2, false);
    for (unsigned q = 0; q < kSqs; ++q) b.post(q, q == 3, 20);
    hal.write32(R::reg::CTRL, R::field::CTRL::ENABLE.put(1));
    b.reap(b.n_posted);
    b.check(plat, 0);
    unsigned errors = 0;
    for (const Completion& c : b.done) {
      if (!c.error) continue;
      ++errors;
      if (c.sq == 1) {
        EXPECT_EQ(c.major, static_cast<uint16_t>(R::CqMajor::WQE));
        EXPECT_EQ(c.minor, static_cast<uint16_t>(R::CqMinor::STALE_WQE));
        EXPECT_EQ(c.wqe_idx, 1u);
      } else {
        EXPECT_EQ(c.sq, 2u);
        EXPECT_EQ(c.minor, static_cast<uint16_t>(R::CqMinor::BAD_OPCODE));
        EXPECT_EQ(c.wqe_idx, 1u);
      }
    }
    EXPECT_EQ(errors, 2u);
    EXPECT_EQ(hal.read32(R::reg::STAT_SQ_ERRORS), 2u);
    EXPECT_EQ(hal.read32(R::reg::sq_ci(1)), 3u);
    EXPECT_EQ(hal.read32(R::reg::sq_ci(2)), 3u);
    EXPECT_EQ(hal.read32(R::reg::sq_ci(0)), 2u);
  });
}

// Completions are posted: the SQ engine hands each CQE to a 4-entry queue in front of the CQ
// writer and goes on with the next WQE. With the CQ full (the host not reaping) the engine
// runs ahead of the CQ by exactly the queue's depth and then waits; SQ_CI counts only the
// CQEs in host memory. Once the host reaps, every WQE, the error WQE included, completes
// exactly once, each SQ in its order.
TEST_P(MultiSq, CompletionsPostedSqCiCountsWrittenCqes) {
  sim::Platform plat(config(GetParam()));
  plat.run([&](bouncer::hal::Device& hal) {
    std::unique_ptr<Device> keep;
    Device* dev = open4(hal, keep, 8, 8);
    ASSERT_NE(dev, nullptr);
    Bench b(*dev);
    b.prepare(24);
    hal.write32(R::reg::CTRL, 0);
    for (unsigned i = 0; i < 6; ++i) {
      for (unsigned q = 0; q < kSqs; ++q) {
        if (i == 2 && q == 1) {
          b.post_bad(1, false);
        } else {
          b.post(q, q == 3 && i == 0, 8);
        }
      }
    }
    hal.write32(R::reg::CTRL, R::field::CTRL::ENABLE.put(1));
    hal.wait_cycles(30'000);
    const uint32_t tail = hal.read32(R::reg::CQ_TAIL);
    EXPECT_EQ(tail, 7u) << "an 8-entry CQ holds 7 unconsumed CQEs";
    EXPECT_EQ(hal.read32(R::reg::STAT_SQ_WQES), tail + 4)
        << "the engine completed the queue's depth of WQEs past the full CQ";
    uint32_t ci_sum = 0;
    for (unsigned q = 0; q < kSqs; ++q) ci_sum += hal.read32(R::reg::sq_ci(q));
    EXPECT_EQ(ci_sum, tail) << "SQ_CI moves past a WQE only when its CQE is in host memory";
    const uint32_t st = hal.read32(R::reg::STATUS);
    EXPECT_EQ(R::field::STATUS::CQ_FULL.get(st), 1u);
    EXPECT_EQ(R::field::STATUS::SQ_BUSY.get(st), 1u);
    b.reap(b.n_posted);
    b.check(plat, 0);
    for (unsigned q = 0; q < kSqs; ++q) {
      EXPECT_EQ(hal.read32(R::reg::sq_ci(q)), 6u) << "SQ " << q;
      EXPECT_EQ(dev->sq_outstanding(q), 0u);
    }
    EXPECT_EQ(hal.read32(R::reg::STAT_SQ_WQES), 24u);
    EXPECT_EQ(hal.read32(R::reg::STAT_SQ_ERRORS), 1u);
    EXPECT_EQ(R::field::STATUS::SQ_BUSY.get(hal.read32(R::reg::STATUS)), 0u);
  });
}

INSTANTIATE_TEST_SUITE_P(Width, MultiSq, ::testing::Values(64u, 512u),
                         [](const auto& i) { return "w" + std::to_string(i.param); });

}  // namespace

// libsystemc provides main() and calls sc_main().
extern "C" int sc_main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
