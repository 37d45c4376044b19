"""z/OS archive offload is a task of its own (issue 20, mechanism 2; IBM MQ for z/OS, "When the
archive log is written"): commits go on while a data set is offloaded, logging stops only
when every active data set is full and resumes the moment an offload ends, MAXCNOFF bounds
the offloads running at once, a crash inside an offload is redone at restart (which does not
wait for it) with nothing lost, and each archive copy is written once, with no formatting
pass, and counted in the write statistics.

Times here are the model's virtual microseconds: commit times the applications record, and
the offloads' start and end the writer's background copies record (``copies.history``).
"""

from __future__ import annotations

import attrs
import pytest
import simpy

from contract.harness import PlatformConfig, clone, restart, run_workload
from mqlog.core.disk.devices import Device, get_profile
from mqlog.core.disk.faults import FaultInjectingStorage, FaultPlan
from mqlog.core.disk.storage import MemoryStorage
from mqlog.core.format.pages import PAGE_SIZE
from mqlog.core.qm.manager import QmConfig, QueueManager
from mqlog.zos.platform import zos_platform
from mqlog.zos.space import archive_name, data_set_name

#: the ssd profile with reads slowed to 5 MB/s: an offload of a 128 KiB data set then takes
#: about 26 ms, far longer than the applications take to fill one
SLOW_READS = attrs.evolve(get_profile("ssd"), name="ssd-slow-reads", read_bandwidth_mb_s=5.0)


def committing(*, data_sets: int, cis: int = 32, device=SLOW_READS, apps: int = 4, commits: int = 60, **kwargs):
    """A queue manager whose ``apps`` applications each put and commit ``commits`` 3000-byte
    messages, then shut down. Returns (qm, the virtual time of every commit, in order)."""
    storage = FaultInjectingStorage(MemoryStorage())
    env = simpy.Environment()
    platform = zos_platform(storage, data_sets=data_sets, cis=cis, logload=100_000, **kwargs)
    qm = QueueManager(env, platform, storage, Device(env, device), QmConfig())
    done: list[float] = []

    def app(i):
        conn = qm.connect(f"APP{i}")
        for k in range(commits):
            yield from conn.put("Q", b"%d-%d" % (i, k) + bytes(3000))
            yield from conn.commit()
            done.append(env.now)

    def main():
        yield from qm.start()
        yield from qm.define_queue("Q")
        yield simpy.AllOf(env, [env.process(app(i)) for i in range(apps)])
        yield from qm.shutdown()

    env.run(until=env.process(main()))
    assert len(done) == apps * commits and qm.writer.failed is None
    return qm, done


def said(qm, message_id: str) -> int:
    return sum(1 for m in qm.messages if m.startswith(message_id))


def test_commits_complete_while_a_data_set_is_being_offloaded():
    qm, done = committing(data_sets=3, device=get_profile("ssd"))
    offloads = list(qm.writer.copies.history)
    assert len(offloads) >= 3
    during = [sum(1 for t in done if start < t < end) for _, start, end in offloads]
    # every offload but the shutdown's last ones overlaps logging: commits went on meanwhile
    assert sum(during) > 0 and sum(1 for n in during if n) >= len(offloads) // 2, during
    assert qm.writer.stats.offload_waits == 0  # the writer never waited for one


