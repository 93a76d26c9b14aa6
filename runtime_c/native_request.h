/* A native request program's files (docs/native-host.md, "Requests"; Runtime.NativePhysicalProgram's
 * Request* commands): the plan host's command line, input and checkpoint checks, outputs and
 * publications, for the native physical program host.
 *
 * The checks and publication are the plan host's own functions (host_runtime.h: rt_parse_args,
 * rt_checkpoint_read's envelope check, rt_envelope_build, rt_checkpoint_write, rt_init_chunk;
 * host_io.h: rt_io_recover, rt_io_read, rt_io_add_output, rt_io_stage): one implementation for
 * both hosts.  What is new here is the token stream's check (docs/formats.md, "Token stream")
 * and the reach check (a stream shorter than the run reads, a cursor past the stream).  The
 * Python twin, with the same messages: compiler/bobc/reference/native_request.py. */
#ifndef RT_NATIVE_REQUEST_H
#define RT_NATIVE_REQUEST_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include "host_io.h"
#include "host_runtime.h"

enum { NP_FILE_INPUT = 1, NP_FILE_CHECKPOINT_IN = 2, NP_FILE_CHECKPOINT_OUT = 3, NP_FILE_PREDICTIONS = 4,
       NP_FILE_RESULT = 5 };
enum { NP_FRESH_END = 0, NP_FRESH_ZERO = 1, NP_FRESH_SPLITMIX64 = 2 };
#define NP_REQUEST_MAX_INITIALIZERS (1u << 16)
/* the checkpoint's chunk count, payload / chunk bytes: the envelope's 32-bit field (rt_contract) */
#define NP_REQUEST_MAX_CHUNKS UINT32_MAX
#define NP_REQUEST_HELP (-2)        /* np_request_open: --help printed, nothing more to do */
/* The most bytes a request's predictions or result output holds (an input's limit,
 * RT_IO_INPUT_LIMIT_BYTES): a RequestWriteAt's offset + extent, or an append, past it is
 * refused (status 1) before anything is written; checked before the first command where the
 * program gives the numbers (native_program.c check_command).  bobc.native.request.OUTPUT_LIMIT. */
#define NP_REQUEST_OUTPUT_LIMIT ((uint64_t)1 << 30)

/* what one operation's request reads and publishes ([0] train, [1] predict) */
typedef struct {
    uint64_t records;               /* input bytes its reads reach from the input's start */
    uint64_t cursor;                /* from the cursor's start */
    uint64_t publications;
} np_reach;

/* The request's bytes (RequestOpen's bytes field), parsed; identities NUL-terminated copies. */
typedef struct {
    char *identity[4];              /* schema, learner, data, seed */
    uint64_t payload_bytes, chunk_bytes, updates;
    int stream;                     /* 0 a record, 1 a token stream */
    uint8_t magic[32];
    uint64_t magic_length, version, token_bytes, vocabulary, header_bytes;
    rt_initializer *fresh;          /* one per chunk, in order */
    char **fresh_seed;
    uint32_t fresh_count;
    uint64_t cursor_base, cursor_scale;
    np_reach reach[2];
} np_request_spec;

/* 0, or -1 with a message in err (RT_ERR_BYTES) naming the part. */
int np_request_parse(const uint8_t *bytes, uint64_t size, np_request_spec *spec, char *err);
void np_request_spec_free(np_request_spec *spec);

typedef struct {
    uint8_t *data;
    size_t size;
} np_request_output;

typedef struct {
    np_request_spec spec;
    rt_contract contract;
    rt_args args;
    uint8_t *input;
    size_t input_size;
    const uint8_t *payload;         /* the input checkpoint's payload, or the fresh state */
    uint8_t *payload_owner;         /* what holds it: the checkpoint file's bytes, or the fresh state */
    uint64_t step;                  /* the input checkpoint's global step (0 fresh) */
    np_request_output out[3];       /* checkpoint-out's payload (inside `envelope`), predictions, result */
    uint8_t *envelope;              /* checkpoint-out's envelope, the payload gathered into it in place
                                       and sealed at each publication: no copy of a GiB per publication */
    uint64_t publications, published, reached;
    uint64_t written, written_step; /* interval publications already at checkpoint-out, the last one's step */
    const uint8_t *staged;          /* the last publication's envelope, published with the others */
    size_t staged_size;
    uint8_t *built;                 /* an envelope built around the input payload (predict) */
} np_request;

/* What a failing run says it left behind after its message (`said`, `length` bytes: the
 * message's tail): the number of bytes of `said` to show, and in `note` (`bytes` bytes) what
 * follows them: "; nothing was published" -- "" when the message already says nothing was
 * written or published (an output's refusal) -- or, once an interval publication of this run is
 * at checkpoint-out, rt_io_interval_note's "; publication N of M (step S) stays at PATH; nothing
 * else was published" (the message's own "nothing was published" left out).  `r` NULL: no
 * request was opened.  The reference's RequestSession.failure_line, word for word. */
size_t np_request_failure_note(const np_request *r, const char *said, size_t length, char *note, size_t bytes);

/* Open the request: arguments (argv after the program's name), journals, input, checkpoint,
 * reach and output paths (added to `files`, in publication order).  0; NP_REQUEST_HELP; or a
 * plan host exit status (2 usage, 3 input, 4 bad checkpoint, 5 foreign, 8 output) with err. */
int np_request_open(np_request *r, const uint8_t *bytes, uint64_t size, int argc, char **argv, const char *program,
                    rt_io_files *files, char *err);
/* `extent` bytes at `offset` of the input (1) or the checkpoint's payload (2) into `to`. */
int np_request_read(np_request *r, uint64_t file, uint64_t offset, uint64_t extent, uint8_t *to, char *err);
/* Append (`append` 1) or place at `offset` `bytes` bytes to output `file` (3, 4, 5): refused,
 * nothing written, past the checkpoint's payload (3) or past NP_REQUEST_OUTPUT_LIMIT (4, 5). */
int np_request_write(np_request *r, uint64_t file, const uint8_t *data, uint64_t bytes, int append, uint64_t offset,
                     char *err);
/* `extent` bytes of the input at `offset` appended to output `file` (the bound input identity). */
int np_request_append_input(np_request *r, uint64_t file, uint64_t offset, uint64_t extent, char *err);
/* u64 the step reached, u64 issued, u64 checkpoints published. */
void np_request_status(const np_request *r, uint64_t issued, uint8_t out[24]);
void np_request_checkpoint_begin(np_request *r);
int np_request_checkpoint_publish(np_request *r, uint64_t updates, char *err);
/* Stage predictions, result and checkpoint in `files` (the input state handed on when none was
 * published); the caller publishes them (rt_io_publish). */
int np_request_finish(np_request *r, rt_io_files *files, char *err);
void np_request_free(np_request *r);

#endif
