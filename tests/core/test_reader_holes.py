"""Reading the log back over holes: runs of bad pages (zeros, nothing stored, an earlier lap's
pages, torn or garbled sectors) in a synthetic log whose writes are laid out by hand, and what
the reader must say of each – the end of the log, a tear of the final write, or damage named
with its file and offset."""

from __future__ import annotations

import pytest
from mqlog.core.errors import LogCorruptionError
from mqlog.core.format.pages import (FLAG_AFTER_PAD, NO_FIRST_RECORD, SECTOR_SIZE, PAGE_HEADER_SIZE,
                                     PAGE_SIZE, STALE, build_page)
from mqlog.core.log.reader import HOLE_PAGES, LogReader, scan
from mqlog.core.format.records import Put


SYNTH = "synthetic.log"
WRITE_PAGES = 3
LAP = 1 << 20  # the addresses of an earlier lap of a circular log: this much lower
BASE = 4 * LAP  # the address of page 0 (this lap)
START = BASE + PAGE_HEADER_SIZE  # its first record


class SyntheticLog:
    """A :class:`PageSource` over a dict of pages (an address not in it reads as nothing
    stored, as an extent not yet formatted does)."""

    def __init__(self):
        self.pages: dict[int, bytes] = {}

    def read_page(self, address: int) -> tuple[bytes, str, int]:
        return self.pages.get(address, b""), SYNTH, address - BASE

    def write(self, first_page: int, count: int, write_no: int, *, from_index: int = 0, lap: int = 0):
        """Pages ``first_page``.. of write ``write_no``, from its page ``from_index`` on
        (the earlier pages of the write did not land); ``lap``: as stored by a lap that
        many laps ago (stale at these addresses)."""
        for i in range(from_index, count):
            page = first_page + i
            record = self.record(page)
            self.pages[at(page)] = build_page(at(page) - lap * LAP, write_no, record.to_bytes(), 0, FLAG_AFTER_PAD, i)

    @staticmethod
    def end_of(page: int) -> int:
        """The address just past page ``page``'s record: where a writer resumes after it."""
        return at(page) + PAGE_HEADER_SIZE + len(SyntheticLog.record(page).to_bytes())

    @staticmethod
    def record(page: int) -> Put:
        return Put("Q", page.to_bytes(24, "little"), b"p" * 100, uow=page + 1)

    def tags(self, records) -> list[int]:
        return [int.from_bytes(r.msg_id, "little") for _, r in records]


def at(page: int) -> int:
    """The address of page ``page`` of the synthetic log."""
    return BASE + page * PAGE_SIZE


def synthetic(pages: int) -> SyntheticLog:
    """A log of ``pages`` pages (a multiple of WRITE_PAGES), written WRITE_PAGES at a time."""
    log = SyntheticLog()
    for w, first in enumerate(range(0, pages, WRITE_PAGES)):
        log.write(first, WRITE_PAGES, w + 1)
    return log


def make_hole(log: SyntheticLog, first: int, count: int, kind: str):
    for page in range(first, first + count):
        address = at(page)
        if kind == "zeros":
            log.pages[address] = bytes(PAGE_SIZE)
        elif kind == "nothing":
            log.pages.pop(address, None)
        elif kind == "stale":  # this address as an earlier lap left it
            log.pages[address] = build_page(address - LAP, 1, b"", NO_FIRST_RECORD, FLAG_AFTER_PAD)
        elif kind == "torn":  # some sectors of a write landed over zeros: the header's, or others
            record = Put("Q", page.to_bytes(24, "little"), b"t" * 3000, uow=page + 1)  # fills sector 3
            new = bytearray(build_page(address, 99, record.to_bytes(), 0, FLAG_AFTER_PAD))
            lost = 0 if page % 2 else 3  # the sector that did not land
            new[lost * SECTOR_SIZE:(lost + 1) * SECTOR_SIZE] = bytes(SECTOR_SIZE)
            log.pages[address] = bytes(new)
        else:  # garbage: no crash leaves it (its first sector is neither zeros nor a header)
            log.pages[address] = bytes([0xA5]) * PAGE_SIZE


HOLE_KINDS = ["zeros", "nothing", "stale", "torn", "garbage"]
HOLE_SIZES = [1, 2, 3, 5, HOLE_PAGES - 1, HOLE_PAGES]


