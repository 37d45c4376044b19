"""The record base and decoding: :class:`LogRecord`, the public base of the core's and the
platforms' record classes, and what recovery asks a record through it; the core's table of
record classes by type code and the tables a platform's classes join (:func:`record_table`);
:func:`decode_record`, which checks a record's frame and hands its body to its class; and
:class:`OpaqueRecord`, a platform record decoded without its platform's classes.
"""

from __future__ import annotations

import enum
import functools
import struct
import zlib
from types import MappingProxyType
from typing import ClassVar, Mapping

import attrs

from mqlog.core.errors import LogFormatError
from mqlog.core.format.records.header import (_CRC, HEADER, HEADER_SIZE, MAX_RECORD_SIZE, NO_ADDRESS, PLATFORM_TYPES,
                                              RecordType, ResourceManager, _crc32, _frame, _pack_crc, _pack_header)

#: the core's record classes by type code (platform classes are never added here: a
#: platform lists its own in ``Platform.record_types``, and whoever decodes its log passes
#: them, see :func:`record_table`)
_CORE_TYPES: dict[int, type] = {}


def register(cls):
    """Class decorator for the core's own record classes: ``decode_record`` builds ``cls``
    for ``cls.TYPE`` in every log."""
    code = int(cls.TYPE)
    if code in _CORE_TYPES and _CORE_TYPES[code] is not cls:
        raise ValueError(f"record type 0x{code:02X} is already registered to {_CORE_TYPES[code].__name__}")
    _CORE_TYPES[code] = cls
    return cls


@attrs.frozen
class BackoutOp:
    """One operation a record stands in for when its unit of work is backed out (an entry
    of a round of shunting): what the compensation needs, never the message data."""

    kind: str  # "put" or "get"
    queue: str
    msg_id: bytes
    address: int  # the original record
    length: int = 0


@attrs.frozen
class BackoutRound:
    """A record of a round of backout-only copies of a unit of work's operations (log
    shunting): record ``index`` of ``count``, chained on the unit's backward chain. A
    complete round (its last record found) replaces every older record of the unit."""

    index: int
    count: int
    ops: tuple  # BackoutOp, oldest first


@attrs.frozen
class ImagePiece:
    """A record that carries one piece of a queue's media image: ``segment`` of
    ``segments``, the image taken with replay point ``image_id``."""

    queue: str
    image_id: int
    segment: int
    segments: int
    data: bytes


class LogRecord:
    """The public base of every log record, the core's and the platforms'.

    A record class is a frozen, slotted ``attrs`` class that defines:

    * ``TYPE`` (its code: a platform's in the sub-range of :data:`PLATFORM_TYPES` the
      platform claims) and ``RM`` (its resource manager), as class variables;
    * the header fields ``uow``, ``prev`` and ``stamp`` (keyword-only, defaults 0,
      NO_ADDRESS, 0);
    * ``_body(self) -> bytes`` and ``classmethod _from_body(cls, flags, uow, prev, stamp,
      body)``: its body, encoded and decoded; a decoder raises only what :data:`MALFORMED`
      names for bad bytes; ``_flags(self)`` if it sets header flags (or, instead of
      ``_body`` and ``_flags``, ``to_bytes`` itself, as the core's Begin, Put, Get and
      Commit do: they are every unit of work's records, encoded in one step).

    What a record means to recovery is asked through this base, whose answers are neutral
    (a record that is none of these things): :attr:`data` (bytes it carries, counted when
    the queue manager estimates log space), :attr:`relogged` (a copy re-logged by roll
    forward), :meth:`backout_round` (a round of backout-only copies) and
    :meth:`image_piece` (a piece of a media image). A platform record overrides those that
    apply. A platform lists its record classes in ``Platform.record_types``.
    """

    #: no instance dict: a record is its slotted fields only (smaller, and quicker to make)
    __slots__ = ()

    TYPE: ClassVar[int]  # an IntEnum member: the core's RecordType or a platform's own
    RM: ClassVar[int]  # the core's ResourceManager or a platform's own

    #: the message or image bytes the record carries (a record class with a ``data`` field
    #: overrides this)
    data: ClassVar[bytes] = b""
    #: a copy of a prepared unit of work's record re-logged at the head (roll forward)
    relogged: ClassVar[bool] = False

    def backout_round(self) -> BackoutRound | None:
        """The round of backout-only copies this record is part of, or None."""
        return None

    def image_piece(self) -> ImagePiece | None:
        """The piece of a media image this record carries, or None."""
        return None

    def _flags(self) -> int:
        return 0

    def to_bytes(self) -> bytes:
        # _frame, inline: every record the queue manager logs passes here
        body = self._body()
        length = HEADER_SIZE + len(body)
        if length > MAX_RECORD_SIZE:
            return _frame(self.TYPE, self.RM, self._flags(), self.uow, self.prev, self.stamp, body)  # (it refuses)
        prefix = _pack_header(self.TYPE, self.RM, self._flags(), length, self.uow, self.prev, self.stamp)
        return b"".join((prefix, _pack_crc(_crc32(body, _crc32(prefix))), body))

    @classmethod
    def from_bytes(cls, data: bytes, *, source: str | None = None, offset: int | None = None):
        """Decode exactly one record: ``data`` must hold it and nothing more."""
        length = peek_length(data, 0, source=source, where=offset)
        if len(data) > length:
            raise LogFormatError(f"{len(data) - length} bytes follow the {length}-byte record",
                                 source=source, offset=offset)
        types = _CORE_TYPES if _CORE_TYPES.get(cls.TYPE) is cls else record_table((cls,))
        record = decode_record(data, source=source, where=offset, types=types)
        if not isinstance(record, cls):
            raise LogFormatError(f"expected a {cls.__name__} record, found {type(record).__name__}",
                                 source=source, offset=offset)
        return record


