// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// The scenario library of the passive-CM system tests (tb/system/test_system_cm*.cpp), the
// soak test (tb/soak) and the connection-storm bench (bench/storm_bench.cpp): the real
// driver (hostsw/) against the verilated bouncer_core in the co-simulation (sim/), with
// simulated iWARP initiators (sim/peer) on the wire. No GoogleTest here: a check reports what
// failed as a list of Failures (system_fixture.hpp turns them into GoogleTest failures), and
// the host program's own errors go to the failure sink.
//
// What is here:
//  - test-scale timer/TCP settings and addresses (one place, so every test runs short);
//  - the frame decoder (golden::decode_segment: checksums recomputed by golden, reported) and
//    a per-connection transcript of both directions, in cycle order;
//  - `Expect`: Bouncer's frames of one connection as the golden builders make them
//    (SYN-ACK, ACK, FIN, RST, MPA reject), from the peer's config and the observed ISS;
//  - hand-made peer-side frames (inject_rx) from golden::build_segment;
//  - `Scenario`: peers plus a host program (poll events, reject with a per-peer plan, record
//    everything the driver reports, terminal events via the observer);
//  - the initiator's personalities (siw, irdma, cxgb4): what each one's application gets for
//    a reject, restated from the kernel rules (app_for_reject), and whether it is intact;
//  - end-of-test checks (table empty, no node held, no unexpected event) and the tshark
//    dissection of the pcap, as Failures;
//  - a drop hook for the first frame of a kind (`drop_first`).
#pragma once

#include <algorithm>
#include <array>
#include <cinttypes>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

#include "bouncer/cm.hpp"
#include "bouncer/cm_diag.hpp"
#include "bouncer/device.hpp"
#include "bouncer/device_faults.hpp"
#include "bouncer/regs.hpp"
#include "bouncer/sim/platform.hpp"
#include "golden/frame_parser.hpp"
#include "golden/pcap_io.hpp"
#include "golden/reject_frame.hpp"
#include "golden/segment.hpp"
#include "golden/tcp_ctrl.hpp"

