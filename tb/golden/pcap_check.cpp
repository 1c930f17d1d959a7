// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// pcap_check: check a capture of Bouncer's port with the golden model alone (its own parser
// and checksum code; nothing from rtl/, hostsw/ or sim/).
//
// Every frame must be an Ethernet [802.1Q] IPv4 TCP segment whose IPv4 header and TCP
// checksums verify. Each one is classified and printed on one line: a TCP control segment
// (SYN, SYN-ACK with its MSS/window-scale options, ACK, FIN, RST), a piece of the peer's MPA
// request (its first segment or a continuation: the request is reassembled per connection),
// or an MPA reject (validated in full by parse_mpa_reply). The direction comes from the side
// that sent the SYN (the peer); seq/ack are relative to each side's ISN. At the end, each
// connection (4-tuple) is summarized as a sequence of tokens and checked:
//  - the SYN-ACK acknowledges the SYN; the request is well formed and complete before the
//    reject, which acknowledges all of it, starts at the listener's ISN + 1 and mirrors the
//    request's revision and marker/CRC/enhanced flags (docs/reject-frame.md);
//  - every connection that got a reject ended cleanly: FIN both ways (each FIN acknowledged)
//    or a RST. A capture with no SYN at all (`bouncer sim --mode context`: TX only, rejects
//    only) cannot show the end, so that check is skipped there.
// Exit status 1 on any invalid frame or failed check, or when there is no reject at all.
//
// --tshark: also run Wireshark's tshark with IP/TCP checksum validation on (golden/tshark.hpp)
// and require that it sees every reject as an MPA reply with rej_flag 1 and the same
// revision, PD_Length and private data, no other MPA reply, and no checksum error, malformed
// packet or error-severity expert info (warnings are listed, not failed). Retransmitted
// rejects need not be dissected (tshark does not hand TCP retransmissions to the MPA
// dissector). That dissector decodes a reply only after its request, and only a request whose
// 20-byte header is in one segment; so where the capture has no request (TX only) or a request
// split inside its header, tshark reads a temporary copy with a golden-built request inserted
// (the split pieces left out) and its frame numbers are mapped back.
//
// Usage: pcap_check [--tshark] FILE.pcap
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "golden/frame_parser.hpp"
#include "golden/pcap_io.hpp"
#include "golden/tcp_ctrl.hpp"
#include "golden/tshark.hpp"

namespace {

using golden::MpaKey;

constexpr uint32_t kSeverityError = 0x800000;  // Wireshark PI_ERROR

// Sequence-space comparisons (RFC 793 arithmetic).
bool seq_lt(uint32_t a, uint32_t b) { return static_cast<int32_t>(a - b) < 0; }

struct Endpoint {
  uint32_t ip = 0;
  uint16_t port = 0;
  auto operator<=>(const Endpoint&) const = default;
};

std::string ep_str(const Endpoint& e) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%u.%u.%u.%u:%u", e.ip >> 24, (e.ip >> 16) & 255,
                (e.ip >> 8) & 255, e.ip & 255, e.port);
  return buf;
}

std::string flags_str(uint8_t f) {
  static constexpr std::pair<uint8_t, const char*> kNames[] = {
      {golden::kTcpSyn, "SYN"}, {golden::kTcpFin, "FIN"}, {golden::kTcpRst, "RST"},
      {golden::kTcpPsh, "PSH"}, {golden::kTcpAck, "ACK"}, {0x20, "URG"}};
  std::string s;
  for (const auto& [bit, name] : kNames) {
    if ((f & bit) == 0) continue;
    if (!s.empty()) s += ",";
    s += name;
  }
  return "[" + s + "]";
}

uint16_t rd16(const std::vector<uint8_t>& b, size_t off) {
  return static_cast<uint16_t>(b[off] << 8 | b[off + 1]);
}

// One side of a connection (index 0: the source of its first frame, 1: the other).
struct Side {
  Endpoint ep;
  std::optional<uint32_t> isn;
  std::optional<uint32_t> snd_max;  // highest sequence number sent + 1
  std::set<uint32_t> starts;        // sequence numbers of its segments that occupy space
  std::optional<uint32_t> fin_seq;  // sequence number of its FIN
  bool fin_acked = false;
};

