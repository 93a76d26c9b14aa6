"""Probe s33 soundness2 findings 1-4: twin kernels (identical code under two identities) are
certified, each region held to its own identity's source; an -alias host buffer the certifier
accepts is built; a Fill into the part of the program image a target grows is refused on every
target; a plan-folder copy of a library module whose family lacks a field the extractor reads
is refused, naming the family, its declaration and the field."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[1]
PLAN = "LinReg/Build/NativeHost.bob"


def _linreg(tmp_path: Path) -> Path:
    shutil.copytree(REPOSITORY / "examples/linear_regression/LinReg", tmp_path / "LinReg")
    return tmp_path


def _patch(folder: Path, old: str, new: str, module: str = PLAN) -> None:
    path = folder / module
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new), encoding="utf-8")


def _bobc(folder: Path, *args):
    env = {**os.environ, "PYTHONPATH": str(REPOSITORY / "compiler"), "BOBC_CACHE_DIR": "off"}
    return subprocess.run([sys.executable, "-m", "bobc", *args], cwd=folder, env=env, capture_output=True,
                          text=True, timeout=300)


def _twin_kernel(folder: Path) -> None:
    """A second region linreg-predict-copy whose source is a byte-for-byte copy of linreg-predict's,
    with its own launch and arena phase."""
    kernels = folder / "LinReg/kernels"
    shutil.copy(kernels / "linreg-predict.sass", kernels / "linreg-predict-copy.sass")
    _patch(folder, "def lrRegion =", 'def lrCopyBytes : Bytes =\n'
           '  (lrMachine (constructor SM86Program SM86ProgramAssembly b"LinReg/kernels/linreg-predict-copy.sass" '
           'b"linreg-predict-copy"))\ndef lrRegion =')
    _patch(folder, '(lrRegion b"linreg-predict" lrPredictBytes 24 64)\n'
                   '        (constructor NvidiaDeviceRegions NvidiaDeviceRegionsEnd))))',
           '(lrRegion b"linreg-predict" lrPredictBytes 24 64)\n'
           '        (constructor NvidiaDeviceRegions NvidiaDeviceRegionsNext (lrRegion b"linreg-predict-copy" '
           'lrCopyBytes 24 64)\n        (constructor NvidiaDeviceRegions NvidiaDeviceRegionsEnd)))))')
    _patch(folder, "def lrCodeExtent : Nat = (lrAlign (naturalAdd lrPredictPlace (bytes-length lrPredictBytes)))",
           "def lrCopyPlace : Nat = (lrAlign (naturalAdd lrPredictPlace (bytes-length lrPredictBytes)))\n"
           "def lrCodeExtent : Nat = (lrAlign (naturalAdd lrCopyPlace (bytes-length lrCopyBytes)))")
    _patch(folder, "def lrForwardSchedule : (family NvidiaLaunchSchedule) = "
                   "(lrThen (lrLossGradLaunch lrInitialLossAddress) lrPredictLaunch)",
           'def lrCopyLaunch : (family NvidiaLaunchSchedule) =\n'
           '  (lrLaunch b"linreg-predict-copy" lrCopyPlace\n'
           '    (lrPatch 0 lrParametersAddress (lrPatch 1 lrFeaturesAddress\n'
           '      (lrPatch 2 lrPredictionsAddress (lrPatch 3 lrCounts lrNoPatches)))))\n'
           'def lrForwardSchedule : (family NvidiaLaunchSchedule) = '
           '(lrThen (lrLossGradLaunch lrInitialLossAddress) (lrThen lrPredictLaunch lrCopyLaunch))')
    _patch(folder, '(lrPhase b"linreg-predict"\n', '(lrPhase b"linreg-predict" (lrPhase b"linreg-predict-copy"\n')
    _patch(folder, "(constructor DeviceArenaPhases DeviceArenaPhasesEnd))))",
           "(constructor DeviceArenaPhases DeviceArenaPhasesEnd)))))")


def test_twin_kernels_with_identical_code_are_certified(tmp_path):
    folder = _linreg(tmp_path)
    _twin_kernel(folder)
    for target in ("sm_86", "sm_90"):
        done = _bobc(folder, "check", PLAN, "--target", target)
        assert done.returncode == 0, done.stderr
        assert "certified" in done.stdout


def test_a_region_whose_code_is_another_kernels_is_still_refused(tmp_path):
    """The twin's region given the code the plan encodes from linreg-predict.sass (identical bytes,
    but the build assembled no source of the region's identity): refused, naming that source."""
    folder = _linreg(tmp_path)
    _twin_kernel(folder)
    _patch(folder, '(lrRegion b"linreg-predict-copy" lrCopyBytes 24 64)',
           '(lrRegion b"linreg-predict-copy" lrPredictBytes 24 64)')
    _patch(folder, "(bytes-length lrCopyBytes)", "(bytes-length lrPredictBytes)")
    done = _bobc(folder, "check", PLAN, "--target", "sm_86")
    assert done.returncode != 0
    assert re.search(r"region linreg-predict-copy's machine code was encoded from \S*linreg-predict\.sass",
                     done.stderr), done.stderr


