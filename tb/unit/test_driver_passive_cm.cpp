// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// The passive CM in the driver, against the fake device's model of the hardware contract:
// bring-up of the AEQ / PD area / ISN key / timers, listeners, statistics, typed events
// (every type, both polarities, several ring wraps, a stalled AEQ), the PD area in both
// directions, reject by cm_id for every fin_policy, and iw_cm's contract (no events after
// the reject, terminal events consumed by the driver, reused cm_ids, PEER_RESET, cleanup).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "bouncer/cm.hpp"
#include "bouncer/cm_diag.hpp"
#include "fake_memory_param.hpp"
#include "test_driver_fake_hal.hpp"

using namespace std::chrono_literals;

namespace bouncer {
namespace {

using testing::FakeHal;
using testing::FakeRequest;
namespace r = regs::reg;
using regs::AeqEvent;
using regs::FinPolicy;

std::vector<uint8_t> pattern(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed + 7 * i);
  return v;
}

std::vector<std::byte> as_bytes(const std::vector<uint8_t>& v) {
  std::vector<std::byte> b(v.size());
  std::transform(v.begin(), v.end(), b.begin(), [](uint8_t x) { return std::byte(x); });
  return b;
}

std::vector<uint8_t> u8(std::span<const std::byte> s) {
  std::vector<uint8_t> v(s.size());
  std::transform(s.begin(), s.end(), v.begin(),
                 [](std::byte b) { return std::to_integer<uint8_t>(b); });
  return v;
}

size_t count_writes(const FakeHal& hal, uint32_t off) {
  return static_cast<size_t>(std::count_if(hal.writes.begin(), hal.writes.end(),
                                           [&](const auto& w) { return w.offset == off; }));
}

size_t sq_doorbells(const FakeHal& hal) {
  return count_writes(hal, r::SQ_DB) + count_writes(hal, r::SQ_PUSH_DB);
}

FakeRequest request(uint8_t rev, bool enhanced, size_t pd_len, uint8_t seed = 1) {
  FakeRequest q;
  q.rev = rev;
  q.flags = static_cast<uint8_t>(0x40 | (enhanced ? 0x10 : 0));
  q.ird_ord = 0x80100000u | (0x4000u + seed);
  q.pd = pattern(pd_len, seed);
  q.rem_ip = 0x0A000100u + seed;
  q.rem_port = static_cast<uint16_t>(40000 + seed);
  return q;
}

// ------------------------------------------------------------------------------- Device

class PassiveDeviceTest : public ::testing::TestWithParam<testing::FakeMemory> {
 protected:
  void open(DeviceConfig cfg = {}) {
    auto d = Device::open(hal, cfg);
    ASSERT_TRUE(d) << d.error().message;
    dev = std::move(d).value();
  }
  uint64_t base(uint32_t lo) const {
    return uint64_t{hal.reg(lo)} | (uint64_t{hal.reg(lo + 4)} << 32);
  }
  FakeHal hal{testing::fake_config(GetParam())};
  std::unique_ptr<Device> dev;
};
BOUNCER_ALL_FAKE_MEMORIES(PassiveDeviceTest);

TEST_P(PassiveDeviceTest, OpenProgramsAeqPdAreaKeyAndSettingsBeforeEnabling) {
  DeviceConfig cfg;
  cfg.aeq_entries = 32;
  cfg.isn_key = std::array<uint32_t, 4>{0x01234567, 0x89ABCDEF, 0xDEADBEEF, 0x0BADF00D};
  TimerConfig t;
  t.tick_cycles = 4;
  t.rto_init = 100;
  t.rto_max = 800;
  t.rtx_max = 3;
  t.mpa_timeout = 1000;
  t.fin_timeout = 2000;
  t.time_wait = 50;
  cfg.timers = t;
  TcpConfig tcp;
  tcp.mss = 9000;
  tcp.wscale = 2;
  tcp.window = 1234;
  tcp.promisc = false;
  tcp.port_mac = {0x02, 0x11, 0x22, 0x33, 0x44, 0x55};
  tcp.port_ip = 0x0A000001;
  cfg.tcp = tcp;
  open(cfg);
  EXPECT_EQ(base(r::AEQ_BASE_LO), dev->aeq().device_addr());
  EXPECT_EQ(hal.reg(r::AEQ_SIZE), 5u);
  EXPECT_EQ(hal.last_write(r::AEQ_HEAD), 0u);
  EXPECT_EQ(base(r::PD_BASE_LO), dev->pd_area_base());
  EXPECT_EQ(dev->pd_area_base() % 512, 0u);
  EXPECT_EQ(dev->pd_area_bytes(), 64u * 512);
  EXPECT_EQ(dev->pd_area_addr(3), dev->pd_area_base() + 3 * 512);
  EXPECT_EQ(hal.isn_key(), *cfg.isn_key);
  EXPECT_EQ(hal.read32(r::ISN_KEY), 0u) << "write-only";
  EXPECT_EQ(dev->read_timers(), t);
  EXPECT_EQ(dev->read_tcp(), tcp);
  EXPECT_EQ(hal.reg(r::PORT_MAC_HI), 0x0211u);
  EXPECT_EQ(hal.reg(r::PORT_MAC_LO), 0x22334455u);
  EXPECT_EQ(hal.reg(r::PORT_IP), 0x0A000001u);
  EXPECT_EQ(hal.reg(r::CM_ROUTE), 0u);
  // Everything is programmed before CTRL.ENABLE, which is the last write.
  ASSERT_FALSE(hal.writes.empty());
  EXPECT_EQ(hal.writes.back().offset, r::CTRL);
  EXPECT_EQ(hal.writes.back().value, 1u);
  EXPECT_EQ(count_writes(hal, r::CTRL), 2u);
  EXPECT_EQ(dev->aeq_head_batch(), 8u);
}

TEST_P(PassiveDeviceTest, IsnKeyIsRandomWhenNotGiven) {
  open();
  const auto k1 = hal.isn_key();
  dev.reset();
  open();
  const auto k2 = hal.isn_key();
  EXPECT_NE(k1, k2) << "128 random bits twice in a row";
  EXPECT_NE(k1, (std::array<uint32_t, 4>{}));
}

// HASH_KEY is written before the CTRL.RESET at which the connection table takes it (sweeping
// itself empty); unset, it is random on every open.
TEST_P(PassiveDeviceTest, HashKeyIsWrittenBeforeTheResetThatLoadsIt) {
  auto cfg = bouncer::DeviceConfig{};
  cfg.hash_key = 0x5EC2E7u;
  open(cfg);
  std::optional<size_t> key_at, reset_at;
  for (size_t i = 0; i < hal.writes.size(); ++i) {
    const auto& w = hal.writes[i];
    if (w.offset == r::HASH_KEY && !key_at) key_at = i;
    if (w.offset == r::CTRL && regs::field::CTRL::RESET.get(w.value) != 0 && !reset_at) {
      reset_at = i;
    }
  }
  ASSERT_TRUE(key_at && reset_at);
  EXPECT_LT(*key_at, *reset_at);
  EXPECT_EQ(hal.writes[*key_at].value, 0x5EC2E7u);
  dev.reset();
  open();
  const auto k1 = hal.last_write(r::HASH_KEY);
  dev.reset();
  open();
  const auto k2 = hal.last_write(r::HASH_KEY);
  ASSERT_TRUE(k1 && k2);
  EXPECT_NE(*k1, *k2) << "32 random bits twice in a row";
}

TEST_P(PassiveDeviceTest, DefaultsAreTheResetValuesAndBadSettingsAreRefused) {
  open();
  EXPECT_EQ(dev->read_timers(), TimerConfig{});
  EXPECT_EQ(dev->read_tcp(), TcpConfig{});
  const size_t n = hal.writes.size();
  TimerConfig t;
  t.tick_cycles = 0;
  EXPECT_EQ(dev->set_timers(t).error().code, Errc::kInvalidArgument);
  t = {};
  t.rto_init = t.rto_max + 1;
  EXPECT_EQ(dev->set_timers(t).error().code, Errc::kInvalidArgument);
  t = {};
  t.rtx_max = 16;
  EXPECT_EQ(dev->set_timers(t).error().code, Errc::kInvalidArgument);
  TcpConfig c;
  c.wscale = 15;
  EXPECT_EQ(dev->set_tcp(c).error().code, Errc::kInvalidArgument);
  EXPECT_EQ(hal.writes.size(), n) << "nothing written";
  // the MAC filter on with no usable port MAC would drop every frame
  c = {};
  c.promisc = false;
  EXPECT_EQ(dev->set_tcp(c).error().code, Errc::kInvalidArgument) << "zero MAC";
  c.port_mac = {0x01, 0x00, 0x5e, 0x00, 0x00, 0x01};
  EXPECT_EQ(dev->set_tcp(c).error().code, Errc::kInvalidArgument) << "group MAC";
  c.promisc = true;
  c.port_ip = 0xE0000001;
  EXPECT_EQ(dev->set_tcp(c).error().code, Errc::kInvalidArgument) << "multicast port IP";
  c.port_ip = 0xFFFFFFFF;
  EXPECT_EQ(dev->set_tcp(c).error().code, Errc::kInvalidArgument) << "broadcast port IP";
  c.port_ip = 0;
  EXPECT_TRUE(dev->set_tcp(c)) << "any MAC is fine while promiscuous";
  EXPECT_EQ(dev->read_tcp(), c);
  ASSERT_TRUE(dev->set_tcp(TcpConfig{}));
  EXPECT_EQ(hal.writes.size(), n + 2 * 6) << "only the two good set_tcp calls wrote";
  DeviceConfig bad;
  bad.aeq_entries = 100;
  EXPECT_EQ(Device::open(hal, bad).error().code, Errc::kInvalidArgument);
  t = {};
  t.rtx_max = 15;
  t.time_wait = 1;
  ASSERT_TRUE(dev->set_timers(t));
  EXPECT_EQ(dev->read_timers(), t);
}

// read_stats() covers exactly the STAT_* registers of the generated header.
TEST_P(PassiveDeviceTest, ReadStatsNamesEveryStatRegister) {
  // The source tree, not __FILE__: ccache's base_dir rewriting makes __FILE__ relative.
  const auto hdr = std::filesystem::path(BOUNCER_ROOT) / "hostsw/include/bouncer/regs.hpp";
  std::ifstream in(hdr);
  ASSERT_TRUE(in) << hdr;
  const std::regex re(R"(inline constexpr uint32_t (STAT_\w+) = (0x[0-9A-Fa-f]+);)");
  std::map<std::string, uint32_t> want;
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_search(line, m, re))
      want[m[1]] = static_cast<uint32_t>(std::stoul(m[2], nullptr, 16));
  }
  ASSERT_GE(want.size(), 30u);
  std::map<std::string, uint32_t> have;
  for (const auto& s : Device::stat_registers()) have[s.name] = s.offset;
  EXPECT_EQ(have, want);

  open();
  uint32_t v = 100;
  for (const auto& [name, off] : want) {
    if (off >= r::STAT_RX_FRAMES) hal.cm_stats[off] = v++;
  }
  for (const auto& s : dev->read_stats()) {
    EXPECT_EQ(s.value, hal.read32(s.offset)) << s.name;
    if (s.offset >= r::STAT_RX_FRAMES) {
      EXPECT_GE(s.value, 100u) << s.name;
    }
  }
}

