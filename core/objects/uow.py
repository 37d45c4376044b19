"""Units of work and the MQI reason codes they produce."""

from __future__ import annotations

import enum

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


@attrs.define(eq=False)
class UnitOfWork:
    """A transaction: the operations of one connection between two syncpoints."""

    id: int
    application: str
    begin_us: float
    state: UowState = UowState.ACTIVE
    first: int = NO_ADDRESS  # address of its first log record
    last: int = NO_ADDRESS  # address of its latest log record (the backward chain starts here)
    ops: list = attrs.field(factory=list)
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
    #: an event while the queue manager re-logs it (roll forward); the coordinator waits
    busy: object = None
    #: address of its Begin record, where it started on the log: unlike ``first`` it does not
    #: move when the unit is re-logged (shunted, rolled forward), so a platform that names
    #: units by where they start (z/OS's URID) reads it from the events that name the unit
    begin: int = NO_ADDRESS

    @property
    def logged(self) -> bool:
        return self.first != NO_ADDRESS

    @property
    def persistent_ops(self) -> int:
        return sum(1 for op in self.ops if op.persistent)
