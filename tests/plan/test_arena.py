"""Bob's device arena (Bob.Build.PhysicalComponents) and its certificate.

The layout is the seed's comment: each tensor after the previous,
page-aligned, from the arena base 0x11_0000_0000 (Bob.ArenaPlan): three
256 KiB planes and the gradients, the 1564-byte input record, two 1 KiB loss
blocks, 3 KiB of logit rows and 24 bytes of predictions.
"""
import textwrap

from plan_support import nat

from plan_support import BOB

BASE = 0x11_0000_0000
EXPECTED = [
    ("parameters", BASE + 0x000000, 262144),
    ("first-moments", BASE + 0x040000, 262144),
    ("second-moments", BASE + 0x080000, 262144),
    ("gradients", BASE + 0x0C0000, 262144),
    ("input-record", BASE + 0x100000, 1564),
    ("initial-loss", BASE + 0x101000, 1024),
    ("training-loss", BASE + 0x102000, 1024),
    ("logit-rows", BASE + 0x103000, 3072),
    ("predictions", BASE + 0x104000, 24),
]


def test_residents_follow_the_seed_layout(plan_fake):
    arena = plan_fake.arena
    assert [(r.name, r.address, r.size) for r in arena.globals] == EXPECTED
    assert all(r.alignment == 256 for r in arena.globals)
    (window,) = arena.windows
    assert (window.name, window.address, window.size) == ("arena", BASE, 0x104000 + 24)
    assert [p.identity for p in arena.phases] == [
        "bob-loss-gradient", "bob-row-gather", "bob-greedy-argmax", "bob-adamw"]
    assert all(p.reads == () and p.writes == () for p in arena.phases)


def test_checkpoint_planes_are_contiguous(physical):
    # the checkpoint's P/M/V payload is read and written as one range
    assert nat(physical, "bobFirstMomentAddress") == nat(physical, "bobParametersAddress") + 262144
    assert nat(physical, "bobSecondMomentAddress") == nat(physical, "bobParametersAddress") + 2 * 262144


def test_bob_device_is_certified(physical):
    assert nat(physical, "bobDeviceHazard") == 0


# ---- the certificate refuses what is wrong ----

SCRATCH = """\
module Scratch.Hazard

import Bob.Build.PhysicalComponents
import Bob.TrainingRun
import Runtime.ArenaCertificate
import Runtime.DeviceArenaCertificate

def one =
  (lambda unrestricted name : Bytes . (lambda unrestricted address : Nat . (lambda unrestricted bytes : Nat .
    (lambda unrestricted rest : (family ArenaResidents) .
      (constructor ArenaResidents ArenaResidentsNext
        (constructor ArenaResident ArenaResidentValue name address bytes 256) rest)))))
def none : (family ArenaResidents) = (constructor ArenaResidents ArenaResidentsEnd)
def noPhases : (family DeviceArenaPhases) = (constructor DeviceArenaPhases DeviceArenaPhasesEnd)

{definitions}
"""


def scratch_value(tmp_path, definitions: str, name: str) -> int:
    from bobc.language import load_program
    from bobc.targets import SM86
    folder = tmp_path / "Scratch"
    folder.mkdir(exist_ok=True)
    path = folder / "Hazard.bob"
    path.write_text(SCRATCH.format(definitions=textwrap.dedent(definitions)))
    return load_program(path, include=[BOB.parent], target=SM86).value(name).value


def test_resident_outside_windows(tmp_path):
    assert scratch_value(tmp_path, """
        def hazard : Nat = (deviceArenaHazard (one b"w" 0 4096 none) (one b"a" 4000 200 none)
          bobDevicePhases bobLaunchSchedule bobSubmissionSchedule)
        """, "hazard") == 1


def test_overlapping_residents(tmp_path):
    assert scratch_value(tmp_path, """
        def hazard : Nat = (deviceArenaHazard bobDeviceWindows
          (one b"a" bobParametersAddress 4096 (one b"b" (nat-add bobParametersAddress 4095) 16 bobDeviceGlobals))
          bobDevicePhases bobLaunchSchedule bobSubmissionSchedule)
        """, "hazard") == 2


def test_launch_without_phase(tmp_path):
    assert scratch_value(tmp_path, """
        def hazard : Nat = (deviceArenaHazard bobDeviceWindows bobDeviceGlobals noPhases
          bobLaunchSchedule bobSubmissionSchedule)
        """, "hazard") == 3


