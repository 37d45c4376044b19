"""How the two copies of the active log are written (dual logging, TWOACTV=YES): new CIs to
both copies at once; a CI being rewritten to copy 1 first and to copy 2 only once copy 1 holds
it, so one copy of it is intact at every moment (zos/space.py ``_copy_writes``)."""

from __future__ import annotations

import simpy

from mqlog.core.disk.devices import Device, get_profile
from mqlog.core.disk.storage import MemoryStorage
from mqlog.core.format.pages import PAGE_SIZE
from mqlog.core.qm.manager import QmConfig, QueueManager
from mqlog.zos.platform import zos_platform


def _run_recording(dual: bool, apps: int = 6, messages: int = 30):
    """Run ``apps`` applications putting and committing concurrently; return every physical
    write as (file, first page, pages, start µs, end µs) and the writer's statistics."""
    env = simpy.Environment()
    storage = MemoryStorage()
    platform = zos_platform(storage, data_sets=3, cis=4096, dual=dual)
    qm = QueueManager(env, platform, storage, Device(env, get_profile("ssd")), QmConfig())
    env.run(until=env.process(qm.start()))
    writes = []
    original = qm.writer._physical_write

    def recording(pw):
        start = env.now
        yield from original(pw)
        writes.append((pw.file, pw.offset // PAGE_SIZE, len(pw.pages), start, env.now))

    qm.writer._physical_write = recording

    def app(i):
        c = qm.connect(f"APP{i}")
        for n in range(messages):
            yield from c.put("Q", bytes([i]) * 700 + b"%04d" % n)
            yield from c.commit()

    def go():
        yield from qm.define_queue("Q")
        yield env.all_of([env.process(app(i)) for i in range(apps)])

    env.run(until=env.process(go()))
    return writes, qm.writer.stats


def _overlap(a, b) -> bool:
    return a[3] < b[4] and b[3] < a[4]


def _pages(w) -> set[int]:
    return set(range(w[1], w[1] + w[2]))


def test_a_rewritten_ci_is_never_in_flight_on_both_copies_and_new_cis_are():
    writes, stats = _run_recording(dual=True)
    copy1 = [w for w in writes if w[0].startswith("LOGCOPY1")]
    copy2 = [w for w in writes if w[0].startswith("LOGCOPY2")]
    rewrites = parallel_new = 0
    for w in copy2:
        ds = w[0].split(".")[1]
        mine = [v for v in copy1 if v[0].split(".")[1] == ds and v[3] <= w[3]]
        for v in mine:
            shared = _pages(v) & _pages(w)
            if shared and _overlap(v, w):
                # in flight together: only CIs that no earlier write had put on copy 1
                earlier = set().union(*(_pages(u) for u in mine if u[4] <= v[3])) if mine else set()
                assert not shared & earlier, f"a rewritten CI was in flight on both copies: {v} and {w}"
                parallel_new += 1
        written_before = [v for v in mine if v[4] <= w[3] and _pages(v) & _pages(w)]
        if w[2] == 1 and len(written_before) >= 2:
            # copy 2's rewrite of a CI copy 1 holds twice by now: the last copy-1 write of it
            # had finished before this one started
            rewrites += 1
            last = max(written_before, key=lambda v: v[4])
            assert last[4] <= w[3]
    assert rewrites > 20, "the workload must rewrite partial CIs (each commit ends on one)"
    assert parallel_new > 20, "new CIs must go to both copies at once"
    assert stats.ordered_writes == stats.partial_page_rewrites  # one serial rewrite per rewriting cycle
    assert stats.concurrent_writes >= parallel_new


def test_single_logging_writes_each_cycle_once_with_nothing_in_flight_beside_it():
    writes, stats = _run_recording(dual=False)
    assert all(w[0].startswith("LOGCOPY1") for w in writes)
    assert stats.ordered_writes == 0 and stats.concurrent_writes == 0
    assert stats.physical_writes == stats.write_cycles
    ordered = sorted(writes, key=lambda w: w[3])
    assert all(not _overlap(a, b) for a, b in zip(ordered, ordered[1:]))


# -- the cost of the second copy follows the device -----------------------------------------

def _commits(dual: bool, device) -> int:
    from mqlog.core.workload.run import RunConfig, run_workload
    from mqlog.core.workload.spec import BUILTINS, build_spec
    from mqlog.platforms import choose

    choice = choose("zos")
    values = choice.configure({"TWOACTV": "YES" if dual else "NO"})
    spec = build_spec(BUILTINS["requester-responder"],
                      {"requesters": 32, "responders": 32, "duration": 0.05}, origin="test")
    cfg = RunConfig("zos", choice.maker(values), values, spec, device=device)
    return run_workload(cfg, MemoryStorage()).metrics["commits"]


def _dual_cost(device) -> float:
    """The fraction of single logging's commits that dual logging loses, same workload."""
    return 1 - _commits(True, device) / _commits(False, device)


def test_dual_loggings_cost_moves_with_the_devices_latency_and_shared_channel():
    import attrs

    dasd = get_profile("dasd")
    base = _dual_cost(dasd)
    # the serial rewrite of a CI costs one more I/O latency a cycle: with less latency
    # against the same transfer rate, the second copy costs less ...
    quick = _dual_cost(attrs.evolve(dasd, name="quick", write_latency_us=dasd.write_latency_us / 5))
    # ... and with a channel no wider than one transfer, the two copies' new CIs share it
    # (each goes at half speed), so it costs more
    narrow = _dual_cost(attrs.evolve(dasd, name="narrow", channel_mb_s=dasd.write_bandwidth_mb_s))
    assert 0 < quick < base < narrow < 1, (quick, base, narrow)
