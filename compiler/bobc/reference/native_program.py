"""The reference interpreter of native physical programs (Runtime.NativePhysicalProgram).

The same meaning as the C host (runtime_c/native_host.c), command by command, with the
same exit statuses and messages, so a program's files, status and stderr can be compared
between the two (tests/native/).  Its device session is the C host's NATIVE_DEVICE=memory
session: OpenDevice accepts any UUID, Map gives zeroed memory at the plan's host
addresses, LoadImage/copies/WaitMapped/WriteMappedFile work on it; a Submit is carried out
by `gpu(machine, entry)` when one is given (a NumPy stand-in for the kernels, or the
simulator), which must also count the submission on the semaphore, else refused with
status 3 by name, as the C host refuses it without a GPU (and, on a run of the command line's
own, saying what to give: --kernels FILE defining SUBMIT).  A WaitMapped whose word is
short fails at once: nothing but the program and `gpu` writes this memory.
"""
from __future__ import annotations

import errno
import os
import select
import socket
import struct
import sys
import time

import numpy as np

from ..errors import SHOWN_CONTROLS
from ..native.program import Program
from ..resources import doc
from ..native.words import count as _count
from . import settings
from .errors import OutputWriteFailure

EXIT_INTERNAL, EXIT_FILE, EXIT_DEVICE, EXIT_WAIT, EXIT_PEER = 1, 2, 3, 4, 5
REQUEST_OPEN, REQUEST_CHECKPOINT_PUBLISH = 26, 34     # the request commands (native_program.h NP_REQUEST_*)
EXIT_NO_GPU, EXIT_GPU_FAULT = 6, 7        # the plan host's (docs/runtime.md), for a request host's device
EXIT_WRITE, EXIT_DAMAGED, EXIT_FAULT = 8, 9, 10
PEER_TIMEOUT_VARIABLE = settings.PEER_TIMEOUT.variable
MAX_PEERS = 16
MAX_MAPPINGS = 48
MASK = (1 << 64) - 1
# what a command line run (`bobc run PLAN native ... --reference`) without a SUBMIT is told at
# its first Submit, in place of the C host's "this session has no GPU (NATIVE_DEVICE=memory)"
NO_SUBMIT = ("the reference interpreter has no GPU and no SUBMIT to carry a submission out: give --kernels FILE "
             "defining SUBMIT(machine, entry), a NumPy stand-in for the kernels "
             f"({doc('native-host.md')}, \"The reference interpreter\", names the bundled examples')")


def message_text(message: bytes) -> str:
    """A host's message bytes as text that carries every byte back out: a byte that is not UTF-8
    (a path's 0xff, a Fail's own bytes, a character cut at the 511-byte bound) becomes its
    surrogate, which errors.stderr_line writes as that byte -- as the C hosts print it, never
    U+FFFD (probe s40 tripleexec2; the one decoding of Stop's, CommandsStopped's and the plan
    hosts' Commands refusals)."""
    return message.decode("utf-8", "surrogateescape")


class Stop(Exception):
    """The program stopped: `status` and the message after "native: "."""

    def __init__(self, status: int, message: bytes):
        super().__init__(message_text(message))
        self.status = status
        self.message = message


class _Halt(Exception):
    pass




def shown_line(data: bytes) -> bytes:
    """A plan's bytes on a message line -- a Fail's message, a Telemetry label, the program's
    identity in --version -- each control character (a newline, a tab, NUL, DEL) as '?', so the
    line stays one line (runtime_c/native_machine.c np_put_shown, the twin)."""
    return data.translate(SHOWN_CONTROLS)


def _f64(bits: int) -> np.float64:
    return np.array([bits & MASK], dtype=np.uint64).view(np.float64)[0]


def _bits(value) -> int:
    return int(np.array([value], dtype=np.float64).view(np.uint64)[0])


QUIET_NAN_BIT = 1 << 51     # binary64's quiet bit, the fraction's highest


def float_operation(operation: int, left: int, right: int) -> int:
    """binary64 left op right, round to nearest even (IEEE: x/0 is an infinity or NaN)."""
    a, b = _f64(left), _f64(right)
    # a NaN operand gives that NaN quieted, the left one when both are (runtime_c native_machine.c):
    # IEEE 754 leaves which payload open, and NumPy took the right one of an Add or Multiply
    if np.isnan(a) or np.isnan(b):
        return ((left if np.isnan(a) else right) & MASK) | QUIET_NAN_BIT
    with np.errstate(all="ignore"):
        result = (a + b, a - b, a * b, a / b)[operation]
    return _bits(result)


def convert(conversion: int, value: int) -> int:
    if conversion == 0:
        return _bits(float(value & MASK))              # CPython rounds int -> float to nearest even
    if conversion == 1:
        with np.errstate(all="ignore"):
            return _bits(np.sqrt(_f64(value)))
    if conversion == 2:
        with np.errstate(all="ignore"):
            return int(np.array([_f64(value)], dtype=np.float64).astype(np.float32).view(np.uint32)[0])
    # a binary32 NaN widened: NumPy warns ("invalid value encountered in cast") on stderr, which
    # the C host's conversion never prints (probe s34 nativeauthor finding 3)
    with np.errstate(all="ignore"):
        return _bits(np.array([value & 0xFFFFFFFF], dtype=np.uint32).view(np.float32)[0].astype(np.float64))


def read_exact_file(what: str, path: str) -> bytes:
    """A whole regular file, refused as runtime_c/host_io.c's rt_io_read refuses it
    (safe_io.read_input's rules; the message names the program's argument)."""
    from . import safe_io

    def refuse(name, part, detail):
        if part == "size" and "this file can be" in detail:
            detail = detail.replace("this file can be", f"{'an' if what[:1] in 'aeiou' else 'a'} {what} can be")
        return Stop(EXIT_FILE, f"{what} {name}: {detail}".encode("utf-8", "surrogateescape"))
    return safe_io.read_input(path, refuse, safe_io.INPUT_LIMIT_BYTES).data


def address_text(address: bytes) -> str:
    return f"{address[4]}.{address[5]}.{address[6]}.{address[7]}:{address[2] << 8 | address[3]}"


# What to do when a peer closed the connection mid-exchange (runtime_c/native_peer.c NP_PEER_CLOSED_HINT).
PEER_CLOSED_HINT = "the other peer stopped: see its messages for why, then start both again"
# The same for a connecting endpoint whose listener closed before sending a byte on it
# (runtime_c NP_PEER_CLOSED_UNHEARD_HINT): it may have taken another connection as its peer.
PEER_CLOSED_UNHEARD_HINT = ("the other peer stopped before it sent anything, or it took another connection as its "
                            "peer (a second copy of this peer, started against it: the first trains on); see its "
                            "messages for why, then start both again")


