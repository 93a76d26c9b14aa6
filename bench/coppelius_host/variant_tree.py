#!/usr/bin/env python3
"""Make a tree of this repository with one experimental change to how bobc builds a host, for
compare_builds.py: the QMD choices a CUDA graph makes (bench/results/cuda-launch-probe-h200.md)
one by one, the kernels emptied, every grid one block.  Experiments, not features: a build made
from such a tree may be wrong on purpose (compare it --unchecked).

    python3 bench/coppelius_host/variant_tree.py TREE CHANGE...
    cd TREE && BOBC_CACHE_DIR=off python tests/gpu/build_coppelius_host.py /work/main/.device/NAME --large

TREE is made from HEAD (git archive) with .venv and .whl linked to this checkout's.  CHANGE is any of
  sched     the dependent QMDs' action SCHEDULE instead of INVALIDATE_COPY_SCHEDULE
  cbinv     every QMD sets CONSTANT_BUFFER_INVALIDATE(0) again (main's until session 19: now no QMD
            does, and each submission's start drops the constant cache)
  chase     CWD_MEMBAR_TASK_CHASING_ENABLE 1 (V04_00)
  selfcopy  SELF_COPY_ON_COMPLETION 1 (V04_00; every build with it hung on the H200)
  membar3   CWD_MEMBAR_TYPE 3 (L1_MEMBAR: GPU scope) instead of 1 (L1_SYSMEMBAR)
  presend   every chained QMD REQUIRE_SCHEDULING_PCAS 1 and pre-sent (action 10, last first) after
            the stage; its parent only SCHEDULEs it (implies sched)
  vid       seed 004's program and QMD tables in video memory (edits the seed's NativeHost.bob)
  floor     every kernel's body EXIT (contracts, registers and .shared kept)
  grid1     every launch's grid (1, 1, 1), 32 registers, no shared memory (the stage keeps its own)
  nonext    no QMD prefetches its first dependent's code and bank 0 (encode.DependentPrefetch, main's
            since session 19): each prefetches its own code at launch, as before
  nolatch   no chained grid starts before its parent has fully ended (encode.programmatic_latches,
            main's since session 20): every dependent is scheduled when its parent's grid has ended
  spinegroup  every QMD but the leaves' (the launches forked beside the chain, and their side
            chains) in QMD_GROUP_ID 8, where CUDA puts a highest-priority stream's launches (0x3f, every
            QMD's in main, is a default-priority stream's: bench/results/cuda-launch-probe-h200.md)
  leafgroup   the other way round: the leaves' QMDs in group 8, the rest in 0x3f
  leafmask33, leafmask44  the leaves' QMDs disable TPCs 0..32 (0..43) with TPC_DISABLE_MASK (and
            TPC_DISABLE_MASK_VALID, which session 22's first builds lacked: a CUDA cluster launch sets it): the
            weight-gradient products run on the other TPCs only, and the rest of the SMs (66 and 44
            of the H200's 132) hold the chain's blocks alone
  clusters  every split product launched in thread-block clusters of (1, 1, S) (Coppelius.Build.Graph):
            bobc's cluster QMDs on the whole update, the splits' partials still through W; outputs as main's
  leaftree  the launches forked beside a spine launch (bobc.nvidia.launch_order: leaves) hang from it as
            a binary tree, each leaf starting the next two, instead of one side chain: leaves that do
            not conflict then run together (fusedadamw's products after its check; main's plan has no
            side chain longer than one launch, so alone it builds main's images)
  tn2stages the weight-gradient products' sm_90 kernel (coppelius-gemm-tn.sm_90.sass) with a ring of 2
            stages, not 4: half the shared memory, so twice the blocks an SM (faster alone at K = 256:
            bench/results/sm90-gemm-h200.md; nothing gained while they ran beside the backward, session 18)
  fusedadamw  AdamW in the weight-gradient products' epilogue (gemm flag 256) after the whole backward and
            a non-finite check over the gradients' binary32 parts and the products' binary16 operands:
            bench/coppelius_host/fused-adamw.patch (session 25's plan, measured before it lands: docs/
            coppelius.md, session 25; its tree regenerates tests/golden with tests/golden/regenerate.py
            and coppelius_host.images); outputs as main's, bit for bit (the same instructions)
--empty GLOB empties only the Coppelius kernel sources matching GLOB (as floor does them all), e.g.
'coppelius-gemm-tn*' for the weight-gradient products.
--split MAX,MIN[,FEW] changes Coppelius's split-K rule (at most MAX splits of at least MIN 32-k slices,
for products of fewer than FEW tiles; main's is 4,12,66) everywhere it is held: Coppelius.Build.Graph,
the arena's partials and tickets (ArenaPlan.bob, layout.py) and graph.py.  The partials' order changes
the sums' last bits: compare such a build --unchecked.
"""
import argparse
import glob
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CHANGES = ("sched", "cbinv", "chase", "selfcopy", "membar3", "presend", "vid", "floor", "grid1", "nonext",
           "nolatch", "spinegroup",
           "leafgroup", "leafmask33", "leafmask44", "clusters", "leaftree", "tn2stages", "fusedadamw")
