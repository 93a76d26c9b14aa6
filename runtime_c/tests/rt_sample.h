/* A synthetic plan's formats as sample data for the runtime's own tests.
 * The runtime takes every size, record check and initializer from the plan
 * (bobc generates them from the plan's NvidiaPlanHost); these tests exercise
 * it with a made-up plan whose sizes are unlike any model's, so nothing here
 * can stand in for a real one:
 *
 *   record (258 bytes): "RTSAMPLE", u64 version 3, 37 (key, value) byte
 *   pairs from 16 (key i at 16 + 2i is i), 37 u32 value words from 90 (each
 *   below 41, equal to its pair's value byte), 5 u32 queries from 238 (each
 *   below 41);
 *   checkpoint: 3 chunks of 12,345 binary32 elements, 7 updates per
 *   invocation; chunk 0 and 2 SplitMix64 with their own seeds and scales,
 *   chunk 1 zeros.
 * tests/host/test_runtime_c.py and tests/reference/test_c_agreement.py
 * restate these facts independently. */
#ifndef RT_SAMPLE_H
#define RT_SAMPLE_H

#include "host_runtime.h"

#define RT_SAMPLE_KEYS             37u
#define RT_SAMPLE_VALUES           41u
#define RT_SAMPLE_QUERIES          5u
#define RT_SAMPLE_PAIRS_AT         16u
#define RT_SAMPLE_WORDS_AT         (RT_SAMPLE_PAIRS_AT + 2u * RT_SAMPLE_KEYS)
#define RT_SAMPLE_QUERIES_AT       (RT_SAMPLE_WORDS_AT + 4u * RT_SAMPLE_KEYS)
#define RT_SAMPLE_RECORD_BYTES     (RT_SAMPLE_QUERIES_AT + 4u * RT_SAMPLE_QUERIES)
#define RT_SAMPLE_ELEMENTS         12345u
#define RT_SAMPLE_CHUNK_COUNT      3u
#define RT_SAMPLE_CHUNK_BYTES      (RT_SAMPLE_ELEMENTS * 4u)
#define RT_SAMPLE_PAYLOAD_BYTES    (RT_SAMPLE_CHUNK_COUNT * RT_SAMPLE_CHUNK_BYTES)
#define RT_SAMPLE_UPDATES          7u
#define RT_SAMPLE_SEED             "rt-sample-seed-7"
#define RT_SAMPLE_SEED_LAST        "rt-sample-seed-9"

static const rt_record_check rt_sample_checks[] = {
    { RT_CHECK_BYTES, "magic", 0, 0, 0, 0, 0, "RTSAMPLE", 8, 0, 0, 0, RT_WORD_UNSIGNED },
    { RT_CHECK_WORD, "version", 8, 8, 0, 1, 3, NULL, 0, 0, 0, 0, RT_WORD_UNSIGNED },
    { RT_CHECK_INDEX, "key", RT_SAMPLE_PAIRS_AT, 1, 2, RT_SAMPLE_KEYS, 0, NULL, 0, 0, 0, 0, RT_WORD_UNSIGNED },
    { RT_CHECK_BELOW, "value word", RT_SAMPLE_WORDS_AT, 4, 4, RT_SAMPLE_KEYS, RT_SAMPLE_VALUES, NULL, 0, 0, 0, 0, RT_WORD_UNSIGNED },
    { RT_CHECK_SAME, "pair's value", RT_SAMPLE_PAIRS_AT + 1, 1, 2, RT_SAMPLE_KEYS, 0, NULL, 0,
      RT_SAMPLE_WORDS_AT, 4, 4, RT_WORD_UNSIGNED },
    { RT_CHECK_BELOW, "query", RT_SAMPLE_QUERIES_AT, 4, 4, RT_SAMPLE_QUERIES, RT_SAMPLE_VALUES, NULL, 0, 0, 0, 0, RT_WORD_UNSIGNED },
};

static const rt_record_contract rt_sample_record = {
    RT_SAMPLE_RECORD_BYTES, rt_sample_checks, sizeof rt_sample_checks / sizeof rt_sample_checks[0],
};

static const rt_initializer rt_sample_init[RT_SAMPLE_CHUNK_COUNT] = {
    { RT_INIT_SPLITMIX64, RT_SAMPLE_SEED, 43, 1048576u, 52428800u },
    { RT_INIT_ZERO, NULL, 0, 0, 0 },
    { RT_INIT_SPLITMIX64, RT_SAMPLE_SEED_LAST, 41, 4194304u, 419430400u },
};

static inline void rt_sample_payload(float *payload)
{
    for (unsigned c = 0; c < RT_SAMPLE_CHUNK_COUNT; c++)
        rt_init_chunk(&rt_sample_init[c], payload + c * RT_SAMPLE_ELEMENTS, RT_SAMPLE_CHUNK_BYTES);
}

#endif
