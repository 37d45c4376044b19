"""The log writer: forces, group commit, buffer waits, wrapped writes, statistics, determinism."""

from __future__ import annotations

import hashlib
import random

import pytest
import simpy
from mqlog.core.disk.devices import Device, get_profile
from mqlog.core.errors import ParameterError, SimulatedCrash
from mqlog.core.disk.faults import FaultInjectingStorage, FaultPlan
from mqlog.core.format.pages import PAGE_HEADER_SIZE, PAGE_SIZE
from mqlog.core.log.reader import scan
from mqlog.core.format.records import Commit, Get, Put
from mqlog.core.log.space import ReferenceLogSpace
from mqlog.core.disk.storage import DirectoryStorage, MemoryStorage
from mqlog.core.log.writer import LogWriter


def make(storage=None, device="ssd", **kwargs):
    env = simpy.Environment()
    storage = storage if storage is not None else FaultInjectingStorage(MemoryStorage())
    space = ReferenceLogSpace(storage)
    writer = LogWriter(env, space, Device(env, get_profile(device)), **kwargs)
    return env, space, writer


def committers(env, writer, n, commits, size, seed=1, think_us=50.0, log=None):
    """n applications, each: put + commit + force, with seeded think time between."""
    rng = random.Random(seed)

    def app(i, thinks):
        for k, think in enumerate(thinks):
            yield env.timeout(think)
            uow = i * 1000 + k + 1
            yield from writer.put(Put(f"Q{i}", k.to_bytes(24, "little"), bytes([i % 256]) * size, uow=uow))
            yield from writer.put(Commit(int(env.now), 1, uow=uow))
            asked = env.now
            yield writer.force()
            if log is not None:
                log.append((uow, asked, env.now))

    for i in range(n):
        env.process(app(i, [rng.expovariate(1 / think_us) for _ in range(commits)]))


def test_force_fires_only_once_the_write_is_on_disk():
    env, space, writer = make()
    seen = {}

    def app():
        yield from writer.put(Put("Q", bytes(24), b"m" * 100, uow=1))
        address = yield from writer.put(Commit(0, 1, uow=1))
        # Before the force nothing of it is durable.
        seen["before"] = scan(ReferenceLogSpace(space.storage.durable), 0)[0]
        t0 = env.now
        yield writer.force()
        seen["force_wait_us"] = env.now - t0
        seen["after"] = scan(ReferenceLogSpace(space.storage.durable), 0)[0]
        seen["commit"] = address

    env.process(app())
    env.run()
    assert seen["before"] == []
    # One page-sized write on the SSD profile: at least its latency passed.
    assert seen["force_wait_us"] >= get_profile("ssd").write_time_us(PAGE_SIZE)
    assert [type(r).__name__ for _, r in seen["after"]] == ["Put", "Commit"]
    assert seen["after"][1][0] == seen["commit"]


def test_records_in_syncpoint_are_not_written_until_a_force():
    env, space, writer = make(write_threshold_pages=20)

    def app():
        for k in range(5):  # well under 20 pages
            yield from writer.put(Put("Q", k.to_bytes(24, "little"), b"x" * 1000, uow=7))
        yield env.timeout(10_000)
        assert writer.stats.physical_writes == 0
        yield from writer.put(Commit(0, 5, uow=7))
        yield writer.force()
        assert writer.stats.physical_writes == 1

    env.process(app())
    env.run()
    assert writer.stats.forces == 1


def test_write_threshold_starts_a_write_nobody_forced():
    env, space, writer = make(write_threshold_pages=4)

    def app():
        for k in range(20):  # 20 x ~4.7 KiB: well past 4 pages
            yield from writer.put(Put("Q", k.to_bytes(24, "little"), b"y" * 4000, uow=9))
        yield env.timeout(100_000)

    env.process(app())
    env.run()
    assert writer.stats.forces == 0
    assert writer.stats.physical_writes >= 1
    assert writer.durable > writer.buffer.next_address - 4 * PAGE_SIZE


