/* Bob's formats (docs/formats.md) as sample data for the runtime's own tests:
 * the runtime itself takes every size, record check and initializer from
 * the plan (bobc generates them from Bob.Build.NativeHost); these tests
 * exercise it with Bob's. */
#ifndef RT_SAMPLE_H
#define RT_SAMPLE_H

#include "host_runtime.h"

#define RT_VOCAB                 256u
#define RT_PARAMETER_COUNT       65536u
#define RT_PROMPTS               3u
#define RT_INPUT_RECORD_BYTES    1564u
#define RT_CHUNK_COUNT           3u
#define RT_CHUNK_BYTES           (RT_PARAMETER_COUNT * 4u)
#define RT_PAYLOAD_BYTES         (RT_CHUNK_COUNT * RT_CHUNK_BYTES)
#define RT_UPDATES_PER_INVOCATION 10u
#define RT_SEED_IDENTITY         "bob-seed-v1"

static const rt_record_check rt_sample_checks[] = {
    { RT_CHECK_BYTES, "magic", 0, 0, 0, 0, 0, "BOBINPUT", 8, 0, 0, 0 },
    { RT_CHECK_WORD, "version", 8, 8, 0, 1, 1, NULL, 0, 0, 0, 0 },
    { RT_CHECK_INDEX, "pair", 16, 1, 2, 256, 0, NULL, 0, 0, 0, 0 },
    { RT_CHECK_BELOW, "target word", 528, 4, 4, 256, 256, NULL, 0, 0, 0, 0 },
    { RT_CHECK_SAME, "pair's target", 17, 1, 2, 256, 0, NULL, 0, 528, 4, 4 },
    { RT_CHECK_BELOW, "prompt", 1552, 4, 4, 3, 256, NULL, 0, 0, 0, 0 },
};

static const rt_record_contract rt_sample_record = {
    RT_INPUT_RECORD_BYTES, rt_sample_checks, sizeof rt_sample_checks / sizeof rt_sample_checks[0],
};

static const rt_initializer rt_sample_init[RT_CHUNK_COUNT] = {
    { RT_INIT_SPLITMIX64, RT_SEED_IDENTITY, 40, 8388608u, 838860800u },
    { RT_INIT_ZERO, NULL, 0, 0, 0 },
    { RT_INIT_ZERO, NULL, 0, 0, 0 },
};

static inline void rt_sample_payload(float *payload)
{
    for (unsigned c = 0; c < RT_CHUNK_COUNT; c++)
        rt_init_chunk(&rt_sample_init[c], payload + c * RT_PARAMETER_COUNT, RT_CHUNK_BYTES);
}

#endif
