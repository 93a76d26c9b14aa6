/* See plan_commands.h. */
#define _GNU_SOURCE
#include "plan_commands.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host_runtime.h"
#include "host_settings.h"
#include "native_device.h"
#include "native_machine.h"
#include "native_program.h"

/* A message longer than RT_ERR_BYTES - 1 bytes is cut there (the reference host cuts it alike). */
#pragma GCC diagnostic ignored "-Wformat-truncation"

typedef struct {
    rt_commands_memory memory;
    void *context;
} plan_memory;

static uint8_t *plan_mapped(np_machine *m, uint64_t address, uint64_t bytes)
{
    plan_memory *pm = m->host;
    if (bytes && address + bytes < address)
        return NULL;
    return pm->memory(pm->context, address, bytes);
}

/* A word only the GPU or these commands write: polled as the native host polls it
 * (a session with no GPU of its own: no channel to ask for errors). */
static int plan_wait(np_machine *m, volatile uint8_t *word, uint64_t value, uint64_t timeout_ms, char *why)
{
    (void)m;
    static np_session none;
    return np_device_wait(&none, word, value, timeout_ms, why);
}

static int plan_other(np_machine *m, uint32_t index, const np_command *c)
{
    return np_fault(m, index, RT_EXIT_INTERNAL, "%s is not carried out inside a plan host (the plan host owns its "
                    "files, device session, ring and has no peers: docs/host-steps.md)", np_code_name(c->code));
}

static const np_hooks plan_hooks = { plan_mapped, plan_wait, plan_other, NULL, NULL };  /* a step has no peers */

int rt_commands_run(rt_commands_state *state, const uint8_t *program, size_t size, uint32_t step,
                    rt_commands_memory memory, void *context, char *err)
{
    np_program p;
    char why[NP_ERR_BYTES];
    if (np_decode(program, size, &p, why)) {
        snprintf(err, RT_ERR_BYTES, "step %u (commands): its program: %s; rebuild the host", step, why);
        return RT_EXIT_INTERNAL;
    }
    if (!state->state) {
        state->slots = calloc(p.slots ? p.slots : 1, 8);
        state->state = calloc(p.state_extent ? p.state_extent : 1, 1);
        state->slot_count = p.slots;
        state->state_bytes = p.state_extent;
        state->start_us = np_now_us();
        if (!state->slots || !state->state) {
            np_free(&p);
            snprintf(err, RT_ERR_BYTES, "step %u (commands): out of memory for a %llu-byte state", step,
                     (unsigned long long)p.state_extent);
            return RT_EXIT_INTERNAL;
        }
    }
    if (p.slots != state->slot_count || p.state_extent != state->state_bytes) {
        np_free(&p);
        snprintf(err, RT_ERR_BYTES, "step %u (commands): %llu slots and %llu state bytes, where the invocation's "
                 "first Commands step has %llu and %llu; rebuild the host", step, (unsigned long long)p.slots,
                 (unsigned long long)p.state_extent, (unsigned long long)state->slot_count,
                 (unsigned long long)state->state_bytes);
        return RT_EXIT_INTERNAL;
    }
    plan_memory pm = { memory, context };
    np_machine m;
    memset(&m, 0, sizeof m);
    m.p = &p;
    m.hooks = &plan_hooks;
    m.host = &pm;
    m.slots = state->slots;
    m.state = state->state;
    m.start_us = state->start_us;
    m.telemetry = (long)rt_setting_number(RT_SETTING_TELEMETRY, -1);     /* judged at start-up */
    m.wait_status = RT_EXIT_GPU_FAULT;      /* the plan host's codes: 4 is a bad checkpoint there */
    int rc = 0;
    if (np_run(&m, 0) < 0) {
        char said[RT_ERR_BYTES];        /* a Fail's bytes, control characters as '?' (NUL too): one line */
        np_shown_copy(said, sizeof said, m.fail_message ? m.fail_message : (const uint8_t *)"",
                      m.fail_message ? (size_t)m.fail_length : 0);
        snprintf(err, RT_ERR_BYTES, "step %u (commands): %s%s; nothing was published", step, m.message, said);
        rc = m.status;
    }
    np_free(&p);
    return rc;
}

void rt_commands_free(rt_commands_state *state)
{
    free(state->slots);
    free(state->state);
    memset(state, 0, sizeof *state);
}
