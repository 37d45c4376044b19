"""A PySpark 4 data source for real logs: ``spark.read.format("mqlog").load(DIR)``.

``DIR`` is a run directory (``mqlog run --out DIR``: ``run.json`` and ``qm/``), of either
platform. The result has one row per log record (:data:`SCHEMA`); :func:`register` makes the
format known to a session.

**Partitions.** One per file that holds a range of the log, so Spark reads them in
parallel: on distributed, each extent (``S0000000.LOG`` …) that holds a range now, in
address order, circular or linear; on z/OS, each active data set in use (``LOGCOPY1.DSnn``)
and each complete archive the BSDS records (``CSQARC1.Annnnnnn``) whose range no active data
set holds. A partition covers ``[start, end)`` of the log (``end`` clipped to the next
partition's start, should ranges overlap). Pages are read through the platform's own space
(``read_page``), so TripleWrite's spare page, z/OS's second copy and archives are used
exactly as restart would use them; ``file`` names the partition's file (copy 1 on z/OS).

**Records that span a boundary** belong to the partition they start in. A partition's reader
goes on past ``end`` to finish its last record and stops at the first record that starts at
or after ``end``. The next partition finds its first record without reading the one before
it: each page header holds the payload offset of the first record that *starts* in the page
(0xFFFF: none does; docs/FORMAT.md §2.3), so the partition walks its pages from ``start`` to
the first page with one and starts a :class:`~mqlog.core.log.reader.LogReader` there. The
bytes before that offset are the tail of a record the previous partition reads to its end.
Both partitions see the same bytes through the same space, so every record is read exactly
once. (The oldest partition's first bytes may continue a record whose start was overwritten
or archived away: that record is not on disk and is not reported.)

**Damage** (option ``mode``):

* ``FAILFAST`` (default): bad bytes raise :class:`~mqlog.core.errors.LogCorruptionError`
  naming the file, the offset in it and the log address.
* ``PERMISSIVE``: the partition yields a row with ``bad = true`` and the error text in
  ``error`` (``file``, ``address`` and ``address_text`` say where, as far as known; the record
  columns are null) and stops; other partitions go on.

The end of the log is not damage. If the log's last write was torn by a crash (or its last
record is incomplete), the log ends before it, as restart says: FAILFAST reports nothing,
PERMISSIVE adds one final ``bad`` row saying how the log ended. A log that ends before the
last partition (good log after it, but a gap or a bad page in between) is damage: an error or
a ``bad`` row, never a silent stop. A bad spot is reported by the partition whose range
holds it, so PERMISSIVE gives one row per damage even when a record of the partition before
runs into it.

**Locking.** A run directory is read under its lock, shared (:func:`mqlog.rundir.read_locked`):
the driver holds it while it plans the partitions, each task while it reads its partition. While
a command writes the directory (``mqlog restart``, ``rcdmqimg``, a ``run`` still going) both
refuse, naming its process. The driver cannot hold the lock from planning to the last task
(Spark gives the source no call at the job's end), so a writer may run in between and change
the log under a plan made before it: the plan records the directory's *generation* (run.json
and every file under ``qm/``, by name, size and modification time) and each task, under the
lock, checks it is unchanged before reading, else refuses ("read it again") rather than read
ranges that no longer hold what the plan says. That is correct for a local directory, and for
one every executor sees on a shared file system whose ``flock`` is honoured across machines
(NFSv4 and Lustre do; on one that ignores it the generation check still catches a writer that
ran between planning and reading, not one running during a task).

**A topology run directory** (``mqlog topology run --out DIR``: ``topology.json`` and a run
directory per queue manager, ``DIR/<QMNAME>/``) reads as every queue manager's log in one
frame: the partitions of each queue manager's run directory, planned and read as above (each
under its own lock and generation, and the topology directory's lock, which ``mqlog topology
restart`` and ``resolve`` hold while they write), and three columns after :data:`SCHEMA`
(:data:`TOPOLOGY_COLUMNS`): ``qmgr``, the queue manager whose log holds the record, ``queue``
(the queue a Put, PutSegment, Get or compensation record names: SYSTEM.CHANNEL.SYNCQ, a
transmission queue, ...) and ``xid`` (a Prepare's: a sender's batch is ``CHL `` + channel +
LUWID, docs/FORMAT.md). A one-queue-manager run directory keeps :data:`SCHEMA` exactly, so
what reads one is unchanged.

Everything here is picklable: Spark ships the data source, its reader and the partitions
(plain data) to its Python workers, which open the run directory themselves.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import stat
from collections.abc import Iterator
from pathlib import Path

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

from mqlog.core.errors import LogCorruptionError, LogFormatError, MqlogError, ParameterError
from mqlog.core.format.pages import NO_FIRST_RECORD, PAGE_HEADER_SIZE, PAGE_SIZE, check_page
from mqlog.core.format.records import NO_ADDRESS, OpaqueRecord, Prepare, Put, PutSegment, code_names

FORMAT_NAME = "mqlog"

#: the rows' columns (a DDL string, as ``DataSource.schema`` returns it)
SCHEMA = ", ".join((
    "platform STRING",        # "distributed" / "zos" (run.json's platform)
    "file STRING",            # the extent / data set / archive the record starts in
    "address BIGINT",         # log address (LSN / RBA) as a number
    "address_text STRING",    # the address as the platform shows it
    "record_type STRING",     # record type name (X'NN' for an unknown platform record)
    "type_code INT",
    "rm STRING",              # resource manager name (X'NN' if unknown)
    "uow BIGINT",             # unit of work id (0: not part of a unit of work)
    "prev BIGINT",            # previous record of the unit of work (null: none)
    "length BIGINT",          # encoded record length, header included
    "payload_length BIGINT",  # Put: the message's length before compression; else null
    "stored_length BIGINT",   # Put / PutSegment: data bytes as stored (compressed); else null
    "codec STRING",           # Put / PutSegment: NONE / RLE / ZSTD; else null
    "stamp BIGINT",           # platform ordering stamp (z/OS LRSN; 0 where none)
    "bad BOOLEAN",            # true: not a record but damage (or, PERMISSIVE, a torn end)
    "error STRING",           # for bad rows: what was wrong and where
))

#: the columns a topology run directory's rows add after SCHEMA's (null on bad rows but qmgr)
TOPOLOGY_COLUMNS = ", ".join((
    "qmgr STRING",            # the queue manager (its run directory's name) whose log holds the record
    "queue STRING",           # Put / PutSegment / Get / Clr: the queue it names; else null
    "xid STRING",             # Prepare: its unit's xid, hex (a channel batch's: "CHL " + channel + LUWID)
))

FAILFAST, PERMISSIVE = "FAILFAST", "PERMISSIVE"
MODES = (FAILFAST, PERMISSIVE)

_LONG_MAX = (1 << 63) - 1


def register(spark) -> None:
    """Make ``spark.read.format("mqlog")`` available on ``spark``."""
    spark.dataSource.register(MqlogDataSource)


class MqlogDataSource(DataSource):
    """``spark.read.format("mqlog").option("mode", "PERMISSIVE").load(DIR)``."""

    @classmethod
    def name(cls) -> str:
        return FORMAT_NAME

    def schema(self) -> str:
        path = self.options.get("path")
        return f"{SCHEMA}, {TOPOLOGY_COLUMNS}" if path and is_topology(str(path)) else SCHEMA

    def reader(self, schema) -> MqlogReader:
        path = self.options.get("path")
        if not path:
            raise MqlogError("the mqlog data source needs a run directory: spark.read.format('mqlog').load(DIR)")
        kind = TopologyReader if is_topology(str(path)) else MqlogReader
        return kind(str(path), parse_mode(self.options.get("mode")))


def is_topology(path: str) -> bool:
    """Whether ``path`` is a topology run directory (its topology.json) rather than a run's."""
    from mqlog.topology import TOPOLOGY_FILE

    return (Path(path) / TOPOLOGY_FILE).is_file()