@pytest.mark.parametrize("kind", HOLE_KINDS)
@pytest.mark.parametrize("size", HOLE_SIZES)
def test_a_hole_of_several_pages_with_later_writes_after_it_is_refused(size, kind):
    """A write of several pages lost (or a run of pages zeroed, overwritten by an earlier
    lap's, or damaged), with completed writes after it: acknowledged records are gone, so
    the log is refused naming the first bad page – never taken for its end (trial s33 #1:
    two zeroed pages ended the log there and restart said it had started)."""
    first = 12  # the first page of write 5: the hole takes writes 5.. wholly or in part
    log = synthetic(first + HOLE_PAGES + 3 * WRITE_PAGES)
    make_hole(log, first, size, kind)
    with pytest.raises(LogCorruptionError) as info:
        scan(log, START)
    err = info.value
    assert (err.source, err.offset, err.address) == (SYNTH, first * PAGE_SIZE, f"{at(first):016X}")
    assert f"{SYNTH}, offset {first * PAGE_SIZE}" in str(err)
    if kind == "garbage":  # no crash leaves a garbled page: refused at it, whatever follows
        assert "damaged, not torn" in str(err)
    else:
        assert (f"the first of {size} bad pages in a row" in str(err)) == (size > 1)


@pytest.mark.parametrize("kind", HOLE_KINDS)
@pytest.mark.parametrize("size", HOLE_SIZES)
def test_a_hole_in_the_middle_of_a_write_with_later_writes_is_refused(size, kind):
    """The same hole starting inside a write (a page of it damaged after it landed, and the
    pages after): the write it starts in began before it, but later writes follow."""
    first = 13  # write 5 is pages 12-14
    log = synthetic(first + HOLE_PAGES + 3 * WRITE_PAGES + 2)
    make_hole(log, first, size, kind)
    with pytest.raises(LogCorruptionError) as info:
        scan(log, START)
    assert info.value.offset == first * PAGE_SIZE


@pytest.mark.parametrize("after", ["nothing", "zeros", "stale"])
@pytest.mark.parametrize("kind", HOLE_KINDS)
@pytest.mark.parametrize("size", HOLE_SIZES)
def test_a_run_of_bad_pages_with_nothing_good_after_it_is_the_end(size, kind, after):
    """The end of the log looks like a hole from its first page: pages never written, a
    pre-formatted extent's zeros, or (on a circular log) the pages of an earlier lap. With
    nothing good after the run it is the end, never corruption; a run of torn pages there
    is a torn last write, as a single bad page is. A run of garbage is not: no crash leaves
    a page whose first sector is neither zeros nor a page header (a torn write lands whole
    sectors), so it is refused at its first page (found by hypothesis on issue 38's branch:
    63 bytes inserted into a log extent shifted every page after it, and restart took the
    run for a torn last write and lost 18 writes of acknowledged work)."""
    first = 12
    log = synthetic(first + WRITE_PAGES)  # writes 1..5, the last one pages 12-14
    make_hole(log, first, size, kind)
    for page in range(first + size, first + size + 2 * HOLE_PAGES):
        make_hole(log, page, 1, after)
    if kind == "garbage":
        with pytest.raises(LogCorruptionError) as info:
            scan(log, START)
        assert (info.value.offset, info.value.address) == (first * PAGE_SIZE, f"{at(first):016X}")
        assert "damaged, not torn" in str(info.value)
        return
    records, end = scan(log, START)
    assert log.tags(records) == list(range(first))
    assert end.page_address == at(first) and end.offset == first * PAGE_SIZE
    assert end.reason == ("torn" if kind == "torn" else "end")
    assert end.address == log.end_of(first - 1)  # where a writer resumes
    assert end.discarded_pages == 0


@pytest.mark.parametrize("inserted", [1, 63, 511, 4095])
def test_bytes_inserted_into_the_log_shift_every_page_after_and_are_refused(inserted):
    """Bytes inserted inside a page shift every later page off its boundary: the damaged
    page fails its checksum and no good page follows (all are shifted), which looked like a
    torn last write. The first shifted page's first sector holds the tail of the page
    before and a header at the wrong offset – no crash leaves that – so it is refused there,
    naming that page."""
    first = 12
    log = synthetic(first + 8 * WRITE_PAGES)
    image = b"".join(log.pages[at(p)] for p in range(first + 8 * WRITE_PAGES))
    cut = first * PAGE_SIZE + 700
    image = image[:cut] + bytes([0x5A]) * inserted + image[cut:]
    for p in range(first + 8 * WRITE_PAGES):
        log.pages[at(p)] = image[p * PAGE_SIZE:(p + 1) * PAGE_SIZE]
    with pytest.raises(LogCorruptionError) as info:
        scan(log, START)
    assert info.value.offset == (first + 1) * PAGE_SIZE and "damaged, not torn" in str(info.value)


