"""mqldt, IBM's MQ Log Disk Tester, in mqlog: its report formats (read and written) and its
write pattern replayed on a device profile in virtual time.

mqldt (https://github.com/ibm-messaging/mqldt, public, Apache-2.0) is the tool IBM recommends
for asking what a file system will do as an MQ log volume. This module owns everything mqlog
knows about it: reading its CSV (``--csvFile``) and its console report (which users paste
into tickets) into :class:`MqldtRow` s, and :func:`replay`, which runs its write pattern
against a :class:`~mqlog.core.disk.devices.DeviceProfile` on the core's SimPy
:class:`~mqlog.core.disk.devices.Device` and reports what mqldt would have reported, in the
same layout and with the same CSV columns. Fitting a profile to rows is
:mod:`mqlog.core.disk.devicefit`.

What this relies on, from mqldt's sources (``src/`` of the repository, the newest stored
version of each file we could read: ``mqldt.c`` at commit ee4f4c7, ``opts.c`` at cb2d563, the
``fileio.c`` and ``util.h`` that define the several-queue-manager statistics; cited by file,
function and the statement itself rather than by line number, since the versions differ in
their lines):

- **The write pattern** (``src/fileio.c``, ``prepareFiles``, ``writeToFile``): each simulated
  queue manager opens ``--numFiles`` files of ``--fileSize`` bytes with
  ``O_CREAT|O_RDWR|O_DSYNC|O_DIRECT`` and fills them before the test; the test then
  ``writev``\\ s one ``--bsize`` block at a time, synchronously, at the next offset of the
  current file, moving to the next file (round robin) when the next block would pass
  ``--fileSize`` (``if (fs->files[fs->currentFile][1] + writeBlockSize > options.fileSize)``).
  One write is outstanding per queue manager: the loop in ``src/mqldt.c`` ``runTest`` is
  ``do { writeToFile(...); files->stats.intervalTimer += tCheck(&t1); ... } while (...)``.
- **What is timed** (``src/util.h``, ``tCheck``): the time between one check and the next,
  i.e. each write's elapsed time, in whole nanoseconds from ``CLOCK_MONOTONIC``; min, max
  (with the write's number, ``max_time_instance``) and a running mean kept in integer
  arithmetic: ``avg_time = ((avg_time * (check_count - 1)) + duration) / check_count``.
- **When a test ends** (``runTest``): the loop stops at the first write that completes more
  than ``--duration`` seconds after the test started (``tv_sec`` difference equal to the
  duration with a later ``tv_nsec``, or greater).
- **Bytes per second** (``src/fileio.c``, ``updateFileStats``): bytes are summed per interval;
  an interval closes at the first write after the summed write times reach one second
  (``intervalTimer >= ONE_SEC_IN_NS``) and is *not* rescaled to one second; the last,
  partial interval is rescaled when it is at least half a second
  (``persec_bytes * 1 / ((float)intervalTimer / ONE_SEC_IN_NS)``, single-precision) and
  dropped when shorter. Max and min are over intervals; the average is a running integer
  mean over them.
- **Fastest and slowest write as a rate** (``src/util.c``, ``csvTimerStats``):
  ``(long)(blockSize / ((float)max_time / 1000000000))`` (and with ``min_time``), in
  single precision, truncated.
- **Several queue managers** (``--qm N``, 1 to 10, ``src/opts.c``; only one block size then:
  "MQLDT currently only supports a single block size with more than 1 QM"): N threads, each
  with its own files, released together (``pthread_cond_broadcast``) and each timing itself;
  ``processStats`` (``src/mqldt.c``) adds the writes and bytes, takes the max and min of the
  per-queue-manager interval rates, *adds* their average rates and takes the integer mean of
  their average latencies.
- **The CSV** (``openCSVFile``, ``CSVStats`` in ``src/mqldt.c``; the titles in
  ``src/fileio.c`` and ``src/util.c``): with one queue manager the file is opened ``"w"``,
  with several ``"a"`` after a line ``Running MQLDT over N Queue Managers``; a header
  ``Blocksize,`` + the file statistics' titles + ``,`` + the timer's titles, then one row
  per block size of ``%i`` / ``%li`` numbers. With several queue managers three titles
  differ (``... by a single qm (over 1 sec interval)``, ``... by all queue managers``).
- **The console report** (``printOptions`` in ``src/opts.c``, ``printFileStats``,
  ``printQMFileStats`` in ``src/fileio.c``, ``printTimerStats`` in ``src/util.c``): labels
  padded to a column, ``" : "``, numbers ``%'15li`` (grouped by the locale; the README's
  sample shows commas), the latencies' write numbers as ``(#n)``. The README's older sample
  (the one the issue quotes: 128 KiB writes, 306,754,931 bytes/s, 415,704 ns) comes from an
  earlier mqldt whose labels lacked ``(over 1 sec interval)`` and whose CSV had no
  ``Total writes to files`` column; both are read too, since they are matched by label.

What could not be found, and what is done instead: mqldt's ``--delay`` (in its README's
option list, not in the ``src/opts.c`` we could read) is neither read nor simulated. The
README's description table names an ``IOPS`` figure that no source we found prints; it is
not written, and a column of that or any other unknown name in a CSV is ignored.

The model's side of it: each queue manager is a SimPy process that calls
``Device.write(bsize)`` in a loop, so a write costs what the profile says (latency, then
a transfer that shares the device's channel with the other queue managers' transfers, after
waiting for one of ``queue_depth`` slots). File positions and round-robin switching cost
nothing in the device model (it has no seek time or per-file cost), so ``--numFiles`` and
``--fileSize`` only bound ``--bsize`` and appear in the report; no file is created or
written, and the files' filling before the test is not simulated (mqldt does not time it).
Virtual time is deterministic and has no jitter: with one queue manager every write of a
size takes the same time, so min, average and max come out equal (up to the nanosecond the
clock rounds to) -- that is the model, not a measurement, and no noise is added.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Generator, Iterable
from typing import Any

import attrs
import simpy

from mqlog.core.disk.devices import Device, DeviceProfile, get_profile
from mqlog.core.errors import MeasurementFileError, ParameterError

__all__ = [
    "MqldtOptions", "MqldtRow", "parse_bsizes", "replay", "csv_text", "console_text", "read_mqldt",
    "parse_mqldt", "MAX_QM", "CSV_HEADER", "QM_CSV_HEADER",
]

# -- mqldt's labels, as its sources spell them (they are the CSV's column titles too) --------

BLOCKSIZE = "Blocksize"
TOTAL_WRITES = "Total writes to files"
TOTAL_BYTES = "Total bytes written to files"
INTERVAL_MAX = "Max bytes/sec written to files (over 1 sec interval)"
INTERVAL_MIN = "Min bytes/sec written to files (over 1 sec interval)"
AVG_BYTES = "Avg bytes/sec written to files"
QM_INTERVAL_MAX = "Max bytes/sec written to files by a single qm (over 1 sec interval)"
QM_INTERVAL_MIN = "Min bytes/sec written to files by a single qm (over 1 sec interval)"
QM_AVG_BYTES = "Avg bytes/sec written to files by all queue managers"
MAX_LATENCY = "Max latency of write (ns)"
MIN_LATENCY = "Min latency of write (ns)"
AVG_LATENCY = "Avg latency of write (ns)"
SLOWEST = "Min bytes/sec (slowest write)"
FASTEST = "Max bytes/sec (fastest write)"

#: the file statistics' titles, one queue manager and several (``csvFileStatsTitles``,
#: ``csvQMFileStatsTitles``), then the timer's (``csvTimerStatsTitles``)
FILE_TITLES = (TOTAL_WRITES, TOTAL_BYTES, INTERVAL_MAX, INTERVAL_MIN, AVG_BYTES)
QM_FILE_TITLES = (TOTAL_WRITES, TOTAL_BYTES, QM_INTERVAL_MAX, QM_INTERVAL_MIN, QM_AVG_BYTES)
TIMER_TITLES = (MAX_LATENCY, MIN_LATENCY, AVG_LATENCY, SLOWEST, FASTEST)
CSV_HEADER = ",".join((BLOCKSIZE, *FILE_TITLES, *TIMER_TITLES))
QM_CSV_HEADER = ",".join((BLOCKSIZE, *QM_FILE_TITLES, *TIMER_TITLES))

#: label -> MqldtRow field, for every label a version of mqldt wrote (the older README's
#: "Max bytes/sec written to files" had no "(over 1 sec interval)")
FIELDS = {
    BLOCKSIZE: "blocksize", TOTAL_WRITES: "writes", TOTAL_BYTES: "bytes_written",
    INTERVAL_MAX: "max_bytes_sec", QM_INTERVAL_MAX: "max_bytes_sec", "Max bytes/sec written to files": "max_bytes_sec",
    INTERVAL_MIN: "min_bytes_sec", QM_INTERVAL_MIN: "min_bytes_sec", "Min bytes/sec written to files": "min_bytes_sec",
    AVG_BYTES: "avg_bytes_sec", QM_AVG_BYTES: "avg_bytes_sec",
    MAX_LATENCY: "max_latency_ns", MIN_LATENCY: "min_latency_ns", AVG_LATENCY: "avg_latency_ns",
    SLOWEST: "slowest_bytes_sec", FASTEST: "fastest_bytes_sec",
}
#: what a row must have for a profile to be fitted to it (by label; for several queue
#: managers the rate's label is QM_AVG_BYTES, the same field)
REQUIRED = (AVG_LATENCY, AVG_BYTES)

ONE_SEC_NS = 1_000_000_000
HALF_SEC_NS = 500_000_000
LONG_MAX = 2**63 - 1
#: mqldt's limits (src/opts.c) and defaults
MAX_QM = 10
MAX_NUM_FILES = 10_000
INT_MAX = 2**31 - 1
#: virtual seconds a test may last: the simulation's cost grows with it
MAX_DURATION_S = 3600
#: the writes one ``replay`` may simulate; beyond it the user is asked for a shorter --duration
MAX_WRITES = 3_000_000


# --------------------------------------------------------------------------- options


def parse_bsizes(text: str) -> tuple[int, ...]:
    """``--bsize``: a comma-separated list of ``<n>K`` (mqldt takes only the K form), in bytes."""
    sizes = []
    for item in str(text).split(","):
        word = item.strip()
        if not re.fullmatch(r"[0-9]+[kK]", word) or int(word[:-1]) < 1:
            raise ParameterError("--bsize", text, "a comma-separated list of block sizes as <n>K, n >= 1, as "
                                 "mqldt takes them (e.g. 4K,16K,64K)")
        sizes.append(int(word[:-1]) * 1024)
    return tuple(sizes)


def _whole(name: str, lo: int, hi: int, what: str = ""):
    def validate(instance: Any, attribute: attrs.Attribute, value: Any) -> None:
        if not (isinstance(value, int) and not isinstance(value, bool) and lo <= value <= hi):
            raise ParameterError(name, value, f"a whole number from {lo} to {hi}{what}")
    return validate


@attrs.frozen
class MqldtOptions:
    """mqldt's options (``src/opts.c``'s defaults), as the report echoes them."""

    bsizes: tuple[int, ...] = attrs.field(converter=tuple)
    num_files: int = attrs.field(default=8, validator=_whole("--numFiles", 1, MAX_NUM_FILES))
    file_size: int = attrs.field(default=1_638_400, validator=_whole("--fileSize", 1, INT_MAX, " bytes"))
    duration: int = attrs.field(default=10, validator=_whole("--duration", 1, MAX_DURATION_S, " virtual seconds"))
    qm: int = attrs.field(default=1, validator=_whole("--qm", 1, MAX_QM, " (mqldt's limit)"))
    directory: str = "."
    file_prefix: str = "mqldt_testfile"

    @bsizes.validator
    def _check_bsizes(self, attribute: attrs.Attribute, value: tuple[int, ...]) -> None:
        if not value or any(not isinstance(b, int) or b < 1024 or b % 1024 for b in value):
            raise ParameterError("--bsize", value, "block sizes as <n>K (whole KiB), at least one")

    def __attrs_post_init__(self) -> None:
        # After the fields' own validators, so a bad --fileSize is named before this.
        too_big = [b for b in self.bsizes if b > self.file_size]
        if too_big:
            raise ParameterError("--bsize", f"{too_big[0] // 1024}K",
                                 f"block sizes no larger than --fileSize ({self.file_size} bytes)")
        if self.qm > 1 and len(self.bsizes) > 1:
            raise ParameterError("--bsize", ",".join(f"{b // 1024}K" for b in self.bsizes),
                                 "a single block size with --qm above 1, as mqldt (\"MQLDT currently only supports "
                                 "a single block size with more than 1 QM\"); run once per block size: --csvFile "
                                 "appends with --qm above 1")

    @property
    def bsize_text(self) -> str:
        return ",".join(f"{b // 1024}K" for b in self.bsizes)


# --------------------------------------------------------------------------- one result


@attrs.frozen
class MqldtRow:
    """One block size's result: what mqldt prints for it (and writes as a CSV row).

    ``qm`` is how many queue managers wrote at once (the figures are then mqldt's combined
    ones: writes, bytes and the average rate summed, the interval rates the extremes of any
    one queue manager, the average latency the mean of theirs). Figures an older mqldt did
    not write are None. ``line`` is where it was read from (1-based), or None.
    """

    blocksize: int
    qm: int
    avg_latency_ns: int
    avg_bytes_sec: int
    writes: int | None = None
    bytes_written: int | None = None
    max_bytes_sec: int | None = None
    min_bytes_sec: int | None = None
    max_latency_ns: int | None = None
    min_latency_ns: int | None = None
    slowest_bytes_sec: int | None = None
    fastest_bytes_sec: int | None = None
    # which write (its number, mqldt's "(#N)") took the longest and the shortest: a count
    max_latency_write: int | None = None
    min_latency_write: int | None = None
    line: int | None = None


def _f32(x: float) -> float:
    """``x`` rounded to C's ``float``: mqldt computes its rates in single precision."""
    return struct.unpack("f", struct.pack("f", x))[0]


