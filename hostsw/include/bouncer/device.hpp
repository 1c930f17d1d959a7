// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// bouncer::Device: one opened device. Owns the rings (SQ/CQ for rejects, CQP/CCQ for
// control commands) and the driver-side DMA pools, and speaks the raw WQE/CQE formats.
// Mirrors irdma's sc layer: irdma_sc_cqp_post_sq / irdma_sc_poll_for_cqp_op_done for the
// control queue, irdma_uk_* post + doorbell/push for the SQ, irdma_uk_cq_poll_cmpl for CQEs.
#pragma once

#include <algorithm>
#include <array>
#include <bitset>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "bouncer/cm_context.hpp"
#include "bouncer/hal.hpp"
#include "bouncer/regs.hpp"
#include "bouncer/result.hpp"
#include "bouncer/rings.hpp"

namespace bouncer {

namespace testing {
struct RejectWqeFaults;
struct DeviceFaults;
}  // namespace testing

/// The passive CM's timers (TIMER_TICK .. TIME_WAIT). Every timeout is in ticks of
/// `tick_cycles` core cycles. The defaults are the hardware's reset values (irdma's timing at
/// 250 MHz); a simulation wants much shorter ones.
struct TimerConfig {
  uint32_t tick_cycles = 256;              // TIMER_TICK (>= 1)
  uint32_t rto_init = 976'563;             // first retransmission timeout (1 s), doubles per retry
  uint32_t rto_max = 11'718'750;           // cap of the doubling (12 s)
  uint8_t rtx_max = 8;                     // retransmissions before giving up (0..15)
  uint32_t mpa_timeout = 63'476'563;       // handshake ACK -> complete MPA request (65 s)
  uint32_t mpa_reasm_timeout = 1'953'125;  // first -> last segment of a split request (2 s)
  uint32_t fin_timeout = 58'593'750;       // FIN_WAIT2 limit (60 s)
  uint32_t time_wait = 97'656;             // TIME_WAIT (100 ms)

  bool operator==(const TimerConfig&) const = default;
};

/// What our SYN-ACKs and segments advertise (TCP_CFG, TCP_WND) and the RX destination filters
/// (CM_ROUTE, PORT_MAC, PORT_IP).
/// The defaults are the hardware's reset values.
struct TcpConfig {
  uint16_t mss = 1460;
  uint8_t wscale = 0;  // 0..14 (RFC 7323); sent only when the SYN had a window-scale option
  /// The receive window offered, in bytes (the SYN-ACK's window field; later segments carry
  /// it scaled, rounded up, when scaling is in effect). A request must fit: >= 532 is safe.
  uint16_t window = regs::kMpaReqMax;
  bool promisc = true;  // CM_ROUTE.PROMISC: accept frames for any destination MAC
  /// PORT_MAC_HI/LO: with promisc false only frames to this MAC are taken (the others are
  /// dropped and counted in STAT_RX_FILTERED). Must then be a unicast, non-zero address.
  MacAddr port_mac{};
  /// PORT_IP: non-zero takes only TCP segments to this IPv4 address (host order, e.g.
  /// 0x0A000001 = 10.0.0.1); segments to other addresses are dropped and counted in
  /// STAT_RX_FILTERED. 0: any address (a wildcard listener then answers for every address).
  uint32_t port_ip = 0;

