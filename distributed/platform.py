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
from mqlog.distributed.space import MANUAL, DistributedLogSpace, extent_name, format_lsn

#: SPEC §4.4: about 20% of the active log is held in reserve so checkpoints can always be
#: written; a unit of work may not hold the log beyond the other 80%.
HEAD_TO_TAIL_LIMIT = 0.80
#: the logger pads rather than rewrites a partial page once it is this full: little is
#: wasted, and the rewrite (two writes under TripleWrite) is avoided
PAD_WHEN_USED = 3048  # 3/4 of a page's 4064-byte payload


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

    def relieve(self, usage: float, uows: Sequence[UowView]) -> Sequence[SpaceAction]:
        pinning = [u for u in uows if u.pins_tail]  # a checkpoint frees the log behind the others
        if usage < self.limit or not pinning:
            return []
        oldest = pinning[0]  # by first log address: the longest-running
        return [SpaceAction(oldest.uow, "rollforward" if oldest.prepared else "rollback")]


def pad_policy(used: int) -> bool:
    return used >= PAD_WHEN_USED


def console(qm_name: str):
    """Messages for the error log (AMQERR01.LOG), in MQ's words and ids."""

    def message(event: str, fields: dict) -> str | None:
        if event == "restart-begin":
            return f"AMQ5037I: The queue manager task 'LOGGER' has started; restart of queue manager {qm_name} begins."
        if event == "replay-complete":
            end = fields["end"]
            tail = "" if end.reason == "end" else f" The log ends at a damaged or torn page ({end.problem})."
            return (f"AMQ7229I: {fields['records']} log records accessed on queue manager '{qm_name}' during the "
                    f"log replay phase.\nAMQ7230I: Log replay for queue manager '{qm_name}' complete.{tail}")
        if event == "uows-recovered":
            return (f"AMQ7232I: The transaction manager state for queue manager '{qm_name}' has been recovered: "
                    f"{fields['backed_out']} in-flight transactions backed out, {fields['in_doubt']} in doubt.")
        if event == "restart-complete":
            return f"AMQ8003I: IBM MQ queue manager '{qm_name}' started ({fields['seconds']:.6f} virtual seconds)."
        if event == "uow-rolled-back":
            return (f"AMQ7469: Transactions rolled back to release log space. Unit of work {fields['uow']:X} of "
                    f"application {fields['application']} was rolled back.")
        if event == "uow-rolled-forward":
            return (f"AMQ7469: Transactions rolled forward to release log space. Prepared unit of work "
                    f"{fields['uow']:X} was re-logged at the head of the log.")
        if event == "log-full" or event == "AMQ7463":
            return f"AMQ7463: The log for queue manager {qm_name} is full."
        if event == "log-full-long-uow":
            return (f"AMQ7465: The log for queue manager {qm_name} is full because a long-running transaction "
                    f"(unit of work {fields['uow']:X} of application {fields['application']}) has prevented "
                    f"log space from being released.")
        if event == "log-full-housekeeping":
            return (f"AMQ7466: There is a problem with the size of the log for queue manager {qm_name}: log "
                    f"records are being written faster than housekeeping can release space. Increase the "
                    f"number of log files or reduce the rate of logging.")
        if event == "rollforward-no-room":
            return (f"AMQ7465: Prepared unit of work {fields['uow']:X} cannot be re-logged to release log space: "
                    f"it needs about {fields['needed']} bytes the log does not have. It holds the log until its "
                    f"coordinator resolves it.")
        if event == "restart-extent":
            return (f"AMQ7467: The oldest log file required to start queue manager {qm_name} is "
                    f"{fields['extent']}.")
        if event == "media-extent":
            return (f"AMQ7468: The oldest log file required to perform media recovery of queue manager {qm_name} "
                    f"is {fields['extent']}.")
        if event == "media-image":
            return (f"Media image of queue {fields['queue']} recorded "
                    f"({fields['bytes']} bytes from LSN {LsnAddressing().format(fields['address'])}).")
        if event == "object-damaged":
            return f"AMQ7472: Object {fields['queue']}, type queue damaged. {fields['reason']}"
        if event == "object-recreated":
            return (f"Queue {fields['queue']} re-created from its media image at LSN "
                    f"{LsnAddressing().format(fields['address'])} and {fields['records']} log records.")
        if event == "extent-missing":
            return (f"AMQ6767: Log file {fields['extent']} for queue manager {qm_name} could not be opened: it "
                    f"is needed for restart or media recovery but is not in the log directory.")
        if event == "log-disk-full":
            return (f"AMQ6708: A disk full condition was encountered when formatting a new log file for queue "
                    f"manager {qm_name}: {fields['reason']}")
        if event == "extent-archived-again":
            return f"Log extent {fields['extent']} was already marked as archived."
        return None

    return message


def distributed_platform(storage: Storage, *, primary: int = 3, secondary: int = 2, file_pages: int = 4096,
                         buffer_pages: int = 512, linear: bool = False, integrity: str = "TripleWrite",
                         checkpoint_records_max: int = 50_000, checkpoint_records_min: int = 100,
                         checkpoint_wait_minutes: int = 30, qm_name: str = "QM1",
                         management: str = MANUAL, image_interval_minutes: float | None = 60,
                         image_log_mb: float | None = None) -> Platform:
    """The distributed queue manager's log over ``storage`` (the LogConfig's values).

    A linear log takes media images: on request (rcdmqimg), of empty queues at shutdown,
    and – with LogManagement Automatic or Archive, as MQ 9.1 does – by itself, every
    ``image_interval_minutes`` (IMGINTVL, default 60) or ``image_log_mb`` of log (IMGLOGLN,
    default off) per queue."""
    triple = integrity.lower() in ("triplewrite", "doublewrite")  # DoubleWrite behaves as TripleWrite
    space = DistributedLogSpace(storage, primary=primary, secondary=secondary, file_pages=file_pages,
                                linear=linear, triple_write=triple, management=management)
    return Platform(
        name="distributed",
        addressing=LsnAddressing(),
        space=space,
        checkpoint_policy=RecordCountCheckpoints(records=checkpoint_records_max,
                                                 interval_us=checkpoint_wait_minutes * 60e6,
                                                 min_records=checkpoint_records_min),
        space_policy=LongRunningUowPolicy(),
        console=console(qm_name),
        persistent_put_to_waiting_getter=True,
        buffer_pages=buffer_pages,
        write_threshold_pages=min(20, buffer_pages),
        pad_policy=pad_policy,
        error_log="AMQERR01.LOG",
        record_types=(media.MediaImage,),
        # circular logs reconcile in-flight work but cannot recover a damaged queue
        media=MediaImages(media.MediaImage, ImageSchedule(
            None if image_interval_minutes is None else image_interval_minutes * 60e6,
            None if image_log_mb is None else int(image_log_mb * 1e6)) if management != MANUAL else None)
        if linear else None,
    )


__all__ = ["distributed_platform", "LsnAddressing", "LongRunningUowPolicy", "extent_name", "NO_ADDRESS"]
