"""Log shunting: after a checkpoint, rounds of backout-only copies of long-lived units of work.

On a platform that shunts, the unit of work a policy picks has a round of copies of its
records – only what backing it out needs – appended at the head of the log and chained on
its backward chain, so that backout and restart read the round instead of reaching far back,
and the log behind it need not be kept for that unit. :class:`ShuntingMixin` is part of
:class:`mqlog.core.qm.manager.QueueManager`; a checkpoint ends by asking it for rounds, and
each round is then written by a process of its own while logging goes on.

As IBM describes it for MQ for z/OS (quoted with the platform's records, zos/records.py), a
round is written by an internal task to the current position in the log while logging goes
on, and the unit of work is shunted once the whole of it has been processed: here, a round is
written beside the other units' records and the unit switches to it only once the whole
round is in. IBM says nothing of how that task waits for log buffers or for the unit's own
calls; the model's choices are said where they are made.
"""

from __future__ import annotations

from typing import Generator

import attrs

from mqlog.core.format.records import NO_ADDRESS
from mqlog.core.objects.uow import MqiError, UnitOfWork, UowState
from mqlog.core.platform import UowView
from mqlog.core.qm.checkpointing import CHECKPOINT_MARKS_MAX


class ShuntingMixin:
    """The queue manager's shunting rounds (see the module docstring)."""

    def _shunt(self, number: int) -> bool:
        """Log shunting, after checkpoint ``number``: for each unit of work the policy picks,
        a round of backout-only copies of its records is started (:meth:`_shunt_round`).
        Returns whether any round was started.

        A round is refused (the platform's console says so; the next checkpoint tries
        again) only when the active log cannot hold it beside the reserve kept for commit,
        backout and checkpoints – not because the log buffer is smaller than the round: the
        round goes through the buffer a record at a time, waiting for space like any other
        logger. (IBM's reason for refusing is quoted in zos/records.py: the model reads it as
        this room check, made when the round starts.)"""
        shunting = self.platform.shunting
        if shunting is None or self.writer is None or self.stopped:
            return False
        policy, make_round = shunting.policy, shunting.make_round
        # A unit with a call in progress may have a record on its way chained on its old
        # last record; one being re-logged (a round of shunting in progress, a roll forward)
        # is ``busy``: neither is picked, so a checkpoint that comes while a unit's round is
        # still being written never starts a second round for it.
        views = [UowView(u.id, u.first, u.state is UowState.PREPARED, u.begin_us,
                         checkpoints_since_mark=u.checkpoints_seen - u.shunt_mark)
                 for u in sorted(self.uows.values(), key=lambda u: u.id)
                 if u.logged and u.end_address == NO_ADDRESS and u.busy is None and not u.in_call]
        started = False
        for uow_id in policy.select(number, views):
            uow = self.uows.get(uow_id)
            if uow is None or not uow.logged or uow.end_address != NO_ADDRESS:
                continue
            stands = (uow.last, len(uow.ops))
            if uow.round_bytes is None or uow.round_bytes[0] != stands:
                records = make_round(uow.id, uow.last, uow.ops)
                sizes = [len(r.to_bytes()) for r in records]
                uow.round_bytes = (stands, sum(sizes))
            else:  # measured at an earlier checkpoint, and the unit has logged nothing since
                records = None
            need = uow.round_bytes[1]
            free = self.log_free_bytes()
            if free is not None and free - need < self._reserve_bytes():
                self.counters.shunts_failed += 1
                self.say("shunt-failed", uow=uow.id, bytes=need, begin=uow.begin,
                         application=uow.application)
                continue
            if records is None:
                records = make_round(uow.id, uow.last, uow.ops)
                sizes = [len(r.to_bytes()) for r in records]
            # The round's room is held from the free space until its records are in (as a
            # roll forward's is): other work is refused sooner meanwhile, never the round.
            self.reserve.claim(sum(sizes))
            uow.busy = self.env.event()
            self.env.process(self._shunt_round(uow, records, sizes, uow.checkpoints_seen, number))
            started = True
        return started

    def _shunt_round(self, uow: UnitOfWork, records: list, sizes: list[int], mark: int,
                     number: int = 0) -> Generator:
        """Write one round of ``uow`` (``records``, ``sizes`` bytes each, made when checkpoint
        ``number`` ended; ``mark``: the unit's checkpoints then) a record at a time through the
        writer's waiting append, so that other units' records come between them and a round
        larger than the log buffer waits for buffer space as the writer empties it.

        The unit is ``busy`` meanwhile: its own next call that logs waits for the round
        (``_log_uow``), as do its coordinator's decision and a roll forward. The model
        chooses waiting over chaining the call's record into the middle of the round because
        a round's records must follow one another on the unit's chain – restart recognises
        a complete round by walking back from its last record through records of the round
        only (core/recovery/undo.py) – and the round lists the operations of its start,
        which a record chained after it then follows.

        The unit's first and last records switch to the round only when its last record is
        appended. Before that, a crash leaves an incomplete round at the end of the unit's
        chain, which restart passes over to the original records (still in the log, active
        or archived: until the switch they are the unit's first records). After it, the
        round is on disk before any log it frees could be reused: the tail moves only at a
        checkpoint, and a checkpoint forces the log first."""
        prev, first = uow.last, NO_ADDRESS
        held = sum(sizes)
        try:
            for record, size in zip(records, sizes):
                prev = yield from self._log(attrs.evolve(record, prev=prev), essential=True)
                self.reserve.give_back(size)  # appended: the room it held is in use now
                held -= size
                first = prev if first == NO_ADDRESS else first
            # Switched before the unit is released: its next call chains on the round.
            self._switch_to_round(uow, first, prev, mark, sum(sizes))
            if len(self.shunt_rounds) < CHECKPOINT_MARKS_MAX:
                self.shunt_rounds.append({"uow": uow.id, "checkpoint": number, "bytes": sum(sizes),
                                          "operations": sum(len(r.backout_round().ops) for r in records)})
        except MqiError:
            # The queue manager is stopping: the round is left incomplete at the end of the
            # unit's chain, where restart passes over it; the unit keeps its records.
            pass
        finally:
            self.reserve.give_back(held)
            busy, uow.busy = uow.busy, None
            busy.succeed()

    def _switch_to_round(self, uow: UnitOfWork, first: int, last: int, mark: int, nbytes: int) -> None:
        """The round from ``first`` to ``last`` is appended whole: from now on it is the unit
        of work's first and last record (the log behind it is no longer needed for it)."""
        self.units.moved(uow, first)
        uow.last = last
        if uow.prepare_address != NO_ADDRESS:
            uow.prepare_address = last  # in doubt on the log from here on too
        uow.shunt_mark = mark
        uow.shunts += 1
        self.counters.shunts += 1
        self.counters.shunted_bytes += nbytes
        self.say("uow-shunted", uow=uow.id, round=uow.shunts, address=first, bytes=nbytes,
                 application=uow.application, begin=uow.begin)
