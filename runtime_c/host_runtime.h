/* The host runtime: files, the input record, the checkpoint envelope, atomic
 * publish, the fresh initialization generator and the command line.  Layouts: docs/formats.md.  Exit codes: bob_exit.h and
 * docs/runtime.md.
 *
 * Functions that can fail return 0 or a BOB_EXIT_* code and write one
 * message (naming the file and what differs) into `err` (BOB_ERR_BYTES).
 * They print nothing: the caller decides (bob_report prints "bob-host: error: ...").
 */
#ifndef BOB_HOST_RUNTIME_H
#define BOB_HOST_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#include "bob_exit.h"

#define BOB_ERR_BYTES 512

/* ---- Bob's sizes (docs/formats.md) ---- */
#define BOB_VOCAB                 256u
#define BOB_PARAMETER_COUNT       65536u
#define BOB_PROMPTS               3u
#define BOB_INPUT_RECORD_BYTES    1564u
#define BOB_INPUT_MAGIC           "BOBINPUT"
#define BOB_INPUT_VERSION         1u
#define BOB_PREDICTIONS_BYTES     24u
#define BOB_RESULT_BYTES          5120u
#define BOB_CHUNK_COUNT           3u
#define BOB_CHUNK_BYTES           (BOB_PARAMETER_COUNT * 4u)               /* 262144 */
#define BOB_PAYLOAD_BYTES         (BOB_CHUNK_COUNT * BOB_CHUNK_BYTES)      /* 786432 */
#define BOB_UPDATES_PER_INVOCATION 10u
#define BOB_ENVELOPE_MAGIC        "BOBCENV1"
#define BOB_ENVELOPE_TRAILER      "BOBCEND1"
#define BOB_ENVELOPE_FIXED_BYTES  64u
#define BOB_SEED_IDENTITY         "bob-seed-v1"

void bob_report(const char *err);   /* "bob-host: error: <err>\n" on stderr */

/* ---- files ---- */

/* Read a whole file that must be exactly `expected` bytes into buf.
 * BOB_EXIT_INTERNAL-free: a missing file, wrong size or read error returns
 * `code` with a message naming the file (`what` says which input it is). */
int bob_read_exact(const char *path, const char *what, void *buf, size_t expected, int code, char *err);

/* Read a whole file (any size up to max_bytes) into a malloc'd buffer. */
int bob_read_all(const char *path, const char *what, uint8_t **data, size_t *size, size_t max_bytes,
                 int code, char *err);

/* Publish `size` bytes at `path` atomically: a temporary file in the same
 * folder, write, fsync, rename over `path`, fsync the folder.  On any
 * failure the temporary is removed, `path` is untouched, and the result is
 * BOB_EXIT_WRITE_FAILED. */
int bob_publish_atomic(const char *path, const void *data, size_t size, char *err);

/* ---- input record ---- */
typedef struct {
    uint8_t  target[BOB_VOCAB];     /* target(b) */
    uint32_t prompt[BOB_PROMPTS];   /* each prompt's last byte */
} bob_input;

/* Check a 1564-byte record (magic, version, pairs == target words, all
 * bytes < 256): BOB_EXIT_BAD_INPUT naming `path` and the first difference. */
int bob_input_parse(const uint8_t *record, size_t size, const char *path, bob_input *out, char *err);
int bob_input_read(const char *path, uint8_t record[BOB_INPUT_RECORD_BYTES], bob_input *out, char *err);

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
} bob_contract;

/* Header bytes H for a contract: 64 + identities, rounded up to 16. */
uint32_t bob_envelope_header_bytes(const bob_contract *c);
/* Total bytes: H + payload + 12. */
uint64_t bob_envelope_total_bytes(const bob_contract *c);

/* Build an envelope around `payload` (contract->payload_bytes bytes: P, M,
 * V) with global step `step`.  *out is malloc'd. */
int bob_envelope_build(const bob_contract *c, uint64_t step, const void *payload, uint8_t **out, size_t *out_size,
                       char *err);

/* Check an envelope in the documented order: size and magic (truncated or
 * not a checkpoint: BOB_EXIT_BAD_CHECKPOINT), CRC (corrupted:
 * BOB_EXIT_BAD_CHECKPOINT), then schema, learner, data, seed, payload bytes,
 * chunk bytes/count, updates per invocation (foreign:
 * BOB_EXIT_FOREIGN_CHECKPOINT), refusing at the first part that differs.
 * On success *payload points into `env` and *step holds the step. */
int bob_envelope_check(const bob_contract *c, const uint8_t *env, size_t size, const char *path,
                       const uint8_t **payload, uint64_t *step, char *err);

/* Read a checkpoint file and check it; payload copied into `payload`
 * (contract->payload_bytes bytes). */
int bob_checkpoint_read(const bob_contract *c, const char *path, void *payload, uint64_t *step, char *err);
/* Build and publish atomically. */
int bob_checkpoint_write(const bob_contract *c, const char *path, uint64_t step, const void *payload, char *err);

/* CRC-32 (IEEE 802.3, as zlib.crc32), continuing from `crc` (0 to start). */
uint32_t bob_crc32(uint32_t crc, const void *data, size_t size);

/* ---- fresh initialization (docs/formats.md) ---- */
uint64_t bob_fnv1a64(const void *data, size_t size);
/* P[0..count) from SplitMix64 seeded with FNV-1a-64(seed_identity). */
void bob_init_parameters(const char *seed_identity, float *p, size_t count);
/* The whole fresh payload: P from the generator, M = V = 0. */
void bob_init_payload(const char *seed_identity, float *payload /* 3 * 65536 */);

/* ---- command line ---- */
enum { BOB_OP_TRAIN = 1, BOB_OP_PREDICT = 2 };
typedef struct {
    int op;
    const char *input, *checkpoint_in, *checkpoint_out, *predictions, *result;
    int help;
} bob_args;

/* Parse `HOST train|predict --input RECORD [--checkpoint IN]
 * --checkpoint-out OUT --predictions FILE --result FILE` (also --opt=value).
 * Returns 0 (args->help set for --help) or BOB_EXIT_USAGE with a message. */
int bob_parse_args(int argc, char **argv, bob_args *args, char *err);
void bob_print_usage(const char *program, void *stream /* FILE* */);

#endif
