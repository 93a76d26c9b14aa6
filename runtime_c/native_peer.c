/* See native_peer.h. */
#define _GNU_SOURCE
#include "native_peer.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "host_settings.h"
#include "native_device.h"
#include "native_program.h"

static int say(char *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int say(char *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, NP_ERR_BYTES, fmt, ap);
    va_end(ap);
    return NP_STATUS_PEER;
}

/* What to do when a peer closed the connection mid-exchange: it failed or was stopped, and says why. */
#define NP_PEER_CLOSED_HINT "the other peer stopped: see its messages for why, then start both again"
/* The same, for a connecting endpoint whose listener closed before sending a byte on it: the listener
 * may have taken another connection as its peer (this peer started twice: the listening side keeps
 * its socket open until its peer's first byte, so a second copy waits queued, and is reset when
 * the first is confirmed). */
#define NP_PEER_CLOSED_UNHEARD_HINT "the other peer stopped before it sent anything, or it took another " \
    "connection as its peer (a second copy of this peer, started against it: the first trains on); see its " \
    "messages for why, then start both again"

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int left_ms(double deadline)
{
    double left = deadline - now_ms();
    return left <= 0 ? 0 : (int)(left + 1);
}

void np_peer_address_text(const uint8_t a[16], char *text, size_t size)
{
    snprintf(text, size, "%u.%u.%u.%u:%u", a[4], a[5], a[6], a[7], (unsigned)a[2] << 8 | a[3]);
}

static void nodelay(int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

/* What a listening endpoint says when no peer came within its limit. */
static int nobody_came(np_peer *peer, char *err)
{
    if (peer->stray[0])
        return say(err, "no peer connected to %s within %d ms (a connection from %s closed before sending a byte, so it "
                   "was not taken as the peer; the other peer was not started, or it stopped before connecting: see its "
                   "messages); start it (or raise %s)", peer->address, peer->timeout_ms, peer->stray,
                   rt_setting_variable(RT_SETTING_PEER_TIMEOUT));
    return say(err, "no peer connected to %s within %d ms (the other peer was not started, or it stopped "
               "before connecting: see its messages); start it (or raise %s)",
               peer->address, peer->timeout_ms, rt_setting_variable(RT_SETTING_PEER_TIMEOUT));
}

/* The listening socket is no longer needed: the peer is confirmed (or the endpoint gave up). */
static void stop_listening(np_peer *peer)
{
    if (peer->listen_fd >= 0)
        close(peer->listen_fd);
    peer->listen_fd = -1;
}

/* Listen at the endpoint's address (once: the socket stays open until the peer is confirmed, so
 * that connections queued meanwhile wait there rather than being reset) and accept one connection
 * by the open's deadline: its socket in peer->fd, where it came from in peer->remote. */
static int listen_and_accept(np_peer *peer, char *err)
{
    if (peer->listen_fd < 0) {
        struct sockaddr_in sa;
        memset(&sa, 0, sizeof sa);
        sa.sin_family = AF_INET;
        memcpy(&sa.sin_port, peer->socket_address + 2, 2);
        memcpy(&sa.sin_addr, peer->socket_address + 4, 4);
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
            return say(err, "cannot create a socket to listen at %s: %s", peer->address, strerror(errno));
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
            int e = errno;
            close(fd);
            if (e == EADDRINUSE)
                return say(err, "port in use: cannot listen at %s (another process holds it); stop it, or rebuild both "
                           "peers with another port (the port is built into both hosts)", peer->address);
            return say(err, "cannot listen at %s: %s; give the pair an address of this machine", peer->address,
                       strerror(e));
        }
        if (listen(fd, 1) != 0) {
            int e = errno;
            close(fd);
            return say(err, "cannot listen at %s: %s", peer->address, strerror(e));
        }
        peer->listen_fd = fd;
    }
    struct pollfd p = { peer->listen_fd, POLLIN, 0 };
    int r;
    do
        r = poll(&p, 1, left_ms(peer->deadline));
    while (r < 0 && errno == EINTR);
    if (r <= 0) {
        stop_listening(peer);
        return nobody_came(peer, err);
    }
    struct sockaddr_in from;
    socklen_t length = sizeof from;
    int c = accept4(peer->listen_fd, (struct sockaddr *)&from, &length, SOCK_CLOEXEC);
    if (c < 0) {
        int e = errno;
        stop_listening(peer);
        return say(err, "accepting a peer at %s failed: %s", peer->address, strerror(e));
    }
    nodelay(c);
    peer->fd = c;
    char host[INET_ADDRSTRLEN] = "?";
    inet_ntop(AF_INET, &from.sin_addr, host, sizeof host);
    snprintf(peer->remote, sizeof peer->remote, "%s:%u", host, (unsigned)ntohs(from.sin_port));
    return 0;
}

