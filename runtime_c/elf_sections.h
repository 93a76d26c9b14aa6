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
    int absent;      /* the file is a whole ELF without the section (the read's failure says so too) */
} rt_section;

/* Read section `name` (e.g. ".bobc.program") of the ELF file at `path`.
 * Returns 0; RT_EXIT_INTERNAL (the file cannot be opened, out of memory); or
 * RT_EXIT_DAMAGED_HOST (not a 64-bit ELF, its section table unreadable, the
 * section missing, the section table, the section names or the section running
 * past the file's end: every offset and size is checked against the file's size
 * before anything is allocated or read), each with a message in err naming the
 * file and the section (and the sizes, for one past the end). */
int rt_section_read(const char *path, const char *name, rt_section *out, char *err, size_t err_bytes);

/* rt_section_read of the running host (/proc/self/exe), its messages naming the
 * host by its own path (rt_self_path), not /proc/self/exe. */
/* A host that cannot read its own file (execute-only, mode 711): exit 1, never 9 "damaged" (probe
 * s31 hostexe finding 8); the native host says the same.  Arguments: the path, the reason, the path. */
#define RT_SELF_UNREADABLE "cannot read its own file %s: %s; the host reads its device images from it: make it " \
                           "readable (chmod +r %s)"
int rt_self_section_read(const char *name, rt_section *out, char *err, size_t err_bytes);

/* The running host's path (readlink of /proc/self/exe; that name if unreadable). */
const char *rt_self_path(void);

#endif