def _rate_of(nbytes: int, ns: int) -> int:
    """``(long)(nbytes / ((float)ns / 1000000000))``, as ``csvTimerStats`` computes it."""
    if ns <= 0:
        return 0  # a write that took no measurable time: mqldt would divide by zero
    return int(_f32(_f32(nbytes) / _f32(_f32(ns) / _f32(ONE_SEC_NS))))


# --------------------------------------------------------------------------- the replay


class _QmStats:
    """One simulated queue manager's ``fileStore.stats`` and ``timer``, kept as mqldt keeps them."""

    __slots__ = ("writes", "persec", "interval", "imax", "imin", "avg_rate", "updates",
                 "count", "tmin", "tmax", "tavg", "tmin_at", "tmax_at")

    def __init__(self) -> None:
        self.writes = self.persec = self.interval = self.imax = self.avg_rate = self.updates = 0
        self.imin = LONG_MAX
        self.count = self.tmax = self.tavg = self.tmin_at = self.tmax_at = 0
        self.tmin = LONG_MAX

    def check(self, ns: int, nbytes: int) -> None:
        """One write done, ``ns`` after the previous check (``tCheck`` and ``writeToFile``)."""
        self.writes += 1
        self.persec += nbytes
        self.count += 1
        if ns > self.tmax:
            self.tmax, self.tmax_at = ns, self.count
        if ns < self.tmin:
            self.tmin, self.tmin_at = ns, self.count
        self.tavg = (self.tavg * (self.count - 1) + ns) // self.count
        self.interval += ns
        if self.interval >= ONE_SEC_NS:
            self.close_interval()

    def close_interval(self) -> None:
        """``updateFileStats``: an interval's bytes become a rate (the last one rescaled, or dropped)."""
        if self.interval < HALF_SEC_NS:
            self.persec = self.interval = 0
            return
        if self.interval < ONE_SEC_NS:
            self.persec = int(_f32(_f32(self.persec) / _f32(_f32(self.interval) / _f32(ONE_SEC_NS))))
        self.imax = max(self.imax, self.persec)
        self.imin = min(self.imin, self.persec)
        self.avg_rate = (self.avg_rate * self.updates + self.persec) // (self.updates + 1)
        self.updates += 1
        self.persec = self.interval = 0


