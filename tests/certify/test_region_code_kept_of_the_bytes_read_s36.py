"""The certifier's kept SHA-256 of a kernel's code (certify._identity_code, `region-code/`) is the
code of the bytes its key names (probe s36 simwords finding 7).

It reads the source's bytes for the key, then assembles the source, which reads it again: a source
edited in between (an editor saving during a build) stored the new code's digest under the old
bytes' key, and a later build of the old bytes (the edit undone) refused its own kernel's region,
"machine code is not its identity's kernel", until the cache was emptied.  The oracle: the
digest of the old bytes' assembly with the cache off.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

from bobc import certify, kernel_cache
from bobc.targets import target_named

REPO = Path(__file__).resolve().parents[2]
PREDICT = REPO / "examples/linear_regression/LinReg/kernels/linreg-predict.sass"


def test_a_source_edited_while_it_is_assembled_keeps_no_digest_under_its_old_bytes(tmp_path, cache_dir,
                                                                                   monkeypatch):
    target = target_named("sm_90")
    source = tmp_path / "linreg-predict.sass"
    old = PREDICT.read_text()
    new = old.replace("c[0x0][RZ+param+0x18]", "c[0x0][RZ+param+0x20]")
    source.write_text(old)
    assemble = kernel_cache.assemble_kernel

    def edited_meanwhile(path, target, launched=True):
        source.write_text(new)
        return assemble(path, target, launched)

    monkeypatch.setattr(kernel_cache, "assemble_kernel", edited_meanwhile)
    certify._identity_code(source, target)              # read the old bytes, assembled the new ones
    monkeypatch.setattr(kernel_cache, "assemble_kernel", assemble)
    source.write_text(old)                              # the edit undone
    digest, _ = certify._identity_code(source, target)
    monkeypatch.setenv("BOBC_CACHE_DIR", "off")
    assert digest == hashlib.sha256(bytes(assemble(source, target).code)).hexdigest()
