#!/usr/bin/env python3
"""What CUDA's programmatic dependent launch (PDL) writes and saves on this GPU.

A probe, not a test.  Kernels that open with `griddepcontrol.wait` (SASS ACQBULK) and say
`griddepcontrol.launch_dependents` (PREEXIT) are launched through cuLaunchKernelEx with
CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION, captured in a CUDA graph:

- timing: --launches such launches replayed as one graph, with and without the attribute, for
  empty kernels and for kernels whose every block spins --spin-ns on the global timer (a grid
  of real length), the median per launch over --repeats replays;
- QMDs: a short chain of such launches, whose pushbuffer and QMDs are read back from this
  process's memory as bench/gpu/cuda_launch_probe.py does (decode the JSON with
  bench/gpu/cuda_launch_decode.py): which QMD fields libcuda sets for a programmatic edge.

    python3 bench/gpu/pdl_probe.py OUT.json [--launches 244] [--repeats 20]
"""
import argparse
import ctypes
import json
import statistics
import sys
from pathlib import Path

import cupy as cp

sys.path.insert(0, str(Path(__file__).resolve().parent))

import cuda_launch_probe as probe  # noqa: E402

SOURCE = r'''
__device__ void spin(long long spin_ns) {
    if (spin_ns > 0) {
        unsigned long long t0, t;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
        do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < (unsigned long long)spin_ns);
    }
}
extern "C" __global__ void chained(int tag, long long spin_ns) {         // dependents launch at the end
    asm volatile("griddepcontrol.wait;" ::: "memory");
    spin(spin_ns);
    asm volatile("griddepcontrol.launch_dependents;");
}
extern "C" __global__ void chained_early(int tag, long long spin_ns) {   // as soon as every block began
    asm volatile("griddepcontrol.wait;" ::: "memory");
    asm volatile("griddepcontrol.launch_dependents;");
    spin(spin_ns);
}
'''
PROGRAMMATIC_STREAM_SERIALIZATION = 6      # CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION (cuda.h)


class LaunchAttribute(ctypes.Structure):
    _fields_ = [("id", ctypes.c_int), ("pad", ctypes.c_char * 4), ("value", ctypes.c_char * 64)]


class LaunchConfig(ctypes.Structure):
    _fields_ = [("grid", ctypes.c_uint * 3), ("block", ctypes.c_uint * 3), ("shared", ctypes.c_uint),
                ("stream", ctypes.c_void_p), ("attrs", ctypes.POINTER(LaunchAttribute)),
                ("count", ctypes.c_uint)]


CUDA = ctypes.CDLL("libcuda.so.1")
CUDA.cuLaunchKernelEx.argtypes = [ctypes.POINTER(LaunchConfig), ctypes.c_void_p,
                                  ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_void_p)]


def launch(function, stream, grid, block, tag, spin_ns, programmatic):
    attribute = LaunchAttribute(id=PROGRAMMATIC_STREAM_SERIALIZATION)
    ctypes.memmove(ctypes.addressof(attribute) + LaunchAttribute.value.offset, ctypes.byref(ctypes.c_int(1)), 4)
    config = LaunchConfig((ctypes.c_uint * 3)(*grid), (ctypes.c_uint * 3)(block, 1, 1), 0, stream.ptr,
                          ctypes.pointer(attribute) if programmatic else None, 1 if programmatic else 0)
    args = (ctypes.c_int(tag), ctypes.c_longlong(spin_ns))
    params = (ctypes.c_void_p * 2)(*(ctypes.cast(ctypes.byref(a), ctypes.c_void_p) for a in args))
    status = CUDA.cuLaunchKernelEx(ctypes.byref(config), ctypes.c_void_p(function), params, None)
    if status:
        raise RuntimeError(f"cuLaunchKernelEx: CUresult {status}")


def graph_of(function, stream, launches, grid, block, spin_ns, programmatic):
    with stream:
        launch(function, stream, grid, block, 0, 0, False)
        stream.synchronize()
        stream.begin_capture()
        for i in range(launches):
            launch(function, stream, grid, block, i, spin_ns, programmatic and i > 0)
        graph = stream.end_capture()
        graph.launch(stream)
        stream.synchronize()
    return graph


def replay_ms(graph, stream, repeats):
    times = []
    for _ in range(repeats):
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        with stream:
            start.record(stream)
            graph.launch(stream)
            stop.record(stream)
        stop.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, stop))
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out")
    parser.add_argument("--launches", type=int, default=244)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--spin-ns", type=int, default=3000)
    parser.add_argument("--chain", type=int, default=300, help="launches of the QMD read-back graph")
    args = parser.parse_args()
    module = cp.RawModule(code=SOURCE, options=("-std=c++17",))
    function = module.get_function("chained").kernel.ptr
    early = module.get_function("chained_early").kernel.ptr
    stream = cp.cuda.Stream(non_blocking=True)
    timings = []
    for grid, block in (((1, 1, 1), 32), ((132, 1, 1), 128), ((96, 1, 1), 512), ((528, 1, 1), 128)):
        for spin in (0, args.spin_ns):
            row = dict(grid=grid, block=block, spin_ns=spin)
            for name, kernel, programmatic in (("plain", function, False), ("pdl", function, True),
                                               ("pdl_early", early, True)):
                graph = graph_of(kernel, stream, args.launches, grid, block, spin, programmatic)
                ms = replay_ms(graph, stream, args.repeats)
                row[name] = ms / args.launches * 1e3
            timings.append(row)
            print(f"grid {grid} x {block}, spin {spin} ns: {row['plain']:.2f} us a launch plain, "
                  f"{row['pdl']:.2f} with PDL, {row['pdl_early']:.2f} with PDL and launch_dependents first",
                  flush=True)
    before = {h["address"] for h in probe.scan("before")}
    with stream:
        stream.begin_capture()
        for i in range(args.chain):
            launch(function, stream, (1001 + i, 1, 1), 64, i, 0, i > 0)
        graph = stream.end_capture()
        for _ in range(3):
            graph.launch(stream)
        stream.synchronize()
    hits = [h for h in probe.scan("pdl-graph") if h["address"] not in before]
    seen = before | {h["address"] for h in hits}
    with stream:
        for i in range(4):
            launch(function, stream, (401 + i, 1, 1), 64, i, 0, i > 0)
        stream.synchronize()
    hits += [h for h in probe.scan("pdl-stream") if h["address"] not in seen]
    dump, qmds = probe.read_back(hits, cp.RawKernel(probe.PEEK, "peek"), follow_dependents=True)
    json.dump(dict(timings=timings, hits=hits, pushbuffer=dump, qmds={f"{a:#x}": v for a, v in qmds.items()},
                   device=cp.cuda.runtime.getDeviceProperties(0)["name"].decode()), open(args.out, "w"))
    print(f"{len(hits)} new SEND_PCAS_A headers, {len(qmds)} QMDs read")


if __name__ == "__main__":
    main()
