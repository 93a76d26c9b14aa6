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
