"""Thread-block clusters in the simulator (sm_90), checked with code ptxas chooses.

The kernel (ptx/cluster_exchange.ptx) reads what PTX says of its cluster -- its rank, the cluster's
size and shape, the clusters' count, whether it was launched in clusters -- from the bank 0 words
ptxas reads them from (bobc.nvidia.encode.ClusterLaunch: what CUDA's driver fills, and what bobc's
encoder writes), and a peer's shared memory through mapa + ld.shared::cluster.  The expected values
are PTX's definitions (PTX ISA, special registers: ranks x fastest within a cluster), computed here
in NumPy; so a simulator or an encoder that disagrees with CUDA's reading fails."""
from __future__ import annotations

import numpy as np
import pytest

from . import ptx_kernels
from bobc.sim.faults import SimulationFault
from bobc.sim.kernel import run_kernel

RECORD = 10     # u32 a block: rank, blocks a cluster, cluster x, y, z, clusters x, y, z, explicit, peer's


def expected(grid, cluster, explicit):
    gx, gy, gz = grid
    cx, cy, cz = cluster
    rows = []
    for z in range(gz):
        for y in range(gy):
            for x in range(gx):
                rank = x % cx + (y % cy) * cx + (z % cz) * cx * cy
                size = cx * cy * cz
                peer_rank = (rank + 1) % size
                px, py, pz = peer_rank % cx, (peer_rank // cx) % cy, peer_rank // (cx * cy)
                peer = (x - x % cx + px) + gx * ((y - y % cy + py) + gy * (z - z % cz + pz))
                rows.append([rank, size, cx, cy, cz, gx // cx, gy // cy, gz // cz, explicit, peer])
    return np.array(rows, dtype=np.uint32)


@pytest.mark.parametrize("grid,cluster", [((4, 1, 6), (1, 1, 3)), ((4, 2, 2), (2, 1, 2)), ((6, 1, 1), (2, 1, 1))],
                         ids=["1x1x3", "2x1x2", "2x1x1"])
def test_a_cluster_reads_its_words_and_its_peers_shared_memory(grid, cluster):
    code = ptx_kernels.kernel("cluster_exchange", "sm_90")
    blocks = grid[0] * grid[1] * grid[2]
    out = run_kernel(code, "sm_90", grid, (64, 1, 1), ["out"],
                     {"out": np.full(blocks * RECORD, 0xDEADBEEF, np.uint32)}, cluster=cluster)
    np.testing.assert_array_equal(out["out"].reshape(blocks, RECORD), expected(grid, cluster, 1))


def test_without_clusters_each_block_is_its_own():
    """A launch without clusters (and any launch on a target without them): one block a cluster,
    %is_explicit_cluster false, ptxas's barrier a BAR.SYNC, the 'peer' the block itself."""
    code = ptx_kernels.kernel("cluster_exchange", "sm_90")
    out = run_kernel(code, "sm_90", (3, 2, 1), (64, 1, 1), ["out"], {"out": np.zeros(6 * RECORD, np.uint32)})
    got = out["out"].reshape(6, RECORD)
    np.testing.assert_array_equal(got[:, [0, 1, 8]], np.tile([0, 1, 0], (6, 1)))
    np.testing.assert_array_equal(got[:, 9], np.arange(6))


# ptxas's barrier.cluster.arrive.release + wait.acquire, and its fence.acq_rel.cluster after the last one
ARRIVE_WAIT = """[B------:R-:W-:-:S06] MEMBAR.ALL.GPU
[B------:R-:W-:Y:S00] ERRBAR
[B------:R-:W-:-:S08] CGAERRBAR
[B------:R-:W-:-:S01] UCGABAR_ARV
[B------:R-:W-:-:S01] UCGABAR_WAIT
[B------:R-:W-:-:S01] CCTL.IVALL
"""
# each block's word at shared 0x400: sm_90 keeps the first KiB for the system (docs/targets.md)
CLUSTER_PRELUDE = """.kernel peek
.registers 16
S2R R0, SR_TID.X
S2R R1, SR_CgaCtaId
SHF.L.U32 R2, R1, 0x18, RZ
STS [R2+0x400], R1
""" + ARRIVE_WAIT + "ISETP.NE.U32.AND P0, PT, R1, RZ, PT\n"


def _peek(rest: str):
    """Rank 0 reads rank 1's word through the window; `rest`: what the blocks do after."""
    text = CLUSTER_PRELUDE + rest
    return run_kernel(text, "sm_90", (2, 1, 1), (32, 1, 1), [], {}, shared_bytes=0x410, cluster=(2, 1, 1))


def test_a_peer_that_exits_before_it_is_read_is_a_fault():
    with pytest.raises(SimulationFault, match="whose block has exited"):
        _peek("""@P0 EXIT
S2R R5, SR_SWINHI
MOV R4, 0x1000400
LD.E R6, [R4]
EXIT
""")


FENCE = """[B------:R-:W-:-:S06] MEMBAR.ALL.GPU
[B------:R-:W-:Y:S00] ERRBAR
[B------:R-:W-:-:S06] CGAERRBAR
[B012345:R-:W-:-:S01] CCTL.IVALL
"""
SECOND_BARRIER = """@P0 BRA hold
S2R R5, SR_SWINHI
MOV R4, 0x1000400
LD.E R6, [R4]
FADD R6, R6, RZ
hold:
""" + ARRIVE_WAIT + FENCE + "EXIT\n"


def test_a_second_barrier_keeps_the_peer():
    _peek(SECOND_BARRIER)


def test_a_block_that_was_read_exits_after_the_fence():
    """On the H200 a peer exchange whose blocks exited right after the last cluster barrier failed
    the launch (one cluster or many, 4 KiB or 33 KiB blocks); with ptxas's fence.acq_rel.cluster after
    the barrier it ran on every grid (bench/results/cuda-cluster-launch-h200.md, session 24).  The
    simulator refuses the exit of a block a peer has read without it, and only of such a block."""
    with pytest.raises(SimulationFault, match="fence.acq_rel.cluster"):
        _peek(SECOND_BARRIER.replace(FENCE, ""))
    # rank 0 read rank 1 but was not read: it alone may leave without the fence
    _peek(SECOND_BARRIER.replace("hold:\n", ARRIVE_WAIT + "EXIT\nhold:\n"))


def test_a_bare_arrive_after_a_peer_load_is_refused():
    """On the H200 a block that arrived with a bare UCGABAR_ARV after reading its peer's shared
    memory failed the launch; with ptxas's release sequence (its CGAERRBAR) the same kernel ran
    (bench/results/cuda-cluster-launch-h200.md)."""
    bare = SECOND_BARRIER.replace("[B------:R-:W-:-:S08] CGAERRBAR\n", "")
    with pytest.raises(SimulationFault, match="without a CGAERRBAR"):
        _peek(bare)


def test_waiting_without_arriving_is_a_fault():
    text = ".kernel w\n.registers 8\n[B------:R-:W-:-:S01] UCGABAR_WAIT\nEXIT\n"
    with pytest.raises(SimulationFault, match="without having arrived"):
        run_kernel(text, "sm_90", (2, 1, 1), (32, 1, 1), [], {}, cluster=(2, 1, 1))


def test_a_plain_offset_from_a_later_rank_is_refused():
    """In a launch of clusters of several blocks, a shared address carries its block's rank in the
    top byte; the H200 refuses an STS of a plain offset from rank 1 (CUDA_ERROR_ILLEGAL_INSTRUCTION,
    bench/results/cuda-cluster-launch-h200.md), and so does the simulator."""
    text = CLUSTER_PRELUDE.replace("SHF.L.U32 R2, R1, 0x18, RZ", "MOV R2, 0x0") + "EXIT\n"
    with pytest.raises(SimulationFault, match="carries its block's rank in the top byte"):
        run_kernel(text, "sm_90", (2, 1, 1), (32, 1, 1), [], {}, shared_bytes=0x410, cluster=(2, 1, 1))
    run_kernel(text, "sm_90", (2, 1, 1), (32, 1, 1), [], {}, shared_bytes=0x410)     # unclustered: rank 0


WINDOW_LOAD = """.kernel w
.registers 16
S2R R5, SR_SWINHI
IADD3 R4, RZ, 0x400, RZ
LD.E R6, [R4]
EXIT
"""


def test_the_window_load_waits_for_its_address_high_word():
    """sm_90's descriptor-less LD.E Rd, [Ra] reads the pair Ra, Ra+1 although its text names Ra
    alone: the scheduler makes it wait for Ra+1's producer (here SR_SWINHI), and the control-code
    checker refuses it when it does not (the H200 faulted on the load that read a stale high word)."""
    from bobc.sass.assembler import assemble
    from bobc.sim.faults import Hazard
    s2r, _, load = assemble(WINDOW_LOAD, "sm_90").instructions[:3]
    assert load.control.wait_mask & (1 << s2r.control.write_barrier), (s2r.control, load.control)
    unwaited = WINDOW_LOAD.replace("S2R R5, SR_SWINHI", "[B------:R-:W5:-:S02] S2R R5, SR_SWINHI").replace(
        "LD.E R6, [R4]", "[B------:R-:W4:-:S02] LD.E R6, [R4]")
    with pytest.raises(Hazard, match="R5"):
        run_kernel(unwaited, "sm_90", (1, 1, 1), (32, 1, 1), [], {}, shared_bytes=0x410)
