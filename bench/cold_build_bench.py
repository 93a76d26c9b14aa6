"""What a build that compiles the C runtime, a dump and a diff cost, for one or more bobc trees side by side.

The slow one-time steps of bobc (probe s29 speed): the runtime's C sources compiled on a cache miss
(a first build, BOBC_CACHE_DIR=off, a bobc or gcc upgrade), the native host interpreter linked from
them (Coppelius), and nvdisasm started for every region by `bobc dump` / `bobc diff`.  Each figure
is one fresh process (`python -m bobc ...` with PYTHONPATH=TREE/compiler, run in TREE: the plans built
are the tree's own examples), timed from spawn to exit:
wall seconds and CPU seconds (user + system of the process and the children it waited for: gcc,
nvdisasm).  The trees are run in alternation, round by round, so a shared machine's load falls on
each alike.  The hosts each tree builds with the cache off are compared by SHA-256 across trees
(use trees that are not git checkouts, e.g. `git archive`, or a clean checkout's commit is
stamped into its hosts and they differ by that alone).

    python bench/cold_build_bench.py --tree before=/tmp/a --tree after=/tmp/b [--rounds 3]
        # writes bench/results/cold-build-<UTC>.{md,json}
"""
from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import platform
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BOB = "examples/bob/Bob/Build/NativeHost.bob"
COPPELIUS = "examples/coppelius/Coppelius/Build/DirectArtifact.bob"


