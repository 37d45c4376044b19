"""Media recovery under crashes, with the contract harness's mixed workload on a linear
distributed log that also takes media images: a damaged queue is re-created exactly as an
undamaged restart finds it, after a crash at every write, and after a crash during the media
recovery itself."""

from __future__ import annotations

from contract.harness import PlatformConfig, clone, run_workload
from contract.harness import restart as harness_restart
from mqlog.core.disk.faults import FaultPlan
from mqlog.core.objects.queuefile import file_name_for
from mqlog.distributed.media import rcdmqimg
from mqlog.distributed.platform import distributed_platform


def damage(storage, name):
    """Overwrite both header slots of the queue's file: it no longer opens."""
    storage.write(file_name_for(name), 0, b"\xA5" * 1024)


def contents(qm, name):
    queue = qm.queues[name]
    return {m.msg_id: (m.state, m.uow, queue.read(m)[0]) for m in queue.messages.values()}


LINEAR = PlatformConfig("distributed-linear-media", lambda storage: distributed_platform(
    storage, file_pages=16, linear=True, checkpoint_records_max=1000))


def _image_q0(qm):
    yield from rcdmqimg(qm, "APP.Q0")


def full_contents(qm):
    return {name: contents(qm, name) for name in sorted(qm.queues)}


def test_after_a_crash_at_every_write_a_damaged_queue_is_recreated_exactly_as_it_would_have_restarted():
    """Crash after each physical write of a mixed workload that also takes media images;
    destroy APP.Q0's file; restart must re-create it to the same messages, states, owners
    and data as a restart with the file intact, and the journal must hold."""
    full = run_workload(LINEAR, seed=4, apps=3, rounds=14, imager=_image_q0)
    assert full.qm.counters.media_images >= 2
    total = full.storage.physical_writes
    recreated = 0
    for k in range(0, total, 2):
        out = run_workload(LINEAR, seed=4, apps=3, rounds=14, imager=_image_q0,
                           plan=FaultPlan(crash_after_writes=k))
        disk = out.storage.durable
        good, _, _ = harness_restart(LINEAR, clone(disk))
        broken = clone(disk)
        if not broken.exists(file_name_for("APP.Q0")):
            continue
        damage(broken, "APP.Q0")
        qm, report, crashed = harness_restart(LINEAR, broken)
        assert not crashed
        assert full_contents(qm) == full_contents(good), k
        assert out.journal.verify(qm).ok, k
        recreated += report is not None and report.queues_recreated
    assert recreated >= 10


def test_a_crash_during_media_recovery_at_restart_then_restart_again_loses_nothing():
    total = run_workload(LINEAR, seed=5, apps=4, rounds=16, imager=_image_q0).storage.physical_writes
    out = run_workload(LINEAR, seed=5, apps=4, rounds=16, imager=_image_q0,
                       plan=FaultPlan(crash_after_writes=total * 3 // 4))
    assert out.crashed
    good, _, _ = harness_restart(LINEAR, clone(out.storage.durable))
    expected = full_contents(good)
    damaged = clone(out.storage.durable)
    damage(damaged, "APP.Q0")
    interrupted = 0
    for j in range(1, 60):
        disk = clone(damaged)
        _, _, crashed = harness_restart(LINEAR, disk, FaultPlan(crash_after_writes=j))
        if not crashed:
            break
        interrupted += 1
        qm, report, crashed2 = harness_restart(LINEAR, disk)
        assert not crashed2
        assert full_contents(qm) == expected, j
        assert out.journal.verify(qm).ok, j
    assert interrupted >= 5