def parse_mode(value) -> str:
    mode = FAILFAST if value is None else str(value).strip().upper()
    if mode not in MODES:
        raise ParameterError("mode", value, " or ".join(MODES))
    return mode


class LogPartition(InputPartition):
    """``[start, end)`` of the log, held in ``file``; ``last``: the partition with the newest log."""

    def __init__(self, index: int, file: str, start: int, end: int, last: bool):
        super().__init__(index)
        self.file = file
        self.start = start
        self.end = end
        self.last = last
        #: every partition's range (start, end), so a partition can tell whether damage it
        #: runs into past its end is another partition's to report
        self.ranges: tuple = ()
        #: the run directory's generation when the plan was made (:func:`generation`)
        self.generation = ""
        #: a topology's: the queue manager (its run directory, under the topology's) whose log this is
        self.qmgr: str | None = None

    def __repr__(self) -> str:
        return f"LogPartition({self.value}, {self.file!r}, {self.start:#x}..{self.end:#x}, last={self.last})"


class MqlogReader(DataSourceReader):
    def __init__(self, path: str, mode: str = FAILFAST):
        self.path = path
        self.mode = mode

    def partitions(self) -> list[LogPartition]:
        with reading(self.path) as planned:
            run = open_run(self.path)
            try:
                parts = plan_partitions(run)
            finally:
                run.close()
        for part in parts:
            part.generation = planned
        return parts

    def read(self, partition: LogPartition) -> Iterator[tuple]:
        with reading(self.path) as now:
            if partition.generation and now != partition.generation:
                raise MqlogError(f"{self.path}: written by another mqlog command since this read was planned; "
                                 "read it again")
            run = open_run(self.path)
            try:
                yield from read_partition(run, partition, self.mode)
            finally:
                run.close()


