"""The z/OS log: dual copies survive one damaged copy, a single
copy fails clearly, archives are written, recorded and read, MAXARCH trims the inventory,
OFFLOAD=NO overwrites, the RBA thresholds warn and terminate in both modes, DEFINE LOG and
SET LOG work while running, and checkpoints carry page-set control records."""

from __future__ import annotations

import pytest
import simpy

from mqlog.core.disk.devices import Device, get_profile
from mqlog.core.errors import LogCorruptionError, LogWriteError, MqlogError, ParameterError
from mqlog.core.disk.faults import FaultInjectingStorage
from mqlog.core.format.pages import PAGE_SIZE
from mqlog.core.qm.manager import QmConfig, QueueManager
from mqlog.core.log.reader import LogReader
from mqlog.core.disk.storage import MemoryStorage
from mqlog.zos.commands import define_log, set_log, set_system
from mqlog.zos.platform import zos_platform
from mqlog.zos.records import PagesetControl
from mqlog.zos.space import archive_name, data_set_name


def make(storage, **kwargs):
    env = simpy.Environment()
    kwargs.setdefault("data_sets", 3)
    kwargs.setdefault("cis", 16)
    platform = zos_platform(storage, **kwargs)
    qm = QueueManager(env, platform, storage, Device(env, get_profile("ssd")), QmConfig())
    return env, platform, qm


def run(env, gen):
    proc = env.process(gen)
    env.run(until=proc)
    return proc.value


def traffic(qm, n=120, size=2000, queue="Q"):
    if queue not in qm.queues:
        yield from qm.define_queue(queue)
    c = qm.connect("APP")
    for i in range(n):
        yield from c.put(queue, b"%06d" % i + bytes(size))
        yield from c.commit()


def started(**kwargs):
    storage = FaultInjectingStorage(MemoryStorage())
    env, platform, qm = make(storage, **kwargs)
    run(env, qm.start())
    return storage, env, platform, qm


def crash_and_restart(storage, **kwargs):
    storage.crash()
    env, platform, qm = make(FaultInjectingStorage(storage.durable), **kwargs)
    report = run(env, qm.start())
    return env, platform, qm, report


def damage_log(storage, copy: int, ds: int = 1, pages=range(2, 6)):
    for page in pages:
        storage.write(data_set_name(copy, ds), page * PAGE_SIZE, b"\xEE" * PAGE_SIZE)


def test_dual_logging_restarts_from_copy_2_when_copy_1_is_damaged():
    storage, env, platform, qm = started(cis=64)
    run(env, traffic(qm, 40))
    storage.crash()
    durable = storage.durable
    damage_log(durable, copy=1)
    env, platform, qm = make(FaultInjectingStorage(durable), cis=64)
    run(env, qm.start())
    assert len(qm.queues["Q"].messages) == 40
    assert platform.space.reads["copy2"] >= 4


def test_single_logging_with_a_damaged_data_set_ends_restart_with_a_clear_error():
    storage, env, platform, qm = started(cis=64, dual=False, dual_archive=False)
    run(env, traffic(qm, 40))
    storage.crash()
    durable = storage.durable
    damage_log(durable, copy=1)
    env, platform, qm = make(FaultInjectingStorage(durable), cis=64, dual=False, dual_archive=False)
    with pytest.raises(LogCorruptionError) as info:
        run(env, qm.start())
    assert data_set_name(1, 1) in str(info.value)


def test_both_copies_damaged_is_reported_not_papered_over():
    storage, env, platform, qm = started(cis=64)
    run(env, traffic(qm, 40))
    storage.crash()
    durable = storage.durable
    damage_log(durable, copy=1)
    damage_log(durable, copy=2)
    env, platform, qm = make(FaultInjectingStorage(durable), cis=64)
    with pytest.raises(LogCorruptionError):
        run(env, qm.start())


def test_full_data_sets_are_archived_dual_with_a_bsds_copy_and_recorded_in_the_bsds():
    storage, env, platform, qm = started()
    run(env, traffic(qm, 150))
    space = platform.space
    recorded = [e for e in space.archives if e.complete]
    assert len(recorded) >= 5 and space.switches >= 5
    for entry in recorded:
        assert entry.files == (archive_name("CSQARC1", entry.seq), archive_name("CSQARC2", entry.seq))
        assert all(storage.exists(f) for f in entry.files)
        assert storage.exists(archive_name("CSQARC1", entry.seq, "B"))
    # the archives tile the log: each starts where the one before ended
    for before, after in zip(recorded, recorded[1:]):
        assert after.start == before.end + 1
    assert any(m.startswith("CSQJ003I") for m in qm.messages)
    assert any(m.startswith("CSQJ002I") for m in qm.messages)


