"""What a platform must answer for the core, and the core's own reference platform.

The core owns the algorithms (logging, forcing, checkpoints, backout, restart); a platform
answers narrow questions through the objects bundled in :class:`Platform`:

* **addressing** (:mod:`~mqlog.core.addressing`) – what a log address looks like;
* **space** (:class:`PlatformLogSpace`) – where pages go, which copy to read back, what may
  be reused once the log's tail moves, how full the log is, and where the control data
  restart starts from is kept (distributed: the log control file; z/OS: the BSDS);
* **checkpoint policy** – when to take a checkpoint (records, time, log switch);
* **space policy** – what to do with long-running units of work when the log is getting
  full (distributed: roll back / roll forward at the 80% mark);
* optional **hooks**: message-data compression (z/OS COMPLOG), shunting at checkpoint
  (z/OS), console messages in the platform's own style and ids.

Platforms implement these by composition – small objects with these methods – rather than
by subclassing a base queue manager (STYLE: ZODB's "attractive nuisance").

:func:`reference_platform` is the core's own: one growing log file, no space limits, a
checkpoint every ``checkpoint_records`` records, neutral messages. It serves the core's
tests as ZODB's MappingStorage serves ZODB's.
"""

from __future__ import annotations

import struct
import zlib
from typing import Callable, Protocol, Sequence

import attrs

from mqlog.core.addressing import Addressing, PlainAddressing
from mqlog.core.errors import LogFormatError, ParameterError
from mqlog.core.messages import REFERENCE_CONSOLE
from mqlog.core.records import NO_ADDRESS, Codec
from mqlog.core.space import LogSpace, ReferenceLogSpace
from mqlog.core.storage import Storage


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


class PlatformLogSpace(LogSpace, Protocol):
    """A log space that also manages reuse, fullness and control data."""

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

    # Optional: ``free_bytes(head, tail) -> int`` – how many more bytes the log can take
    # before it is full (AMQ7463). A space without it never fills. ``events`` – a list the
    # space appends (event, fields) to for the queue manager's messages.


class CheckpointPolicy(Protocol):
    """When to take a checkpoint. The queue manager asks after each logged record, when the
    platform reports a log switch, and every ``interval_us`` if the policy has one (so an
    idle queue manager still checkpoints on time)."""

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
    def relieve(self, usage: float, uows: Sequence[UowView]) -> Sequence[SpaceAction]:
        """When the log is getting full: which units of work to roll back or forward (the
        oldest first), or nothing."""


class DataCodec(Protocol):
    """Compression of persistent message data in put records (z/OS COMPLOG). A codec may
    have an ``active`` attribute: False while it compresses nothing (COMPLOG(NONE))."""

    def encode(self, data: bytes) -> tuple[Codec, bytes]:
        """The codec chosen and the stored bytes (Codec.NONE and ``data`` to leave it)."""

    def decode(self, codec: Codec, stored: bytes) -> bytes:
        """The original data; raise LogFormatError for bytes the codec cannot expand."""


class ShuntPolicy(Protocol):
    def select(self, checkpoint_number: int, uows: Sequence[UowView]) -> Sequence[int]:
        """At a checkpoint: the units of work whose records should be shunted."""


#: A console hook: formats an event of the core's as the platform's message, or None.
Console = Callable[[str, dict], "str | None"]


@attrs.frozen
class Platform:
    """Everything the core asks a platform, in one bundle."""

    name: str
    addressing: Addressing
    space: PlatformLogSpace
    checkpoint_policy: CheckpointPolicy
    space_policy: SpacePolicy | None = None
    codec: DataCodec | None = None
    shunting: ShuntPolicy | None = None
    console: Console | None = None
    #: whether a persistent MQPUT outside syncpoint may go straight to a getter waiting
    #: outside syncpoint without a log write (distributed yes; z/OS only non-persistent)
    persistent_put_to_waiting_getter: bool = True
    #: write-threshold (full pages that start an unforced write) and buffer size in pages
    write_threshold_pages: int = 20
    buffer_pages: int = 512
    pad_policy: Callable[[int], bool] | None = None
    #: the file the platform's messages go to beside its files (distributed: AMQERR01.LOG)
    error_log: str = "messages.log"
    #: whether damaged queues can be re-created from media images and the log (distributed
    #: linear logs): restart then does it automatically, rcrmqobj on request
    media_recovery: bool = False
    #: the platform's media-image record, ``(queue, image_id, segment, segments, data)``
    #: (None: the platform takes no images)
    media_image_record: Callable | None = None
    #: automatic media images (MQ's IMGSCHED(AUTO)); None: only on request and at shutdown
    image_schedule: "ImageSchedule | None" = None
    #: ``shunt_round(uow, prev, ops) -> records``: a round of shunting for the ``shunting``
    #: policy's choices (z/OS); None: the platform does not shunt
    shunt_round: Callable | None = None
    #: when the log is full, new work waits until a checkpoint or an offload frees space
    #: (z/OS CSQJ111A) instead of being refused with MQRC_RESOURCE_PROBLEM (distributed)
    full_log_waits: bool = False
    #: whether an open unit of work keeps the log behind it from being reused (distributed);
    #: on z/OS the log behind it is archived (or, with archiving off, overwritten) instead
    uows_pin_log: bool = True
    #: ``checkpoint_records(qm, begin) -> records`` the platform adds to every checkpoint,
    #: between its Begin and End (z/OS page-set control records)
    checkpoint_records: Callable | None = None

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


