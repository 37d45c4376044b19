"""The device in SimPy: its queue depth, its counters, interrupted I/O, and the channel that
concurrent transfers share (each capped by its bandwidth), deterministically, and the device
figures a run's metrics carry."""

from __future__ import annotations

import pytest
import simpy
from devicekit import profile as _profile, schedule as _schedule
from mqlog.core.disk.devices import Device, DeviceProfile, get_profile, load_profiles


# ------------------------------------------------------------------ SimPy device


def _run_writes(profile: DeviceProfile, count: int, nbytes: int):
    env = simpy.Environment()
    device = Device(env, profile)
    finished: list[float] = []

    def writer():
        yield from device.write(nbytes)
        finished.append(env.now)

    for _ in range(count):
        env.process(writer())
    env.run()
    return device, finished


def test_queue_depth_one_serialises():
    profile = _profile(queue_depth=1)
    t = profile.write_time_us(4096)
    device, finished = _run_writes(profile, 2, 4096)
    assert finished == pytest.approx([t, 2 * t])
    assert device.busy_us == pytest.approx(2 * t)      # service only
    assert device.wait_us == pytest.approx(t)          # the second writer queued for t


def test_queue_depth_two_overlaps():
    # a channel wide enough for both transfers at their own bandwidth: only the slots matter
    profile = _profile(queue_depth=2, channel_mb_s=200.0)
    t = profile.write_time_us(4096)
    device, finished = _run_writes(profile, 2, 4096)
    assert finished == pytest.approx([t, t])
    assert device.busy_us == pytest.approx(2 * t)
    assert device.wait_us == 0.0


def test_counters_add_up():
    profile = get_profile("nfs1")
    env = simpy.Environment()
    device = Device(env, "nfs1")
    returned: list[float] = []

    def proc():
        returned.append((yield from device.file_op("create")))
        returned.append((yield from device.write(4096)))
        returned.append((yield from device.write(1000)))
        returned.append((yield from device.read(65536)))

    env.process(proc())
    env.run()
    w = profile.write_time_us(4096) + profile.write_time_us(1000)
    r = profile.read_time_us(65536)
    f = profile.call_us("create")
    assert returned == pytest.approx([f, profile.write_time_us(4096),
                                      profile.write_time_us(1000), r])
    assert (device.writes, device.reads, device.file_ops) == (2, 1, 1)
    assert (device.bytes_written, device.bytes_read) == (5096, 65536)
    assert device.write_us == pytest.approx(w)
    assert device.read_us == pytest.approx(r)
    assert device.file_op_total_us == pytest.approx(f)
    assert device.busy_us == pytest.approx(w + r + f)
    assert env.now == pytest.approx(w + r + f)        # one caller: virtual time taken == busy
    assert device.counters()["busy_us"] == device.busy_us
    device.reset_counters()
    assert device.busy_us == 0.0 and device.writes == 0


def test_interrupted_io_is_not_counted_and_frees_its_slot():
    profile = _profile(queue_depth=1)
    t = profile.write_time_us(0)
    env = simpy.Environment()
    device = Device(env, profile)
    done: list[float] = []

    def victim():
        try:
            yield from device.write(0)
        except simpy.Interrupt:
            pass

    def other():
        yield from device.write(0)
        done.append(env.now)

    v = env.process(victim())
    env.process(other())

    def killer():
        yield env.timeout(t / 2)
        v.interrupt()

    env.process(killer())
    env.run()
    assert device.writes == 1
    assert done == pytest.approx([t / 2 + t])


# ------------------------------------------------------------------ the shared channel
#
# Expected times are worked out by hand from the profile's numbers: latency per I/O, then
# the transfer at its part of the channel (water-filling), which changes whenever a
# transfer starts or ends.


@pytest.mark.parametrize("name", sorted(load_profiles()))
@pytest.mark.parametrize("kind", ["write", "read"])
def test_a_lone_transfer_costs_latency_plus_size_over_bandwidth(name, kind):
    p = get_profile(name)
    lat = p.write_latency_us if kind == "write" else p.read_latency_us
    bw = p.write_bandwidth_mb_s if kind == "write" else p.read_bandwidth_mb_s
    assert p.channel >= bw  # every built-in's path is at least one transfer's bandwidth
    n = 256 * 1024
    device, finished, returned = _schedule(p, [(0.0, kind, n), (10 * (lat + n / bw), kind, n)])
    alone = lat + n / bw
    assert returned == [alone, alone]  # exactly, not approximately: the cost before channels
    assert finished[0] == pytest.approx(alone, rel=1e-12)
    assert device.shared_us == 0.0 and device.busy_us == pytest.approx(2 * alone, rel=1e-12)


