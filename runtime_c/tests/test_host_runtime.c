/* CPU tests of the host runtime and of the shim's no-GPU path
 * (`make -C runtime_c test`).  Each check prints on failure; the exit status
 * is the number of failures (0 = all passed). */
#define _GNU_SOURCE
#include "diag_file.h"
#include "elf_sections.h"
#include "host_runtime.h"
#include "host_io.h"
#include "host_settings.h"
#include "launch_rows.h"
#include "native_device.h"
#include "native_machine.h"
#include "native_program.h"
#include "native_request.h"
#include "rt_sample.h"
#include "plan_fill.h"
#include "plan_host.h"
#include "nv_rm.h"
#include "nv_shim.h"
#include "nv_status.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <linux/fs.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int failures, checks;
#define CHECK(cond, ...)                                                   \
    do {                                                                   \
        checks++;                                                          \
        if (!(cond)) {                                                     \
            failures++;                                                    \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                  \
            fputc('\n', stderr);                                           \
        }                                                                  \
    } while (0)

static char tmpdir[256];

static rt_contract contract(void)
{
    rt_contract c = { "sample-schema", "sample-learner", "sample-data record", RT_SAMPLE_SEED,
                       RT_SAMPLE_PAYLOAD_BYTES, RT_SAMPLE_CHUNK_BYTES, RT_SAMPLE_CHUNK_COUNT, RT_SAMPLE_UPDATES };
    return c;
}

static float *payload(void)
{
    float *p = malloc(RT_SAMPLE_PAYLOAD_BYTES);
    rt_sample_payload(p);
    for (unsigned i = 0; i < RT_SAMPLE_ELEMENTS; i++) {   /* make the chunks distinguishable */
        p[RT_SAMPLE_ELEMENTS + i] = (float)i * 1e-6f;
        p[2 * RT_SAMPLE_ELEMENTS + i] = (float)i * 1e-9f;
    }
    return p;
}

/* CRC-32 one bit at a time, straight from its definition (reflected 0xEDB88320): the
 * reference the sliced rt_crc32 must agree with. */
static uint32_t crc32_bitwise(const uint8_t *p, size_t n)
{
    uint32_t crc = 0xFFFFFFFFu;
    while (n--) {
        crc ^= *p++;
        for (int k = 0; k < 8; k++)
            crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
    }
    return ~crc;
}

static void test_crc_sliced(void)
{
    /* every length 0..300 at every alignment 0..15, and split anywhere for the continuation */
    static uint8_t buf[320];
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < sizeof buf; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        buf[i] = (uint8_t)x;
    }
    for (size_t align = 0; align < 16; align++)
        for (size_t n = 0; n <= 300; n++) {
            uint32_t want = crc32_bitwise(buf + align, n);
            CHECK(rt_crc32(0, buf + align, n) == want, "crc32 of %zu bytes at +%zu", n, align);
            size_t cut = (n * 7 + align) % (n + 1);
            CHECK(rt_crc32(rt_crc32(0, buf + align, cut), buf + align + cut, n - cut) == want,
                  "crc32 of %zu bytes at +%zu continued at %zu", n, align, cut);
        }
}

static void test_crc_fnv(void)
{
    CHECK(rt_crc32(0, "123456789", 9) == 0xCBF43926u, "crc32 check value 0x%08x", rt_crc32(0, "123456789", 9));
    CHECK(rt_crc32(rt_crc32(0, "1234", 4), "56789", 5) == 0xCBF43926u, "crc32 continuation");
    CHECK(rt_fnv1a64("", 0) == 0xcbf29ce484222325ull, "fnv1a64 empty");
    CHECK(rt_fnv1a64("a", 1) == 0xaf63dc4c8601ec8cull, "fnv1a64('a') = 0x%llx",
          (unsigned long long)rt_fnv1a64("a", 1));
}

/* element 0 of a SplitMix64 chunk, computed by hand from the documented steps */
static float first_element(const char *seed, unsigned shift, int64_t center, double denominator)
{
    uint64_t z = rt_fnv1a64(seed, strlen(seed)) + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (float)((double)((int64_t)(z >> shift) - center) / denominator);
}

static void test_init(void)
{
    size_t bytes = RT_SAMPLE_ELEMENTS * sizeof(float);
    float *p = malloc(bytes), *q = malloc(bytes), *r = malloc(bytes);
    rt_init_chunk(&rt_sample_init[0], p, bytes);
    rt_init_chunk(&rt_sample_init[0], q, bytes);
    rt_init_chunk(&rt_sample_init[2], r, bytes);
    int small = 1, distinct = 0;
    for (unsigned i = 0; i < RT_SAMPLE_ELEMENTS; i++) {
        small &= fabsf(p[i]) <= 0.02f && fabsf(r[i]) <= 0.01f;   /* 2^20 / 52428800, 2^22 / 419430400 */
        distinct += p[i] != p[0];
    }
    CHECK(small, "every element within its initializer's range");
    CHECK(distinct > (int)RT_SAMPLE_ELEMENTS - 100, "values vary (%d differ from P[0])", distinct);
    CHECK(memcmp(p, q, bytes) == 0, "deterministic");
    CHECK(memcmp(p, r, bytes) != 0, "each chunk its own seed and scale");
    float first = first_element(RT_SAMPLE_SEED, 43, 1048576, 52428800.0);
    CHECK(p[0] == first, "P[0] %.9g vs %.9g", p[0], first);
    float last = first_element(RT_SAMPLE_SEED_LAST, 41, 4194304, 419430400.0);
    CHECK(r[0] == last, "chunk 2's R[0] %.9g vs %.9g", r[0], last);
    free(p);
    free(q);
    free(r);
}

/* a bias-corrected step size as a plan fill: (lr sqrt(1 - b2^t)) / (1 - b1^t) in binary64 */
static void test_fill(void)
{
    double lr = 0.02f, b1 = 0.85f, b2 = 0.995f;
    const bobc_scalar_term alpha[] = {
        { BOBC_SCALAR_CONSTANT, lr }, { BOBC_SCALAR_CONSTANT, 1.0 }, { BOBC_SCALAR_CONSTANT, b2 },
        { BOBC_SCALAR_STEP, 0 },      { BOBC_SCALAR_POWER, 0 },      { BOBC_SCALAR_SUBTRACT, 0 },
        { BOBC_SCALAR_SQRT, 0 },      { BOBC_SCALAR_MULTIPLY, 0 },   { BOBC_SCALAR_CONSTANT, 1.0 },
        { BOBC_SCALAR_CONSTANT, b1 }, { BOBC_SCALAR_STEP, 0 },       { BOBC_SCALAR_POWER, 0 },
        { BOBC_SCALAR_SUBTRACT, 0 },  { BOBC_SCALAR_DIVIDE, 0 },
    };
    const bobc_scalar_term step[] = { { BOBC_SCALAR_STEP, 0 } };
    char err[200];
    for (uint32_t t = 1; t <= 13; t++) {
        bobc_fill f = { 0, 1, BOBC_ENCODE_BINARY32, 14, alpha };
        uint8_t out[4];
        CHECK(bobc_fill_bytes(&f, t - 1, out, err, sizeof err) == 0, "fill: %s", err);
        float want = (float)(lr * sqrt(1.0 - pow(b2, t)) / (1.0 - pow(b1, t))), got;
        memcpy(&got, out, 4);
        CHECK(got == want, "alpha_%u %.9g vs %.9g", t, got, want);
        bobc_fill g = { 0, 1, BOBC_ENCODE_WORD32, 1, step };
        CHECK(bobc_fill_bytes(&g, t - 1, out, err, sizeof err) == 0, "fill: %s", err);
        CHECK(out[0] == t && out[1] == 0 && out[2] == 0 && out[3] == 0, "t as u32");
    }
    /* malformed programs are refused, never read past */
    double v;
    const bobc_scalar_term lonely[] = { { BOBC_SCALAR_ADD, 0 } };
    CHECK(bobc_scalar_eval(lonely, 1, 1, &v, err, sizeof err) == -1 && strstr(err, "operands"), "%s", err);
    const bobc_scalar_term two[] = { { BOBC_SCALAR_STEP, 0 }, { BOBC_SCALAR_STEP, 0 } };
    CHECK(bobc_scalar_eval(two, 2, 1, &v, err, sizeof err) == -1 && strstr(err, "not one"), "%s", err);
    const bobc_scalar_term half[] = { { BOBC_SCALAR_CONSTANT, 0.5 } };
    bobc_fill h = { 0, 0, BOBC_ENCODE_WORD32, 1, half };
    uint8_t out[4];
    CHECK(bobc_fill_bytes(&h, 0, out, err, sizeof err) == -1 && strstr(err, "natural"), "%s", err);
    /* a predict's checkpoint may hold any step: input + fill step is taken exactly, past 2^64 too */
    bobc_fill past = { 0, 1, BOBC_ENCODE_WORD32, 1, step };
    CHECK(bobc_fill_bytes(&past, UINT64_MAX, out, err, sizeof err) == -1 &&
          !strcmp(err, "a fill's value 1.8446744073709552e+19 at step 18446744073709551616 is no natural below 2^32"),
          "step 2^64 - 1 + 1: '%s'", err);
    bobc_fill past32 = { 0, 2, BOBC_ENCODE_BINARY32, 1, step };
    float got32 = 0;
    CHECK(bobc_fill_bytes(&past32, UINT64_MAX, out, err, sizeof err) == 0, "binary32 past 2^64: %s", err);
    memcpy(&got32, out, 4);
    CHECK(got32 == 18446744073709551616.0f, "step 2^64 + 1 as binary32: %.9g", got32);
    CHECK(bobc_fill_bytes(&past, 41, out, err, sizeof err) == 0 && out[0] == 42 && !out[1] && !out[2] && !out[3],
          "step 41 + 1: %s", err);
    /* probe s39 mutants2: the edges of the interpreter's own rules (plan_steps.h: ops 1..8; plan_fill.h: a stack of
     * BOBC_SCALAR_STACK values).  An op outside 1..8 is refused, never taken as the last one (sqrt) */
    const bobc_scalar_term op0[] = { { BOBC_SCALAR_CONSTANT, 4.0 }, { 0, 0 } };
    const bobc_scalar_term op9[] = { { BOBC_SCALAR_CONSTANT, 4.0 }, { BOBC_SCALAR_SQRT + 1, 0 } };
    CHECK(bobc_scalar_eval(op0, 2, 1, &v, err, sizeof err) == -1 && strstr(err, "which no scalar has"), "op 0: %s", err);
    CHECK(bobc_scalar_eval(op9, 2, 1, &v, err, sizeof err) == -1 && strstr(err, "which no scalar has"), "op 9: %s", err);
    /* one operand short, for a one-operand and a two-operand op: refused before the stack is read below its bottom */
    const bobc_scalar_term bare_sqrt[] = { { BOBC_SCALAR_SQRT, 0 } };
    const bobc_scalar_term half_add[] = { { BOBC_SCALAR_STEP, 0 }, { BOBC_SCALAR_ADD, 0 } };
    CHECK(bobc_scalar_eval(bare_sqrt, 1, 1, &v, err, sizeof err) == -1 && strstr(err, "operands"), "sqrt: %s", err);
    CHECK(bobc_scalar_eval(half_add, 2, 1, &v, err, sizeof err) == -1 && strstr(err, "operands"), "add: %s", err);
    /* BOBC_SCALAR_STACK values fit (32 halves, summed: 16); one more is refused, never written past */
    bobc_scalar_term deep[2 * BOBC_SCALAR_STACK + 1];
    uint32_t n = 0;
    for (int k = 1; k <= BOBC_SCALAR_STACK; k++)
        deep[n++] = (bobc_scalar_term){ BOBC_SCALAR_CONSTANT, 0.5 };
    for (int k = 1; k < BOBC_SCALAR_STACK; k++)
        deep[n++] = (bobc_scalar_term){ BOBC_SCALAR_ADD, 0 };
    CHECK(bobc_scalar_eval(deep, n, 1, &v, err, sizeof err) == 0 && v == 0.5 * BOBC_SCALAR_STACK, "32 deep: %s %g", err, v);
    bobc_scalar_term deeper[BOBC_SCALAR_STACK + 1];
    for (int k = 0; k <= BOBC_SCALAR_STACK; k++)
        deeper[k] = (bobc_scalar_term){ BOBC_SCALAR_CONSTANT, 1.0 };
    CHECK(bobc_scalar_eval(deeper, BOBC_SCALAR_STACK + 1, 1, &v, err, sizeof err) == -1 && strstr(err, "deeper"),
          "33 deep: %s", err);
}

/* A read at the cursor: base + the input checkpoint's step x scale (+ delta), taken exactly, so
 * a predict's checkpoint of a huge step is refused (exit 3), never read at a wrapped offset;
 * the refusal's words are the reference's (reference/host.py read_past_input). */
static void test_cursor_window(void)
{
    char err[RT_ERR_BYTES] = "";
    const char *what = "a read at the cursor";
    /* the plan host's cursor: (unsigned __int128)step * scale + base */
    unsigned __int128 cursor = (unsigned __int128)((uint64_t)1 << 61) * 8 + 0;
    CHECK(bobc_input_window(cursor, 4, 64, what, err, sizeof err) == RT_EXIT_BAD_INPUT &&
          !strcmp(err, "a read at the cursor: 4 bytes at 18446744073709551616 of a 64-byte input"),
          "step 2^61 x 8: '%s'", err);
    cursor = (unsigned __int128)(((uint64_t)1 << 61) + 1) * 8 + 16;       /* 2^64 + 24: 24 once wrapped */
    CHECK(bobc_input_window(cursor, 4, 64, what, err, sizeof err) == RT_EXIT_BAD_INPUT &&
          strstr(err, "4 bytes at 18446744073709551640 of a 64-byte input"), "step 2^61 + 1: '%s'", err);
    cursor = (unsigned __int128)UINT64_MAX * UINT64_MAX + UINT64_MAX;
    CHECK(bobc_input_window(cursor, 1, 64, what, err, sizeof err) == RT_EXIT_BAD_INPUT &&
          strstr(err, "1 byte at 340282366920938463444927863358058659840 of a 64-byte input"), "the largest: '%s'", err);
    /* probe s43 nativemsgs: a resumed run's cursor names the checkpoint's step (20 x 512 + 16 = 10,256 by
     * hand; 2^64 - 1 x 2^64 - 1 + 2^64 - 1 = 2^128 - 2^64 exactly, never wrapped) */
    bobc_cursor_note(20, 512, 16, err, sizeof err);
    CHECK(!strcmp(err, " (the cursor started at byte 10256: the input checkpoint's step 20 x 512 + 16; resume from an "
                  "earlier checkpoint, or give an input that holds what a run from step 20 reads)"), "'%s'", err);
    bobc_cursor_note(UINT64_MAX, UINT64_MAX, UINT64_MAX, err, sizeof err);
    CHECK(strstr(err, "started at byte 340282366920938463444927863358058659840:") != NULL, "'%s'", err);
    err[0] = 0;
    CHECK(bobc_input_window(60, 4, 64, what, err, sizeof err) == 0 && !err[0], "the last 4 bytes: '%s'", err);
    CHECK(bobc_input_window(64, 0, 64, what, err, sizeof err) == 0, "nothing at the end: '%s'", err);
    CHECK(bobc_input_window(61, 4, 64, what, err, sizeof err) == RT_EXIT_BAD_INPUT &&
          !strcmp(err, "a read at the cursor: 4 bytes at 61 of a 64-byte input"), "past the end: '%s'", err);
    CHECK(bobc_input_window(8, UINT64_MAX, 64, "a cyclic read", err, sizeof err) == RT_EXIT_BAD_INPUT &&
          !strcmp(err, "a cyclic read: 18446744073709551615 bytes at 8 of a 64-byte input"), "a huge extent: '%s'",
          err);
}

static int expect(int rc, int want, const char *err, const char *needle, const char *what)
{
    CHECK(rc == want, "%s: code %d, expected %d (%s)", what, rc, want, err);
    CHECK(!needle || strstr(err, needle), "%s: message '%s' lacks '%s'", what, err, needle);
    return rc == want;
}

/* probe s39 mutants2: a checkpoint file larger than this host reads is judged by its header's identities only
 * where they lie inside its H-byte header (docs/formats.md, "Checkpoint envelope": H u32 at 8, the identity
 * lengths u32 at 48..60, the identities from byte 64).  One running past H is a malformed header, not another
 * identity: the size refusal (exit 4) stands, where a check 16 bytes loose compared the payload's bytes and said
 * foreign (exit 5).  An identity inside the header that differs is foreign. */
static void write_oversized(const char *path, uint32_t schema_length, const char *schema)
{
    rt_contract c = contract();
    size_t n = (size_t)rt_envelope_total_bytes(&c) + (1u << 20) + 1;
    uint8_t *b = calloc(1, n);
    memcpy(b, "BOBCENV1", 8);
    b[8] = 80;                                  /* H = 80 */
    b[48] = (uint8_t)schema_length;             /* schema; learner, data, seed empty */
    memcpy(b + 64, schema, strlen(schema));
    memset(b + 80, 'X', n - 80);                /* what follows the header */
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(b, 1, n, f) == n && fclose(f) == 0, "write %s", path);
    free(b);
}

static void test_oversized_identities(void)
{
    rt_contract c = contract();
    char path[512], err[RT_ERR_BYTES];
    uint8_t *back = malloc(RT_SAMPLE_PAYLOAD_BYTES);
    uint64_t step;
    snprintf(path, sizeof path, "%s/oversized.bin", tmpdir);
    write_oversized(path, 20, "sample-schemaXXX");  /* 64 + 20 = 84: 4 bytes past H */
    expect(rt_checkpoint_read(&c, path, back, &step, err), RT_EXIT_BAD_CHECKPOINT, err, NULL,
           "an oversized file whose identity runs past its header");
    CHECK(!strstr(err, "identity differs"), "judged by bytes past the header: '%s'", err);
    write_oversized(path, 13, "sample-SCHEMA");
    expect(rt_checkpoint_read(&c, path, back, &step, err), RT_EXIT_FOREIGN_CHECKPOINT, err,
           "more than this host's checkpoint", "an oversized file of another schema");
    remove(path);
    free(back);
}

/* probe s43 smallfix: the two size messages that showed bare numbers are grouped by threes, as every
 * other size message (rt_grouped).  The expected texts are written by hand: 4,173 bytes is a 64-byte
 * header + a 4,096-byte payload + the 12-byte trailer + 1 (docs/formats.md "Checkpoint envelope"), and
 * 1,073,741,824 is the reader's 1 GiB bound (docs/limits.md), a file one byte past it sparse. */
static void test_sizes_grouped_s43(void)
{
    char err[RT_ERR_BYTES] = "";
    rt_contract c = contract();
    uint8_t *e = calloc(1, 4173);
    memcpy(e, RT_ENVELOPE_MAGIC, 8);
    e[8] = 64;                          /* H, u32 at 8 */
    e[24 + 1] = 0x10;                   /* payload bytes, u64 at 24: 4,096 */
    expect(rt_envelope_check(&c, e, 4173, "f", NULL, NULL, err), RT_EXIT_BAD_CHECKPOINT, err,
           "checkpoint f: has trailing bytes: 4,173 bytes, but its header (H 64 + payload 4,096 + 12) says 4,172; ",
           "trailing bytes grouped");
    expect(rt_envelope_check(&c, e, 4171, "f", NULL, NULL, err), RT_EXIT_BAD_CHECKPOINT, err,
           "checkpoint f: truncated: 4,171 bytes, but its header (H 64 + payload 4,096 + 12) says 4,172; ",
           "truncated grouped");
    free(e);
    char path[512];
    snprintf(path, sizeof path, "%s/big-s43.bin", tmpdir);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    CHECK(fd >= 0 && ftruncate(fd, ((off_t)1 << 30) + 1) == 0 && close(fd) == 0, "sparse %s", path);
    uint8_t *data = NULL;
    size_t size = 0;
    expect(rt_io_read(NULL, path, "input", RT_IO_INPUT_LIMIT_BYTES, RT_EXIT_BAD_INPUT, &data, &size, err),
           RT_EXIT_BAD_INPUT, err,
           "big-s43.bin: 1,073,741,825 bytes, more than an input can be (1,073,741,824 bytes at most are read)",
           "the reader's bound grouped");
    free(data);
    unlink(path);
}

