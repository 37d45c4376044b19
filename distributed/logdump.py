"""dmpmqlog for the model: every log record of a distributed queue manager, over all its
extents in log order, with where and how the log ends.

IBM MQ's ``dmpmqlog`` (IBM MQ, "dmpmqlog (dump MQ formatted log)") formats the log from the
first record of its active portion by default, or from the base LSN (``-b``: the start of the
extent holding the start of the active log), a given LSN (``-s``), or a given extent (``-n``,
linear logs only), up to ``-e EndLSN`` or the end of the log. This module owns that walk over
the model's log; it decodes nothing itself: the pages and records are read by the core's
:class:`~mqlog.core.log.reader.LogReader` through :class:`DistributedLogSpace.read_page`, which
maps each address to the extent the control file says holds it, so the walk follows the log
from extent to extent, in ring order for a circular log and along the stream for a linear one.

The header uses the fields IBM documents for dmpmqlog's "Log File Header" (IBM MQ, "Dumping
the contents of the log using the dmpmqlog command"): ``logactive``, ``loginactive``,
``logsize``, ``baselsn``, ``headlsn``, ``nextlsn``, ``tailsn``, ``hflag1`` and
``HeadExtentID``. MQ's *head* of the log is its oldest active record (what this model's log
space calls its tail: the oldest address restart needs), so ``headlsn`` is the control file's
tail and ``HeadExtentID`` is RECLOG. Each record shows its LSN, the extent holding its first
byte, its type, unit of work, queue and length; IBM's documented per-record fields are
``LSN``, ``LogRecdType`` and ``XTranid``, but the public documentation does not list the
values ``LogRecdType`` takes, so a record's type is shown by the model's record class name
(``Put``, ``Commit``, ``CheckpointBegin`` …, docs/FORMAT.md).

Damage is never taken for the end: a missing or short extent, or a corrupt page with good
pages after it, raises the reader's error naming the file, offset and LSN.
"""

from __future__ import annotations

from typing import Iterator, Sequence

import attrs

from mqlog.core.errors import LogCorruptionError, MqlogError
from mqlog.core.format.pages import NO_FIRST_RECORD, PAGE_HEADER_SIZE, PAGE_SIZE, UNWRITTEN, check_page
from mqlog.core.format.records import NO_ADDRESS
from mqlog.core.log.reader import EndOfLog, LogReader
from mqlog.distributed.space import DistributedLogSpace, extent_name, format_lsn


def parse_lsn(text: str) -> int:
    """An LSN as dmpmqlog takes it (``nnnn:nnnn:nnnn:nnnn``, each part 0-65535, most
    significant first) or as MQ prints it (``<0:0:4:1234>``)."""
    parts = text.strip().removeprefix("<").removesuffix(">").split(":")
    if len(parts) != 4 or not all(p.isdigit() and int(p) <= 0xFFFF for p in parts):
        raise ValueError(f"{text!r} is not an LSN: four numbers 0-65535 separated by ':' (as 0:0:4:1234)")
    value = 0
    for part in parts:
        value = value << 16 | int(part)
    return value


@attrs.frozen
class DumpedRecord:
    lsn: int
    extent: str  # the extent file holding the record's first byte
    type: str
    uow: int
    queue: str
    length: int


@attrs.frozen
class DumpEnd:
    """Where the dump stopped: at the end of the log (``end``: the reader's verdict) or at
    ``to_lsn`` (``end`` None)."""

    next_lsn: int  # where a writer would resume (the end of the log), or the record after ``to_lsn``
    end: EndOfLog | None
    extents: tuple  # the extents the records shown lie in, in log order


def _record_start(space: DistributedLogSpace, address: int) -> int:
    """The first record that starts at or after the start of ``address``'s page, by the pages'
    first-record offsets (a record continued from an earlier page is skipped, as it must be:
    the reader can only start at a record). A page never written means the log ends there."""
    page = address - address % PAGE_SIZE
    for _ in range(space.file_pages + 1):
        raw, name, offset = space.read_page(page)
        header, problem = check_page(raw, page)
        if problem is UNWRITTEN or not raw:
            return page
        if problem is not None:
            raise LogCorruptionError(f"cannot find where the first record of the page starts: the page is {problem}",
                                     source=name, offset=offset, address=format_lsn(page))
        if header.first_record != NO_FIRST_RECORD:
            return page + PAGE_HEADER_SIZE + header.first_record
        page += PAGE_SIZE
    raise LogCorruptionError("no record starts in a whole extent's worth of pages", address=format_lsn(address))


