/* The host runtime: files, the input record, the checkpoint envelope, atomic
 * publish, the fresh initialization generator and the command line.  Layouts: docs/formats.md.  Exit codes: rt_exit.h and
 * docs/runtime.md.
 *
 * Functions that can fail return 0 or a RT_EXIT_* code and write one
 * message (naming the file and what differs) into `err` (RT_ERR_BYTES).
 * They print nothing: the caller decides (rt_report prints "HOST: error: ...",
 * HOST the executable's name).
 */
#ifndef RT_HOST_RUNTIME_H
#define RT_HOST_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#include "rt_exit.h"

/* A message is one line of at most RT_ERR_BYTES - 1 bytes: the file rules (host_io.h) show a
 * long path shortened in the middle (rt_io_shown), so that its reason always fits. */
#define RT_ERR_BYTES 512

/* the checkpoint envelope (docs/formats.md): a format, not a model's */
#define RT_ENVELOPE_MAGIC        "BOBCENV1"
#define RT_ENVELOPE_TRAILER      "BOBCEND1"
#define RT_ENVELOPE_FIXED_BYTES  64u

void rt_report(const char *err);   /* "HOST: error: <err>\n" on stderr */
void rt_report_as(const char *program);   /* HOST: the last part of `program` (default "host") */
const char *rt_report_name(void);          /* HOST, as rt_report prints it */

/* ---- files ---- */

/* Read a whole file that must be exactly `expected` bytes into buf.
 * RT_EXIT_INTERNAL-free: a missing file, wrong size or read error returns
 * `code` with a message naming the file (`what` says which input it is). */
int rt_read_exact(const char *path, const char *what, void *buf, size_t expected, int code, char *err);

/* Read a whole file (any size up to max_bytes) into a malloc'd buffer. */
int rt_read_all(const char *path, const char *what, uint8_t **data, size_t *size, size_t max_bytes,
                 int code, char *err);

/* Publish `size` bytes at `path` atomically: a temporary file in the same
 * folder, write, fsync, rename over `path`, fsync the folder.  On any
 * failure the temporary is removed, `path` is untouched, and the result is
 * RT_EXIT_WRITE_FAILED. */
int rt_publish_atomic(const char *path, const void *data, size_t size, char *err);
/* The same, its refusals naming the output by `option` (`--checkpoint-out`), as the request's
 * other outputs are named, not as "output". */
int rt_publish_atomic_as(const char *path, const char *option, const void *data, size_t size, char *err);

/* ---- input record (the plan's NvidiaPlanHostRecordCheck list) ---- */
enum { RT_CHECK_BYTES = 1, RT_CHECK_WORD = 2, RT_CHECK_BELOW = 3, RT_CHECK_INDEX = 4, RT_CHECK_SAME = 5 };
/* how a WORD, BELOW or SAME check's words are read -- a BELOW orders them as numbers of the format
 * (binary words as IEEE 754 does), a SAME sign-extends signed words -- and a refusal prints them
 * (NvidiaPlanHostWordFormat); 0, a check that says none, is unsigned */
enum { RT_WORD_UNSIGNED = 0, RT_WORD_SIGNED = 1, RT_WORD_BINARY32 = 2, RT_WORD_BINARY64 = 3 };
typedef struct {
    int kind;               /* RT_CHECK_* */
    const char *what;       /* named in the refusal */
    uint64_t offset;        /* a run: `count` little-endian words `width` bytes wide, one every `stride` */
    uint32_t width;
    uint64_t stride, count;
    uint64_t value;         /* WORD: the value; BELOW: the bound */
    const char *data;       /* BYTES: the bytes at offset */
    uint32_t data_bytes;
    uint64_t other;         /* SAME: the other run */
    uint32_t other_width;
    uint64_t other_stride;
    int format;             /* RT_WORD_*: BINARY32 reads 4-byte words, BINARY64 8-byte; BELOW compares as it says */
} rt_record_check;