# the most a listening endpoint keeps of what it sent before its peer's first byte
# (runtime_c/native_peer.h NP_PEER_REPLAY_BYTES)
PEER_REPLAY_BYTES = 64 << 10


def _connected_to_itself(connection: socket.socket) -> bool:
    """Its own address is its remote one (runtime_c connected_to_itself); a connection reset
    meanwhile has no remote address: not itself (what it receives says it closed)."""
    try:
        return connection.getsockname() == connection.getpeername()
    except OSError:
        return False


class _Closed(Exception):
    """The connection closed or was reset (the Stop to raise, if it is not retried)."""

    def __init__(self, stop):
        super().__init__()
        self.stop = stop


class Peer:
    """One TCP endpoint; every failure is status 5 with the C host's message
    (runtime_c/native_peer.c).  A listening endpoint takes a connection that closes before
    its first byte (a port probe) as no peer: it listens again until the open's deadline and
    sends the next connection what it sent on that one.  Send and Receive fail after
    `timeout_ms` of silence (each byte that moves restarts the limit)."""

    def __init__(self, address: bytes, listen: bool, timeout_ms: int):
        self.address = address_text(address)
        self.remote = self.address          # the peer's, as messages name it
        self.host = f"{address[4]}.{address[5]}.{address[6]}.{address[7]}"
        self.port = address[2] << 8 | address[3]
        host, port = self.host, self.port
        self.timeout_ms = timeout_ms
        deadline = time.monotonic() + timeout_ms / 1000
        self.deadline = deadline
        self.socket = None
        self.sent = self.received = 0   # messages completed each way: a failure names the next one's number
        self.unconfirmed = False        # listening, no byte received yet
        self.replay = bytearray()       # what was sent before the first byte arrived
        self.stray = ""                 # the last connection that closed before its first byte
        self.listener = None            # while unconfirmed: the listening socket (runtime_c np_peer.listen_fd)
        self.connecting = not listen    # runtime_c np_peer.connecting
        if listen:
            self._listen_and_accept()
            self.unconfirmed = True
        else:
            answered = False            # an attempt was refused: the address answers, nothing listens
            while True:
                attempt = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                attempt.settimeout(max(0.001, deadline - time.monotonic()))
                try:
                    attempt.connect((host, port))
                    if _connected_to_itself(attempt):
                        # nothing listened, and the attempt was given the port it connects to as
                        # its own: a TCP simultaneous open with itself (runtime_c np_peer_open's
                        # connected_to_itself), not the peer: dropped with a reset, tried again
                        attempt.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                        raise ConnectionRefusedError(errno.ECONNREFUSED, "connected to itself")
                    self.socket = attempt
                    break
                except (ConnectionRefusedError, ConnectionResetError):
                    attempt.close()
                    answered = True
                except socket.timeout:
                    attempt.close()
                except OSError as error:
                    attempt.close()
                    if error.errno in (errno.EHOSTUNREACH, errno.ENETUNREACH):
                        self._fail(f"cannot connect to {self.address}: {os.strerror(error.errno)} (that address "
                                   f"cannot be reached from here); check the pair's address and the network")
                    if error.errno not in (errno.ETIMEDOUT, errno.EAGAIN):
                        self._fail(f"cannot connect to {self.address}: {os.strerror(error.errno)}")
                    answered = answered or error.errno == errno.EAGAIN
                if time.monotonic() >= deadline:
                    if not answered:
                        self._fail(f"could not connect to {self.address} within {timeout_ms} ms (no answer from "
                                   f"that address: a machine that is down or cannot be reached); check the pair's "
                                   f"address and the network (or raise {PEER_TIMEOUT_VARIABLE})")
                    if host == "0.0.0.0":   # INADDR_ANY: Linux connects it to this machine (runtime_c np_peer_open)
                        self._fail(f"could not connect to {self.address} within {timeout_ms} ms (nothing listens "
                                   f"there on this machine: 0.0.0.0 is a listening address, and connecting to it "
                                   f"reaches this machine only; for a peer on another machine, build this one with "
                                   f"that machine's address, else start the other peer here) (or raise "
                                   f"{PEER_TIMEOUT_VARIABLE})")
                    self._fail(f"could not connect to {self.address} within {timeout_ms} ms (nothing listens there: "
                               f"the other peer was not started, it stopped before listening, or it is paired with "
                               f"another peer already: see its messages); start it (or raise {PEER_TIMEOUT_VARIABLE})")
                time.sleep(0.02)
            self.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.socket.settimeout(None)

    def _listen_and_accept(self) -> None:
        """Listen (once: the socket stays open until the peer is confirmed, so that connections
        queued meanwhile wait there rather than being reset) and accept one connection by the
        open's deadline."""
        if self.listener is None:
            listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                listener.bind((self.host, self.port))
                listener.listen(1)
            except OSError as error:
                listener.close()
                if error.errno == errno.EADDRINUSE:
                    self._fail(f"port in use: cannot listen at {self.address} (another process holds it); stop it, "
                               f"or rebuild both peers with another port (the port is built into both hosts)")
                self._fail(f"cannot listen at {self.address}: {os.strerror(error.errno)}; give the pair an "
                           f"address of this machine")
            self.listener = listener
        ready, _, _ = select.select([self.listener], [], [], max(0.0, self.deadline - time.monotonic()))
        if not ready:
            self._stop_listening()
            if self.stray:
                self._fail(f"no peer connected to {self.address} within {self.timeout_ms} ms (a connection from "
                           f"{self.stray} closed before sending a byte, so it was not taken as the peer; the other "
                           f"peer was not started, or it stopped before connecting: see its messages); start it (or "
                           f"raise {PEER_TIMEOUT_VARIABLE})")
            self._fail(f"no peer connected to {self.address} within {self.timeout_ms} ms (the other peer was not "
                       f"started, or it stopped before connecting: see its messages); start it (or raise "
                       f"{PEER_TIMEOUT_VARIABLE})")
        try:
            self.socket, (host, port) = self.listener.accept()
        except OSError as error:
            self._stop_listening()
            self._fail(f"accepting a peer at {self.address} failed: {os.strerror(error.errno)}")
        self.remote = f"{host}:{port}"
        self.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.socket.settimeout(None)

    def _stop_listening(self) -> None:
        if self.listener is not None:
            self.listener.close()
            self.listener = None

    def _confirm(self) -> None:
        """The connection is the peer (its first byte came, or what was sent on it outgrew the
        replay): what was kept for another is not needed, nor the listening socket."""
        self.unconfirmed = False
        self.replay = bytearray()
        self._stop_listening()

    def _accept_again(self, timeout_ms: int) -> None:
        """The connection closed before its first byte: not a peer.  Another accepted (one queued
        meanwhile first) by the open's deadline and sent what was sent on the one that closed."""
        self.stray = self.remote
        while True:
            self.socket.close()
            self.socket = None
            self._listen_and_accept()
            try:
                self._send_bytes(bytes(self.replay), timeout_ms)
                return
            except _Closed:
                self.stray = self.remote

    @staticmethod
    def _fail(message: str):
        raise Stop(EXIT_PEER, message.encode("utf-8", "surrogateescape"))

    def _send_bytes(self, data: bytes, timeout_ms: int) -> None:
        deadline, sent = time.monotonic() + timeout_ms / 1000, 0
        while sent < len(data):
            _, ready, _ = select.select([], [self.socket], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                self._fail(f"peer {self.remote} took nothing for {timeout_ms} ms ({sent} of {len(data)} bytes sent)")
            try:
                count = self.socket.send(data[sent:], socket.MSG_NOSIGNAL | socket.MSG_DONTWAIT)
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:
                count = 0
            if count <= 0:
                try:
                    self._fail(f"peer {self.remote} closed the connection at message {self.sent + 1} to it ({sent} "
                               f"of {len(data)} bytes sent); {PEER_CLOSED_HINT}")
                except Stop as stop:
                    raise _Closed(stop) from None
            sent += count
            deadline = time.monotonic() + timeout_ms / 1000

    def send(self, data: bytes, timeout_ms: int) -> None:
        if self.unconfirmed:
            if len(self.replay) + len(data) <= PEER_REPLAY_BYTES:
                self.replay += data
            else:
                self._confirm()
        try:
            self._send_bytes(data, timeout_ms)
        except _Closed as closed:
            if not self.unconfirmed:
                raise closed.stop from None
            self._accept_again(timeout_ms)          # it sends this message too
        self.sent += 1

    def _another_waits(self) -> bool:
        """A connection waits behind the unconfirmed one (runtime_c another_waits)."""
        return self.listener is not None and bool(select.select([self.listener], [], [], 0)[0])

    def receive(self, count: int, timeout_ms: int) -> bytes:
        deadline, got = time.monotonic() + timeout_ms / 1000, bytearray()
        # an unconfirmed connection silent for half the limit while another waits behind it is
        # not the peer (runtime_c receive_all): the waiting one is tried
        halfway = time.monotonic() + timeout_ms / 2000
        while len(got) < count:
            silent_stray = self.unconfirmed and not got
            until = halfway if silent_stray and halfway < deadline else deadline
            ready, _, _ = select.select([self.socket], [], [], max(0.0, until - time.monotonic()))
            if not ready and silent_stray and self._another_waits():
                self._accept_again(timeout_ms)
                deadline = time.monotonic() + timeout_ms / 1000
                halfway = time.monotonic() + timeout_ms / 2000
                continue
            if not ready and silent_stray and time.monotonic() < deadline:
                halfway = deadline          # nobody waits yet: looked at again at the limit
                continue
            if not ready and got:
                self._fail(f"peer {self.remote} stopped partway through its message {self.received + 1} "
                           f"({len(got)} of its {count} bytes received, then nothing for {timeout_ms} ms): it hangs "
                           f"or stopped, see its messages")
            if not ready:
                self._fail(f"peer {self.remote} sent nothing for {timeout_ms} ms ({len(got)} of {count} bytes "
                           f"received): it hangs or stopped, see its messages")
            try:
                chunk = self.socket.recv(count - len(got), socket.MSG_DONTWAIT)
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:
                chunk = b""
            if not chunk and self.unconfirmed:         # closed before its first byte: not a peer
                self._accept_again(timeout_ms)
                deadline = time.monotonic() + timeout_ms / 1000
                continue
            if not chunk:
                unheard = self.connecting and not self.received and not got
                self._fail(f"peer {self.remote} closed the connection at message {self.received + 1} from it "
                           f"({len(got)} of {count} bytes received); "
                           f"{PEER_CLOSED_UNHEARD_HINT if unheard else PEER_CLOSED_HINT}")
            if self.unconfirmed:                        # the peer
                self._confirm()
            got += chunk
            deadline = time.monotonic() + timeout_ms / 1000
        self.received += 1
        return bytes(got)

    def close(self):
        self._confirm()
        if self.socket is not None:
            self.socket.close()
            self.socket = None


class Mapping:
    def __init__(self, host: int, extent: int, gpu: int, name: str = ""):
        self.host, self.extent, self.gpu = host, extent, gpu
        self.name = name            # the Map's identity as messages name it (np_mapping.name)
        self.memory = bytearray(extent)
        self.host_mapped = host != 0


class Machine:
    """A program's machine: slots, state, mapped memory, endpoints, staged outputs."""

    def __init__(self, program: Program, arguments, gpu=None, environ=None, stderr=None, name="native-host",
                 stdout=None, components=None, say_kernels=False):
        self.p = program
        self.say_kernels = say_kernels     # a Submit without `gpu` names --kernels (NO_SUBMIT), not NATIVE_DEVICE
        self.args = list(arguments)
        self.name = name
        self.stdout = stdout
        self.request = None            # the open request (native_request.RequestSession)
        # WaitMapped's status when its word falls short: the native program's own, or the plan
        # host's GPU fault where the host answers with the plan host's codes (a request, a step)
        self.wait_status = EXIT_WAIT
        self.components = dict(components or {})      # the host's embedded device images, by kind
        self.trace = None              # NATIVE_TRACE: the C host's lines (runtime_c/native_host.c trace)
        self.trace_failure = None      # its first failed write (OSError), said when it is closed
        self.gpu = gpu
        environ = os.environ if environ is None else environ
        self.trace_path = environ.get("NATIVE_TRACE") or None
        self.stderr = stderr if stderr is not None else sys.stderr.buffer
        self.slots = [0] * max(program.slots, 1)
        self.state = bytearray(program.state_extent)
        self.mappings: list[Mapping] = []
        self.session_open = False
        self.peers: list[Peer] = []
        self.staged: dict[int, bytes] = {}
        self.outputs = None            # run_program's safe_io.OutputSet: PrepareOutputs writes its temporaries
        self.prepared: set = set()     # the arguments PrepareOutputs prepared
        self.telemetry = settings.TELEMETRY.value(environ, -1)        # judged at start-up (run_program)
        self.peer_timeout_ms = settings.PEER_TIMEOUT.value(environ, settings.PEER_TIMEOUT_MS)
        self.start = time.monotonic()
        self.submitted: list[int] = []

    # ---- memory ----
    def word(self, address: int) -> int:
        return int.from_bytes(self.state[address:address + 8], "little")

    def set_word(self, address: int, value: int) -> None:
        self.state[address:address + 8] = (value & MASK).to_bytes(8, "little")

    def locate(self, address: int, count: int):
        """(memory, offset) of mapped [address, address + count), or None."""
        for m in self.mappings:
            if m.host_mapped and address >= m.host and address - m.host <= m.extent \
                    and count <= m.extent - (address - m.host):
                return m.memory, address - m.host
        return None

    def mapped_read(self, address: int, count: int) -> bytes:
        memory, offset = self.locate(address, count)
        return bytes(memory[offset:offset + count])

    def mapped_write(self, address: int, data: bytes) -> None:
        memory, offset = self.locate(address, len(data))
        memory[offset:offset + len(data)] = data

    # ---- running ----
    def fault(self, index: int, status: int, what: str):
        command = self.p.commands[index]
        if command.code == REQUEST_OPEN:        # a refusal of the user's options and files: no number
            raise Stop(status, what.encode("utf-8", "surrogateescape"))
        raise Stop(status, f"command {index} ({command.name}): {what}".encode("utf-8", "surrogateescape"))

    def _buffer_at(self, address: int):
        """The host-mapped buffer holding byte `address`, or None (runtime_c np_device_buffer; a plan
        host's Commands machine names none, as its C hook does not)."""
        for m in getattr(self, "mappings", ()):
            if m.host_mapped and m.host <= address < m.host + m.extent:
                return m
        return None

    def _refuse_range(self, index: int, what: str, address: int, count: int, advice: str = ""):
        """runtime_c/native_machine.c refuse_range: a range that starts in a buffer and runs past its
        end names it; else where to Map one (or the caller's advice)."""
        m = self._buffer_at(address)
        if m is not None:
            self.fault(index, EXIT_FAULT, f'{what} is in no host-mapped buffer: it starts {address - m.host:,} bytes '
                                          f'into buffer "{m.name}" [0x{m.host:x}, +0x{m.extent:x}) and runs '
                                          f'{address + count - m.host - m.extent:,} bytes past its end (a range lies '
                                          f'in one buffer){advice}')
        self.fault(index, EXIT_FAULT, f"{what} is in no host-mapped buffer"
                                      + (advice or " (Map one there with a nonzero host address first)"))

    def _mapped(self, index: int, address: int, count: int):
        found = self.locate(address, count)
        if found is None:
            self._refuse_range(index, f"mapped [0x{address:x}, +{count})", address, count)
        return found

    def _operand(self, index: int, operand) -> int:
        kind, value = operand
        if kind == 0:
            return value & MASK
        if kind == 1:
            return self.slots[value]
        if kind == 2:
            return self.word(value)
        memory, offset = self._mapped(index, value, 8)
        return int.from_bytes(memory[offset:offset + 8], "little")

    def _trace(self, line: str) -> None:
        if self.trace is not None and self.trace_failure is None:
            try:
                self.trace.write(line + "\n")
            except OSError as failure:      # a full disk, the file size limit: said at its close
                self.trace_failure = failure

    def _end_trace(self) -> None:
        """Close NATIVE_TRACE (runtime_c/diag_file.c rt_diag_close, right after the program's
        commands, before any message of its end): a write that failed is one line, the run's
        status kept -- the file is a diagnostic (probe s36 faultinject finding 3)."""
        if self.trace is None:
            return
        trace, self.trace = self.trace, None
        try:
            trace.close()
        except OSError as failure:
            self.trace_failure = self.trace_failure or failure
        if self.trace_failure is not None:
            from ..errors import shown
            from .safe_io import write_failure
            self.stderr.write(f"native: NATIVE_TRACE {shown(self.trace_path)}: write failed: "
                              f"{write_failure(self.trace_failure)}; the file is incomplete (the run's outputs "
                              f"are not affected)\n".encode("utf-8", "surrogateescape"))
            self.stderr.flush()

    def run(self) -> int:
        """Carry the program out: its exit status; the outputs published on success."""
        if self.trace_path:
            try:
                self.trace = open_diagnostic("NATIVE_TRACE", self.trace_path, input_paths(self.p, self.args))
            except DiagnosticRefused as refused:
                self.stderr.write(f"native: {refused}\n".encode("utf-8", "surrogateescape"))
                return EXIT_WRITE
        try:
            return self._run_all()
        finally:
            self._end_trace()

    def _run_all(self) -> int:
        from .native_request import Help, nothing_note
        try:
            try:
                self._run(0)
            except _Halt:
                pass
            except Help:
                self.request = None
        except Stop as stop:
            self._end_trace()
            self._close()
            line = (self.request.failure_line(stop.message) if self.request is not None
                    else stop.message + nothing_note(stop.message))
            self.stderr.write(b"native: " + line)
            self.stderr.flush()
            return stop.status
        self._end_trace()
        self._close()
        return 0

    def _close(self):
        self.mappings.clear()
        self.session_open = False
        for peer in self.peers:
            peer.close()

    def _run(self, at: int) -> None:
        commands = self.p.commands
        while True:
            c = commands[at]
            code, n = c.code, c.n
            if code == 0:
                return
            if code == 1:
                raise _Halt()
            if code == 2:
                # the peers it is connected to (native_host.c host_fail_context): a Fail's message is
                # fixed when the host is built, so it cannot name the address a peer came from
                peers = ", ".join(peer.remote for peer in self.peers)
                context = f"; {'peers' if len(self.peers) > 1 else 'peer'} {peers}" if peers else ""
                raise Stop(n[0], f"command {at} (Fail{context}): ".encode("utf-8", "surrogateescape")
                           + shown_line(c.data))
            if code == 3:
                self.slots[n[0]] = self._operand(at, c.v[0])
            elif code == 4:
                self.set_word(n[0], self._operand(at, c.v[0]))
            elif code == 5:
                self.set_word(n[0], self._operand(at, c.v[0]) + self._operand(at, c.v[1]))
            elif code == 6:
                self.set_word(n[0], float_operation(c.sub, self._operand(at, c.v[0]), self._operand(at, c.v[1])))
            elif code == 7:
                self.set_word(n[0], convert(c.sub, self._operand(at, c.v[0])))
            elif code == 8:
                memory, offset = self._mapped(at, n[1], n[2])
                memory[offset:offset + n[2]] = self.state[n[0]:n[0] + n[2]]
            elif code == 9:
                memory, offset = self._mapped(at, n[0], n[2])
                self.state[n[1]:n[1] + n[2]] = memory[offset:offset + n[2]]
            elif code == 10:
                memory, offset = self._mapped(at, n[0], n[1])
                value = self._operand(at, c.v[0])
                memory[offset:offset + n[1]] = (value & ((1 << (8 * n[1])) - 1)).to_bytes(n[1], "little")
            elif code == 11:
                memory, offset = self._mapped(at, n[0], 8)
                value = self._operand(at, c.v[0])
                seen = int.from_bytes(memory[offset:offset + 8], "little")
                if seen < value:
                    # the word's buffer named (runtime_c/native_machine.c np_run's WaitMapped)
                    b = self._buffer_at(n[0])
                    inside = f' (buffer "{b.name}" + {n[0] - b.host:,})' if b is not None else ""
                    self.fault(at, self.wait_status, f"mapped word 0x{n[0]:x}{inside}: the word reached {seen}, not "
                                              f"{value}, within {n[1]} ms")
            elif code == 12:
                count = self._operand(at, c.v[0])
                for _ in range(count):
                    self._run(c.child[0])
                at = c.child[1]
                continue
            elif code == 13:
                at = c.child[0] if self._operand(at, c.v[0]) == 0 else c.child[1]
                continue
            elif code == 18:
                memory, offset = self._mapped(at, n[0], len(c.data))
                memory[offset:offset + len(c.data)] = c.data
            elif code == 22:
                if self.telemetry >= 0 and n[0] <= self.telemetry:
                    micros = int((time.monotonic() - self.start) * 1e6)
                    # the label up to its first NUL, as the C host prints it (a NUL-padded name)
                    label = shown_line(c.data.split(b"\0", 1)[0])
                    self.stderr.write(b"native: telemetry " + label + f" +{micros} us\n".encode("utf-8", "surrogateescape"))
            else:
                self._other(at, c)
            at = c.child[0]

    def _other(self, at: int, c) -> None:
        """Files, the device session, Submit and peers: the native host's own commands
        (runtime_c/native_host.c's host_other); a plan host's machine refuses them."""
        code, n = c.code, c.n
        if code == 14:
            what = f"argument {n[0]}"
            path = self.args[n[0]]
            try:
                data = read_exact_file(what, path)
            except Stop as stop:
                self.fault(at, stop.status, message_text(stop.message))
            if len(data) != n[2]:
                self.fault(at, EXIT_FILE, f"{what} {path}: {_count(len(data), 'byte')}, not the {n[2]} the program "
                                          "reads")
            self.state[n[1]:n[1] + n[2]] = data
        elif code == 15:
            self._stage(at, n[0], bytes(self.state[n[1]:n[1] + n[2]]))
        elif code == 25:
            memory, offset = self._mapped(at, n[1], n[2])
            self._stage(at, n[0], bytes(memory[offset:offset + n[2]]))
        elif code == 16:
            if self.session_open:
                self.fault(at, self._device_status(), "a device session is already open; Release it first")
            self.session_open = True
        elif code == 17:
            self._map(at, c)
        elif code == 19:
            if len(self.peers) == MAX_PEERS:
                self.fault(at, EXIT_PEER, f"more than {MAX_PEERS} endpoints")
            try:
                peer = Peer(c.data, n[0] != 0, self.peer_timeout_ms)
            except Stop as stop:
                self.fault(at, stop.status, message_text(stop.message))
            self.peers.append(peer)
            self.slots[n[1]] = len(self.peers)
        elif code in (20, 21):
            handle = self.slots[n[0]]
            if not 1 <= handle <= len(self.peers) or self.peers[handle - 1].socket is None:
                self.fault(at, EXIT_FAULT, f"slot {n[0]} holds {handle}, not an open endpoint (Connect first)")
            peer = self.peers[handle - 1]
            try:
                if code == 20:
                    peer.send(bytes(self.state[n[1]:n[1] + n[2]]), self.peer_timeout_ms)
                else:
                    self.state[n[1]:n[1] + n[2]] = peer.receive(n[2], self.peer_timeout_ms)
            except Stop as stop:
                self.fault(at, stop.status, message_text(stop.message))
        elif code == 23:
            self.mappings.clear()
            self.session_open = False
        elif code == 24:
            self._submit(at, c)
        elif REQUEST_OPEN <= code <= REQUEST_CHECKPOINT_PUBLISH:
            self._request(at, c)
        elif code == 35:
            image = self.components.get(n[0])
            if image is None:
                self.fault(at, EXIT_DAMAGED, f"the host carries no embedded device image of kind {n[0]} (build it "
                                             f"as an embedded artifact: Runtime.NativePhysicalEmbeddedArtifact)")
            memory, offset = self._mapped(at, n[1], len(image))
            memory[offset:offset + len(image)] = image
            self._trace(f"load {n[0]} {len(image)}")
        elif code == 36:
            self._prepare(at)
        else:
            self.fault(at, EXIT_INTERNAL, f"unknown command code {code}")

    def _stage(self, at: int, argument: int, data: bytes) -> None:
        if argument in self.prepared:
            self.fault(at, EXIT_INTERNAL, f"argument {argument} was prepared for publication already "
                                          f"(PrepareOutputs): a program writes an output before it prepares it")
        self.staged[argument] = data

    def _prepare(self, at: int) -> None:
        """PrepareOutputs (runtime_c/native_host.c; host_io.c rt_io_prepare): the outputs staged so
        far to their synced temporaries now; a failure is this command's (status 8)."""
        from .safe_io import OutputSet, PrepareRefused
        if self.outputs is None:            # a Machine run on its own: its outputs, checked as run_program does
            self.outputs = OutputSet()
            for argument in self.staged:
                self.outputs.add(self.args[argument], f"argument {argument}")
        try:
            self.outputs.prepare({f"argument {a}": data for a, data in self.staged.items()})
        except PrepareRefused as refused:
            self.prepared.clear()
            self.fault(at, EXIT_WRITE, refused.message)
        self.prepared.update(self.staged)
        self._trace("prepare")

    def _request(self, at: int, c) -> None:
        """A request's commands (native_request.py; runtime_c/native_request.c)."""
        from ..native.request import parse_request
        from .native_request import Refused, RequestSession
        code, n = c.code, c.n
        try:
            if code == 26:
                # the files the command read besides the request's own (`bobc run PLAN native`'s plan
                # modules, kernel sources, --kernels file): no output of the request replaces one either
                self.request = RequestSession(parse_request(c.data), self.args, self.name, self.stdout,
                                              inputs=self.outputs.inputs if self.outputs is not None else ())
                self.wait_status = EXIT_GPU_FAULT
                self._trace(f"open {self.request.op} step {self.request.step}")
                self.set_word(n[0], self.request.step)
                self.set_word(n[1], 1 if self.request.op == "predict" else 0)
                return
            r = self.request
            if code == 27:
                memory, offset = self._mapped(at, n[1], n[2])
                start = self._operand(at, c.v[0])
                memory[offset:offset + n[2]] = r.read(n[0], start, n[2])
                self._trace(f"read {n[0]} {start} {n[2]}")
            elif code in (28, 29):
                memory, offset = self._mapped(at, n[1], n[2])
                r.write(n[0], bytes(memory[offset:offset + n[2]]), n[3] if code == 29 else None)
                self._trace(f"write {n[0]} {n[2]}")
            elif code == 30:
                r.write(n[0], bytes(self.state[n[1]:n[1] + n[2]]))
            elif code == 31:
                offset, extent = self._operand(at, c.v[0]), self._operand(at, c.v[1])
                r.write(n[0], r.read(1, offset, extent))
            elif code == 32:
                r.write(n[0], r.status(self.word(n[1])))
            elif code == 33:
                r.checkpoint_begin()
                self._trace("begin")
            else:
                r.checkpoint_publish(n[0])
                self._trace(f"publish {r.reached}")
        except Refused as refused:
            self.fault(at, refused.status, refused.message)

    def _map(self, at: int, c) -> None:
        name = c.data[:64].decode("latin-1")
        gpu, host, extent, _video = c.n
        if not self.session_open:
            self.fault(at, self._device_status(), f'buffer "{name}": no device session is open (OpenDevice first)')
        if len(self.mappings) == MAX_MAPPINGS:
            self.fault(at, self._device_status(), f'buffer "{name}": more than {MAX_MAPPINGS} buffers')
        if extent == 0 or extent > 1 << 40:
            self.fault(at, self._device_status(), f'buffer "{name}": extent {extent} (1 byte to 1 TiB)')
        for m in self.mappings:
            if host and m.host_mapped and host < m.host + m.extent and m.host < host + extent:
                # both buffers named, with their ranges (runtime_c/native_device.c np_device_map)
                self.fault(at, self._device_status(), f'buffer "{name}": host range [0x{host:x}, +0x{extent:x}) overlaps '
                                            f'buffer "{m.name}" [0x{m.host:x}, +0x{m.extent:x}), mapped earlier '
                                            f'(give each Map a host range of its own)')
        try:
            mapping = Mapping(host, extent, gpu, name)
        except MemoryError:
            # the program's own device memory, not bobc's: the memory session's refusal, as the C
            # host's (runtime_c/native_device.c np_device_map), not bobc's "out of memory", exit 1
            self.fault(at, self._device_status(), f'buffer "{name}": out of memory ({extent} bytes)')
        self.mappings.append(mapping)

    def _device_status(self) -> int:
        """The device's failure status: a request host answers with the plan host's codes
        (runtime_c/native_host.c device_status): 6 where the native program says 3."""
        return EXIT_NO_GPU if self.request is not None else EXIT_DEVICE

    def _submit(self, at: int, c) -> None:
        ring, entries, put, semaphore, counter = c.n
        n = self.word(counter)
        if n == MASK:       # its semaphore target n + 1 would not fit 64 bits (runtime_c np_ring_slot)
            self.fault(at, EXIT_INTERNAL, f"submission {n}: the issue counter is at 2^64 - 1, where the semaphore's "
                                          "target n + 1 would wrap to 0 (a counter takes submissions 0 to 2^64 - 2); "
                                          "store a smaller count at its word")
        address = ring + 8 * (n % entries)
        slot = self.locate(address, 8) if address <= MASK else self._mapped(at, address, 8)
        if slot is None:    # the slot named as the ring's (runtime_c np_ring_slot)
            advice, m = "", self._buffer_at(ring)
            if m is not None and ring + 8 * entries > m.host + m.extent:
                advice = (f"; the ring's {entries} entries at 0x{ring:x} need {8 * entries:,} bytes, past the end of "
                          f'buffer "{m.name}" [0x{m.host:x}, +0x{m.extent:x}): map a buffer that holds them all, '
                          f"or give the ring fewer entries")
            self._refuse_range(at, f"ring slot {n % entries} of {entries} (submission {n}) at mapped "
                                   f"[0x{address:x}, +8)", address, 8, advice)
        put_at = self._mapped(at, put, 4)
        semaphore_at = self._mapped(at, semaphore, 8)
        entry = self._operand(at, c.v[0])
        slot[0][slot[1]:slot[1] + 8] = entry.to_bytes(8, "little")
        put_at[0][put_at[1]:put_at[1] + 4] = ((n + 1) % entries).to_bytes(4, "little")
        if not self.session_open:
            self.fault(at, self._device_status(), f"submission {n} (entry 0x{entry:x}): no device session is open "
                                        f"(OpenDevice first)")
        if self.gpu is None:
            self.fault(at, self._device_status(), f"submission {n} (entry 0x{entry:x}): " + (
                NO_SUBMIT if self.say_kernels else "this session has no GPU (NATIVE_DEVICE=memory): a submission "
                                                   "needs one"))
        self.submitted.append(entry)
        try:
            self.gpu(self, entry)
        except (Stop, _Halt):
            raise
        except MemoryError:             # bobc's process out of memory: no GPU fault (exit 7), said by cli
            raise
        except (Exception, SystemExit) as error:      # noqa: BLE001 -- the user's kernels: one line, not a
            from ..errors import descriptors_exhausted      # traceback, nor their sys.exit() as bobc's status

            stop = descriptors_exhausted(error) if isinstance(error, OSError) else None
            if stop is not None:        # no descriptor left (ulimit -n): the limit's, not the GPU's (exit 7)
                raise stop from None
            self.fault(at, self.wait_status, f"submission {n} (entry 0x{entry:x}): {kernels_failure(self.gpu, error)}")
        memory, offset = semaphore_at
        seen = int.from_bytes(memory[offset:offset + 8], "little")
        if seen < n + 1:
            self.fault(at, self.wait_status, f"submission {n} (entry 0x{entry:x}): the semaphore reached {seen}, "
                                      f"not {n + 1}")
        self.set_word(counter, n + 1)
        self._trace(f"submit {n} 0x{entry:x}")


def input_paths(program: Program, arguments) -> list:
    """The files the run reads, as far as its command line says before it runs
    (runtime_c/native_host.c input_paths): each ReadFile's argument, and a request's --input
    and --checkpoint values (--opt=value too, whether or not the line parses)."""
    paths = [arguments[c.n[0]] for c in program.commands if c.name == "ReadFile" and c.n[0] < len(arguments)]
    if any(c.name == "RequestOpen" for c in program.commands):
        for i, word in enumerate(arguments):
            for name in ("--input", "--checkpoint"):
                if word == name and i + 1 < len(arguments):
                    paths.append(arguments[i + 1])
                elif word.startswith(name + "="):
                    paths.append(word[len(name) + 1:])
    return paths


class DiagnosticRefused(Exception):
    """A diagnostic file that cannot be written, or is one of the inputs (status 8)."""


def diagnostic_refusal(variable: str, path: str, inputs) -> str | None:
    """runtime_c/diag_file.c rt_diag_check, the check at start-up: the host's message when the
    file `path` names exists and is one of `inputs` (the same device and inode), else None."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    for source in inputs:
        if not source:
            continue
        try:
            seen = os.stat(source)
        except OSError:
            continue
        if (seen.st_dev, seen.st_ino) == (info.st_dev, info.st_ino):
            return (f"{variable} {path}: is the input {source}; a diagnostic file never replaces an input; "
                    "nothing was written")
    return None


def open_diagnostic(variable: str, path: str, inputs):
    """runtime_c/diag_file.c rt_diag_open: `path` opened for writing without truncating it,
    refused when it is one of `inputs` (the same device and inode: it would destroy the input),
    else truncated.  A text file, or DiagnosticRefused with the host's message."""
    import stat as stat_module

    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o666)
    except OSError as error:
        raise DiagnosticRefused(f"{variable} {path}: cannot open: {error.strerror}") from None
    try:
        info = os.fstat(fd)
        for source in inputs:
            try:
                seen = os.stat(source)
            except OSError:
                continue
            if (seen.st_dev, seen.st_ino) == (info.st_dev, info.st_ino):
                raise DiagnosticRefused(f"{variable} {path}: is the input {source}; a diagnostic file never "
                                        f"replaces an input; nothing was written")
        if stat_module.S_ISREG(info.st_mode):
            os.ftruncate(fd, 0)
        handle = os.fdopen(fd, "w")
    except OSError as error:
        os.close(fd)
        raise DiagnosticRefused(f"{variable} {path}: cannot open: {error.strerror}") from None
    except DiagnosticRefused:
        os.close(fd)
        raise
    return handle


