/* A GPU fault's launches in `bobc dump`'s words (launch_rows.h). */
#include "launch_rows.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* `text` as a message shows a plan's name (out: BOBC_FAULT_TEXT_SHOWN + 1 bytes): at most
 * BOBC_FAULT_TEXT_SHOWN characters, a longer one cut and ending "...", a byte that is not
 * printable ASCII as '?'. */
static void shown_text(char *out, const char *text)
{
    size_t length = strlen(text), keep = length <= BOBC_FAULT_TEXT_SHOWN ? length : BOBC_FAULT_TEXT_SHOWN - 3;
    for (size_t i = 0; i < keep; i++)
        out[i] = text[i] >= 0x20 && text[i] < 0x7f ? text[i] : '?';
    memcpy(out + keep, "...", keep < length ? 3 : 0);
    out[keep + (keep < length ? 3 : 0)] = 0;
}

void rt_launch_rows(const bobc_launch *launches, uint32_t launch_count, const bobc_submission *s, char *out, size_t n)
{
    out[0] = 0;
    if (!s || !s->launch_count || !s->launches)
        return;
    size_t used = (size_t)snprintf(out, n, "; its launches: ");
    for (uint32_t i = 0; i < s->launch_count && i < BOBC_FAULT_LAUNCHES_SHOWN && used < n; i++) {
        uint32_t index = s->launches[i];
        if (i)
            used += (size_t)snprintf(out + used, n - used, ", ");
        if (used >= n)
            break;
        if (!launches || index >= launch_count) {
            used += (size_t)snprintf(out + used, n - used, "launch[%u] (not in the host's table)", index);
            continue;
        }
        const bobc_launch *l = &launches[index];
        char kernel[BOBC_FAULT_TEXT_SHOWN + 1], place[BOBC_FAULT_TEXT_SHOWN + 1];
        shown_text(kernel, l->kernel ? l->kernel : "?");
        if (l->place)
            shown_text(place, l->place);
        used += (size_t)snprintf(out + used, n - used, "launch[%u] (kernel %s, grid [0x%x, 0x%x, 0x%x]%s%s)", index,
                                 kernel, l->grid_x, l->grid_y, l->grid_z, l->place ? ", " : "",
                                 l->place ? place : "");
    }
    if (used < n && s->launch_count > BOBC_FAULT_LAUNCHES_SHOWN)
        snprintf(out + used, n - used, " and %u more", s->launch_count - BOBC_FAULT_LAUNCHES_SHOWN);
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const uint8_t *p)
{
    return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

void rt_launch_table_free(rt_launch_table *t)
{
    free(t->launches);
    free(t->submissions);
    free(t->entries);
    free(t->text);
    free(t->indices);
    memset(t, 0, sizeof *t);
}

#define TABLE_MAGIC "BOBCLNC1"

int rt_launch_table_decode(const uint8_t *section, size_t size, rt_launch_table *t, char *why, size_t why_bytes)
{
    memset(t, 0, sizeof *t);
    if (size < 16 || memcmp(section, TABLE_MAGIC, 8)) {
        snprintf(why, why_bytes, "it does not start %s and two counts", TABLE_MAGIC);
        return -1;
    }
    uint32_t launches = le32(section + 8), submissions = le32(section + 12);
    /* each launch takes 20 bytes at least, each submission 12: counts the bytes cannot hold are
     * refused before anything is allocated */
    if ((uint64_t)launches * 20 + (uint64_t)submissions * 12 > size - 16) {
        snprintf(why, why_bytes, "its counts (%u launches, %u submissions) need more than its %zu bytes", launches,
                 submissions, size);
        return -1;
    }
    t->launches = calloc(launches ? launches : 1, sizeof *t->launches);
    t->submissions = calloc(submissions ? submissions : 1, sizeof *t->submissions);
    t->entries = calloc(submissions ? submissions : 1, sizeof *t->entries);
    t->text = malloc(size);          /* the names and places with a NUL each: fewer than the section's bytes */
    t->indices = malloc(size);       /* likewise, 4 bytes an index */
    if (!t->launches || !t->submissions || !t->entries || !t->text || !t->indices) {
        rt_launch_table_free(t);
        snprintf(why, why_bytes, "out of memory for a %zu-byte launch table", size);
        return -1;
    }
    size_t at = 16, text = 0, indices = 0;
    for (uint32_t i = 0; i < launches; i++) {
        const char *texts[2];
        if (size - at < 16)
            goto short_table;
        bobc_launch *l = &t->launches[i];
        l->grid_x = le32(section + at);
        l->grid_y = le32(section + at + 4);
        l->grid_z = le32(section + at + 8);
        at += 12;
        for (int k = 0; k < 2; k++) {
            if (size - at < 4)
                goto short_table;
            uint32_t length = le32(section + at);
            at += 4;
            if (length > size - at)
                goto short_table;
            memcpy(t->text + text, section + at, length);
            t->text[text + length] = 0;
            texts[k] = length || !k ? t->text + text : NULL;
            text += (size_t)length + 1;
            at += length;
        }
        l->kernel = texts[0];
        l->place = texts[1];
    }
    for (uint32_t i = 0; i < submissions; i++) {
        if (size - at < 12)
            goto short_table;
        t->entries[i] = le64(section + at);
        uint32_t count = le32(section + at + 8);
        at += 12;
        if (count > (size - at) / 4)
            goto short_table;
        uint32_t *list = (uint32_t *)(void *)((uint8_t *)t->indices + indices);
        for (uint32_t k = 0; k < count; k++)
            list[k] = le32(section + at + 4 * (size_t)k);
        t->submissions[i].launch_count = count;
        t->submissions[i].launches = count ? list : NULL;
        at += 4 * (size_t)count;
        indices += 4 * (size_t)count;
    }
    if (at != size) {
        snprintf(why, why_bytes, "it holds %zu bytes after its last submission", size - at);
        rt_launch_table_free(t);
        return -1;
    }
    t->launch_count = launches;
    t->submission_count = submissions;
    return 0;
short_table:
    snprintf(why, why_bytes, "it ends at byte %zu, inside a field at byte %zu", size, at);
    rt_launch_table_free(t);
    return -1;
}

void rt_launch_table_line(const rt_launch_table *t, uint64_t entry, const char *host_path, char *out, size_t n)
{
    out[0] = 0;
    for (uint32_t k = 0; k < t->submission_count; k++) {
        if (t->entries[k] != entry)
            continue;
        char rows[RT_LAUNCH_ROWS_BYTES];
        rt_launch_rows(t->launches, t->launch_count, &t->submissions[k], rows, sizeof rows);
        char path[BOBC_FAULT_TEXT_SHOWN + 1];
        shown_text(path, host_path ? host_path : "HOST");
        snprintf(out, n, "%s; `bobc dump %s` lists submission[%u]'s launches", rows, path, k);
        return;
    }
}
