/* See elf_sections.h.  ELF64 little-endian only: the hosts bobc builds. */
#include "elf_sections.h"

#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rt_exit.h"

static int read_at(FILE *f, long offset, void *buf, size_t size)
{
    return fseek(f, offset, SEEK_SET) == 0 && fread(buf, 1, size, f) == size;
}

static int section_read(const char *path, const char *shown, const char *name, rt_section *out, char *err,
                        size_t err_bytes);

/* [offset, offset + size) inside a file of `file_size` bytes, with no sum that can wrap: every
 * offset and size of the (untrusted) ELF headers is held to this before it sizes an allocation
 * or a read. */
static int in_file(uint64_t offset, uint64_t size, uint64_t file_size)
{
    return offset <= file_size && size <= file_size - offset;
}

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
    out->absent = 0;
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
    struct stat st;
    if (fstat(fileno(f), &st) != 0) {
        snprintf(err, err_bytes, "cannot stat %s to read its images: %s", shown, strerror(errno));
        status = RT_EXIT_INTERNAL;
        goto done;
    }
    const uint64_t file_size = (uint64_t)st.st_size;
    if (!read_at(f, 0, &eh, sizeof eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
        eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shstrndx >= eh.e_shnum) {
        snprintf(err, err_bytes, "damaged host file: %s is not a 64-bit ELF host built by bobc; rebuild it "
                 "(bobc build)", shown);
        goto done;
    }
    /* e_shnum is 16 bits: the table's size cannot wrap, its end can */
    if (!in_file(eh.e_shoff, (uint64_t)eh.e_shnum * sizeof *sh, file_size)) {
        snprintf(err, err_bytes, "damaged host file: the section table of %s (%u entries, %llu bytes at %llu) runs "
                 "past the file's %llu bytes; rebuild it (bobc build)", shown, (unsigned)eh.e_shnum,
                 (unsigned long long)eh.e_shnum * sizeof *sh, (unsigned long long)eh.e_shoff,
                 (unsigned long long)file_size);
        goto done;
    }
    sh = calloc(eh.e_shnum, sizeof *sh);
    if (!sh || !read_at(f, (long)eh.e_shoff, sh, eh.e_shnum * sizeof *sh)) {
        status = sh ? RT_EXIT_DAMAGED_HOST : RT_EXIT_INTERNAL;
        snprintf(err, err_bytes, "%scannot read the section table of %s", sh ? "damaged host file: " : "", shown);
        goto done;
    }
    const Elf64_Shdr *strtab = &sh[eh.e_shstrndx];
    if (!in_file(strtab->sh_offset, strtab->sh_size, file_size)) {
        snprintf(err, err_bytes, "damaged host file: the section names of %s (%llu bytes at %llu) run past the "
                 "file's %llu bytes; rebuild it (bobc build)", shown, (unsigned long long)strtab->sh_size,
                 (unsigned long long)strtab->sh_offset, (unsigned long long)file_size);
        goto done;
    }
    /* sh_size is at most the file's size here, so + 1 cannot wrap */
    names = calloc(1, strtab->sh_size + 1);
    if (!names || !read_at(f, (long)strtab->sh_offset, names, strtab->sh_size)) {
        status = names ? RT_EXIT_DAMAGED_HOST : RT_EXIT_INTERNAL;
        snprintf(err, err_bytes, "%scannot read the section names of %s", names ? "damaged host file: " : "", shown);
        goto done;
    }
    for (unsigned i = 0; i < eh.e_shnum; i++) {
        if (sh[i].sh_name >= strtab->sh_size || strcmp(names + sh[i].sh_name, name) != 0)
            continue;
        if (!in_file(sh[i].sh_offset, sh[i].sh_size, file_size)) {
            snprintf(err, err_bytes, "damaged host file: section %s of %s (%llu bytes at %llu) runs past the "
                     "file's %llu bytes; rebuild it (bobc build)", name, shown, (unsigned long long)sh[i].sh_size,
                     (unsigned long long)sh[i].sh_offset, (unsigned long long)file_size);
            goto done;
        }
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
    out->absent = 1;
    snprintf(err, err_bytes, "damaged host file: %s has no section %s: it was not built by `bobc build`, or was "
             "stripped; rebuild it (bobc build)", shown, name);
done:
    free(names);
    free(sh);
    fclose(f);
    return status;
}
