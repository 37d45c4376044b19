"""The recovery contract, run against every platform configuration.

After a crash at any point: every committed persistent message is present exactly once,
no uncommitted one is, in-doubt ones stay in doubt, non-persistent ones are gone; a crash
during restart followed by another restart gives the same state without repeating undo.
Every platform's test package registers its configurations (``registry.py``); nothing here
names a platform.
"""

from __future__ import annotations

import math

import pytest
from mqlog.core.disk.faults import FaultPlan
from mqlog.core.format.pages import PAGE_PAYLOAD
from mqlog.core.qm.logspace import RESERVE_PER_OP
from mqlog.core.objects.queuefile import MessageState
from mqlog.core.format.records import HEADER_SIZE, Clr
from mqlog.core.disk.storage import MemoryStorage
from mqlog.torture import DAMAGE, in_place_writes

from .harness import clone, restart, run_workload, with_buffer, with_larger_log
from .registry import configurations

#: every platform's configurations, as their test packages register them (registry.py)
CONFIGS = configurations()


@pytest.fixture(params=CONFIGS, ids=[c.name for c in CONFIGS])
def platform_config(request):
    return request.param


def state_of(qm):
    """The recovered queues as comparable data."""
    return {name: sorted((m.msg_id, m.state, m.uow) for m in q.messages.values())
            for name, q in sorted(qm.queues.items())}


def test_workload_runs_to_the_end_and_shuts_down_cleanly(platform_config):
    out = run_workload(platform_config, seed=3)
    assert not out.crashed
    counters = out.qm.counters
    assert counters.commits > 5 and counters.backouts > 0 and counters.checkpoints >= 1
    # a clean restart finds every committed message and nothing else
    qm, report, crashed = restart(platform_config, clone(out.storage.durable))
    assert not crashed
    verdict = out.journal.verify(qm)
    assert verdict.ok, verdict.details[:5]


@pytest.mark.parametrize("seed", [1, 2])
def test_crash_at_every_physical_write(platform_config, seed):
    """The crash-point sweep: crash after each physical write in turn, restart (twice), verify."""
    full = run_workload(platform_config, seed=seed, apps=3, rounds=16)
    total = full.storage.physical_writes
    assert total > 30
    checked = 0
    for k in range(0, total):
        out = run_workload(platform_config, seed=seed, apps=3, rounds=16, plan=FaultPlan(crash_after_writes=k))
        assert out.crashed
        qm, report, crashed = restart(platform_config, clone(out.storage.durable))
        assert not crashed
        verdict = out.journal.verify(qm)
        assert verdict.ok, (k, verdict.as_dict(), verdict.details[:5])
        # and again: what the first restart read (a page only a spare copy held, say) must
        # still be there for the second
        qm2, _, _ = restart(platform_config, clone(qm.storage.durable))
        assert out.journal.verify(qm2).ok, k
        checked += 1
    assert checked >= 30


def test_crash_during_restart_then_restart_again_repeats_no_undo(platform_config):
    # Find a crash point that leaves units of work for restart to back out, with CLRs that
    # restart writes in more than one write, so that a crash can fall between them. Two CLRs
    # are not enough on their own: restart hands each unit's Backout to the writer without a
    # force per unit, so two units with one CLR each may go out in a single write (distributed
    # circular TripleWrite, seed 5: the first such crash point is one). Every candidate tried
    # is checked in full; the search stops at the first whose undo a crash did interrupt.
    def candidates():
        for seed in range(5, 12):
            total = run_workload(platform_config, seed=seed, apps=4, rounds=16).storage.physical_writes
            for k in range(3, total):
                yield seed, k

    tried = 0
    for seed, k in candidates():
        out = run_workload(platform_config, seed=seed, apps=4, rounds=16, plan=FaultPlan(crash_after_writes=k))
        disk = out.storage.durable
        qm, report, _ = restart(platform_config, clone(disk))
        # None: crashed before it was created. Two CLRs at least, so that a crash can fall
        # between them (two units backed out may have only one record to undo between them).
        if report is None or report.uows_backed_out < 2 or report.clrs_written < 2:
            continue
        tried += 1
        if crash_restart_and_restart_again(platform_config, out, disk, qm, report):
            break
        assert tried < 20, "20 crash points left work to undo, but no crash fell between the CLRs of one restart"
    else:
        pytest.fail(f"no crash point left work whose undo a crash could interrupt ({tried} left work to undo)")


