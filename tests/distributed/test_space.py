"""The distributed log space: the ring, the stream, extent files, the control file, TripleWrite."""

from __future__ import annotations

import pytest
import simpy
from mqlog.core.disk.devices import Device, get_profile
from mqlog.core.errors import MqlogError, SimulatedCrash
from mqlog.core.disk.faults import FaultInjectingStorage, FaultPlan
from mqlog.core.workload.journal import Journal
from mqlog.core.format.pages import PAGE_SIZE, PageRun
from mqlog.core.qm.manager import QmConfig, QueueManager
from mqlog.core.disk.storage import MemoryStorage
from mqlog.distributed.platform import LsnAddressing, distributed_platform
from mqlog.distributed.space import (
    CONTROL_FILE,
    DistributedLogSpace,
    LogFullError,
    extent_name,
)

PAGES = 64
EXTENT = PAGES * PAGE_SIZE


def fill(space, start, extents=1.0):
    """Plan writes of full pages from ``start`` covering ``extents`` extents' worth of log."""
    n = int(PAGES * extents)
    run = PageRun(start, tuple(bytes(PAGE_SIZE) for _ in range(n)), False, False, start + n * PAGE_SIZE, 0)
    return space.plan_write(run)


def test_extent_names_wrap_after_9999999():
    assert extent_name(0) == "S0000000.LOG"
    assert extent_name(9_999_999) == "S9999999.LOG"
    assert extent_name(10_000_000) == "S0000000.LOG"


def test_the_ring_grows_as_in_the_worked_example():
    """The ring's worked example, 3 primaries and 2 secondaries: 0,1,2 -> 0,1,3,2 -> 0,4,1,3,2.

    A secondary goes into the ring at the head – after the extent just filled, before the one
    the ring would reuse next – only when that one still holds data restart needs."""
    space = DistributedLogSpace(MemoryStorage(), primary=3, secondary=2, file_pages=PAGES)
    fill(space, 0, 3)  # 0, 1, 2
    assert space.ring == [0, 1, 2] and space.current == 2
    space.release(2 * EXTENT + 10)  # an open unit of work still needs extent 2
    fill(space, 3 * EXTENT, 2)  # wraps: 0 and 1 are reused...
    assert space.ring == [0, 1, 2]
    writes = fill(space, 5 * EXTENT, 1)  # ...but 2 is still needed: a secondary is inserted
    assert space.ring == [0, 1, 3, 2] and space.current == 3
    assert writes[0].format_bytes == EXTENT  # formatted when first needed, a cost paid then
    space.release(4 * EXTENT + 10)  # 2 is free now; a newer unit of work holds 1's new data
    fill(space, 6 * EXTENT, 2)  # reuses 2, then 0
    assert space.ring == [0, 1, 3, 2] and space.current == 0
    fill(space, 8 * EXTENT, 1)  # 1 is still needed: another secondary, at the head
    assert space.ring == [0, 4, 1, 3, 2]
    with pytest.raises(LogFullError, match="AMQ7463"):  # 1 still needed, both secondaries in use
        fill(space, 9 * EXTENT, 1)


def test_linear_logs_move_on_to_new_extents_and_leave_old_ones_inactive():
    storage = MemoryStorage()
    space = DistributedLogSpace(storage, primary=3, secondary=2, file_pages=PAGES, linear=True)
    writes = fill(space, 0, 5)
    # past the primaries, each new extent is formatted ahead of need by the plan
    assert [w.file for w in writes if w.format_bytes] == [extent_name(n) for n in (3, 4, 5)]
    assert [space.extents[n].start for n in range(5)] == [n * EXTENT for n in range(5)]  # in order, never reused
    assert 5 in space.extents and space.extents[5].start is not None  # the next one formatted ahead
    space.release(3 * EXTENT)
    assert [space.extents[n].inactive for n in range(5)] == [True, True, True, False, False]
    assert all(n in space.extents for n in range(5))  # inactive extents are kept, not reused