// The peer's MPA request, reassembled from its segments.
struct Request {
  uint32_t start = 0;                            // sequence number of its first byte
  std::vector<uint8_t> bytes;                    // in-order bytes from `start`
  std::map<uint32_t, std::vector<uint8_t>> ooo;  // out-of-order pieces by offset
  std::optional<size_t> total;                   // 20 + PD_Length once the header is in
  std::vector<uint32_t> frames;  // frames that carried request bytes, until complete
  bool header_split = false;     // its first segment held fewer than 20 bytes
  uint8_t flags = 0, rev = 0;
  uint16_t pd_length = 0;
  bool complete() const { return total && bytes.size() >= *total; }
};

struct Token {
  std::string text;
  int side = 0;
};

struct Conn {
  unsigned id = 0;
  Side side[2];
  std::optional<int> peer;  // index of the initiator's side
  bool syn_ws = false, saw_syn = false;
  std::optional<Request> req;
  unsigned rejects = 0;
  std::optional<size_t> first_reject;  // index into Checker::rejects
  std::optional<int> rst_from;
  std::vector<Token> tokens;
  std::vector<std::string> problems;
};

struct RejectSeen {
  uint32_t frame = 0;
  bool rtx = false;  // a retransmission (tshark does not hand those to the MPA dissector)
  unsigned rev = 0, pd_length = 0, flags = 0;
  std::vector<uint8_t> pd;  // as on the wire: IRD/ORD word (if any), then the private data
};

struct Checker {
  std::vector<Conn> conns;
  std::map<std::pair<Endpoint, Endpoint>, size_t> by_tuple;
  std::vector<RejectSeen> rejects;
  // The copy tshark reads: golden-built requests inserted before these frames, these frames
  // left out (frame numbers of the original; see the header comment).
  std::map<uint32_t, golden::Packet> tshark_insert;
  std::set<uint32_t> tshark_drop;
  unsigned invalid = 0;
  bool any_syn = false;

  Conn& conn_of(const Endpoint& src, const Endpoint& dst) {
    const auto key = src < dst ? std::make_pair(src, dst) : std::make_pair(dst, src);
    auto [it, fresh] = by_tuple.try_emplace(key, conns.size());
    if (fresh) {
      Conn c;
      c.id = static_cast<unsigned>(conns.size());
      c.side[0].ep = src;
      c.side[1].ep = dst;
      conns.push_back(std::move(c));
    }
    return conns[it->second];
  }

  // Appends the peer's payload at `seq` to the request; returns what the segment was.
  std::string add_request_bytes(Conn& c, uint32_t n, const golden::ParsedSegment& seg,
                                std::string* tok, std::string* bad);

  void frame(uint32_t n, const golden::Packet& p);
  bool summarize();
  bool tshark_check(const std::string& path, const std::vector<golden::Packet>& pkts);
};