  bool operator==(const TcpConfig&) const = default;
};

struct DeviceConfig {
  /// Reject SQs the Device programs and uses: 1 .. CAPS.NUM_SQ (else open() fails with
  /// kInvalidArgument). Each has sq_entries slots and its own PD buffers; they share the CQ.
  unsigned num_sq = 1;
  uint32_t sq_entries = 64;  // powers of two in [4, 32768], per SQ; cq >= sq, ccq >= cqp
  uint32_t cq_entries = 64;
  uint32_t cqp_entries = 16;
  uint32_t ccq_entries = 16;
  // Every driver wait is measured on the host's clock (hal::Device::host_now), never on the
  // core's cycle counter: a hung or reset core cannot stretch or shorten it.
  /// Host time between two looks at a ring while a wait polls (hal::Device::wait_for). The
  /// default is 32 core cycles at 250 MHz. At least 1 ns.
  std::chrono::nanoseconds poll_interval{128};
  /// Bound of each control command (CQP post to CCQE), and of reset_sq()/reset_cqp().
  std::chrono::nanoseconds cqp_timeout = std::chrono::milliseconds(4);
  /// open() and close(): how long the core may take to carry out CTRL.RESET (it waits for the
  /// engines and DMA to finish, then sweeps its tables: 2**CTX_LOG2 cycles).
  std::chrono::nanoseconds reset_timeout = std::chrono::milliseconds(8);
  // ---- passive CM
  uint32_t aeq_entries = 256;  // event ring, power of two in [4, 32768]
  /// AEQ_HEAD is written after this many consumed events, and whenever the AEQ is found
  /// empty (before the caller waits). 0: aeq_entries / 4.
  uint32_t aeq_head_batch = 0;
  /// ISN_KEY, written before CTRL.ENABLE. Unset: 128 bits from std::random_device (what Linux
  /// does with net_secret); set it for reproducible runs.
  std::optional<std::array<uint32_t, 4>> isn_key;
  /// HASH_KEY, the connection table's bucket-hash key, written before the CTRL.RESET that
  /// open() always issues (the table takes it while it sweeps itself empty). Unset: 32 bits
  /// from std::random_device, so that nobody can aim SYNs at one bucket; set it for
  /// reproducible runs. The core's reset value, 0x6A09E667, is public.
  std::optional<uint32_t> hash_key;
  std::optional<TimerConfig> timers;  // written before enabling; unset: leave reset values
  std::optional<TcpConfig> tcp;       // idem
  /// DMA_TIMEOUT, the DMA read watchdog in core cycles (written before enabling): a read that
  /// makes no progress this long completes its WQE with DMA/DMA_WQE, DMA_PD or DMA_CTX and
  /// counts STAT_DMA_TIMEOUT. 0 turns it off. Default: the reset value, 1 ms at 250 MHz. A
  /// register of the core, counted by the core's clock (not a wait of the driver).
  uint32_t dma_timeout_cycles = 250'000;
};

/// What VERSION and CAPS say.
struct Caps {
  uint8_t version_major = 0;
  uint8_t version_minor = 0;
  uint8_t version_patch = 0;
  unsigned data_bytes = 0;  // TX stream width in bytes
  unsigned ctx_log2 = 0;
  uint32_t ctx_depth = 0;  // 1 << ctx_log2: valid cm_ids are [0, ctx_depth)
  unsigned num_sq = 0;     // reject SQs of the build (CAPS.NUM_SQ)
  bool push = false;       // push page present
  bool inline_pd = false;  // inline private data supported
  unsigned num_listeners = regs::kNumListeners;
  bool probes = false;  // latency probes present (CAPS.PROBES)
};

/// One latency-probe record (PROBE_DATA_LO / PROBE_DATA_HI; stages and tags: regs::ProbeStage,
/// docs/register-map.md, docs/bench-report.md).
struct ProbeRecord {
  uint32_t cycle = 0;  // low 32 bits of the cycle counter (CYCLE_LO numbering) at the event's edge
  regs::ProbeStage stage = regs::ProbeStage::NONE;
  uint32_t tag = 0;  // 24 bits, per stage
};

/// PROBE_STATUS and PROBE_LOST.
struct ProbeStatus {
  unsigned count = 0;     // records waiting
  bool overflow = false;  // sticky: an event was lost since the last clear
  uint32_t lost = 0;      // events lost since the last clear
};

/// The full cycle number of a 32-bit probe stamp, given a cycle `now` at or after the event
/// and less than 2^32 cycles after it.
constexpr uint64_t probe_cycle64(uint32_t stamp, uint64_t now) {
  return now - static_cast<uint32_t>(static_cast<uint32_t>(now) - stamp);
}

/// One frame of the on-card capture ring (CAP_*; docs/register-map.md).
struct CapturedFrame {
  enum class Dir : uint8_t { kRx, kTx };
  Dir dir = Dir::kRx;
  uint64_t cycle = 0;          // CYCLE at the edge that transferred the frame's first beat
  uint64_t end_cycle = 0;      // ... and its last beat
  uint32_t orig_len = 0;       // length on the wire (no FCS)
  std::vector<uint8_t> bytes;  // its first min(orig_len, snap) bytes
};

/// CAP_STATUS.
struct CaptureStatus {
  bool present = false;                 // built with the ring (CAPTURE_LOG2 != 0)
  unsigned rx_count = 0, tx_count = 0;  // frames held per direction
  unsigned slots = 0;                   // frames per direction (2**LOG2)
  unsigned snap = 0;                    // bytes kept per frame
};

/// The capture ring through plain register accesses on any HAL backend, without opening a
/// Device (an open resets the core's state; the ring survives it, but a tool that only reads
/// the ring should change nothing). kNotSupported when the build has no ring.
Result<CaptureStatus> capture_status(hal::Device& hal);
/// Freezes the ring, reads every frame held (both directions, merged in the order of their
/// first-beat stamps, then last-beat stamps, TX before RX on a tie: the co-simulation's own
/// capture order), then lets it capture again; `clear` empties it before that.
Result<std::vector<CapturedFrame>> read_capture(hal::Device& hal, bool clear = false);
/// Writes `frames` to a pcap file (bouncer::PcapFile: nanosecond stamps = cycle * 1000 /
/// clock_mhz, orig_len as the frame's length). Returns the number of records.
Result<size_t> write_capture_pcap(const std::string& path, std::span<const CapturedFrame> frames,
                                  double clock_mhz);

/// Bytes of driver-owned PD buffer per SQ slot (pd_slot_addr()).
inline constexpr size_t kPdSlotBytes = regs::kMpaPdMax;

/// One MPA_REJECT SQ WQE, before it is written. The PD is copied by post_reject() (inline or
/// into a PD buffer), so the caller's buffer may be reused on return (iw_cm_reject).
///
/// Where the PD goes: it is always copied into the cm_id's slot of the PD area (PD_BASE +
/// cm_id * 512; the hardware re-reads it there for retransmissions of the reject). PD_ADDR
/// points at that slot when `pd_area` is set (connections the hardware indicated with a
/// CONNECT_REQUEST), else at the SQ slot's own PD buffer (pd_slot_addr(wqe_idx), the
/// host-written-context path). PD of at most 32 bytes goes inline either way.
struct RejectWqe {
  uint32_t cm_id = 0;
  unsigned sq = 0;                // which SQ (< DeviceConfig::num_sq)
  std::span<const std::byte> pd;  // at most kPdSlotBytes
  bool push = false;              // also write the WQE to the SQ's push page, ring SQ_PUSH_DB
  bool allow_inline = true;       // inline when pd.size() <= 32 and CAPS.INLINE
  bool pd_area = false;           // PD_ADDR = the cm_id's PD-area slot (see above)
  /// FIN_POLICY of the WQE. DEFAULT: the listener's (or the context's).
  regs::FinPolicy fin_policy = regs::FinPolicy::DEFAULT;
  std::optional<uint32_t> ird_ord;  // ctrl_ird << 16 | ctrl_ord; sets IRD_ORD_VALID
  uint64_t wr_id = 0;
  // WQEs the hardware must refuse (raw field overrides) are posted through the test-only
  // bouncer/device_faults.hpp, not through this struct.
};

/// One SQ completion, decoded (regs cqe) plus what the driver knows about the WQE.
struct Completion {
  uint8_t sq = 0;        // the SQ the WQE was posted to (CQE SQ_IDX)
  uint16_t wqe_idx = 0;  // index within that SQ
  uint32_t cm_id = 0;
  uint64_t wr_id = 0;
  uint16_t major = 0;  // regs::CqMajor
  uint16_t minor = 0;  // regs::CqMinor
  bool error = false;
  bool pshdrop = false;         // push requested but the engine fetched the WQE from the ring
  uint8_t op = 0;               // regs::SqOp
  uint32_t latency_cycles = 0;  // doorbell/push to first TX byte (0 when nothing was sent)
  uint16_t frame_len = 0;
  uint32_t tcp_seq = 0;
  bool push = false;        // the driver posted this WQE in push mode
  bool unexpected = false;  // the CQE named an (sq, wqe_idx) with nothing outstanding