/* The connection is the peer (its first byte came, or what was sent on it outgrew the replay):
 * what was kept for another is not needed, nor the listening socket. */
static void confirm(np_peer *peer)
{
    peer->unconfirmed = 0;
    free(peer->replay);
    peer->replay = NULL;
    peer->replay_bytes = 0;
    stop_listening(peer);
}

static int send_bytes(np_peer *peer, const uint8_t *data, uint64_t bytes, int timeout_ms, char *err, int *closed);
static void note_connection(const np_peer *peer, int listening, const struct timespec *since);

/* The connection closed before its first byte: not a peer.  Accept another (one queued meanwhile
 * first) by the open's deadline and send it what was sent on the one that closed. */
static int accept_again(np_peer *peer, int timeout_ms, char *err)
{
    snprintf(peer->stray, sizeof peer->stray, "%s", peer->remote);
    for (;;) {
        close(peer->fd);
        peer->fd = -1;
        int rc = listen_and_accept(peer, err);
        if (rc)
            return rc;
        struct timespec begun;            /* the device session's note follows the connection taken */
        clock_gettime(CLOCK_REALTIME_COARSE, &begun);
        note_connection(peer, 1, &begun);
        int closed = 0;
        rc = send_bytes(peer, peer->replay, peer->replay_bytes, timeout_ms, err, &closed);
        if (!rc)
            return 0;
        if (!closed)
            return rc;
        snprintf(peer->stray, sizeof peer->stray, "%s", peer->remote);
    }
}

/* The device session's note of the connection on peer->fd, read from the socket (np_device_note_peer):
 * the address:port it reached (this end's own when it listened, the remote one when it connected: one
 * text at both ends, whatever address either was built with -- 0.0.0.0, 127.x, this machine's own)
 * and whether the two ends are on this machine (one address, or loopback ones). */
static void note_connection(const np_peer *peer, int listening, const struct timespec *since)
{
    struct sockaddr_in local, remote;
    socklen_t a = sizeof local, b = sizeof remote;
    if (getsockname(peer->fd, (struct sockaddr *)&local, &a) != 0 ||
        getpeername(peer->fd, (struct sockaddr *)&remote, &b) != 0 || local.sin_family != AF_INET) {
        np_device_note_peer(peer->address, peer->address, 0, listening, since);
        return;
    }
    char here[INET_ADDRSTRLEN] = "?", there[INET_ADDRSTRLEN] = "?", reached[32], ends[80];
    inet_ntop(AF_INET, &local.sin_addr, here, sizeof here);
    inet_ntop(AF_INET, &remote.sin_addr, there, sizeof there);
    const struct sockaddr_in *to = listening ? &local : &remote;
    snprintf(reached, sizeof reached, "%s:%u", listening ? here : there, (unsigned)ntohs(to->sin_port));
    snprintf(ends, sizeof ends, "%s -> %s", here, there);
    int same = local.sin_addr.s_addr == remote.sin_addr.s_addr || (ntohl(local.sin_addr.s_addr) >> 24) == 127 ||
               (ntohl(remote.sin_addr.s_addr) >> 24) == 127;
    np_device_note_peer(reached, ends, same, listening, since);
}