TEST_P(PassiveDeviceTest, ListenerWqeCarriesEveryField) {
  open();
  ListenerConfig c;
  c.index = 5;
  c.loc_ip = 0xC0A80001;
  c.loc_port = 4791;
  c.backlog = 12;
  c.fin_policy = FinPolicy::IRDMA;
  c.auto_reject = regs::AutoReject::IRD_ORD;
  c.tmpl_ird_ord = 0x80084008;
  c.max_ird = 0x3FFF;
  c.max_ord = 17;
  c.loc_mac = {0x02, 0xAA, 0xBB, 0xCC, 0xDD, 0xEE};
  c.ttl = 32;
  c.tos = 0x10;
  c.aeq_full_rst = true;
  const auto tmpl = as_bytes(pattern(40, 9));
  ASSERT_TRUE(dev->cqp_create_listener(c, tmpl));
  ASSERT_TRUE(hal.listeners[5]);
  const auto& l = *hal.listeners[5];
  EXPECT_EQ(l.loc_ip, 0xC0A80001u);
  EXPECT_EQ(l.loc_port, 4791);
  EXPECT_EQ(l.backlog, 12);
  EXPECT_EQ(l.fin_policy, FinPolicy::IRDMA);
  EXPECT_EQ(l.auto_reject, regs::AutoReject::IRD_ORD);
  EXPECT_TRUE(l.tmpl_ird_ord_valid);
  EXPECT_EQ(l.tmpl_ird_ord, 0x80084008u);
  EXPECT_EQ(l.max_ird, 0x3FFF);
  EXPECT_EQ(l.max_ord, 17);
  EXPECT_EQ(l.loc_mac, 0x02AABBCCDDEEull);
  EXPECT_EQ(l.ttl, 32);
  EXPECT_EQ(l.tos, 0x10);
  EXPECT_TRUE(l.aeq_full_rst);
  EXPECT_EQ(l.tmpl_len, 40);
  EXPECT_EQ(l.tmpl, tmpl) << "copied at CREATE_LISTENER";
  EXPECT_TRUE(dev->listener_installed(5));

  ASSERT_TRUE(dev->cqp_destroy_listener(5));
  EXPECT_FALSE(hal.listeners[5]);
  auto again = dev->cqp_destroy_listener(5);
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code, Errc::kHardware);
  EXPECT_EQ(again.error().hw_major, static_cast<uint16_t>(regs::CqMajor::CTX));
  EXPECT_EQ(again.error().hw_minor, static_cast<uint16_t>(regs::CqMinor::BAD_LISTENER));
  EXPECT_NE(again.error().message.find("DESTROY_LISTENER listener 5: CTX/BAD_LISTENER"),
            std::string::npos)
      << again.error().message;

  const size_t db = count_writes(hal, r::CQP_DB);
  c.index = 16;
  EXPECT_EQ(dev->cqp_create_listener(c).error().code, Errc::kInvalidArgument);
  c.index = 1;
  c.max_ord = 0x4000;
  EXPECT_EQ(dev->cqp_create_listener(c).error().code, Errc::kInvalidArgument);
  std::vector<std::byte> big(513);
  c.max_ord = 0;
  EXPECT_EQ(dev->cqp_create_listener(c, big).error().code, Errc::kInvalidArgument);
  EXPECT_EQ(count_writes(hal, r::CQP_DB), db) << "nothing posted";
}

TEST_P(PassiveDeviceTest, HardwareWithFewerListenersAnswersBadListener) {
  hal.cfg.num_listeners = 8;
  open();
  ListenerConfig c;
  c.index = 9;  // the driver only knows the 16-entry format
  c.loc_port = 1;
  auto r1 = dev->cqp_create_listener(c);
  ASSERT_FALSE(r1);
  EXPECT_EQ(r1.error().hw_minor, static_cast<uint16_t>(regs::CqMinor::BAD_LISTENER));
  EXPECT_FALSE(dev->listener_installed(9));
  EXPECT_TRUE(dev->cqp_nop()) << "the CQP keeps working";
}

// The hardware copies the template at CREATE_LISTENER: the driver's buffer is gone after the
// command, a node keeps the bytes it was rejected with (its retransmissions read its PD slot)
// after its listener is destroyed and the index re-created with another template, and a
// template that cannot be read installs nothing.
TEST_P(PassiveDeviceTest, TemplateIsCopiedAtCreateAndNodesKeepTheirBytes) {
  open();
  ListenerConfig c;
  c.index = 2;
  c.loc_port = 20049;
  c.auto_reject = regs::AutoReject::ALL;
  const auto tmpl = as_bytes(pattern(24, 3));
  ASSERT_TRUE(dev->cqp_create_listener(c, tmpl));
  const uint64_t addr = hal.listeners[2]->tmpl_addr;
  std::vector<std::byte> probe(24);
  EXPECT_FALSE(hal.dma_read(addr, probe)) << "the driver freed its copy after the command";
  auto id = hal.inject_connect_request(request(1, false, 0));
  ASSERT_TRUE(id);
  EXPECT_EQ(hal.frames.back().pd, u8(tmpl));
  ASSERT_TRUE(dev->cqp_destroy_listener(2));
  EXPECT_FALSE(dev->listener_installed(2));
  const auto other = as_bytes(pattern(16, 7));
  ASSERT_TRUE(dev->cqp_create_listener(c, other));
  ASSERT_TRUE(hal.retransmit(*id));
  EXPECT_EQ(hal.frames.back().pd, u8(tmpl)) << "the node keeps what it was rejected with";
  auto id2 = hal.inject_connect_request(request(2, false, 0));
  ASSERT_TRUE(id2);
  EXPECT_EQ(hal.frames.back().pd, u8(other));
  ASSERT_TRUE(hal.finish_node(*id, AeqEvent::CLOSED));
  ASSERT_TRUE(hal.finish_node(*id2, AeqEvent::CLOSED));

  // a template the core cannot read: DMA/DMA_PD, nothing installed
  ASSERT_TRUE(dev->cqp_destroy_listener(2));
  // every read fails but the control queue's own WQE fetch
  const uint64_t ring = (uint64_t{hal.read32(r::CQP_BASE_HI)} << 32) | hal.read32(r::CQP_BASE_LO);
  const uint64_t ring_end = ring + (uint64_t{64} << hal.read32(r::CQP_SIZE));
  hal.dma_read_errors.push_back({0, ring});
  hal.dma_read_errors.push_back({ring_end, ~uint64_t{0}});
  auto bad = dev->cqp_create_listener(c, tmpl);
  hal.dma_read_errors.clear();
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, Errc::kHardware);
  EXPECT_EQ(bad.error().hw_minor, static_cast<uint16_t>(regs::CqMinor::DMA_PD));
  EXPECT_FALSE(dev->listener_installed(2));
  EXPECT_FALSE(hal.listeners[2]);
}

