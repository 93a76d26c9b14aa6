/* How the host touches files: compiler/bobc/reference/safe_io.py keeps the
 * same rules in Python, and tests/fuzz holds the two together.
 *
 * Inputs:  opened with O_NONBLOCK (a FIFO cannot hang the open), checked to
 *          be a regular file no larger than its limit, read once, whole.
 * Outputs: every path is checked before the GPU is touched: its folder
 *          exists and is writable; the path does not end in '/', and is a
 *          regular file or nothing (a symlink, folder, device or FIFO is
 *          refused, never replaced); a rename over it would not fail (it is
 *          not another user's file in a sticky folder that is not the user's
 *          either, and neither it nor its folder has the immutable or
 *          append-only attribute); no two outputs and no output and input
 *          are one file (real path, device/inode), except the output
 *          checkpoint and the input checkpoint (resume in place).
 *          Publication writes every output to a temporary file in its own
 *          folder (DIR/.NAME.tmp-XXXXXX) and fsyncs it; only when all are
 *          written are they renamed into place in the order they were added
 *          (the checkpoint last: a new checkpoint means every output of that
 *          run is new).  A failure before the renames removes the
 *          temporaries: nothing is published.
 * Two phases: rt_io_prepare writes the temporaries of the outputs staged so
 *          far now (the same synced files, the same refusals, each naming its
 *          output), so that a program can learn that its outputs can be
 *          written before it tells a peer so; rt_io_publish then only renames
 *          them (writing any output staged later).  Until then, rt_io_discard,
 *          a failed publication, or SIGINT, SIGTERM or SIGHUP removes them.
 * Journal: a publication of several files writes `.<last>.bob-journal` in the
 *          last output's folder (format: docs/runtime.md "Files"), naming
 *          each temporary and its destination, before the first rename, and
 *          removes it after the last.  rt_io_recover completes a journal a
 *          kill left before a later invocation reads or checks anything, so
 *          outputs of two runs are never seen side by side; it never puts an
 *          older file over a newer one (a journal older than one of its
 *          destinations is stale: refused, left as it is).
 * Locking: rt_io_publish and rt_io_recover hold an exclusive flock(2) on each
 *          folder they write in (bobc's Python side takes the same lock):
 *          publications into one folder are serialised, and a recovery never
 *          sees a live publication's journal.  A lock another process holds
 *          is said on stderr (one line naming the folder) before it is waited
 *          for; SIGINT while waiting removes the publication's temporaries,
 *          says "HOST: interrupted" and ends the process by SIGINT.
 * Messages: a path longer than RT_IO_SHOWN_BYTES is shown shortened in the
 *          middle (rt_io_shown), so that every message keeps its reason
 *          within RT_ERR_BYTES.
 * Limits: docs/limits.md. */
#ifndef RT_HOST_IO_H
#define RT_HOST_IO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define RT_IO_INPUT_LIMIT_BYTES ((size_t)1 << 30)  /* no input larger than 1 GiB is read */
#define RT_IO_STEP_LIMIT 0xFFFFFFFFull             /* a per-step fill's u32 global step */
#define RT_IO_MAX_FILES 8
#define RT_IO_PATH_BYTES 4096
#define RT_IO_NAME_ROOM 25     /* the bytes the longest publication file beside an output adds to its
                                  name, the journal's own temporary `..NAME.bob-journal.tmp-XXXXXX`:
                                  an output's name has NAME_MAX - 25 bytes at most */
#define RT_IO_SHOWN_BYTES 128  /* the most bytes of a path a message shows (rt_io_shown) */
#define RT_IO_SHOWN_HEAD 32    /* ... of which at least this many from its start */
/* a publication whose every rename was done but whose folder fsync failed (reference/safe_io.py
 * UNSYNCED_WARNING words it the same): the report's name, the folder, the system's words */
#define RT_IO_UNSYNCED_WARNING "%s: warning: the outputs were published, but fsync of their folder %s failed: %s; " \
                               "they are in place, but may not survive a crash or power loss: check the disk (dmesg)"
/* a publication (or a recovery) whose every rename was done but whose journal could not be
 * removed (EIO, EROFS; reference/safe_io.py JOURNAL_LEFT_WARNING words it the same): the report's
 * name, the journal, the system's words.  Left, it would be "completed" again by the next
 * invocation, or refused as stale once an output it names is replaced (probe s47 faultinject
 * finding 1) */
#define RT_IO_JOURNAL_LEFT_WARNING "%s: warning: the outputs were published, but their journal %s could not be " \
                                   "removed: %s; every file it lists is in place: remove the journal by hand"
#define RT_IO_PAUSE_VARIABLE "BOBC_IO_TEST_PAUSE_MS" /* tests only: a pause between two renames */
#define RT_IO_LOCK_PAUSE_VARIABLE "BOBC_IO_TEST_LOCK_PAUSE_MS" /* tests only: a pause between writing the
                                                              * temporaries and taking the publication lock */

typedef struct {
    const char *path;
    char real[RT_IO_PATH_BYTES];
    dev_t dev;
    ino_t ino;
} rt_io_input;

