"""`//@ require` contract lines: the shapes a kernel's code serves, held at build time (probe s47
configs finding 1; docs/kernel-contracts.md, "Requirements").

Coppelius's kernels said which shapes they serve only in prose (coppelius-layernorm-forward:
"256 <= C <= 768 and C % 128 == 0"; the attention kernels: "T a power of two, 128 <= T <= 512"),
and the certifier held a launch only to its pointers' extents.  The one guard was Coppelius.Model's
shape rule, a plan-level rule of one model: a plan that launched the kernels another way (a width of
320 past a rule that let it through) certified and built a host whose layer norms write past their
rows.  Now a kernel declares its domain (`//@ require EXPRESSION multiple of N | from A to B | one of
A,B,...`) and every launch outside it is refused at the plan's place, naming the word, its value,
the rule and the contract line.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from bobc.certify.kernels import ContractError, parse_contract
from bobc.certify.pointers import check_pointers

from .test_conditional_extents import BASE, contract_of, hand_plan, pair

REPO = Path(__file__).resolve().parents[2]
KERNELS = REPO / "examples/coppelius/Realization/Nvidia/SM86"
EXAMPLE = REPO / "examples/coppelius"

ROWS = ("//@ param 0 pointer write 4*lo[1]*hi[1] y [R, C]\n"
        "//@ param 1 scalar R, C (u32)\n"
        "//@ require hi[1] multiple of 128 C: whole chunks of 128 columns\n"
        "//@ require hi[1] from 256 to 768 C: 2 to 6 chunks in registers\n"
        "//@ require lo[1] one of 128,256,512 R: a power of two\n")


def findings_for(tmp_path, words):
    contract = contract_of(tmp_path, "k", ROWS)
    plan = hand_plan([("k", words)], [("y", BASE, 4 << 20)], ["k"])
    return check_pointers(plan, {"k": contract})


def test_a_requirement_line_is_parsed_with_its_rule_numbers_and_reason(tmp_path):
    contract = contract_of(tmp_path, "k", ROWS)
    multiple, span, listed = contract.requirements
    assert (multiple.expression, multiple.rule, multiple.numbers, multiple.what, multiple.line) == (
        "hi[1]", "multiple", (128,), "C: whole chunks of 128 columns", 3)
    assert (span.rule, span.numbers) == ("range", (256, 768))
    assert (listed.rule, listed.numbers) == ("one-of", (128, 256, 512))


@pytest.mark.parametrize("rows, columns", [(128, 256), (256, 384), (512, 768), (128, 640)])
def test_a_launch_within_every_requirement_is_certified(tmp_path, rows, columns):
    assert findings_for(tmp_path, {0: BASE, 1: pair(rows, columns)}) == []


@pytest.mark.parametrize("rows, columns, broken", [
    (128, 320, ["hi[1] is 320 on this launch, and its kernel k serves only hi[1] a multiple of 128 "
                "(k.sass:3: //@ require hi[1] multiple of 128: C: whole chunks of 128 columns)"]),
    (128, 1024, ["hi[1] is 1024 on this launch, and its kernel k serves only hi[1] from 256 to 768 (k.sass:4"]),
    (128, 128, ["hi[1] is 128 on this launch, and its kernel k serves only hi[1] from 256 to 768"]),
    (192, 256, ["lo[1] is 192 on this launch, and its kernel k serves only lo[1] one of 128, 256, 512 (k.sass:5"]),
    (96, 200, ["hi[1] is 200 on this launch, and its kernel k serves only hi[1] a multiple of 128",
               "hi[1] is 200 on this launch, and its kernel k serves only hi[1] from 256 to 768",
               "lo[1] is 96 on this launch, and its kernel k serves only lo[1] one of 128, 256, 512"]),
])
def test_a_launch_outside_a_requirement_is_refused_naming_the_word_value_and_rule(tmp_path, rows, columns, broken):
    # (the extent 4 R C bytes lies in the 4 MiB resident for every case: only the requirements fail)
    found = findings_for(tmp_path, {0: BASE, 1: pair(rows, columns)})
    messages = [f.message for f in found]
    assert len(messages) == len(broken), messages
    for message, expected in zip(messages, broken):
        assert message.startswith("launch 0 (k): ") and expected in message, (message, expected)
    assert all(f.kind == "contract" and "shapes its contract admits" in f.hint for f in found)


def test_a_requirement_on_a_word_the_launch_does_not_set_is_refused_by_name(tmp_path):
    contract = contract_of(tmp_path, "k", "//@ param 0 pointer write 64 y\n//@ param 1 scalar C\n"
                                          "//@ require lo[1] multiple of 4 C\n")
    found = check_pointers(hand_plan([("k", {0: BASE})], [("y", BASE, 64)], ["k"]), {"k": contract})
    assert any("its requirement lo[1] names parameter word 1, which the launch does not set" in f.message
               for f in found), [f.message for f in found]


@pytest.mark.parametrize("line, column, says", [
    ("//@ require hi[1] multiple of 0 C", 31, "a multiple of 0 is only 0"),
    ("//@ require hi[1] from 768 to 256 C", 24, "from 768 to 256 holds no number"),
    ("//@ require hi[1] multiple of twelve C", 31, "'twelve' is not a number"),
    ("//@ require hi[1] multipleof 128 C", 19, "expected the rule after the requirement's expression"),
    ("//@ require hi[1]", 18, "expected the rule after the requirement's expression"),
    ("//@ require hi[1] one of 128, 256 C", 31, "the requirement's list '128, 256' is written with a space"),
    ("//@ require hi[1] one of 128,256, C", 35, "the requirement's list '128,256, C' is written with a space"),
    ("//@ require hi[1] from 256 to 768, C", 31, "'768,' is not a number"),
    ("//@ require lo[-1] multiple of 4 C", 16, "lo[-1] names word -1"),
    ("//@ require lo[0] multiple of 4 C", 13, "reads lo[0], but word 0 is declared a pointer"),
    ("//@ require lo[3] multiple of 4 C", 13, "reads lo[3], but no //@ param line declares word 3"),
])
def test_a_requirement_line_that_no_launch_can_be_held_to_is_refused_at_its_column(tmp_path, line, column, says):
    source = tmp_path / "k.sass"
    source.write_text("//@ param 0 pointer write 64 y\n//@ param 1 scalar C\n" + line + "\n")
    with pytest.raises(ContractError) as caught:
        parse_contract(source)
    message = str(caught.value)
    assert message.startswith(f"{source}:3:{column}: ") and says in message, message


# ---- Coppelius's kernels: their requirements against the shapes the docs state they serve ----

def _coppelius_launches(layers: int, width: int, context: int):
    if str(EXAMPLE) not in sys.path:
        sys.path.insert(0, str(EXAMPLE))
    from coppelius_model import graph
    from coppelius_model.config import CoppeliusConfig

    config = CoppeliusConfig(f"{layers}x{width}x{context}", layers, width, context)
    return [launch for piece in graph.pieces(config) for launch in piece.launches]


def _broken(layers: int, width: int, context: int) -> set[str]:
    """The kernels whose `//@ require` lines some launch of the shape's graph (coppelius_model.graph)
    breaks."""
    contracts = {}
    broken = set()
    for launch in _coppelius_launches(layers, width, context):
        source = KERNELS / f"{launch.kernel}.sass"
        if launch.kernel not in contracts:
            contracts[launch.kernel] = parse_contract(source, launch.kernel)
        words = dict(enumerate(launch.words))
        for required in contracts[launch.kernel].requirements:
            met, _, why = required.check(words)
            assert met is not None, why
            if not met:
                broken.add(launch.kernel)
    return broken


@pytest.mark.parametrize("shape", [(4, 256, 128), (12, 768, 256), (1, 384, 256), (1, 640, 128), (3, 512, 256)])
def test_every_served_coppelius_shape_meets_its_kernels_requirements(shape):
    # the docs' rule (docs/coppelius.md, "Shapes"): d a multiple of 128 from 256 to 768, T 128 or 256
    assert _broken(*shape) == set()


@pytest.mark.parametrize("shape, kernels", [
    # d = 320: the layer norms hold a row in 128-column chunks, the embedding loads them so
    ((1, 320, 128), {"coppelius-layernorm-forward", "coppelius-layernorm-backward", "coppelius-embedding-forward"}),
    # d = 1024: six chunks at most (C <= 768)
    ((1, 1024, 128), {"coppelius-layernorm-forward", "coppelius-layernorm-backward"}),
    # T = 192: the attention kernels' power-of-two mask
    ((1, 256, 192), {"coppelius-attention-forward", "coppelius-attention-backward",
                     "coppelius-attention-backward-kv"}),
    # T = 512: the attention kernels take it, the embedding's backward reads at most 256 positions
    ((1, 256, 512), {"coppelius-embedding-backward"}),
    # T = 96: the attention kernels' mask, and the products whose M or N is T (the generator's 64 x 64 tiles:
    # nn and nt; tn's M and N are widths, its K = T a multiple of 32)
    ((1, 256, 96), {"coppelius-attention-forward", "coppelius-attention-backward", "coppelius-attention-backward-kv",
                    "coppelius-gemm-nn", "coppelius-gemm-nt"}),
    # T = 80: not a multiple of 32 either (the gain and bias gradients' row groups, the loss copy's lanes, and
    # tn's K = T: its loop runs whole slices of 32 k)
    ((1, 256, 80), {"coppelius-attention-forward", "coppelius-attention-backward", "coppelius-attention-backward-kv",
                    "coppelius-layernorm-param-backward", "coppelius-loss-copy", "coppelius-gemm-nn",
                    "coppelius-gemm-nt", "coppelius-gemm-tn"}),
])
def test_a_shape_the_kernels_do_not_serve_breaks_the_requirements_of_exactly_those_kernels(shape, kernels):
    assert _broken(*shape) == kernels


def test_a_coppelius_build_past_its_shape_rule_is_refused_at_the_plans_launch(tmp_path):
    """The user's case: a Coppelius plan whose shape rule lets a width of 320 through (before, it built
    a host whose layer norms write past their rows) is refused by `bobc build`, at Graph.bob's
    launch, naming each kernel, the word's value and the rule; no host is written."""
    import subprocess

    if str(EXAMPLE) not in sys.path:
        sys.path.insert(0, str(EXAMPLE))
    from coppelius_host import build

    root = build.plan_copy(tmp_path / "plan", 1, 1, "1x320x128")
    model = root / "Coppelius" / "Model.bob"
    text = model.read_text(encoding="utf-8").replace("def coppeliusShapeRefusal =", "def coppeliusShapeRefusalKept =", 1)
    model.write_text(text + "\n-- every shape let through\ndef coppeliusShapeRefusal =\n"
                            "  (lambda unrestricted layers : Nat . (lambda unrestricted width : Nat . "
                            "(lambda unrestricted context : Nat .\n    (lambda unrestricted chunk : Nat . b\"\"))))\n",
                     encoding="utf-8")
    host = tmp_path / "coppelius-host"
    run = subprocess.run([sys.executable, "-m", "bobc", "build", "Coppelius/Build/DirectArtifact.bob", "--entry",
                          "coppeliusHost", "--target", "sm_90", "-I", str(EXAMPLE), "-o", str(host)],
                         cwd=root, capture_output=True, text=True, timeout=600)
    assert run.returncode != 0 and not host.exists(), run.stdout + run.stderr
    said = run.stderr
    assert "Traceback" not in said
    for kernel, word, line in (("coppelius-embedding-forward", "hi[5]", "//@ require hi[5] multiple of 128"),
                               ("coppelius-layernorm-forward", "hi[6]", "//@ require hi[6] multiple of 128"),
                               ("coppelius-layernorm-backward", "hi[8]", "//@ require hi[8] multiple of 128")):
        assert f"({kernel}): {word} is 320 on this launch, and its kernel {kernel} serves only {word} a multiple of " \
               f"128 ({kernel}.sass:" in said, said
        assert line in said
    assert "Coppelius/Build/Graph.bob:" in said


