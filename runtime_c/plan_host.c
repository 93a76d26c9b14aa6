/* See plan_host.h.  Inputs are checked before the GPU is touched; outputs
 * are published (atomically) only after the device work they hold is done. */
#include "host_version.h"
#include "plan_host.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag_file.h"
#include "elf_sections.h"
#include "host_io.h"
#include "host_settings.h"
#include "plan_fill.h"
#include "nv_rm.h"
#include "nv_shim.h"
#include "plan_commands.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

typedef struct {
    uint8_t *data;
    size_t size;
} output;

#define BOBC_STAT_BYTES 4096
#define BOBC_STAMP_SLOTS 4096

typedef struct {
    const bobc_plan *plan;
    const rt_args *args;
    rt_gpu gpu;
    void **mapped;               /* per buffer: its CPU mapping */
    rt_section ring;            /* .bobc.gpfifo: one entry per submission */
    uint64_t step;               /* global step of the input checkpoint */
    uint8_t *input;              /* the input record, checked (plan->input.record_bytes) */
    uint8_t *checkpoint_in;      /* its payload (or the fresh initialization) */
    output out[BOBC_FILE_COUNT]; /* by enum bobc_file */
    uint64_t gp_put;             /* the ring entries issued so far */
    int checkpoint_published;
    uint64_t published;          /* checkpoints published so far */
    uint64_t published_step;     /* the step the last one carries */
    uint64_t written;            /* interval checkpoints this run put at --checkpoint-out (messages) */
    uint64_t written_step;       /* the step the last of them carries */
    uint64_t issued;             /* ring entries issued (Submit and Reissue) */
    unsigned __int128 cursor;    /* the input stream's cursor (CursorFromCheckpoint): exact, as the
                                    checkpoint's step x scale can pass 2^64 (bobc_input_window) */
    uint8_t stat[BOBC_STAT_BYTES];  /* the stat block (RecordStat) and its used size */
    size_t stat_size;
    uint64_t stamps[BOBC_STAMP_SLOTS];  /* GPU nanoseconds per slot (Stamp) and slots used */
    uint32_t stamp_count;
    const uint8_t *identity;     /* the bound input identity (BindInputIdentity), inside h->input */
    uint64_t identity_bytes;
    int closed[BOBC_FILE_COUNT]; /* outputs a Close finished: no more writes */
    uint64_t publications;       /* CheckpointPublish steps this request carries out */
    rt_io_files files;          /* inputs' identities, outputs checked before the GPU (host_io.h) */
    uint8_t *checkpoint_staged;  /* the last checkpoint's envelope, published with the other outputs */
    size_t checkpoint_staged_size;
    int gpu_opened;              /* rt_gpu_close only after rt_gpu_open (a zeroed rt_gpu holds fd 0) */
    int stopped;                 /* a step ended the schedule (a predict request's operation) */
    uint32_t step_index;         /* the step being carried out (messages) */
    const bobc_step_cursor_from_checkpoint *cursor_from;   /* the last CursorFromCheckpoint (messages) */
    const char *path;            /* argv[0]: the host as it was started (messages) */
    rt_commands_state commands;  /* the Commands steps' state arena and slots (plan_commands.h) */
    char err[RT_ERR_BYTES];
} host;

/* A failure's one line.  Once an interval checkpoint of this run is at --checkpoint-out it
 * stays there: the line says which (rt_io_interval_note), not that nothing was published. */
static void report(host *h, const char *said)
{
    if (!h->written) {
        rt_report(said);
        return;
    }
    char note[RT_ERR_BYTES];
    size_t keep = rt_io_interval_note(said, strlen(said), h->written, h->publications, h->written_step,
                                      h->args->checkpoint_out, note, sizeof note);
    fprintf(stderr, "%s: error: %.*s%s\n", rt_report_name(), (int)keep, said, note);
}

static int fail(host *h, int code)
{
    report(h, h->err);
    return code;
}

/* The CPU address of GPU VA `va` .. va + bytes inside one mapped buffer, or NULL. */
static uint8_t *at(host *h, uint64_t va, uint64_t bytes)
{
    for (uint32_t i = 0; i < h->plan->buffer_count; i++) {
        const bobc_buffer *b = &h->plan->buffers[i];
        if (h->mapped[i] && va >= b->gpu_va && va + bytes <= b->gpu_va + b->size)
            return (uint8_t *)h->mapped[i] + (va - b->gpu_va);
    }
    return NULL;
}

/* The memory (enum rt_mem_location) of the buffer holding GPU VA `va`. */
static int location_of(host *h, uint64_t va)
{
    for (uint32_t i = 0; i < h->plan->buffer_count; i++) {
        const bobc_buffer *b = &h->plan->buffers[i];
        if (va >= b->gpu_va && va < b->gpu_va + b->size)
            return b->location;
    }
    return RT_MEM_SYSTEM;
}

#if defined(__x86_64__)
/* Video memory is mapped write-combined through BAR1, where an ordinary load
 * is an uncached PCIe read of 8 or 16 bytes; MOVNTDQA fetches a whole 64-byte
 * line per four loads, several times faster for a checkpoint's bytes. */
