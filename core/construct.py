"""Making instances of slotted attrs classes from already-checked field values, fast.

A decoded record is the hot path of restart's replay: its decoder has already made every
check the class's validators and converters would, so running ``__init__`` again (which,
for a frozen class, sets each field through ``object.__setattr__``) is pure overhead.
:func:`builder` returns a function that takes all the fields' values in order, creates the
instance with ``object.__new__`` and fills each slot through its member descriptor.

One plain function per number of fields (no code is generated at run time); a class with
another number of fields gets a clear error when its builder is made, at import.
"""

from __future__ import annotations

from typing import Callable

import attrs

_new = object.__new__


def _five(cls, s0, s1, s2, s3, s4):
    def build(v0, v1, v2, v3, v4):
        self = _new(cls)
        s0(self, v0); s1(self, v1); s2(self, v2); s3(self, v3); s4(self, v4)  # noqa: E702
        return self
    return build


def _six(cls, s0, s1, s2, s3, s4, s5):
    def build(v0, v1, v2, v3, v4, v5):
        self = _new(cls)
        s0(self, v0); s1(self, v1); s2(self, v2); s3(self, v3); s4(self, v4); s5(self, v5)  # noqa: E702
        return self
    return build


def _eight(cls, s0, s1, s2, s3, s4, s5, s6, s7):
    def build(v0, v1, v2, v3, v4, v5, v6, v7):
        self = _new(cls)
        s0(self, v0); s1(self, v1); s2(self, v2); s3(self, v3); s4(self, v4); s5(self, v5)  # noqa: E702
        s6(self, v6); s7(self, v7)  # noqa: E702
        return self
    return build


def _nine(cls, s0, s1, s2, s3, s4, s5, s6, s7, s8):
    def build(v0, v1, v2, v3, v4, v5, v6, v7, v8):
        self = _new(cls)
        s0(self, v0); s1(self, v1); s2(self, v2); s3(self, v3); s4(self, v4); s5(self, v5)  # noqa: E702
        s6(self, v6); s7(self, v7); s8(self, v8)  # noqa: E702
        return self
    return build


def _ten(cls, s0, s1, s2, s3, s4, s5, s6, s7, s8, s9):
    def build(v0, v1, v2, v3, v4, v5, v6, v7, v8, v9):
        self = _new(cls)
        s0(self, v0); s1(self, v1); s2(self, v2); s3(self, v3); s4(self, v4); s5(self, v5)  # noqa: E702
        s6(self, v6); s7(self, v7); s8(self, v8); s9(self, v9)  # noqa: E702
        return self
    return build


def _twelve(cls, s0, s1, s2, s3, s4, s5, s6, s7, s8, s9, s10, s11):
    def build(v0, v1, v2, v3, v4, v5, v6, v7, v8, v9, v10, v11):
        self = _new(cls)
        s0(self, v0); s1(self, v1); s2(self, v2); s3(self, v3); s4(self, v4); s5(self, v5)  # noqa: E702
        s6(self, v6); s7(self, v7); s8(self, v8); s9(self, v9); s10(self, v10); s11(self, v11)  # noqa: E702
        return self
    return build


_BY_COUNT = {5: _five, 6: _six, 8: _eight, 9: _nine, 10: _ten, 12: _twelve}


def builder(cls) -> Callable:
    """A function that makes a ``cls`` from all its field values in declaration order,
    without running ``__init__`` (so without validators, converters or post-init: the caller
    vouches for the values)."""
    if "__slots__" not in cls.__dict__:
        raise TypeError(f"{cls.__name__} is not a slotted attrs class")
    setters = [cls.__dict__[field.name].__set__ for field in attrs.fields(cls)]
    make = _BY_COUNT.get(len(setters))
    if make is None:
        raise TypeError(f"no builder for a class of {len(setters)} fields ({cls.__name__}); "
                        f"add one to mqlog.core.construct")
    return make(cls, *setters)
