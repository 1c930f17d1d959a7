// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// Helpers shared by device.cpp (Device::open) and passive.cpp (the passive-CM registers).
#pragma once

#include <array>
#include <cstdint>

#include "bouncer/device.hpp"

namespace bouncer::detail {

Result<void> validate_timers(const TimerConfig& t);
Result<void> validate_tcp(const TcpConfig& t);
void write_timers(hal::Device& hal, const TimerConfig& t);
void write_tcp(hal::Device& hal, const TcpConfig& t);
/// 128 bits from std::random_device.
std::array<uint32_t, 4> random_isn_key();
uint32_t random_hash_key();

}  // namespace bouncer::detail
