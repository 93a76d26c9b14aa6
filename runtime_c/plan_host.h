/* The plan-driven host.  What `bobc build` generates is data (bobc_plan:
 * the buffers and their images, the ring's semaphores, the parameter
 * blocks, the checkpoint contract, and the schedule as a list of steps from
 * the plan's NvidiaPlanHostSteps); this file carries the steps out.  Later
 * hosts add step kinds here, not new mains.  docs/runtime.md. */
#ifndef RT_PLAN_HOST_H
#define RT_PLAN_HOST_H

#include <stdint.h>

#include "host_runtime.h"

/* A buffer the host maps at a fixed GPU VA (host address = GPU address when
 * free), in the memory the plan declares (enum rt_mem_location: system
 * memory the GPU reads over PCIe, or video memory the CPU reaches through
 * BAR1); `section` names the embedded image copied in (NULL: zero-filled). */
typedef struct {
    const char *name;
    uint64_t gpu_va;
    uint64_t size;
    const char *section;
    int location;
} bobc_buffer;

/* The schedule's steps (specs/Platform/Linux/Nvidia/PlanHost.bob), repeats
 * unrolled by the generator: plan_steps.h, generated from the one step table
 * (bobc.plan.host.STEP_KINDS), declares each kind's fields; meanings are in
 * docs/host-steps.md. */
#include "plan_steps.h"

/* bobc_launch and bobc_submission: the launches a fault line names (launch_rows.h). */
#include "launch_rows.h"

typedef struct {
    const char *target;                 /* rt_target_named() key */
    const char *identity;               /* the host's identity, for messages */
    const bobc_buffer *buffers;
    uint32_t buffer_count;
    uint64_t prologue_entry;            /* GPFIFO entry of the pushbuffer's prologue */
    uint32_t submission_count;          /* ring entries in .bobc.gpfifo */
    const uint64_t *semaphore_va;       /* per submission: u64 payload, u64 timestamp */
    uint64_t semaphore_payload;
    rt_contract contract;
    const rt_initializer *initializers; /* one per checkpoint chunk: a fresh request's state */
    rt_record_contract input;          /* what the input record must hold */
    const bobc_fill *fills;             /* the scalars computed per invocation (step_fill) */
    uint32_t fill_count;
    const bobc_step *steps;
    uint32_t step_count;
    uint32_t wait_timeout_ms;
    const bobc_launch *launches;        /* the plan's launches (NULL: none named in messages) */
    uint32_t launch_count;
    const bobc_submission *submissions; /* per submission (submission_count of them; NULL: none) */
} bobc_plan;

/* The whole host: parse argv, check the inputs, run the steps on the GPU,
 * publish the outputs atomically.  Returns a RT_EXIT_* code.  With
 * BOBC_HOST_TIMING=FILE set, also writes each submission's GPU release
 * timestamp (ns) to FILE, one line per submission. */
int bobc_host_main(const bobc_plan *plan, int argc, char **argv);

/* Whether the input window [offset, offset + extent) lies in an input of `size` bytes, the
 * offset exact (a read at the cursor: base + the input checkpoint's step x scale, plus advances
 * and a delta, can pass 2^64): 0, or RT_EXIT_BAD_INPUT with "WHAT: N bytes at OFFSET of a
 * SIZE-byte input" in err (err_bytes). */
/* The line a GPU fault or timeout prints (out, n bytes): where the schedule was -- step `step` of
 * the plan (0-based) of kind `kind` ("Submit", "Reissue") issuing submissions first..end-1, with
 * `submission` not finished (its semaphore's GPU VA, and `bobc dump HOST_PATH` for its launches);
 * `kind` NULL: the prologue; `step` >= the step count: the ring draining after the last step --
 * then the shim's message `gpu_error` (rt_gpu.error: the Xid by name, "what to do: ..."), then the
 * submission's launches from the plan's table, in `bobc dump`'s words (`launch[L] (kernel NAME,
 * grid [0xX, 0xY, 0xZ], PLACE)`: the first BOBC_FAULT_LAUNCHES_SHOWN, then how many more; a name
 * or place past BOBC_FAULT_TEXT_SHOWN characters cut, ending "...": launch_rows.h rt_launch_rows). */
void bobc_gpu_fault_line(const bobc_plan *p, const char *host_path, uint32_t step, const char *kind, uint64_t first,
                         uint64_t end, uint64_t submission, const char *gpu_error, char *out, size_t n);

int bobc_input_window(unsigned __int128 offset, uint64_t extent, uint64_t size, const char *what, char *err,
                      size_t err_bytes);

/* What a read at the cursor past the input adds on a resumed run (the input checkpoint's step
 * `step` > 0, the last CursorFromCheckpoint's `scale` and `base`): " (the cursor started at byte
 * B: the input checkpoint's step S x SCALE + BASE; resume from an earlier checkpoint, or give an
 * input that holds what a run from step S reads)", B exact (bobc.reference.host.read_past_input). */
void bobc_cursor_note(uint64_t step, uint64_t scale, uint64_t base, char *out, size_t n);

#endif