def test_pointer_outside_residents(tmp_path):
    # without the predictions plane, the argmax launches write to no resident
    assert scratch_value(tmp_path, """
        def hazard : Nat = (deviceArenaHazard bobDeviceWindows
          (one b"parameters" bobParametersAddress bobTableBytes
            (one b"first-moments" bobFirstMomentAddress bobTableBytes
              (one b"second-moments" bobSecondMomentAddress bobTableBytes
                (one b"gradients" bobGradientsAddress bobTableBytes
                  (one b"input-record" bobInputAddress bobInputRecordBytes
                    (one b"initial-loss" bobInitialLossAddress bobLossBytes
                      (one b"training-loss" bobTrainingLossAddress bobLossBytes
                        (one b"logit-rows" bobLogitRowsAddress bobLogitRowsBytes none))))))))
          bobDevicePhases bobLaunchSchedule bobSubmissionSchedule)
        """, "hazard") == 4


def test_phase_restricted_to_its_residents(tmp_path):
    # a gather phase that may touch only the logit rows refuses its reads of the table
    assert scratch_value(tmp_path, """
        def gatherOnly : (family DeviceArenaPhases) =
          (constructor DeviceArenaPhases DeviceArenaPhasesNext
            (constructor DeviceArenaPhase DeviceArenaPhaseValue b"bob-row-gather" none
              (one b"logit-rows" bobLogitRowsAddress bobLogitRowsBytes none))
            bobDevicePhases)
        def hazard : Nat = (deviceArenaHazard bobDeviceWindows bobDeviceGlobals gatherOnly
          bobLaunchSchedule bobSubmissionSchedule)
        """, "hazard") == 4


def test_submission_past_launches(tmp_path):
    assert scratch_value(tmp_path, """
        def hazard : Nat = (deviceArenaHazard bobDeviceWindows bobDeviceGlobals bobDevicePhases
          bobForwardSchedule bobSubmissionSchedule)
        """, "hazard") == 5


def test_arena_certificate(tmp_path):
    # Runtime.ArenaCertificate.arenaCertificate: 1 when the residents fit, aligned and disjoint
    assert scratch_value(tmp_path, """
        def fits : Nat = (arenaCertificate 8192 (one b"a" 0 4096 (one b"b" 4096 4096 none)))
        """, "fits") == 1
    assert scratch_value(tmp_path, """
        def spills : Nat = (arenaCertificate 8000 (one b"a" 0 4096 (one b"b" 4096 4096 none)))
        """, "spills") == 0
    assert scratch_value(tmp_path, """
        def unaligned : Nat = (arenaCertificate 8192 (one b"a" 0 4096 (one b"b" 4100 16 none)))
        """, "unaligned") == 0


def test_residents_contain_and_disjoint_agree_with_the_interval_rules(tmp_path):
    # arenaResidentsContain and arenaResidentsDisjoint are written on the primitives (their cost
    # is quadratic in a model's layers); they must answer as the interval rules of
    # Compiler.Planning.VA say: [a, a + n) holds x when a <= x < a + n; two ranges are disjoint
    # when one ends at or before the other begins (empty ranges included)
    ranges = [(10, 5), (20, 0), (30, 10), (14, 3), (40, 1), (0, 0)]
    lists = [[], ranges[:1], ranges[:3], [ranges[0], ranges[2], ranges[4]], ranges[1:3] + [ranges[3]],
             [ranges[2], ranges[4], ranges[5]], [(0, 8), (8, 8), (16, 8), (15, 2)], [(8, 8), (0, 8)],
             [(20, 4), (10, 10), (24, 1)]]

    def residents(items):
        text = "none"
        for index, (address, size) in reversed(list(enumerate(items))):
            text = f'(one b"r{index}" {address} {size} {text})'
        return text

    definitions, expected = [], {}
    for i, items in enumerate(lists):
        definitions.append(f"def disjoint{i} : Nat = (arenaResidentsDisjoint {residents(items)})")
        expected[f"disjoint{i}"] = int(all(a + n <= b or b + m <= a
                                           for k, (a, n) in enumerate(items) for b, m in items[k + 1:]))
        for x in (0, 9, 10, 14, 15, 16, 20, 29, 39, 40, 41):
            definitions.append(f"def contains{i}at{x} : Nat = (arenaResidentsContain {residents(items)} {x})")
            expected[f"contains{i}at{x}"] = int(any(a <= x < a + n for a, n in items))
    from bobc.language import load_program
    from bobc.targets import SM86
    folder = tmp_path / "Scratch"
    folder.mkdir()
    header = ("module Scratch.Ranges\n\nimport Runtime.ArenaCertificate\n\n"
              + SCRATCH[SCRATCH.index("def one"):SCRATCH.index("def noPhases")])
    (folder / "Ranges.bob").write_text(header + "\n".join(definitions) + "\n")
    program = load_program(folder / "Ranges.bob", include=[BOB.parent], target=SM86)
    assert {name: program.value(name).value for name in expected} == expected
    assert 0 in expected.values() and 1 in expected.values()
