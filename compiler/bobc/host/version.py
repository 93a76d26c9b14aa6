"""What a host says it needs: the text of its .bobc.version section.

`HOST --version` prints it (runtime_c/host_version.c) and `bobc inspect`
reads it, so a user learns on any machine, before reaching a GPU node, which
target, compute class and driver branch the host speaks, which bobc built it,
and which plan images it carries.  The text is a function of the sources
alone (deterministic builds): the git commit goes in only when bobc runs from
a clean checkout (or was installed from one: setup.py records it); otherwise
the line says `commit unknown` with the reason.
"""
from __future__ import annotations

import hashlib
import os
import re
import subprocess
from pathlib import Path

from .. import __version__
from ..errors import BobcError
from ..nvidia.classes import class_name
from ..resources import shared_folder
from .sections import IMAGE_SECTIONS        # the images, in the plan identity's order

SECTION = "version"
UNKNOWN_COMMIT = "unknown (bobc was not run from a clean git checkout)"
NOT_A_CHECKOUT = "unknown (bobc was not run from a git checkout)"
PACKAGE = Path(__file__).resolve().parents[1]
CHECKOUT = PACKAGE.parents[1]               # compiler/bobc's checkout: the repository's top folder


def source_commit() -> str:
    """The commit of bobc's own sources when they are a clean git checkout, else UNKNOWN_COMMIT."""
    recorded = PACKAGE / "_commit.txt"          # written by setup.py into an installed bobc
    if recorded.is_file():
        return recorded.read_text(encoding="utf-8").strip() or UNKNOWN_COMMIT
    from ..resources import is_checkout

    # only bobc's own checkout: a bare copy of compiler/bobc inside another repository must not
    # name that repository's commit
    return checkout_commit(CHECKOUT) if is_checkout(CHECKOUT, PACKAGE) else NOT_A_CHECKOUT


def checkout_commit(root: Path) -> str:
    """The HEAD commit of the git checkout whose top folder is `root` when its tracked files are
    as committed, else `unknown (why)`.

    git is asked about that one repository and nothing else: every GIT_* variable of the caller
    is removed (a git hook sets GIT_DIR, which would name another repository's HEAD; GIT_WORK_TREE
    or GIT_INDEX_FILE would compare the wrong files), the repository and its work tree are named
    (--git-dir, --work-tree), and safe.directory allows that one folder, so a checkout owned by
    another user (a CI container) is read as it is.  The reason never names a path, so two builds
    from different places still give the same bytes."""
    root = Path(root).resolve()
    repository = root / ".git"              # a folder, or a file naming one (a worktree, a submodule)
    if not repository.exists():
        return NOT_A_CHECKOUT
    environment = {name: value for name, value in os.environ.items() if not name.startswith("GIT_")}
    environment["LC_ALL"] = "C"
    git = ["git", "-C", str(root), "--git-dir", str(repository), "--work-tree", str(root),
           "-c", f"safe.directory={root}", "--no-optional-locks"]

    def ask(*command):
        from .. import children

        return children.run([*git, *command], text=True, env=environment, stdin=subprocess.DEVNULL)
    try:
        head = ask("rev-parse", "--verify", "HEAD")
        if head.returncode != 0:
            return f"unknown (git could not read bobc's checkout: `git rev-parse HEAD` failed, exit {head.returncode})"
        dirty = ask("status", "--porcelain", "--untracked-files=no")
        if dirty.returncode != 0:
            return f"unknown (git could not read bobc's checkout: `git status` failed, exit {dirty.returncode})"
    except OSError as failure:
        return f"unknown (git could not be run to read bobc's checkout: {failure.strerror or failure})"
    if dirty.stdout.strip():
        return UNKNOWN_COMMIT
    return head.stdout.strip()


def driver_branch() -> int:
    """The one driver branch the runtime speaks (runtime_c/nv_rm.h RT_NV_DRIVER_BRANCH)."""
    header = (shared_folder("runtime_c") / "nv_rm.h").read_text(encoding="utf-8")
    found = re.search(r"#define RT_NV_DRIVER_BRANCH (\d+)u?", header)
    return int(found.group(1)) if found else 0


def plan_identity(images) -> str:
    """sha256 over the four device images, in a fixed order: two hosts with the same identity run
    the same bytes on the GPU (the host checks its own sections against it at start:
    runtime_c/host_version.c rt_host_check_images)."""
    return identity_of(*(getattr(images, name) for name in IMAGE_SECTIONS))


def carried_identity(found: dict[str, bytes]) -> str:
    """plan_identity of the image sections a host carries (`found`, by short name; one missing
    counts as empty), the identity `bobc inspect`, `dump` and `diff` judge a host by."""
    return identity_of(*(found.get(name, b"") for name in IMAGE_SECTIONS))


def identity_of(*parts: bytes) -> str:
    """plan_identity of the images given in its order (IMAGE_SECTIONS: program, QMD, pushbuffer,
    GPFIFO)."""
    digest = hashlib.sha256()
    for part in parts:
        digest.update(len(part).to_bytes(8, "little") + part)
    return digest.hexdigest()


# the version text's lines that record the identities, as the host finds them (runtime_c/host_version.c
# version_value): written by text() below, read by recorded_identity
IDENTITY_KEY = b"plan identity: sha256 "
MANIFEST_KEY = b"manifest identity: sha256 "


def manifest_section(manifest: dict) -> bytes:
    """A plan host's .bobc.manifest section: the images' manifest as compact JSON (what
    bobc.host.generate embeds)."""
    import json

    return json.dumps(manifest, sort_keys=True).encode()


