// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * bouncer_rdma_client: a small librdmacm initiator for the interop tests (tb/interop/).
 *
 * It runs inside the QEMU guest on top of the kernel's soft-iWARP (siw) device. Per attempt:
 * create a CM id, resolve the address, resolve the route, allocate PD/CQ and an RC QP, then
 * rdma_connect() with the given private data and wait for the result event. It prints one
 * machine-readable line per attempt and never blocks without a deadline:
 *
 *   BOUNCER_CLIENT {"attempt":1,"stage":"connect","event":"RDMA_CM_EVENT_REJECTED",
 *                   "status":-104,"pd_len":7,"pd_hex":"676f2061776179",...}
 *
 * (one line; wrapped here). status_name is the errno name of a negative status (ECONNRESET
 * for -104), empty otherwise. stage is where the attempt ended: "setup" (a local call failed),
 * "addr", "route", "qp" or "connect". event is the librdmacm event name, or "TIMEOUT" when no
 * event came before the deadline, or "ERROR" when a call failed synchronously (status is then
 * -errno). ESTABLISHED is followed by rdma_disconnect() and the event that answers it ("then").
 * Events that arrive within the drain window after the result are listed in "extra".
 * The run ends with one line: BOUNCER_CLIENT_DONE {"attempts":N,"events":{...}}. With -T TAG
 * both kinds of line start with "peer":"TAG" (the guest runs the client once per peer).
 *
 * Exit status: 0 when every attempt ended with a CM event, 1 when any attempt ended in a
 * local error or a timeout, 2 on a usage error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <poll.h>
#include <rdma/rdma_cma.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { MAX_PD = 255, MAX_EXTRA = 8 };

struct options {
  const char *server;
  const char *port;
  int attempts;
  const char *pd_text; /* %n -> attempt number, %% -> % */
  const char *pd_hex;  /* alternative: raw bytes in hex */
  int resolve_ms;      /* rdma_resolve_addr / rdma_resolve_route timeout */
  int wait_ms;         /* deadline for each event */
  int drain_ms;        /* window for extra events after the result */
  int gap_ms;          /* pause between attempts */
  int resources;       /* responder_resources (IRD) */
  int depth;           /* initiator_depth (ORD) */
  const char *tag;     /* "peer" field of every line (which peer this run talks to) */
};

