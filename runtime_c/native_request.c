/* See native_request.h.  Every message here has its twin in
 * compiler/bobc/reference/native_request.py (tests/native/test_native_request.py holds them). */
#define _GNU_SOURCE
#include "native_request.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sha256.h"

static int say(char *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int say(char *err, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, RT_ERR_BYTES, fmt, ap);
    va_end(ap);
    return code;
}

static uint64_t le(const uint8_t *p, int width)
{
    uint64_t v = 0;
    for (int i = width - 1; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

/* ---- the request's bytes (compiler/bobc/native/request.py parse_request) ---- */

typedef struct {
    const uint8_t *data;
    uint64_t size, at;
    char *err;
    int failed;
} reader;

static uint64_t natural(reader *r, const char *what)
{
    if (r->failed)
        return 0;
    if (r->size - r->at < 8) {
        say(r->err, -1, "cut short at byte %llu (%s)", (unsigned long long)r->at, what);
        r->failed = 1;
        return 0;
    }
    uint64_t v = le(r->data + r->at, 8);
    r->at += 8;
    return v;
}

static const uint8_t *field_bytes(reader *r, const char *what, uint64_t *length)
{
    *length = natural(r, what);
    if (r->failed)
        return NULL;
    if (*length > r->size - r->at) {
        say(r->err, -1, "cut short at byte %llu (%s)", (unsigned long long)r->at, what);
        r->failed = 1;
        return NULL;
    }
    const uint8_t *p = r->data + r->at;
    r->at += *length;
    return p;
}

static char *text_copy(const uint8_t *p, uint64_t n)
{
    char *s = malloc(n + 1);
    if (s) {
        memcpy(s, p, n);
        s[n] = 0;
    }
    return s;
}

int np_request_parse(const uint8_t *bytes, uint64_t size, np_request_spec *s, char *err)
{
    memset(s, 0, sizeof *s);
    reader r = { bytes, size, 0, err, 0 };
    static const char *const names[4] = { "schema", "learner", "data", "seed" };
    for (int i = 0; i < 4; i++) {
        uint64_t n;
        const uint8_t *p = field_bytes(&r, names[i], &n);
        if (r.failed)
            return -1;
        if (memchr(p, 0, n))
            return say(err, -1, "the %s identity holds a zero byte", names[i]);
        if (!(s->identity[i] = text_copy(p, n)))
            return say(err, -1, "out of memory");
    }
    s->payload_bytes = natural(&r, "payload bytes");
    s->chunk_bytes = natural(&r, "chunk bytes");
    s->updates = natural(&r, "updates");
    if (r.failed)
        return -1;
    if (s->payload_bytes == 0 || s->chunk_bytes == 0 || s->chunk_bytes > s->payload_bytes)
        return say(err, -1, "a %llu-byte payload in chunks of %llu byte%s (a chunk is 1 byte to the payload)",
                   (unsigned long long)s->payload_bytes, (unsigned long long)s->chunk_bytes, rt_plural(s->chunk_bytes));
    if (s->payload_bytes / s->chunk_bytes > NP_REQUEST_MAX_CHUNKS)
        return say(err, -1, "a %llu-byte payload in chunks of %llu byte%s is %llu chunks, more than the %u a "
                   "checkpoint's 32-bit chunk count holds (make the chunks larger)", (unsigned long long)s->payload_bytes,
                   (unsigned long long)s->chunk_bytes, rt_plural(s->chunk_bytes),
                   (unsigned long long)(s->payload_bytes / s->chunk_bytes), NP_REQUEST_MAX_CHUNKS);
    uint64_t kind = natural(&r, "input");
    if (r.failed)
        return -1;
    if (kind == 1) {
        uint64_t n;
        const uint8_t *magic = field_bytes(&r, "stream magic", &n);
        s->version = natural(&r, "version");
        s->token_bytes = natural(&r, "token bytes");
        s->vocabulary = natural(&r, "vocabulary");
        s->header_bytes = natural(&r, "header bytes");
        if (r.failed)
            return -1;
        /* the magic is the header's first bytes: its version word starts at byte 8 (docs/formats.md, "Token
         * stream"), so a longer magic would be compared over the header's own words */
        if (n > 8 || (s->token_bytes != 1 && s->token_bytes != 2 && s->token_bytes != 4) || s->header_bytes < 64 ||
            s->header_bytes > (1u << 20))
            return say(err, -1, "a token stream of %llu-byte tokens, a %llu-byte header and a %llu-byte magic (tokens "
                       "of 1, 2 or 4 bytes, a header of 64 bytes to 1 MiB, a magic of at most 8: the header's version "
                       "starts at byte 8)",
                       (unsigned long long)s->token_bytes, (unsigned long long)s->header_bytes, (unsigned long long)n);
        /* the stream header's version and vocabulary are 32-bit words (docs/formats.md, "Token stream"): a
         * wider value no header holds, so every stream would be refused */
        if (s->version > UINT32_MAX || s->vocabulary > UINT32_MAX)
            return say(err, -1, "a token stream of version %llu and vocabulary %llu (a stream header's version and "
                       "vocabulary are 32-bit words, at most %lu: no stream would match)",
                       (unsigned long long)s->version, (unsigned long long)s->vocabulary, (unsigned long)UINT32_MAX);
        s->stream = 1;
        memcpy(s->magic, magic, n);
        s->magic_length = n;
    } else if (kind != 0) {
        return say(err, -1, "input kind %llu (0 a record, 1 a token stream)", (unsigned long long)kind);
    }
    uint32_t capacity = 0;
    for (;;) {
        uint64_t k = natural(&r, "fresh state");
        if (r.failed)
            return -1;
        if (k == NP_FRESH_END)
            break;
        if (s->fresh_count == NP_REQUEST_MAX_INITIALIZERS)
            return say(err, -1, "more than %u initializers", NP_REQUEST_MAX_INITIALIZERS);
        if (s->fresh_count == capacity) {
            capacity = capacity ? 2 * capacity : 8;
            rt_initializer *grown = realloc(s->fresh, capacity * sizeof *grown);
            char **seeds = grown ? realloc(s->fresh_seed, capacity * sizeof *seeds) : NULL;
            if (grown)
                s->fresh = grown;
            if (!grown || !seeds)
                return say(err, -1, "out of memory");
            s->fresh_seed = seeds;
        }
        rt_initializer *init = &s->fresh[s->fresh_count];
        memset(init, 0, sizeof *init);
        s->fresh_seed[s->fresh_count] = NULL;
        s->fresh_count++;
        if (k == NP_FRESH_ZERO) {
            init->kind = RT_INIT_ZERO;
        } else if (k == NP_FRESH_SPLITMIX64) {
            uint64_t n;
            const uint8_t *seed = field_bytes(&r, "seed", &n);
            uint64_t shift = natural(&r, "shift");
            init->center = natural(&r, "center");
            init->denominator = natural(&r, "denominator");
            if (r.failed)
                return -1;
            if (shift == 0 || shift > 63 || init->denominator == 0)
                return say(err, -1, "an initializer with shift %llu and denominator %llu", (unsigned long long)shift,
                           (unsigned long long)init->denominator);
            if (init->center > (uint64_t)INT64_MAX)
                return say(err, -1, "an initializer with center %llu (at most 2^63 - 1: the draw less the center "
                           "is a signed 64-bit integer)", (unsigned long long)init->center);
            if (memchr(seed, 0, n))
                return say(err, -1, "an initializer's seed holds a zero byte");
            if (!(s->fresh_seed[s->fresh_count - 1] = text_copy(seed, n)))
                return say(err, -1, "out of memory");
            init->kind = RT_INIT_SPLITMIX64;
            init->seed = s->fresh_seed[s->fresh_count - 1];
            init->shift = (uint32_t)shift;
        } else {
            return say(err, -1, "initializer kind %llu (1 zero, 2 SplitMix64)", (unsigned long long)k);
        }
    }
    s->cursor_base = natural(&r, "cursor base");
    s->cursor_scale = natural(&r, "cursor scale");
    static const char *const reach[2][3] = { { "train reach", "train cursor", "train publications" },
                                             { "predict reach", "predict cursor", "predict publications" } };
    for (int op = 0; op < 2; op++) {
        s->reach[op].records = natural(&r, reach[op][0]);
        s->reach[op].cursor = natural(&r, reach[op][1]);
        s->reach[op].publications = natural(&r, reach[op][2]);
    }
    if (r.failed)
        return -1;
    if (r.at != size)
        return say(err, -1, "%llu byte%s after its last field", (unsigned long long)(size - r.at),
                   rt_plural(size - r.at));
    return 0;
}

void np_request_spec_free(np_request_spec *s)
{
    for (int i = 0; i < 4; i++)
        free(s->identity[i]);
    for (uint32_t i = 0; i < s->fresh_count; i++)
        free(s->fresh_seed[i]);
    free(s->fresh_seed);
    free(s->fresh);
    memset(s, 0, sizeof *s);
}

/* ---- the input ---- */

static void printable(char *out, const uint8_t *p, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++)
        out[i] = p[i] >= 32 && p[i] < 127 ? (char)p[i] : '?';
    out[n] = 0;
}

/* Whether the file's first TEXT_WINDOW bytes (all of it when shorter; at least one) are text:
 * UTF-8 (a sequence the window cuts counts), no control byte but tab, line feed and carriage
 * return.  A stream's header has zero bytes in its little-endian words, so never is. */
#define TEXT_WINDOW 64
static int starts_as_text(const uint8_t *d, size_t size)
{
    size_t n = size < TEXT_WINDOW ? size : TEXT_WINDOW, i = 0;
    if (n == 0)
        return 0;
    while (i < n) {
        uint8_t b = d[i];
        if (b < 0x80) {
            if ((b < 32 && b != '\t' && b != '\n' && b != '\r') || b == 127)
                return 0;
            i++;
            continue;
        }
        int more = b >= 0xC2 && b <= 0xDF ? 1 : b >= 0xE0 && b <= 0xEF ? 2 : b >= 0xF0 && b <= 0xF4 ? 3 : -1;
        if (more < 0)
            return 0;
        uint8_t low = b == 0xE0 ? 0xA0 : b == 0xF0 ? 0x90 : 0x80, high = b == 0xED ? 0x9F : b == 0xF4 ? 0x8F : 0xBF;
        for (int k = 1; k <= more && i + k < n; k++) {
            uint8_t c = d[i + k];
            if (c < (k == 1 ? low : 0x80) || c > (k == 1 ? high : 0xBF))
                return 0;
        }
        i += (size_t)more + 1;
    }
    return 1;
}

/* The token stream's header, size, digest and tokens (docs/formats.md, "Token stream"). */
static int check_stream(const np_request_spec *s, const uint8_t *d, size_t size, const char *path, char *err)
{
#define REFUSE(part, ...) do { \
        char why_[RT_ERR_BYTES / 2]; \
        snprintf(why_, sizeof why_, __VA_ARGS__); \
        return say(err, RT_EXIT_BAD_INPUT, "input %s: token stream %s: %s", path, part, why_); \
    } while (0)
    /* a text given where its stream belongs: the refusal says how a text becomes one */
    const char *text = starts_as_text(d, size) ? "the file starts as text, and a text is made a token stream first: "
                                                 "docs/formats.md, \"Token stream\"" : NULL;
    if (size < s->header_bytes)
        REFUSE("header", "%zu byte%s, shorter than the %llu-byte header%s%s%s", size, rt_plural(size),
               (unsigned long long)s->header_bytes, text ? " (" : "", text ? text : "", text ? ")" : "");
    if (memcmp(d, s->magic, s->magic_length) != 0) {
        char have[40], want[40];
        printable(have, d, s->magic_length);
        printable(want, s->magic, s->magic_length);
        REFUSE("magic", "'%s' is not '%s' (not a token stream this host reads%s%s)", have, want, text ? "; " : "",
               text ? text : "");
    }
    static const char *const parts[4] = { "version", "token bytes", "vocabulary", "header bytes" };
    const uint64_t want[4] = { s->version, s->token_bytes, s->vocabulary, s->header_bytes };
    for (int i = 0; i < 4; i++) {
        uint64_t have = le(d + 8 + 4 * i, 4);
        if (have != want[i])
            REFUSE(parts[i], "%llu, this host reads %llu", (unsigned long long)have, (unsigned long long)want[i]);
    }
    uint64_t count = le(d + 24, 8);
    if (count > (size - s->header_bytes) / s->token_bytes || s->header_bytes + count * s->token_bytes != size)
        REFUSE("token count", "the header says %llu token%s, the file has %zu byte%s (%llu-byte header, "
               "%llu-byte tokens)", (unsigned long long)count, rt_plural(count), size, rt_plural(size),
               (unsigned long long)s->header_bytes,
               (unsigned long long)s->token_bytes);
    uint8_t digest[32];
    rt_sha256(d + s->header_bytes, size - s->header_bytes, digest);
    if (memcmp(digest, d + 32, 32) != 0)
        REFUSE("sha256", "the tokens do not match the header's digest (corrupted)");
    for (uint64_t i = 0; i < count; i++) {
        uint64_t token = le(d + s->header_bytes + i * s->token_bytes, (int)s->token_bytes);
        if (token >= s->vocabulary)
            REFUSE("token", "token %llu at index %llu is outside the vocabulary of %llu", (unsigned long long)token,
                   (unsigned long long)i, (unsigned long long)s->vocabulary);
    }
    return 0;
#undef REFUSE
}