TEST_P(PassiveDeviceTest, AeqeDecodesEveryField) {
  std::array<std::byte, 32> img{};
  namespace a = regs::aeqe;
  regs::put(img, a::REM_IP, 0x01020304);
  regs::put(img, a::LOC_IP, 0x05060708);
  regs::put(img, a::REM_PORT, 0x1112);
  regs::put(img, a::LOC_PORT, 0x1314);
  regs::put(img, a::IRD_ORD, 0x80104010);
  regs::put(img, a::PD_OFFSET, 0x1400);
  regs::put(img, a::PD_LEN, 0x1FF);
  regs::put(img, a::REV, 2);
  regs::put(img, a::FLAGS, 0x50);
  regs::put(img, a::CM_ID, 0xABCDEF);
  regs::put(img, a::LISTENER, 0xF);
  regs::put(img, a::EVENT_CODE, 5);
  regs::put(img, a::REASON, 3);
  const Aeqe e = Aeqe::unpack(img);
  EXPECT_EQ(e.rem_ip, 0x01020304u);
  EXPECT_EQ(e.loc_ip, 0x05060708u);
  EXPECT_EQ(e.rem_port, 0x1112);
  EXPECT_EQ(e.loc_port, 0x1314);
  EXPECT_EQ(e.ird_ord, 0x80104010u);
  EXPECT_EQ(e.pd_offset, 0x1400u);
  EXPECT_EQ(e.pd_len, 0x1FF);
  EXPECT_EQ(e.rev, 2);
  EXPECT_EQ(e.flags, 0x50);
  EXPECT_EQ(e.cm_id, 0xABCDEFu);
  EXPECT_EQ(e.listener, 0xF);
  EXPECT_EQ(e.event, 5);
  EXPECT_EQ(e.reason, 3);
}

// ------------------------------------------------------------------------------- Cm

// The Cm with the tests' shorthand: a connection named by its cm_id stands for the handle of
// the last request seen on that cm_id (a cm_id never seen: generation 0, which names
// nothing). poll() stands for "the next post_reject() completion": it takes events until a
// RejectComplete and keeps the others, in order, for the next poll_event().
class CmById {
 public:
  explicit CmById(Device& dev) : cm_(dev) {}
  Cm& cm() { return cm_; }
  Result<ListenerId> listen(uint32_t ip, uint16_t port, const ListenOptions& o = {}) {
    return cm_.listen(ip, port, o);
  }
  Result<void> destroy_listener(ListenerId id) { return cm_.destroy_listener(id); }
  CmStats stats() const { return cm_.stats(); }
  NodeState node_state(uint32_t cm_id) const { return cm_.node_state(cm_id); }
  void set_terminal_observer(std::function<void(uint32_t, regs::AeqEvent)> f) {
    cm_.set_terminal_observer(std::move(f));
  }
  ConnHandle handle(uint32_t cm_id) const {
    auto it = handles_.find(cm_id);
    return it == handles_.end() ? ConnHandle{cm_id, 0} : it->second;
  }
  Result<std::optional<Event>> poll_event() {
    if (!kept_.empty()) {
      Event e = kept_.front();
      kept_.pop_front();
      return std::optional<Event>(std::move(e));
    }
    auto e = cm_.poll_event();
    if (e && *e) note(**e);
    return e;
  }
  Result<Event> wait_event(std::chrono::nanoseconds timeout) {
    if (!kept_.empty()) {
      Event e = kept_.front();
      kept_.pop_front();
      return e;
    }
    auto e = cm_.wait_event(timeout);
    if (e) note(*e);
    return e;
  }
  Result<Completion> reject(uint32_t cm_id, std::span<const std::byte> pd, RejectOptions o = {}) {
    return cm_.reject(handle(cm_id), pd, o);
  }
  Result<void> post_reject(uint32_t cm_id, std::span<const std::byte> pd,
                           const RejectOptions& o = {}) {
    return cm_.post_reject(handle(cm_id), pd, o);
  }
  std::optional<Completion> poll() {
    for (;;) {
      auto e = cm_.poll_event();
      if (!e || !*e) return std::nullopt;
      note(**e);
      if (const auto* rc = std::get_if<RejectComplete>(&**e)) return rc->completion;
      kept_.push_back(**e);
    }
  }

 private:
  void note(const Event& e) {
    if (const auto* cr = std::get_if<ConnectRequest>(&e)) handles_[cr->cm_id] = cr->handle;
  }
  Cm cm_;
  std::map<uint32_t, ConnHandle> handles_;
  std::deque<Event> kept_;
};

class PassiveCmTest : public ::testing::TestWithParam<testing::FakeMemory> {
 protected:
  void open(DeviceConfig cfg = {}) {
    cm.reset();
    dev.reset();
    auto d = Device::open(hal, cfg);
    ASSERT_TRUE(d) << d.error().message;
    dev = std::move(d).value();
    cm = std::make_unique<CmById>(*dev);
  }
  void SetUp() override { open(); }
  ListenerId listen(ListenOptions o = {}, uint16_t port = 20049) {
    auto l = cm->listen(0, port, o);
    EXPECT_TRUE(l) << (l ? "" : l.error().message);
    return l ? *l : ListenerId{};
  }
  // The next event, which must exist.
  Event next() {
    hal.settle();
    auto e = cm->poll_event();
    EXPECT_TRUE(e) << (e ? "" : e.error().message);
    if (!e || !*e) {
      ADD_FAILURE() << "no event";
      return PeerReset{0xFFFFFF, {}, nullptr};
    }
    return **e;
  }
  ConnectRequest next_request() {
    Event e = next();
    EXPECT_TRUE(std::holds_alternative<ConnectRequest>(e)) << event_name(e);
    return std::holds_alternative<ConnectRequest>(e) ? std::get<ConnectRequest>(e)
                                                     : ConnectRequest{};
  }
  bool no_event() {
    hal.settle();
    auto e = cm->poll_event();
    return e && !*e;
  }
  // A request the Cm has indicated: its cm_id.
  uint32_t indicated(const FakeRequest& q) {
    auto id = hal.inject_connect_request(q);
    EXPECT_TRUE(id);
    const ConnectRequest cr = next_request();
    EXPECT_EQ(cr.cm_id, id.value_or(0));
    return cr.cm_id;
  }
  FakeHal hal{testing::fake_config(GetParam())};
  std::unique_ptr<Device> dev;
  std::unique_ptr<CmById> cm;
};
BOUNCER_ALL_FAKE_MEMORIES(PassiveCmTest);

TEST_P(PassiveCmTest, ListenAndDestroy) {
  ListenOptions o;
  o.backlog = 3;
  o.fin_policy = FinPolicy::ABORT;
  o.local_mac = {2, 0, 0, 0, 0, 9};
  o.ttl = 5;
  auto a = cm->listen(0x0A000001, 20049, o);
  ASSERT_TRUE(a.has_value()) << a.error().message;
  EXPECT_EQ(a->index, 0);
  auto b = cm->listen(0, 20049);  // wildcard on the same port: a different listener
  ASSERT_TRUE(b);
  EXPECT_EQ(b->index, 1);
  ASSERT_TRUE(hal.listeners[0]);
  EXPECT_EQ(hal.listeners[0]->loc_ip, 0x0A000001u);
  EXPECT_EQ(hal.listeners[0]->backlog, 3);
  EXPECT_EQ(hal.listeners[0]->fin_policy, FinPolicy::ABORT);
  EXPECT_EQ(hal.listeners[0]->loc_mac, 0x020000000009ull);
  EXPECT_EQ(hal.listeners[0]->ttl, 5);
  EXPECT_EQ(hal.listeners[1]->fin_policy, FinPolicy::SIW_SAFE) << "the default";

  const size_t db = count_writes(hal, r::CQP_DB);
  auto dup = cm->listen(0x0A000001, 20049);
  EXPECT_EQ(dup.error().code, Errc::kState);
  ListenOptions at0;
  at0.index = 0;
  EXPECT_EQ(cm->listen(0, 1, at0).error().code, Errc::kState) << "index in use";
  ListenOptions at16;
  at16.index = 16;
  EXPECT_EQ(cm->listen(0, 1, at16).error().code, Errc::kInvalidArgument) << "bad index";
  EXPECT_EQ(cm->listen(0, 0).error().code, Errc::kInvalidArgument) << "port 0";
  ListenOptions big;
  big.template_pd.resize(509);
  EXPECT_EQ(cm->listen(0, 1, big).error().code, Errc::kInvalidArgument);
  ListenOptions backlog0;
  backlog0.auto_reject = regs::AutoReject::BACKLOG;
  EXPECT_EQ(cm->listen(0, 1, backlog0).error().code, Errc::kInvalidArgument);
  EXPECT_EQ(count_writes(hal, r::CQP_DB), db) << "nothing posted";

  ASSERT_TRUE(cm->destroy_listener(*a));
  EXPECT_FALSE(hal.listeners[0]);
  auto twice = cm->destroy_listener(*a);
  ASSERT_FALSE(twice);
  EXPECT_EQ(twice.error().code, Errc::kState);
  EXPECT_EQ(cm->destroy_listener(ListenerId{7}).error().code, Errc::kState);
  EXPECT_EQ(count_writes(hal, r::CQP_DB), db + 1) << "only the first destroy was posted";
  // A destroyed entry is taken last, so late events of its connections cannot be confused
  // with those of a newer listener.
  auto c = cm->listen(0x0A000001, 20049);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->index, 2);
  cm.reset();  // ~Cm destroys its listeners
  EXPECT_FALSE(hal.listeners[0]);
  EXPECT_FALSE(hal.listeners[1]);
}