  bool ok() const { return !error && major == 0 && !unexpected; }
  /// "ok", "CTX/NO_CONTEXT (0x0200/0x0012)", or "unexpected CQE ...".
  std::string status() const;
};

/// One AEQE, decoded (regs aeqe). `event` is a regs::AeqEvent, `reason` a regs::MpaError.
struct Aeqe {
  uint32_t rem_ip = 0;
  uint32_t loc_ip = 0;
  uint16_t rem_port = 0;
  uint16_t loc_port = 0;
  uint32_t ird_ord = 0;    // CONNECT_REQUEST: the request's IRD/ORD word (rev 2 enhanced)
  uint32_t pd_offset = 0;  // CONNECT_REQUEST: request PD at PD-area offset (cm_id * 512)
  uint16_t pd_len = 0;     // CONNECT_REQUEST: request PD bytes (IRD/ORD word excluded)
  uint8_t rev = 0;
  uint8_t flags = 0;
  uint32_t cm_id = 0;
  uint8_t listener = 0;
  uint8_t event = 0;
  uint8_t reason = 0;

  bool operator==(const Aeqe&) const = default;
  /// Decodes a 32-byte image (the VALID bit is not looked at).
  static Aeqe unpack(std::span<const std::byte> image);
};

/// A listener as the CQP CREATE_LISTENER WQE carries it (regs cqp_listen_wqe). The PD
/// template is passed separately: Device hands it to the hardware, which copies it on chip.
struct ListenerConfig {
  unsigned index = 0;   // 0 .. kNumListeners - 1, chosen by the host
  uint32_t loc_ip = 0;  // 0: every local address
  uint16_t loc_port = 0;
  uint16_t backlog = 0;  // 0: no limit
  regs::FinPolicy fin_policy = regs::FinPolicy::SIW_SAFE;
  regs::AutoReject auto_reject = regs::AutoReject::OFF;
  std::optional<uint32_t> tmpl_ird_ord;  // IRD/ORD word of auto-rejects of rev-2 requests
  uint16_t max_ird = 0;                  // AUTO_REJECT IRD_ORD limits (14 bits)
  uint16_t max_ord = 0;
  MacAddr loc_mac{};
  uint8_t ttl = 64;  // 0 is sent as 64
  uint8_t tos = 0;
  /// A request that arrives while the AEQ has no room for its CONNECT_REQUEST and the events
  /// already owed: true, the hardware resets it; false, it auto-rejects it with the template.
  bool aeq_full_rst = false;
};

/// A connection's full hardware state as READ_CM_CONTEXT returns it: the context plus the
/// cm_node fields (cm_ctx STATE .. DEADLINE) that the passive CM keeps.
struct CmNodeStatus {
  CmContext ctx;
  regs::CmState state = regs::CmState::MPAREQ_RCVD;
  regs::FinPolicy fin_policy = regs::FinPolicy::DEFAULT;
  unsigned rtx_cnt = 0;
  unsigned listener = 0;
  unsigned rej_pd_len = 0;
  bool rej_ird_ord_valid = false;
  bool auto_rej = false;
  bool hosted = false;  // a CONNECT_REQUEST was written for it
  bool peer_fin = false;
  bool timer_on = false;
  bool rej_fin = false;
  bool ws_ok = false;  // the peer's SYN had a window-scale option
  uint32_t iss = 0;
  uint32_t deadline = 0;

