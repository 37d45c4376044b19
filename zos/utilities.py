"""z/OS log utilities: a log print like CSQ1LOGP, a BSDS map like CSQJU004, and log statistics
like SMF 115 QJST (SPEC §5.1; research notes §2, §8, §10).

Every listing here is **our own layout**: IBM's real CSQ1LOGP and CSQJU004 listings are not
public, so the field names follow IBM's documented keywords (RBASTART, URID, RM, TYPE, LRSN,
HIGHEST RBA WRITTEN, …) but the columns, message texts and order are the model's. Each
listing says so in its first line. Each text function has a JSON-able twin that it is
formatted from, so the selection logic can be checked (and ``--json`` printed) without
parsing text.

These work on a log space; the same over what ``mqlog run --platform zos --out DIR`` left
(a run directory, read under its lock) is the application layer's: :mod:`mqlog.zosrun`.

Log print (:func:`log_records`, :func:`ur_summary`, :func:`log_report`, :func:`log_print`)
------------------------------------------------------------------------------------------

The log is read with the core's :class:`~mqlog.core.log.reader.LogReader` from the oldest address
still available – the start of the oldest archive the BSDS records, or of the oldest active
data set – to the end of the log (or from the first record at or after ``rba_start``; the
first record is found from the CI header, since a data set may begin in the middle of a
record that started in one no longer available). Selection, all given criteria together:

* ``rba_start`` / ``rba_end`` (CSQ1LOGP RBASTART/RBAEND): records whose *first byte* lies in
  the range, both ends included. Reading stops after ``rba_end``.
* ``urid`` (CSQ1LOGP URID): the records of that unit of recovery. In the model the URID is
  the unit of work's id (printed in hex), not the RBA of its BEGIN UR record as in IBM's.
* ``queue`` stands in for CSQ1LOGP's **PAGESET**: the model keeps each queue in its own file
  where MQ for z/OS keeps queues in page sets, so "the records for one page set" becomes
  "the records that name the queue": puts, put segments, gets, compensations (CLRs) and
  object changes of that queue. UR control records (begin, prepare, commit, backout) name
  no queue and so are not selected by it – as IBM's have no page set.

Detail (SYSPRINT) – one line a record, then with ``detail=True`` indented continuation lines::

    <RBA> URID(<hex>|none) RM(<resource manager>) TYPE(<record type>) [LRSN(<hex>)] LENGTH(<bytes>)
          <what the record says: queue, message id, data sizes, tables ...>

Put records show the data as stored and as expanded: the stored bytes are decoded with
the codec named in the record (whatever COMPLOG says now), and the line says
``DATA(<codec> <stored> -> <expanded> BYTES)``. A message in several segments is expanded
once its last segment has been read; the put record's line then shows it.

Summary (SYSSUMRY, ``summary="YES"`` or ``"ONLY"``) – one line a unit of recovery that has a
selected record, classified from *every* record of it in the RBA range read:

=============  ============================================================================
status         the UR's records in the range
=============  ============================================================================
IN COMMIT      a Commit record: restart would roll it forward (in the model a Commit record
               is the whole of phase 2, so "in commit" and "committed" coincide)
BACKED OUT     a Backout record (written by a backout in normal running or by restart)
INDOUBT        a Prepare and no outcome
IN BACKOUT     compensation records (CLRs) but no Backout yet: restart's undo was cut short
INFLIGHT       none of those
=============  ============================================================================

with the UR's start RBA (its Begin record, or its first record in the range), end RBA (its
last record in the range) and record count; a count line like CSQR004I's ends it. The
status is the one *as of the end of the range*: a UR committed after ``rba_end`` is shown
INFLIGHT, as a CSQ1LOGP range would show it.

BSDS map (:func:`bsds_dict`, :func:`bsds_map`)
----------------------------------------------

For each BSDS copy file present: its sequence number (update count) and whether it is
valid (if not, why: its magic or checksum, or contents that are not a BSDS); which copy the inventory was taken from (the valid one with the higher sequence).
Then HIGHEST RBA WRITTEN (the last byte, as the BSDS in use records it), HIGHEST RBA
OFFLOADED (the end of the newest complete archive), the RBA mode with its end of range,
warning and termination RBAs; the active log data sets of copy 1 (and 2) with number,
data set name, STARTRBA-ENDRBA and status:

* NEW – never used;
* CURRENT – being written;
* OFFLOADING – full, its archive not yet complete;
* NOT REUSABLE – full and not archived (or, with OFFLOAD=NO, still needed by restart);
* REUSABLE – archived (or, with OFFLOAD=NO, behind the last checkpoint);

the archive data sets of copy 1 (and 2) with sequence, data set name and RBA range, with
MAXARCH and how many the BSDS records; and the checkpoint queue (begin RBA and checkpoint
number), newest first. The model keeps no wall-clock time, so the time stamps of a real map
(system, utility, per entry) are not shown.

Statistics (:func:`log_statistics`, :func:`format_statistics`)
--------------------------------------------------------------

Inputs: the log space (its live counters: reads, BSDS accesses, offloads, switches), the
writer's statistics (:meth:`~mqlog.core.log.stats.LogStatistics.as_dict`, or the run's
metrics.json, which carries a subset), the codec's :meth:`~mqlog.zos.codec.CompLogCodec.stats`
and the queue manager's counters (``attrs.asdict(qm.counters)``, or metrics.json). Where
``counters`` carries a run's figure for something the space also counts (metrics.json's
``platform_reads_active`` …, ``archive_offloads``, ``log_switches``) the run's figure wins:
a space freshly loaded from disk has counted nothing yet.

A key is present only where the model has the figure; nothing is invented. The mapping:

==================  ===========================================================================
key                 model figure
==================  ===========================================================================
QJSTWRW             writer ``force_waits`` (forces that waited for I/O) – *omitted*: the writer
                    does not count them yet
QJSTWRNW            writer ``logical_writes``: every record appended (copied into the output
                    buffer; the caller does not wait for the I/O)
QJSTWRF             writer ``forces`` (commit, backout, prepare, checkpoint ... forces)
QJSTWTB             writer ``buffer_waits``: appends that waited for output buffer space
QJSTRBUF            0: the model never satisfies a log read from the output buffer (backout
                    in normal running works from memory; restart reads the disk)
QJSTRACT            pages read from the active log (space ``reads["active"]``)
QJSTRARH            pages read from the archive log (space ``reads["archive"]``)
QJSTBSDS            BSDS accesses (each copy written counts one; reads at start do not)
QJSTBFFL            active log CIs created: CIs written to copy 1 less partial-CI rewrites
                    (needs the writer's ``partial_page_rewrites``: in metrics.json since
                    runs of 2026-11-22; omitted for older run directories)
QJSTBFWR            writer ``write_cycles`` (buffer writes) – *omitted*: not counted yet
QJSTALR             archive read allocations – *omitted*: the space counts pages read, not
                    data sets allocated
QJSTALW             archive write allocations: offloads x archive copies (TWOARCH)
QJSTCIOF            CIs offloaded: offloads x CIs per data set
QJSTLLCP            checkpoints taken (counters ``checkpoints``)
QJSTLOGW            log write I/Os to the active log, both copies: the writer's physical
                    writes (archive copies are counted apart, in QJSTALW)
QJSTCIWR            CIs written to the active log, both copies: pages written (or physical
                    bytes / 4096)
QJSTSERW            serial writes (rewrites of a partial CI, each copy): partial-CI rewrites x
                    copies (needs ``partial_page_rewrites``)
QJSTTHRW            writer ``threshold_writes`` (writes started by WRTHRSH) – *omitted*: not
                    counted yet
QJSTCP1N/CP2N       new active data sets used per copy: log switches
QJSTCMP*/DEC*       the codec's RLE counters, as :mod:`mqlog.zos.codec` gives them (REQ, FAIL,
                    UNCMP, COMP for compression and decompression)
QJSTIO              per copy ("1", "2"): the slowest write to that copy's active data sets –
                    IOMAXIO_US, IOMAXIO_AT_US (virtual time) and IOMAXIO_LOGID (data set) –
                    from the writer's ``worst_write_by_file``; the model keeps no per-copy I/O
                    counts or suspend times, so IOCOUNT, IOCI, IOTOTIO, IOTOTSUS are omitted
==================  ===========================================================================

Keys the omitted rows name are filled in as soon as the writer's statistics carry them
under those names. The ``mqlog_`` extension block, apart from IBM's: ``mqlog_shunts``,
``mqlog_shunted_bytes`` (if the counters have it), ``mqlog_archive_offloads``,
``mqlog_copy2_reads`` (pages read from copy 2 because copy 1's was bad),
``mqlog_log_switches``, ``mqlog_archives_recorded``, ``mqlog_compression_in_bytes`` /
``_out_bytes`` (all data offered, as the queue manager counts it), the archive's slowest
write, and the codec's own ``mqlog_*`` keys (zstd, skipped short data, codec chosen).
"""

