/* A small command-line front end to the host runtime, for the pytest tests
 * (tests/host/test_runtime_c.py) and for poking at files by hand.
 *
 *   rt_tool init N                 first N elements of the sample's chunk 0: "i bits value" per line
 *   rt_tool fill T BINARY32|WORD32 TERM...   a plan fill's 4 bytes at step T as one hex word;
 *                                     TERM is OP (1..8, enum bobc_scalar_op) or OP:HEXDOUBLE
 *   rt_tool envelope-write OUT STEP [contract options]   the sample's fresh payload (rt_sample.h), published atomically
 *   rt_tool envelope-read IN [contract options]          check; prints "ok step N crc ..."
 *   rt_tool input-check RECORD     check a record against the sample's contract (rt_sample.h)
 *   rt_tool step-room STEP UPDATES PATH   whether checkpoint PATH's step leaves room for UPDATES more
 *   rt_tool args ARGS...           parse a host command line, print the fields
 *   rt_tool gpu-open TARGET        bring the GPU up and close it (exit 6 without one)
 *   rt_tool outputs PRED RESULT CKPT   what a host does with its outputs before the GPU: complete
 *                                     a journal (rt_io_recover), then check the three (rt_io_add_output)
 *   rt_tool publish TAG PRED RESULT CKPT   the same, then publish "TAG <option>\n" in each
 * contract options: --schema S --learner S --data S --seed S --payload N --chunk N --chunks N --updates N
 * Exit status: the runtime's code (rt_exit.h); errors on stderr.
 */
#include "host_runtime.h"
#include "host_io.h"
#include "rt_sample.h"
#include "nv_shim.h"
#include "plan_fill.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static rt_contract default_contract(void)
{
    rt_contract c = {
        .schema = "test-schema", .learner = "test-learner", .data = "test-data", .seed = RT_SAMPLE_SEED,
        .payload_bytes = RT_SAMPLE_PAYLOAD_BYTES, .chunk_bytes = RT_SAMPLE_CHUNK_BYTES,
        .chunk_count = RT_SAMPLE_CHUNK_COUNT, .updates_per_invocation = RT_SAMPLE_UPDATES,
    };
    return c;
}

static int contract_options(int argc, char **argv, int from, rt_contract *c)
{
    for (int i = from; i + 1 < argc; i += 2) {
        const char *k = argv[i], *v = argv[i + 1];
        if (!strcmp(k, "--schema")) c->schema = v;
        else if (!strcmp(k, "--learner")) c->learner = v;
        else if (!strcmp(k, "--data")) c->data = v;
        else if (!strcmp(k, "--seed")) c->seed = v;
        else if (!strcmp(k, "--payload")) c->payload_bytes = strtoull(v, NULL, 0);
        else if (!strcmp(k, "--chunk")) c->chunk_bytes = strtoull(v, NULL, 0);
        else if (!strcmp(k, "--chunks")) c->chunk_count = (uint32_t)strtoul(v, NULL, 0);
        else if (!strcmp(k, "--updates")) c->updates_per_invocation = strtoull(v, NULL, 0);
        else {
            fprintf(stderr, "rt_tool: unknown contract option %s\n", k);
            return RT_EXIT_USAGE;
        }
    }
    return 0;
}

static uint32_t bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