/* The input holds what the operation's reads reach: from its start, and from the cursor.  A refusal at the
 * cursor names the checkpoint its step came from (or the fresh state). */
static int check_reach(const np_request *r, const char *path, char *err)
{
    char shown[RT_IO_SHOWN_BYTES + 1], source[RT_IO_SHOWN_BYTES + 32] = "the fresh state";
    if (r->args.checkpoint_in)
        snprintf(source, sizeof source, "checkpoint %s", rt_io_shown(r->args.checkpoint_in, shown));
    int predict = r->args.op == RT_OP_PREDICT;
    const char *op = predict ? "predict" : "train";
    const np_reach *reach = &r->spec.reach[predict];
    unsigned long long size = r->input_size;
    if (reach->records > size)
        return say(err, RT_EXIT_BAD_INPUT, "input %s: %llu byte%s, but a %s request reads %llu byte%s of it", path,
                   size, rt_plural(size), op, (unsigned long long)reach->records, rt_plural(reach->records));
    if (reach->cursor == 0)
        return 0;
    /* the cursor in 128 bits: (2^64 - 1)^2 + 2^64 - 1 fits, so the byte named is where it is */
    unsigned __int128 at = (unsigned __int128)r->step * r->spec.cursor_scale + r->spec.cursor_base;
    if (at > size) {
        char digits[48], *text = digits + sizeof digits - 1;
        *text = 0;
        do
            *--text = (char)('0' + (int)(at % 10));
        while ((at /= 10) != 0);
        return say(err, RT_EXIT_BAD_INPUT, "input %s: %s's step %llu puts the cursor at byte %s, past the stream's "
                   "%llu byte%s (a checkpoint of a longer stream?)", path, source, (unsigned long long)r->step, text,
                   size, rt_plural(size));
    }
    unsigned long long cursor = (unsigned long long)at;
    if (reach->cursor > size - cursor) {
        /* a token stream's reach in tokens too, where it is whole tokens from a token's start */
        char tokens[128] = "";
        const np_request_spec *s = &r->spec;
        if (s->stream && cursor >= s->header_bytes && (cursor - s->header_bytes) % s->token_bytes == 0 &&
            reach->cursor % s->token_bytes == 0)
            snprintf(tokens, sizeof tokens, " (%llu token%s from the cursor on, %llu needed: give a longer stream)",
                     (size - cursor) / s->token_bytes, rt_plural((size - cursor) / s->token_bytes),
                     (unsigned long long)(reach->cursor / s->token_bytes));
        char from[sizeof source + 48] = "";
        if (r->args.checkpoint_in)
            snprintf(from, sizeof from, "; the cursor is %s's step %llu", source, (unsigned long long)r->step);
        return say(err, RT_EXIT_BAD_INPUT, "input %s: the stream is shorter than a %s request needs: it reads "
                   "%llu byte%s from the cursor at byte %llu, to byte %llu; the stream has %llu byte%s%s%s", path, op,
                   (unsigned long long)reach->cursor, rt_plural(reach->cursor), cursor,
                   cursor + (unsigned long long)reach->cursor, size, rt_plural(size), tokens, from);
    }
    return 0;
}

