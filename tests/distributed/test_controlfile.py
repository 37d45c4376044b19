"""The log control file's format (distributed/controlfile.py): what to_bytes writes from_bytes
reads back field for field, and damage – a file cut short, a byte changed, fields out of
place – is refused naming the file, as restart refuses it."""

from __future__ import annotations

import json
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mqlog.core.disk.storage import MemoryStorage
from mqlog.core.errors import LogFormatError
from mqlog.core.format.pages import PAGE_SIZE, PageRun
from mqlog.core.format.records import NO_ADDRESS
from mqlog.distributed.controlfile import CONTROL_FILE, MAX_EXTENT_NUMBER, ControlFile, ExtentEntry
from mqlog.distributed.space import DistributedLogSpace

ADDRESS = st.one_of(st.just(NO_ADDRESS), st.integers(0, (1 << 64) - 2))


@st.composite
def control_files(draw):
    numbers = draw(st.lists(st.integers(0, MAX_EXTENT_NUMBER), unique=True, max_size=8))
    starts = draw(st.lists(st.integers(0, 1 << 40), unique=True, min_size=len(numbers), max_size=len(numbers)))
    extents = tuple(ExtentEntry(n, draw(st.booleans()), start if draw(st.booleans()) else NO_ADDRESS,
                                *draw(st.tuples(st.booleans(), st.booleans(), st.booleans())))
                    for n, start in zip(numbers, starts))
    linear = draw(st.booleans())
    ring = draw(st.lists(st.sampled_from(numbers), max_size=8)) if numbers else []
    if linear:  # (a linear ring may name extents reused since)
        ring += draw(st.lists(st.integers(0, MAX_EXTENT_NUMBER).filter(lambda n: n not in numbers), max_size=2))
    return ControlFile(
        linear=linear, extent_pages=draw(st.integers(1, 1 << 32)), checkpoint=draw(ADDRESS),
        checkpoint_number=draw(st.integers(0, 1 << 40)), tail=draw(ADDRESS), media=draw(ADDRESS),
        written_to=draw(ADDRESS), written_write=draw(st.integers(0, 1 << 40)),
        current=draw(st.one_of(st.none(), st.sampled_from(numbers))) if numbers else None,
        ring=tuple(ring), extents=extents)


@settings(max_examples=200, deadline=None)
@given(control_files())
def test_what_to_bytes_writes_from_bytes_reads_back(control):
    raw = control.to_bytes()
    assert ControlFile.from_bytes(raw) == control
    assert ControlFile.from_bytes(raw).to_bytes() == raw


def written_by_a_space() -> bytes:
    storage = MemoryStorage()
    space = DistributedLogSpace(storage, primary=3, secondary=2, file_pages=16)
    pages = tuple(bytes(PAGE_SIZE) for _ in range(20))  # (past the first extent: a switch saves the file)
    space.plan_write(PageRun(0, pages, False, False, len(pages) * PAGE_SIZE, 0))
    return storage.read(CONTROL_FILE, 0, storage.size(CONTROL_FILE))


def test_a_space_writes_the_bytes_its_record_gives_and_reads_them_back():
    raw = written_by_a_space()
    control = ControlFile.from_bytes(raw, file_pages=16)
    assert control.to_bytes() == raw
    assert control.current == 1 and control.ring == (0, 1, 2) and not control.linear
    assert [(e.number, e.start) for e in control.extents] == [(0, 0), (1, 16 * PAGE_SIZE), (2, NO_ADDRESS)]


@pytest.mark.parametrize("damage", [
    lambda raw: raw[:len(raw) // 2],  # cut short
    lambda raw: raw[:6],  # shorter than its header
    lambda raw: b"",
    lambda raw: raw[:20] + bytes([raw[20] ^ 1]) + raw[21:],  # a byte of the body changed
    lambda raw: b"MQLX" + raw[4:],  # another magic
])
def test_a_file_cut_short_or_changed_is_refused_by_its_checksum(damage):
    with pytest.raises(LogFormatError, match=r"not a valid log control file \(magic or checksum\)") as refused:
        ControlFile.from_bytes(damage(written_by_a_space()))
    assert refused.value.source == CONTROL_FILE


def rewritten(**fields) -> bytes:
    data = json.loads(written_by_a_space()[8:])
    data.update(fields)
    body = json.dumps(data).encode()
    return b"MQLD" + zlib.crc32(body).to_bytes(4, "little") + body


@pytest.mark.parametrize("fields, words", [
    ({"extent_pages": 32}, "the log's extents are 32 pages, the configuration says 16"),
    ({"type": "ROUND"}, "field 'type' is \"ROUND\", not 'LINEAR' or 'CIRCULAR'"),
    ({"extents": [[0, True, 0, False, False, False]] * 2}, "lists extent 0 twice"),
    ({"extents": [[0, True, 0, False, False, False], [1, True, 0, False, False, False]], "ring": [0, 1],
      "current": 0}, "gives two extents the same first address <0:0:0:0>"),
    ({"ring": [0, 1, 7]}, "the ring names S0000007.LOG, which its extent list does not have"),
    ({"current": "1"}, "field 'current' is '1', not one of its extents"),
])
def test_fields_out_of_place_are_refused_naming_them(fields, words):
    with pytest.raises(LogFormatError, match=words.replace("(", r"\(").replace(")", r"\)")) as refused:
        ControlFile.from_bytes(rewritten(**fields), file_pages=16)
    assert refused.value.source == CONTROL_FILE


def test_a_linear_ring_may_name_extents_reused_since():
    raw = rewritten(type="LINEAR", ring=[0, 1, 2, 9])
    assert ControlFile.from_bytes(raw).ring == (0, 1, 2, 9)
    space = DistributedLogSpace(MemoryStorage(), file_pages=16, linear=True)
    space.storage.replace(CONTROL_FILE, raw)
    space.load_control()
    assert space.ring == [0, 1, 2]  # (the space keeps the extents that exist)
