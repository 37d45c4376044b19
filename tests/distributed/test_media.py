"""Media images and media recovery (IBM MQ, "Media recovery"): rcdmqimg, rcrmqobj, automatic re-creation of a
damaged queue at restart on a linear log, MEDIALOG, LogManagement and SET LOG ARCHIVED."""

from __future__ import annotations

import pytest
import simpy
from mqlog.core.errors import LogFormatError
from mqlog.core.disk.faults import FaultInjectingStorage
from mqlog.core.objects.media import (
    ImagedMessage,
    MediaRecoveryError,
    decode_image,
    encode_image,
)
from mqlog.core.objects.queuefile import MessageState, file_name_for
from mqlog.core.disk.storage import MemoryStorage
from mqlog.core.objects.uow import MqiError, Reason
from mqlog.distributed.media import MediaImage, rcdmqimg, rcrmqobj
from mqlog.distributed.space import extent_name

from .qmkit import PAGES, contents, damage, datas, make_qm, run


def workload(qm, *, image_after: int | None = 30, more: int = 20):
    """Committed puts, a media image, more puts and gets, then a unit of work left in flight
    and one left prepared (in doubt). Deterministic."""
    yield from qm.start()
    yield from qm.define_queue("Q")
    yield from qm.define_queue("OTHER")
    a = qm.connect("A")
    for i in range(40):
        yield from a.put("Q", b"first-%03d" % i + bytes(900 + 37 * i))
        yield from a.put("OTHER", b"other-%03d" % i)
        yield from a.commit()
        if image_after is not None and i == image_after:
            yield from rcdmqimg(qm, "Q")
    for i in range(more):
        yield from a.put("Q", b"later-%03d" % i + bytes(3000))
        yield from a.commit()
    for _ in range(15):
        yield from a.get("Q")
    yield from a.commit()
    flight = qm.connect("FLIGHT")
    for i in range(3):
        yield from flight.put("Q", b"inflight-%d" % i)
    yield from flight.get("Q")
    doubt = qm.connect("DOUBT")
    yield from doubt.put("Q", b"indoubt-0")
    yield from doubt.get("Q")
    yield from doubt.prepare(b"XID-1")
    yield qm.writer.force()


def crashed_after(workload_kwargs=None, **platform_kwargs):
    storage = FaultInjectingStorage(MemoryStorage())
    env, platform, qm = make_qm(storage, **platform_kwargs)
    run(env, workload(qm, **(workload_kwargs or {})))
    storage.crash()
    return storage.durable


def restart(durable, **platform_kwargs):
    env, platform, qm = make_qm(FaultInjectingStorage(durable), **platform_kwargs)
    report = run(env, qm.start())
    return env, platform, qm, report


@pytest.mark.parametrize("image_after", [30, None], ids=["from-an-image", "from-the-creation-record"])
def test_restart_recreates_a_damaged_queue_on_a_linear_log_exactly_as_an_undamaged_restart_finds_it(image_after):
    intact = crashed_after({"image_after": image_after}, linear=True)
    damaged = crashed_after({"image_after": image_after}, linear=True)
    damage(damaged)
    _, _, good, _ = restart(intact, linear=True)
    _, _, mended, report = restart(damaged, linear=True)
    assert report.queues_recreated == 1 and report.queues_damaged == []
    assert any("AMQ7472" in line for line in report.messages)
    expected = contents(good)
    assert contents(mended) == expected
    # the oracle is not trivial: committed, in-doubt and backed-out work all meet here
    states = [state for state, _, _ in expected.values()]
    # 60 put, 15 got; the in-flight get was backed out, the in-doubt one still holds its message
    assert states.count(MessageState.COMMITTED) == 40 + 20 - 15 - 1
    assert MessageState.PUT_UNCOMMITTED in states and MessageState.GOT_UNCOMMITTED in states
    assert not any(data.startswith(b"inflight") for _, _, data in expected.values())
    assert [u.xid for u in mended.in_doubt()] == [b"XID-1"]
    assert contents(mended, "OTHER") == contents(good, "OTHER")


