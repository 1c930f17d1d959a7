// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// The card tools without a card: the serve loop (hostsw/cli/serve.hpp) and its configuration
// file, the stats view (card_stats.hpp) and the core-clock measurement on the fake HAL, the
// CMAC link (bouncer/cmac_link.hpp) against a fake register map, and the xclbin clock choice.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "bouncer/cmac_link.hpp"
#include "bouncer/device.hpp"
#include "bouncer/selftest.hpp"
#include "bouncer/xrt_device.hpp"
#include "card_stats.hpp"
#include "serve.hpp"
#include "test_driver_fake_hal.hpp"

namespace bouncer {
namespace {

using cli::ServeConfig;
using cli::ServeListener;
using testing::FakeHal;
using testing::FakeRequest;

constexpr const char* kGood = R"({
  "listeners": [
    {"ip": "10.0.0.2", "port": 20049, "mac": "02:00:00:00:00:02", "pd": "first #%n"},
    {"port": 4791, "mac": "02-00-00-00-00-03", "pd": "second #%n", "fin_policy": "abort",
     "auto_reject": "backlog", "backlog": 4, "template_pd": "busy"}
  ],
  "stop_after": 7, "max_wall_s": 2.5, "unsafe_wire_pd": false
})";

TEST(ServeConfigFile, ParsesEveryKey) {
  auto c = cli::parse_serve_config(kGood);
  ASSERT_TRUE(c) << c.error().message;
  ASSERT_EQ(c->listeners.size(), 2u);
  EXPECT_EQ(c->listeners[0].ip, 0x0A000002u);
  EXPECT_EQ(c->listeners[0].port, 20049);
  EXPECT_EQ(c->listeners[0].mac, (MacAddr{2, 0, 0, 0, 0, 2}));
  EXPECT_EQ(c->listeners[0].pd, "first #%n");
  EXPECT_EQ(c->listeners[0].fin_policy, "siw") << "the default";
  EXPECT_EQ(c->listeners[1].ip, 0u) << "no ip: every address";
  EXPECT_EQ(c->listeners[1].mac, (MacAddr{2, 0, 0, 0, 0, 3}));
  EXPECT_EQ(c->listeners[1].fin_policy, "abort");
  EXPECT_EQ(c->listeners[1].auto_reject, "backlog");
  EXPECT_EQ(c->listeners[1].backlog, 4u);
  EXPECT_EQ(c->listeners[1].template_pd, "busy");
  EXPECT_EQ(c->stop_after, 7u);
  EXPECT_DOUBLE_EQ(c->max_wall_s, 2.5);
  EXPECT_FALSE(cli::serve_config_error(*c)) << *cli::serve_config_error(*c);
}

TEST(ServeConfigFile, BadInputIsNamed) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{", "not JSON"},
      {"[]", "not an object"},
      {R"({"listeners": []})", "none given"},
      {R"({"listener": []})", "listener: unknown key"},
      {R"({"listeners": [{"port": 1}]})", "no \"mac\""},
      {R"({"listeners": [{"mac": "02:00:00:00:00:02"}]})", "no \"port\""},
      {R"({"listeners": [{"port": 0, "mac": "02:00:00:00:00:02"}]})", "listeners[0].port"},
      {R"({"listeners": [{"port": 70000, "mac": "02:00:00:00:00:02"}]})", "listeners[0].port"},
      {R"({"listeners": [{"port": 1, "mac": "02:00:00:00:00"}]})", "listeners[0].mac"},
      {R"({"listeners": [{"port": 1, "mac": "02:00:00:00:00:02", "ip": "10.0.0.256"}]})",
       "listeners[0].ip"},
      {R"({"listeners": [{"port": 1, "mac": "02:00:00:00:00:02", "pd": 5}]})",
       "listeners[0].pd: not a string"},
      {R"({"listeners": [{"port": 1, "mac": "02:00:00:00:00:02"}], "max_wall_s": -1})",
       "max_wall_s"},
  };
  for (const auto& [text, want] : cases) {
    auto c = cli::parse_serve_config(text);
    ASSERT_FALSE(c) << text;
    EXPECT_EQ(c.error().code, Errc::kInvalidArgument);
    EXPECT_NE(c.error().message.find(want), std::string::npos)
        << text << " -> " << c.error().message;
  }
}

