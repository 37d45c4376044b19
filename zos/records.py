"""z/OS platform records (types 0x60-0x7F): the shunt record and the page-set control record.

**Shunt (0x60).** When a unit of work has lived through two checkpoints since it began or
was last shunted, the checkpoint writes *a representation of each of its records, only the
part needed for backout* further down the log (IBM MQ for z/OS, "Log shunting"): for each put or get, the queue,
the message id, the original record's address and the message length – never the data.
A round of shunting is one or more shunt records chained on the unit of work's backward
chain; the last has ``index == count - 1``. Backout and restart use the newest complete
round instead of reading back to the unit's first record, so the log behind it can be
archived or reused. A round cut short by a crash (its last record missing) is ignored.

A round is written progressively (core/qm/shunting.py): a record at a time through the output
buffer while other work logs, so that a round larger than OUTBUFF – 100,000 operations make
about 8.8 MB – is written, not refused. IBM, "The impact of log shunting" (System
Administration Guide, V6; mirror http://setgetweb.com/p/WAS60/MQ/com.ibm.mq.csqsaw.doc/csq84c081.htm):
"An internal task reads unit of work log information for these old units of work and
rewrites it in a more succinct form to the current position in the log. Message CSQR026
indicates when this has happened." And "Log shunting" (Concepts and Planning Guide, V6;
mirror http://setgetweb.com/p/WAS60/MQ/com.ibm.mq.csqsat.doc/csqsat0337.htm): "When the whole
of the unit of work has been processed, the unit of work is in a shunted state." A round is
refused (CSQR027I) only when the active log cannot hold it beside the reserve: IBM's APAR
PI76882 (http://www-01.ibm.com/support/docview.wss?uid=swg1PI76882) gives CSQR027I when "logs
may switch too quickly for log shunting to keep up". IBM publishes neither the shunt record's
layout nor a limit on a round's size: the 88 bytes an operation below are the model's.

**Page-set control (0x61).** Written at every checkpoint: the page sets (here, the queues'
files) known then, with the log range each needs for media recovery.
"""

from __future__ import annotations

import enum
import struct
from typing import ClassVar

import attrs

from mqlog.core.format.records import (MSG_ID_LENGTH, NO_ADDRESS, QUEUE_NAME_LENGTH, BackoutOp, BackoutRound, LogRecord,
                                       ResourceManager, pad_name, unpad_name)

#: the record type codes the z/OS platform claims of the core's platform codes
#: (``PLATFORM_TYPES``; docs/FORMAT.md §3.2)
RECORD_CODES = range(0x60, 0x80)


class ZosRecordType(enum.IntEnum):
    """The z/OS platform's record type codes (in :data:`RECORD_CODES`)."""

    SHUNT = 0x60
    PAGESET_CONTROL = 0x61
    CF_BACKUP = 0x62


class ZosResourceManager(enum.IntEnum):
    """The z/OS platform's resource managers (above the core's; the log print shows them as
    the RMID). A shunt record names the core's RECOVERY."""

    PAGESET = 6  # page-set control
    CF = 7  # coupling-facility structure backups

PUT, GET = 1, 2


@attrs.frozen
class ShuntedOp:
    """One operation of a shunted unit of work: what backout needs of it."""

    kind: int  # PUT or GET
    queue: str
    msg_id: bytes
    address: int  # the original record
    length: int = 0

    _S: ClassVar = struct.Struct(f"<B3x{QUEUE_NAME_LENGTH}s{MSG_ID_LENGTH}sQI")
    SIZE: ClassVar = 88

    def to_bytes(self) -> bytes:
        return self._S.pack(self.kind, pad_name(self.queue, QUEUE_NAME_LENGTH), self.msg_id, self.address,
                            self.length)

    @classmethod
    def from_bytes(cls, raw) -> "ShuntedOp":
        kind, q, mid, address, length = cls._S.unpack(raw)
        if kind not in (PUT, GET):
            raise ValueError(f"shunted operation kind {kind}")
        return cls(kind, unpad_name(q), bytes(mid), address, length)


#: operations per shunt record (about 88 KB): a large unit of work takes several
SHUNT_OPS_PER_RECORD = 1000


@attrs.frozen
class Shunt(LogRecord):
    """One record of a round of shunting (see the module docstring)."""

    TYPE: ClassVar = ZosRecordType.SHUNT
    RM: ClassVar = ResourceManager.RECOVERY
    _S: ClassVar = struct.Struct("<IIIx3x")  # index, count, ops in this record

    index: int
    count: int
    shunted: tuple = ()
    uow: int = attrs.field(default=0, kw_only=True)
    prev: int = attrs.field(default=NO_ADDRESS, kw_only=True)
    stamp: int = attrs.field(default=0, kw_only=True)

    def __attrs_post_init__(self):
        if not 0 <= self.index < self.count:
            raise ValueError(f"shunt record {self.index} of {self.count}")

    @property
    def final(self) -> bool:
        return self.index == self.count - 1

    def backout_round(self) -> BackoutRound:
        return BackoutRound(self.index, self.count, tuple(
            BackoutOp("put" if op.kind == PUT else "get", op.queue, op.msg_id, op.address, op.length)
            for op in self.shunted))

    def _body(self) -> bytes:
        return self._S.pack(self.index, self.count, len(self.shunted)) + b"".join(o.to_bytes() for o in self.shunted)

    @classmethod
    def _from_body(cls, flags, uow, prev, stamp, body):
        index, count, n = cls._S.unpack_from(body)
        if cls._S.size + n * ShuntedOp.SIZE != len(body):
            raise ValueError(f"shunt record of {n} operations in {len(body)} bytes")
        ops = tuple(ShuntedOp.from_bytes(body[cls._S.size + i * ShuntedOp.SIZE:][:ShuntedOp.SIZE]) for i in range(n))
        return cls(index, count, ops, uow=uow, prev=prev, stamp=stamp)


