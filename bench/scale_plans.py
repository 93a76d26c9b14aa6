"""Plans far larger than the examples, made from examples/linear_regression (the smallest
complete host): for bench/scale_bench.py and the tests of bobc's costs at scale.

- `with_regions(out, regions, updates)`: `regions` more copies of LinReg's SGD kernel, each its
  own source and region (identity linreg-sgd-K), update u running copy u mod regions; the
  schedule and the regions as chains of definitions (parentheses nest at most 200 deep).
- `with_residents(out, count)`: `count` more 256-byte global residents, listed before LinReg's.
- `with_disjoint_launches(out, count)`: `count` more predict launches, each writing its own
  256 bytes of one resident, sent as one submission: launches that may all run at once.
- `with_nested_repeats(out, depth)`: `depth` host-step repeats nested in one another's body.
- `with_empty_repeats(out, count)`: Repeat count (Repeat count (Repeat 0 ...)): no step unrolled.
- `with_stacked_residents(out, count)`: `count` more 256-byte residents all on the same bytes (a
  refusal: every pair overlaps).

`device_hazard=False` declares the plan's device hazard 0 rather than computing it with the
library's certificate (specs/Runtime/DeviceArenaCertificate.bob, whose phase lookup and resident
pairs cost evaluation steps of their own): bobc's certifier checks the arena itself either way,
and the Python side's cost is what is measured then."""
from __future__ import annotations

import re
import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "linear_regression"
PLAN = Path("LinReg") / "Build" / "NativeHost.bob"


class _Plan:
    def __init__(self, out: Path):
        out = Path(out)
        if out.exists():
            shutil.rmtree(out)
        shutil.copytree(EXAMPLE, out)
        self.out = out
        self.host = out / PLAN
        self.text = self.host.read_text()
        self.extra: list[str] = []

    def replace(self, old: str, new: str) -> None:
        assert old in self.text, old
        self.text = self.text.replace(old, new)

    def updates(self, count: int) -> None:
        model = self.out / "LinReg" / "Model.bob"
        model.write_text(model.read_text().replace("def linRegUpdatesPerInvocation : Nat = 20",
                                                   f"def linRegUpdatesPerInvocation : Nat = {count}"))

    def no_hazard(self) -> None:
        self.replace("def lrDeviceHazard : Nat = (deviceArenaHazard lrWindows lrGlobals lrPhases lrLaunchSchedule "
                     "lrSubmissionSchedule)", "def lrDeviceHazard : Nat = 0")
        self.replace("def lrDeviceCertified : (equal Nat lrDeviceHazard 0) = (refl Nat 0)", "")

    def extra_arena(self, count: int) -> None:
        """`count` x 256 bytes more arena after the predictions, from gExtraBase."""
        self.replace("def lrArenaBytes : Nat = (naturalSaturatingSubtract (naturalAdd lrPredictionsAddress "
                     "linRegPredictionsBytes) lrArenaBase)",
                     "def gExtraBase : Nat = (lrNext lrPredictionsAddress linRegPredictionsBytes)\n"
                     f"def lrArenaBytes : Nat = (naturalSaturatingSubtract (naturalAdd gExtraBase {count * 256}) "
                     "lrArenaBase)")

    def write(self) -> Path:
        self.host.write_text(self.text + "\n" + "\n".join(self.extra) + "\n")
        return self.host


