"""The z/OS log's data sets as the BSDS inventories them: active data sets and archives, and
their names (split from :mod:`mqlog.zos.space` so that its parts can share them).
"""

from __future__ import annotations

import attrs

from mqlog.core.format.records import NO_ADDRESS


def data_set_name(copy: int, number: int) -> str:
    return f"LOGCOPY{copy}.DS{number:02d}"


def archive_name(prefix: str, seq: int, kind: str = "A") -> str:
    return f"{prefix}.{kind}{seq:07d}"


@attrs.define
class ActiveDataSet:
    number: int  # 1-based, as in DS01
    start: int = NO_ADDRESS  # first RBA it holds now (NO_ADDRESS: never used)
    full: bool = False  # filled and switched away from
    archive: int = 0  # archive sequence number once offloaded (0: not yet)


@attrs.define
class ArchiveEntry:
    seq: int
    start: int
    end: int  # last RBA (inclusive), ends in FFF
    files: tuple  # archive data set names, copy 1 first
    complete: bool = False  # the copy is on disk (CSQJ003I said)
