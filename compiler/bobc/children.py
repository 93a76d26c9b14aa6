"""The processes bobc's worker threads run (gcc's compiles of the C runtime, nvdisasm's readings
of an image set), so that a command ended by a signal stops them all and never waits on one.

Python delivers a signal to the main thread only: a worker thread inside `communicate()` goes on
waiting for its process, and a ThreadPoolExecutor's shutdown waits for the worker.  So each
process a worker starts is registered (Running.run) before any stop can look, and a stop
(in_threads, on an interruption) keeps every further one from starting, sends SIGTERM to each
running one and its own children (a gcc driver's cc1 and as), and after STOP_GRACE_S -- or at
once on a further signal -- SIGKILL: a process that ignores SIGTERM, or never ends, cannot hold
the command (README, "Exit codes").  Nothing here is imported at the top but `os`: cli._ending
reads `descendants` from a signal handler."""
from __future__ import annotations

import os

# how long an interrupted command waits for its workers' processes to end on SIGTERM before it
# kills them (a gcc or nvdisasm ends on SIGTERM within milliseconds)
STOP_GRACE_S = 5.0


def descendants(root: int) -> list[int]:
    """The process ids descended from `root` (found in /proc; none without it), parents first."""
    try:
        names = [name for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return []
    children: dict = {}
    for name in names:
        try:
            with open(f"/proc/{name}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(name))
        except (OSError, IndexError, ValueError):
            continue
    found: list[int] = []
    waiting = list(children.get(root, ()))
    while waiting:
        pid = waiting.pop(0)
        if pid != root and pid not in found:
            found.append(pid)
            waiting.extend(children.get(pid, ()))
    return found


def signal_tree(pid: int, number: int) -> None:
    """Signal `number` to `pid` and every process descended from it (those found first: a
    process that ends on the signal leaves its children to init, where they are no longer found)."""
    for each in [*descendants(pid), pid]:
        try:
            os.kill(each, number)
        except OSError:
            pass


class Stopped(Exception):
    """A worker's job after its pool was stopped: never started (its error is not the command's)."""


class Running:
    """The processes a pool's workers run, registered while they run."""

    def __init__(self):
        import threading

        self._lock = threading.Lock()
        self._running: set = set()
        self._stopped = False

    def run(self, command: list[str], **options):
        """subprocess.run(command, **options, capture_output=True), registered while it runs;
        Stopped once the pool was stopped (no process is started then)."""
        import subprocess

        with self._lock:
            if self._stopped:
                raise Stopped()
            process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **options)
            self._running.add(process)
        try:
            stdout, stderr = process.communicate()
        except BaseException:       # interrupted, in the main thread (a serial compile): killed, as
            import signal           # subprocess.run kills its process, with the process's children

            signal_tree(process.pid, signal.SIGKILL)
            process.wait()
            raise
        finally:
            with self._lock:
                self._running.discard(process)
        return subprocess.CompletedProcess(command, process.wait(), stdout, stderr)

    def stop(self, number: int) -> None:
        """No more processes start; `number` to each running one and its children."""
        with self._lock:
            self._stopped = True
            for process in self._running:
                if process.returncode is None:
                    signal_tree(process.pid, number)


def in_threads(function, items: list, workers: int, name: str, running: Running) -> list:
    """[function(item) for item in items], up to `workers` at once in threads named `name`-N;
    `function` starts its processes through `running`.  A job's failure raises the first failing
    item's error in `items`' order (whatever order they finished in): the jobs not started are
    not, those running are waited for.  Interrupted (KeyboardInterrupt: Ctrl-C, cli's Ended for
    SIGTERM and SIGHUP), those running are stopped (_stop); an interruption while a failure's
    running jobs are waited for stops them too, and is what is raised."""
    from concurrent.futures import ThreadPoolExecutor

    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix=name)
    futures: list = []
    try:
        for item in items:
            futures.append(pool.submit(function, item))
        results = [future.result() for future in futures]
    except BaseException as stopping:
        interruption = None if isinstance(stopping, Exception) else stopping
        while True:         # a signal at any point of this: the running processes stopped
            try:
                for future in futures:
                    future.cancel()
                if interruption is None:
                    pool.shutdown(wait=True)
                else:
                    _stop(pool, futures, running)
                break
            except KeyboardInterrupt as arrived:
                interruption = interruption or arrived
        if interruption is not None and interruption is not stopping:
            raise interruption from None
        raise
    pool.shutdown(wait=True)
    return results


def _stop(pool, futures: list, running: Running) -> None:
    """Stop a pool's running processes: SIGTERM (and their children), STOP_GRACE_S for them to
    end, then SIGKILL; a further signal meanwhile cuts the grace short and is not raised (the
    first interruption is the command's).  Returns once every worker is done."""
    import signal
    from concurrent.futures import wait

    try:
        running.stop(signal.SIGTERM)
        wait(futures, timeout=STOP_GRACE_S)
    except KeyboardInterrupt:
        pass
    while True:
        try:
            running.stop(signal.SIGKILL)
            pool.shutdown(wait=True)
            return
        except KeyboardInterrupt:
            continue
