/* TCP endpoints for native programs (Connect, Send, Receive; docs/native-host.md).
 * Every call that fails returns status 5 (a peer problem) with one message
 * naming the peer's address and what to do.  The Python twin:
 * compiler/bobc/reference/native_program.py (same messages). */
#ifndef RT_NATIVE_PEER_H
#define RT_NATIVE_PEER_H

#include <stddef.h>
#include <stdint.h>

#define NP_STATUS_PEER 5
#define NP_PEER_TIMEOUT_MS 10000
/* the most a listening endpoint keeps of what it sent before its peer's first byte (np_peer) */
#define NP_PEER_REPLAY_BYTES (64u << 10)

typedef struct {
    int fd;
    char address[32];     /* "127.0.0.1:5000": the endpoint's own (where it listens, or connects to) */
    char remote[32];      /* the peer's, as messages name it: where the accepted connection came from */
    uint64_t sent;        /* messages (Sends) completed on this endpoint: a failure names the next one's number */
    uint64_t received;    /* messages (Receives) completed */
    /* A listening endpoint until the first byte arrives: a connection that closes before sending
     * one (a port probe, a health check) is not a peer, so what was sent on it is kept, and the
     * endpoint listens again and accepts another connection (sent the same bytes) until the
     * open's deadline. */
    int unconfirmed;      /* 1: listening side, no byte received yet */
    uint8_t socket_address[16];
    double deadline;      /* the open's (CLOCK_MONOTONIC ms) */
    int timeout_ms;       /* the open's */
    uint8_t *replay;      /* what was sent before the first byte arrived */
    uint64_t replay_bytes;
    char stray[32];       /* the last connection that closed before its first byte, "" if none */
    int connecting;       /* 1: this endpoint connected (0: it listened) */
    int listen_fd;        /* while unconfirmed: the listening socket, kept open so that a connection
                           * queued behind one that turns out not to be the peer is accepted next
                           * rather than reset; -1 once the peer is confirmed (or on a connecting side) */
} np_peer;

/* "a.b.c.d:port" of a 16-byte sockaddr_in. */
void np_peer_address_text(const uint8_t address[16], char *text, size_t size);

/* listen != 0: bind, listen and accept one peer; else connect (retrying a refused
 * connection) -- both within timeout_ms.  Send and Receive fail when the peer takes or
 * sends nothing for timeout_ms (a limit on silence: each byte that moves restarts it). */
int np_peer_open(np_peer *peer, const uint8_t address[16], int listen, int timeout_ms, char *err);
int np_peer_send(np_peer *peer, const uint8_t *data, uint64_t bytes, int timeout_ms, char *err);
int np_peer_receive(np_peer *peer, uint8_t *data, uint64_t bytes, int timeout_ms, char *err);
void np_peer_close(np_peer *peer);

#endif
