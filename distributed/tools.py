"""The distributed queue manager's utilities as the ``mqlog`` commands its descriptor lists
call them (``qmstatus``, ``dump``, ``rcdmqimg``, ``rcrmqobj``, ``set-log-archived``,
``dmpmqlog``): the command line reaches them through the descriptor's ``tools``, never by
importing this package."""

from __future__ import annotations

from mqlog.distributed.logdump import LogDump, parse_lsn, summary_line
from mqlog.distributed.media import rcdmqimg, rcrmqobj
from mqlog.distributed.space import extent_name, format_lsn

__all__ = ["LogDump", "parse_lsn", "summary_line", "rcdmqimg", "rcrmqobj", "format_lsn", "logger_dump"]


def logger_dump(space, m: dict) -> dict:
    """The logger dump (like amqldmpa -c H): ring and files from the log control file
    (``space``), the write statistics from the run's metrics ``m``."""
    order = space.ring if not space.linear else space.active_extents()
    worst = m.get("worst_write_by_file", {})
    recent = sorted((kv for kv in worst.items() if kv[0].endswith(".LOG")), key=lambda kv: kv[0])[-8:]  # last 8 extents
    return {
        "logactive": space.primary, "loginactive": space.secondary, "FileCount": len(order),
        "filenum": [extent_name(n) for n in order], "logBufSz": m.get("log_buffer_bytes", 0) // 4096,
        "WriteSizeShort": m.get("write_size_short_bytes", 0), "WriteSizeLong": m.get("write_size_long_bytes", 0),
        "WriteSizeMax": m.get("write_size_max_bytes", 0), "WriteTimeShort": m.get("write_time_short_us", 0),
        "WriteTimeLong": m.get("write_time_long_us", 0), "WriteTimeShortMax": m.get("write_time_short_max_us", 0),
        "WriteTimeLongMax": m.get("write_time_long_max_us", 0), "WriteTimeMax": m.get("write_time_max_us", 0),
        "WriteTimeMaxAt": m.get("write_time_max_at_us", 0),
        "WorstWriteByFile": {name: entry.get("us", 0) for name, entry in recent},
        "staLogicalBytes": m.get("logical_bytes", 0), "staPhysicalBytes": m.get("physical_bytes", 0),
        "staLogicalWrites": m.get("logical_writes", 0), "staPhysicalWrites": m.get("physical_writes", 0),
    }
