"""Checkpoints in normal running, and what follows each one.

When a checkpoint is due (the platform's checkpoint policy: records logged, time, a log
switch; or log space running short), one is taken at a time: the units of work open at its
Begin record, the platform's own checkpoint records, the queue files flushed behind the log
(where the platform says so, only what has waited through two checkpoints: restart then
begins at the oldest put left out), the queues' media recovery records, then the log's
control data moved on and the log behind the new tail released. After it come the reports
and background work it unlocks: the log files restart and media recovery need, automatic
media images, units of work reported as long-running at a log switch, and a shunting round
(:mod:`.shunting`).

When one is due, and which is the last, is the :class:`CheckpointSchedule`'s: a part of the
queue manager with its own state (the last checkpoint's number and address, the records
counted and the time since, the timer, the checkpoint in progress). :class:`CheckpointMixin`
groups the queue manager's methods that take checkpoints; it holds no state of its own
(``_imaging`` and ``_extents_said``, its aftermath's, are set up in the queue manager).
"""

from __future__ import annotations

from typing import Generator

from mqlog.core.format.records import NO_ADDRESS, CheckpointBegin, CheckpointEnd, QueueEntry, UowEntry
from mqlog.core.format.records import UowState as RecUowState
from mqlog.core.objects.uow import MqiError
from mqlog.core.platform import LogControl

#: the checkpoints that write every queue change before them, whatever the platform's
#: :attr:`~mqlog.core.platform.Platform.checkpoint_write_lag`
WRITE_ALL = frozenset({"start", "restart", "shutdown"})

#: checkpoints whose marks a run keeps (:attr:`QueueManager.checkpoint_marks`)
CHECKPOINT_MARKS_MAX = 1000


class CheckpointSchedule:
    """When the next checkpoint is due, and where the last one is.

    The platform's checkpoint policy (:class:`~mqlog.core.platform.CheckpointPolicy`, read
    from the run's settings: SET SYSTEM may change it) decides from what is counted here:
    the records it counts since the last checkpoint and the time since. The queue manager
    counts each record as it appends it and reads ``running`` before asking (its per-record
    path: public attributes, not calls); a checkpoint moves ``number`` and ``address`` when
    its end record is on disk, and starts the count again once it is over."""

    __slots__ = ("number", "address", "redo_from", "restart", "counted", "last_us", "timer", "running", "finished")

    def __init__(self) -> None:
        #: the number and the Begin record's address of the last complete checkpoint
        #: (restart's starting point; the log's tail unless a unit of work holds it)
        self.number = 0
        self.address = NO_ADDRESS
        #: where restart must begin if the last checkpoint left changes out of the queue
        #: files: the oldest put it left out (NO_ADDRESS: none left out)
        self.redo_from = NO_ADDRESS
        #: where restart would begin: the older of the two (read before every record, by
        #: the log's tail: kept, not computed)
        self.restart = NO_ADDRESS
        #: records the policy counts, logged since the last checkpoint ended
        self.counted = 0
        #: virtual µs at which the last checkpoint ended
        self.last_us = 0.0
        #: the process that asks the policy when the time interval is up (None: not armed)
        self.timer = None
        #: a checkpoint is being taken (one at a time), and the event it triggers when done
        self.running = False
        self.finished = None

    def recovered(self, number: int, address: int, redo_from: int = NO_ADDRESS) -> None:
        """Restart found the last complete checkpoint, ``number`` at ``address``, and began
        its replay at ``redo_from`` if that is older."""
        self.moved(number, address, redo_from)

    def moved(self, number: int, address: int, redo_from: int) -> None:
        """The last complete checkpoint is now ``number`` at ``address``; restart would begin
        at ``redo_from`` if that is older (NO_ADDRESS: at the checkpoint)."""
        self.number, self.address = number, address
        self.redo_from = redo_from if redo_from < address else NO_ADDRESS
        self.restart = min(address, redo_from)


