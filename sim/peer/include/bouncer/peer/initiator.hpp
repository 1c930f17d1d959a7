// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// The simulated iWARP *initiator* (active side) that Bouncer (the passive side) faces: a
// reduced TCP + MPA initiator with the rules of one of three Linux initiators (siw, irdma,
// cxgb4), frame in / frame out, driven by a cycle count. Besides the wire it reports what
// rdma_cm would hand the application (Outcome::app_*), as the kernel sources decide it.
//
// Plain C++20, no SystemC, no threads, no wall time: the same inputs at the same cycles give
// the same frames. Frames are Ethernet frames without FCS, byte 0 first on the wire.
// Behaviour, state diagram and choices: sim/peer/README.md.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace bouncer::peer {

inline constexpr size_t kMpaHeaderLen = 20;  // key(16) + flags + rev + PD_Length(2)
inline constexpr size_t kMpaIrdOrdLen = 4;   // RFC 6581 IRD/ORD word
inline constexpr size_t kMpaPdMax = 512;     // maximum PD_Length (RFC 5044, irdma)
inline constexpr size_t kSiwPdMax = 256;     // siw MPA_MAX_PRIVDATA (siw_recv_mpa_rr)
inline constexpr size_t kCxgb4PdMax = 256;   // cxgb4 MPA_MAX_PRIVATE_DATA (process_mpa_reply)
// cxgb4's reply buffer, mpa_pkt[sizeof(struct mpa_message) + MPA_MAX_PRIVATE_DATA].
inline constexpr size_t kCxgb4MpaBuf = kMpaHeaderLen + kCxgb4PdMax;
// irdma parses one received segment at a time; IRDMA_MAX_CM_BUF = 32 + 512 bytes at most.
inline constexpr size_t kIrdmaMaxCmBuf = 32 + kMpaPdMax;
// Stands for kernel memory the driver hands to the application without having written it
// (irdma's 4 bytes read past the frame, siw/cxgb4 lengths that wrapped): not wire data.
inline constexpr uint8_t kAppPdJunk = 0xEE;
inline constexpr uint8_t kMpaFlagMarkers = 0x80;
inline constexpr uint8_t kMpaFlagCrc = 0x40;
inline constexpr uint8_t kMpaFlagReject = 0x20;
inline constexpr uint8_t kMpaFlagEnhanced = 0x10;
inline constexpr std::string_view kMpaKeyRequest = "MPA ID Req Frame";
inline constexpr std::string_view kMpaKeyReply = "MPA ID Rep Frame";
// Fault::kBadKey sends this key in the request: the reply key, i.e. the wrong direction.
inline constexpr std::string_view kMpaKeyBad = kMpaKeyReply;
// Fault::kPdTooLong sends a request whose PD_Length is this (with that many PD bytes).
inline constexpr uint16_t kFaultPdLength = 513;

inline constexpr uint8_t kTcpFin = 0x01;
inline constexpr uint8_t kTcpSyn = 0x02;
inline constexpr uint8_t kTcpRst = 0x04;
inline constexpr uint8_t kTcpPsh = 0x08;
inline constexpr uint8_t kTcpAck = 0x10;

// Negative errno values as rdma_cm reports them in event->status.
inline constexpr int kEINVAL = -22;
inline constexpr int kEPROTO = -71;
inline constexpr int kECONNRESET = -104;
inline constexpr int kETIMEDOUT = -110;
inline constexpr int kECONNREFUSED = -111;

// Which Linux initiator the model follows (rules and sources: sim/peer/README.md).
enum class Personality : uint8_t {
  kSiw,    // drivers/infiniband/sw/siw/siw_cm.c over the Linux TCP stack
  kIrdma,  // drivers/infiniband/hw/irdma/cm.c: software TCP for the handshake, one segment each
  kCxgb4,  // drivers/infiniband/hw/cxgb4/cm.c: TCP in the adapter, MPA in the driver
};
const char* to_string(Personality p);

// The option layout of our SYN.
enum class SynOptions : uint8_t {
  kMssNopWs,  // MSS, NOP, window scale (8 bytes)
  kLinux,     // MSS, SACK-permitted, timestamps, NOP, window scale (20 bytes): siw's TCP
  kIrdma,     // MSS, window scale, EOL (8 bytes): irdma_send_syn
};