def test_the_control_file_a_checkpoint_writes_flags_the_extents_its_tail_frees():
    """A checkpoint's control data says which extents its own tail and media address leave
    inactive and reusable (restart and `mqlog qmstatus` read them from the file): saved with
    the checkpoint, not a checkpoint later."""
    from mqlog.core.platform import LogControl
    from mqlog.distributed.controlfile import ControlFile
    from mqlog.distributed.space import AUTOMATIC

    storage = MemoryStorage()
    space = DistributedLogSpace(storage, primary=3, secondary=2, file_pages=PAGES, linear=True,
                                management=AUTOMATIC)
    fill(space, 0, 5)
    space.save_control(LogControl(3 * EXTENT + PAGE_SIZE, 3 * EXTENT, 1, 3 * EXTENT))
    saved = ControlFile.from_bytes(storage.read(CONTROL_FILE, 0, storage.size(CONTROL_FILE)), file_pages=PAGES)
    flags = {e.number: (e.inactive, e.reusable) for e in saved.extents}
    assert [flags[n] for n in range(5)] == [(True, True)] * 3 + [(False, False)] * 2
    assert flags == {n: (e.inactive, e.reusable) for n, e in space.extents.items()}  # the file says what the space knows


def test_extents_are_real_preformatted_files_of_logfilepages():
    storage = MemoryStorage()
    space = DistributedLogSpace(storage, primary=3, secondary=2, file_pages=PAGES)
    fill(space, 0, 0.5)
    assert storage.list("S") == [extent_name(n) for n in range(3)]
    assert all(storage.size(name) == EXTENT for name in storage.list("S"))


def test_a_crash_while_updating_the_control_file_keeps_the_log():
    storage = MemoryStorage()
    space = DistributedLogSpace(storage, primary=3, secondary=2, file_pages=PAGES)
    fill(space, 0, 2)
    before = storage.read(CONTROL_FILE, 0, 1 << 20)
    crashing = FaultInjectingStorage(storage, FaultPlan(crash_after_writes=0))
    space.storage = crashing
    with pytest.raises(SimulatedCrash):
        fill(space, 2 * EXTENT, 1)  # the switch rewrites the control file: the crash hits it
    assert storage.read(CONTROL_FILE, 0, 1 << 20) == before  # the old control data, intact
    reloaded = DistributedLogSpace(storage, primary=3, secondary=2, file_pages=PAGES)
    assert reloaded.read_page(PAGE_SIZE)[1] == extent_name(0)


def test_lsns_show_as_four_16_bit_parts():
    lsn = LsnAddressing()
    assert lsn.format(0) == "<0:0:0:0>"
    assert lsn.format((1 << 48) + (2 << 32) + (3 << 16) + 4) == "<1:2:3:4>"
    assert lsn.parse(lsn.format(123_456_789_012)) == 123_456_789_012


# --- with a queue manager -----------------------------------------------------------------

def make_qm(storage, **kwargs):
    env = simpy.Environment()
    platform = distributed_platform(storage, file_pages=PAGES, **kwargs)
    qm = QueueManager(env, platform, storage, Device(env, get_profile("ssd")), QmConfig())
    return env, platform, qm


def test_restart_reads_across_extents_and_a_reused_ring():
    storage = FaultInjectingStorage(MemoryStorage())
    env, platform, qm = make_qm(storage)
    journal = Journal()

    def go():
        yield from qm.start()
        yield from qm.define_queue("Q")
        conn = qm.connect("A")
        for i in range(400):
            msg_id = yield from conn.put("Q", b"%05d" % i + bytes(2000))
            journal.put(f"A{i}", msg_id, "Q", True, True)
            journal.commit_asked(f"A{i}")
            yield from conn.commit()
            journal.ended(f"A{i}", True)
            if i % 2:
                journal.get_asked("Q", False)
                got = yield from conn.get("Q", syncpoint=False)
                journal.got("G", got.msg_id, "Q", False)

    env.run(until=env.process(go()))
    assert platform.space.switches > len(platform.space.extents)  # the ring went round: extents reused
    journal.crash()
    env2, platform2, qm2 = make_qm(storage.durable)
    env2.run(until=env2.process(qm2.start()))
    assert journal.verify(qm2).ok
    assert qm2.queues["Q"].depth == 200