static void test_envelope(void)
{
    char err[RT_ERR_BYTES] = "";
    rt_contract c = contract();
    float *p = payload();
    uint8_t *e;
    size_t n;
    CHECK(rt_envelope_build(&c, 42, p, &e, &n, err) == 0, "build: %s", err);
    CHECK(n == rt_envelope_total_bytes(&c), "size");
    uint32_t h = rt_envelope_header_bytes(&c);
    CHECK(h % 16 == 0 && h >= 64, "H %u", h);
    CHECK(n == h + RT_SAMPLE_PAYLOAD_BYTES + 12, "total = H + payload + 12");
    const uint8_t *pl;
    uint64_t step = 0;
    CHECK(rt_envelope_check(&c, e, n, "mem", &pl, &step, err) == 0, "round trip: %s", err);
    CHECK(step == 42 && memcmp(pl, p, RT_SAMPLE_PAYLOAD_BYTES) == 0, "round trip payload/step");

    /* file round trip through atomic publish */
    char path[512];
    snprintf(path, sizeof path, "%s/ck.bin", tmpdir);
    CHECK(rt_checkpoint_write(&c, path, 7, p, err) == 0, "write: %s", err);
    float *back = malloc(RT_SAMPLE_PAYLOAD_BYTES);
    CHECK(rt_checkpoint_read(&c, path, back, &step, err) == 0, "read: %s", err);
    CHECK(step == 7 && memcmp(back, p, RT_SAMPLE_PAYLOAD_BYTES) == 0, "file round trip");
    /* an interval checkpoint refused at its path names the request's option, --checkpoint-out, not
     * "output" (probe s36 exitcodes finding 7) */
    char folder_at[600];
    snprintf(folder_at, sizeof folder_at, "%s/ck-folder.bin", tmpdir);
    CHECK(mkdir(folder_at, 0700) == 0, "mkdir %s", folder_at);
    expect(rt_checkpoint_write(&c, folder_at, 7, p, err), RT_EXIT_WRITE_FAILED, err, "ck-folder.bin (--checkpoint-out)",
           "a folder at the checkpoint's path");
    rmdir(folder_at);

    /* corrupted: one payload bit */
    uint8_t *bad = malloc(n);
    memcpy(bad, e, n);
    bad[h + 1000] ^= 1;
    expect(rt_envelope_check(&c, bad, n, "f", NULL, NULL, err), RT_EXIT_BAD_CHECKPOINT, err, "corrupted", "crc");
    /* truncated */
    expect(rt_envelope_check(&c, e, n - 1, "f", NULL, NULL, err), RT_EXIT_BAD_CHECKPOINT, err, "truncated", "n-1");
    expect(rt_envelope_check(&c, e, 10, "f", NULL, NULL, err), RT_EXIT_BAD_CHECKPOINT, err, "truncated", "10 bytes");
    expect(rt_envelope_check(&c, e, h, "f", NULL, NULL, err), RT_EXIT_BAD_CHECKPOINT, err, "truncated", "header only");
    /* not a checkpoint */
    memcpy(bad, e, n);
    bad[0] = 'X';
    expect(rt_envelope_check(&c, bad, n, "f", NULL, NULL, err), RT_EXIT_BAD_CHECKPOINT, err, "not a checkpoint",
           "magic");
    memcpy(bad, e, n);
    bad[n - 1] = 'X';
    expect(rt_envelope_check(&c, bad, n, "f", NULL, NULL, err), RT_EXIT_BAD_CHECKPOINT, err,
           "corrupted: its trailer magic is not BOBCEND1: the file is damaged; copy it again", "trailer");

    /* probe s32 envelope 2: the path as rt_io_shown shows it (a newline '?', a long one shortened),
     * so the message is one line and its reason and what to do whole */
    char long_path[600];
    int at = snprintf(long_path, sizeof long_path, "/tmp/");
    for (int i = 0; i < 200; i++)
        long_path[at++] = 'd';
    long_path[at++] = '/';
    for (int i = 0; i < 200; i++)
        long_path[at++] = 'e';
    snprintf(long_path + at, sizeof long_path - at, "/ck\nx.bin");
    memcpy(bad, e, n);
    bad[h + 1000] ^= 1;
    expect(rt_envelope_check(&c, bad, n, long_path, NULL, NULL, err), RT_EXIT_BAD_CHECKPOINT, err,
           "d.../ck?x.bin: corrupted: CRC-32 stored", "long path, crc");
    CHECK(!strchr(err, '\n') && strstr(err, ": the file is damaged; copy it again from where it was written, or use an "
          "earlier checkpoint"), "one line, what to do: %s", err);
    expect(rt_envelope_check(&c, bad, n, "a\tb.bin", NULL, NULL, err), RT_EXIT_BAD_CHECKPOINT, err,
           "checkpoint a?b.bin: corrupted", "tab");
    /* probe s32 envelope 4: one size field flipped in a file of this host's size is damage, not truncation */
    memcpy(bad, e, n);
    bad[24] ^= 0x10;
    expect(rt_envelope_check(&c, bad, n, "f", NULL, NULL, err), RT_EXIT_BAD_CHECKPOINT, err,
           "corrupted: its header says payload bytes", "payload bytes flipped");
    CHECK(!strstr(err, "truncated") && strstr(err, "the header is damaged; copy it again"), "payload flip: %s", err);
    memcpy(bad, e, n);
    bad[10] ^= 1;
    expect(rt_envelope_check(&c, bad, n, "f", NULL, NULL, err), RT_EXIT_BAD_CHECKPOINT, err,
           "corrupted: its header says header bytes", "header bytes flipped");
    memcpy(bad, e, n);
    bad[8] ^= 4;
    expect(rt_envelope_check(&c, bad, n, "f", NULL, NULL, err), RT_EXIT_BAD_CHECKPOINT, err,
           "corrupted: its header says header bytes", "header bytes odd");
    /* ... while a file shorter than this host's is truncated */
    expect(rt_envelope_check(&c, e, n - 1, "f", NULL, NULL, err), RT_EXIT_BAD_CHECKPOINT, err,
           "truncated: ", "n-1 still truncated");
    CHECK(strstr(err, "; copy it again from where it was written"), "truncated: what to do: %s", err);
    /* a damaged identity length: the CRC says so (the identities are judged after it) */
    memcpy(bad, e, n);
    bad[48] ^= 0x40;
    expect(rt_envelope_check(&c, bad, n, "f", NULL, NULL, err), RT_EXIT_BAD_CHECKPOINT, err, "corrupted: CRC-32",
           "identity length flipped");
    free(bad);
    /* probe s32 envelope 3: self-consistent envelopes (CRC right) of H 8 more than ours and of H 48:
     * each named by its own rule */
    for (int k = 0; k < 2; k++) {
        uint32_t hh = k ? 48 : h + 8;
        size_t nn = hh + RT_SAMPLE_PAYLOAD_BYTES + 12;
        uint8_t *x = calloc(1, nn);
        memcpy(x, e, hh < h ? hh : h);
        x[8] = (uint8_t)hh;
        x[9] = (uint8_t)(hh >> 8);
        memcpy(x + hh, e + h, RT_SAMPLE_PAYLOAD_BYTES);
        uint32_t crc = rt_crc32(0, x, hh + RT_SAMPLE_PAYLOAD_BYTES);
        for (int i = 0; i < 4; i++)
            x[hh + RT_SAMPLE_PAYLOAD_BYTES + i] = (uint8_t)(crc >> (8 * i));
        memcpy(x + hh + RT_SAMPLE_PAYLOAD_BYTES + 4, RT_ENVELOPE_TRAILER, 8);
        expect(rt_envelope_check(&c, x, nn, "f", NULL, NULL, err), RT_EXIT_BAD_CHECKPOINT, err,
               k ? "not a checkpoint: header bytes 48, fewer than the 64 fixed bytes; pass a checkpoint"
                 : "not a multiple of 16; pass a checkpoint this host's plan wrote", k ? "H 48" : "H + 8");
        CHECK(!strstr(err, "do not fit"), "H rule: %s", err);
        free(x);
    }

    /* s39 mutation testing: every byte of the header's padding after the identities must be zero
     * (docs/formats.md), the last one too: the sample contract's identities are 13 + 14 + 18 + 16
     * = 61 bytes, so H is 128 and bytes 125..127 are padding; each is refused with the CRC made right */
    CHECK(h == 128, "sample H %u (identities 61 bytes after the 64 fixed)", h);
    for (uint32_t k = 64 + 61; k < h; k++) {
        uint8_t *x = malloc(n);
        memcpy(x, e, n);
        x[k] = 1;
        uint32_t crc = rt_crc32(0, x, h + RT_SAMPLE_PAYLOAD_BYTES);
        for (int i = 0; i < 4; i++)
            x[h + RT_SAMPLE_PAYLOAD_BYTES + i] = (uint8_t)(crc >> (8 * i));
        char want[64];
        snprintf(want, sizeof want, "padding after the identities is not zero (byte %u)", k);
        expect(rt_envelope_check(&c, x, n, "f", NULL, NULL, err), RT_EXIT_BAD_CHECKPOINT, err, want, "padding byte");
        free(x);
    }

    /* foreign, one part at a time, each named */
    struct { const char *part; rt_contract c; } f[9];
    for (int i = 0; i < 9; i++)
        f[i].c = contract();
    f[0].part = "schema";   f[0].c.schema = "other-schema";
    f[1].part = "learner";  f[1].c.learner = "sample-learner sgd";
    f[2].part = "data";     f[2].c.data = "sample-data other";
    f[3].part = "seed";     f[3].c.seed = "rt-sample-seed-8";
    f[4].part = "payload";  f[4].c.payload_bytes = RT_SAMPLE_PAYLOAD_BYTES - 16;
    f[5].part = "chunk count";   f[5].c.chunk_count = 2;
    f[6].part = "updates";  f[6].c.updates_per_invocation = RT_SAMPLE_UPDATES + 1;
    f[7].part = "chunk bytes";  f[7].c.chunk_bytes = RT_SAMPLE_CHUNK_BYTES / 3;
    /* s39 mutation testing: chunks 4 bytes shorter still tile the payload (3 x (chunk - 4) leaves a 12-byte
     * tail, shorter than a chunk), so only the chunk bytes rule itself refuses them */
    f[8].part = "chunk bytes differ";  f[8].c.chunk_bytes = RT_SAMPLE_CHUNK_BYTES - 4;
    for (int i = 0; i < 9; i++) {
        uint8_t *fe;
        size_t fn;
        CHECK(rt_envelope_build(&f[i].c, 3, p, &fe, &fn, err) == 0, "build foreign");
        char what[64];
        snprintf(what, sizeof what, "foreign %s", f[i].part);
        expect(rt_envelope_check(&c, fe, fn, "f", NULL, NULL, err), RT_EXIT_FOREIGN_CHECKPOINT, err, f[i].part,
               what);
        CHECK(strstr(err, "foreign checkpoint"), "%s: says foreign: %s", what, err);
        /* probe s32 envelope 7: what to do, whole after a long path */
        expect(rt_envelope_check(&c, fe, fn, long_path, NULL, NULL, err), RT_EXIT_FOREIGN_CHECKPOINT, err,
               "; pass a checkpoint this host's plan wrote, or none to start fresh", what);
        free(fe);
    }
    /* first differing part wins: learner and seed differ -> learner */
    rt_contract two = contract();
    two.learner = "x";
    two.seed = "y";
    uint8_t *te;
    size_t tn;
    rt_envelope_build(&two, 0, p, &te, &tn, err);
    expect(rt_envelope_check(&c, te, tn, "f", NULL, NULL, err), RT_EXIT_FOREIGN_CHECKPOINT, err, "learner",
           "order learner before seed");
    free(te);
    /* missing file */
    snprintf(path, sizeof path, "%s/none.bin", tmpdir);
    expect(rt_checkpoint_read(&c, path, back, &step, err), RT_EXIT_BAD_CHECKPOINT, err, "none.bin", "missing");
    free(back);
    free(e);
    free(p);
}

/* temporaries (`.NAME.tmp-`) in `folder` */
static int temporaries_in(const char *folder)
{
    DIR *d = opendir(folder);
    int n = 0;
    struct dirent *de;
    while (d && (de = readdir(d)))
        n += strstr(de->d_name, ".tmp-") != NULL;
    if (d)
        closedir(d);
    return n;
}

static void test_publish(void)
{
    char err[RT_ERR_BYTES] = "";
    char path[512];
    snprintf(path, sizeof path, "%s/out.bin", tmpdir);
    CHECK(rt_publish_atomic(path, "old-contents", 12, err) == 0, "publish: %s", err);
    /* a write that fails part way (file size limit) leaves the old file and no temporary: with
     * SIGXFSZ's default disposition, as a host starts (a batch scheduler's RLIMIT_FSIZE), the
     * publication is refused, exit 8, one line naming the output and the limit -- never a process
     * killed silently by the signal (probe s33 resources finding 4) */
    fflush(NULL);
    int pipe_fds[2];
    CHECK(pipe(pipe_fds) == 0, "pipe");
    pid_t pid = fork();
    if (pid == 0) {
        close(pipe_fds[0]);
        signal(SIGXFSZ, SIG_DFL);
        struct rlimit rl = { 4096, 4096 };
        setrlimit(RLIMIT_FSIZE, &rl);
        static char big[1 << 16];
        memset(big, 'n', sizeof big);
        char e2[RT_ERR_BYTES] = "";
        int rc = rt_publish_atomic(path, big, sizeof big, e2);
        if (write(pipe_fds[1], e2, strlen(e2)) < 0)
            _exit(99);
        _exit(rc);
    }
    close(pipe_fds[1]);
    char said[RT_ERR_BYTES] = "";
    size_t said_n = 0;
    ssize_t r;
    while (said_n < sizeof said - 1 && (r = read(pipe_fds[0], said + said_n, sizeof said - 1 - said_n)) > 0)
        said_n += (size_t)r;
    close(pipe_fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    fprintf(stderr, "(expected) %s\n", said);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == RT_EXIT_WRITE_FAILED,
          "failing publish exits 8, not killed by SIGXFSZ (status %d: %s)", status,
          WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "exited");
    CHECK(strstr(said, "out.bin") && strstr(said, "File too large") && strstr(said, "ulimit -f, is 4096 bytes") &&
              strstr(said, "nothing was published") && !strchr(said, '\n'),
          "the refusal names the output and the limit, one line: '%s'", said);
    char buf[64] = "";
    FILE *f = fopen(path, "rb");
    size_t got = f ? fread(buf, 1, sizeof buf, f) : 0;
    if (f)
        fclose(f);
    CHECK(got == 12 && memcmp(buf, "old-contents", 12) == 0, "old output intact after a failed publish");
    CHECK(temporaries_in(tmpdir) == 0, "no temporary left behind");
    /* the host's own file is an input (it reads its images from /proc/self/exe): an output that is
     * it, by its path, a `../` path or a hard link, is refused as an output that is an input is,
     * exit 8, and the file is untouched (probe s33 resources finding 3) */
    {
        char self[4096], self_folder[4096], dotted[8300], linked[4200];
        ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
        CHECK(n > 0, "readlink /proc/self/exe");
        self[n > 0 ? n : 0] = 0;
        struct stat before, after;
        CHECK(stat(self, &before) == 0, "stat self");
        snprintf(self_folder, sizeof self_folder, "%s", self);
        char *slash = strrchr(self_folder, '/');
        *slash = 0;
        const char *folder_name = strrchr(self_folder, '/') + 1;
        snprintf(dotted, sizeof dotted, "%s/../%s/%s", self_folder, folder_name, slash + 1);
        snprintf(linked, sizeof linked, "%s/.self-link-%d", self_folder, (int)getpid());
        int have_link = link(self, linked) == 0;
        const char *named[3] = { self, dotted, have_link ? linked : NULL };
        for (int k = 0; k < 3; k++) {
            if (!named[k])
                continue;
            rt_io_files files;
            memset(&files, 0, sizeof files);
            int rc = rt_io_add_output(&files, named[k], "--result", NULL, err);
            expect(rc, RT_EXIT_WRITE_FAILED, err, "(this host's own file); an output never replaces an input; "
                   "nothing was written", "an output that is the host's own file");
            CHECK(strncmp(err, "output ", 7) == 0 && strstr(err, self) && strstr(err, "(--result)"),
                  "the refusal names the output, its option and the host's file: '%s'", err);
            /* a diagnostic file the environment names is judged alike (diag_file.h) */
            rc = rt_diag_check("BOBC_HOST_TIMING", named[k], NULL, 0, err, sizeof err);
            expect(rc, RT_EXIT_WRITE_FAILED, err, "(this host's own file); a diagnostic file never replaces an input",
                   "a diagnostic file that is the host's own file");
            FILE *opened = NULL;
            rc = rt_diag_open("NATIVE_TRACE", named[k], NULL, 0, &opened, err, sizeof err);
            expect(rc, RT_EXIT_WRITE_FAILED, err, "(this host's own file); a diagnostic file never replaces an input",
                   "a diagnostic file opened that is the host's own file");
            if (opened)
                fclose(opened);
        }
        if (have_link)
            unlink(linked);
        CHECK(stat(self, &after) == 0 && after.st_size == before.st_size && after.st_mtime == before.st_mtime,
              "the host's own file untouched");
        CHECK(temporaries_in(self_folder) == 0, "no temporary beside the host's file");
        /* another file in the same folder is no input */
        rt_io_files files;
        memset(&files, 0, sizeof files);
        snprintf(linked, sizeof linked, "%s/.not-self-%d", self_folder, (int)getpid());
        CHECK(rt_io_add_output(&files, linked, "--result", NULL, err) == 0, "another file beside it: %s", err);
    }
    /* a folder that does not exist */
    snprintf(path, sizeof path, "%s/no/such/dir/out.bin", tmpdir);
    expect(rt_publish_atomic(path, "x", 1, err), RT_EXIT_WRITE_FAILED, err, "out.bin", "missing folder");
    struct stat st;
    CHECK(stat(path, &st) != 0, "nothing at the path");
}

static int there(const char *path);

static int file_holds(const char *path, const char *text)
{
    char buf[64] = "";
    FILE *f = fopen(path, "rb");
    size_t got = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f)
        fclose(f);
    return got == strlen(text) && memcmp(buf, text, got) == 0;
}

/* Publication's two phases (host_io.h): rt_io_prepare writes the temporaries, rt_io_publish only
 * renames them; a failure to prepare names the output and removes every temporary; discarding or
 * a SIGTERM after preparing leaves the old files and no temporary. */
