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

from array import array
from collections.abc import Mapping
from typing import Protocol

import attrs

from mqlog.core.objects.available import Available
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


#: the states as module constants: an enum member looked up on its class costs more than
#: the rest of a line, and redo calls the Queue methods below once or twice per message
_COMMITTED, _PUT_UNCOMMITTED, _GOT_UNCOMMITTED = (MessageState.COMMITTED, MessageState.PUT_UNCOMMITTED,
                                                  MessageState.GOT_UNCOMMITTED)


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


#: rows a queue's columns grow by at once. The msg id -> row map files a message in one of
#: the first _DIRECT rows under its row (one int object a row, _ROW_AT, shared by every
#: queue: a shallow queue finds its row with no search); past them, under its chunk's code
#: (a number shared by the chunk's rows, not an int object a message), and finds the row in
#: the chunk's slice of the msg id column (``list.index``, at C speed)
_CHUNK = 16
#: the columns' 64-bit unsigned type: "L" where a C long is 8 bytes (its conversion from a
#: Python int of two or more digits – every log address – is a loop; "Q"'s goes through a
#: byte array, about twice the cost of a store, and a signed one's through PyArg_Parse)
_U64 = "L" if array("L").itemsize == 8 else "Q"
_DIRECT = 4096
_ROW_AT: list[int] = list(range(_DIRECT))
#: a chunk's code, ~ its first row (negative: not a row), one int object shared by every
#: queue (a number past 256 is an object of its own): chunk n's is _CHUNK_AT[n]
_CHUNK_AT: list[int] = [~row for row in range(0, 1024 * _CHUNK, _CHUNK)]
#: a row's flags: its state's value in bits 0-1, then these (_GOT, _BY: it has an entry in
#: the queue's ``_got``, ``_busy_by``; a bit test is cheaper than a dict's truth value)
_PERSISTENT, _BUSY, _GOT, _BY = 4, 8, 16, 32
_ASIDE = _GOT | _BY
_STATE_OF = (None, _COMMITTED, _PUT_UNCOMMITTED, _GOT_UNCOMMITTED)  # by flags & 3
#: by a row's flags, what the hot paths test and set: a tuple's subscript is one quick step
#: of the interpreter, an int's & and | each a generic call
_STATE_BITS = tuple(flags & 3 for flags in range(64))
_IS_PERSISTENT = tuple(flags & _PERSISTENT != 0 for flags in range(64))
_IS_ASIDE = tuple(flags & _ASIDE != 0 for flags in range(64))
_RELEASED = tuple((flags & _PERSISTENT) | 1 for flags in range(64))  # committed, nothing aside
_LOCKED = tuple((flags & _PERSISTENT) | 3 for flags in range(64))  # got, uncommitted, nothing aside
_TAKEN = tuple((flags | _BUSY) & ~_BY for flags in range(64))  # busy, no taker aside
#: what :meth:`Queue.read` costs from memory – nearly every MQGET's: one shared cost, not a new
#: one a read (an attrs object with two lists, built by Python code); nobody changes a cost
_NO_IO = IoCost([], [])


class Messages(Mapping):
    """A queue's messages: message id -> :class:`Message`, in the order they were added.

    A read builds the message from the queue's columns: a snapshot, never a view, so one
    read before its message left the queue (MQGET reads its message after removing it)
    never sees a later message that took over its row. Change messages through the
    :class:`Queue`'s methods; storing one here (restart's load) files it as it is, with none
    of :meth:`Queue.add`'s bookkeeping."""

    __slots__ = ("_queue",)

    def __init__(self, queue: Queue) -> None:
        self._queue = queue

    def __getitem__(self, msg_id: bytes) -> Message:
        queue = self._queue
        row = queue._row(msg_id)
        if row < 0:
            raise KeyError(msg_id)
        return queue._message(row)

    def get(self, msg_id: bytes, default=None):
        queue = self._queue
        row = queue._row(msg_id)
        return default if row < 0 else queue._message(row)

    def __setitem__(self, msg_id: bytes, message: Message) -> None:
        if message.msg_id != msg_id:
            raise ValueError(f"message {message.msg_id!r} filed under {msg_id!r}")
        self._queue._store(message)

    def clear(self) -> None:
        """Drop every message (a structure that failed), with no other bookkeeping."""
        self._queue._clear_rows()

    def __contains__(self, msg_id: object) -> bool:
        return msg_id in self._queue._where

    def __iter__(self):
        return iter(self._queue._where)

    def __len__(self) -> int:
        return len(self._queue._where)

    def __repr__(self) -> str:
        return f"Messages({list(self.values())!r})"