TEST(ServeConfigFile, ChecksNeedNoDevice) {
  ServeConfig c;
  ServeListener l;
  l.mac = {2, 0, 0, 0, 0, 2};
  c.listeners = {l};
  EXPECT_FALSE(cli::serve_config_error(c));
  c.listeners[0].auto_reject = "backlog";
  EXPECT_NE(cli::serve_config_error(c)->find("needs a backlog"), std::string::npos);
  c.listeners[0].auto_reject = "off";
  c.listeners[0].mac = {1, 0, 0, 0, 0, 2};  // multicast
  EXPECT_NE(cli::serve_config_error(c)->find("not a unicast"), std::string::npos);
  c.listeners[0].mac = {2, 0, 0, 0, 0, 2};
  c.listeners[0].pd = std::string(250, 'x') + "%n";  // 251 bytes for n < 10
  c.stop_after = 9;
  EXPECT_FALSE(cli::serve_config_error(c));
  c.stop_after = 10;  // "%n" up to "10": 252 bytes
  EXPECT_NE(cli::serve_config_error(c)->find("at most 251"), std::string::npos);
  c.unsafe_wire_pd = true;
  EXPECT_FALSE(cli::serve_config_error(c));
  c.listeners[0].pd = "x";
  c.listeners.push_back(c.listeners[0]);
  EXPECT_NE(cli::serve_config_error(c)->find("second listener"), std::string::npos);
  c.listeners[1].fin_policy = "never";
  c.listeners[1].port = 2;
  EXPECT_NE(cli::serve_config_error(c)->find("fin_policy 'never'"), std::string::npos);
}

TEST(ServeHelpers, AddressesAndPd) {
  EXPECT_EQ(cli::parse_ipv4("192.168.1.20"), 0xC0A80114u);
  EXPECT_FALSE(cli::parse_ipv4("1.2.3"));
  EXPECT_FALSE(cli::parse_ipv4("1.2.3.4.5"));
  EXPECT_FALSE(cli::parse_ipv4("1.2.3.x"));
  EXPECT_EQ(cli::mac_str(*cli::parse_mac("0A:1b:2C:3d:4E:5f")), "0a:1b:2c:3d:4e:5f");
  const auto pd = cli::serve_reject_pd("a%nb%n%", 12);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(pd.data()), pd.size()), "a12b12%");
}

