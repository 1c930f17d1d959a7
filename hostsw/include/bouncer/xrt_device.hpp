// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// The XRT backend of the hardware-access layer (an Alveo card), and the card probe.
//
// XrtDevice implements hal::Device with XRT's native API: xrt::device by BDF (or index),
// load_xclbin, xrt::ip register access to the user-managed kernel (bouncer_kernel, instance
// bouncer_1: docs/register-map.md offsets in its 64 KiB s_axi_control range), and host_only
// xrt::bo buffers in the xclbin's HOST memory bank for every ring and PD buffer (their
// address() is what the device is given). No XRT header leaks out of this one: the
// implementation is hostsw/xrt/xrt_device.cpp, or hostsw/xrt/xrt_none.cpp when the build
// found no XRT (BOUNCER_XRT=OFF), in which case open() says so.
//
// XRT reports errors with exceptions; none crosses this interface. open() returns them as
// Result errors. read32/write32/sync cannot: the first failure is kept (fault()), reads return
// 0xFFFFFFFF from then on (as a PCIe read of a vanished device does) and writes are dropped,
// so the driver's next ID check or completion wait fails cleanly.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bouncer/cmac_link.hpp"
#include "bouncer/hal.hpp"
#include "bouncer/result.hpp"

namespace bouncer::card {

struct XrtOptions {
  /// User-PF BDF as `xbutil examine` lists it ("0000:3b:00.1"), or a device index ("0").
  std::string device;
  /// xclbin to load first. Empty: use the one already loaded (program_card.sh did it).
  std::string xclbin;
  std::string kernel = "bouncer_kernel";  // kernel name in the xclbin
  std::string instance = "bouncer_1";     // compute-unit name (nk=bouncer_kernel:1:bouncer_1)
  /// Kernel clock (ap_clk) in MHz: wait_cycles() sleeps cycles / clock, and the stats rates
  /// and the clock check use it. 0: the xclbin's (its CLOCK_FREQ_TOPOLOGY, kernel_clock_of),
  /// else 250 MHz when the xclbin has none.
  double kernel_clock_mhz = 0;
  /// Bound of any one wait of this backend (wait_cycles, wait_for) on the host's steady
  /// clock. A longer wait is a caller's bug (a cycle count from a garbage register, a
  /// wrong clock): it is cut at the bound and kept as a kTimeout fault() naming the wait.
  std::chrono::nanoseconds max_wait = std::chrono::seconds(60);
  /// The CMAC kernel's compute unit (xup_vitis_network_example's cmac_0), for open_cmac().
  std::string cmac_ip = "cmac_0:{cmac_0}";
};

/// One entry of an xclbin's CLOCK_FREQ_TOPOLOGY section.
struct XclbinClock {
  std::string name;   // "DATA_CLK", "KERNEL_CLK"
  unsigned type = 0;  // CLOCK_TYPE: 1 data, 2 kernel, 3 system
  unsigned mhz = 0;
};
/// ap_clk of the kernels among an xclbin's clocks: the platform's clock 0, listed as the data
/// clock (v++ --kernel_frequency 0:F sets it), else the first kernel clock. nullopt when
/// there is neither (or it is 0 MHz).
std::optional<double> kernel_clock_of(const std::vector<XclbinClock>& clocks);
/// The kernel clock when neither --clock-mhz nor the xclbin says (the link config's default).
inline constexpr double kDefaultKernelClockMhz = 250.0;

/// What open() found, for messages.
struct XrtInfo {
  std::string bdf;
  std::string name;         // VBNV of the shell
  std::string xclbin_uuid;  // of the loaded xclbin
  std::string ip_name;      // "bouncer_kernel:{bouncer_1}"
  unsigned host_bank = 0;   // memory-group index of HOST[0]
  std::string host_bank_tag;
  double xclbin_clock_mhz = 0;  // ap_clk as the xclbin says (0: it has no clock section)
  double kernel_clock_mhz = 0;  // the one in use (XrtOptions, else the xclbin's, else 250)
  std::string cmac_ip;          // XrtOptions::cmac_ip
};

/// true when this binary was built with XRT (BOUNCER_XRT=ON).
bool xrt_backend_built();

class XrtDevice final : public hal::Device {
 public:
  /// Opens the device, loads the xclbin when given, finds the HOST bank and opens the
  /// kernel's register space. kNoDevice with XRT's message (and what to check) on failure.
  static Result<std::unique_ptr<XrtDevice>> open(const XrtOptions& opts);
  ~XrtDevice() override;
  XrtDevice(const XrtDevice&) = delete;
  XrtDevice& operator=(const XrtDevice&) = delete;

