"""Coppelius in NumPy: its configuration, arena and launch graph, one update's
mixed-precision reference, and its token-stream format (docs/coppelius.md).

config: the two configurations and the flat parameter order.  layout: the
device arena and the staging buffer (every resident, its offset and extent).
graph: the launches of one update, each with its kernel, grid and parameter
words.  model: forward, backward and AdamW in the kernels' arithmetic (binary16
inputs to the matrix products, binary32 everywhere else), or in binary64 for
the gradient check.  stream: the token stream the host reads.  limits: the
performance limit of one update on the H200.

Import it with examples/coppelius on the module path (tests/coppelius/conftest.py
and tests/gpu/test_coppelius_update.py put it there).
"""
