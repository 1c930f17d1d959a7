// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include "net/pcap_writer.hpp"

#include <pcap/pcap.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

#include "platform/sim_util.hpp"

namespace bouncer::sim {

namespace {
constexpr int kSnapLen = 65535;
}

PcapWriter::PcapWriter(const std::string& path, double clock_mhz)
    : clock_mhz_(clock_mhz), path_(path) {
  pcap_ = pcap_open_dead(DLT_EN10MB, kSnapLen);
  if (pcap_ == nullptr) throw std::runtime_error("pcap_open_dead failed");
  dumper_ = pcap_dump_open(pcap_, path.c_str());
  if (dumper_ == nullptr) {
    std::string why = pcap_geterr(pcap_);
    pcap_close(pcap_);
    throw std::runtime_error("cannot create pcap '" + path + "': " + why);
  }
}

PcapWriter::~PcapWriter() {
  if (dumper_ != nullptr) pcap_dump_close(dumper_);  // already flushed: nothing left to fail
  if (pcap_ != nullptr) pcap_close(pcap_);
}

void PcapWriter::write(std::span<const uint8_t> frame, uint64_t cycle) {
  dump(frame, cycle);
  flush_checked();
}

void PcapWriter::enqueue(std::vector<uint8_t> frame, uint64_t cycle) {
  held_.push_back(Held{cycle, seq_++, std::move(frame)});
  std::push_heap(held_.begin(), held_.end(), later);
}

void PcapWriter::release(uint64_t horizon) {
  bool wrote = false;
  while (!held_.empty() && held_.front().cycle <= horizon) {
    std::pop_heap(held_.begin(), held_.end(), later);
    dump(held_.back().bytes, held_.back().cycle);
    held_.pop_back();
    wrote = true;
  }
  if (wrote) flush_checked();
}

void PcapWriter::dump(std::span<const uint8_t> frame, uint64_t cycle) {
  const double us = static_cast<double>(cycle) / clock_mhz_;
  const auto whole_us = static_cast<uint64_t>(std::floor(us));
  pcap_pkthdr hdr{};
  hdr.ts.tv_sec = static_cast<time_t>(whole_us / 1'000'000);
  hdr.ts.tv_usec = static_cast<suseconds_t>(whole_us % 1'000'000);
  const auto len = static_cast<bpf_u_int32>(frame.size());
  hdr.len = len;
  hdr.caplen = len > kSnapLen ? kSnapLen : len;
  pcap_dump(reinterpret_cast<u_char*>(dumper_), &hdr, frame.data());
  ++frames_;
}

void PcapWriter::flush() {
  if (dumper_ != nullptr) flush_checked();
}

void PcapWriter::flush_checked() {
  std::FILE* f = pcap_dump_file(dumper_);
  if (pcap_dump_flush(dumper_) != 0 || std::ferror(f) != 0) {
    if (error_.empty()) {
      const int err = errno;
      error_ = "writing pcap '" + path_ + "' failed" +
               (err != 0 ? std::string(": ") + std::strerror(err) : std::string());
    }
  }
}

}  // namespace bouncer::sim
