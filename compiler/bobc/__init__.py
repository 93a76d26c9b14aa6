"""bobc: compiles declarative plan modules into a native NVIDIA training host."""

# The one place bobc's version is written: pyproject.toml reads it (tool.setuptools.dynamic),
# `bobc --version`, the hosts' version text and the assembler's cubins (sass/cubin.py) use it.
__version__ = "0.1.0"
