// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// Tests of the co-simulation platform (sim/): TLM MMIO path, host memory / alloc_dma, cycle
// accounting, MMIO log, pcap and FST output, the AXI4 DMA adapter (latency, SLVERR injection,
// DECERR) and the AXI-Stream TX sink (with and without backpressure, 64- and 512-bit).
//
// SystemC elaborates once per process: every TEST builds its own Platform and must run in its
// own process (gtest_discover_tests does that; a second Platform in one process is skipped).
// The DMA/TX tests drive the device through the register map and formats of regs/bouncer.toml
// only, and check the frame against the independent golden model (tb/golden).
#include <gtest/gtest.h>
#include <pcap/pcap.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "bouncer/regs.hpp"
#include "bouncer/sim/platform.hpp"
// White-box: the platform's protocol checkers (private headers under sim/).
#include "golden/frame_parser.hpp"
#include "golden/pcap_io.hpp"
#include "golden/reject_frame.hpp"
#include "net/tx_sink.hpp"
#include "platform/axi_dma_adapter.hpp"
#include "platform/host_memory.hpp"
#include "sim_test_util.hpp"

namespace {

namespace R = bouncer::regs;
using bouncer::hal::Device;
using bouncer::hal::DmaBuffer;
using bouncer::sim::Platform;
using bouncer::sim::PlatformConfig;
using simtest::alloc;
using simtest::Queues;
using simtest::slot;
using simtest::write64;

constexpr uint32_t kIdValue = 0x424E4352;
constexpr uint64_t kPollTimeout = 200'000;

std::string temp_path(const std::string& name) { return simtest::temp_path("bouncer_sim_", name); }

// Polls the VALID bit (qword 3, bit 63) of a 32-byte completion until it equals `pol`.
// Returns the cycle at which it was seen, or 0 on timeout.
uint64_t poll_cqe(Device& d, std::span<std::byte> cqe, uint64_t pol = 1, uint64_t step = 4) {
  const uint64_t t0 = d.now_cycles();
  while (d.now_cycles() - t0 < kPollTimeout) {
    if (R::get(cqe, R::cqe::VALID) == pol) return d.now_cycles();
    d.wait_cycles(step);
  }
  return 0;
}

void put_nop_wqe(std::span<std::byte> w, uint64_t wr_id, uint64_t pol = 1) {
  std::fill(w.begin(), w.end(), std::byte{0});
  R::put(w, R::sq_wqe::WR_ID, wr_id);
  R::put(w, R::sq_wqe::OPCODE, static_cast<uint64_t>(R::SqOp::NOP));
  R::put(w, R::sq_wqe::VALID, pol);
}

// ------------------------------------------------------------------ MMIO through TLM

void id_read_test(unsigned width) {
  PlatformConfig cfg;
  cfg.data_width = width;
  Platform plat(cfg);
  uint32_t id = 0;
  uint64_t c0 = 0, c1 = 0;
  plat.run([&](Device& d) {
    EXPECT_STREQ(d.name(), "sim");
    c0 = d.now_cycles();
    id = d.read32(R::reg::ID);
    c1 = d.now_cycles();
  });
  EXPECT_EQ(id, kIdValue);
  EXPECT_EQ(id, R::kIdValue);
  EXPECT_GE(c1 - c0, 2u) << "an AXI4-Lite read takes at least an AR and an R handshake";
  EXPECT_EQ(plat.cycles(), c1);
  EXPECT_EQ(plat.stats().mmio_reads, 1u);
  EXPECT_EQ(plat.stats().mmio_errors, 0u);
  EXPECT_TRUE(plat.mmio_writes().empty());
}

TEST(SimPlatform, IdRegisterReadW64) {
  REQUIRE_OWN_PROCESS();
  id_read_test(64);
}

TEST(SimPlatform, IdRegisterReadW512) {
  REQUIRE_OWN_PROCESS();
  id_read_test(512);
}

TEST(SimPlatform, ScratchRegisterReadsBack) {
  REQUIRE_OWN_PROCESS();
  Platform plat(PlatformConfig{});
  plat.run([&](Device& d) {
    for (uint32_t v : {0x00000000u, 0xFFFFFFFFu, 0xA5A55A5Au, 0x12345678u}) {
      d.write32(R::reg::SCRATCH, v);
      EXPECT_EQ(d.read32(R::reg::SCRATCH), v);
    }
    const uint32_t caps = d.read32(R::reg::CAPS);
    EXPECT_EQ(R::field::CAPS::DATA_BYTES.get(caps), 8u);
  });
}

TEST(SimPlatform, MmioWriteLogRecordsEveryWrite) {
  REQUIRE_OWN_PROCESS();
  PlatformConfig cfg;
  cfg.mmio_cycles = 5;
  Platform plat(cfg);
  std::vector<uint32_t> block(R::reg::PUSH_PAGE_COUNT);
  for (size_t i = 0; i < block.size(); ++i) block[i] = 0x1000u + static_cast<uint32_t>(i);
  uint64_t before = 0, after_single = 0;
  plat.run([&](Device& d) {
    before = d.now_cycles();
    d.write32(R::reg::SCRATCH, 0xCAFEF00D);
    after_single = d.now_cycles();
    d.write32(R::reg::CQ_HEAD, 0);
    d.write_block(R::reg::PUSH_PAGE, block);  // pipelined AXI4-Lite writes, no doorbell
  });
  const auto& log = plat.mmio_writes();
  ASSERT_EQ(log.size(), 2u + block.size());
  EXPECT_EQ(log[0].offset, R::reg::SCRATCH);
  EXPECT_EQ(log[0].value, 0xCAFEF00Du);
  EXPECT_GT(log[0].cycle, before + cfg.mmio_cycles) << "mmio_cycles are spent before the access";
  EXPECT_LE(log[0].cycle, after_single);
  EXPECT_EQ(log[1].offset, R::reg::CQ_HEAD);
  EXPECT_EQ(log[1].value, 0u);
  for (size_t i = 0; i < block.size(); ++i) {
    EXPECT_EQ(log[2 + i].offset, R::reg::PUSH_PAGE + 4 * i);
    EXPECT_EQ(log[2 + i].value, block[i]);
  }
  for (size_t i = 1; i < log.size(); ++i)
    EXPECT_GT(log[i].cycle, log[i - 1].cycle) << "entry " << i;
  EXPECT_LE(log.back().cycle, plat.cycles());
  EXPECT_EQ(plat.stats().mmio_writes, log.size());
}

// ------------------------------------------------------------------ host memory, cycles

TEST(SimPlatform, AllocDmaAlignedZeroedDisjoint) {
  REQUIRE_OWN_PROCESS();
  PlatformConfig cfg;
  Platform plat(cfg);
  plat.run([&](Device& d) {
    struct Req {
      size_t bytes, align;
    };
    const std::vector<Req> reqs = {
        {1, 1}, {64, 64}, {3, 8}, {4096, 4096}, {100, 32}, {8, 2 * 1024 * 1024}, {7, 16}};
    std::vector<std::unique_ptr<DmaBuffer>> bufs;
    for (const auto& r : reqs) {
      auto b = alloc(d, r.bytes, r.align);
      EXPECT_EQ(b->device_addr() % r.align, 0u) << "align " << r.align;
      EXPECT_GE(b->device_addr(), cfg.host_mem_base)
          << "DMA addresses start high (64-bit addressing)";
      ASSERT_EQ(b->bytes().size(), r.bytes);
      for (std::byte x : b->bytes()) ASSERT_EQ(x, std::byte{0});
      std::fill(b->bytes().begin(), b->bytes().end(),
                std::byte{0xEE});  // must not leak into others
      b->sync_to_device(0, r.bytes);
      b->sync_from_device(0, r.bytes);
      bufs.push_back(std::move(b));
    }
    for (size_t i = 0; i < bufs.size(); ++i) {
      for (size_t j = i + 1; j < bufs.size(); ++j) {
        const uint64_t a0 = bufs[i]->device_addr(), a1 = a0 + bufs[i]->bytes().size();
        const uint64_t b0 = bufs[j]->device_addr(), b1 = b0 + bufs[j]->bytes().size();
        EXPECT_TRUE(a1 <= b0 || b1 <= a0) << "buffers " << i << " and " << j << " overlap";
      }
    }
    // The CPU view is the memory the device sees.
    auto view = plat.host_memory(bufs[1]->device_addr(), 64);
    ASSERT_EQ(view.size(), 64u);
    EXPECT_EQ(view.data(), bufs[1]->bytes().data());
    EXPECT_TRUE(plat.host_memory(cfg.host_mem_base - 8, 8).empty());

    auto bad_align = d.alloc_dma(64, 48);
    ASSERT_FALSE(bad_align.ok());
    EXPECT_EQ(bad_align.error().code, bouncer::Errc::kInvalidArgument);
    auto zero = d.alloc_dma(0, 8);
    ASSERT_FALSE(zero.ok());
    EXPECT_EQ(zero.error().code, bouncer::Errc::kInvalidArgument);
    auto huge = d.alloc_dma(size_t{1} << 40, 8);
    ASSERT_FALSE(huge.ok());
    EXPECT_EQ(huge.error().code, bouncer::Errc::kNoMemory);
  });
}

TEST(SimPlatform, WaitCyclesAdvancesExactly) {
  REQUIRE_OWN_PROCESS();
  Platform plat(PlatformConfig{});
  EXPECT_EQ(plat.cycles(), 0u) << "cycles count from the release of reset";
  plat.run([&](Device& d) {
    const uint64_t c0 = d.now_cycles();
    d.wait_cycles(0);
    EXPECT_EQ(d.now_cycles(), c0);
    d.wait_cycles(1);
    EXPECT_EQ(d.now_cycles(), c0 + 1);
    d.wait_cycles(12345);
    EXPECT_EQ(d.now_cycles(), c0 + 12346);
    for (int i = 0; i < 1000; ++i) d.wait_cycles(3);
    EXPECT_EQ(d.now_cycles(), c0 + 15346);
    EXPECT_EQ(plat.cycles(), d.now_cycles());
  });
  EXPECT_EQ(plat.cycles(), 15346u);
  // The device state persists across run() calls.
  plat.run([&](Device& d) {
    EXPECT_EQ(d.now_cycles(), 15346u);
    d.wait_cycles(654);
  });
  EXPECT_EQ(plat.cycles(), 16000u);
  EXPECT_GT(plat.wall_seconds(), 0.0);
}

TEST(SimPlatform, HostExceptionIsRethrownByRun) {
  REQUIRE_OWN_PROCESS();
  Platform plat(PlatformConfig{});
  EXPECT_THROW(plat.run([](Device& d) {
    d.wait_cycles(10);
    throw std::runtime_error("host failed");
  }),
               std::runtime_error);
  uint32_t id = 0;
  plat.run([&](Device& d) { id = d.read32(R::reg::ID); });
  EXPECT_EQ(id, kIdValue);
}

[[gnu::noinline]] uint64_t use_big_stack(uint8_t seed) {
  volatile uint8_t big[2 << 20];  // 2 MiB: more than SystemC's default 256 KiB thread stack
  for (size_t i = 0; i < sizeof(big); i += 512) big[i] = static_cast<uint8_t>(seed + i / 512);
  uint64_t sum = 0;
  for (size_t i = 0; i < sizeof(big); i += 512) sum += big[i];
  return sum;
}

TEST(SimPlatform, HostThreadHasALargeStack) {
  REQUIRE_OWN_PROCESS();
  Platform plat(PlatformConfig{});
  uint64_t sum = 0;
  plat.run([&](Device& d) {
    sum = use_big_stack(1);
    d.wait_cycles(1);
  });
  EXPECT_GT(sum, 0u);
}

TEST(SimPlatform, BadConfigurationThrows) {
  REQUIRE_OWN_PROCESS();
  PlatformConfig bad_width;
  bad_width.data_width = 32;
  EXPECT_THROW(Platform{bad_width}, std::invalid_argument);
  PlatformConfig bad_pcap;
  bad_pcap.pcap_path = "/nonexistent-dir/x.pcap";
  EXPECT_THROW(Platform{bad_pcap}, std::runtime_error);
  PlatformConfig bad_prob;
  bad_prob.tx_ready_prob = 1.5;
  EXPECT_THROW(Platform{bad_prob}, std::invalid_argument);
  // Nothing was elaborated: a good platform still works, and a second one is refused.
  Platform plat(PlatformConfig{});
  EXPECT_THROW(Platform{PlatformConfig{}}, std::logic_error);
  uint32_t id = 0;
  plat.run([&](Device& d) { id = d.read32(R::reg::ID); });
  EXPECT_EQ(id, kIdValue);
}

// ------------------------------------------------------------------ pcap, FST

TEST(SimPlatform, PcapFileCreatedAndReadable) {
  REQUIRE_OWN_PROCESS();
  PlatformConfig cfg;
  cfg.pcap_path = temp_path("extra.pcap");
  std::remove(cfg.pcap_path.c_str());
  Platform plat(cfg);
  std::vector<uint8_t> f1(60), f2(1514);
  for (size_t i = 0; i < f1.size(); ++i) f1[i] = static_cast<uint8_t>(i);
  for (size_t i = 0; i < f2.size(); ++i) f2[i] = static_cast<uint8_t>(255 - i % 256);
  plat.run([&](Device& d) { d.wait_cycles(100); });
  plat.write_pcap_frame(f1, 250);        // 1 us at 250 MHz
  plat.write_pcap_frame(f2, 2'500'500);  // 10002 us
  // Flushed per frame: readable while the platform is alive.
  char err[PCAP_ERRBUF_SIZE];
  pcap_t* p = pcap_open_offline(cfg.pcap_path.c_str(), err);
  ASSERT_NE(p, nullptr) << err;
  EXPECT_EQ(pcap_datalink(p), DLT_EN10MB);
  EXPECT_GE(pcap_snapshot(p), 65535);
  pcap_pkthdr* h = nullptr;
  const u_char* data = nullptr;
  ASSERT_EQ(pcap_next_ex(p, &h, &data), 1);
  EXPECT_EQ(h->caplen, f1.size());
  EXPECT_EQ(h->ts.tv_sec, 0);
  EXPECT_EQ(h->ts.tv_usec, 1);
  EXPECT_EQ(std::memcmp(data, f1.data(), f1.size()), 0);
  ASSERT_EQ(pcap_next_ex(p, &h, &data), 1);
  EXPECT_EQ(h->caplen, f2.size());
  EXPECT_EQ(h->ts.tv_sec, 0);
  EXPECT_EQ(h->ts.tv_usec, 10002);
  EXPECT_EQ(std::memcmp(data, f2.data(), f2.size()), 0);
  EXPECT_EQ(pcap_next_ex(p, &h, &data), PCAP_ERROR_BREAK);
  pcap_close(p);
}

TEST(SimPlatform, FstWaveformWritten) {
  REQUIRE_OWN_PROCESS();
  const std::string path = temp_path("wave.fst");
  std::remove(path.c_str());
  {
    PlatformConfig cfg;
    cfg.fst_path = path;
    Platform plat(cfg);
    plat.run([](Device& d) {
      d.write32(R::reg::SCRATCH, 1);
      (void)d.read32(R::reg::SCRATCH);
      d.wait_cycles(100);
    });
  }  // the destructor closes the FST
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0) << path;
  EXPECT_GT(st.st_size, 100);
}

