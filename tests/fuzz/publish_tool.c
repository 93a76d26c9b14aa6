/* Publishes three outputs through runtime_c/host_io (as the host does at the
 * end of a run), for tests/fuzz/test_publication.py's kill -9 cases:
 *
 *   publish_tool TAG PREDICTIONS RESULT CHECKPOINT
 *
 * Each file gets "TAG <name>" repeated to 64 KiB; exit status: host_io's code. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host_io.h"
#include "host_runtime.h"

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: publish_tool TAG PREDICTIONS RESULT CHECKPOINT\n");
        return 2;
    }
    static rt_io_files files;
    static char content[3][65536];
    static const char *const option[3] = { "--predictions", "--result", "--checkpoint-out" };
    char err[RT_ERR_BYTES];
    for (int i = 0; i < 3; i++) {
        char unit[128];
        int n = snprintf(unit, sizeof unit, "%s %s\n", argv[1], option[i]);
        for (size_t at = 0; at < sizeof content[i]; at += (size_t)n)
            memcpy(content[i] + at, unit, at + (size_t)n <= sizeof content[i] ? (size_t)n : sizeof content[i] - at);
        int rc = rt_io_add_output(&files, argv[2 + i], option[i], NULL, err);
        if (!rc)
            rc = rt_io_stage(&files, option[i], content[i], sizeof content[i], err);
        if (rc) {
            fprintf(stderr, "publish_tool: %s\n", err);
            return rc;
        }
    }
    int rc = rt_io_publish(&files, err);
    if (rc)
        fprintf(stderr, "publish_tool: %s\n", err);
    return rc;
}
