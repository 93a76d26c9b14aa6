#!/usr/bin/env bash
# Build here (bobc needs lark) everything tests/gpu/run.sh runs on a GPU machine that
# has neither, into .device/ (git-ignored), and the lark wheel the device installs into .whl/:
#   tests/gpu/prepare.sh [--large] [--clusters] [--fused] [--tree] [--fused-tree] [--variant=NAME:CHANGE,...] [--pack]
# --large also builds Coppelius's large host (about a minute more; BENCH_COPPELIUS_HOST=1 uses it).
# --clusters also builds .device/coppelius-host-clusters: the same host with every split product
# launched in thread-block clusters (bench/coppelius_host/variant_tree.py's `clusters`, from HEAD), which
# run.sh then compares with the plain one (outputs byte for byte, and the update's time; a few minutes more).
# --fused likewise builds .device/coppelius-host-fused: AdamW in the weight-gradient products' epilogue
# (variant_tree.py's `fusedadamw`: bench/coppelius_host/fused-adamw.patch applied to HEAD); --tree
# .device/coppelius-host-tree (`leaftree`: forked launches hang from the spine as binary trees; alone, main's
# images: bench/results/coppelius-host-sim-variants-s25.txt); --fused-tree
# .device/coppelius-host-fusedtree, both; --variant=NAME:CHANGE[,CHANGE] any variant_tree.py changes as
# .device/coppelius-host-NAME.  run.sh compares every such host with the plain one (one run).
# --pack then replaces .device's files by one .device/pack.tar.xz (a tenth of the bytes; run.sh unpacks
# it first): the device tool carries at most 64 MiB of tree and carried paths together.
# Then, on the GPU machine, with .device and .whl carried there:
#   pip install --target /tmp/site .whl/*.whl && PYTHONPATH=/tmp/site tests/gpu/run.sh LOGDIR
set -eu
cd "$(dirname "$0")/../.."
PY=${PYTHON:-.venv/bin/python}
LARGE=""
VARIANTS=""
PACK=""
for arg in "$@"; do
  case "$arg" in
    --large) LARGE=--large ;;
    --clusters) VARIANTS="$VARIANTS clusters:clusters" ;;
    --fused) VARIANTS="$VARIANTS fused:fusedadamw" ;;
    --tree) VARIANTS="$VARIANTS tree:leaftree" ;;
    --fused-tree) VARIANTS="$VARIANTS fusedtree:fusedadamw,leaftree" ;;
    --variant=*) VARIANTS="$VARIANTS ${arg#--variant=}" ;;
    --pack) PACK=1 ;;
    *) echo "prepare.sh: unknown argument $arg (known: --large --clusters --fused --tree --fused-tree --variant=NAME:CHANGE,... --pack)" >&2; exit 2 ;;
  esac
done
mkdir -p .device .whl
ls .whl/lark-*.whl > /dev/null 2>&1 ||
  "$PY" -m pip download -q --no-deps --only-binary=:all: -d .whl "lark==1.3.1"