__attribute__((target("sse4.1"))) static void copy_streaming(uint8_t *dst, const uint8_t *src, size_t n)
{
    size_t head = (16 - ((uintptr_t)src & 15)) & 15;
    if (head > n)
        head = n;
    memcpy(dst, src, head);
    dst += head, src += head, n -= head;
    for (; n >= 64; n -= 64, src += 64, dst += 64) {
        __m128i a = _mm_stream_load_si128((__m128i *)(src + 0));
        __m128i b = _mm_stream_load_si128((__m128i *)(src + 16));
        __m128i c = _mm_stream_load_si128((__m128i *)(src + 32));
        __m128i d = _mm_stream_load_si128((__m128i *)(src + 48));
        _mm_storeu_si128((__m128i *)(dst + 0), a);
        _mm_storeu_si128((__m128i *)(dst + 16), b);
        _mm_storeu_si128((__m128i *)(dst + 32), c);
        _mm_storeu_si128((__m128i *)(dst + 48), d);
    }
    memcpy(dst, src, n);
}
#endif

/* Copy `n` bytes the GPU wrote (at GPU VA `va`, CPU address `src`) out to host memory. */
static void copy_out(host *h, uint8_t *dst, const uint8_t *src, uint64_t va, size_t n)
{
#if defined(__x86_64__)
    if (location_of(h, va) == RT_MEM_VIDEO && __builtin_cpu_supports("sse4.1")) {
        copy_streaming(dst, src, n);
        return;
    }
#endif
    (void)h, (void)va;
    memcpy(dst, src, n);
}

static uint8_t *at_or_fail(host *h, uint64_t va, uint64_t bytes, const char *what)
{
    uint8_t *p = at(h, va, bytes);
    if (!p)
        snprintf(h->err, sizeof h->err, "%s at 0x%llx (%llu bytes) lies in no buffer the host maps", what,
                 (unsigned long long)va, (unsigned long long)bytes);
    return p;
}

static int load_buffers(host *h)
{
    const bobc_plan *p = h->plan;
    for (uint32_t i = 0; i < p->buffer_count; i++) {
        const bobc_buffer *b = &p->buffers[i];
        int rc = rt_gpu_alloc_at(&h->gpu, b->gpu_va, b->size, b->location, &h->mapped[i]);
        if (rc)
            return rc;
        memset(h->mapped[i], 0, b->size);
        if (!b->section)
            continue;
        rt_section image;
        if ((rc = rt_self_section_read(b->section, &image, h->err, sizeof h->err)))
            return fail(h, rc);
        if (image.size > b->size) {
            snprintf(h->err, sizeof h->err, "image %s (%zu bytes) does not fit buffer %s (%llu bytes)", b->section,
                     image.size, b->name, (unsigned long long)b->size);
            free(image.data);
            return fail(h, RT_EXIT_INTERNAL);
        }
        memcpy(h->mapped[i], image.data, image.size);
        free(image.data);
    }
    return 0;
}

/* "; its launches: launch[L] (kernel NAME, grid [0xX, 0xY, 0xZ], PLACE), ... and N more" for
 * submission `submission` from the plan's launch table (launch_rows.h), or "" when the plan has
 * none for it. */
static void submission_launches(const bobc_plan *p, uint64_t submission, char *out, size_t n)
{
    out[0] = 0;
    if (!p->submissions || !p->launches || submission >= p->submission_count)
        return;
    rt_launch_rows(p->launches, p->launch_count, &p->submissions[submission], out, n);
}

void bobc_gpu_fault_line(const bobc_plan *p, const char *host_path, uint32_t step, const char *kind, uint64_t first,
                         uint64_t end, uint64_t submission, const char *gpu_error, char *out, size_t n)
{
    char where[160];
    if (!kind)                  /* the prologue, issued before step 0 */
        snprintf(where, sizeof where, "the pushbuffer's prologue (before step 0 of %u)", p->step_count);
    else if (step >= p->step_count)
        snprintf(where, sizeof where, "after the last of the %u steps, the ring draining", p->step_count);
    else if (end - first == 1)
        snprintf(where, sizeof where, "step %u of %u (%s of submission %llu)", step, p->step_count, kind,
                 (unsigned long long)first);
    else
        snprintf(where, sizeof where, "step %u of %u (%s of submissions %llu..%llu)", step, p->step_count, kind,
                 (unsigned long long)first, (unsigned long long)end - 1);
    if (kind && step < p->step_count && submission < p->submission_count) {
        char launches[RT_LAUNCH_ROWS_BYTES];
        submission_launches(p, submission, launches, sizeof launches);
        snprintf(out, n, "%s: submission %llu (semaphore at GPU VA 0x%llx) did not finish: %s%s; `bobc dump %s` "
                 "lists submission[%llu]'s launches", where, (unsigned long long)submission,
                 (unsigned long long)p->semaphore_va[submission], gpu_error, launches,
                 host_path ? host_path : "HOST", (unsigned long long)submission);
    } else
        snprintf(out, n, "%s: %s", where, gpu_error);
}

/* A GPU failure (rc, the shim's message in h->gpu.error) while step h->step_index ran submissions
 * first..end-1 (`kind`: the step's kind; NULL: the prologue), `submission` not finished: one line
 * naming the step and the submission before the shim's message (the Xid by name, what to do). */
static int gpu_failed(host *h, int rc, const char *kind, uint64_t first, uint64_t end, uint64_t submission)
{
    char line[2048];
    bobc_gpu_fault_line(h->plan, h->path, h->step_index, kind, first, end, submission, h->gpu.error, line,
                        sizeof line);
    report(h, line);
    return rc;
}

