"""Log space in normal running: the reserve, claims on it, and the log-full episode.

The log holds back room for what must not fail when it fills – commit, backout,
compensation, checkpoints – sized from the units of work still open (:data:`RESERVE_PER_UOW`,
:data:`RESERVE_PER_OP`). Work that is not essential claims its room before it appends; when
the log cannot take it beside the reserve, the call is refused with MQRC_RESOURCE_PROBLEM
(or, on a platform whose callers wait for log space, waits for a checkpoint to free some),
the event is said once per episode, and the platform's space policy is asked which units
of work to roll back or roll forward to release the tail.

The reserve and the episode are the :class:`LogReserve`'s, a part of the queue manager with
its own state (the room claimed, the episode, the callers waiting for space);
:class:`LogSpaceMixin` groups the queue manager's methods that ask it, with no state of its
own.
"""

from __future__ import annotations

from typing import Generator, Sequence

import attrs

from mqlog.core.errors import LogWriteError
from mqlog.core.format.records import HEADER_SIZE, NO_ADDRESS, Clr, Get, Prepare, Put
from mqlog.core.objects.uow import MqiError, Ops, Reason, UnitOfWork, UowState
from mqlog.core.platform import UowView

#: log space always kept for what must not fail when the log is full (commit, backout,
#: compensation, checkpoints): a fixed part for page padding of the forces involved …
RESERVE_FIXED_BYTES = 8 * 4096
#: … plus, per unit of work still open, what backing it out may log: at restart that is a
#: compensation record per operation and a Backout record, and the force that ends it may
#: close a page short (the pad policy wastes at most a quarter page)
RESERVE_PER_UOW = 1000 + 1024
RESERVE_PER_OP = 12 + Clr._S.size + HEADER_SIZE + 8
#: checkpoints a caller waits through for log space (where the platform's callers wait
#: rather than fail) before the queue manager gives up: none freed enough, so none will
FUTILE_WAITS_MAX = 1000


class LogReserve:
    """The log space held back for what must not fail, the room claimed by work in progress,
    and the log-full episode (see the module docstring)."""

    __slots__ = ("claimed", "full", "relieving", "freed", "no_room_said")

    def __init__(self) -> None:
        #: log bytes claimed from the free space by work not yet appended (a record, a whole
        #: segmented message, a round of shunting, a roll forward): given back once it is in
        self.claimed = 0
        #: inside a log-full episode (its messages are said once an episode)
        self.full = False
        #: the space policy's actions are being carried out
        self.relieving = False
        #: callers waiting for log space (the event a checkpoint that frees some triggers)
        self.freed = None
        #: prepared units of work too big to roll forward (said once each)
        self.no_room_said: set[int] = set()

    def bytes(self, units: int, ops: int, objects: int) -> int:
        """The log space held back, in bytes, with ``units`` units of work logged and open
        holding ``ops`` operations, and ``objects`` queues a checkpoint lists: backing every
        unit out and the checkpoints that follow, and the room claimed."""
        return (RESERVE_FIXED_BYTES + 2 * self.checkpoint_bytes(units, objects) + self.claimed
                + RESERVE_PER_UOW * units + RESERVE_PER_OP * ops)

    @staticmethod
    def checkpoint_bytes(units: int, objects: int) -> int:
        """What one checkpoint logs, at most, with ``units`` units of work open and ``objects``
        queues to list."""
        return 750 + 200 * units + 64 * objects

    def claim(self, nbytes: int) -> None:
        """Hold ``nbytes`` of the free space until :meth:`give_back`."""
        self.claimed += nbytes

    def give_back(self, nbytes: int) -> None:
        """What a :meth:`claim` held is appended (or not needed)."""
        self.claimed -= nbytes

    def space_freed(self, room: bool = True) -> None:
        """A checkpoint moved the tail as far as it could: callers waiting for log space try
        again, and the episode is over unless it freed nothing where the next one may (``room``
        False: a checkpoint that wrote only what waited through two of them)."""
        if room:
            self.full = False
        if self.freed is not None:
            freed, self.freed = self.freed, None
            freed.succeed()