def test_the_recreated_queue_file_is_written_and_a_second_restart_needs_no_media_recovery():
    damaged = crashed_after(linear=True)
    damage(damaged)
    env, platform, qm, _ = restart(damaged, linear=True)
    before = contents(qm)
    run(env, qm.shutdown())
    _, _, again, report = restart(damaged, linear=True)
    assert report.queues_recreated == 0
    assert contents(again) == before


def test_a_circular_log_cannot_recover_a_damaged_queue_it_is_marked_damaged_and_applications_get_2101():
    durable = crashed_after({"image_after": None})
    damage(durable)
    env, platform, qm, report = restart(durable)
    assert report.queues_damaged == ["Q"] and "Q" in qm.damaged
    assert any(line.startswith("AMQ7472") and "Q" in line for line in report.messages)
    assert len(qm.queues["OTHER"].messages) == 40  # the rest of the queue manager works

    def use():
        conn = qm.connect("APP")
        with pytest.raises(MqiError) as info:
            yield from conn.put("Q", b"x", syncpoint=False)
        assert info.value.reason is Reason.MQRC_OBJECT_DAMAGED
        yield from conn.put("OTHER", b"y", syncpoint=False)
        with pytest.raises(MediaRecoveryError):
            yield from rcdmqimg(qm, "OTHER")
        # a damaged queue can be deleted, and then defined afresh
        yield from qm.delete_queue("Q")
        yield from qm.define_queue("Q")
        yield from conn.put("Q", b"z", syncpoint=False)
        return len(qm.queues["Q"].messages)

    assert run(env, use()) == 1


def test_a_missing_queue_file_is_recreated_too():
    durable = crashed_after(linear=True)
    durable.delete(file_name_for("Q"))
    _, _, qm, report = restart(durable, linear=True)
    assert report.queues_recreated == 1
    assert "missing" in " ".join(report.messages)
    assert sum(1 for m in qm.queues["Q"].messages.values() if m.state is MessageState.COMMITTED) == 44


def test_rcrmqobj_rebuilds_a_running_queue_from_the_log_without_changing_it():
    storage = FaultInjectingStorage(MemoryStorage())
    env, platform, qm = make_qm(storage, linear=True)

    def go():
        yield from qm.start()
        yield from qm.define_queue("Q")
        a = qm.connect("A")
        for i in range(50):
            yield from a.put("Q", b"m%03d" % i + bytes(i * 50))
            yield from a.commit()
            if i == 20:
                yield from rcdmqimg(qm, "Q")
        for _ in range(7):
            yield from a.get("Q")
        yield from a.commit()
        before = contents(qm)
        damage(storage)
        yield from rcrmqobj(qm, "Q")
        return before

    before = run(env, go())
    assert contents(qm) == before
    assert qm.counters.queues_recreated == 1


def test_an_image_taken_while_other_applications_work_loses_nothing():
    """The image is fuzzy: putters, getters and committers keep running while it is written.
    Re-creating from it gives the same queue as the live one."""
    storage = FaultInjectingStorage(MemoryStorage())
    env, platform, qm = make_qm(storage, linear=True)
    done = []

    def app(name, n):
        conn = qm.connect(name)
        for i in range(n):
            yield from conn.put("Q", b"%s-%04d" % (name.encode(), i) + bytes(500))
            if i % 3 == 2:
                yield from conn.get("Q")
            yield from conn.commit()
        done.append(name)

    def imager():
        for _ in range(5):
            yield env.timeout(400)
            yield from rcdmqimg(qm, "Q")

    def go():
        yield from qm.start()
        yield from qm.define_queue("Q")
        procs = [env.process(app(f"APP{i}", 120)) for i in range(4)] + [env.process(imager())]
        yield simpy.AllOf(env, procs)
        live = contents(qm)
        damage(storage)
        yield from rcrmqobj(qm, "Q")
        return live

    live = run(env, go())
    assert len(done) == 4 and qm.counters.media_images == 5
    assert contents(qm) == live


