"""What recovery asks of a queue manager (:class:`RecoveryTarget`), and what replay hands back
(:class:`RecoveredState`).

Restart rebuilds a queue manager's state from its log, and media recovery re-creates a queue
of a running one; both work through this narrow interface, never the queue manager's own
attributes. Replay (:mod:`.restart`) ends with what the log says the queue manager's counters
are – the last checkpoint, the highest unit of work – and where the log ends; the queue
manager takes that on in one step (:meth:`RecoveryTarget.recovered`), resuming its log writer
at the end replay reached, before recovery backs units of work out through that writer. The
queues, the damaged queues and the open units of work are the queue manager's public tables:
recovery rebuilds the queues in place, as MQ's restart reloads them, and files each unit it
leaves in doubt (:meth:`RecoveryTarget.hold_in_doubt`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Generator, Protocol

import attrs
import simpy

from mqlog.core.disk.devices import Device
from mqlog.core.disk.storage import Storage
from mqlog.core.format.records import NO_ADDRESS
from mqlog.core.log.reader import LogReader
from mqlog.core.log.writer import LogWriter
from mqlog.core.objects.queuelayout import IoCost
from mqlog.core.objects.uow import UnitOfWork

if TYPE_CHECKING:  # (names for the type checker only)
    from mqlog.core.host.profiles import Cpu
    from mqlog.core.platform import Platform


@attrs.frozen
class RecoveredState:
    """What replay recovered of the queue manager's own state."""

    #: the number of the last checkpoint the log holds (the next one is this + 1)
    checkpoint_number: int
    #: the address of the Begin record of the checkpoint replay started from (the log's
    #: tail until restart's own checkpoint)
    checkpoint_address: int
    #: the number the next unit of work gets: past every one the log names
    next_uow: int
    #: the reader that replayed the log, stopped at its end: the writer resumes there
    log_end: LogReader
    #: where replay began, if before the checkpoint (the oldest change the queue files
    #: lacked); the log's tail until restart's own checkpoint. NO_ADDRESS: at the checkpoint
    redo_from: int = NO_ADDRESS


class RecoveryTarget(Protocol):
    """The queue manager as recovery sees it (:class:`mqlog.core.qm.manager.QueueManager`)."""

    env: simpy.Environment
    #: the platform (its space, addressing, record types, media images)
    platform: Platform
    storage: Storage
    device: Device
    #: its configuration (QmConfig: max_depth, member, restart_mode) and counters (QmCounters):
    #: the queue manager's own records, not named here (recovery does not import it)
    config: object
    #: the host's cores: restart's CPU is charged there
    cpu: Cpu
    counters: object
    #: the queues by name, rebuilt in place by restart; the damaged ones, with why
    queues: dict
    damaged: dict
    #: the open units of work by id (read: a unit left in doubt is filed by hold_in_doubt)
    uows: dict
    #: the log writer: None until :meth:`recovered` resumes it at the log's end
    writer: LogWriter | None
    #: persistent bytes a queue holds in memory before replay spills it to its file
    queue_buffer_bytes: int
    #: called with the records replayed so far, or None
    restart_progress: Callable[[int], None] | None
    #: the console and error-log lines said so far (the restart report keeps a copy)
    messages: list

    def say(self, event: str, **fields) -> None:
        """Report ``event`` in the platform's words."""

    def drain_space_events(self) -> None:
        """Say what the log space has queued to report (a copy read for a bad page, say)."""

    def charge_io(self, cost: IoCost) -> Generator:
        """Charge queue-file I/O to the device and the queue manager's counters."""

    def write_queue_file(self, flush: Callable[[], IoCost]) -> Generator:
        """Make a spill's queue-file writes (``flush()``) and charge them as the platform makes
        them (the file-system call where they go through the host's page cache, then
        :meth:`charge_io`)."""

    def outcome(self, uow_id: int, durable: int) -> bool | None:
        """How a unit of work ended, if its Commit/Backout is on disk below ``durable``."""

    def recovered(self, state: RecoveredState) -> None:
        """Take on what replay recovered, and resume logging at the end of the log."""

    def hold_in_doubt(self, uow: UnitOfWork) -> None:
        """File ``uow``, rebuilt from the log, as open and in doubt."""

    def checkpoint(self, reason: str = "request", *, wait: bool = False) -> Generator:
        """Take a checkpoint (restart ends with one)."""


__all__ = ["RecoveredState", "RecoveryTarget"]