namespace systest {

namespace R = bouncer::regs;
namespace sim = bouncer::sim;
namespace peer = bouncer::peer;
using bouncer::Cm;
using bouncer::Completion;
using bouncer::Device;
using bouncer::RejectOptions;

// ------------------------------------------------------------------ failures

// A failed check: its message, and whether it ended the check it belongs to (the rest of
// that check was not evaluated, as after a failed ASSERT_ in GoogleTest).
struct Failure {
  std::string message;
  bool fatal = false;
};
using Failures = std::vector<Failure>;

// Where the host program's errors go (a poll_event that fails inside Scenario::pump): by
// default stderr; the GoogleTest fixture (system_fixture.hpp) makes each a test failure.
using FailureSink = std::function<void(const std::string&)>;
void set_failure_sink(FailureSink sink);
void report_failure(const std::string& message);

// ------------------------------------------------------------------ settings

inline constexpr uint32_t kLocalIp = 0x0A000001;  // 10.0.0.1
inline constexpr uint16_t kPort = 20049;
inline constexpr uint16_t kPort2 = 20050;
inline constexpr bouncer::MacAddr kLocalMac = {0x02, 0xbb, 0xcc, 0xdd, 0xee, 0x01};
inline constexpr uint8_t kTtl = 61;    // listener TTL (not the default, so it is checked)
inline constexpr uint8_t kTos = 0x28;  // listener TOS
inline constexpr std::array<uint32_t, 4> kIsnKey = {0x01234567, 0x89abcdef, 0xdeadbeef, 0x0badf00d};
// The core's reset value of HASH_KEY (public): the tests place tuples in buckets on purpose.
inline constexpr uint32_t kHashKey = 0x6A09E667;

// CM timers at simulation scale. One tick is 64 cycles; the timer sweeps all 1024 cm_ids
// once per 1024 cycles, so an expiry is seen at most one sweep (+3) after its deadline.
inline constexpr uint32_t kTick = 64;
inline constexpr uint32_t kRtoTicks = 320;  // RTO_INIT: 20480 cycles
inline constexpr uint64_t kRto = uint64_t{kTick} * kRtoTicks;
inline constexpr uint32_t kCtxDepth = 1024;  // CTX_DEPTH_LOG2 10
inline constexpr uint64_t kSweep = kCtxDepth + 3;
inline constexpr uint32_t kTimeWaitTicks = 100;

bouncer::TimerConfig test_timers(uint8_t rtx_max = 6);

// Not the reset values, so the frames prove where their fields come from.
bouncer::TcpConfig test_tcp();

bouncer::DeviceConfig device_config(uint8_t rtx_max = 6);

// IRD/ORD word: ctrl_ird = peer-to-peer | IRD, ctrl_ord = RDMA Read RTR | ORD.
constexpr uint32_t ird_ord_word(unsigned ird, unsigned ord) {
  return (uint32_t{0x8000u | ird} << 16) | (0x4000u | ord);
}

// A simulated initiator number i: its own MAC, 10.0.(1 + i/250).(2 + i%250), port 40000 + i.
// With `kernel`, the rules of that initiator and what its kernel puts on the wire (SYN
// options, request flags, IRD/ORD word for IRD 16 + i % 8, ORD 8 + i % 4); without, the
// default personality (siw rules) with the generic request (CRC, P2P | READ RTR word).
peer::InitiatorConfig peer_config(unsigned i, uint8_t rev, bool enhanced, std::vector<uint8_t> pd,
                                  uint16_t port = kPort,
                                  std::optional<peer::Personality> kernel = std::nullopt);

std::vector<uint8_t> text_pd(const std::string& base, size_t len);
std::vector<std::byte> to_bytes(std::span<const uint8_t> v);
std::vector<uint8_t> to_u8(std::span<const std::byte> v);
std::string ip_str(uint32_t ip);
std::string hex(std::span<const uint8_t> v, size_t max = 64);

// ------------------------------------------------------------------ frame decoder

inline constexpr uint8_t kFin = 0x01, kSyn = 0x02, kRst = 0x04, kPsh = 0x08, kAck = 0x10;

// A frame as golden::decode_segment reads it (checksums reported, not required), with the
// questions the tests ask of it.
struct Seg : golden::DecodedSegment {
  bool has(uint8_t f) const { return (flags & f) != 0; }
  uint32_t seq_len() const {
    return static_cast<uint32_t>(payload.size()) + (has(kSyn) ? 1u : 0u) + (has(kFin) ? 1u : 0u);
  }
  uint32_t end() const { return seq + seq_len(); }
  bool mpa_key(const char* key) const {
    return payload.size() >= 20 && std::memcmp(payload.data(), key, 16) == 0;
  }
  bool mpa_reply() const { return mpa_key("MPA ID Rep Frame"); }
  bool mpa_request() const { return mpa_key("MPA ID Req Frame"); }
  bool bare(uint8_t f) const { return payload.empty() && flags == f; }
};

std::string flag_str(uint8_t f);

// golden::decode_segment: Ethernet [802.1Q] IPv4 TCP, any IHL, TCP options MSS / WS
// recognized. nullopt (reason in *why) for anything else or a truncated frame. Checksums are
// reported, not required.
std::optional<Seg> decode(std::span<const uint8_t> f, std::string* why = nullptr);

std::string describe(const Seg& s);

// ------------------------------------------------------------------ transcripts

struct WireSeg {
  bool to_bouncer = false;  // RX (peer -> Bouncer) or TX (Bouncer -> peer)
  uint64_t first = 0, last = 0;
  size_t index = 0;  // in rx_frames() / tx_frames()
  Seg seg;
  std::vector<uint8_t> bytes;
};

// Every frame of the connection (rem_ip, rem_port) at Bouncer's port, both directions, in
// order of their first beat (RX first on a tie). Frames that do not decode are skipped.
std::vector<WireSeg> transcript(const sim::Platform& plat, uint32_t rem_ip, uint16_t rem_port);

std::string dump(const std::vector<WireSeg>& t);
std::vector<const WireSeg*> tx_only(const std::vector<WireSeg>& t);

// ------------------------------------------------------------------ expected frames

// Bouncer's side of one connection, for the golden builders.
struct Expect {
  peer::InitiatorConfig peer;  // the initiator (its MAC, IP, port, ISN)
  bouncer::MacAddr loc_mac = kLocalMac;
  uint8_t ttl = kTtl, tos = kTos;
  bouncer::TcpConfig tcp = test_tcp();
  uint32_t iss = 0;              // our ISN (from the SYN-ACK, checked against the keyed hash)
  uint16_t ip_id0 = 0;           // IP ID of the SYN-ACK
  uint32_t req_len = 0;          // MPA request bytes the peer sends
  std::optional<uint16_t> vlan;  // 802.1Q TCI of our frames (echoes the peer's tag)
  bool peer_ws = true;           // the peer's SYN had a window-scale option (sim/peer's do)

  // Our window field after the SYN-ACK: TCP_WND, scaled (rounded up) once scaling is on.
  uint16_t wnd_field() const;
  golden::Mac gmac(const std::array<uint8_t, 6>& m) const;
  uint32_t rcv_after_request() const { return peer.isn + 1 + req_len; }

