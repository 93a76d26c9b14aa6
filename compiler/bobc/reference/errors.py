"""The refusals the reference runner shares with the native host.

Each kind of bad file has its own exit code, the same numbers the native host
documents, so a script can tell "your record is wrong" from "that checkpoint
belongs to another model" without parsing messages:
0 ok, 2 usage, 3 bad input record, 4 bad checkpoint, 5 foreign checkpoint,
8 output write failure.

The input record's and the checkpoint's refusals are worded as the C hosts word them
(runtime_c/host_runtime.c, host_io.c): `input record PATH: DETAIL`, `checkpoint PATH: DETAIL`,
`checkpoint PATH: foreign checkpoint: DETAIL`, so `bobc run --reference` says what the host says.
"""
from __future__ import annotations

from ..errors import BobcError


class FileRefused(BobcError):
    """A file was refused; `path` names it and `part` names what differs."""

    def __init__(self, path, part: str, detail: str, hint: str | None = None):
        self.path = str(path)
        self.part = part
        if self.noun and part == "size":     # host_io.c rt_io_read names what the file was read as
            detail = detail.replace("this file can be", f"{'an' if self.noun[0] in 'aeiou' else 'a'} {self.noun} can be")
        self.detail = detail
        super().__init__(self.host_form() if self.noun else f"{self.path}: {self.what} ({part}): {detail}", hint=hint)

    what = "refused"
    noun = ""           # the host's name for the file, where its refusals are the host's

    def host_form(self) -> str:
        """The refusal as the native hosts word it: `NOUN PATH: DETAIL`."""
        return f"{self.noun} {self.path}: {self.detail}"


class BadInputRecord(FileRefused):
    """The input record does not hold the plan's record checks (size, magic, version, contents)."""

    exit_code = 3
    what = "bad input record"
    noun = "input record"


class BadCheckpoint(FileRefused):
    """The checkpoint is truncated, corrupted or not a checkpoint at all."""

    exit_code = 4
    what = "bad checkpoint"
    noun = "checkpoint"


class ForeignCheckpoint(FileRefused):
    """A sound checkpoint of some other contract (schema, learner, data, ...)."""

    exit_code = 5
    what = "foreign checkpoint"
    noun = "checkpoint"

    def host_form(self) -> str:
        return f"checkpoint {self.path}: foreign checkpoint: {self.detail}"


class OutputWriteFailure(FileRefused):
    """An output could not be published; the previous file at that path is intact."""

    exit_code = 8
    what = "cannot write output"

    def __init__(self, path, part: str, detail: str, hint: str | None = None, host_line: str | None = None):
        self.host_line = host_line      # the host's own line, where it words a publication's failure otherwise
        super().__init__(path, part, detail, hint=hint)

    def host_form(self) -> str:
        """The refusal as the C hosts word it, one line: a journal's (runtime_c/host_io.c
        journal_complete) `journal PATH: DETAIL; WHAT NOW`, a publication's own line (host_line),
        else an output's (rt_io_add_output) `output PATH (PART): DETAIL; nothing was written`."""
        if self.host_line:
            return self.host_line
        if self.part == "journal":
            return f"journal {self.path}: {self.detail}; {self.hint}"
        return f"output {self.path} ({self.part}): {self.detail}; nothing was written"
