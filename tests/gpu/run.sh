#!/usr/bin/env bash
# Run every GPU test on the device machine and write the logs into LOGDIR
# ($OUT there):
#   tests/gpu/run.sh LOGDIR [TARBALL]
# With TARBALL, LOGDIR is also packed into that one .tar.gz at the end (the device
# tool brings back only a few files of $OUT: run.sh /tmp/gpu-logs $OUT/gpu-logs.tar.gz).
# env.txt       machine, driver, compiler
# build.log     make -C runtime_c all static
# gpu_smoke.log the shim smoke program (dynamic build): bring-up, semaphore
#               release, round trips, SET_OBJECT compute, one V04_00 QMD launch
# gpu_smoke_static.log the same program linked with gcc -static (no launch)
# launch_variants.log probes: channel-setup (prologue) variants
# gpu_smoke_uvm.log the smoke program through the UVM bring-up (the default is RM)
# pytest_gpu.log pytest -m gpu over tests/gpu (skipped when pytest is missing)
# pytest_sm90_async.log tests/gpu/test_sm90_async_kernels.py, one test a process (60 s each)
# pytest_sm90_gemm.log tests/gpu/test_sm90_gemm.py (sm_90's TMA + HGMMA products; -s: bit-for-bit lines)
# pytest_coppelius.log tests/gpu/test_coppelius_update.py (its own run, -s: the agreement numbers)
# coppelius-curves.png (.csv) Coppelius's 200-update loss curves: ours, PyTorch, PyTorch with binary64 sums
# coppelius_update_bench.log (.json) one update timed, ours (seed 004's host too, with .device/coppelius-host) against PyTorch (BENCH_COPPELIUS=1)
# pytest_coppelius_host.log tests/gpu/test_coppelius_host.py (seed 004's host)
# coppelius_variants.log the variant hosts against the plain one (those prepare.sh built:
#               .device/coppelius-host-NAME, NAME clusters, fused, tree, fusedtree)
# pytest_gpu_fault.log tests/gpu/test_gpu_fault_s40.py, the LAST step: plans that fault the GPU on
#               purpose (Xid 31, Xid 13); the hosts' one-line messages (-s prints them)
# dmesg.txt     kernel messages about the GPU (Xid lines), when readable
# nan_bits.log  tests/gpu/test_sim_probes_gpu.py's record: the bits PTX leaves open (NaNs of RED/ATOM .ADD.F32,
#               .ADD.F16x2 / .BF16x2 halves, F2F.F64.F16, DFMA, HMMA), the GPU's words beside the simulator's; and
#               tests/gpu/test_gemm_specials_gpu_s41.py's: NaN / inf / -0 / binary16 subnormals through
#               the product kernels (HMMA, and sm_90's HGMMA kernel)
# pytest_gemm_specials.log tests/gpu/test_gemm_specials_gpu_s41.py (a run of its own: HGMMA may hang)
# pytest_shared_reserve.log, shared_reserve.log tests/gpu/test_shared_reserve_gpu_s41.py (sm_90 stores below shared 0x400)
# summary.txt   one line per step with its exit status (a failed pytest step's FAILED / ERROR tests indented
#               beneath it), and last how many steps failed; run.sh exits nonzero when any did
set -u
cd "$(dirname "$0")/../.."
# prepare.sh --pack: .device is one archive until unpacked here
if [ -f .device/pack.tar.xz ]; then tar -xJf .device/pack.tar.xz && rm -f .device/pack.tar.xz; fi
LOG=${1:-gpu-logs}
mkdir -p "$LOG"
: > "$LOG/summary.txt"
note() { echo "$*" | tee -a "$LOG/summary.txt"; }
# step NAME RC [PYTEST_LOG]: the step's line "NAME: exit RC" -- with what a nonzero RC means (124: its timeout ran
# out; 137: killed after it; 130: interrupted; pytest's 5: no test collected) and a pytest log's FAILED / ERROR lines
# beneath it -- counted for run.sh's last line and its exit status (tests/test_gpu_run_summary_s46.py)
STEPS=0
FAILED=0
FAILED_STEPS=""
step() {
  local name=$1 rc=$2 log=${3:-} why=""
  STEPS=$((STEPS + 1))
  case "$rc" in
    0) ;;
    124) why=" (timed out)" ;;
    137) why=" (killed after its timeout)" ;;
    130) why=" (interrupted)" ;;
    5) [ -n "$log" ] && why=" (no test collected)" ;;
  esac
  note "$name: exit $rc$why"
  if [ "$rc" != 0 ]; then
    FAILED=$((FAILED + 1))
    FAILED_STEPS="$FAILED_STEPS, $name"
    if [ -n "$log" ] && [ -f "$log" ]; then
      grep -E "^(FAILED|ERROR) " "$log" | head -40 | sed 's/^/    /' | tee -a "$LOG/summary.txt"
    fi
  fi
}

