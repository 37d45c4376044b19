"""What a recovery run produces and refuses: the report of a restart (what it replayed,
committed, backed out, left in doubt and re-created, with its cost in virtual time by phase:
``restart_phases``, the contract the R1 calibration and the reports read), the
error raised when a unit of work cannot be backed out, and the entry restart keeps for each
unit of work it rebuilds from the log."""

from __future__ import annotations

import attrs

from mqlog.core.errors import LogCorruptionError
from mqlog.core.format.records import NO_ADDRESS
from mqlog.core.log.reader import EndOfLog
from mqlog.core.messages import cut_at_written_end


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
    queues_loaded: int = 0  # loaded by restart: the queues recovery needed
    queues_deferred: int = 0  # left to load on their first use after restart
    messages_loaded: int = 0  # index entries of the queues loaded by restart
    clrs_written: int = 0
    #: queue buffers replay spilled to their queue files (the buffer full, as in normal running)
    replay_spills: int = 0
    queues_recreated: int = 0  # damaged queues re-created from their media images
    queues_damaged: list = attrs.field(factory=list)  # left damaged: their files would not load
    checkpoint: int = NO_ADDRESS
    restart_virtual_s: float = 0.0
    #: restart's CPU expanding compressed message data (µs, within its virtual time)
    cpu_expand_us: float = 0.0
    #: restart's own CPU (µs) on the host's cores: replaying, loading, walking, backing out
    cpu_us: float = 0.0
    #: log pages the page cache served (no device read) and those it did not
    cache_hits: int = 0
    cache_misses: int = 0
    phases: dict = attrs.field(factory=dict)  # phase name -> virtual seconds (the older breakdown)
    #: IBM's two phases and their sub-steps, virtual seconds (keys carry the unit):
    #: ``replay_s`` (of which, as charged time that may overlap: ``replay_log_read_s``,
    #: ``replay_queue_files_s``, ``replay_cpu_s``); ``recovery_s`` = ``recovery_queue_load_s``
    #: + ``recovery_backout_s`` (walls; the backout is ``recovery_backout_walk_s``, every open
    #: unit's records walked backwards, in doubt or in flight, + ``recovery_backout_undo_s``,
    #: compensation records and reconciling); ``media_recovery_s``, ``checkpoint_s``; ``total_s``
    #: (= restart_virtual_s = replay_s + recovery_s + media_recovery_s + checkpoint_s)
    restart_phases: dict = attrs.field(factory=dict)
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
            "messages_backed_out": self.messages_reconciled,
            "queues_loaded": self.queues_loaded,
            "queues_deferred": self.queues_deferred,
            "messages_loaded": self.messages_loaded,
            "clrs_written": self.clrs_written,
            "replay_spills": self.replay_spills,
            "queues_recreated": self.queues_recreated,
            "queues_damaged": list(self.queues_damaged),
            "restart_virtual_s": self.restart_virtual_s,
            "cpu_expand_us": self.cpu_expand_us,
            "cpu_us": self.cpu_us,
            "cache_hits": self.cache_hits,
            "cache_misses": self.cache_misses,
            "restart_phases": dict(self.restart_phases),
            "messages": list(self.messages),
            "end_of_log": None if end is None else _end_of_log(end),
        }


def _end_of_log(end: EndOfLog) -> dict:
    """Where the log ended, worded as the restart's console message words it: a last record
    cut short by space never written is the end of the written log (the crash came while its
    write was on its way, so nothing in it was acknowledged), not an "incomplete" log;
    ``last_record_cut_short`` says which of the two clean ends it was."""
    cut = cut_at_written_end({"end": end})
    return {"reason": "end" if cut else end.reason, "last_record_cut_short": cut, "address": end.address,
            "problem": end.problem, "source": end.source}


@attrs.define
class RebuiltUow:
    """A unit of work as restart reconstructs it: the span of its records in the log, and
    whether it was prepared (in doubt) when the log ends."""

    first: int
    last: int
    prepared: bool = False
    xid: bytes = b""
    begin_us: float = 0.0
