"""The log writer: a buffer, forces, group commit, and the physical writes, in virtual time.

Applications append records to the log buffer without waiting (unless the buffer is
full) and *force* when the MQI call must not return before its records are on disk
(MQCMIT, MQBACK, out-of-syncpoint persistent MQPUT/MQGET). One writer process does all
the I/O, one write cycle at a time:

1. it sleeps until someone forces, an appender is waiting for buffer space, or – on a
   platform that has one (z/OS's WRTHRSH) – enough full pages have piled up;
2. it cuts the buffered pages into one run – records that other units of work appended
   while the previous write was in flight ride along: that is **group commit**, and it is
   why useful bytes per physical write rise with concurrency. A platform whose logger
   "tries very hard not to write partial pages" (distributed, ``pad_grouped_tail``) closes
   the partial last page of a write that carries the forces of more than one caller: the
   next record starts a fresh page, the rest of that page is padding and it is never
   rewritten (so TripleWrite's spare copy is not needed for it). A write that carries one
   force leaves its partial page to be continued – rewritten – by the next write: what one
   application, or two that alternate, see (``_cut``). A platform may cap a write's pages
   (``max_write_pages``: z/OS's 128 CIs): the rest goes out in the cycles that follow;
3. the platform's log space turns the run into physical writes (a spare copy for
   TripleWrite, copy 2 for dual logging, two files at an extent boundary), in order: each
   starts when the ones before it have finished – the order that keeps a rewritten page
   recoverable – unless the space marks it ``alongside`` the one before (dual logging's
   copies of new pages), and then the two are in flight at once. Each is charged to the
   device and then stored and synced. A writer that pays for its own I/O (``io_cost``: z/OS's
   single logger task) spends that CPU before each group of writes;
4. forces whose target is now on disk are released, and full pages leave the buffer.

Beside it run the space's background copies (z/OS archive offload,
:mod:`~mqlog.core.log.background`): the writer starts those the space hands out at the start
and the end of each cycle, never waits for one – except when the space cannot place a run
until one has finished (every file it could go to is still being copied); it then waits for
copies to finish, one at a time, and goes on the moment the space can place it.

The counters follow the distributed logger's (amqldmpa): ``logical_writes`` counts the
writes that carried new recovery data (one a cycle: staLogicalWrites, which IBM's counters show
equal to staPhysicalWrites under SingleWrite at one pair and at ten, CALIBRATION D1/D1b),
``forces`` every force, ``forces_waited`` the forces whose records were not yet on disk (they
reached the writer), ``log_records`` the records appended, ``write_cycles`` the writer's
cycles and ``physical_writes`` every I/O (a TripleWrite spare copy, a second copy, a wrap's
second half are each one), ``concurrent_writes`` the I/Os issued beside another of their cycle,
``ordered_writes`` those held until earlier I/Os of their cycle had finished, and
``rewrite_only_cycles`` the cycles that only rewrote the partial page the last one ended on
(no new page: a caller's few records written alone).

A write whose pages wrap round the end of the buffer ring goes out as one vectored write
(``writev``, MQ V8 and later) or, with ``vectored_writes=False``, as two writes as older
levels did.

Nothing here knows about a platform: addresses come from :mod:`~mqlog.core.log.addressing`,
placement from :mod:`~mqlog.core.log.space`, time from :mod:`~mqlog.core.disk.devices`.
"""

from __future__ import annotations

import heapq
import itertools
from typing import Callable, Generator

import attrs
import simpy

from mqlog.core.log.addressing import Addressing, PlainAddressing
from mqlog.core.log.background import BackgroundCopies
from mqlog.core.disk.devices import Device
from mqlog.core.errors import LogWriteError, ParameterError, StorageError
from mqlog.core.format.pages import PAGE_PAYLOAD, PAGE_SIZE, LogBuffer
from mqlog.core.log.space import LogSpace, PhysicalWrite
from mqlog.core.log.stats import LogStatistics

