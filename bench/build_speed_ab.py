"""probe s42 buildspeed, as run for bench/results/build-speed-s42.md (SCRATCH holds LARGE, the large
configuration's plan copy, and the outputs; default /work/scratch-buildspeed):

    python bench/build_speed_ab.py BEFORE AFTER ROUNDS LARGE_ROUNDS OUT.json

Fresh `python -m bobc` processes, the trees
alternating run by run; wall (spawn to exit) and CPU (user+system of it and its children, gcc included)."""
import json, os, resource, statistics, subprocess, sys, time
before, after, rounds, large_rounds, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
S = os.environ.get("SCRATCH", "/work/scratch-buildspeed")
PY = sys.executable
def cases(tree):
    large = [f"{S}/large/Coppelius/Build/DirectArtifact.bob", "-I", f"{tree}/examples/coppelius"]
    return {
        "bob build (warm cache)": (["build", "examples/bob/Bob/Build/NativeHost.bob", "--target", "sm_90", "-o", f"{S}/b42-bob"], "warm"),
        "bob build (cache off)": (["build", "examples/bob/Bob/Build/NativeHost.bob", "--target", "sm_90", "-o", f"{S}/b42-bob"], "off"),
        "bob check (cache off)": (["check", "examples/bob/Bob/Build/NativeHost.bob", "--target", "sm_90"], "off"),
        "coppelius small build (cache off)": (["build", "examples/coppelius/Coppelius/Build/DirectArtifact.bob", "--entry", "coppeliusHost", "--target", "sm_90", "-o", f"{S}/b42-cs"], "off"),
        "coppelius small check (cache off)": (["check", "examples/coppelius/Coppelius/Build/DirectArtifact.bob", "--target", "sm_90"], "off"),
        "coppelius large build (cache off)": (["build", *large, "--entry", "coppeliusHost", "--target", "sm_90", "-o", f"{S}/b42-cl"], "off"),
        "coppelius large check (cache off)": (["check", *large, "--target", "sm_90"], "off"),
    }
def run(tree, args, cache):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = f"{tree}/compiler"
    env["BOBC_CACHE_DIR"] = "off" if cache == "off" else f"{S}/cache42-{os.path.basename(tree)}"
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN); t0 = time.perf_counter()
    p = subprocess.run([PY, "-m", "bobc", *args], cwd=tree, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0; r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode: sys.exit(f"{args} in {tree}: {p.returncode}\n{p.stderr}")
    return round(wall, 3), round(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime, 3)
trees = {"before": before, "after": after}
for name, tree in trees.items():      # fill each tree's own warm cache (untimed)
    run(tree, cases(tree)["bob build (warm cache)"][0], "warm")
res = {n: {t: [] for t in trees} for n in cases(before)}
loads = [os.getloadavg()[0]]
for n in cases(before):
    k = large_rounds if "large build" in n else rounds
    for r in range(k):
        for t, tree in (trees.items() if r % 2 == 0 else reversed(trees.items())):
            args, cache = cases(tree)[n]
            res[n][t].append(run(tree, args, cache))
            print(n, t, res[n][t][-1], flush=True)
    loads.append(os.getloadavg()[0])
summary = {n: {t: {"wall": [s[0] for s in v], "cpu": [s[1] for s in v], "wall_median": statistics.median(s[0] for s in v), "cpu_median": statistics.median(s[1] for s in v)} for t, v in d.items()} for n, d in res.items()}
json.dump({"loads": loads, "results": summary}, open(out, "w"), indent=1)
print(json.dumps({"loads": loads}))
