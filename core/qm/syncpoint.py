"""Units of work in normal running: begun, committed, backed out, prepared and resolved.

A unit of work starts with an application's first call under syncpoint and is logged from
its first persistent operation. MQCMIT logs a Commit record and forces it, and only then
are its changes visible to other applications; MQBACK undoes from memory (no log read) and
logs what it undid. Two-phase commit prepares a unit and leaves it in doubt until the
external coordinator's decision (:meth:`UnitsOfWorkMixin.resolve`). :meth:`check` holds the
invariants between queues and units of work that stress and crash tests assert. An
application's MQCMIT, MQBACK or prepare that logs pays the host's CPU for its record and,
if it had to wait for the force, for the wakeup (:mod:`mqlog.core.host`).
:class:`UnitsOfWorkMixin` is part of :class:`mqlog.core.qm.manager.QueueManager`.
"""

from __future__ import annotations

from typing import Generator

from mqlog.core.format.records import NO_ADDRESS, Backout, Commit, Prepare, UndoneOp
from mqlog.core.objects.queuefile import MessageState
from mqlog.core.objects.queues import Queue
from mqlog.core.objects.uow import MEMBER_SHIFT, MqiError, Reason, UnitOfWork, UowState
from mqlog.core.qm.connection import Connection


class UnitsOfWorkMixin:
    """The queue manager's units of work (see the module docstring)."""

    def _uow_for(self, conn: Connection, *, adding: bool = True) -> UnitOfWork:
        uow = conn.uow
        if uow is None:
            units = self.units  # (numbered and filed here: a call less on every first MQI call)
            uow = UnitOfWork(units.next_id, conn.application, self.env.now)
            units.next_id += 1
            units.open[uow.id] = uow
            conn.uow = uow
            # (no MAXUMSGS check: a new unit has no operations, and MAXUMSGS is at least 1)
        elif uow.doomed:
            raise MqiError(Reason.MQRC_BACKED_OUT, "the queue manager backed the unit of work out to free log space")
        elif uow.state is UowState.PREPARED:
            raise MqiError(Reason.MQRC_UOW_IN_DOUBT, "the unit of work is prepared")
        elif adding and len(uow.ops) >= self.config.max_uow_messages:
            raise MqiError(Reason.MQRC_SYNCPOINT_LIMIT_REACHED, f"MAXUMSGS is {self.config.max_uow_messages}")
        if conn._in_call is None:  # until the call returns, its records may still be on their way
            uow.in_call += 1
            conn._in_call = uow
        return uow

    def _check_kept_queues(self, uow: UnitOfWork) -> None:
        """Before a commit or backout: each kept queue the unit touched is usable (its keeper
        raises MqiError if not, and the unit stays as it is)."""
        for name in uow.ops.queues:
            queue = self.queues.get(name)
            if queue is not None and queue.keeper is not None:
                queue.keeper.check(name, True)

    def _commit(self, conn: Connection):
        uow = conn.uow
        if uow is None:
            return
        self._check_kept_queues(uow)
        if uow.doomed:
            raise MqiError(Reason.MQRC_BACKED_OUT, "the queue manager backed the unit of work out to free log space")
        yield from self._commit_uow(uow, call=True)
        conn.uow = None

    def _commit_uow(self, uow: UnitOfWork, *, call: bool = False) -> Generator:
        """Commit ``uow``; ``call``: for an application's MQCMIT, whose record and force
        wakeup take the host's CPU (the coordinator's decision and log-space relief do not)."""
        uow.in_call += 1
        try:
            yield from self._held(self._commit_logged(uow, call))
        finally:
            uow.in_call -= 1

    def _commit_logged(self, uow: UnitOfWork, call: bool = False) -> Generator:
        uow.ending = True
        if uow.first != NO_ADDRESS:  # uow.logged, without the property's call (every MQCMIT)
            if call:
                yield from self.cpu.charge(self.cpu.profile.logged_us("commit"), "log")
            address = yield from self._log_uow(uow, lambda prev: Commit(int(self.env.now), uow.ops.persistent,
                                                                        uow=uow.id, prev=prev), essential=True)
            uow.end_address, uow.end_commit = address, True
            waited = yield from self._force()
        else:
            waited = False
        # Only now, with the commit record on disk, do the changes become visible.
        self._apply_outcome(uow, commit=True)
        if uow.ops:  # a unit whose every call was refused committed nothing: no commit to count
            self.counters.commits += 1
        if call:
            yield from self._woken(waited)

    def _backout(self, conn: Connection):
        uow = conn.uow
        if uow is None:
            return
        self._check_kept_queues(uow)
        if uow.doomed:  # already backed out by the queue manager; the application now knows
            conn.uow = None
            return
        yield from self._backout_uow(uow, call=True)
        conn.uow = None

    def _backout_uow(self, uow: UnitOfWork, *, call: bool = False) -> Generator:
        """Back a unit of work out from memory (no log read), logging what was undone;
        ``call``: for an application's MQBACK (its record and wakeup take CPU)."""
        uow.in_call += 1
        try:
            yield from self._held(self._backout_logged(uow, call))
        finally:
            uow.in_call -= 1

    def _backout_logged(self, uow: UnitOfWork, call: bool = False) -> Generator:
        uow.ending = True
        if uow.logged:
            if call:
                yield from self.cpu.charge(self.cpu.profile.logged_us("backout"), "log")
            undone = [UndoneOp(op.address, i) for i, op in enumerate(uow.ops) if op.persistent]
            address = yield from self._log_uow(
                uow, lambda prev: Backout(int(self.env.now), undone, uow=uow.id, prev=prev), ending=True)
            uow.end_address, uow.end_commit = address, False
            waited = yield from self._force()
        else:
            waited = False
        self._apply_outcome(uow, commit=False)
        self.counters.backouts += 1
        if call:
            yield from self._woken(waited)

    def _apply_outcome(self, uow: UnitOfWork, commit: bool) -> None:
        """Make a unit of work's outcome visible (from memory: no log read) and end it.

        Committing makes its puts available and removes what it got; backing out, newest
        operation first, removes its puts and makes what it got available again."""
        # The queues to wake, in the order the operations first reach them: a dict, not a
        # set, since a set of queues (hashed by identity) iterates in memory-address order
        # and the getters' wake order decides the order of their records in the log.
        woken: dict[Queue, None] = {}
        for put, name, msg_id in uow.ops.targets(newest_first=not commit):
            queue = self.queues.get(name)
            if queue is not None and queue.settle(msg_id, put == commit) and put == commit:
                woken[queue] = None
        self.units.ended(uow)
        uow.state = UowState.ENDED
        for queue in woken:
            self._wake_getters(queue)

    def _prepare(self, conn: Connection, xid: bytes):
        uow = self._uow_for(conn, adding=False)
        if uow.logged:
            yield from self.cpu.charge(self.cpu.profile.logged_us("prepare"), "log")
            uow.prepare_address = yield from self._log_uow(
                uow, lambda prev: Prepare(int(self.env.now), xid, uow=uow.id, prev=prev))
            waited = yield from self._force()
        else:
            waited = False
        uow.state = UowState.PREPARED
        uow.xid = xid
        yield from self._woken(waited)
        return uow.id

    def resolve(self, uow_id: int, commit: bool) -> Generator:
        """The external coordinator's decision for a prepared (in-doubt) unit of work."""
        uow = self.uows.get(uow_id)
        if uow is None or uow.state is not UowState.PREPARED:
            raise MqiError(Reason.MQRC_HCONN_ERROR, f"no unit of work {uow_id} in doubt")
        while uow.busy is not None:  # being rolled forward: decide once that is done
            yield uow.busy
        if commit:
            yield from self._commit_uow(uow)
        else:
            yield from self._backout_uow(uow)

    def _gone_by_outcome(self, m) -> bool:
        """Whether a message's unit of work has its Commit or Backout on the log while its
        force is still in flight, and the outcome removes the message: a queue flush may
        then already have removed it from the file (``Queue.flush``'s ``outcome``), and
        memory removes it when the force returns."""
        uow = self.uows.get(m.uow) if m.uow else None
        if uow is None or uow.end_address == NO_ADDRESS:
            return False
        return (m.state is MessageState.GOT_UNCOMMITTED) == uow.end_commit

    def check(self) -> None:
        """Invariants of the queues and units of work (sortedcontainers' ``_check()`` style),
        for stress and crash tests: raises AssertionError naming what is broken."""
        for queue in self.queues.values():
            queue.check()
            committed = {m.seq: m.msg_id for m in queue.messages.values()
                         if m.state is MessageState.COMMITTED and not m.busy}
            assert len({m.seq for m in queue.messages.values()}) == len(queue.messages), \
                f"{queue.name}: two messages share an arrival number"
            assert dict(queue.available) == committed, f"{queue.name}: available set differs from committed messages"
            for m in queue.messages.values():
                if queue.keeper is not None and m.uow and m.uow >> MEMBER_SHIFT != self.config.member:
                    continue  # another member's unit of work: that member checks it
                if m.state is not MessageState.COMMITTED:
                    uow = self.uows.get(m.uow)
                    assert uow is not None and uow.state is not UowState.ENDED, \
                        f"{queue.name}: message {m.msg_id!r} held by unit of work {m.uow}, which is not open"
                    assert any(op.msg_id == m.msg_id for op in uow.ops), \
                        f"{queue.name}: unit of work {m.uow} does not list message {m.msg_id!r}"
                if m.persistent and m.data is None and not self._gone_by_outcome(m):
                    assert queue.file is not None and m.msg_id in queue.file.messages, \
                        f"{queue.name}: message {m.msg_id!r} has no data in memory or in the file"
            assert len(queue.messages) <= queue.max_depth or not queue.messages, f"{queue.name}: over MAXDEPTH"
        self.units.check()
        for uow in self.uows.values():
            for op in uow.ops:
                queue = self.queues.get(op.queue)
                message = queue.messages.get(op.msg_id) if queue else None
                if message is not None and uow.state is not UowState.ENDED:
                    assert message.uow in (uow.id, 0), f"message {op.msg_id!r} of unit {uow.id} held by {message.uow}"
        if self.writer is not None:
            assert self.writer.durable <= self.writer.next_address
            tail = self.tail()
            assert tail == NO_ADDRESS or tail <= self.writer.next_address, "the tail is ahead of the head"

    def in_doubt(self) -> list[UnitOfWork]:
        return [u for u in self.uows.values() if u.state is UowState.PREPARED]
