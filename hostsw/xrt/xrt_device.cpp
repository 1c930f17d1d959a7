// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// XrtDevice: hal::Device on an Alveo card through XRT's native C++ API (XRT 2.13 or newer).
// Compiled only with BOUNCER_XRT=ON. Every XRT call is wrapped: no exception leaves this file.
#include "bouncer/xrt_device.hpp"

#include <experimental/xrt_ip.h>
#include <experimental/xrt_system.h>
#include <experimental/xrt_xclbin.h>
#include <fmt/format.h>
#include <xrt/xrt_bo.h>
#include <xrt/xrt_device.h>

#include <chrono>
#include <cstring>
#include <exception>
#include <mutex>
#include <thread>
#include <utility>

#include "bouncer/regs.hpp"

namespace bouncer::card {

namespace {

constexpr size_t kPage = 4096;
constexpr uint32_t kAllOnes = 0xFFFFFFFFu;

const char* what_of(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& ex) {
    return ex.what();
  } catch (...) {
    return "unknown exception";
  }
}

// The first failure of a call that cannot return it, shared with the buffers (which the
// driver frees before the device, but a shared state makes the order irrelevant).
struct FaultState {
  std::optional<Error> fault;
  void record(const std::string& what, const char* why) {
    if (!fault) fault = make_error(Errc::kHardware, fmt::format("xrt: {}: {}", what, why));
  }
  void record(Error e) {
    if (!fault) fault = std::move(e);
  }
};

class XrtDmaBuffer final : public hal::DmaBuffer {
 public:
  XrtDmaBuffer(xrt::bo bo, std::byte* cpu, size_t offset, size_t bytes, uint64_t addr,
               std::shared_ptr<FaultState> fs)
      : bo_(std::move(bo)),
        cpu_(cpu),
        offset_(offset),
        bytes_(bytes),
        addr_(addr),
        fs_(std::move(fs)) {}
  ~XrtDmaBuffer() override {
    try {
      bo_ = xrt::bo();  // frees the buffer object; XRT may throw on a dead device
    } catch (...) {
      fs_->record("freeing a buffer", what_of(std::current_exception()));
    }
  }

  std::span<std::byte> bytes() override { return {cpu_ + offset_, bytes_}; }
  uint64_t device_addr() const override { return addr_; }
  void sync_to_device(size_t off, size_t len) override { sync(XCL_BO_SYNC_BO_TO_DEVICE, off, len); }
  void sync_from_device(size_t off, size_t len) override {
    sync(XCL_BO_SYNC_BO_FROM_DEVICE, off, len);
  }

 private:
  // host_only buffers: a cache flush/invalidate, which XRT still asks for.
  void sync(xclBOSyncDirection dir, size_t off, size_t len) {
    if (len == 0 || off >= bytes_) return;
    len = std::min(len, bytes_ - off);
    try {
      bo_.sync(dir, len, offset_ + off);
    } catch (...) {
      fs_->record(fmt::format("sync of {} bytes at device address 0x{:x}", len, addr_ + off),
                  what_of(std::current_exception()));
    }
  }

  xrt::bo bo_;
  std::byte* cpu_;
  size_t offset_;
  size_t bytes_;
  uint64_t addr_;
  std::shared_ptr<FaultState> fs_;
};

bool all_digits(const std::string& s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
}

std::string hint_for_device() {
  return "check that `xbutil examine` lists the card, that the BDF given is its user PF "
         "(function .1) and that XRT's setup.sh was sourced (XILINX_XRT)";
}

// The HOST bank of a MEM_TOPOLOGY section: the memory group host_only buffers must use.
std::optional<std::pair<unsigned, std::string>> host_bank_of(const mem_topology* topo) {
  if (topo == nullptr) return std::nullopt;
  const mem_data* md = topo->m_mem_data;
  for (int32_t i = 0; i < topo->m_count; ++i) {
    if (md[i].m_type == MEM_HOST && md[i].m_used != 0) {
      const auto* tag = reinterpret_cast<const char*>(md[i].m_tag);
      return std::make_pair(static_cast<unsigned>(i), std::string(tag, strnlen(tag, 16)));
    }
  }
  return std::nullopt;
}

// Sleeping costs tens of microseconds of scheduler latency: spin for the short waits the
// pollers use, sleep for the long ones.
void sleep_or_spin(std::chrono::nanoseconds ns) {
  if (ns <= std::chrono::nanoseconds::zero()) return;
  if (ns < std::chrono::microseconds(200)) {
    const auto until = std::chrono::steady_clock::now() + ns;
    while (std::chrono::steady_clock::now() < until) std::this_thread::yield();
  } else {
    std::this_thread::sleep_for(ns);
  }
}

}  // namespace

