"""The log-space conformance suite: what every platform's log space promises the core.

In the style of ZODB's storage tests (base test classes such as ``BasicStorage`` that every
storage implementation runs), these tests use a space only through what
:class:`~mqlog.core.log.space.LogSpace` and :class:`~mqlog.core.platform.PlatformLogSpace`
promise, and pages reach it as they do in a queue manager: the core's
:class:`~mqlog.core.log.writer.LogWriter` plans them with the space and writes them, the
:class:`~mqlog.core.log.reader.LogReader` reads them back through ``read_page``. Control data
is saved and the tail released in the queue manager's order (``save_control``, then
``release``).

An implementation runs the suite by naming a class after :func:`conformance_tests` in its
platform's tests: ``TestMySpace = conformance_tests(SpaceFactory(...))``. The
:class:`SpaceFactory` makes the space over a storage and declares what the space does where
log spaces legitimately differ – the size of its files, whether a log whose tail does not
move fills up, what release does with the log before the tail, how many copies of a page
and of the control data it keeps. A capability a space lacks (a list of its files to refuse
damage by, archives) is declared there, and its tests are then not part of the class: the
suite never probes a space with ``getattr`` and never skips at run time.
"""

from __future__ import annotations

from typing import Callable

import attrs
import pytest
import simpy
from mqlog.core.disk.devices import Device, get_profile
from mqlog.core.errors import LogFileMissingError, LogFormatError, LogWriteError, SimulatedCrash
from mqlog.core.disk.faults import FaultInjectingStorage, FaultPlan
from mqlog.core.format.pages import PAGE_SIZE
from mqlog.core.platform import LogControl
from mqlog.core.log.reader import LogReader
from mqlog.core.format.records import NO_ADDRESS, Put
from mqlog.core.disk.storage import MemoryStorage, Storage
from mqlog.core.log.writer import LogWriter

#: what ``release`` does with the log before the tail (SpaceFactory.release)
KEPT, REUSED, ARCHIVED = "kept", "reused", "archived"

#: every log in the suite starts at address 0
START = 0
#: message data of the records appended, in turn: some records fit in a page, some span two
#: or three, so runs end on partial pages and records cross page and file boundaries
SIZES = (300, 2500, 4100, 700, 9000, 1200)
#: a space whose one file grows without limit is filled in steps of this many pages, as if
#: its files were that size
NOMINAL_FILE_PAGES = 8
#: how many files' worth of log the tests that turn a log write: several laps of any ring
LAPS_FILES = 13


@attrs.frozen
class SpaceFactory:
    """How to make one configuration of a log space, and what it declares about itself."""

    #: the configuration's name (the test class is named after it)
    name: str
    #: ``make(storage)``: the space over ``storage`` – a new log on an empty storage, the log
    #: there reopened (as restart reopens it) on one that holds a log
    make: Callable[[Storage], object]
    #: what ``release`` does with the log before the tail: KEPT (it is still read back: one
    #: growing file, a linear log's inactive extents), REUSED (its files take new log: a
    #: circular ring, a linear log managed automatically, z/OS without offload), ARCHIVED
    #: (copied away before its files are reused, and still read back from the copy)
    release: str
    #: the files the control data is kept in, one per copy
    control_files: tuple[str, ...]
    #: pages one log file holds (None: one file that grows without limit)
    file_pages: int | None = None
    #: files the log fills while its tail does not move, after which it refuses a write
    #: (None: it never fills – it grows, or archives what it reuses)
    limit_files: int | None = None
    #: copies of every page, each in a file of its own (dual logging)
    copies: int = 1
    #: copies of every archive (ARCHIVED spaces)
    archive_copies: int = 1
    #: whether the control data keeps ``LogControl.media`` (spaces without media recovery
    #: drop it)
    keeps_media: bool = False
    #: whether the control data lists the log's files, so that a missing or short one, or
    #: log files without their control data, are refused as damage (LogFileMissingError)
    lists_files: bool = True
    #: whether ``usage`` measures the log against a limit (False: it is always 0)
    limited: bool = True

    def __attrs_post_init__(self):
        if self.release not in (KEPT, REUSED, ARCHIVED):
            raise ValueError(f"{self.name}: release={self.release!r}")
        if self.limit_files is not None and self.file_pages is None:
            raise ValueError(f"{self.name}: a log that fills has files of a size")

    @property
    def file_bytes(self) -> int:
        return (self.file_pages or NOMINAL_FILE_PAGES) * PAGE_SIZE

    def expected(self, control: LogControl) -> LogControl:
        """``control`` as the space gives it back."""
        return control if self.keeps_media else attrs.evolve(control, media=NO_ADDRESS)