static void test_prepare(void)
{
    char err[RT_ERR_BYTES] = "", folder[512], sub[600], a[700], b[700], c[700];
    snprintf(folder, sizeof folder, "%s/prepare", tmpdir);
    mkdir(folder, 0755);
    snprintf(sub, sizeof sub, "%s/sub", folder);
    snprintf(a, sizeof a, "%s/a.bin", folder);
    snprintf(b, sizeof b, "%s/b.bin", folder);
    snprintf(c, sizeof c, "%s/c.bin", sub);
    CHECK(rt_publish_atomic(a, "OLD-A", 5, err) == 0, "publish: %s", err);
    CHECK(np_code_name(NP_PREPARE_OUTPUTS) && !strcmp(np_code_name(NP_PREPARE_OUTPUTS), "PrepareOutputs"),
          "code 36 is PrepareOutputs");

    /* prepared, then published: the temporaries exist between the two, the old file unchanged */
    rt_io_files *files = calloc(1, sizeof *files);
    CHECK(rt_io_add_output(files, a, "argument 0", NULL, err) == 0 && rt_io_add_output(files, b, "argument 1", NULL,
          err) == 0, "outputs: %s", err);
    CHECK(rt_io_stage(files, "argument 0", "NEW-A", 5, err) == 0 && rt_io_stage(files, "argument 1", "NEW-B", 5, err) == 0,
          "stage: %s", err);
    CHECK(rt_io_prepare(files, err) == 0, "prepare: %s", err);
    CHECK(temporaries_in(folder) == 2 && file_holds(a, "OLD-A") && !there(b) && files->outputs[0].prepared,
          "prepared: two temporaries, nothing renamed yet");
    CHECK(rt_io_prepare(files, err) == 0 && temporaries_in(folder) == 2, "a second prepare writes nothing again");
    CHECK(rt_io_publish(files, err) == 0, "publish: %s", err);
    CHECK(file_holds(a, "NEW-A") && file_holds(b, "NEW-B") && temporaries_in(folder) == 0, "published by renames");

    /* discarded after preparing: the old files stay, no temporary */
    memset(files, 0, sizeof *files);
    rt_io_add_output(files, a, "argument 0", NULL, err);
    rt_io_stage(files, "argument 0", "LOST", 4, err);
    CHECK(rt_io_prepare(files, err) == 0 && temporaries_in(folder) == 1, "prepare: %s", err);
    rt_io_discard(files);
    CHECK(temporaries_in(folder) == 0 && file_holds(a, "NEW-A") && !files->outputs[0].prepared, "discarded");

    /* the second output's folder gone: refused naming it, the first one's temporary removed too */
    mkdir(sub, 0755);
    memset(files, 0, sizeof *files);
    CHECK(rt_io_add_output(files, a, "argument 0", NULL, err) == 0 && rt_io_add_output(files, c, "argument 5", NULL,
          err) == 0, "outputs: %s", err);
    rt_io_stage(files, "argument 0", "LOST", 4, err);
    rt_io_stage(files, "argument 5", "LOST", 4, err);
    rmdir(sub);
    char want[2048];
    snprintf(want, sizeof want, "output %s (argument 5): cannot create a temporary file in %s: No such file or "
             "directory; nothing was published", c, sub);
    expect(rt_io_prepare(files, err), RT_EXIT_WRITE_FAILED, err, want, "prepare into a folder gone");
    CHECK(!strcmp(err, want), "the whole message: '%s'", err);
    CHECK(temporaries_in(folder) == 0 && file_holds(a, "NEW-A"), "nothing left, nothing published");

    /* SIGTERM after preparing (the program waits for its peer): the temporaries removed, the process
     * ended by SIGTERM */
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        rt_io_files *mine = calloc(1, sizeof *mine);
        char e2[RT_ERR_BYTES];
        rt_io_add_output(mine, a, "argument 0", NULL, e2);
        rt_io_add_output(mine, b, "argument 1", NULL, e2);
        rt_io_stage(mine, "argument 0", "KILLED", 6, e2);
        rt_io_stage(mine, "argument 1", "KILLED", 6, e2);
        if (rt_io_prepare(mine, e2) || temporaries_in(folder) != 2)
            _exit(3);
        raise(SIGTERM);
        _exit(4);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM, "ended by SIGTERM (status 0x%x)", status);
    CHECK(temporaries_in(folder) == 0 && file_holds(a, "NEW-A") && file_holds(b, "NEW-B"),
          "SIGTERM after prepare: no temporary, the old files");
    free(files);
}

static const uint32_t sample_queries[RT_SAMPLE_QUERIES] = { 4, 8, 15, 16, 23 };

static void make_record(uint8_t *r)
{
    memset(r, 0, RT_SAMPLE_RECORD_BYTES);
    memcpy(r, "RTSAMPLE", 8);
    r[8] = 3;
    for (unsigned k = 0; k < RT_SAMPLE_KEYS; k++) {
        uint8_t v = (uint8_t)((k * 11 + 5) % RT_SAMPLE_VALUES);
        r[RT_SAMPLE_PAIRS_AT + 2 * k] = (uint8_t)k;
        r[RT_SAMPLE_PAIRS_AT + 2 * k + 1] = v;
        r[RT_SAMPLE_WORDS_AT + 4 * k] = v;
    }
    for (unsigned q = 0; q < RT_SAMPLE_QUERIES; q++)
        r[RT_SAMPLE_QUERIES_AT + 4 * q] = (uint8_t)sample_queries[q];
}

static void test_input(void)
{
    char err[RT_ERR_BYTES] = "";
    uint8_t r[RT_SAMPLE_RECORD_BYTES], x[RT_SAMPLE_RECORD_BYTES];
    const rt_record_contract *c = &rt_sample_record;
    make_record(r);
    CHECK(rt_record_verify(c, r, sizeof r, "rec", err) == 0, "valid record: %s", err);
    expect(rt_record_verify(c, r, sizeof r - 1, "rec", err), RT_EXIT_BAD_INPUT, err, "257 bytes", "size");
    {   /* s39 mutation testing: a record one byte longer is refused too: its size is exact */
        uint8_t longer[RT_SAMPLE_RECORD_BYTES + 1];
        memcpy(longer, r, sizeof r);
        longer[sizeof r] = 0;
        expect(rt_record_verify(c, longer, sizeof longer, "rec", err), RT_EXIT_BAD_INPUT, err,
               "259 bytes, expected exactly 258", "a byte longer");
    }
    {   /* s42 recordoffset: the sizes grouped by threes (certify/limits.py shown_bytes's grouping);
         * a wrong size is refused before a byte is read */
        const rt_record_contract big = { 2064, c->checks, 0 };
        expect(rt_record_verify(&big, r, 6192000, "rec", err), RT_EXIT_BAD_INPUT, err,
               "input record rec: 6,192,000 bytes, expected exactly 2,064", "a size grouped");
        expect(rt_record_verify(&big, r, 1, "rec", err), RT_EXIT_BAD_INPUT, err,
               "input record rec: 1 byte, expected exactly 2,064 (truncated)", "one byte, grouped");
        static const struct { unsigned long long v; const char *shown; } grouped[] = {
            { 0, "0" }, { 1, "1" }, { 999, "999" }, { 1000, "1,000" }, { 999999, "999,999" },
            { 1000000, "1,000,000" }, { 6192000, "6,192,000" }, { 1073741824, "1,073,741,824" },
            { 18446744073709551615ull, "18,446,744,073,709,551,615" },
        };
        for (size_t k = 0; k < sizeof grouped / sizeof grouped[0]; k++) {
            char out[RT_GROUPED_BYTES];
            CHECK(!strcmp(rt_grouped(grouped[k].v, out), grouped[k].shown), "rt_grouped(%llu) is '%s', not '%s'",
                  grouped[k].v, out, grouped[k].shown);
        }
    }
    memcpy(x, r, sizeof r);
    x[0] = 'X';
    expect(rt_record_verify(c, x, sizeof x, "rec", err), RT_EXIT_BAD_INPUT, err, "magic at byte 0 is not", "magic");
    memcpy(x, r, sizeof r);
    x[8] = 2;
    expect(rt_record_verify(c, x, sizeof x, "rec", err), RT_EXIT_BAD_INPUT, err, "version at byte 8 is 2, expected 3", "version");
    CHECK(!strstr(err, "big-endian"), "version 2 is not big-endian: %s", err);
    /* probe s32 envelope 2 and 7: a tab in the path is '?'; a word written big-endian is said to be */
    x[8] = 0;
    x[15] = 3;
    expect(rt_record_verify(c, x, sizeof x, "a\tb.rec", err), RT_EXIT_BAD_INPUT, err,
           "input record a?b.rec: version at byte 8 is 216172782113783808, expected 3 (its bytes reversed: the record was written "
           "big-endian; write it little-endian)", "big-endian version");
    memcpy(x, r, sizeof r);
    x[RT_SAMPLE_PAIRS_AT + 2 * 9] = 10;
    /* s42 recordoffset: each refusal names its word's byte, offset + i x stride (here by hand) */
    char said[RT_ERR_BYTES];
    snprintf(said, sizeof said, "key 9 at byte %u names 10", RT_SAMPLE_PAIRS_AT + 9 * 2);
    expect(rt_record_verify(c, x, sizeof x, "rec", err), RT_EXIT_BAD_INPUT, err, said, "key index");
    memcpy(x, r, sizeof r);
    x[RT_SAMPLE_PAIRS_AT + 2 * 5 + 1] ^= 1;
    snprintf(said, sizeof said, "pair's value 5 at byte %u is ", RT_SAMPLE_PAIRS_AT + 1 + 5 * 2);
    expect(rt_record_verify(c, x, sizeof x, "rec", err), RT_EXIT_BAD_INPUT, err, said, "pair vs word");
    snprintf(said, sizeof said, ", but the word at byte %u says ", RT_SAMPLE_WORDS_AT + 5 * 4);
    expect(rt_record_verify(c, x, sizeof x, "rec", err), RT_EXIT_BAD_INPUT, err, said, "pair vs word, its other");
    memcpy(x, r, sizeof r);
    x[RT_SAMPLE_WORDS_AT + 4 * 36] = 41;
    snprintf(said, sizeof said, "value word 36 at byte %u is 41, not below 41", RT_SAMPLE_WORDS_AT + 36 * 4);
    expect(rt_record_verify(c, x, sizeof x, "rec", err), RT_EXIT_BAD_INPUT, err, said, "value range");
    memcpy(x, r, sizeof r);
    x[RT_SAMPLE_QUERIES_AT + 1] = 1;
    snprintf(said, sizeof said, "query 0 at byte %u is 260, not below 41", RT_SAMPLE_QUERIES_AT + 0 * 4);
    expect(rt_record_verify(c, x, sizeof x, "rec", err), RT_EXIT_BAD_INPUT, err, said, "query range");
    char path[512];
    snprintf(path, sizeof path, "%s/missing.rec", tmpdir);
    uint8_t *back;
    expect(rt_record_read(c, path, &back, err), RT_EXIT_BAD_INPUT, err, "missing.rec", "missing record");
    /* probe s37 cinject 1: a check's name is the plan's text; its control characters (a newline,
     * ESC, CR, DEL) are '?' in the one-line message, its other bytes kept */
    static const rt_record_check named[] = {
        { RT_CHECK_BYTES, "ma\ngic\033[31m\r\177 %s \"*/", 0, 0, 0, 0, 0, "RTSAMPLE", 8, 0, 0, 0, RT_WORD_UNSIGNED },
        { RT_CHECK_WORD, "ver\tsion", 8, 8, 0, 1, 3, NULL, 0, 0, 0, 0, RT_WORD_UNSIGNED },
    };
    const rt_record_contract odd = { RT_SAMPLE_RECORD_BYTES, named, 2 };
    memcpy(x, r, sizeof r);
    x[0] = 'X';
    expect(rt_record_verify(&odd, x, sizeof x, "rec", err), RT_EXIT_BAD_INPUT, err,
           "input record rec: ma?gic?[31m?? %s \"*/ at byte 0 is not 'RTSAMPLE'", "a check's name, shown");
    memcpy(x, r, sizeof r);
    x[8] = 2;
    expect(rt_record_verify(&odd, x, sizeof x, "rec", err), RT_EXIT_BAD_INPUT, err,
           "input record rec: ver?sion at byte 8 is 2, expected 3", "a word check's name, shown");
}

/* probe s41 mutants6: a refused word shown as its check's format (host_runtime.c shown_word), at the
 * edges tests/host/test_record_word_shown_s41.py holds reference/host.py's shown_word to, the same table:
 * two's complement of the width's bits; C99 "%.9g" / "%.17g" of the IEEE value (2^-149 1.40129846e-45,
 * FLT_MAX 3.40282347e+38, 2^-1074 4.9406564584124654e-324, -0 "-0"); inf, -inf; a NaN with its bits. */
static void test_record_word_formats(void)
{
    static const struct { uint64_t bits; uint32_t width; int format; const char *shown; } cases[] = {
        { 0xff, 1, RT_WORD_SIGNED, "-1" },
        { 0x7f, 1, RT_WORD_SIGNED, "127" },
        { 0x8000, 2, RT_WORD_SIGNED, "-32768" },
        { 0x7fffffff, 4, RT_WORD_SIGNED, "2147483647" },
        { 0x80000000, 4, RT_WORD_SIGNED, "-2147483648" },
        { 0xffffffffffffffffull, 8, RT_WORD_SIGNED, "-1" },
        { 0x8000000000000000ull, 8, RT_WORD_SIGNED, "-9223372036854775808" },
        { 0xffffffffffffffffull, 8, RT_WORD_UNSIGNED, "18446744073709551615" },
        { 0x7f800000, 4, RT_WORD_BINARY32, "inf" },
        { 0xff800000, 4, RT_WORD_BINARY32, "-inf" },
        { 0x80000000, 4, RT_WORD_BINARY32, "-0" },
        { 0x00000001, 4, RT_WORD_BINARY32, "1.40129846e-45" },
        { 0x7f7fffff, 4, RT_WORD_BINARY32, "3.40282347e+38" },
        { 0xffc00000, 4, RT_WORD_BINARY32, "nan (0xffc00000)" },
        { 0x7ff0000000000000ull, 8, RT_WORD_BINARY64, "inf" },
        { 0x0000000000000001ull, 8, RT_WORD_BINARY64, "4.9406564584124654e-324" },
        { 0x7ff8000000000001ull, 8, RT_WORD_BINARY64, "nan (0x7ff8000000000001)" },
        { 0x3ff0000000000000ull, 8, RT_WORD_BINARY64, "1" },
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char err[RT_ERR_BYTES] = "", want[160];
        uint8_t record[8] = { 0 };
        for (uint32_t b = 0; b < cases[k].width; b++)
            record[b] = (uint8_t)(cases[k].bits >> (8 * b));
        /* the check expects 0 (unsigned: "0"; signed "0"; binary32/64 +0 "0"); the word holds the case's bits */
        const rt_record_check check = { RT_CHECK_WORD, "w", 0, cases[k].width, 0, 1, 0, NULL, 0, 0, 0, 0,
                                        cases[k].format };
        const rt_record_contract one = { 8, &check, 1 };
        snprintf(want, sizeof want, "input record rec: w at byte 0 is %s, expected 0", cases[k].shown);
        CHECK(rt_record_verify(&one, record, sizeof record, "rec", err) == RT_EXIT_BAD_INPUT && !strcmp(err, want),
              "word %#llx (%u bytes, format %d): '%s', expected '%s'", (unsigned long long)cases[k].bits,
              cases[k].width, cases[k].format, err, want);
    }
}

static void test_args(void)
{
    char err[RT_ERR_BYTES] = "";
    rt_args a;
    char *ok[] = { "host", "train", "--input", "r", "--checkpoint-out", "o", "--predictions=p", "--result", "s" };
    CHECK(rt_parse_args(9, ok, &a, err) == 0, "valid: %s", err);
    CHECK(a.op == RT_OP_TRAIN && !strcmp(a.predictions, "p") && !a.checkpoint_in, "fields");
    char *help[] = { "host", "--help" };
    CHECK(rt_parse_args(2, help, &a, err) == 0 && a.help, "--help");
    char *noop[] = { "host", "--input", "r" };
    expect(rt_parse_args(3, noop, &a, err), RT_EXIT_USAGE, err, "train or predict", "no op");
    char *badop[] = { "host", "fly" };
    expect(rt_parse_args(2, badop, &a, err), RT_EXIT_USAGE, err, "'fly'", "bad op");
    char *missing[] = { "host", "predict", "--input", "r", "--checkpoint-out", "o", "--predictions", "p" };
    expect(rt_parse_args(8, missing, &a, err), RT_EXIT_USAGE, err, "--result", "missing --result");
    char *unknown[] = { "host", "predict", "--inptu", "r" };
    expect(rt_parse_args(4, unknown, &a, err), RT_EXIT_USAGE, err, "--inptu", "unknown option");
    char *twice[] = { "host", "predict", "--input", "r", "--input", "q" };
    expect(rt_parse_args(6, twice, &a, err), RT_EXIT_USAGE, err, "twice", "duplicate");
    char *novalue[] = { "host", "predict", "--input" };
    expect(rt_parse_args(3, novalue, &a, err), RT_EXIT_USAGE, err, "needs a value", "no value");
    /* the value missing before the next option: named so, not taken for the value (probe s27) */
    char *skipped[] = { "host", "train", "--input", "--checkpoint-out", "o", "--predictions", "p", "--result", "s" };
    expect(rt_parse_args(9, skipped, &a, err), RT_EXIT_USAGE, err,
           "option --input needs a value; the next word, '--checkpoint-out', is an option", "value before an option");
    char *dashed[] = { "host", "train", "--input=-r", "--checkpoint-out", "-", "--predictions", "p", "--result", "s" };
    CHECK(rt_parse_args(9, dashed, &a, err) == 0 && !strcmp(a.input, "-r") && !strcmp(a.checkpoint_out, "-"),
          "'--input=-r' and a lone '-' are values: %s", err);
}

/* `what` runs with stderr sent to a file; what it printed there (at most `n` - 1 bytes). */
/* What `what` writes on stderr, NUL-terminated in out; its byte count (NULs included). */
static size_t captured(void (*what)(void), char *out, size_t n)
{
    char path[300];
    snprintf(path, sizeof path, "%s/stderr.txt", tmpdir);
    fflush(stderr);
    int saved = dup(2), fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(fd, 2);
    close(fd);
    what();
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    FILE *f = fopen(path, "r");
    size_t got = f ? fread(out, 1, n - 1, f) : 0;
    out[got] = 0;
    if (f)
        fclose(f);
    return got;
}

static int quiet_rc;
static char quiet_error[sizeof ((rt_gpu *)0)->error];
static void open_quietly(void)
{
    rt_gpu g;
    rt_gpu_config config;
    memset(&config, 0, sizeof config);
    config.quiet = 1;
    quiet_rc = rt_gpu_open(&g, &RT_TARGET_SM90, &config);
    snprintf(quiet_error, sizeof quiet_error, "%s", g.error);
    rt_gpu_close(&g);
}

/* BOBC_GPU_MAPPING judged on its own (a host's start-up), and a quiet shim (probe s27) */
static void test_gpu_settings(void)
{
    char err[RT_ERR_BYTES] = "";
    int mapping = -1;
    unsetenv("BOBC_GPU_MAPPING");
    CHECK(rt_gpu_mapping_setting(&mapping, err, sizeof err) == 0 && mapping == RT_GPU_MAPPING_AUTO, "unset: AUTO");
    setenv("BOBC_GPU_MAPPING", "uvm", 1);
    CHECK(rt_gpu_mapping_setting(&mapping, err, sizeof err) == 0 && mapping == RT_GPU_MAPPING_UVM, "uvm");
    setenv("BOBC_GPU_MAPPING", "rm", 1);
    CHECK(rt_gpu_mapping_setting(&mapping, err, sizeof err) == 0 && mapping == RT_GPU_MAPPING_RM, "rm");
    setenv("BOBC_GPU_MAPPING", "bogus", 1);
    expect(rt_gpu_mapping_setting(&mapping, err, sizeof err), RT_EXIT_USAGE, err,
           "BOBC_GPU_MAPPING=bogus: expected rm or uvm (or leave it unset)", "a misspelt mapping");
    if (!rt_gpu_present()) {         /* rt_gpu_open says the same, before looking for a GPU */
        char said[1024];
        captured(open_quietly, said, sizeof said);
        CHECK(quiet_rc == RT_EXIT_USAGE && strstr(quiet_error, "BOBC_GPU_MAPPING=bogus"), "open: %d %s", quiet_rc,
              quiet_error);
        CHECK(said[0] == 0, "a quiet shim prints nothing: '%s'", said);
        unsetenv("BOBC_GPU_MAPPING");
        captured(open_quietly, said, sizeof said);
        CHECK(quiet_rc == RT_EXIT_NO_GPU && strstr(quiet_error, "no GPU"), "open: %d %s", quiet_rc, quiet_error);
        CHECK(said[0] == 0, "a quiet shim prints nothing: '%s'", said);
    }
    unsetenv("BOBC_GPU_MAPPING");
}

