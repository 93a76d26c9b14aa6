"""An output path with a doubled '/' before its name ("no//o") in a folder that does not exist:
the C host names the folder as it takes it, the path up to its last '/' ("no/": runtime_c/host_io.c
rt_io_add_output), and the reference must say the same line (docs/native-host.md: the reference
says the host's messages).  The reference took the folder from os.path.split, which drops the
trailing '/' ("no"), so the two lines differed (session 40, seed 003's prediction host and seed
004's request host beside `bobc run ... native --reference`).  Expected: the C host's own stderr,
compared byte for byte by c_host_and_reference, and the folder spelt from the path by hand."""
from __future__ import annotations

import pytest

from native_helpers import c_host_and_reference, nat, physical_program

END, WRITE_FILE = 0, 15


@pytest.mark.parametrize("path, folder", [("no//o", "no/"), ("no/sub///o", "no/sub//")])
def test_an_output_in_a_missing_folder_names_the_folder_as_the_c_host_does(tmp_path, path, folder):
    code = physical_program(bytes([WRITE_FILE]) + nat(0) + nat(0) + nat(8) + bytes([END]))
    status, stderr = c_host_and_reference(tmp_path, code, [path])
    assert status == 8
    assert f"its folder {folder} does not exist; create it first".encode() in stderr
