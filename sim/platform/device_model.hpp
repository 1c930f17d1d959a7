// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// The device side of the platform: the verilated core (CoreModel) with its register target
// socket (AXI4-Lite driven from TLM), the AXI4 DMA adapter (initiator towards HostMemory), the
// TX sink and the RX source. The network (peers, wires) is owned by the platform and clocked by
// the core loop.
#pragma once

#include <tlm_utils/simple_target_socket.h>

#include <memory>
#include <systemc>
#include <tlm>
#include <vector>

#include "bouncer/sim/platform.hpp"
#include "net/network.hpp"
#include "net/rx_source.hpp"
#include "net/tx_sink.hpp"
#include "platform/axi_dma_adapter.hpp"
#include "platform/core_model.hpp"

namespace bouncer::sim {

class DeviceModel : public sc_core::sc_module {
 public:
  // Register space (16-bit AXI4-Lite). Accepts reads/writes of 4*n bytes at 4-byte aligned
  // offsets, without byte enables; a transaction of n > 1 words becomes n pipelined AXI4-Lite
  // accesses. The elapsed core cycles are added to the annotated delay. Response status:
  // OKAY -> TLM_OK_RESPONSE, SLVERR -> TLM_GENERIC_ERROR_RESPONSE, DECERR ->
  // TLM_ADDRESS_ERROR_RESPONSE.
  tlm_utils::simple_target_socket<DeviceModel> regs;
  AxiDmaAdapter dma;

  // on_tx / on_rx: every frame completed on m_axis_tx_* / s_axis_rx_* (bytes, first, last).
  DeviceModel(sc_core::sc_module_name name, const PlatformConfig& cfg,
              std::vector<MmioWrite>& mmio_log, PlatformStats& stats, TxSink::FrameFn on_tx,
              RxSource::FrameFn on_rx, Network& net, std::vector<RxBeat>* rx_beats);

  CoreModel& core() { return *core_; }
  TxSink& tx() { return tx_; }
  RxSource& rx() { return rx_; }
  const sc_core::sc_time& period() const { return period_; }

 private:
  void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);

  sc_core::sc_time period_;
  TxSink tx_;
  RxSource rx_;
  std::unique_ptr<CoreModel> core_;
};

}  // namespace bouncer::sim