from __future__ import annotations

import json
import zlib
from mqlog.core.errors import LogFormatError, ParameterError
from mqlog.core.format.pages import NO_FIRST_RECORD, PAGE_HEADER_SIZE, PAGE_SIZE, check_page, page_of
from mqlog.core.log.reader import LogReader
from mqlog.zos.records import RECORD_TYPES
from mqlog.core.format.records import (NO_ADDRESS, Backout, Begin, CheckpointBegin, CheckpointEnd, Clr, ClrAction, Codec,
                                Commit, Get, ObjectAction, ObjectChange, ObjectType, OpaqueRecord, Prepare, Put,
                                PutSegment, RecordType, ResourceManager, UowState)
from mqlog.zos.codec import CompLogCodec
from mqlog.zos.config import rba_limits
from mqlog.zos.space import _BSDS_MAGIC, ZosLogSpace, data_set_name

__all__ = [
    "SUMMARY_CHOICES",
    "bsds_dict",
    "bsds_map",
    "format_statistics",
    "log_print",
    "log_records",
    "log_report",
    "log_statistics",
    "oldest_address",
    "ur_summary",
]

SUMMARY_CHOICES = ("NO", "YES", "ONLY")

#: UR statuses in the summary, in the order the count line gives them
UR_STATUSES = ("IN COMMIT", "INDOUBT", "INFLIGHT", "IN BACKOUT", "BACKED OUT")

_HEADER_NOTE = "mqlog model of IBM MQ for z/OS; our own layout, IBM's real listing is not public"


# ------------------------------------------------------------------------------ log print


def oldest_address(space: ZosLogSpace) -> int:
    """The oldest RBA still on disk: the start of the oldest complete archive the BSDS
    records, or of the oldest active data set in use."""
    space.load_control()
    starts = [e.start for e in space.archives if e.complete]
    starts += [d.start for d in space.active if d.start != NO_ADDRESS]
    return min(starts) if starts else space.start


def _first_record_from(space: ZosLogSpace, address: int, limit: int) -> int | None:
    """The address of the first record that starts in the CI at or after ``address``'s CI
    (None if no readable CI before ``limit`` has one)."""
    page = page_of(address)
    while page < limit:
        raw, _, _ = space.read_page(page)
        header, problem = check_page(raw, page)
        if problem is not None:
            return None
        if header.first_record != NO_FIRST_RECORD and header.first_record < header.used:
            return page + PAGE_HEADER_SIZE + header.first_record
        page += PAGE_SIZE
    return None


def _name(enum_cls, value) -> str:
    try:
        return enum_cls(value).name
    except ValueError:
        return f"X'{int(value):02X}'"


def _type_code(record) -> int:
    return int(record.type) if isinstance(record, OpaqueRecord) else int(record.TYPE)


def _rm_code(record) -> int:
    return int(record.rm) if isinstance(record, OpaqueRecord) else int(record.RM)