/* The fresh state: initializer i fills chunk i (the last may be a tail), zeros past the list. */
static void fresh_payload(const np_request_spec *s, uint8_t *out)
{
    memset(out, 0, s->payload_bytes);
    for (uint32_t i = 0; i < s->fresh_count; i++) {
        uint64_t start = (uint64_t)i * s->chunk_bytes;
        if (start >= s->payload_bytes)
            break;
        uint64_t size = s->payload_bytes - start < s->chunk_bytes ? s->payload_bytes - start : s->chunk_bytes;
        rt_init_chunk(&s->fresh[i], out + start, (size_t)(size & ~(uint64_t)3));
    }
}

/* The input's name in the usage and the refusals: what the request reads (docs/native-host.md) */
static const char *input_name(const np_request_spec *s)
{
    return s->stream ? "STREAM" : "RECORD";
}

static void usage(const char *program, const np_request_spec *s)
{
    printf("usage: %s train|predict --input %s [--checkpoint IN] --checkpoint-out OUT --predictions FILE "
           "--result FILE\n", program, input_name(s));
    fflush(stdout);
}

int np_request_open(np_request *r, const uint8_t *bytes, uint64_t size, int argc, char **argv, const char *program,
                    rt_io_files *files, char *err)
{
    memset(r, 0, sizeof *r);
    if (np_request_parse(bytes, size, &r->spec, err))
        return RT_EXIT_INTERNAL;
    np_request_spec *s = &r->spec;
    r->contract = (rt_contract){ s->identity[0], s->identity[1], s->identity[2], s->identity[3], s->payload_bytes,
                                 s->chunk_bytes, (uint32_t)(s->payload_bytes / s->chunk_bytes) /* parse: fits */,
                                 s->updates };
    /* rt_parse_args reads argv[1..]: the arguments after the program's name */
    char **with_name = calloc((size_t)argc + 2, sizeof *with_name);
    if (!with_name)
        return say(err, RT_EXIT_INTERNAL, "out of memory");
    with_name[0] = (char *)program;
    memcpy(with_name + 1, argv, (size_t)argc * sizeof *argv);
    int rc = rt_parse_args_named(argc + 1, with_name, &r->args, input_name(s), err);
    free(with_name);
    if (rc)
        return rc;
    if (r->args.help) {
        usage(program, s);
        return NP_REQUEST_HELP;
    }
    const char *named[] = { r->args.predictions, r->args.result, r->args.checkpoint_out };
    if ((rc = rt_io_recover(named, 3, err)))
        return rc;
    if ((rc = rt_io_read(files, r->args.input, "input", RT_IO_INPUT_LIMIT_BYTES, RT_EXIT_BAD_INPUT, &r->input,
                         &r->input_size, err)))
        return rc;
    char input_shown[RT_IO_SHOWN_BYTES + 1];      /* the input as every message shows it (rt_io_shown) */
    const char *input = rt_io_shown(r->args.input, input_shown);
    if (s->stream && (rc = check_stream(s, r->input, r->input_size, input, err)))
        return rc;
    if (r->args.checkpoint_in) {
        if ((rc = rt_checkpoint_load(&r->contract, r->args.checkpoint_in, &r->payload_owner, &r->payload, &r->step,
                                     err)) ||
            (rc = rt_io_note_input(files, r->args.checkpoint_in, "checkpoint", RT_EXIT_BAD_CHECKPOINT, err)) ||
            (r->args.op == RT_OP_TRAIN &&
             (rc = rt_io_check_step_room(r->step, s->updates, r->args.checkpoint_in, err))))
            return rc;
    } else {
        if (!(r->payload_owner = malloc(s->payload_bytes)))
            return say(err, RT_EXIT_INTERNAL, "out of memory for the checkpoint");
        fresh_payload(s, r->payload_owner);
        r->payload = r->payload_owner;
    }
    if ((rc = check_reach(r, input, err)))
        return rc;
    if ((rc = rt_io_add_output(files, r->args.predictions, "--predictions", NULL, err)) ||
        (rc = rt_io_add_output(files, r->args.result, "--result", NULL, err)) ||
        (rc = rt_io_add_output(files, r->args.checkpoint_out, "--checkpoint-out", r->args.checkpoint_in, err)))
        return rc;
    r->publications = s->reach[r->args.op == RT_OP_PREDICT].publications;
    r->reached = r->step;
    return 0;
}

