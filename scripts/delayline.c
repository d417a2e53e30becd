#define _GNU_SOURCE
// A delay line between two TUN devices, for a long path on a kernel without netem: every IP
// packet read from one device is written to the other DELAY_US later, in order, each direction
// alike. It carries about 1 Gbit/s of 9000-byte packets on this 2-core machine (above that it
// falls behind): put a tbf below that in front of it. Stops on SIGINT/SIGTERM. Used by
// scripts/real_ramp.py, which builds it.
// usage: delayline TUN_A TUN_B DELAY_US [RATE_BPS LIMIT_BYTES]   (creates both devices; the
// caller moves one away)
// With RATE_BPS and LIMIT_BYTES, packets from TUN_A to TUN_B also pass a bottleneck before the
// delay: a FIFO served at RATE_BPS (bits of IP packet per second) holding at most LIMIT_BYTES,
// tail-dropping beyond (a switch port's buffer). A tbf on the sender's own device is no such
// port: TCP Small Queues (tcp_small_queue_check(), net/ipv4/tcp_output.c) hold each socket's
// bytes in the local qdisc to about two skbs, so it never fills; tun_net_xmit() orphans each skb
// (drivers/net/tun.c), so bytes queued here no longer count against the sender.
#include <errno.h>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

// Packets held per direction: 1 Gbit/s x 75 ms of 9000-byte packets is ~1,040.
#define SLOTS (1 << 14)
#define MAXPKT 9100
struct slot { long long due; int len; unsigned char data[MAXPKT]; };
struct ring { struct slot *s; unsigned head, tail; long long dropped; };
// The bottleneck on A -> B: when its queue is empty again, and what it dropped.
static long long rate_bps, limit_bytes, busy_until, bottleneck_drops, bottleneck_max_backlog;
static volatile sig_atomic_t stop;
static void on_sig(int s) { (void)s; stop = 1; }
static long long now_ns(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1000000000LL + t.tv_nsec; }
static int tun(const char *name) {
  int fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK);
  if (fd < 0) { perror("open /dev/net/tun"); exit(1); }
  struct ifreq ifr; memset(&ifr, 0, sizeof ifr);
  ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
  strncpy(ifr.ifr_name, name, IFNAMSIZ - 1);
  if (ioctl(fd, TUNSETIFF, &ifr) < 0) { perror("TUNSETIFF"); exit(1); }
  return fd;
}
int main(int argc, char **argv) {
  if (argc != 4 && argc != 6) {
    fprintf(stderr, "usage: %s TUN_A TUN_B DELAY_US [RATE_BPS LIMIT_BYTES]\n", argv[0]); return 2; }
  if (argc == 6) {
    rate_bps = atoll(argv[4]); limit_bytes = atoll(argv[5]);
    if (rate_bps <= 0 || limit_bytes <= 0) {
      fprintf(stderr, "RATE_BPS and LIMIT_BYTES must be positive, got %s and %s\n", argv[4], argv[5]); return 2; }
  }
  int fd[2] = { tun(argv[1]), tun(argv[2]) };
  long long delay = atoll(argv[3]) * 1000LL;
  struct ring r[2];
  for (int i = 0; i < 2; i++) { r[i].s = calloc(SLOTS, sizeof(struct slot)); r[i].head = r[i].tail = 0; r[i].dropped = 0;
    if (!r[i].s) { perror("calloc"); return 1; } }
  signal(SIGINT, on_sig); signal(SIGTERM, on_sig);
  printf("ready\n"); fflush(stdout);
  while (!stop) {
    long long t = now_ns(), next = t + 1000000;  // at most 1 ms between checks
    for (int d = 0; d < 2; d++) {  // ring d: read from fd[d], written to fd[1-d]
      struct ring *q = &r[d];
      while (q->head != q->tail && q->s[q->tail % SLOTS].due <= t) {
        struct slot *s = &q->s[q->tail % SLOTS];
        if (write(fd[1 - d], s->data, s->len) < 0 && errno != EAGAIN) { perror("write"); }
        q->tail++;
      }
      if (q->head != q->tail && q->s[q->tail % SLOTS].due < next) next = q->s[q->tail % SLOTS].due;
    }
    struct pollfd p[2] = { { fd[0], POLLIN, 0 }, { fd[1], POLLIN, 0 } };
    long long wait = next - now_ns();
    struct timespec ts = { wait > 0 ? wait / 1000000000LL : 0, wait > 0 ? wait % 1000000000LL : 0 };
    if (ppoll(p, 2, &ts, NULL) < 0) { if (errno == EINTR) continue; perror("ppoll"); return 1; }
    for (int d = 0; d < 2; d++) {
      if (!(p[d].revents & POLLIN)) continue;
      for (int k = 0; k < 256; k++) {
        struct ring *q = &r[d];
        if (q->head - q->tail >= SLOTS) { unsigned char junk[MAXPKT]; if (read(fd[d], junk, MAXPKT) < 0) break; q->dropped++; continue; }
        struct slot *s = &q->s[q->head % SLOTS];
        int n = read(fd[d], s->data, MAXPKT);
        if (n <= 0) break;
        long long arrive = now_ns();
        if (d == 0 && rate_bps) {  // serialise behind what is queued, or drop if it is full
          long long start = busy_until > arrive ? busy_until : arrive;
          long long backlog = (long long)((__int128)(start - arrive) * rate_bps / 8000000000LL);
          if (backlog + n > limit_bytes) { bottleneck_drops++; continue; }
          if (backlog + n > bottleneck_max_backlog) bottleneck_max_backlog = backlog + n;
          busy_until = start + (long long)n * 8000000000LL / rate_bps;
          arrive = busy_until;
        }
        s->len = n; s->due = arrive + delay; q->head++;
      }
    }
  }
  fprintf(stderr, "dropped (ring full): %lld, %lld\n", r[0].dropped, r[1].dropped);
  if (rate_bps) fprintf(stderr, "bottleneck: %lld dropped, peak backlog %lld bytes\n", bottleneck_drops,
                        bottleneck_max_backlog);
  return 0;
}
