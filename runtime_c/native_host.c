/* The native physical program host: a static interpreter that finds its program
 * at the end of its own file and carries it out (docs/native-host.md).
 *
 * Its file is the interpreter, then the program's trailer, optionally wrapped as a
 * Runtime.NativePhysicalEmbeddedArtifact (device images appended, footer "NPEMBED1"):
 *
 *   interpreter ELF | program bytes | target name (16) | CRC-32 (4) | length (8) | "NPHYPRG1"
 *   [ | components (kind 4, identity 64, length 8, bytes)... | host header (kind 0, identity,
 *     length) | "NPEMBED1" | offset of the components (8) ]
 *
 * The Python twin (same meaning, same messages): compiler/bobc/reference/native_program.py. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include "diag_file.h"
#include "elf_sections.h"
#include "host_io.h"
#include "host_runtime.h"
#include "host_settings.h"
#include "host_version.h"
#include "launch_rows.h"
#include "native_device.h"
#include "native_machine.h"
#include "native_peer.h"
#include "native_program.h"
#include "native_request.h"

enum {
    NP_EXIT_INTERNAL = 1,
    NP_EXIT_FILE = 2,        /* ReadFile: missing, unreadable or not exactly its size; usage */
    NP_EXIT_DEVICE = 3,      /* no GPU with the UUID, bring-up or mapping refused, no session */
    NP_EXIT_WAIT = 4,        /* WaitMapped or a submission timed out, GPU fault */
    NP_EXIT_PEER = 5,        /* Connect, Send, Receive */
    NP_EXIT_WRITE = 8,       /* an output could not be published (nothing was) */
    NP_EXIT_DAMAGED = 9,     /* the host file itself: footer, trailer, CRC, program bytes */
    NP_EXIT_FAULT = 10,      /* a command names memory or an endpoint it may not */
};

#define TRAILER_MAGIC "NPHYPRG1"
#define TRAILER_BYTES 36
#define EMBED_MAGIC "NPEMBED1"
#define EMBED_HEADER_BYTES 76     /* kind 4, identity 64, length 8 */
#define EMBED_FOOTER_BYTES (EMBED_HEADER_BYTES + 16)
#define MAX_PEERS 16

static uint64_t le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* ---- the host's own file ---- */

typedef struct {
    uint8_t *file;
    size_t file_size;
    size_t host_size;            /* the host part (the whole file when not wrapped) */
    int components;              /* embedded device images (0 when not wrapped) */
    const uint8_t *component[5]; /* by kind 1..4: its bytes and length (LoadEmbedded) */
    uint64_t component_length[5];
    char target[17];
    const uint8_t *program;
    uint64_t program_size;
} np_self;