def _is(record, code: RecordType) -> bool:
    return _type_code(record) == int(code)


def _describe(record, addressing) -> dict:
    """The record-specific fields of one record (JSON-able)."""
    fmt = addressing.format
    out: dict = {}
    if isinstance(record, Begin):
        out["application"] = record.application
    elif isinstance(record, Put):
        out.update(queue=record.queue, msg_id=record.msg_id.hex().upper(), message_length=record.message_length,
                   stored_length=len(record.data), codec=Codec(record.codec).name, segments=record.segments)
        if record.relogged:
            out["relogged"] = True
    elif isinstance(record, PutSegment):
        out.update(queue=record.queue, msg_id=record.msg_id.hex().upper(), index=record.index,
                   offset=record.offset, stored_length=len(record.data), codec=Codec(record.codec).name)
    elif isinstance(record, Get):
        out.update(queue=record.queue, msg_id=record.msg_id.hex().upper(), message_length=record.message_length)
        if record.relogged:
            out["relogged"] = True
    elif isinstance(record, Prepare):
        out["xid"] = record.xid.hex().upper()
        if record.relogged:
            out["relogged"] = True
    elif isinstance(record, Commit):
        out["operations"] = record.operations
    elif isinstance(record, Backout):
        out["undone"] = [fmt(u.address) for u in record.undone]
    elif isinstance(record, Clr):
        out.update(action=_name(ClrAction, record.action), undoes=fmt(record.undoes),
                   undo_next=None if record.undo_next == NO_ADDRESS else fmt(record.undo_next),
                   queue=record.queue, msg_id=record.msg_id.hex().upper(), message_length=record.message_length)
    elif isinstance(record, CheckpointBegin):
        out["number"] = record.number
    elif isinstance(record, CheckpointEnd):
        out.update(number=record.number, begin=fmt(record.begin),
                   uows=[{"urid": f"{u.uow:X}", "state": _name(UowState, u.state),
                          "first": None if u.first == NO_ADDRESS else fmt(u.first),
                          "last": None if u.last == NO_ADDRESS else fmt(u.last), "operations": u.operations}
                         for u in record.uows],
                   queues=[{"name": q.name, "depth": q.depth,
                            "media": None if q.media == NO_ADDRESS else fmt(q.media)} for q in record.queues])
    elif isinstance(record, ObjectChange):
        out.update(action=_name(ObjectAction, record.action), object_type=_name(ObjectType, record.object_type),
                   name=record.name, attributes=record.attributes)
    elif isinstance(record, OpaqueRecord):
        out["body_length"] = len(record.body)
    else:  # a platform record class registered by its format module (shunt, page-set control ...)
        for key in ("index", "count", "number"):
            if isinstance(getattr(record, key, None), int):
                out[key] = getattr(record, key)
        shunted = getattr(record, "shunted", None)
        if shunted is not None:
            out["operations"] = [{"queue": getattr(op, "queue", ""), "address": fmt(getattr(op, "address", 0)),
                                  "length": getattr(op, "length", 0)} for op in shunted]
        for key in ("pagesets", "entries", "queues"):
            value = getattr(record, key, None)
            if isinstance(value, (tuple, list)):
                out[key] = len(value)
    return out


def _queues_named(record) -> set[str]:
    if isinstance(record, ObjectChange):
        return {record.name}
    queue = getattr(record, "queue", None)
    names = {queue} if isinstance(queue, str) and queue else set()
    for op in getattr(record, "shunted", ()) or ():
        if isinstance(getattr(op, "queue", None), str):
            names.add(op.queue)
    return names


def _check_summary(summary) -> str:
    text = str(summary).strip().upper() if summary is not None else "NO"
    if text not in SUMMARY_CHOICES:
        raise ParameterError("SUMMARY", summary, "NO, YES or ONLY")
    return text


def _scan(space: ZosLogSpace, addressing, codec, *, rba_start=None, rba_end=None, urid=None, queue=None) -> dict:
    """Read the log once: the selected records, the URs in the range, and where reading went."""
    if rba_start is not None and rba_end is not None and rba_end < rba_start:
        # CSQ1LOGP reason code 00D10010: end of range not after its start
        raise ParameterError("RBAEND", addressing.format(rba_end),
                             f"an RBA at or after RBASTART ({addressing.format(rba_start)})")
    codec = codec if codec is not None else CompLogCodec("NONE")
    fmt = addressing.format
    oldest = oldest_address(space)
    # The BSDS's highest RBA written is saved at switches and checkpoints only: the current
    # data set's end bounds where a record can start.
    current = space.active[space.current] if space.active else None
    limit = max(space.high_written, current.start + space.ds_bytes if current is not None else 0) + PAGE_SIZE
    begin_at = max(oldest, rba_start) if rba_start is not None else oldest
    first = _first_record_from(space, begin_at, limit)
    records: list[dict] = []
    urs: dict[int, dict] = {}
    read = {"oldest": fmt(oldest), "from": None, "to": None, "end": None, "records_read": 0}
    if first is None:
        read["end"] = "no record at or after the start"
        return {"records": records, "urs": urs, "read": read}
    reader = LogReader(space, first, format_address=fmt, record_types=RECORD_TYPES)
    pending: dict[tuple[int, bytes], dict] = {}  # multi-segment compressed messages being collected
    last = None
    for address, record in reader:
        if rba_start is not None and address < rba_start:
            continue
        if rba_end is not None and address > rba_end:
            break
        read["records_read"] += 1
        if read["from"] is None:
            read["from"] = fmt(address)
        last = address
        uow = record.uow
        entry = {"rba": address, "rba_hex": fmt(address), "type": _name(RecordType, _type_code(record)),
                 "rm": _name(ResourceManager, _rm_code(record)), "urid": uow, "urid_hex": f"{uow:X}" if uow else None,
                 "lrsn": record.stamp, "length": len(record.to_bytes()),
                 "prev": None if record.prev == NO_ADDRESS else fmt(record.prev)}
        entry.update(_describe(record, addressing))
        if isinstance(record, Put):
            _expand_put(codec, record, entry, pending)
        elif isinstance(record, PutSegment):
            _expand_segment(codec, record, pending)
        selected = (urid is None or uow == urid) and (queue is None or queue in _queues_named(record))
        if uow:
            ur = urs.get(uow)
            if ur is None:
                ur = urs[uow] = {"urid": uow, "urid_hex": f"{uow:X}", "start": address, "end": address,
                                 "records": 0, "begin_seen": False, "commit": False, "backout": False,
                                 "prepare": False, "clrs": 0, "puts": 0, "gets": 0, "shunts": 0,
                                 "queues": set(), "selected": False, "application": None}
            ur["records"] += 1
            ur["end"] = address
            if isinstance(record, Begin):
                ur["begin_seen"] = True
                ur["start"] = address
                ur["application"] = record.application
            ur["commit"] |= isinstance(record, Commit)
            ur["backout"] |= isinstance(record, Backout)
            ur["prepare"] |= isinstance(record, Prepare)
            ur["clrs"] += isinstance(record, Clr)
            ur["puts"] += isinstance(record, Put)
            ur["gets"] += isinstance(record, Get)
            ur["shunts"] += _is(record, RecordType.SHUNT)
            ur["queues"] |= _queues_named(record)
            ur["selected"] |= selected
        if selected:
            records.append(entry)
    read["to"] = fmt(last) if last is not None else None
    end = reader.end
    if end is not None:
        read["end"] = end.reason
        read["end_rba"] = fmt(end.address)
    elif rba_end is not None:
        read["end"] = "RBAEND reached"
    return {"records": records, "urs": urs, "read": read}