static int step_submit(host *h, const bobc_step_submit *s)
{
    const bobc_plan *p = h->plan;
    uint64_t first = h->gp_put, end = s->gp_put;
    if (end > p->submission_count || first > end) {
        snprintf(h->err, sizeof h->err, "the schedule submits up to %llu, the ring holds %u entries",
                 (unsigned long long)end, p->submission_count);
        return fail(h, RT_EXIT_INTERNAL);
    }
    /* The ring runs the entries in order and each ends with a semaphore
     * release after wait-for-idle: issue them all, then wait for each. */
    for (uint64_t i = first; i < end; i++) {
        volatile uint64_t *sem = (volatile uint64_t *)at_or_fail(h, p->semaphore_va[i], 16, "a semaphore");
        if (!sem)
            return fail(h, RT_EXIT_INTERNAL);
        sem[0] = 0;
        sem[1] = 0;
    }
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    int rc;
    for (uint64_t i = first; i < end; i++) {
        uint64_t entry;
        memcpy(&entry, h->ring.data + 8 * i, 8);
        if ((rc = rt_gpu_submit(&h->gpu, entry)))
            return gpu_failed(h, rc, "Submit", first, end, i);
    }
    for (uint64_t i = first; i < end; i++)
        if ((rc = rt_gpu_wait(&h->gpu, at(h, p->semaphore_va[i], 16), p->semaphore_payload, p->wait_timeout_ms)))
            return gpu_failed(h, rc, "Submit", first, end, i);
    h->gp_put = end;
    h->issued += end - first;
    if (h->gpu.cfg.verbose) {
        char what[80];
        snprintf(what, sizeof what, "host: submissions %llu..%llu done", (unsigned long long)first,
                 (unsigned long long)end - 1);
        rt_gpu_trace(&h->gpu, what);
    }
    return 0;
}

/* Fill number s->fill: its value for this invocation's step, into its launch's parameters. */
static int step_scalar_fill(host *h, const bobc_step_scalar_fill *s)
{
    const bobc_plan *p = h->plan;
    if (s->fill >= p->fill_count) {
        snprintf(h->err, sizeof h->err, "the schedule computes fill %u, the plan has %u", s->fill, p->fill_count);
        return fail(h, RT_EXIT_INTERNAL);
    }
    const bobc_fill *f = &p->fills[s->fill];
    uint8_t *at_va = at_or_fail(h, f->va, 4, "a fill's destination");
    if (!at_va)
        return fail(h, RT_EXIT_INTERNAL);
    uint8_t bytes[4];
    if (bobc_fill_step_bytes(f, s->fill, h->step, bytes, h->err, sizeof h->err))
        return fail(h, RT_EXIT_INTERNAL);
    memcpy(at_va, bytes, 4);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    return 0;
}

/* Append or place `bytes` of buffer memory (GPU VA `va`, CPU address `data`) in output `file`. */
static int out_write(host *h, int file, uint64_t offset, const uint8_t *data, uint64_t va, uint64_t bytes)
{
    output *o = &h->out[file];
    if (offset + bytes > o->size) {
        uint8_t *grown = realloc(o->data, offset + bytes);
        if (!grown) {
            snprintf(h->err, sizeof h->err, "out of memory for an output");
            return fail(h, RT_EXIT_INTERNAL);
        }
        memset(grown + o->size, 0, offset + bytes - o->size);
        o->data = grown;
        o->size = offset + bytes;
    }
    copy_out(h, o->data + offset, data, va, bytes);
    return 0;
}

static int step_read(host *h, const bobc_step_read *s)
{
    const bobc_plan *p = h->plan;
    uint8_t *dst = at_or_fail(h, s->host, s->extent, "a read's destination");
    if (!dst)
        return fail(h, RT_EXIT_INTERNAL);
    const uint8_t *src;
    size_t available;
    if (s->file == BOBC_FILE_INPUT) {
        src = h->input;
        available = (size_t)p->input.record_bytes;
    } else if (s->file == BOBC_FILE_CHECKPOINT_IN) {
        src = h->checkpoint_in;
        available = p->contract.payload_bytes;
    } else {
        snprintf(h->err, sizeof h->err, "the schedule reads file %d, which is an output", s->file);
        return fail(h, RT_EXIT_INTERNAL);
    }
    if (s->offset + s->extent > available) {
        snprintf(h->err, sizeof h->err, "the schedule reads %llu byte%s at %llu of a %zu-byte input",
                 (unsigned long long)s->extent, rt_plural(s->extent), (unsigned long long)s->offset, available);
        return fail(h, RT_EXIT_INTERNAL);
    }
    memcpy(dst, src + s->offset, s->extent);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);   /* drain write-combining before the GPU or a copy-out reads it */
    return 0;
}

/* Output `file` takes `extent` bytes at `host_va`: appended, or placed at `offset`. */
static int write_output(host *h, int32_t file, uint64_t host_va, uint64_t extent, int append, uint64_t offset)
{
    const uint8_t *src = at_or_fail(h, host_va, extent, "a write's source");
    if (!src)
        return fail(h, RT_EXIT_INTERNAL);
    if (file <= 0 || file >= BOBC_FILE_COUNT || file == BOBC_FILE_INPUT || file == BOBC_FILE_CHECKPOINT_IN) {
        snprintf(h->err, sizeof h->err, "the schedule writes file %d, which is no output", (int)file);
        return fail(h, RT_EXIT_INTERNAL);
    }
    return out_write(h, file, append ? h->out[file].size : offset, src, host_va, extent);
}

