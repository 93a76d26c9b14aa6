"""A launch on one side only: its zero QMD fields and bank 0 words are folded into one line per kind,
and only those (session 44 mutants10 of bobc.nvidia.golden: folding every one-sided fact, a
non-zero one too, survived the diff tests -- s43's G24).

Independent reason: a line that says "N QMD field(s) zero" must count fields whose value is 0; a
CTA_THREAD_DIMENSION0 of 32 (a 32-thread block) or a non-zero pointer argument is no zero fact, so
each keeps a line of its own with its value (hand count: 2 zero QMD fields, 1 zero bank 0 word)."""
from __future__ import annotations

from bobc.nvidia.golden import Difference, _fold_zeros


def only_in_b(key, kind, value):
    return Difference(key, kind, "extra", None, value, "", (("qmd", 0, 8),))


def test_only_zero_facts_are_folded():
    found = [only_in_b("launch[+2].qmd.CTA_THREAD_DIMENSION0", "qmd", 32),
             only_in_b("launch[+2].qmd.CTA_THREAD_DIMENSION1", "qmd", 0),
             only_in_b("launch[+2].qmd.CTA_THREAD_DIMENSION2", "qmd", 0),
             only_in_b("launch[+2].bank0[0x160]", "bank0", 0x1100000000),
             only_in_b("launch[+2].bank0[0x168]", "bank0", 0)]
    folded = {d.key: d.b for d in _fold_zeros(found)}
    assert folded == {"launch[+2].qmd.CTA_THREAD_DIMENSION0": 32,
                      "launch[+2].qmd[zero]": "2 QMD field(s) zero",
                      "launch[+2].bank0[0x160]": 0x1100000000,
                      "launch[+2].bank0[zero]": "1 bank 0 word(s) zero"}, folded
