"""The z/OS log utilities over a log space: a log print like CSQ1LOGP
(:mod:`~mqlog.zos.utilities.logprint`), a BSDS map like CSQJU004
(:mod:`~mqlog.zos.utilities.bsdsmap`) and log statistics like SMF 115 QJST
(:mod:`~mqlog.zos.utilities.qjst`), each a JSON-able value and the text formatted from it, in
the model's own layout. What each shows is specified in docs/zos-utilities.md; the same over a
run directory (read under its lock) is the application layer's :mod:`mqlog.zosrun`.
"""

from __future__ import annotations

from mqlog.zos.utilities.bsdsmap import bsds_dict, bsds_map
from mqlog.zos.utilities.logprint import (SUMMARY_CHOICES, log_print, log_records, log_report, oldest_address,
                                          ur_summary)
from mqlog.zos.utilities.qjst import format_statistics, log_statistics

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
