// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// Line-rate ceiling model for reject frames (docs/bench-report.md).
//
// Two ceilings for a reject of n bytes of private data:
//  - the core's beat ceiling: the TX stream moves one beat (data_width / 8 bytes) per cycle,
//    so a frame needs ceil(bytes / beat bytes) beats plus the inter-frame minimum the RTL
//    needs between two frames (bouncer_tx_arb and the reject builder stream back to back:
//    0 idle beats); frames/s = clock / (beats + gap);
//  - Ethernet line rate: each frame occupies preamble/SFD (8) + max(frame + FCS (4), 64) +
//    inter-frame gap (12) bytes of the wire; frames/s = bit rate / (8 * that).
// The reject frame (docs/reject-frame.md, without FCS) is 74 bytes of headers (Ethernet,
// IPv4, TCP, MPA) + 4 with an 802.1Q tag + 4 with the RFC 6581 IRD/ORD word (rev 2
// enhanced) + the private data.
#pragma once

#include <cstdint>

namespace bouncer::bench {

inline constexpr uint32_t kRejectHeaderBytes = 74;  // 14 + 20 + 20 + 20
inline constexpr uint32_t kVlanTagBytes = 4;
inline constexpr uint32_t kIrdOrdBytes = 4;
inline constexpr uint32_t kEthPreambleBytes = 8;  // preamble 7 + SFD 1
inline constexpr uint32_t kEthIfgBytes = 12;
inline constexpr uint32_t kEthFcsBytes = 4;
inline constexpr uint32_t kEthMinFrameBytes = 64;  // including the FCS
/// Idle beats bouncer_tx_arb / the reject builder need between two frames (none: the next
/// frame's first beat follows the previous tlast beat in the next cycle).
inline constexpr uint32_t kRtlInterFrameBeats = 0;

/// Reject frame length without FCS. `enhanced`: MPA rev 2 with the enhanced flag (the reply
/// carries the IRD/ORD word).
uint32_t reject_frame_bytes(uint32_t pd_len, bool enhanced, bool vlan = false);

/// ceil(frame_bytes / (data_width / 8)). data_width: a positive multiple of 8.
uint32_t frame_beats(uint32_t frame_bytes, uint32_t data_width);

/// Frames per second the TX stream can carry at `clock_hz`: clock / (beats + gap_beats).
double beat_ceiling_fps(uint32_t frame_bytes, uint32_t data_width, double clock_hz,
                        uint32_t gap_beats = kRtlInterFrameBeats);

/// Bytes one frame occupies on an Ethernet wire: preamble + max(frame + FCS, 64) + IFG.
uint32_t wire_bytes(uint32_t frame_bytes);

/// Frames per second at an Ethernet bit rate (10e9, 100e9).
double line_rate_fps(uint32_t frame_bytes, double bits_per_s);

/// The clock of each data width in the issue and the kernel packaging: 250 MHz at 64 bits,
/// 322 MHz (kernel_frequency 1:322, the CMAC side) at 512 bits.
double default_clock_hz(uint32_t data_width);

}  // namespace bouncer::bench
