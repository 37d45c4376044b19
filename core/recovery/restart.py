"""Restart recovery (SPEC §3.6): load queues, replay, rebuild units of work, undo with CLRs.

1. **Load** – every queue file is opened: its metadata (one directory entry per message),
   not its message data. With the MQ 9.1.1 behaviour queues load in parallel; with the
   legacy behaviour one after another.
2. **Replay (redo) and analysis** – every record from the last complete checkpoint to the
   end of the log is redone ("repeating history") onto the queues, and the table of units
   of work is rebuilt: the checkpoint's table, plus those that begin later, less those whose
   commit or backout is found. Redo is idempotent per message, because a queue file may
   already be newer than the checkpoint (a later flush whose checkpoint never completed).
3. **In doubt** – for each unit of work left in the table, its backward chain of records is
   walked from its last record to its Begin, reading the log wherever that takes it (before
   the checkpoint too), to rebuild what it did. A compensation record sends the walk to its
   ``undo_next``: operations already undone are skipped.
4. **Undo** – units of work that were not prepared are backed out, newest operation first:
   a CLR for each, then a Backout record. Prepared ones stay in doubt, their operations
   rebuilt, until the coordinator resolves them. A crash during undo and another restart
   redo the CLRs and resume where undo stopped; no undo work is repeated.

Uncommitted state in a queue file that belongs to no unit of work the log knows of (its
records never reached the disk) is put right at the end. Every read and every unit of
work is charged in virtual time through the device profile, so restart time grows with the
records replayed, the uncommitted messages, the depth of the queues and the device latency.
"""

from __future__ import annotations

from typing import Generator

import attrs
import simpy

from mqlog.core.errors import LogCorruptionError
from mqlog.core.format.pages import PAGE_SIZE
from mqlog.core.platform import LogControl
from mqlog.core.errors import QueueFileError
from mqlog.core.objects.queuefile import MessageState, QueueFile, file_name_for, list_queue_files
from mqlog.core.objects.queues import DamagedQueue, Message, Queue

from mqlog.core.log.reader import EndOfLog, LogReader
from mqlog.core.disk.storage import MemoryStorage
from mqlog.core.format.records import (NO_ADDRESS, Backout, Begin, CheckpointEnd, Clr, ClrAction, Codec, Commit, Get,
                                ObjectAction, ObjectChange, Prepare, Put, PutSegment, UndoneOp, UowState)
from mqlog.core.objects.uow import MEMBER_SHIFT, Op, UnitOfWork
from mqlog.core.objects.uow import UowState as LiveState

#: pages the 9.1.1 replay reads per file-system call; the legacy replay reads one page per
#: call and pays a file-system operation for each
REPLAY_CHUNK_PAGES = 16
#: batch the per-record CPU charge into timeouts of at least this many µs (fewer events)
CPU_BATCH_US = 1000.0
#: a backward chain longer than this many records loops (a unit of work is bounded by
#: MAXUMSGS and the log's size long before it)
MAX_CHAIN = 10_000_000


#: (redo_put: its caller has not looked the queue up)
_LOOK_UP = object()
#: the states as module constants (redo looks at one or two per record: an enum member
#: looked up on its class costs more than the rest of such a line)
_COMMITTED, _PUT_UNCOMMITTED, _GOT_UNCOMMITTED = (MessageState.COMMITTED, MessageState.PUT_UNCOMMITTED,
                                                  MessageState.GOT_UNCOMMITTED)


class BackoutImpossible(LogCorruptionError):
    """A unit of work cannot be backed out: records it needs have been overwritten (z/OS
    5C6-00D1032A, archiving off)."""


@attrs.define
class RecoveryReport:
    """What restart did, with its cost in virtual time."""

    records_replayed: int = 0
    bytes_read: int = 0
    uows_committed: int = 0  # units of work whose commit replay found
    uows_backed_out: int = 0  # in flight at the crash, backed out by restart
    uows_indoubt: int = 0  # prepared, left in doubt for the coordinator
    messages_reconciled: int = 0  # uncommitted messages put right (removed or restored)
    queues_loaded: int = 0
    messages_loaded: int = 0
    clrs_written: int = 0
    queues_recreated: int = 0  # damaged queues re-created from their media images
    queues_damaged: list = attrs.field(factory=list)  # left damaged (AMQ7472)
    checkpoint: int = NO_ADDRESS
    restart_virtual_seconds: float = 0.0
    phases: dict = attrs.field(factory=dict)  # phase name -> virtual seconds
    messages: list = attrs.field(factory=list)
    end_of_log: EndOfLog | None = None

    def as_dict(self) -> dict:
        end = self.end_of_log
        return {
            "records_replayed": self.records_replayed,
            "bytes_read": self.bytes_read,
            "uows_backed_out": self.uows_backed_out,
            "uows_committed": self.uows_committed,
            "uows_indoubt": self.uows_indoubt,
            "messages_reconciled": self.messages_reconciled,
            "queues_loaded": self.queues_loaded,
            "messages_loaded": self.messages_loaded,
            "clrs_written": self.clrs_written,
            "queues_recreated": self.queues_recreated,
            "queues_damaged": list(self.queues_damaged),
            "restart_virtual_seconds": self.restart_virtual_seconds,
            "phases": dict(self.phases),
            "messages": list(self.messages),
            "end_of_log": None if end is None else {"reason": end.reason, "address": end.address,
                                                    "problem": end.problem, "source": end.source},
        }


