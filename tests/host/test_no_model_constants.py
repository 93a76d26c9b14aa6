"""The compiler and the runtime hold nothing of a model's: every size, identity,
record check, initializer and kernel comes from the plan and the kernel sources
(issue 14).  Bob's numbers and names may appear only in Bob's example
(examples/bob, its NumPy model included), the kernel sources under specs/ and
the tests; the runtime's own tests (runtime_c/tests/) use a synthetic plan of
their own (rt_sample.h).  The runtime's messages carry its own prefix (rt-gpu,
rt), not a model's."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

# Bob's sizes, identities and kernel names (../shared/docs/bob.md, docs/formats.md), as they would be written
BOB = [r"\b1564\b", r"\b5120\b", r"\b65536u?\b", r"\b786432\b", r"\b262144\b", r"bob-seed-v1",
       r"BOBINPUT", r"bobNativeHost", r"\b0x160\b", r"\b528\b", r"\b1552\b", r"RT_VOCAB",
       r"RT_PROMPTS", r"adamw_hyper",
       r"bob[-_](row[-_]gather|loss[-_]gradient|adamw|greedy[-_]argmax)", r"BobConfig", r"bob-raw-pmv",
       # its kernels' and optimizer's names without the prefix (an example kernel named row_gather, a
       # comment on "AdamW's step size": the machinery means a kernel, a per-step fill)
       # (names, not sizes: checked in the files hardware sizes may appear in too)
       r"(?<!\w)row[-_]gather(?!\w)", r"(?<!\w)loss[-_]gradient(?!\w)", r"(?<!\w)greedy[-_]argmax(?!\w)",
       r"(?i)(?<!\w)adamw(?!\w)",
       r"bob-gpu", r"\"bob: ", r"BOB_[A-Z]", r"\bbob_[a-z_0-9]+\(",
       # the model's own name and folder (bobc, bob-host and .bob are the product's, not the model's)
       r"\bBob\b", r"examples/bob\b"]
SIZES = [p for p in BOB if p.startswith(r"\b")]

COMPILER = REPO / "compiler" / "bobc"
GENERAL = sorted([*REPO.glob("runtime_c/*.c"), *REPO.glob("runtime_c/*.h"), *REPO.glob("runtime_c/Makefile"),
                  *REPO.glob("runtime_c/tests/*.c"), *REPO.glob("runtime_c/tests/*.h"), *REPO.glob("runtime_c/tests/*.py"),
                  *(p for p in COMPILER.rglob("*") if p.is_file() and p.suffix in {".py", ".j2", ".lark", ".json", ".md"})])
# Hardware facts that happen to equal one of Bob's sizes, checked for names only, each with its reason:
SIZES_MAY_APPEAR = {
    # the GPU bring-up counts 32-bit registers and such
    **{f"runtime_c/{name}": "driver and hardware structures" for name in (
        "nv_shim.c", "nv_shim.h", "nv_rm.h", "nv_uvm.h", "nv_ctrl.h", "nv_status.c", "nv_status.h",
        "nv_classes.h", "nv_targets.c")},
    # 0x160: sm_86's kernel parameter base in constant bank 0 (docs/sass-facts.md)
    "compiler/bobc/targets.py": "sm_86's parameter base",
    "compiler/bobc/nvidia/encode.py": "sm_86's parameter base",
    "compiler/bobc/sass/syntax.py": "sm_86's parameter base",
    "compiler/bobc/sass/README.md": "sm_86's parameter base",
    "compiler/bobc/sass/tables/sm_86.json": "instruction examples reading sm_86's parameters",
    "compiler/bobc/sass/tables/sm_90.json": "instruction examples reading sm_86's parameters",
}


def test_the_scan_covers_all_of_bobc():
    """Every Python module of the compiler is scanned, not only the host generator."""
    names = {str(p.relative_to(REPO)) for p in GENERAL}
    assert {"compiler/bobc/commands/run.py", "compiler/bobc/sass/golden.py",
            "compiler/bobc/reference/host.py", "compiler/bobc/host/generate.py",
            "runtime_c/tests/rt_sample.h", "runtime_c/tests/test_host_runtime.c", "runtime_c/tests/rt_tool.c"} <= names
    assert set(SIZES_MAY_APPEAR) <= names | {str(p.relative_to(REPO)) for p in REPO.glob("runtime_c/*")}


@pytest.mark.parametrize("path", GENERAL, ids=lambda p: str(p.relative_to(REPO)))
def test_no_bob_constant(path):
    text = path.read_text(encoding="utf-8")
    where = str(path.relative_to(REPO))
    patterns = BOB if where not in SIZES_MAY_APPEAR else [p for p in BOB if p not in SIZES]
    found = [(pattern, text.count("\n", 0, m.start()) + 1) for pattern in patterns
             for m in [re.search(pattern, text)] if m]
    assert not found, f"{where} holds Bob's {found}"


# `bob-host` is the product's default output name (`bobc build` without -o), not a model's, so it is
# not in BOB above; anywhere else a host is called by its own file name (`bobc inspect` once printed
# "(bob-host --version)" whatever the host was called: probe s28 newmodel2 finding 7).
BOB_HOST_MAY_APPEAR = {
    "compiler/bobc/commands/build.py": "the default -o",
    "compiler/bobc/cli.py": "a success line's example in a docstring",
}


@pytest.mark.parametrize("path", GENERAL, ids=lambda p: str(p.relative_to(REPO)))
def test_no_host_called_bob_host(path):
    where = str(path.relative_to(REPO))
    if where in BOB_HOST_MAY_APPEAR:
        return
    text = path.read_text(encoding="utf-8")
    found = [text.count("\n", 0, m.start()) + 1 for m in re.finditer(r"bob-host", text)]
    assert not found, f"{where} calls a host bob-host at line(s) {found}: use the host's own file name"


def test_bobs_model_is_in_its_example():
    """Bob's NumPy model and formats live in examples/bob/bob_model, not in compiler/."""
    assert not any((COMPILER / "reference" / name).exists() for name in ("bob.py", "formats.py", "fixture.py"))
    assert (REPO / "examples/bob/bob_model/model.py").is_file()


def _example_models() -> list[str]:
    """The other bundled models' names and kernel identities, read from examples/ (not Bob's: above)."""
    names = [r"(?i)coppelius", r"(?i)partitioned[-_ ]?regression",
             # a transformer's attention products by their operands' names (the generator once labelled
             # its layouts with them, in every model's kernel sources)
             r"Q K\^T", r"\bP V\b", r"\bdS K\b", r"\(d[QKVP]\)"]
    kernels = {p.stem for p in (REPO / "examples").rglob("*.sass") if "bob" not in p.parts}
    return names + sorted(re.escape(k) + "|" + re.escape(k.replace("-", "_")) for k in kernels)


@pytest.mark.parametrize("path", GENERAL, ids=lambda p: str(p.relative_to(REPO)))
def test_no_other_models_name_or_kernel(path):
    """Coppelius's and PartitionedRegression's names and kernels stay in their examples too."""
    text = path.read_text(encoding="utf-8")
    found = [(pattern, text.count("\n", 0, m.start()) + 1) for pattern in _example_models()
             for m in [re.search(pattern, text)] if m]
    assert not found, f"{path.relative_to(REPO)} names a bundled model: {found}"


def test_the_other_models_kernels_are_scanned_for():
    patterns = _example_models()
    assert any("coordinate" in p for p in patterns) and len(patterns) > 10
