"""Capture the CUDA driver's tensor maps (CUtensorMap) for many parameter sets.

Why: sm_90's tensor-memory copies (UTMALDG) read a 128-byte descriptor the CUDA driver encodes
(cuTensorMapEncodeTiled) and NVIDIA does not document.  bobc places everything at build time and has
no libcuda in the loop, so it encodes these descriptors itself (bobc.nvidia.tensor_map); this tool
records what the driver writes for a designed set of variations (one parameter at a time from a
base) and for random valid and invalid parameter sets, so the encoder's fields can be read off and
tested against the driver bit for bit, refusals included.

Runs where libcuda.so.1 and a GPU are (the device machine; the encoder wants a current context):
    python3 tools/tensor_map/capture.py OUT.json [--random N] [--seed S]
"""

import argparse
import ctypes
import json
import random
import sys

# CUtensorMapDataType, CUtensorMapInterleave, CUtensorMapSwizzle, CUtensorMapL2promotion,
# CUtensorMapFloatOOBfill: the driver API's enum values (cuda.h).
DATA_TYPES = {"uint8": (0, 1), "uint16": (1, 2), "uint32": (2, 4), "int32": (3, 4),
              "uint64": (4, 8), "int64": (5, 8), "float16": (6, 2), "float32": (7, 4),
              "float64": (8, 8), "bfloat16": (9, 2), "float32_ftz": (10, 4),
              "tfloat32": (11, 4), "tfloat32_ftz": (12, 4)}
INTERLEAVES = {"none": 0, "16b": 1, "32b": 2}
SWIZZLES = {"none": 0, "32b": 1, "64b": 2, "128b": 3}
L2_PROMOTIONS = {"none": 0, "64b": 1, "128b": 2, "256b": 3}
OOB_FILLS = {"zero": 0, "nan_request_zero_fma": 1}

BASE = {"data_type": "float16", "rank": 2, "address": 0x7F1234560000,
        "dims": [768, 256], "strides": [1536], "box": [64, 128], "element_strides": [1, 1],
        "interleave": "none", "swizzle": "128b", "l2_promotion": "256b", "oob_fill": "zero"}


def encoder():
    cuda = ctypes.CDLL("libcuda.so.1")
    rc = cuda.cuInit(0)
    if rc:
        sys.exit(f"cuInit failed: {rc}")
    # The encoder wants a current context (else CUDA_ERROR_INVALID_CONTEXT, 201).
    device, context = ctypes.c_int(), ctypes.c_void_p()
    for call in (lambda: cuda.cuDeviceGet(ctypes.byref(device), 0),
                 lambda: cuda.cuDevicePrimaryCtxRetain(ctypes.byref(context), device),
                 lambda: cuda.cuCtxSetCurrent(context)):
        rc = call()
        if rc:
            sys.exit(f"driver call failed: {rc}")
    fn = cuda.cuTensorMapEncodeTiled
    fn.restype = ctypes.c_int
    fn.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32, ctypes.c_void_p,
                   ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                   ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int]
    version = ctypes.c_int()
    cuda.cuDriverGetVersion(ctypes.byref(version))
    return fn, version.value


def encode(fn, p):
    rank = p["rank"]
    out = (ctypes.c_uint8 * 128)()
    ctypes.memset(out, 0xAB, 128)
    dims = (ctypes.c_uint64 * 5)(*p["dims"])
    strides = (ctypes.c_uint64 * 5)(*p["strides"])
    box = (ctypes.c_uint32 * 5)(*p["box"])
    estrides = (ctypes.c_uint32 * 5)(*p["element_strides"])
    rc = fn(out, DATA_TYPES[p["data_type"]][0], rank, ctypes.c_void_p(p["address"]), dims,
            strides, box, estrides, INTERLEAVES[p["interleave"]], SWIZZLES[p["swizzle"]],
            L2_PROMOTIONS[p["l2_promotion"]], OOB_FILLS[p["oob_fill"]])
    return rc, bytes(out).hex() if rc == 0 else None