def test_two_concurrent_transfers_share_the_channel():
    # 100 µs latency each (not shared), then 10,000 bytes at 100 B/µs alone (channel 100:
    # the bandwidth, as a profile without channel_mb_s has). Together they begin moving at
    # 100 µs and each gets 50 B/µs: 10,000 / 50 = 200 µs, so both finish at 300 µs instead
    # of 200 µs.
    p = _profile(write_latency_us=100.0, write_bandwidth_mb_s=100.0, queue_depth=2)
    assert p.channel_mb_s is None
    device, finished, returned = _schedule(p, [(0.0, "write", 10_000), (0.0, "write", 10_000)])
    alone = 100.0 + 10_000 / 100.0
    assert finished == pytest.approx([300.0, 300.0])
    assert all(t > alone for t in finished)
    # their bytes over the time both were moving are exactly the channel
    assert (2 * 10_000) / (300.0 - 100.0) == pytest.approx(p.channel)
    assert returned == pytest.approx([300.0, 300.0])
    assert device.shared_us == pytest.approx(2 * (300.0 - alone))
    assert device.busy_us == pytest.approx(600.0) and device.wait_us == 0.0


def test_a_transfer_capped_by_its_bandwidth_leaves_the_rest_of_the_channel():
    # Channel 150 B/µs; a read is capped at 50 B/µs, a write at 200. Both start at once
    # (10 µs latency). An equal part would be 75: the read takes only its 50, the write
    # gets the other 100 (not 75). The read's 5,000 bytes end at 10 + 100 = 110 µs; the
    # write has moved 100 x 100 = 10,000 of its 20,000 and then has the whole channel
    # (150, below its own 200): 10,000 / 150 more, ending at 110 + 66.67 µs.
    p = _profile(read_latency_us=10.0, write_latency_us=10.0, read_bandwidth_mb_s=50.0,
                 write_bandwidth_mb_s=200.0, channel_mb_s=150.0, queue_depth=4)
    device, finished, _ = _schedule(p, [(0.0, "read", 5_000), (0.0, "write", 20_000)])
    read_end = 10.0 + 5_000 / 50.0
    write_end = read_end + (20_000 - 100.0 * (5_000 / 50.0)) / 150.0
    assert finished == pytest.approx([read_end, write_end])
    # the read lost nothing; the write lost against 20,000 bytes alone at 150
    assert device.shared_us == pytest.approx(write_end - (10.0 + 20_000 / 150.0))


def test_a_transfer_starting_midway_changes_the_others_finish():
    # Write A: 20,000 bytes from 0 (latency 100, then 100 B/µs: alone it ends at 300).
    # Write B: 10,000 bytes from 150; its latency runs to 250 while A keeps the whole
    # channel, so A has moved 150 x 100 = 15,000 by then. From 250 they share, 50 B/µs
    # each: A's last 5,000 take 100 µs (A ends at 350, not 300); B has moved 5,000 by
    # then and moves its last 5,000 alone at 100 B/µs (B ends at 400, not 350).
    p = _profile(write_latency_us=100.0, write_bandwidth_mb_s=100.0, queue_depth=2)
    device, finished, returned = _schedule(p, [(0.0, "write", 20_000), (150.0, "write", 10_000)])
    a_end = 250.0 + (20_000 - 150.0 * 100.0) / 50.0
    b_end = a_end + (10_000 - (a_end - 250.0) * 50.0) / 100.0
    assert (a_end, b_end) == (350.0, 400.0)
    assert finished == pytest.approx([a_end, b_end])
    assert returned == pytest.approx([a_end - 0.0, b_end - 150.0])
    assert device.shared_us == pytest.approx((a_end - 300.0) + (b_end - 350.0))


def test_queue_depth_still_limits_concurrent_ios():
    # Two slots: the first two share the channel and end together at 300 µs (as above);
    # the third waits for a slot until then and runs alone: 300 + 100 + 100.
    p = _profile(write_latency_us=100.0, write_bandwidth_mb_s=100.0, queue_depth=2)
    device, finished, _ = _schedule(p, [(0.0, "write", 10_000)] * 3)
    assert finished == pytest.approx([300.0, 300.0, 500.0])
    assert device.wait_us == pytest.approx(300.0)
    assert device.shared_us == pytest.approx(2 * 100.0)


def test_file_ops_hold_a_slot_but_not_the_channel():
    # A metadata call beside a transfer does not slow it: it moves no bytes.
    p = _profile(write_latency_us=100.0, write_bandwidth_mb_s=100.0, round_trip_us=50.0, queue_depth=2,
                 fs_calls={"open": "round-trip"})
    env = simpy.Environment()
    device = Device(env, p)
    ends = {}

    def w():
        yield from device.write(10_000)
        ends["write"] = env.now

    def f():
        yield from device.file_op("open")
        ends["file_op"] = env.now

    env.process(w())
    env.process(f())
    env.run()
    assert ends == pytest.approx({"write": 200.0, "file_op": 50.0})
    assert device.shared_us == 0.0