// ------------------------------------------------------------------ DMA (AXI4 adapter)

// NOP on the SQ: an 8-beat DMA read of the WQE, then a CQE written by DMA.
TEST(SimPlatformDma, SqNopFetchesWqeAndWritesCqe) {
  REQUIRE_OWN_PROCESS();
  PlatformConfig cfg;
  cfg.mem_latency_cycles = 200;
  Platform plat(cfg);
  uint64_t t_db = 0, t_cqe = 0;
  Queues q;
  plat.run([&](Device& d) {
    q.setup(d);
    put_nop_wqe(slot(*q.sq, 0, R::sq_wqe::kBytes), 0x1122334455667788ull);
    d.write32(R::reg::SQ_DB, 1);
    t_db = plat.mmio_writes().back().cycle;
    t_cqe = poll_cqe(d, slot(*q.cq, 0, R::cqe::kBytes));
    ASSERT_NE(t_cqe, 0u) << "no CQE within " << kPollTimeout << " cycles";
    // The consumer index moves on once the engine is done with the WQE (possibly after the
    // CQE write's B response).
    uint32_t ci = 0;
    for (int i = 0; i < 100 && (ci = d.read32(R::reg::SQ_CI)) != 1; ++i)
      d.wait_cycles(cfg.mem_latency_cycles);
    EXPECT_EQ(ci, 1u);
  });
  auto c = slot(*q.cq, 0, R::cqe::kBytes);
  EXPECT_EQ(R::get(c, R::cqe::WR_ID), 0x1122334455667788ull);
  EXPECT_EQ(R::get(c, R::cqe::OP), static_cast<uint64_t>(R::SqOp::NOP));
  EXPECT_EQ(R::get(c, R::cqe::MAJERR), 0u);
  EXPECT_EQ(R::get(c, R::cqe::ERROR), 0u);
  EXPECT_EQ(R::get(c, R::cqe::WQEIDX), 0u);
  EXPECT_EQ(R::get(c, R::cqe::SQ), 1u);
  EXPECT_GE(t_cqe - t_db, cfg.mem_latency_cycles) << "the WQE read waits for the memory latency";
  const auto s = plat.stats();
  EXPECT_GE(s.dma_read_bursts, 1u);
  EXPECT_GE(s.dma_read_beats, 8u) << "one 64-byte WQE";
  EXPECT_GE(s.dma_write_bursts, 1u);
  EXPECT_GE(s.dma_write_beats, 4u) << "one 32-byte CQE";
  EXPECT_EQ(s.dma_errors, 0u);
  EXPECT_TRUE(plat.tx_frames().empty()) << "a NOP sends nothing";
}

