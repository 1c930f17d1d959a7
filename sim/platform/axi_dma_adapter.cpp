// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include "platform/axi_dma_adapter.hpp"

#include <algorithm>
#include <cstring>

namespace bouncer::sim {

namespace {
using ull = unsigned long long;
constexpr uint8_t kBurstIncr = 1;
constexpr uint8_t kSize8 = 3;
}  // namespace

AxiDmaAdapter::AxiDmaAdapter(sc_core::sc_module_name name, uint64_t latency, uint64_t jitter,
                             uint64_t seed, PlatformStats& stats)
    : sc_core::sc_module(name),
      mem_socket("mem_socket"),
      latency_(latency),
      jitter_(jitter),
      rng_(seed ^ 0xD1A5'0000'0000'0001ull),
      stats_(stats),
      rq_(kMaxOutstanding),
      wq_(kMaxOutstanding),
      byte_en_(kMaxBeats * 8) {
  mem_socket.register_invalidate_direct_mem_ptr(this, &AxiDmaAdapter::invalidate_dmi);
}

void AxiDmaAdapter::check_burst(const char* ch, uint64_t addr, uint8_t len, uint8_t size,
                                uint8_t burst, uint64_t edge) {
  if (burst != kBurstIncr) {
    fatal("AXI4 violation at cycle %llu: %sBURST=%u at addr 0x%llx (only INCR=1 is supported)",
          static_cast<ull>(edge), ch, burst, static_cast<ull>(addr));
  }
  if (size != kSize8) {
    fatal(
        "AXI4 violation at cycle %llu: %sSIZE=%u at addr 0x%llx (must be 3: 8-byte beats on the "
        "64-bit bus)",
        static_cast<ull>(edge), ch, size, static_cast<ull>(addr));
  }
  const uint64_t aligned = addr & ~uint64_t{7};
  const uint64_t end = aligned + (uint64_t{len} + 1) * 8;  // exclusive
  if ((aligned >> 12) != ((end - 1) >> 12)) {
    fatal(
        "AXI4 violation at cycle %llu: %s burst addr=0x%llx len=%u (%u beats) crosses a 4 KiB "
        "boundary",
        static_cast<ull>(edge), ch, static_cast<ull>(addr), len, len + 1u);
  }
}

void AxiDmaAdapter::check_held(bool& held, Hold& h, uint8_t id, uint64_t addr, uint8_t len,
                               uint8_t size, uint8_t burst, const char* ch, uint64_t edge) {
  if (!held) {
    held = true;
    h = Hold{addr, id, len, size, burst};
    return;
  }
  if (h.addr != addr || h.id != id || h.len != len || h.size != size || h.burst != burst) {
    fatal(
        "AXI4 violation at cycle %llu: %s payload changed while %sVALID=1 and %sREADY=0 "
        "(addr 0x%llx -> 0x%llx, len %u -> %u)",
        static_cast<ull>(edge), ch, ch, ch, static_cast<ull>(h.addr), static_cast<ull>(addr), h.len,
        len);
  }
}

void AxiDmaAdapter::fatal_dropped(const char* sig, uint64_t edge) {
  fatal("AXI4 violation at cycle %llu: %s dropped before the handshake", static_cast<ull>(edge),
        sig);
}

const AxiDmaAdapter::FaultRange* AxiDmaAdapter::injected(uint64_t addr, uint64_t len) const {
  for (const auto& r : err_ranges_)
    if (addr < r.hi && r.lo < addr + len) return &r;
  return nullptr;
}

void AxiDmaAdapter::accept_read(uint8_t id, uint64_t addr, uint8_t len, uint8_t size, uint8_t burst,
                                uint64_t edge) {
  check_burst("AR", addr, len, size, burst, edge);
  uint64_t extra = 0;
  if (const FaultRange* f = injected(addr & ~uint64_t{7}, (len + 1u) * 8u)) {
    if (f->kind == DmaFault::kNoResponse) {  // accepted, never answered
      ++stats_.dma_read_bursts;
      ++stats_.dma_unanswered;
      return;
    }
    if (f->kind == DmaFault::kLate) extra = f->delay;
  }
  if (rq_count_ >= kMaxOutstanding)
    fatal("AxiDmaAdapter: AR accepted with a full queue (internal error)");
  ReadBurst& b = rq_[(rq_head_ + rq_count_) % kMaxOutstanding];
  ++rq_count_;
  b.addr = addr & ~uint64_t{7};
  b.beats = static_cast<uint16_t>(len + 1u);
  b.sent = 0;
  b.id = id;
  b.resp = kOkay;
  b.fetched = false;
  b.due = edge + draw_latency() + extra;
  ++stats_.dma_read_bursts;
}

void AxiDmaAdapter::fetch(ReadBurst& b) {
  b.fetched = true;
  const unsigned len = b.beats * 8u;
  const FaultRange* f = injected(b.addr, len);
  if (f != nullptr && f->kind == DmaFault::kSlvErr) {
    b.resp = kSlvErr;
  } else if (f != nullptr && f->kind == DmaFault::kDecErr) {
    b.resp = kDecErr;
  } else if (mem_read(b.addr, reinterpret_cast<uint8_t*>(b.data), len) != tlm::TLM_OK_RESPONSE) {
    b.resp = kDecErr;
  }
  if (b.resp != kOkay) {
    std::memset(b.data, 0, len);
    ++stats_.dma_errors;
  }
}

void AxiDmaAdapter::read_beat_done() {
  ReadBurst& b = rq_[rq_head_];
  ++stats_.dma_read_beats;
  if (++b.sent == b.beats) {
    rq_head_ = (rq_head_ + 1) % kMaxOutstanding;
    --rq_count_;
  }
  r_valid_ = false;
}

void AxiDmaAdapter::accept_write(uint8_t id, uint64_t addr, uint8_t len, uint8_t size,
                                 uint8_t burst, uint64_t edge) {
  check_burst("AW", addr, len, size, burst, edge);
  if (wq_count_ >= kMaxOutstanding)
    fatal("AxiDmaAdapter: AW accepted with a full queue (internal error)");
  WriteBurst& w = wq_[(wq_head_ + wq_count_) % kMaxOutstanding];
  ++wq_count_;
  w.addr = addr & ~uint64_t{7};
  w.beats = static_cast<uint16_t>(len + 1u);
  w.got = 0;
  w.id = id;
  ++stats_.dma_write_bursts;
}

void AxiDmaAdapter::write_beat(uint64_t data, uint8_t strb, bool last, uint64_t edge) {
  if (wq_count_ == 0) fatal("AxiDmaAdapter: W beat accepted without an AW (internal error)");
  WriteBurst& w = wq_[wq_head_];
  const bool should_be_last = w.got + 1u == w.beats;
  if (last != should_be_last) {
    fatal("AXI4 violation at cycle %llu: WLAST=%d on beat %u of a %u-beat write burst to 0x%llx",
          static_cast<ull>(edge), last ? 1 : 0, w.got + 1u, static_cast<unsigned>(w.beats),
          static_cast<ull>(w.addr));
  }
  w.data[w.got] = data;
  w.strb[w.got] = strb;
  ++w.got;
  ++stats_.dma_write_beats;
  if (!last) return;
  ++writes_ended_;

  // Commit the whole burst now, then queue the response.
  const unsigned len = w.beats * 8u;
  uint8_t resp = kOkay;
  const FaultRange* f = injected(w.addr, len);
  if (f != nullptr && f->kind == DmaFault::kNoResponse) {  // lost: no commit, no B
    ++stats_.dma_unanswered;
    wq_head_ = (wq_head_ + 1) % kMaxOutstanding;
    --wq_count_;
    return;
  }
  if (f != nullptr && f->kind == DmaFault::kSlvErr) {
    resp = kSlvErr;
  } else if (f != nullptr && f->kind == DmaFault::kDecErr) {
    resp = kDecErr;
  } else {
    bool full = true;
    for (unsigned i = 0; i < w.beats; ++i) {
      for (unsigned k = 0; k < 8; ++k)
        byte_en_[i * 8 + k] = ((w.strb[i] >> k) & 1) ? TLM_BYTE_ENABLED : TLM_BYTE_DISABLED;
      full = full && w.strb[i] == 0xFF;
    }
    if (mem_write(w.addr, reinterpret_cast<const uint8_t*>(w.data),
                  full ? nullptr : byte_en_.data(), len) != tlm::TLM_OK_RESPONSE) {
      resp = kDecErr;
    }
  }
  if (resp != kOkay) ++stats_.dma_errors;
  WriteResp& r = bq_[(bq_head_ + bq_count_) % kMaxOutstanding];
  ++bq_count_;
  r = WriteResp{edge + draw_latency(), w.id, resp};
  wq_head_ = (wq_head_ + 1) % kMaxOutstanding;
  --wq_count_;
}

tlm::tlm_response_status AxiDmaAdapter::mem_read(uint64_t addr, uint8_t* dst, unsigned len) {
  if (dmi_valid_ && addr >= dmi_.get_start_address() && addr + len - 1 <= dmi_.get_end_address()) {
    std::memcpy(dst, dmi_.get_dmi_ptr() + (addr - dmi_.get_start_address()), len);
    return tlm::TLM_OK_RESPONSE;
  }
  gp_.set_command(tlm::TLM_READ_COMMAND);
  gp_.set_address(addr);
  gp_.set_data_ptr(dst);
  gp_.set_data_length(len);
  gp_.set_streaming_width(len);
  gp_.set_byte_enable_ptr(nullptr);
  gp_.set_byte_enable_length(0);
  gp_.set_dmi_allowed(false);
  gp_.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;  // latency is modelled in cycles by this adapter
  mem_socket->b_transport(gp_, delay);
  if (gp_.is_dmi_allowed() && !dmi_valid_) {
    dmi_valid_ = mem_socket->get_direct_mem_ptr(gp_, dmi_) && dmi_.is_read_write_allowed();
  }
  return gp_.get_response_status();
}

tlm::tlm_response_status AxiDmaAdapter::mem_write(uint64_t addr, const uint8_t* src,
                                                  const uint8_t* byte_en, unsigned len) {
  if (dmi_valid_ && addr >= dmi_.get_start_address() && addr + len - 1 <= dmi_.get_end_address()) {
    uint8_t* p = dmi_.get_dmi_ptr() + (addr - dmi_.get_start_address());
    if (byte_en == nullptr) {
      std::memcpy(p, src, len);
    } else {
      for (unsigned i = 0; i < len; ++i)
        if (byte_en[i] == TLM_BYTE_ENABLED) p[i] = src[i];
    }
    return tlm::TLM_OK_RESPONSE;
  }
  gp_.set_command(tlm::TLM_WRITE_COMMAND);
  gp_.set_address(addr);
  gp_.set_data_ptr(const_cast<uint8_t*>(src));
  gp_.set_data_length(len);
  gp_.set_streaming_width(len);
  gp_.set_byte_enable_ptr(const_cast<uint8_t*>(byte_en));
  gp_.set_byte_enable_length(byte_en != nullptr ? len : 0);
  gp_.set_dmi_allowed(false);
  gp_.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  mem_socket->b_transport(gp_, delay);
  if (gp_.is_dmi_allowed() && !dmi_valid_) {
    dmi_valid_ = mem_socket->get_direct_mem_ptr(gp_, dmi_) && dmi_.is_read_write_allowed();
  }
  return gp_.get_response_status();
}

void AxiDmaAdapter::invalidate_dmi(sc_dt::uint64 start, sc_dt::uint64 end) {
  if (dmi_valid_ && start <= dmi_.get_end_address() && end >= dmi_.get_start_address())
    dmi_valid_ = false;
}

}  // namespace bouncer::sim