# --- platform records --------------------------------------------------------------------

@attrs.frozen
class OpaqueRecord(LogRecord):
    """A platform record decoded without its platform's record classes (``record_types``
    not given): the core can still walk past it and keep it byte-exact."""

    type: int
    flags: int = 0
    body: bytes = b""
    uow: int = attrs.field(default=0, kw_only=True)
    prev: int = attrs.field(default=NO_ADDRESS, kw_only=True)
    stamp: int = attrs.field(default=0, kw_only=True)
    #: the resource manager byte as found on disk, kept so that re-encoding is byte-identical
    #: (0 for one the core makes: it knows no platform's resource managers)
    rm: int = attrs.field(default=0, kw_only=True)

    def __attrs_post_init__(self):
        if self.type not in PLATFORM_TYPES:
            raise ValueError(f"type 0x{self.type:02X} is not a platform record type "
                             f"(0x40-0x7F); core records have their own classes")

    def to_bytes(self) -> bytes:
        return _frame(self.type, self.rm, self.flags, self.uow, self.prev, self.stamp, self.body)

    @classmethod
    def from_bytes(cls, data: bytes, *, source: str | None = None, offset: int | None = None):
        rtype, rm, flags, length, uow, prev, stamp, body = _split(data, 0, source, offset)
        if rtype not in PLATFORM_TYPES:
            raise LogFormatError(f"record type 0x{rtype:02X} is not a platform record", source=source,
                                 offset=offset)
        return cls(rtype, flags, bytes(body), uow=uow, prev=prev, stamp=stamp, rm=rm)


# --- decoding ----------------------------------------------------------------------------

#: What a body decoder (``_from_body``, the core's and the platforms') raises for bytes that
#: are not a well-formed body, and all it raises for them: ``struct.error`` for a body too
#: short for its fixed part, ``ValueError`` for a field out of range – a count or length
#: that does not fit the record, an enum code (``ClrAction(9)``), a name an attrs validator
#: refuses, text that does not decode (``UnicodeDecodeError`` is a ValueError). Only these
#: mean bad bytes; anything else (TypeError, AttributeError, NameError …) is a bug in the
#: decoder and must surface as itself, never as a torn end or corruption.
MALFORMED = (ValueError, struct.error)

_LENGTH = struct.Struct("<I")  # the header's total length field, at offset 4
_HEAD = HEADER.size  # the header bytes before the CRC


def peek_length(data, offset: int = 0, *, source: str | None = None, where: int | None = None) -> int:
    """The total length a record header at ``data[offset:]`` claims, checked against the bounds.

    Callers reassembling a record from pages call this on the first 36 bytes so that a corrupt
    length is refused before anything is allocated for it.
    """
    if len(data) - offset < HEADER_SIZE:
        raise LogFormatError(f"record header truncated ({len(data) - offset} of {HEADER_SIZE} bytes)",
                             source=source, offset=where)
    (length,) = _LENGTH.unpack_from(data, offset + 4)
    if not HEADER_SIZE <= length <= MAX_RECORD_SIZE:
        raise LogFormatError(f"record length {length} is outside {HEADER_SIZE}..{MAX_RECORD_SIZE}",
                             source=source, offset=where)
    return length