def shunt_round(uow: int, prev: int, ops) -> list[Shunt]:
    """The records of one round of shunting for ``ops`` (core ``Op``s, oldest first),
    chained from ``prev``; the caller fills each record's ``prev`` as it appends them."""
    shunted = [ShuntedOp(PUT if op.kind == "put" else GET, op.queue, op.msg_id, op.address, op.length)
               for op in ops if op.persistent]
    chunks = [shunted[i:i + SHUNT_OPS_PER_RECORD] for i in range(0, len(shunted), SHUNT_OPS_PER_RECORD)] or [[]]
    return [Shunt(i, len(chunks), tuple(chunk), uow=uow, prev=prev) for i, chunk in enumerate(chunks)]


@attrs.frozen
class EveryThirdCheckpoint:
    """IBM MQ for z/OS, "Log shunting": a unit of work that has been through two prior checkpoints since it
    began or was last shunted is shunted at the next – every third checkpoint."""

    every: int = 3

    def select(self, checkpoint_number: int, uows) -> list[int]:
        return [u.uow for u in uows if u.checkpoints_since_mark >= self.every]


@attrs.frozen
class PagesetEntry:
    """A page set (here: a queue's file) known at a checkpoint."""

    name: str
    depth: int
    recovery_rba: int  # the log restart redo applies to it from (this checkpoint's Begin)

    _S: ClassVar = struct.Struct(f"<{QUEUE_NAME_LENGTH}sQQ")
    SIZE: ClassVar = 64


@attrs.frozen
class PagesetControl(LogRecord):
    """Page-set control record (0x61), one per checkpoint: the page sets known then."""

    TYPE: ClassVar = ZosRecordType.PAGESET_CONTROL
    RM: ClassVar = ZosResourceManager.PAGESET
    _N: ClassVar = struct.Struct("<I4x")

    checkpoint_number: int = 0
    pagesets: tuple = ()
    uow: int = attrs.field(default=0, kw_only=True)
    prev: int = attrs.field(default=NO_ADDRESS, kw_only=True)
    stamp: int = attrs.field(default=0, kw_only=True)

    def _body(self) -> bytes:
        head = struct.pack("<QI4x", self.checkpoint_number, len(self.pagesets))
        return head + b"".join(PagesetEntry._S.pack(pad_name(p.name, QUEUE_NAME_LENGTH), p.depth, p.recovery_rba)
                               for p in self.pagesets)

    @classmethod
    def _from_body(cls, flags, uow, prev, stamp, body):
        number, n = struct.unpack_from("<QI4x", body)
        if 16 + n * PagesetEntry.SIZE != len(body):
            raise ValueError(f"page-set control record of {n} entries in {len(body)} bytes")
        entries = []
        for i in range(n):
            name, depth, rba = PagesetEntry._S.unpack_from(body, 16 + i * PagesetEntry.SIZE)
            entries.append(PagesetEntry(unpad_name(name), depth, rba))
        return cls(number, tuple(entries), uow=uow, prev=prev, stamp=stamp)


def pageset_records(services, begin: int) -> list:
    """The page-set control record for a checkpoint starting at ``begin`` (``services``:
    the queue manager's QueueManagerServices)."""
    queues = services.queues
    entries = tuple(PagesetEntry(name, queues[name].depth, begin) for name in sorted(queues)
                    if queues[name].keeper is None)  # shared queues live in the coupling facility
    return [PagesetControl(services.checkpoint_number + 1, entries)]


@attrs.frozen
class CfBackup(LogRecord):
    """One piece of a coupling-facility structure backup (0x62, BACKUP CFSTRUCT): the images
    of the structure's shared queues and, for each member, the RBA its log must be read
    from to bring them up to date (see mqlog.zos.qsg)."""

    TYPE: ClassVar = ZosRecordType.CF_BACKUP
    RM: ClassVar = ZosResourceManager.CF
    _S: ClassVar = struct.Struct(f"<{QUEUE_NAME_LENGTH}sQIII")  # structure, backup id, segment, segments, length

    structure: str
    backup_id: int
    segment: int
    segments: int
    data: bytes = b""
    uow: int = attrs.field(default=0, kw_only=True)
    prev: int = attrs.field(default=NO_ADDRESS, kw_only=True)
    stamp: int = attrs.field(default=0, kw_only=True)

    def _body(self) -> bytes:
        return self._S.pack(pad_name(self.structure, QUEUE_NAME_LENGTH), self.backup_id, self.segment,
                            self.segments, len(self.data)) + self.data

    @classmethod
    def _from_body(cls, flags, uow, prev, stamp, body):
        name, backup_id, segment, segments, n = cls._S.unpack_from(body)
        if cls._S.size + n != len(body) or not 0 <= segment < segments:
            raise ValueError(f"CF backup segment {segment} of {segments} with {n} bytes in {len(body)}")
        return cls(unpad_name(name), backup_id, segment, segments, bytes(body[cls._S.size:]),
                   uow=uow, prev=prev, stamp=stamp)


#: the z/OS platform's record classes (``Platform.record_types``)
RECORD_TYPES = (Shunt, PagesetControl, CfBackup)
