"""Regressions from the adversarial review of media recovery and log-full handling: each test
failed before its fix (the review's reproducer, made into an assertion)."""

from __future__ import annotations

import random

import pytest
import simpy
from mqlog.core.disk.devices import Device, get_profile
from mqlog.core.errors import LogFileMissingError, SimulatedCrash
from mqlog.core.disk.faults import FaultInjectingStorage, FaultPlan
from mqlog.core.objects.media import MediaRecoveryError
from mqlog.core.qm.manager import QmConfig, QueueManager
from mqlog.core.disk.storage import MemoryStorage
from mqlog.core.objects.uow import MqiError, Reason
from mqlog.distributed.media import rcdmqimg, rcrmqobj
from mqlog.distributed.platform import distributed_platform
from mqlog.distributed.space import extent_name

from .qmkit import damage, datas, make_qm, run


def test_restart_can_always_back_out_a_large_unit_of_work_left_by_a_full_log():
    """The reserve covers restart's compensation records (one per operation), not only a
    normal backout record."""
    storage = FaultInjectingStorage(MemoryStorage())
    env, _, qm = make_qm(storage, pages=16, primary=2, secondary=1)

    def fill():
        yield from qm.start()
        yield from qm.define_queue("Q", max_depth=100_000)
        c = qm.connect("LOAD")
        for i in range(700):
            yield from c.put("Q", b"x")
            if i % 20 == 19:
                yield from c.commit()
        yield from c.commit()
        yield from qm.checkpoint("test", wait=True)
        g, n = qm.connect("BIG"), 0
        while True:
            try:
                yield from g.get("Q")
                n += 1
            except MqiError as exc:
                assert exc.reason is Reason.MQRC_RESOURCE_PROBLEM
                break
        yield qm.writer.force()
        return n

    assert run(env, fill()) > 100
    storage.crash()
    env, _, qm2 = make_qm(FaultInjectingStorage(storage.durable), pages=16, primary=2, secondary=1)
    report = run(env, qm2.start())
    assert report.uows_backed_out == 1 and qm2.writer.failed is None
    assert len(qm2.queues["Q"].messages) == 700


def test_rcrmqobj_refuses_a_queue_in_use_and_loses_no_acknowledged_put():
    storage = FaultInjectingStorage(MemoryStorage())
    env, _, qm = make_qm(storage, linear=True)

    def go():
        yield from qm.start()
        yield from qm.define_queue("Q")
        c = qm.connect("A")
        yield from c.put("Q", b"before", syncpoint=False)
        racing = env.process(c.put("Q", b"racing", syncpoint=False))  # logged, waiting for its force
        yield env.timeout(6)
        with pytest.raises(MediaRecoveryError, match="in use"):
            yield from rcrmqobj(qm, "Q")
        yield racing
        yield from rcrmqobj(qm, "Q")  # idle now
        return racing.value

    assert run(env, go()) is not None
    assert datas(qm) == [b"before", b"racing"]


def test_a_failed_rcrmqobj_leaves_the_queue_as_it_was():
    storage = FaultInjectingStorage(MemoryStorage())
    env, _, qm = make_qm(storage, linear=True)

    def go():
        yield from qm.start()
        yield from qm.define_queue("Q")
        c = qm.connect("A")
        for i in range(60):
            yield from c.put("Q", bytes(4000))
            yield from c.commit()
        storage.delete(extent_name(0))  # the queue's creation record is there
        with pytest.raises(LogFileMissingError, match="S0000000.LOG is missing"):
            yield from rcrmqobj(qm, "Q")
        yield from c.get("Q")
        yield from c.commit()

    run(env, go())
    assert "Q" in qm.queues and "Q" not in qm.damaged
    assert len(qm.queues["Q"].messages) == 59 and qm.media_address() != 0xFFFF_FFFF_FFFF_FFFF


def test_a_checkpoint_overlapping_define_keeps_the_new_queues_media_recovery_record():
    storage = FaultInjectingStorage(MemoryStorage())
    env, _, qm = make_qm(storage, linear=True)

    def go():
        yield from qm.start()
        defined = env.process(qm.define_queue("Q"))
        checkpoint = env.process(qm.checkpoint("timer"))
        yield defined & checkpoint
        c = qm.connect("A")
        yield from c.put("Q", b"x")
        yield from c.commit()

    run(env, go())
    storage.crash()
    durable = storage.durable
    damage(durable)
    env, _, qm2 = make_qm(FaultInjectingStorage(durable), linear=True)
    report = run(env, qm2.start())
    assert report.queues_recreated == 1 and datas(qm2) == [b"x"]


