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

int bobc_fill_bytes(const bobc_fill *fill, uint64_t input_step, uint8_t out[4], char *err, size_t err_bytes)
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
            return -1;
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
