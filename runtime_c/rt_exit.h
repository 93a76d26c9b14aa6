/* The host's exit codes (docs/runtime.md).  Stable: tests and users rely on them. */
#ifndef RT_EXIT_H
#define RT_EXIT_H

enum {
    RT_EXIT_OK = 0,
    RT_EXIT_INTERNAL = 1,          /* a bug or an unexpected host failure (out of memory) */
    RT_EXIT_USAGE = 2,             /* bad command line */
    RT_EXIT_BAD_INPUT = 3,         /* input record missing, wrong size, magic, version or contents */
    RT_EXIT_BAD_CHECKPOINT = 4,    /* checkpoint unreadable, truncated, not a checkpoint, or corrupted (CRC) */
    RT_EXIT_FOREIGN_CHECKPOINT = 5,/* a valid checkpoint of another contract (schema, learner, data, seed, payload, chunks, updates) */
    RT_EXIT_NO_GPU = 6,            /* no /dev/nvidiactl, driver branch refused, class missing, bring-up failed */
    RT_EXIT_GPU_FAULT = 7,         /* GPU fault, channel error or semaphore timeout */
    RT_EXIT_WRITE_FAILED = 8,      /* an output could not be written and published */
    RT_EXIT_DAMAGED_HOST = 9,      /* the host file itself: its device images are not the ones it was built with */
};

#endif
