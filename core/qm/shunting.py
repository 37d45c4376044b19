"""Log shunting: after a checkpoint, rounds of backout-only copies of long-lived units of work.

On a platform that shunts, the unit of work a policy picks has a round of copies of its
records – only what backing it out needs – appended at the head of the log and chained on
its backward chain, so that backout and restart read the round instead of reaching far back,
and the log behind it need not be kept for that unit. :class:`ShuntingMixin` is part of
:class:`mqlog.core.qm.manager.QueueManager` and runs at the end of each checkpoint.
"""

from __future__ import annotations

import attrs

from mqlog.core.format.records import NO_ADDRESS
from mqlog.core.objects.uow import UowState
from mqlog.core.platform import UowView


class ShuntingMixin:
    """The queue manager's shunting rounds (see the module docstring)."""

    def _shunt(self, number: int) -> bool:
        """Log shunting, after checkpoint ``number``: for each unit of work the policy picks,
        a round of backout-only copies of its records goes to the head of the log, chained
        on the unit's backward chain, and the unit's first record becomes the round's – the
        log behind it is no longer needed to back it out.

        The round is appended in one step (no other record can come between its records);
        if the buffer or the log cannot take it now, the unit is not shunted (that is said)
        and the next checkpoint tries again. Returns whether anything was appended."""
        shunting = self.platform.shunting
        if shunting is None or self.writer is None or self.stopped:
            return False
        policy, make_round = shunting.policy, shunting.make_round
        views = [UowView(u.id, u.first, u.state is UowState.PREPARED, u.begin_us,
                         checkpoints_since_mark=u.checkpoints_seen - u.shunt_mark)
                 for u in sorted(self.uows.values(), key=lambda u: u.id)
                 if u.logged and u.end_address == NO_ADDRESS and u.busy is None and not u.in_call]
        appended = False
        for uow_id in policy.select(number, views):
            uow = self.uows.get(uow_id)
            if uow is None or not uow.logged or uow.end_address != NO_ADDRESS:
                continue
            records = make_round(uow.id, uow.last, uow.ops)
            sizes = [len(r.to_bytes()) for r in records]
            free = self.log_free_bytes()
            if not self.writer.has_room(sum(sizes)) or (
                    free is not None and free - sum(sizes) < self._reserve_bytes()):
                self.counters.shunts_failed += 1
                self.say("shunt-failed", uow=uow.id, bytes=sum(sizes))
                continue
            prev, first = uow.last, NO_ADDRESS
            for record in records:
                prev = self.writer.append(attrs.evolve(record, prev=prev))
                first = prev if first == NO_ADDRESS else first
            self._records_since += sum(map(self.platform.checkpoint_policy.counts, records))
            self._uow_ages.discard((uow.first, uow.id))
            uow.first, uow.last = first, prev
            if uow.prepare_address != NO_ADDRESS:
                uow.prepare_address = prev  # in doubt on the log from here on too
            self._uow_ages.add((uow.first, uow.id))
            uow.shunt_mark = uow.checkpoints_seen
            uow.shunts += 1
            self.counters.shunts += 1
            self.counters.shunted_bytes += sum(sizes)
            self.say("uow-shunted", uow=uow.id, round=uow.shunts, address=first, bytes=sum(sizes))
            appended = True
        return appended
