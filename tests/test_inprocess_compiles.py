"""Several compiles in one process (bobc used as a library: bobc.cli.main, bobc.language's API)
give what each gives alone in a fresh process, and see the files as they are now (probe s35
inprocess).  The oracle is a fresh `python -m bobc` process, never the in-process code's word."""
from __future__ import annotations

import json
import os
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bobc import cache
from bobc.cli import main

REPO = Path(__file__).resolve().parents[1]
BOB = REPO / "examples" / "bob" / "Bob" / "Build" / "NativeHost.bob"
LINREG = REPO / "examples" / "linear_regression" / "LinReg" / "Build" / "NativeHost.bob"

needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")


def _fresh_bobc(argv, cache_folder, **env) -> subprocess.CompletedProcess:
    environment = {**os.environ, "PYTHONPATH": str(REPO / "compiler"), "BOBC_CACHE_DIR": str(cache_folder), **env}
    return subprocess.run([sys.executable, "-m", "bobc", *argv], env=environment, capture_output=True, text=True,
                          timeout=300)


def _listings(folder: Path, monkeypatch) -> dict:
    """kind/key -> the kernel sources (path, sha256 or absent) each stored result lists."""
    monkeypatch.setenv("BOBC_CACHE_DIR", str(folder))
    found = {}
    for kind in ("checked", "plans"):
        for entry in sorted((folder / kind).iterdir()):
            data = cache.read(kind, entry.name)
            assert data is not None, entry
            listing = json.loads(data[len(b"well typed\n"):]) if kind == "checked" else pickle.loads(data)[0]
            found[f"{kind}/{entry.name}"] = listing
    return found


@needs_gcc
def test_a_compiles_stored_results_list_only_the_kernel_sources_it_read(tmp_path, monkeypatch, capsys):
    """Bob then LinReg built in one process: LinReg's stored verdict and plan list LinReg's kernel
    sources, as a fresh process's do -- not Bob's too (a process-wide record made an edit to a Bob
    kernel a miss for LinReg's results)."""
    shared = tmp_path / "in-process"
    monkeypatch.setenv("BOBC_CACHE_DIR", str(shared))
    assert main(["build", str(BOB), "-o", str(tmp_path / "bob")]) == 0
    assert main(["build", str(LINREG), "-o", str(tmp_path / "linreg")]) == 0
    capsys.readouterr()
    fresh = tmp_path / "fresh"
    for plan, name in ((BOB, "bob2"), (LINREG, "linreg2")):
        run = _fresh_bobc(["build", str(plan), "-o", str(tmp_path / name)], fresh)
        assert run.returncode == 0, run.stderr
    in_process = _listings(shared, monkeypatch)
    assert in_process == _listings(fresh, monkeypatch)
    assert any("linreg-sgd.sass" in path for listing in in_process.values() for path, _ in listing)


def test_a_commands_evaluation_step_limit_ends_with_it(tmp_path, monkeypatch, capsys):
    """`--max-evaluation-steps` is one command's: the next main() call without it has the
    default limit, and passes where a fresh `bobc check` does."""
    monkeypatch.setenv("BOBC_CACHE_DIR", "off")
    plan = str(REPO / "examples" / "linear_regression" / "LinReg" / "Model.bob")
    assert main(["check", plan, "--max-evaluation-steps", "100"]) == 1
    assert "more than the limit of 100" in capsys.readouterr().err
    fresh = _fresh_bobc(["check", plan], "off")
    assert fresh.returncode == 0, fresh.stderr
    assert main(["check", plan]) == 0, capsys.readouterr().err


def _compiler_on_path(folder: Path, real: str, tag: str, log: Path) -> None:
    """A `gcc` in `folder` (a new file each time, as an upgrade installs one) that logs its
    arguments after `tag`, then runs the real compiler."""
    folder.mkdir(exist_ok=True)
    made = folder / "gcc.new"
    made.write_text(f'#!/bin/sh\necho "{tag} $*" >> "{log}"\nexec "{real}" "$@"\n')
    made.chmod(0o755)
    made.replace(folder / "gcc")


