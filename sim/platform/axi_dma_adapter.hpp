// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// AXI4 slave for bouncer_core's m_axi_* master, forwarding to host memory over TLM-2.0.
//
// Reads:  AR is accepted while fewer than kMaxOutstanding reads are queued. The data of a burst is
//         fetched (TLM b_transport, or DMI once granted) when its first beat becomes due:
//         latency (+ uniform 0..jitter) cycles after the AR handshake; then one beat per cycle,
//         honouring rready. Bursts are answered strictly in order (legal for any ID mix).
// Writes: AW queued; WREADY is 1 while an accepted AW still needs data (the slave waits for
//         AWVALID, which AXI allows). The burst is committed to memory at its WLAST beat and the
//         B response is given latency (+jitter) cycles later.
// Errors: a burst overlapping an injected range gets that range's fault (DmaFault): SLVERR or
//         DECERR (a write is then not committed); kNoResponse: a read is accepted and never
//         answered, a write is accepted, not committed, and gets no B; kLate: a read is answered
//         `delay` cycles later than its latency (bursts behind it wait: answers stay in order).
//         Addresses outside allocated host memory get DECERR.
// Checks: INCR bursts, 8-byte beats, no 4 KiB crossing, WLAST exactly on beat awlen,
//         AR/AW payload stable while VALID && !READY. A violation aborts with a clear message.
#pragma once

#include <tlm_utils/simple_initiator_socket.h>

#include <cstdint>
#include <systemc>
#include <tlm>
#include <vector>

#include "bouncer/sim/platform.hpp"
#include "platform/sim_util.hpp"

namespace bouncer::sim {

class AxiDmaAdapter : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<AxiDmaAdapter> mem_socket;

  AxiDmaAdapter(sc_core::sc_module_name name, uint64_t latency, uint64_t jitter, uint64_t seed,
                PlatformStats& stats);

  void set_latency(uint64_t latency, uint64_t jitter) {
    latency_ = latency;
    jitter_ = jitter;
  }
  void add_error_range(uint64_t lo, uint64_t hi) { add_fault(lo, hi, DmaFault::kSlvErr, 0); }
  void add_fault(uint64_t lo, uint64_t hi, DmaFault kind, uint64_t delay) {
    err_ranges_.push_back({lo, hi, kind, delay});
  }
  void clear_error_ranges() { err_ranges_.clear(); }
  bool idle() const { return rq_count_ == 0 && wq_count_ == 0 && bq_count_ == 0; }
  // Write bursts whose WLAST beat was taken (committed or not): the only way the device
  // changes host memory, so a host waiting for the device to write something can sleep until
  // this moves (Platform::wait_event).
  uint64_t writes_ended() const { return writes_ended_; }
  // Reset together with the core (Platform::hold_reset): drops every burst in flight (reads
  // not answered, writes without their WLAST beat not committed, B responses not given) and
  // forgets the AR/AW stability checks. Injected faults stay. Returns the bursts dropped.
  uint64_t reset() {
    const uint64_t n = uint64_t{rq_count_} + wq_count_ + bq_count_;
    rq_head_ = rq_count_ = 0;
    wq_head_ = wq_count_ = 0;
    bq_head_ = bq_count_ = 0;
    r_valid_ = b_valid_ = false;
    ar_held_ = aw_held_ = false;
    return n;
  }

  // Pre-edge: handshakes with the values the device sees at this edge.
  template <class V>
  void pre_edge(const V& m, uint64_t edge) {
    if (m.m_axi_arvalid) {
      if (m.m_axi_arready) {
        ar_held_ = false;
        accept_read(m.m_axi_arid, m.m_axi_araddr, m.m_axi_arlen, m.m_axi_arsize, m.m_axi_arburst,
                    edge);
      } else {
        check_held(ar_held_, ar_hold_, m.m_axi_arid, m.m_axi_araddr, m.m_axi_arlen, m.m_axi_arsize,
                   m.m_axi_arburst, "AR", edge);
      }
    } else if (ar_held_) {
      fatal_dropped("ARVALID", edge);
    }
    if (r_valid_ && m.m_axi_rready) read_beat_done();
    if (m.m_axi_awvalid) {
      if (m.m_axi_awready) {
        aw_held_ = false;
        accept_write(m.m_axi_awid, m.m_axi_awaddr, m.m_axi_awlen, m.m_axi_awsize, m.m_axi_awburst,
                     edge);
      } else {
        check_held(aw_held_, aw_hold_, m.m_axi_awid, m.m_axi_awaddr, m.m_axi_awlen, m.m_axi_awsize,
                   m.m_axi_awburst, "AW", edge);
      }
    } else if (aw_held_) {
      fatal_dropped("AWVALID", edge);
    }
    if (m.m_axi_wvalid && m.m_axi_wready)
      write_beat(m.m_axi_wdata, m.m_axi_wstrb, m.m_axi_wlast != 0, edge);
    if (b_valid_ && m.m_axi_bready) write_resp_done();
  }

