/* GPU bring-up smoke test through the shim (no libcuda):
 *
 *   gpu_smoke [--target sm_90] [--bundle FILE] [--repeat N] [--quiet] [--rm-dma-map]
 *
 *  1. bring the GPU up (ring in system memory; if that fails, in video
 *     memory), timing it; --rm-dma-map adds NV_ESC_RM_MAP_MEMORY_DMA;
 *  2. map a pushbuffer and a semaphore page of system memory at fixed GPU VAs;
 *  3. submit a host semaphore release (64-bit payload, WFI, timestamp) and wait;
 *  4. N more releases, one at a time, for the submit-to-observed round trip;
 *  5. SET_OBJECT of the target's compute class on subchannel 1, then a release;
 *  6. with --bundle (make_launch_bundle.py): load its segments at their VAs,
 *     submit its pushbuffers (prologue, then a V04_00 QMD launch), wait, and
 *     compare the kernel's output with the bundle's expected bytes;
 *  7. wait for a value nobody releases: the timeout is reported (exit code 7);
 *  8. free everything.
 * Exit: 0 all passed, 6 bring-up failed / no GPU, 7 GPU fault or timeout,
 * 1 a result differed.
 */
#include "nv_shim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PB_VA  0x2000000000ull
#define SEM_VA 0x2000010000ull

#define SUBCH_HOST 0
#define SUBCH_COMPUTE 1
#define SEC_OP_INC 1u
#define M_SET_OBJECT 0x0000u
#define M_SEM_ADDR_LO 0x005Cu
#define SEM_EXEC_RELEASE 1u
#define SEM_EXEC_RELEASE_WFI (1u << 20)
#define SEM_EXEC_PAYLOAD_64 (1u << 24)
#define SEM_EXEC_TIMESTAMP (1u << 25)

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* Method header (clc56f.h): ADDRESS 11:0 = method >> 2, SUBCHANNEL 15:13,
 * COUNT 28:16, SEC_OP 31:29. */
static uint32_t mthd(unsigned subch, uint32_t method, unsigned count)
{
    return (SEC_OP_INC << 29) | ((uint32_t)count << 16) | ((uint32_t)subch << 13) | (method >> 2);
}

static unsigned push_release(uint32_t *p, uint64_t sem_va, uint64_t value)
{
    unsigned n = 0;
    p[n++] = mthd(SUBCH_HOST, M_SEM_ADDR_LO, 5);
    p[n++] = (uint32_t)sem_va;
    p[n++] = (uint32_t)(sem_va >> 32);
    p[n++] = (uint32_t)value;
    p[n++] = (uint32_t)(value >> 32);
    p[n++] = SEM_EXEC_RELEASE | SEM_EXEC_RELEASE_WFI | SEM_EXEC_PAYLOAD_64 | SEM_EXEC_TIMESTAMP;
    return n;
}

static int submit_wait(rt_gpu *g, uint32_t *pb, unsigned offset_dwords, unsigned dwords,
                       volatile uint64_t *sem, uint64_t value, double *us)
{
    double t0 = now_us();
    int rc = rt_gpu_submit(g, rt_gpfifo_entry(PB_VA + 4ull * offset_dwords, dwords));
    if (!rc)
        rc = rt_gpu_wait(g, sem, value, 5000);
    if (us)
        *us = now_us() - t0;
    (void)pb;
    return rc;
}

/* ---- launch bundle ---- */
static uint8_t *read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc(n > 0 ? (size_t)n : 1);
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    fclose(f);
    *size = (size_t)n;
    return b;
}

static uint64_t rd64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }
static uint32_t rd32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }

