"""Python copies of runtime_c's facts, held to the C (probe s35 dedupe, finding 5).

Some of the C hosts' numbers and rules are restated in Python because the two sides cannot
share code: each Python constant below names the macro it copies in a comment, and until now no
test read that macro.  Here gcc evaluates each macro (so `(2 * RT_IO_MAX_FILES * ...)` is
evaluated as the C compiler does, not re-read by a pattern), and the path-shortening rule a
message applies to a path, written twice (runtime_c/host_io.c rt_io_shown, bobc.errors.shown),
is run on both sides over the same paths.  Skipped where gcc is not there.

Probe s37 dedupe2 (finding 1) added the native host's facts: the program format's bounds
(native_program.h, native_request.h), the host file's trailer (native_host.c), the exit codes
the reference interpreter gives (native_host.c's enum, rt_exit.h) and the strings both sides
write (STRING_MIRRORS, compared byte for byte).  A .c file's enum member is read by copying its
whole `enum { ... };` into the probe.

Probe s38 onetable (finding 5) added the checkpoint envelope's layout and hints (host_runtime.h,
host_runtime.c), the step bound, the peer's replay room and closing hint, and the exit codes of
the refusals bobc's reference host and simulator give as the plan host does (a class's
`exit_code`, listed as CLASS.exit_code).
"""
from __future__ import annotations

import importlib
import os
import re
import shutil
import subprocess

import pytest

