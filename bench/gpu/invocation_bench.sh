#!/usr/bin/env bash
# Issue 21's measurement on a GPU machine, from the repository root:
#   bench/gpu/invocation_bench.sh [OUT]      (default OUT: $OUT/invocation, else /tmp/invocation)
# 10 fresh-process `bob-host train` invocations per bring-up (RM, the default, and UVM),
# with the GPU idle and with a CUDA context held by another process, outputs compared
# byte for byte, one trace of each, and the PyTorch script (PYTORCH_REPEATS, default 3).
# Needs .device/bob-host-sm_90 (bobc build examples/bob/Bob/Build/NativeHost.bob
# --target sm_90 -o .device/bob-host-sm_90) and .device/bob-reference (the PyTorch case,
# ../shared/data/bob-reference), or BOB_HOST / BOB_REFERENCE_DATA.
set -u
OUT=${1:-${OUT:-/tmp}/invocation}
HOST=${BOB_HOST:-.device/bob-host-sm_90}
REF=${BOB_REFERENCE_DATA:-.device/bob-reference}
exec "${PYTHON:-python3}" bench/gpu/invocation_bench.py --host "$HOST" --reference "$REF" --out "$OUT" \
    --repeats "${REPEATS:-10}" --pytorch-repeats "${PYTORCH_REPEATS:-3}"
