"""The reference host computes a plan's scalar fills as the C host does (probe s39 coverage2
finding 4).  bobc.plan.host's Scalar.evaluate used Python's float / and math.sqrt, math.pow, and
Fill.encode struct.pack: a word32 fill whose value was no natural below 2^32 ended `bobc run
--reference` in a struct.error traceback (negative, 2^32 or more) or was truncated and written
(0.5 as 0) where the C host refuses it, exit 1; 1 / 0, sqrt(-4) or a binary32 fill past its range
raised ZeroDivisionError, ValueError or OverflowError where C's double gives an infinity or a NaN.

The oracle is the C host's own code: runtime_c/plan_fill.c compiled with a small driver, given
the same scalar program (bobc_fill_bytes: the bytes, or its refusal)."""
from __future__ import annotations

import sys
import shutil
import subprocess
from pathlib import Path

import pytest

from bobc.plan import host as plan_host
from bobc.plan.host import Fill, Scalar

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))      # tests/: the shared C oracle
import plan_fill_driver  # noqa: E402

REPO = Path(__file__).resolve().parents[2]

FillValueError = getattr(plan_host, "FillValueError", ())     # the refusal's class (none before the fix)



@pytest.fixture(scope="module")
def c_host(tmp_path_factory):
    return plan_fill_driver.compiled(tmp_path_factory.mktemp("plan-fill"))


def scalar(terms) -> Scalar:
    """The Scalar tree of a postfix program (the C host's form of it: Scalar.postfix)."""
    stack: list[Scalar] = []
    for op, value in terms:
        if op in ("constant", "step"):
            stack.append(Scalar(op, (), float(value)))
        elif op == "sqrt":
            stack.append(Scalar(op, (stack.pop(),)))
        else:
            b, a = stack.pop(), stack.pop()
            stack.append(Scalar(op, (a, b)))
    assert len(stack) == 1
    return stack[0]


def reference_says(encoding, input_step, step, terms) -> str:
    fill = Fill(0, 0, step, encoding, scalar(terms))
    try:
        return fill.encode(input_step + step).hex()
    except FillValueError as refused:
        return f"refused: {refused}"


CASES = [
    ("word32", 20, 0, [("constant", 1.0), ("step", 0.0), ("subtract", 0.0)]),    # -19: struct.error before
    ("word32", 0, 0, [("constant", 2.0 ** 32)]),                                 # struct.error before
    ("word32", 0, 0, [("constant", 0.5)]),                                       # written as 0 before
    ("word32", 3, 0, [("step", 0.0), ("constant", 2.0), ("divide", 0.0)]),      # 1.5: written as 1 before
    ("word32", 0, 0, [("constant", 1.0), ("constant", 0.0), ("divide", 0.0)]),  # inf: ZeroDivisionError before
    ("word32", 0, 0, [("constant", -4.0), ("sqrt", 0.0)]),                      # -nan: ValueError before
    ("word32", 0, 0, [("constant", -8.0), ("constant", 0.5), ("power", 0.0)]),  # -nan: ValueError before
    ("word32", 7, 1, [("step", 0.0), ("constant", 3.0), ("multiply", 0.0)]),    # 24: accepted
    ("word32", 2 ** 64 - 1, 1, [("step", 0.0)]),                                # the step past 2^64, exact
    ("binary32", 2 ** 64 - 1, 1, [("step", 0.0), ("constant", 1.0), ("add", 0.0)]),
    ("binary32", 0, 0, [("constant", 1e300)]),                                   # inf: OverflowError before
    ("binary32", 0, 0, [("constant", 1.0), ("constant", 0.0), ("divide", 0.0)]),
    ("binary32", 0, 0, [("constant", 0.0), ("constant", 0.0), ("divide", 0.0)]),  # 0/0: the machine's NaN
    ("binary32", 0, 0, [("constant", -1.0), ("sqrt", 0.0)]),
    ("binary32", 0, 0, [("constant", 2.0), ("constant", 2000.0), ("power", 0.0)]),  # pow overflow: inf
    ("binary32", 5, 0, [("constant", 0.9), ("step", 0.0), ("power", 0.0)]),
]


@pytest.mark.parametrize("encoding, input_step, step, terms", CASES)
def test_a_fill_is_the_c_hosts_bytes_or_its_refusal(c_host, encoding, input_step, step, terms):
    assert reference_says(encoding, input_step, step, terms) == c_host(encoding, input_step, step, terms)


def test_the_reference_host_refuses_a_word32_fill_out_of_range_as_an_error_of_the_plan(tmp_path):
    """Through `bobc run --reference`: exit 1 and the C host's line, no traceback, nothing written."""
    import os
    import sys

    src = REPO / "examples" / "linear_regression"
    shutil.copytree(src / "LinReg", tmp_path / "LinReg")
    shutil.copy(src / "reference_kernels.py", tmp_path / "reference_kernels.py")
    plan = tmp_path / "LinReg" / "Build" / "NativeHost.bob"
    no_fills = "    (constructor NvidiaPlanHostFills NvidiaPlanHostFillsEnd)"
    # launch 0's argument 6 (2/N, binary32) as a word32 1 - t: 1 on a fresh run, -19 from step 20
    fill = ("    (constructor NvidiaPlanHostFills NvidiaPlanHostFillsNext\n"
            "      (constructor NvidiaPlanHostFill NvidiaPlanHostFillValue 0 48 0 "
            "(constructor NvidiaPlanHostEncoding NvidiaPlanHostEncodeWord32)\n"
            "        (constructor NvidiaPlanHostScalar NvidiaPlanHostScalarSubtract "
            "(constructor NvidiaPlanHostScalar NvidiaPlanHostScalarConstant "
            "(constructor NvidiaPlanHostConstant NvidiaPlanHostRatio 1 1)) "
            "(constructor NvidiaPlanHostScalar NvidiaPlanHostScalarStep)))\n" + no_fills + ")")
    text = plan.read_text()
    assert no_fills in text
    plan.write_text(text.replace(no_fills, fill))
    env = dict(os.environ, BOBC_CACHE_DIR="off", PYTHONPATH=str(REPO / "compiler"))
    subprocess.run([sys.executable, str(src / "make_record.py"), "-o", str(tmp_path / "record.bin")], check=True)

    def run(*arguments):
        return subprocess.run([sys.executable, "-m", "bobc", "run", str(plan), "train", "--reference",
                               "--input", str(tmp_path / "record.bin"), *arguments],
                              capture_output=True, text=True, env=env, cwd=tmp_path)

    first = run("--checkpoint-out", "c1", "--predictions", "p1", "--result", "r1")
    assert first.returncode == 0, first.stderr
    second = run("--checkpoint", "c1", "--checkpoint-out", "c2", "--predictions", "p2", "--result", "r2")
    # probe s43 nativemsgs: the line names the fill, the steps its step is the sum of, and what to do
    # (plan_fill.c bobc_fill_step_bytes's words)
    assert (second.returncode, second.stderr) == (
        1, "bobc run: error: fill 0: a fill's value -19 at step 20 is no natural below 2^32 (the input "
           "checkpoint's step 20 + the fill's step 0); resume from a checkpoint of an earlier step, or make fill "
           "0's scalar a natural below 2^32 at every step a run reaches (`bobc dump` of the host shows "
           "host.plan.fills[0], the launch word it writes)\n")
    assert not any((tmp_path / name).exists() for name in ("c2", "p2", "r2"))
