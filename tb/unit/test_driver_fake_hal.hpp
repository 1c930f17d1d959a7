// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// An in-process fake of hal::Device for the driver unit tests: registers, DMA memory, and a
// small model of the SQ and CQP engines that consumes WQEs from host memory and writes CQEs
// with polarity. Written from regs/bouncer.toml and docs/reject-frame.md only (it does not
// use the driver's encoders). Hardware runs only inside wait_cycles()/run(), so a test can
// post several WQEs before anything is consumed.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <vector>

#include "bouncer/hal.hpp"
#include "bouncer/regs.hpp"

namespace bouncer::testing {

struct FakeFrame {
  uint16_t wqe_idx;
  uint32_t cm_id;
  std::vector<uint8_t> pd;  // the private data as the engine read it
  bool fin;
  bool ird_ord_valid;
  uint32_t ird_ord;
  bool from_push;
  uint32_t tcp_seq;
  uint16_t wire_pd_len;
};

struct MmioWrite {
  uint32_t offset;
  uint32_t value;
};

struct SyncRecord {
  uint64_t addr;
  size_t len;
};

class FakeHal : public hal::Device {
 public:
  struct Config {
    uint32_t id = regs::kIdValue;
    uint32_t version = (regs::kVersionMajor << 16) | (regs::kVersionMinor << 8);
    unsigned data_bytes = 8;
    unsigned ctx_log2 = 6;
    bool push = true;
    bool inline_pd = true;
    bool accept_push = true;   // false: every push is "dropped" (fetched from the ring)
    uint64_t wqe_cycles = 40;  // engine time per WQE
  };

  FakeHal();
  explicit FakeHal(Config cfg);
  ~FakeHal() override;

  // hal::Device
  uint32_t read32(uint32_t offset) override;
  void write32(uint32_t offset, uint32_t value) override;
  void write_block(uint32_t offset, std::span<const uint32_t> words) override;
  Result<std::unique_ptr<hal::DmaBuffer>> alloc_dma(size_t bytes, size_t align) override;
  void wait_cycles(uint64_t cycles) override;
  uint64_t now_cycles() override { return now_; }
  const char* name() const override { return "fake"; }

  // ---- controls
  Config cfg;
  bool hold = false;          // engines do nothing (hung hardware)
  int fail_alloc_after = -1;  // >= 0: that many allocations succeed, then kNoMemory
  void run();                 // let the engines do all they can now
  /// Writes a raw CQE (valid bit = current CQ polarity) at the CQ tail, as if the hardware
  /// had written it, e.g. a duplicate of an earlier one.
  void inject_cqe(std::span<const std::byte> cqe32);
  /// The image of the last CQE the engine wrote to the CQ.
  std::array<std::byte, 32> last_cqe() const { return last_cqe_; }

  // ---- observations
  std::vector<MmioWrite> writes;
  std::vector<std::array<uint32_t, 16>> push_images;  // one per write_block to the push page
  std::vector<SyncRecord> syncs_to_device;
  std::vector<FakeFrame> frames;
  std::map<uint32_t, std::array<std::byte, 64>> contexts;  // stored by WRITE_CM_CONTEXT
  uint32_t reg(uint32_t offset) const;  // last value written to a register (0 if never)
  size_t live_buffers() const { return bufs_.size(); }
  bool dma_read(uint64_t addr, std::span<std::byte> out) const;
  bool dma_write(uint64_t addr, std::span<const std::byte> in);
  /// Last written value of a register among `writes`, if any.
  std::optional<uint32_t> last_write(uint32_t offset) const;
  uint32_t sq_ci() const { return sq_.ci; }
  uint32_t cq_tail() const { return cq_.tail; }

  class Buf;  // the DmaBuffer implementation
  void unregister(uint64_t addr) { bufs_.erase(addr); }
  void record_sync(uint64_t addr, size_t len) { syncs_to_device.push_back({addr, len}); }

 private:
  struct WqRing {
    uint64_t base = 0;
    uint32_t log2 = 2;
    uint32_t ci = 0, pi = 0;
    uint8_t pol = 1;
    uint32_t size() const { return 1u << log2; }
  };
  struct CqRingHw {
    uint64_t base = 0;
    uint32_t log2 = 2;
    uint32_t tail = 0, head = 0;
    uint8_t pol = 1;
    uint32_t size() const { return 1u << log2; }
    bool room() const { return (tail + 1) % size() != head; }
  };

  void process_sq();
  void process_cqp();
  void write_cqe(CqRingHw& cq, std::array<std::byte, 32>& img);
  static uint64_t base(const std::map<uint32_t, uint32_t>& r, uint32_t lo);

  uint64_t now_ = 0;
  uint64_t next_addr_ = 0x1'2345'0000ull;  // above 4 GiB: the HI base registers matter
  int allocs_ = 0;
  std::map<uint64_t, Buf*> bufs_;
  std::map<uint32_t, uint32_t> regs_;
  std::array<uint32_t, 16> push_page_{};
  std::map<uint32_t, std::array<std::byte, 64>> pushed_;  // wqe_idx -> image from the page
  std::map<uint32_t, uint64_t> db_cycle_;                 // wqe_idx -> doorbell time
  WqRing sq_, cqp_;
  CqRingHw cq_, ccq_;
  uint64_t busy_until_ = 0;  // end of the previous WQE (for LATENCY)
  std::array<std::byte, 32> last_cqe_{};
  uint32_t stat_push_used_ = 0, stat_push_dropped_ = 0, stat_sq_wqes_ = 0, stat_cqp_wqes_ = 0;
};

}  // namespace bouncer::testing
