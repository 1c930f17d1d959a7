/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* Listen, print each connection request, reject it with a reason: the passive side of an
 * RDMA server written the librdmacm way, over Bouncer's C API. */
#include "reject_server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>

#include "bouncer/bouncer_cma.h"

static int die(const char *what) {
  const int err = errno;
  fprintf(stderr, "reject_server: %s: %s\n", what, strerror(err));
  errno = err;
  return -1;
}

int reject_server(uint32_t ip, uint16_t port, int requests, const char *reason, FILE *out) {
  struct bouncer_event_channel *ch = bouncer_create_event_channel();
  if (!ch) return die("bouncer_create_event_channel");
  struct bouncer_cm_id *listen_id = NULL;
  if (bouncer_create_id(ch, &listen_id, NULL, BOUNCER_PS_TCP)) return die("bouncer_create_id");

  struct sockaddr_in sin;
  memset(&sin, 0, sizeof sin);
  sin.sin_family = AF_INET;
  sin.sin_addr.s_addr = htonl(ip);
  sin.sin_port = htons(port);
  if (bouncer_bind_addr(listen_id, (struct sockaddr *)&sin)) return die("bouncer_bind_addr");
  if (bouncer_listen(listen_id, 16)) return die("bouncer_listen");

  const uint8_t reason_len = (uint8_t)strlen(reason);
  int rejected = 0;
  while (rejected < requests) {
    struct bouncer_cm_event *event;
    if (bouncer_get_cm_event(ch, &event)) return die("bouncer_get_cm_event");
    if (event->event == BOUNCER_CM_EVENT_CONNECT_REQUEST) {
      const struct bouncer_conn_param *p = &event->param.conn;
      fprintf(out, "request: %u bytes of private data \"%.*s\", ird %u, ord %u\n",
              (unsigned)p->private_data_len, (int)p->private_data_len,
              p->private_data ? (const char *)p->private_data : "", (unsigned)p->initiator_depth,
              (unsigned)p->responder_resources);
      struct bouncer_cm_id *id = event->id;
      if (bouncer_reject(id, reason, reason_len)) {
        fprintf(out, "reject failed: %s\n", strerror(errno));
      } else {
        fprintf(out, "rejected: \"%s\"\n", reason);
        ++rejected;
      }
      bouncer_ack_cm_event(event);
      bouncer_destroy_id(id);
    } else {
      fprintf(out, "event %d\n", (int)event->event);
      struct bouncer_cm_id *id = event->id;
      const int conn = event->event == BOUNCER_CM_EVENT_DISCONNECTED;
      bouncer_ack_cm_event(event);
      if (conn) bouncer_destroy_id(id); /* a reset request: destroying it frees it */
    }
  }
  bouncer_destroy_id(listen_id);
  bouncer_destroy_event_channel(ch);
  return 0;
}
