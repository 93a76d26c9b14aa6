/* See plan_host.h.  One invocation, as docs/runtime.md and bob.md describe:
 * inputs checked before the GPU is touched, outputs published atomically
 * only after every submission completed. */
#include "plan_host.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "elf_sections.h"
#include "nv_shim.h"

#define SECTION_PREFIX ".bobc."

typedef struct {
    const bobc_plan *plan;
    bob_gpu gpu;
    void **mapped;              /* per buffer: CPU pointer */
    bob_section ring;           /* .bobc.gpfifo */
    uint64_t step;              /* global step before this invocation */
} host;

static void *arena_ptr(host *h, uint64_t gpu_va)
{
    for (uint32_t i = 0; i < h->plan->buffer_count; i++) {
        const bobc_buffer *b = &h->plan->buffers[i];
        if (gpu_va >= b->gpu_va && gpu_va < b->gpu_va + b->size)
            return (uint8_t *)h->mapped[i] + (gpu_va - b->gpu_va);
    }
    return NULL;
}

static int fail(int code, const char *err)
{
    bob_report(err);
    return code;
}

static int load_buffers(host *h, char *err)
{
    const bobc_plan *p = h->plan;
    for (uint32_t i = 0; i < p->buffer_count; i++) {
        const bobc_buffer *b = &p->buffers[i];
        int rc = bob_gpu_alloc_at(&h->gpu, b->gpu_va, b->size, BOB_MEM_SYSTEM, &h->mapped[i]);
        if (rc)
            return rc;
        memset(h->mapped[i], 0, b->size);
        if (!b->section)
            continue;
        bob_section image;
        rc = bob_section_read("/proc/self/exe", b->section, &image, err, BOB_ERR_BYTES);
        if (rc)
            return fail(rc, err);
        if (image.size > b->size) {
            snprintf(err, BOB_ERR_BYTES, "image %s (%zu bytes) does not fit its buffer %s (%llu bytes)",
                     b->section, image.size, b->name, (unsigned long long)b->size);
            free(image.data);
            return fail(BOB_EXIT_INTERNAL, err);
        }
        memcpy(h->mapped[i], image.data, image.size);
        free(image.data);
    }
    return 0;
}

static int submit_and_wait(host *h, uint32_t index)
{
    const bobc_plan *p = h->plan;
    uint64_t entry;
    memcpy(&entry, h->ring.data + 8u * index, 8);
    volatile uint64_t *semaphore = arena_ptr(h, p->semaphore_va[index]);
    if (!semaphore) {
        char err[BOB_ERR_BYTES];
        snprintf(err, sizeof err, "submission %u's semaphore 0x%llx lies in no mapped buffer", index,
                 (unsigned long long)p->semaphore_va[index]);
        return fail(BOB_EXIT_INTERNAL, err);
    }
    *semaphore = 0;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    int rc = bob_gpu_submit(&h->gpu, entry);
    if (rc)
        return rc;
    return bob_gpu_wait(&h->gpu, semaphore, p->semaphore_payload, p->wait_timeout_ms);
}

static int write_adamw(host *h, uint32_t launch, uint32_t update)
{
    const bobc_plan *p = h->plan;
    uint8_t *block = arena_ptr(h, p->parameter_block_va[launch]);
    if (!block || launch >= p->launch_count) {
        char err[BOB_ERR_BYTES];
        snprintf(err, sizeof err, "AdamW launch %u has no mapped parameter block", launch);
        return fail(BOB_EXIT_INTERNAL, err);
    }
    uint32_t t = (uint32_t)(h->step + update + 1);
    bob_adamw_scalars s = bob_adamw_scalars_for(&p->hyper, t, p->parameter_count);
    bob_adamw_block_write(block + p->parameter_base, p->arena.parameters, p->arena.gradients,
                          p->arena.first_moments, p->arena.second_moments, &s);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    return 0;
}

static int run_steps(host *h, int op)
{
    const bobc_plan *p = h->plan;
    int rc = bob_gpu_submit(&h->gpu, p->prologue_entry);
    if (rc)
        return rc;
    for (uint32_t i = 0; i < p->step_count; i++) {
        const bobc_step *s = &p->steps[i];
        switch (s->op) {
        case BOBC_STEP_SUBMIT:
            for (uint32_t k = 0; k < s->count; k++)
                if ((rc = submit_and_wait(h, s->first + k)))
                    return rc;
            break;
        case BOBC_STEP_STOP_IF_PREDICT:
            if (op == BOB_OP_PREDICT)
                return 0;
            break;
        case BOBC_STEP_ADAMW_SCALARS:
            if ((rc = write_adamw(h, s->first, s->count)))
                return rc;
            break;
        default: {
            char err[BOB_ERR_BYTES];
            snprintf(err, sizeof err, "unknown host step %d at %u", s->op, i);
            return fail(BOB_EXIT_INTERNAL, err);
        }
        }
    }
    return 0;
}

