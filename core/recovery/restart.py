"""Restart recovery, the driver: from the last complete checkpoint to the end of the log,
in phases, each charged in virtual time and reported (:class:`~mqlog.core.recovery.report.RecoveryReport`).

1. **Load** – every queue file is opened: its metadata (one directory entry per message),
   not its message data. With the MQ 9.1.1 behaviour queues load in parallel; with the
   legacy behaviour one after another.
2. **Replay (redo) and analysis** – every record from the last complete checkpoint to the
   end of the log is redone onto the queues, and the table of units of work is rebuilt
   (:mod:`.redo`).
3. **In doubt** – each unit of work left in the table has its backward chain walked to
   rebuild what it did (:mod:`.undo`).
4. **Undo** – units of work that were not prepared are backed out with compensation
   records; prepared ones stay in doubt, their operations rebuilt, until the coordinator
   resolves them (:mod:`.undo`).
5. **Media recovery** – queues whose files would not load are re-created from their media
   images, or left damaged (:mod:`.media`); then a checkpoint ends restart.

Every read and every unit of work is charged in virtual time through the device profile, so
restart time grows with the records replayed, the uncommitted messages, the depth of the
queues and the device latency. The run's state and cost accounting are
:class:`~mqlog.core.recovery.engine.Recovery`'s.
"""

from __future__ import annotations

from typing import Generator

from mqlog.core.errors import LogCorruptionError
from mqlog.core.format.records import NO_ADDRESS
from mqlog.core.log.reader import LogReader
from mqlog.core.platform import LogControl
from mqlog.core.recovery.engine import CPU_BATCH_US, Recovery
from mqlog.core.recovery.media import image_unknown, mend_damaged


class Restart(Recovery):
    """Restart recovery over a queue manager's log after a crash or a shutdown (:meth:`run`)."""

    def phase(self, name: str, started: float) -> None:
        self.report.phases[name] = (self.env.now - started) / 1e6

    def run(self) -> Generator:
        env, qm, report = self.env, self.qm, self.report
        t0 = env.now
        qm.say("restart-begin", checkpoint=self.control.checkpoint)
        yield from self.load_queues()
        self.phase("load", t0)

        t = env.now
        start = self.control.checkpoint
        if start == NO_ADDRESS:
            start = self.platform.addressing.start
        reader = LogReader(self.platform.space, start, format_address=self.platform.addressing.format,
                           record_types=self.platform.record_types)
        # The per-record steps of sequential_reads, cpu and redo, with their tests inlined:
        # each yields (charges virtual time) exactly when the generator it stands for would.
        # The reader hands over a page's records at once, having read that page: the reads
        # are charged before its first record, as they were when records came one by one.
        replay_us, chunk, apply, by_kind = qm.config.replay_record_us, self.chunk, self.apply, self._redo_by_kind
        timeout = env.timeout
        cpu = self._cpu
        progress = qm.restart_progress
        for batch in reader.batches():
            report.records_replayed += len(batch)
            if progress is not None:
                progress(report.records_replayed)
            if reader.pages_read - self._pages_charged >= chunk:
                yield from self.sequential_reads(reader.pages_read)
            for address, record in batch:
                cpu += replay_us
                if cpu >= CPU_BATCH_US:
                    yield timeout(cpu)
                    cpu = 0.0
                handler = by_kind.get(type(record))
                more = apply(address, record) if handler is None else handler(address, record)
                if more is not None:
                    self._cpu = cpu  # the generator may charge CPU of its own
                    yield from more
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
        self.phase("replay", t)
        qm.say("replay-complete", records=report.records_replayed, end=reader.end,
               in_flight=sum(1 for u in self.table.values() if not u.prepared),
               in_doubt=sum(1 for u in self.table.values() if u.prepared), committed=report.uows_committed)

        qm.writer = qm._new_writer(reader)
        t = env.now
        histories = {}
        for uow_id in sorted(self.table):
            histories[uow_id] = yield from self.walk(uow_id)
        self.phase("indoubt", t)

        t = env.now
        for uow_id in sorted(self.table):
            entry = self.table[uow_id]
            if entry.prepared:
                self.keep_in_doubt(uow_id, entry, histories[uow_id])
            else:
                yield from self.undo(uow_id, entry, histories[uow_id])
        yield from self.reconcile()
        yield qm.writer.force()
        self.phase("undo", t)
        t = env.now
        yield from mend_damaged(self)
        if self.damaged or report.queues_recreated:
            self.phase("media recovery", t)
        qm.say("uows-recovered", backed_out=report.uows_backed_out, in_doubt=report.uows_indoubt,
               committed=report.uows_committed)

        qm._checkpoint_number = max(self.checkpoint_number, self.control.checkpoint_number)
        qm._checkpoint_address = self.control.checkpoint
        qm._next_uow = self.max_uow + 1
        yield from image_unknown(qm)
        t = env.now
        yield from qm.checkpoint("restart")
        self.phase("checkpoint", t)
        report.restart_virtual_seconds = (env.now - t0) / 1e6
        qm.say("restart-complete", seconds=report.restart_virtual_seconds)
        report.messages = list(qm.messages)
        return report


def restart(qm, control: LogControl) -> Generator:
    """Run restart recovery on ``qm`` (a SimPy generator); returns the RecoveryReport."""
    report = yield from Restart(qm, control).run()
    qm.recovery = report
    return report