static int step_write(host *h, const bobc_step_write *s)
{
    return write_output(h, s->file, s->host, s->extent, 1, 0);
}

static int step_write_at(host *h, const bobc_step_write_at *s)
{
    return write_output(h, s->file, s->host, s->extent, 0, s->offset);
}

static int step_operation(host *h, const bobc_step_operation *s)
{
    (void)s;
    if (h->args->op == RT_OP_PREDICT)
        h->stopped = 1;
    return 0;
}

static int step_checkpoint_begin(host *h, const bobc_step_checkpoint_begin *s)
{
    (void)s;
    h->out[BOBC_FILE_CHECKPOINT_OUT].size = 0;
    return 0;
}

/* The output checkpoint's envelope, kept for publication with the other outputs. */
static int stage_checkpoint(host *h, uint64_t step, const void *payload)
{
    free(h->checkpoint_staged);
    h->checkpoint_staged = NULL;
    return rt_envelope_build(&h->plan->contract, step, payload, &h->checkpoint_staged, &h->checkpoint_staged_size,
                              h->err);
}

static int step_checkpoint_publish(host *h, const bobc_step_checkpoint_publish *s)
{
    const bobc_plan *p = h->plan;
    output *o = &h->out[BOBC_FILE_CHECKPOINT_OUT];
    if (o->size != p->contract.payload_bytes) {
        snprintf(h->err, sizeof h->err, "the schedule wrote %zu checkpoint byte%s, the contract holds %llu", o->size,
                 rt_plural(o->size), (unsigned long long)p->contract.payload_bytes);
        return fail(h, RT_EXIT_INTERNAL);
    }
    /* An interval's checkpoint is published when its interval ends; the
     * request's last one waits for the other outputs (all published together,
     * the checkpoint last: host_io.h). */
    int rc = h->published + 1 < h->publications
                 ? rt_checkpoint_write(&p->contract, h->args->checkpoint_out, h->step + s->updates, o->data, h->err)
                 : stage_checkpoint(h, h->step + s->updates, o->data);
    if (rc)
        return fail(h, rc);
    if (h->published + 1 < h->publications) {
        h->written = h->published + 1;
        h->written_step = h->step + s->updates;
    }
    h->checkpoint_published = 1;
    h->published++;
    h->published_step = h->step + s->updates;
    return 0;
}

/* ---- the remaining step kinds: input windows, status and timing records, checkpoint files, cursors (docs/host-steps.md) ---- */

static int bad(host *h, const char *what)
{
    snprintf(h->err, sizeof h->err, "%s", what);
    return fail(h, RT_EXIT_INTERNAL);
}

int bobc_input_window(unsigned __int128 offset, uint64_t extent, uint64_t size, const char *what, char *err,
                      size_t err_bytes)
{
    if (offset <= size && extent <= size - (uint64_t)offset)
        return 0;
    char digits[48], *text = digits + sizeof digits - 1;
    *text = 0;
    do
        *--text = (char)('0' + (int)(offset % 10));
    while ((offset /= 10) != 0);
    snprintf(err, err_bytes, "%s: %llu byte%s at %s of a %llu-byte input", what, (unsigned long long)extent,
             rt_plural(extent), text, (unsigned long long)size);
    return RT_EXIT_BAD_INPUT;
}

void bobc_cursor_note(uint64_t step, uint64_t scale, uint64_t base, char *out, size_t n)
{
    unsigned __int128 start = (unsigned __int128)step * scale + base;     /* < 2^128: no wrap */
    char digits[48], *text = digits + sizeof digits - 1;
    *text = 0;
    do
        *--text = (char)('0' + (int)(start % 10));
    while ((start /= 10) != 0);
    snprintf(out, n, " (the cursor started at byte %s: the input checkpoint's step %llu x %llu + %llu; resume from an "
             "earlier checkpoint, or give an input that holds what a run from step %llu reads)", text,
             (unsigned long long)step, (unsigned long long)scale, (unsigned long long)base, (unsigned long long)step);
}

/* `extent` bytes of the input at `offset` (exact: a cursor's) to host address `to` */
static int read_input(host *h, uint64_t to, uint64_t extent, unsigned __int128 offset, const char *what)
{
    uint8_t *dst = at_or_fail(h, to, extent, what);
    if (!dst)
        return fail(h, RT_EXIT_INTERNAL);
    int rc = bobc_input_window(offset, extent, h->plan->input.record_bytes, what, h->err, sizeof h->err);
    if (rc && h->cursor_from && h->step && !strcmp(what, "a read at the cursor")) {
        /* a resumed run's cursor starts past a fresh run's: the input checkpoint's step is why */
        size_t used = strlen(h->err);
        bobc_cursor_note(h->step, h->cursor_from->scale, h->cursor_from->base, h->err + used, sizeof h->err - used);
    }
    if (rc)
        return fail(h, rc);
    memcpy(dst, h->input + (size_t)offset, extent);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    return 0;
}

