// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// Ethernet pcap writer of the co-simulation's port capture: bouncer::PcapFile (the driver's
// writer: libpcap, DLT_EN10MB, snaplen 65535, nanosecond timestamps = cycle * 1000 /
// clock_mhz), so the capture the driver reads from the core's ring (`--capture`) and this one
// come out byte for byte alike for the same frames and stamps.
//
// Ordering: the platform captures a frame when it is complete (its tlast beat) but stamps it
// with its first-beat cycle, and TX and RX frames overlap in time. enqueue() holds frames in a
// min-heap on (cycle, enqueue order) and release(horizon) writes those stamped at or before
// `horizon` (the first cycle of the earliest frame still being transferred, or "everything"),
// so the file is in nondecreasing timestamp order.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "bouncer/pcap_file.hpp"

namespace bouncer::sim {

class PcapWriter {
 public:
  // Opens `path` for writing; throws std::runtime_error if it cannot be created.
  PcapWriter(const std::string& path, double clock_mhz);
  ~PcapWriter();
  PcapWriter(const PcapWriter&) = delete;
  PcapWriter& operator=(const PcapWriter&) = delete;

  // Timestamp = cycle * 1000 / clock_mhz nanoseconds. Flushed at once so the file is readable
  // while the simulation runs (and after an abort).
  void write(std::span<const uint8_t> frame, uint64_t cycle);
  void flush();
  uint64_t frames() const { return file_->frames(); }
  // The first write or flush failure ("" if none): a full disk or a file that accepted the open
  // but not the data (a /proc entry, a FIFO closed early). Frames after it may be missing.
  const std::string& error() const { return error_; }

  // Ordered capture (see above). release() flushes once if it wrote anything.
  void enqueue(std::vector<uint8_t> frame, uint64_t cycle);
  void release(uint64_t horizon);
  void release_all() { release(UINT64_MAX); }
  size_t held() const { return held_.size(); }

 private:
  struct Held {
    uint64_t cycle;
    uint64_t seq;
    std::vector<uint8_t> bytes;
  };
  static bool later(const Held& a, const Held& b) {
    return a.cycle != b.cycle ? a.cycle > b.cycle : a.seq > b.seq;
  }
  void dump(std::span<const uint8_t> frame, uint64_t cycle);
  void flush_checked();

  std::vector<Held> held_;
  uint64_t seq_ = 0;
  std::unique_ptr<PcapFile> file_;
  std::string error_;
};

}  // namespace bouncer::sim
