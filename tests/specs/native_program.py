"""An independent interpreter of native physical programs' canonical bytes (tests only).

Written from docs/platform.md's table, not from the plan language: it decodes
nativePhysicalCommandsBytes and runs the commands on a state arena, slots,
a sparse mapped memory, files and a peer channel.  The GPU is a callback:
`Submit` hands the ring entry to `gpu(machine, entry)`, which may read and
write mapped memory, then the semaphore counts the submission.
"""
from __future__ import annotations

import math
import struct

import numpy as np


class Halted(Exception):
    pass


class Failed(Exception):
    def __init__(self, status, message):
        super().__init__(f"status {status}: {message!r}")
        self.status = status


def f64(bits: int) -> float:
    return struct.unpack("<d", struct.pack("<Q", bits & (2 ** 64 - 1)))[0]


def bits64(value: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", value))[0]


class Machine:
    def __init__(self, state_bytes=4096, gpu=None, files=None, send=None, receive=None, host_buffers=()):
        self.state = bytearray(state_bytes)
        self.slots = [0] * 64
        self.mapped: dict[int, int] = {}
        # [host, host + extent) of each Map with a host address; a fragment of a program runs
        # with the buffers its session would have mapped given here
        self.host_buffers: list[tuple[int, int]] = list(host_buffers)
        self.files = dict(files or {})
        self.outputs: dict[int, bytes] = {}
        # PrepareOutputs: the arguments prepared (their bytes final: written again, status 1)
        self.prepared: set[int] = set()
        self.gpu = gpu
        self.send, self.receive = send, receive
        self.telemetry: list[bytes] = []
        self.submitted: list[int] = []
        # a request (docs/native-host.md, "Requests"): what RequestOpen reports, the files
        # RequestRead reads (1 input, 2 checkpoint payload), and every request command carried out
        self.request_step, self.request_predict = 0, 0
        self.request_files: dict[int, bytes] = {}
        self.requests: list[tuple] = []

    # ---- memory ----
    def word(self, address):
        return int.from_bytes(self.state[address:address + 8], "little")

    def set_word(self, address, value):
        self.state[address:address + 8] = (value % 2 ** 64).to_bytes(8, "little")

    def mapped_read(self, address, count):
        return bytes(self.mapped.get(address + i, 0) for i in range(count))

    def mapped_write(self, address, data):
        for i, byte in enumerate(data):
            self.mapped[address + i] = byte

    def host_mapped(self, address, count):
        """Refuse (status 10) a command's mapped range outside every host-mapped buffer, as the
        runtime does (docs/native-host.md): mapped memory exists only once Map made it."""
        if not any(start <= address and address + count <= end for start, end in self.host_buffers):
            raise Failed(10, f"mapped [0x{address:x}, +{count}) is in no host-mapped buffer".encode())
        return address

    # ---- decoding ----
    def run(self, code: bytes):
        self.code = code
        try:
            self._run(0)
        except Halted:
            pass

    def _natural(self, at):
        return int.from_bytes(self.code[at:at + 8], "little"), at + 8

    def _bytes(self, at):
        length, at = self._natural(at)
        return self.code[at:at + length], at + length

    def _operand(self, at):
        kind, (value, at) = self.code[at], self._natural(at + 1)
        if kind == 0:
            return (lambda: value % 2 ** 64), at
        if kind == 1:
            return (lambda: self.slots[value]), at
        if kind == 2:
            return (lambda: self.word(value)), at
        return (lambda: int.from_bytes(self.mapped_read(self.host_mapped(value, 8), 8), "little")), at

    def _skip(self, at):
        """The offset after the command at `at` (and everything it contains)."""
        return self._run(at, execute=False)

    def _run(self, at, execute=True):
        """Run (or only walk) commands from `at` to their End; the offset after it."""
        while True:
            op = self.code[at]
            at += 1
            if op == 0:
                return at
            if op == 1:
                if execute:
                    raise Halted()
                return at
            if op == 2:
                status, at = self._natural(at)
                message, at = self._bytes(at)
                if execute:
                    raise Failed(status, message)
                return at
            if op in (3, 4):
                target, at = self._natural(at)
                value, at = self._operand(at)
                if execute:
                    if op == 3:
                        self.slots[target] = value()
                    else:
                        self.set_word(target, value())
            elif op == 5:
                destination, at = self._natural(at)
                left, at = self._operand(at)
                right, at = self._operand(at)
                if execute:
                    self.set_word(destination, left() + right())
            elif op == 6:
                operation = self.code[at]
                destination, at = self._natural(at + 1)
                left, at = self._operand(at)
                right, at = self._operand(at)
                if execute:
                    a, b = f64(left()), f64(right())
                    result = [a + b, a - b, a * b, a / b if b else math.copysign(math.inf, a)][operation]
                    self.set_word(destination, bits64(result))
            elif op == 7:
                conversion = self.code[at]
                destination, at = self._natural(at + 1)
                value, at = self._operand(at)
                if execute:
                    v = value()
                    if conversion == 0:
                        result = bits64(float(v))
                    elif conversion == 1:
                        result = bits64(math.sqrt(f64(v)))
                    elif conversion == 2:
                        result = int(np.float32(f64(v)).view(np.uint32))
                    else:
                        result = bits64(float(np.uint32(v & 0xFFFFFFFF).view(np.float32)))
                    self.set_word(destination, result)
            elif op in (8, 9):
                a, at = self._natural(at)
                b, at = self._natural(at)
                count, at = self._natural(at)
                if execute:
                    if op == 8:
                        self.mapped_write(self.host_mapped(b, count), self.state[a:a + count])
                    else:
                        self.state[b:b + count] = self.mapped_read(self.host_mapped(a, count), count)
            elif op == 10:
                address, at = self._natural(at)
                width, at = self._natural(at)
                value, at = self._operand(at)
                if execute:
                    self.mapped_write(self.host_mapped(address, width), (value() % 2 ** (8 * width)).to_bytes(width, "little"))
            elif op == 11:
                address, at = self._natural(at)
                value, at = self._operand(at)
                _, at = self._natural(at)
                if execute and int.from_bytes(self.mapped_read(self.host_mapped(address, 8), 8), "little") < value():
                    raise Failed(4, b"wait timed out")
            elif op == 12:
                count, at = self._operand(at)
                body = at
                at = self._skip(body)
                if execute:
                    for _ in range(count()):
                        self._run(body)
            elif op == 13:
                value, at = self._operand(at)
                when_zero = at
                otherwise = self._skip(when_zero)
                after = self._skip(otherwise)
                if execute:
                    return self._run(when_zero if value() == 0 else otherwise)
                return after
            elif op in (14, 15, 20, 21, 25):
                a, at = self._natural(at)
                b, at = self._natural(at)
                count, at = self._natural(at)
                if execute:
                    if op == 14:
                        data = self.files[a]
                        if len(data) != count:
                            raise Failed(2, b"file size")
                        self.state[b:b + count] = data
                    elif op == 15:
                        if a in self.prepared:
                            raise Failed(1, b"prepared already")
                        self.outputs[a] = bytes(self.state[b:b + count])
                    elif op == 20:
                        self.send(bytes(self.state[b:b + count]))
                    elif op == 21:
                        data = self.receive(count)
                        if len(data) != count:
                            raise Failed(5, b"peer")
                        self.state[b:b + count] = data
                    else:
                        if a in self.prepared:
                            raise Failed(1, b"prepared already")
                        self.outputs[a] = self.mapped_read(self.host_mapped(b, count), count)
            elif op == 16:
                _, at = self._bytes(at)
            elif op == 17:
                _, at = self._bytes(at)
                _gpu, at = self._natural(at)
                host, at = self._natural(at)
                extent, at = self._natural(at)
                _, at = self._natural(at)
                if execute and host:
                    self.host_buffers.append((host, host + extent))
            elif op == 18:
                host, at = self._natural(at)
                image, at = self._bytes(at)
                if execute:
                    self.mapped_write(self.host_mapped(host, len(image)), image)
            elif op == 19:
                _, at = self._bytes(at)
                _, at = self._natural(at)
                _, at = self._natural(at)
            elif op == 22:
                _, at = self._natural(at)
                label, at = self._bytes(at)
                if execute:
                    self.telemetry.append(label)
            elif op == 23:
                if execute:
                    self.host_buffers.clear()
            elif op == 24:
                ring, at = self._natural(at)
                entries, at = self._natural(at)
                put, at = self._natural(at)
                entry, at = self._operand(at)
                semaphore, at = self._natural(at)
                counter, at = self._natural(at)
                if execute:
                    n = self.word(counter)
                    self.mapped_write(self.host_mapped(ring + 8 * (n % entries), 8), entry().to_bytes(8, "little"))
                    self.mapped_write(self.host_mapped(put, 4), ((n + 1) % entries).to_bytes(4, "little"))
                    self.submitted.append(entry())
                    self.gpu(self, entry())
                    self.mapped_write(self.host_mapped(semaphore, 8), (n + 1).to_bytes(8, "little"))
                    self.set_word(counter, n + 1)
            elif op == 26:
                request, at = self._bytes(at)
                step_at, at = self._natural(at)
                predict_at, at = self._natural(at)
                if execute:
                    self.requests.append(("open", request))
                    self.set_word(step_at, self.request_step)
                    self.set_word(predict_at, self.request_predict)
            elif op == 27:
                file, at = self._natural(at)
                host, at = self._natural(at)
                extent, at = self._natural(at)
                offset, at = self._operand(at)
                if execute:
                    data = self.request_files.get(file, b"")[offset():offset() + extent]
                    self.mapped_write(self.host_mapped(host, extent), data.ljust(extent, b"\0"))
                    self.requests.append(("read", file, host, extent, offset()))
            elif op in (28, 29, 30):
                file, at = self._natural(at)
                source, at = self._natural(at)
                extent, at = self._natural(at)
                offset = None
                if op == 29:
                    offset, at = self._natural(at)
                if execute:
                    data = (bytes(self.state[source:source + extent]) if op == 30
                            else self.mapped_read(self.host_mapped(source, extent), extent))
                    out = bytearray(self.outputs.get(file, b""))
                    place = len(out) if offset is None else offset
                    out[place:place + extent] = data
                    self.outputs[file] = bytes(out)
                    self.requests.append(("write", file, source, extent, offset))
            elif op == 31:
                file, at = self._natural(at)
                offset, at = self._operand(at)
                extent, at = self._operand(at)
                if execute:
                    self.requests.append(("input", file, offset(), extent()))
            elif op == 32:
                file, at = self._natural(at)
                issued, at = self._natural(at)
                if execute:
                    self.requests.append(("status", file, issued))
            elif op == 33:
                if execute:
                    self.requests.append(("begin",))
            elif op == 34:
                updates, at = self._natural(at)
                if execute:
                    self.requests.append(("publish", updates))
            elif op == 35:
                kind, at = self._natural(at)
                host, at = self._natural(at)
                if execute:
                    self.requests.append(("load", kind, host))
            elif op == 36:
                if execute:
                    self.prepared |= set(self.outputs)
                    self.requests.append(("prepare", tuple(sorted(self.outputs))))
            else:
                raise AssertionError(f"unknown command {op}")
