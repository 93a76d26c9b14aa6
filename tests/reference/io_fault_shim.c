/* An LD_PRELOAD shim for the I/O fault tests (tests/reference/test_io_faults_s36.py,
 * test_io_faults_s47.py): makes close(), fsync(), unlink() or open() fail, deterministically, on
 * the calls whose file is named by the test.
 *
 *   IO_FAULT_OP     close | fsync | unlink | open (open and openat)
 *   IO_FAULT_PATH   the file (its absolute path as /proc/self/fd shows it; for unlink and open,
 *                   the path the call names, made absolute through its folder's real path) whose
 *                   calls fail; with a trailing '*', any file whose path starts with the rest
 *   IO_FAULT_ERRNO  the errno (default EIO)
 *
 * A failing close() still closes the descriptor (as the kernel does when close reports an
 * error).  The shim removes LD_PRELOAD from the environment at load, so nothing the process
 * starts is affected. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static const char *op, *path;
static int number = EIO;

__attribute__((constructor)) static void start(void)
{
    op = getenv("IO_FAULT_OP");
    path = getenv("IO_FAULT_PATH");
    if (getenv("IO_FAULT_ERRNO"))
        number = atoi(getenv("IO_FAULT_ERRNO"));
    unsetenv("LD_PRELOAD");
}

static int matches(const char *target)
{
    size_t len = strlen(path);
    if (len && path[len - 1] == '*')
        return !strncmp(target, path, len - 1);
    return !strcmp(target, path);
}

static int fails(const char *call, int fd)
{
    if (!op || !path || strcmp(op, call) || fd < 0)
        return 0;
    char link[64], target[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, target, sizeof target - 1);
    if (n < 0)
        return 0;
    target[n] = 0;
    return matches(target);
}

/* A call that names its file: the real path of the file's folder, then its name. */
static int fails_named(const char *call, const char *name)
{
    if (!op || !path || strcmp(op, call) || !name)
        return 0;
    char folder[4096], real[4096], target[8192];
    const char *slash = strrchr(name, '/');
    if (!slash)
        snprintf(folder, sizeof folder, ".");
    else
        snprintf(folder, sizeof folder, "%.*s", slash == name ? 1 : (int)(slash - name), name);
    if (!realpath(folder, real))
        return 0;
    snprintf(target, sizeof target, "%s/%s", strcmp(real, "/") ? real : "", slash ? slash + 1 : name);
    return matches(target);
}

int unlink(const char *name)
{
    if (fails_named("unlink", name)) {
        errno = number;
        return -1;
    }
    return (int)syscall(SYS_unlinkat, AT_FDCWD, name, 0);
}

/* openat's name made absolute through its folder's descriptor */
static int fails_at(const char *call, int folder, const char *name)
{
    if (folder == AT_FDCWD || !name || name[0] == '/')
        return fails_named(call, name);
    if (!op || !path || strcmp(op, call))
        return 0;
    char link[64], real[4096], target[8192];
    snprintf(link, sizeof link, "/proc/self/fd/%d", folder);
    ssize_t n = readlink(link, real, sizeof real - 1);
    if (n < 0)
        return 0;
    real[n] = 0;
    snprintf(target, sizeof target, "%s/%s", real, name);
    return matches(target);
}

static int open_at(int folder, const char *name, int flags, mode_t mode)
{
    if (fails_at("open", folder, name)) {
        errno = number;
        return -1;
    }
    return (int)syscall(SYS_openat, folder, name, flags, mode);
}

int open(const char *name, int flags, ...)
{
    mode_t mode = 0;
    if (flags & (O_CREAT | O_TMPFILE)) {
        va_list ap;
        va_start(ap, flags);
        mode = (mode_t)va_arg(ap, int);
        va_end(ap);
    }
    return open_at(AT_FDCWD, name, flags, mode);
}

int open64(const char *name, int flags, ...)
{
    mode_t mode = 0;
    if (flags & (O_CREAT | O_TMPFILE)) {
        va_list ap;
        va_start(ap, flags);
        mode = (mode_t)va_arg(ap, int);
        va_end(ap);
    }
    return open_at(AT_FDCWD, name, flags, mode);
}

int close(int fd)
{
    int fail = fails("close", fd);
    long rc = syscall(SYS_close, fd);
    if (fail) {
        errno = number;
        return -1;
    }
    return (int)rc;
}

int fsync(int fd)
{
    if (fails("fsync", fd)) {
        errno = number;
        return -1;
    }
    return (int)syscall(SYS_fsync, fd);
}

int openat(int folder, const char *name, int flags, ...)
{
    mode_t mode = 0;
    if (flags & (O_CREAT | O_TMPFILE)) {
        va_list ap;
        va_start(ap, flags);
        mode = (mode_t)va_arg(ap, int);
        va_end(ap);
    }
    return open_at(folder, name, flags, mode);
}

int openat64(int folder, const char *name, int flags, ...)
{
    mode_t mode = 0;
    if (flags & (O_CREAT | O_TMPFILE)) {
        va_list ap;
        va_start(ap, flags);
        mode = (mode_t)va_arg(ap, int);
        va_end(ap);
    }
    return open_at(folder, name, flags, mode);
}
