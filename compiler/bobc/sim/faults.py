"""What the simulator reports: each a BobcError naming the launch, instruction and address."""
from __future__ import annotations

from ..errors import BobcError


class SimulationFault(BobcError):
    """The images do something the GPU would fault on, or that the simulator refuses."""

    exit_code = 7       # the native host's RT_EXIT_GPU_FAULT
    # Where a fault in a launch happened, filled in by the executor's fault path (executor.Launch.run)
    # for every fault it raises: the launch ("launch 3 (KERNEL)"), the instruction's address, the
    # first faulting thread (a column of the launch) and, for a memory access refused in
    # bobc.sim.memory, the position of the faulting address among the addresses checked.  `places`:
    # other instructions the message names (a deadlock's barriers), for `bobc sim` to place too.
    launch: str | None = None
    pc: int | None = None
    thread: int | None = None
    index: int | None = None
    places: tuple[int, ...] = ()
    # "shared" for an access past the block's shared memory (its size is the launch's QMD
    # SHARED_MEMORY_SIZE, which `bobc sim` traces back to the region that gives it), else None
    memory: str | None = None

    def extend(self, text: str) -> None:
        """Add `text` to the message (what the executor's fault path knows and the raiser did not)."""
        self.message += text
        self.args = (self.message,)


class Unmodeled(SimulationFault):
    """A method, QMD feature or instruction the simulator does not model (named in the message)."""


class OutOfBounds(SimulationFault):
    """A kernel's memory access outside every resident it may touch."""

    def __init__(self, launch: str, pc: int, address: int, size: int, what: str, detail: str,
                 contract: bool = False, index: int | None = None):
        super().__init__(f"{launch}: instruction at {pc:#06x} ({what}) {detail}: {size} bytes at "
                         f"{address:#x}",
                         hint=("the certifier holds launches to their kernels' contracts, not to the code: "
                               "correct the kernel, or its //@ param line (access kind, extent) and the plan"
                               if contract else
                               "the kernel's code touches bytes its contract's extents do not cover (the "
                               "certifier holds launches to the contracts, not to the code): correct the kernel, "
                               "or its //@ param line and the plan"))
        self.launch, self.pc, self.address, self.index = launch, pc, address, index


class Misaligned(OutOfBounds):
    """A global access whose address is not a multiple of its width: the GPU's misaligned-address
    fault.  Its own hint: the extents are not the problem, the address's alignment is."""

    def __init__(self, launch: str, pc: int, address: int, size: int, what: str, index: int | None = None):
        super().__init__(launch, pc, address, size, what, f"is misaligned for a {size}-byte access", index=index)
        self.hint = (f"a {size}-byte access needs an address that is a multiple of {size}; {address:#x} is "
                     f"{address % size} past one: correct the base pointer, the index's scale or the "
                     f"instruction's offset")


class Hazard(SimulationFault):
    """A register read before its producer's result is ready by the control codes."""

    def __init__(self, launch: str, pc: int, text: str, reason: str, fix: str | None = None,
                 places: tuple[int, ...] = ()):
        """`fix`: what to change in the control codes (bobc.sim.hazards says it per rule); `places`: the other
        instructions the reason names (the producer, the earlier reader), for `bobc sim` and run_kernel to place."""
        super().__init__(f"{launch}: control-code hazard at {pc:#06x} ({text}): {reason}",
                         hint=(f"{fix} (or leave the written control codes out for the scheduler to choose)" if fix
                               else "the control codes' stall counts and scoreboards (the scheduler's, or those "
                                    "written as [...] before an instruction) must cover every dependency: correct a "
                                    "written control code, or leave it out for the scheduler to choose"))
        self.launch, self.pc, self.reason, self.fix, self.places = launch, pc, reason, fix, tuple(places)


class UnorderedLaunches(SimulationFault):
    """Two launches with no wait for idle between them touch the same memory, one writing it:
    the GPU may run them at once, so what the later one sees (or leaves) is a race."""

    def __init__(self, later: str, later_does: str, earlier: str, earlier_did: str, address: int, resident: str):
        super().__init__(f"{later} {later_does} the word at {address:#x} ({resident}) that {earlier} {earlier_did} "
                         "before it, with no WAIT_FOR_IDLE (nor a semaphore release that waits for idle) between "
                         "them, and the earlier QMD does not schedule the later: the GPU may run the two "
                         "launches at once",
                         hint="bobc's encoder orders two launches of a submission whenever their kernels' "
                              "contracts say one writes what the other touches: a contract declaring less than "
                              "its code does (read where it writes, a smaller extent) lets them race; correct "
                              "the //@ param lines")
        self.later, self.earlier, self.address = later, earlier, address


class BlocksRace(SimulationFault):
    """Two blocks of one launch access one byte of global memory with plain loads and stores, one
    storing, that no synchronization orders (bobc.sim.races): the GPU runs them in either order."""

    blocks: tuple[int, int] = (0, 0)


class WarpsRace(SimulationFault):
    """Two warps of one block access one byte of its shared memory with plain loads and stores, one
    storing, that no synchronization of the block orders (bobc.sim.warps): the GPU schedules the
    warps in either order."""


class LanesRace(SimulationFault):
    """Two lanes of one warp store different values to one byte in one plain store instruction, or
    one lane loads a shared byte another lane stored after a branch parted them with nothing since
    making them wait for each other (bobc.sim.lanes): which lane's value the GPU keeps, or whether
    the load sees the store, is unspecified."""


class SemaphoreNotReleased(SimulationFault):
    """A submission ended without releasing the semaphore the host waits on."""


class HostStepFault(BobcError):
    """A step the C host would refuse as an internal error (runtime_c/plan_host.c: a
    schedule addressing no buffer, reading past an input, writing no output, ...)."""

    exit_code = 1       # the native host's RT_EXIT_INTERNAL
