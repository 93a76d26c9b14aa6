#!/usr/bin/env bash
# Where a `bob-host train` invocation's time goes: runs the host once with BOBC_GPU_TRACE=1
# on an otherwise idle GPU and once while another process holds a CUDA context, and keeps
# both traces (each bring-up step, the host's phases and the teardown, with milliseconds
# since the GPU was opened) under $OUT.  Needs the host in .device/bob-host-trace and the
# inputs in .device/inputs (bench/gpu/bob_bench.py's make_inputs), cupy for the holder.
#   OUT=/tmp/trace bash bench/gpu/trace_invocation.sh
set -u
OUT=${OUT:-/tmp/trace}; mkdir -p "$OUT"
H=.device/bob-host-trace; A="train --input .device/inputs/record.bin --checkpoint .device/inputs/start.ckpt --checkpoint-out /tmp/c --predictions /tmp/p --result /tmp/r"
$H $A >/dev/null 2>&1
s=$(date +%s%N); BOBC_GPU_TRACE=1 $H $A 2> $OUT/trace-idle.txt; e=$(date +%s%N); echo "idle wall $(( (e-s)/1000000 )) ms"
python3 -c "import cupy, time; cupy.zeros(1).sum(); print('held', flush=True); time.sleep(60)" > /tmp/held.txt 2>&1 &
HP=$!; for i in $(seq 1 50); do grep -q held /tmp/held.txt && break; sleep 0.2; done
s=$(date +%s%N); BOBC_GPU_TRACE=1 $H $A 2> $OUT/trace-held.txt; e=$(date +%s%N); echo "held wall $(( (e-s)/1000000 )) ms"
kill $HP
grep -v "mapped" $OUT/trace-idle.txt | head -60
echo ----; grep -v mapped $OUT/trace-held.txt | head -60
