"""One recovery run over a queue manager's log (:class:`Recovery`): the state redo and undo
share – the queues being rebuilt, the table of units of work, the messages each unit holds,
the media recovery records and the damaged queues – and the run's cost in virtual time (CPU
batched into few timeouts, the sequential log reads charged in the configured chunk size).
Restart (:mod:`.restart`), the media recovery of one queue (:mod:`.media`) and a platform's
rebuilding of kept queues from several logs all drive one.
"""

from __future__ import annotations

from typing import Generator

import simpy

from mqlog.core.format.pages import PAGE_SIZE
from mqlog.core.format.records import (NO_ADDRESS, Backout, Begin, CheckpointEnd, Clr, Commit, Get, ObjectChange,
                                       Prepare, Put, PutSegment)
from mqlog.core.platform import LogControl
from mqlog.core.recovery.redo import Redo
from mqlog.core.recovery.report import RebuiltUow, RecoveryReport
from mqlog.core.recovery.undo import Undo

#: pages the 9.1.1 replay reads per file-system call; the legacy replay reads one page per
#: call and pays a file-system operation for each
REPLAY_CHUNK_PAGES = 16
#: batch the per-record CPU charge into timeouts of at least this many µs (fewer events)
CPU_BATCH_US = 1000.0


class Recovery(Redo, Undo):
    """One recovery run over a queue manager's log: restart
    (:class:`~mqlog.core.recovery.restart.Restart`), the media recovery of one queue
    (:func:`~mqlog.core.recovery.media.recreate_queue`), or a platform's rebuilding of kept
    queues from several logs (``rebuilding``; its caller feeds :meth:`redo` and ends with
    :meth:`reconcile`)."""

    def __init__(self, qm, control: LogControl):
        self.qm = qm
        self.env: simpy.Environment = qm.env
        self.control = control
        self.platform = qm.platform
        self.report = RecoveryReport(checkpoint=control.checkpoint)
        self.table: dict[int, RebuiltUow] = {}
        self.ended: set[int] = set()
        self.by_uow: dict[int, set] = {}
        self.segments: dict[bytes, list] = {}
        self.max_uow = 0
        self.checkpoint_number = control.checkpoint_number
        #: the queues redo applies to: all of them at restart, one for media recovery
        self.queues: dict = qm.queues
        #: media recovery records by queue, from the checkpoint and later creates and images
        self.media: dict[str, int] = {}
        #: queues whose files would not load, with why (left damaged unless media recovery mends them)
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
