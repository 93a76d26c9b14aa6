/* See diag_file.h.  Its Python twin (NATIVE_TRACE): compiler/bobc/reference/native_program.py. */
#include "diag_file.h"

#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host_io.h"
#include "host_runtime.h"
#include "rt_exit.h"

/* The input among `inputs` that is the file `st` describes, or NULL; the host's own file (it
 * reads its images from /proc/self/exe) is one too, named "PATH (this host's own file)". */
static const char *input_of(const struct stat *st, const char *const *inputs, int count)
{
    for (int i = 0; i < count; i++) {
        struct stat in;
        if (inputs[i] && stat(inputs[i], &in) == 0 && in.st_dev == st->st_dev && in.st_ino == st->st_ino)
            return inputs[i];
    }
    static char self_named[RT_IO_PATH_BYTES + 32];
    struct stat self;
    if (stat("/proc/self/exe", &self) == 0 && self.st_dev == st->st_dev && self.st_ino == st->st_ino) {
        char self_path[RT_IO_PATH_BYTES] = "/proc/self/exe";     /* kept when readlink fails */
        ssize_t length = readlink("/proc/self/exe", self_path, sizeof self_path - 1);
        if (length > 0)
            self_path[length] = 0;
        snprintf(self_named, sizeof self_named, "%s (this host's own file)", self_path);
        return self_named;
    }
    return NULL;
}

static int refuse(const char *variable, const char *path, const char *input, char *err, size_t err_bytes)
{
    snprintf(err, err_bytes, "%s %s: is the input %s; a diagnostic file never replaces an input; nothing was written",
             variable, path, input);
    return RT_EXIT_WRITE_FAILED;
}

int rt_diag_check(const char *variable, const char *path, const char *const *inputs, int count, char *err,
                  size_t err_bytes)
{
    struct stat st;
    const char *input = stat(path, &st) == 0 ? input_of(&st, inputs, count) : NULL;
    return input ? refuse(variable, path, input, err, err_bytes) : 0;
}

int rt_diag_open(const char *variable, const char *path, const char *const *inputs, int count, FILE **out,
                 char *err, size_t err_bytes)
{
    *out = NULL;
    struct stat st;
    /* judged before the open too: the running host's own file cannot be opened for writing
     * (ETXTBSY), and "Text file busy" would not say why it is refused */
    const char *named = stat(path, &st) == 0 ? input_of(&st, inputs, count) : NULL;
    if (named)
        return refuse(variable, path, named, err, err_bytes);
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0666);      /* not O_TRUNC: judged first */
    if (fd < 0 || fstat(fd, &st) != 0) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        snprintf(err, err_bytes, "%s %s: cannot open: %s", variable, path, strerror(e));
        return RT_EXIT_WRITE_FAILED;
    }
    const char *input = input_of(&st, inputs, count);
    if (input) {
        close(fd);
        return refuse(variable, path, input, err, err_bytes);
    }
    if ((S_ISREG(st.st_mode) && ftruncate(fd, 0) != 0) || !(*out = fdopen(fd, "w"))) {
        int e = errno;
        close(fd);
        snprintf(err, err_bytes, "%s %s: cannot open: %s", variable, path, strerror(e));
        return RT_EXIT_WRITE_FAILED;
    }
    return 0;
}

int rt_diag_close(const char *variable, const char *path, FILE *f, char *err, size_t err_bytes)
{
    /* a write that failed while the run went on (a full buffer written out) leaves the stream's
     * error flag; the flush of what is left says why (the same error again, as a rule) */
    int e = fflush(f) != 0 ? errno : 0;
    int failed = e || ferror(f);
    if (fclose(f) != 0 && !e) {
        e = errno;
        failed = 1;
    }
    if (!failed)
        return 0;
    char shown[RT_IO_SHOWN_BYTES + 1];
    snprintf(err, err_bytes, "%s %s: write failed: %s; the file is incomplete (the run's outputs are not affected)",
             variable, rt_io_shown(path, shown), e ? rt_write_failure(e) : "an earlier write failed");
    return RT_EXIT_WRITE_FAILED;
}
