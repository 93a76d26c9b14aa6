/* The plan host's Commands step (NvidiaPlanHostStepCommands, docs/host-steps.md
 * "Commands inside a plan host"): native commands run in the host's own process
 * by the one native command machine (native_machine.h), against the plan host's
 * buffers addressed by their GPU address, with one state arena and one set of
 * slots per invocation, zero at its start and shared by all its Commands steps.
 *
 * Only the machine's own commands run here; files, the device session, Submit
 * and peers belong to the plan host and are refused by name (the compiler
 * refuses them first: bobc.plan.extract).  Statuses are the native host's
 * (docs/native-host.md): Fail's own, 4 wait, 10 mapped range outside the buffers. */
#ifndef RT_PLAN_COMMANDS_H
#define RT_PLAN_COMMANDS_H

#include <stddef.h>
#include <stdint.h>

/* The CPU bytes behind GPU VA [va, va + bytes) inside one buffer the host maps, or NULL. */
typedef uint8_t *(*rt_commands_memory)(void *context, uint64_t va, uint64_t bytes);

typedef struct {
    uint64_t *slots;             /* allocated by the first Commands step, per invocation */
    uint8_t *state;
    uint64_t slot_count, state_bytes;
    double start_us;
} rt_commands_state;

/* Decode and run one step's program (its canonical bytes) as step `step` of the
 * schedule: 0, or its status with a message in err (RT_ERR_BYTES) that names the
 * step and the command and ends "; nothing was published". */
int rt_commands_run(rt_commands_state *state, const uint8_t *program, size_t size, uint32_t step,
                    rt_commands_memory memory, void *context, char *err);

void rt_commands_free(rt_commands_state *state);

#endif
