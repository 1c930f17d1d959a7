// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// bouncer::Device used from several threads at once ("Driver"): poster threads each
// post MPA rejects and wait for their own completions while an event thread polls the AEQ
// and rejects the connection requests it finds. Every completion must come back exactly once,
// to the thread that posted it, with its wr_id and cm_id. The second test gives each poster its
// own SQ (4 SQs, several WQEs in flight per poster) while the event thread rejects on all of
// them: every completion names its poster's SQ. Run under ThreadSanitizer by the
// build-tsan pass of scripts/test.sh (BOUNCER_TSAN); the release and ASan passes run it too.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <deque>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "bouncer/device.hpp"
#include "fake_memory_param.hpp"
#include "test_driver_fake_hal.hpp"

using namespace std::chrono_literals;

namespace bouncer {
namespace {

using testing::FakeHal;
using testing::FakeRequest;

constexpr unsigned kPosters = 3;
constexpr unsigned kPerPoster = 40;
constexpr unsigned kRequests = 8;  // connection requests for the event thread
constexpr uint32_t kRequestBase = 48;

CmContext host_ctx(uint32_t cm_id) {
  CmContext c;
  c.rem_mac = {0x02, 0, 0, 0, 1, 2};
  c.loc_mac = {0x02, 0, 0, 0, 0, 1};
  c.loc_ip = 0x0A000001;
  c.rem_ip = 0x0A000002;
  c.loc_port = 20049;
  c.rem_port = static_cast<uint16_t>(40000 + cm_id);
  c.snd_nxt = 1000;
  c.rcv_nxt = 2000;
  c.req_rev = 1;
  c.req_flags = 0x40;
  return c;
}

// Both tests run against each memory model of the fake (fake_dma.hpp): device writes made at
// once, and landed by the fake's own DMA thread (coherent and non-coherent) while the threads
// poll.
class DriverThreads : public ::testing::TestWithParam<testing::FakeMemory> {
 protected:
  static FakeHal::Config fake_config() {
    FakeHal::Config c;
    c.memory = GetParam();
    return c;
  }
};

BOUNCER_ALL_FAKE_MEMORIES(DriverThreads);

TEST_P(DriverThreads, ConcurrentPostersAndEventPoller) {
  FakeHal hal(fake_config());
  DeviceConfig cfg;
  cfg.sq_entries = 16;
  cfg.cq_entries = 16;
  auto d = Device::open(hal, cfg);
  ASSERT_TRUE(d) << d.error().message;
  auto dev = std::move(d).value();
  ASSERT_TRUE(dev->wait_cm_ready(400us));
  for (uint32_t id = 0; id < kPosters * 8; ++id)
    ASSERT_TRUE(dev->cqp_write_context(id, host_ctx(id)));
  ListenerConfig l;
  l.index = 1;
  l.loc_port = 20049;
  ASSERT_TRUE(dev->cqp_create_listener(l));
  // The requests are scripted before the threads start (the fake's test controls are not
  // part of the driver's thread contract); their events reach the AEQ as the fake runs.
  for (uint32_t i = 0; i < kRequests; ++i) {
    FakeRequest q;
    q.rem_port = static_cast<uint16_t>(50000 + i);
    q.cm_id = kRequestBase + i;
    q.pd = {1, 2, 3};
    ASSERT_TRUE(hal.inject_connect_request(q)) << i;
  }

  std::atomic<unsigned> failures{0};
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < kPosters; ++t) {
    threads.emplace_back([&, t] {
      const std::byte pd[4] = {std::byte{0xAB}, std::byte{0xCD}, std::byte(t), std::byte{0}};
      for (unsigned i = 0; i < kPerPoster; ++i) {
        RejectWqe w;
        w.cm_id = t * 8 + (i % 8);
        w.pd = pd;
        w.wr_id = (uint64_t{t} << 32) | i;
        auto idx = dev->post_reject(w);
        if (!idx) {
          if (idx.error().code == Errc::kRingFull) {  // others hold every slot: retry
            --i;
            std::this_thread::yield();
            continue;
          }
          ++failures;
          ADD_FAILURE() << "post: " << idx.error().message;
          return;
        }
        auto c = dev->wait_completion_for(*idx, 4ms);
        if (!c || c->wr_id != w.wr_id || c->cm_id != w.cm_id || c->unexpected) {
          ++failures;
          ADD_FAILURE() << "thread " << t << " WQE " << i << ": "
                        << (c ? c->status() : c.error().message);
          return;
        }
      }
    });
  }
  std::set<uint32_t> seen;
  threads.emplace_back([&] {
    for (int spins = 0; seen.size() < kRequests && spins < 200000; ++spins) {
      auto e = dev->poll_aeq();
      if (!e) {
        dev->flush_aeq_head();
        std::this_thread::yield();
        continue;
      }
      if (e->event != static_cast<uint8_t>(regs::AeqEvent::CONNECT_REQUEST)) continue;
      if (!seen.insert(e->cm_id).second) {
        ++failures;
        ADD_FAILURE() << "CONNECT_REQUEST twice for cm_id " << e->cm_id;
        return;
      }
      RejectWqe w;
      w.cm_id = e->cm_id;
      w.pd_area = true;
      w.wr_id = 0xE000'0000'0000'0000ull | e->cm_id;
      Result<uint16_t> idx = dev->post_reject(w);
      while (!idx && idx.error().code == Errc::kRingFull) {
        std::this_thread::yield();
        idx = dev->post_reject(w);
      }
      auto c = idx ? dev->wait_completion_for(*idx, 4ms) : Result<Completion>(idx.error());
      if (!c || !c->ok() || c->wr_id != w.wr_id) {
        ++failures;
        ADD_FAILURE() << "event reject " << e->cm_id << ": "
                      << (c ? c->status() : c.error().message);
        return;
      }
    }
  });
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0u);
  EXPECT_EQ(seen.size(), kRequests);
  EXPECT_EQ(dev->sq_outstanding(), 0u);
  EXPECT_FALSE(dev->poll_cq());
  EXPECT_EQ(dev->stats().sq_posted, kPosters * kPerPoster + kRequests);
  EXPECT_EQ(dev->stats().sq_completed, kPosters * kPerPoster + kRequests);
  EXPECT_EQ(dev->stats().unexpected_cqes, 0u);
}

