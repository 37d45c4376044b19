"""Typed log records: frozen value objects with ``to_bytes()`` / ``from_bytes()`` side by side.

Every record is a 36-byte header followed by a type-specific body (``docs/FORMAT.md`` §3
is the byte-level specification; keep the two in step)::

    offset size field
    0      1    record type            (RecordType)
    1      1    resource manager       (ResourceManager, fixed per type)
    2      2    flags                  (bits 0-3: codec of message data; bit 4: backout-only copy; bit 5: re-logged copy)
    4      4    total length           (header + body, bytes)
    8      8    UOW id                 (0 = not part of a unit of work)
    16     8    previous record of the same UOW (log address; NO_ADDRESS = none)
    24     8    stamp                  (platform-defined ordering stamp, e.g. z/OS LRSN; else 0)
    32     4    CRC-32 of bytes 0-31 followed by the body

All integers are little-endian and unsigned. Log addresses are whatever the platform's
addressing hands out (distributed LSN, z/OS RBA); a record only stores them.

Body sizes are padded with a zeroed *control area* so that log usage follows IBM's
published sizing guide (SPEC §4.7): a persistent put of L bytes logs 750 + L bytes, a get
260, a commit 750, a backout 1000 + 12 per operation backed out, a create/alter/delete
1500/1024/300, a checkpoint 750 + 200 per active UOW. The control area stands for the
queue manager's own bookkeeping (space-map entries, handles) that the model does not
interpret; it is zeros on write and ignored on read.
"""

from __future__ import annotations

import enum
import functools
import struct
import zlib
from types import MappingProxyType
from typing import ClassVar, Mapping

import attrs

from mqlog.core.format.construct import builder
from mqlog.core.errors import LogFormatError, RecordTooLargeError

# --- the header --------------------------------------------------------------------------

HEADER = struct.Struct("<BBHIQQQ")  # everything before the CRC
HEADER_SIZE = HEADER.size + 4  # 36
_CRC = struct.Struct("<I")

#: "No previous record": the first record of a UOW points here.
NO_ADDRESS = 0xFFFF_FFFF_FFFF_FFFF

#: The largest record the format allows. Decoders refuse larger lengths *before* reading,
#: so a corrupt length can never cause a huge allocation; encoders refuse to write one.
#: 16 MiB leaves room for a checkpoint of ~80 000 active UOWs or a backout of ~1.3 million
#: operations, far beyond MQ's MAXUMSGS default of 10 000, while bounding what a
#: corrupt length can make a reader allocate.
MAX_RECORD_SIZE = 16 << 20

#: IBM's sizing guide splits a large message into 15 700-byte segments, 300 bytes each extra.
PUT_SEGMENT_BYTES = 15_700

QUEUE_NAME_LENGTH = 48  # MQ_Q_NAME_LENGTH
MSG_ID_LENGTH = 24  # MQ_MSG_ID_LENGTH
APPL_NAME_LENGTH = 28  # MQ_PUT_APPL_NAME_LENGTH
XID_MAX_LENGTH = 140  # XA: formatID + gtrid(64) + bqual(64) + lengths
DESCRIPTOR_LENGTH = 364  # an MQMD version 2

FLAG_CODEC_MASK = 0x000F
FLAG_BACKOUT_ONLY = 0x0010
#: a copy of a prepared unit of work's record, re-logged at the head to free log space
#: (roll forward); a flagged Prepare closes a complete round of copies
FLAG_RELOGGED = 0x0020


class RecordType(enum.IntEnum):
    """Record type codes. 0x01-0x3F core; 0x40-0x5F distributed; 0x60-0x7F z/OS."""

    BEGIN = 0x01
    PUT = 0x02
    PUT_SEGMENT = 0x03
    GET = 0x04
    PREPARE = 0x05
    COMMIT = 0x06
    BACKOUT = 0x07
    CLR = 0x08
    CHECKPOINT_BEGIN = 0x09
    CHECKPOINT_END = 0x0A
    OBJECT_CHANGE = 0x0B
    # Platform records: bodies are defined by the platform's format module.
    MEDIA_IMAGE = 0x40
    SHUNT = 0x60
    PAGESET_CONTROL = 0x61
    CF_BACKUP = 0x62


PLATFORM_TYPE_RANGES = {"distributed": range(0x40, 0x60), "zos": range(0x60, 0x80)}


class ResourceManager(enum.IntEnum):
    """The subcomponent that wrote a record (z/OS prints it as RMID)."""

    RECOVERY = 1  # unit-of-work state: begin, prepare, commit, backout
    MESSAGE = 2  # message data: put, get, segments, their compensations
    OBJECT = 3  # object definitions
    CHECKPOINT = 4
    MEDIA = 5  # distributed media images
    PAGESET = 6  # z/OS page-set control
    CF = 7  # z/OS coupling-facility structure backups


