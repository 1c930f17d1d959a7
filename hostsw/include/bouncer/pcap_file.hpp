// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// A pcap file of Ethernet frames (libpcap, DLT_EN10MB, snaplen 65535, nanosecond timestamps)
// stamped in core-clock cycles: timestamp = cycle * 1000 / clock_mhz nanoseconds, rounded
// down. The driver's capture readout (`bouncer card capture`, `bouncer sim --capture`) and the
// co-simulation's own capture (`--pcap`) both write through it, so the same frames with the
// same cycle stamps give the same bytes.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "bouncer/result.hpp"

struct pcap;
struct pcap_dumper;

namespace bouncer {

class PcapFile {
 public:
  /// Creates (truncates) `path`; kInvalidArgument when it cannot be created or clock_mhz <= 0.
  static Result<std::unique_ptr<PcapFile>> create(const std::string& path, double clock_mhz);
  ~PcapFile();
  PcapFile(const PcapFile&) = delete;
  PcapFile& operator=(const PcapFile&) = delete;

  /// One record: `bytes` as captured, `orig_len` the frame's length on the wire (>= the
  /// captured bytes; a snap length shorter than the frame is recorded as such).
  void write(std::span<const uint8_t> bytes, uint32_t orig_len, uint64_t cycle);
  void write(std::span<const uint8_t> frame, uint64_t cycle) {
    write(frame, static_cast<uint32_t>(frame.size()), cycle);
  }
  /// Flushes to the file; the first failure (full disk, a file that took the open but not
  /// the data) is kept in error() and reported here.
  Result<void> flush();
  /// "" or the first write/flush failure.
  const std::string& error() const { return error_; }
  uint64_t frames() const { return frames_; }

  /// The timestamp of `cycle` in nanoseconds.
  static uint64_t cycle_ns(uint64_t cycle, double clock_mhz);

 private:
  PcapFile(pcap* p, pcap_dumper* d, double clock_mhz, std::string path);

  pcap* pcap_;
  pcap_dumper* dumper_;
  double clock_mhz_;
  std::string path_;
  std::string error_;
  uint64_t frames_ = 0;
};

}  // namespace bouncer
