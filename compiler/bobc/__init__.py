"""bobc: compiles declarative plan modules into a native NVIDIA training host."""

__version__ = "0.1.0"
