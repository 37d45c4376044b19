"""The unit-of-work table: a queue manager's open units of work, the age index of those
that have logged, the next unit's number, and the operations the log reserve counts.

The oldest logged unit holds the log's tail (restart backs it out from its first record),
so the table keeps the logged units in order of their first record – a ``SortedList`` of
``(first address, uow id)``: the tail and the log-full report read its head in O(1) – and the
operations of those units as a running count, so that the log reserve (:mod:`.logspace`),
which is asked before every record that is not essential, costs O(1) however many units are
open (hundreds at IBM's scale). A unit is filed when its Begin is logged (:meth:`logged`),
moved when it is re-logged at the head (:meth:`moved`: a round of shunting, a roll forward),
and removed when it ends (:meth:`ended`). Restart files the units it leaves in doubt
(:meth:`restored`) and numbers new units after the highest it read (:meth:`number_from`).

The MQI calls' hot path numbers a new unit, files a unit's Begin and adds a logged unit's
operation itself (``next_id``, ``open``, ``ages`` and ``logged_ops`` are public: a ``+= 1``
rather than a call, on every MQI call under syncpoint: :mod:`.syncpoint`, :mod:`.mqi`,
``QueueManager._log_uow``); everything else changes the table through its methods. ``open``
and ``ages`` are never rebound: the queue manager keeps them bound as ``uows`` and ``_ages``. :meth:`check` holds its invariants for stress and crash tests.
"""

from __future__ import annotations

from sortedcontainers import SortedList

from mqlog.core.format.records import NO_ADDRESS
from mqlog.core.objects.uow import Ops, UnitOfWork


class UowTable:
    """The units of work of one queue manager (see the module docstring)."""

    __slots__ = ("open", "ages", "next_id", "logged_ops")

    def __init__(self) -> None:
        #: the units of work not yet ended, by id (``QueueManager.uows`` is this dict)
        self.open: dict[int, UnitOfWork] = {}
        #: (first address, uow id) of each logged unit still open, oldest first
        self.ages = SortedList()
        #: the number the next unit of work gets
        self.next_id = 1
        #: the operations of the units in :attr:`ages` (the log reserve's count)
        self.logged_ops = 0

    def new_id(self) -> int:
        """The next unit's number (taken)."""
        uow_id = self.next_id
        self.next_id = uow_id + 1
        return uow_id

    def number_from(self, next_id: int) -> None:
        """New units are numbered from ``next_id`` on, unless the table is past it already:
        numbers never repeat (restart, an incarnation's first number)."""
        self.next_id = max(self.next_id, next_id)

    def logged(self, uow: UnitOfWork) -> None:
        """``uow``'s first record (its Begin) is logged at ``uow.first``: it holds the log
        from there on, with the operations it has so far."""
        self.ages.add((uow.first, uow.id))
        self.logged_ops += len(uow.ops)

    def restored(self, uow: UnitOfWork) -> None:
        """Restart rebuilt ``uow`` from the log and leaves it open (in doubt)."""
        self.open[uow.id] = uow
        self.logged(uow)

    def moved(self, uow: UnitOfWork, first: int, ops: Ops | None = None) -> None:
        """``uow`` was re-logged at the head: its first record is ``first`` from now on (and
        its operations ``ops``, where the copies replace them)."""
        self.ages.discard((uow.first, uow.id))
        if ops is not None:
            self.logged_ops += len(ops) - len(uow.ops)
            uow.ops = ops
        uow.first = first
        self.ages.add((first, uow.id))

    def ended(self, uow: UnitOfWork) -> None:
        """``uow`` committed or backed out: it holds nothing any more."""
        if uow.first != NO_ADDRESS:  # uow.logged, without the property's call (every unit ends here)
            self.ages.discard((uow.first, uow.id))
            self.logged_ops -= len(uow.ops)
        self.open.pop(uow.id, None)

    def oldest(self) -> tuple[int, int] | None:
        """(first address, id) of the logged unit that started earliest in the log, or None."""
        return self.ages[0] if self.ages else None

    def check(self) -> None:
        """The table's invariants (sortedcontainers' ``_check()`` style): raises
        AssertionError naming what is broken."""
        ages = {uid for _, uid in self.ages}
        assert ages <= set(self.open), f"ended units of work {sorted(ages - set(self.open))} still pin the tail"
        counted = sum(len(self.open[uid].ops) for uid in ages)
        assert self.logged_ops == counted, \
            f"the reserve counts {self.logged_ops} operations of logged units, not {counted}"
        for uow in self.open.values():
            assert (uow.id in ages) == uow.logged, f"unit of work {uow.id}: age index out of step"
