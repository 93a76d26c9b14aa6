"""A plan naming a variant of a target bobc does not build for (probe s39 coverage2 finding 3):
`b"k/x.sm_90a.sass"` was refused with the hint "a build for sm_90a finds x.sm_90a.sass beside it",
an action no user can take (bobc builds for bobc.targets.TARGETS only; find_named's refusal of an
absent base already says so for such a variant).  The hint now says the target is not one bobc
builds for and names those it does."""
from __future__ import annotations

import pytest

from bobc.kernel_search import SourceError, find_named
from bobc.targets import SM86, SM90, TARGETS


@pytest.mark.parametrize("suffix", ["sm_90a", "sm_89"])
def test_a_variant_of_a_target_bobc_never_builds_is_not_offered_as_a_build(tmp_path, suffix):
    assert suffix not in TARGETS
    (tmp_path / "k").mkdir()
    (tmp_path / "k" / f"x.{suffix}.sass").write_text(".kernel x\n    EXIT\n")
    for target in (SM86, SM90):
        with pytest.raises(SourceError) as error:
            find_named(f"k/x.{suffix}.sass", [tmp_path], target)
        assert error.value.message == (f"kernel source k/x.{suffix}.sass is kernel x's variant for {suffix}: a plan "
                                       "names the base source, never a variant")
        hint = error.value.hint
        assert f"a build for {suffix}" not in hint
        assert hint.startswith(f"name k/x.sass: {suffix} is not a target bobc builds for "
                               f"(it builds for {', '.join(TARGETS)})")