FUSED_ADAMW = REPO / "bench" / "coppelius_host" / "fused-adamw.patch"


class Source:
    """One file of the tree, edited by exact replacements that must each find their text."""

    def __init__(self, path: Path):
        self.path, self.text = path, path.read_text()

    def replace(self, old: str, new: str) -> None:
        if old not in self.text:
            raise SystemExit(f"{self.path}: the text to change is not there (main moved on?): {old[:60]!r}")
        self.text = self.text.replace(old, new, 1)

    def save(self) -> None:
        self.path.write_text(self.text)


def encode_changes(encode: Source, changes: set[str]) -> None:
    if changes & {"sched", "presend"}:
        encode.replace('DEPENDENT_QMD_ACTION = "INVALIDATE_COPY_SCHEDULE"', 'DEPENDENT_QMD_ACTION = "SCHEDULE"')
    if "cbinv" in changes:
        encode.replace('    "CONSTANT_BUFFER_VALID(0)": 1,\n', '    "CONSTANT_BUFFER_VALID(0)": 1,\n    "CONSTANT_BUFFER_INVALIDATE(0)": 1,\n')
    extra = [f'"{field}": 1' for change, field in (("selfcopy", "SELF_COPY_ON_COMPLETION"),
                                                   ("chase", "CWD_MEMBAR_TASK_CHASING_ENABLE")) if change in changes]
    if extra:
        encode.replace('"QMD_MAJOR_VERSION": 4, "QMD_MINOR_VERSION": 0, "QMD_TYPE": 2}',
                       '"QMD_MAJOR_VERSION": 4, "QMD_MINOR_VERSION": 0, "QMD_TYPE": 2, ' + ", ".join(extra) + "}")
    if "nonext" in changes:
        encode.replace("    if following is not None and recipe.dependent_prefetch is not None:", "    if False:")
    if "nolatch" in changes:
        encode.replace("    if RECIPES[target.qmd_layout].programmatic is None or not target.launch_prologue:",
                       "    if True:")
    masked = [int(c[len("leafmask"):]) for c in changes if c.startswith("leafmask")]
    if changes & {"spinegroup", "leafgroup"} or masked:
        # what launch_qmd returns for a leaf and for the rest: `raw` (main's QMD) or it rewritten
        rewritten = "QMD(target.qmd_layout, raw){}.to_bytes(target.qmd_record_bytes)".format
        group8 = rewritten(".set('QMD_GROUP_ID', 8)")
        if masked:
            words = [sum(1 << (b - 32 * w) for b in range(masked[0]) if 32 * w <= b < 32 * w + 32) for w in range(3)]
            leaf = rewritten("".join(f".set('TPC_DISABLE_MASK({w})', {v})" for w, v in enumerate(words) if v)
                             + ".set('TPC_DISABLE_MASK_VALID', 1)")
            spine = "raw"
        else:
            leaf, spine = ("raw", group8) if "spinegroup" in changes else (group8, "raw")
        encode.replace("SEMAPHORE_PAYLOAD = 1\n", "SEMAPHORE_PAYLOAD = 1\n_LEAVES = set()\n")
        encode.replace("    return grid_qmd(target, _launch_name(index, launch),", "    raw = grid_qmd(target, _launch_name(index, launch),")
        encode.replace("                    where(placed.parameter_address), tuple(pointers), following, latches.get(index), arrive,\n"
                       "                    launch.cluster, barriers=qmd_barriers(region.code, target))\n",
                       "                    where(placed.parameter_address), tuple(pointers), following, latches.get(index), arrive,\n"
                       "                    launch.cluster, barriers=qmd_barriers(region.code, target))\n"
                       f"    return {leaf} if index in _LEAVES else {spine}\n")
        encode.replace('    qmd = b"".join(launch_qmd(plan, layout, i, order.schedules(i), home, latches) for i in range(len(plan.launches)))\n',
                       "    _LEAVES.clear()\n"
                       "    _LEAVES.update(ds[1] for ds in order.dependents.values() if len(ds) > 1)\n"
                       "    _grow = True\n"
                       "    while _grow:\n"
                       "        _more = {ds[0] for l, ds in order.dependents.items() if l in _LEAVES and ds} - _LEAVES\n"
                       "        _LEAVES.update(_more)\n"
                       "        _grow = bool(_more)\n"
                       '    qmd = b"".join(launch_qmd(plan, layout, i, order.schedules(i), home, latches) for i in range(len(plan.launches)))\n')
    if "membar3" in changes:
        encode.replace('    "CWD_MEMBAR_TYPE": 1,                   # L1_SYSMEMBAR', '    "CWD_MEMBAR_TYPE": 3,')
    if "grid1" in changes:
        encode.replace("    return grid_qmd(target, _launch_name(index, launch), launch.grid,",
                       "    return grid_qmd(target, _launch_name(index, launch), (1, 1, 1),")
        head = "    recipe = RECIPES[target.qmd_layout]\n    qmd = QMD(target.qmd_layout, context=name)\n"
        encode.replace(head, head + "    registers, shared_bytes = 32, 0\n")
    if "presend" in changes:
        encode.replace("SEMAPHORE_PAYLOAD = 1\n", "SEMAPHORE_PAYLOAD = 1\n_CHAINED = set()\n")
        encode.replace("    return grid_qmd(target, _launch_name(index, launch),", "    raw = grid_qmd(target, _launch_name(index, launch),")
        encode.replace("                    where(placed.parameter_address), tuple(pointers), following, latches.get(index), arrive,\n"
                       "                    launch.cluster, barriers=qmd_barriers(region.code, target))\n",
                       "                    where(placed.parameter_address), tuple(pointers), following, latches.get(index), arrive,\n"
                       "                    launch.cluster, barriers=qmd_barriers(region.code, target))\n"
                       "    if index in _CHAINED:\n"
                       "        return QMD(target.qmd_layout, raw).set('REQUIRE_SCHEDULING_PCAS', 1).to_bytes(target.qmd_record_bytes)\n"
                       "    return raw\n")
        encode.replace('    qmd = b"".join(launch_qmd(plan, layout, i, order.schedules(i), home, latches) for i in range(len(plan.launches)))\n',
                       "    _CHAINED.clear()\n    _CHAINED.update(d for ds in order.dependents.values() for d in ds)\n"
                       '    qmd = b"".join(launch_qmd(plan, layout, i, order.schedules(i), home, latches) for i in range(len(plan.launches)))\n')
        encode.replace("    for send in order.sends[index]:                # in range: plan_layout checked them\n",
                       "    sent = {send.launch for send in order.sends[index]}\n"
                       "    for chained in reversed(list(submission.launches)):\n"
                       "        if chained not in sent and chained in _CHAINED:\n"
                       "            push.inc(COMPUTE_SUBCHANNEL, pb.COMPUTE['SEND_PCAS_A'], layout.launches[chained].qmd_address >> 8)\n"
                       "            push.immd(COMPUTE_SUBCHANNEL, pb.COMPUTE['SEND_SIGNALING_PCAS2_B'], 10)\n"
                       "    for send in order.sends[index]:                # in range: plan_layout checked them\n")