def _expand_put(codec, record: Put, entry: dict, pending: dict) -> None:
    if record.segments <= 1:
        try:
            data = codec.decode(record.codec, record.data, expected_length=record.message_length)
        except LogFormatError as exc:
            entry["expand_error"] = exc.reason if hasattr(exc, "reason") else str(exc)
            return
        entry["expanded_length"] = len(data)
        entry["data_prefix"] = data[:16].hex().upper()
        return
    pending[(record.uow, record.msg_id)] = {"entry": entry, "parts": [record.data], "record": record}


def _expand_segment(codec, record: PutSegment, pending: dict) -> None:
    held = pending.get((record.uow, record.msg_id))
    if held is None:
        return  # its put record is before the range read
    held["parts"].append(record.data)
    put = held["record"]
    if len(held["parts"]) < put.segments:
        return
    del pending[(record.uow, record.msg_id)]
    entry = held["entry"]
    try:
        data = codec.decode(put.codec, b"".join(held["parts"]), expected_length=put.message_length)
    except LogFormatError as exc:
        entry["expand_error"] = exc.reason if hasattr(exc, "reason") else str(exc)
        return
    entry["expanded_length"] = len(data)
    entry["data_prefix"] = data[:16].hex().upper()


def _status(ur: dict) -> str:
    if ur["backout"]:
        return "BACKED OUT"
    if ur["commit"]:
        return "IN COMMIT"
    if ur["prepare"]:
        return "INDOUBT"
    if ur["clrs"]:
        return "IN BACKOUT"
    return "INFLIGHT"


def _summary_rows(urs: dict, addressing) -> list[dict]:
    fmt = addressing.format
    rows = []
    for ur in sorted(urs.values(), key=lambda u: u["start"]):
        if not ur["selected"]:
            continue
        rows.append({"urid": ur["urid"], "urid_hex": ur["urid_hex"], "status": _status(ur),
                     "start_rba": fmt(ur["start"]), "end_rba": fmt(ur["end"]), "start": ur["start"], "end": ur["end"],
                     "records": ur["records"], "begin_in_range": ur["begin_seen"], "puts": ur["puts"],
                     "gets": ur["gets"], "clrs": ur["clrs"], "shunts": ur["shunts"],
                     "queues": sorted(ur["queues"]), "application": ur["application"]})
    return rows


def log_records(space: ZosLogSpace, addressing, codec=None, *, rba_start: int | None = None,
                rba_end: int | None = None, urid: int | None = None, queue: str | None = None) -> list[dict]:
    """The selected log records, oldest first, as JSON-able dicts (see the module docstring).

    Every dict has ``rba`` (int) and ``rba_hex``, ``type``, ``rm``, ``urid`` (0: none) and
    ``urid_hex``, ``lrsn``, ``length`` (bytes on the log) and ``prev``; then the record's own
    fields. A put has ``message_length`` (before compression), ``stored_length``, ``codec``
    and, once expanded, ``expanded_length`` and ``data_prefix`` (first 16 bytes, hex).
    ``codec`` (a CompLogCodec; None: a new one) expands compressed data and counts it."""
    return _scan(space, addressing, codec, rba_start=rba_start, rba_end=rba_end, urid=urid, queue=queue)["records"]


def ur_summary(space: ZosLogSpace, addressing, codec=None, *, rba_start: int | None = None,
               rba_end: int | None = None, urid: int | None = None, queue: str | None = None) -> list[dict]:
    """The units of recovery with a selected record, by start RBA, each with its ``status``
    (IN COMMIT, BACKED OUT, INDOUBT, IN BACKOUT, INFLIGHT), ``start``/``end`` RBA (int) and
    ``start_rba``/``end_rba`` (hex), and ``records`` (its records in the range)."""
    scan = _scan(space, addressing, codec, rba_start=rba_start, rba_end=rba_end, urid=urid, queue=queue)
    return _summary_rows(scan["urs"], addressing)