{
  date -u; uname -a; echo
  nvidia-smi 2>&1 | head -20 || true
  cat /proc/driver/nvidia/version 2>/dev/null || true
  ls -l /dev/nvidia* 2>&1
  gcc --version | head -1
  python3 --version 2>&1
} > "$LOG/env.txt" 2>&1

make -C runtime_c clean > /dev/null 2>&1
make -C runtime_c all static > "$LOG/build.log" 2>&1
rc=$?; step build $rc
if [ $rc -ne 0 ]; then note "FAIL: build"; exit 1; fi

make -C runtime_c test >> "$LOG/build.log" 2>&1
step "cpu tests" $?

BUNDLE=runtime_c/tests/data/launch_sm90.bin
timeout 120 runtime_c/build/gpu_smoke --bundle "$BUNDLE" > "$LOG/gpu_smoke.log" 2>&1
smoke=$?; step gpu_smoke $smoke

timeout 60 runtime_c/build/gpu_smoke.static --repeat 20 > "$LOG/gpu_smoke_static.log" 2>&1
step gpu_smoke.static $?

# the other bring-up: UVM (what a plan with a UVM external range uses)
timeout 120 runtime_c/build/gpu_smoke --mapping uvm --bundle "$BUNDLE" > "$LOG/gpu_smoke_uvm.log" 2>&1
step "gpu_smoke --mapping uvm" $?

# Probes (PROBES=1), each in a fresh process since a channel error ends the
# channel: prologue variants for the compute channel setup, and the RM DMA
# mapping.  They fault the GPU on purpose; run them only to study bring-up.
if [ "${PROBES:-0}" = 1 ]; then
  : > "$LOG/launch_variants.log"
  for v in encoder nowindow localonly windowbw; do
    echo "=== prologue variant $v" >> "$LOG/launch_variants.log"
    timeout 60 runtime_c/build/gpu_smoke --quiet --repeat 0 --bundle "runtime_c/tests/data/launch_sm90_$v.bin" \
      >> "$LOG/launch_variants.log" 2>&1
    r=$?; step "prologue variant $v" $r
    (dmesg 2>/dev/null | grep -i xid | tail -1) >> "$LOG/launch_variants.log" 2>&1
  done

fi

