// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// The QEMU `-netdev dgram` bridge without QEMU.
//
//  * DgramBridge*: the socket class (sim/net/dgram_bridge.cpp) against a plain UDP socket that
//    plays QEMU: one datagram = one frame both ways, byte-exact and in order; datagrams from any
//    other source and runts are discarded and counted; only 127.0.0.1 is accepted.
//  * BridgeCli*: `bouncer sim --mode bridge` as a separate process, with simulated initiators
//    (sim/peer, the same model the co-simulation tests use) on the far side of a UDP socket, as
//    the Linux guest would be. Their "cycle" clock is wall-clock microseconds. Each must be
//    rejected with exactly the private data the host's JSON log says it posted, the host must
//    have seen each initiator's request PD, and the hardware must end with no connection.
//    The real Linux siw guest is tb/interop.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "bouncer/peer/initiator.hpp"
#include "bouncer/sim/dgram_bridge.hpp"

extern char** environ;

namespace {

using bouncer::sim::DgramBridge;
using bouncer::sim::parse_loopback_port;
namespace P = bouncer::peer;

// A plain UDP socket on 127.0.0.1 (ephemeral port): the QEMU side.
class UdpSocket {
 public:
  UdpSocket() {
    fd_ = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    socklen_t len = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
  }
  ~UdpSocket() { ::close(fd_); }
  UdpSocket(const UdpSocket&) = delete;
  UdpSocket& operator=(const UdpSocket&) = delete;
  uint16_t port() const { return port_; }
  void send_to(uint16_t port, const std::vector<uint8_t>& d) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::sendto(fd_, d.data(), d.size(), 0, reinterpret_cast<sockaddr*>(&a), sizeof a),
              static_cast<ssize_t>(d.size()));
  }
  std::optional<std::vector<uint8_t>> recv(int timeout_ms) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, timeout_ms) <= 0) return std::nullopt;
    std::vector<uint8_t> b(65536);
    const ssize_t n = ::recv(fd_, b.data(), b.size(), 0);
    if (n < 0) return std::nullopt;
    b.resize(static_cast<size_t>(n));
    return b;
  }

 private:
  int fd_ = -1;
  uint16_t port_ = 0;
};

std::vector<uint8_t> pattern(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed + i * 7);
  return v;
}

std::vector<std::vector<uint8_t>> drain(DgramBridge& b, size_t want) {
  std::vector<std::vector<uint8_t>> got;
  for (int tries = 0; tries < 200 && got.size() < want; ++tries) {
    for (auto& f : b.receive(10)) got.push_back(std::move(f));
  }
  return got;
}

TEST(DgramBridge, FramesRoundTripByteExactInOrder) {
  UdpSocket qemu;
  DgramBridge b(0, qemu.port());
  ASSERT_NE(b.local_port(), 0);
  // guest -> bridge: sizes from an Ethernet header to a jumbo frame
  const std::vector<size_t> sizes = {14, 54, 60, 61, 1514, 9018};
  for (size_t i = 0; i < sizes.size(); ++i)
    qemu.send_to(b.local_port(), pattern(sizes[i], static_cast<uint8_t>(i)));
  auto got = drain(b, sizes.size());
  ASSERT_EQ(got.size(), sizes.size());
  for (size_t i = 0; i < sizes.size(); ++i)
    EXPECT_EQ(got[i], pattern(sizes[i], static_cast<uint8_t>(i))) << "frame " << i;
  EXPECT_EQ(b.stats().received, sizes.size());
  // bridge -> guest
  for (size_t i = 0; i < sizes.size(); ++i) {
    ASSERT_TRUE(b.send(pattern(sizes[i], static_cast<uint8_t>(100 + i))));
    auto f = qemu.recv(1000);
    ASSERT_TRUE(f.has_value());
    EXPECT_EQ(*f, pattern(sizes[i], static_cast<uint8_t>(100 + i)));
  }
  EXPECT_EQ(b.stats().sent, sizes.size());
  EXPECT_EQ(b.stats().send_errors, 0u);
}

