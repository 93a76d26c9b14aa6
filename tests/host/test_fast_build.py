"""The build's shortcuts (issue 21) change no byte: the runtime objects cached by
content hash link into the same executable gcc makes from all sources in one
command, and the images appended as sections read back through binutils."""
from __future__ import annotations

import os
import shutil
import stat
import subprocess

import pytest

from bobc import cache
from bobc.host import gcc, sections
from bobc.resources import shared_folder

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")

MAIN = '#include "lib.h"\n#include <stdio.h>\nint main(void) { printf("%d\\n", twice(21)); return 0; }\n'
LIB = '#include "lib.h"\nint twice(int x) { return 2 * x; }\n'
OTHER = '#include "lib.h"\nint unused_here(int x) { return x + 1; }\n'


@pytest.fixture
def project(tmp_path, monkeypatch):
    source = tmp_path / "src"
    source.mkdir()
    (source / "main.c").write_text(MAIN)
    (source / "lib.c").write_text(LIB)
    (source / "other.c").write_text(OTHER)
    (source / "lib.h").write_text("int twice(int x);\nint unused_here(int x);\n")
    monkeypatch.setenv("BOBC_CACHE_DIR", str(tmp_path / "cache"))
    return source


def one_command(source, output):
    """The oracle: every source in one gcc command, as bobc built hosts before the cache."""
    subprocess.run([gcc.compiler(), *gcc.CFLAGS, "-I", str(source), str(source / "main.c"), str(source / "lib.c"),
                    str(source / "other.c"), "-o", str(output), "-static", "-lm"], check=True)
    return output.read_bytes()


def build(source, output):
    gcc.build([source / "main.c"], [source], output, library=[source / "lib.c", source / "other.c"])
    return output.read_bytes()


def test_cached_objects_link_into_the_same_executable(project, tmp_path):
    expected = one_command(project, tmp_path / "oracle")
    assert build(project, tmp_path / "cold") == expected          # fills the cache
    entries = list((tmp_path / "cache" / gcc.CACHE_KIND).iterdir())
    assert [sorted(p.name for p in e.iterdir()) for e in entries] == [[cache.ENTRY_LISTING, "lib.o", "other.o"]]
    assert [sorted(p.name for p in e.iterdir()) for e in (tmp_path / "cache" / gcc.SOURCE_KIND).iterdir()] == \
        [[cache.ENTRY_LISTING, "main.o"]]
    assert build(project, tmp_path / "warm") == expected          # links the cached objects
    assert subprocess.run([str(tmp_path / "warm")], capture_output=True, text=True).stdout == "42\n"


def test_a_changed_header_is_a_new_entry(project, tmp_path):
    build(project, tmp_path / "first")
    (project / "lib.h").write_text("int twice(int x);\nint unused_here(int x);\n/* changed */\n")
    build(project, tmp_path / "second")
    assert len(list((tmp_path / "cache" / gcc.CACHE_KIND).iterdir())) == 2


def test_an_unwritable_cache_still_builds_the_same(project, tmp_path, monkeypatch):
    expected = one_command(project, tmp_path / "oracle")
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the cache folder would be")
    monkeypatch.setenv("BOBC_CACHE_DIR", str(blocked / "bobc"))
    before = set(os.listdir(os.environ.get("TMPDIR", "/tmp")))
    assert build(project, tmp_path / "out") == expected
    leftovers = {n for n in set(os.listdir(os.environ.get("TMPDIR", "/tmp"))) - before
                 if n.startswith(("bobc-" + gcc.CACHE_KIND, "bobc-" + gcc.SOURCE_KIND))}
    assert not leftovers
    monkeypatch.setenv("BOBC_CACHE_DIR", "off")
    assert build(project, tmp_path / "off") == expected


def test_a_damaged_entry_is_not_used(project, tmp_path):
    expected = one_command(project, tmp_path / "oracle")
    build(project, tmp_path / "first")
    entry = next((tmp_path / "cache" / gcc.CACHE_KIND).iterdir())
    (entry / "other.o").unlink()
    assert build(project, tmp_path / "second") == expected