@pytest.mark.parametrize("data_sets, maxcnoff, stops", [
    (2, 31, True),  # two data sets: the second fills long before the first is archived
    (24, 31, False),  # the ring turns (31 offloads) but offloads keep up: never full
    (24, 1, True),  # the same with one offload at a time: they fall behind
])
def test_logging_stops_only_when_every_active_data_set_is_full(data_sets, maxcnoff, stops):
    qm, done = committing(data_sets=data_sets, maxcnoff=maxcnoff, commits=260)
    space, offloads = qm.platform.space, list(qm.writer.copies.history)
    assert space.archive_offloads == len(offloads) > data_sets  # the ring turned
    if not stops:
        assert said(qm, "CSQJ111A") == 0 and qm.counters.log_full_refusals == 0
        assert qm.counters.log_full_wait_us == 0
        return
    # CSQJ111A, once an episode: each ends when an offload frees a data set, and the log
    # switches into it before it can be full again
    assert said(qm, "CSQJ111A") >= 1
    order = [m.split()[0] for m in qm.messages if m.startswith(("CSQJ111A", "CSQJ002I"))]
    assert all(not (a == b == "CSQJ111A") for a, b in zip(order, order[1:])), order
    # Commits pause: the longest stretch without one is an offload's length or more, and
    # they resume the moment an offload ends (the first commit after it comes within a
    # tenth of an offload's time of its end, never before it).
    gap, before, after = max((b - a, a, b) for a, b in zip(done, done[1:]))
    length = min(end - start for _, start, end in offloads)
    assert gap >= length / 2, (gap, length)
    # The calls held up are counted with the time they waited: at least the longest pause,
    # which some call sat through (the writer itself never waited: the calls wait first).
    assert qm.counters.log_full_refusals > 0 and qm.counters.log_full_wait_us >= gap
    ends = [end for _, _, end in offloads if before < end <= after]
    assert ends and after - max(ends) < length / 10, (before, after, ends)
    if maxcnoff == 1:  # one at a time: no two offloads overlap
        spans = sorted((start, end) for _, start, end in offloads)
        assert all(b[0] >= a[1] for a, b in zip(spans, spans[1:]))


def test_a_clean_shutdown_waits_for_the_offloads_in_progress():
    qm, _ = committing(data_sets=3, commits=30)
    space = qm.platform.space
    assert qm.writer.copies.running == 0 and space.offloads_running == 0
    full = [ds for ds in space.active if ds.full]
    assert full and all(ds.archive > 0 for ds in full)  # every full data set archived
    assert all(e.complete for e in space.archives)
    assert qm.env.now >= max(end for _, _, end in qm.writer.copies.history)