// What rdma_cm hands the application that called rdma_connect() (cma_iw_handler maps the
// provider's IW_CM_EVENT_CONNECT_REPLY status: 0 ESTABLISHED, -ECONNRESET/-ECONNREFUSED
// REJECTED, -ETIMEDOUT UNREACHABLE, anything else CONNECT_ERROR).
enum class AppEvent : uint8_t {
  kNone,           // not decided (yet), or a test fault ended the exchange
  kEstablished,    // RDMA_CM_EVENT_ESTABLISHED
  kRejected,       // RDMA_CM_EVENT_REJECTED
  kConnectError,   // RDMA_CM_EVENT_CONNECT_ERROR
  kUnreachable,    // RDMA_CM_EVENT_UNREACHABLE
  kConnectFailed,  // no event: rdma_connect() itself returned the error (siw's TCP connect)
};
const char* to_string(AppEvent e);

struct InitiatorConfig {
  // The rules the initiator follows: reply limits, what a RST or a timeout does, how it
  // closes, and Outcome::app_*. The wire fields below are independent of it;
  // set_kernel() sets them to what that kernel sends.
  Personality personality = Personality::kSiw;
  std::array<uint8_t, 6> mac{}, peer_mac{};  // ours (initiator) and Bouncer's
  std::optional<uint16_t> vlan_tci;          // 802.1Q tag on every frame; RX must match its VID
  uint32_t ip = 0, peer_ip = 0;              // host-order integers, 0x0A000001 = 10.0.0.1
  uint16_t port = 0, peer_port = 0;
  uint32_t isn = 0;
  uint16_t mss = 1460;  // SYN option; segments never exceed min(mss, peer's MSS)
  uint8_t wscale = 7;   // SYN option; scaling is in effect only if the SYN-ACK has one too
  SynOptions syn_options = SynOptions::kMssNopWs;
  uint32_t ts_val = 0x0001'0000;  // TSval of the kLinux timestamps option (TSecr 0)
  uint16_t window = 0xFFFF;       // the TCP window field of every segment we send
  uint8_t mpa_rev = 2;
  bool enhanced = true;               // RFC 6581 (flag 0x10 + IRD/ORD word); only with mpa_rev == 2
  uint32_t ird_ord = 0x80104010;      // ctrl_ird << 16 | ctrl_ord: P2P, IRD 16, READ RTR, ORD 16
  bool crc = true;                    // request flag C
  bool markers = false;               // request flag M
  std::vector<uint8_t> private_data;  // request PD (<= 512 incl. the IRD/ORD word when enhanced)
  unsigned request_segments = 1;      // split the MPA request over N TCP segments (0 acts as 1)
  uint64_t rto_cycles = 250'000;      // first retransmission timeout (doubles); SYN, data, FIN
  unsigned max_retransmits = 5;       // consecutive timeouts without progress before kFailed
  bool fin_after_reject = true;       // siw: close with FIN after the reject, else RST
  // Extensions (not in the original brief):
  uint64_t time_wait_cycles = 500'000;  // TIME_WAIT length (2 * the default rto)
  uint64_t close_delay_cycles = 0;      // application think time between the reply and our close
  // FIN_WAIT2 length: our FIN is acknowledged but the peer's FIN does not come (it was lost
  // for good, or the peer ended the connection with a RST that was lost). Linux closes an
  // orphaned socket (siw releases its socket when it closes) after tcp_fin_timeout, 60 s;
  // the default is 60 * the default rto. kFailed, silently. 0 waits forever.
  uint64_t fin_wait2_cycles = 15'000'000;
  // No MPA reply this long after the request (or the handshake, for kNoRequest): the
  // personality's timeout (siw: UNREACHABLE and FIN; cxgb4: UNREACHABLE and RST). siw's
  // MPAREQ_TIMEOUT is 10 s, cxgb4's ep_timeout_secs 60 s; the default is 10 * rto
  // (scaled like rto). 0 disables it. irdma has no such timer (its request's retransmission
  // entry runs out instead); it uses this one only for Fault::kNoRequest.
  uint64_t reply_timeout_cycles = 2'500'000;
  // cxgb4's MPA v1 retry opens a second connection with a fresh ISN; unset: derived from isn.
  // (irdma's retry SYN continues its sequence numbers instead.)
  std::optional<uint32_t> retry_isn;
  bool pad_min_frame = true;  // pad frames to 60 bytes (no FCS) as a MAC does on the wire
  uint16_t ip_id = 0x1000;    // IPv4 identification of the first frame, +1 per new frame
  uint8_t ttl = 64, tos = 0;

