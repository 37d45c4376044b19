"""Log shunting (IBM MQ for z/OS, "Log shunting"): a unit of work is shunted every third checkpoint,
backout and restart use the shunted records instead of reading far back, a crash in the
middle of a round or of restart's undo loses nothing, and with archiving off an unshunted
unit whose records were overwritten cannot be backed out (5C6-00D1032A)."""

from __future__ import annotations

import attrs
import pytest
import simpy

from mqlog.core.disk.devices import Device, get_profile
from mqlog.core.errors import SimulatedCrash
from mqlog.core.disk.faults import FaultInjectingStorage, FaultPlan
from mqlog.core.qm.manager import QmConfig, QueueManager
from mqlog.core.recovery.outcome import BackoutImpossible
from mqlog.core.disk.storage import MemoryStorage
from mqlog.zos.platform import zos_platform


def make(storage, **kwargs):
    env = simpy.Environment()
    kwargs.setdefault("data_sets", 4)
    kwargs.setdefault("cis", 16)
    platform = zos_platform(storage, **kwargs)
    if kwargs.pop("no_shunting", False):
        pass
    qm = QueueManager(env, platform, storage, Device(env, get_profile("ssd")), QmConfig())
    return env, platform, qm


def no_shunting(qm):
    """``qm`` runs on its platform without shunting (a copy: the platform itself is frozen)."""
    qm.platform = attrs.evolve(qm.platform, shunting=None)


def run(env, gen):
    proc = env.process(gen)
    env.run(until=proc)
    return proc.value


def long_uow_workload(qm, *, checkpoints=10, long_ops=5, prepare=False, traffic=30):
    """A long unit of work with a few puts, then busy traffic and a checkpoint after each burst."""
    yield from qm.start()
    yield from qm.define_queue("LONG")
    yield from qm.define_queue("BUSY")
    long_conn = qm.connect("LONG")
    for i in range(long_ops):
        yield from long_conn.put("LONG", b"long-%03d" % i + bytes(500))
    if prepare:
        yield from long_conn.prepare(b"XID-LONG")
    busy = qm.connect("BUSY")
    shunted_at = []
    for _ in range(checkpoints):
        for _ in range(traffic):
            yield from busy.put("BUSY", bytes(1500))
            yield from busy.commit()
            yield from busy.get("BUSY")
            yield from busy.commit()
        before = qm.counters.shunts
        yield from qm.checkpoint("test", wait=True)
        if qm.counters.shunts > before:
            shunted_at.append(qm.schedule.number)
    return long_conn, shunted_at


def test_a_long_unit_of_work_is_shunted_every_third_checkpoint_and_multi_shunted():
    storage = FaultInjectingStorage(MemoryStorage())
    env, platform, qm = make(storage, logload=100_000)
    shunts = []  # the number of every checkpoint after which a round was started
    real = qm._shunt

    def watching(number):
        # a round is written by a process of its own: its unit is busy until it is in
        before = {u.id for u in qm.uows.values() if u.busy is not None}
        started = real(number)
        shunts.extend(number for u in qm.uows.values() if u.busy is not None and u.id not in before)
        return started

    qm._shunt = watching
    long_conn, _ = run(env, long_uow_workload(qm, checkpoints=10))
    began = 1  # it began after the start's checkpoint (number 1), before any other
    checkpoints = qm.schedule.number
    # through two checkpoints since it began, shunted at the third; then every third one
    assert shunts == list(range(began + 3, checkpoints + 1, 3))
    assert len(shunts) >= 3  # multi-shunted
    uow = long_conn.uow
    assert uow.shunts == len(shunts) and qm.counters.shunted_bytes > 0
    # and at log switches after its third checkpoint it is reported as long-running
    # (by its URID: the RBA of its Begin record, which the rounds do not move)
    urid = f"URID={qm.platform.addressing.format(uow.begin)} "
    found = [m for m in qm.messages if m.startswith("CSQJ160I") and urid in m]
    later = [m for m in qm.messages if m.startswith("CSQJ161I") and urid in m]
    assert len(found) == 1 and later  # found once, then reported unresolved at later offloads
    # its first record is now the newest round's, not its first put
    assert uow.first > uow.ops[-1].address


@pytest.mark.parametrize("offload, counted", [(True, "OFFLOADS"), (False, "ACTIVE LOG SWITCHES")])
def test_a_long_unit_of_work_is_reported_after_offloads_or_after_switches(offload, counted):
    """CSQJ161I counts offloads; with OFFLOAD=NO nothing is offloaded, so it counts switches."""
    env, platform, qm = make(FaultInjectingStorage(MemoryStorage()), logload=100_000, offload=offload)
    long_conn, _ = run(env, long_uow_workload(qm, checkpoints=10))
    urid = f"URID={platform.addressing.format(long_conn.uow.begin)} "
    later = [m for m in qm.messages if m.startswith("CSQJ161I") and urid in m]
    assert later and all(f" {counted}, URID=" in m for m in later), later