// The doorbell-to-CQE time grows with the configured memory latency (set at run time).
TEST(SimPlatformDma, MemoryLatencyIsHonoured) {
  REQUIRE_OWN_PROCESS();
  PlatformConfig cfg;
  cfg.mem_latency_cycles = 20;
  Platform plat(cfg);
  uint64_t d_fast = 0, d_slow = 0, d_jitter = 0;
  Queues q;
  plat.run([&](Device& d) {
    q.setup(d);
    auto nop = [&](size_t idx) -> uint64_t {
      put_nop_wqe(slot(*q.sq, idx, R::sq_wqe::kBytes), idx);
      // 4-entry rings: the index after 3 is 0 (4 would put the SQ in queue error, DB_RANGE)
      d.write32(R::reg::SQ_DB, static_cast<uint32_t>((idx + 1) % 4));
      const uint64_t t0 = plat.mmio_writes().back().cycle;
      const uint64_t t1 = poll_cqe(d, slot(*q.cq, idx, R::cqe::kBytes), 1, 1);
      EXPECT_NE(t1, 0u) << "no CQE for WQE " << idx;
      d.write32(R::reg::CQ_HEAD, static_cast<uint32_t>((idx + 1) % 4));
      d.wait_cycles(1000);  // let the B response of the CQE write drain
      return t1 - t0;
    };
    (void)nop(0);  // warm-up: the first WQE may also wait for start-up work after reset
    d_fast = nop(1);
    plat.set_mem_latency(420, 0);
    d_slow = nop(2);
    plat.set_mem_latency(20, 1000);
    d_jitter = nop(3);
  });
  EXPECT_GE(d_slow, d_fast + 400) << "fast " << d_fast << " slow " << d_slow;
  EXPECT_LE(d_slow, d_fast + 420 + 64) << "fast " << d_fast << " slow " << d_slow;
  EXPECT_GE(d_jitter, d_fast);
}