int main(int argc, char **argv)
{
    char err[RT_ERR_BYTES];
    if (argc < 2) {
        fprintf(stderr, "usage: rt_tool init|fill|interval-note|envelope-write|envelope-read|input-check|step-room|args|gpu-open "
                        "...\n");
        return RT_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    /* interval-note SAID WRITTEN PUBLICATIONS STEP PATH: a failing run's line after SAID once
     * interval publication WRITTEN of PUBLICATIONS (at STEP) is at PATH (rt_io_interval_note) */
    if (!strcmp(cmd, "interval-note") && argc == 7) {
        char note[RT_ERR_BYTES];
        size_t keep = rt_io_interval_note(argv[2], strlen(argv[2]), strtoull(argv[3], NULL, 0),
                                          strtoull(argv[4], NULL, 0), strtoull(argv[5], NULL, 0), argv[6], note,
                                          sizeof note);
        printf("%.*s%s\n", (int)keep, argv[2], note);
        return 0;
    }
    if (!strcmp(cmd, "init") && argc == 3) {
        size_t n = strtoull(argv[2], NULL, 0);
        float *p = malloc(n * sizeof *p + 1);
        rt_init_chunk(&rt_sample_init[0], p, n * sizeof *p);
        for (size_t i = 0; i < n; i++)
            printf("%zu %08x %.9g\n", i, bits(p[i]), p[i]);
        free(p);
        return 0;
    }
    if (!strcmp(cmd, "fill") && argc >= 5) {
        uint32_t n = (uint32_t)(argc - 4);
        bobc_scalar_term *terms = calloc(n, sizeof *terms);
        for (uint32_t i = 0; i < n; i++) {
            char *rest;
            terms[i].op = (int)strtol(argv[4 + i], &rest, 10);
            if (*rest == ':')
                terms[i].value = strtod(rest + 1, NULL);
        }
        bobc_fill f = { 0, 0, !strcmp(argv[3], "WORD32") ? BOBC_ENCODE_WORD32 : BOBC_ENCODE_BINARY32, n, terms };
        uint8_t out[4];
        int rc = bobc_fill_bytes(&f, strtoull(argv[2], NULL, 0), out, err, sizeof err);
        free(terms);
        if (rc) {
            rt_report(err);
            return RT_EXIT_INTERNAL;
        }
        printf("%02x%02x%02x%02x\n", out[3], out[2], out[1], out[0]);
        return 0;
    }
    if (!strcmp(cmd, "envelope-write") && argc >= 4) {
        rt_contract c = default_contract();
        int rc = contract_options(argc, argv, 4, &c);
        if (rc)
            return rc;
        float *payload = calloc(1, c.payload_bytes + 4);
        if (c.payload_bytes >= RT_SAMPLE_PAYLOAD_BYTES)
            rt_sample_payload(payload);
        rc = rt_checkpoint_write(&c, argv[2], strtoull(argv[3], NULL, 0), payload, err);
        free(payload);
        if (rc)
            rt_report(err);
        return rc;
    }
    if (!strcmp(cmd, "envelope-read") && argc >= 3) {
        rt_contract c = default_contract();
        int rc = contract_options(argc, argv, 3, &c);
        if (rc)
            return rc;
        float *payload = malloc(c.payload_bytes + 4);
        uint64_t step = 0;
        rc = rt_checkpoint_read(&c, argv[2], payload, &step, err);
        if (rc)
            rt_report(err);
        else
            printf("ok step %llu p0 %08x\n", (unsigned long long)step, bits(payload[0]));
        free(payload);
        return rc;
    }
    if (!strcmp(cmd, "step-room") && argc == 5) {
        int rc = rt_io_check_step_room(strtoull(argv[2], NULL, 0), strtoull(argv[3], NULL, 0), argv[4], err);
        if (rc)
            rt_report(err);
        else
            printf("ok\n");
        return rc;
    }
    if (!strcmp(cmd, "input-check") && argc == 3) {
        uint8_t *r;
        int rc = rt_record_read(&rt_sample_record, argv[2], &r, err);
        if (rc) {
            rt_report(err);
            return rc;
        }
        printf("ok queries");
        for (unsigned q = 0; q < RT_SAMPLE_QUERIES; q++)                 /* each below 41: one byte */
            printf(" %u", r[RT_SAMPLE_QUERIES_AT + 4 * q]);
        printf("\n");
        free(r);
        return 0;
    }
    if (!strcmp(cmd, "args")) {
        rt_args a;
        int rc = rt_parse_args(argc - 1, argv + 1, &a, err);
        if (rc) {
            rt_report(err);
            return rc;
        }
        if (a.help) {
            rt_print_usage("HOST", "a sample plan", RT_SAMPLE_RECORD_BYTES, RT_CHECKPOINT_OPTIONAL, stdout);
            return 0;
        }
        printf("op %s input %s checkpoint %s out %s predictions %s result %s\n",
               a.op == RT_OP_TRAIN ? "train" : "predict", a.input, a.checkpoint_in ? a.checkpoint_in : "-",
               a.checkpoint_out, a.predictions, a.result);
        return 0;
    }
    if ((!strcmp(cmd, "outputs") && argc == 5) || (!strcmp(cmd, "publish") && argc == 6)) {
        static const char *const option[3] = { "--predictions", "--result", "--checkpoint-out" };
        int publish = !strcmp(cmd, "publish");
        const char *const *paths = (const char *const *)argv + 2 + publish;
        static rt_io_files files;
        static char text[3][256];
        int rc = rt_io_recover(paths, 3, err);
        for (int i = 0; !rc && i < 3; i++) {
            rc = rt_io_add_output(&files, paths[i], option[i], NULL, err);
            snprintf(text[i], sizeof text[i], "%s %s\n", publish ? argv[2] : "", option[i]);
            if (!rc)
                rc = rt_io_stage(&files, option[i], text[i], strlen(text[i]), err);
        }
        if (!rc && publish)
            rc = rt_io_publish(&files, err);
        if (rc)
            rt_report(err);
        else
            printf("ok\n");
        return rc;
    }
    if (!strcmp(cmd, "gpu-open") && argc == 3) {
        const rt_target_facts *t = rt_target_named(argv[2]);
        if (!t) {
            fprintf(stderr, "rt_tool: unknown target %s\n", argv[2]);
            return RT_EXIT_USAGE;
        }
        rt_gpu g;
        rt_gpu_config cfg = { .verbose = 1 };
        int rc = rt_gpu_open(&g, t, &cfg);
        if (!rc) {
            printf("ok driver %s\n", g.driver_version);
            rt_gpu_close(&g);
        }
        return rc;
    }
    fprintf(stderr, "rt_tool: bad command line (see the comment at the top of rt_tool.c)\n");
    return RT_EXIT_USAGE;
}
