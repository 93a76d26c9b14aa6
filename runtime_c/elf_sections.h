/* Reading the host's own .bobc.* ELF sections (the device images bobc
 * embedded after linking) from /proc/self/exe.  They are not loaded
 * sections: the host reads them once at start, like any input file. */
#ifndef RT_ELF_SECTIONS_H
#define RT_ELF_SECTIONS_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint8_t *data;   /* malloc'd copy, NULL when absent */
    size_t size;
} rt_section;

/* Read section `name` (e.g. ".bobc.program") of the ELF file at `path`.
 * Returns 0, or RT_EXIT_INTERNAL with a message in err naming the file and
 * the section when the file is unreadable or the section is missing. */
int rt_section_read(const char *path, const char *name, rt_section *out, char *err, size_t err_bytes);

#endif