std::string Checker::add_request_bytes(Conn& c, uint32_t n, const golden::ParsedSegment& seg,
                                       std::string* tok, std::string* bad) {
  const uint32_t seq = seg.seq;
  const std::vector<uint8_t>& pl = seg.payload;
  Request& r = *c.req;
  const uint32_t off = seq - r.start;
  const size_t have_before = r.bytes.size();
  const bool first = off == 0;
  if (off > 0x7FFFFFFF) {
    *bad = "peer data before the start of its MPA request";
    return "";
  }
  if (r.total && off + pl.size() > *r.total) {
    *bad = "peer data beyond its MPA request (" + std::to_string(off + pl.size()) + " > " +
           std::to_string(*r.total) + " bytes) before the reply";
    return "";
  }
  // Overlap with what is already in must be identical (a retransmission).
  for (size_t i = 0; i < pl.size() && off + i < r.bytes.size(); ++i) {
    if (r.bytes[off + i] != pl[i]) {
      *bad = "retransmitted request bytes differ from the first copy";
      return "";
    }
  }
  if (off > r.bytes.size()) {
    r.ooo[off] = pl;
  } else if (off + pl.size() > r.bytes.size()) {
    r.bytes.insert(r.bytes.end(), pl.begin() + (r.bytes.size() - off), pl.end());
  }
  for (auto it = r.ooo.begin(); it != r.ooo.end() && it->first <= r.bytes.size();) {
    const size_t o = it->first;
    if (o + it->second.size() > r.bytes.size()) {
      r.bytes.insert(r.bytes.end(), it->second.begin() + (r.bytes.size() - o), it->second.end());
    }
    it = r.ooo.erase(it);
  }
  // The header, once its 20 bytes are in.
  if (!r.total && r.bytes.size() >= golden::kMpaHeaderLen) {
    if (golden::mpa_key_of(r.bytes) != MpaKey::kRequest) {
      *bad = "the peer's first data is not an MPA request (key)";
      return "";
    }
    r.flags = r.bytes[16];
    r.rev = r.bytes[17];
    r.pd_length = rd16(r.bytes, 18);
    if (r.rev != 1 && r.rev != 2) {
      *bad = "MPA request revision " + std::to_string(r.rev);
      return "";
    }
    if (r.pd_length > golden::kMpaPdMax) {
      *bad = "MPA request PD_Length " + std::to_string(r.pd_length) + " > 512";
      return "";
    }
    if (golden::is_enhanced(r.rev, r.flags) && r.pd_length < golden::kMpaIrdOrdLen) {
      *bad = "enhanced MPA request with PD_Length < 4";
      return "";
    }
    r.total = golden::kMpaHeaderLen + r.pd_length;
    if (r.bytes.size() > *r.total ||
        (!r.ooo.empty() && r.ooo.rbegin()->first + r.ooo.rbegin()->second.size() > *r.total)) {
      *bad = "peer data beyond its MPA request before the reply";
      return "";
    }
  }
  const std::string of_total = r.total ? std::to_string(*r.total) : "?";
  const std::string range =
      "bytes " + std::to_string(off) + ".." + std::to_string(off + pl.size()) + " of " + of_total;
  const bool now_complete = r.complete() && have_before < *r.total;
  if (have_before == 0 && first && pl.size() < golden::kMpaHeaderLen) r.header_split = true;
  if (!r.total || have_before < *r.total) r.frames.push_back(n);
  if (now_complete && r.header_split) {
    // For tshark: the whole request as one golden-built segment in place of its pieces.
    const auto& b = r.bytes;
    golden::RejectParams q;
    q.rem_mac.b = seg.src_mac;
    q.loc_mac.b = seg.dst_mac;
    q.vlan_en = seg.vlan;
    q.vlan_tci = seg.vlan_tci;
    q.loc_ip = seg.dst_ip;
    q.rem_ip = seg.src_ip;
    q.loc_port = seg.dst_port;
    q.rem_port = seg.src_port;
    q.tos = seg.tos;
    q.ttl = seg.ttl;
    q.ip_id = static_cast<uint16_t>(seg.ip_id ^ 0x8000);  // the builder flips it back
    q.snd_nxt = seg.ack;
    q.rcv_nxt = r.start + static_cast<uint32_t>(*r.total);
    q.rcv_wnd = seg.window;
    q.req_rev = r.rev;
    q.req_flags = r.flags;
    size_t pd_off = golden::kMpaHeaderLen;
    if (golden::is_enhanced(r.rev, r.flags)) {
      q.req_ird_ord = static_cast<uint32_t>(rd16(b, 20)) << 16 | rd16(b, 22);
      pd_off += golden::kMpaIrdOrdLen;
    }
    const std::vector<uint8_t> pd(b.begin() + static_cast<std::ptrdiff_t>(pd_off),
                                  b.begin() + static_cast<std::ptrdiff_t>(*r.total));
    tshark_insert[r.frames.front()] = golden::build_mpa_request_frame(q, pd);
    tshark_drop.insert(r.frames.begin(), r.frames.end());
  }
  if (first) {
    if (!r.total) {
      *tok = "REQ";
      return "MPA request, first " + std::to_string(pl.size()) + " bytes (header incomplete)";
    }
    char buf[96];
    std::snprintf(buf, sizeof buf, "MPA request rev %u flags 0x%02x PD_Length %u", r.rev, r.flags,
                  r.pd_length);
    *tok = "REQ(" + std::to_string(r.pd_length) + ")";
    return std::string(buf) + (pl.size() == *r.total ? "" : " (" + range + ")");
  }
  *tok = "REQ+";
  return "MPA request continued (" + range + (now_complete ? ", request complete)" : ")");
}

