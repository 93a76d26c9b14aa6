/* CPU tests of the host runtime and of the shim's no-GPU path
 * (`make -C runtime_c test`).  Each check prints on failure; the exit status
 * is the number of failures (0 = all passed). */
#define _GNU_SOURCE
#include "diag_file.h"
#include "elf_sections.h"
#include "host_runtime.h"
#include "rt_sample.h"
#include "plan_fill.h"
#include "nv_rm.h"
#include "nv_shim.h"
#include "nv_status.h"

#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
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
}

static int expect(int rc, int want, const char *err, const char *needle, const char *what)
{
    CHECK(rc == want, "%s: code %d, expected %d (%s)", what, rc, want, err);
    CHECK(!needle || strstr(err, needle), "%s: message '%s' lacks '%s'", what, err, needle);
    return rc == want;
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
    expect(rt_envelope_check(&c, bad, n, "f", NULL, NULL, err), RT_EXIT_BAD_CHECKPOINT, err, "trailer", "trailer");
    free(bad);

    /* foreign, one part at a time, each named */
    struct { const char *part; rt_contract c; } f[8];
    for (int i = 0; i < 8; i++)
        f[i].c = contract();
    f[0].part = "schema";   f[0].c.schema = "other-schema";
    f[1].part = "learner";  f[1].c.learner = "sample-learner sgd";
    f[2].part = "data";     f[2].c.data = "sample-data other";
    f[3].part = "seed";     f[3].c.seed = "rt-sample-seed-8";
    f[4].part = "payload";  f[4].c.payload_bytes = RT_SAMPLE_PAYLOAD_BYTES - 16;
    f[5].part = "chunk count";   f[5].c.chunk_count = 2;
    f[6].part = "updates";  f[6].c.updates_per_invocation = RT_SAMPLE_UPDATES + 1;
    f[7].part = "chunk bytes";  f[7].c.chunk_bytes = RT_SAMPLE_CHUNK_BYTES / 3;
    for (int i = 0; i < 8; i++) {
        uint8_t *fe;
        size_t fn;
        CHECK(rt_envelope_build(&f[i].c, 3, p, &fe, &fn, err) == 0, "build foreign");
        char what[64];
        snprintf(what, sizeof what, "foreign %s", f[i].part);
        expect(rt_envelope_check(&c, fe, fn, "f", NULL, NULL, err), RT_EXIT_FOREIGN_CHECKPOINT, err, f[i].part,
               what);
        CHECK(strstr(err, "foreign checkpoint"), "%s: says foreign: %s", what, err);
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

static int count_temporaries(void)
{
    DIR *d = opendir(tmpdir);
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
    /* a write that fails part way (file size limit) leaves the old file and no temporary */
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit rl = { 4096, 4096 };
        setrlimit(RLIMIT_FSIZE, &rl);
        static char big[1 << 16];
        memset(big, 'n', sizeof big);
        char e2[RT_ERR_BYTES];
        int rc = rt_publish_atomic(path, big, sizeof big, e2);
        if (rc)
            fprintf(stderr, "(expected) %s\n", e2);
        _exit(rc);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == RT_EXIT_WRITE_FAILED, "failing publish exits 8 (status %d)",
          status);
    char buf[64] = "";
    FILE *f = fopen(path, "rb");
    size_t got = f ? fread(buf, 1, sizeof buf, f) : 0;
    if (f)
        fclose(f);
    CHECK(got == 12 && memcmp(buf, "old-contents", 12) == 0, "old output intact after a failed publish");
    CHECK(count_temporaries() == 0, "no temporary left behind");
    /* a folder that does not exist */
    snprintf(path, sizeof path, "%s/no/such/dir/out.bin", tmpdir);
    expect(rt_publish_atomic(path, "x", 1, err), RT_EXIT_WRITE_FAILED, err, "out.bin", "missing folder");
    struct stat st;
    CHECK(stat(path, &st) != 0, "nothing at the path");
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
    memcpy(x, r, sizeof r);
    x[0] = 'X';
    expect(rt_record_verify(c, x, sizeof x, "rec", err), RT_EXIT_BAD_INPUT, err, "magic", "magic");
    memcpy(x, r, sizeof r);
    x[8] = 2;
    expect(rt_record_verify(c, x, sizeof x, "rec", err), RT_EXIT_BAD_INPUT, err, "version 2, expected 3", "version");
    memcpy(x, r, sizeof r);
    x[RT_SAMPLE_PAIRS_AT + 2 * 9] = 10;
    expect(rt_record_verify(c, x, sizeof x, "rec", err), RT_EXIT_BAD_INPUT, err, "key 9 names 10", "key index");
    memcpy(x, r, sizeof r);
    x[RT_SAMPLE_PAIRS_AT + 2 * 5 + 1] ^= 1;
    expect(rt_record_verify(c, x, sizeof x, "rec", err), RT_EXIT_BAD_INPUT, err, "pair's value 5", "pair vs word");
    memcpy(x, r, sizeof r);
    x[RT_SAMPLE_WORDS_AT + 4 * 36] = 41;
    expect(rt_record_verify(c, x, sizeof x, "rec", err), RT_EXIT_BAD_INPUT, err, "value word 36 is 41, not below 41",
           "value range");
    memcpy(x, r, sizeof r);
    x[RT_SAMPLE_QUERIES_AT + 1] = 1;
    expect(rt_record_verify(c, x, sizeof x, "rec", err), RT_EXIT_BAD_INPUT, err, "query 0 is 260, not below 41",
           "query range");
    char path[512];
    snprintf(path, sizeof path, "%s/missing.rec", tmpdir);
    uint8_t *back;
    expect(rt_record_read(c, path, &back, err), RT_EXIT_BAD_INPUT, err, "missing.rec", "missing record");
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
static void captured(void (*what)(void), char *out, size_t n)
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

static void test_shim_cpu(void)
{
    CHECK(rt_target_named("sm_90") == &RT_TARGET_SM90, "sm_90 row");
    CHECK(RT_TARGET_SM90.compute_class == 0xCBC0 && RT_TARGET_SM90.gpfifo_class == 0xC86F, "sm_90 classes");
    CHECK(RT_TARGET_SM86.compute_class == 0xC7C0 && RT_TARGET_SM86.gpfifo_class == 0xC56F, "sm_86 classes");
    CHECK(rt_target_named("sm_99") == NULL, "unknown target");
    CHECK(!strcmp(nv_status_name(0x1F), "NV_ERR_INVALID_ARGUMENT"), "status name");
    CHECK(!strcmp(nv_status_name(0x3A), "NV_ERR_INVALID_PARAM_STRUCT"), "status name 0x3a");
    CHECK(!strcmp(nv_status_name(0x1B), "NV_ERR_INSUFFICIENT_PERMISSIONS"), "status name 0x1b");
    CHECK(strstr(nv_status_name(0x12345), "0x12345") != NULL, "unknown status");
    CHECK(NV_IOWR(NV_ESC_RM_ALLOC, 32) == 0xC020462Bul, "RM_ALLOC ioctl number");
    /* GPFIFO entry: address low bits, GET_HI, LENGTH */
    uint64_t e = rt_gpfifo_entry(0x12345678A0ull, 5);
    CHECK((uint32_t)e == 0x345678A0u, "entry dword0 0x%08x", (uint32_t)e);
    CHECK((uint32_t)(e >> 32) == (0x12u | (5u << 10)), "entry dword1 0x%08x", (uint32_t)(e >> 32));
    if (!rt_gpu_present()) {
        rt_gpu g;
        int rc = rt_gpu_open(&g, &RT_TARGET_SM90, NULL);
        CHECK(rc == RT_EXIT_NO_GPU, "no GPU: code %d", rc);
        CHECK(strstr(g.error, "no GPU") != NULL, "no GPU message: %s", g.error);
        rt_gpu_close(&g);
    }
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/bobcrt-test-XXXXXX");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    test_crc_fnv();
    test_crc_sliced();
    test_init();
    test_fill();
    test_envelope();
    test_publish();
    test_input();
    test_args();
    test_shim_cpu();
    test_gpu_settings();
    test_diag_files();
    test_sections();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmpdir);
    printf("%d checks, %d failures\n", checks, failures);
    return failures ? 1 : 0;
}