"$PY" -m bobc build examples/bob/Bob/Build/NativeHost.bob --target sm_90 -o .device/bob-host-sm_90
"$PY" tests/gpu/build_platform_hosts.py .device/platform-hosts
rm -rf .device/gpu-fault
"$PY" tests/gpu/test_gpu_fault_s40.py .device/gpu-fault     # hosts that fault on purpose (run.sh's last step)
"$PY" tests/gpu/build_native_program.py .device/native-program
"$PY" tests/gpu/build_native_request.py .device/native-request
rm -rf .device/coppelius-host
"$PY" tests/gpu/build_coppelius_host.py .device/coppelius-host $LARGE
rm -rf .device/coppelius-host-*/
# each variant host (NAME:CHANGE[,CHANGE]): Coppelius's host built from a variant tree of HEAD
for variant in $VARIANTS; do
  NAME=${variant%%:*}
  CHANGE=${variant#*:}
  TREE=$(mktemp -d)/tree
  "$PY" bench/coppelius_host/variant_tree.py "$TREE" ${CHANGE//,/ }
  ROOT=$PWD
  PY_ABS=$(cd "$(dirname "$PY")" && pwd)/$(basename "$PY")
  (cd "$TREE" && BOBC_CACHE_DIR=off PYTHONPATH="$TREE/compiler" "$PY_ABS" tests/gpu/build_coppelius_host.py \
     "$ROOT/.device/coppelius-host-$NAME" $LARGE)
  rm -rf "$(dirname "$TREE")" ".device/coppelius-host-$NAME/text.stream" ".device/coppelius-host-$NAME/coppelius-host-short"
  # a build wrong on purpose (every kernel emptied, every grid one block: variant_tree.py's floor,
  # grid1) measures a bound: run.sh compares its outputs --unchecked
  case ",$CHANGE," in *,floor,*|*,grid1,*) touch ".device/coppelius-host-$NAME/UNCHECKED" ;; esac
done
# the sm_90 corpus kernels as the pinned ptxas compiles them (tests/gpu/test_sm90_async_kernels.py)
rm -rf .device/sm90-async && mkdir -p .device/sm90-async
"$PY" - <<'PYEOF'
import subprocess
from bobc.nvtools import nvdisasm, ptxas
for stem in ("tma_tile_load", "hgmma_product"):
    cubin = f".device/sm90-async/{stem}.cubin"
    subprocess.run([ptxas(), "-arch=sm_90a", "-O3", f"tools/ptx_corpus/sm90_{stem}.ptx", "-o", cubin], check=True)
    listing = subprocess.run([nvdisasm(), "-hex", cubin], check=True, capture_output=True, text=True).stdout
    open(f".device/sm90-async/{stem}.lst", "w").write(listing)
PYEOF
# the math forms of session 36 (tests/gpu/test_math_forms_gpu.py): ptxas's cubin of math_forms.ptx, bobc's
# of each kernel from its nvdisasm listing, and bobc's I2I probe
rm -rf .device/math-forms && mkdir -p .device/math-forms
"$PY" - <<'PYEOF'
import subprocess
from bobc.cli import main
from bobc.nvtools import nvdisasm, ptxas
d = ".device/math-forms"
subprocess.run([ptxas(), "-arch=sm_90", "-O3", "tools/ptx_corpus/math_forms.ptx", "-o", f"{d}/math_forms.ptxas.cubin"],
               check=True)
listing = subprocess.run([nvdisasm(), "-hex", f"{d}/math_forms.ptxas.cubin"], check=True, capture_output=True,
                         text=True).stdout
open(f"{d}/math_forms.lst", "w").write(listing)
for kernel in ("rounding", "integer_forms", "wide_compares", "half_forms", "wide_products"):
    assert main(["asm", f"{d}/math_forms.lst", "--arch", "sm_90", "--kernel", kernel, "--cubin",
                 "-o", f"{d}/{kernel}.bobc.cubin"]) == 0
assert main(["asm", "tests/sass/data/i2i_bits.sass", "--arch", "sm_90", "--cubin", "-o", f"{d}/i2i_bits.cubin"]) == 0
PYEOF
# the simulator's readings of session 37's integer forms and session 40's float specials (NaN, inf, -0,
# subnormal operands), ptxas's cubin and bobc's (from its nvdisasm listing) of each sm_90 kernel:
# tests/sass/test_sim_probe_s37_sassforms3.py's, test_sim_probe_s40_nanbits.py's and _s41_nanprobes2.py's (tests/gpu/test_sim_probes_gpu.py) and
# tests/sass/test_int_forms.py's of the corpus's int_forms.ptx / sm90_int_forms.ptx (tests/gpu/test_int_forms_gpu.py)
rm -rf .device/sim-probes && mkdir -p .device/sim-probes
"$PY" - <<'PYEOF'
import subprocess
from bobc.cli import main
from bobc.nvtools import nvdisasm, ptxas
from bobc.sass.learn import PTX_CORPUS
from tests.sass.test_int_forms import gpu_cases
from tests.sass.test_sim_probe_s37_sassforms3 import sm90_cases
from tests.sass.test_sim_probe_s40_nanbits import sm90_cases as sm90_float_cases
d = ".device/sim-probes"


def both(ptx: str, kernel: str, arch: str = "sm_90") -> None:
    """d/KERNEL.ptxas.cubin (ptxas -O3 of `ptx` for `arch`) and d/KERNEL.bobc.cubin (bobc asm of its listing)."""
    subprocess.run([ptxas(), f"-arch={arch}", "-O3", ptx, "-o", f"{d}/{kernel}.ptxas.cubin"], check=True)
    listing = subprocess.run([nvdisasm(), "-hex", f"{d}/{kernel}.ptxas.cubin"], check=True, capture_output=True,
                             text=True).stdout
    open(f"{d}/{kernel}.lst", "w").write(listing)
    assert main(["asm", f"{d}/{kernel}.lst", "--arch", "sm_90", "--kernel", kernel, "--cubin",
                 "-o", f"{d}/{kernel}.bobc.cubin"]) == 0


for name, (ptx, _) in sorted({**sm90_cases(), **sm90_float_cases()}.items()):
    open(f"{d}/{name}.ptx", "w").write(ptx)
    both(f"{d}/{name}.ptx", name)
for kernel, (ptx, _, _) in sorted(gpu_cases().items()):
    both(str(PTX_CORPUS / ptx), kernel, "sm_90a" if ptx.startswith("sm90_") else "sm_90")
# session 41's (tests/sass/test_sim_probe_s41_nanprobes2.py): bobc's cubin only where its assembler has the forms
from tests.sass.test_sim_probe_s41_nanprobes2 import sm90_cases as s41_cases
for name, (ptx, _, _, assembles) in sorted(s41_cases().items()):
    open(f"{d}/{name}.ptx", "w").write(ptx)
    if assembles:
        both(f"{d}/{name}.ptx", name)
    else:
        subprocess.run([ptxas(), "-arch=sm_90", "-O3", f"{d}/{name}.ptx", "-o", f"{d}/{name}.ptxas.cubin"], check=True)
# probe s42 ptxcover's divisions (tests/sass/test_division_paths_s42.py): bobc's cubin too where its assembler has
# every form of ptxas's code (sm90_cases' flag: every case, since session 45 learned div.rz.f32's BREAK B2)
from tests.sass.test_division_paths_s42 import sm90_cases as s42_division_cases
for name, (ptx, _, _, _, assembles) in sorted(s42_division_cases().items()):
    open(f"{d}/{name}.ptx", "w").write(ptx)
    if assembles:
        both(f"{d}/{name}.ptx", name)
    else:
        subprocess.run([ptxas(), "-arch=sm_90", "-O3", f"{d}/{name}.ptx", "-o", f"{d}/{name}.ptxas.cubin"], check=True)
# probe s43 f64div's binary64 division / sqrt / MUFU.*64H kernels (tests/sass/test_f64_division_s43.py): ptxas's cubins
from tests.sass.test_f64_division_s43 import sm90_cases as s43_f64_cases
for name, (ptx, _, _) in sorted(s43_f64_cases().items()):
    open(f"{d}/{name}.ptx", "w").write(ptx)
    subprocess.run([ptxas(), "-arch=sm_90", "-O3", f"{d}/{name}.ptx", "-o", f"{d}/{name}.ptxas.cubin"], check=True)
# probe s41 f16x2atoms's packed-half atomics (tests/sass/test_sim_atomics_f16x2_s41.py): ptxas's cubins only
from tests.sass.test_sim_atomics_f16x2_s41 import sm90_cases as s41_half_cases
for name, (ptx, _, _) in sorted(s41_half_cases().items()):
    open(f"{d}/{name}.ptx", "w").write(ptx)
    subprocess.run([ptxas(), "-arch=sm_90", "-O3", f"{d}/{name}.ptx", "-o", f"{d}/{name}.ptxas.cubin"], check=True)
# probe s42 bf16arith's bfloat16 kernels (tests/sass/test_bf16_forms_s42.py): ptxas's and bobc's cubins
from tests.sass.test_bf16_forms_s42 import BOTH, SM90, kernels
for ptx, arch in ((BOTH, "sm_90"), (SM90, "sm_90a")):
    for kernel in kernels(ptx):
        both(str(ptx), kernel, arch)
# probe s45 simint's integer forms (tests/sim/test_integer_semantics_s45.py: cvt.pack.sat's I2IP): ptxas's cubins
from tests.sim.test_integer_semantics_s45 import sm90_cases as s45_int_cases
for name, (ptx, _, _) in sorted(s45_int_cases().items()):
    open(f"{d}/{name}.ptx", "w").write(ptx)
    subprocess.run([ptxas(), "-arch=sm_90", "-O3", f"{d}/{name}.ptx", "-o", f"{d}/{name}.ptxas.cubin"], check=True)
# probe s44 simops's forms (tests/sass/test_sim_roundings_s44.py, test_sim_xorsign_s44.py, test_sim_mufu16_s44.py):
# directed FADD, narrow conversions (.rz / .relu / .satfinite, E4M3 / E5M2), min / max .xorsign.abs, 16-bit MUFU;
# ptxas's cubin of each, and bobc's where its assembler has every form of ptxas's code (else none: the test skips it)
import contextlib
import io
from tests.sass.test_sim_mufu16_s44 import sm90_cases as s44_mufu_cases
from tests.sass.test_sim_roundings_s44 import sm90_cases as s44_rounding_cases
from tests.sass.test_sim_xorsign_s44 import sm90_cases as s44_xorsign_cases
for name, case in sorted({**s44_rounding_cases(), **s44_xorsign_cases(), **s44_mufu_cases()}.items()):
    open(f"{d}/{name}.ptx", "w").write(case[0])
    subprocess.run([ptxas(), "-arch=sm_90", "-O3", f"{d}/{name}.ptx", "-o", f"{d}/{name}.ptxas.cubin"], check=True)
    listing = subprocess.run([nvdisasm(), "-hex", f"{d}/{name}.ptxas.cubin"], check=True, capture_output=True,
                             text=True).stdout
    open(f"{d}/{name}.lst", "w").write(listing)
    with contextlib.redirect_stderr(io.StringIO()):
        assembled = main(["asm", f"{d}/{name}.lst", "--arch", "sm_90", "--kernel", name, "--cubin",
                          "-o", f"{d}/{name}.bobc.cubin"]) == 0
    if not assembled:
        print(f"prepare.sh: {name}: bobc's assembler lacks a form of ptxas's code; ptxas's cubin alone")
PYEOF
# probe s45 (helper gpuprobes45): the simulator rules session 45 rests on the PTX ISA alone -- binary32 MUFU with
# subnormal operands / results (lg2 / rcp / rsqrt / sqrt / ex2 .approx(.ftz).f32: tests/sass/test_sim_mufu_subnormal_s45.py)
# and binary16 .SAT of -0 results (add / sub / mul / fma .sat .f16(x2): tests/sass/test_sim_half_sat_s45.py); ptxas's
# cubin of each, bobc's where its assembler has every form (not HMUL2.SAT yet: s45_mul_sat_f16x2), and the simulator's
# first words of ptxas's cubin (NAME.sim.npy), which tests/gpu/test_sim_probes_gpu.py holds the GPU's to
"$PY" - <<'PYEOF'
import contextlib
import io
import subprocess

import numpy as np

from bobc.cli import main
from bobc.nvtools import nvdisasm, ptxas
from bobc.sim.kernel import run_kernel
from tests.sass.test_ffma_rounding_s42 import BLOCK
from tests.sass.test_sim_half_sat_s45 import sm90_cases as s45_sat_cases
from tests.sass.test_sim_mufu_subnormal_s45 import sm90_cases as s45_mufu_cases
d = ".device/sim-probes"
for name, (ptx, words) in sorted({**s45_mufu_cases(), **s45_sat_cases()}.items()):
    open(f"{d}/{name}.ptx", "w").write(ptx)
    subprocess.run([ptxas(), "-arch=sm_90", "-O3", f"{d}/{name}.ptx", "-o", f"{d}/{name}.ptxas.cubin"], check=True)
    listing = subprocess.run([nvdisasm(), "-hex", f"{d}/{name}.ptxas.cubin"], check=True, capture_output=True,
                             text=True).stdout
    open(f"{d}/{name}.lst", "w").write(listing)
    with contextlib.redirect_stderr(io.StringIO()):
        assembled = main(["asm", f"{d}/{name}.lst", "--arch", "sm_90", "--kernel", name, "--cubin",
                          "-o", f"{d}/{name}.bobc.cubin"]) == 0
    if not assembled:
        print(f"prepare.sh: {name}: bobc's assembler lacks a form of ptxas's code; ptxas's cubin alone")
    n = words.shape[1]
    out = run_kernel(open(f"{d}/{name}.ptxas.cubin", "rb").read(), "sm_90", grid=n // BLOCK, block=BLOCK,
                     params=["out", "in", np.uint32(n)], kernel_name=name,
                     buffers={"out": np.zeros(2 * n, np.uint32), "in": words.astype(np.uint32).reshape(-1)})["out"]
    np.save(f"{d}/{name}.sim.npy", out.reshape(n, 2)[:, 0])
PYEOF
# probe s46 (helper gpuprobes46): session 45's forms the simulator runs and no GPU had checked -- cvt between every
# integer width and binary16 / bfloat16 / binary32 / binary64 in each rounding, cvt.sat between integer widths, binary64
# add / mul / fma .rz / .rm / .rp, bfind / clz / popc / brev .b64, cache-hinted .v2 / .v4 loads and stores, 64-bit and
# scoped atomics (the simulator refuses those: the GPU alone, against the PTX oracle) and the uniform-datapath forms of
# kernel parameters (UIMAD.WIDE, FLO of ~UR): tests/sim/test_sim_user_forms_s46.py's build() -- ptxas's cubin of each,
# bobc's where its assembler has every form, and the simulator's words of ptxas's (NAME.sim.npy) for
# tests/gpu/test_sim_probes_gpu.py (about 40 s here; CI runs the same build and the GPU test's half on the simulator)
"$PY" - <<'PYEOF'
from tests.sim.test_sim_user_forms_s46 import build
for name in build(".device/sim-probes"):
    print(f"prepare.sh: {name}: bobc's assembler lacks a form of ptxas's code; ptxas's cubin alone")
PYEOF
rm -rf .device/bob-reference
cp -r tests/data/shared/data/bob-reference .device/
if [ -n "$PACK" ]; then
  tar -cJf .device-pack.tar.xz .device
  rm -rf .device
  mkdir .device
  mv .device-pack.tar.xz .device/pack.tar.xz
fi
du -sh .device .whl