TEST(DgramBridge, ForeignSourcesAndRuntsAreDiscarded) {
  UdpSocket qemu, stranger;
  DgramBridge b(0, qemu.port());
  stranger.send_to(b.local_port(), pattern(60, 1));  // right port, wrong sender
  qemu.send_to(b.local_port(), pattern(13, 2));      // shorter than an Ethernet header
  qemu.send_to(b.local_port(), pattern(60, 3));
  auto got = drain(b, 1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0], pattern(60, 3));
  // the two discards were read before the good frame
  EXPECT_EQ(b.stats().foreign, 1u);
  EXPECT_EQ(b.stats().bad_size, 1u);
  EXPECT_EQ(b.stats().received, 1u);
  // frames the bridge refuses to send
  EXPECT_FALSE(b.send(pattern(13, 0)));
  EXPECT_EQ(b.stats().send_errors, 1u);
}

TEST(DgramBridge, NothingWaitingReturnsEmpty) {
  UdpSocket qemu;
  DgramBridge b(0, qemu.port());
  EXPECT_TRUE(b.receive(0).empty());
  EXPECT_TRUE(b.receive(20).empty());
}

TEST(DgramBridge, OnlyLoopbackEndpointsParse) {
  std::string err;
  EXPECT_EQ(parse_loopback_port("17001", &err), 17001);
  EXPECT_EQ(parse_loopback_port("127.0.0.1:17002", &err), 17002);
  EXPECT_EQ(parse_loopback_port("localhost:1", &err), 1);
  for (const char* bad : {"10.0.0.1:17001", "0.0.0.0:5", "0", "65536", "x", "127.0.0.1:", ""}) {
    err.clear();
    EXPECT_EQ(parse_loopback_port(bad, &err), 0) << bad;
    EXPECT_FALSE(err.empty()) << bad;
  }
  EXPECT_NE(err.find("expected a UDP port"), std::string::npos);
  parse_loopback_port("192.168.1.1:80", &err);
  EXPECT_NE(err.find("only 127.0.0.1"), std::string::npos);
  EXPECT_THROW(DgramBridge(0, 0), std::invalid_argument);
}

// ---------------------------------------------------------------- the CLI, end to end

// Minimal reader of the flat JSON objects the CLI prints: "key":value or "key":"text".
std::string field(const std::string& line, const std::string& key) {
  const std::string k = "\"" + key + "\":";
  size_t p = line.find(k);
  if (p == std::string::npos) return {};
  p += k.size();
  if (line[p] == '"') {
    const size_t e = line.find('"', p + 1);
    return line.substr(p + 1, e - p - 1);
  }
  size_t e = p;
  while (e < line.size() && line[e] != ',' && line[e] != '}') ++e;
  return line.substr(p, e - p);
}

std::string hex(const std::vector<uint8_t>& v) {
  std::string s;
  char b[3];
  for (uint8_t x : v) {
    std::snprintf(b, sizeof b, "%02x", x);
    s += b;
  }
  return s;
}

struct Child {
  pid_t pid = -1;
  int out = -1;  // read end of its stdout
  std::string buf;
  std::vector<std::string> lines;
  // Reads what is available; returns false at EOF.
  bool pump(int timeout_ms) {
    pollfd p{out, POLLIN, 0};
    if (::poll(&p, 1, timeout_ms) <= 0) return true;
    char tmp[4096];
    const ssize_t n = ::read(out, tmp, sizeof tmp);
    if (n <= 0) return false;
    buf.append(tmp, static_cast<size_t>(n));
    for (size_t nl; (nl = buf.find('\n')) != std::string::npos;) {
      lines.push_back(buf.substr(0, nl));
      buf.erase(0, nl + 1);
    }
    return true;
  }
};

Child spawn_bouncer(const std::vector<std::string>& args) {
  int fds[2];
  EXPECT_EQ(::pipe2(fds, O_CLOEXEC), 0);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(BOUNCER_CLI));
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  Child c;
  EXPECT_EQ(posix_spawn(&c.pid, BOUNCER_CLI, &fa, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&fa);
  ::close(fds[1]);
  c.out = fds[0];
  return c;
}

