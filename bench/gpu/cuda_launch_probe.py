#!/usr/bin/env python3
"""How CUDA orders two kernels of one stream on this GPU: the pushbuffer methods and QMDs libcuda
writes for a captured graph of empty kernels (and for plain stream launches), read back from this
process's own memory, for comparison with bobc's chain (docs/launch-order.md).

A probe, not a test: it scans the process's readable mappings (/proc/self/mem, so an unreadable
device mapping is skipped, never faulted on) for SEND_PCAS_A method headers, saves the words
around each, and reads each QMD they name through a small kernel that copies from a raw GPU
address.  The JSON it writes is decoded by bench/gpu/cuda_launch_decode.py with bobc's own
pushbuffer and QMD tables.

    python3 bench/gpu/cuda_launch_probe.py OUT.json [--launches 6] [--priorities] [--cluster] [--shared]
"""
import argparse
import json
import os

import sys
from pathlib import Path

import cupy as cp
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "compiler"))

from bobc.nvidia.pushbuffer import COMPUTE, SecOp  # noqa: E402

HEADER_MASK = 0xE0001FFF            # sec_op, method (any subchannel, any count)
WITH_DATA = (SecOp.INC_METHOD, SecOp.ONE_INC)
PCAS_HEADERS = {(op << 29) | (COMPUTE["SEND_PCAS_A"] >> 2) for op in (*WITH_DATA, SecOp.NON_INC_METHOD)}
PCAS_B = {COMPUTE[name] >> 2 for name in ("SEND_PCAS_B", "SEND_SIGNALING_PCAS_B", "SEND_SIGNALING_PCAS2_B")}
PEEK = r'''extern "C" __global__ void peek(unsigned long long src, unsigned int* dst, int n) {
    int i = threadIdx.x + blockIdx.x * blockDim.x;
    if (i < n) dst[i] = ((const volatile unsigned int*)src)[i];
}'''


def readable_regions():
    for line in open("/proc/self/maps"):
        parts = line.split()
        lo, hi = (int(x, 16) for x in parts[0].split("-"))
        if parts[1][0] == "r" and hi - lo <= (1 << 30):
            yield lo, hi, parts[5] if len(parts) > 5 else ""


def read_memory(lo, hi, path):
    """This process's bytes lo..hi through /proc/self/mem (an unreadable mapping is an error, not a
    fault); a device mapping it refuses, by a forked child (a fault kills only it); None if neither."""
    fd = os.open("/proc/self/mem", os.O_RDONLY)
    try:
        return os.pread(fd, hi - lo, lo)
    except OSError:
        return read_in_child(lo, hi) if "nvidia" in path else None
    finally:
        os.close(fd)


def read_in_child(lo, hi):
    import ctypes
    import tempfile
    with tempfile.NamedTemporaryFile() as sink:
        pid = os.fork()
        if pid == 0:
            try:
                with open(sink.name, "wb") as out:
                    out.write(ctypes.string_at(lo, hi - lo))
            finally:
                os._exit(0)
        _, status = os.waitpid(pid, 0)
        data = open(sink.name, "rb").read()
        return data if status == 0 and len(data) == hi - lo else None


def plausible(words, i):
    """A launch's SEND_PCAS_A: an INC / ONE_INC header whose next method is SEND_(SIGNALING_)PCAS(2)_B."""
    header = words[i]
    if (header >> 29) not in WITH_DATA or i + 2 >= len(words):
        return False
    count = (header >> 16) & 0x1FFF
    if (header >> 29) == SecOp.INC_METHOD and count >= 2:
        return True
    return (words[i + 2] & 0xFFF) in PCAS_B


