"""The queue manager's normal running, checkpoints and the figures restart reports."""

from __future__ import annotations

import attrs
import pytest
import simpy
from mqlog.core.disk.devices import Device, get_profile
from mqlog.core.errors import SimulatedCrash
from mqlog.core.disk.faults import FaultInjectingStorage, FaultPlan
from mqlog.core.platform import SpaceAction, reference_platform
from mqlog.core.qm.manager import QmConfig, QueueManager
from mqlog.core.objects.queuefile import MessageState
from mqlog.core.disk.storage import MemoryStorage
from mqlog.core.objects.uow import MqiError, Reason


class Rig:
    """A queue manager on memory storage, with helpers to run processes to completion."""

    def __init__(self, device="ssd", storage=None, config=QmConfig(), plan=None, **platform_kwargs):
        self.storage = FaultInjectingStorage(storage if storage is not None else MemoryStorage(), plan or FaultPlan())
        self.env = simpy.Environment()
        self.device = Device(self.env, get_profile(device))
        self.platform = reference_platform(self.storage, **platform_kwargs)
        self.qm = QueueManager(self.env, self.platform, self.storage, self.device, config)
        self.crashed = False
        self.report = self.run(self.qm.start())

    def run(self, gen):
        try:
            return self.env.run(until=self.env.process(gen))
        except SimulatedCrash:
            self.crashed = True
            return None

    def stats(self):
        return self.qm.writer.stats

    def restart(self, device="ssd", config=QmConfig(), **platform_kwargs):
        """A new queue manager over a copy of what is on disk now (a crash: nothing unforced)."""
        return Rig(device, _copy(self.storage.durable), config, **platform_kwargs)


def _copy(storage):
    copy = MemoryStorage()
    for name in storage.list():
        copy.write(name, 0, storage.read(name, 0, storage.size(name)))
    return copy


def define(rig, *names, **kwargs):
    def go():
        for name in names:
            yield from rig.qm.define_queue(name, **kwargs)
    rig.run(go())


# --- what is logged and what is forced ----------------------------------------------------

def test_out_of_syncpoint_persistent_puts_force_once_each():
    rig = Rig()
    define(rig, "Q")
    conn = rig.qm.connect("A")
    before = rig.stats().forces

    def go():
        for i in range(10):
            yield from conn.put("Q", b"x" * 100, syncpoint=False)

    rig.run(go())
    assert rig.stats().forces - before == 10


def test_a_unit_of_work_of_many_puts_forces_once():
    rig = Rig()
    define(rig, "Q")
    conn = rig.qm.connect("A")
    before = rig.stats().forces

    def go():
        for i in range(10):
            yield from conn.put("Q", b"x" * 100)
        assert rig.stats().forces == before  # nothing forced inside syncpoint
        yield from conn.commit()

    rig.run(go())
    assert rig.stats().forces - before == 1


def test_nonpersistent_work_logs_nothing_even_inside_a_unit_with_persistent_work():
    rig = Rig()
    define(rig, "Q")
    conn = rig.qm.connect("A")

    def only_np():
        for i in range(5):
            yield from conn.put("Q", b"np", persistent=False)
        yield from conn.commit()
        yield from conn.get("Q", syncpoint=False)

    before = rig.stats().log_records
    rig.run(only_np())
    assert rig.stats().log_records == before

    def mixed():
        yield from conn.put("Q", b"np", persistent=False)
        yield from conn.put("Q", b"p")
        yield from conn.commit()

    rig.run(mixed())
    from mqlog.core.log.reader import scan
    from mqlog.core.format.records import Put

    puts = [r for _, r in scan(rig.platform.space, 0)[0] if isinstance(r, Put)]
    assert [r.data for r in puts] == [b"p"]


@pytest.mark.parametrize("allowed", [True, False])
def test_put_to_a_waiting_getter_passes_without_a_log_write(allowed):
    rig = Rig()
    if not allowed:  # z/OS: only non-persistent messages pass straight across
        rig.qm.platform = attrs.evolve(rig.platform, persistent_put_to_waiting_getter=False)
    define(rig, "Q")
    getter, putter = rig.qm.connect("G"), rig.qm.connect("P")
    got = []

    def wait_for_it():
        got.append((yield from getter.get("Q", syncpoint=False, wait_us=1e6)))

    def put_it():
        yield rig.env.timeout(100)
        before = rig.stats().log_records
        yield from putter.put("Q", b"hello", syncpoint=False)
        got.append(rig.stats().log_records - before)

    rig.env.process(wait_for_it())
    rig.run(put_it())
    rig.env.run()
    logged, message = got
    assert message.data == b"hello"
    assert (logged == 0) is allowed
    assert rig.qm.counters.direct_handoffs == (1 if allowed else 0)