class TopologyReader(DataSourceReader):
    """A topology run directory: every queue manager's partitions, each read as
    :class:`MqlogReader` reads a run directory's, under the topology's lock too."""

    def __init__(self, path: str, mode: str = FAILFAST):
        self.path = path
        self.mode = mode

    def qmgrs(self) -> list[str]:
        """The queue managers topology.json names (each a run directory of that name)."""
        from mqlog.topology import TOPOLOGY_FILE
        from mqlog.rundir import read_json

        saved = read_json(Path(self.path) / TOPOLOGY_FILE)
        try:
            return [str(q["name"]) for q in saved["spec"]["qmgr"]]
        except (KeyError, TypeError):
            raise MqlogError(f"{self.path}: {TOPOLOGY_FILE} names no queue managers (spec.qmgr)") from None

    def partitions(self) -> list[LogPartition]:
        from mqlog.rundir import read_locked

        parts = []
        with read_locked(Path(self.path)):
            for name in self.qmgrs():
                own = MqlogReader(str(Path(self.path) / name), self.mode).partitions()
                for part in own:
                    part.qmgr = name
                parts += own
        return parts

    def read(self, partition: LogPartition) -> Iterator[tuple]:
        from mqlog.rundir import read_locked

        with read_locked(Path(self.path)):
            yield from MqlogReader(str(Path(self.path) / partition.qmgr), self.mode).read(partition)


# --- opening a run directory -------------------------------------------------------------------

class OpenRun:
    """A run directory's platform, rebuilt as the CLI does (``run.json`` + ``qm/``)."""

    def __init__(self, directory: Path, platform_name: str, platform, storage):
        self.directory = directory
        self.platform_name = platform_name
        self.platform = platform
        self.space = platform.space
        self.addressing = platform.addressing
        self.storage = storage

    def close(self) -> None:
        self.storage.close()