def test_an_active_data_set_is_never_reused_before_it_is_archived():
    storage, env, platform, qm = started()
    space = platform.space
    seen = []
    real = space.ring.switch

    def checking(address, checkpoint):
        nxt = space.active[(space.current + 1) % space.data_sets]
        seen.append(nxt.start == 0xFFFF_FFFF_FFFF_FFFF or nxt.archive > 0 or
                    # it may be archived in this very switch only if it is the one filling now
                    nxt is space.active[space.current])
        return real(address, checkpoint)

    space.ring.switch = checking
    run(env, traffic(qm, 150))
    assert seen and all(seen)


def test_maxarch_keeps_only_the_newest_archives_in_the_bsds():
    storage, env, platform, qm = started(max_arch=10)
    run(env, traffic(qm, 260))  # enough log for more than ten archives
    recorded = [e for e in platform.space.archives if e.complete]
    assert len(recorded) == 10
    # the BSDS lists the newest archive made (complete, or its offload still in progress)
    newest = platform.space.archives[-1]
    assert newest.seq == platform.space.next_archive - 1
    assert newest is recorded[-1] or (not newest.complete and newest.seq == recorded[-1].seq + 1)
    assert any("MAXARCH" in m for m in qm.messages)


def test_restart_reads_the_archive_for_a_unit_of_work_whose_records_left_the_active_log():
    storage, env, platform, qm = started()
    object.__setattr__(platform, "shunting", None)  # so that only the archive can help

    def go():
        yield from qm.define_queue("LONG")
        long = qm.connect("LONG")
        yield from long.put("LONG", b"early")
        yield from traffic(qm, 150)
        yield qm.writer.force()

    run(env, go())
    env, platform, qm, report = crash_and_restart(storage)
    assert report.uows_backed_out == 1 and not qm.queues["LONG"].messages
    assert platform.space.reads["archive"] > 0


def test_offload_no_reuses_data_sets_without_archiving():
    storage, env, platform, qm = started(offload=False, data_sets=3)
    run(env, traffic(qm, 150))
    assert not platform.space.archives
    assert not [n for n in storage.list() if n.startswith("CSQARC")]
    assert platform.space.switches > 3


@pytest.mark.parametrize("rba8, warning, termination", [
    (False, 0xF000_0000_0000, 0xFFF8_0000_0000),
    (True, 0xFFFF_8000_0000_0000, 0xFFFF_FFC0_0000_0000),
])
def test_rba_thresholds_warn_and_terminate(rba8, warning, termination):
    # just below the warning RBA: a little traffic crosses it
    storage, env, platform, qm = started(rba8=rba8, start_rba=warning - 0x20000)
    assert not any("CSQJ032E" in m for m in qm.messages)
    run(env, traffic(qm, 100))
    assert any("CSQJ032E" in m and "WARNING" in m for m in qm.messages)
    # just below the termination RBA: the queue manager ends with 00D10257
    storage, env, platform, qm = started(rba8=rba8, start_rba=termination - 0x10000)
    with pytest.raises((LogWriteError, MqlogError)) as info:
        run(env, traffic(qm, 100))
    assert "00D10257" in str(info.value) or qm.writer.failed is not None and "00D10257" in str(qm.writer.failed)


def test_conversion_to_8_byte_rbas_lifts_the_6_byte_limit_and_cannot_be_undone():
    storage, env, platform, qm = started(rba8=False, start_rba=0xFFF8_0000_0000 - 0x20000)
    run(env, qm.shutdown())
    assert platform.space.convert_to_rba8() is True
    env, platform, qm = make(FaultInjectingStorage(storage.durable), rba8=False,
                             start_rba=0xFFF8_0000_0000 - 0x20000)
    run(env, qm.start())
    run(env, traffic(qm, 100))  # past the old 6-byte termination point
    assert qm.writer.next_address > 0xFFF8_0000_0000 and platform.space.rba8
    assert platform.space.convert_to_rba8() is False
    with pytest.raises(LogCorruptionError.__mro__[1]):  # a 6-byte BSDS refuses an 8-byte configuration
        s2, e2, p2, q2 = started(rba8=False)
        run(e2, q2.shutdown())
        env3, p3, q3 = make(FaultInjectingStorage(s2.durable), rba8=True)
        run(env3, q3.start())


