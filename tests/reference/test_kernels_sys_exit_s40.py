"""A user's reference kernels that call sys.exit() are refused in one line, never bobc's own exit
(probe s40 newuser4 finding 1).

`bobc run PLAN train --reference` loads the model's Python file and calls its kernels; both were
guarded by `except Exception`, which SystemExit (a BaseException) passes through.  A kernel calling
`sys.exit(0)` ended bobc with status 0, no message and no file published -- a "successful" run
that wrote nothing -- and a kernels file ending `sys.exit(3)` (a script's `sys.exit(main())`
without a `__main__` guard) ended it with 3, the host's "bad input record" code.

The expected values are the platform's documented contract, not bobc's output: a kernels file that
cannot be loaded is exit 2 naming the file, a kernel that fails is exit 1 naming the kernel, its
launch and its file:line, and nothing is published (docs/host-steps.md, "Reference kernels")."""
from __future__ import annotations

from pathlib import Path

import pytest

from bobc.cli import main

# LinReg's plan, its outputs and the record folder, as the kernels-file loading tests set them up
from .test_kernels_file_loading_s38 import EXAMPLE, OUTPUTS, PLAN, folder  # noqa: F401


def _run(kernels: str) -> int:
    try:
        return main(["run", str(PLAN), "train", "--reference", "--input", "record.bin", *OUTPUTS,
                     "--kernels", kernels])
    except SystemExit as exit_:            # the defect: the user's sys.exit() became bobc's status
        return ("escaped", exit_.code)


def _published(folder: Path) -> list[str]:
    return [name for name in ("c.bin", "p.bin", "r.bin") if (folder / name).exists()]


@pytest.mark.parametrize("code", [0, 3])
def test_a_kernels_file_that_exits_while_loading_is_refused_naming_it(folder, capsys, code):
    (folder / "kernels.py").write_text(f"import sys\nKERNELS = {{}}\nsys.exit({code})\n")
    assert _run("kernels.py") == 2
    err = capsys.readouterr().err
    assert err.startswith(f"bobc run: error: cannot load --kernels kernels.py: SystemExit at line 3: "
                          f"sys.exit({code}) would end bobc itself\n"), err
    assert 'hint: put what runs the file as a script under `if __name__ == "__main__":`' in err
    assert _published(folder) == []


def test_a_kernel_that_exits_is_refused_naming_the_kernel_and_its_line(folder, capsys):
    source = (EXAMPLE / "reference_kernels.py").read_text()
    marker = "def sgd(memory, launch):\n"
    assert marker in source
    (folder / "kernels.py").write_text(source.replace(marker, marker + "    import sys; sys.exit(0)\n"))
    line = source[:source.index(marker)].count("\n") + 2
    assert _run("kernels.py") == 1
    err = capsys.readouterr().err
    assert err.startswith(f"bobc run: error: the reference kernel linreg-sgd failed at launch 2 (kernels.py:{line}): "
                          f"SystemExit: sys.exit(0) would end bobc itself\n"), err
    assert _published(folder) == []
