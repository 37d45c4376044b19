"""Units of work and the MQI reason codes they produce."""

from __future__ import annotations

import enum
from array import array
from operator import itemgetter

import attrs

from mqlog.core.errors import MqlogError
from mqlog.core.format.records import NO_ADDRESS

#: a unit of work's id carries the number of the queue manager that began it from this bit up,
#: so that units of several queue managers can meet on a queue they share (0 for a queue
#: manager that shares no queue)
MEMBER_SHIFT = 56


class Reason(enum.IntEnum):
    """MQI reason codes the model can return (names as in the MQ headers)."""

    MQRC_BACKED_OUT = 2003
    MQRC_SYNCPOINT_LIMIT_REACHED = 2024
    MQRC_NO_MSG_AVAILABLE = 2033
    MQRC_Q_FULL = 2053
    MQRC_UNKNOWN_OBJECT_NAME = 2085
    MQRC_OBJECT_ALREADY_EXISTS = 2100
    MQRC_OBJECT_DAMAGED = 2101  # the queue's file is damaged; media recovery rebuilds it
    MQRC_RESOURCE_PROBLEM = 2102  # the log is full: new work is refused, commit and backout still work
    MQRC_OBJECT_IN_USE = 2042
    MQRC_UOW_IN_DOUBT = 2128  # MQRC_OUTCOME_PENDING in spirit: the UOW awaits its coordinator
    MQRC_HCONN_ERROR = 2018
    MQRC_Q_MGR_QUIESCING = 2161  # a controlled shutdown (endmqm -c): a wait the application asked to fail
    MQRC_Q_MGR_STOPPING = 2162  # an immediate shutdown (endmqm -i): every call issued after it


class MqiError(MqlogError):
    """An MQI call failed with a reason code; applications see it, the queue manager goes on."""

    def __init__(self, reason: enum.IntEnum | int, detail: str = ""):
        # A platform may name reason codes of its own (an IntEnum like Reason): kept as given.
        self.reason = reason if isinstance(reason, enum.IntEnum) else Reason(reason)
        self.detail = detail
        # args are (reason, detail) so that the error can be rebuilt from them (SimPy
        # re-raises a failed process's exception as type(e)(*e.args)).
        super().__init__(self.reason, detail)

    def __str__(self) -> str:
        return f"{self.reason.name} ({int(self.reason)})" + (f": {self.detail}" if self.detail else "")


class UowState(enum.Enum):
    ACTIVE = "in flight"
    PREPARED = "in doubt"
    ENDED = "ended"


@attrs.frozen(weakref_slot=False)  # one a message in a unit of work: no slot it never uses
class Op:
    """One operation of a unit of work, remembered so that backout needs no log read."""

    kind: str  # "put" or "get"
    queue: str
    msg_id: bytes
    persistent: bool
    address: int = NO_ADDRESS  # its log record (persistent operations only)
    prev: int = NO_ADDRESS  # the UOW's record before it (CLR undo_next)
    length: int = 0


_KINDS = ("put", "get")
_KIND_CODE = {"put": 0, "get": 1}
_PERSISTENT = 2  # the flag bit of a persistent operation (kind in bit 0)
_ROW = 2  # an operation's slots in Ops._rows: its tag (flags, queue name), msg id
_NUMS = 2  # and in Ops._nums: log address, length
_NO_NUMS = array("Q")
#: queue name -> its operations' tags, one a flags value: (is a put, queue name, flags),
#: shared by every operation on the queue. Bounded, so that a run of many queues cannot
#: grow it without end (a tag made past the bound is an operation's own).
_TAGS: dict[str, tuple] = {}
_TAGS_KEPT = 4096


def _tags_of(queue: str) -> tuple:
    tags = tuple((not flags & 1, queue, flags) for flags in range(4))
    if len(_TAGS) < _TAGS_KEPT:
        _TAGS[queue] = tags
    return tags


