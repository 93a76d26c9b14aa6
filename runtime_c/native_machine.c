/* See native_machine.h: the commands every native command host carries out
 * alike (moved here from native_host.c so the plan host links the same code). */
#define _GNU_SOURCE
#include "native_machine.h"
#include "native_device.h"
#include "host_runtime.h"
#include "host_settings.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define NP_EXIT_INTERNAL 1
#define NP_EXIT_WAIT 4
#define NP_EXIT_FAULT 10

void np_put_shown(const uint8_t *bytes, size_t length, FILE *to)
{
    for (size_t i = 0; i < length; i++)
        fputc(rt_control_char(bytes[i]) ? '?' : bytes[i], to);
}

size_t np_shown_copy(char *out, size_t room, const uint8_t *bytes, size_t length)
{
    size_t n = length < room - 1 ? length : room - 1;
    for (size_t i = 0; i < n; i++)
        out[i] = rt_control_char(bytes[i]) ? '?' : (char)bytes[i];
    out[n] = 0;
    return n;
}

double np_now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

int np_fault(np_machine *m, uint32_t index, int status, const char *fmt, ...)
{
    char what[NP_MESSAGE_BYTES];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    /* RequestOpen's refusals speak to the host's user about its options and files, and say which
     * (docs/native-host.md, "Requests"): no command number; any other fault names its command */
    uint32_t code = m->p->commands[index].code;
    if (code == NP_REQUEST_OPEN)
        snprintf(m->message, sizeof m->message, "%s", what);
    else
        snprintf(m->message, sizeof m->message, "command %u (%s): %s", index, np_code_name(code), what);
    m->status = status;
    return -1;
}

/* What a refused range [address, +bytes) is, said after "is in no host-mapped buffer": it starts in
 * a buffer and runs past its end (named, with its range: a range lies in one buffer), else where
 * to Map one.  `what` says the range first ("mapped [...)" or a ring slot). */
static void refuse_range(np_machine *m, uint32_t index, const char *what, uint64_t address, uint64_t bytes,
                         const char *advice)
{
    const char *name;
    uint64_t host, extent;
    if (m->hooks->mapped_buffer && m->hooks->mapped_buffer(m, address, &name, &host, &extent)) {
        char into[RT_GROUPED_BYTES], past[RT_GROUPED_BYTES];
        unsigned __int128 end = (unsigned __int128)address + bytes;
        np_fault(m, index, NP_EXIT_FAULT, "%s is in no host-mapped buffer: it starts %s bytes into buffer \"%s\" "
                 "[0x%llx, +0x%llx) and runs %s bytes past its end (a range lies in one buffer)%s", what,
                 rt_grouped(address - host, into), name, (unsigned long long)host, (unsigned long long)extent,
                 rt_grouped((unsigned long long)(end - host - extent), past), advice);
        return;
    }
    np_fault(m, index, NP_EXIT_FAULT, "%s is in no host-mapped buffer%s", what,
             advice[0] ? advice : " (Map one there with a nonzero host address first)");
}

uint8_t *np_mapped(np_machine *m, uint32_t index, uint64_t address, uint64_t bytes)
{
    uint8_t *at = m->hooks->mapped(m, address, bytes);
    if (!at) {
        char what[64];
        snprintf(what, sizeof what, "mapped [0x%llx, +%llu)", (unsigned long long)address, (unsigned long long)bytes);
        refuse_range(m, index, what, address, bytes, "");
    }
    return at;
}

volatile uint8_t *np_ring_slot(np_machine *m, uint32_t index, uint64_t ring, uint64_t entries, uint64_t n)
{
    /* submission n waits for the 64-bit semaphore to reach n + 1: at n = 2^64 - 1 that target
     * would wrap to 0 (a wait that ends at once); refused before anything is written */
    if (n > NP_MAX_SUBMISSION) {
        np_fault(m, index, NP_EXIT_INTERNAL, "submission %llu: the issue counter is at 2^64 - 1, where the "
                 "semaphore's target n + 1 would wrap to 0 (a counter takes submissions 0 to 2^64 - 2); store a "
                 "smaller count at its word", (unsigned long long)n);
        return NULL;
    }
    unsigned __int128 address = (unsigned __int128)ring + (unsigned __int128)8 * (n % entries);
    if (address <= UINT64_MAX) {
        volatile uint8_t *at = m->hooks->mapped(m, (uint64_t)address, 8);
        if (at)
            return at;
        /* the slot named as the ring's, and the ring's whole extent against the buffer it starts in */
        char what[160], advice[320] = "", need[RT_GROUPED_BYTES];
        const char *name;
        uint64_t host, extent;
        unsigned __int128 ring_end = (unsigned __int128)ring + (unsigned __int128)8 * entries;
        if (m->hooks->mapped_buffer && m->hooks->mapped_buffer(m, ring, &name, &host, &extent) &&
            ring_end > (unsigned __int128)host + extent)
            snprintf(advice, sizeof advice, "; the ring's %llu entries at 0x%llx need %s bytes, past the end of "
                     "buffer \"%s\" [0x%llx, +0x%llx): map a buffer that holds them all, or give the ring fewer "
                     "entries", (unsigned long long)entries, (unsigned long long)ring,
                     rt_grouped(8 * (unsigned long long)entries, need), name, (unsigned long long)host,
                     (unsigned long long)extent);
        snprintf(what, sizeof what, "ring slot %llu of %llu (submission %llu) at mapped [0x%llx, +8)",
                 (unsigned long long)(n % entries), (unsigned long long)entries, (unsigned long long)n,
                 (unsigned long long)address);
        refuse_range(m, index, what, (uint64_t)address, 8, advice);
        return NULL;
    }
    /* past 2^64: in no buffer, named as it is (the reference's words), not as the address it wraps to */
    np_fault(m, index, NP_EXIT_FAULT, "mapped [0x%llx%016llx, +8) is in no host-mapped buffer (Map one there with a "
             "nonzero host address first)", (unsigned long long)(address >> 64), (unsigned long long)address);
    return NULL;
}

