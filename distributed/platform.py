"""The distributed platform assembled for the core: LSN addresses, the extent space, the
checkpoint and log-space policies, and the queue manager's messages in MQ's style."""

from __future__ import annotations

from typing import Sequence

import attrs

from mqlog.core.log.addressing import PlainAddressing
from mqlog.core.errors import ParameterError
from mqlog.core.platform import ImageSchedule, MediaImages, Platform, RecordCountCheckpoints, SpaceAction, UowView
from mqlog.core.format.records import NO_ADDRESS
from mqlog.core.disk.storage import Storage
from mqlog.distributed import media
from mqlog.distributed.messages import AmqErrLog, console
from mqlog.distributed.space import MANUAL, DistributedLogSpace, extent_name, format_lsn

#: About 20% of the active log is held in reserve so checkpoints can always be
#: written; a unit of work may not hold the log beyond the other 80%.
HEAD_TO_TAIL_LIMIT = 0.80


@attrs.frozen
class LsnAddressing(PlainAddressing):
    """Distributed log sequence numbers: a byte position shown as four 16-bit parts."""

    name: str = "LSN"

    def format(self, address: int) -> str:
        return format_lsn(address)

    def parse(self, text: str) -> int:
        parts = text.strip().strip("<>").split(":")
        try:
            values = [int(p) for p in parts]
        except ValueError:
            values = []
        if len(values) != 4 or not all(0 <= v <= 0xFFFF for v in values):
            raise ParameterError("LSN", text, "<a:b:c:d> with four numbers 0 to 65535")
        return (values[0] << 48) | (values[1] << 32) | (values[2] << 16) | values[3]


@attrs.frozen
class LongRunningUowPolicy:
    """When the head is 80% of the active log ahead of the tail, free space starting with the
    longest-running unit of work: roll it back, or roll it forward if it is prepared (AMQ7469).
    The queue manager asks again as it goes, so several may be sacrificed."""

    limit: float = HEAD_TO_TAIL_LIMIT
    #: from half full, a checkpoint is taken to move the tail before anything is sacrificed
    checkpoint_at: float = 0.5

    @property
    def relieve_from(self) -> float:
        return self.limit

    def relieve(self, usage: float, uows: Sequence[UowView]) -> Sequence[SpaceAction]:
        pinning = [u for u in uows if u.pins_tail]  # a checkpoint frees the log behind the others
        if usage < self.limit or not pinning:
            return []
        oldest = pinning[0]  # by first log address: the longest-running
        return [SpaceAction(oldest.uow, "rollforward" if oldest.prepared else "rollback")]


def distributed_platform(storage: Storage, *, primary: int = 3, secondary: int = 2, file_pages: int = 4096,
                         buffer_pages: int = 512, linear: bool = False, integrity: str = "TripleWrite",
                         checkpoint_records_max: int = 50_000, checkpoint_records_min: int = 100,
                         checkpoint_wait_minutes: int = 30, checkpoint_basis: str = "records",
                         queue_buffer_bytes: int | None = None, qm_name: str = "QM1",
                         management: str = MANUAL, image_interval_minutes: float | None = 60,
                         image_log_mb: float | None = None) -> Platform:
    """The distributed queue manager's log over ``storage`` (the LogConfig's values).

    A linear log takes media images: on request (rcdmqimg), of empty queues at shutdown,
    and – with LogManagement Automatic or Archive, as MQ 9.1 does – by itself, every
    ``image_interval_minutes`` (IMGINTVL, default 60) or ``image_log_mb`` of log (IMGLOGLN,
    default off) per queue. ``checkpoint_basis`` says what ``checkpoint_records_max/min``
    count: log records, or persistent MQPUT/MQGET operations
    (:data:`mqlog.core.platform.CHECKPOINT_BASES`)."""
    triple = integrity.lower() in ("triplewrite", "doublewrite")  # DoubleWrite behaves as TripleWrite
    space = DistributedLogSpace(storage, primary=primary, secondary=secondary, file_pages=file_pages,
                                linear=linear, triple_write=triple, management=management)
    return Platform(
        name="distributed",
        addressing=LsnAddressing(),
        space=space,
        checkpoint_policy=RecordCountCheckpoints(records=checkpoint_records_max,
                                                 interval_us=checkpoint_wait_minutes * 60e6,
                                                 min_records=checkpoint_records_min,
                                                 basis=checkpoint_basis),
        space_policy=LongRunningUowPolicy(),
        console=console(qm_name),
        persistent_put_to_waiting_getter=True,
        buffer_pages=buffer_pages,
        # The distributed logger writes when a force comes or the buffer fills (no write
        # threshold: that is z/OS's WRTHRSH); a write carrying several callers' forces closes
        # its partial last page (padding, never rewritten), one carrying a single force
        # leaves it to the next write, which rewrites it (LogWriteIntegrity; CALIBRATION D1/D1b).
        write_threshold_pages=None,
        queue_buffer_bytes=queue_buffer_bytes,
        pad_grouped_tail=True,
        writer_wakes_callers=True,
        error_log="AMQERR01.LOG",
        error_log_format=AmqErrLog(qm_name),
        record_types=media.RECORD_TYPES,
        # circular logs reconcile in-flight work but cannot recover a damaged queue
        media=MediaImages(media.MediaImage, ImageSchedule(
            None if image_interval_minutes is None else image_interval_minutes * 60e6,
            None if image_log_mb is None else int(image_log_mb * 1e6)) if management != MANUAL else None)
        if linear else None,
    )


__all__ = ["distributed_platform", "LsnAddressing", "LongRunningUowPolicy", "extent_name", "NO_ADDRESS"]
