"""Seed 003's partitioned regression outside the plan language: the exact arithmetic
(reference.py), the files (formats.py), the plan's hosts evaluated (artifacts.py) and run
on the CPU with the device emulated (emulation.py).  docs/partitioned-regression.md."""
