#!/usr/bin/env bash
# Bob's GPU benchmarks in one go (issue 10), on a machine with an NVIDIA GPU,
# from the repository root:
#
#   bench/gpu/run_device.sh [OUT]        (default OUT: $OUT, else bench/results)
#
# Needs, in $BOB_BENCH_DIR (default .device/bench): bob-host and bob-floor-host,
# built on a machine with bobc installed:
#   bobc build examples/bob/Bob/Build/NativeHost.bob --target sm_90 -o .device/bench/bob-host
#   python bench/gpu/build_floor_host.py --target sm_90 -o .device/bench/bob-floor-host
#   cp -r ../shared/data/bob-reference .device/bench/
# (built here when missing and bobc can build); optionally experiments such as
#   python bench/gpu/build_memory_variant.py --system arena,program,qmd,pushbuffer \
#       -o .device/bench/bob-host-variant-all-system
# (bob-host-variant-* in the folder are run last, as experiments), and kernel sources to
# time against Bob's own in .device/bench/kernels/<kernel>@<label>.sass
# (bench/gpu/kernel_times.py, when cupy is present); python3 with torch (CUDA) and
# numpy; cupy and matplotlib are used when present.  Writes to OUT:
# machine.txt, bench.log, bob-h200.json, bob-h200-samples.csv, bob-h200.png.
set -u
OUT=${1:-${OUT:-bench/results}}
DIR=${BOB_BENCH_DIR:-.device/bench}
REPEATS=${REPEATS:-10}
PY=${PYTHON:-python3}
mkdir -p "$OUT"

if [ ! -x "$DIR/bob-host" ] || [ ! -x "$DIR/bob-floor-host" ]; then
    mkdir -p "$DIR"
    bobc build examples/bob/Bob/Build/NativeHost.bob --target sm_90 -o "$DIR/bob-host" &&
        "$PY" bench/gpu/build_floor_host.py --target sm_90 -o "$DIR/bob-floor-host" ||
        { echo "no hosts in $DIR and they cannot be built here" >&2; exit 2; }
fi
if [ ! -f "$DIR/bob-reference/case.npz" ]; then
    cp -r ../shared/data/bob-reference "$DIR/" 2>/dev/null ||
        { echo "no $DIR/bob-reference/case.npz" >&2; exit 2; }
fi

{
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "command: bench/gpu/run_device.sh $*  (REPEATS=$REPEATS)"
    nvidia-smi --query-gpu=name,driver_version,memory.total,pcie.link.gen.current,pcie.link.width.current --format=csv
    nvidia-smi
    uname -a
    nproc
    "$PY" -c "import torch, numpy; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'numpy', numpy.__version__)"
    "$PY" -c "import cupy; print('cupy', cupy.__version__)" 2>&1 | tail -1
    "$PY" -c "import matplotlib; print('matplotlib', matplotlib.__version__)" 2>&1 | tail -1
} > "$OUT/machine.txt" 2>&1

# experiments (bench/gpu/build_memory_variant.py), run last, when built
VARIANTS=()
for v in "$DIR"/bob-host-variant-*; do
    [ -x "$v" ] && VARIANTS+=(--variant "$(basename "$v")=$v")
done

timeout "${BENCH_TIMEOUT:-270}" "$PY" bench/gpu/bob_bench.py --host "$DIR/bob-host" \
    --floor-host "$DIR/bob-floor-host" --reference "$DIR/bob-reference" \
    --repeats "$REPEATS" --out "$OUT" "${VARIANTS[@]}" 2>&1 | tee "$OUT/bench.log"
status=${PIPESTATUS[0]}

if "$PY" -c "import cupy" 2>/dev/null; then
    "$PY" bench/gpu/kernel_times.py --extra "$DIR/kernels" --out "$OUT/kernels.json" 2>&1 | tee "$OUT/kernels.log"
fi

"$PY" bench/gpu/plot_bob.py "$OUT/bob-h200.json" "$OUT/bob-h200.png" >> "$OUT/bench.log" 2>&1 ||
    echo "plot not made here (no matplotlib?): run bench/gpu/plot_bob.py on the JSON elsewhere" |
    tee -a "$OUT/bench.log"
exit "$status"