TEST_P(PassiveCmTest, ListenWaitsForCmReady) {
  hal.cfg.cm_ready_cycles = 5000;
  listen();
  EXPECT_GE(hal.now_cycles(), 5000u);
  EXPECT_TRUE(hal.listeners[0]);
  hal.cfg.cm_ready_cycles = ~0ull;
  DeviceConfig quick;
  quick.cqp_timeout = 1200ns;
  open(quick);
  auto l = cm->listen(0, 1);
  ASSERT_FALSE(l);
  EXPECT_EQ(l.error().code, Errc::kTimeout);
  EXPECT_NE(l.error().message.find("CM_READY"), std::string::npos);
}

TEST_P(PassiveCmTest, PdIsCopiedOutOfTheSlot) {
  listen();
  FakeRequest q = request(1, false, 300, 5);
  q.cm_id = 17;
  ASSERT_TRUE(hal.inject_connect_request(q));
  // The hardware wrote the PD to slot 17 before the event.
  std::vector<std::byte> slot(300);
  ASSERT_TRUE(hal.dma_read(dev->pd_area_addr(17), slot));
  EXPECT_EQ(u8(slot), q.pd);
  const ConnectRequest cr = next_request();
  EXPECT_EQ(cr.cm_id, 17u);
  EXPECT_EQ(u8(cr.private_data), q.pd);
  // A copy: the slot may be overwritten (by the reject) without touching the event.
  std::vector<std::byte> junk(300, std::byte{0xEE});
  ASSERT_TRUE(hal.dma_write(dev->pd_area_addr(17), junk));
  EXPECT_EQ(u8(cr.private_data), q.pd);
  EXPECT_EQ(cm->stats().bad_pd, 0u);

  // An event whose PD lies outside the area: counted, delivered without PD.
  std::array<std::byte, 32> img{};
  regs::put(img, regs::aeqe::EVENT_CODE, 1);
  regs::put(img, regs::aeqe::CM_ID, 3);
  regs::put(img, regs::aeqe::REV, 1);
  regs::put(img, regs::aeqe::PD_OFFSET, 64 * 512 - 10);
  regs::put(img, regs::aeqe::PD_LEN, 20);
  hal.inject_aeqe(img);
  const ConnectRequest bad = next_request();
  EXPECT_EQ(bad.cm_id, 3u);
  EXPECT_TRUE(bad.private_data.empty());
  EXPECT_EQ(cm->stats().bad_pd, 1u);
}

// Every event type, decoded, with the AEQ (4 entries, 3 usable) wrapping many times and
// the hardware stalling on a full ring.
TEST_P(PassiveCmTest, EventsOfEveryTypeAcrossRingWraps) {
  DeviceConfig cfg;
  cfg.aeq_entries = 4;
  open(cfg);
  ListenOptions o;
  o.index = 4;
  ASSERT_TRUE(cm->listen(0x0A000001, 20049, o));
  const regs::MpaError reasons[] = {regs::MpaError::BAD_KEY, regs::MpaError::BAD_REV,
                                    regs::MpaError::PD_TOO_LONG, regs::MpaError::TOO_LONG};
  unsigned delivered = 0;
  for (unsigned i = 0; i < 40; ++i) {
    const uint8_t rev = i % 3 == 0 ? 1 : 2;
    const bool enh = rev == 2 && i % 2 == 0;
    FakeRequest q = request(rev, enh, (i * 37) % (enh ? 509 : 513), static_cast<uint8_t>(i));
    if (i % 5 == 4) {
      auto id = hal.inject_mpa_error(q, reasons[i % 4]);
      ASSERT_TRUE(id);
      Event e = next();
      ASSERT_TRUE(std::holds_alternative<MpaError>(e)) << i << " " << event_name(e);
      const auto& m = std::get<MpaError>(e);
      EXPECT_EQ(m.cm_id, *id);
      EXPECT_EQ(m.reason, reasons[i % 4]);
      EXPECT_EQ(m.listener, ListenerId{4});
      EXPECT_EQ(m.tuple, (Tuple{q.loc_ip, q.loc_port, q.rem_ip, q.rem_port}));
      ++delivered;
      continue;
    }
    auto id = hal.inject_connect_request(q);
    ASSERT_TRUE(id);
    const ConnectRequest cr = next_request();
    ++delivered;
    EXPECT_EQ(cr.cm_id, *id);
    EXPECT_EQ(cr.listener, ListenerId{4});
    EXPECT_EQ(cr.tuple, (Tuple{q.loc_ip, q.loc_port, q.rem_ip, q.rem_port}));
    EXPECT_EQ(cr.rev, rev);
    EXPECT_EQ(cr.flags, q.flags);
    EXPECT_EQ(cr.enhanced(), enh);
    EXPECT_EQ(cr.ird_ord.has_value(), enh);
    if (enh) {
      EXPECT_EQ(*cr.ird_ord, q.ird_ord);
    }
    EXPECT_EQ(u8(cr.private_data), q.pd) << i;
    if (i % 3 == 1) {
      ASSERT_TRUE(hal.inject_peer_reset(*id));
      Event e = next();
      ASSERT_TRUE(std::holds_alternative<PeerReset>(e)) << event_name(e);
      EXPECT_EQ(std::get<PeerReset>(e).cm_id, *id);
      ++delivered;
      EXPECT_EQ(cm->reject(*id, {}).error().hw_minor,
                static_cast<uint16_t>(regs::CqMinor::PEER_RESET));
    } else {
      ASSERT_TRUE(cm->reject(*id, {}));
      ASSERT_TRUE(hal.finish_node(*id, i % 2 ? AeqEvent::CLOSED : AeqEvent::TIMEOUT));
    }
    EXPECT_TRUE(no_event());
  }
  EXPECT_EQ(dev->stats().aeq_consumed, hal.events_written.size());
  EXPECT_GT(dev->stats().aeq_consumed, 10u * dev->aeq().size()) << "many laps";
  EXPECT_EQ(delivered, cm->stats().requests + cm->stats().peer_resets + cm->stats().mpa_errors);
  EXPECT_EQ(cm->stats().unexpected_events, 0u);
  EXPECT_EQ(hal.read32(r::CM_CONNS), 0u);

  // The hardware stalls on a full ring and catches up as the host consumes.
  std::vector<uint32_t> ids;
  for (uint8_t k = 0; k < 7; ++k)
    ids.push_back(*hal.inject_connect_request(request(1, false, k, k)));
  EXPECT_EQ(hal.aeq_backlog(), 4u) << "3 fit in a 4-entry ring";
  EXPECT_TRUE(regs::field::STATUS::AEQ_FULL.get(hal.read32(r::STATUS)));
  for (uint32_t id : ids) {
    const ConnectRequest cr = next_request();
    EXPECT_EQ(cr.cm_id, id) << "in order";
  }
  EXPECT_TRUE(no_event());
  EXPECT_EQ(hal.aeq_backlog(), 0u);
  EXPECT_EQ(cm->stats().nodes_held, 7u);
}

TEST_P(PassiveCmTest, ValidBitOfTheWrongPolarityIsNotConsumed) {
  listen();
  std::array<std::byte, 32> img{};
  regs::put(img, regs::aeqe::EVENT_CODE, static_cast<uint64_t>(AeqEvent::CONNECT_REQUEST));
  regs::put(img, regs::aeqe::CM_ID, 9);
  regs::put(img, regs::aeqe::REV, 1);
  hal.write_stale_aeqe(img);
  const size_t heads = count_writes(hal, r::AEQ_HEAD);
  EXPECT_TRUE(no_event());
  EXPECT_EQ(dev->aeq().head(), 0u);
  EXPECT_EQ(dev->stats().aeq_consumed, 0u);
  EXPECT_EQ(count_writes(hal, r::AEQ_HEAD), heads) << "nothing consumed, nothing written";
  EXPECT_EQ(cm->node_state(9), NodeState::kFree);
  // The hardware then writes the slot for real.
  const uint32_t id = indicated(request(1, false, 4));
  EXPECT_EQ(id, 0u);
  EXPECT_EQ(dev->aeq().head(), 1u);
}

TEST_P(PassiveCmTest, AeqHeadIsWrittenInBatchesAndBeforeWaiting) {
  DeviceConfig cfg;
  cfg.aeq_entries = 16;  // batch of 4
  open(cfg);
  listen();
  ASSERT_EQ(dev->aeq_head_batch(), 4u);
  const size_t w0 = count_writes(hal, r::AEQ_HEAD);
  for (uint8_t k = 0; k < 10; ++k) ASSERT_TRUE(hal.inject_connect_request(request(1, false, 1, k)));
  // The first poll moves the whole AEQ to the channel: AEQ_HEAD every 4 entries, and the
  // rest once the ring is empty.
  std::vector<uint32_t> seen;
  for (int k = 0; k < 10; ++k) {
    next_request();
    seen.push_back(count_writes(hal, r::AEQ_HEAD) - w0);
  }
  EXPECT_EQ(seen, (std::vector<uint32_t>(10, 3)));
  EXPECT_EQ(hal.last_write(r::AEQ_HEAD), 10u);
  EXPECT_TRUE(no_event());
  EXPECT_EQ(hal.aeq_head(), 10u);
  EXPECT_TRUE(no_event());
  EXPECT_TRUE(no_event());
  EXPECT_EQ(count_writes(hal, r::AEQ_HEAD) - w0, 3u) << "no redundant writes";
  // wait_event: one event consumed, then the head goes back before any waiting.
  ASSERT_TRUE(hal.inject_connect_request(request(1, false, 1, 77)));
  ASSERT_TRUE(cm->wait_event(4us));
  const auto t0 = hal.host_now();
  auto none = cm->wait_event(2us);
  ASSERT_FALSE(none);
  EXPECT_EQ(hal.last_write(r::AEQ_HEAD), 11u);
  EXPECT_EQ(dev->aeq_unflushed(), 0u);
  EXPECT_GE(hal.host_now() - t0, 2us);
}