static int publish_outputs(host *h, const bob_args *args)
{
    const bobc_plan *p = h->plan;
    const bobc_arena *a = &p->arena;
    char err[BOB_ERR_BYTES];
    int rc;
    if ((rc = bob_publish_atomic(args->predictions, arena_ptr(h, a->predictions), a->predictions_bytes, err)))
        return fail(rc, err);
    size_t result_bytes = 2 * a->loss_bytes + a->logit_rows_bytes;
    uint8_t *result = malloc(result_bytes);
    if (!result)
        return fail(BOB_EXIT_INTERNAL, "out of memory for the result record");
    memcpy(result, arena_ptr(h, a->initial_loss), a->loss_bytes);
    memcpy(result + a->loss_bytes, arena_ptr(h, a->training_loss), a->loss_bytes);
    memcpy(result + 2 * a->loss_bytes, arena_ptr(h, a->logit_rows), a->logit_rows_bytes);
    rc = bob_publish_atomic(args->result, result, result_bytes, err);
    free(result);
    if (rc)
        return fail(rc, err);
    /* P, M and V are contiguous in the arena, in checkpoint order. */
    uint64_t step = h->step + (args->op == BOB_OP_TRAIN ? p->updates_per_invocation : 0);
    if ((rc = bob_checkpoint_write(&p->contract, args->checkpoint_out, step, arena_ptr(h, a->parameters), err)))
        return fail(rc, err);
    return 0;
}

int bobc_host_main(const bobc_plan *p, int argc, char **argv)
{
    char err[BOB_ERR_BYTES];
    bob_args args;
    int rc = bob_parse_args(argc, argv, &args, err);
    if (rc) {
        bob_report(err);
        bob_print_usage(argv[0], stderr);
        return rc;
    }
    if (args.help) {
        bob_print_usage(argv[0], stdout);
        return 0;
    }
    host h;
    memset(&h, 0, sizeof h);
    h.plan = p;
    /* Inputs first: a bad record or checkpoint is refused before the GPU is touched. */
    static uint8_t record[BOB_INPUT_RECORD_BYTES];
    bob_input input;
    if ((rc = bob_input_read(args.input, record, &input, err)))
        return fail(rc, err);
    float *payload = malloc(p->contract.payload_bytes);
    if (!payload)
        return fail(BOB_EXIT_INTERNAL, "out of memory for the checkpoint payload");
    if (args.checkpoint_in) {
        if ((rc = bob_checkpoint_read(&p->contract, args.checkpoint_in, payload, &h.step, err))) {
            free(payload);
            return fail(rc, err);
        }
    } else {
        bob_init_payload(p->contract.seed, payload);
        h.step = 0;
    }
    if (!bob_gpu_present()) {
        free(payload);
        return fail(BOB_EXIT_NO_GPU, "no NVIDIA GPU here (/dev/nvidiactl is absent): this host needs the "
                                     "NVIDIA kernel driver and a GPU of its target");
    }
    const bob_target_facts *target = bob_target_named(p->target);
    h.mapped = calloc(p->buffer_count, sizeof *h.mapped);
    if (!target || !h.mapped) {
        free(payload);
        return fail(BOB_EXIT_INTERNAL, "host built for an unknown target");
    }
    if ((rc = bob_gpu_open(&h.gpu, target, NULL)))
        goto out;
    if ((rc = load_buffers(&h, err)))
        goto out;
    if ((rc = bob_section_read("/proc/self/exe", SECTION_PREFIX "gpfifo", &h.ring, err, sizeof err))) {
        bob_report(err);
        goto out;
    }
    if (h.ring.size != 8u * p->submission_count) {
        snprintf(err, sizeof err, "the ring image holds %zu bytes, the plan %u entries", h.ring.size,
                 p->submission_count);
        rc = fail(BOB_EXIT_INTERNAL, err);
        goto out;
    }
    memcpy(arena_ptr(&h, p->arena.input_record), record, BOB_INPUT_RECORD_BYTES);
    memcpy(arena_ptr(&h, p->arena.parameters), payload, p->contract.payload_bytes);
    if ((rc = run_steps(&h, args.op)))
        goto out;
    rc = publish_outputs(&h, &args);
out:
    bob_gpu_close(&h.gpu);
    free(h.ring.data);
    free(h.mapped);
    free(payload);
    return rc;
}