def test_define_log_adds_a_data_set_used_after_the_current_one():
    storage, env, platform, qm = started(data_sets=3)
    current = platform.space.active[platform.space.current].number
    name = define_log(qm)
    assert storage.exists(name) and storage.exists(name.replace("LOGCOPY1", "LOGCOPY2"))
    run(env, traffic(qm, 30))
    used = [m for m in qm.messages if m.startswith("CSQJ001I") and "COPY 1" in m]
    assert used and name in used[0]
    assert platform.space.data_sets == 4 and current == 1


def test_set_log_and_set_system_change_a_running_queue_manager():
    storage, env, platform, qm = started()
    run(env, traffic(qm, 10, size=4000, queue="A"))
    set_log(qm, COMPLOG="RLE", WRTHRSH=5, MAXARCH=50)
    assert platform.codec.complog == "RLE" and qm.writer.write_threshold_pages == 5
    assert platform.space.max_arch == 50
    before = platform.codec.stats()
    run(env, traffic(qm, 10, size=4000, queue="B"))  # zeros: RLE shrinks them
    after = platform.codec.stats()
    into = after["QJSTCMPUNCMP"] - before["QJSTCMPUNCMP"]
    out = after["QJSTCMPCOMP"] - before["QJSTCMPCOMP"]
    assert into == 10 * 4006 and out < into / 10
    set_system(qm, LOGLOAD=200)
    assert platform.checkpoint_policy.records == 200
    with pytest.raises(ParameterError, match="WRTHRSH"):
        set_log(qm, WRTHRSH=0)
    with pytest.raises(ParameterError, match="TWOACTV"):
        set_log(qm, TWOACTV="NO")
    # records written under RLE and under NONE both read back after a restart
    set_log(qm, COMPLOG="NONE")
    run(env, traffic(qm, 5, size=4000, queue="C"))
    env, platform, qm2, report = crash_and_restart(storage)
    assert {n: len(q.messages) for n, q in qm2.queues.items()} == {"A": 10, "B": 10, "C": 5}


def test_every_checkpoint_writes_a_page_set_control_record_listing_the_queues():
    storage, env, platform, qm = started()
    run(env, traffic(qm, 20))
    run(env, qm.checkpoint("test", wait=True))
    records = [r for _, r in LogReader(platform.space, platform.space.start,
                                                 record_types=platform.record_types) if isinstance(r, PagesetControl)]
    assert len(records) >= qm.counters.checkpoints - 1  # the start's checkpoint knew no queues yet too
    assert [p.name for p in records[-1].pagesets] == ["Q"] and records[-1].pagesets[0].depth == 20


def test_a_damaged_bsds_copy_is_passed_over_for_the_other():
    storage, env, platform, qm = started()
    run(env, traffic(qm, 50))
    storage.crash()
    durable = storage.durable
    durable.write("BSDS01", 10, b"garbage")
    env, platform, qm = make(FaultInjectingStorage(durable))
    run(env, qm.start())
    assert len(qm.queues["Q"].messages) == 50
    assert any("CSQJ126E" in m for m in qm.messages)


def test_a_crash_in_the_middle_of_an_offload_redoes_it_under_the_same_number():
    from mqlog.core.errors import SimulatedCrash
    from mqlog.core.disk.faults import FaultPlan

    full = FaultInjectingStorage(MemoryStorage())
    env, _, qm = make(full)
    run(env, qm.start())
    run(env, traffic(qm, 60))
    crashed_in_offload = 0
    for k in range(10, full.physical_writes):
        storage = FaultInjectingStorage(MemoryStorage(), FaultPlan(crash_after_writes=k))
        env, platform, qm = make(storage)
        try:
            run(env, qm.start())
            run(env, traffic(qm, 60))
            continue
        except SimulatedCrash:
            pass
        crashed_in_offload += any(e.seq and not e.complete for e in platform.space.archives)
        env, platform, qm = make(FaultInjectingStorage(storage.durable))
        run(env, qm.start())
        run(env, traffic(qm, 30, queue="MORE"))
        seqs = [e.seq for e in platform.space.archives if e.complete]
        assert seqs == list(range(1, len(seqs) + 1)), k  # no gaps, no duplicates
        listed = {f for e in platform.space.archives for f in e.files}
        on_disk = {n for n in qm.storage.list() if ".A" in n}
        assert on_disk <= listed | {n for n in on_disk if int(n[-7:]) >= platform.space.next_archive}, k
    assert crashed_in_offload >= 1