static int damaged(char *err, const char *path, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int damaged(char *err, const char *path, const char *fmt, ...)
{
    char what[NP_ERR_BYTES / 2];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(err, NP_ERR_BYTES, "%s: damaged host file: %s; rebuild it (bobc build ... --entry ...)", path, what);
    return NP_EXIT_DAMAGED;
}

/* Read the host's own file (/proc/self/exe); `path` is its real path, for messages. */
static int find_self(np_self *s, const char *path, char *err)
{
    memset(s, 0, sizeof *s);
    char why[RT_ERR_BYTES];
    int readable = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    if (readable < 0 && errno == EACCES) {      /* execute-only (mode 711): not damaged (probe s31 hostexe finding 8) */
        int e = errno;
        char shown[RT_IO_SHOWN_BYTES + 1];
        const char *named = rt_io_shown(path, shown);
        snprintf(err, NP_ERR_BYTES, RT_SELF_UNREADABLE, named, strerror(e), named);
        return RT_EXIT_INTERNAL;
    }
    if (readable >= 0)
        close(readable);
    int rc = rt_io_read(NULL, "/proc/self/exe", "host file", RT_IO_INPUT_LIMIT_BYTES, NP_EXIT_DAMAGED, &s->file,
                        &s->file_size, why);
    if (rc) {
        snprintf(err, NP_ERR_BYTES, "%s", why);
        return rc;
    }
    size_t size = s->file_size;
    s->host_size = size;
    if (size >= EMBED_FOOTER_BYTES && memcmp(s->file + size - 16, EMBED_MAGIC, 8) == 0) {
        const uint8_t *header = s->file + size - EMBED_FOOTER_BYTES;
        uint64_t offset = le64(s->file + size - 8);
        if (le32(header) != 0 || le64(header + 68) != offset || offset > size - EMBED_FOOTER_BYTES)
            return damaged(err, path, "the embedded artifact's footer does not match its host (offset %llu)",
                           (unsigned long long)offset);
        size_t at = (size_t)offset, end = size - EMBED_FOOTER_BYTES;
        unsigned expected = 1;
        while (at < end) {
            if (end - at < EMBED_HEADER_BYTES)
                return damaged(err, path, "component %u is cut short", expected);
            uint32_t kind = le32(s->file + at);
            uint64_t length = le64(s->file + at + 68);
            if (kind != expected)
                return damaged(err, path, "component kind %u where kind %u belongs", kind, expected);
            if (length > end - at - EMBED_HEADER_BYTES)
                return damaged(err, path, "component %u's length %llu runs past the footer", kind,
                               (unsigned long long)length);
            if (kind <= 4) {
                s->component[kind] = s->file + at + EMBED_HEADER_BYTES;
                s->component_length[kind] = length;
            }
            at += EMBED_HEADER_BYTES + (size_t)length;
            expected++;
            s->components++;
        }
        if (s->components != 4)
            return damaged(err, path, "%d device image components, not 4", s->components);
        s->host_size = (size_t)offset;
    }
    if (s->host_size < TRAILER_BYTES || memcmp(s->file + s->host_size - 8, TRAILER_MAGIC, 8) != 0)
        return damaged(err, path, "no native program trailer (\"%s\") at the host's end", TRAILER_MAGIC);
    const uint8_t *trailer = s->file + s->host_size - TRAILER_BYTES;
    s->program_size = le64(trailer + 20);
    if (s->program_size > s->host_size - TRAILER_BYTES)
        return damaged(err, path, "the program's length %llu runs past the host's start",
                       (unsigned long long)s->program_size);
    s->program = trailer - s->program_size;
    memcpy(s->target, trailer, 16);
    s->target[16] = 0;
    uint32_t crc = rt_crc32(0, s->program, (size_t)s->program_size);
    if (crc != le32(trailer + 16))
        return damaged(err, path, "the program's CRC-32 is 0x%08x, its trailer says 0x%08x", crc, le32(trailer + 16));
    return 0;
}

/* ---- the machine ---- */

typedef struct {
    uint64_t argument;
    char option[32];
    uint8_t *data;
} np_staged;

/* The native host's part of the machine (native_machine.h holds the rest). */
typedef struct {
    char **args;
    int argc;                    /* the arguments after the program's name */
    const char *name;            /* the program's name (usage) */
    np_request request;          /* RequestOpen's (native_request.h) */
    const np_self *self;         /* the host's own file: its embedded images (LoadEmbedded) */
    FILE *trace;                 /* NATIVE_TRACE: one line per file, checkpoint and ring command carried out */
    FILE *submit_times;          /* NATIVE_SUBMIT_TIMES: one line per submission, timed (not in the trace, which
                                    the reference interpreter writes the same) */
    int request_open;
    np_session session;
    np_peer peers[MAX_PEERS];
    int peer_count;
    rt_io_files files;
    np_staged staged[RT_IO_MAX_FILES];
    int staged_count;
    int peer_timeout_ms;
    uint64_t issued;             /* Submits issued (the last one's number and entry below, when nonzero) */
    uint64_t last_submission, last_entry;
    int table_read;              /* the launch table (.bobc.launches) read: 1 found, -1 absent or damaged */
    rt_launch_table table;
    char table_why[256];         /* why a damaged table names no launches */
} np_host;

#define HOST(m) ((np_host *)(m)->host)
#define fault np_fault
#define mapped np_mapped
#define operand np_operand_value
#define set_word np_set_state_word

static uint8_t *host_mapped(np_machine *m, uint64_t address, uint64_t bytes)
{
    return np_device_at(&HOST(m)->session, address, bytes);
}

static int host_mapped_buffer(np_machine *m, uint64_t address, const char **name, uint64_t *host, uint64_t *extent)
{
    const np_mapping *b = np_device_buffer(&HOST(m)->session, address);
    if (!b)
        return 0;
    *name = b->name;
    *host = b->host;
    *extent = b->extent;
    return 1;
}

/* "; its launches: launch[L] (kernel NAME, grid [..], PLACE), ...; `bobc dump HOST` lists
 * submission[K]'s launches" for the submission issuing GPFIFO entry `entry`, from the host's
 * .bobc.launches section (read once, when a GPU fault is first said: bobc.native.launches, which
 * `bobc build` writes when the host's images carry their manifest); "" for a host without one or
 * an entry it does not list.  A damaged table is said, not passed over. */
static void launches_note(np_host *h, uint64_t entry, char *out, size_t n)
{
    out[0] = 0;
    if (!h->table_read) {
        rt_section section;
        char err[RT_ERR_BYTES];
        h->table_read = -1;
        if (rt_self_section_read(".bobc.launches", &section, err, sizeof err) == 0) {
            char why[128];
            if (rt_launch_table_decode(section.data, section.size, &h->table, why, sizeof why) == 0)
                h->table_read = 1;
            else
                snprintf(h->table_why, sizeof h->table_why, "; the host's launch table (.bobc.launches) is damaged "
                         "(%s), so its launches are not named: rebuild it", why);
            free(section.data);
        } else if (!section.absent) {
            snprintf(h->table_why, sizeof h->table_why, "; the host's launch table (.bobc.launches) cannot be read, so "
                     "its launches are not named");
        }
    }
    if (h->table_read < 0) {
        snprintf(out, n, "%s", h->table_why);
        return;
    }
    rt_launch_table_line(&h->table, entry, h->name, out, n);
}

/* A WaitMapped that fails on the GPU (a channel error, the time running out) after a Submit names
 * the last submission issued and its launches: the work that word waits on is the GPU's since. */
static int host_wait(np_machine *m, volatile uint8_t *word, uint64_t value, uint64_t timeout_ms, char *why)
{
    np_host *h = HOST(m);
    int rc = np_device_wait(&h->session, word, value, timeout_ms, why);
    if (rc && h->issued && h->session.gpu_opened) {
        char launches[RT_LAUNCH_LINE_BYTES];
        launches_note(h, h->last_entry, launches, sizeof launches);
        size_t used = strlen(why);
        snprintf(why + used, NP_MESSAGE_BYTES - used, "; the last submission issued: %llu (entry 0x%llx)%s",
                 (unsigned long long)h->last_submission, (unsigned long long)h->last_entry, launches);
    }
    return rc;
}

static np_peer *endpoint(np_machine *m, uint32_t index, uint64_t slot)
{
    np_host *h = HOST(m);
    uint64_t handle = m->slots[slot];
    if (handle < 1 || handle > (uint64_t)h->peer_count || h->peers[handle - 1].fd < 0) {
        fault(m, index, NP_EXIT_FAULT, "slot %llu holds %llu, not an open endpoint (Connect first)",
              (unsigned long long)slot, (unsigned long long)handle);
        return NULL;
    }
    return &h->peers[handle - 1];
}

static int stage(np_machine *m, uint32_t index, uint64_t argument, const uint8_t *data, uint64_t bytes)
{
    np_host *h = HOST(m);
    np_staged *s = NULL;
    for (int i = 0; i < h->staged_count; i++)
        if (h->staged[i].argument == argument)
            s = &h->staged[i];
    if (!s)
        return fault(m, index, NP_EXIT_INTERNAL, "argument %llu was not checked as an output",
                     (unsigned long long)argument);
    for (int i = 0; i < h->files.output_count; i++)
        if (!strcmp(h->files.outputs[i].option, s->option) && h->files.outputs[i].prepared)
            return fault(m, index, NP_EXIT_INTERNAL, "argument %llu was prepared for publication already "
                         "(PrepareOutputs): a program writes an output before it prepares it",
                         (unsigned long long)argument);
    uint8_t *copy = malloc(bytes ? bytes : 1);
    if (!copy)
        return fault(m, index, NP_EXIT_INTERNAL, "out of memory (%llu bytes)", (unsigned long long)bytes);
    memcpy(copy, data, bytes);
    free(s->data);
    s->data = copy;
    char why[RT_ERR_BYTES];
    if (rt_io_stage(&h->files, s->option, copy, bytes, why))
        return fault(m, index, NP_EXIT_INTERNAL, "%s", why);
    return 0;
}

/* A line of the trace (docs/native-host.md, "Requests": what a run did, for its counts). */
static void trace(np_host *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void trace(np_host *h, const char *fmt, ...)
{
    if (!h->trace)
        return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(h->trace, fmt, ap);
    va_end(ap);
    fputc('\n', h->trace);
}

#define U(x) ((unsigned long long)(x))

/* A request's commands (native_request.h): the plan host's files, in this host's process. */
/* A request host answers with the plan host's exit codes (docs/runtime.md): its refusals
 * already do (3 a bad stream, 4 a damaged checkpoint, ...), so once a request is open the
 * device's own failures are 6 (no GPU, bring-up or a mapping refused) and 7 (a submission
 * or wait timed out, a channel error), not the native program's 3 and 4. */
static int device_status(const np_host *h, int rc)
{
    if (!h->request_open)
        return rc;
    return rc == NP_EXIT_DEVICE ? RT_EXIT_NO_GPU : rc == NP_EXIT_WAIT ? RT_EXIT_GPU_FAULT : rc;
}

static int request_command(np_machine *m, uint32_t at, const np_command *c)
{
    np_host *h = HOST(m);
    np_request *r = &h->request;
    char why[RT_ERR_BYTES];
    uint64_t a = 0, b = 0;
    int rc = 0;
    switch (c->code) {
    case NP_REQUEST_OPEN:
        rc = np_request_open(r, c->bytes, c->bytes_length, h->argc, h->args, h->name, &h->files, why);
        if (rc == NP_REQUEST_HELP) {      /* --help: the usage printed; nothing was read, opened or written */
            const char *failed = rt_stdout_failure(stdout);
            if (failed) {
                fprintf(stderr, "native: cannot write to stdout: %s\n", failed);
                exit(RT_EXIT_WRITE_FAILED);
            }
            exit(0);
        }
        if (rc)
            return fault(m, at, rc, "%s", why);
        h->request_open = 1;
        m->wait_status = RT_EXIT_GPU_FAULT;
        trace(h, "open %s step %llu", r->args.op == RT_OP_PREDICT ? "predict" : "train", U(r->step));
        set_word(m, c->n[0], r->step);
        set_word(m, c->n[1], r->args.op == RT_OP_PREDICT);
        return 0;
    case NP_REQUEST_READ: {
        uint8_t *to = mapped(m, at, c->n[1], c->n[2]);
        if (!to || operand(m, at, &c->v[0], &a))
            return -1;
        rc = np_request_read(r, c->n[0], a, c->n[2], to, why);
        if (!rc)
            trace(h, "read %llu %llu %llu", U(c->n[0]), U(a), U(c->n[2]));
        break;
    }
    case NP_REQUEST_WRITE: case NP_REQUEST_WRITE_AT: {
        uint8_t *from = mapped(m, at, c->n[1], c->n[2]);
        if (!from)
            return -1;
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        rc = np_request_write(r, c->n[0], from, c->n[2], c->code == NP_REQUEST_WRITE, c->code == NP_REQUEST_WRITE_AT ? c->n[3] : 0,
                              why);
        if (!rc)
            trace(h, "write %llu %llu", U(c->n[0]), U(c->n[2]));
        break;
    }
    case NP_REQUEST_APPEND_STATE:
        rc = np_request_write(r, c->n[0], m->state + c->n[1], c->n[2], 1, 0, why);
        break;
    case NP_REQUEST_APPEND_INPUT:
        if (operand(m, at, &c->v[0], &a) || operand(m, at, &c->v[1], &b))
            return -1;
        rc = np_request_append_input(r, c->n[0], a, b, why);
        break;
    case NP_REQUEST_APPEND_STATUS: {
        uint8_t status[24];
        np_request_status(r, np_state_word(m, c->n[1]), status);
        rc = np_request_write(r, c->n[0], status, sizeof status, 1, 0, why);
        break;
    }
    case NP_REQUEST_CHECKPOINT_BEGIN:
        np_request_checkpoint_begin(r);
        trace(h, "begin");
        break;
    default:
        rc = np_request_checkpoint_publish(r, c->n[0], why);
        if (!rc)
            trace(h, "publish %llu", U(r->reached));
        break;
    }
    return rc ? fault(m, at, rc, "%s", why) : 0;
}

/* The commands only this host carries out: files, the device session, Submit, peers. */
static int host_other(np_machine *m, uint32_t at, const np_command *c)
{
    np_host *h = HOST(m);
    char why[NP_ERR_BYTES];
    uint64_t a = 0;
    switch (c->code) {
    case NP_READ_FILE: {
        const char *path = h->args[c->n[0]];
        char what[32], io[RT_ERR_BYTES];
        snprintf(what, sizeof what, "argument %llu", (unsigned long long)c->n[0]);
        uint8_t *data = NULL;
        size_t size = 0;
        if (rt_io_read(&h->files, path, what, RT_IO_INPUT_LIMIT_BYTES, NP_EXIT_FILE, &data, &size, io))
            return fault(m, at, NP_EXIT_FILE, "%s", io);
        if (size != c->n[2]) {
            free(data);
            return fault(m, at, NP_EXIT_FILE, "%s %s: %zu byte%s, not the %llu the program reads", what, path, size,
                         rt_plural(size), (unsigned long long)c->n[2]);
        }
        memcpy(m->state + c->n[1], data, size);
        free(data);
        return 0;
    }
    case NP_WRITE_FILE:
        return stage(m, at, c->n[0], m->state + c->n[1], c->n[2]);
    case NP_WRITE_MAPPED_FILE: {
        uint8_t *from = mapped(m, at, c->n[1], c->n[2]);
        if (!from)
            return -1;
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        return stage(m, at, c->n[0], from, c->n[2]);
    }
    case NP_OPEN_DEVICE: {
        int rc = np_device_open(&h->session, c->bytes, why);
        return rc ? fault(m, at, device_status(h, rc), "%s", why) : 0;
    }
    case NP_MAP: {
        int rc = np_device_map(&h->session, c->bytes, c->bytes_length, c->n[0], c->n[1], c->n[2], c->n[3] != 0, why);
        return rc ? fault(m, at, device_status(h, rc), "%s", why) : 0;
    }
    case NP_CONNECT: {
        if (h->peer_count == MAX_PEERS)
            return fault(m, at, NP_EXIT_PEER, "more than %d endpoints", MAX_PEERS);
        np_peer *peer = &h->peers[h->peer_count];
        int rc = np_peer_open(peer, c->bytes, c->n[0] != 0, h->peer_timeout_ms, why);
        if (rc)
            return fault(m, at, rc, "%s", why);
        m->slots[c->n[1]] = (uint64_t)++h->peer_count;
        return 0;
    }
    case NP_SEND: case NP_RECEIVE: {
        np_peer *peer = endpoint(m, at, c->n[0]);
        if (!peer)
            return -1;
        int rc = c->code == NP_SEND ? np_peer_send(peer, m->state + c->n[1], c->n[2], h->peer_timeout_ms, why)
                                    : np_peer_receive(peer, m->state + c->n[1], c->n[2], h->peer_timeout_ms, why);
        return rc ? fault(m, at, rc, "%s", why) : 0;
    }
    case NP_RELEASE:
        np_device_release(&h->session);
        return 0;
    case NP_PREPARE_OUTPUTS: {
        /* publication's first phase (host_io.h): the outputs staged so far written and synced now, so
         * that a failure to write them is this command's, before the program tells a peer it is ready */
        char io[RT_ERR_BYTES];
        int rc = rt_io_prepare(&h->files, io);
        if (rc)
            return fault(m, at, rc, "%s", io);
        trace(h, "prepare");
        return 0;
    }
    case NP_LOAD_EMBEDDED: {
        const uint8_t *image = h->self->component[c->n[0]];
        uint64_t length = h->self->component_length[c->n[0]];
        if (!image)
            return fault(m, at, NP_EXIT_DAMAGED, "the host carries no embedded device image of kind %llu (build it "
                         "as an embedded artifact: Runtime.NativePhysicalEmbeddedArtifact)", (unsigned long long)c->n[0]);
        uint8_t *to = mapped(m, at, c->n[1], length);
        if (!to)
            return -1;
        memcpy(to, image, length);
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        trace(h, "load %llu %llu", U(c->n[0]), U(length));
        return 0;
    }
    case NP_SUBMIT: {
        uint64_t n = np_state_word(m, c->n[4]);
        volatile uint8_t *slot = np_ring_slot(m, at, c->n[0], c->n[1], n);
        volatile uint8_t *put = slot ? mapped(m, at, c->n[2], 4) : NULL;
        volatile uint8_t *semaphore = put ? mapped(m, at, c->n[3], 8) : NULL;
        if (!semaphore || operand(m, at, &c->v[0], &a))
            return -1;
        uint32_t next = (uint32_t)np_ring_next(n, c->n[1]);
        memcpy((void *)slot, &a, 8);
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        memcpy((void *)put, &next, 4);
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        struct timespec before, after;
        if (h->submit_times)
            clock_gettime(CLOCK_MONOTONIC, &before);
        int rc = np_device_submit(&h->session, a, semaphore, n + 1, why);
        if (rc != NP_STATUS_DEVICE) {       /* issued (a refusal before the doorbell issues nothing) */
            h->issued++;
            h->last_submission = n;
            h->last_entry = a;
        }
        if (!rc && h->submit_times) {
            clock_gettime(CLOCK_MONOTONIC, &after);
            long long ns = (after.tv_sec - before.tv_sec) * 1000000000LL + (after.tv_nsec - before.tv_nsec);
            fprintf(h->submit_times, "%llu 0x%llx %lld\n", U(n), U(a), ns);
        }
        if (rc) {
            /* a fault or timeout of issued work names its launches (launch_rows.h); a refusal before
             * the doorbell (no session, no GPU) ran none */
            char launches[RT_LAUNCH_LINE_BYTES];
            launches[0] = 0;
            if (rc == NP_STATUS_WAIT)
                launches_note(h, a, launches, sizeof launches);
            return fault(m, at, device_status(h, rc), "submission %llu (entry 0x%llx): %s%s", (unsigned long long)n,
                         (unsigned long long)a, why, launches);
        }
        set_word(m, c->n[4], n + 1);
        trace(h, "submit %llu 0x%llx", U(n), U(a));
        return 0;
    }
    default:
        if (c->code >= NP_REQUEST_OPEN && c->code <= NP_REQUEST_CHECKPOINT_PUBLISH)
            return request_command(m, at, c);
        return fault(m, at, NP_EXIT_INTERNAL, "unknown command code %u", c->code);
    }
}

/* A Fail's context: the peers the program is connected to, as its peer messages name them (the
 * address a listening side's peer came from, the one a connecting side connected to), so a plan's
 * refusal of what a peer sent says who sent it: "; peer 127.0.0.1:51234", "; peers A, B". */
static void host_fail_context(np_machine *m, char *out, size_t room)
{
    const np_host *h = HOST(m);
    size_t k = 0;
    for (int i = 0; i < h->peer_count && k + 1 < room; i++)
        k += (size_t)snprintf(out + k, room - k, "%s%s", i ? ", " : h->peer_count > 1 ? "; peers " : "; peer ",
                              h->peers[i].remote);
}

static const np_hooks host_hooks = { host_mapped, host_wait, host_other, host_fail_context, host_mapped_buffer };

/* A ReadFile argument's file as rt_io_add_output knows an output's: its folder's real path and
 * its name (the path itself when the folder cannot be resolved), and its device and inode when
 * it exists (stat: a symlink is its target). */
typedef struct {
    uint64_t argument;
    char real[RT_IO_PATH_BYTES];
    int exists;
    dev_t dev;
    ino_t ino;
} np_input_file;

static void input_file(const char *path, np_input_file *in)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    char folder[RT_IO_PATH_BYTES], folder_real[PATH_MAX];
    if (!slash)
        snprintf(folder, sizeof folder, ".");
    else if (slash == path)
        snprintf(folder, sizeof folder, "/");
    else
        snprintf(folder, sizeof folder, "%.*s", (int)(slash - path), path);
    if (!realpath(folder, folder_real) ||
        snprintf(in->real, sizeof in->real, "%s%s%s", folder_real, strcmp(folder_real, "/") ? "/" : "", base) >=
            (int)sizeof in->real)
        snprintf(in->real, sizeof in->real, "%s", path);
    struct stat st;
    in->exists = stat(path, &st) == 0;
    in->dev = in->exists ? st.st_dev : 0;
    in->ino = in->exists ? st.st_ino : 0;
}

/* No output is the file another argument's ReadFile reads (the same path once its folder is
 * resolved, or the same device and inode: a symlink or hard link to it), checked before
 * anything runs: its publication would replace that input (a record given as the readback
 * path, a peer's shards in another peer's places).  The same argument read and written is a
 * file updated in place (a checkpoint resumed), and stays allowed.  Two outputs that are one
 * file are rt_io_add_output's refusal.  compiler/bobc/reference/native_program.py keeps the
 * same rule and words. */
static int check_aliases(np_host *m, const np_program *p, char *err)
{
    uint32_t reads = 0;
    for (uint32_t i = 0; i < p->count; i++)
        reads += p->commands[i].code == NP_READ_FILE;
    if (reads == 0 || m->staged_count == 0)
        return 0;
    np_input_file *inputs = malloc(reads * sizeof *inputs);
    if (!inputs) {
        snprintf(err, NP_ERR_BYTES, "out of memory for %u input files", reads);
        return NP_EXIT_INTERNAL;
    }
    static uint8_t seen[(1u << 16) / 8];  /* arguments are 0-65535 (the decoder's limit) */
    memset(seen, 0, sizeof seen);
    uint32_t count = 0;
    for (uint32_t i = 0; i < p->count; i++) {
        const np_command *c = &p->commands[i];
        if (c->code != NP_READ_FILE || (seen[c->n[0] >> 3] >> (c->n[0] & 7) & 1))
            continue;
        seen[c->n[0] >> 3] |= (uint8_t)(1u << (c->n[0] & 7));
        inputs[count].argument = c->n[0];
        input_file(m->args[c->n[0]], &inputs[count++]);
    }
    int rc = 0;
    for (int k = 0; k < m->staged_count && !rc; k++) {
        const rt_io_output *o = &m->files.outputs[k];
        for (uint32_t i = 0; i < count && !rc; i++) {
            const np_input_file *in = &inputs[i];
            if (in->argument == m->staged[k].argument)
                continue;
            if (strcmp(in->real, o->real) && !(o->exists && in->exists && in->dev == o->dev && in->ino == o->ino))
                continue;
            char shown[RT_IO_SHOWN_BYTES + 1], other[RT_IO_SHOWN_BYTES + 1];
            snprintf(err, NP_ERR_BYTES, "output %s (%s): is the same file as argument %llu %s, which the program "
                     "reads; an output never replaces another argument's input: give %s a path of its own; nothing "
                     "was written", rt_io_shown(o->path, shown), o->option, (unsigned long long)in->argument,
                     rt_io_shown(m->args[in->argument], other), o->option);
            rc = NP_EXIT_WRITE;
        }
    }
    free(inputs);
    return rc;
}

/* native_program.c's checks hold a program to what this host publishes and reads */
_Static_assert(NP_MAX_OUTPUT_FILES == RT_IO_MAX_FILES, "a program's output files are the host's");
_Static_assert(NP_MAX_READ_BYTES == RT_IO_INPUT_LIMIT_BYTES, "a ReadFile reads what the host reads at most");

/* Output arguments in order of first appearance; recover their journals, check their paths,
 * then that none is another argument's input (check_aliases). */
static int check_outputs(np_host *m, const np_program *p, char *err)
{
    const char *paths[RT_IO_MAX_FILES];
    int count = 0;
    for (uint32_t i = 0; i < p->count; i++) {
        const np_command *c = &p->commands[i];
        if (c->code != NP_WRITE_FILE && c->code != NP_WRITE_MAPPED_FILE)
            continue;
        int known = 0;
        for (int k = 0; k < m->staged_count; k++)
            known |= m->staged[k].argument == c->n[0];
        if (known)
            continue;
        if (m->staged_count == RT_IO_MAX_FILES) {
            snprintf(err, NP_ERR_BYTES, "the program writes more than %d files", RT_IO_MAX_FILES);
            return NP_EXIT_WRITE;
        }
        np_staged *s = &m->staged[m->staged_count++];
        s->argument = c->n[0];
        snprintf(s->option, sizeof s->option, "argument %llu", (unsigned long long)c->n[0]);
        paths[count++] = m->args[c->n[0]];
    }
    char why[RT_ERR_BYTES];
    int rc = rt_io_recover(paths, count, why);
    if (rc) {
        snprintf(err, NP_ERR_BYTES, "%s", why);
        return rc;
    }
    for (int k = 0; k < m->staged_count; k++)
        if ((rc = rt_io_add_output(&m->files, m->args[m->staged[k].argument], m->staged[k].option, NULL, why))) {
            snprintf(err, NP_ERR_BYTES, "%s", why);
            return rc;
        }
    return check_aliases(m, p, err);
}

/* Publish what was staged, together (the journalled rule of host_io.h). */
static int publish(np_host *m, char *err)
{
    int kept = 0;
    for (int i = 0; i < m->files.output_count; i++)
        if (m->files.outputs[i].staged)
            m->files.outputs[kept++] = m->files.outputs[i];
    m->files.output_count = kept;
    if (kept == 0)
        return 0;
    char why[RT_ERR_BYTES];
    int rc = rt_io_publish(&m->files, why);
    if (rc)
        snprintf(err, NP_ERR_BYTES, "%s", why);
    return rc;
}

/* The usage refusal: each file argument and whether the program reads it (ReadFile), writes it
 * (WriteFile, WriteMappedFile), both, or neither ("unused": below the highest one named), e.g.
 * `native: usage: ./h ARG0 (read) ARG1 (written): the program names 2 file arguments, 0 given`;
 * bobc.native.program.usage_arguments writes the same list for the reference interpreter. */
static int list_arguments(FILE *out, const np_program *p)
{
    static const char *const words[4] = {"unused", "read", "written", "read and written"};
    unsigned char *use = calloc(p->arguments ? p->arguments : 1, 1);
    if (!use) {
        fprintf(stderr, "native: out of memory for the usage of %llu file arguments\n",
                (unsigned long long)p->arguments);
        return -1;
    }
    for (uint32_t i = 0; i < p->count; i++) {
        const np_command *c = &p->commands[i];
        if (c->code == NP_READ_FILE)
            use[c->n[0]] |= 1;
        else if (c->code == NP_WRITE_FILE || c->code == NP_WRITE_MAPPED_FILE)
            use[c->n[0]] |= 2;
    }
    for (uint64_t a = 0; a < p->arguments; a++)
        fprintf(out, " ARG%llu (%s)", (unsigned long long)a, words[use[a]]);
    free(use);
    return 0;
}

/* Where the file arguments' meaning is: a native program carries no names for them (its bytes
 * hold the identity, the counts and the commands, which name an argument by its index alone), so
 * the usage names the plan that built it by the program's identity (shown as --version shows it)
 * rather than inventing names (probe s37 leftovers finding 8);
 * bobc.reference.native_program.arguments_note writes the same. */
static void put_arguments_note(FILE *out, const np_program *p)
{
    const void *nul = p->identity_length ? memchr(p->identity, 0, p->identity_length) : NULL;
    size_t length = nul ? (size_t)((const uint8_t *)nul - p->identity) : (size_t)p->identity_length;
    fputs("it carries no names for them: the plan that built ", out);
    if (length) {
        fputs("program ", out);
        np_put_shown(p->identity, length, out);
    } else {
        fputs("it", out);
    }
    fputs(" says what each is", out);
}

static void print_usage(const char *name, const np_program *p, int given)
{
    char shown[RT_IO_SHOWN_BYTES + 1];      /* the name as a path is shown: one line */
    fprintf(stderr, "native: usage: %s", rt_io_shown(name, shown));
    if (list_arguments(stderr, p))
        return;
    fprintf(stderr, ": the program names %llu file argument%s, %d given", (unsigned long long)p->arguments,
            rt_plural(p->arguments), given);
    if (p->arguments) {
        fputs(" (", stderr);
        put_arguments_note(stderr, p);
        fputs(")", stderr);
    }
    fputs("\n", stderr);
}

/* `HOST --help` of a program without a request: the same list on stdout, exit 0
 * (bobc.reference.native_program.help_text writes the same) */
static void print_help(const char *name, const np_program *p)
{
    printf("usage: %s", name);
    if (list_arguments(stdout, p))
        return;
    printf("\n       %s --version\nthe program names %llu file argument%s, each a path, in this order\n", name,
           (unsigned long long)p->arguments, rt_plural(p->arguments));
    if (p->arguments) {
        put_arguments_note(stdout, p);
        fputs("\n", stdout);
    }
}

/* `HOST --version`: the build's facts -- the .bobc.version section bobc wrote (which bobc and
 * commit built it, the target, compute class and driver branch: host_version.c, as a plan host
 * prints them) -- then the program's own lines; bobc.reference.native_program.version_text
 * writes the same.  0, or the failure's status with its message in err. */
static int print_version(const np_self *self, const np_program *p, int takes_options, char *err, size_t err_bytes)
{
    int rc = rt_host_write_version(stdout, err, err_bytes);
    if (rc)
        return rc;
    /* a request's program takes its input and outputs through options, not file arguments: its
     * count of file arguments alone ("0 arguments") read as a host that takes nothing */
    /* the identity up to its first NUL (a name padded with zeros), control characters as '?' */
    const void *nul = p->identity_length ? memchr(p->identity, 0, p->identity_length) : NULL;
    fputs("program: ", stdout);
    np_put_shown(p->identity, nul ? (size_t)((const uint8_t *)nul - p->identity) : (size_t)p->identity_length,
                 stdout);
    printf(" (%u command%s, %llu slot%s, %llu state byte%s, %llu %sargument%s%s)\n",
           p->count, rt_plural(p->count),
           (unsigned long long)p->slots, rt_plural(p->slots), (unsigned long long)p->state_extent,
           rt_plural(p->state_extent), (unsigned long long)p->arguments, takes_options ? "file " : "",
           rt_plural(p->arguments), takes_options ? "; a request: train|predict and its options" : "");
    printf("embedded device images: %d\n", self->components);
    const char *failed = rt_stdout_failure(stdout);
    if (failed) {           /* a full disk or a closed stdout: said, exit 8, as bobc's own commands */
        snprintf(err, err_bytes, "cannot write to stdout: %s", failed);
        return RT_EXIT_WRITE_FAILED;
    }
    return 0;
}

/* The files the run reads, as far as its command line says before it runs: each ReadFile's
 * argument, and a request's --input and --checkpoint (each option's value, --opt=value too,
 * whether or not the rest of the line parses): what a diagnostic file may not be. */
static int input_paths(const np_program *p, int takes_options, char **args, int argc, const char **out, int most)
{
    int count = 0;
    for (uint32_t i = 0; i < p->count && count < most; i++)
        if (p->commands[i].code == NP_READ_FILE && p->commands[i].n[0] < (uint64_t)argc)
            out[count++] = args[p->commands[i].n[0]];
    for (int i = 0; takes_options && i < argc && count < most; i++)
        for (int k = 0; k < 2; k++) {
            const char *name = k ? "--checkpoint" : "--input";
            size_t n = strlen(name);
            if (strcmp(args[i], name) == 0 && i + 1 < argc)
                out[count++] = args[i + 1];
            else if (strncmp(args[i], name, n) == 0 && args[i][n] == '=')
                out[count++] = args[i] + n + 1;
            if (count == most)
                break;
        }
    return count;
}

int main(int argc, char **argv)
{
    char err[NP_ERR_BYTES + 256];
    char self_path[RT_IO_PATH_BYTES];
    rt_report_as("native");      /* the shared runtime's notices say "native:", as this host's messages do */
    rt_ignore_file_size_signal();   /* a write past `ulimit -f` fails (EFBIG), said, exit 8 */
    ssize_t length = readlink("/proc/self/exe", self_path, sizeof self_path - 1);
    if (length <= 0)
        snprintf(self_path, sizeof self_path, "%s", argv[0]);
    else
        self_path[length] = 0;
    np_self self;
    int rc = find_self(&self, self_path, err);
    if (rc) {
        fprintf(stderr, "native: %s\n", err);
        return rc;
    }
    np_program program;
    if (np_decode(self.program, (size_t)self.program_size, &program, err)) {
        char shown[RT_IO_SHOWN_BYTES + 1];
        fprintf(stderr, "native: %s: damaged host file: its program: %s; rebuild it\n", rt_io_shown(argv[0], shown),
                err);
        return NP_EXIT_DAMAGED;
    }
    int takes_options = 0;       /* a request's program reads options (RequestOpen); any other reads its files only */
    for (uint32_t i = 0; i < program.count; i++)
        takes_options |= program.commands[i].code == NP_REQUEST_OPEN;
    if (argc == 2 && strcmp(argv[1], "--version") == 0) {
        if ((rc = print_version(&self, &program, takes_options, err, sizeof err)))
            fprintf(stderr, "native: %s\n", err);
        return rc;
    }
    if (!takes_options && argc == 2 && strcmp(argv[1], "--help") == 0) {
        /* the usage on stdout, exit 0 (probe s31 hostexe finding 11; a file named --help is
         * given as ./--help); a request's program says its options itself (native_request.c) */
        print_help(argv[0], &program);
        const char *failed = rt_stdout_failure(stdout);
        if (failed) {
            fprintf(stderr, "native: cannot write to stdout: %s\n", failed);
            return RT_EXIT_WRITE_FAILED;
        }
        return 0;
    }
    if ((uint64_t)(argc - 1) < program.arguments || (!takes_options && (uint64_t)(argc - 1) > program.arguments)) {
        print_usage(argv[0], &program, argc - 1);
        return NP_EXIT_FILE;
    }
    /* the environment's settings, judged at start-up (docs/native-host.md, "Settings"): a value
     * outside a setting's set is a usage error naming the variable, on any machine, before
     * anything is read or written; the reference interpreter judges the same (settings.py) */
    static const rt_setting settings[] = RT_NATIVE_HOST_SETTINGS;
    if (rt_settings_judge(settings, (int)(sizeof settings / sizeof *settings), err, sizeof err)) {
        fprintf(stderr, "native: %s\n", err);
        return NP_EXIT_FILE;
    }
    static np_host h;
    np_machine m;
    memset(&m, 0, sizeof m);
    m.p = &program;
    m.hooks = &host_hooks;
    m.host = &h;
    h.self = &self;
    h.args = argv + 1;
    h.argc = argc - 1;
    h.name = argv[0];
    m.start_us = np_now_us();
    m.telemetry = (long)rt_setting_number(RT_SETTING_TELEMETRY, -1);
    h.peer_timeout_ms = (int)rt_setting_number(RT_SETTING_PEER_TIMEOUT, NP_PEER_TIMEOUT_MS);
    h.session.target = self.target;
    m.slots = calloc(program.slots ? program.slots : 1, 8);
    m.state = calloc(program.state_extent ? program.state_extent : 1, 1);
    if (!m.slots || !m.state) {
        fprintf(stderr, "native: out of memory for a %llu-byte state\n", (unsigned long long)program.state_extent);
        return NP_EXIT_INTERNAL;
    }
    /* the diagnostic files: never one of the run's inputs (diag_file.h), opened only once judged */
    const char *inputs[RT_IO_MAX_FILES * 2];
    int input_count = input_paths(&program, takes_options, argv + 1, argc - 1, inputs,
                                  (int)(sizeof inputs / sizeof inputs[0]));
    const char *trace_path = getenv("NATIVE_TRACE"), *times_path = getenv("NATIVE_SUBMIT_TIMES");
    if ((trace_path && *trace_path &&
         (rc = rt_diag_open("NATIVE_TRACE", trace_path, inputs, input_count, &h.trace, err, sizeof err))) ||
        (times_path && *times_path &&
         (rc = rt_diag_open("NATIVE_SUBMIT_TIMES", times_path, inputs, input_count, &h.submit_times, err,
                            sizeof err)))) {
        fprintf(stderr, "native: %s\n", err);
        if (h.trace)
            fclose(h.trace);
        return NP_EXIT_WRITE;
    }
    if ((rc = check_outputs(&h, &program, err))) {
        fprintf(stderr, "native: %s\n", err);
        return rc;
    }
    int r = np_run(&m, 0);
    /* a diagnostic file that could not be written whole is said, the run's status kept (diag_file.h) */
    char diag_err[RT_ERR_BYTES];
    if (h.trace && rt_diag_close("NATIVE_TRACE", trace_path, h.trace, diag_err, sizeof diag_err))
        fprintf(stderr, "native: %s\n", diag_err);
    if (h.submit_times && rt_diag_close("NATIVE_SUBMIT_TIMES", times_path, h.submit_times, diag_err, sizeof diag_err))
        fprintf(stderr, "native: %s\n", diag_err);
    np_device_release(&h.session);
    for (int i = 0; i < h.peer_count; i++)
        np_peer_close(&h.peers[i]);
    if (r < 0) {
        rt_io_discard(&h.files);          /* prepared temporaries (PrepareOutputs): nothing is published */
        int own = m.fail_message && m.fail_length;        /* the message's tail: Fail's bytes, else the host's */
        char note[RT_ERR_BYTES];
        size_t keep = np_request_failure_note(h.request_open ? &h.request : NULL,
                                              own ? (const char *)m.fail_message : m.message,
                                              own ? (size_t)m.fail_length : strlen(m.message), note, sizeof note);
        fputs("native: ", stderr);
        fwrite(m.message, 1, own ? strlen(m.message) : keep, stderr);
        if (own)                    /* the plan's bytes, control characters as '?': one line */
            np_put_shown(m.fail_message, keep, stderr);
        fprintf(stderr, "%s\n", note);
        return m.status;
    }
    if (h.request_open) {
        char why[RT_ERR_BYTES], note[RT_ERR_BYTES];
        if ((rc = np_request_finish(&h.request, &h.files, why))) {
            rt_io_discard(&h.files);
            size_t keep = np_request_failure_note(&h.request, why, strlen(why), note, sizeof note);
            fprintf(stderr, "native: %.*s%s\n", (int)keep, why, note);
            return rc;
        }
    }
    if ((rc = publish(&h, err))) {
        /* the last publication failed: an interval's checkpoint this run published stays (its note) */
        char note[RT_ERR_BYTES] = "";
        size_t keep = h.request_open && h.request.written
                          ? np_request_failure_note(&h.request, err, strlen(err), note, sizeof note)
                          : strlen(err);
        fprintf(stderr, "native: %.*s%s\n", (int)keep, err, note);
        return rc;
    }
    return 0;
}
