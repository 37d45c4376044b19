"""Restart recovery, the driver: from the last complete checkpoint to the end of the log,
in IBM's two phases and their sub-steps, each charged in virtual time and reported
(:class:`~mqlog.core.recovery.outcome.RecoveryReport`, ``restart_phases``).

IBM describes restart as two main phases – **replay** (read the log from the last checkpoint
and redo it into the queue files) and **recovery** (load the queues that in-flight units of
work touched, then back out the uncommitted work) – and times them with the file-system
cache dropped and the queue manager killed with kill -9 ("Queue Manager Restart Times for
IBM MQ V9.1 & V9.1.1", Paul Harris, March 2019, via developer.ibm.com/messaging/2019/03/12/
queue-manager-restart-times-in-v9-1-1/; A. Beardsmore, "IBM MQ restart times",
community.ibm.com/community/user/blogs/anthony-beardsmore1/2020/09/24/ibmmq-restart-times).
Here:

0. **Open** – every queue file is read into memory at no virtual cost; its load is owed
   (:mod:`.redo` says why).
1. **Replay (redo) and analysis** – every record from the last complete checkpoint to the
   end of the log is redone onto the queues, and the table of units of work is rebuilt
   (:mod:`.redo`). Charged: the sequential log reads, the queue-file work of each record that
   changes a queue (held in its queue buffer, spilled to its file when the buffer fills;
   legacy also one file-system call per record),
   the host's CPU per record and per byte (:mod:`.state`).
2. **Recovery** – (a) the queues holding uncommitted state of units of work still open are
   loaded (in parallel with 9.1.1, one after another before it); every other queue is left
   to its first use after restart; (b) each unit of work left in the table has its backward
   chain walked through the page cache (:mod:`.pagecache`), units that were not prepared are
   backed out with compensation records, prepared ones stay in doubt, and uncommitted state
   no unit the log knows of owns is put right (:mod:`.undo`).
3. **Media recovery** – queues whose files would not load are re-created from their media
   images, or left damaged (:mod:`.media`), and queues with no media recovery record imaged;
4. **Checkpoint** – a checkpoint ends restart.

``restart_phases`` holds the wall (virtual) time of each, with replay's charged sub-steps;
the older ``phases`` breakdown (load, replay, walk, undo, media recovery, checkpoint) is kept
beside it for the model's own tests; reports carry ``restart_phases`` only.
"""

from __future__ import annotations

from typing import Generator

from mqlog.core.errors import LogCorruptionError
from mqlog.core.format.records import NO_ADDRESS
from mqlog.core.log.reader import LogReader
from mqlog.core.objects.queuefile import file_name_for
from mqlog.core.platform import LogControl
from mqlog.core.recovery.state import CPU_BATCH_US, QUEUE_RECORDS, Recovery
from mqlog.core.recovery.media import image_unknown, mend_damaged
from mqlog.core.recovery.protocol import RecoveredState, RecoveryTarget