def test_a_full_active_log_makes_work_wait_with_csqj110e_and_csqj111a_and_loses_nothing():
    """Archiving off, two small data sets, a slow device and a deep queue whose checkpoint
    flush takes long: the last data set fills (CSQJ110E at 5% steps), the log runs out
    (CSQJ111A) and work waits until a checkpoint frees a data set – nothing fails."""
    storage = FaultInjectingStorage(MemoryStorage())
    env = simpy.Environment()
    platform = zos_platform(storage, data_sets=2, cis=16, offload=False, dual_archive=False, logload=100_000)
    qm = QueueManager(env, platform, storage, Device(env, get_profile("nfs3")), QmConfig())
    acked = []

    def deep():
        conn = qm.connect("DEEP")
        for _ in range(300):
            yield from conn.put("DEEP", bytes(100), syncpoint=False)

    def app(i):
        conn = qm.connect(f"APP{i}")
        for k in range(40):
            yield from conn.put("Q", b"%d-%d" % (i, k) + bytes(3000))
            yield from conn.commit()
            acked.append(b"%d-%d" % (i, k))

    def go():
        yield from qm.start()
        yield from qm.define_queue("Q")
        yield from qm.define_queue("DEEP")
        yield env.process(deep())
        yield simpy.AllOf(env, [env.process(app(i)) for i in range(6)])

    run(env, go())
    assert qm.writer.failed is None and len(acked) == 240
    steps = [int(m.split(" IS ")[1].split()[0]) for m in qm.messages if m.startswith("CSQJ110E")]
    assert steps and all(s % 5 == 0 for s in steps)
    assert any(m.startswith("CSQJ111A") for m in qm.messages)
    # once an episode (said once when the queue manager finds the log full, until a checkpoint
    # ends the episode): here each episode ends as a checkpoint frees a data set and the log
    # switches into it, so two CSQJ111A with no switch between them would be one said twice
    said = [m.split()[0] for m in qm.messages if m.startswith(("CSQJ111A", "CSQJ002I"))]
    assert all(not (a == b == "CSQJ111A") for a, b in zip(said, said[1:])), said
    env, platform, qm2, report = crash_and_restart(storage, data_sets=2, cis=16, offload=False, dual_archive=False)
    queue = qm2.queues["Q"]
    assert sorted(queue.read(m)[0].rstrip(b"\0") for m in queue.messages.values()) == sorted(acked)


def test_offload_of_a_data_set_damaged_in_both_copies_reports_the_gap():
    storage, env, platform, qm = started(cis=32)
    run(env, traffic(qm, 10))  # part of the first data set
    for copy in (1, 2):
        storage.write(data_set_name(copy, 1), 2 * PAGE_SIZE, b"\xEE" * PAGE_SIZE)
    run(env, traffic(qm, 80))  # fills it: the offload finds CI 2 bad in both copies
    gaps = [m for m in qm.messages if m.startswith("CSQJ124E")]
    assert gaps and "0000000000002000" in gaps[0]
    assert not [m for m in qm.messages if m.startswith("CSQJ124E") and "0000000000020000" in m]


def test_offload_of_a_data_set_damaged_in_one_copy_archives_the_other_copys_pages():
    storage, env, platform, qm = started(cis=32)
    run(env, traffic(qm, 10))
    storage.write(data_set_name(1, 1), 2 * PAGE_SIZE, b"\xEE" * PAGE_SIZE)
    run(env, traffic(qm, 80))
    assert not [m for m in qm.messages if m.startswith("CSQJ124E")]
    archive = platform.space.archives[0]
    page = storage.read(archive.files[0], 2 * PAGE_SIZE, PAGE_SIZE)
    from mqlog.core.format.pages import check_page
    assert check_page(page, archive.start + 2 * PAGE_SIZE)[1] is None


@pytest.mark.parametrize("rba8", [False, True])
def test_the_three_rba_warnings_come_in_turn_as_the_range_runs_out(rba8):
    from mqlog.zos.config import rba_limits

    limits = rba_limits(rba8)
    span = limits.termination - limits.warning
    seen = []
    # starting just short of each point: the warning in force there, then the next one
    for fraction, expected in ((0.0, ["CSQI045I"]), (0.5, ["CSQI045I", "CSQI046E"]),
                               (0.9, ["CSQI046E", "CSQI047E"])):
        start = (limits.warning + int(span * fraction)) // PAGE_SIZE * PAGE_SIZE - 0x8000
        storage, env, platform, qm = started(rba8=rba8, start_rba=start)
        run(env, traffic(qm, 30))
        said = [m.split()[0] for m in qm.messages if m.startswith("CSQI04")]
        assert said == expected, (fraction, said)
        seen.append(any("CRITICAL" in m for m in qm.messages))
    assert seen == [False, False, True]
