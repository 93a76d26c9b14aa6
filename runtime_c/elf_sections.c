/* See elf_sections.h.  ELF64 little-endian only: the hosts bobc builds. */
#include "elf_sections.h"

#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rt_exit.h"

static int read_at(FILE *f, long offset, void *buf, size_t size)
{
    return fseek(f, offset, SEEK_SET) == 0 && fread(buf, 1, size, f) == size;
}

static int section_read(const char *path, const char *shown, const char *name, rt_section *out, char *err,
                        size_t err_bytes);

const char *rt_self_path(void)
{
    static char found[4096];
    if (!found[0]) {
        ssize_t length = readlink("/proc/self/exe", found, sizeof found - 1);
        if (length <= 0)
            snprintf(found, sizeof found, "/proc/self/exe");
        else
            found[length] = 0;
    }
    return found;
}

int rt_self_section_read(const char *name, rt_section *out, char *err, size_t err_bytes)
{
    return section_read("/proc/self/exe", rt_self_path(), name, out, err, err_bytes);
}

int rt_section_read(const char *path, const char *name, rt_section *out, char *err, size_t err_bytes)
{
    return section_read(path, path, name, out, err, err_bytes);
}

/* `path` is opened; `shown` names it in messages (the host's own path rather than /proc/self/exe).
 * An unreadable file is RT_EXIT_INTERNAL; one that is not a bobc host's ELF, or lacks the
 * section, is damaged (RT_EXIT_DAMAGED_HOST). */
static int section_read(const char *path, const char *shown, const char *name, rt_section *out, char *err,
                        size_t err_bytes)
{
    out->data = NULL;
    out->size = 0;
    FILE *f = fopen(path, "rb");
    if (!f) {
        int e = errno;
        if (e == EACCES && path != shown)   /* the host's own file, execute-only (mode 711): not damaged */
            snprintf(err, err_bytes, RT_SELF_UNREADABLE, shown, strerror(e), shown);
        else
            snprintf(err, err_bytes, "cannot open %s to read its images: %s", shown, strerror(e));
        return RT_EXIT_INTERNAL;
    }
    int status = RT_EXIT_DAMAGED_HOST;
    Elf64_Ehdr eh;
    Elf64_Shdr *sh = NULL;
    char *names = NULL;
    if (!read_at(f, 0, &eh, sizeof eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
        eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shstrndx >= eh.e_shnum) {
        snprintf(err, err_bytes, "damaged host file: %s is not a 64-bit ELF host built by bobc; rebuild it "
                 "(bobc build)", shown);
        goto done;
    }
    sh = calloc(eh.e_shnum, sizeof *sh);
    if (!sh || !read_at(f, (long)eh.e_shoff, sh, eh.e_shnum * sizeof *sh)) {
        status = sh ? RT_EXIT_DAMAGED_HOST : RT_EXIT_INTERNAL;
        snprintf(err, err_bytes, "%scannot read the section table of %s", sh ? "damaged host file: " : "", shown);
        goto done;
    }
    const Elf64_Shdr *strtab = &sh[eh.e_shstrndx];
    names = calloc(1, strtab->sh_size + 1);
    if (!names || !read_at(f, (long)strtab->sh_offset, names, strtab->sh_size)) {
        status = names ? RT_EXIT_DAMAGED_HOST : RT_EXIT_INTERNAL;
        snprintf(err, err_bytes, "%scannot read the section names of %s", names ? "damaged host file: " : "", shown);
        goto done;
    }
    for (unsigned i = 0; i < eh.e_shnum; i++) {
        if (sh[i].sh_name >= strtab->sh_size || strcmp(names + sh[i].sh_name, name) != 0)
            continue;
        out->data = malloc(sh[i].sh_size ? sh[i].sh_size : 1);
        if (!out->data || !read_at(f, (long)sh[i].sh_offset, out->data, sh[i].sh_size)) {
            status = out->data ? RT_EXIT_DAMAGED_HOST : RT_EXIT_INTERNAL;
            snprintf(err, err_bytes, "%scannot read section %s of %s", out->data ? "damaged host file: " : "", name,
                     shown);
            free(out->data);
            out->data = NULL;
            goto done;
        }
        out->size = sh[i].sh_size;
        status = 0;
        goto done;
    }
    snprintf(err, err_bytes, "damaged host file: %s has no section %s: it was not built by `bobc build`, or was "
             "stripped; rebuild it (bobc build)", shown, name);
done:
    free(names);
    free(sh);
    fclose(f);
    return status;
}