def crash_restart_and_restart_again(platform_config, out, disk, qm, report) -> int:
    """Crash the restart of ``disk`` after each of its writes, restart once more, and check
    the state is restart's (``qm``'s) with no undo repeated. Returns how many of those crashes
    fell between the CLRs of the restart."""
    expected = state_of(qm)
    total_clrs = report.clrs_written
    origin = platform_config.make(clone(disk)).space.load_control().tail
    interrupted_with_clrs = 0
    for j in range(1, 40):
        first = clone(disk)
        qm1, r1, crashed = restart(platform_config, first, FaultPlan(crash_after_writes=j))
        if not crashed:
            break
        # Counted from where the crashed restart began: it may have recorded its own
        # checkpoint before the crash (a platform whose control data is written twice).
        durable_clrs = clrs_in_log(first, platform_config, start=origin)
        qm2, r2, crashed2 = restart(platform_config, first)
        assert not crashed2
        assert state_of(qm2) == expected
        assert out.journal.verify(qm2).ok
        # CLRs that reached the disk are not written again: the second restart does
        # exactly the undo work the first did not finish.
        assert r2.clrs_written == total_clrs - durable_clrs, (j, durable_clrs)
        interrupted_with_clrs += 0 < durable_clrs < total_clrs
    else:
        pytest.fail("restart still crashed after 39 writes")
    return interrupted_with_clrs


def clrs_in_log(storage, platform_config=None, start: int | None = None) -> int:
    """Compensation records in the log on ``storage`` (read through the platform's space),
    from ``start`` or else from the tail its control data names."""
    from mqlog.core.log.reader import LogReader

    space = (platform_config or CONFIGS[0]).make(storage).space
    if start is None:
        control = space.load_control()
        start = control.tail if control is not None else 0
    return sum(isinstance(r, Clr) for _, r in LogReader(space, start))


def test_in_doubt_units_of_work_stay_in_doubt_and_can_be_resolved(platform_config):
    for seed in range(1, 30):
        out = run_workload(platform_config, seed=seed, apps=4, rounds=10)
        if out.journal.in_doubt_keys():
            break
    else:
        pytest.fail("no seed left a unit of work in doubt")
    qm, report, _ = restart(platform_config, clone(out.storage.durable))
    assert report.uows_indoubt == len(qm.in_doubt()) > 0
    verdict = out.journal.verify(qm)
    assert verdict.ok and verdict.indoubt > 0
    # Its messages are held, not visible: puts uncommitted, gets locked.
    for uow in qm.in_doubt():
        for op in uow.ops:
            message = qm.queues[op.queue].messages[op.msg_id]
            assert message.state in (MessageState.PUT_UNCOMMITTED, MessageState.GOT_UNCOMMITTED)
            assert message.uow == uow.id
    # The coordinator commits one and backs out the others; a further restart agrees.
    env = qm.env
    uows = qm.in_doubt()

    def resolve():
        for i, uow in enumerate(uows):
            yield from qm.resolve(uow.id, commit=(i == 0))

    env.run(until=env.process(resolve()))
    assert not qm.in_doubt()
    after = state_of(qm)
    qm2, report2, _ = restart(platform_config, clone(qm.storage.durable))
    assert report2.uows_indoubt == 0
    assert state_of(qm2) == after


def test_nonpersistent_messages_are_gone_after_a_crash(platform_config):
    out = run_workload(platform_config, seed=7, plan=FaultPlan(crash_after_writes=150))
    assert any(not m.persistent for m in out.journal.messages.values())
    qm, _, _ = restart(platform_config, clone(out.storage.durable))
    verdict = out.journal.verify(qm)
    assert verdict.nonpersistent_present == 0 and verdict.ok


#: Bytes one put of a few bytes logs (its Put record, message descriptor and all), rounded up.
PUT_LOG_BYTES = 800


def sized_for_a_unit_of(platform_config, ops: int):
    """``platform_config``, or the same with larger log files if its log cannot hold one unit
    of work of ``ops`` small puts. A log that keeps a unit's records active (distributed;
    z/OS without archiving) rolls back a unit that holds more than 80% of it; one that
    archives them need only keep room for the unit's compensation records."""
    space = platform_config.make(MemoryStorage()).space
    capacity = getattr(space, "capacity_bytes", 0)
    if not capacity:
        return platform_config  # unbounded
    per_op = RESERVE_PER_OP if getattr(space, "offload", False) else PUT_LOG_BYTES
    factor = math.ceil(ops * per_op / 0.6 / capacity)
    return platform_config if factor <= 1 else with_larger_log(platform_config, factor)


