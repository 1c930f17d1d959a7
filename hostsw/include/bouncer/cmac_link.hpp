// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// The 100G Ethernet port of the card: xup_vitis_network_example's CMAC kernel (cmac_0, the
// UltraScale+ Integrated 100G Ethernet core, PG203, behind an AXI4-Lite user interface).
// CmacLink reads its link status, switches RS-FEC, latches and reads its statistics, and waits
// for the link to come up with a deadline on the host's clock. It knows the kernel only as a
// register window (CmacRegisters), so the XRT backend gives it the kernel's xrt::ip and the
// unit tests give it a fake with the same map (tb/unit/test_cmac_link.cpp).
//
// Register offsets and sequences are those of xup's host API (Xilinx/xup_vitis_network_example,
// xrt_host_api/include/vnx/cmac.hpp and xrt_host_api/src/cmac.cpp; the map is extracted there
// from Ethernet/template.xml) and PG203's statistics layout (each counter a 48-bit value, LSB
// word at the offset, MSB word at offset + 4).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "bouncer/result.hpp"

namespace bouncer::cmac {

namespace reg {
inline constexpr uint32_t GT_RESET = 0x0000;
inline constexpr uint32_t RESET = 0x0004;  // bits 31:30: TX and RX datapath (core) reset
inline constexpr uint32_t CORE_VERSION = 0x0024;
inline constexpr uint32_t GT_LOOPBACK = 0x0090;  // 1: near-end PMA loopback
inline constexpr uint32_t STAT_TX_STATUS = 0x0200;
inline constexpr uint32_t STAT_RX_STATUS = 0x0204;
inline constexpr uint32_t STAT_PM_TICK = 0x02B0;  // write 1: latch every statistics counter
inline constexpr uint32_t STAT_CYCLE_COUNT = 0x02B8;
inline constexpr uint32_t RSFEC_CONFIG_INDICATION_CORRECTION = 0x1000;
inline constexpr uint32_t RSFEC_CONFIG_ENABLE = 0x107C;
}  // namespace reg

/// RESET value that holds the core's TX and RX datapaths in reset (xup's RS-FEC sequence).
inline constexpr uint32_t kResetDatapaths = 0xC0000000u;
/// RSFEC_CONFIG_ENABLE with RX and TX RS-FEC on; RSFEC_CONFIG_INDICATION_CORRECTION with
/// correction, indication and error marking on.
inline constexpr uint32_t kRsFecEnable = 0x3;
inline constexpr uint32_t kRsFecIndCorr = 0x7;

/// The kernel's AXI4-Lite registers.
class CmacRegisters {
 public:
  virtual ~CmacRegisters() = default;
  virtual uint32_t read32(uint32_t offset) = 0;
  virtual void write32(uint32_t offset, uint32_t value) = 0;
  /// The host's monotonic clock (the link-up wait's deadline), and a pause on it.
  virtual std::chrono::nanoseconds host_now() = 0;
  virtual void wait_for(std::chrono::nanoseconds d) = 0;
};

/// STAT_RX_STATUS / STAT_TX_STATUS decoded (xup's link_status keys).
struct LinkStatus {
  uint32_t rx_raw = 0, tx_raw = 0;
  bool rx_status = false;  // bit 0: the link is up (all lanes aligned, no fault)
  bool rx_aligned = false;
  bool rx_misaligned = false;
  bool rx_aligned_err = false;
  bool rx_hi_ber = false;
  bool rx_remote_fault = false;
  bool rx_local_fault = false;
  bool rx_got_signal_os = false;  // bit 14
  bool tx_local_fault = false;    // TX bit 0
  bool rs_fec = false;            // RSFEC_CONFIG_ENABLE reads kRsFecEnable
  bool gt_loopback = false;
  bool up() const { return rx_status && rx_aligned && !tx_local_fault; }
  static LinkStatus decode(uint32_t rx, uint32_t tx);
};

struct Counter {
  const char* name;
  uint32_t offset;  // LSB word; MSB word at offset + 4
  uint64_t value;   // 48 bits
};

struct CounterSnapshot {
  uint32_t cycle_count = 0;  // STAT_CYCLE_COUNT as latched
  std::vector<Counter> tx, rx;
};

class CmacLink {
 public:
  explicit CmacLink(CmacRegisters& regs) : regs_(regs) {}

  LinkStatus status();
  /// xup's sequence: RSFEC_CONFIG_ENABLE (3 / 0), RSFEC_CONFIG_INDICATION_CORRECTION (7 / 0),
  /// then the datapaths through reset (RESET = 0xC0000000, then 0) so the core retrains.
  void set_rs_fec(bool on);
  /// Writes STAT_PM_TICK = 1 (the core copies its counters into the readable registers), then
  /// reads every counter of xup's list.
  CounterSnapshot snapshot();
  /// Polls status() every `poll` until the link is up; kTimeout after `timeout` of host time,
  /// naming the wait and what the status registers last said.
  Result<LinkStatus> wait_link_up(std::chrono::nanoseconds timeout,
                                  std::chrono::nanoseconds poll = std::chrono::milliseconds(10));

 private:
  CmacRegisters& regs_;
};

/// "up" / "down" and every bit set, one line.
std::string format_link_status(const LinkStatus& s);
/// Every counter, TX then RX, one per line.
std::string format_counters(const CounterSnapshot& c);

}  // namespace bouncer::cmac
