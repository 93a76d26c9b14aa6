#!/usr/bin/env python3
"""What CUDA spends a launch between dependent grids that do nothing: an empty kernel
launched --launches times on one stream, captured in one CUDA graph and replayed; the
median over --repeats replays, per launch, for a few grid shapes.  The floor a CUDA graph
sets beside our host's floor (every kernel of the plan empty: bench/coppelius_host).

    python3 bench/gpu/empty_chain.py [--launches 304] [--repeats 20]
"""
import argparse
import statistics

import cupy as cp

SHAPES = (((1, 1, 1), 32), ((48, 4, 1), 128), ((132, 1, 1), 256), ((1024, 1, 1), 256))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--launches", type=int, default=304)
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    empty = cp.RawKernel(r'extern "C" __global__ void empty() {}', "empty")
    stream = cp.cuda.Stream(non_blocking=True)
    for grid, block in SHAPES:
        with stream:
            empty(grid, (block,), ())
            stream.begin_capture()
            for _ in range(args.launches):
                empty(grid, (block,), ())
            graph = stream.end_capture()
            graph.launch(stream)
            stream.synchronize()
            times = []
            for _ in range(args.repeats):
                start, stop = cp.cuda.Event(), cp.cuda.Event()
                start.record(stream)
                graph.launch(stream)
                stop.record(stream)
                stop.synchronize()
                times.append(cp.cuda.get_elapsed_time(start, stop))
        ms = statistics.median(times)
        print(f"grid {grid} x {block} threads: {args.launches} launches {ms:.3f} ms, {ms / args.launches * 1e3:.2f} us a launch")


if __name__ == "__main__":
    main()