# (Python module, its constant, runtime_c file that defines the macro, the macro)
MIRRORS = [
    ("bobc.errors", "SHOWN_BYTES", "host_io.h", "RT_IO_SHOWN_BYTES"),
    ("bobc.errors", "_SHOWN_HEAD", "host_io.h", "RT_IO_SHOWN_HEAD"),
    ("bobc.reference.safe_io", "NAME_ROOM", "host_io.h", "RT_IO_NAME_ROOM"),
    ("bobc.reference.safe_io", "JOURNAL_PAIRS", "host_io.h", "RT_IO_MAX_FILES"),
    ("bobc.reference.safe_io", "JOURNAL_PATH_BYTES", "host_io.h", "RT_IO_PATH_BYTES"),
    ("bobc.reference.safe_io", "JOURNAL_BYTES", "host_io.c", "JOURNAL_BYTES"),
    ("bobc.reference.safe_io", "LOCK_GRACE_MS", "host_io.c", "LOCK_GRACE_MS"),
    ("bobc.reference.plan_commands", "ERR_BYTES", "host_runtime.h", "RT_ERR_BYTES"),
    ("bobc.reference.settings", "SHOWN_BYTES", "host_settings.h", "RT_SETTING_SHOWN_BYTES"),
    ("bobc.sim.invocation", "RING_ENTRIES", "nv_shim.h", "RT_GPU_DEFAULT_RING_ENTRIES"),
    ("bobc.sim.invocation", "STAT_BYTES", "plan_host.c", "BOBC_STAT_BYTES"),
    ("bobc.plan.host", "SCALAR_STACK", "plan_fill.h", "BOBC_SCALAR_STACK"),
    ("bobc.sim.invocation", "STAMP_SLOTS", "plan_host.c", "BOBC_STAMP_SLOTS"),
    # the bounds every host reads its inputs under, and the checkpoint the host must read back
    ("bobc.reference.safe_io", "INPUT_LIMIT_BYTES", "host_io.h", "RT_IO_INPUT_LIMIT_BYTES"),
    ("bobc.certify.limits", "CHECKPOINT_FILE_BYTES", "host_io.h", "RT_IO_INPUT_LIMIT_BYTES"),
    # the native physical program's format and bounds (probe s37 dedupe2, finding 1)
    ("bobc.native.program", "VERSION", "native_program.h", "NP_VERSION"),
    ("bobc.native.program", "MAX_COMMANDS", "native_program.h", "NP_MAX_COMMANDS"),
    ("bobc.native.program", "MAX_SLOTS", "native_program.h", "NP_MAX_SLOTS"),
    ("bobc.native.program", "MAX_STATE", "native_program.h", "NP_MAX_STATE"),
    ("bobc.native.program", "MAX_REPEAT_NESTING", "native_program.h", "NP_MAX_REPEAT_NESTING"),
    ("bobc.native.program", "MAX_RING_ENTRIES", "native_program.h", "NP_MAX_RING_ENTRIES"),
    ("bobc.native.program", "MAX_OUTPUT_FILES", "native_program.h", "NP_MAX_OUTPUT_FILES"),
    ("bobc.native.program", "MAX_READ_BYTES", "native_program.h", "NP_MAX_READ_BYTES"),
    ("bobc.native.program", "REPEAT", "native_program.h", "NP_REPEAT"),
    ("bobc.native.request", "MAX_INITIALIZERS", "native_request.h", "NP_REQUEST_MAX_INITIALIZERS"),
    ("bobc.native.request", "MAX_CHUNKS", "native_request.h", "NP_REQUEST_MAX_CHUNKS"),
    ("bobc.native.request", "OUTPUT_LIMIT", "native_request.h", "NP_REQUEST_OUTPUT_LIMIT"),
    # the native host file's trailer and embedded images (native_host.c; bobc.native.artifact)
    ("bobc.native.artifact", "TRAILER_BYTES", "native_host.c", "TRAILER_BYTES"),
    ("bobc.native.artifact", "EMBED_HEADER_BYTES", "native_host.c", "EMBED_HEADER_BYTES"),
    ("bobc.native.artifact", "EMBED_FOOTER_BYTES", "native_host.c", "EMBED_FOOTER_BYTES"),
    ("bobc.native.artifact", "DAMAGED_EXIT", "native_host.c", "NP_EXIT_DAMAGED"),
    # the native host's exit codes and bounds as the reference interpreter gives them
    ("bobc.reference.native_program", "EXIT_INTERNAL", "native_host.c", "NP_EXIT_INTERNAL"),
    ("bobc.reference.native_program", "EXIT_FILE", "native_host.c", "NP_EXIT_FILE"),
    ("bobc.reference.native_program", "EXIT_DEVICE", "native_host.c", "NP_EXIT_DEVICE"),
    ("bobc.reference.native_program", "EXIT_WAIT", "native_host.c", "NP_EXIT_WAIT"),
    ("bobc.reference.native_program", "EXIT_PEER", "native_host.c", "NP_EXIT_PEER"),
    ("bobc.reference.native_program", "EXIT_WRITE", "native_host.c", "NP_EXIT_WRITE"),
    ("bobc.reference.native_program", "EXIT_DAMAGED", "native_host.c", "NP_EXIT_DAMAGED"),
    ("bobc.reference.native_program", "EXIT_FAULT", "native_host.c", "NP_EXIT_FAULT"),
    ("bobc.reference.native_program", "EXIT_NO_GPU", "rt_exit.h", "RT_EXIT_NO_GPU"),
    ("bobc.reference.native_program", "EXIT_GPU_FAULT", "rt_exit.h", "RT_EXIT_GPU_FAULT"),
    ("bobc.reference.native_program", "REQUEST_OPEN", "native_program.h", "NP_REQUEST_OPEN"),
    ("bobc.reference.native_program", "REQUEST_CHECKPOINT_PUBLISH", "native_program.h",
     "NP_REQUEST_CHECKPOINT_PUBLISH"),
    ("bobc.reference.native_program", "MAX_PEERS", "native_host.c", "MAX_PEERS"),
    ("bobc.reference.native_program", "MAX_MAPPINGS", "native_device.h", "NP_MAX_MAPPINGS"),
    # a request host's exit codes are the plan host's
    ("bobc.reference.native_request", "EXIT_INTERNAL", "rt_exit.h", "RT_EXIT_INTERNAL"),
    ("bobc.reference.native_request", "EXIT_USAGE", "rt_exit.h", "RT_EXIT_USAGE"),
    ("bobc.reference.native_request", "EXIT_INPUT", "rt_exit.h", "RT_EXIT_BAD_INPUT"),
    ("bobc.reference.native_request", "EXIT_CHECKPOINT", "rt_exit.h", "RT_EXIT_BAD_CHECKPOINT"),
    ("bobc.reference.native_request", "EXIT_FOREIGN", "rt_exit.h", "RT_EXIT_FOREIGN_CHECKPOINT"),
    ("bobc.reference.native_request", "EXIT_WRITE", "rt_exit.h", "RT_EXIT_WRITE_FAILED"),
    # probe s38 onetable (finding 5): the envelope's fixed header, the step bound, the peer's replay
    # room, and the exit codes of the refusals the reference host and the simulator share with the
    # plan host (a class's exit_code, named CLASS.exit_code)
    ("bobc.reference.envelope", "FIXED", "host_runtime.h", "RT_ENVELOPE_FIXED_BYTES"),
    ("bobc.certify.limits", "STEP_LIMIT", "host_io.h", "RT_IO_STEP_LIMIT"),
    ("bobc.reference.native_program", "PEER_REPLAY_BYTES", "native_peer.h", "NP_PEER_REPLAY_BYTES"),
    ("bobc.reference.errors", "BadInputRecord.exit_code", "rt_exit.h", "RT_EXIT_BAD_INPUT"),
    ("bobc.reference.errors", "BadCheckpoint.exit_code", "rt_exit.h", "RT_EXIT_BAD_CHECKPOINT"),
    ("bobc.reference.errors", "ForeignCheckpoint.exit_code", "rt_exit.h", "RT_EXIT_FOREIGN_CHECKPOINT"),
    ("bobc.reference.errors", "OutputWriteFailure.exit_code", "rt_exit.h", "RT_EXIT_WRITE_FAILED"),
    ("bobc.reference.host", "InputReadPastRecord.exit_code", "rt_exit.h", "RT_EXIT_BAD_INPUT"),
    ("bobc.reference.host", "AssertedWordDiffers.exit_code", "rt_exit.h", "RT_EXIT_GPU_FAULT"),
    ("bobc.sim.faults", "SimulationFault.exit_code", "rt_exit.h", "RT_EXIT_GPU_FAULT"),
    ("bobc.sim.faults", "HostStepFault.exit_code", "rt_exit.h", "RT_EXIT_INTERNAL"),
]
# (Python module, its bytes or str constant, runtime_c file, the string macro): compared byte for byte
STRING_MIRRORS = [
    ("bobc.native.program", "MAGIC", "native_program.h", "NP_MAGIC"),
    ("bobc.native.program", "SOCKADDR_HELP", "native_program.c", "NP_SOCKADDR_HELP"),
    ("bobc.native.artifact", "TRAILER_MAGIC", "native_host.c", "TRAILER_MAGIC"),
    ("bobc.native.artifact", "EMBED_MAGIC", "native_host.c", "EMBED_MAGIC"),
    # the checkpoint envelope's magic and trailer, what each refusal of one says to do, and the
    # line a peer's end mid-exchange ends with (probe s38 onetable, finding 5)
    ("bobc.reference.envelope", "MAGIC", "host_runtime.h", "RT_ENVELOPE_MAGIC"),
    ("bobc.reference.envelope", "TRAILER", "host_runtime.h", "RT_ENVELOPE_TRAILER"),
    ("bobc.reference.envelope", "HINT_COPY", "host_runtime.c", "HINT_COPY"),
    ("bobc.reference.envelope", "HINT_OURS", "host_runtime.c", "HINT_OURS"),
    ("bobc.reference.envelope", "HINT_FOREIGN", "host_runtime.c", "HINT_FOREIGN"),
    ("bobc.reference.native_program", "PEER_CLOSED_HINT", "native_peer.c", "NP_PEER_CLOSED_HINT"),
    ("bobc.reference.native_program", "PEER_CLOSED_UNHEARD_HINT", "native_peer.c", "NP_PEER_CLOSED_UNHEARD_HINT"),
]
HEADERS = ["host_io.h", "host_runtime.h", "host_settings.h", "nv_shim.h", "rt_exit.h", "native_program.h",
           "native_request.h", "native_device.h", "native_peer.h", "plan_fill.h"]


