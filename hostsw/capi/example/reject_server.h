/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* An example server written against bouncer/bouncer_cma.h (docs/capi.md shows it next to the
 * same server written for librdmacm). */
#ifndef BOUNCER_EXAMPLE_REJECT_SERVER_H
#define BOUNCER_EXAMPLE_REJECT_SERVER_H

#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Listens on ip:port (host order, 0 = any address), prints one line per connection request
 * to `out` and rejects it with `reason` as private data, until `requests` requests were
 * rejected. Returns 0, or -1 with errno set and a message on stderr. */
int reject_server(uint32_t ip, uint16_t port, int requests, const char *reason, FILE *out);

#ifdef __cplusplus
}
#endif

#endif /* BOUNCER_EXAMPLE_REJECT_SERVER_H */