int np_request_read(np_request *r, uint64_t file, uint64_t offset, uint64_t extent, uint8_t *to, char *err)
{
    const uint8_t *data = file == NP_FILE_INPUT ? r->input : r->payload;
    uint64_t size = file == NP_FILE_INPUT ? r->input_size : r->spec.payload_bytes;
    if (offset > size || extent > size - offset)
        return say(err, file == NP_FILE_INPUT ? RT_EXIT_BAD_INPUT : RT_EXIT_INTERNAL,
                   "%llu byte%s at %llu of the %llu-byte %s", (unsigned long long)extent, rt_plural(extent),
                   (unsigned long long)offset, (unsigned long long)size,
                   file == NP_FILE_INPUT ? "input" : "checkpoint payload");
    memcpy(to, data + offset, extent);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);   /* drain write-combining before the GPU reads it */
    return 0;
}

/* The checkpoint-out envelope, made on first use; out[0] is its payload. */
static int checkpoint_envelope(np_request *r, char *err)
{
    if (r->envelope)
        return 0;
    if (!(r->envelope = malloc((size_t)rt_envelope_total_bytes(&r->contract))))
        return say(err, RT_EXIT_INTERNAL, "out of memory for the checkpoint");
    r->out[0].data = r->envelope + rt_envelope_header_bytes(&r->contract);
    return 0;
}

