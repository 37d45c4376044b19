"""The log print, like CSQ1LOGP: the records of a z/OS log space from the oldest RBA still on
disk, selected by RBA range, unit of recovery or queue, each described (put data expanded with
the codec its record names), and the summary of units of recovery with their status as of the
end of the range. :func:`log_records`, :func:`ur_summary` and :func:`log_report` give JSON-able
values, :func:`log_print` the text formatted from them; docs/zos-utilities.md says what is
selected, how statuses are classified and how a listing is laid out.
"""

from __future__ import annotations

from mqlog.core.errors import LogFormatError, ParameterError
from mqlog.core.format.pages import NO_FIRST_RECORD, PAGE_HEADER_SIZE, PAGE_SIZE, check_page, page_of
from mqlog.core.format.records import (NO_ADDRESS, Backout, Begin, CheckpointBegin, CheckpointEnd, Clr, ClrAction, Codec,
                                       Commit, Get, ObjectAction, ObjectChange, ObjectType, OpaqueRecord, Prepare,
                                       Put, PutSegment, UowState, code_names)
from mqlog.core.log.reader import LogReader
from mqlog.zos.codec import CompLogCodec
from mqlog.zos.records import RECORD_TYPES, ZosRecordType
from mqlog.zos.space import ZosLogSpace
from mqlog.zos.utilities.layout import HEADER_NOTE

SUMMARY_CHOICES = ("NO", "YES", "ONLY")

#: the statuses of a unit of recovery still incomplete at the end of the range, as CSQR004I
#: counts them: IN COMMIT is a UR that began phase 2 but did not finish it. The model's Commit
#: record is the whole of phase 2, so it never leaves a UR in commit: the count is kept, at 0,
#: so that the line reads as MQ's does.
INCOMPLETE_STATUSES = ("IN COMMIT", "INDOUBT", "INFLIGHT", "IN BACKOUT")
#: the statuses of a finished unit of recovery
COMPLETE_STATUSES = ("COMMITTED", "BACKED OUT")
#: UR statuses in the summary, in the order the count lines give them
UR_STATUSES = INCOMPLETE_STATUSES + COMPLETE_STATUSES


def oldest_address(space: ZosLogSpace) -> int:
    """The oldest RBA still on disk: the start of the oldest complete archive the BSDS
    records, or of the oldest active data set in use."""
    space.load_control()
    starts = [e.start for e in space.archives if e.complete]
    starts += [d.start for d in space.active if d.start != NO_ADDRESS]
    return min(starts) if starts else space.start


def _urid(begins: dict[int, int], uow: int, fmt) -> dict:
    """A unit's URID, as MQ for z/OS names a unit of recovery: the RBA of its Begin record
    (``urid``, an int, and ``urid_hex``); both None for a record of no unit, or of one whose
    Begin record is no longer on the log (its number, ``uow``, is still printed)."""
    begin = begins.get(uow) if uow else None
    return {"urid": begin, "urid_hex": None if begin is None else fmt(begin)}


def _begins(space: ZosLogSpace, oldest: int, before: int, limit: int, fmt) -> dict[int, int]:
    """The RBA of each Begin record from ``oldest`` up to ``before``: the URIDs of units that
    began before a range printed. Reading stops quietly where the log cannot be read: a unit
    whose Begin is past that point is printed by its number instead."""
    begins: dict[int, int] = {}
    start = _first_record_from(space, oldest, limit)
    if start is None:
        return begins
    for address, record in LogReader(space, start, format_address=fmt, record_types=RECORD_TYPES):
        if address >= before:
            break
        if record.uow and isinstance(record, Begin):
            begins[record.uow] = address
    return begins


def unavailable_reason(space: ZosLogSpace, oldest: int) -> str | None:
    """Why the log before ``oldest`` (the oldest RBA still available) cannot be printed, or None
    when nothing before it was ever written (it is the log's first RBA). With OFFLOAD(YES) the
    BSDS records at most MAXARCH archive data sets and drops the oldest entry when one more is
    added (IBM: CSQ6ARVP MAXARCH, "the maximum number of archive log volumes to be recorded in
    the BSDS"); with OFFLOAD(NO) nothing is archived and active data sets are reused."""
    if oldest <= space.start:
        return None
    if space.offload:
        return f"its archive data sets were dropped from the BSDS (MAXARCH({space.max_arch}))"
    return "OFFLOAD(NO): never archived, its active log data sets reused"


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


