"""The kernel contracts the simulator holds every launch to, on every path that simulates one.

A launch's contract (docs/kernel-contracts.md: its `//@ param` pointers and extents, its
`//@ tensormap` words, its `//@ table` rows) decides three checks of the simulator
(docs/simulator.md): every access must lie in the launch's footprint (bobc.certify.footprints),
a TMA copy may name only the maps its `//@ tensormap` words hold, and the check of races between
blocks leaves out the loads of bytes no store of the launch may write.  Without the contract the
first two cannot be made, so a simulation that is given none would silently run without them.

This module is where they come from, whatever the path: a plan's `bobc sim` (the kernels
bobc.sim.host_adapter names from the images' manifest) and a host run through its simulated GPU
(a native host's, whose simulated GPU names each QMD's kernel itself) both read the contracts of
the kernels they launch with `read_contracts` -- a kernel whose source or contract cannot be
read is refused by name, never run unchecked -- and the channel evaluates each launch's
contract on the words its bank 0 holds when it runs (`LaunchContracts.held_to`): the words the
GPU reads, so a QMD or parameter block edited after the build is held to what it says.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from types import SimpleNamespace

from ..errors import BobcError, shown_plan_text
from ..resources import doc


class ContractsMissing(BobcError):
    """A kernel the simulator would launch has no readable contract: the footprint and
    tensor-map checks could not be made, so nothing is simulated (exit 1: not the plan's
    GPU fault)."""

    exit_code = 1


def read_contracts(identities, target, folders=()) -> dict:
    """identity -> KernelContract for every kernel identity given, each read from its source for
    `target` (`<identity>.<target>.sass` or `<identity>.sass`, bobc.kernel_search) in `folders`,
    then specs/ (bobc's program stage: its own source).  A kernel with no source, or whose
    contract does not parse, is refused naming it, where it was looked for and why."""
    from ..kernel_search import SourceError
    from ..language.modules import specs_folder
    from ..nvidia.residence import STAGE_IDENTITY, STAGE_SOURCE
    from .. import errors
    from ..certify.kernels import ContractError, parse_contract
    from ..kernel_search import find_source

    searched = [*folders, specs_folder()]
    contracts, missing = {}, []
    for identity in dict.fromkeys(identities):
        try:
            source = STAGE_SOURCE if identity == STAGE_IDENTITY else find_source(identity, searched, target)
            if source is None:
                folders_shown = ", ".join(dict.fromkeys(errors.shown_path(f) for f in searched))
                missing.append(f"{shown_plan_text(identity)} (no source of it in {folders_shown})")
                continue
            contracts[identity] = parse_contract(source, identity)
        except (ContractError, SourceError) as error:
            missing.append(f"{shown_plan_text(identity)} ({getattr(error, 'message', None) or error})")
    if missing:
        raise ContractsMissing(
            f"the simulator cannot hold these kernels to their contracts: {'; '.join(missing)}",
            hint=f"the footprint and tensor-map checks need each kernel's source ({doc('simulator.md')}); "
                 "give the folders that hold them")
    return contracts


@dataclass
class LaunchContracts:
    """Every launched kernel's contract (identity -> KernelContract: read_contracts), the QMD
    addresses' kernels, and what `resident` extents and rule (b) are held to (the plan's arena
    globals and windows; a host without a plan: none)."""

    contracts: dict
    kernels: dict                           # QMD address -> kernel identity
    target: object                          # bobc.targets.Target: where bank 0's parameters start
    residents: object = ()
    windows: tuple = ()
    _held: dict = field(default_factory=dict)

    def held_to(self, where: str, qmd_address: int, bank0: bytes):
        """(Footprint, frozenset of tensor map addresses) of the launch of the QMD at
        `qmd_address`, its contract evaluated on the words `bank0` holds."""
        from ..certify.footprints import footprint_of
        from ..certify.pointers import declared_maps
        from .faults import Unmodeled

        identity = self.kernels.get(qmd_address)
        if identity is None:
            raise Unmodeled(f"{where}: the QMD at {qmd_address:#x} launches no kernel the simulator was told of, "
                            "so its contract is not known (its footprint and tensor maps could not be checked)")
        contract = self.contracts.get(identity)
        if contract is None:
            raise ContractsMissing(f"{where}: kernel {shown_plan_text(identity)} has no contract the "
                                   "simulator was given (bobc.sim.contracts.read_contracts)")
        parameters = bytes(bank0[self.target.parameter_base:])
        key = (identity, parameters)
        if key not in self._held:
            base = self.target.parameter_base // 8
            count = len(parameters) // 8
            patches = [SimpleNamespace(word=base + i, value=v)
                       for i, v in enumerate(struct.unpack_from(f"<{count}Q", parameters))]
            launch = SimpleNamespace(identity=identity, patches=patches)
            footprint = footprint_of(launch, 0, contract, base, self.residents, self.windows)
            if footprint is None:
                raise Unmodeled(f"{where}: its kernel's contract ({shown_plan_text(identity)}) gives no footprint "
                                "on the words its bank 0 holds (a pointer condition, batch count or extent that "
                                "cannot be evaluated, a `resident` extent outside every resident, or an "
                                "undeclared word holding a window address), so its accesses cannot be checked")
            words = {p.word: p.value for p in patches}
            maps = set()
            for mapped in declared_maps(0, launch, contract, base):
                if mapped.problem:
                    raise Unmodeled(f"{where}: {mapped.where}: {mapped.problem}")
                maps.add(words[base + mapped.tensor_map.word])
            self._held[key] = (footprint, frozenset(maps))
        return self._held[key]

    def copies(self, where: str, qmd_address: int, bank0: bytes) -> list[tuple]:
        """(what, source address, destination address, bytes) of every `//@ copy` of the launch's
        kernel (`what`: its file:line and text), evaluated on the words `bank0` holds (held_to names
        the launch's kernel and refuses one the simulator was not told of: call it first).  A copy
        whose size cannot be evaluated on the words is Unmodeled: the launch is not run unchecked."""
        from ..errors import shown_path
        from .faults import Unmodeled

        contract = self.contracts[self.kernels[qmd_address]]
        if not contract.copies:
            return []
        parameters = bytes(bank0[self.target.parameter_base:])
        count = len(parameters) // 8
        words = dict(enumerate(struct.unpack_from(f"<{count}Q", parameters)))
        out = []
        for copy in contract.copies:
            what = (f"{shown_path(contract.source)}:{copy.line}: //@ copy {copy.source} to {copy.destination} "
                    f"{copy.size}")
            size, why = copy.bytes_for(words)
            if size is None:
                raise Unmodeled(f"{where}: its kernel's contract declares a copy ({what}) whose size cannot be "
                                f"evaluated on the words its bank 0 holds: {why}")
            if size:
                out.append((what, words.get(copy.source, 0), words.get(copy.destination, 0), size))
        return out


def _overlap(a: int, a_size: int, b: int, b_size: int) -> bool:
    return a < b + b_size and b < a + a_size


def begin_copies(memory, copies, where: str) -> list[tuple]:
    """Before a launch whose kernel declares copies (LaunchContracts.copies): each copy's source
    bytes as they are, and its destination filled with those bytes inverted, so that after the launch
    (end_copies) a destination byte the kernel left unwritten, or wrote with anything but its source
    byte, differs from what the copy declares.  Filling it is sound because a copy's destination is a
    `write` pointer (bobc.certify.kernels._check_copies): the kernel never reads what was there before
    it ran.  A destination overlapping any copy's source is refused (what it copies would depend on
    the order the kernel moves bytes in)."""
    from .faults import SimulationFault

    pending = []
    for what, source, destination, size in copies:
        for _, other, _, other_size in copies:
            if _overlap(destination, size, other, other_size):
                raise SimulationFault(
                    f"{where}: its kernel's contract declares a copy ({what}) of {size:,} bytes to {destination:#x}, "
                    f"which overlap the {other_size:,} bytes it copies from {other:#x}: a declared copy's "
                    f"destination may not overlap a source; give the launch ranges apart")
        data = memory.read(source, size, f"{where}: the source of its declared copy ({what})")
        pending.append((what, source, destination, size, data))
    import numpy as np
    for what, _, destination, size, data in pending:
        memory.write(destination, (np.frombuffer(data, np.uint8) ^ 0xFF).tobytes(),
                     f"{where}: the destination of its declared copy ({what})")
    return pending


def end_copies(memory, pending, where: str) -> None:
    """After the launch: every destination holds its source's bytes as they were before it ran
    (begin_copies), else the kernel does not do the copy its contract declares -- refused at the
    first byte that differs, naming the copy, the two addresses and both values."""
    import numpy as np
    from .faults import SimulationFault

    for what, source, destination, size, data in pending:
        held = memory.read(destination, size, f"{where}: the destination of its declared copy ({what})")
        if held == data:
            continue
        diff = np.frombuffer(held, np.uint8) != np.frombuffer(data, np.uint8)
        first = int(np.argmax(diff))
        wrong = int(diff.sum())
        unwritten = int((np.frombuffer(held, np.uint8) == (np.frombuffer(data, np.uint8) ^ 0xFF))[diff].sum())
        raise SimulationFault(
            f"{where}: its kernel's contract declares a copy ({what}) of {size:,} bytes from {source:#x} to "
            f"{destination:#x}, but after the launch byte {first:,} of the destination ({destination + first:#x}) "
            f"holds {held[first]:#04x}, not the source's {data[first]:#04x} ({wrong:,} of the {size:,} bytes differ"
            f"{f'; {unwritten:,} of them the launch left unwritten' if unwritten else ''}): the kernel does not do "
            f"the copy it declares; fix the code or its //@ copy line ({doc('kernel-contracts.md')})")
