/* The driver shim: brings an NVIDIA GPU up through raw ioctls on
 * /dev/nvidiactl, /dev/nvidiaN and /dev/nvidia-uvm (no libcuda), maps memory
 * at the plan's fixed GPU virtual addresses, submits GPFIFO entries and
 * waits on semaphores.  See docs/runtime.md for the bring-up order.
 *
 * Every function that can fail returns 0 or a RT_EXIT_* code (rt_exit.h),
 * prints one message to stderr naming the ioctl / object and the NV_STATUS
 * by name (unless rt_gpu_config.quiet), and keeps that message in gpu->error.  A failed rt_gpu_open has
 * already freed what it allocated; rt_gpu_close frees everything else, in
 * reverse order, and is safe to call on a zeroed or half-open struct.
 */
#ifndef RT_NV_SHIM_H
#define RT_NV_SHIM_H

#include <stddef.h>
#include <stdint.h>

#include "rt_exit.h"
#include "nv_classes.h"

#define RT_GPU_MAX_MEMS 64

enum rt_mem_location {
    RT_MEM_SYSTEM = 0,   /* NV01_MEMORY_SYSTEM: host pages, GPU reads them over PCIe (snooped) */
    RT_MEM_VIDEO = 1,    /* NV01_MEMORY_LOCAL_USER: HBM, CPU-mapped through BAR1 (write-combined) */
};

typedef struct rt_gpu_mem {
    uint32_t handle;          /* RM memory object; 0 when the slot is free */
    int      location;        /* enum rt_mem_location */
    uint64_t gpu_va;
    uint64_t size;            /* bytes, a multiple of 4 KiB */
    void    *cpu;             /* the CPU mapping (== gpu_va when the identity placement succeeded) */
    uint64_t rm_linear;       /* pLinearAddress RM returned for the CPU mapping */
    int      map_fd;          /* the descriptor the CPU mapping goes through, -1 none */
    int      range_created;   /* UVM_CREATE_EXTERNAL_RANGE done (UVM_FREE undoes it and the UVM mapping) */
    uint32_t virt_handle;     /* NV50_MEMORY_VIRTUAL reserving [gpu_va, gpu_va + size) (RM mapping) */
    int      rm_dma_mapped;   /* NV_ESC_RM_MAP_MEMORY_DMA done into virt_handle */
    int      huge_pages;      /* allocated and mapped in 2 MiB pages (rt_gpu_alloc_at) */
} rt_gpu_mem;

/* How GPU virtual addresses are backed (docs/runtime.md "Two bring-ups").
 *   RM:  the RM owns the VA space's page tables; each allocation is mapped with
 *        NV50_MEMORY_VIRTUAL (fixed address) + NV_ESC_RM_MAP_MEMORY_DMA.  No
 *        /dev/nvidia-uvm at all, so no UVM_REGISTER_GPU (164 ms on an idle H200).
 *   UVM: the VA space is externally owned by UVM (page faulting on); every
 *        mapping is UVM_CREATE_EXTERNAL_RANGE + UVM_MAP_EXTERNAL_ALLOCATION.
 *        A plan that declares memory inside a UVM external range needs this.
 *   AUTO (0, the default): RM; when the RM bring-up is refused after the device
 *        was allocated, a warning names the refusal and UVM is used instead.
 * BOBC_GPU_MAPPING=rm|uvm in the environment overrides AUTO (not a plan's UVM). */
enum rt_gpu_mapping {
    RT_GPU_MAPPING_AUTO = 0,
    RT_GPU_MAPPING_RM = 1,
    RT_GPU_MAPPING_UVM = 2,
};

/* What the plan asks for, when the host's generated source defines it (a plan that
 * declares memory inside a UVM external range: `const int rt_plan_gpu_mapping =
 * RT_GPU_MAPPING_UVM;`).  Used when rt_gpu_open gets no config or one that says AUTO;
 * left undefined (weak), the plan needs no UVM. */
extern const int rt_plan_gpu_mapping __attribute__((weak));

/* BOBC_GPU_MAPPING's setting (rm or uvm; unset or empty: AUTO).  0 with *mapping set, or
 * RT_EXIT_USAGE with a message in err (`err_bytes` bytes) for any other value.  rt_gpu_open
 * reads it so; a host calls it at start-up, so that a misspelt value is a usage error (exit 2)
 * on any machine, before any input is read or any GPU looked for (docs/runtime.md). */
int rt_gpu_mapping_setting(int *mapping, char *err, size_t err_bytes);

/* Where the shim puts its own objects: GPU VAs a plan must leave free.
 * Zero fields take the defaults (RT_GPU_DEFAULT_*). */
