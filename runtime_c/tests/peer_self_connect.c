/* A connecting np_peer whose attempt connects to itself (tests/native/test_peer_self_connect_s46.py
 * builds and runs this; linked with -Wl,--wrap=connect).
 *
 * When nothing listens at a port of this machine, Linux may give a connect() to it that very port
 * as its source port (it picks source ports from ip_local_port_range, 32768-60999 by default,
 * which holds seed 003's ports): the SYN meets its own socket, a TCP simultaneous open, and the
 * connect succeeds -- to itself.  The wrapper below makes that happen on every attempt made while
 * nothing listens (it binds the socket to the port it connects to first, as the kernel's choice
 * would), so the case runs here every time rather than once in some thousands of attempts.
 *
 * The listener starts 300 ms after np_peer_open and sends b"HELLO".  Expected: np_peer_open
 * takes the listener as its peer (its remote address is not its own) and receives b"HELLO".
 * Before, np_peer_open returned the self-connected socket at once: it held the port (the
 * listener's bind failed, "port in use" for seed 003's worker 0) and heard nothing ("sent
 * nothing for N ms").  Argument: the port.  Exit 0 when right, 1 with a line saying what failed. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
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

/* stubs of what native_peer.c uses from the rest of the host (as tests/peer_fuzz.c's) */
void np_device_note_peer(const char *r, const char *e, int m, int l, const struct timespec *s)
{ (void)r; (void)e; (void)m; (void)l; (void)s; }
double np_profile_start(void) { return 0; }
void np_profile_end(int k, double s) { (void)k; (void)s; }
const char *rt_setting_variable(rt_setting w) { (void)w; return "NATIVE_PEER_TIMEOUT_MS"; }

static int self_binds;            /* attempts given their destination's port as their own */

int __real_connect(int fd, const struct sockaddr *address, socklen_t length);
int __wrap_connect(int fd, const struct sockaddr *address, socklen_t length)
{
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, address, length) == 0)           /* fails once the listener holds the port */
        __atomic_add_fetch(&self_binds, 1, __ATOMIC_SEQ_CST);
    return __real_connect(fd, address, length);
}

static int port;
static int listener_bound = -1;   /* 1: the listener bound the port; 0: it could not */

static void msleep(int ms) { struct timespec t = { ms / 1000, (ms % 1000) * 1000000L }; nanosleep(&t, NULL); }

static void *listener(void *unused)
{
    (void)unused;
    msleep(300);
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
    sa.sin_addr.s_addr = htonl(0x7f000001);
    int fd = -1;
    for (int i = 0; i < 100; i++) {               /* 2 s: an attempt may hold the port for a moment */
        fd = socket(AF_INET, SOCK_STREAM, 0);
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0 && listen(fd, 4) == 0)
            break;
        close(fd);
        fd = -1;
        msleep(20);
    }
    listener_bound = fd >= 0;
    if (fd < 0)
        return NULL;
    struct pollfd p = { fd, POLLIN, 0 };
    int c = poll(&p, 1, 5000) > 0 ? accept(fd, NULL, NULL) : -1;    /* nobody came: the test's failure */
    if (c >= 0) {
        if (send(c, "HELLO", 5, 0) != 5)
            perror("send");
        char b;
        while (recv(c, &b, 1, 0) > 0)
            ;
        close(c);
    }
    close(fd);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return fprintf(stderr, "usage: %s PORT\n", argv[0]), 2;
    port = atoi(argv[1]);
    uint8_t address[16] = { 2, 0, (uint8_t)(port >> 8), (uint8_t)port, 127, 0, 0, 1 };
    pthread_t t;
    pthread_create(&t, NULL, listener, NULL);
    np_peer peer;
    char err[NP_ERR_BYTES];
    int rc = np_peer_open(&peer, address, 0, 5000, err);
    int failed = 0;
    if (rc) {
        printf("np_peer_open failed (%d): %s\n", rc, err);
        failed = 1;
    } else {
        struct sockaddr_in local, remote;
        socklen_t a = sizeof local, b = sizeof remote;
        getsockname(peer.fd, (struct sockaddr *)&local, &a);
        getpeername(peer.fd, (struct sockaddr *)&remote, &b);
        if (local.sin_port == remote.sin_port && local.sin_addr.s_addr == remote.sin_addr.s_addr) {
            printf("np_peer_open returned a socket connected to itself (port %d)\n", ntohs(local.sin_port));
            failed = 1;
        } else {
            uint8_t got[5] = { 0 };
            rc = np_peer_receive(&peer, got, 5, 3000, err);
            if (rc || memcmp(got, "HELLO", 5)) {
                printf("did not receive the listener's HELLO: %s\n", rc ? err : "other bytes");
                failed = 1;
            }
        }
        np_peer_close(&peer);
    }
    pthread_join(t, NULL);
    if (self_binds < 1) {
        printf("no attempt connected to itself: the case was not exercised\n");
        failed = 1;
    }
    if (listener_bound != 1) {
        printf("the listener could not bind port %d (the connecting side held it)\n", port);
        failed = 1;
    }
    if (!failed)
        printf("ok: %d attempts connected to themselves and were dropped; paired with the listener\n", self_binds);
    return failed;
}