class LogDump:
    """The walk one dmpmqlog does: :meth:`header` first, then :meth:`records`, then :attr:`end`."""

    def __init__(self, space: DistributedLogSpace, record_types: Sequence[type], *, from_lsn: int | None = None,
                 base: bool = False, extent: int | None = None, to_lsn: int | None = None):
        self.space = space
        self.record_types = tuple(record_types)
        self.to_lsn = to_lsn
        control = space.load_control()
        if control is None:
            raise MqlogError("the queue manager was never created (no checkpoint on disk)")
        self.control = control
        self.reclog = space.holder(control.tail)
        if sum(x is not None and x is not False for x in (from_lsn, extent, base or None)) > 1:
            raise MqlogError("give one start point: --from-lsn (-s), --extent (-n) or --base (-b)")
        if extent is not None:
            if not space.linear:
                raise MqlogError("--extent (dmpmqlog -n) is valid only for queue managers using linear logging")
            held = space.extents.get(extent)
            if held is None or held.start == NO_ADDRESS:
                raise MqlogError(f"--extent {extent}: the control file names no extent {extent_name(extent)} "
                                 f"holding log (it was never used, or was reused since)")
            self.start, self.exact = held.start, False
        elif from_lsn is not None:
            if space.holder(from_lsn) is None:
                held = [e.start for e in space.extents.values() if e.start != NO_ADDRESS]
                raise MqlogError(f"--from-lsn {format_lsn(from_lsn)}: no extent holds that LSN (the extents "
                                 f"hold log from {format_lsn(min(held, default=control.tail))} on)")
            self.start, self.exact = from_lsn, True
        elif base:
            self.start, self.exact = self.base_lsn, False
        else:
            self.start, self.exact = control.tail, False
        self.end: DumpEnd | None = None

    @property
    def base_lsn(self) -> int:
        """The start of the extent holding the oldest record restart needs (RECLOG's)."""
        return self.reclog.start if self.reclog is not None else self.control.tail

    def header(self) -> dict:
        """dmpmqlog's Log File Header, with IBM's field names (see the module's docstring)."""
        space = self.space
        return {"logactive": space.primary, "loginactive": space.secondary, "logsize": space.file_pages,
                "baselsn": format_lsn(self.base_lsn), "headlsn": format_lsn(self.control.tail),
                "hflag1": "LOG RETAIN" if space.linear else "CIRCULAR",
                "HeadExtentID": extent_name(self.reclog.number) if self.reclog is not None else ""}

    def records(self) -> Iterator[DumpedRecord]:
        space = self.space
        walk_from = _record_start(space, self.start)
        reader = LogReader(space, walk_from, format_address=format_lsn, record_types=self.record_types)
        extents: list = []
        first = True
        for address, record in reader:
            if address < self.start:
                continue
            if first and self.exact and address != self.start:
                raise MqlogError(f"--from-lsn {format_lsn(self.start)}: no log record starts there (the next one "
                                 f"starts at {format_lsn(address)}; take an LSN from dmpmqlog's output)")
            first = False
            if self.to_lsn is not None and address > self.to_lsn:
                self.end = DumpEnd(address, None, tuple(extents))
                return
            holder = space.holder(address)
            name = extent_name(holder.number) if holder is not None else ""
            if not extents or extents[-1] != name:
                extents.append(name)
            length = len(record.to_bytes())
            queue = getattr(record, "queue", None) or getattr(record, "name", "") or ""
            yield DumpedRecord(address, name, type(record).__name__, record.uow, queue, length)
        if first and self.exact:
            raise MqlogError(f"--from-lsn {format_lsn(self.start)}: no log record starts there (the log ends at "
                             f"{format_lsn(reader.end.address)})")
        self.end = DumpEnd(reader.end.address, reader.end, tuple(extents))

    def summary(self, count: int) -> dict:
        """The closing line's facts: records shown, extents, and where and how the log ends."""
        end = self.end
        out = {"records": count, "extents": list(end.extents), "nextlsn": format_lsn(end.next_lsn)}
        if end.end is None:
            out.update(stopped="to-lsn", to_lsn=format_lsn(self.to_lsn))
            return out
        verdict = end.end
        out["end"] = verdict.reason
        if verdict.reason != "end":
            out.update(problem=verdict.problem, file=verdict.source, offset_bytes=verdict.offset,
                       page_lsn=format_lsn(verdict.page_address))
        elif verdict.source is not None:
            out.update(file=verdict.source, offset_bytes=verdict.offset)
        return out


def summary_line(summary: dict) -> str:
    """The summary as one sentence; a clean end is worded as one."""
    n, extents = summary["records"], summary["extents"]
    where = (f"in {len(extents)} extent{'s' if len(extents) != 1 else ''} ({extents[0]}"
             + (f" to {extents[-1]}" if len(extents) > 1 else "") + ")") if extents else "in no extent"
    head = f"{n} log record{'s' if n != 1 else ''} {where}; "
    if summary.get("stopped") == "to-lsn":
        return head + f"stopped at the end LSN {summary['to_lsn']} (--to-lsn); the next record starts at {summary['nextlsn']}"
    if summary["end"] == "end":
        return head + f"the log ends cleanly at {summary['nextlsn']} (nothing was written after its last record)"
    how = {"torn": "in a torn last write", "incomplete": "with a record cut off by the end of what was written"}
    return (head + f"the log ends at {summary['nextlsn']} {how.get(summary['end'], summary['end'])}: "
            f"page {summary['page_lsn']} in {summary['file']} at offset {summary['offset_bytes']} is {summary['problem']}")
