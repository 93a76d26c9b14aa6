/* See native_device.h. */
#define _GNU_SOURCE
#include "native_device.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "host_settings.h"
#include "native_program.h"

static int say(char *err, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int say(char *err, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, NP_ERR_BYTES, fmt, ap);
    va_end(ap);
    return status;
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* ---- the pair's GPU context (native_device.h, NATIVE_GPU_SHARE_GROUP) ---- */

enum share_mode { SHARE_OFF, SHARE_AUTO, SHARE_REQUIRED };
#define JOIN_WAIT_AUTO_MS 2000
#define JOIN_WAIT_REQUIRED_MS 10000

static struct {
    char reached[32];            /* the address:port the connection reached (one text at both ends) */
    char ends[80];               /* "this end's address -> the peer's", for messages */
    int same_machine;            /* the connection's two ends have one address, or loopback ones */
    int listening;               /* -1: no peer */
    struct timespec connected;   /* when the connection was begun (CLOCK_REALTIME_COARSE, the files' clock) */
} peer_note = { "", "", 0, -1, { 0, 0 } };

void np_device_note_peer(const char *reached, const char *ends, int same_machine, int listening,
                         const struct timespec *since)
{
    snprintf(peer_note.reached, sizeof peer_note.reached, "%s", reached);
    snprintf(peer_note.ends, sizeof peer_note.ends, "%s", ends);
    peer_note.same_machine = same_machine;
    peer_note.listening = listening;
    peer_note.connected = *since;
}

/* Why this session cannot share a GPU context with its peer (whatever the GPU), or NULL when it
 * can: the peer must be connected before OpenDevice and be on this machine. */
static const char *why_not_shared(char *why, size_t size)
{
    if (peer_note.listening < 0)
        return "this program connected to no peer before OpenDevice (a GPU context is shared only with the peer "
               "a program connected to before it opened its GPU)";
    if (!peer_note.same_machine) {
        snprintf(why, size, "its peer is on another machine (the connection %s): a GPU context is shared only by "
                 "peers on one machine", peer_note.ends);
        return why;
    }
    return NULL;
}

static int share_mode(int *mode, char *err)
{
    char shown[RT_SETTING_SHOWN_BYTES + 4];
    const char *v = getenv(NP_SHARE_GROUP_VARIABLE);
    if (!v || !*v || strcmp(v, "auto") == 0)
        *mode = SHARE_AUTO;
    else if (strcmp(v, "0") == 0)
        *mode = SHARE_OFF;
    else if (strcmp(v, "1") == 0)
        *mode = SHARE_REQUIRED;
    else
        return say(err, NP_STATUS_DEVICE, "%s=%s: expected auto (the default), 0 or 1", NP_SHARE_GROUP_VARIABLE,
                   rt_setting_shown(v, shown));
    return 0;
}

static void group_path(const uint8_t uuid[16], char *path, size_t size)
{
    char hex[33];
    for (int i = 0; i < 16; i++)
        snprintf(hex + 2 * i, 3, "%02x", uuid[i]);
    snprintf(path, size, "%s/bobc-native-group-%s-%s", NP_GROUP_FOLDER, hex, peer_note.reached);
}

/* The connecting peer: the listening peer's RM client and group, from a file written
 * after we connected (an older one is another pair's, long gone), within timeout_ms. */
static int await_group(const char *path, uint32_t *client, uint32_t *group, int timeout_ms, char *why)
{
    double deadline = now_ms() + timeout_ms;
    for (;;) {
        struct stat st;
        if (stat(path, &st) == 0 && (st.st_mtim.tv_sec > peer_note.connected.tv_sec ||
                                     (st.st_mtim.tv_sec == peer_note.connected.tv_sec &&
                                      st.st_mtim.tv_nsec >= peer_note.connected.tv_nsec))) {
            FILE *f = fopen(path, "r");
            int got = f ? fscanf(f, "%x %x", client, group) : 0;
            if (f)
                fclose(f);
            if (got == 2 && *client && *group) {
                unlink(path);
                return 0;
            }
        }
        if (now_ms() >= deadline) {
            snprintf(why, NP_ERR_BYTES, "the listening peer (%s) published no GPU context on this GPU in %s within "
                     "%d ms", peer_note.reached, path, timeout_ms);
            return -1;
        }
        struct timespec pause = { 0, 200 * 1000 };
        nanosleep(&pause, NULL);
    }
}

/* The listening peer: its RM client and group, for the connecting peer (atomically). */
static int publish_group(const char *path, const rt_gpu *gpu, char *why)
{
    char temporary[320];
    snprintf(temporary, sizeof temporary, "%s.%d", path, (int)getpid());
    FILE *f = fopen(temporary, "w");
    int bad = !f || fprintf(f, "%x %x\n", gpu->h_client, gpu->h_group) < 0;
    if (f && fclose(f) != 0)
        bad = 1;
    if (bad || rename(temporary, path) != 0) {
        snprintf(why, NP_ERR_BYTES, "cannot write %s: %s", path, strerror(errno));
        unlink(temporary);
        return -1;
    }
    return 0;
}

/* The NATIVE_GPU_* settings, judged when OpenDevice runs (status 3), by the start-up settings'
 * rules (host_settings.h): a number is ASCII digits alone, a value is shown on one line, cut. */
static int read_config(rt_gpu_config *config, char *err)
{
    char shown[RT_SETTING_SHOWN_BYTES + 4];
    const char *preemption = getenv(NP_PREEMPTION_VARIABLE);
    if (preemption && *preemption) {
        static const char *const modes[] = { "wfi", "cta", "cilp" };
        for (int k = 0; k < 3; k++)
            if (strcmp(preemption, modes[k]) == 0)
                config->compute_preemption = k + 1;
        if (!config->compute_preemption)
            return say(err, NP_STATUS_DEVICE, "%s=%s: expected wfi, cta or cilp", NP_PREEMPTION_VARIABLE,
                       rt_setting_shown(preemption, shown));
    }
    const char *timeslice = getenv(NP_TIMESLICE_VARIABLE);
    if (timeslice && *timeslice) {
        unsigned long long us;
        if (!rt_setting_decimal(timeslice, 1000000, &us))
            return say(err, NP_STATUS_DEVICE, "%s=%s: expected microseconds, 0 to 1000000 (0: the driver's default)",
                       NP_TIMESLICE_VARIABLE, rt_setting_shown(timeslice, shown));
        config->timeslice_us = (uint32_t)us;
    }
    const char *pages = getenv(NP_VIDEO_PAGES_VARIABLE);
    if (pages && *pages) {
        if (strcmp(pages, "4k") == 0)
            config->video_small_pages = 1;
        else if (strcmp(pages, "auto") != 0)
            return say(err, NP_STATUS_DEVICE, "%s=%s: expected 4k or auto", NP_VIDEO_PAGES_VARIABLE,
                       rt_setting_shown(pages, shown));
    }
    return 0;
}

int np_device_open(np_session *s, const uint8_t uuid[16], char *err)
{
    if (s->open)
        return say(err, NP_STATUS_DEVICE, "a device session is already open; Release it first");
    /* the settings are checked first, with or without a GPU: a misspelt one is refused alike */
    rt_gpu_config config;
    memset(&config, 0, sizeof config);
    /* 16 zero bytes: the first GPU the driver lists (a request program opens the GPU as the plan host
     * does; docs/native-host.md) */
    static const uint8_t any[16];
    config.uuid = memcmp(uuid, any, 16) == 0 ? NULL : uuid;
    /* a failure is this host's one line ("native: command N (OpenDevice): ..."), not the shim's too */
    config.quiet = 1;
    int share = SHARE_OFF, rc;
    if ((rc = share_mode(&share, err)) || (rc = read_config(&config, err)))
        return rc;
    /* NATIVE_GPU_SHARE_GROUP=1 that cannot be honoured is refused, with or without a GPU (a memory
     * session is where a pair's settings are tried first), never ignored */
    char reason[NP_ERR_BYTES];
    const char *unshared = why_not_shared(reason, sizeof reason);
    if (share == SHARE_REQUIRED && unshared)
        return say(err, NP_STATUS_DEVICE, "%s=1: no GPU context can be shared: %s; unset %s (auto: the peers share "
                   "when they can) or set it to 0", NP_SHARE_GROUP_VARIABLE, unshared, NP_SHARE_GROUP_VARIABLE);
    s->memory_only = rt_setting_choice(RT_SETTING_DEVICE, 1) == 0;    /* memory, gpu: 0, 1 */
    if (s->memory_only) {
        s->open = 1;
        return 0;
    }
    const rt_target_facts *target = rt_target_named(s->target);
    if (!target)
        return say(err, NP_STATUS_DEVICE, "this host was built for target %s, which this runtime does not know",
                   s->target);
    /* only a peer on this machine, connected before OpenDevice, may share our context (judged from
     * the connection: a worker 0 built with 0.0.0.0 and a worker 1 with 127.0.0.1 share); and with
     * no NVIDIA driver at all there is no context to share: no wait for the peer's, the bring-up's
     * own "no GPU" is the one line said (probe s27, finding 11) */
    if (unshared || !rt_gpu_present())
        share = SHARE_OFF;
    char path[256] = "", why[NP_ERR_BYTES] = "", alone[NP_ERR_BYTES + 256] = "";
    if (share != SHARE_OFF) {
        group_path(uuid, path, sizeof path);
        if (peer_note.listening)
            config.share_group = 1;
        else if (await_group(path, &config.join_client, &config.join_group,
                             share == SHARE_REQUIRED ? JOIN_WAIT_REQUIRED_MS : JOIN_WAIT_AUTO_MS, why)) {
            if (share == SHARE_REQUIRED)
                return say(err, NP_STATUS_DEVICE, "%s=1: %s; start the listening peer on this GPU with %s unset or "
                           "1 (a peer on another GPU cannot share: then unset it here or set it to 0)",
                           NP_SHARE_GROUP_VARIABLE, why, NP_SHARE_GROUP_VARIABLE);
            /* said once the session's own context is up: a bring-up that fails says only why */
            snprintf(alone, sizeof alone, "native: %s; this session takes a GPU context of its own (the GPU switches "
                     "between the peers' contexts, ~150 us a switch on an H200; %s=0 skips the wait)\n", why,
                     NP_SHARE_GROUP_VARIABLE);
        }
    }
    memset(&s->gpu, 0, sizeof s->gpu);
    rc = rt_gpu_open(&s->gpu, target, &config);
    if (rc && config.join_client && share == SHARE_AUTO) {
        fprintf(stderr, "native: joining the listening peer's GPU context failed (%s); this session takes a GPU "
                "context of its own\n", s->gpu.error);
        config.join_client = config.join_group = 0;
        memset(&s->gpu, 0, sizeof s->gpu);
        rc = rt_gpu_open(&s->gpu, target, &config);
    }
    if (rc) {
        rt_gpu_close(&s->gpu);
        return say(err, NP_STATUS_DEVICE, "%s", s->gpu.error[0] ? s->gpu.error : "the GPU could not be opened");
    }
    s->gpu_opened = 1;
    s->open = 1;
    if (alone[0])
        fputs(alone, stderr);
    if (config.share_group) {
        if (publish_group(path, &s->gpu, why) == 0)
            snprintf(s->group_file, sizeof s->group_file, "%s", path);
        else if (share == SHARE_REQUIRED)
            return say(err, NP_STATUS_DEVICE, "%s=1: %s", NP_SHARE_GROUP_VARIABLE, why);
        else
            fprintf(stderr, "native: %s; the peer will take a GPU context of its own\n", why);
    }
    return 0;
}

int np_device_map(np_session *s, const uint8_t *identity, uint64_t identity_length, uint64_t gpu, uint64_t host,
                  uint64_t extent, int video, char *err)
{
    char name[80];
    snprintf(name, sizeof name, "%.*s", (int)(identity_length < 64 ? identity_length : 64), (const char *)identity);
    if (!s->open)
        return say(err, NP_STATUS_DEVICE, "buffer \"%s\": no device session is open (OpenDevice first)", name);
    if (s->map_count == NP_MAX_MAPPINGS)
        return say(err, NP_STATUS_DEVICE, "buffer \"%s\": more than %d buffers", name, NP_MAX_MAPPINGS);
    if (extent == 0 || extent > ((uint64_t)1 << 40))
        return say(err, NP_STATUS_DEVICE, "buffer \"%s\": extent %llu (1 byte to 1 TiB)", name,
                   (unsigned long long)extent);
    for (int i = 0; i < s->map_count; i++) {
        const np_mapping *m = &s->maps[i];
        /* both buffers named, with their ranges: the Map that clashes need not be the one before */
        if (host && m->host_mapped && rt_ranges_overlap(host, extent, m->host, m->extent))
            return say(err, NP_STATUS_DEVICE, "buffer \"%s\": host range [0x%llx, +0x%llx) overlaps buffer \"%s\" "
                       "[0x%llx, +0x%llx), mapped earlier (give each Map a host range of its own)", name,
                       (unsigned long long)host, (unsigned long long)extent, m->name, (unsigned long long)m->host,
                       (unsigned long long)m->extent);
    }
    np_mapping *m = &s->maps[s->map_count];
    memset(m, 0, sizeof *m);
    void *cpu = NULL;
    if (s->memory_only) {
        uint64_t rounded = (extent + 4095) & ~(uint64_t)4095;
        cpu = aligned_alloc(4096, rounded);
        if (!cpu)
            return say(err, NP_STATUS_DEVICE, "buffer \"%s\": out of memory (%llu bytes)", name,
                       (unsigned long long)extent);
        memset(cpu, 0, rounded);
    } else {
        int rc = rt_gpu_alloc_at(&s->gpu, gpu, extent, video ? RT_MEM_VIDEO : RT_MEM_SYSTEM, &cpu);
        if (rc)
            return say(err, NP_STATUS_DEVICE, "buffer \"%s\" at GPU 0x%llx: %s", name, (unsigned long long)gpu,
                       s->gpu.error);
        /* a mapped buffer starts zeroed, whatever the driver's pages held before (as the plan host's
         * buffers and the memory-only mode's do): a plan may count on zeros it never wrote, e.g. the
         * split products' tickets (docs/native-host.md) */
        memset(cpu, 0, extent);
    }
    m->host = host;
    m->extent = extent;
    m->gpu = gpu;
    m->cpu = cpu;
    m->host_mapped = host != 0;
    snprintf(m->name, sizeof m->name, "%s", name);
    s->map_count++;
    return 0;
}

uint8_t *np_device_at(np_session *s, uint64_t address, uint64_t bytes)
{
    for (int i = 0; i < s->map_count; i++) {
        np_mapping *m = &s->maps[i];
        if (m->host_mapped && address >= m->host && address - m->host <= m->extent &&
            bytes <= m->extent - (address - m->host))
            return m->cpu + (address - m->host);
    }
    return NULL;
}

const np_mapping *np_device_buffer(const np_session *s, uint64_t address)
{
    for (int i = 0; i < s->map_count; i++) {
        const np_mapping *m = &s->maps[i];
        if (m->host_mapped && address >= m->host && address - m->host < m->extent)
            return m;
    }
    return NULL;
}

static uint64_t load64(volatile uint8_t *p)
{
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    uint64_t v;
    memcpy(&v, (const void *)p, 8);
    return v;
}

/* ---- NATIVE_PROFILE ---- */

#define PROFILE_SAMPLES (1 << 17)
#define PROFILE_NONE NP_PROFILE_EVENTS

typedef struct {
    float *us;
    uint32_t count;
    double total;
} profile_series;

static struct {
    int state;                  /* 0 unknown, 1 on, -1 off */
    double last_end;            /* when the last event ended */
    int last_kind;
    uint64_t entries[NP_PROFILE_ENTRIES];   /* the ring entries with a series of their own */
    int entry_count;
    profile_series events[NP_PROFILE_EVENTS];
    profile_series gaps[NP_PROFILE_EVENTS + 1][NP_PROFILE_EVENTS];
    profile_series commands[NP_CODE_COUNT];
} profile;

/* An event's name: a Submit's by its ring entry, the others by kind ("start": before the first). */
static void profile_name(int kind, char *name, size_t size)
{
    if (kind >= NP_PROFILE_SUBMIT && kind < NP_PROFILE_SUBMIT + profile.entry_count)
        snprintf(name, size, "submit of entry 0x%llx wait", (unsigned long long)profile.entries[kind - NP_PROFILE_SUBMIT]);
    else if (kind == NP_PROFILE_SUBMIT + NP_PROFILE_ENTRIES)
        snprintf(name, size, "submit of another entry wait");
    else
        snprintf(name, size, "%s", kind == NP_PROFILE_SEND ? "send" : kind == NP_PROFILE_RECEIVE ? "receive" : "start");
}

/* A Submit's event kind: its entry's series, made on first sight while there is room. */
static int profile_submit_kind(uint64_t entry)
{
    for (int k = 0; k < profile.entry_count; k++)
        if (profile.entries[k] == entry)
            return NP_PROFILE_SUBMIT + k;
    if (profile.entry_count < NP_PROFILE_ENTRIES) {
        profile.entries[profile.entry_count] = entry;
        return NP_PROFILE_SUBMIT + profile.entry_count++;
    }
    return NP_PROFILE_SUBMIT + NP_PROFILE_ENTRIES;
}

static void profile_add(profile_series *series, double us)
{
    if (!series->us && !(series->us = malloc(PROFILE_SAMPLES * sizeof(float))))
        return;
    if (series->count < PROFILE_SAMPLES)
        series->us[series->count] = (float)us;
    series->count++;
    series->total += us;
}

static int by_value(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

static void profile_line(const char *what, profile_series *series)
{
    if (!series->count)
        return;
    uint32_t n = series->count < PROFILE_SAMPLES ? series->count : PROFILE_SAMPLES;
    qsort(series->us, n, sizeof(float), by_value);
#define AT(q) series->us[(uint32_t)((n - 1) * (q))]
    fprintf(stderr, "native: profile: %-58s n %7u  total %9.2f ms  median %8.2f  p10 %8.2f  p90 %8.2f  p99 %8.2f  "
            "max %9.2f us\n", what, series->count, series->total / 1e3, AT(0.5), AT(0.1), AT(0.9), AT(0.99),
            series->us[n - 1]);
#undef AT
}

static void profile_report(void)
{
    char first[64], second[64], what[160];
    for (unsigned code = 0; code < NP_CODE_COUNT; code++) {
        snprintf(what, sizeof what, "command %s", np_code_name(code));
        profile_line(what, &profile.commands[code]);
    }
    for (int k = 0; k < NP_PROFILE_EVENTS; k++) {
        profile_name(k, first, sizeof first);
        profile_line(first, &profile.events[k]);
    }
    for (int a = 0; a <= NP_PROFILE_EVENTS; a++)
        for (int b = 0; b < NP_PROFILE_EVENTS; b++) {
            profile_name(a, first, sizeof first);
            profile_name(b, second, sizeof second);
            snprintf(what, sizeof what, "host between %s and %s", first, second);
            profile_line(what, &profile.gaps[a][b]);
        }
}

double np_profile_start(void)
{
    if (!profile.state) {
        /* "1" only: the native host refuses any value but 0 and 1 at start-up (host_settings.h) */
        profile.state = rt_setting_choice(RT_SETTING_PROFILE, 0) == 1 ? 1 : -1;
        profile.last_kind = PROFILE_NONE;
        if (profile.state > 0)
            atexit(profile_report);
    }
    if (profile.state < 0)
        return 0;
    return now_ms() * 1e3;
}

void np_profile_end(int kind, double start)
{
    if (profile.state <= 0 || kind < 0 || kind >= NP_PROFILE_EVENTS)
        return;
    double end = now_ms() * 1e3;
    profile_add(&profile.events[kind], end - start);
    if (profile.last_end > 0)
        profile_add(&profile.gaps[profile.last_kind][kind], start - profile.last_end);
    profile.last_end = end;
    profile.last_kind = kind;
}

void np_profile_command(unsigned code, double start)
{
    if (profile.state > 0 && code < NP_CODE_COUNT)
        profile_add(&profile.commands[code], now_ms() * 1e3 - start);
}

int np_device_submit(np_session *s, uint64_t entry, volatile uint8_t *semaphore, uint64_t value, char *err)
{
    if (!s->open)
        return say(err, NP_STATUS_DEVICE, "no device session is open (OpenDevice first)");
    if (s->memory_only)
        return say(err, NP_STATUS_DEVICE, "this session has no GPU (%s=memory): a submission needs one",
                   rt_setting_variable(RT_SETTING_DEVICE));
    double started = np_profile_start();
    int rc = rt_gpu_submit(&s->gpu, entry);
    if (rc)
        return say(err, NP_STATUS_WAIT, "%s", s->gpu.error);
    rc = rt_gpu_wait(&s->gpu, semaphore, value, NP_SUBMIT_TIMEOUT_MS);
    if (rc)
        return say(err, NP_STATUS_WAIT, "%s", s->gpu.error);
    if (profile.state > 0)
        np_profile_end(profile_submit_kind(entry), started);
    return 0;
}

int np_device_wait(np_session *s, volatile uint8_t *word, uint64_t value, uint64_t timeout_ms, char *err)
{
    double deadline = now_ms() + (double)timeout_ms;
    for (;;) {
        uint64_t seen = load64(word);
        if (seen >= value)
            return 0;
        if (s->gpu_opened) {
            char text[256];
            if (rt_gpu_channel_error(&s->gpu, text, sizeof text))
                return say(err, NP_STATUS_WAIT, "the GPU channel reports an error while waiting: %s; what to do: %s",
                           text, rt_xid_advice(rt_gpu_xid(&s->gpu)));
        }
        if (now_ms() >= deadline)
            return say(err, NP_STATUS_WAIT, "the word reached %llu, not %llu, within %llu ms", (unsigned long long)seen,
                       (unsigned long long)value, (unsigned long long)timeout_ms);
        struct timespec pause = { 0, 50 * 1000 };
        nanosleep(&pause, NULL);
    }
}

void np_device_release(np_session *s)
{
    if (s->memory_only)
        for (int i = 0; i < s->map_count; i++)
            free(s->maps[i].cpu);
    if (s->group_file[0])
        unlink(s->group_file);          /* unread (no peer joined): nobody else removes it */
    s->group_file[0] = 0;
    if (s->gpu_opened)
        rt_gpu_close(&s->gpu);
    s->gpu_opened = 0;
    s->map_count = 0;
    s->open = 0;
}
