// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include "fake_dma.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <stdexcept>

namespace bouncer::testing {

namespace {

using Word = std::atomic_ref<uint64_t>;

uint64_t& word_at(std::byte* p) { return *reinterpret_cast<uint64_t*>(p); }

}  // namespace

const char* fake_memory_name(FakeMemory m) {
  switch (m) {
    case FakeMemory::kInline:
      return "inline";
    case FakeMemory::kThreaded:
      return "threaded";
    case FakeMemory::kNonCoherent:
      return "noncoherent";
  }
  return "?";
}

// ------------------------------------------------------------------------------- memory

FakeDmaMemory::FakeDmaMemory(size_t bytes, bool coherent, uint32_t seed)
    : bytes_(bytes), cpu_((bytes + kLine - 1) / kLine * kLine), rng_(seed) {
  if (!coherent) dev_.resize(cpu_.size());
}

void FakeDmaMemory::to_device(size_t off, size_t len) {
  if (coherent() || len == 0 || off >= bytes_) return;
  const size_t lo = off / kLine * kLine;
  const size_t hi = std::min((off + len + kLine - 1) / kLine * kLine, cpu_.size());
  for (size_t q = lo; q < hi; q += 8) {
    uint64_t v = 0;
    std::memcpy(&v, cpu_.data() + q, 8);
    Word(word_at(dev_.data() + q)).store(v, std::memory_order_relaxed);
  }
}

void FakeDmaMemory::from_device(size_t off, size_t len) {
  if (coherent() || len == 0 || off >= bytes_) return;
  const size_t lo = off / kLine * kLine;
  const size_t hi = std::min((off + len + kLine - 1) / kLine * kLine, cpu_.size());
  std::vector<size_t> order((hi - lo) / 8);
  std::iota(order.begin(), order.end(), size_t{0});
  std::shuffle(order.begin(), order.end(), rng_);
  for (size_t k = 0; k < order.size(); ++k) {
    const size_t q = lo + order[k] * 8;
    const uint64_t v = Word(word_at(dev_.data() + q)).load(std::memory_order_acquire);
    std::memcpy(cpu_.data() + q, &v, 8);
    if (k + 1 < order.size()) std::this_thread::yield();
  }
}

// ------------------------------------------------------------------------------- engine

FakeDmaEngine::FakeDmaEngine(Options o) : o_(o) {
  thread_ = std::thread([this] { run(); });
}

FakeDmaEngine::~FakeDmaEngine() {
  stop_.store(true, std::memory_order_release);
  thread_.join();
}

void FakeDmaEngine::post(std::byte* dst, std::span<const std::byte> data, int valid_qword) {
  if (data.empty()) return;
  if (data.size() > kMaxJob || reinterpret_cast<uintptr_t>(dst) % 8 != 0 ||
      (valid_qword >= 0 && static_cast<size_t>(valid_qword) * 8 + 8 > data.size())) {
    throw std::logic_error("FakeDmaEngine::post: bad job");
  }
  if (posted_ / kChunkJobs >= kMaxChunks) {
    throw std::runtime_error("FakeDmaEngine: too many writes for one fake device");
  }
  auto& chunk = chunks_[posted_ / kChunkJobs];
  if (!chunk) chunk = std::make_unique<Job[]>(kChunkJobs);
  Job& j = job(posted_);
  j.dst = dst;
  j.len = static_cast<uint16_t>(data.size());
  j.valid = static_cast<int8_t>(valid_qword);
  std::copy(data.begin(), data.end(), j.data.begin());
  unsettled_.push_back(
      {reinterpret_cast<uintptr_t>(dst), reinterpret_cast<uintptr_t>(dst) + data.size()});
  ++posted_;
  published_.store(posted_, std::memory_order_release);
}

void FakeDmaEngine::drain() {
  while (done_.load(std::memory_order_acquire) < posted_) std::this_thread::yield();
  unsettled_.clear();
}

bool FakeDmaEngine::pending(const std::byte* p, size_t len) const {
  const auto lo = reinterpret_cast<uintptr_t>(p);
  const uintptr_t hi = lo + len;
  return std::any_of(unsettled_.begin(), unsettled_.end(),
                     [&](const Range& r) { return lo < r.hi && r.lo < hi; });
}

void FakeDmaEngine::run() {
  std::mt19937 rng(o_.seed);
  uint64_t n = 0;
  for (;;) {
    const uint64_t avail = published_.load(std::memory_order_acquire);
    if (n == avail) {
      if (stop_.load(std::memory_order_acquire) &&
          published_.load(std::memory_order_acquire) == n) {
        return;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(2));
      continue;
    }
    // A random delay: none half of the time (back to back with the previous write), else a
    // sleep of up to max_delay.
    if (rng() % 2 == 0 && o_.max_delay.count() > 0) {
      std::this_thread::sleep_for(
          std::chrono::microseconds(rng() % static_cast<uint64_t>(o_.max_delay.count() + 1)));
    }
    land(job(n), rng);
    ++n;
    done_.store(n, std::memory_order_release);
  }
}

void FakeDmaEngine::land(const Job& j, std::mt19937& rng) {
  const size_t nq = (j.len + 7u) / 8u;
  std::array<size_t, kMaxJob / 8> order{};
  size_t k = 0;
  for (size_t q = 0; q < nq; ++q) {
    if (static_cast<int>(q) != j.valid) order[k++] = q;
  }
  std::shuffle(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k), rng);
  for (size_t i = 0; i < k; ++i) {
    const size_t q = order[i];
    const size_t n = std::min<size_t>(8, j.len - q * 8);
    std::byte* d = j.dst + q * 8;
    if (o_.coherent) {
      // Plain stores (see the header), one instrumented access each: a memcpy the compiler
      // expands inline would be invisible to ThreadSanitizer.
      if (n == 8) {
        uint64_t v = 0;
        std::memcpy(&v, j.data.data() + q * 8, 8);
        word_at(d) = v;
      } else {
        auto* b = static_cast<volatile std::byte*>(d);
        for (size_t i = 0; i < n; ++i) b[i] = j.data[q * 8 + i];
      }
    } else {
      Word w(word_at(d));
      uint64_t v = n == 8 ? 0 : w.load(std::memory_order_relaxed);
      std::memcpy(&v, j.data.data() + q * 8, n);
      w.store(v, std::memory_order_relaxed);
    }
    if (rng() % 2 == 0) std::this_thread::yield();
  }
  if (j.valid >= 0) {
    if (rng() % 2 == 0) std::this_thread::yield();
    uint64_t v = 0;
    std::memcpy(&v, j.data.data() + static_cast<size_t>(j.valid) * 8, 8);
    Word(word_at(j.dst + static_cast<size_t>(j.valid) * 8)).store(v, std::memory_order_release);
  }
}

}  // namespace bouncer::testing
