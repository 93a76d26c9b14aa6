/* The driver shim (nv_shim.h): raw ioctls, no libcuda.
 *
 * Bring-up order: ../shared/docs/nvidia-driver-facts.md section 1 (the order
 * tinygrad's NVDevice uses), written out in docs/runtime.md.  Struct layouts
 * live in nv_rm.h, nv_uvm.h, nv_ctrl.h; class IDs and the per-target table
 * in nv_classes.h / nv_targets.c.
 */
#define _GNU_SOURCE
#include "nv_shim.h"

#include "host_settings.h"
#include "nv_ctrl.h"
#include "nv_rm.h"
#include "nv_status.h"
#include "nv_uvm.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

#define PAGE_4K 4096ull
#define PAGE_2M 0x200000ull
#define HANDLE_BASE 0xB0B00001u

/* ------------------------------------------------------------------ */
/* messages                                                            */

static int fail(rt_gpu *g, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(rt_gpu *g, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g->error, sizeof g->error, fmt, ap);
    va_end(ap);
    if (!g->cfg.quiet)
        fprintf(stderr, "rt-gpu: error: %s\n", g->error);
    return code;
}

static void warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("rt-gpu: warning: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static void step(const rt_gpu *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void step(const rt_gpu *g, const char *fmt, ...)
{
    if (!g->cfg.verbose)
        return;
    va_list ap;
    va_start(ap, fmt);
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    double ms = ts.tv_sec * 1e3 + ts.tv_nsec / 1e6 - g->opened_ms;
    fprintf(stderr, "rt-gpu: %9.3f ms  ", ms);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

void rt_gpu_trace(const rt_gpu *g, const char *what)
{
    step(g, "%s", what);
}

/* Result of one ioctl: errno (ioctl itself failed) or the NV_STATUS it carried. */
typedef struct {
    int os_errno;
    NvStatus status;
} nv_result;

static int nv_ok(nv_result r) { return r.os_errno == 0 && r.status == NV_OK; }

static const char *nv_why(nv_result r, char *buf, size_t n)
{
    if (r.os_errno)
        snprintf(buf, n, "ioctl failed: %s", strerror(r.os_errno));
    else
        snprintf(buf, n, "%s", nv_status_name(r.status));
    return buf;
}

/* BOBC_GPU_TRACE=ioctl: every ioctl as well, with its start (ms since rt_gpu_open)
 * and duration, named by escape; RM_ALLOC with its class, RM_CONTROL with its
 * command, RM_FREE with its handle.  Process-wide: the shim drives one GPU. */
static int trace_ioctls;
static double trace_origin_ms;

static double clock_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void trace_ioctl(unsigned long request, const void *arg, double start, double end, int rc)
{
    char what[64];
    unsigned nr = request & 0xFFu;
    const uint32_t *w = arg;
    if (((request >> 8) & 0xFFu) != 'F')
        snprintf(what, sizeof what, "UVM ioctl %lu", request);
    else if (nr == NV_ESC_RM_ALLOC)
        snprintf(what, sizeof what, "RM_ALLOC class 0x%04x", w[3]);
    else if (nr == NV_ESC_RM_CONTROL)
        snprintf(what, sizeof what, "RM_CONTROL cmd 0x%08x", w[2]);
    else if (nr == NV_ESC_RM_FREE)
        snprintf(what, sizeof what, "RM_FREE handle 0x%08x", w[2]);
    else if (nr == NV_ESC_RM_MAP_MEMORY)
        snprintf(what, sizeof what, "RM_MAP_MEMORY");
    else if (nr == NV_ESC_RM_UNMAP_MEMORY)
        snprintf(what, sizeof what, "RM_UNMAP_MEMORY");
    else if (nr == NV_ESC_RM_MAP_MEMORY_DMA)
        snprintf(what, sizeof what, "RM_MAP_MEMORY_DMA");
    else if (nr == NV_ESC_RM_UNMAP_MEMORY_DMA)
        snprintf(what, sizeof what, "RM_UNMAP_MEMORY_DMA");
    else if (nr == NV_ESC_CARD_INFO)
        snprintf(what, sizeof what, "CARD_INFO");
    else if (nr == NV_ESC_REGISTER_FD)
        snprintf(what, sizeof what, "REGISTER_FD");
    else
        snprintf(what, sizeof what, "escape 0x%02x", nr);
    fprintf(stderr, "rt-gpu: %9.3f ms    ioctl %-32s %8.3f ms%s\n", start - trace_origin_ms, what, end - start,
            rc ? " (failed)" : "");
}

/* EINTR/EAGAIN are retried a bounded number of times: a driver that keeps
 * answering EAGAIN is reported (as that errno), never waited on forever. */
#define XIOCTL_RETRIES 1000
static int xioctl(int fd, unsigned long request, void *arg)
{
    int rc, tries = 0;
    double start = trace_ioctls ? clock_ms() : 0;
    do {
        rc = ioctl(fd, request, arg);
    } while (rc < 0 && (errno == EINTR || errno == EAGAIN) && ++tries < XIOCTL_RETRIES);
    int e = rc < 0 ? errno : 0;
    if (trace_ioctls)
        trace_ioctl(request, arg, start, clock_ms(), e);
    return e;
}

/* ------------------------------------------------------------------ */
/* RM primitives                                                       */

/* Parameter blocks reached through a pointer (RM_ALLOC, RM_CONTROL) and UVM
 * blocks travel in a zeroed buffer PAD bytes longer than our struct: RM_ALLOC
 * reads the class's own parameter size whatever paramsSize says (facts
 * section 2), and a UVM block of another branch may be longer, so a layout
 * shorter than the driver's reads zeros and writes into the pad, never past
 * our struct. */
#define PAD 4096u

static void *padded(const void *params, size_t size)
{
    void *b = calloc(1, size + PAD);
    if (b && params && size)
        memcpy(b, params, size);
    return b;
}

static void unpad(void *buf, void *params, size_t size)
{
    if (buf && params && size)
        memcpy(params, buf, size);
    free(buf);
}

static nv_result rm_alloc(rt_gpu *g, uint32_t parent, uint32_t *handle, uint32_t cls,
                          void *params, uint32_t params_size)
{
    void *buf = params ? padded(params, params_size) : NULL;
    if (params && !buf)
        return (nv_result){ ENOMEM, 0 };
    rt_nvos21 p;
    memset(&p, 0, sizeof p);
    p.hRoot = g->h_client;
    p.hObjectParent = parent;
    p.hObjectNew = handle ? *handle : 0;
    p.hClass = cls;
    p.pAllocParms = (uint64_t)(uintptr_t)buf;
    p.paramsSize = params_size;
    nv_result r = { xioctl(g->fd_ctl, NV_IOWR(NV_ESC_RM_ALLOC, sizeof p), &p), 0 };
    unpad(buf, params, params_size);
    if (!r.os_errno) {
        r.status = p.status;
        if (p.status == NV_OK && handle)
            *handle = p.hObjectNew;
    }
    return r;
}

static uint32_t new_handle(rt_gpu *g) { return g->next_handle++; }

static nv_result rm_control(rt_gpu *g, uint32_t object, uint32_t cmd, void *params, uint32_t size)
{
    rt_nvos54 p;
    memset(&p, 0, sizeof p);
    p.hClient = g->h_client;
    p.hObject = object;
    p.cmd = cmd;
    void *buf = padded(params, size);
    if (!buf)
        return (nv_result){ ENOMEM, 0 };
    p.params = (uint64_t)(uintptr_t)buf;
    p.paramsSize = size;
    nv_result r = { xioctl(g->fd_ctl, NV_IOWR(NV_ESC_RM_CONTROL, sizeof p), &p), 0 };
    unpad(buf, params, size);
    if (!r.os_errno)
        r.status = p.status;
    return r;
}

static nv_result rm_free(rt_gpu *g, uint32_t parent, uint32_t handle)
{
    rt_nvos00 p;
    memset(&p, 0, sizeof p);
    p.hRoot = g->h_client;
    p.hObjectParent = parent;
    p.hObjectOld = handle;
    nv_result r = { xioctl(g->fd_ctl, NV_IOWR(NV_ESC_RM_FREE, sizeof p), &p), 0 };
    if (!r.os_errno)
        r.status = p.status;
    return r;
}

/* Free and report; used on every unwinding path. */
static void free_object(rt_gpu *g, uint32_t parent, uint32_t *handle, const char *what)
{
    if (!*handle)
        return;
    nv_result r = rm_free(g, parent, *handle);
    char why[96];
    if (!nv_ok(r))
        warn("NV_ESC_RM_FREE of %s (handle 0x%x): %s", what, *handle, nv_why(r, why, sizeof why));
    *handle = 0;
}

#define uvm_ioctl(g, cmd, params, status_field) \
    uvm_ioctl_sized((g), (cmd), (params), sizeof *(params), (status_field))

static nv_result uvm_ioctl_sized(rt_gpu *g, unsigned long cmd, void *params, size_t size, uint32_t *status_field)
{
    void *buf = padded(params, size);
    if (!buf)
        return (nv_result){ ENOMEM, 0 };
    nv_result r = { xioctl(g->fd_uvm, cmd, buf), 0 };
    unpad(buf, params, size);
    if (!r.os_errno)
        r.status = *status_field;
    return r;
}

/* open; for /dev/nvidiaN also NV_ESC_REGISTER_FD against the control fd. */
static int open_dev_registered(rt_gpu *g, const char *path, int *out)
{
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return fail(g, RT_EXIT_NO_GPU, "cannot open %s: %s", path, strerror(errno));
    if (strcmp(path, "/dev/nvidiactl") == 0) {   /* control nodes are not registered */
        *out = fd;
        return 0;
    }
    rt_nv_register_fd reg = { g->fd_ctl };
    int e = xioctl(fd, NV_IOWR(NV_ESC_REGISTER_FD, sizeof reg), &reg);
    if (e) {
        close(fd);
        return fail(g, RT_EXIT_NO_GPU, "NV_ESC_REGISTER_FD on %s failed: %s", path, strerror(e));
    }
    *out = fd;
    return 0;
}

static void dev_path(const rt_gpu *g, char *buf, size_t n)
{
    snprintf(buf, n, "/dev/nvidia%u", g->minor);
}

/* NV_ESC_RM_MAP_MEMORY then mmap(fd, 0).  `fd_path` names the node the
 * mapping goes through: /dev/nvidiactl for system memory, /dev/nvidiaN for
 * video memory and usermode (a fresh, registered descriptor each time). */
static int map_cpu(rt_gpu *g, uint32_t h_parent, uint32_t h_memory, uint64_t size, uint32_t flags,
                   const char *fd_path, void *want, const char *what,
                   void **out, int *out_fd, uint64_t *out_linear)
{
    int fd = -1;
    int rc = open_dev_registered(g, fd_path, &fd);
    if (rc)
        return rc;
    rt_nvos33_with_fd p;
    memset(&p, 0, sizeof p);
    p.hClient = g->h_client;
    p.hDevice = h_parent;
    p.hMemory = h_memory;
    p.offset = 0;
    p.length = size;
    p.flags = flags;
    p.fd = fd;
    nv_result r = { xioctl(g->fd_ctl, NV_IOWR(NV_ESC_RM_MAP_MEMORY, sizeof p), &p), 0 };
    if (!r.os_errno)
        r.status = p.status;
    if (!nv_ok(r)) {
        char why[96];
        close(fd);
        return fail(g, RT_EXIT_NO_GPU, "NV_ESC_RM_MAP_MEMORY of %s (%llu bytes through %s, flags 0x%x): %s",
                    what, (unsigned long long)size, fd_path, flags, nv_why(r, why, sizeof why));
    }
    void *ptr = MAP_FAILED;
    if (want) {
        ptr = mmap(want, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED_NOREPLACE, fd, 0);
        if (ptr != MAP_FAILED && ptr != want) {
            munmap(ptr, size);
            ptr = MAP_FAILED;
        }
    }
    if (ptr == MAP_FAILED)
        ptr = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (ptr == MAP_FAILED) {
        int e = errno;
        rt_nvos34 u;
        memset(&u, 0, sizeof u);
        u.hClient = g->h_client;
        u.hDevice = h_parent;
        u.hMemory = h_memory;
        u.pLinearAddress = p.pLinearAddress;
        xioctl(g->fd_ctl, NV_IOWR(NV_ESC_RM_UNMAP_MEMORY, sizeof u), &u);
        close(fd);
        return fail(g, RT_EXIT_NO_GPU, "mmap of %s (%llu bytes through %s): %s", what,
                    (unsigned long long)size, fd_path, strerror(e));
    }
    *out = ptr;
    *out_fd = fd;
    *out_linear = p.pLinearAddress;
    return 0;
}

static void unmap_cpu(rt_gpu *g, uint32_t h_parent, uint32_t h_memory, void **ptr, uint64_t size,
                      int *fd, uint64_t linear, const char *what)
{
    if (*ptr) {
        munmap(*ptr, size);
        rt_nvos34 u;
        memset(&u, 0, sizeof u);
        u.hClient = g->h_client;
        u.hDevice = h_parent;
        u.hMemory = h_memory;
        u.pLinearAddress = linear;
        nv_result r = { xioctl(g->fd_ctl, NV_IOWR(NV_ESC_RM_UNMAP_MEMORY, sizeof u), &u), 0 };
        if (!r.os_errno)
            r.status = u.status;
        char why[96];
        if (!nv_ok(r))
            warn("NV_ESC_RM_UNMAP_MEMORY of %s: %s", what, nv_why(r, why, sizeof why));
        *ptr = NULL;
    }
    if (*fd >= 0) {
        close(*fd);
        *fd = -1;
    }
}

/* ------------------------------------------------------------------ */
/* memory                                                              */

static void mem_release(rt_gpu *g, rt_gpu_mem *m)
{
    char why[96];
    if (!m->handle)
        return;
    if (m->range_created) {
        rt_uvm_free f;
        memset(&f, 0, sizeof f);
        f.base = m->gpu_va;
        f.length = m->size;
        nv_result r = uvm_ioctl(g, UVM_FREE, &f, &f.rmStatus);
        if (!nv_ok(r))
            warn("UVM_FREE of the range at GPU VA 0x%llx: %s", (unsigned long long)m->gpu_va,
                 nv_why(r, why, sizeof why));
        m->range_created = 0;
    }
    if (m->rm_dma_mapped) {
        rt_nvos47 u;
        memset(&u, 0, sizeof u);
        u.hClient = g->h_client;
        u.hDevice = g->h_device;
        u.hDma = m->virt_handle;
        u.hMemory = m->handle;
        u.dmaOffset = m->gpu_va;
        u.size = m->size;
        nv_result r = { xioctl(g->fd_ctl, NV_IOWR(NV_ESC_RM_UNMAP_MEMORY_DMA, sizeof u), &u), 0 };
        if (!r.os_errno)
            r.status = u.status;
        if (!nv_ok(r))
            warn("NV_ESC_RM_UNMAP_MEMORY_DMA of GPU VA 0x%llx: %s", (unsigned long long)m->gpu_va,
                 nv_why(r, why, sizeof why));
        m->rm_dma_mapped = 0;
    }
    free_object(g, g->h_device, &m->virt_handle, "NV50_MEMORY_VIRTUAL");
    unmap_cpu(g, g->h_device, m->handle, &m->cpu, m->size, &m->map_fd, m->rm_linear, "memory");
    free_object(g, g->h_device, &m->handle, "memory");
    memset(m, 0, sizeof *m);
    m->map_fd = -1;
}

static int map_gpu_rm(rt_gpu *g, rt_gpu_mem *m, const char *kind);
static int map_gpu_uvm(rt_gpu *g, rt_gpu_mem *m, const char *kind);

int rt_gpu_alloc_at(rt_gpu *g, uint64_t gpu_va, uint64_t size, int location, void **host_ptr)
{
    char why[96];
    if (!g->h_vaspace || (g->mapping == RT_GPU_MAPPING_UVM && !g->uvm_vaspace_registered))
        return fail(g, RT_EXIT_INTERNAL, "rt_gpu_alloc_at before the VA space is ready");
    if (gpu_va % PAGE_4K || size == 0)
        return fail(g, RT_EXIT_INTERNAL, "rt_gpu_alloc_at: GPU VA 0x%llx must be 4 KiB aligned and size nonzero",
                    (unsigned long long)gpu_va);
    size = (size + PAGE_4K - 1) & ~(PAGE_4K - 1);
    /* Video memory in 2 MiB pages where it can be: a buffer that a kernel streams through
     * (a GiB and more read once a submission) misses the GPU's TLBs on nearly every 4 KiB
     * page.  The pages' size must divide the VA and the size (both mappings map an allocation
     * in its own page size). */
    int huge = location == RT_MEM_VIDEO && !g->cfg.video_small_pages && gpu_va % PAGE_2M == 0 && size % PAGE_2M == 0;
    rt_gpu_mem *m = NULL;
    for (int i = 0; i < RT_GPU_MAX_MEMS; i++) {
        rt_gpu_mem *o = &g->mems[i];
        if (o->handle && rt_ranges_overlap(gpu_va, size, o->gpu_va, o->size))
            return fail(g, RT_EXIT_INTERNAL, "GPU VA range 0x%llx+0x%llx overlaps an allocation at 0x%llx+0x%llx",
                        (unsigned long long)gpu_va, (unsigned long long)size,
                        (unsigned long long)o->gpu_va, (unsigned long long)o->size);
        if (!o->handle && !m)
            m = o;
    }
    if (!m)
        return fail(g, RT_EXIT_INTERNAL, "more than %d GPU allocations", RT_GPU_MAX_MEMS);

    const char *kind = location == RT_MEM_VIDEO ? "video memory" : "system memory";
    memset(m, 0, sizeof *m);
    m->map_fd = -1;
    m->location = location;
    m->gpu_va = gpu_va;
    m->size = size;
    m->huge_pages = huge;

    /* The allocation and its CPU mapping, in the ways known to work, first
     * one first: system memory as Mesa NVK's NVRM backend allocates it
     * (4 KiB pages, PCI, cached) and mapped through /dev/nvidiactl with the
     * flags CUDA passes; then as tinygrad does (notifier type, GPU-uncached,
     * flags 0); video memory contiguous and mapped through BAR1. */
    struct variant {
        uint32_t type, attr, attr2, flags, map_flags;
        int through_ctl;
    };
    const uint32_t tg_flags = NVOS32_ALLOC_FLAGS_MAP_NOT_REQUIRED | NVOS32_ALLOC_FLAGS_MEMORY_HANDLE_PROVIDED |
                              NVOS32_ALLOC_FLAGS_ALIGNMENT_FORCE | NVOS32_ALLOC_FLAGS_IGNORE_BANK_PLACEMENT;
    const struct variant sys[] = {
        { NVOS32_TYPE_IMAGE,
          NVOS32_ATTR_PAGE_SIZE_4KB | NVOS32_ATTR_LOCATION_PCI | NVOS32_ATTR_COHERENCY_CACHED, 0,
          NVOS32_ALLOC_FLAGS_ALIGNMENT_FORCE,
          (NVOS33_FLAGS_CACHING_TYPE_DEFAULT << NVOS33_FLAGS_CACHING_TYPE_SHIFT) | NVOS33_FLAGS_MAPPING_DIRECT, 1 },
        { NVOS32_TYPE_NOTIFIER, NVOS32_ATTR_PHYSICALITY_ALLOW_NONCONTIGUOUS | NVOS32_ATTR_LOCATION_PCI,
          NVOS32_ATTR2_GPU_CACHEABLE_NO | NVOS32_ATTR2_ZBC_PREFER_NO_ZBC, tg_flags, 0, 1 },
        { NVOS32_TYPE_IMAGE,
          NVOS32_ATTR_PAGE_SIZE_4KB | NVOS32_ATTR_LOCATION_PCI | NVOS32_ATTR_COHERENCY_CACHED, 0,
          NVOS32_ALLOC_FLAGS_ALIGNMENT_FORCE, 0, 0 },
    };
    const struct variant vid[] = {
        { NVOS32_TYPE_IMAGE,
          (huge ? NVOS32_ATTR_PAGE_SIZE_HUGE : NVOS32_ATTR_PAGE_SIZE_4KB) | NVOS32_ATTR_LOCATION_VIDMEM |
          NVOS32_ATTR_COHERENCY_UNCACHED | NVOS32_ATTR_PHYSICALITY_CONTIGUOUS,
          huge ? NVOS32_ATTR2_PAGE_SIZE_HUGE_2MB : 0,
          NVOS32_ALLOC_FLAGS_ALIGNMENT_FORCE | NVOS32_ALLOC_FLAGS_PERSISTENT_VIDMEM,
          (2u << NVOS33_FLAGS_CACHING_TYPE_SHIFT) | (2u << 15) /* WRITECOMBINED, REFLECTED */, 0 },
        { NVOS32_TYPE_IMAGE,
          (huge ? NVOS32_ATTR_PAGE_SIZE_HUGE : 0) | NVOS32_ATTR_PHYSICALITY_CONTIGUOUS | NVOS32_ATTR_LOCATION_VIDMEM,
          NVOS32_ATTR2_GPU_CACHEABLE_YES | NVOS32_ATTR2_ZBC_PREFER_NO_ZBC | (huge ? NVOS32_ATTR2_PAGE_SIZE_HUGE_2MB : 0),
          tg_flags | NVOS32_ALLOC_FLAGS_PERSISTENT_VIDMEM,
          0x1010000u, 0 },
    };
    const struct variant *vs = location == RT_MEM_VIDEO ? vid : sys;
    unsigned nv = location == RT_MEM_VIDEO ? sizeof vid / sizeof vid[0] : sizeof sys / sizeof sys[0];
    uint32_t cls = location == RT_MEM_VIDEO ? NV01_MEMORY_LOCAL_USER : NV01_MEMORY_SYSTEM;
    const char *cls_name = location == RT_MEM_VIDEO ? "NV01_MEMORY_LOCAL_USER" : "NV01_MEMORY_SYSTEM";
    int rc = RT_EXIT_NO_GPU;
    for (unsigned k = 0; k < nv && rc; k++) {
        rt_nv_memory_alloc a;
        memset(&a, 0, sizeof a);
        a.owner = g->h_client;
        a.type = vs[k].type;
        a.flags = vs[k].flags;
        a.attr = vs[k].attr;
        a.attr2 = vs[k].attr2;
        a.format = 6;
        a.size = size;
        a.alignment = huge ? PAGE_2M : PAGE_4K;
        a.limit = size - 1;
        uint32_t h = new_handle(g);
        nv_result r = rm_alloc(g, g->h_device, &h, cls, &a, sizeof a);
        if (!nv_ok(r)) {
            rc = fail(g, RT_EXIT_NO_GPU, "NV_ESC_RM_ALLOC %s (%s, %llu bytes for GPU VA 0x%llx, way %u: attr 0x%x "
                      "attr2 0x%x flags 0x%x): %s", cls_name, kind, (unsigned long long)size,
                      (unsigned long long)gpu_va, k + 1, a.attr, a.attr2, a.flags, nv_why(r, why, sizeof why));
            continue;
        }
        m->handle = h;
        char path[32];
        if (vs[k].through_ctl)
            snprintf(path, sizeof path, "/dev/nvidiactl");
        else
            dev_path(g, path, sizeof path);
        rc = map_cpu(g, g->h_device, h, size, vs[k].map_flags, path, (void *)(uintptr_t)gpu_va, kind,
                     &m->cpu, &m->map_fd, &m->rm_linear);
        if (rc) {
            free_object(g, g->h_device, &m->handle, cls_name);
            continue;
        }
        if (k)
            warn("%s at GPU VA 0x%llx: allocated and CPU-mapped the way %u (attr 0x%x, map flags 0x%x through %s)",
                 kind, (unsigned long long)gpu_va, k + 1, a.attr, vs[k].map_flags, path);
    }
    if (rc) {
        memset(m, 0, sizeof *m);
        m->map_fd = -1;
        return rc;
    }
    if (g->mapping == RT_GPU_MAPPING_RM) {
        if ((rc = map_gpu_rm(g, m, kind))) {
            mem_release(g, m);
            return rc;
        }
    } else if ((rc = map_gpu_uvm(g, m, kind))) {
        mem_release(g, m);
        return rc;
    }
    step(g, "mapped %llu bytes of %s at GPU VA 0x%llx in %s pages, CPU %p%s", (unsigned long long)size, kind,
         (unsigned long long)gpu_va, huge ? "2 MiB" : "4 KiB", m->cpu,
         (uintptr_t)m->cpu == gpu_va ? " (same address)" : "");
    if (host_ptr)
        *host_ptr = m->cpu;
    return 0;
}

/* The RM mapping: a fixed-address NV50_MEMORY_VIRTUAL of exactly the allocation's
 * size in our VA space, then NV_ESC_RM_MAP_MEMORY_DMA of the whole allocation
 * into it (the RM places the mapping inside the virtual object's range, which
 * the allocation fills, so at its base; checked).  Snooped for system memory. */
static int map_gpu_rm(rt_gpu *g, rt_gpu_mem *m, const char *kind)
{
    char why[96];
    rt_nv_memory_alloc v;
    memset(&v, 0, sizeof v);
    v.owner = g->h_client;
    v.type = NVOS32_TYPE_IMAGE;
    v.flags = NVOS32_ALLOC_FLAGS_VIRTUAL | NVOS32_ALLOC_FLAGS_FIXED_ADDRESS_ALLOCATE |
              NVOS32_ALLOC_FLAGS_ALIGNMENT_FORCE;
    v.attr = m->huge_pages ? NVOS32_ATTR_PAGE_SIZE_HUGE : NVOS32_ATTR_PAGE_SIZE_4KB;
    v.attr2 = m->huge_pages ? NVOS32_ATTR2_PAGE_SIZE_HUGE_2MB : 0;
    v.size = m->size;
    v.alignment = m->huge_pages ? PAGE_2M : PAGE_4K;
    v.offset = m->gpu_va;
    v.hVASpace = g->h_vaspace;
    uint32_t h = new_handle(g);
    nv_result r = rm_alloc(g, g->h_device, &h, NV50_MEMORY_VIRTUAL, &v, sizeof v);
    if (!nv_ok(r))
        return fail(g, RT_EXIT_NO_GPU, "NV_ESC_RM_ALLOC NV50_MEMORY_VIRTUAL (GPU VA range 0x%llx+0x%llx for %s): %s "
                    "(the RM may hold part of that range for its own mappings; BOBC_GPU_MAPPING=uvm maps through UVM "
                    "instead)", (unsigned long long)m->gpu_va, (unsigned long long)m->size, kind,
                    nv_why(r, why, sizeof why));
    m->virt_handle = h;
    rt_nvos46 d;
    memset(&d, 0, sizeof d);
    d.hClient = g->h_client;
    d.hDevice = g->h_device;
    d.hDma = m->virt_handle;
    d.hMemory = m->handle;
    d.offset = 0;
    d.length = m->size;
    d.flags = NVOS46_FLAGS_PAGE_KIND_VIRTUAL | (m->huge_pages ? NVOS46_FLAGS_PAGE_SIZE_HUGE : NVOS46_FLAGS_PAGE_SIZE_4KB) |
              (m->location == RT_MEM_SYSTEM ? NVOS46_FLAGS_CACHE_SNOOP_ENABLE : 0);
    d.dmaOffset = 0;
    r = (nv_result){ xioctl(g->fd_ctl, NV_IOWR(NV_ESC_RM_MAP_MEMORY_DMA, sizeof d), &d), 0 };
    if (!r.os_errno)
        r.status = d.status;
    if (!nv_ok(r))
        return fail(g, RT_EXIT_NO_GPU, "NV_ESC_RM_MAP_MEMORY_DMA of %s into GPU VA range 0x%llx+0x%llx: %s",
                    kind, (unsigned long long)m->gpu_va, (unsigned long long)m->size, nv_why(r, why, sizeof why));
    m->rm_dma_mapped = 1;
    if (d.dmaOffset != m->gpu_va)
        return fail(g, RT_EXIT_NO_GPU, "NV_ESC_RM_MAP_MEMORY_DMA placed %s at GPU VA 0x%llx, not at 0x%llx where "
                    "its NV50_MEMORY_VIRTUAL range starts", kind, (unsigned long long)d.dmaOffset,
                    (unsigned long long)m->gpu_va);
    return 0;
}

/* The UVM mapping: an external range at exactly the VA, then the allocation mapped into it. */
static int map_gpu_uvm(rt_gpu *g, rt_gpu_mem *m, const char *kind)
{
    char why[96];
    uint64_t gpu_va = m->gpu_va, size = m->size;
    uint32_t h = m->handle;
    nv_result r;

    rt_uvm_create_external_range cr;
    memset(&cr, 0, sizeof cr);
    cr.base = gpu_va;
    cr.length = size;
    r = uvm_ioctl(g, UVM_CREATE_EXTERNAL_RANGE, &cr, &cr.rmStatus);
    if (!nv_ok(r))
        return fail(g, RT_EXIT_NO_GPU, "UVM_CREATE_EXTERNAL_RANGE at GPU VA 0x%llx (%llu bytes): %s",
                    (unsigned long long)gpu_va, (unsigned long long)size, nv_why(r, why, sizeof why));
    m->range_created = 1;

    rt_uvm_map_external_allocation *mp = calloc(1, sizeof *mp);
    if (!mp)
        return fail(g, RT_EXIT_INTERNAL, "out of host memory");
    mp->base = gpu_va;
    mp->length = size;
    mp->offset = 0;
    memcpy(mp->perGpuAttributes[0].gpuUuid, g->uuid, 16);
    mp->perGpuAttributes[0].gpuMappingType = UVM_GPU_MAPPING_TYPE_READ_WRITE_ATOMIC;
    mp->gpuAttributesCount = 1;
    mp->rmCtrlFd = g->fd_ctl;
    mp->hClient = g->h_client;
    mp->hMemory = h;
    r = uvm_ioctl_sized(g, UVM_MAP_EXTERNAL_ALLOCATION, mp, sizeof *mp, &mp->rmStatus);
    free(mp);
    if (!nv_ok(r))
        return fail(g, RT_EXIT_NO_GPU, "UVM_MAP_EXTERNAL_ALLOCATION of %s at GPU VA 0x%llx: %s",
                    kind, (unsigned long long)gpu_va, nv_why(r, why, sizeof why));
    return 0;
}

static rt_gpu_mem *mem_of_va(rt_gpu *g, uint64_t gpu_va)
{
    for (int i = 0; i < RT_GPU_MAX_MEMS; i++)
        if (g->mems[i].handle && g->mems[i].gpu_va == gpu_va)
            return &g->mems[i];
    return NULL;
}

uint64_t rt_gpu_va_of(const rt_gpu *g, const volatile void *host_ptr)
{
    uintptr_t p = (uintptr_t)host_ptr;
    for (int i = 0; i < RT_GPU_MAX_MEMS; i++) {
        const rt_gpu_mem *m = &g->mems[i];
        uintptr_t c = (uintptr_t)m->cpu;
        if (m->handle && c && p >= c && p < c + m->size)
            return m->gpu_va + (p - c);
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* bring-up                                                            */

int rt_gpu_present(void)
{
    struct stat st;
    return stat("/dev/nvidiactl", &st) == 0;
}

/* The driver version: NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION_V2 in its
 * four-string layout (recent headers), then the three-string one, then
 * /proc/driver/nvidia/version ("NVRM version: ... Kernel Module for x86_64
 * 580.159.04 ..."), saying which source answered. */
static int version_from_proc(char *out, size_t n)
{
    FILE *f = fopen("/proc/driver/nvidia/version", "r");
    if (!f)
        return 0;
    char line[512] = "";
    int found = 0;
    if (fgets(line, sizeof line, f)) {
        for (char *p = line; *p && !found; p++) {
            if (*p >= '0' && *p <= '9' && (p == line || p[-1] == ' ')) {
                char *q = p;
                while ((*q >= '0' && *q <= '9') || *q == '.')
                    q++;
                if (q - p >= 5 && strchr(p, '.') && strchr(p, '.') < q) {
                    snprintf(out, n, "%.*s", (int)(q - p), p);
                    found = 1;
                }
            }
        }
    }
    fclose(f);
    return found;
}

static int check_driver_version(rt_gpu *g)
{
    char why[96], why2[96];
    const char *source = "NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION_V2";
    rt_nv0000_build_version_v2_branch big;
    memset(&big, 0, sizeof big);
    nv_result r = rm_control(g, g->h_client, NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION_V2, &big, sizeof big);
    if (nv_ok(r)) {
        snprintf(g->driver_version, sizeof g->driver_version, "%.63s", big.driverVersionBuffer);
    } else {
        rt_nv0000_build_version_v2 small;
        memset(&small, 0, sizeof small);
        nv_result r2 = rm_control(g, g->h_client, NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION_V2, &small, sizeof small);
        if (nv_ok(r2)) {
            snprintf(g->driver_version, sizeof g->driver_version, "%.63s", small.driverVersionBuffer);
        } else if (version_from_proc(g->driver_version, sizeof g->driver_version)) {
            warn("NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION_V2 answered %s (%zu-byte layout) and %s (%zu-byte "
                 "layout); the version comes from /proc/driver/nvidia/version", nv_why(r, why, sizeof why),
                 sizeof big, nv_why(r2, why2, sizeof why2), sizeof small);
            source = "/proc/driver/nvidia/version";
        } else {
            return fail(g, RT_EXIT_NO_GPU, "NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION_V2: %s (%zu-byte layout), %s "
                        "(%zu-byte layout), and /proc/driver/nvidia/version unreadable: cannot tell the driver "
                        "branch (this host speaks %u)", nv_why(r, why, sizeof why), sizeof big,
                        nv_why(r2, why2, sizeof why2), sizeof small, g->target->driver_branch);
        }
    }
    step(g, "driver %s (branch %lu, from %s)", g->driver_version, strtoul(g->driver_version, NULL, 10), source);
    char message[sizeof g->error];
    int rc = rt_judge_driver_version(g->target, g->driver_version, message, sizeof message);
    if (rc)
        return fail(g, rc, "%s", message);
    return 0;
}

int rt_judge_driver_version(const rt_target_facts *t, const char *version, char *message, size_t size)
{
    /* BRANCH.MINOR...: decimal digits, a dot, decimal digits (580.95.05); what follows is not read */
    const char *p = version;
    while (*p >= '0' && *p <= '9')
        p++;
    size_t branch_digits = (size_t)(p - version);
    if (branch_digits == 0 || branch_digits > 9 || p[0] != '.' || !(p[1] >= '0' && p[1] <= '9')) {
        snprintf(message, size, "the driver reports version '%.63s', which is not BRANCH.MINOR[.PATCH]: cannot tell "
                 "its branch (this host speaks branch %u), refusing", version, t->driver_branch);
        return RT_EXIT_NO_GPU;
    }
    unsigned long branch = strtoul(version, NULL, 10);
    if (branch != t->driver_branch) {
        snprintf(message, size, "driver %s is branch %lu, but this host was built for branch %u: the driver ABI "
                 "differs between branches, refusing; run it on a node with a %u.x driver", version, branch,
                 t->driver_branch, t->driver_branch);
        return RT_EXIT_NO_GPU;
    }
    return 0;
}

static int check_classes(rt_gpu *g)
{
    char why[96];
    rt_nv0080_classlist cl;
    memset(&cl, 0, sizeof cl);
    nv_result r = rm_control(g, g->h_device, NV0080_CTRL_CMD_GPU_GET_CLASSLIST, &cl, sizeof cl);
    if (!nv_ok(r))
        return fail(g, RT_EXIT_NO_GPU, "NV0080_CTRL_CMD_GPU_GET_CLASSLIST (count): %s", nv_why(r, why, sizeof why));
    uint32_t n = cl.numClasses;
    uint32_t *list = calloc(n ? n : 1, sizeof *list);
    if (!list)
        return fail(g, RT_EXIT_INTERNAL, "out of host memory");
    cl.classList = (uint64_t)(uintptr_t)list;
    r = rm_control(g, g->h_device, NV0080_CTRL_CMD_GPU_GET_CLASSLIST, &cl, sizeof cl);
    if (!nv_ok(r)) {
        free(list);
        return fail(g, RT_EXIT_NO_GPU, "NV0080_CTRL_CMD_GPU_GET_CLASSLIST (list): %s", nv_why(r, why, sizeof why));
    }
    step(g, "class list: %u classes", n);
    char message[sizeof g->error];
    int rc = rt_judge_class_list(g->target, list, cl.numClasses < n ? cl.numClasses : n, g->pci_device_id,
                                 message, sizeof message);
    free(list);
    if (rc)
        return fail(g, rc, "%s", message);
    return 0;
}

int rt_judge_class_list(const rt_target_facts *t, const uint32_t *list, uint32_t n, unsigned pci_device_id,
                        char *message, size_t size)
{
    const struct { uint32_t cls; const char *name; } need[] = {
        { t->gpfifo_class, t->gpfifo_class_name },
        { t->compute_class, t->compute_class_name },
        { t->usermode_class, t->usermode_class_name },
    };
    char missing[256] = "";
    for (unsigned k = 0; k < sizeof need / sizeof need[0]; k++) {
        int found = 0;
        for (uint32_t i = 0; i < n; i++)
            found |= list[i] == need[k].cls;
        if (!found) {
            size_t len = strlen(missing);
            snprintf(missing + len, sizeof missing - len, "%s%s (0x%04x)", len ? ", " : "", need[k].name, need[k].cls);
        }
    }
    if (!missing[0])
        return 0;
    /* What the GPU is: its compute class (one per chip in the RM's lists), preferring one a
     * target of ours runs on; then what to do about it. */
    const rt_compute_class_facts *gpu = NULL;
    for (uint32_t i = 0; i < n; i++) {
        const rt_compute_class_facts *c = rt_compute_class(list[i]);
        if (c && (!gpu || (!rt_target_for_compute_class(gpu->compute_class) && rt_target_for_compute_class(list[i]))))
            gpu = c;
    }
    const rt_compute_class_facts *own = rt_compute_class(t->compute_class);
    int len = snprintf(message, size, "this GPU (PCI device 0x%04x) does not list %s, which target %s needs: ",
                       pci_device_id, missing, t->name);
    if (len < 0 || (size_t)len >= size)
        return RT_EXIT_NO_GPU;
    char *at = message + len;
    size_t room = size - (size_t)len;
    const rt_target_facts *other = gpu ? rt_target_for_compute_class(gpu->compute_class) : NULL;
    if (!gpu)
        snprintf(at, room, "it lists no compute class bobc knows (%u classes), so it is no GPU of target %s "
                 "(compute capability %s); refusing", n, t->name, own ? own->compute_capability : "?");
    else if (other == t)
        snprintf(at, room, "it lists %s (0x%04x) but not the rest of the target's classes, so this driver is not "
                 "one target %s was written for; refusing", gpu->name, gpu->compute_class, t->name);
    else if (other)
        snprintf(at, room, "it is %s, compute capability %s (%s 0x%04x), and this host was built for %s (compute "
                 "capability %s); rebuild the host for this GPU with bobc build --target %s, refusing",
                 gpu->gpus, gpu->compute_capability, gpu->name, gpu->compute_class, t->name,
                 own ? own->compute_capability : "?", other->name);
    else
        snprintf(at, room, "it is %s, compute capability %s (%s 0x%04x), which no bobc target runs on (targets: "
                 "%s); run this host on %s (compute capability %s), refusing",
                 gpu->gpus, gpu->compute_capability, gpu->name, gpu->compute_class, rt_target_names(),
                 own ? own->gpus : t->name, own ? own->compute_capability : "?");
    return RT_EXIT_NO_GPU;
}

/* UVM bring-up, step 7: the GPU's UUID, UVM_REGISTER_GPU, UVM_REGISTER_GPU_VASPACE. */
static int register_with_uvm(rt_gpu *g)
{
    char why[96];
    rt_nv2080_gid_info gid;
    memset(&gid, 0, sizeof gid);
    gid.flags = NV2080_GPU_CMD_GPU_GET_GID_FLAGS_FORMAT_BINARY;
    nv_result r = rm_control(g, g->h_subdevice, NV2080_CTRL_CMD_GPU_GET_GID_INFO, &gid, sizeof gid);
    if (!nv_ok(r))
        return fail(g, RT_EXIT_NO_GPU, "NV2080_CTRL_CMD_GPU_GET_GID_INFO: %s", nv_why(r, why, sizeof why));
    memcpy(g->uuid, gid.data, 16);
    rt_uvm_register_gpu rg;
    memset(&rg, 0, sizeof rg);
    memcpy(rg.gpu_uuid, g->uuid, 16);
    rg.rmCtrlFd = -1;
    r = uvm_ioctl(g, UVM_REGISTER_GPU, &rg, &rg.rmStatus);
    if (!nv_ok(r))
        return fail(g, RT_EXIT_NO_GPU, "UVM_REGISTER_GPU: %s", nv_why(r, why, sizeof why));
    g->uvm_gpu_registered = 1;
    step(g, "GPU registered with UVM");
    rt_uvm_register_gpu_vaspace rv;
    memset(&rv, 0, sizeof rv);
    memcpy(rv.gpuUuid, g->uuid, 16);
    rv.rmCtrlFd = g->fd_ctl;
    rv.hClient = g->h_client;
    rv.hVaSpace = g->h_vaspace;
    r = uvm_ioctl(g, UVM_REGISTER_GPU_VASPACE, &rv, &rv.rmStatus);
    if (!nv_ok(r))
        return fail(g, RT_EXIT_NO_GPU, "UVM_REGISTER_GPU_VASPACE: %s", nv_why(r, why, sizeof why));
    g->uvm_vaspace_registered = 1;
    step(g, "VA space registered with UVM");
    return 0;
}

/* UVM bring-up, step 14: UVM maps the channel's buffers into a range we reserve. */
static int register_channel_with_uvm(rt_gpu *g)
{
    char why[96];
    nv_result r;
    rt_uvm_register_channel rc_;
    memset(&rc_, 0, sizeof rc_);
    memcpy(rc_.gpuUuid, g->uuid, 16);
    rc_.rmCtrlFd = g->fd_ctl;
    rc_.hClient = g->h_client;
    rc_.hChannel = g->h_channel;
    rc_.base = g->cfg.uvm_channel_va;
    rc_.length = g->cfg.uvm_channel_bytes;
    r = uvm_ioctl(g, UVM_REGISTER_CHANNEL, &rc_, &rc_.rmStatus);
    if (!nv_ok(r))
        return fail(g, RT_EXIT_NO_GPU, "UVM_REGISTER_CHANNEL (range 0x%llx+0x%llx): %s",
                    (unsigned long long)rc_.base, (unsigned long long)rc_.length, nv_why(r, why, sizeof why));
    g->uvm_channel_registered = 1;
    step(g, "channel registered with UVM");
    return 0;
}

/* nvidia-smi's spelling of a UUID: GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx */
static void uuid_text(const uint8_t *u, char *text, size_t size)
{
    snprintf(text, size, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2],
             u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
}

/* The card whose UUID is cfg.uuid (a card not yet attached is attached by opening its
 * node, then asked again); -1 with the message naming every UUID seen. */
static int card_with_uuid(rt_gpu *g, const rt_nv_card_info *cards, int count)
{
    char seen[512] = "", want[48], text[48], why[96];
    uuid_text(g->cfg.uuid, want, sizeof want);
    for (int i = 0; i < count; i++) {
        if (!cards[i].valid || !cards[i].gpu_id)
            continue;
        rt_nv0000_uuid_from_gpu_id q;
        memset(&q, 0, sizeof q);
        q.gpuId = cards[i].gpu_id;
        q.flags = NV0000_CTRL_CMD_GPU_GET_UUID_FROM_GPU_ID_FLAGS_FORMAT_BINARY;
        nv_result r = rm_control(g, g->h_client, NV0000_CTRL_CMD_GPU_GET_UUID_FROM_GPU_ID, &q, sizeof q);
        int attached = -1;
        if (!nv_ok(r)) {   /* not attached yet: opening /dev/nvidiaN attaches it */
            char path[32];
            snprintf(path, sizeof path, "/dev/nvidia%u", cards[i].minor_number);
            if (open_dev_registered(g, path, &attached) == 0)
                r = rm_control(g, g->h_client, NV0000_CTRL_CMD_GPU_GET_UUID_FROM_GPU_ID, &q, sizeof q);
        }
        if (attached >= 0)
            close(attached);
        if (!nv_ok(r)) {
            step(g, "card %d: NV0000_CTRL_CMD_GPU_GET_UUID_FROM_GPU_ID: %s", i, nv_why(r, why, sizeof why));
            continue;
        }
        uuid_text(q.gpuUuid, text, sizeof text);
        step(g, "card %d: %s", i, text);
        if (memcmp(q.gpuUuid, g->cfg.uuid, 16) == 0)
            return i;
        size_t len = strlen(seen);
        snprintf(seen + len, sizeof seen - len, "%s%s", len ? ", " : "", text);
    }
    fail(g, RT_EXIT_NO_GPU, "no GPU with UUID %s on this machine (the driver reports: %s); build the host for "
         "one of these (nvidia-smi -L lists them)", want, seen[0] ? seen : "none");
    return -1;
}

static int bring_up(rt_gpu *g)
{
    char why[96];
    nv_result r;
    int rc;

    step(g, "target %s: GPFIFO %s 0x%04x, compute %s 0x%04x", g->target->name, g->target->gpfifo_class_name,
         g->target->gpfifo_class, g->target->compute_class_name, g->target->compute_class);
    const int uvm = g->mapping == RT_GPU_MAPPING_UVM;
    step(g, "mapping: %s", uvm ? "UVM (externally owned VA space, UVM external ranges)"
                               : "RM (NV50_MEMORY_VIRTUAL + NV_ESC_RM_MAP_MEMORY_DMA; no UVM)");
    if (!rt_gpu_present())
        return fail(g, RT_EXIT_NO_GPU, "no GPU: /dev/nvidiactl does not exist (no NVIDIA driver loaded)");
    g->fd_ctl = open("/dev/nvidiactl", O_RDWR | O_CLOEXEC);
    if (g->fd_ctl < 0)
        return fail(g, RT_EXIT_NO_GPU, "no GPU: cannot open /dev/nvidiactl: %s", strerror(errno));
    if (uvm) {
        g->fd_uvm = open("/dev/nvidia-uvm", O_RDWR | O_CLOEXEC);
        if (g->fd_uvm < 0)
            return fail(g, RT_EXIT_NO_GPU, "no GPU: cannot open /dev/nvidia-uvm: %s (is nvidia-uvm loaded?)",
                        strerror(errno));
    }

    /* 1. root client */
    uint32_t client = 0;
    r = rm_alloc(g, 0, &client, NV01_ROOT_CLIENT, NULL, 0);
    if (!nv_ok(r))
        return fail(g, RT_EXIT_NO_GPU, "NV_ESC_RM_ALLOC NV01_ROOT_CLIENT: %s", nv_why(r, why, sizeof why));
    g->h_client = client;
    step(g, "root client 0x%x", client);

    /* 2. driver branch */
    if ((rc = check_driver_version(g)))
        return rc;

    /* 3. UVM (UVM bring-up only) */
    if (uvm) {
        rt_uvm_initialize ui;
        memset(&ui, 0, sizeof ui);
        r = uvm_ioctl(g, UVM_INITIALIZE, &ui, &ui.rmStatus);
        if (!nv_ok(r))
            return fail(g, RT_EXIT_NO_GPU, "UVM_INITIALIZE on /dev/nvidia-uvm: %s", nv_why(r, why, sizeof why));
        g->uvm_initialized = 1;
        step(g, "UVM initialized");
        g->fd_uvm_mm = open("/dev/nvidia-uvm", O_RDWR | O_CLOEXEC);
        if (g->fd_uvm_mm >= 0) {
            rt_uvm_mm_initialize mm = { g->fd_uvm, 0 };
            if (xioctl(g->fd_uvm_mm, UVM_MM_INITIALIZE, &mm) || mm.rmStatus != NV_OK)
                step(g, "UVM_MM_INITIALIZE: status %s (ignored)", nv_status_name(mm.rmStatus));
        }
    }

    /* 4. card info, /dev/nvidiaN */
    rt_nv_card_info cards[32];
    memset(cards, 0, sizeof cards);
    int e = xioctl(g->fd_ctl, NV_IOWR(NV_ESC_CARD_INFO, sizeof cards), cards);
    if (e)
        return fail(g, RT_EXIT_NO_GPU, "NV_ESC_CARD_INFO: ioctl failed: %s", strerror(e));
    int card = -1;
    for (int i = 0; i < 32 && card < 0; i++)
        if (cards[i].valid && cards[i].gpu_id)
            card = i;
    if (card < 0)
        return fail(g, RT_EXIT_NO_GPU, "no GPU: NV_ESC_CARD_INFO lists no valid card");
    if (g->cfg.uuid && (card = card_with_uuid(g, cards, 32)) < 0)
        return RT_EXIT_NO_GPU;
    g->gpu_id = cards[card].gpu_id;
    g->minor = cards[card].minor_number;
    g->pci_device_id = cards[card].pci_device_id;
    step(g, "card %d: gpu_id 0x%x, minor %u, PCI %04x:%02x:%02x.%u device 0x%04x", card, g->gpu_id, g->minor,
         cards[card].pci_domain, cards[card].pci_bus, cards[card].pci_slot, cards[card].pci_function,
         g->pci_device_id);
    char path[32];
    dev_path(g, path, sizeof path);
    if ((rc = open_dev_registered(g, path, &g->fd_dev)))
        return rc;

    rt_nv0000_gpu_id_info_v2 idinfo;
    memset(&idinfo, 0, sizeof idinfo);
    idinfo.gpuId = g->gpu_id;
    r = rm_control(g, g->h_client, NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2, &idinfo, sizeof idinfo);
    if (nv_ok(r)) {
        g->device_instance = idinfo.deviceInstance;
    } else {
        warn("NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2: %s; using device instance 0", nv_why(r, why, sizeof why));
        g->device_instance = 0;
    }

    /* 5. device, subdevice */
    rt_nv0080_alloc dev;
    memset(&dev, 0, sizeof dev);
    dev.deviceId = g->device_instance;
    dev.hClientShare = g->h_client;
    dev.vaMode = NV_DEVICE_ALLOCATION_VAMODE_MULTIPLE_VASPACES;
    uint32_t h = new_handle(g);
    r = rm_alloc(g, g->h_client, &h, NV01_DEVICE_0, &dev, sizeof dev);
    if (!nv_ok(r))
        return fail(g, RT_EXIT_NO_GPU, "NV_ESC_RM_ALLOC NV01_DEVICE_0 (device %u): %s", g->device_instance,
                    nv_why(r, why, sizeof why));
    g->h_device = h;
    step(g, "device 0x%x", h);
    rt_nv2080_alloc sub = { 0 };
    h = new_handle(g);
    r = rm_alloc(g, g->h_device, &h, NV20_SUBDEVICE_0, &sub, sizeof sub);
    if (!nv_ok(r))
        return fail(g, RT_EXIT_NO_GPU, "NV_ESC_RM_ALLOC NV20_SUBDEVICE_0: %s", nv_why(r, why, sizeof why));
    g->h_subdevice = h;
    step(g, "subdevice 0x%x", h);

    /* 6. class list, usermode */
    if ((rc = check_classes(g)))
        return rc;
    rt_nv_hopper_usermode_alloc um = { 1, 0 };
    h = new_handle(g);
    if (g->target->usermode_takes_params)
        r = rm_alloc(g, g->h_subdevice, &h, g->target->usermode_class, &um, sizeof um);
    else
        r = rm_alloc(g, g->h_subdevice, &h, g->target->usermode_class, NULL, 0);
    if (!nv_ok(r))
        return fail(g, RT_EXIT_NO_GPU, "NV_ESC_RM_ALLOC %s: %s", g->target->usermode_class_name,
                    nv_why(r, why, sizeof why));
    g->h_usermode = h;
    step(g, "usermode 0x%x", h);
    void *ump = NULL;
    rc = map_cpu(g, g->h_device, g->h_usermode, RT_USERMODE_MAP_BYTES, 2u /* ACCESS_WRITE_ONLY */, path, NULL,
                 g->target->usermode_class_name, &ump, &g->usermode_fd, &g->usermode_linear);
    if (rc)
        return rc;
    g->usermode = ump;

    /* 7. VA space; for UVM also the UUID and the UVM registrations.  Without
     * IS_EXTERNALLY_OWNED the RM keeps the page tables and maps for us. */
    rt_nv_vaspace_alloc vas;
    memset(&vas, 0, sizeof vas);
    vas.vaBase = RT_VASPACE_BASE;
    vas.vaSize = RT_VASPACE_SIZE;
    vas.flags = uvm ? NV_VASPACE_ALLOCATION_FLAGS_ENABLE_PAGE_FAULTING | NV_VASPACE_ALLOCATION_FLAGS_IS_EXTERNALLY_OWNED
                    : NV_VASPACE_ALLOCATION_FLAGS_NONE;
    h = new_handle(g);
    r = rm_alloc(g, g->h_device, &h, FERMI_VASPACE_A, &vas, sizeof vas);
    if (!nv_ok(r))
        return fail(g, RT_EXIT_NO_GPU, "NV_ESC_RM_ALLOC FERMI_VASPACE_A (flags 0x%x): %s", vas.flags,
                    nv_why(r, why, sizeof why));
    g->h_vaspace = h;
    step(g, "vaspace 0x%x", h);
    if (uvm && (rc = register_with_uvm(g)))
        return rc;

    /* error notifier (system memory, read by the host on a fault) */
    void *np = NULL;
    if ((rc = rt_gpu_alloc_at(g, g->cfg.notifier_va, 0x10000, RT_MEM_SYSTEM, &np)))
        return rc;
    g->notifier = mem_of_va(g, g->cfg.notifier_va);
    memset(np, 0, 0x10000);

    /* 8. channel group (ours, or another process's joined), 12. context share */
    if (g->cfg.join_client) {
        rt_nvos55 dup = { g->h_client, g->h_device, new_handle(g), g->cfg.join_client, g->cfg.join_group, 0, 0 };
        int e = xioctl(g->fd_ctl, NV_IOWR(NV_ESC_RM_DUP_OBJECT, sizeof dup), &dup);
        if (e || dup.status != NV_OK)
            return fail(g, RT_EXIT_NO_GPU, "NV_ESC_RM_DUP_OBJECT of channel group 0x%x of client 0x%x (joining the "
                        "peer's GPU context): %s", g->cfg.join_group, g->cfg.join_client,
                        e ? strerror(e) : nv_status_name(dup.status));
        g->h_group = dup.hObject;
        step(g, "joined channel group 0x%x of client 0x%x as 0x%x", g->cfg.join_group, g->cfg.join_client,
             dup.hObject);
    } else {
        rt_nv_channel_group_alloc grp;
        memset(&grp, 0, sizeof grp);
        grp.hObjectError = g->notifier->handle;
        grp.hObjectEccError = g->notifier->handle;
        grp.hVASpace = g->h_vaspace;
        grp.engineType = NV2080_ENGINE_TYPE_GRAPHICS;
        h = new_handle(g);
        r = rm_alloc(g, g->h_device, &h, KEPLER_CHANNEL_GROUP_A, &grp, sizeof grp);
        if (!nv_ok(r))
            return fail(g, RT_EXIT_NO_GPU, "NV_ESC_RM_ALLOC KEPLER_CHANNEL_GROUP_A: %s", nv_why(r, why, sizeof why));
        g->h_group = h;
        step(g, "group 0x%x", h);
        if (g->cfg.timeslice_us) {
            rt_nva06c_timeslice ts = { g->cfg.timeslice_us };
            r = rm_control(g, g->h_group, NVA06C_CTRL_CMD_SET_TIMESLICE, &ts, sizeof ts);
            if (!nv_ok(r))
                return fail(g, RT_EXIT_NO_GPU, "NVA06C_CTRL_CMD_SET_TIMESLICE (%u us): %s", g->cfg.timeslice_us,
                            nv_why(r, why, sizeof why));
            rt_nva06c_timeslice got = { 0 };
            r = rm_control(g, g->h_group, NVA06C_CTRL_CMD_GET_TIMESLICE, &got, sizeof got);
            step(g, "group timeslice %u us asked, %llu us reported%s", g->cfg.timeslice_us,
                 (unsigned long long)got.timesliceUs, nv_ok(r) ? "" : " (GET_TIMESLICE refused)");
        }
        if (g->cfg.share_group) {
            rt_nvos57 share;
            memset(&share, 0, sizeof share);
            share.hClient = g->h_client;
            share.hObject = g->h_group;
            share.accessMask = RS_ACCESS_DUP_OBJECT_BIT;
            share.type = RS_SHARE_TYPE_OS_SECURITY_TOKEN;
            share.action = RS_SHARE_ACTION_FLAG_COMPOSE;
            int e = xioctl(g->fd_ctl, NV_IOWR(NV_ESC_RM_SHARE, sizeof share), &share);
            if (e || share.status != NV_OK)
                return fail(g, RT_EXIT_NO_GPU, "NV_ESC_RM_SHARE of channel group 0x%x (for the peer to join): %s",
                            g->h_group, e ? strerror(e) : nv_status_name(share.status));
            step(g, "group 0x%x of client 0x%x shared with this user's processes", g->h_group, g->h_client);
        }
    }
    rt_nv_ctxshare_alloc cs;
    memset(&cs, 0, sizeof cs);
    cs.hVASpace = g->h_vaspace;
    cs.flags = NV_CTXSHARE_ALLOCATION_FLAGS_SUBCONTEXT_ASYNC;
    h = new_handle(g);
    r = rm_alloc(g, g->h_group, &h, FERMI_CONTEXT_SHARE_A, &cs, sizeof cs);
    if (!nv_ok(r))
        return fail(g, RT_EXIT_NO_GPU, "NV_ESC_RM_ALLOC FERMI_CONTEXT_SHARE_A: %s", nv_why(r, why, sizeof why));
    g->h_ctxshare = h;
    step(g, "ctxshare 0x%x", h);

    /* 13. GPFIFO channel: ring at 0, USERD after it, in one allocation */
    g->ring_entries = g->cfg.ring_entries;
    uint64_t userd_offset = ((uint64_t)g->ring_entries * 8 + PAGE_4K - 1) & ~(PAGE_4K - 1);
    void *cp = NULL;
    if ((rc = rt_gpu_alloc_at(g, g->cfg.channel_va, userd_offset + PAGE_4K, g->cfg.channel_location, &cp)))
        return rc;
    g->channel_mem = mem_of_va(g, g->cfg.channel_va);
    memset(cp, 0, userd_offset + PAGE_4K);
    g->ring = (volatile uint64_t *)cp;
    g->userd = (volatile uint32_t *)((uint8_t *)cp + userd_offset);
    rt_nv_channel_alloc ch;
    memset(&ch, 0, sizeof ch);
    ch.hObjectError = g->notifier->handle;
    ch.hObjectBuffer = g->channel_mem->handle;
    ch.gpFifoOffset = g->cfg.channel_va;
    ch.gpFifoEntries = g->ring_entries;
    ch.hContextShare = g->h_ctxshare;
    ch.hUserdMemory[0] = g->channel_mem->handle;
    ch.userdOffset[0] = userd_offset;
    ch.engineType = 0;
    h = new_handle(g);
    r = rm_alloc(g, g->h_group, &h, g->target->gpfifo_class, &ch, sizeof ch);
    if (!nv_ok(r))
        return fail(g, RT_EXIT_NO_GPU, "NV_ESC_RM_ALLOC %s (ring in %s memory at GPU VA 0x%llx): %s",
                    g->target->gpfifo_class_name, g->cfg.channel_location == RT_MEM_VIDEO ? "video" : "system",
                    (unsigned long long)g->cfg.channel_va, nv_why(r, why, sizeof why));
    g->h_channel = h;
    step(g, "channel %s 0x%x", g->target->gpfifo_class_name, h);
    if (g->cfg.compute_preemption) {
        rt_nv2080_preemption_mode pm;
        memset(&pm, 0, sizeof pm);
        pm.flags = 1u;                                   /* CILP_SET: the compute mode is given */
        pm.hChannel = g->h_channel;
        pm.cilpPreemptMode = (uint32_t)(g->cfg.compute_preemption - 1);
        r = rm_control(g, g->h_subdevice, NV2080_CTRL_CMD_GR_SET_CTXSW_PREEMPTION_MODE, &pm, sizeof pm);
        if (!nv_ok(r))
            return fail(g, RT_EXIT_NO_GPU, "NV2080_CTRL_CMD_GR_SET_CTXSW_PREEMPTION_MODE (compute mode %u): %s",
                        pm.cilpPreemptMode, nv_why(r, why, sizeof why));
        step(g, "compute preemption mode %u", pm.cilpPreemptMode);
    }
    h = new_handle(g);
    r = rm_alloc(g, g->h_channel, &h, g->target->compute_class, NULL, 0);
    if (!nv_ok(r))
        return fail(g, RT_EXIT_NO_GPU, "NV_ESC_RM_ALLOC %s on the channel: %s", g->target->compute_class_name,
                    nv_why(r, why, sizeof why));
    g->h_compute = h;
    step(g, "compute object %s 0x%x", g->target->compute_class_name, h);

    /* 14. work submit token, UVM channel registration, schedule */
    rt_nvc36f_work_submit_token tok = { 0 };
    r = rm_control(g, g->h_channel, NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN, &tok, sizeof tok);
    if (!nv_ok(r))
        return fail(g, RT_EXIT_NO_GPU, "NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN: %s", nv_why(r, why, sizeof why));
    g->work_submit_token = tok.workSubmitToken;
    if (uvm && (rc = register_channel_with_uvm(g)))
        return rc;
    rt_nva06c_schedule sch = { 1, 0, 0 };
    r = rm_control(g, g->h_group, NVA06C_CTRL_CMD_GPFIFO_SCHEDULE, &sch, sizeof sch);
    if (!nv_ok(r))   /* (a joined group takes the schedule again: measured on the H200, 580) */
        return fail(g, RT_EXIT_NO_GPU, "NVA06C_CTRL_CMD_GPFIFO_SCHEDULE (enable): %s", nv_why(r, why, sizeof why));
    g->gp_put = g->userd[RT_USERD_GP_PUT / 4] % g->ring_entries;
    step(g, "channel up: token 0x%x, GPGet %u, GPPut %u", g->work_submit_token, g->userd[RT_USERD_GP_GET / 4],
         g->gp_put);
    return 0;
}

/* One bring-up with `mapping` (RM or UVM); on failure everything is released and
 * *device_reached says whether the device had been allocated (the driver answered). */
static int open_with(rt_gpu *g, const rt_target_facts *target, const rt_gpu_config *config, int mapping,
                     int *device_reached)
{
    memset(g, 0, sizeof *g);
    g->fd_ctl = g->fd_dev = g->fd_uvm = g->fd_uvm_mm = g->usermode_fd = -1;
    for (int i = 0; i < RT_GPU_MAX_MEMS; i++)
        g->mems[i].map_fd = -1;
    g->next_handle = HANDLE_BASE;
    g->target = target;
    g->mapping = mapping;
    *device_reached = 0;
    if (config)
        g->cfg = *config;
    int trace = rt_setting_choice(RT_SETTING_GPU_TRACE, 0);     /* "0", "1", ioctl: 0, 1, 2 */
    if (trace)
        g->cfg.verbose = 1;
    g->opened_ms = clock_ms();
    trace_ioctls = trace == 2;
    trace_origin_ms = g->opened_ms;
    if (!g->cfg.channel_va) g->cfg.channel_va = RT_GPU_DEFAULT_CHANNEL_VA;
    if (!g->cfg.notifier_va) g->cfg.notifier_va = RT_GPU_DEFAULT_NOTIFIER_VA;
    if (!g->cfg.uvm_channel_va) g->cfg.uvm_channel_va = RT_GPU_DEFAULT_UVM_CHANNEL_VA;
    if (!g->cfg.uvm_channel_bytes) g->cfg.uvm_channel_bytes = RT_GPU_DEFAULT_UVM_CHANNEL_BYTES;
    if (!g->cfg.ring_entries) g->cfg.ring_entries = RT_GPU_DEFAULT_RING_ENTRIES;
    if (!target)
        return fail(g, RT_EXIT_INTERNAL, "rt_gpu_open without a target");
    if (g->cfg.ring_entries & (g->cfg.ring_entries - 1))
        return fail(g, RT_EXIT_INTERNAL, "GPFIFO ring entries %u is not a power of two", g->cfg.ring_entries);
    int rc = bring_up(g);
    if (rc) {
        *device_reached = g->h_device != 0;
        char keep[sizeof g->error];
        memcpy(keep, g->error, sizeof keep);
        rt_gpu_close(g);
        memcpy(g->error, keep, sizeof keep);
        return rc;
    }
    g->open = 1;
    return 0;
}

int rt_gpu_mapping_setting(int *mapping, char *err, size_t err_bytes)
{
    static const rt_setting which[] = { RT_SETTING_GPU_MAPPING };
    static const int mappings[] = { RT_GPU_MAPPING_RM, RT_GPU_MAPPING_UVM };
    int rc = rt_settings_judge(which, 1, err, err_bytes), choice = rt_setting_choice(RT_SETTING_GPU_MAPPING, -1);
    *mapping = choice < 0 ? RT_GPU_MAPPING_AUTO : mappings[choice];
    return rc;
}

int rt_gpu_open(rt_gpu *g, const rt_target_facts *target, const rt_gpu_config *config)
{
    int requested = config ? config->mapping : RT_GPU_MAPPING_AUTO;
    if (requested == RT_GPU_MAPPING_AUTO && &rt_plan_gpu_mapping != NULL)
        requested = rt_plan_gpu_mapping;
    int setting = RT_GPU_MAPPING_AUTO;
    char why[sizeof g->error];
    if (rt_gpu_mapping_setting(&setting, why, sizeof why)) {
        memset(g, 0, sizeof *g);
        g->fd_ctl = g->fd_dev = g->fd_uvm = g->fd_uvm_mm = g->usermode_fd = -1;
        if (config)
            g->cfg.quiet = config->quiet;
        return fail(g, RT_EXIT_USAGE, "%s", why);
    }
    if (requested == RT_GPU_MAPPING_AUTO)
        requested = setting;
    int reached = 0;
    int mapping = requested == RT_GPU_MAPPING_UVM ? RT_GPU_MAPPING_UVM : RT_GPU_MAPPING_RM;
    int rc = open_with(g, target, config, mapping, &reached);
    if (rc == RT_EXIT_NO_GPU && requested == RT_GPU_MAPPING_AUTO && reached) {
        char refused[sizeof g->error];
        memcpy(refused, g->error, sizeof refused);
        warn("the RM bring-up was refused (%s); bringing the GPU up through UVM instead "
             "(BOBC_GPU_MAPPING=uvm skips the first try)", refused);
        rc = open_with(g, target, config, RT_GPU_MAPPING_UVM, &reached);
    }
    return rc;
}

/* ------------------------------------------------------------------ */
/* submission and waiting                                              */

uint64_t rt_gpfifo_entry(uint64_t va, uint32_t dwords)
{
    uint64_t lo = va & 0xFFFFFFFCull;
    uint64_t hi = ((va >> 32) & 0xFFull) | ((uint64_t)(dwords & 0x1FFFFFu) << 10);
    return lo | (hi << 32);
}

static inline void full_fence(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int rt_gpu_submit(rt_gpu *g, uint64_t entry)
{
    if (!g->open)
        return fail(g, RT_EXIT_INTERNAL, "rt_gpu_submit on a GPU that is not open");
    uint32_t n = g->ring_entries;
    uint32_t next = (g->gp_put + 1) % n;
    double start = now_ms();
    while (next == g->userd[RT_USERD_GP_GET / 4] % n) {   /* ring full: wait for the GPU */
        if (now_ms() - start > 10000.0)
            return fail(g, RT_EXIT_GPU_FAULT, "GPFIFO ring full for 10 s (GPGet %u, GPPut %u): the GPU stopped fetching",
                        g->userd[RT_USERD_GP_GET / 4], g->gp_put);
        sched_yield();
    }
    g->ring[g->gp_put] = entry;
    full_fence();
    g->userd[RT_USERD_GP_PUT / 4] = next;
    g->gp_put = next;
    full_fence();
    *(volatile uint32_t *)(g->usermode + RT_USERMODE_DOORBELL) = g->work_submit_token;
    return 0;
}

/* Robust-channel error codes (Xid) the notifier's info32 carries: each one's name and what a
 * user does about it.  Names and causes from NVIDIA's Xid catalogue ("XID Errors", NVIDIA GPU
 * deployment and management documentation: Xid 13 "Graphics Engine Exception", 31 "GPU memory
 * page fault", 32 "Invalid or corrupted push buffer stream", 43 "GPU stopped processing", 45
 * "Preemptive cleanup, due to previous errors", 69 "Graphics Engine class error", 109 "Context
 * Switch Timeout Error"); the advice names this project's tools (docs/runtime.md, "GPU faults"). */
#define RT_ADVICE_SIM "`bobc sim` on the plan (same operation and files) names the launch and instruction"
#define RT_ADVICE_DMESG "`dmesg | grep -i xid` has the driver's report"
static const struct {
    uint32_t xid;
    const char *name;
    const char *advice;
} xid_table[] = {
    { 8, "GPU stopped processing (channel timeout)",
      "a kernel that never ends (a loop or a barrier nothing releases): " RT_ADVICE_SIM "; " RT_ADVICE_DMESG },
    { 13, "graphics engine exception (shader fault, illegal instruction or address)",
      "an illegal instruction, a trap or a misaligned address in a kernel: " RT_ADVICE_SIM "; " RT_ADVICE_DMESG },
    { 31, "GPU memory page fault (MMU fault)",
      "a kernel read or wrote an address no buffer maps: " RT_ADVICE_SIM "; " RT_ADVICE_DMESG
      " (the faulting address)" },
    { 32, "invalid or corrupted push buffer stream",
      "the host's pushbuffer is wrong (a damaged host or a bobc bug): check it with `bobc inspect HOST`, rebuild "
      "it; " RT_ADVICE_DMESG },
    { 43, "GPU stopped processing (channel reset)",
      "the driver reset the channel: " RT_ADVICE_DMESG " (an earlier Xid is the cause); " RT_ADVICE_SIM },
    { 45, "preemptive cleanup (channel torn down)",
      "the driver tore the channel down after an earlier error: " RT_ADVICE_DMESG " (the first Xid is the cause)" },
    { 69, "graphics engine class error (bad method or QMD)",
      "a method or QMD the compute class refuses (a damaged host or a bobc bug): check it with `bobc inspect "
      "HOST`, rebuild it; " RT_ADVICE_DMESG " (the method)" },
    { 109, "context switch timeout",
      "a kernel that never yields or ends: " RT_ADVICE_SIM "; " RT_ADVICE_DMESG },
};

const char *rt_xid_name(uint32_t xid)
{
    for (size_t i = 0; i < sizeof xid_table / sizeof *xid_table; i++)
        if (xid_table[i].xid == xid)
            return xid_table[i].name;
    return "unlisted RC error";
}

const char *rt_xid_advice(uint32_t xid)
{
    if (xid == 0)
        return "no Xid, yet the work did not finish: a kernel that never ends (a loop or a barrier nothing "
               "releases) -- " RT_ADVICE_SIM " -- or a stopped GPU (`nvidia-smi`; " RT_ADVICE_DMESG ")";
    for (size_t i = 0; i < sizeof xid_table / sizeof *xid_table; i++)
        if (xid_table[i].xid == xid)
            return xid_table[i].advice;
    return RT_ADVICE_DMESG "; look the Xid up in NVIDIA's Xid catalogue; " RT_ADVICE_SIM;
}

uint32_t rt_gpu_xid(const rt_gpu *g)
{
    if (!g->notifier || !g->notifier->cpu)
        return 0;
    const volatile rt_nv_notification *nt = (const volatile rt_nv_notification *)g->notifier->cpu;
    return nt->status == 0 && nt->info32 == 0 ? 0 : nt->info32;
}

int rt_gpu_channel_error(rt_gpu *g, char *text, size_t n)
{
    if (!g->notifier || !g->notifier->cpu)
        return 0;
    const volatile rt_nv_notification *nt = (const volatile rt_nv_notification *)g->notifier->cpu;
    uint16_t status = nt->status;
    uint32_t info32 = nt->info32;
    if (status == 0 && info32 == 0)
        return 0;
    if (text && n)
        snprintf(text, n, "channel error notifier: status 0x%04x, info32 %u = Xid %u: %s, info16 0x%04x",
                 status, info32, info32, rt_xid_name(info32), nt->info16);
    return 1;
}

int rt_gpu_wait(rt_gpu *g, const volatile void *sem, uint64_t value, uint32_t timeout_ms)
{
    if (!g->open)
        return fail(g, RT_EXIT_INTERNAL, "rt_gpu_wait on a GPU that is not open");
    const volatile uint64_t *s = (const volatile uint64_t *)sem;
    double start = now_ms();
    unsigned spins = 0;
    char err[256];
    for (;;) {
        if (*s >= value)
            return 0;
        if ((++spins & 1023u) == 0) {
            if (rt_gpu_channel_error(g, err, sizeof err))
                return fail(g, RT_EXIT_GPU_FAULT, "GPU fault while waiting for the semaphore at GPU VA 0x%llx to "
                            "reach %llu (it holds %llu): %s; what to do: %s", (unsigned long long)rt_gpu_va_of(g, sem),
                            (unsigned long long)value, (unsigned long long)*s, err, rt_xid_advice(rt_gpu_xid(g)));
            if (now_ms() - start > timeout_ms) {
                if (!rt_gpu_channel_error(g, err, sizeof err))
                    snprintf(err, sizeof err, "channel error notifier clean (status 0, info32 0)");
                return fail(g, RT_EXIT_GPU_FAULT, "GPU timeout after %u ms waiting for the semaphore at GPU VA 0x%llx "
                            "to reach %llu (it holds %llu); GPGet %u, GPPut %u; %s; what to do: %s", timeout_ms,
                            (unsigned long long)rt_gpu_va_of(g, sem), (unsigned long long)value,
                            (unsigned long long)*s, g->userd[RT_USERD_GP_GET / 4], g->gp_put, err,
                            rt_xid_advice(rt_gpu_xid(g)));
            }
            if ((spins & 0xFFFFu) == 0)
                sched_yield();
        }
    }
}

int rt_gpu_drain(rt_gpu *g, uint32_t timeout_ms)
{
    if (!g->open)
        return fail(g, RT_EXIT_INTERNAL, "rt_gpu_drain on a GPU that is not open");
    uint32_t n = g->ring_entries;
    double start = now_ms();
    char err[256];
    while (g->userd[RT_USERD_GP_GET / 4] % n != g->gp_put) {
        if (rt_gpu_channel_error(g, err, sizeof err))
            return fail(g, RT_EXIT_GPU_FAULT, "GPU fault while waiting for the ring to drain after the schedule "
                        "(GPGet %u, GPPut %u): %s; what to do: %s", g->userd[RT_USERD_GP_GET / 4], g->gp_put, err,
                        rt_xid_advice(rt_gpu_xid(g)));
        if (now_ms() - start > timeout_ms) {
            snprintf(err, sizeof err, "channel error notifier clean (status 0, info32 0)");
            return fail(g, RT_EXIT_GPU_FAULT, "after the schedule, %u ms on, the ring's GPGet is %u, its GPPut %u: "
                        "the GPU stopped fetching; %s; what to do: %s", timeout_ms, g->userd[RT_USERD_GP_GET / 4],
                        g->gp_put, err, rt_xid_advice(0));
        }
        sched_yield();
    }
    if (g->cfg.verbose) {
        char what[96];
        snprintf(what, sizeof what, "ring drained: GPGet reached GPPut %u after %.3f ms", g->gp_put, now_ms() - start);
        rt_gpu_trace(g, what);
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* teardown                                                            */

/* RM bring-up: nothing of ours outlives the root client, so one RM_FREE of it
 * releases the channel, the memory, their GPU mappings and the VA space; the CPU
 * mappings and descriptors are ours to drop. */
static void close_rm(rt_gpu *g)
{
    char why[96];
    for (int i = RT_GPU_MAX_MEMS - 1; i >= 0; i--) {
        rt_gpu_mem *m = &g->mems[i];
        if (m->cpu)
            munmap(m->cpu, m->size);
        if (m->map_fd >= 0)
            close(m->map_fd);
        memset(m, 0, sizeof *m);
        m->map_fd = -1;
    }
    g->notifier = g->channel_mem = NULL;
    g->ring = NULL;
    g->userd = NULL;
    if (g->usermode)
        munmap((void *)g->usermode, RT_USERMODE_MAP_BYTES);
    g->usermode = NULL;
    if (g->usermode_fd >= 0)
        close(g->usermode_fd);
    g->usermode_fd = -1;
    step(g, "close: CPU mappings dropped");
    int had_client = g->h_client != 0;
    if (had_client) {
        nv_result r = rm_free(g, 0, g->h_client);
        if (!nv_ok(r))
            warn("NV_ESC_RM_FREE of the root client: %s", nv_why(r, why, sizeof why));
    }
    g->h_client = g->h_device = g->h_subdevice = g->h_usermode = g->h_vaspace = 0;
    g->h_group = g->h_ctxshare = g->h_channel = g->h_compute = 0;
    step(g, had_client ? "close: root client freed (and every object under it)"
                       : "close: no root client was allocated");
    if (g->fd_dev >= 0) close(g->fd_dev);
    if (g->fd_ctl >= 0) close(g->fd_ctl);
    g->fd_dev = g->fd_ctl = -1;
    step(g, "close: descriptors closed");
    g->open = 0;
}

void rt_gpu_close(rt_gpu *g)
{
    char why[96];
    nv_result r;
    if (g->fd_ctl < 0 && g->fd_uvm < 0 && !g->h_client) {
        g->open = 0;
        return;
    }
    if (g->mapping == RT_GPU_MAPPING_RM) {
        close_rm(g);
        return;
    }
    if (g->uvm_channel_registered) {
        rt_uvm_unregister_channel u;
        memset(&u, 0, sizeof u);
        memcpy(u.gpuUuid, g->uuid, 16);
        u.hClient = g->h_client;
        u.hChannel = g->h_channel;
        r = uvm_ioctl(g, UVM_UNREGISTER_CHANNEL, &u, &u.rmStatus);
        if (!nv_ok(r))
            warn("UVM_UNREGISTER_CHANNEL: %s", nv_why(r, why, sizeof why));
        g->uvm_channel_registered = 0;
    }
    step(g, "close: channel unregistered from UVM");
    free_object(g, g->h_channel, &g->h_compute, g->target ? g->target->compute_class_name : "compute object");
    free_object(g, g->h_group, &g->h_channel, g->target ? g->target->gpfifo_class_name : "channel");
    free_object(g, g->h_group, &g->h_ctxshare, "FERMI_CONTEXT_SHARE_A");
    free_object(g, g->h_device, &g->h_group, "KEPLER_CHANNEL_GROUP_A");
    g->ring = NULL;
    g->userd = NULL;
    for (int i = RT_GPU_MAX_MEMS - 1; i >= 0; i--)
        mem_release(g, &g->mems[i]);
    g->notifier = g->channel_mem = NULL;
    step(g, "close: channel freed, memory released");
    if (g->uvm_vaspace_registered) {
        rt_uvm_unregister_gpu_vaspace u;
        memset(&u, 0, sizeof u);
        memcpy(u.gpuUuid, g->uuid, 16);
        r = uvm_ioctl(g, UVM_UNREGISTER_GPU_VASPACE, &u, &u.rmStatus);
        if (!nv_ok(r))
            warn("UVM_UNREGISTER_GPU_VASPACE: %s", nv_why(r, why, sizeof why));
        g->uvm_vaspace_registered = 0;
    }
    if (g->uvm_gpu_registered) {
        rt_uvm_unregister_gpu u;
        memset(&u, 0, sizeof u);
        memcpy(u.gpu_uuid, g->uuid, 16);
        r = uvm_ioctl(g, UVM_UNREGISTER_GPU, &u, &u.rmStatus);
        if (!nv_ok(r))
            warn("UVM_UNREGISTER_GPU: %s", nv_why(r, why, sizeof why));
        g->uvm_gpu_registered = 0;
    }
    free_object(g, g->h_device, &g->h_vaspace, "FERMI_VASPACE_A");
    {
        void *um = (void *)g->usermode;
        unmap_cpu(g, g->h_device, g->h_usermode, &um, RT_USERMODE_MAP_BYTES, &g->usermode_fd,
                  g->usermode_linear, "usermode");
        g->usermode = NULL;
    }
    free_object(g, g->h_subdevice, &g->h_usermode, "usermode object");
    free_object(g, g->h_device, &g->h_subdevice, "NV20_SUBDEVICE_0");
    step(g, "close: UVM registrations undone, usermode unmapped");
    free_object(g, g->h_client, &g->h_device, "NV01_DEVICE_0");
    step(g, "close: device freed");
    if (g->h_client) {
        r = rm_free(g, 0, g->h_client);
        if (!nv_ok(r))
            warn("NV_ESC_RM_FREE of the root client: %s", nv_why(r, why, sizeof why));
        g->h_client = 0;
    }
    if (g->fd_dev >= 0) close(g->fd_dev);
    if (g->fd_uvm_mm >= 0) close(g->fd_uvm_mm);
    if (g->fd_uvm >= 0) close(g->fd_uvm);
    if (g->fd_ctl >= 0) close(g->fd_ctl);
    g->fd_dev = g->fd_uvm_mm = g->fd_uvm = g->fd_ctl = -1;
    step(g, "close: descriptors closed");
    g->open = 0;
}
