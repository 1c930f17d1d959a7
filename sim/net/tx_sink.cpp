// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include "net/tx_sink.hpp"

#include <utility>

namespace bouncer::sim {

TxSink::TxSink(unsigned data_bytes, uint64_t seed, double ready_prob, FrameFn on_frame)
    : data_bytes_(data_bytes),
      full_keep_(data_bytes >= 64 ? ~uint64_t{0} : (uint64_t{1} << data_bytes) - 1),
      ready_(seed, ready_prob),
      on_frame_(std::move(on_frame)) {
  if (data_bytes != 8 && data_bytes != 64)
    fatal("TxSink: unsupported data width %u bytes", data_bytes);
  frame_.reserve(2048);
}

void TxSink::take_beat(const void* tdata, uint64_t keep, bool last, uint64_t edge) {
  keep &= full_keep_;
  if (!last && keep != full_keep_) {
    fatal(
        "AXI-Stream TX violation at cycle %llu: tkeep=0x%llx on a beat without tlast (must be all "
        "ones 0x%llx)",
        static_cast<unsigned long long>(edge), static_cast<unsigned long long>(keep),
        static_cast<unsigned long long>(full_keep_));
  }
  if (last && (keep == 0 || (keep & (keep + 1)) != 0)) {
    fatal(
        "AXI-Stream TX violation at cycle %llu: tkeep=0x%llx on the tlast beat (must be contiguous "
        "low bytes, not 0)",
        static_cast<unsigned long long>(edge), static_cast<unsigned long long>(keep));
  }
  const unsigned n = last ? static_cast<unsigned>(__builtin_popcountll(keep)) : data_bytes_;
  if (frame_.empty()) frame_first_ = edge;
  if (frame_.size() + n > kMaxFrame) {
    fatal("AXI-Stream TX violation at cycle %llu: frame longer than %zu bytes without tlast",
          static_cast<unsigned long long>(edge), kMaxFrame);
  }
  // tdata is little-endian on the host (uint64_t, or VlWide's array of 32-bit words): byte 0 of
  // the beat is tdata[7:0], as the port contract says.
  const auto* bytes = static_cast<const uint8_t*>(tdata);
  frame_.insert(frame_.end(), bytes, bytes + n);
  ++beats_;
  if (last) {
    std::vector<uint8_t> done;
    done.swap(frame_);
    frame_.reserve(2048);
    on_frame_(std::move(done), frame_first_, edge);
  }
}

void TxSink::check_stable(uint8_t tvalid, const void* tdata, uint64_t keep, uint8_t last,
                          uint64_t edge) {
  if (!tvalid) {
    fatal("AXI-Stream TX violation at cycle %llu: tvalid dropped before the handshake",
          static_cast<unsigned long long>(edge));
  }
  if (std::memcmp(held_data_, tdata, data_bytes_) != 0 || held_keep_ != keep ||
      held_last_ != (last != 0)) {
    fatal(
        "AXI-Stream TX violation at cycle %llu: tdata/tkeep/tlast changed while tvalid=1 and "
        "tready=0",
        static_cast<unsigned long long>(edge));
  }
}

}  // namespace bouncer::sim
