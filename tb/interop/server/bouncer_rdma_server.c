// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * bouncer_rdma_server: a small librdmacm passive side that rejects every connection request.
 *
 * It runs inside a second QEMU guest on top of the kernel's soft-iWARP (siw) device, as the
 * Linux reference that the interop tests (tb/interop/, scenario linux_reference) compare
 * Bouncer with: the same initiator sends the same requests to both, and the two captures are
 * diffed. It listens on one port (-p), optionally on a second "probe" port (-q) with its own
 * private data, and answers every RDMA_CM_EVENT_CONNECT_REQUEST with
 * rdma_reject(id, pd, len). One machine-readable line per request:
 *
 *   BOUNCER_SERVER {"n":1,"port":20049,"remote":"10.0.1.1:33012","ird":4,"ord":2,
 *                   "pd_len":9,"pd_hex":"...","reject_len":7,"reject_hex":"...","reject_rc":0,
 *                   "reject_errno":""}
 *
 * (one line; wrapped here). pd_* is the private data the initiator sent (the ULP bytes; siw
 * hides the MPA v2 IRD/ORD word), ird/ord are the request's responder_resources and
 * initiator_depth, reject_* what was passed to rdma_reject() and its result.
 * Before the first request it prints BOUNCER_SERVER_LISTENING {...}; at the end
 * BOUNCER_SERVER_DONE {"requests":N,"rejects_ok":N,"reason":"count|deadline|error"}.
 *
 * Exit status: 0 when -n requests were rejected (rdma_reject() returned 0 for each), 1 when
 * the deadline passed first or a call failed, 2 on a usage error.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
#include <rdma/rdma_cma.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { MAX_PD = 255 };

struct listener {
  const char *port;
  const char *pd_text; /* %n -> request number, %% -> % */
  const char *pd_hex;  /* alternative: raw bytes in hex */
  struct rdma_cm_id *id;
  int port_num;
};

struct options {
  struct listener main;
  struct listener probe; /* optional: port NULL */
  int requests;          /* exit after this many requests (both listeners) */
  int wait_ms;           /* overall deadline */
  int linger_ms;         /* pause after the last reject, before exiting */
};

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void usage(FILE *f) {
  fprintf(f,
          "usage: bouncer_rdma_server [options]\n"
          "  -p PORT   listening port (default 20049)\n"
          "  -d TEXT   reject private data; %%n is replaced by the request number, %%%% by %%\n"
          "  -x HEX    reject private data as hex bytes (instead of -d)\n"
          "  -q PORT   a second (probe) listening port\n"
          "  -D TEXT   reject private data on the probe port (%%n, %%%% as for -d)\n"
          "  -X HEX    reject private data on the probe port as hex bytes\n"
          "  -n N      exit after N requests on both ports (default 1)\n"
          "  -w MS     overall deadline (default 60000)\n"
          "  -l MS     pause after the last reject before exiting (default 1000)\n");
}

static int parse_int(const char *s, int lo, int hi, int *out) {
  char *end = NULL;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || end == s || *end || v < lo || v > hi) return -1;
  *out = (int)v;
  return 0;
}

static int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* The reject private data of request n; returns its length or -1 if it exceeds MAX_PD. */
static int make_pd(const struct listener *l, int n, uint8_t *pd) {
  int len = 0;
  if (l->pd_hex) {
    size_t hex_len = strlen(l->pd_hex);
    if (hex_len % 2) return -1;
    for (size_t i = 0; i < hex_len; i += 2) {
      int hi = hexval(l->pd_hex[i]), lo = hexval(l->pd_hex[i + 1]);
      if (hi < 0 || lo < 0 || len >= MAX_PD) return -1;
      pd[len++] = (uint8_t)(hi << 4 | lo);
    }
    return len;
  }
  if (!l->pd_text) return 0;
  for (const char *p = l->pd_text; *p; ++p) {
    char num[16];
    char one[2] = {*p, 0};
    const char *ins = one;
    if (p[0] == '%' && p[1] == 'n') {
      snprintf(num, sizeof num, "%d", n);
      ins = num;
      ++p;
    } else if (p[0] == '%' && p[1] == '%') {
      ins = "%";
      ++p;
    }
    for (; *ins; ++ins) {
      if (len >= MAX_PD) return -1;
      pd[len++] = (uint8_t)*ins;
    }
  }
  return len;
}

