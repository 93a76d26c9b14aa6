/* The environment settings the hosts read, each declared once (host_settings.c): its variable,
 * the values it accepts and what unset means (docs/native-host.md "Settings", docs/runtime.md
 * "Environment").  A host judges the settings it reads at start-up, before it reads or writes
 * anything: a value outside the set is a usage error (exit 2) naming the variable and what it
 * accepts, never a silent default.  The places that use a setting read its judged value here
 * (rt_setting_choice, rt_setting_number), so the accepted values are written once.
 * compiler/bobc/reference/settings.py is the reference hosts' copy of the table. */
#ifndef RT_HOST_SETTINGS_H
#define RT_HOST_SETTINGS_H

#include <stddef.h>

typedef enum {
    RT_SETTING_GPU_MAPPING,      /* BOBC_GPU_MAPPING: rm | uvm; unset: RM, UVM if RM is refused */
    RT_SETTING_GPU_TRACE,        /* BOBC_GPU_TRACE: 0 | 1 | ioctl; unset: no trace */
    RT_SETTING_TELEMETRY,        /* NATIVE_TELEMETRY: a level 0 .. 2^63-1; unset or empty: none */
    RT_SETTING_DEVICE,           /* NATIVE_DEVICE: memory | gpu; unset: the GPU */
    RT_SETTING_PROFILE,          /* NATIVE_PROFILE: 0 | 1; unset: no profile */
    RT_SETTING_PEER_TIMEOUT,     /* NATIVE_PEER_TIMEOUT_MS: 1 .. 86400000; unset: 10000 (empty refused) */
    RT_SETTINGS
} rt_setting;

/* A plan host's settings, and a native host's (in the order they are judged). */
#define RT_PLAN_HOST_SETTINGS { RT_SETTING_GPU_MAPPING, RT_SETTING_GPU_TRACE, RT_SETTING_TELEMETRY }
#define RT_NATIVE_HOST_SETTINGS { RT_SETTING_GPU_MAPPING, RT_SETTING_DEVICE, RT_SETTING_PROFILE, \
                                  RT_SETTING_GPU_TRACE, RT_SETTING_TELEMETRY, RT_SETTING_PEER_TIMEOUT }

/* The setting's environment variable. */
const char *rt_setting_variable(rt_setting which);

/* 0, or RT_EXIT_USAGE with "VARIABLE=VALUE: expected ..." in err when the value of any of
 * `which` (`count` settings) is outside its set; the first such is named. */
int rt_settings_judge(const rt_setting *which, int count, char *err, size_t err_bytes);

/* A word setting's value: the index of its word in the set (BOBC_GPU_MAPPING: 0 rm, 1 uvm;
 * BOBC_GPU_TRACE: 0 "0", 1 "1", 2 ioctl; NATIVE_DEVICE: 0 memory, 1 gpu; NATIVE_PROFILE: 0 "0",
 * 1 "1"), or `unset` when it is unset, empty or (never judged) outside the set. */
int rt_setting_choice(rt_setting which, int unset);

/* A number setting's value (NATIVE_TELEMETRY, NATIVE_PEER_TIMEOUT_MS), or `unset` when it is
 * unset, empty or (never judged) outside its range. */
long long rt_setting_number(rt_setting which, long long unset);

#define RT_SETTING_SHOWN_BYTES 64   /* the most bytes of a value a refusal shows */

/* A control character (a newline, a tab, NUL, DEL): shown as '?' wherever a message shows text the
 * user or the plan gave (a setting's value, a path, a Fail's bytes), so a message stays one line.
 * Its Python twin: bobc.errors printable (tests/host/test_c_python_mirrors.py). */
static inline int rt_control_char(unsigned char c)
{
    return c < 0x20 || c == 0x7F;
}

/* `text` as a setting's refusal shows it: its first RT_SETTING_SHOWN_BYTES bytes (never half a
 * UTF-8 character) and "..." when longer, a control character (a newline, a tab, DEL) as '?', so
 * the refusal stays one line.  For every setting a host judges, the table's and those judged
 * elsewhere (native_device.c's NATIVE_GPU_*). */
const char *rt_setting_shown(const char *text, char out[RT_SETTING_SHOWN_BYTES + 4]);

/* Whether `text` is a decimal number as a setting writes one: ASCII digits only (no sign, space,
 * exponent, 0x or unit), at most `most`; 1 with *value, else 0. */
int rt_setting_decimal(const char *text, unsigned long long most, unsigned long long *value);

#endif