  std::vector<uint8_t> ctrl(golden::TcpCtrlKind kind, uint32_t seq, uint32_t ack,
                            uint16_t ip_id) const;
  std::vector<uint8_t> synack() const;
  golden::RejectParams reject_params(std::span<const std::byte> pd, bool fin,
                                     std::optional<uint32_t> ird_ord_override) const;
};

// The request's MPA payload length as the peer sends it.
uint32_t request_len(const peer::InitiatorConfig& c);

// The keyed ISN: F(key, tuple) + (cycle >> 4) for a cycle in [lo, hi] (golden model).
bool isn_plausible(uint32_t iss, const peer::InitiatorConfig& p, uint64_t lo, uint64_t hi);

// ------------------------------------------------------------------ hand-made peer frames

// A peer -> Bouncer segment, built by golden::build_segment (not by the RTL or the peer
// model): Ethernet, IPv4 (IHL 5, DF), TCP with optional MSS/WS options (SYN), checksums right,
// padded to 60 bytes.
struct PeerFrame {
  std::array<uint8_t, 6> src_mac{}, dst_mac = kLocalMac;
  uint32_t src_ip = 0, dst_ip = kLocalIp;
  uint16_t sport = 0, dport = kPort;
  uint16_t ip_id = 0x4000;
  uint16_t window = 0xFFFF;
  uint8_t ttl = 64;
};

std::vector<uint8_t> build_peer_segment(const PeerFrame& pf, uint8_t flags, uint32_t seq,
                                        uint32_t ack, std::span<const uint8_t> payload,
                                        bool syn_options = false);

// An MPA request payload: key, flags, rev, PD_Length, [IRD/ORD], PD.
std::vector<uint8_t> mpa_request_payload(uint8_t rev, bool enhanced, uint32_t ird_ord,
                                         std::span<const uint8_t> pd);

// ------------------------------------------------------------------ initiator personalities

inline constexpr peer::Personality kPersonalities[] = {
    peer::Personality::kSiw, peer::Personality::kIrdma, peer::Personality::kCxgb4};

// What the application behind an initiator gets for Bouncer's reject of `pd`, from the
// kernel rules (docs/interop.md, "What the initiator's application gets"), written out here
// independently of sim/peer. `rev`/`enh`: the initiator's request (Bouncer's reply echoes
// them); `fin_in_reject`: the FIN rode in the reject's segment; `reply_word`: the reply's
// IRD/ORD word (enhanced); `own`: the initiator's request config.
struct AppWant {
  peer::AppEvent ev = peer::AppEvent::kNone;
  int status = 0;
  std::vector<uint8_t> pd;
  bool kernel_fault = false;
};
AppWant app_for_reject(const peer::InitiatorConfig& own, std::span<const uint8_t> pd,
                       bool fin_in_reject, uint32_t reply_word);

// The application got the reject and every byte the host posted, in order (irdma's 4 bytes
// read past the frame may follow: that kernel defect cannot be avoided by the responder).
bool delivered_intact(const AppWant& w, std::span<const uint8_t> pd);

// The initiator answers a reject with ACK, RST instead of closing: cxgb4 always
// (process_mpa_reply -> c4iw_ep_disconnect abrupt), siw when the FIN rode in the reject
// segment (the reply is left unread when the socket is released).
bool peer_resets_after_reject(peer::Personality p, R::FinPolicy policy);

// The terminal event of a host-rejected connection: RESET when the initiator resets it,
// CLOSED otherwise (and with ABORT, whose RST ends the node first).
R::AeqEvent expected_terminal(peer::Personality p, R::FinPolicy policy);

// ------------------------------------------------------------------ registers

inline uint32_t reg(bouncer::hal::Device& hal, uint32_t off) { return hal.read32(off); }

// Every STAT_* register, by name, for failure messages and bug reports.
std::string stats_line(Device& d);

// ------------------------------------------------------------------ the host program

// One simulated initiator and what the host does with / learns about its connection.
struct Conn {
  size_t peer = 0;
  peer::InitiatorConfig cfg;
  // plan
  std::vector<std::byte> reject_pd;
  RejectOptions opts;
  bool hold = false;  // the test rejects it itself (Scenario does not)
  // The initiator's application is known not to get this reject intact (a personality's
  // limit): asserted instead of the delivery.
  bool expect_lost = false;
  // what the driver reported
  std::vector<bouncer::ConnectRequest> requests;
  uint64_t event_cycle = 0;   // cycle at which poll_event returned the request
  uint64_t posted_cycle = 0;  // cycle at which reject() / post_reject() returned
  std::optional<Completion> completion;
  std::optional<bouncer::Error> reject_error;
  std::vector<bouncer::PeerReset> resets;
  std::vector<bouncer::MpaError> mpa_errors;
  std::vector<R::AeqEvent> terminals;  // consumed by the driver (terminal observer)
  std::optional<uint32_t> cm_id;
  bouncer::ConnHandle handle;  // of the last request
};

// The ConnectRequest carries exactly what peer c sent.
Failures check_request_matches(const Conn& c);

class Scenario {
 public:
  Scenario(sim::Platform& plat, bouncer::hal::Device& hal, Device& dev, Cm& cm);
  ~Scenario();
  Scenario(const Scenario&) = delete;
  Scenario& operator=(const Scenario&) = delete;

