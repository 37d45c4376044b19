"""Timed waits – MQGET's wait interval – without a SimPy timeout each; and the log
addresses the MQI calls in progress hold (:class:`Marks`).

A waiting MQGET waits for a message or for its wait interval to run out. With a SimPy
``Timeout`` a wait, every wait that a message ends leaves its timeout in the event queue
until its time comes: a requester waits until the run's end, a putget getter 60 seconds, so
a run at hundreds of applications carried tens of thousands of stale events (34,000 after
0.8 virtual seconds at 400 + 400), and every event the run scheduled paid for them in the
heap. :class:`Deadlines` keeps the waits' deadlines in a heap of its own, with one SimPy
timeout pending – at the earliest deadline – and drops the waits that ended early as they
come to its front (or, when they outnumber the live ones, all at once).

A wait that runs out is told as its timeout told it: its event succeeds with
:data:`TIMED_OUT` at the deadline, in the order the waits began.
"""

from __future__ import annotations

from heapq import heapify, heappop, heappush

import simpy

#: the value a wait's event succeeds with when its deadline passes first
TIMED_OUT = object()


class Deadlines:
    """The deadlines of timed waits (see the module docstring)."""

    __slots__ = ("env", "_heap", "_seq", "_armed", "_live")

    def __init__(self, env: simpy.Environment):
        self.env = env
        self._heap: list[tuple[float, int, simpy.Event]] = []
        self._seq = 0
        self._armed = float("inf")  # the deadline the pending timeout is for
        self._live = 0  # waits added and not yet ended

    def add(self, event: simpy.Event, at: float) -> None:
        """``event`` succeeds with :data:`TIMED_OUT` at ``at`` unless it has triggered by then;
        call :meth:`ended` when the wait is over, however it ended."""
        self._seq += 1
        self._live += 1
        heap = self._heap
        if len(heap) > 2 * self._live + 64:  # the waits ended early outnumber the live ones
            heap[:] = [entry for entry in heap if not entry[2].triggered]
            heapify(heap)
        heappush(heap, (at, self._seq, event))
        if at < self._armed:
            self._arm(at)

    def ended(self) -> None:
        """A wait added is over (its message came, it timed out, or it was cancelled)."""
        self._live -= 1

    def _arm(self, at: float) -> None:
        self._armed = at
        timer = self.env.timeout(at - self.env.now)
        timer.callbacks.append(lambda _event, at=at: self._fire(at))

    def _fire(self, at: float) -> None:
        if at != self._armed:
            return  # an earlier deadline re-armed it since: that timeout does the work
        self._armed = float("inf")
        heap, now = self._heap, self.env.now
        while heap and (heap[0][0] <= now or heap[0][2].triggered):
            _, _, event = heappop(heap)
            if not event.triggered:
                event.succeed(TIMED_OUT)
        if heap:
            self._arm(heap[0][0])


class Marks:
    """The log addresses MQI calls in progress hold (each call's, while its records are logged
    before their effect): a multiset whose adds and removes cost O(1) – every call makes one
    of each – and whose lowest, which only a media image or a checkpoint asks for, is found
    when asked."""

    __slots__ = ("_count",)

    def __init__(self):
        self._count: dict[int, int] = {}

    def add(self, address: int) -> None:
        count = self._count
        count[address] = count.get(address, 0) + 1

    def remove(self, address: int) -> None:
        count = self._count
        left = count[address] - 1
        if left:
            count[address] = left
        else:
            del count[address]

    def __bool__(self) -> bool:
        return bool(self._count)

    def __len__(self) -> int:
        return sum(self._count.values())

    def lowest(self) -> int:
        """The lowest address held (ValueError when none is)."""
        return min(self._count)