def test_interrupted_undo_of_a_large_unit_of_work_resumes_where_it_stopped(platform_config):
    """A unit of work whose compensation records span several writes: a restart crashed in
    the middle of undoing it, then restarted, undoes only what is left (compensation records: docs/FORMAT.md)."""
    from .harness import start

    # Restart's undo forces only at the unit's Backout record; before that the writer writes
    # once write_threshold_pages full pages have piled up, or – a platform with no threshold
    # (distributed) – once the buffer is full: it is made small here (MQ's smallest,
    # LogBufferPages=18) so the unit need not be huge. CLRs for a quarter more than that
    # (and for 10 pages at least: on a slow device the writer may still be busy with restart's
    # first write when a small threshold is reached) go out in at least two writes, so some
    # crash point falls between them. The loop below asserts that one did.
    threshold = platform_config.make(MemoryStorage()).write_threshold_pages
    if threshold is None:
        platform_config = with_buffer(platform_config, 18)
        threshold = 18
    ops = math.ceil(max(1.25 * threshold, 10) * PAGE_PAYLOAD / (Clr._S.size + HEADER_SIZE))
    config = sized_for_a_unit_of(platform_config, ops)
    env, fs, qm = start(config, MemoryStorage())

    def work():
        yield from qm.start()
        yield from qm.define_queue("BIG.Q")
        big, other = qm.connect("BIG"), qm.connect("OTHER")
        for i in range(ops):
            yield from big.put("BIG.Q", b"%05d" % i)
        yield from other.put("BIG.Q", b"forces the log", syncpoint=False)

    env.run(until=env.process(work()))
    disk = fs.durable  # the crash: BIG never committed, its puts are on disk
    qm1, full, _ = restart(config, clone(disk))
    assert full.clrs_written == ops and full.uows_backed_out == 1
    assert [m.length for m in qm1.queues["BIG.Q"].messages.values()] == [len(b"forces the log")]
    # CLRs are counted from where the crashed restart began: one that finished its undo may
    # have recorded its end-of-restart checkpoint, and control data naming a later tail.
    origin = config.make(clone(disk)).space.load_control().tail
    partial = 0
    for j in range(1, 200):
        first = clone(disk)
        _, _, crashed = restart(config, first, FaultPlan(crash_after_writes=j))
        if not crashed:
            break
        done = clrs_in_log(first, config, start=origin)
        qm2, r2, _ = restart(config, first)
        assert r2.clrs_written == ops - done, (j, done)
        assert state_of(qm2) == state_of(qm1)
        partial += 0 < done < ops
    assert partial >= 1, "no crash fell between the CLRs of the unit's undo"


def test_two_restarts_in_a_row_change_nothing(platform_config):
    """Restart is idempotent: a second restart with no new work finds the same state, writes
    no compensation records and keeps units of work in doubt in doubt."""
    from .harness import start

    env, fs, qm = start(platform_config, MemoryStorage())

    def work():
        # The crash leaves one unit of each kind: committed, in doubt (prepared, its
        # coordinator gone) and in flight. Each holds a put and a get.
        yield from qm.start()
        for name in ("APP.Q0", "APP.Q1"):
            yield from qm.define_queue(name)
        committed, doubtful, inflight = qm.connect("COMMITTED"), qm.connect("DOUBTFUL"), qm.connect("INFLIGHT")
        for i in range(4):
            yield from committed.put("APP.Q0", b"committed %d" % i)
        yield from committed.commit()
        yield from committed.put("APP.Q1", b"committed late")
        yield from committed.get("APP.Q0")
        yield from committed.commit()
        yield from doubtful.put("APP.Q1", b"in doubt")
        yield from doubtful.get("APP.Q0")
        yield from doubtful.prepare(b"XID-DOUBTFUL")
        yield from inflight.put("APP.Q1", b"in flight")
        yield from inflight.get("APP.Q0")
        # forces the in-flight unit's records to the disk
        yield from qm.connect("OTHER").put("APP.Q0", b"out of syncpoint", syncpoint=False)

    env.run(until=env.process(work()))
    disk = fs.durable  # the crash
    qm1, r1, _ = restart(platform_config, clone(disk))
    assert (r1.uows_indoubt, r1.uows_backed_out, r1.clrs_written) == (1, 1, 2)
    in_doubt = [(u.id, u.xid, [(op.kind, op.queue, op.msg_id) for op in u.ops]) for u in qm1.in_doubt()]
    assert [(xid, sorted(kind for kind, _, _ in ops)) for _, xid, ops in in_doubt] == [
        (b"XID-DOUBTFUL", ["get", "put"])]
    qm2, r2, _ = restart(platform_config, clone(qm1.storage.durable))
    assert state_of(qm2) == state_of(qm1)
    assert r2.clrs_written == 0 and r2.uows_backed_out == 0 and r2.uows_indoubt == 1
    assert [(u.id, u.xid, [(op.kind, op.queue, op.msg_id) for op in u.ops]) for u in qm2.in_doubt()] == in_doubt
    # What the units left: the in-flight unit's get restored and its put gone, the in-doubt
    # unit's get and put still held.
    committed, put_held, got_held = MessageState.COMMITTED, MessageState.PUT_UNCOMMITTED, MessageState.GOT_UNCOMMITTED
    assert {name: sorted(state for _, state, _ in messages) for name, messages in state_of(qm2).items()} == {
        "APP.Q0": [committed, committed, committed, got_held], "APP.Q1": [committed, put_held]}