  // Adds a peer that starts at `start` and is rejected with `pd` / `opts` by the host.
  size_t add(peer::InitiatorConfig cfg, uint64_t start, std::vector<std::byte> pd = {},
             RejectOptions opts = {});

  // Post rejects without waiting for their completions (Cm::post_reject; the completion
  // comes back as a RejectComplete event).
  bool pipelined = false;

  // The host's reaction to one event (the default program: reject with the plan).
  void handle(const bouncer::Event& e);

  // Rejects c's held request now, with its plan (synchronously unless pipelined).
  void reject(Conn& c);

  // Polls events (handing each to `on_event`, default handle()) every `poll` cycles until
  // done() holds; false after max_cycles. A failing poll_event goes to the failure sink and
  // returns false.
  bool pump(const std::function<bool()>& done, uint64_t max_cycles,
            const std::function<void(const bouncer::Event&)>& on_event = {}, uint64_t poll = 64);

  // Everything over: peers finished, nothing held or awaiting its terminal event, the
  // connection table empty, no reject in flight.
  bool settled();

  bool settle(uint64_t max_cycles, const std::function<void(const bouncer::Event&)>& on_event = {});

  // Why settle() is not done yet (for failure messages).
  std::string status();

  // The end of every scenario: table empty, nothing held or awaiting, no surprise.
  Failures check_clean_end();

  // Peer i got exactly the reject its plan asked for.
  Failures check_rejected_as_planned(const Conn& c);

  // What c's application got (rdma_cm event, status, PD) is what its personality makes of
  // the reject; and it is the reject intact unless the test expects the loss.
  Failures check_app_got_planned(const Conn& c);

  // The same checks as check_request_matches + check_rejected_as_planned, as one line of
  // text ("" when all hold), for tests with many connections.
  std::string problems(const Conn& c);

  sim::Platform& platform() { return plat_; }
  bouncer::hal::Device& hal() { return hal_; }

  std::vector<Conn> conns;
  std::vector<bouncer::Event> unknown;
  std::vector<std::pair<uint32_t, R::AeqEvent>> stray_terminals;
  uint64_t stray_completions = 0;

 private:
  sim::Platform& plat_;
  bouncer::hal::Device& hal_;
  Device& dev_;
  Cm& cm_;
  std::map<std::pair<uint32_t, uint16_t>, size_t> by_tuple_;
  std::map<uint32_t, size_t> by_cm_id_;
  std::map<std::pair<uint32_t, uint32_t>, size_t> inflight_;  // (cm_id, gen) -> conn
  std::deque<bouncer::Event> deferred_;  // read while waiting for a free SQ slot
};

// Opens the device, listens on kPort with `lo` (local MAC, TTL, TOS filled in).
bouncer::ListenOptions listen_options(R::FinPolicy policy = R::FinPolicy::SIW_SAFE);

// ------------------------------------------------------------------ pcap + tshark

struct PcapWant {
  std::vector<uint8_t> pd;  // the reject's PD (without the IRD/ORD word)
  bool enhanced = false;    // tshark 4.0 counts the IRD/ORD word as PD
};
// Per connection (the peer's IP and port): the reject the capture must show.
using PcapWants = std::map<std::pair<uint32_t, uint16_t>, PcapWant>;

// The capture's checks up to where tshark is needed, and, if tshark is there, the rest.
struct PcapCheck {
  Failures failures;
  bool tshark_missing = false;  // the checks that need tshark were not run
};

// Dissects the capture with tshark (IP and TCP checksum validation on, iwarp_mpa heuristic):
// no checksum error, no malformed frame, no error-level expert info; every MPA reply it
// decodes has rej_flag 1 and the PD meant for its connection. With `every`, each
// connection in `want` has at least one dissected reject. Our own decoder's checksum check
// of every frame runs first, without tshark.
PcapCheck check_pcap_file(const std::string& path, const PcapWants& want, bool every = true);

PcapWants pcap_wants(const Scenario& sc);

// ------------------------------------------------------------------ drop hooks

// A drop hook: the first frame in direction `dir` that decodes and satisfies `pred(seg)` is
// lost, nothing else.
template <class Pred>
sim::DropHook drop_first(sim::Direction dir, Pred pred) {
  auto done = std::make_shared<bool>(false);
  return [dir, pred, done](sim::Direction d, const std::vector<uint8_t>& f, uint64_t) {
    if (d != dir || *done) return false;
    auto s = decode(f);
    *done = s && pred(*s);
    return *done;
  };
}

}  // namespace systest