def clone(storage) -> MemoryStorage:
    """A copy of a storage's files."""
    copy = MemoryStorage()
    for name in storage.list():
        copy.write(name, 0, storage.read(name, 0, storage.size(name)))
    return copy


def read_back(space, start: int) -> tuple[list[tuple[int, bytes]], object]:
    """The records the reader finds from ``start`` through ``space``, as (address, bytes),
    and where the log ended."""
    reader = LogReader(space, start)
    records = [(address, record.to_bytes()) for address, record in reader]
    return records, reader.end


class Log:
    """A space with the core's writer in front of it, over a storage that keeps only what was
    synced (:attr:`durable`)."""

    def __init__(self, factory: SpaceFactory):
        self.factory = factory
        self.durable = MemoryStorage()
        self.storage = FaultInjectingStorage(self.durable)
        self.space = factory.make(self.storage)
        self.env = simpy.Environment()
        self.writer = LogWriter(self.env, self.space, Device(self.env, get_profile("ssd")),
                                buffer_pages=64, write_threshold_pages=8)
        #: (address, bytes) of every record whose force completed, in order
        self.records: list[tuple[int, bytes]] = []
        self.checkpoints = 0

    @property
    def head(self) -> int:
        """Everything before this address is on disk."""
        return self.writer.durable

    def append_to(self, address: int) -> None:
        """Append records, forcing each, until the log on disk reaches ``address``. A write
        the space refuses raises LogWriteError (the records before it stay appended)."""
        env, writer = self.env, self.writer

        def appender():
            while writer.durable < address:
                n = len(self.records)
                record = Put("CONFORM.Q", n.to_bytes(24, "little"), bytes([n % 251]) * SIZES[n % len(SIZES)],
                             uow=n + 1)
                at = yield from writer.put(record)
                yield writer.force()
                self.records.append((at, record.to_bytes()))

        env.run(until=env.process(appender()))

    def checkpoint(self, at: int, *, tail: int | None = None, media: int = NO_ADDRESS) -> LogControl:
        """What a queue manager's checkpoint tells the space: control data naming the record
        at ``at`` (and ``tail``, by default the same: no unit of work is open), then the
        release of the log before the tail."""
        self.checkpoints += 1
        control = LogControl(at, at if tail is None else tail, self.checkpoints, media)
        self.space.save_control(control)
        self.space.release(control.tail)
        return control

    def reopened(self, storage: Storage | None = None):
        """The space made again over what is on disk (``storage``: a copy of it), as
        restart makes it."""
        return self.factory.make(self.durable if storage is None else storage)

    def after(self, address: int) -> list[tuple[int, bytes]]:
        return [(a, r) for a, r in self.records if a >= address]


def pages(first: int, end: int):
    return range(first - first % PAGE_SIZE, end, PAGE_SIZE)