TEST_P(PassiveCmTest, WaitEventTimesOut) {
  listen();
  const auto t0 = hal.host_now();
  auto e = cm->wait_event(8us);
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().code, Errc::kTimeout);
  EXPECT_GE(hal.host_now() - t0, 8us);
  EXPECT_LE(hal.host_now() - t0, 8us + dev->config().poll_interval);
  ASSERT_TRUE(hal.inject_connect_request(request(2, true, 8)));
  auto got = cm->wait_event(8us);
  ASSERT_TRUE(got) << got.error().message;
  EXPECT_TRUE(std::holds_alternative<ConnectRequest>(*got));
}

// The reject of a ConnectRequest: PD into slot cm_id, PD_ADDR = the slot (unless inline),
// FIN_POLICY as asked (DEFAULT: the listener's), the frame as the hardware resolves it.
TEST_P(PassiveCmTest, RejectWritesTheSlotAndPostsTheWqeForEachFinPolicy) {
  ListenOptions o;
  o.fin_policy = FinPolicy::IRDMA;  // what DEFAULT resolves to
  listen(o);
  struct Case {
    FinPolicy policy;
    size_t pd_len;
    FinPolicy on_wire;
  };
  const Case cases[] = {
      {FinPolicy::DEFAULT, 100, FinPolicy::IRDMA},
      {FinPolicy::DEFAULT, 12, FinPolicy::IRDMA},
      {FinPolicy::SIW_SAFE, 200, FinPolicy::SIW_SAFE},
      {FinPolicy::SIW_SAFE, 0, FinPolicy::SIW_SAFE},
      {FinPolicy::IRDMA, 33, FinPolicy::IRDMA},
      {FinPolicy::ABORT, 64, FinPolicy::ABORT},
      {FinPolicy::ABORT, 32, FinPolicy::ABORT},
  };
  uint8_t seed = 1;
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(regs::name(c.policy)) + " " + std::to_string(c.pd_len));
    const uint32_t id = indicated(request(2, true, 10, seed));
    std::vector<std::byte> user = as_bytes(pattern(c.pd_len, static_cast<uint8_t>(seed + 100)));
    const auto sent = u8(user);
    RejectOptions ro;
    ro.fin_policy = c.policy;
    ro.wr_id = 0x5000 + seed;
    auto done = cm->reject(id, user, ro);
    ASSERT_TRUE(done) << done.error().message;
    std::fill(user.begin(), user.end(), std::byte{0xEE});  // iw_cm: reusable on return
    EXPECT_EQ(done->cm_id, id);
    EXPECT_EQ(done->wr_id, 0x5000u + seed);
    const auto wqe = dev->sq().wqe(done->wqe_idx);
    namespace f = regs::sq_wqe;
    EXPECT_EQ(regs::get(wqe, f::CM_ID), id);
    EXPECT_EQ(regs::get(wqe, f::PD_LEN), c.pd_len);
    EXPECT_EQ(regs::get(wqe, f::FIN_POLICY), static_cast<uint64_t>(c.policy));
    const bool inl = c.pd_len <= 32;
    EXPECT_EQ(regs::get(wqe, f::PD_INLINE), inl ? 1u : 0u);
    if (!inl) {
      EXPECT_EQ(regs::get(wqe, f::PD_ADDR), dev->pd_area_addr(id));
    }
    // The slot holds the reject PD in every case (inline too): retransmissions read it.
    EXPECT_EQ(u8(dev->pd_area_slot(id).first(c.pd_len)), sent);
    const auto& fr = hal.frames.back();
    EXPECT_EQ(fr.cm_id, id);
    EXPECT_EQ(fr.pd, sent);
    EXPECT_EQ(fr.slot_pd, sent) << "slot written before the doorbell";
    EXPECT_EQ(fr.fin_policy, c.on_wire);
    EXPECT_EQ(fr.fin, c.on_wire == FinPolicy::IRDMA);
    EXPECT_EQ(fr.rst_after, c.on_wire == FinPolicy::ABORT);
    EXPECT_EQ(fr.wire_pd_len, c.pd_len + 4);
    if (c.on_wire != FinPolicy::ABORT) {
      ASSERT_TRUE(hal.retransmit(id));
      EXPECT_EQ(hal.frames.back().pd, sent) << "retransmission from the slot";
      ASSERT_TRUE(hal.finish_node(id, AeqEvent::CLOSED));
    }
    EXPECT_TRUE(no_event());
    EXPECT_EQ(cm->node_state(id), NodeState::kFree);
    ++seed;
  }
  EXPECT_EQ(cm->stats().terminal.closed, std::size(cases));
  EXPECT_EQ(hal.read32(r::CM_CONNS), 0u);
}

TEST_P(PassiveCmTest, RejectValidationUsesTheRequestsRevision) {
  listen();
  const uint32_t enh = indicated(request(2, true, 0, 1));
  const uint32_t rev1 = indicated(request(1, false, 0, 2));
  RejectOptions lng;
  lng.unsafe_wire_pd = true;
  const size_t db = sq_doorbells(hal);
  auto e1 = cm->reject(enh, as_bytes(pattern(509, 1)), lng);
  ASSERT_FALSE(e1);
  EXPECT_EQ(e1.error().code, Errc::kInvalidArgument);
  EXPECT_NE(e1.error().message.find("513"), std::string::npos) << e1.error().message;
  EXPECT_EQ(cm->reject(rev1, as_bytes(pattern(256, 1))).error().code, Errc::kInvalidArgument);
  EXPECT_EQ(sq_doorbells(hal), db);
  // Still held: a valid reject goes through.
  EXPECT_EQ(cm->node_state(enh), NodeState::kHeld);
  auto a = cm->reject(enh, as_bytes(pattern(508, 1)), lng);
  ASSERT_TRUE(a) << a.error().message;
  EXPECT_EQ(hal.frames.back().wire_pd_len, 512);
  auto b = cm->reject(rev1, as_bytes(pattern(512, 1)), lng);
  ASSERT_TRUE(b) << b.error().message;
  EXPECT_EQ(hal.frames.back().wire_pd_len, 512);
}

// PD_Length <= 255 by default (WIRE_PD_SAFE_MAX): siw fails a PD_Length over 256, irdma and
// cxgb4 keep it in a u8. On an enhanced connection the IRD/ORD word counts: 251 user bytes.
TEST_P(PassiveCmTest, PrivateDataIsHeldToTheInteropSafeLimit) {
  listen();
  const uint32_t enh = indicated(request(2, true, 0, 1));
  const uint32_t rev1 = indicated(request(1, false, 0, 2));
  const size_t db = sq_doorbells(hal);
  auto e252 = cm->reject(enh, as_bytes(pattern(252, 1)));
  ASSERT_FALSE(e252);
  EXPECT_EQ(e252.error().code, Errc::kInvalidArgument);
  for (const char* what : {"PD_Length 256", "255", "at most 251", "siw", "u8", "unsafe_wire_pd"}) {
    EXPECT_NE(e252.error().message.find(what), std::string::npos)
        << what << " missing in: " << e252.error().message;
  }
  auto r256 = cm->reject(rev1, as_bytes(pattern(256, 2)));
  ASSERT_FALSE(r256);
  EXPECT_NE(r256.error().message.find("at most 255"), std::string::npos) << r256.error().message;
  EXPECT_EQ(sq_doorbells(hal), db) << "nothing may reach the hardware";
  EXPECT_EQ(cm->node_state(enh), NodeState::kHeld);
  EXPECT_EQ(cm->node_state(rev1), NodeState::kHeld);

  auto a = cm->reject(enh, as_bytes(pattern(251, 1)));
  ASSERT_TRUE(a) << a.error().message;
  EXPECT_EQ(hal.frames.back().wire_pd_len, 255);
  auto b = cm->reject(rev1, as_bytes(pattern(255, 2)));
  ASSERT_TRUE(b) << b.error().message;
  EXPECT_EQ(hal.frames.back().wire_pd_len, 255);

  // the named unsafe option goes on to 512
  RejectOptions unsafe;
  unsafe.unsafe_wire_pd = true;
  const uint32_t enh2 = indicated(request(2, true, 0, 3));
  auto c = cm->reject(enh2, as_bytes(pattern(252, 3)), unsafe);
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(hal.frames.back().wire_pd_len, 256);
}

