/* The host runtime (host_runtime.h).  Layouts: docs/formats.md. */
#define _GNU_SOURCE
#include "host_runtime.h"
#include "host_io.h"
#include "host_settings.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

/* Format a message into err (RT_ERR_BYTES; err may be NULL) and return code. */
int rt_say(char *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, RT_ERR_BYTES, fmt, ap);
        va_end(ap);
    }
    return code;
}

static const char *report_name = "host";

void rt_report_as(const char *program)
{
    if (program && *program) {
        const char *slash = strrchr(program, '/');
        report_name = slash ? slash + 1 : program;
    }
}

const char *rt_report_name(void)
{
    return report_name;
}

void rt_report(const char *err)
{
    fprintf(stderr, "%s: error: %s\n", report_name, err);
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const uint8_t *p)
{
    return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* ------------------------------------------------------------------ */
/* files                                                               */

int rt_read_all(const char *path, const char *what, uint8_t **data, size_t *size, size_t max_bytes, int code,
                 char *err)
{
    /* host_io: no blocking open (a FIFO), a regular file, bounded, read whole */
    return rt_io_read(NULL, path, what, max_bytes, code, data, size, err);
}

int rt_read_exact(const char *path, const char *what, void *out, size_t expected, int code, char *err)
{
    uint8_t *data;
    size_t size;
    int rc = rt_io_read_exact(NULL, path, what, expected, code, &data, &size, err);
    if (rc)
        return rc;
    if (size != expected) {
        char shown[RT_IO_SHOWN_BYTES + 1], got[RT_GROUPED_BYTES], want[RT_GROUPED_BYTES];
        free(data);
        return rt_say(err, code, "%s %s: %s byte%s, expected exactly %s%s", what, rt_io_shown(path, shown),
                   rt_grouped(size, got), rt_plural(size), rt_grouped(expected, want),
                   size < expected ? " (truncated)" : "");
    }
    memcpy(out, data, expected);
    free(data);
    return 0;
}

int rt_publish_atomic(const char *path, const void *data, size_t size, char *err)
{
    return rt_publish_atomic_as(path, "output", data, size, err);
}

int rt_publish_atomic_as(const char *path, const char *option, const void *data, size_t size, char *err)
{
    /* host_io: the path checked (a regular file or nothing), temporary, fsync, rename */
    static rt_io_files files;
    memset(&files, 0, sizeof files);
    int rc = rt_io_add_output(&files, path, option, NULL, err);
    if (!rc)
        rc = rt_io_stage(&files, option, data, size, err);
    if (!rc)
        rc = rt_io_publish(&files, err);
    return rc;
}

/* ------------------------------------------------------------------ */
/* input record                                                        */

static uint64_t word_at(const uint8_t *p, uint32_t width)
{
    uint64_t v = 0;
    for (uint32_t i = 0; i < width; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/* 'text' of up to 40 bytes for a message, non-printables as '?' */
static void quote_bytes(char *buf, size_t n, const char *s, size_t len);

/* A word that is its expected value with its bytes reversed was written big-endian (every
 * record word is little-endian): the refusal says so (reference/host.py check_record too). */
#define RT_RECORD_BIG_ENDIAN " (its bytes reversed: the record was written big-endian; write it little-endian)"

/* `w`, a `width`-byte word, with its bytes in the other order */
static uint64_t word_swapped(uint64_t w, uint32_t width)
{
    uint64_t v = 0;
    for (uint32_t i = 0; i < width; i++)
        v = v << 8 | ((w >> (8 * i)) & 0xFF);
    return v;
}

/* `text`, a plan's string, as a message line shows it: a control character (a newline, ESC, DEL)
 * as '?' (docs/native-host.md: every plan's bytes a host prints on a message line), at most
 * `room` - 1 bytes (a message is cut at RT_ERR_BYTES - 1 anyway); `out`. */
static const char *shown_text(const char *text, char *out, size_t room)
{
    size_t n = 0;
    for (; text && text[n] && n + 1 < room; n++)
        out[n] = rt_control_char((unsigned char)text[n]) ? '?' : text[n];
    out[n] = 0;
    return out;
}

static int64_t signed_word(uint64_t w, uint32_t width);
static double binary_word(uint64_t w, int format);

/* `w`, a `width`-byte word's bits, as a refusal prints it, read as `format` (reference/host.py
 * shown_word): unsigned and signed (two's complement) in decimal; binary32 "%.9g", binary64 "%.17g"
 * (digits enough to read back to the same bits: IEEE 754-2008 5.12.2); inf, -inf; a NaN as nan
 * with its bits.  `out` holds 48 bytes. */
static const char *shown_word(uint64_t w, uint32_t width, int format, char out[48])
{
    if (format == RT_WORD_SIGNED) {
        snprintf(out, 48, "%lld", (long long)signed_word(w, width));
    } else if (format == RT_WORD_BINARY32 || format == RT_WORD_BINARY64) {
        double x = binary_word(w, format);
        if (isnan(x))
            snprintf(out, 48, "nan (0x%0*llx)", format == RT_WORD_BINARY32 ? 8 : 16, (unsigned long long)w);
        else if (isinf(x))
            snprintf(out, 48, "%s", x > 0 ? "inf" : "-inf");
        else
            snprintf(out, 48, format == RT_WORD_BINARY32 ? "%.9g" : "%.17g", x);
    } else {
        snprintf(out, 48, "%llu", (unsigned long long)w);
    }
    return out;
}

/* a signed `width`-byte word's bits sign-extended to 64, read as an int64_t */
static int64_t signed_word(uint64_t w, uint32_t width)
{
    uint64_t bits = width < 8 && (w >> (8 * width - 1) & 1) ? w | ~(((uint64_t)1 << (8 * width)) - 1) : w;
    int64_t v;
    memcpy(&v, &bits, sizeof v);
    return v;
}

/* a binary32 or binary64 word's bits as the value they encode (a binary32 widened exactly) */
static double binary_word(uint64_t w, int format)
{
    double x;
    if (format == RT_WORD_BINARY32) {
        uint32_t bits = (uint32_t)w;
        float f;
        memcpy(&f, &bits, sizeof f);
        x = f;
    } else {
        memcpy(&x, &w, sizeof x);
    }
    return x;
}

/* a BELOW check's test (reference/host.py word_below): `w` is less than `bound`, both read as
 * `format`; binary words as C's < compares them (a NaN is below nothing and nothing is below a
 * NaN, -0 equals 0: IEEE 754-2008 5.11) */
static int word_below(uint64_t w, uint64_t bound, uint32_t width, int format)
{
    if (format == RT_WORD_SIGNED)
        return signed_word(w, width) < signed_word(bound, width);
    if (format == RT_WORD_BINARY32 || format == RT_WORD_BINARY64)
        return binary_word(w, format) < binary_word(bound, format);
    return w < bound;
}

/* a SAME check's test (reference/host.py words_same): signed words each sign-extended from its own
 * width are the same number; other words the same bits */
static int words_same(uint64_t w, uint32_t width, uint64_t other, uint32_t other_width, int format)
{
    if (format == RT_WORD_SIGNED)
        return signed_word(w, width) == signed_word(other, other_width);
    return w == other;
}

int rt_record_verify(const rt_record_contract *c, const uint8_t *r, size_t size, const char *raw_path, char *err)
{
    /* the path as every message shows it (rt_io_shown): one line, shortened, the reason whole */
    char shown[RT_IO_SHOWN_BYTES + 1], what[RT_ERR_BYTES], got_size[RT_GROUPED_BYTES], want_size[RT_GROUPED_BYTES];
    const char *path = rt_io_shown(raw_path, shown);
    if (size != c->record_bytes)        /* the sizes grouped by threes (rt_grouped: "6,192,000 bytes") */
        return rt_say(err, RT_EXIT_BAD_INPUT, "input record %s: %s byte%s, expected exactly %s%s", path,
                   rt_grouped(size, got_size), rt_plural(size), rt_grouped(c->record_bytes, want_size),
                   size < c->record_bytes ? " (truncated)" : "");
    /* Every refusal below names the byte of the file its word lies at (offset + i x stride; a
     * same check the other word's too): "input record in.bin: token 3 at byte 1036 is 70000, not
     * below 50257" (reference/host.py check_record says the same). */
    for (uint32_t k = 0; k < c->check_count; k++) {
        const rt_record_check *x = &c->checks[k];
        shown_text(x->what, what, sizeof what);
        if (x->kind == RT_CHECK_BYTES) {
            /* no bytes: nothing to compare, and the plan's empty data is NULL (memcmp's arguments
             * must point at objects even for 0 bytes: C11 7.24.1p2) */
            if (x->data_bytes && memcmp(r + x->offset, x->data, x->data_bytes) != 0) {
                char want[64];
                quote_bytes(want, sizeof want, x->data, x->data_bytes);
                return rt_say(err, RT_EXIT_BAD_INPUT, "input record %s: %s at byte %llu is not %s", path, what,
                           (unsigned long long)x->offset, want);
            }
            continue;
        }
        uint64_t count = x->kind == RT_CHECK_WORD ? 1 : x->count;
        for (uint64_t i = 0; i < count; i++) {
            uint64_t at = x->offset + i * x->stride, w = word_at(r + at, x->width);
            char got[48], want[48];
            switch (x->kind) {
            case RT_CHECK_WORD:
                if (w != x->value)      /* the value's bytes reversed: a big-endian writer's */
                    return rt_say(err, RT_EXIT_BAD_INPUT, "input record %s: %s at byte %llu is %s, expected %s%s",
                               path, what, (unsigned long long)at, shown_word(w, x->width, x->format, got),
                               shown_word(x->value, x->width, x->format, want),
                               x->width > 1 && word_swapped(w, x->width) == x->value ? RT_RECORD_BIG_ENDIAN : "");
                break;
            case RT_CHECK_BELOW:
                if (!word_below(w, x->value, x->width, x->format))
                    return rt_say(err, RT_EXIT_BAD_INPUT, "input record %s: %s %llu at byte %llu is %s, not below "
                               "%s", path, what, (unsigned long long)i, (unsigned long long)at,
                               shown_word(w, x->width, x->format, got),
                               shown_word(x->value, x->width, x->format, want));
                break;
            case RT_CHECK_INDEX:
                if (w != i)
                    return rt_say(err, RT_EXIT_BAD_INPUT, "input record %s: %s %llu at byte %llu names %llu (the %llu "
                               "must list 0..%llu in order)", path, what, (unsigned long long)i, (unsigned long long)at,
                               (unsigned long long)w, (unsigned long long)count, (unsigned long long)(count - 1));
                break;
            case RT_CHECK_SAME: {
                uint64_t other = word_at(r + x->other + i * x->other_stride, x->other_width);
                if (!words_same(w, x->width, other, x->other_width, x->format))
                    return rt_say(err, RT_EXIT_BAD_INPUT, "input record %s: %s %llu at byte %llu is %s, but the word "
                               "at byte %llu says %s", path, what, (unsigned long long)i, (unsigned long long)at,
                               shown_word(w, x->width, x->format, got),
                               (unsigned long long)(x->other + i * x->other_stride),
                               shown_word(other, x->other_width, x->format, want));
                break;
            }
            default:
                return rt_say(err, RT_EXIT_INTERNAL, "input check %u has kind %d, which no check has", k, x->kind);
            }
        }
    }
    return 0;
}

int rt_record_read(const rt_record_contract *c, const char *path, uint8_t **record, char *err)
{
    uint8_t *data;
    size_t size;
    *record = NULL;
    /* a file past the record's size is refused unread, in rt_record_verify's words */
    int rc = rt_io_read_exact(NULL, path, "input record", (size_t)c->record_bytes, RT_EXIT_BAD_INPUT, &data, &size,
                              err);
    if (rc)
        return rc;
    rc = rt_record_verify(c, data, size, path, err);
    if (rc) {
        free(data);
        return rc;
    }
    *record = data;
    return 0;
}

/* ------------------------------------------------------------------ */
/* CRC-32 and the envelope                                             */

/* Slicing by 16 (16 tables, 16 bytes a round): a checkpoint of a GiB is checked on every
 * read and sealed on every publication, and the byte-at-a-time loop took 2-3 s a GiB. */
uint32_t rt_crc32(uint32_t crc, const void *data, size_t size)
{
    static uint32_t table[16][256];
    static int ready;
    if (!ready) {
        for (uint32_t i = 0; i < 256; i++) {
            uint32_t c = i;
            for (int k = 0; k < 8; k++)
                c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
            table[0][i] = c;
        }
        for (int t = 1; t < 16; t++)
            for (int i = 0; i < 256; i++)
                table[t][i] = (table[t - 1][i] >> 8) ^ table[0][table[t - 1][i] & 0xFF];
        ready = 1;
    }
    const uint8_t *p = data;
    crc = ~crc;
    for (; size >= 16; size -= 16, p += 16) {
        /* the 16 bytes as four little-endian words, the first xored with the CRC so far */
        uint32_t w[4];
        memcpy(w, p, 16);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        for (int k = 0; k < 4; k++)
            w[k] = __builtin_bswap32(w[k]);
#endif
        w[0] ^= crc;
#define T(k, b) table[15 - 4 * (k) - (b)][(w[k] >> (8 * (b))) & 0xFF]
        crc = T(0, 0) ^ T(0, 1) ^ T(0, 2) ^ T(0, 3) ^ T(1, 0) ^ T(1, 1) ^ T(1, 2) ^ T(1, 3) ^
              T(2, 0) ^ T(2, 1) ^ T(2, 2) ^ T(2, 3) ^ T(3, 0) ^ T(3, 1) ^ T(3, 2) ^ T(3, 3);
#undef T
    }
    while (size--)
        crc = table[0][(crc ^ *p++) & 0xFF] ^ (crc >> 8);
    return ~crc;
}

static size_t slen(const char *s) { return s ? strlen(s) : 0; }

uint32_t rt_envelope_header_bytes(const rt_contract *c)
{
    size_t ids = slen(c->schema) + slen(c->learner) + slen(c->data) + slen(c->seed);
    return (uint32_t)((RT_ENVELOPE_FIXED_BYTES + ids + 15) & ~(size_t)15);
}

uint64_t rt_envelope_total_bytes(const rt_contract *c)
{
    return rt_envelope_header_bytes(c) + c->payload_bytes + 12;
}

void rt_envelope_seal(const rt_contract *c, uint64_t step, uint8_t *e)
{
    uint32_t h = rt_envelope_header_bytes(c);
    memset(e, 0, h);
    memcpy(e, RT_ENVELOPE_MAGIC, 8);
    put32(e + 8, h);
    put32(e + 12, c->chunk_count);
    put64(e + 16, step);
    put64(e + 24, c->payload_bytes);
    put64(e + 32, c->chunk_bytes);
    put64(e + 40, c->updates_per_invocation);
    const char *ids[4] = { c->schema, c->learner, c->data, c->seed };
    size_t at = RT_ENVELOPE_FIXED_BYTES;
    for (int i = 0; i < 4; i++) {
        size_t n = slen(ids[i]);
        put32(e + 48 + 4 * i, (uint32_t)n);
        memcpy(e + at, ids[i] ? ids[i] : "", n);
        at += n;
    }
    put32(e + h + c->payload_bytes, rt_crc32(0, e, h + (size_t)c->payload_bytes));
    memcpy(e + h + c->payload_bytes + 4, RT_ENVELOPE_TRAILER, 8);
}

int rt_envelope_build(const rt_contract *c, uint64_t step, const void *payload, uint8_t **out, size_t *out_size,
                       char *err)
{
    uint64_t total = rt_envelope_total_bytes(c);
    uint8_t *e = malloc((size_t)total);
    if (!e)
        return rt_say(err, RT_EXIT_INTERNAL, "checkpoint: out of memory for %llu bytes", (unsigned long long)total);
    memcpy(e + rt_envelope_header_bytes(c), payload, (size_t)c->payload_bytes);
    rt_envelope_seal(c, step, e);
    *out = e;
    *out_size = (size_t)total;
    return 0;
}

static void quote_bytes(char *buf, size_t n, const char *s, size_t len)
{
    size_t k = 0;
    buf[k++] = '\'';
    for (size_t i = 0; i < len && i < 40 && k + 3 < n; i++)
        buf[k++] = (s[i] >= 32 && s[i] < 127) ? s[i] : '?';
    buf[k++] = '\'';
    buf[k] = 0;
}

/* 'text' quoted for a message: 60 bytes from byte `from` ("..." before when it is past the
 * start and after when more follows), non-printables as '?'. */
static void quote(char *buf, size_t n, const uint8_t *s, size_t len, size_t from)
{
    size_t k = 0;
    buf[k++] = '\'';
    if (from > 0) {
        memcpy(buf + k, "...", 3);
        k += 3;
    }
    for (size_t i = from; i < len && k + 5 < n; i++) {
        if (i == from + 60) {
            memcpy(buf + k, "...", 3);
            k += 3;
            break;
        }
        buf[k++] = (s[i] >= 32 && s[i] < 127) ? (char)s[i] : '?';
    }
    buf[k++] = '\'';
    buf[k] = 0;
}

/* What to do, the end of each checkpoint refusal (reference/envelope.py says the same) */
#define HINT_COPY    "copy it again from where it was written, or use an earlier checkpoint"
#define HINT_OURS    "pass a checkpoint this host's plan wrote"
#define HINT_FOREIGN "pass a checkpoint this host's plan wrote, or none to start fresh"

/* The envelope's four identities against the contract's: 0, RT_EXIT_BAD_CHECKPOINT when one runs
 * past the header (`h` bytes), RT_EXIT_FOREIGN_CHECKPOINT naming the first that differs (the
 * caller adds what to do).  `path` as a message shows it (rt_io_shown). */
static int identities_check(const rt_contract *c, const uint8_t *e, uint32_t h, const char *path, char *err)
{
    static const char *const part[4] = { "schema", "learner", "data", "seed" };
    const char *want[4] = { c->schema, c->learner, c->data, c->seed };
    size_t at = RT_ENVELOPE_FIXED_BYTES;
    for (int i = 0; i < 4; i++) {
        uint32_t n = le32(e + 48 + 4 * i);
        char ns[RT_GROUPED_BYTES], hs[RT_GROUPED_BYTES];
        if ((uint64_t)at + n > h)
            return rt_say(err, RT_EXIT_BAD_CHECKPOINT, "checkpoint %s: malformed: the %s identity (%s byte%s) runs "
                       "past the header (%s bytes)", path, part[i], rt_grouped(n, ns), rt_plural(n), rt_grouped(h, hs));
        size_t wn = slen(want[i]);
        if (n != wn || memcmp(e + at, want[i] ? want[i] : "", wn) != 0) {
            /* both quoted from a little before their first differing byte: long identities
             * often share a prefix (a model's name) and differ later (its configuration) */
            const uint8_t *ours = (const uint8_t *)(want[i] ? want[i] : "");
            size_t d = 0;
            while (d < n && d < wn && e[at + d] == ours[d])
                d++;
            size_t from = d > 20 ? d - 20 : 0;
            char found[96], expected[96];
            quote(found, sizeof found, e + at, n, from);
            quote(expected, sizeof expected, ours, wn, from);
            return rt_say(err, RT_EXIT_FOREIGN_CHECKPOINT,
                       "checkpoint %s: foreign checkpoint: %s identity differs from byte %zu: this host's is %s, the "
                       "checkpoint's is %s", path, part[i], d, expected, found);
        }
        at += n;
    }
    return 0;
}

int rt_envelope_check(const rt_contract *c, const uint8_t *e, size_t size, const char *raw_path,
                       const uint8_t **payload, uint64_t *step, char *err)
{
    /* the path as every message shows it (rt_io_shown): one line, shortened, the reason whole */
    char shown[RT_IO_SHOWN_BYTES + 1];
    const char *path = rt_io_shown(raw_path, shown);
    /* every size and count below is grouped by threes, as every size a host shows (rt_grouped) */
    char g1[RT_GROUPED_BYTES], g2[RT_GROUPED_BYTES], g3[RT_GROUPED_BYTES];
    /* 1. size and magic */
    if (size < RT_ENVELOPE_FIXED_BYTES)
        return rt_say(err, RT_EXIT_BAD_CHECKPOINT,
                   "checkpoint %s: truncated: %zu byte%s, shorter than the %u-byte header; " HINT_COPY, path, size,
                   rt_plural(size), RT_ENVELOPE_FIXED_BYTES);
    if (memcmp(e, RT_ENVELOPE_MAGIC, 8) != 0)
        return rt_say(err, RT_EXIT_BAD_CHECKPOINT, "checkpoint %s: not a checkpoint (magic is not %s); " HINT_OURS,
                   path, RT_ENVELOPE_MAGIC);
    /* 2. the header's sizes: H >= 64, a multiple of 16, H + payload + 12 the file's size */
    uint32_t h = le32(e + 8);
    uint64_t payload_bytes = le64(e + 24);
    int fits = h >= RT_ENVELOPE_FIXED_BYTES && h <= size && payload_bytes <= (uint64_t)size - h &&
               (uint64_t)h + payload_bytes + 12 == (uint64_t)size;
    uint32_t our_h = rt_envelope_header_bytes(c);
    if (!fits && (uint64_t)size == rt_envelope_total_bytes(c)) {
        /* a file of exactly this host's size is not cut short: a size field of its header is damaged */
        int which = h != our_h;
        return rt_say(err, RT_EXIT_BAD_CHECKPOINT, "checkpoint %s: corrupted: its header says %s %s, this host's "
                   "%s, in a file of this host's size (%s bytes): the header is damaged; " HINT_COPY, path,
                   which ? "header bytes" : "payload bytes", rt_grouped(which ? h : payload_bytes, g1),
                   rt_grouped(which ? our_h : c->payload_bytes, g2), rt_grouped(size, g3));
    }
    if (h < RT_ENVELOPE_FIXED_BYTES)
        return rt_say(err, RT_EXIT_BAD_CHECKPOINT, "checkpoint %s: not a checkpoint: header bytes %u, fewer than the "
                   "%u fixed bytes; " HINT_OURS, path, h, RT_ENVELOPE_FIXED_BYTES);
    if (h % 16)
        return rt_say(err, RT_EXIT_BAD_CHECKPOINT, "checkpoint %s: not a checkpoint: header bytes %u, not a multiple "
                   "of 16; " HINT_OURS, path, h);
    if (h > size)
        return rt_say(err, RT_EXIT_BAD_CHECKPOINT, "checkpoint %s: truncated: header bytes %s do not fit a %s-byte "
                   "file; " HINT_COPY, path, rt_grouped(h, g1), rt_grouped(size, g2));
    if (payload_bytes > (uint64_t)size - h)
        return rt_say(err, RT_EXIT_BAD_CHECKPOINT, "checkpoint %s: truncated: its header declares a %s-byte payload, "
                   "more than the %s byte%s after its %s-byte header; " HINT_COPY, path,
                   rt_grouped(payload_bytes, g1), rt_grouped((uint64_t)size - h, g2),
                   rt_plural((uint64_t)size - h), rt_grouped(h, g3));
    if ((uint64_t)h + payload_bytes + 12 != (uint64_t)size) {
        char got[RT_GROUPED_BYTES], hs[RT_GROUPED_BYTES], ps[RT_GROUPED_BYTES], says[RT_GROUPED_BYTES];
        return rt_say(err, RT_EXIT_BAD_CHECKPOINT,
                   "checkpoint %s: %s: %s byte%s, but its header (H %s + payload %s + 12) says %s; " HINT_COPY,
                   path, (uint64_t)size < (uint64_t)h + payload_bytes + 12 ? "truncated" : "has trailing bytes",
                   rt_grouped(size, got), rt_plural(size), rt_grouped(h, hs), rt_grouped(payload_bytes, ps),
                   rt_grouped((uint64_t)h + payload_bytes + 12, says));
    }
    /* 3. trailer: the sizes agree, so a wrong one is damage, not a file cut short */
    size_t body = h + (size_t)payload_bytes;
    if (memcmp(e + body + 4, RT_ENVELOPE_TRAILER, 8) != 0)
        return rt_say(err, RT_EXIT_BAD_CHECKPOINT, "checkpoint %s: corrupted: its trailer magic is not %s: the file "
                   "is damaged; " HINT_COPY, path, RT_ENVELOPE_TRAILER);
    /* 4. CRC */
    uint32_t stored = le32(e + body), computed = rt_crc32(0, e, body);
    if (stored != computed)
        return rt_say(err, RT_EXIT_BAD_CHECKPOINT,
                   "checkpoint %s: corrupted: CRC-32 stored 0x%08x, computed 0x%08x over bytes 0..%zu: the file is "
                   "damaged; " HINT_COPY, path, stored, computed, body);
    /* 5. the identities fit the header, and its padding after them is zero (docs/formats.md):
     * after the CRC, so that a damaged length is said to be damage */
    uint64_t identity_bytes = 0;
    for (int i = 0; i < 4; i++)
        identity_bytes += le32(e + 48 + 4 * i);
    if (identity_bytes > h - RT_ENVELOPE_FIXED_BYTES)
        return rt_say(err, RT_EXIT_BAD_CHECKPOINT, "checkpoint %s: not a checkpoint: header bytes %s cannot hold its "
                   "identities (%s byte%s); " HINT_OURS, path, rt_grouped(h, g1), rt_grouped(identity_bytes, g2),
                   rt_plural(identity_bytes));
    for (size_t k = RT_ENVELOPE_FIXED_BYTES + (size_t)identity_bytes; k < h; k++)
        if (e[k])
            return rt_say(err, RT_EXIT_BAD_CHECKPOINT, "checkpoint %s: not a checkpoint this format writes: the header's "
                       "padding after the identities is not zero (byte %zu); " HINT_OURS, path, k);
    /* 6..9. identities: schema, learner, data, seed */
    int rc = identities_check(c, e, h, path, err);
    if (rc) {
        if (rc == RT_EXIT_FOREIGN_CHECKPOINT) {
            size_t n = strlen(err);
            snprintf(err + n, RT_ERR_BYTES - n, "; " HINT_FOREIGN);
        }
        return rc;
    }
    /* 10. payload bytes */
    if (payload_bytes != c->payload_bytes)
        return rt_say(err, RT_EXIT_FOREIGN_CHECKPOINT,
                   "checkpoint %s: foreign checkpoint: payload bytes differ: this host's %s, the checkpoint's %s; "
                   HINT_FOREIGN, path, rt_grouped(c->payload_bytes, g1), rt_grouped(payload_bytes, g2));
    /* 11. chunk bytes, chunk count */
    uint64_t chunk_bytes = le64(e + 32);
    uint32_t chunk_count = le32(e + 12);
    if (chunk_bytes != c->chunk_bytes)
        return rt_say(err, RT_EXIT_FOREIGN_CHECKPOINT,
                   "checkpoint %s: foreign checkpoint: chunk bytes differ: this host's %s, the checkpoint's %s; "
                   HINT_FOREIGN, path, rt_grouped(c->chunk_bytes, g1), rt_grouped(chunk_bytes, g2));
    if (chunk_count != c->chunk_count)
        return rt_say(err, RT_EXIT_FOREIGN_CHECKPOINT,
                   "checkpoint %s: foreign checkpoint: chunk count differs: this host's %s, the checkpoint's %s; "
                   HINT_FOREIGN, path, rt_grouped(c->chunk_count, g1), rt_grouped(chunk_count, g2));
    /* 12. updates per invocation */
    uint64_t updates = le64(e + 40);
    if (updates != c->updates_per_invocation)
        return rt_say(err, RT_EXIT_FOREIGN_CHECKPOINT,
                   "checkpoint %s: foreign checkpoint: updates per invocation differ: this host's %s, the "
                   "checkpoint's %s; " HINT_FOREIGN, path, rt_grouped(c->updates_per_invocation, g1),
                   rt_grouped(updates, g2));
    /* 13. the chunks tile the payload, the last one possibly a shorter tail (count = payload / chunk,
     * as checkpointEnvelopeChunkCount: a payload need not be a whole number of chunks) */
    if (chunk_bytes * chunk_count > payload_bytes || payload_bytes - chunk_bytes * chunk_count >= chunk_bytes)
        return rt_say(err, RT_EXIT_FOREIGN_CHECKPOINT, "checkpoint %s: foreign checkpoint: chunk bytes: %s chunks of "
                   "%s bytes do not make its %s-byte payload; " HINT_FOREIGN, path, rt_grouped(chunk_count, g1),
                   rt_grouped(chunk_bytes, g2), rt_grouped(payload_bytes, g3));
    if (payload)
        *payload = e + h;
    if (step)
        *step = le64(e + 16);
    return 0;
}

/* A checkpoint file larger than this host's can be is often another configuration's: when its
 * header says so (magic, then an identity that differs), it is refused as foreign (exit 5) like
 * a smaller one; else the size refusal in err stands.  Only a regular file's first MiB is read. */
static int oversized_foreign(const rt_contract *c, const char *path, size_t most, int rc, char *err)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || (size_t)st.st_size <= most)
        return rc;
    size_t want = 1u << 20;
    uint8_t *head = malloc(want);
    int fd = head ? open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK) : -1;
    ssize_t got = fd >= 0 ? read(fd, head, want) : -1;
    if (fd >= 0)
        close(fd);
    int out = rc;
    if (got >= RT_ENVELOPE_FIXED_BYTES && memcmp(head, RT_ENVELOPE_MAGIC, 8) == 0) {
        uint32_t h = le32(head + 8);
        char why[RT_ERR_BYTES], shown[RT_IO_SHOWN_BYTES + 1];
        if (h >= RT_ENVELOPE_FIXED_BYTES && h <= (size_t)got &&
            identities_check(c, head, h, rt_io_shown(path, shown), why) == RT_EXIT_FOREIGN_CHECKPOINT) {
            snprintf(err, RT_ERR_BYTES, "%.*s (and %lld bytes, more than this host's checkpoint); " HINT_FOREIGN,
                     RT_ERR_BYTES - 128, why, (long long)st.st_size);
            out = RT_EXIT_FOREIGN_CHECKPOINT;
        }
    }
    free(head);
    return out;
}

