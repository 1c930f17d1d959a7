// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// The connection-manager API of the passive side, mirroring iw_cm and librdmacm: listeners
// and CONNECT_REQUEST events in, MPA rejects out.
//
//  - listen() installs a hardware listener; its events go to an event channel (the Cm's
//    default one, or one made with create_channel()), each carrying the listener's context
//    pointer;
//  - poll_event()/wait_event() hand out ConnectRequest events; each names its connection by a
//    ConnHandle (cm_id + generation), so a handle kept too long can never name the next
//    connection on the same cm_id;
//  - reject(handle, ...) answers one and waits for the completion; post_reject() returns at
//    once and the completion arrives as a RejectComplete event; destroy(handle) is
//    iw_destroy_cm_id (a held request is rejected, nothing more is delivered);
//  - event_fd() is an eventfd readable while a channel holds events; start_poller() runs a
//    thread that keeps the channels filled (XRT delivers no interrupt).
//
// Threads: every member may be called from any thread. The usual pattern is librdmacm's: one
// thread takes events (wait_event), any number of threads reject. A completion belongs to the
// call that posted it: a reject() gets its own, a post_reject()'s arrives as an event, and
// the Cm never takes a completion it did not post. The waits for events and completions hold
// no Cm lock while they sleep; listen() and destroy_listener() hold it across their control-
// queue round trip (at most DeviceConfig::cqp_timeout), so other calls wait that long. One Cm
// per Device: a Cm settles every abandoned completion of the Device as its own.
//
// Host-written contexts (the diagnostic path) are in bouncer/cm_diag.hpp.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <thread>
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
  /// Also how long reject() retries a full SQ. post_reject() does not use it.
  std::chrono::nanoseconds timeout = std::chrono::milliseconds(8);
};

/// One reject of a list posted with one doorbell (ContextDiag::post_rejects).
struct RejectRequest {
  uint32_t cm_id = 0;
  std::span<const std::byte> pd;  // copied before the call returns
  RejectOptions opts;             // push must be false
};

/// Converts an error completion into an Error (kHardware, with the codes) naming cm_id.
Error completion_error(const Completion& c);

/// The private-data rule of an MPA reject. PD_Length on the wire is `pd_bytes`, plus 4 for the
/// IRD/ORD word when the request was rev 2 enhanced. Up to WIRE_PD_SAFE_MAX (255) siw, irdma
/// and cxgb4 initiators all deliver the private data intact (user PD <= 251 bytes enhanced,
/// <= 255 on rev 1); above it only with `unsafe_wire_pd`, and never above MPA_PD_MAX (512).
/// kInvalidArgument names the limit and the reason.
Result<void> check_reject_pd(size_t pd_bytes, bool enhanced, bool unsafe_wire_pd);

/// The checks of a reject's options that need no connection: check_reject_pd at the smaller
/// (enhanced) limit, push only with CAPS.PUSH, an SQ in use. kInvalidArgument, nothing posted.
/// Cm::reject and ContextDiag::reject use it.
Result<void> check_reject_options(Device& dev, std::span<const std::byte> pd,
                                  const RejectOptions& opts);
/// The WQE of a reject of cm_id with these options (the PD from the call, not the PD area).
RejectWqe reject_wqe(uint32_t cm_id, std::span<const std::byte> pd, const RejectOptions& opts);

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

/// An event channel of a Cm (rdma_event_channel). 0 is the Cm's default channel.
struct ChannelId {
  uint32_t value = 0;
  bool operator==(const ChannelId&) const = default;
};