#: the names of record type and resource manager codes in a z/OS log: the core's and z/OS's
_TYPE_NAMES, _RM_NAMES = code_names(RECORD_TYPES)


def _name(enum_cls, value) -> str:
    try:
        return enum_cls(value).name
    except ValueError:
        return f"X'{int(value):02X}'"


def _code_name(names, value: int) -> str:
    name = names.get(value)
    return f"X'{value:02X}'" if name is None else name


def _type_code(record) -> int:
    return int(record.type) if isinstance(record, OpaqueRecord) else int(record.TYPE)


def _rm_code(record) -> int:
    return int(record.rm) if isinstance(record, OpaqueRecord) else int(record.RM)


def _is(record, code: int) -> bool:
    return _type_code(record) == int(code)


def _describe(record, addressing) -> dict:
    """The record-specific fields of one record (JSON-able)."""
    fmt = addressing.format
    out: dict = {}
    if isinstance(record, Begin):
        out["application"] = record.application
    elif isinstance(record, Put):
        out.update(queue=record.queue, msg_id=record.msg_id.hex().upper(), message_length_bytes=record.message_length,
                   stored_length_bytes=len(record.data), codec=Codec(record.codec).name, segments=record.segments)
        if record.relogged:
            out["relogged"] = True
    elif isinstance(record, PutSegment):
        out.update(queue=record.queue, msg_id=record.msg_id.hex().upper(), index=record.index,
                   offset=record.offset, stored_length_bytes=len(record.data), codec=Codec(record.codec).name)
    elif isinstance(record, Get):
        out.update(queue=record.queue, msg_id=record.msg_id.hex().upper(), message_length_bytes=record.message_length)
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
                   queue=record.queue, msg_id=record.msg_id.hex().upper(), message_length_bytes=record.message_length)
    elif isinstance(record, CheckpointBegin):
        out["number"] = record.number
    elif isinstance(record, CheckpointEnd):
        out.update(number=record.number, begin=fmt(record.begin),
                   uows=[{"uow": u.uow, "state": _name(UowState, u.state),
                          "first": None if u.first == NO_ADDRESS else fmt(u.first),
                          "last": None if u.last == NO_ADDRESS else fmt(u.last), "operations": u.operations}
                         for u in record.uows],
                   queues=[{"name": q.name, "depth": q.depth,
                            "media": None if q.media == NO_ADDRESS else fmt(q.media)} for q in record.queues])
    elif isinstance(record, ObjectChange):
        out.update(action=_name(ObjectAction, record.action), object_type=_name(ObjectType, record.object_type),
                   name=record.name, attributes=record.attributes)
    elif isinstance(record, OpaqueRecord):
        out["body_length_bytes"] = len(record.body)
    else:  # a platform record class registered by its format module (shunt, page-set control ...)
        for key in ("index", "count", "number"):
            if isinstance(getattr(record, key, None), int):
                out[key] = getattr(record, key)
        shunted = getattr(record, "shunted", None)
        if shunted is not None:
            out["operations"] = [{"queue": getattr(op, "queue", ""), "address": fmt(getattr(op, "address", 0)),
                                  "length_bytes": getattr(op, "length", 0)} for op in shunted]
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
    # each unit's URID: the RBA of its Begin record (a unit that began before the range is
    # looked up in the log before it)
    begins = _begins(space, oldest, rba_start, limit, fmt) if rba_start is not None and oldest < rba_start else {}
    # the log before the oldest RBA is gone: when the range reaches back into it, say why,
    # rather than print less (or nothing) silently
    gone = unavailable_reason(space, oldest) if rba_start is None or rba_start < oldest else None
    read = {"oldest": fmt(oldest), "from": None, "to": None, "end": None, "records_read": 0,
            "before_oldest": None if gone is None else f"log before {fmt(oldest)} not available: {gone}"}
    if rba_end is not None and rba_end < oldest:
        read["end"] = f"RBAEND is before the oldest RBA available ({fmt(oldest)}): nothing to read"
        return {"records": records, "urs": urs, "read": read}
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
        if uow and isinstance(record, Begin):
            begins[uow] = address
        entry = {"address": address, "address_text": fmt(address), "type": _code_name(_TYPE_NAMES, _type_code(record)),
                 "rm": _code_name(_RM_NAMES, _rm_code(record)), "uow": uow, **_urid(begins, uow, fmt),
                 "lrsn": record.stamp, "length_bytes": len(record.to_bytes()),
                 "prev": None if record.prev == NO_ADDRESS else fmt(record.prev)}
        entry.update(_describe(record, addressing))
        for u in entry.get("uows", ()) if isinstance(entry.get("uows"), list) else ():
            u.update(_urid(begins, u["uow"], fmt))  # a checkpoint's table of open units
        if isinstance(record, Put):
            _expand_put(codec, record, entry, pending)
        elif isinstance(record, PutSegment):
            _expand_segment(codec, record, pending)
        selected = ((urid is None or (uow and begins.get(uow) == urid))
                    and (queue is None or queue in _queues_named(record)))
        if uow:
            ur = urs.get(uow)
            if ur is None:
                ur = urs[uow] = {"uow": uow, **_urid(begins, uow, fmt), "start": address, "end": address,
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
            ur["shunts"] += _is(record, ZosRecordType.SHUNT)
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
        entry["expanded_length_bytes"] = len(data)
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
    entry["expanded_length_bytes"] = len(data)
    entry["data_prefix"] = data[:16].hex().upper()


def _status(ur: dict) -> str:
    if ur["backout"]:
        return "BACKED OUT"
    if ur["commit"]:
        return "COMMITTED"  # its Commit record is phase 2 done: nothing for restart to finish
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
        rows.append({"uow": ur["uow"], "urid": ur["urid"], "urid_hex": ur["urid_hex"], "status": _status(ur),
                     "start_rba": fmt(ur["start"]), "end_rba": fmt(ur["end"]), "start": ur["start"], "end": ur["end"],
                     "records": ur["records"], "begin_in_range": ur["begin_seen"], "puts": ur["puts"],
                     "gets": ur["gets"], "clrs": ur["clrs"], "shunts": ur["shunts"],
                     "queues": sorted(ur["queues"]), "application": ur["application"]})
    return rows


def log_records(space: ZosLogSpace, addressing, codec=None, *, rba_start: int | None = None,
                rba_end: int | None = None, urid: int | None = None, queue: str | None = None) -> list[dict]:
    """The selected log records, oldest first, as JSON-able dicts (see docs/zos-utilities.md).

    Every dict has ``address`` (the record's RBA, int) and ``address_text`` (as the
    print shows it, the names every command's ``--json`` gives an address), ``type``, ``rm``, ``uow`` (the unit's
    number in the record, 0: none), ``urid`` (the RBA of the unit's Begin record: its URID,
    None if none or no longer on the log) and ``urid_hex``, ``lrsn``, ``length_bytes`` (bytes on the log) and ``prev``; then the record's own
    fields. A put has ``message_length_bytes`` (before compression), ``stored_length_bytes``, ``codec``
    and, once expanded, ``expanded_length_bytes`` and ``data_prefix`` (first 16 bytes, hex).
    ``codec`` (a CompLogCodec; None: a new one) expands compressed data and counts it."""
    return _scan(space, addressing, codec, rba_start=rba_start, rba_end=rba_end, urid=urid, queue=queue)["records"]


def ur_summary(space: ZosLogSpace, addressing, codec=None, *, rba_start: int | None = None,
               rba_end: int | None = None, urid: int | None = None, queue: str | None = None) -> list[dict]:
    """The units of recovery with a selected record, by start RBA, each with its ``status``
    (COMMITTED, BACKED OUT, INDOUBT, IN BACKOUT, INFLIGHT), ``start``/``end`` RBA (int) and
    ``start_rba``/``end_rba`` (hex), and ``records`` (its records in the range)."""
    scan = _scan(space, addressing, codec, rba_start=rba_start, rba_end=rba_end, urid=urid, queue=queue)
    return _summary_rows(scan["urs"], addressing)


def summary_statuses(status: str) -> tuple[str, ...]:
    """The unit statuses a summary lists: ``INCOMPLETE`` (the units restart would act on, as
    CSQ1LOGP's summary reports them), ``ALL``, or statuses named, comma-separated."""
    text = str(status).strip().upper()
    if text == "INCOMPLETE":
        return INCOMPLETE_STATUSES
    if text == "ALL":
        return UR_STATUSES
    chosen = tuple(s.strip() for s in text.split(",") if s.strip())
    unknown = [s for s in chosen if s not in UR_STATUSES]
    if unknown or not chosen:
        raise ParameterError("STATUS", status, "INCOMPLETE, ALL or statuses of " + ", ".join(UR_STATUSES))
    return chosen


def log_report(space: ZosLogSpace, addressing, codec=None, *, rba_start: int | None = None,
               rba_end: int | None = None, urid: int | None = None, queue: str | None = None,
               summary: str = "NO", status: str = "ALL") -> dict:
    """Everything :func:`log_print` prints, JSON-able: ``criteria``, ``read`` (where reading
    started and ended), ``records`` (unless SUMMARY(ONLY)), ``summary`` and ``counts``
    (with SUMMARY(YES) or (ONLY)). ``status`` (:func:`summary_statuses`) chooses the units the
    summary lists; ``counts`` counts every unit."""
    summary = _check_summary(summary)
    statuses = summary_statuses(status)
    scan = _scan(space, addressing, codec, rba_start=rba_start, rba_end=rba_end, urid=urid, queue=queue)
    fmt = addressing.format
    criteria = {"rba_start": None if rba_start is None else fmt(rba_start),
                "rba_end": None if rba_end is None else fmt(rba_end),
                "urid": None if urid is None else fmt(urid), "queue": queue, "summary": summary,
                "status": str(status).upper()}
    report: dict = {"criteria": criteria, "read": scan["read"]}
    if summary != "ONLY":
        report["records"] = scan["records"]
    if summary != "NO":
        rows = _summary_rows(scan["urs"], addressing)
        report["summary"] = [r for r in rows if r["status"] in statuses]
        report["counts"] = {s: sum(r["status"] == s for r in rows) for s in UR_STATUSES}
    return report


def _urid_text(entry: dict) -> str:
    """The URID as printed: the Begin record's RBA; NONE for a record of no unit; the unit's
    number where its Begin record is no longer on the log (no RBA to print)."""
    if entry["urid_hex"] is not None:
        return entry["urid_hex"]
    return f"BEGIN NOT ON LOG, UOW {entry['uow']:X}" if entry.get("uow") else "NONE"


def _detail_lines(entry: dict) -> list[str]:
    """The continuation lines of one record."""
    t = entry["type"]
    lines = []
    if t == "BEGIN":
        lines.append(f"APPLICATION({entry['application']})")
    elif t == "PUT":
        if "expanded_length_bytes" in entry:
            data = f"DATA({entry['codec']} {entry['stored_length_bytes']} -> {entry['expanded_length_bytes']} BYTES)"
        elif "expand_error" in entry:
            data = f"DATA({entry['codec']} {entry['stored_length_bytes']} BYTES, NOT EXPANDABLE: {entry['expand_error']})"
        else:
            data = f"DATA({entry['codec']} {entry['stored_length_bytes']} BYTES STORED, " \
                   f"{entry['message_length_bytes']} EXPANDED; SEGMENTS NOT ALL READ)"
        lines.append(f"QUEUE({entry['queue']}) MSGID({entry['msg_id']})")
        extra = f" SEGMENTS({entry['segments']})" if entry["segments"] > 1 else ""
        lines.append(f"{data} MESSAGE LENGTH({entry['message_length_bytes']}){extra}"
                     + (" RELOGGED" if entry.get("relogged") else ""))
        if "data_prefix" in entry:
            lines.append(f"DATA START X'{entry['data_prefix']}'")
    elif t == "PUT_SEGMENT":
        lines.append(f"QUEUE({entry['queue']}) MSGID({entry['msg_id']}) SEGMENT({entry['index']}) "
                     f"OFFSET({entry['offset']}) STORED({entry['codec']} {entry['stored_length_bytes']} BYTES)")
    elif t == "GET":
        lines.append(f"QUEUE({entry['queue']}) MSGID({entry['msg_id']}) MESSAGE LENGTH({entry['message_length_bytes']})"
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
        lines.append(f"QUEUE({entry['queue']}) MSGID({entry['msg_id']}) MESSAGE LENGTH({entry['message_length_bytes']})")
    elif t == "CHECKPOINT_BEGIN":
        lines.append(f"CHECKPOINT NUMBER({entry['number']})")
    elif t == "CHECKPOINT_END":
        lines.append(f"CHECKPOINT NUMBER({entry['number']}) BEGIN({entry['begin']}) "
                     f"URS({len(entry['uows'])}) QUEUES({len(entry['queues'])})")
        for u in entry["uows"]:
            lines.append(f"  UR URID({_urid_text(u)}) STATE({u['state']}) FIRST({u['first']}) LAST({u['last']}) "
                         f"OPERATIONS({u['operations']})")
        for q in entry["queues"]:
            lines.append(f"  QUEUE({q['name']}) DEPTH({q['depth']}) MEDIA RECOVERY RBA({q['media'] or 'NONE'})")
    elif t == "OBJECT_CHANGE":
        lines.append(f"{entry['action']} {entry['object_type']}({entry['name']})")
        if entry["attributes"]:
            lines.append(f"  {entry['attributes']}")
    else:
        fields = " ".join(f"{k.upper()}({v})" for k, v in entry.items()
                          if k in ("index", "count", "number", "body_length_bytes", "pagesets", "entries", "queues"))
        if fields:
            lines.append(fields)
        for op in entry.get("operations", []) if isinstance(entry.get("operations"), list) else []:
            lines.append(f"  QUEUE({op['queue']}) ORIGINAL({op['address']}) LENGTH({op['length_bytes']})")
    return lines


def log_print(space: ZosLogSpace, addressing, codec=None, *, rba_start: int | None = None,
              rba_end: int | None = None, urid: int | None = None, queue: str | None = None,
              summary: str = "NO", detail: bool = True, status: str = "ALL") -> str:
    """A CSQ1LOGP-style listing (our own layout: see docs/zos-utilities.md). ``summary``:
    NO (records only), YES (records, then the UR summary), ONLY (the summary only);
    ``detail=False`` prints one line a record, without continuation lines."""
    report = log_report(space, addressing, codec, rba_start=rba_start, rba_end=rba_end, urid=urid, queue=queue,
                        summary=summary, status=status)
    c = report["criteria"]
    out = [f"CSQ1000I LOG PRINT UTILITY ({HEADER_NOTE})", "CSQ1102I SEARCH CRITERIA"]
    crit = []
    if c["rba_start"]:
        crit.append(f"RBASTART({c['rba_start']})")
    if c["rba_end"]:
        crit.append(f"RBAEND({c['rba_end']})")
    if c["urid"]:
        crit.append(f"URID({c['urid']})")
    if c["queue"]:
        crit.append(f"QUEUE({c['queue']}) (the model's page-set selection: one queue's records)")
    crit.append(f"SUMMARY({c['summary']})" + (f" STATUS({c['status']})" if c["summary"] != "NO" else ""))
    out.append("  " + " ".join(crit))
    read = report["read"]
    out.append(f"  OLDEST RBA AVAILABLE {read['oldest']}; READ {read['from'] or '-'} TO {read['to'] or '-'} "
               f"({read['records_read']} RECORDS, END: {read['end']})")
    if read["before_oldest"]:
        out.append(f"  {read['before_oldest'].upper()}")
    indent = " " * (len(addressing.format(0)) + 2)
    if "records" in report:
        for e in report["records"]:
            head = (f"{e['address_text']}  URID({_urid_text(e)}) RM({e['rm']}) TYPE({e['type']})"
                    + (f" LRSN({e['lrsn']:X})" if e["lrsn"] else "") + f" LENGTH({e['length_bytes']})")
            out.append(head)
            if detail:
                out.extend(indent + line for line in _detail_lines(e))
        out.append(f"CSQ1101I UTILITY PROCESSING COMPLETED, {len(report['records'])} RECORDS PRINTED")
    if "summary" in report:
        out.append("CSQ1105I LOG PRINT UTILITY SUMMARY")
        for r in report["summary"]:
            begin = "" if r["begin_in_range"] else " (BEGIN UR NOT IN RANGE)"
            out.append(f"UR URID({_urid_text(r)}) STATUS({r['status']}) START RBA({r['start_rba']}) "
                       f"END RBA({r['end_rba']}) RECORDS({r['records']}){begin}")
            if detail:
                shunts = f" SHUNTS({r['shunts']})" if r["shunts"] else ""
                out.append(f"   PUTS({r['puts']}) GETS({r['gets']}) CLRS({r['clrs']}){shunts} "
                           f"QUEUES({' '.join(r['queues']) or 'NONE'})")
        counts = report["counts"]
        out.append("INCOMPLETE UR COUNTS - " + ", ".join(f"{s}={counts[s]}" for s in INCOMPLETE_STATUSES))
        out.append("COMPLETED UR COUNTS - " + ", ".join(f"{s}={counts[s]}" for s in COMPLETE_STATUSES))
        out.append("CSQ1106I END OF SUMMARY")
    return "\n".join(out) + "\n"