typedef struct {
    const char *path;
    const char *option;               /* "--result": for messages */
    char folder[RT_IO_PATH_BYTES];
    char real[RT_IO_PATH_BYTES];     /* real path of the folder + the file name */
    int exists;
    dev_t dev;
    ino_t ino;
    const void *data;                 /* staged bytes (owned by the caller) */
    size_t size;
    int staged;
    int prepared;                     /* its temporary written by rt_io_prepare: only its rename is left */
    char temporary[RT_IO_PATH_BYTES + 64];
    int temporary_folder;             /* while temporary[0]: the folder it was made in, open (O_PATH):
                                       * removed through it, wherever the folder was moved meanwhile */
} rt_io_output;

typedef struct {
    rt_io_input inputs[RT_IO_MAX_FILES];
    int input_count;
    rt_io_output outputs[RT_IO_MAX_FILES];
    int output_count;
} rt_io_files;

/* Read `path` whole (at most `limit` bytes) into *data (malloc'd); on refusal
 * returns `code` with a message in err.  With `files`, its identity is noted
 * for the alias checks. */
int rt_io_read(rt_io_files *files, const char *path, const char *what, size_t limit, int code, uint8_t **data,
                size_t *size, char *err);

/* rt_io_read of a file that must be `expected` bytes: one past it is refused unread with
 * "N bytes, expected exactly EXPECTED" (a shorter one is read; its caller says what it lacks). */
int rt_io_read_exact(rt_io_files *files, const char *path, const char *what, size_t expected, int code,
                     uint8_t **data, size_t *size, char *err);

/* Note an input already read elsewhere (its identity, for the alias checks). */
int rt_io_note_input(rt_io_files *files, const char *path, const char *what, int code, char *err);

/* Refuse (RT_EXIT_BAD_CHECKPOINT) a training checkpoint whose step leaves no
 * room for `updates` more: step + updates must stay within RT_IO_STEP_LIMIT. */
int rt_io_check_step_room(uint64_t step, uint64_t updates, const char *path, char *err);

/* Check output `path` now and add it (publication order = order added).
 * `replaces`: the path of the one input it may be (or NULL).  Returns
 * RT_EXIT_WRITE_FAILED with a message when it cannot be published safely. */
int rt_io_add_output(rt_io_files *files, const char *path, const char *option, const char *replaces, char *err);

/* The bytes output `option` will hold (kept by the caller until publication). */
int rt_io_stage(rt_io_files *files, const char *option, const void *data, size_t size, char *err);

/* `path` as a message shows it: whole when it has at most RT_IO_SHOWN_BYTES
 * bytes, else its start, "..." and its end (the file name whole when it
 * fits), RT_IO_SHOWN_BYTES bytes in all, never cutting a UTF-8 character; a control
 * character (a newline, a tab) is shown as '?', so a message stays one line.
 * Returns `path` or `out` (RT_IO_SHOWN_BYTES + 1 bytes). */
const char *rt_io_shown(const char *path, char *out);

/* A failing run's message `said` (`length` bytes) after `written` (> 0) of the request's
 * `publications` checkpoint publications were already put at `path` by this run (the last at
 * global step `step`): the number of bytes of `said` to show -- the message less a tail that says
 * nothing was published (" (nothing was published)", "; nothing was published"), which that
 * checkpoint belies -- and in `note` (`bytes` bytes) what follows them: "; publication N of M
 * (step S) stays at PATH; nothing else was published".  A publication whose journal is kept (a
 * rename failed after others were done: RT_IO_KEPT_JOURNAL) has put part of the last one in place
 * and says what to do: `note` is "".  Every host's words (plan_host.c fail, native_request.c
 * np_request_failure_note; reference/safe_io.py interval_note word for word). */
size_t rt_io_interval_note(const char *said, size_t length, uint64_t written, uint64_t publications, uint64_t step,
                           const char *path, char *note, size_t bytes);
#define RT_IO_KEPT_JOURNAL "is kept: once"   /* in a kept journal's message (publish_locked) */

/* Before anything else: complete (roll forward) any journal in the folders of
 * `paths` that names one of them, saying so on stderr.  A file there named
 * `.NAME.bob-journal` is a journal; one that is damaged (not in the journal's
 * form, a temporary that is not `.DEST.tmp-XXXXXX` beside its destination, or
 * not named after its last destination in that destination's folder) is
 * refused whatever it names; one naming an output whose temporaries are
 * missing out of order, or one of whose destinations was changed after the
 * journal was written (a later modification time: stale), is refused too.
 * Refused: RT_EXIT_WRITE_FAILED, by name, the journal left as it is and
 * nothing renamed.  The folders are locked while they are searched (waiting
 * for a live publication there to finish). */
int rt_io_recover(const char *const *paths, int count, char *err);

/* Publication's first phase: every staged output that has no temporary yet
 * written to a synced one beside it.  On failure every temporary is removed
 * and RT_EXIT_WRITE_FAILED returned with `output PATH (OPTION): DETAIL;
 * nothing was published`.  Not under the folders' locks (as rt_io_publish
 * writes its temporaries): two programs may prepare into one folder, and wait
 * for each other, before either renames. */
int rt_io_prepare(rt_io_files *files, char *err);

/* Remove every temporary written so far (prepared or not): nothing is published. */
void rt_io_discard(rt_io_files *files);

/* Write every output to a synced temporary, then rename them all in order
 * (under a journal when there are several), the outputs' folders locked from
 * the renames' checks to the journal's removal.  An output rt_io_prepare wrote
 * keeps its temporary (only renamed). */
int rt_io_publish(rt_io_files *files, char *err);

#endif
