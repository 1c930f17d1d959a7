// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// An in-process fake of hal::Device for the driver unit tests: registers, DMA memory, and a
// small model of the SQ and CQP engines that consumes WQEs from host memory and writes CQEs
// with polarity. The SQ side has Config::num_sq reject SQs (register blocks at
// SQ_BASE_LO + n * 0x20, push pages at PUSH_PAGE + n * 0x40, SQ_DB / SQ_PUSH_DB naming the SQ
// in bits 23:16; a bad SQ number is ignored and counted in STAT_SQ_DB_BAD), served one WQE
// per turn round-robin, with SQ_IDX in each CQE. Written from regs/bouncer.toml and
// docs/reject-frame.md only (it does not use the driver's encoders). Hardware runs only inside
// wait_cycles()/run(), so a test can post several WQEs before anything is consumed.
//
// It also models the passive CM's contract with the host (not its TCP): listeners (CQP
// CREATE/DESTROY_LISTENER), cm_nodes created by test-scripted connections
// (inject_connect_request ...), the PD area (the request PD is written to slot cm_id before
// the CONNECT_REQUEST event; a reject re-reads the slot for retransmissions), the AEQ (valid
// polarity, never overwriting an unconsumed entry: events wait in a backlog), the node
// states a reject depends on (MPAREQ_RCVD, PEER_RESET, after the reject), terminal events
// that free the cm_id only once written, auto-reject, CM_CONNS, CM_READY, the timer/TCP
// registers with their reset values, ISN_KEY and the 0x300 statistics counters.
//
// Time: the device counts core cycles (now_cycles, CYCLE_LO/HI); the host has its own clock
// (host_now), 4 ns per cycle of wait_cycles() or of wait_for(). The engines' own work moves
// only the device's count. The cycle counter can be made to misbehave (Config::cycles) to show
// that no driver wait depends on it.
//
// Memory (Config::memory, fake_dma.hpp): kInline, the default, writes device memory at once
// from the engines. kThreaded and kNonCoherent hand every device write to a DMA thread that
// lands it later, qword by qword in a random order, VALID last, while the driver polls;
// kNonCoherent also gives the CPU and the device separate copies of memory that only the
// DmaBuffer syncs move between. In both, a doorbell (SQ_DB, SQ_PUSH_DB, CQP_DB) fetches the
// WQEs it announces from device memory at once (the earliest a device may), so a WQE written
// or synced after its doorbell is seen stale; and the clocks stand still while the DMA thread
// has writes in flight (wait_for only yields then), so no driver wait times out because of how
// that thread is scheduled.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "bouncer/hal.hpp"
#include "bouncer/regs.hpp"
#include "fake_dma.hpp"

