"""The NVIDIA command images: QMDs, pushbuffer methods, GPFIFO entries.

Each concern is one module with its format as a data table (field name ->
bit positions, method offset -> name) and an encoder/decoder pair over it;
encode.py turns a WholeProgramPlan into the four images and a manifest,
decode.py reads them back for `bobc dump`, golden.py diffs two image folders
field by field.
"""