def test_group_commit_fewer_writes_than_commits_and_more_bytes_per_write():
    def run(n):
        env, space, writer = make()
        committers(env, writer, n, commits=30, size=2048)
        env.run()
        return writer.stats, n * 30

    one, commits_one = run(1)
    many, commits_many = run(10)
    assert one.physical_writes == commits_one  # alone, every commit is its own write
    assert many.physical_writes < commits_many
    assert many.logical_bytes / many.physical_writes > 2 * one.logical_bytes / one.physical_writes


def test_every_acknowledged_commit_is_in_the_log():
    log = []
    env, space, writer = make()
    committers(env, writer, 8, commits=20, size=700, log=log)
    env.run()
    records, end = scan(ReferenceLogSpace(space.storage.durable), 0)
    committed = {r.uow for _, r in records if isinstance(r, Commit)}
    assert {uow for uow, _, _ in log} <= committed
    assert end.reason == "end"


def test_buffer_full_makes_appenders_wait_and_nothing_is_lost():
    env, space, writer = make(device="nfs3", buffer_pages=18, write_threshold_pages=4)
    committers(env, writer, 6, commits=10, size=15_000, think_us=1.0)
    env.run()
    assert writer.stats.buffer_waits > 0
    assert writer.stats.buffer_high_water_bytes <= 18 * PAGE_SIZE + 16_000
    records, _ = scan(space, 0)
    assert sum(isinstance(r, Commit) for _, r in records) == 60


def test_a_record_larger_than_the_buffer_still_gets_written():
    env, space, writer = make(buffer_pages=4, write_threshold_pages=2)

    def app():
        yield from writer.put(Put("Q", bytes(24), b"z" * 15_000, uow=1))
        yield from writer.put(Put("Q", bytes(24), b"z" * 15_000, uow=1))
        yield from writer.put(Commit(0, 2, uow=1))
        yield writer.force()

    env.process(app())
    env.run()
    assert [type(r).__name__ for _, r in scan(space, 0)[0]] == ["Put", "Put", "Commit"]


def test_wrapped_buffer_is_one_vectored_write_or_two_plain_ones():
    def run(vectored):
        env, space, writer = make(buffer_pages=8, write_threshold_pages=8, vectored_writes=vectored)
        committers(env, writer, 4, commits=25, size=3000, think_us=20.0)
        env.run()
        records, end = scan(ReferenceLogSpace(space.storage.durable), 0)
        return writer.stats, sorted(r.uow for _, r in records if isinstance(r, Commit))

    v, v_commits = run(True)
    p, p_commits = run(False)
    assert v.wrapped_writes > 0 and p.wrapped_writes > 0
    # a wrapped cycle is one write vectored, two plain; every other cycle one write either way
    assert v.physical_writes == v.write_cycles
    assert p.physical_writes == p.write_cycles + p.wrapped_writes
    # Two writes take longer, so the grouping differs, but every commit is there either way.
    assert p_commits == v_commits and len(v_commits) == 100


def test_statistics_agree_with_the_writes_storage_saw():
    storage = FaultInjectingStorage(MemoryStorage())
    env, space, writer = make(storage)
    committers(env, writer, 5, commits=40, size=1500)
    env.run()
    stats = writer.stats
    sizes = [w.length for w in storage.write_log if w.kind == "write"]
    assert stats.physical_writes == len(sizes)
    assert stats.physical_bytes == sum(sizes)
    assert stats.write_size_max_bytes == max(sizes)
    assert stats.write_size_short_bytes == pytest.approx(sum(sizes[-64:]) / len(sizes[-64:]))
    assert stats.write_size_long_bytes == pytest.approx(sum(sizes[-1024:]) / len(sizes[-1024:]))
    # the size distribution: each write in the first bucket whose bound holds it
    histogram = dict(stats.as_dict()["write_size_histogram"])
    assert sum(histogram.values()) == len(sizes)
    assert histogram["<=4K"] == sum(1 for n in sizes if n <= 4096)
    assert histogram["<=8K"] == sum(1 for n in sizes if 4096 < n <= 8192)
    assert histogram["<=16K"] == sum(1 for n in sizes if 8192 < n <= 16384)
    assert stats.write_time_max_us >= stats.write_time_short_us > 0
    assert stats.write_time_short_max_us >= stats.write_time_short_us
    assert 0 < stats.write_time_max_at_us <= env.now
    assert stats.logical_bytes < stats.physical_bytes  # headers, padding and rewrites cost bytes
    assert stats.partial_page_rewrites > 0