namespace bouncer::testing {

struct FakeFrame {
  unsigned sq = 0;
  uint16_t wqe_idx = 0;
  uint32_t cm_id = 0;
  std::vector<uint8_t> pd;  // the private data as the engine read it
  bool fin = false;
  bool ird_ord_valid = false;
  uint32_t ird_ord = 0;
  bool from_push = false;
  uint32_t tcp_seq = 0;
  uint16_t wire_pd_len = 0;
  // passive-CM nodes
  regs::FinPolicy fin_policy = regs::FinPolicy::DEFAULT;  // in force (DEFAULT resolved)
  bool rst_after = false;                                 // ABORT: a RST right behind the reject
  bool auto_reject = false;      // sent by the listener's policy (PD from its template)
  bool retransmit = false;       // retransmit(): PD re-read from the PD-area slot
  std::vector<uint8_t> slot_pd;  // PD-area slot cm_id (REJ_PD_LEN bytes) when the reject went out
};

/// An incoming connection, as the fake's RX side would have assembled it.
struct FakeRequest {
  uint32_t loc_ip = 0x0A000001;
  uint16_t loc_port = 20049;
  uint32_t rem_ip = 0x0A000002;
  uint16_t rem_port = 50000;
  uint8_t rev = 2;
  uint8_t flags = 0x50;           // C | enhanced
  uint32_t ird_ord = 0x80104010;  // sent in the event when rev 2 enhanced
  std::vector<uint8_t> pd;        // request PD (the IRD/ORD word excluded)
  std::optional<uint32_t> cm_id;  // unset: the lowest free cm_id
  bool enhanced() const { return rev == 2 && (flags & 0x10) != 0; }
};

/// A listener-table entry as CREATE_LISTENER installed it.
struct FakeListener {
  uint32_t loc_ip = 0;
  uint16_t loc_port = 0;
  uint16_t backlog = 0;
  regs::FinPolicy fin_policy = regs::FinPolicy::DEFAULT;
  regs::AutoReject auto_reject = regs::AutoReject::OFF;
  bool tmpl_ird_ord_valid = false;
  uint32_t tmpl_ird_ord = 0;
  bool aeq_full_rst = false;  // stored only: the fake's AEQ never refuses a request
  uint64_t tmpl_addr = 0;     // where CREATE_LISTENER copied the template from
  uint16_t tmpl_len = 0;
  std::vector<std::byte> tmpl;  // the on-chip copy, taken at CREATE_LISTENER
  uint64_t loc_mac = 0;
  uint8_t ttl = 0, tos = 0;
  uint16_t max_ird = 0, max_ord = 0;
};

/// A cm_node of the passive CM.
struct FakeNode {
  FakeRequest req;
  unsigned listener = 0;
  regs::CmState state = regs::CmState::MPAREQ_RCVD;
  regs::FinPolicy fin_policy = regs::FinPolicy::DEFAULT;
  bool hosted = false;    // a CONNECT_REQUEST was written: terminal events are owed
  bool auto_rej = false;  // rejected by the listener's policy
  bool ending = false;    // its terminal event is queued: freed once written
  uint32_t iss = 0;
  uint16_t rej_pd_len = 0;
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
    unsigned num_sq = 4;       // CAPS.NUM_SQ (1..NUM_SQ_MAX)
    bool accept_push = true;   // false: every push is "dropped" (fetched from the ring)
    uint64_t wqe_cycles = 40;  // engine time per WQE
    unsigned num_listeners = regs::kNumListeners;  // fewer: BAD_LISTENER for the rest
    uint64_t cm_ready_cycles = 0;                  // STATUS.CM_READY from this cycle on
    /// The SQ engine hands its rejects to the CM engine, which waits while events are
    /// backed up behind a full AEQ: no SQ WQE is processed then.
    bool sq_waits_for_aeq = true;
    /// CTRL.RESET never happens (an engine or a DMA that never finishes): it stays pending.
    bool reset_hangs = false;
    /// What now_cycles() and CYCLE_LO/HI answer: the count (kRunning), a constant (kStuck: a
    /// hung core, a wrong bitstream), or the count plus 2^32 on every second read (kTorn: the
    /// two halves read by two threads across a CYCLE_LO wrap).
    enum class Cycles : uint8_t { kRunning, kStuck, kTorn } cycles = Cycles::kRunning;
    /// wait_cycles()/wait_for() throw std::runtime_error once the host clock passes this, and
    /// register reads and now_cycles() once a million of them came without a wait in between:
    /// a driver wait that never ends (or spins) fails the test instead of hanging it.
    std::chrono::nanoseconds host_time_limit = std::chrono::seconds(1);
    /// How device memory behaves (fake_dma.hpp; the header above).
    FakeMemory memory = FakeMemory::kInline;
    uint32_t dma_seed = 1;                        // the DMA thread's and the caches' randomness
    std::chrono::microseconds dma_max_delay{20};  // before a device write starts
  };
  static constexpr std::chrono::nanoseconds kCycle{4};  // host time per waited cycle (250 MHz)
  static constexpr uint64_t kStuckCycles = 0x0000'0001'2345'6789ull;  // Cycles::kStuck

