/* Plan fills: the scalars a host computes per invocation (an optimizer's
 * step size, epsilon and step count), each a postfix program over binary64
 * constants and the global step t (specs/Platform/Linux/Nvidia/PlanHost.bob,
 * NvidiaPlanHostScalar; docs/host-steps.md). */
#ifndef BOBC_PLAN_FILL_H
#define BOBC_PLAN_FILL_H

#include <stddef.h>
#include <stdint.h>

#include "plan_steps.h"

#define BOBC_SCALAR_STACK 32

/* The program's value at step t in binary64 (each operation rounded once, pow
 * and sqrt from libm).  Returns 0, or -1 with a message in err (err_bytes) for
 * a malformed program (unknown op, too few operands, stack deeper than
 * BOBC_SCALAR_STACK, not exactly one value left). */
int bobc_scalar_eval(const bobc_scalar_term *terms, uint32_t count, uint64_t t, double *value, char *err,
                     size_t err_bytes);

/* The fill's 4 bytes for an input checkpoint at `input_step`: its value at
 * t = input_step + fill->step (exact: it may pass 2^64), rounded to binary32 or (word32) a natural below
 * 2^32.  Returns 0 or -1 with a message in err. */
int bobc_fill_bytes(const bobc_fill *fill, uint64_t input_step, uint8_t out[4], char *err, size_t err_bytes);

/* bobc_fill_bytes for the plan's fill number `index` (NvidiaPlanHostFills, 0-based), as the host's
 * ScalarFill step says it: the refusal names the fill, the steps its step is the sum of, and what to
 * do ("fill I: a fill's value V at step T is no natural below 2^32 (the input checkpoint's step S +
 * the fill's step K); resume from ... (`bobc dump` of the host shows host.plan.fills[I], ...)");
 * bobc.plan.host.fill_refusal says it alike for the reference host and the simulator. */
int bobc_fill_step_bytes(const bobc_fill *fill, uint32_t index, uint64_t input_step, uint8_t out[4], char *err,
                         size_t err_bytes);

#endif
