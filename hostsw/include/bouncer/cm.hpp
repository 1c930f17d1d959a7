// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// The connection-manager API, mirroring iw_cm: listeners and CONNECT_REQUEST events in, MPA
// rejects out. Two ways to get a connection to reject:
//  - passive CM (the hardware's): listen(), then poll_event()/wait_event() hand out
//    ConnectRequest events; reject(cm_id, ...) answers one;
//  - host-written contexts (irdma's software CM): write_context(cm_id, ...) then reject.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "bouncer/cm_context.hpp"
#include "bouncer/device.hpp"
#include "bouncer/result.hpp"

namespace bouncer {

struct RejectOptions {
  /// Which reject SQ (< DeviceConfig::num_sq): threads posting to different SQs do not
  /// contend for ring slots. The completion names it (Completion::sq).
  unsigned sq = 0;
  bool push = false;         // post through the push page (needs CAPS.PUSH)
  bool allow_inline = true;  // PD of at most 32 bytes goes inline in the WQE
  /// What follows the reject on the wire. DEFAULT: the listener's policy (for a
  /// host-written context: the context's, which the hardware reads as SIW_SAFE).
  regs::FinPolicy fin_policy = regs::FinPolicy::DEFAULT;
  /// Deprecated alias of fin_policy = IRDMA (FIN in the reject segment, as irdma does; a siw
  /// initiator then loses the PD). Setting it together with SIW_SAFE or ABORT is an error.
  bool fin = false;
  /// Reply IRD/ORD word (ctrl_ird << 16 | ctrl_ord) instead of the hardware default
  /// (0xBFFF7FFF: P2P, Read RTR, "no IRD/ORD"). It must pass check_reply_ird_ord().
  std::optional<uint32_t> ird_ord;
  /// Send a PD_Length above WIRE_PD_SAFE_MAX (255), up to MPA_PD_MAX (512). Linux
  /// initiators do not take it intact: siw fails a PD_Length over 256 (a 6.1 kernel oopsed
  /// on that path), cxgb4 fails over 256, irdma keeps the length in a u8 (256 delivers
  /// nothing, more wraps). docs/reject-frame.md.
  bool unsafe_wire_pd = false;
  uint64_t wr_id = 0;
  /// reject(): how long to wait for the completion, in host time (as librdmacm's waits).
  std::chrono::nanoseconds timeout = std::chrono::milliseconds(8);
};

/// Converts an error completion into an Error (kHardware, with the codes) naming cm_id.
Error completion_error(const Completion& c);

/// The private-data rule of an MPA reject. PD_Length on the wire is `pd_bytes`, plus 4 for the
/// IRD/ORD word when the request was rev 2 enhanced. Up to WIRE_PD_SAFE_MAX (255) siw, irdma
/// and cxgb4 initiators all deliver the private data intact (user PD <= 251 bytes enhanced,
/// <= 255 on rev 1); above it only with `unsafe_wire_pd`, and never above MPA_PD_MAX (512).
/// kInvalidArgument names the limit and the reason.
Result<void> check_reject_pd(size_t pd_bytes, bool enhanced, bool unsafe_wire_pd);

/// The IRD/ORD word of a rev 2 reply, against irdma's initiator, which negotiates it even for
/// a reject (irdma_negotiate_mpa_v2_ird_ord) and answers a word it refuses with a RST, handing
/// its application its own request's private data instead of ours. Needed: the peer-to-peer
/// bit (ctrl_ird bit 15) and a Write or Read RTR bit (ctrl_ord bit 15 or 14); unless either
/// 14-bit field is 0x3FFF ("no IRD/ORD"), IRD 0 must not come with the Read RTR bit, and the
/// ORD must not exceed the initiator's IRD (`request`'s ctrl_ird, when known). The hardware
/// checks the same rule (WQE/BAD_IRD_ORD; a listener template that fails it for a request is
/// replaced by the default word). kInvalidArgument names the rule.
Result<void> check_reply_ird_ord(uint32_t word, std::optional<uint32_t> request);

/// A listener, as listen() returned it: the hardware listener-table index.
struct ListenerId {
  uint8_t index = 0;
  bool operator==(const ListenerId&) const = default;
};

struct ListenOptions {
  uint16_t backlog = 0;  // requests waiting for the host at once; 0: no limit
  regs::FinPolicy fin_policy = regs::FinPolicy::SIW_SAFE;  // default of reject()s
  regs::AutoReject auto_reject = regs::AutoReject::OFF;
  /// Auto-reject PD: at most 251 bytes (check_reject_pd for an enhanced request), 508 with
  /// unsafe_wire_pd.
  std::vector<std::byte> template_pd;
  /// Auto-reject IRD/ORD word for rev-2 requests (check_reply_ird_ord without a request; for
  /// a request whose IRD it does not fit, the hardware sends its default word instead).
  std::optional<uint32_t> template_ird_ord;
  bool unsafe_wire_pd = false;        // template_pd over 251 bytes (see RejectOptions)
  uint16_t max_ird = 0, max_ord = 0;  // auto_reject IRD_ORD limits
  std::array<uint8_t, 6> local_mac{};
  uint8_t ttl = 64, tos = 0;
  std::optional<unsigned> index;  // listener-table entry; unset: the lowest free one
};

/// Addresses and ports of a connection, host-order integers (0x0A000001 = 10.0.0.1).
struct Tuple {
  uint32_t local_ip = 0;
  uint16_t local_port = 0;
  uint32_t remote_ip = 0;
  uint16_t remote_port = 0;
  bool operator==(const Tuple&) const = default;
};

/// An MPA request the application must decide on (IW_CM_EVENT_CONNECT_REQUEST). The cm_id
/// is held until reject(cm_id, ...); the private data was copied out of the PD area.
struct ConnectRequest {
  uint32_t cm_id = 0;
  ListenerId listener;
  Tuple tuple;
  uint8_t rev = 0;                  // MPA Rev of the request (1 or 2)
  uint8_t flags = 0;                // request flags (M 0x80, C 0x40, enhanced 0x10)
  std::optional<uint32_t> ird_ord;  // rev 2 enhanced: ctrl_ird << 16 | ctrl_ord
  std::vector<std::byte> private_data;
  /// RFC 6581: the reject then carries the IRD/ORD word, which counts toward PD_Length.
  bool enhanced() const { return rev == 2 && (flags & CmContext::kMpaFlagEnhanced) != 0; }
};

/// The peer reset a connection the application still holds. It must still be rejected:
/// that frees the cm_id (the reject completes with CTX/PEER_RESET, nothing is sent).
struct PeerReset {
  uint32_t cm_id = 0;
};

/// A malformed MPA request: the hardware sent a RST and freed the node; nothing to do.
struct MpaError {
  uint32_t cm_id = 0;
  ListenerId listener;
  Tuple tuple;
  regs::MpaError reason = regs::MpaError::NONE;
};

using Event = std::variant<ConnectRequest, PeerReset, MpaError>;

/// "CONNECT_REQUEST", "PEER_RESET", "MPA_ERROR".
const char* event_name(const Event& e);
uint32_t event_cm_id(const Event& e);

/// The driver's view of one cm_id of the passive CM.
enum class NodeState : uint8_t {
  kFree,           // nothing known (or ended)
  kHeld,           // CONNECT_REQUEST delivered; the application must reject it
  kHeldReset,      // ... and the peer reset it (PeerReset delivered)
  kRejecting,      // reject posted, completion not seen yet
  kAwaitTerminal,  // rejected; the node's terminal event is still to come
};
const char* node_state_name(NodeState s);

struct CmStats {
  uint64_t requests = 0;     // ConnectRequest events delivered
  uint64_t peer_resets = 0;  // PeerReset events delivered
  uint64_t mpa_errors = 0;   // MpaError events delivered
  uint64_t rejects = 0;      // rejects posted for held requests (not counting cleanups)
  uint64_t late_resets = 0;  // ... that completed with CTX/PEER_RESET
  /// Terminal events of rejected nodes, consumed by the driver (never delivered).
  struct {
    uint64_t closed = 0, reset = 0, rtx_exhausted = 0, timeout = 0, other = 0;
  } terminal;
  uint64_t cleanup_rejects = 0;    // internal ABORT rejects after a failed reject (see reject())
  uint64_t cleanup_failed = 0;     // ... that failed as well (the node may stay allocated)
  uint64_t unexpected_events = 0;  // events that fit no node's state (dropped)
  uint64_t missing_terminal = 0;   // a request on a cm_id whose previous node never ended
  uint64_t bad_pd = 0;             // requests whose PD_OFFSET/PD_LEN lie outside the PD area
  uint32_t nodes_held = 0;         // kHeld + kHeldReset
  uint32_t nodes_awaiting_terminal = 0;  // kRejecting + kAwaitTerminal (terminal not seen)
};

class Cm {
 public:
  /// `dev` must outlive the Cm.
  explicit Cm(Device& dev);
  /// Destroys the listeners this Cm created, then rejects (no PD, the listener's FIN policy)
  /// every request the application still holds, as iw_cm does when a listener or an id in
  /// CONN_RECV goes away; otherwise those nodes would hold their cm_ids until the core is
  /// reset. Best effort: errors are not reported.
  ~Cm();
  Cm(const Cm&) = delete;
  Cm& operator=(const Cm&) = delete;

