"""Log statistics like SMF 115's QJST section, from the log space's live counters, the
writer's statistics (or a run's metrics.json), the COMPLOG codec's counters and the queue
manager's: IBM's fields where the model has the figure (nothing invented; docs/zos-utilities.md
maps each field to its figure), the slowest write per copy, and the model's own ``mqlog_``
figures apart. :func:`log_statistics` gives the dict, :func:`format_statistics` the text.
"""

from __future__ import annotations

from mqlog.core.format.pages import PAGE_SIZE
from mqlog.zos.space import ZosLogSpace
from mqlog.zos.utilities.layout import HEADER_NOTE


def _worst(value) -> tuple[float, float]:
    """A worst_write_by_file entry: as_dict's {"us", "at_us"} or LogStatistics' (us, at)."""
    if isinstance(value, dict):
        return float(value.get("us", 0.0)), float(value.get("at_us", 0.0))
    us, at = value
    return float(us), float(at)


def log_statistics(space: ZosLogSpace, writer_stats: dict, codec_stats: dict, counters: dict) -> dict:
    """SMF 115 QJST-style log statistics (see the mapping table in docs/zos-utilities.md).

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
    if "forces_waited" in w:
        s["QJSTWRW"] = w["forces_waited"]  # forces that had to wait for the writer
    elif "write_cycles" in w:
        # a run directory from before forces_waited: its logical_writes counted the forces
        # that waited (since issue 38 they count the writes that carried new log data)
        s["QJSTWRW"] = w["logical_writes"]
    if "log_records" in w:
        s["QJSTWRNW"] = w["log_records"]
    elif "logical_writes" in w:
        s["QJSTWRNW"] = w["logical_writes"]  # a run directory from before log_records: records
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
    if "ordered_writes" in w:
        # serial writes of a partial CI being rewritten, copy 1's and copy 2's (Db2's field:
        # "only meaningful when running in dual active log mode"); none where the device
        # never splits a CI and both copies go at once
        s["QJSTSERW"] = 2 * w["ordered_writes"] if copies == 2 else 0
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
            if copy == 1 and w.get("primary_writes"):
                # copy 1's I/Os and their time (the I/O time per write to LOGCOPY1 is the ratio)
                io["1"].update(IOCOUNT=w["primary_writes"], IOTOTIO_US=w["primary_write_time_us"])
    if io:
        s["QJSTIO"] = io
    # -- the model's own figures, apart from IBM's
    s["mqlog_shunts"] = c.get("shunts", 0)
    if "shunted_bytes" in c:
        s["mqlog_shunted_bytes"] = c["shunted_bytes"]
    s["mqlog_archive_offloads"] = offloads
    s["mqlog_copy2_reads"] = reads_copy2
    if space.copies_out_of_use:
        # copies found missing or short, no longer written: logging is single on their data sets
        s["mqlog_copies_out_of_use"] = space.copies_out_of_use
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
    out = [f"LOG MANAGER STATISTICS, SMF 115 QJST STYLE ({HEADER_NOTE})"]
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
        elif isinstance(value, list):
            value = " ".join(map(str, value))
        out.append(f"  {key:<32} {value}")
    return "\n".join(out) + "\n"
