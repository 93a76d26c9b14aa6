/* See native_device.h. */
#define _GNU_SOURCE
#include "native_device.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

int np_device_open(np_session *s, const uint8_t uuid[16], char *err)
{
    if (s->open)
        return say(err, NP_STATUS_DEVICE, "a device session is already open; Release it first");
    const char *mode = getenv(NP_DEVICE_VARIABLE);
    s->memory_only = mode && strcmp(mode, "memory") == 0;
    if (s->memory_only) {
        s->open = 1;
        return 0;
    }
    const rt_target_facts *target = rt_target_named(s->target);
    if (!target)
        return say(err, NP_STATUS_DEVICE, "this host was built for target %s, which this runtime does not know",
                   s->target);
    rt_gpu_config config;
    memset(&config, 0, sizeof config);
    /* 16 zero bytes: the first GPU the driver lists (a request program opens the GPU as the plan host
     * does; docs/native-host.md) */
    static const uint8_t any[16];
    config.uuid = memcmp(uuid, any, 16) == 0 ? NULL : uuid;
    memset(&s->gpu, 0, sizeof s->gpu);
    int rc = rt_gpu_open(&s->gpu, target, &config);
    if (rc) {
        rt_gpu_close(&s->gpu);
        return say(err, NP_STATUS_DEVICE, "%s", s->gpu.error[0] ? s->gpu.error : "the GPU could not be opened");
    }
    s->gpu_opened = 1;
    s->open = 1;
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
        if (host && m->host_mapped && host < m->host + m->extent && m->host < host + extent)
            return say(err, NP_STATUS_DEVICE, "buffer \"%s\": host range [0x%llx, +0x%llx) overlaps an earlier buffer",
                       name, (unsigned long long)host, (unsigned long long)extent);
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
    }
    m->host = host;
    m->extent = extent;
    m->gpu = gpu;
    m->cpu = cpu;
    m->host_mapped = host != 0;
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

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static uint64_t load64(volatile uint8_t *p)
{
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    uint64_t v;
    memcpy(&v, (const void *)p, 8);
    return v;
}

int np_device_submit(np_session *s, uint64_t entry, volatile uint8_t *semaphore, uint64_t value, char *err)
{
    if (!s->open)
        return say(err, NP_STATUS_DEVICE, "no device session is open (OpenDevice first)");
    if (s->memory_only)
        return say(err, NP_STATUS_DEVICE, "this session has no GPU (%s=memory): a submission needs one",
                   NP_DEVICE_VARIABLE);
    int rc = rt_gpu_submit(&s->gpu, entry);
    if (rc)
        return say(err, NP_STATUS_WAIT, "%s", s->gpu.error);
    rc = rt_gpu_wait(&s->gpu, semaphore, value, NP_SUBMIT_TIMEOUT_MS);
    if (rc)
        return say(err, NP_STATUS_WAIT, "%s", s->gpu.error);
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
                return say(err, NP_STATUS_WAIT, "the GPU channel reports an error while waiting: %s", text);
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
    if (s->gpu_opened)
        rt_gpu_close(&s->gpu);
    s->gpu_opened = 0;
    s->map_count = 0;
    s->open = 0;
}
