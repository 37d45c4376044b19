"""Run-length encoding of persistent message data (z/OS ``COMPLOG(RLE)``, codec 1).

IBM does not publish the byte format of MQ for z/OS's log compression, so this one is ours.
It is PackBits-style (one control byte, then literal bytes or the byte to repeat) with one
change: a **long-run form**. The padding that makes RLE pay off on z/OS – blank-padded
fixed-width fields (EBCDIC 0x40, ASCII 0x20) and zero-filled structures and reserved areas –
comes in runs of hundreds or thousands of bytes, and PackBits, whose runs stop at 128, can
never do better than 64:1 on them. A 4-byte long run covers up to 65 665 bytes.

The stored bytes are a sequence of items; each starts with a control byte ``c``:

======================  ==================================================================
``c``                   meaning
======================  ==================================================================
``0x00`` – ``0x7F``     literal: the next ``c + 1`` bytes (1 – 128) are copied as they are
``0x80`` – ``0xFE``     short run: the next byte is repeated ``c - 0x80 + 3`` times (3 – 129)
``0xFF``                long run: a 2-byte little-endian count ``L`` and the byte follow; the
                        byte is repeated ``L + 130`` times (130 – 65 665)
======================  ==================================================================

Every control byte has a meaning, so damage inside the stored bytes shows as a truncated
item (the last item needs more bytes than remain) or, when the caller knows it, as the wrong
expanded length; :func:`rle_decode` raises :class:`~mqlog.core.errors.LogFormatError` naming
the offset of the item's control byte. The log record's CRC catches the rest.

The encoder writes a run for every 3 or more equal bytes (a run of 2 would cost as much as
the literal bytes and split a literal) and literals for everything else, 128 bytes at a
time. A run always saves at least a byte, so the output is never longer than the input plus
one control byte per 128 input bytes: :func:`max_encoded_length` (``n + ceil(n / 128)``).
Runs are found with a regular expression and literals copied by slicing, so the work in
Python is per item, not per byte.

Example: ``b"AB" + b" " * 6 + b"\\x00" * 200`` encodes as ``01 41 42`` (literal "AB"),
``83 20`` (six blanks), ``FF 46 00 00`` (200 zeros: L = 70): 9 bytes for 208.
"""

from __future__ import annotations

import re

from mqlog.core.errors import LogFormatError

#: the longest literal item; 128 keeps the worst-case growth to one byte in 128
MAX_LITERAL = 128
#: the shortest run worth an item: a run of 2 costs 2 bytes either way and would split a literal
MIN_RUN = 3
#: the longest short run (control 0xFE)
MAX_SHORT_RUN = 0xFE - 0x80 + MIN_RUN  # 129
#: the shortest and longest long run (control 0xFF, 2-byte count)
MIN_LONG_RUN = MAX_SHORT_RUN + 1  # 130
MAX_LONG_RUN = 0xFFFF + MIN_LONG_RUN  # 65 665
LONG_RUN = 0xFF

# DOTALL: a run of newlines (0x0A) is a run like any other.
_RUNS = re.compile(rb"(.)\1{%d,}" % (MIN_RUN - 1), re.DOTALL)


def max_encoded_length(n: int) -> int:
    """The most bytes :func:`rle_encode` can produce for ``n`` input bytes (incompressible
    data: one control byte per 128)."""
    if n < 0:
        raise ValueError(f"length must not be negative, got {n}")
    return n + -(-n // MAX_LITERAL)


def _literal(out: list[bytes], data: bytes, start: int, end: int) -> None:
    for i in range(start, end, MAX_LITERAL):
        chunk = data[i:min(i + MAX_LITERAL, end)]
        out.append(bytes((len(chunk) - 1,)))
        out.append(chunk)


def _run(out: list[bytes], byte: int, count: int) -> None:
    while count:
        if count <= MAX_SHORT_RUN:
            out.append(bytes((count - MIN_RUN + 0x80, byte)))
            return
        take = min(count, MAX_LONG_RUN)
        if 0 < count - take < MIN_RUN:
            take -= MIN_RUN  # leave a remainder long enough to be a run itself
        extra = take - MIN_LONG_RUN
        out.append(bytes((LONG_RUN, extra & 0xFF, extra >> 8, byte)))
        count -= take


def rle_encode(data: bytes) -> bytes:
    """``data`` run-length encoded (see the module docstring for the format)."""
    data = bytes(data)
    out: list[bytes] = []
    pos = 0
    for match in _RUNS.finditer(data):
        start, end = match.span()
        if start > pos:
            _literal(out, data, pos, start)
        _run(out, data[start], end - start)
        pos = end
    if pos < len(data):
        _literal(out, data, pos, len(data))
    return b"".join(out)


def rle_decode(stored: bytes, *, expected_length: int | None = None, source: str | None = None) -> bytes:
    """The bytes ``stored`` expands to.

    Raises LogFormatError, with ``offset`` the position in ``stored`` of the control byte
    of the item at fault, if the last item is cut short or, with ``expected_length``, if the
    data expands to any other length (checked as it grows, so damaged input cannot expand
    far beyond it). ``source`` is passed on to the error (the data set or record it came from).
    """
    stored = bytes(stored)
    limit = len(stored)
    out = bytearray()
    pos = 0
    while pos < limit:
        control = stored[pos]
        if control < 0x80:
            count = control + 1
            end = pos + 1 + count
            if end > limit:
                raise LogFormatError(
                    f"RLE data truncated: literal item 0x{control:02X} needs {count} bytes, "
                    f"{limit - pos - 1} remain", source=source, offset=pos)
            out += stored[pos + 1:end]
        elif control != LONG_RUN:
            count = control - 0x80 + MIN_RUN
            end = pos + 2
            if end > limit:
                raise LogFormatError(f"RLE data truncated: run item 0x{control:02X} has no byte to repeat",
                                     source=source, offset=pos)
            out += stored[pos + 1:end] * count
        else:
            end = pos + 4
            if end > limit:
                raise LogFormatError(
                    f"RLE data truncated: long-run item needs 3 more bytes, {limit - pos - 1} remain",
                    source=source, offset=pos)
            count = (stored[pos + 1] | stored[pos + 2] << 8) + MIN_LONG_RUN
            out += stored[pos + 3:end] * count
        if expected_length is not None and len(out) > expected_length:
            raise LogFormatError(
                f"RLE data expands beyond the expected {expected_length} bytes "
                f"(to {len(out)} at this item)", source=source, offset=pos)
        pos = end
    if expected_length is not None and len(out) != expected_length:
        raise LogFormatError(f"RLE data expands to {len(out)} bytes, expected {expected_length}",
                             source=source, offset=limit)
    return bytes(out)