uint64_t np_ring_next(uint64_t n, uint64_t entries)
{
    /* (n + 1) mod entries with n + 1 exact: at n = 2^64 - 1 the sum would wrap to 0 */
    return n == UINT64_MAX ? (n % entries + 1) % entries : (n + 1) % entries;
}

static uint64_t word_at(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

uint64_t np_state_word(const np_machine *m, uint64_t address)
{
    return word_at(m->state + address);
}

void np_set_state_word(np_machine *m, uint64_t address, uint64_t value)
{
    memcpy(m->state + address, &value, 8);
}

int np_operand_value(np_machine *m, uint32_t index, const np_operand *o, uint64_t *value)
{
    switch (o->kind) {
    case NP_IMMEDIATE: *value = o->value; return 0;
    case NP_SLOT: *value = m->slots[o->value]; return 0;
    case NP_STATE_WORD: *value = word_at(m->state + o->value); return 0;
    default: {
        volatile uint8_t *at = np_mapped(m, index, o->value, 8);
        if (!at)
            return -1;
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        *value = word_at((const uint8_t *)at);
        return 0;
    }
    }
}

static double as_double(uint64_t bits)
{
    double d;
    memcpy(&d, &bits, 8);
    return d;
}

static uint64_t as_bits(double d)
{
    uint64_t bits;
    memcpy(&bits, &d, 8);
    return bits;
}

#define NP_QUIET_NAN_BIT ((uint64_t)1 << 51)   /* binary64's quiet bit, the fraction's highest */

static uint64_t convert(unsigned conversion, uint64_t v)
{
    switch (conversion) {
    case 0: return as_bits((double)v);
    case 1: return as_bits(sqrt(as_double(v)));
    case 2: {
        float f = (float)as_double(v);
        uint32_t bits;
        memcpy(&bits, &f, 4);
        return bits;
    }
    default: {
        uint32_t bits = (uint32_t)v;
        float f;
        memcpy(&f, &bits, 4);
        return as_bits((double)f);
    }
    }
}

#define operand(m, at, o, v) np_operand_value((m), (at), (o), (v))
#define set_word np_set_state_word
#define mapped np_mapped

int np_run(np_machine *m, uint32_t at)
{
    const np_program *p = m->p;
    char why[NP_MESSAGE_BYTES];
    for (;;) {
        const np_command *c = &p->commands[at];
        uint64_t a = 0, b = 0;
        switch (c->code) {
        case NP_END:
            return 0;
        case NP_HALT:
            return 1;
        case NP_FAIL:
            m->status = (int)c->n[0];
            m->fail_message = c->bytes;
            m->fail_length = c->bytes_length;
        {
            char context[NP_ERR_BYTES] = "";
            if (m->hooks->fail_context)
                m->hooks->fail_context(m, context, sizeof context);
            snprintf(m->message, sizeof m->message, "command %u (Fail%s): ", at, context);
        }
            return -1;
        case NP_SET:
            if (operand(m, at, &c->v[0], &a))
                return -1;
            m->slots[c->n[0]] = a;
            break;
        case NP_STORE:
            if (operand(m, at, &c->v[0], &a))
                return -1;
            set_word(m, c->n[0], a);
            break;
        case NP_ADD_NATURAL:
            if (operand(m, at, &c->v[0], &a) || operand(m, at, &c->v[1], &b))
                return -1;
            set_word(m, c->n[0], a + b);
            break;
        case NP_FLOAT: {
            if (operand(m, at, &c->v[0], &a) || operand(m, at, &c->v[1], &b))
                return -1;
            double x = as_double(a), y = as_double(b), r;
            /* a NaN operand gives that NaN quieted, the left one when both are: IEEE 754 leaves
             * which payload open, and the compiler may swap a commutative operation's operands, so
             * the rule is spelt here, as the reference spells it (float_operation) */
            if (isnan(x) || isnan(y)) {
                set_word(m, c->n[0], (isnan(x) ? a : b) | NP_QUIET_NAN_BIT);
                break;
            }
            switch (c->sub) {
            case 0: r = x + y; break;
            case 1: r = x - y; break;
            case 2: r = x * y; break;
            default: r = x / y; break;
            }
            set_word(m, c->n[0], as_bits(r));
            break;
        }
        case NP_CONVERT:
            if (operand(m, at, &c->v[0], &a))
                return -1;
            set_word(m, c->n[0], convert(c->sub, a));
            break;
        case NP_COPY_STATE_TO_MAPPED: {
            uint8_t *to = mapped(m, at, c->n[1], c->n[2]);
            if (!to)
                return -1;
            memcpy(to, m->state + c->n[0], c->n[2]);
            break;
        }
        case NP_COPY_MAPPED_TO_STATE: {
            uint8_t *from = mapped(m, at, c->n[0], c->n[2]);
            if (!from)
                return -1;
            __atomic_thread_fence(__ATOMIC_ACQUIRE);
            memcpy(m->state + c->n[1], from, c->n[2]);
            break;
        }
        case NP_WRITE_MAPPED: {
            volatile uint8_t *to = mapped(m, at, c->n[0], c->n[1]);
            if (!to || operand(m, at, &c->v[0], &a))
                return -1;
            __atomic_thread_fence(__ATOMIC_SEQ_CST);
            for (uint64_t i = 0; i < c->n[1]; i++)
                to[i] = (uint8_t)(a >> (8 * i));
            __atomic_thread_fence(__ATOMIC_SEQ_CST);
            break;
        }
        case NP_WAIT_MAPPED: {
            volatile uint8_t *word = mapped(m, at, c->n[0], 8);
            if (!word || operand(m, at, &c->v[0], &a))
                return -1;
            if (m->hooks->wait(m, word, a, c->n[1], why)) {
                /* the word's buffer named where the host names its buffers: the plan's name for it */
                char in[128] = "", offset[RT_GROUPED_BYTES];
                const char *name;
                uint64_t host, extent;
                if (m->hooks->mapped_buffer && m->hooks->mapped_buffer(m, c->n[0], &name, &host, &extent))
                    snprintf(in, sizeof in, " (buffer \"%s\" + %s)", name, rt_grouped(c->n[0] - host, offset));
                return np_fault(m, at, m->wait_status ? m->wait_status : NP_EXIT_WAIT, "mapped word 0x%llx%s: %s",
                                (unsigned long long)c->n[0], in, why);
            }
            break;
        }
        case NP_REPEAT:
            if (operand(m, at, &c->v[0], &a))
                return -1;
            for (uint64_t k = 0; k < a; k++) {
                int r = np_run(m, c->child[0]);
                if (r)
                    return r;
            }
            at = c->child[1];
            continue;
        case NP_BRANCH_ZERO:
            if (operand(m, at, &c->v[0], &a))
                return -1;
            at = c->child[a == 0 ? 0 : 1];
            continue;
        case NP_LOAD_IMAGE: {
            uint8_t *to = mapped(m, at, c->n[0], c->bytes_length);
            if (!to)
                return -1;
            memcpy(to, c->bytes, c->bytes_length);
            __atomic_thread_fence(__ATOMIC_SEQ_CST);
            break;
        }
        case NP_TELEMETRY:
            if (m->telemetry >= 0 && c->n[0] <= (uint64_t)m->telemetry) {
                /* the label up to its first NUL: a name padded with zeros (seed 003's 64-byte
                 * identity) makes a text line, not one carrying raw NULs (probe s27, finding 10) */
                const void *nul = c->bytes_length ? memchr(c->bytes, 0, c->bytes_length) : NULL;
                size_t shown = nul ? (size_t)((const uint8_t *)nul - c->bytes) : (size_t)c->bytes_length;
                fputs("native: telemetry ", stderr);
                np_put_shown(c->bytes, shown, stderr);
                fprintf(stderr, " +%llu us\n", (unsigned long long)(np_now_us() - m->start_us));
            }
            break;
        default: {
            if (c->code >= NP_CODE_COUNT)
                return np_fault(m, at, NP_EXIT_INTERNAL, "unknown command code %u", c->code);
            double started = np_profile_start();
            int failed = m->hooks->other(m, at, c);
            np_profile_command(c->code, started);
            if (failed)
                return -1;
            break;
        }
        }
        at = c->child[0];
    }
}
