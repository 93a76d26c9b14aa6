/* See plan_fill.h. */
#include "plan_fill.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* bobc_scalar_eval with the step already in binary64 */
static int eval_at(const bobc_scalar_term *terms, uint32_t count, double t, double *value, char *err, size_t err_bytes)
{
    double stack[BOBC_SCALAR_STACK];
    uint32_t depth = 0;
    for (uint32_t i = 0; i < count; i++) {
        const bobc_scalar_term *term = &terms[i];
        int operands = term->op == BOBC_SCALAR_CONSTANT || term->op == BOBC_SCALAR_STEP ? 0
                       : term->op == BOBC_SCALAR_SQRT                                  ? 1
                                                                                       : 2;
        if (term->op < BOBC_SCALAR_CONSTANT || term->op > BOBC_SCALAR_SQRT) {
            snprintf(err, err_bytes, "scalar term %u has op %d, which no scalar has", i, term->op);
            return -1;
        }
        if (depth < (uint32_t)operands) {
            snprintf(err, err_bytes, "scalar term %u needs %d operands, the stack holds %u", i, operands, depth);
            return -1;
        }
        if (operands == 0 && depth == BOBC_SCALAR_STACK) {
            snprintf(err, err_bytes, "scalar term %u: deeper than %d values", i, BOBC_SCALAR_STACK);
            return -1;
        }
        double a = operands == 2 ? stack[depth - 2] : operands == 1 ? stack[depth - 1] : 0.0;
        double b = operands == 2 ? stack[depth - 1] : 0.0;
        double r;
        switch (term->op) {
        case BOBC_SCALAR_CONSTANT: r = term->value; break;
        case BOBC_SCALAR_STEP: r = t; break;
        case BOBC_SCALAR_ADD: r = a + b; break;
        case BOBC_SCALAR_SUBTRACT: r = a - b; break;
        case BOBC_SCALAR_MULTIPLY: r = a * b; break;
        case BOBC_SCALAR_DIVIDE: r = a / b; break;
        case BOBC_SCALAR_POWER: r = pow(a, b); break;
        default: r = sqrt(a); break;
        }
        depth -= (uint32_t)operands;
        stack[depth++] = r;
    }
    if (depth != 1) {
        snprintf(err, err_bytes, "a scalar program leaves %u values, not one", depth);
        return -1;
    }
    *value = stack[0];
    return 0;
}

int bobc_scalar_eval(const bobc_scalar_term *terms, uint32_t count, uint64_t t, double *value, char *err,
                     size_t err_bytes)
{
    return eval_at(terms, count, (double)t, value, err, err_bytes);
}

/* bobc_fill_bytes; -2: the value is no natural below 2^32 (err says so) */
static int fill_bytes(const bobc_fill *fill, uint64_t input_step, uint8_t out[4], char *err, size_t err_bytes)
{
    double v;
    /* the step exact: a predict's input checkpoint may hold any step, and input + fill step can
     * pass 2^64 (rounded to binary64 once, as the reference's float of the exact sum) */
    unsigned __int128 t = (unsigned __int128)input_step + fill->step;
    if (eval_at(fill->terms, fill->term_count, (double)t, &v, err, err_bytes))
        return -1;
    uint32_t word;
    if (fill->encoding == BOBC_ENCODE_BINARY32) {
        float f = (float)v;
        memcpy(&word, &f, 4);
    } else if (fill->encoding == BOBC_ENCODE_WORD32) {
        if (!(v >= 0.0 && v < 4294967296.0) || v != floor(v)) {
            char digits[48], *text = digits + sizeof digits - 1;
            *text = 0;
            do
                *--text = (char)('0' + (int)(t % 10));
            while ((t /= 10) != 0);
            snprintf(err, err_bytes, "a fill's value %.17g at step %s is no natural below 2^32", v, text);
            return -2;
        }
        word = (uint32_t)v;
    } else {
        snprintf(err, err_bytes, "a fill has encoding %d, which no fill has", fill->encoding);
        return -1;
    }
    for (int i = 0; i < 4; i++)
        out[i] = (uint8_t)(word >> (8 * i));
    return 0;
}

int bobc_fill_bytes(const bobc_fill *fill, uint64_t input_step, uint8_t out[4], char *err, size_t err_bytes)
{
    return fill_bytes(fill, input_step, out, err, err_bytes) ? -1 : 0;
}

int bobc_fill_step_bytes(const bobc_fill *fill, uint32_t index, uint64_t input_step, uint8_t out[4], char *err,
                         size_t err_bytes)
{
    char why[256];
    int rc = fill_bytes(fill, input_step, out, why, sizeof why);
    if (rc != -2) {             /* accepted, or a malformed program (bobc_fill_bytes's words) */
        if (rc)
            snprintf(err, err_bytes, "%s", why);
        return rc;
    }
    /* the step is the input checkpoint's plus the fill's: a value that fails only past some step
     * fails only on a resumed run (a fresh run's is certified by bobc check: certify/limits.py) */
    if (input_step == 0)
        snprintf(err, err_bytes, "fill %u: %s (a run from step 0, the fill's step %llu); make fill %u's scalar a "
                 "natural below 2^32 at every step a run reaches (`bobc dump` of the host shows host.plan.fills[%u], "
                 "the launch word it writes)", index, why, (unsigned long long)fill->step, index, index);
    else
        snprintf(err, err_bytes, "fill %u: %s (the input checkpoint's step %llu + the fill's step %llu); resume from a "
                 "checkpoint of an earlier step, or make fill %u's scalar a natural below 2^32 at every step a run "
                 "reaches (`bobc dump` of the host shows host.plan.fills[%u], the launch word it writes)", index, why,
                 (unsigned long long)input_step, (unsigned long long)fill->step, index, index);
    return -1;
}
