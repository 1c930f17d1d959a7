// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include "platform/host_memory.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cstring>

#include "platform/sim_util.hpp"

namespace bouncer::sim {

HostMemory::HostMemory(sc_core::sc_module_name name, uint64_t base, uint64_t capacity)
    : sc_core::sc_module(name), socket("socket"), base_(base), capacity_(capacity), top_(base) {
  if (capacity == 0 || base + capacity < base)
    fatal("HostMemory: bad region base=0x%llx size=0x%llx", static_cast<unsigned long long>(base),
          static_cast<unsigned long long>(capacity));
  void* p = mmap(nullptr, capacity, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED)
    fatal("HostMemory: cannot reserve %llu bytes", static_cast<unsigned long long>(capacity));
  mem_ = static_cast<uint8_t*>(p);
  socket.register_b_transport(this, &HostMemory::b_transport);
  socket.register_get_direct_mem_ptr(this, &HostMemory::get_direct_mem_ptr);
  socket.register_transport_dbg(this, &HostMemory::transport_dbg);
}

HostMemory::~HostMemory() {
  if (mem_ != nullptr) munmap(mem_, capacity_);
}

std::optional<uint64_t> HostMemory::alloc(uint64_t bytes, uint64_t align) {
  if (bytes == 0 || align == 0 || (align & (align - 1)) != 0) return std::nullopt;
  const uint64_t start = (top_ + align - 1) & ~(align - 1);
  if (start < top_ || start + bytes < start || start + bytes - base_ > capacity_)
    return std::nullopt;
  top_ = start + bytes;
  // The addressable range grew: initiators must re-request DMI to see it.
  socket->invalidate_direct_mem_ptr(0, ~uint64_t{0});
  return start;
}

void HostMemory::release(uint64_t addr, uint64_t bytes) {
  uint8_t* p = ptr(addr, bytes);
  if (p == nullptr || bytes == 0) return;
  std::memset(p, 0xDF, bytes);
  freed_[addr] = addr + bytes;
  socket->invalidate_direct_mem_ptr(addr, addr + bytes - 1);
}

bool HostMemory::touches_freed(uint64_t addr, uint64_t len) const {
  auto it = freed_.upper_bound(addr);  // the first range starting after addr
  if (it != freed_.end() && it->first < addr + len) return true;
  if (it == freed_.begin()) return false;
  --it;  // the last range starting at or before addr
  return it->second > addr;
}

uint8_t* HostMemory::ptr(uint64_t addr, uint64_t len) {
  if (addr < base_ || addr > top_ || len > top_ - addr) return nullptr;
  return mem_ + (addr - base_);
}

unsigned int HostMemory::access(tlm::tlm_generic_payload& gp) {
  const uint64_t addr = gp.get_address();
  const unsigned int len = gp.get_data_length();
  uint8_t* p = ptr(addr, len);
  if (p == nullptr) {
    gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return 0;
  }
  if (gp.get_streaming_width() < len) {
    gp.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
    return 0;
  }
  uint8_t* data = gp.get_data_ptr();
  const uint8_t* be = gp.get_byte_enable_ptr();
  const unsigned int be_len = gp.get_byte_enable_length();
  if (gp.is_read()) {
    if (be == nullptr) {
      std::memcpy(data, p, len);
    } else {
      for (unsigned int i = 0; i < len; ++i)
        if (be[i % be_len] == TLM_BYTE_ENABLED) data[i] = p[i];
    }
  } else if (gp.is_write()) {
    if (be == nullptr) {
      std::memcpy(p, data, len);
    } else {
      for (unsigned int i = 0; i < len; ++i)
        if (be[i % be_len] == TLM_BYTE_ENABLED) p[i] = data[i];
    }
  }
  gp.set_response_status(tlm::TLM_OK_RESPONSE);
  return len;
}

void HostMemory::b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& /*delay*/) {
  if (!freed_.empty() && touches_freed(gp.get_address(), gp.get_data_length())) {
    if (freed_accesses_++ == 0) first_freed_access_ = gp.get_address();
  }
  access(gp);
  if (gp.is_response_ok()) gp.set_dmi_allowed(true);
}

unsigned int HostMemory::transport_dbg(tlm::tlm_generic_payload& gp) { return access(gp); }

bool HostMemory::get_direct_mem_ptr(tlm::tlm_generic_payload& gp, tlm::tlm_dmi& dmi) {
  const uint64_t addr = gp.get_address();
  if (top_ == base_ || addr < base_ || addr >= top_) {
    // Tell the initiator the hole it asked about; no access granted.
    dmi.allow_none();
    if (addr < base_) {
      dmi.set_start_address(0);
      dmi.set_end_address(base_ - 1);
    } else {
      dmi.set_start_address(top_);
      dmi.set_end_address(~uint64_t{0});
    }
    return false;
  }
  // the largest stretch around addr without freed memory
  uint64_t lo = base_, hi = top_;
  for (const auto& [start, end] : freed_) {
    if (addr >= start && addr < end) {
      dmi.allow_none();
      dmi.set_start_address(start);
      dmi.set_end_address(end - 1);
      return false;
    }
    if (end <= addr) lo = std::max(lo, end);
    if (start > addr) hi = std::min(hi, start);
  }
  dmi.allow_read_write();
  dmi.set_dmi_ptr(mem_ + (lo - base_));
  dmi.set_start_address(lo);
  dmi.set_end_address(hi - 1);
  dmi.set_read_latency(sc_core::SC_ZERO_TIME);
  dmi.set_write_latency(sc_core::SC_ZERO_TIME);
  return true;
}

}  // namespace bouncer::sim