class CheckpointMixin:
    """The queue manager's checkpoints and their aftermath (see the module docstring)."""

    def _checkpoint_timer(self, interval: float) -> Generator:
        """Ask the policy at the next multiple of ``interval`` after the last checkpoint, so
        that work followed by quiet still gets its checkpoint on time. Armed by a logged
        record, at most one at a time, and not re-armed by itself: an idle queue manager
        schedules nothing (which lets a simulation end)."""
        since = self.env.now - self.schedule.last_us
        wait = interval - since % interval if since >= 0 else interval
        yield self.env.timeout(wait)
        self.schedule.timer = None
        self._maybe_checkpoint("time")

    def _arm_timer(self) -> None:
        interval = self.settings.checkpoint_policy.interval_us
        schedule = self.schedule
        if interval and schedule.timer is None and not self.stopped:
            schedule.timer = self.env.process(self._checkpoint_timer(interval))

    def log_switched(self) -> None:
        """The platform's log moved on to its next file (a checkpoint may be due)."""
        self._maybe_checkpoint("log switch", switched=True)

    def _maybe_checkpoint(self, reason: str, switched: bool = False, force: bool = False) -> None:
        """Start a checkpoint in the background if the policy says one is due (or ``force``)."""
        schedule = self.schedule
        if self.stopped or schedule.running or self.writer is None:
            return
        if self.reserve.full and self._tail_held_by_uow():
            return  # it could free nothing, and would eat the reserve commit and backout need
        if force or self.settings.checkpoint_policy.due(schedule.counted, self.env.now - schedule.last_us, switched):
            self.env.process(self.checkpoint(reason))

    def checkpoint(self, reason: str = "request", *, wait: bool = False) -> Generator:
        """Take a checkpoint (one at a time): record the active units of work, flush the queue
        files (log first), and let the log's tail move. If one is running, return False at
        once – or, with ``wait`` (shutdown, on request), wait for it and then take one."""
        schedule = self.schedule
        while schedule.running:
            if not wait:
                return False
            yield schedule.finished
        schedule.running = True
        schedule.finished = self.env.event()
        try:
            number = schedule.number + 1
            # the work done up to this checkpoint, before its own records
            mark = {"reason": reason, "at_s": self.env.now / 1e6, "messages_put": self.counters.messages_put,
                    "messages_got": self.counters.messages_got, "log_records": self._appends,
                    "counted": schedule.counted}
            begin = yield from self._log(CheckpointBegin(number, int(self.env.now)), essential=True)
            # The units of work open at the Begin record, as the log has them there: one whose
            # Commit/Backout is already appended is over, one whose Prepare is, is in doubt,
            # whatever its force is still doing.
            table = [UowEntry(u.id, RecUowState.IN_DOUBT if u.prepare_address != NO_ADDRESS else RecUowState.IN_FLIGHT,
                              u.first, u.last, int(u.begin_us), len(u.ops), u.xid)
                     for u in sorted(self.uows.values(), key=lambda u: u.id)
                     if u.logged and u.end_address == NO_ADDRESS]
            extra = self.platform.checkpoint_records
            for record in (extra(self.services, begin) if extra is not None else ()):
                yield from self._log(record, essential=True)
            # Write-ahead rule: the log describing the queue data is on disk before the data.
            yield self.writer.force()
            durable = self.writer.durable
            # Where the platform's checkpoints in normal running write only what has waited
            # through two of them, a message put since the previous checkpoint began stays in
            # memory
            before = (schedule.address if self.platform.checkpoint_write_lag and reason not in WRITE_ALL
                      else NO_ADDRESS)
            redo_from = NO_ADDRESS  # ... and restart must begin at the oldest put held back
            for name in sorted(self.queues):
                queue = self.queues[name]
                yield from self.charge_io(queue.flush(durable, self.outcome, before), behind=False)
                if queue.held_from < redo_from:
                    redo_from = queue.held_from
            # ... and on the device (what the page cache holds, what is being written behind)
            yield from self.sync_queue_files()
            # Each queue's media recovery record is kept by every checkpoint (damaged ones too).
            # Kept queues live with their keeper, not in this queue manager's files.
            queues = sorted([QueueEntry(q.name, q.depth, q.media_address) for q in self.queues.values()
                             if q.keeper is None]
                            + [QueueEntry(d.name, 0, d.media) for d in self.damaged.values()]
                            + [QueueEntry(n, 0, a) for n, a in self._defining.items()],
                            key=lambda e: e.name)
            yield from self._log(CheckpointEnd(begin, number, int(self.env.now), table, queues), essential=True)
            yield self.writer.force()
            space = self.platform.space
            head = self.writer.next_address
            free = space.free_bytes(head, self.tail()) if before != NO_ADDRESS else None
            schedule.moved(number, begin, redo_from)
            space.save_control(LogControl(begin, self.tail(), number, self.media_address(), schedule.redo_from))
            yield from self.device.write(512)  # the control data's own write
            space.release(self.tail())
            # The episode ends when a checkpoint has moved what it can; one that writes only
            # what has waited through two checkpoints may free nothing yet, and does not end it
            self.reserve.space_freed(free is None or space.free_bytes(head, self.tail()) > free)
            self._report_extents()
            self._schedule_images()
            schedule.counted = 0
            schedule.last_us = self.env.now
            self.counters.checkpoints += 1
            if len(self.checkpoint_marks) < CHECKPOINT_MARKS_MAX:
                self.checkpoint_marks.append(mark)
            for uow in self.uows.values():
                uow.checkpoints_seen += 1
            self.say("checkpoint", number=number, reason=reason, address=begin)
            self._shunt(number)  # its rounds are written by processes of their own
            return True
        finally:
            schedule.running = False
            schedule.finished.succeed()

    def _report_extents(self) -> None:
        """After a checkpoint, say which log files restart and media recovery need, when
        that has changed since it was last said."""
        self.drain_space_events()
        needed = self.platform.space.recovery_extents()
        if needed is None:
            return
        restart, media = needed
        if (restart, media) != self._extents_said:
            self._extents_said = (restart, media)
            if restart:
                self.say("restart-extent", extent=restart)
            if media:
                self.say("media-extent", extent=media)

    def _schedule_images(self) -> None:
        """Automatic media images (where the platform schedules them): after a checkpoint,
        image the queues that are due, one at a time, in the background."""
        media = self.platform.media
        schedule = media.schedule if media is not None else None
        if schedule is None or self._imaging or self.stopped or self.writer is None:
            return
        head = self.writer.next_address
        due = [name for name, q in sorted(self.queues.items())
               if q.media_address != NO_ADDRESS and schedule.due(self.env.now - q.media_us, head - q.media_address)]
        if due:
            self._imaging = True
            self.env.process(self._auto_images(due))

    def _auto_images(self, names) -> Generator:
        """Image ``names`` one after the other, then checkpoint so the images count."""
        from mqlog.core.objects.media import MediaRecoveryError, record_image

        try:
            for name in names:
                if name in self.queues and not self.stopped:
                    try:
                        yield from record_image(self, name, checkpoint=False)
                    except (MqiError, MediaRecoveryError):
                        continue  # log full, queue gone or already being imaged: next time
            if not self.stopped:
                yield from self.checkpoint("media images", wait=True)
        finally:
            self._imaging = False

    def _report_long_uows(self) -> None:
        """At a log switch, units of work that have lived through more than three
        checkpoints are reported as long-running (each time, with how often it was said)."""
        for uow in self.uows.values():
            if uow.logged and uow.end_address == NO_ADDRESS and uow.checkpoints_seen > 3:
                uow.switches_reported += 1
                self.say("long-uow-at-switch", uow=uow.id, application=uow.application,
                         checkpoints=uow.checkpoints_seen, first=uow.first, times=uow.switches_reported,
                         begin=uow.begin)