  static CmNodeStatus unpack(std::span<const std::byte> image);
};

/// One statistics register, by its name in regs/bouncer.toml.
struct StatValue {
  const char* name;
  uint32_t offset;
  uint32_t value;
};

struct DeviceStats {
  uint64_t sq_posted = 0;
  uint64_t sq_pushed = 0;
  uint64_t sq_doorbells = 0;  // SQ_DB writes (post_rejects rings one per SQ per list)
  uint64_t sq_completed = 0;
  uint64_t sq_errors = 0;
  uint64_t push_dropped = 0;     // completions with PSHDROP
  uint64_t unexpected_cqes = 0;  // SQ CQEs for an (sq, wqe_idx) with nothing outstanding
  uint64_t cqp_ops = 0;
  uint64_t cqp_errors = 0;
  uint64_t unexpected_ccqes = 0;  // CCQEs that matched no outstanding control WQE
  uint64_t aeq_consumed = 0;      // AEQEs taken off the event ring
  uint64_t aeq_head_writes = 0;   // AEQ_HEAD register writes
  uint64_t sq_abandoned = 0;      // SQ WQEs given up by Device::abandon()
  /// Completions of abandoned WQEs that arrived (or were flushed) afterwards: their slots went
  /// back to the ring at once, the completions to poll_abandoned().
  uint64_t abandoned_completed = 0;
  uint64_t abandoned_dropped = 0;  // ... of which poll_abandoned() had no room to keep
};

/// Names of the completion codes ("CTX", "NO_CONTEXT"; "?" when unknown).
const char* cq_major_name(uint16_t major);
const char* cq_minor_name(uint16_t minor);
/// "CTX/NO_CONTEXT (0x0200/0x0012)".
std::string cq_status_name(uint16_t major, uint16_t minor);

/// Threads: every member that touches the hardware or the rings (posting, polling the CQ,
/// CCQ and AEQ, the waits, control commands, register reads) takes one device-wide recursive
/// mutex, so any number of threads may post rejects, wait for their own completions
/// (wait_completion_for) and poll events concurrently on one Device. A wait holds the mutex
/// while it polls (it is bounded by its timeout), so other threads queue behind it. The
/// accessors returning references (stats(), sq(), cq(), aeq(), config()) and the destructor
/// are not synchronised: read them when no other thread is using the Device. Completions are
/// per WQE, named by (sq, wqe_idx): a thread should wait on the WQE it posted (wait_completion()
/// hands out whichever completion comes next, whoever posted it). Threads may post to the same
/// SQ or to different SQs; the SQs share the mutex (one doorbell register, one CQ).
class Device {
 public:
  /// Checks ID and VERSION, reads CAPS, then takes the device over whatever state a previous
  /// owner left it in (a crashed process may have left it enabled, with listeners, connections,
  /// templates and rings pointing at memory it no longer owns): CTRL = RESET with ENABLE 0,
  /// and a wait (bounded by reset_timeout) until the core has carried the reset out,
  /// which it does only once nothing is in flight. Then it allocates and programs the rings
  /// (num_sq SQs, CQ, CQP, CCQ), the event ring (AEQ) and the PD area (2**CTX_LOG2 slots of
  /// 512 bytes), zeroes CQ_HEAD/CCQ_HEAD/AEQ_HEAD, writes ISN_KEY (and the timer and TCP
  /// settings when given) and enables (CTRL.ENABLE = 1) last. It does not wait for
  /// STATUS.CM_READY (the engines do; see wait_cm_ready). `hal` must outlive the Device.
  /// kTimeout when the reset cannot happen (an engine or a DMA never finishes; the message
  /// names the STATUS bits): reprogram or reset the card (docs/operations.md).
  /// kInvalidArgument for a bad configuration (ring sizes, num_sq, a negative timeout).
  static Result<std::unique_ptr<Device>> open(hal::Device& hal, DeviceConfig cfg = {});
  /// Stops the device so that it provably no longer touches this Device's host memory:
  /// CTRL = RESET (every connection, listener and queue forgotten; see open()), and a wait for
  /// the reset. Only then is the memory freed (by the destructor). If the reset does not
  /// happen in time the memory is never freed (it leaks, which is safe; it is not handed
  /// back while the device might still write to it or send it) and the error says why.
  /// Idempotent; the Device is unusable afterwards.
  Result<void> close();
  /// close(), reporting a failure on stderr.
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  const Caps& caps() const { return caps_; }
  const DeviceConfig& config() const { return cfg_; }
  const DeviceStats& stats() const { return stats_; }
  hal::Device& hal() { return hal_; }