/* ---- the native host's machine and device session (probe s27, findings 10 and 11) ---- */

static np_machine telemetry_machine;
static int telemetry_rc;
static void run_telemetry(void)
{
    telemetry_rc = np_run(&telemetry_machine, 0);
}

/* A Telemetry label padded with NULs (seed 003's 64-byte identity) is printed up to its first
 * NUL: a text line, no raw NUL bytes. */
static void test_native_telemetry(void)
{
    static const uint8_t label[] = "coordinate-host-v1\0\0\0\0\0\0\0\0\0\0\0\0";
    np_command commands[2];
    memset(commands, 0, sizeof commands);
    commands[0].code = NP_TELEMETRY;
    commands[0].n[0] = 1;
    commands[0].bytes = label;
    commands[0].bytes_length = sizeof label - 1;
    commands[0].child[0] = 1;
    commands[1].code = NP_END;
    np_program p;
    memset(&p, 0, sizeof p);
    p.slots = 1;
    p.state_extent = 8;
    p.commands = commands;
    p.count = 2;
    uint64_t slots[1] = { 0 };
    uint8_t state[8] = { 0 };
    memset(&telemetry_machine, 0, sizeof telemetry_machine);
    telemetry_machine.p = &p;
    telemetry_machine.slots = slots;
    telemetry_machine.state = state;
    telemetry_machine.start_us = np_now_us();
    telemetry_machine.telemetry = 1;
    char said[512];
    size_t length = captured(run_telemetry, said, sizeof said);
    CHECK(telemetry_rc == 0, "telemetry run: %d %s", telemetry_rc, telemetry_machine.message);
    CHECK(length == strlen(said), "a telemetry line carries no NUL (%zu bytes, %zu before the first NUL)", length,
          strlen(said));
    CHECK(strncmp(said, "native: telemetry coordinate-host-v1 +", 38) == 0 && length && said[length - 1] == '\n',
          "telemetry line: '%s'", said);
    telemetry_machine.telemetry = 0;          /* below the command's level: nothing */
    length = captured(run_telemetry, said, sizeof said);
    CHECK(telemetry_rc == 0 && length == 0, "level 0 prints nothing: '%s'", said);
}

/* Submit's ring slot and put index: ring + 8 x (n mod entries) and n + 1 taken exactly (the
 * counter n is a state word, the ring's address and size immediates): past 2^64 the slot is in no
 * buffer and is named as it is, as the reference names it, never the low address it wraps to. */
static uint8_t ring_memory[4096];
static uint8_t *ring_mapped(np_machine *m, uint64_t address, uint64_t bytes)
{
    (void)m;
    return address <= sizeof ring_memory && bytes <= sizeof ring_memory - address ? ring_memory + address : NULL;
}

static int ring_buffer(np_machine *m, uint64_t address, const char **name, uint64_t *host, uint64_t *extent)
{
    (void)m;
    if (address >= sizeof ring_memory)
        return 0;
    *name = "ring";
    *host = 0;
    *extent = sizeof ring_memory;
    return 1;
}

static void test_ring_slot(void)
{
    static const np_hooks hooks = { ring_mapped, NULL, NULL, NULL, NULL };
    np_command commands[1];
    memset(commands, 0, sizeof commands);
    commands[0].code = NP_SUBMIT;
    np_program p;
    memset(&p, 0, sizeof p);
    p.commands = commands;
    p.count = 1;
    np_machine m;
    memset(&m, 0, sizeof m);
    m.p = &p;
    m.hooks = &hooks;
    CHECK(np_ring_slot(&m, 0, 0x100, 4, 5) == ring_memory + 0x108, "submission 5 of a 4-entry ring at 0x100");
    CHECK(np_ring_slot(&m, 0, 0xFF8, 2, 1) == NULL && m.status == 10 &&
          !strcmp(m.message, "command 0 (Submit): ring slot 1 of 2 (submission 1) at mapped [0x1000, +8) is in no "
                  "host-mapped buffer (Map one there with a nonzero host address first)"),
          "a slot past the buffer: %d '%s'", m.status, m.message);
    m.status = 0;
    /* probe s43 nativemsgs: a host that names its buffers says the ring outgrows the one it starts in
     * (2 entries of 8 bytes from 0xFF8 end at 0x1008, past the 4096-byte buffer at 0: by hand) */
    static const np_hooks named = { ring_mapped, NULL, NULL, NULL, ring_buffer };
    m.hooks = &named;
    CHECK(np_ring_slot(&m, 0, 0xFF8, 2, 1) == NULL && m.status == 10 &&
          !strcmp(m.message, "command 0 (Submit): ring slot 1 of 2 (submission 1) at mapped [0x1000, +8) is in no "
                  "host-mapped buffer; the ring's 2 entries at 0xff8 need 16 bytes, past the end of buffer \"ring\" "
                  "[0x0, +0x1000): map a buffer that holds them all, or give the ring fewer entries"),
          "a ring past its buffer: %d '%s'", m.status, m.message);
    m.status = 0;
    /* a range that starts in the buffer and runs past its end names it: 0xFFC + 8 = 0x1004, 4 past */
    CHECK(np_mapped(&m, 0, 0xFFC, 8) == NULL && m.status == 10 &&
          !strcmp(m.message, "command 0 (Submit): mapped [0xffc, +8) is in no host-mapped buffer: it starts 4,092 "
                  "bytes into buffer \"ring\" [0x0, +0x1000) and runs 4 bytes past its end (a range lies in one "
                  "buffer)"), "a range past its buffer's end: %d '%s'", m.status, m.message);
    m.status = 0;
    m.hooks = &hooks;
    CHECK(np_ring_slot(&m, 0, 0xFFFFFFFFFFFFFFF8ull, 4, 3) == NULL && m.status == 10 &&
          !strcmp(m.message, "command 0 (Submit): mapped [0x10000000000000010, +8) is in no host-mapped buffer (Map "
                  "one there with a nonzero host address first)"), "ring + 24 past 2^64: %d '%s'", m.status, m.message);
    m.status = 0;
    CHECK(np_ring_slot(&m, 0, 0, (uint64_t)1 << 62, ((uint64_t)1 << 62) - 1) == NULL && m.status == 10 &&
          strstr(m.message, "mapped [0x1fffffffffffffff8, +8)"), "8 x (n mod entries) past 2^64: %d '%s'", m.status,
          m.message);
    /* submission 2^64 - 1 would wait for a semaphore target n + 1 that wraps to 0 (a wait that ends
     * at once): refused, status 1, before anything is written; 2^64 - 2 is the last one taken */
    m.status = 0;
    memset(ring_memory, 0x5A, sizeof ring_memory);
    CHECK(np_ring_slot(&m, 0, 0x100, 4, UINT64_MAX) == NULL && m.status == 1 &&
          !strcmp(m.message, "command 0 (Submit): submission 18446744073709551615: the issue counter is at 2^64 - 1, "
                  "where the semaphore's target n + 1 would wrap to 0 (a counter takes submissions 0 to 2^64 - 2); "
                  "store a smaller count at its word"), "submission 2^64 - 1: %d '%s'", m.status, m.message);
    CHECK(ring_memory[0x118] == 0x5A && ring_memory[0x100] == 0x5A, "submission 2^64 - 1 wrote nothing");
    m.status = 0;
    CHECK(np_ring_slot(&m, 0, 0x100, 4, UINT64_MAX - 1) == ring_memory + 0x110 && m.status == 0,
          "submission 2^64 - 2 of a 4-entry ring at 0x100: %d '%s'", m.status, m.message);
    CHECK(np_ring_next(4, 4) == 1 && np_ring_next(3, 4) == 0, "the next put");
    CHECK(np_ring_next(UINT64_MAX, 3) == 1 && np_ring_next(UINT64_MAX, 5) == 1 &&
          np_ring_next(UINT64_MAX, (uint64_t)1 << 63) == 0 && np_ring_next(UINT64_MAX, 7) == 2,
          "the put after submission 2^64 - 1: (2^64) mod entries: %llu %llu",
          (unsigned long long)np_ring_next(UINT64_MAX, 3), (unsigned long long)np_ring_next(UINT64_MAX, 7));
}

static np_session no_gpu_session;
static int no_gpu_rc;
static char no_gpu_error[NP_ERR_BYTES];
static void open_without_gpu(void)
{
    static const uint8_t uuid[16] = { 1, 2, 3 };
    memset(&no_gpu_session, 0, sizeof no_gpu_session);
    no_gpu_session.target = "sm_90";
    no_gpu_rc = np_device_open(&no_gpu_session, uuid, no_gpu_error);
    np_device_release(&no_gpu_session);
}

static double seconds_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

/* The connecting peer of a pair on a machine without a GPU: the bring-up's "no GPU" at once, said
 * once (by the host, from err), not after a 2 s wait for the listening peer's GPU context and a
 * note about taking a context of its own. */
/* A GPU fault's message (docs/runtime.md, "GPU faults"): the shim's wait, on a channel whose error
 * notifier the test writes (the RM's NvNotification layout, sdk nvgputypes.h), names the Xid by the
 * name NVIDIA's Xid catalogue gives it and says what to do (`bobc sim`, dmesg); a timeout with the
 * notifier clean says what to do too; and the plan host's line names the step and the submission
 * that had not finished before the shim's message.  Exit 7 (RT_EXIT_GPU_FAULT, rt_exit.h). */
static void test_gpu_fault_messages(void)
{
    static rt_gpu g;
    memset(&g, 0, sizeof g);
    rt_nv_notification note[4];
    memset(note, 0, sizeof note);
    uint32_t userd[64];
    memset(userd, 0, sizeof userd);
    g.mems[0].cpu = note;
    g.mems[0].size = sizeof note;
    g.mems[0].handle = 1;
    g.mems[0].gpu_va = 0xfc00001000ull;
    g.notifier = &g.mems[0];
    g.userd = userd;
    g.open = 1;
    g.cfg.quiet = 1;
    uint64_t semaphore[2] = { 0, 0 };
    g.mems[1].cpu = semaphore;
    g.mems[1].size = sizeof semaphore;
    g.mems[1].handle = 2;
    g.mems[1].gpu_va = 0x1000000010ull;

    /* Xid 31 (a page fault) and Xid 13 (a graphics engine exception): by name, with what to do */
    static const struct { uint32_t xid; const char *name; } faults[] = {
        { 31, "Xid 31: GPU memory page fault" }, { 13, "Xid 13: graphics engine exception" } };
    for (int i = 0; i < 2; i++) {
        note[0].info32 = faults[i].xid;
        note[0].status = 0xffff;
        CHECK(rt_gpu_xid(&g) == faults[i].xid, "rt_gpu_xid %u", rt_gpu_xid(&g));
        int rc = rt_gpu_wait(&g, semaphore, 1, 60000);
        CHECK(rc == RT_EXIT_GPU_FAULT, "Xid %u: rc %d", faults[i].xid, rc);
        CHECK(strstr(g.error, faults[i].name) != NULL, "Xid %u named: %s", faults[i].xid, g.error);
        CHECK(strstr(g.error, "GPU VA 0x1000000010") != NULL, "the semaphore's VA: %s", g.error);
        CHECK(strstr(g.error, "what to do: ") && strstr(g.error, "`bobc sim`") && strstr(g.error, "dmesg"),
              "Xid %u: what to do: %s", faults[i].xid, g.error);
        CHECK(strlen(g.error) < NP_ERR_BYTES - 64, "Xid %u: a native host's message room (%zu bytes): %s",
              faults[i].xid, strlen(g.error), g.error);
    }
    CHECK(strstr(rt_xid_advice(31), "no buffer maps") != NULL, "Xid 31 advice: %s", rt_xid_advice(31));
    CHECK(strstr(rt_xid_advice(13), "illegal instruction") != NULL, "Xid 13 advice: %s", rt_xid_advice(13));
    CHECK(strstr(rt_xid_advice(12345), "dmesg") != NULL, "an unlisted Xid's advice: %s", rt_xid_advice(12345));
    CHECK(!strcmp(rt_xid_name(12345), "unlisted RC error"), "%s", rt_xid_name(12345));

    /* a timeout, the notifier clean: the semaphore, GPGet/GPPut, and what to do */
    memset(note, 0, sizeof note);
    CHECK(rt_gpu_xid(&g) == 0, "clean notifier: Xid %u", rt_gpu_xid(&g));
    int rc = rt_gpu_wait(&g, semaphore, 1, 1);
    CHECK(rc == RT_EXIT_GPU_FAULT, "timeout: rc %d", rc);
    CHECK(strstr(g.error, "GPU timeout after 1 ms") && strstr(g.error, "GPGet 0, GPPut 0") &&
          strstr(g.error, "notifier clean") && strstr(g.error, "what to do: no Xid") && strstr(g.error, "`bobc sim`"),
          "timeout: %s", g.error);

    /* the plan host's line: the step, its kind and submissions, the one not finished, its launches' place */
    static const uint64_t semaphores[5] = { 0x1000000000ull, 0x1000000010ull, 0x1000000020ull, 0x1000000030ull,
                                            0x1000000040ull };
    bobc_plan plan;
    memset(&plan, 0, sizeof plan);
    plan.submission_count = 5;
    plan.semaphore_va = semaphores;
    plan.step_count = 9;
    char line[2048];
    bobc_gpu_fault_line(&plan, "./fault-host", 4, "Submit", 2, 5, 3, "GPU fault ...: Xid 31: GPU memory page fault",
                        line, sizeof line);
    CHECK(!strcmp(line, "step 4 of 9 (Submit of submissions 2..4): submission 3 (semaphore at GPU VA 0x1000000030) did "
                        "not finish: GPU fault ...: Xid 31: GPU memory page fault; `bobc dump ./fault-host` lists "
                        "submission[3]'s launches"), "%s", line);
    bobc_gpu_fault_line(&plan, "h", 7, "Reissue", 1, 2, 1, "E", line, sizeof line);
    CHECK(!strcmp(line, "step 7 of 9 (Reissue of submission 1): submission 1 (semaphore at GPU VA 0x1000000010) did not "
                        "finish: E; `bobc dump h` lists submission[1]'s launches"), "%s", line);
    bobc_gpu_fault_line(&plan, "h", 0, NULL, 0, 0, 0, "E", line, sizeof line);
    CHECK(!strcmp(line, "the pushbuffer's prologue (before step 0 of 9): E"), "%s", line);
    bobc_gpu_fault_line(&plan, "h", 9, "drain", 0, 0, 0, "E", line, sizeof line);
    CHECK(!strcmp(line, "after the last of the 9 steps, the ring draining: E"), "%s", line);

    /* with the plan's launch table: the submission's launches in `bobc dump`'s words (launch[L],
     * its kernel, its grid in hex as the dump's lists are), the first BOBC_FAULT_LAUNCHES_SHOWN and
     * how many more; a long name cut to BOBC_FAULT_TEXT_SHOWN characters ending "...", a control
     * byte as '?', an index past the table said so (never read) */
    char long_name[200];
    memset(long_name, 'k', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = 0;
    const bobc_launch launches[6] = { { "a", 1, 2, 3, "M/P.bob:4:5" }, { "b", 16, 1, 1, NULL },
                                      { "c\nd", 0, 1, 1, "M/P.bob:9:1" }, { "e", 1, 1, 1, NULL },
                                      { long_name, 1, 1, 1, NULL }, { "f", 1, 1, 1, NULL } };
    static const uint32_t first_three[1] = { 0 }, many[5] = { 1, 2, 3, 0, 5 }, cut[2] = { 4, 9 };
    const bobc_submission submissions[5] = { { 1, first_three }, { 5, many }, { 2, cut }, { 0, NULL }, { 0, NULL } };
    plan.launches = launches;
    plan.launch_count = 6;
    plan.submissions = submissions;
    bobc_gpu_fault_line(&plan, "h", 4, "Submit", 0, 1, 0, "E", line, sizeof line);
    CHECK(!strcmp(line, "step 4 of 9 (Submit of submission 0): submission 0 (semaphore at GPU VA 0x1000000000) did not "
                        "finish: E; its launches: launch[0] (kernel a, grid [0x1, 0x2, 0x3], M/P.bob:4:5); `bobc dump h` "
                        "lists submission[0]'s launches"), "%s", line);
    bobc_gpu_fault_line(&plan, "h", 4, "Submit", 1, 2, 1, "E", line, sizeof line);
    CHECK(!strcmp(line, "step 4 of 9 (Submit of submission 1): submission 1 (semaphore at GPU VA 0x1000000010) did not "
                        "finish: E; its launches: launch[1] (kernel b, grid [0x10, 0x1, 0x1]), launch[2] (kernel c?d, "
                        "grid [0x0, 0x1, 0x1], M/P.bob:9:1), launch[3] (kernel e, grid [0x1, 0x1, 0x1]) and 2 more; "
                        "`bobc dump h` lists submission[1]'s launches"), "%s", line);
    bobc_gpu_fault_line(&plan, "h", 4, "Reissue", 2, 3, 2, "E", line, sizeof line);
    char expected[1024];
    snprintf(expected, sizeof expected, "step 4 of 9 (Reissue of submission 2): submission 2 (semaphore at GPU VA "
             "0x1000000020) did not finish: E; its launches: launch[4] (kernel %.*s..., grid [0x1, 0x1, 0x1]), "
             "launch[9] (not in the host's table); `bobc dump h` lists submission[2]'s launches",
             BOBC_FAULT_TEXT_SHOWN - 3, long_name);
    CHECK(!strcmp(line, expected), "%s", line);
    bobc_gpu_fault_line(&plan, "h", 4, "Submit", 3, 4, 3, "E", line, sizeof line);
    CHECK(!strcmp(line, "step 4 of 9 (Submit of submission 3): submission 3 (semaphore at GPU VA 0x1000000030) did not "
                        "finish: E; `bobc dump h` lists submission[3]'s launches"), "%s", line);
    plan.launches = NULL;
    plan.launch_count = 0;
    plan.submissions = NULL;
}

/* A native host's launch table (.bobc.launches, launch_rows.h; bobc.native.launches writes it):
 * the section below is written out by hand from the layout the header and
 * compiler/bobc/native/launches.py declare, and the lines expected are the plan host's words
 * (test_gpu_fault_messages above), not the decoder's own output. */
static size_t put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
    return 4;
}

static size_t put_text(uint8_t *p, const char *text)
{
    size_t n = put32(p, (uint32_t)strlen(text));
    memcpy(p + n, text, strlen(text));
    return n + strlen(text);
}

