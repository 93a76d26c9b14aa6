/* See native_program.h. */
#include "native_program.h"

#include "native_request.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* what a refused Connect address should be (bobc.native.program SOCKADDR_HELP, the twin) */
#define NP_SOCKADDR_HELP ": 2, 0, the port (big-endian), the 4 octets, 8 zero bytes; build it with " \
    "linuxIPv4SocketAddress (Runtime.SocketAddress)"

/* Each command's fields in encoding order (docs/platform.md's table):
 * n a natural, o an operand, b bytes, s an operation/conversion byte;
 * then how many command fields follow (tail, or body + tail, or two branches). */
static const struct {
    const char *name;
    const char *fields;
    int children;
} CODES[NP_CODE_COUNT] = {
    [NP_END] = { "End", "", 0 },
    [NP_HALT] = { "Halt", "", 0 },
    [NP_FAIL] = { "Fail", "nb", 0 },
    [NP_SET] = { "Set", "no", 1 },
    [NP_STORE] = { "Store", "no", 1 },
    [NP_ADD_NATURAL] = { "AddNatural", "noo", 1 },
    [NP_FLOAT] = { "Float", "snoo", 1 },
    [NP_CONVERT] = { "Convert", "sno", 1 },
    [NP_COPY_STATE_TO_MAPPED] = { "CopyStateToMapped", "nnn", 1 },
    [NP_COPY_MAPPED_TO_STATE] = { "CopyMappedToState", "nnn", 1 },
    [NP_WRITE_MAPPED] = { "WriteMapped", "nno", 1 },
    [NP_WAIT_MAPPED] = { "WaitMapped", "non", 1 },
    [NP_REPEAT] = { "Repeat", "o", 2 },
    [NP_BRANCH_ZERO] = { "BranchZero", "o", 2 },
    [NP_READ_FILE] = { "ReadFile", "nnn", 1 },
    [NP_WRITE_FILE] = { "WriteFile", "nnn", 1 },
    [NP_OPEN_DEVICE] = { "OpenDevice", "b", 1 },
    [NP_MAP] = { "Map", "bnnnn", 1 },
    [NP_LOAD_IMAGE] = { "LoadImage", "nb", 1 },
    [NP_CONNECT] = { "Connect", "bnn", 1 },
    [NP_SEND] = { "Send", "nnn", 1 },
    [NP_RECEIVE] = { "Receive", "nnn", 1 },
    [NP_TELEMETRY] = { "Telemetry", "nb", 1 },
    [NP_RELEASE] = { "Release", "", 1 },
    [NP_SUBMIT] = { "Submit", "nnnonn", 1 },
    [NP_WRITE_MAPPED_FILE] = { "WriteMappedFile", "nnn", 1 },
    [NP_REQUEST_OPEN] = { "RequestOpen", "bnn", 1 },
    [NP_REQUEST_READ] = { "RequestRead", "nnno", 1 },
    [NP_REQUEST_WRITE] = { "RequestWrite", "nnn", 1 },
    [NP_REQUEST_WRITE_AT] = { "RequestWriteAt", "nnnn", 1 },
    [NP_REQUEST_APPEND_STATE] = { "RequestAppendState", "nnn", 1 },
    [NP_REQUEST_APPEND_INPUT] = { "RequestAppendInput", "noo", 1 },
    [NP_REQUEST_APPEND_STATUS] = { "RequestAppendStatus", "nn", 1 },
    [NP_REQUEST_CHECKPOINT_BEGIN] = { "RequestCheckpointBegin", "", 1 },
    [NP_REQUEST_CHECKPOINT_PUBLISH] = { "RequestCheckpointPublish", "n", 1 },
    [NP_LOAD_EMBEDDED] = { "LoadEmbedded", "nn", 1 },
    [NP_PREPARE_OUTPUTS] = { "PrepareOutputs", "", 1 },
};

const char *np_code_name(unsigned code)
{
    return code < NP_CODE_COUNT ? CODES[code].name : "unknown";
}

static int say(char *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int say(char *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, NP_ERR_BYTES, fmt, ap);
    va_end(ap);
    return -1;
}

static uint64_t le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

/* [address, address + bytes) inside the state */
static int in_state(const np_program *p, uint64_t address, uint64_t bytes)
{
    return address <= p->state_extent && bytes <= p->state_extent - address;
}

