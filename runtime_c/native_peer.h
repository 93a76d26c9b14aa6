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

typedef struct {
    int fd;
    char address[32];     /* "127.0.0.1:5000" */
    uint64_t sent;        /* messages (Sends) completed on this endpoint: a failure names the next one's number */
    uint64_t received;    /* messages (Receives) completed */
} np_peer;

/* "a.b.c.d:port" of a 16-byte sockaddr_in. */
void np_peer_address_text(const uint8_t address[16], char *text, size_t size);

/* listen != 0: bind, listen and accept one peer; else connect (retrying a refused
 * connection) -- both within timeout_ms. */
int np_peer_open(np_peer *peer, const uint8_t address[16], int listen, int timeout_ms, char *err);
int np_peer_send(np_peer *peer, const uint8_t *data, uint64_t bytes, int timeout_ms, char *err);
int np_peer_receive(np_peer *peer, uint8_t *data, uint64_t bytes, int timeout_ms, char *err);
void np_peer_close(np_peer *peer);

#endif