# A host built here by `bobc build --target sm_90` (the device machine has no
# lark/lief): carried in .device/ with the PyTorch reference case.
[ -x .device/bob-host-sm_90 ] && export BOB_HOST=$PWD/.device/bob-host-sm_90
[ -d .device/bob-reference ] && export BOB_REFERENCE_DATA=$PWD/.device/bob-reference
# the synthetic platform hosts (tests/gpu/build_platform_hosts.py .device/platform-hosts)
[ -d .device/platform-hosts ] && export PLATFORM_HOSTS=$PWD/.device/platform-hosts
# the native device program's template (tests/gpu/build_native_program.py .device/native-program)
[ -f .device/native-program/program-sm_90.bin ] && export NATIVE_PROGRAM_TEMPLATE=$PWD/.device/native-program/program-sm_90.bin
# the synthetic request programs (tests/gpu/build_native_request.py .device/native-request)
[ -d .device/native-request ] && export NATIVE_REQUEST_PROGRAMS=$PWD/.device/native-request
[ -d .device/pr-hosts ] && export PR_HOSTS=$PWD/.device/pr-hosts   # seed 003 hosts built for this GPU (tests/gpu/build_partitioned_regression_hosts.py)
[ -d .device/coppelius-host ] && export COPPELIUS_HOSTS=$PWD/.device/coppelius-host   # seed 004's hosts (tests/gpu/build_coppelius_host.py)
[ -d .device/math-forms ] && export MATH_FORMS=$PWD/.device/math-forms   # tests/gpu/test_math_forms_gpu.py (prepare.sh)
[ -d .device/sim-probes ] && export SIM_PROBES=$PWD/.device/sim-probes   # tests/gpu/test_sim_probes_gpu.py (prepare.sh)
export NAN_BITS_LOG=$LOG/nan_bits.log   # the NaN / -0 / subnormal bits PTX leaves open, as the GPU stores them (test_sim_probes_gpu.py)
[ -d .device/gpu-fault ] && export GPU_FAULT_HOSTS=$PWD/.device/gpu-fault   # tests/gpu/test_gpu_fault_s40.py (prepare.sh)
export PYTHONPATH=$PWD/compiler${PYTHONPATH:+:$PYTHONPATH}
# Coppelius against PyTorch (tests/gpu/test_coppelius_update.py): its loss curves, NumPy beside PyTorch
export COPPELIUS_CURVES=$LOG/coppelius-curves.png
if python3 -c "import pytest" > /dev/null 2>&1; then
  timeout 400 python3 -m pytest -m gpu tests/gpu -v -p no:cacheprovider \
    --ignore=tests/gpu/test_coppelius_update.py --ignore=tests/gpu/test_coppelius_kernels.py \
    --ignore=tests/gpu/test_coppelius_host.py --ignore=tests/gpu/test_sm90_async_kernels.py \
    --ignore=tests/gpu/test_sm90_gemm.py --ignore=tests/gpu/test_gpu_fault_s40.py \
    --ignore=tests/gpu/test_gemm_specials_gpu_s41.py --ignore=tests/gpu/test_shared_reserve_gpu_s41.py \
    > "$LOG/pytest_gpu.log" 2>&1
  step "pytest -m gpu tests/gpu" $? "$LOG/pytest_gpu.log"
  # our assembly of sm_90's TMA / mbarrier / warpgroup-MMA kernels beside ptxas's: a run of its own,
  # each test in its own process with a short timeout (a wrong mbarrier or copy hangs rather than fails)
  for t in test_tma_tile_copy_ours_equals_ptxas "test_hgmma_product_ours_equals_ptxas[256-512-768]" \
           "test_hgmma_product_ours_equals_ptxas[128-256-192]"; do
    timeout -s INT -k 10 60 python3 -m pytest -m gpu "tests/gpu/test_sm90_async_kernels.py::$t" -v \
      -p no:cacheprovider >> "$LOG/pytest_sm90_async.log" 2>&1
    step "pytest tests/gpu/test_sm90_async_kernels.py::$t" $? "$LOG/pytest_sm90_async.log"
  done
  # sm_90's own product kernels (TMA + warpgroup MMA) against float64 and the HMMA kernels
  timeout -s INT -k 10 120 python3 -m pytest -m gpu tests/gpu/test_sm90_gemm.py -v -s -p no:cacheprovider \
    > "$LOG/pytest_sm90_gemm.log" 2>&1
  step "pytest tests/gpu/test_sm90_gemm.py" $? "$LOG/pytest_sm90_gemm.log"
  # NaN / inf / -0 / subnormal operands through the product kernels (HMMA; on sm_90 also HGMMA): what the
  # PTX ISA fixes asserted, the open words appended to $NAN_BITS_LOG beside the simulator's
  timeout -s INT -k 10 120 python3 -m pytest -m gpu tests/gpu/test_gemm_specials_gpu_s41.py -v -s -p no:cacheprovider \
    > "$LOG/pytest_gemm_specials.log" 2>&1
  step "pytest tests/gpu/test_gemm_specials_gpu_s41.py" $? "$LOG/pytest_gemm_specials.log"
  # Coppelius's non-GEMM kernels alone against float64, with their timings (-s prints them)
  timeout 300 python3 -m pytest -m gpu tests/gpu/test_coppelius_kernels.py -v -s -p no:cacheprovider \
    > "$LOG/pytest_coppelius_kernels.log" 2>&1
  step "pytest -m gpu tests/gpu/test_coppelius_kernels.py" $? "$LOG/pytest_coppelius_kernels.log"
  # seed 004's host: train, resume, rerun, predict, kill (a run of its own: NumPy reference updates)
  # pytest-timeout (when installed) fails a test that runs past 150 s with its traceback and goes on,
  # so a slow or hung test still says where it was; run.sh's own timeout interrupts pytest (SIGINT,
  # then SIGKILL 20 s on), which still prints the failures' tracebacks and where it stopped
  PER_TEST=""
  python3 -c "import pytest_timeout" > /dev/null 2>&1 && PER_TEST="--timeout 150"
  timeout -s INT -k 20 300 python3 -m pytest -m gpu tests/gpu/test_coppelius_host.py -v -s -p no:cacheprovider $PER_TEST \
    --durations=0 > "$LOG/pytest_coppelius_host.log" 2>&1
  step "pytest -m gpu tests/gpu/test_coppelius_host.py" $? "$LOG/pytest_coppelius_host.log"
  # Coppelius's whole update, our kernels against PyTorch (small and large, 200 updates, the skip; about
  # 40 s on the H200): a run of its own with -s, its numbers in the log (COPPELIUS_UPDATE=0 leaves it out)
  # (its line once read `$?` of the `[ COPPELIUS_UPDATE = 1 ]` test: exit 0 whatever pytest returned)
  if [ "${COPPELIUS_UPDATE:-1}" = 1 ]; then
    timeout 300 python3 -m pytest -m gpu tests/gpu/test_coppelius_update.py -v -s -p no:cacheprovider \
      > "$LOG/pytest_coppelius.log" 2>&1
    step "pytest -m gpu tests/gpu/test_coppelius_update.py" $? "$LOG/pytest_coppelius.log"
  fi
