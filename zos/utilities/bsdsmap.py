"""The BSDS map, like CSQJU004: each BSDS copy (valid or why not, decoded by
:mod:`mqlog.zos.bsds` as the log space decodes it), the highest RBAs written and offloaded, the
RBA mode and its thresholds, the active data sets with their status, the archives and the
checkpoint queue. :func:`bsds_dict` gives the JSON-able inventory, :func:`bsds_map` the text;
docs/zos-utilities.md defines the statuses.
"""

from __future__ import annotations

from mqlog.core.format.records import NO_ADDRESS
from mqlog.zos.bsds import decode_bsds
from mqlog.zos.config import rba_limits
from mqlog.zos.space import ZosLogSpace, data_set_name
from mqlog.zos.utilities.layout import HEADER_NOTE


def _bsds_copy(storage, name: str) -> dict:
    """One BSDS copy: present, valid, its sequence, and what is wrong with it (``problem``)."""
    info = {"dsname": name, "present": storage.exists(name), "valid": False, "sequence": None, "problem": None}
    if not info["present"]:
        return info
    inventory, info["problem"] = decode_bsds(storage.read(name, 0, storage.size(name)))
    if inventory is not None:
        info["sequence"], info["valid"] = inventory["sequence"], True
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
    else ``addressing``'s). See docs/zos-utilities.md for the statuses."""
    space.load_control()
    copies = [_bsds_copy(space.storage, name) for name in space.bsds_files]
    valid = [c for c in copies if c["valid"]]
    in_use = max(valid, key=lambda c: c["sequence"])["dsname"] if valid else None
    complete = [e for e in space.archives if e.complete]
    out_of_use = set(space.copies_out_of_use)
    active = {}
    for copy in range(1, space.copies + 1):
        rows = []
        for i, ds in enumerate(space.active):
            name = data_set_name(copy, ds.number)
            used = ds.start != NO_ADDRESS
            rows.append({"number": ds.number, "dsname": name, "present": space.storage.exists(name),
                         "start": ds.start if used else None, "end": ds.start + space.ds_bytes - 1 if used else None,
                         "status": _active_status(space, i, ds), "in_use": name not in out_of_use,
                         "short": space.storage.exists(name) and space.storage.size(name) < space.ds_bytes,
                         "archive_seq": ds.archive if ds.archive > 0 else None})
        active[str(copy)] = rows
    archives = {}
    # as many copies as any recorded archive has: TWOARCH changed at a restart leaves older
    # archives with the copies made when they were offloaded
    for copy in range(1, max([len(space.prefixes), *(len(e.files) for e in complete)]) + 1):
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
    """A CSQJU004-style print of the BSDS (our own layout: see docs/zos-utilities.md)."""
    d = bsds_dict(space, addressing)
    fmt = addressing.format
    width = len(fmt(0))
    dash = "-" * width

    def rba(value):
        return dash if value is None else fmt(value)

    out = [f"LOG MAP OF THE BOOTSTRAP DATA SET ({HEADER_NOTE})"]
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
            missing = ("  (DATA SET MISSING)" if not r["present"] else "  (SHORT: NOT IN USE)" if not r["in_use"]
                       else "  (SHORT)" if r["short"] else "")
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


