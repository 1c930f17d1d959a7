// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include "bouncer/sim/dgram_bridge.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <stdexcept>
#include <string>

namespace bouncer::sim {

namespace {

sockaddr_in loopback(uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

[[noreturn]] void fail(const char* what, int err) {
  throw std::runtime_error(std::string("dgram bridge: ") + what + ": " + std::strerror(err));
}

}  // namespace

DgramBridge::DgramBridge(uint16_t local_port, uint16_t remote_port)
    : remote_port_(remote_port), buf_(kMaxFrame + 1) {
  if (remote_port == 0) throw std::invalid_argument("dgram bridge: remote port 0");
  fd_ = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd_ < 0) fail("socket", errno);
  const sockaddr_in local = loopback(local_port);
  if (::bind(fd_, reinterpret_cast<const sockaddr*>(&local), sizeof local) != 0) {
    const int err = errno;
    ::close(fd_);
    fail(("bind 127.0.0.1:" + std::to_string(local_port)).c_str(), err);
  }
  sockaddr_in bound{};
  socklen_t len = sizeof bound;
  if (::getsockname(fd_, reinterpret_cast<sockaddr*>(&bound), &len) != 0) {
    const int err = errno;
    ::close(fd_);
    fail("getsockname", err);
  }
  local_port_ = ntohs(bound.sin_port);
  // Large enough for a burst of full-size frames while the simulation is busy.
  const int rcvbuf = 4 << 20;
  (void)::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
}

DgramBridge::~DgramBridge() {
  if (fd_ >= 0) ::close(fd_);
}

bool DgramBridge::send(std::span<const uint8_t> frame) {
  if (frame.size() < kMinFrame || frame.size() > kMaxFrame) {
    ++stats_.send_errors;
    return false;
  }
  const sockaddr_in to = loopback(remote_port_);
  const ssize_t n = ::sendto(fd_, frame.data(), frame.size(), 0,
                             reinterpret_cast<const sockaddr*>(&to), sizeof to);
  if (n != static_cast<ssize_t>(frame.size())) {
    ++stats_.send_errors;
    return false;
  }
  ++stats_.sent;
  stats_.bytes_sent += frame.size();
  return true;
}

std::vector<std::vector<uint8_t>> DgramBridge::receive(int timeout_ms, size_t max) {
  std::vector<std::vector<uint8_t>> out;
  if (timeout_ms > 0) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, timeout_ms) <= 0) return out;
  }
  while (out.size() < max) {
    sockaddr_in from{};
    socklen_t flen = sizeof from;
    const ssize_t n = ::recvfrom(fd_, buf_.data(), buf_.size(), MSG_TRUNC,
                                 reinterpret_cast<sockaddr*>(&from), &flen);
    if (n < 0) {
      // EAGAIN: nothing left. ECONNREFUSED: an ICMP port-unreachable from an earlier send
      // (QEMU not up yet) surfaces here; it says nothing about received data.
      if (errno == EINTR || errno == ECONNREFUSED) continue;
      break;
    }
    if (from.sin_family != AF_INET || from.sin_addr.s_addr != htonl(INADDR_LOOPBACK) ||
        ntohs(from.sin_port) != remote_port_) {
      ++stats_.foreign;
      continue;
    }
    if (static_cast<size_t>(n) < kMinFrame || static_cast<size_t>(n) > kMaxFrame) {
      ++stats_.bad_size;
      continue;
    }
    ++stats_.received;
    stats_.bytes_received += static_cast<uint64_t>(n);
    out.emplace_back(buf_.begin(), buf_.begin() + n);
  }
  return out;
}

uint16_t parse_loopback_port(std::string_view spec, std::string* error) {
  auto bad = [&](const std::string& why) -> uint16_t {
    if (error != nullptr) *error = "'" + std::string(spec) + "': " + why;
    return 0;
  };
  std::string_view port = spec;
  if (const size_t colon = spec.rfind(':'); colon != std::string_view::npos) {
    const std::string_view host = spec.substr(0, colon);
    if (host != "127.0.0.1" && host != "localhost")
      return bad("only 127.0.0.1 is allowed (the bridge never leaves the host)");
    port = spec.substr(colon + 1);
  }
  unsigned v = 0;
  const auto [p, ec] = std::from_chars(port.data(), port.data() + port.size(), v);
  if (ec != std::errc() || p != port.data() + port.size() || v == 0 || v > 65535)
    return bad("expected a UDP port 1..65535");
  return static_cast<uint16_t>(v);
}

}  // namespace bouncer::sim