def log_report(space: ZosLogSpace, addressing, codec=None, *, rba_start: int | None = None,
               rba_end: int | None = None, urid: int | None = None, queue: str | None = None,
               summary: str = "NO") -> dict:
    """Everything :func:`log_print` prints, JSON-able: ``criteria``, ``read`` (where reading
    started and ended), ``records`` (unless SUMMARY(ONLY)), ``summary`` and ``counts``
    (with SUMMARY(YES) or (ONLY))."""
    summary = _check_summary(summary)
    scan = _scan(space, addressing, codec, rba_start=rba_start, rba_end=rba_end, urid=urid, queue=queue)
    fmt = addressing.format
    criteria = {"rba_start": None if rba_start is None else fmt(rba_start),
                "rba_end": None if rba_end is None else fmt(rba_end),
                "urid": None if urid is None else f"{urid:X}", "queue": queue, "summary": summary}
    report: dict = {"criteria": criteria, "read": scan["read"]}
    if summary != "ONLY":
        report["records"] = scan["records"]
    if summary != "NO":
        rows = _summary_rows(scan["urs"], addressing)
        report["summary"] = rows
        report["counts"] = {status: sum(r["status"] == status for r in rows) for status in UR_STATUSES}
    return report


def _detail_lines(entry: dict) -> list[str]:
    """The continuation lines of one record."""
    t = entry["type"]
    lines = []
    if t == "BEGIN":
        lines.append(f"APPLICATION({entry['application']})")
    elif t == "PUT":
        if "expanded_length" in entry:
            data = f"DATA({entry['codec']} {entry['stored_length']} -> {entry['expanded_length']} BYTES)"
        elif "expand_error" in entry:
            data = f"DATA({entry['codec']} {entry['stored_length']} BYTES, NOT EXPANDABLE: {entry['expand_error']})"
        else:
            data = f"DATA({entry['codec']} {entry['stored_length']} BYTES STORED, " \
                   f"{entry['message_length']} EXPANDED; SEGMENTS NOT ALL READ)"
        lines.append(f"QUEUE({entry['queue']}) MSGID({entry['msg_id']})")
        extra = f" SEGMENTS({entry['segments']})" if entry["segments"] > 1 else ""
        lines.append(f"{data} MESSAGE LENGTH({entry['message_length']}){extra}"
                     + (" RELOGGED" if entry.get("relogged") else ""))
        if "data_prefix" in entry:
            lines.append(f"DATA START X'{entry['data_prefix']}'")
    elif t == "PUT_SEGMENT":
        lines.append(f"QUEUE({entry['queue']}) MSGID({entry['msg_id']}) SEGMENT({entry['index']}) "
                     f"OFFSET({entry['offset']}) STORED({entry['codec']} {entry['stored_length']} BYTES)")
    elif t == "GET":
        lines.append(f"QUEUE({entry['queue']}) MSGID({entry['msg_id']}) MESSAGE LENGTH({entry['message_length']})"
                     + (" RELOGGED" if entry.get("relogged") else ""))
    elif t == "PREPARE":
        lines.append(f"XID(X'{entry['xid']}')" + (" RELOGGED" if entry.get("relogged") else ""))
    elif t == "COMMIT":
        lines.append(f"OPERATIONS({entry['operations']})")
    elif t == "BACKOUT":
        lines.append(f"OPERATIONS UNDONE({len(entry['undone'])})")
    elif t == "CLR":
        lines.append(f"COMPENSATES({entry['undoes']}) ACTION({entry['action']}) "
                     f"UNDO NEXT({entry['undo_next'] or 'NONE'})")
        lines.append(f"QUEUE({entry['queue']}) MSGID({entry['msg_id']}) MESSAGE LENGTH({entry['message_length']})")
    elif t == "CHECKPOINT_BEGIN":
        lines.append(f"CHECKPOINT NUMBER({entry['number']})")
    elif t == "CHECKPOINT_END":
        lines.append(f"CHECKPOINT NUMBER({entry['number']}) BEGIN({entry['begin']}) "
                     f"URS({len(entry['uows'])}) QUEUES({len(entry['queues'])})")
        for u in entry["uows"]:
            lines.append(f"  UR URID({u['urid']}) STATE({u['state']}) FIRST({u['first']}) LAST({u['last']}) "
                         f"OPERATIONS({u['operations']})")
        for q in entry["queues"]:
            lines.append(f"  QUEUE({q['name']}) DEPTH({q['depth']}) MEDIA RECOVERY RBA({q['media'] or 'NONE'})")
    elif t == "OBJECT_CHANGE":
        lines.append(f"{entry['action']} {entry['object_type']}({entry['name']})")
        if entry["attributes"]:
            lines.append(f"  {entry['attributes']}")
    else:
        fields = " ".join(f"{k.upper()}({v})" for k, v in entry.items()
                          if k in ("index", "count", "number", "body_length", "pagesets", "entries", "queues"))
        if fields:
            lines.append(fields)
        for op in entry.get("operations", []) if isinstance(entry.get("operations"), list) else []:
            lines.append(f"  QUEUE({op['queue']}) ORIGINAL({op['address']}) LENGTH({op['length']})")
    return lines