def _alias(folder: Path, name: str, address: str) -> None:
    _patch(folder, '            (lrBuffer b"arena" lrVideo lrArenaBase lrArenaBytes',
           f'            (lrBuffer b"{name}" lrVideo {address} 0x1000\n'
           '            (lrBuffer b"arena" lrVideo lrArenaBase lrArenaBytes')
    _patch(folder, "(constructor NvidiaPlanHostBuffers NvidiaPlanHostBuffersEnd)))))))",
           "(constructor NvidiaPlanHostBuffers NvidiaPlanHostBuffersEnd))))))))")


def test_an_alias_the_certifier_accepts_is_built_and_not_mapped_again(tmp_path):
    """An alias of the arena's first page: certified, and built on both targets; the built host's
    buffer list maps the arena once and the alias not at all."""
    folder = _linreg(tmp_path)
    _alias(folder, "input-alias", "lrArenaBase")
    for target in ("sm_86", "sm_90"):
        done = _bobc(folder, "check", PLAN, "--target", target)
        assert done.returncode == 0, done.stderr
        done = _bobc(folder, "build", PLAN, "--target", target, "-o", f"host-{target}")
        assert done.returncode == 0, done.stderr
        host = (folder / f"host-{target}").read_bytes()
        assert b"\0arena\0" in host and b"input-alias\0" not in host      # buffer names, C strings


def test_a_fill_into_the_grown_program_image_is_refused_on_every_target(tmp_path):
    """An alias just past the program buffer's declared (sm_86-sized) extent, which sm_90's program
    image grows into, and a Fill through it before the first Submit: refused on sm_90 as a write
    into the program buffer (on sm_86 the alias lies in no buffer, refused as that)."""
    folder = _linreg(tmp_path)
    tail = "(naturalAdd lrProgramBase (lrPage lrProgramBytes))"
    _alias(folder, "tail-alias", tail)
    _patch(folder, "      (constructor NvidiaPlanHostSteps NvidiaPlanHostStepSubmit lrForwardLaunches 0\n"
                   "        (lrWrite lrPredictionsFile lrPredictionsAddress linRegPredictionsBytes",
           f"      (constructor NvidiaPlanHostSteps NvidiaPlanHostStepFill {tail}\n"
           "        (bytes-from-nat-le 0 4096)\n"
           "      (constructor NvidiaPlanHostSteps NvidiaPlanHostStepSubmit lrForwardLaunches 0\n"
           "        (lrWrite lrPredictionsFile lrPredictionsAddress linRegPredictionsBytes")
    _patch(folder, "(constructor NvidiaPlanHostSteps NvidiaPlanHostStepOperation lrTrainSteps)))))))",
           "(constructor NvidiaPlanHostSteps NvidiaPlanHostStepOperation lrTrainSteps))))))))")
    done = _bobc(folder, "check", PLAN, "--target", "sm_90")
    assert done.returncode != 0, done.stdout
    assert re.search(r"step \d+ \(fill\) writes \[0x[0-9a-f]+, 0x[0-9a-f]+\) \(4,096 bytes\) into host buffer "
                     r"(program|tail-alias) ", done.stderr), done.stderr
    done = _bobc(folder, "check", PLAN, "--target", "sm_86")
    assert done.returncode != 0 and "alias tail-alias" in done.stderr, done.stderr


def test_a_plan_roots_copy_of_a_library_module_lacking_a_field_is_refused(tmp_path):
    """The plan root holds its own copy of WholeProgramPlan.bob (it shadows specs/'s) with one field
    of NvidiaWholeProgramPlan renamed: refused, naming the family, where the copy declares it and
    the field it lacks; no traceback."""
    folder = _linreg(tmp_path)
    module = "Hardware/Nvidia/SM86/Command/WholeProgramPlan.bob"
    library = (REPOSITORY / "specs" / module).read_text(encoding="utf-8")
    old = "field unrestricted nvidiaWholeProgramComponent :"
    assert library.count(old) == 1
    (folder / module).parent.mkdir(parents=True)
    (folder / module).write_text(library.replace(old, "field unrestricted nvidiaWholeProgramPiece :"),
                                 encoding="utf-8")
    line = next(n for n, text in enumerate(library.splitlines(), 1)
                if re.match(r"\s*family NvidiaWholeProgramPlan\b", text))
    done = _bobc(folder, "check", PLAN, "--target", "sm_86")
    assert done.returncode == 1
    assert "Traceback" not in done.stderr and "KeyError" not in done.stderr, done.stderr
    assert re.search(rf"family NvidiaWholeProgramPlan\S* constructor \S+, declared at "
                     rf"{re.escape(module)}:{line}:\d+ .*lacks field nvidiaWholeProgramComponent",
                     done.stderr), done.stderr