  uint32_t read32(uint32_t offset) override;
  void write32(uint32_t offset, uint32_t value) override;
  /// host_only xrt::bo in the HOST bank, zeroed, mapped; aligned to `align` (XRT gives
  /// pages; larger alignments are carved out of a larger buffer).
  Result<std::unique_ptr<hal::DmaBuffer>> alloc_dma(size_t bytes, size_t align) override;
  /// Sleeps cycles / kernel clock (short waits spin on the steady clock), at most
  /// XrtOptions::max_wait (bounded_wait).
  void wait_cycles(uint64_t cycles) override;
  /// The kernel's CYCLE_LO/CYCLE_HI counter (one pair of reads at a time: reading CYCLE_LO
  /// latches CYCLE_HI). Diagnostics only; the driver's deadlines use host_now().
  uint64_t now_cycles() override;
  /// std::chrono::steady_clock.
  std::chrono::nanoseconds host_now() override;
  /// Sleeps `d` (short waits spin on the steady clock), at most XrtOptions::max_wait.
  void wait_for(std::chrono::nanoseconds d) override;
  const char* name() const override { return "xrt"; }

  const XrtInfo& info() const;
  /// The CMAC kernel's registers (xrt::ip of XrtOptions::cmac_ip), for cmac::CmacLink; the
  /// window's waits use the steady clock. kNoDevice when the xclbin has no such IP.
  Result<std::unique_ptr<cmac::CmacRegisters>> open_cmac();
  /// The first XRT failure of a call that cannot return one (read32, write32, sync).
  const std::optional<Error>& fault() const;

  struct Impl;

 private:
  explicit XrtDevice(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// ------------------------------------------------------------------------- probe

/// A PCI function of vendor 0x10ee (Xilinx/AMD) as sysfs shows it.
struct PciFunction {
  std::string bdf;
  uint16_t vendor = 0;
  uint16_t device = 0;
  std::string driver;  // bound driver ("xocl", "xclmgmt", ...); empty: none
};

struct ProbeReport {
  std::string sysfs_root;
  bool backend_built = false;
  std::vector<PciFunction> functions;  // every Xilinx function found (filtered by --device)
  std::string xilinx_xrt;              // $XILINX_XRT, empty when unset
  std::vector<std::string> usable;     // devices XRT opened: "BDF  shell name"
  std::vector<std::string> problems;   // why nothing (or not everything) is usable
  bool ok() const { return !usable.empty(); }
};

/// Looks for cards: Xilinx PCI functions in `sysfs_root`/bus/pci/devices, the XRT runtime
/// ($XILINX_XRT and its shim), then asks XRT for its devices (when the backend is built).
/// `only_bdf` restricts everything to one function (empty: all). Never throws.
ProbeReport probe_cards(const std::string& only_bdf = {}, const std::string& sysfs_root = "/sys");

/// The report as text; ends with what to do when nothing is usable.
std::string format_probe_report(const ProbeReport& p);

/// A wait of `want` seconds of host time, as the backend does it: at most `bound`; beyond
/// it (or not a finite number) the bound, and a kTimeout error naming `what` and both figures.
struct BoundedWait {
  std::chrono::nanoseconds wait{};
  std::optional<Error> error;
};
BoundedWait bounded_wait(double want_s, std::chrono::nanoseconds bound, const std::string& what);

namespace detail {
/// XRT's own view: indices and BDFs of the devices it can open (backend only).
void xrt_enumerate(const std::string& only_bdf, ProbeReport& rep);
}  // namespace detail

}  // namespace bouncer::card
