"""The forward pass of restart: reading the queue files (their metadata, not their message
data) and redoing the log from the checkpoint onto the queues ("repeating history"), while
the table of units of work is rebuilt – the checkpoint's table, plus those that begin later,
less those whose commit or backout is found. Redo is idempotent per message, because a queue
file may already be newer than the checkpoint (a later flush whose checkpoint never
completed). :class:`Redo` is a part of :class:`~mqlog.core.recovery.state.Recovery`, whose
state it works on.

Loading is lazy, as IBM describes it: replay comes first; then recovery loads only the queues
that units of work still open at the crash touched (in parallel from 9.1.1, one by one
before it); every other queue is loaded on its first use after restart ("When queues need to
be loaded as part of the restart processing, they are now done so in parallel",
developer.ibm.com/messaging/2019/03/12/queue-manager-restart-times-in-v9-1-1/; a queue not
referenced is loaded – its index rebuilt, AMQ7234 every 10,000 messages – when it is next
referenced, and callers wait for that, www.ibm.com/support/pages/large-messages-depths-your-
websphere-mq-queues-could-cause-performance-issues). The model still reads every queue file
into memory before replay, at no virtual cost (:meth:`Redo.open_queues`), because redo needs
each queue's contents to be idempotent and a damaged file must be known before replay; what
MQ pays to load a queue (a file-system call, its metadata reads, ``load_message_us`` a
message) is kept as owed and charged where MQ does the work: in recovery for the queues it
needs (:meth:`Redo.load_queues`), or by the first MQPUT or MQGET on the queue after restart
(``Queue.unloaded``, :meth:`mqlog.core.qm.manager.QueueManager._load_unloaded`). So a deep
queue no open unit of work touched adds nothing to restart time. (9.1.1 also loads such
queues in the background after start-up; the model leaves that to the first call, as
before 9.1.1: the first call on such a queue waits for its whole load.)
"""

from __future__ import annotations

from typing import Generator

import simpy

from mqlog.core.errors import LogCorruptionError, QueueFileError
from mqlog.core.format.records import (NO_ADDRESS, Backout, Begin, CheckpointEnd, Clr, ClrAction, Codec, Commit, Get,
                                       ObjectAction, ObjectChange, Prepare, Put, PutSegment, UowState)
from mqlog.core.objects.queuefile import MessageState, QueueFile, file_name_for, list_queue_files
from mqlog.core.objects.queues import Message, Queue
from mqlog.core.objects.uow import MEMBER_SHIFT
from mqlog.core.recovery.outcome import RebuiltUow

#: (redo_put: its caller has not looked the queue up)
_LOOK_UP = object()
#: the states as module constants (redo looks at one or two per record: an enum member
#: looked up on its class costs more than the rest of such a line)
_COMMITTED, _PUT_UNCOMMITTED = MessageState.COMMITTED, MessageState.PUT_UNCOMMITTED


def max_depth_of(attributes: str, default: int) -> int:
    """The MAXDEPTH a queue's attribute string gives, else ``default``."""
    start = attributes.find("MAXDEPTH(")
    if start < 0:
        return default
    end = attributes.find(")", start)
    try:
        return int(attributes[start + 9:end])
    except ValueError:
        return default


