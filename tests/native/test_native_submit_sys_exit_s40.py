"""`bobc run PLAN native --reference --kernels FILE`: a SUBMIT that calls sys.exit() ends the
program as any other exception out of SUBMIT does -- the GPU not finishing (status 4), one line
naming the file and its line, nothing published -- not bobc with the kernels' own status (probe
s40 newuser4 finding 1: `except Exception` let SystemExit through, so `sys.exit(0)` was a silent
exit 0 with nothing written).  The expected line is the one test_native_device_program.py holds
every other exception out of SUBMIT to."""
from __future__ import annotations

from native_device_program import program_bytes
from native_helpers import run_reference


def test_a_submit_that_calls_sys_exit_is_one_line_naming_the_file(tmp_path):
    from bobc.commands.run import load_module
    from bobc.targets import SM90

    code, (_, _, _, entries) = program_bytes(bytes(range(16)), SM90, tmp_path)
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "in.bin").write_bytes(bytes(256))
    (folder / "kernels.py").write_text("import sys\n\n\ndef SUBMIT(machine, entry):\n    sys.exit(0)\n")
    gpu = load_module(str(folder / "kernels.py"), "bobc_native_gpu_test_s40", "--kernels").SUBMIT
    try:
        outcome = run_reference(code, folder, ["in.bin", "out1.bin", "out2.bin", "count.bin"], gpu=gpu)
    except SystemExit as exit_:
        raise AssertionError(f"the kernels' sys.exit({exit_.code}) ended the run") from None
    assert outcome.status == 4
    assert outcome.stderr == (f"native: command 15 (Submit): submission 0 (entry 0x{entries[0]:x}): --kernels "
                              f"kernels.py: SUBMIT raised SystemExit at line 5: sys.exit(0) would end bobc itself; "
                              f"nothing was published\n").encode()
    assert "out1.bin" not in outcome.files