// The MPA request a reject answers (the peer's segment just before it), from the golden model.
golden::Packet request_for(const golden::ParsedReject& r) {
  golden::RejectParams q;
  q.rem_mac.b = r.dst_mac;
  q.loc_mac.b = r.src_mac;
  q.vlan_en = r.vlan;
  q.vlan_tci = r.vlan_tci;
  q.loc_ip = r.src_ip;
  q.rem_ip = r.dst_ip;
  q.tos = r.tos;
  q.ttl = r.ttl;
  q.ip_id = r.ip_id;
  q.loc_port = r.src_port;
  q.rem_port = r.dst_port;
  q.snd_nxt = r.seq;
  q.rcv_nxt = r.ack;
  q.rcv_wnd = r.window;
  q.req_rev = r.rev;
  q.req_flags = static_cast<uint8_t>(
      r.mpa_flags & (golden::kMpaFlagMarkers | golden::kMpaFlagCrc | golden::kMpaFlagEnhanced));
  q.req_ird_ord = r.ird_ord.value_or(0);
  return golden::build_mpa_request_frame(q, {});
}

void Checker::frame(uint32_t n, const golden::Packet& p) {
  std::string why;
  auto seg = golden::parse_tcp_segment(p, &why);
  if (!seg) {
    std::printf("#%-4u %4zu B  INVALID: %s\n", n, p.size(), why.c_str());
    ++invalid;
    return;
  }
  const Endpoint src{seg->src_ip, seg->src_port}, dst{seg->dst_ip, seg->dst_port};
  Conn& c = conn_of(src, dst);
  const int s = c.side[0].ep == src ? 0 : 1;
  const int o = 1 - s;
  const uint8_t fl = seg->tcp_flags;
  const bool syn = fl & golden::kTcpSyn, ackf = fl & golden::kTcpAck;
  const bool fin = fl & golden::kTcpFin, rst = fl & golden::kTcpRst;
  const MpaKey key = golden::mpa_key_of(seg->payload);
  const uint32_t plen = static_cast<uint32_t>(seg->payload.size());

  // Roles: the SYN's sender is the peer; without a handshake, the MPA keys tell.
  auto set_peer = [&c](int idx) {
    if (!c.peer) {
      c.peer = idx;
    } else if (*c.peer != idx) {
      c.problems.push_back("both sides act as the initiator");
    }
  };
  if (syn && !ackf && !rst) {
    set_peer(s);
  } else if (syn && ackf && !rst) {
    set_peer(o);
  } else if (!c.peer && key == MpaKey::kRequest) {
    c.peer = s;
  } else if (!c.peer && key == MpaKey::kReply) {
    c.peer = o;
  }
  const char* dir = !c.peer ? "?" : *c.peer == s ? "peer->bouncer" : "bouncer->peer";
  const bool from_peer = c.peer && *c.peer == s;

  // ISNs, relative numbers, retransmissions, FIN bookkeeping.
  Side& me = c.side[s];
  Side& other = c.side[o];
  if (syn) {
    if (me.isn && *me.isn != seg->seq) c.problems.push_back("SYN with a second ISN");
    me.isn = seg->seq;
  }
  auto rel = [](uint32_t v, const std::optional<uint32_t>& isn) {
    return isn ? std::to_string(v - *isn) : std::to_string(v) + "(abs)";
  };
  const std::string seq_s = rel(seg->seq, me.isn);
  const std::string ack_s = ackf ? rel(seg->ack, other.isn) : "-";
  const uint32_t seq_len = plen + (syn ? 1 : 0) + (fin ? 1 : 0);
  // A retransmission repeats an earlier segment's sequence number; a segment below the highest
  // one sent that is not a retransmission arrived out of order (the capture point is the
  // listener's port: what the wire lost on the way in is not in it).
  bool rtx = false, ooo = false;
  if (seq_len > 0 && !rst) {
    const uint32_t end = seg->seq + seq_len;
    rtx = !me.starts.insert(seg->seq).second;
    ooo = !rtx && me.snd_max && seq_lt(seg->seq, *me.snd_max);
    if (!me.snd_max || seq_lt(*me.snd_max, end)) me.snd_max = end;
  }
  if (ackf && other.fin_seq && seq_lt(*other.fin_seq, seg->ack)) other.fin_acked = true;
  if (fin) {
    const uint32_t fs = seg->seq + plen;
    if (me.fin_seq && *me.fin_seq != fs) c.problems.push_back("FIN at two sequence numbers");
    me.fin_seq = fs;
  }

  std::string what, tok, bad;
  auto opts = [&seg]() {
    std::string t;
    if (seg->mss) t += " mss " + std::to_string(*seg->mss);
    if (seg->wscale) t += " ws " + std::to_string(*seg->wscale);
    return t.empty() ? std::string(" (no options)") : t;
  };
  if (rst) {
    what = "RST" + (plen ? " with " + std::to_string(plen) + " bytes of data" : std::string());
    tok = "RST";
    if (!c.rst_from) c.rst_from = s;
  } else if (syn && !ackf) {
    what = "SYN" + opts();
    tok = "SYN";
    c.saw_syn = any_syn = true;
    c.syn_ws = seg->wscale.has_value();
    if (plen) bad = "SYN carrying data";
  } else if (syn) {
    what = "SYN-ACK" + opts();
    tok = "SYN-ACK";
    if (plen) bad = "SYN-ACK carrying data";
    if (!other.isn) {
      c.problems.push_back("SYN-ACK without a SYN in the capture");
    } else if (seg->ack != *other.isn + 1) {
      c.problems.push_back("SYN-ACK acknowledges " + rel(seg->ack, other.isn) + ", not the SYN");
    }
    if (seg->wscale && c.saw_syn && !c.syn_ws) {
      c.problems.push_back("window scale in the SYN-ACK but not in the SYN");
    }
  } else if (!ackf) {
    bad = "segment without ACK after the handshake";
  } else if (plen == 0) {
    what = fin ? "FIN" : "ACK";
    tok = what;
  } else if (from_peer && key != MpaKey::kReply) {
    // Peer data: a piece of its MPA request (it must send nothing else before the reply).
    if (!c.req) {
      c.req.emplace();
      c.req->start = me.isn ? *me.isn + 1 : seg->seq;
    }
    what = add_request_bytes(c, n, *seg, &tok, &bad);
  } else if (key == MpaKey::kReply) {
    std::string rwhy;
    auto r = golden::parse_mpa_reply(p, &rwhy);
    if (!r) {
      bad = rwhy;
    } else if ((r->mpa_flags & golden::kMpaFlagReject) == 0) {
      bad = "MPA reply without the Reject bit";
    } else if (from_peer) {
      bad = "MPA reply sent by the initiator";
    } else {
      char buf[160];
      std::snprintf(buf, sizeof buf,
                    "MPA reject rev %u flags 0x%02x PD_Length %u (private data %zu B", r->rev,
                    r->mpa_flags, r->pd_length, r->private_data.size());
      what = buf;
      if (r->ird_ord) {
        std::snprintf(buf, sizeof buf, ", IRD/ORD 0x%08x", static_cast<unsigned>(*r->ird_ord));
        what += buf;
      }
      what += ")";
      if (fin) what += " + FIN";
      if (r->vlan) what += " vlan " + std::to_string(r->vlan_tci & 0xFFF);
      tok = "REJ(" + std::to_string(r->pd_length) + ")" + (fin ? "+FIN" : "");
      ++c.rejects;
      RejectSeen rs{n, rtx, r->rev, r->pd_length, r->mpa_flags, {}};
      if (r->ird_ord) {
        for (int sh = 24; sh >= 0; sh -= 8)
          rs.pd.push_back(static_cast<uint8_t>(*r->ird_ord >> sh));
      }
      rs.pd.insert(rs.pd.end(), r->private_data.begin(), r->private_data.end());
      if (c.first_reject) {
        const RejectSeen& f0 = rejects[*c.first_reject];
        if (f0.rev != rs.rev || f0.flags != rs.flags || f0.pd != rs.pd) {
          c.problems.push_back("reject in frame #" + std::to_string(n) + " differs from frame #" +
                               std::to_string(f0.frame));
        }
      } else {
        c.first_reject = rejects.size();
        if (!c.req) tshark_insert[n] = request_for(*r);
      }
      rejects.push_back(std::move(rs));
      // Against the request and the handshake, when the capture has them.
      if (c.saw_syn && (!c.req || !c.req->complete())) {
        c.problems.push_back("reject before the whole MPA request is in the capture");
      }
      if (c.req && c.req->total) {
        const Request& q = *c.req;
        const bool enh = golden::is_enhanced(q.rev, q.flags);
        const uint8_t want =
            static_cast<uint8_t>((q.flags & (golden::kMpaFlagMarkers | golden::kMpaFlagCrc)) |
                                 golden::kMpaFlagReject | (enh ? golden::kMpaFlagEnhanced : 0));
        if (r->rev != q.rev) {
          c.problems.push_back("reject rev " + std::to_string(r->rev) + " != request rev " +
                               std::to_string(q.rev));
        }
        if (r->mpa_flags != want) {
          std::snprintf(buf, sizeof buf, "reject flags 0x%02x, want 0x%02x from the request",
                        r->mpa_flags, want);
          c.problems.push_back(buf);
        }
        if (q.complete() && r->ack != q.start + *q.total) {
          c.problems.push_back("reject acknowledges " + rel(r->ack, other.isn) +
                               ", not the end of the request (" +
                               rel(q.start + static_cast<uint32_t>(*q.total), other.isn) + ")");
        }
      }
      if (me.isn && r->seq != *me.isn + 1) {
        c.problems.push_back("reject at seq " + rel(r->seq, me.isn) + ", not ISN + 1");
      }
    }
  } else {
    bad = std::to_string(plen) + " bytes of " + (c.peer ? "listener" : "unattributed") +
          " data that is not an MPA reply";
  }

  if (!bad.empty()) {
    ++invalid;
    c.problems.push_back("frame #" + std::to_string(n) + ": " + bad);
    what = "INVALID: " + bad;
    tok = "INVALID";
  }
  c.tokens.push_back({tok + (rtx ? "*" : ""), s});
  std::printf("#%-4u %4zu B  c%-3u %-13s %-11s seq %-10s ack %-10s %s%s\n", n, p.size(), c.id, dir,
              flags_str(fl).c_str(), seq_s.c_str(), ack_s.c_str(), what.c_str(),
              rtx   ? " (retransmission)"
              : ooo ? " (out of order)"
                    : "");
}