def test_committed_changes_are_visible_only_after_the_commit_is_forced():
    rig = Rig(device="nfs3")  # a slow force: 2.4 ms
    define(rig, "Q")
    a, b = rig.qm.connect("A"), rig.qm.connect("B")
    seen = []

    def writer_app():
        yield from a.put("Q", b"m")
        yield from a.commit()
        seen.append(("committed", rig.env.now))

    def reader_app():
        yield rig.env.timeout(1)  # the commit record is appended, its force in flight
        try:
            yield from b.get("Q", syncpoint=False)
            seen.append(("got early", rig.env.now))
        except MqiError as exc:
            seen.append((exc.reason.name, rig.env.now))
        got = yield from b.get("Q", syncpoint=False, wait_us=1e6)
        seen.append(("got", rig.env.now, got.data))

    rig.env.process(writer_app())
    rig.run(reader_app())
    rig.env.run()
    assert seen[0][0] == "MQRC_NO_MSG_AVAILABLE"
    committed_at = next(t for name, t, *_ in seen if name == "committed")
    got_at = next(t for name, t, *_ in seen if name == "got")
    assert got_at >= committed_at >= get_profile("nfs3").write_latency_us


def test_backout_during_normal_running_reads_no_log():
    rig = Rig()
    define(rig, "Q")
    conn = rig.qm.connect("A")

    def go():
        for i in range(20):
            yield from conn.put("Q", b"x" * 3000)
        yield from conn.backout()

    reads = rig.device.reads
    rig.run(go())
    assert rig.device.reads == reads
    assert rig.qm.queues["Q"].depth == 0
    assert rig.qm.counters.backouts == 1


def test_maxumsgs_and_maxdepth_are_errors_not_crashes():
    rig = Rig(config=QmConfig(max_uow_messages=3))
    define(rig, "Q", max_depth=4)
    conn = rig.qm.connect("A")
    outcome = []

    def go():
        for i in range(3):
            yield from conn.put("Q", b"x")
        try:
            yield from conn.put("Q", b"x")
        except MqiError as exc:
            outcome.append(exc.reason)
        yield from conn.commit()
        yield from conn.put("Q", b"x", syncpoint=False)
        try:
            yield from conn.put("Q", b"x", syncpoint=False)
        except MqiError as exc:
            outcome.append(exc.reason)

    rig.run(go())
    assert outcome == [Reason.MQRC_SYNCPOINT_LIMIT_REACHED, Reason.MQRC_Q_FULL]


def test_qmgr_parameters_name_the_parameter_and_range():
    from mqlog.core.errors import ParameterError

    with pytest.raises(ParameterError, match=r"qmgr.max_uow_messages.*1 to 999999999"):
        QmConfig(max_uow_messages=0)


def test_two_phase_commit_prepare_then_either_outcome():
    rig = Rig()
    define(rig, "Q")
    conn, other = rig.qm.connect("A"), rig.qm.connect("B")

    def go():
        yield from conn.put("Q", b"one")
        first = yield from conn.prepare(b"XID1")
        conn.uow = None
        yield from conn.put("Q", b"two")
        second = yield from conn.prepare(b"XID2")
        conn.uow = None
        assert {u.id for u in rig.qm.in_doubt()} == {first, second}
        with pytest.raises(MqiError):
            yield from other.get("Q", syncpoint=False)  # nothing visible while in doubt
        yield from rig.qm.resolve(first, commit=True)
        yield from rig.qm.resolve(second, commit=False)
        got = yield from other.get("Q", syncpoint=False)
        assert got.data == b"one"

    rig.run(go())
    assert rig.qm.queues["Q"].depth == 0 and not rig.qm.in_doubt()


# --- checkpoints racing with commits -------------------------------------------------------

@pytest.mark.parametrize("ending", ["commit", "backout", "prepare"])
def test_checkpoint_during_a_commit_force_keeps_the_outcome(ending):
    """A checkpoint that begins after a unit of work's Commit/Backout/Prepare record was
    appended but before its force returned must not list it wrongly, nor write its messages
    to the queue file as uncommitted: restart starts after that record and never sees it."""
    rig = Rig(device="nfs3")
    define(rig, "Q")
    conn = rig.qm.connect("A")
    ids = []

    def app():
        for i in range(3):
            ids.append((yield from conn.put("Q", b"msg-%d" % i)))
        if ending == "commit":
            yield from conn.commit()
        elif ending == "backout":
            yield from conn.backout()
        else:
            yield from conn.prepare(b"XID")

    def checkpointer():
        # after the end record is appended (the host's CPU for three puts, then the ending
        # call's path and record), during its force (nfs3: milliseconds)
        host = rig.qm.cpu.profile
        puts = 3 * (host.app_call_us + host.call_us("put") + host.logged_us("put", len(b"msg-0")))
        yield rig.env.timeout(puts + host.app_call_us + host.call_us(ending) + host.logged_us(ending) + 1)
        assert rig.qm.writer.durable < rig.qm.writer.next_address
        yield from rig.qm.checkpoint("test")

    rig.env.process(app())
    rig.run(checkpointer())
    rig.env.run()
    after = rig.restart()
    report, queue = after.report, after.qm.queues["Q"]
    assert report.clrs_written == 0 and report.uows_backed_out == 0
    if ending == "commit":
        assert sorted(queue.messages) == sorted(ids)
        assert all(m.state is MessageState.COMMITTED for m in queue.messages.values())
    elif ending == "backout":
        assert not queue.messages
    else:
        assert report.uows_indoubt == 1
        assert all(m.state is MessageState.PUT_UNCOMMITTED for m in queue.messages.values())


