"""Seed 004's host around Coppelius (docs/coppelius-host.md): building it with bobc
(`images`), the checkpoint a fresh run starts from (`checkpoint`), and the
reference runs the tests compare the built host with."""
