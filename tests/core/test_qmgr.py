"""The queue manager's normal running: what is logged and forced, checkpoints racing commits, and
log-space pressure through the platform's policy (restart: test_qm_restart.py)."""

from __future__ import annotations

import attrs
import pytest
from mqlog.core.disk.devices import get_profile
from mqlog.core.qm.manager import QmConfig
from mqlog.core.objects.queuefile import MessageState
from mqlog.core.objects.uow import MqiError, Reason
from qmrig import OldestOut, Rig, define


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
    from mqlog.core.recovery.state import Recovery

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