def scan(tag):
    hits = []
    for lo, hi, path in readable_regions():
        if path.startswith("/usr") or path.startswith("/lib") or ".so" in path or path.endswith(".py"):
            continue
        raw = read_memory(lo, hi, path)
        if raw is None:
            continue
        words = np.frombuffer(raw[:len(raw) // 4 * 4], dtype=np.uint32)
        where = np.nonzero(np.isin(words & HEADER_MASK, list(PCAS_HEADERS)))[0]
        for i in where[:4000]:
            if not plausible(words, i):
                continue
            a, b = max(0, i - 96), min(len(words), i + 32)
            hits.append(dict(tag=tag, region=f"{lo:#x}-{hi:#x} {path}", address=lo + 4 * int(i),
                             index=int(i - a), words=[int(w) for w in words[a:b]]))
    return hits


def peek(kernel, address, count=64):
    out = cp.zeros(count, dtype=cp.uint32)
    kernel((1,), (128,), (np.uint64(address), out, np.int32(count)))
    cp.cuda.Device().synchronize()
    return [int(w) for w in out.get()]


def read_back(hits, peeker, follow_dependents=False):
    """(pushbuffer dump, {QMD address: its words}) for the SEND_PCAS_A headers `hits` found in the
    driver's mapping of the pushbuffer (not the heap's copies); with `follow_dependents`, every QMD
    a read QMD names as DEPENDENT_QMD0 too (V04_00: bits 448..479), as a graph chains its nodes."""
    pushed = [h for h in hits if "/dev/nvidia" in h["region"]]
    dump = {}
    if pushed:
        region_lo, region_hi = (int(x, 16) for x in pushed[0]["region"].split()[0].split("-"))
        lo = max(min(h["address"] for h in pushed) - 0x2000, region_lo)
        hi = min(max(h["address"] for h in pushed) + 0x2000, region_hi)
        raw = read_memory(lo, hi, pushed[0]["region"])
        if raw is not None:
            dump = dict(base=lo, words=[int(w) for w in np.frombuffer(raw, dtype=np.uint32)])
    qmds = {}
    for h in pushed:
        address = h["words"][h["index"] + 1] << 8
        if address and address not in qmds:
            try:
                qmds[address] = peek(peeker, address, 96)
            except Exception as error:          # an address the context cannot read faults it
                qmds[address] = str(error)
                return dump, qmds
    pending = [words for words in qmds.values() if isinstance(words, list)] if follow_dependents else []
    while pending:
        pointer = pending.pop()[448 // 32] << 8
        if pointer and pointer not in qmds:
            try:
                qmds[pointer] = peek(peeker, pointer, 96)
                pending.append(qmds[pointer])
            except Exception as error:
                qmds[pointer] = str(error)
    return dump, qmds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out")
    parser.add_argument("--launches", type=int, default=6)
    parser.add_argument("--priorities", action="store_true",
                        help="also launch on the highest- and the lowest-priority stream (grids 301.., 401..)")
    parser.add_argument("--cluster", action="store_true",
                        help="also launch a kernel compiled for clusters of 4 blocks (grids 501..) beside a plain one (601..)")
    parser.add_argument("--shared", action="store_true",
                        help="also launch kernels with 1, 16 and 48 KiB of static shared memory (grids 701.., 711.., 721..) "
                             "and 100 KiB of dynamic (731..): the QMD's shared-memory fields CUDA writes for each")
    args = parser.parse_args()
    empty = cp.RawKernel(r'extern "C" __global__ void empty(int tag) {}', "empty")
    stream = cp.cuda.Stream(non_blocking=True)
    before = {h["address"] for h in scan("before")}
    # graph: grid widths 101, 102, .. name each launch's QMD
    with stream:
        empty((1,), (32,), (np.int32(0),))
        stream.synchronize()
        stream.begin_capture()
        for i in range(args.launches):
            empty((101 + i,), (64,), (np.int32(i),))
        graph = stream.end_capture()
        for _ in range(3):
            graph.launch(stream)
        stream.synchronize()
    after_graph = [h for h in scan("graph") if h["address"] not in before]
    seen = before | {h["address"] for h in after_graph}
    with stream:
        for i in range(args.launches):
            empty((201 + i,), (64,), (np.int32(i),))
        stream.synchronize()
    after_stream = [h for h in scan("stream") if h["address"] not in seen]
    hits = after_graph + after_stream
    if args.priorities:
        # the same launches on the highest- and the lowest-priority stream: grids 301.. and 401..
        low, high = 0, -5          # CUDA's priorities on sm_90: 0 (lowest) .. -5 (highest)
        seen |= {h["address"] for h in after_stream}
        for tag, priority, first in (("high", high, 301), ("low", low, 401)):
            prioritized = cp.cuda.Stream(non_blocking=True, priority=priority)
            with prioritized:
                for i in range(args.launches):
                    empty((first + i,), (64,), (np.int32(i),))
                prioritized.synchronize()
            found = [h for h in scan(tag) if h["address"] not in seen]
            seen |= {h["address"] for h in found}
            hits += found
    if args.cluster:
        # a kernel compiled with a cluster shape (__cluster_dims__(1, 1, 4)): grids 501.. (z = 4) on the
        # default stream, beside the plain kernel's grids 601.. (z = 4): the QMD fields a cluster sets
        clustered = cp.RawKernel(r'extern "C" __global__ void __cluster_dims__(1, 1, 4) clustered(int tag) {}',
                                 "clustered")
        seen |= {h["address"] for h in hits}
        with stream:
            for i in range(args.launches):
                clustered((501 + i, 1, 4), (64,), (np.int32(i),))
                empty((601 + i, 1, 4), (64,), (np.int32(i),))
            stream.synchronize()
        hits += [h for h in scan("cluster") if h["address"] not in seen]
    if args.shared:
        # static shared memory of 1, 16 and 48 KiB (grids 701.., 711.., 721..), dynamic 100 KiB (731..): what
        # CUDA puts in SHARED_MEMORY_SIZE and the carve-out fields for each (docs/ampere-path-comparison.md)
        seen |= {h["address"] for h in hits}
        body = "s[threadIdx.x] = tag; __syncthreads(); if (tag < 0) out[0] = s[(threadIdx.x + 1) % 64];"
        kernels = [(cp.RawKernel(f'extern "C" __global__ void shared{n}(int* out, int tag) '
                                 f'{{ __shared__ int s[{n * 256}]; {body} }}', f"shared{n}"), 701 + 10 * k, 0)
                   for k, n in enumerate((1, 16, 48))]
        dynamic = cp.RawKernel(f'extern "C" __global__ void dynamic_shared(int* out, int tag) '
                               f'{{ extern __shared__ int s[]; {body} }}', "dynamic_shared")
        dynamic.max_dynamic_shared_size_bytes = 100 * 1024
        kernels.append((dynamic, 731, 100 * 1024))
        out = cp.zeros(1, cp.int32)
        with stream:
            for kernel, first, dynamic_bytes in kernels:
                for i in range(min(args.launches, 3)):
                    kernel((first + i,), (64,), (out, np.int32(i)), shared_mem=dynamic_bytes)
            stream.synchronize()
        hits += [h for h in scan("shared") if h["address"] not in seen]
    dump, qmds = read_back(hits, cp.RawKernel(PEEK, "peek"))
    json.dump(dict(hits=hits, pushbuffer=dump, qmds={f"{a:#x}": v for a, v in qmds.items()},
                   device=cp.cuda.runtime.getDeviceProperties(0)["name"].decode()), open(args.out, "w"))
    print(f"{len(after_graph)} new SEND_PCAS_A headers after the graph, {len(after_stream)} after the stream "
          f"launches, {len(qmds)} QMDs read")


if __name__ == "__main__":
    main()
