/* See host_io.h.  The Python twin: compiler/bobc/reference/safe_io.py. */
#define _GNU_SOURCE
#include "host_io.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>
#include <linux/fs.h>

#include "rt_exit.h"
#include "host_runtime.h"
#include "host_settings.h"

static const char *open_failure(int e);

static const char *kind_of(mode_t mode)
{
    if (S_ISDIR(mode)) return "a folder";
    if (S_ISLNK(mode)) return "a symbolic link";
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
    if (S_ISSOCK(mode)) return "a socket";
    return "not a regular file";
}

const char *rt_io_shown(const char *path, char *out)
{
    size_t n = strlen(path), keep = RT_IO_SHOWN_BYTES - 3;    /* the bytes kept beside "..." */
    if (n <= RT_IO_SHOWN_BYTES) {
        size_t i = 0;
        while (i < n && !rt_control_char((unsigned char)path[i]))
            i++;
        if (i == n)
            return path;
        memcpy(out, path, n + 1);
    } else {
        const char *slash = strrchr(path, '/');
        size_t tail = slash ? n - (size_t)(slash - path) : 0;   /* "/NAME" */
        if (!tail || tail > keep - RT_IO_SHOWN_HEAD)
            tail = keep - RT_IO_SHOWN_HEAD;
        size_t head = keep - tail, start = n - tail;
        while (head && ((unsigned char)path[head] & 0xC0) == 0x80)    /* never half a UTF-8 character */
            head--;
        while (start < n && ((unsigned char)path[start] & 0xC0) == 0x80)
            start++;
        snprintf(out, RT_IO_SHOWN_BYTES + 1, "%.*s...%s", (int)head, path, path + start);
    }
    for (char *c = out; *c; c++)
        if (rt_control_char((unsigned char)*c))
            *c = '?';
    return out;
}

#define CAP_FOWNER_BIT 3        /* linux/capability.h CAP_FOWNER */

/* Whether this process may replace another user's file in a sticky folder that is not its own:
 * the kernel asks for CAP_FOWNER in the effective set (/proc/self/status, CapEff), not for uid 0
 * -- root in a container that dropped the capability may not (probe s31 hostexe finding 3).
 * Without /proc, uid 0 is taken to.  Its twin: reference/safe_io.py may_replace_any_file. */
static int may_replace_any_file(void)
{
    FILE *status = fopen("/proc/self/status", "re");
    if (status) {
        char line[256];
        while (fgets(line, sizeof line, status))
            if (!strncmp(line, "CapEff:", 7)) {
                char *end;
                unsigned long long caps = strtoull(line + 7, &end, 16);
                if (end != line + 7) {
                    fclose(status);
                    return (int)(caps >> CAP_FOWNER_BIT & 1);
                }
            }
        fclose(status);
    }
    return geteuid() == 0;
}

/* The file attributes (FS_IOC_GETFLAGS) of `path` (a folder, through a symlink, or the file
 * itself); 0 when they cannot be read (it cannot be opened for reading, or its filesystem
 * has none): docs/runtime.md, "Files". */
static unsigned attributes_of(const char *path, int folder)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | (folder ? O_DIRECTORY : O_NOFOLLOW));
    if (fd < 0)
        return 0;
    int flags = 0;                  /* the kernel reads and writes an int, whatever the macro says */
    if (ioctl(fd, FS_IOC_GETFLAGS, &flags) != 0)
        flags = 0;
    close(fd);
    return (unsigned)flags;
}

/* Why `path` (the folder itself when `folder`) cannot take a rename, from its attributes; NULL when it can. */
static const char *unrenamable(const char *path, int folder)
{
    unsigned flags = attributes_of(path, folder);
    if (flags & FS_IMMUTABLE_FL)
        return folder ? "has the immutable attribute (lsattr shows 'i'): nothing in it can be replaced; "
                        "clear it (chattr -i) or choose another folder"
                      : "has the immutable attribute (lsattr shows 'i'), so it cannot be replaced; "
                        "clear it (chattr -i) or choose another path";
    if (flags & FS_APPEND_FL)
        return folder ? "has the append-only attribute (lsattr shows 'a'): nothing in it can be renamed; "
                        "clear it (chattr -a) or choose another folder"
                      : "has the append-only attribute (lsattr shows 'a'), so it cannot be replaced; "
                        "clear it (chattr -a) or choose another path";
    return NULL;
}

static void note(rt_io_files *files, const char *path, dev_t dev, ino_t ino)
{
    if (!files || files->input_count >= RT_IO_MAX_FILES)
        return;
    rt_io_input *in = &files->inputs[files->input_count++];
    in->path = path;
    in->dev = dev;
    in->ino = ino;
    if (!realpath(path, in->real))
        snprintf(in->real, sizeof in->real, "%s", path);
}

/* rt_io_read, and rt_io_read_exact: `exact` says the file must be `limit` bytes exactly, so a
 * larger one is refused with that size ("expected exactly"), the words a smaller one gets */
