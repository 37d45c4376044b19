"""What the queue manager offers the code that extends it: the services object.

Platforms (and the core's own media images) log records of their own, claim log space for
them, hold the replay point of a fuzzy snapshot, and read the checkpoint number. They do it
through :class:`QmServices`, the public object a queue manager hands out as
``qm.services`` (it implements :class:`mqlog.core.platform.QueueManagerServices`), never
through the queue manager's private members: the queue manager may rearrange its
bookkeeping, and this object is the one place that must keep meaning the same.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Generator, Iterator

from mqlog.core.objects.queuefile import IoCost


class QmServices:
    """The queue manager's services to platforms (see the module docstring)."""

    __slots__ = ("_qm",)

    def __init__(self, qm):
        self._qm = qm

    @property
    def checkpoint_number(self) -> int:
        """The number of the last checkpoint taken (the one being taken is this + 1)."""
        return self._qm.schedule.number

    def log(self, record) -> Generator:
        """Append ``record`` as essential work (it may use the log space held in reserve:
        claim the room first with :meth:`log_space`); returns its address."""
        return (yield from self._qm._log(record, essential=True))

    @contextmanager
    def log_space(self, nbytes: int) -> Iterator[None]:
        """Claim room for ``nbytes`` of log for the body of the ``with``: raises MqiError
        MQRC_RESOURCE_PROBLEM at once if the log cannot take them beside the reserve; while
        held, other work is refused sooner, so the records the caller appends always fit."""
        qm = self._qm
        qm._claim(nbytes)
        try:
            yield
        finally:
            qm.reserve.give_back(nbytes)

    def replay_point(self) -> int:
        """The log address from which replay would bring a snapshot taken now up to date:
        the head, or earlier while an MQI call that has logged has not yet taken effect."""
        qm = self._qm
        start = qm.writer.next_address
        if qm._inflight:
            start = min(start, qm._inflight.lowest())
        return start

    @contextmanager
    def holding(self, address: int) -> Iterator[None]:
        """Keep :meth:`replay_point` at or before ``address`` for the body of the ``with``
        (a snapshot whose records are still being written)."""
        inflight = self._qm._inflight
        inflight.add(address)
        try:
            yield
        finally:
            inflight.remove(address)

    @contextmanager
    def imaging(self, queue: str) -> Iterator[None]:
        """Mark ``queue`` as having its media image written for the body of the ``with``."""
        busy = self._qm._imaging_queues
        busy.add(queue)
        try:
            yield
        finally:
            busy.discard(queue)

    def is_imaging(self, queue: str) -> bool:
        """Whether ``queue``'s media image is being written now."""
        return queue in self._qm._imaging_queues

    @property
    def queues(self):
        """The queue manager's queues by name (read them; change them only through MQI calls)."""
        return self._qm.queues

    def queue(self, name: str):
        """The queue ``name`` as an MQI call sees it (MqiError if unknown or damaged)."""
        return self._qm._queue(name)

    def charge(self, cost: IoCost) -> Generator:
        """Charge queue-file I/O to the device (and the queue manager's counters)."""
        yield from self._qm.charge_io(cost)