def _crash_with_long_uow(*, shunting: bool, prepare=False, **kwargs):
    storage = FaultInjectingStorage(MemoryStorage())
    env, platform, qm = make(storage, logload=100_000, **kwargs)
    if not shunting:
        no_shunting(qm)
    run(env, long_uow_workload(qm, checkpoints=8, prepare=prepare))
    storage.crash()
    return storage.durable


def _restart(durable, *, shunting=True, plan=FaultPlan(), **kwargs):
    fs = FaultInjectingStorage(durable, plan)
    env, platform, qm = make(fs, logload=100_000, **kwargs)
    if not shunting:
        no_shunting(qm)
    report = run(env, qm.start())
    return qm, report, platform


def test_restart_backs_out_a_shunted_unit_from_its_shunt_records_and_reads_no_archive():
    shunted = _crash_with_long_uow(shunting=True)
    plain = _crash_with_long_uow(shunting=False)
    qm_s, report_s, platform_s = _restart(shunted)
    qm_p, report_p, platform_p = _restart(plain, shunting=False)
    for qm, report in ((qm_s, report_s), (qm_p, report_p)):
        assert report.uows_backed_out == 1 and report.clrs_written == 5
        assert not qm.queues["LONG"].messages
    # the unshunted unit's first records left the active log long ago: restart read the archive
    assert platform_p.space.reads["archive"] > 0
    assert platform_s.space.reads["archive"] == 0
    # and its walk costs less: the shunt records it reads lie near the end of the log, where
    # the unshunted unit's walk goes back to its first records, each a cold block read
    walk = "recovery_backout_walk_s"
    assert report_s.restart_phases[walk] < report_p.restart_phases[walk]


def test_an_in_doubt_unit_stays_in_doubt_across_restart_after_shunting_and_can_be_resolved():
    durable = _crash_with_long_uow(shunting=True, prepare=True)
    qm, report, _ = _restart(durable)
    assert report.uows_indoubt == 1
    (uow,) = qm.in_doubt()
    assert sorted(op.msg_id for op in uow.ops) == sorted(qm.queues["LONG"].messages)
    run(qm.env, qm.resolve(uow.id, commit=True))
    assert len(qm.queues["LONG"].available) == 5


def test_a_crash_during_restart_undo_of_a_shunted_unit_repeats_no_undo():
    """1200 puts, shunted, undone by a restart that crashes part way: the next restart
    writes exactly the CLRs the first did not (review finding: it redid almost all)."""
    from mqlog.core.log.reader import LogReader
    from mqlog.core.format.records import Clr

    storage = FaultInjectingStorage(MemoryStorage())
    env, platform, qm = make(storage, data_sets=4, cis=256, logload=100_000)

    def go():
        yield from qm.start()
        yield from qm.define_queue("BIG")
        big = qm.connect("BIG")
        for i in range(1200):
            yield from big.put("BIG", b"%05d" % i)
        for _ in range(4):
            yield from qm.checkpoint("test", wait=True)
        assert big.uow.shunts == 1
        yield qm.writer.force()

    run(env, go())
    storage.crash()
    durable = storage.durable
    _, full, _ = _restart(_clone(durable), data_sets=4, cis=256)
    assert full.clrs_written == 1200
    partial = 0
    for j in range(1, 12):
        disk = _clone(durable)
        try:
            _restart(disk, plan=FaultPlan(crash_after_writes=j), data_sets=4, cis=256)
        except SimulatedCrash:
            pass
        else:
            break
        space = make(_clone(disk), data_sets=4, cis=256)[1].space
        space._load_or_create(create=False)
        done = {r.undoes for _, r in LogReader(space, space.start) if isinstance(r, Clr)}
        qm2, again, _ = _restart(disk, data_sets=4, cis=256)
        assert again.clrs_written == 1200 - len(done), (j, len(done))
        assert not qm2.queues["BIG"].messages
        partial += 0 < len(done) < 1200
    assert partial >= 1


def _clone(storage):
    copy = MemoryStorage()
    for name in storage.list():
        copy.write(name, 0, storage.read(name, 0, storage.size(name)))
    return copy


