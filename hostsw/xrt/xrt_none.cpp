// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// XrtDevice when the build found no XRT headers and libraries (BOUNCER_XRT=OFF): open()
// explains that, the probe still scans sysfs.
#include <chrono>

#include "bouncer/xrt_device.hpp"

namespace bouncer::card {

struct XrtDevice::Impl {
  XrtInfo info;
  std::optional<Error> fault;
};

bool xrt_backend_built() { return false; }

Result<std::unique_ptr<XrtDevice>> XrtDevice::open(const XrtOptions&) {
  return make_error(Errc::kNoDevice,
                    "xrt: this bouncer was built without the XRT backend (BOUNCER_XRT=OFF: no "
                    "XRT headers/libraries at configure time; install libxrt-dev and uuid-dev, "
                    "or AMD's xrt package, and reconfigure)");
}

XrtDevice::XrtDevice(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
XrtDevice::~XrtDevice() = default;
const XrtInfo& XrtDevice::info() const { return impl_->info; }
const std::optional<Error>& XrtDevice::fault() const { return impl_->fault; }
Result<std::unique_ptr<cmac::CmacRegisters>> XrtDevice::open_cmac() {
  return make_error(Errc::kNoDevice, "xrt: built without the XRT backend");
}
uint32_t XrtDevice::read32(uint32_t) { return 0xFFFFFFFFu; }
void XrtDevice::write32(uint32_t, uint32_t) {}
Result<std::unique_ptr<hal::DmaBuffer>> XrtDevice::alloc_dma(size_t, size_t) {
  return make_error(Errc::kNoDevice, "xrt: built without the XRT backend");
}
void XrtDevice::wait_cycles(uint64_t) {}
uint64_t XrtDevice::now_cycles() { return 0; }
std::chrono::nanoseconds XrtDevice::host_now() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::steady_clock::now().time_since_epoch());
}
void XrtDevice::wait_for(std::chrono::nanoseconds) {}

namespace detail {
void xrt_enumerate(const std::string&, ProbeReport& rep) {
  rep.problems.push_back(
      "this bouncer was built without the XRT backend (BOUNCER_XRT=OFF), so XRT was not asked");
}
}  // namespace detail

}  // namespace bouncer::card