class Queue:
    """A local queue: its messages in arrival order and its queue file.

    The messages are held in columns, one row a message – its id, data, arrival number,
    length, unit of work, put address and flags (state, persistent, busy; a get address
    aside while it is locked) – not an object each: a :class:`Message` is built when one is read (:attr:`messages`). A row left
    by a message that went is taken by the next one added."""

    def __init__(self, name: str, file: QueueFile | None, *, max_depth: int = 5000, attributes: str = ""):
        self.name = name
        self.file = file
        self.max_depth = max_depth
        self.attributes = attributes
        self._clear_rows()
        self.messages = Messages(self)
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
        #: the oldest put the last flush held back as too young (NO_ADDRESS: none)
        self.held_from = NO_ADDRESS

    # -- the columns -------------------------------------------------------------------------

    def _clear_rows(self) -> None:
        #: msg id -> its row, or its chunk's code (insertion order: the order messages were added)
        self._where: dict[bytes, int] = {}
        self._ids: list = []  # msg id of each row (None: a free row)
        self._data: list = []  # data in memory (None: only in the queue file)
        self._seqs = array(_U64)  # arrival order on the queue
        self._lengths = array(_U64)
        #: unit of work (0: none): a list, not an array – a unit's number is one int object
        #: shared by its messages (the unit's own, or its record's in redo, as a Message held
        #: it), and a list's subscript is a quick step of the interpreter, an array's a call
        self._uows: list = []
        self._puts = array(_U64)  # put address (NO_ADDRESS: not logged)
        self._flags = bytearray()  # state (bits 0-1), _PERSISTENT, _BUSY, _GOT, _BY
        self._free = array(_U64)  # free rows, the lowest last (taken first)
        #: row -> the get address of a message got under syncpoint (a message is seldom
        #: locked for long, so not a column a row)
        self._got: dict[int, int] = {}
        #: row -> the queue manager (its member number + 1) whose MQGET holds it busy, where
        #: not 0 (a kept queue's)
        self._busy_by: dict[int, int] = {}

    def _grow(self) -> None:
        """Add a chunk of free rows to every column."""
        rows = len(self._ids)
        self._ids += [None] * _CHUNK
        self._data += [None] * _CHUNK
        zeros = bytes(8 * _CHUNK)
        for column in (self._seqs, self._lengths, self._puts):
            column.frombytes(zeros)
        self._uows += [0] * _CHUNK
        self._flags += bytes(_CHUNK)
        self._free.extend(range(rows + _CHUNK - 1, rows - 1, -1))
        while len(_CHUNK_AT) * _CHUNK <= rows:
            _CHUNK_AT.extend(~row for row in range(len(_CHUNK_AT) * _CHUNK, 2 * len(_CHUNK_AT) * _CHUNK, _CHUNK))

    def _row(self, msg_id: bytes) -> int:
        """The row of ``msg_id``, -1 if it is not on the queue."""
        at = self._where.get(msg_id)
        if at is None:
            return -1
        return (at if at >= 0 else self._ids.index(msg_id, ~at, _CHUNK + ~at))

    def _message(self, row: int) -> Message:
        flags = self._flags[row]
        return Message(self._ids[row], self._seqs[row], flags & _PERSISTENT != 0, self._lengths[row],
                       self._data[row], _STATE_OF[flags & 3], self._uows[row], self._puts[row],
                       self._got[row] if flags & _GOT != 0 else NO_ADDRESS, flags & _BUSY != 0,
                       self._busy_by[row] if flags & _BY != 0 else 0)

    def _store(self, message: Message) -> int:
        """File ``message`` in its row (a free one if it is new); returns the row."""
        msg_id = message.msg_id
        at = self._where.get(msg_id)
        if at is None:
            if not self._free:
                self._grow()
            row = self._free.pop()
            self._ids[row] = msg_id
            self._where[msg_id] = (_ROW_AT[row] if row < _DIRECT else _CHUNK_AT[row // _CHUNK])
        else:
            row = at if at >= 0 else self._ids.index(msg_id, ~at, _CHUNK + ~at)
        self._data[row] = message.data
        self._seqs[row] = message.seq
        self._lengths[row] = message.length
        self._uows[row] = message.uow
        self._puts[row] = message.put_address
        state = message.state  # (identity tests: an enum member's hash and value are Python-level calls)
        flags = ((1 if state is _COMMITTED else 2 if state is _PUT_UNCOMMITTED else 3)
                 | (_PERSISTENT if message.persistent else 0) | (_BUSY if message.busy else 0))
        self._got.pop(row, None)
        self._busy_by.pop(row, None)
        if message.get_address != NO_ADDRESS:
            self._got[row] = message.get_address
            flags |= _GOT
        if message.busy_by != 0:
            self._busy_by[row] = message.busy_by
            flags |= _BY
        self._flags[row] = flags
        return row

    def check(self) -> None:
        """The columns' invariants; AssertionError naming the first one broken. O(rows)."""
        rows = len(self._ids)
        assert all(len(column) == rows for column in (self._data, self._seqs, self._lengths, self._uows,
                                                      self._puts, self._flags)), f"{self.name}: columns differ in length"
        free = set(self._free)
        assert len(free) == len(self._free) and len(free) + len(self._where) == rows, \
            f"{self.name}: a row is both free and held, or neither"
        for msg_id, at in self._where.items():
            row = at if at >= 0 else self._ids.index(msg_id, ~at, _CHUNK + ~at)  # (ValueError: filed under the wrong chunk)
            assert row not in free and at == (row if row < _DIRECT else ~(row - row % _CHUNK)), \
                f"{self.name}: {msg_id!r} filed wrongly"
        for row in free:
            assert self._ids[row] is None and self._data[row] is None and self._uows[row] == 0, \
                f"{self.name}: free row {row} holds a message"
        for table, bit in ((self._got, _GOT), (self._busy_by, _BY)):
            assert all(row not in free and self._flags[row] & bit for row in table), \
                f"{self.name}: a row aside without its flag"
            assert sum(1 for row in range(rows) if row not in free and self._flags[row] & bit) == len(table), \
                f"{self.name}: a row flagged aside is not"

    # -- the queue ---------------------------------------------------------------------------

    @property
    def depth(self) -> int:
        """CURDEPTH: every message on the queue, committed or not."""
        return len(self._where)

    def next_seq(self) -> int:
        self._seq += 1
        return self._seq

    def add(self, message: Message) -> None:
        msg_id, seq, state, persistent = message.msg_id, message.seq, message.state, message.persistent
        if not (msg_id in self._where or message.busy or message.busy_by != 0 or message.get_address != NO_ADDRESS):
            self.put(msg_id, seq, persistent, message.length, message.data, state, message.uow, message.put_address)
            return
        self._store(message)  # (filed again, or taken or locked: restart's, a rebuild's)
        if seq > self._seq:
            self._seq = seq
        if state is _COMMITTED:
            self.available[seq] = msg_id
        if persistent:
            self.dirty.add(msg_id)
            if message.data is not None:
                self.unflushed_bytes += message.length

    def put(self, msg_id: bytes, seq: int, persistent: bool, length: int, data: bytes | None,
            state: MessageState = _COMMITTED, uow: int = 0, put_address: int = NO_ADDRESS) -> None:
        """Add a new message – not on the queue, neither taken nor locked – from its fields,
        with no :class:`Message` built (MQPUT's and redo's hot path)."""
        try:
            row = self._free.pop()
        except IndexError:
            self._grow()
            row = self._free.pop()
        self._ids[row] = msg_id
        self._where[msg_id] = (_ROW_AT[row] if row < _DIRECT else _CHUNK_AT[row // _CHUNK])
        self._data[row] = data
        self._seqs[row] = seq
        self._lengths[row] = length
        self._uows[row] = uow
        self._puts[row] = put_address
        if seq > self._seq:
            self._seq = seq
        if state is _COMMITTED:
            self._flags[row] = _RELEASED[_PERSISTENT] if persistent else 1
            self.available[seq] = msg_id
        else:
            self._flags[row] = (2 if state is _PUT_UNCOMMITTED else 3) + (_PERSISTENT if persistent else 0)
        if persistent:
            self.dirty.add(msg_id)
            if data is not None:
                self.unflushed_bytes += length

    def take_messages(self, rebuilt: "Queue") -> None:
        """Hold the messages of ``rebuilt`` from now on (a queue rebuilt aside from a
        backup and the log), arrival numbering included."""
        (self._where, self._ids, self._data, self._seqs, self._lengths, self._uows, self._puts, self._flags,
         self._free, self._got, self._busy_by) = (rebuilt._where, rebuilt._ids, rebuilt._data, rebuilt._seqs,
                                                 rebuilt._lengths, rebuilt._uows, rebuilt._puts, rebuilt._flags,
                                                 rebuilt._free, rebuilt._got, rebuilt._busy_by)
        self.available, self._seq = rebuilt.available, rebuilt._seq

    def take_first(self, taker: int = 0) -> Message | None:
        """The oldest available message, removed from the available set (not from the queue);
        ``taker``: the queue manager taking it (a kept queue outlives one that crashes)."""
        if not self.available:
            return None
        _, msg_id = self.available.pop_first()
        at = self._where[msg_id]
        return self._take_row(at if at >= 0 else self._ids.index(msg_id, ~at, _CHUNK + ~at), msg_id, taker)

    def take(self, msg_id: bytes, taker: int = 0) -> Message | None:
        """The available message ``msg_id`` (an MQGET matching a message id, as a channel's
        agent takes its synchronisation record), taken as :meth:`take_first` takes the oldest;
        None if it is not available (not on the queue, or held by a unit of work)."""
        at = self._where.get(msg_id)
        if at is None:
            return None
        row = at if at >= 0 else self._ids.index(msg_id, ~at, _CHUNK + ~at)
        if self.available.pop(self._seqs[row], None) is None:
            return None
        return self._take_row(row, msg_id, taker)

    def _take_row(self, row: int, msg_id: bytes, taker: int) -> Message:
        """:meth:`take_first`'s and :meth:`take`'s step once the message is out of the available
        set: taken, by ``taker`` (built without :meth:`_message`'s call: MQGET's hot path)."""
        column = self._flags
        flags = column[row]
        if _IS_ASIDE[flags] and flags & _BY:
            del self._busy_by[row]
        flags = _TAKEN[flags]
        if taker:
            self._busy_by[row] = taker
            flags |= _BY
        column[row] = flags
        return Message(msg_id, self._seqs[row], _IS_PERSISTENT[flags], self._lengths[row], self._data[row],
                       _STATE_OF[_STATE_BITS[flags]], self._uows[row], self._puts[row],
                       self._got[row] if flags & _GOT else NO_ADDRESS, True, taker)

    def make_available(self, message: Message) -> None:
        if not self.settle(message.msg_id, True):  # (a message no longer on the queue)
            self.available[message.seq] = message.msg_id
            if message.persistent:
                self.dirty.add(message.msg_id)

    def lock(self, message: Message, uow: int, get_address: int) -> None:
        """Lock ``message`` (taken by an MQGET) for unit of work ``uow``."""
        if not self.apply_get(message.msg_id, uow, get_address, True):  # (no longer on the queue)
            self.available._map.pop(message.seq, None)  # Available.discard, without the call
            if message.persistent:
                self.dirty.add(message.msg_id)

    def settle(self, msg_id: bytes, available: bool, uow: int = 0) -> bool:
        """Apply a unit of work's outcome to one of its messages, as :meth:`make_available`
        (``available``: a put committed, a get backed out) or :meth:`remove` would, without
        building the message; False if it is not on the queue.

        With ``uow`` (restart's redo of its end), ``available`` says whether it committed,
        and a message ``uow`` does not hold uncommitted is left as it is (False): a put
        committed or a get backed out makes it available, a put backed out or a get
        committed removes it."""
        at = self._where.get(msg_id)
        if at is None:
            return False
        row = at if at >= 0 else self._ids.index(msg_id, ~at, _CHUNK + ~at)
        flags = self._flags[row]
        if uow:
            state = _STATE_BITS[flags]
            if state < 2 or self._uows[row] != uow:
                return False
            available = (state == 2) == available  # (a put: state 2; a get: 3)
        self._uows[row] = 0
        if _IS_ASIDE[flags]:  # (either way, nothing stays aside)
            if flags & _GOT:
                del self._got[row]
            if flags & _BY:
                del self._busy_by[row]
        if available:
            self._flags[row] = _RELEASED[flags]
            self.available[self._seqs[row]] = msg_id = self._ids[row]  # (the queue's own msg id object)
            if _IS_PERSISTENT[flags]:
                self.dirty.add(msg_id)
            return True
        msg_id = self._ids[row]  # (the queue's own object: the dicts and sets below find it by identity)
        del self._where[msg_id]
        data = self._data[row]
        if _STATE_BITS[flags] == 1:  # (only a committed message can be available)
            self.available._map.pop(self._seqs[row], None)
        self._ids[row] = None
        self._data[row] = None
        self._free.append(row)
        if _IS_PERSISTENT[flags]:
            self.dirty.add(msg_id)
            if data is not None and (self.file is None or msg_id not in self.file.messages):
                self.unflushed_bytes = max(0, self.unflushed_bytes - self._lengths[row])
        return True

    # -- restart's redo: a logged change applied by msg id, no Message built -----------------

    def apply_get(self, msg_id: bytes, uow: int, address: int, any_state: bool = False) -> bool:
        """A logged MQGET of ``msg_id`` (at ``address``) applied, if the message is on the
        queue: removed (outside syncpoint: ``uow`` 0) or, if committed (``any_state``: in
        whatever state), locked by ``uow``. True when it locked it."""
        if not uow:
            self.settle(msg_id, False)
            return False
        at = self._where.get(msg_id)
        if at is None:
            return False
        row = at if at >= 0 else self._ids.index(msg_id, ~at, _CHUNK + ~at)
        column = self._flags
        flags = column[row]
        if _STATE_BITS[flags] != 1 and not any_state:
            return False
        if _IS_ASIDE[flags]:
            if flags & _GOT:
                del self._got[row]
            if flags & _BY:
                del self._busy_by[row]
        if address != NO_ADDRESS:
            self._got[row] = address
            column[row] = _LOCKED[flags] + _GOT
        else:
            column[row] = _LOCKED[flags]
        self._uows[row] = uow
        self.available._map.pop(self._seqs[row], None)  # Available.discard, without the call
        if _IS_PERSISTENT[flags]:
            self.dirty.add(self._ids[row])
        return True

    def remove(self, message: Message) -> None:
        if not self.settle(message.msg_id, False):  # (a message no longer on the queue)
            self.available._map.pop(message.seq, None)  # Available.discard, without the call
            if message.persistent:
                self.dirty.add(message.msg_id)
                if message.data is not None and (self.file is None or message.msg_id not in self.file.messages):
                    self.unflushed_bytes = max(0, self.unflushed_bytes - message.length)

    def flush(self, durable: int, outcome=None, written_before: int = NO_ADDRESS) -> IoCost:
        """Bring the queue file up to date with every change whose log record is before
        ``durable`` (the write-ahead rule), and write it. Changes not yet covered stay dirty.

        ``outcome(uow, durable)`` says whether a unit of work's Commit (True) or Backout
        (False) record is already on disk while memory has not caught up (its force is in
        flight): the file must then show the outcome, not the uncommitted state.

        ``written_before``: a message not in the file yet is written only if it was put
        before this address (a checkpoint that writes only what has waited through two
        checkpoints, :attr:`mqlog.core.platform.Platform.checkpoint_write_lag`); the others
        stay in memory and dirty, and :attr:`held_from` is the oldest put among them (where
        redo must begin for this queue; NO_ADDRESS: nothing held back)."""
        file = self.file
        self.held_from = NO_ADDRESS
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
        where, ids, flags, uows = self._where, self._ids, self._flags, self._uows
        # A message put and removed again since the last flush, never in the file, leaves
        # nothing to do (most of the dirty set after a busy spell): only the rest is sorted.
        changed = [msg_id for msg_id in self.dirty if msg_id in where or msg_id in in_file]
        for msg_id in sorted(changed):  # sorted: the same changes always give the same file
            at = where.get(msg_id)
            row = -1 if at is None else (at if at >= 0 else ids.index(msg_id, ~at, _CHUNK + ~at))
            stored = in_file.state_of(msg_id)  # (state, uow) in the file, None if not there
            if row < 0 or flags[row] & _PERSISTENT == 0:
                if stored is not None:
                    file.remove(msg_id)
                continue
            if stored is None and self._puts[row] >= written_before:
                keep.add(msg_id)  # too young to be written by this checkpoint
                if self._puts[row] < self.held_from:
                    self.held_from = self._puts[row]
                continue
            state, uow = _STATE_OF[flags[row] & 3], uows[row]
            ended = outcome(uow, durable) if (outcome is not None and uow) else None
            if ended is not None:
                keep.add(msg_id)  # memory will catch up when the force returns
                if state is _PUT_UNCOMMITTED and not ended or (
                        state is _GOT_UNCOMMITTED and ended):
                    if stored is not None:
                        file.remove(msg_id)
                    continue
                target = (_COMMITTED, 0)
            elif state is _PUT_UNCOMMITTED:
                if self._puts[row] >= durable:
                    keep.add(msg_id)
                    continue
                target = (_PUT_UNCOMMITTED, uow)
            elif state is _GOT_UNCOMMITTED:
                if (self._got[row] if flags[row] & _GOT != 0 else NO_ADDRESS) >= durable:
                    keep.add(msg_id)
                    target = (_COMMITTED, 0)
                else:
                    target = (_GOT_UNCOMMITTED, uow)
            else:
                target = (_COMMITTED, 0)
            if stored is None:
                data = self._data[row]
                if data is None:  # cannot happen: data leaves memory only once in the file
                    raise AssertionError(f"message {msg_id!r} of {self.name} has no data to write")
                file.put(msg_id, data, target[0], target[1], self._puts[row])
            elif stored != target:
                file.set_state(msg_id, *target)
        written = self.dirty - keep
        self.dirty = keep
        cost = file.flush()
        # Data now in the file need not stay in memory: a deep queue is not held twice.
        column = self._data
        for msg_id in written:
            at = where.get(msg_id)
            if at is None:
                continue
            row = at if at >= 0 else ids.index(msg_id, ~at, _CHUNK + ~at)
            if column[row] is not None and msg_id in in_file:
                column[row] = None
                self.unflushed_bytes = max(0, self.unflushed_bytes - self._lengths[row])
        return cost

    def read(self, message: Message) -> tuple[bytes, IoCost]:
        """A message's data, from memory or (charged) from the queue file: ``message`` as
        read from the queue just now (its data is what memory held then)."""
        if message.data is not None:
            return message.data, _NO_IO
        return self.file.read_data(message.msg_id)