def test_archive_copies_are_written_once_with_no_format_write_and_counted():
    storage = FaultInjectingStorage(MemoryStorage(), keep_write_log=True)
    env = simpy.Environment()
    platform = zos_platform(storage, data_sets=3, cis=32, logload=100_000)
    qm = QueueManager(env, platform, storage, Device(env, get_profile("ssd")), QmConfig())

    def main():
        yield from qm.start()
        yield from qm.define_queue("Q")
        conn = qm.connect("APP")
        for k in range(150):
            yield from conn.put("Q", bytes(3000))
            yield from conn.commit()
        yield from qm.shutdown()

    env.run(until=env.process(main()))
    space, stats = platform.space, qm.writer.stats
    offloads, ds_bytes = space.archive_offloads, 32 * PAGE_SIZE
    assert offloads >= 3
    # one write of the whole data set per archive copy, nothing formatted first
    assert stats.formats == 0 and stats.formatted_bytes == 0
    assert stats.archive_writes == 2 * offloads and stats.archive_bytes == 2 * offloads * ds_bytes
    for entry in space.archives:
        for name in entry.files:
            writes = [w for w in storage.write_log if w.name == name]
            assert len(writes) == 1 and writes[0].length == ds_bytes, (name, writes)
    # the offload read the data set in INBUFF-sized requests (60 KB: 15 CIs)
    assert stats.offload_read_bytes == offloads * ds_bytes
    assert stats.offload_reads == offloads * -(-32 // 15)
    assert stats.offload_us > 0 and stats.offloads == offloads
    # the archive holds what the active data set held
    entry = space.archives[0]
    for k in range(32):
        assert storage.read(entry.files[1], k * PAGE_SIZE, PAGE_SIZE) == space.read_page(entry.start + k * PAGE_SIZE)[0]


ZOS_DUAL = PlatformConfig("zos-dual-offload", lambda storage, log_scale=1: zos_platform(
    storage, data_sets=3, cis=16 * log_scale, logload=1000))
#: the same restarted on a device whose reads are slow: the offload restart redoes then
#: outlasts restart, which must end without waiting for it
ZOS_DUAL_SLOW_READS = attrs.evolve(ZOS_DUAL, device=SLOW_READS)


def test_a_crash_inside_an_offload_is_redone_at_restart_which_does_not_wait_and_loses_nothing():
    full = run_workload(ZOS_DUAL, seed=3, apps=3, rounds=16, keep_write_log=True)
    log = full.storage.write_log
    first = next(w.number for w in log if w.name.startswith("CSQARC1.A"))
    seq = int(next(w.name for w in log if w.name.startswith("CSQARC1.A"))[-7:])
    # the offload's writes: archive copy 1 and 2, the BSDS copies beside them, then the
    # BSDS saying the archive is complete (log writes of the applications fall in between)
    beside = next(w.number for w in log if w.name == archive_name("CSQARC2", seq, "B"))
    recorded = next(w.number for w in log if w.number > beside and w.name.startswith("BSDS"))
    inside = range(first - 1, recorded)  # crash after write k: write k+1 never happens
    assert len(inside) >= 5
    for k in inside:
        out = run_workload(ZOS_DUAL, seed=3, apps=3, rounds=16, plan=FaultPlan(crash_after_writes=k))
        assert out.crashed, k
        left = ZOS_DUAL.make(clone(out.storage.durable)).space
        left.load_control()
        entry = next(e for e in left.archives if e.seq == seq)
        assert not entry.complete, k  # the crash fell inside the offload: the BSDS says so
        qm, report, crashed = restart(ZOS_DUAL_SLOW_READS, clone(out.storage.durable))
        assert not crashed
        verdict = out.journal.verify(qm)
        assert verdict.ok, (k, verdict.as_dict(), verdict.details[:5])
        space = qm.platform.space
        redone = next(e for e in space.archives if e.seq == seq)
        # restart did not wait for it: it is still running when restart ends ...
        assert qm.writer.copies.running > 0 and not redone.complete, k
        # ... and ends afterwards, under the same number
        qm.env.run(until=qm.writer.copies.idle())
        assert redone.complete and redone.files == (archive_name("CSQARC1", seq), archive_name("CSQARC2", seq))
        seqs = [e.seq for e in space.archives if e.complete]
        assert seqs == list(range(seqs[0], seqs[0] + len(seqs))), (k, seqs)  # no gap, no duplicate
        ds = next(d for d in space.active if d.start == redone.start)
        assert ds.archive == seq
        for off in range(0, 16 * PAGE_SIZE, PAGE_SIZE):
            assert qm.storage.read(redone.files[0], off, PAGE_SIZE) == qm.storage.read(
                data_set_name(1, ds.number), off, PAGE_SIZE), (k, off)
        # and a restart of what that left finds everything again
        qm2, _, crashed2 = restart(ZOS_DUAL, clone(qm.storage.durable))
        assert not crashed2 and out.journal.verify(qm2).ok, k


def test_a_runs_throughput_is_measured_to_its_last_call_not_through_the_offload_its_shutdown_waits_for():
    from mqlog.core.workload.run import RunConfig, run_workload as run_spec
    from mqlog.core.workload.spec import BUILTINS, build_spec
    from mqlog.platforms import choose

    choice = choose("zos")
    values = choice.configure({"ACTIVE_LOG_CIS": "256"})  # 1 MiB data sets: offloads all along
    spec = build_spec(BUILTINS["requester-responder"], {"requesters": 16, "responders": 16, "duration": 0.1},
                      origin="test")
    m = run_spec(RunConfig("zos", choice.maker(values), values, spec, device="dasd"), MemoryStorage()).metrics
    assert m["archive_offloads"] >= 2 and m["platform_archives_recorded"] == m["archive_offloads"]
    # the workload stopped at its duration; the shutdown went on until the last offload was on disk
    # (the round trips in flight at the duration end a few ms later: a dual-logged commit on
    # dasd behind an offload's I/O)
    assert m["workload_s"] == pytest.approx(0.1, rel=0.05)
    assert m["virtual_s"] > m["workload_s"]