def log_print(space: ZosLogSpace, addressing, codec=None, *, rba_start: int | None = None,
              rba_end: int | None = None, urid: int | None = None, queue: str | None = None,
              summary: str = "NO", detail: bool = True) -> str:
    """A CSQ1LOGP-style listing (our own layout: see the module docstring). ``summary``:
    NO (records only), YES (records, then the UR summary), ONLY (the summary only);
    ``detail=False`` prints one line a record, without continuation lines."""
    report = log_report(space, addressing, codec, rba_start=rba_start, rba_end=rba_end, urid=urid, queue=queue,
                        summary=summary)
    c = report["criteria"]
    out = [f"CSQ1000I LOG PRINT UTILITY ({_HEADER_NOTE})", "CSQ1102I SEARCH CRITERIA"]
    crit = []
    if c["rba_start"]:
        crit.append(f"RBASTART({c['rba_start']})")
    if c["rba_end"]:
        crit.append(f"RBAEND({c['rba_end']})")
    if c["urid"]:
        crit.append(f"URID({c['urid']})")
    if c["queue"]:
        crit.append(f"QUEUE({c['queue']}) (the model's page-set selection: one queue's records)")
    crit.append(f"SUMMARY({c['summary']})")
    out.append("  " + " ".join(crit))
    read = report["read"]
    out.append(f"  OLDEST RBA AVAILABLE {read['oldest']}; READ {read['from'] or '-'} TO {read['to'] or '-'} "
               f"({read['records_read']} RECORDS, END: {read['end']})")
    indent = " " * (len(addressing.format(0)) + 2)
    if "records" in report:
        for e in report["records"]:
            head = (f"{e['rba_hex']}  URID({e['urid_hex'] or 'NONE'}) RM({e['rm']}) TYPE({e['type']})"
                    + (f" LRSN({e['lrsn']:X})" if e["lrsn"] else "") + f" LENGTH({e['length']})")
            out.append(head)
            if detail:
                out.extend(indent + line for line in _detail_lines(e))
        out.append(f"CSQ1101I UTILITY PROCESSING COMPLETED, {len(report['records'])} RECORDS PRINTED")
    if "summary" in report:
        out.append("CSQ1105I LOG PRINT UTILITY SUMMARY")
        for r in report["summary"]:
            begin = "" if r["begin_in_range"] else " (BEGIN UR NOT IN RANGE)"
            out.append(f"UR URID({r['urid_hex']}) STATUS({r['status']}) START RBA({r['start_rba']}) "
                       f"END RBA({r['end_rba']}) RECORDS({r['records']}){begin}")
            if detail:
                shunts = f" SHUNTS({r['shunts']})" if r["shunts"] else ""
                out.append(f"   PUTS({r['puts']}) GETS({r['gets']}) CLRS({r['clrs']}){shunts} "
                           f"QUEUES({' '.join(r['queues']) or 'NONE'})")
        counts = report["counts"]
        out.append("UR COUNTS - " + ", ".join(f"{s}={counts[s]}" for s in UR_STATUSES))
        out.append("CSQ1106I END OF SUMMARY")
    return "\n".join(out) + "\n"


# ------------------------------------------------------------------------------ BSDS map


def _bsds_copy(storage, name: str) -> dict:
    """One BSDS copy: present, valid, its sequence, and what is wrong with it (``problem``)."""
    info = {"dsname": name, "present": storage.exists(name), "valid": False, "sequence": None, "problem": None}
    if not info["present"]:
        return info
    raw = storage.read(name, 0, storage.size(name))
    if raw[:4] != _BSDS_MAGIC or zlib.crc32(raw[8:]) != int.from_bytes(raw[4:8], "little"):
        info["problem"] = "magic or checksum"
        return info
    try:
        data = json.loads(raw[8:])
    except ValueError as exc:  # (UnicodeDecodeError too) its checksum is good, its contents are not JSON
        info["problem"] = f"contents: {exc}"
        return info
    sequence = data.get("sequence") if isinstance(data, dict) else None
    if not isinstance(sequence, int):
        info["problem"] = "contents: no sequence number"
        return info
    info["sequence"], info["valid"] = sequence, True
    return info


def _active_status(space: ZosLogSpace, index: int, ds) -> str:
    if ds.start == NO_ADDRESS:
        return "NEW"
    if index == space.current:
        return "CURRENT"
    if space.offload:
        if ds.archive < 0:
            return "OFFLOADING"
        return "REUSABLE" if ds.archive > 0 else "NOT REUSABLE"
    checkpoint = space.control.checkpoint
    if checkpoint == NO_ADDRESS or ds.start + space.ds_bytes <= checkpoint:
        return "REUSABLE"
    return "NOT REUSABLE"


def bsds_dict(space: ZosLogSpace, addressing=None) -> dict:
    """The BSDS inventory as a JSON-able dict (RBAs as ints), with the RBA mode (the space's,
    else ``addressing``'s). See the module docstring for the statuses."""
    space.load_control()
    copies = [_bsds_copy(space.storage, name) for name in space.bsds_files]
    valid = [c for c in copies if c["valid"]]
    in_use = max(valid, key=lambda c: c["sequence"])["dsname"] if valid else None
    complete = [e for e in space.archives if e.complete]
    active = {}
    for copy in range(1, space.copies + 1):
        rows = []
        for i, ds in enumerate(space.active):
            name = data_set_name(copy, ds.number)
            used = ds.start != NO_ADDRESS
            rows.append({"number": ds.number, "dsname": name, "present": space.storage.exists(name),
                         "start": ds.start if used else None, "end": ds.start + space.ds_bytes - 1 if used else None,
                         "status": _active_status(space, i, ds),
                         "archive_seq": ds.archive if ds.archive > 0 else None})
        active[str(copy)] = rows
    archives = {}
    for copy in range(1, len(space.prefixes) + 1):
        rows = []
        for e in complete:
            if len(e.files) < copy:
                continue
            name = e.files[copy - 1]
            rows.append({"seq": e.seq, "dsname": name, "present": space.storage.exists(name),
                         "start": e.start, "end": e.end})
        archives[str(copy)] = rows
    out = {
        "bsds": copies,
        "bsds_in_use": in_use,
        "log_start": space.start,
        "high_rba_written": space.high_written - 1 if space.high_written > space.start else None,
        "high_rba_offloaded": max((e.end for e in complete), default=None),
        "last_checkpoint": None if space.control.checkpoint == NO_ADDRESS else space.control.checkpoint,
        "data_set_bytes": space.ds_bytes,
        "cis_per_data_set": space.cis,
        "offload": space.offload,
        "active": active,
        "archives": archives,
        "max_arch": space.max_arch,
        "archives_recorded": len(complete),
        "checkpoint_queue": [{"begin": begin, "number": number} for begin, number in reversed(space.checkpoints)],
    }
    limits = getattr(space, "limits", None)  # the BSDS's own mode (it may have been converted)
    if limits is None and addressing is not None:
        limits = rba_limits(getattr(addressing, "digits", 16) >= 16)
    if limits is not None:
        out["rba_mode"] = f"{limits.width}-byte"
        out["rba_warning"] = limits.warning
        out["rba_termination"] = limits.termination
        out["rba_end_of_range"] = limits.end
    return out