def designed():
    """The base, then each parameter varied alone."""
    cases = [dict(BASE)]

    def vary(**change):
        case = dict(BASE)
        case.update(change)
        cases.append(case)

    for address in (0, 0x10, 0x20, 0x40, 0x80, 0x100, 0x1000, 0x10000, 0x1_0000_0000,
                    0x7FFF_FFFF_FFF0, 0xFFFF_FFFF_FFFF_FFF0, 0x1_0000_0000_0000):
        vary(address=address)
    for d0 in (1, 2, 3, 8, 255, 256, 257, 4096, 65535, 65536, 1 << 20, (1 << 32) - 1, 1 << 32):
        vary(dims=[d0, 256])
    for d1 in (1, 2, 3, 300, 65536, (1 << 32) - 1, 1 << 32):
        vary(dims=[768, d1])
    for stride in (16, 32, 48, 1536 + 16, 1 << 20, (1 << 36), (1 << 40) - 16, 1 << 40, 8, 1537):
        vary(strides=[stride])
    for b0 in (8, 16, 24, 32, 40, 56, 64, 72, 128, 256):
        vary(box=[b0, 128], swizzle="none")
    for b1 in (1, 2, 3, 64, 127, 255, 256, 257):
        vary(box=[64, b1])
    for e0 in (1, 2, 3, 4, 7, 8, 9):
        vary(element_strides=[e0, 1])
    for e1 in (2, 5, 8):
        vary(element_strides=[1, e1])
    for name in DATA_TYPES:
        size = DATA_TYPES[name][1]
        vary(data_type=name, box=[128 // size, 64], strides=[768 * size])
    for name in SWIZZLES:
        vary(swizzle=name, box=[{"none": 64, "32b": 16, "64b": 32, "128b": 64}[name], 64])
    for name in INTERLEAVES:
        vary(interleave=name, swizzle="32b" if name == "32b" else "none", box=[64, 64])
    for name in L2_PROMOTIONS:
        vary(l2_promotion=name)
    for name in OOB_FILLS:
        vary(oob_fill=name)
    for rank in (1, 3, 4, 5):
        dims = [768, 256, 12, 7, 3][:rank]
        strides = [1536, 1536 * 256, 1536 * 256 * 12, 1536 * 256 * 12 * 7][:rank - 1]
        box = [64, 128, 2, 3, 1][:rank]
        vary(rank=rank, dims=dims, strides=strides, box=box, element_strides=[1] * rank)
    vary(rank=5, dims=[64, 5, 6, 7, 9], strides=[128, 640, 3840, 26880], box=[64, 2, 3, 4, 5],
         element_strides=[1, 2, 3, 4, 5])
    return cases


def random_cases(rng, n):
    cases = []
    for _ in range(n):
        rank = rng.randint(1, 5)
        data_type = rng.choice(list(DATA_TYPES))
        size = DATA_TYPES[data_type][1]
        swizzle = rng.choice(list(SWIZZLES))
        interleave = rng.choice(["none"] * 6 + ["16b", "32b"])
        dims = [rng.choice([rng.randint(1, 300), rng.randint(1, 1 << 20), rng.randint(1, 1 << 32)])
                for _ in range(rank)]
        strides, s = [], dims[0] * size
        for _ in range(rank - 1):
            s = ((s + 15) // 16) * 16 + 16 * rng.randint(0, 4)
            strides.append(s)
            s = s * rng.randint(1, 300)
        box_bytes = {"none": rng.choice([16, 32, 48, 64, 128, 256, 512]), "32b": 32, "64b": 64,
                     "128b": 128}[swizzle]
        box0 = max(1, box_bytes // size) if rng.random() < 0.8 else rng.randint(1, 256)
        box = [min(256, box0)] + [rng.randint(1, 256) for _ in range(rank - 1)]
        cases.append({"data_type": data_type, "rank": rank,
                      "address": rng.randrange(0, 1 << 48, 16 if rng.random() < 0.9 else 1),
                      "dims": dims, "strides": strides, "box": box,
                      "element_strides": [rng.choice([1, 1, 1, 2, 3, 8]) for _ in range(rank)],
                      "interleave": interleave, "swizzle": swizzle,
                      "l2_promotion": rng.choice(list(L2_PROMOTIONS)),
                      "oob_fill": rng.choice(list(OOB_FILLS))})
    return cases


def main():
    parser = argparse.ArgumentParser(description=(__doc__ or "\n").splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--random", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    fn, version = encoder()
    records = []
    for kind, cases in (("designed", designed()),
                        ("random", random_cases(random.Random(args.seed), args.random))):
        for case in cases:
            rc, hexbytes = encode(fn, case)
            records.append({"kind": kind, "params": case, "rc": rc, "bytes": hexbytes})
    accepted = sum(r["rc"] == 0 for r in records)
    with open(args.out, "w") as f:
        json.dump({"driver_version": version, "function": "cuTensorMapEncodeTiled",
                   "records": records}, f, indent=0)
    print(f"driver {version}: {len(records)} parameter sets, {accepted} accepted")


if __name__ == "__main__":
    main()