TEST(SimPlatformDma, InjectedErrorGivesSlverrAndDmaCqe) {
  REQUIRE_OWN_PROCESS();
  Platform plat(PlatformConfig{});
  Queues q;
  plat.run([&](Device& d) {
    q.setup(d);
    put_nop_wqe(slot(*q.sq, 0, R::sq_wqe::kBytes), 77);
    plat.inject_dma_error(q.sq->device_addr() + 8, q.sq->device_addr() + 16);  // inside WQE 0
    d.write32(R::reg::SQ_DB, 1);
    ASSERT_NE(poll_cqe(d, slot(*q.cq, 0, R::cqe::kBytes)), 0u);
  });
  auto c = slot(*q.cq, 0, R::cqe::kBytes);
  EXPECT_EQ(R::get(c, R::cqe::ERROR), 1u);
  EXPECT_EQ(R::get(c, R::cqe::MAJERR), static_cast<uint64_t>(R::CqMajor::DMA));
  EXPECT_EQ(R::get(c, R::cqe::MINERR), static_cast<uint64_t>(R::CqMinor::DMA_WQE));
  EXPECT_GE(plat.stats().dma_errors, 1u);
}

TEST(SimPlatformDma, UnallocatedAddressGivesDecerr) {
  REQUIRE_OWN_PROCESS();
  PlatformConfig cfg;
  Platform plat(cfg);
  Queues q;
  plat.run([&](Device& d) {
    q.setup(d);
    // Point the SQ at host memory that was never allocated.
    d.write32(R::reg::CTRL, 0);
    write64(d, R::reg::SQ_BASE_LO, cfg.host_mem_base + (cfg.host_mem_bytes / 2));
    d.write32(R::reg::SQ_SIZE, 2);
    d.write32(R::reg::CTRL, R::field::CTRL::ENABLE.put(1));
    d.write32(R::reg::SQ_DB, 1);
    ASSERT_NE(poll_cqe(d, slot(*q.cq, 0, R::cqe::kBytes)), 0u);
  });
  auto c = slot(*q.cq, 0, R::cqe::kBytes);
  EXPECT_EQ(R::get(c, R::cqe::ERROR), 1u);
  EXPECT_EQ(R::get(c, R::cqe::MAJERR), static_cast<uint64_t>(R::CqMajor::DMA));
  EXPECT_EQ(R::get(c, R::cqe::MINERR), static_cast<uint64_t>(R::CqMinor::DMA_WQE));
  EXPECT_GE(plat.stats().dma_errors, 1u);
}

// ------------------------------------------------------------------ reject frame on TX

golden::Mac mac_of(uint64_t v) {  // REM_MAC/LOC_MAC: byte 0 of the address in bits 47:40
  golden::Mac m;
  for (int i = 0; i < 6; ++i) m.b[static_cast<size_t>(i)] = static_cast<uint8_t>(v >> (40 - 8 * i));
  return m;
}

