// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// Unit test of rtl/cm/bouncer_conn_table at two sizes (64 entries: collisions and full
// buckets are easy to reach; 65536 entries). A reference model (std::map plus the same
// keyed bucket hash and WAYS-per-bucket rule, so FULL is predicted exactly) is compared on
// every response, under random command gaps and random result-port backpressure.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <map>
#include <memory>
#include <random>
#include <tuple>
#include <vector>

// Verilator 5.006's verilated_types.h has an unused parameter; not our code.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "Vconn_table_big.h"
#include "Vconn_table_small.h"
#include "verilated.h"
#pragma GCC diagnostic pop

namespace {

constexpr unsigned kWays = 4;  // the RTL default
constexpr unsigned kLatency = 6;

enum Op : uint8_t { kLookup = 0, kInsert = 1, kDelete = 2 };
enum Status : uint8_t { kOk = 0, kNotFound = 1, kExists = 2, kFull = 3 };

struct Tuple {
  uint32_t rem_ip = 0;
  uint32_t loc_ip = 0;
  uint16_t rem_port = 0;
  uint16_t loc_port = 0;
  auto key() const { return std::tie(rem_ip, loc_ip, rem_port, loc_port); }
  bool operator<(const Tuple& o) const { return key() < o.key(); }
  bool operator==(const Tuple& o) const { return key() == o.key(); }
};

struct Cmd {
  Op op = kLookup;
  Tuple t;
  uint32_t cm_id = 0;
};

struct Res {
  bool hit = false;
  uint32_t cm_id = 0;
  uint8_t status = 0;
};

uint32_t rotl(uint32_t x, unsigned n) { return (x << n) | (x >> (32 - n)); }

// The bucket hash, written from the RTL's header comment and equations.
uint32_t bucket_of(const Tuple& t, uint32_t key, unsigned bucket_log2) {
  uint32_t a0 = t.rem_ip ^ key;
  uint32_t b0 = t.loc_ip ^ rotl(key, 16);
  uint32_t c0 = ((uint32_t{t.rem_port} << 16) | t.loc_port) ^ rotl(key, 8) ^ 0x9E3779B9u;
  uint32_t a1 = a0 + b0;
  uint32_t c1 = c0 ^ rotl(a1, 7);
  uint32_t b1 = b0 + c1;
  uint32_t a2 = a1 ^ rotl(b1, 13);
  uint32_t c2 = c1 + a2;
  uint32_t x = c2 ^ rotl(b1, 17);
  uint32_t idx = 0;
  for (unsigned i = 0; i < 32; ++i) idx ^= ((x >> i) & 1u) << (i % bucket_log2);
  return idx;
}

// Reference model: the map plus per-bucket occupancy.
class RefTable {
 public:
  RefTable(uint32_t key, unsigned depth_log2)
      : key_(key), bucket_log2_(depth_log2 - 2), count_(size_t{1} << (depth_log2 - 2), 0) {}

  Res apply(const Cmd& c) {
    Res r;
    auto it = map_.find(c.t);
    r.hit = it != map_.end();
    r.cm_id = r.hit ? it->second : 0;
    uint32_t b = bucket(c.t);
    switch (c.op) {
      case kInsert:
        if (r.hit) {
          r.status = kExists;
        } else if (count_[b] == kWays) {
          r.status = kFull;
        } else {
          map_[c.t] = c.cm_id;
          ++count_[b];
          r.status = kOk;
        }
        break;
      case kDelete:
        if (r.hit) {
          map_.erase(it);
          --count_[b];
          r.status = kOk;
        } else {
          r.status = kNotFound;
        }
        break;
      default:
        r.status = r.hit ? kOk : kNotFound;
        break;
    }
    return r;
  }
  uint32_t bucket(const Tuple& t) const { return bucket_of(t, key_, bucket_log2_); }
  size_t size() const { return map_.size(); }
  const std::map<Tuple, uint32_t>& entries() const { return map_; }
  void clear() {
    map_.clear();
    std::fill(count_.begin(), count_.end(), 0);
  }

