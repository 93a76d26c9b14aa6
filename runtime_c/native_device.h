/* A native program's device session (OpenDevice, Map, LoadImage, Submit,
 * WaitMapped, Release) over the driver shim (nv_shim.h), and the mapped memory
 * the program addresses by the host addresses its Map commands name.
 *
 * The channel (GPFIFO ring, USERD, doorbell) is the session's own, created at
 * OpenDevice in the shim's reserved window; Submit mirrors the entry and GPPut
 * into the plan's ring and USERD words and issues the entry on that channel
 * (docs/native-host.md, "The device session").
 *
 * NATIVE_DEVICE=memory runs a session without a GPU: OpenDevice accepts any
 * UUID, Map gives zeroed host memory, Submit is refused (status 3).  It is how
 * the CPU tests run the memory commands; the reference runner does the same. */
#ifndef RT_NATIVE_DEVICE_H
#define RT_NATIVE_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#include "nv_shim.h"

#define NP_STATUS_DEVICE 3
#define NP_STATUS_WAIT 4
#define NP_MAX_MAPPINGS 48
#define NP_SUBMIT_TIMEOUT_MS 10000

typedef struct {
    uint64_t host, extent, gpu;
    uint8_t *cpu;
    int host_mapped;
    char name[80];              /* the Map's identity as messages name it (its first 64 bytes: np_device_map) */
} np_mapping;

typedef struct {
    int open;
    int memory_only;            /* NATIVE_DEVICE=memory */
    const char *target;         /* "sm_90": the build's target (the host's trailer) */
    rt_gpu gpu;
    int gpu_opened;
    np_mapping maps[NP_MAX_MAPPINGS];
    int map_count;
    char group_file[256];       /* the file this (listening) session published its group in */
} np_session;

int np_device_open(np_session *s, const uint8_t uuid[16], char *err);
int np_device_map(np_session *s, const uint8_t *identity, uint64_t identity_length, uint64_t gpu, uint64_t host,
                  uint64_t extent, int video, char *err);
/* The CPU bytes behind mapped [address, address + bytes), or NULL when that range is
 * not inside one host-mapped buffer. */
uint8_t *np_device_at(np_session *s, uint64_t address, uint64_t bytes);
/* The host-mapped buffer holding byte `address`, or NULL. */
const np_mapping *np_device_buffer(const np_session *s, uint64_t address);
/* Issue `entry` and wait until the 64-bit word at `semaphore` reaches `value`. */
int np_device_submit(np_session *s, uint64_t entry, volatile uint8_t *semaphore, uint64_t value, char *err);
/* Wait until the 64-bit word at `word` is at least `value`, within timeout_ms. */
int np_device_wait(np_session *s, volatile uint8_t *word, uint64_t value, uint64_t timeout_ms, char *err);
void np_device_release(np_session *s);

/* Knobs kept for measuring (docs/native-host.md); neither changes how
 * much a switch between two processes' GPU contexts costs on the H200 (~150 us):
 * NATIVE_GPU_TIMESLICE_US, the session's channel-group timeslice (0 or unset: the driver's
 * default, 1024 us), and NATIVE_GPU_PREEMPTION=wfi|cta|cilp, its compute preemption mode. */
#define NP_TIMESLICE_VARIABLE "NATIVE_GPU_TIMESLICE_US"
#define NP_PREEMPTION_VARIABLE "NATIVE_GPU_PREEMPTION"
/* 4k: video memory in 4 KiB pages (kept for measuring); auto (the default): 2 MiB pages where
 * they fit (rt_gpu_config.video_small_pages) */
#define NP_VIDEO_PAGES_VARIABLE "NATIVE_GPU_VIDEO_PAGES"

/* The pair's GPU context.  Two peers on one GPU, each its own process, RM client, VA space,
 * memory and channel, run in one channel group (one GPU context, as NVIDIA's MPS does):
 * otherwise the GPU switches between the two processes' contexts around nearly every
 * submission, ~150 us a switch on an H200 (docs/native-host.md, "Two peers on one GPU").  When the
 * program connected to a peer on this machine before OpenDevice (judged from the connection, not
 * from the address either was built with: its two ends have one address, or loopback ones -- so a
 * worker 0 at 0.0.0.0 and a worker 1 at 127.0.0.1, or both at this machine's own address, share),
 * the listening peer shares its group (NV_ESC_RM_SHARE, this user's processes) and writes its RM
 * client and group handles to NP_GROUP_FOLDER/bobc-native-group-<UUID>-<reached>, <reached> the
 * address:port the connection reached (the listening end's, one text at both ends);
 * the connecting peer waits for that file (one written after it connected), removes it, and
 * joins the group (NV_ESC_RM_DUP_OBJECT) with its own context share and channel.
 * NATIVE_GPU_SHARE_GROUP: auto (the default; a peer that finds no group to join within 2 s
 * says so on stderr and takes its own), 0 (never: each peer its own group), 1 (required: status 3
 * when it cannot share, saying why -- no peer connected before OpenDevice, a peer on another
 * machine, no group to join -- judged with or without a GPU, NATIVE_DEVICE=memory included).
 * One GPU context: a fault in either peer's channel is a fault of the group (expect both peers
 * to end with status 4; not provoked in the tests). */
#define NP_SHARE_GROUP_VARIABLE "NATIVE_GPU_SHARE_GROUP"
#define NP_GROUP_FOLDER "/dev/shm"
/* np_peer_open's note of the session's peer (before OpenDevice: Connect comes first), read from
 * the connection taken as the peer: `reached`, the address:port it reached (the listening end's
 * own); `ends`, "this end's address -> the peer's" for messages; `same_machine`, whether its two
 * ends have one address or loopback ones; whether this side listened; and when the connection
 * was begun (CLOCK_REALTIME_COARSE, the clock of file times: the group file must be newer). */
struct timespec;
void np_device_note_peer(const char *reached, const char *ends, int same_machine, int listening,
                         const struct timespec *since);

/* NATIVE_PROFILE=1: where a run's time goes.  Each Submit's wait (doorbell to semaphore,
 * grouped by the ring entry it issues: the pushbuffer segment it runs, the first
 * NP_PROFILE_ENTRIES distinct ones each a series of its own, any later one "other"), each
 * Send and each Receive is timed, and so is every gap between two of them (the host's own
 * work, named by the two events around it), and so is every command the program's hooks carry
 * out, by kind (np_profile_command); at exit one line per series goes to stderr:
 * count, total, median, 10th/90th/99th percentile and maximum in microseconds. */
#define NP_PROFILE_ENTRIES 8
enum np_profile_event {
    NP_PROFILE_SUBMIT = 0,                               /* + the entry's slot, up to NP_PROFILE_ENTRIES */
    NP_PROFILE_SEND = NP_PROFILE_ENTRIES + 1,
    NP_PROFILE_RECEIVE,
    NP_PROFILE_EVENTS
};
/* The monotonic clock in microseconds when profiling is on, else 0. */
double np_profile_start(void);
/* One event of `kind` that began at `start` (np_profile_start's value) ends now. */
void np_profile_end(int kind, double start);
/* One device or request command of `code` that began at `start` ends now: at exit, a series per
 * command kind (a Submit's includes its wait; RequestPublish's the checkpoint's sealing and
 * writing), so the host's own work is told apart by what it was. */
void np_profile_command(unsigned code, double start);

#endif
