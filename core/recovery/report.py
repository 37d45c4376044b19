"""What a recovery run produces and refuses: the report of a restart (what it replayed,
committed, backed out, left in doubt and re-created, with its cost in virtual time), the
error raised when a unit of work cannot be backed out, and the entry restart keeps for each
unit of work it rebuilds from the log."""

from __future__ import annotations

import attrs

from mqlog.core.errors import LogCorruptionError
from mqlog.core.format.records import NO_ADDRESS
from mqlog.core.log.reader import EndOfLog


class BackoutImpossible(LogCorruptionError):
    """A unit of work cannot be backed out: log records it needs have been overwritten (the
    space reused them, with no archive to read them back from)."""


@attrs.define
class RecoveryReport:
    """What restart did, with its cost in virtual time."""

    records_replayed: int = 0
    bytes_read: int = 0
    uows_committed: int = 0  # units of work whose commit replay found
    uows_backed_out: int = 0  # in flight at the crash, backed out by restart
    uows_indoubt: int = 0  # prepared, left in doubt for the coordinator
    messages_reconciled: int = 0  # uncommitted messages put right (removed or restored)
    queues_loaded: int = 0
    messages_loaded: int = 0
    clrs_written: int = 0
    queues_recreated: int = 0  # damaged queues re-created from their media images
    queues_damaged: list = attrs.field(factory=list)  # left damaged: their files would not load
    checkpoint: int = NO_ADDRESS
    restart_virtual_seconds: float = 0.0
    #: restart's CPU expanding compressed message data (µs, within its virtual time)
    cpu_expand_us: float = 0.0
    phases: dict = attrs.field(factory=dict)  # phase name -> virtual seconds
    messages: list = attrs.field(factory=list)
    end_of_log: EndOfLog | None = None

    def as_dict(self) -> dict:
        end = self.end_of_log
        return {
            "records_replayed": self.records_replayed,
            "bytes_read": self.bytes_read,
            "uows_backed_out": self.uows_backed_out,
            "uows_committed": self.uows_committed,
            "uows_indoubt": self.uows_indoubt,
            "messages_reconciled": self.messages_reconciled,
            "queues_loaded": self.queues_loaded,
            "messages_loaded": self.messages_loaded,
            "clrs_written": self.clrs_written,
            "queues_recreated": self.queues_recreated,
            "queues_damaged": list(self.queues_damaged),
            "restart_virtual_seconds": self.restart_virtual_seconds,
            "cpu_expand_us": self.cpu_expand_us,
            "phases": dict(self.phases),
            "messages": list(self.messages),
            "end_of_log": None if end is None else {"reason": end.reason, "address": end.address,
                                                    "problem": end.problem, "source": end.source},
        }


@attrs.define
class RebuiltUow:
    """A unit of work as restart reconstructs it: the span of its records in the log, and
    whether it was prepared (in doubt) when the log ends."""

    first: int
    last: int
    prepared: bool = False
    xid: bytes = b""
    begin_us: float = 0.0
