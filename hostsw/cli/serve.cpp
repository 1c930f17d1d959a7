// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include "serve.hpp"

#include <fmt/core.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <utility>
#include <variant>

#include "bouncer/cm.hpp"

namespace bouncer::cli {

namespace {

std::atomic<bool> g_stop{false};
extern "C" void on_serve_signal(int) { g_stop = true; }

std::string hex(std::span<const std::byte> b) {
  std::string s;
  s.reserve(b.size() * 2);
  for (std::byte x : b) s += fmt::format("{:02x}", std::to_integer<unsigned>(x));
  return s;
}

std::vector<std::byte> bytes_of(const std::string& s) {
  std::vector<std::byte> v(s.size());
  for (size_t i = 0; i < s.size(); ++i) v[i] = std::byte(static_cast<uint8_t>(s[i]));
  return v;
}

void print_line(const std::string& json) {
  fmt::print("{}\n", json);
  std::fflush(stdout);
}

constexpr const char* kFinPolicies[] = {"siw", "irdma", "abort"};
constexpr const char* kAutoRejects[] = {"off", "all", "backlog", "ird-ord"};

template <size_t N>
bool one_of(const std::string& s, const char* const (&names)[N]) {
  for (const char* n : names) {
    if (s == n) return true;
  }
  return false;
}

}  // namespace

std::vector<std::byte> serve_reject_pd(const std::string& text, unsigned n) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 1 < text.size() && text[i + 1] == 'n') {
      out += std::to_string(n);
      ++i;
    } else {
      out += text[i];
    }
  }
  return bytes_of(out);
}

std::string ip_str(uint32_t ip) {
  return fmt::format("{}.{}.{}.{}", ip >> 24, (ip >> 16) & 0xFF, (ip >> 8) & 0xFF, ip & 0xFF);
}

std::string mac_str(const MacAddr& m) {
  return fmt::format("{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}", m[0], m[1], m[2], m[3], m[4],
                     m[5]);
}

std::optional<uint32_t> parse_ipv4(const std::string& s) {
  uint32_t ip = 0;
  size_t pos = 0;
  for (int part = 0; part < 4; ++part) {
    if (part > 0) {
      if (pos >= s.size() || s[pos] != '.') return std::nullopt;
      ++pos;
    }
    size_t digits = 0;
    unsigned v = 0;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9' && digits < 3) {
      v = v * 10 + static_cast<unsigned>(s[pos] - '0');
      ++pos;
      ++digits;
    }
    if (digits == 0 || v > 255) return std::nullopt;
    ip = (ip << 8) | v;
  }
  if (pos != s.size()) return std::nullopt;
  return ip;
}