// Writes a context with WRITE_CM_CONTEXT (DMA read), reads it back with READ_CM_CONTEXT
// (DMA write), then rejects the connection with inline PD; returns the golden parameters.
golden::RejectParams reject_once(Platform& plat, Device& d, Queues& q, uint64_t* cqe_frame_len) {
  constexpr uint32_t kCmId = 5;
  golden::RejectParams p;
  const uint64_t rem_mac = 0x02AABBCCDD01ull, loc_mac = 0x02AABBCCDD02ull;
  p.rem_mac = mac_of(rem_mac);
  p.loc_mac = mac_of(loc_mac);
  p.loc_ip = 0x0A000001;
  p.rem_ip = 0x0A000002;
  p.tos = 0;
  p.ttl = 64;
  p.ip_id = 0x1234;
  p.loc_port = 4791;
  p.rem_port = 50000;
  p.snd_nxt = 1000;
  p.rcv_nxt = 2000;
  p.rcv_wnd = 0xFFFF;
  p.req_rev = 1;
  p.req_flags = 0;
  p.pd = {'n', 'o', ' ', 't', 'h', 'a', 'n', 'k', 's', '!', 0x00, 0xFF};

  auto ctx = alloc(d, R::cm_ctx::kBytes, 64);
  auto img = ctx->bytes();
  simtest::put_cm_context(img, p);

  auto cqp_cmd = [&](size_t idx, R::CqpOp op, uint64_t addr) {
    auto w = slot(*q.cqp, idx, R::cqp_wqe::kBytes);
    std::fill(w.begin(), w.end(), std::byte{0});
    R::put(w, R::cqp_wqe::CTX_ADDR, addr);
    R::put(w, R::cqp_wqe::CM_ID, kCmId);
    R::put(w, R::cqp_wqe::SCRATCH, 0x5C000 + idx);
    R::put(w, R::cqp_wqe::OPCODE, static_cast<uint64_t>(op));
    R::put(w, R::cqp_wqe::VALID, 1);
    d.write32(R::reg::CQP_DB, static_cast<uint32_t>((idx + 1) % 4));  // 4-entry ring
    auto c = slot(*q.ccq, idx, R::cqe::kBytes);
    EXPECT_NE(poll_cqe(d, c), 0u) << "no CCQE for CQP WQE " << idx;
    EXPECT_EQ(R::get(c, R::cqe::ERROR), 0u) << "CQP WQE " << idx;
    EXPECT_EQ(R::get(c, R::cqe::WR_ID), 0x5C000u + idx);
  };
  cqp_cmd(0, R::CqpOp::WRITE_CM_CONTEXT, ctx->device_addr());
  auto back = alloc(d, R::cm_ctx::kBytes, 64);
  cqp_cmd(1, R::CqpOp::READ_CM_CONTEXT, back->device_addr());
  EXPECT_TRUE(std::equal(img.begin(), img.end(), back->bytes().begin()))
      << "context DMA round trip";

  auto w = slot(*q.sq, 0, R::sq_wqe::kBytes);
  std::fill(w.begin(), w.end(), std::byte{0});
  R::put(w, R::sq_wqe::CM_ID, kCmId);
  R::put(w, R::sq_wqe::PD_LEN, p.pd.size());
  R::put(w, R::sq_wqe::WR_ID, 0xFEED);
  R::put(w, R::sq_wqe::OPCODE, static_cast<uint64_t>(R::SqOp::MPA_REJECT));
  R::put(w, R::sq_wqe::PD_INLINE, 1);
  R::put(w, R::sq_wqe::VALID, 1);
  std::memcpy(w.data() + R::sq_wqe::INLINE_PD.byte_offset(), p.pd.data(), p.pd.size());
  d.write32(R::reg::SQ_DB, 1);
  auto c = slot(*q.cq, 0, R::cqe::kBytes);
  EXPECT_NE(poll_cqe(d, c), 0u) << "no CQE for the reject";
  EXPECT_EQ(R::get(c, R::cqe::ERROR), 0u)
      << "MAJERR " << R::get(c, R::cqe::MAJERR) << " MINERR " << R::get(c, R::cqe::MINERR);
  EXPECT_EQ(R::get(c, R::cqe::WR_ID), 0xFEEDu);
  *cqe_frame_len = R::get(c, R::cqe::FRAME_LEN);
  (void)plat;
  return p;
}

void reject_frame_test(unsigned width, double ready_prob) {
  PlatformConfig cfg;
  cfg.data_width = width;
  cfg.tx_ready_prob = ready_prob;
  cfg.mem_latency_cycles = 100;
  cfg.mem_latency_jitter = 30;
  cfg.seed = 7;
  cfg.pcap_path = temp_path("tx.pcap");
  std::remove(cfg.pcap_path.c_str());
  Platform plat(cfg);
  Queues q;
  golden::RejectParams params;
  uint64_t frame_len = 0;
  plat.run([&](Device& d) {
    q.setup(d);
    params = reject_once(plat, d, q, &frame_len);
    d.wait_cycles(100);
  });
  ASSERT_FALSE(testing::Test::HasFailure());
  ASSERT_EQ(plat.tx_frames().size(), 1u);
  const auto& f = plat.tx_frames()[0];
  EXPECT_EQ(f.bytes.size(), frame_len) << "CQE FRAME_LEN";
  EXPECT_LE(f.first_cycle, f.last_cycle);
  const uint64_t beats = (f.bytes.size() + width / 8 - 1) / (width / 8);
  EXPECT_GE(f.last_cycle - f.first_cycle + 1, beats);
  if (ready_prob >= 1.0) {
    EXPECT_EQ(plat.stats().tx_stall_cycles, 0u);
  } else if (beats > 1) {
    EXPECT_GT(plat.stats().tx_stall_cycles, 0u) << "tready was random";
  }
  EXPECT_EQ(plat.stats().tx_beats, beats);

  std::string why;
  auto parsed = golden::parse_mpa_reply(f.bytes, &why);
  ASSERT_TRUE(parsed.has_value()) << why;
  EXPECT_TRUE(golden::reject_matches_params(*parsed, params, &why)) << why;
  EXPECT_EQ(f.bytes, golden::build_mpa_reject_frame(params))
      << "frame differs from the golden model";

  auto pkts = golden::read_pcap(cfg.pcap_path, &why);
  ASSERT_TRUE(pkts.has_value()) << why;
  ASSERT_EQ(pkts->size(), 1u);
  EXPECT_EQ((*pkts)[0], f.bytes);
}