// irdma negotiates the IRD/ORD word of a reject too, and resets the connection over a word it
// refuses: the driver refuses such a word before anything is posted.
TEST_P(PassiveCmTest, ReplyIrdOrdWordMustPassIrdmasNegotiation) {
  listen();
  const uint32_t id = indicated(request(2, true, 0, 4));  // request IRD 16, ORD 4
  struct Bad {
    uint32_t word;
    const char* why;
  } const bad[] = {
      {0x00104010, "peer-to-peer"},  // no P2P
      {0x80100010, "RTR"},           // no RTR bit
      {0x80104011, "ORD 17 is above the initiator's IRD 16"},
      {0x80004001, "IRD 0 with the Read RTR bit"},
  };
  const size_t db = sq_doorbells(hal);
  for (const Bad& b : bad) {
    RejectOptions o;
    o.ird_ord = b.word;
    auto r = cm->reject(id, as_bytes(pattern(8, 4)), o);
    ASSERT_FALSE(r) << fmt::format("0x{:08X}", b.word);
    EXPECT_EQ(r.error().code, Errc::kInvalidArgument);
    EXPECT_NE(r.error().message.find(b.why), std::string::npos) << r.error().message;
    EXPECT_NE(r.error().message.find("irdma"), std::string::npos) << r.error().message;
  }
  EXPECT_EQ(sq_doorbells(hal), db);
  EXPECT_TRUE(check_reply_ird_ord(0xBFFF4011, 0x80104004)) << "IRD 0x3FFF: no numeric check";
  EXPECT_TRUE(check_reply_ird_ord(0x80008000, 0x80104004)) << "IRD 0 with Write RTR only";
  EXPECT_FALSE(check_reply_ird_ord(0x80100011, std::nullopt)) << "no request: still the RTR rule";
  EXPECT_TRUE(check_reply_ird_ord(0x80104011, std::nullopt)) << "no request: no ORD check";
  RejectOptions ok;
  ok.ird_ord = 0x80104010;  // ORD 16 = the initiator's IRD
  auto r = cm->reject(id, as_bytes(pattern(8, 4)), ok);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(regs::get(dev->sq().wqe(r->wqe_idx), regs::sq_wqe::IRD_ORD), 0x80104010u);
}

TEST_P(PassiveCmTest, ListenerTemplatesAreHeldToTheSameRules) {
  ListenOptions o;
  o.auto_reject = regs::AutoReject::ALL;
  o.template_pd = as_bytes(pattern(252, 5));
  auto l = cm->listen(0, 20049, o);
  ASSERT_FALSE(l);
  EXPECT_EQ(l.error().code, Errc::kInvalidArgument);
  EXPECT_NE(l.error().message.find("at most 251"), std::string::npos) << l.error().message;
  o.template_pd.resize(251);
  o.template_ird_ord = 0x00104010;  // no P2P
  l = cm->listen(0, 20049, o);
  ASSERT_FALSE(l);
  EXPECT_NE(l.error().message.find("peer-to-peer"), std::string::npos) << l.error().message;
  EXPECT_FALSE(hal.listeners[0].has_value()) << "nothing installed";
  o.template_ird_ord = 0x80104010;
  ASSERT_TRUE(cm->listen(0, 20049, o));
  o.template_pd.resize(252);
  o.unsafe_wire_pd = true;
  ASSERT_TRUE(cm->listen(0, 20050, o));
}

// iw_cm's contract: after reject() the cm_id delivers nothing; the driver consumes the
// node's terminal event, whatever it is, and tells a reused cm_id from the old node.
TEST_P(PassiveCmTest, NoEventsAfterRejectAndReusedCmIds) {
  listen();
  const AeqEvent ends[] = {AeqEvent::CLOSED, AeqEvent::RTX_EXHAUSTED, AeqEvent::TIMEOUT,
                           AeqEvent::RESET};
  std::vector<std::pair<uint32_t, AeqEvent>> observed;
  cm->set_terminal_observer([&](uint32_t id, AeqEvent code) { observed.emplace_back(id, code); });
  for (AeqEvent end : ends) {
    FakeRequest q = request(2, true, 20, static_cast<uint8_t>(end));
    q.cm_id = 5;  // the same cm_id every time
    const uint32_t id = indicated(q);
    EXPECT_EQ(cm->stats().nodes_held, 1u);
    ASSERT_TRUE(cm->reject(id, as_bytes(pattern(9, 1))));
    EXPECT_EQ(cm->node_state(id), NodeState::kAwaitTerminal);
    EXPECT_EQ(cm->stats().nodes_held, 0u);
    EXPECT_EQ(cm->stats().nodes_awaiting_terminal, 1u);
    if (end == AeqEvent::RESET) {
      ASSERT_TRUE(hal.inject_peer_reset(id));
    } else {
      ASSERT_TRUE(hal.finish_node(id, end));
    }
    EXPECT_TRUE(no_event()) << regs::name(end);
    EXPECT_EQ(cm->node_state(id), NodeState::kFree);
    EXPECT_EQ(cm->stats().nodes_awaiting_terminal, 0u);
    auto again = cm->reject(id, {});
    ASSERT_FALSE(again);
    EXPECT_EQ(again.error().code, Errc::kState) << "not held any more";
  }
  const CmStats s = cm->stats();
  EXPECT_EQ(s.terminal.closed, 1u);
  EXPECT_EQ(s.terminal.rtx_exhausted, 1u);
  EXPECT_EQ(s.terminal.timeout, 1u);
  EXPECT_EQ(s.terminal.reset, 1u);
  EXPECT_EQ(s.requests, 4u);
  EXPECT_EQ(s.rejects, 4u);
  EXPECT_EQ(s.peer_resets, 0u);
  EXPECT_EQ(s.unexpected_events, 0u);
  EXPECT_EQ(s.missing_terminal, 0u);
  ASSERT_EQ(observed.size(), 4u) << "the diagnostics hook sees what the application does not";
  for (size_t k = 0; k < 4; ++k) EXPECT_EQ(observed[k], std::make_pair(5u, ends[k]));

  // Terminal and the next request on the same cm_id in one batch: only the request shows.
  FakeRequest q = request(1, false, 3, 9);
  q.cm_id = 5;
  const uint32_t id = indicated(q);
  ASSERT_TRUE(cm->reject(id, {}));
  ASSERT_TRUE(hal.finish_node(id, AeqEvent::CLOSED));
  FakeRequest q2 = request(2, true, 7, 10);
  q2.cm_id = 5;
  ASSERT_TRUE(hal.inject_connect_request(q2));
  const ConnectRequest cr = next_request();
  EXPECT_EQ(cr.cm_id, 5u);
  EXPECT_EQ(u8(cr.private_data), q2.pd);
  EXPECT_EQ(cm->node_state(5), NodeState::kHeld);
  EXPECT_TRUE(no_event());
  // The new node is rejectable; its reject uses the new request's revision (+4 on the wire).
  ASSERT_TRUE(cm->reject(5, as_bytes(pattern(2, 2))));
  EXPECT_EQ(hal.frames.back().wire_pd_len, 6);
  EXPECT_EQ(cm->stats().missing_terminal, 0u);
}

// A terminal event that reaches the host before the reject's completion (ABORT frees the
// node at once) is consumed as well.
TEST_P(PassiveCmTest, TerminalBeforeTheCompletion) {
  listen();
  const uint32_t a = indicated(request(1, false, 1, 1));
  const uint32_t b = indicated(request(1, false, 1, 2));
  RejectOptions abort;
  abort.fin_policy = FinPolicy::ABORT;
  auto pa = cm->post_reject(a, {}, abort);
  auto pb = cm->post_reject(b, {}, abort);
  ASSERT_TRUE(pa && pb);
  EXPECT_EQ(cm->node_state(a), NodeState::kRejecting);
  hal.run();  // both rejects and both CLOSED events are written
  // One pump reads the AEQ (both CLOSED events, consumed) before the CQ: the completions
  // arrive as RejectComplete events, the terminal events never.
  int n = 0;
  while (auto c = cm->poll()) {
    EXPECT_TRUE(c->ok()) << c->status();
    ++n;
  }
  EXPECT_EQ(n, 2);
  EXPECT_TRUE(no_event());
  EXPECT_EQ(cm->stats().terminal.closed, 2u);
  EXPECT_EQ(cm->stats().nodes_awaiting_terminal, 0u);
  EXPECT_EQ(cm->node_state(a), NodeState::kFree);
  EXPECT_EQ(cm->node_state(b), NodeState::kFree);
  // The cm_ids are reused by the hardware and indicated again.
  EXPECT_EQ(indicated(request(1, false, 1, 3)), a);
}