typedef struct {
    uint64_t record_bytes;
    const rt_record_check *checks;
    uint32_t check_count;
} rt_record_contract;

/* Check a record against the contract: its size, then each check in order;
 * RT_EXIT_BAD_INPUT naming `path`, the check and the first word that fails. */
int rt_record_verify(const rt_record_contract *c, const uint8_t *record, size_t size, const char *path, char *err);
/* Read and check; *record is malloc'd, exactly c->record_bytes bytes. */
int rt_record_read(const rt_record_contract *c, const char *path, uint8_t **record, char *err);

/* ---- checkpoint envelope ---- */
typedef struct {
    const char *schema;     /* the plan's CheckpointEnvelopeContract identities */
    const char *learner;
    const char *data;
    const char *seed;
    uint64_t payload_bytes;
    uint64_t chunk_bytes;
    uint32_t chunk_count;
    uint64_t updates_per_invocation;
} rt_contract;

/* Header bytes H for a contract: 64 + identities, rounded up to 16. */
uint32_t rt_envelope_header_bytes(const rt_contract *c);
/* Total bytes: H + payload + 12. */
uint64_t rt_envelope_total_bytes(const rt_contract *c);

/* Seal an envelope of rt_envelope_total_bytes whose payload already lies at
 * byte H: header (step `step`), CRC and trailer written around it.  A host
 * that gathers its payload into the envelope publishes it without a copy. */
void rt_envelope_seal(const rt_contract *c, uint64_t step, uint8_t *envelope);
/* Build an envelope around `payload` (contract->payload_bytes bytes: P, M,
 * V) with global step `step`.  *out is malloc'd. */
int rt_envelope_build(const rt_contract *c, uint64_t step, const void *payload, uint8_t **out, size_t *out_size,
                       char *err);

/* Check an envelope in the documented order: size and magic (truncated or
 * not a checkpoint: RT_EXIT_BAD_CHECKPOINT), CRC (corrupted:
 * RT_EXIT_BAD_CHECKPOINT), then schema, learner, data, seed, payload bytes,
 * chunk bytes/count, updates per invocation (foreign:
 * RT_EXIT_FOREIGN_CHECKPOINT), refusing at the first part that differs.
 * On success *payload points into `env` and *step holds the step. */
int rt_envelope_check(const rt_contract *c, const uint8_t *env, size_t size, const char *path,
                       const uint8_t **payload, uint64_t *step, char *err);

/* Read a checkpoint file and check it; payload copied into `payload`
 * (contract->payload_bytes bytes). */
int rt_checkpoint_read(const rt_contract *c, const char *path, void *payload, uint64_t *step, char *err);
/* As rt_checkpoint_read, without the copy: *envelope is the file's bytes (malloc'd, the
 * caller frees it) and *payload points at the payload inside it. */
int rt_checkpoint_load(const rt_contract *c, const char *path, uint8_t **envelope, const uint8_t **payload,
                       uint64_t *step, char *err);
/* Build and publish atomically, at the request's --checkpoint-out (an interval's checkpoint):
 * its refusals name that option. */
int rt_checkpoint_write(const rt_contract *c, const char *path, uint64_t step, const void *payload, char *err);

/* CRC-32 (IEEE 802.3, as zlib.crc32), continuing from `crc` (0 to start). */
uint32_t rt_crc32(uint32_t crc, const void *data, size_t size);

/* ---- fresh initialization (the plan's NvidiaPlanHostInitializer, one per chunk) ---- */
enum { RT_INIT_ZERO = 1, RT_INIT_SPLITMIX64 = 2 };
typedef struct {
    int kind;               /* RT_INIT_* */
    const char *seed;       /* SPLITMIX64: state = FNV-1a-64(seed) */
    uint32_t shift;         /* element i: u = z_i >> shift, (float)((double)(u - center) / denominator) */
    uint64_t center, denominator;
} rt_initializer;

uint64_t rt_fnv1a64(const void *data, size_t size);
/* One chunk of `bytes` bytes: zeros, or bytes / 4 binary32 elements. */
void rt_init_chunk(const rt_initializer *init, void *out, size_t bytes);