def manifest_identity(section: bytes) -> str:
    """The sha256 of a .bobc.manifest section, which the version text records and the host checks
    at start (runtime_c/host_version.c rt_check_manifest): the one part of a host's .bobc.*
    sections the plan identity does not cover, so a damaged manifest is a damaged host too."""
    return hashlib.sha256(section).hexdigest()


class DamagedHost(BobcError):
    """A plan host whose device images are not the ones its plan identity names (the host
    itself refuses to run, exit 9): nothing to compare or decode, exit 2."""

    exit_code = 2


def recorded_identity(section: bytes | None, key: bytes = IDENTITY_KEY) -> str | None:
    """The plan identity (or, `key` MANIFEST_KEY, the manifest identity) a .bobc.version section
    records, read as the host reads it (runtime_c/host_version.c): the 64 characters after
    `plan identity: sha256 ` at the start of a line; None when there is no section or no such line."""
    if section is None:
        return None
    for at in range(0, len(section) - len(key) - 64 + 1):
        if (at == 0 or section[at - 1] == 0x0A) and section.startswith(key, at):
            return section[at + len(key):at + len(key) + 64].decode("ascii", "replace")
    return None


def check_images(path, found: dict[str, bytes]) -> None:
    """Refuse (DamagedHost, exit 2) a host whose device images are not the ones the plan identity
    in its version section names: what the host checks at start before it runs anything
    (runtime_c/host_version.c rt_host_check_images, exit 9); `bobc inspect`, `dump` and `diff`
    judge a host by it."""
    hint = "copy the host again, or rebuild it (bobc build)"
    section = found.get(SECTION)
    said = recorded_identity(section)
    if said is None:
        where = "it has no version section" if section is None else "its version section names no plan identity"
        raise DamagedHost(f"{path} is damaged: {where}, which the host checks its device images against "
                          "(the host refuses to run, exit 9)", hint=hint)
    carried = carried_identity(found)
    if said != carried:
        raise DamagedHost(f"{path} is damaged: its device images' sha256 is {carried}, the plan identity it was "
                          f"built with is {said} (the host refuses to run, exit 9)", hint=hint)
    # the manifest section against the manifest identity, as the host checks it (rt_check_manifest);
    # a version text without one is from a bobc before that check, whose host does not judge it
    said = recorded_identity(section, MANIFEST_KEY)
    if said is not None:
        manifest = found.get("manifest")
        if manifest is None:
            raise DamagedHost(f"{path} is damaged: it has no section .bobc.manifest, which its version text "
                              "records the sha256 of (the host refuses to run, exit 9)", hint=hint)
        carried = manifest_identity(manifest)
        if said != carried:
            raise DamagedHost(f"{path} is damaged: its .bobc.manifest section's sha256 is {carried}, the manifest "
                              f"identity it was built with is {said} (the host refuses to run, exit 9)", hint=hint)


# the section's first line, before bobc's version: the same for every plan's host
HEAD = "native host built by bobc"


# how a host refuses another driver branch: a plan host at start-up, exit 6 (docs/runtime.md); a
# native program's host at its OpenDevice, the device's status 3, or 6 once a request is open
# (docs/native-host.md, "Exit codes")
PLAN_HOST_REFUSAL = "refused, exit 6"
NATIVE_HOST_REFUSAL = "refused at OpenDevice, exit 3 (6 once a request is open)"


def build_lines(target, refusal: str = PLAN_HOST_REFUSAL) -> list[str]:
    """The build's facts, the section's first lines for every host bobc builds: which bobc and
    commit built it, for which target, compute class and driver branch (`refusal`: how the host
    refuses another branch)."""
    return [
        f"{HEAD} {__version__}",
        f"bobc commit: {source_commit()}",
        f"target: {target.name} (QMD {target.qmd_layout})",
        f"compute class: {target.compute_class:#06x} ({class_name(target.compute_class)})",
        f"driver branch: {driver_branch()} (the NVIDIA kernel driver 580.x; another branch is {refusal})",
    ]


def text(built, target, plan_name: str = "") -> bytes:
    """The .bobc.version section of a plan host: `key: value` lines."""
    images = built.images
    lines = [
        *build_lines(target),
        f"plan: {plan_name or images.manifest.get('plan', '?')}",
        f"{IDENTITY_KEY.decode()}{plan_identity(images)} (program, QMD, pushbuffer, GPFIFO images)",
        f"{MANIFEST_KEY.decode()}{manifest_identity(manifest_section(images.manifest))} "
        "(the .bobc.manifest section: the images' layout bobc dump, diff and inspect read)",
    ]
    return ("\n".join(lines) + "\n").encode()


def native_text(target) -> bytes:
    """The .bobc.version section of a native physical program's host (bobc.native.writer): the
    build's facts alone.  The host prints it first, then its program's own lines
    (runtime_c/native_host.c; bobc.reference.native_program.version_text); it checks no plan
    identity (its program carries its own CRC-32: docs/native-host.md)."""
    return ("\n".join(build_lines(target, NATIVE_HOST_REFUSAL)) + "\n").encode()


def parse(section: bytes) -> dict[str, str]:
    out = {}
    for line in section.decode("utf-8", "replace").splitlines():
        if line.startswith(HEAD + " "):
            out["bobc version"] = line.rsplit(" ", 1)[1]
        elif ": " in line:
            key, _, value = line.partition(": ")
            out[key] = value
    return out