TEST(SimPlatformTx, RejectFrameW64) {
  REQUIRE_OWN_PROCESS();
  reject_frame_test(64, 1.0);
}
TEST(SimPlatformTx, RejectFrameW64Backpressure) {
  REQUIRE_OWN_PROCESS();
  reject_frame_test(64, 0.3);
}
TEST(SimPlatformTx, RejectFrameW512) {
  REQUIRE_OWN_PROCESS();
  reject_frame_test(512, 1.0);
}
TEST(SimPlatformTx, RejectFrameW512Backpressure) {
  REQUIRE_OWN_PROCESS();
  // only 2 beats: a low tready probability makes a stall (asserted below) all but certain
  reject_frame_test(512, 0.05);
}

// ------------------------------------------------------------------ protocol checkers (white box)
//
// The DMA adapter and the TX sink are templates over the verilated model's port names; a plain
// struct with the same members drives them cycle by cycle here. The AXI rule checks are how
// RTL bugs are caught, so their abort paths are tested too.

struct FakePins {
  // AXI4 master (device side outputs, adapter inputs)
  uint8_t m_axi_arid = 0, m_axi_arlen = 0, m_axi_arsize = 3, m_axi_arburst = 1, m_axi_arvalid = 0;
  uint64_t m_axi_araddr = 0;
  uint8_t m_axi_rready = 1;
  uint8_t m_axi_awid = 0, m_axi_awlen = 0, m_axi_awsize = 3, m_axi_awburst = 1, m_axi_awvalid = 0;
  uint64_t m_axi_awaddr = 0;
  uint64_t m_axi_wdata = 0;
  uint8_t m_axi_wstrb = 0xFF, m_axi_wlast = 0, m_axi_wvalid = 0;
  uint8_t m_axi_bready = 1;
  // driven by the adapter
  uint8_t m_axi_arready = 0, m_axi_rid = 0, m_axi_rresp = 0, m_axi_rlast = 0, m_axi_rvalid = 0;
  uint64_t m_axi_rdata = 0;
  uint8_t m_axi_awready = 0, m_axi_wready = 0, m_axi_bid = 0, m_axi_bresp = 0, m_axi_bvalid = 0;
  // AXI-Stream TX, 64-bit
  uint64_t m_axis_tx_tdata = 0;
  uint8_t m_axis_tx_tkeep = 0, m_axis_tx_tlast = 0, m_axis_tx_tvalid = 0, m_axis_tx_tready = 0;
};

struct DmaBench {
  bouncer::sim::PlatformStats stats;
  bouncer::sim::HostMemory mem{"mem", 0x1'0000'0000ull, 1 << 20};
  bouncer::sim::AxiDmaAdapter dma{"dma", 10, 0, 1, stats};
  FakePins p;
  uint64_t edge = 0;
  uint64_t buf = 0;
  DmaBench() {
    dma.mem_socket.bind(mem.socket);
    sc_core::sc_start(sc_core::SC_ZERO_TIME);  // completes elaboration (port binding)
    buf = *mem.alloc(8192, 4096);
    dma.drive(p, 0);
  }
  // One edge: the adapter samples handshakes, then drives its outputs for the next edge.
  void tick() {
    ++edge;
    dma.pre_edge(p, edge);
    dma.drive(p, edge);
  }
};