// 4 posters, each on its own SQ with up to kInFlight WQEs outstanding, plus the event thread
// rejecting connection requests on SQ (cm_id % 4): every completion comes back once, to its
// poster, naming its SQ. A poster finds its SQ full only when the event thread's WQEs share
// it (a slot is free again once its completion is handed out); it then collects its oldest
// completion and tries again.
TEST_P(DriverThreads, PostersOnDifferentSqs) {
  constexpr unsigned kSqs = 4;
  constexpr unsigned kInFlight = 3;
  constexpr unsigned kEach = 60;
  FakeHal hal(fake_config());
  DeviceConfig cfg;
  cfg.num_sq = kSqs;
  cfg.sq_entries = 8;
  cfg.cq_entries = 32;
  auto d = Device::open(hal, cfg);
  ASSERT_TRUE(d) << d.error().message;
  auto dev = std::move(d).value();
  ASSERT_EQ(dev->num_sq(), kSqs);
  ASSERT_TRUE(dev->wait_cm_ready(400us));
  for (uint32_t id = 0; id < kSqs * 8; ++id) ASSERT_TRUE(dev->cqp_write_context(id, host_ctx(id)));
  ListenerConfig l;
  l.index = 1;
  l.loc_port = 20049;
  ASSERT_TRUE(dev->cqp_create_listener(l));
  for (uint32_t i = 0; i < kRequests; ++i) {
    FakeRequest q;
    q.rem_port = static_cast<uint16_t>(50000 + i);
    q.cm_id = kRequestBase + i;
    q.pd = {1, 2, 3};
    ASSERT_TRUE(hal.inject_connect_request(q)) << i;
  }

  std::atomic<unsigned> failures{0};
  std::array<std::atomic<unsigned>, kSqs> done{};
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < kSqs; ++t) {
    threads.emplace_back([&, t] {
      const std::byte pd[4] = {std::byte{0x5A}, std::byte(t), std::byte{1}, std::byte{2}};
      std::deque<std::pair<uint16_t, RejectWqe>> inflight;
      auto reap = [&] {
        auto [idx, w] = inflight.front();
        inflight.pop_front();
        auto c = dev->wait_completion_for(t, idx, 4ms);
        if (!c || c->sq != t || c->wqe_idx != idx || c->wr_id != w.wr_id || c->cm_id != w.cm_id ||
            c->unexpected) {
          ++failures;
          ADD_FAILURE() << "SQ " << t << " wqe_idx " << idx << ": "
                        << (c ? c->status() + " sq " + std::to_string(c->sq) : c.error().message);
          return false;
        }
        ++done[t];
        return true;
      };
      for (unsigned i = 0; i < kEach; ++i) {
        RejectWqe w;
        w.sq = t;
        w.cm_id = t * 8 + (i % 8);
        w.pd = pd;
        w.push = (i % 2) == 1;
        w.wr_id = (uint64_t{t} << 32) | i;
        auto idx = dev->post_reject(w);
        if (!idx && idx.error().code == Errc::kRingFull) {
          if (inflight.empty()) {
            std::this_thread::yield();
          } else if (!reap()) {
            return;
          }
          --i;
          continue;
        }
        if (!idx) {
          ++failures;
          ADD_FAILURE() << "SQ " << t << " post " << i << ": " << idx.error().message;
          return;
        }
        inflight.emplace_back(*idx, w);
        if (inflight.size() == kInFlight && !reap()) return;
      }
      while (!inflight.empty())
        if (!reap()) return;
    });
  }
  std::set<uint32_t> seen;
  threads.emplace_back([&] {
    for (int spins = 0; seen.size() < kRequests && spins < 200000; ++spins) {
      auto e = dev->poll_aeq();
      if (!e) {
        dev->flush_aeq_head();
        std::this_thread::yield();
        continue;
      }
      if (e->event != static_cast<uint8_t>(regs::AeqEvent::CONNECT_REQUEST)) continue;
      seen.insert(e->cm_id);
      RejectWqe w;
      w.sq = e->cm_id % kSqs;
      w.cm_id = e->cm_id;
      w.pd_area = true;
      w.wr_id = 0xE000'0000'0000'0000ull | e->cm_id;
      Result<uint16_t> idx = dev->post_reject(w);
      while (!idx && idx.error().code == Errc::kRingFull) {  // a poster's SQ: wait for room
        std::this_thread::yield();
        idx = dev->post_reject(w);
      }
      auto c = idx ? dev->wait_completion_for(w.sq, *idx, 4ms) : Result<Completion>(idx.error());
      if (!c || !c->ok() || c->wr_id != w.wr_id || c->sq != w.sq) {
        ++failures;
        ADD_FAILURE() << "event reject " << e->cm_id << ": "
                      << (c ? c->status() : c.error().message);
        return;
      }
    }
  });
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0u);
  EXPECT_EQ(seen.size(), kRequests);
  for (unsigned t = 0; t < kSqs; ++t) {
    EXPECT_EQ(done[t].load(), kEach) << t;
    EXPECT_EQ(dev->sq_outstanding(t), 0u) << t;
  }
  EXPECT_FALSE(dev->poll_cq());
  EXPECT_EQ(dev->stats().sq_posted, kSqs * kEach + kRequests);
  EXPECT_EQ(dev->stats().sq_completed, kSqs * kEach + kRequests);
  EXPECT_EQ(dev->stats().unexpected_cqes, 0u);
}

}  // namespace
}  // namespace bouncer