  // ---- control queue (irdma CQP). Synchronous: post, CQP_DB, poll the CCQ.
  Result<void> cqp_write_context(uint32_t cm_id, const CmContext& ctx);
  Result<CmContext> cqp_read_context(uint32_t cm_id);
  Result<void> cqp_nop();
  /// READ_CM_CONTEXT, decoded with the cm_node fields.
  Result<CmNodeStatus> cqp_read_node(uint32_t cm_id);
  /// CREATE_LISTENER. The template is copied into a DMA buffer the Device keeps while the
  /// listener exists (and while connections it accepted may still re-read it: a replaced or
  /// destroyed listener's buffer is freed once CM_CONNS has been seen at 0, or at close).
  /// kInvalidArgument (nothing posted): index >= kNumListeners, template > 512 bytes,
  /// max_ird/max_ord above 14 bits. Hardware refusals come back as kHardware
  /// (CTX/BAD_LISTENER ...).
  Result<void> cqp_create_listener(const ListenerConfig& cfg,
                                   std::span<const std::byte> template_pd = {});
  /// DESTROY_LISTENER. The hardware answers CTX/BAD_LISTENER for an unused entry.
  Result<void> cqp_destroy_listener(unsigned index);
  /// Listener `index` was created by this Device and not destroyed since.
  bool listener_installed(unsigned index) const;

  // ---- passive CM: configuration and counters
  Result<void> set_timers(const TimerConfig& t);
  TimerConfig read_timers();
  Result<void> set_tcp(const TcpConfig& t);
  TcpConfig read_tcp();
  /// CM_CONNS: cm_nodes in use.
  uint32_t cm_conns();
  /// STATUS.CM_READY: the connection table and timer RAM finished their reset sweep.
  bool cm_ready();
  /// Polls STATUS.CM_READY; kTimeout after `timeout` of host time (the message names the
  /// STATUS and QERR bits set).
  Result<void> wait_cm_ready(std::chrono::nanoseconds timeout);
  /// Every STAT_* register (0x200.. and 0x300..), in address order, by name.
  std::vector<StatValue> read_stats();
  /// The names and offsets read_stats() reads.
  static std::span<const StatValue> stat_registers();

  // ---- passive CM: events (AEQ) and the PD area
  /// The next AEQE if its VALID bit has the ring's polarity (else nullopt: nothing is
  /// consumed). Consumes it; AEQ_HEAD is written every aeq_head_batch events.
  std::optional<Aeqe> poll_aeq();
  /// Writes AEQ_HEAD if events were consumed since the last write. Call before waiting.
  void flush_aeq_head();
  /// Events consumed but not yet reported through AEQ_HEAD.
  uint32_t aeq_unflushed() const { return aeq_unflushed_; }
  uint32_t aeq_head_batch() const { return aeq_batch_; }
  const queues::CqRing& aeq() const { return aeq_; }
  /// PD area: 2**CTX_LOG2 slots of regs::kPdSlotBytes.
  uint64_t pd_area_base() const;
  uint64_t pd_area_addr(uint32_t cm_id) const;
  size_t pd_area_bytes() const;
  /// Copies `len` bytes at `offset` of the PD area out (after sync_from_device). Empty if the
  /// range is outside the area.
  std::vector<std::byte> read_pd_area(uint64_t offset, size_t len);
  /// The CPU view of cm_id's slot (tests, diagnostics).
  std::span<const std::byte> pd_area_slot(uint32_t cm_id) const;

