"""The build pipeline, one stage per module, each called once in order.

plan modules --load--> values --check--> --extract--> Plan --certify-->
--encode--> images --generate/gcc/embed--> host executable.
Nothing downstream reaches back upstream: the backend never re-evaluates
language terms; the language never knows a QMD bit.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .errors import BobcError
from .targets import Target

DEFAULT_ENTRY = "bobNativeHost"


class CertificationRefused(BobcError):
    """The plan's own certificate and the certifier disagree about soundness."""


@dataclass
class Built:
    program: object        # the loaded language program
    plan: object           # bobc.plan.model.Plan
    images: object         # bobc.nvidia.encode.Images


def load(plan_path: Path, target: Target, include=(), intrinsics=None):
    """Parse and resolve the plan's modules, with the backend's encoders registered
    (`intrinsics`: another registry, e.g. a benchmark's empty kernels)."""
    from . import language
    from .plan.intrinsics import default_intrinsics

    registry = intrinsics if intrinsics is not None else default_intrinsics()
    program = language.load_program(plan_path, include=tuple(include), target=target, intrinsics=registry)
    program.bobc_intrinsics = registry     # kept for the registers the kernels really need
    program.bobc_default_intrinsics = intrinsics is None
    return program


WELL_TYPED = b"well typed\n"


def _verdict_key(program) -> str | None:
    """The cache key of `program`'s type check: every module's path and text, the target, and
    all of bobc's code and tables (the checker evaluates proofs, and evaluation can reach the
    compiler's own encoders).  None for a program loaded with other intrinsics."""
    if not getattr(program, "bobc_default_intrinsics", False):
        return None
    from . import cache

    parts: list[bytes | str] = [cache.package_identity(), program.target.name, program.plan_name]
    for name in sorted(program.modules):
        module = program.modules[name]
        parts += [name, str(module.path), module.source]
    return cache.digest(*parts)


def check(program) -> None:
    """Type check the program, or reuse the verdict reached for exactly these modules with
    exactly this bobc (bobc/cache.py): checking Bob's proofs by computation was most of
    `bobc check`'s time once parsing was cached.  Only success is stored; a refusal is
    found again, with its message, every time."""
    from . import cache

    key = _verdict_key(program)
    if key is not None and cache.read("checked", key) == WELL_TYPED:
        return
    program.check()
    if key is not None:
        cache.write("checked", key, WELL_TYPED)


def extract(program, entry: str = DEFAULT_ENTRY):
    from .plan.extract import extract_plan

    return extract_plan(program, entry=entry)


def kernel_needs(program, plan) -> dict[str, int] | None:
    """Region identity -> registers its assembled kernel uses, as the certifier takes them."""
    registry = getattr(program, "bobc_intrinsics", None)
    if registry is None:
        return None
    from .plan.intrinsics import kernel_registers

    return kernel_registers(registry, plan)


def certify(plan, target: Target, needs=None) -> None:
    """Refuse an unsound plan; `needs` maps region identity -> registers its kernel uses."""
    from .certify import certify as certify_plan

    certify_plan(plan, target, needs=needs)


def encode(plan, target: Target):
    from .nvidia.encode import encode_images

    return encode_images(plan.program, target)


def check_and_certify(program, target: Target, entry: str = DEFAULT_ENTRY):
    """Type check, extract and certify; the extracted Plan of a sound program.

    When the type check fails and the plan can still be extracted, the
    certifier runs anyway: a broken arena then fails a proof such as
    `equal Nat bobDeviceHazard 0`, and the certifier's message (which
    residents overlap, which pointer strays) says more than the proof's.

    A plan extracted before from exactly these modules with exactly this bobc
    (the key of the type check's verdict, and `entry`) is reused with the
    registers its kernels need, and certified again; extracting evaluates the
    whole plan, which was most of `bobc check`'s time on Bob.
    """
    stored = _stored_plan(program, entry)
    if stored is not None:
        plan, needs = stored
        certify(plan, target, needs)
        return _refuse_hazard(plan)
    try:
        check(program)
    except BobcError as type_error:
        try:
            plan = extract(program, entry)
            certify(plan, target, kernel_needs(program, plan))
        except BobcError as certificate_error:
            certificate_error.hint = "the type check fails too: " + type_error.message.splitlines()[0]
            raise certificate_error from type_error
        raise
    plan = extract(program, entry)
    needs = kernel_needs(program, plan)
    certify(plan, target, needs)
    _refuse_hazard(plan)
    _store_plan(program, entry, plan, needs)
    return plan


def _refuse_hazard(plan):
    hazard = plan.extras.get("device_hazard", 0)
    if hazard:
        from .plan.extract import HAZARDS as hazards

        raise CertificationRefused(
            f"the plan's own device arena certificate reports hazard {hazard} "
            f"({hazards.get(hazard, 'unknown hazard code')}); nothing is emitted")
    return plan


def _plan_key(program, entry: str) -> str | None:
    verdict = _verdict_key(program)
    if verdict is None:
        return None
    from . import cache

    return cache.digest(verdict, "extracted plan", entry)


def _stored_plan(program, entry: str):
    """(Plan, kernel register needs) stored by an earlier build of the same program, or None."""
    import pickle

    from . import cache
    from .plan.model import Plan

    key = _plan_key(program, entry)
    stored = cache.read("plans", key) if key is not None else None
    if stored is None:
        return None
    try:
        plan, needs = pickle.loads(stored)
    except Exception:                   # a damaged entry is only a miss
        return None
    if not isinstance(plan, Plan) or not isinstance(needs, (dict, type(None))):
        return None
    return plan, needs


def _store_plan(program, entry: str, plan, needs) -> None:
    import pickle

    from . import cache

    key = _plan_key(program, entry)
    if key is not None:
        cache.write("plans", key, pickle.dumps((plan, needs), protocol=pickle.HIGHEST_PROTOCOL))


def require_entry(program, entry: str) -> None:
    """A build needs the plan module itself to define its native host."""
    scope = program.scopes[program.plan_name]
    if entry in scope.definitions:
        return
    raise BobcError(f"{program.plan_name} defines no {entry}, the native host a build starts from",
                    hint="build the module that defines the host (for Bob: "
                         "examples/bob/Bob/Build/NativeHost.bob), or name its definition with --entry")


def compile_plan(plan_path: Path, target: Target, include=(), entry: str = DEFAULT_ENTRY,
                 intrinsics=None) -> Built:
    """Everything up to the device images; refuses an unsound plan before encoding."""
    program = load(plan_path, target, include, intrinsics)
    require_entry(program, entry)
    plan = check_and_certify(program, target, entry)
    images = encode(plan, target)
    return Built(program=program, plan=plan, images=images)
