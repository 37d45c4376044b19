"""One recovery run over a queue manager's log (:class:`Recovery`): the state redo and undo
share – the queues being rebuilt, the table of units of work, the messages each unit holds,
the media recovery records, the damaged queues and the queue files' loads still owed – and
the run's cost in virtual time. Restart (:mod:`.restart`), the media recovery of one queue
(:mod:`.media`) and a platform's rebuilding of kept queues from several logs all drive one.

What is charged, and where (each charge's elapsed time is kept in :attr:`Recovery.charged`
by what it was for, so that restart can report its phases' sub-steps):

- **log reads**: every log read request goes through restart's
  :class:`~mqlog.core.recovery.pagecache.PageCache` (cold at the start, with Linux's
  read-ahead on forward sequential reads): only the pages it does not hold reach the device.
  Replay reads forward in requests of ``REPLAY_CHUNK_PAGES`` (legacy: a page), each a
  ``stat`` of the extent and a ``read`` call (:data:`REQUEST_CALLS`); the walk of the units of
  work reads backwards, a request ending at the page it needs (:mod:`.undo`). What a call
  costs is its class on the profile's file system (:mod:`mqlog.core.disk.fscalls`): on a local
  file system both are kernel calls, on NFS the ``stat`` is a GETATTR round trip;
- **queue-file work of replay**: every replayed record that changes a queue (a put, a
  segment of one, a get, a CLR) changes that queue in memory, in its queue buffer, as in
  normal running; when the persistent data held there outgrows the buffer
  (``persistent_buffer_bytes``) replay spills the queue to its file for real
  (:meth:`Recovery.spill`: a buffered ``write`` call and the file's writes), and the
  checkpoint that ends restart writes what is left. Legacy also opens the queue file, writes
  the change and closes it for each such record (:data:`LEGACY_RECORD_CALLS`): 9.1.1 batches
  them away. On a local file system those are kernel calls; on NFS close-to-open consistency
  makes the open a round trip and the close a flush the server commits. So legacy's
  queue-file work follows the records replayed, 9.1.1's the data that stays on the queues
  (messages put and got within the buffer, a requester-responder's, never reach the file),
  and 9.1.1's gain grows with the file system's round trips. IBM: "We have reduced the number
  of I/O requests required to access the recovery log during restart (particularly
  beneficial when using NFS...)" and restart time is linear in the log records replayed
  (developer.ibm.com/messaging/2019/03/12/queue-manager-restart-times-in-v9-1-1/, and the
  report it links, docs/calibration.md, case R1). IBM names no calls; the ``stat`` before each
  replay request and legacy's open, write and close per record are this model's assumption;
- **CPU**: the host's (:class:`~mqlog.core.host.profiles.HostProfile`: ``replay_record_us``
  per record, ``copy_ns_per_byte`` per log byte read, ``load_message_us``,
  ``reconcile_message_us``, ``log_record_us`` per CLR built), charged to the queue
  manager's cores (``qm.cpu``, kind ``restart``; expansion as ``expand``) – one thread, so
  serially – batched into charges of at least ``CPU_BATCH_US`` (fewer events).
"""

from __future__ import annotations

from typing import Generator

import simpy

from mqlog.core.format.pages import PAGE_SIZE
from mqlog.core.format.records import (NO_ADDRESS, Backout, Begin, CheckpointEnd, Clr, Commit, Get, ObjectChange,
                                       Prepare, Put, PutSegment)
from mqlog.core.platform import LogControl
from mqlog.core.recovery.pagecache import PageCache
from mqlog.core.recovery.protocol import RecoveryTarget
from mqlog.core.recovery.redo import Redo
from mqlog.core.recovery.outcome import RebuiltUow, RecoveryReport
from mqlog.core.recovery.undo import Undo

#: pages the 9.1.1 restart reads per log read request; the legacy restart reads one page a request
REPLAY_CHUNK_PAGES = 16
#: the file-system calls of one replay read request: the reader checks the extent, then reads
REQUEST_CALLS = ("stat", "read")
#: legacy replay's calls for each record that changes a queue: the queue file opened, the
#: change written, the file closed (9.1.1 keeps its changes in the queue buffer)
LEGACY_RECORD_CALLS = ("open", "write", "close")
#: batch the per-record CPU charge into charges of at least this many µs (fewer events)
CPU_BATCH_US = 1000.0
#: the records whose redo changes a queue (its file): what replay's queue-file work is for
QUEUE_RECORDS = frozenset({Put, PutSegment, Get, Clr})