def leaf_tree(order: Source) -> None:
    """bobc.nvidia.launch_order's leaves of one spine launch as a binary tree: each new leaf takes the
    first free dependent slot breadth-first (the spine launch's second, then each leaf's two)."""
    order.replace("""            parent = segment.side_tail.get(start, start)
            slot = 1 if parent == start else 0
""", """            free = segment.__dict__.setdefault("tree", {}).setdefault(start, [(start, 1)])
            parent, slot = free.pop(0) if free else (start, slots)
""")
    order.replace("""            segment.side_tail[start] = p
""", """            segment.side_tail[start] = p
            segment.tree[start] += [(p, 0), (p, 1)]
""")


def split_rule(tree: Path, most: int, least: int, few: int = 66) -> None:
    """Coppelius's split-K rule: at most `most` splits of at least `least` 32-k slices, for a
    product of fewer than `few` tiles (the arena's partials and tickets sized for that)."""
    example = tree / "examples" / "coppelius"
    graph = Source(example / "Coppelius" / "Build" / "Graph.bob")
    chain = "1"
    for s in range(2, most + 1):
        chain = f"(naturalSelect (cgSplitFits slices {s}) {s} {chain})"
    graph.replace("(naturalSelect (cgSplitFits slices 4) 4 (naturalSelect (cgSplitFits slices 3) 3 "
                  "(naturalSelect (cgSplitFits slices 2) 2 1)))", chain)
    graph.replace("(naturalLessOrEqual 12 (naturalDivideUnchecked slices s))",
                  f"(naturalLessOrEqual {least} (naturalDivideUnchecked slices s))")
    graph.replace("(naturalDivideUnchecked n 64)) 66))", f"(naturalDivideUnchecked n 64)) {few}))")
    partials, tickets = 4 * most * (few - 1) * 64 * 64, 4 * (few - 1)
    arena = Source(example / "Coppelius" / "ArenaPlan.bob")
    arena.replace("def coppeliusGemmPartialsBytes : Nat = 4259840", f"def coppeliusGemmPartialsBytes : Nat = {partials}")
    arena.replace("def coppeliusGemmTicketsBytes : Nat = 260", f"def coppeliusGemmTicketsBytes : Nat = {tickets}")
    layout = Source(example / "coppelius_model" / "layout.py")
    layout.replace("GEMM_PARTIALS_BYTES = 4 * 4 * 65 * 64 * 64", f"GEMM_PARTIALS_BYTES = 4 * {most} * {few - 1} * 64 * 64")
    layout.replace("GEMM_TICKETS_BYTES = 4 * 65", f"GEMM_TICKETS_BYTES = 4 * {few - 1}")
    rule = Source(example / "coppelius_model" / "graph.py")
    rule.replace("SPLIT_FEW_TILES, SPLIT_MIN_SLICES, SPLIT_MAX = 66, 12, 4",
                 f"SPLIT_FEW_TILES, SPLIT_MIN_SLICES, SPLIT_MAX = {few}, {least}, {most}")
    for source in (graph, arena, layout, rule):
        source.save()


