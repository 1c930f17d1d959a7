// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include "net/pcap_writer.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

namespace bouncer::sim {

PcapWriter::PcapWriter(const std::string& path, double clock_mhz) {
  auto f = PcapFile::create(path, clock_mhz);
  if (!f.ok()) throw std::runtime_error(f.error().message);
  file_ = std::move(*f);
}

PcapWriter::~PcapWriter() = default;

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
  file_->write(frame, cycle);
}

void PcapWriter::flush() { flush_checked(); }

void PcapWriter::flush_checked() {
  if (!file_->flush().ok() && error_.empty()) error_ = file_->error();
}

}  // namespace bouncer::sim