def _ns(us: float) -> int:
    """Virtual time (µs) as the whole nanoseconds ``CLOCK_MONOTONIC`` gives."""
    return round(us * 1000.0)


def _qm(env: Any, device: Device, bsize: int, duration_ns: int, stats: _QmStats) -> Generator[Any, Any, None]:
    """One queue manager's test of one block size: synchronous writes until the duration is past."""
    start = prev = _ns(env.now)
    while True:
        yield from device.write(bsize)
        now = _ns(env.now)
        stats.check(now - prev, bsize)
        prev = now
        if now - start > duration_ns:
            break
    stats.close_interval()


def _row(bsize: int, parts: list[_QmStats]) -> MqldtRow:
    """One block size's figures from its queue managers' (``processStats`` for several)."""
    tmax = max(parts, key=lambda s: s.tmax)  # the first with the largest, as its strict '>' keeps
    tmin = min(parts, key=lambda s: s.tmin)
    return MqldtRow(
        blocksize=bsize, qm=len(parts),
        writes=sum(s.writes for s in parts), bytes_written=sum(s.writes for s in parts) * bsize,
        max_bytes_sec=max(s.imax for s in parts), min_bytes_sec=min(s.imin for s in parts),
        avg_bytes_sec=sum(s.avg_rate for s in parts),
        max_latency_ns=tmax.tmax, max_latency_write=tmax.tmax_at,
        min_latency_ns=tmin.tmin, min_latency_write=tmin.tmin_at,
        avg_latency_ns=sum(s.tavg for s in parts) // len(parts),
        slowest_bytes_sec=_rate_of(bsize, tmax.tmax), fastest_bytes_sec=_rate_of(bsize, tmin.tmin))