// Cm::post_rejects: three held connections rejected with one SQ_DB; a list naming a
// connection twice, or one already rejected, posts nothing and leaves every connection held.
TEST_P(PassiveCmTest, PostRejectsPostsAListWithOneDoorbell) {
  listen();
  const uint32_t a = indicated(request(1, false, 1, 1));
  const uint32_t b = indicated(request(1, false, 1, 2));
  const uint32_t c = indicated(request(1, false, 1, 3));
  const std::vector<std::byte> pd(8, std::byte{0x5a});
  auto sq_dbs = [&] {
    return std::count_if(hal.writes.begin(), hal.writes.end(),
                         [](const auto& w) { return w.offset == r::SQ_DB; });
  };
  std::vector<HeldReject> twice{{cm->handle(a), pd, {}}, {cm->handle(a), pd, {}}};
  auto bad = cm->cm().post_rejects(twice);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, Errc::kState);
  EXPECT_NE(bad.error().message.find("reject 1 of the list"), std::string::npos)
      << bad.error().message;
  EXPECT_EQ(cm->node_state(a), NodeState::kHeld);
  const auto dbs0 = sq_dbs();
  std::vector<HeldReject> list{
      {cm->handle(a), pd, {}}, {cm->handle(b), {}, {}}, {cm->handle(c), pd, {}}};
  auto n = cm->cm().post_rejects(list);
  ASSERT_TRUE(n) << n.error().message;
  EXPECT_EQ(*n, 3u);
  EXPECT_EQ(sq_dbs(), dbs0 + 1) << "one doorbell for the list";
  for (uint32_t id : {a, b, c}) EXPECT_EQ(cm->node_state(id), NodeState::kRejecting);
  auto again = cm->cm().post_rejects(std::span(list).subspan(2));
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code, Errc::kState);
  hal.run();
  int done = 0;
  while (auto x = cm->poll()) {
    EXPECT_TRUE(x->ok()) << x->status();
    ++done;
  }
  EXPECT_EQ(done, 3);
  EXPECT_EQ(cm->stats().rejects, 3u);
}

TEST_P(PassiveCmTest, RejectAfterPeerResetFailsWithPeerResetAndFreesTheCmId) {
  listen();
  const uint32_t id = indicated(request(2, true, 16));
  ASSERT_TRUE(hal.inject_peer_reset(id));
  Event e = next();
  ASSERT_TRUE(std::holds_alternative<PeerReset>(e));
  EXPECT_EQ(std::get<PeerReset>(e).cm_id, id);
  EXPECT_EQ(cm->node_state(id), NodeState::kHeldReset);
  EXPECT_EQ(hal.read32(r::CM_CONNS), 1u) << "held until the host rejects";
  const size_t frames = hal.frames.size();
  auto r1 = cm->reject(id, as_bytes(pattern(10, 1)));
  ASSERT_FALSE(r1);
  EXPECT_EQ(r1.error().code, Errc::kHardware);
  EXPECT_EQ(r1.error().hw_major, static_cast<uint16_t>(regs::CqMajor::CTX));
  EXPECT_EQ(r1.error().hw_minor, static_cast<uint16_t>(regs::CqMinor::PEER_RESET));
  EXPECT_EQ(hal.frames.size(), frames) << "nothing sent";
  EXPECT_EQ(hal.read32(r::CM_CONNS), 0u);
  EXPECT_EQ(cm->node_state(id), NodeState::kFree);
  EXPECT_TRUE(no_event());

  // The race: the RST's event is still in the AEQ when the application rejects. reject()
  // reads it while it waits (and swallows it): the cm_id is free on return.
  const uint32_t id2 = indicated(request(1, false, 4));
  ASSERT_TRUE(hal.inject_peer_reset(id2));
  auto r2 = cm->reject(id2, {});
  ASSERT_FALSE(r2);
  EXPECT_EQ(r2.error().hw_minor, static_cast<uint16_t>(regs::CqMinor::PEER_RESET));
  EXPECT_EQ(cm->node_state(id2), NodeState::kFree);
  EXPECT_TRUE(no_event()) << "no PeerReset after the reject returned";

  // Pipelined: the completion comes back as an event, the RESET event is consumed.
  const uint32_t id3 = indicated(request(2, true, 4));
  ASSERT_TRUE(hal.inject_peer_reset(id3));
  ASSERT_TRUE(cm->post_reject(id3, {}));
  hal.run();
  auto c3 = cm->poll();
  ASSERT_TRUE(c3);
  EXPECT_EQ(c3->minor, static_cast<uint16_t>(regs::CqMinor::PEER_RESET));
  EXPECT_TRUE(no_event()) << "no PeerReset after the reject";
  EXPECT_EQ(cm->node_state(id3), NodeState::kFree);

  const CmStats s = cm->stats();
  EXPECT_EQ(s.peer_resets, 1u);
  EXPECT_EQ(s.late_resets, 3u);
  EXPECT_EQ(s.terminal.reset, 2u);
  EXPECT_EQ(s.unexpected_events, 0u);
  EXPECT_EQ(hal.cm_stats[r::STAT_REJECT_LATE], 3u);
}

TEST_P(PassiveCmTest, RejectOfACmIdNotHeldIsAStateError) {
  listen();
  const size_t db = sq_doorbells(hal);
  auto never = cm->reject(12, {});  // nothing there at all
  ASSERT_FALSE(never);
  EXPECT_EQ(never.error().code, Errc::kState);
  // A connection the hardware indicated, but to another Cm: not ours.
  Cm other(*dev);
  auto id = hal.inject_connect_request(request(1, false, 2));
  ASSERT_TRUE(id);
  auto foreign = other.reject(ConnHandle{*id, 1}, {});
  ASSERT_FALSE(foreign);
  EXPECT_EQ(foreign.error().code, Errc::kState);
  EXPECT_NE(foreign.error().message.find("names no connection of this Cm"), std::string::npos)
      << foreign.error().message;
  EXPECT_EQ(sq_doorbells(hal), db) << "nothing posted";
  // Ours once indicated; a second reject is refused without posting.
  EXPECT_EQ(next_request().cm_id, *id);
  EXPECT_EQ(ContextDiag(*dev).write_context(*id, CmContext{}).error().code, Errc::kState)
      << "a held node is not a host-written context";
  ASSERT_TRUE(cm->reject(*id, {}));
  auto twice = cm->reject(*id, {});
  ASSERT_FALSE(twice);
  EXPECT_EQ(twice.error().code, Errc::kState);
  EXPECT_EQ(sq_doorbells(hal), db + 1);
  EXPECT_EQ(cm->post_reject(*id, {}).error().code, Errc::kState);
}

// The hardware refused the reject WQE (here: the PD read failed): the node would stay
// allocated, so the driver rejects it once more (no PD, ABORT) and reports the first error.
TEST_P(PassiveCmTest, RefusedRejectIsCleanedUpByTheDriver) {
  listen();
  const uint32_t id = indicated(request(1, false, 8));
  hal.dma_read_errors.push_back({dev->pd_area_addr(id), dev->pd_area_addr(id) + 512});
  auto r1 = cm->reject(id, as_bytes(pattern(100, 4)));
  ASSERT_FALSE(r1);
  EXPECT_EQ(r1.error().hw_major, static_cast<uint16_t>(regs::CqMajor::DMA));
  EXPECT_EQ(r1.error().hw_minor, static_cast<uint16_t>(regs::CqMinor::DMA_PD));
  ASSERT_FALSE(hal.frames.empty());
  const auto& fr = hal.frames.back();
  EXPECT_EQ(fr.cm_id, id);
  EXPECT_TRUE(fr.pd.empty());
  EXPECT_TRUE(fr.rst_after) << "ABORT";
  EXPECT_EQ(cm->stats().cleanup_rejects, 1u);
  EXPECT_FALSE(cm->poll()) << "the cleanup's completion is the driver's";
  EXPECT_TRUE(no_event()) << "its terminal event too";
  EXPECT_EQ(cm->node_state(id), NodeState::kFree);
  EXPECT_EQ(hal.read32(r::CM_CONNS), 0u);
  EXPECT_EQ(cm->stats().rejects, 1u);
}

TEST_P(PassiveCmTest, PipelinedRejectsSettleThroughPoll) {
  listen();
  std::vector<uint32_t> ids;
  for (uint8_t k = 0; k < 12; ++k)
    ids.push_back(indicated(request(k % 2 ? 1 : 2, k % 2 == 0, k, k)));
  hal.hold = true;
  for (size_t k = 0; k < ids.size(); ++k) {
    RejectOptions o;
    o.wr_id = k;
    o.push = k % 3 == 0;
    ASSERT_TRUE(cm->post_reject(ids[k], as_bytes(pattern(k * 20, 1)), o));
    EXPECT_EQ(cm->node_state(ids[k]), NodeState::kRejecting);
  }
  hal.inject_peer_reset(ids[4]);  // the RST reached the hardware before the WQE
  hal.hold = false;
  size_t got = 0;
  // The bound is generous: with the fake's DMA thread the completions land on its own time.
  for (int spins = 0; got < ids.size() && spins < 200'000; ++spins) {
    if (auto c = cm->poll()) {
      EXPECT_EQ(c->ok(), c->wr_id != 4) << c->wr_id << " " << c->status();
      ++got;
    } else {
      hal.wait_cycles(16);
    }
  }
  EXPECT_EQ(got, ids.size());
  EXPECT_EQ(cm->stats().nodes_awaiting_terminal, ids.size() - 1)
      << "the CLOSED events still to come; the RESET of ids[4] was read with the completions";
  EXPECT_TRUE(no_event());
  EXPECT_EQ(cm->node_state(ids[4]), NodeState::kFree);
  for (size_t k = 0; k < ids.size(); ++k) {
    if (k != 4) {
      ASSERT_TRUE(hal.finish_node(ids[k], AeqEvent::CLOSED));
    }
  }
  EXPECT_TRUE(no_event());
  EXPECT_EQ(cm->stats().nodes_awaiting_terminal, 0u);
  EXPECT_EQ(hal.read32(r::CM_CONNS), 0u);
}