def damage_control(storage: Storage, name: str, how: str) -> None:
    size = storage.size(name)
    if how == "truncated":
        storage.truncate(name, size // 2)
    else:
        middle = storage.read(name, size // 2, 1)
        storage.write(name, size // 2, bytes((middle[0] ^ 0x5A,)))


def damage_file(storage: Storage, name: str, offset: int, how: str) -> None:
    if how == "missing":
        storage.delete(name)
    else:  # short: it ends inside the page
        storage.truncate(name, offset + 100)


def refused_once_no_copy_is_left(log: Log, address: int, how: str, copies: int) -> None:
    """Damage the file serving ``address`` until no copy is left: each copy serves the page as
    written until then; after, the read is refused naming the damaged files."""
    original = log.reopened().read_page(address)[0]
    damaged = []
    for _ in range(copies):
        raw, name, offset = log.reopened().read_page(address)
        assert raw == original and name not in damaged, (name, damaged)
        damage_file(log.durable, name, offset, how)
        damaged.append(name)
    with pytest.raises(LogFileMissingError) as refused:
        log.reopened().read_page(address)
    assert refused.value.source in damaged
    assert all(name in str(refused.value) for name in damaged), str(refused.value)


# --- what every log space promises ---------------------------------------------------------------

class LogSpaceTests:
    """Appending, reading back, control data, usage and release: every space runs these."""

    factory: SpaceFactory

    def new_log(self) -> Log:
        return Log(self.factory)

    def test_a_new_log_has_no_control_data_until_the_first_checkpoint(self):
        log = self.new_log()
        assert log.space.load_control() is None
        log.append_to(START + 2 * self.factory.file_bytes)
        assert log.reopened().load_control() is None  # pages, but no checkpoint yet: restart starts afresh
        control = log.checkpoint(log.records[3][0])
        assert log.reopened().load_control() == self.factory.expected(control)

    def test_appended_records_are_read_back_where_the_space_says_they_are(self):
        log = self.new_log()
        log.append_to(START + 5 * self.factory.file_bytes // 2)
        assert len(log.records) > 20
        for space in (log.space, log.reopened()):
            records, end = read_back(space, START)
            assert records == log.records
            assert (end.reason, end.address) == ("end", log.writer.next_address)
            for address in pages(START, log.head):
                raw, name, offset = space.read_page(address)
                assert len(raw) == PAGE_SIZE and log.durable.read(name, offset, PAGE_SIZE) == raw, (address, name)

    def test_control_data_round_trips_through_a_reopened_space(self):
        log = self.new_log()
        log.append_to(START + 3 * self.factory.file_bytes // 2)
        first, second, last = log.records[1][0], log.records[-3][0], log.records[-1][0]
        saved = log.checkpoint(second, tail=first, media=first)
        again = log.reopened()
        assert again.load_control() == self.factory.expected(saved)
        # A restart saves its own checkpoint over it; the next restart finds that one.
        later = LogControl(last, second, saved.checkpoint_number + 1, second)
        again.save_control(later)
        again.release(later.tail)
        third = log.reopened()
        assert third.load_control() == self.factory.expected(later)
        assert read_back(third, second)[0] == log.after(second)

    @pytest.mark.parametrize("fault", ["crash", "torn"])
    def test_a_crash_while_saving_control_data_leaves_the_old_or_the_new(self, fault):
        log = self.new_log()
        log.append_to(START + 3 * self.factory.file_bytes // 2)
        old = log.checkpoint(log.records[2][0], tail=log.records[1][0])
        log.append_to(log.head + self.factory.file_bytes)
        new = LogControl(log.records[-1][0], log.records[-4][0], old.checkpoint_number + 1)
        disk = clone(log.durable)
        # How many physical writes saving takes (restart loads the control data first).
        counting = FaultInjectingStorage(clone(disk))
        space = log.factory.make(counting)
        assert space.load_control() == self.factory.expected(old)
        before = counting.physical_writes
        space.save_control(new)
        writes = counting.physical_writes - before
        assert writes >= 1
        assert log.reopened(counting.durable).load_control() == self.factory.expected(new)
        found = []
        for k in range(writes):
            # the (k+1)-th write of the save: nothing of it lands, or it is torn
            plan = FaultPlan(crash_after_writes=before + k) if fault == "crash" else FaultPlan(
                tear_write=before + k + 1)
            crashing = FaultInjectingStorage(clone(disk), plan)
            space = log.factory.make(crashing)
            space.load_control()
            with pytest.raises(SimulatedCrash):
                space.save_control(new)
            reopened = log.reopened(crashing.durable)
            control = reopened.load_control()
            assert control in (self.factory.expected(old), self.factory.expected(new)), k
            assert read_back(reopened, control.tail)[0] == log.after(control.tail), k
            found.append(control)
        assert found[0] == self.factory.expected(old)  # nothing of the save landed

    @pytest.mark.parametrize("how", ["flipped", "truncated"])
    def test_a_damaged_control_file_is_refused_naming_it(self, how):
        log = self.new_log()
        log.append_to(START + self.factory.file_bytes)
        saved = log.checkpoint(log.records[2][0])
        files = self.factory.control_files
        for i, name in enumerate(files):
            damage_control(log.durable, name, how)
            space = log.reopened()
            if i < len(files) - 1:
                assert space.load_control() == self.factory.expected(saved)  # another copy serves
                continue
            with pytest.raises(LogFormatError) as refused:
                space.load_control()
            assert refused.value.source in files and refused.value.source in str(refused.value)

    def test_usage_grows_with_the_head_and_never_passes_the_whole_log(self):
        log = self.new_log()
        log.append_to(START + PAGE_SIZE)
        tail = log.records[0][0]
        log.checkpoint(tail)
        step = self.factory.file_bytes // 3
        samples = []  # (head, usage, archive copies finished) as the log fills, its tail where it was
        while log.head < START + 2 * self.factory.file_bytes:
            log.append_to(log.head + step)
            samples.append((log.head, log.space.usage(log.head, tail), log.space.archive_offloads))
            # For the space as it is now, usage is monotone in the head.
            heads = range(tail, log.head + 1, PAGE_SIZE // 2)
            usages = [log.space.usage(h, tail) for h in heads]
            assert usages == sorted(usages)
        used = [u for _, u, _ in samples]
        if not self.factory.limited:
            assert set(used) == {0.0}
            return
        assert all(0 < u <= 1 for u in used)
        for (_, u1, a1), (_, u2, a2) in zip(samples, samples[1:]):
            # Nothing before the tail was freed: usage only grows – but a space that archives
            # frees a file once its copy is made, whatever the tail, and the copy runs in the
            # background: then only a finished archive copy may lower it.
            if self.factory.release != ARCHIVED or a2 == a1:
                assert u2 >= u1, samples
        if self.factory.release == ARCHIVED:
            assert any(u2 < u1 for u1, u2 in zip(used, used[1:])), samples  # archiving freed a file
        else:
            assert used[-1] > used[0]

    def test_the_log_from_the_tail_on_is_never_lost(self):
        """With the tail held at the first record, the space keeps every page after it –
        KEPT and ARCHIVED ones for as long as the log runs, the others until they refuse a
        write, exactly when their files are all full."""
        factory = self.factory
        log = self.new_log()
        log.append_to(START + PAGE_SIZE)
        tail = log.records[0][0]
        log.checkpoint(tail)
        limit = None if factory.limit_files is None else START + factory.limit_files * factory.file_bytes
        refused = None
        try:
            log.append_to(START + LAPS_FILES * factory.file_bytes)
        except LogWriteError as exc:
            refused = exc
        if limit is None:
            assert refused is None
        else:
            assert refused is not None, f"the log took {log.head} bytes with its tail held at {tail}"
            assert limit - 3 * PAGE_SIZE < log.head <= limit  # full, and not before
            assert log.space.usage(log.head, tail) == pytest.approx((log.head - START) / (limit - START))
        for space in (log.space, log.reopened()):
            assert read_back(space, tail)[0] == log.after(tail)

    def test_release_lets_the_space_reuse_or_archive_only_the_log_before_the_tail(self):
        factory = self.factory
        log = self.new_log()
        log.append_to(START + factory.file_bytes + PAGE_SIZE)
        first = {a: log.space.read_page(a)[:2] for a in pages(START, START + factory.file_bytes)}
        files = {}
        tail = START
        while log.head < START + LAPS_FILES * factory.file_bytes:
            log.append_to(log.head + factory.file_bytes // 2)
            tail = log.records[-1][0]
            log.checkpoint(tail)
            files[log.head // factory.file_bytes] = len(log.durable.list())
        for space in (log.space, log.reopened()):
            assert read_back(space, tail)[0] == log.after(tail)
            for address, (raw, name) in first.items():
                now, source, offset = space.read_page(address)
                if factory.release == REUSED:
                    assert now != raw, address  # its file holds other log now
                    continue
                assert now == raw, address
                if factory.release == ARCHIVED:
                    # served from the archive: the file it was written to holds newer log
                    assert source != name and log.durable.read(name, offset, PAGE_SIZE) != raw, address
        if factory.release == REUSED:
            counts = list(files.values())
            assert counts[-1] <= counts[len(counts) // 2]  # files are reused, not added


# --- spaces with files of a size -------------------------------------------------------------------

class SwitchingTests:
    """A space of files of ``file_pages`` pages: a full one gives way to the next."""

    factory: SpaceFactory

    def test_a_full_file_switches_to_the_next_one(self):
        factory = self.factory
        log = Log(factory)
        log.append_to(START + PAGE_SIZE)
        log.checkpoint(log.records[0][0])  # the tail held at the start: no file is reused
        log.append_to(START + 5 * factory.file_bytes // 2)
        size = factory.file_bytes
        # Some record crosses each boundary, so a run of pages was split between two files.
        for k in (1, 2):
            boundary = START + k * size
            assert any(a < boundary < a + len(r) for a, r in log.records), boundary
        for space in (log.space, log.reopened()):
            names = []
            for k in range(3):
                first = START + k * size
                held = {space.read_page(a)[1:] for a in pages(first, min(first + size, log.head))}
                assert {offset for _, offset in held} == set(range(0, min(size, log.head - first), PAGE_SIZE))
                assert len({name for name, _ in held}) == 1, held  # one file holds the file's worth of log
                names.append(held.pop()[0])
            assert len(set(names)) == 3, names


# --- spaces whose control data lists their files ---------------------------------------------------

class DamagedFileTests:
    """A file the control data lists that is missing or short is damage, refused naming it –
    never the end of the log, and never a new log."""

    factory: SpaceFactory

    @pytest.mark.parametrize("how", ["missing", "short"])
    def test_a_missing_or_short_log_file_is_refused_naming_it(self, how):
        log = Log(self.factory)
        log.append_to(START + 5 * self.factory.file_bytes // 2)
        log.checkpoint(log.records[0][0])
        address = START + 2 * PAGE_SIZE
        refused_once_no_copy_is_left(log, address, how, self.factory.copies)
        with pytest.raises(LogFileMissingError):  # the reader does not take it for the end
            read_back(log.reopened(), START)

    def test_log_files_without_their_control_data_are_refused(self):
        log = Log(self.factory)
        log.append_to(START + 3 * self.factory.file_bytes // 2)
        log.checkpoint(log.records[2][0])
        for name in self.factory.control_files:
            log.durable.delete(name)
        with pytest.raises(LogFileMissingError) as refused:
            log.reopened().load_control()
        assert refused.value.source in self.factory.control_files


class ArchiveTests:
    """A space that archives: what left the active log is read from the archive, and a
    missing archive is refused naming it."""

    factory: SpaceFactory

    def archived_log(self) -> Log:
        log = Log(self.factory)
        log.append_to(START + (LAPS_FILES - 3) * self.factory.file_bytes)
        log.checkpoint(log.records[-1][0])
        return log

    def test_log_that_left_the_active_files_is_read_from_the_archive(self):
        log = self.archived_log()
        records, end = read_back(log.reopened(), START)
        assert records == log.records and end.reason == "end"

    @pytest.mark.parametrize("how", ["missing", "short"])
    def test_a_missing_or_short_archive_is_refused_naming_it(self, how):
        log = self.archived_log()
        refused_once_no_copy_is_left(log, START + PAGE_SIZE, how, self.factory.archive_copies)


def conformance_tests(factory: SpaceFactory) -> type:
    """The suite for ``factory``'s space as a test class: what every space runs, and the
    tests of each capability the factory declares."""
    bases = [LogSpaceTests]
    if factory.file_pages is not None:
        bases.append(SwitchingTests)
    if factory.lists_files:
        bases.append(DamagedFileTests)
    if factory.release == ARCHIVED:
        bases.append(ArchiveTests)
    name = "Test" + "".join(part.capitalize() for part in factory.name.replace("/", "-").split("-"))
    return type(name, tuple(bases), {"factory": factory, "__module__": __name__})