class Restart(Recovery):
    """Restart recovery over a queue manager's log after a crash or a shutdown (:meth:`run`)."""

    def phase(self, name: str, started: float) -> None:
        self.report.phases[name] = (self.env.now - started) / 1e6

    def run(self) -> Generator:
        env, qm, report = self.env, self.qm, self.report
        t0 = env.now
        qm.say("restart-begin", checkpoint=self.control.checkpoint)
        self.open_queues()

        t = env.now
        start = self.control.restart_from  # the checkpoint, or the oldest change the queue files lack
        if start == NO_ADDRESS:
            start = self.platform.addressing.start
        space = self.platform.space
        # Nothing is written until the log is known whole: each file the control data lists
        # holds what it says at its start, and the log reaches the control data's high-water
        # mark (the reader refuses an end below it, and reads on to the end of the files in
        # use for later writes past a hole). These are checks MQ's restart does not make
        # (it reads a few pages past the end): their reads beyond those are not charged, so
        # restart's time is still the time MQ's restart would take.
        space.check_files(start)
        self.replay_from = start
        reader = LogReader(space, start, format_address=self.platform.addressing.format,
                           record_types=self.platform.record_types, written_to=space.high_water(),
                           scan_to=space.scan_to, scan_read=space.scan_page,
                           unwritten_run=space.unwritten_run)
        # The per-record steps of sequential_reads, cpu and redo, with their tests inlined:
        # each yields (charges virtual time) exactly when the generator it stands for would.
        # The reader hands over a page's records at once, having read that page: the reads
        # are charged before its first record, as they were when records came one by one.
        replay_us, chunk, apply, by_kind = self.replay_record_us, self.chunk, self.apply, self._redo_by_kind
        legacy, queues, buffer = self.legacy, self.queues, qm.queue_buffer_bytes
        cpu = self._cpu
        progress = qm.restart_progress
        for batch in reader.batches():
            report.records_replayed += len(batch)
            if progress is not None:
                progress(report.records_replayed)
            if reader.pages_read - self._pages_charged >= chunk:
                self._cpu = cpu
                yield from self.sequential_reads(reader.pages_read)
                cpu = self._cpu
            for address, record in batch:
                cpu += replay_us
                if cpu + self._expand >= CPU_BATCH_US:
                    self._cpu = cpu
                    yield from self.burn()
                    cpu = 0.0
                kind = type(record)
                handler = by_kind.get(kind)
                more = apply(address, record) if handler is None else handler(address, record)
                if more is not None:
                    self._cpu = cpu  # the generator may charge CPU of its own
                    yield from more
                    cpu = self._cpu
                if kind in QUEUE_RECORDS and (q := queues.get(record.queue)) is not None and q.file is not None:
                    if legacy:  # the queue file opened, written, closed per record (9.1.1 batches them)
                        self._cpu = cpu
                        yield from self.queue_file_ops()
                        cpu = self._cpu
                    if q.unflushed_bytes > buffer:  # the queue buffer is full: spill it
                        self._cpu = cpu
                        yield from self.spill(q, address + 1)
                        cpu = self._cpu
        self._cpu = cpu
        yield from self.sequential_reads(reader.pages_read, final=True)
        yield from self.cpu_flush()
        report.bytes_read += reader.bytes_read
        report.end_of_log = reader.end
        if not self.checkpoint_complete:
            end = reader.end
            fmt = self.platform.addressing.format
            # The control data is saved only once the checkpoint's end record is on disk: a
            # log that ends before it has lost records that were forced.
            raise LogCorruptionError(
                f"the log ends at {fmt(end.address)} ({end.reason}: {end.problem}) before the end of the "
                f"checkpoint its control data names (begun at {fmt(start)}): forced log records are gone",
                source=end.source, offset=end.offset,
                address=fmt(end.page_address if end.page_address is not None else end.address))
        self._check_queue_files(reader.end)
        self.phase("replay", t)
        replay_us_wall = env.now - t0  # opening the files costs nothing: replay is all of it
        replay_charged = dict(self.charged)
        qm.drain_space_events()  # what reading the log met (a copy read for a bad page) comes first
        qm.say("replay-complete", records=report.records_replayed, end=reader.end,
               in_flight=sum(1 for u in self.table.values() if not u.prepared),
               in_doubt=sum(1 for u in self.table.values() if u.prepared), committed=report.uows_committed)

        # What replay recovered of the queue manager's own state, taken on at once: its
        # writer resumes at the end of the log, for recovery's compensation records.
        qm.recovered(RecoveredState(checkpoint_number=max(self.checkpoint_number, self.control.checkpoint_number),
                                    checkpoint_address=self.control.checkpoint, next_uow=self.max_uow + 1,
                                    log_end=reader, redo_from=self.control.redo_from))

        # Recovery (a): the queues uncommitted work is on – of the units replay left open,
        # and of units the log does not know (reconciled below) – loaded now; the others later.
        t = env.now
        yield from self.load_queues({name for members in self.by_uow.values() for name, _ in members})
        self.phase("load", t)
        load_us = env.now - t

        # Recovery (b): the in-doubt walk, backout with CLRs, and reconciling.
        t = env.now
        histories = {}
        for uow_id in sorted(self.table):
            histories[uow_id] = yield from self.walk(uow_id)
        yield from self.cpu_flush()
        self.phase("walk", t)  # every open unit's records walked backwards, in doubt or not
        walk_us = env.now - t

        t_undo = env.now
        for uow_id in sorted(self.table):
            entry = self.table[uow_id]
            if entry.prepared:
                self.keep_in_doubt(uow_id, entry, histories[uow_id])
            else:
                yield from self.undo(uow_id, entry, histories[uow_id])
        yield from self.reconcile()
        yield qm.writer.force()
        self.phase("undo", t_undo)
        backout_us = env.now - t
        self.defer_loads()

        t = env.now
        yield from mend_damaged(self)
        if self.damaged or report.queues_recreated:
            self.phase("media recovery", t)
        qm.say("uows-recovered", backed_out=report.uows_backed_out, in_doubt=report.uows_indoubt,
               committed=report.uows_committed, records=self.records_walked,
               in_flight=report.uows_backed_out + report.uows_indoubt)

        yield from image_unknown(qm)
        media_us = env.now - t
        t = env.now
        yield from qm.checkpoint("restart")
        self.phase("checkpoint", t)
        checkpoint_us = env.now - t
        total_us = env.now - t0
        report.restart_virtual_s = total_us / 1e6
        report.cache_hits, report.cache_misses = self.cache.hits, self.cache.misses
        report.restart_phases = {
            "replay_s": replay_us_wall / 1e6,
            "replay_log_read_s": replay_charged["log_read"] / 1e6,
            "replay_queue_files_s": replay_charged["queue_files"] / 1e6,
            "replay_cpu_s": replay_charged["cpu"] / 1e6,
            "recovery_s": (load_us + backout_us) / 1e6,
            "recovery_queue_load_s": load_us / 1e6,
            "recovery_backout_s": backout_us / 1e6,
            "recovery_backout_walk_s": walk_us / 1e6,
            "recovery_backout_undo_s": (backout_us - walk_us) / 1e6,
            "media_recovery_s": media_us / 1e6,
            "checkpoint_s": checkpoint_us / 1e6,
            "total_s": total_us / 1e6,
        }
        qm.say("restart-complete", seconds=report.restart_virtual_s)
        report.messages = list(qm.messages)
        return report

    def _check_queue_files(self, end) -> None:
        """A queue file whose entries name a put at or beyond the end of the log holds work
        the log does not: the log is older than the queue files (a log restored from a
        backup, or cut short). Going on would leave the queues ahead of the log, and the
        log's next records would reuse addresses the queue files already name."""
        fmt = self.platform.addressing.format
        for name, high in sorted(self.file_high.items()):
            if high >= end.address:
                raise LogCorruptionError(
                    f"queue file {file_name_for(name)} holds a message put at log address {fmt(high)}, but the log "
                    f"ends at {fmt(end.address)} ({end.reason}): the log is older than the queue files (a log "
                    f"restored from an older copy, or its end lost)", source=file_name_for(name), address=fmt(high))


def restart(qm: RecoveryTarget, control: LogControl) -> Generator:
    """Run restart recovery on ``qm`` (a SimPy generator); returns the RecoveryReport."""
    return (yield from Restart(qm, control).run())