  // Fault knobs for tests: send RST in a given state, bad MPA key, rev 3, PD_Length > 512,
  // no request at all. See README.md for the exact frames.
  enum class Fault {
    kNone,
    kRstAfterSynAck,   // handshake ACK, then RST|ACK instead of the request -> kAborted
    kRstAfterRequest,  // the whole request, then RST|ACK at once -> kAborted
    kBadKey,           // key kMpaKeyBad
    kRev3,             // Rev 3 (flags and PD as configured)
    kPdTooLong,        // PD_Length kFaultPdLength, PD = private_data zero-padded to fit
    kNoRequest,        // handshake ACK, then silence (reply timeout applies)
  } fault = Fault::kNone;

  // Sets personality = p and the wire and timers to what p's kernel uses with its default
  // module parameters, for an application asking for `ird` responder resources and `ord`
  // initiator depth: MPA rev, flags and IRD/ORD word of the request, SYN options, window
  // scale, window, retransmission count and reply timeout (scaled to rto_cycles). Addresses,
  // private data, ISN and faults are left alone. Table in sim/peer/README.md.
  void set_kernel(Personality p, uint16_t ird = 1, uint16_t ord = 1);
};

enum class State {
  kClosed,         // constructed, start() not called
  kSynSent,        // SYN sent, awaiting SYN-ACK
  kEstablished,    // handshake done, request sent, awaiting the MPA reply
  kReplyReceived,  // reply parsed, waiting close_delay_cycles before closing
  kFinWait1,       // our FIN sent, not acknowledged
  kFinWait2,       // our FIN acknowledged, awaiting the peer's FIN
  kClosing,        // both FINs sent, ours not acknowledged yet
  kTimeWait,       // both FINs exchanged and acknowledged; time_wait_cycles left
  kLastAck,        // peer FIN received, our FIN sent, awaiting its ACK
  // terminal:
  kDone,     // orderly close completed
  kReset,    // a RST from Bouncer was accepted
  kAborted,  // we sent a RST (after a reject: cxgb4 always, siw with fin_after_reject ==
             // false or unread data; kRstAfter* faults)
  kFailed,   // the personality refused the reply or timed out and sent RST, or the
             // retransmissions ran out (RST: irdma; nothing: Linux TCP), or FIN_WAIT2 lasted
             // fin_wait2_cycles (nothing sent); see Outcome::error
};

const char* to_string(State s);

struct Stats {
  uint64_t rx_frames = 0;            // every on_rx call
  uint64_t tx_frames = 0;            // every frame handed out by poll_tx
  uint64_t malformed = 0;            // truncated, not IPv4/TCP, IPv4 fragment, bad lengths
  uint64_t bad_ip_checksum = 0;      // dropped silently
  uint64_t bad_tcp_checksum = 0;     // dropped silently
  uint64_t foreign = 0;              // other MAC, VLAN or 4-tuple: ignored
  uint64_t out_of_window = 0;        // unacceptable sequence number: duplicate ACK sent
  uint64_t challenge_acks = 0;       // in-window RST with seq != RCV.NXT, or a SYN (RFC 5961)
  uint64_t ack_beyond_snd_nxt = 0;   // ACK of unsent data: ACK sent, segment dropped
  uint64_t bad_ack_in_syn_sent = 0;  // RST (seq = their ack) sent, as RFC 793 says
  uint64_t out_of_order = 0;         // buffered for reassembly
  uint64_t ooo_dropped = 0;          // out-of-order buffer full
  uint64_t duplicate_data = 0;       // segments whose data was entirely old (ACKed again)
  uint64_t ignored = 0;              // not started, terminal state, or unexpected flags
  uint64_t irdma_bad_ack = 0;        // irdma: data whose ACK is not SND.NXT, dropped unanswered
};

