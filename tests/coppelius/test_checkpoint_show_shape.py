"""`coppelius_host.checkpoint show` of another shape's checkpoint (probe s32 stream finding 4): the
refusal (foreign, exit 5) ends saying how to show it -- the shape its schema identity names, and
the run length its envelope declares when that differs too -- as it does for another run length;
the --config help lists only shapes a host serves (finding 8: tiny is refused whatever is asked)."""
from __future__ import annotations

import pytest

from coppelius_host import checkpoint


@pytest.fixture(scope="module")
def other_shape(tmp_path_factory):
    folder = tmp_path_factory.mktemp("shape")
    plain, longer = folder / "plain.ckpt", folder / "longer.ckpt"
    assert checkpoint.main(["fresh", "-o", str(plain), "--config", "1x256x128"]) == 0
    assert checkpoint.main(["fresh", "-o", str(longer), "--config", "1x256x128", "--updates-per-invocation", "7"]) == 0
    return plain, longer


@pytest.mark.parametrize("which, options", [(0, "--config 1x256x128"),
                                            (1, "--config 1x256x128 --updates-per-invocation 7")])
def test_show_of_another_shape_says_the_options_that_show_it(other_shape, which, options, capsys):
    path = other_shape[which]
    capsys.readouterr()
    assert checkpoint.main(["show", str(path)]) == 5
    said = capsys.readouterr().err
    assert said.startswith(f"python -m coppelius_host.checkpoint: error: checkpoint {path}: foreign checkpoint: "
                           "schema identity differs"), said
    assert said.endswith(f" (a checkpoint of the shape 1x256x128: show it with {options})\n"), said
    assert checkpoint.main(["show", str(path), *options.split()]) == 0      # and those options do
    assert capsys.readouterr().out.startswith(f"{path}: step 0, updates 0")


def test_the_config_help_lists_only_shapes_a_host_serves():
    said = checkpoint.config_choices()
    assert said.startswith("small, large or a shape LAYERSxWIDTHxCONTEXT[:CHUNK_BYTES]") and "tiny" not in said