 private:
  uint32_t key_;
  unsigned bucket_log2_;
  std::vector<unsigned> count_;
  std::map<Tuple, uint32_t> map_;
};

template <typename Model, unsigned DepthLog2>
class Harness {
 public:
  static constexpr unsigned kDepthLog2 = DepthLog2;
  static constexpr unsigned kBuckets = 1u << (DepthLog2 - 2);

  Harness(uint64_t seed, uint32_t key) : rng_(seed), ref_(key, DepthLog2), key_(key) {
    ctx_.randReset(0);
    m_ = std::make_unique<Model>(&ctx_, "conn");
    reset();
  }

  // Reset pulse, then run the init sweep with cmd_valid held: nothing may be accepted
  // before init_done. Returns the cycles from reset release to init_done.
  uint64_t reset() {
    m_->hash_key = key_;
    m_->cmd_valid = 0;
    m_->res_ready = 0;
    m_->rst = 1;
    for (int i = 0; i < 3; ++i) tick();
    m_->rst = 0;
    m_->cmd_valid = 1;  // a command waiting: must not be taken during the sweep
    m_->cmd_op = kInsert;
    uint64_t n = 0;
    for (;;) {
      settle();
      if (m_->init_done) break;
      EXPECT_FALSE(m_->cmd_ready) << "command accepted before init_done";
      EXPECT_FALSE(m_->res_valid);
      edge();
      ++n;
      if (n > (1u << 20)) {
        ADD_FAILURE() << "init_done never rose";
        break;
      }
    }
    m_->cmd_valid = 0;
    ref_.clear();
    expected_.clear();
    return n;
  }

  void settle() {
    m_->clk = 0;
    m_->eval();
  }
  void edge() {
    m_->clk = 1;
    m_->eval();
    ++cycle_;
    full_pulses_ += m_->insert_fail_full;
  }
  void tick() {
    settle();
    edge();
  }

  // One cycle: present `cmd` (if any), sample handshakes, clock. Returns whether the
  // command was accepted; compares any result that leaves.
  bool step(const Cmd* cmd, bool ready) {
    m_->cmd_valid = cmd != nullptr;
    if (cmd) {
      m_->cmd_op = cmd->op;
      m_->cmd_rem_ip = cmd->t.rem_ip;
      m_->cmd_loc_ip = cmd->t.loc_ip;
      m_->cmd_rem_port = cmd->t.rem_port;
      m_->cmd_loc_port = cmd->t.loc_port;
      m_->cmd_cm_id = cmd->cm_id;
    } else {
      // garbage on the bus while invalid
      m_->cmd_op = static_cast<uint8_t>(rng_() & 3);
      m_->cmd_rem_ip = static_cast<uint32_t>(rng_());
    }
    m_->res_ready = ready;
    settle();
    bool acc = cmd && m_->cmd_ready;
    if (m_->cmd_ready) {
      EXPECT_TRUE(m_->init_done);
    }
    if (m_->res_valid && ready) check_result();
    if (acc) {
      expected_.push_back({ref_.apply(*cmd), cycle_});
      if (accepted_++ == 0) first_accept_ = cycle_;
      last_accept_ = cycle_;
    }
    edge();
    return acc;
  }

  void check_result() {
    ASSERT_FALSE(expected_.empty()) << "unexpected result at cycle " << cycle_;
    auto [exp, at] = expected_.front();
    expected_.pop_front();
    EXPECT_EQ(m_->res_hit, exp.hit) << "result #" << results_;
    EXPECT_EQ(m_->res_cm_id, exp.cm_id) << "result #" << results_;
    EXPECT_EQ(m_->res_status, exp.status) << "result #" << results_;
    latencies_.push_back(cycle_ - at);
    if (exp.status == kFull) ++full_expected_;
    ++results_;
  }

  // Issue every command (random gaps with probability gap_p, result ready with ready_p),
  // then drain and check the occupancy against the model.
  void run(const std::vector<Cmd>& cmds, double gap_p, double ready_p) {
    std::bernoulli_distribution gap(gap_p), rdy(ready_p);
    size_t i = 0;
    uint64_t guard = 0;
    while (i < cmds.size()) {
      bool g = gap(rng_);
      if (step(g ? nullptr : &cmds[i], rdy(rng_))) ++i;
      ASSERT_LT(++guard, 100 * cmds.size() + 1000) << "stuck";
    }
    drain();
  }