  // ---- SQ
  /// Writes one MPA_REJECT WQE to SQ wqe.sq and rings the doorbell (or the push page + push
  /// doorbell). Returns the wqe_idx within that SQ; exactly one completion follows, with
  /// Completion::sq = wqe.sq. kRingFull when that SQ has no free slot (the others may);
  /// kInvalidArgument when wqe.sq >= num_sq.
  Result<uint16_t> post_reject(const RejectWqe& wqe);
  /// Several MPA_REJECT WQEs with one doorbell per SQ (irdma: post_send with the doorbell
  /// left to the end of the list). Every WQE is checked first, as post_reject() checks it:
  /// kInvalidArgument names the first bad one and nothing is posted; push is refused (a push
  /// WQE carries its own doorbell). Then the WQEs are written in order until one does not
  /// fit its SQ, and each SQ that got WQEs gets one SQ_DB with its new producer index.
  /// Returns the wqe_idx of each WQE posted: all of `wqes`, or a prefix when an SQ filled
  /// (the rest are not posted; post them again after reaping). Each posted WQE gets exactly
  /// one completion. kRingFull when not even the first fits.
  Result<std::vector<uint16_t>> post_rejects(std::span<const RejectWqe> wqes);
  /// An SQ NOP (completes with success, sends nothing) on SQ `sq`.
  Result<uint16_t> post_nop(uint64_t wr_id = 0, bool push = false, unsigned sq = 0);
  /// The next completion, or nullopt. Consumes the CQE and writes CQ_HEAD.
  std::optional<Completion> poll_cq();
  /// poll_cq() until something arrives; kTimeout after `timeout` of host time.
  Result<Completion> wait_completion(std::chrono::nanoseconds timeout);
  /// Waits for the completion of one WQE (SQ `sq`, wqe_idx); completions of other WQEs seen
  /// meanwhile are kept and handed out by later poll_cq()/wait_completion() calls, in order.
  /// kTimeout after `timeout` of host time (completion_timeout()): the WQE stays posted and
  /// its slot reserved, so wait again, collect it with poll_cq(), or give it up with
  /// abandon(). kQueueError when the SQ is in queue error (reset_sq()).
  Result<Completion> wait_completion_for(unsigned sq, uint16_t wqe_idx,
                                         std::chrono::nanoseconds timeout);
  /// SQ 0.
  Result<Completion> wait_completion_for(uint16_t wqe_idx, std::chrono::nanoseconds timeout) {
    return wait_completion_for(0u, wqe_idx, timeout);
  }
  /// One look for the completion of (sq, wqe_idx) (nullopt: not yet), keeping the others as
  /// wait_completion_for() does. kInvalidArgument if nothing is outstanding there.
  Result<std::optional<Completion>> poll_completion_for(unsigned sq, uint16_t wqe_idx);
  Result<std::optional<Completion>> poll_completion_for(uint16_t wqe_idx) {
    return poll_completion_for(0u, wqe_idx);
  }
  /// The error wait_completion_for() returns when `timeout` has passed: kQueueError when the
  /// SQ is in queue error, else kTimeout naming what the device shows (the SQ's CI and PI and
  /// whether the engine is done with the WQE, the CQ indices, the STATUS and QERR bits set
  /// and what each means for this wait). wait_completion_for() adds what the caller can do.
  Error completion_timeout(unsigned sq, uint16_t wqe_idx, std::chrono::nanoseconds timeout);
  Error completion_timeout(uint16_t wqe_idx, std::chrono::nanoseconds timeout) {
    return completion_timeout(0u, wqe_idx, timeout);
  }
  /// Gives up waiting for the completion of (sq, wqe_idx), e.g. after a timed-out synchronous
  /// wait: when it arrives (or reset_sq() flushes it), its slot goes back to the ring at
  /// once and the completion goes to poll_abandoned() instead of poll_cq() and the waits. A
  /// completion already reaped and not yet handed out is moved there now. kInvalidArgument
  /// when nothing is outstanding there.
  Result<void> abandon(unsigned sq, uint16_t wqe_idx);
  /// The next completion of an abandoned WQE, oldest first (at most num_sq * sq_entries are
  /// kept; older ones are dropped and counted in DeviceStats::abandoned_dropped).
  std::optional<Completion> poll_abandoned();
  /// What the device shows, for error messages: "STATUS 0x0C4: CQ_FULL (...), ...; QERR 0" with
  /// what each bit means, CTRL.ENABLE when it is 0, or that reads return all ones (no device
  /// answering). Three register reads.
  std::string state_text();
  /// SQ WQEs posted whose completion has not been polled yet, all SQs / one SQ.
  uint32_t sq_outstanding() const { return sq_outstanding_; }
  uint32_t sq_outstanding(unsigned sq) const;
  /// SQs in use (DeviceConfig::num_sq).
  unsigned num_sq() const { return static_cast<unsigned>(sqs_.size()); }

