"""Helpers the plan tests share (values of definitions as Python values)."""


def nat(program, name):
    return program.value(name).value


def call(program, name, *args):
    """Apply definition `name` to naturals/bytes, returning the forced result's Python value."""
    from bobc.language import VBytes, VNat
    values = [VNat(a) if isinstance(a, int) else VBytes(a) for a in args]
    return program.apply(program.value(name), *values).value