def kernels_failure(gpu, error: BaseException) -> str:
    """An exception out of a --kernels SUBMIT in one line, as `bobc run` reports a --kernels file
    that fails to load: the file, the exception, the line of the file it came through and, when
    it was raised in another file (the kernels' own helpers), that file and line."""
    import traceback

    def shown(path: str) -> str:          # under the working folder: as a relative path
        relative = os.path.relpath(path) if os.path.isabs(path) else path
        return path if relative.startswith("..") else relative

    source = getattr(getattr(gpu, "__code__", None), "co_filename", None) or getattr(gpu, "__module__", "?")
    frames = traceback.extract_tb(error.__traceback__)
    mine = [frame for frame in frames if frame.filename == source]
    where = f" at line {mine[-1].lineno}" if mine else ""
    if frames and frames[-1].filename != source:
        where += f" (raised in {shown(frames[-1].filename)} line {frames[-1].lineno})"
    from ..errors import raised_text

    kind, _, text = raised_text(error).partition(": ")
    text = text.splitlines()[0] if text else ""
    return f"--kernels {shown(source)}: SUBMIT raised {kind}{where}" + (f": {text}" if text else "")


def _input_file(path: str):
    """A ReadFile argument's file as OutputSet.add knows an output's (runtime_c/native_host.c
    input_file): its folder's real path and its name (the path itself when the folder cannot
    be resolved), and its (device, inode) when it exists (stat: a symlink is its target)."""
    folder, base = os.path.split(path)
    try:
        os.stat(folder or ".")
        real = os.path.join(os.path.realpath(folder or "."), base)
    except (OSError, ValueError):
        real = path
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return real, None
    return real, (info.st_dev, info.st_ino)