struct Outcome {
  State state = State::kClosed;
  // The wire: a complete, well-formed MPA reply (reply key, Rev <= 2, PD_Length <= 512) was
  // received, whether or not the personality took it.
  bool rejected = false;           // MPA reply with R = 1
  bool accepted = false;           // MPA reply with R = 0 (not expected from Bouncer)
  std::vector<uint8_t> reject_pd;  // ULP PD; the IRD/ORD word stripped when the reply is enhanced
  uint8_t reply_rev = 0, reply_flags = 0;
  uint16_t reply_pd_length = 0;
  std::optional<uint32_t> reply_ird_ord;  // present iff the reply is enhanced
  std::string error;                      // empty unless something went wrong
  uint64_t syn_cycle = 0;                 // first SYN handed out by poll_tx
  uint64_t synack_cycle = 0;              // SYN-ACK accepted
  uint64_t request_last_cycle = 0;        // last request segment first handed out
  uint64_t reply_cycle = 0;               // complete MPA reply parsed
  uint64_t closed_cycle = 0;              // terminal state entered
  unsigned retransmits = 0;               // total retransmitted segments (SYN, data, FIN)
  // Extensions:
  uint32_t peer_isn = 0;
  uint16_t peer_mss = 0;               // 536 if the SYN-ACK had no MSS option (RFC 1122)
  std::optional<uint8_t> peer_wscale;  // window-scale option of the SYN-ACK
  bool peer_fin = false;               // Bouncer's FIN was received in order
  bool reply_had_fin = false;          // ... in the same segment as the end of the reply
  bool rst_received = false, rst_sent = false;
  uint64_t rst_cycle = 0;  // when the RST was received or handed out
  // What rdma_cm hands the application (sim/peer/README.md, docs/interop.md):
  AppEvent app_event = AppEvent::kNone;
  int app_status = 0;             // event->status, or rdma_connect()'s -errno (kConnectFailed)
  std::vector<uint8_t> app_pd;    // event->param.conn.private_data, private_data_len bytes;
                                  // kAppPdJunk where the kernel hands out unwritten memory
  bool app_kernel_fault = false;  // the kernel dereferences a bad pointer delivering it (siw:
                                  // PD_Length > 256 -> kmemdup of NULL + 4 in iw_cm)
  uint64_t app_cycle = 0;         // when the provider reported it
  // MPA v1 retry (irdma and cxgb4 after a RST to a rev-2 attempt):
  unsigned attempts = 0;       // TCP connections opened (2 after a retry)
  uint8_t request_rev = 0;     // Rev of the last request sent
  uint64_t retry_cycle = 0;    // the RST that started the retry
  uint32_t retry_syn_seq = 0;  // sequence number of the retry's SYN
  Stats stats;
};

class Initiator {
 public:
  // Throws std::invalid_argument for an impossible configuration (rto_cycles 0, request PD
  // over 512 bytes without Fault::kPdTooLong).
  explicit Initiator(InitiatorConfig cfg);

  void start(uint64_t cycle);                                   // queue the SYN
  std::optional<std::vector<uint8_t>> poll_tx(uint64_t cycle);  // next frame to send, or none
  void on_rx(std::span<const uint8_t> frame, uint64_t cycle);   // a frame from Bouncer
  // Next cycle a timer fires (or UINT64_MAX). While a frame waits in the TX queue it returns
  // the cycle of the last call, i.e. "poll now". Timers fire inside poll_tx/on_rx calls whose
  // cycle has reached them.
  uint64_t next_deadline() const;
  const Outcome& outcome() const { return out_; }
  State state() const { return out_.state; }
  // A terminal state was reached and every queued frame has been handed out.
  bool finished() const;
  const InitiatorConfig& config() const { return cfg_; }

  // The MPA request payload (all segments concatenated) of the current attempt.
  const std::vector<uint8_t>& request_bytes() const { return req_; }
  // The request an MPA v1 retry sends (Rev 1, no IRD/ORD word, no fault).
  std::vector<uint8_t> retry_request_bytes() const;

 private:
  // A segment that occupies sequence space, kept until acknowledged (retransmission queue).
  struct Seg {
    uint32_t seq;       // first sequence number
    uint32_t data_off;  // offset of its data in req_
    uint32_t len;       // data bytes
    uint8_t flags;      // TCP flags
    uint16_t ip_id;     // reused on retransmission (the bytes stay identical)
    uint32_t end() const { return seq + len + ((flags & (kTcpSyn | kTcpFin)) ? 1u : 0u); }
  };
  struct TxItem {
    std::vector<uint8_t> frame;
    bool seq_space = false;  // arms the retransmission timer when handed out
    bool syn = false;
    bool last_request = false;
    bool rst = false;
  };
  struct OooSeg {
    uint32_t seq;
    std::vector<uint8_t> data;
    bool fin;
  };
  struct Rx;  // a parsed, validated frame (initiator.cpp)