  void drain() {
    for (int n = 0; !expected_.empty() && n < 1000; ++n) step(nullptr, true);
    EXPECT_TRUE(expected_.empty());
    for (int n = 0; n < 3; ++n) step(nullptr, true);  // occupancy/pulse registers settle
    settle();
    EXPECT_FALSE(m_->res_valid);
    EXPECT_EQ(m_->occupancy, ref_.size());
    EXPECT_EQ(full_pulses_, full_expected_);
  }

  Tuple random_tuple() {
    return Tuple{static_cast<uint32_t>(rng_()), static_cast<uint32_t>(rng_()),
                 static_cast<uint16_t>(rng_()), static_cast<uint16_t>(rng_())};
  }
  // A fresh random tuple that hashes to `bucket`.
  Tuple tuple_in_bucket(uint32_t bucket) {
    for (;;) {
      Tuple t = random_tuple();
      if (ref_.bucket(t) == bucket && !ref_.entries().contains(t)) return t;
    }
  }
  uint32_t random_id() { return static_cast<uint32_t>(rng_() & 0x3FF); }

  VerilatedContext ctx_;  // declared before the model: destroyed after it
  std::unique_ptr<Model> m_;
  std::mt19937_64 rng_;
  RefTable ref_;
  uint32_t key_;
  std::deque<std::pair<Res, uint64_t>> expected_;
  std::vector<uint64_t> latencies_;
  uint64_t cycle_ = 0;
  uint64_t accepted_ = 0;
  uint64_t first_accept_ = 0;
  uint64_t last_accept_ = 0;
  uint64_t results_ = 0;
  uint64_t full_pulses_ = 0;
  uint64_t full_expected_ = 0;
};

using Small = Harness<Vconn_table_small, 6>;
using Big = Harness<Vconn_table_big, 16>;

// Random mix over a pool of tuples sized so that hits, misses, EXISTS and (for the small
// table) FULL all occur often.
template <typename H>
std::vector<Cmd> random_mix(H& h, size_t n, size_t pool_size) {
  std::vector<Tuple> pool(pool_size);
  for (auto& t : pool) t = h.random_tuple();
  std::vector<Cmd> cmds(n);
  std::uniform_int_distribution<size_t> pick(0, pool_size - 1);
  for (auto& c : cmds) {
    unsigned r = h.rng_() % 10;
    c.op = r < 4 ? kInsert : (r < 7 ? kDelete : kLookup);
    if (h.rng_() % 16 == 0) c.op = static_cast<Op>(3);  // reserved op: executes as LOOKUP
    c.t = pool[pick(h.rng_)];
    c.cm_id = h.random_id();
  }
  return cmds;
}

template <typename H>
void random_test(uint64_t seed, size_t pool_size) {
  std::mt19937_64 seeds(seed);
  H h(seeds(), static_cast<uint32_t>(seeds()));
  struct Phase {
    double gap, ready;
  };
  for (Phase p : {Phase{0.0, 1.0}, Phase{0.3, 0.7}, Phase{0.0, 0.3}, Phase{0.6, 0.9}}) {
    auto cmds = random_mix(h, 5000, pool_size);
    h.run(cmds, p.gap, p.ready);
  }
  EXPECT_EQ(h.results_, 20000u);
  if (H::kDepthLog2 == 6) {
    EXPECT_GT(h.full_expected_, 100u) << "FULL not exercised";
  }
}

TEST(ConnTable, RandomMixSmall) { random_test<Small>(1, 200); }
TEST(ConnTable, RandomMixBig) { random_test<Big>(2, 3000); }

// Random mix on the big table with a pool larger than the table: it fills to the brim.
TEST(ConnTable, RandomMixBigNearFull) {
  Big h(3, 0xC0FFEE01u);
  std::vector<Cmd> fill;
  for (int i = 0; i < 70000; ++i) fill.push_back({kInsert, h.random_tuple(), h.random_id()});
  h.run(fill, 0.0, 1.0);
  EXPECT_GT(h.ref_.size(), 50000u);
  EXPECT_GT(h.full_expected_, 1000u);
  h.run(random_mix(h, 20000, 70000), 0.2, 0.8);
}

// Back-to-back commands to one bucket: every read-after-write distance 1, 2, 3, 4.
template <typename H>
void same_bucket_test(uint64_t seed) {
  H h(seed, 0x5EED0000u ^ static_cast<uint32_t>(seed));
  for (unsigned rep = 0; rep < 200; ++rep) {
    uint32_t b = static_cast<uint32_t>(h.rng_() % H::kBuckets);
    std::vector<Tuple> ts;
    for (unsigned i = 0; i < kWays + 2; ++i) ts.push_back(h.tuple_in_bucket(b));
    std::vector<Cmd> cmds;
    for (unsigned i = 0; i < 24; ++i) {
      Cmd c{static_cast<Op>(h.rng_() % 3), ts[h.rng_() % ts.size()], h.random_id()};
      cmds.push_back(c);
    }
    // gap pattern: back to back, or a single bubble, so each hazard distance occurs
    h.run(cmds, rep % 2 ? 0.0 : 0.25, 1.0);
  }
  // explicit sequences: insert then lookup/delete/insert at distance 1 and 2
  uint32_t b = 0;
  Tuple a = h.tuple_in_bucket(b);
  Tuple c = h.tuple_in_bucket(b);
  h.run({{kInsert, a, 7},
         {kLookup, a, 0},
         {kInsert, a, 8},
         {kDelete, a, 0},
         {kLookup, a, 0},
         {kInsert, c, 9},
         {kInsert, a, 10},
         {kDelete, c, 0},
         {kLookup, c, 0},
         {kLookup, a, 0}},
        0.0, 1.0);
}

TEST(ConnTable, SameBucketHazardsSmall) { same_bucket_test<Small>(11); }
TEST(ConnTable, SameBucketHazardsBig) { same_bucket_test<Big>(12); }

// Fill one bucket to FULL, then delete one way and re-insert into the freed way.
template <typename H>
void fill_bucket_test(uint64_t seed) {
  H h(seed, 0xA5A5F00Du);
  uint32_t b = static_cast<uint32_t>(h.rng_() % H::kBuckets);
  std::vector<Tuple> ts;
  for (unsigned i = 0; i < kWays + 3; ++i) ts.push_back(h.tuple_in_bucket(b));
  std::vector<Cmd> cmds;
  for (unsigned i = 0; i < kWays + 3; ++i) cmds.push_back({kInsert, ts[i], 100 + i});
  h.run(cmds, 0.0, 1.0);
  EXPECT_EQ(h.full_expected_, 3u);
  EXPECT_EQ(h.full_pulses_, 3u);
  EXPECT_EQ(h.m_->occupancy, kWays);
  // every stored tuple hits with its id, the refused ones miss
  cmds.clear();
  for (unsigned i = 0; i < kWays + 3; ++i) cmds.push_back({kLookup, ts[i], 0});
  // delete way 1, re-insert a refused tuple, then the deleted one is FULL
  cmds.push_back({kDelete, ts[1], 0});
  cmds.push_back({kInsert, ts[kWays], 55});
  cmds.push_back({kInsert, ts[1], 56});
  cmds.push_back({kLookup, ts[kWays], 0});
  cmds.push_back({kLookup, ts[1], 0});
  // delete then re-insert the same tuple with a new cm_id
  cmds.push_back({kDelete, ts[0], 0});
  cmds.push_back({kInsert, ts[0], 77});
  cmds.push_back({kLookup, ts[0], 0});
  cmds.push_back({kDelete, ts[5], 0});  // never stored: NOT_FOUND
  h.run(cmds, 0.0, 1.0);
  EXPECT_EQ(h.m_->occupancy, kWays);
}

TEST(ConnTable, FillBucketSmall) { fill_bucket_test<Small>(21); }
TEST(ConnTable, FillBucketBig) { fill_bucket_test<Big>(22); }

// Occupancy returns to 0 after deleting everything.
template <typename H>
void drain_test(uint64_t seed, size_t n) {
  H h(seed, 0x12345678u);
  std::vector<Cmd> cmds;
  for (size_t i = 0; i < n; ++i) cmds.push_back({kInsert, h.random_tuple(), h.random_id()});
  h.run(cmds, 0.1, 0.8);
  EXPECT_GT(h.m_->occupancy, 0u);
  cmds.clear();
  for (const auto& [t, id] : h.ref_.entries()) cmds.push_back({kDelete, t, 0});
  std::shuffle(cmds.begin(), cmds.end(), h.rng_);
  h.run(cmds, 0.1, 0.8);
  EXPECT_EQ(h.m_->occupancy, 0u);
  EXPECT_EQ(h.ref_.size(), 0u);
}

TEST(ConnTable, DeleteAllSmall) { drain_test<Small>(31, 100); }
TEST(ConnTable, DeleteAllBig) { drain_test<Big>(32, 40000); }

// Init sweep: takes one cycle per bucket, nothing accepted before init_done (checked in
// reset()), and after a second reset everything inserted before misses.
template <typename H>
void init_test(uint64_t seed) {
  H h(seed, 0xFEEDBEEFu);
  std::vector<Cmd> cmds;
  for (int i = 0; i < 300; ++i) cmds.push_back({kInsert, h.random_tuple(), h.random_id()});
  h.run(cmds, 0.0, 1.0);
  auto stored = h.ref_.entries();
  ASSERT_FALSE(stored.empty());
  uint64_t sweep = h.reset();
  EXPECT_GE(sweep, H::kBuckets);
  EXPECT_LE(sweep, H::kBuckets + 2);
  h.settle();
  EXPECT_EQ(h.m_->occupancy, 0u);
  cmds.clear();
  for (const auto& [t, id] : stored) cmds.push_back({kLookup, t, 0});
  for (const auto& [t, id] : stored) cmds.push_back({kDelete, t, 0});
  h.run(cmds, 0.0, 1.0);  // the model is empty: all NOT_FOUND
  h.run(random_mix(h, 2000, 150), 0.1, 0.9);
}

TEST(ConnTable, InitSweepSmall) { init_test<Small>(41); }
TEST(ConnTable, InitSweepBig) { init_test<Big>(42); }

// Throughput with res_ready held: one command per cycle; fixed latency.
template <typename H>
void throughput_test(uint64_t seed) {
  H h(seed, 0x0BADCAFEu);
  auto cmds = random_mix(h, 10000, 500);
  h.run(cmds, 0.0, 1.0);
  // commands per cycle from the first accept to the last one (inclusive)
  double tput =
      static_cast<double>(h.accepted_) / static_cast<double>(h.last_accept_ - h.first_accept_ + 1);
  uint64_t lmin = *std::min_element(h.latencies_.begin(), h.latencies_.end());
  uint64_t lmax = *std::max_element(h.latencies_.begin(), h.latencies_.end());
  std::printf("[conn_table 2^%u] throughput %.4f commands/cycle, latency %llu..%llu cycles\n",
              H::kDepthLog2, tput, static_cast<unsigned long long>(lmin),
              static_cast<unsigned long long>(lmax));
  EXPECT_GT(tput, 0.99);
  EXPECT_EQ(lmin, kLatency);
  EXPECT_EQ(lmax, kLatency);
}

TEST(ConnTable, ThroughputSmall) { throughput_test<Small>(51); }
TEST(ConnTable, ThroughputBig) { throughput_test<Big>(52); }

// The key changes the bucket mapping (the same tuples land in different buckets).
TEST(ConnTable, KeyedHash) {
  std::mt19937_64 rng(61);
  unsigned same = 0;
  for (int i = 0; i < 1000; ++i) {
    Tuple t{static_cast<uint32_t>(rng()), static_cast<uint32_t>(rng()),
            static_cast<uint16_t>(rng()), static_cast<uint16_t>(rng())};
    same += bucket_of(t, 1, 14) == bucket_of(t, 2, 14);
  }
  EXPECT_LT(same, 10u);
  // and the RTL uses the key it sampled in reset: run a small mix under two keys
  Small a(62, 1), b(62, 2);
  a.run(random_mix(a, 3000, 200), 0.1, 0.9);
  b.run(random_mix(b, 3000, 200), 0.1, 0.9);
}

}  // namespace