static int check_operand(const np_program *p, unsigned index, const np_command *c, const np_operand *o, char *err)
{
    if (o->kind == NP_SLOT && o->value >= p->slots)
        return say(err, "command %u (%s): slot %llu, but the program has %llu slot%s", index, np_code_name(c->code),
                   (unsigned long long)o->value, (unsigned long long)p->slots, rt_plural(p->slots));
    if (o->kind == NP_STATE_WORD && !in_state(p, o->value, 8))
        return say(err, "command %u (%s): the state word at %llu is outside the %llu-byte state", index,
                   np_code_name(c->code), (unsigned long long)o->value, (unsigned long long)p->state_extent);
    return 0;
}

/* What a command may name, checked once before the program runs. */
static int check_command(np_program *p, unsigned i, char *err)
{
    const np_command *c = &p->commands[i];
    const char *name = np_code_name(c->code);
    const char *fields = CODES[c->code].fields;
    unsigned operands = 0;
    for (const char *f = fields; *f; f++)
        if (*f == 'o' && check_operand(p, i, c, &c->v[operands++], err))
            return -1;
#define STATE_RANGE(address, bytes, what)                                                                      \
    do {                                                                                                       \
        if (!in_state(p, (address), (bytes)))                                                                  \
            return say(err, "command %u (%s): %s [%llu, +%llu) is outside the %llu-byte state", i, name, what, \
                       (unsigned long long)(address), (unsigned long long)(bytes),                             \
                       (unsigned long long)p->state_extent);                                                   \
    } while (0)
#define SLOT(index)                                                                                             \
    do {                                                                                                        \
        if ((index) >= p->slots)                                                                                \
            return say(err, "command %u (%s): slot %llu, but the program has %llu slot%s", i, name,             \
                       (unsigned long long)(index), (unsigned long long)p->slots, rt_plural(p->slots));         \
    } while (0)
    switch (c->code) {
    case NP_FAIL:
        if (c->n[0] < 1 || c->n[0] > 255)
            return say(err, "command %u (%s): status %llu is not 1-255", i, name, (unsigned long long)c->n[0]);
        break;
    case NP_SET:
        SLOT(c->n[0]);
        break;
    case NP_STORE: case NP_ADD_NATURAL: case NP_FLOAT: case NP_CONVERT:
        STATE_RANGE(c->n[0], 8, "the destination word");
        break;
    case NP_COPY_STATE_TO_MAPPED:
        STATE_RANGE(c->n[0], c->n[2], "the state range");
        break;
    case NP_COPY_MAPPED_TO_STATE: case NP_READ_FILE: case NP_WRITE_FILE:
        STATE_RANGE(c->n[1], c->n[2], "the state range");
        /* no file of more than 1 GiB is read (RT_IO_INPUT_LIMIT_BYTES): such a ReadFile refuses
         * every file it could be given, so it is refused here, not at run time */
        if (c->code == NP_READ_FILE && c->n[2] > NP_MAX_READ_BYTES)
            return say(err, "command %u (%s): it reads %llu bytes, more than the %llu (1 GiB) an input file may "
                       "hold; read a file of at most that", i, name, (unsigned long long)c->n[2],
                       (unsigned long long)NP_MAX_READ_BYTES);
        break;
    case NP_SEND: case NP_RECEIVE:
        SLOT(c->n[0]);
        STATE_RANGE(c->n[1], c->n[2], "the state range");
        break;
    case NP_WRITE_MAPPED:
        if (c->n[1] != 1 && c->n[1] != 2 && c->n[1] != 4 && c->n[1] != 8)
            return say(err, "command %u (%s): width %llu is not 1, 2, 4 or 8", i, name, (unsigned long long)c->n[1]);
        break;
    case NP_OPEN_DEVICE:
        if (c->bytes_length != 16)
            return say(err, "command %u (%s): the GPU UUID has %llu byte%s, not 16 (the UUID's raw bytes, not its "
                        "text GPU-xxxxxxxx-...; 16 zero bytes for the first GPU)", i, name,
                        (unsigned long long)c->bytes_length, rt_plural(c->bytes_length));
        break;
    case NP_CONNECT:
        if (c->bytes_length != 16)
            return say(err, "command %u (%s): the socket address has %llu byte%s, not the 16 of a sockaddr_in "
                        "(AF_INET)%s", i, name, (unsigned long long)c->bytes_length, rt_plural(c->bytes_length),
                        NP_SOCKADDR_HELP);
        if (c->bytes[0] != 2 || c->bytes[1] != 0)
            return say(err, "command %u (%s): the socket address starts %02x %02x, not AF_INET's 02 00 (a "
                        "sockaddr_in)%s", i, name, c->bytes[0], c->bytes[1], NP_SOCKADDR_HELP);
        SLOT(c->n[1]);
        break;
    case NP_SUBMIT:
        if (c->n[1] == 0)
            return say(err, "command %u (%s): a ring of 0 entries", i, name);
        /* GPPut, (n + 1) mod entries, is a 32-bit word: a ring longer than 2^32 entries has puts it cannot hold */
        if (c->n[1] > NP_MAX_RING_ENTRIES)
            return say(err, "command %u (%s): a ring of %llu entries, more than the %llu a 32-bit GPPut counts", i,
                       name, (unsigned long long)c->n[1], (unsigned long long)NP_MAX_RING_ENTRIES);
        STATE_RANGE(c->n[4], 8, "the issue counter");
        break;
    case NP_REQUEST_OPEN: {
        if (i != 0)
            return say(err, "command %u (%s): a request is opened by the program's first command only", i, name);
        np_request_spec spec;
        char why[RT_ERR_BYTES];
        int bad = np_request_parse(c->bytes, c->bytes_length, &spec, why);
        np_request_spec_free(&spec);
        if (bad)
            return say(err, "command %u (%s): the request's bytes: %s", i, name, why);
        STATE_RANGE(c->n[0], 8, "the step word");
        STATE_RANGE(c->n[1], 8, "the predict word");
        break;
    }
    case NP_LOAD_EMBEDDED:
        if (c->n[0] < 1 || c->n[0] > 4)
            return say(err, "command %u (%s): kind %llu is not an embedded device image (1 program, 2 QMD, 3 "
                       "pushbuffer, 4 GPFIFO)", i, name, (unsigned long long)c->n[0]);
        break;
    default:
        break;
    }
    if (c->code >= NP_REQUEST_READ && c->code <= NP_REQUEST_CHECKPOINT_PUBLISH) {
        if (p->commands[0].code != NP_REQUEST_OPEN)
            return say(err, "command %u (%s): no request is open (RequestOpen must be the program's first command)", i,
                       name);
        if (c->code == NP_REQUEST_READ && c->n[0] != 1 && c->n[0] != 2)
            return say(err, "command %u (%s): file %llu is not the input (1) or the input checkpoint (2)", i, name,
                       (unsigned long long)c->n[0]);
        if (c->code >= NP_REQUEST_WRITE && c->code <= NP_REQUEST_APPEND_STATUS && (c->n[0] < 3 || c->n[0] > 5))
            return say(err, "command %u (%s): file %llu is not an output (3 the checkpoint, 4 the predictions, 5 the "
                       "result)", i, name, (unsigned long long)c->n[0]);
        if (c->code == NP_REQUEST_WRITE_AT) {
            /* offset and extent are immediates: a write past its output is refused here, before the
             * first command (and at run time, np_request_write, for any write), never summed unchecked */
            uint64_t room = NP_REQUEST_OUTPUT_LIMIT;
            char where[96];
            if (c->n[0] == NP_FILE_CHECKPOINT_OUT) {
                np_request_spec spec;
                char why[RT_ERR_BYTES];
                if (np_request_parse(p->commands[0].bytes, p->commands[0].bytes_length, &spec, why) == 0)
                    room = spec.payload_bytes;
                np_request_spec_free(&spec);
                snprintf(where, sizeof where, "the contract's %llu-byte checkpoint payload", (unsigned long long)room);
            } else {
                snprintf(where, sizeof where, "the %llu bytes an output holds at most (file %llu, the %s)",
                         (unsigned long long)room, (unsigned long long)c->n[0],
                         c->n[0] == NP_FILE_PREDICTIONS ? "predictions" : "result");
            }
            if (c->n[3] > room || c->n[2] > room - c->n[3])
                return say(err, "command %u (%s): it writes %llu byte%s at offset %llu, past %s", i, name,
                           (unsigned long long)c->n[2], rt_plural(c->n[2]), (unsigned long long)c->n[3], where);
        }
        if (c->code == NP_REQUEST_APPEND_STATE)
            STATE_RANGE(c->n[1], c->n[2], "the state range");
        if (c->code == NP_REQUEST_APPEND_STATUS)
            STATE_RANGE(c->n[1], 8, "the issue counter");
    }
    if (c->code == NP_READ_FILE || c->code == NP_WRITE_FILE || c->code == NP_WRITE_MAPPED_FILE) {
        if (c->n[0] >= 1u << 16)
            return say(err, "command %u (%s): argument %llu (at most 65535)", i, name, (unsigned long long)c->n[0]);
        if (c->n[0] + 1 > p->arguments)
            p->arguments = c->n[0] + 1;
    }
    return 0;
#undef STATE_RANGE
#undef SLOT
}