class LogSpaceMixin:
    """The queue manager's log-space reserve, claims and log-full handling (see the module
    docstring)."""

    def _tail_held_by_uow(self) -> bool:
        """Whether a unit of work older than the last checkpoint holds the tail (a new
        checkpoint would not move it)."""
        return (self.platform.uows_pin_log and bool(self._ages)
                and self._ages[0][0] < self.schedule.address)

    def _check_space(self) -> None:
        """Relieve a log that is getting full, in stages: a checkpoint moves the tail as far
        as it can; the policy decides which units of work to roll back or forward (those
        older than the last checkpoint hold the tail: ``UowView.pins_tail``); a checkpoint
        after them moves the tail past what they freed (:meth:`_relieve`)."""
        if self.reserve.relieving:
            return
        policy = self.platform.space_policy
        usage = self.platform.space.usage(self.writer.next_address, self.tail())
        if usage >= policy.checkpoint_at and not self._tail_held_by_uow():
            # Only if it would release space: a unit of work older than the last checkpoint
            # holds the tail where it is whatever a new checkpoint does.
            self._maybe_checkpoint("log getting full", force=True)
        if usage < policy.relieve_from:
            return
        actions = policy.relieve(usage, self._uow_views())
        if actions:
            self.counters.log_full_events += 1
            self.reserve.relieving = True
            self.env.process(self._relieve(actions))

    def _uow_views(self) -> list[UowView]:
        """What the space policy sees of the units of work open, oldest first."""
        uows = self.uows
        return [UowView(uid, first, uows[uid].state is UowState.PREPARED, uows[uid].begin_us,
                        pins_tail=first < self.schedule.address)
                for first, uid in self.units.ages if uid in uows and not uows[uid].ending]

    def _reserve_bytes(self) -> int:
        """Log space held back for what must not fail: backing out every open unit of work
        and the checkpoints that follow, in bytes."""
        # O(1): this runs before every record that is not essential, and walking the open
        # units of work here cost in proportion to them (hundreds at IBM's scale). The units
        # logged are the age index's entries; their operations are counted as they change
        # (:class:`~mqlog.core.qm.uowtable.UowTable`; its ``check`` keeps the count honest).
        return self.reserve.bytes(len(self._ages), self.units.logged_ops, len(self.queues) + len(self.damaged))

    def log_free_bytes(self) -> int | None:
        """How many more bytes the log takes before it is full (None: it never fills)."""
        if self.writer is None:
            return None
        return self.platform.space.free_bytes(self.writer.next_address, self.tail())

    def _claim_waiting(self, nbytes: int) -> Generator:
        """:meth:`_claim`, except that on a platform whose callers wait for log space
        (``full_log_waits``) a full log makes the caller wait for a checkpoint, or a
        background copy of the space's, to free some rather than fail.

        A caller that has waited through :data:`FUTILE_WAITS_MAX` checkpoints without room
        never will get it (the log is smaller than the space kept to back out the units of
        work that hold it): the queue manager ends abnormally, as an operator would cancel
        it once told the log is full, rather than checkpoint for ever."""
        waits = 0
        while True:
            try:
                self._claim(nbytes)
                return
            except MqiError as exc:
                if exc.reason is not Reason.MQRC_RESOURCE_PROBLEM or not self.platform.full_log_waits:
                    raise
            if waits >= FUTILE_WAITS_MAX:
                raise LogWriteError(
                    f"the active log stayed full through {waits} checkpoints: nothing can free it ({nbytes} bytes "
                    f"of records waited for room; it holds {self.log_free_bytes()} free "
                    f"bytes, and {self._reserve_bytes()} must be kept to back out the open units of work); give it "
                    "more or larger data sets")
            waits += 1
            reserve = self.reserve
            if reserve.freed is None:
                reserve.freed = self.env.event()
            # A checkpoint moving the tail frees space, and so does a background copy the
            # space was waiting for (an archive offload finishing): whichever comes first.
            started = self.env.now
            yield reserve.freed | self.writer.copies.progress()
            self.counters.log_full_wait_us += self.env.now - started

    def _claim(self, nbytes: int) -> None:
        """Check there is room for ``nbytes`` more (else 2102) and hold it until the caller
        gives it back (``self.reserve.give_back(nbytes)``) once its records are appended."""
        self._ensure_room(nbytes)
        self.reserve.claim(nbytes)

    def _has_room(self, nbytes: int) -> bool:
        """Whether ``nbytes`` more fit in the log beside the reserve (a log that never fills
        always has room)."""
        # (log_free_bytes and _reserve_bytes inlined: this runs before every record that is
        # not essential)
        writer = self.writer
        if writer is None:
            return True
        free = self.platform.space.free_bytes(writer.buffer.next_address, self.tail())
        return free is None or free - nbytes >= self.reserve.bytes(
            len(self._ages), self.units.logged_ops, len(self.queues) + len(self.damaged))

    def _ensure_room(self, nbytes: int) -> None:
        """Refuse new work when the log is full: the call fails with MQRC_RESOURCE_PROBLEM,
        nothing of it is logged, and the queue manager tries to release space. The log-full
        event is said once per episode, naming the long-running unit of work that holds the
        tail if one does. Commit and backout never come here: the reserve is theirs."""
        if self._has_room(nbytes):
            return
        self.counters.log_full_refusals += 1
        self.drain_space_events()
        if not self.reserve.full:
            self.reserve.full = True
            self.say("log-full")
            if self._tail_held_by_uow():
                oldest = self.units.oldest()[1]
                uow = self.uows.get(oldest)
                self.say("log-full-long-uow", uow=oldest,
                         application=uow.application if uow is not None else "",
                         begin=uow.begin if uow is not None else NO_ADDRESS)
            else:
                # Nothing holds the tail but the last checkpoint: records arrive faster than
                # checkpoints free the log behind them.
                self.say("log-full-housekeeping")
        if self.platform.space_policy is not None:
            self._check_space()
        if not self.writer.copies.running:
            # (A background copy in progress – an archive offload – frees the log when it
            # ends, and callers wait for that; a checkpoint now would only spend the reserve,
            # and one a refusal at a time would fill the log with checkpoints.)
            self._maybe_checkpoint("log full", force=True)
        raise MqiError(Reason.MQRC_RESOURCE_PROBLEM, "the log is full")


    def drain_space_events(self) -> None:
        """Say what the log space has queued to report (its own events), in order."""
        events = self.platform.space.events
        while events:
            event, fields = events.pop(0)
            self.say(event, **fields)


    def _relieve(self, actions) -> Generator:
        """Carry out the space policy's actions (roll back an active unit of work, roll a
        prepared one forward), then checkpoint if any of them released log."""
        released = False
        tried = set()
        try:
            while actions:
                for action in actions:
                    tried.add(action.uow)
                    uow = self.uows.get(action.uow)
                    if uow is None or uow.state is UowState.ENDED or uow.ending:
                        continue  # (ended, or ending on its own meanwhile: it frees its log itself)
                    if action.action == "rollback" and uow.state is UowState.ACTIVE:
                        uow.doomed = True  # from now on the application's calls get MQRC_BACKED_OUT
                        self.say("uow-rolled-back", uow=uow.id, application=uow.application, begin=uow.begin)
                        yield from self._backout_uow(uow)
                        self.counters.uows_rolled_back += 1
                        released = True
                    elif action.action == "rollforward" and uow.state is UowState.PREPARED:
                        if (yield from self._roll_forward(uow)):
                            self.say("uow-rolled-forward", uow=uow.id, application=uow.application,
                                     begin=uow.begin)
                            self.counters.uows_rolled_forward += 1
                            released = True
                # Extents are freed whole: a checkpoint that would move the tail only within
                # its extent frees nothing and spends the reserve (a round a unit, with
                # hundreds of units begun together, filled the log past it and left restart
                # no room to back them out). Sacrifice the next unit too until it pays.
                actions = () if not released or self._checkpoint_pays() else self._next_sacrifice(tried)
            if released:
                # The last stage: a checkpoint moves the tail past what was freed.
                yield from self.checkpoint("log space released", wait=True)
        finally:
            self.reserve.relieving = False

    def _checkpoint_pays(self) -> bool:
        """Whether a checkpoint now would free more log than it writes: the tail it would
        set (the oldest open unit's first record, or the head) in a later extent than the
        tail now, by more than a checkpoint's size."""
        space = self.platform.space
        head = self.writer.next_address
        after = min(head, self._ages[0][0]) if self._ages else head
        freed = (space.usage(head, self.tail()) - space.usage(head, after)) * space.capacity_bytes
        return freed > self.reserve.checkpoint_bytes(len(self._ages), len(self.queues) + len(self.damaged))

    def _next_sacrifice(self, tried: set) -> Sequence:
        """The space policy's next action while the log is still over its limit: the oldest
        unit of work left that holds the tail (none already ``tried``)."""
        usage = self.platform.space.usage(self.writer.next_address, self.tail())
        if usage < self.platform.space_policy.relieve_from:
            return ()
        views = [view for view in self._uow_views() if view.uow not in tried]
        return self.platform.space_policy.relieve(usage, views)[:1]

    def _roll_forward(self, uow: UnitOfWork) -> Generator:
        """Re-log a prepared unit of work's state at the head so the tail can move past it.

        Copies of its records (flagged *relogged*) are chained onto its last record and
        closed by a flagged Prepare. Only once that is on disk does the unit switch to the
        copies; until then its original records stay the ones restart uses, so a crash in
        the middle loses nothing. The coordinator's decision waits for the switch.

        The copies need log space of their own: the room is claimed first (new work is
        refused sooner meanwhile), and if the log cannot hold them the unit stays where it is
        (False; the log-full event then names it as the unit holding the tail)."""
        while uow.busy is not None:  # a round of shunting is being written: copy after it
            yield uow.busy
        if uow.state is not UowState.PREPARED:
            return False  # decided while it waited: nothing to roll forward
        estimate = 1000 + sum(op.length + 800 if op.kind == "put" else 300 for op in uow.ops if op.persistent)
        free = self.log_free_bytes()
        if free is not None and free - estimate < self._reserve_bytes():
            if uow.id not in self.reserve.no_room_said:
                self.reserve.no_room_said.add(uow.id)
                self.say("rollforward-no-room", uow=uow.id, needed=estimate, begin=uow.begin)
            return False
        self.reserve.claim(estimate)
        uow.busy = self.env.event()
        try:
            prev = uow.last
            first = NO_ADDRESS
            new_ops = Ops()
            for op in uow.ops:
                queue = self.queues.get(op.queue)
                message = queue.messages.get(op.msg_id) if queue is not None else None
                if not op.persistent or message is None:
                    new_ops.append(op)
                    continue
                if op.kind == "put":
                    data, cost = queue.read(message)
                    if cost.reads:
                        yield from self.charge_io(cost)
                    record = Put(queue.name, op.msg_id, data, len(data), uow=uow.id, prev=prev, relogged=True)
                else:
                    record = Get(queue.name, op.msg_id, 0, op.length, uow=uow.id, prev=prev, relogged=True)
                address = yield from self._log(record, essential=True)
                if first == NO_ADDRESS:
                    first = address
                new_ops.append(attrs.evolve(op, address=address, prev=prev))
                prev = address
            closing = yield from self._log(Prepare(int(self.env.now), uow.xid, uow=uow.id, prev=prev, relogged=True),
                                           essential=True)
            yield self.writer.force()
            if uow.state is UowState.ENDED:
                return True  # decided meanwhile: the copies are history, nothing to switch to
            # The copies are on disk: from now on they are the unit of work.
            self.units.moved(uow, first if first != NO_ADDRESS else closing, new_ops)
            uow.last = uow.prepare_address = closing
            return True
        finally:
            self.reserve.give_back(estimate)
            busy, uow.busy = uow.busy, None
            busy.succeed()

