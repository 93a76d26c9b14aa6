/* `HOST --version`: what the host needs and who built it, from its own
 * .bobc.version section (written by bobc, compiler/bobc/host/version.py). */
#ifndef RT_HOST_VERSION_H
#define RT_HOST_VERSION_H

#include <stdio.h>

/* 1 when the command line is exactly `--version`. */
int rt_host_version_asked(int argc, char **argv);

/* Print the .bobc.version section to `out`; 0, or RT_EXIT_INTERNAL with one
 * line on stderr when the section cannot be read. */
int rt_host_print_version(FILE *out);

#endif
