"""The NumPy reference runner for Bob and the Python side of its file formats.

formats: input record, checkpoint envelope, predictions, result record, the
fresh-initialization generator and the AdamW step scalars (docs/formats.md).
bob: the configuration and one invocation's math.  runner: files in, files
out, as `bobc run --reference` and the native host do it.  fixture: input
records from a text corpus.
"""