/// One connection the application was told about: its cm_id and the generation of the
/// request. The Cm counts generations across all cm_ids, so a handle names one connection
/// for the life of the Cm: once that connection is over and the hardware reuses the cm_id,
/// the old handle is refused (kState, "stale handle") instead of naming the new one.
struct ConnHandle {
  uint32_t cm_id = 0;
  uint32_t gen = 0;  // 0 names no connection
  bool operator==(const ConnHandle&) const = default;
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
  /// When the AEQ is too full to promise the host a request and its end (the application is
  /// not polling), the hardware decides alone: false, it auto-rejects the request with
  /// template_pd (the initiator gets a proper reject); true, it resets the connection.
  /// Counted in STAT_AEQ_REFUSED either way.
  bool aeq_full_rst = false;
  std::optional<unsigned> index;  // listener-table entry; unset: the lowest free one
  /// The application's pointer for this listener, handed back in every event of its
  /// connections (rdma_cm_id::context, which a connection inherits from its listener).
  void* context = nullptr;
  /// Where the events of this listener's connections go (create_channel()).
  ChannelId channel;
};

/// Addresses and ports of a connection, host-order integers (0x0A000001 = 10.0.0.1).
struct Tuple {
  uint32_t local_ip = 0;
  uint16_t local_port = 0;
  uint32_t remote_ip = 0;
  uint16_t remote_port = 0;
  bool operator==(const Tuple&) const = default;
};

/// An MPA request the application must decide on (IW_CM_EVENT_CONNECT_REQUEST). The
/// connection is held until reject(handle, ...) or destroy(handle); the private data was
/// copied out of the PD area.
struct ConnectRequest {
  uint32_t cm_id = 0;  // = handle.cm_id
  ConnHandle handle;
  ListenerId listener;
  void* context = nullptr;  // the listener's ListenOptions::context
  Tuple tuple;
  uint8_t rev = 0;                  // MPA Rev of the request (1 or 2)
  uint8_t flags = 0;                // request flags (M 0x80, C 0x40, enhanced 0x10)
  std::optional<uint32_t> ird_ord;  // rev 2 enhanced: ctrl_ird << 16 | ctrl_ord
  std::vector<std::byte> private_data;
  /// RFC 6581: the reject then carries the IRD/ORD word, which counts toward PD_Length.
  bool enhanced() const { return rev == 2 && (flags & CmContext::kMpaFlagEnhanced) != 0; }
};

/// The peer reset a connection the application still holds. It must still be rejected (or
/// destroyed): that frees the cm_id (the reject completes with CTX/PEER_RESET, nothing is
/// sent).
struct PeerReset {
  uint32_t cm_id = 0;
  ConnHandle handle;
  void* context = nullptr;
};

/// A malformed MPA request: the hardware sent a RST and freed the node; nothing to do.
struct MpaError {
  uint32_t cm_id = 0;
  ListenerId listener;
  void* context = nullptr;
  Tuple tuple;
  regs::MpaError reason = regs::MpaError::NONE;
};

/// The completion of a post_reject(): the reject of `handle` is over, successful or not
/// (completion_error() turns an error completion into an Error, as reject() returns it).
/// Delivered on the connection's channel; it is the last event of the connection.
struct RejectComplete {
  uint32_t cm_id = 0;
  ConnHandle handle;
  void* context = nullptr;
  Completion completion;
};

using Event = std::variant<ConnectRequest, PeerReset, MpaError, RejectComplete>;

/// "CONNECT_REQUEST", "PEER_RESET", "MPA_ERROR", "REJECT_COMPLETE".
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
  uint64_t cleanup_rejects = 0;  // internal ABORT rejects after a failed reject (see reject())
  uint64_t cleanup_failed = 0;   // ... that failed as well (the node may stay allocated)
  /// Requests the driver rejected itself (no PD): destroy() of a held connection, and
  /// requests of a destroyed listener that had not been delivered (iw_cm's rule).
  uint64_t released = 0;
  uint64_t unexpected_events = 0;        // events that fit no node's state (dropped)
  uint64_t unexpected_completions = 0;   // CQEs that matched no outstanding WQE (dropped)
  uint64_t missing_terminal = 0;         // a request on a cm_id whose previous node never ended
  uint64_t bad_pd = 0;                   // requests whose PD_OFFSET/PD_LEN lie outside the PD area
  uint32_t nodes_held = 0;               // kHeld + kHeldReset
  uint32_t nodes_awaiting_terminal = 0;  // kRejecting + kAwaitTerminal (terminal not seen)
};