class Recovery(Redo, Undo):
    """One recovery run over a queue manager's log: restart
    (:class:`~mqlog.core.recovery.restart.Restart`), the media recovery of one queue
    (:func:`~mqlog.core.recovery.media.recreate_queue`), or a platform's rebuilding of kept
    queues from several logs (``rebuilding``; its caller feeds :meth:`redo` and ends with
    :meth:`reconcile`)."""

    def __init__(self, qm: RecoveryTarget, control: LogControl):
        self.qm = qm
        self.env: simpy.Environment = qm.env
        self.control = control
        self.platform = qm.platform
        self.report = RecoveryReport(checkpoint=control.checkpoint)
        self.table: dict[int, RebuiltUow] = {}
        self.ended: set[int] = set()
        #: unit of work -> (queue, msg id) of each message it holds uncommitted, in the order
        #: found (a list: appended at each put and get redone, read once at its end)
        self.by_uow: dict[int, list] = {}
        self.segments: dict[bytes, list] = {}
        self.max_uow = 0
        self.checkpoint_number = control.checkpoint_number
        #: the queues redo applies to: all of them at restart, one for media recovery
        self.queues: dict = qm.queues
        #: media recovery records by queue, from the checkpoint and later creates and images
        self.media: dict[str, int] = {}
        #: queues whose files would not load, with why (left damaged unless media recovery mends them)
        self.damaged: dict[str, str] = {}
        #: queue file -> the highest log address of a put its entries hold, as read from disk:
        #: one beyond the end of the log means the log is older than the queue files
        self.file_high: dict[str, int] = {}
        self.listed: set[str] = set()  # queues the checkpoint's queue table names
        #: whether replay reached the end record of the checkpoint the control data names
        #: (the control data is saved only after that record is forced)
        self.checkpoint_complete = control.checkpoint == NO_ADDRESS
        self.image_parts: dict[tuple, int] = {}  # (queue, image id) -> segments seen in order
        #: log records read walking units of work back (restart's recovery phase, after replay)
        self.records_walked = 0
        self._cpu = 0.0  # restart CPU not yet charged (µs)
        self._expand = 0.0  # expansion CPU not yet charged (µs)
        self._pages_charged = 0
        #: elapsed virtual µs of the charges so far, by what they were for (they may overlap:
        #: parallel queue loads)
        self.charged = {"log_read": 0.0, "queue_files": 0.0, "cpu": 0.0}
        #: the log pages this run has read (dropped at its start: a cold cache), with the
        #: device's read-ahead window
        self.cache = PageCache(qm.device.profile.read_ahead_kb * 1024 // PAGE_SIZE)
        #: where replay's reads began: the page its first request reads
        self.replay_from = 0
        #: queue files read into memory whose loading is not charged yet: name -> (IoCost of
        #: its metadata reads, messages in it) – charged when recovery needs the queue, or
        #: left to its first use after restart (:meth:`Redo.load_queue`)
        self.owed: dict = {}
        profile = qm.cpu.profile
        self.replay_record_us = profile.replay_record_us
        self.copy_us_per_page = PAGE_SIZE * profile.copy_ns_per_byte / 1000.0
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
        """Restart CPU of ``us`` µs, charged to the host's cores once enough has gathered."""
        self._cpu += us
        if self._cpu + self._expand >= CPU_BATCH_US:
            yield from self.burn()

    def expand(self, us: float) -> Generator:
        """CPU of expanding compressed message data (kind ``expand``), as :meth:`cpu`."""
        self._expand += us
        if self._cpu + self._expand >= CPU_BATCH_US:
            yield from self.burn()

    def cpu_flush(self) -> Generator:
        if self._cpu or self._expand:
            yield from self.burn()

    def burn(self) -> Generator:
        """Charge the CPU gathered so far to the host's cores (restart runs one thread: its
        charges are serial), and count its elapsed time."""
        cpu, t = self.qm.cpu, self.env.now
        if self._expand:
            us, self._expand = self._expand, 0.0
            yield from cpu.charge(us, "expand")
        if self._cpu:
            us, self._cpu = self._cpu, 0.0
            yield from self.restart_cpu(us)
        self.charged["cpu"] += self.env.now - t

    def sequential_reads(self, pages_read: int, final: bool = False) -> Generator:
        """Charge the replay's sequential log reads, requests of the configured chunk size through
        the page cache, and the copy of what they read into memory."""
        env, charged = self.env, self.charged
        while pages_read - self._pages_charged >= self.chunk or (final and pages_read > self._pages_charged):
            n = min(self.chunk, pages_read - self._pages_charged)
            t = env.now
            yield from self.log_request(self.replay_from + self._pages_charged * PAGE_SIZE, n, REQUEST_CALLS)
            charged["log_read"] += env.now - t
            self._pages_charged += n
            self._cpu += n * self.copy_us_per_page

    def log_request(self, address: int, pages: int, calls: tuple = ("read",)) -> Generator:
        """One log read request of ``pages`` pages from ``address``: its file-system calls, then
        the device reads of what the page cache does not hold. Returns the bytes read from the
        device."""
        device = self.qm.device
        for call in calls:
            yield from device.file_op(call)
        nbytes = 0
        for run in self.cache.read(address, pages):
            yield from device.read(run * PAGE_SIZE)
            nbytes += run * PAGE_SIZE
        return nbytes

    def spill(self, queue, durable: int) -> Generator:
        """Replay has outgrown ``queue``'s queue buffer: write its changes to the queue file,
        as a spill does in normal running (``QueueManager.write_queue_file``: on a Linux queue
        manager a buffered ``write`` call and the pages it dirties), charged as replay's
        queue-file work. Every change in memory comes from a record replay has read
        (``durable``: past the latest), so all of it is on disk already."""
        t = self.env.now
        self.report.replay_spills += 1
        yield from self.qm.write_queue_file(lambda: queue.flush(durable))
        self.charged["queue_files"] += self.env.now - t

    def queue_file_ops(self, calls: tuple = LEGACY_RECORD_CALLS) -> Generator:
        """Queue-file ``calls``, one after another (replay is one thread), charged as replay's
        queue-file work."""
        device, t = self.qm.device, self.env.now
        for call in calls:
            yield from device.file_op(call)
        self.charged["queue_files"] += self.env.now - t