def test_medialog_moves_forward_with_an_image_and_amq7468_says_so():
    storage = FaultInjectingStorage(MemoryStorage())
    env, platform, qm = make_qm(storage, linear=True)
    seen = {}

    def go():
        yield from qm.start()
        yield from qm.define_queue("Q")
        a = qm.connect("A")
        for i in range(300):
            yield from a.put("Q", bytes(2000))
            yield from a.commit()
            yield from a.get("Q")
            yield from a.commit()
        yield from qm.checkpoint("test", wait=True)
        seen["before"] = platform.space.status(qm.writer.next_address)
        yield from rcdmqimg(qm, "Q")
        seen["after"] = platform.space.status(qm.writer.next_address)

    run(env, go())
    before, after = seen["before"], seen["after"]
    assert before["MEDIALOG"] == extent_name(0)  # the queue's creation record
    assert after["MEDIALOG"] == after["CURRLOG"] != before["MEDIALOG"]
    assert after["MEDIASZ"] < before["MEDIASZ"]
    assert any("AMQ7468" in line and after["MEDIALOG"] in line for line in qm.messages)
    assert any(line.startswith("AMQ7467") for line in qm.messages)


def _extent_files(storage):
    return sorted(n for n in storage.list() if n.endswith(".LOG") and n.startswith("S"))


def _busy_linear(management, *, archive=None, images=True):
    storage = FaultInjectingStorage(MemoryStorage())
    env, platform, qm = make_qm(storage, linear=True, management=management)

    def go():
        yield from qm.start()
        yield from qm.define_queue("Q")
        a = qm.connect("A")
        for i in range(1500):
            yield from a.put("Q", bytes(2000))
            yield from a.commit()
            yield from a.get("Q")
            yield from a.commit()
            if images and i % 100 == 99:
                yield from rcdmqimg(qm, "Q")
            if archive is not None and i % 100 == 99:
                archive(platform.space)

    run(env, go())
    return storage, platform, qm


def test_logmanagement_manual_keeps_every_extent_automatic_reuses_them():
    manual_storage, manual, _ = _busy_linear("Manual")
    auto_storage, auto, auto_qm = _busy_linear("Automatic")
    assert manual.space.reused == 0
    kept = _extent_files(manual_storage)
    assert kept == [extent_name(n) for n in range(len(kept))]  # every extent since the first is kept
    assert len(kept) > manual.space.primary + manual.space.secondary
    assert auto.space.reused > 0
    assert len(_extent_files(auto_storage)) < len(_extent_files(manual_storage))
    assert auto.space.status(auto_qm.writer.next_address)["REUSESZ"] >= 0


def test_logmanagement_archive_reuses_only_extents_set_log_archived_names():
    storage, platform, qm = _busy_linear("Archive")
    assert platform.space.reused == 0  # nothing was archived
    status = platform.space.status(qm.writer.next_address)
    assert status["ARCHLOG"] == extent_name(0) and status["ARCHSZ"] > 0

    def archive_all(space):
        for ext in list(space.extents.values()):
            if ext.start != 0xFFFF_FFFF_FFFF_FFFF and ext.number != space.current and not ext.reusable:
                space.set_log_archived(extent_name(ext.number))

    storage2, platform2, qm2 = _busy_linear("Archive", archive=archive_all)
    assert platform2.space.reused > 0


def test_set_log_archived_refuses_what_mq_refuses():
    storage, platform, qm = _busy_linear("Automatic", images=False)
    with pytest.raises(ValueError, match="LogManagement=Archive"):
        platform.space.set_log_archived("S0000000.LOG")
    storage, platform, qm = _busy_linear("Archive", images=False)
    space = platform.space
    with pytest.raises(ValueError, match="being written"):
        space.set_log_archived(extent_name(space.current))
    with pytest.raises(ValueError, match="not recognized"):
        space.set_log_archived("S9999999.LOG")
    assert space.set_log_archived("S0000000.LOG") is True
    assert space.set_log_archived("S0000000.LOG") is False  # again: a message, not a failure


def test_media_recovery_needing_a_deleted_extent_leaves_the_queue_damaged_with_the_reason():
    durable = crashed_after({"image_after": None, "more": 400}, linear=True)
    damage(durable)
    durable.delete(extent_name(0))  # MEDIALOG: the queue's creation record is in it
    _, _, qm, report = restart(durable, linear=True)
    assert report.queues_damaged == ["Q"]
    assert "media recovery failed" in qm.damaged["Q"].reason
    assert any(line.startswith("AMQ6767") and extent_name(0) in line for line in qm.messages)


