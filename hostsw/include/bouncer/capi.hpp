// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// The C++ side of the C API (bouncer/bouncer_cma.h): the process hands it the Device its
// calls use. A card's program opens the Device (XRT) and attaches it; a test harness does the
// same with the co-simulation's Device.
#pragma once

#include "bouncer/cm.hpp"
#include "bouncer/device.hpp"

namespace bouncer {

/// The C API uses `dev` from now on (through one Cm of its own). `dev` must stay open until
/// bouncer_capi_detach(). Replaces an earlier attachment (its ids and channels are gone).
/// `listen` supplies what bind_addr cannot say: the listeners' local MAC, TTL, TOS and FIN
/// policy (its backlog, context and channel are set by bouncer_listen).
void bouncer_capi_attach(Device& dev, const ListenOptions& listen = {});
/// Destroys the C API's Cm (its listeners; held requests are rejected). Ids, events and
/// channels still allocated must not be used afterwards.
void bouncer_capi_detach();

}  // namespace bouncer