int rt_checkpoint_load(const rt_contract *c, const char *path, uint8_t **envelope, const uint8_t **payload,
                       uint64_t *step, char *err)
{
    uint8_t *data;
    size_t size;
    size_t most = (size_t)rt_envelope_total_bytes(c) + (1u << 20);
    int rc = rt_read_all(path, "checkpoint", &data, &size, most, RT_EXIT_BAD_CHECKPOINT, err);
    if (rc) {
        if (rc == RT_EXIT_BAD_CHECKPOINT)
            rc = oversized_foreign(c, path, most, rc, err);
        return rc;
    }
    if ((rc = rt_envelope_check(c, data, size, path, payload, step, err))) {
        free(data);
        return rc;
    }
    *envelope = data;
    return 0;
}

int rt_checkpoint_read(const rt_contract *c, const char *path, void *payload, uint64_t *step, char *err)
{
    uint8_t *envelope;
    const uint8_t *p;
    int rc = rt_checkpoint_load(c, path, &envelope, &p, step, err);
    if (rc)
        return rc;
    memcpy(payload, p, (size_t)c->payload_bytes);
    free(envelope);
    return 0;
}

int rt_checkpoint_write(const rt_contract *c, const char *path, uint64_t step, const void *payload, char *err)
{
    uint8_t *e;
    size_t n;
    int rc = rt_envelope_build(c, step, payload, &e, &n, err);
    if (rc)
        return rc;
    rc = rt_publish_atomic_as(path, "--checkpoint-out", e, n, err);
    free(e);
    return rc;
}