  FakeHal();
  explicit FakeHal(Config cfg);
  ~FakeHal() override;

  // hal::Device
  uint32_t read32(uint32_t offset) override;
  void write32(uint32_t offset, uint32_t value) override;
  void write_block(uint32_t offset, std::span<const uint32_t> words) override;
  void write_push(uint32_t offset, std::span<const uint64_t, 8> qwords) override;
  Result<std::unique_ptr<hal::DmaBuffer>> alloc_dma(size_t bytes, size_t align) override;
  void wait_cycles(uint64_t cycles) override;
  uint64_t now_cycles() override;
  std::chrono::nanoseconds host_now() override { return host_; }
  void wait_for(std::chrono::nanoseconds d) override;
  const char* name() const override { return "fake"; }

  // ---- controls
  Config cfg;
  bool hold = false;          // engines do nothing (hung hardware)
  int fail_alloc_after = -1;  // >= 0: that many allocations succeed, then kNoMemory
  /// Device reads overlapping [first, second) fail (an AXI error response).
  std::vector<std::pair<uint64_t, uint64_t>> dma_read_errors;
  /// Completion and event writes overlapping [first, second) fail: the entry is lost, the
  /// producer index moves on and STATUS.DMA_WR_ERR is set (sticky until CTRL.RESET).
  std::vector<std::pair<uint64_t, uint64_t>> dma_write_errors;
  /// CQ_HEAD writes are not taken (the CQ fills up: STATUS.CQ_FULL, the SQ engine waits).
  bool freeze_cq_head = false;
  /// QERR as read; a cause in SQ n's field makes SQ n ignore its doorbells until its SQ_SIZE
  /// is written (which clears the field).
  uint32_t qerr = 0;
  /// Called with the offset of every register read, after it (a test can act at that moment).
  std::function<void(uint32_t)> on_read;
  /// For tests: let the engines do all they can now, and let what they wrote land (settle).
  /// The driver's waits (wait_cycles, wait_for) only step the engines, so with kThreaded /
  /// kNonCoherent their writes still land while the driver polls.
  void run();
  /// Writes a raw CQE (valid bit = current CQ polarity) at the CQ tail, as if the hardware
  /// had written it, e.g. a duplicate of an earlier one.
  void inject_cqe(std::span<const std::byte> cqe32);
  /// The image of the last CQE the engine wrote to the CQ.
  std::array<std::byte, 32> last_cqe() const { return last_cqe_; }
  /// kThreaded / kNonCoherent: waits until every device write posted so far has landed (a
  /// test that looks at memory, or polls once, right after run()). Nothing in the other mode.
  void settle();
  bool threaded() const { return cfg.memory != FakeMemory::kInline; }

  // ---- passive CM, scripted by the test (the CM engine works regardless of `hold`)
  /// SYN .. complete MPA request on a listener: allocates a cm_id and, unless the listener
  /// auto-rejects it, writes the PD into the PD area and then a CONNECT_REQUEST event.
  /// nullopt when no listener matches (RST), the backlog is full (SYN dropped) or the cm_id
  /// asked for is in use.
  std::optional<uint32_t> inject_connect_request(const FakeRequest& r);
  /// A malformed request: a node the host never sees, then MPA_ERROR (the cm_id is free once
  /// the event is written).
  std::optional<uint32_t> inject_mpa_error(const FakeRequest& r, regs::MpaError reason);
  /// A valid RST from the peer. Held request: RESET event, the node stays (PEER_RESET) until
  /// the host's reject. After the reject: terminal RESET. false if there is no such node.
  bool inject_peer_reset(uint32_t cm_id);
  /// Ends a rejected node with a terminal event (CLOSED, RTX_EXHAUSTED, TIMEOUT, RESET);
  /// auto-rejected nodes end silently. false unless the node was rejected and not ending.
  bool finish_node(uint32_t cm_id, regs::AeqEvent code);
  /// Retransmits a node's reject: the PD is re-read from the PD-area slot (REJ_PD_LEN).
  bool retransmit(uint32_t cm_id);
  /// Queues a raw event (VALID is stamped with the ring's polarity when written).
  void inject_aeqe(std::span<const std::byte> aeqe32);
  /// Writes an event image at the AEQ tail with the WRONG polarity, tail not advanced: what
  /// the host sees in a slot the hardware has not written on this lap.
  void write_stale_aeqe(std::span<const std::byte> aeqe32);
  uint32_t aeq_tail() const { return aeq_.tail; }
  uint32_t aeq_head() const { return aeq_.head; }
  size_t aeq_backlog() const { return aeq_pending_.size(); }
  std::array<uint32_t, 4> isn_key() const { return isn_key_; }
  uint64_t pd_base() const { return base(regs_, regs::reg::PD_BASE_LO); }