def run(command: list[str], env: dict, tree: Path, ok=(0,)) -> tuple[float, float]:
    """(wall, CPU) seconds of one fresh process, run in `tree` (its plans, as its bobc)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, cwd=tree, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in ok:
        sys.exit(f"cold_build_bench: {' '.join(command)} failed ({done.returncode}):\n{done.stderr}")
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def cases(scratch: Path) -> dict[str, tuple[list[str], dict, tuple]]:
    """name -> (bobc arguments, extra environment, accepted exit codes)."""
    hosts = scratch / "hosts"
    return {
        "build Bob sm_90, cache off": (["build", BOB, "--target", "sm_90", "-o", str(scratch / "b")],
                                       {"BOBC_CACHE_DIR": "off"}, (0,)),
        "build Coppelius sm_90, cache off": (["build", COPPELIUS, "--entry", "coppeliusHost", "--target", "sm_90",
                                              "-o", str(scratch / "c")], {"BOBC_CACHE_DIR": "off"}, (0,)),
        "first build of Bob sm_90, empty cache": (["build", BOB, "--target", "sm_90", "-o", str(scratch / "f")],
                                                  {"BOBC_CACHE_DIR": "@fresh"}, (0,)),
        "dump Bob's sm_90 host": (["dump", str(hosts / "bob-sm_90")], {"BOBC_CACHE_DIR": "off"}, (0,)),
        "diff Bob's sm_90 and sm_86 hosts": (["diff", str(hosts / "bob-sm_90"), str(hosts / "bob-sm_86")],
                                             {"BOBC_CACHE_DIR": "off"}, (1,)),
    }


def summary(samples: list[tuple[float, float]]) -> dict:
    """One case's (wall, CPU) samples as recorded (to the millisecond) and their medians, computed from
    the recorded ones so they follow from them: a median of the unrounded ones could round the other
    way (bench/refusal_bench.py, 01fa117; probe s37 leftovers finding 7)."""
    wall, cpu = [round(w, 3) for w, _ in samples], [round(c, 3) for _, c in samples]
    return {"wall_s": wall, "cpu_s": cpu, "wall_median_s": round(statistics.median(wall), 3),
            "cpu_median_s": round(statistics.median(cpu), 3)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", action="append", required=True, metavar="LABEL=PATH",
                        help="a bobc tree (PATH/compiler is put on PYTHONPATH); give several to compare")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", default=str(REPO / "bench" / "results"))
    parser.add_argument("--note", default="")
    args = parser.parse_args()
    trees = {label: Path(path).resolve() for label, path in (t.split("=", 1) for t in args.tree)}
    samples: dict[str, dict[str, list[tuple[float, float]]]] = {label: {} for label in trees}
    identity: dict[str, dict[str, str]] = {label: {} for label in trees}
    with tempfile.TemporaryDirectory(prefix="bobc-cold-bench-") as folder:
        scratch = Path(folder)
        base = {k: v for k, v in os.environ.items() if k not in ("BOBC_CACHE_DIR", "PYTHONDONTWRITEBYTECODE")}
        envs = {label: {**base, "PYTHONPATH": str(path / "compiler")} for label, path in trees.items()}
        bobc = [sys.executable, "-m", "bobc"]
        for label, env in envs.items():         # untimed: bytecode written, the hosts dump and diff read
            hosts = scratch / label / "hosts"
            hosts.mkdir(parents=True)
            off = {**env, "BOBC_CACHE_DIR": "off"}
            for target in ("sm_90", "sm_86"):
                run([*bobc, "build", BOB, "--target", target, "-o", str(hosts / f"bob-{target}")], off, trees[label])
            run([*bobc, "build", COPPELIUS, "--entry", "coppeliusHost", "--target", "sm_90", "-o",
                 str(hosts / "coppelius-sm_90")], off, trees[label])
            for host in sorted(hosts.iterdir()):
                identity[label][host.name] = hashlib.sha256(host.read_bytes()).hexdigest()
        load_before = os.getloadavg()
        for round_ in range(args.rounds):
            for label, env in envs.items():
                for name, (arguments, extra, ok) in cases(scratch / label).items():
                    extra = dict(extra)
                    if extra.get("BOBC_CACHE_DIR") == "@fresh":
                        extra["BOBC_CACHE_DIR"] = str(scratch / label / f"cache-{round_}")
                    samples[label].setdefault(name, []).append(run([*bobc, *arguments], {**env, **extra},
                                                                   trees[label], ok))
        load_after = os.getloadavg()
    now = datetime.datetime.now(datetime.timezone.utc)
    command = shlex.join(["python", "bench/cold_build_bench.py", *sys.argv[1:]])
    report = {"date": now.isoformat(timespec="seconds"), "command": command, "note": args.note,
              "trees": {label: str(path) for label, path in trees.items()}, "rounds": args.rounds,
              "machine": {"platform": platform.platform(), "cpus": os.cpu_count(),
                          "python": platform.python_version(),
                          "load_average_before": [round(x, 2) for x in load_before],
                          "load_average_after": [round(x, 2) for x in load_after]},
              "hosts_sha256": identity,
              "results": {label: {name: summary(s) for name, s in by_name.items()}
                          for label, by_name in samples.items()}}
    same = all(identity[label] == next(iter(identity.values())) for label in identity)
    labels = list(trees)
    lines = [f"# Cold builds, dump and diff of bobc trees side by side ({now:%Y-%m-%d %H:%M} UTC)", "",
             f"Command: `{command}`" + (f" ({args.note})" if args.note else ""),
             f"({os.cpu_count()} CPUs; load average {load_before[0]:.2f} before, {load_after[0]:.2f} after; "
             f"median of {args.rounds} fresh processes per tree, the trees alternating round by round.)", "",
             "| what | " + " | ".join(f"{label}: wall / CPU" for label in labels) + " |",
             "|---|" + "---|" * len(labels)]
    for name in cases(Path("x")):
        cells = [f"{report['results'][label][name]['wall_median_s']:.2f} / "
                 f"{report['results'][label][name]['cpu_median_s']:.2f} s" for label in labels]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += ["", "Hosts built with the cache off, SHA-256 " + ("identical across the trees:" if same
                                                                 else "DIFFERENT between the trees:")]
    for label in labels:
        lines.append(f"- {label}: " + ", ".join(f"{n} {h[:16]}" for n, h in identity[label].items()))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stem = f"cold-build-{now:%Y%m%dT%H%M%SZ}"
    (out / f"{stem}.json").write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    (out / f"{stem}.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
