"""A warm cache gives what a cold build gives when a kernel source appears that the kernel search
finds first (probe s45 determinism3 finding 1; README, "What decides a host's bytes": the cache
never enters).

Evaluating a plan asks the recursive kernel search (bobc.kernel_search) which file it finds for
each kernel the plan encodes, and refuses a plan whose named source is not that file
(bobc.plan.intrinsics _same_as_search): a backup copy anywhere under a search folder, or a
per-target variant in another subfolder, is refused.  The verdict, the extracted plan and a native
artifact kept in the cache (bobc.stored) were reused while the files evaluation READ were
unchanged, so the search's answer was never asked again: a warm `bobc check --entry` / `bobc build
--entry` of a native artifact passed and wrote the old host where a cold one refused, and a plan
host was refused by the certifier with another message at another place.  Nor was the search path
in the verdict's key, so an -I folder that holds no module but a kernel found first (a shadowing
copy) was not a miss either.

The oracle is BOBC_CACHE_DIR=off: bobc's rule is that a cache changes no output, so the warm
command must exit and print exactly as the command with no cache does."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PAIR = """module Pair

import PartitionedRegression.Build.Workers

def worker0 : Bytes = (coordinateH200Worker b"\\x00\\x01\\x02\\x03\\x04\\x05\\x06\\x07\\x08\\x09\\x0a\\x0b\\x0c\\x0d\\x0e\\x0f" 0 0 47611 0 1 64)
"""


def bobc(*arguments, cwd: Path, cache) -> subprocess.CompletedProcess:
    environment = {**os.environ, "BOBC_CACHE_DIR": str(cache)}
    return subprocess.run([sys.executable, "-m", "bobc", *arguments], capture_output=True, text=True, cwd=cwd,
                          env=environment, timeout=600)


def same_as_no_cache(arguments, cwd: Path, cache: Path) -> subprocess.CompletedProcess:
    warm = bobc(*arguments, cwd=cwd, cache=cache)
    cold = bobc(*arguments, cwd=cwd, cache="off")
    assert (warm.returncode, warm.stdout, warm.stderr) == (cold.returncode, cold.stdout, cold.stderr)
    return warm


def test_a_native_artifact_kept_is_not_reused_when_the_search_finds_another_source(tmp_path):
    shutil.copytree(REPO / "examples/partitioned_regression/PartitionedRegression",
                    tmp_path / "pr/PartitionedRegression")
    plan = tmp_path / "plan"
    plan.mkdir()
    (plan / "Pair.bob").write_text(PAIR)
    cache = tmp_path / "cache"
    check = ["check", "Pair.bob", "--entry", "worker0", "-I", "../pr"]
    done = bobc(*check, cwd=plan, cache=cache)          # keeps the verdict, the plan and the artifact
    assert done.returncode == 0, done.stderr
    kernel = tmp_path / "pr/PartitionedRegression/Realization/coordinate-update.sass"

    # an -I folder before the example's that holds no module, only a copy of one of its kernels
    (tmp_path / "shadow").mkdir()
    shutil.copy(kernel, tmp_path / "shadow")
    shadowed = same_as_no_cache(["check", "Pair.bob", "--entry", "worker0", "-I", "../shadow", "-I", "../pr"],
                                plan, cache)
    assert shadowed.returncode == 1 and "the kernel search finds" in shadowed.stderr

    # a backup copy under the example's folder, added after the artifact was kept
    (kernel.parent.parent / "backup").mkdir()
    shutil.copy(kernel, kernel.parent.parent / "backup")
    copied = same_as_no_cache(check, plan, cache)
    assert copied.returncode == 1 and "2 sources named coordinate-update.sass" in copied.stderr
    shutil.rmtree(kernel.parent.parent / "backup")
    assert bobc(*check, cwd=plan, cache=cache).returncode == 0


def test_a_plan_kept_is_not_reused_when_a_variant_appears_in_another_subfolder(tmp_path):
    shutil.copytree(REPO / "examples/linear_regression/LinReg", tmp_path / "LinReg")
    cache = tmp_path / "cache"
    build = ["build", "LinReg/Build/NativeHost.bob", "--emit-images", "images"]
    done = bobc(*build, cwd=tmp_path, cache=cache)
    assert done.returncode == 0, done.stderr
    other = tmp_path / "LinReg/other"
    other.mkdir()
    shutil.copy(tmp_path / "LinReg/kernels/linreg-sgd.sass", other / "linreg-sgd.sm_90.sass")
    refused = same_as_no_cache(build, tmp_path, cache)
    # the extraction's refusal at the source's name in the plan, not the certifier's at the region
    assert refused.returncode == 1 and "kernel linreg-sgd: the plan encodes" in refused.stderr
