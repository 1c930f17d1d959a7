// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// The card side that can run without a card: `bouncer card probe` (sysfs scan, XRT runtime
// checks, XRT's own device enumeration), XrtDevice::open's errors, and the CLI's messages and
// exit codes. This machine has no Alveo card and Debian's XRT has no driver: what is checked
// is that every path says so clearly instead of crashing. Fake sysfs trees stand in for
// machines with a card; a shim directory of Debian's libxrt_core makes XRT really look.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "bouncer/xrt_device.hpp"

namespace {

namespace fs = std::filesystem;
using bouncer::Errc;
using bouncer::card::probe_cards;
using bouncer::card::ProbeReport;

bool has(const std::vector<std::string>& v, const std::string& part) {
  for (const auto& s : v) {
    if (s.find(part) != std::string::npos) return true;
  }
  return false;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += x + "\n";
  return s;
}

// A scratch directory per test, removed afterwards.
class CardProbe : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    root_ = fs::path(::testing::TempDir()) / (std::string("bouncer_probe_") + info->name());
    fs::remove_all(root_);
    fs::create_directories(root_ / "sys/bus/pci/devices");
    fs::create_directories(root_ / "sys/bus/pci/drivers");
    unsetenv("XILINX_XRT");
  }
  void TearDown() override { fs::remove_all(root_); }

  std::string sysfs() const { return (root_ / "sys").string(); }
  // One PCI function as sysfs shows it: vendor/device files, the driver symlink.
  void add_function(const std::string& bdf, const std::string& vendor, const std::string& device,
                    const std::string& driver = {}) {
    const fs::path d = root_ / "sys/bus/pci/devices" / bdf;
    fs::create_directories(d);
    std::ofstream(d / "vendor") << vendor << "\n";
    std::ofstream(d / "device") << device << "\n";
    if (!driver.empty()) {
      fs::create_directories(root_ / "sys/bus/pci/drivers" / driver);
      fs::create_directory_symlink(root_ / "sys/bus/pci/drivers" / driver, d / "driver");
    }
  }
  // XILINX_XRT for XRT's loader: lib/libxrt_core.so.2 (+ the emulation shims) from Debian.
  std::string debian_shim_dir() {
    const fs::path d = root_ / "xrt";
    fs::create_directories(d / "lib");
    for (const char* n : {"core", "noop", "swemu", "hwemu"}) {
      const fs::path lib =
          fs::path("/usr/lib/x86_64-linux-gnu") / ("libxrt_" + std::string(n) + ".so.2");
      if (fs::exists(lib)) fs::create_symlink(lib, d / "lib" / lib.filename());
    }
    return d.string();
  }

  fs::path root_;
};

TEST_F(CardProbe, ThisMachineHasNoCard) {
  const ProbeReport rep = probe_cards();
  EXPECT_FALSE(rep.ok());
  EXPECT_EQ(rep.backend_built, bouncer::card::xrt_backend_built());
  // This machine (and CI) has no Xilinx function; assert it rather than assume it.
  ASSERT_TRUE(rep.functions.empty())
      << "a Xilinx PCI function is present: " << rep.functions[0].bdf;
  EXPECT_TRUE(
      has(rep.problems, "no Xilinx/AMD PCI function (vendor 0x10ee) under /sys/bus/pci/devices"))
      << joined(rep.problems);
  EXPECT_TRUE(has(rep.problems, "XILINX_XRT is not set")) << joined(rep.problems);
  const std::string text = format_probe_report(rep);
  EXPECT_NE(text.find("no card or XRT driver is available"), std::string::npos) << text;
}