std::optional<MacAddr> parse_mac(const std::string& s) {
  if (s.size() != 17) return std::nullopt;
  MacAddr m{};
  auto nib = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  for (size_t i = 0; i < 6; ++i) {
    const int hi = nib(s[3 * i]), lo = nib(s[3 * i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    if (i < 5 && s[3 * i + 2] != ':' && s[3 * i + 2] != '-') return std::nullopt;
    m[i] = static_cast<uint8_t>(hi * 16 + lo);
  }
  return m;
}

regs::FinPolicy fin_policy_of(const std::string& s) {
  if (s == "irdma") return regs::FinPolicy::IRDMA;
  if (s == "abort") return regs::FinPolicy::ABORT;
  return regs::FinPolicy::SIW_SAFE;
}

regs::AutoReject auto_reject_of(const std::string& s) {
  if (s == "all") return regs::AutoReject::ALL;
  if (s == "backlog") return regs::AutoReject::BACKLOG;
  if (s == "ird-ord") return regs::AutoReject::IRD_ORD;
  return regs::AutoReject::OFF;
}

std::optional<std::string> serve_pd_error(const ServeListener& l, unsigned stop_after,
                                          bool unsafe_wire_pd, const std::string& pd_name,
                                          const std::string& template_name) {
  auto check = [&](const std::string& opt, size_t len) -> std::optional<std::string> {
    if (auto v = check_reject_pd(len, /*enhanced=*/true, unsafe_wire_pd); !v) {
      return fmt::format("{}: {} (--unsafe-wire-pd)", opt, v.error().message);
    }
    return std::nullopt;
  };
  const unsigned widest = stop_after != 0 ? stop_after : UINT32_MAX;
  if (auto e = check(pd_name, serve_reject_pd(l.pd, widest).size())) return e;
  if (l.auto_reject != "off") {
    if (auto e = check(template_name, l.template_pd.size())) return e;
  }
  return std::nullopt;
}

std::optional<std::string> serve_config_error(const ServeConfig& c) {
  if (c.listeners.size() > regs::kNumListeners) {
    return fmt::format("{} listeners, the listener table has {}", c.listeners.size(),
                       regs::kNumListeners);
  }
  if (!(c.max_wall_s >= 0)) return fmt::format("max_wall_s {} is negative", c.max_wall_s);
  std::set<std::pair<uint32_t, uint16_t>> seen;
  for (size_t i = 0; i < c.listeners.size(); ++i) {
    const ServeListener& l = c.listeners[i];
    const std::string at = fmt::format("listener {} ({}:{})", i, ip_str(l.ip), l.port);
    if (l.port == 0) return at + ": port 0";
    if (!seen.insert({l.ip, l.port}).second) return at + ": a second listener on that address";
    if (!one_of(l.fin_policy, kFinPolicies)) {
      return fmt::format("{}: fin_policy '{}' (siw, irdma or abort)", at, l.fin_policy);
    }
    if (!one_of(l.auto_reject, kAutoRejects)) {
      return fmt::format("{}: auto_reject '{}' (off, all, backlog or ird-ord)", at, l.auto_reject);
    }
    if (l.backlog > 0xFFFF) return fmt::format("{}: backlog {} above 65535", at, l.backlog);
    if (l.auto_reject == "backlog" && l.backlog == 0) {
      return at + ": auto_reject backlog needs a backlog N > 0";
    }
    if (l.mac == MacAddr{} || (l.mac[0] & 1) != 0) {
      return fmt::format(
          "{}: mac {} is not a unicast address (the port's MAC, source of the "
          "listener's frames)",
          at, mac_str(l.mac));
    }
    if (auto e =
            serve_pd_error(l, c.stop_after, c.unsafe_wire_pd, at + ": pd", at + ": template_pd")) {
      return e;
    }
  }
  return std::nullopt;
}

Result<ServeConfig> parse_serve_config(const std::string& text) {
  using nlohmann::json;
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    return make_error(Errc::kInvalidArgument, fmt::format("not JSON: {}", e.what()));
  }
  if (!j.is_object()) return make_error(Errc::kInvalidArgument, "the top level is not an object");
  ServeConfig c;
  auto bad = [](const std::string& where, const std::string& why) {
    return make_error(Errc::kInvalidArgument, fmt::format("{}: {}", where, why));
  };
  auto get_uint = [](const json& v, uint64_t max, uint64_t& out) {
    if (!v.is_number_unsigned() || v.get<uint64_t>() > max) return false;
    out = v.get<uint64_t>();
    return true;
  };
  for (const auto& [key, v] : j.items()) {
    if (key == "listeners") {
      if (!v.is_array()) return bad(key, "not an array");
      for (size_t i = 0; i < v.size(); ++i) {
        const json& lj = v[i];
        const std::string at = fmt::format("listeners[{}]", i);
        if (!lj.is_object()) return bad(at, "not an object");
        ServeListener l;
        bool have_port = false, have_mac = false;
        for (const auto& [k, x] : lj.items()) {
          const std::string where = at + "." + k;
          uint64_t n = 0;
          if (k == "ip") {
            auto ip = x.is_string() ? parse_ipv4(x.get<std::string>()) : std::nullopt;
            if (!ip) return bad(where, "not a dotted-quad IPv4 address string");
            l.ip = *ip;
          } else if (k == "port") {
            if (!get_uint(x, 65535, n) || n == 0) return bad(where, "not a port 1..65535");
            l.port = static_cast<uint16_t>(n);
            have_port = true;
          } else if (k == "mac") {
            auto m = x.is_string() ? parse_mac(x.get<std::string>()) : std::nullopt;
            if (!m) return bad(where, "not a MAC address string (02:00:00:00:00:02)");
            l.mac = *m;
            have_mac = true;
          } else if (k == "pd" || k == "template_pd" || k == "fin_policy" || k == "auto_reject") {
            if (!x.is_string()) return bad(where, "not a string");
            (k == "pd"            ? l.pd
             : k == "template_pd" ? l.template_pd
             : k == "fin_policy"  ? l.fin_policy
                                  : l.auto_reject) = x.get<std::string>();
          } else if (k == "backlog") {
            if (!get_uint(x, 65535, n)) return bad(where, "not a number 0..65535");
            l.backlog = static_cast<unsigned>(n);
          } else {
            return bad(where,
                       "unknown key (ip, port, mac, pd, template_pd, fin_policy, auto_reject, "
                       "backlog)");
          }
        }
        if (!have_port) return bad(at, "no \"port\"");
        if (!have_mac) return bad(at, "no \"mac\" (the card port's MAC address)");
        c.listeners.push_back(std::move(l));
      }
    } else if (key == "stop_after") {
      uint64_t n = 0;
      if (!get_uint(v, UINT32_MAX, n)) return bad(key, "not a count 0..4294967295");
      c.stop_after = static_cast<unsigned>(n);
    } else if (key == "max_wall_s") {
      if (!v.is_number() || v.get<double>() < 0) return bad(key, "not a number of seconds >= 0");
      c.max_wall_s = v.get<double>();
    } else if (key == "unsafe_wire_pd") {
      if (!v.is_boolean()) return bad(key, "not true or false");
      c.unsafe_wire_pd = v.get<bool>();
    } else {
      return bad(key, "unknown key (listeners, stop_after, max_wall_s, unsafe_wire_pd)");
    }
  }
  if (c.listeners.empty()) return bad("listeners", "none given (at least one)");
  return c;
}

Result<ServeConfig> load_serve_config(const std::string& path) {
  std::ifstream in(path);
  if (!in) return make_error(Errc::kInvalidArgument, fmt::format("{}: cannot be read", path));
  std::ostringstream ss;
  ss << in.rdbuf();
  auto c = parse_serve_config(ss.str());
  if (!c) return make_error(Errc::kInvalidArgument, fmt::format("{}: {}", path, c.error().message));
  return c;
}

void install_serve_signals() {
  std::signal(SIGINT, on_serve_signal);
  std::signal(SIGTERM, on_serve_signal);
}
bool serve_stop_requested() { return g_stop; }
void request_serve_stop() { g_stop = true; }
void clear_serve_stop() { g_stop = false; }

int serve(Device& d, const ServeConfig& c, const ServeHooks& h) {
  const auto emit = h.emit ? h.emit : print_line;
  hal::Device& hal = d.hal();
  const auto t0 = std::chrono::steady_clock::now();
  auto wall = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  Cm cm(d);
  std::vector<std::vector<std::byte>> templates;
  for (const ServeListener& l : c.listeners) templates.push_back(bytes_of(l.template_pd));
  for (size_t i = 0; i < c.listeners.size(); ++i) {
    const ServeListener& l = c.listeners[i];
    if (c.install) {
      ListenOptions lo;
      lo.backlog = static_cast<uint16_t>(l.backlog);
      lo.fin_policy = fin_policy_of(l.fin_policy);
      lo.auto_reject = auto_reject_of(l.auto_reject);
      lo.template_pd = templates[i];
      lo.unsafe_wire_pd = c.unsafe_wire_pd;
      lo.local_mac = l.mac;
      lo.context = const_cast<ServeListener*>(&l);  // handed back with each request
      auto lid = cm.listen(l.ip, l.port, lo);
      if (!lid) {
        fmt::print(stderr, "{}: listen: {}\n", h.who, lid.error().message);
        return 1;
      }
    }
    emit(fmt::format(R"({{"event":"listening","ip":"{}","mac":"{}","port":{},"listener":{},)"
                     R"("fin_policy":"{}","auto_reject":"{}","template_pd_hex":"{}"{}}})",
                     ip_str(l.ip), mac_str(l.mac), l.port, c.install ? "true" : "false",
                     l.fin_policy, l.auto_reject, hex(templates[i]), h.listening_extra));
  }

  if (h.started) h.started();
  int rc = 0;
  unsigned requests = 0, rejects_ok = 0;
  std::string stop_reason = "signal";
  for (;;) {
    if (h.before_poll) h.before_poll();
    auto ev = cm.poll_event();
    if (!ev) {
      fmt::print(stderr, "{}: poll_event: {}\n", h.who, ev.error().message);
      rc = 1;
      break;
    }
    if (*ev) {
      Event& e = **ev;
      if (auto* cr = std::get_if<ConnectRequest>(&e)) {
        ++requests;
        const auto* l = static_cast<const ServeListener*>(cr->context);
        const auto pd = serve_reject_pd(l != nullptr ? l->pd : kServeDefaultPd, requests);
        emit(fmt::format(
            R"({{"event":"connect_request","n":{},"cm_id":{},"remote":"{}:{}","local":"{}:{}",)"
            R"("rev":{},"flags":{},"ird_ord":{},"pd_len":{},"pd_hex":"{}","cycle":{}}})",
            requests, cr->cm_id, ip_str(cr->tuple.remote_ip), cr->tuple.remote_port,
            ip_str(cr->tuple.local_ip), cr->tuple.local_port, cr->rev, cr->flags,
            cr->ird_ord ? fmt::format("{}", *cr->ird_ord) : "null", cr->private_data.size(),
            hex(cr->private_data), hal.now_cycles()));
        RejectOptions ro;
        ro.wr_id = requests;
        ro.unsafe_wire_pd = c.unsafe_wire_pd;
        auto r = cm.reject(cr->handle, pd, ro);
        if (r) ++rejects_ok;
        emit(fmt::format(
            R"({{"event":"reject","n":{},"cm_id":{},"status":"{}","pd_len":{},"pd_hex":"{}",)"
            R"("cycle":{}}})",
            requests, cr->cm_id, r ? "ok" : r.error().message, pd.size(), hex(pd),
            hal.now_cycles()));
        if (h.after_request) h.after_request();
      } else if (auto* pr = std::get_if<PeerReset>(&e)) {
        auto r = cm.reject(pr->handle, {});  // frees the cm_id (CTX/PEER_RESET)
        emit(fmt::format(R"({{"event":"peer_reset","cm_id":{},"cleanup":"{}"}})", pr->cm_id,
                         r ? "ok" : r.error().message));
      } else if (auto* me = std::get_if<MpaError>(&e)) {
        emit(fmt::format(R"({{"event":"mpa_error","cm_id":{},"remote":"{}:{}","reason":"{}"}})",
                         me->cm_id, ip_str(me->tuple.remote_ip), me->tuple.remote_port,
                         regs::name(me->reason)));
      }
      continue;
    }
    if (g_stop) break;
    if (c.stop_after != 0 && requests >= c.stop_after) {
      const CmStats s = cm.stats();
      if (s.nodes_held == 0 && s.nodes_awaiting_terminal == 0 && d.cm_conns() == 0) {
        stop_reason = "connections";
        break;
      }
    }
    if (c.max_wall_s > 0 && wall() > c.max_wall_s) {
      stop_reason = "max-wall";
      break;
    }
    if (h.idle) {
      h.idle();
    } else {
      hal.wait_for(std::chrono::microseconds(500));
    }
  }
  const CmStats s = cm.stats();
  std::string counters;
  for (const auto& st : d.read_stats()) {
    if (st.offset < regs::reg::STAT_RX_FRAMES || st.value == 0) continue;
    counters += fmt::format("{}\"{}\":{}", counters.empty() ? "" : ",", st.name + 5, st.value);
  }
  emit(fmt::format(R"({{"event":"summary","stop":"{}","requests":{},"rejects_ok":{},"cm_conns":{},)"
                   R"("terminal_closed":{},"terminal_reset":{},"terminal_rtx_exhausted":{},)"
                   R"("terminal_timeout":{}{},"hw":{{{}}}}})",
                   stop_reason, requests, rejects_ok, d.cm_conns(), s.terminal.closed,
                   s.terminal.reset, s.terminal.rtx_exhausted, s.terminal.timeout,
                   h.summary_extra ? h.summary_extra() : "", counters));
  return rc;
}

}  // namespace bouncer::cli
