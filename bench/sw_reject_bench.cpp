// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// Software baseline: the golden C++ reject builder (tb/golden) used as a software
// CM would use it, timed with Google Benchmark. One iteration = one reject: take the
// connection's state and the application's PD, copy the PD into the request, build the
// Ethernet/IPv4/TCP/MPA headers, copy the PD into the frame and compute the IPv4 and TCP
// checksums (golden::build_mpa_reject_frame), and advance SND_NXT / IP_ID as the hardware
// does. Arguments: PD length, MPA rev (2 = enhanced, with the IRD/ORD word).
//   sw_reject_bench [--benchmark_format=json] [--benchmark_min_time=0.05] ...
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "golden/reject_frame.hpp"

namespace {

golden::RejectParams connection(uint8_t rev) {
  golden::RejectParams p;
  p.rem_mac.b = {0x02, 0x00, 0x5e, 0x10, 0x00, 0x07};
  p.loc_mac.b = {0x02, 0xbb, 0xcc, 0xdd, 0xee, 0x01};
  p.loc_ip = 0x0A000001;
  p.rem_ip = 0x0A000107;
  p.loc_port = 4791;
  p.rem_port = 40007;
  p.rcv_wnd = 0x1234;
  p.tos = 0;
  p.ttl = 64;
  p.ip_id = 0x4321;
  p.snd_nxt = 0x12345678;
  p.rcv_nxt = 0x9abcdef0;
  p.req_rev = rev;
  p.req_flags =
      static_cast<uint8_t>(golden::kMpaFlagCrc | (rev == 2 ? golden::kMpaFlagEnhanced : 0));
  p.req_ird_ord = 0x80104010u;
  return p;
}

void BM_SoftwareReject(benchmark::State& state) {
  const auto pd_len = static_cast<size_t>(state.range(0));
  const auto rev = static_cast<uint8_t>(state.range(1));
  std::vector<uint8_t> pd(pd_len);
  for (size_t i = 0; i < pd_len; ++i) pd[i] = static_cast<uint8_t>(i * 131 + 7);
  golden::RejectParams ctx = connection(rev);
  size_t bytes = 0;
  for (auto _ : state) {
    ctx.pd.assign(pd.begin(), pd.end());  // the application's PD, copied (rdma_reject)
    auto frame = golden::build_mpa_reject_frame(ctx);
    benchmark::DoNotOptimize(frame.data());
    bytes += frame.size();
    ctx.snd_nxt += golden::reject_seq_advance(ctx);
    ++ctx.ip_id;
    benchmark::ClobberMemory();
  }
  if (bytes == 0) state.SkipWithError("the golden builder refused the reject");
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  state.counters["pd_len"] = static_cast<double>(pd_len);
  state.counters["rev"] = rev;
}

void Args(benchmark::internal::Benchmark* b) {
  for (int rev : {1, 2}) {
    for (int pd : {0, 4, 16, 64, 128, 255, 512}) {
      if (rev == 2 && pd > 508) continue;  // PD_Length (PD + IRD/ORD) over MPA_PD_MAX
      b->Args({pd, rev});
    }
  }
}

BENCHMARK(BM_SoftwareReject)->Apply(Args)->ArgNames({"pd", "rev"});

}  // namespace

BENCHMARK_MAIN();
