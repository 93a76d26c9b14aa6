/* The native command machine: slots, a state arena and the commands that need
 * nothing but them and mapped memory (docs/platform.md "The native physical
 * program"), shared by the two hosts that carry native commands out:
 *
 *   - the native physical program host (native_host.c), whose hooks add files,
 *     the device session, Submit and peers;
 *   - the plan host's Commands step (plan_host.c), whose mapped memory is the
 *     plan host's buffers and which refuses the rest by name (docs/host-steps.md).
 *
 * One implementation, one meaning, one set of messages; the Python twin is
 * compiler/bobc/reference/native_program.py's Machine. */
#ifndef RT_NATIVE_MACHINE_H
#define RT_NATIVE_MACHINE_H

#include <stdint.h>
#include <stdio.h>

#include "launch_rows.h"
#include "native_program.h"

/* A fault's message: NP_ERR_BYTES, and a Submit's or WaitMapped's GPU fault naming its
 * submission's launches (launch_rows.h rt_launch_table_line) */
#define NP_MESSAGE_BYTES (NP_ERR_BYTES + RT_LAUNCH_LINE_BYTES)

typedef struct np_machine np_machine;

typedef struct {
    /* The CPU bytes behind mapped [address, address + bytes), or NULL (not mapped). */
    uint8_t *(*mapped)(np_machine *m, uint64_t address, uint64_t bytes);
    /* Wait until the 64-bit word at `word` is at least `value` within timeout_ms:
     * 0, or a status with a message in why (NP_MESSAGE_BYTES). */
    int (*wait)(np_machine *m, volatile uint8_t *word, uint64_t value, uint64_t timeout_ms, char *why);
    /* Every other command (files, device, peers, Submit): 0, or -1 after np_fault. */
    int (*other)(np_machine *m, uint32_t index, const np_command *c);
    /* What a Fail's message is said with, beyond its command (NULL: nothing): the native host
     * names the peers the program is connected to, "; peer 127.0.0.1:51234" -- a Fail's message
     * is fixed when the host is built, so it cannot name the address a peer came from. */
    void (*fail_context)(np_machine *m, char *out, size_t room);
    /* The host-mapped buffer whose bytes hold `address` (NULL: the hook names none): 1 with its
     * name, host address and extent, else 0; np_mapped's refusal of a range that starts there and
     * runs past its end names it. */
    int (*mapped_buffer)(np_machine *m, uint64_t address, const char **name, uint64_t *host, uint64_t *extent);
} np_hooks;

struct np_machine {
    const np_program *p;
    const np_hooks *hooks;
    void *host;                  /* the host's own, for its hooks */
    uint64_t *slots;
    uint8_t *state;
    double start_us;
    long telemetry;              /* -1: off (NATIVE_TELEMETRY) */
    int status;
    /* WaitMapped's status when its word does not reach the value: 0 means the native
     * program's own (4); a host answering with the plan host's codes sets 7 (a GPU fault). */
    int wait_status;
    char message[NP_MESSAGE_BYTES + 128];
    const uint8_t *fail_message;  /* Fail's own bytes */
    uint64_t fail_length;
};

/* Record a stop: "command N (Name): what" with `status`; returns -1. */
int np_fault(np_machine *m, uint32_t index, int status, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* The mapped bytes, or NULL after a fault (status 10) naming the range. */
uint8_t *np_mapped(np_machine *m, uint32_t index, uint64_t address, uint64_t bytes);

/* Submit's ring (entries > 0, 8 bytes each, at `ring`): the mapped slot of submission n, its
 * address ring + 8 x (n mod entries) taken exactly (past 2^64 it is in no buffer: a fault, never
 * the address it would wrap to), or NULL after np_fault; and the put index after submission n,
 * (n + 1) mod entries with n + 1 exact.  Submission n waits for its semaphore to reach n + 1,
 * so n is at most NP_MAX_SUBMISSION: np_ring_slot refuses 2^64 - 1 (status 1) before anything
 * is written. */
#define NP_MAX_SUBMISSION (UINT64_MAX - 1)
volatile uint8_t *np_ring_slot(np_machine *m, uint32_t index, uint64_t ring, uint64_t entries, uint64_t n);
uint64_t np_ring_next(uint64_t n, uint64_t entries);

/* The 64-bit state word at `address` (little-endian, as the host stores it). */
uint64_t np_state_word(const np_machine *m, uint64_t address);
void np_set_state_word(np_machine *m, uint64_t address, uint64_t value);

/* An operand's value: 0, or -1 after a fault. */
int np_operand_value(np_machine *m, uint32_t index, const np_operand *o, uint64_t *value);

/* Run from command `at` to the end of its fragment: 0 (ended), 1 (halted) or
 * -1 (stopped: m->status, m->message, and Fail's own bytes in fail_message). */
int np_run(np_machine *m, uint32_t at);

/* A plan's bytes on a message line -- a Fail's message, a Telemetry label, the program's identity
 * in --version -- with each control character (a newline, a tab, NUL, DEL) shown as '?', so the
 * line stays one line, as a path in a message is (host_io.h rt_io_shown); every other byte as it
 * is.  np_put_shown writes them to `to`; np_shown_copy copies at most room - 1 of them into `out`,
 * NUL-terminated (room > 0), returning the bytes copied.  bobc.reference.native_program's
 * shown_line is the twin. */
void np_put_shown(const uint8_t *bytes, size_t length, FILE *to);
size_t np_shown_copy(char *out, size_t room, const uint8_t *bytes, size_t length);

/* Microseconds on the monotonic clock (telemetry's time base). */
double np_now_us(void);

#endif