def generation(directory: Path) -> str:
    """A digest of what any writer of the run directory changes: run.json and every file under
    ``qm/``, by name, size and modification time (ns). Reading changes none of them."""
    from mqlog.rundir import QM_DIR, RUN_FILE

    directory = Path(directory)
    digest = hashlib.sha256()
    for path in [directory / RUN_FILE, *sorted((directory / QM_DIR).rglob("*"))]:
        try:
            st = path.stat()
        except FileNotFoundError:
            continue
        if stat.S_ISREG(st.st_mode):
            digest.update(f"{path.relative_to(directory)}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return digest.hexdigest()


@contextlib.contextmanager
def reading(path: str):
    """Hold the run directory's lock, shared, for the block (refused while a command writes
    it); the block gets the directory's :func:`generation`. A directory that is not a run's
    is told so first, and gets no lock file."""
    from mqlog.rundir import load_run, read_locked

    load_run(Path(path))
    with read_locked(Path(path)):
        yield generation(Path(path))


def open_run(path: str) -> OpenRun:
    """Open the run in ``path``; a directory that is not one is a one-line MqlogError."""
    from mqlog.rundir import open_platform

    directory = Path(path)
    run, _, platform = open_platform(directory)
    storage = platform.space.storage
    try:
        platform.space.load_control()
    except BaseException:
        storage.close()
        raise
    return OpenRun(directory, run.platform, platform, storage)


# --- planning ----------------------------------------------------------------------------------

def log_ranges(run: OpenRun) -> list[tuple[str, int, int]]:
    """``(file, start, end)`` of every file holding a range of the log now, by start."""
    from mqlog.platforms import PLATFORMS, choose

    ranges = choose(run.platform_name).log_ranges  # the platform knows where its log is
    if ranges is None:
        readable = " and ".join(d.shown for d in PLATFORMS.values() if d.log_ranges is not None)
        raise MqlogError(f"{run.directory}: the mqlog data source reads {readable} logs, "
                         f"not {run.platform_name!r} ones")
    return sorted(ranges(run.space), key=lambda r: r[1])


def plan_partitions(run: OpenRun) -> list[LogPartition]:
    found = log_ranges(run)
    parts = []
    for i, (name, start, end) in enumerate(found):
        if i + 1 < len(found):
            end = min(end, found[i + 1][1])
        parts.append(LogPartition(i, name, start, end, i == len(found) - 1))
    spans = tuple((p.start, p.end) for p in parts)
    for p in parts:
        p.ranges = spans
    return parts


# --- reading one partition ---------------------------------------------------------------------

def _long(value: int | None) -> int | None:
    return value if value is not None and 0 <= value <= _LONG_MAX else None


@functools.cache
def _code_names() -> tuple:
    """The names of record type and resource manager codes: the core's and every platform's
    (the platforms' codes are disjoint, so a name is the same whichever log shows it)."""
    from mqlog.platforms import record_types

    return code_names(record_types())


def _name(names, code: int) -> str:
    name = names.get(code)
    return f"X'{code:02X}'" if name is None else name


def record_row(platform: str, file: str, address: int, record, fmt) -> tuple:
    """One row of :data:`SCHEMA` for ``record`` at ``address``."""
    if isinstance(record, OpaqueRecord):
        code, rm = int(record.type), int(record.rm)
    else:
        code, rm = int(record.TYPE), int(record.RM)
    payload = stored = codec = None
    if isinstance(record, (Put, PutSegment)):
        stored, codec = len(record.data), record.codec.name
        if isinstance(record, Put):
            payload = record.message_length
    prev = None if record.prev == NO_ADDRESS else _long(record.prev)
    type_names, rm_names = _code_names()
    return (platform, file, _long(address), fmt(address), _name(type_names, code), code,
            _name(rm_names, rm), _long(record.uow), prev, len(record.to_bytes()), payload, stored, codec,
            _long(record.stamp), False, None)


def topology_columns(qmgr: str, record) -> tuple:
    """:data:`TOPOLOGY_COLUMNS` of ``record`` in ``qmgr``'s log."""
    xid = record.xid if isinstance(record, Prepare) else None
    return qmgr, getattr(record, "queue", None) or None, xid.hex().upper() if xid else None


def bad_row(platform: str, file: str | None, address: int | None, address_text: str | None, error: str) -> tuple:
    return (platform, file, _long(address), address_text, None, None, None, None, None, None, None, None, None,
            None, True, error)


def _first_record(space, start: int, end: int) -> tuple[str, int]:
    """Where to start reading ``[start, end)``: ``("record", address)`` of the first record
    that starts in it, ``("bad", page)`` for the first page that is not good before one is
    found, or ``("none", end)`` if no record starts in the range."""
    page = start - start % PAGE_SIZE
    while page < end:
        raw, _, _ = space.read_page(page)
        header, problem = check_page(raw, page)
        if problem is not None:
            return "bad", page
        first = header.first_record
        if first != NO_FIRST_RECORD and first < header.used:
            address = page + PAGE_HEADER_SIZE + first
            if address >= start:
                return "record", address
        page += PAGE_SIZE
    return "none", end


def _owner(ranges, address: int) -> int | None:
    for i, (start, end) in enumerate(ranges):
        if start <= address < end:
            return i
    return None


def read_partition(run: OpenRun, part: LogPartition, mode: str) -> Iterator[tuple]:
    """The rows of one partition (see the module docstring for what ends it)."""
    from mqlog.core.log.reader import LogReader

    fmt = run.addressing.format
    platform = run.platform_name
    permissive = mode == PERMISSIVE
    qmgr = part.qmgr  # a topology's partition: each row says whose log, and the channel columns

    def bad(*where) -> tuple:
        row = bad_row(platform, *where)
        return row if qmgr is None else row + (qmgr, None, None)

    def others(address: int | None) -> bool:
        """Whether damage at ``address`` (past this partition's end) is another partition's to report."""
        if address is None or address < part.end or part.last:
            return False
        owner = _owner(part.ranges, address)
        return owner is not None and owner != part.value

    def failed(exc: LogFormatError) -> Iterator[tuple]:
        try:
            address = run.addressing.parse(exc.address) if exc.address else None
        except (MqlogError, ValueError):
            address = None
        if others(address):
            return
        if not permissive:
            raise LogCorruptionError(f"{exc.reason} (reading {run.directory}, partition {part.file}; "
                                     f"option mode=PERMISSIVE reports it as a bad row)",
                                     source=exc.source, offset=exc.offset, address=exc.address) from None
        yield bad(exc.source or part.file, address, exc.address, str(exc))

    try:
        kind, at = _first_record(run.space, part.start, part.end)
    except LogFormatError as exc:  # (a file the control data lists is missing, say)
        yield from failed(exc)
        return
    if kind == "none":
        return
    # A bad page before the first record: a reader started on it (at its first payload byte,
    # which is never read as a record because the page fails its check) classifies it the
    # way it would in the middle of a walk: the end, a torn end, or damage.
    reader = LogReader(run.space, at if kind == "record" else at + PAGE_HEADER_SIZE, format_address=fmt,
                       record_types=run.platform.record_types)
    try:
        for address, record in reader:
            if address >= part.end:
                return
            row = record_row(platform, part.file, address, record, fmt)
            yield row if qmgr is None else row + topology_columns(qmgr, record)
    except LogFormatError as exc:
        yield from failed(exc)
        return
    end = reader.end
    stop = end.page_address if end.page_address is not None else end.address
    if others(stop):
        return  # the partition after this one holds the bad page and reports it
    where = f"{end.source}, offset {end.offset}, log address {fmt(stop)}"
    if part.last or (stop >= part.end and end.reason != "incomplete"):
        # The end of the log (or of the log on disk before a gap no partition covers).
        if end.reason != "end" and permissive:
            what = {"torn": "the last write is torn", "incomplete": "the last record is incomplete"}.get(
                end.reason, end.reason)
            yield bad(end.source or part.file, stop, fmt(stop),
                          f"{where}: end of log: {what} ({end.problem}); the log ends at {fmt(end.address)}")
        return
    # The log stops inside a partition that is not the last (or its last record runs into
    # log no file holds): log after it is on disk, so this is damage (or a missing extent),
    # not the end of the log.
    reason = (f"the log stops here ({end.reason}: {end.problem}) but {part.file} runs to "
              f"{fmt(part.end)} and later files hold more log: records are missing")
    yield from failed(LogCorruptionError(reason, source=end.source or part.file, offset=end.offset,
                                         address=fmt(stop)))