bool Checker::summarize() {
  unsigned rejected = 0, clean = 0, consistent = 0;
  std::printf("\nconnections (> peer->bouncer, < bouncer->peer, * retransmission):\n");
  for (Conn& c : conns) {
    const int peer = c.peer.value_or(0);
    const Side& ps = c.side[peer];
    const Side& bs = c.side[1 - peer];
    std::printf("c%-3u %s -> %s  ", c.id, ep_str(ps.ep).c_str(), ep_str(bs.ep).c_str());
    for (const Token& t : c.tokens) {
      const char* arrow = !c.peer ? "?" : t.side == *c.peer ? ">" : "<";
      std::printf("%s %s ", t.text.c_str(), arrow);
    }
    const bool fins = ps.fin_seq && bs.fin_seq && ps.fin_acked && bs.fin_acked;
    const std::string rst =
        c.rst_from ? std::string("RST from the ") + (*c.rst_from == peer ? "peer" : "listener")
                   : "";
    const bool ok_end = fins || c.rst_from;
    std::string end;
    if (fins) {
      end = "FIN both ways" + (rst.empty() ? "" : ", later " + rst);
    } else if (c.rst_from) {
      end = rst;
    } else if (ps.fin_seq && bs.fin_seq) {
      end = "FIN both ways, not both acknowledged";
    } else if (ps.fin_seq || bs.fin_seq) {
      end = std::string("FIN from the ") + (ps.fin_seq ? "peer" : "listener") + " only";
    } else {
      end = "open";
    }
    std::string verdict;
    if (c.rejects > 0) {
      ++rejected;
      if (!any_syn) {
        verdict = "rejected; end not checked (no handshake in this capture)";
        ++clean;
      } else if (!c.saw_syn) {
        verdict = "rejected; no SYN in the capture";
        c.problems.push_back("connection without its SYN in a capture that has handshakes");
      } else if (ok_end) {
        verdict = "rejected, " + end;
        ++clean;
      } else {
        verdict = "rejected, " + end;
        c.problems.push_back("rejected connection did not end cleanly (" + end + ")");
      }
    } else {
      verdict = "no reject, " + end;
    }
    std::printf(" [%s]\n", verdict.c_str());
    for (const std::string& pr : c.problems) std::printf("     !! %s\n", pr.c_str());
    if (c.problems.empty()) ++consistent;
  }

  bool ok = true;
  auto check = [&ok](bool pass, const std::string& what) {
    std::printf("check: %-76s %s\n", what.c_str(), pass ? "ok" : "FAILED");
    if (!pass) ok = false;
  };
  std::printf("\n");
  check(invalid == 0, "every frame is a valid IPv4/TCP segment with correct checksums (" +
                          std::to_string(invalid) + " invalid)");
  check(!rejects.empty(),
        "the capture holds MPA rejects (" + std::to_string(rejects.size()) + " frames)");
  if (any_syn) {
    check(clean == rejected, "every rejected connection ended with FIN both ways or RST (" +
                                 std::to_string(clean) + " of " + std::to_string(rejected) + ")");
  } else {
    std::printf("check: %-76s %s\n", "every rejected connection ended with FIN both ways or RST",
                "skipped (no handshake: a TX-only capture)");
  }
  check(consistent == conns.size(), "every connection is consistent (" +
                                        std::to_string(consistent) + " of " +
                                        std::to_string(conns.size()) + ")");
  return ok;
}