// Two listeners, one request each: every request is rejected with its own listener's PD, one
// JSON line per event, and the summary counts them.
TEST(ServeLoop, EachListenerRejectsWithItsOwnPd) {
  FakeHal hal;
  auto dev = Device::open(hal);
  ASSERT_TRUE(dev) << dev.error().message;
  ServeConfig c;
  ServeListener a;
  a.ip = 0x0A000001;
  a.port = 20049;
  a.mac = {2, 0, 0, 0, 0, 1};
  a.pd = "A#%n";
  ServeListener b = a;
  b.port = 4791;
  b.pd = "B#%n";
  c.listeners = {a, b};
  ASSERT_FALSE(cli::serve_config_error(c));

  std::vector<std::string> lines;
  cli::ServeHooks h;
  h.emit = [&](const std::string& l) { lines.push_back(l); };
  int injected = 0, answered = 0;
  h.before_poll = [&] {
    if (injected == 0) {
      FakeRequest q;
      q.loc_port = 4791;  // listener b first
      q.rem_port = 50001;
      ASSERT_TRUE(hal.inject_connect_request(q));
      FakeRequest r;
      r.loc_port = 20049;
      r.rem_port = 50002;
      ASSERT_TRUE(hal.inject_connect_request(r));
      injected = 2;
    }
  };
  h.after_request = [&] {
    if (++answered == 2) cli::request_serve_stop();
  };
  h.summary_extra = [] { return std::string(R"(,"extra":1)"); };
  cli::clear_serve_stop();
  EXPECT_EQ(cli::serve(**dev, c, h), 0);
  cli::clear_serve_stop();

  ASSERT_EQ(lines.size(), 7u);  // 2 listening, 2 x (request, reject), summary
  EXPECT_NE(lines[0].find(R"("event":"listening","ip":"10.0.0.1","mac":"02:00:00:00:00:01",)"
                          R"("port":20049,"listener":true)"),
            std::string::npos)
      << lines[0];
  EXPECT_NE(lines[1].find(R"("port":4791)"), std::string::npos) << lines[1];
  auto hexs = [](const std::string& s) {
    std::string h;
    for (char ch : s) h += fmt::format("{:02x}", static_cast<unsigned char>(ch));
    return h;
  };
  EXPECT_NE(lines[2].find(R"("event":"connect_request","n":1)"), std::string::npos);
  EXPECT_NE(lines[2].find(R"("local":"10.0.0.1:4791")"), std::string::npos) << lines[2];
  EXPECT_NE(lines[3].find(R"("event":"reject","n":1)"), std::string::npos);
  EXPECT_NE(lines[3].find(R"("status":"ok")"), std::string::npos) << lines[3];
  EXPECT_NE(lines[3].find("\"pd_hex\":\"" + hexs("B#1") + "\""), std::string::npos) << lines[3];
  EXPECT_NE(lines[5].find("\"pd_hex\":\"" + hexs("A#2") + "\""), std::string::npos) << lines[5];
  EXPECT_NE(lines[6].find(R"("event":"summary","stop":"signal","requests":2,"rejects_ok":2,)"),
            std::string::npos)
      << lines[6];
  EXPECT_NE(lines[6].find(R"(,"extra":1,"hw":{)"), std::string::npos) << lines[6];
  ASSERT_EQ(hal.frames.size(), 2u);
  EXPECT_EQ(std::string(hal.frames[0].pd.begin(), hal.frames[0].pd.end()), "B#1");
  EXPECT_EQ(std::string(hal.frames[1].pd.begin(), hal.frames[1].pd.end()), "A#2");
}

// The stats view reads registers only and takes rates over the core's cycle counter.
TEST(CardStats, RatesOverTheKernelClock) {
  FakeHal hal;
  auto dev = Device::open(hal);
  ASSERT_TRUE(dev);
  hal.cm_stats[regs::reg::STAT_MPA_REQ] = 0xFFFFFFF0u;  // wraps between the samples
  hal.cm_stats[regs::reg::STAT_RX_FRAMES] = 100;
  const auto s0 = cli::sample_stats(hal);
  hal.cm_stats[regs::reg::STAT_MPA_REQ] += 0x20;  // 32 requests
  hal.cm_stats[regs::reg::STAT_RX_FRAMES] += 500;
  hal.wait_cycles(250'000);
  const auto s1 = cli::sample_stats(hal);
  const double secs = static_cast<double>(s1.cycles - s0.cycles) / 250e6;
  ASSERT_GT(secs, 0.0);
  EXPECT_DOUBLE_EQ(cli::sample_interval_s(s0, s1, 250.0), secs);
  EXPECT_DOUBLE_EQ(*cli::counter_rate(0xFFFFFFF0u, 0x10u, s0, s1, 250.0), 32 / secs);
  EXPECT_DOUBLE_EQ(*cli::counter_rate(100, 600, s0, s1, 125.0), 500 / (2 * secs))
      << "half the clock: twice the time";
  const std::string text = cli::format_stats(s1, &s0, 250.0);
  EXPECT_NE(text.find(fmt::format("STAT_MPA_REQ {:>20}  {:>12.1f}/s", 16, 32 / secs)),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(fmt::format("STAT_RX_FRAMES {:>18}  {:>12.1f}/s", 600, 500 / secs)),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("CM_CONNS"), std::string::npos);
  EXPECT_NE(text.find("rings: SQ0 ci 0 pi 0;"), std::string::npos) << text;
  EXPECT_NE(text.find("AEQ head "), std::string::npos) << text;
  cli::StatsSample same = s1;
  EXPECT_FALSE(cli::counter_rate(1, 2, s1, same, 250.0)) << "no time passed: no rate";
}

TEST(CoreClock, MeasuredOnTheHalsTimeBase) {
  FakeHal hal;  // 4 ns of host time per core cycle
  auto m = measure_core_clock(hal, std::chrono::microseconds(100));
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_DOUBLE_EQ(m->mhz, 250.0);
  EXPECT_FALSE(clock_mismatch(m->mhz, 250.0));
  EXPECT_FALSE(clock_mismatch(245.1, 250.0)) << "within 2 %";
  auto mm = clock_mismatch(m->mhz, 300.0);
  ASSERT_TRUE(mm);
  EXPECT_NE(mm->find("250.000 MHz, -16.7 % off the 300.000 MHz"), std::string::npos) << *mm;
  FakeHal::Config sc;
  sc.cycles = FakeHal::Config::Cycles::kStuck;
  FakeHal stuck(sc);
  auto s = measure_core_clock(stuck, std::chrono::microseconds(100));
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, Errc::kHardware);
}