def _torn_rewrite_losses(integrity: str) -> int:
    """Tear each physical write in turn of a run that rewrites partial pages; count the
    runs where a commit that was acknowledged is missing after restart."""
    def run(plan):
        storage = FaultInjectingStorage(MemoryStorage(), plan)
        env, platform, qm = make_qm(storage, integrity=integrity)
        platform = platform  # noqa: F841
        qm.platform = __import__("attrs").evolve(qm.platform, pad_policy=None)  # always rewrite
        acked = []

        def go():
            yield from qm.start()
            yield from qm.define_queue("Q")
            conn = qm.connect("A")
            for i in range(12):
                msg_id = yield from conn.put("Q", b"%03d" % i + bytes(300))  # small: partial pages
                yield from conn.commit()
                acked.append(msg_id)

        try:
            env.run(until=env.process(go()))
        except SimulatedCrash:
            pass
        return storage, acked

    clean, _ = run(FaultPlan())
    losses = 0
    for k in range(1, clean.physical_writes + 1):
        storage, acked = run(FaultPlan(tear_write=k, tear_mode="prefix", seed=k))
        env2, _, qm2 = make_qm(storage.durable, integrity=integrity)
        try:
            env2.run(until=env2.process(qm2.start()))
        except MqlogError:
            losses += 1  # detected and refused: hardened data is gone all the same
            continue
        present = set(qm2.queues["Q"].messages) if "Q" in qm2.queues else set()
        losses += any(m not in present for m in acked)
    return losses


def test_singlewrite_loses_hardened_data_under_a_torn_partial_page_rewrite_and_triplewrite_does_not():
    assert _torn_rewrite_losses("SingleWrite") > 0
    assert _torn_rewrite_losses("TripleWrite") == 0
    assert _torn_rewrite_losses("DoubleWrite") == 0  # behaves as TripleWrite


def test_triplewrite_costs_an_extra_write_per_partial_page_rewrite_which_concurrency_shrinks():
    def run(integrity, apps):
        env, platform, qm = make_qm(MemoryStorage(), integrity=integrity)
        qm.platform = __import__("attrs").evolve(qm.platform, pad_policy=None)

        def app(n):
            conn = qm.connect(f"A{n}")
            for i in range(40):
                yield env.timeout(7 * n + 3)
                yield from conn.put("Q", b"x" * 500)
                yield from conn.commit()

        def go():
            yield from qm.start()
            yield from qm.define_queue("Q")
            yield simpy.AllOf(env, [env.process(app(n)) for n in range(apps)])

        env.run(until=env.process(go()))
        return qm.writer.stats

    extra_one = run("TripleWrite", 1).physical_writes - run("SingleWrite", 1).physical_writes
    extra_many = run("TripleWrite", 10).physical_writes - run("SingleWrite", 10).physical_writes
    commits = 40
    assert extra_one > 0.5 * commits  # nearly one spare write per commit when alone
    assert extra_many / (10 * commits) < 0.5 * extra_one / commits  # far fewer per commit together


def test_a_page_restart_read_from_the_spare_copy_is_put_back_in_place_first():
    """TripleWrite: a crash after the spare copy of a partial page was written but before the
    page was rewritten in place; restart reads the spare copy; the next write must restore
    the page in place before any spare slot is reused, or a second restart loses it."""
    from mqlog.core.format.pages import build_page

    storage = MemoryStorage()
    space = DistributedLogSpace(storage, primary=3, secondary=2, file_pages=PAGES)
    old = build_page(0, 1, b"a" * 100, 0, flags=1)
    new = build_page(0, 2, b"a" * 100 + b"b" * 3000, 0, flags=1)
    fill(space, 0, 0.0)  # creates the log
    storage.write(extent_name(0), 0, old)
    storage.write("amqhlspr.lfh", PAGE_SIZE, new)  # the spare copy landed, the rewrite did not
    reread = DistributedLogSpace(storage, primary=3, secondary=2, file_pages=PAGES)
    reread._load_or_empty()
    assert reread.read_page(0)[0] == new
    writes = reread.plan_write(PageRun(PAGE_SIZE, (bytes(PAGE_SIZE),), False, False, 2 * PAGE_SIZE, 0))
    assert (writes[0].purpose, writes[0].file, writes[0].offset, writes[0].pages) == ("repair", extent_name(0), 0, (new,))


