"""bobc's SASS assembler for sm_86 and sm_90 (see assembler.py for the source format)."""
from .assembler import Assembled, AssembledInstruction, assemble, assemble_kernel

__all__ = ["Assembled", "AssembledInstruction", "assemble", "assemble_kernel"]