bool Checker::tshark_check(const std::string& path, const std::vector<golden::Packet>& pkts) {
  bool ok = true;
  auto check = [&ok](bool pass, const std::string& what) {
    std::printf("check: %-76s %s\n", what.c_str(), pass ? "ok" : "FAILED");
    if (!pass) ok = false;
  };
  if (!golden::tshark_available()) {
    check(false, "tshark: found on PATH");
    return false;
  }
  // Wireshark's MPA dissector only decodes a reply whose request it has seen. For rejects
  // whose request is not in the capture, tshark reads a copy with the golden model's request
  // inserted just before each of them; frame numbers are mapped back.
  std::vector<uint32_t> orig_of(1, 0);  // tshark frame -> frame of `path` (0: inserted)
  std::vector<golden::Packet> augmented;
  for (uint32_t f = 1; f <= pkts.size(); ++f) {
    if (auto it = tshark_insert.find(f); it != tshark_insert.end()) {
      augmented.push_back(it->second);
      orig_of.push_back(0);
    }
    if (tshark_drop.count(f) != 0) continue;
    augmented.push_back(pkts[f - 1]);
    orig_of.push_back(f);
  }
  const size_t inserted = tshark_insert.size();
  std::string tshark_path = path;
  char tmp[] = "/tmp/pcap_check_XXXXXX";
  if (inserted > 0 || !tshark_drop.empty()) {
    const int fd = mkstemp(tmp);
    std::string err;
    if (fd < 0 || (close(fd), !golden::write_pcap(tmp, augmented, &err))) {
      std::printf("tshark: cannot write a temporary capture: %s\n", err.c_str());
      check(false, "tshark: ran");
      return false;
    }
    tshark_path = tmp;
    std::printf(
        "tshark: reads a copy with %zu golden-built MPA requests (for rejects whose request "
        "is not in the capture, or in place of a request whose header is split; %zu "
        "frames left out)\n",
        inserted, tshark_drop.size());
  }
  const golden::TsharkReport rep = golden::tshark_check_mpa(tshark_path);
  if (tshark_path != path) unlink(tmp);
  if (!rep.ok) {
    std::printf("tshark: %s\n", rep.error.c_str());
    check(false, "tshark: ran");
    return false;
  }
  auto name = [&orig_of](uint32_t tf) {
    if (tf < orig_of.size() && orig_of[tf] != 0) return "frame " + std::to_string(orig_of[tf]);
    return "inserted request (tshark frame " + std::to_string(tf) + ")";
  };

  std::map<uint32_t, const golden::TsharkMpaRow*> rows;  // by frame of `path`
  unsigned foreign = 0;
  for (const auto& r : rep.replies) {
    if (r.frame < orig_of.size() && orig_of[r.frame] != 0) {
      rows[orig_of[r.frame]] = &r;
    } else {
      std::printf("tshark: %s: dissected as an MPA reply\n", name(r.frame).c_str());
      ++foreign;
    }
  }
  unsigned matched = 0, required = 0, rtx_skipped = 0;
  for (const RejectSeen& g : rejects) {
    auto it = rows.find(g.frame);
    std::string diff;
    if (it == rows.end()) {
      if (g.rtx) {
        ++rtx_skipped;  // tshark leaves TCP retransmissions undissected
        continue;
      }
      diff = "not dissected as an MPA reply";
    } else if (!it->second->rej_flag) {
      diff = "iwarp_mpa.rej_flag is 0";
    } else if (it->second->rev != g.rev) {
      diff = "iwarp_mpa.rev " + std::to_string(it->second->rev);
    } else if (it->second->pd_length != g.pd_length) {
      diff = "iwarp_mpa.pdlength " + std::to_string(it->second->pd_length) + ", golden " +
             std::to_string(g.pd_length);
    } else if (it->second->private_data != g.pd) {
      diff = "iwarp_mpa.privatedata differs";
    }
    ++required;
    if (diff.empty()) {
      ++matched;
    } else {
      std::printf("tshark: frame %u: %s\n", g.frame, diff.c_str());
    }
    if (it != rows.end()) rows.erase(it);
  }
  for (const auto& [f, r] : rows) {
    std::printf("tshark: frame %u: MPA reply that golden does not see as a reject\n", f);
  }
  // Expert infos: errors fail; warnings (RST, segments lost on the wire) are listed by kind.
  unsigned errors = 0;
  std::map<std::string, std::vector<std::string>> warnings;
  for (const auto& e : rep.experts) {
    if (e.severity >= kSeverityError) {
      ++errors;
      std::printf("tshark: %s: expert error: %s\n", name(e.frame).c_str(), e.message.c_str());
    } else {
      warnings[e.message].push_back(name(e.frame));
    }
  }
  for (const auto& [msg, where] : warnings) {
    std::string list;
    for (size_t i = 0; i < where.size() && i < 4; ++i) list += (i ? ", " : "") + where[i];
    if (where.size() > 4) list += ", ...";
    std::printf("tshark: expert warning (not a failure) x%zu: %s (%s)\n", where.size(), msg.c_str(),
                list.c_str());
  }
  for (uint32_t f : rep.ip_checksum_bad)
    std::printf("tshark: %s: bad IPv4 checksum\n", name(f).c_str());
  for (uint32_t f : rep.tcp_checksum_bad)
    std::printf("tshark: %s: bad TCP checksum\n", name(f).c_str());
  for (uint32_t f : rep.malformed) std::printf("tshark: %s: malformed\n", name(f).c_str());

  check(rep.frames == augmented.size(), "tshark: read every frame (" + std::to_string(rep.frames) +
                                            " of " + std::to_string(augmented.size()) + ")");
  check(matched == required && rows.empty() && foreign == 0,
        "tshark: every reject: rej_flag 1, same rev, PD_Length, PD (" + std::to_string(matched) +
            " of " + std::to_string(required) +
            (rtx_skipped ? ", " + std::to_string(rtx_skipped) + " retransmissions not dissected"
                         : std::string()) +
            ")");
  check(rep.ip_checksum_bad.empty() && rep.tcp_checksum_bad.empty(),
        "tshark: IPv4 and TCP checksums (validation on) all good");
  check(rep.malformed.empty() && errors == 0, "tshark: no malformed packet or expert error");
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  std::string path;
  bool with_tshark = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--tshark") {
      with_tshark = true;
    } else if (path.empty() && !a.starts_with("-")) {
      path = a;
    } else {
      path.clear();
      break;
    }
  }
  if (path.empty()) {
    std::fprintf(stderr, "usage: %s [--tshark] FILE.pcap\n", argv[0]);
    return 2;
  }
  std::string err;
  auto pkts = golden::read_pcap(path, &err);
  if (!pkts) {
    std::fprintf(stderr, "pcap_check: %s\n", err.c_str());
    return 1;
  }
  Checker ck;
  uint32_t n = 0;
  for (const auto& p : *pkts) ck.frame(++n, p);
  bool ok = ck.summarize();
  std::printf("%s: %u frames, %zu connections, %zu valid MPA rejects, %u invalid\n", path.c_str(),
              n, ck.conns.size(), ck.rejects.size(), ck.invalid);
  if (with_tshark && !ck.tshark_check(path, *pkts)) ok = false;
  std::printf("pcap_check: %s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
