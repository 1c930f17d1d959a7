// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// The host CPU of the platform and the simulation backend of the HAL.
//
// HostCpu is an SC_MODULE whose SC_THREAD runs the user's host function with a SimDevice.
// SimDevice (bouncer::hal::Device) turns read32/write32/write_block into tlm_generic_payload
// b_transport calls on the CPU's initiator socket (bound to DeviceModel::regs), keeps
// SystemC time with a tlm_quantumkeeper (temporal decoupling: a context switch only once per
// global quantum), allocates DMA buffers from HostMemory and advances the core for wait_cycles
// and wait_for. The host's clock (host_now) is that simulated time.
#pragma once

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/tlm_quantumkeeper.h>

#include <chrono>
#include <exception>
#include <functional>
#include <memory>
#include <systemc>
#include <tlm>

#include "bouncer/hal.hpp"
#include "platform/core_model.hpp"
#include "platform/host_memory.hpp"

namespace bouncer::sim {

class SimDevice final : public hal::Device {
 public:
  SimDevice(tlm_utils::simple_initiator_socket<class HostCpu>& mmio, CoreModel& core,
            HostMemory& mem, sc_core::sc_time period);

  uint32_t read32(uint32_t offset) override;
  void write32(uint32_t offset, uint32_t value) override;
  void write_block(uint32_t offset, std::span<const uint32_t> words) override;
  Result<std::unique_ptr<hal::DmaBuffer>> alloc_dma(size_t bytes, size_t align) override;
  void wait_cycles(uint64_t cycles) override;
  uint64_t now_cycles() override;
  /// Simulated time of the host thread (SystemC time plus the quantum keeper's local offset):
  /// it advances with every MMIO access and wait, so deadlines are deterministic.
  std::chrono::nanoseconds host_now() override;
  /// Runs the core for ceil(d / clock period) cycles.
  void wait_for(std::chrono::nanoseconds d) override;
  const char* name() const override { return "sim"; }

  // Platform::wait_event: core_.run_until, then the same time bookkeeping as wait_cycles.
  uint64_t wait_event(uint64_t max_cycles, const std::function<bool()>& until);

  // Bring SystemC time up to the device time (end of a host job).
  void sync();

 private:
  void transport(tlm::tlm_command cmd, uint32_t offset, uint32_t* data, size_t words);

  tlm_utils::simple_initiator_socket<HostCpu>& mmio_;
  CoreModel& core_;
  HostMemory& mem_;
  sc_core::sc_time period_;
  tlm_utils::tlm_quantumkeeper qk_;
  tlm::tlm_generic_payload gp_;
};

class HostCpu : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<HostCpu> mmio;

  HostCpu(sc_core::sc_module_name name, CoreModel& core, HostMemory& mem, sc_core::sc_time period);

  // Arms the thread with `job`; the next sc_start() runs it. The job must outlive that call.
  void arm(const std::function<void(hal::Device&)>* job);
  // The exception the last job threw, if any (cleared).
  std::exception_ptr take_exception();
  // The HAL device of the jobs, and whether a job is running (calls that advance the device
  // from the host side need the job's SystemC thread).
  SimDevice& device() { return dev_; }
  bool in_job() const { return in_job_; }

 private:
  void thread();

  SimDevice dev_;
  sc_core::sc_event start_;
  const std::function<void(hal::Device&)>* job_ = nullptr;
  std::exception_ptr exc_;
  bool in_job_ = false;
};

}  // namespace bouncer::sim