@pytest.mark.parametrize("kind", ["zeros", "nothing", "stale"])
@pytest.mark.parametrize("missing", [1, 2, 3, 5, HOLE_PAGES])
def test_the_torn_tail_of_the_final_write_after_a_hole_is_a_tear(missing, kind):
    """The final write cut short by the crash with its first ``missing`` pages not on disk
    and its later ones on disk (a device may land a write's pages in any order): nothing in
    it was acknowledged, so the log ends before it – torn, its landed pages discarded, the
    same end as if none had landed. It began at the first bad page, so it is no evidence of
    a hole."""
    first, length = 12, HOLE_PAGES + 4
    log = synthetic(first)
    log.write(first, length, first // WRITE_PAGES + 1, from_index=missing)
    make_hole(log, first, missing, kind)
    records, end = scan(log, START)
    assert log.tags(records) == list(range(first))
    assert (end.reason, end.page_address, end.discarded_pages) == ("torn", at(first), length - missing)
    assert end.address == log.end_of(first - 1)


def test_the_final_write_after_a_hole_is_corruption_when_it_began_after_the_hole():
    """Two pages of write 5 lost, and the final write (6, cut short or not) after them: write
    6 began after the damage, so write 5 was hardened before it: refused."""
    log = synthetic(15)
    log.write(15, 4, 6, from_index=1)
    make_hole(log, 12, 3, "zeros")
    with pytest.raises(LogCorruptionError) as info:
        scan(log, START)
    assert info.value.offset == 12 * PAGE_SIZE and "a write that began after it" in str(info.value)


def test_stale_pages_of_an_earlier_lap_after_the_end_are_the_end():
    """A circular log after its head: the pages of the previous lap, good pages at other
    addresses from lower write numbers, for as far as the reader looks."""
    log = synthetic(12)
    for w, first in enumerate(range(12, 12 + 3 * HOLE_PAGES, WRITE_PAGES)):
        log.write(first, WRITE_PAGES, w + 1, lap=1)
    records, end = scan(log, START)
    assert log.tags(records) == list(range(12))
    assert (end.reason, end.problem, end.page_address) == ("end", str(STALE), at(12))


def test_a_hole_longer_than_the_look_is_the_end_and_the_look_is_bounded():
    """What the look past the end costs: HOLE_PAGES pages after the first bad one, once, at
    the end of the walk. A hole longer than that is beyond what the reader looks for."""
    log = synthetic(12 + HOLE_PAGES + 1 + 3 * WRITE_PAGES)
    make_hole(log, 12, HOLE_PAGES + 1, "zeros")
    reader = LogReader(log, START)
    records = list(reader)
    assert log.tags(records) == list(range(12)) and reader.end.reason == "end"
    assert reader.pages_read == 12 + 1 + HOLE_PAGES


@pytest.mark.parametrize("mode", ["prefix", "random"])
@pytest.mark.parametrize("before", ["zeros", "earlier lap"])
def test_no_torn_write_leaves_a_page_the_reader_calls_garbled(mode, before):
    """The reader refuses a page whose first sector is neither zeros nor a header as damage,
    because a torn write cannot leave one: the fault injector's tears (whole sectors of the
    new pages over what the file held) are checked against it, over a formatted extent's
    zeros and over an earlier lap's pages, for many seeds."""
    from mqlog.core.disk.faults import SECTOR_SIZE as TEAR_UNIT, FaultInjectingStorage, FaultPlan
    from mqlog.core.disk.storage import MemoryStorage
    from mqlog.core.format.pages import GARBLED, TORN, check_page

    assert TEAR_UNIT == SECTOR_SIZE  # the unit the injector tears in is the one the reader assumes
    pages = 6
    new = b"".join(build_page(at(p), 7, SyntheticLog.record(p).to_bytes() + b"n" * 3000, 0, FLAG_AFTER_PAD, p)
                   for p in range(pages))
    old = (bytes(pages * PAGE_SIZE) if before == "zeros" else
           b"".join(build_page(at(p) - LAP, 3, b"o" * 3500, 0, FLAG_AFTER_PAD, p) for p in range(pages)))
    seen = set()
    for seed in range(40):
        inner = MemoryStorage()
        inner.write("log", 0, old)
        FaultInjectingStorage(inner, FaultPlan(seed=seed, tear_mode=mode)).tear("log", 0, new)
        image = inner.read("log", 0, pages * PAGE_SIZE)
        for p in range(pages):
            _, problem = check_page(image[p * PAGE_SIZE:(p + 1) * PAGE_SIZE], at(p))
            assert problem is not GARBLED, (seed, p)
            seen.add(problem)
    assert TORN in seen  # the tears did land parts of pages