int np_request_write(np_request *r, uint64_t file, const uint8_t *data, uint64_t bytes, int append, uint64_t offset,
                     char *err)
{
    np_request_output *o = &r->out[file - NP_FILE_CHECKPOINT_OUT];
    uint64_t at = append ? o->size : offset;
    if (file == NP_FILE_CHECKPOINT_OUT) {
        /* into the envelope's payload, which has the contract's size; after the last publication
         * that envelope is staged as it is, so a write then would change what is published */
        uint64_t room = r->spec.payload_bytes;
        if (r->published >= r->publications)
            return say(err, RT_EXIT_INTERNAL, "the program writes %llu checkpoint byte%s after the request's last "
                       "publication (%llu of %llu)", (unsigned long long)bytes, rt_plural(bytes),
                       (unsigned long long)r->published,
                       (unsigned long long)r->publications);
        if (at > room || bytes > room - at)
            return say(err, RT_EXIT_INTERNAL, "the program writes %llu checkpoint byte%s at %llu, past the contract's "
                       "%llu-byte payload", (unsigned long long)bytes, rt_plural(bytes), (unsigned long long)at,
                       (unsigned long long)room);
        if (checkpoint_envelope(r, err))
            return RT_EXIT_INTERNAL;
        if (at > o->size)
            memset(o->data + o->size, 0, at - o->size);
        memcpy(o->data + at, data, bytes);
        if (at + bytes > o->size)
            o->size = at + bytes;
        return 0;
    }
    /* offset and extent are the program's: held to the limit apart, so their sum cannot wrap */
    if (at > NP_REQUEST_OUTPUT_LIMIT || bytes > NP_REQUEST_OUTPUT_LIMIT - at)
        return say(err, RT_EXIT_INTERNAL, "the program writes %llu byte%s at %llu of the %s, past the %llu bytes an "
                   "output holds at most", (unsigned long long)bytes, rt_plural(bytes), (unsigned long long)at,
                   file == NP_FILE_PREDICTIONS ? "predictions" : "result", (unsigned long long)NP_REQUEST_OUTPUT_LIMIT);
    if (at + bytes > o->size) {
        uint8_t *grown = realloc(o->data, at + bytes ? at + bytes : 1);
        if (!grown)
            return say(err, RT_EXIT_INTERNAL, "out of memory for an output");
        memset(grown + o->size, 0, at + bytes - o->size);
        o->data = grown;
        o->size = at + bytes;
    }
    memcpy(o->data + at, data, bytes);
    return 0;
}