/* A connected socket whose own address is its remote one: it connected to itself (a connect to
 * a port of this machine where nothing listens, given that port as its source port: Linux
 * picks source ports from ip_local_port_range, which may hold the pair's port). */
static int connected_to_itself(int fd)
{
    struct sockaddr_in local, remote;
    socklen_t a = sizeof local, b = sizeof remote;
    if (getsockname(fd, (struct sockaddr *)&local, &a) != 0 || getpeername(fd, (struct sockaddr *)&remote, &b) != 0)
        return 0;
    return local.sin_port == remote.sin_port && local.sin_addr.s_addr == remote.sin_addr.s_addr;
}

int np_peer_open(np_peer *peer, const uint8_t address[16], int listen_, int timeout_ms, char *err)
{
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    memcpy(&sa.sin_port, address + 2, 2);
    memcpy(&sa.sin_addr, address + 4, 4);
    np_peer_address_text(address, peer->address, sizeof peer->address);
    snprintf(peer->remote, sizeof peer->remote, "%s", peer->address);
    memcpy(peer->socket_address, address, 16);
    peer->fd = -1;
    peer->sent = peer->received = 0;
    peer->unconfirmed = 0;
    peer->replay = NULL;
    peer->replay_bytes = 0;
    peer->stray[0] = 0;
    peer->listen_fd = -1;
    peer->connecting = !listen_;
    peer->timeout_ms = timeout_ms;
    double deadline = now_ms() + timeout_ms;
    peer->deadline = deadline;
    struct timespec begun;                /* for the device session: see np_device_note_peer */
    clock_gettime(CLOCK_REALTIME_COARSE, &begun);
    if (listen_) {
        int rc = listen_and_accept(peer, err);
        if (rc)
            return rc;
        peer->unconfirmed = 1;
        note_connection(peer, 1, &begun);
        return 0;
    }
    int answered = 0;                     /* an attempt was refused: the address answers, nothing listens */
    for (;;) {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
            return say(err, "cannot create a socket to connect to %s: %s", peer->address, strerror(errno));
        int r = connect(fd, (struct sockaddr *)&sa, sizeof sa);
        int e = r == 0 ? 0 : errno;
        if (e == EINPROGRESS) {
            struct pollfd p = { fd, POLLOUT, 0 };
            do
                r = poll(&p, 1, left_ms(deadline));
            while (r < 0 && errno == EINTR);
            if (r <= 0) {
                close(fd);
                break;
            }
            socklen_t len = sizeof e;
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &len);
        }
        if (e == 0 && connected_to_itself(fd)) {
            /* Nothing listened, and the kernel gave this attempt the port it was connecting to
             * as its own: a TCP simultaneous open of the socket with itself, which "succeeds".
             * It is not the peer (it would hear nothing, and hold the port the peer listens
             * at): drop it (a reset, no TIME_WAIT left on the port) and try again, as for a
             * refused attempt. */
            struct linger reset = { 1, 0 };
            setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
            e = ECONNREFUSED;
        }
        if (e == 0) {
            int flags = fcntl(fd, F_GETFL);
            fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
            nodelay(fd);
            peer->fd = fd;
            note_connection(peer, 0, &begun);
            return 0;
        }
        close(fd);
        if (e == EHOSTUNREACH || e == ENETUNREACH)
            return say(err, "cannot connect to %s: %s (that address cannot be reached from here); check the pair's "
                       "address and the network", peer->address, strerror(e));
        if (e != ECONNREFUSED && e != ECONNRESET && e != ETIMEDOUT && e != EAGAIN)
            return say(err, "cannot connect to %s: %s", peer->address, strerror(e));
        if (e != ETIMEDOUT)
            answered = 1;
        if (left_ms(deadline) == 0)
            break;
        struct timespec pause = { 0, 20 * 1000 * 1000 };
        nanosleep(&pause, NULL);
    }
    if (!answered)
        return say(err, "could not connect to %s within %d ms (no answer from that address: a machine that is down "
                   "or cannot be reached); check the pair's address and the network (or raise %s)", peer->address,
                   timeout_ms, rt_setting_variable(RT_SETTING_PEER_TIMEOUT));
    if (!(address[4] | address[5] | address[6] | address[7]))   /* INADDR_ANY: Linux connects it to this machine */
        return say(err, "could not connect to %s within %d ms (nothing listens there on this machine: 0.0.0.0 is a "
                   "listening address, and connecting to it reaches this machine only; for a peer on another machine, "
                   "build this one with that machine's address, else start the other peer here) (or raise %s)",
                   peer->address, timeout_ms, rt_setting_variable(RT_SETTING_PEER_TIMEOUT));
    return say(err, "could not connect to %s within %d ms (nothing listens there: the other peer was not started, "
               "it stopped before listening, or it is paired with another peer already: see its messages); start it "
               "(or raise %s)", peer->address, timeout_ms, rt_setting_variable(RT_SETTING_PEER_TIMEOUT));
}

