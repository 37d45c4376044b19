"""Queues in memory and how they reach their queue files.

A queue holds its messages in memory (MQ's queue buffers) and, for persistent ones, in its
queue file. What the file must hold is decided here, at flush time, by the **write-ahead
rule**: a message's uncommitted state goes to the file only once the log record that
describes it is on disk. A put whose record is still in the log buffer is left for a later
flush; a get whose record is not yet durable is written as the committed message it was.
Committed state and removals are only ever made after the commit record was forced, so
they are always safe to write.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from heapq import heappop, heappush
from typing import Protocol

import attrs

from mqlog.core.objects.queuefile import IoCost, MessageState, QueueFile
from mqlog.core.format.records import NO_ADDRESS



class QueueKeeper(Protocol):
    """What keeps a queue that is not this queue manager's alone: its messages live outside
    the queue manager's memory and files, outlive it, and may be shared with other queue
    managers (a platform's keeper, e.g. a structure outside every queue manager). The queue manager
    makes no queue file for such a queue and lists it in no checkpoint; at restart the
    keeper is the truth about its messages, and restart only resolves the outcome of this
    queue manager's own units of work there."""

    def check(self, queue: str, ending: bool) -> None:
        """Raise MqiError if ``queue`` cannot be used now (``ending``: by a commit or
        backout of a unit of work that touched it)."""


@attrs.frozen
class DamagedQueue:
    """A queue whose file could not be loaded: applications get 2101 until it is
    re-created from its media image and the log, or deleted."""

    name: str
    reason: str
    media: int = NO_ADDRESS  # its media recovery record, if the log names one


_MISSING = object()
#: the states as module constants: an enum member looked up on its class costs more than
#: the rest of a line, and redo calls the Queue methods below once or twice per message
_COMMITTED, _PUT_UNCOMMITTED, _GOT_UNCOMMITTED = (MessageState.COMMITTED, MessageState.PUT_UNCOMMITTED,
                                                  MessageState.GOT_UNCOMMITTED)
#: message lengths seen, each kept once: a message's ``length`` is an int object of its own
#: (32 bytes) past 256, and most workloads put one size or a few; a queue holding a million
#: messages shares them. Bounded, so that a run of every size cannot grow it without end.
_LENGTHS: dict[int, int] = {}
_LENGTHS_KEPT = 4096


class Available(MutableMapping):
    """A queue's committed, unlocked messages: arrival number -> message id, taken oldest
    first; iterated in arrival order (the mapping a ``SortedDict`` was here before).

    A dict holds the entries; a heap of arrival numbers finds the oldest. Messages mostly
    arrive in increasing order, so a push costs next to nothing, and a message made
    available again (a backout, restart's redo) just goes into the heap where it belongs.
    Deleting a number leaves its heap entry behind: an entry counts only while its number
    is in the dict (one may be there twice after a delete and re-insert: harmless), and the
    heap is rebuilt at an insert once the stale entries outnumber the live ones.
    """

    __slots__ = ("_heap", "_map")

    def __init__(self, items=()):
        self._map: dict[int, bytes] = {}
        self._heap: list[int] = []
        for seq, msg_id in dict(items).items():
            self[seq] = msg_id

    def __setitem__(self, seq: int, msg_id: bytes) -> None:
        entries = self._map
        if seq not in entries:
            heap = self._heap
            if len(heap) > 2 * len(entries) + 64:
                heap = self._heap = sorted(entries)  # drop the stale entries (a sorted list is a heap)
            heappush(heap, seq)
        entries[seq] = msg_id

    def __getitem__(self, seq: int) -> bytes:
        return self._map[seq]

    def __delitem__(self, seq: int) -> None:
        del self._map[seq]

    def discard(self, seq: int) -> None:
        """Remove ``seq`` if it is there."""
        self._map.pop(seq, None)

    def __contains__(self, seq) -> bool:
        return seq in self._map

    def __len__(self) -> int:
        return len(self._map)

    def __iter__(self):
        return iter(sorted(self._map))

    def __repr__(self) -> str:
        return f"Available({dict(self.items())!r})"

    def pop(self, seq: int, default=_MISSING):
        if default is _MISSING:
            return self._map.pop(seq)
        return self._map.pop(seq, default)

    def popitem(self, index: int = -1) -> tuple[int, bytes]:
        """Remove and return the item at ``index`` in arrival order (SortedDict's
        convention: the newest by default, 0 the oldest)."""
        if not self._map:
            raise KeyError("popitem(): the available set is empty")
        if index == 0:
            return self.pop_first()
        seq = sorted(self._map)[index]
        return seq, self._map.pop(seq)

    def pop_first(self) -> tuple[int, bytes]:
        """Remove and return the oldest entry (KeyError if there is none)."""
        heap, entries = self._heap, self._map
        while heap:
            seq = heappop(heap)
            msg_id = entries.pop(seq, _MISSING)
            if msg_id is not _MISSING:
                return seq, msg_id
        raise KeyError("pop_first(): the available set is empty")

    def clear(self) -> None:
        self._map.clear()
        self._heap.clear()


@attrs.define(slots=True, eq=False, weakref_slot=False)  # one a message held: no slot it never uses
class Message:
    """One message on a queue."""

    msg_id: bytes
    seq: int  # arrival order on its queue
    persistent: bool
    length: int
    data: bytes | None  # None: only in the queue file (read on demand)
    state: MessageState = MessageState.COMMITTED
    uow: int = 0
    put_address: int = NO_ADDRESS
    get_address: int = NO_ADDRESS
    #: taken by an MQGET still in progress (reading it, logging it): not available to others
    busy: bool = False
    #: the queue manager (its member number + 1) whose MQGET holds it busy, on a kept queue
    #: (0: a queue of this queue manager alone)
    busy_by: int = 0


class Queue:
    """A local queue: its messages in arrival order and its queue file."""

    def __init__(self, name: str, file: QueueFile | None, *, max_depth: int = 5000, attributes: str = ""):
        self.name = name
        self.file = file
        self.max_depth = max_depth
        self.attributes = attributes
        self.messages: dict[bytes, Message] = {}
        #: committed, unlocked messages by arrival order: what MQGET takes first
        self.available: Available = Available()
        self.dirty: set[bytes] = set()
        #: persistent bytes held only in memory, not yet in the file (the queue buffer)
        self.unflushed_bytes = 0
        self.getters: list = []  # waiting MQGETs: (event, syncpoint)
        #: the queue's lock (:class:`mqlog.core.qm.locks.QueueLock`), set by the queue manager
        self.mutex = None
        #: the queue's media recovery record: its latest media image, or its creation record
        self.media_address = NO_ADDRESS
        self.media_us = 0.0  # virtual time of that record (for automatic images)
        self.calls = 0  # MQPUT/MQGET calls on it between logging and taking effect
        #: what keeps the queue when it is not this queue manager's alone (the same Queue
        #: object then serves every queue manager sharing it; no queue file); None: in this
        #: queue manager's memory and queue file
        self.keeper: QueueKeeper | None = None
        #: a load restart left to the queue's first use: (IoCost of its metadata reads,
        #: messages whose index entries it builds) – or, while that first use pays it, the
        #: event other callers wait on; None: loaded (the queue manager charges it,
        #: ``QueueManager._load_unloaded``)
        self.unloaded = None
        self._seq = 0
        #: the newest durable log address a flush has brought the file up to: a file never
        #: goes back to an older view of the log (see :meth:`flush`)
        self.flushed_to = 0

    @property
    def depth(self) -> int:
        """CURDEPTH: every message on the queue, committed or not."""
        return len(self.messages)

    def next_seq(self) -> int:
        self._seq += 1
        return self._seq

    def add(self, message: Message) -> None:
        length = _LENGTHS.get(message.length)
        if length is not None:
            message.length = length
        elif len(_LENGTHS) < _LENGTHS_KEPT:
            _LENGTHS[message.length] = message.length
        self.messages[message.msg_id] = message
        if message.seq > self._seq:
            self._seq = message.seq
        if message.state is _COMMITTED:
            self.available[message.seq] = message.msg_id
        if message.persistent:
            self.dirty.add(message.msg_id)
            if message.data is not None:
                self.unflushed_bytes += message.length

    def take_messages(self, rebuilt: "Queue") -> None:
        """Hold the messages of ``rebuilt`` from now on (a queue rebuilt aside from a
        backup and the log), arrival numbering included."""
        self.messages, self.available, self._seq = rebuilt.messages, rebuilt.available, rebuilt._seq

    def take_first(self, taker: int = 0) -> Message | None:
        """The oldest available message, removed from the available set (not from the queue);
        ``taker``: the queue manager taking it (a kept queue outlives one that crashes)."""
        if not self.available:
            return None
        _, msg_id = self.available.pop_first()
        message = self.messages[msg_id]
        message.busy = True
        message.busy_by = taker
        return message

    def make_available(self, message: Message) -> None:
        message.busy = False
        message.busy_by = 0
        message.state = _COMMITTED
        message.uow = 0
        message.get_address = NO_ADDRESS
        self.available[message.seq] = message.msg_id
        if message.persistent:
            self.dirty.add(message.msg_id)

    def lock(self, message: Message, uow: int, get_address: int) -> None:
        message.busy = False
        message.busy_by = 0
        message.state = _GOT_UNCOMMITTED
        message.uow = uow
        message.get_address = get_address
        self.available._map.pop(message.seq, None)  # Available.discard, without the call (redo's hot path)
        if message.persistent:
            self.dirty.add(message.msg_id)

    def remove(self, message: Message) -> None:
        message.busy = False
        message.busy_by = 0
        self.messages.pop(message.msg_id, None)
        self.available._map.pop(message.seq, None)  # Available.discard, without the call
        if message.persistent:
            self.dirty.add(message.msg_id)
            if message.data is not None and (self.file is None or message.msg_id not in self.file.messages):
                self.unflushed_bytes = max(0, self.unflushed_bytes - message.length)

    def flush(self, durable: int, outcome=None) -> IoCost:
        """Bring the queue file up to date with every change whose log record is before
        ``durable`` (the write-ahead rule), and write it. Changes not yet covered stay dirty.

        ``outcome(uow, durable)`` says whether a unit of work's Commit (True) or Backout
        (False) record is already on disk while memory has not caught up (its force is in
        flight): the file must then show the outcome, not the uncommitted state."""
        file = self.file
        if file is None or not self.dirty:
            return IoCost([], [])
        # A caller may hold an older durable address than the file already shows: a
        # checkpoint takes it once and flushes queue after queue, and a spill of a later queue
        # can run in between with a newer one. What a flush brought to disk stays on disk, so
        # the older address would take the file backwards: a got message whose Commit the
        # spill saw durable (and removed from the file) would be written back as committed,
        # without its data (no longer in memory). The file shows the newest view it has seen.
        if durable < self.flushed_to:
            durable = self.flushed_to
        else:
            self.flushed_to = durable
        keep: set[bytes] = set()
        in_file = file.messages
        messages = self.messages
        # A message put and removed again since the last flush, never in the file, leaves
        # nothing to do (most of the dirty set after a busy spell): only the rest is sorted.
        changed = [msg_id for msg_id in self.dirty if msg_id in messages or msg_id in in_file]
        for msg_id in sorted(changed):  # sorted: the same changes always give the same file
            m = self.messages.get(msg_id)
            stored = in_file.state_of(msg_id)  # (state, uow) in the file, None if not there
            if m is None or not m.persistent:
                if stored is not None:
                    file.remove(msg_id)
                continue
            ended = outcome(m.uow, durable) if (outcome is not None and m.uow) else None
            if ended is not None:
                keep.add(msg_id)  # memory will catch up when the force returns
                if m.state is _PUT_UNCOMMITTED and not ended or (
                        m.state is _GOT_UNCOMMITTED and ended):
                    if stored is not None:
                        file.remove(msg_id)
                    continue
                target = (_COMMITTED, 0)
            elif m.state is _PUT_UNCOMMITTED:
                if m.put_address >= durable:
                    keep.add(msg_id)
                    continue
                target = (_PUT_UNCOMMITTED, m.uow)
            elif m.state is _GOT_UNCOMMITTED:
                if m.get_address >= durable:
                    keep.add(msg_id)
                    target = (_COMMITTED, 0)
                else:
                    target = (_GOT_UNCOMMITTED, m.uow)
            else:
                target = (_COMMITTED, 0)
            if stored is None:
                if m.data is None:  # cannot happen: data leaves memory only once in the file
                    raise AssertionError(f"message {msg_id!r} of {self.name} has no data to write")
                file.put(msg_id, m.data, target[0], target[1], m.put_address)
            elif stored != target:
                file.set_state(msg_id, *target)
        written = self.dirty - keep
        self.dirty = keep
        cost = file.flush()
        # Data now in the file need not stay in memory: a deep queue is not held twice.
        for msg_id in written:
            m = self.messages.get(msg_id)
            if m is not None and m.data is not None and msg_id in in_file:
                m.data = None
                self.unflushed_bytes = max(0, self.unflushed_bytes - m.length)
        return cost

    def read(self, message: Message) -> tuple[bytes, IoCost]:
        """A message's data, from memory or (charged) from the queue file."""
        if message.data is not None:
            return message.data, IoCost([], [])
        return self.file.read_data(message.msg_id)