/* ---- command line ---- */
enum { RT_OP_TRAIN = 1, RT_OP_PREDICT = 2 };
typedef struct {
    int op;
    const char *input, *checkpoint_in, *checkpoint_out, *predictions, *result;
    int help;
} rt_args;

/* Parse `HOST train|predict --input RECORD [--checkpoint IN]
 * --checkpoint-out OUT --predictions FILE --result FILE` (also --opt=value).
 * Returns 0 (args->help set for --help) or RT_EXIT_USAGE with a message. */
int rt_parse_args(int argc, char **argv, rt_args *args, char *err);
/* The same, the input named `input_name` in the messages (a request's STREAM or RECORD). */
int rt_parse_args_named(int argc, char **argv, rt_args *args, const char *input_name, char *err);
/* How a plan takes --checkpoint (its checkpoint Reads' tolerateEmpty: docs/host-steps.md). */
enum {
    RT_CHECKPOINT_OPTIONAL = 0,        /* a request without one starts from the fresh state */
    RT_CHECKPOINT_TRAIN_NEEDS = 1,     /* a train request needs one; a predict starts fresh without */
    RT_CHECKPOINT_NEEDED = 2,          /* every request needs one */
};
/* The usage text; `identity` names the host's plan, `record_bytes` its input record, `checkpoint`
 * how it takes --checkpoint (RT_CHECKPOINT_*). */
void rt_print_usage(const char *program, const char *identity, uint64_t record_bytes, int checkpoint,
                    void *stream /* FILE* */);
/* Flush `stream` (a host's stdout after --help or --version): NULL when all it was given was
 * written, else the reason it was not (a full disk, a closed stdout): the caller says
 * "cannot write to stdout: REASON" on stderr and exits 8, as bobc's own commands do. */
const char *rt_stdout_failure(void *stream /* FILE* */);

/* A host ignores SIGXFSZ (set at start-up, and again before any publication writes, when its
 * disposition is the default one, which would end the process silently past the file size
 * limit, `ulimit -f`): a write past the limit then fails with EFBIG, and is refused as a full
 * disk is (one line naming the file, exit 8, nothing published).  A handler someone installed,
 * or an ignored signal, is left as it is. */
void rt_ignore_file_size_signal(void);

/* A failed write's reason: strerror(e), and for EFBIG under a file size limit that limit and
 * what to do ("File too large (the file size limit, ulimit -f, is 4096 bytes: raise it, then run
 * again)").  compiler/bobc/reference/safe_io.py write_failure words it the same. */
const char *rt_write_failure(int e);

/* Format a message into err (RT_ERR_BYTES bytes; err may be NULL) and
 * return code: every refusal of the runtime goes through it. */
int rt_say(char *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* A count's noun ending, for "%llu byte%s": "1 byte", "2 bytes", "0 bytes" (every message that
 * counts something says it so; compiler/bobc/native/words.py count says the same). */
static inline const char *rt_plural(unsigned long long count)
{
    return count == 1 ? "" : "s";
}

/* A count as a message shows it, its digits grouped by threes with commas ("0", "999", "1,000",
 * "6,192,000", "18,446,744,073,709,551,615"), as compiler/bobc/certify/limits.py shown and
 * shown_bytes group it: every size refusal of an input record says its sizes so, in the host,
 * `bobc run --reference` and `bobc sim` alike.  `out` holds RT_GROUPED_BYTES. */
#define RT_GROUPED_BYTES 27     /* 20 digits, 6 commas, the NUL */
static inline const char *rt_grouped(unsigned long long v, char out[RT_GROUPED_BYTES])
{
    char digits[21];
    int n = 0, k = 0;
    do {
        digits[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (int i = n - 1; i >= 0; i--) {
        out[k++] = digits[i];
        if (i && i % 3 == 0)
            out[k++] = ',';
    }
    out[k] = 0;
    return out;
}

#endif
