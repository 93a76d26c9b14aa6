/* Bob's formats (docs/formats.md) as sample data for the runtime's own tests:
 * the runtime itself takes every size, record check and initializer from
 * the plan (bobc generates them from Bob.Build.NativeHost); these tests
 * exercise it with Bob's. */
#ifndef BOB_SAMPLE_H
#define BOB_SAMPLE_H

#include "host_runtime.h"

#define BOB_VOCAB                 256u
#define BOB_PARAMETER_COUNT       65536u
#define BOB_PROMPTS               3u
#define BOB_INPUT_RECORD_BYTES    1564u
#define BOB_CHUNK_COUNT           3u
#define BOB_CHUNK_BYTES           (BOB_PARAMETER_COUNT * 4u)
#define BOB_PAYLOAD_BYTES         (BOB_CHUNK_COUNT * BOB_CHUNK_BYTES)
#define BOB_UPDATES_PER_INVOCATION 10u
#define BOB_SEED_IDENTITY         "bob-seed-v1"

static const bob_record_check bob_sample_checks[] = {
    { BOB_CHECK_BYTES, "magic", 0, 0, 0, 0, 0, "BOBINPUT", 8, 0, 0, 0 },
    { BOB_CHECK_WORD, "version", 8, 8, 0, 1, 1, NULL, 0, 0, 0, 0 },
    { BOB_CHECK_INDEX, "pair", 16, 1, 2, 256, 0, NULL, 0, 0, 0, 0 },
    { BOB_CHECK_BELOW, "target word", 528, 4, 4, 256, 256, NULL, 0, 0, 0, 0 },
    { BOB_CHECK_SAME, "pair's target", 17, 1, 2, 256, 0, NULL, 0, 528, 4, 4 },
    { BOB_CHECK_BELOW, "prompt", 1552, 4, 4, 3, 256, NULL, 0, 0, 0, 0 },
};

static const bob_record_contract bob_sample_record = {
    BOB_INPUT_RECORD_BYTES, bob_sample_checks, sizeof bob_sample_checks / sizeof bob_sample_checks[0],
};

static const bob_initializer bob_sample_init[BOB_CHUNK_COUNT] = {
    { BOB_INIT_SPLITMIX64, BOB_SEED_IDENTITY, 40, 8388608u, 838860800u },
    { BOB_INIT_ZERO, NULL, 0, 0, 0 },
    { BOB_INIT_ZERO, NULL, 0, 0, 0 },
};

static inline void bob_sample_payload(float *payload)
{
    for (unsigned c = 0; c < BOB_CHUNK_COUNT; c++)
        bob_init_chunk(&bob_sample_init[c], payload + c * BOB_PARAMETER_COUNT, BOB_CHUNK_BYTES);
}

#endif