def test_a_host_fill_of_a_required_word_is_refused(tmp_path):
    """A word a requirement holds at build time cannot be rewritten by the host each step: the kernel
    would run on a value never checked.  A fill of the other word is not held to it."""
    import dataclasses
    from types import SimpleNamespace

    from bobc.plan.host import Fill

    contract = contract_of(tmp_path, "k", ROWS + "//@ param 2 scalar alpha (binary32)\n")
    plan = hand_plan([("k", {0: BASE, 1: pair(128, 256), 2: 0})], [("y", BASE, 4 << 20)], ["k"])

    def found(offset):
        host = SimpleNamespace(buffers=(), fills=(Fill(0, offset, 0, "word32", 0),), initializers=(), steps=(),
                               semaphore_stride=0)
        return [f.message for f in check_pointers(dataclasses.replace(plan, host=host), {"k": contract})]

    rewritten = [m for m in found(12) if "host fill 0 rewrites argument 1 each step" in m]   # hi[1], C
    assert len(rewritten) == 2 and all("holds at build time" in m for m in rewritten), found(12)
    assert "k.sass:3: //@ require hi[1] multiple of 128" in rewritten[0]
    assert not [m for m in found(16) if "rewrites argument" in m]                              # word 2, alpha


def test_a_misspelt_requirement_is_refused_where_a_plan_encodes_its_own_images(tmp_path):
    """compiler-native-encode of a whole-program plan (seed 004's native physical program) reads the
    contracts for launch order and left a contract that does not parse out, for the certifier to
    refuse -- which does not run there: a misspelt `//@ require` line dropped its check."""
    from bobc.certify.pointers import program_requirement_findings
    from bobc.targets import SM86

    (tmp_path / "k.sass").write_text(ROWS.replace("multiple of 128", "multipel of 128"))
    plan = hand_plan([("k", {0: BASE, 1: pair(128, 320)})], [("y", BASE, 4 << 20)], ["k"])
    found = program_requirement_findings(plan.program, {}, SM86, [tmp_path])
    assert len(found) == 1 and "expected the rule after the requirement's expression" in found[0].message
    assert str(found[0].at).startswith(f"{tmp_path / 'k.sass'}:3:"), found[0].at
    # parsed, the same contract refuses the launch (C = 320)
    contract = contract_of(tmp_path, "k", ROWS)
    assert [f.message.split(": ", 1)[1][:20] for f in program_requirement_findings(plan.program, {"k": contract})] \
        == ["hi[1] is 320 on this"]
