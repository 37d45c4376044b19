"""Log pages and the log buffer: good, stale, unwritten and torn pages; addresses, cuts, rewrites, padding."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mqlog.core.format.pages import (
    FLAG_AFTER_PAD,
    FLAG_PARTIAL,
    NO_FIRST_RECORD,
    PAGE_SIZE,
    STALE,
    TORN,
    UNWRITTEN,
    LogBuffer,
    advance,
    build_page,
    check_page,
)

SECTOR = 512
HEADER = 32
PAYLOAD = PAGE_SIZE - HEADER  # 4064
_HDR = struct.Struct("<4sBBHQQHHI")  # documented page header layout

FAST = settings(max_examples=40, deadline=None)


def payload_of(page: bytes) -> bytes:
    """The used payload bytes of a page, read by the documented header layout."""
    used = _HDR.unpack_from(page)[6]
    return page[HEADER:HEADER + used]


def flip(raw: bytes, bit: int) -> bytes:
    out = bytearray(raw)
    out[bit // 8] ^= 1 << (bit % 8)
    return bytes(out)


addresses = st.integers(0, 2**40).map(lambda n: n * PAGE_SIZE)


@st.composite
def pages(draw):
    payload = draw(st.binary(max_size=PAYLOAD))
    first = draw(st.one_of(st.just(NO_FIRST_RECORD), st.integers(0, max(len(payload) - 1, 0)))) \
        if payload else NO_FIRST_RECORD
    return draw(addresses), draw(st.integers(0, 2**64 - 1)), payload, first, draw(st.sampled_from([0, 1, 2, 3]))


# --- build_page / check_page -------------------------------------------------------------------

@FAST
@given(pages())
def test_good_page_passes_with_its_fields(p):
    address, write_no, payload, first, flags = p
    raw = build_page(address, write_no, payload, first, flags)
    assert len(raw) == PAGE_SIZE
    header, problem = check_page(raw, address)
    assert problem is None
    assert (header.address, header.write_no, header.used, header.first_record, header.flags) == \
        (address, write_no, len(payload), first, flags)
    assert payload_of(raw) == payload


@FAST
@given(pages(), addresses)
def test_page_at_another_address_is_stale(p, expected):
    address, write_no, payload, first, flags = p
    if expected == address:
        expected += PAGE_SIZE
    header, problem = check_page(build_page(address, write_no, payload, first, flags), expected)
    assert problem is STALE
    assert header.address == address  # the reader can tell which lap the page came from


@settings(max_examples=150, deadline=None)
@given(pages(), st.integers(0, PAGE_SIZE * 8 - 1))
def test_any_flipped_bit_makes_a_page_not_good(p, bit):
    address, write_no, payload, first, flags = p
    raw = flip(build_page(address, write_no, payload, first, flags), bit)
    _, problem = check_page(raw, address)
    assert problem is not None


def test_all_zero_page_and_missing_page_are_unwritten():
    assert check_page(bytes(PAGE_SIZE), 0) == (None, UNWRITTEN)
    assert check_page(b"", 8192) == (None, UNWRITTEN)


def test_page_cut_short_is_torn_not_unwritten():
    # A file that ends part-way into a page that was being written: some of its sectors
    # landed. That is a tear, not the clean end of a log.
    raw = build_page(4096, 3, b"r" * 3000, 0)
    for keep in (SECTOR, 3 * SECTOR, PAGE_SIZE - 1):
        assert check_page(raw[:keep], 4096) == (None, TORN)


def _framed(address, write_no, payload, used, first, version=1, flags=0, index=0) -> bytes:
    """A page built by hand from the documented layout, with a correct checksum."""
    import zlib
    head = _HDR.pack(b"MQLP", version, flags, index, address, write_no, used, first, 0)
    body = payload.ljust(PAYLOAD, b"\0")
    return head[:28] + zlib.crc32(head + body).to_bytes(4, "little") + body


def test_hand_built_page_matches_build_page():
    assert _framed(8192, 5, b"abc", 3, 0) == build_page(8192, 5, b"abc", 0)


@pytest.mark.parametrize("used,first,version", [
    (PAYLOAD + 1, 0, 1),  # more payload than a page holds
    (100, 100, 1),  # first record at or past the used bytes
    (100, 0, 2),  # a format version this reader does not know
])
def test_well_checksummed_but_malformed_header_is_not_good(used, first, version):
    _, problem = check_page(_framed(4096, 1, b"x" * 100, used, first, version), 4096)
    assert problem is not None and problem is not STALE


def _mix(new: bytes, old: bytes, from_new) -> bytes:
    return b"".join((new if i in from_new else old)[i * SECTOR:(i + 1) * SECTOR] for i in range(PAGE_SIZE // SECTOR))


@pytest.mark.parametrize("k", range(1, PAGE_SIZE // SECTOR))
def test_torn_page_first_k_sectors_new_rest_old_is_torn(k):
    address = 40 * PAGE_SIZE
    old = build_page(address, 7, bytes(range(256)) * 15 + b"o" * 224, 0)  # a full page, write 7
    new = build_page(address, 9, b"N" * PAYLOAD, NO_FIRST_RECORD)  # rewritten by write 9
    assert check_page(_mix(new, old, set(range(k))), address) == (None, TORN)
    assert check_page(_mix(new, old, set(range(k, 8))), address) == (None, TORN)


@FAST
@given(st.binary(min_size=1, max_size=PAYLOAD - 1), st.binary(min_size=1, max_size=PAYLOAD),
       st.sets(st.integers(0, 7)))
def test_partial_page_rewrite_torn_anyhow_is_good_only_if_it_equals_a_version(old_data, more, landed):
    # The writer rewrites a partial page with the old bytes plus more: whatever subset of
    # sectors lands, the page is good only if it is byte-for-byte the old or the new page.
    address = 3 * PAGE_SIZE
    new_data = (old_data + more)[:PAYLOAD]
    old = build_page(address, 4, old_data, 0, FLAG_PARTIAL)
    new = build_page(address, 5, new_data, 0, FLAG_PARTIAL if len(new_data) < PAYLOAD else 0)
    mixed = _mix(new, old, landed)
    header, problem = check_page(mixed, address)
    if mixed in (new, old):
        assert problem is None and header.write_no == (5 if mixed == new else 4)
    else:
        assert problem is TORN


# --- LogBuffer: addresses ---------------------------------------------------------------------

record_sizes = st.lists(st.integers(1, 10_000), min_size=1, max_size=30)


def _records(sizes):
    return [bytes([i % 256]) * n for i, n in enumerate(sizes)]


@FAST
@given(record_sizes, st.integers(0, 3).map(lambda n: n * PAGE_SIZE))
def test_append_addresses_increase_skip_headers_and_agree_with_advance(sizes, start):
    buf = LogBuffer(start)
    prev_end = start + HEADER
    for rec in _records(sizes):
        assert buf.next_address == prev_end
        addr = buf.append(rec)
        assert addr == prev_end
        assert addr % PAGE_SIZE >= HEADER
        prev_end = advance(addr, len(rec))
        assert prev_end % PAGE_SIZE >= HEADER
        assert prev_end > addr
    assert buf.next_address == prev_end


@FAST
@given(addresses, st.integers(HEADER, PAGE_SIZE - 1), st.integers(0, 3 * PAYLOAD), st.integers(0, 3 * PAYLOAD))
def test_advance_counts_payload_bytes_only(page, in_page, a, b):
    start = page + in_page
    # composition, and payload bytes between two addresses
    assert advance(advance(start, a), b) == advance(start, a + b)
    end = advance(start, a)
    pages_between = (end - end % PAGE_SIZE - page) // PAGE_SIZE
    assert end - start - pages_between * HEADER == a


def _cut_all(buf, write_no=1):
    run = buf.cut(write_no)
    assert run is not None
    return run


def _check_run(run):
    out = []
    for i, raw in enumerate(run.pages):
        header, problem = check_page(raw, run.first_address + i * PAGE_SIZE)
        assert problem is None
        out.append(header)
    return out


@FAST
@given(record_sizes, st.integers(1, 6))
def test_a_cut_of_at_most_n_pages_leaves_the_rest_to_the_next_cut_byte_for_byte(sizes, n):
    """A write carries at most ``max_pages`` (z/OS: 128 CIs an I/O): the cuts that follow one
    another carry every byte appended, in order, each ending on a whole page but the last."""
    buf = LogBuffer(0)
    recs = _records(sizes)
    for r in recs:
        buf.append(r)
    runs = []
    while (run := buf.cut(len(runs) + 1, max_pages=n)) is not None:
        assert len(run.pages) <= n
        _check_run(run)
        runs.append(run)
        buf.release(run)
    assert b"".join(payload_of(p) for run in runs for p in run.pages) == b"".join(recs)
    for a, b in zip(runs, runs[1:]):
        assert not a.ends_partial and len(a.pages) == n  # only the last may be short or partial
        assert b.first_address == a.first_address + n * PAGE_SIZE == a.end_address - HEADER
        assert not b.rewrites_partial
    assert sum(r.new_bytes for r in runs) == sum(sizes)
    assert runs[-1].end_address == buf.next_address


@FAST
@given(record_sizes)
def test_cut_pages_reproduce_the_appended_bytes_and_first_record_offsets(sizes):
    buf = LogBuffer(0)
    recs = _records(sizes)
    addrs = [buf.append(r) for r in recs]
    run = _cut_all(buf)
    headers = _check_run(run)
    assert run.first_address == 0
    assert b"".join(payload_of(p) for p in run.pages) == b"".join(recs)
    assert not run.rewrites_partial
    assert run.end_address == buf.next_address == advance(addrs[-1], len(recs[-1]))
    assert run.new_bytes == sum(sizes)
    assert run.ends_partial == (sum(sizes) % PAYLOAD != 0)
    # first-record offsets, derived from the addresses append returned
    for i, h in enumerate(headers):
        page = i * PAGE_SIZE
        starts = [a - page - HEADER for a in addrs if page <= a < page + PAGE_SIZE]
        assert h.first_record == (min(starts) if starts else NO_FIRST_RECORD)
        assert bool(h.flags & FLAG_PARTIAL) == (h.used < PAYLOAD)
        assert not h.flags & FLAG_AFTER_PAD
    assert buf.cut(2) is None  # nothing left to write


def test_records_span_pages():
    buf = LogBuffer(0)
    a = buf.append(b"a" * 5000)
    b = buf.append(b"b" * 9000)
    run = _cut_all(buf)
    assert len(run.pages) == 4  # 14000 bytes over 4064-byte payloads
    assert (a, b) == (HEADER, PAGE_SIZE + HEADER + (5000 - PAYLOAD))
    headers = _check_run(run)
    assert [h.first_record for h in headers] == [0, 5000 - PAYLOAD, NO_FIRST_RECORD, NO_FIRST_RECORD]


@FAST
@given(st.lists(record_sizes, min_size=2, max_size=6))
def test_release_then_recut_rewrites_the_partial_page_with_old_and_new_bytes(batches):
    buf = LogBuffer(0)
    disk: dict[int, bytes] = {}
    appended = b""
    for write_no, sizes in enumerate(batches, start=1):
        before_end = buf.next_address
        recs = _records(sizes)
        for r in recs:
            buf.append(r)
        appended += b"".join(recs)
        run = _cut_all(buf, write_no)
        # a run starts on the page holding the old end: a rewrite iff that page was partly on disk
        assert run.first_address == before_end - before_end % PAGE_SIZE
        assert run.rewrites_partial == (write_no > 1 and before_end % PAGE_SIZE != HEADER)
        assert run.new_bytes == sum(sizes)
        for i, (h, raw) in enumerate(zip(_check_run(run), run.pages)):
            assert h.write_no == write_no
            disk[run.first_address + i * PAGE_SIZE] = raw
        buf.release(run)
        # what is on disk now is exactly everything appended so far
        assert b"".join(payload_of(disk[a]) for a in sorted(disk)) == appended


def test_pad_policy_starts_next_record_on_a_fresh_page():
    buf = LogBuffer(0)
    seen = []
    buf.pad_policy = lambda used: seen.append(used) or True
    buf.append(b"x" * 1000)
    run1 = _cut_all(buf, 1)
    assert run1.ends_partial
    buf.release(run1)
    b = buf.append(b"y" * 500)
    assert seen == [1000]  # the policy is asked with the bytes the page already holds
    assert b == PAGE_SIZE + HEADER  # a fresh page
    c = buf.append(b"z" * 200)  # the page is not on its way to disk yet: no padding
    assert c == b + 500
    run2 = _cut_all(buf, 2)
    assert run2.first_address == PAGE_SIZE  # the padded page is not rewritten
    assert not run2.rewrites_partial
    assert run2.new_bytes == 700
    (h,) = _check_run(run2)
    assert h.flags & FLAG_AFTER_PAD
    assert payload_of(run2.pages[0]) == b"y" * 500 + b"z" * 200
    buf.release(run2)
    # Rewriting that partial page keeps the flag: it still follows the padded page (without
    # it a reader would take the rewrite for a lost rewrite of page 0)
    buf.pad_policy = lambda used: False
    buf.append(b"w" * 10)
    run3 = _cut_all(buf, 3)
    (h3,) = _check_run(run3)
    assert h3.address == PAGE_SIZE and h3.flags & FLAG_AFTER_PAD and run3.rewrites_partial
    buf.release(run3)
    # and the next page, which follows a page that filled up, is not flagged
    buf.append(b"v" * (PAYLOAD - 710 + 5))
    run4 = _cut_all(buf, 4)
    assert [bool(h.flags & FLAG_AFTER_PAD) for h in _check_run(run4)] == [True, False]


def test_pad_policy_can_decline():
    buf = LogBuffer(0)
    buf.pad_policy = lambda used: used > 2000
    buf.append(b"x" * 1000)
    buf.release(_cut_all(buf, 1))
    assert buf.append(b"y") == HEADER + 1000  # declined: the partial page is rewritten
    run = _cut_all(buf, 2)
    assert run.rewrites_partial
    buf.release(run)
    buf.append(b"z" * 2000)
    buf.release(_cut_all(buf, 3))
    assert buf.append(b"q") == PAGE_SIZE + HEADER  # 3001 bytes used: padded


def test_pad_while_the_partial_page_is_still_in_flight():
    # The write carrying the partial page has been cut but not yet completed when the next
    # record arrives: it still goes to a fresh page, and the in-flight page is not re-cut.
    buf = LogBuffer(0)
    buf.pad_policy = lambda used: True
    buf.append(b"x" * 100)
    run1 = _cut_all(buf, 1)
    assert buf.append(b"y" * 100) == PAGE_SIZE + HEADER
    buf.release(run1)
    run2 = _cut_all(buf, 2)
    assert run2.first_address == PAGE_SIZE and len(run2.pages) == 1
    buf.release(run2)
    assert buf.append(b"z") == 2 * PAGE_SIZE + HEADER  # the policy pads again
    run3 = _cut_all(buf, 3)
    assert run3.first_address == 2 * PAGE_SIZE and _check_run(run3)[0].flags & FLAG_AFTER_PAD


@FAST
@given(record_sizes, record_sizes)
def test_resume_continues_a_log_at_its_end(first_sizes, more_sizes):
    old = LogBuffer(0)
    recs = _records(first_sizes)
    addrs = [old.append(r) for r in recs]
    run = _cut_all(old, 1)
    end = run.end_address
    tail_page = run.pages[-1]
    tail = payload_of(tail_page) if run.ends_partial else b""
    tail_first = _HDR.unpack_from(tail_page)[7] if run.ends_partial else NO_FIRST_RECORD

    buf = LogBuffer.resume(end, tail, first_record=tail_first)
    assert buf.next_address == end
    more = _records(more_sizes)
    new_addrs = [buf.append(r) for r in more]
    assert new_addrs[0] == end
    run2 = _cut_all(buf, 2)
    assert run2.rewrites_partial == run.ends_partial
    assert run2.new_bytes == sum(more_sizes)
    headers = _check_run(run2)
    assert b"".join(payload_of(p) for p in run2.pages) == tail + b"".join(more)
    # the rewritten tail page still names the first record that starts in it
    all_addrs = addrs + new_addrs
    for h in headers:
        starts = [a - h.address - HEADER for a in all_addrs if h.address <= a < h.address + PAGE_SIZE]
        assert h.first_record == (min(starts) if starts else NO_FIRST_RECORD)


def test_resume_refuses_a_tail_of_the_wrong_length():
    with pytest.raises(ValueError):
        LogBuffer.resume(HEADER + 100, b"x" * 99)
    with pytest.raises(ValueError):
        LogBuffer(100)  # a log starts on a page boundary


def test_complete_before_stops_at_a_record_that_runs_past_the_first_page():
    """What TripleWrite's spare copy of a run's first page makes durable: the run's end if it
    ends there (even when later appends, made while the run is in flight, already run on past
    that page), the page's end if a record begins right after it, else the start of the record
    that runs on past it."""
    from mqlog.core.format.pages import PAGE_HEADER_SIZE, PAGE_PAYLOAD, PAGE_SIZE, LogBuffer

    buf = LogBuffer(0)
    buf.append(b"a" * 100)
    run = buf.cut(1)
    buf.append(b"b" * (2 * PAGE_PAYLOAD))  # appended while that run is in flight: runs past page 0
    assert buf.complete_before(0, run.end_address) == run.end_address

    buf = LogBuffer(0)
    buf.append(b"a" * 100)
    spanning = buf.append(b"b" * PAGE_PAYLOAD)  # begins on page 0, ends on page 1
    run = buf.cut(1)
    assert buf.complete_before(0, run.end_address) == spanning

    buf = LogBuffer(0)
    buf.append(b"a" * PAGE_PAYLOAD)  # exactly one page
    after = buf.append(b"b" * 100)  # begins on page 1
    run = buf.cut(1)
    assert after == PAGE_SIZE + PAGE_HEADER_SIZE
    assert buf.complete_before(0, run.end_address) == after
