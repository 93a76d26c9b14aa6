/* `HOST --version` (host_version.h): the text is data bobc wrote into the
 * host's .bobc.version section, so this file knows no target or version. */
#include "host_version.h"

#include <stdlib.h>
#include <string.h>

#include "host_runtime.h"
#include "rt_exit.h"
#include "elf_sections.h"

int rt_host_version_asked(int argc, char **argv)
{
    return argc == 2 && strcmp(argv[1], "--version") == 0;
}

int rt_host_print_version(FILE *out)
{
    char err[512];
    rt_section section = {0};
    if (rt_section_read("/proc/self/exe", ".bobc.version", &section, err, sizeof err)) {
        rt_report(err);
        return RT_EXIT_INTERNAL;
    }
    fwrite(section.data, 1, section.size, out);
    free(section.data);
    return RT_EXIT_OK;
}