static int io_read(rt_io_files *files, const char *path, const char *what, size_t limit, int exact, int code,
                   uint8_t **data, size_t *size, char *err)
{
    *data = NULL;
    *size = 0;
    char shown[RT_IO_SHOWN_BYTES + 1];
    const char *named = rt_io_shown(path, shown);
    if (limit > RT_IO_INPUT_LIMIT_BYTES) {
        limit = RT_IO_INPUT_LIMIT_BYTES;
        exact = 0;              /* the bound is then the reader's own, not the file's size */
    }
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return rt_say(err, code, "%s %s: cannot open: %s", what, named, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return rt_say(err, code, "%s %s: cannot inspect: %s", what, named, strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return rt_say(err, code, "%s %s: %s, not a regular file", what, named, kind_of(st.st_mode));
    }
    if ((uint64_t)st.st_size > limit) {
        close(fd);
        char got[RT_GROUPED_BYTES], want[RT_GROUPED_BYTES];
        if (exact)      /* the sizes grouped, as rt_record_verify's (rt_grouped) */
            return rt_say(err, code, "%s %s: %s byte%s, expected exactly %s", what, named,
                          rt_grouped((unsigned long long)st.st_size, got), rt_plural((unsigned long long)st.st_size),
                          rt_grouped(limit, want));
        /* grouped too, as every size a host shows (rt_grouped: "1,073,741,825 bytes") */
        return rt_say(err, code, "%s %s: %s byte%s, more than %s %s can be (%s bytes at most are read)", what, named,
                      rt_grouped((unsigned long long)st.st_size, got), rt_plural((unsigned long long)st.st_size),
                      strchr("aeiou", what[0]) ? "an" : "a", what, rt_grouped(limit, want));
    }
    /* one byte past the size fstat gave tells a file that grew while being read */
    size_t expected = (size_t)st.st_size;
    uint8_t *buf = malloc(expected + 1);
    if (!buf) {
        close(fd);
        return rt_say(err, RT_EXIT_INTERNAL, "%s %s: out of memory", what, named);
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
            return rt_say(err, code, "%s %s: read failed: %s", what, named, strerror(e));
        }
        if (r == 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    if (got != expected) {
        free(buf);
        return rt_say(err, code, "%s %s: changed while being read (%zu bytes, then %s%zu)", what, named, expected,
                   got > expected ? "more than " : "", got > expected ? expected : got);
    }
    note(files, path, st.st_dev, st.st_ino);
    *data = buf;
    *size = got;
    return 0;
}

int rt_io_read(rt_io_files *files, const char *path, const char *what, size_t limit, int code, uint8_t **data,
                size_t *size, char *err)
{
    return io_read(files, path, what, limit, 0, code, data, size, err);
}

int rt_io_read_exact(rt_io_files *files, const char *path, const char *what, size_t expected, int code,
                     uint8_t **data, size_t *size, char *err)
{
    return io_read(files, path, what, expected, 1, code, data, size, err);
}

int rt_io_note_input(rt_io_files *files, const char *path, const char *what, int code, char *err)
{
    struct stat st;
    char shown[RT_IO_SHOWN_BYTES + 1];
    if (stat(path, &st) != 0)
        return rt_say(err, code, "%s %s: cannot inspect: %s", what, rt_io_shown(path, shown), strerror(errno));
    note(files, path, st.st_dev, st.st_ino);
    return 0;
}

int rt_io_check_step_room(uint64_t step, uint64_t updates, const char *path, char *err)
{
    char shown[RT_IO_SHOWN_BYTES + 1];
    if (updates > RT_IO_STEP_LIMIT || step > RT_IO_STEP_LIMIT - updates)
        return rt_say(err, RT_EXIT_BAD_CHECKPOINT, "checkpoint %s: step %llu leaves no room for %llu more update%s "
                   "(limit %llu); it can still be used for predict, or train from an earlier checkpoint",
                   rt_io_shown(path, shown), (unsigned long long)step, (unsigned long long)updates, rt_plural(updates),
                   (unsigned long long)RT_IO_STEP_LIMIT);
    return 0;
}

int rt_io_add_output(rt_io_files *files, const char *path, const char *option, const char *replaces, char *err)
{
    /* every path in a refusal is shown shortened (rt_io_shown), so the reason always fits */
    char shown[RT_IO_SHOWN_BYTES + 1], folder_shown[RT_IO_SHOWN_BYTES + 1], other_shown[RT_IO_SHOWN_BYTES + 1];
#define REFUSE(...) do { \
        char why_[RT_ERR_BYTES]; \
        snprintf(why_, sizeof why_, __VA_ARGS__); \
        return rt_say(err, RT_EXIT_WRITE_FAILED, "output %s (%s): %s; nothing was written", \
                      rt_io_shown(path, shown), option, why_); \
    } while (0)
#define FOLDER rt_io_shown(o->folder, folder_shown)
    if (files->output_count >= RT_IO_MAX_FILES)
        REFUSE("too many outputs");
    size_t n = strlen(path);
    if (n == 0)
        REFUSE("an empty path");
    if (n >= RT_IO_PATH_BYTES)
        REFUSE("path too long");
    if (path[n - 1] == '/')
        REFUSE("ends with '/': an output is a file, not a folder");
    rt_io_output *o = &files->outputs[files->output_count];
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
    struct stat st, folder_st;
    if (stat(o->folder, &folder_st) != 0) {
        if (errno == ENOENT)        /* as bobc's --emit-images says it (encode.py check_image_folder) */
            REFUSE("its folder %s does not exist; create it first", FOLDER);
        REFUSE("its folder %s cannot be reached: %s", FOLDER, strerror(errno));
    }
    if (!S_ISDIR(folder_st.st_mode))
        REFUSE("%s is not a folder", FOLDER);
    const char *why = unrenamable(o->folder, 1);
    if (why)
        REFUSE("its folder %s %s", FOLDER, why);
    if (access(o->folder, W_OK | X_OK) != 0) {
        /* which of the three (probe s31 hostexe finding 11); its twin: safe_io.py OutputSet.add */
        struct statvfs vfs;
        if (statvfs(o->folder, &vfs) == 0 && (vfs.f_flag & ST_RDONLY))
            REFUSE("its folder %s is on a read-only file system", FOLDER);
        if (access(o->folder, X_OK) != 0)
            REFUSE("its folder %s cannot be entered: its mode %04o gives no search (x) permission", FOLDER,
                   (unsigned)(folder_st.st_mode & 07777));
        REFUSE("its folder %s is not writable", FOLDER);
    }
    {
        /* the publication makes `.NAME.tmp-XXXXXX`, `.NAME.bob-journal` and the journal's temporary
         * `..NAME.bob-journal.tmp-XXXXXX` beside the output: a name too long for them is refused now,
         * by its length, not at publication after the GPU work */
        long name_max = pathconf(o->folder, _PC_NAME_MAX);
        if (name_max <= 0)
            name_max = 255;
        if ((long)strlen(base) + RT_IO_NAME_ROOM > name_max)
            REFUSE("its file name has %zu bytes, and its folder %s takes names of at most %ld: the publication "
                   "writes .NAME.tmp-XXXXXX and ..NAME.bob-journal.tmp-XXXXXX beside it, so an output's name may have at "
                   "most %ld; choose a shorter one", strlen(base), FOLDER, name_max, name_max - RT_IO_NAME_ROOM);
        /* access() trusts the mode bits; /proc, /sys and some mounts still refuse a new file, which
         * would be found only at publication, after the GPU work: try one now */
        char trial[RT_IO_PATH_BYTES + 64];
        snprintf(trial, sizeof trial, "%s/.bobc-trial-XXXXXX", o->folder);
        int fd = mkostemp(trial, O_CLOEXEC);
        if (fd < 0) {
            int e = errno;
            REFUSE("a file cannot be created in its folder %s: %s", FOLDER, open_failure(e));
        }
        close(fd);
        /* made, but not removable (EIO): unchecked, it stayed in the folder unsaid (probe s47
         * faultinject finding 3); a folder that fails so refuses the outputs before the GPU work */
        if (unlink(trial) != 0) {
            int e = errno;
            REFUSE("a trial file made in its folder %s cannot be removed: %s; remove the .bobc-trial-* file there "
                   "by hand", FOLDER, strerror(e));
        }
    }
    if (lstat(path, &st) == 0) {
        if (!S_ISREG(st.st_mode))
            REFUSE("is %s; only a regular file (or nothing) is replaced", kind_of(st.st_mode));
        /* a rename over it that would fail is refused now, not after the GPU work (docs/runtime.md, "Files") */
        uid_t me = geteuid();
        if ((folder_st.st_mode & S_ISVTX) && st.st_uid != me && folder_st.st_uid != me && !may_replace_any_file())
            REFUSE("it cannot be replaced: it belongs to another user (uid %lu) and its folder %s is sticky and "
                   "not yours; ask the owner to remove it, or choose another path", (unsigned long)st.st_uid, FOLDER);
        if ((why = unrenamable(path, 0)))
            REFUSE("it %s", why);
        o->exists = 1;
        o->dev = st.st_dev;
        o->ino = st.st_ino;
    } else if (errno != ENOENT) {
        REFUSE("cannot inspect it: %s", strerror(errno));
    }
    char folder_real[PATH_MAX];
    if (!realpath(o->folder, folder_real))
        REFUSE("its folder %s cannot be resolved: %s", FOLDER, strerror(errno));
    if (snprintf(o->real, sizeof o->real, "%s%s%s", folder_real, strcmp(folder_real, "/") ? "/" : "", base) >=
        (int)sizeof o->real)
        REFUSE("path too long");
    for (int i = 0; i < files->output_count; i++) {
        const rt_io_output *other = &files->outputs[i];
        if (!strcmp(other->real, o->real) || (o->exists && other->exists && other->dev == o->dev && other->ino == o->ino))
            REFUSE("is the same file as %s %s; give each output a path of its own", other->option,
                   rt_io_shown(other->path, other_shown));
    }
    for (int i = 0; i < files->input_count; i++) {
        const rt_io_input *in = &files->inputs[i];
        if (replaces && !strcmp(in->path, replaces))
            continue;
        if (!strcmp(in->real, o->real) || (o->exists && in->dev == o->dev && in->ino == o->ino))
            REFUSE("is the input %s; an output never replaces an input", rt_io_shown(in->path, other_shown));
    }
    /* the host's own file is an input too: it reads its images (and a native host its program)
     * from /proc/self/exe; the same device and inode is the same file by any path (a hard link,
     * `../`, a symlinked folder), and a rename over it would destroy the built host */
    struct stat self;
    if (o->exists && stat("/proc/self/exe", &self) == 0 && self.st_dev == o->dev && self.st_ino == o->ino) {
        char self_path[RT_IO_PATH_BYTES] = "/proc/self/exe";     /* kept when readlink fails */
        ssize_t length = readlink("/proc/self/exe", self_path, sizeof self_path - 1);
        if (length > 0)
            self_path[length] = 0;
        REFUSE("is the input %s (this host's own file); an output never replaces an input",
               rt_io_shown(self_path, other_shown));
    }
    files->output_count++;
    return 0;
#undef FOLDER
#undef REFUSE
}

int rt_io_stage(rt_io_files *files, const char *option, const void *data, size_t size, char *err)
{
    for (int i = 0; i < files->output_count; i++)
        if (!strcmp(files->outputs[i].option, option)) {
            files->outputs[i].data = data;
            files->outputs[i].size = size;
            files->outputs[i].staged = 1;
            return 0;
        }
    return rt_say(err, RT_EXIT_INTERNAL, "no output %s to stage", option);
}

/* A refusal of write_temporary: at publication `output PATH: DETAIL (nothing was published)`; at
 * rt_io_prepare (`named`) `output PATH (OPTION): DETAIL; nothing was published`, the argument named
 * (reference/safe_io.py OutputSet.prepare words it the same). */
/* Why a file could not be created (its temporary, the folder's trial file): the system's words, and
 * when no descriptor was left what to do -- this process's limit (EMFILE: ulimit -n) or the system's
 * table (ENFILE), as bobc's own commands say it (probe s34 ux finding 3).  reference/safe_io.py
 * open_failure words it the same. */
static const char *open_failure(int e)
{
    static _Thread_local char words[256];
    struct rlimit limit;
    if (e == EMFILE && getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
        snprintf(words, sizeof words, "%s (the limit of open files, ulimit -n, is %llu: raise it, then run again)",
                 strerror(e), (unsigned long long)limit.rlim_cur);
    else if (e == EMFILE)
        snprintf(words, sizeof words, "%s (the limit of open files, ulimit -n: raise it, then run again)", strerror(e));
    else if (e == ENFILE)
        snprintf(words, sizeof words, "%s (the system's table of open files is full: close programs that hold many "
                 "files open, then run again)", strerror(e));
    else
        return strerror(e);
    return words;
}

/* A publication's temporary that failed for want of room, ENOSPC (a full file system, or no
 * inode left) or EDQUOT: the system's words and what to do, as EFBIG and EMFILE get them (probe s47
 * faultinject finding 4; reference/safe_io.py room_failure words it the same); `otherwise` for
 * any other errno. */
static const char *room_failure(int e, const char *folder, const char *otherwise)
{
    static char words[RT_IO_SHOWN_BYTES + 224];
    char shown[RT_IO_SHOWN_BYTES + 1];
    if (e == ENOSPC)
        snprintf(words, sizeof words, "%s (the file system of %s is full: free space there, then run again)",
                 strerror(e), rt_io_shown(folder, shown));
    else if (e == EDQUOT)
        snprintf(words, sizeof words, "%s (the disk quota on the file system of %s is used up: free space there or "
                 "have the quota raised, then run again)", strerror(e), rt_io_shown(folder, shown));
    else
        return otherwise;
    return words;
}

static int temporary_refused(const rt_io_output *o, int named, char *err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int temporary_refused(const rt_io_output *o, int named, char *err, const char *fmt, ...)
{
    char shown[RT_IO_SHOWN_BYTES + 1], detail[RT_ERR_BYTES];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    if (named)
        return rt_say(err, RT_EXIT_WRITE_FAILED, "output %s (%s): %s; nothing was published",
                      rt_io_shown(o->path, shown), o->option, detail);
    return rt_say(err, RT_EXIT_WRITE_FAILED, "output %s: %s (nothing was published)", rt_io_shown(o->path, shown),
                  detail);
}

/* The temporary's name in its folder (after the last '/'). */
static const char *temporary_name(const rt_io_output *o)
{
    return strrchr(o->temporary, '/') + 1;
}

/* Remove (when `remove`) and forget `o`'s temporary: through the folder it was made in, so a folder
 * renamed during the run keeps nothing (probe s37 leftovers finding 1: by its old path, the unlink
 * missed it).  Async-signal-safe when `close_folder` is 0. */
static void drop_temporary(rt_io_output *o, int remove, int close_folder)
{
    if (!o->temporary[0])
        return;
    if (remove)
        unlinkat(o->temporary_folder, temporary_name(o), 0);
    if (close_folder) {
        close(o->temporary_folder);
        o->temporary[0] = 0;
    }
}

/* mkostemp's `.NAME.tmp-XXXXXX` (its six letters and digits: temporary_beside checks them), made
 * relative to the open folder `folder`: a descriptor of the new file, or -1 with errno. */
static int make_temporary_at(int folder, char *name)
{
    static const char letters[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    size_t length = strlen(name);
    for (int attempt = 0; attempt < 100; attempt++) {
        unsigned char random[6];
        if (getrandom(random, sizeof random, 0) != (ssize_t)sizeof random) {
            struct timespec now;                       /* no getrandom: the clock and the attempt */
            clock_gettime(CLOCK_REALTIME, &now);
            unsigned long mix = (unsigned long)now.tv_nsec ^ ((unsigned long)getpid() << 16) ^ (unsigned long)attempt * 7919u;
            for (int k = 0; k < 6; k++, mix /= 62)
                random[k] = (unsigned char)(mix % 62);
        }
        for (int k = 0; k < 6; k++)
            name[length - 6 + k] = letters[random[k] % 62];
        int fd = openat(folder, name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    errno = EEXIST;
    return -1;
}

static int write_temporary(rt_io_output *o, mode_t mask, int named, char *err)
{
    char folder_shown[RT_IO_SHOWN_BYTES + 1];
    const char *base = strrchr(o->path, '/');
    base = base ? base + 1 : o->path;
    if (snprintf(o->temporary, sizeof o->temporary, "%s/.%s.tmp-XXXXXX", o->folder, base) >= (int)sizeof o->temporary) {
        o->temporary[0] = 0;
        return temporary_refused(o, named, err, "path too long");
    }
    rt_ignore_file_size_signal();     /* past `ulimit -f`: EFBIG, refused below, not a silent SIGXFSZ */
    /* made, dated and removed relative to its folder, opened now: a folder moved during the run
     * keeps none of its temporaries (drop_temporary) */
    int fd = -1;
    o->temporary_folder = open(o->folder, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (o->temporary_folder >= 0) {
        fd = make_temporary_at(o->temporary_folder, strrchr(o->temporary, '/') + 1);
        if (fd < 0) {
            int e = errno;
            close(o->temporary_folder);
            errno = e;
        }
    }
    if (fd < 0) {
        int e = errno;
        o->temporary[0] = 0;
        return temporary_refused(o, named, err, "cannot create a temporary file in %s: %s",
                                 rt_io_shown(o->folder, folder_shown), room_failure(e, o->folder, open_failure(e)));
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
    drop_temporary(o, 1, 1);
    return temporary_refused(o, named, err, "%s of the temporary file failed: %s", stage,
                             room_failure(e, o->folder, rt_write_failure(e)));
}

static void forget_prepared(void);

static void remove_temporaries(rt_io_files *files)
{
    forget_prepared();
    for (int i = 0; i < files->output_count; i++)
        drop_temporary(&files->outputs[i], 1, 1);
}

/* Prepared temporaries outlive the command that wrote them (a program talks to its peer before
 * its end): SIGINT, SIGTERM or SIGHUP meanwhile removes them and ends the process by that signal,
 * as it would have ended (only async-signal-safe calls; a signal that was ignored or handled by
 * someone else is left alone).  SIGKILL cannot be caught: its temporaries stay, named
 * .NAME.tmp-XXXXXX beside their outputs (docs/runtime.md, "Files"). */
static const int prepared_signals[] = { SIGINT, SIGTERM, SIGHUP };
#define PREPARED_SIGNALS ((int)(sizeof prepared_signals / sizeof prepared_signals[0]))
static struct {
    rt_io_files *files;
    struct sigaction previous[PREPARED_SIGNALS];
    int installed[PREPARED_SIGNALS];
} prepared;

static void interrupted_while_prepared(int sig)
{
    int saved = errno;
    if (prepared.files)
        for (int i = 0; i < prepared.files->output_count; i++)
            drop_temporary(&prepared.files->outputs[i], 1, 0);
    /* SA_RESETHAND: the default action now.  Raised, `sig` stays pending (blocked while its handler
     * runs); unblocked alone it is delivered here, so the process ends by the first signal.  Left to
     * the handler's return, a second of the three that came during the removal (blocked by sa_mask)
     * was delivered with it, the lower number first: a SIGINT during a SIGTERM's cleanup ran this
     * handler again and ended the process by SIGINT, 130 for 143 (probe s46 leftovers8 finding 2). */
    raise(sig);
    sigset_t only;
    sigemptyset(&only);
    sigaddset(&only, sig);
    sigprocmask(SIG_UNBLOCK, &only, NULL);
    errno = saved;
}

static void hold_prepared(rt_io_files *files)
{
    if (prepared.files)
        return;
    prepared.files = files;
    for (int k = 0; k < PREPARED_SIGNALS; k++) {
        struct sigaction previous, handler;
        prepared.installed[k] = 0;
        if (sigaction(prepared_signals[k], NULL, &previous) != 0 || (previous.sa_flags & SA_SIGINFO) ||
            previous.sa_handler != SIG_DFL)
            continue;
        memset(&handler, 0, sizeof handler);
        handler.sa_handler = interrupted_while_prepared;
        sigemptyset(&handler.sa_mask);
        for (int j = 0; j < PREPARED_SIGNALS; j++)
            sigaddset(&handler.sa_mask, prepared_signals[j]);
        handler.sa_flags = SA_RESETHAND;
        if (sigaction(prepared_signals[k], &handler, NULL) == 0) {
            prepared.previous[k] = previous;
            prepared.installed[k] = 1;
        }
    }
}

static void forget_prepared(void)
{
    if (!prepared.files)
        return;
    for (int k = 0; k < PREPARED_SIGNALS; k++)
        if (prepared.installed[k]) {
            sigaction(prepared_signals[k], &prepared.previous[k], NULL);
            prepared.installed[k] = 0;
        }
    prepared.files = NULL;
}

int rt_io_prepare(rt_io_files *files, char *err)
{
    mode_t mask = umask(0);
    umask(mask);
    for (int i = 0; i < files->output_count; i++) {
        rt_io_output *o = &files->outputs[i];
        if (!o->staged || o->temporary[0])
            continue;
        int rc = write_temporary(o, mask, 1, err);
        if (rc) {
            remove_temporaries(files);
            return rc;
        }
        o->prepared = 1;
        hold_prepared(files);
    }
    return 0;
}

void rt_io_discard(rt_io_files *files)
{
    remove_temporaries(files);
    for (int i = 0; i < files->output_count; i++)
        files->outputs[i].prepared = 0;
}

/* A tests-only setting's milliseconds, at most 10000: ASCII digits, six at most; `unset` for
 * anything else (reference/safe_io.py _test_ms reads them alike). */
static long test_ms(const char *variable, long unset)
{
    const char *text = getenv(variable);
    if (!text || !*text || strspn(text, "0123456789") != strlen(text) || strlen(text) > 6)
        return unset;
    long ms = atol(text);
    return ms > 10000 ? 10000 : ms;
}

static void test_pause(const char *variable)
{
    long ms = test_ms(variable, 0);
    if (!ms)
        return;
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* The publication lock (docs/runtime.md "Files"; reference/safe_io.py lock_folders): an exclusive
 * flock(2) on each folder a publication or a recovery works in, each folder once (by device and
 * inode), taken in (device, inode) order so that two invocations never wait on each other
 * crosswise.  bobc's Python side takes the same locks, so hosts and `bobc run --reference` or
 * `bobc build --emit-images` exclude one another.  A folder that cannot be opened or locked (no
 * read permission; a filesystem without flock) is left unlocked.
 *
 * A lock another process holds is never waited for silently: it is tried without blocking first,
 * and when it is held it is tried again every LOCK_POLL_MS for LOCK_GRACE_MS (a publication of a
 * few files next door ends well within it: no word); once the wait has lasted that long, one line
 * on stderr (LOCK_NOTICE, the reference's words after its name) says which folder and what to do
 * before this invocation blocks (probe s30 cache finding 9).  Ctrl-C (SIGINT) while it waits
 * removes the publication's temporaries, says `HOST: interrupted` and ends the process by SIGINT,
 * as an uncaught SIGINT would have (the reference: `bobc: interrupted`, exit 130); a SIGINT that
 * was ignored stays ignored. */
#define LOCK_GRACE_MS 1000     /* reference/safe_io.py LOCK_GRACE_MS */
#define LOCK_POLL_MS 10
#define LOCK_GRACE_VARIABLE "BOBC_IO_TEST_LOCK_GRACE_MS"   /* tests only: another grace, in ms (at most 10000) */
#define LOCK_NOTICE "%s: folder %s is locked: another process is publishing into it; waiting for it to " \
                    "finish (if nothing else should be running, find it with fuser -v or lsof on the folder)\n"

typedef struct {
    int fd[RT_IO_MAX_FILES];
    int count;
} folder_locks;

/* What interrupted_while_waiting needs, set before its handler is installed. */
static struct {
    rt_io_files *files;           /* whose temporaries it removes (NULL: a recovery, nothing written) */
    char said[RT_IO_PATH_BYTES];  /* "HOST: interrupted\n" */
    size_t said_bytes;
} waiting;

/* SIGINT while blocked on a folder lock: only async-signal-safe calls.  The handler was installed
 * with SA_RESETHAND, so the signal raised again ends the process once the handler returns. */
static void interrupted_while_waiting(int sig)
{
    int saved = errno;
    if (waiting.files)
        for (int i = 0; i < waiting.files->output_count; i++)
            drop_temporary(&waiting.files->outputs[i], 1, 0);
    if (write(STDERR_FILENO, waiting.said, waiting.said_bytes) < 0) {
    }
    raise(sig);
    errno = saved;
}

static long lock_grace_ms(void)
{
    return test_ms(LOCK_GRACE_VARIABLE, LOCK_GRACE_MS);
}

static long elapsed_ms(const struct timespec *since)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (now.tv_sec - since->tv_sec) * 1000L + (now.tv_nsec - since->tv_nsec) / 1000000L;
}

/* Wait for `fd`'s lock (held by another process): tried again for the grace period, then, after
 * saying so, blocked on; 0 once it is held. */
static int wait_for_lock(int fd, const char *folder, rt_io_files *files)
{
    struct sigaction previous, on_interrupt;
    int caught = sigaction(SIGINT, NULL, &previous) == 0 && !(previous.sa_flags & SA_SIGINFO) &&
                 previous.sa_handler == SIG_DFL;
    if (caught) {
        int n = snprintf(waiting.said, sizeof waiting.said, "%s: interrupted\n", rt_report_name());
        waiting.said_bytes = n < 0 ? 0 : (size_t)n < sizeof waiting.said ? (size_t)n : sizeof waiting.said - 1;
        waiting.files = files;
        memset(&on_interrupt, 0, sizeof on_interrupt);
        on_interrupt.sa_handler = interrupted_while_waiting;
        sigemptyset(&on_interrupt.sa_mask);
        on_interrupt.sa_flags = SA_RESETHAND;
        caught = sigaction(SIGINT, &on_interrupt, NULL) == 0;
    }
    int rc = -1;
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    long grace = lock_grace_ms();
    for (;;) {
        rc = flock(fd, LOCK_EX | LOCK_NB);
        if (rc == 0 || (errno != EWOULDBLOCK && errno != EINTR) || elapsed_ms(&start) >= grace)
            break;
        struct timespec pause = { 0, LOCK_POLL_MS * 1000000L };
        nanosleep(&pause, NULL);
    }
    if (rc != 0 && (errno == EWOULDBLOCK || errno == EINTR)) {
        char shown[RT_IO_SHOWN_BYTES + 1];
        fprintf(stderr, LOCK_NOTICE, rt_report_name(), rt_io_shown(folder, shown));
        fflush(stderr);
        while ((rc = flock(fd, LOCK_EX)) != 0 && errno == EINTR) {
        }
    }
    if (caught)
        sigaction(SIGINT, &previous, NULL);
    waiting.files = NULL;
    return rc;
}

/* Lock `folders`; `files`: the publication whose temporaries a Ctrl-C while waiting removes (NULL
 * for a recovery). */
static void lock_folders(const char *const *folders, int count, folder_locks *locks, rt_io_files *files)
{
    struct {
        int fd;
        dev_t dev;
        ino_t ino;
        const char *folder;
    } opened[RT_IO_MAX_FILES];
    int n = 0;
    locks->count = 0;
    for (int i = 0; i < count && n < RT_IO_MAX_FILES; i++) {
        int fd = open(folders[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        struct stat st;
        if (fd < 0)
            continue;
        if (fstat(fd, &st) != 0) {
            close(fd);
            continue;
        }
        int seen = 0;
        for (int k = 0; k < n; k++)
            seen |= opened[k].dev == st.st_dev && opened[k].ino == st.st_ino;
        if (seen) {              /* a second open file would wait on the first one's lock */
            close(fd);
            continue;
        }
        int at = n++;            /* kept sorted by (device, inode) */
        while (at > 0 && (opened[at - 1].dev > st.st_dev ||
                          (opened[at - 1].dev == st.st_dev && opened[at - 1].ino > st.st_ino))) {
            opened[at] = opened[at - 1];
            at--;
        }
        opened[at].fd = fd;
        opened[at].dev = st.st_dev;
        opened[at].ino = st.st_ino;
        opened[at].folder = folders[i];
    }
    for (int i = 0; i < n; i++) {
        int rc;
        while ((rc = flock(opened[i].fd, LOCK_EX | LOCK_NB)) != 0 && errno == EINTR) {
        }
        if (rc != 0 && errno == EWOULDBLOCK)
            rc = wait_for_lock(opened[i].fd, opened[i].folder, files);
        if (rc != 0)
            close(opened[i].fd);
        else
            locks->fd[locks->count++] = opened[i].fd;
    }
}

static void unlock_folders(folder_locks *locks)
{
    while (locks->count > 0)
        close(locks->fd[--locks->count]);   /* closing the descriptor releases its flock */
}

/* The publication journal (docs/runtime.md "Files"; reference/safe_io.py):
 *     bob-journal 1 <pairs>\n
 *     <bytes> <temporary>\n<bytes> <destination>\n     (per pair, in rename order)
 *     end\n
 * Absolute paths, each preceded by its length in bytes. */
#define JOURNAL_SUFFIX ".bob-journal"
#define JOURNAL_BYTES (2 * RT_IO_MAX_FILES * (RT_IO_PATH_BYTES + 96) + 64)

static void sync_folder(const char *folder)
{
    int dfd = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        fsync(dfd);
        close(dfd);
    }
}

/* fsync a folder outputs were just renamed into: 0, or the errno of an fsync that failed (a
 * folder that cannot be opened, or a file system that cannot fsync a folder, EINVAL, is none). */
static int fsync_folder(const char *folder)
{
    int dfd = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC), e = 0;
    if (dfd >= 0) {
        if (fsync(dfd) != 0 && errno != EINVAL)
            e = errno;
        close(dfd);
    }
    return e;
}

/* Remove the journal of a publication whose every rename is done, then fsync its folder; a
 * removal that fails (not ENOENT: removed by hand) is one warning, the status unchanged (every
 * output was written).  Unchecked, the journal stayed unsaid (probe s47 faultinject finding 1). */
static void remove_finished_journal(const char *journal, const char *folder)
{
    if (unlink(journal) != 0 && errno != ENOENT) {
        int e = errno;
        char shown[RT_IO_SHOWN_BYTES + 1];
        fprintf(stderr, RT_IO_JOURNAL_LEFT_WARNING "\n", rt_report_name(), rt_io_shown(journal, shown), strerror(e));
        fflush(stderr);
    }
    sync_folder(folder);
}

static void folder_of(const char *path, char *folder, size_t size)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(folder, size, ".");
    else
        snprintf(folder, size, "%.*s", slash == path ? 1 : (int)(slash - path), path);
}

/* Publish the journal of `files` (temporaries written) durably into `journal`. */
static int journal_write(rt_io_files *files, char *journal, size_t journal_size, mode_t mask, char *err)
{
    static char text[JOURNAL_BYTES];
    char shown[RT_IO_SHOWN_BYTES + 1];
    size_t n = (size_t)snprintf(text, sizeof text, "bob-journal 1 %d\n", files->output_count);
    for (int i = 0; i < files->output_count && n < sizeof text; i++) {
        const rt_io_output *o = &files->outputs[i];
        char real_folder[RT_IO_PATH_BYTES];
        folder_of(o->real, real_folder, sizeof real_folder);
        const char *tbase = strrchr(o->temporary, '/') + 1;
        int tlen = (int)(strlen(real_folder) + (strcmp(real_folder, "/") ? 1 : 0) + strlen(tbase));
        n += (size_t)snprintf(text + n, sizeof text - n, "%d %s%s%s\n%zu %s\n", tlen, real_folder,
                              strcmp(real_folder, "/") ? "/" : "", tbase, strlen(o->real), o->real);
        sync_folder(o->folder);    /* the temporaries' names are durable before the journal */
    }
    if (n < sizeof text)
        n += (size_t)snprintf(text + n, sizeof text - n, "end\n");
    rt_io_output *last = &files->outputs[files->output_count - 1];
    const char *base = strrchr(last->real, '/') + 1;
    if (n >= sizeof text ||
        snprintf(journal, journal_size, "%s/.%s" JOURNAL_SUFFIX, last->folder, base) >= (int)journal_size)
        return rt_say(err, RT_EXIT_WRITE_FAILED, "output %s: the journal's paths are too long (nothing was published)",
                   rt_io_shown(last->path, shown));
    rt_io_output staged = { 0 };
    staged.path = journal;
    staged.option = last->option;
    snprintf(staged.folder, sizeof staged.folder, "%s", last->folder);
    staged.data = text;
    staged.size = n;
    int rc = write_temporary(&staged, mask, 0, err);
    if (rc)
        return rc;
    if (rename(staged.temporary, journal) != 0) {
        int e = errno;
        drop_temporary(&staged, 1, 1);
        return rt_say(err, RT_EXIT_WRITE_FAILED, "cannot publish the journal %s: %s (nothing was published)",
                   rt_io_shown(journal, shown), strerror(e));
    }
    drop_temporary(&staged, 0, 1);
    sync_folder(last->folder);
    return 0;
}

/* A number of the journal's form at `p`: one or more ASCII digits (no sign, no space: strtoul and
 * sscanf take both), at most `most`, leading zeros taken (reference/digits.py decimal_at_most).
 * The end of its digits with *value, or NULL. */
static const char *journal_number(const char *p, unsigned long most, unsigned long *value)
{
    unsigned long v = 0;
    const char *start = p;
    for (; *p >= '0' && *p <= '9'; p++) {
        unsigned long digit = (unsigned long)(*p - '0');
        if (digit > most || v > (most - digit) / 10)
            return NULL;
        v = v * 10 + digit;
    }
    if (p == start)
        return NULL;
    *value = v;
    return p;
}

#define JOURNAL_UNREAD (-2)

/* The pairs of journal `path` into names[2 * pairs] and its modification time into *written;
 * the pair count, -1 when it does not read back in the journal's form, or JOURNAL_UNREAD with
 * errno when it could not be opened or read (EIO, EACCES: not "damaged", probe s47 faultinject
 * finding 2; a symbolic link, ELOOP under O_NOFOLLOW, is no journal's form). */
static int journal_read(const char *path, char names[][RT_IO_PATH_BYTES], int most, struct timespec *written)
{
    static char text[JOURNAL_BYTES];
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return errno == ELOOP ? -1 : JOURNAL_UNREAD;
    struct stat st;
    int regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    ssize_t got = regular ? read(fd, text, sizeof text - 1) : -1;
    int e = errno;
    close(fd);
    if (regular && got < 0) {
        errno = e;
        return JOURNAL_UNREAD;
    }
    if (got <= 0)
        return -1;
    *written = st.st_mtim;
    text[got] = 0;
    static const char head[] = "bob-journal 1 ";
    unsigned long pairs, len;
    const char *p = strncmp(text, head, sizeof head - 1) ? NULL
                                                         : journal_number(text + sizeof head - 1, (unsigned long)most, &pairs);
    if (!p || pairs < 1 || *p != '\n')
        return -1;
    const char *end = text + got;
    p++;
    for (unsigned long i = 0; i < 2 * pairs; i++) {
        const char *after = journal_number(p, RT_IO_PATH_BYTES - 1, &len);
        if (!after || *after != ' ' || len == 0 || (size_t)(end - after) < len + 2 || after[1 + len] != '\n')
            return -1;
        memcpy(names[i], after + 1, len);
        names[i][len] = 0;
        if (strlen(names[i]) != len)
            return -1;
        p = after + 2 + len;
    }
    return (end - p == 4 && !memcmp(p, "end\n", 4)) ? (int)pairs : -1;
}

/* Whether `temporary` is what write_temporary makes for `destination`: `DIR/.NAME.tmp-XXXXXX` (six
 * letters or digits, as mkstemp makes them) where the destination is the absolute `DIR/NAME`. */
static int temporary_beside(const char *temporary, const char *destination)
{
    const char *t = strrchr(temporary, '/'), *d = strrchr(destination, '/');
    if (!t || !d || temporary[0] != '/' || destination[0] != '/' || t - temporary != d - destination ||
        memcmp(temporary, destination, (size_t)(t - temporary)))
        return 0;
    const char *name = d + 1;
    size_t len = strlen(name);
    if (!len || !strcmp(name, ".") || !strcmp(name, "..") || t[1] != '.' || strncmp(t + 2, name, len) ||
        strncmp(t + 2 + len, ".tmp-", 5))
        return 0;
    const char *x = t + 2 + len + 5;
    return strlen(x) == 6 &&
           strspn(x, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789") == 6;
}

/* Whether journal `name` in `folder` is `.NAME.bob-journal` in the folder of its last destination, NAME. */
static int journal_named_after(const char *folder, const char *name, const char *destination)
{
    const char *d = strrchr(destination, '/');
    size_t len = d ? strlen(d + 1) : 0, suffix = strlen(JOURNAL_SUFFIX);
    if (!len || strlen(name) != len + 1 + suffix || name[0] != '.' || strncmp(name + 1, d + 1, len))
        return 0;
    char destination_folder[RT_IO_PATH_BYTES];
    folder_of(destination, destination_folder, sizeof destination_folder);
    struct stat here, there;
    return stat(folder, &here) == 0 && stat(destination_folder, &there) == 0 && here.st_dev == there.st_dev &&
           here.st_ino == there.st_ino;
}

static int later(struct timespec a, struct timespec b)
{
    return a.tv_sec > b.tv_sec || (a.tv_sec == b.tv_sec && a.tv_nsec > b.tv_nsec);
}

/* Complete journal `name` (in `folder`) when it names one of `reals`; see host_io.h.  Every
 * check comes before the first rename: a journal refused renames nothing. */
static int journal_complete(const char *folder, const char *name, char reals[][RT_IO_PATH_BYTES], int count,
                            char *err)
{
    static char names[2 * RT_IO_MAX_FILES][RT_IO_PATH_BYTES];
    char path[2 * RT_IO_PATH_BYTES], shown[RT_IO_SHOWN_BYTES + 1], named_shown[RT_IO_SHOWN_BYTES + 1];
    if (snprintf(path, sizeof path, "%s/%s", folder, name) >= (int)sizeof path)
        return 0;
    const char *journal = rt_io_shown(path, shown);
    const char *left = "it was left as it is; see docs/runtime.md (Files) to finish or remove it";
    struct timespec written;
    int pairs = journal_read(path, names, RT_IO_MAX_FILES, &written), unread = errno;
    struct stat st;
    if (pairs < 0 && lstat(path, &st) != 0 && errno == ENOENT)
        return 0;                /* removed since the folder was listed (by hand): nothing to complete */
    if (pairs == JOURNAL_UNREAD)
        return rt_say(err, RT_EXIT_WRITE_FAILED, "journal %s: cannot be read: %s; %s", journal, strerror(unread), left);
    if (pairs < 0)
        return rt_say(err, RT_EXIT_WRITE_FAILED, "journal %s: a damaged publication journal (an earlier invocation was "
                   "interrupted); %s", journal, left);
    for (int i = 0; i < pairs; i++)
        if (!temporary_beside(names[2 * i], names[2 * i + 1]))
            return rt_say(err, RT_EXIT_WRITE_FAILED, "journal %s: a damaged publication journal (its temporary %s is "
                       "not a .NAME.tmp-XXXXXX file beside its destination); %s", journal,
                       rt_io_shown(names[2 * i], named_shown), left);
    if (!journal_named_after(folder, name, names[2 * pairs - 1]))
        return rt_say(err, RT_EXIT_WRITE_FAILED, "journal %s: a damaged publication journal (it is not .NAME.bob-journal "
                   "beside its last destination %s); %s", journal, rt_io_shown(names[2 * pairs - 1], named_shown), left);
    int named = 0, present[RT_IO_MAX_FILES];
    for (int i = 0; i < pairs; i++) {
        for (int k = 0; k < count; k++)
            named |= !strcmp(names[2 * i + 1], reals[k]);
        present[i] = lstat(names[2 * i], &st) == 0;
    }
    if (!named)
        return 0;
    for (int i = 0; i + 1 < pairs; i++)
        if (present[i] && !present[i + 1])
            return rt_say(err, RT_EXIT_WRITE_FAILED, "journal %s: its temporaries are missing (%s); %s", journal,
                       rt_io_shown(names[2 * i + 2], named_shown), left);
    /* what the journal's own publication put at a destination (its old file, or a temporary renamed) was
     * written before the journal: a destination changed later was replaced by a later publication, or by
     * hand, and rolling the journal forward would put older files over it */
    for (int i = 0; i < pairs; i++)
        if (lstat(names[2 * i + 1], &st) == 0 && (!S_ISREG(st.st_mode) || later(st.st_mtim, written)))
            return rt_say(err, RT_EXIT_WRITE_FAILED, "journal %s: stale: %s was replaced after the journal was written; "
                       "nothing was renamed and the journal was kept: to keep the newer files, remove it and the "
                       "temporaries it lists (docs/runtime.md, Files)", journal,
                       rt_io_shown(names[2 * i + 1], named_shown));
    for (int i = 0; i < pairs; i++)
        if (present[i] && rename(names[2 * i], names[2 * i + 1]) != 0) {
            int e = errno;
            const char *destination = rt_io_shown(names[2 * i + 1], named_shown);
            return rt_say(err, RT_EXIT_WRITE_FAILED, "journal %s: completing it failed: %s: %s; it was left as it is: "
                          "once %s can be replaced, the next invocation completes it; to keep the files as they are "
                          "instead, remove the journal and the temporaries it lists", journal,
                          destination, strerror(e), destination);
        }
    /* the folders renamed into are synced as a publication's are: a failure (EIO) is the same
     * warning after the notice, the status unchanged (probe s47 faultinject finding 5: unchecked) */
    char unsynced[RT_IO_PATH_BYTES] = "";
    int unsynced_errno = 0;
    for (int i = 0; i < pairs; i++) {
        char destination_folder[RT_IO_PATH_BYTES];
        folder_of(names[2 * i + 1], destination_folder, sizeof destination_folder);
        int e = fsync_folder(destination_folder);
        if (e && !unsynced[0]) {
            snprintf(unsynced, sizeof unsynced, "%s", destination_folder);
            unsynced_errno = e;
        }
    }
    int removed = unlink(path) == 0 || errno == ENOENT, e = errno;
    sync_folder(folder);
    /* every path as any message shows it (rt_io_shown): one line, each path shortened */
    fprintf(stderr, "%s: completed an interrupted publication from %s:", rt_report_name(), journal);
    for (int i = 0; i < pairs; i++)
        fprintf(stderr, " %s", rt_io_shown(names[2 * i + 1], named_shown));
    fputc('\n', stderr);
    if (unsynced[0])          /* after the notice: the publication it completed, then what failed */
        fprintf(stderr, RT_IO_UNSYNCED_WARNING "\n", rt_report_name(), rt_io_shown(unsynced, named_shown),
                strerror(unsynced_errno));
    if (!removed)
        fprintf(stderr, RT_IO_JOURNAL_LEFT_WARNING "\n", rt_report_name(), journal, strerror(e));
    fflush(stderr);
    return 0;
}

int rt_io_recover(const char *const *paths, int count, char *err)
{
    static char reals[RT_IO_MAX_FILES][RT_IO_PATH_BYTES];
    char folders[RT_IO_MAX_FILES][RT_IO_PATH_BYTES];
    int n = 0;
    for (int i = 0; i < count && n < RT_IO_MAX_FILES; i++) {
        char real_folder[PATH_MAX];
        if (!paths[i] || !*paths[i] || strlen(paths[i]) >= RT_IO_PATH_BYTES)
            continue;
        folder_of(paths[i], folders[n], sizeof folders[n]);
        const char *slash = strrchr(paths[i], '/');
        if (!realpath(folders[n], real_folder))
            continue;            /* the output checks say why the folder cannot be used */
        if (snprintf(reals[n], sizeof reals[n], "%s%s%s", real_folder, strcmp(real_folder, "/") ? "/" : "",
                     slash ? slash + 1 : paths[i]) < (int)sizeof reals[n])
            n++;
    }
    /* the folders stay locked while they are searched: a live publication's journal (whose
     * publication holds the same lock) is never read or completed */
    const char *locked[RT_IO_MAX_FILES] = { 0 };
    for (int i = 0; i < n; i++)
        locked[i] = folders[i];
    folder_locks locks;
    lock_folders(locked, n, &locks, NULL);
    int rc = 0;
    for (int i = 0; i < n && !rc; i++) {
        int seen = 0;
        for (int k = 0; k < i; k++)
            seen |= !strcmp(folders[k], folders[i]);
        if (seen)
            continue;
        DIR *dir = opendir(folders[i]);
        if (!dir) {
            /* a folder that cannot be listed (mode 0300: search and write, no read) is searched by
             * name: the journal a publication of these outputs leaves is `.NAME.bob-journal` beside
             * its last destination NAME, one of them (the checkpoint, for a host).  A journal named
             * after another file cannot be found there (docs/runtime.md, "Files"). */
            for (int k = i; k < n && !rc; k++) {
                const char *slash = strrchr(reals[k], '/');
                char name[RT_IO_PATH_BYTES], path[2 * RT_IO_PATH_BYTES];
                struct stat st;
                int again = 0;
                for (int j = i; j < k; j++)
                    again |= !strcmp(reals[j], reals[k]);
                if (again || strcmp(folders[k], folders[i]) ||
                    snprintf(name, sizeof name, ".%s" JOURNAL_SUFFIX, slash + 1) >= (int)sizeof name ||
                    snprintf(path, sizeof path, "%s/%s", folders[i], name) >= (int)sizeof path ||
                    lstat(path, &st) != 0)     /* none there (or no search permission: the output checks say so) */
                    continue;
                rc = journal_complete(folders[i], name, reals, n, err);
            }
            continue;
        }
        struct dirent *entry;
        while (!rc && (entry = readdir(dir))) {
            size_t len = strlen(entry->d_name), suffix = strlen(JOURNAL_SUFFIX);
            /* a journal is named `.NAME.bob-journal`, NAME not empty */
            if (entry->d_name[0] != '.' || len <= suffix + 1 || strcmp(entry->d_name + len - suffix, JOURNAL_SUFFIX))
                continue;
            rc = journal_complete(folders[i], entry->d_name, reals, n, err);
        }
        closedir(dir);
    }
    unlock_folders(&locks);
    return rc;
}

static int ends_with(const char *said, size_t length, const char *suffix)
{
    size_t n = strlen(suffix);
    return length >= n && memcmp(said + length - n, suffix, n) == 0;
}

size_t rt_io_interval_note(const char *said, size_t length, uint64_t written, uint64_t publications, uint64_t step,
                           const char *path, char *note, size_t bytes)
{
    static const char *const claims[] = { " (nothing was published)", "; nothing was published" };
    note[0] = 0;
    size_t k = strlen(RT_IO_KEPT_JOURNAL);
    for (size_t at = 0; at + k <= length; at++)
        if (!memcmp(said + at, RT_IO_KEPT_JOURNAL, k))
            return length;
    for (size_t i = 0; i < sizeof claims / sizeof *claims; i++)
        if (ends_with(said, length, claims[i])) {
            length -= strlen(claims[i]);
            break;
        }
    char shown[RT_IO_SHOWN_BYTES + 1];
    snprintf(note, bytes, "; publication %llu of %llu (step %llu) stays at %s; nothing else was published",
             (unsigned long long)written, (unsigned long long)publications, (unsigned long long)step,
             rt_io_shown(path, shown));
    return length;
}

static int publish_locked(rt_io_files *files, mode_t mask, char *err);

int rt_io_publish(rt_io_files *files, char *err)
{
    mode_t mask = umask(0);
    umask(mask);
    int rc;
    char shown[RT_IO_SHOWN_BYTES + 1];
    for (int i = 0; i < files->output_count; i++) {
        rt_io_output *o = &files->outputs[i];
        if (!o->staged) {
            remove_temporaries(files);
            return rt_say(err, RT_EXIT_INTERNAL, "output %s (%s) was never staged (nothing was published)",
                       rt_io_shown(o->path, shown), o->option);
        }
        if (o->temporary[0])
            continue;                     /* prepared (rt_io_prepare): only its rename is left */
        if ((rc = write_temporary(o, mask, 0, err))) {
            remove_temporaries(files);
            return rc;
        }
    }
    /* from here a SIGINT while waiting for a folder lock removes the temporaries (wait_for_lock) */
    forget_prepared();
    /* from here to the journal's removal no other publication or recovery works in these folders
     * (docs/runtime.md, "Files": concurrent invocations) */
    const char *folders[RT_IO_MAX_FILES] = { 0 };
    for (int i = 0; i < files->output_count; i++)
        folders[i] = files->outputs[i].folder;
    test_pause(RT_IO_LOCK_PAUSE_VARIABLE);
    folder_locks locks;
    lock_folders(folders, files->output_count, &locks, files);
    rc = publish_locked(files, mask, err);
    unlock_folders(&locks);
    return rc;
}

/* rt_io_publish after the temporaries were written, its folders locked. */
static int publish_locked(rt_io_files *files, mode_t mask, char *err)
{
    int rc;
    char shown[RT_IO_SHOWN_BYTES + 1];
    /* A destination's modification time is its temporary's.  The temporaries were written before
     * the lock was taken, perhaps before the journal of a publication that held the lock meanwhile
     * (and was killed): dated now, under the lock, a file this publication puts in place is newer
     * than any journal written before it, so a recovery finds that journal stale, never rolls it
     * forward over these files (docs/runtime.md, "Files").  A file made by this process, so only
     * a read-only filesystem refuses, and then the renames fail too. */
    for (int i = 0; i < files->output_count; i++)
        utimensat(files->outputs[i].temporary_folder, temporary_name(&files->outputs[i]), NULL, 0);
    for (int i = 0; i < files->output_count; i++) {   /* still a regular file or nothing? */
        struct stat st;
        const rt_io_output *o = &files->outputs[i];
        if (lstat(o->path, &st) == 0 && !S_ISREG(st.st_mode)) {
            remove_temporaries(files);
            return rt_say(err, RT_EXIT_WRITE_FAILED, "output %s (%s): became %s during the run (nothing was published)",
                       rt_io_shown(o->path, shown), o->option, kind_of(st.st_mode));
        }
    }
    char journal[RT_IO_PATH_BYTES + 64] = "";
    if (files->output_count > 1 && (rc = journal_write(files, journal, sizeof journal, mask, err))) {
        remove_temporaries(files);
        return rc;
    }
    for (int i = 0; i < files->output_count; i++) {
        rt_io_output *o = &files->outputs[i];
        if (i)
            test_pause(RT_IO_PAUSE_VARIABLE);
        if (rename(o->temporary, o->path) != 0) {
            int e = errno;
            if (journal[0] && i == 0) {
                /* nothing renamed yet: the journal goes with the temporaries, nothing was published (a
                 * journal whose first rename fails again would block every later run) */
                unlink(journal);
                sync_folder(files->outputs[files->output_count - 1].folder);
                journal[0] = 0;
            }
            if (!journal[0]) {
                remove_temporaries(files);   /* else the journal owns them: the next invocation completes it */
                return rt_say(err, RT_EXIT_WRITE_FAILED, "output %s (%s): rename failed: %s (nothing was published)",
                              rt_io_shown(o->path, shown), o->option, strerror(e));
            }
            char journal_shown[RT_IO_SHOWN_BYTES + 1];
            return rt_say(err, RT_EXIT_WRITE_FAILED, "output %s (%s): rename failed: %s (the journal %s " RT_IO_KEPT_JOURNAL " %s "
                          "can be replaced, the next invocation naming these outputs completes the publication; to keep "
                          "the files as they are instead, remove the journal and the temporaries it lists)",
                          rt_io_shown(o->path, shown), o->option, strerror(e), rt_io_shown(journal, journal_shown),
                          rt_io_shown(o->path, shown));
        }
        drop_temporary(o, 0, 1);      /* renamed: only its folder is closed */
    }
    /* Every output is renamed into place: the publication is done, whatever the folders' fsync
     * says.  One that fails (EIO) is said as a warning, the journal removed all the same and the
     * status left as it is: exit 8 says an output was not written, and these were (probe s36
     * faultinject finding 2; reference/safe_io.py publish says the same). */
    const char *unsynced = NULL;
    int unsynced_errno = 0;
    for (int i = 0; i < files->output_count; i++) {
        int seen = 0;
        for (int k = 0; k < i; k++)
            seen |= !strcmp(files->outputs[k].folder, files->outputs[i].folder);
        if (seen)
            continue;
        int e = fsync_folder(files->outputs[i].folder);
        if (e && !unsynced) {
            unsynced = files->outputs[i].folder;
            unsynced_errno = e;
        }
    }
    if (unsynced) {
        fprintf(stderr, RT_IO_UNSYNCED_WARNING "\n", rt_report_name(), rt_io_shown(unsynced, shown),
                strerror(unsynced_errno));
        fflush(stderr);
    }
    if (journal[0])
        remove_finished_journal(journal, files->outputs[files->output_count - 1].folder);
    return 0;
}