@attrs.define
class _Uow:
    """A unit of work as restart reconstructs it."""

    first: int
    last: int
    prepared: bool = False
    xid: bytes = b""
    begin_us: float = 0.0


class Recovery:
    """One recovery run over a queue manager's log: restart (:meth:`run`), the media
    recovery of one queue (:func:`recreate_queue`), or a platform's rebuilding of kept
    queues from several logs (``rebuilding``; its caller feeds :meth:`redo` and ends with
    :meth:`reconcile`)."""

    def __init__(self, qm, control: LogControl):
        self.qm = qm
        self.env: simpy.Environment = qm.env
        self.control = control
        self.platform = qm.platform
        self.report = RecoveryReport(checkpoint=control.checkpoint)
        self.table: dict[int, _Uow] = {}
        self.ended: set[int] = set()
        self.by_uow: dict[int, set] = {}
        self.segments: dict[bytes, list] = {}
        self.max_uow = 0
        self.checkpoint_number = control.checkpoint_number
        #: the queues redo applies to: all of them at restart, one for media recovery
        self.queues: dict = qm.queues
        #: media recovery records by queue, from the checkpoint and later creates and images
        self.media: dict[str, int] = {}
        #: queues whose files would not load, with why (AMQ7472 unless media recovery mends them)
        self.damaged: dict[str, str] = {}
        self.listed: set[str] = set()  # queues the checkpoint's queue table names
        #: whether replay reached the end record of the checkpoint the control data names
        #: (the control data is saved only after that record is forced)
        self.checkpoint_complete = control.checkpoint == NO_ADDRESS
        self.image_parts: dict[tuple, int] = {}  # (queue, image id) -> segments seen in order
        self._cpu = 0.0
        self._pages_charged = 0
        legacy = qm.config.restart_mode == "legacy"
        self.chunk = 1 if legacy else REPLAY_CHUNK_PAGES
        self.legacy = legacy
        self.only: str | None = None  # media recovery: the one queue being re-created
        #: rebuilding kept queues from the merged logs of the queue managers sharing them
        #: (a platform's recovery of its keeper): redo applies to kept queues too
        self.rebuilding = False
        self.next_seq = 0  # when rebuilding: arrival numbers given in merged order
        #: redo of each record type (exactly that type); any other goes to _redo_other
        self._redo_by_kind = {Put: self._redo_put_record, PutSegment: self._redo_segment, Get: self._redo_get,
                              Begin: self._redo_begin, Commit: self._redo_commit, Backout: self._redo_backout,
                              Prepare: self._redo_prepare, Clr: self._redo_clr,
                              CheckpointEnd: self._redo_checkpoint_end, ObjectChange: self.redo_object}

    # -- cost --------------------------------------------------------------------------------

    def cpu(self, us: float) -> Generator:
        self._cpu += us
        if self._cpu >= CPU_BATCH_US:
            yield self.env.timeout(self._cpu)
            self._cpu = 0.0

    def cpu_flush(self) -> Generator:
        if self._cpu:
            yield self.env.timeout(self._cpu)
            self._cpu = 0.0

    def sequential_reads(self, pages_read: int, final: bool = False) -> Generator:
        """Charge the replay's sequential log reads in the configured chunk size."""
        device = self.qm.device
        while pages_read - self._pages_charged >= self.chunk or (final and pages_read > self._pages_charged):
            n = min(self.chunk, pages_read - self._pages_charged)
            if self.legacy:
                yield from device.file_op()
            yield from device.read(n * PAGE_SIZE)
            self._pages_charged += n

    def phase(self, name: str, started: float) -> None:
        self.report.phases[name] = (self.env.now - started) / 1e6

    # -- the whole restart -------------------------------------------------------------------

    def run(self) -> Generator:
        env, qm, report = self.env, self.qm, self.report
        t0 = env.now
        qm.say("restart-begin", checkpoint=self.control.checkpoint)
        yield from self.load_queues()
        self.phase("load", t0)

        t = env.now
        start = self.control.checkpoint
        if start == NO_ADDRESS:
            start = self.platform.addressing.start
        reader = LogReader(self.platform.space, start, format_address=self.platform.addressing.format,
                           record_types=self.platform.record_types)
        # The per-record steps of sequential_reads, cpu and redo, with their tests inlined:
        # each yields (charges virtual time) exactly when the generator it stands for would.
        # The reader hands over a page's records at once, having read that page: the reads
        # are charged before its first record, as they were when records came one by one.
        replay_us, chunk, apply, by_kind = qm.config.replay_record_us, self.chunk, self.apply, self._redo_by_kind
        timeout = env.timeout
        cpu = self._cpu
        progress = qm.restart_progress
        for batch in reader.batches():
            report.records_replayed += len(batch)
            if progress is not None:
                progress(report.records_replayed)
            if reader.pages_read - self._pages_charged >= chunk:
                yield from self.sequential_reads(reader.pages_read)
            for address, record in batch:
                cpu += replay_us
                if cpu >= CPU_BATCH_US:
                    yield timeout(cpu)
                    cpu = 0.0
                handler = by_kind.get(type(record))
                more = apply(address, record) if handler is None else handler(address, record)
                if more is not None:
                    self._cpu = cpu  # the generator may charge CPU of its own
                    yield from more
                    cpu = self._cpu
        self._cpu = cpu
        yield from self.sequential_reads(reader.pages_read, final=True)
        yield from self.cpu_flush()
        report.bytes_read += reader.bytes_read
        report.end_of_log = reader.end
        if not self.checkpoint_complete:
            end = reader.end
            fmt = self.platform.addressing.format
            # The control data is saved only once the checkpoint's end record is on disk: a
            # log that ends before it has lost records that were forced (MQ: AMQ6767).
            raise LogCorruptionError(
                f"the log ends at {fmt(end.address)} ({end.reason}: {end.problem}) before the end of the "
                f"checkpoint its control data names (begun at {fmt(start)}): forced log records are gone",
                source=end.source, offset=end.offset,
                address=fmt(end.page_address if end.page_address is not None else end.address))
        self.phase("replay", t)
        qm.say("replay-complete", records=report.records_replayed, end=reader.end,
               in_flight=sum(1 for u in self.table.values() if not u.prepared),
               in_doubt=sum(1 for u in self.table.values() if u.prepared), committed=report.uows_committed)

        qm.writer = qm._new_writer(reader)
        t = env.now
        histories = {}
        for uow_id in sorted(self.table):
            histories[uow_id] = yield from self.walk(uow_id)
        self.phase("indoubt", t)

        t = env.now
        for uow_id in sorted(self.table):
            entry = self.table[uow_id]
            if entry.prepared:
                self.keep_in_doubt(uow_id, entry, histories[uow_id])
            else:
                yield from self.undo(uow_id, entry, histories[uow_id])
        yield from self.reconcile()
        yield qm.writer.force()
        self.phase("undo", t)
        t = env.now
        yield from self.mend_damaged()
        if self.damaged or report.queues_recreated:
            self.phase("media recovery", t)
        qm.say("uows-recovered", backed_out=report.uows_backed_out, in_doubt=report.uows_indoubt,
               committed=report.uows_committed)

        qm._checkpoint_number = max(self.checkpoint_number, self.control.checkpoint_number)
        qm._checkpoint_address = self.control.checkpoint
        qm._next_uow = self.max_uow + 1
        yield from self.image_unknown()
        t = env.now
        yield from qm.checkpoint("restart")
        self.phase("checkpoint", t)
        report.restart_virtual_seconds = (env.now - t0) / 1e6
        qm.say("restart-complete", seconds=report.restart_virtual_seconds)
        report.messages = list(qm.messages)
        return report

    # -- 1. load -----------------------------------------------------------------------------

    def load_queues(self) -> Generator:
        names = list_queue_files(self.qm.storage)
        if self.legacy:
            for name in names:
                yield from self.load_queue(name)
        else:
            procs = [self.env.process(self.load_queue(name)) for name in names]
            if procs:
                yield simpy.AllOf(self.env, procs)
        self.report.queues_loaded = len(names) - len(self.damaged)
        # Kept queues (attached by their keeper before restart): the messages this queue
        # manager's units of work hold there are resolved like a queue file's.
        member = self.qm.config.member
        for queue in self.queues.values():
            if queue.keeper is not None:
                for m in queue.messages.values():
                    if m.uow and m.uow >> MEMBER_SHIFT == member:
                        self.index(m.uow, queue.name, m.msg_id)
                    elif m.busy and m.busy_by == member + 1:
                        # An MQGET of this queue manager's earlier incarnation, cut off by the crash
                        # before it was logged: the message is there for others again.
                        queue.make_available(m)

    def load_queue(self, name: str) -> Generator:
        qm = self.qm
        yield from qm.device.file_op()
        try:
            qfile, cost = QueueFile.open(qm.storage, name)
        except QueueFileError as exc:
            # Damaged: restart goes on without it; media recovery may re-create it below.
            self.damaged[name] = str(exc)
            return
        yield from qm._charge(cost)
        self.report.bytes_read += sum(cost.reads)
        queue = Queue(name, qfile, max_depth=_max_depth(qfile.attributes, qm.config.max_depth),
                      attributes=qfile.attributes)
        for stored in sorted(qfile.messages.values(), key=lambda m: (m.put_address, m.msg_id)):
            message = Message(stored.msg_id, stored.put_address, True, stored.length, None, stored.state,
                              stored.uow, stored.put_address)
            queue.messages[stored.msg_id] = message
            if stored.state is MessageState.COMMITTED:
                queue.available[message.seq] = stored.msg_id
            else:
                self.index(stored.uow, name, stored.msg_id)
            if message.seq > queue._seq:
                queue._seq = message.seq
        self.report.messages_loaded += len(qfile.messages)
        yield self.env.timeout(len(qfile.messages) * qm.config.load_message_us)
        self.queues[name] = queue

    def index(self, uow: int, queue: str, msg_id: bytes) -> None:
        members = self.by_uow.get(uow)
        if members is None:
            members = self.by_uow[uow] = set()
        members.add((queue, msg_id))
        if uow > self.max_uow:
            self.max_uow = uow

    # -- 2. redo -----------------------------------------------------------------------------

    def track(self, uow: int, address: int) -> _Uow | None:
        if not uow:
            return None
        if uow > self.max_uow:
            self.max_uow = uow
        entry = self.table.get(uow)
        if entry is None:
            if uow in self.ended:
                return None
            entry = self.table[uow] = _Uow(address, address)
        elif address > entry.last:
            entry.last = address
        return entry

    def redo(self, address: int, record) -> Generator:
        more = self.apply(address, record)
        if more is not None:
            yield from more

    def apply(self, address: int, record) -> Generator | None:
        """Redo ``record`` as far as it can be done at once: None when it is done, else a
        generator (it must wait for log reads or file operations) that finishes it."""
        handler = self._redo_by_kind.get(type(record))
        if handler is None:
            return self._redo_other(address, record)
        return handler(address, record)

    def _redo_put_record(self, address: int, record: Put) -> None:
        queue = self.queues.get(record.queue)
        if queue is not None and queue.keeper is not None and not self.rebuilding:
            # A kept queue outlived this queue manager with its keeper: the keeper is the
            # truth about messages; only the outcome of this queue manager's units of work
            # is resolved from the log (their uncommitted messages were indexed at load).
            # (Segments and gets: the same.)
            self.track(record.uow, address)
            return None
        self.track(record.uow, address)
        if record.segments > 1:
            self.segments[record.msg_id] = [record, [record.data], address]
        else:
            self.redo_put(address, record, record.data, queue)
        return None

    def _redo_segment(self, address: int, record: PutSegment) -> Generator | None:
        queue = self.queues.get(record.queue)
        if queue is not None and queue.keeper is not None and not self.rebuilding:
            self.track(record.uow, address)
            return None
        self.track(record.uow, address)
        pending = self.segments.get(record.msg_id)
        if pending is None:
            return self._redo_segment_after_gap(record)
        self._add_segment(pending, record)
        return None

    def _redo_segment_after_gap(self, record: PutSegment) -> Generator:
        # Replay began between the message's put record and this segment (a checkpoint
        # fell among its records): fetch the earlier ones by their chain.
        pending = yield from self.segments_before(record)
        if pending is not None:
            self.segments[record.msg_id] = pending
            self._add_segment(pending, record)

    def _add_segment(self, pending: list, record: PutSegment) -> None:
        pending[1].append(record.data)
        if len(pending[1]) == pending[0].segments:
            del self.segments[record.msg_id]
            self.redo_put(pending[2], pending[0], b"".join(pending[1]))

    def _redo_get(self, address: int, record: Get) -> None:
        queue = self.queues.get(record.queue)
        if queue is not None and queue.keeper is not None and not self.rebuilding:
            self.track(record.uow, address)
            return None
        self.track(record.uow, address)
        message = queue.messages.get(record.msg_id) if queue else None
        if message is not None:
            if not record.uow:
                queue.remove(message)
            elif message.state is _COMMITTED:
                queue.lock(message, record.uow, address)
                self.index(record.uow, queue.name, message.msg_id)
        return None

    def _redo_begin(self, address: int, record: Begin) -> None:
        uow = record.uow
        if not uow:
            # Unit of work 0 is the out-of-syncpoint marker: no unit of work begins as it.
            raise LogCorruptionError("a Begin record for unit of work 0 (no unit of work has that number)",
                                     address=self.platform.addressing.format(address))
        self.ended.discard(uow)
        entry = self.track(uow, address)
        if entry is not None:
            entry.begin_us = record.time_us
        return None

    def _redo_commit(self, address: int, record: Commit) -> None:
        self.finish(record.uow, commit=True)
        self.report.uows_committed += 1
        return None

    def _redo_backout(self, address: int, record: Backout) -> None:
        self.finish(record.uow, commit=False)
        return None

    def _redo_prepare(self, address: int, record: Prepare) -> None:
        entry = self.track(record.uow, address)
        if entry is not None:
            entry.prepared = True
            entry.xid = record.xid
        return None

    def _redo_clr(self, address: int, record: Clr) -> None:
        self.track(record.uow, address)
        self.compensate(record)
        return None

    def _redo_checkpoint_end(self, address: int, record: CheckpointEnd) -> None:
        if record.begin == self.control.checkpoint:
            self.checkpoint_complete = True
        self.checkpoint_number = max(self.checkpoint_number, record.number)
        for row in record.queues:
            self.listed.add(row.name)
            if row.media != NO_ADDRESS:
                self.media[row.name] = row.media
        for row in record.uows:
            if row.uow in self.ended:
                continue
            entry = self.table.get(row.uow)
            if entry is None:
                entry = self.table[row.uow] = _Uow(row.first, row.last, begin_us=row.begin_time_us)
            else:
                entry.first = min(entry.first, row.first)
                entry.last = max(entry.last, row.last)
            if row.state is UowState.IN_DOUBT:
                entry.prepared = True
                entry.xid = row.xid
            self.max_uow = max(self.max_uow, row.uow)
        return None

    def _redo_other(self, address: int, record) -> None:
        """A record of no core type that redo handles (platform records, checkpoint begin)."""
        if record.backout_round() is not None:
            self.track(record.uow, address)  # a round of shunting: the unit's newest records
            return None
        piece = record.image_piece()
        if piece is not None:
            # A piece of a media image (a platform record). Only a complete image moves the
            # queue's media recovery record: a crash part way leaves the older one in force.
            key = (piece.queue, piece.image_id)
            seen = self.image_parts.get(key, 0)
            if piece.segment == seen:
                self.image_parts[key] = seen + 1
                if seen + 1 == piece.segments:
                    del self.image_parts[key]
                    if piece.queue in self.queues or piece.queue in self.damaged:
                        self.media[piece.queue] = piece.image_id
        return None

    def segments_before(self, segment: PutSegment) -> Generator:
        """The put record and segments that precede ``segment`` on its chain, read from the
        log (before the checkpoint): [put record, [data of each], put address], or None."""
        parts = []
        address = segment.prev
        while address != NO_ADDRESS:
            record = yield from self.read_at(address)
            if isinstance(record, PutSegment) and record.msg_id == segment.msg_id:
                parts.append(record.data)
                address = record.prev
            elif isinstance(record, Put) and record.msg_id == segment.msg_id:
                return [record, [record.data, *reversed(parts)], address]
            else:
                return None
        return None

    def redo_put(self, address: int, record: Put, stored: bytes, queue=_LOOK_UP) -> None:
        if queue is _LOOK_UP:
            queue = self.queues.get(record.queue)
        if queue is None or record.msg_id in queue.messages:
            return  # the queue file already has it (it is newer than the checkpoint)
        data = stored
        if record.codec is not Codec.NONE:
            data = self.platform.codec.decode(record.codec, stored)
            if len(data) != record.message_length:
                raise LogCorruptionError(f"compressed message data of {record.queue} expands to {len(data)} bytes, "
                                         f"the put record says {record.message_length}",
                                         address=self.platform.addressing.format(address))
        state = _PUT_UNCOMMITTED if record.uow else _COMMITTED
        # Arrival order: the put's address – but when rebuilding, records come from several
        # queue managers' logs, whose addresses overlap: there they are numbered in merged order.
        seq = address
        if self.rebuilding:
            self.next_seq += 1
            seq = self.next_seq
        message = Message(record.msg_id, seq, True, record.message_length, data, state, record.uow, address)
        queue.add(message)
        if record.uow:
            self.index(record.uow, queue.name, record.msg_id)

    def finish(self, uow: int, commit: bool) -> None:
        self.table.pop(uow, None)
        self.ended.add(uow)
        members = self.by_uow.pop(uow, None)
        if not members:
            return
        queues = self.queues
        for name, msg_id in members:
            queue = queues.get(name)
            message = queue.messages.get(msg_id) if queue else None
            if message is None or message.uow != uow:
                continue
            state = message.state
            if state is _PUT_UNCOMMITTED:
                if commit:
                    queue.make_available(message)
                else:
                    queue.remove(message)
            elif state is _GOT_UNCOMMITTED:
                if commit:
                    queue.remove(message)
                else:
                    queue.make_available(message)

    def compensate(self, clr: Clr) -> None:
        queue = self.queues.get(clr.queue)
        message = queue.messages.get(clr.msg_id) if queue else None
        if message is None or message.uow != clr.uow:
            return
        if clr.action is ClrAction.REMOVE_PUT and message.state is MessageState.PUT_UNCOMMITTED:
            queue.remove(message)
        elif clr.action is ClrAction.RESTORE_GET and message.state is MessageState.GOT_UNCOMMITTED:
            queue.make_available(message)

    def redo_object(self, address: int, record: ObjectChange) -> Generator:
        qm = self.qm
        name = record.name
        if self.only is not None and name != self.only:
            return
        if record.action is ObjectAction.CREATE:
            self.media[name] = address  # the creation record is the queue's first media image
        if record.action is ObjectAction.CREATE and name not in self.queues and name not in self.damaged:
            qfile = None
            if self.only is None:  # media recovery writes its queue's file at the end
                yield from qm.device.file_op()
                qfile = QueueFile.create(qm.storage, name, record.attributes)
            self.queues[name] = Queue(name, qfile, max_depth=_max_depth(record.attributes, qm.config.max_depth),
                                      attributes=record.attributes)
        elif record.action is ObjectAction.DELETE and (name in self.queues or name in self.damaged):
            yield from qm.device.file_op()
            self.media.pop(name, None)
            self.listed.discard(name)
            if name in self.queues:
                gone = self.queues.pop(name)
                if gone.file is not None:
                    gone.file.delete()
            else:
                self.damaged.pop(name)
                if qm.storage.exists(file_name_for(name)):
                    qm.storage.delete(file_name_for(name))
        elif record.action is ObjectAction.ALTER and name in self.queues:
            queue = self.queues[name]
            queue.attributes = record.attributes
            queue.max_depth = _max_depth(record.attributes, queue.max_depth)
            if queue.file is not None:
                queue.file.alter(record.attributes)

    def mend_damaged(self) -> Generator:
        """Queues whose files would not load, or which the checkpoint names but whose files
        are gone: re-created from their media images if the log supports media recovery
        (MQ does this by itself at startup on a linear log), else marked damaged (AMQ7472):
        applications then get MQRC_OBJECT_DAMAGED and their uncommitted messages are lost."""
        qm = self.qm

        for name in sorted(self.listed - set(self.queues) - set(self.damaged)):
            self.damaged[name] = f"its file {file_name_for(name)} is missing"
        for name in sorted(self.damaged):
            reason = self.damaged[name]
            media = self.media.get(name, NO_ADDRESS)
            qm.say("object-damaged", queue=name, reason=reason)
            if self.platform.media is not None and media != NO_ADDRESS:
                try:
                    yield from recreate_queue(qm, name, media)
                except LogCorruptionError as exc:
                    reason = f"{reason}; media recovery failed: {exc}"
                else:
                    self.report.queues_recreated += 1
                    continue
            qm.damaged[name] = DamagedQueue(name, reason, media)
            self.report.queues_damaged.append(name)
        for name, queue in self.queues.items():
            if name in self.media:
                queue.media_address = self.media[name]

    def image_unknown(self) -> Generator:
        """A queue whose media recovery record the log does not name (an older log, or a
        definition no checkpoint caught) is imaged now, where the platform takes images:
        otherwise media recovery could not re-create it and MEDIALOG would ignore it."""
        qm = self.qm
        if qm.platform.media is None:
            return
        from mqlog.core.objects.media import MediaRecoveryError, record_image
        from mqlog.core.objects.uow import MqiError

        for name in sorted(n for n, q in qm.queues.items() if q.media_address == NO_ADDRESS):
            try:
                yield from record_image(qm, name, checkpoint=False)
            except (MqiError, MediaRecoveryError) as exc:
                qm.say("image-failed", queue=name, reason=str(exc))

    # -- 3. in doubt: the backward chains ----------------------------------------------------

    def read_at(self, address: int) -> Generator:
        """One record at ``address``: a random read, charged to the device."""
        reader = LogReader(self.platform.space, address, format_address=self.platform.addressing.format,
                           record_types=self.platform.record_types,
                           lookahead_pages=0)
        record = None
        for _, record in reader:
            break
        yield from self.qm.device.read(reader.pages_read * PAGE_SIZE)
        self.report.bytes_read += reader.bytes_read
        return record

    def walk(self, uow_id: int) -> Generator:
        """The operations still to undo for ``uow_id``, newest first, as (address, record).

        Re-logged copies (roll forward) count only if their round is complete – closed by a
        flagged Prepare – and then replace every older record of the unit; copies of an
        interrupted round are passed over and the original records used."""
        entry = self.table[uow_id]
        ops = []
        address = entry.last
        seen = 0
        in_round = False  # inside the newest complete round of copies
        undone: set[int] = set()  # original records a CLR has already compensated
        fmt = self.platform.addressing.format
        last_at = address
        while True:
            if address == NO_ADDRESS:
                # Every unit of work's chain begins with its Begin record (a CLR that
                # compensated the first operation points at it): a chain that ends without
                # one has lost records, and undo would back out only part of the unit.
                raise LogCorruptionError(f"unit of work {uow_id:X}: its backward chain ends before its Begin record "
                                         f"(last record read at {fmt(last_at)})", address=fmt(last_at))
            record = yield from self.read_at(address)
            seen += 1
            if record is None or record.uow != uow_id or seen > MAX_CHAIN:
                if self.platform.space.lost(address):
                    raise BackoutImpossible(
                        f"5C6-00D1032A: unit of work {uow_id:X} cannot be backed out: the log record at "
                        f"{fmt(address)} it needs was overwritten (archiving is "
                        f"off and the unit was not shunted in time)", address=fmt(address))
                # Anything but the Begin ends undo part-way: the records behind this point
                # are this unit's, and backing out a subset would be silently wrong.
                if record is None:
                    why = "no log record is there"
                elif record.uow != uow_id:
                    why = f"the record there ({type(record).__name__}) belongs to unit of work {record.uow:X}"
                else:
                    why = f"the chain runs on past {MAX_CHAIN} records (it loops)"
                raise LogCorruptionError(f"unit of work {uow_id:X}: its backward chain is broken at {fmt(address)}: "
                                         f"{why}", address=fmt(address))
            last_at = address
            entry.first = min(entry.first, address)
            shunted = record.backout_round()
            if shunted is not None:
                if shunted.index != shunted.count - 1:
                    # A round cut short by a crash: skip its records, use the older chain.
                    address = record.prev
                    continue
                # The newest complete round of shunting: every operation up to here.
                rounds = [(record, shunted)]
                while rounds[-1][1].index > 0:
                    earlier_at = rounds[-1][0].prev
                    earlier = yield from self.read_at(earlier_at)
                    earlier_round = earlier.backout_round() if earlier is not None else None
                    if earlier_round is None:
                        raise LogCorruptionError(f"unit of work {uow_id:X}: its round of shunting is broken at "
                                                 f"{fmt(earlier_at)}", address=fmt(earlier_at))
                    entry.first = min(entry.first, earlier_at)
                    rounds.append((earlier, earlier_round))
                final_at = address
                for _, part in rounds:  # newest record first; within one, newest operation last
                    for op in reversed(part.ops):
                        if op.address in undone:
                            continue
                        stand_in = (Put(op.queue, op.msg_id, b"", op.length, uow=uow_id, prev=final_at)
                                    if op.kind == "put" else Get(op.queue, op.msg_id, 0, op.length, uow=uow_id,
                                                                 prev=final_at))
                        ops.append((op.address, stand_in))
                break
            relogged = record.relogged
            if relogged or in_round:
                if isinstance(record, Prepare) and relogged:
                    if in_round:
                        break  # the previous round's end: all older records are superseded
                    in_round = True
                elif not relogged:
                    break  # an original record, older than a complete round of copies
                elif in_round:
                    ops.append((address, record))
                address = record.prev
                continue
            if isinstance(record, Clr):
                if not undone:
                    # The newest CLR: every operation an interrupted undo already compensated
                    # is named by the CLRs chained behind it. A round of shunting lists all
                    # operations at once, so it needs the whole set, not only the newest.
                    undone.add(record.undoes)
                    probe = record.prev
                    while probe != NO_ADDRESS:
                        older = yield from self.read_at(probe)
                        if not isinstance(older, Clr) or older.uow != uow_id:
                            break
                        undone.add(older.undoes)
                        probe = older.prev
                address = record.undo_next
                continue
            if isinstance(record, (Put, Get)):
                ops.append((address, record))
            if isinstance(record, Begin):
                entry.begin_us = record.time_us
                break
            address = record.prev
        if in_round:
            entry.first = min(a for a, _ in ops) if ops else entry.last
        return ops

    # -- 4. undo -----------------------------------------------------------------------------

    def undo(self, uow_id: int, entry: _Uow, ops) -> Generator:
        qm, writer = self.qm, self.qm.writer
        last = entry.last
        undone = []
        for seq, (address, record) in enumerate(ops):
            action = ClrAction.REMOVE_PUT if isinstance(record, Put) else ClrAction.RESTORE_GET
            clr = Clr(address, record.prev, action, record.queue, record.msg_id, 0,
                      record.message_length, uow=uow_id, prev=last)
            last = yield from writer.put(clr)
            self.report.clrs_written += 1
            undone.append(UndoneOp(address, seq))
            queue = self.queues.get(record.queue)
            message = queue.messages.get(record.msg_id) if queue else None
            if message is not None and message.uow == uow_id:
                self.compensate(clr)
                self.report.messages_reconciled += 1
                yield from self.cpu(qm.config.reconcile_message_us)
        yield from writer.put(Backout(int(self.env.now), undone, uow=uow_id, prev=last))
        yield writer.force()  # each unit of work's backout completes before the next starts
        self.report.uows_backed_out += 1
        self.finish(uow_id, commit=False)

    def keep_in_doubt(self, uow_id: int, entry: _Uow, ops) -> None:
        qm = self.qm
        uow = UnitOfWork(uow_id, "", entry.begin_us, LiveState.PREPARED, entry.first, entry.last, xid=entry.xid,
                         prepare_address=entry.last)  # in doubt on the log: later checkpoints must say so
        for address, record in reversed(ops):
            kind = "put" if isinstance(record, Put) else "get"
            length = record.message_length
            uow.ops.append(Op(kind, record.queue, record.msg_id, True, address, record.prev, length))
        # Non-persistent work survives only on a kept queue (its keeper kept it):
        # the unit keeps it too, so that its resolution reaches it.
        logged = {(op.queue, op.msg_id) for op in uow.ops}
        for name, msg_id in sorted(self.by_uow.get(uow_id, ())):
            queue = self.queues.get(name)
            message = queue.messages.get(msg_id) if queue is not None else None
            if message is None or (name, msg_id) in logged or message.persistent or message.uow != uow_id:
                continue
            kind = "put" if message.state is MessageState.PUT_UNCOMMITTED else "get"
            uow.ops.append(Op(kind, name, msg_id, False, NO_ADDRESS, NO_ADDRESS, message.length))
        qm.uows[uow_id] = uow
        qm._uow_ages.add((uow.first, uow_id))
        self.report.uows_indoubt += 1

    def reconcile(self) -> Generator:
        """Uncommitted state of units of work the log does not know: their records never
        reached the disk, so they cannot have committed; put it back as it was."""
        qm = self.qm
        live = set(self.table)
        for uow, members in sorted(self.by_uow.items()):
            if uow in live:
                continue
            for name, msg_id in sorted(members):
                queue = self.queues.get(name)
                message = queue.messages.get(msg_id) if queue else None
                if message is None or message.uow != uow:
                    continue
                if message.state is MessageState.PUT_UNCOMMITTED:
                    queue.remove(message)
                elif message.state is MessageState.GOT_UNCOMMITTED:
                    queue.make_available(message)
                else:
                    continue
                self.report.messages_reconciled += 1
                yield from self.cpu(qm.config.reconcile_message_us)
        yield from self.cpu_flush()