@pytest.mark.parametrize("slot", [0, 1])
def test_a_page_read_from_a_spare_slot_is_named_by_that_slot(slot):
    """Damage the reader finds in a page it took from the spare file is named there, at the
    slot's own offset: slot 1's copy was named as offset 0 (slot 0's), and a bit flipped
    "in the page restart reads" hit slot 0 (trial s33: an error named amqhlspr.lfh, offset
    0)."""
    from mqlog.core.errors import LogCorruptionError
    from mqlog.core.format.pages import PAGE_HEADER_SIZE, build_page
    from mqlog.core.format.records import Put
    from mqlog.core.log.reader import scan

    storage = MemoryStorage()
    space = DistributedLogSpace(storage, primary=3, secondary=2, file_pages=PAGES)
    fill(space, 0, 0.0)  # creates the log
    record = Put("Q", bytes(24), b"r" * 300, uow=1).to_bytes()
    storage.write(extent_name(0), 0, build_page(0, 1, b"", 0xFFFF, flags=1))
    bad = bytearray(record)
    bad[-1] ^= 0x40  # inside the record's body: its CRC fails in a page whose checksum is good
    storage.write("amqhlspr.lfh", slot * PAGE_SIZE, build_page(0, 2, bytes(bad), 0, flags=1))
    reread = DistributedLogSpace(storage, primary=3, secondary=2, file_pages=PAGES)
    reread._load_or_empty()
    assert reread.read_page(0)[1:] == ("amqhlspr.lfh", slot * PAGE_SIZE)
    with pytest.raises(LogCorruptionError) as info:
        scan(reread, PAGE_HEADER_SIZE)
    assert (info.value.source, info.value.offset) == ("amqhlspr.lfh", slot * PAGE_SIZE + PAGE_HEADER_SIZE)
    assert f"amqhlspr.lfh, offset {slot * PAGE_SIZE + PAGE_HEADER_SIZE}" in str(info.value)


def test_a_secondary_leaves_the_ring_only_after_laps_of_disuse():
    from mqlog.distributed.space import SECONDARY_IDLE_LAPS

    storage = MemoryStorage()
    space = DistributedLogSpace(storage, primary=3, secondary=2, file_pages=PAGES)
    fill(space, 0, 3)
    space.release(2 * EXTENT + 10)
    fill(space, 3 * EXTENT, 3)  # 0, 1, then 2 still needed: secondary 3 joins
    assert space.ring == [0, 1, 3, 2]
    address = 6 * EXTENT
    extents = 0
    while 3 in space.ring:
        space.release(address)  # short units of work from now on: the tail follows the head
        fill(space, address, 1)
        address += EXTENT
        extents += 1
        assert extents <= 4 * (SECONDARY_IDLE_LAPS + 1)
    assert extents >= 4 * (SECONDARY_IDLE_LAPS - 1)  # not at once: after laps of disuse
    assert space.ring == [0, 1, 2] and extent_name(3) not in storage.list()


def test_a_raised_logprimaryfiles_counts_ring_extents_as_primaries_and_adds_more_only_when_needed():
    storage = MemoryStorage()
    space = DistributedLogSpace(storage, primary=3, secondary=2, file_pages=PAGES)
    fill(space, 0, 3)
    space.release(2 * EXTENT + 10)
    fill(space, 3 * EXTENT, 3)
    space.save_control(space.control)
    assert space.ring == [0, 1, 3, 2] and not space.extents[3].primary
    raised = DistributedLogSpace(storage, primary=5, secondary=2, file_pages=PAGES)
    raised._load_or_empty()
    assert raised.extents[3].primary  # already in the ring: now a primary
    assert raised.ring == [0, 1, 3, 2]  # nothing new allocated at restart
    raised.release(2 * EXTENT + 10)  # extent 2 still needed when the ring comes round
    fill(raised, 6 * EXTENT, 3)
    new = [n for n in raised.ring if n > 3]
    assert raised.extents[min(new)].primary  # the 5th primary, added only when needed...
    assert sum(raised.extents[n].primary for n in raised.ring) == 5  # ...and then secondaries


def test_a_circular_control_file_whose_ring_names_an_extent_it_does_not_list_is_refused():
    """A ring naming an extent the control file does not list is damage: restart is refused
    with the control file named, never a KeyError traceback."""
    storage = MemoryStorage()
    space = DistributedLogSpace(storage, primary=3, secondary=2, file_pages=PAGES)
    fill(space, 0, 1)
    space.ring.append(7)  # as a damaged control file would say it
    space.save_control(space.control)
    with pytest.raises(MqlogError, match=r"S0000007\.LOG") as refused:
        DistributedLogSpace(storage, primary=3, secondary=2, file_pages=PAGES).load_control()
    assert refused.value.source == CONTROL_FILE