class Codec(enum.IntEnum):
    """How message data in a put record is stored (header flag bits 0-3)."""

    NONE = 0
    RLE = 1
    ZSTD = 2


class UowState(enum.IntEnum):
    """A UOW's state as a checkpoint records it (z/OS: in flight / in doubt / in commit / in backout)."""

    IN_FLIGHT = 1
    IN_DOUBT = 2
    IN_COMMIT = 3
    IN_BACKOUT = 4


class ObjectAction(enum.IntEnum):
    CREATE = 1
    ALTER = 2
    DELETE = 3


class ObjectType(enum.IntEnum):
    QUEUE = 1
    CHANNEL = 2
    QMGR = 3


class ClrAction(enum.IntEnum):
    """What a compensation record undid."""

    REMOVE_PUT = 1  # the message a put added is removed again
    RESTORE_GET = 2  # the message a get freed is made available again
    REVERSE_OBJECT = 3  # an object change is reversed


# --- field helpers -----------------------------------------------------------------------

def _name_field(max_length: int):
    def check(instance, attribute, value):
        if not isinstance(value, str) or len(value) > max_length or not value.isascii():
            raise ValueError(f"{attribute.name} must be an ASCII string of at most "
                             f"{max_length} characters, got {value!r}")
    return check


def _bytes_field(max_length: int, exact: bool = False):
    def check(instance, attribute, value):
        if not isinstance(value, (bytes, bytearray)):
            raise TypeError(f"{attribute.name} must be bytes, got {type(value).__name__}")
        if (len(value) != max_length) if exact else (len(value) > max_length):
            size = f"exactly {max_length}" if exact else f"at most {max_length}"
            raise ValueError(f"{attribute.name} must be {size} bytes, got {len(value)}")
    return check


@functools.lru_cache(maxsize=4096)
def _pad_name(name: str, length: int) -> bytes:
    # Cached: a log names the same few queues and applications over and over.
    return name.encode("ascii").ljust(length, b" ")


def _codec(value) -> "Codec":
    """The ``codec`` field's converter: a Codec passes as it is (the usual case), cheaply."""
    return value if value.__class__ is Codec else Codec(value)


def _unpad_name(raw: bytes) -> str:
    return raw.rstrip(b" ").decode("ascii", "replace")


#: blank-padded name fields already decoded, to their names: only ASCII names (so a name
#: found here passes the validators), and at most _ASCII_NAMES_MAX of them (a log names the
#: same few queues and applications over and over; a crafted one cannot grow this). Looked
#: up with ``is None``: the empty name "" is a hit like any other.
_ASCII_NAMES: dict[bytes, str] = {}
_ASCII_NAMES_MAX = 4096


def _ascii_name(raw: bytes) -> str | None:
    """The ASCII name in a blank-padded field, or None if it is not ASCII (a decoder's slow
    path then builds the record with ``__init__``, whose validator reports it)."""
    name = _unpad_name(raw)
    if not name.isascii():
        return None
    if len(_ASCII_NAMES) < _ASCII_NAMES_MAX:
        _ASCII_NAMES[raw] = name
    return name


def _frame(rtype: int, rm: int, flags: int, uow: int, prev: int, stamp: int, body: bytes) -> bytes:
    length = HEADER_SIZE + len(body)
    if length > MAX_RECORD_SIZE:
        raise RecordTooLargeError(f"a record of type 0x{rtype:02X} would be {length} bytes; "
                                  f"the format's limit is {MAX_RECORD_SIZE}")
    prefix = HEADER.pack(rtype, rm, flags, length, uow, prev, stamp)
    return b"".join((prefix, _CRC.pack(zlib.crc32(body, zlib.crc32(prefix))), body))


_pack_header, _pack_crc, _crc32 = HEADER.pack, _CRC.pack, zlib.crc32

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
    """A record of a round of backout-only copies of a unit of work's operations (z/OS
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

    * ``TYPE`` (its code: a platform's in its range, 0x40-0x5F distributed, 0x60-0x7F
      z/OS) and ``RM`` (its resource manager), as class variables;
    * the header fields ``uow``, ``prev`` and ``stamp`` (keyword-only, defaults 0,
      NO_ADDRESS, 0);
    * ``_body(self) -> bytes`` and ``classmethod _from_body(cls, flags, uow, prev, stamp,
      body)``: its body, encoded and decoded; a decoder raises only what :data:`MALFORMED`
      names for bad bytes; ``_flags(self)`` if it sets header flags.

    What a record means to recovery is asked through this base, whose answers are neutral
    (a record that is none of these things): :attr:`data` (bytes it carries, counted when
    the queue manager estimates log space), :attr:`relogged` (a copy re-logged by roll
    forward), :meth:`backout_round` (a round of backout-only copies) and
    :meth:`image_piece` (a piece of a media image). A platform record overrides those that
    apply. A platform lists its record classes in ``Platform.record_types``.
    """

    #: no instance dict: a record is its slotted fields only (smaller, and quicker to make)
    __slots__ = ()

    TYPE: ClassVar[RecordType]
    RM: ClassVar[ResourceManager]

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