/* The output files, the distinct arguments WriteFile and WriteMappedFile name in command order:
 * the host publishes at most NP_MAX_OUTPUT_FILES together, a request program's three
 * (--checkpoint-out, --predictions, --result) among them.  A static property of the program, so
 * refused here, naming the command that names one too many (the host's check_outputs refused
 * it before the first command without naming one, and the reference published them all). */
static int check_outputs(const np_program *p, char *err)
{
    int request = p->count > 0 && p->commands[0].code == NP_REQUEST_OPEN;
    unsigned room = NP_MAX_OUTPUT_FILES - (request ? 3u : 0u), count = 0;
    uint64_t named[NP_MAX_OUTPUT_FILES];
    for (uint32_t i = 0; i < p->count; i++) {
        const np_command *c = &p->commands[i];
        if (c->code != NP_WRITE_FILE && c->code != NP_WRITE_MAPPED_FILE)
            continue;
        int known = 0;
        for (unsigned k = 0; k < count; k++)
            known |= named[k] == c->n[0];
        if (known)
            continue;
        if (count == room)
            return say(err, "command %u (%s): argument %llu is output file %u, more than the %u a host publishes%s; "
                       "write fewer files (an argument written twice is one file)", i, np_code_name(c->code),
                       (unsigned long long)c->n[0], count + 1, room,
                       request ? " beside a request's three (--checkpoint-out, --predictions, --result)" : "");
        named[count++] = c->n[0];
    }
    return 0;
}

