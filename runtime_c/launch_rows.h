/* A GPU fault's launches, named in `bobc dump`'s words: the plan host's table (bobc_plan.launches,
 * .submissions: host_plan.c, bobc.host.generate._launch_table) and a native host's .bobc.launches
 * section (bobc.native.launches), both written as
 *
 *     launch[L] (kernel NAME, grid [0xX, 0xY, 0xZ], PLACE), ... and N more
 *
 * (docs/runtime.md, "GPU faults"; docs/native-host.md). */
#ifndef RT_LAUNCH_ROWS_H
#define RT_LAUNCH_ROWS_H

#include <stddef.h>
#include <stdint.h>

/* A launch as the plan declares it, for messages: its kernel (the region's identity: `bobc dump
 * HOST`'s launch[L].kernel), its grid in blocks (launch[L].grid) and where the plan wrote it
 * (MODULE/PATH.bob:line:column, the path relative to its search folder; NULL: the plan does not
 * say).  bobc_plan.launches[L] is launch L. */
typedef struct {
    const char *kernel;
    uint32_t grid_x;
    uint32_t grid_y;
    uint32_t grid_z;
    const char *place;
} bobc_launch;

/* A submission's launches, in order (indices into the launches: `bobc dump HOST`'s
 * submission[K].launches). */
typedef struct {
    uint32_t launch_count;
    const uint32_t *launches;
} bobc_submission;

/* The first BOBC_FAULT_LAUNCHES_SHOWN launches are named, then how many more; a name or place past
 * BOBC_FAULT_TEXT_SHOWN characters is cut, ending "...", a byte that is not printable ASCII shown as
 * '?', so that the line stays one bounded line whatever the plan calls things. */
#define BOBC_FAULT_LAUNCHES_SHOWN 3
#define BOBC_FAULT_TEXT_SHOWN 96
/* What rt_launch_rows writes at most (BOBC_FAULT_LAUNCHES_SHOWN launches of two cut texts each and
 * their numbers, and "; its launches: ", " and N more"). */
#define RT_LAUNCH_ROWS_BYTES (BOBC_FAULT_LAUNCHES_SHOWN * (2 * BOBC_FAULT_TEXT_SHOWN + 96) + 64)

/* "; its launches: launch[L] (...), ... and N more" of `submission` (NULL or no launches: ""),
 * an index past `launch_count` said so ("launch[9] (not in the host's table)"), never read. */
void rt_launch_rows(const bobc_launch *launches, uint32_t launch_count, const bobc_submission *submission, char *out,
                    size_t n);

/* A native host's launch table, decoded from its .bobc.launches section (bobc.native.launches):
 *   "BOBCLNC1" | launch count u32 | submission count u32
 *   per launch:     grid x, y, z u32 | kernel length u32, bytes | place length u32, bytes (0: none)
 *   per submission: GPFIFO entry u64 | launch count u32 | launch indices u32...
 * all little-endian. */
typedef struct {
    bobc_launch *launches;
    uint32_t launch_count;
    bobc_submission *submissions;
    uint64_t *entries;              /* the GPFIFO entry each submission's Submit issues */
    uint32_t submission_count;
    char *text;                     /* the names and places, each NUL-terminated */
    uint32_t *indices;
} rt_launch_table;

/* 0, or -1 with `why` (a damaged section: what is wrong, at which byte; out of memory); *t is then
 * empty.  Every count and length is checked against the section's size before it is used. */
int rt_launch_table_decode(const uint8_t *section, size_t size, rt_launch_table *t, char *why, size_t why_bytes);
void rt_launch_table_free(rt_launch_table *t);

/* The launches of the submission whose Submit issues GPFIFO entry `entry` (its first such
 * submission), as rt_launch_rows writes them, then "; `bobc dump HOST` lists submission[K]'s
 * launches"; "" when the table has no submission of that entry. */
void rt_launch_table_line(const rt_launch_table *t, uint64_t entry, const char *host_path, char *out, size_t n);

/* The line rt_launch_table_line needs at most, with the host's path (shown cut). */
#define RT_LAUNCH_LINE_BYTES (RT_LAUNCH_ROWS_BYTES + 320)

#endif