/// The poller thread (start_poller): it looks at the rings every `interval` and moves what it
/// finds to the channels, so their event fds become readable without a caller polling.
struct PollerOptions {
  std::chrono::nanoseconds interval = std::chrono::microseconds(100);
  enum class Wait : uint8_t {
    /// Sleep on the OS clock between looks (a card: the device runs by itself).
    kSleep,
    /// Wait through the HAL (Device::pause): for a device whose time passes only inside its
    /// waits, the unit tests' fake HAL. Holds the device lock for each interval.
    kDevice,
  };
  Wait wait = Wait::kSleep;
};

/// One reject of a list posted with one doorbell (Cm::post_rejects).
struct HeldReject {
  ConnHandle handle;
  std::span<const std::byte> pd;  // copied before the call returns
  RejectOptions opts;             // push must be false
};

class Cm {
 public:
  /// `dev` must outlive the Cm.
  explicit Cm(Device& dev);
  /// Stops the poller, destroys the listeners this Cm created, then rejects (no PD, the
  /// listener's FIN policy) every request the application still holds, as iw_cm does when a
  /// listener or an id in CONN_RECV goes away; otherwise those nodes would hold their cm_ids
  /// until the core is reset. Rejects still in flight are abandoned (Device::abandon), so
  /// their completions free their slots. Best effort: errors are not reported. No other
  /// thread may use the Cm by then.
  ~Cm();
  Cm(const Cm&) = delete;
  Cm& operator=(const Cm&) = delete;

  Device& device() { return dev_; }

  // ---- listeners
  /// iw_create_listen: installs a hardware listener on local_ip:port (0 = any address; an
  /// exact-address listener wins over a wildcard one). Waits for STATUS.CM_READY first.
  /// kInvalidArgument (nothing posted): port 0, index >= 16, a template that fails
  /// check_reject_pd (as for an enhanced request) or check_reply_ird_ord, max_ird/max_ord
  /// over 14 bits, BACKLOG auto-reject without a backlog, an unknown channel. kState: the
  /// index, or this address and port, is already in use.
  Result<ListenerId> listen(uint32_t local_ip, uint16_t port, const ListenOptions& opts = {});
  /// iw_destroy_listen: new SYNs get a RST; connections already accepted run to their end.
  /// Requests of this listener not yet delivered (queued in a channel, or still to come off
  /// the AEQ) are rejected by the driver and never delivered, as iw_cm does for a listener
  /// that is going away; requests already delivered stay the application's.
  /// kState (nothing posted) when `id` is not a listener of this Cm.
  Result<void> destroy_listener(ListenerId id);

  // ---- event channels
  /// A new channel (rdma_create_event_channel) for ListenOptions::channel.
  Result<ChannelId> create_channel();
  /// kState while a listener of this Cm still uses it; kInvalidArgument for the default
  /// channel or an unknown one. Events still queued in it are dropped.
  Result<void> destroy_channel(ChannelId ch);
  /// The channel's eventfd (created on the first call, owned by the Cm): readable exactly
  /// while the channel holds events, as rdma_event_channel::fd. Nothing fills the channel
  /// while nobody calls the Cm unless the poller runs (start_poller). kInvalidArgument for an
  /// unknown channel; kNoDevice when eventfd() fails. It is created O_NONBLOCK; the Cm reads
  /// it only while it holds a count, so the application may clear O_NONBLOCK (the C API does)
  /// but must not read it.
  Result<int> event_fd(ChannelId ch = {});

