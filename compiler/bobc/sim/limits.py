"""The simulator's limits, apart from its NumPy machinery, so `bobc --help` can name them
without importing the simulator (docs/simulator.md, "Step limit")."""

MAX_STEPS = 5_000_000    # instructions a launch may issue (one per step of the grid) before it is stopped
