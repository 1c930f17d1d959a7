// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include "platform/sim_util.hpp"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <utility>

namespace bouncer::sim {
namespace {
std::function<void()>& fatal_hook() {
  static std::function<void()> hook;
  return hook;
}
}  // namespace

void set_fatal_hook(std::function<void()> hook) { fatal_hook() = std::move(hook); }

void fatal(const char* fmt, ...) {
  std::fflush(stdout);
  std::fputs("bouncer-sim FATAL: ", stderr);
  va_list ap;
  va_start(ap, fmt);
  std::vfprintf(stderr, fmt, ap);
  va_end(ap);
  std::fputc('\n', stderr);
  std::fflush(stderr);
  // Run the hook once; a fatal error inside the hook must not recurse.
  std::function<void()> hook = std::move(fatal_hook());
  fatal_hook() = nullptr;
  if (hook) hook();
  std::abort();
}

}  // namespace bouncer::sim
