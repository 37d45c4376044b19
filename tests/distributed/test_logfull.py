"""True log full (MQ's documented behaviour, AMQ7463): when the log cannot take more, new work
is refused with MQRC_RESOURCE_PROBLEM (2102) and AMQ7463 (AMQ7465 when a long-running unit of
work holds the tail), while commit and backout still work from the reserve. The log is never
overrun, and work resumes once the tail moves."""

from __future__ import annotations

import simpy
from mqlog.core.disk.devices import Device, get_profile
from mqlog.core.disk.faults import FaultInjectingStorage
from mqlog.core.qm.manager import QmConfig, QueueManager
from mqlog.core.disk.storage import MemoryStorage
from mqlog.core.objects.uow import MqiError, Reason
from mqlog.distributed.platform import distributed_platform


def test_a_full_log_refuses_new_work_with_2102_keeps_commit_working_and_recovers_when_the_tail_moves():
    storage = FaultInjectingStorage(MemoryStorage())
    env = simpy.Environment()
    platform = distributed_platform(storage, file_pages=16, primary=2, secondary=1)
    qm = QueueManager(env, platform, storage, Device(env, get_profile("ssd")), QmConfig())
    outcome = {"refused": 0, "refused_commits": 0, "commits": 0, "after_resolve": 0}
    resolved_at = 40_000.0  # µs: the coordinator answers late

    def doubt():
        conn = qm.connect("DOUBT")
        for _ in range(4):  # ~64 KB: more than the log can copy once it is nearly full
            yield from conn.put("LONG", bytes(15_000))
        uow = yield from conn.prepare(b"XID")
        yield env.timeout(resolved_at - env.now)
        yield from qm.resolve(uow, commit=True)

    def worker(i):
        conn = qm.connect(f"W{i}")
        while env.now < 2 * resolved_at:
            try:
                yield from conn.put(f"BG{i}", bytes(2000))
            except MqiError as exc:
                assert exc.reason is Reason.MQRC_RESOURCE_PROBLEM, exc
                outcome["refused"] += 1
            try:
                yield from conn.commit()
            except MqiError:
                outcome["refused_commits"] += 1
                raise
            outcome["commits"] += 1
            if env.now > resolved_at:
                outcome["after_resolve"] += 1
            try:
                yield from conn.get(f"BG{i}")
            except MqiError as exc:
                assert exc.reason in (Reason.MQRC_RESOURCE_PROBLEM, Reason.MQRC_NO_MSG_AVAILABLE), exc
                outcome["refused"] += exc.reason is Reason.MQRC_RESOURCE_PROBLEM
            yield from conn.commit()

    def go():
        yield from qm.start()
        for name in ["LONG"] + [f"BG{i}" for i in range(4)]:
            yield from qm.define_queue(name)
        yield simpy.AllOf(env, [env.process(doubt())] + [env.process(worker(i)) for i in range(4)])

    env.run(until=env.process(go()))
    assert qm.writer.failed is None  # the log was never overrun
    assert outcome["refused"] > 0 and outcome["refused_commits"] == 0
    assert outcome["after_resolve"] > 0  # space came back once the coordinator answered
    text = "\n".join(qm.messages)
    assert "AMQ7463" in text and "AMQ7465" in text
    assert qm.counters.log_full_refusals == outcome["refused"]
    assert qm.log_used_max <= platform.space.capacity_bytes


def test_a_log_filled_faster_than_checkpoints_free_it_says_amq7466_not_amq7465():
    """No unit of work holds the tail: a burst of out-of-syncpoint puts fills a tiny log
    between checkpoints. The refusal names housekeeping, not a long-running transaction."""
    storage = FaultInjectingStorage(MemoryStorage())
    env = simpy.Environment()
    platform = distributed_platform(storage, file_pages=16, primary=2, secondary=1,
                                    checkpoint_records_max=100_000)
    qm = QueueManager(env, platform, storage, Device(env, get_profile("ssd")), QmConfig())
    refused = []

    def putter(i):
        conn = qm.connect(f"P{i}")
        for _ in range(40):
            try:
                yield from conn.put("Q", bytes(8000), syncpoint=False)
            except MqiError as exc:
                refused.append(exc.reason)

    def go():
        yield from qm.start()
        yield from qm.define_queue("Q")
        yield simpy.AllOf(env, [env.process(putter(i)) for i in range(6)])

    env.run(until=env.process(go()))
    text = "\n".join(qm.messages)
    assert refused and set(refused) == {Reason.MQRC_RESOURCE_PROBLEM}
    assert "AMQ7466" in text and "AMQ7465" not in text
    assert qm.writer.failed is None


def test_a_get_the_full_log_refused_is_no_get():
    """A get refused while its record was being logged (2102) leaves its message on the queue
    and is not counted as got: the queue manager's count is of the gets that handed an
    application a message (it was counted before the record was logged, so a log-full storm
    once showed more messages got than put)."""
    storage = FaultInjectingStorage(MemoryStorage())
    env = simpy.Environment()
    platform = distributed_platform(storage, file_pages=16, primary=2, secondary=1)
    qm = QueueManager(env, platform, storage, Device(env, get_profile("ssd")), QmConfig())
    seen = {"put_refused": False, "got": 0, "refused": 0}

    def go():
        yield from qm.start()
        for name in ("LONG", "FILL", "Q"):
            yield from qm.define_queue(name)
        loader = qm.connect("LOADER")
        for _ in range(40):
            yield from loader.put("Q", bytes(10))
        yield from loader.commit()
        # an in-doubt unit holds the tail: nothing a checkpoint or the space policy does frees it
        doubt = qm.connect("DOUBT")
        yield from doubt.put("LONG", bytes(100))
        yield from doubt.prepare(b"XID")
        filler = qm.connect("FILLER")
        while not seen["put_refused"]:  # small puts until the log takes no more of them
            try:
                yield from filler.put("FILL", bytes(10))
                yield from filler.commit()
            except MqiError as exc:
                assert exc.reason is Reason.MQRC_RESOURCE_PROBLEM, exc
                seen["put_refused"] = True
        getter = qm.connect("GETTER")
        while not seen["refused"]:  # a get logs less than a put: it fits a while longer
            depth, got = qm.queues["Q"].depth, qm.counters.messages_got
            try:
                message = yield from getter.get("Q")
            except MqiError as exc:
                assert exc.reason is Reason.MQRC_RESOURCE_PROBLEM, exc
                seen["refused"] += 1
                assert qm.counters.messages_got == got  # no get
                assert qm.queues["Q"].depth == depth  # its message is still there
            else:
                assert message is not None and qm.counters.messages_got == got + 1
                seen["got"] += 1
            assert seen["got"] < 40, "the log never refused a get"

    env.run(until=env.process(go()))
    assert seen["put_refused"] and seen["refused"] == 1
    assert qm.counters.log_full_refusals >= 2
