/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* The passive side of librdmacm's API over Bouncer's connection manager, in C.
 *
 * Same shapes and conventions as librdmacm (rdma/rdma_cma.h): an event channel with a file
 * descriptor, ids created on a channel, bind + listen, CONNECT_REQUEST events that carry a
 * new id for the connection, reject, destroy, every event acknowledged. Every call returns 0
 * (or a pointer) on success and -1 (or NULL) with errno set on failure. The names carry a
 * bouncer_ prefix so the real librdmacm can be linked into the same program.
 *
 * Bouncer only rejects: there is no accept, connect or QP. A process hands the library its
 * device once, from C++ (bouncer/capi.hpp: bouncer_capi_attach); until then every call fails
 * with ENODEV.
 *
 * errno values: EINVAL (bad argument, a stale or already rejected id: iw_cm's -EINVAL),
 * ENODEV (no device attached), EAFNOSUPPORT (not AF_INET), EADDRINUSE (address and port
 * already listened on), EAGAIN (non-blocking channel with no event, or the send queue is
 * full), ETIMEDOUT (the device did not complete in time), EIO (the device refused or failed
 * the reject), ENOMEM, EBUSY (a channel that still has ids). */
#ifndef BOUNCER_BOUNCER_CMA_H
#define BOUNCER_BOUNCER_CMA_H

#include <stdint.h>
#include <sys/socket.h>

#ifdef __cplusplus
extern "C" {
#endif

/* librdmacm's values, so code written for one reads the same with the other. */
enum bouncer_port_space { BOUNCER_PS_TCP = 0x0106 };

enum bouncer_cm_event_type {
  BOUNCER_CM_EVENT_CONNECT_REQUEST = 4,
  BOUNCER_CM_EVENT_CONNECT_ERROR = 6, /* a malformed MPA request (listen id); nothing to do */
  BOUNCER_CM_EVENT_DISCONNECTED = 10, /* the peer reset a request still held: reject or destroy */
};

struct bouncer_event_channel {
  int fd; /* readable while events wait (poll/epoll); O_NONBLOCK makes get_cm_event not block */
};

struct bouncer_cm_id {
  struct bouncer_event_channel *channel;
  void *context; /* a connection's id starts with its listener's context */
  enum bouncer_port_space ps;
};

struct bouncer_conn_param {
  const void *private_data; /* the MPA request's private data, valid until the ack */
  uint8_t private_data_len; /* capped at 255, as librdmacm's field */
  uint8_t responder_resources;
  uint8_t initiator_depth;
};

struct bouncer_cm_event {
  struct bouncer_cm_id *id;        /* CONNECT_REQUEST: a new id for the connection */
  struct bouncer_cm_id *listen_id; /* CONNECT_REQUEST, CONNECT_ERROR: the listening id */
  enum bouncer_cm_event_type event;
  int status;
  union {
    struct bouncer_conn_param conn;
  } param;
};

struct bouncer_event_channel *bouncer_create_event_channel(void);
void bouncer_destroy_event_channel(struct bouncer_event_channel *channel);

int bouncer_create_id(struct bouncer_event_channel *channel, struct bouncer_cm_id **id,
                      void *context, enum bouncer_port_space ps);
/* A listening id stops listening; a connection's id whose request is still held is rejected
 * with no private data (iw_cm's destroy_cm_id in CONN_RECV). If the device cannot remove a
 * listener (-1, errno ETIMEDOUT or EIO), the id stays valid and listening. Unlike librdmacm,
 * the id is freed at once: acknowledge the events that name it first, and do not destroy an
 * id from one thread while another may be receiving an event that names it. */
int bouncer_destroy_id(struct bouncer_cm_id *id);

/* AF_INET only; address 0 listens on every address of the device. */
int bouncer_bind_addr(struct bouncer_cm_id *id, const struct sockaddr *addr);
int bouncer_listen(struct bouncer_cm_id *id, int backlog);

/* Blocks until an event is ready, unless channel->fd is O_NONBLOCK (then EAGAIN). */
int bouncer_get_cm_event(struct bouncer_event_channel *channel, struct bouncer_cm_event **event);
int bouncer_ack_cm_event(struct bouncer_cm_event *event);

/* Sends the MPA reject with this private data and waits for the device to complete it.
 * ETIMEDOUT: the completion did not come in time; the reject stays posted and may still go
 * out, and the id is no longer held (librdmacm returns once the reject is queued). */
int bouncer_reject(struct bouncer_cm_id *id, const void *private_data, uint8_t private_data_len);

#ifdef __cplusplus
}
#endif

#endif /* BOUNCER_BOUNCER_CMA_H */