class Redo:
    """Loading and redo: the queues and the table of units of work, rebuilt forward. A
    segmented message whose first records precede the replay point is completed by reading
    its chain back (:meth:`segments_before`, through :meth:`~mqlog.core.recovery.undo.Undo.read_at`)."""

    # -- 1. load -----------------------------------------------------------------------------

    def open_queues(self) -> None:
        """Read every queue file into memory, charging nothing yet (see the module's
        docstring): each one's load is owed until recovery or a first use pays it."""
        for name in list_queue_files(self.qm.storage):
            self.open_queue(name)
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

    def open_queue(self, name: str) -> None:
        qm = self.qm
        try:
            qfile, cost = QueueFile.open(qm.storage, name)
        except QueueFileError as exc:
            # Damaged: restart goes on without it; media recovery may re-create it below.
            self.damaged[name] = str(exc)
            return
        queue = Queue(name, qfile, max_depth=max_depth_of(qfile.attributes, qm.config.max_depth),
                      attributes=qfile.attributes)
        high = max((m.put_address for m in qfile.messages.values() if m.put_address != NO_ADDRESS), default=None)
        if high is not None:
            self.file_high[name] = high
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
        self.queues[name] = queue
        self.owed[name] = (cost, len(qfile.messages))

    def load_queues(self, names) -> Generator:
        """Load the queues ``names`` whose load is still owed: in parallel (9.1.1) or one
        after another (legacy)."""
        names = [n for n in sorted(names) if n in self.owed and n in self.queues]
        if self.legacy:
            for name in names:
                yield from self.load_queue(name)
        elif names:
            yield simpy.AllOf(self.env, [self.env.process(self.load_queue(name)) for name in names])

    def restart_cpu(self, us: float) -> Generator:
        """Charge ``us`` of restart's own CPU to the host's cores and count in the report what
        the core ran (the host's jitter included)."""
        cpu = self.qm.cpu
        before = cpu.by_kind["restart"]
        yield from cpu.charge(us, "restart")
        self.report.cpu_us += cpu.by_kind["restart"] - before

    def load_queue(self, name: str) -> Generator:
        """Pay one queue's owed load: a file-system call to open it, its metadata reads, and
        the CPU of its messages' index entries (each load its own thread: parallel loads take
        a core each)."""
        owed = self.owed.pop(name, None)
        if owed is None:
            return
        cost, messages = owed
        qm = self.qm
        yield from qm.device.file_op("open")
        yield from qm.charge_io(cost)
        us = messages * qm.cpu.profile.load_message_us
        yield from self.restart_cpu(us)
        self.report.bytes_read += sum(cost.reads)
        self.report.messages_loaded += messages
        self.report.queues_loaded += 1

    def defer_loads(self) -> None:
        """The queues still owed a load are left to their first use after restart."""
        for name in sorted(self.owed):
            queue = self.queues.get(name)
            if queue is not None and queue.file is not None:
                queue.unloaded = self.owed[name]
                self.report.queues_deferred += 1
        self.owed = {}

    def index(self, uow: int, queue: str, msg_id: bytes) -> None:
        members = self.by_uow.get(uow)
        if members is None:
            self.by_uow[uow] = [(queue, msg_id)]
        else:
            members.append((queue, msg_id))
        if uow > self.max_uow:
            self.max_uow = uow

    # -- 2. redo -----------------------------------------------------------------------------

    def track(self, uow: int, address: int) -> RebuiltUow | None:
        if not uow:
            return None
        if uow > self.max_uow:
            self.max_uow = uow
        entry = self.table.get(uow)
        if entry is None:
            if uow in self.ended:
                return None
            entry = self.table[uow] = RebuiltUow(address, address)
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
            return None
        expand_us = self.redo_put(address, record, record.data, queue)
        return self.expand(expand_us) if expand_us else None

    def _redo_segment(self, address: int, record: PutSegment) -> Generator | None:
        queue = self.queues.get(record.queue)
        if queue is not None and queue.keeper is not None and not self.rebuilding:
            self.track(record.uow, address)
            return None
        self.track(record.uow, address)
        pending = self.segments.get(record.msg_id)
        if pending is None:
            return self._redo_segment_after_gap(record)
        expand_us = self._add_segment(pending, record)
        return self.expand(expand_us) if expand_us else None

    def _redo_segment_after_gap(self, record: PutSegment) -> Generator:
        # Replay began between the message's put record and this segment (a checkpoint
        # fell among its records): fetch the earlier ones by their chain.
        pending = yield from self.segments_before(record)
        if pending is not None:
            self.segments[record.msg_id] = pending
            expand_us = self._add_segment(pending, record)
            if expand_us:
                yield from self.expand(expand_us)

    def _add_segment(self, pending: list, record: PutSegment) -> float:
        """Add a segment's data; with the last one, redo the put (the CPU of expanding it)."""
        pending[1].append(record.data)
        if len(pending[1]) == pending[0].segments:
            del self.segments[record.msg_id]
            return self.redo_put(pending[2], pending[0], b"".join(pending[1]))
        return 0.0

    def _redo_get(self, address: int, record: Get) -> None:
        queue = self.queues.get(record.queue)
        if queue is not None and queue.keeper is not None and not self.rebuilding:
            self.track(record.uow, address)
            return None
        self.track(record.uow, address)
        if queue is not None and queue.apply_get(record.msg_id, record.uow, address):
            self.index(record.uow, queue.name, record.msg_id)
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
        if record.begin < self.replay_from:
            # Replay began between this checkpoint's Begin and End (at the oldest change the
            # queue files lacked): its table of units is as at its Begin, and a unit listed
            # may have ended before replay began. The next checkpoint's table, and the
            # records from here on, say which units are open.
            return None
        for row in record.uows:
            if row.uow in self.ended:
                continue
            entry = self.table.get(row.uow)
            if entry is None:
                entry = self.table[row.uow] = RebuiltUow(row.first, row.last, begin_us=row.begin_time_us)
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

    def redo_put(self, address: int, record: Put, stored: bytes, queue=_LOOK_UP) -> float:
        """Put the message back on its queue; returns the CPU (µs) of expanding its data
        (0.0 when it was stored as it was), for the caller to charge to restart's time."""
        if queue is _LOOK_UP:
            queue = self.queues.get(record.queue)
        if queue is None or record.msg_id in queue.messages:
            return 0.0  # the queue file already has it (it is newer than the checkpoint)
        data = stored
        expand_us = 0.0
        if record.codec is not Codec.NONE:
            data = self.platform.codec.decode(record.codec, stored)
            if len(data) != record.message_length:
                raise LogCorruptionError(f"compressed message data of {record.queue} expands to {len(data)} bytes, "
                                         f"the put record says {record.message_length}",
                                         address=self.platform.addressing.format(address))
            # Expanding costs the host's CPU per byte expanded to, by algorithm; the caller
            # charges it to the host's cores as restart's (kind "expand").
            expand_us = self.qm.cpu.profile.expand_us(Codec(record.codec).name.lower(), len(data))
            self.report.cpu_expand_us += expand_us
        state = _PUT_UNCOMMITTED if record.uow else _COMMITTED
        # Arrival order: the put's address – but when rebuilding, records come from several
        # queue managers' logs, whose addresses overlap: there they are numbered in merged order.
        seq = address
        if self.rebuilding:
            self.next_seq += 1
            seq = self.next_seq
        queue.put(record.msg_id, seq, True, record.message_length, data, state, record.uow, address)
        if record.uow:
            self.index(record.uow, queue.name, record.msg_id)
        return expand_us

    def finish(self, uow: int, commit: bool) -> None:
        self.table.pop(uow, None)
        self.ended.add(uow)
        members = self.by_uow.pop(uow, None)
        if not members:
            return
        queues = self.queues
        for name, msg_id in members:
            queue = queues.get(name)
            if queue is not None:
                queue.settle(msg_id, commit, uow)

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
                yield from qm.device.file_op("create")
                qfile = QueueFile.create(qm.storage, name, record.attributes)
            self.queues[name] = Queue(name, qfile, max_depth=max_depth_of(record.attributes, qm.config.max_depth),
                                      attributes=record.attributes)
        elif record.action is ObjectAction.DELETE and (name in self.queues or name in self.damaged):
            yield from qm.device.file_op("unlink")
            self.media.pop(name, None)
            self.owed.pop(name, None)  # gone: nothing to load
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
            queue.max_depth = max_depth_of(record.attributes, queue.max_depth)
            if queue.file is not None:
                queue.file.alter(record.attributes)
