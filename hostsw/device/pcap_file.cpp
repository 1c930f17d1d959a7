// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include "bouncer/pcap_file.hpp"

#include <pcap/pcap.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <utility>

namespace bouncer {

namespace {
constexpr int kSnapLen = 65535;
}

uint64_t PcapFile::cycle_ns(uint64_t cycle, double clock_mhz) {
  // integral clocks (250, 300 MHz ...) exactly; others through long double, rounded down
  const auto mhz = static_cast<uint64_t>(clock_mhz);
  if (static_cast<double>(mhz) == clock_mhz && mhz != 0 && 1000 % mhz == 0) {
    return cycle * (1000 / mhz);
  }
  return static_cast<uint64_t>(
      std::floor(static_cast<long double>(cycle) * 1000.0L / static_cast<long double>(clock_mhz)));
}

Result<std::unique_ptr<PcapFile>> PcapFile::create(const std::string& path, double clock_mhz) {
  if (!(clock_mhz > 0)) {
    return make_error(Errc::kInvalidArgument, "pcap: the clock must be positive (MHz)");
  }
  pcap* p = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, kSnapLen, PCAP_TSTAMP_PRECISION_NANO);
  if (p == nullptr) return make_error(Errc::kNoMemory, "pcap_open_dead failed");
  pcap_dumper* d = pcap_dump_open(p, path.c_str());
  if (d == nullptr) {
    std::string why = pcap_geterr(p);
    pcap_close(p);
    return make_error(Errc::kInvalidArgument, "cannot create pcap '" + path + "': " + why);
  }
  return std::unique_ptr<PcapFile>(new PcapFile(p, d, clock_mhz, path));
}

PcapFile::PcapFile(pcap* p, pcap_dumper* d, double clock_mhz, std::string path)
    : pcap_(p), dumper_(d), clock_mhz_(clock_mhz), path_(std::move(path)) {}

PcapFile::~PcapFile() {
  pcap_dump_close(dumper_);
  pcap_close(pcap_);
}

void PcapFile::write(std::span<const uint8_t> bytes, uint32_t orig_len, uint64_t cycle) {
  const uint64_t ns = cycle_ns(cycle, clock_mhz_);
  pcap_pkthdr hdr{};
  hdr.ts.tv_sec = static_cast<time_t>(ns / 1'000'000'000);
  hdr.ts.tv_usec = static_cast<suseconds_t>(ns % 1'000'000'000);  // nanoseconds (precision)
  auto cap = static_cast<bpf_u_int32>(bytes.size());
  if (cap > static_cast<bpf_u_int32>(kSnapLen)) cap = kSnapLen;
  hdr.caplen = cap;
  hdr.len = orig_len < cap ? cap : orig_len;
  pcap_dump(reinterpret_cast<u_char*>(dumper_), &hdr, bytes.data());
  ++frames_;
}

Result<void> PcapFile::flush() {
  std::FILE* f = pcap_dump_file(dumper_);
  if (pcap_dump_flush(dumper_) != 0 || std::ferror(f) != 0) {
    if (error_.empty()) {
      const int err = errno;
      error_ = "writing pcap '" + path_ + "' failed" +
               (err != 0 ? std::string(": ") + std::strerror(err) : std::string());
    }
  }
  if (!error_.empty()) return make_error(Errc::kInvalidArgument, error_);
  return {};
}

}  // namespace bouncer