typedef struct rt_gpu_config {
    uint64_t channel_va;       /* GPFIFO ring + USERD allocation */
    uint64_t notifier_va;      /* the channel's error notifier */
    uint64_t uvm_channel_va;   /* range UVM_REGISTER_CHANNEL maps the channel's buffers into */
    uint64_t uvm_channel_bytes;
    uint32_t ring_entries;     /* GPFIFO entries, a power of two */
    int      channel_location; /* enum rt_mem_location for the ring + USERD (default system) */
    int      mapping;          /* enum rt_gpu_mapping (0 = AUTO) */
    int      verbose;          /* 1: print each bring-up step to stderr, with the milliseconds
                                  since rt_gpu_open (also set by BOBC_GPU_TRACE=1) */
    int      quiet;            /* 1: a failure is not printed, only kept in gpu->error: the caller
                                  reports it in its own one line (the native host) */
    const uint8_t *uuid;       /* 16 bytes: open the GPU the driver reports with this UUID
                                  (NV0000_CTRL_CMD_GPU_GET_UUID_FROM_GPU_ID per card); NULL: the
                                  first card.  None matching: RT_EXIT_NO_GPU naming every UUID seen */
    uint32_t timeslice_us;     /* the channel group's timeslice (NVA06C_CTRL_CMD_SET_TIMESLICE); 0: the
                                  driver's default (1024 us).  On the H200 it does not change what a
                                  switch between two processes' groups costs (~150 us, measured:
                                  docs/native-host.md) */
    /* join_client nonzero: make no channel group; join group join_group of RM client join_client
     * (another process's, shared with share_group): NV_ESC_RM_DUP_OBJECT, then our own context
     * share (our VA space) and channel in it.  One group is one GPU context: no context switch
     * between the two processes' work. */
    uint32_t join_client;
    uint32_t join_group;
    int      share_group;      /* 1: let processes of the same user join our channel group (RM_SHARE) */
    int      compute_preemption; /* 0: the driver's; else 1 + the compute preemption mode (0 WFI, 1 CTA,
                                    2 CILP: NV2080_CTRL_CMD_GR_SET_CTXSW_PREEMPTION_MODE) */
    int      video_small_pages; /* 1: video memory always in 4 KiB pages (kept for measuring); 0: in
                                   2 MiB pages wherever the buffer's GPU VA and size are 2 MiB
                                   multiples (rt_gpu_alloc_at) */
} rt_gpu_config;

#define RT_GPU_DEFAULT_CHANNEL_VA        0x00FC00000000ull
#define RT_GPU_DEFAULT_NOTIFIER_VA       0x00FC80000000ull
#define RT_GPU_DEFAULT_UVM_CHANNEL_VA    0x00FD00000000ull
#define RT_GPU_DEFAULT_UVM_CHANNEL_BYTES 0x4000000ull
#define RT_GPU_DEFAULT_RING_ENTRIES      1024u
/* Plans keep their GPU VAs outside [RT_GPU_RESERVED_LO, RT_GPU_RESERVED_HI),
 * and outside the compute windows their prologue sets (on Hopper the tested
 * ones are 0xfe_0000_0000 shared and 0xff_0000_0000 local: docs/runtime.md). */
#define RT_GPU_RESERVED_LO               0x00FC00000000ull
#define RT_GPU_RESERVED_HI               0x00FE00000000ull

typedef struct rt_gpu {
    const rt_target_facts *target;
    rt_gpu_config cfg;
    int fd_ctl, fd_dev, fd_uvm, fd_uvm_mm;
    uint32_t h_client, h_device, h_subdevice, h_usermode, h_vaspace;
    uint32_t h_group, h_ctxshare, h_channel, h_compute;
    uint32_t next_handle;
    unsigned gpu_id, minor, device_instance;
    uint16_t pci_device_id;
    char driver_version[64];
    uint8_t uuid[16];
    int mapping;                     /* the bring-up in use: RT_GPU_MAPPING_RM or _UVM */
    int uvm_initialized, uvm_gpu_registered, uvm_vaspace_registered, uvm_channel_registered;
    volatile uint8_t *usermode;      /* doorbell page */
    int usermode_fd;
    uint64_t usermode_linear;
    rt_gpu_mem mems[RT_GPU_MAX_MEMS];
    rt_gpu_mem *notifier;           /* NvNotification[] the RM writes channel errors into */
    rt_gpu_mem *channel_mem;        /* ring at 0, USERD at ring_entries * 8 */
    volatile uint64_t *ring;
    volatile uint32_t *userd;
    uint32_t ring_entries;
    uint32_t gp_put;
    uint32_t work_submit_token;
    int open;                        /* 1 once bring-up completed */
    double opened_ms;                /* CLOCK_MONOTONIC at rt_gpu_open, for traced steps */
    char error[768];
} rt_gpu;

/* Bring the GPU up for `target` (NULL config = defaults).  Returns 0,
 * RT_EXIT_NO_GPU (no device, driver branch refused, class missing, any
 * bring-up ioctl failed) or RT_EXIT_INTERNAL. */
int rt_gpu_open(rt_gpu *gpu, const rt_target_facts *target, const rt_gpu_config *config);
/* With tracing on (rt_gpu_config.verbose, or BOBC_GPU_TRACE=1), print `what` with the
 * milliseconds since rt_gpu_open, as the bring-up steps are printed. */
