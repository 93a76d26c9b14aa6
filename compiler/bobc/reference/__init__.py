"""The plan-driven NumPy reference host and the file rules it shares with the native host.

host: carries out a plan's own step list with a model's registered NumPy
kernels (a model brings them: `bobc run --reference --kernels FILE`, or
reference_kernels.py beside the plan).  envelope: the checkpoint envelope.
safe_io, publish: inputs read once and bounded, outputs published together.
runner: the three output paths.  Nothing here knows a model: each model's NumPy
model and file formats live with its example (examples/).
"""