static int run_bundle(rt_gpu *g, const char *path)
{
    size_t size = 0;
    uint8_t *b = read_file(path, &size);
    if (!b || size < 24 || memcmp(b, "BOBLNCH1", 8) != 0) {
        fprintf(stderr, "gpu_smoke: bundle %s: unreadable or not a launch bundle\n", path);
        free(b);
        return 1;
    }
    uint32_t nseg = rd32(b + 8), nsub = rd32(b + 12), nchk = rd32(b + 16);
    size_t off = 24;
    for (uint32_t i = 0; i < nseg; i++) {
        uint64_t va = rd64(b + off), alloc = rd64(b + off + 8), n = rd64(b + off + 16);
        off += 24;
        void *host = NULL;
        int rc = rt_gpu_alloc_at(g, va, alloc, RT_MEM_SYSTEM, &host);
        if (rc) {
            free(b);
            return rc;
        }
        memset(host, 0, alloc);
        memcpy(host, b + off, n);
        off += (n + 7) & ~7ull;
        printf("bundle segment %u: %llu bytes at GPU VA 0x%llx (%llu of data)\n", i, (unsigned long long)alloc,
               (unsigned long long)va, (unsigned long long)n);
    }
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    for (uint32_t i = 0; i < nsub; i++) {
        uint64_t va = rd64(b + off), sem_va = rd64(b + off + 16), value = rd64(b + off + 24);
        uint32_t dwords = rd32(b + off + 8);
        off += 32;
        volatile uint64_t *sem = NULL;
        for (int k = 0; k < RT_GPU_MAX_MEMS; k++)
            if (g->mems[k].handle && sem_va >= g->mems[k].gpu_va && sem_va < g->mems[k].gpu_va + g->mems[k].size)
                sem = (volatile uint64_t *)((uint8_t *)g->mems[k].cpu + (sem_va - g->mems[k].gpu_va));
        if (!sem) {
            fprintf(stderr, "gpu_smoke: bundle semaphore 0x%llx is in no segment\n", (unsigned long long)sem_va);
            free(b);
            return 1;
        }
        double t0 = now_us();
        int rc = rt_gpu_submit(g, rt_gpfifo_entry(va, dwords));
        if (!rc)
            rc = rt_gpu_wait(g, sem, value, 5000);
        if (rc) {
            fprintf(stderr, "gpu_smoke: bundle submission %u (%u dwords at 0x%llx) failed\n", i, dwords,
                    (unsigned long long)va);
            free(b);
            return rc;
        }
        printf("bundle submission %u: %u dwords at GPU VA 0x%llx, semaphore %llu after %.1f us (GPU timestamp %llu)\n",
               i, dwords, (unsigned long long)va, (unsigned long long)sem[0], now_us() - t0,
               (unsigned long long)sem[1]);
    }
    int bad = 0;
    for (uint32_t i = 0; i < nchk; i++) {
        uint64_t va = rd64(b + off), n = rd64(b + off + 8);
        off += 16;
        const uint8_t *want = b + off;
        off += (n + 7) & ~7ull;
        const uint8_t *got = NULL;
        for (int k = 0; k < RT_GPU_MAX_MEMS; k++)
            if (g->mems[k].handle && va >= g->mems[k].gpu_va && va + n <= g->mems[k].gpu_va + g->mems[k].size)
                got = (const uint8_t *)g->mems[k].cpu + (va - g->mems[k].gpu_va);
        if (!got || memcmp(got, want, n) != 0) {
            size_t first = 0;
            while (got && first < n && got[first] == want[first])
                first++;
            printf("bundle check %u: FAIL at GPU VA 0x%llx: first difference at byte %zu (got 0x%02x, want 0x%02x)\n",
                   i, (unsigned long long)va, first, got ? got[first] : 0, want[first]);
            if (got) {
                printf("  got words:");
                for (int w = 0; w < 8; w++)
                    printf(" %u", rd32(got + 4 * w));
                printf("\n");
            }
            bad = 1;
        } else {
            printf("bundle check %u: %llu bytes at GPU VA 0x%llx match (kernel output correct)\n", i,
                   (unsigned long long)n, (unsigned long long)va);
        }
    }
    free(b);
    return bad;
}