def test_write_size_buckets_are_page_counts_by_powers_of_two():
    from mqlog.core.log.stats import WRITE_SIZE_BOUNDS, write_size_bucket, write_size_labels

    labels = write_size_labels()
    assert len(labels) == len(WRITE_SIZE_BOUNDS) + 1 and labels[0] == "<=4K" and labels[-1] == ">1M"
    for i, bound in enumerate(WRITE_SIZE_BOUNDS):
        assert write_size_bucket(bound) == i  # a bound belongs to its own bucket
        assert write_size_bucket(bound + 1) == i + 1
    assert write_size_bucket(1) == 0 and write_size_bucket(50 << 20) == len(WRITE_SIZE_BOUNDS)


def test_slower_device_gives_longer_writes_and_bigger_groups():
    def run(device):
        env, space, writer = make(device=device)
        committers(env, writer, 10, commits=20, size=2048)
        env.run()
        return writer.stats

    ssd, nfs = run("ssd"), run("nfs3")
    assert nfs.write_time_short_us > 10 * ssd.write_time_short_us
    assert nfs.physical_writes < ssd.physical_writes


def test_pad_policy_trades_rewrites_for_padding():
    def run(policy):
        env, space, writer = make(pad_policy=policy)
        committers(env, writer, 3, commits=30, size=500)
        env.run()
        return writer.stats, scan(space, 0)[0]

    rewrite, rec_rewrite = run(None)
    pad, rec_pad = run(lambda used: True)
    assert pad.partial_page_rewrites == 0 and pad.padded_pages > 0
    assert rewrite.partial_page_rewrites > 0 and rewrite.padded_pages == 0
    assert [type(r) for _, r in rec_pad] == [type(r) for _, r in rec_rewrite]


def test_crash_propagates_and_earlier_forces_survive():
    storage = FaultInjectingStorage(MemoryStorage(), FaultPlan(crash_after_writes=10))
    log = []
    env, space, writer = make(storage)
    committers(env, writer, 4, commits=20, size=800, log=log)
    with pytest.raises(SimulatedCrash):
        env.run()
    acknowledged = {uow for uow, _, _ in log}
    assert acknowledged
    records, end = scan(ReferenceLogSpace(storage.durable), 0)
    assert acknowledged <= {r.uow for _, r in records if isinstance(r, Commit)}


@pytest.mark.parametrize("kwargs, name", [
    (dict(buffer_pages=1), "buffer_pages"),
    (dict(buffer_pages=65_536), "buffer_pages"),
    (dict(buffer_pages=64, write_threshold_pages=65), "write_threshold_pages"),
    (dict(write_threshold_pages=0), "write_threshold_pages"),
])
def test_bad_writer_parameters_name_the_parameter(kwargs, name):
    with pytest.raises(ParameterError, match=name):
        make(**kwargs)


def _digest_run(tmp, seed):
    storage = DirectoryStorage(tmp)
    env, space, writer = make(storage)
    committers(env, writer, 6, commits=15, size=1200, seed=seed)

    def getter():
        for k in range(10):
            yield env.timeout(300)
            yield from writer.put(Get("Q0", k.to_bytes(24, "little"), 0, 1200, uow=99_000 + k))
            yield writer.force()

    env.process(getter())
    env.run()
    storage.close()
    data = (tmp / "reference.log").read_bytes()
    return hashlib.sha256(data).hexdigest(), writer.stats.as_dict(), env.now


