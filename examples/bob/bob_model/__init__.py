"""Bob's NumPy model and the Python side of Bob's file formats (docs/formats.md).

formats: input record, checkpoint envelope, predictions, result record, the
fresh-initialization generator and the AdamW step scalars.  model: the
configuration and one invocation's math, written independently of the plan's
kernels (the reference the C agreement tests hold runtime_c to).  runner: files
in, files out.  fixture: input records from a text corpus.

Import it with examples/bob on the module path (the tests' pytest
configuration and build_fixture.py put it there).
"""
