"""The native host: C generated from the plan, built by gcc, images in ELF sections."""