def test_same_inputs_and_seed_give_byte_identical_log_files(tmp_path):
    a = _digest_run(tmp_path / "a", seed=5)
    b = _digest_run(tmp_path / "b", seed=5)
    c = _digest_run(tmp_path / "c", seed=6)
    assert a == b
    assert c[0] != a[0]


def test_selective_padding_reads_back_whole():
    # Pad only pages that are already well used, rewrite the others: a page that follows a
    # padded page and is later rewritten must still say so, or the reader stops there.
    for threshold in (1500, 2500, 3500):
        env, space, writer = make(pad_policy=lambda used, t=threshold: used > t)
        log = []
        committers(env, writer, 4, commits=40, size=900, log=log)
        env.run()
        assert writer.stats.padded_pages > 0 and writer.stats.partial_page_rewrites > 0
        records, end = scan(space, 0)
        assert end.reason == "end"
        assert sum(isinstance(r, Commit) for _, r in records) == 160


def test_a_failed_log_write_fails_every_waiting_force_and_later_appends():
    from mqlog.core.errors import LogWriteError

    storage = FaultInjectingStorage(MemoryStorage(), FaultPlan(write_error_at=3))
    env, space, writer = make(storage)
    outcomes = []

    def app(i):
        try:
            for k in range(10):
                yield env.timeout(7 * i)
                yield from writer.put(Commit(0, 1, uow=i * 100 + k))
                yield writer.force()
                outcomes.append(("ok", i, k))
        except LogWriteError as exc:
            outcomes.append(("failed", i, str(exc)))

    for i in range(3):
        env.process(app(i))
    env.run()  # nothing hangs, nothing escapes
    failed = [o for o in outcomes if o[0] == "failed"]
    assert len(failed) == 3 and all("I/O error" in o[2] for o in failed)
    assert 0 < sum(o[0] == "ok" for o in outcomes) < 30
    with pytest.raises(LogWriteError):
        writer.append(Commit(0, 1, uow=1))


def test_statistics_name_the_buffer_size():
    env, space, writer = make(buffer_pages=64)
    assert writer.stats.as_dict()["log_buffer_bytes"] == 64 * PAGE_SIZE


def test_a_writer_resumed_after_an_incomplete_record_rewrites_the_tail_page_rather_than_pad_past_it():
    """Restart drops a record whose second page never reached the disk. If the resumed
    writer then padded past the tail page (its pad policy likes a well-filled page), the
    stale start of the dropped record would stay on disk, and a reader coming through from
    an earlier address (media recovery, archive, a log scan) would trip over it."""
    from mqlog.core.log.reader import LogReader

    storage = MemoryStorage()
    env = simpy.Environment()
    space = ReferenceLogSpace(storage)
    device = Device(env, get_profile("ssd"))
    writer = LogWriter(env, space, device, pad_policy=lambda used: used >= 3048)
    a = Put("Q", b"A" * 24, bytes(2400), 2400)  # fills most of the first page
    b = Put("Q", b"B" * 24, bytes(3000), 3000)  # spans into the second page

    def first():
        writer.append(a)
        writer.append(b)
        yield writer.force()

    env.run(until=env.process(first()))
    storage.write("reference.log", PAGE_SIZE, bytes(PAGE_SIZE))  # its second page never made it
    reader = LogReader(space, 0)
    assert [r.msg_id for _, r in reader] == [b"A" * 24] and reader.end.reason != "end"

    env = simpy.Environment()
    device = Device(env, get_profile("ssd"))
    resumed = LogWriter.resume(env, space, device, reader, pad_policy=lambda used: used >= 3048)
    c = Put("Q", b"C" * 24, bytes(100), 100)

    def second():
        resumed.append(c)
        yield resumed.force()

    env.run(until=env.process(second()))
    again = LogReader(space, 0)
    assert [r.msg_id for _, r in again] == [b"A" * 24, b"C" * 24]
    assert again.end.reason == "end", again.end