static void print_hex(const uint8_t *b, int n) {
  for (int i = 0; i < n; ++i) printf("%02x", b[i]);
}

static int start_listener(struct rdma_event_channel *ec, struct listener *l) {
  struct sockaddr_in sin;
  memset(&sin, 0, sizeof sin);
  sin.sin_family = AF_INET;
  sin.sin_addr.s_addr = htonl(INADDR_ANY);
  sin.sin_port = htons((uint16_t)l->port_num);
  if (rdma_create_id(ec, &l->id, l, RDMA_PS_TCP)) {
    perror("bouncer_rdma_server: rdma_create_id");
    return -1;
  }
  if (rdma_bind_addr(l->id, (struct sockaddr *)&sin)) {
    fprintf(stderr, "bouncer_rdma_server: rdma_bind_addr port %d: %s\n", l->port_num,
            strerror(errno));
    return -1;
  }
  if (rdma_listen(l->id, 16)) {
    fprintf(stderr, "bouncer_rdma_server: rdma_listen port %d: %s\n", l->port_num, strerror(errno));
    return -1;
  }
  return 0;
}

/* Rejects one CONNECT_REQUEST and prints its line. Returns 0 if rdma_reject() succeeded. */
static int reject_request(struct rdma_cm_event *ev, const struct listener *l, int n) {
  uint8_t pd[MAX_PD];
  int pd_len = make_pd(l, n, pd);
  if (pd_len < 0) pd_len = 0; /* validated at start-up */
  const struct rdma_conn_param *c = &ev->param.conn;
  char remote[64] = "";
  const struct sockaddr *ra = rdma_get_peer_addr(ev->id);
  if (ra && ra->sa_family == AF_INET) {
    const struct sockaddr_in *s4 = (const struct sockaddr_in *)ra;
    char ip[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &s4->sin_addr, ip, sizeof ip);
    snprintf(remote, sizeof remote, "%s:%u", ip, ntohs(s4->sin_port));
  }
  int rc = rdma_reject(ev->id, pd_len ? pd : NULL, (uint8_t)pd_len);
  int err = rc ? errno : 0;
  printf("BOUNCER_SERVER {\"n\":%d,\"port\":%d,\"remote\":\"%s\",\"ird\":%u,\"ord\":%u,", n,
         l->port_num, remote, c->responder_resources, c->initiator_depth);
  printf("\"pd_len\":%u,\"pd_hex\":\"", c->private_data ? c->private_data_len : 0);
  if (c->private_data) print_hex(c->private_data, c->private_data_len);
  printf("\",\"reject_len\":%d,\"reject_hex\":\"", pd_len);
  print_hex(pd, pd_len);
  printf("\",\"reject_rc\":%d,\"reject_errno\":\"%s\"}\n", rc, err ? strerrorname_np(err) : "");
  fflush(stdout);
  return rc;
}

