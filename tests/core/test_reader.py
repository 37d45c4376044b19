"""Reading the log back after damage, table-driven in the style of etcd's WAL tests.

Logs are made by driving the real :class:`LogWriter` in SimPy: a few applications run
units of work (5-9 KiB messages that span pages, small gets, commits) and out-of-syncpoint
puts, so there are many physical writes, group commits, partial-page rewrites and records
spanning pages. Each table row damages the stored log one way and says what reading it
must give: an error, or how many of the written records come back and why the log ended.
Expected counts come from the addresses the writer handed out, never from the reader.
"""

from __future__ import annotations


import pytest
import simpy
from mqlog.core.disk.devices import Device, get_profile
from mqlog.core.errors import LogCorruptionError, SimulatedCrash
from mqlog.core.disk.faults import FaultInjectingStorage, FaultPlan
from mqlog.core.format.pages import PAGE_SIZE, STALE, build_page
from mqlog.core.log.reader import LOST_REWRITE, LogReader, scan
from mqlog.core.format.records import Commit, Get, Put
from mqlog.core.log.space import ReferenceLogSpace
from mqlog.core.disk.storage import MemoryStorage
from mqlog.core.log.writer import LogWriter
from readerlogs import (FILE, HEADER, PAGE_HDR, Run, make_log, clean, read, copy_of,
                        page_written_by_many_later, page_with_record_start, page_crossed_into,
                        page_not_crossed_into, mid_page_not_crossed_into, last_page, flip, truncate_mid,
                        truncate_at, zero, zero_from, flip_in, bad_record_good_page, bad_length_good_page,
                        stale, upto)


def test_workload_exercises_what_the_table_needs():
    for pad in (False, True):
        run = clean(pad)
        pages = run.pages()
        writes = [p[5] for p in pages]
        assert run.physical_writes >= 20
        assert len(set(writes)) >= 10
        assert any(run.crosses_into(i * PAGE_SIZE) for i in range(1, len(pages)))  # spanning records
        assert run.acked == run.end_of(len(run.records) - 1)  # everything was forced
        assert run.stats.forces > run.physical_writes  # group commit happened
    assert clean(False).stats.partial_page_rewrites >= 5
    assert clean(True).stats.partial_page_rewrites == 0
    assert sum(1 for p in clean(True).pages() if p[2] & 2) >= 5  # AFTER_PAD pages


# --- the damage table ---------------------------------------------------------------------------

CASES = [
    # (id, padded log?, damage, expected: an exception type, or f(run) -> (records, reason, page))
    ("clean", False, None, lambda run: (len(run.records), "end", None)),
    ("clean-padded", True, None, lambda run: (len(run.records), "end", None)),
    ("truncated-mid-page", True, truncate_mid(page_not_crossed_into), upto(page_not_crossed_into)),
    ("truncated-mid-page-in-a-record", False, truncate_mid(page_crossed_into), upto(page_crossed_into)),
    ("truncated-at-last-page", False, truncate_at(last_page), upto(last_page, "end")),
    # a single copy cannot tell a flipped bit in its last page from a torn last write
    ("bit-flip-in-last-page", True, flip_in(last_page), upto(last_page, "torn")),
    ("bit-flip-in-last-page-header", False, flip_in(last_page, at=9), upto(last_page, "torn")),
    ("bit-flip-mid-log", False, flip_in(page_written_by_many_later), LogCorruptionError),
    ("bit-flip-mid-log-padded", True, flip_in(page_written_by_many_later), LogCorruptionError),
    ("zeroed-page-mid-log", False, zero(page_written_by_many_later), LogCorruptionError),
    ("bad-record-checksum-in-good-page", False, bad_record_good_page, LogCorruptionError),
    ("bad-record-length-in-good-page", False, bad_length_good_page, LogCorruptionError),
    ("bad-record-checksum-in-good-page-padded", True, bad_record_good_page, LogCorruptionError),
    ("stale-page-at-the-tail", True, stale(page_not_crossed_into), upto(page_not_crossed_into, "end")),
    # a stale page with good pages from later writes after it: a write that completed is
    # missing (at a circular log's head the pages after it are stale too, so that ends)
    ("stale-page-mid-log", True, stale(mid_page_not_crossed_into), LogCorruptionError),
    ("stale-page-where-a-record-continues", False, stale(page_crossed_into), upto(page_crossed_into, "end")),
    # a record spanning pages whose second page is lost: fewer records, not an error
    ("second-page-of-spanning-record-lost", False, truncate_at(page_crossed_into), upto(page_crossed_into)),
    ("second-page-of-spanning-record-zeroed", False, zero_from(page_crossed_into), upto(page_crossed_into)),
]