struct XrtDevice::Impl {
  xrt::device dev;
  xrt::uuid uuid;
  xrt::ip ip;
  XrtInfo info;
  double cycles_per_ns = 0.25;
  std::chrono::nanoseconds max_wait{};
  std::shared_ptr<FaultState> fs = std::make_shared<FaultState>();
  std::mutex cycle_mu;  // a CYCLE_LO read latches CYCLE_HI: one pair at a time
};

bool xrt_backend_built() { return true; }

Result<std::unique_ptr<XrtDevice>> XrtDevice::open(const XrtOptions& o) {
  if (o.device.empty()) {
    return make_error(Errc::kInvalidArgument,
                      "xrt: no device given (a user-PF BDF such as 0000:3b:00.1, or an index)");
  }
  if (!(o.kernel_clock_mhz >= 0.0)) {
    return make_error(Errc::kInvalidArgument,
                      fmt::format("xrt: kernel clock {} MHz is negative", o.kernel_clock_mhz));
  }
  auto impl = std::make_unique<Impl>();
  std::string stage;
  try {
    xrt::xclbin xb;
    if (!o.xclbin.empty()) {
      stage = fmt::format("reading xclbin '{}'", o.xclbin);
      xb = xrt::xclbin(o.xclbin);
    }
    stage = fmt::format("opening device '{}'", o.device);
    impl->dev = all_digits(o.device) ? xrt::device(static_cast<unsigned>(std::stoul(o.device)))
                                     : xrt::device(o.device);
    if (!o.xclbin.empty()) {
      stage = fmt::format("loading xclbin '{}'", o.xclbin);
      impl->uuid = impl->dev.load_xclbin(xb);
    } else {
      stage = "reading the uuid of the loaded xclbin";
      impl->uuid = impl->dev.get_xclbin_uuid();
    }
    stage = "reading the xclbin's memory topology";
    const auto* topo = impl->dev.get_xclbin_section<const mem_topology*>(
        axlf_section_kind::MEM_TOPOLOGY, impl->uuid);
    auto bank = host_bank_of(topo);
    if (!bank) {
      return make_error(Errc::kNoDevice,
                        "xrt: the xclbin has no HOST memory bank in use: link the kernel with "
                        "sp=bouncer_1.m_axi_host:HOST[0] (scripts/, docs/lab.md) on a platform "
                        "with host memory, and enable it with `xbutil configure --host-mem`");
    }
    impl->info.host_bank = bank->first;
    impl->info.host_bank_tag = bank->second;
    impl->info.ip_name = fmt::format("{}:{{{}}}", o.kernel, o.instance);
    stage = fmt::format("opening IP '{}'", impl->info.ip_name);
    try {
      impl->ip = xrt::ip(impl->dev, impl->uuid, impl->info.ip_name);
    } catch (const std::exception& e) {
      std::string names;
      if (!o.xclbin.empty()) {
        for (const auto& ipx : xb.get_ips()) names += (names.empty() ? "" : ", ") + ipx.get_name();
      }
      return make_error(Errc::kNoDevice,
                        fmt::format("xrt: {}: {}{}", stage, e.what(),
                                    names.empty() ? "" : " (IPs in the xclbin: " + names + ")"));
    }
    stage = "reading the xclbin's clock topology";
    try {
      const auto* clk = impl->dev.get_xclbin_section<const clock_freq_topology*>(
          axlf_section_kind::CLOCK_FREQ_TOPOLOGY, impl->uuid);
      if (clk != nullptr) {
        std::vector<XclbinClock> clocks;
        for (int16_t i = 0; i < clk->m_count; ++i) {
          const clock_freq& f = clk->m_clock_freq[i];
          clocks.push_back(
              {std::string(f.m_name, strnlen(f.m_name, sizeof f.m_name)), f.m_type, f.m_freq_Mhz});
        }
        impl->info.xclbin_clock_mhz = kernel_clock_of(clocks).value_or(0.0);
      }
    } catch (const std::exception&) {
      // No such section: the clock comes from the options or the default (info says which).
    }
    impl->info.kernel_clock_mhz = o.kernel_clock_mhz > 0            ? o.kernel_clock_mhz
                                  : impl->info.xclbin_clock_mhz > 0 ? impl->info.xclbin_clock_mhz
                                                                    : kDefaultKernelClockMhz;
    impl->cycles_per_ns = impl->info.kernel_clock_mhz / 1000.0;
    impl->info.cmac_ip = o.cmac_ip;
    impl->max_wait = o.max_wait;
    stage = "querying the device";
    impl->info.bdf = impl->dev.get_info<xrt::info::device::bdf>();
    impl->info.name = impl->dev.get_info<xrt::info::device::name>();
    impl->info.xclbin_uuid = impl->uuid.to_string();
  } catch (const std::exception& e) {
    const bool dev_stage = stage.rfind("opening device", 0) == 0;
    return make_error(Errc::kNoDevice, fmt::format("xrt: {}: {}{}", stage, e.what(),
                                                   dev_stage ? "; " + hint_for_device() : ""));
  } catch (...) {
    return make_error(Errc::kNoDevice, fmt::format("xrt: {}: unknown exception", stage));
  }
  return std::unique_ptr<XrtDevice>(new XrtDevice(std::move(impl)));
}

