"""The BSDS's format (zos/bsds.py): what BsdsInventory.to_bytes writes from_bytes reads back
field for field, the log space writes exactly the bytes of the inventory it holds, and a copy
cut short or changed is refused naming it."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mqlog.core.disk.storage import MemoryStorage
from mqlog.core.errors import LogFormatError
from mqlog.core.format.pages import PAGE_SIZE, PageRun
from mqlog.core.format.records import NO_ADDRESS
from mqlog.zos.bsds import MAX_ARCHIVE_SEQ, MAX_DATA_SETS, BsdsInventory
from mqlog.zos.space import ZosLogSpace

RBA = st.one_of(st.just(NO_ADDRESS), st.integers(0, (1 << 64) - 2))
NUMBER = st.integers(0, 1 << 40)


@st.composite
def inventories(draw):
    active = tuple(draw(st.lists(st.tuples(st.integers(1, MAX_DATA_SETS), RBA, st.booleans(),
                                           st.integers(-MAX_ARCHIVE_SEQ, MAX_ARCHIVE_SEQ)), min_size=1, max_size=6)))
    archives = tuple(draw(st.lists(st.tuples(st.integers(1, MAX_ARCHIVE_SEQ), RBA, RBA,
                                             st.tuples(*[st.text(max_size=12)] * draw(st.integers(1, 2))),
                                             st.booleans()), max_size=6)))
    return BsdsInventory(
        sequence=draw(NUMBER), cis=draw(st.integers(1, 1 << 32)), copies=draw(st.integers(1, 2)),
        start=draw(RBA), rba8=draw(st.booleans()), current=draw(st.integers(0, len(active) - 1)),
        high_written=draw(RBA), written_to=draw(RBA), written_write=draw(NUMBER), tail=draw(RBA),
        checkpoint=draw(RBA), checkpoint_number=draw(NUMBER),
        checkpoints=tuple(draw(st.lists(st.tuples(RBA, NUMBER), max_size=5))),
        next_archive=draw(st.integers(1, MAX_ARCHIVE_SEQ)), active=active, archives=archives,
        redo_from=draw(RBA))


@settings(max_examples=200, deadline=None)
@given(inventories())
def test_what_to_bytes_writes_from_bytes_reads_back(inventory):
    raw = inventory.to_bytes()
    assert BsdsInventory.from_bytes(raw, "BSDS01") == inventory
    assert BsdsInventory.from_bytes(raw, "BSDS01").to_bytes() == raw


def written_by_a_space() -> bytes:
    storage = MemoryStorage()
    space = ZosLogSpace(storage, data_sets=3, cis=16)
    pages = tuple(bytes(PAGE_SIZE) for _ in range(20))  # (past the first data set: a switch saves the BSDS)
    space.plan_write(PageRun(0, pages, False, False, len(pages) * PAGE_SIZE, 0))
    raw = storage.read("BSDS01", 0, storage.size("BSDS01"))
    assert storage.read("BSDS02", 0, storage.size("BSDS02")) == raw
    return raw


def test_a_space_writes_the_bytes_of_its_inventory():
    raw = written_by_a_space()
    inventory = BsdsInventory.from_bytes(raw, "BSDS01")
    assert inventory.to_bytes() == raw
    assert inventory.current == 1 and inventory.cis == 16 and inventory.copies == 2
    assert [d[:2] for d in inventory.active] == [(1, 0), (2, 16 * PAGE_SIZE), (3, NO_ADDRESS)]
    assert inventory.archives == ((1, 0, 16 * PAGE_SIZE - 1, ("CSQARC1.A0000001", "CSQARC2.A0000001"), False),)


@pytest.mark.parametrize("damage, reason", [
    (lambda raw: raw[:len(raw) // 2], "magic or checksum"),
    (lambda raw: b"", "magic or checksum"),
    (lambda raw: raw[:20] + bytes([raw[20] ^ 1]) + raw[21:], "magic or checksum"),
    (lambda raw: b"MQLX" + raw[4:], "magic or checksum"),
])
def test_a_copy_cut_short_or_changed_is_refused_naming_it(damage, reason):
    with pytest.raises(LogFormatError, match=f"not a valid BSDS \\({reason}\\)") as refused:
        BsdsInventory.from_bytes(damage(written_by_a_space()), "BSDS02")
    assert refused.value.source == "BSDS02"


def test_a_bsds_from_before_the_page_sets_recovery_point_restarts_at_its_checkpoint():
    # a copy written before the BSDS kept where redo must begin reads as "at the checkpoint"
    from mqlog.zos.bsds import decode_bsds, encode_bsds
    data, problem = decode_bsds(written_by_a_space())
    assert problem is None and "redo_from" in data
    del data["redo_from"]
    assert BsdsInventory.from_bytes(encode_bsds(data), "BSDS01").redo_from == NO_ADDRESS

