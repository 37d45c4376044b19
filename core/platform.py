"""The platform plug-in interface: what a platform must answer for the core, what it may
add, what the core offers it back, and the core's checkpoint policy by record count.

The core owns the algorithms (logging, forcing, checkpoints, backout, restart); a platform
answers narrow questions through the objects bundled in :class:`Platform`, each a
``typing.Protocol`` here:

* **addressing** (:class:`~mqlog.core.log.addressing.Addressing`) – what a log address looks like;
* **space** (:class:`PlatformLogSpace`) – where pages go, which copy to read back, what may
  be reused once the log's tail moves, and where restart's control data is kept
  (distributed: the log control file; z/OS: the BSDS). Its optional capabilities (log
  switches, fullness, messages, extents, lost records, figures) have neutral answers in
  :class:`SpaceDefaults`, which a space subclasses: the core reads them all directly;
* **checkpoint policy** (:class:`CheckpointPolicy`) – when to take a checkpoint;
* optional parts, each a field that is None when the platform lacks it: a **space
  policy** (:class:`SpacePolicy`: what to do with long-running units of work as the log
  fills), a **codec** (:class:`DataCodec`: message-data compression, z/OS COMPLOG),
  **shunting** (:class:`Shunting`, z/OS), **media images** (:class:`MediaImages`,
  distributed linear logs), records added to every checkpoint, and a **console** that
  words the core's events as the platform's messages;
* settings: the write buffer, whether a persistent put may go to a waiting getter without
  a log write, whether a full log makes work wait, whether open units of work pin the log.

In return the queue manager hands platforms :class:`QueueManagerServices` (``qm.services``):
logging a record, claiming log space, the replay point of a snapshot, the checkpoint
number. Platforms implement all this by composition – small objects with these methods –
rather than by subclassing a base queue manager (ZODB's "attractive nuisance").

:func:`mqlog.core.reference.reference_platform` is the core's own: one growing log file, no
space limits, a checkpoint every ``checkpoint_records`` records, neutral messages. It serves
the core's tests as ZODB's MappingStorage serves ZODB's.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Callable, Generator, Mapping, Protocol, Sequence

import attrs

from mqlog.core.log.addressing import Addressing
from mqlog.core.errors import ParameterError
from mqlog.core.format.records import NO_ADDRESS, Codec, Get, Put
from mqlog.core.log.space import LogSpace, NoBackgroundCopies


@attrs.frozen
class LogControl:
    """What restart needs to find its way into the log, kept beside it by the platform."""

    #: address of the Begin record of the last *complete* checkpoint (NO_ADDRESS: none yet)
    checkpoint: int = NO_ADDRESS
    #: the oldest address restart may need (the log's tail)
    tail: int = 0
    #: number of the last complete checkpoint
    checkpoint_number: int = 0
    #: the oldest media recovery record of any queue (NO_ADDRESS: none): the log media
    #: recovery needs starts there (MEDIALOG); spaces without media recovery ignore it
    media: int = NO_ADDRESS
    #: where redo must begin when the queue files lack changes older than the checkpoint
    #: (NO_ADDRESS: they hold everything before it): the put record of the oldest message a
    #: checkpoint left out of them (:attr:`Platform.checkpoint_write_lag`; MQ for z/OS's
    #: page-set recovery RBA)
    redo_from: int = NO_ADDRESS

    @property
    def restart_from(self) -> int:
        """Where restart's replay begins: the checkpoint, or the oldest change the queue
        files lack if that is older."""
        return min(self.checkpoint, self.redo_from)  # (NO_ADDRESS is the largest address)


class PlatformLogSpace(LogSpace, Protocol):
    """A log space that also manages reuse, fullness and control data.

    Required: :meth:`release`, :meth:`usage`, :meth:`save_control`, :meth:`load_control`
    (and the writer's :class:`LogSpace` methods). The rest are capabilities a space may
    lack; :class:`SpaceDefaults` gives each its neutral answer, so a space that subclasses
    it defines only what it has. The core reads every one of them directly: nothing is
    discovered by probing."""

    #: log switches so far (to the next file or data set); the queue manager acts on each
    #: new one (a checkpoint may be due, long-running units of work are reported)
    switches: int
    #: archive offloads completed so far (metrics)
    archive_offloads: int
    #: (event, fields) the space has to say, in the platform's messages: the queue manager
    #: removes each as it says it
    events: list[tuple[str, dict]]

    @property
    def capacity_bytes(self) -> int:
        """The active log's size in bytes (0: unbounded)."""

    def release(self, tail: int) -> None:
        """Nothing before ``tail`` is needed for restart any more: the space may reuse it
        (circular), make it inactive (linear) or archive it (z/OS). This is the archive
        hook: what a space archives it must still serve from :meth:`read_page`, which is
        how restart and backout read records that have left the active log."""

    def usage(self, head: int, tail: int) -> float:
        """How full the log is with ``tail``..``head`` in use, as a fraction of what it
        may use (0 for a space without limits)."""

    def save_control(self, control: LogControl) -> None:
        """Keep ``control`` durably and atomically (a crash leaves the old or the new)."""

    def load_control(self) -> LogControl | None:
        """The control data last saved, or None for a new log."""

    def free_bytes(self, head: int, tail: int) -> int | None:
        """How many more bytes the log can take before it is full;
        None: it never fills."""

    def recovery_extents(self) -> tuple[str, str] | None:
        """The oldest log files restart and media recovery need (reported
        when they change; "" for one not needed), or None: the space does not say."""

    def lost(self, address: int) -> bool:
        """Whether the record at ``address`` was overwritten for good (z/OS with archiving
        off): a unit of work that needs it cannot be backed out."""

    #: the code the platform's operators know that refusal by ("" for none): it leads the
    #: error restart raises (z/OS: the abend and reason code of a backout that failed)
    lost_code: str

    def metrics(self) -> dict:
        """The space's own figures for the run's metrics (``platform_*``)."""

    def resource_monitor(self, head: int, writer_stats: dict) -> dict:
        """Resource-monitor figures (``platform_*``) with the head at ``head``."""

    def high_water(self) -> int | None:
        """The control data's high-water mark: every page below this address held good log
        when the control data was last saved (None: the space keeps none). Restart refuses a
        log that ends below it."""

    def scan_to(self, address: int) -> int | None:
        """Past a bad page at ``address``, the address up to which later writes may lie: the
        end of the last file the control data says is in use (None: the reader's own few
        pages)."""

    def scan_page(self, address: int) -> tuple[bytes, str, int]:
        """:meth:`read_page` for the checks restart makes that MQ's restart does not (the first
        page of each file, the read past the end of the log beyond the few pages MQ reads):
        the same bytes, counted in none of the space's figures (their I/O is not charged)."""

    def unwritten_run(self, address: int, limit: int) -> int:
        """How many pages from ``address`` (below ``limit``) :meth:`scan_page` would return
        as zeros, found without reading them one by one (restart's scan past the end of the
        log: thousands of pages never written); 0 where the space cannot tell cheaply."""

    def check_files(self, start: int) -> None:
        """Before restart reads the log from ``start``: compare each log file the control data
        lists with it (its first page holds the address the control data gives it), raising
        :class:`~mqlog.core.errors.LogCorruptionError` in the platform's words if not."""


class SpaceDefaults(NoBackgroundCopies):
    """The neutral answers of a :class:`PlatformLogSpace`'s optional capabilities: never
    switches, never fills, loses nothing, has nothing to say or to report, copies nothing in
    the background. A platform's space subclasses this and overrides what it has."""

    switches: int = 0
    archive_offloads: int = 0
    #: empty and immutable here: a space that has messages keeps its own list
    events: Sequence[tuple[str, dict]] = ()
    capacity_bytes: int = 0
    lost_code: str = ""

    def free_bytes(self, head: int, tail: int) -> int | None:
        return None

    def recovery_extents(self) -> tuple[str, str] | None:
        return None

    def lost(self, address: int) -> bool:
        return False

    def metrics(self) -> dict:
        return {}

    def resource_monitor(self, head: int, writer_stats: dict) -> dict:
        return {}

    def high_water(self) -> int | None:
        return None

    def scan_to(self, address: int) -> int | None:
        return None

    def scan_page(self, address: int) -> tuple[bytes, str, int]:
        return self.read_page(address)

    def unwritten_run(self, address: int, limit: int) -> int:
        return 0

    def check_files(self, start: int) -> None:
        return None


class CheckpointPolicy(Protocol):
    """When to take a checkpoint. The queue manager asks after each logged record, when the
    platform reports a log switch, and every ``interval_us`` (so an idle queue manager
    still checkpoints on time). ``records_since`` counts the records :meth:`counts` says
    count towards the next checkpoint."""

    #: how often to ask with no record logged (virtual µs); None or 0: only when records are logged
    interval_us: float | None

    def counts(self, record) -> bool:
        """Whether appending ``record`` counts towards the next checkpoint."""

    def due(self, records_since: int, us_since: float, switched: bool = False) -> bool:
        """Whether a checkpoint should start now (``switched``: the log just switched to its
        next file or data set)."""


@attrs.frozen
class UowView:
    """What a space policy sees of an active unit of work."""

    uow: int
    first: int  # address of its first record
    prepared: bool
    begin_us: float
    #: older than the last checkpoint, so it holds the log's tail (a checkpoint cannot free it)
    pins_tail: bool = True
    #: checkpoints it has been through since it began or was last shunted
    checkpoints_since_mark: int = 0


@attrs.frozen
class SpaceAction:
    """A space policy's decision about one unit of work."""

    uow: int
    action: str  # "rollback" or "rollforward"


class SpacePolicy(Protocol):
    """What to do when the log is getting full (distributed: the 80% rule)."""

    #: the log's usage (0..1) from which a checkpoint is taken to move the tail (0.5 is usual)
    checkpoint_at: float
    #: the usage (0..1) below which :meth:`relieve` never acts: the queue manager does not ask
    #: below it (describing every open unit of work at every check costs in proportion to
    #: them; at hundreds of applications that was a third of a run)
    relieve_from: float

    def relieve(self, usage: float, uows: Sequence[UowView]) -> Sequence[SpaceAction]:
        """When the log is getting full: which units of work to roll back or forward (the
        oldest first), or nothing."""


class DataCodec(Protocol):
    """Compression of persistent message data in put records (z/OS COMPLOG)."""

    @property
    def active(self) -> bool:
        """Whether data is offered to :meth:`compress` at all (False: COMPLOG(NONE), but
        records compressed earlier are still decoded)."""

    def stats(self) -> dict:
        """The codec's counters for the run's metrics (``platform_*``; {} for none)."""

    def compress(self, data: bytes, *, kept: bool = False) -> tuple[Codec, bytes, tuple[str, ...]]:
        """The codec chosen, the stored bytes (Codec.NONE and ``data`` to leave it) and the
        algorithms that scanned the data (names a host profile prices: "rle", "zstd"; the
        queue manager charges their CPU per byte to the putting call). ``kept``: the queue is
        kept outside the queue manager (a z/OS shared queue), which a platform may refuse to
        compress."""

    def decode(self, codec: Codec, stored: bytes) -> bytes:
        """The original data; raise LogFormatError for bytes the codec cannot expand."""


class ShuntPolicy(Protocol):
    def select(self, checkpoint_number: int, uows: Sequence[UowView]) -> Sequence[int]:
        """At a checkpoint: the units of work whose records should be shunted."""


@attrs.frozen
class Shunting:
    """Log shunting (z/OS): after a checkpoint, units of work the ``policy`` selects get a
    round of backout-only copies of their records at the head of the log, made by
    ``make_round(uow, prev, ops) -> records``."""

    policy: ShuntPolicy
    make_round: Callable


@attrs.frozen
class MediaImages:
    """Media recovery (distributed linear logs): damaged queues are re-created from their
    images and the log (automatically at restart, rcrmqobj on request).

    ``image_record(queue, image_id, segment, segments, data)`` builds the platform's record
    for one piece of an image; ``schedule``: automatic images (MQ's IMGSCHED(AUTO)), None
    for only on request and at shutdown."""

    image_record: Callable
    schedule: "ImageSchedule | None" = None


class QueueManagerServices(Protocol):
    """What the queue manager offers a platform (``qm.services``; the core's media images
    use it too). A platform uses only this, never the queue manager's private members."""

    @property
    def checkpoint_number(self) -> int:
        """The number of the last checkpoint taken."""

    @property
    def queues(self) -> Mapping[str, object]:
        """The queue manager's queues by name, to read."""

    def log(self, record) -> Generator:
        """Append ``record`` as essential work; returns (``yield from``) its address."""

    def log_space(self, nbytes: int) -> AbstractContextManager[None]:
        """Hold ``nbytes`` of log space for a ``with`` body (MqiError 2102 if there is none)."""

    def replay_point(self) -> int:
        """Where replay would start to bring a snapshot taken now up to date."""

    def holding(self, address: int) -> AbstractContextManager[None]:
        """Keep the replay point at or before ``address`` for a ``with`` body."""

    def imaging(self, queue: str) -> AbstractContextManager[None]:
        """Mark ``queue``'s media image as being written for a ``with`` body."""

    def is_imaging(self, queue: str) -> bool:
        """Whether ``queue``'s media image is being written."""

    def queue(self, name: str):
        """The queue as an MQI call sees it (MqiError if unknown or damaged)."""

    def charge(self, cost) -> Generator:
        """Charge queue-file I/O to the device."""


class ErrorLogFormat(Protocol):
    """How a platform's error log file (``Platform.error_log``) lays out what the queue
    manager said, each line stamped with its virtual time (µs after
    :data:`mqlog.core.messages.VIRTUAL_EPOCH`, never the wall clock)."""

    def entries(self, lines: Sequence[str], base_us: float) -> str:
        """The text to append for ``lines`` (``qm.messages``, see
        :func:`mqlog.core.messages.timed_lines`), the queue manager's clock starting at
        ``base_us``."""

    def clock_us(self, text: str) -> float | None:
        """The latest time stamped in ``text`` (what this format wrote), or None."""


#: A console hook: formats an event of the core's as the platform's message, or None. An event
#: about a unit of work names it by ``uow`` (the queue manager's number for it) and ``begin``
#: (the address of its Begin record, where it started on the log: re-logging it – a round of
#: shunting, a roll forward – does not move that), so a platform that names units by where
#: they start needs nothing else of the queue manager's.
Console = Callable[[str, dict], "str | None"]


#: endmqm's options for the three shutdown modes (IBM MQ, "endmqm (end queue manager)")
ENDMQM = {"controlled": "endmqm -c", "immediate": "endmqm -i", "preemptive": "endmqm -p"}


@attrs.define
class RuntimeSettings:
    """The platform's settings that may change while the queue manager runs: the checkpoint
    policy (an operator's command may change its cadence) and the addressing that stamps
    records (queue managers that share a stamp clock draw from one). The :class:`Platform`
    bundle stays as configured (frozen); the queue manager's policies read these instead,
    so a command changes one mutable object rather than the bundle."""

    checkpoint_policy: CheckpointPolicy
    addressing: Addressing


@attrs.frozen
class Platform:
    """Everything the core asks a platform, in one bundle. What may change while it runs is
    in :attr:`settings` (:class:`RuntimeSettings`), made from the bundle's own fields."""

    name: str
    addressing: Addressing
    space: PlatformLogSpace
    checkpoint_policy: CheckpointPolicy
    #: what to do when the log is getting full; None: nothing (the log never fills, or
    #: new work waits or is refused when it does)
    space_policy: SpacePolicy | None = None
    #: message-data compression; None: data is logged as it is
    codec: DataCodec | None = None
    #: log shunting; None: the platform does not shunt
    shunting: Shunting | None = None
    #: the platform's messages; None: it says nothing
    console: Console | None = None
    #: whether a persistent MQPUT outside syncpoint may go straight to a getter waiting
    #: outside syncpoint without a log write (distributed yes; z/OS only non-persistent)
    persistent_put_to_waiting_getter: bool = True
    #: write-threshold (full pages that start an unforced write; None: only a force or a full
    #: buffer starts one) and buffer size in pages
    write_threshold_pages: int | None = 20
    buffer_pages: int = 512
    pad_policy: Callable[[int], bool] | None = None
    #: persistent bytes a queue keeps in memory before spilling to its file, where the
    #: platform's configuration sets it (distributed qm.ini DefaultPQBufferSize); None: the
    #: queue manager's own (:class:`mqlog.core.qm.config.QmConfig`)
    queue_buffer_bytes: int | None = None
    #: how a queue file's writes reach the device (:mod:`mqlog.core.disk.filecache`):
    #: ``"cached"``, through the host's page cache, forced at the next checkpoint (a Linux
    #: queue manager's files); ``"deferred"``, written at once by a task of the queue
    #: manager's that the call does not wait for, a checkpoint waiting for what it started
    #: (MQ for z/OS's deferred write processor and its page sets)
    queue_file_writes: str = attrs.field(default="cached", validator=attrs.validators.in_(("cached", "deferred")))
    #: ``"deferred"``: bytes of one queue file's writes that may wait behind the calls; a
    #: spill that would leave more is written in the putting call (None: no bound)
    queue_writes_behind_max: int | None = None
    #: how many checkpoints a queue-file change may live through unwritten: 0, each checkpoint
    #: writes every change before it (MQ on Linux); 1, a checkpoint in normal running writes
    #: only the messages put before the previous checkpoint began – those that have been
    #: waiting for write through two checkpoints (MQ for z/OS's buffer manager: QPSTIMW counts
    #: "pages ... waiting for write I/O that had been there for at least two checkpoints") –
    #: and restart redoes from the oldest change left unwritten (the page set's recovery RBA),
    #: so a short-lived message never reaches its page set. The checkpoints at start, restart
    #: and shutdown write everything.
    checkpoint_write_lag: int = attrs.field(default=0, validator=attrs.validators.in_((0, 1)))
    #: a write that carries the forces of more than one caller closes its partial last page
    #: (padding) instead of leaving it to be rewritten (see :mod:`mqlog.core.log.writer`)
    pad_grouped_tail: bool = False
    #: whether the log writer wakes each caller its write released itself, one wake (the host's
    #: ``wake_us``) each on its own thread before its next write, as the distributed logger does
    #: (Colin Paice: when the I/O ends it "wakes any tasks waiting on it"; F7's duty); False: the
    #: platform's logger charges nothing for it (z/OS: its log manager's CPU per posted waiter has
    #: no IBM figure yet, and the host's futex figure is a Linux one)
    writer_wakes_callers: bool = False
    #: whether the log writer pays the host's ``log_io_us`` of its own CPU for each physical
    #: write it starts (issuing it, and being dispatched again when it completes), before it
    #: starts: MQ for z/OS's single logger task "schedules the write, waits for it to complete,
    #: and then moves on", and when the write completes it "must wait for a CPU to become
    #: available, adding a short re-dispatch delay" (IBM MQ 9.4, "Faster log throughput with
    #: zHyperLink"); False: free (the distributed logger's CPU is its wakes, above)
    writer_io_cpu: bool = False
    #: the most pages one physical write of the log carries; None: a cycle writes everything
    #: buffered in one write
    max_write_pages: int | None = None
    #: the platform's own command for each shutdown mode (controlled, immediate, preemptive:
    #: see :mod:`mqlog.core.workload.run`), for the run's summary and run.json; MQ's endmqm
    #: unless the platform says otherwise
    end_commands: Mapping[str, str] = attrs.field(factory=lambda: dict(ENDMQM))
    #: whether an immediate shutdown backs the units of work in flight out as the queue manager
    #: stops (the shutdown checkpoint then lists none), rather than leaving them to the next
    #: restart, as endmqm -i does ("rolled back when the queue manager is next started")
    stop_backs_out_in_flight: bool = False
    #: the file the platform's messages go to beside its files (distributed: AMQERR01.LOG)
    error_log: str = "messages.log"
    #: how that file stamps and lays out each message; None: one message a line, as said
    error_log_format: ErrorLogFormat | None = None
    #: media images and media recovery; None: the platform takes no images, and a damaged
    #: queue stays damaged until it is deleted
    media: MediaImages | None = None
    #: when the log is full, new work waits until a checkpoint or an offload frees space
    #: (z/OS) instead of being refused with MQRC_RESOURCE_PROBLEM (distributed)
    full_log_waits: bool = False
    #: whether an open unit of work keeps the log behind it from being reused (distributed);
    #: on z/OS the log behind it is archived (or, with archiving off, overwritten) instead
    uows_pin_log: bool = True
    #: the platform's own record classes (LogRecord subclasses with codes in its range):
    #: its logs are decoded with these and the core's
    record_types: tuple = ()
    #: ``checkpoint_records(services, begin) -> records`` the platform adds to every checkpoint,
    #: between its Begin and End (z/OS page-set control records)
    checkpoint_records: Callable | None = None
    #: ``attach(queue_manager)``, called by a run once the queue manager is built and before
    #: it starts: what the platform sets up around it (queues it keeps outside the queue
    #: manager, each with its keeper, say); None: nothing
    attach: Callable | None = None
    #: why the files a run of this platform leaves cannot be restarted (what ``attach`` set up
    #: lives only in the run), or None: restart refuses with this as its message rather than
    #: report the work kept outside the queue manager as lost
    restart_refusal: str | None = None
    #: the settings a run may change (:class:`RuntimeSettings`), from ``checkpoint_policy`` and
    #: ``addressing`` as configured; a copy made by ``attrs.evolve`` starts from them again
    settings: RuntimeSettings = attrs.field(
        init=False, eq=False, repr=False,
        default=attrs.Factory(lambda self: RuntimeSettings(self.checkpoint_policy, self.addressing), takes_self=True))

    def message(self, event: str, **fields) -> str | None:
        if self.console is None:
            return None
        return self.console(event, fields)


# --- the reference platform ----------------------------------------------------------------

@attrs.frozen
class ImageSchedule:
    """When the queue manager takes media images by itself (MQ's IMGSCHED(AUTO)): a queue
    is imaged once ``interval_us`` has passed since its last image (IMGINTVL) or once
    ``log_bytes`` have been logged since (IMGLOGLN); either may be None (OFF)."""

    interval_us: float | None = 60 * 60e6
    log_bytes: int | None = None

    def due(self, us_since: float, bytes_since: int) -> bool:
        return (self.interval_us is not None and us_since >= self.interval_us) or (
            self.log_bytes is not None and bytes_since >= self.log_bytes)


#: What a record-count checkpoint policy counts (``RecordCountCheckpoints.basis``):
#: "records": every record the queue manager logs (IBM's current parameter is
#: CheckPointLogRecdMax, "log records"; the IBM i checkpoint page and z/OS LOGLOAD count log
#: records too); "operations": persistent MQPUT and MQGET operations only, the basis of IBM's
#: V6/V7 checkpoint technote ("10,000 persistent MQGET and/or MQPUT operations"). Under
#: "operations" a message put and got under syncpoint counts 2 (its Put and Get records),
#: under "records" it counts every record it took, commits included.
CHECKPOINT_BASES = ("records", "operations")


def _check_basis(instance, attribute, value) -> None:
    if value not in CHECKPOINT_BASES:
        raise ParameterError("checkpoint_basis", value, " or ".join(CHECKPOINT_BASES))


@attrs.frozen
class RecordCountCheckpoints:
    """A checkpoint after every ``records`` counted records, or every ``interval_us`` if at
    least ``min_records`` were counted (distributed CheckPointLogRecdMax/WaitLen/RecdMin).
    ``basis`` says which records count (:data:`CHECKPOINT_BASES`)."""

    records: int = 10_000
    interval_us: float = 30 * 60 * 1e6
    min_records: int = 100
    on_switch: bool = False  # z/OS takes one at every log switch
    basis: str = attrs.field(default="records", validator=_check_basis)

    def counts(self, record) -> bool:
        # A message's first Put record is the operation; its PutSegments are not operations
        # of their own (a segmented message is one MQPUT).
        return self.basis == "records" or type(record) in (Put, Get)

    def due(self, records_since: int, us_since: float, switched: bool = False) -> bool:
        return (records_since >= self.records or (switched and self.on_switch)
                or (us_since >= self.interval_us and records_since >= self.min_records))