static int send_all(np_peer *peer, const uint8_t *data, uint64_t bytes, int timeout_ms, char *err);
static int receive_all(np_peer *peer, uint8_t *data, uint64_t bytes, int timeout_ms, char *err);

int np_peer_send(np_peer *peer, const uint8_t *data, uint64_t bytes, int timeout_ms, char *err)
{
    double started = np_profile_start();
    int rc = send_all(peer, data, bytes, timeout_ms, err);
    if (!rc) {
        np_profile_end(NP_PROFILE_SEND, started);
        peer->sent++;
    }
    return rc;
}

int np_peer_receive(np_peer *peer, uint8_t *data, uint64_t bytes, int timeout_ms, char *err)
{
    double started = np_profile_start();
    int rc = receive_all(peer, data, bytes, timeout_ms, err);
    if (!rc) {
        np_profile_end(NP_PROFILE_RECEIVE, started);
        peer->received++;
    }
    return rc;
}

/* `bytes` sent; a peer that takes nothing for timeout_ms fails (each byte taken restarts the
 * limit).  *closed: the connection closed or was reset (the message says so). */
static int send_bytes(np_peer *peer, const uint8_t *data, uint64_t bytes, int timeout_ms, char *err, int *closed)
{
    double deadline = now_ms() + timeout_ms;
    uint64_t sent = 0;
    *closed = 0;
    while (sent < bytes) {
        struct pollfd p = { peer->fd, POLLOUT, 0 };
        int r = poll(&p, 1, left_ms(deadline));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return say(err, "peer %s took nothing for %d ms (%llu of %llu bytes sent)", peer->remote, timeout_ms,
                       (unsigned long long)sent, (unsigned long long)bytes);
        ssize_t n = send(peer->fd, data + sent, bytes - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n <= 0) {
            *closed = 1;
            return say(err, "peer %s closed the connection at message %llu to it (%llu of %llu bytes sent); %s",
                       peer->remote, (unsigned long long)peer->sent + 1, (unsigned long long)sent,
                       (unsigned long long)bytes, NP_PEER_CLOSED_HINT);
        }
        sent += (uint64_t)n;
        deadline = now_ms() + timeout_ms;
    }
    return 0;
}

/* What a listening endpoint sends before its peer's first byte is kept (np_peer), up to
 * NP_PEER_REPLAY_BYTES; past that it takes the connection it has as the peer. */
static void keep_for_replay(np_peer *peer, const uint8_t *data, uint64_t bytes)
{
    if (!peer->unconfirmed)
        return;
    uint8_t *grown = peer->replay_bytes + bytes <= NP_PEER_REPLAY_BYTES
        ? realloc(peer->replay, peer->replay_bytes + bytes ? peer->replay_bytes + bytes : 1) : NULL;
    if (!grown) {
        confirm(peer);
        return;
    }
    memcpy(grown + peer->replay_bytes, data, bytes);
    peer->replay = grown;
    peer->replay_bytes += bytes;
}