def replay(profile: DeviceProfile | str, options: MqldtOptions) -> list[MqldtRow]:
    """mqldt's test of ``options`` on ``profile`` in virtual time: one row per block size.

    The block sizes run one after the other (as mqldt's loop over ``--bsize``); with
    ``options.qm`` above 1 (one block size) that many queue managers write at once, each
    with its own timer and statistics, combined as mqldt combines them. Deterministic.
    Refuses (naming ``--duration``) a test that would simulate more than
    :data:`MAX_WRITES` writes.
    """
    profile = get_profile(profile)
    alone = sum(options.duration * 1e6 / max(profile.write_time_us(b), 1e-3) for b in options.bsizes) * options.qm
    if alone > MAX_WRITES:
        raise ParameterError("--duration", options.duration,
                             f"at most about {MAX_WRITES:,} simulated writes: on '{profile.name}' this test would "
                             f"make about {alone:,.0f}; give fewer seconds, fewer or larger block sizes")
    env = simpy.Environment()
    device = Device(env, profile)
    rows: list[MqldtRow] = []

    def tests() -> Generator[Any, Any, None]:
        for bsize in options.bsizes:
            parts = [_QmStats() for _ in range(options.qm)]
            runs = [env.process(_qm(env, device, bsize, options.duration * ONE_SEC_NS, s)) for s in parts]
            yield env.all_of(runs)
            rows.append(_row(bsize, parts))

    env.process(tests())
    env.run()
    return rows