def test_an_interrupted_transfer_gives_its_share_back():
    # A and B (10,000 bytes each) share from 100 µs at 50 B/µs. B is interrupted at 200 µs:
    # A has 5,000 left and finishes them alone at 100 B/µs, at 250 µs.
    p = _profile(write_latency_us=100.0, write_bandwidth_mb_s=100.0, queue_depth=2)
    env = simpy.Environment()
    device = Device(env, p)
    done = []

    def a():
        yield from device.write(10_000)
        done.append(env.now)

    def b():
        try:
            yield from device.write(10_000)
        except simpy.Interrupt:
            pass

    env.process(a())
    victim = env.process(b())

    def killer():
        yield env.timeout(200.0)
        victim.interrupt()

    env.process(killer())
    env.run()
    assert done == pytest.approx([250.0])
    assert device.writes == 1 and device.resource.count == 0


def test_lone_transfer_joined_at_its_last_instant_is_not_slowed():
    # B takes its slot exactly when A's lone transfer ends (200 µs): A is finished, B runs alone.
    p = _profile(write_latency_us=100.0, write_bandwidth_mb_s=100.0, queue_depth=2)
    device, finished, returned = _schedule(p, [(0.0, "write", 10_000), (200.0, "write", 10_000)])
    assert finished == pytest.approx([200.0, 400.0])
    assert device.shared_us == 0.0


def _busy_mix(seed: int):
    import random

    rng = random.Random(seed)
    p = _profile(read_latency_us=30.0, write_latency_us=20.0, read_bandwidth_mb_s=70.0,
                 write_bandwidth_mb_s=40.0, channel_mb_s=100.0, queue_depth=5)
    ios = [(rng.uniform(0, 2_000), rng.choice(["read", "write"]), rng.randrange(0, 20_000)) for _ in range(200)]
    return _schedule(p, ios), ios


def test_sharing_is_deterministic_and_conserves_bytes():
    (device, finished, returned), ios = _busy_mix(7)
    (device2, finished2, returned2), _ = _busy_mix(7)
    assert finished == finished2 and returned == returned2      # exactly, run after run
    assert device.counters() == device2.counters()
    assert device.reads + device.writes == len(ios) and device.shared_us > 0
    # no I/O ends sooner than it could alone, and the channel is never exceeded: all the
    # bytes need at least (total / channel) of time, after the first I/O's latency
    p = device.profile
    for (start, kind, n), end in zip(ios, finished):
        alone = p.write_time_us(n) if kind == "write" else p.read_time_us(n)
        assert end - start >= alone - 1e-9
    total = device.bytes_read + device.bytes_written
    first = min(start for start, _, _ in ios)
    assert max(finished) - first >= total / p.channel


def _run_metrics(device: str) -> dict:
    from mqlog.core.disk.storage import MemoryStorage
    from mqlog.core.workload.run import RunConfig, run_workload
    from mqlog.core.workload.spec import BUILTINS, build_spec
    from mqlog.platforms import choose

    choice = choose("distributed")
    values = choice.configure({})
    spec = build_spec(BUILTINS["putget-pairs"], {"pairs": "4", "messages_per_pair": "40", "message_size": "2000"},
                      origin="test")
    result = run_workload(RunConfig("distributed", choice.maker(values), values, spec, seed=1, device=device),
                          MemoryStorage())
    assert result.metrics["device"] == device
    assert {f"device_{k}": v for k, v in result.qm.device.counters().items()}.items() <= result.metrics.items()
    return result.metrics


def test_run_metrics_carry_the_device_counters_and_the_sharing(tmp_path):
    # The same run on a device whose channel is its bandwidth (checkpoint queue-file writes
    # beside log writes divide it) and on one whose channel is ten times wider (nobody waits).
    path = tmp_path / "disks.toml"
    path.write_text('[one-path]\nbase = "san"\nchannel_mb_s = 1200\n[wide]\nbase = "san"\nchannel_mb_s = 12000\n',
                    encoding="utf-8")
    narrow, wide = _run_metrics(f"{path}:one-path"), _run_metrics(f"{path}:wide")
    for m in (narrow, wide):
        assert m["device_writes"] >= m["physical_writes"] > 0
        assert m["device_bytes_written"] >= m["physical_bytes"]
        assert m["device_busy_us"] == pytest.approx(m["device_read_us"] + m["device_write_us"]
                                                    + m["device_file_op_total_us"])
    assert narrow["device_shared_us"] > 0
    assert wide["device_shared_us"] == pytest.approx(0.0, abs=1e-6)