int main(int argc, char **argv) {
  struct options o;
  memset(&o, 0, sizeof o);
  o.main.port = "20049";
  o.requests = 1;
  o.wait_ms = 60000;
  o.linger_ms = 1000;
  int c;
  while ((c = getopt(argc, argv, "p:d:x:q:D:X:n:w:l:h")) != -1) {
    int bad = 0;
    switch (c) {
      case 'p':
        o.main.port = optarg;
        break;
      case 'd':
        o.main.pd_text = optarg;
        break;
      case 'x':
        o.main.pd_hex = optarg;
        break;
      case 'q':
        o.probe.port = optarg;
        break;
      case 'D':
        o.probe.pd_text = optarg;
        break;
      case 'X':
        o.probe.pd_hex = optarg;
        break;
      case 'n':
        bad = parse_int(optarg, 1, 100000, &o.requests);
        break;
      case 'w':
        bad = parse_int(optarg, 1, 3600000, &o.wait_ms);
        break;
      case 'l':
        bad = parse_int(optarg, 0, 600000, &o.linger_ms);
        break;
      case 'h':
        usage(stdout);
        return 0;
      default:
        usage(stderr);
        return 2;
    }
    if (bad) {
      fprintf(stderr, "bouncer_rdma_server: bad value for -%c: %s\n", c, optarg);
      return 2;
    }
  }
  struct listener *ls[2] = {&o.main, o.probe.port ? &o.probe : NULL};
  if (optind != argc || (o.main.pd_text && o.main.pd_hex) || (o.probe.pd_text && o.probe.pd_hex) ||
      (!o.probe.port && (o.probe.pd_text || o.probe.pd_hex))) {
    usage(stderr);
    return 2;
  }
  for (int i = 0; i < 2; ++i) {
    if (!ls[i]) continue;
    uint8_t pd[MAX_PD];
    if (parse_int(ls[i]->port, 1, 65535, &ls[i]->port_num) || make_pd(ls[i], o.requests, pd) < 0) {
      fprintf(stderr,
              "bouncer_rdma_server: bad port %s, or private data longer than %d bytes or bad "
              "hex\n",
              ls[i]->port, MAX_PD);
      return 2;
    }
  }

  struct rdma_event_channel *ec = rdma_create_event_channel();
  if (!ec) {
    perror("bouncer_rdma_server: rdma_create_event_channel");
    return 1;
  }
  for (int i = 0; i < 2; ++i) {
    if (ls[i] && start_listener(ec, ls[i])) return 1;
  }
  printf("BOUNCER_SERVER_LISTENING {\"port\":%d,\"probe_port\":%d,\"requests\":%d}\n",
         o.main.port_num, o.probe.port ? o.probe.port_num : 0, o.requests);
  fflush(stdout);

  double deadline = now_ms() + o.wait_ms;
  int requests = 0, rejects_ok = 0, failed = 0;
  const char *reason = "count";
  while (requests < o.requests) {
    int left = (int)(deadline - now_ms());
    if (left <= 0) {
      reason = "deadline";
      failed = 1;
      break;
    }
    struct pollfd p = {.fd = ec->fd, .events = POLLIN, .revents = 0};
    int r = poll(&p, 1, left);
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) continue;
    struct rdma_cm_event *ev = NULL;
    if (r < 0 || rdma_get_cm_event(ec, &ev)) {
      perror("bouncer_rdma_server: poll/rdma_get_cm_event");
      reason = "error";
      failed = 1;
      break;
    }
    if (ev->event != RDMA_CM_EVENT_CONNECT_REQUEST) {
      /* Nothing else is expected on a listener that only rejects; reported, not fatal. */
      printf("BOUNCER_SERVER_EVENT {\"event\":\"%s\",\"status\":%d}\n", rdma_event_str(ev->event),
             ev->status);
      fflush(stdout);
      rdma_ack_cm_event(ev);
      continue;
    }
    ++requests;
    const struct listener *l = ev->listen_id && ev->listen_id->context
                                   ? (const struct listener *)ev->listen_id->context
                                   : &o.main;
    struct rdma_cm_id *id = ev->id;
    if (reject_request(ev, l, requests) == 0)
      ++rejects_ok;
    else
      failed = 1;
    rdma_ack_cm_event(ev);
    rdma_destroy_id(id);
  }
  if (!failed && o.linger_ms) {
    struct timespec ts = {o.linger_ms / 1000, (long)(o.linger_ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
  }
  printf("BOUNCER_SERVER_DONE {\"requests\":%d,\"rejects_ok\":%d,\"reason\":\"%s\"}\n", requests,
         rejects_ok, reason);
  fflush(stdout);
  for (int i = 0; i < 2; ++i) {
    if (ls[i] && ls[i]->id) rdma_destroy_id(ls[i]->id);
  }
  rdma_destroy_event_channel(ec);
  return failed ? 1 : 0;
}