static void test_native_launch_table(void)
{
    uint8_t section[512];
    size_t at = 0;
    memcpy(section, "BOBCLNC1", 8);
    at = 8;
    at += put32(section + at, 5);       /* launches */
    at += put32(section + at, 3);       /* submissions */
    static const char *const kernels[5] = { "a", "b", "c\td", "e", "f" };
    static const char *const places[5] = { "M/P.bob:4:5", "", "M/P.bob:9:1", "", "" };
    for (int i = 0; i < 5; i++) {
        at += put32(section + at, (uint32_t)i + 1);
        at += put32(section + at, 2);
        at += put32(section + at, 3);
        at += put_text(section + at, kernels[i]);
        at += put_text(section + at, places[i]);
    }
    /* submission 0: entry 0x1122334455667788, launch 0; 1: entry 0x20, launches 1 2 3 4; 2: 0x30, 7 */
    static const uint64_t entries[3] = { 0x1122334455667788ull, 0x20, 0x30 };
    static const uint32_t counts[3] = { 1, 4, 1 }, lists[3][4] = { { 0 }, { 1, 2, 3, 4 }, { 7 } };
    for (int k = 0; k < 3; k++) {
        at += put32(section + at, (uint32_t)entries[k]);
        at += put32(section + at, (uint32_t)(entries[k] >> 32));
        at += put32(section + at, counts[k]);
        for (uint32_t i = 0; i < counts[k]; i++)
            at += put32(section + at, lists[k][i]);
    }
    rt_launch_table t;
    char why[160], line[2048];
    CHECK(rt_launch_table_decode(section, at, &t, why, sizeof why) == 0, "%s", why);
    CHECK(t.launch_count == 5 && t.submission_count == 3, "%u %u", t.launch_count, t.submission_count);
    rt_launch_table_line(&t, 0x1122334455667788ull, "./h", line, sizeof line);
    CHECK(!strcmp(line, "; its launches: launch[0] (kernel a, grid [0x1, 0x2, 0x3], M/P.bob:4:5); `bobc dump ./h` "
                        "lists submission[0]'s launches"), "%s", line);
    rt_launch_table_line(&t, 0x20, "./h", line, sizeof line);
    CHECK(!strcmp(line, "; its launches: launch[1] (kernel b, grid [0x2, 0x2, 0x3]), launch[2] (kernel c?d, grid "
                        "[0x3, 0x2, 0x3], M/P.bob:9:1), launch[3] (kernel e, grid [0x4, 0x2, 0x3]) and 1 more; "
                        "`bobc dump ./h` lists submission[1]'s launches"), "%s", line);
    rt_launch_table_line(&t, 0x30, "./h", line, sizeof line);
    CHECK(!strcmp(line, "; its launches: launch[7] (not in the host's table); `bobc dump ./h` lists submission[2]'s "
                        "launches"), "%s", line);
    rt_launch_table_line(&t, 0x40, "./h", line, sizeof line);       /* an entry no submission issues */
    CHECK(!strcmp(line, ""), "%s", line);
    rt_launch_table_free(&t);

    /* damaged: every cut of the section short of its end, a byte more, a count its bytes cannot hold */
    for (size_t cut = 0; cut < at; cut++) {
        CHECK(rt_launch_table_decode(section, cut, &t, why, sizeof why) == -1, "cut at %zu", cut);
        CHECK(t.launches == NULL && t.launch_count == 0, "cut at %zu leaves a table", cut);
    }
    section[at] = 0;
    CHECK(rt_launch_table_decode(section, at + 1, &t, why, sizeof why) == -1 &&
          !strcmp(why, "it holds 1 bytes after its last submission"), "%s", why);
    put32(section + 8, 0xffffffffu);
    CHECK(rt_launch_table_decode(section, at, &t, why, sizeof why) == -1 && strstr(why, "4294967295 launches"), "%s",
          why);
}

/* probe s41 mutants6: launch_rows.h's rules at their edges, which test_native_launch_table's table does not
 * reach -- a name of exactly BOBC_FAULT_TEXT_SHOWN (96) characters is whole and one of 97 is cut to 93 and
 * "..."; a space is printable ASCII (0x20..0x7e); launch index 3 of a 3-launch table is not in it; exactly
 * BOBC_FAULT_LAUNCHES_SHOWN launches are all named with no " and 0 more"; counts the bytes cannot hold
 * (16-byte head, 20 bytes a launch, 12 a submission at least) refused before anything else; a submission
 * whose launch count runs past the section's end is a short table, not read past it. */
static void test_native_launch_rows_edges(void)
{
    char k96[97], k97[98], want[512], out[RT_LAUNCH_ROWS_BYTES];
    memset(k96, 'a', 96);
    k96[96] = 0;
    memset(k97, 'b', 97);
    k97[97] = 0;
    const bobc_launch launches[3] = { { k96, 1, 1, 1, NULL }, { k97, 2, 1, 1, NULL }, { "c d", 3, 1, 1, "P.bob:1:2" } };
    const uint32_t all[3] = { 0, 1, 2 }, past[1] = { 3 };
    const bobc_submission three = { 3, all }, outside = { 1, past };
    rt_launch_rows(launches, 3, &three, out, sizeof out);
    snprintf(want, sizeof want, "; its launches: launch[0] (kernel %s, grid [0x1, 0x1, 0x1]), launch[1] (kernel "
             "%.93s..., grid [0x2, 0x1, 0x1]), launch[2] (kernel c d, grid [0x3, 0x1, 0x1], P.bob:1:2)", k96, k97);
    CHECK(!strcmp(out, want), "three launches: '%s'", out);
    rt_launch_rows(launches, 3, &outside, out, sizeof out);
    CHECK(!strcmp(out, "; its launches: launch[3] (not in the host's table)"), "index 3 of 3: '%s'", out);

    /* one launch (empty kernel and place: 20 bytes) and one submission of no launches (12): 48 bytes */
    uint8_t section[64];
    size_t at = 0;
    memcpy(section, "BOBCLNC1", 8);
    at = 8;
    at += put32(section + at, 1);
    at += put32(section + at, 1);
    for (int i = 0; i < 5; i++)
        at += put32(section + at, i < 3 ? 1 : 0);
    for (int i = 0; i < 3; i++)
        at += put32(section + at, 0);
    rt_launch_table t;
    char why[160];
    CHECK(at == 48 && rt_launch_table_decode(section, at, &t, why, sizeof why) == 0, "48 bytes: %s", why);
    rt_launch_table_free(&t);
    put32(section + 12, 2);     /* 16 + 20 + 2 * 12 = 60 > 48 */
    CHECK(rt_launch_table_decode(section, at, &t, why, sizeof why) == -1 &&
          !strcmp(why, "its counts (1 launches, 2 submissions) need more than its 48 bytes"), "%s", why);
    put32(section + 12, 1);
    put32(section + 44, 1);     /* the submission says 1 launch; no bytes are left for its index */
    CHECK(rt_launch_table_decode(section, at, &t, why, sizeof why) == -1 &&
          !strcmp(why, "it ends at byte 48, inside a field at byte 48"), "%s", why);
    put32(section + 48, 0);
    CHECK(rt_launch_table_decode(section, at + 4, &t, why, sizeof why) == 0 && t.submissions[0].launch_count == 1,
          "%s", why);
    rt_launch_table_free(&t);
}

static void test_native_device_without_gpu(void)
{
    if (rt_gpu_present())
        return;
    unsetenv(rt_setting_variable(RT_SETTING_DEVICE));
    unsetenv("NATIVE_GPU_SHARE_GROUP");
    struct timespec since;
    clock_gettime(CLOCK_REALTIME, &since);
    np_device_note_peer("127.0.0.1:47811", "127.0.0.1 -> 127.0.0.1", 1, 0, &since);
    char said[2048];
    double started = seconds_now();
    captured(open_without_gpu, said, sizeof said);
    double took = seconds_now() - started;
    CHECK(no_gpu_rc == 3 && strstr(no_gpu_error, "no GPU: /dev/nvidiactl does not exist"), "open: %d %s", no_gpu_rc,
          no_gpu_error);
    CHECK(said[0] == 0, "the failure is the host's one line, nothing before it: '%s'", said);
    CHECK(took < 1.0, "no wait for a peer's GPU context without a GPU: %.2f s", took);
    np_device_note_peer("", "", 0, -1, &since);
}

/* NATIVE_GPU_SHARE_GROUP=1 that cannot be honoured is refused (status 3, why and what to change),
 * with or without a GPU -- judged under NATIVE_DEVICE=memory here; before (probe s46 sharegroup,
 * finding 2) a program with no peer, or a peer that is not on this machine, ignored it silently.
 * A peer on this machine (any address: the note is the connection's) opens; auto never refuses. */
static void test_share_required_is_never_ignored_s46(void)
{
    static const uint8_t uuid[16];
    struct timespec since;
    clock_gettime(CLOCK_REALTIME, &since);
    setenv(rt_setting_variable(RT_SETTING_DEVICE), "memory", 1);
    const struct {
        const char *share, *reached, *ends;
        int same_machine, listening, status;
        const char *said;
    } cases[] = {
        { "1", "", "", 0, -1, 3, "NATIVE_GPU_SHARE_GROUP=1: no GPU context can be shared: this program connected to "
          "no peer before OpenDevice" },
        { "1", "10.0.0.5:47811", "10.0.0.6 -> 10.0.0.5", 0, 0, 3, "its peer is on another machine (the connection "
          "10.0.0.6 -> 10.0.0.5): a GPU context is shared only by peers on one machine; unset NATIVE_GPU_SHARE_GROUP" },
        { "1", "10.0.0.5:47811", "10.0.0.5 -> 10.0.0.6", 0, 1, 3, "its peer is on another machine" },
        { "1", "127.0.0.1:47811", "127.0.0.1 -> 127.0.0.1", 1, 1, 0, "" },     /* worker 0 built with 0.0.0.0 */
        { "1", "10.0.0.5:47811", "10.0.0.5 -> 10.0.0.5", 1, 0, 0, "" },         /* both at this machine's address */
        { "auto", "10.0.0.5:47811", "10.0.0.6 -> 10.0.0.5", 0, 0, 0, "" },
        { "auto", "", "", 0, -1, 0, "" },
        { "0", "", "", 0, -1, 0, "" },
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        setenv("NATIVE_GPU_SHARE_GROUP", cases[k].share, 1);
        np_device_note_peer(cases[k].reached, cases[k].ends, cases[k].same_machine, cases[k].listening, &since);
        np_session s;
        memset(&s, 0, sizeof s);
        s.target = "sm_90";
        char err[NP_ERR_BYTES] = "";
        int rc = np_device_open(&s, uuid, err);
        CHECK(rc == cases[k].status && strstr(err, cases[k].said), "case %zu: %d '%s'", k, rc, err);
        if (cases[k].status)
            CHECK(!s.open, "case %zu: a refused session is not open", k);
        np_device_release(&s);
    }
    np_device_note_peer("", "", 0, -1, &since);
    unsetenv("NATIVE_GPU_SHARE_GROUP");
    unsetenv(rt_setting_variable(RT_SETTING_DEVICE));
}

/* Map's overlap test with host ranges near 2^64: the ends taken exactly, no sum that wraps (a
 * range that runs past 2^64 still overlaps the one just below it), as the reference judges. */
static void test_native_map_overlap(void)
{
    static const uint8_t uuid[16];
    static const uint8_t name[] = "b";
    char err[NP_ERR_BYTES] = "";
    const uint64_t top = 0xFFFFFFFFFFFFF000ull;          /* 2^64 - 4096 */
    const struct { uint64_t first, first_extent, second, second_extent; int overlap; } cases[] = {
        { top - 4096, 8192, top, 8192, 1 },            /* the first ends at 2^64, the second runs past it */
        { top, 8192, top - 4096, 8192, 1 },            /* the same, mapped the other way round */
        { top, 8192, top - 8192, 4096, 0 },            /* just below, touching: no shared byte */
        { top, 8192, 0x1000, 0x1000, 0 },              /* past 2^64 is not the low addresses */
        { 0x2000, 0x1000, 0x1000, 0x1000, 0 },
        { 0x2000, 0x1000, 0x1000, 0x1001, 1 },
        { 0x2000, 0x1000, 0x2FFF, 0x10, 1 },
    };
    setenv(rt_setting_variable(RT_SETTING_DEVICE), "memory", 1);
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        np_session s;
        memset(&s, 0, sizeof s);
        s.target = "sm_90";
        CHECK(np_device_open(&s, uuid, err) == 0 && s.memory_only, "case %zu: a memory-only session: %s", k, err);
        CHECK(np_device_map(&s, name, 1, 0x100000, cases[k].first, cases[k].first_extent, 0, err) == 0,
              "case %zu: the first map: %s", k, err);
        err[0] = 0;
        int rc = np_device_map(&s, name, 1, 0x200000, cases[k].second, cases[k].second_extent, 0, err);
        /* probe s43 nativemsgs: the earlier buffer is named, with its range (the case's own numbers) */
        char earlier[160];
        snprintf(earlier, sizeof earlier, "overlaps buffer \"%.1s\" [0x%llx, +0x%llx), mapped earlier", (const char *)name,
                 (unsigned long long)cases[k].first, (unsigned long long)cases[k].first_extent);
        if (cases[k].overlap)
            CHECK(rc == NP_STATUS_DEVICE && strstr(err, earlier),
                  "case %zu: [0x%llx, +0x%llx) then [0x%llx, +0x%llx) overlap: %d '%s'", k,
                  (unsigned long long)cases[k].first, (unsigned long long)cases[k].first_extent,
                  (unsigned long long)cases[k].second, (unsigned long long)cases[k].second_extent, rc, err);
        else
            CHECK(rc == 0, "case %zu: no overlap: %d '%s'", k, rc, err);
        np_device_release(&s);
    }
    unsetenv(rt_setting_variable(RT_SETTING_DEVICE));
}

/* The settings' table (host_settings.h): each setting's set accepted, anything else refused
 * naming the variable (a control character shown as '?'), and the judged values read back. */
static void test_settings(void)
{
    static const rt_setting all[] = RT_NATIVE_HOST_SETTINGS;
    static const rt_setting plan[] = RT_PLAN_HOST_SETTINGS;
    static const struct { rt_setting which; const char *text; int accepted; long long value; } cases[] = {
        { RT_SETTING_GPU_MAPPING, "rm", 1, 0 }, { RT_SETTING_GPU_MAPPING, "uvm", 1, 1 },
        { RT_SETTING_GPU_MAPPING, "RM", 0, 0 }, { RT_SETTING_GPU_TRACE, "ioctl", 1, 2 },
        { RT_SETTING_GPU_TRACE, "0", 1, 0 }, { RT_SETTING_GPU_TRACE, "yes", 0, 0 },
        { RT_SETTING_GPU_TRACE, "1 ", 0, 0 }, { RT_SETTING_DEVICE, "memory", 1, 0 },
        { RT_SETTING_DEVICE, "gpu", 1, 1 }, { RT_SETTING_DEVICE, "cpu", 0, 0 },
        { RT_SETTING_PROFILE, "1", 1, 1 }, { RT_SETTING_PROFILE, "on", 0, 0 },
        { RT_SETTING_TELEMETRY, "0", 1, 0 }, { RT_SETTING_TELEMETRY, "9223372036854775807", 1, 9223372036854775807LL },
        { RT_SETTING_TELEMETRY, "9223372036854775808", 0, 0 }, { RT_SETTING_TELEMETRY, "-1", 0, 0 },
        { RT_SETTING_TELEMETRY, "0x10", 0, 0 }, { RT_SETTING_PEER_TIMEOUT, "1", 1, 1 },
        { RT_SETTING_PEER_TIMEOUT, "86400000", 1, 86400000 }, { RT_SETTING_PEER_TIMEOUT, "86400001", 0, 0 },
        { RT_SETTING_PEER_TIMEOUT, "0", 0, 0 }, { RT_SETTING_PEER_TIMEOUT, "", 0, 0 },
        { RT_SETTING_PEER_TIMEOUT, "3000000000", 0, 0 },
    };
    char err[512];
    for (int k = 0; k < RT_SETTINGS; k++)
        unsetenv(rt_setting_variable((rt_setting)k));
    CHECK(rt_settings_judge(all, 6, err, sizeof err) == 0, "every setting unset is accepted");
    CHECK(rt_setting_choice(RT_SETTING_GPU_TRACE, -7) == -7 && rt_setting_number(RT_SETTING_PEER_TIMEOUT, 10000) == 10000,
          "unset reads as the caller's default");
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *name = rt_setting_variable(cases[i].which);
        setenv(name, cases[i].text, 1);
        int rc = rt_settings_judge(all, 6, err, sizeof err);
        if (cases[i].accepted) {
            long long got = cases[i].which == RT_SETTING_TELEMETRY || cases[i].which == RT_SETTING_PEER_TIMEOUT
                                ? rt_setting_number(cases[i].which, -1) : rt_setting_choice(cases[i].which, -1);
            CHECK(rc == 0 && got == cases[i].value, "%s=%s: rc %d, value %lld", name, cases[i].text, rc, got);
        } else {
            char start[128];
            snprintf(start, sizeof start, "%s=%s: expected ", name, cases[i].text);
            CHECK(rc == RT_EXIT_USAGE && strncmp(err, start, strlen(start)) == 0, "%s=%s: rc %d '%s'", name,
                  cases[i].text, rc, err);
        }
        unsetenv(name);
    }
    setenv("NATIVE_TELEMETRY", "", 1);
    CHECK(rt_settings_judge(plan, 3, err, sizeof err) == 0 && rt_setting_number(RT_SETTING_TELEMETRY, -1) == -1,
          "an empty NATIVE_TELEMETRY is unset");
    setenv("NATIVE_TELEMETRY", "1\nfake line", 1);
    CHECK(rt_settings_judge(plan, 3, err, sizeof err) == RT_EXIT_USAGE &&
          strncmp(err, "NATIVE_TELEMETRY=1?fake line: expected a level", 46) == 0, "one line: '%s'", err);
    unsetenv("NATIVE_TELEMETRY");
    setenv("NATIVE_DEVICE", "cpu", 1);
    CHECK(rt_settings_judge(plan, 3, err, sizeof err) == 0, "a plan host does not read NATIVE_DEVICE");
    unsetenv("NATIVE_DEVICE");
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
}

static void read_text(const char *path, char *out, size_t n)
{
    FILE *f = fopen(path, "r");
    size_t got = f ? fread(out, 1, n - 1, f) : 0;
    out[got] = 0;
    if (f)
        fclose(f);
}

/* A diagnostic file never destroys an input (diag_file.h; probe s27) */
static void test_diag_files(void)
{
    char err[RT_ERR_BYTES] = "", input[300], other[300], alias[300], text[64];
    snprintf(input, sizeof input, "%s/diag-input.bin", tmpdir);
    snprintf(other, sizeof other, "%s/diag-trace.txt", tmpdir);
    snprintf(alias, sizeof alias, "%s/diag-link.bin", tmpdir);
    write_text(input, "the user's input");
    write_text(other, "an old trace, longer than the new one");
    CHECK(link(input, alias) == 0, "hard link");
    const char *inputs[] = { NULL, input };
    FILE *f = (FILE *)1;
    expect(rt_diag_open("NATIVE_TRACE", input, inputs, 2, &f, err, sizeof err), RT_EXIT_WRITE_FAILED, err,
           "is the input", "the trace is the input");
    CHECK(f == NULL, "nothing opened");
    expect(rt_diag_open("NATIVE_TRACE", alias, inputs, 2, &f, err, sizeof err), RT_EXIT_WRITE_FAILED, err,
           "a diagnostic file never replaces an input; nothing was written", "the trace is the input by another name");
    expect(rt_diag_check("BOBC_HOST_TIMING", alias, inputs, 2, err, sizeof err), RT_EXIT_WRITE_FAILED, err,
           "BOBC_HOST_TIMING", "checked by name");
    read_text(input, text, sizeof text);
    CHECK(!strcmp(text, "the user's input"), "the input is whole: '%s'", text);
    CHECK(rt_diag_check("BOBC_HOST_TIMING", other, inputs, 2, err, sizeof err) == 0, "another file: %s", err);
    CHECK(rt_diag_open("NATIVE_TRACE", other, inputs, 2, &f, err, sizeof err) == 0 && f, "opened: %s", err);
    if (f) {
        fputs("new", f);
        fclose(f);
    }
    read_text(other, text, sizeof text);
    CHECK(!strcmp(text, "new"), "the old trace replaced: '%s'", text);
    char missing[320];
    snprintf(missing, sizeof missing, "%s/no-folder/trace.txt", tmpdir);
    expect(rt_diag_open("NATIVE_TRACE", missing, inputs, 2, &f, err, sizeof err), RT_EXIT_WRITE_FAILED, err,
           "cannot open: No such file or directory", "no folder");
}