int np_request_append_input(np_request *r, uint64_t file, uint64_t offset, uint64_t extent, char *err)
{
    if (offset > r->input_size || extent > r->input_size - offset)
        return say(err, RT_EXIT_BAD_INPUT, "%llu byte%s at %llu of the %llu-byte input", (unsigned long long)extent,
                   rt_plural(extent), (unsigned long long)offset, (unsigned long long)r->input_size);
    return np_request_write(r, file, r->input + offset, extent, 1, 0, err);
}

void np_request_status(const np_request *r, uint64_t issued, uint8_t out[24])
{
    const uint64_t words[3] = { r->reached, issued, r->published };
    for (int i = 0; i < 24; i++)
        out[i] = (uint8_t)(words[i / 8] >> (8 * (i % 8)));
}

void np_request_checkpoint_begin(np_request *r)
{
    r->out[0].size = 0;
}

int np_request_checkpoint_publish(np_request *r, uint64_t updates, char *err)
{
    np_request_output *o = &r->out[0];
    if (r->published >= r->publications)
        return say(err, RT_EXIT_INTERNAL, "the program publishes checkpoint %llu; the request publishes %llu",
                   (unsigned long long)r->published + 1, (unsigned long long)r->publications);
    if (o->size != r->spec.payload_bytes)
        return say(err, RT_EXIT_INTERNAL, "the program wrote %zu checkpoint byte%s, the contract holds %llu", o->size,
                   rt_plural(o->size), (unsigned long long)r->spec.payload_bytes);
    uint64_t step = r->step + updates;
    int rc;
    /* An interval's checkpoint is published when it ends; the request's last waits for the
     * other outputs (all published together, the checkpoint last: host_io.h). */
    if (checkpoint_envelope(r, err))
        return RT_EXIT_INTERNAL;
    rt_envelope_seal(&r->contract, step, r->envelope);
    size_t total = (size_t)rt_envelope_total_bytes(&r->contract);
    if (r->published + 1 < r->publications) {
        if ((rc = rt_publish_atomic_as(r->args.checkpoint_out, "--checkpoint-out", r->envelope, total, err)))
            return rc;
        r->written = r->published + 1;
        r->written_step = step;
    } else {
        r->staged = r->envelope;
        r->staged_size = total;
    }
    r->published++;
    r->reached = step;
    return 0;
}