  // ---- queue errors (QERR; irdma's queue-error state). The driver itself never rings a bad
  // doorbell; a ring gets there only through raw register writes or memory corruption.
  // Each SQ has its own queue-error state: the others keep working.
  struct QueueError {
    std::array<uint8_t, regs::kNumSqMax> sq{};  // regs::QerrCause of SQ n (QERR.SQn)
    uint8_t cqp = 0;                            // regs::QerrCause (QERR.CQP)
    bool any() const {
      return cqp != 0 || std::any_of(sq.begin(), sq.end(), [](uint8_t c) { return c != 0; });
    }
  };
  /// Reads QERR (all ones, no device answering, reads as no error).
  QueueError queue_error();
  /// Resets SQ `sq` after a queue error (or at any time). First it waits until the hardware
  /// is done with every WQE of that SQ it accepted: its SQ_CI has reached its SQ_PI (the
  /// engine moves CI past a WQE only once the WQE's CQE is written, and a queue error only
  /// stops new doorbells, so the WQEs accepted before it still run). Meanwhile it keeps
  /// reaping the CQ (so a full CQ cannot stop the engine) and the other SQs keep working;
  /// kTimeout after cqp_timeout, naming what the device shows (an engine that waits for the
  /// AEQ or a DMA), with the SQ not reset. Then it reaps the CQEs written, writes that SQ's
  /// SQ_SIZE (the hardware takes it back to index 0, polarity 1, and clears QERR.SQn; the
  /// other SQs are not touched), zeroes the ring, and completes every WQE still outstanding
  /// on it with DRV/FLUSHED (Completion::sq = sq), handed out by poll_cq() and the waits like
  /// any completion: the WQEs the hardware never accepted (posted while the SQ was in queue
  /// error), and any whose CQE write was lost (STATUS.DMA_WR_ERR). Returns how many were
  /// flushed. kInvalidArgument when sq >= num_sq.
  Result<uint32_t> reset_sq(unsigned sq = 0);
  /// The same for the CQP: clears QERR.CQP, zeroes the ring. Commands are synchronous, so
  /// nothing is outstanding to flush.
  Result<void> reset_cqp();

  // ---- introspection (tests, diagnostics)
  const queues::SqRing& sq(unsigned n = 0) const { return sqs_.at(n).ring; }
  const queues::CqRing& cq() const { return cq_; }
  const queues::SqRing& cqp() const { return cqp_; }
  const queues::CqRing& ccq() const { return ccq_; }
  /// Device address of the PD buffer of slot wqe_idx of SQ `sq`.
  uint64_t pd_slot_addr(uint16_t wqe_idx, unsigned sq = 0) const;

  // ---- for the connection manager (hostsw/cm), whose waits poll from outside the Device
  /// hal().host_now() and hal().wait_for(d) under the device lock: the HAL is used by one
  /// thread at a time (the fake HAL runs its engines inside wait_for), and the lock is free
  /// between two pauses, so a waiter never keeps other threads off the rings while it sleeps.
  std::chrono::nanoseconds host_now();
  void pause(std::chrono::nanoseconds d);
  /// The oldest completion, kept or new, that `mine` claims (poll_completion_for's rule for
  /// the others: they stay kept for their own callers, in order). `mine` runs under the device
  /// lock and must not call back into the Device. It also sees CQEs that matched no
  /// outstanding WQE (Completion::unexpected).
  std::optional<Completion> poll_cq_if(const std::function<bool(const Completion&)>& mine);
  /// Listener entries created through this Device and not destroyed.
  unsigned listeners_installed();

  // ---- latency probes (CAPS.PROBES; Errc::kState when this build has none). Plain register
  // accesses, so they work the same over every HAL backend (co-simulation, XRT).
  /// Empties the capture FIFO, clears OVERFLOW/LOST and starts capturing (PROBE_CTRL).
  Result<void> probes_start();
  /// Stops capturing; the records already captured stay readable.
  Result<void> probes_stop();
  Result<ProbeStatus> probe_status();
  /// Pops the records waiting, oldest first, at most `max` (two register reads each).
  Result<std::vector<ProbeRecord>> read_probes(size_t max = 1u << 20);

  // ---- on-card capture ring (CAP_*): bouncer::read_capture under this Device's lock.
  Result<CaptureStatus> capture_status();
  Result<std::vector<CapturedFrame>> read_capture(bool clear = false);

 private:
  /// kQueueError naming SQ `sq` and its QERR.SQn cause, or nullopt (one register read).
  std::optional<Error> sq_queue_error(unsigned sq);
  /// The same for the first SQ in use that is in queue error.
  std::optional<Error> any_sq_queue_error();
  // An SQ slot is reserved from post until its completion has been handed to a caller: a
  // completion reaped by one thread and stashed for another keeps its wqe_idx (and its PD
  // pool buffer) until that thread collects it, so no later WQE can take the same index.
  // An abandoned slot is released as soon as its completion is reaped or flushed.
  struct SqSlot {
    bool busy = false;       // reserved (posted, or completed but not handed out yet)
    bool reaped = false;     // its CQE has been reaped (it waits in stash_ or is being returned)
    bool abandoned = false;  // abandon(): its completion goes to abandoned_
    bool push = false;
    uint64_t wr_id = 0;
    uint32_t cm_id = 0;
  };
  struct CqpSlot {
    bool busy = false;
    uint64_t scratch = 0;
    uint8_t op = 0;
  };
  struct CqpDone {
    uint16_t major = 0, minor = 0;
  };