  Device& device() { return dev_; }

  // ---- passive CM
  /// iw_create_listen: installs a hardware listener on local_ip:port (0 = any address; an
  /// exact-address listener wins over a wildcard one). Waits for STATUS.CM_READY first.
  /// kInvalidArgument (nothing posted): port 0, index >= 16, a template that fails
  /// check_reject_pd (as for an enhanced request) or check_reply_ird_ord, max_ird/max_ord
  /// over 14 bits, BACKLOG auto-reject without a backlog. kState: the index, or this address
  /// and port, is already in use.
  Result<ListenerId> listen(uint32_t local_ip, uint16_t port, const ListenOptions& opts = {});
  /// iw_destroy_listen: new SYNs get a RST; connections already accepted run to their end.
  /// kState (nothing posted) when `id` is not a listener of this Cm.
  Result<void> destroy_listener(ListenerId id);

  /// The next event for the application, if any. Events the application must not see (the
  /// terminal events of rejected nodes, see reject()) are consumed on the way. When the AEQ
  /// is empty, AEQ_HEAD is written back before returning nullopt.
  Result<std::optional<Event>> poll_event();
  /// poll_event() until an event arrives; Errc::kTimeout after `timeout` of host time (the
  /// message names the AEQ indices and the STATUS/QERR bits set).
  Result<Event> wait_event(std::chrono::nanoseconds timeout);