def with_regions(out, regions: int, updates: int, device_hazard: bool = True, wrong_place: int | None = None) -> Path:
    """The plan file (module LinReg.Build.NativeHost under `out`).  `wrong_place`: the update
    whose SGD launch points 128 bytes past its region's place (a refusal)."""
    plan = _Plan(out)
    kernels = plan.out / "LinReg" / "kernels"
    sgd = (kernels / "linreg-sgd.sass").read_text()
    for k in range(regions):
        (kernels / f"linreg-sgd-{k}.sass").write_text(sgd.replace(".kernel linreg_sgd", f".kernel linreg_sgd_{k}"))
    plan.updates(updates)
    plan.replace("        (constructor NvidiaDeviceRegions NvidiaDeviceRegionsEnd))))", "        gRegions0)))")
    plan.replace("def lrCodeExtent : Nat = (lrAlign (naturalAdd lrPredictPlace (bytes-length lrPredictBytes)))",
                 "def lrCodeExtentBase : Nat = (lrAlign (naturalAdd lrPredictPlace (bytes-length lrPredictBytes)))\n"
                 f"def lrCodeExtent : Nat = (naturalAdd lrCodeExtentBase (naturalMultiply {regions} "
                 "(lrAlign (bytes-length lrSGDBytes))))")
    plan.replace("def lrSGDLaunch : (family NvidiaLaunchSchedule) =",
                 "def lrSGDLaunchAt = (lambda unrestricted identity : Bytes . (lambda unrestricted place : Nat .\n"
                 "  (lrLaunch identity place\n"
                 "    (lrPatch 0 lrParametersAddress (lrPatch 1 lrGradientAddress\n"
                 "      (lrPatch 2 (lrPair linRegParameterCount linRegLearningRate) lrNoPatches))))))\n"
                 "def lrSGDLaunch : (family NvidiaLaunchSchedule) =")
    plan.text, count = re.subn(r"def lrTrainingSchedule : \(family NvidiaLaunchSchedule\) =\n.*?"
                               r"linRegUpdatesPerInvocation\)\n",
                               f"def lrTrainingSchedule : (family NvidiaLaunchSchedule) = gSched{updates}\n",
                               plan.text, flags=re.S)
    assert count == 1
    plan.replace('(lrPhase b"linreg-predict"\n    (constructor DeviceArenaPhases DeviceArenaPhasesEnd))))',
                 '(lrPhase b"linreg-predict" gPhases0)))')
    if not device_hazard:
        plan.no_hazard()
    extra = plan.extra
    for k in range(regions):
        extra.append(f'def gBytes{k} : Bytes = (lrMachine (constructor SM86Program SM86ProgramAssembly '
                     f'b"LinReg/kernels/linreg-sgd-{k}.sass" b"linreg-sgd-{k}"))')
        extra.append(f"def gPlace{k} : Nat = (naturalAdd lrCodeExtentBase (naturalMultiply {k} "
                     "(lrAlign (bytes-length lrSGDBytes))))")
    extra.append(f"def gRegions{regions} : (family NvidiaDeviceRegions) = "
                 "(constructor NvidiaDeviceRegions NvidiaDeviceRegionsEnd)")
    for k in reversed(range(regions)):
        extra.append(f"def gRegions{k} : (family NvidiaDeviceRegions) = (constructor NvidiaDeviceRegions "
                     f'NvidiaDeviceRegionsNext (lrRegion b"linreg-sgd-{k}" gBytes{k} 16 32) gRegions{k + 1})')
    extra.append(f"def gPhases{regions} : (family DeviceArenaPhases) = (constructor DeviceArenaPhases "
                 "DeviceArenaPhasesEnd)")
    for k in reversed(range(regions)):
        extra.append(f'def gPhases{k} : (family DeviceArenaPhases) = (lrPhase b"linreg-sgd-{k}" gPhases{k + 1})')
    extra.append("def gSched0 : (family NvidiaLaunchSchedule) = (constructor NvidiaLaunchSchedule "
                 "NvidiaLaunchScheduleEmpty)")
    for u in range(updates):
        k = u % regions
        place = f"(naturalAdd gPlace{k} 128)" if u == wrong_place else f"gPlace{k}"
        extra.append(f"def gSched{u + 1} : (family NvidiaLaunchSchedule) = (lrThen gSched{u} (lrThen "
                     f'(lrSGDLaunchAt b"linreg-sgd-{k}" {place}) (lrLossGradLaunch lrTrainingLossAddress)))')
    return plan.write()


def with_residents(out, count: int, device_hazard: bool = False, updates: int = 20) -> Path:
    plan = _Plan(out)
    plan.updates(updates)
    plan.extra_arena(count)
    plan.replace("def lrGlobals : (family ArenaResidents) =", "def lrGlobalsOwn : (family ArenaResidents) =")
    plan.extra.append("def lrGlobals : (family ArenaResidents) = gRes0")
    if not device_hazard:
        plan.no_hazard()
    plan.extra.append(f"def gRes{count} : (family ArenaResidents) = lrGlobalsOwn")
    for i in reversed(range(count)):
        plan.extra.append(f'def gRes{i} : (family ArenaResidents) = (lrResident b"extra-{i}" '
                          f"(naturalAdd gExtraBase {i * 256}) 256 gRes{i + 1})")
    return plan.write()


