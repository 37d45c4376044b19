"""Checking the fields of control data decoded from JSON (a log control file, a BSDS) after
its checksum has passed: a good checksum says the bytes are the ones written, not that they
are what this version writes (a file from elsewhere, edited by hand, or an encoder's bug).
Each check raises :class:`~mqlog.core.errors.LogFormatError` naming the file and the field,
never a ``KeyError``, ``IndexError`` or ``RecursionError`` from deep inside a decoder.
"""

from __future__ import annotations

import json

from mqlog.core.errors import LogFormatError

#: the largest value of a 64-bit address field (NO_ADDRESS is this: "none")
MAX_ADDRESS = 0xFFFF_FFFF_FFFF_FFFF


class Fields:
    """The decoded object of ``source`` (``what`` names it in errors), its fields checked one
    by one as they are taken."""

    def __init__(self, data, source: str, what: str, offset: int = 8):
        self.source, self.what, self.offset = source, what, offset
        if not isinstance(data, dict):
            self.fail("", f"is a JSON {type(data).__name__}, not an object")
        self.data = data

    def fail(self, field: str, why: str):
        raise LogFormatError(f"malformed {self.what}: {f'field {field!r} ' if field else ''}{why}",
                             source=self.source, offset=self.offset)

    def get(self, field: str, *, default=...):
        if field not in self.data:
            if default is ...:
                self.fail(field, "is missing")
            return default
        return self.data[field]

    def int(self, field: str, lo: int = 0, hi: int = MAX_ADDRESS, *, default=..., value=...):
        v = self.get(field, default=default) if value is ... else value
        if v is default and default is not ...:
            return v
        if type(v) is not int or not lo <= v <= hi:
            self.fail(field, f"is {_show(v)}, not a whole number from {lo} to {hi}")
        return v

    def bool(self, field: str, *, default=..., value=...):
        v = self.get(field, default=default) if value is ... else value
        if type(v) is not bool:
            self.fail(field, f"is {_show(v)}, not true or false")
        return v

    def list(self, field: str, *, value=..., length: int | None = None):
        v = self.get(field) if value is ... else value
        if not isinstance(v, list) or length is not None and len(v) != length:
            self.fail(field, f"is {_show(v)}, not a list{f' of {length}' if length is not None else ''}")
        return v

    def str(self, field: str, *, value=..., choices=None):
        v = self.get(field) if value is ... else value
        if not isinstance(v, str) or choices is not None and v not in choices:
            self.fail(field, f"is {_show(v)}, not {' or '.join(map(repr, choices)) if choices else 'a string'}")
        return v


def _show(value) -> str:
    try:
        text = json.dumps(value) if not isinstance(value, float) else repr(value)
    except (RecursionError, ValueError):
        text = type(value).__name__
    return text if len(text) <= 40 else text[:37] + "..."


def loads(raw: bytes, source: str, what: str, offset: int = 8):
    """``json.loads`` for control data: not JSON, or nested too deep for the decoder (a
    RecursionError), is a LogFormatError naming the file."""
    try:
        return json.loads(raw)
    except RecursionError:
        raise LogFormatError(f"malformed {what}: nested too deep to decode", source=source, offset=offset) from None
    except ValueError as exc:  # (UnicodeDecodeError too)
        raise LogFormatError(f"malformed {what} ({exc})", source=source, offset=offset) from None