  /// Driver bookkeeping of the passive CM (tests, diagnostics).
  CmStats stats() const;
  NodeState node_state(uint32_t cm_id) const;
  /// Diagnostics only: called with every terminal event the driver consumes for a rejected
  /// node (they are still never delivered as events). Must not call back into the Cm.
  void set_terminal_observer(std::function<void(uint32_t cm_id, regs::AeqEvent code)> f) {
    terminal_observer_ = std::move(f);
  }

  // ---- host-written contexts
  /// Stores a context for cm_id (CQP WRITE_CM_CONTEXT). Also resets the driver's view of the
  /// connection's state, so a connection can be rejected again after a rewrite. kState if
  /// the cm_id belongs to a connection of the passive CM.
  Result<void> write_context(uint32_t cm_id, const CmContext& ctx);
  /// Reads the hardware's copy (CQP READ_CM_CONTEXT), including SND_NXT/IP_ID/REJECTED.
  Result<CmContext> read_context(uint32_t cm_id);

  // ---- reject
  /// iw_cm_reject: validates, posts, waits for the completion. The PD is copied before the
  /// call returns. Error completions come back as Errc::kHardware with the codes set.
  /// Validation (Errc::kInvalidArgument, nothing posted, the connection is still held):
  ///  - cm_id < CAPS connection-table depth;
  ///  - check_reject_pd(): PD_Length on the wire (pd.size(), + 4 when the request is rev 2
  ///    enhanced) <= 255, or <= 512 (MPA_PD_MAX) with opts.unsafe_wire_pd; the hardware
  ///    checks 512 again (WQE/PD_TOO_LONG);
  ///  - opts.ird_ord, on an enhanced connection: check_reply_ird_ord() against the request's
  ///    word (the hardware checks it again: WQE/BAD_IRD_ORD);
  ///  - opts.push only when CAPS.PUSH; opts.fin only with fin_policy DEFAULT or IRDMA.
  /// Errc::kState (nothing posted): the application does not hold cm_id (never indicated,
  /// already rejected, or a node of the passive CM this Cm did not indicate); for a
  /// host-written context: no valid context, or already rejected (iw_cm returns -EINVAL).
  ///
  /// For a ConnectRequest's cm_id (iw_cm's contract): the PD goes into the cm_id's PD-area
  /// slot (the hardware re-reads it for retransmissions); once reject() returns, success or
  /// error (other than the validation errors above), the cm_id delivers no further events,
  /// and the node's terminal event (CLOSED, RESET, RTX_EXHAUSTED, TIMEOUT) is consumed by
  /// the driver. After a PeerReset the reject completes with CTX/PEER_RESET (an error:
  /// nothing was sent) and frees the cm_id. If the hardware refused the WQE itself (WQE/*,
  /// DMA/*), the node would stay allocated: the driver then rejects it once more with no PD
  /// and fin_policy ABORT (reject + RST, what irdma's irdma_send_reset does) and still
  /// returns the first error.
  ///
  /// When the completion does not come within opts.timeout (kTimeout, or kQueueError when the
  /// SQ is in queue error), the reject stays posted but the caller no longer waits for it: the
  /// WQE is abandoned (Device::abandon), so its completion, if it comes (or reset_sq() flushes
  /// it), frees its slot at once and is consumed by the driver (the cm_id's bookkeeping
  /// follows it, as above; poll() never hands it out). A synchronous caller that never polls
  /// therefore cannot wedge the SQ with late completions.
  Result<Completion> reject(uint32_t cm_id, std::span<const std::byte> pd, RejectOptions opts = {});