else
  note "pytest -m gpu: skipped (no pytest on this machine)"
fi

# the coppelius-gemm products timed beside cuBLAS (BENCH_GEMM=1; tests/gpu/test_coppelius_gemm.py
# is in the pytest run above)
if [ "${BENCH_GEMM:-0}" = 1 ]; then
  timeout 300 python3 bench/gpu/coppelius_gemm_bench.py --json "$LOG/coppelius_gemm_bench.json" \
    > "$LOG/coppelius_gemm_bench.log" 2>&1
  step coppelius_gemm_bench $?
fi

# one Coppelius update timed, ours against PyTorch's four ways, small and large (BENCH_COPPELIUS=1; ~1 min)
HOSTS_ARG=""; [ -d .device/coppelius-host ] && HOSTS_ARG="--hosts .device/coppelius-host"   # adds seed 004's host's row
[ "${BENCH_COPPELIUS:-0}" = 1 ] && { timeout 400 python3 bench/coppelius/update_bench.py --json "$LOG/coppelius-update-bench.json" $HOSTS_ARG > "$LOG/coppelius_update_bench.log" 2>&1; step "coppelius update_bench" $?; }
# seed 004's train invocation against PyTorch AMP, small and large (BENCH_COPPELIUS_HOST=1;
# .device/coppelius-host built with --large); the host also with its video memory in 4 KiB
# pages, and under NATIVE_PROFILE (where its time goes, kept in the log folder)
if [ "${BENCH_COPPELIUS_HOST:-0}" = 1 ] && [ -d .device/coppelius-host ]; then
  timeout 400 python3 bench/coppelius_host/bench.py .device/coppelius-host "$LOG/coppelius-host-bench" \
    --host-variant pages-4k:NATIVE_GPU_VIDEO_PAGES=4k --host-variant profile:NATIVE_PROFILE=1 \
    > "$LOG/coppelius_host_bench.log" 2>&1
  step "coppelius_host bench" $?
