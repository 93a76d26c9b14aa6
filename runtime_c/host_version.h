/* `HOST --version`: what the host needs and who built it, from its own
 * .bobc.version section (written by bobc, compiler/bobc/host/version.py). */
#ifndef RT_HOST_VERSION_H
#define RT_HOST_VERSION_H

#include <stdio.h>

/* 1 when the command line is exactly `--version`. */
int rt_host_version_asked(int argc, char **argv);

/* Print the .bobc.version section to `out`; 0, or (one line on stderr)
 * RT_EXIT_DAMAGED_HOST when the section is missing, RT_EXIT_INTERNAL when the
 * host file cannot be read, RT_EXIT_WRITE_FAILED when `out` cannot take it. */
int rt_host_print_version(FILE *out);

/* rt_host_print_version with the message in err rather than on stderr: the native host
 * (native_host.c) says it in its own words ("native: ..."), then its program's lines. */
int rt_host_write_version(FILE *out, char *err, size_t err_bytes);

/* Whether the host's four device image sections (.bobc.program, .qmd, .push, .gpfifo) are
 * the ones it was built with: their sha256 (each image's length, little-endian u64, then its
 * bytes, in that order: compiler/bobc/host/version.py plan_identity) against the plan
 * identity its .bobc.version section records.  0, or RT_EXIT_DAMAGED_HOST (a copy damaged
 * on its way to the node, or a section missing: the version section too) / RT_EXIT_INTERNAL
 * with a message in err naming the host by its path. */
int rt_host_check_images(char *err, size_t err_bytes);

#endif