void rt_gpu_trace(const rt_gpu *g, const char *what);

/* The bring-up's class check (step 6, docs/runtime.md): 0 when `list` (the n classes
 * NV0080_CTRL_CMD_GPU_GET_CLASSLIST gave) holds the target's GPFIFO, compute and usermode
 * classes; else RT_EXIT_NO_GPU and `message` names the missing classes, the GPU found (its
 * compute class, chips and compute capability), the target built for, and what to do:
 * rebuild with --target of the target that runs on it, or, when none does, run the host on
 * a GPU of its own target. */
int rt_judge_class_list(const rt_target_facts *target, const uint32_t *list, uint32_t n, unsigned pci_device_id,
                        char *message, size_t size);

/* The bring-up's branch rule (step 2, docs/runtime.md): 0 when `version` (the driver's, as
 * GET_BUILD_VERSION_V2 or /proc/driver/nvidia/version gave it) is BRANCH.MINOR[.PATCH] of the
 * target's driver_branch; else RT_EXIT_NO_GPU and `message` names the version, its branch and
 * the host's, or says the version cannot be read. */
int rt_judge_driver_version(const rt_target_facts *target, const char *version, char *message, size_t size);

/* 1 when /dev/nvidiactl exists (a cheap check before rt_gpu_open). */
int rt_gpu_present(void);

/* Allocate `size` bytes (rounded up to 4 KiB) of `location` memory, map it
 * for the CPU (*host_ptr) and for the GPU at exactly gpu_va (4 KiB aligned).
 * The CPU mapping is placed at the same address when that is free. */
int rt_gpu_alloc_at(rt_gpu *gpu, uint64_t gpu_va, uint64_t size, int location, void **host_ptr);

/* Whether the nonempty ranges [a, a + a_bytes) and [b, b + b_bytes) share a byte, the ends taken
 * exactly (a range may run past 2^64): no sum is formed, so none can wrap.  A GPU VA or host
 * address and extent come from a program, which may name one near 2^64. */
static inline int rt_ranges_overlap(uint64_t a, uint64_t a_bytes, uint64_t b, uint64_t b_bytes)
{
    return a >= b ? a - b < b_bytes : b - a < a_bytes;
}

/* The GPU VA of a CPU pointer inside one of this gpu's allocations; 0 if none. */
uint64_t rt_gpu_va_of(const rt_gpu *gpu, const volatile void *host_ptr);

/* A GPFIFO entry for `dwords` method words at GPU VA `pushbuffer_va`
 * (4-byte aligned, below 2^40): GET 31:2, GET_HI 39:32, LENGTH 62:42. */
uint64_t rt_gpfifo_entry(uint64_t pushbuffer_va, uint32_t dwords);

/* Write one ring entry at GPPut, advance GPPut in USERD, fence, ring the
 * doorbell with the work-submit token. */
int rt_gpu_submit(rt_gpu *gpu, uint64_t gpfifo_entry);

/* Wait until the 64-bit semaphore at `sem` (a CPU pointer into one of this
 * gpu's allocations) holds a value >= `value`.  On timeout or a channel
 * error, reads the error notifier and reports it by name: RT_EXIT_GPU_FAULT. */
int rt_gpu_wait(rt_gpu *gpu, const volatile void *sem, uint64_t value, uint32_t timeout_ms);

/* Wait until the GPU has fetched every ring entry issued (USERD's GPGet reaches
 * GPPut).  A submission the host issues without waiting on its semaphore (the
 * pushbuffer's prologue, in a schedule with no Submit) is fetched a while after
 * the doorbell, not at once.  On timeout or a channel error: RT_EXIT_GPU_FAULT,
 * naming GPGet, GPPut and the error notifier. */
int rt_gpu_drain(rt_gpu *gpu, uint32_t timeout_ms);

/* Channel error notifier: 0 and no text while clean, else 1 and a message. */
int rt_gpu_channel_error(rt_gpu *gpu, char *text, size_t text_bytes);

/* The Xid (robust-channel error code) the channel's error notifier holds: 0 while clean. */
uint32_t rt_gpu_xid(const rt_gpu *gpu);

/* An Xid's name (NVIDIA's Xid catalogue; "unlisted RC error" for one the table lacks) and what
 * to do about it (which tool finds the cause: `bobc sim`, dmesg, `bobc inspect`); the advice for
 * 0 is a timeout's, with the notifier clean.  Never NULL.  rt_gpu_wait and rt_gpu_drain end
 * their fault and timeout messages with "; what to do: ADVICE". */
const char *rt_xid_name(uint32_t xid);
const char *rt_xid_advice(uint32_t xid);

/* Release the GPU.  Idempotent.  UVM bring-up: every object in reverse order of
 * creation (the UVM registrations first).  RM bring-up: the CPU mappings, then
 * one NV_ESC_RM_FREE of the root client, which frees every object under it
 * (what the driver does anyway when the process exits), then the descriptors. */
void rt_gpu_close(rt_gpu *gpu);

#endif
