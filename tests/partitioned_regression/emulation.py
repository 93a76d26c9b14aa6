"""Seed 003's two peers on the CPU: each host program run by the independent interpreter
(tests/specs/native_program.py), each its own thread with its own mapped memory, talking over
a socket pair, with the device emulated from the images the plan built
(partitioned_regression.device).
"""
from __future__ import annotations

import socket
import struct
import threading
from dataclasses import dataclass

from native_program import Failed, Machine

from partitioned_regression.device import EmulatedDevice

PAGE = 4096


class PagedMachine(Machine):
    """The interpreter with mapped memory in 4 KiB pages (the tests' Machine keeps a byte dict)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.pages: dict[int, bytearray] = {}

    def _page(self, number):
        page = self.pages.get(number)
        if page is None:
            page = self.pages[number] = bytearray(PAGE)
        return page

    def mapped_read(self, address, count):
        out = bytearray()
        while count:
            number, offset = divmod(address, PAGE)
            take = min(count, PAGE - offset)
            out += self._page(number)[offset:offset + take]
            address, count = address + take, count - take
        return bytes(out)

    def mapped_write(self, address, data):
        data = bytes(data)
        while data:
            number, offset = divmod(address, PAGE)
            take = min(len(data), PAGE - offset)
            self._page(number)[offset:offset + take] = data[:take]
            address, data = address + take, data[take:]

@dataclass
class Outcome:
    status: int                    # 0, or the Fail status
    message: bytes
    outputs: dict                  # argument -> bytes (only when status is 0: published)
    submitted: int
    telemetry: list


def run_host(program: bytes, images: dict, files: dict, sock: socket.socket | None,
             timeout: float = 10.0) -> Outcome:
    """One host: its program (canonical bytes) interpreted with `files` as its arguments."""
    slots, extent = struct.unpack_from("<QQ", program, 8)
    identity_length, = struct.unpack_from("<Q", program, 24)
    commands = program[32 + identity_length:]
    if sock is not None:
        sock.settimeout(timeout)

    def send(data):
        try:
            sock.sendall(data)
        except OSError as error:          # a closed peer: the runtime's status 5, as for Receive
            raise Failed(5, f"peer: send failed ({error.strerror})".encode()) from None

    def receive(count):
        data = b""
        try:
            while len(data) < count:
                chunk = sock.recv(count - len(data))
                if not chunk:
                    break
                data += chunk
        except (socket.timeout, OSError):
            pass
        return data

    device = EmulatedDevice()
    machine = PagedMachine(state_bytes=extent, gpu=device, files=files, send=send, receive=receive)
    machine.slots = [0] * max(slots, 1)
    try:
        machine.run(commands)
        status, message = 0, b""
    except Failed as failure:
        status, message = failure.status, failure.args[0].encode()
    finally:
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()
    return Outcome(status, message, machine.outputs if status == 0 else {}, len(machine.submitted), machine.telemetry)


def run_pair(programs, images, files, timeout: float = 10.0, break_peer=None, join: float = 120) -> list[Outcome]:
    """Both peers, each in its own thread, over a connected socket pair.  `break_peer(k, sock)`
    may replace worker k's end of the channel (a peer that misbehaves).  A peer still running
    after `join` seconds has no outcome (None)."""
    ends = list(socket.socketpair())
    outcomes = [None, None]
    threads = []
    for k in range(2):
        def work(k=k):
            outcomes[k] = run_host(programs[k], images[k], files[k], ends[k], timeout)
        if break_peer is not None and break_peer(k, ends[k]):
            continue
        threads.append(threading.Thread(target=work, daemon=True))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(join)
    return outcomes