  /// Non-blocking reject for pipelined use: same validation, returns the wqe_idx within SQ
  /// opts.sq. Collect the completion with poll() or wait(). opts.timeout is not used.
  Result<uint16_t> post_reject(uint32_t cm_id, std::span<const std::byte> pd,
                               const RejectOptions& opts = {});
  /// Next SQ completion, if any (Device::poll_cq). Completions of the driver's internal
  /// cleanup rejects are not handed out.
  std::optional<Completion> poll();
  /// Waits for the completion of wqe_idx (others are kept for poll()). Like reject(), it
  /// keeps the AEQ drained meanwhile (the hardware's CM engine, which sends the reject, waits
  /// while the AEQ is full); events read then are handed out by poll_event() in order.
  /// kTimeout after `timeout` of host time: the WQE stays posted (wait again or poll()).
  Result<Completion> wait(unsigned sq, uint16_t wqe_idx, std::chrono::nanoseconds timeout);
  /// SQ 0.
  Result<Completion> wait(uint16_t wqe_idx, std::chrono::nanoseconds timeout) {
    return wait(0u, wqe_idx, timeout);
  }

 private:
  struct Node {
    NodeState state = NodeState::kFree;
    uint8_t rev = 0;
    uint8_t flags = 0;
    uint8_t listener = 0;
    std::optional<uint32_t> ird_ord;  // the request's IRD/ORD word (enhanced requests)
    uint32_t gen = 0;                 // bumped by every CONNECT_REQUEST on this cm_id
    bool reset_seen = false;          // the node's RESET event was consumed
    bool terminal_seen = false;       // a terminal event (or RESET) arrived while kRejecting
    bool cleanup_done = false;        // the internal ABORT reject was already tried
    bool enhanced() const { return rev == 2 && (flags & CmContext::kMpaFlagEnhanced) != 0; }
  };
  struct Inflight {
    uint32_t cm_id = 0;
    uint32_t gen = 0;
    bool internal = false;  // a cleanup reject: its completion is not handed out
  };
  struct Listener {
    uint32_t ip = 0;
    uint16_t port = 0;
  };

  Result<CmContext*> context_for(uint32_t cm_id);
  Result<uint16_t> post_context_reject(uint32_t cm_id, std::span<const std::byte> pd,
                                       const RejectOptions& opts);
  Result<uint16_t> post_node_reject(uint32_t cm_id, Node& n, std::span<const std::byte> pd,
                                    const RejectOptions& opts);
  Result<void> validate_reject(uint32_t cm_id, std::span<const std::byte> pd,
                               const RejectOptions& opts) const;
  std::optional<Event> on_aeqe(const Aeqe& e);
  void on_terminal(uint32_t cm_id, regs::AeqEvent code);
  /// Updates the node a completion belongs to; true when it is internal (not handed out).
  bool on_completion(const Completion& c);
  void cleanup(uint32_t cm_id, Node& n, unsigned sq);
  Result<Completion> wait_draining(unsigned sq, uint16_t wqe_idx, std::chrono::nanoseconds timeout);
  /// Settles the nodes of abandoned rejects whose completions arrived (Device::poll_abandoned).
  void collect_abandoned();
  static uint32_t wqe_key(unsigned sq, uint16_t wqe_idx) { return sq << 16 | wqe_idx; }
  void drain_aeq();
  void count_terminal(uint32_t cm_id, regs::AeqEvent code);
  Node* node(uint32_t cm_id);

  Device& dev_;
  std::unordered_map<uint32_t, CmContext> shadow_;     // driver's copy of what it wrote/read
  std::unordered_map<uint32_t, Node> nodes_;           // passive-CM cm_ids (absent: kFree)
  std::map<uint32_t, std::deque<Inflight>> inflight_;  // wqe_key -> node rejects in flight
  std::array<std::optional<Listener>, regs::kNumListeners> listeners_;
  std::deque<Event> ready_;  // events read off the AEQ while waiting for a completion
  std::function<void(uint32_t, regs::AeqEvent)> terminal_observer_;
  std::optional<std::pair<unsigned, uint16_t>> pending_cleanup_;  // (sq, wqe_idx) of the
                                                                  // cleanup just posted
  CmStats stats_;
};

}  // namespace bouncer
