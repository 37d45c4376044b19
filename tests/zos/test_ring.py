"""The active ring on its own (zos/ring.py): the part of the z/OS log space that places the log
in the active data sets and their copies, and switches from a full one to the next – what the
space composes, without a BSDS or an archive behind it."""

from __future__ import annotations

import pytest

from mqlog.core.disk.storage import MemoryStorage
from mqlog.core.format.pages import PAGE_SIZE
from mqlog.core.format.records import NO_ADDRESS
from mqlog.zos.ring import ActiveLogFullError, ActiveRing

CIS = 4
DS = CIS * PAGE_SIZE


def ring(*, offload=True, copies=2):
    filled = []
    made = ActiveRing(MemoryStorage(), data_sets=3, cis=CIS, copies=copies, offload=offload, start=0, events=[],
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
