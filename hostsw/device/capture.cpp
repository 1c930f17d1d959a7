// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// The on-card capture ring: CAP_CTRL / CAP_STATUS / CAP_INDEX / CAP_LEN / CAP_STAMP_* /
// CAP_END_LO / CAP_DATA (docs/register-map.md), and its pcap file.
#include <fmt/format.h>

#include <algorithm>

#include "bouncer/device.hpp"
#include "bouncer/pcap_file.hpp"

namespace bouncer {

namespace {
namespace r = regs::reg;
namespace fc = regs::field::CAP_CTRL;
namespace fs = regs::field::CAP_STATUS;
namespace fi = regs::field::CAP_INDEX;

CaptureStatus decode_status(uint32_t st) {
  CaptureStatus s;
  s.present = fs::PRESENT.get(st) != 0;
  s.rx_count = fs::RX_COUNT.get(st);
  s.tx_count = fs::TX_COUNT.get(st);
  s.slots = s.present ? 1u << fs::LOG2.get(st) : 0;
  s.snap = s.present ? 1u << fs::SNAP_LOG2.get(st) : 0;
  return s;
}

Error no_ring() {
  return make_error(Errc::kNotSupported,
                    "this build has no capture ring (CAP_STATUS.PRESENT 0: CAPTURE_LOG2 0)");
}

// Selects (dir, frame, word) and waits until CAP_* show it: the read-back of CAP_INDEX
// follows the write, and the next read comes after it (three cycles are enough).
void select(hal::Device& hal, unsigned dir, unsigned frame, unsigned word) {
  const uint32_t v = fi::DIR.put(dir) | fi::FRAME.put(frame) | fi::WORD.put(word);
  hal.write32(r::CAP_INDEX, v);
  (void)hal.read32(r::CAP_INDEX);
}

// Writes CAP_CTRL with FREEZE 0 (and CLEAR if asked) whatever happens to the readout.
class Thaw {
 public:
  Thaw(hal::Device& hal, bool clear) : hal_(hal), clear_(clear) {}
  ~Thaw() { hal_.write32(r::CAP_CTRL, clear_ ? fc::CLEAR.put(1) : 0); }
  Thaw(const Thaw&) = delete;
  Thaw& operator=(const Thaw&) = delete;

 private:
  hal::Device& hal_;
  bool clear_;
};
}  // namespace

Result<CaptureStatus> capture_status(hal::Device& hal) {
  auto s = decode_status(hal.read32(r::CAP_STATUS));
  if (!s.present) return no_ring();
  return s;
}

Result<std::vector<CapturedFrame>> read_capture(hal::Device& hal, bool clear) {
  if (!decode_status(hal.read32(r::CAP_STATUS)).present) return no_ring();
  hal.write32(r::CAP_CTRL, fc::FREEZE.put(1));
  const Thaw thaw(hal, clear);
  // read after the freeze: the counts are final (a frame's header lands 3 cycles after its
  // last beat; this read comes later than that)
  const CaptureStatus st = decode_status(hal.read32(r::CAP_STATUS));
  if (st.rx_count > st.slots || st.tx_count > st.slots) {
    return make_error(Errc::kHardware, fmt::format("CAP_STATUS counts {} / {} exceed {} slots",
                                                   st.rx_count, st.tx_count, st.slots));
  }
  std::vector<CapturedFrame> out;
  for (unsigned dir = 0; dir < 2; ++dir) {
    const unsigned n = dir == 0 ? st.rx_count : st.tx_count;
    for (unsigned f = 0; f < n; ++f) {
      select(hal, dir, f, 0);
      CapturedFrame fr;
      fr.dir = dir == 0 ? CapturedFrame::Dir::kRx : CapturedFrame::Dir::kTx;
      fr.orig_len = hal.read32(r::CAP_LEN) & 0xFFFFu;
      const uint32_t lo = hal.read32(r::CAP_STAMP_LO);
      fr.cycle = (uint64_t{hal.read32(r::CAP_STAMP_HI)} << 32) | lo;
      fr.end_cycle = fr.cycle + static_cast<uint32_t>(hal.read32(r::CAP_END_LO) - lo);
      const size_t kept = std::min<size_t>(fr.orig_len, st.snap);
      fr.bytes.resize(kept);
      for (unsigned w = 0; 4 * w < kept; ++w) {
        if (w != 0) select(hal, dir, f, w);
        const uint32_t d = hal.read32(r::CAP_DATA);
        for (unsigned b = 0; b < 4 && 4 * w + b < kept; ++b) {
          fr.bytes[4 * w + b] = static_cast<uint8_t>(d >> (8 * b));
        }
      }
      out.push_back(std::move(fr));
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const CapturedFrame& a, const CapturedFrame& b) {
    if (a.cycle != b.cycle) return a.cycle < b.cycle;
    if (a.end_cycle != b.end_cycle) return a.end_cycle < b.end_cycle;
    return a.dir == CapturedFrame::Dir::kTx && b.dir == CapturedFrame::Dir::kRx;
  });
  return out;
}

Result<size_t> write_capture_pcap(const std::string& path, std::span<const CapturedFrame> frames,
                                  double clock_mhz) {
  auto f = PcapFile::create(path, clock_mhz);
  if (!f.ok()) return f.error();
  for (const auto& fr : frames) (*f)->write(fr.bytes, fr.orig_len, fr.cycle);
  if (auto ok = (*f)->flush(); !ok.ok()) return ok.error();
  return frames.size();
}

Result<CaptureStatus> Device::capture_status() {
  std::lock_guard lk(mu_);
  return bouncer::capture_status(hal_);
}

Result<std::vector<CapturedFrame>> Device::read_capture(bool clear) {
  std::lock_guard lk(mu_);
  return bouncer::read_capture(hal_, clear);
}

}  // namespace bouncer
