#!/usr/bin/env bash
# Coppelius on the GPU machine in one go (the device tool's command runs this from the
# repository root of a copy of this tree): the whole-update GPU tests, then the update
# bench (ours, eager, AMP, GEMMs), then the torch.compile variants, each step under its
# own time limit; everything lands in LOGDIR (default $OUT).
#   bench/coppelius/device.sh [LOGDIR]     (TEST_S, BENCH_S, COMPILE_S: the limits in seconds;
# the compile variants get what is left of TOTAL_S, 228 by default)
set -u
LOG=${1:-$OUT}
mkdir -p "$LOG"
START=$(date +%s)
export PYTHONPATH=$PWD/compiler:$PWD/examples/coppelius${PYTHONPATH:+:$PYTHONPATH}
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv; python3 --version
  python3 -c "import torch, cupy, numpy; print('torch', torch.__version__, 'cupy', cupy.__version__, 'numpy', numpy.__version__)"; } \
  > "$LOG/env.txt" 2>&1
export COPPELIUS_CURVES=$LOG/coppelius-update-curves-h200.png
timeout "${TEST_S:-100}" python3 -m pytest -m gpu tests/gpu/test_coppelius_update.py -v -s -p no:cacheprovider \
  > "$LOG/pytest_coppelius_update.log" 2>&1
echo "pytest test_coppelius_update: exit $?" | tee -a "$LOG/summary.txt"
timeout "${BENCH_S:-60}" python3 bench/coppelius/update_bench.py --json "$LOG/coppelius-update-bench.json" \
  --variants ours,ours-graph,eager,amp,gemm > "$LOG/bench.log" 2>&1
echo "update_bench (ours, eager, amp, gemm): exit $?" | tee -a "$LOG/summary.txt"
left=$(( ${TOTAL_S:-228} - ($(date +%s) - START) ))
echo "compile variants: ${left} s left" | tee -a "$LOG/summary.txt"
timeout "${COMPILE_S:-$left}" python3 bench/coppelius/update_bench.py --json "$LOG/coppelius-update-bench-compile.json" \
  --variants compile,graphs > "$LOG/bench-compile.log" 2>&1
echo "update_bench (compile, graphs): exit $?" | tee -a "$LOG/summary.txt"
exit 0