static int step_read_cyclic(host *h, const bobc_step_read_cyclic *s)
{
    if (!s->count)
        return bad(h, "a cyclic read over zero records");
    return read_input(h, s->host, s->extent,
                      (unsigned __int128)s->offset + (unsigned __int128)(s->index % s->count) * s->record_bytes,
                      "a cyclic read");
}

static int append_bytes(host *h, int32_t file, const uint8_t *data, uint64_t bytes)
{
    if (file <= 0 || file >= BOBC_FILE_COUNT || file == BOBC_FILE_INPUT || file == BOBC_FILE_CHECKPOINT_IN)
        return bad(h, "the schedule appends to a file that is no output");
    return out_write(h, file, h->out[file].size, data, 0, bytes);
}

static int step_write_stat(host *h, const bobc_step_write_stat *s)
{
    return append_bytes(h, s->file, h->stat, h->stat_size);
}

static int step_write_status(host *h, const bobc_step_write_status *s)
{
    uint8_t status[24];
    uint64_t words[3] = { h->published ? h->published_step : h->step, h->issued, h->published };
    for (int i = 0; i < 24; i++)
        status[i] = (uint8_t)(words[i / 8] >> (8 * (i % 8)));
    return append_bytes(h, s->file, status, sizeof status);
}

static int step_write_timestamps(host *h, const bobc_step_write_timestamps *s)
{
    uint8_t word[8];
    for (uint32_t k = 0; k < h->stamp_count; k++) {
        for (int i = 0; i < 8; i++)
            word[i] = (uint8_t)(h->stamps[k] >> (8 * i));
        int rc = append_bytes(h, s->file, word, 8);
        if (rc)
            return rc;
    }
    return 0;
}

static int step_record_stat(host *h, const bobc_step_record_stat *s)
{
    if (s->stat_offset > BOBC_STAT_BYTES || s->extent > BOBC_STAT_BYTES - s->stat_offset)
        return bad(h, "a stat lies past the stat block");
    const uint8_t *src = at_or_fail(h, s->host, s->extent, "a stat's source");
    if (!src)
        return fail(h, RT_EXIT_INTERNAL);
    copy_out(h, h->stat + s->stat_offset, src, s->host, s->extent);
    if (s->stat_offset + s->extent > h->stat_size)
        h->stat_size = (size_t)(s->stat_offset + s->extent);
    return 0;
}

static int step_stamp(host *h, const bobc_step_stamp *s)
{
    if (s->gp_put >= h->plan->submission_count || s->which >= BOBC_STAMP_SLOTS)
        return bad(h, "a stamp names no submission or a slot past the stamp table");
    const volatile uint64_t *sem = (const volatile uint64_t *)at(h, h->plan->semaphore_va[s->gp_put], 16);
    if (!sem)
        return bad(h, "a stamp's semaphore lies in no buffer");
    h->stamps[s->which] = sem[1];
    if (s->which + 1 > h->stamp_count)
        h->stamp_count = (uint32_t)s->which + 1;
    return 0;
}

static int step_fill(host *h, const bobc_step_fill *s)
{
    uint8_t *dst = at_or_fail(h, s->host, s->payload_bytes, "a fill's destination");
    if (!dst)
        return fail(h, RT_EXIT_INTERNAL);
    if (s->payload_bytes)       /* an empty payload is NULL: no memcpy (C11 7.24.1p2) */
        memcpy(dst, s->payload, s->payload_bytes);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    return 0;
}

static int step_assert_word(host *h, const bobc_step_assert_word *s)
{
    const volatile uint8_t *p = at_or_fail(h, s->host, 4, "an asserted word");
    if (!p)
        return fail(h, RT_EXIT_INTERNAL);
    uint32_t w = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    if (w != s->expected) {
        /* the plan's identity bytes on one line: a control character, NUL included, as '?' (as
         * the reference and the simulator show it; docs/native-host.md) */
        char name[RT_ERR_BYTES - 128];     /* room for the words after it: gcc -Wformat-truncation */
        size_t n = s->identity_bytes < sizeof name - 1 ? (size_t)s->identity_bytes : sizeof name - 1;
        for (size_t i = 0; i < n; i++)
            name[i] = rt_control_char(s->identity[i]) ? '?' : (char)s->identity[i];
        name[n] = 0;
        snprintf(h->err, sizeof h->err, "%s: the word at 0x%llx is %u, expected %llu", name,
                 (unsigned long long)s->host, w, (unsigned long long)s->expected);
        return fail(h, RT_EXIT_GPU_FAULT);
    }
    return 0;
}

static int step_bind_input_identity(host *h, const bobc_step_bind_input_identity *s)
{
    if (s->offset > h->plan->input.record_bytes || s->extent > h->plan->input.record_bytes - s->offset)
        return bad(h, "the input identity lies past the input");
    h->identity = h->input + s->offset;
    h->identity_bytes = s->extent;
    return 0;
}

static int step_write_input_identity(host *h, const bobc_step_write_input_identity *s)
{
    (void)s;
    return append_bytes(h, BOBC_FILE_RESULT, h->identity, h->identity_bytes);
}

static int step_begin_checkpoint(host *h, const bobc_step_begin_checkpoint *s)
{
    (void)s;
    h->out[BOBC_FILE_CHECKPOINT_OUT].size = 0;
    return 0;
}

/* Outputs are published atomically (written, synced, renamed, folder synced):
 * a sync before publication has nothing on disk to sync. */
static int step_sync(host *h, const bobc_step_sync *s)
{
    (void)h, (void)s;
    return 0;
}