def _gcc_or_skip():
    if shutil.which("gcc") is None:
        pytest.skip("needs gcc")


def _definition(runtime, file: str, macro: str) -> str:
    """The definition of `macro` in a .c file (a .c file is not included whole: its own
    definitions are copied into the probe, after the headers they may use): its #define with any
    continued lines, or else the whole `enum { ... };` that names it."""
    text = (runtime / file).read_text()
    found = re.findall(rf"^#define\s+{macro}\b(?:.*\\\n)*.*$", text, re.MULTILINE)
    if not found:
        found = [block for block in re.findall(r"^enum\s*\{.*?^\};$", text, re.MULTILINE | re.DOTALL)
                 if re.search(rf"^\s*{macro}\s*=", block, re.MULTILINE)]
    assert len(found) == 1, f"runtime_c/{file} defines {macro} {len(found)} times"
    return found[0]


@pytest.fixture(scope="module")
def c_values(repo, tmp_path_factory):
    """Each macro of MIRRORS as the C compiler evaluates it."""
    _gcc_or_skip()
    runtime = repo / "runtime_c"
    own = list(dict.fromkeys(_definition(runtime, file, macro) for _, _, file, macro in MIRRORS + STRING_MIRRORS
                             if file.endswith(".c")))
    prints = "".join(f'    printf("{macro} %llu\\n", (unsigned long long)({macro}));\n' for _, _, _, macro in MIRRORS)
    prints += "".join(f'    hex("{macro}", {macro});\n' for _, _, _, macro in STRING_MIRRORS)
    hex_ = ("static void hex(const char *name, const char *s)\n{\n    printf(\"%s \", name);\n"
            "    for (; *s; s++)\n        printf(\"%02x\", (unsigned char)*s);\n    printf(\"\\n\");\n}\n")
    source = ("#include <stdio.h>\n" + "".join(f'#include "{h}"\n' for h in HEADERS) + "\n".join(own)
              + "\n" + hex_ + "int main(void)\n{\n" + prints + "    return 0;\n}\n")
    folder = tmp_path_factory.mktemp("mirrors")
    (folder / "probe.c").write_text(source)
    built = subprocess.run(["gcc", "-std=c11", "-D_DEFAULT_SOURCE", f"-I{runtime}", str(folder / "probe.c"),
                            "-o", str(folder / "probe")], capture_output=True, text=True)
    assert built.returncode == 0, built.stderr[-2000:]
    out = subprocess.run([str(folder / "probe")], capture_output=True, text=True, check=True).stdout
    lines = dict(line.split(" ", 1) for line in out.splitlines())
    strings = {macro for _, _, _, macro in STRING_MIRRORS}
    return {name: bytes.fromhex(value) if name in strings else int(value) for name, value in lines.items()}


