// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include "net/rx_source.hpp"

#include <algorithm>
#include <utility>

namespace bouncer::sim {

RxSource::RxSource(unsigned data_bytes, uint64_t ifg_cycles, FrameFn on_frame)
    : data_bytes_(data_bytes),
      full_keep_(data_bytes >= 64 ? ~uint64_t{0} : (uint64_t{1} << data_bytes) - 1),
      ifg_(ifg_cycles),
      on_frame_(std::move(on_frame)) {
  if (data_bytes != 8 && data_bytes != 64)
    fatal("RxSource: unsupported data width %u bytes", data_bytes);
}

void RxSource::enqueue(std::vector<uint8_t> frame, uint64_t ready) {
  if (frame.empty() || frame.size() > kMaxFrame)
    fatal("RxSource: frame of %zu bytes (must be 1..%zu)", frame.size(), kMaxFrame);
  q_.push_back(Item{ready, seq_++, std::move(frame)});
  std::push_heap(q_.begin(), q_.end(), later);
  if (!presenting_) update_wake();
}

void RxSource::update_wake() { wake_ = q_.empty() ? kNever : std::max(q_.front().ready, free_at_); }

bool RxSource::start(uint64_t next_edge) {
  if (q_.empty() || next_edge < wake_) return false;
  std::pop_heap(q_.begin(), q_.end(), later);
  cur_ = std::move(q_.back().bytes);
  q_.pop_back();
  off_ = 0;
  presenting_ = true;
  load_ = true;
  wake_ = kNever;
  return true;
}

void RxSource::accept(uint64_t edge) {
  const size_t left = cur_.size() - off_;
  const size_t n = std::min<size_t>(left, data_bytes_);
  ++beats_;
  if (off_ == 0) first_ = edge;
  off_ += n;
  if (off_ < cur_.size()) {
    load_ = true;
    return;
  }
  presenting_ = false;
  load_ = false;
  dirty_ = true;
  free_at_ = edge + 1 + ifg_;
  ++frames_;
  update_wake();
  std::vector<uint8_t> done;
  done.swap(cur_);
  off_ = 0;
  on_frame_(std::move(done), first_, edge);
}

}  // namespace bouncer::sim
