// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// Host memory as a TLM-2.0 target: one contiguous region at a high bus address (default
// 0x1'0000'0000, so 64-bit addressing is exercised), reserved with mmap(MAP_NORESERVE) and
// therefore zero-filled and paged in lazily. alloc() is a bump allocator; only the allocated
// part [base, top) is addressable: anything else answers TLM_ADDRESS_ERROR_RESPONSE (the DMA
// adapter turns it into DECERR). DMI is granted over [base, top) and invalidated whenever top
// grows. The target itself is untimed: the DMA adapter models latency.
// Memory is never reused, but release() marks a range freed (the driver destroyed its
// DmaBuffer): it is poisoned with 0xDF, DMI never covers it again, and every DMA access that
// touches it afterwards is counted, so a test can prove the device stopped using memory
// before its driver let go of it.
#pragma once

#include <tlm_utils/simple_target_socket.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <systemc>
#include <tlm>

namespace bouncer::sim {

class HostMemory : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<HostMemory> socket;

  HostMemory(sc_core::sc_module_name name, uint64_t base, uint64_t capacity);
  ~HostMemory() override;

  // Bump allocation of `bytes` (> 0) aligned to `align` (power of two). nullopt when full.
  std::optional<uint64_t> alloc(uint64_t bytes, uint64_t align);
  // Host pointer for [addr, addr+len) if it lies inside allocated memory, else nullptr.
  uint8_t* ptr(uint64_t addr, uint64_t len);
  uint64_t base() const { return base_; }
  uint64_t top() const { return top_; }
  // [addr, addr+bytes) is freed: poisoned, out of DMI, DMA to it counted from now on.
  void release(uint64_t addr, uint64_t bytes);
  // DMA bursts (b_transport) that touched freed memory, and the first such address (0: none).
  uint64_t freed_accesses() const { return freed_accesses_; }
  uint64_t first_freed_access() const { return first_freed_access_; }

 private:
  void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
  bool get_direct_mem_ptr(tlm::tlm_generic_payload& gp, tlm::tlm_dmi& dmi);
  unsigned int transport_dbg(tlm::tlm_generic_payload& gp);
  // Shared by b_transport and transport_dbg; returns the number of bytes moved.
  unsigned int access(tlm::tlm_generic_payload& gp);
  bool touches_freed(uint64_t addr, uint64_t len) const;

  uint64_t base_;
  uint64_t capacity_;
  uint64_t top_;
  uint8_t* mem_ = nullptr;
  std::map<uint64_t, uint64_t> freed_;  // start -> end (exclusive), disjoint
  uint64_t freed_accesses_ = 0;
  uint64_t first_freed_access_ = 0;
};

}  // namespace bouncer::sim
