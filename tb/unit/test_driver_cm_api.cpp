// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// The application-facing contract of bouncer::Cm, against the fake device: one event thread
// plus many rejecting threads (each gets its own completion; run under ThreadSanitizer by the
// build-tsan pass), handles with a generation (a stale one is refused), post-then-complete
// rejects, accept(), destroy() of a held request (iw_cm's destroy_cm_id in CONN_RECV), the
// listener's context pointer in every event, and the channel's event fd under poll(2).
#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bouncer/cm.hpp"
#include "fake_memory_param.hpp"
#include "test_driver_fake_hal.hpp"

using namespace std::chrono_literals;

namespace bouncer {
namespace {

using testing::FakeHal;
using testing::FakeRequest;
namespace r = regs::reg;

size_t sq_doorbells(const FakeHal& hal) {
  size_t n = 0;
  for (const auto& w : hal.writes) n += w.offset == r::SQ_DB || w.offset == r::SQ_PUSH_DB;
  return n;
}

FakeRequest request(uint16_t port, std::optional<uint32_t> cm_id = std::nullopt) {
  FakeRequest q;
  q.rem_port = port;
  q.cm_id = cm_id;
  q.pd = {7, 7};
  return q;
}

class CmApiTest : public ::testing::TestWithParam<testing::FakeMemory> {
 protected:
  void SetUp() override {
    auto d = Device::open(hal);
    ASSERT_TRUE(d) << d.error().message;
    dev = std::move(d).value();
    cm = std::make_unique<Cm>(*dev);
  }
  void TearDown() override {
    cm.reset();
    dev.reset();
  }
  ConnectRequest next_request() {
    auto e = cm->wait_event(40us);
    EXPECT_TRUE(e) << (e ? "" : e.error().message);
    if (!e) return {};
    EXPECT_TRUE(std::holds_alternative<ConnectRequest>(*e)) << event_name(*e);
    return std::holds_alternative<ConnectRequest>(*e) ? std::get<ConnectRequest>(*e)
                                                      : ConnectRequest{};
  }
  bool no_event() {
    hal.settle();
    auto e = cm->poll_event();
    return e && !*e;
  }
  FakeHal hal{testing::fake_config(GetParam())};
  std::unique_ptr<Device> dev;
  std::unique_ptr<Cm> cm;
};
BOUNCER_ALL_FAKE_MEMORIES(CmApiTest);

// ------------------------------------------------------------------------------- threads

// librdmacm's pattern: one thread takes events, workers reject. Each reject() must get its
// own completion (its wr_id and cm_id), never one the event thread or another worker took,
// and the event thread must keep receiving while workers wait (no lock held while sleeping).
TEST_P(CmApiTest, OneEventThreadManyRejectingThreads) {
  constexpr unsigned kWorkers = 6;
  constexpr unsigned kRequests = 48;
  ASSERT_TRUE(cm->listen(0, 20049));
  // Scripted before the threads start (the fake's controls are not part of the contract).
  for (unsigned i = 0; i < kRequests; ++i) {
    ASSERT_TRUE(hal.inject_connect_request(request(static_cast<uint16_t>(40000 + i))));
  }
  std::mutex mu;
  std::condition_variable cv;
  std::deque<ConnHandle> work;
  bool done = false;
  std::atomic<unsigned> rejected{0}, failures{0}, other_events{0};
  std::vector<std::string> errors;
  auto fail = [&](std::string why) {
    ++failures;
    std::lock_guard lk(mu);
    errors.push_back(std::move(why));
  };

  std::thread events([&] {
    unsigned seen = 0;
    for (int tries = 0; seen < kRequests && tries < 20000; ++tries) {
      auto e = cm->wait_event(20us);
      if (!e) continue;  // kTimeout: the workers have the device; try again
      if (const auto* cr = std::get_if<ConnectRequest>(&*e)) {
        ++seen;
        std::lock_guard lk(mu);
        work.push_back(cr->handle);
        cv.notify_one();
      } else {
        ++other_events;  // a RejectComplete here would be a stolen completion
      }
    }
    std::lock_guard lk(mu);
    done = true;
    cv.notify_all();
    if (seen != kRequests) errors.push_back("event thread saw " + std::to_string(seen));
  });
  std::vector<std::thread> workers;
  for (unsigned t = 0; t < kWorkers; ++t) {
    workers.emplace_back([&, t] {
      for (uint64_t k = 0;; ++k) {
        ConnHandle h;
        {
          std::unique_lock lk(mu);
          cv.wait(lk, [&] { return !work.empty() || done; });
          if (work.empty()) return;
          h = work.front();
          work.pop_front();
        }
        RejectOptions o;
        o.wr_id = (uint64_t{t} << 32) | k;
        o.timeout = 2ms;
        const std::byte pd[3] = {std::byte{'n'}, std::byte{'o'}, std::byte(t)};
        auto c = cm->reject(h, pd, o);
        if (!c) {
          fail("reject cm_id " + std::to_string(h.cm_id) + ": " + c.error().message);
        } else if (c->wr_id != o.wr_id || c->cm_id != h.cm_id) {
          fail("worker " + std::to_string(t) + " got the completion of wr_id " +
               std::to_string(c->wr_id) + " cm_id " + std::to_string(c->cm_id));
        } else {
          ++rejected;
        }
      }
    });
  }
  events.join();
  for (auto& w : workers) w.join();
  for (const auto& e : errors) ADD_FAILURE() << e;
  EXPECT_EQ(failures.load(), 0u);
  EXPECT_EQ(rejected.load(), kRequests);
  EXPECT_EQ(other_events.load(), 0u) << "a reject()'s completion reached the event thread";
  const CmStats s = cm->stats();
  EXPECT_EQ(s.requests, kRequests);
  EXPECT_EQ(s.rejects, kRequests);
  EXPECT_EQ(s.nodes_held, 0u);
  EXPECT_EQ(s.unexpected_completions, 0u);
  EXPECT_EQ(hal.frames.size(), kRequests);
}

// ------------------------------------------------------------------------------- handles

// A handle names one connection: once its cm_id is reused, the old handle is refused and
// the newer connection is untouched.
TEST_P(CmApiTest, StaleHandleIsRefusedAfterTheCmIdIsReused) {
  ASSERT_TRUE(cm->listen(0, 20049));
  ASSERT_TRUE(hal.inject_connect_request(request(40000, 5)));
  const ConnectRequest first = next_request();
  ASSERT_EQ(first.cm_id, 5u);
  EXPECT_EQ(first.handle.cm_id, 5u);
  EXPECT_NE(first.handle.gen, 0u);
  ASSERT_TRUE(cm->reject(first.handle, {}));
  ASSERT_TRUE(hal.finish_node(5, regs::AeqEvent::CLOSED));
  EXPECT_TRUE(no_event());
  ASSERT_TRUE(hal.inject_connect_request(request(40001, 5)));
  const ConnectRequest second = next_request();
  ASSERT_EQ(second.cm_id, 5u) << "the hardware reused the cm_id";
  EXPECT_NE(second.handle, first.handle);

  const size_t db = sq_doorbells(hal), frames = hal.frames.size();
  auto stale = cm->reject(first.handle, {});
  ASSERT_FALSE(stale);
  EXPECT_EQ(stale.error().code, Errc::kState);
  EXPECT_NE(stale.error().message.find("stale handle"), std::string::npos) << stale.error().message;
  EXPECT_NE(stale.error().message.find("newer connection"), std::string::npos)
      << stale.error().message;
  EXPECT_EQ(cm->post_reject(first.handle, {}).error().code, Errc::kState);
  EXPECT_EQ(cm->destroy(first.handle).error().code, Errc::kState);
  EXPECT_EQ(sq_doorbells(hal), db) << "nothing posted";
  EXPECT_EQ(hal.frames.size(), frames);
  EXPECT_EQ(cm->node_state(second.handle), NodeState::kHeld) << "the newer one is untouched";
  EXPECT_EQ(cm->node_state(first.handle), NodeState::kFree);
  ASSERT_TRUE(cm->reject(second.handle, {}));
}

// ------------------------------------------------------------------------------- async

// post_reject() returns before the completion; it comes back as a RejectComplete event on
// the connection's channel, the connection's last event.
TEST_P(CmApiTest, PostRejectCompletesAsAnEvent) {
  ASSERT_TRUE(cm->listen(0, 20049));
  ASSERT_TRUE(hal.inject_connect_request(request(40000)));
  const ConnectRequest cr = next_request();
  hal.hold = true;
  RejectOptions o;
  o.wr_id = 0x77;
  const std::byte pd[2] = {std::byte{1}, std::byte{2}};
  ASSERT_TRUE(cm->post_reject(cr.handle, pd, o));
  EXPECT_EQ(cm->node_state(cr.handle), NodeState::kRejecting);
  EXPECT_TRUE(no_event()) << "held device: nothing yet";
  EXPECT_EQ(cm->post_reject(cr.handle, pd).error().code, Errc::kState) << "already rejected";
  hal.hold = false;
  auto e = cm->wait_event(40us);
  ASSERT_TRUE(e) << e.error().message;
  const auto* rc = std::get_if<RejectComplete>(&*e);
  ASSERT_NE(rc, nullptr) << event_name(*e);
  EXPECT_EQ(rc->handle, cr.handle);
  EXPECT_TRUE(rc->completion.ok()) << rc->completion.status();
  EXPECT_EQ(rc->completion.wr_id, 0x77u);
  ASSERT_EQ(hal.frames.size(), 1u);
  EXPECT_EQ(hal.frames[0].pd, (std::vector<uint8_t>{1, 2}));
  EXPECT_TRUE(no_event());
}

TEST_P(CmApiTest, AcceptIsNotSupportedAndLeavesTheRequestHeld) {
  ASSERT_TRUE(cm->listen(0, 20049));
  ASSERT_TRUE(hal.inject_connect_request(request(40000)));
  const ConnectRequest cr = next_request();
  const size_t db = sq_doorbells(hal);
  auto a = cm->accept(cr.handle);
  ASSERT_FALSE(a);
  EXPECT_EQ(a.error().code, Errc::kNotSupported);
  EXPECT_EQ(sq_doorbells(hal), db);
  EXPECT_EQ(cm->node_state(cr.handle), NodeState::kHeld);
  EXPECT_EQ(cm->accept(ConnHandle{cr.cm_id, cr.handle.gen + 1}).error().code, Errc::kState);
  ASSERT_TRUE(cm->reject(cr.handle, {}));
}

// iw_cm: destroying an id in CONN_RECV rejects the request; nothing more is delivered for it.
TEST_P(CmApiTest, DestroyOfAHeldRequestRejectsIt) {
  ListenOptions lo;
  lo.fin_policy = regs::FinPolicy::ABORT;
  ASSERT_TRUE(cm->listen(0, 20049, lo));
  ASSERT_TRUE(hal.inject_connect_request(request(40000)));
  const ConnectRequest cr = next_request();
  ASSERT_TRUE(hal.inject_peer_reset(cr.cm_id));  // queued behind the destroy: never delivered
  ASSERT_TRUE(cm->destroy(cr.handle));
  EXPECT_TRUE(no_event()) << "no PeerReset, no RejectComplete for a destroyed id";
  hal.run();
  EXPECT_TRUE(no_event());
  EXPECT_EQ(cm->stats().released, 1u);
  EXPECT_EQ(cm->node_state(cr.handle), NodeState::kFree);
  EXPECT_EQ(hal.read32(r::CM_CONNS), 0u);
  EXPECT_EQ(cm->reject(cr.handle, {}).error().code, Errc::kState);
  EXPECT_TRUE(cm->destroy(cr.handle)) << "a second destroy changes nothing";
  EXPECT_TRUE(no_event());
}

// destroy() after post_reject(): the reject's completion is not delivered, even when the node
// has ended and its cm_id been reused by a new request before the Cm looks at the rings (the
// AEQ, with the old node's end and the new request, is read before the CQ).
TEST_P(CmApiTest, DestroyAfterPostRejectDropsItsCompletionAcrossCmIdReuse) {
  ListenOptions lo;
  lo.fin_policy = regs::FinPolicy::ABORT;
  ASSERT_TRUE(cm->listen(0, 20049, lo));
  ASSERT_TRUE(hal.inject_connect_request(request(40000)));
  const ConnectRequest cr = next_request();
  hal.hold = true;
  ASSERT_TRUE(cm->post_reject(cr.handle, {}));
  ASSERT_TRUE(cm->destroy(cr.handle));
  hal.hold = false;
  hal.run();  // the reject completes and the node ends, unseen by the Cm
  ASSERT_TRUE(hal.inject_connect_request(request(40001, cr.cm_id)));
  const ConnectRequest again = next_request();
  EXPECT_EQ(again.cm_id, cr.cm_id);
  EXPECT_NE(again.handle, cr.handle);
  EXPECT_TRUE(no_event()) << "the destroyed connection's RejectComplete was delivered";
  ASSERT_TRUE(cm->reject(again.handle, {}));
}

// A listener destroyed while its MPA errors wait in a channel: they go with it (they carry its
// context, which the application may free once destroy_listener() returned).
TEST_P(CmApiTest, DestroyListenerDropsItsQueuedMpaErrors) {
  int ctx = 3;
  auto ch = cm->create_channel();
  ASSERT_TRUE(ch);
  ListenOptions b;
  b.context = &ctx;
  b.channel = *ch;
  auto lid = cm->listen(0, 20050, b);
  ASSERT_TRUE(lid);
  FakeRequest q = request(40001);
  q.loc_port = 20050;
  ASSERT_TRUE(hal.inject_mpa_error(q, regs::MpaError::BAD_KEY));
  EXPECT_TRUE(no_event()) << "the default channel: nothing, but the rings were read";
  ASSERT_TRUE(cm->destroy_listener(*lid));
  auto e = cm->poll_event(*ch);
  ASSERT_TRUE(e);
  EXPECT_FALSE(e->has_value()) << event_name(**e) << " of a destroyed listener";
  EXPECT_TRUE(cm->destroy_channel(*ch));
}

// The listener's context pointer comes back in each event of its connections; a listener on
// another channel delivers there only.
TEST_P(CmApiTest, ListenerContextAndChannelReachTheEvents) {
  int a_ctx = 1, b_ctx = 2;
  auto ch = cm->create_channel();
  ASSERT_TRUE(ch);
  ListenOptions a;
  a.context = &a_ctx;
  ListenOptions b;
  b.context = &b_ctx;
  b.channel = *ch;
  ASSERT_TRUE(cm->listen(0, 20049, a));
  ASSERT_TRUE(cm->listen(0, 20050, b));
  FakeRequest qa = request(40000);
  FakeRequest qb = request(40001);
  qb.loc_port = 20050;
  ASSERT_TRUE(hal.inject_connect_request(qa));
  ASSERT_TRUE(hal.inject_connect_request(qb));
  const ConnectRequest ra = next_request();
  EXPECT_EQ(ra.context, &a_ctx);
  EXPECT_EQ(ra.tuple.local_port, 20049);
  EXPECT_TRUE(no_event()) << "the other request is on the other channel";
  auto eb = cm->poll_event(*ch);
  ASSERT_TRUE(eb && *eb);
  const auto* rb = std::get_if<ConnectRequest>(&**eb);
  ASSERT_NE(rb, nullptr);
  EXPECT_EQ(rb->context, &b_ctx);
  ASSERT_TRUE(hal.inject_peer_reset(rb->cm_id));
  auto pr = cm->wait_event(*ch, 40us);
  ASSERT_TRUE(pr) << pr.error().message;
  ASSERT_TRUE(std::holds_alternative<PeerReset>(*pr));
  EXPECT_EQ(std::get<PeerReset>(*pr).context, &b_ctx);
  EXPECT_EQ(cm->destroy_channel(*ch).error().code, Errc::kState) << "a listener uses it";
  (void)cm->reject(rb->handle, {});
  ASSERT_TRUE(cm->reject(ra.handle, {}));
}

// ------------------------------------------------------------------------------- event fd

bool readable(int fd, int timeout_ms) {
  pollfd p{fd, POLLIN, 0};
  const int n = ::poll(&p, 1, timeout_ms);
  return n == 1 && (p.revents & POLLIN) != 0;
}

// The channel's fd is readable exactly while events wait; the poller thread fills the
// channel without the application calling the Cm.
TEST_P(CmApiTest, EventFdBecomesReadableWhenAnEventWaits) {
  ASSERT_TRUE(cm->listen(0, 20049));
  auto fd = cm->event_fd();
  ASSERT_TRUE(fd) << fd.error().message;
  EXPECT_FALSE(readable(*fd, 0));
  PollerOptions po;
  po.interval = 2us;
  po.wait = PollerOptions::Wait::kDevice;  // the fake device runs only inside HAL waits
  // Scripted before the poller runs (the fake's controls are not thread-safe).
  ASSERT_TRUE(hal.inject_connect_request(request(40000)));
  ASSERT_TRUE(cm->start_poller(po));
  EXPECT_EQ(cm->start_poller(po).error().code, Errc::kState);
  EXPECT_TRUE(readable(*fd, 5000)) << "the poller moved the request to the channel";
  auto e = cm->poll_event();
  ASSERT_TRUE(e && *e);
  ASSERT_TRUE(std::holds_alternative<ConnectRequest>(**e));
  EXPECT_FALSE(readable(*fd, 0)) << "drained: not readable any more";
  cm->stop_poller();
  EXPECT_FALSE(cm->poller_running());
  ASSERT_TRUE(cm->reject(std::get<ConnectRequest>(**e).handle, {}));
}

}  // namespace
}  // namespace bouncer