@pytest.mark.parametrize("name,pad,damage,expected", CASES, ids=[c[0] for c in CASES])
def test_damaged_log(name, pad, damage, expected):
    run = clean(pad)
    storage = copy_of(run)
    if damage is not None:
        damage(run, storage)
    if isinstance(expected, type):
        with pytest.raises(expected) as info:
            read(storage)
        err = info.value
        assert err.source == FILE and FILE in str(err)
        assert err.offset is not None and f"offset {err.offset}" in str(err)
        return
    count, reason, page = expected(run)
    records, end = read(storage)
    assert end.reason == reason
    assert records == list(run.records[:count])
    # where a writer would resume: just past the last good record
    assert end.address == (run.end_of(count - 1) if count else HEADER)
    if page is not None:
        assert end.page_address == page
        assert end.source == FILE and end.offset == page
    if name.startswith("stale"):
        assert end.problem == str(STALE)


def test_mid_log_damage_names_file_and_offset_of_the_bad_page():
    run = clean(False)
    p = page_written_by_many_later(run)
    storage = copy_of(run)
    flip(storage, p + 2000)
    with pytest.raises(LogCorruptionError) as info:
        read(storage)
    assert info.value.offset == p
    assert f"{FILE}, offset {p}" in str(info.value)


@pytest.mark.parametrize("pages", [2, 5, 16])
def test_damage_spanning_several_hardened_pages_is_corruption_not_the_end(pages):
    """A run of damaged pages in the middle of the log, good pages from later writes after
    it: not a torn end (which would silently drop every later record) but corruption."""
    run = clean(False)
    p = page_written_by_many_later(run, damaged=pages)
    storage = copy_of(run)
    for k in range(pages):
        storage.write(FILE, p + k * PAGE_SIZE, b"\xEE" * PAGE_SIZE)
    assert p + pages * PAGE_SIZE < storage.size(FILE), "the damage reaches the end of this log"
    with pytest.raises(LogCorruptionError) as info:
        read(storage)
    assert info.value.offset == p


def test_bad_record_in_good_page_names_the_record_offset():
    run = clean(False)
    p = page_with_record_start(run)
    storage = copy_of(run)
    bad_record_good_page(run, storage)
    first = PAGE_HDR.unpack_from(storage.read(FILE, p, 32))[7]
    with pytest.raises(LogCorruptionError) as info:
        read(storage)
    assert info.value.offset == p + HEADER + first
    assert "checksum" in str(info.value)


# --- crashes and tears at every physical write ------------------------------------------------

def _check_survivor(full: Run, crashed: Run):
    records, end = read(crashed.storage)
    n = len(records)
    assert records == list(full.records[:n]), "readable records are not a prefix of the run's"
    covered = sum(1 for a, _ in crashed.records if a < crashed.acked)
    assert n >= covered, f"{covered - n} records a completed force covered are missing"
    return records, end


@pytest.mark.parametrize("pad", [False, True], ids=["rewrite", "pad"])
def test_crash_after_each_physical_write(pad):
    full = clean(pad)
    seen = []
    for k in range(full.physical_writes + 1):
        crashed = make_log(FaultPlan(crash_after_writes=k), pad=pad)
        assert crashed.crashed == (k < full.physical_writes)
        records, end = _check_survivor(full, crashed)
        assert end.reason == "end"  # nothing of the crashed write landed: a clean end
        seen.append(len(records))
    assert seen == sorted(seen) and seen[0] == 0 and seen[-1] == len(full.records)


@pytest.mark.parametrize("mode", ["prefix", "random"])
def test_tear_each_write_of_a_padded_log(mode):
    # With padding no write rewrites a page an earlier write put on disk, so a torn write
    # can only lose what was in flight: everything acknowledged before comes back.
    full = clean(True)
    for n in range(1, full.physical_writes + 1):
        torn = make_log(FaultPlan(tear_write=n, tear_mode=mode, seed=n), pad=True)
        assert torn.crashed
        _, end = _check_survivor(full, torn)
        assert end.reason in ("end", "torn", "incomplete")


