"""probe s43 buildearly, as run for bench/results/build-speed-s43.md:

    python bench/build_early_ab.py BEFORE AFTER ROUNDS LARGE_ROUNDS OUT.json

BEFORE and AFTER are two trees (git archives); SCRATCH (default /work/scratch-buildearly) holds
LARGE (SCRATCH/large/Coppelius: examples/coppelius/Coppelius with the large Configuration.bob, as
`python -m coppelius_host.build sm_90 --config large` makes it), the caches and the hosts.  Fresh
`python -m bobc` processes, the trees alternating run by run (before, after; then after, before;
...); wall (spawn to exit) and CPU (user + system of it and its children, gcc included).  "first
build" is an empty cache folder made for that one run (nothing cached: the runtime, the parsed
modules, the verdicts); "warm" the tree's own cache folder, filled by one untimed build first.
Each case's hosts are compared across the trees at the end (sha256): the same bytes."""
import hashlib, json, os, resource, shutil, statistics, subprocess, sys, time
before, after, rounds, large_rounds, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
S = os.environ.get("SCRATCH", "/work/scratch-buildearly")
PY = sys.executable
BOB = ["examples/bob/Bob/Build/NativeHost.bob", "--target", "sm_90"]
SMALL = ["examples/coppelius/Coppelius/Build/DirectArtifact.bob", "--entry", "coppeliusHost", "--target", "sm_90"]
def cases(tree):
    large = [f"{S}/large/Coppelius/Build/DirectArtifact.bob", "-I", f"{tree}/examples/coppelius", "--entry",
             "coppeliusHost", "--target", "sm_90"]
    return {
        "bob build (first build)": (BOB, "empty"),
        "bob build (warm cache)": (BOB, "warm"),
        "coppelius small build (first build)": (SMALL, "empty"),
        "coppelius large build (first build)": (large, "empty"),
    }
def host(tree, name):
    return f"{S}/hosts/{os.path.basename(tree)}-{name.split(' (')[0].replace(' ', '-')}"
def run(tree, name, args, cache):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = f"{tree}/compiler"
    folder = f"{S}/cache43-{os.path.basename(tree)}"
    if cache == "empty":
        folder = f"{S}/cache43-empty"
        shutil.rmtree(folder, ignore_errors=True)
    env["BOBC_CACHE_DIR"] = "off" if cache == "off" else folder
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN); t0 = time.perf_counter()
    p = subprocess.run([PY, "-m", "bobc", "build", *args, "-o", host(tree, name)], cwd=tree, env=env,
                       capture_output=True, text=True)
    wall = time.perf_counter() - t0; r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode: sys.exit(f"{args} in {tree}: {p.returncode}\n{p.stderr}")
    return round(wall, 3), round(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime, 3)
os.makedirs(f"{S}/hosts", exist_ok=True)
trees = {"before": before, "after": after}
for t, tree in trees.items():      # bytecode written once, and each tree's own warm cache (untimed)
    run(tree, "bob build (warm cache)", BOB, "warm")
res = {n: {t: [] for t in trees} for n in cases(before)}
loads = [os.getloadavg()[0]]
for n in cases(before):
    k = large_rounds if "large" in n else rounds
    if k == 0:
        continue
    for r in range(k):
        for t, tree in (trees.items() if r % 2 == 0 else reversed(trees.items())):
            args, cache = cases(tree)[n]
            res[n][t].append(run(tree, n, args, cache))
            print(n, t, res[n][t][-1], flush=True)
    loads.append(os.getloadavg()[0])
res = {n: d for n, d in res.items() if d["before"]}
same = {n: len({hashlib.sha256(open(host(tree, n), "rb").read()).hexdigest() for tree in trees.values()}) == 1
        for n in res}
digests = {n: hashlib.sha256(open(host(after, n), "rb").read()).hexdigest()[:16] for n in res}
summary = {n: {t: {"wall": [s[0] for s in v], "cpu": [s[1] for s in v], "wall_median": statistics.median(s[0] for s in v),
                   "cpu_median": statistics.median(s[1] for s in v)} for t, v in d.items()} for n, d in res.items()}
json.dump({"loads": loads, "results": summary, "hosts_identical": same, "host_sha256_16": digests}, open(out, "w"),
          indent=1)
print(json.dumps({"loads": loads, "hosts_identical": same, "host_sha256_16": digests}))
