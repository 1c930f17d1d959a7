// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// Loopback self-test: the same code for the co-simulation and a card.
//
// With CTRL.LOOPBACK = 1 every frame the core transmits enters its own RX port. The test
// sends two rejects through the normal path (host-written contexts, the diagnostic path of
// docs/architecture.md) and predicts every frame and every counter from the CM engine's rules
// (docs/cm-state-machine.md):
//
//   reject A   cm_id depth-1, rev 2 enhanced, 16 B PD (inline, push page when CAPS.PUSH),
//              SIW_SAFE: the reject alone; context -> REJ_SENT
//   reject B   cm_id depth-2, rev 1, 802.1Q tag, 100 B PD (DMA), IRDMA: reject + FIN;
//              context -> FIN_WAIT1
//
// Each reject loops back into RX addressed to the context's remote address, where the
// self-test installed a listener. No connection exists for that 4-tuple, so the engine
// answers with RST|ACK ("segment for no node on a listening port"). The RST loops back too
// and is dropped silently (a RST for no node). So: 4 TX frames, 4 RX frames, 2 RSTs, 1 FIN,
// no event, no RX error, and every other counter unchanged. Afterwards the contexts are
// invalidated, the listener destroyed and CTRL restored with LOOPBACK = 0, on every path.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bouncer/device.hpp"
#include "bouncer/result.hpp"

namespace bouncer {

struct SelftestOptions {
  /// Listener-table entry the test borrows; unset: the highest one the driver has not used.
  std::optional<unsigned> listener;
  /// Bound of each wait (a completion, the looped frames), in host time.
  std::chrono::nanoseconds timeout = std::chrono::milliseconds(8);
  /// After the expected frames are in: how long to let the device run (core cycles) while
  /// watching for frames nobody expected.
  uint64_t settle_cycles = 20'000;
};

/// One comparison of the report. `expected` and `actual` are printable values.
struct SelftestCheck {
  std::string name;
  std::string expected;
  std::string actual;
  bool ok = false;
  std::string hint;  // what a mismatch means (empty when ok)
};

/// One frame the test expects on the looped port (what and how long).
struct SelftestFrame {
  std::string what;
  uint32_t bytes = 0;  // without FCS, as STAT_TX_BYTES counts
};

struct SelftestReport {
  std::string backend;  // hal name ("sim", "xrt")
  Caps caps;
  unsigned listener = 0;
  uint32_t cm_id_a = 0, cm_id_b = 0;
  std::vector<SelftestFrame> frames;  // predicted, in order of transmission
  std::vector<SelftestCheck> checks;
  uint64_t cycles = 0;             // core cycles from the first register write to the last
  bool loopback_restored = false;  // CTRL read back with LOOPBACK = 0 at the end
  bool passed() const;
  /// The failed checks, one per line ("" when passed).
  std::string failures() const;
};

/// Runs the loopback self-test on an opened device. Preconditions (kState when not met): no
/// connection in the table (CM_CONNS = 0), nothing posted on the SQ, and a free listener
/// entry. Driver-level failures (a control command refused, a completion that never comes)
/// return an error; anything the hardware did differently from the prediction is a failed
/// check in the report. LOOPBACK is cleared again on every path.
Result<SelftestReport> run_loopback_selftest(Device& dev, const SelftestOptions& opts = {});

/// The core clock (ap_clk) as the host measures it: the CYCLE_LO/CYCLE_HI counter
/// (hal.now_cycles) against hal.host_now() over `window` of host time. On a card, the host's
/// steady clock; in the co-simulation, simulated time, so the figure is the simulated clock
/// exactly.
struct ClockMeasurement {
  uint64_t cycles = 0;
  std::chrono::nanoseconds host{};
  double mhz = 0;
};
/// kHardware when the counter did not advance (a stopped clock, a core held in reset, no
/// device answering), kInvalidArgument for a window that is not positive.
Result<ClockMeasurement> measure_core_clock(hal::Device& hal, std::chrono::nanoseconds window);
/// The relative difference |measured - expected| / expected over `tolerance` (default 2 %):
/// a message naming both figures; nullopt when within it.
std::optional<std::string> clock_mismatch(double measured_mhz, double expected_mhz,
                                          double tolerance = 0.02);

/// The report as text: the predicted frames, then one line per check, then PASS or FAIL.
std::string format_selftest_report(const SelftestReport& r);

}  // namespace bouncer