  // ---- events
  /// The next event of channel `ch`, if any. First it moves everything the device has
  /// (events off the AEQ, completions of post_reject()) to the channels. Events the
  /// application must not see (the terminal events of rejected nodes, see reject()) are
  /// consumed on the way. When the AEQ is empty, AEQ_HEAD is written back before returning.
  Result<std::optional<Event>> poll_event(ChannelId ch = {});
  /// poll_event() until an event arrives; Errc::kTimeout after `timeout` of host time (the
  /// message names the AEQ indices and the STATUS/QERR bits set).
  Result<Event> wait_event(std::chrono::nanoseconds timeout) { return wait_event({}, timeout); }
  Result<Event> wait_event(ChannelId ch, std::chrono::nanoseconds timeout);

  // ---- reject, accept, destroy (iw_cm_reject, iw_cm_accept, iw_destroy_cm_id)
  /// iw_cm_reject: validates, posts, waits for the completion. The PD is copied before the
  /// call returns. Error completions come back as Errc::kHardware with the codes set.
  /// Validation (Errc::kInvalidArgument, nothing posted, the connection is still held):
  ///  - check_reject_pd(): PD_Length on the wire (pd.size(), + 4 when the request is rev 2
  ///    enhanced) <= 255, or <= 512 (MPA_PD_MAX) with opts.unsafe_wire_pd; the hardware
  ///    checks 512 again (WQE/PD_TOO_LONG);
  ///  - opts.ird_ord, on an enhanced connection: check_reply_ird_ord() against the request's
  ///    word (the hardware checks it again: WQE/BAD_IRD_ORD);
  ///  - opts.push only when CAPS.PUSH; opts.sq < num_sq.
  /// Errc::kState (nothing posted): a stale handle (the connection is over and its cm_id
  /// names a newer one, or it never existed), or the connection was already rejected or
  /// destroyed (iw_cm returns -EINVAL).
  ///
  /// iw_cm's contract: the PD goes into the cm_id's PD-area slot (the hardware re-reads it
  /// for retransmissions); once reject() returns, success or error (other than the
  /// validation errors above), the connection delivers no further events, and the node's
  /// terminal event (CLOSED, RESET, RTX_EXHAUSTED, TIMEOUT) is consumed by the driver. After
  /// a PeerReset the reject completes with CTX/PEER_RESET (an error: nothing was sent) and
  /// frees the cm_id. If the hardware refused the WQE itself (WQE/*, DMA/*), the node would
  /// stay allocated: the driver then rejects it once more with no PD and fin_policy ABORT
  /// (reject + RST, what irdma's irdma_send_reset does) and still returns the first error.
  ///
  /// A full SQ is retried until opts.timeout. When the completion does not come within
  /// opts.timeout (kTimeout, or kQueueError when the SQ is in queue error), the reject stays
  /// posted but the caller no longer waits for it: the WQE is abandoned (Device::abandon), so
  /// its completion, if it comes (or reset_sq() flushes it), frees its slot at once and is
  /// consumed by the driver (the connection's bookkeeping follows it, as above).
  Result<Completion> reject(ConnHandle h, std::span<const std::byte> pd, RejectOptions opts = {});
  /// The same validation, then posts and returns at once (iw_cm's reject does not wait).
  /// The completion arrives as a RejectComplete event on the connection's channel, the last
  /// event of the connection. kRingFull when the SQ has no free slot (the connection is
  /// still held: post again once events have been taken). opts.timeout is not used.
  Result<void> post_reject(ConnHandle h, std::span<const std::byte> pd,
                           const RejectOptions& opts = {});
  /// post_reject() for a list of held connections, with one doorbell per SQ (irdma's list
  /// post; Device::post_rejects). Every entry is checked as post_reject() checks it (a
  /// connection may appear once); the first bad one fails the call, naming its position, with
  /// nothing posted. Then the rejects are posted in order: all, or a prefix when an SQ
  /// filled (the others are still held: post them again once events have been taken).
  /// Returns how many were posted; each completes as a RejectComplete event. kRingFull
  /// when not even the first fits.
  Result<size_t> post_rejects(std::span<const HeldReject> list);
  /// iw_cm_accept. Bouncer's passive CM only rejects: kNotSupported, and the connection is
  /// still held (reject or destroy it). A stale handle is kState.
  Result<void> accept(ConnHandle h, std::span<const std::byte> pd = {});
  /// iw_destroy_cm_id: the connection delivers no more events, whatever its state. A
  /// request still held (CONN_RECV) is rejected by the driver with no PD and the listener's
  /// FIN policy; a post_reject() in flight completes without its RejectComplete. Returns
  /// without waiting for the hardware (a full SQ is retried by later calls). kState for a
  /// stale handle.
  Result<void> destroy(ConnHandle h);