def alias_refusal(program: Program, arguments, outputs) -> str | None:
    """runtime_c/native_host.c check_aliases: the message refusing an output that is the file
    another argument's ReadFile reads (the same path once its folder is resolved, or the same
    device and inode: a symlink or hard link to it), else None.  The same argument read and
    written is a file updated in place (a checkpoint resumed) and stays allowed; `outputs`: the
    OutputSet the output arguments were checked into, in their order."""
    from .safe_io import shown

    inputs = {}
    for command in program.commands:
        if command.name == "ReadFile" and command.n[0] not in inputs:
            inputs[command.n[0]] = _input_file(arguments[command.n[0]])
    for output in outputs.outputs:
        argument = int(output.option.split()[-1])
        for read, (real, identity) in inputs.items():
            if read == argument:
                continue
            if real == output.real or (identity is not None and identity == output.identity):
                return (f"output {shown(output.path)} ({output.option}): is the same file as argument {read} "
                        f"{shown(arguments[read])}, which the program reads; an output never replaces another "
                        f"argument's input: give {output.option} a path of its own; nothing was written")
    return None


def arguments_note(program) -> bytes:
    """Where the file arguments' meaning is (runtime_c/native_host.c put_arguments_note): a native
    program carries no names for them, so the plan that built it is named by the program's
    identity, shown as --version shows it (probe s37 leftovers finding 8)."""
    identity = shown_line(program.identity.split(b"\0")[0])
    return (b"it carries no names for them: the plan that built "
            + (b"program " + identity if identity else b"it") + b" says what each is")