TEST(XclbinClock, DataClockIsApClk) {
  using card::XclbinClock;
  EXPECT_EQ(card::kernel_clock_of({{"KERNEL_CLK", 2, 500}, {"DATA_CLK", 1, 300}}), 300.0);
  EXPECT_EQ(card::kernel_clock_of({{"KERNEL_CLK", 2, 500}, {"SYS", 3, 100}}), 500.0);
  EXPECT_FALSE(card::kernel_clock_of({{"SYS", 3, 100}}));
  EXPECT_FALSE(card::kernel_clock_of({}));
}

// Every wait of the XRT backend has a bound on the host clock: beyond it the wait is cut and
// the backend keeps a kTimeout naming the wait (the cycle count of a garbage register, say).
TEST(XrtWaitBound, LongWaitsAreCutAndNamed) {
  using namespace std::chrono_literals;
  auto ok = card::bounded_wait(0.0015, 60s, "wait_cycles(375000) at 250.000 MHz");
  EXPECT_EQ(ok.wait, 1500us);
  EXPECT_FALSE(ok.error);
  EXPECT_EQ(card::bounded_wait(0, 60s, "x").wait, 0ns);
  auto cut = card::bounded_wait(1.8446744073709552e19 / 250e6, 60s,
                                "wait_cycles(18446744073709551615) at 250.000 MHz");
  EXPECT_EQ(cut.wait, 60s) << "cut at the bound, no overflow";
  ASSERT_TRUE(cut.error);
  EXPECT_EQ(cut.error->code, Errc::kTimeout);
  EXPECT_NE(cut.error->message.find("wait_cycles(18446744073709551615) at 250.000 MHz"),
            std::string::npos)
      << cut.error->message;
  EXPECT_NE(cut.error->message.find("bound of 60.000 s"), std::string::npos);
}

// ---------------------------------------------------------------- CMAC
// The CMAC kernel's map as a fake: registers, the counters' live values copied to the
// readable ones at a STAT_PM_TICK write, a link that comes up after some polls.
class FakeCmac : public cmac::CmacRegisters {
 public:
  std::map<uint32_t, uint32_t> regs;
  std::map<uint32_t, uint64_t> live;  // counters by LSB offset
  std::vector<std::pair<uint32_t, uint32_t>> writes;
  int up_after_reads = -1;  // STAT_RX_STATUS reads until the link is up (-1: never)
  std::chrono::nanoseconds now{0};

  uint32_t read32(uint32_t off) override {
    if (off == cmac::reg::STAT_RX_STATUS && up_after_reads >= 0) {
      return up_after_reads-- > 0 ? 0x40u : 0x3u;  // local fault, then status + aligned
    }
    auto it = regs.find(off);
    return it == regs.end() ? 0 : it->second;
  }
  void write32(uint32_t off, uint32_t v) override {
    writes.push_back({off, v});
    regs[off] = v;
    if (off == cmac::reg::STAT_PM_TICK && v == 1) {
      for (const auto& [o, val] : live) {
        regs[o] = static_cast<uint32_t>(val);
        regs[o + 4] = static_cast<uint32_t>(val >> 32);
      }
    }
  }
  std::chrono::nanoseconds host_now() override { return now; }
  void wait_for(std::chrono::nanoseconds d) override { now += d; }
};