  struct Parts {
    std::vector<queues::SqRing> sqs;
    queues::CqRing cq;
    queues::SqRing cqp;
    queues::CqRing ccq;
    queues::CqRing aeq;
    std::unique_ptr<hal::DmaBuffer> pd_pool;
    std::unique_ptr<hal::DmaBuffer> ctx_pool;
    std::unique_ptr<hal::DmaBuffer> pd_area;
  };

  Device(hal::Device& hal, DeviceConfig cfg, Caps caps, Parts parts);

  /// One reject SQ: its ring, what the driver knows of each slot, its outstanding count.
  struct Sq {
    queues::SqRing ring;
    std::vector<SqSlot> slots;
    uint32_t outstanding = 0;
  };

  // Writes the WQE into its ring (and the push page); rings SQ_DB unless ring_doorbell is
  // false (post_rejects rings once per SQ after the list). A push always rings SQ_PUSH_DB.
  void publish_sq(unsigned sq, queues::WqeSlot slot, std::span<const std::byte> image, bool push,
                  uint64_t wr_id, uint32_t cm_id, bool ring_doorbell = true);
  // post_reject's argument checks (nothing written); mu_ held.
  Result<void> check_reject_wqe(const RejectWqe& w) const;
  // Builds the WQE of `w` (PD copied inline or into its buffer) and publishes it in `slot`.
  void write_reject(const RejectWqe& w, queues::WqeSlot slot, const testing::RejectWqeFaults& x,
                    bool doorbell);
  std::optional<Completion> reap_one();
  friend struct testing::DeviceFaults;
  Result<uint16_t> post_reject_with(const RejectWqe& wqe, const testing::RejectWqeFaults* faults);
  Result<void> cqp_raw(uint8_t opcode, uint32_t cm_id, std::span<const std::byte> ctx_image);
  // The slot at SQ `sq`'s head if it is free (not held by an uncollected completion), else
  // kRingFull; kInvalidArgument when sq >= num_sq.
  Result<queues::WqeSlot> next_sq_slot(unsigned sq);
  // QERR, or 0 when the read returns all ones (no device answering).
  uint32_t read_qerr();
  // Releases the slot of a completion given to a caller and moves the SQ tail past it.
  Completion handed_out(const Completion& c);
  // Keeps the completion of an abandoned slot for poll_abandoned() and releases the slot.
  void retire_abandoned(const Completion& c);
  // The kRingFull error of SQ `sq`: what holds the slot at its head.
  Error ring_full(unsigned sq);
  Result<uint16_t> cqp_post(uint8_t opcode, uint32_t cm_id, std::span<const std::byte> ctx_image);
  Result<uint16_t> cqp_submit(uint8_t opcode, std::span<std::byte> image);
  uint16_t cqp_write_and_ring(queues::WqeSlot slot, uint8_t opcode, std::span<std::byte> image);
  Result<CqpDone> cqp_poll_for_done(uint16_t wqe_idx, uint8_t opcode, uint32_t cm_id);
  Result<void> cqp_exec(uint8_t opcode, uint32_t cm_id, std::span<const std::byte> ctx_in,
                        std::span<std::byte> ctx_out);
  Result<void> cqp_finish(uint16_t wqe_idx, uint8_t opcode, uint32_t id);

  hal::Device& hal_;
  DeviceConfig cfg_;
  Caps caps_;
  DeviceStats stats_;
  std::vector<Sq> sqs_;
  queues::CqRing cq_;
  queues::SqRing cqp_;
  queues::CqRing ccq_;
  std::unique_ptr<hal::DmaBuffer> pd_pool_;   // num_sq * sq_entries * kPdSlotBytes
  std::unique_ptr<hal::DmaBuffer> ctx_pool_;  // cqp_entries * kCmCtxBytes
  queues::CqRing aeq_;
  std::unique_ptr<hal::DmaBuffer> pd_area_;  // ctx_depth * regs::kPdSlotBytes
  uint32_t aeq_batch_ = 1;
  uint32_t aeq_unflushed_ = 0;
  std::bitset<regs::kNumListeners> installed_;
  // templates of CREATE_LISTENER commands that timed out: the core may still read them
  std::vector<std::unique_ptr<hal::DmaBuffer>> retired_tmpl_;
  bool closed_ = false;  // close() ran: the core was reset (or the memory abandoned)
  std::vector<CqpSlot> cqp_slots_;
  std::deque<Completion> stash_;      // reaped but not handed out yet
  std::deque<Completion> abandoned_;  // completions of abandoned WQEs (poll_abandoned)
  uint32_t sq_outstanding_ = 0;
  uint64_t next_scratch_ = 1;
  mutable std::recursive_mutex mu_;  // see the class comment
};

}  // namespace bouncer
