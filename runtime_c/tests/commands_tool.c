/* The plan host's Commands steps on the CPU (plan_commands.h), for tests that
 * compare them with the reference host (tests/host/test_plan_commands.py):
 *
 *   commands_tool BASE MEMORY OUT STEP:PROGRAM...
 *
 * MEMORY's bytes are one buffer at GPU address BASE (hex); each PROGRAM file (a
 * step's canonical program bytes) runs as step STEP of one invocation, sharing its
 * state and slots; OUT gets the buffer afterwards (also after a stop).  Exit
 * status and stderr are the plan host's ("commands_tool: error: ..."). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host_runtime.h"
#include "plan_commands.h"

typedef struct {
    uint64_t base;
    uint8_t *bytes;
    size_t size;
} buffer;

static uint8_t *memory_at(void *context, uint64_t va, uint64_t bytes)
{
    buffer *b = context;
    if (va < b->base || va - b->base > b->size || bytes > b->size - (va - b->base))
        return NULL;
    return b->bytes + (va - b->base);
}

static uint8_t *slurp(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *data = malloc(n ? (size_t)n : 1);
    if (data && fread(data, 1, (size_t)n, f) != (size_t)n) {
        free(data);
        data = NULL;
    }
    fclose(f);
    *size = (size_t)n;
    return data;
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: %s BASE MEMORY OUT STEP:PROGRAM...\n", argv[0]);
        return 2;
    }
    rt_report_as(argv[0]);
    buffer b = { strtoull(argv[1], NULL, 16), NULL, 0 };
    if (!(b.bytes = slurp(argv[2], &b.size))) {
        fprintf(stderr, "%s: cannot read %s\n", argv[0], argv[2]);
        return 2;
    }
    rt_commands_state state;
    memset(&state, 0, sizeof state);
    int rc = 0;
    char err[RT_ERR_BYTES];
    for (int i = 4; i < argc && !rc; i++) {
        char *colon = strchr(argv[i], ':');
        size_t size;
        uint8_t *program = colon ? slurp(colon + 1, &size) : NULL;
        if (!program) {
            fprintf(stderr, "%s: cannot read %s\n", argv[0], argv[i]);
            return 2;
        }
        rc = rt_commands_run(&state, program, size, (uint32_t)strtoul(argv[i], NULL, 10), memory_at, &b, err);
        if (rc)
            rt_report(err);
        free(program);
    }
    FILE *out = fopen(argv[3], "wb");
    if (!out || fwrite(b.bytes, 1, b.size, out) != b.size || fclose(out)) {
        fprintf(stderr, "%s: cannot write %s\n", argv[0], argv[3]);
        return 2;
    }
    rt_commands_free(&state);
    free(b.bytes);
    return rc;
}