def with_disjoint_launches(out, count: int) -> Path:
    plan = _Plan(out)
    plan.extra_arena(count)
    plan.replace('(lrResident b"predictions" lrPredictionsAddress linRegPredictionsBytes lrNoResidents)',
                 '(lrResident b"predictions" lrPredictionsAddress linRegPredictionsBytes '
                 f'(lrResident b"extra" gExtraBase {count * 256} lrNoResidents))')
    plan.replace("def lrLaunchSchedule : (family NvidiaLaunchSchedule) = (lrThen lrForwardSchedule lrTrainingSchedule)",
                 "def lrBaseSchedule : (family NvidiaLaunchSchedule) = (lrThen lrForwardSchedule lrTrainingSchedule)\n"
                 "def lrBaseCount : Nat = (nvidiaLaunchScheduleCount lrBaseSchedule)\n"
                 f"def lrLaunchSchedule : (family NvidiaLaunchSchedule) = (lrThen lrBaseSchedule gPar{count})")
    plan.replace("    (lrSubmitEach lrLaunchCount 0 0)\n"
                 "    (lrSubmitEach 1 1 (naturalMultiply lrLaunchCount prSemaphoreStride)))\n"
                 "def lrSubmissionCount : Nat = (naturalAdd lrLaunchCount 1)",
                 "    (lrSubmitEach lrBaseCount 0 0)\n"
                 "    (constructor NvidiaSubmissionSchedule NvidiaSubmissionScheduleAppend\n"
                 "      (lrSubmitEach 1 1 (naturalMultiply lrBaseCount prSemaphoreStride))\n"
                 "      (constructor NvidiaSubmissionSchedule NvidiaSubmissionScheduleOne\n"
                 "        (constructor NvidiaSubmissionBatch NvidiaSubmissionBatchValue b\"linreg-submission\" "
                 "(naturalMultiply (naturalAdd lrBaseCount 1) prSemaphoreStride)\n"
                 f"          (constructor NvidiaLaunchReferences NvidiaLaunchReferencesRange lrBaseCount {count})))))\n"
                 "def lrSubmissionCount : Nat = (naturalAdd lrBaseCount 2)")
    plan.extra.append("def gPar0 : (family NvidiaLaunchSchedule) = (constructor NvidiaLaunchSchedule "
                      "NvidiaLaunchScheduleEmpty)")
    for i in range(count):
        plan.extra.append(f"def gPar{i + 1} : (family NvidiaLaunchSchedule) = (lrThen gPar{i} (lrLaunch "
                          'b"linreg-predict" lrPredictPlace (lrPatch 0 lrParametersAddress (lrPatch 1 '
                          f"lrFeaturesAddress (lrPatch 2 (naturalAdd gExtraBase {i * 256}) (lrPatch 3 lrCounts "
                          "lrNoPatches))))))")
    return plan.write()


_BEFORE_OPERATION = "              (constructor NvidiaPlanHostSteps NvidiaPlanHostStepOperation lrTrainSteps)))))))"


def with_nested_repeats(out, depth: int) -> Path:
    """`depth` Repeat 1 nested one in another's body before LinReg's Operation step, the innermost
    body a WriteAt of the result (a chain of definitions: parentheses nest a few deep)."""
    plan = _Plan(out)
    plan.replace(_BEFORE_OPERATION,
                 "              (constructor NvidiaPlanHostSteps NvidiaPlanHostStepRepeat 1 gR0 "
                 "(constructor NvidiaPlanHostSteps NvidiaPlanHostStepOperation lrTrainSteps))))))))")
    plan.extra.append(f"def gR{depth} : (family NvidiaPlanHostSteps) = "
                      "(lrWriteAt lrResultFile lrInitialLossAddress linRegLossBytes 0 lrEnd)")
    for i in reversed(range(depth)):
        plan.extra.append(f"def gR{i} : (family NvidiaPlanHostSteps) = "
                          f"(constructor NvidiaPlanHostSteps NvidiaPlanHostStepRepeat 1 gR{i + 1} lrEnd)")
    return plan.write()


def with_empty_repeats(out, count: int) -> Path:
    """Repeat count (Repeat count (Repeat 0 (WriteAt ...))) before LinReg's Operation step: no
    step once unrolled, count^2 iterations of the walks that unroll it."""
    plan = _Plan(out)
    plan.replace(_BEFORE_OPERATION,
                 f"              (constructor NvidiaPlanHostSteps NvidiaPlanHostStepRepeat {count} "
                 f"(constructor NvidiaPlanHostSteps NvidiaPlanHostStepRepeat {count} "
                 "(constructor NvidiaPlanHostSteps NvidiaPlanHostStepRepeat 0 "
                 "(lrWriteAt lrResultFile lrInitialLossAddress linRegLossBytes 0 lrEnd) lrEnd) lrEnd) "
                 "(constructor NvidiaPlanHostSteps NvidiaPlanHostStepOperation lrTrainSteps))))))))")
    return plan.write()


def with_stacked_residents(out, count: int) -> Path:
    """`count` more 256-byte global residents, all at gExtraBase: count (count - 1) / 2 overlapping
    pairs, refused (the size of the refusal; probe s44 extractscale)."""
    plan = _Plan(out)
    plan.extra_arena(1)
    plan.replace("def lrGlobals : (family ArenaResidents) =", "def lrGlobalsOwn : (family ArenaResidents) =")
    plan.extra.append("def lrGlobals : (family ArenaResidents) = gRes0")
    plan.no_hazard()
    plan.extra.append(f"def gRes{count} : (family ArenaResidents) = lrGlobalsOwn")
    for i in reversed(range(count)):
        plan.extra.append(f'def gRes{i} : (family ArenaResidents) = (lrResident b"extra-{i}" gExtraBase 256 gRes{i + 1})')
    return plan.write()