#: MQ's default log buffer: 512 pages of 4 KiB (LogBufferPages=0 means 512).
DEFAULT_BUFFER_PAGES = 512
#: Full pages that start a write nobody forced (z/OS WRTHRSH defaults to 20); None: only a
#: force or a full buffer starts a write (the distributed logger has no such threshold).
DEFAULT_WRITE_THRESHOLD = 20
#: A page records its index in its write in 16 bits, so one write, and so the buffer, is at
#: most this many pages (256 MiB; MQ's largest buffers are 16 MiB distributed, 4 MB z/OS).
MAX_BUFFER_PAGES = 65_535


class LogWriter:
    """Appends records, forces them, and writes pages through a platform's log space."""

    def __init__(self, env: simpy.Environment, space: LogSpace, device: Device, *,
                 buffer_pages: int = DEFAULT_BUFFER_PAGES,
                 write_threshold_pages: int | None = DEFAULT_WRITE_THRESHOLD,
                 vectored_writes: bool = True,
                 addressing: Addressing | None = None,
                 buffer: LogBuffer | None = None,
                 pad_policy: Callable[[int], bool] | None = None,
                 stats: LogStatistics | None = None,
                 pad_grouped_tail: bool = False,
                 wake_cost: Callable[[int], Generator] | None = None,
                 io_cost: Callable[[int], Generator] | None = None,
                 max_write_pages: int | None = None,
                 last_write_no: int = 0):
        if not 2 <= buffer_pages <= MAX_BUFFER_PAGES:
            raise ParameterError("buffer_pages", buffer_pages, f"2 to {MAX_BUFFER_PAGES} pages")
        if write_threshold_pages is not None and not 1 <= write_threshold_pages <= buffer_pages:
            raise ParameterError("write_threshold_pages", write_threshold_pages, f"1 to {buffer_pages} pages")
        if max_write_pages is not None and not 1 <= max_write_pages <= MAX_BUFFER_PAGES:
            raise ParameterError("max_write_pages", max_write_pages, f"1 to {MAX_BUFFER_PAGES} pages")
        self.env = env
        self.space = space
        self.device = device
        self.addressing = addressing or PlainAddressing()
        self.buffer = buffer or LogBuffer(self.addressing.start, buffer_pages)
        self.buffer.capacity_pages = buffer_pages
        self.buffer.pad_policy = pad_policy
        self.write_threshold_pages = write_threshold_pages
        self.pad_grouped_tail = pad_grouped_tail
        #: the writer's own CPU to wake n callers it released (``yield from wake_cost(n)``),
        #: paid before its next write; None: free
        self.wake_cost = wake_cost
        self._woken = 0  # callers released this cycle, to be woken
        #: the writer's own CPU to start n physical writes issued together and take their
        #: completions (``yield from io_cost(n)``), paid before they start: the single log
        #: task's work around each I/O; None: free
        self.io_cost = io_cost
        #: the most pages one write cycle carries (z/OS: 128 CIs an I/O); None: everything
        #: buffered. A longer backlog goes out in the cycles that follow, one after another
        self.max_write_pages = max_write_pages
        self.vectored_writes = vectored_writes
        self.stats = stats or LogStatistics()
        self.stats.log_buffer_bytes = buffer_pages * PAGE_SIZE
        #: every byte before this address is on disk
        self.durable = self.buffer.next_address
        # Write numbers must keep rising across restarts (the reader relies on it to find
        # the last write): restart passes the highest number it saw (see resume()).
        self._write_no = last_write_no
        self._forces: list[tuple[int, int, simpy.Event]] = []  # heap of (target, seq, event)
        self._seq = itertools.count()
        self._room_waiters: list[simpy.Event] = []
        self._wakeup: simpy.Event | None = None
        self._idle_waiters: list[simpy.Event] = []  # idle(): woken when no cycle is in flight
        #: when the cycle in flight, and its I/O in flight, started (None: none): the
        #: statistics count a cycle's busy time when it ends; :meth:`busy_now` adds the part
        #: so far of one in flight, for a window that starts or ends inside it
        self._cycle_started: float | None = None
        self._io_started: float | None = None
        #: the error that made the log unusable, once a physical write failed
        self.failed: LogWriteError | None = None
        self._stamps = self.addressing.stamps
        #: the space's background copies, run beside the writer
        self.copies = BackgroundCopies(env, space, device, self.stats, self._fail)
        self.process = env.process(self._run())

    @classmethod
    def resume(cls, env: simpy.Environment, space: LogSpace, device: Device, reader, **kwargs) -> "LogWriter":
        """A writer that continues the log ``reader`` has just read to its end (restart).

        The buffer starts with the good part of the tail page, and write numbers start above
        every write number the reader saw, the discarded pages of a torn final write
        included, so that those leftovers can never pass for part of a new write.
        """
        end = reader.end.address
        raw, _, _ = space.read_page(end - end % PAGE_SIZE)
        buffer = LogBuffer.resume_from_page(end, raw, kwargs.get("buffer_pages", DEFAULT_BUFFER_PAGES))
        return cls(env, space, device, buffer=buffer, last_write_no=reader.max_write_no, **kwargs)

    # -- what applications call --

    @property
    def next_address(self) -> int:
        return self.buffer.next_address

    def append(self, record) -> int:
        """Put ``record`` in the buffer now and return its address. The caller must have
        checked :meth:`has_room` (or use :meth:`put`, which waits)."""
        return self._append(self._encode(record))

    def put(self, record) -> Generator[simpy.Event, None, int]:
        """Append ``record``, first waiting for buffer space if need be (``yield from``)."""
        data = self._encode(record)
        if not self.has_room(len(data)):
            self.stats.buffer_waits += 1
            while not self.has_room(len(data)):
                event = self.env.event()
                self._room_waiters.append(event)
                self._wake()
                yield event
        return self._append(data)

    def _encode(self, record) -> bytes:
        if self.failed is not None:
            raise self.failed
        if self._stamps:
            record = attrs.evolve(record, stamp=self.addressing.stamp(self.env.now))
        return record.to_bytes()

    def _append(self, data: bytes) -> int:
        buffer = self.buffer
        before = buffer.buffered_bytes
        address = buffer.append(data)
        stats = self.stats
        after = buffer.buffered_bytes
        nbytes = len(data)
        padded = after - before - nbytes
        if padded:
            stats.padded_pages += 1
            stats.padding_bytes += padded
        stats.log_records += 1
        stats.logical_bytes += nbytes
        if after > stats.buffer_high_water_bytes:
            stats.buffer_high_water_bytes = after
        threshold = self.write_threshold_pages
        if threshold is not None and self._wakeup is not None and buffer.full_pages_pending() >= threshold:
            self._wake()
        return address

    def has_room(self, nbytes: int) -> bool:
        """Whether a record of ``nbytes`` fits in the buffer now (a page is kept spare for
        padding; a record larger than the whole buffer fits once everything else is written)."""
        buffer = self.buffer
        return buffer.has_room(nbytes + PAGE_PAYLOAD) or not buffer.pending_bytes()

    def force(self, upto: int | None = None) -> simpy.Event:
        """An event that fires once every record before ``upto`` (default: everything
        appended so far) is on disk."""
        self.stats.forces += 1
        target = self.buffer.next_address if upto is None else upto
        event = self.env.event()
        if self.failed is not None:
            event.fail(self.failed)
            return event
        if target <= self.durable:
            event.succeed(self.durable)
            return event
        self.stats.forces_waited += 1  # a request to write recovery data reached the writer
        heapq.heappush(self._forces, (target, next(self._seq), event))
        self._wake()
        return event

    def idle(self) -> simpy.Event:
        """An event that fires once no write cycle is in flight and nothing is left to write
        (at once if the writer is waiting already, or has failed): a controlled shutdown's
        last wait, so that a cycle whose forces were released early (TripleWrite releases
        them after the spare write) still lands in place."""
        event = self.env.event()
        waiting = self._wakeup is not None and not self._wakeup.triggered
        if waiting or self.failed is not None:
            event.succeed()
        else:
            self._idle_waiters.append(event)
        return event

    # -- the writer process --

    def _wake(self) -> None:
        if self._wakeup is not None and not self._wakeup.triggered:
            self._wakeup.succeed()

    def _should_write(self) -> bool:
        buffer = self.buffer
        if not buffer.pending_bytes():
            return False
        threshold = self.write_threshold_pages
        return bool(self._forces or self._room_waiters
                    or (threshold is not None and buffer.full_pages_pending() >= threshold))

    def _cut(self):
        """Cut everything buffered into this cycle's run; with ``pad_grouped_tail``, close the
        run's partial last page when the run carries more than one waiting force (IBM: the
        logger "tries very hard not to write partial pages"; D1b: at ten pairs a write carries
        about four forces and TripleWrite adds 0.5% of writes, at one pair every write continues
        the partial page)."""
        self._write_no += 1
        buffer = self.buffer
        run = buffer.cut(self._write_no, self.max_write_pages)
        if self.pad_grouped_tail and run.ends_partial:
            end = run.end_address
            carried = 0
            for target, _, _ in self._forces:
                if target <= end:
                    carried += 1
                    if carried > 1:
                        buffer.close_tail()
                        break
        return run

    def _run(self):
        try:
            yield from self._write_loop()
        except StorageError as exc:
            self._fail(exc)

    def _fail(self, exc: StorageError) -> None:
        """A physical write failed: the log is unusable; tell everyone who waits."""
        self.failed = LogWriteError(f"log write failed, the log is unusable: {exc}")
        self.failed.cause = exc  # what failed (a full file system, an I/O error), for the messages
        forces, self._forces = self._forces, []
        for _, _, event in forces:
            event.fail(self.failed)
        waiters, self._room_waiters = self._room_waiters, []
        for event in waiters:
            event.fail(self.failed)
        self._release_idle()

    def _release_idle(self) -> None:
        """Tell the :meth:`idle` waiters: no cycle is in flight (or the log failed)."""
        idle, self._idle_waiters = self._idle_waiters, []
        for event in idle:
            event.succeed()

    def _write_loop(self):
        env = self.env
        while True:
            if not self._should_write():
                self._release_idle()
                self._wakeup = env.event()
                yield self._wakeup
                self._wakeup = None
                continue
            stats = self.stats
            if not self._forces and not self._room_waiters:
                stats.threshold_writes += 1  # only the full pages the threshold counts started it
            run = self._cut()
            cycle_started = self._cycle_started = env.now
            stats.write_cycles += 1
            if run.new_bytes:
                stats.logical_writes += 1  # a write that carries new recovery data
            if run.rewrites_partial:
                stats.partial_page_rewrites += 1
                if len(run.pages) == 1:
                    stats.rewrite_only_cycles += 1  # a straggler's records, in the page written last
            if run.ends_partial:
                stats.partial_page_writes += 1
            # A copy a restart must redo starts with the first cycle; a run that needs a file
            # still being copied waits for the copy (the only wait for one).
            self.copies.start_pending()
            if self.space.waits_for_copies(run):
                yield from self._wait_for_copies(run)
                if self.failed is not None:
                    self._cycle_started = None
                    return
            for k, group in enumerate(_in_flight_together(self.space.plan_write(run))):
                if k:
                    stats.ordered_writes += len(group)  # held until the writes before them finished
                if self.io_cost is not None:
                    yield from self.io_cost(len(group))
                io_started = self._io_started = env.now
                if len(group) == 1:
                    yield from self._write_parts(group[0])
                else:
                    # Writes in flight at once (a second copy of new pages): the cycle waits
                    # for the slowest; they share the device.
                    stats.concurrent_writes += len(group) - 1
                    yield self.env.all_of([self.env.process(self._write_parts(pw)) for pw in group])
                stats.io_busy_us += env.now - io_started
                self._io_started = None
                for pw in group:
                    if pw.hardens_first_page:
                        # Records ending on this page are recoverable now, before the run is
                        # in place: they are durable (a checkpoint may flush queue data
                        # behind them) – up to the first record that runs on past the page,
                        # whose end is not on disk yet.
                        self.durable = max(self.durable, self.buffer.complete_before(pw.first_address,
                                                                                      run.end_address))
                        self._release_forces(self.durable)
            self.buffer.release(run)
            self.durable = run.end_address
            self._release_waiters()
            if self._woken and self.wake_cost is not None:
                woken, self._woken = self._woken, 0
                yield from self.wake_cost(woken)
            self._woken = 0
            stats.writer_busy_us += env.now - cycle_started
            self._cycle_started = None
            # What this cycle filled is on disk now: the space may copy it.
            self.copies.start_pending()

    def busy_now(self) -> dict:
        """The writer's busy and I/O busy µs until now (``writer_busy_us``, ``io_busy_us``),
        with the part so far of a cycle (and an I/O) in flight: what a window that starts or
        ends inside one counts of it."""
        now, stats = self.env.now, self.stats
        return {"writer_busy_us": stats.writer_busy_us + (now - self._cycle_started if self._cycle_started is not None
                                                          else 0.0),
                "io_busy_us": stats.io_busy_us + (now - self._io_started if self._io_started is not None else 0.0)}

    def _wait_for_copies(self, run):
        """The space can place ``run`` only once a background copy has finished: wait for
        copies to finish, one at a time, until it can (or nothing is left to finish:
        plan_write then says why the run cannot be placed)."""
        self.stats.offload_waits += 1
        started = self.env.now
        while self.space.waits_for_copies(run) and self.failed is None:
            self.copies.start_pending()
            if not self.copies.running:
                break
            yield self.copies.progress()
        self.stats.offload_wait_us += self.env.now - started

    def _write_parts(self, pw: PhysicalWrite):
        for part in self._split_at_wrap(pw):
            yield from self._physical_write(part)

    def _split_at_wrap(self, pw: PhysicalWrite):
        """One write, or two if the pages wrap round the buffer ring and writev is off."""
        if pw.purpose != "log" or len(pw.pages) < 2:
            return (pw,)
        slot = self.buffer.slot(pw.first_address)
        room = self.buffer.capacity_pages - slot
        if len(pw.pages) <= room:
            return (pw,)
        self.stats.wrapped_writes += 1
        if self.vectored_writes:
            return (pw,)
        return (attrs.evolve(pw, pages=pw.pages[:room]),
                attrs.evolve(pw, offset=pw.offset + room * PAGE_SIZE,
                             first_address=pw.first_address + room * PAGE_SIZE, pages=pw.pages[room:]))

    def _physical_write(self, pw: PhysicalWrite):
        env = self.env
        storage = self.space.storage
        if pw.format_bytes:
            # A new extent is formatted before its first page is written: a cost paid then.
            # (The space may have created the file already, so that its control data never
            # names a file that is not there; the formatting is still this write's cost.)
            yield from self.device.write(pw.format_bytes)
            if not storage.exists(pw.file):
                storage.create(pw.file, pw.format_bytes)
            self.stats.formats += 1
            self.stats.formatted_bytes += pw.format_bytes
        if not pw.pages:
            return  # only the formatting was asked for
        started = env.now
        nbytes = pw.nbytes
        storage.begin_write(pw.file, pw.offset, pw.pages)  # on its way until written: a power loss tears it
        yield from self.device.write(nbytes)
        storage.write(pw.file, pw.offset, pw.pages)
        storage.sync(pw.file)
        self.stats.record_write(pw.file, nbytes, len(pw.pages), env.now - started, env.now, pw.purpose)

    def _release_forces(self, upto: int) -> None:
        forces = self._forces
        while forces and forces[0][0] <= upto:
            heapq.heappop(forces)[2].succeed(upto)
            self._woken += 1

    def _release_waiters(self) -> None:
        self._release_forces(self.durable)
        if self._room_waiters:
            waiters, self._room_waiters = self._room_waiters, []
            for event in waiters:
                event.succeed()


def _in_flight_together(writes) -> list[list[PhysicalWrite]]:
    """A plan's writes in the groups the writer issues them in: each write joins the group of
    the write before it when it is ``alongside`` it, and otherwise starts a new group, which
    begins once every write of the groups before it has finished."""
    groups: list[list[PhysicalWrite]] = []
    for pw in writes:
        if pw.alongside and groups:
            groups[-1].append(pw)
        else:
            groups.append([pw])
    return groups
