/* See diag_file.h.  Its Python twin (NATIVE_TRACE): compiler/bobc/reference/native_program.py. */
#include "diag_file.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rt_exit.h"

/* The input among `inputs` that is the file `st` describes, or NULL. */
static const char *input_of(const struct stat *st, const char *const *inputs, int count)
{
    for (int i = 0; i < count; i++) {
        struct stat in;
        if (inputs[i] && stat(inputs[i], &in) == 0 && in.st_dev == st->st_dev && in.st_ino == st->st_ino)
            return inputs[i];
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
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0666);      /* not O_TRUNC: judged first */
    struct stat st;
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
