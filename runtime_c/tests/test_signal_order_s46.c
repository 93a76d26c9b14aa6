/* A second SIGINT, SIGTERM or SIGHUP while the first one's handler removes the prepared temporaries
 * (host_io.c interrupted_while_prepared) does not change how the process ends: by the first signal,
 * as docs/runtime.md says ("SIGINT, SIGTERM or SIGHUP ... removes them and ends the process by that
 * signal"), every temporary removed (probe s46 leftovers8 finding 2: SIGTERM, then SIGINT during its
 * removal, ended the host by SIGINT, 130 for 143).
 *
 * Built with -Wl,--wrap=unlinkat (runtime_c/Makefile): the removal's first unlinkat raises the
 * second signal, so it arrives while the first one's handler runs, every time. */
#include "host_runtime.h"
#include "host_io.h"

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int __real_unlinkat(int folder, const char *name, int flags);

static int second_signal;

int __wrap_unlinkat(int folder, const char *name, int flags)
{
    if (second_signal) {
        int sig = second_signal;
        second_signal = 0;
        raise(sig);
    }
    return __real_unlinkat(folder, name, flags);
}

static int temporaries_in(const char *folder)
{
    int n = 0;
    DIR *d = opendir(folder);
    if (!d)
        return -1;
    for (struct dirent *e; (e = readdir(d));)
        n += strstr(e->d_name, ".tmp-") != NULL;
    closedir(d);
    return n;
}

static int failures, checks;

static void ended_by_the_first(const char *base, int first, int second)
{
    char folder[4096], path[4200];
    snprintf(folder, sizeof folder, "%s/bobcrt-order-XXXXXX", base);
    if (!mkdtemp(folder)) {
        printf("FAIL: mkdtemp under %s\n", base);
        failures++;
        return;
    }
    snprintf(path, sizeof path, "%s/out", folder);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        rt_io_files *files = calloc(1, sizeof *files);
        char err[RT_ERR_BYTES];
        if (!files || rt_io_add_output(files, path, "argument 0", NULL, err) ||
            rt_io_stage(files, "argument 0", "NEW", 3, err) || rt_io_prepare(files, err) || temporaries_in(folder) != 1)
            _exit(3);
        second_signal = second;
        raise(first);
        _exit(4);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    checks++;
    int left = temporaries_in(folder);
    if (!WIFSIGNALED(status) || WTERMSIG(status) != first || left != 0) {
        printf("FAIL: %s, then %s during its cleanup: ended %s %d (expected by %s), %d temporaries left\n",
               strsignal(first), strsignal(second), WIFSIGNALED(status) ? "by signal" : "with exit code",
               WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status), strsignal(first), left);
        failures++;
    }
    rmdir(folder);
}

int main(void)
{
    /* A shell starts a background job with SIGINT ignored, and the host keeps ignoring a signal it
     * was started ignoring (as it should); this test is about the handlers, so it starts from the
     * default action for each signal it sends (tests/test_signal_tests_under_an_ignoring_parent.py). */
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
    const char *base = getenv("TMPDIR");
    if (!base || !*base || strlen(base) > 2048)
        base = "/tmp";
    static const int signals[] = { SIGINT, SIGTERM, SIGHUP };
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++)
            ended_by_the_first(base, signals[a], signals[b]);
    printf("signal order: %d checks, %d failures\n", checks, failures);
    return failures != 0;
}