def test_the_media_image_record_round_trips_and_sizes_as_the_sizing_guide_says():
    first = MediaImage("Q", 4096, 0, 2, bytes(1000))
    later = MediaImage("Q", 4096, 1, 2, bytes(1000))
    assert len(first.to_bytes()) == 800 + 1000 and len(later.to_bytes()) == 300 + 1000
    for record in (first, later):
        assert MediaImage.from_bytes(record.to_bytes()) == record
    image = encode_image("MAXDEPTH(5)", [ImagedMessage(b"A" * 24, MessageState.COMMITTED, 0, 7, b"data")])
    assert decode_image(image)[0] == "MAXDEPTH(5)"
    broken = image[:-1] + b"X"
    with pytest.raises(LogFormatError, match="checksum"):
        decode_image(broken)


def _deep_busy(**platform_kwargs):
    """A queue kept about 50 messages deep while work flows through it: never empty, so
    only images (not emptiness) can move its media recovery record."""
    storage = FaultInjectingStorage(MemoryStorage())
    env, platform, qm = make_qm(storage, linear=True, **platform_kwargs)

    def go():
        yield from qm.start()
        yield from qm.define_queue("Q")
        a = qm.connect("A")
        for i in range(50):
            yield from a.put("Q", bytes(1000))
        yield from a.commit()
        for i in range(1500):
            yield from a.put("Q", bytes(2000))
            yield from a.commit()
            yield from a.get("Q")
            yield from a.commit()

    run(env, go())
    return storage, platform, qm


def test_automatic_logmanagement_images_queues_by_itself_and_keeps_the_disk_bounded():
    manual_storage, manual, manual_qm = _deep_busy(management="Manual", image_log_mb=0.5)
    auto_storage, auto, auto_qm = _deep_busy(management="Automatic", image_log_mb=0.5)
    assert manual_qm.counters.media_images == 0  # Manual: images only on request
    assert auto_qm.counters.media_images >= 5  # IMGLOGLN-driven, about every 0.5 MB of log
    head = auto_qm.writer.next_address
    # checked after each checkpoint, which come at least every extent switch here
    assert head - auto_qm.queues["Q"].media_address <= 0.5e6 + 2 * PAGES * 4096
    status = auto.space.status(head)
    assert status["MEDIALOG"] >= extent_name(auto.space.current - 3)
    assert auto.space.reused > 0
    assert len(_extent_files(auto_storage)) < len(_extent_files(manual_storage)) // 2


def test_at_shutdown_empty_queues_are_imaged_and_deep_ones_are_not():
    storage = FaultInjectingStorage(MemoryStorage())
    env, platform, qm = make_qm(storage, linear=True)

    def go():
        yield from qm.start()
        yield from qm.define_queue("EMPTY")
        yield from qm.define_queue("DEEP")
        a = qm.connect("A")
        for _ in range(20):
            yield from a.put("DEEP", bytes(3000))
            yield from a.put("EMPTY", bytes(3000))
            yield from a.commit()
            yield from a.get("EMPTY")
            yield from a.commit()
        created = {n: q.media_address for n, q in qm.queues.items()}
        yield from qm.shutdown()
        return created

    created = run(env, go())
    assert qm.queues["EMPTY"].media_address > created["EMPTY"]
    assert qm.queues["DEEP"].media_address == created["DEEP"]
    assert qm.counters.media_images == 1


def test_a_linear_log_that_reused_its_first_extents_restarts_and_reports_its_extents():
    """Automatic reuse deletes the oldest extents, the first primaries among them: the
    restarted queue manager finds every message and its extent list names only files that
    exist (the control file once kept naming the deleted ones, and restart failed with a
    KeyError)."""
    storage, platform, qm = _busy_linear("Automatic")
    assert platform.space.reused > 0 and not platform.space.storage.exists(extent_name(0))
    before = datas(qm)
    storage.crash()
    _, again, qm2, report = restart(storage.durable, linear=True, management="Automatic")
    assert datas(qm2) == before
    assert report.queues_damaged == []
    metrics = again.space.metrics()
    assert all(again.space.storage.exists(extent_name(n)) for n in metrics["ring"])
