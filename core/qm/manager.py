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

This module owns starting and stopping, queue definitions and appending records
(:meth:`_log`). The queue manager is composed of parts, each with its own state and
interface: the unit-of-work table (:class:`~mqlog.core.qm.uowtable.UowTable`: open units,
their age index, numbers, the operations the reserve counts), the checkpoint schedule
(:class:`~mqlog.core.qm.checkpointing.CheckpointSchedule`: the last checkpoint, what is counted
towards the next), the log reserve (:class:`~mqlog.core.qm.logspace.LogReserve`: room held
back and claimed, the log-full episode) and the run's settings (the platform's
:class:`~mqlog.core.platform.RuntimeSettings`). Its methods are grouped in mixins, one module
each and with no state of their own: MQPUT and MQGET (:mod:`.mqi`), units of work and
syncpoint (:mod:`.syncpoint`), log space and the log-full episode (:mod:`.logspace`), checkpoints
and what follows them (:mod:`.checkpointing`), shunting (:mod:`.shunting`). Restart recovery
(:mod:`mqlog.core.recovery.restart`) works through the narrow
:class:`~mqlog.core.recovery.protocol.RecoveryTarget`, and hands what replay recovered to
:meth:`QueueManager.recovered`.

The per-record path reads the parts' public attributes, bound once a call, rather than
calling them (``perf/cost_breakdown.py`` counts what each attribute hop costs there).
"""

from __future__ import annotations

from typing import Callable, Generator

import simpy

from mqlog.core.disk.devices import Device
from mqlog.core.disk.filecache import QueueFileCache
from mqlog.core.disk.storage import Storage
from mqlog.core.errors import LogFileMissingError
from mqlog.core.host.profiles import DEFAULT_HOST, Cpu, HostProfile
from mqlog.core.format.records import NO_ADDRESS, Begin, ObjectAction, ObjectChange, ObjectType
from mqlog.core.log.writer import LogWriter
from mqlog.core.messages import Said
from mqlog.core.objects.queuefile import QueueFile, file_name_for, list_queue_files
from mqlog.core.objects.queues import DamagedQueue, Queue
from mqlog.core.objects.uow import MEMBER_SHIFT, MqiError, Reason, UnitOfWork, UowState
from mqlog.core.platform import Platform
from mqlog.core.qm.checkpointing import CheckpointMixin, CheckpointSchedule
from mqlog.core.qm.config import QmConfig, QmCounters
from mqlog.core.qm.connection import Connection
from mqlog.core.qm.logspace import LogReserve, LogSpaceMixin
from mqlog.core.qm.mqi import MqiCallsMixin
from mqlog.core.qm.services import QmServices
from mqlog.core.qm.shunting import ShuntingMixin
from mqlog.core.qm.syncpoint import UnitsOfWorkMixin
from mqlog.core.qm.uowtable import UowTable
from mqlog.core.qm.waits import Deadlines, Marks
from mqlog.core.recovery.protocol import RecoveredState
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


class QueueManager(MqiCallsMixin, UnitsOfWorkMixin, LogSpaceMixin, CheckpointMixin, ShuntingMixin):
    """The core queue manager over one platform's log: its parts (``units``, ``schedule``,
    ``reserve``, ``settings``) and the rest of its state are set up here; the mixins group
    its methods (see the module docstring)."""

    def __init__(self, env: simpy.Environment, platform: Platform, storage: Storage, device: Device,
                 config: QmConfig = QmConfig(), host: HostProfile | str = DEFAULT_HOST, seed: int = 0):
        self.env = env
        self.platform = platform
        self.storage = storage
        self.device = device
        self.config = config
        #: what may change while it runs (the checkpoint policy's cadence, the stamp clock):
        #: the platform's :class:`~mqlog.core.platform.RuntimeSettings`, read
        #: by the policies here rather than the frozen bundle
        self.settings = platform.settings
        #: persistent bytes a queue keeps in memory before spilling to its file: the
        #: platform's setting where it has one, else the queue manager's
        self.queue_buffer_bytes = (platform.queue_buffer_bytes if platform.queue_buffer_bytes is not None
                                   else config.persistent_buffer_bytes)
        # the space places its copies by what a crash can split on this device
        platform.space.atomic_write_bytes = device.profile.atomic_write_bytes
        #: the host's cores: every MQI call's CPU is charged here, and restart's (one thread);
        #: ``seed`` is the run's, for the charges' jitter (the host profile's ``cpu_jitter``)
        self.cpu = Cpu(env, host, seed)
        self.queues: dict[str, Queue] = {}
        self.damaged: dict[str, DamagedQueue] = {}
        #: the units of work: open ones, the age index of the logged ones, numbers, op counts
        self.units = UowTable()
        self.uows: dict[int, UnitOfWork] = self.units.open
        #: the table's age index, bound here: the tail and the log reserve read it on every record
        self._ages = self.units.ages
        self.counters = QmCounters()
        #: the host's cache of queue-file pages (where a queue file's writes wait for the next
        #: checkpoint, on a platform whose queue files are written through it), and the
        #: queue-file writes in progress that no call waits for (the other platforms)
        self.file_cache = QueueFileCache()
        self.writes_behind: list = []
        #: per queue file, bytes of those writes not yet done (None: a write with no known file)
        self.bytes_behind: dict[str | None, int] = {}
        self.messages: list[str] = []  # console / error-log lines in the platform's style
        self.writer: LogWriter | None = None
        self.recovery = None  # the RecoveryReport of the last restart
        #: what this queue manager offers platforms (QueueManagerServices)
        self.services = QmServices(self)
        #: MQGETs' wait intervals (one timeout pending, not one a wait)
        self._deadlines = Deadlines(env)
        self._msg_counter = 0
        self._incarnation = 0
        #: when the next checkpoint is due, and where the last one is
        self.schedule = CheckpointSchedule()
        self._appends = 0
        #: the log space held back for what must not fail, claims on it, the log-full episode
        self.reserve = LogReserve()
        self._imaging = False  # automatic media images in progress
        self._switches_seen = 0  # the space's log switches already acted on
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
        self.drain_space_events()
        if control is None:
            refuse_queue_files_without_log(self.storage)
            self.writer = self._new_writer()
            yield from self.checkpoint("start")
            self._begin_incarnation()
            return None

        report = self.recovery = yield from restart(self, control)
        self._begin_incarnation()
        return report

    def recovered(self, state: RecoveredState) -> None:
        """Take on what restart's replay recovered (the restart protocol:
        :class:`~mqlog.core.recovery.protocol.RecoveryTarget`): the last checkpoint's number
        and address, units of work numbered past every one in the log, and a log writer
        resumed at the end of the log replay reached."""
        self.writer = self._new_writer(state.log_end)
        self.schedule.recovered(state.checkpoint_number, state.checkpoint_address, state.redo_from)
        self.units.number_from(state.next_uow)

    def hold_in_doubt(self, uow: UnitOfWork) -> None:
        """Restart left ``uow`` in doubt: it is open, and holds the log from its first record."""
        self.units.restored(uow)

    def _begin_incarnation(self) -> None:
        # Each start or restart ends with a checkpoint whose number no earlier incarnation
        # reached: message ids and UOW ids carry it, so they never repeat across restarts.
        self._incarnation = self.schedule.number
        self.units.number_from((self.config.member << MEMBER_SHIFT) | (self._incarnation << 32) + 1)
        self._msg_counter = 0

    def _wake_cost(self, woken: int) -> Generator:
        """The log writer's CPU to wake ``woken`` callers its write released."""
        yield from self.cpu.charge(woken * self.cpu.profile.wake_us, "logger")

    def _io_cost(self, writes: int) -> Generator:
        """The log writer's CPU to start ``writes`` physical writes and take their completions."""
        yield from self.cpu.charge(writes * self.cpu.profile.log_io_us, "logger")

    def _new_writer(self, reader=None) -> LogWriter:
        p = self.platform
        kwargs = dict(buffer_pages=p.buffer_pages, write_threshold_pages=p.write_threshold_pages,
                      addressing=self.settings.addressing, pad_policy=p.pad_policy, pad_grouped_tail=p.pad_grouped_tail,
                      wake_cost=self._wake_cost if p.writer_wakes_callers else None,
                      # (a host whose logger's writes cost nothing has no charge to make a group)
                      io_cost=self._io_cost if p.writer_io_cpu and self.cpu.profile.log_io_us else None,
                      max_write_pages=p.max_write_pages)
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
        yield self.writer.idle()  # the last cycle in place, not only in TripleWrite's spare
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
            yield from self.device.file_op("create")
            queue = Queue(name, QueueFile.create(self.storage, name, text), max_depth=depth, attributes=text)
        finally:
            del self._defining[name]
        queue.media_address, queue.media_us = address, self.env.now
        self.queues[name] = queue

    def add_kept_queue(self, queue: Queue) -> None:
        """A queue kept outside this queue manager by its ``keeper`` (the platform's, for
        queues several queue managers share) joins its queues: applications use it as one
        of them, and checkpoints leave it to its keeper."""
        if queue.keeper is None:
            raise ValueError(f"{queue.name} has no keeper: define it with define_queue")
        self.queues[queue.name] = queue

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
            yield from self.device.file_op("unlink")
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
        yield from self.device.file_op("unlink")
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
            if self._has_room(claimed):
                self.reserve.claimed += claimed  # room (the usual case): _claim without a generator
            else:
                yield from self._claim_waiting(claimed)
        try:
            address = yield from self.writer.put(record)
        finally:
            if claimed:
                self.reserve.claimed -= claimed
        schedule = self.schedule
        policy = self.settings.checkpoint_policy
        if policy.counts(record):
            schedule.counted += 1
        self._appends += 1
        switches = self.platform.space.switches
        if switches != self._switches_seen:
            self._switches_seen = switches
            self.drain_space_events()
            self._report_long_uows()
            self.log_switched()
        # (the usual answer of _maybe_checkpoint, inlined: not due, or one already running;
        # it asks the policy again, with the rest of what may hold a checkpoint back)
        if not schedule.running and policy.due(schedule.counted, self.env.now - schedule.last_us):
            self._maybe_checkpoint("records")
        if schedule.timer is None:
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
        if uow.first == NO_ADDRESS:  # not uow.logged (without the property's call)
            begin = yield from self._log(Begin(int(self.env.now), uow.application[:28], uow=uow.id))
            uow.first = uow.last = uow.begin = begin
            # (UowTable.logged, inlined: once a unit of work, on the MQI calls' path)
            self._ages.add((begin, uow.id))
            self.units.logged_ops += len(uow.ops)
        address = yield from self._log(record_for(uow.last), essential=essential or ending, need=need)
        if uow.doomed and not ending:
            # Backed out by the queue manager while this call waited for buffer space: the
            # record is in the log, but restart will see it belongs to an ended unit of work.
            raise MqiError(Reason.MQRC_BACKED_OUT, "the queue manager backed the unit of work out to free log space")
        uow.last = address
        return address

    def tail(self) -> int:
        """The oldest log address restart may need: the last checkpoint (or the oldest change
        it left out of the queue files), or the first record of the oldest unit of work still
        open, whichever is older."""
        tail = self.schedule.restart
        if self._ages:
            tail = min(tail, self._ages[0][0])
        return tail
