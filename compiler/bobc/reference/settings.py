"""The hosts' environment settings, as the reference hosts judge and read them.

The twin of runtime_c/host_settings.c's table, row for row (docs/native-host.md, "Settings"):
a host judges the settings it reads at start-up, before it reads or writes anything, and a
value outside a setting's set is a usage error (exit 2) naming the variable and what it
accepts, in the C host's words.  tests/native/test_native_host_settings.py and
tests/host/test_plan_host_start_up.py run both sides on the same values.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

from ..errors import SHOWN_CONTROLS
from .digits import decimal_at_most

SHOWN_BYTES = 64             # host_settings.h RT_SETTING_SHOWN_BYTES: the most bytes of a value a refusal shows


@dataclass(frozen=True)
class Setting:
    variable: str
    words: tuple[str, ...] = ()      # a word setting's set; () for a number
    least: int = 0                   # a number setting's range
    most: int = 0
    empty_refused: bool = False      # else an empty value means unset
    expected: str = ""

    def given(self, environ) -> str | None:
        text = environ.get(self.variable)
        return text if text is not None and (text or self.empty_refused) else None

    def accepts(self, text: str) -> bool:
        if self.words:
            return text in self.words
        value = decimal_at_most(text, self.most)
        return value is not None and value >= self.least

    def value(self, environ, unset):
        """A word setting's index in its set, a number setting's number; `unset` when it is
        unset, empty or outside the set (never judged)."""
        text = self.given(environ)
        if text is None or not self.accepts(text):
            return unset
        return self.words.index(text) if self.words else decimal_at_most(text, self.most)


GPU_MAPPING = Setting("BOBC_GPU_MAPPING", ("rm", "uvm"), expected="expected rm or uvm (or leave it unset)")
GPU_TRACE = Setting("BOBC_GPU_TRACE", ("0", "1", "ioctl"),
                    expected="expected 1 (each bring-up step), ioctl (each ioctl too) or 0 (or leave it unset)")
TELEMETRY = Setting("NATIVE_TELEMETRY", least=0, most=(1 << 63) - 1,
                    expected="expected a level, a decimal number 0 to 9223372036854775807 (or leave it unset: no "
                             "telemetry)")
DEVICE = Setting("NATIVE_DEVICE", ("memory", "gpu"),
                 expected="expected memory (a session without a GPU) or gpu (the default; or leave it unset)")
PROFILE = Setting("NATIVE_PROFILE", ("0", "1"), expected="expected 1 (profile) or 0 (or leave it unset)")
PEER_TIMEOUT_MS = 10000
PEER_TIMEOUT = Setting("NATIVE_PEER_TIMEOUT_MS", least=1, most=86_400_000, empty_refused=True,
                       expected=f"expected milliseconds, a decimal number 1 to 86400000 (or leave it unset: "
                                f"{PEER_TIMEOUT_MS})")

# what each host judges, in its order (host_settings.h RT_PLAN_HOST_SETTINGS, RT_NATIVE_HOST_SETTINGS)
PLAN_HOST = (GPU_MAPPING, GPU_TRACE, TELEMETRY)
NATIVE_HOST = (GPU_MAPPING, DEVICE, PROFILE, GPU_TRACE, TELEMETRY, PEER_TIMEOUT)


def shown_value(text: str) -> str:
    """The value as a refusal shows it (host_settings.c rt_setting_shown): its first SHOWN_BYTES bytes,
    never half a UTF-8 character, and "..." when longer; a control character is '?'."""
    raw = os.fsencode(text)
    keep = len(raw)
    if keep > SHOWN_BYTES:
        keep = SHOWN_BYTES
        while keep and raw[keep] & 0xC0 == 0x80:
            keep -= 1
    return os.fsdecode(raw[:keep].translate(SHOWN_CONTROLS) + (b"..." if keep < len(raw) else b""))


def refusal(environ, settings) -> str | None:
    """None, or the usage error's text for the first of `settings` whose value is outside its set."""
    for setting in settings:
        text = setting.given(environ)
        if text is not None and not setting.accepts(text):
            return f"{setting.variable}={shown_value(text)}: {setting.expected}"
    return None
