"""The queue manager: MQI calls, units of work, checkpoints and log-space pressure.

Applications are SimPy processes. They connect, then drive the MQI through generator
methods (``msg_id = yield from conn.put(...)``), so that a call that must wait – for a
forced log write, for buffer space, for a message – takes virtual time. What is logged and
when it is forced follows SPEC §3:

* non-persistent messages are never logged, not even inside a unit of work that also holds
  persistent ones, and a unit of work of only non-persistent work logs nothing;
* a persistent MQPUT/MQGET outside syncpoint logs its record and forces at once; inside
  syncpoint nothing is forced until MQCMIT/MQBACK, which force once for the whole unit;
* a persistent MQPUT outside syncpoint to a getter already waiting outside syncpoint passes
  the message straight across with no log write where the platform allows it;
* committed changes become visible to other applications only once the commit record is on
  disk; backout during normal running undoes from memory and never reads the log.

Restart recovery lives in :mod:`mqlog.core.recovery.restart`; this module owns normal running.
"""

from __future__ import annotations

from typing import Callable, Generator

import attrs
import simpy
from sortedcontainers import SortedList

from mqlog.core.disk.devices import Device
from mqlog.core.errors import LogFileMissingError, LogWriteError, ParameterError
from mqlog.core.platform import LogControl, Platform, UowView
from mqlog.core.objects.queuefile import IoCost, MessageState, QueueFile, file_name_for, list_queue_files
from mqlog.core.objects.queues import Message, Queue
from mqlog.core.format.records import (HEADER_SIZE, NO_ADDRESS, Backout, Begin, CheckpointBegin, CheckpointEnd, Clr, Codec,
                                Commit, Get, ObjectAction, ObjectChange, ObjectType, Prepare, Put, PutSegment, QueueEntry,
                                UndoneOp, UowEntry, UowState as RecUowState, split_message)
from mqlog.core.disk.storage import Storage
from mqlog.core.objects.queues import DamagedQueue
from mqlog.core.recovery.restart import restart
from mqlog.core.qm.services import QmServices
from mqlog.core.objects.uow import MEMBER_SHIFT, MqiError, Op, Reason, UnitOfWork, UowState
from mqlog.core.log.writer import LogWriter

#: sample the log in use about this often (virtual µs), keeping at most LOG_SAMPLES_MAX samples
LOG_SAMPLE_US = 2000.0
LOG_SAMPLES_MAX = 500
#: check log-space usage every this many appended records (cheap, but not free)
SPACE_CHECK_INTERVAL = 32
#: log space always kept for what must not fail when the log is full (commit, backout,
#: compensation, checkpoints): a fixed part for page padding of the forces involved …
RESERVE_FIXED_BYTES = 8 * 4096
#: checkpoints a caller waits through for log space (z/OS, CSQJ111A) before the queue
#: manager gives up: none freed enough, so none will
FUTILE_WAITS_MAX = 1000
#: … plus, per unit of work still open, what backing it out may log: at restart that is a
#: compensation record per operation and a Backout record, and the force that ends it may
#: close a page short (the pad policy wastes at most a quarter page)
RESERVE_PER_UOW = 1000 + 1024
RESERVE_PER_OP = 12 + Clr._S.size + HEADER_SIZE + 8

#: how restart runs (SPEC §3.6): as MQ 9.1.1 and later, or as before it ("legacy")
RESTART_MODES = ("9.1.1", "legacy")
DEFAULT_RESTART_MODE = "9.1.1"


def _bounded(name: str, low: int, high: int):
    def check(instance, attribute, value):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
            raise ParameterError(f"qmgr.{name}", value, f"{low} to {high}")
    return check


@attrs.frozen
class QmConfig:
    """Queue-manager settings the core uses (platform log parameters live with the platform)."""

    name: str = "QM1"
    #: MAXUMSGS: operations one unit of work may hold
    max_uow_messages: int = attrs.field(default=10_000, validator=_bounded("max_uow_messages", 1, 999_999_999))
    #: MAXDEPTH given to queues defined without one
    max_depth: int = attrs.field(default=5000, validator=_bounded("max_depth", 0, 999_999_999))
    #: persistent bytes a queue keeps in memory before spilling to its file (128 KiB, doubled on 64-bit)
    persistent_buffer_bytes: int = attrs.field(default=256 * 1024,
                                               validator=_bounded("persistent_buffer_bytes", 0, 1 << 30))
    #: "9.1.1": queues loaded in parallel, replay reads the log in large chunks;
    #: "legacy": queues loaded one at a time, replay reads page by page with a file-system call each
    restart_mode: str = attrs.field(default=DEFAULT_RESTART_MODE, validator=attrs.validators.in_(RESTART_MODES))
    #: virtual CPU per record replayed, per message reconciled, per message's metadata loaded
    replay_record_us: float = attrs.field(default=2.0, validator=_bounded("replay_record_us", 0, 1e6))
    reconcile_message_us: float = attrs.field(default=5.0, validator=_bounded("reconcile_message_us", 0, 1e6))
    load_message_us: float = attrs.field(default=0.5, validator=_bounded("load_message_us", 0, 1e6))
    #: virtual CPU of one MQI call's own path (MQPUT/MQGET/MQCMIT…), before any log wait:
    #: calls are never free, so even work that logs nothing moves the clock
    mqi_call_us: float = attrs.field(default=5.0, validator=_bounded("mqi_call_us", 0, 1e6))
    #: this queue manager's number among those sharing kept queues: unit-of-work ids carry
    #: it, so the units of all of them can meet on a shared queue without clashing
    member: int = attrs.field(default=0, validator=_bounded("member", 0, 31))


@attrs.frozen
class GotMessage:
    """What MQGET hands the application."""

    msg_id: bytes
    data: bytes
    persistent: bool


@attrs.define
class QmCounters:
    """Queue-manager level figures for the metrics schema."""

    messages_put: int = 0
    messages_got: int = 0
    commits: int = 0
    backouts: int = 0
    checkpoints: int = 0
    uows_rolled_back: int = 0
    uows_rolled_forward: int = 0
    log_full_events: int = 0  # times the log-space policy had to release space
    log_full_refusals: int = 0  # MQI calls refused with 2102 because the log was full
    shunted_bytes: int = 0
    shunts_failed: int = 0  # rounds that could not be written (log or buffer space)
    media_images: int = 0
    media_image_bytes: int = 0
    queues_recreated: int = 0
    shunts: int = 0
    compression_in_bytes: int = 0
    compression_out_bytes: int = 0
    direct_handoffs: int = 0  # persistent puts passed to a waiting getter without logging
    spills: int = 0
    queue_file_bytes_written: int = 0
    queue_file_bytes_read: int = 0


