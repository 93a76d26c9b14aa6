"""The processes bobc's worker threads run (gcc's compiles of the C runtime, nvdisasm's readings
of an image set), so that a command ended by a signal stops them all and never waits on one.

Python delivers a signal to the main thread only: a worker thread inside `communicate()` goes on
waiting for its process, and a ThreadPoolExecutor's shutdown waits for the worker.  So each
process a worker starts is registered (Running.run) before any stop can look, and a stop
(in_threads, on an interruption) keeps every further one from starting, sends SIGTERM to each
running one and its own children (a gcc driver's cc1 and as), and after STOP_GRACE_S -- or at
once on a further signal -- SIGKILL: a process that ignores SIGTERM, or never ends, cannot hold
the command (README, "Exit codes").  Nothing here is imported at the top but `os`: cli._ending
reads `descendants` from a signal handler.

The main thread waits for worker threads with the ending signals only noted (Noted), never with
a handler that raises: a signal handler's exception lands at whatever bytecode runs, and inside
threading's own bookkeeping it corrupts it -- Thread.join marks a running thread ended for good
(CPython 3.11's bpo-45274 handling releases the thread's own lock), Condition.wait's lock
restore left undone makes its `with` release a lock not held ("RuntimeError: release unlocked
lock", a traceback), a Future's condition left held keeps its worker from ever setting it (a
hang).  A first signal lands in a lock's acquire, cleanly; a second one a few milliseconds later
lands in the cleanup (probe s44 signals2 finding 2)."""
from __future__ import annotations

import os

# how long an interrupted command waits for its workers' processes to end on SIGTERM before it
# kills them (a gcc or nvdisasm ends on SIGTERM within milliseconds)
STOP_GRACE_S = 5.0
# how often a wait with the ending signals noted (Noted.wait) looks for one: a signal ends the
# wait within this
POLL_S = 0.02


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


class Noted:
    """`with Noted() as signals:` the ending signals (bobc.ENDING_SIGNALS) that arrive are only
    noted; the handlers they replaced run at the looks of signals.wait -- outside any lock's
    bookkeeping, where their exception (cli's Ended) is caught into signals.raised, in order --
    and on leaving they are put back and the first exception raised is raised (not when
    `raising` is False: a stop that runs while an interruption is raised already, which is the
    command's).  A handler that does not raise changes nothing.  Only the main thread handles
    signals: elsewhere nothing is taken."""

    def __init__(self, raising: bool = True):
        self.raising = raising
        self.noted: list = []
        self.raised: list = []
        self._taken: dict = {}

    def __enter__(self) -> "Noted":
        from . import take_signals

        self._taken = take_signals(lambda number, frame: self.noted.append(number))
        return self

    def __exit__(self, kind, error, trace) -> None:
        import signal

        self.handle()
        left = list(self._taken.items())
        while left:         # a signal whose handler is back raises at once: caught, and the rest put back
            try:
                while left:
                    signal.signal(*left[0])
                    left.pop(0)
                self.handle()       # those noted as the handlers went back
            except BaseException as arrived:
                self.raised.append(arrived)
        if self.raising and self.raised:
            raise self.raised[0]

    def handle(self) -> None:
        """Run the handler each signal noted replaced (a further one arriving meanwhile is noted)."""
        import signal
        import sys

        while self.noted:
            number = self.noted.pop(0)
            handler = self._taken.get(number)
            try:
                if callable(handler):
                    handler(number, sys._getframe())
                elif handler == signal.SIG_DFL:     # its default action: the process ends
                    signal.signal(number, handler)
                    signal.raise_signal(number)
            except BaseException as error:
                self.raised.append(error)

    def wait(self, ready, timeout: float | None = None, since: int | None = 0, sleep=None) -> bool:
        """Wait until `ready` (a threading.Event, or a function saying whether) is: True; False
        once more than `since` signals' handlers have raised (None: a signal does not end the
        wait), or after `timeout` seconds.  `sleep(seconds)` (an Event's own wait, else
        time.sleep) spans the looks, POLL_S at most each."""
        import time

        if hasattr(ready, "is_set"):
            sleep, ready = sleep or ready.wait, ready.is_set
        sleep = sleep or time.sleep
        deadline = None if timeout is None else time.monotonic() + timeout
        while not ready():
            self.handle()
            if since is not None and len(self.raised) > since:
                return False
            left = POLL_S if deadline is None else min(POLL_S, deadline - time.monotonic())
            if left <= 0:
                return False
            sleep(left)
        return True


def wait_for_thread(done, stop, raising: bool = True) -> None:
    """Wait, in any thread, until `done` (a threading.Event a worker thread sets as its last act) is
    set -- never Thread.join (see above).  An ending signal meanwhile calls stop(), which makes the
    worker end soon, and again every POLL_S until it has (a stop the worker may miss is made
    again); the wait goes on through any further signal, and the first one is raised once the
    worker has ended (unless `raising` is False: Noted)."""
    with Noted(raising) as signals:
        if signals.wait(done):
            return
        while not done.wait(POLL_S):
            stop()
        signals.handle()


def in_threads(function, items: list, workers: int, name: str, running: Running) -> list:
    """[function(item) for item in items], up to `workers` at once in threads named `name`-N;
    `function` starts its processes through `running`.  A job's failure raises the first failing
    item's error in `items`' order (whatever order they finished in): the jobs not started are
    not, those running are waited for.  An ending signal (SIGINT, SIGTERM, SIGHUP) stops those
    running (_stop) and is raised once every job is done, also when it arrives while a failure's
    running jobs are waited for.  The signals are only noted meanwhile (Noted)."""
    from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

    futures: list = []

    def failed(future) -> bool:
        return future.done() and not future.cancelled() and future.exception() is not None

    def all_done() -> bool:
        return all(future.done() for future in futures)

    def some_done(seconds: float) -> None:
        wait([future for future in futures if not future.done()], timeout=seconds, return_when=FIRST_COMPLETED)

    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix=name)
    with Noted() as signals:
        try:
            for item in items:
                futures.append(pool.submit(function, item))
        except BaseException:       # no thread could start: those started end as after a failure
            for future in futures:
                future.cancel()
            if not signals.wait(all_done, sleep=some_done):
                _stop(futures, running, signals, all_done, some_done)
            pool.shutdown(wait=True)
            raise                   # or Noted's exit raises the signal's Ended
        signals.wait(lambda: all_done() or any(map(failed, futures)), sleep=some_done)
        if not signals.raised and not all_done():
            for future in futures:          # a failure: the jobs not started are not
                future.cancel()
            signals.wait(all_done, sleep=some_done)
        if signals.raised:
            _stop(futures, running, signals, all_done, some_done)
        pool.shutdown(wait=True)            # every job is done: its worker is leaving
        if signals.raised:
            return []                       # Noted's exit raises the signal's Ended
    for future in futures:
        if failed(future):
            future.result()                 # its error, the first in items' order
    return [future.result() for future in futures]


def _stop(futures: list, running: Running, signals: Noted, all_done, some_done) -> None:
    """Stop a pool's jobs on a signal: none more starts, the running ones' processes get SIGTERM
    (and their children), STOP_GRACE_S to end -- cut short by a further signal -- then SIGKILL;
    returns once every job is done."""
    import signal

    for future in futures:
        future.cancel()
    running.stop(signal.SIGTERM)
    if signals.wait(all_done, STOP_GRACE_S, since=1, sleep=some_done):
        return
    running.stop(signal.SIGKILL)
    signals.wait(all_done, since=None, sleep=some_done)