  void advance(uint64_t cycle);
  void on_rto(uint64_t cycle);
  void on_segment(const Rx& s, uint64_t cycle);
  void on_segment_syn_sent(const Rx& s, uint64_t cycle);
  void accept_data(const Rx& s, bool& need_ack, bool& fin_now);
  void deliver(std::span<const uint8_t> data);
  std::vector<uint8_t> build_request(uint8_t rev, bool enhanced, bool faults) const;
  bool irdma() const { return cfg_.personality == Personality::kIrdma; }
  bool siw() const { return cfg_.personality == Personality::kSiw; }
  bool cxgb4() const { return cfg_.personality == Personality::kCxgb4; }
  bool awaiting_reply() const;
  void parse_stream_reply(uint64_t cycle);  // siw, cxgb4
  void parse_irdma_segment(std::span<const uint8_t> seg, uint64_t cycle);
  void record_wire(std::span<const uint8_t> m);
  void reply_taken(AppEvent e, int status, std::vector<uint8_t> pd, uint64_t cycle);
  void reply_refused(std::string why, AppEvent e, int status, std::vector<uint8_t> pd, bool reset,
                     uint64_t cycle);
  void fin_close();
  void peer_closed_before_reply(bool unread, uint64_t cycle);
  void on_reset(uint64_t cycle, State prev);
  void retry_v1(uint64_t cycle);
  void on_reply_timeout(uint64_t cycle);
  void on_retransmit_exhausted(uint64_t cycle);
  void app(AppEvent e, int status, std::vector<uint8_t> pd, uint64_t cycle);
  std::vector<uint8_t> own_pd() const;
  std::vector<uint8_t> siw_pd(std::span<const uint8_t> pd_written, size_t pd_len) const;
  std::vector<uint8_t> cxgb4_pd(size_t pd_len) const;
  void close(uint64_t cycle);
  void send_fin();
  void send_rst();
  void fail(std::string why, bool send_reset, uint64_t cycle);
  void finish(State s, uint64_t cycle);
  void queue_request();
  void queue_seg(const Seg& s, bool retransmission, bool last_request = false);
  void queue_ack();
  std::vector<uint8_t> build(uint32_t seq, uint32_t ack, uint8_t flags, uint16_t ip_id,
                             std::span<const uint8_t> payload, bool syn_options) const;
  uint16_t next_ip_id() { return ip_id_++; }
  uint32_t rcv_wnd() const;
  bool terminal() const;

  InitiatorConfig cfg_;
  Outcome out_;
  std::vector<uint8_t> req_;  // the request as sent (after fault injection)
  std::deque<TxItem> txq_;
  std::vector<Seg> rtxq_;  // unacknowledged segments, in sequence order
  std::vector<OooSeg> ooo_;
  std::vector<uint8_t> rx_;  // in-order received stream, kept up to the end of the reply
  uint16_t ip_id_;
  uint8_t rev_;  // Rev of the current attempt's request
  bool enh_;     // the current request is enhanced (Rev 2 + 0x10 + IRD/ORD word)
  bool retried_ = false;
  bool cx_overflow_ = false;  // cxgb4: more than kCxgb4MpaBuf reply bytes arrived
  // TCP send/receive state (RFC 793 names)
  uint32_t snd_una_ = 0, snd_nxt_ = 0, rcv_nxt_ = 0;
  uint32_t snd_wnd_ = 0;
  bool ws_ok_ = false;  // window scaling in effect
  bool fin_sent_ = false;
  uint32_t fin_seq_ = 0;
  // timers (UINT64_MAX = off)
  uint64_t rto_deadline_, reply_deadline_, close_deadline_, tw_deadline_, fw2_deadline_;
  uint64_t rto_cur_;
  unsigned backoff_ = 0;
  uint64_t last_cycle_ = 0;
  bool syn_out_ = false, req_out_ = false, reply_done_ = false;
};

}  // namespace bouncer::peer