def test_an_image_cut_short_by_a_crash_does_not_become_the_media_recovery_record():
    def workload(qm):
        yield from qm.start()
        yield from qm.define_queue("Q")
        a = qm.connect("A")
        for i in range(70):
            yield from a.put("Q", b"m%03d" % i + bytes(10_000))
            yield from a.commit()
        yield from rcdmqimg(qm, "Q")  # complete
        for i in range(5):
            yield from a.put("Q", b"n%03d" % i + bytes(100))
            yield from a.commit()
        yield from rcdmqimg(qm, "Q")  # three segments: the crash comes part way

    tried = 0
    for k in range(60, 400):
        storage = FaultInjectingStorage(MemoryStorage(), FaultPlan(crash_after_writes=k))
        env, _, qm = make_qm(storage, pages=256, linear=True)
        try:
            run(env, workload(qm))
            break
        except SimulatedCrash:
            pass
        if qm.counters.media_images != 1 or not qm._imaging_queues:
            continue  # not during the second image
        durable = storage.durable
        env, _, qm2 = make_qm(FaultInjectingStorage(durable), pages=256, linear=True)
        run(env, qm2.start())
        expected = datas(qm2)
        run(env, qm2.shutdown())
        qm2.storage.crash()
        broken = qm2.storage.durable
        damage(broken)
        env, _, qm3 = make_qm(FaultInjectingStorage(broken), pages=256, linear=True)
        report = run(env, qm3.start())
        assert report.queues_recreated == 1, k
        assert datas(qm3) == expected, k
        tried += 1
    assert tried >= 3


@pytest.mark.parametrize("buffer_pages", [18, 32])
def test_many_callers_waiting_for_buffer_space_never_overrun_a_full_log(buffer_pages):
    failures = []
    for seed in range(8):
        storage = FaultInjectingStorage(MemoryStorage())
        env = simpy.Environment()
        platform = distributed_platform(storage, file_pages=16, primary=2, secondary=1, buffer_pages=buffer_pages)
        qm = QueueManager(env, platform, storage, Device(env, get_profile("ssd")), QmConfig())
        rng = random.Random(seed)

        def app(i, r):
            c = qm.connect(f"A{i}")
            for _ in range(6):
                try:
                    yield from c.put("Q", bytes(r.choice((2000, 20_000, 40_000, 60_000))))
                    if r.random() < 0.3:
                        yield from c.prepare(b"X%d" % i)
                        c.uow = None
                    else:
                        yield from c.commit()
                except MqiError as exc:
                    assert exc.reason is Reason.MQRC_RESOURCE_PROBLEM
                    yield from c.backout()

        def go():
            yield from qm.start()
            yield from qm.define_queue("Q")
            yield simpy.AllOf(env, [env.process(app(i, random.Random(rng.random()))) for i in range(12)])

        env.run(until=env.process(go()))
        if qm.writer.failed is not None:
            failures.append(seed)
    assert failures == []


def test_a_media_image_taken_during_alter_replays_the_alter():
    storage = FaultInjectingStorage(MemoryStorage())
    env, _, qm = make_qm(storage, linear=True)

    def go():
        yield from qm.start()
        yield from qm.define_queue("Q", max_depth=5000)
        altered = env.process(qm.alter_queue("Q", max_depth=7))
        imaged = env.process(rcdmqimg(qm, "Q"))
        yield altered & imaged

    run(env, go())
    storage.crash()
    durable = storage.durable
    damage(durable)
    env, _, qm2 = make_qm(FaultInjectingStorage(durable), linear=True)
    report = run(env, qm2.start())
    assert report.queues_recreated == 1 and qm2.queues["Q"].max_depth == 7


def test_two_images_of_one_queue_at_once_are_refused_not_interleaved():
    storage = FaultInjectingStorage(MemoryStorage())
    env, _, qm = make_qm(storage, pages=1024, linear=True)

    def go():
        yield from qm.start()
        yield from qm.define_queue("Q")
        c = qm.connect("A")
        for _ in range(40):
            yield from c.put("Q", bytes(20_000))
        yield from c.commit()
        first = env.process(rcdmqimg(qm, "Q"))
        yield env.timeout(1)
        with pytest.raises(MediaRecoveryError, match="already being recorded"):
            yield from rcdmqimg(qm, "Q")
        yield first

    run(env, go())