  std::array<std::optional<FakeListener>, regs::kNumListeners> listeners;
  std::map<uint32_t, FakeNode> nodes;     // cm_id -> node (CM_CONNS = nodes.size())
  std::map<uint32_t, uint32_t> cm_stats;  // STAT_* at 0x300.. by offset (tests may preset)
  std::vector<std::array<std::byte, 32>> events_written;  // every AEQE, as written

  // ---- observations
  std::vector<MmioWrite> writes;
  std::vector<std::array<uint32_t, 16>> push_images;  // one per write_block to a push page
  std::vector<uint32_t> push_bursts;  // offset of each write_push (then write_block records)
  std::vector<SyncRecord> syncs_to_device;
  std::vector<SyncRecord> syncs_from_device;
  std::vector<FakeFrame> frames;
  std::map<uint32_t, std::array<std::byte, 64>> contexts;  // stored by WRITE_CM_CONTEXT
  uint32_t reg(uint32_t offset) const;  // last value written to a register (0 if never)
  size_t live_buffers() const { return bufs_.size(); }
  /// Device memory (the device's copy when non-coherent), read or written at once; device
  /// writes still in flight to the range land first.
  bool dma_read(uint64_t addr, std::span<std::byte> out) const;
  bool dma_write(uint64_t addr, std::span<const std::byte> in);
  /// Last written value of a register among `writes`, if any.
  std::optional<uint32_t> last_write(uint32_t offset) const;
  uint32_t sq_ci(unsigned n = 0) const { return sqs_[n].ring.ci; }
  uint32_t sq_db_bad() const { return stat_db_bad_; }
  uint32_t cq_tail() const { return cq_.tail; }
  unsigned resets() const { return resets_; }  // CTRL.RESETs carried out

  class Buf;  // the DmaBuffer implementation
  void unregister(uint64_t addr);
  void record_sync(uint64_t addr, size_t len) { syncs_to_device.push_back({addr, len}); }
  void record_sync_from(uint64_t addr, size_t len) { syncs_from_device.push_back({addr, len}); }

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

  struct PendingEvent {
    std::array<std::byte, 32> img;
    std::optional<uint32_t> frees;  // cm_id freed when this (terminal) event is written
  };

