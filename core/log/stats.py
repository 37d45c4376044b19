"""The log writer's statistics, kept as the writer works.

Names follow what MQ reports: the four ``sta*`` counters of the distributed logger
(logical/physical bytes and writes), and ``amqldmpa``'s write-size and write-time averages
over the last 64 (short) and 1024 (long) physical writes, their high-water marks and the
slowest write with the virtual time it happened. z/OS maps the same figures onto QJST.
"""

from __future__ import annotations

from collections import deque

import attrs

#: amqldmpa's "short" and "long" averages cover the last 64 and 1024 physical writes.
SHORT_WINDOW = 64
LONG_WINDOW = 1024

#: the write-size distribution's buckets: a write of n bytes counts in the first bucket whose
#: bound is >= n (4 KiB pages: 1 page, 2, 3-4, ... 129-256 pages), the last bucket takes the rest
WRITE_SIZE_BOUNDS = tuple(4096 << i for i in range(9))


def write_size_bucket(nbytes: int) -> int:
    """The index of ``nbytes``'s bucket in :data:`WRITE_SIZE_BOUNDS` (``len(bounds)``: above all)."""
    pages = max(1, -(-nbytes // 4096))
    index = (pages - 1).bit_length()
    return index if index < len(WRITE_SIZE_BOUNDS) else len(WRITE_SIZE_BOUNDS)


def write_size_labels() -> list[str]:
    """The buckets' labels: "<=4K", "<=8K", ... ">1M"."""
    def k(n: int) -> str:
        return f"{n >> 20}M" if n >= 1 << 20 else f"{n >> 10}K"
    return [f"<={k(b)}" for b in WRITE_SIZE_BOUNDS] + [f">{k(WRITE_SIZE_BOUNDS[-1])}"]


class MovingAverage:
    """Mean of the last ``window`` values, O(1) per update."""

    __slots__ = ("window", "_values", "_sum")

    def __init__(self, window: int):
        self.window = window
        self._values: deque[float] = deque()
        self._sum = 0.0

    def add(self, value: float) -> float:
        values = self._values
        values.append(value)
        self._sum += value
        if len(values) > self.window:
            self._sum -= values.popleft()
        return self._sum / len(values)

    @property
    def value(self) -> float:
        return self._sum / len(self._values) if self._values else 0.0


@attrs.define
class LogStatistics:
    """Counters and averages of one log writer. All times are virtual microseconds."""

    logical_bytes: int = 0  # bytes of records appended (what recovery needs)
    #: the writer's writes that carried new recovery data, one a cycle (amqldmpa's
    #: staLogicalWrites: equal to staPhysicalWrites under SingleWrite, CALIBRATION D1/D1b)
    logical_writes: int = 0
    #: forces whose records were not yet on disk: they reached the writer and waited for it
    #: (z/OS QJSTWRW)
    forces_waited: int = 0
    log_records: int = 0  # records appended
    write_cycles: int = 0  # the writer's cycles: one run of pages cut from the buffer each
    physical_bytes: int = 0  # bytes handed to the device: pages, rewrites, spare copies
    physical_writes: int = 0  # I/O requests to the log device(s)
    #: of those, I/Os issued beside another of the same cycle (both in flight at once) …
    concurrent_writes: int = 0
    #: … and I/Os held until the earlier I/Os of their cycle had finished (a rewritten page's
    #: second copy after its first, an in-place rewrite after its spare copy, a later extent)
    ordered_writes: int = 0
    #: archive copies written by offload (z/OS): real I/O, counted apart from the log's own
    archive_bytes: int = 0
    archive_writes: int = 0
    #: background copies (z/OS archive offload, :mod:`~mqlog.core.log.background`) finished,
    #: their read requests and bytes, the virtual time they took from start to finish (their
    #: reads, then their writes, counted above) summed, and how often and how long the writer
    #: waited for one because the space could not place a run before it finished. (MQI calls
    #: held up by a full active log until an offload frees it wait before the writer, in the
    #: queue manager: ``log_full_refusals`` and ``log_full_wait_us``.)
    offloads: int = 0
    offload_reads: int = 0
    offload_read_bytes: int = 0
    offload_us: float = 0.0
    offload_waits: int = 0
    offload_wait_us: float = 0.0
    forces: int = 0  # synchronous write requests (commit, backout, out-of-syncpoint ops)
    pages_written: int = 0
    partial_page_writes: int = 0  # writes ending in a partial page
    partial_page_rewrites: int = 0  # writes that start by rewriting a partial page
    #: of those, cycles that wrote nothing else (no new page): a few records written alone
    rewrite_only_cycles: int = 0
    padded_pages: int = 0  # partial pages abandoned rather than rewritten
    padding_bytes: int = 0
    wrapped_writes: int = 0  # writes whose pages wrap around the end of the buffer ring
    buffer_waits: int = 0  # appends that waited for buffer space (z/OS QJSTWTB)
    #: cycles the write threshold started, with no force or buffer wait behind them (QJSTTHRW)
    threshold_writes: int = 0
    buffer_high_water_bytes: int = 0
    log_buffer_bytes: int = 0  # the buffer's size (logBufSz)
    formats: int = 0  # log files formatted on demand (secondary or linear extents)
    formatted_bytes: int = 0
    write_size_max_bytes: int = 0
    #: physical writes per size bucket (:data:`WRITE_SIZE_BOUNDS`, one more for the rest)
    write_size_counts: list = attrs.field(factory=lambda: [0] * (len(WRITE_SIZE_BOUNDS) + 1))
    write_time_max_us: float = 0.0
    #: the log's physical writes' times summed: with one write in flight at a time, the time
    #: the log had a write in flight (its duty, over a window)
    write_time_total_us: float = 0.0
    write_time_max_at_us: float = 0.0  # when the slowest write happened
    #: the writes of the log's own copy (copy 1: not a second copy, nor a spare) and their
    #: times summed: IBM's I/O time per write to LOGCOPY1 is their mean
    primary_writes: int = 0
    primary_write_time_us: float = 0.0
    #: the time the writer had a cycle in hand (its own CPU, its I/O, waits inside a cycle):
    #: its task busy, IBM's "Logger task busy" over a window
    writer_busy_us: float = 0.0
    #: the time at least one of the log's writes was in flight: IBM's "Logger I/O busy"
    io_busy_us: float = 0.0
    write_time_short_max_us: float = 0.0  # high-water mark of the short average
    write_time_long_max_us: float = 0.0
    #: the slowest write to each file, by file name (distributed shows the last 8 extents)
    worst_write_by_file: dict = attrs.field(factory=dict)
    _size_short: MovingAverage = attrs.field(factory=lambda: MovingAverage(SHORT_WINDOW), repr=False)
    _size_long: MovingAverage = attrs.field(factory=lambda: MovingAverage(LONG_WINDOW), repr=False)
    _time_short: MovingAverage = attrs.field(factory=lambda: MovingAverage(SHORT_WINDOW), repr=False)
    _time_long: MovingAverage = attrs.field(factory=lambda: MovingAverage(LONG_WINDOW), repr=False)

    def record_write(self, file: str, nbytes: int, pages: int, elapsed_us: float, now_us: float,
                     purpose: str = "log") -> None:
        """Account one physical write of ``nbytes`` that took ``elapsed_us`` and ended at ``now_us``
        (an archive copy is counted apart: it is not a write of the log itself)."""
        if purpose == "archive":
            self.archive_writes += 1
            self.archive_bytes += nbytes
            worst = self.worst_write_by_file
            if elapsed_us > worst.get(file, (-1.0,))[0]:
                worst[file] = (elapsed_us, now_us)
            return
        self.physical_writes += 1
        self.physical_bytes += nbytes
        self.pages_written += pages
        self._size_short.add(nbytes)
        self._size_long.add(nbytes)
        if nbytes > self.write_size_max_bytes:
            self.write_size_max_bytes = nbytes
        self.write_size_counts[write_size_bucket(nbytes)] += 1
        short = self._time_short.add(elapsed_us)
        long = self._time_long.add(elapsed_us)
        self.write_time_total_us += elapsed_us
        if purpose == "log":
            self.primary_writes += 1
            self.primary_write_time_us += elapsed_us
        if short > self.write_time_short_max_us:
            self.write_time_short_max_us = short
        if long > self.write_time_long_max_us:
            self.write_time_long_max_us = long
        if elapsed_us > self.write_time_max_us:
            self.write_time_max_us = elapsed_us
            self.write_time_max_at_us = now_us
        worst = self.worst_write_by_file
        if elapsed_us > worst.get(file, (-1.0,))[0]:
            worst[file] = (elapsed_us, now_us)

    @property
    def write_size_short_bytes(self) -> float:
        return self._size_short.value

    @property
    def write_size_long_bytes(self) -> float:
        return self._size_long.value

    @property
    def write_time_short_us(self) -> float:
        return self._time_short.value

    @property
    def write_time_long_us(self) -> float:
        return self._time_long.value

    def as_dict(self) -> dict:
        """The figures of the shared metrics schema, plus the writer's own detail."""
        return {
            "log_buffer_bytes": self.log_buffer_bytes,
            "formats": self.formats,
            "formatted_bytes": self.formatted_bytes,
            "worst_write_by_file": {f: {"us": t, "at_us": at} for f, (t, at) in sorted(self.worst_write_by_file.items())},
            "logical_bytes": self.logical_bytes,
            "logical_writes": self.logical_writes,
            "forces_waited": self.forces_waited,
            "log_records": self.log_records,
            "write_cycles": self.write_cycles,
            "physical_bytes": self.physical_bytes,
            "physical_writes": self.physical_writes,
            "concurrent_writes": self.concurrent_writes,
            "ordered_writes": self.ordered_writes,
            "archive_bytes": self.archive_bytes,
            "archive_writes": self.archive_writes,
            "offloads": self.offloads,
            "offload_reads": self.offload_reads,
            "offload_read_bytes": self.offload_read_bytes,
            "offload_us": self.offload_us,
            "offload_waits": self.offload_waits,
            "offload_wait_us": self.offload_wait_us,
            "forces": self.forces,
            "pages_written": self.pages_written,
            "partial_page_writes": self.partial_page_writes,
            "partial_page_rewrites": self.partial_page_rewrites,
            "rewrite_only_cycles": self.rewrite_only_cycles,
            "padded_pages": self.padded_pages,
            "padding_bytes": self.padding_bytes,
            "wrapped_writes": self.wrapped_writes,
            "buffer_waits": self.buffer_waits,
            "threshold_writes": self.threshold_writes,
            "buffer_high_water_bytes": self.buffer_high_water_bytes,
            "write_size_short_bytes": self.write_size_short_bytes,
            "write_size_long_bytes": self.write_size_long_bytes,
            "write_size_max_bytes": self.write_size_max_bytes,
            "write_size_histogram": [[label, n] for label, n in zip(write_size_labels(), self.write_size_counts)],
            "write_time_short_us": self.write_time_short_us,
            "write_time_long_us": self.write_time_long_us,
            "write_time_max_us": self.write_time_max_us,
            "write_time_total_us": self.write_time_total_us,
            "write_time_max_at_us": self.write_time_max_at_us,
            "primary_writes": self.primary_writes,
            "primary_write_time_us": self.primary_write_time_us,
            "writer_busy_us": self.writer_busy_us,
            "io_busy_us": self.io_busy_us,
            "write_time_short_max_us": self.write_time_short_max_us,
            "write_time_long_max_us": self.write_time_long_max_us,
        }