static int step_data_sync(host *h, const bobc_step_data_sync *s)
{
    (void)h, (void)s;
    return 0;
}

/* The file is finished: it takes no more writes, and is published with the
 * other outputs when the request ends (all or none: host_io.h). */
static int step_close(host *h, const bobc_step_close *s)
{
    if (s->file != BOBC_FILE_PREDICTIONS && s->file != BOBC_FILE_RESULT)
        return bad(h, "the schedule closes a file that is neither the predictions nor the result");
    h->closed[s->file] = 1;
    return 0;
}

/* Ring entry `entry` again: it runs submission `piece`'s pushbuffer segment,
 * whose last method releases piece's semaphore. */
static int step_reissue(host *h, const bobc_step_reissue *s)
{
    const bobc_plan *p = h->plan;
    if (s->piece >= p->submission_count)
        return bad(h, "a reissue names no submission of the plan");
    volatile uint64_t *sem = (volatile uint64_t *)at_or_fail(h, p->semaphore_va[s->piece], 16, "a semaphore");
    if (!sem)
        return fail(h, RT_EXIT_INTERNAL);
    sem[0] = 0;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    int rc = rt_gpu_submit(&h->gpu, s->entry);
    if (!rc)
        rc = rt_gpu_wait(&h->gpu, (void *)sem, p->semaphore_payload, p->wait_timeout_ms);
    if (rc)
        return gpu_failed(h, rc, "Reissue", s->piece, s->piece + 1, s->piece);
    h->issued++;
    return 0;
}

/* cursor + bytes, held at 2^128 - 1 (past any input) rather than wrapping */
static unsigned __int128 saturated_sum(unsigned __int128 cursor, uint64_t bytes)
{
    unsigned __int128 sum = cursor + bytes;
    return sum < cursor ? ~(unsigned __int128)0 : sum;
}

static int step_cursor_from_checkpoint(host *h, const bobc_step_cursor_from_checkpoint *s)
{
    h->cursor = (unsigned __int128)h->step * s->scale + s->base;     /* < 2^128: no wrap */
    h->cursor_from = s;
    return 0;
}

static int step_read_at_cursor(host *h, const bobc_step_read_at_cursor *s)
{
    if (s->file != BOBC_FILE_INPUT)
        return bad(h, "a cursor read of a file other than the input");
    return read_input(h, s->host, s->extent, saturated_sum(h->cursor, s->delta), "a read at the cursor");
}

static int step_cursor_advance(host *h, const bobc_step_cursor_advance *s)
{
    h->cursor = saturated_sum(h->cursor, s->bytes);
    return 0;
}

static uint8_t *commands_memory(void *context, uint64_t va, uint64_t bytes)
{
    return at(context, va, bytes);
}

/* Native commands on the host's buffers (plan_commands.h); a Fail or a fault ends
 * the invocation with its status, nothing published. */
static int step_commands(host *h, const bobc_step_commands *s)
{
    int rc = rt_commands_run(&h->commands, s->commands, s->commands_bytes, h->step_index, commands_memory, h, h->err);
    return rc ? fail(h, rc) : 0;
}

static int step_unknown(host *h, const bobc_step *s)
{
    snprintf(h->err, sizeof h->err, "a step has kind %d, which this host does not know", s->op);
    return fail(h, RT_EXIT_INTERNAL);
}

/* All outputs together, the checkpoint last (host_io.h): a failure publishes none. */
static int publish(host *h)
{
    int rc;
    /* A request that trained nothing hands its state on unchanged. */
    if (!h->checkpoint_published && (rc = stage_checkpoint(h, h->step, h->checkpoint_in)))
        return fail(h, rc);
    if ((rc = rt_io_stage(&h->files, "--predictions", h->out[BOBC_FILE_PREDICTIONS].data,
                           h->out[BOBC_FILE_PREDICTIONS].size, h->err)) ||
        (rc = rt_io_stage(&h->files, "--result", h->out[BOBC_FILE_RESULT].data, h->out[BOBC_FILE_RESULT].size,
                           h->err)) ||
        (rc = rt_io_stage(&h->files, "--checkpoint-out", h->checkpoint_staged, h->checkpoint_staged_size, h->err)) ||
        (rc = rt_io_publish(&h->files, h->err)))
        return fail(h, rc);
    return 0;
}

/* How many checkpoints this request publishes: a predict request stops at
 * its first Operation step. */
static uint64_t count_publications(const bobc_plan *p, int op)
{
    uint64_t n = 0;
    for (uint32_t i = 0; i < p->step_count; i++) {
        if (p->steps[i].op == BOBC_STEP_OPERATION && op == RT_OP_PREDICT)
            break;
        if (p->steps[i].op == BOBC_STEP_CHECKPOINT_PUBLISH)
            n++;
    }
    return n;
}

/* The first Read of the input checkpoint whose tolerateEmpty is 0 among the steps this request
 * carries out (a predict stops at its first Operation step), or -1: with one, a request without
 * --checkpoint is refused before anything is read or written, exit 2 (a usage error: an option
 * the plan needs is missing, as --input is); with none, it starts from the plan's fresh state
 * (specs/Platform/Linux/Nvidia/PlanHost.bob, NvidiaPlanHostStepRead; the same words as
 * bobc.plan.schedule.checkpoint_refusal, which `bobc run --reference` and `bobc sim` say). */
