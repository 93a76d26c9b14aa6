"""probe s43 buildearly (bench/results/build-speed-s43.md), run as `python bench/build_early_phases.py build PLAN ...`
with PYTHONPATH=TREE/compiler: wall of the build, of evaluation (compile_plan) and of the main thread's time in
library_objects (the link's wait for the runtime); BOBC_CACHE_DIR an empty folder per run."""
import os, sys, time
t0 = time.perf_counter()
from bobc import cli, pipeline
from bobc.host import gcc
spans = {}
def wrap(mod, name):
    f = getattr(mod, name)
    def g(*a, **k):
        s = time.perf_counter()
        try: return f(*a, **k)
        finally: spans[name] = spans.get(name, 0) + time.perf_counter() - s
    setattr(mod, name, g)
wrap(pipeline, "compile_plan"); wrap(gcc, "library_objects")
code = cli.main(sys.argv[1:])
print(f"RESULT total {time.perf_counter()-t0:.2f} eval {spans['compile_plan']:.2f} runtime_wait {spans['library_objects']:.2f} load {os.getloadavg()[0]:.1f}", file=sys.stderr)