#: What a torn write is checked against: the configurations that claim to survive one, and
#: those that rewrite a partial page in place (SingleWrite, TWOACTV=NO) and claim only less.
TORN_SURVIVORS = [c for c in CONFIGS if c.survives_torn_writes]
TORN_IN_PLACE = [c for c in CONFIGS if not c.survives_torn_writes]


def torn_sweep(platform_config, beside: dict | None = None):
    """Tear each physical write of a workload in turn (the first sectors, and a random subset),
    crash, restart: yield (mode, k, outcome) with outcome the restarted queue manager's
    verdict, or the damage restart refused with. ``beside[k]``: the writes in flight beside
    write k, which its power loss tore too, as (file, offset)."""
    beside = {} if beside is None else beside
    full = run_workload(platform_config, seed=2, apps=3, rounds=14)
    for mode in ("prefix", "random"):
        for k in range(1, full.storage.physical_writes + 1):
            out = run_workload(platform_config, seed=2, apps=3, rounds=14,
                               plan=FaultPlan(tear_write=k, tear_mode=mode, seed=k))
            assert out.crashed
            beside[k] = out.storage.torn_beside  # (torn with it: the writes in flight beside it)
            try:
                qm, _, crashed = restart(platform_config, clone(out.storage.durable))
            except DAMAGE as exc:
                yield mode, k, exc
                continue
            assert not crashed
            yield mode, k, out.journal.verify(qm)


@pytest.mark.parametrize("platform_config", TORN_SURVIVORS, ids=[c.name for c in TORN_SURVIVORS])
def test_torn_write_at_every_physical_write(platform_config):
    """A torn write (part of a write's sectors land) then a crash, at every write in turn:
    configurations that claim to survive it lose nothing acknowledged, and refuse nothing."""
    for mode, k, verdict in torn_sweep(platform_config):
        assert not isinstance(verdict, Exception), (mode, k, str(verdict))
        assert verdict.ok, (mode, k, verdict.as_dict(), verdict.details[:3])


@pytest.mark.parametrize("platform_config", TORN_IN_PLACE, ids=[c.name for c in TORN_IN_PLACE])
def test_torn_write_in_place_loses_only_what_the_rewritten_page_held(platform_config):
    """A configuration that rewrites a partial page in place does not claim to survive a torn
    write (docs/reliability.md), but what it does is bounded: a torn write of pages never
    written before loses nothing acknowledged (restart ends the log before it); only a torn
    rewrite of a page already on disk may lose what that page held, or be refused naming the
    damage. Never anything else: restart never fails with an error that is not about damage."""
    full = run_workload(platform_config, seed=2, apps=3, rounds=14, keep_write_log=True)
    writes = full.storage.write_log
    rewrites = {w.number for w in in_place_writes(writes)}

    def rewrite_torn_beside(k: int) -> bool:
        """Whether write k's power loss also tore a rewrite in place that was in flight beside
        it (a log page rewritten while a checkpoint flushed a queue file, say)."""
        return any(next((w.number for w in writes if w.number > k and (w.name, w.offset) == flying), None)
                   in rewrites for flying in beside.get(k, ()))

    beside: dict = {}
    torn_rewrites = 0
    for mode, k, verdict in torn_sweep(platform_config, beside):
        if k in rewrites or rewrite_torn_beside(k):
            torn_rewrites += 1
            continue  # may survive, lose what the page held, or be refused naming it
        assert not isinstance(verdict, Exception), (mode, k, str(verdict))
        assert verdict.ok, (mode, k, verdict.as_dict(), verdict.details[:3])
    assert torn_rewrites, "no torn write rewrote a page in place"