int np_decode(const uint8_t *bytes, size_t size, np_program *p, char *err)
{
    memset(p, 0, sizeof *p);
    if (size < 32 || memcmp(bytes, NP_MAGIC, 4) != 0)
        return say(err, "not a native physical program (no \"NPHY\" header)");
    uint32_t version = (uint32_t)bytes[4] | (uint32_t)bytes[5] << 8 | (uint32_t)bytes[6] << 16 | (uint32_t)bytes[7] << 24;
    if (version != NP_VERSION)
        return say(err, "program version %u; this host runs version %u", version, NP_VERSION);
    p->slots = le64(bytes + 8);
    p->state_extent = le64(bytes + 16);
    p->identity_length = le64(bytes + 24);
    if (p->slots > NP_MAX_SLOTS)
        return say(err, "%llu slots, more than the %u a host keeps", (unsigned long long)p->slots, NP_MAX_SLOTS);
    if (p->state_extent > NP_MAX_STATE)
        return say(err, "a %llu-byte state, more than the %llu a host keeps", (unsigned long long)p->state_extent,
                   (unsigned long long)NP_MAX_STATE);
    if (p->identity_length > size - 32)
        return say(err, "the identity's length %llu runs past the program's end", (unsigned long long)p->identity_length);
    p->identity = bytes + 32;
    size_t at = 32 + (size_t)p->identity_length;

    uint32_t capacity = 1024;
    p->commands = malloc(capacity * sizeof *p->commands);
    /* pending command fields: (command, which child, its Repeat nesting) of commands still missing children */
    typedef struct {
        uint32_t index;
        uint32_t child;
        uint32_t nesting;        /* the Repeat bodies around the command (NP_MAX_REPEAT_NESTING) */
    } pending_field;
    uint32_t stack_capacity = 1024, depth = 0;
    pending_field *stack = malloc(stack_capacity * sizeof *stack);
    if (!p->commands || !stack) {
        free(stack);
        np_free(p);
        return say(err, "out of memory decoding the program");
    }
    int first = 1;
    while (first || depth > 0) {
        if (at >= size) {
            /* the fields still to come: each pending command's children not yet read (a Repeat's two) */
            unsigned long long pending = 0;
            for (uint32_t k = 0; k < depth; k++)
                pending += CODES[p->commands[stack[k].index].code].children - stack[k].child;
            free(stack);
            np_free(p);
            return say(err, "the program ends at byte %zu with %llu command field%s still to come (cut short)", at,
                       pending, rt_plural(pending));
        }
        unsigned code = bytes[at];
        if (code >= NP_CODE_COUNT) {
            /* the message first: np_free empties the program (its count, its commands) */
            say(err, "byte %zu: unknown command code %u (command %u)", at, code, p->count);
            free(stack);
            np_free(p);
            return -1;
        }
        if (p->count == NP_MAX_COMMANDS) {
            free(stack);
            np_free(p);
            return say(err, "more than %u commands", NP_MAX_COMMANDS);
        }
        if (p->count == capacity) {
            capacity *= 2;
            np_command *grown = realloc(p->commands, capacity * sizeof *grown);
            if (!grown) {
                free(stack);
                np_free(p);
                return say(err, "out of memory decoding the program");
            }
            p->commands = grown;
        }
        uint32_t index = p->count++;
        np_command *c = &p->commands[index];
        memset(c, 0, sizeof *c);
        c->code = (uint8_t)code;
        size_t start = at++;
        unsigned naturals = 0, operands = 0;
        for (const char *f = CODES[code].fields; *f; f++) {
            size_t need = *f == 's' ? 1 : *f == 'o' ? 9 : 8;
            if (size - at < need)
                goto cut;
            if (*f == 's') {
                c->sub = bytes[at];
                if (c->sub > 3) {
                    say(err, "command %u (%s): operation %u is not 0-3", index, CODES[code].name, c->sub);
                    free(stack);
                    np_free(p);   /* after the message: c points into the commands it frees */
                    return -1;
                }
                at += 1;
            } else if (*f == 'n') {
                c->n[naturals++] = le64(bytes + at);
                at += 8;
            } else if (*f == 'o') {
                np_operand *o = &c->v[operands++];
                o->kind = bytes[at];
                o->value = le64(bytes + at + 1);
                if (o->kind > NP_MAPPED_WORD) {
                    say(err, "command %u (%s): operand kind %u is not 0-3", index, CODES[code].name, o->kind);
                    free(stack);
                    np_free(p);   /* after the message: o points into the commands it frees */
                    return -1;
                }
                at += 9;
            } else {
                c->bytes_length = le64(bytes + at);
                at += 8;
                if (c->bytes_length > size - at)
                    goto cut;
                c->bytes = bytes + at;
                at += (size_t)c->bytes_length;
            }
        }
        /* this command fills the innermost pending field: a Repeat's body (its child 0) is one
         * Repeat deeper than the Repeat, every other field as deep as its command */
        uint32_t nesting = 0;
        if (!first) {
            pending_field *top = &stack[depth - 1];
            uint32_t parent = top->index;
            p->commands[parent].child[top->child] = index;
            nesting = top->nesting + (p->commands[parent].code == NP_REPEAT && top->child == 0);
            if (top->child == (uint32_t)(CODES[p->commands[parent].code].children - 1))
                depth--;
            else
                top->child++;
        }
        first = 0;
        /* np_run (and the reference's runner) recurses once per Repeat body: a nesting past the
         * bound is refused here, not met as a stack overflow while the program runs */
        if (code == NP_REPEAT && nesting + 1 > NP_MAX_REPEAT_NESTING) {
            free(stack);
            np_free(p);
            return say(err, "command %u (Repeat): Repeats nested %u deep (one in another's body), more than the %u "
                       "a host runs; nest fewer", index, nesting + 1, NP_MAX_REPEAT_NESTING);
        }
        if (CODES[code].children > 0) {
            if (depth == stack_capacity) {
                stack_capacity *= 2;
                pending_field *grown = realloc(stack, stack_capacity * sizeof *grown);
                if (!grown) {
                    free(stack);
                    np_free(p);
                    return say(err, "out of memory decoding the program");
                }
                stack = grown;
            }
            stack[depth++] = (pending_field){ index, 0, nesting };
        }
        continue;
    cut:
        free(stack);
        np_free(p);
        return say(err, "byte %zu: command %u (%s) is cut short by the program's end", start, index, CODES[code].name);
    }
    free(stack);
    if (at != size) {
        size_t extra = size - at;
        np_free(p);
        return say(err, "%zu byte%s after the program's last command", extra, rt_plural(extra));
    }
    for (uint32_t i = 0; i < p->count; i++)
        if (check_command(p, i, err)) {
            np_free(p);
            return -1;
        }
    if (check_outputs(p, err)) {
        np_free(p);
        return -1;
    }
    return 0;
}

void np_free(np_program *p)
{
    free(p->commands);
    p->commands = NULL;
    p->count = 0;
}