  // After the edge: drive the slave side for the next edge (edge + 1).
  template <class V>
  void drive(V& m, uint64_t edge) {
    m.m_axi_arready = rq_count_ < kMaxOutstanding;
    m.m_axi_awready =
        (wq_count_ < kMaxOutstanding && bq_count_ + wq_count_ < kMaxOutstanding) ? 1 : 0;
    m.m_axi_wready = wq_count_ > 0 ? 1 : 0;
    r_valid_ = rq_count_ > 0 && rq_[rq_head_].due <= edge + 1;
    if (r_valid_) {
      ReadBurst& b = rq_[rq_head_];
      if (!b.fetched) fetch(b);
      m.m_axi_rvalid = 1;
      m.m_axi_rid = b.id;
      m.m_axi_rdata = b.data[b.sent];
      m.m_axi_rresp = b.resp;
      m.m_axi_rlast = (b.sent + 1u == b.beats) ? 1 : 0;
    } else {
      m.m_axi_rvalid = 0;
      m.m_axi_rlast = 0;
    }
    b_valid_ = bq_count_ > 0 && bq_[bq_head_].due <= edge + 1;
    if (b_valid_) {
      m.m_axi_bvalid = 1;
      m.m_axi_bid = bq_[bq_head_].id;
      m.m_axi_bresp = bq_[bq_head_].resp;
    } else {
      m.m_axi_bvalid = 0;
    }
  }

 private:
  static constexpr unsigned kMaxOutstanding = 16;
  static constexpr unsigned kMaxBeats = 256;
  static constexpr uint8_t kOkay = 0, kSlvErr = 2, kDecErr = 3;

  struct ReadBurst {
    uint64_t addr;  // aligned to 8 bytes
    uint64_t due;   // edge of the first beat, at the earliest
    uint16_t beats;
    uint16_t sent;
    uint8_t id;
    uint8_t resp;
    bool fetched;
    uint64_t data[kMaxBeats];
  };
  struct WriteBurst {
    uint64_t addr;
    uint16_t beats;
    uint16_t got;
    uint8_t id;
    uint64_t data[kMaxBeats];
    uint8_t strb[kMaxBeats];
  };
  struct WriteResp {
    uint64_t due;
    uint8_t id;
    uint8_t resp;
  };
  struct Hold {
    uint64_t addr;
    uint8_t id, len, size, burst;
  };

  void accept_read(uint8_t id, uint64_t addr, uint8_t len, uint8_t size, uint8_t burst,
                   uint64_t edge);
  void accept_write(uint8_t id, uint64_t addr, uint8_t len, uint8_t size, uint8_t burst,
                    uint64_t edge);
  void write_beat(uint64_t data, uint8_t strb, bool last, uint64_t edge);
  void read_beat_done();
  void write_resp_done() {
    bq_head_ = (bq_head_ + 1) % kMaxOutstanding;
    --bq_count_;
    b_valid_ = false;
  }
  void fetch(ReadBurst& b);
  void check_burst(const char* ch, uint64_t addr, uint8_t len, uint8_t size, uint8_t burst,
                   uint64_t edge);
  void check_held(bool& held, Hold& h, uint8_t id, uint64_t addr, uint8_t len, uint8_t size,
                  uint8_t burst, const char* ch, uint64_t edge);
  [[noreturn]] void fatal_dropped(const char* sig, uint64_t edge);
  struct FaultRange {
    uint64_t lo, hi;
    DmaFault kind;
    uint64_t delay;
  };
  // The first injected range [addr, addr + len) overlaps, or nullptr.
  const FaultRange* injected(uint64_t addr, uint64_t len) const;
  uint64_t draw_latency() { return std::max<uint64_t>(1, latency_ + rng_.upto(jitter_)); }
  // Memory access through DMI when granted, else b_transport. Returns the TLM status.
  tlm::tlm_response_status mem_read(uint64_t addr, uint8_t* dst, unsigned len);
  tlm::tlm_response_status mem_write(uint64_t addr, const uint8_t* src, const uint8_t* byte_en,
                                     unsigned len);
  void invalidate_dmi(sc_dt::uint64 start, sc_dt::uint64 end);

  uint64_t latency_;
  uint64_t jitter_;
  Prng rng_;
  PlatformStats& stats_;
  uint64_t writes_ended_ = 0;
  std::vector<FaultRange> err_ranges_;

  std::vector<ReadBurst> rq_;  // ring of kMaxOutstanding
  unsigned rq_head_ = 0, rq_count_ = 0;
  std::vector<WriteBurst> wq_;
  unsigned wq_head_ = 0, wq_count_ = 0;
  WriteResp bq_[kMaxOutstanding] = {};
  unsigned bq_head_ = 0, bq_count_ = 0;
  bool r_valid_ = false, b_valid_ = false;
  bool ar_held_ = false, aw_held_ = false;
  Hold ar_hold_{}, aw_hold_{};

  bool dmi_valid_ = false;
  tlm::tlm_dmi dmi_;
  tlm::tlm_generic_payload gp_;
  std::vector<uint8_t> byte_en_;
};

}  // namespace bouncer::sim