/* ------------------------------------------------------------------ */
/* fresh initialization                                                */

uint64_t rt_fnv1a64(const void *data, size_t size)
{
    const uint8_t *p = data;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < size; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

void rt_init_chunk(const rt_initializer *init, void *out, size_t bytes)
{
    if (init->kind != RT_INIT_SPLITMIX64) {
        memset(out, 0, bytes);
        return;
    }
    float *p = out;
    size_t count = bytes / sizeof *p;
    uint64_t state = rt_fnv1a64(init->seed, strlen(init->seed));
    for (size_t i = 0; i < count; i++) {
        state += 0x9E3779B97F4A7C15ull;
        uint64_t z = state;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z = z ^ (z >> 31);
        int64_t u = (int64_t)(z >> init->shift);
        p[i] = (float)((double)(u - (int64_t)init->center) / (double)init->denominator);
    }
}

/* ------------------------------------------------------------------ */
/* command line                                                        */

void rt_print_usage(const char *program, const char *identity, uint64_t record_bytes, int checkpoint, void *stream)
{
    FILE *out = stream;
    fprintf(out,
            "usage: %s train|predict --input RECORD %s --checkpoint-out OUT\n"
            "       %*s --predictions FILE --result FILE\n"
            "\n"
            "The native host of ", program, checkpoint == RT_CHECKPOINT_NEEDED ? "--checkpoint IN" : "[--checkpoint IN]",
            (int)strlen(program), "");
    /* the plan's identity on one line, its control characters as '?' (as shown_text) */
    for (const char *c = identity; c && *c; c++)
        fputc(rt_control_char((unsigned char)*c) ? '?' : *c, out);
    fprintf(out,
            ".\n"
            "  train     the plan's whole schedule\n"
            "  predict   the schedule up to its operation step (no training, the checkpoint handed on)\n"
            "  --input RECORD        the %llu-byte input record\n"
            "  --checkpoint IN       resume from this checkpoint (%s)\n"
            "  --checkpoint-out OUT  where the new checkpoint is published (atomically)\n"
            "  --predictions FILE    the predictions (published atomically)\n"
            "  --result FILE         the result record (published atomically)\n"
            "  --version             (alone) the target, driver branch, bobc and plan identity this host was built for\n"
            "\n"
            "exit codes: 0 ok, 1 internal error (out of memory, a bug), 2 usage, 3 bad input record,\n"
            "            4 bad checkpoint, 5 foreign checkpoint, 6 no GPU / driver refused,\n"
            "            7 GPU fault or timeout, 8 output write failed,\n"
            "            9 host file damaged (copy it again or rebuild it)\n",
            (unsigned long long)record_bytes,
            checkpoint == RT_CHECKPOINT_NEEDED      ? "required: this plan starts no request from its fresh state"
            : checkpoint == RT_CHECKPOINT_TRAIN_NEEDS ? "required by train; a predict without one: fresh initialization"
                                                    : "default: fresh initialization");
}

const char *rt_stdout_failure(void *stream)
{
    FILE *out = stream;
    int failed = ferror(out), e = errno;
    if (fflush(out) != 0) {
        failed = 1;
        e = errno;
    }
    if (!failed)
        return NULL;
    return rt_write_failure(e ? e : EIO);
}

void rt_ignore_file_size_signal(void)
{
    struct sigaction now;
    if (sigaction(SIGXFSZ, NULL, &now) != 0 || (now.sa_flags & SA_SIGINFO) || now.sa_handler != SIG_DFL)
        return;
    struct sigaction ignore;
    memset(&ignore, 0, sizeof ignore);
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGXFSZ, &ignore, NULL);
}