def test_cache_writes_are_whole_or_absent(tmp_path, monkeypatch):
    monkeypatch.setenv("BOBC_CACHE_DIR", str(tmp_path / "c"))
    key = cache.digest("a", b"b")
    assert cache.read("k", key) is None
    cache.write("k", key, b"payload")
    assert cache.read("k", key) == b"payload"
    assert [p.name for p in (tmp_path / "c" / "k").iterdir()] == [key]     # no temporary left
    assert cache.digest("ab", b"") != cache.digest("a", b"b")               # parts are delimited


def test_embedded_sections_are_what_objcopy_extracts(project, tmp_path):
    host = tmp_path / "host"
    build(project, host)
    images = {"program": bytes(range(256)) * 5 + b"\x01", "manifest": b'{"target": "sm_90"}'}
    sections.embed(host, images)
    for name, content in images.items():
        dumped = tmp_path / f"{name}.bin"
        subprocess.run(["objcopy", "--dump-section", f".bobc.{name}={dumped}", str(host), str(tmp_path / "copy")],
                       check=True)
        assert dumped.read_bytes() == content
    assert stat.S_IMODE(host.stat().st_mode) == 0o755
    assert subprocess.run([str(host)], capture_output=True, text=True).stdout == "42\n"
    with pytest.raises(sections.HostImageError, match="already has a section .bobc.program"):
        sections.embed(host, {"program": b"again"})


PROBE = r'''
#include <stdio.h>
#include "nv_shim.h"
DECLARED
int main(void)
{
    static rt_gpu g;
    int rc = rt_gpu_open(&g, rt_target_named("sm_90"), NULL);
    rt_gpu_close(&g);
    printf("rc %d\n", rc);
    return 0;
}
'''


@pytest.mark.parametrize("declared, env, said", [
    ("", {}, "mapping: RM"),
    ("const int rt_plan_gpu_mapping = RT_GPU_MAPPING_UVM;", {}, "mapping: UVM"),
    ("", {"BOBC_GPU_MAPPING": "uvm"}, "mapping: UVM"),
    ("const int rt_plan_gpu_mapping = RT_GPU_MAPPING_UVM;", {"BOBC_GPU_MAPPING": "rm"}, "mapping: UVM"),
])
def test_the_plan_or_the_environment_picks_the_bring_up(tmp_path, monkeypatch, declared, env, said):
    """A host whose plan needs UVM defines rt_plan_gpu_mapping; without it the RM bring-up is
    the default; BOBC_GPU_MAPPING overrides only a plan that did not ask (docs/runtime.md)."""
    monkeypatch.setenv("BOBC_CACHE_DIR", str(tmp_path / "cache"))
    runtime = shared_folder("runtime_c")
    source = tmp_path / "probe.c"
    source.write_text(PROBE.replace("DECLARED", declared))
    gcc.build([source], [runtime], tmp_path / "probe", static=False,
              library=[runtime / name for name in ("nv_status.c", "nv_targets.c", "nv_shim.c", "host_settings.c")])
    run = subprocess.run([str(tmp_path / "probe")], capture_output=True, text=True,
                         env={**os.environ, "BOBC_GPU_TRACE": "1", **env})
    assert said in run.stderr and run.returncode == 0, run.stderr


def test_an_unknown_bring_up_is_a_usage_error(tmp_path, monkeypatch):
    monkeypatch.setenv("BOBC_CACHE_DIR", str(tmp_path / "cache"))
    runtime = shared_folder("runtime_c")
    source = tmp_path / "probe.c"
    source.write_text(PROBE.replace("DECLARED", ""))
    gcc.build([source], [runtime], tmp_path / "probe", static=False,
              library=[runtime / name for name in ("nv_status.c", "nv_targets.c", "nv_shim.c", "host_settings.c")])
    run = subprocess.run([str(tmp_path / "probe")], capture_output=True, text=True,
                         env={**os.environ, "BOBC_GPU_MAPPING": "fast"})
    assert run.stdout == "rc 2\n"
    assert "BOBC_GPU_MAPPING=fast: expected rm or uvm" in run.stderr