TEST_P(PassiveCmTest, AutoRejectsNeverReachTheApplication) {
  ListenOptions all;
  all.auto_reject = regs::AutoReject::ALL;
  all.template_pd = as_bytes(pattern(30, 8));
  all.template_ird_ord = 0x80014001;
  all.fin_policy = FinPolicy::IRDMA;
  listen(all, 1000);
  auto id = hal.inject_connect_request([] {
    FakeRequest q = request(2, true, 5);
    q.loc_port = 1000;
    return q;
  }());
  ASSERT_TRUE(id);
  EXPECT_TRUE(no_event());
  const auto& fr = hal.frames.back();
  EXPECT_TRUE(fr.auto_reject);
  EXPECT_EQ(fr.pd, pattern(30, 8));
  EXPECT_TRUE(fr.ird_ord_valid);
  EXPECT_EQ(fr.ird_ord, 0x80014001u);
  EXPECT_TRUE(fr.fin);
  ASSERT_TRUE(hal.finish_node(*id, AeqEvent::CLOSED));
  EXPECT_TRUE(no_event());
  EXPECT_EQ(cm->stats().requests, 0u);
  EXPECT_EQ(cm->stats().unexpected_events, 0u);
  EXPECT_EQ(cm->reject(*id, {}).error().code, Errc::kState);

  ListenOptions backlog;
  backlog.backlog = 1;
  backlog.auto_reject = regs::AutoReject::BACKLOG;
  listen(backlog, 2000);
  FakeRequest q = request(1, false, 1);
  q.loc_port = 2000;
  auto first = hal.inject_connect_request(q);
  auto second = hal.inject_connect_request(q);
  ASSERT_TRUE(first && second);
  EXPECT_EQ(next_request().cm_id, *first);
  EXPECT_TRUE(no_event()) << "the second waited behind a full backlog: auto-rejected";
  EXPECT_TRUE(hal.frames.back().auto_reject);
  EXPECT_EQ(hal.cm_stats[r::STAT_REJECT_AUTO], 2u);
}

// The diagnostic context path is fenced off from the passive CM: with a listener installed
// ContextDiag refuses to write a context or reject, and Cm::reject never falls through to a
// context for a cm_id it did not indicate. Nothing reaches the hardware either way.
TEST_P(PassiveCmTest, DiagnosticContextsAreFencedOff) {
  const ListenerId l = listen();
  const uint32_t held = indicated(request(1, false, 1));
  ContextDiag diag(*dev);
  CmContext c;
  c.req_rev = 1;
  c.req_flags = 0x40;
  c.snd_nxt = 77;
  const size_t cqp = count_writes(hal, r::CQP_DB), db = sq_doorbells(hal);
  auto w = diag.write_context(40, c);
  ASSERT_FALSE(w);
  EXPECT_EQ(w.error().code, Errc::kState);
  EXPECT_NE(w.error().message.find("listener"), std::string::npos) << w.error().message;
  auto over = diag.write_context(held, c);  // would overwrite the held node
  ASSERT_FALSE(over);
  EXPECT_EQ(over.error().code, Errc::kState);
  const auto pd = as_bytes(pattern(60, 2));
  EXPECT_EQ(diag.reject(held, pd).error().code, Errc::kState);
  EXPECT_EQ(diag.post_reject(40, pd).error().code, Errc::kState);
  auto unknown = cm->reject(40, pd);
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().code, Errc::kState);
  EXPECT_NE(unknown.error().message.find("stale handle"), std::string::npos)
      << unknown.error().message;
  EXPECT_EQ(count_writes(hal, r::CQP_DB), cqp) << "no context written";
  EXPECT_EQ(sq_doorbells(hal), db) << "nothing posted";
  EXPECT_EQ(cm->node_state(held), NodeState::kHeld);
  auto node = dev->cqp_read_node(held);
  ASSERT_TRUE(node);
  EXPECT_TRUE(node->hosted);
  EXPECT_EQ(node->state, regs::CmState::MPAREQ_RCVD);

  // Still refused while a connection is in the table (CM_CONNS != 0) with no listener.
  ASSERT_TRUE(cm->destroy_listener(l));
  auto conns = diag.write_context(40, c);
  ASSERT_FALSE(conns);
  EXPECT_EQ(conns.error().code, Errc::kState);
  EXPECT_NE(conns.error().message.find("CM_CONNS"), std::string::npos) << conns.error().message;
  // Idle again: the diagnostic path works.
  ASSERT_TRUE(cm->reject(held, {}));
  ASSERT_TRUE(hal.finish_node(held, AeqEvent::CLOSED));
  EXPECT_TRUE(no_event());
  ASSERT_EQ(hal.read32(r::CM_CONNS), 0u);
  ASSERT_TRUE(diag.write_context(40, c));
  auto done = diag.reject(40, pd);
  ASSERT_TRUE(done) << done.error().message;
  EXPECT_EQ(done->tcp_seq, 77u);
  EXPECT_EQ(regs::get(dev->sq().wqe(done->wqe_idx), regs::sq_wqe::PD_ADDR),
            dev->pd_slot_addr(done->wqe_idx));
}

// Events that break the hardware's contract are counted, never fatal, never misdelivered.
TEST_P(PassiveCmTest, ContractViolationsAreCounted) {
  listen();
  auto raw = [&](AeqEvent code, uint32_t cm_id) {
    std::array<std::byte, 32> img{};
    regs::put(img, regs::aeqe::EVENT_CODE, static_cast<uint64_t>(code));
    regs::put(img, regs::aeqe::CM_ID, cm_id);
    regs::put(img, regs::aeqe::REV, 1);
    hal.inject_aeqe(img);
  };
  raw(AeqEvent::CLOSED, 30);  // a terminal event for a cm_id nobody knows
  raw(AeqEvent::RESET, 31);
  raw(static_cast<AeqEvent>(0x3F), 32);  // an unknown code
  raw(AeqEvent::CONNECT_REQUEST, 64);    // beyond the table
  EXPECT_TRUE(no_event());
  EXPECT_EQ(cm->stats().unexpected_events, 4u);
  // A request on a cm_id whose previous node never sent its terminal event.
  const uint32_t id = indicated(request(1, false, 0));
  ASSERT_TRUE(cm->reject(id, {}));
  raw(AeqEvent::CONNECT_REQUEST, id);
  EXPECT_EQ(next_request().cm_id, id);
  EXPECT_EQ(cm->stats().missing_terminal, 1u);
  EXPECT_EQ(cm->node_state(id), NodeState::kHeld);
  // A terminal event for a node the application holds frees it: a later reject is refused.
  raw(AeqEvent::TIMEOUT, id);
  EXPECT_TRUE(no_event());
  EXPECT_EQ(cm->stats().unexpected_events, 5u);
  EXPECT_EQ(cm->node_state(id), NodeState::kFree);
}

// The hardware's CM engine sends the reject and waits while the AEQ is full: a synchronous
// reject must keep consuming events, and hand them out afterwards in order.
TEST_P(PassiveCmTest, RejectKeepsTheAeqDrainedWhileItWaits) {
  DeviceConfig cfg;
  cfg.aeq_entries = 4;
  open(cfg);
  listen();
  std::vector<uint32_t> ids;
  ids.push_back(*hal.inject_connect_request(request(1, false, 2, 0)));
  const ConnectRequest first = next_request();
  EXPECT_EQ(first.cm_id, ids[0]);
  for (uint8_t k = 1; k < 7; ++k)
    ids.push_back(*hal.inject_connect_request(request(1, false, 2, k)));
  ASSERT_GT(hal.aeq_backlog(), 0u) << "the CM engine is stalled on the AEQ";
  RejectOptions o;
  o.timeout = 80us;
  auto r = cm->reject(first.cm_id, {}, o);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(hal.aeq_backlog(), 0u);
  for (size_t k = 1; k < ids.size(); ++k) {
    const ConnectRequest cr = next_request();
    EXPECT_EQ(cr.cm_id, ids[k]) << "in AEQ order";
    EXPECT_EQ(u8(cr.private_data), pattern(2, static_cast<uint8_t>(k)));
  }
  EXPECT_TRUE(no_event());
  // A PeerReset read off the AEQ during a reject is dropped once its cm_id is rejected.
  ASSERT_TRUE(hal.inject_peer_reset(ids[1]));
  ASSERT_TRUE(hal.inject_peer_reset(ids[2]));
  ASSERT_TRUE(cm->reject(ids[3], {}));  // reads both RESETs while it waits
  EXPECT_EQ(cm->node_state(ids[1]), NodeState::kHeldReset);
  EXPECT_EQ(cm->reject(ids[1], {}).error().hw_minor,
            static_cast<uint16_t>(regs::CqMinor::PEER_RESET));
  Event e = next();
  ASSERT_TRUE(std::holds_alternative<PeerReset>(e));
  EXPECT_EQ(std::get<PeerReset>(e).cm_id, ids[2]) << "only the one still held";
  EXPECT_TRUE(no_event());
}

}  // namespace
}  // namespace bouncer
