"""The queue manager: its lifecycle, its objects, and the MQI calls logged on their behalf.

Applications are SimPy processes. They connect, then drive the MQI through generator
methods (``msg_id = yield from conn.put(...)``), so that a call that must wait – for a
forced log write, for buffer space, for a message – takes virtual time. What is logged and
when it is forced:

* non-persistent messages are never logged, not even inside a unit of work that also holds
  persistent ones, and a unit of work of only non-persistent work logs nothing;
* a persistent MQPUT/MQGET outside syncpoint logs its record and forces at once; inside
  syncpoint nothing is forced until MQCMIT/MQBACK, which force once for the whole unit;
* a persistent MQPUT outside syncpoint to a getter already waiting outside syncpoint passes
  the message straight across with no log write where the platform allows it;
* committed changes become visible to other applications only once the commit record is on
  disk; backout during normal running undoes from memory and never reads the log.

Every MQI call takes CPU on one of the host's cores (``self.cpu``, :mod:`mqlog.core.host`):
its path by kind when it starts (:mod:`.connection`); a persistent put or get its extra
path, its record and the copy of its data just before the record is appended, then the
compression of its data where the platform's codec compresses it (per byte, per algorithm
tried); a call that
had to wait for a log force the wakeup once its effect is visible (:meth:`_woken`). The
first MQPUT or MQGET on a queue that restart left unloaded pays its load first
(:meth:`_load_unloaded`).

This module owns starting and stopping, queue definitions, appending records (:meth:`_log`)
and MQPUT/MQGET. The rest of normal running is in mixins of :class:`QueueManager`, one
module each: units of work and syncpoint (:mod:`.units`), the log-space reserve and the
log-full episode (:mod:`.logspace`), checkpoints and what follows them (:mod:`.checkpoints`),
shunting (:mod:`.shunting`). Restart recovery lives in :mod:`mqlog.core.recovery.restart`.
"""

from __future__ import annotations

from typing import Callable, Generator

import attrs
import simpy
from sortedcontainers import SortedList

from mqlog.core.disk.devices import Device
from mqlog.core.disk.storage import Storage
from mqlog.core.errors import LogFileMissingError
from mqlog.core.host.profiles import DEFAULT_HOST, Cpu, HostProfile
from mqlog.core.format.records import (NO_ADDRESS, Begin, Codec, Get, ObjectAction, ObjectChange, ObjectType, Put,
                                       PutSegment, split_message)
from mqlog.core.log.writer import LogWriter
from mqlog.core.messages import Said
from mqlog.core.objects.queuefile import IoCost, MessageState, QueueFile, file_name_for, list_queue_files
from mqlog.core.objects.queues import DamagedQueue, Message, Queue
from mqlog.core.objects.uow import MEMBER_SHIFT, MqiError, Op, Reason, UnitOfWork, UowState
from mqlog.core.platform import Platform
from mqlog.core.qm.checkpoints import CheckpointMixin
from mqlog.core.qm.config import QmConfig, QmCounters
from mqlog.core.qm.locks import QueueLock
from mqlog.core.qm.connection import Connection, GotMessage
from mqlog.core.qm.logspace import LogSpaceMixin
from mqlog.core.qm.services import QmServices
from mqlog.core.qm.shunting import ShuntingMixin
from mqlog.core.qm.units import UnitsOfWorkMixin
from mqlog.core.qm.waits import Deadlines, Marks
from mqlog.core.recovery.restart import restart

#: sample the log in use about this often (virtual µs), keeping at most LOG_SAMPLES_MAX samples
LOG_SAMPLE_US = 2000.0
LOG_SAMPLES_MAX = 500
#: check log-space usage every this many appended records (cheap, but not free)
SPACE_CHECK_INTERVAL = 32


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


