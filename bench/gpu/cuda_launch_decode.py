#!/usr/bin/env python3
"""Decode what bench/gpu/cuda_launch_probe.py read from libcuda's memory with bobc's own tables:
the pushbuffer around the launches (method by method; zero words, which libcuda leaves between
segments, skipped; methods outside bobc's compute table print as METHOD_0x....) and the nonzero
fields of each QMD a SEND_PCAS_A names (V04_00 on sm_90, V03_00 on sm_86).

    python3 bench/gpu/cuda_launch_decode.py PROBE.json [--layout V04_00] [--data 6]
"""
import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "compiler"))

from bobc.nvidia import pushbuffer, qmd  # noqa: E402
from bobc.nvidia.pushbuffer import SecOp  # noqa: E402

WITH_DATA = {SecOp.INC_METHOD: "INC", SecOp.NON_INC_METHOD: "NON_INC", SecOp.ONE_INC: "ONE_INC"}


def walk(base, words, shown_data):
    """(address, text) for each method header in `words` (one stream from `base`)."""
    bindings = {s: "compute" for s in range(8)}
    i = 0
    while i < len(words):
        head = words[i]
        op = head >> 29
        if head == 0 or (op not in WITH_DATA and op != SecOp.IMMD_DATA_METHOD):
            i += 1
            continue
        count = (head >> 16) & 0x1FFF
        subchannel, method = (head >> 13) & 7, (head & 0xFFF) << 2
        name = pushbuffer.method_name(method, subchannel, bindings)
        if op == SecOp.IMMD_DATA_METHOD:
            yield base + 4 * i, f"sub{subchannel} IMMD {name} = {count:#x}"
            i += 1
            continue
        data = words[i + 1:i + 1 + count]
        text = " ".join(f"{d:08x}" for d in data[:shown_data]) + (" ..." if count > shown_data else "")
        yield base + 4 * i, f"sub{subchannel} {WITH_DATA[op]} {name} x{count}: {text}"
        i += 1 + count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("probe")
    parser.add_argument("--layout", default="V04_00")
    parser.add_argument("--data", type=int, default=6, help="data words shown a method")
    args = parser.parse_args()
    probe = json.load(open(args.probe))
    print(f"device: {probe['device']}")
    dump = probe.get("pushbuffer") or {}
    if dump:
        print(f"\n== the pushbuffer from {dump['base']:#x} ({len(dump['words'])} words)")
        for address, text in walk(dump["base"], dump["words"], args.data):
            print(f"{address:#x} {text}")
    for address, words in probe["qmds"].items():
        print(f"\n== QMD at {address}")
        if isinstance(words, str):
            print("  unreadable:", words)
            continue
        raw = b"".join(w.to_bytes(4, "little") for w in words)
        for name, value in qmd.decode(args.layout, raw):
            if value:
                print(f"  {name} = {value:#x}")


if __name__ == "__main__":
    main()