CLUSTERED_LAUNCH = """-- cgLaunch's launch with its blocks grouped into thread-block clusters of (1, 1, cz)
def cgLaunchClustered =
  (lambda unrestricted place : (pi unrestricted k : Nat . Nat) .
    (lambda unrestricted k : Nat . (lambda unrestricted gx : Nat . (lambda unrestricted gy : Nat . (lambda unrestricted gz : Nat .
      (lambda unrestricted cz : Nat .
      (lambda unrestricted patches : (family NvidiaParameterPatches) .
        (constructor NvidiaLaunchSchedule NvidiaLaunchScheduleOne
          (constructor NvidiaLaunchTemplate NvidiaLaunchTemplateValue (coppeliusKernelName k)
            (constructor NvidiaLaunchKernel NvidiaLaunchKernelClustered
              (constructor NvidiaLaunchKernel NvidiaLaunchKernelValue
                (modelWord64FromNaturalTruncated (naturalAdd coppeliusProgramBase (place k))) gx gy gz 1 1 cgParameterBytes)
              1 1 cz)
            (constructor NvidiaParameterBlock NvidiaParameterBlockValue patches))))))))))

"""


def split_clusters(graph: Source) -> None:
    """Every split product launched in thread-block clusters of (1, 1, S), its S splits of a tile one
    cluster (sessions 23-27 measured an on-chip reduction of the splits this way, since taken out of
    the kernels: bench/results/coppelius-host-h200-variants-s27.txt); the partials go through W as
    unclustered, so compare such a build checked.  Unsplit products stay plain launches."""
    graph.replace("def cgThen =", CLUSTERED_LAUNCH + "def cgThen =")
    graph.replace("    (cgLaunch place form (naturalDivideUnchecked n 64) (naturalDivideUnchecked m 64) z\n",
                  "    (cgLaunchClustered place form (naturalDivideUnchecked n 64) (naturalDivideUnchecked m 64) z\n"
                  "      (naturalSelect split splits 1)\n")


