/* An LD_PRELOAD shim for the I/O fault tests (tests/reference/test_io_faults_s36.py): makes
 * close() or fsync() fail, deterministically, on the calls whose file is named by the test.
 *
 *   IO_FAULT_OP     close | fsync
 *   IO_FAULT_PATH   the file (its absolute path as /proc/self/fd shows it) whose calls fail;
 *                   with a trailing '*', any file whose path starts with the rest
 *   IO_FAULT_ERRNO  the errno (default EIO)
 *
 * A failing close() still closes the descriptor (as the kernel does when close reports an
 * error).  The shim removes LD_PRELOAD from the environment at load, so nothing the process
 * starts is affected. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
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
    size_t len = strlen(path);
    if (len && path[len - 1] == '*')
        return !strncmp(target, path, len - 1);
    return !strcmp(target, path);
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