# --- what the counters count, and the partial-page decisions --------------------------------

def test_logical_writes_count_writes_and_forces_waited_count_the_forces_that_reach_the_writer():
    """amqldmpa's staLogicalWrites counts writes that carry new log data, not forces (IBM's
    counters at ten pairs: logical = physical writes under SingleWrite while each carries
    about four forces): forces that wait together in one cycle are one logical write."""
    env, space, writer = make()

    def app(uow, before):
        yield env.timeout(before)
        yield from writer.put(Put("Q", bytes(24), b"m" * 100, uow=uow))
        yield from writer.put(Commit(0, 1, uow=uow))
        end = writer.next_address
        yield writer.force(end)
        yield writer.force(end)  # on disk already: no write request reaches the writer

    # uow 1 forces alone; 2, 3 and 4 force while its write is in flight, so ride one write
    env.process(app(1, 0))
    for uow in (2, 3, 4):
        env.process(app(uow, 1))
    env.run()
    s = writer.stats
    assert s.log_records == 8 and s.forces == 8
    assert s.forces_waited == 4
    assert s.logical_writes == 2 == s.write_cycles == s.physical_writes


def _after_one_cycle(forcers: int):
    """A writer that closes grouped tails: ``forcers`` callers each append a small record and
    force; once their write is on disk, one more record is appended. Returns (the partial
    page the write ended on, the next record's address, the writer's stats)."""
    env, space, writer = make(pad_grouped_tail=True, write_threshold_pages=None)
    seen = {}

    def caller(i):
        yield from writer.put(Put("Q", bytes(24), b"a" * 100, uow=i + 1))
        yield writer.force()

    def later():
        yield env.timeout(10_000)  # long after the write
        seen["page"] = writer.durable - writer.durable % 4096
        seen["next"] = yield from writer.put(Put("Q", bytes(24), b"b" * 100, uow=99))
        yield writer.force()

    for i in range(forcers):
        env.process(caller(i))
    env.process(later())
    env.run()
    return seen["page"], seen["next"], writer.stats


def test_a_write_carrying_several_forces_closes_its_partial_page():
    """IBM: at ten pairs the partial last page is written once and not rewritten (D1b:
    TripleWrite +0.5%, 66% utilisation): the next record starts a fresh page."""
    page, nxt, stats = _after_one_cycle(3)
    assert nxt == page + PAGE_SIZE + PAGE_HEADER_SIZE  # the first payload byte of the next page
    assert stats.padded_pages == 1 and stats.partial_page_rewrites == 0


def test_a_write_carrying_one_force_leaves_its_partial_page_to_be_continued():
    """IBM D1 (one force a write): every write continues the partial page the last one left."""
    page, nxt, stats = _after_one_cycle(1)
    assert page < nxt < page + PAGE_SIZE
    assert stats.padded_pages == 0 and stats.partial_page_rewrites == 1


def test_without_a_write_threshold_only_a_force_or_a_full_buffer_starts_a_write():
    env, space, writer = make(write_threshold_pages=None, buffer_pages=8)
    written = []

    def app():
        for i in range(4):  # about five pages' worth, unforced: stays in the 8-page buffer
            yield from writer.put(Put("Q", bytes(24), b"x" * 4000, uow=1))
        yield env.timeout(10_000)
        written.append(writer.stats.physical_writes)
        for i in range(6):  # now the buffer fills: the writer must make room
            yield from writer.put(Put("Q", bytes(24), b"x" * 4000, uow=1))
        written.append(writer.stats.physical_writes)

    env.process(app())
    env.run()
    assert written[0] == 0 and written[1] >= 1