class Connection:
    """One application's connection (an HCONN): its current unit of work and its MQI calls."""

    def __init__(self, qm: "QueueManager", application: str):
        self.qm = qm
        self.application = application
        self.uow: UnitOfWork | None = None
        self._in_call: UnitOfWork | None = None  # the unit this call marked busy (no shunting)

    # Every call is a generator: ``result = yield from conn.put(...)``.

    def put(self, queue: str, data: bytes, *, persistent: bool = True, syncpoint: bool = True):
        return (yield from self._call(self.qm._put(self, queue, data, persistent, syncpoint)))

    def get(self, queue: str, *, syncpoint: bool = True, wait_us: float = 0.0):
        return (yield from self._call(self.qm._get(self, queue, syncpoint, wait_us)))

    def commit(self):
        return (yield from self._call(self.qm._commit(self)))

    def backout(self):
        return (yield from self._call(self.qm._backout(self)))

    def prepare(self, xid: bytes = b""):
        """Phase one of two-phase commit; afterwards only the coordinator's commit/backout."""
        return (yield from self._call(self.qm._prepare(self, xid)))

    def _call(self, call):
        cost = self.qm.config.mqi_call_us
        if cost:
            yield self.qm.env.timeout(cost)
        try:
            return (yield from call)
        except MqiError as exc:
            # MQRC_BACKED_OUT ends the unit of work: the application's next call starts afresh.
            if exc.reason is Reason.MQRC_BACKED_OUT and self.uow is not None and self.uow.doomed:
                self.uow = None
            raise
        finally:
            if self._in_call is not None:
                self._in_call.in_call -= 1
                self._in_call = None


def refuse_queue_files_without_log(storage: Storage) -> None:
    """Queue files are made only after a queue manager's first checkpoint is on disk: with
    no checkpoint in the log's control data they mean the log or its control data is lost,
    never a new queue manager. Raises LogFileMissingError naming one of them."""
    names = list_queue_files(storage)
    if names:
        raise LogFileMissingError(
            f"the log's control data names no checkpoint, but {len(names)} queue file(s) are there "
            f"({', '.join(file_name_for(n) for n in names[:3])}{' …' if len(names) > 3 else ''}): this queue "
            f"manager has run, and its log or control data is lost", source=file_name_for(names[0]))