def test_torn_last_write_returns_every_acknowledged_record():
    full = clean(True)
    last = full.pages()[-1]
    assert last[5] == full.physical_writes and last[7] == 0  # the last write is one fresh page
    torn = make_log(FaultPlan(tear_write=full.physical_writes), pad=True)
    records, end = _check_survivor(full, torn)
    assert end.reason == "torn"
    assert records == list(full.records[:-1])
    assert end.page_address == last_page(full)


@pytest.mark.parametrize("mode", ["prefix", "random"])
def test_torn_partial_page_rewrite_without_padding_still_reads_a_prefix(mode):
    # Without padding (or TripleWrite, which the platform adds), tearing a rewrite of a
    # partial page can take records that an earlier force acknowledged with it: the reader
    # can only return a prefix and report the tear. (Demonstrated, not endorsed.)
    # In "random" mode a rewrite can also be lost while later pages of the same write
    # land: the old partial page is then followed by a good page that does not continue it.
    full = clean(False)
    lost_acked = False
    for n in range(1, full.physical_writes + 1):
        torn = make_log(FaultPlan(tear_write=n, tear_mode=mode, seed=n))
        records, end = read(torn.storage)
        assert records == list(full.records[:len(records)])
        assert end.reason in ("end", "torn", "incomplete")
        covered = sum(1 for a, _ in torn.records if a < torn.acked)
        lost_acked |= len(records) < covered
    assert lost_acked


def test_lost_partial_page_rewrite_ends_the_log_at_the_old_page():
    # Write N rewrote partial page P and went on to P+1: P+1 landed, the rewrite of P did
    # not (a torn write can land any subset of sectors). The old P is a good page, and so
    # is P+1, but P+1 does not continue P: the log ends after the old P, as a torn write.
    full = clean(False)
    pages = full.pages()
    for i in range(len(pages) - 1):
        n = pages[i][5]
        if n < 2 or pages[i + 1][5] != n:
            continue
        before = make_log(FaultPlan(crash_after_writes=n - 1))
        old = PAGE_HDR.unpack_from(before.storage.read(FILE, i * PAGE_SIZE, PAGE_SIZE) or bytes(32))
        if old[0] == b"MQLP" and old[6] < 4064:
            break
    else:
        raise AssertionError("workload has no partial-page rewrite that continues onto a new page")
    p = i * PAGE_SIZE
    image = before.storage
    later = [j for j in range(i + 1, len(pages)) if pages[j][5] == n]
    for j in later:
        image.write(FILE, j * PAGE_SIZE, full.storage.read(FILE, j * PAGE_SIZE, PAGE_SIZE))
    records, end = read(image)
    old_end = p + HEADER + old[6]
    assert records == list(full.records[:full.ending_by(old_end)])
    assert end.address == old_end
    # the page named is the short page whose rewrite was lost
    assert (end.reason, end.problem, end.page_address, end.offset) == ("torn", str(LOST_REWRITE), p, p)
    assert end.discarded_pages == len(later)


@pytest.mark.parametrize("pad", [False, True], ids=["rewrite", "pad"])
def test_reading_from_any_record_address_gives_the_rest(pad):
    run = clean(pad)
    for i in range(0, len(run.records), 5):
        records, end = scan(ReferenceLogSpace(run.storage), run.records[i][0])
        assert records == list(run.records[i:])
        assert end.reason == "end" and end.address == run.end_of(len(run.records) - 1)


# --- where the final write began -----------------------------------------------------------

def test_damage_just_before_the_final_write_is_corruption_not_a_tear():
    # The final write's pages follow the damaged page, but that write began after it: the
    # damaged page was hardened by an earlier write whose force completed. Calling this a
    # torn tail would silently drop acknowledged records.
    full = clean(True)
    pages = full.pages()
    last_write = pages[-1][5]
    start = next(i for i, p in enumerate(pages) if p[5] == last_write)
    assert start >= 1 and pages[start][3] == 0  # index 0: the page where the final write began
    damaged = copy_of(full)
    flip(damaged, (start - 1) * PAGE_SIZE + 1000)
    with pytest.raises(LogCorruptionError) as err:
        read(damaged)
    assert f"offset {(start - 1) * PAGE_SIZE}" in str(err.value)


def test_damage_inside_the_final_write_is_a_tear():
    full = clean(True)
    pages = full.pages()
    last_write = pages[-1][5]
    members = [i for i, p in enumerate(pages) if p[5] == last_write]
    damaged = copy_of(full)
    flip(damaged, members[0] * PAGE_SIZE + 2000)
    records, end = read(damaged)
    assert end.reason == "torn"
    assert end.discarded_pages == len(members) - 1
    assert records == list(full.records[:full.ending_by(members[0] * PAGE_SIZE)])