@attrs.frozen
class RecordCountCheckpoints:
    """A checkpoint after every ``records`` logged records, or every ``interval_us`` if at
    least ``min_records`` were logged (distributed CheckPointLogRecdMax/WaitLen/RecdMin)."""

    records: int = 10_000
    interval_us: float = 30 * 60 * 1e6
    min_records: int = 100
    on_switch: bool = False  # z/OS takes one at every log switch

    def due(self, records_since: int, us_since: float, switched: bool = False) -> bool:
        return (records_since >= self.records or (switched and self.on_switch)
                or (us_since >= self.interval_us and records_since >= self.min_records))


_CONTROL = struct.Struct("<4sHQQQI")
_CONTROL_MAGIC = b"MQLC"


class ReferenceSpace(ReferenceLogSpace):
    """The reference log space with control data in a small file beside the log."""

    def __init__(self, storage: Storage, *, file: str = "reference.log", control_file: str = "reference.ctl",
                 start: int = 0):
        super().__init__(storage, file=file, start=start)
        self.control_file = control_file
        self.tail = start

    def release(self, tail: int) -> None:
        self.tail = max(self.tail, tail)

    def usage(self, head: int, tail: int) -> float:
        return 0.0

    def save_control(self, control: LogControl) -> None:
        body = _CONTROL.pack(_CONTROL_MAGIC, 1, control.checkpoint, control.tail, control.checkpoint_number, 0)
        crc = zlib.crc32(body[:-4])
        self.storage.replace(self.control_file, body[:-4] + crc.to_bytes(4, "little"))

    def load_control(self) -> LogControl | None:
        if not self.storage.exists(self.control_file):
            return None
        raw = self.storage.read(self.control_file, 0, _CONTROL.size)
        if len(raw) != _CONTROL.size:
            raise LogFormatError(f"control file is {len(raw)} bytes, expected {_CONTROL.size}",
                                 source=self.control_file, offset=0)
        magic, version, checkpoint, tail, number, crc = _CONTROL.unpack(raw)
        if magic != _CONTROL_MAGIC or version != 1 or zlib.crc32(raw[:-4]) != crc:
            raise LogFormatError("not a valid log control file (magic, version or checksum)",
                                 source=self.control_file, offset=0)
        return LogControl(checkpoint, tail, number)


def reference_console(event: str, fields: dict) -> str | None:
    """The reference platform's messages: plain text, no message ids (platforms have their own)."""
    return REFERENCE_CONSOLE(event, fields)


def reference_platform(storage: Storage, *, checkpoint_records: int = 10_000, codec: DataCodec | None = None,
                       space_policy: SpacePolicy | None = None, shunting: ShuntPolicy | None = None,
                       buffer_pages: int = 512, write_threshold_pages: int = 20,
                       pad_partial_pages: bool = False) -> Platform:
    """The core's own platform: one growing log file, no limits, plain addresses.

    Like MQ's SingleWrite it rewrites a partial page in place, so a torn rewrite can take
    records an earlier force hardened on that page; with ``pad_partial_pages`` it never
    rewrites a page (each write starts on a fresh one), which makes it survive torn writes
    at the cost of padding."""
    if not 1 <= checkpoint_records <= 16_000_000:
        raise ParameterError("checkpoint_records", checkpoint_records, "1 to 16000000")
    return Platform(
        name="reference",
        addressing=PlainAddressing(),
        space=ReferenceSpace(storage),
        checkpoint_policy=RecordCountCheckpoints(records=checkpoint_records),
        space_policy=space_policy,
        codec=codec,
        shunting=shunting,
        console=reference_console,
        buffer_pages=buffer_pages,
        write_threshold_pages=write_threshold_pages,
        pad_policy=(lambda used: True) if pad_partial_pages else None,
    )