  // ---- poller
  /// Starts the poller thread. kState when it runs already; kInvalidArgument for an interval
  /// <= 0. Not for the co-simulation, whose device only runs inside the host thread's calls.
  Result<void> start_poller(const PollerOptions& opts = {});
  void stop_poller();
  bool poller_running() const {
    std::lock_guard lk(poller_ctl_mu_);
    return poller_.joinable();
  }

  // ---- diagnostics
  /// Driver bookkeeping of the passive CM (tests, diagnostics).
  CmStats stats() const;
  NodeState node_state(uint32_t cm_id) const;
  /// The state of one connection: kFree once it is over (its cm_id may hold a newer one).
  NodeState node_state(ConnHandle h) const;
  /// Diagnostics only: called with every terminal event the driver consumes for a rejected
  /// node (they are still never delivered as events). It runs under the Cm's lock: it must
  /// not call back into the Cm.
  void set_terminal_observer(std::function<void(uint32_t cm_id, regs::AeqEvent code)> f);

 private:
  enum class Kind : uint8_t {
    kSync,      // reject(): the calling thread collects the completion
    kAsync,     // post_reject(): the completion becomes a RejectComplete event
    kInternal,  // cleanup, destroy(), a destroyed listener's request: consumed by the driver
  };
  struct Node {
    NodeState state = NodeState::kFree;
    uint8_t rev = 0;
    uint8_t flags = 0;
    uint8_t listener = 0;
    std::optional<uint32_t> ird_ord;  // the request's IRD/ORD word (enhanced requests)
    uint32_t gen = 0;                 // generation of the request (ConnHandle::gen)
    ChannelId channel;                // where its events go
    void* context = nullptr;          // its listener's context
    bool reset_seen = false;          // the node's RESET event was consumed
    bool terminal_seen = false;       // a terminal event (or RESET) arrived while kRejecting
    bool cleanup_done = false;        // the internal ABORT reject was already tried
    bool destroyed = false;           // destroy(): no event is delivered any more
    bool enhanced() const { return rev == 2 && (flags & CmContext::kMpaFlagEnhanced) != 0; }
  };
  struct Inflight {
    uint32_t cm_id = 0;
    uint32_t gen = 0;
    Kind kind = Kind::kSync;
    uint64_t ticket = 0;  // names this WQE (an SQ slot is reused)
    ChannelId channel;
    void* context = nullptr;
    bool dropped = false;  // kAsync of a destroyed connection: its completion is not delivered
  };
  struct Done {  // a kSync completion, claimed for its waiting caller
    Completion c;
    uint64_t cleanup = 0;  // ticket of the cleanup reject it caused, 0 when none
  };
  struct Listener {
    uint32_t ip = 0;
    uint16_t port = 0;
    ChannelId channel;
    void* context = nullptr;
  };
  struct Channel {
    std::deque<Event> queue;
    int fd = -1;  // eventfd, -1 until event_fd()
  };
  using Lock = std::unique_lock<std::mutex>;