# --------------------------------------------------------------------------- writing reports


def _csv_values(row: MqldtRow) -> tuple[Any, ...]:
    return (row.blocksize, row.writes, row.bytes_written, row.max_bytes_sec, row.min_bytes_sec, row.avg_bytes_sec,
            row.max_latency_ns, row.min_latency_ns, row.avg_latency_ns, row.slowest_bytes_sec, row.fastest_bytes_sec)


def csv_text(rows: Iterable[MqldtRow], qm: int) -> str:
    """What mqldt writes to ``--csvFile`` for these rows: the whole file with one queue
    manager, the section it appends with several."""
    lines = [] if qm == 1 else [f"Running MQLDT over {qm} Queue Managers"]
    lines.append(CSV_HEADER if qm == 1 else QM_CSV_HEADER)
    lines += [",".join(str(v) for v in _csv_values(r)) for r in rows]
    return "\n".join(lines) + "\n"


def console_text(rows: Iterable[MqldtRow], options: MqldtOptions) -> str:
    """mqldt's console report (stdout, with its progress line from stderr) for these rows."""
    out = ["", "Options (specified or defaulted to)", "=" * 85]
    echoed = [("Write blocksize             (--bsize)", options.bsize_text),
              ("Directory to write to       (--dir)", options.directory),
              ("Test file prefix            (--filePrefix)", options.file_prefix),
              ("Number of files to write to (--numFiles)", options.num_files),
              ("Size of test files          (--fileSize)", options.file_size),
              ("Test duration               (--duration)", options.duration)]
    if options.qm > 1:
        echoed.append(("Queue Managers              (--qm)", options.qm))
    out += [f"{label:<51}: {value}" for label, value in echoed]
    out.append("")
    if options.qm > 1:
        out.append(f"Running simulation of {options.qm} Queue Managers")
    for r in rows:
        out += [f"Executing test for write blocksize {r.blocksize} ({r.blocksize // 1024}k). Seconds elapsed -> "
                f"{options.duration}/{options.duration}", ""]
        width = 52 if options.qm == 1 else 67
        titles = FILE_TITLES if options.qm == 1 else QM_FILE_TITLES
        figures = (r.writes, r.bytes_written, r.max_bytes_sec, r.min_bytes_sec, r.avg_bytes_sec)
        out += [f"{label:<{width}} : {value:>15,}" for label, value in zip(titles, figures)]
        out += ["",
                f"{MAX_LATENCY:<30} : {r.max_latency_ns:>15,} (#{r.max_latency_write:,})",
                f"{SLOWEST:<30} : {r.slowest_bytes_sec:>15,}",
                f"{MIN_LATENCY:<30} : {r.min_latency_ns:>15,} (#{r.min_latency_write:,})",
                f"{FASTEST:<30} : {r.fastest_bytes_sec:>15,}",
                f"{AVG_LATENCY:<30} : {r.avg_latency_ns:>15,}", ""]
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------- reading reports