def recreate_queue(qm, name: str, start: int) -> Generator:
    """Re-create queue ``name`` from the log (``rcrmqobj``, or restart's automatic media
    recovery): its media image – or its creation record – at ``start``, then every later
    record that touches it, to the end of the log. Units of work still open in ``qm`` keep
    their uncommitted messages; uncommitted state of any other unit of work is put back as
    it was (its records never reached the disk, or restart already backed it out).

    The damaged file is replaced by a new one, written before this returns. Raises
    LogCorruptionError naming the file and address when the log no longer holds what is
    needed (an extent deleted or archived away: MQ's AMQ6767)."""
    from mqlog.core.objects.media import decode_image

    r = Recovery(qm, LogControl(start, start, 0))
    r.only, r.queues = name, {}
    storage, addressing = qm.storage, qm.platform.addressing
    reader = LogReader(qm.platform.space, start, format_address=addressing.format,
                       record_types=qm.platform.record_types)
    pieces: list[bytes] = []
    pending: list = []  # records after the replay point, read before the image was complete
    ready = False
    records = 0
    for address, record in reader:
        records += 1
        yield from r.sequential_reads(reader.pages_read)
        yield from r.cpu(qm.config.replay_record_us)
        if not ready:
            if address == start and isinstance(record, ObjectChange) and record.name == name \
                    and record.action is ObjectAction.CREATE:
                ready = True  # never imaged: it starts empty, as created
                _queue_from_image(r, name, record.attributes, [])
                continue
            elif (piece := record.image_piece()) is not None and piece.queue == name and piece.image_id == start:
                if piece.segment != len(pieces):
                    raise LogCorruptionError(f"media image of {name} is missing segment {len(pieces)}",
                                             address=addressing.format(address))
                pieces.append(piece.data)
                if len(pieces) == piece.segments:
                    ready = True
                    attributes, messages = decode_image(b"".join(pieces), source=f"media image of {name}")
                    _queue_from_image(r, name, attributes, messages)
                    for a, rec in pending:
                        yield from r.redo(a, rec)
                    pending = []
                continue
            else:
                pending.append((address, record))
                continue
        yield from r.redo(address, record)
    yield from r.sequential_reads(reader.pages_read, final=True)
    yield from r.cpu_flush()
    end = reader.end
    if not ready or end.address < qm.writer.durable:
        # Nothing is replaced: the old file (if any) stays as it was.
        what = "the media image of" if not ready else "all the log after the media image of"
        raise LogCorruptionError(f"the log does not hold {what} {name} that media recovery needs: it ends at "
                                 f"{addressing.format(end.address)}, before {addressing.format(qm.writer.durable)} "
                                 f"({end.problem or end.reason}; an extent deleted or archived away?)",
                                 source=end.source, offset=end.offset, address=addressing.format(start))
    queue = r.queues.get(name)
    file_name = file_name_for(name)
    if queue is None:
        if storage.exists(file_name):
            storage.delete(file_name)
        return None  # deleted after its image: nothing to re-create
    # Units of work the queue manager no longer has ended without a record in the log.
    r.table = {u: None for u in r.by_uow if u in qm.uows}
    yield from r.reconcile()
    yield qm.writer.force()
    # The new file is built aside and put in place in one atomic step: a crash part way
    # must not leave a valid-looking file with only some of the messages (the next
    # restart would believe it), only the damaged one or the whole new one.
    yield from qm.device.file_op()
    scratch = MemoryStorage()
    queue.file = QueueFile.create(scratch, name, queue.attributes)
    cost = queue.flush(qm.writer.durable, qm._outcome)
    storage.replace(file_name, scratch.read(file_name, 0, scratch.size(file_name)))
    queue.file, _ = QueueFile.open(storage, name)
    yield from qm._charge(cost)
    queue.media_address = start
    qm.queues[name] = queue
    qm.damaged.pop(name, None)
    qm.counters.queues_recreated += 1
    qm.say("object-recreated", queue=name, records=records, address=start)
    return queue


def _queue_from_image(r: Recovery, name: str, attributes: str, messages) -> None:
    """The queue as its image shows it, in memory only: its new file is written once the
    whole log after the image has been read."""
    qm = r.qm
    queue = Queue(name, None, max_depth=_max_depth(attributes, qm.config.max_depth), attributes=attributes)
    for m in messages:
        queue.add(Message(m.msg_id, m.put_address, True, len(m.data), m.data, m.state, m.uow, m.put_address))
        if m.uow:
            r.index(m.uow, name, m.msg_id)
    r.queues[name] = queue


def _max_depth(attributes: str, default: int) -> int:
    start = attributes.find("MAXDEPTH(")
    if start < 0:
        return default
    end = attributes.find(")", start)
    try:
        return int(attributes[start + 9:end])
    except ValueError:
        return default


def restart(qm, control: LogControl) -> Generator:
    """Run restart recovery on ``qm`` (a SimPy generator); returns the RecoveryReport."""
    report = yield from Recovery(qm, control).run()
    qm.recovery = report
    return report
