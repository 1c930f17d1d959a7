// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// The reject-latency bench that runs over any hal::Device (the co-simulation or a card through
// XRT), measured by the RTL latency probes alone (`bouncer bench` and
// `bouncer card bench`).
//
// For each point (path, PD length, MPA rev, outstanding k, SQ count s) it writes `samples`
// host-written
// contexts (the diagnostic path: no peer is needed, so it runs on a card with nothing
// attached), posts one reject per context, reject i on SQ i % s, while keeping at most k
// whose completion has not arrived, and reads the probe FIFO whenever it would only wait. Per
// reject, from the probe records matched by tag (DOORBELL by SQ and producer index,
// DESC_AVAIL / CQE_WRITTEN by SQ and wqe_idx,
// PD_READY / REJ_LAST by 0x10000 | remote port, REJ_FIRST_HOST by remote port):
//   doorbell_to_desc, doorbell_to_pd, doorbell_to_first_beat, doorbell_to_last_beat,
//   doorbell_to_cqe   (cycles; min / median / p99 / max over the samples).
// Every completion must be OK and carry its wr_id; a point whose probe FIFO overflowed is an
// error (raise the FIFO drain rate: fewer samples per point).
// The contexts' remote MAC is never the device's own, so with `loopback` set (CTRL.LOOPBACK:
// what a card in a lab should use) every reject comes back into the core's RX port and is
// dropped there by the MAC filter; nothing leaves the card.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "bouncer/cm.hpp"
#include "bouncer/cm_diag.hpp"
#include "bouncer/device.hpp"
#include "bouncer/result.hpp"

namespace bouncer {

struct ProbeBenchConfig {
  std::vector<std::string> paths{"push", "dma_inline", "dma_buffer"};
  std::vector<unsigned> pd_lens{0, 16, 64};
  std::vector<unsigned> revs{1, 2};
  std::vector<unsigned> outstanding{1, 8};
  /// SQ counts the rejects are spread over, round-robin (each <= Device::num_sq()).
  std::vector<unsigned> sqs{1};
  unsigned samples = 32;  // rejects per point (at least 2 x outstanding)
  bool loopback = false;  // CTRL.LOOPBACK during the run (restored afterwards)
  std::chrono::nanoseconds point_timeout = std::chrono::milliseconds(80);  // host time per point
  // Stamped into the records (the probes count cycles; these only label them).
  uint64_t mem_latency = 0;  // the co-simulation's host-memory latency; 0 on a card
  double clock_mhz = 0;      // the core clock the cycles are of (0: unknown)
};

struct ProbeLatency {
  std::string stage, path;
  unsigned pd_len = 0, rev = 0, width = 0, outstanding = 0, sqs = 1, samples = 0;
  uint64_t mem_latency = 0;
  double clock_mhz = 0;  // ProbeBenchConfig::clock_mhz: what a cycle is in ns
  uint64_t min = 0, median = 0, p99 = 0, max = 0;
};

/// A probe record with its full cycle number (probe_cycle64).
struct ProbeStamp {
  uint64_t cycle = 0;
  regs::ProbeStage stage = regs::ProbeStage::NONE;
  uint32_t tag = 0;
};

/// The probe stamps of one host reject.
struct RejectStamps {
  uint64_t doorbell = 0, desc = 0, pd = 0, first = 0, last = 0, cqe = 0;
};

/// The SQ-side probe records of a run, by stage and tag (the tags of docs/register-map.md,
/// `probe_stage`: DOORBELL by SQ and the producer index after the post, DESC_AVAIL and
/// CQE_WRITTEN by SQ and wqe_idx, PD_READY and REJ_LAST by 0x10000 | remote port,
/// REJ_FIRST_HOST by remote port).
class RejectProbeIndex {
 public:
  /// Adds records; returns how many were of other stages (the RX side), which it ignores.
  size_t add(std::span<const ProbeStamp> recs);
  /// The stamps of the reject posted at `wqe_idx` of SQ `sq` to remote port `rem_port`, in
  /// an SQ of `sq_size` entries; nullopt when one of them is missing.
  std::optional<RejectStamps> find(unsigned sq, uint16_t wqe_idx, uint16_t rem_port,
                                   uint32_t sq_size) const;

 private:
  std::map<uint32_t, uint64_t> db_, desc_, pd_, first_, last_, cqe_;
};

/// The host-written context the benches use for cm_id: remote MAC 02:00:5e:10:<cm_id>, IP
/// 10.0.1.<cm_id>, port 40000 + cm_id, random window / sequence numbers / IP ID from `rng`,
/// the request's revision `rev` (rev 2 enhanced). The remote MAC is never `own_mac`.
CmContext bench_context(std::mt19937_64& rng, uint32_t cm_id, unsigned rev,
                        const std::array<uint8_t, 6>& own_mac);

/// Runs the sweep; every point's records in order. Errors: Errc::kState (no probes in this
/// build, or the device is busy), Errc::kTimeout, Errc::kHardware (a completion with an error,
/// a probe record missing, or the probe FIFO overflowed).
Result<std::vector<ProbeLatency>> run_probe_bench(Device& dev, ContextDiag& diag,
                                                  const ProbeBenchConfig& cfg);

/// One JSON object per line, the bench.json latency schema (+ "samples", "source": "probes").
std::string probe_bench_jsonl(const std::vector<ProbeLatency>& recs);

}  // namespace bouncer