def test_a_crash_at_every_write_around_shunting_never_loses_or_resurrects_work():
    """Crash anywhere in the run – in the middle of a round of shunting included – and the
    long unit's puts are gone after restart while every busy commit survives."""
    full_storage = FaultInjectingStorage(MemoryStorage())
    env, _, qm = make(full_storage, logload=100_000)
    run(env, long_uow_workload(qm, checkpoints=5, traffic=10))
    total = full_storage.physical_writes
    for k in range(5, total, 3):
        storage = FaultInjectingStorage(MemoryStorage(), FaultPlan(crash_after_writes=k))
        env, _, qm = make(storage, logload=100_000)
        try:
            run(env, long_uow_workload(qm, checkpoints=5, traffic=10))
        except SimulatedCrash:
            pass
        qm2, report, _ = _restart(storage.durable)
        if "LONG" in qm2.queues:
            assert not qm2.queues["LONG"].messages, k
        qm2.check()


def test_with_archiving_off_an_unshunted_unit_whose_records_were_overwritten_cannot_be_backed_out():
    plain = _crash_with_long_uow(shunting=False, offload=False, dual_archive=False)
    with pytest.raises(BackoutImpossible, match="00D1032A"):
        _restart(plain, shunting=False, offload=False, dual_archive=False)
    shunted = _crash_with_long_uow(shunting=True, offload=False, dual_archive=False)
    qm, report, _ = _restart(shunted, offload=False, dual_archive=False)
    assert report.uows_backed_out == 1 and not qm.queues["LONG"].messages


def test_no_round_of_shunting_is_left_off_its_units_chain_while_the_unit_is_mid_call():
    """Review finding: a round appended while the unit's own MQI call waited for buffer space
    was skipped by the record that call then appended (built on the old chain end), so
    restart walked past the round. A unit with a call in progress is not shunted now."""
    from mqlog.core.log.reader import LogReader
    from mqlog.zos.records import Shunt

    storage = FaultInjectingStorage(MemoryStorage())
    env = simpy.Environment()
    platform = zos_platform(storage, data_sets=5, cis=64, logload=100_000, outbuff_kb=72, wrthrsh=2)
    qm = QueueManager(env, platform, storage, Device(env, get_profile("nfs3")), QmConfig())
    state = {}

    def go():
        yield from qm.start()
        yield from qm.define_queue("LONG")
        long = qm.connect("LONG")
        yield from long.put("LONG", b"first")
        uow = long.uow
        uow.checkpoints_seen = 3  # due for shunting at the next checkpoint
        filler = qm.connect("FILL")
        for _ in range(4):
            yield from filler.put("LONG", bytes(15_000))  # the buffer fills; the slow device lags
        waiting = env.process(long.put("LONG", bytes(40_000)))  # must wait for buffer space
        host = qm.cpu.profile  # past the call's own CPU (path, record, copy): now it waits for buffer space
        yield env.timeout(host.app_call_us + host.call_us("put") + host.logged_us("put", 40_000) + 1)
        state["mid_call"] = not waiting.triggered
        state["shunted_mid_call"] = qm._shunt(qm.schedule.number)  # what a checkpoint ending now does
        yield waiting
        state["shunted_after"] = qm._shunt(qm.schedule.number)
        yield from long.put("LONG", b"last")
        yield qm.writer.force()
        state["uow"] = uow

    env.run(until=env.process(go()))
    assert state["mid_call"]
    assert not state["shunted_mid_call"] and state["shunted_after"]  # it waits for the call to end
    uow = state["uow"]
    records = list(LogReader(platform.space, platform.space.start, record_types=platform.record_types))
    finals = {a for a, r in records if isinstance(r, Shunt) and r.uow == uow.id and r.final}
    pointed = {r.prev for _, r in records if getattr(r, "uow", 0) == uow.id}
    assert all(a in pointed for a in finals)  # every round is on the unit's chain


def test_a_log_too_small_for_what_it_must_keep_ends_the_run_instead_of_hanging():
    """An active log smaller than the room kept to back out the open units of work can never
    take more work: the callers waiting at CSQJ111A would wait, and checkpoints run, for ever
    (the run never ended). After 1000 futile checkpoints the queue manager ends abnormally,
    saying why, and leaves its files for a restart."""
    from mqlog.core.workload.run import RunConfig, run_workload
    from mqlog.core.workload.spec import BUILTINS, build_spec
    from mqlog.core.disk.storage import MemoryStorage
    from mqlog.platforms import choose

    choice = choose("zos")
    values = choice.configure({"ACTIVE_LOG_CIS": "64"})
    spec = build_spec(BUILTINS["long-uow"], {"background": "2", "duration": "1.0", "long_messages": "5000"},
                      origin="test")
    result = run_workload(RunConfig("zos", choice.maker(values), values, spec), MemoryStorage())
    assert result.crashed and "stayed full through 1000 checkpoints" in result.metrics["abnormal_end"]
    assert any("stayed full" in m for m in result.messages)
