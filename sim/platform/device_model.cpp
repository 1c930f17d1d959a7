// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include "platform/device_model.hpp"

#include <cstring>
#include <utility>

namespace bouncer::sim {

namespace {
constexpr uint64_t kRegSpace = 0x10000;  // AXIL_ADDR_W = 16
constexpr unsigned kMaxWords = 256;
}  // namespace

DeviceModel::DeviceModel(sc_core::sc_module_name name, const PlatformConfig& cfg,
                         std::vector<MmioWrite>& mmio_log, PlatformStats& stats,
                         TxSink::FrameFn on_tx, RxSource::FrameFn on_rx, Network& net,
                         std::vector<RxBeat>* rx_beats)
    : sc_core::sc_module(name),
      regs("regs"),
      dma("dma", cfg.mem_latency_cycles, cfg.mem_latency_jitter, cfg.seed, stats),
      period_(sc_core::sc_time(1.0 / cfg.clock_mhz, sc_core::SC_US)),
      tx_(cfg.data_width / 8, cfg.seed ^ 0x7E57'0000'0000'0002ull, cfg.tx_ready_prob,
          std::move(on_tx)),
      rx_(cfg.data_width / 8, cfg.rx_ifg_cycles.value_or(0), std::move(on_rx)) {
  CoreConfig cc;
  cc.data_width = cfg.data_width;
  cc.fst_path = cfg.fst_path;
  cc.clock_mhz = cfg.clock_mhz;
  cc.reset_cycles = cfg.reset_cycles;
  cc.mmio_cycles = cfg.mmio_cycles;
  cc.mmio_timeout_cycles = cfg.mmio_timeout_cycles;
  cc.reset_read_value = cfg.reset_read_value;
  core_ = make_core_model(cc, dma, tx_, rx_, net, mmio_log, stats, rx_beats);
  regs.register_b_transport(this, &DeviceModel::b_transport);
}

void DeviceModel::b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
  const uint64_t addr = gp.get_address();
  const unsigned len = gp.get_data_length();
  if (gp.get_byte_enable_ptr() != nullptr || gp.get_streaming_width() < len) {
    gp.set_response_status(tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
    return;
  }
  if (len == 0 || len % 4 != 0 || len / 4 > kMaxWords || addr % 4 != 0) {
    gp.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
    return;
  }
  if (addr >= kRegSpace || len > kRegSpace - addr) {
    gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  uint32_t words[kMaxWords];
  const size_t n = len / 4;
  AxilResult r{};
  if (gp.is_write()) {
    std::memcpy(words, gp.get_data_ptr(), len);
    r = core_->axil_write(static_cast<uint32_t>(addr), words, n);
  } else if (gp.is_read()) {
    r = core_->axil_read(static_cast<uint32_t>(addr), words, n);
    std::memcpy(gp.get_data_ptr(), words, len);
  } else {
    gp.set_response_status(tlm::TLM_OK_RESPONSE);  // TLM_IGNORE_COMMAND
    return;
  }
  delay += period_ * static_cast<double>(r.cycles);
  switch (r.resp) {
    case 0:
    case 1:  // EXOKAY is not expected on AXI4-Lite; treat it as OKAY
      gp.set_response_status(tlm::TLM_OK_RESPONSE);
      break;
    case 2:
      gp.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
      break;
    default:
      gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
      break;
  }
}

}  // namespace bouncer::sim
