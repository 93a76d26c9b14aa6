/* A native physical program's canonical bytes (Runtime.NativePhysicalProgram,
 * docs/platform.md "The native physical program"): decoded into a table of
 * commands and checked before anything runs.  The Python twin:
 * compiler/bobc/reference/native_program.py (same table, same messages).
 *
 * Commands are numbered in the order their codes appear in the bytes (a
 * repeat's body before its tail): that number is what every message names. */
#ifndef RT_NATIVE_PROGRAM_H
#define RT_NATIVE_PROGRAM_H

#include <stddef.h>
#include <stdint.h>

enum np_code {
    NP_END = 0, NP_HALT = 1, NP_FAIL = 2, NP_SET = 3, NP_STORE = 4, NP_ADD_NATURAL = 5,
    NP_FLOAT = 6, NP_CONVERT = 7, NP_COPY_STATE_TO_MAPPED = 8, NP_COPY_MAPPED_TO_STATE = 9,
    NP_WRITE_MAPPED = 10, NP_WAIT_MAPPED = 11, NP_REPEAT = 12, NP_BRANCH_ZERO = 13,
    NP_READ_FILE = 14, NP_WRITE_FILE = 15, NP_OPEN_DEVICE = 16, NP_MAP = 17, NP_LOAD_IMAGE = 18,
    NP_CONNECT = 19, NP_SEND = 20, NP_RECEIVE = 21, NP_TELEMETRY = 22, NP_RELEASE = 23,
    NP_SUBMIT = 24, NP_WRITE_MAPPED_FILE = 25,
    /* a request's commands (docs/native-host.md, "Requests"; native_request.h) */
    NP_REQUEST_OPEN = 26, NP_REQUEST_READ = 27, NP_REQUEST_WRITE = 28, NP_REQUEST_WRITE_AT = 29,
    NP_REQUEST_APPEND_STATE = 30, NP_REQUEST_APPEND_INPUT = 31, NP_REQUEST_APPEND_STATUS = 32,
    NP_REQUEST_CHECKPOINT_BEGIN = 33, NP_REQUEST_CHECKPOINT_PUBLISH = 34,
    NP_LOAD_EMBEDDED = 35,       /* an embedded device image of the host's own file */
    NP_PREPARE_OUTPUTS = 36,     /* the outputs staged so far to their synced temporaries (publication's first phase) */
    NP_CODE_COUNT = 37,
};

enum np_operand_kind { NP_IMMEDIATE = 0, NP_SLOT = 1, NP_STATE_WORD = 2, NP_MAPPED_WORD = 3 };

#define NP_MAGIC "NPHY"
#define NP_VERSION 1u
#define NP_MAX_COMMANDS (1u << 24)
#define NP_MAX_SLOTS (1u << 20)
#define NP_MAX_STATE ((uint64_t)1 << 32)   /* 4 GiB of state at most */
/* Repeats nested one in another's body: np_run recurses once per body (docs/limits.md) */
#define NP_MAX_REPEAT_NESTING 64u
/* a Submit ring's entries: its put index (n + 1) mod entries is a 32-bit word */
#define NP_MAX_RING_ENTRIES ((uint64_t)1 << 32)
/* the output files a program's WriteFile and WriteMappedFile name, distinct arguments: the host
 * publishes at most RT_IO_MAX_FILES (host_io.h) together, a request's three among them */
#define NP_MAX_OUTPUT_FILES 8u
/* the bytes a ReadFile reads at most: no input larger than RT_IO_INPUT_LIMIT_BYTES is read */
#define NP_MAX_READ_BYTES ((uint64_t)1 << 30)
#define NP_ERR_BYTES 512

typedef struct {
    uint8_t kind;
    uint64_t value;
} np_operand;

typedef struct {
    uint8_t code;
    uint8_t sub;                 /* Float's operation, Convert's conversion */
    uint64_t n[5];               /* the naturals, in field order */
    np_operand v[2];             /* the operands, in field order */
    const uint8_t *bytes;        /* the one bytes field (message, UUID, identity, image, address, label) */
    uint64_t bytes_length;
    uint32_t child[2];           /* tail; Repeat: body, tail; BranchZero: whenZero, otherwise */
} np_command;

typedef struct {
    uint64_t slots;
    uint64_t state_extent;
    const uint8_t *identity;
    uint64_t identity_length;
    np_command *commands;        /* malloc'd; commands[0] is the program's first */
    uint32_t count;
    uint64_t arguments;          /* 1 + the highest argument a file command names (0: none) */
} np_program;

/* The command's name as docs/platform.md spells it ("ReadFile"). */
const char *np_code_name(unsigned code);

/* Decode and check `bytes` (the canonical bytes, nothing after them).
 * 0, or -1 with a message in err (NP_ERR_BYTES) naming the offset or the
 * command and what is wrong.  The program points into `bytes`. */
int np_decode(const uint8_t *bytes, size_t size, np_program *program, char *err);

void np_free(np_program *program);

#endif