  uint32_t read_reg(uint32_t offset);
  void step();  // the engines, once; writes land on the DMA thread's time
  void process_sq();
  void process_cqp();
  void process_listener_op(std::span<const std::byte> wqe, bool create, uint16_t& major,
                           uint16_t& minor);
  bool node_reject(uint32_t cm_id, std::span<const std::byte> wqe, bool from_push, unsigned sq,
                   uint32_t idx, uint16_t& major, uint16_t& minor, uint32_t& tcp_seq,
                   uint16_t& frame_len);
  std::array<std::byte, 64> node_context(const FakeNode& n) const;
  std::optional<unsigned> match_listener(uint32_t ip, uint16_t port) const;
  std::optional<uint32_t> alloc_cm_id(const std::optional<uint32_t>& want) const;
  std::array<std::byte, 32> event_image(uint32_t cm_id, const FakeNode& n,
                                        regs::AeqEvent code) const;
  void queue_event(const std::array<std::byte, 32>& img, std::optional<uint32_t> frees);
  void pump_aeq();
  void auto_reject(uint32_t cm_id, FakeNode& n, const FakeListener& l);
  void after_reject(uint32_t cm_id, FakeNode& n);
  void bump(uint32_t stat_offset) { ++cm_stats[stat_offset]; }
  void write_cqe(CqRingHw& cq, std::array<std::byte, 32>& img);
  // A write by the device's engines: at once (kInline) or through the DMA thread, in pieces of
  // at most 64 bytes, `valid_qword` (of the whole write) last. false: no buffer there.
  bool dev_write(uint64_t addr, std::span<const std::byte> in, int valid_qword = -1);
  // Where device memory at [addr, addr+len) is, or nullptr.
  std::byte* dev_ptr(uint64_t addr, size_t len) const;
  // The WQE at `addr` as the device sees it now (a doorbell's fetch).
  std::optional<std::array<std::byte, 64>> fetch_wqe(uint64_t addr) const;
  bool read_fails(uint64_t addr, size_t len) const;  // in dma_read_errors
  bool write_failed(uint64_t addr, size_t len);      // in dma_write_errors: sets DMA_WR_ERR
  void reset_state();                                // what CTRL.RESET forgets
  static uint64_t base(const std::map<uint32_t, uint32_t>& r, uint32_t lo);

  uint64_t now_ = 0;
  std::chrono::nanoseconds host_{0};
  uint64_t cycle_reads_ = 0;
  uint64_t reads_since_wait_ = 0;
  void count_read();
  uint32_t cycle_hi_latch_ = 0;
  bool dma_wr_err_ = false;
  bool sq_pending() const;
  void advance_host(uint64_t cycles);
  uint64_t next_addr_ = 0x1'2345'0000ull;  // above 4 GiB: the HI base registers matter
  int allocs_ = 0;
  std::map<uint64_t, Buf*> bufs_;
  std::map<uint32_t, uint32_t> regs_;
  /// One reject SQ as the hardware holds it.
  struct SqHw {
    WqRing ring;
    std::array<uint32_t, 16> push_page{};
    std::map<uint32_t, std::array<std::byte, 64>> pushed;  // wqe_idx -> image from the page
    std::map<uint32_t, uint64_t> db_cycle;                 // wqe_idx -> doorbell time
    std::map<uint32_t, std::optional<std::array<std::byte, 64>>> fetched;  // at the doorbell
  };
  bool process_one_sq_wqe(unsigned sq);

  std::array<SqHw, regs::kNumSqMax> sqs_;
  unsigned rr_last_ = regs::kNumSqMax - 1;  // round-robin: the SQ served last
  uint32_t stat_db_bad_ = 0;
  WqRing cqp_;
  std::map<uint32_t, std::optional<std::array<std::byte, 64>>> cqp_fetched_;  // at CQP_DB
  CqRingHw cq_, ccq_, aeq_;
  std::deque<PendingEvent> aeq_pending_;
  std::array<uint32_t, 4> isn_key_{};
  uint32_t next_iss_ = 0x10000000;
  uint64_t busy_until_ = 0;  // end of the previous WQE (for LATENCY)
  std::array<std::byte, 32> last_cqe_{};
  uint32_t stat_push_used_ = 0, stat_push_dropped_ = 0, stat_sq_wqes_ = 0, stat_cqp_wqes_ = 0;
  unsigned resets_ = 0;
  uint32_t buf_seed_ = 0;
  std::unique_ptr<FakeDmaEngine> dma_;  // kThreaded / kNonCoherent; last: stopped first
};

}  // namespace bouncer::testing
