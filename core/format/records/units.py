"""The unit-of-work and message records: a unit of work's begin, prepare, commit and backout,
the persistent puts (with their continuation segments) and gets it logs, and the compensation
records restart writes as it undoes them.

Each body is padded with a zeroed *control area* so that log usage follows IBM's published
sizing of the log ("Calculating the size of the log" in the IBM MQ documentation): a
persistent put of L bytes logs 750 + L bytes, a get 260, a backout 1000 + 12 per
operation backed out (checkpoints and object changes: :mod:`.checkpoints`); a commit, 120
bytes, is derived from IBM's V9 log rates instead (see :class:`Commit`). The control area
stands for the queue manager's own bookkeeping (space-map entries, handles) that the model
does not interpret; it is zeros on write and ignored on read.
"""

from __future__ import annotations

import struct
from functools import partial
from typing import ClassVar

import attrs

from mqlog.core.format.construct import builder, twin
from mqlog.core.format.records.base import LogRecord, register
from mqlog.core.format.records.header import (_ASCII_NAMES, APPL_NAME_LENGTH, DESCRIPTOR_LENGTH, FLAG_CODEC_MASK,
                                              FLAG_RELOGGED, HEADER_SIZE, MAX_RECORD_SIZE, MSG_ID_LENGTH, NO_ADDRESS,
                                              PUT_SEGMENT_BYTES, QUEUE_NAME_LENGTH, XID_MAX_LENGTH, ClrAction, Codec,
                                              RecordType, ResourceManager, _ascii_name, _bytes_field, _codec, _crc32,
                                              _name_field, _pack_crc, _pack_header, _pad_name, _unpad_name)

#: header flag and action codes to their enum members, for the decoders' fast paths
_CODEC_OF = {int(c): c for c in Codec}
_CLR_ACTION_OF = {int(a): a for a in ClrAction}

# The records every unit of work logs (Begin, Put, Get, Commit) encode in their own
# ``to_bytes``: LogRecord.to_bytes with ``_body`` and ``_flags`` inline, the control area
# packed as the body struct's zero pad bytes ("x") and the header's constant fields bound
# (partial), so that a record is two packs, two CRCs and a join – no method calls, no
# concatenation. The bytes are LogRecord.to_bytes's, byte for byte; none of these records
# can reach MAX_RECORD_SIZE (a Put's data is at most half of it: its validator), so the
# length check is not repeated.
_BEGIN_BODY = struct.Struct(f"<Q{APPL_NAME_LENGTH}s")
_BEGIN_HEAD = partial(_pack_header, RecordType.BEGIN, ResourceManager.RECOVERY, 0, HEADER_SIZE + _BEGIN_BODY.size)
_PUT_FIXED = struct.Struct(f"<{QUEUE_NAME_LENGTH}s{MSG_ID_LENGTH}sQIHBxI{DESCRIPTOR_LENGTH}s")
_PUT_BODY = struct.Struct(_PUT_FIXED.format + f"{750 - HEADER_SIZE - _PUT_FIXED.size}x")  # (before the data)
_PUT_HEAD = partial(_pack_header, RecordType.PUT, ResourceManager.MESSAGE)
_GET_FIXED = struct.Struct(f"<{QUEUE_NAME_LENGTH}s{MSG_ID_LENGTH}sQI")
_GET_BODY = struct.Struct(_GET_FIXED.format + f"{260 - HEADER_SIZE - _GET_FIXED.size}x")
_GET_HEAD = partial(_pack_header, RecordType.GET, ResourceManager.MESSAGE)
_COMMIT_FIXED = struct.Struct("<QI")
_COMMIT_BODY = struct.Struct(_COMMIT_FIXED.format + f"{120 - HEADER_SIZE - _COMMIT_FIXED.size}x")
_COMMIT_HEAD = partial(_pack_header, RecordType.COMMIT, ResourceManager.RECOVERY, 0, HEADER_SIZE + _COMMIT_BODY.size)

# They are built by their own ``__new__`` too (attrs makes ``__attrs_init__`` instead of
# ``__init__``, and ``object.__init__`` then runs for nothing): the validators' checks inline
# for the values the queue manager passes (str names, bytes ids), the slots filled by a
# twin's plain stores (:func:`~mqlog.core.format.construct.twin`), not through the frozen
# class's ``object.__setattr__``, and the class switched. Any other value goes to
# ``__attrs_init__``, which converts, validates and refuses as ``__init__`` did. So that the
# ``__new__`` of one class never builds another's instance, the four classes cannot be
# subclassed. (The stores written out in ``__new__`` instead of the twin's ``__init__`` would
# save another 0.4% of the instructions a record, at the price of four copies of the fields.)
_new = object.__new__
_NO_DESCRIPTOR = bytes(DESCRIPTOR_LENGTH)
_DATA_MAX = MAX_RECORD_SIZE // 2