static int64_t checkpoint_required(const bobc_plan *p, int op)
{
    for (uint32_t i = 0; i < p->step_count; i++) {
        const bobc_step *s = &p->steps[i];
        if (s->op == BOBC_STEP_OPERATION && op == RT_OP_PREDICT)
            break;
        if (s->op == BOBC_STEP_READ && s->u.read.file == BOBC_FILE_CHECKPOINT_IN && s->u.read.tolerate_empty == 0)
            return i;
    }
    return -1;
}

/* BOBC_HOST_TIMING=FILE: each submission's semaphore words, after the run (a diagnostic
 * file: never one of the inputs, checked at start-up and again on the file opened here). */
static void write_timing(host *h)
{
    const char *path = getenv("BOBC_HOST_TIMING");
    if (!path || !*path)
        return;
    const char *inputs[] = { h->args->input, h->args->checkpoint_in };
    FILE *f;
    char why[RT_ERR_BYTES];
    if (rt_diag_open("BOBC_HOST_TIMING", path, inputs, 2, &f, why, sizeof why)) {
        rt_report(why);
        return;
    }
    for (uint32_t i = 0; i < h->plan->submission_count; i++) {
        const volatile uint64_t *sem = (const volatile uint64_t *)at(h, h->plan->semaphore_va[i], 16);
        fprintf(f, "%u %llu %llu\n", i, (unsigned long long)(sem ? sem[0] : 0), (unsigned long long)(sem ? sem[1] : 0));
    }
    if (rt_diag_close("BOBC_HOST_TIMING", path, f, why, sizeof why))
        rt_report(why);
}

static int run_steps(host *h)
{
    const bobc_plan *p = h->plan;
    /* From here on a GPU failure is said once, by the step that met it (gpu_failed): the shim
     * keeps its message in h->gpu.error and prints nothing itself. */
    h->gpu.cfg.quiet = 1;
    int rc = rt_gpu_submit(&h->gpu, p->prologue_entry);
    if (rc)
        return gpu_failed(h, rc, NULL, 0, 0, 0);
    for (uint32_t i = 0; i < p->step_count && !h->stopped; i++) {
        const bobc_step *s = &p->steps[i];
        h->step_index = i;
        BOBC_STEP_DISPATCH(h, s, rc, step_unknown)
        if (rc)
            return rc;
    }
    /* Every entry issued has been fetched: GPGet caught up with GPPut.  A
     * schedule with no Submit never waited for the prologue, which the GPU
     * fetches a while after its doorbell: wait for it, up to the plan's timeout. */
    h->step_index = p->step_count;
    if (h->gpu.open && (rc = rt_gpu_drain(&h->gpu, p->wait_timeout_ms)))
        return gpu_failed(h, rc, "drain", 0, 0, 0);   /* rt_gpu_drain named GPGet, GPPut and the notifier */
    return 0;
}