#: public names of the field helpers a platform's record classes use
pad_name = _pad_name
unpad_name = _unpad_name
name_field = _name_field


# --- unit-of-work records ----------------------------------------------------------------

@register
@attrs.frozen(weakref_slot=False)
class Begin(LogRecord):
    """A unit of work starts (its first logged operation follows)."""

    TYPE: ClassVar = RecordType.BEGIN
    RM: ClassVar = ResourceManager.RECOVERY
    _S: ClassVar = struct.Struct(f"<Q{APPL_NAME_LENGTH}s")

    time_us: int = 0
    application: str = attrs.field(default="", validator=_name_field(APPL_NAME_LENGTH))
    uow: int = attrs.field(default=0, kw_only=True)
    prev: int = attrs.field(default=NO_ADDRESS, kw_only=True)
    stamp: int = attrs.field(default=0, kw_only=True)

    def _body(self) -> bytes:
        return self._S.pack(self.time_us, _pad_name(self.application, APPL_NAME_LENGTH))

    @classmethod
    def _from_body(cls, flags, uow, prev, stamp, body):
        time_us, appl = cls._S.unpack(body)
        if (application := _ASCII_NAMES.get(appl)) is None:
            application = _ascii_name(appl)
        if application is not None and cls is Begin:
            # All the validator checks: 28 bytes make at most 28 characters.
            return _build_begin(time_us, application, uow, prev, stamp)
        return cls(time_us, _unpad_name(appl), uow=uow, prev=prev, stamp=stamp)