TEST(CmacLink, StatusDecode) {
  const auto s = cmac::LinkStatus::decode(0x4003, 0);
  EXPECT_TRUE(s.rx_status && s.rx_aligned && s.rx_got_signal_os);
  EXPECT_FALSE(s.rx_local_fault || s.rx_hi_ber || s.tx_local_fault);
  EXPECT_TRUE(s.up());
  const auto f = cmac::LinkStatus::decode(0x7C, 1);
  EXPECT_TRUE(f.rx_misaligned && f.rx_aligned_err && f.rx_hi_ber && f.rx_remote_fault &&
              f.rx_local_fault && f.tx_local_fault);
  EXPECT_FALSE(f.up());
  EXPECT_NE(cmac::format_link_status(f).find("link down, RS-FEC off"), std::string::npos);
  EXPECT_FALSE(cmac::LinkStatus::decode(0x3, 1).up()) << "TX local fault";
}

TEST(CmacLink, RsFecSequenceAndReadBack) {
  FakeCmac f;
  cmac::CmacLink link(f);
  link.set_rs_fec(true);
  const std::vector<std::pair<uint32_t, uint32_t>> on = {
      {0x107C, 3}, {0x1000, 7}, {0x0004, 0xC0000000u}, {0x0004, 0}};
  EXPECT_EQ(f.writes, on);
  EXPECT_TRUE(link.status().rs_fec);
  f.writes.clear();
  link.set_rs_fec(false);
  const std::vector<std::pair<uint32_t, uint32_t>> off = {
      {0x107C, 0}, {0x1000, 0}, {0x0004, 0xC0000000u}, {0x0004, 0}};
  EXPECT_EQ(f.writes, off);
  EXPECT_FALSE(link.status().rs_fec);
}

TEST(CmacLink, SnapshotLatchesFirstAndReads48Bits) {
  FakeCmac f;
  f.live[0x0500] = 0x0000'1234'5678'9ABCull;  // tx packets
  f.live[0x0608] = 0xFFFF'0000'0000'0007ull;  // rx packets: bits above 48 are not the counter
  f.regs[cmac::reg::STAT_CYCLE_COUNT] = 322;
  cmac::CmacLink link(f);
  const auto c = link.snapshot();
  ASSERT_FALSE(f.writes.empty());
  EXPECT_EQ(f.writes.front(), (std::pair<uint32_t, uint32_t>{0x02B0, 1}));
  ASSERT_EQ(c.tx.size(), 21u);
  ASSERT_EQ(c.rx.size(), 28u);
  EXPECT_STREQ(c.tx[0].name, "packets");
  EXPECT_EQ(c.tx[0].value, 0x1234'5678'9ABCull);
  EXPECT_EQ(c.rx[0].value, 7u);
  EXPECT_EQ(c.cycle_count, 322u);
  EXPECT_NE(cmac::format_counters(c).find("packets"), std::string::npos);
}

TEST(CmacLink, LinkUpWaitHasAHostClockDeadline) {
  FakeCmac f;
  f.up_after_reads = 5;  // status() reads STAT_RX_STATUS twice per look
  cmac::CmacLink link(f);
  auto up = link.wait_link_up(std::chrono::seconds(1), std::chrono::milliseconds(10));
  ASSERT_TRUE(up) << up.error().message;
  EXPECT_TRUE(up->up());
  EXPECT_EQ(f.now, std::chrono::milliseconds(20)) << "two pauses: three looks";

  FakeCmac never;
  never.up_after_reads = 1'000'000;
  cmac::CmacLink l2(never);
  auto down = l2.wait_link_up(std::chrono::milliseconds(35), std::chrono::milliseconds(10));
  ASSERT_FALSE(down);
  EXPECT_EQ(down.error().code, Errc::kTimeout);
  EXPECT_EQ(never.now, std::chrono::milliseconds(35)) << "the last pause is what was left";
  EXPECT_NE(down.error().message.find("waiting for the link to come up"), std::string::npos);
  EXPECT_NE(down.error().message.find("rx_local_fault"), std::string::npos) << down.error().message;
}

}  // namespace
}  // namespace bouncer