def video_tables(host: Source) -> None:
    """Seed 004's program and QMD tables in video memory instead of system memory."""
    for name in ('b"program"', 'b"qmd"', 'b"qmd-overflow"'):
        host.replace("(coppeliusSystemBuffer " + name,
                     "(coppeliusVideoBuffer (coppeliusHostTargetChannelMemory target) " + name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tree", type=Path)
    parser.add_argument("changes", nargs="*", metavar="CHANGE", help=" ".join(CHANGES))
    parser.add_argument("--split", metavar="MAX,MIN[,FEW]", help="Coppelius's split-K rule (main's: 4,12,66)")
    parser.add_argument("--empty", action="append", default=[], metavar="GLOB",
                        help="empty the Coppelius kernel sources matching GLOB (repeatable)")
    args = parser.parse_args()
    changes, tree = set(args.changes), args.tree
    unknown = sorted(changes - set(CHANGES))
    if unknown:
        parser.error(f"unknown change {', '.join(unknown)} (known: {' '.join(CHANGES)})")
    if not changes and not args.split and not args.empty:
        parser.error("name a CHANGE, --split or --empty")
    split = tuple(int(x) for x in args.split.split(",")) if args.split else None
    if split and (len(split) not in (2, 3) or min(split) < 1 or (len(split) == 3 and split[2] < 2)):
        parser.error("--split takes MAX,MIN[,FEW]: positive numbers, FEW at least 2")
    if tree.exists():
        raise SystemExit(f"{tree} exists; give a new folder")
    tree.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(REPO), "archive", "HEAD"], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    for link in (".venv", ".whl"):
        if (REPO / link).exists():
            os.symlink(REPO / link, tree / link)
    encode = Source(tree / "compiler" / "bobc" / "nvidia" / "encode.py")
    encode_changes(encode, changes)
    encode.save()
    emptied = ["*.sass"] if "floor" in changes else args.empty
    for pattern in emptied:
        for kernel in glob.glob(str(tree / "examples/coppelius/Realization/Nvidia/SM86" / pattern)):
            lines = Path(kernel).read_text().splitlines()
            kept = [line for line in lines if line.lstrip().startswith(("//", ".kernel", ".registers", ".shared"))]
            Path(kernel).write_text("\n".join(kept + ["        EXIT ;"]) + "\n")
    if "clusters" in changes:
        graph = Source(tree / "examples/coppelius/Coppelius/Build/Graph.bob")
        split_clusters(graph)
        graph.save()
    if "leaftree" in changes:
        order = Source(tree / "compiler" / "bobc" / "nvidia" / "launch_order.py")
        leaf_tree(order)
        order.save()
    if "fusedadamw" in changes:
        subprocess.run(["git", "apply", "--binary", str(FUSED_ADAMW)], cwd=tree, check=True)
    if "tn2stages" in changes:      # after the patch, so that the kernel is the tree's generator's
        kernel = tree / "examples/coppelius/Realization/Nvidia/SM86/coppelius-gemm-tn.sm_90.sass"
        subprocess.run([sys.executable, "-c", "import sys; from pathlib import Path; "
                        "from bobc.sass.generate import gemm_sm90 as g; "
                        "Path(sys.argv[1]).write_text(g.generate(g.VARIANTS['tn'], 'coppelius-gemm', stages=2))",
                        str(kernel)], env=dict(os.environ, PYTHONPATH=str(tree / "compiler")), check=True)
    if "vid" in changes:
        host = Source(tree / "examples/coppelius/Coppelius/Build/NativeHost.bob")
        video_tables(host)
        host.save()
    if split:
        split_rule(tree, *split)
    what = sorted(changes) + (["split " + ",".join(map(str, split))] if split else []) + \
        [f"empty {pattern}" for pattern in args.empty]
    print(f"{tree}: {' '.join(what)}", file=sys.stderr)


if __name__ == "__main__":
    main()
