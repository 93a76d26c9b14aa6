/* The diagnostic files a host writes when asked in its environment (NATIVE_TRACE,
 * NATIVE_SUBMIT_TIMES, BOBC_HOST_TIMING): never one of the host's inputs.  They are not
 * outputs (not published atomically, not journalled), but a trace or timing file that
 * names the input stream or checkpoint would destroy it, so it is judged as an output is
 * against the inputs: the same file (device and inode) is refused, exit 8, before it is
 * opened for writing, and nothing is written. */
#ifndef RT_DIAG_FILE_H
#define RT_DIAG_FILE_H

#include <stddef.h>
#include <stdio.h>

/* 0, or RT_EXIT_WRITE_FAILED with one line in err (`err_bytes`) when `path`, the file that
 * environment variable `variable` names, is one of `inputs` (`count` paths; NULL entries
 * skipped).  A path that is not there yet, or an input that cannot be inspected, is no
 * input's file. */
int rt_diag_check(const char *variable, const char *path, const char *const *inputs, int count, char *err,
                  size_t err_bytes);

/* Open `path` for writing (created, or truncated once found to be none of `inputs`: the check
 * is on the file opened, so a path swapped since an earlier rt_diag_check is judged again).
 * 0 with *out set, or RT_EXIT_WRITE_FAILED with one line in err ("cannot open", or the
 * refusal rt_diag_check gives). */
int rt_diag_open(const char *variable, const char *path, const char *const *inputs, int count, FILE **out,
                 char *err, size_t err_bytes);

/* Close a file rt_diag_open opened: 0, or RT_EXIT_WRITE_FAILED with one line in err when any
 * of its writes failed (a full disk, the file size limit): `VARIABLE PATH: write failed: REASON;
 * the file is incomplete (the run's outputs are not affected)`.  The caller says it on stderr
 * and keeps the run's status: the file is a diagnostic, the outputs were published as they
 * were (probe s36 faultinject finding 3; reference/native_program.py words it the same). */
int rt_diag_close(const char *variable, const char *path, FILE *f, char *err, size_t err_bytes);

#endif