def bsds_map(space: ZosLogSpace, addressing) -> str:
    """A CSQJU004-style print of the BSDS (our own layout: see the module docstring)."""
    d = bsds_dict(space, addressing)
    fmt = addressing.format
    width = len(fmt(0))
    dash = "-" * width

    def rba(value):
        return dash if value is None else fmt(value)

    out = [f"LOG MAP OF THE BOOTSTRAP DATA SET ({_HEADER_NOTE})"]
    for n, c in enumerate(d["bsds"], 1):
        if not c["present"]:
            state = "NOT PRESENT"
        elif not c["valid"]:
            state = f"DAMAGED ({c['problem']})"
        else:
            state = f"SEQUENCE {c['sequence']}" + ("  (IN USE)" if c["dsname"] == d["bsds_in_use"] else "")
        out.append(f"BSDS COPY {n}  DSNAME={c['dsname']}  {state}")
    out.append(f"HIGHEST RBA WRITTEN    {rba(d['high_rba_written'])}")
    out.append(f"HIGHEST RBA OFFLOADED  {rba(d['high_rba_offloaded'])}")
    out.append(f"LOG START RBA          {fmt(d['log_start'])}")
    out.append(f"RBA MODE               {d['rba_mode']}  END OF RANGE {fmt(d['rba_end_of_range'])}  "
               f"WARNING AT {fmt(d['rba_warning'])}  TERMINATION AT {fmt(d['rba_termination'])}")
    out.append(f"LAST CHECKPOINT RBA    {rba(d['last_checkpoint'])}")
    out.append(f"OFFLOAD                {'YES' if d['offload'] else 'NO'}  "
               f"({d['cis_per_data_set']} CIS, {d['data_set_bytes']} BYTES PER ACTIVE DATA SET)")
    for copy, rows in d["active"].items():
        out.append("")
        out.append(f"ACTIVE LOG COPY {copy} DATA SETS")
        out.append(f"  NO  {'DSNAME':<16} {'STARTRBA':<{width}}   {'ENDRBA':<{width}}  STATUS")
        for r in rows:
            archived = f"  ARCHIVE {r['archive_seq']:07d}" if r["archive_seq"] else ""
            missing = "  (DATA SET MISSING)" if not r["present"] else ""
            out.append(f"  {r['number']:02d}  {r['dsname']:<16} {rba(r['start'])} - {rba(r['end'])}  "
                       f"{r['status']}{archived}{missing}")
    for copy, rows in d["archives"].items():
        out.append("")
        out.append(f"ARCHIVE LOG COPY {copy} DATA SETS (MAXARCH {d['max_arch']}, {d['archives_recorded']} RECORDED)")
        if not rows:
            out.append("  NONE")
            continue
        out.append(f"  SEQ      {'DSNAME':<20} {'STARTRBA':<{width}}   ENDRBA")
        for r in rows:
            missing = "  (DATA SET MISSING)" if not r["present"] else ""
            out.append(f"  {r['seq']:07d}  {r['dsname']:<20} {fmt(r['start'])} - {fmt(r['end'])}{missing}")
    out.append("")
    out.append(f"CHECKPOINT QUEUE ({len(d['checkpoint_queue'])} ENTRIES, NEWEST FIRST)")
    out.append("  NUMBER    BEGIN CHECKPOINT RBA")
    for c in d["checkpoint_queue"]:
        out.append(f"  {c['number']:>8}  {fmt(c['begin'])}")
    return "\n".join(out) + "\n"


# ------------------------------------------------------------------------------ statistics


def _worst(value) -> tuple[float, float]:
    """A worst_write_by_file entry: as_dict's {"us", "at_us"} or LogStatistics' (us, at)."""
    if isinstance(value, dict):
        return float(value.get("us", 0.0)), float(value.get("at_us", 0.0))
    us, at = value
    return float(us), float(at)


