// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include "bouncer/result.hpp"

namespace bouncer {

const char* errc_name(Errc e) {
  switch (e) {
    case Errc::kInvalidArgument:
      return "invalid argument";
    case Errc::kRingFull:
      return "ring full";
    case Errc::kTimeout:
      return "timeout";
    case Errc::kHardware:
      return "hardware error";
    case Errc::kNoDevice:
      return "no device";
    case Errc::kState:
      return "bad state";
    case Errc::kQueueError:
      return "queue error";
    case Errc::kNoMemory:
      return "out of DMA memory";
  }
  return "unknown error";
}

}  // namespace bouncer