def _restart(storage):
    """Read the log, resume a writer at its end (as restart does); return it and the records."""
    reader = LogReader(ReferenceLogSpace(storage), 0)
    before = list(reader)
    env = simpy.Environment()
    writer = LogWriter.resume(env, ReferenceLogSpace(storage), Device(env, get_profile("ram")), reader)
    return env, writer, before


def test_write_numbers_continue_after_a_restart_so_a_tear_then_is_still_a_tear():
    full = clean(False)
    # Restart: read the log, resume the buffer at its end, and go on writing.
    storage = FaultInjectingStorage(copy_of(full), FaultPlan(tear_write=1, tear_mode="prefix", seed=3))
    env, writer, before = _restart(storage)

    def more():
        for k in range(3):
            yield from writer.put(Put("AFTER", k.to_bytes(24, "little"), b"n" * 6000, uow=77))
        yield from writer.put(Commit(0, 3, uow=77))
        yield writer.force()

    env.process(more())
    with pytest.raises(SimulatedCrash):
        env.run()
    records, end_after = read(storage.durable)
    assert records[:len(before)] == before  # nothing acknowledged before the restart is lost
    assert end_after.reason in ("torn", "incomplete")


def test_resumed_writer_appends_a_readable_log():
    full = clean(True)
    storage = copy_of(full)
    env, writer, before = _restart(storage)
    added = []

    def more():
        for k in range(4):
            added.append((yield from writer.put(Get("AFTER", k.to_bytes(24, "little"), k, 10, uow=5))))
            yield writer.force()

    env.process(more())
    env.run()
    records, end_after = read(storage)
    assert records[:len(before)] == before
    assert [a for a, _ in records[len(before):]] == added
    numbers = [p[5] for p in (PAGE_HDR.unpack_from(storage.read(FILE, o, 32)) for o in range(0, storage.size(FILE), PAGE_SIZE))]
    assert numbers == sorted(numbers)  # write numbers never go down along the log
    assert end_after.reason == "end"


def test_pages_of_a_discarded_torn_write_never_come_back_after_a_restart():
    # Write 2 (three full pages) is cut short: its first page never lands, so the reader
    # discards the other two. After a restart the log goes on over that first page; the
    # two leftovers after it must not be read as the continuation of the new write.
    storage = MemoryStorage()
    filler = 4064 - 750  # a put of this much data fills one page exactly

    def run(writer, env, plan):
        def app():
            for tag, uow, force in plan:
                yield from writer.put(Put("Q", tag.ljust(24, b"\0"), b"d" * filler, uow=uow))
                if force:
                    yield writer.force()
        env.process(app())
        env.run()

    env = simpy.Environment()
    first = LogWriter(env, ReferenceLogSpace(storage), Device(env, get_profile("ram")))
    run(first, env, [(b"acked", 1, True), (b"lost-0", 2, False), (b"lost-1", 2, False), (b"lost-2", 2, True)])
    storage.write(FILE, PAGE_SIZE, bytes(PAGE_SIZE))  # the crash: write 2's first page never landed
    env, writer, before = _restart(storage)
    assert [r.msg_id.rstrip(b"\0") for _, r in before] == [b"acked"]
    run(writer, env, [(b"after-restart", 3, True)])
    records, end = read(storage)
    assert [r.msg_id.rstrip(b"\0") for _, r in records] == [b"acked", b"after-restart"]
    assert end.problem is not None and "sequence" in end.problem


@pytest.mark.parametrize("change", ["write_no=0", "write_no+1000", "index+1"])
def test_a_good_checksum_out_of_sequence_page_mid_log_is_corruption(change):
    # A page that passes its checksum but breaks the write sequence, with the log going on
    # after it from later writes: acknowledged records would be lost by ending there.
    full = clean(True)
    pages = full.pages()
    last_write = pages[-1][5]
    candidates = [i for i, p in enumerate(pages) if 0 < i and p[5] != last_write and p[3] > 0]
    assert candidates
    for i in candidates:
        damaged = copy_of(full)
        raw = damaged.read(FILE, i * PAGE_SIZE, PAGE_SIZE)
        _, _, flags, index, address, write_no, used, first, _ = PAGE_HDR.unpack_from(raw)
        write_no = {"write_no=0": 0, "write_no+1000": write_no + 1000}.get(change, write_no)
        index = index + 1 if change == "index+1" else index
        damaged.write(FILE, i * PAGE_SIZE, build_page(address, write_no, raw[HEADER:HEADER + used], first, flags, index))
        with pytest.raises(LogCorruptionError):
            read(damaged)


