// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include "bouncer/cmac_link.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>

namespace bouncer::cmac {

namespace {

bool bit(uint32_t v, unsigned n) { return ((v >> n) & 1u) != 0; }

struct CounterDef {
  const char* name;
  uint32_t offset;
};

// xup's statistics list (vnx/cmac.hpp), in its order.
constexpr CounterDef kTx[] = {
    {"packets", 0x0500},
    {"good_packets", 0x0508},
    {"bytes", 0x0510},
    {"good_bytes", 0x0518},
    {"packets_64B", 0x0520},
    {"packets_65_127B", 0x0528},
    {"packets_128_255B", 0x0530},
    {"packets_256_511B", 0x0538},
    {"packets_512_1023B", 0x0540},
    {"packets_1024_1518B", 0x0548},
    {"packets_1519_1522B", 0x0550},
    {"packets_1523_1548B", 0x0558},
    {"packets_1549_2047B", 0x0560},
    {"packets_2048_4095B", 0x0568},
    {"packets_4096_8191B", 0x0570},
    {"packets_8192_9215B", 0x0578},
    {"packets_large", 0x0580},
    {"packets_small", 0x0588},
    {"bad_fcs", 0x05B8},
    {"pause", 0x05F0},
    {"user_pause", 0x05F8},
};
constexpr CounterDef kRx[] = {
    {"packets", 0x0608},
    {"good_packets", 0x0610},
    {"bytes", 0x0618},
    {"good_bytes", 0x0620},
    {"packets_64B", 0x0628},
    {"packets_65_127B", 0x0630},
    {"packets_128_255B", 0x0638},
    {"packets_256_511B", 0x0640},
    {"packets_512_1023B", 0x0648},
    {"packets_1024_1518B", 0x0650},
    {"packets_1519_1522B", 0x0658},
    {"packets_1523_1548B", 0x0660},
    {"packets_1549_2047B", 0x0668},
    {"packets_2048_4095B", 0x0670},
    {"packets_4096_8191B", 0x0678},
    {"packets_8192_9215B", 0x0680},
    {"packets_large", 0x0688},
    {"packets_small", 0x0690},
    {"packets_undersize", 0x0698},
    {"packets_fragmented", 0x06A0},
    {"packets_oversize", 0x06A8},
    {"packets_toolong", 0x06B0},
    {"packets_jabber", 0x06B8},
    {"bad_fcs", 0x06C0},
    {"packets_bad_fcs", 0x06C8},
    {"stomped_fcs", 0x06D0},
    {"pause", 0x06F8},
    {"user_pause", 0x0700},
};

constexpr uint64_t kCounterMask = (uint64_t{1} << 48) - 1;

template <size_t N>
std::vector<Counter> read_all(CmacRegisters& r, const CounterDef (&defs)[N]) {
  std::vector<Counter> out;
  out.reserve(N);
  for (const CounterDef& d : defs) {
    const uint64_t lo = r.read32(d.offset);
    const uint64_t hi = r.read32(d.offset + 4);
    out.push_back({d.name, d.offset, ((hi << 32) | lo) & kCounterMask});
  }
  return out;
}

}  // namespace

LinkStatus LinkStatus::decode(uint32_t rx, uint32_t tx) {
  LinkStatus s;
  s.rx_raw = rx;
  s.tx_raw = tx;
  s.rx_status = bit(rx, 0);
  s.rx_aligned = bit(rx, 1);
  s.rx_misaligned = bit(rx, 2);
  s.rx_aligned_err = bit(rx, 3);
  s.rx_hi_ber = bit(rx, 4);
  s.rx_remote_fault = bit(rx, 5);
  s.rx_local_fault = bit(rx, 6);
  s.rx_got_signal_os = bit(rx, 14);
  s.tx_local_fault = bit(tx, 0);
  return s;
}

LinkStatus CmacLink::status() {
  // The status bits latch (PG203: clear on read); the second read shows the present state.
  regs_.read32(reg::STAT_RX_STATUS);
  regs_.read32(reg::STAT_TX_STATUS);
  LinkStatus s =
      LinkStatus::decode(regs_.read32(reg::STAT_RX_STATUS), regs_.read32(reg::STAT_TX_STATUS));
  s.rs_fec = regs_.read32(reg::RSFEC_CONFIG_ENABLE) == kRsFecEnable;
  s.gt_loopback = regs_.read32(reg::GT_LOOPBACK) == 1;
  return s;
}

void CmacLink::set_rs_fec(bool on) {
  regs_.write32(reg::RSFEC_CONFIG_ENABLE, on ? kRsFecEnable : 0);
  regs_.write32(reg::RSFEC_CONFIG_INDICATION_CORRECTION, on ? kRsFecIndCorr : 0);
  regs_.write32(reg::RESET, kResetDatapaths);
  regs_.write32(reg::RESET, 0);
}

CounterSnapshot CmacLink::snapshot() {
  regs_.write32(reg::STAT_PM_TICK, 1);
  CounterSnapshot c;
  c.cycle_count = regs_.read32(reg::STAT_CYCLE_COUNT);
  c.tx = read_all(regs_, kTx);
  c.rx = read_all(regs_, kRx);
  return c;
}

Result<LinkStatus> CmacLink::wait_link_up(std::chrono::nanoseconds timeout,
                                          std::chrono::nanoseconds poll) {
  const auto start = regs_.host_now();
  poll = std::max(poll, std::chrono::nanoseconds(1));
  for (;;) {
    const LinkStatus s = status();
    if (s.up()) return s;
    const auto waited = regs_.host_now() - start;
    if (waited >= timeout) {
      return make_error(
          Errc::kTimeout,
          fmt::format("cmac: waiting for the link to come up: still down after {:.3f} s ({}); "
                      "check the cable/transceiver, the far end's speed and RS-FEC setting",
                      std::chrono::duration<double>(waited).count(), format_link_status(s)));
    }
    regs_.wait_for(std::min(poll, timeout - waited));
  }
}

std::string format_link_status(const LinkStatus& s) {
  std::string bits;
  auto add = [&](bool b, const char* n) {
    if (b) bits += fmt::format("{}{}", bits.empty() ? "" : " ", n);
  };
  add(s.rx_status, "rx_status");
  add(s.rx_aligned, "rx_aligned");
  add(s.rx_misaligned, "rx_misaligned");
  add(s.rx_aligned_err, "rx_aligned_err");
  add(s.rx_hi_ber, "rx_hi_ber");
  add(s.rx_remote_fault, "rx_remote_fault");
  add(s.rx_local_fault, "rx_local_fault");
  add(s.rx_got_signal_os, "rx_got_signal_os");
  add(s.tx_local_fault, "tx_local_fault");
  return fmt::format(
      "link {}, RS-FEC {}, GT loopback {}; STAT_RX_STATUS 0x{:08X} "
      "STAT_TX_STATUS 0x{:08X}: {}",
      s.up() ? "up" : "down", s.rs_fec ? "on" : "off", s.gt_loopback ? "on" : "off", s.rx_raw,
      s.tx_raw, bits.empty() ? "(no bit set)" : bits);
}

std::string format_counters(const CounterSnapshot& c) {
  std::string out =
      fmt::format("statistics (latched by STAT_PM_TICK; cycle count {}):\n", c.cycle_count);
  const size_t n = std::max(c.tx.size(), c.rx.size());
  out += fmt::format("  {:<20} {:>16}   {:<20} {:>16}\n", "tx", "", "rx", "");
  for (size_t i = 0; i < n; ++i) {
    std::string l = i < c.tx.size() ? fmt::format("  {:<20} {:>16}", c.tx[i].name, c.tx[i].value)
                                    : fmt::format("  {:<20} {:>16}", "", "");
    if (i < c.rx.size()) l += fmt::format("   {:<20} {:>16}", c.rx[i].name, c.rx[i].value);
    out += l + "\n";
  }
  return out;
}

}  // namespace bouncer::cmac