int main(int argc, char **argv)
{
    const char *target_name = "sm_90", *bundle = NULL;
    int repeat = 100, verbose = 1, mapping = RT_GPU_MAPPING_AUTO;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--target") && i + 1 < argc) target_name = argv[++i];
        else if (!strcmp(argv[i], "--bundle") && i + 1 < argc) bundle = argv[++i];
        else if (!strcmp(argv[i], "--repeat") && i + 1 < argc) repeat = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--quiet")) verbose = 0;
        else if (!strcmp(argv[i], "--mapping") && i + 1 < argc && !strcmp(argv[i + 1], "rm")) mapping = RT_GPU_MAPPING_RM, i++;
        else if (!strcmp(argv[i], "--mapping") && i + 1 < argc && !strcmp(argv[i + 1], "uvm")) mapping = RT_GPU_MAPPING_UVM, i++;
        else {
            fprintf(stderr, "usage: gpu_smoke [--target sm_90] [--bundle FILE] [--repeat N] [--quiet] [--mapping rm|uvm]\n");
            return RT_EXIT_USAGE;
        }
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    const rt_target_facts *t = rt_target_named(target_name);
    if (!t) {
        fprintf(stderr, "gpu_smoke: unknown target %s\n", target_name);
        return RT_EXIT_USAGE;
    }
    if (!rt_gpu_present()) {
        fprintf(stderr, "gpu_smoke: no GPU: /dev/nvidiactl does not exist\n");
        return RT_EXIT_NO_GPU;
    }

    static rt_gpu g;
    const struct { int location; const char *what; } tries[] = {
        { RT_MEM_SYSTEM, "ring+USERD in system memory" },
        { RT_MEM_VIDEO, "ring+USERD in video memory" },
    };
    int rc = RT_EXIT_NO_GPU, chosen = -1;
    double open_us = 0;
    for (unsigned k = 0; k < sizeof tries / sizeof tries[0] && rc; k++) {
        rt_gpu_config cfg = { .channel_location = tries[k].location, .mapping = mapping, .verbose = verbose };
        printf("== bring-up attempt %u: %s, mapping %s, target %s\n", k + 1, tries[k].what,
               mapping == RT_GPU_MAPPING_UVM ? "uvm" : mapping == RT_GPU_MAPPING_RM ? "rm" : "auto", t->name);
        double t0 = now_us();
        rc = rt_gpu_open(&g, t, &cfg);
        open_us = now_us() - t0;
        if (rc) {
            printf("bring-up attempt %u failed (%d): %s\n", k + 1, rc, g.error);
            /* a refused driver or a missing class will not change with the layout */
            if (strstr(g.error, "refusing") || strstr(g.error, "no GPU"))
                break;
        } else {
            chosen = (int)k;
        }
    }
    if (rc) {
        printf("gpu_smoke: FAIL: bring-up\n");
        return rc;
    }
    printf("bring-up OK with attempt %d in %.1f ms: driver %s, GPU PCI device 0x%04x, /dev/nvidia%u, token 0x%x\n",
           chosen + 1, open_us / 1e3, g.driver_version, g.pci_device_id, g.minor, g.work_submit_token);

    uint32_t *pb = NULL;
    volatile uint64_t *sem = NULL;
    void *p = NULL;
    if ((rc = rt_gpu_alloc_at(&g, PB_VA, 0x10000, RT_MEM_SYSTEM, &p)))
        goto out;
    pb = p;
    if ((rc = rt_gpu_alloc_at(&g, SEM_VA, 0x1000, RT_MEM_SYSTEM, &p)))
        goto out;
    sem = p;
    memset((void *)sem, 0, 0x1000);
    printf("pushbuffer at GPU VA 0x%llx (CPU %p), semaphore at GPU VA 0x%llx (CPU %p)\n", PB_VA, (void *)pb,
           SEM_VA, (void *)sem);

    /* 3. one semaphore release, 64-bit payload above 2^32 */
    printf("== semaphore release\n");
    uint64_t value = 0x100000001ull;
    unsigned n = push_release(pb, SEM_VA, value);
    double us;
    if ((rc = submit_wait(&g, pb, 0, n, sem, value, &us)))
        goto out;
    printf("semaphore release: payload 0x%llx observed after %.1f us, GPU timestamp %llu ns\n",
           (unsigned long long)sem[0], us, (unsigned long long)sem[1]);
    if (sem[0] != value) {
        printf("gpu_smoke: FAIL: semaphore holds 0x%llx, expected 0x%llx\n", (unsigned long long)sem[0],
               (unsigned long long)value);
        rc = 1;
        goto out;
    }

    /* 4. round trips */
    printf("== %d round trips\n", repeat);
    double total = 0, best = 1e30, worst = 0;
    uint64_t ts0 = sem[1];
    for (int i = 0; i < repeat; i++) {
        value++;
        unsigned off = 64 + (unsigned)(i % 64) * 8;
        n = push_release(pb + off, SEM_VA, value);
        if ((rc = submit_wait(&g, pb, off, n, sem, value, &us)))
            goto out;
        total += us;
        best = us < best ? us : best;
        worst = us > worst ? us : worst;
    }
    if (repeat > 0)
        printf("round trip (submit -> semaphore seen by the CPU): mean %.2f us, min %.2f us, max %.2f us over %d; "
               "GPU timestamps span %llu ns\n", total / repeat, best, worst, repeat,
               (unsigned long long)(sem[1] - ts0));

    /* 5. bind the compute class on subchannel 1 */
    printf("== SET_OBJECT %s (0x%04x) on subchannel %d\n", t->compute_class_name, t->compute_class, SUBCH_COMPUTE);
    {
        unsigned off = 1024;
        n = 0;
        pb[off + n++] = mthd(SUBCH_COMPUTE, M_SET_OBJECT, 1);
        pb[off + n++] = t->compute_class;
        value++;
        n += push_release(pb + off + n, SEM_VA, value);
        if ((rc = submit_wait(&g, pb, off, n, sem, value, &us)))
            goto out;
        char err[256];
        if (rt_gpu_channel_error(&g, err, sizeof err)) {
            printf("gpu_smoke: FAIL: %s\n", err);
            rc = RT_EXIT_GPU_FAULT;
            goto out;
        }
        printf("compute object accepted: semaphore %llu after %.1f us, error notifier clean\n",
               (unsigned long long)sem[0], us);
    }

    /* 6. a real kernel launch */
    if (bundle) {
        printf("== launch bundle %s\n", bundle);
        double t0 = now_us();
        rc = run_bundle(&g, bundle);
        printf("launch bundle %s in %.1f ms\n", rc ? "FAILED" : "passed", (now_us() - t0) / 1e3);
        if (rc)
            goto out;
    } else {
        printf("== launch bundle: none given (--bundle FILE from make_launch_bundle.py)\n");
    }

    /* 7. the timeout path: a value nobody releases, 100 ms */
    if (!rc) {
        printf("== timeout path (a semaphore value never released, 100 ms)\n");
        double t0 = now_us();
        int trc = rt_gpu_wait(&g, sem, sem[0] + 1000, 100);
        if (trc == RT_EXIT_GPU_FAULT) {
            printf("timeout reported after %.1f ms with exit code %d, as documented\n", (now_us() - t0) / 1e3, trc);
        } else {
            printf("gpu_smoke: FAIL: timeout path returned %d\n", trc);
            rc = 1;
        }
    }

out:;
    char err[256];
    if (rt_gpu_channel_error(&g, err, sizeof err))
        printf("%s\n", err);
    double t0 = now_us();
    rt_gpu_close(&g);
    printf("teardown in %.1f ms\n", (now_us() - t0) / 1e3);
    printf("gpu_smoke: %s (exit %d)\n", rc ? "FAIL" : "PASS", rc);
    return rc;
}