def _split(data, offset, source, where):
    # peek_length's checks, with the header unpacked once
    if len(data) - offset < HEADER_SIZE:
        raise LogFormatError(f"record header truncated ({len(data) - offset} of {HEADER_SIZE} bytes)",
                             source=source, offset=where)
    rtype, rm, flags, length, uow, prev, stamp = HEADER.unpack_from(data, offset)
    if not HEADER_SIZE <= length <= MAX_RECORD_SIZE:
        raise LogFormatError(f"record length {length} is outside {HEADER_SIZE}..{MAX_RECORD_SIZE}",
                             source=source, offset=where)
    end = offset + length
    if len(data) < end:
        raise LogFormatError(f"record truncated: header says {length} bytes, {len(data) - offset} present",
                             source=source, offset=where)
    view = memoryview(data)
    (crc,) = _CRC.unpack_from(data, offset + _HEAD)
    body = view[offset + HEADER_SIZE:end]
    if zlib.crc32(body, zlib.crc32(view[offset:offset + _HEAD])) != crc:
        raise LogFormatError(f"record checksum mismatch (type 0x{rtype:02X}, {length} bytes)",
                             source=source, offset=where)
    return rtype, rm, flags, length, uow, prev, stamp, body


def decode_record(data, offset: int = 0, *, source: str | None = None, where: int | None = None,
                  types: Mapping[int, type] | None = None):
    """Decode the record at ``data[offset:]``; raise :class:`LogFormatError` naming ``source``/``where``.

    ``where`` is the position to report (a file offset); it defaults to ``offset``.
    ``types``: the record classes by code (:func:`record_table`; default: the core's only,
    so a platform record decodes as :class:`OpaqueRecord`).
    """
    where = offset if where is None else where
    rtype, rm, flags, length, uow, prev, stamp, body = _split(data, offset, source, where)
    cls = (_CORE_TYPES if types is None else types).get(rtype)
    if cls is None:
        if rtype in PLATFORM_TYPES:
            return OpaqueRecord(rtype, flags, bytes(body), uow=uow, prev=prev, stamp=stamp, rm=rm)
        raise LogFormatError(f"unknown record type 0x{rtype:02X}", source=source, offset=where)
    if rm != cls.RM:
        raise LogFormatError(f"record type 0x{rtype:02X} with resource manager {rm}, expected {int(cls.RM)}",
                             source=source, offset=where)
    try:
        return cls._from_body(flags, uow, prev, stamp, body)
    except MALFORMED as exc:
        raise LogFormatError(f"malformed {cls.__name__} record: {exc}", source=source, offset=where) from None


def record_length(record) -> int:
    """Encoded size in bytes (header included)."""
    return len(record.to_bytes())


def record_types() -> dict[int, type]:
    """The core's record classes by type code (a copy)."""
    return dict(_CORE_TYPES)


@functools.lru_cache(maxsize=64)
def _table(platform_types: tuple) -> Mapping[int, type]:
    table = dict(_CORE_TYPES)
    for cls in platform_types:
        code = int(cls.TYPE)
        if code not in PLATFORM_TYPES:
            raise ValueError(f"{cls.__name__}: type 0x{code:02X} is not a platform record type (0x40-0x7F)")
        if table.get(code, cls) is not cls:
            raise ValueError(f"{cls.__name__}: record type 0x{code:02X} is already {table[code].__name__}")
        table[code] = cls
    return MappingProxyType(table)


def record_table(platform_types=()) -> Mapping[int, type]:
    """The record classes a log is decoded with, by type code: the core's and
    ``platform_types`` (a platform's ``record_types``). Refuses a platform class outside
    the platform range or two classes for one code (ValueError)."""
    return _table(tuple(platform_types))


@functools.lru_cache(maxsize=16)
def _code_names(platform_types: tuple) -> tuple[Mapping[int, str], Mapping[int, str]]:
    types = {int(c): c.name for c in RecordType}
    rms = {int(r): r.name for r in ResourceManager}
    for cls in platform_types:
        for enum_cls, names in ((type(cls.TYPE), types), (type(cls.RM), rms)):
            if issubclass(enum_cls, enum.Enum):
                names.update((int(m), m.name) for m in enum_cls)
    return MappingProxyType(types), MappingProxyType(rms)


def code_names(platform_types=()) -> tuple[Mapping[int, str], Mapping[int, str]]:
    """The names a log print shows for record type codes and for resource manager codes: the
    core's, and every member of the enums ``platform_types`` (platforms' record classes)
    take their ``TYPE`` and ``RM`` from, so an opaque record of a code a platform names is
    shown by its name. A code in neither is the caller's to show (as a hex code)."""
    return _code_names(tuple(platform_types))