def log_statistics(space: ZosLogSpace, writer_stats: dict, codec_stats: dict, counters: dict) -> dict:
    """SMF 115 QJST-style log statistics (see the mapping table in the module docstring).

    ``writer_stats``: :meth:`LogStatistics.as_dict` (or a run's metrics); ``codec_stats``:
    :meth:`CompLogCodec.stats` ({} if unknown); ``counters``: the queue manager's counters
    (``attrs.asdict(qm.counters)``) or a run's metrics, whose space figures override the
    space's own. Keys the model has no figure for are left out."""
    w = writer_stats or {}
    c = counters or {}
    space.load_control()

    def figure(metrics_key: str, live):
        return c[metrics_key] if metrics_key in c else live

    copies = space.copies
    archive_copies = len(space.prefixes)
    offloads = figure("archive_offloads", space.archive_offloads)
    switches = figure("log_switches", space.switches)
    reads_active = figure("platform_reads_active", space.reads["active"])
    reads_archive = figure("platform_reads_archive", space.reads["archive"])
    reads_copy2 = figure("platform_reads_copy2", space.reads["copy2"])
    bsds = figure("platform_bsds_accesses", space.bsds_accesses)
    archive_writes = offloads * archive_copies

    s: dict = {}
    if "force_waits" in w:
        s["QJSTWRW"] = w["force_waits"]
    if "logical_writes" in w:
        s["QJSTWRNW"] = w["logical_writes"]
    if "forces" in w:
        s["QJSTWRF"] = w["forces"]
    if "buffer_waits" in w:
        s["QJSTWTB"] = w["buffer_waits"]
    s["QJSTRBUF"] = 0
    s["QJSTRACT"] = reads_active
    s["QJSTRARH"] = reads_archive
    s["QJSTBSDS"] = bsds
    pages = w.get("pages_written")
    if pages is None and "physical_bytes" in w:
        pages = w["physical_bytes"] // PAGE_SIZE
    # The writer counts archive copies apart (archive_writes / archive_bytes): its physical
    # writes and pages are the active log's own.
    log_cis = pages
    rewrites = w.get("partial_page_rewrites")
    if log_cis is not None and rewrites is not None:
        s["QJSTBFFL"] = log_cis // copies - rewrites
    if "write_cycles" in w:
        s["QJSTBFWR"] = w["write_cycles"]
    if "archive_read_allocations" in c:
        s["QJSTALR"] = c["archive_read_allocations"]
    s["QJSTALW"] = archive_writes
    s["QJSTCIOF"] = offloads * space.cis
    if "checkpoints" in c:
        s["QJSTLLCP"] = c["checkpoints"]
    if "physical_writes" in w:
        s["QJSTLOGW"] = w["physical_writes"]
    if log_cis is not None:
        s["QJSTCIWR"] = log_cis
    if rewrites is not None:
        s["QJSTSERW"] = rewrites * copies
    if "threshold_writes" in w:
        s["QJSTTHRW"] = w["threshold_writes"]
    s["QJSTCP1N"] = switches
    if copies == 2:
        s["QJSTCP2N"] = switches
    for key, value in sorted((codec_stats or {}).items()):
        if key.startswith("QJST"):
            s[key] = value
    worst = w.get("worst_write_by_file") or {}
    io = {}
    for copy in range(1, copies + 1):
        prefix = f"LOGCOPY{copy}."
        mine = [(name, *_worst(v)) for name, v in worst.items() if name.startswith(prefix)]
        if mine:
            name, us, at = max(mine, key=lambda t: t[1])
            io[str(copy)] = {"IOMAXIO_US": us, "IOMAXIO_AT_US": at, "IOMAXIO_LOGID": name}
    if io:
        s["QJSTIO"] = io
    # -- the model's own figures, apart from IBM's
    s["mqlog_shunts"] = c.get("shunts", 0)
    if "shunted_bytes" in c:
        s["mqlog_shunted_bytes"] = c["shunted_bytes"]
    s["mqlog_archive_offloads"] = offloads
    s["mqlog_copy2_reads"] = reads_copy2
    s["mqlog_log_switches"] = switches
    s["mqlog_archives_recorded"] = len([e for e in space.archives if e.complete])
    for key in ("compression_in_bytes", "compression_out_bytes"):
        if key in c:
            s[f"mqlog_{key}"] = c[key]
    archive_worst = [(name, *_worst(v)) for name, v in worst.items()
                     if any(name.startswith(p + ".") for p in space.prefixes)]
    if archive_worst:
        name, us, at = max(archive_worst, key=lambda t: t[1])
        s["mqlog_archive_max_write"] = {"us": us, "at_us": at, "dsname": name}
    for key, value in sorted((codec_stats or {}).items()):
        if key.startswith("mqlog_"):
            s[key] = value
    return s


_LABELS = {
    "QJSTWRW": "log write requests that waited",
    "QJSTWRNW": "log write requests, no wait (records appended)",
    "QJSTWRF": "force write requests",
    "QJSTWTB": "waits for an output buffer (non-zero: OUTBUFF too small)",
    "QJSTRBUF": "reads satisfied from the output buffer",
    "QJSTRACT": "reads satisfied from the active log (CIs)",
    "QJSTRARH": "reads satisfied from the archive log (CIs)",
    "QJSTBSDS": "BSDS access requests",
    "QJSTBFFL": "active log CIs created",
    "QJSTBFWR": "log output buffer writes",
    "QJSTALR": "archive log read allocations",
    "QJSTALW": "archive log write allocations",
    "QJSTCIOF": "CIs offloaded",
    "QJSTLLCP": "checkpoints taken",
    "QJSTLOGW": "log write I/Os (both copies)",
    "QJSTCIWR": "log CIs written (both copies)",
    "QJSTSERW": "serial log write I/Os (partial-CI rewrites)",
    "QJSTTHRW": "writes started by the write threshold (WRTHRSH)",
    "QJSTCP1N": "new copy 1 active data sets used",
    "QJSTCP2N": "new copy 2 active data sets used",
    "QJSTCMPREQ": "compression requests (RLE)",
    "QJSTCMPFAIL": "compression requests not smaller",
    "QJSTCMPUNCMP": "bytes offered to compression",
    "QJSTCMPCOMP": "bytes after compression",
    "QJSTDECREQ": "decompression requests (RLE)",
    "QJSTDECFAIL": "decompression failures",
    "QJSTDECUNCMP": "bytes after decompression",
    "QJSTDECCOMP": "bytes decompressed",
}


def format_statistics(stats: dict) -> str:
    """The statistics as text: IBM's QJST fields, the per-copy I/O, then the model's own."""
    out = [f"LOG MANAGER STATISTICS, SMF 115 QJST STYLE ({_HEADER_NOTE})"]
    ibm = [(k, v) for k, v in stats.items() if k.startswith("QJST") and k != "QJSTIO"]
    for key, value in ibm:
        out.append(f"  {key:<14} {value:>14}  {_LABELS.get(key, '')}".rstrip())
    for copy, io in stats.get("QJSTIO", {}).items():
        out.append(f"  QJSTIO COPY {copy}  slowest write {io['IOMAXIO_US']:.1f} us at {io['IOMAXIO_AT_US']:.1f} us "
                   f"to {io['IOMAXIO_LOGID']}")
    out.append("MQLOG MODEL FIGURES (not IBM fields)")
    for key, value in stats.items():
        if not key.startswith("mqlog_"):
            continue
        if isinstance(value, dict):
            value = ", ".join(f"{k}={v:.1f}" if isinstance(v, float) else f"{k}={v}" for k, v in value.items())
        out.append(f"  {key:<32} {value}")
    return "\n".join(out) + "\n"
