// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include "bouncer/device_faults.hpp"

namespace bouncer::testing {

Result<uint16_t> DeviceFaults::post_reject(Device& dev, const RejectWqe& wqe,
                                           const RejectWqeFaults& faults) {
  return dev.post_reject_with(wqe, &faults);
}

Result<void> DeviceFaults::cqp_raw(Device& dev, uint8_t opcode, uint32_t cm_id,
                                   std::span<const std::byte> ctx_image) {
  return dev.cqp_raw(opcode, cm_id, ctx_image);
}

}  // namespace bouncer::testing