int wait_exit(Child& c, int timeout_s) {
  for (int i = 0; i < timeout_s * 100; ++i) {
    c.pump(0);
    int st = 0;
    if (::waitpid(c.pid, &st, WNOHANG) == c.pid) {
      while (c.pump(50)) {
      }
      ::close(c.out);
      return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(c.pid, SIGKILL);
  ::waitpid(c.pid, nullptr, 0);
  ::close(c.out);
  return -1;
}

uint64_t now_us() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

P::InitiatorConfig guest_peer(unsigned i) {
  P::InitiatorConfig p;
  p.mac = {0x52, 0x54, 0x00, 0x12, 0x34, static_cast<uint8_t>(0x56 + i)};
  p.peer_mac = {0x02, 0x00, 0x00, 0x00, 0x00, 0x02};
  p.ip = 0x0A000001 + (i << 8);  // 10.0.0.1, 10.0.1.1, ...
  p.peer_ip = 0x0A000002;
  p.port = static_cast<uint16_t>(40000 + i);
  p.peer_port = 20049;
  p.isn = 0x1000'0000u * (i + 1);
  p.mpa_rev = 2;
  p.enhanced = true;
  p.ird_ord = 0x00010001;  // as siw sends it: IRD 1, ORD 1, no P2P bits
  const std::string pd = "hello-from-peer-" + std::to_string(i);
  p.private_data.assign(pd.begin(), pd.end());
  p.crc = false;
  p.rto_cycles = 3'000'000;  // microseconds: the simulation is far slower than a wire
  p.max_retransmits = 4;
  p.reply_timeout_cycles = 60'000'000;
  p.time_wait_cycles = 10'000;
  return p;
}

TEST(BridgeCli, SimulatedGuestsAreRejectedWithTheirOwnPrivateData) {
  UdpSocket qemu;
  // Bind the bridge's port first to learn a free one, then let the CLI take it.
  uint16_t bridge_port = 0;
  {
    UdpSocket probe;
    bridge_port = probe.port();
  }
  const std::string pcap = ::testing::TempDir() + "bridge_cli.pcap";
  constexpr unsigned kPeers = 3;
  Child c = spawn_bouncer(
      {"sim", "--mode", "bridge", "--bridge-local", "127.0.0.1:" + std::to_string(bridge_port),
       "--bridge-remote", "127.0.0.1:" + std::to_string(qemu.port()), "--stop-after",
       std::to_string(kPeers), "--max-wall", "120", "--pd", "no thanks #%n", "--pcap", pcap});
  // Wait until it listens (its socket is bound before the first JSON line).
  for (int i = 0; i < 3000 && c.lines.empty(); ++i) ASSERT_TRUE(c.pump(10));
  ASSERT_FALSE(c.lines.empty());
  EXPECT_EQ(field(c.lines[0], "event"), "listening");
  EXPECT_EQ(field(c.lines[0], "ip"), "10.0.0.2");

  std::vector<P::Initiator> peers;
  for (unsigned i = 0; i < kPeers; ++i) peers.emplace_back(guest_peer(i));
  for (auto& p : peers) p.start(now_us());
  UdpSocket stranger;  // a datagram from elsewhere must not reach the RNIC
  stranger.send_to(bridge_port, std::vector<uint8_t>(60, 0xEE));

  const uint64_t give_up = now_us() + 120'000'000;
  auto all_done = [&] {
    for (auto& p : peers) {
      const P::State st = p.outcome().state;
      if (st != P::State::kDone && st != P::State::kReset && st != P::State::kAborted &&
          st != P::State::kFailed)
        return false;
    }
    return true;
  };
  while (!all_done() && now_us() < give_up) {
    for (auto& p : peers)
      while (auto f = p.poll_tx(now_us())) qemu.send_to(bridge_port, *f);
    if (auto f = qemu.recv(2)) {
      for (auto& p : peers) p.on_rx(*f, now_us());  // each peer ignores frames not for it
    }
    c.pump(0);
  }
  for (auto& p : peers)
    while (auto f = p.poll_tx(now_us())) qemu.send_to(bridge_port, *f);
  const int rc = wait_exit(c, 120);
  ASSERT_EQ(rc, 0) << "bouncer sim --mode bridge exit code";

  std::map<std::string, std::string> req_pd, rej_pd;  // remote "ip:port" / n -> hex
  std::map<std::string, std::string> n_of_remote;
  std::string summary;
  for (const auto& l : c.lines) {
    const std::string ev = field(l, "event");
    if (ev == "connect_request") {
      n_of_remote[field(l, "remote")] = field(l, "n");
      req_pd[field(l, "remote")] = field(l, "pd_hex");
      EXPECT_EQ(field(l, "rev"), "2");
      EXPECT_EQ(field(l, "ird_ord"), std::to_string(0x00010001));
    } else if (ev == "reject") {
      EXPECT_EQ(field(l, "status"), "ok") << l;
      rej_pd[field(l, "n")] = field(l, "pd_hex");
    } else if (ev == "summary") {
      summary = l;
    }
  }
  ASSERT_EQ(n_of_remote.size(), kPeers);
  for (unsigned i = 0; i < kPeers; ++i) {
    const P::Outcome& out = peers[i].outcome();
    const std::string remote = "10.0." + std::to_string(i) + ".1:" + std::to_string(40000 + i);
    ASSERT_TRUE(n_of_remote.count(remote)) << remote;
    const std::string n = n_of_remote[remote];
    EXPECT_EQ(req_pd[remote], hex(guest_peer(i).private_data)) << remote;
    EXPECT_TRUE(out.rejected) << remote << ": " << out.error;
    EXPECT_EQ(hex(out.reject_pd), rej_pd[n]) << remote;
    const std::string want = "no thanks #" + n;
    EXPECT_EQ(out.reject_pd, std::vector<uint8_t>(want.begin(), want.end()));
    EXPECT_EQ(out.state, P::State::kDone) << remote << ": " << out.error;
    EXPECT_FALSE(out.reply_had_fin) << "SIW_SAFE: no FIN with the reply";
  }
  ASSERT_FALSE(summary.empty());
  EXPECT_EQ(field(summary, "stop"), "connections");
  EXPECT_EQ(field(summary, "rejects_ok"), std::to_string(kPeers));
  EXPECT_EQ(field(summary, "cm_conns"), "0");
  EXPECT_EQ(field(summary, "foreign_datagrams"), "1");
  EXPECT_EQ(field(summary, "terminal_closed"), std::to_string(kPeers));
  FILE* f = std::fopen(pcap.c_str(), "rb");
  ASSERT_NE(f, nullptr);
  std::fseek(f, 0, SEEK_END);
  EXPECT_GT(std::ftell(f), 24);  // more than the pcap header
  std::fclose(f);
}

TEST(BridgeCli, SigtermStopsCleanlyAndNonLoopbackIsRefused) {
  UdpSocket qemu;
  Child bad = spawn_bouncer({"sim", "--mode", "bridge", "--bridge-remote", "10.0.0.1:17002"});
  EXPECT_EQ(wait_exit(bad, 30), 1);

  Child c = spawn_bouncer({"sim", "--mode", "bridge", "--bridge-local", "0", "--bridge-remote",
                           std::to_string(qemu.port()), "--pcap", ""});
  // --bridge-local 0 is refused too (a port is required)
  EXPECT_EQ(wait_exit(c, 30), 1);

  uint16_t bridge_port = 0;
  {
    UdpSocket probe;
    bridge_port = probe.port();
  }
  Child d = spawn_bouncer({"sim", "--mode", "bridge", "--bridge-local", std::to_string(bridge_port),
                           "--bridge-remote", std::to_string(qemu.port()), "--pcap", "",
                           "--no-listener"});
  for (int i = 0; i < 3000 && d.lines.empty(); ++i) ASSERT_TRUE(d.pump(10));
  ASSERT_FALSE(d.lines.empty());
  EXPECT_EQ(field(d.lines[0], "listener"), "false");
  // No listener: a SYN is answered with a RST (seen by the peer model).
  P::Initiator p(guest_peer(0));
  p.start(now_us());
  const uint64_t give_up = now_us() + 60'000'000;
  while (p.outcome().state == P::State::kSynSent && now_us() < give_up) {
    while (auto f = p.poll_tx(now_us())) qemu.send_to(bridge_port, *f);
    if (auto f = qemu.recv(2)) p.on_rx(*f, now_us());
    d.pump(0);
  }
  EXPECT_EQ(p.outcome().state, P::State::kReset);
  EXPECT_TRUE(p.outcome().rst_received);
  ::kill(d.pid, SIGTERM);
  EXPECT_EQ(wait_exit(d, 60), 0);
  ASSERT_FALSE(d.lines.empty());
  EXPECT_EQ(field(d.lines.back(), "event"), "summary");
  EXPECT_EQ(field(d.lines.back(), "stop"), "signal");
  EXPECT_EQ(field(d.lines.back(), "requests"), "0");
}

}  // namespace
