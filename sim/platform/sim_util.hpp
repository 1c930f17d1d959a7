// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// Small helpers shared by the simulation platform: fatal errors and a deterministic PRNG.
#pragma once

#include <chrono>
#include <cmath>
#include <cstdint>
#include <ctime>
#include <functional>

namespace bouncer::sim {

// Prints "bouncer-sim FATAL: <message>" to stderr, runs the registered flush hook (so the FST
// and the pcap written so far are usable for debugging) and aborts. Used for protocol
// violations by the RTL (AXI/AXI-Stream rules) and for misuse of the platform.
[[noreturn]] void fatal(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

// Hook run by fatal() before abort(); the platform installs one that flushes traces.
void set_fatal_hook(std::function<void()> hook);

// Wall and process CPU time since construction (CPU time: on a shared machine the wall time
// also counts the time other processes had the core).
class CpuWallClock {
 public:
  CpuWallClock() : wall0_(std::chrono::steady_clock::now()), cpu0_(cpu_now()) {}
  double wall() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0_).count();
  }
  double cpu() const { return cpu_now() - cpu0_; }
  static double cpu_now() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
  }

 private:
  std::chrono::steady_clock::time_point wall0_;
  double cpu0_;
};

// splitmix64: tiny, fast, deterministic per seed.
class Prng {
 public:
  explicit Prng(uint64_t seed) : s_(seed) {}
  uint64_t next() {
    uint64_t z = (s_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n] (inclusive); n == 0 returns 0 without drawing.
  uint64_t upto(uint64_t n) {
    if (n == 0) return 0;
    if (n == UINT64_MAX) return next();
    return next() % (n + 1);
  }

 private:
  uint64_t s_;
};

// A Bernoulli(p) source: one PRNG draw per call unless p is 0 or 1.
class Bernoulli {
 public:
  Bernoulli(uint64_t seed, double p) : rng_(seed) { set(p); }
  void set(double p) {
    always_ = !(p < 1.0);
    never_ = !(p > 0.0);
    // threshold = p * 2^64, computed without overflow for p < 1.
    threshold_ = (always_ || never_) ? 0 : static_cast<uint64_t>(std::ldexp(p, 64));
  }
  bool draw() {
    if (always_) return true;
    if (never_) return false;
    return rng_.next() < threshold_;
  }

 private:
  Prng rng_;
  uint64_t threshold_ = 0;
  bool always_ = true;
  bool never_ = false;
};

}  // namespace bouncer::sim
