"""The checkpoint and object-change records: a checkpoint's begin and its end with the tables
of active units of work and of queues that restart starts from, and the record of an object
created, altered or deleted.

Sizes follow IBM's published sizing of the log ("Calculating the size of the log" in the IBM
MQ documentation): a checkpoint 750 + 200 per active unit of work, an object create, alter or
delete 1500, 1024 or 300 bytes, padded with a zeroed control area as :mod:`.units` explains.
"""

from __future__ import annotations

import struct
from typing import ClassVar

import attrs

from mqlog.core.format.construct import builder
from mqlog.core.format.records.base import LogRecord, register
from mqlog.core.format.records.header import (HEADER_SIZE, NO_ADDRESS, QUEUE_NAME_LENGTH, XID_MAX_LENGTH, ObjectAction,
                                              ObjectType, RecordType, ResourceManager, UowState, _bytes_field,
                                              _name_field, _pad_name, _unpad_name)

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


_build_checkpoint_begin = builder(CheckpointBegin)