@register
@attrs.frozen(weakref_slot=False)
class Put(LogRecord):
    """A persistent message was put: its descriptor and (the first segment of) its data.

    ``data`` is the data as stored, possibly compressed (``codec``); ``message_length`` is
    the whole message's length before compression; ``segments`` counts this record plus its
    :class:`PutSegment` continuations. ``block`` is the message's first 512-byte block in
    the queue file.
    """

    TYPE: ClassVar = RecordType.PUT
    RM: ClassVar = ResourceManager.MESSAGE
    _S: ClassVar = struct.Struct(f"<{QUEUE_NAME_LENGTH}s{MSG_ID_LENGTH}sQIHBxI{DESCRIPTOR_LENGTH}s")
    _PAD: ClassVar = bytes(750 - HEADER_SIZE - struct.calcsize(
        f"<{QUEUE_NAME_LENGTH}s{MSG_ID_LENGTH}sQIHBxI{DESCRIPTOR_LENGTH}s"))

    queue: str = attrs.field(validator=_name_field(QUEUE_NAME_LENGTH))
    msg_id: bytes = attrs.field(validator=_bytes_field(MSG_ID_LENGTH, exact=True))
    data: bytes = attrs.field(validator=_bytes_field(MAX_RECORD_SIZE // 2))
    message_length: int = attrs.field(default=-1)
    block: int = 0
    segments: int = 1
    codec: Codec = attrs.field(default=Codec.NONE, converter=_codec)
    descriptor: bytes = attrs.field(default=bytes(DESCRIPTOR_LENGTH),
                                    validator=_bytes_field(DESCRIPTOR_LENGTH, exact=True))
    uow: int = attrs.field(default=0, kw_only=True)
    prev: int = attrs.field(default=NO_ADDRESS, kw_only=True)
    stamp: int = attrs.field(default=0, kw_only=True)
    relogged: bool = attrs.field(default=False, kw_only=True)

    def __attrs_post_init__(self):
        if self.message_length < 0:
            object.__setattr__(self, "message_length", len(self.data))

    def _flags(self) -> int:
        return int(self.codec) | (FLAG_RELOGGED if self.relogged else 0)

    def _body(self) -> bytes:
        fixed = self._S.pack(_pad_name(self.queue, QUEUE_NAME_LENGTH), self.msg_id, self.block,
                             self.message_length, self.segments, 0, len(self.data), self.descriptor)
        return b"".join((fixed, self._PAD, self.data))

    @classmethod
    def _from_body(cls, flags, uow, prev, stamp, body):
        fixed = cls._S.size + len(cls._PAD)
        if len(body) < fixed:
            raise ValueError("put body shorter than its fixed part")
        q, mid, block, mlen, segs, _, stored, desc = cls._S.unpack_from(body)
        if stored != len(body) - fixed:
            raise ValueError(f"put data length {stored} does not match the record length")
        if (queue := _ASCII_NAMES.get(q)) is None:
            queue = _ascii_name(q)
        codec = _CODEC_OF.get(flags & FLAG_CODEC_MASK)
        if cls is Put and codec is not None and queue is not None and stored <= MAX_RECORD_SIZE // 2:
            # What the validators and converter would check; msg_id and descriptor have the
            # exact sizes the struct gives them, and an unsigned message length is never < 0.
            return _build_put(queue, mid, bytes(body[fixed:]), mlen, block, segs, codec, desc,
                              uow, prev, stamp, bool(flags & FLAG_RELOGGED))
        return cls(_unpad_name(q), mid, bytes(body[fixed:]), mlen, block, segs,
                   flags & FLAG_CODEC_MASK, desc, uow=uow, prev=prev, stamp=stamp,
                   relogged=bool(flags & FLAG_RELOGGED))


@register
@attrs.frozen(weakref_slot=False)
class PutSegment(LogRecord):
    """A continuation segment of a large message's data (300 bytes + the segment)."""

    TYPE: ClassVar = RecordType.PUT_SEGMENT
    RM: ClassVar = ResourceManager.MESSAGE
    _S: ClassVar = struct.Struct(f"<{QUEUE_NAME_LENGTH}s{MSG_ID_LENGTH}sHxxII")
    _PAD: ClassVar = bytes(300 - HEADER_SIZE - struct.calcsize(
        f"<{QUEUE_NAME_LENGTH}s{MSG_ID_LENGTH}sHxxII"))

    queue: str = attrs.field(validator=_name_field(QUEUE_NAME_LENGTH))
    msg_id: bytes = attrs.field(validator=_bytes_field(MSG_ID_LENGTH, exact=True))
    index: int = 1
    offset: int = 0
    data: bytes = attrs.field(default=b"", validator=_bytes_field(MAX_RECORD_SIZE // 2))
    codec: Codec = attrs.field(default=Codec.NONE, converter=_codec)
    uow: int = attrs.field(default=0, kw_only=True)
    prev: int = attrs.field(default=NO_ADDRESS, kw_only=True)
    stamp: int = attrs.field(default=0, kw_only=True)

    def _flags(self) -> int:
        return int(self.codec)

    def _body(self) -> bytes:
        return b"".join((self._S.pack(_pad_name(self.queue, QUEUE_NAME_LENGTH), self.msg_id,
                                      self.index, self.offset, len(self.data)), self._PAD, self.data))

    @classmethod
    def _from_body(cls, flags, uow, prev, stamp, body):
        fixed = cls._S.size + len(cls._PAD)
        if len(body) < fixed:
            raise ValueError("segment body shorter than its fixed part")
        q, mid, index, offset, stored = cls._S.unpack_from(body)
        if stored != len(body) - fixed:
            raise ValueError(f"segment data length {stored} does not match the record length")
        if (queue := _ASCII_NAMES.get(q)) is None:
            queue = _ascii_name(q)
        codec = _CODEC_OF.get(flags & FLAG_CODEC_MASK)
        if cls is PutSegment and codec is not None and queue is not None and stored <= MAX_RECORD_SIZE // 2:
            return _build_put_segment(queue, mid, index, offset, bytes(body[fixed:]), codec, uow, prev, stamp)
        return cls(_unpad_name(q), mid, index, offset, bytes(body[fixed:]), flags & FLAG_CODEC_MASK,
                   uow=uow, prev=prev, stamp=stamp)


@register
@attrs.frozen(weakref_slot=False)
class Get(LogRecord):
    """A persistent message was got: names the queue-file space it freed, not the data (260 bytes)."""

    TYPE: ClassVar = RecordType.GET
    RM: ClassVar = ResourceManager.MESSAGE
    _S: ClassVar = struct.Struct(f"<{QUEUE_NAME_LENGTH}s{MSG_ID_LENGTH}sQI")
    _PAD: ClassVar = bytes(260 - HEADER_SIZE - struct.calcsize(f"<{QUEUE_NAME_LENGTH}s{MSG_ID_LENGTH}sQI"))

    queue: str = attrs.field(validator=_name_field(QUEUE_NAME_LENGTH))
    msg_id: bytes = attrs.field(validator=_bytes_field(MSG_ID_LENGTH, exact=True))
    block: int = 0
    message_length: int = 0
    uow: int = attrs.field(default=0, kw_only=True)
    prev: int = attrs.field(default=NO_ADDRESS, kw_only=True)
    stamp: int = attrs.field(default=0, kw_only=True)
    relogged: bool = attrs.field(default=False, kw_only=True)

    def _flags(self) -> int:
        return FLAG_RELOGGED if self.relogged else 0

    def _body(self) -> bytes:
        return self._S.pack(_pad_name(self.queue, QUEUE_NAME_LENGTH), self.msg_id, self.block,
                            self.message_length) + self._PAD

    @classmethod
    def _from_body(cls, flags, uow, prev, stamp, body):
        s = cls._S
        # (unpack a short body as a whole: the same struct.error as unpacking its prefix)
        q, mid, block, mlen = s.unpack_from(body) if len(body) >= s.size else s.unpack(body)
        if (queue := _ASCII_NAMES.get(q)) is None:
            queue = _ascii_name(q)
        if cls is Get and queue is not None:
            return _build_get(queue, mid, block, mlen, uow, prev, stamp, bool(flags & FLAG_RELOGGED))
        return cls(_unpad_name(q), mid, block, mlen, uow=uow, prev=prev, stamp=stamp,
                   relogged=bool(flags & FLAG_RELOGGED))


@register
@attrs.frozen(weakref_slot=False)
class Prepare(LogRecord):
    """Phase one of two-phase commit: the UOW is prepared and now in doubt (750 bytes)."""

    TYPE: ClassVar = RecordType.PREPARE
    RM: ClassVar = ResourceManager.RECOVERY
    _S: ClassVar = struct.Struct(f"<QB{XID_MAX_LENGTH}s")
    _PAD: ClassVar = bytes(750 - HEADER_SIZE - struct.calcsize(f"<QB{XID_MAX_LENGTH}s"))

    time_us: int = 0
    xid: bytes = attrs.field(default=b"", validator=_bytes_field(XID_MAX_LENGTH))
    uow: int = attrs.field(default=0, kw_only=True)
    prev: int = attrs.field(default=NO_ADDRESS, kw_only=True)
    stamp: int = attrs.field(default=0, kw_only=True)
    relogged: bool = attrs.field(default=False, kw_only=True)

    def _flags(self) -> int:
        return FLAG_RELOGGED if self.relogged else 0

    def _body(self) -> bytes:
        return self._S.pack(self.time_us, len(self.xid), self.xid) + self._PAD

    @classmethod
    def _from_body(cls, flags, uow, prev, stamp, body):
        s = cls._S
        time_us, n, xid = s.unpack_from(body) if len(body) >= s.size else s.unpack(body)
        if n > XID_MAX_LENGTH:
            raise ValueError(f"XID length {n} exceeds {XID_MAX_LENGTH}")
        if cls is Prepare:  # bytes of at most XID_MAX_LENGTH: all the validator checks
            return _build_prepare(time_us, xid[:n], uow, prev, stamp, bool(flags & FLAG_RELOGGED))
        return cls(time_us, xid[:n], uow=uow, prev=prev, stamp=stamp, relogged=bool(flags & FLAG_RELOGGED))


@register
@attrs.frozen(weakref_slot=False)
class Commit(LogRecord):
    """The UOW committed (750 bytes). Forced before the application is told."""

    TYPE: ClassVar = RecordType.COMMIT
    RM: ClassVar = ResourceManager.RECOVERY
    _S: ClassVar = struct.Struct("<QI")
    _PAD: ClassVar = bytes(750 - HEADER_SIZE - 12)

    time_us: int = 0
    operations: int = 0
    uow: int = attrs.field(default=0, kw_only=True)
    prev: int = attrs.field(default=NO_ADDRESS, kw_only=True)
    stamp: int = attrs.field(default=0, kw_only=True)

    def _body(self) -> bytes:
        return self._S.pack(self.time_us, self.operations) + self._PAD

    @classmethod
    def _from_body(cls, flags, uow, prev, stamp, body):
        s = cls._S
        time_us, ops = s.unpack_from(body) if len(body) >= s.size else s.unpack(body)
        if cls is Commit:  # no validators, no converters
            return _build_commit(time_us, ops, uow, prev, stamp)
        return cls(time_us, ops, uow=uow, prev=prev, stamp=stamp)


@attrs.frozen
class UndoneOp:
    """One operation a backout undid: the address of its record and its sequence in the UOW."""

    address: int
    sequence: int


@register
@attrs.frozen(weakref_slot=False)
class Backout(LogRecord):
    """The UOW was backed out during normal running (1000 + 12 bytes per undone operation).

    Normal-running backout undoes from memory and never reads the log; this record lists
    what it undid so that restart does not undo it again.
    """

    TYPE: ClassVar = RecordType.BACKOUT
    RM: ClassVar = ResourceManager.RECOVERY
    _S: ClassVar = struct.Struct("<QI")
    _OP: ClassVar = struct.Struct("<QI")
    _PAD: ClassVar = bytes(1000 - HEADER_SIZE - 12)

    time_us: int = 0
    undone: tuple[UndoneOp, ...] = attrs.field(default=(), converter=tuple)
    uow: int = attrs.field(default=0, kw_only=True)
    prev: int = attrs.field(default=NO_ADDRESS, kw_only=True)
    stamp: int = attrs.field(default=0, kw_only=True)

    def _body(self) -> bytes:
        op = self._OP.pack
        return b"".join((self._S.pack(self.time_us, len(self.undone)), self._PAD,
                         *(op(u.address, u.sequence) for u in self.undone)))

    @classmethod
    def _from_body(cls, flags, uow, prev, stamp, body):
        time_us, n = cls._S.unpack(body[:cls._S.size])
        fixed = cls._S.size + len(cls._PAD)
        if len(body) != fixed + n * cls._OP.size:
            raise ValueError(f"backout lists {n} operations but its length does not fit them")
        ops = tuple(UndoneOp(a, s) for a, s in cls._OP.iter_unpack(body[fixed:]))
        if cls is Backout:  # no validators; the converter makes a tuple, which ops is
            return _build_backout(time_us, ops, uow, prev, stamp)
        return cls(time_us, ops, uow=uow, prev=prev, stamp=stamp)


@register
@attrs.frozen(weakref_slot=False)
class Clr(LogRecord):
    """A compensation log record: redo-only, written when restart undoes an operation.

    ``undoes`` is the address of the record compensated; ``undo_next`` the next record of
    the UOW still to undo (``NO_ADDRESS`` when this was the last), so that a restart
    interrupted and restarted again resumes where it left off instead of repeating work.
    """

    TYPE: ClassVar = RecordType.CLR
    RM: ClassVar = ResourceManager.MESSAGE
    _S: ClassVar = struct.Struct(f"<QQBxxx{QUEUE_NAME_LENGTH}s{MSG_ID_LENGTH}sQI")

    undoes: int
    undo_next: int
    action: ClrAction = attrs.field(converter=ClrAction)
    queue: str = attrs.field(default="", validator=_name_field(QUEUE_NAME_LENGTH))
    msg_id: bytes = attrs.field(default=bytes(MSG_ID_LENGTH), validator=_bytes_field(MSG_ID_LENGTH, exact=True))
    block: int = 0
    message_length: int = 0
    uow: int = attrs.field(default=0, kw_only=True)
    prev: int = attrs.field(default=NO_ADDRESS, kw_only=True)
    stamp: int = attrs.field(default=0, kw_only=True)

    def _body(self) -> bytes:
        return self._S.pack(self.undoes, self.undo_next, self.action, _pad_name(self.queue, QUEUE_NAME_LENGTH),
                            self.msg_id, self.block, self.message_length)

    @classmethod
    def _from_body(cls, flags, uow, prev, stamp, body):
        undoes, nxt, action, q, mid, block, mlen = cls._S.unpack(body)
        queue = q.rstrip(b" ").decode("ascii", "replace")
        clr_action = _CLR_ACTION_OF.get(action)
        if cls is Clr and clr_action is not None and queue.isascii():
            return _build_clr(undoes, nxt, clr_action, queue, mid, block, mlen, uow, prev, stamp)
        return cls(undoes, nxt, action, queue, mid, block, mlen, uow=uow, prev=prev, stamp=stamp)


# --- checkpoints -------------------------------------------------------------------------

@register
@attrs.frozen(weakref_slot=False)
class CheckpointBegin(LogRecord):
    """A checkpoint starts; restart begins its replay at the last complete checkpoint."""

    TYPE: ClassVar = RecordType.CHECKPOINT_BEGIN
    RM: ClassVar = ResourceManager.CHECKPOINT
    _S: ClassVar = struct.Struct("<QQ")

    number: int = 0
    time_us: int = 0
    uow: int = attrs.field(default=0, kw_only=True)
    prev: int = attrs.field(default=NO_ADDRESS, kw_only=True)
    stamp: int = attrs.field(default=0, kw_only=True)

    def _body(self) -> bytes:
        return self._S.pack(self.number, self.time_us)

    @classmethod
    def _from_body(cls, flags, uow, prev, stamp, body):
        number, time_us = cls._S.unpack(body)
        if cls is CheckpointBegin:  # no validators, no converters
            return _build_checkpoint_begin(number, time_us, uow, prev, stamp)
        return cls(number, time_us, uow=uow, prev=prev, stamp=stamp)


@attrs.frozen
class UowEntry:
    """One row of a checkpoint's active-UOW table (200 bytes on disk)."""

    _S: ClassVar = struct.Struct(f"<QBQQQIB{XID_MAX_LENGTH}s")
    SIZE: ClassVar = 200

    uow: int
    state: UowState = attrs.field(converter=UowState)
    first: int = NO_ADDRESS
    last: int = NO_ADDRESS
    begin_time_us: int = 0
    operations: int = 0
    xid: bytes = attrs.field(default=b"", validator=_bytes_field(XID_MAX_LENGTH))

    def to_bytes(self) -> bytes:
        return self._S.pack(self.uow, self.state, self.first, self.last, self.begin_time_us,
                            self.operations, len(self.xid), self.xid).ljust(self.SIZE, b"\0")

    @classmethod
    def from_bytes(cls, raw: bytes) -> "UowEntry":
        uow, state, first, last, t, ops, n, xid = cls._S.unpack_from(raw)
        if n > XID_MAX_LENGTH:
            raise ValueError(f"XID length {n} exceeds {XID_MAX_LENGTH}")
        return cls(uow, state, first, last, t, ops, xid[:n])


@attrs.frozen
class QueueEntry:
    """One row of a checkpoint's queue table (64 bytes): what restart must load, and the
    queue's *media recovery record*: where re-creating it from the log would start (its
    latest media image, or its creation record if it has none; NO_ADDRESS: unknown)."""

    _S: ClassVar = struct.Struct(f"<{QUEUE_NAME_LENGTH}sQQ")
    SIZE: ClassVar = 64

    name: str = attrs.field(validator=_name_field(QUEUE_NAME_LENGTH))
    depth: int = 0
    media: int = NO_ADDRESS

    def to_bytes(self) -> bytes:
        return self._S.pack(_pad_name(self.name, QUEUE_NAME_LENGTH), self.depth, self.media)

    @classmethod
    def from_bytes(cls, raw: bytes) -> "QueueEntry":
        name, depth, media = cls._S.unpack_from(raw)
        return cls(_unpad_name(name), depth, media)


@register
@attrs.frozen(weakref_slot=False)
class CheckpointEnd(LogRecord):
    """A checkpoint completes: the active-UOW table and the queue table.

    With its begin record it sizes to 750 + 200 per active UOW (+ 64 per queue, which
    IBM's guide folds into the 750 for a small queue manager).
    """

    TYPE: ClassVar = RecordType.CHECKPOINT_END
    RM: ClassVar = ResourceManager.CHECKPOINT
    _S: ClassVar = struct.Struct("<QQQII")
    _PAD: ClassVar = bytes(750 - 2 * HEADER_SIZE - 16 - struct.calcsize("<QQQII"))

    begin: int = 0
    number: int = 0
    time_us: int = 0
    uows: tuple[UowEntry, ...] = attrs.field(default=(), converter=tuple)
    queues: tuple[QueueEntry, ...] = attrs.field(default=(), converter=tuple)
    uow: int = attrs.field(default=0, kw_only=True)
    prev: int = attrs.field(default=NO_ADDRESS, kw_only=True)
    stamp: int = attrs.field(default=0, kw_only=True)

    def _body(self) -> bytes:
        return b"".join((self._S.pack(self.begin, self.number, self.time_us, len(self.uows), len(self.queues)),
                         self._PAD, *(u.to_bytes() for u in self.uows), *(q.to_bytes() for q in self.queues)))

    @classmethod
    def _from_body(cls, flags, uow, prev, stamp, body):
        begin, number, t, nu, nq = cls._S.unpack(body[:cls._S.size])
        at = cls._S.size + len(cls._PAD)
        if len(body) != at + nu * UowEntry.SIZE + nq * QueueEntry.SIZE:
            raise ValueError(f"checkpoint lists {nu} UOWs and {nq} queues but its length does not fit them")
        uows = []
        for _ in range(nu):
            uows.append(UowEntry.from_bytes(body[at:at + UowEntry.SIZE]))
            at += UowEntry.SIZE
        queues = []
        for _ in range(nq):
            queues.append(QueueEntry.from_bytes(body[at:at + QueueEntry.SIZE]))
            at += QueueEntry.SIZE
        return cls(begin, number, t, tuple(uows), tuple(queues), uow=uow, prev=prev, stamp=stamp)


# --- objects -----------------------------------------------------------------------------

@register
@attrs.frozen(weakref_slot=False)
class ObjectChange(LogRecord):
    """An object was created, altered or deleted (1500 / 1024 / 300 bytes).

    ``attributes`` is the object's definition as MQSC-style text (``MAXDEPTH(5000) …``).
    """

    TYPE: ClassVar = RecordType.OBJECT_CHANGE
    RM: ClassVar = ResourceManager.OBJECT
    _S: ClassVar = struct.Struct(f"<BB{QUEUE_NAME_LENGTH}sI")
    _SIZES: ClassVar = {ObjectAction.CREATE: 1500, ObjectAction.ALTER: 1024, ObjectAction.DELETE: 300}

    action: ObjectAction = attrs.field(converter=ObjectAction)
    object_type: ObjectType = attrs.field(converter=ObjectType)
    name: str = attrs.field(validator=_name_field(QUEUE_NAME_LENGTH))
    attributes: str = attrs.field(default="")
    uow: int = attrs.field(default=0, kw_only=True)
    prev: int = attrs.field(default=NO_ADDRESS, kw_only=True)
    stamp: int = attrs.field(default=0, kw_only=True)

    def _body(self) -> bytes:
        text = self.attributes.encode("utf-8")
        body = self._S.pack(self.action, self.object_type, _pad_name(self.name, QUEUE_NAME_LENGTH), len(text)) + text
        return body.ljust(self._SIZES[self.action] - HEADER_SIZE, b"\0")

    @classmethod
    def _from_body(cls, flags, uow, prev, stamp, body):
        action, otype, name, n = cls._S.unpack(body[:cls._S.size])
        if cls._S.size + n > len(body):
            raise ValueError(f"object attributes length {n} runs past the record")
        text = bytes(body[cls._S.size:cls._S.size + n]).decode("utf-8", "replace")
        return cls(action, otype, _unpad_name(name), text, uow=uow, prev=prev, stamp=stamp)


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
    #: the resource manager byte as found on disk (default: the platform type's usual one),
    #: kept so that re-encoding is byte-identical
    rm: int = attrs.field(kw_only=True, default=attrs.Factory(
        lambda self: _PLATFORM_RM.get(self.type, 0), takes_self=True))

    def __attrs_post_init__(self):
        if not any(self.type in r for r in PLATFORM_TYPE_RANGES.values()):
            raise ValueError(f"type 0x{self.type:02X} is not a platform record type "
                             f"(0x40-0x7F); core records have their own classes")

    def to_bytes(self) -> bytes:
        return _frame(self.type, self.rm, self.flags, self.uow, self.prev, self.stamp, self.body)

    @classmethod
    def from_bytes(cls, data: bytes, *, source: str | None = None, offset: int | None = None):
        rtype, rm, flags, length, uow, prev, stamp, body = _split(data, 0, source, offset)
        if not any(rtype in r for r in PLATFORM_TYPE_RANGES.values()):
            raise LogFormatError(f"record type 0x{rtype:02X} is not a platform record", source=source,
                                 offset=offset)
        return cls(rtype, flags, bytes(body), uow=uow, prev=prev, stamp=stamp, rm=rm)


_PLATFORM_RM = {RecordType.MEDIA_IMAGE: ResourceManager.MEDIA, RecordType.SHUNT: ResourceManager.RECOVERY,
                RecordType.PAGESET_CONTROL: ResourceManager.PAGESET, RecordType.CF_BACKUP: ResourceManager.CF}


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
_CODEC_OF = {int(c): c for c in Codec}
_CLR_ACTION_OF = {int(a): a for a in ClrAction}


_build_begin = builder(Begin)
_build_put = builder(Put)
_build_put_segment = builder(PutSegment)
_build_get = builder(Get)
_build_prepare = builder(Prepare)
_build_commit = builder(Commit)
_build_backout = builder(Backout)
_build_clr = builder(Clr)
_build_checkpoint_begin = builder(CheckpointBegin)


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
        if any(rtype in r for r in PLATFORM_TYPE_RANGES.values()):
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


def split_message(data: bytes) -> list[bytes]:
    """Cut message data into the put record's first segment and its continuations (15 700 bytes each)."""
    if len(data) <= PUT_SEGMENT_BYTES:
        return [data]
    return [data[i:i + PUT_SEGMENT_BYTES] for i in range(0, len(data), PUT_SEGMENT_BYTES)]


def record_types() -> dict[int, type]:
    """The core's record classes by type code (a copy)."""
    return dict(_CORE_TYPES)


@functools.lru_cache(maxsize=64)
def _table(platform_types: tuple) -> Mapping[int, type]:
    table = dict(_CORE_TYPES)
    for cls in platform_types:
        code = int(cls.TYPE)
        if not any(code in r for r in PLATFORM_TYPE_RANGES.values()):
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
