/* What np_peer_open tells the device session about its connection, at both ends of one pair
 * (tests/native/test_share_group_s46.py builds and runs this).
 *
 * Arguments: the listening endpoint's address, the connecting endpoint's address, the port
 * (e.g. 0.0.0.0 127.0.0.1 47811: worker 0 built to listen on every interface, worker 1 to
 * connect over loopback, on one machine).  Both endpoints run here, each in its own thread;
 * np_device_note_peer is replaced by a recorder.  Prints one line per end:
 *   listening|connecting reached=<a:p> same_machine=<0|1> ends=<this -> peer>
 * and exits 0 when both opened, 1 with a line saying what failed.
 * A fourth argument, an address: a stray connection to it (at the same port) comes first and
 * closes before its first byte; the listener then takes the connecting end as its peer when it
 * receives (accept_again), and its last note must be that connection's.  The connecting end
 * sends one byte, the listener receives it. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <time.h>
#include "host_settings.h"
#include "native_device.h"
#include "native_peer.h"
#include "native_program.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
void np_device_note_peer(const char *reached, const char *ends, int same_machine, int listening,
                         const struct timespec *since)
{
    (void)since;
    pthread_mutex_lock(&lock);
    printf("%s reached=%s same_machine=%d ends=%s\n", listening ? "listening" : "connecting", reached, same_machine,
           ends);
    fflush(stdout);
    pthread_mutex_unlock(&lock);
}
double np_profile_start(void) { return 0; }
void np_profile_end(int k, double s) { (void)k; (void)s; }
const char *rt_setting_variable(rt_setting w) { (void)w; return "NATIVE_PEER_TIMEOUT_MS"; }

static uint8_t addresses[2][16];
static int outcomes[2];
static np_peer peers[2];
static int handshake;             /* a stray came first: the ends exchange one byte */

static void *open_end(void *which)
{
    int k = (int)(long)which;
    char err[NP_ERR_BYTES] = "";
    outcomes[k] = np_peer_open(&peers[k], addresses[k], k == 0, 5000, err);
    if (!outcomes[k] && handshake) {
        uint8_t byte = 7;
        outcomes[k] = k == 0 ? np_peer_receive(&peers[k], &byte, 1, 5000, err)
                             : np_peer_send(&peers[k], &byte, 1, 5000, err);
    }
    if (outcomes[k])
        printf("failed: %s: %s\n", k == 0 ? "listening" : "connecting", err);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 4 && argc != 5)
        return fprintf(stderr, "usage: %s LISTEN-AT CONNECT-TO PORT [STRAY-FROM]\n", argv[0]), 2;
    handshake = argc == 5;
    for (int k = 0; k < 2; k++) {
        struct in_addr a;
        if (inet_pton(AF_INET, argv[1 + k], &a) != 1)
            return fprintf(stderr, "not an IPv4 address: %s\n", argv[1 + k]), 2;
        uint16_t port = htons((uint16_t)atoi(argv[3]));
        addresses[k][0] = AF_INET & 0xff;           /* sockaddr_in's bytes, as the program carries them */
        memcpy(addresses[k] + 2, &port, 2);
        memcpy(addresses[k] + 4, &a, 4);
    }
    pthread_t threads[2];
    pthread_create(&threads[0], NULL, open_end, (void *)0L);
    struct timespec pause = { 0, 100 * 1000 * 1000 };
    nanosleep(&pause, NULL);
    if (handshake) {                              /* the stray: connects and closes at once */
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[3])) };
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        if (inet_pton(AF_INET, argv[4], &sa.sin_addr) != 1 || connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0)
            return printf("failed: the stray could not connect to %s\n", argv[4]), 1;
        close(fd);
        nanosleep(&pause, NULL);
    }
    pthread_create(&threads[1], NULL, open_end, (void *)1L);
    pthread_join(threads[0], NULL);
    pthread_join(threads[1], NULL);
    return outcomes[0] || outcomes[1];
}