const char *rt_write_failure(int e)
{
    static _Thread_local char words[192];
    struct rlimit limit;
    if (e != EFBIG || getrlimit(RLIMIT_FSIZE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY)
        return strerror(e);
    snprintf(words, sizeof words, "%s (the file size limit, ulimit -f, is %llu byte%s: raise it, then run again)",
             strerror(e), (unsigned long long)limit.rlim_cur, rt_plural((unsigned long long)limit.rlim_cur));
    return words;
}

int rt_parse_args(int argc, char **argv, rt_args *a, char *err)
{
    return rt_parse_args_named(argc, argv, a, "RECORD", err);
}

int rt_parse_args_named(int argc, char **argv, rt_args *a, const char *input_name, char *err)
{
    memset(a, 0, sizeof *a);
    static const struct { const char *name; size_t off; } opts[] = {
        { "--input", offsetof(rt_args, input) },
        { "--checkpoint", offsetof(rt_args, checkpoint_in) },
        { "--checkpoint-out", offsetof(rt_args, checkpoint_out) },
        { "--predictions", offsetof(rt_args, predictions) },
        { "--result", offsetof(rt_args, result) },
    };
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            a->help = 1;
            return 0;
        }
        if (strcmp(arg, "--version") == 0)
            return rt_say(err, RT_EXIT_USAGE, "--version is given alone, as the only argument");
        if (strncmp(arg, "--version=", 10) == 0)     /* a known option, not an unknown one (probe s31 hostexe 11) */
            return rt_say(err, RT_EXIT_USAGE, "--version takes no value");
        /* a word the user gave, as a message line shows it: a control character as '?', so the
         * refusal stays one line (probe s42 cli3: `HOST $'tr\nain'` split it in two) */
        char word[RT_ERR_BYTES];
        shown_text(arg, word, sizeof word);
        if (arg[0] == '-' && strncmp(arg, "--", 2) != 0)
            return rt_say(err, RT_EXIT_USAGE, "unknown option '%s' (see --help)", word);
        if (strncmp(arg, "--", 2) == 0) {
            const char *eq = strchr(arg, '=');
            size_t name_len = eq ? (size_t)(eq - arg) : strlen(arg);
            int found = -1;
            for (unsigned k = 0; k < sizeof opts / sizeof opts[0]; k++)
                if (strlen(opts[k].name) == name_len && strncmp(opts[k].name, arg, name_len) == 0)
                    found = (int)k;
            if (found < 0)
                return rt_say(err, RT_EXIT_USAGE, "unknown option '%.*s' (see --help)", (int)name_len, word);
            const char *value = eq ? eq + 1 : NULL;
            if (!value) {
                if (i + 1 >= argc)
                    return rt_say(err, RT_EXIT_USAGE, "option %s needs a value", opts[found].name);
                /* `--input --checkpoint-out c`: the value is missing, not '--checkpoint-out' (as
                 * argparse judges it: a word starting with '-', other than '-' alone, is an option) */
                const char *next = argv[i + 1];
                if (next[0] == '-' && next[1])
                    return rt_say(err, RT_EXIT_USAGE, "option %s needs a value; the next word, '%s', is an option "
                                  "(write %s=VALUE for a value starting with '-')", opts[found].name,
                                  shown_text(next, word, sizeof word), opts[found].name);
                value = argv[++i];
            }
            if (!*value)
                return rt_say(err, RT_EXIT_USAGE, "option %s has an empty value", opts[found].name);
            const char **slot = (const char **)((char *)a + opts[found].off);
            if (*slot)
                return rt_say(err, RT_EXIT_USAGE, "option %s given twice", opts[found].name);
            *slot = value;
            continue;
        }
        if (a->op)
            return rt_say(err, RT_EXIT_USAGE, "unexpected argument '%s' (the operation is already given)", word);
        if (strcmp(arg, "train") == 0)
            a->op = RT_OP_TRAIN;
        else if (strcmp(arg, "predict") == 0)
            a->op = RT_OP_PREDICT;
        else
            return rt_say(err, RT_EXIT_USAGE, "unknown operation '%s' (expected train or predict)", word);
    }
    if (!a->op)
        return rt_say(err, RT_EXIT_USAGE, "missing the operation: train or predict (see --help)");
    if (!a->input)
        return rt_say(err, RT_EXIT_USAGE, "missing --input %s", input_name);
    if (!a->checkpoint_out)
        return rt_say(err, RT_EXIT_USAGE, "missing --checkpoint-out OUT");
    if (!a->predictions)
        return rt_say(err, RT_EXIT_USAGE, "missing --predictions FILE");
    if (!a->result)
        return rt_say(err, RT_EXIT_USAGE, "missing --result FILE");
    /* the same text twice is a usage error; two spellings of one file are host_io's (exit 8) */
    if (!strcmp(a->checkpoint_out, a->predictions) || !strcmp(a->checkpoint_out, a->result) ||
        !strcmp(a->predictions, a->result))
        return rt_say(err, RT_EXIT_USAGE, "--checkpoint-out, --predictions and --result must be three different files");
    return 0;
}