@needs_gcc
def test_a_compiler_replaced_between_builds_is_another_compiler(tmp_path, monkeypatch, capsys):
    """A gcc upgraded while the process lives: its next build compiles the runtime with the new
    one, as a fresh process does (its driver's stamp is another), never links the old one's objects."""
    real = shutil.which("gcc")
    bin_folder, log = tmp_path / "bin", tmp_path / "gcc.log"
    monkeypatch.setenv("PATH", f"{bin_folder}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("BOBC_CACHE_DIR", str(tmp_path / "cache"))
    _compiler_on_path(bin_folder, real, "old", log)
    assert main(["build", str(LINREG), "-o", str(tmp_path / "a")]) == 0
    _compiler_on_path(bin_folder, real, "new", log)
    assert main(["build", str(LINREG), "-o", str(tmp_path / "b")]) == 0
    capsys.readouterr()
    runtime = str(REPO / "runtime_c" / "host_runtime.c")
    compiled = [line.split()[0] for line in log.read_text().splitlines() if f"-c {runtime}" in line]
    assert compiled == ["old", "new"]


@needs_gcc
@pytest.mark.parametrize("cached", [False, True])
def test_an_edit_that_keeps_size_and_mtime_is_built(tmp_path, monkeypatch, capsys, cached):
    """A module rewritten with bytes of the same size and its mtime kept (cp -p, rsync -t, tar; or
    two writes in one clock tick): the next build in the process builds the new text, byte for
    byte what a fresh process builds from it, not the tree parsed before."""
    cache_folder = tmp_path / "cache" if cached else "off"
    monkeypatch.setenv("BOBC_CACHE_DIR", str(cache_folder))
    shutil.copytree(REPO / "examples" / "linear_regression" / "LinReg", tmp_path / "LinReg")
    plan, model = tmp_path / "LinReg" / "Build" / "NativeHost.bob", tmp_path / "LinReg" / "Model.bob"
    assert main(["build", str(plan), "-o", str(tmp_path / "a"), "--emit-c", str(tmp_path / "a.c")]) == 0
    before = model.stat()
    text = model.read_text()
    edited = text.replace("linRegUpdatesPerInvocation : Nat = 20", "linRegUpdatesPerInvocation : Nat = 30")
    assert edited != text and len(edited) == len(text)
    model.write_text(edited)
    os.utime(model, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert (model.stat().st_size, model.stat().st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    assert main(["build", str(plan), "-o", str(tmp_path / "b"), "--emit-c", str(tmp_path / "b.c")]) == 0
    capsys.readouterr()
    fresh = _fresh_bobc(["build", str(plan), "-o", str(tmp_path / "f"), "--emit-c", str(tmp_path / "f.c")], "off")
    assert fresh.returncode == 0, fresh.stderr
    assert (tmp_path / "f.c").read_bytes() != (tmp_path / "a.c").read_bytes()
    assert (tmp_path / "b.c").read_bytes() == (tmp_path / "f.c").read_bytes()
    assert (tmp_path / "b").read_bytes() == (tmp_path / "f").read_bytes()


def test_each_program_has_its_own_evaluation_step_budget(monkeypatch):
    """docs/limits.md: evaluation steps per program.  Two programs loaded in one process: the
    check of one draws on its own budget only, not on what the other's check used (the documented
    Python API, docs/language.md)."""
    from bobc.language import core, limits, load_program
    from bobc.targets import SM86

    monkeypatch.setenv("BOBC_CACHE_DIR", "off")
    model = REPO / "examples" / "linear_regression" / "LinReg" / "Model.bob"
    alone = load_program(model, target=SM86)
    alone.check()
    used = core._fuel[1] - core._fuel[0]
    assert used > 0
    monkeypatch.setattr(limits, "EVALUATION_STEPS", used * 3 // 2)   # one check fits, two do not
    first, second = load_program(model, target=SM86), load_program(model, target=SM86)
    second.check()
    first.check()                       # refused when its budget was the one second used
    assert first._checked and second._checked


@needs_gcc
def test_builds_in_two_threads_give_what_each_gives_alone(tmp_path, monkeypatch, capsys):
    """bobc.cli.main called from two threads at once: both builds succeed, each host byte for
    byte what a fresh process builds (before: one command's temporaries folder was removed under
    the other, "the C compiler failed ... No such file or directory")."""
    import threading

    monkeypatch.setenv("BOBC_CACHE_DIR", str(tmp_path / "cache"))
    plans = {"linreg": LINREG, "bob": BOB}
    codes: dict = {}
    threads = [threading.Thread(target=lambda name=name, plan=plan: codes.setdefault(
        name, main(["build", str(plan), "-o", str(tmp_path / name), "--emit-c", str(tmp_path / f"{name}.c")])))
        for name, plan in plans.items()]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert codes == {"linreg": 0, "bob": 0}, capsys.readouterr().err
    for name, plan in plans.items():
        fresh = _fresh_bobc(["build", str(plan), "-o", str(tmp_path / f"{name}-fresh"), "--emit-c",
                             str(tmp_path / f"{name}-fresh.c")], "off")
        assert fresh.returncode == 0, fresh.stderr
        assert (tmp_path / name).read_bytes() == (tmp_path / f"{name}-fresh").read_bytes()
        assert (tmp_path / f"{name}.c").read_bytes() == (tmp_path / f"{name}-fresh.c").read_bytes()


def test_the_nvidia_tool_named_by_the_environment_now_is_the_one_used(tmp_path, monkeypatch):
    """BOBC_NVDISASM set, changed or unset while the process lives: each later look-up follows it
    (README: BOBC_NVDISASM names the nvdisasm), not the first one's answer."""
    from bobc import nvtools

    monkeypatch.setenv("BOBC_NVDISASM", str(tmp_path / "first"))
    assert nvtools.nvdisasm() == str(tmp_path / "first")
    monkeypatch.setenv("BOBC_NVDISASM", str(tmp_path / "second"))
    assert nvtools.nvdisasm() == str(tmp_path / "second")
    monkeypatch.setenv("BOBC_PTXAS", str(tmp_path / "ptxas"))
    assert nvtools.ptxas() == str(tmp_path / "ptxas")


@needs_gcc
def test_a_full_cache_folder_is_one_commands_story(tmp_path, monkeypatch, capsys):
    """The cache folder full during one command (warned, nothing stored), then freed: the next
    command of the process stores its objects in the cache again, as a fresh process does; never
    a process that compiles outside the cache for good, silently."""
    real = shutil.which("gcc")
    cache_folder, full = tmp_path / "cache", tmp_path / "full"
    bin_folder = tmp_path / "bin"
    bin_folder.mkdir()
    (bin_folder / "gcc").write_text(f"""#!/bin/sh
if [ -e "{full}" ]; then for word in "$@"; do
  case "$word" in {cache_folder}/*) echo "as: Fatal error: can't write 17 bytes to section .text of $word: 'No space left on device'" >&2; exit 1;; esac
done; fi
exec "{real}" "$@"
""")
    (bin_folder / "gcc").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_folder}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("BOBC_CACHE_DIR", str(cache_folder))
    full.touch()
    assert main(["build", str(LINREG), "-o", str(tmp_path / "a")]) == 0
    assert "has no room" in capsys.readouterr().err
    assert not (cache_folder / "runtime-objects").exists() or not list((cache_folder / "runtime-objects").iterdir())
    full.unlink()
    assert main(["build", str(LINREG), "-o", str(tmp_path / "b")]) == 0
    said = capsys.readouterr().err
    assert "no room" not in said and "(once: later builds with this runtime and C compiler reuse it" in said
    assert [p for p in (cache_folder / "runtime-objects").iterdir() if not p.name.startswith(".")]


# ---- probe s36 inprocess2 ----

WHOLE_PROGRAM_MODULE = "Hardware/Nvidia/SM86/Command/WholeProgramPlan.bob"


def test_an_edit_to_the_library_is_seen_by_the_next_command(tmp_path, monkeypatch, capsys):
    """A plan root holding its own copy of a library module (the library's text) and BOBC_SPECS a
    library that renames one of the family's fields: refused (the copy lacks the library's field).
    The library edited back, or its module file removed and put back: the next `check` of the
    process gives what a fresh process gives (exit 0), not what the library held at its first look."""
    library, root = tmp_path / "specs", tmp_path / "root"
    shutil.copytree(REPO / "specs", library)
    shutil.copytree(REPO / "examples" / "linear_regression" / "LinReg", root / "LinReg")
    text = (REPO / "specs" / WHOLE_PROGRAM_MODULE).read_text(encoding="utf-8")
    (root / WHOLE_PROGRAM_MODULE).parent.mkdir(parents=True)
    (root / WHOLE_PROGRAM_MODULE).write_text(text, encoding="utf-8")
    old = "field unrestricted nvidiaWholeProgramComponent :"
    assert text.count(old) == 1
    monkeypatch.setenv("BOBC_SPECS", str(library))
    monkeypatch.setenv("BOBC_CACHE_DIR", "off")
    monkeypatch.chdir(root)
    argv = ["check", "LinReg/Build/NativeHost.bob", "--target", "sm_86"]
    fresh = _fresh_bobc(argv, "off")
    assert fresh.returncode == 0, fresh.stderr

    (library / WHOLE_PROGRAM_MODULE).write_text(text.replace(old, "field unrestricted nvidiaWholeProgramPiece :"),
                                                encoding="utf-8")
    assert main(argv) == 1
    assert "lacks field nvidiaWholeProgramPiece" in capsys.readouterr().err
    (library / WHOLE_PROGRAM_MODULE).write_text(text, encoding="utf-8")
    assert main(argv) == 0, capsys.readouterr().err

    (library / WHOLE_PROGRAM_MODULE).unlink()       # the plan root's copy is then no library module
    assert main(argv) == 1
    assert "own family NvidiaWholeProgramPlan" in capsys.readouterr().err
    (library / WHOLE_PROGRAM_MODULE).write_text(text, encoding="utf-8")
    assert main(argv) == 0, capsys.readouterr().err


def test_the_library_a_place_walks_out_of_is_the_one_bobc_specs_names_now(tmp_path, monkeypatch):
    """extract.written skips the places inside the library (a helper's body) for the plan's own:
    after it ran with bobc's own specs/, BOBC_SPECS set to another library makes a place inside
    that library the library's (None alone), as in a fresh process."""
    from bobc.errors import Span
    from bobc.language.modules import specs_folder
    from bobc.plan.extract import written

    monkeypatch.delenv("BOBC_SPECS", raising=False)
    own = Span(str(specs_folder() / "Std" / "Natural.bob"), 1, 1, 1, 2)
    assert written(own) is None
    other = tmp_path / "specs"
    other.mkdir()
    helper = Span(str(other / "Std" / "Natural.bob"), 1, 1, 1, 2)
    plan = Span(str(tmp_path / "Plan.bob"), 3, 1, 3, 2)
    assert written(helper, plan) is helper          # not a library while BOBC_SPECS is unset
    monkeypatch.setenv("BOBC_SPECS", str(other))
    assert written(helper, plan) is plan
    assert written(own, plan) is own


def _other_nvdisasm(folder: Path, real: str) -> Path:
    """An nvdisasm (as another version would be) whose text differs from `real`'s: EXIT -> EXITED."""
    tool = folder / "nvdisasm-other"
    tool.write_text(f"#!/bin/sh\n'{real}' \"$@\" | sed 's/EXIT/EXITED/g'\n")
    tool.chmod(0o755)
    return tool


def test_another_nvdisasm_later_in_the_process_gives_its_own_text(tmp_path, monkeypatch, capsys):
    """`bobc dump` with the installed nvdisasm, then with BOBC_NVDISASM naming another one: the
    second dump's instruction texts are the other nvdisasm's, byte for byte what a fresh process
    prints, not the texts the first one printed for the same code."""
    from bobc import nvtools

    real = nvtools.nvdisasm()
    if real is None:
        pytest.skip("nvdisasm not installed")
    monkeypatch.delenv("BOBC_NVDISASM", raising=False)
    images = str(REPO / "tests" / "golden" / "bob-sm_90")
    assert main(["dump", images]) == 0
    first = capsys.readouterr().out
    other = _other_nvdisasm(tmp_path, real)
    monkeypatch.setenv("BOBC_NVDISASM", str(other))
    fresh = _fresh_bobc(["dump", images], "off")
    assert fresh.returncode == 0, fresh.stderr
    assert "EXITED" in fresh.stdout and fresh.stdout != first
    assert main(["dump", images]) == 0
    assert capsys.readouterr().out == fresh.stdout


def test_the_simulators_texts_are_the_nvdisasm_of_now(tmp_path, monkeypatch):
    """bobc sim's listing of a code (sim/sass_frontend.disassembly_text), read with the installed
    nvdisasm and then with BOBC_NVDISASM naming another: the second is the other nvdisasm's own
    listing (run by hand here), and a broken nvdisasm is refused, as in a fresh process."""
    from bobc import nvtools
    from bobc.nvidia import decode
    from bobc.sim.sass_frontend import ToolMissing, disassembly_text

    real = nvtools.nvdisasm()
    if real is None:
        pytest.skip("nvdisasm not installed")
    monkeypatch.delenv("BOBC_NVDISASM", raising=False)
    images = decode.load_images(REPO / "tests" / "golden" / "bob-sm_90")
    code = decode.region_code(images, images.manifest["regions"][0])
    (tmp_path / "code.bin").write_bytes(code)
    first = disassembly_text(code, "SM90")
    other = _other_nvdisasm(tmp_path, real)
    by_hand = subprocess.run([str(other), "-b", "SM90", str(tmp_path / "code.bin")], capture_output=True, text=True,
                             check=True).stdout
    assert by_hand != first and "EXITED" in by_hand
    monkeypatch.setenv("BOBC_NVDISASM", str(other))
    assert disassembly_text(code, "SM90") == by_hand
    broken = tmp_path / "nvdisasm-broken"
    broken.write_text("#!/bin/sh\necho 'nvdisasm fatal : broken' >&2\nexit 1\n")
    broken.chmod(0o755)
    monkeypatch.setenv("BOBC_NVDISASM", str(broken))
    with pytest.raises(ToolMissing, match="does not work: it fails on one NOP .*broken"):
        disassembly_text(code, "SM90")       # refused by its path, exit 1 (probe s36 exitcodes)


def test_each_command_says_nvdisasm_is_not_installed(monkeypatch, capsys):
    """No nvdisasm: every `bobc dump` and `bobc diff` of the process says so once on stderr (README),
    as each does in a fresh process without nvdisasm -- not only the process's first."""
    from bobc import nvtools
    from bobc.nvidia import decode

    golden = REPO / "tests" / "golden"
    argv = ["dump", str(golden / "bob-sm_90")]
    without = ("import sys; from bobc import nvtools; nvtools.find_tool = lambda name: None; "
               "from bobc.cli import main; sys.exit(main(sys.argv[1:]))")
    environment = {**os.environ, "PYTHONPATH": str(REPO / "compiler"), "BOBC_CACHE_DIR": "off"}
    fresh = subprocess.run([sys.executable, "-c", without, *argv], env=environment, capture_output=True, text=True,
                           timeout=300)
    assert fresh.returncode == 0 and fresh.stderr == decode.NOT_INSTALLED_NOTICE + "\n", fresh.stderr
    monkeypatch.setattr(nvtools, "find_tool", lambda name: None)
    for command, code in ((argv, 0), (argv, 0), (["diff", str(golden / "bob-sm_90"), str(golden / "bob-sm_86")], 1)):
        assert main(command) == code
        assert capsys.readouterr().err.startswith(fresh.stderr)


def test_a_compiles_structure_bounds_end_with_it(tmp_path, monkeypatch, capsys):
    """A `check` registers the launch and submission bounds (pipeline.load) for its own evaluation:
    a later `bobc eval` of the process prints the launch count of a schedule past the bound, as
    a fresh `bobc eval` does, not the check's refusal."""
    monkeypatch.setenv("BOBC_CACHE_DIR", "off")
    shutil.copytree(REPO / "examples" / "linear_regression" / "LinReg", tmp_path / "LinReg")
    model = tmp_path / "LinReg" / "Model.bob"
    text = model.read_text(encoding="utf-8")
    old = "def linRegUpdatesPerInvocation : Nat = 20"
    assert text.count(old) == 1
    model.write_text(text.replace(old, "def linRegUpdatesPerInvocation : Nat = 33000"), encoding="utf-8")
    argv = ["eval", str(tmp_path / "LinReg" / "Build" / "NativeHost.bob"), "lrLaunchCount"]
    fresh = _fresh_bobc(argv, "off")
    assert (fresh.returncode, fresh.stdout) == (0, "66002\n"), fresh.stderr      # 2 + 2 x 33,000
    assert main(["check", str(LINREG)]) == 0
    capsys.readouterr()
    assert main(argv) == 0
    assert capsys.readouterr().out == fresh.stdout


def test_a_library_compiles_structure_bounds_do_not_reach_a_command(tmp_path, monkeypatch, capsys):
    """Bounds registered outside cli.main (a library caller's pipeline.compile_plan registers them
    through pipeline.load, as every test compiling a plan in process does) are not in force in a
    later command: `bobc eval` prints the launch count of a schedule past the bound, as a fresh
    process does (in CI this test's neighbour failed once a test before it had compiled a plan)."""
    from bobc.certify.limits import bound_language_structures
    from bobc.language import limits

    monkeypatch.setenv("BOBC_CACHE_DIR", "off")
    shutil.copytree(REPO / "examples" / "linear_regression" / "LinReg", tmp_path / "LinReg")
    model = tmp_path / "LinReg" / "Model.bob"
    text = model.read_text(encoding="utf-8")
    model.write_text(text.replace("def linRegUpdatesPerInvocation : Nat = 20",
                                  "def linRegUpdatesPerInvocation : Nat = 33000"), encoding="utf-8")
    saved = dict(limits.STRUCTURE_BOUNDS)
    try:
        bound_language_structures()
        assert main(["eval", str(tmp_path / "LinReg" / "Build" / "NativeHost.bob"), "lrLaunchCount"]) == 0
        assert capsys.readouterr().out == "66002\n"            # 2 + 2 x 33,000, as a fresh process
        assert "NvidiaLaunchSchedule" in limits.STRUCTURE_BOUNDS       # the caller's bounds, put back
    finally:
        limits.STRUCTURE_BOUNDS.clear()
        limits.STRUCTURE_BOUNDS.update(saved)


def test_the_recursion_limit_is_the_callers_again_after_a_command(tmp_path, monkeypatch, capsys):
    """A command's evaluation raises the recursion limit (language/program.py); after it the caller's
    is back, so the next command stores in the cache what a fresh process stores: a module nested
    195 deep (within the nesting limit), whose syntax tree is too deep to pickle at the default limit,
    leaves no parsed/ entry, in process as in a fresh process."""
    module = tmp_path / "Deep.bob"
    depth = 195
    module.write_text("module Deep\n\ndef deepValue = " + "(nat-add 1 " * depth + "0" + ")" * depth + "\n",
                      encoding="utf-8")
    fresh_cache, own_cache = tmp_path / "fresh", tmp_path / "own"
    fresh = _fresh_bobc(["eval", str(module), "deepValue"], fresh_cache)
    assert (fresh.returncode, fresh.stdout) == (0, f"{depth}\n"), fresh.stderr

    before = sys.getrecursionlimit()        # what an earlier test of this process (the language API) left
    limit = subprocess.run([sys.executable, "-c", "import sys; print(sys.getrecursionlimit())"], capture_output=True,
                           text=True, check=True).stdout
    sys.setrecursionlimit(int(limit))       # a fresh interpreter's
    try:
        monkeypatch.setenv("BOBC_CACHE_DIR", "off")
        assert main(["check", str(REPO / "examples" / "linear_regression" / "LinReg" / "Model.bob")]) == 0
        assert sys.getrecursionlimit() == int(limit)
        monkeypatch.setenv("BOBC_CACHE_DIR", str(own_cache))
        assert main(["eval", str(module), "deepValue"]) == 0
        assert capsys.readouterr().out.endswith(fresh.stdout)
    finally:
        sys.setrecursionlimit(before)

    def entries(folder):
        return sorted(p.name for p in (folder / "parsed").iterdir()) if (folder / "parsed").is_dir() else []
    assert len(entries(own_cache)) == len(entries(fresh_cache))


def test_a_second_projects_reference_kernels_are_the_module_registered(tmp_path, monkeypatch, capsys):
    """Two copies of examples/linear_regression run with `bobc run --reference` in one process,
    the second's reference_kernels.py pickling an object of its own class in a kernel: the second
    run writes what a fresh process writes, byte for byte (the first project's module, registered
    under the same name, was put back after the second loaded: pickle found the first's)."""
    monkeypatch.setenv("BOBC_CACHE_DIR", "off")
    for name in ("first", "second"):
        shutil.copytree(REPO / "examples" / "linear_regression", tmp_path / name,
                        ignore=shutil.ignore_patterns("__pycache__"))
    kernels = tmp_path / "second" / "reference_kernels.py"
    text = kernels.read_text(encoding="utf-8")
    assert text.count("\ndef sgd(memory, launch):\n") == 1
    kernels.write_text(text.replace("\ndef sgd(memory, launch):\n", (
        "\nimport dataclasses\nimport pickle\n\n\n@dataclasses.dataclass\nclass Step:\n    count: int\n\n\n"
        "def sgd(memory, launch):\n    assert pickle.loads(pickle.dumps(Step(1))) == Step(1)\n")), encoding="utf-8")
    record = tmp_path / "record.bin"
    subprocess.run([sys.executable, str(REPO / "examples" / "linear_regression" / "make_record.py"), "-o", str(record)],
                   check=True, timeout=300)

    def argv(name, out):
        folder = tmp_path / out
        folder.mkdir()
        return ["run", str(tmp_path / name / "LinReg" / "Build" / "NativeHost.bob"), "train", "--reference",
                "--input", str(record), "--checkpoint-out", str(folder / "checkpoint.bin"),
                "--result", str(folder / "result.bin"), "--predictions", str(folder / "predictions.bin")]
    fresh = _fresh_bobc(argv("second", "fresh"), "off")
    assert fresh.returncode == 0, fresh.stderr
    assert main(argv("first", "in-first")) == 0, capsys.readouterr().err
    assert main(argv("second", "in-second")) == 0, capsys.readouterr().err
    for name in ("checkpoint.bin", "result.bin", "predictions.bin"):
        assert (tmp_path / "in-second" / name).read_bytes() == (tmp_path / "fresh" / name).read_bytes()


def test_each_command_sweeps_the_caches_leftovers(tmp_path, monkeypatch, capsys):
    """A `.tmp-*` leftover (a killed build's, held by no process) put in the cache after a command of
    the process: the next command that writes an entry removes it, as a fresh process does
    (docs/cache.md), not only the process's first."""
    own = tmp_path / "cache"
    monkeypatch.setenv("BOBC_CACHE_DIR", str(own))
    model = REPO / "examples" / "linear_regression" / "LinReg" / "Model.bob"
    assert main(["check", str(model)]) == 0
    leftover = own / "checked" / ".tmp-of-a-killed-build"
    leftover.write_bytes(b"half an entry")
    shutil.copytree(own, tmp_path / "fresh")
    argv = ["check", str(LINREG), "--target", "sm_86"]           # writes new entries
    fresh = _fresh_bobc(argv, tmp_path / "fresh")
    assert fresh.returncode == 0, fresh.stderr
    assert not (tmp_path / "fresh" / "checked" / leftover.name).exists()
    assert main(argv) == 0
    capsys.readouterr()
    assert not leftover.exists()
