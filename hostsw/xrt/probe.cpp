// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// `bouncer card probe`: what this machine has of an Alveo card, its driver and XRT, and why
// nothing is usable when that is the case. sysfs is read directly (no XRT needed for that),
// XRT is asked only when its runtime is there.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "bouncer/xrt_device.hpp"

namespace bouncer::card {

namespace {

namespace fs = std::filesystem;

constexpr uint16_t kXilinxVendor = 0x10ee;

std::optional<uint16_t> read_hex_id(const fs::path& p) {
  std::ifstream in(p);
  std::string s;
  if (!(in >> s)) return std::nullopt;
  try {
    size_t used = 0;
    const unsigned long v = std::stoul(s, &used, 16);
    if (used != s.size() || v > 0xFFFF) return std::nullopt;
    return static_cast<uint16_t>(v);
  } catch (...) {
    return std::nullopt;
  }
}

}  // namespace

ProbeReport probe_cards(const std::string& only_bdf, const std::string& sysfs_root) {
  ProbeReport rep;
  rep.sysfs_root = sysfs_root;
  rep.backend_built = xrt_backend_built();
  const fs::path pci = fs::path(sysfs_root) / "bus/pci/devices";
  std::error_code ec;
  bool listed = false;
  size_t other_xilinx = 0;
  for (fs::directory_iterator it(pci, ec), end; !ec && it != end; it.increment(ec)) {
    listed = true;
    const auto vendor = read_hex_id(it->path() / "vendor");
    if (!vendor || *vendor != kXilinxVendor) continue;
    PciFunction f;
    f.bdf = it->path().filename().string();
    f.vendor = *vendor;
    f.device = read_hex_id(it->path() / "device").value_or(0);
    std::error_code lec;
    const auto drv = fs::read_symlink(it->path() / "driver", lec);
    if (!lec) f.driver = drv.filename().string();
    if (!only_bdf.empty() && f.bdf != only_bdf) {
      ++other_xilinx;
      continue;
    }
    rep.functions.push_back(std::move(f));
  }
  std::sort(rep.functions.begin(), rep.functions.end(),
            [](const PciFunction& a, const PciFunction& b) { return a.bdf < b.bdf; });

  if (!listed) {
    rep.problems.push_back(
        fmt::format("cannot list {} ({})", pci.string(), ec ? ec.message() : std::string("empty")));
  } else if (rep.functions.empty()) {
    if (!only_bdf.empty()) {
      rep.problems.push_back(
          fmt::format("no Xilinx/AMD PCI function at {} ({} elsewhere)", only_bdf, other_xilinx));
    } else {
      rep.problems.push_back(fmt::format(
          "no Xilinx/AMD PCI function (vendor 0x{:04x}) under {}: this machine has no Alveo "
          "card (or it is not passed through to this VM)",
          kXilinxVendor, pci.string()));
    }
  } else {
    const bool user_pf = std::any_of(rep.functions.begin(), rep.functions.end(),
                                     [](const PciFunction& f) { return f.driver == "xocl"; });
    if (!user_pf) {
      const bool module = fs::exists(fs::path(sysfs_root) / "module/xocl", ec);
      rep.problems.push_back(fmt::format(
          "no Xilinx function is bound to xocl, XRT's user-PF driver ({}): install AMD's xrt "
          "and xrt-dkms packages matching the card's shell (Debian's libxrt packages ship no "
          "driver)",
          module ? "the module is loaded but did not bind" : "the module is not loaded"));
    }
  }

  const char* xx = std::getenv("XILINX_XRT");
  rep.xilinx_xrt = xx != nullptr ? xx : "";
  bool runtime = false;
  if (rep.xilinx_xrt.empty()) {
    rep.problems.push_back(
        "XILINX_XRT is not set: source /opt/xilinx/xrt/setup.sh of AMD's XRT. Debian's "
        "libxrt packages are enough to build this backend, not to open a device (no PCIe "
        "shim where XRT looks for it, $XILINX_XRT/lib, and no working xbutil)");
  } else if (!fs::exists(fs::path(rep.xilinx_xrt) / "lib/libxrt_core.so.2", ec)) {
    rep.problems.push_back(fmt::format(
        "XILINX_XRT={} has no lib/libxrt_core.so.2 (XRT's PCIe shim): not an XRT installation",
        rep.xilinx_xrt));
  } else {
    runtime = true;
  }
  if (!rep.backend_built) {
    rep.problems.push_back(
        "this bouncer was built without the XRT backend (BOUNCER_XRT=OFF): install libxrt-dev "
        "and uuid-dev (or AMD's xrt) and reconfigure");
  } else if (runtime) {
    detail::xrt_enumerate(only_bdf, rep);
  }
  return rep;
}

BoundedWait bounded_wait(double want_s, std::chrono::nanoseconds bound, const std::string& what) {
  BoundedWait w;
  const double bound_s = std::chrono::duration<double>(bound).count();
  if (want_s <= 0) return w;  // nothing to wait (a NaN fails the next test)
  if (want_s <= bound_s) {
    w.wait = std::chrono::nanoseconds(static_cast<int64_t>(std::ceil(want_s * 1e9)));
    return w;
  }
  w.wait = bound;
  w.error = make_error(Errc::kTimeout,
                       fmt::format("xrt: {}: {} s asked for, more than the backend's bound of "
                                   "{:.3f} s (XrtOptions::max_wait); cut at the bound",
                                   what, want_s, bound_s));
  return w;
}

std::optional<double> kernel_clock_of(const std::vector<XclbinClock>& clocks) {
  constexpr unsigned kData = 1, kKernel = 2;  // xclbin.h CLOCK_TYPE
  for (unsigned want : {kData, kKernel}) {
    for (const XclbinClock& c : clocks) {
      if (c.type == want) {
        if (c.mhz == 0) return std::nullopt;
        return static_cast<double>(c.mhz);
      }
    }
  }
  return std::nullopt;
}

std::string format_probe_report(const ProbeReport& p) {
  std::string s;
  s += fmt::format("XRT backend: {}\n", p.backend_built ? "built in" : "not built");
  s += fmt::format("PCI functions of vendor 0x10ee under {}/bus/pci/devices: {}\n", p.sysfs_root,
                   p.functions.size());
  for (const auto& f : p.functions) {
    s += fmt::format("  {}  {:04x}:{:04x}  driver {}\n", f.bdf, f.vendor, f.device,
                     f.driver.empty() ? "(none)" : f.driver);
  }
  s += fmt::format("XRT runtime: XILINX_XRT={}\n", p.xilinx_xrt.empty() ? "(unset)" : p.xilinx_xrt);
  if (p.ok()) {
    s += "devices XRT can open:\n";
    for (const auto& u : p.usable) s += "  " + u + "\n";
    if (!p.problems.empty()) s += "also found:\n";
  } else {
    s += "no card or XRT driver is available, so nothing can run on hardware here:\n";
  }
  for (const auto& pr : p.problems) s += "  - " + pr + "\n";
  if (!p.ok()) {
    s += "The co-simulation runs the same driver: `bouncer sim --mode selftest`, `bouncer sim`.\n";
  }
  return s;
}

}  // namespace bouncer::card
