/* The plan-driven host: what `bobc build` generates is data (bobc_plan:
 * buffers, ring entries, semaphores, arena addresses, the checkpoint
 * contract, and the schedule as a list of steps); this file runs it.
 * Coppelius and later hosts add step kinds here, not new mains. */
#ifndef BOB_PLAN_HOST_H
#define BOB_PLAN_HOST_H

#include <stdint.h>

#include "host_runtime.h"

/* A GPU buffer the host maps at a fixed VA; `section` names the embedded
 * image copied into it (NULL: zero-filled). */
typedef struct {
    const char *name;
    uint64_t gpu_va;
    uint64_t size;
    const char *section;
} bobc_buffer;

enum bobc_step_op {
    BOBC_STEP_SUBMIT = 1,          /* submissions [first, first + count), each waited for */
    BOBC_STEP_STOP_IF_PREDICT = 2, /* `predict` ends the device work here */
    BOBC_STEP_ADAMW_SCALARS = 3,   /* write update `count` (0-based in this invocation) into launch `first`'s block */
};

typedef struct {
    int op;
    uint32_t first;
    uint32_t count;
} bobc_step;

/* Bob's arena residents (Bob.Build.PhysicalComponents bobDeviceGlobals). */
typedef struct {
    uint64_t parameters, first_moments, second_moments, gradients, input_record;
    uint64_t initial_loss, training_loss, logit_rows, predictions;
    uint64_t table_bytes, loss_bytes, logit_rows_bytes, predictions_bytes;
} bobc_arena;

typedef struct {
    const char *target;                 /* bob_target_named() key */
    const char *identity;               /* the plan's name, for messages */
    const bobc_buffer *buffers;
    uint32_t buffer_count;
    uint64_t prologue_entry;            /* GPFIFO entry of the pushbuffer's prologue */
    uint32_t submission_count;          /* ring entries in .bobc.gpfifo */
    const uint64_t *semaphore_va;       /* per submission */
    uint64_t semaphore_payload;
    uint32_t launch_count;
    const uint64_t *parameter_block_va; /* per launch: its constant bank 0 image */
    uint32_t parameter_base;            /* target's kernel parameter offset in bank 0 */
    bobc_arena arena;
    bob_contract contract;
    bob_adamw_hyper hyper;
    uint32_t parameter_count;
    uint32_t updates_per_invocation;
    const bobc_step *steps;
    uint32_t step_count;
    uint32_t wait_timeout_ms;
} bobc_plan;

/* The whole host: parse argv, load inputs, run the steps on the GPU, publish
 * outputs.  Returns a BOB_EXIT_* code (docs/runtime.md). */
int bobc_host_main(const bobc_plan *plan, int argc, char **argv);

#endif