TEST(SimPlatformChecks, DmaReadBurstTimingAndOrder) {
  REQUIRE_OWN_PROCESS();
  DmaBench b;
  uint8_t* m = b.mem.ptr(b.buf, 8192);
  for (int i = 0; i < 256; ++i) {
    const uint64_t v = 0xA000'0000'0000'0000ull + static_cast<uint64_t>(i);
    std::memcpy(m + 8 * i, &v, 8);
  }
  // AR 1 (8 beats from qword 0) at edge 1, AR 2 (2 beats from qword 100, id 3) at edge 2.
  b.p.m_axi_arvalid = 1;
  b.p.m_axi_araddr = b.buf;
  b.p.m_axi_arlen = 7;
  ASSERT_EQ(b.p.m_axi_arready, 1);
  b.tick();
  b.p.m_axi_araddr = b.buf + 800;
  b.p.m_axi_arlen = 1;
  b.p.m_axi_arid = 3;
  b.tick();
  b.p.m_axi_arvalid = 0;
  struct Beat {
    uint64_t edge, data;
    uint8_t id, last;
  };
  std::vector<Beat> beats;
  while (b.edge < 60) {
    b.p.m_axi_rready = (b.edge % 5 == 3) ? 0 : 1;  // some backpressure
    if (b.p.m_axi_rvalid && b.p.m_axi_rready)
      beats.push_back({b.edge + 1, b.p.m_axi_rdata, b.p.m_axi_rid, b.p.m_axi_rlast});
    b.tick();
  }
  ASSERT_EQ(beats.size(), 10u);
  EXPECT_EQ(beats[0].edge, 1u + 10u) << "first beat `latency` cycles after the AR handshake";
  for (size_t i = 0; i < 8; ++i) {
    EXPECT_EQ(beats[i].data, 0xA000'0000'0000'0000ull + i);
    EXPECT_EQ(beats[i].id, 0);
    EXPECT_EQ(beats[i].last, i == 7 ? 1 : 0);
  }
  EXPECT_EQ(beats[8].data, 0xA000'0000'0000'0000ull + 100);
  EXPECT_EQ(beats[9].data, 0xA000'0000'0000'0000ull + 101);
  EXPECT_EQ(beats[8].id, 3);
  EXPECT_EQ(beats[9].last, 1);
  EXPECT_GT(beats[8].edge, beats[7].edge) << "in order";
  EXPECT_EQ(b.stats.dma_read_bursts, 2u);
  EXPECT_EQ(b.stats.dma_read_beats, 10u);
}

TEST(SimPlatformChecks, DmaWriteCommitsAtLastBeatWithStrobes) {
  REQUIRE_OWN_PROCESS();
  DmaBench b;
  uint8_t* m = b.mem.ptr(b.buf, 8192);
  std::memset(m + 64, 0x55, 32);
  b.p.m_axi_awvalid = 1;
  b.p.m_axi_awaddr = b.buf + 64;
  b.p.m_axi_awlen = 2;  // 3 beats
  b.p.m_axi_awid = 9;
  b.tick();  // AW accepted at edge 1; WREADY follows
  b.p.m_axi_awvalid = 0;
  const uint64_t data[3] = {0x1111111111111111ull, 0x2222222222222222ull, 0x3333333333333333ull};
  const uint8_t strb[3] = {0xFF, 0x0F, 0xFF};
  uint64_t last_edge = 0;
  for (int i = 0; i < 3;) {
    b.p.m_axi_wvalid = 1;
    b.p.m_axi_wdata = data[i];
    b.p.m_axi_wstrb = strb[i];
    b.p.m_axi_wlast = i == 2 ? 1 : 0;
    const bool hs = b.p.m_axi_wready != 0;
    if (hs && i < 2) {
      EXPECT_EQ(m[64], 0x55) << "nothing is committed before WLAST";
    }
    b.tick();
    if (hs) {
      if (i == 2) last_edge = b.edge;
      ++i;
    }
  }
  b.p.m_axi_wvalid = 0;
  uint64_t q[4];
  std::memcpy(q, m + 64, 32);
  EXPECT_EQ(q[0], data[0]);
  EXPECT_EQ(q[1], 0x5555555522222222ull) << "WSTRB 0x0F writes the low four bytes only";
  EXPECT_EQ(q[2], data[2]);
  EXPECT_EQ(q[3], 0x5555555555555555ull);
  uint64_t b_edge = 0;
  while (b.edge < last_edge + 50 && b_edge == 0) {
    if (b.p.m_axi_bvalid && b.p.m_axi_bready) {
      b_edge = b.edge + 1;
      EXPECT_EQ(b.p.m_axi_bid, 9);
      EXPECT_EQ(b.p.m_axi_bresp, 0);
    }
    b.tick();
  }
  EXPECT_EQ(b_edge, last_edge + 10) << "B `latency` cycles after the last W beat";
}

TEST(SimPlatformChecks, DmaInjectedAndUnmappedErrors) {
  REQUIRE_OWN_PROCESS();
  DmaBench b;
  b.dma.add_error_range(b.buf + 4096, b.buf + 4104);
  auto read_resp = [&](uint64_t addr) {
    b.p.m_axi_arvalid = 1;
    b.p.m_axi_araddr = addr;
    b.p.m_axi_arlen = 0;
    b.tick();
    b.p.m_axi_arvalid = 0;
    for (int i = 0; i < 100; ++i) {
      if (b.p.m_axi_rvalid) {
        const uint8_t r = b.p.m_axi_rresp;
        b.tick();
        return static_cast<int>(r);
      }
      b.tick();
    }
    return -1;
  };
  EXPECT_EQ(read_resp(b.buf), 0) << "OKAY";
  EXPECT_EQ(read_resp(b.buf + 4096), 2) << "SLVERR in the injected range";
  EXPECT_EQ(read_resp(b.buf + 2 * 1024 * 1024), 3) << "DECERR outside allocated memory";
  EXPECT_EQ(read_resp(0x40), 3) << "DECERR below host memory";
  b.dma.clear_error_ranges();
  EXPECT_EQ(read_resp(b.buf + 4096), 0);
  EXPECT_EQ(b.stats.dma_errors, 3u);
}

// The other fault kinds (sim::DmaFault): DECERR, a read never answered (later reads still are),
// a read answered `delay` cycles late, a write that is neither committed nor answered.
TEST(SimPlatformChecks, DmaFaultKinds) {
  REQUIRE_OWN_PROCESS();
  using bouncer::sim::DmaFault;
  DmaBench b;
  b.dma.add_fault(b.buf, b.buf + 8, DmaFault::kDecErr, 0);
  b.dma.add_fault(b.buf + 64, b.buf + 72, DmaFault::kNoResponse, 0);
  b.dma.add_fault(b.buf + 128, b.buf + 136, DmaFault::kLate, 40);
  b.dma.add_fault(b.buf + 4096, b.buf + 4104, DmaFault::kNoResponse, 0);
  // issues one single-beat read; returns {rresp, cycles from the AR edge to the R beat}
  auto read = [&](uint64_t addr) -> std::pair<int, uint64_t> {
    b.p.m_axi_arvalid = 1;
    b.p.m_axi_araddr = addr;
    b.p.m_axi_arlen = 0;
    b.tick();
    const uint64_t ar_edge = b.edge;
    b.p.m_axi_arvalid = 0;
    for (int i = 0; i < 200; ++i) {
      if (b.p.m_axi_rvalid) {
        const int r = b.p.m_axi_rresp;
        b.tick();
        return {r, b.edge - ar_edge};
      }
      b.tick();
    }
    return {-1, 0};
  };
  EXPECT_EQ(read(b.buf).first, 3) << "DECERR in the injected range";
  EXPECT_EQ(read(b.buf + 64).first, -1) << "never answered";
  EXPECT_EQ(b.stats.dma_unanswered, 1u);
  const auto ok = read(b.buf + 256);
  EXPECT_EQ(ok.first, 0) << "a later read is still answered";
  const auto late = read(b.buf + 128);
  EXPECT_EQ(late.first, 0);
  EXPECT_EQ(late.second, ok.second + 40) << "answered `delay` cycles later";
  // a write into the no-response range: not committed, no B
  uint8_t* m = b.mem.ptr(b.buf, 8192);
  std::memset(m + 4096, 0x55, 8);
  b.p.m_axi_bready = 1;
  b.p.m_axi_awvalid = 1;
  b.p.m_axi_awaddr = b.buf + 4096;
  b.p.m_axi_awlen = 0;
  b.p.m_axi_wvalid = 1;
  b.p.m_axi_wdata = 0x1122334455667788ull;
  b.p.m_axi_wstrb = 0xFF;
  b.p.m_axi_wlast = 1;
  bool aw = false, w = false, bseen = false;
  for (int i = 0; i < 100; ++i) {
    const bool aw_hs = b.p.m_axi_awvalid && b.p.m_axi_awready;
    const bool w_hs = b.p.m_axi_wvalid && b.p.m_axi_wready;
    bseen = bseen || b.p.m_axi_bvalid;
    b.tick();
    if (aw_hs) {
      aw = true;
      b.p.m_axi_awvalid = 0;
    }
    if (w_hs) {
      w = true;
      b.p.m_axi_wvalid = 0;
    }
  }
  EXPECT_TRUE(aw && w);
  EXPECT_FALSE(bseen) << "no B for a write into the no-response range";
  EXPECT_EQ(m[4096], 0x55) << "not committed";
  EXPECT_EQ(b.stats.dma_unanswered, 2u);
  EXPECT_EQ(b.stats.dma_errors, 1u);
  EXPECT_TRUE(b.dma.idle());
}

TEST(SimPlatformChecksDeathTest, DmaRejects4KiBCrossing) {
  REQUIRE_OWN_PROCESS();
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        DmaBench b;
        b.p.m_axi_arvalid = 1;
        b.p.m_axi_araddr = b.buf + 4096 - 8;
        b.p.m_axi_arlen = 1;
        b.tick();
      },
      "AXI4 violation.*crosses a 4 KiB boundary");
}

TEST(SimPlatformChecksDeathTest, DmaRejectsNonIncrBurstAndWrongSize) {
  REQUIRE_OWN_PROCESS();
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        DmaBench b;
        b.p.m_axi_arvalid = 1;
        b.p.m_axi_araddr = b.buf;
        b.p.m_axi_arburst = 0;
        b.tick();
      },
      "ARBURST=0");
  EXPECT_DEATH(
      {
        DmaBench b;
        b.p.m_axi_awvalid = 1;
        b.p.m_axi_awaddr = b.buf;
        b.p.m_axi_awsize = 2;
        b.tick();
      },
      "AWSIZE=2");
}

