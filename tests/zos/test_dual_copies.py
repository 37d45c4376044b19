"""How the two copies of the active log are written (dual logging, TWOACTV=YES): new CIs to
both copies at once; a CI being rewritten to copy 1 first and to copy 2 only once copy 1 holds
it, so one copy of it is intact at every moment (zos/ring.py ``ActiveRing.copy_writes``) – unless the
device never splits a CI (write-cached DASD), where neither copy can be torn and both go at
once."""

from __future__ import annotations

import pytest
import simpy

from mqlog.core.disk.devices import Device, get_profile
from mqlog.core.disk.storage import MemoryStorage
from mqlog.core.format.pages import PAGE_SIZE
from mqlog.core.qm.manager import QmConfig, QueueManager
from mqlog.zos.platform import zos_platform


def _run_recording(dual: bool, apps: int = 6, messages: int = 30, device: str = "ssd"):
    """Run ``apps`` applications putting and committing concurrently; return every physical
    write as (file, first page, pages, start µs, end µs) and the writer's statistics."""
    env = simpy.Environment()
    storage = MemoryStorage()
    platform = zos_platform(storage, data_sets=3, cis=4096, dual=dual)
    qm = QueueManager(env, platform, storage, Device(env, get_profile(device)), QmConfig())
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


def test_on_a_device_that_never_splits_a_ci_a_rewritten_ci_goes_to_both_copies_at_once():
    """Write-cached DASD (ibm-s6-ds8870: a 4 KB CI lands whole or not at all): neither copy of
    a CI being rewritten can be torn, so nothing is held back (IBM: dual-log writes in parallel
    on write-cached DASD); every CI still reaches both copies."""
    assert get_profile("ibm-s6-ds8870").atomic_write_bytes == PAGE_SIZE
    assert get_profile("ssd").atomic_write_bytes < PAGE_SIZE  # (the test above: serial there)
    writes, stats = _run_recording(dual=True, device="ibm-s6-ds8870")
    copy1 = [w for w in writes if w[0].startswith("LOGCOPY1")]
    copy2 = [w for w in writes if w[0].startswith("LOGCOPY2")]
    together = 0
    for w in copy2:
        v = next(v for v in copy1 if v[3] == w[3] and v[0].split(".")[1] == w[0].split(".")[1])
        assert _pages(v) == _pages(w)  # the same CIs, started together
        together += 1
    assert together == len(copy1) == len(copy2) > 50
    assert stats.partial_page_rewrites > 20 and stats.ordered_writes == 0
    assert stats.concurrent_writes == stats.write_cycles  # (the start-up's cycles too: not recorded)


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


def _one_ci_cycles(dual: bool, device) -> dict:
    """One application putting a 2 KB message and committing, getting it and committing: each
    commit's write carries a CI or two (the partial CI the last one ended on, rewritten)."""
    import attrs

    from mqlog.core.host.profiles import get_host
    from mqlog.core.workload.run import RunConfig, run_workload
    from mqlog.core.workload.spec import BUILTINS, build_spec
    from mqlog.platforms import choose

    choice = choose("zos")
    values = choice.configure({"TWOACTV": "YES" if dual else "NO"})
    spec = build_spec(BUILTINS["putget"], {"apps": 1, "messages": 200, "message_size": 2048}, origin="test")
    cfg = RunConfig("zos", choice.maker(values), values, spec, device=device,
                    host=attrs.evolve(get_host("z14-3cp"), cpu_jitter=0.0))
    return run_workload(cfg, MemoryStorage()).metrics


def test_dual_loggings_cost_at_one_ci_a_cycle_is_one_more_write_where_a_ci_can_tear():
    """At a CI or two a cycle every write rewrites the CI the last one ended on. Where a CI can
    tear, dual logging adds to each cycle copy 2's serial rewrite of it – one more one-CI write
    and its start – and the start of copy 2's write beside copy 1's: a commit waits that much
    longer. Where a CI cannot tear, only the logger's start of the second write."""
    import attrs

    from mqlog.core.host.profiles import get_host

    log_io = get_host("z14-3cp").log_io_us
    tearable = attrs.evolve(get_profile("ibm-s6-ds8870"), name="s6-tearable", atomic_write_bytes=512)
    one_ci = tearable.write_time_us(PAGE_SIZE)
    for device, low, high in ((tearable, log_io + one_ci, 2 * log_io + one_ci),
                              ("ibm-s6-ds8870", 0.9 * log_io, 1.1 * log_io)):
        single, dual = _one_ci_cycles(False, device), _one_ci_cycles(True, device)
        pages = single["pages_written"] / single["physical_writes"]
        assert 1 <= pages < 2.5 and single["partial_page_rewrites"] >= 0.9 * single["write_cycles"]
        extra = dual["measured_commit_elapsed_us"] - single["measured_commit_elapsed_us"]
        assert low <= extra <= high, (device, extra, low, high)
        # copy 1's writes take as long as single logging's (IBM: "almost unchanged")
        copy1 = dual["measured_primary_write_time_us"] / dual["measured_primary_writes"]
        assert copy1 == pytest.approx(single["measured_primary_write_time_us"] / single["measured_primary_writes"],
                                      rel=0.01)



# -- a power loss tears every write in flight: the copy order is what keeps a CI intact ----

def _torn_campaign(device: str = "ssd"):
    from mqlog.core.workload.spec import BUILTINS, build_spec
    from mqlog.platforms import choose
    from mqlog.torture import Campaign

    choice = choose("zos")
    values = choice.configure({"TWOACTV": "YES"})
    spec = build_spec(BUILTINS["putget-pairs"], {"pairs": "2", "messages_per_pair": "25"}, origin="test")
    return Campaign("zos", values, choice.maker(values), spec, seed=3, budget=60, faults=("torn",),
                    device=device).run()


def _company(campaign) -> list:
    """The recorded run's writes that had a write to the other copy in flight beside them."""
    return [k for k, flying in campaign._engine.recording.in_flight_at.items()
            if any(name.split(".")[0] != campaign._engine.recording.write(k)[1].split(".")[0]
                   for name, _, _ in flying)]


def test_a_power_loss_tearing_both_copies_in_flight_loses_nothing_acknowledged():
    """Each torn write's power loss tears the other copy's write in flight beside it too (any
    subset of its sectors lands): copy 1's rewrite of a CI and copy 2's new CIs torn together
    still leave copy 2's old image of that CI, which holds every acknowledged record."""
    c = _torn_campaign()
    assert len(_company(c)) > 10  # copy 1 and copy 2 in flight together, every cycle
    tally = c.tallies["torn"]
    assert tally.tried == min(60, tally.possible) and tally.counts["survived"] == tally.tried, tally.counts


def test_both_copies_of_a_ci_rewritten_at_once_lose_acknowledged_records_to_one_power_loss(monkeypatch):
    """The control: were a CI being rewritten sent to both copies at once on a device that
    splits a CI (the order write-cached DASD allows), one power loss tearing both writes would
    leave neither copy of it whole. The campaign finds that loss – which it could not while a
    crash tore only the write it hit."""
    from mqlog.zos.ring import ActiveRing

    original = ActiveRing.copy_writes

    def both_at_once(self, ds, address, pages, *, rewrite, first):
        return original(self, ds, address, pages, rewrite=False, first=first)

    monkeypatch.setattr(ActiveRing, "copy_writes", both_at_once)
    c = _torn_campaign()
    assert len(_company(c)) > 10
    tally = c.tallies["torn"]
    lost = tally.counts["silent_loss"] + tally.counts["detected"] + tally.counts["expected_loss"]
    assert lost > 0, tally.counts
