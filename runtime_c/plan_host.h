/* The plan-driven host.  What `bobc build` generates is data (bobc_plan:
 * the buffers and their images, the ring's semaphores, the parameter
 * blocks, the checkpoint contract, and the schedule as a list of steps from
 * the plan's NvidiaPlanHostSteps); this file carries the steps out.  Later
 * hosts (Coppelius) add step kinds here, not new mains.  docs/runtime.md. */
#ifndef BOB_PLAN_HOST_H
#define BOB_PLAN_HOST_H

#include <stdint.h>

#include "host_runtime.h"

/* A buffer the host maps at a fixed GPU VA (host address = GPU address when
 * free), in the memory the plan declares (enum bob_mem_location: system
 * memory the GPU reads over PCIe, or video memory the CPU reaches through
 * BAR1); `section` names the embedded image copied in (NULL: zero-filled). */
typedef struct {
    const char *name;
    uint64_t gpu_va;
    uint64_t size;
    const char *section;
    int location;
} bobc_buffer;

enum bobc_file {
    BOBC_FILE_INPUT = 1,
    BOBC_FILE_CHECKPOINT_IN = 2,
    BOBC_FILE_CHECKPOINT_OUT = 3,
    BOBC_FILE_PREDICTIONS = 4,
    BOBC_FILE_RESULT = 5,
};

/* The schedule's steps (specs/Platform/Linux/Nvidia/PlanHost.bob), repeats
 * unrolled by the generator.  Fields by op:
 *   SUBMIT            a = first submission, b = end (the plan's gpPut): issue all, wait for each
 *   READ              file, a = host address, b = extent, c = offset, d = tolerate empty
 *   WRITE             file, a = host address, b = extent (appended to the output)
 *   WRITE_AT          file, a = host address, b = extent, c = offset
 *   OPERATION         a predict request ends here: outputs published
 *   CHECKPOINT_BEGIN  the output checkpoint's payload starts empty
 *   CHECKPOINT_PUBLISH a = updates the payload carries past the input's step
 *   ADAMW_SCALARS     a = launch whose block takes update b's scalars (t = input step + b + 1) */
enum bobc_step_op {
    BOBC_STEP_SUBMIT = 1,
    BOBC_STEP_READ = 2,
    BOBC_STEP_WRITE = 3,
    BOBC_STEP_WRITE_AT = 4,
    BOBC_STEP_OPERATION = 5,
    BOBC_STEP_CHECKPOINT_BEGIN = 6,
    BOBC_STEP_CHECKPOINT_PUBLISH = 7,
    BOBC_STEP_ADAMW_SCALARS = 8,
};

typedef struct {
    int op;
    int file;
    uint64_t a, b, c, d;
} bobc_step;

typedef struct {
    const char *target;                 /* bob_target_named() key */
    const char *identity;               /* the host's identity, for messages */
    const bobc_buffer *buffers;
    uint32_t buffer_count;
    uint64_t prologue_entry;            /* GPFIFO entry of the pushbuffer's prologue */
    uint32_t submission_count;          /* ring entries in .bobc.gpfifo */
    const uint64_t *semaphore_va;       /* per submission: u64 payload, u64 timestamp */
    uint64_t semaphore_payload;
    uint32_t launch_count;
    const uint64_t *parameter_block_va; /* per launch: its constant bank 0 image */
    uint32_t parameter_base;            /* the target's kernel parameter offset in bank 0 */
    uint64_t parameters_va, gradients_va, first_moments_va, second_moments_va;  /* AdamW's pointers */
    bob_contract contract;
    bob_adamw_hyper hyper;
    uint32_t parameter_count;
    const bobc_step *steps;
    uint32_t step_count;
    uint32_t wait_timeout_ms;
} bobc_plan;

/* The whole host: parse argv, check the inputs, run the steps on the GPU,
 * publish the outputs atomically.  Returns a BOB_EXIT_* code.  With
 * BOB_HOST_TIMING=FILE set, also writes each submission's GPU release
 * timestamp (ns) to FILE, one line per submission. */
int bobc_host_main(const bobc_plan *plan, int argc, char **argv);

#endif
