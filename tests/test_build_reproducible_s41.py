"""What decides the bytes bobc writes, beyond the host itself (README, "What decides a host's bytes";
probe s41 determinism2).

A user keeping regression tests that diff emitted images, the generated C, `bobc dump` text and
`bobc sim` / `bobc run --reference` outputs needs them to be the same bytes whatever the working
folder, the plan's and -I folders' spelling (relative, absolute, through a symlinked checkout, a
trailing slash, `./`, `..`), the cache, PYTHONHASHSEED, the locale, TZ, SOURCE_DATE_EPOCH, TMPDIR;
the umask decides only the modes (0666 less it for these files, as open(2) with 0666 gives).
The oracle is the first run's own bytes: the property is that nothing but the plan decides them.

The README's paragraph must also name each environment variable gcc documents as reading ("Environment
Variables Affecting GCC", the GCC manual), since bobc hands gcc its environment: the list below is
the manual's, not bobc's own (bobc.host.gcc.GCC_ENVIRONMENT)."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PLAN = "examples/linear_regression/LinReg/Build/NativeHost.bob"
INCLUDE = "examples/linear_regression"

# GCC manual, "Environment Variables Affecting GCC" (gcc 12/13/14): every variable it lists that a C
# compile and static link reads
GCC_MANUAL_VARIABLES = ("LANG", "LC_CTYPE", "LC_MESSAGES", "LC_ALL", "TMPDIR", "GCC_COMPARE_DEBUG",
                        "GCC_EXEC_PREFIX", "COMPILER_PATH", "LIBRARY_PATH", "CPATH", "C_INCLUDE_PATH",
                        "CPLUS_INCLUDE_PATH", "OBJC_INCLUDE_PATH", "DEPENDENCIES_OUTPUT",
                        "SUNPRO_DEPENDENCIES", "SOURCE_DATE_EPOCH")


def bobc(*arguments, cwd: Path, environment: dict, umask: int = 0o022) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-m", "bobc", *arguments], capture_output=True, cwd=cwd,
                          env=environment, umask=umask, timeout=600)
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    return done


def files(folder: Path) -> dict[str, tuple[bytes, int]]:
    return {path.name: (path.read_bytes(), path.stat().st_mode & 0o777)
            for path in sorted(folder.iterdir())}


def test_emitted_images_and_their_dump_do_not_depend_on_the_environment(tmp_path):
    """`bobc build --emit-images` (no gcc: the images alone) and `bobc dump` of them, once plainly
    from the top of the checkout and once with every condition changed."""
    plain = bobc("build", PLAN, "-I", INCLUDE, "--emit-images", str(tmp_path / "plain"),
                 cwd=REPO, environment=dict(os.environ))
    assert plain.stdout or plain.stderr
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "checkout").symlink_to(REPO)
    (tmp_path / "tmp").mkdir()
    environment = {**os.environ, "PYTHONHASHSEED": "31337", "TZ": "Pacific/Chatham", "LC_ALL": "C",
                   "SOURCE_DATE_EPOCH": "1", "TMPDIR": str(tmp_path / "tmp"), "BOBC_CACHE_DIR": "off",
                   "HOME": str(tmp_path / "home")}
    checkout = Path("..") / "checkout"
    bobc("build", str(checkout / PLAN), "-I", f"./{checkout}/examples/../{INCLUDE}/",
         "--emit-images", "../other", cwd=tmp_path / "elsewhere", environment=environment, umask=0o077)
    first, second = files(tmp_path / "plain"), files(tmp_path / "other")
    assert set(first) == {"program.bin", "qmd.bin", "push.bin", "gpfifo.bin", "manifest.json"}
    assert {name: data for name, (data, _) in first.items()} == {name: data for name, (data, _) in second.items()}
    assert {mode for _, mode in first.values()} == {0o644} and {mode for _, mode in second.values()} == {0o600}
    said = [bobc("dump", folder, cwd=cwd, environment=env).stdout
            for folder, cwd, env in ((str(tmp_path / "plain"), REPO, dict(os.environ)),
                                     ("../other/", tmp_path / "elsewhere", environment))]
    assert said[0] and said[0] == said[1]


def test_the_readme_names_every_environment_variable_gcc_reads():
    """probe s41 determinism2 finding 1: the paragraph listed what does not enter a host's bytes,
    but not gcc's own variables, which bobc passes to gcc and which do (CPATH, LIBRARY_PATH, ...):
    a user diffing hosts built in a conda or spack shell could not learn why they differ."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    paragraph = text.split("**What decides a host's bytes.**", 1)[1].split("\n## ", 1)[0]
    named = set(re.findall(r"`([A-Z_]+)`", paragraph))
    missing = [name for name in GCC_MANUAL_VARIABLES if name not in named and name != "LC_MESSAGES"]
    assert not missing, f"README's 'What decides a host's bytes' does not say what {missing} do"


def test_reference_and_simulator_outputs_do_not_depend_on_the_environment(tmp_path):
    """`bobc run --reference` and `bobc sim` (sm_86) of LinReg's train, once plainly and once with
    every condition changed: the same checkpoint, predictions and result bytes, modes 0666 less the
    umask."""
    record = tmp_path / "record.bin"
    subprocess.run([sys.executable, str(REPO / "examples/linear_regression/make_record.py"), "-o", str(record)],
                   check=True, capture_output=True, cwd=tmp_path, timeout=120)
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "checkout").symlink_to(REPO)
    (tmp_path / "tmp").mkdir()
    changed = {**os.environ, "PYTHONHASHSEED": "4711", "TZ": "Asia/Kolkata", "LC_ALL": "C.UTF-8",
               "SOURCE_DATE_EPOCH": "0", "TMPDIR": str(tmp_path / "tmp"), "BOBC_CACHE_DIR": "off"}
    for command, extra in (("run", ["--reference"]), ("sim", ["--target", "sm_86"])):
        for name, cwd, plan, environment, umask in (
                ("plain", REPO, PLAN, dict(os.environ), 0o022),
                ("changed", tmp_path / "elsewhere", f"../checkout/{PLAN}", changed, 0o077)):
            out = tmp_path / f"{command}-{name}"
            out.mkdir()
            bobc(command, plan, "train", *extra, "--input", str(record), "--checkpoint-out", str(out / "ckpt"),
                 "--predictions", str(out / "pred"), "--result", str(out / "result"),
                 cwd=cwd, environment=environment, umask=umask)
        first, second = files(tmp_path / f"{command}-plain"), files(tmp_path / f"{command}-changed")
        assert set(first) == {"ckpt", "pred", "result"}, command
        assert {n: d for n, (d, _) in first.items()} == {n: d for n, (d, _) in second.items()}, command
        assert {m for _, m in first.values()} == {0o644} and {m for _, m in second.values()} == {0o600}, command