static int ends_with(const char *said, size_t length, const char *suffix)
{
    size_t n = strlen(suffix);
    return length >= n && memcmp(said + length - n, suffix, n) == 0;
}

size_t np_request_failure_note(const np_request *r, const char *said, size_t length, char *note, size_t bytes)
{
    if (!r || !r->written) {
        int told = ends_with(said, length, "nothing was written") || ends_with(said, length, "nothing was published") ||
                   ends_with(said, length, "(nothing was published)");
        snprintf(note, bytes, "%s", told ? "" : "; nothing was published");
        return length;
    }
    return rt_io_interval_note(said, length, r->written, r->publications, r->written_step, r->args.checkpoint_out, note,
                               bytes);
}

int np_request_finish(np_request *r, rt_io_files *files, char *err)
{
    int rc;
    if (!r->staged) {
        if ((rc = rt_envelope_build(&r->contract, r->step, r->payload, &r->built, &r->staged_size, err)))
            return rc;
        r->staged = r->built;
    }
    static const uint8_t none[1];
    if ((rc = rt_io_stage(files, "--predictions", r->out[1].data ? r->out[1].data : none, r->out[1].size, err)) ||
        (rc = rt_io_stage(files, "--result", r->out[2].data ? r->out[2].data : none, r->out[2].size, err)) ||
        (rc = rt_io_stage(files, "--checkpoint-out", r->staged, r->staged_size, err)))
        return rc;
    return 0;
}

void np_request_free(np_request *r)
{
    np_request_spec_free(&r->spec);
    free(r->input);
    free(r->payload_owner);
    for (int i = 1; i < 3; i++)
        free(r->out[i].data);
    free(r->envelope);
    free(r->built);
    memset(r, 0, sizeof *r);
}