static int send_all(np_peer *peer, const uint8_t *data, uint64_t bytes, int timeout_ms, char *err)
{
    keep_for_replay(peer, data, bytes);
    int closed = 0;
    int rc = send_bytes(peer, data, bytes, timeout_ms, err, &closed);
    if (rc && closed && peer->unconfirmed)
        return accept_again(peer, timeout_ms, err);     /* it sends this message too */
    return rc;
}

/* A listening endpoint's connection has sent nothing yet: is another connection waiting behind it? */
static int another_waits(const np_peer *peer)
{
    if (peer->listen_fd < 0)
        return 0;
    struct pollfd p = { peer->listen_fd, POLLIN, 0 };
    return poll(&p, 1, 0) > 0;
}

static int receive_all(np_peer *peer, uint8_t *data, uint64_t bytes, int timeout_ms, char *err)
{
    double deadline = now_ms() + timeout_ms;
    /* An unconfirmed connection silent for half the limit while another waits behind it (a health
     * check or scanner holding its connection open ahead of the real peer, which receives first
     * and so sends nothing until it hears from us) is not the peer: the waiting one is tried. */
    double halfway = now_ms() + timeout_ms / 2.0;
    uint64_t got = 0;
    while (got < bytes) {
        int silent_stray = peer->unconfirmed && !got;
        struct pollfd p = { peer->fd, POLLIN, 0 };
        int r = poll(&p, 1, left_ms(silent_stray && halfway < deadline ? halfway : deadline));
        if (r < 0 && errno == EINTR)
            continue;
        if (r == 0 && silent_stray && another_waits(peer)) {
            int rc = accept_again(peer, timeout_ms, err);
            if (rc)
                return rc;
            deadline = now_ms() + timeout_ms;
            halfway = now_ms() + timeout_ms / 2.0;
            continue;
        }
        if (r == 0 && silent_stray && now_ms() < deadline) {
            halfway = deadline;               /* nobody waits yet: looked at again at the limit */
            continue;
        }
        if (r <= 0 && got)
            return say(err, "peer %s stopped partway through its message %llu (%llu of its %llu bytes received, then "
                       "nothing for %d ms): it hangs or stopped, see its messages", peer->remote,
                       (unsigned long long)peer->received + 1, (unsigned long long)got, (unsigned long long)bytes,
                       timeout_ms);
        if (r <= 0)
            return say(err, "peer %s sent nothing for %d ms (%llu of %llu bytes received): it hangs or stopped, see its messages",
                       peer->remote, timeout_ms, (unsigned long long)got, (unsigned long long)bytes);
        ssize_t n = recv(peer->fd, data + got, bytes - got, MSG_DONTWAIT);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n <= 0 && peer->unconfirmed) {          /* closed before its first byte: not a peer */
            int rc = accept_again(peer, timeout_ms, err);
            if (rc)
                return rc;
            deadline = now_ms() + timeout_ms;
            continue;
        }
        if (n <= 0)
            return say(err, "peer %s closed the connection at message %llu from it (%llu of %llu bytes received); %s",
                       peer->remote, (unsigned long long)peer->received + 1, (unsigned long long)got,
                       (unsigned long long)bytes,
                       peer->connecting && !peer->received && !got ? NP_PEER_CLOSED_UNHEARD_HINT : NP_PEER_CLOSED_HINT);
        if (peer->unconfirmed)                      /* the peer */
            confirm(peer);
        got += (uint64_t)n;
        deadline = now_ms() + timeout_ms;
    }
    return 0;
}

void np_peer_close(np_peer *peer)
{
    if (peer->fd >= 0)
        close(peer->fd);
    peer->fd = -1;
    confirm(peer);
}
