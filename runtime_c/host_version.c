/* `HOST --version` (host_version.h): the text is data bobc wrote into the
 * host's .bobc.version section, so this file knows no target or version. */
#include "host_version.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host_runtime.h"
#include "rt_exit.h"
#include "elf_sections.h"
#include "sha256.h"

int rt_host_version_asked(int argc, char **argv)
{
    return argc == 2 && strcmp(argv[1], "--version") == 0;
}

int rt_host_write_version(FILE *out, char *err, size_t err_bytes)
{
    rt_section section = {0};
    int rc = rt_self_section_read(".bobc.version", &section, err, err_bytes);
    if (rc)
        return rc;
    errno = 0;
    size_t written = fwrite(section.data, 1, section.size, out);
    int e = errno;
    free(section.data);
    const char *why = rt_stdout_failure(out);
    if (written != section.size && !why)
        why = rt_write_failure(e ? e : EIO);
    if (why) {
        snprintf(err, err_bytes, "cannot write to stdout: %s", why);
        return RT_EXIT_WRITE_FAILED;
    }
    return RT_EXIT_OK;
}

int rt_host_print_version(FILE *out)
{
    char err[512];
    int rc = rt_host_write_version(out, err, sizeof err);
    if (rc)
        rt_report(err);
    return rc;
}

/* The 64 hex digits after `key` at the start of a line of the version section, or NULL. */
static const char *version_value(const rt_section *version, const char *key)
{
    size_t n = strlen(key);
    for (size_t at = 0; at + n + 64 <= version->size; at++)
        if ((at == 0 || version->data[at - 1] == '\n') && memcmp(version->data + at, key, n) == 0)
            return (const char *)version->data + at + n;
    return NULL;
}

/* The .bobc.manifest section (the images' layout that `bobc dump`, `diff` and `inspect` read) against
 * the manifest identity the version section records: its sha256, as compiler/bobc/host/version.py
 * manifest_identity writes it.  A version section that records none is from a bobc before this
 * check: its manifest is not judged (bobc inspect does the same). */
static int rt_check_manifest(const rt_section *version, char *err, size_t err_bytes)
{
    const char *said = version_value(version, "manifest identity: sha256 ");
    if (!said)
        return RT_EXIT_OK;
    rt_section manifest = {0};
    int rc = rt_self_section_read(".bobc.manifest", &manifest, err, err_bytes);
    if (rc)
        return rc;
    uint8_t digest[32];
    char hex[65];
    rt_sha256(manifest.data, manifest.size, digest);
    free(manifest.data);
    for (int i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", digest[i]);
    if (memcmp(hex, said, 64) != 0) {
        snprintf(err, err_bytes, "damaged host file: %s: its .bobc.manifest section's sha256 is %.16s..., the manifest "
                 "identity it was built with is %.16s...; copy the host again or rebuild it (bobc build)",
                 rt_self_path(), hex, said);
        return RT_EXIT_DAMAGED_HOST;
    }
    return RT_EXIT_OK;
}

int rt_host_check_images(char *err, size_t err_bytes)
{
    static const char *names[] = { ".bobc.program", ".bobc.qmd", ".bobc.push", ".bobc.gpfifo" };
    rt_section version = {0}, images[4] = {{0}};
    int rc = RT_EXIT_INTERNAL;
    uint8_t *all = NULL;
    /* a host without its version section is damaged like one without an image: the plan
     * identity the images are checked against is in it (rt_self_section_read says which) */
    if ((rc = rt_self_section_read(".bobc.version", &version, err, err_bytes)))
        goto out;
    size_t total = 0;
    for (int i = 0; i < 4; i++) {
        if ((rc = rt_self_section_read(names[i], &images[i], err, err_bytes)))
            goto out;
        total += 8 + images[i].size;
    }
    rc = RT_EXIT_INTERNAL;
    const char *said = version_value(&version, "plan identity: sha256 ");
    if (!said) {
        snprintf(err, err_bytes, "damaged host file: its version section names no plan identity; rebuild it (bobc build)");
        rc = RT_EXIT_DAMAGED_HOST;
        goto out;
    }
    if (!(all = malloc(total ? total : 1))) {
        snprintf(err, err_bytes, "out of memory (%zu bytes) checking the device images", total);
        goto out;
    }
    size_t at = 0;
    for (int i = 0; i < 4; i++) {
        for (int b = 0; b < 8; b++)
            all[at++] = (uint8_t)((uint64_t)images[i].size >> (8 * b));
        memcpy(all + at, images[i].data, images[i].size);
        at += images[i].size;
    }
    uint8_t digest[32];
    char hex[65];
    rt_sha256(all, total, digest);
    for (int i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", digest[i]);
    if (memcmp(hex, said, 64) != 0) {
        snprintf(err, err_bytes, "damaged host file: its device images' sha256 is %.16s..., the plan identity it was "
                 "built with is %.16s...; copy the host again or rebuild it (bobc build)", hex, said);
        rc = RT_EXIT_DAMAGED_HOST;
        goto out;
    }
    rc = rt_check_manifest(&version, err, err_bytes);
out:
    free(all);
    free(version.data);
    for (int i = 0; i < 4; i++)
        free(images[i].data);
    return rc;
}
