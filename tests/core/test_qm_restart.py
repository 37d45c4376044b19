"""The figures restart reports come from the mechanics (records replayed, uncommitted messages,
depth, storage latency, 9.1.1 against legacy), flushes and the write-ahead rule, the compression
hook, and restarts through roll-forwards, large messages and damaged records."""

from __future__ import annotations

import pytest
import simpy
from mqlog.core.disk.devices import Device, get_profile
from mqlog.core.disk.faults import FaultPlan
from mqlog.core.qm.manager import QmConfig
from mqlog.core.objects.queuefile import MessageState
from mqlog.core.disk.storage import MemoryStorage
from qmrig import OldestOut, Rig, define


# --- the recovery report's figures come from the mechanics ---------------------------------

def _restart_time(depth=0, uncommitted=0, records=0, device="ssd", mode="9.1.1", queues=1):
    rig = Rig(checkpoint_records=1_000_000)
    names = [f"Q{i}" for i in range(queues)]
    define(rig, *names, max_depth=1_000_000)
    loader, holder, busy = rig.qm.connect("L"), rig.qm.connect("H"), rig.qm.connect("B")

    def go():
        for i in range(depth):
            yield from loader.put(names[i % queues], b"d" * 500)
            if i % 100 == 99:
                yield from loader.commit()
        yield from loader.commit()
        yield from rig.qm.checkpoint("load")  # deep queues now in their files
        for i in range(uncommitted):
            yield from holder.put(names[i % queues], b"u" * 500)
        for i in range(records // 2):
            yield from busy.put(names[-1], b"r" * 100)
            yield from busy.commit()
            yield from busy.get(names[-1])
            yield from busy.commit()
        yield from busy.put(names[0], b"forces the log", syncpoint=False)

    rig.run(go())
    after = rig.restart(device=device, config=QmConfig(restart_mode=mode), checkpoint_records=1_000_000)
    return after.report


def test_restart_time_grows_with_records_replayed():
    small, large = _restart_time(records=200), _restart_time(records=2000)
    assert large.records_replayed > 5 * small.records_replayed
    assert large.phases["replay"] > 5 * small.phases["replay"]


def test_restart_time_grows_with_uncommitted_messages():
    few, many = _restart_time(uncommitted=10), _restart_time(uncommitted=1000)
    assert many.messages_reconciled >= 1000 > few.messages_reconciled
    assert many.restart_virtual_s > few.restart_virtual_s


def test_restart_time_grows_with_the_depth_of_queues_in_flight_work_touched():
    # An uncommitted message on the queue makes recovery load it (a queue nothing in flight
    # touched is left to its first use: tests/test_restart_mechanisms.py).
    shallow, deep = _restart_time(depth=100, uncommitted=1), _restart_time(depth=5000, uncommitted=1)
    assert deep.messages_loaded == 5000 and shallow.messages_loaded == 100
    assert deep.phases["load"] > 5 * shallow.phases["load"]


def test_restart_time_grows_with_storage_latency():
    times = [_restart_time(depth=500, records=300, device=d).restart_virtual_s
             for d in ("ssd", "san", "nfs1", "nfs3")]
    assert times == sorted(times) and times[-1] > 5 * times[0]


def test_911_restart_beats_legacy_on_slow_storage():
    # one uncommitted message on each queue: recovery loads all 8 (IBM's parallel-loading test)
    legacy = _restart_time(depth=2000, uncommitted=8, records=500, queues=8, device="nfs3", mode="legacy")
    modern = _restart_time(depth=2000, uncommitted=8, records=500, queues=8, device="nfs3", mode="9.1.1")
    assert modern.phases["load"] < legacy.phases["load"]
    assert modern.phases["replay"] < legacy.phases["replay"]
    assert modern.records_replayed == legacy.records_replayed


def test_a_clean_shutdown_replays_only_its_last_checkpoint():
    rig = Rig()
    define(rig, "Q")
    conn = rig.qm.connect("A")

    def go():
        for i in range(50):
            yield from conn.put("Q", b"x")
            yield from conn.commit()
        yield from rig.qm.shutdown()

    rig.run(go())
    after = rig.restart()
    assert after.report.records_replayed == 2  # the shutdown checkpoint's begin and end
    assert after.qm.queues["Q"].depth == 50


def test_a_flush_shows_an_outcome_whose_record_is_on_disk_before_memory_catches_up():
    # Defence in depth for the race above: should a flush ever run between a Commit
    # record reaching the disk and the committing process resuming, the file must show
    # the outcome, because restart starts after that record and will not see it again.
    from mqlog.core.objects.queuefile import QueueFile
    from mqlog.core.objects.queues import Message, Queue

    storage = MemoryStorage()
    queue = Queue("Q", QueueFile.create(storage, "Q"))
    for i, uow in enumerate((7, 8, 9)):
        queue.add(Message(b"%024d" % i, i + 1, True, 3, b"abc", MessageState.PUT_UNCOMMITTED, uow, put_address=100))
    gotten = Message(b"%024d" % 9, 10, True, 3, b"xyz", MessageState.GOT_UNCOMMITTED, 7, 50, get_address=120)
    queue.messages[gotten.msg_id] = gotten
    queue.dirty.add(gotten.msg_id)
    outcomes = {7: True, 8: False}  # 7 committed, 8 backed out, 9 still open (records durable)
    queue.flush(durable=1000, outcome=lambda uow, durable: outcomes.get(uow))
    reopened, _ = QueueFile.open(storage, "Q")
    states = {m.msg_id: m.state for m in reopened.messages.values()}
    assert states == {b"%024d" % 0: MessageState.COMMITTED, b"%024d" % 2: MessageState.PUT_UNCOMMITTED}


def test_a_flush_with_an_older_durable_address_never_takes_the_file_back():
    # The crash at 180 requesters (issue 35): a checkpoint took the durable address once and
    # flushed queue after queue; a spill of a later queue ran in between with a newer one and
    # removed a got message whose Commit it saw on disk. The checkpoint's flush then came with
    # the older address, for which the Commit was not yet durable, and tried to write the
    # message back as committed: its data had left memory when it first reached the file.
    from mqlog.core.objects.queuefile import QueueFile
    from mqlog.core.objects.queues import Message, Queue

    storage = MemoryStorage()
    queue = Queue("Q", QueueFile.create(storage, "Q"))
    msg_id = b"%024d" % 1
    queue.add(Message(msg_id, 1, True, 3, b"abc", MessageState.COMMITTED, 0, put_address=100))
    queue.flush(durable=200)
    message = queue.messages[msg_id]
    assert message.data is None  # in the file now, not held twice
    queue.lock(message, uow=7, get_address=300)  # got under syncpoint; its Commit record at 400
    committed = {7: 400}

    def outcome(uow, durable):
        return True if committed.get(uow, durable) < durable else None

    queue.flush(durable=500, outcome=outcome)  # the spill: the Commit is on disk
    assert msg_id not in QueueFile.open(storage, "Q")[0].messages
    queue.flush(durable=250, outcome=outcome)  # the checkpoint, with the address it took first
    assert msg_id not in QueueFile.open(storage, "Q")[0].messages  # still gone: the file moved on only


class ZlibAsRle:
    """A test codec standing in for a platform's: compresses when it helps, and says so."""

    active = True

    def __init__(self):
        self.decoded = 0

    def stats(self):
        return {}

    def compress(self, data, *, kept=False):
        import zlib

        from mqlog.core.format.records import Codec

        packed = zlib.compress(data)
        # priced as RLE (what the stand-in says it is): the run's CPU is not what is tested here
        return (Codec.RLE, packed, ("rle",)) if len(packed) < len(data) else (Codec.NONE, data, ("rle",))

    def decode(self, codec, stored):
        import zlib

        self.decoded += 1
        return zlib.decompress(stored)


def test_the_compression_hook_shrinks_the_log_and_restart_expands_it():
    codec = ZlibAsRle()
    rig = Rig(codec=codec, config=QmConfig(persistent_buffer_bytes=4 << 20))  # no spill: the log is the only copy
    define(rig, "Q")
    conn = rig.qm.connect("A")
    padded = [(b"RECORD %05d" % i).ljust(4000, b" ") for i in range(20)]  # what RLE likes
    big = b"".join(padded) * 3  # 240 000 bytes

    def go():
        for data in padded + [big]:
            yield from conn.put("Q", data)
        yield from conn.commit()

    rig.run(go())
    counters = rig.qm.counters
    assert counters.compression_in_bytes == sum(map(len, padded)) + len(big)
    assert counters.compression_out_bytes < counters.compression_in_bytes / 10
    assert rig.stats().logical_bytes < counters.compression_in_bytes / 5
    assert rig.qm.counters.spills == 0
    after = rig.restart(codec=codec)  # the queue file was never flushed: data comes from the log
    queue = after.qm.queues["Q"]
    assert sorted(queue.read(m)[0] for m in queue.messages.values()) == sorted(padded + [big])
    assert codec.decoded == len(padded) + 1


def test_the_restart_report_carries_the_platform_messages_and_real_figures():
    rig = Rig()
    define(rig, "Q")
    a, b = rig.qm.connect("A"), rig.qm.connect("B")

    def go():
        for i in range(5):
            yield from a.put("Q", b"kept")
            yield from a.commit()
        yield from b.put("Q", b"lost")  # in flight at the crash
        yield from a.put("Q", b"forces", syncpoint=False)

    rig.run(go())
    report = rig.restart().report
    assert report.uows_backed_out == 1 and report.clrs_written == 1 and report.messages_reconciled == 1
    assert report.records_replayed > 10 and report.bytes_read >= report.records_replayed * 36
    text = "\n".join(report.messages)
    assert f"{report.records_replayed} log records replayed" in text
    assert "1 backed out" in text and "Restart complete" in text
    assert set(report.phases) == {"load", "replay", "walk", "undo", "checkpoint"}
    assert report.restart_virtual_s == pytest.approx(sum(report.phases.values()))


@pytest.mark.parametrize("syncpoint", [True, False])
def test_a_checkpoint_among_a_large_messages_records_does_not_lose_it(syncpoint):
    """A segment waits for buffer space and a checkpoint's Begin lands between the put record
    and its segments: replay starts after the put record and must fetch it by the chain."""
    from mqlog.core.log.reader import LogReader
    from mqlog.core.format.records import CheckpointBegin, Put, PutSegment

    big = bytes(range(256)) * 160  # 40 960 bytes: a put and two segments
    split = 0
    for every in range(3, 9):
        rig = Rig(buffer_pages=8, write_threshold_pages=4, checkpoint_records=every)
        conn = rig.qm.connect("A")

        def go():
            yield from rig.qm.define_queue("Q")
            yield from conn.put("Q", b"small", syncpoint=False)
            msg_id = yield from conn.put("Q", big, syncpoint=syncpoint)
            if syncpoint:
                yield from conn.commit()
            return msg_id

        msg_id = rig.run(go())
        rig.env.run()
        kinds = [type(r) for _, r in LogReader(rig.platform.space, 0)]
        put_at = len(kinds) - 1 - kinds[::-1].index(Put)  # the big message's put
        split += CheckpointBegin in kinds[put_at:kinds.index(PutSegment)]
        after = rig.restart()
        queue = after.qm.queues["Q"]
        assert queue.read(queue.messages[msg_id])[0] == big, every
    assert split  # at least one run had a checkpoint among the message's records



def _prepared_then_rolled_forward(plan=None, coordinate_after_us=None):
    """A prepared unit of 10 puts; busy work makes the space policy roll it forward. With
    ``coordinate_after_us``, the coordinator commits that long after the roll forward began."""
    rig = Rig(device="nfs1", plan=plan, space_policy=OldestOut(), config=QmConfig(persistent_buffer_bytes=2048))
    state = {}

    def coordinator():
        while not rig.qm.counters.log_full_events:
            yield rig.env.timeout(10)
        yield rig.env.timeout(coordinate_after_us)
        yield from rig.qm.resolve(state["uow"], commit=True)

    if coordinate_after_us is not None:
        rig.env.process(coordinator())

    def go():
        yield from rig.qm.define_queue("Q")
        yield from rig.qm.define_queue("B")
        tm = rig.qm.connect("TM")
        for i in range(10):
            yield from tm.put("Q", b"%04d" % i + bytes(1000))
        state["uow"] = yield from tm.prepare(b"XID")
        busy = rig.qm.connect("BUSY")
        for i in range(40):
            yield from busy.put("B", b"x", syncpoint=False)

    if not rig.crashed:
        rig.run(go())
        if not rig.crashed:
            rig.env.run()
    return rig, state


def test_a_crash_during_a_roll_forward_loses_nothing_of_the_prepared_unit():
    full, _ = _prepared_then_rolled_forward()
    assert full.qm.counters.uows_rolled_forward == 1
    total = full.storage.physical_writes
    tried = 0
    for k in range(1, total):
        rig, state = _prepared_then_rolled_forward(FaultPlan(crash_after_writes=k))
        if "uow" not in state or not rig.qm.counters.log_full_events:
            continue  # crashed before the unit was prepared, or before the roll forward began
        tried += 1
        after = rig.restart()
        (uow,) = after.qm.in_doubt()
        assert len(uow.ops) == 10, k  # every operation rebuilt, from the copies or the originals
        after.run(after.qm.resolve(uow.id, commit=True))
        after.qm.check()
        assert len(after.qm.queues["Q"].available) == 10
        after.run(after.qm.checkpoint("after the decision"))
        again = Rig(storage=after.storage.durable)
        assert len(again.qm.queues["Q"].available) == 10, k
    assert tried >= 3


@pytest.mark.parametrize("delay", [50, 500, 1000, 2000])
def test_the_coordinator_waits_for_a_roll_forward_in_progress(delay):
    rig, state = _prepared_then_rolled_forward(coordinate_after_us=delay)
    rig.qm.check()
    assert len(rig.qm.queues["Q"].available) == 10
    assert not rig.qm.uows and not rig.qm.units.ages  # nothing left pinning the log's tail
    after = Rig(storage=rig.storage.durable)
    assert not after.qm.in_doubt() and len(after.qm.queues["Q"].available) == 10


def test_a_begin_for_unit_of_work_0_is_named_as_corruption_not_a_crash():
    """Unit of work 0 marks out-of-syncpoint records: a Begin for it is damage, reported with
    its log address (it used to stop restart with a KeyError)."""
    from mqlog.core.errors import LogCorruptionError
    from mqlog.core.log.reader import LogReader
    from mqlog.core.format.records import Begin
    from mqlog.core.workload.run import RunConfig, restart_run, run_workload
    from mqlog.core.workload.spec import BUILTINS, build_spec
    from mqlog.core.log.writer import LogWriter
    from mqlog.platforms import choose

    choice = choose("reference")
    values = choice.configure({})
    spec = build_spec(BUILTINS["putget-pairs"], {"pairs": "1", "messages_per_pair": "5"}, origin="test")
    storage = run_workload(RunConfig("reference", choice.maker(values), values, spec, crash_at_s=1e-3),
                           MemoryStorage()).storage.durable
    platform = choice.maker(values)(storage)
    space = platform.space
    reader = LogReader(space, 0)
    for _ in reader:
        pass
    env = simpy.Environment()
    writer = LogWriter.resume(env, space, Device(env, get_profile("ram")), reader)
    forged = []

    def append():
        forged.append((yield from writer.put(Begin(1, "FORGED", uow=0))))
        yield writer.force()

    env.run(until=env.process(append()))
    with pytest.raises(LogCorruptionError, match="unit of work 0") as info:
        restart_run(choice.maker(values), storage)
    assert info.value.address == platform.addressing.format(forged[0])


def test_restart_reports_its_replay_as_it_goes():
    """``mqlog restart``'s progress counter: called page by page with the records replayed so
    far, rising to the report's count."""
    from mqlog.core.workload.run import RunConfig, restart_run, run_workload
    from mqlog.core.workload.spec import BUILTINS, build_spec
    from mqlog.platforms import choose

    choice = choose("distributed")
    values = choice.configure({})
    spec = build_spec(BUILTINS["requester-responder"], {"duration": "0.1"}, origin="test")
    storage = run_workload(RunConfig("distributed", choice.maker(values), values, spec, crash_at_s=0.08),
                           MemoryStorage()).storage.durable
    seen = []
    report, _, _ = restart_run(choice.maker(values), storage, progress=seen.append)
    assert len(seen) > 10 and seen == sorted(seen)
    assert seen[-1] == report.records_replayed > 0