  Result<void> validate_reject(std::span<const std::byte> pd, const RejectOptions& opts) const;
  /// The held node `h` names, or kState (stale, over, already rejected or destroyed).
  Result<Node*> held(ConnHandle h, const char* what);
  Result<uint64_t> post_node_reject(ConnHandle h, Node& n, std::span<const std::byte> pd,
                                    const RejectOptions& opts, Kind kind);
  // post_node_reject's checks of the PD and IRD/ORD against the node.
  static Result<void> check_node_reject(const Node& n, std::span<const std::byte> pd,
                                        const RejectOptions& opts);
  // The node's bookkeeping once its reject WQE is posted at (sq, wqe_idx): the ticket.
  uint64_t node_rejected(ConnHandle h, Node& n, unsigned sq, uint16_t wqe_idx, Kind kind);
  /// Posts the driver's own reject of a held node (no PD), or queues it for the next pump.
  void release(uint32_t cm_id, Node& n);
  Result<Completion> wait_sync(Lock& lk, unsigned sq, uint64_t ticket,
                               std::chrono::nanoseconds timeout, Done& out);
  bool wait_internal(Lock& lk, uint64_t ticket, std::chrono::nanoseconds timeout);
  /// Everything the device has: abandoned completions, AEQ events (routed to channels), the
  /// completions of this Cm's WQEs (except kSync ones, kept in done_), releases to retry.
  void pump();
  std::optional<Event> on_aeqe(const Aeqe& e);
  void on_terminal(uint32_t cm_id, regs::AeqEvent code);
  void on_completion(const Completion& c, bool abandoned);
  void settle(const Inflight& f, const Completion& c, uint64_t* cleanup);
  uint64_t cleanup(uint32_t cm_id, Node& n, unsigned sq);
  void deliver(ChannelId ch, Event e);
  /// Drops queued events of connection `h` (iw_cm: nothing after a reject or destroy).
  void purge(ConnHandle h);
  void count_terminal(uint32_t cm_id, regs::AeqEvent code);
  Node* node(uint32_t cm_id);
  Channel* channel(ChannelId ch);
  std::optional<Inflight> live_entry(uint64_t ticket, uint32_t* key = nullptr) const;
  Result<Completion> abandon_sync(unsigned sq, uint64_t ticket, Error why);
  void poller_loop(PollerOptions o);
  static uint32_t wqe_key(unsigned sq, uint16_t wqe_idx) { return sq << 16 | wqe_idx; }

  Device& dev_;
  mutable std::mutex mu_;  // guards everything below except the poller's stop flag
  std::unordered_map<uint32_t, Node> nodes_;  // cm_id -> node (absent: kFree)
  std::map<uint32_t, Inflight> live_;         // wqe_key -> the WQE there
  // wqe_key -> WQEs given up, oldest first. The slot key is enough: a slot holds one WQE at a
  // time and its completions come back in posting order, so the front of a key's queue is
  // the WQE the next abandoned completion of that slot belongs to.
  std::map<uint32_t, std::deque<Inflight>> abandoned_;
  std::unordered_map<uint64_t, Done> done_;  // ticket -> claimed kSync completion
  std::array<std::optional<Listener>, regs::kNumListeners> listeners_;
  std::array<bool, regs::kNumListeners> closed_{};  // destroyed: its requests are released
  std::map<uint32_t, Channel> channels_;            // ChannelId::value -> channel (0: default)
  uint32_t next_channel_ = 1;
  uint32_t next_gen_ = 0;
  uint64_t next_ticket_ = 0;
  std::vector<ConnHandle> to_release_;  // releases that met a full SQ
  std::function<void(uint32_t, regs::AeqEvent)> terminal_observer_;
  CmStats stats_;
  // poller
  mutable std::mutex poller_ctl_mu_;  // start/stop/running: guards poller_ itself
  std::thread poller_;
  std::mutex poller_mu_;  // poller_stop_, between the control calls and the thread
  std::condition_variable poller_cv_;
  bool poller_stop_ = false;
};

}  // namespace bouncer