XrtDevice::XrtDevice(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

XrtDevice::~XrtDevice() {
  try {
    impl_.reset();
  } catch (...) {  // nothing can be reported from here; XRT frees what it can
  }
}

const XrtInfo& XrtDevice::info() const { return impl_->info; }

const std::optional<Error>& XrtDevice::fault() const { return impl_->fs->fault; }

namespace {

// The CMAC kernel's registers through its own xrt::ip. An XRT failure is kept like the
// device's (the first one), and reads then return all ones, which decode as a link down.
class XrtCmacRegisters final : public cmac::CmacRegisters {
 public:
  XrtCmacRegisters(xrt::ip ip, std::string name, std::shared_ptr<FaultState> fs)
      : ip_(std::move(ip)), name_(std::move(name)), fs_(std::move(fs)) {}
  uint32_t read32(uint32_t offset) override {
    if (fs_->fault) return kAllOnes;
    try {
      return ip_.read_register(offset);
    } catch (...) {
      fs_->record(fmt::format("{}: register read at 0x{:04X}", name_, offset),
                  what_of(std::current_exception()));
      return kAllOnes;
    }
  }
  void write32(uint32_t offset, uint32_t value) override {
    if (fs_->fault) return;
    try {
      ip_.write_register(offset, value);
    } catch (...) {
      fs_->record(fmt::format("{}: register write of 0x{:08X} at 0x{:04X}", name_, value, offset),
                  what_of(std::current_exception()));
    }
  }
  std::chrono::nanoseconds host_now() override {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
        std::chrono::steady_clock::now().time_since_epoch());
  }
  void wait_for(std::chrono::nanoseconds d) override {
    if (d > std::chrono::nanoseconds::zero()) std::this_thread::sleep_for(d);
  }

 private:
  xrt::ip ip_;
  std::string name_;
  std::shared_ptr<FaultState> fs_;
};

}  // namespace

Result<std::unique_ptr<cmac::CmacRegisters>> XrtDevice::open_cmac() {
  try {
    xrt::ip ip(impl_->dev, impl_->uuid, impl_->info.cmac_ip);
    return std::unique_ptr<cmac::CmacRegisters>(
        std::make_unique<XrtCmacRegisters>(std::move(ip), impl_->info.cmac_ip, impl_->fs));
  } catch (const std::exception& e) {
    return make_error(Errc::kNoDevice,
                      fmt::format("xrt: opening the CMAC kernel '{}': {} (is the xclbin linked "
                                  "with xup's cmac_0 kernel, scripts/card/link_*.cfg?)",
                                  impl_->info.cmac_ip, e.what()));
  }
}

uint32_t XrtDevice::read32(uint32_t offset) {
  if (impl_->fs->fault) return kAllOnes;
  try {
    return impl_->ip.read_register(offset);
  } catch (...) {
    impl_->fs->record(fmt::format("register read at 0x{:04X}", offset),
                      what_of(std::current_exception()));
    return kAllOnes;
  }
}

void XrtDevice::write32(uint32_t offset, uint32_t value) {
  if (impl_->fs->fault) return;
  try {
    impl_->ip.write_register(offset, value);
  } catch (...) {
    impl_->fs->record(fmt::format("register write of 0x{:08X} at 0x{:04X}", value, offset),
                      what_of(std::current_exception()));
  }
}