class QueueManager:
    """The core queue manager over one platform's log."""

    def __init__(self, env: simpy.Environment, platform: Platform, storage: Storage, device: Device,
                 config: QmConfig = QmConfig()):
        self.env = env
        self.platform = platform
        self.storage = storage
        self.device = device
        self.config = config
        self.queues: dict[str, Queue] = {}
        self.damaged: dict[str, DamagedQueue] = {}
        self.uows: dict[int, UnitOfWork] = {}
        self.counters = QmCounters()
        self.messages: list[str] = []  # console / error-log lines in the platform's style
        self.writer: LogWriter | None = None
        self.recovery = None  # the RecoveryReport of the last restart
        #: what this queue manager offers platforms (QueueManagerServices)
        self.services = QmServices(self)
        self._uow_ages = SortedList()  # (first address, uow id) of logged, unfinished UOWs
        self._next_uow = 1
        self._msg_counter = 0
        self._incarnation = 0
        self._checkpointing = False
        self._checkpoint_finished: simpy.Event | None = None
        self._timer = None
        self._checkpoint_number = 0
        self._checkpoint_address = NO_ADDRESS
        self._records_since = 0
        self._last_checkpoint_us = 0.0
        self._appends = 0
        self._relieving = False
        self._log_full = False  # inside a log-full episode (AMQ7463 said once per episode)
        self._claimed = 0  # log bytes a roll forward in progress has claimed from the free space
        self._no_room_said: set[int] = set()  # prepared units too big to roll forward (said once)
        self._imaging = False  # automatic media images in progress
        self._switches_seen = 0  # the space's log switches already acted on
        self._space_freed: simpy.Event | None = None  # full-log waiters (z/OS), woken by a checkpoint
        self._imaging_queues: set[str] = set()  # queues whose image is being written
        self._defining: dict[str, int] = {}  # queues whose CREATE is logged, file not yet made
        #: log addresses from which an MQI call in progress may have logged records whose
        #: effect is not yet in memory (a media image's replay point must not pass them)
        self._inflight = SortedList()
        self._extents_said: tuple = ()  # the restart / media extents last reported
        self.stopped = False
        #: called with the number of records replayed so far, as restart's replay goes on
        #: (a progress bar: ``mqlog restart``); None: nobody is watching
        self.restart_progress: Callable[[int], None] | None = None
        #: the most log, head to tail, that restart would have needed at any moment sampled
        self.log_used_max = 0
        #: (virtual µs, bytes from tail to head) every LOG_SAMPLE_US or so, for the reports
        self.log_used_series: list[tuple[float, int]] = []

    # -- starting and stopping ---------------------------------------------------------------

    def start(self) -> Generator:
        """Start the queue manager: create a new log, or restart from an existing one.

        Returns the recovery report after a restart, None for a new queue manager."""
        control = self.platform.space.load_control()
        if control is None:
            refuse_queue_files_without_log(self.storage)
            self.writer = self._new_writer()
            yield from self.checkpoint("start")
            self._begin_incarnation()
            return None

        report = yield from restart(self, control)
        self._begin_incarnation()
        return report

    def _begin_incarnation(self) -> None:
        # Each start or restart ends with a checkpoint whose number no earlier incarnation
        # reached: message ids and UOW ids carry it, so they never repeat across restarts.
        self._incarnation = self._checkpoint_number
        self._next_uow = max(self._next_uow, (self.config.member << MEMBER_SHIFT) | (self._incarnation << 32) + 1)
        self._msg_counter = 0

    def _checkpoint_timer(self, interval: float) -> Generator:
        """Ask the policy at the next multiple of ``interval`` after the last checkpoint, so
        that work followed by quiet still gets its checkpoint on time. Armed by a logged
        record, at most one at a time, and not re-armed by itself: an idle queue manager
        schedules nothing (which lets a simulation end)."""
        since = self.env.now - self._last_checkpoint_us
        wait = interval - since % interval if since >= 0 else interval
        yield self.env.timeout(wait)
        self._timer = None
        self._maybe_checkpoint("time")

    def _arm_timer(self) -> None:
        interval = self.platform.checkpoint_policy.interval_us
        if interval and self._timer is None and not self.stopped:
            self._timer = self.env.process(self._checkpoint_timer(interval))

    def log_switched(self) -> None:
        """The platform's log moved to its next file or data set (a checkpoint may be due)."""
        self._maybe_checkpoint("log switch", switched=True)

    def _maybe_checkpoint(self, reason: str, switched: bool = False, force: bool = False) -> None:
        if self.stopped or self._checkpointing or self.writer is None:
            return
        if self._log_full and self._tail_held_by_uow():
            return  # it could free nothing, and would eat the reserve commit and backout need
        if force or self.platform.checkpoint_policy.due(self._records_since, self.env.now - self._last_checkpoint_us,
                                                        switched):
            self.env.process(self.checkpoint(reason))

    def _new_writer(self, reader=None) -> LogWriter:
        p = self.platform
        kwargs = dict(buffer_pages=p.buffer_pages, write_threshold_pages=p.write_threshold_pages,
                      addressing=p.addressing, pad_policy=p.pad_policy)
        if reader is not None:
            return LogWriter.resume(self.env, p.space, self.device, reader, **kwargs)
        return LogWriter(self.env, p.space, self.device, **kwargs)

    def shutdown(self) -> Generator:
        """A controlled shutdown (endmqm): a final checkpoint, then nothing more is accepted.
        Where the platform takes media images, empty queues are imaged first (as MQ does at
        every shutdown): cheap, and their media recovery records move up to now."""
        if self.platform.media is not None:
            from mqlog.core.objects.media import MediaRecoveryError, record_image

            for name in sorted(self.queues):
                queue = self.queues[name]
                if not queue.messages and queue.media_address != NO_ADDRESS:
                    try:
                        yield from record_image(self, name, checkpoint=False)
                    except (MqiError, MediaRecoveryError):
                        break  # the log is full (or an image is being taken): they can wait
        yield from self.checkpoint("shutdown", wait=True)
        self.stopped = True

    def connect(self, application: str) -> Connection:
        return Connection(self, application)

    def say(self, event: str, **fields) -> None:
        text = self.platform.message(event, **fields)
        if text is not None:
            self.messages.append(text)

    # -- objects -----------------------------------------------------------------------------

    def define_queue(self, name: str, *, max_depth: int | None = None, attributes: str = "") -> Generator:
        """DEFINE QLOCAL: logged (1500 bytes) and forced; the queue file is created."""
        if name in self.queues or name in self.damaged:
            raise MqiError(Reason.MQRC_OBJECT_ALREADY_EXISTS, name)
        depth = self.config.max_depth if max_depth is None else max_depth
        text = f"MAXDEPTH({depth}) {attributes}".strip()
        address = yield from self._log(ObjectChange(ObjectAction.CREATE, ObjectType.QUEUE, name, text))
        # The creation record holds all it takes to re-create the queue: its first media
        # image. A checkpoint from now on must list the queue with it, even before the file
        # exists: restart would not see the record again (a missing file is then re-created).
        self._defining[name] = address
        try:
            yield self.writer.force()
            yield from self.device.file_op()
            queue = Queue(name, QueueFile.create(self.storage, name, text), max_depth=depth, attributes=text)
        finally:
            del self._defining[name]
        queue.media_address, queue.media_us = address, self.env.now
        self.queues[name] = queue

    def alter_queue(self, name: str, *, max_depth: int) -> Generator:
        queue = self._queue(name)
        text = f"MAXDEPTH({max_depth})"
        mark = self._hold()  # logged before it takes effect: a media image must replay it
        try:
            yield from self._log(ObjectChange(ObjectAction.ALTER, ObjectType.QUEUE, name, text))
            yield self.writer.force()
            queue.max_depth = max_depth
            queue.attributes = text
            queue.file.alter(text)
        finally:
            self._inflight.remove(mark)

    def delete_queue(self, name: str) -> Generator:
        if name in self.damaged:  # a damaged queue may be deleted (its messages are lost)
            yield from self._log(ObjectChange(ObjectAction.DELETE, ObjectType.QUEUE, name))
            yield self.writer.force()
            self.damaged.pop(name, None)
            yield from self.device.file_op()
            from mqlog.core.objects.queuefile import file_name_for
            if self.storage.exists(file_name_for(name)):
                self.storage.delete(file_name_for(name))
            return
        queue = self._queue(name)
        if queue.messages:
            raise MqiError(Reason.MQRC_OBJECT_IN_USE, f"{name} holds {queue.depth} messages")
        # Gone for applications at once: nothing may be put while the delete is logged.
        del self.queues[name]
        try:
            yield from self._log(ObjectChange(ObjectAction.DELETE, ObjectType.QUEUE, name))
            yield self.writer.force()
        except MqiError:
            self.queues[name] = queue
            raise
        yield from self.device.file_op()
        queue.file.delete()

    def _queue(self, name: str) -> Queue:
        queue = self.queues.get(name)
        if queue is not None and queue.keeper is not None:
            queue.keeper.check(name, False)
        if queue is None:
            if name in self.damaged:
                raise MqiError(Reason.MQRC_OBJECT_DAMAGED, f"{name}: {self.damaged[name].reason}")
            raise MqiError(Reason.MQRC_UNKNOWN_OBJECT_NAME, name)
        return queue

    def media_address(self) -> int:
        """The oldest media recovery record of any queue (NO_ADDRESS if none): media
        recovery needs the log from there on."""
        found = [q.media_address for q in self.queues.values()] + [d.media for d in self.damaged.values()]
        found = [a for a in found if a != NO_ADDRESS]
        return min(found) if found else NO_ADDRESS

    # -- logging -----------------------------------------------------------------------------

    def _log(self, record, *, essential: bool = False, need: int = 0) -> Generator:
        """Append one record (waiting for buffer space if need be); start a checkpoint when
        the platform's policy says so, and watch log space.

        When the log is full, work that is not ``essential`` is refused with
        MQRC_RESOURCE_PROBLEM (AMQ7463); commit, backout, compensation, checkpoints and the
        re-logging of prepared units of work are essential and use the space held in
        reserve for them. ``need``: bytes the caller is about to log with this record
        (a whole segmented message), checked at once."""
        if self.stopped:
            raise MqiError(Reason.MQRC_Q_MGR_STOPPING)
        claimed = 0
        if not essential:
            # An upper bound (no record body is over 1500 bytes besides its data), so that
            # the record need not be encoded twice. Claimed until appended: callers waiting
            # for buffer space must not all pass against the same free space.
            claimed = need or len(record.data) + 1500
            yield from self._claim_waiting(claimed)
        try:
            address = yield from self.writer.put(record)
        finally:
            self._claimed -= claimed
        self._records_since += 1
        self._appends += 1
        switches = self.platform.space.switches
        if switches != self._switches_seen:
            self._switches_seen = switches
            self._drain_space_events()
            self._report_long_uows()
            self.log_switched()
        self._maybe_checkpoint("records")
        if self._timer is None:
            self._arm_timer()
        if self._appends % SPACE_CHECK_INTERVAL == 0:
            used = self.writer.next_address - self.tail()
            if used > self.log_used_max:
                self.log_used_max = used
            series = self.log_used_series
            if not series or self.env.now - series[-1][0] >= LOG_SAMPLE_US:
                series.append((self.env.now, used))
                if len(series) > LOG_SAMPLES_MAX:
                    del series[1::2]  # keep it bounded: every other sample goes
            if self.platform.space_policy is not None:
                self._check_space()
        return address

    def _log_uow(self, uow: UnitOfWork, record_for, *, ending: bool = False, essential: bool = False,
                 need: int = 0) -> Generator:
        """Append a record of ``uow``, chained to its previous one; a Begin first if needed."""
        if uow.doomed and not ending:
            raise MqiError(Reason.MQRC_BACKED_OUT, "the queue manager backed the unit of work out to free log space")
        if not uow.logged:
            begin = yield from self._log(Begin(int(self.env.now), uow.application[:28], uow=uow.id))
            uow.first = uow.last = begin
            self._uow_ages.add((begin, uow.id))
        address = yield from self._log(record_for(uow.last), essential=essential or ending, need=need)
        if uow.doomed and not ending:
            # Backed out by the queue manager while this call waited for buffer space: the
            # record is in the log, but restart will see it belongs to an ended unit of work.
            raise MqiError(Reason.MQRC_BACKED_OUT, "the queue manager backed the unit of work out to free log space")
        uow.last = address
        return address

    def tail(self) -> int:
        """The oldest log address restart may need: the last checkpoint, or the first record
        of the oldest unit of work still open, whichever is older."""
        tail = self._checkpoint_address
        if self._uow_ages:
            tail = min(tail, self._uow_ages[0][0])
        return tail

    def _end_uow(self, uow: UnitOfWork) -> None:
        if uow.logged:
            self._uow_ages.discard((uow.first, uow.id))
        uow.state = UowState.ENDED
        self.uows.pop(uow.id, None)

    # -- MQPUT -------------------------------------------------------------------------------

    def _new_msg_id(self) -> bytes:
        self._msg_counter += 1
        return (b"AMQ " + self.config.name[:8].encode("ascii").ljust(8)
                + self._incarnation.to_bytes(4, "big") + self._msg_counter.to_bytes(8, "big"))

    def _uow_for(self, conn: Connection, *, adding: bool = True) -> UnitOfWork:
        uow = conn.uow
        if uow is None:
            uow = UnitOfWork(self._next_uow, conn.application, self.env.now)
            self._next_uow += 1
            self.uows[uow.id] = uow
            conn.uow = uow
        elif uow.doomed:
            raise MqiError(Reason.MQRC_BACKED_OUT, "the queue manager backed the unit of work out to free log space")
        elif uow.state is UowState.PREPARED:
            raise MqiError(Reason.MQRC_UOW_IN_DOUBT, "the unit of work is prepared")
        if adding and len(uow.ops) >= self.config.max_uow_messages:
            raise MqiError(Reason.MQRC_SYNCPOINT_LIMIT_REACHED, f"MAXUMSGS is {self.config.max_uow_messages}")
        if conn._in_call is None:  # until the call returns, its records may still be on their way
            uow.in_call += 1
            conn._in_call = uow
        return uow

    def _put(self, conn: Connection, queue_name: str, data: bytes, persistent: bool, syncpoint: bool):
        queue = self._queue(queue_name)
        uow = self._uow_for(conn) if syncpoint else None
        if queue.depth >= queue.max_depth:
            raise MqiError(Reason.MQRC_Q_FULL, f"{queue_name} is at MAXDEPTH {queue.max_depth}")
        msg_id = self._new_msg_id()
        self.counters.messages_put += 1
        if not syncpoint and queue.getters and (not persistent or self.platform.persistent_put_to_waiting_getter):
            for i, (event, getter_syncpoint) in enumerate(queue.getters):
                if not getter_syncpoint:
                    del queue.getters[i]
                    if persistent:
                        self.counters.direct_handoffs += 1
                    event.succeed(GotMessage(msg_id, data, persistent))
                    return msg_id
        message = Message(msg_id, queue.next_seq(), persistent, len(data), data)
        yield from self._held(self._put_message(queue, message, uow, syncpoint, persistent), queue)
        if persistent and queue.unflushed_bytes > self.config.persistent_buffer_bytes:
            yield from self._spill(queue)
        return msg_id

    def _hold(self) -> int:
        mark = self.writer.next_address
        self._inflight.add(mark)
        return mark

    def _held(self, call: Generator, queue: Queue | None = None) -> Generator:
        """Run ``call`` – which logs records before their effect is in memory – holding
        the log address it starts from, so a media image's replay point stays before it."""
        mark = self._hold()
        if queue is not None:
            queue.calls += 1
        try:
            return (yield from call)
        finally:
            if queue is not None:
                queue.calls -= 1
            self._inflight.remove(mark)

    def _put_message(self, queue: Queue, message: Message, uow: UnitOfWork | None, syncpoint: bool,
                     persistent: bool) -> Generator:
        msg_id = message.msg_id
        if persistent:
            address = yield from self._log_put(queue, message, uow)
            message.put_address = address
        if syncpoint:
            message.state = MessageState.PUT_UNCOMMITTED
            message.uow = uow.id
            queue.add(message)
            prev = uow.ops[-1].address if uow.ops else NO_ADDRESS
            uow.ops.append(Op("put", queue.name, msg_id, persistent, message.put_address, prev, message.length))
        else:
            if persistent:
                yield self.writer.force()
            queue.add(message)
            self._wake_getters(queue)

    def _log_put(self, queue: Queue, message: Message, uow: UnitOfWork | None) -> Generator:
        data = message.data
        codec, stored = Codec.NONE, data
        if self.platform.codec is not None and self.platform.codec.active and data:
            codec, stored = self.platform.codec.encode(data)
            self.counters.compression_in_bytes += len(data)
            self.counters.compression_out_bytes += len(stored)
        segments = split_message(stored)
        # Room for the whole message is checked once, before its first record: a message is
        # never left half logged because the log filled between its segments.
        need = len(stored) + 800 + 300 * len(segments)  # SPEC §4.7: 750 + data, +300 a segment
        if len(segments) == 1 and uow is not None:
            # The usual case, built once with its chain pointer (not built and then evolved).
            return (yield from self._log_uow(uow, lambda prev: Put(
                queue.name, message.msg_id, stored, len(data), 0, 1, codec, uow=uow.id, prev=prev), need=need))
        first = Put(queue.name, message.msg_id, segments[0], len(data), 0, len(segments), codec,
                    uow=uow.id if uow else 0)
        if len(segments) == 1:
            return (yield from self._log(first, need=need))
        yield from self._claim_waiting(need)  # held until the last segment is appended
        try:
            if uow is None:
                address = prev = yield from self._log(first, essential=True)
                for i, seg in enumerate(segments[1:], 1):
                    prev = yield from self._log(PutSegment(queue.name, message.msg_id, i, i * len(segments[0]), seg,
                                                           codec, prev=prev), essential=True)
                return address
            address = yield from self._log_uow(uow, lambda prev: attrs.evolve(first, prev=prev), essential=True)
            for i, seg in enumerate(segments[1:], 1):
                yield from self._log_uow(uow, lambda prev, i=i, seg=seg: PutSegment(
                    queue.name, message.msg_id, i, i * len(segments[0]), seg, codec, uow=uow.id, prev=prev),
                    essential=True)
            return address
        finally:
            self._claimed -= need

    def _spill(self, queue: Queue) -> Generator:
        """The queue buffer is full: write the queue's messages to its file (log first)."""
        self.counters.spills += 1
        yield self.writer.force()
        yield from self._charge(queue.flush(self.writer.durable, self._outcome))

    def _outcome(self, uow_id: int, durable: int):
        """How a unit of work ended, if its Commit/Backout record is on disk (True: committed,
        False: backed out), else None. A queue file must show that outcome: restart starts
        after that record and will not see it again."""
        uow = self.uows.get(uow_id)
        if uow is None or uow.end_address == NO_ADDRESS or uow.end_address >= durable:
            return None
        return uow.end_commit

    def _charge(self, cost: IoCost) -> Generator:
        device = self.device
        for n in cost.writes:
            self.counters.queue_file_bytes_written += n
            yield from device.write(n)
        for n in cost.reads:
            self.counters.queue_file_bytes_read += n
            yield from device.read(n)

    # -- MQGET -------------------------------------------------------------------------------

    def _get(self, conn: Connection, queue_name: str, syncpoint: bool, wait_us: float):
        queue = self._queue(queue_name)
        uow = self._uow_for(conn) if syncpoint else None
        deadline = self.env.now + wait_us
        while True:
            message = queue.take_first(self.config.member + 1 if queue.keeper is not None else 0)
            if message is not None:
                break
            remaining = deadline - self.env.now
            if remaining <= 0:
                raise MqiError(Reason.MQRC_NO_MSG_AVAILABLE, queue_name)
            event = self.env.event()
            entry = (event, syncpoint)
            queue.getters.append(entry)
            timeout = self.env.timeout(remaining)
            yield event | timeout
            if entry in queue.getters:
                queue.getters.remove(entry)
            if event.triggered and isinstance(event.value, GotMessage):
                self.counters.messages_got += 1
                return event.value  # handed over directly by an out-of-syncpoint put
        data, cost = queue.read(message)
        if cost.reads:
            yield from self._charge(cost)
        self.counters.messages_got += 1
        return (yield from self._held(self._get_message(queue, message, uow, data), queue))

    def _get_message(self, queue: Queue, message: Message, uow: UnitOfWork | None, data: bytes) -> Generator:
        if message.persistent:
            stored = queue.file.messages.get(message.msg_id) if queue.file is not None else None
            block = stored.first_block if stored is not None else 0
            record = Get(queue.name, message.msg_id, block, message.length, uow=uow.id if uow else 0)
            try:
                if uow is None:
                    address = yield from self._log(record)
                else:
                    address = yield from self._log_uow(uow, lambda prev: attrs.evolve(record, prev=prev))
            except MqiError:
                queue.make_available(message)  # the get did not happen: the message is there for others
                self._wake_getters(queue)
                raise
        else:
            address = NO_ADDRESS
        if uow is None:
            if message.persistent:
                yield self.writer.force()  # still taken (busy): nobody else can get it meanwhile
            queue.remove(message)
        else:
            queue.lock(message, uow.id, address)
            prev = uow.ops[-1].address if uow.ops else NO_ADDRESS
            uow.ops.append(Op("get", queue.name, message.msg_id, message.persistent, address, prev, message.length))
        return GotMessage(message.msg_id, data, message.persistent)

    def _wake_getters(self, queue: Queue) -> None:
        if queue.getters and queue.available:
            getters, queue.getters = queue.getters, []
            for event, _ in getters:
                if not event.triggered:
                    event.succeed(None)

    # -- syncpoints --------------------------------------------------------------------------

    def _check_kept_queues(self, uow: UnitOfWork) -> None:
        """Before a commit or backout: each kept queue the unit touched is usable (its keeper
        raises MqiError if not, and the unit stays as it is)."""
        for op in uow.ops:
            queue = self.queues.get(op.queue)
            if queue is not None and queue.keeper is not None:
                queue.keeper.check(op.queue, True)

    def _commit(self, conn: Connection):
        uow = conn.uow
        if uow is None:
            return
        self._check_kept_queues(uow)
        if uow.doomed:
            raise MqiError(Reason.MQRC_BACKED_OUT, "the queue manager backed the unit of work out to free log space")
        yield from self._commit_uow(uow)
        conn.uow = None

    def _commit_uow(self, uow: UnitOfWork) -> Generator:
        uow.in_call += 1
        try:
            yield from self._held(self._commit_logged(uow))
        finally:
            uow.in_call -= 1

    def _commit_logged(self, uow: UnitOfWork) -> Generator:
        if uow.logged:
            address = yield from self._log_uow(uow, lambda prev: Commit(int(self.env.now), uow.persistent_ops,
                                                                        uow=uow.id, prev=prev), essential=True)
            uow.end_address, uow.end_commit = address, True
            yield self.writer.force()
        # Only now, with the commit record on disk, do the changes become visible.
        self._apply_outcome(uow, commit=True)
        self.counters.commits += 1

    def _backout(self, conn: Connection):
        uow = conn.uow
        if uow is None:
            return
        self._check_kept_queues(uow)
        if uow.doomed:  # already backed out by the queue manager; the application now knows
            conn.uow = None
            return
        yield from self._backout_uow(uow)
        conn.uow = None

    def _backout_uow(self, uow: UnitOfWork) -> Generator:
        """Back a unit of work out from memory (no log read), logging what was undone."""
        uow.in_call += 1
        try:
            yield from self._held(self._backout_logged(uow))
        finally:
            uow.in_call -= 1

    def _backout_logged(self, uow: UnitOfWork) -> Generator:
        if uow.logged:
            undone = [UndoneOp(op.address, i) for i, op in enumerate(uow.ops) if op.persistent]
            address = yield from self._log_uow(
                uow, lambda prev: Backout(int(self.env.now), undone, uow=uow.id, prev=prev), ending=True)
            uow.end_address, uow.end_commit = address, False
            yield self.writer.force()
        self._apply_outcome(uow, commit=False)
        self.counters.backouts += 1

    def _apply_outcome(self, uow: UnitOfWork, commit: bool) -> None:
        """Make a unit of work's outcome visible (from memory: no log read) and end it.

        Committing makes its puts available and removes what it got; backing out, newest
        operation first, removes its puts and makes what it got available again."""
        # The queues to wake, in the order the operations first reach them: a dict, not a
        # set, since a set of queues (hashed by identity) iterates in memory-address order
        # and the getters' wake order decides the order of their records in the log.
        woken: dict[Queue, None] = {}
        for op in (uow.ops if commit else reversed(uow.ops)):
            queue = self.queues.get(op.queue)
            message = queue.messages.get(op.msg_id) if queue is not None else None
            if message is None:
                continue
            if (op.kind == "put") == commit:
                queue.make_available(message)
                woken[queue] = None
            else:
                queue.remove(message)
        self._end_uow(uow)
        for queue in woken:
            self._wake_getters(queue)

    def _prepare(self, conn: Connection, xid: bytes):
        uow = self._uow_for(conn, adding=False)
        if uow.logged:
            uow.prepare_address = yield from self._log_uow(
                uow, lambda prev: Prepare(int(self.env.now), xid, uow=uow.id, prev=prev))
            yield self.writer.force()
        uow.state = UowState.PREPARED
        uow.xid = xid
        return uow.id

    def resolve(self, uow_id: int, commit: bool) -> Generator:
        """The external coordinator's decision for a prepared (in-doubt) unit of work."""
        uow = self.uows.get(uow_id)
        if uow is None or uow.state is not UowState.PREPARED:
            raise MqiError(Reason.MQRC_HCONN_ERROR, f"no unit of work {uow_id} in doubt")
        while uow.busy is not None:  # being rolled forward: decide once that is done
            yield uow.busy
        if commit:
            yield from self._commit_uow(uow)
        else:
            yield from self._backout_uow(uow)

    def check(self) -> None:
        """Invariants of the queues and units of work (sortedcontainers' ``_check()`` style),
        for stress and crash tests: raises AssertionError naming what is broken."""
        for queue in self.queues.values():
            committed = {m.seq: m.msg_id for m in queue.messages.values()
                         if m.state is MessageState.COMMITTED and not m.busy}
            assert len({m.seq for m in queue.messages.values()}) == len(queue.messages), \
                f"{queue.name}: two messages share an arrival number"
            assert dict(queue.available) == committed, f"{queue.name}: available set differs from committed messages"
            for m in queue.messages.values():
                if queue.keeper is not None and m.uow and m.uow >> MEMBER_SHIFT != self.config.member:
                    continue  # another member's unit of work: that member checks it
                if m.state is not MessageState.COMMITTED:
                    uow = self.uows.get(m.uow)
                    assert uow is not None and uow.state is not UowState.ENDED, \
                        f"{queue.name}: message {m.msg_id!r} held by unit of work {m.uow}, which is not open"
                    assert any(op.msg_id == m.msg_id for op in uow.ops), \
                        f"{queue.name}: unit of work {m.uow} does not list message {m.msg_id!r}"
                if m.persistent and m.data is None:
                    assert queue.file is not None and m.msg_id in queue.file.messages, \
                        f"{queue.name}: message {m.msg_id!r} has no data in memory or in the file"
            assert len(queue.messages) <= queue.max_depth or not queue.messages, f"{queue.name}: over MAXDEPTH"
        ages = {uid for _, uid in self._uow_ages}
        assert ages <= set(self.uows), f"ended units of work {sorted(ages - set(self.uows))} still pin the tail"
        for uow in self.uows.values():
            assert (uow.id in ages) == uow.logged, f"unit of work {uow.id}: age index out of step"
            for op in uow.ops:
                queue = self.queues.get(op.queue)
                message = queue.messages.get(op.msg_id) if queue else None
                if message is not None and uow.state is not UowState.ENDED:
                    assert message.uow in (uow.id, 0), f"message {op.msg_id!r} of unit {uow.id} held by {message.uow}"
        if self.writer is not None:
            assert self.writer.durable <= self.writer.next_address
            tail = self.tail()
            assert tail == NO_ADDRESS or tail <= self.writer.next_address, "the tail is ahead of the head"

    def in_doubt(self) -> list[UnitOfWork]:
        return [u for u in self.uows.values() if u.state is UowState.PREPARED]

    # -- log space ---------------------------------------------------------------------------

    def _tail_held_by_uow(self) -> bool:
        """Whether a unit of work older than the last checkpoint holds the tail (a new
        checkpoint would not move it)."""
        return (self.platform.uows_pin_log and bool(self._uow_ages)
                and self._uow_ages[0][0] < self._checkpoint_address)

    def _check_space(self) -> None:
        """SPEC §4.6's stages: when the log is getting full, a checkpoint moves the tail as far
        as it can; the policy decides about units of work (those older than the last
        checkpoint hold the tail: ``UowView.pins_tail``)."""
        if self._relieving:
            return
        policy = self.platform.space_policy
        usage = self.platform.space.usage(self.writer.next_address, self.tail())
        if usage >= policy.checkpoint_at and not self._tail_held_by_uow():
            # Only if it would release space: a unit of work older than the last checkpoint
            # holds the tail where it is whatever a new checkpoint does.
            self._maybe_checkpoint("log getting full", force=True)
        views = [UowView(uid, first, self.uows[uid].state is UowState.PREPARED, self.uows[uid].begin_us,
                         pins_tail=first < self._checkpoint_address)
                 for first, uid in self._uow_ages if uid in self.uows]
        actions = policy.relieve(usage, views)
        if actions:
            self.counters.log_full_events += 1
            self._relieving = True
            self.env.process(self._relieve(actions))

    def _reserve_bytes(self) -> int:
        """Log space held back for what must not fail: backing out every open unit of work
        and the checkpoints that follow (SPEC §4.4's reserve, in bytes)."""
        # One pass, no intermediate list: this runs before every record that is not essential.
        logged = ops = 0
        for u in self.uows.values():
            if u.first != NO_ADDRESS:  # u.logged
                logged += 1
                ops += len(u.ops)
        checkpoint = 750 + 200 * logged + 64 * (len(self.queues) + len(self.damaged))
        return RESERVE_FIXED_BYTES + 2 * checkpoint + self._claimed + RESERVE_PER_UOW * logged + RESERVE_PER_OP * ops

    def log_free_bytes(self) -> int | None:
        """How many more bytes the log takes before it is full (None: it never fills)."""
        if self.writer is None:
            return None
        return self.platform.space.free_bytes(self.writer.next_address, self.tail())

    def _claim_waiting(self, nbytes: int) -> Generator:
        """:meth:`_claim`, except that where the platform says so (z/OS) a full log makes
        the caller wait for a checkpoint to free space rather than fail.

        A caller that has waited through :data:`FUTILE_WAITS_MAX` checkpoints without room
        never will get it (the log is smaller than the space kept to back out the units of
        work that hold it): the queue manager ends abnormally, as an operator would cancel
        it after CSQJ111A, rather than checkpoint for ever."""
        waits = 0
        while True:
            try:
                self._claim(nbytes)
                return
            except MqiError as exc:
                if exc.reason is not Reason.MQRC_RESOURCE_PROBLEM or not self.platform.full_log_waits:
                    raise
            if waits >= FUTILE_WAITS_MAX:
                raise LogWriteError(
                    f"the active log stayed full through {waits} checkpoints: nothing can free it (it holds "
                    f"{self.log_free_bytes()} free bytes, and {self._reserve_bytes()} must be kept to back out "
                    "the open units of work); give it more or larger data sets")
            waits += 1
            if self._space_freed is None:
                self._space_freed = self.env.event()
            yield self._space_freed

    def _claim(self, nbytes: int) -> None:
        """Check there is room for ``nbytes`` more (else 2102) and hold it until the caller
        gives it back (``self._claimed -= nbytes``) once its records are appended."""
        self._ensure_room(nbytes)
        self._claimed += nbytes

    def _ensure_room(self, nbytes: int) -> None:
        """Refuse new work when the log is full (SPEC §4.4; MQ: AMQ7463, and AMQ7465 when a
        long-running unit of work holds the tail): the call fails with
        MQRC_RESOURCE_PROBLEM, nothing of it is logged, and the queue manager tries to
        release space. Commit and backout never come here: the reserve is theirs."""
        free = self.log_free_bytes()
        if free is None:
            return
        if free - nbytes >= self._reserve_bytes():
            return
        self.counters.log_full_refusals += 1
        self._drain_space_events()
        if not self._log_full:
            self._log_full = True
            self.say("log-full")
            if self._tail_held_by_uow():
                uow = self.uows.get(self._uow_ages[0][1])
                self.say("log-full-long-uow", uow=self._uow_ages[0][1],
                         application=uow.application if uow is not None else "")
            else:
                # Nothing holds the tail but the last checkpoint: records arrive faster than
                # checkpoints free the log behind them.
                self.say("log-full-housekeeping")
        if self.platform.space_policy is not None:
            self._check_space()
        self._maybe_checkpoint("log full", force=True)
        raise MqiError(Reason.MQRC_RESOURCE_PROBLEM, "the log is full")

    def _schedule_images(self) -> None:
        """Automatic media images (IMGSCHED(AUTO)): after a checkpoint, image the queues
        that are due, one at a time, in the background."""
        media = self.platform.media
        schedule = media.schedule if media is not None else None
        if schedule is None or self._imaging or self.stopped or self.writer is None:
            return
        head = self.writer.next_address
        due = [name for name, q in sorted(self.queues.items())
               if q.media_address != NO_ADDRESS and schedule.due(self.env.now - q.media_us, head - q.media_address)]
        if due:
            self._imaging = True
            self.env.process(self._auto_images(due))

    def _auto_images(self, names) -> Generator:
        from mqlog.core.objects.media import MediaRecoveryError, record_image

        try:
            for name in names:
                if name in self.queues and not self.stopped:
                    try:
                        yield from record_image(self, name, checkpoint=False)
                    except (MqiError, MediaRecoveryError):
                        continue  # log full, queue gone or already being imaged: next time
            if not self.stopped:
                yield from self.checkpoint("media images", wait=True)
        finally:
            self._imaging = False

    def _report_long_uows(self) -> None:
        """At a log switch (z/OS: an offload), units of work that have lived through more
        than three checkpoints are reported as long-running (CSQJ160I)."""
        for uow in self.uows.values():
            if uow.logged and uow.end_address == NO_ADDRESS and uow.checkpoints_seen > 3:
                uow.switches_reported += 1
                self.say("long-uow-at-switch", uow=uow.id, application=uow.application,
                         checkpoints=uow.checkpoints_seen, first=uow.first, times=uow.switches_reported)

    def _drain_space_events(self) -> None:
        events = self.platform.space.events
        while events:
            event, fields = events.pop(0)
            self.say(event, **fields)

    def _report_extents(self) -> None:
        """Say which log files restart and media recovery need, when that changes (MQ's
        AMQ7467 / AMQ7468 at checkpoints)."""
        self._drain_space_events()
        needed = self.platform.space.recovery_extents()
        if needed is None:
            return
        restart, media = needed
        if (restart, media) != self._extents_said:
            self._extents_said = (restart, media)
            if restart:
                self.say("restart-extent", extent=restart)
            if media:
                self.say("media-extent", extent=media)

    def _relieve(self, actions) -> Generator:
        released = False
        try:
            for action in actions:
                uow = self.uows.get(action.uow)
                if uow is None or uow.state is UowState.ENDED:
                    continue
                if action.action == "rollback" and uow.state is UowState.ACTIVE:
                    uow.doomed = True  # from now on the application's calls get MQRC_BACKED_OUT
                    self.say("uow-rolled-back", uow=uow.id, application=uow.application)
                    yield from self._backout_uow(uow)
                    self.counters.uows_rolled_back += 1
                    released = True
                elif action.action == "rollforward" and uow.state is UowState.PREPARED:
                    if (yield from self._roll_forward(uow)):
                        self.say("uow-rolled-forward", uow=uow.id, application=uow.application)
                        self.counters.uows_rolled_forward += 1
                        released = True
            if released:
                # Stage 3 (SPEC §4.6): a checkpoint moves the tail past what was freed.
                yield from self.checkpoint("log space released", wait=True)
        finally:
            self._relieving = False

    def _roll_forward(self, uow: UnitOfWork) -> Generator:
        """Re-log a prepared unit of work's state at the head so the tail can move past it.

        Copies of its records (flagged *relogged*) are chained onto its last record and
        closed by a flagged Prepare. Only once that is on disk does the unit switch to the
        copies; until then its original records stay the ones restart uses, so a crash in
        the middle loses nothing. The coordinator's decision waits for the switch.

        The copies need log space of their own: the room is claimed first (new work is
        refused sooner meanwhile), and if the log cannot hold them the unit stays where it is
        (False; AMQ7465 then names it when the log fills)."""
        estimate = 1000 + sum(op.length + 800 if op.kind == "put" else 300 for op in uow.ops if op.persistent)
        free = self.log_free_bytes()
        if free is not None and free - estimate < self._reserve_bytes():
            if uow.id not in self._no_room_said:
                self._no_room_said.add(uow.id)
                self.say("rollforward-no-room", uow=uow.id, needed=estimate)
            return False
        self._claimed += estimate
        uow.busy = self.env.event()
        try:
            prev = uow.last
            first = NO_ADDRESS
            new_ops = []
            for op in uow.ops:
                queue = self.queues.get(op.queue)
                message = queue.messages.get(op.msg_id) if queue is not None else None
                if not op.persistent or message is None:
                    new_ops.append(op)
                    continue
                if op.kind == "put":
                    data, cost = queue.read(message)
                    if cost.reads:
                        yield from self._charge(cost)
                    record = Put(queue.name, op.msg_id, data, len(data), uow=uow.id, prev=prev, relogged=True)
                else:
                    record = Get(queue.name, op.msg_id, 0, op.length, uow=uow.id, prev=prev, relogged=True)
                address = yield from self._log(record, essential=True)
                if first == NO_ADDRESS:
                    first = address
                new_ops.append(attrs.evolve(op, address=address, prev=prev))
                prev = address
            closing = yield from self._log(Prepare(int(self.env.now), uow.xid, uow=uow.id, prev=prev, relogged=True),
                                           essential=True)
            yield self.writer.force()
            if uow.state is UowState.ENDED:
                return True  # decided meanwhile: the copies are history, nothing to switch to
            # The copies are on disk: from now on they are the unit of work.
            self._uow_ages.discard((uow.first, uow.id))
            uow.first = first if first != NO_ADDRESS else closing
            uow.last = uow.prepare_address = closing
            uow.ops = new_ops
            self._uow_ages.add((uow.first, uow.id))
            return True
        finally:
            self._claimed -= estimate
            busy, uow.busy = uow.busy, None
            busy.succeed()

    # -- checkpoints -------------------------------------------------------------------------

    def checkpoint(self, reason: str = "request", *, wait: bool = False) -> Generator:
        """Take a checkpoint (one at a time): record the active units of work, flush the queue
        files (log first), and let the log's tail move. If one is running, return False at
        once – or, with ``wait`` (shutdown, on request), wait for it and then take one."""
        while self._checkpointing:
            if not wait:
                return False
            yield self._checkpoint_finished
        self._checkpointing = True
        self._checkpoint_finished = self.env.event()
        try:
            number = self._checkpoint_number + 1
            begin = yield from self._log(CheckpointBegin(number, int(self.env.now)), essential=True)
            # The units of work open at the Begin record, as the log has them there: one whose
            # Commit/Backout is already appended is over, one whose Prepare is, is in doubt,
            # whatever its force is still doing.
            table = [UowEntry(u.id, RecUowState.IN_DOUBT if u.prepare_address != NO_ADDRESS else RecUowState.IN_FLIGHT,
                              u.first, u.last, int(u.begin_us), len(u.ops), u.xid)
                     for u in sorted(self.uows.values(), key=lambda u: u.id)
                     if u.logged and u.end_address == NO_ADDRESS]
            extra = self.platform.checkpoint_records
            for record in (extra(self.services, begin) if extra is not None else ()):
                yield from self._log(record, essential=True)
            # Write-ahead rule: the log describing the queue data is on disk before the data.
            yield self.writer.force()
            durable = self.writer.durable
            for name in sorted(self.queues):
                yield from self._charge(self.queues[name].flush(durable, self._outcome))
            # Each queue's media recovery record is kept by every checkpoint (damaged ones too).
            # Kept queues live with their keeper, not in this queue manager's files.
            queues = sorted([QueueEntry(q.name, q.depth, q.media_address) for q in self.queues.values()
                             if q.keeper is None]
                            + [QueueEntry(d.name, 0, d.media) for d in self.damaged.values()]
                            + [QueueEntry(n, 0, a) for n, a in self._defining.items()],
                            key=lambda e: e.name)
            yield from self._log(CheckpointEnd(begin, number, int(self.env.now), table, queues), essential=True)
            yield self.writer.force()
            space = self.platform.space
            self._checkpoint_address = begin
            self._checkpoint_number = number
            space.save_control(LogControl(begin, self.tail(), number, self.media_address()))
            yield from self.device.write(512)  # the control data's own write
            space.release(self.tail())
            self._log_full = False  # the episode ends when a checkpoint has moved what it can
            if self._space_freed is not None:
                freed, self._space_freed = self._space_freed, None
                freed.succeed()
            self._report_extents()
            self._schedule_images()
            self._records_since = 0
            self._last_checkpoint_us = self.env.now
            self.counters.checkpoints += 1
            for uow in self.uows.values():
                uow.checkpoints_seen += 1
            self.say("checkpoint", number=number, reason=reason, address=begin)
            if self._shunt(number):
                yield self.writer.force()
            return True
        finally:
            self._checkpointing = False
            self._checkpoint_finished.succeed()

    def _shunt(self, number: int) -> bool:
        """Log shunting (z/OS, SPEC §5.6), after a checkpoint: for each unit of work the
        policy picks, a round of backout-only copies of its records goes to the head of the
        log, chained on the unit's backward chain, and the unit's first record becomes the
        round's – the log behind it is no longer needed to back it out.

        The round is appended in one step (no other record can come between its records);
        if the buffer or the log cannot take it now, the unit is not shunted (CSQR027I) and
        the next checkpoint tries again. Returns whether anything was appended."""
        shunting = self.platform.shunting
        if shunting is None or self.writer is None or self.stopped:
            return False
        policy, make_round = shunting.policy, shunting.make_round
        views = [UowView(u.id, u.first, u.state is UowState.PREPARED, u.begin_us,
                         checkpoints_since_mark=u.checkpoints_seen - u.shunt_mark)
                 for u in sorted(self.uows.values(), key=lambda u: u.id)
                 if u.logged and u.end_address == NO_ADDRESS and u.busy is None and not u.in_call]
        appended = False
        for uow_id in policy.select(number, views):
            uow = self.uows.get(uow_id)
            if uow is None or not uow.logged or uow.end_address != NO_ADDRESS:
                continue
            records = make_round(uow.id, uow.last, uow.ops)
            sizes = [len(r.to_bytes()) for r in records]
            free = self.log_free_bytes()
            if not self.writer.has_room(sum(sizes)) or (
                    free is not None and free - sum(sizes) < self._reserve_bytes()):
                self.counters.shunts_failed += 1
                self.say("shunt-failed", uow=uow.id, bytes=sum(sizes))
                continue
            prev, first = uow.last, NO_ADDRESS
            for record in records:
                prev = self.writer.append(attrs.evolve(record, prev=prev))
                first = prev if first == NO_ADDRESS else first
            self._records_since += len(records)
            self._uow_ages.discard((uow.first, uow.id))
            uow.first, uow.last = first, prev
            if uow.prepare_address != NO_ADDRESS:
                uow.prepare_address = prev  # in doubt on the log from here on too
            self._uow_ages.add((uow.first, uow.id))
            uow.shunt_mark = uow.checkpoints_seen
            uow.shunts += 1
            self.counters.shunts += 1
            self.counters.shunted_bytes += sum(sizes)
            self.say("uow-shunted", uow=uow.id, round=uow.shunts, address=first, bytes=sum(sizes))
            appended = True
        return appended
