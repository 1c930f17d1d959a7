// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// For GoogleTest tests that need an external tool (tshark): without it the test is skipped
// visibly, and under CI=true it fails instead, because CI must run every test.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

#include "golden/tshark.hpp"

namespace golden {

inline bool ci_run() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::strcmp(ci, "true") == 0;
}

}  // namespace golden

// Ends the test (or the helper it is used in) when tshark is missing: a skip, or a failure
// under CI=true.
#define GOLDEN_REQUIRE_TSHARK()                                                    \
  do {                                                                             \
    if (!::golden::tshark_available()) {                                           \
      if (::golden::ci_run()) {                                                    \
        ADD_FAILURE() << "tshark is not installed, and CI=true: no test may skip"; \
        return;                                                                    \
      }                                                                            \
      GTEST_SKIP() << "tshark is not installed (scripts/deps.sh installs it)";     \
    }                                                                              \
  } while (false)
