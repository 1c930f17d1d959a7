// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// Ethernet pcap writer (libpcap, DLT_EN10MB, snaplen 65535, microsecond timestamps).
#pragma once

#include <cstdint>
#include <span>
#include <string>

struct pcap;
struct pcap_dumper;

namespace bouncer::sim {

class PcapWriter {
 public:
  // Opens `path` for writing; throws std::runtime_error if it cannot be created.
  PcapWriter(const std::string& path, double clock_mhz);
  ~PcapWriter();
  PcapWriter(const PcapWriter&) = delete;
  PcapWriter& operator=(const PcapWriter&) = delete;

  // Timestamp = cycle / clock_mhz microseconds. Flushed at once so the file is readable
  // while the simulation runs (and after an abort).
  void write(std::span<const uint8_t> frame, uint64_t cycle);
  void flush();
  uint64_t frames() const { return frames_; }

 private:
  pcap* pcap_ = nullptr;
  pcap_dumper* dumper_ = nullptr;
  double clock_mhz_;
  uint64_t frames_ = 0;
};

}  // namespace bouncer::sim
