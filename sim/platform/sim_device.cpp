// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include "platform/sim_device.hpp"

#include <algorithm>
#include <chrono>
#include <string>

#include "platform/sim_util.hpp"

namespace bouncer::sim {

namespace {

constexpr size_t kHostStackBytes = size_t{8} << 20;

// Freed into the host memory's record of freed ranges (HostMemory::release): the device must
// not touch it after this.
class SimDmaBuffer final : public hal::DmaBuffer {
 public:
  SimDmaBuffer(HostMemory& mem, std::span<std::byte> bytes, uint64_t addr)
      : mem_(mem), bytes_(bytes), addr_(addr) {}
  ~SimDmaBuffer() override { mem_.release(addr_, bytes_.size()); }
  SimDmaBuffer(const SimDmaBuffer&) = delete;
  SimDmaBuffer& operator=(const SimDmaBuffer&) = delete;
  std::span<std::byte> bytes() override { return bytes_; }
  uint64_t device_addr() const override { return addr_; }
  // Host memory is coherent with the device in simulation.
  void sync_to_device(size_t, size_t) override {}
  void sync_from_device(size_t, size_t) override {}

 private:
  HostMemory& mem_;
  std::span<std::byte> bytes_;
  uint64_t addr_;
};

}  // namespace

SimDevice::SimDevice(tlm_utils::simple_initiator_socket<HostCpu>& mmio, CoreModel& core,
                     HostMemory& mem, sc_core::sc_time period)
    : mmio_(mmio), core_(core), mem_(mem), period_(period) {}

void SimDevice::transport(tlm::tlm_command cmd, uint32_t offset, uint32_t* data, size_t words) {
  const auto len = static_cast<unsigned>(words * 4);
  gp_.set_command(cmd);
  gp_.set_address(offset);
  gp_.set_data_ptr(reinterpret_cast<unsigned char*>(data));
  gp_.set_data_length(len);
  gp_.set_streaming_width(len);
  gp_.set_byte_enable_ptr(nullptr);
  gp_.set_byte_enable_length(0);
  gp_.set_dmi_allowed(false);
  gp_.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  sc_core::sc_time delay = qk_.get_local_time();
  mmio_->b_transport(gp_, delay);
  qk_.set(delay);
  if (qk_.need_sync()) qk_.sync();
  const tlm::tlm_response_status st = gp_.get_response_status();
  if (st == tlm::TLM_INCOMPLETE_RESPONSE || st == tlm::TLM_BURST_ERROR_RESPONSE ||
      st == tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE || st == tlm::TLM_COMMAND_ERROR_RESPONSE) {
    // Platform misuse (not a device answer): the register target refused the transaction.
    fatal("MMIO %s at 0x%x (%zu words) refused by the register target: %s",
          cmd == tlm::TLM_READ_COMMAND ? "read" : "write", offset, words,
          gp_.get_response_string().c_str());
  }
  // TLM_GENERIC_ERROR (SLVERR) / TLM_ADDRESS_ERROR (DECERR, or beyond the 64 KiB space) are device
  // answers: counted in PlatformStats::mmio_errors; the read data is what the device returned.
}

uint32_t SimDevice::read32(uint32_t offset) {
  uint32_t v = 0;
  transport(tlm::TLM_READ_COMMAND, offset, &v, 1);
  return v;
}

void SimDevice::write32(uint32_t offset, uint32_t value) {
  transport(tlm::TLM_WRITE_COMMAND, offset, &value, 1);
}

void SimDevice::write_block(uint32_t offset, std::span<const uint32_t> words) {
  constexpr size_t kChunk = 256;
  uint32_t buf[kChunk];
  for (size_t i = 0; i < words.size(); i += kChunk) {
    const size_t n = std::min(kChunk, words.size() - i);
    std::copy_n(words.data() + i, n, buf);
    transport(tlm::TLM_WRITE_COMMAND, offset + static_cast<uint32_t>(4 * i), buf, n);
  }
}

Result<std::unique_ptr<hal::DmaBuffer>> SimDevice::alloc_dma(size_t bytes, size_t align) {
  if (bytes == 0 || align == 0 || (align & (align - 1)) != 0) {
    return make_error(Errc::kInvalidArgument,
                      "alloc_dma: bytes must be > 0 and align a power of two (bytes=" +
                          std::to_string(bytes) + ", align=" + std::to_string(align) + ")");
  }
  const auto addr = mem_.alloc(bytes, align);
  if (!addr) {
    return make_error(Errc::kNoMemory,
                      "alloc_dma: host memory exhausted (" + std::to_string(bytes) + " bytes)");
  }
  auto* p = reinterpret_cast<std::byte*>(mem_.ptr(*addr, bytes));
  return std::unique_ptr<hal::DmaBuffer>(
      std::make_unique<SimDmaBuffer>(mem_, std::span<std::byte>(p, bytes), *addr));
}

void SimDevice::wait_cycles(uint64_t cycles) {
  if (cycles == 0) return;
  core_.run(cycles);
  qk_.inc(period_ * static_cast<double>(cycles));
  if (qk_.need_sync()) qk_.sync();
}

uint64_t SimDevice::wait_event(uint64_t max_cycles, const std::function<bool()>& until) {
  const uint64_t n = core_.run_until(max_cycles, until);
  if (n == 0) return 0;
  qk_.inc(period_ * static_cast<double>(n));
  if (qk_.need_sync()) qk_.sync();
  return n;
}

uint64_t SimDevice::now_cycles() { return core_.cycle(); }

std::chrono::nanoseconds SimDevice::host_now() {
  const sc_core::sc_time t = sc_core::sc_time_stamp() + qk_.get_local_time();
  // time resolution units per nanosecond (SystemC's default resolution is 1 ps)
  const uint64_t per_ns =
      std::max<uint64_t>(static_cast<uint64_t>(sc_core::sc_time(1, sc_core::SC_NS).value()), 1);
  return std::chrono::nanoseconds(static_cast<int64_t>(t.value() / per_ns));
}

void SimDevice::wait_for(std::chrono::nanoseconds d) {
  if (d <= std::chrono::nanoseconds::zero()) return;
  const uint64_t p = period_.value();
  const uint64_t want = sc_core::sc_time(static_cast<double>(d.count()), sc_core::SC_NS).value();
  wait_cycles((want + p - 1) / p);
}

void SimDevice::sync() { qk_.sync(); }

HostCpu::HostCpu(sc_core::sc_module_name name, CoreModel& core, HostMemory& mem,
                 sc_core::sc_time period)
    : sc_core::sc_module(name), mmio("mmio"), dev_(mmio, core, mem, period) {
  SC_HAS_PROCESS(HostCpu);
  SC_THREAD(thread);
  // The host function is arbitrary driver/test code: give it a normal thread's stack instead
  // of SystemC's 256 KiB default.
  set_stack_size(kHostStackBytes);
}

void HostCpu::arm(const std::function<void(hal::Device&)>* job) {
  job_ = job;
  // Wakes the thread if it already waits; on the first sc_start() it sees job_ at once.
  start_.notify(sc_core::SC_ZERO_TIME);
}

std::exception_ptr HostCpu::take_exception() {
  std::exception_ptr e = exc_;
  exc_ = nullptr;
  return e;
}

void HostCpu::thread() {
  for (;;) {
    while (job_ == nullptr) sc_core::wait(start_);
    const auto* job = job_;
    job_ = nullptr;
    in_job_ = true;
    try {
      (*job)(dev_);
    } catch (const sc_core::sc_unwind_exception&) {
      in_job_ = false;
      throw;  // SystemC process kill/reset: must propagate
    } catch (...) {
      exc_ = std::current_exception();
    }
    in_job_ = false;
    dev_.sync();
  }
}

}  // namespace bouncer::sim