def _value(module: str, constant: str):
    """`constant` of `module`: a name, or CLASS.attribute."""
    value = importlib.import_module(module)
    for name in constant.split("."):
        value = getattr(value, name)
    return value


@pytest.mark.parametrize("module, constant, file, macro", MIRRORS, ids=[m[1] + "=" + m[3] for m in MIRRORS])
def test_a_python_copy_of_a_runtime_macro_is_its_value(c_values, module, constant, file, macro):
    value = _value(module, constant)
    assert value == c_values[macro], f"{module}.{constant} is {value}; runtime_c/{file} {macro} is {c_values[macro]}"


@pytest.mark.parametrize("module, constant, file, macro", STRING_MIRRORS,
                         ids=[m[1] + "=" + m[3] for m in STRING_MIRRORS])
def test_a_python_copy_of_a_runtime_string_is_its_bytes(c_values, module, constant, file, macro):
    value = _value(module, constant)
    mine = value.encode("utf-8") if isinstance(value, str) else value
    assert mine == c_values[macro], f"{module}.{constant} is {value!r}; runtime_c/{file} {macro} is {c_values[macro]!r}"


def _paths() -> list[bytes]:
    """Paths around the rule's edges: at, under and over 128 bytes; a last name longer and shorter
    than the room beside the head; no slash; multi-byte characters across each cut; controls."""
    out = []
    for n in (1, 127, 128, 129, 130, 200, 5000):
        out.append(b"a" * n)
        out.append(b"/" + b"d" * max(n - 10, 0) + b"/name.bin")
        out.append(b"/start/" + "é".encode() * n + b"/c.bin")
        out.append(b"/s/" + b"x" * 60 + b"/" + "€".encode() * (n // 3 + 1))
        out.append(b"/s/" + "😀".encode() * (n // 4 + 1) + b"/tail\n\t\x7f")
    for shift in range(8):                      # a 4-byte character across the head's and the tail's cut
        out.append(b"h" * (28 + shift) + "😀".encode() * 20 + b"/" + b"t" * (40 + shift) + "😀".encode() * 3)
        out.append(b"/" + b"\xff\x80" * (70 + shift) + b"/" + b"\xc3" * shift)     # bytes that are no UTF-8
    return out


def test_a_shortened_path_is_the_same_on_both_sides(repo, tmp_path):
    """bobc.errors.shown and host_io.c rt_io_shown give the same bytes for every path."""
    _gcc_or_skip()
    from bobc.errors import shown

    runtime = repo / "runtime_c"
    (tmp_path / "shown.c").write_text(r'''#include "host_io.h"
#include <stdio.h>
#include <string.h>
/* one path a line, in hex; prints rt_io_shown's bytes the same way */
int main(void)
{
    static char line[80000], raw[40000], out[RT_IO_SHOWN_BYTES + 1];
    while (fgets(line, sizeof line, stdin)) {
        size_t n = strcspn(line, "\n") / 2;
        for (size_t i = 0; i < n; i++) {
            unsigned v;
            sscanf(line + 2 * i, "%2x", &v);
            raw[i] = (char)v;
        }
        raw[n] = 0;
        for (const unsigned char *p = (const unsigned char *)rt_io_shown(raw, out); *p; p++)
            printf("%02x", *p);
        printf("\n");
    }
    return 0;
}
''')
    sources = ["host_io.c", "host_runtime.c", "nv_status.c", "nv_targets.c", "nv_shim.c", "plan_fill.c",
               "host_settings.c"]
    built = subprocess.run(["gcc", "-std=c11", "-D_DEFAULT_SOURCE", f"-I{runtime}", str(tmp_path / "shown.c"),
                            *(str(runtime / s) for s in sources), "-lm", "-o", str(tmp_path / "shown")],
                           capture_output=True, text=True)
    assert built.returncode == 0, built.stderr[-2000:]
    paths = _paths()
    out = subprocess.run([str(tmp_path / "shown")], input="".join(p.hex() + "\n" for p in paths),
                         capture_output=True, text=True, check=True).stdout.splitlines()
    assert len(out) == len(paths)
    differing = [(path, bytes.fromhex(c), os.fsencode(shown(os.fsdecode(path))))
                 for path, c in zip(paths, out) if bytes.fromhex(c) != os.fsencode(shown(os.fsdecode(path)))]
    assert not differing, differing[:3]
