// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// `bouncer sim --mode peer`: the passive CM end to end. One listener; N simulated iWARP
// initiators connect through the simulated wire (loss both ways); the host takes every
// CONNECT_REQUEST off the event queue and rejects it (or the listener's auto-reject does);
// each peer must end up with exactly the reject PD meant for it, and the hardware with no
// connection left (CM_CONNS 0).
#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstring>
#include <exception>
#include <map>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "bouncer/cm.hpp"
#include "bouncer/device.hpp"
#include "bouncer/sim/platform.hpp"
#include "bouncer/sim/tcp_frame.hpp"
#include "sim_cmd.hpp"

namespace bouncer::cli {

namespace {

constexpr uint32_t kLocalIp = 0x0A000001;  // 10.0.0.1
constexpr uint16_t kLocalPort = 20049;     // NFS/RDMA
constexpr uint16_t kFirstRemotePort = 49152;
constexpr MacAddr kLocalMac = {0x02, 0x00, 0x00, 0x00, 0x00, 0x01};
// IRD/ORD word: ctrl_ird = peer-to-peer | IRD, ctrl_ord = RDMA Read RTR | ORD.
constexpr uint32_t ird_ord_word(unsigned ird, unsigned ord) {
  return (uint32_t{0x8000u | ird} << 16) | (0x4000u | ord);
}
constexpr unsigned kMaxIrdOrd = 16;  // the listener's limit with --auto-reject ird-ord
constexpr uint64_t kPollCycles = 64;

// Timers scaled for simulation (the reset values are seconds at 250 MHz): 16-cycle ticks,
// RTO 20k cycles, TIME_WAIT 4k cycles. The peers use the same RTO.
constexpr uint64_t kRtoCycles = 20'000;
TimerConfig sim_timers() {
  TimerConfig t;
  t.tick_cycles = 16;
  t.rto_init = kRtoCycles / 16;
  t.rto_max = 8 * kRtoCycles / 16;
  t.rtx_max = 6;
  t.mpa_timeout = 200'000 / 16;
  t.fin_timeout = 400'000 / 16;
  t.time_wait = 4'000 / 16;
  return t;
}

// splitmix64: the ISN key from the seed, so a run is reproducible.
std::array<uint32_t, 4> key_from_seed(uint64_t seed) {
  std::array<uint32_t, 4> k{};
  uint64_t x = seed;
  for (auto& w : k) {
    x += 0x9E3779B97F4A7C15ull;
    uint64_t z = x;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    w = static_cast<uint32_t>(z ^ (z >> 31));
  }
  return k;
}

std::vector<uint8_t> to_u8(std::span<const std::byte> s) {
  std::vector<uint8_t> v(s.size());
  std::transform(s.begin(), s.end(), v.begin(),
                 [](std::byte b) { return std::to_integer<uint8_t>(b); });
  return v;
}

// Whether a frame is an MPA reply (a reject from us) to `to`.
bool mpa_reply_to(std::span<const uint8_t> f, const sim::TcpEndpoint& to) {
  static constexpr char kKey[] = "MPA ID Rep Frame";
  if (sim::tcp_destination(f) != to) return false;
  const auto payload = sim::tcp_payload(f);
  return payload.size() >= sizeof(kKey) - 1 &&
         std::memcmp(payload.data(), kKey, sizeof(kKey) - 1) == 0;
}

struct Conn {
  size_t peer = 0;
  uint32_t ip = 0;
  uint16_t port = 0;
  std::vector<uint8_t> request_pd;
  std::optional<uint32_t> cm_id;
  std::string decision = "none";
  bool host_rejected = false;
  uint64_t event_cycle = 0;
  std::vector<uint8_t> reject_pd;  // what the host posted
  std::optional<regs::AeqEvent> terminal;
  bool request_pd_ok = true;
  uint8_t rev = 0;
  size_t event_pd_len = 0;
};

std::vector<uint8_t> request_pd(unsigned i, unsigned len) {
  const std::string base = fmt::format("initiator #{} would like an RDMA connection", i);
  std::vector<uint8_t> pd(len);
  for (unsigned k = 0; k < len; ++k) pd[k] = static_cast<uint8_t>(base[k % base.size()]);
  return pd;
}

std::string cycles_or_dash(uint64_t from, uint64_t to) {
  return from != 0 && to >= from ? fmt::format("{}", to - from) : "-";
}

}  // namespace

int run_peer_mode(const SimOptions& o) {
  if (o.vlan) {
    fmt::print(stderr, "bouncer sim: --vlan is for --mode context (listeners are untagged)\n");
    return 1;
  }
  if (o.auto_reject == "backlog" && o.backlog == 0) {
    fmt::print(stderr, "bouncer sim: --auto-reject backlog needs --backlog N (N > 0)\n");
    return 1;
  }
  if (o.rev == 2 && o.peer_pd_len > 508) {
    fmt::print(stderr, "bouncer sim: --peer-pd-len {} plus the rev-2 IRD/ORD word exceeds 512\n",
               o.peer_pd_len);
    return 1;
  }
  sim::PlatformConfig pc = platform_config(o);
  pc.loss_to_bouncer = o.loss;
  pc.loss_from_bouncer = o.loss;
  pc.wire_seed = o.seed;

  const auto tmpl = peer_template_pd(o);
  std::vector<Conn> conns(o.connections);
  std::map<std::pair<uint32_t, uint16_t>, size_t> by_tuple;
  std::map<uint32_t, size_t> by_cm_id;  // the connection a cm_id currently belongs to
  int rc = 0;
  bool sim_ok = false;
  uint32_t cm_conns_end = 0xFFFFFFFF;
  std::string capture_err;
  CmStats cm_stats;
  std::vector<StatValue> hw_stats;
  unsigned unknown_requests = 0;

  try {
    const SimSpeed speed(pc.data_width);
    sim::Platform platform(pc);
    platform.run([&](hal::Device& hal) {
      DeviceConfig dc;
      dc.isn_key = key_from_seed(o.seed);
      dc.hash_key = key_from_seed(~o.seed)[0];  // reproducible, and not the public default
      dc.timers = sim_timers();
      if (o.mac_filter)
        dc.tcp = TcpConfig{.promisc = false, .port_mac = kLocalMac, .port_ip = kLocalIp};
      auto dev = open_device(hal, dc, "bouncer sim");
      if (!dev) {
        rc = 1;
        return;
      }
      Device& d = *dev;
      const Caps& caps = d.caps();
      fmt::print("device: {} v{}.{}.{}, {}-bit TX, {} connections, push {}, inline PD {}\n",
                 hal.name(), caps.version_major, caps.version_minor, caps.version_patch,
                 caps.data_bytes * 8, caps.ctx_depth, caps.push ? "yes" : "no",
                 caps.inline_pd ? "yes" : "no");
      if (o.post == "push" && !caps.push) {
        fmt::print(stderr, "bouncer sim: --post push, but this build has no push page\n");
        rc = 1;
        return;
      }
      Cm cm(d);
      cm.set_terminal_observer([&](uint32_t cm_id, regs::AeqEvent code) {
        if (auto it = by_cm_id.find(cm_id); it != by_cm_id.end()) conns[it->second].terminal = code;
      });
      ListenOptions lo;
      lo.backlog = static_cast<uint16_t>(o.backlog);
      lo.fin_policy = fin_policy_of(o.fin_policy);
      lo.auto_reject = auto_reject_of(o.auto_reject);
      lo.template_pd = tmpl;
      lo.unsafe_wire_pd = o.unsafe_wire_pd;
      lo.template_ird_ord = ird_ord_word(kMaxIrdOrd, kMaxIrdOrd);
      lo.max_ird = kMaxIrdOrd;
      lo.max_ord = kMaxIrdOrd;
      lo.local_mac = kLocalMac;
      auto lid = cm.listen(kLocalIp, kLocalPort, lo);
      if (!lid) {
        fmt::print(stderr,
                   "bouncer sim: listen {}:{}: {}: {}\n(does this build's RTL have the passive "
                   "CM wired in?)\n",
                   ip_str(kLocalIp), kLocalPort, errc_name(lid.error().code), lid.error().message);
        rc = 1;
        return;
      }
      fmt::print("listening on {}:{} (listener {}, fin policy {}, auto-reject {}, backlog {})\n",
                 ip_str(kLocalIp), kLocalPort, lid->index, o.fin_policy, o.auto_reject, o.backlog);

      std::mt19937_64 rng(o.seed);
      const uint64_t t0 = hal.now_cycles() + 100;
      for (unsigned i = 0; i < o.connections; ++i) {
        peer::InitiatorConfig p;
        p.mac = {0x02, 0x00, 0x00, 0x01, static_cast<uint8_t>(i >> 8), static_cast<uint8_t>(i)};
        p.peer_mac = kLocalMac;
        p.ip = 0x0A000000u | ((i / 250) << 8) | (2 + i % 250);
        p.peer_ip = kLocalIp;
        p.port = static_cast<uint16_t>(kFirstRemotePort + i % 16000);
        p.peer_port = kLocalPort;
        p.isn = static_cast<uint32_t>(rng());
        p.ip_id = static_cast<uint16_t>(rng());
        p.personality = o.initiator == "irdma"   ? peer::Personality::kIrdma
                        : o.initiator == "cxgb4" ? peer::Personality::kCxgb4
                                                 : peer::Personality::kSiw;
        p.mpa_rev = static_cast<uint8_t>(o.rev);
        p.enhanced = o.rev == 2;
        // --auto-reject ird-ord: every other peer asks for more than the listener allows.
        p.ird_ord =
            o.auto_reject == "ird-ord" && i % 2 == 1 ? ird_ord_word(64, 64) : ird_ord_word(16, 16);
        p.private_data = request_pd(i, o.peer_pd_len);
        p.rto_cycles = kRtoCycles;
        p.max_retransmits = 8;
        p.time_wait_cycles = 8'000;
        p.reply_timeout_cycles = 4'000'000;
        Conn& c = conns[i];
        c.peer = platform.add_peer(p, t0 + i * o.spacing);
        c.ip = p.ip;
        c.port = p.port;
        c.request_pd = p.private_data;
        by_tuple[{p.ip, p.port}] = i;
      }

      const uint64_t deadline = hal.now_cycles() + o.max_cycles;
      for (;;) {
        auto ev = cm.poll_event();
        if (!ev) {
          fmt::print(stderr, "bouncer sim: poll_event: {}\n", ev.error().message);
          rc = 1;
          break;
        }
        if (*ev) {
          const uint64_t now = hal.now_cycles();
          Event& e = **ev;
          if (auto* cr = std::get_if<ConnectRequest>(&e)) {
            auto it = by_tuple.find({cr->tuple.remote_ip, cr->tuple.remote_port});
            RejectOptions ro;
            std::vector<std::byte> pd;
            if (it == by_tuple.end()) {
              ++unknown_requests;  // not one of ours: reject it all the same, no PD
            } else {
              const unsigned i = static_cast<unsigned>(it->second);
              Conn& c = conns[i];
              c.cm_id = cr->cm_id;
              by_cm_id[cr->cm_id] = i;
              c.event_cycle = now;
              c.rev = cr->rev;
              c.event_pd_len = cr->private_data.size();
              c.request_pd_ok = to_u8(cr->private_data) == c.request_pd;
              pd = reject_pd(i, o);
              ro.push = caps.push && (o.post == "push" || (o.post == "both" && i % 2 == 1));
              ro.wr_id = i;
            }
            ro.unsafe_wire_pd = o.unsafe_wire_pd;
            auto r = cm.reject(cr->handle, pd, ro);  // fin_policy DEFAULT: the listener's
            if (it != by_tuple.end()) {
              Conn& c = conns[it->second];
              if (r) {
                c.decision = "reject";
                c.host_rejected = true;
                c.reject_pd = to_u8(pd);
              } else {
                const Error& er = r.error();
                c.decision = er.code == Errc::kHardware ? cq_status_name(er.hw_major, er.hw_minor)
                                                        : std::string(errc_name(er.code));
                // A reject the peer's RST overtook is expected; anything else is a failure.
                if (er.hw_minor != static_cast<uint16_t>(regs::CqMinor::PEER_RESET)) rc = 1;
              }
            }
          } else if (auto* pr = std::get_if<PeerReset>(&e)) {
            auto r = cm.reject(pr->handle, {});  // frees the cm_id; completes with PEER_RESET
            if (auto it = by_cm_id.find(pr->cm_id); it != by_cm_id.end()) {
              conns[it->second].decision = "peer reset";
            }
            if (r || r.error().hw_minor != static_cast<uint16_t>(regs::CqMinor::PEER_RESET)) {
              fmt::print(stderr, "bouncer sim: reject after PeerReset on cm_id {}: {}\n", pr->cm_id,
                         r ? "ok?" : r.error().message);
              rc = 1;
            }
          } else if (auto* me = std::get_if<MpaError>(&e)) {
            auto it = by_tuple.find({me->tuple.remote_ip, me->tuple.remote_port});
            if (it != by_tuple.end()) {
              conns[it->second].decision = fmt::format("MPA error {}", regs::name(me->reason));
              conns[it->second].cm_id = me->cm_id;
            }
            rc = 1;  // our peers send well-formed requests
          }
          continue;
        }
        const CmStats s = cm.stats();
        if (platform.peers_finished() && s.nodes_held == 0 && s.nodes_awaiting_terminal == 0 &&
            d.cm_conns() == 0) {
          sim_ok = true;
          break;
        }
        if (hal.now_cycles() >= deadline) {
          fmt::print(stderr,
                     "bouncer sim: gave up after {} cycles (peers finished: {}, held {}, "
                     "awaiting terminal {}, CM_CONNS {})\n",
                     o.max_cycles, platform.peers_finished() ? "yes" : "no", s.nodes_held,
                     s.nodes_awaiting_terminal, d.cm_conns());
          rc = 1;
          break;
        }
        hal.wait_cycles(kPollCycles);
      }
      cm_conns_end = d.cm_conns();
      cm_stats = cm.stats();
      hw_stats = d.read_stats();
      capture_err = save_capture(d, o, pc.clock_mhz);
    });

    // ---- per connection
    const auto& tx = platform.tx_frames();
    fmt::print("\n{:>4} {:>6} {:>3} {:>6}  {:<14} {:>10} {:>10} {:>12}  {:<10} {}\n", "conn",
               "cm_id", "rev", "req_pd", "decision", "syn>synack", "req>event", "event>reject",
               "peer end", "terminal event");
    unsigned pd_ok = 0, pd_checked = 0, auto_rej = 0, host_rej = 0;
    std::map<std::string, unsigned> ends, terminals;
    for (unsigned i = 0; i < conns.size(); ++i) {
      Conn& c = conns[i];
      if (c.peer >= platform.num_peers()) continue;
      const peer::Outcome& out = platform.peer(c.peer).outcome();
      // The first reject frame sent to this peer.
      uint64_t reject_first = 0;
      for (const auto& f : tx) {
        if (mpa_reply_to(f.bytes, sim::TcpEndpoint{c.ip, c.port})) {
          reject_first = f.first_cycle;
          break;
        }
      }
      if (!c.host_rejected && c.decision == "none" && out.rejected) {
        c.decision = "auto-reject";
        ++auto_rej;
      }
      host_rej += c.host_rejected;
      // Every peer that was rejected must hold exactly the PD meant for it.
      std::string pd_check;
      if (c.host_rejected || c.decision == "auto-reject") {
        ++pd_checked;
        const std::vector<uint8_t> want = c.host_rejected ? c.reject_pd : to_u8(tmpl);
        if (out.rejected && out.reject_pd == want) {
          ++pd_ok;
        } else {
          pd_check = out.rejected ? "  << wrong reject PD" : "  << no reject received";
          rc = 1;
        }
      }
      if (!c.request_pd_ok) {
        pd_check += "  << request PD differs from what the peer sent";
        rc = 1;
      }
      const std::string end = peer::to_string(out.state);
      ++ends[end];
      const std::string term = c.terminal ? regs::name(*c.terminal) : "-";
      ++terminals[term];
      const uint64_t req_cycle = out.request_last_cycle;
      fmt::print("{:>4} {:>6} {:>3} {:>6}  {:<14} {:>10} {:>10} {:>12}  {:<10} {}{}\n", i,
                 c.cm_id ? fmt::format("{}", *c.cm_id) : "-", c.rev ? c.rev : o.rev,
                 c.cm_id ? c.event_pd_len : c.request_pd.size(), c.decision,
                 cycles_or_dash(out.syn_cycle, out.synack_cycle),
                 c.event_cycle ? cycles_or_dash(req_cycle, c.event_cycle) : "-",
                 c.event_cycle ? cycles_or_dash(c.event_cycle, reject_first)
                               : cycles_or_dash(req_cycle, reject_first) + "*",
                 end, term, pd_check);
      if (!out.error.empty()) fmt::print("       peer: {}\n", out.error);
    }
    fmt::print("(* auto-reject: request to reject first byte)\n");

    // ---- totals and checks
    const sim::PlatformStats ps = platform.stats();
    fmt::print("\n{} connections: {} rejected by the host, {} by the listener policy\n",
               conns.size(), host_rej, auto_rej);
    fmt::print("peer end states:");
    for (const auto& [k, v] : ends) fmt::print(" {} {}", k, v);
    fmt::print("\nterminal events (consumed by the driver):");
    for (const auto& [k, v] : terminals) fmt::print(" {} {}", k, v);
    fmt::print("\ndriver: {} requests, {} rejects, {} late (peer reset), {} unexpected events\n",
               cm_stats.requests, cm_stats.rejects, cm_stats.late_resets,
               cm_stats.unexpected_events);
    fmt::print("wire: {} frames to bouncer, {} from bouncer, {} + {} lost\n", ps.rx_frames,
               tx.size(), ps.wire_dropped_to_bouncer, ps.wire_dropped_from_bouncer);
    fmt::print("hardware counters:");
    unsigned col = 0;
    for (const auto& s : hw_stats) {
      if (s.value == 0 || s.offset < regs::reg::STAT_RX_FRAMES) continue;
      fmt::print("{}{}={}", col++ % 4 == 0 ? "\n  " : "  ", s.name + 5, s.value);
    }
    fmt::print("\n{}\n", speed.line(platform));
    const std::string pcap_err = platform.finish_pcap();
    if (!o.pcap.empty()) fmt::print("pcap (both directions): {}\n", o.pcap);
    if (!o.fst.empty()) fmt::print("waveform: {}\n", o.fst);

    auto check = [&](bool ok, const std::string& what) {
      fmt::print("check: {:<60} {}\n", what, ok ? "ok" : "FAILED");
      if (!ok) rc = 1;
    };
    fmt::print("\n");
    check(sim_ok, "every peer finished and every cm_id was settled");
    check(pd_ok == pd_checked,
          fmt::format("every rejected peer got its reject PD ({} of {})", pd_ok, pd_checked));
    check(
        host_rej + auto_rej == conns.size(),
        fmt::format("every connection was rejected ({} of {})", host_rej + auto_rej, conns.size()));
    check(cm_conns_end == 0, fmt::format("hardware CM_CONNS back to 0 (reads {})", cm_conns_end));
    check(
        cm_stats.unexpected_events == 0 && cm_stats.missing_terminal == 0 && unknown_requests == 0,
        "no unexpected events");
    if (!pcap_err.empty()) check(false, pcap_err);
    if (!capture_err.empty()) check(false, capture_err);
  } catch (const std::exception& e) {
    fmt::print(stderr, "bouncer sim: simulation failed: {}\n", e.what());
    return 3;
  }
  return rc;
}

}  // namespace bouncer::cli
