/* The hosts' environment settings: one table (host_settings.h). */
#include "host_settings.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt_exit.h"


typedef struct {
    const char *variable;
    const char *const *words;    /* a word setting's set (NULL-ended), or NULL for a number */
    unsigned long long least, most;  /* a number setting's range */
    int empty_refused;           /* an empty value is refused (else it means unset) */
    const char *expected;        /* what the refusal says it accepts */
} setting_row;

static const char *const mapping_words[] = { "rm", "uvm", NULL };
static const char *const trace_words[] = { "0", "1", "ioctl", NULL };
static const char *const device_words[] = { "memory", "gpu", NULL };
static const char *const profile_words[] = { "0", "1", NULL };

/* docs/native-host.md's "Settings" table, row for row */
static const setting_row rows[RT_SETTINGS] = {
    [RT_SETTING_GPU_MAPPING] = { "BOBC_GPU_MAPPING", mapping_words, 0, 0, 0,
                                 "expected rm or uvm (or leave it unset)" },
    [RT_SETTING_GPU_TRACE] = { "BOBC_GPU_TRACE", trace_words, 0, 0, 0,
                               "expected 1 (each bring-up step), ioctl (each ioctl too) or 0 (or leave it unset)" },
    [RT_SETTING_TELEMETRY] = { "NATIVE_TELEMETRY", NULL, 0, 9223372036854775807ULL, 0,
                               "expected a level, a decimal number 0 to 9223372036854775807 (or leave it unset: no "
                               "telemetry)" },
    [RT_SETTING_DEVICE] = { "NATIVE_DEVICE", device_words, 0, 0, 0,
                            "expected memory (a session without a GPU) or gpu (the default; or leave it unset)" },
    [RT_SETTING_PROFILE] = { "NATIVE_PROFILE", profile_words, 0, 0, 0,
                             "expected 1 (profile) or 0 (or leave it unset)" },
    [RT_SETTING_PEER_TIMEOUT] = { "NATIVE_PEER_TIMEOUT_MS", NULL, 1, 86400000ULL, 1,
                                  "expected milliseconds, a decimal number 1 to 86400000 (or leave it unset: 10000)" },
};

const char *rt_setting_variable(rt_setting which)
{
    return rows[which].variable;
}

int rt_setting_decimal(const char *text, unsigned long long most, unsigned long long *value)
{
    unsigned long long v = 0;
    if (!*text)
        return 0;
    for (const char *c = text; *c; c++) {
        if (*c < '0' || *c > '9')
            return 0;
        unsigned digit = (unsigned)(*c - '0');
        if (digit > most || v > (most - digit) / 10)
            return 0;
        v = v * 10 + digit;
    }
    *value = v;
    return 1;
}

/* A decimal number (rt_setting_decimal) in the row's range: 0 with *value, else -1. */
static int decimal_in(const setting_row *row, const char *text, unsigned long long *value)
{
    unsigned long long v;
    if (!rt_setting_decimal(text, row->most, &v) || v < row->least)
        return -1;
    *value = v;
    return 0;
}

/* The value's index in a word row's set, or -1. */
static int word_in(const setting_row *row, const char *text)
{
    for (int k = 0; row->words[k]; k++)
        if (strcmp(text, row->words[k]) == 0)
            return k;
    return -1;
}

/* The setting's text when it is given (set, and not empty unless empty is refused), else NULL */
static const char *given(const setting_row *row)
{
    const char *text = getenv(row->variable);
    return text && (*text || row->empty_refused) ? text : NULL;
}

/* The value as a refusal shows it (host_settings.h); the refusal keeps what the setting accepts.
 * Kept apart from host_io.c's rt_io_shown, whose paths keep their file names, so that the shim
 * needs no more than this file. */
const char *rt_setting_shown(const char *text, char out[RT_SETTING_SHOWN_BYTES + 4])
{
    size_t n = strlen(text), keep = n;
    if (n > RT_SETTING_SHOWN_BYTES) {
        keep = RT_SETTING_SHOWN_BYTES;
        while (keep && ((unsigned char)text[keep] & 0xC0) == 0x80)
            keep--;
    }
    snprintf(out, RT_SETTING_SHOWN_BYTES + 4, "%.*s%s", (int)keep, text, keep < n ? "..." : "");
    for (char *c = out; *c; c++)
        if (rt_control_char((unsigned char)*c))
            *c = '?';
    return out;
}

int rt_settings_judge(const rt_setting *which, int count, char *err, size_t err_bytes)
{
    for (int i = 0; i < count; i++) {
        const setting_row *row = &rows[which[i]];
        const char *text = given(row);
        unsigned long long v;
        if (!text || (row->words ? word_in(row, text) >= 0 : decimal_in(row, text, &v) == 0))
            continue;
        char shown[RT_SETTING_SHOWN_BYTES + 4];
        snprintf(err, err_bytes, "%s=%s: %s", row->variable, rt_setting_shown(text, shown), row->expected);
        return RT_EXIT_USAGE;
    }
    return 0;
}

int rt_setting_choice(rt_setting which, int unset)
{
    const setting_row *row = &rows[which];
    const char *text = given(row);
    int k = text && row->words ? word_in(row, text) : -1;
    return k < 0 ? unset : k;
}

long long rt_setting_number(rt_setting which, long long unset)
{
    const setting_row *row = &rows[which];
    const char *text = given(row);
    unsigned long long v;
    return text && !row->words && decimal_in(row, text, &v) == 0 ? (long long)v : unset;
}