def help_text(program, name: str) -> str:
    """`HOST --help` of a program without a request (runtime_c/native_host.c print_help)."""
    from ..native.program import usage_arguments

    listed = usage_arguments(program)
    listed = f" {listed}" if listed else ""
    note = arguments_note(program).decode("utf-8", "surrogateescape") + "\n" if program.arguments else ""
    return (f"usage: {name}{listed}\n       {name} --version\nthe program names "
            f"{_count(program.arguments, 'file argument')}, each a path, in this order\n{note}")


def version_text(program, build: bytes, components: int) -> bytes:
    """`HOST --version` (runtime_c/native_host.c print_version): the build's facts -- the host's
    .bobc.version section, `build` (bobc.host.version.native_text) -- then the program's lines."""
    identity = shown_line(program.identity.split(b"\0")[0])     # up to its first NUL (a zero-padded name)
    # a request's program takes its input and outputs through options: said, not "0 arguments"
    request = any(c.name == "RequestOpen" for c in program.commands)
    arguments = (f"{_count(program.arguments, 'file argument')}; a request: train|predict and its options"
                 if request else _count(program.arguments, 'argument'))
    counts = (f" ({_count(len(program.commands), 'command')}, {_count(program.slots, 'slot')}, "
              f"{_count(program.state_extent, 'state byte')}, {arguments})\n")
    return build + b"program: " + identity + counts.encode() + f"embedded device images: {components}\n".encode()


