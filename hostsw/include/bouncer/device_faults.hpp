// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// Test-only access to the Device: WQEs and control commands the hardware must refuse (a bad
// opcode, a PD_LEN over 512, an unaligned PD_ADDR, a valid bit of the wrong polarity ...).
// The driver never builds them; the hardware-check tests (tb/system, tb/unit, tb/fuzz) do,
// through this accessor, so no production struct carries the overrides.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "bouncer/device.hpp"

namespace bouncer::testing {

/// Raw SQ WQE fields that bypass the driver's own choices.
struct RejectWqeFaults {
  std::optional<uint16_t> pd_len;   // PD_LEN regardless of pd.size()
  std::optional<uint64_t> pd_addr;  // PD_ADDR (forces PD_INLINE = 0)
  std::optional<uint8_t> opcode;    // OPCODE instead of MPA_REJECT
  bool force_inline = false;        // PD_INLINE = 1 even if pd.size() > 32
  bool stale = false;               // VALID written with the wrong polarity
};

/// A RejectWqe with its faults, for tests that build one WQE at a time.
struct FaultyRejectWqe : RejectWqe, RejectWqeFaults {};

struct DeviceFaults {
  /// Device::post_reject with `faults` applied to the WQE image.
  static Result<uint16_t> post_reject(Device& dev, const RejectWqe& wqe,
                                      const RejectWqeFaults& faults);
  static Result<uint16_t> post_reject(Device& dev, const FaultyRejectWqe& wqe) {
    return post_reject(dev, static_cast<const RejectWqe&>(wqe),
                       static_cast<const RejectWqeFaults&>(wqe));
  }
  /// A control command with any opcode. The context buffer of the slot is passed as CTX_ADDR
  /// (after copying `ctx_image` in when given).
  static Result<void> cqp_raw(Device& dev, uint8_t opcode, uint32_t cm_id,
                              std::span<const std::byte> ctx_image = {});
};

}  // namespace bouncer::testing