class QueueManager(UnitsOfWorkMixin, LogSpaceMixin, CheckpointMixin, ShuntingMixin):
    """The core queue manager over one platform's log. Its state is all set up here; the
    mixins' methods work on it (each mixin's module says which part it owns)."""

    def __init__(self, env: simpy.Environment, platform: Platform, storage: Storage, device: Device,
                 config: QmConfig = QmConfig(), host: HostProfile | str = DEFAULT_HOST):
        self.env = env
        self.platform = platform
        self.storage = storage
        self.device = device
        self.config = config
        #: persistent bytes a queue keeps in memory before spilling to its file: the
        #: platform's setting where it has one, else the queue manager's
        self.queue_buffer_bytes = (platform.queue_buffer_bytes if platform.queue_buffer_bytes is not None
                                   else config.persistent_buffer_bytes)
        #: the host's cores: every MQI call's CPU is charged here, and restart's (one thread)
        self.cpu = Cpu(env, host)
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
        #: MQGETs' wait intervals (one timeout pending, not one a wait)
        self._deadlines = Deadlines(env)
        #: operations of the units in ``_uow_ages``, counted as they change (the reserve's, in O(1))
        self._logged_ops = 0
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
        self._log_full = False  # inside a log-full episode (said once per episode)
        self._claimed = 0  # log bytes a roll forward in progress has claimed from the free space
        self._no_room_said: set[int] = set()  # prepared units too big to roll forward (said once)
        self._imaging = False  # automatic media images in progress
        self._switches_seen = 0  # the space's log switches already acted on
        self._space_freed: simpy.Event | None = None  # callers waiting for log space, woken by a checkpoint
        self._imaging_queues: set[str] = set()  # queues whose image is being written
        self._defining: dict[str, int] = {}  # queues whose CREATE is logged, file not yet made
        #: log addresses from which an MQI call in progress may have logged records whose
        #: effect is not yet in memory (a media image's replay point must not pass them)
        self._inflight = Marks()
        self._extents_said: tuple = ()  # the restart / media extents last reported
        self.stopped = False
        #: the end command issued and not yet done (:meth:`end`): None while running,
        #: "controlled" (quiescing) or "immediate" (stopping)
        self.ending: str | None = None
        self._calls = 0  # MQI calls in progress (an immediate shutdown waits for them)
        self._calls_done: simpy.Event | None = None
        #: units of work the queue manager backed out as it stopped (z/OS MODE(FORCE))
        self.backed_out_at_stop = 0
        #: called with the number of records replayed so far, as restart's replay goes on
        #: (a progress bar: ``mqlog restart``); None: nobody is watching
        self.restart_progress: Callable[[int], None] | None = None
        #: the most log, head to tail, that restart would have needed at any moment sampled
        self.log_used_max = 0
        #: (virtual µs, bytes from tail to head) every LOG_SAMPLE_US or so, for the reports
        self.log_used_series: list[tuple[float, int]] = []
        #: one entry per checkpoint taken (the first ``checkpoints.CHECKPOINT_MARKS_MAX``): why, when, and the
        #: messages and records so far at its start, so that a report can say how much work
        #: lay between two checkpoints (the cadence the checkpoint basis sets)
        self.checkpoint_marks: list[dict] = []
        #: one entry per round of shunting written (the first ``checkpoints.CHECKPOINT_MARKS_MAX``): the
        #: unit, the checkpoint after which it started, its operations and bytes (``mqlog calibrate``'s Z3)
        self.shunt_rounds: list[dict] = []

    # -- starting and stopping ---------------------------------------------------------------

    def start(self) -> Generator:
        """Start the queue manager: create a new log, or restart from an existing one.

        Returns the recovery report after a restart, None for a new queue manager."""
        control = self.platform.space.load_control()
        # What the space found opening its control data and files (a copy lost, two copies
        # out of step) is said first: the log is opened before restart begins.
        self._drain_space_events()
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

    def _wake_cost(self, woken: int) -> Generator:
        """The log writer's CPU to wake ``woken`` callers its write released."""
        yield from self.cpu.charge(woken * self.cpu.profile.wake_us, "logger")

    def _new_writer(self, reader=None) -> LogWriter:
        p = self.platform
        kwargs = dict(buffer_pages=p.buffer_pages, write_threshold_pages=p.write_threshold_pages,
                      addressing=p.addressing, pad_policy=p.pad_policy, pad_grouped_tail=p.pad_grouped_tail,
                      wake_cost=self._wake_cost)
        if reader is not None:
            return LogWriter.resume(self.env, p.space, self.device, reader, **kwargs)
        return LogWriter(self.env, p.space, self.device, **kwargs)

    def end(self, mode: str) -> None:
        """The operator's end command is issued: ``controlled`` (endmqm -c, STOP QMGR
        MODE(QUIESCE)) or ``immediate`` (endmqm -i, STOP QMGR MODE(FORCE)); see
        :mod:`mqlog.core.workload.run` for what IBM documents of each. From now on an
        immediate end refuses every MQI call with MQRC_Q_MGR_STOPPING (2162) at its entry;
        a controlled one lets calls go on, so that applications finish the unit of work they
        are in, but refuses MQGETs with MQRC_Q_MGR_QUIESCING (2161), the applications being
        modelled as getting with MQGMO_FAIL_IF_QUIESCING (IBM's advice for a getting loop,
        which would otherwise hold a controlled shutdown for ever). Either way, MQGETs waiting
        now are woken to be refused (IBM, 2162: "the wait has been canceled"). Calls already
        past their entry complete (:meth:`calls_finished`). The platform's console says the
        command was accepted (``qm-stopping``), now."""
        self.ending = mode
        self.say("qm-stopping", mode=mode)
        for name in sorted(self.queues):
            queue = self.queues[name]
            getters, queue.getters = queue.getters, []
            for event, _ in getters:
                if not event.triggered:
                    event.succeed(None)

    def refusal(self) -> MqiError:
        """What a call the end command refuses is told."""
        if self.ending == "immediate":
            return MqiError(Reason.MQRC_Q_MGR_STOPPING, "the queue manager is stopping (an immediate shutdown)")
        return MqiError(Reason.MQRC_Q_MGR_QUIESCING, "the queue manager is quiescing (a controlled shutdown)")

    def calls_finished(self) -> Generator:
        """Wait until no MQI call is in progress (an immediate shutdown's wait)."""
        while self._calls:
            self._calls_done = self.env.event()
            yield self._calls_done

    def _call_ended(self) -> None:
        self._calls -= 1
        if not self._calls and self._calls_done is not None:
            self._calls_done, done = None, self._calls_done
            done.succeed()

    def back_out_in_flight(self) -> Generator:
        """Back out every unit of work still in flight (not in doubt) as the queue manager
        stops, as z/OS does at STOP QMGR MODE(FORCE) ("active threads: back out"): its
        compensation is logged and forced before the shutdown checkpoint, so restart has
        nothing to back out. The applications are not told: their connections are ended."""
        for uow_id in sorted(self.uows):
            uow = self.uows[uow_id]
            if uow.state is UowState.ACTIVE and uow.logged:
                uow.doomed = True
                yield from self._backout_uow(uow)
                self.backed_out_at_stop += 1

    def shutdown(self) -> Generator:
        """A shutdown with its checkpoint (controlled or immediate: :meth:`end` said which
        calls it refuses): a final checkpoint, then nothing more is accepted.
        Where the platform takes media images, empty queues are imaged first (as MQ does at
        every shutdown): cheap, and their media recovery records move up to now. The space's
        background copies in progress (z/OS archive offloads) finish before it ends, so a
        clean shutdown leaves none half done (the writer fails the shutdown if one failed).
        After an end command (:meth:`end`) the platform's console says the queue manager has
        ended (``qm-ended``), when it has: an administrative command's own stop, which no
        operator's command began, says nothing."""
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
        yield self.writer.copies.idle()
        if self.writer.failed is not None:
            raise self.writer.failed
        self.stopped = True
        if self.ending is not None:
            self.say("qm-ended", mode=self.ending)

    def connect(self, application: str) -> Connection:
        return Connection(self, application)

    def say(self, event: str, **fields) -> None:
        """Report ``event`` in the platform's words; the line keeps the event's virtual time
        (``at_us``: an event that happened earlier than it is said, a log space's, carries
        its own), which the platform's error log stamps it with."""
        at_us = fields.pop("at_us", self.env.now)
        text = self.platform.message(event, **fields)
        if text is not None:
            self.messages.append(Said(text, at_us))

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
        MQRC_RESOURCE_PROBLEM (:meth:`_ensure_room`); commit, backout, compensation,
        checkpoints and the re-logging of prepared units of work are essential and use the
        space held in reserve for them. ``need``: bytes the caller is about to log with this record
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
        if self.platform.checkpoint_policy.counts(record):
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
        """Append a record of ``uow``, chained to its previous one; a Begin first if needed.
        While the queue manager re-logs the unit (a round of shunting, :mod:`.shunting`) the
        record waits for it, so that it is chained after the round, not into it."""
        while uow.busy is not None:
            yield uow.busy
        if uow.doomed and not ending:
            raise MqiError(Reason.MQRC_BACKED_OUT, "the queue manager backed the unit of work out to free log space")
        if not uow.logged:
            begin = yield from self._log(Begin(int(self.env.now), uow.application[:28], uow=uow.id))
            uow.first = uow.last = uow.begin = begin
            self._uow_ages.add((begin, uow.id))
            self._logged_ops += len(uow.ops)
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

    # -- MQPUT -------------------------------------------------------------------------------

    def _new_msg_id(self) -> bytes:
        self._msg_counter += 1
        return (b"AMQ " + self.config.name[:8].encode("ascii").ljust(8)
                + self._incarnation.to_bytes(4, "big") + self._msg_counter.to_bytes(8, "big"))

    def _put(self, conn: Connection, queue_name: str, data: bytes, persistent: bool, syncpoint: bool):
        queue = self._queue(queue_name)
        if queue.unloaded is not None:
            yield from self._load_unloaded(queue)
        uow = self._uow_for(conn) if syncpoint else None
        if queue.depth >= queue.max_depth:
            raise MqiError(Reason.MQRC_Q_FULL, f"{queue_name} is at MAXDEPTH {queue.max_depth}")
        msg_id = self._new_msg_id()
        self.counters.messages_put += 1
        if not syncpoint and queue.getters and (not persistent or self.platform.persistent_put_to_waiting_getter):
            for i, (event, getter_syncpoint) in enumerate(queue.getters):
                if not getter_syncpoint and not event.triggered:  # (not one whose wait ran out)
                    del queue.getters[i]
                    if persistent:
                        self.counters.direct_handoffs += 1
                    event.succeed(GotMessage(msg_id, data, persistent))
                    return msg_id
        message = Message(msg_id, queue.next_seq(), persistent, len(data), data)
        try:
            yield from self._held(self._put_message(queue, message, uow, syncpoint, persistent), queue)
        except MqiError:
            # Refused while it was being logged (a full log's 2102, a backout's 2003): the
            # application was told it failed, so it is no put. Counted until now because a
            # checkpoint taken while the put waited for the log counts it as begun.
            self.counters.messages_put -= 1
            raise
        finally:
            self._unlock_queue(queue, message)
        if persistent and queue.unflushed_bytes > self.queue_buffer_bytes:
            yield from self._spill(queue)
        return msg_id

    def _locked_charge(self, queue: Queue, us: float, holder) -> Generator:
        """The persistent part of an MQPUT or MQGET: ``us`` of CPU with ``queue``'s lock held
        (:mod:`mqlog.core.qm.locks`), taken once the call has a core – a thread takes a lock
        while it runs. A caller that finds it held gives its core up and sleeps until a release
        wakes it, pays the CPU of being woken, and tries again. The lock stays held (by
        ``holder``) until :meth:`_unlock_queue`."""
        mutex = queue.mutex
        if mutex is None:
            mutex = queue.mutex = QueueLock(self.env)
        cpu = self.cpu
        while True:
            sleeping = yield from cpu.charge(us, "log", lock=mutex, holder=holder)
            if sleeping is None:
                return
            yield sleeping
            yield from cpu.charge(cpu.profile.force_wait_us, "lock")

    @staticmethod
    def _unlock_queue(queue: Queue, holder) -> None:
        mutex = queue.mutex
        if mutex is not None and mutex.holder is holder:
            mutex.release()

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
            if uow.first != NO_ADDRESS:  # uow.logged
                self._logged_ops += 1
        else:
            waited = (yield from self._force()) if persistent else False
            queue.add(message)
            self._wake_getters(queue)
            yield from self._woken(waited)

    def _force(self) -> Generator:
        """Wait until everything appended so far is on disk; True if that meant waiting."""
        event = self.writer.force()
        waited = not event.triggered
        yield event
        return waited

    def _woken(self, waited: bool) -> Generator:
        """An MQI call that waited for a log force pays the host's CPU to be woken (the
        system call, the sleep and the wakeup) – after its effect is made visible, so that
        nothing (a checkpoint's queue-file flush, say) sees the log ahead of memory longer
        than the force itself took."""
        if waited:
            yield from self.cpu.charge(self.cpu.profile.force_wait_us, "force")

    def _log_put(self, queue: Queue, message: Message, uow: UnitOfWork | None) -> Generator:
        data = message.data
        # The persistent put's extra CPU: its path, its record (one, however many segments:
        # see hosts.toml) and the copy of its data, before the record reaches the buffer.
        yield from self._locked_charge(queue, self.cpu.profile.logged_us("put", len(data)), message)
        codec, stored = Codec.NONE, data
        if self.platform.codec is not None and self.platform.codec.active and data:
            # A kept queue (one whose keeper is outside this queue manager) is the
            # platform's to refuse (z/OS COMPLOG never compresses such puts).
            codec, stored, tried = self.platform.codec.compress(data, kept=queue.keeper is not None)
            self.counters.compression_in_bytes += len(data)
            self.counters.compression_out_bytes += len(stored)
            if tried:
                # Every compressor that scanned the data costs the putting call its CPU per
                # byte, on the host's cores: the put takes longer and competes with the rest.
                yield from self.cpu.charge(self.cpu.profile.compress_us(tried, len(data)), "compress")
        segments = split_message(stored)
        # Room for the whole message is checked once, before its first record: a message is
        # never left half logged because the log filled between its segments.
        need = len(stored) + 800 + 300 * len(segments)  # IBM MQ's log sizing: 750 + data, +300 a segment
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

    def _load_unloaded(self, queue: Queue) -> Generator:
        """The first MQPUT or MQGET on a queue restart did not load pays its load (IBM: a
        queue is loaded on first use after restart; callers wait until it is): a file-system
        call, the metadata reads, the CPU of its index entries. Calls that arrive while it
        loads wait for it."""
        pending = queue.unloaded
        if isinstance(pending, simpy.Event):
            yield pending
            return
        loaded = queue.unloaded = self.env.event()
        cost, messages = pending
        yield from self.device.file_op()
        yield from self._charge(cost)
        yield from self.cpu.charge(messages * self.cpu.profile.load_message_us, "restart")
        queue.unloaded = None
        self.counters.queues_loaded_on_use += 1
        loaded.succeed()

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
        if self.ending is not None:
            raise self.refusal()  # quiescing: MQGMO_FAIL_IF_QUIESCING (see end())
        queue = self._queue(queue_name)
        if queue.unloaded is not None:
            yield from self._load_unloaded(queue)
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
            self._deadlines.add(event, deadline)
            # (a condition, as when the wait was on a timeout too: the same steps, so the same
            # order as before among calls resuming at one instant; the second event never triggers)
            yield event | self.env.event()
            self._deadlines.ended()
            if entry in queue.getters:
                queue.getters.remove(entry)
            if event.triggered and isinstance(event.value, GotMessage):
                self.counters.messages_got += 1
                return event.value  # handed over directly by an out-of-syncpoint put
            if self.ending is not None:
                raise self.refusal()  # the end command cancelled the wait
        try:
            data, cost = queue.read(message)
            if cost.reads:
                yield from self._charge(cost)
            self.counters.messages_got += 1
            return (yield from self._held(self._get_message(queue, message, uow, data), queue))
        finally:
            self._unlock_queue(queue, message)

    def _get_message(self, queue: Queue, message: Message, uow: UnitOfWork | None, data: bytes) -> Generator:
        if message.persistent:
            stored = queue.file.messages.get(message.msg_id) if queue.file is not None else None
            block = stored.first_block if stored is not None else 0
            record = Get(queue.name, message.msg_id, block, message.length, uow=uow.id if uow else 0)
            try:
                # The persistent get's extra CPU: its path, its record and the copy of its data.
                yield from self._locked_charge(queue, self.cpu.profile.logged_us("get", message.length), message)
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
            # still taken (busy) while it waits: nobody else can get it meanwhile
            waited = (yield from self._force()) if message.persistent else False
            queue.remove(message)
            yield from self._woken(waited)
        else:
            queue.lock(message, uow.id, address)
            prev = uow.ops[-1].address if uow.ops else NO_ADDRESS
            uow.ops.append(Op("get", queue.name, message.msg_id, message.persistent, address, prev, message.length))
            if uow.first != NO_ADDRESS:  # uow.logged
                self._logged_ops += 1
        return GotMessage(message.msg_id, data, message.persistent)

    def _wake_getters(self, queue: Queue) -> None:
        """Wake as many waiting MQGETs as there are messages to take, oldest first (one
        message wakes one waiter: the others sleep on)."""
        getters = queue.getters
        if getters and queue.available:
            n = len(queue.available)
            keep = []
            for entry in getters:
                event = entry[0]
                if event.triggered:
                    continue
                if n:
                    event.succeed(None)
                    n -= 1
                else:
                    keep.append(entry)
            queue.getters = keep

