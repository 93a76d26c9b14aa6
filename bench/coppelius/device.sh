#!/usr/bin/env bash
# Coppelius on the GPU machine in one go (the device tool's command runs this from the
# repository root of a copy of this tree): the whole-update GPU tests, then the update
# bench (every variant, both configurations, one process: "one run"), each under its own
# time limit; everything lands in LOGDIR.
#   bench/coppelius/device.sh LOGDIR     (TEST_S: the tests' limit in seconds; the bench gets
#                                         what is left of TOTAL_S, 228 by default)
set -u
LOG=${1:?usage: bench/coppelius/device.sh LOGDIR}
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
left=$(( ${TOTAL_S:-228} - ($(date +%s) - START) ))
echo "update bench: ${left} s left" | tee -a "$LOG/summary.txt"
timeout "$left" python3 bench/coppelius/update_bench.py --json "$LOG/coppelius-update-bench.json" > "$LOG/bench.log" 2>&1
echo "update_bench: exit $?" | tee -a "$LOG/summary.txt"
exit 0