TEST(SimPlatformChecksDeathTest, DmaRejectsEarlyWlast) {
  REQUIRE_OWN_PROCESS();
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        DmaBench b;
        b.p.m_axi_awvalid = 1;
        b.p.m_axi_awaddr = b.buf;
        b.p.m_axi_awlen = 3;
        b.tick();
        b.p.m_axi_awvalid = 0;
        b.p.m_axi_wvalid = 1;
        b.p.m_axi_wlast = 1;  // on beat 1 of 4
        b.tick();
      },
      "WLAST=1 on beat 1 of a 4-beat write burst");
}

struct TxBench {
  std::vector<std::vector<uint8_t>> frames;
  bouncer::sim::TxSink sink;
  FakePins p;
  uint64_t edge = 0;
  explicit TxBench(double prob)
      : sink(8, 3, prob, [this](std::vector<uint8_t>&& f, uint64_t, uint64_t) {
          frames.push_back(std::move(f));
        }) {
    sink.drive(p);
  }
  void tick() {
    ++edge;
    sink.pre_edge(p, edge);
    sink.drive(p);
  }
  // Offers one beat and holds it until accepted (a well-behaved source).
  void send(uint64_t data, uint8_t keep, bool last) {
    p.m_axis_tx_tvalid = 1;
    p.m_axis_tx_tdata = data;
    p.m_axis_tx_tkeep = keep;
    p.m_axis_tx_tlast = last ? 1 : 0;
    for (;;) {
      const bool hs = p.m_axis_tx_tready != 0;
      tick();
      if (hs) break;
    }
    p.m_axis_tx_tvalid = 0;
  }
};

TEST(SimPlatformChecks, TxSinkAssemblesFramesFromTkeep) {
  REQUIRE_OWN_PROCESS();
  TxBench t(0.5);
  t.send(0x0706050403020100ull, 0xFF, false);
  t.send(0x0F0E0D0C0B0A0908ull, 0xFF, false);
  t.send(0xEEEEEEEEEE121110ull, 0x07, true);
  t.send(0x1111111111111142ull, 0x01, true);
  ASSERT_EQ(t.frames.size(), 2u);
  ASSERT_EQ(t.frames[0].size(), 19u);
  for (size_t i = 0; i < 19; ++i) EXPECT_EQ(t.frames[0][i], i);
  EXPECT_EQ(t.frames[1], std::vector<uint8_t>{0x42});
  EXPECT_GT(t.sink.stall_cycles(), 0u) << "tready was random";
  EXPECT_EQ(t.sink.beats(), 4u);
}

TEST(SimPlatformChecksDeathTest, TxSinkRejectsBadTkeep) {
  REQUIRE_OWN_PROCESS();
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        TxBench t(1.0);
        t.send(0, 0x7F, false);
      },
      "tkeep=0x7f on a beat without tlast");
  EXPECT_DEATH(
      {
        TxBench t(1.0);
        t.send(0, 0x0D, true);
      },
      "tkeep=0xd on the tlast beat");
}

TEST(SimPlatformChecksDeathTest, TxSinkRejectsUnstablePayload) {
  REQUIRE_OWN_PROCESS();
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        TxBench t(0.0);  // never ready
        t.p.m_axis_tx_tvalid = 1;
        t.p.m_axis_tx_tkeep = 0xFF;
        t.p.m_axis_tx_tdata = 1;
        t.tick();
        t.p.m_axis_tx_tdata = 2;  // changed while stalled
        t.tick();
      },
      "changed while tvalid=1 and tready=0");
  EXPECT_DEATH(
      {
        TxBench t(0.0);
        t.p.m_axis_tx_tvalid = 1;
        t.p.m_axis_tx_tkeep = 0xFF;
        t.tick();
        t.p.m_axis_tx_tvalid = 0;  // withdrawn
        t.tick();
      },
      "tvalid dropped before the handshake");
}

}  // namespace

// libsystemc provides main() and calls sc_main (declared extern "C" by SystemC).
extern "C" int sc_main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