/* A host file without a section is damaged, named by its path (probe s27) */
static void test_sections(void)
{
    char err[RT_ERR_BYTES] = "", path[300];
    rt_section section;
    expect(rt_self_section_read(".bobc.version", &section, err, sizeof err), RT_EXIT_DAMAGED_HOST, err,
           "has no section .bobc.version", "this test program has no version section");
    CHECK(strstr(err, rt_self_path()) && !strstr(err, "/proc/self/exe") && rt_self_path()[0] == '/',
          "named by its path (%s): %s", rt_self_path(), err);
    snprintf(path, sizeof path, "%s/not-elf", tmpdir);
    write_text(path, "not an ELF file at all, but long enough to hold an ELF header's sixty-four bytes......");
    expect(rt_section_read(path, ".bobc.version", &section, err, sizeof err), RT_EXIT_DAMAGED_HOST, err,
           "not a 64-bit ELF host", "not ELF");
    snprintf(path, sizeof path, "%s/absent", tmpdir);
    expect(rt_section_read(path, ".bobc.version", &section, err, sizeof err), RT_EXIT_INTERNAL, err,
           "cannot open", "unreadable");
}

/* ---- a program's bytes, put together by hand (docs/platform.md's encoding) ---- */

typedef struct {
    uint8_t b[1024];
    size_t n;
} bytes_out;

static void put_byte(bytes_out *o, uint8_t v)
{
    o->b[o->n++] = v;
}

static void put_u64(bytes_out *o, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        put_byte(o, (uint8_t)(v >> (8 * i)));
}

static void put_field(bytes_out *o, const void *data, uint64_t n)
{
    put_u64(o, n);
    memcpy(o->b + o->n, data, n);
    o->n += n;
}

/* the header: no slots, a `state`-byte state, no identity */
static void program_header(bytes_out *o, uint64_t state)
{
    o->n = 0;
    memcpy(o->b, NP_MAGIC, 4);
    o->n = 4;
    for (int i = 0; i < 4; i++)
        put_byte(o, i == 0 ? NP_VERSION : 0);
    put_u64(o, 0);
    put_u64(o, state);
    put_u64(o, 0);
}

/* A refusal of the decoder names the command it stops at, from bytes it still holds: the
 * message is made before the program's commands are freed (probe s33 asan findings 1, 2; the
 * sanitizer build of this test reports a use after free otherwise). */
static void test_native_decode_refusals(void)
{
    char err[NP_ERR_BYTES] = "";
    np_program p;
    bytes_out o;
    /* command 0 Release, command 1 an unknown code */
    program_header(&o, 0);
    put_byte(&o, NP_RELEASE);
    size_t at = o.n;
    put_byte(&o, 99);
    char want[128];
    snprintf(want, sizeof want, "byte %zu: unknown command code 99 (command 1)", at);
    CHECK(np_decode(o.b, o.n, &p, err) == -1 && !strcmp(err, want), "unknown code: '%s', expected '%s'", err, want);
    CHECK(p.commands == NULL && p.count == 0, "a refused program holds no commands");
    /* command 1 a Float of operation 7 */
    program_header(&o, 8);
    put_byte(&o, NP_RELEASE);
    put_byte(&o, NP_FLOAT);
    put_byte(&o, 7);
    put_u64(&o, 0);
    CHECK(np_decode(o.b, o.n, &p, err) == -1 && !strcmp(err, "command 1 (Float): operation 7 is not 0-3"),
          "operation: '%s'", err);
    /* command 1 a Float whose first operand is of kind 9 */
    program_header(&o, 8);
    put_byte(&o, NP_RELEASE);
    put_byte(&o, NP_FLOAT);
    put_byte(&o, 0);
    put_u64(&o, 0);
    put_byte(&o, 9);
    put_u64(&o, 0);
    CHECK(np_decode(o.b, o.n, &p, err) == -1 && !strcmp(err, "command 1 (Float): operand kind 9 is not 0-3"),
          "operand kind: '%s'", err);
}

/* A request of a 16-byte payload: identities "a", one chunk, a record input, no initializer. */
static void request_bytes(bytes_out *o)
{
    o->n = 0;
    for (int i = 0; i < 4; i++)
        put_field(o, "a", 1);
    put_u64(o, 16);   /* payload bytes */
    put_u64(o, 16);   /* chunk bytes */
    put_u64(o, 1);    /* updates */
    put_u64(o, 0);    /* a record */
    put_u64(o, NP_FRESH_END);
    put_u64(o, 0);    /* cursor base, scale */
    put_u64(o, 0);
    for (int i = 0; i < 6; i++)
        put_u64(o, i == 2 || i == 5 ? 1 : 0);
}

/* RequestOpen, then RequestWriteAt FILE 0 EXTENT OFFSET, then End */
static int decode_write_at(uint64_t file, uint64_t extent, uint64_t offset, char *err)
{
    bytes_out request, o;
    request_bytes(&request);
    program_header(&o, 16);
    put_byte(&o, NP_REQUEST_OPEN);
    put_field(&o, request.b, request.n);
    put_u64(&o, 0);
    put_u64(&o, 8);
    put_byte(&o, NP_REQUEST_WRITE_AT);
    put_u64(&o, file);
    put_u64(&o, 0);
    put_u64(&o, extent);
    put_u64(&o, offset);
    put_byte(&o, NP_END);
    np_program p;
    int rc = np_decode(o.b, o.n, &p, err);
    if (rc == 0)
        np_free(&p);
    return rc;
}

/* RequestWriteAt's offset + extent: never summed unchecked; refused before the first command
 * where the program gives them, and by np_request_write for any write (probe s33 asan finding 5). */
static void test_request_write_bounds(void)
{
    char err[RT_ERR_BYTES] = "";
    CHECK(decode_write_at(4, 4, 0, err) == 0, "a write at 0: %s", err);
    CHECK(decode_write_at(4, 4, NP_REQUEST_OUTPUT_LIMIT - 4, err) == 0, "a write up to the limit: %s", err);
    CHECK(decode_write_at(3, 8, 8, err) == 0, "a write up to the payload's end: %s", err);
    CHECK(decode_write_at(4, 4, 0xFFFFFFFFFFFFFFFEull, err) == -1 &&
          !strcmp(err, "command 1 (RequestWriteAt): it writes 4 bytes at offset 18446744073709551614, past the "
                  "1073741824 bytes an output holds at most (file 4, the predictions)"), "a wrapping offset: '%s'", err);
    CHECK(decode_write_at(5, 1, (uint64_t)1 << 40, err) == -1 && strstr(err, "it writes 1 byte at offset 1099511627776, "
          "past the 1073741824 bytes an output holds at most (file 5, the result)"), "a huge offset: '%s'", err);
    CHECK(decode_write_at(4, 0xFFFFFFFFFFFFFFFFull, 2, err) == -1 && strstr(err, "command 1 (RequestWriteAt)"),
          "a wrapping extent: '%s'", err);
    CHECK(decode_write_at(3, 8, 12, err) == -1 &&
          !strcmp(err, "command 1 (RequestWriteAt): it writes 8 bytes at offset 12, past the contract's 16-byte "
                  "checkpoint payload"), "past the payload: '%s'", err);
    CHECK(decode_write_at(3, 1, 0xFFFFFFFFFFFFFFFFull, err) == -1 && strstr(err, "16-byte checkpoint payload"),
          "a wrapping checkpoint offset: '%s'", err);

    /* at run time: the output is left as it was */
    np_request r;
    memset(&r, 0, sizeof r);
    const uint8_t data[4] = { 1, 2, 3, 4 };
    int rc = np_request_write(&r, NP_FILE_PREDICTIONS, data, 4, 0, 0xFFFFFFFFFFFFFFFEull, err);
    CHECK(rc == RT_EXIT_INTERNAL && r.out[1].data == NULL && r.out[1].size == 0 &&
          !strcmp(err, "the program writes 4 bytes at 18446744073709551614 of the predictions, past the 1073741824 "
                  "bytes an output holds at most"), "a wrapping write: %d '%s'", rc, err);
    rc = np_request_write(&r, NP_FILE_RESULT, data, 4, 0, (uint64_t)1 << 40, err);
    CHECK(rc == RT_EXIT_INTERNAL && r.out[2].data == NULL && strstr(err, "of the result, past the"),
          "a huge write: %d '%s'", rc, err);
    rc = np_request_write(&r, NP_FILE_RESULT, data, 4, 0, 2, err);
    CHECK(rc == 0 && r.out[2].size == 6 && r.out[2].data[0] == 0 && r.out[2].data[2] == 1, "a write at 2: %s", err);
    r.out[2].size = NP_REQUEST_OUTPUT_LIMIT - 2;    /* as if the output were full: an append past the limit */
    rc = np_request_write(&r, NP_FILE_RESULT, data, 4, 1, 0, err);
    CHECK(rc == RT_EXIT_INTERNAL && strstr(err, "4 bytes at 1073741822 of the result"), "an append: %d '%s'", rc, err);
    r.out[2].size = 6;
    np_request_free(&r);
}

/* ---- the native program's bounds (docs/limits.md, "The native physical program") ---- */

/* a program of `levels` Repeats of count 1, each the body of the one before (the innermost's body
 * End), every tail End; or, `in_tails`, each the tail of the one before (every body End) */
static uint8_t *repeats_program(uint32_t levels, int in_tails, size_t *size)
{
    size_t n = 32 + (size_t)levels * 11 + 1;
    uint8_t *b = calloc(1, n), *at = b;
    if (!b)
        return NULL;
    memcpy(at, NP_MAGIC, 4);
    at[4] = NP_VERSION;
    at[16] = 8;                         /* an 8-byte state, no slots, no identity */
    at += 32;
    for (uint32_t k = 0; k < levels; k++) {
        *at++ = NP_REPEAT;
        *at++ = NP_IMMEDIATE;
        *at = 1;                        /* count 1 */
        at += 8;
        if (in_tails)
            *at++ = NP_END;             /* the body; the next Repeat is the tail */
    }
    *at++ = NP_END;                     /* the innermost body (in_tails: the last tail) */
    if (!in_tails)
        for (uint32_t k = 0; k < levels; k++)
            *at++ = NP_END;             /* the tails, innermost first */
    *size = (size_t)(at - b);
    return b;
}

static int nested_other(np_machine *m, uint32_t index, const np_command *c)
{
    (void)c;
    return np_fault(m, index, 1, "not in this test");
}

/* np_run recurses once per Repeat body: NP_MAX_REPEAT_NESTING Repeats nested run; one more is
 * refused by the checks, by name, and so is a crafted nesting of 200,000 (it overflowed the C
 * stack in np_run: a crash, not a refusal); Repeats in tails, which np_run loops over, are not
 * nested. */
static void test_repeat_nesting(void)
{
    char err[NP_ERR_BYTES] = "";
    size_t size;
    np_program p;
    uint8_t *b = repeats_program(NP_MAX_REPEAT_NESTING, 0, &size);
    int rc = np_decode(b, size, &p, err);
    CHECK(rc == 0 && p.count == 2 * NP_MAX_REPEAT_NESTING + 1, "%u nested Repeats: %d '%s'", NP_MAX_REPEAT_NESTING,
          rc, err);
    if (rc == 0) {
        static const np_hooks hooks = { ring_mapped, NULL, nested_other, NULL, NULL };
        uint64_t slots[1] = { 0 };
        uint8_t state[8] = { 0 };
        np_machine m;
        memset(&m, 0, sizeof m);
        m.p = &p;
        m.hooks = &hooks;
        m.slots = slots;
        m.state = state;
        m.telemetry = -1;
        CHECK(np_run(&m, 0) == 0, "%u nested Repeats run: '%s'", NP_MAX_REPEAT_NESTING, m.message);
        np_free(&p);
    }
    free(b);

    char want[NP_ERR_BYTES];
    snprintf(want, sizeof want, "command %u (Repeat): Repeats nested %u deep (one in another's body), more than the "
             "%u a host runs; nest fewer", NP_MAX_REPEAT_NESTING, NP_MAX_REPEAT_NESTING + 1, NP_MAX_REPEAT_NESTING);
    b = repeats_program(NP_MAX_REPEAT_NESTING + 1, 0, &size);
    rc = np_decode(b, size, &p, err);
    CHECK(rc == -1 && !strcmp(err, want) && p.commands == NULL, "one Repeat more: %d '%s', expected '%s'", rc, err,
          want);
    if (rc == 0)
        np_free(&p);
    free(b);

    b = repeats_program(200000, 0, &size);
    rc = np_decode(b, size, &p, err);
    CHECK(rc == -1 && !strcmp(err, want), "200,000 nested Repeats: %d '%s'", rc, err);
    if (rc == 0)
        np_free(&p);            /* not run: without the bound np_run overflows the stack */
    free(b);

    b = repeats_program(200000, 1, &size);
    rc = np_decode(b, size, &p, err);
    CHECK(rc == 0 && p.count == 400001, "200,000 Repeats one after another (each the tail of the last): %d '%s'", rc,
          err);
    if (rc == 0)
        np_free(&p);
    free(b);
}

/* Submit ring ENTRIES ... End: the put index (n + 1) mod entries is a 32-bit word */
static int decode_ring(uint64_t entries, char *err)
{
    bytes_out o;
    program_header(&o, 8);
    put_byte(&o, NP_SUBMIT);
    put_u64(&o, 0x1000);        /* ring */
    put_u64(&o, entries);
    put_u64(&o, 0x2000);        /* put */
    put_byte(&o, NP_IMMEDIATE); /* entry */
    put_u64(&o, 0);
    put_u64(&o, 0x3000);        /* semaphore */
    put_u64(&o, 0);             /* the issue counter, state word 0 */
    put_byte(&o, NP_END);
    np_program p;
    int rc = np_decode(o.b, o.n, &p, err);
    if (rc == 0)
        np_free(&p);
    return rc;
}

static void test_ring_entries(void)
{
    char err[NP_ERR_BYTES] = "";
    CHECK(decode_ring(NP_MAX_RING_ENTRIES, err) == 0, "a ring of 2^32 entries: '%s'", err);
    CHECK(decode_ring(1, err) == 0, "a ring of 1 entry: '%s'", err);
    CHECK(decode_ring(NP_MAX_RING_ENTRIES + 1, err) == -1 &&
          !strcmp(err, "command 0 (Submit): a ring of 4294967297 entries, more than the 4294967296 a 32-bit GPPut "
                  "counts"), "a ring of 2^32 + 1 entries: '%s'", err);
    CHECK(decode_ring(UINT64_MAX, err) == -1 && strstr(err, "a ring of 18446744073709551615 entries"),
          "a ring of 2^64 - 1 entries: '%s'", err);
}

/* the request's chunk count, payload / chunk bytes, is the envelope's 32-bit field: a contract whose
 * count does not fit is refused when the request is parsed (before the first command), never
 * truncated into the checkpoints it writes */
static int parse_chunks(uint64_t payload, uint64_t chunk, char *err)
{
    bytes_out o;
    o.n = 0;
    for (int i = 0; i < 4; i++)
        put_field(&o, "a", 1);
    put_u64(&o, payload);
    put_u64(&o, chunk);
    put_u64(&o, 1);             /* updates */
    put_u64(&o, 0);             /* a record */
    put_u64(&o, NP_FRESH_END);
    put_u64(&o, 0);             /* cursor base, scale */
    put_u64(&o, 0);
    for (int i = 0; i < 6; i++)
        put_u64(&o, i == 2 || i == 5 ? 1 : 0);
    np_request_spec spec;
    int rc = np_request_parse(o.b, o.n, &spec, err);
    np_request_spec_free(&spec);
    return rc;
}

static void test_request_chunk_count(void)
{
    char err[RT_ERR_BYTES] = "";
    CHECK(parse_chunks(UINT32_MAX, 1, err) == 0, "2^32 - 1 chunks: '%s'", err);
    CHECK(parse_chunks((uint64_t)1 << 40, (uint64_t)1 << 9, err) == 0, "2^31 chunks of 512 bytes: '%s'", err);
    CHECK(parse_chunks((uint64_t)UINT32_MAX + 1, 1, err) == -1 &&
          !strcmp(err, "a 4294967296-byte payload in chunks of 1 byte is 4294967296 chunks, more than the 4294967295 "
                  "a checkpoint's 32-bit chunk count holds (make the chunks larger)"), "2^32 chunks: '%s'", err);
    CHECK(parse_chunks(UINT64_MAX, 3, err) == -1 && strstr(err, "is 6148914691236517205 chunks, more than"),
          "2^64 / 3 chunks: '%s'", err);
}

/* this test program's own file copied, with the 64-bit field at `field` of section `index`'s
 * header (the string table's when index < 0) set to `value` */
static int damaged_copy(const char *path, int index, unsigned field, uint64_t value)
{
    FILE *in = fopen("/proc/self/exe", "rb"), *out = fopen(path, "wb");
    if (!in || !out) {
        if (in)
            fclose(in);
        if (out)
            fclose(out);
        return -1;
    }
    uint8_t buf[1 << 14];
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, in)) > 0)
        fwrite(buf, 1, got, out);
    fclose(in);
    fclose(out);
    int fd = open(path, O_RDWR);
    uint8_t eh[64];
    if (fd < 0 || pread(fd, eh, sizeof eh, 0) != (ssize_t)sizeof eh) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    uint64_t shoff = 0;
    for (int i = 7; i >= 0; i--)
        shoff = (shoff << 8) | eh[0x28 + i];
    unsigned shstrndx = eh[0x3e] | eh[0x3f] << 8;
    unsigned which = index < 0 ? shstrndx : (unsigned)index;
    uint8_t v[8];
    for (int i = 0; i < 8; i++)
        v[i] = (uint8_t)(value >> (8 * i));
    int ok = pwrite(fd, v, 8, (off_t)(shoff + 64 * which + field)) == 8;
    close(fd);
    return ok ? 0 : -1;
}

/* the index of section `name` in this test program's own file */
static int own_section_index(const char *name)
{
    FILE *f = fopen("/proc/self/exe", "rb");
    if (!f)
        return -1;
    Elf64_Ehdr eh;
    int found = -1;
    if (fread(&eh, sizeof eh, 1, f) == 1) {
        Elf64_Shdr *sh = calloc(eh.e_shnum, sizeof *sh);
        if (sh && fseek(f, (long)eh.e_shoff, SEEK_SET) == 0 && fread(sh, sizeof *sh, eh.e_shnum, f) == eh.e_shnum) {
            char *names = malloc(sh[eh.e_shstrndx].sh_size + 1);
            if (names && fseek(f, (long)sh[eh.e_shstrndx].sh_offset, SEEK_SET) == 0 &&
                fread(names, 1, sh[eh.e_shstrndx].sh_size, f) == sh[eh.e_shstrndx].sh_size) {
                names[sh[eh.e_shstrndx].sh_size] = 0;
                for (unsigned i = 0; i < eh.e_shnum && found < 0; i++)
                    if (sh[i].sh_name < sh[eh.e_shstrndx].sh_size && !strcmp(names + sh[i].sh_name, name))
                        found = (int)i;
            }
            free(names);
        }
        free(sh);
    }
    fclose(f);
    return found;
}