fi

# every variant host prepare.sh built (--clusters, --fused, --tree, --fused-tree: .device/coppelius-host-NAME)
# against the plain one, in one run that alternates them: every output byte for byte, and the update's time
# (a host prepare.sh marked UNCHECKED is wrong on purpose, a bound: its outputs may differ)
VARIANT_HOSTS=""
UNCHECKED_HOSTS=""
for variant in .device/coppelius-host-*/; do
  [ -d "$variant" ] || continue
  if [ -e "$variant/UNCHECKED" ]; then
    UNCHECKED_HOSTS="$UNCHECKED_HOSTS $(basename "$variant")"
  else
    VARIANT_HOSTS="$VARIANT_HOSTS $(basename "$variant")"
  fi
done
if [ -n "$VARIANT_HOSTS$UNCHECKED_HOSTS" ] && [ -d .device/coppelius-host ]; then
  CONFIGS=small; [ -e .device/coppelius-host/coppelius-host-large ] && CONFIGS=large,small
  timeout 400 python3 bench/coppelius_host/compare_builds.py "$LOG/coppelius-variants" coppelius-host \
    $VARIANT_HOSTS ${UNCHECKED_HOSTS:+--unchecked $UNCHECKED_HOSTS} --configs $CONFIGS --repeats 2 \
    > "$LOG/coppelius_variants.log" 2>&1
  step "coppelius host variants ($VARIANT_HOSTS${UNCHECKED_HOSTS:+; unchecked:$UNCHECKED_HOSTS}) against the plain host" $?
fi

# sm_90 stores below shared 0x400 (the system's first KiB): what the GPU does, recorded in
# $LOG/shared_reserve.log; a run of its own before the faulting hosts (its kernel may fault: it runs in
# a child process of its own)
if python3 -c "import pytest" > /dev/null 2>&1; then
  SHARED_RESERVE_LOG=$LOG/shared_reserve.log timeout -s INT -k 10 180 python3 -m pytest -m gpu \
    tests/gpu/test_shared_reserve_gpu_s41.py -v -s -p no:cacheprovider > "$LOG/pytest_shared_reserve.log" 2>&1
  step "pytest -m gpu tests/gpu/test_shared_reserve_gpu_s41.py (stores below shared 0x400 on sm_90)" $? "$LOG/pytest_shared_reserve.log"
fi

# LAST: hosts that fault the GPU on purpose (a far store: Xid 31; a trap: Xid 13), each its own
# process; their channel errors must not disturb the steps above.  No timeout case (a hung channel
# could wedge the device).  Exit 0 when every host exited 7 with the Xid, the step and what to do.
if python3 -c "import pytest" > /dev/null 2>&1; then
  timeout -s INT -k 10 240 python3 -m pytest -m gpu tests/gpu/test_gpu_fault_s40.py -v -s -p no:cacheprovider \
    > "$LOG/pytest_gpu_fault.log" 2>&1
  step "pytest -m gpu tests/gpu/test_gpu_fault_s40.py (GPU faults on purpose, last)" $? "$LOG/pytest_gpu_fault.log"
fi

(dmesg 2>/dev/null | grep -i -E "nvrm|xid|nvidia" | tail -50) > "$LOG/dmesg.txt" 2>&1 || true
# the last line: how many steps failed, and run.sh's exit status -- gpu_smoke's when it failed, else 1 when any step
# failed, else 0 (it was gpu_smoke's alone, so a run whose tests failed exited 0)
status=0
[ -n "$FAILED_STEPS" ] && status=1
[ "$smoke" != 0 ] && status=$smoke
if [ -n "$FAILED_STEPS" ]; then
  note "run.sh: $FAILED of $STEPS steps failed (${FAILED_STEPS#, }): exit $status"
else
  note "run.sh: $STEPS steps, none failed: exit 0"
fi
[ -n "${2:-}" ] && tar -czf "$2" -C "$(dirname "$LOG")" "$(basename "$LOG")"
exit $status
