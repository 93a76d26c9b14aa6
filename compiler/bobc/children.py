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
        with self._lock:
            if self._stopped:
                raise Stopped()
            process = start(command, **options)
            self._running.add(process)
        try:
            return _finish(command, process)
        finally:
            with self._lock:
                self._running.discard(process)

    def stop(self, number: int) -> None:
        """No more processes start; `number` to each running one and its children."""
        with self._lock:
            self._stopped = True
            for process in self._running:
                if process.returncode is None:
                    signal_tree(process.pid, number)


def run(command: list[str], **options):
    """subprocess.run(command, **options, capture_output=True), for bobc's main thread: an
    ending signal that arrives while the process starts is acted on once it has started, and
    an interruption kills it with its children (start, _finish)."""
    return _finish(command, start(command, **options))


def start(command: list[str], **options):
    """subprocess.Popen(command, stdout=PIPE, stderr=PIPE, **options).  In the main thread, an
    ending signal (bobc.ENDING_SIGNALS) that arrives while the process starts waits until Popen
    has returned: handled inside it, its KeyboardInterrupt left a started process no one held,
    which ran on after bobc ended (probe s35 interrupt finding 4).  The signal is then acted on,
    and the process killed with its children, before it is raised."""
    import signal
    import subprocess

    from . import take_signals

    noted: list = []
    taken = take_signals(lambda number, frame: noted.append(number))   # {} outside the main thread
    process = None
    try:
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **options)
    finally:
        for number, handler in taken.items():
            signal.signal(number, handler)
        try:
            for number in dict.fromkeys(noted):
                signal.raise_signal(number)
        except BaseException:
            if process is not None:
                _kill(process)
            raise
    return process


def _kill(process) -> None:
    """SIGKILL to a process and its children; waited for."""
    import signal

    signal_tree(process.pid, signal.SIGKILL)
    process.wait()


def _finish(command: list[str], process):
    """subprocess.run's end: the process's output and status; interrupted (only the main thread
    can be), the process killed with its children, as subprocess.run kills its process."""
    import subprocess

    try:
        stdout, stderr = process.communicate()
    except BaseException:
        _kill(process)
        raise
    return subprocess.CompletedProcess(command, process.wait(), stdout, stderr)


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