struct outcome {
  const char *stage;
  char event[64];
  int status;
  uint8_t pd[MAX_PD];
  int pd_len;
  char then_event[64];
  int then_status;
  int extra_n;
  char extra[MAX_EXTRA][64];
  double ms_connect; /* rdma_connect() -> result event */
  double ms_total;   /* attempt start -> result event */
  int failed;        /* local error or timeout */
};

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void usage(FILE *f) {
  fprintf(f,
          "usage: bouncer_rdma_client [options]\n"
          "  -s ADDR   server IPv4 address (default 10.0.0.2)\n"
          "  -p PORT   server port (default 20049)\n"
          "  -n N      connect attempts (default 1)\n"
          "  -d TEXT   private data; %%n is replaced by the attempt number, %%%% by %%\n"
          "  -x HEX    private data as hex bytes (instead of -d)\n"
          "  -t MS     address and route resolution timeout (default 2000)\n"
          "  -w MS     deadline for each awaited event (default 15000)\n"
          "  -D MS     drain window for extra events after the result (default 200)\n"
          "  -g MS     pause between attempts (default 0)\n"
          "  -r N      responder_resources (IRD, default 1)\n"
          "  -i N      initiator_depth (ORD, default 1)\n"
          "  -T TAG    add \"peer\":\"TAG\" to every line (letters, digits, '-', '_')\n");
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

/* The private data of one attempt; returns its length or -1 if it exceeds MAX_PD. */
static int make_pd(const struct options *o, int attempt, uint8_t *pd) {
  int n = 0;
  if (o->pd_hex) {
    size_t len = strlen(o->pd_hex);
    if (len % 2) return -1;
    for (size_t i = 0; i < len; i += 2) {
      int hi = hexval(o->pd_hex[i]), lo = hexval(o->pd_hex[i + 1]);
      if (hi < 0 || lo < 0 || n >= MAX_PD) return -1;
      pd[n++] = (uint8_t)(hi << 4 | lo);
    }
    return n;
  }
  if (!o->pd_text) return 0;
  for (const char *p = o->pd_text; *p; ++p) {
    char num[16];
    const char *ins = NULL;
    char one[2] = {*p, 0};
    if (p[0] == '%' && p[1] == 'n') {
      snprintf(num, sizeof num, "%d", attempt);
      ins = num;
      ++p;
    } else if (p[0] == '%' && p[1] == '%') {
      ins = "%";
      ++p;
    } else {
      ins = one;
    }
    for (; *ins; ++ins) {
      if (n >= MAX_PD) return -1;
      pd[n++] = (uint8_t)*ins;
    }
  }
  return n;
}

/* Waits for one CM event until the deadline. 1: *ev set; 0: timeout; -1: error (errno). */
static int wait_event(struct rdma_event_channel *ec, int timeout_ms, struct rdma_cm_event **ev) {
  double deadline = now_ms() + timeout_ms;
  for (;;) {
    int left = (int)(deadline - now_ms());
    if (left < 0) left = 0;
    struct pollfd p = {.fd = ec->fd, .events = POLLIN, .revents = 0};
    int r = poll(&p, 1, left);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return -1;
    if (r == 0) return 0;
    if (rdma_get_cm_event(ec, ev)) return -1;
    return 1;
  }
}

static void set_str(char *dst, size_t n, const char *src) { snprintf(dst, n, "%s", src); }

/* Awaits the event that completes `stage`. Returns 1 if it is `want`, else 0 (outcome set). */
static int expect_event(struct rdma_event_channel *ec, const struct options *o, const char *stage,
                        enum rdma_cm_event_type want, struct outcome *out) {
  struct rdma_cm_event *ev = NULL;
  int r = wait_event(ec, o->wait_ms, &ev);
  out->stage = stage;
  if (r <= 0) {
    set_str(out->event, sizeof out->event, r == 0 ? "TIMEOUT" : "ERROR");
    out->status = r == 0 ? -ETIMEDOUT : -errno;
    out->failed = 1;
    return 0;
  }
  int ok = ev->event == want;
  if (!ok) {
    set_str(out->event, sizeof out->event, rdma_event_str(ev->event));
    out->status = ev->status;
  }
  rdma_ack_cm_event(ev);
  return ok;
}

static void local_error(struct outcome *out, const char *stage) {
  out->stage = stage;
  set_str(out->event, sizeof out->event, "ERROR");
  out->status = errno ? -errno : -EIO;
  out->failed = 1;
}

static void run_attempt(const struct options *o, const struct sockaddr *dst, int attempt,
                        const uint8_t *pd, int pd_len, struct outcome *out) {
  memset(out, 0, sizeof *out);
  out->stage = "setup";
  double t0 = now_ms();
  struct rdma_event_channel *ec = rdma_create_event_channel();
  struct rdma_cm_id *id = NULL;
  struct ibv_pd *ibpd = NULL;
  struct ibv_cq *cq = NULL;
  int have_qp = 0;
  if (!ec) {
    local_error(out, "setup");
    return;
  }
  if (rdma_create_id(ec, &id, NULL, RDMA_PS_TCP)) {
    local_error(out, "setup");
    goto done;
  }
  if (rdma_resolve_addr(id, NULL, (struct sockaddr *)dst, o->resolve_ms)) {
    local_error(out, "addr");
    goto done;
  }
  if (!expect_event(ec, o, "addr", RDMA_CM_EVENT_ADDR_RESOLVED, out)) goto done;
  if (rdma_resolve_route(id, o->resolve_ms)) {
    local_error(out, "route");
    goto done;
  }
  if (!expect_event(ec, o, "route", RDMA_CM_EVENT_ROUTE_RESOLVED, out)) goto done;

  ibpd = ibv_alloc_pd(id->verbs);
  if (!ibpd) {
    local_error(out, "qp");
    goto done;
  }
  cq = ibv_create_cq(id->verbs, 4, NULL, NULL, 0);
  if (!cq) {
    local_error(out, "qp");
    goto done;
  }
  struct ibv_qp_init_attr qa;
  memset(&qa, 0, sizeof qa);
  qa.send_cq = cq;
  qa.recv_cq = cq;
  qa.qp_type = IBV_QPT_RC;
  qa.cap.max_send_wr = 1;
  qa.cap.max_recv_wr = 1;
  qa.cap.max_send_sge = 1;
  qa.cap.max_recv_sge = 1;
  if (rdma_create_qp(id, ibpd, &qa)) {
    local_error(out, "qp");
    goto done;
  }
  have_qp = 1;

  struct rdma_conn_param cp;
  memset(&cp, 0, sizeof cp);
  cp.private_data = pd_len ? pd : NULL;
  cp.private_data_len = (uint8_t)pd_len;
  cp.responder_resources = (uint8_t)o->resources;
  cp.initiator_depth = (uint8_t)o->depth;
  cp.retry_count = 7;
  cp.rnr_retry_count = 7;
  double tc = now_ms();
  /* siw connects its TCP socket synchronously inside rdma_connect(): with no answer to the
   * SYN the call would block for the kernel's whole SYN retry time. The alarm interrupts it. */
  alarm((unsigned)(o->wait_ms + 999) / 1000);
  int cr = rdma_connect(id, &cp);
  int cerr = errno;
  alarm(0);
  if (cr) {
    errno = cerr;
    local_error(out, "connect");
    if (cerr == EINTR) {
      set_str(out->event, sizeof out->event, "TIMEOUT");
      out->status = -ETIMEDOUT;
    }
    out->ms_connect = now_ms() - tc;
    out->ms_total = now_ms() - t0;
    goto done;
  }
  out->stage = "connect";
  struct rdma_cm_event *ev = NULL;
  int r = wait_event(ec, o->wait_ms, &ev);
  double te = now_ms();
  out->ms_connect = te - tc;
  out->ms_total = te - t0;
  if (r <= 0) {
    set_str(out->event, sizeof out->event, r == 0 ? "TIMEOUT" : "ERROR");
    out->status = r == 0 ? -ETIMEDOUT : -errno;
    out->failed = 1;
    goto done;
  }
  set_str(out->event, sizeof out->event, rdma_event_str(ev->event));
  out->status = ev->status;
  if (ev->param.conn.private_data && ev->param.conn.private_data_len) {
    out->pd_len = ev->param.conn.private_data_len;
    memcpy(out->pd, ev->param.conn.private_data, (size_t)out->pd_len);
  }
  enum rdma_cm_event_type got = ev->event;
  rdma_ack_cm_event(ev);

  if (got == RDMA_CM_EVENT_ESTABLISHED) {
    rdma_disconnect(id);
    struct rdma_cm_event *d = NULL;
    int rd = wait_event(ec, o->wait_ms, &d);
    if (rd > 0) {
      set_str(out->then_event, sizeof out->then_event, rdma_event_str(d->event));
      out->then_status = d->status;
      rdma_ack_cm_event(d);
    } else {
      set_str(out->then_event, sizeof out->then_event, rd == 0 ? "TIMEOUT" : "ERROR");
      out->then_status = rd == 0 ? -ETIMEDOUT : -errno;
      out->failed = 1;
    }
  }
  /* Anything else the CM reports on this id shortly after the result. */
  while (o->drain_ms > 0) {
    struct rdma_cm_event *x = NULL;
    if (wait_event(ec, o->drain_ms, &x) <= 0) break;
    if (out->extra_n < MAX_EXTRA)
      set_str(out->extra[out->extra_n++], sizeof out->extra[0], rdma_event_str(x->event));
    rdma_ack_cm_event(x);
  }

done:
  if (have_qp) rdma_destroy_qp(id);
  if (cq) ibv_destroy_cq(cq);
  if (ibpd) ibv_dealloc_pd(ibpd);
  if (id) rdma_destroy_id(id);
  rdma_destroy_event_channel(ec);
  (void)attempt;
}

static void print_hex(const uint8_t *b, int n) {
  for (int i = 0; i < n; ++i) printf("%02x", b[i]);
}

static void print_outcome(const struct options *o, int attempt, const uint8_t *sent, int sent_len,
                          const struct outcome *out) {
  const char *status_name = out->status < 0 ? strerrorname_np(-out->status) : NULL;
  printf("BOUNCER_CLIENT {");
  if (o->tag) printf("\"peer\":\"%s\",", o->tag);
  printf("\"attempt\":%d,\"stage\":\"%s\",\"event\":\"%s\",\"status\":%d,", attempt, out->stage,
         out->event, out->status);
  printf("\"status_name\":\"%s\",", status_name ? status_name : "");
  printf("\"pd_len\":%d,\"pd_hex\":\"", out->pd_len);
  print_hex(out->pd, out->pd_len);
  printf("\",\"sent_len\":%d,\"sent_hex\":\"", sent_len);
  print_hex(sent, sent_len);
  printf("\",\"ms_connect\":%.1f,\"ms_total\":%.1f", out->ms_connect, out->ms_total);
  if (out->then_event[0])
    printf(",\"then\":\"%s\",\"then_status\":%d", out->then_event, out->then_status);
  printf(",\"extra\":[");
  for (int i = 0; i < out->extra_n; ++i) printf("%s\"%s\"", i ? "," : "", out->extra[i]);
  printf("]}\n");
  fflush(stdout);
}

static void on_alarm(int sig) { (void)sig; }

int main(int argc, char **argv) {
  struct options o = {.server = "10.0.0.2",
                      .port = "20049",
                      .attempts = 1,
                      .pd_text = NULL,
                      .pd_hex = NULL,
                      .resolve_ms = 2000,
                      .wait_ms = 15000,
                      .drain_ms = 200,
                      .gap_ms = 0,
                      .resources = 1,
                      .depth = 1,
                      .tag = NULL};
  int c;
  while ((c = getopt(argc, argv, "s:p:n:d:x:t:w:D:g:r:i:T:h")) != -1) {
    int bad = 0;
    switch (c) {
      case 's':
        o.server = optarg;
        break;
      case 'p':
        o.port = optarg;
        break;
      case 'n':
        bad = parse_int(optarg, 1, 100000, &o.attempts);
        break;
      case 'd':
        o.pd_text = optarg;
        break;
      case 'x':
        o.pd_hex = optarg;
        break;
      case 't':
        bad = parse_int(optarg, 1, 600000, &o.resolve_ms);
        break;
      case 'w':
        bad = parse_int(optarg, 1, 600000, &o.wait_ms);
        break;
      case 'D':
        bad = parse_int(optarg, 0, 600000, &o.drain_ms);
        break;
      case 'g':
        bad = parse_int(optarg, 0, 600000, &o.gap_ms);
        break;
      case 'r':
        bad = parse_int(optarg, 0, 255, &o.resources);
        break;
      case 'i':
        bad = parse_int(optarg, 0, 255, &o.depth);
        break;
      case 'T':
        o.tag = optarg;
        bad = !*optarg ||
              strspn(optarg, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_") !=
                  strlen(optarg);
        break;
      case 'h':
        usage(stdout);
        return 0;
      default:
        usage(stderr);
        return 2;
    }
    if (bad) {
      fprintf(stderr, "bouncer_rdma_client: bad value for -%c: %s\n", c, optarg);
      return 2;
    }
  }
  if (optind != argc || (o.pd_text && o.pd_hex)) {
    usage(stderr);
    return 2;
  }
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_alarm; /* no SA_RESTART: a blocked rdma_connect() returns EINTR */
  sigaction(SIGALRM, &sa, NULL);

  struct addrinfo hints, *ai = NULL;
  memset(&hints, 0, sizeof hints);
  hints.ai_family = AF_INET;
  hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
  int gr = getaddrinfo(o.server, o.port, &hints, &ai);
  if (gr) {
    fprintf(stderr, "bouncer_rdma_client: %s:%s: %s\n", o.server, o.port, gai_strerror(gr));
    return 2;
  }

  static const char *names[] = {"RDMA_CM_EVENT_REJECTED",
                                "RDMA_CM_EVENT_ESTABLISHED",
                                "RDMA_CM_EVENT_UNREACHABLE",
                                "RDMA_CM_EVENT_CONNECT_ERROR",
                                "RDMA_CM_EVENT_ADDR_ERROR",
                                "RDMA_CM_EVENT_ROUTE_ERROR",
                                "TIMEOUT",
                                "ERROR"};
  enum { NNAMES = sizeof names / sizeof names[0] };
  int counts[NNAMES + 1] = {0};
  int failed = 0;
  for (int a = 1; a <= o.attempts; ++a) {
    uint8_t pd[MAX_PD];
    int pd_len = make_pd(&o, a, pd);
    if (pd_len < 0) {
      fprintf(stderr, "bouncer_rdma_client: private data longer than %d bytes or bad hex\n",
              MAX_PD);
      freeaddrinfo(ai);
      return 2;
    }
    struct outcome out;
    run_attempt(&o, ai->ai_addr, a, pd, pd_len, &out);
    print_outcome(&o, a, pd, pd_len, &out);
    failed |= out.failed;
    int k = 0;
    while (k < NNAMES && strcmp(names[k], out.event)) ++k;
    ++counts[k];
    if (o.gap_ms && a < o.attempts) {
      struct timespec ts = {o.gap_ms / 1000, (long)(o.gap_ms % 1000) * 1000000L};
      nanosleep(&ts, NULL);
    }
  }
  freeaddrinfo(ai);
  printf("BOUNCER_CLIENT_DONE {");
  if (o.tag) printf("\"peer\":\"%s\",", o.tag);
  printf("\"attempts\":%d,\"events\":{", o.attempts);
  int first = 1;
  for (int k = 0; k <= NNAMES; ++k) {
    if (!counts[k]) continue;
    printf("%s\"%s\":%d", first ? "" : ",", k < NNAMES ? names[k] : "OTHER", counts[k]);
    first = 0;
  }
  printf("}}\n");
  return failed ? 1 : 0;
}