/* A section header's size or offset past the file's end is a damaged host (exit 9), found
 * before anything is allocated by it (probe s33 asan findings 3, 4). */
static void test_sections_damaged(void)
{
    char err[RT_ERR_BYTES] = "", path[300];
    rt_section section;
    snprintf(path, sizeof path, "%s/damaged-elf", tmpdir);
    int text = own_section_index(".text");
    CHECK(text > 0, "this test program has a .text section");
    CHECK(rt_section_read("/proc/self/exe", ".text", &section, err, sizeof err) == 0 && section.size > 0,
          "the undamaged file's .text reads: %s", err);
    free(section.data);
    const struct { int index; unsigned field; uint64_t value; const char *needle; } cases[] = {
        { -1, 0x20, 0xFFFFFFFFFFFFFFFFull, "the section names of" },     /* size + 1 wraps */
        { -1, 0x20, 0x7FFFFFFFFFFFull, "the section names of" },
        { -1, 0x18, 0xFFFFFFFFFFFFFFF0ull, "the section names of" },     /* offset */
        { text, 0x20, 0x7FFFFFFFFFFFull, "section .text of" },
        { text, 0x20, 0xFFFFFFFFFFFFFFFFull, "section .text of" },
        { text, 0x18, 0xFFFFFFFFFFFFFF00ull, "section .text of" },
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        if (text <= 0 || damaged_copy(path, cases[k].index, cases[k].field, cases[k].value)) {
            CHECK(0, "cannot make the damaged copy %zu", k);
            continue;
        }
        char what[64];
        snprintf(what, sizeof what, "damaged section header %zu", k);
        expect(rt_section_read(path, ".text", &section, err, sizeof err), RT_EXIT_DAMAGED_HOST, err,
               "damaged host file: ", what);
        CHECK(strstr(err, cases[k].needle) && strstr(err, path) && strstr(err, "past the file's") &&
              strstr(err, "rebuild it"), "%s names the section, the file and the sizes: %s", what, err);
        CHECK(section.data == NULL && section.size == 0, "%s: nothing read", what);
    }
    struct stat st;
    /* the section table itself past the end */
    if (damaged_copy(path, 0, 0, 0) == 0 && stat(path, &st) == 0) {
        int fd = open(path, O_RDWR);
        uint8_t v[8];
        uint64_t off = (uint64_t)st.st_size - 8;
        for (int i = 0; i < 8; i++)
            v[i] = (uint8_t)(off >> (8 * i));
        CHECK(fd >= 0 && pwrite(fd, v, 8, 0x28) == 8, "e_shoff written");
        if (fd >= 0)
            close(fd);
        expect(rt_section_read(path, ".text", &section, err, sizeof err), RT_EXIT_DAMAGED_HOST, err,
               "the section table of", "the section table past the end");
    }
}

/* The bring-up's class check against each chip's class list, as the RM gives it (the classes
 * that matter, from open-gpu-kernel-modules src/nvidia/generated/g_gpu_class_list.c for GA100 and
 * GA102; nouveau's GSP-RM glue, nvkm/subdev/gsp/rm/{ad10x,gh100,gb20x}.c, for the later chips'
 * GPFIFO, usermode and compute classes).  The ids are written out, not read from nv_classes.h,
 * so a wrong define fails here.  A host meeting another GPU is refused (exit 6) with a message
 * naming the GPU's compute class and compute capability (CUDA Programming Guide), the target it
 * was built for and what to do: the --target that runs there, or where to run it. */
static void test_class_list_verdicts(void)
{
    static const uint32_t ga100[] = { 0x9067, 0x90F1, 0xA06C, 0xC56F, 0xC6C0, 0xC6B5, 0xC561, 0xC461, 0xC46F,
                                      0xC36F, 0xC361 };
    static const uint32_t ga102[] = { 0x9067, 0x90F1, 0xA06C, 0xC56F, 0xC7C0, 0xC7B5, 0xC561, 0xC461, 0xC46F,
                                      0xC36F, 0xC361 };
    static const uint32_t ad102[] = { 0x9067, 0x90F1, 0xA06C, 0xC56F, 0xC9C0, 0xC7B5, 0xC561, 0xC461 };
    static const uint32_t gh100[] = { 0x9067, 0x90F1, 0xA06C, 0xC86F, 0xC56F, 0xCBC0, 0xC8B5, 0xC661, 0xC561, 0xC461 };
    static const uint32_t gb202[] = { 0x9067, 0x90F1, 0xA06C, 0xCA6F, 0xCEC0, 0xCAB5, 0xC761, 0xC661 };
    static const uint32_t odd[] = { 0x9067, 0x90F1, 0xC7C0 };
    char m[512];
#define N(a) (uint32_t)(sizeof a / sizeof a[0])
    CHECK(rt_judge_class_list(&RT_TARGET_SM86, ga102, N(ga102), 0x2204, m, sizeof m) == 0, "sm_86 on GA102");
    CHECK(rt_judge_class_list(&RT_TARGET_SM90, gh100, N(gh100), 0x2335, m, sizeof m) == 0, "sm_90 on GH100");
    /* the sm_86 host on an H200: rebuild for sm_90 */
    int rc = rt_judge_class_list(&RT_TARGET_SM86, gh100, N(gh100), 0x2335, m, sizeof m);
    CHECK(rc == RT_EXIT_NO_GPU, "sm_86 on GH100: %d", rc);
    CHECK(strstr(m, "PCI device 0x2335") && strstr(m, "does not list AMPERE_COMPUTE_B (0xc7c0), which target sm_86 needs")
          && strstr(m, "HOPPER_COMPUTE_A 0xcbc0") && strstr(m, "compute capability 9.0")
          && strstr(m, "--target sm_90"), "sm_86 on GH100: %s", m);
    /* the sm_90 host on an RTX 3090: rebuild for sm_86 */
    rc = rt_judge_class_list(&RT_TARGET_SM90, ga102, N(ga102), 0x2204, m, sizeof m);
    CHECK(rc == RT_EXIT_NO_GPU && strstr(m, "HOPPER_COMPUTE_A (0xcbc0)") && strstr(m, "HOPPER_CHANNEL_GPFIFO_A")
          && strstr(m, "AMPERE_COMPUTE_B 0xc7c0") && strstr(m, "compute capability 8.6")
          && strstr(m, "built for sm_90") && strstr(m, "--target sm_86"), "sm_90 on GA102: %s", m);
    /* an A100, an RTX 4090, an RTX 5090: no target of ours; run the host on its own GPU */
    const struct { const uint32_t *list; uint32_t n; const char *cls, *cc; } none[] = {
        { ga100, N(ga100), "AMPERE_COMPUTE_A 0xc6c0", "compute capability 8.0" },
        { ad102, N(ad102), "ADA_COMPUTE_A 0xc9c0", "compute capability 8.9" },
        { gb202, N(gb202), "BLACKWELL_COMPUTE_B 0xcec0", "compute capability 12.0" },
    };
    for (unsigned i = 0; i < sizeof none / sizeof none[0]; i++) {
        for (int k = 0; k < 2; k++) {
            const rt_target_facts *t = k ? &RT_TARGET_SM90 : &RT_TARGET_SM86;
            rc = rt_judge_class_list(t, none[i].list, none[i].n, 0x2684, m, sizeof m);
            CHECK(rc == RT_EXIT_NO_GPU && strstr(m, none[i].cls) && strstr(m, none[i].cc)
                  && strstr(m, "no bobc target runs on (targets: sm_86, sm_90)") && !strstr(m, "--target")
                  && strstr(m, k ? "compute capability 9.0), refusing" : "compute capability 8.6), refusing"),
                  "%s on %s: %s", t->name, none[i].cls, m);
        }
    }
    /* the target's compute class without its GPFIFO: not a GPU to rebuild for */
    rc = rt_judge_class_list(&RT_TARGET_SM86, odd, N(odd), 0x2204, m, sizeof m);
    CHECK(rc == RT_EXIT_NO_GPU && strstr(m, "AMPERE_CHANNEL_GPFIFO_A (0xc56f)") && !strstr(m, "--target"),
          "sm_86 without its GPFIFO: %s", m);
    rc = rt_judge_class_list(&RT_TARGET_SM86, odd + 2, 0, 0x2204, m, sizeof m);
    CHECK(rc == RT_EXIT_NO_GPU && strstr(m, "no compute class bobc knows (0 classes)"), "empty list: %s", m);
#undef N
}

/* The branch rule: the ioctl layouts are those of branch 580 (nv_rm.h), so 580.x passes and any
 * other branch is refused by name (exit 6), as is a version the host cannot read (an empty or
 * garbled answer used to be refused as "driver  is branch 0"). */
static void test_driver_branch_verdicts(void)
{
    char m[512];
    const char *accepted[] = { "580.65.06", "580.95.05", "580.159.04", "580.82", "580.95.05 " };
    for (unsigned i = 0; i < sizeof accepted / sizeof accepted[0]; i++)
        for (int k = 0; k < 2; k++)
            CHECK(rt_judge_driver_version(k ? &RT_TARGET_SM90 : &RT_TARGET_SM86, accepted[i], m, sizeof m) == 0,
                  "%s refused: %s", accepted[i], m);
    int rc = rt_judge_driver_version(&RT_TARGET_SM86, "590.12.03", m, sizeof m);
    CHECK(rc == RT_EXIT_NO_GPU && !strcmp(m, "driver 590.12.03 is branch 590, but this host was built for branch 580: "
                                               "the driver ABI differs between branches, refusing; run it on a node "
                                               "with a 580.x driver"), "590: %s", m);
    const char *other[] = { "575.57.08", "570.172.08", "550.163.01", "5800.1", "58.0" };
    for (unsigned i = 0; i < sizeof other / sizeof other[0]; i++) {
        rc = rt_judge_driver_version(&RT_TARGET_SM86, other[i], m, sizeof m);
        CHECK(rc == RT_EXIT_NO_GPU && strstr(m, other[i]) && strstr(m, "built for branch 580"), "%s: %s", other[i], m);
    }
    const char *unreadable[] = { "", "580", "580.", "580abc.1", ".580.1", "580.x", "rel580.1" };
    for (unsigned i = 0; i < sizeof unreadable / sizeof unreadable[0]; i++) {
        rc = rt_judge_driver_version(&RT_TARGET_SM90, unreadable[i], m, sizeof m);
        CHECK(rc == RT_EXIT_NO_GPU && strstr(m, "not BRANCH.MINOR[.PATCH]") && strstr(m, "speaks branch 580"),
              "'%s': %s", unreadable[i], m);
    }
}

static void test_shim_cpu(void)
{
    CHECK(rt_target_named("sm_90") == &RT_TARGET_SM90, "sm_90 row");
    CHECK(RT_TARGET_SM90.compute_class == 0xCBC0 && RT_TARGET_SM90.gpfifo_class == 0xC86F, "sm_90 classes");
    CHECK(RT_TARGET_SM86.compute_class == 0xC7C0 && RT_TARGET_SM86.gpfifo_class == 0xC56F, "sm_86 classes");
    CHECK(rt_target_named("sm_99") == NULL, "unknown target");
    CHECK(!strcmp(nv_status_name(0x1F), "NV_ERR_INVALID_ARGUMENT (0x1f = 31)"), "status name");
    CHECK(!strcmp(nv_status_name(0x3A), "NV_ERR_INVALID_PARAM_STRUCT (0x3a = 58)"), "status name 0x3a");
    CHECK(!strcmp(nv_status_name(0x1B), "NV_ERR_INSUFFICIENT_PERMISSIONS (0x1b = 27)"), "status name 0x1b");
    CHECK(strstr(nv_status_name(0x12345), "0x12345 = 74565") != NULL, "unknown status");
    CHECK(NV_IOWR(NV_ESC_RM_ALLOC, 32) == 0xC020462Bul, "RM_ALLOC ioctl number");
    /* GPFIFO entry: address low bits, GET_HI, LENGTH */
    uint64_t e = rt_gpfifo_entry(0x12345678A0ull, 5);
    CHECK((uint32_t)e == 0x345678A0u, "entry dword0 0x%08x", (uint32_t)e);
    CHECK((uint32_t)(e >> 32) == (0x12u | (5u << 10)), "entry dword1 0x%08x", (uint32_t)(e >> 32));
    test_class_list_verdicts();
    test_driver_branch_verdicts();
    if (!rt_gpu_present()) {
        rt_gpu g;
        int rc = rt_gpu_open(&g, &RT_TARGET_SM90, NULL);
        CHECK(rc == RT_EXIT_NO_GPU, "no GPU: code %d", rc);
        CHECK(strstr(g.error, "no GPU") != NULL, "no GPU message: %s", g.error);
        rt_gpu_close(&g);
    }
}


/* ---- host_io: the output checks, the journal, messages (docs/runtime.md, "Files") ---- */

static char realtmp[256];   /* tmpdir's real path: journals name real paths */

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static int holds(const char *path, const char *text)
{
    char buf[256] = "";
    FILE *f = fopen(path, "rb");
    size_t got = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f)
        fclose(f);
    return f && got == strlen(text) && !memcmp(buf, text, got);
}

static int there(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

/* set `path`'s modification time `seconds` before now */
static void age(const char *path, int seconds)
{
    struct timespec t[2];
    clock_gettime(CLOCK_REALTIME, &t[0]);
    t[0].tv_sec -= seconds;
    t[1] = t[0];
    utimensat(AT_FDCWD, path, t, AT_SYMLINK_NOFOLLOW);
}

/* a journal in the documented form (docs/runtime.md, "Files") naming `pairs` (temporary, destination) pairs */
static void put_journal(const char *path, const char *const *names, int pairs)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return;
    fprintf(f, "bob-journal 1 %d\n", pairs);
    for (int i = 0; i < 2 * pairs; i++) {
        fprintf(f, "%zu ", strlen(names[i]));
        fputs(names[i], f);
        fputc('\n', f);
    }
    fputs("end\n", f);
    fclose(f);
}

/* nftw's callback: remove one file or (after its contents: FTW_DEPTH) folder. */
static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *walk)
{
    (void)st, (void)flag, (void)walk;
    if (remove(path) != 0)
        fprintf(stderr, "could not remove %s: %s\n", path, strerror(errno));
    return 0;
}

/* Whether user `uid` (root acting as it, in a child) can reach the folder `path`. */
static int reachable_as(uid_t uid, const char *path)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0)
        _exit(setgid(uid) != 0 || setuid(uid) != 0 ? 2 : access(path, X_OK) == 0 ? 0 : 1);
    int status = 0;
    return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static void folder_at(char *out, size_t size, const char *name)
{
    snprintf(out, size, "%s/%s", realtmp, name);
    mkdir(out, 0755);
}

/* one line, cut by nothing: the message ends as `tail` does */
static void whole_message(const char *err, const char *tail, const char *what)
{
    size_t n = strlen(err), t = strlen(tail);
    CHECK(n < RT_ERR_BYTES - 1 && n >= t && !strcmp(err + n - t, tail) && !strchr(err, '\n'),
          "%s: the message is cut or does not end with '%s' (%zu bytes): %s", what, tail, n, err);
}

static void test_shown(void)
{
    char out[RT_IO_SHOWN_BYTES + 1], path[700];
    CHECK(!strcmp(rt_io_shown("a/b.bin", out), "a/b.bin"), "a short path is shown whole");
    snprintf(path, sizeof path, "/start/%0600d/c.bin", 0);
    const char *s = rt_io_shown(path, out);
    CHECK(strlen(s) == RT_IO_SHOWN_BYTES && !strncmp(s, "/start/0000", 11) && strstr(s, ".../c.bin") &&
          !strcmp(s + strlen(s) - 6, "/c.bin"), "a long path keeps its start and its file name: %s", s);
    memset(path, 'n', 600);                      /* no slash: its start and its end */
    path[600] = 0;
    s = rt_io_shown(path, out);
    CHECK(strlen(s) == RT_IO_SHOWN_BYTES && strstr(s, "n...n"), "a long name: %s", s);
    path[0] = '/';                               /* a 2-byte UTF-8 character is never cut in two */
    for (int i = 1; i < 599; i += 2) {
        path[i] = (char)0xC3;
        path[i + 1] = (char)0xA9;
    }
    path[599] = 0;
    s = rt_io_shown(path, out);
    int whole = 1;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p == 0xC3)
            whole &= p[1] == 0xA9;
        else if (*p == 0xA9)
            whole &= p > (const unsigned char *)s && p[-1] == 0xC3;
    CHECK(whole && strstr(s, "..."), "UTF-8 characters stay whole: %s", s);
    CHECK(!strcmp(rt_io_shown("a\nb/c\td.bin", out), "a?b/c?d.bin"), "control characters shown as '?': %s", out);
    snprintf(path, sizeof path, "/x\n%0600d/c\n.bin", 0);
    s = rt_io_shown(path, out);
    CHECK(!strchr(s, '\n') && strstr(s, "/c?.bin"), "in a long path too: %s", s);
}

static void test_long_paths(void)
{
    char err[RT_ERR_BYTES] = "", deep[1024], path[6000];
    rt_io_files *files = calloc(1, sizeof *files);
    snprintf(deep, sizeof deep, "%s/%0200d", realtmp, 1);
    mkdir(deep, 0755);
    snprintf(deep + strlen(deep), sizeof deep - strlen(deep), "/%0200d", 2);
    mkdir(deep, 0755);
    snprintf(deep + strlen(deep), sizeof deep - strlen(deep), "/%0200d", 3);
    mkdir(deep, 0755);
    snprintf(path, sizeof path, "%s/nodir/c.bin", deep);
    expect(rt_io_add_output(files, path, "--checkpoint-out", NULL, err), RT_EXIT_WRITE_FAILED, err,
           "does not exist; create it first", "600-byte folder that does not exist");
    whole_message(err, "; nothing was written", "missing folder");
    snprintf(path, sizeof path, "%s/link", deep);
    CHECK(symlink("/etc/passwd", path) == 0, "symlink %s", path);
    expect(rt_io_add_output(files, path, "--checkpoint-out", NULL, err), RT_EXIT_WRITE_FAILED, err,
           "is a symbolic link", "a symlink 600 bytes down");
    whole_message(err, "; nothing was written", "symlink");
    memset(path, 'x', 5000);
    path[0] = '/';
    path[5000] = 0;
    expect(rt_io_add_output(files, path, "--result", NULL, err), RT_EXIT_WRITE_FAILED, err, "path too long",
           "a 5000-byte output path");
    whole_message(err, "; nothing was written", "5000-byte output");
    uint8_t *data;
    size_t size;
    expect(rt_io_read(files, path, "input", 100, RT_EXIT_BAD_INPUT, &data, &size, err), RT_EXIT_BAD_INPUT, err,
           "cannot open: File name too long", "a 5000-byte input path");
    whole_message(err, "File name too long", "5000-byte input");
    free(files);
}

/* a file's attributes (FS_IOC_SETFLAGS); 0 when this filesystem or user cannot set them */
static int set_attribute(const char *path, int flag, int on)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC), flags = 0, ok = 0;
    if (fd >= 0 && ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0) {
        flags = on ? flags | flag : flags & ~flag;
        ok = ioctl(fd, FS_IOC_SETFLAGS, &flags) == 0;
    }
    if (fd >= 0)
        close(fd);
    return ok;
}