def read_mqldt(path: str) -> list[MqldtRow]:
    """The rows of an mqldt CSV (``--csvFile``, any number of appended sections) or console
    report (any number of runs pasted one after another) in file ``path``.

    Raises :class:`~mqlog.core.errors.MeasurementFileError` naming the file and the line for an
    unreadable, malformed or foreign file.
    """
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as exc:
        raise MeasurementFileError(f"cannot read mqldt output: {exc.strerror or exc}", source=str(path)) from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[:exc.start].count(b"\n") + 1
        raise MeasurementFileError("not mqldt output: not UTF-8 text", source=str(path), line=line) from None
    return parse_mqldt(text, str(path))


def parse_mqldt(text: str, source: str) -> list[MqldtRow]:
    """:func:`read_mqldt` on text already read; ``source`` names it in errors."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    first = next((ln.strip() for ln in lines if ln.strip()), None)
    if first is None:
        raise MeasurementFileError("empty: no mqldt output in it", source=source)
    if first.startswith(BLOCKSIZE + ",") or _QM_CSV_LINE.fullmatch(first):
        rows = _parse_csv(lines, source)
    else:
        rows = _Console(source).parse(lines)
    if not rows:
        raise MeasurementFileError("no mqldt results in it (expected 'Executing test for write blocksize ...' "
                                   "and its figures, or a CSV header 'Blocksize,...' and rows)", source=source)
    return rows


_QM_CSV_LINE = re.compile(r"Running MQLDT over (\d+) Queue Managers")


def _short(text: str) -> str:
    return repr(text if len(text) <= 60 else text[:57] + "...")


def _make_row(fields: dict[str, int], qm: int, line: int, source: str, where: str) -> MqldtRow:
    """A row from its figures by :class:`MqldtRow` field; ``where`` says what they were read
    from, for errors."""
    for label in REQUIRED:
        if FIELDS[label] not in fields:
            raise MeasurementFileError(f"{where} has no {label!r}: mqlog needs it to fit a profile",
                                       source=source, line=line)
    if fields["blocksize"] < 1:
        raise MeasurementFileError(f"{where}: block size {fields['blocksize']} is not a size", source=source,
                                   line=line)
    if fields["avg_latency_ns"] < 1:
        raise MeasurementFileError(f"{where}: an average write latency of {fields['avg_latency_ns']} ns is no "
                                   "measurement", source=source, line=line)
    if fields["avg_bytes_sec"] < 1:
        raise MeasurementFileError(f"{where}: an average rate of {fields['avg_bytes_sec']} bytes/s is no "
                                   "measurement", source=source, line=line)
    if "writes" not in fields and "bytes_written" in fields:
        fields = {**fields, "writes": fields["bytes_written"] // fields["blocksize"]}
    return MqldtRow(qm=qm, line=line, **fields)


def _parse_csv(lines: list[str], source: str) -> list[MqldtRow]:
    rows: list[MqldtRow] = []
    header: list[str | None] | None = None
    header_line = 0
    qm_next: int | None = None
    for number, raw in enumerate(lines, 1):
        line = raw.strip()
        if not line:
            continue
        running = _QM_CSV_LINE.fullmatch(line)
        if running:
            qm_next = int(running.group(1))
            if qm_next < 1:
                raise MeasurementFileError(f"{qm_next} queue managers", source=source, line=number)
            header = None
            continue
        cells = [c.strip() for c in line.split(",")]
        if cells[0] == BLOCKSIZE:
            labels = set(cells)
            qm_labels = labels & {QM_INTERVAL_MAX, QM_INTERVAL_MIN, QM_AVG_BYTES}
            if qm_labels and qm_next is None:
                raise MeasurementFileError("a header of several queue managers' figures without the line "
                                           "'Running MQLDT over N Queue Managers' before it", source=source, line=number)
            for label in (AVG_LATENCY, AVG_BYTES):
                if label not in labels and not (label == AVG_BYTES and QM_AVG_BYTES in labels):
                    raise MeasurementFileError(f"the CSV header has no column {label!r}", source=source, line=number)
            # Columns of names mqldt never wrote are left alone (a newer mqldt may add some).
            header = [c if c in FIELDS else None for c in cells]
            header_line = number
            qm = qm_next or 1
            qm_next = None
            continue
        if header is None:
            raise MeasurementFileError(f"not mqldt CSV output: {_short(line)} (expected a header 'Blocksize,...' "
                                       "before the figures)", source=source, line=number)
        if len(cells) != len(header) or not all(c.isdigit() for c in cells):
            raise MeasurementFileError(f"expected {len(header)} comma-separated whole numbers under the header on "
                                       f"line {header_line}, got {_short(line)}", source=source, line=number)
        values = {FIELDS[label]: int(c) for label, c in zip(header, cells) if label is not None}
        rows.append(_make_row(values, qm, number, source, "the row"))
    return rows


_EXECUTING = re.compile(r"Executing test for write blocksize (\d+)")
_OPTION = re.compile(r"(.*?)\((--[A-Za-z]+)\)\s*:\s*(.*)")
_FIGURE = re.compile(r"(?P<label>[A-Za-z][^:]*?)\s*:\s*(?P<value>[0-9][0-9,.'\u00a0\u202f ]*?)"
                     r"\s*(?:\(#(?P<at>[0-9][0-9,.'\u00a0\u202f ]*)\))?")
_RUNNING = re.compile(r"Running simulation of (\d+) Queue Managers")
#: lines of mqldt's console output that carry no figure (and mqlog mqldt's own first line)
_CHATTER = re.compile(r"=+|Options \(specified or defaulted to\)|Creating files\.\.\..*|[0-9]+/[0-9]+|Thread ended"
                      r"|[0-9]+ backgound threads started|[0-9]+ background threads started|mqlog mqldt: .*"
                      r"|.*\bmqldt\b.*--.*")


def _number(text: str) -> int:
    """A figure printed with ``%'li``: digits grouped by the locale's separator."""
    return int(re.sub(r"[,.'\u00a0\u202f ]", "", text))


class _Console:
    """The console report, line by line: runs (an options block), block sizes (an
    'Executing test' line) and their figures by label."""

    def __init__(self, source: str):
        self.source = source
        self.rows: list[MqldtRow] = []
        self.qm = 1
        self.block: dict[str, int] | None = None
        self.block_line = 0

    def finish(self) -> None:
        if self.block is not None:
            self.rows.append(_make_row(self.block, self.qm, self.block_line, self.source,
                                       f"the result for blocksize {self.block['blocksize']}"))
        self.block = None

    def parse(self, lines: list[str]) -> list[MqldtRow]:
        for number, raw in enumerate(lines, 1):
            # The progress counter backspaces over itself: keep what a terminal would show last.
            line = raw.split("\b")[0].strip() if "\b" in raw else raw.strip()
            if not line:
                continue
            executing = _EXECUTING.match(line)
            if executing:
                self.finish()
                self.block, self.block_line = {"blocksize": int(executing.group(1))}, number
                continue
            if line.startswith("Options (specified or defaulted to)"):
                self.finish()
                self.qm = 1  # a new run: one queue manager unless its options say otherwise
                continue
            option = _OPTION.fullmatch(line)
            if option:
                if option.group(2) == "--qm":
                    self.qm = self._whole(option.group(3), number, "--qm")
                continue
            running = _RUNNING.fullmatch(line)
            if running:
                self.qm = int(running.group(1))
                continue
            figure = _FIGURE.fullmatch(line)
            if figure and figure.group("label") in FIELDS:
                self.figure(figure.group("label"), figure.group("value"), figure.group("at"), number)
                continue
            if _CHATTER.fullmatch(line):
                continue
            raise MeasurementFileError(f"not mqldt output: {_short(line)}", source=self.source, line=number)
        self.finish()
        return self.rows

    def _whole(self, text: str, number: int, what: str) -> int:
        try:
            return _number(text)
        except ValueError:
            raise MeasurementFileError(f"{what}: {_short(text)} is not a whole number", source=self.source,
                                       line=number) from None

    def figure(self, label: str, value: str, at: str | None, number: int) -> None:
        if self.block is None:
            raise MeasurementFileError(f"{label!r} before any 'Executing test for write blocksize' line: which "
                                       "block size is it for?", source=self.source, line=number)
        field = FIELDS[label]
        if field in self.block:
            raise MeasurementFileError(f"{label!r} a second time for blocksize {self.block['blocksize']} (the "
                                       f"result that begins on line {self.block_line})", source=self.source,
                                       line=number)
        self.block[field] = self._whole(value, number, label)
        if at is not None and field in ("max_latency_ns", "min_latency_ns"):
            self.block[field.replace("_ns", "_write")] = self._whole(at, number, label)  # the "(#N)"