def _final(cls, **kwargs):
    raise TypeError(f"{cls.__mro__[1].__name__} cannot be subclassed (its __new__ builds it)")


def _checked(cls, *args, **kwargs):
    """A record made by its attrs-made ``__attrs_init__``: converted, validated or refused."""
    self = _new(cls)
    self.__attrs_init__(*args, **kwargs)
    return self


@register
@attrs.frozen(init=False, weakref_slot=False)
class Begin(LogRecord):
    """A unit of work starts (its first logged operation follows)."""

    TYPE: ClassVar = RecordType.BEGIN
    RM: ClassVar = ResourceManager.RECOVERY
    _S: ClassVar = _BEGIN_BODY

    time_us: int = 0
    application: str = attrs.field(default="", validator=_name_field(APPL_NAME_LENGTH))
    uow: int = attrs.field(default=0, kw_only=True)
    prev: int = attrs.field(default=NO_ADDRESS, kw_only=True)
    stamp: int = attrs.field(default=0, kw_only=True)

    __init_subclass__ = _final

    def __new__(cls, time_us=0, application="", *, uow=0, prev=NO_ADDRESS, stamp=0):
        if application.__class__ is not str or len(application) > APPL_NAME_LENGTH or not application.isascii():
            return _checked(cls, time_us, application, uow=uow, prev=prev, stamp=stamp)
        self = _BEGIN_TWIN(time_us, application, uow, prev, stamp)
        self.__class__ = cls
        return self

    def to_bytes(self) -> bytes:
        body = _BEGIN_BODY.pack(self.time_us, _pad_name(self.application, APPL_NAME_LENGTH))
        prefix = _BEGIN_HEAD(self.uow, self.prev, self.stamp)
        return b"".join((prefix, _pack_crc(_crc32(body, _crc32(prefix))), body))

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
@attrs.frozen(init=False, weakref_slot=False)
class Put(LogRecord):
    """A persistent message was put: its descriptor and (the first segment of) its data.

    ``data`` is the data as stored, possibly compressed (``codec``); ``message_length`` is
    the whole message's length before compression; ``segments`` counts this record plus its
    :class:`PutSegment` continuations. ``block`` is the message's first 512-byte block in
    the queue file.
    """

    TYPE: ClassVar = RecordType.PUT
    RM: ClassVar = ResourceManager.MESSAGE
    _S: ClassVar = _PUT_FIXED

    queue: str = attrs.field(validator=_name_field(QUEUE_NAME_LENGTH))
    msg_id: bytes = attrs.field(validator=_bytes_field(MSG_ID_LENGTH, exact=True))
    data: bytes = attrs.field(validator=_bytes_field(MAX_RECORD_SIZE // 2))
    #: (the data's length when not given: a message logged whole, uncompressed)
    message_length: int = attrs.field(default=attrs.Factory(lambda self: len(self.data), takes_self=True))
    block: int = 0
    segments: int = 1
    codec: Codec = attrs.field(default=Codec.NONE, converter=_codec)
    descriptor: bytes = attrs.field(default=bytes(DESCRIPTOR_LENGTH),
                                    validator=_bytes_field(DESCRIPTOR_LENGTH, exact=True))
    uow: int = attrs.field(default=0, kw_only=True)
    prev: int = attrs.field(default=NO_ADDRESS, kw_only=True)
    stamp: int = attrs.field(default=0, kw_only=True)
    relogged: bool = attrs.field(default=False, kw_only=True)

    __init_subclass__ = _final

    def __new__(cls, queue, msg_id, data, message_length=attrs.NOTHING, block=0, segments=1, codec=Codec.NONE,
                descriptor=_NO_DESCRIPTOR, *, uow=0, prev=NO_ADDRESS, stamp=0, relogged=False):
        if (queue.__class__ is not str or len(queue) > QUEUE_NAME_LENGTH or not queue.isascii()
                or msg_id.__class__ is not bytes or len(msg_id) != MSG_ID_LENGTH
                or data.__class__ is not bytes or len(data) > _DATA_MAX or codec.__class__ is not Codec
                or (descriptor is not _NO_DESCRIPTOR
                    and (descriptor.__class__ is not bytes or len(descriptor) != DESCRIPTOR_LENGTH))):
            return _checked(cls, queue, msg_id, data, message_length, block, segments, codec, descriptor,
                            uow=uow, prev=prev, stamp=stamp, relogged=relogged)
        self = _PUT_TWIN(queue, msg_id, data, len(data) if message_length is attrs.NOTHING else message_length,
                         block, segments, codec, descriptor, uow, prev, stamp, relogged)
        self.__class__ = cls
        return self

    def __getnewargs__(self):  # (copy and pickle make the instance with these, then set its state)
        return self.queue, self.msg_id, self.data

    def to_bytes(self) -> bytes:
        data = self.data
        fixed = _PUT_BODY.pack(_pad_name(self.queue, QUEUE_NAME_LENGTH), self.msg_id, self.block,
                               self.message_length, self.segments, 0, len(data), self.descriptor)
        prefix = _PUT_HEAD((self.codec | FLAG_RELOGGED) if self.relogged else self.codec,
                           HEADER_SIZE + _PUT_BODY.size + len(data), self.uow, self.prev, self.stamp)
        return b"".join((prefix, _pack_crc(_crc32(data, _crc32(fixed, _crc32(prefix)))), fixed, data))

    @classmethod
    def _from_body(cls, flags, uow, prev, stamp, body):
        fixed = _PUT_BODY.size  # (the control area included)
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
@attrs.frozen(init=False, weakref_slot=False)
class Get(LogRecord):
    """A persistent message was got: names the queue-file space it freed, not the data (260 bytes)."""

    TYPE: ClassVar = RecordType.GET
    RM: ClassVar = ResourceManager.MESSAGE
    _S: ClassVar = _GET_FIXED

    queue: str = attrs.field(validator=_name_field(QUEUE_NAME_LENGTH))
    msg_id: bytes = attrs.field(validator=_bytes_field(MSG_ID_LENGTH, exact=True))
    block: int = 0
    message_length: int = 0
    uow: int = attrs.field(default=0, kw_only=True)
    prev: int = attrs.field(default=NO_ADDRESS, kw_only=True)
    stamp: int = attrs.field(default=0, kw_only=True)
    relogged: bool = attrs.field(default=False, kw_only=True)

    __init_subclass__ = _final

    def __new__(cls, queue, msg_id, block=0, message_length=0, *, uow=0, prev=NO_ADDRESS, stamp=0, relogged=False):
        if (queue.__class__ is not str or len(queue) > QUEUE_NAME_LENGTH or not queue.isascii()
                or msg_id.__class__ is not bytes or len(msg_id) != MSG_ID_LENGTH):
            return _checked(cls, queue, msg_id, block, message_length, uow=uow, prev=prev, stamp=stamp,
                            relogged=relogged)
        self = _GET_TWIN(queue, msg_id, block, message_length, uow, prev, stamp, relogged)
        self.__class__ = cls
        return self

    def __getnewargs__(self):  # (as Put's)
        return self.queue, self.msg_id

    def to_bytes(self) -> bytes:
        body = _GET_BODY.pack(_pad_name(self.queue, QUEUE_NAME_LENGTH), self.msg_id, self.block,
                              self.message_length)
        prefix = _GET_HEAD(FLAG_RELOGGED if self.relogged else 0, HEADER_SIZE + _GET_BODY.size,
                           self.uow, self.prev, self.stamp)
        return b"".join((prefix, _pack_crc(_crc32(body, _crc32(prefix))), body))

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
@attrs.frozen(init=False, weakref_slot=False)
class Commit(LogRecord):
    """The UOW committed (120 bytes: not the guide's 750 but what IBM's V9 log rates leave a
    commit, CALIBRATION F13; docs/FORMAT.md §3.3). Forced before the application is told."""

    TYPE: ClassVar = RecordType.COMMIT
    RM: ClassVar = ResourceManager.RECOVERY
    _S: ClassVar = _COMMIT_FIXED

    time_us: int = 0
    operations: int = 0
    uow: int = attrs.field(default=0, kw_only=True)
    prev: int = attrs.field(default=NO_ADDRESS, kw_only=True)
    stamp: int = attrs.field(default=0, kw_only=True)

    __init_subclass__ = _final

    def __new__(cls, time_us=0, operations=0, *, uow=0, prev=NO_ADDRESS, stamp=0):
        self = _COMMIT_TWIN(time_us, operations, uow, prev, stamp)  # (no validators, no converters)
        self.__class__ = cls
        return self

    def to_bytes(self) -> bytes:
        body = _COMMIT_BODY.pack(self.time_us, self.operations)
        prefix = _COMMIT_HEAD(self.uow, self.prev, self.stamp)
        return b"".join((prefix, _pack_crc(_crc32(body, _crc32(prefix))), body))

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


# --- building a decoded record without __init__ (see construct.py) -----------------------

_build_begin = builder(Begin)
_build_put = builder(Put)
_build_put_segment = builder(PutSegment)
_build_get = builder(Get)
_build_prepare = builder(Prepare)
_build_commit = builder(Commit)
_build_backout = builder(Backout)
_build_clr = builder(Clr)
_BEGIN_TWIN, _PUT_TWIN, _GET_TWIN, _COMMIT_TWIN = map(twin, (Begin, Put, Get, Commit))


def split_message(data: bytes) -> list[bytes]:
    """Cut message data into the put record's first segment and its continuations (15 700 bytes each)."""
    if len(data) <= PUT_SEGMENT_BYTES:
        return [data]
    return [data[i:i + PUT_SEGMENT_BYTES] for i in range(0, len(data), PUT_SEGMENT_BYTES)]
