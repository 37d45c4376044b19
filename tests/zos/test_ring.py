"""The active ring on its own (zos/ring.py): the part of the z/OS log space that places the log
in the active data sets and their copies, and switches from a full one to the next – what the
space composes, without a BSDS or an archive behind it."""

from __future__ import annotations

import pytest

from mqlog.core.disk.storage import MemoryStorage
from mqlog.core.errors import LogCorruptionError
from mqlog.core.format.pages import PAGE_SIZE, build_page
from mqlog.core.format.records import NO_ADDRESS
from mqlog.core.log.reader import HOLE_PAGES, LogReader
from mqlog.zos.ring import UNWRITTEN_RUN, ActiveLogFullError, ActiveRing

CIS = 4
DS = CIS * PAGE_SIZE


def ring(*, offload=True, copies=2, cis=CIS):
    filled = []
    made = ActiveRing(MemoryStorage(), data_sets=3, cis=cis, copies=copies, offload=offload, start=0, events=[],
                      reads={"active": 0, "archive": 0, "copy2": 0}, show=hex, on_full=filled.append)
    made.create()
    made.create_data_sets()
    return made, filled


def test_a_full_data_set_is_handed_on_and_the_next_takes_the_following_range():
    active, filled = ring()
    assert active.holder(DS - 1) is active.active[0] and active.holder(DS) is None
    active.switch(DS, NO_ADDRESS)
    assert filled == [active.active[0]] and active.active[0].full
    assert active.current == 1 and active.holder(DS) is active.active[1] and active.switches == 1
    assert [e for e, _ in active.events] == ["CSQJ002I", "CSQJ001I", "CSQJ001I"]


def test_with_offload_a_data_set_is_reused_only_once_archived():
    active, filled = ring()
    for n in (1, 2):
        active.switch(n * DS, NO_ADDRESS)
    with pytest.raises(ActiveLogFullError, match="CSQJ111A"):
        active.switch(3 * DS, NO_ADDRESS)  # DS01 is not archived yet
    filled[0].archive = 1
    active.switch(3 * DS, NO_ADDRESS)
    assert active.current == 0 and active.active[0].start == 3 * DS


def test_without_offload_a_data_set_is_reused_once_wholly_before_the_checkpoint():
    active, _ = ring(offload=False)
    for n in (1, 2):
        active.switch(n * DS, NO_ADDRESS)
    assert not active.reusable(active.active[0], DS - 1) and active.reusable(active.active[0], DS)
    active.switch(3 * DS, DS)
    assert active.current == 0


def test_new_cis_go_to_both_copies_at_once_and_a_rewritten_one_to_copy_2_last():
    active, _ = ring()
    pages = (b"a" * PAGE_SIZE, b"b" * PAGE_SIZE)
    writes = active.copy_writes(active.active[0], 0, pages, rewrite=False, first=True)
    assert [(w.file, w.purpose) for w in writes] == [("LOGCOPY1.DS01", "log"), ("LOGCOPY2.DS01", "copy2")]
    assert active.serial_rewrites() == []
    writes = active.copy_writes(active.active[0], 0, pages, rewrite=True, first=True)
    assert [(w.file, w.first_address) for w in writes] == [("LOGCOPY1.DS01", 0), ("LOGCOPY2.DS01", PAGE_SIZE)]
    assert [(w.file, w.first_address) for w in active.serial_rewrites()] == [("LOGCOPY2.DS01", 0)]


def test_an_unwritten_run_is_the_cis_of_zeros_on_every_copy_up_to_where_a_read_would_find_more():
    active, _ = ring(cis=8)
    ds = 8 * PAGE_SIZE
    assert active.unwritten_run(0, 10 * ds) == 8  # (DS01's range, no further)
    assert active.unwritten_run(PAGE_SIZE, 3 * PAGE_SIZE) == 2  # (the limit)
    assert active.unwritten_run(ds, 10 * ds) == 0  # DS02 holds no range yet
    active.storage.write("LOGCOPY2.DS01", 5 * PAGE_SIZE, b"x")  # copy 2 only: copy 1's read goes on to it
    active.storage.write("LOGCOPY1.DS01", 6 * PAGE_SIZE + 100, b"y")
    assert [active.unwritten_run(k * PAGE_SIZE, ds) for k in range(8)] == [5, 4, 3, 2, 1, 0, 0, 1]
    for k in range(8):  # what the run covers reads as zeros, with nothing said or counted
        for a in range(k * PAGE_SIZE, (k + active.unwritten_run(k * PAGE_SIZE, ds)) * PAGE_SIZE, PAGE_SIZE):
            assert active.read_copies(a, a, "LOGCOPY1.DS01", "LOGCOPY2.DS01") == (bytes(PAGE_SIZE), "LOGCOPY1.DS01", a)
    assert active.events == [] and active.reads["copy2"] == 0
    active.storage.replace("LOGCOPY1.DS01", bytes(2 * PAGE_SIZE + 10))  # short: a read there is refused
    assert [active.unwritten_run(k * PAGE_SIZE, ds) for k in range(4)] == [2, 1, 0, 0]
    active.inactive["LOGCOPY2.DS01"] = 0  # out of use: its reads go by the rules for that
    assert active.unwritten_run(0, ds) == 0
    single, _ = ring(copies=1, cis=2 * UNWRITTEN_RUN)
    assert single.unwritten_run(0, 10 ** 9) == UNWRITTEN_RUN  # (a run at a time)


class _Copies:
    """The ring's DS01 as a reader's page source."""

    def __init__(self, active):
        self.active = active

    def read_page(self, address):
        return self.active.read_copies(address, address, "LOGCOPY1.DS01", "LOGCOPY2.DS01")

    scan_page = read_page


@pytest.mark.parametrize("later_on", [None, "LOGCOPY1.DS01", "LOGCOPY2.DS01"])
def test_the_scan_past_the_end_finds_what_a_page_by_page_scan_does(later_on):
    cis = HOLE_PAGES + 3 * UNWRITTEN_RUN
    found = []
    for runs in (False, True):
        active, _ = ring(cis=cis)
        if later_on:  # a CI of a later write, far past the end, on one copy
            at = (HOLE_PAGES + UNWRITTEN_RUN + 5) * PAGE_SIZE
            active.storage.write(later_on, at, build_page(at, 9, b"", 0xFFFF))
        source = _Copies(active)
        reader = LogReader(source, 0, scan_to=lambda _: cis * PAGE_SIZE, scan_read=source.scan_page,
                           unwritten_run=active.unwritten_run if runs else None)
        try:
            list(reader.records())
            found.append((reader.end, reader.scan_pages, reader.max_write_no))
        except LogCorruptionError as exc:
            found.append((str(exc), reader.scan_pages, reader.max_write_no))
    assert found[0] == found[1]
    assert (found[0][1], found[0][2]) == ((cis - HOLE_PAGES - 1, 0) if later_on is None
                                          else (UNWRITTEN_RUN + 5, 9))
