/* Loop-driven fuzz of native_peer.c (make -C runtime_c fuzz-peer, built with ASan and UBSan):
 * each iteration a real np_peer, listening or connecting on 127.0.0.1, against an adversary
 * thread doing random things on its socket (random bytes in random sizes, 1-byte trickles,
 * delays, half-close, reset, closing before its first byte, reconnecting), the np_peer doing a
 * random sequence of Sends and Receives of up to 200 KB.  Checked: every call returns 0 or
 * status 5, a failure's message names the peer's address, and no call outlasts its limits.
 * Arguments: iterations (200), first seed (1). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "host_settings.h"
#include "native_device.h"
#include "native_peer.h"
#include "native_program.h"

/* stubs of what native_peer.c uses from the rest of the host */
void np_device_note_peer(const char *r, const char *e, int m, int l, const struct timespec *s)
{ (void)r; (void)e; (void)m; (void)l; (void)s; }
double np_profile_start(void) { return 0; }
void np_profile_end(int k, double s) { (void)k; (void)s; }
const char *rt_setting_variable(rt_setting w) { (void)w; return "NATIVE_PEER_TIMEOUT_MS"; }

static unsigned rnd(unsigned *s) { *s = *s * 1103515245u + 12345u; return (*s >> 8) & 0xffffff; }

typedef struct { unsigned seed; int port; int listen_side; } job;

static void msleep(int ms) { struct timespec t = { ms / 1000, (ms % 1000) * 1000000L }; nanosleep(&t, NULL); }

static int adv_socket(job *j, int *lfd)
{
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(j->port) };
    sa.sin_addr.s_addr = htonl(0x7f000001);
    if (j->listen_side) {          /* the np_peer listens: the adversary connects */
        for (int i = 0; i < 200; i++) {
            int fd = socket(AF_INET, SOCK_STREAM, 0);
            if (connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0)
                return fd;
            close(fd);
            msleep(5);
        }
        return -1;
    }
    if (*lfd < 0) {
        *lfd = socket(AF_INET, SOCK_STREAM, 0);
        int one = 1;
        setsockopt(*lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(*lfd, (struct sockaddr *)&sa, sizeof sa) || listen(*lfd, 4))
            return -1;
    }
    struct pollfd p = { *lfd, POLLIN, 0 };
    if (poll(&p, 1, 800) <= 0)
        return -1;
    return accept(*lfd, NULL, NULL);
}

static void *adversary(void *arg)
{
    job *j = arg;
    unsigned s = j->seed ^ 0x9e3779b9u;
    int lfd = -1;
    int rounds = 1 + rnd(&s) % 3;
    for (int r = 0; r < rounds; r++) {
        int fd = adv_socket(j, &lfd);
        if (fd < 0)
            break;
        int actions = rnd(&s) % 8;
        uint8_t buf[4096];
        for (int a = 0; a < actions; a++) {
            switch (rnd(&s) % 7) {
            case 0: case 1: { size_t n = rnd(&s) % 200; for (size_t i = 0; i < n; i++) buf[i] = rnd(&s);
                              send(fd, buf, n, MSG_NOSIGNAL); break; }
            case 2: recv(fd, buf, rnd(&s) % sizeof buf, MSG_DONTWAIT); break;
            case 3: msleep(rnd(&s) % 60); break;
            case 4: shutdown(fd, SHUT_WR); break;
            case 5: { struct linger l = { 1, 0 }; setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l); close(fd); fd = -1;
                      a = actions; break; }
            case 6: { for (int i = 0; i < 30; i++) { buf[0] = rnd(&s); send(fd, buf, 1, MSG_NOSIGNAL); } break; }
            }
        }
        if (fd >= 0) {
            if (rnd(&s) % 2)
                msleep(rnd(&s) % 150);
            close(fd);
        }
        if (lfd >= 0 && rnd(&s) % 2) { close(lfd); lfd = -1; }
    }
    if (lfd >= 0)
        close(lfd);
    return NULL;
}

/* a port nothing listens at now (the kernel's pick), so the fuzz stays off other programs' ports */
static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = { .sin_family = AF_INET };
    sa.sin_addr.s_addr = htonl(0x7f000001);
    socklen_t length = sizeof sa;
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) || getsockname(fd, (struct sockaddr *)&sa, &length)) {
        perror("peer_fuzz: a free port");
        exit(2);
    }
    close(fd);
    return ntohs(sa.sin_port);
}

int main(int argc, char **argv)
{
    int iterations = argc > 1 ? atoi(argv[1]) : 200;
    unsigned base = argc > 2 ? (unsigned)atoi(argv[2]) : 1;
    int bad = 0;
    setvbuf(stdout, NULL, _IOLBF, 0);
    for (int it = 0; it < iterations; it++) {
        job j = { base + it, free_port(), (int)((base + it) % 2) };
        unsigned s = j.seed;
        pthread_t t;
        pthread_create(&t, NULL, adversary, &j);
        uint8_t address[16] = { 2, 0, (uint8_t)(j.port >> 8), (uint8_t)j.port, 127, 0, 0, 1 };
        np_peer peer;
        char err[NP_ERR_BYTES] = "";
        int timeout = 100 + rnd(&s) % 200;
        struct timespec t0; clock_gettime(CLOCK_MONOTONIC, &t0);
        int rc = np_peer_open(&peer, address, j.listen_side, timeout, err);
        int ops = rnd(&s) % 6;
        uint8_t data[200000];
        for (int o = 0; !rc && o < ops; o++) {
            uint64_t n = rnd(&s) % 3 == 0 ? rnd(&s) % sizeof data : rnd(&s) % 64;
            for (uint64_t i = 0; i < n && i < 64; i++) data[i] = rnd(&s);
            rc = rnd(&s) % 2 ? np_peer_send(&peer, data, n, timeout, err) : np_peer_receive(&peer, data, n, timeout, err);
        }
        struct timespec t1; clock_gettime(CLOCK_MONOTONIC, &t1);
        double took = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
        if (rc != 0 && rc != NP_STATUS_PEER) { printf("seed %u: rc %d\n", j.seed, rc); bad++; }
        if (rc && (!err[0] || (!strstr(err, peer.address) && !strstr(err, peer.remote)))) {
            printf("seed %u: message names no peer: %s\n", j.seed, err); bad++;
        }
        if (took > 4.0 * timeout + 200 * 7) { printf("seed %u: took %.0f ms (timeout %d): %s\n", j.seed, took, timeout, err); bad++; }
        if (getenv("FZ_VERBOSE")) printf("seed %u listen %d rc %d %.0fms %s\n", j.seed, j.listen_side, rc, took, err);
        np_peer_close(&peer);
        pthread_join(t, NULL);
    }
    printf("%d iterations, %d bad\n", iterations, bad);
    return bad != 0;
}
