// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// The serve loop: listen, take every CONNECT_REQUEST off the event queue and reject it with
// its listener's private data, until a signal (SIGINT/SIGTERM), a request count or a wall-clock
// limit stops it; then the counters. One JSON object per line on stdout for every event
// (machine-readable: tb/interop and tb/system/test_bridge parse it; docs/operations.md lists
// the fields). It runs over any HAL backend: `bouncer card serve` on the card (XRT), and
// `bouncer sim --mode bridge` on the co-simulated core, whose hooks move the guest's frames
// into the RX port and let simulated time pass. Nothing here knows which.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "bouncer/cm_context.hpp"
#include "bouncer/device.hpp"
#include "bouncer/regs.hpp"
#include "bouncer/result.hpp"

namespace bouncer::cli {

/// The reject PD text when none is given: "%n" is the request's ordinal.
inline constexpr const char* kServeDefaultPd = "bouncer: go away #%n";
/// The auto-reject template when none is given.
inline constexpr const char* kServeDefaultTemplatePd = "bouncer: refused by listener policy";

/// One listener of the serve loop.
struct ServeListener {
  uint32_t ip = 0;  // host order (0x0A000002 = 10.0.0.2); 0: every local address
  uint16_t port = 20049;
  MacAddr mac{};                     // the listener's MAC: source of its frames
  std::string pd = kServeDefaultPd;  // reject PD text; every "%n" = the request's ordinal
  std::string template_pd = kServeDefaultTemplatePd;  // auto-reject PD (text)
  std::string fin_policy = "siw";                     // siw | irdma | abort
  std::string auto_reject = "off";                    // off | all | backlog | ird-ord
  unsigned backlog = 0;                               // 0: no limit
};

struct ServeConfig {
  std::vector<ServeListener> listeners;
  /// false: the listeners are described on the "listening" lines but not installed (every
  /// SYN gets a RST; `bouncer sim --mode bridge --no-listener`).
  bool install = true;
  bool unsafe_wire_pd = false;  // PD_Length above 255 (RejectOptions::unsafe_wire_pd)
  unsigned stop_after = 0;      // stop once this many requests were rejected and settled (0: never)
  double max_wall_s = 0;        // stop after this many wall seconds (0: never)
};

/// What the backend adds to the loop. Every hook is optional.
struct ServeHooks {
  /// Before each look at the event queue (the bridge moves the guest's frames to the RX port).
  std::function<void()> before_poll;
  /// After the "listening" lines, before the first look at the event queue.
  std::function<void()> started;
  /// After a CONNECT_REQUEST was answered.
  std::function<void()> after_request;
  /// Nothing to do: let time pass (default: 500 us of host time through the HAL).
  std::function<void()> idle;
  /// JSON fields (",\"k\":v..." with the leading comma) appended to every "listening" line.
  std::string listening_extra;
  /// JSON fields (leading comma) of the summary, between the terminal counts and "hw".
  std::function<std::string()> summary_extra;
  /// Where the JSON lines go (default: stdout, flushed per line).
  std::function<void(const std::string&)> emit;
  /// Prefix of the messages on stderr ("bouncer card serve").
  std::string who = "bouncer serve";
};

/// The reject PD of request n: `text` with every "%n" replaced by n.
std::vector<std::byte> serve_reject_pd(const std::string& text, unsigned n);
/// "10.0.0.1" from 0x0A000001.
std::string ip_str(uint32_t ip);
/// "02:00:00:00:00:02".
std::string mac_str(const MacAddr& mac);
/// Dotted-quad IPv4 to host order; nullopt when it is not one.
std::optional<uint32_t> parse_ipv4(const std::string& s);
/// "02:00:00:00:00:02" (or with '-'); nullopt when it is not six hex octets.
std::optional<MacAddr> parse_mac(const std::string& s);
/// siw|irdma|abort and off|all|backlog|ird-ord as register enums (the names are checked by
/// serve_config_error; anything else maps to the default).
regs::FinPolicy fin_policy_of(const std::string& s);
regs::AutoReject auto_reject_of(const std::string& s);

/// Why a listener's private data cannot be sent (check_reject_pd at the enhanced limit: a real
/// initiator's revision is not known ahead; "%n" taken at its widest, the stop_after-th
/// request or 2**32-1), naming `pd_name` or `template_name`; nullopt when it can.
std::optional<std::string> serve_pd_error(const ServeListener& l, unsigned stop_after,
                                          bool unsafe_wire_pd, const std::string& pd_name,
                                          const std::string& template_name);
/// Every check of a configuration that needs no device: names, backlog with auto-reject
/// backlog, private-data limits, distinct listeners, the table's size. nullopt when good.
std::optional<std::string> serve_config_error(const ServeConfig& c);

/// The configuration file of `bouncer card serve --config` (JSON, docs/operations.md):
///   {"listeners": [{"ip": "10.0.0.2", "port": 20049, "mac": "02:00:00:00:00:02",
///                   "pd": "go away #%n", "template_pd": "...", "fin_policy": "siw",
///                   "auto_reject": "off", "backlog": 0}, ...],
///    "stop_after": 0, "max_wall_s": 0, "unsafe_wire_pd": false}
/// Every key but "port" and "mac" of a listener is optional. kInvalidArgument naming the
/// key (and its listener) for a syntax error, an unknown key, a wrong type or a bad value.
Result<ServeConfig> parse_serve_config(const std::string& json_text);
/// The file read, then parse_serve_config; the error names the path.
Result<ServeConfig> load_serve_config(const std::string& path);

/// Stop the serve loop on SIGINT and SIGTERM (instead of ending the process).
void install_serve_signals();
/// A stop was asked (a signal, or request_serve_stop()).
bool serve_stop_requested();
void request_serve_stop();
void clear_serve_stop();

/// Installs the listeners, prints a "listening" line for each, then serves until a stop
/// condition, and prints the summary. Returns 0, or 1 when a listener cannot be installed or
/// the event queue fails. `d` is an opened Device (Device::open).
int serve(Device& d, const ServeConfig& c, const ServeHooks& h);

}  // namespace bouncer::cli