static void test_unreplaceable_outputs(void)
{
    char err[RT_ERR_BYTES] = "", folder[PATH_MAX], file[PATH_MAX + 16], inner[PATH_MAX + 16];
    rt_io_files *files = calloc(1, sizeof *files);
    folder_at(folder, sizeof folder, "attributes");
    snprintf(file, sizeof file, "%s/r.bin", folder);
    put(file, "OLD");
    if (!set_attribute(file, FS_IMMUTABLE_FL, 1)) {
        printf("(skipped: the immutable and append-only attributes cannot be set here)\n");
    } else {
        expect(rt_io_add_output(files, file, "--result", NULL, err), RT_EXIT_WRITE_FAILED, err,
               "has the immutable attribute", "an immutable output");
        whole_message(err, "chattr -i) or choose another path; nothing was written", "immutable");
        set_attribute(file, FS_IMMUTABLE_FL, 0);
        set_attribute(file, FS_APPEND_FL, 1);
        expect(rt_io_add_output(files, file, "--result", NULL, err), RT_EXIT_WRITE_FAILED, err,
               "has the append-only attribute", "an append-only output");
        set_attribute(file, FS_APPEND_FL, 0);
        snprintf(inner, sizeof inner, "%s/a", folder);
        mkdir(inner, 0755);
        set_attribute(inner, FS_APPEND_FL, 1);
        snprintf(inner, sizeof inner, "%s/a/c.bin", folder);
        expect(rt_io_add_output(files, inner, "--checkpoint-out", NULL, err), RT_EXIT_WRITE_FAILED, err,
               "its folder", "an output in an append-only folder");
        CHECK(strstr(err, "append-only"), "%s", err);
        snprintf(inner, sizeof inner, "%s/a", folder);
        set_attribute(inner, FS_APPEND_FL, 0);
        CHECK(files->output_count == 0, "nothing refused was added");
        CHECK(rt_io_add_output(files, file, "--result", NULL, err) == 0 && holds(file, "OLD"),
              "attributes cleared: accepted (%s)", err);
    }
    free(files);
    if (geteuid() != 0) {
        printf("(skipped: the sticky-folder case needs root to act as two users)\n");
        return;
    }
    /* a sticky folder of one user holding a file of another: a third may not replace it */
    char sticky[PATH_MAX];
    chmod(realtmp, 0755);                        /* the other user reaches it */
    /* ... unless a folder above it is private (a TMPDIR of the test run's own, such as pytest's
     * 0700 /tmp/pytest-of-USER): then the case runs in a folder of its own under /tmp, removed
     * after -- asked of the kernel as that user, not guessed from the modes */
    char own[64] = "";
    if (!reachable_as(65534, realtmp)) {
        snprintf(own, sizeof own, "/tmp/bobcrt-sticky-XXXXXX");
        CHECK(mkdtemp(own) != NULL, "mkdtemp %s: %s", own, strerror(errno));
        chmod(own, 0755);
        snprintf(sticky, sizeof sticky, "%s/sticky", own);
        mkdir(sticky, 0755);
    } else {
        folder_at(sticky, sizeof sticky, "sticky");
    }
    CHECK(chown(sticky, 65533, 65533) == 0, "chown %s", sticky);
    chmod(sticky, 01777);
    char theirs[PATH_MAX + 16], mine[PATH_MAX + 16], fresh[PATH_MAX + 16];
    snprintf(theirs, sizeof theirs, "%s/r.bin", sticky);
    snprintf(mine, sizeof mine, "%s/mine.bin", sticky);
    snprintf(fresh, sizeof fresh, "%s/new.bin", sticky);
    put(theirs, "THEIRS");
    put(mine, "MINE");
    CHECK(chown(mine, 65534, 65534) == 0, "chown %s", mine);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        if (setgid(65534) != 0 || setuid(65534) != 0)
            _exit(100);
        rt_io_files *f = calloc(1, sizeof *f);
        char e[RT_ERR_BYTES] = "";
        int bad = 0;
        if (rt_io_add_output(f, theirs, "--result", NULL, e) != RT_EXIT_WRITE_FAILED || !strstr(e, "sticky") ||
            !strstr(e, "another user (uid 0)")) {
            fprintf(stderr, "FAIL: another user's file in a sticky folder: %s\n", e);
            bad++;
        }
        if (rt_io_add_output(f, mine, "--predictions", NULL, e) != 0 || rt_io_add_output(f, fresh, "--checkpoint-out",
                                                                                           NULL, e) != 0) {
            fprintf(stderr, "FAIL: one's own file, or a new one, in a sticky folder: %s\n", e);
            bad++;
        }
        _exit(bad);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the sticky-folder checks as another user (status %d)",
          status);
    CHECK(holds(theirs, "THEIRS"), "nothing written");
    chmod(realtmp, 0700);
    if (own[0] && nftw(own, remove_one, 16, FTW_DEPTH | FTW_PHYS) != 0)
        fprintf(stderr, "could not remove %s: %s\n", own, strerror(errno));
}

/* a folder with three old outputs (10 s old) and the temporaries a kill between the first and
 * second renames leaves, under the journal .c.bin.bob-journal (5 s old) */
static void interrupted(char *folder, size_t size, const char *name, char paths[3][PATH_MAX + 16],
                        char temporaries[3][PATH_MAX + 32], char *journal)
{
    static const char *const bases[3] = { "p.bin", "r.bin", "c.bin" };
    folder_at(folder, size, name);
    const char *names[6];
    for (int i = 0; i < 3; i++) {
        snprintf(paths[i], sizeof paths[i], "%s/%s", folder, bases[i]);
        snprintf(temporaries[i], sizeof temporaries[i], "%s/.%s.tmp-Ab3dE%d", folder, bases[i], i);
        put(paths[i], "OLD");
        age(paths[i], 10);
        if (i)
            put(temporaries[i], "NEW");
        names[2 * i] = temporaries[i];
        names[2 * i + 1] = paths[i];
    }
    snprintf(journal, PATH_MAX + 32, "%s/.c.bin.bob-journal", folder);
    put_journal(journal, names, 3);
    age(journal, 5);
}

static void test_journal(void)
{
    char err[RT_ERR_BYTES] = "", folder[PATH_MAX], paths[3][PATH_MAX + 16], temporaries[3][PATH_MAX + 32];
    char journal[PATH_MAX + 32];
    const char *named[3] = { paths[0], paths[1], paths[2] };

    interrupted(folder, sizeof folder, "j-completes", paths, temporaries, journal);
    CHECK(rt_io_recover(named, 3, err) == 0, "a journal is completed: %s", err);
    CHECK(holds(paths[0], "OLD") && holds(paths[1], "NEW") && holds(paths[2], "NEW") && !there(journal),
          "the temporaries still there renamed, the journal removed");

    /* finding 1: a destination replaced after the journal was written makes the journal stale */
    interrupted(folder, sizeof folder, "j-stale", paths, temporaries, journal);
    put(paths[1], "NEWER");
    expect(rt_io_recover(named, 3, err), RT_EXIT_WRITE_FAILED, err, "stale", "a destination newer than the journal");
    CHECK(strstr(err, paths[1]) && strstr(err, journal + strlen(realtmp)) && strstr(err, "remove it"),
          "names the journal and the newer file, says what to do: %s", err);
    CHECK(holds(paths[0], "OLD") && holds(paths[1], "NEWER") && holds(paths[2], "OLD") && there(journal) &&
          there(temporaries[1]) && there(temporaries[2]), "a stale journal: nothing renamed, all left");

    /* finding 1 as the probe found it: run 1 killed (journal in B), run 2 publishes A/p, A/r and
     * C/c, run 3 names B/c only: run 1's result must not go back over run 2's */
    char a[PATH_MAX], b[PATH_MAX], c[PATH_MAX], d[PATH_MAX];
    folder_at(a, sizeof a, "run-A");
    folder_at(b, sizeof b, "run-B");
    folder_at(c, sizeof c, "run-C");
    folder_at(d, sizeof d, "run-D");
    char ap[PATH_MAX + 16], ar[PATH_MAX + 16], bc[PATH_MAX + 16], cc[PATH_MAX + 16], dp[PATH_MAX + 16],
        dr[PATH_MAX + 16], art[PATH_MAX + 32], bct[PATH_MAX + 32], apt[PATH_MAX + 32], bj[PATH_MAX + 32];
    snprintf(ap, sizeof ap, "%s/p.bin", a);
    snprintf(ar, sizeof ar, "%s/r.bin", a);
    snprintf(bc, sizeof bc, "%s/c.bin", b);
    snprintf(cc, sizeof cc, "%s/c.bin", c);
    snprintf(dp, sizeof dp, "%s/p.bin", d);
    snprintf(dr, sizeof dr, "%s/r.bin", d);
    snprintf(apt, sizeof apt, "%s/.p.bin.tmp-aaaaaa", a);
    snprintf(art, sizeof art, "%s/.r.bin.tmp-bbbbbb", a);
    snprintf(bct, sizeof bct, "%s/.c.bin.tmp-cccccc", b);
    snprintf(bj, sizeof bj, "%s/.c.bin.bob-journal", b);
    put(ap, "RUN1");                   /* renamed before the kill */
    age(ap, 10);
    put(art, "RUN1");
    put(bct, "RUN1");
    const char *run1[6] = { apt, ap, art, ar, bct, bc };
    put_journal(bj, run1, 3);
    age(bj, 5);
    rt_io_files *files = calloc(1, sizeof *files);
    static const char *const options[3] = { "--predictions", "--result", "--checkpoint-out" };
    const char *run2[3] = { ap, ar, cc };
    int rc = rt_io_recover(run2, 3, err);
    for (int i = 0; !rc && i < 3; i++)
        if (!(rc = rt_io_add_output(files, run2[i], options[i], NULL, err)))
            rc = rt_io_stage(files, options[i], "RUN2", 4, err);
    CHECK(rc == 0, "run 2 does not see run 1's journal (in B): %s", err);
    CHECK(rt_io_publish(files, err) == 0, "run 2 publishes: %s", err);
    const char *run3[3] = { dp, dr, bc };
    expect(rt_io_recover(run3, 3, err), RT_EXIT_WRITE_FAILED, err, "stale", "run 3 finds run 1's journal stale");
    CHECK(holds(ar, "RUN2") && holds(ap, "RUN2") && holds(cc, "RUN2") && there(bj) && there(art) && there(bct) &&
          !there(bc), "run 2's outputs stay; run 1's journal and temporaries are left as they are");
    free(files);

    /* finding 2: a journal's temporaries are `.NAME.tmp-XXXXXX` beside their destinations, else it is damaged */
    char e[PATH_MAX], private_[PATH_MAX + 16], outside[PATH_MAX + 32];
    folder_at(folder, sizeof folder, "j-outside");
    folder_at(e, sizeof e, "j-private");
    snprintf(paths[0], sizeof paths[0], "%s/p.bin", folder);
    snprintf(private_, sizeof private_, "%s/notes.txt", e);
    put(private_, "PRECIOUS");
    const char *planted[2] = { private_, paths[0] };
    snprintf(journal, sizeof journal, "%s/.anything.bob-journal", folder);
    put_journal(journal, planted, 1);
    const char *one[1] = { paths[0] };
    expect(rt_io_recover(one, 1, err), RT_EXIT_WRITE_FAILED, err, "not a .NAME.tmp-XXXXXX file beside its destination",
           "a temporary elsewhere");
    CHECK(holds(private_, "PRECIOUS") && !there(paths[0]) && there(journal), "nothing renamed: %s", err);
    unlink(journal);
    snprintf(outside, sizeof outside, "%s/.p.bin.tmp-Ab3dE0", e);     /* the right name, another folder */
    put(outside, "ELSEWHERE");
    planted[0] = outside;
    snprintf(journal, sizeof journal, "%s/.p.bin.bob-journal", folder);
    put_journal(journal, planted, 1);
    expect(rt_io_recover(one, 1, err), RT_EXIT_WRITE_FAILED, err, "beside its destination", "a temporary's folder");
    CHECK(there(outside) && !there(paths[0]), "nothing renamed");
    snprintf(outside, sizeof outside, "%s/.p.tmp", folder);            /* beside it, not its name */
    put(outside, "X");
    put_journal(journal, planted, 1);
    expect(rt_io_recover(one, 1, err), RT_EXIT_WRITE_FAILED, err, "a damaged publication journal", "a temporary's name");
    snprintf(outside, sizeof outside, "%s/.p.bin.tmp-Ab3dE", folder);  /* five letters, not six */
    put(outside, "X");
    put_journal(journal, planted, 1);
    expect(rt_io_recover(one, 1, err), RT_EXIT_WRITE_FAILED, err, "beside its destination", "a temporary's suffix");
    unlink(journal);
    /* only `.NAME.bob-journal` beside its last destination NAME counts */
    snprintf(outside, sizeof outside, "%s/.p.bin.tmp-Ab3dE0", folder);
    put(outside, "NEW");
    snprintf(journal, sizeof journal, "%s/.c.bin.bob-journal", folder);
    put_journal(journal, planted, 1);
    expect(rt_io_recover(one, 1, err), RT_EXIT_WRITE_FAILED, err, "it is not .NAME.bob-journal beside its last "
           "destination", "a journal not named after its last destination");
    CHECK(there(outside) && !there(paths[0]), "nothing renamed");
    unlink(journal);
    snprintf(journal, sizeof journal, "%s/p.bin.bob-journal", folder);   /* no leading '.': not a journal */
    put(journal, "garbage");
    snprintf(journal, sizeof journal, "%s/..bob-journal", folder);       /* NAME empty: not a journal */
    put(journal, "garbage");
    CHECK(rt_io_recover(one, 1, err) == 0, "files not named .NAME.bob-journal are no journals: %s", err);
    snprintf(journal, sizeof journal, "%s/.p.bin.bob-journal", folder);
    put_journal(journal, planted, 1);
    CHECK(rt_io_recover(one, 1, err) == 0 && holds(paths[0], "NEW") && !there(journal), "the same journal, well "
          "named, is completed: %s", err);

    /* finding 6: the reason survives paths of any length */
    char deep[PATH_MAX];
    snprintf(deep, sizeof deep, "%s/%0200d", realtmp, 7);
    mkdir(deep, 0755);
    snprintf(deep + strlen(deep), sizeof deep - strlen(deep), "/%0200d", 8);
    interrupted(folder, sizeof folder, deep + strlen(realtmp) + 1, paths, temporaries, journal);
    put(paths[2], "NEWER");
    expect(rt_io_recover(named, 3, err), RT_EXIT_WRITE_FAILED, err, "stale", "a stale journal 400 bytes down");
    whole_message(err, "remove it and the temporaries it lists (docs/runtime.md, Files)", "stale, long paths");
    put(journal, "bob-journal 1 3\n12 /not/a/pa");
    expect(rt_io_recover(named, 3, err), RT_EXIT_WRITE_FAILED, err, "a damaged publication journal", "damaged, long");
    whole_message(err, "to finish or remove it", "damaged, long paths");
}

#define TMPDIR_MOST 64

/* rt_io_interval_note: the line a failing run ends with once an interval checkpoint of its own is
 * at --checkpoint-out (probe s47 faultinject finding 6): the plan host said the publication's
 * "(nothing was published)" alone.  Expected lines written out by hand. */
static void note_case(const char *said, const char *path, const char *expected)
{
    char note[RT_ERR_BYTES], line[2 * RT_ERR_BYTES];
    size_t keep = rt_io_interval_note(said, strlen(said), 1, 2, 3, path, note, sizeof note);
    snprintf(line, sizeof line, "%.*s%s", (int)keep, said, note);
    CHECK(!strcmp(line, expected), "interval note of \"%s\": \"%s\"", said, line);
}

static void test_interval_note_s47(void)
{
    note_case("output ck.bin: fsync of the temporary file failed: No space left on device (nothing was published)",
              "ck.bin",
              "output ck.bin: fsync of the temporary file failed: No space left on device; publication 1 of 2 (step 3) "
              "stays at ck.bin; nothing else was published");
    note_case("step 5 (commands): command 0 (Fail): bad; nothing was published", "out/ck.bin",
              "step 5 (commands): command 0 (Fail): bad; publication 1 of 2 (step 3) stays at out/ck.bin; nothing "
              "else was published");
    note_case("output ck.bin (--checkpoint-out): is a folder; nothing was written", "ck.bin",
              "output ck.bin (--checkpoint-out): is a folder; nothing was written; publication 1 of 2 (step 3) stays "
              "at ck.bin; nothing else was published");
    note_case("step 4 (submit): the GPU faulted", "a\nb.bin",
              "step 4 (submit): the GPU faulted; publication 1 of 2 (step 3) stays at a?b.bin; nothing else was "
              "published");
    /* a kept journal: part of the last publication is in place, and its message says what to do */
    const char *kept = "output p.bin (--predictions): rename failed: Input/output error (the journal ./.ck.bin.bob-"
                       "journal is kept: once p.bin can be replaced, the next invocation naming these outputs completes "
                       "the publication; to keep the files as they are instead, remove the journal and the temporaries "
                       "it lists)";
    note_case(kept, "ck.bin", kept);
}

int main(void)
{
    /* the run's files in a folder of its own under TMPDIR (else /tmp), removed at the end: two
     * runs, or a suite that points TMPDIR at its own folder, never share one (probe s37 leftovers
     * finding 6) */
    const char *base = getenv("TMPDIR");
    if (!base || !*base)
        base = "/tmp";
    /* the checks compare messages that show a path whole only up to RT_IO_SHOWN_BYTES (rt_io_shown
     * cuts a longer one), and name files up to about 40 bytes below the folder: a longer TMPDIR is
     * said and passed over for /tmp */
    if (strlen(base) > TMPDIR_MOST) {
        printf("(TMPDIR %s has over %d bytes, too long for the messages these checks compare whole: the run's "
               "folder is made under /tmp)\n", base, TMPDIR_MOST);
        base = "/tmp";
    }
    snprintf(tmpdir, sizeof tmpdir, "%s/bobcrt-test-XXXXXX", base);
    if (!mkdtemp(tmpdir)) {
        fprintf(stderr, "test_host_runtime: cannot make a folder in %s: %s\n", base, strerror(errno));
        return 1;
    }
    test_crc_fnv();
    test_crc_sliced();
    test_init();
    test_fill();
    test_cursor_window();
    test_envelope();
    test_sizes_grouped_s43();
    test_oversized_identities();
    test_publish();
    test_prepare();
    test_input();
    test_record_word_formats();
    test_args();
    test_shim_cpu();
    test_gpu_settings();
    test_native_telemetry();
    test_ring_slot();
    test_native_device_without_gpu();
    test_share_required_is_never_ignored_s46();
    test_gpu_fault_messages();
    test_native_launch_table();
    test_native_launch_rows_edges();
    test_native_map_overlap();
    test_settings();
    test_diag_files();
    test_sections();
    test_sections_damaged();
    test_native_decode_refusals();
    test_request_write_bounds();
    test_repeat_nesting();
    test_ring_entries();
    test_request_chunk_count();
    test_interval_note_s47();
    char real[PATH_MAX];
    const char *resolved = realpath(tmpdir, real) && strlen(real) < sizeof realtmp ? real : tmpdir;
    memcpy(realtmp, resolved, strlen(resolved) + 1);
    test_shown();
    test_long_paths();
    test_unreplaceable_outputs();
    test_journal();
    /* nftw, not `rm -rf '%s'` through a shell: any path TMPDIR names (a quote in it) is removed */
    if (nftw(tmpdir, remove_one, 16, FTW_DEPTH | FTW_PHYS) != 0)
        fprintf(stderr, "could not remove %s: %s\n", tmpdir, strerror(errno));
    printf("%d checks, %d failures\n", checks, failures);
    return failures ? 1 : 0;
}