TEST_F(CardProbe, ListsXilinxFunctionsAndTheMissingDriver) {
  add_function("0000:3b:00.1", "0x10ee", "0x5005");
  add_function("0000:3b:00.0", "0x10ee", "0x5004", "xclmgmt");
  add_function("0000:00:03.0", "0x1af4", "0x1000", "virtio-pci");
  add_function("0000:00:04.0", "garbage", "0x1000");
  const ProbeReport rep = probe_cards({}, sysfs());
  EXPECT_FALSE(rep.ok());
  ASSERT_EQ(rep.functions.size(), 2u);
  EXPECT_EQ(rep.functions[0].bdf, "0000:3b:00.0");  // sorted
  EXPECT_EQ(rep.functions[0].device, 0x5004);
  EXPECT_EQ(rep.functions[0].driver, "xclmgmt");
  EXPECT_EQ(rep.functions[1].bdf, "0000:3b:00.1");
  EXPECT_EQ(rep.functions[1].driver, "");
  EXPECT_TRUE(has(rep.problems, "no Xilinx function is bound to xocl")) << joined(rep.problems);
  EXPECT_TRUE(has(rep.problems, "the module is not loaded")) << joined(rep.problems);
  const std::string text = format_probe_report(rep);
  EXPECT_NE(text.find("0000:3b:00.1  10ee:5005  driver (none)"), std::string::npos) << text;
  EXPECT_NE(text.find("0000:3b:00.0  10ee:5004  driver xclmgmt"), std::string::npos) << text;
}

TEST_F(CardProbe, DeviceFilter) {
  add_function("0000:3b:00.1", "0x10ee", "0x5005", "xocl");
  add_function("0000:d8:00.1", "0x10ee", "0x500d", "xocl");
  auto rep = probe_cards("0000:d8:00.1", sysfs());
  ASSERT_EQ(rep.functions.size(), 1u);
  EXPECT_EQ(rep.functions[0].bdf, "0000:d8:00.1");
  EXPECT_FALSE(has(rep.problems, "bound to xocl")) << joined(rep.problems);
  rep = probe_cards("0000:af:00.1", sysfs());
  EXPECT_TRUE(rep.functions.empty());
  EXPECT_TRUE(has(rep.problems, "no Xilinx/AMD PCI function at 0000:af:00.1 (2 elsewhere)"))
      << joined(rep.problems);
}

TEST_F(CardProbe, XilinxXrtWithoutShim) {
  fs::create_directories(root_ / "empty");
  setenv("XILINX_XRT", (root_ / "empty").c_str(), 1);
  const auto rep = probe_cards({}, sysfs());
  EXPECT_EQ(rep.xilinx_xrt, (root_ / "empty").string());
  EXPECT_TRUE(has(rep.problems, "has no lib/libxrt_core.so.2")) << joined(rep.problems);
  EXPECT_TRUE(has(rep.problems, "cannot list") || has(rep.problems, "no Xilinx/AMD"))
      << joined(rep.problems);
}

// A card bound to xocl as sysfs shows it, and a real XRT runtime (Debian's libs): XRT itself
// is asked and finds no device it can open (there is no xocl device node here).
TEST_F(CardProbe, XrtIsAskedAndFindsNothing) {
  if (!bouncer::card::xrt_backend_built()) GTEST_SKIP() << "built without XRT";
  if (!fs::exists("/usr/lib/x86_64-linux-gnu/libxrt_core.so.2")) {
    GTEST_SKIP() << "Debian's libxrt_core.so.2 is not installed";
  }
  add_function("0000:3b:00.1", "0x10ee", "0x5005", "xocl");
  setenv("XILINX_XRT", debian_shim_dir().c_str(), 1);
  const auto rep = probe_cards({}, sysfs());
  EXPECT_FALSE(rep.ok());
  EXPECT_TRUE(rep.usable.empty());
  EXPECT_TRUE(has(rep.problems, "XRT found no device it can open")) << joined(rep.problems);
}