int bobc_host_main(const bobc_plan *p, int argc, char **argv)
{
    static host h;
    memset(&h, 0, sizeof h);
    h.plan = p;
    h.path = argv[0];
    rt_report_as(argv[0]);
    rt_ignore_file_size_signal();      /* a write past `ulimit -f` fails (EFBIG), said, exit 8 */
    if (rt_host_version_asked(argc, argv))
        return rt_host_print_version(stdout);
    rt_args args;
    int rc = rt_parse_args(argc, argv, &args, h.err);
    if (rc) {
        /* one line, ending with where the whole usage is (docs/runtime.md: every failure prints one line) */
        if (!strstr(h.err, "--help"))
            strncat(h.err, " (see --help)", sizeof h.err - strlen(h.err) - 1);
        rt_report(h.err);
        return rc;
    }
    if (args.help) {
        rt_print_usage(argv[0], p->identity, p->input.record_bytes,
                       checkpoint_required(p, RT_OP_PREDICT) >= 0 ? RT_CHECKPOINT_NEEDED
                       : checkpoint_required(p, RT_OP_TRAIN) >= 0 ? RT_CHECKPOINT_TRAIN_NEEDS
                                                                  : RT_CHECKPOINT_OPTIONAL, stdout);
        const char *why = rt_stdout_failure(stdout);
        if (why) {              /* a full disk or a closed stdout: said, exit 8, as bobc's own commands */
            snprintf(h.err, sizeof h.err, "cannot write to stdout: %s", why);
            rt_report(h.err);
            return RT_EXIT_WRITE_FAILED;
        }
        return 0;
    }
    h.args = &args;
    /* The environment's settings next: a misspelt BOBC_GPU_MAPPING, BOBC_GPU_TRACE or
     * NATIVE_TELEMETRY is a usage error on any machine, found before anything is read or any GPU
     * looked for (docs/runtime.md, "Environment"; host_settings.h). */
    static const rt_setting settings[] = RT_PLAN_HOST_SETTINGS;
    if ((rc = rt_settings_judge(settings, (int)(sizeof settings / sizeof *settings), h.err, sizeof h.err)))
        return fail(&h, rc);
    /* A plan whose checkpoint Read says tolerateEmpty 0 starts no request from its fresh state:
     * without --checkpoint, refused before anything is read or written (checkpoint_required). */
    int64_t needs = checkpoint_required(p, args.op);
    if (needs >= 0 && !args.checkpoint_in) {
        snprintf(h.err, sizeof h.err, "missing --checkpoint CHECKPOINT: the schedule's step %lld (read) reads the input "
                 "checkpoint with tolerateEmpty 0, so this plan starts no %s request from its fresh state; pass --checkpoint "
                 "FILE, a checkpoint a run of this plan wrote with --checkpoint-out", (long long)needs,
                 args.op == RT_OP_PREDICT ? "predict" : "train");
        return fail(&h, RT_EXIT_USAGE);
    }
    /* The host's own images first: a copy damaged on its way to the node runs nothing. */
    if ((rc = rt_host_check_images(h.err, sizeof h.err)))
        return fail(&h, rc);
    /* A publication a kill interrupted is completed before anything is read (host_io.h). */
    const char *named[] = { args.predictions, args.result, args.checkpoint_out };
    if ((rc = rt_io_recover(named, 3, h.err)))
        return fail(&h, rc);
    /* Inputs first: a bad record or checkpoint is refused before the GPU is touched. */
    if ((rc = rt_record_read(&p->input, args.input, &h.input, h.err)) ||
        (rc = rt_io_note_input(&h.files, args.input, "input record", RT_EXIT_BAD_INPUT, h.err)))
        return fail(&h, rc);
    h.checkpoint_in = malloc(p->contract.payload_bytes);
    h.mapped = calloc(p->buffer_count, sizeof *h.mapped);
    if (!h.checkpoint_in || !h.mapped) {
        snprintf(h.err, sizeof h.err, "out of memory for the checkpoint");
        rc = fail(&h, RT_EXIT_INTERNAL);
        goto out;
    }
    if (args.checkpoint_in) {
        if ((rc = rt_checkpoint_read(&p->contract, args.checkpoint_in, h.checkpoint_in, &h.step, h.err)) ||
            (rc = rt_io_note_input(&h.files, args.checkpoint_in, "checkpoint", RT_EXIT_BAD_CHECKPOINT, h.err)) ||
            (args.op == RT_OP_TRAIN &&
             (rc = rt_io_check_step_room(h.step, p->contract.updates_per_invocation, args.checkpoint_in, h.err)))) {
            rc = fail(&h, rc);
            goto out;
        }
    } else {
        for (uint32_t c = 0; c < p->contract.chunk_count; c++)
            rt_init_chunk(&p->initializers[c], h.checkpoint_in + c * p->contract.chunk_bytes, p->contract.chunk_bytes);
    }
    /* Outputs next, in publication order: each path checked before the GPU is touched. */
    if ((rc = rt_io_add_output(&h.files, args.predictions, "--predictions", NULL, h.err)) ||
        (rc = rt_io_add_output(&h.files, args.result, "--result", NULL, h.err)) ||
        (rc = rt_io_add_output(&h.files, args.checkpoint_out, "--checkpoint-out", args.checkpoint_in, h.err))) {
        rc = fail(&h, rc);
        goto out;
    }
    /* A diagnostic file the environment asks for is never an input either (diag_file.h). */
    const char *timing = getenv("BOBC_HOST_TIMING"), *inputs[] = { args.input, args.checkpoint_in };
    if (timing && *timing && (rc = rt_diag_check("BOBC_HOST_TIMING", timing, inputs, 2, h.err, sizeof h.err))) {
        rc = fail(&h, rc);
        goto out;
    }
    h.publications = count_publications(p, args.op);
    if (!rt_gpu_present()) {
        snprintf(h.err, sizeof h.err, "no NVIDIA GPU here (/dev/nvidiactl is absent): this host (%s) needs the NVIDIA "
                 "kernel driver and a GPU", p->target);
        rc = fail(&h, RT_EXIT_NO_GPU);
        goto out;
    }
    const rt_target_facts *target = rt_target_named(p->target);
    if (!target) {
        snprintf(h.err, sizeof h.err, "host built for an unknown target %s", p->target);
        rc = fail(&h, RT_EXIT_INTERNAL);
        goto out;
    }
    h.gpu_opened = 1;
    if ((rc = rt_gpu_open(&h.gpu, target, NULL)))
        goto out;
    if ((rc = load_buffers(&h)))
        goto out;
    rt_gpu_trace(&h.gpu, "host: buffers allocated and their images loaded");
    if ((rc = rt_self_section_read(".bobc.gpfifo", &h.ring, h.err, sizeof h.err))) {
        rc = fail(&h, rc);
        goto out;
    }
    if (h.ring.size != 8u * p->submission_count) {
        snprintf(h.err, sizeof h.err, "the ring image holds %zu bytes, the plan %u entries", h.ring.size,
                 p->submission_count);
        rc = fail(&h, RT_EXIT_INTERNAL);
        goto out;
    }
    if ((rc = run_steps(&h)))
        goto out;
    rt_gpu_trace(&h.gpu, "host: schedule carried out");
    write_timing(&h);
    rc = publish(&h);
    rt_gpu_trace(&h.gpu, "host: outputs published; closing");
out:
    if (h.gpu_opened)
        rt_gpu_close(&h.gpu);
    rt_commands_free(&h.commands);
    free(h.checkpoint_staged);
    free(h.ring.data);
    free(h.mapped);
    free(h.checkpoint_in);
    free(h.input);
    for (int i = 0; i < BOBC_FILE_COUNT; i++)
        free(h.out[i].data);
    return rc;
}