# --- a page's records at once (restart's replay) ---------------------------------------------

def _page_of_last_byte(end: int) -> int:
    """The page holding the last byte of a record that ends at ``end`` (a payload position:
    a record that fills its page to the end ends at the next page's first payload byte)."""
    return end // PAGE_SIZE - 1 if end % PAGE_SIZE == HEADER else end // PAGE_SIZE


@pytest.mark.parametrize("pad", [False, True], ids=["rewrite", "pad"])
def test_batches_are_the_records_page_by_page(pad):
    run = clean(pad)
    batches = list(LogReader(ReferenceLogSpace(copy_of(run)), 0).batches())
    assert [r for batch in batches for r in batch] == list(run.records)
    position = {address: i for i, (address, _) in enumerate(run.records)}
    last_pages = [{_page_of_last_byte(run.end_of(position[a])) for a, _ in batch} for batch in batches]
    assert all(len(pages) == 1 for pages in last_pages), "a batch holds records ending in different pages"
    assert len(batches) == len({p for pages in last_pages for p in pages})  # one batch per page with an end


def test_batches_deliver_every_record_before_a_damaged_one_first():
    """A malformed record in a good page raises, but only after every record before it, its
    own page's among them, was handed over (as CSQ1LOGP prints up to the damage)."""
    run = clean(False)
    storage = copy_of(run)
    bad_record_good_page(run, storage)
    p = page_with_record_start(run)
    bad = p + HEADER + PAGE_HDR.unpack_from(storage.read(FILE, p, 32))[7]
    got = []
    with pytest.raises(LogCorruptionError, match="checksum"):
        for batch in LogReader(ReferenceLogSpace(storage), 0).batches():
            got.extend(batch)
    assert got == [r for r in run.records if r[0] < bad]
    assert _page_of_last_byte(run.end_of(len(got) - 1)) == p // PAGE_SIZE  # one ended in the bad page


# --- a bug in a decoder is a bug, not damage ----------------------------------------------------

@pytest.mark.parametrize("cls", [Get, Put], ids=["record-inside-a-page", "record-spanning-pages"])
def test_a_decoder_that_fails_with_a_bug_surfaces_as_that_bug(monkeypatch, cls):
    """Only the errors that mean bad bytes (struct.error, ValueError) make a record malformed:
    a TypeError from a broken decoder goes up as itself from both of the reader's paths (a
    record inside one page, a record reassembled across pages), never as corruption or a torn
    end. Get records sit inside a page; the 5-9 KiB puts span pages."""
    run = clean(False)
    assert any(isinstance(r, cls) for _, r in run.records)

    def broken(*args):
        raise TypeError("a bug in the decoder")

    monkeypatch.setattr(cls, "_from_body", classmethod(broken))
    with pytest.raises(TypeError, match="a bug in the decoder"):
        read(copy_of(run))


def test_a_decoder_bug_surfaces_from_restart_too(monkeypatch):
    """Restart reads the log with the same reader: a decoder bug stops it as that bug, not as
    a log it calls damaged (or ends early)."""
    from mqlog.core.format.records import Commit as CommitRecord
    from mqlog.core.workload.run import RunConfig, restart_run, run_workload
    from mqlog.core.workload.spec import BUILTINS, build_spec
    from mqlog.platforms import choose

    choice = choose("distributed")
    values = choice.configure({})
    spec = build_spec(BUILTINS["putget-pairs"], {"pairs": "2", "messages_per_pair": "10"}, origin="test")
    result = run_workload(RunConfig("distributed", choice.maker(values), values, spec, crash_after_writes=20),
                          MemoryStorage())
    assert result.crashed

    def broken(*args):
        raise TypeError("a bug in the decoder")

    monkeypatch.setattr(CommitRecord, "_from_body", classmethod(broken))
    with pytest.raises(TypeError, match="a bug in the decoder"):
        restart_run(choice.maker(values), result.storage.durable)


# --- a hole of several pages: synthetic page sources ------------------------------------------
#
# A log made page by page: every page holds one whole record (a put tagged with its page
# number) and belongs to a write of WRITE_PAGES pages, numbered as a writer numbers them.
# Each test puts a run of bad pages somewhere and says what must be read. The distributed
# and z/OS restarts over real files are in tests/test_restart_mechanisms.py.