class Ops:
    """A unit of work's operations, oldest first, held flat – two list slots an operation
    (its tag: flags and queue name, shared by the queue's operations; the message id, an
    object its message holds anyway) and two numbers in an array (the log address and the
    length) – not an
    :class:`Op` object each: a log-fill's unit of work holds tens of thousands, an Op cost
    about 100 bytes, and an address held as an int is an object of its own (32 bytes).
    Reading one (indexing, iterating) builds its :class:`Op`.

    An operation's ``prev`` is the address of the operation before it (``NO_ADDRESS`` for the
    first), as :meth:`add` chains them; one appended with another ``prev`` (a unit rebuilt by
    restart, re-logged by roll forward) keeps it aside."""

    __slots__ = ("_rows", "_nums", "_prevs", "persistent")

    def __init__(self, ops=()):
        self._rows: list = []
        self._nums = _NO_NUMS[:]  # (a copy: quicker than array("Q"), and a unit is made at every MQPUT's first)
        self._prevs: dict[int, int] | None = None  # index -> prev, where not the operation before's address
        self.persistent = 0  # how many of the operations are persistent
        for op in ops:
            self.append(op)

    def add(self, kind: str, queue: str, msg_id: bytes, persistent: bool, address: int, length: int) -> None:
        """Append an operation chained on the one before it."""
        tags = _TAGS.get(queue)
        if tags is None:
            tags = _tags_of(queue)
        if persistent:
            self._rows += (tags[_KIND_CODE[kind] | _PERSISTENT], msg_id)
            self.persistent += 1
        else:
            self._rows += (tags[_KIND_CODE[kind]], msg_id)
        self._nums.extend((address, length))

    def append(self, op: Op) -> None:
        n = len(self._rows) // _ROW
        self.add(op.kind, op.queue, op.msg_id, op.persistent, op.address, op.length)
        if op.prev != (self._nums[(n - 1) * _NUMS] if n else NO_ADDRESS):
            if self._prevs is None:
                self._prevs = {}
            self._prevs[n] = op.prev

    def _op(self, i: int) -> Op:
        rows, nums = self._rows, self._nums
        at = i * _ROW
        (_, queue, flags), msg_id = rows[at:at + _ROW]
        at = i * _NUMS
        prevs = self._prevs
        if prevs is not None and i in prevs:
            prev = prevs[i]
        else:
            prev = nums[at - _NUMS] if i else NO_ADDRESS
        return Op(_KINDS[flags & 1], queue, msg_id, bool(flags & _PERSISTENT), nums[at], prev, nums[at + 1])

    def __len__(self) -> int:
        return len(self._rows) // _ROW

    def __getitem__(self, i: int) -> Op:
        n = len(self._rows) // _ROW
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("operation index out of range")
        return self._op(i)

    def __iter__(self):
        return map(self._op, range(len(self._rows) // _ROW))

    def __reversed__(self):
        return map(self._op, range(len(self._rows) // _ROW - 1, -1, -1))

    def __eq__(self, other) -> bool:
        if isinstance(other, Ops):
            other = list(other)
        return isinstance(other, list) and list(self) == other

    def __repr__(self) -> str:
        return f"Ops({list(self)!r})"

    def targets(self, newest_first: bool = False):
        """(is a put, queue name, msg id) of each operation, oldest first (or newest first):
        what a commit or backout applies, without building the operations."""
        rows = self._rows
        if len(rows) == _ROW:  # (the usual unit: one operation)
            is_put, queue, _ = rows[0]
            return ((is_put, queue, rows[1]),)
        tags, ids = rows[0::_ROW], rows[1::_ROW]
        if newest_first:
            tags.reverse(), ids.reverse()
        return zip(map(_IS_PUT_OF, tags), map(_QUEUE_OF, tags), ids)

    @property
    def queues(self) -> list[str]:
        """Each operation's queue name, oldest first."""
        return list(map(_QUEUE_OF, self._rows[0::_ROW]))


_IS_PUT_OF, _QUEUE_OF = itemgetter(0), itemgetter(1)  # of a tag


@attrs.define(eq=False)
class UnitOfWork:
    """A transaction: the operations of one connection between two syncpoints."""

    id: int
    application: str
    begin_us: float
    state: UowState = UowState.ACTIVE
    first: int = NO_ADDRESS  # address of its first log record
    last: int = NO_ADDRESS  # address of its latest log record (the backward chain starts here)
    ops: Ops = attrs.field(factory=Ops)
    xid: bytes = b""
    #: set when the queue manager backed it out on its own (log space): the application's
    #: next call is told MQRC_BACKED_OUT
    doomed: bool = False
    checkpoints_seen: int = 0
    shunt_mark: int = 0  # checkpoints_seen when it was last shunted
    shunts: int = 0  # rounds of shunting it has had
    #: MQI calls of its application in progress (between building a record chained on
    #: ``last`` and the record's effect): it is not shunted meanwhile
    in_call: int = 0
    switches_reported: int = 0  # log switches at which it was reported as long-running
    #: its Prepare record, once appended (it is in doubt from that point on the log)
    prepare_address: int = NO_ADDRESS
    #: its Commit or Backout record, once appended, and which it was: from that point on
    #: the log, the unit of work is over even while the force is still in flight
    end_address: int = NO_ADDRESS
    end_commit: bool = False
    #: its commit or backout has begun (its record may still be on its way): log-space
    #: relief never backs it out, or it would end twice, with both records on the log
    ending: bool = False
    #: an event while the queue manager re-logs it (roll forward); the coordinator waits
    busy: object = None
    #: address of its Begin record, where it started on the log: unlike ``first`` it does not
    #: move when the unit is re-logged (shunted, rolled forward), so a platform that names
    #: units by where they start (z/OS's URID) reads it from the events that name the unit
    begin: int = NO_ADDRESS
    #: the bytes of a round of shunting of it as it stands, and what it stood at ((last,
    #: operations), or None): a round that does not fit is tried again at every checkpoint,
    #: and building it to measure it cost as much as the rest of such a checkpoint
    round_bytes: tuple | None = None

    @property
    def logged(self) -> bool:
        return self.first != NO_ADDRESS

    @property
    def persistent_ops(self) -> int:
        return self.ops.persistent
