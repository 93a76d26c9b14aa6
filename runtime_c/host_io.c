/* See host_io.h.  The Python twin: compiler/bobc/reference/safe_io.py. */
#define _GNU_SOURCE
#include "host_io.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bob_exit.h"
#include "host_runtime.h"

static int say(char *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int say(char *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, BOB_ERR_BYTES, fmt, ap);
        va_end(ap);
    }
    return code;
}

static const char *kind_of(mode_t mode)
{
    if (S_ISDIR(mode)) return "a folder";
    if (S_ISLNK(mode)) return "a symbolic link";
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
    if (S_ISSOCK(mode)) return "a socket";
    return "not a regular file";
}

static void note(bob_io_files *files, const char *path, dev_t dev, ino_t ino)
{
    if (!files || files->input_count >= BOB_IO_MAX_FILES)
        return;
    bob_io_input *in = &files->inputs[files->input_count++];
    in->path = path;
    in->dev = dev;
    in->ino = ino;
    if (!realpath(path, in->real))
        snprintf(in->real, sizeof in->real, "%s", path);
}

int bob_io_read(bob_io_files *files, const char *path, const char *what, size_t limit, int code, uint8_t **data,
                size_t *size, char *err)
{
    *data = NULL;
    *size = 0;
    if (limit > BOB_IO_INPUT_LIMIT_BYTES)
        limit = BOB_IO_INPUT_LIMIT_BYTES;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return say(err, code, "%s %s: cannot open: %s", what, path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return say(err, code, "%s %s: cannot inspect: %s", what, path, strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return say(err, code, "%s %s: %s, not a regular file", what, path, kind_of(st.st_mode));
    }
    if ((uint64_t)st.st_size > limit) {
        close(fd);
        return say(err, code, "%s %s: %lld bytes, more than the %zu a %s can be", what, path, (long long)st.st_size,
                   limit, what);
    }
    /* one byte past the size fstat gave tells a file that grew while being read */
    size_t expected = (size_t)st.st_size;
    uint8_t *buf = malloc(expected + 1);
    if (!buf) {
        close(fd);
        return say(err, BOB_EXIT_INTERNAL, "%s %s: out of memory", what, path);
    }
    size_t got = 0;
    while (got <= expected) {
        ssize_t r = read(fd, buf + got, expected + 1 - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            free(buf);
            close(fd);
            return say(err, code, "%s %s: read failed: %s", what, path, strerror(e));
        }
        if (r == 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    if (got != expected) {
        free(buf);
        return say(err, code, "%s %s: changed while being read (%zu bytes, then %s%zu)", what, path, expected,
                   got > expected ? "more than " : "", got > expected ? expected : got);
    }
    note(files, path, st.st_dev, st.st_ino);
    *data = buf;
    *size = got;
    return 0;
}

int bob_io_note_input(bob_io_files *files, const char *path, const char *what, int code, char *err)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return say(err, code, "%s %s: cannot inspect: %s", what, path, strerror(errno));
    note(files, path, st.st_dev, st.st_ino);
    return 0;
}

int bob_io_check_step_room(uint64_t step, uint64_t updates, const char *path, char *err)
{
    if (updates > BOB_IO_STEP_LIMIT || step > BOB_IO_STEP_LIMIT - updates)
        return say(err, BOB_EXIT_BAD_CHECKPOINT, "checkpoint %s: step %llu leaves no room for %llu more updates "
                   "(limit %llu)", path, (unsigned long long)step, (unsigned long long)updates,
                   (unsigned long long)BOB_IO_STEP_LIMIT);
    return 0;
}

int bob_io_add_output(bob_io_files *files, const char *path, const char *option, const char *replaces, char *err)
{
#define REFUSE(...) do { \
        char why_[BOB_ERR_BYTES / 2]; \
        snprintf(why_, sizeof why_, __VA_ARGS__); \
        return say(err, BOB_EXIT_WRITE_FAILED, "output %s (%s): %s; nothing was written", path, option, why_); \
    } while (0)
    if (files->output_count >= BOB_IO_MAX_FILES)
        REFUSE("too many outputs");
    size_t n = strlen(path);
    if (n == 0)
        REFUSE("an empty path");
    if (n >= BOB_IO_PATH_BYTES)
        REFUSE("path too long");
    if (path[n - 1] == '/')
        REFUSE("ends with '/': an output is a file, not a folder");
    bob_io_output *o = &files->outputs[files->output_count];
    memset(o, 0, sizeof *o);
    o->path = path;
    o->option = option;
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    if (!slash)
        snprintf(o->folder, sizeof o->folder, ".");
    else if (slash == path)
        snprintf(o->folder, sizeof o->folder, "/");
    else
        snprintf(o->folder, sizeof o->folder, "%.*s", (int)(slash - path), path);
    if (!strcmp(base, ".") || !strcmp(base, ".."))
        REFUSE("'%s' names a folder, not a file", base);
    struct stat st;
    if (stat(o->folder, &st) != 0)
        REFUSE("its folder %s cannot be reached: %s", o->folder, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        REFUSE("%s is not a folder", o->folder);
    if (access(o->folder, W_OK | X_OK) != 0)
        REFUSE("its folder %s is not writable", o->folder);
    if (lstat(path, &st) == 0) {
        if (!S_ISREG(st.st_mode))
            REFUSE("is %s; only a regular file (or nothing) is replaced", kind_of(st.st_mode));
        o->exists = 1;
        o->dev = st.st_dev;
        o->ino = st.st_ino;
    } else if (errno != ENOENT) {
        REFUSE("cannot inspect it: %s", strerror(errno));
    }
    char folder_real[PATH_MAX];
    if (!realpath(o->folder, folder_real))
        REFUSE("its folder %s cannot be resolved: %s", o->folder, strerror(errno));
    if (snprintf(o->real, sizeof o->real, "%s%s%s", folder_real, strcmp(folder_real, "/") ? "/" : "", base) >=
        (int)sizeof o->real)
        REFUSE("path too long");
    for (int i = 0; i < files->output_count; i++) {
        const bob_io_output *other = &files->outputs[i];
        if (!strcmp(other->real, o->real) || (o->exists && other->exists && other->dev == o->dev && other->ino == o->ino))
            REFUSE("is the same file as %s %s", other->option, other->path);
    }
    for (int i = 0; i < files->input_count; i++) {
        const bob_io_input *in = &files->inputs[i];
        if (replaces && !strcmp(in->path, replaces))
            continue;
        if (!strcmp(in->real, o->real) || (o->exists && in->dev == o->dev && in->ino == o->ino))
            REFUSE("is the input %s; an output never replaces an input", in->path);
    }
    files->output_count++;
    return 0;
#undef REFUSE
}

int bob_io_stage(bob_io_files *files, const char *option, const void *data, size_t size, char *err)
{
    for (int i = 0; i < files->output_count; i++)
        if (!strcmp(files->outputs[i].option, option)) {
            files->outputs[i].data = data;
            files->outputs[i].size = size;
            files->outputs[i].staged = 1;
            return 0;
        }
    return say(err, BOB_EXIT_INTERNAL, "no output %s to stage", option);
}

static int write_temporary(bob_io_output *o, mode_t mask, char *err)
{
    const char *base = strrchr(o->path, '/');
    base = base ? base + 1 : o->path;
    if (snprintf(o->temporary, sizeof o->temporary, "%s/.%s.tmp-XXXXXX", o->folder, base) >= (int)sizeof o->temporary)
        return say(err, BOB_EXIT_WRITE_FAILED, "output %s: path too long (nothing was published)", o->path);
    int fd = mkostemp(o->temporary, O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        o->temporary[0] = 0;
        return say(err, BOB_EXIT_WRITE_FAILED, "output %s: cannot create a temporary file in %s: %s (nothing was "
                   "published)", o->path, o->folder, strerror(e));
    }
    const char *stage = "chmod";
    int e = 0;
    if (fchmod(fd, 0666 & ~mask) != 0) {
        e = errno;
        goto fail;
    }
    stage = "write";
    const uint8_t *p = o->data;
    size_t left = o->size;
    while (left) {
        ssize_t w = write(fd, p, left);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            e = w < 0 ? errno : EIO;
            goto fail;
        }
        p += w;
        left -= (size_t)w;
    }
    stage = "fsync";
    if (fsync(fd) != 0) {
        e = errno;
        goto fail;
    }
    stage = "close";
    if (close(fd) != 0) {
        fd = -1;
        e = errno;
        goto fail;
    }
    return 0;
fail:
    if (fd >= 0)
        close(fd);
    unlink(o->temporary);
    o->temporary[0] = 0;
    return say(err, BOB_EXIT_WRITE_FAILED, "output %s: %s of the temporary file failed: %s (nothing was published)",
               o->path, stage, strerror(e));
}

static void remove_temporaries(bob_io_files *files)
{
    for (int i = 0; i < files->output_count; i++)
        if (files->outputs[i].temporary[0]) {
            unlink(files->outputs[i].temporary);
            files->outputs[i].temporary[0] = 0;
        }
}

static void test_pause(void)
{
    const char *text = getenv(BOB_IO_PAUSE_VARIABLE);
    if (!text || !*text || strspn(text, "0123456789") != strlen(text) || strlen(text) > 6)
        return;
    long ms = atol(text);
    if (ms > 10000)
        ms = 10000;
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

int bob_io_publish(bob_io_files *files, char *err)
{
    mode_t mask = umask(0);
    umask(mask);
    int rc;
    for (int i = 0; i < files->output_count; i++) {
        bob_io_output *o = &files->outputs[i];
        if (!o->staged) {
            remove_temporaries(files);
            return say(err, BOB_EXIT_INTERNAL, "output %s (%s) was never staged (nothing was published)", o->path,
                       o->option);
        }
        if ((rc = write_temporary(o, mask, err))) {
            remove_temporaries(files);
            return rc;
        }
    }
    for (int i = 0; i < files->output_count; i++) {   /* still a regular file or nothing? */
        struct stat st;
        const bob_io_output *o = &files->outputs[i];
        if (lstat(o->path, &st) == 0 && !S_ISREG(st.st_mode)) {
            remove_temporaries(files);
            return say(err, BOB_EXIT_WRITE_FAILED, "output %s (%s): became %s during the run (nothing was published)",
                       o->path, o->option, kind_of(st.st_mode));
        }
    }
    for (int i = 0; i < files->output_count; i++) {
        bob_io_output *o = &files->outputs[i];
        if (i)
            test_pause();
        if (rename(o->temporary, o->path) != 0) {
            int e = errno;
            remove_temporaries(files);
            return say(err, BOB_EXIT_WRITE_FAILED, "output %s (%s): rename failed: %s (%s)", o->path, o->option,
                       strerror(e), i ? "the outputs before it in the publication order were published"
                                      : "nothing was published");
        }
        o->temporary[0] = 0;
    }
    for (int i = 0; i < files->output_count; i++) {
        int seen = 0;
        for (int k = 0; k < i; k++)
            seen |= !strcmp(files->outputs[k].folder, files->outputs[i].folder);
        if (seen)
            continue;
        int dfd = open(files->outputs[i].folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd >= 0) {
            if (fsync(dfd) != 0 && errno != EINVAL) {
                int e = errno;
                close(dfd);
                return say(err, BOB_EXIT_WRITE_FAILED, "outputs published, but fsync of the folder %s failed: %s",
                           files->outputs[i].folder, strerror(e));
            }
            close(dfd);
        }
    }
    return 0;
}
