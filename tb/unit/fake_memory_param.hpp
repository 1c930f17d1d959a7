// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// Driver tests parameterized over the fake's memory models (fake_dma.hpp): device writes made
// at once (kInline); landed later by the fake's DMA thread, qword by qword, VALID last, while
// the driver polls (kThreaded); and the same with non-coherent caches, where only the
// driver's syncs move data between the CPU's and the device's copies (kNonCoherent).
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "test_driver_fake_hal.hpp"

namespace bouncer::testing {

/// A default fake configuration with memory model `m`.
inline FakeHal::Config fake_config(FakeMemory m) {
  FakeHal::Config c;
  c.memory = m;
  return c;
}

inline std::string fake_memory_param_name(const ::testing::TestParamInfo<FakeMemory>& i) {
  return fake_memory_name(i.param);
}

}  // namespace bouncer::testing

/// Runs every TEST_P of `suite` (a ::testing::TestWithParam<FakeMemory>) on each memory model.
#define BOUNCER_ALL_FAKE_MEMORIES(suite)                                                    \
  INSTANTIATE_TEST_SUITE_P(Memory, suite,                                                   \
                           ::testing::Values(::bouncer::testing::FakeMemory::kInline,       \
                                             ::bouncer::testing::FakeMemory::kThreaded,     \
                                             ::bouncer::testing::FakeMemory::kNonCoherent), \
                           ::bouncer::testing::fake_memory_param_name)