TEST_F(CardProbe, XrtDeviceOpenErrorsAreResultsNotExceptions) {
  bouncer::card::XrtOptions o;
  auto r = bouncer::card::XrtDevice::open(o);
  ASSERT_FALSE(r);
  if (!bouncer::card::xrt_backend_built()) {
    EXPECT_EQ(r.error().code, Errc::kNoDevice);
    EXPECT_NE(r.error().message.find("built without the XRT backend"), std::string::npos);
    return;
  }
  EXPECT_EQ(r.error().code, Errc::kInvalidArgument);
  EXPECT_NE(r.error().message.find("no device given"), std::string::npos);

  o.device = "0000:3b:00.1";
  o.kernel_clock_mhz = -1;  // 0 is "the xclbin's"
  r = bouncer::card::XrtDevice::open(o);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::kInvalidArgument);
  EXPECT_NE(r.error().message.find("kernel clock -1 MHz is negative"), std::string::npos)
      << r.error().message;

  o.kernel_clock_mhz = 300;
  o.xclbin = "/nonexistent/bouncer.xclbin";
  r = bouncer::card::XrtDevice::open(o);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::kNoDevice);
  EXPECT_NE(r.error().message.find("reading xclbin '/nonexistent/bouncer.xclbin'"),
            std::string::npos)
      << r.error().message;

  o.xclbin.clear();
  unsetenv("XILINX_XRT");
  r = bouncer::card::XrtDevice::open(o);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::kNoDevice);
  EXPECT_NE(r.error().message.find("opening device '0000:3b:00.1'"), std::string::npos)
      << r.error().message;
  EXPECT_NE(r.error().message.find("xbutil examine"), std::string::npos) << r.error().message;
}

// ------------------------------------------------------------------ the CLI

struct CliRun {
  int status = -1;
  std::string out;  // stdout and stderr
};

CliRun run_cli(const std::string& args) {
  CliRun r;
  const std::string cmd = std::string(BOUNCER_CLI) + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  std::array<char, 4096> buf{};
  size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

TEST_F(CardProbe, CliProbeSaysNoCardAndExits2) {
  const CliRun r = run_cli("card probe");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("no card or XRT driver is available, so nothing can run on hardware here"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("no Xilinx/AMD PCI function"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("XILINX_XRT is not set"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("bouncer sim --mode selftest"), std::string::npos) << r.out;

  add_function("0000:3b:00.1", "0x10ee", "0x5005");
  const CliRun f = run_cli("card probe --sysfs-root " + sysfs() + " --device 0000:3b:00.1");
  EXPECT_EQ(f.status, 2) << f.out;
  EXPECT_NE(f.out.find("0000:3b:00.1  10ee:5005  driver (none)"), std::string::npos) << f.out;
  EXPECT_NE(f.out.find("no Xilinx function is bound to xocl"), std::string::npos) << f.out;
}

TEST_F(CardProbe, CliSelftestWithoutACardExits2) {
  const CliRun r = run_cli("card selftest --device 0000:3b:00.1 --xclbin /nonexistent.xclbin");
  EXPECT_EQ(r.status, 2) << r.out;
  if (bouncer::card::xrt_backend_built()) {
    EXPECT_NE(r.out.find("bouncer card selftest: xrt: reading xclbin '/nonexistent.xclbin'"),
              std::string::npos)
        << r.out;
  }
  EXPECT_NE(r.out.find("`bouncer card probe` lists what this machine has"), std::string::npos)
      << r.out;
  const CliRun d = run_cli("card selftest --device 0000:3b:00.1");
  EXPECT_EQ(d.status, 2) << d.out;
  if (bouncer::card::xrt_backend_built()) {
    EXPECT_NE(d.out.find("opening device '0000:3b:00.1'"), std::string::npos) << d.out;
  }
  const CliRun m = run_cli("card selftest");  // --device is required
  EXPECT_NE(m.status, 0) << m.out;
  EXPECT_NE(m.out.find("--device is required"), std::string::npos) << m.out;
}

TEST_F(CardProbe, CliBenchWithoutACardSaysWhyAndExits2) {
  const CliRun r = run_cli("card bench -d 0000:3b:00.1 --pd 0,64");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("bouncer card bench: xrt:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("`bouncer card probe` lists what this machine has"), std::string::npos)
      << r.out;
  const CliRun nodev = run_cli("card bench");  // the device is required
  EXPECT_NE(nodev.status, 0) << nodev.out;
  EXPECT_NE(nodev.out.find("--device is required"), std::string::npos) << nodev.out;
}

// The same self-test on the co-simulated core, from the CLI (what the probe points to).
TEST_F(CardProbe, CliSimSelftestModePasses) {
  for (const char* w : {"64", "512"}) {
    const CliRun r = run_cli(std::string("sim --mode selftest --width ") + w);
    EXPECT_EQ(r.status, 0) << r.out;
    EXPECT_NE(r.out.find(" checks, 0 failed"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("self-test: PASS"), std::string::npos) << r.out;
  }
}

}  // namespace