# --- log-space pressure through the platform's policy --------------------------------------

class OldestOut:
    """A test platform policy: the first time it is asked, roll back (or forward, if
    prepared) the oldest unit of work; then never again."""

    checkpoint_at = 0.5
    relieve_from = 0.0  # asked at every check

    def __init__(self):
        self.fired = False

    def relieve(self, usage, uows):
        if self.fired or not uows:
            return []
        self.fired = True
        oldest = uows[0]
        return [SpaceAction(oldest.uow, "rollforward" if oldest.prepared else "rollback")]


def test_space_policy_rolls_back_the_oldest_unit_and_its_application_gets_2003():
    rig = Rig(space_policy=OldestOut())
    define(rig, "Q", "L")
    long, busy = rig.qm.connect("LONG"), rig.qm.connect("BUSY")
    told = []

    def long_app():
        yield from long.put("L", b"held")
        yield rig.env.timeout(10_000)
        try:
            yield from long.put("L", b"more")
        except MqiError as exc:
            told.append(exc.reason)
        yield from long.put("L", b"fresh")  # a new unit of work
        yield from long.commit()

    def busy_app():
        for i in range(100):
            yield from busy.put("Q", b"x")
            yield from busy.commit()
            yield from busy.get("Q")
            yield from busy.commit()

    rig.env.process(long_app())
    rig.run(busy_app())
    rig.env.run()
    assert told == [Reason.MQRC_BACKED_OUT]
    assert rig.qm.counters.uows_rolled_back == 1
    queue = rig.qm.queues["L"]
    assert [queue.read(m)[0] for m in queue.messages.values()] == [b"fresh"]


def _a_prepared_unit_rolled_forward():
    """A prepared unit (one put) whose log is then filled by other work until the space
    policy rolls it forward; returns the rig and what the unit was before (its id, its first
    record, the addresses of its original records)."""
    rig = Rig(space_policy=OldestOut())
    define(rig, "Q")
    conn, busy = rig.qm.connect("TM"), rig.qm.connect("BUSY")
    state = {}

    def prepared_app():
        yield from conn.put("Q", b"in doubt")
        state["uow"] = yield from conn.prepare(b"XID")
        uow = rig.qm.uows[state["uow"]]
        state["first"] = uow.first
        state["originals"] = {op.address for op in uow.ops} | {uow.last}

    def busy_app():
        yield rig.env.timeout(100)
        for i in range(100):
            yield from busy.put("Q", b"x", syncpoint=False)

    rig.env.process(prepared_app())
    rig.run(busy_app())
    rig.env.run()
    return rig, state


def test_space_policy_rolls_a_prepared_unit_forward_to_the_head():
    rig, state = _a_prepared_unit_rolled_forward()
    uow = rig.qm.uows[state["uow"]]
    assert rig.qm.counters.uows_rolled_forward == 1
    assert uow.first > state["first"]  # its records now start near the head
    assert rig.qm.tail() > state["first"] or rig.qm.tail() == rig.qm.schedule.address
    after = rig.restart()
    assert after.report.uows_indoubt == 1  # still in doubt, from the re-logged records


def test_restart_needs_none_of_the_records_a_roll_forward_superseded(monkeypatch):
    """Re-logging a prepared unit exists so the tail can move past its first records and the
    log reuse them: once a complete round of copies is on disk, restart must rebuild the
    unit from the copies without reading what they replaced (it used to follow the first
    copy's chain pointer into the overwritten originals and refuse the log as broken)."""
    from mqlog.core.recovery.engine import Recovery

    rig, state = _a_prepared_unit_rolled_forward()
    assert rig.qm.counters.uows_rolled_forward == 1
    original_read = Recovery.read_at

    def read_at(self, address):  # the log has reused the originals' space
        record = yield from original_read(self, address)
        return None if address in state["originals"] else record

    monkeypatch.setattr(Recovery, "read_at", read_at)
    after = rig.restart()
    (uow,) = after.qm.in_doubt()
    assert [op.kind for op in uow.ops] == ["put"]
    depth = after.qm.queues["Q"].depth
    after.run(after.qm.resolve(uow.id, commit=True))
    after.qm.check()
    assert after.qm.queues["Q"].depth == depth  # committed: the message stays, now available
    assert len(after.qm.queues["Q"].available) == depth


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