def missing_version(name: str) -> str:
    """The host's refusal of --version when its file has no .bobc.version section (not made by
    `bobc build`: runtime_c/elf_sections.c's words, the host naming itself)."""
    return (f"damaged host file: {name} has no section .bobc.version: it was not built by `bobc build`, or was "
            "stripped; rebuild it (bobc build)")


def run_program(program_bytes: bytes, arguments, name: str = "native-host", gpu=None, environ=None,
                stderr=None, stdout=None, components=None, say_kernels: bool = False,
                version: bytes | None = None, inputs=()) -> int:
    """Check and run a program with the host's file rules: the exit status (messages on stderr).

    `say_kernels`: whether a Submit without `gpu` is refused saying what to give (--kernels FILE
    defining SUBMIT: NO_SUBMIT) rather than in the C host's NATIVE_DEVICE=memory words: `bobc run
    PLAN native` asks for it; a caller holding the messages to the C host's keeps the host's line.
    `version`: the host's .bobc.version section, which `--version` prints first (None: a host
    without one, whose --version is refused as damaged, exit 9).  `inputs`: files the command read
    besides the program's own arguments (safe_io.InputFile identities: `bobc run PLAN native`'s plan
    modules, kernel sources and --kernels file), which no output argument may name (exit 8)."""
    from ..native.program import ProgramError, decode, usage_arguments
    from . import safe_io

    stderr = stderr if stderr is not None else sys.stderr.buffer
    try:
        program = decode(program_bytes)
    except ProgramError as error:
        stderr.write(f"native: {safe_io.shown(name)}: damaged host file: its program: {error}; rebuild it\n"
                     .encode("utf-8", "surrogateescape"))
        return EXIT_DAMAGED
    if list(arguments) == ["--version"]:        # native_host.c: before anything else is judged
        if version is None:
            stderr.write(f"native: {missing_version(name)}\n".encode("utf-8", "surrogateescape"))
            return EXIT_DAMAGED
        out = stdout if stdout is not None else sys.stdout.buffer
        try:
            out.write(version_text(program, version, len(components or ())))
            out.flush()
        except OSError as failure:
            stderr.write(f"native: cannot write to stdout: {safe_io.write_failure(failure)}\n".encode())
            return EXIT_WRITE
        return 0
    takes_options = any(c.name == "RequestOpen" for c in program.commands)   # native_host.c: a request's options
    if not takes_options and list(arguments) == ["--help"]:     # native_host.c print_help: stdout, exit 0
        out = stdout if stdout is not None else sys.stdout.buffer
        try:
            out.write(help_text(program, name).encode("utf-8", "surrogateescape"))
            out.flush()
        except OSError as failure:
            stderr.write(f"native: cannot write to stdout: {safe_io.write_failure(failure)}\n".encode())
            return EXIT_WRITE
        return 0
    if len(arguments) < program.arguments or (not takes_options and len(arguments) > program.arguments):
        listed = usage_arguments(program)          # native_host.c's print_usage: " ARG0 (read) ..."
        listed = f" {listed}" if listed else ""
        stderr.write(f"native: usage: {safe_io.shown(name)}{listed}: the program names "
                     f"{_count(program.arguments, 'file argument')}, {len(arguments)} given".encode("utf-8", "surrogateescape")
                     + (b" (" + arguments_note(program) + b")" if program.arguments else b"") + b"\n")
        return EXIT_FILE
    # native_host.c: then the settings (host_settings.h's RT_NATIVE_HOST_SETTINGS)
    refusal = settings.refusal(os.environ if environ is None else environ, settings.NATIVE_HOST)
    if refusal is not None:
        stderr.write(f"native: {refusal}\n".encode("utf-8", "surrogateescape"))
        return EXIT_FILE
    outputs = []
    for command in program.commands:
        if command.code in (15, 25) and command.n[0] not in outputs:
            outputs.append(command.n[0])
    files = safe_io.OutputSet(inputs=list(inputs))
    try:
        safe_io.recover([arguments[a] for a in outputs])
    except Exception as error:      # safe_io's refusals: a journal left that cannot be finished
        stderr.write(f"native: {getattr(error, 'message', error)}\n".encode("utf-8", "surrogateescape"))
        return EXIT_WRITE
    try:
        for argument in outputs:
            files.add(arguments[argument], f"argument {argument}")
    except OutputWriteFailure as error:      # an output that cannot be published, in the host's words
        stderr.write(f"native: {error.host_form()}\n".encode("utf-8", "surrogateescape"))
        return EXIT_WRITE
    except Exception as error:      # safe_io's other refusals
        stderr.write(f"native: {getattr(error, 'message', error)}\n".encode("utf-8", "surrogateescape"))
        return EXIT_WRITE
    refusal = alias_refusal(program, arguments, files)
    if refusal is not None:
        stderr.write(f"native: {refusal}\n".encode("utf-8", "surrogateescape"))
        return EXIT_WRITE
    machine = Machine(program, arguments, gpu=gpu, environ=environ, stderr=stderr, name=name, stdout=stdout,
                      components=components, say_kernels=say_kernels)
    machine.outputs = files
    try:        # any end but a publication (a failure, Ctrl-C) removes what PrepareOutputs wrote
        status = machine.run()
        if status:
            return status
        if machine.request is not None:
            try:
                machine.request.finish()
            except OutputWriteFailure as error:      # in the host's words (rt_io_publish), as below
                said = error.host_form()
                if machine.request.written:         # an interval's checkpoint of this run stays (its note)
                    stderr.write(b"native: " + machine.request.failure_line(said.encode("utf-8", "surrogateescape")))
                else:
                    stderr.write(f"native: {said}\n".encode("utf-8", "surrogateescape"))
                return EXIT_WRITE
            except Exception as error:      # safe_io's refusals: nothing was published
                stderr.write(f"native: {getattr(error, 'message', error)}\n".encode("utf-8", "surrogateescape"))
                return EXIT_WRITE
        staged = [a for a in outputs if a in machine.staged]
        if staged:
            publish = safe_io.OutputSet()
            prepared = {o.option: o for o in files.outputs}
            try:
                for argument in staged:
                    option = f"argument {argument}"
                    publish.add(arguments[argument], option)
                    publish.stage(option, machine.staged[argument])
                    # prepared (PrepareOutputs): only its rename is left
                    publish.outputs[-1].temporary, prepared[option].temporary = prepared[option].temporary, None
                publish.publish()
            except Exception as error:
                publish.discard()
                if isinstance(error, OutputWriteFailure):     # in the host's words (rt_io_publish)
                    stderr.write(f"native: {error.host_form()}\n".encode("utf-8", "surrogateescape"))
                    return EXIT_WRITE
                stderr.write(f"native: {getattr(error, 'message', error)}\n".encode("utf-8", "surrogateescape"))
                return EXIT_WRITE
        return 0
    finally:
        files.discard()
