/* See elf_sections.h.  ELF64 little-endian only: the hosts bobc builds. */
#include "elf_sections.h"

#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt_exit.h"

static int read_at(FILE *f, long offset, void *buf, size_t size)
{
    return fseek(f, offset, SEEK_SET) == 0 && fread(buf, 1, size, f) == size;
}

int rt_section_read(const char *path, const char *name, rt_section *out, char *err, size_t err_bytes)
{
    out->data = NULL;
    out->size = 0;
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, err_bytes, "cannot open %s to read its images", path);
        return RT_EXIT_INTERNAL;
    }
    int status = RT_EXIT_INTERNAL;
    Elf64_Ehdr eh;
    Elf64_Shdr *sh = NULL;
    char *names = NULL;
    if (!read_at(f, 0, &eh, sizeof eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
        eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shstrndx >= eh.e_shnum) {
        snprintf(err, err_bytes, "%s is not a 64-bit ELF host built by bobc", path);
        goto done;
    }
    sh = calloc(eh.e_shnum, sizeof *sh);
    if (!sh || !read_at(f, (long)eh.e_shoff, sh, eh.e_shnum * sizeof *sh)) {
        snprintf(err, err_bytes, "cannot read the section table of %s", path);
        goto done;
    }
    const Elf64_Shdr *strtab = &sh[eh.e_shstrndx];
    names = calloc(1, strtab->sh_size + 1);
    if (!names || !read_at(f, (long)strtab->sh_offset, names, strtab->sh_size)) {
        snprintf(err, err_bytes, "cannot read the section names of %s", path);
        goto done;
    }
    for (unsigned i = 0; i < eh.e_shnum; i++) {
        if (sh[i].sh_name >= strtab->sh_size || strcmp(names + sh[i].sh_name, name) != 0)
            continue;
        out->data = malloc(sh[i].sh_size ? sh[i].sh_size : 1);
        if (!out->data || !read_at(f, (long)sh[i].sh_offset, out->data, sh[i].sh_size)) {
            free(out->data);
            out->data = NULL;
            snprintf(err, err_bytes, "cannot read section %s of %s", name, path);
            goto done;
        }
        out->size = sh[i].sh_size;
        status = 0;
        goto done;
    }
    snprintf(err, err_bytes, "%s has no section %s: it was not built by `bobc build`, or was stripped", path, name);
done:
    free(names);
    free(sh);
    fclose(f);
    return status;
}