// The push page (hal::Device::write_push) keeps the default: 16 register writes through
// write32. A 64-byte write-combined burst needs the register window mapped write-combining,
// and this backend has no such mapping: xrt::ip reads and writes registers through XRT (its
// own uncached mapping of the user BAR, or the kernel driver), one 32-bit access per call, and
// XRT's native API hands out no other view of the BAR. Mapping it separately (sysfs resourceN_wc)
// works only for a prefetchable BAR and bypasses XRT's exclusive claim on the IP. The cost is the
// PCIe side only: 16 posted 4-byte writes instead of one 64-byte one, all ahead of the push
// doorbell, which is written after them and so never overtakes them. Behind the PCIe-to-AXI bridge
// the core's AXI4-Lite port takes 32-bit beats either way.
Result<std::unique_ptr<hal::DmaBuffer>> XrtDevice::alloc_dma(size_t bytes, size_t align) {
  if (bytes == 0 || align == 0 || (align & (align - 1)) != 0) {
    return make_error(Errc::kInvalidArgument,
                      fmt::format("alloc_dma: bytes must be > 0 and align a power of two "
                                  "(bytes={}, align={})",
                                  bytes, align));
  }
  // XRT hands out whole pages; a larger alignment is carved out of a larger buffer.
  const size_t total = align > kPage ? bytes + align : bytes;
  try {
    xrt::bo bo(impl_->dev, total, xrt::bo::flags::host_only,
               static_cast<xrt::memory_group>(impl_->info.host_bank));
    auto* cpu = bo.map<std::byte*>();
    const uint64_t base = bo.address();
    const size_t off = static_cast<size_t>((align - base % align) % align);
    std::memset(cpu, 0, total);
    bo.sync(XCL_BO_SYNC_BO_TO_DEVICE, total, 0);
    return std::unique_ptr<hal::DmaBuffer>(
        std::make_unique<XrtDmaBuffer>(std::move(bo), cpu, off, bytes, base + off, impl_->fs));
  } catch (const std::exception& e) {
    return make_error(
        Errc::kNoMemory,
        fmt::format("xrt: host_only buffer of {} bytes in bank {} ({}): {}; is "
                    "host memory enabled (`xbutil configure --host-mem --size 1G "
                    "ENABLE`) and large enough?",
                    total, impl_->info.host_bank, impl_->info.host_bank_tag, e.what()));
  } catch (...) {
    return make_error(Errc::kNoMemory, "xrt: host_only buffer: unknown exception");
  }
}

void XrtDevice::wait_cycles(uint64_t cycles) {
  if (cycles == 0) return;
  auto w = bounded_wait(
      static_cast<double>(cycles) / impl_->cycles_per_ns * 1e-9, impl_->max_wait,
      fmt::format("wait_cycles({}) at {:.3f} MHz", cycles, impl_->cycles_per_ns * 1e3));
  if (w.error) impl_->fs->record(std::move(*w.error));
  sleep_or_spin(w.wait);
}

void XrtDevice::wait_for(std::chrono::nanoseconds ns) {
  auto w = bounded_wait(std::chrono::duration<double>(ns).count(), impl_->max_wait,
                        fmt::format("wait_for({} ns)", ns.count()));
  if (w.error) impl_->fs->record(std::move(*w.error));
  sleep_or_spin(w.wait);
}

std::chrono::nanoseconds XrtDevice::host_now() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::steady_clock::now().time_since_epoch());
}

uint64_t XrtDevice::now_cycles() {
  std::lock_guard lk(impl_->cycle_mu);
  const uint32_t lo = read32(regs::reg::CYCLE_LO);  // latches CYCLE_HI
  const uint32_t hi = read32(regs::reg::CYCLE_HI);
  return (uint64_t{hi} << 32) | lo;
}

namespace detail {

void xrt_enumerate(const std::string& only_bdf, ProbeReport& rep) {
  unsigned n = 0;
  try {
    n = xrt::system::enumerate_devices();
  } catch (const std::exception& e) {
    rep.problems.push_back(fmt::format("XRT cannot look for devices: {}", e.what()));
    return;
  } catch (...) {
    rep.problems.push_back("XRT cannot look for devices: unknown exception");
    return;
  }
  if (n == 0) {
    rep.problems.push_back(
        "XRT found no device it can open (no card bound to the xocl driver, or XRT's "
        "user-space and driver do not match)");
    return;
  }
  for (unsigned i = 0; i < n; ++i) {
    try {
      xrt::device d(i);
      const auto bdf = d.get_info<xrt::info::device::bdf>();
      if (!only_bdf.empty() && bdf != only_bdf) continue;
      rep.usable.push_back(
          fmt::format("{}  (XRT index {})  {}", bdf, i, d.get_info<xrt::info::device::name>()));
    } catch (const std::exception& e) {
      rep.problems.push_back(fmt::format("XRT device index {}: {}", i, e.what()));
    }
  }
  if (rep.usable.empty() && !only_bdf.empty()) {
    rep.problems.push_back(fmt::format("XRT has {} device(s), none at {}", n, only_bdf));
  }
}

}  // namespace detail

}  // namespace bouncer::card
