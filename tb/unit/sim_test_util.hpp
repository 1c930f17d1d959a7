// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// Helpers shared by the co-simulation platform tests (test_sim_platform.cpp,
// test_sim_net.cpp), each TU including it once:
//  - SystemC's banner off, one Platform per process (REQUIRE_OWN_PROCESS) and per-test
//    temporary file names;
//  - host-side access through the register map and formats of regs/bouncer.toml only:
//    DMA buffers, 64-bit registers, ring slots, the four rings programmed and enabled, and
//    a CM context image from the golden reject parameters.
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>

#include "bouncer/regs.hpp"
#include "bouncer/sim/platform.hpp"
#include "golden/reject_frame.hpp"

namespace simtest {

namespace R = bouncer::regs;
using bouncer::hal::Device;
using bouncer::hal::DmaBuffer;

// libsystemc's main() prints a banner before sc_main unless this is set (also during ctest
// discovery, which runs the binary without the test ENVIRONMENT).
[[maybe_unused]] inline const int kQuietSystemC =
    setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);

// One Platform per process (SystemC elaborates once): the first caller gets true.
inline bool claim_process() {
  static bool used = false;
  const bool first = !used;
  used = true;
  return first;
}

// A second Platform test in the same process is skipped, not crashed.
#define REQUIRE_OWN_PROCESS()                                                       \
  do {                                                                              \
    if (!::simtest::claim_process())                                                \
      GTEST_SKIP() << "needs its own process (SystemC elaborates once); use ctest"; \
  } while (0)

// A file in gtest's temporary directory named after the running test: prefix, test, name.
inline std::string temp_path(const std::string& prefix, const std::string& name) {
  const auto* info = testing::UnitTest::GetInstance()->current_test_info();
  return testing::TempDir() + prefix + info->name() + "_" + name;
}

inline std::unique_ptr<DmaBuffer> alloc(Device& d, size_t bytes, size_t align) {
  auto r = d.alloc_dma(bytes, align);
  if (!r.ok()) throw std::runtime_error("alloc_dma failed: " + r.error().message);
  return std::move(r.value());
}

inline void write64(Device& d, uint32_t lo_offset, uint64_t v) {
  d.write32(lo_offset, static_cast<uint32_t>(v));
  d.write32(lo_offset + 4, static_cast<uint32_t>(v >> 32));
}

inline std::span<std::byte> slot(DmaBuffer& b, size_t idx, size_t bytes) {
  return b.bytes().subspan(idx * bytes, bytes);
}

// SQ/CQ and CQP/CCQ rings of 4 entries each, programmed and enabled.
struct Queues {
  std::unique_ptr<DmaBuffer> sq, cq, cqp, ccq;
  void setup(Device& d) {
    sq = alloc(d, 4 * R::sq_wqe::kBytes, 64);
    cq = alloc(d, 4 * R::cqe::kBytes, 32);
    cqp = alloc(d, 4 * R::cqp_wqe::kBytes, 64);
    ccq = alloc(d, 4 * R::cqe::kBytes, 32);
    write64(d, R::reg::SQ_BASE_LO, sq->device_addr());
    d.write32(R::reg::SQ_SIZE, 2);
    write64(d, R::reg::CQ_BASE_LO, cq->device_addr());
    d.write32(R::reg::CQ_SIZE, 2);
    write64(d, R::reg::CQP_BASE_LO, cqp->device_addr());
    d.write32(R::reg::CQP_SIZE, 2);
    write64(d, R::reg::CCQ_BASE_LO, ccq->device_addr());
    d.write32(R::reg::CCQ_SIZE, 2);
    d.write32(R::reg::CTRL, R::field::CTRL::ENABLE.put(1));
  }
};

// REM_MAC/LOC_MAC layout: byte 0 of the address in bits 47:40.
inline uint64_t mac_u64(const std::array<uint8_t, 6>& m) {
  uint64_t v = 0;
  for (uint8_t x : m) v = v << 8 | x;
  return v;
}

// The CM context image (CTX_VALID set) of a connection the golden reject `p` belongs to.
inline void put_cm_context(std::span<std::byte> img, const golden::RejectParams& p) {
  R::put(img, R::cm_ctx::REM_MAC, mac_u64(p.rem_mac.b));
  R::put(img, R::cm_ctx::LOC_MAC, mac_u64(p.loc_mac.b));
  R::put(img, R::cm_ctx::CTX_VALID, 1);
  R::put(img, R::cm_ctx::LOC_IP, p.loc_ip);
  R::put(img, R::cm_ctx::REM_IP, p.rem_ip);
  R::put(img, R::cm_ctx::LOC_PORT, p.loc_port);
  R::put(img, R::cm_ctx::REM_PORT, p.rem_port);
  R::put(img, R::cm_ctx::RCV_WND, p.rcv_wnd);
  R::put(img, R::cm_ctx::TTL, p.ttl);
  R::put(img, R::cm_ctx::TOS, p.tos);
  R::put(img, R::cm_ctx::SND_NXT, p.snd_nxt);
  R::put(img, R::cm_ctx::RCV_NXT, p.rcv_nxt);
  R::put(img, R::cm_ctx::REQ_REV, p.req_rev);
  R::put(img, R::cm_ctx::REQ_FLAGS, p.req_flags);
  R::put(img, R::cm_ctx::IP_ID, p.ip_id);
}

}  // namespace simtest
