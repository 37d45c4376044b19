"""Device profiles (the data, the loader) and the simulated device in SimPy."""

from __future__ import annotations

import attrs
import pytest
import simpy
from mqlog.core.disk.devices import (
    PROFILE_FIELDS,
    Device,
    DeviceProfile,
    get_profile,
    load_profiles,
)
from mqlog.core.errors import DeviceProfileError, MqlogError, ParameterError

REQUIRED = ("ssd", "san", "nfs1", "nfs2", "nfs3")

# From the spec, not from devices.toml: extra network delay *each way* over nfs1.
EXTRA_ONE_WAY_US = {"nfs2": 500.0, "nfs3": 1000.0}


def _profile(**overrides) -> DeviceProfile:
    fields = dict(name="t", description="test", read_latency_us=100.0, write_latency_us=100.0,
                  read_bandwidth_mb_s=100.0, write_bandwidth_mb_s=100.0,
                  queue_depth=1)
    fields.update(overrides)
    return DeviceProfile(**fields)


def _write(tmp_path, text: str, name: str = "disks.toml"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# ------------------------------------------------------------------ built-in table


def test_required_profiles_load_and_are_named():
    profiles = load_profiles()
    for name in REQUIRED:
        assert name in profiles
        assert profiles[name].name == name
        assert profiles[name].description
        assert get_profile(name) is profiles[name]


def test_builtin_lookup_is_case_insensitive():
    assert get_profile("NFS1") == get_profile("nfs1")


@pytest.mark.parametrize("cost", [
    lambda p: p.write_latency_us,
    lambda p: p.read_latency_us,
    lambda p: p.call_us("create"),
    lambda p: p.write_time_us(4096),
    lambda p: p.read_time_us(4096),
], ids=["write", "read", "create", "write_4k", "read_4k"])
def test_latency_ordering(cost):
    profiles = load_profiles()
    costs = [cost(profiles[n]) for n in REQUIRED]
    assert costs == sorted(costs) and len(set(costs)) == len(costs), dict(zip(REQUIRED, costs))


@pytest.mark.parametrize("name", sorted(EXTRA_ONE_WAY_US))
def test_nfs_delay_profiles_are_nfs1_plus_one_round_trip(name):
    profiles = load_profiles()
    base, slow = profiles["nfs1"], profiles[name]
    round_trip = 2 * EXTRA_ONE_WAY_US[name]
    assert slow.write_latency_us - base.write_latency_us == pytest.approx(round_trip)
    assert slow.read_latency_us - base.read_latency_us == pytest.approx(round_trip)
    assert slow.round_trip_us - base.round_trip_us == pytest.approx(round_trip)
    assert slow.call_us("open") - base.call_us("open") == pytest.approx(round_trip)
    assert slow.fs_calls == base.fs_calls
    # Delay is latency only: streaming rate and concurrency are those of nfs1.
    assert slow.write_bandwidth_mb_s == base.write_bandwidth_mb_s
    assert slow.read_bandwidth_mb_s == base.read_bandwidth_mb_s
    assert slow.queue_depth == base.queue_depth


def test_round_trip_deltas_are_1ms_and_2ms():
    p = load_profiles()
    assert p["nfs2"].write_latency_us - p["nfs1"].write_latency_us == pytest.approx(1_000.0)
    assert p["nfs3"].write_latency_us - p["nfs1"].write_latency_us == pytest.approx(2_000.0)


@pytest.mark.parametrize("name", REQUIRED + ("ram",))
@pytest.mark.parametrize("n", [1, 4096, 1 << 20])
def test_time_grows_linearly_with_size(name, n):
    p = get_profile(name)
    assert p.write_time_us(2 * n) - p.write_time_us(n) == pytest.approx(n / p.write_bandwidth_mb_s)
    assert p.read_time_us(2 * n) - p.read_time_us(n) == pytest.approx(n / p.read_bandwidth_mb_s)
    assert p.write_time_us(0) == p.write_latency_us
    assert p.read_time_us(0) == p.read_latency_us


def test_dasd_profile_gives_ibms_published_z_os_log_figures():
    # IBM's MQ for z/OS blog "What is my MQ logging rate": one or two 4 KiB pages per log
    # I/O take "under 0.5 ms" on DASD that is not mirrored, and the log task driven flat
    # out (128-page writes, its largest) gets "150-180 MB/Second".
    dasd = get_profile("dasd")
    for pages in (1, 2):
        assert dasd.write_time_us(pages * 4096) < 500.0
    big = 128 * 4096
    assert 150.0 <= big / dasd.write_time_us(big) <= 180.0
    # Dual logging's two copies at once do not wait for the channel (several FICON paths).
    device, finished, _ = _schedule(dasd, [(0.0, "write", big), (0.0, "write", big)])
    assert finished == pytest.approx([dasd.write_time_us(big)] * 2) and device.shared_us == 0.0


def test_bandwidth_is_megabytes_of_10_6_bytes_per_second():
    p = _profile(write_latency_us=0.0, write_bandwidth_mb_s=1.0)
    # 1 MB/s moves 10**6 bytes in one second = 10**6 µs.
    assert p.write_time_us(1_000_000) == pytest.approx(1_000_000.0)


def test_negative_size_rejected():
    with pytest.raises(ParameterError, match="nbytes"):
        get_profile("ssd").write_time_us(-1)


# ------------------------------------------------------------------ validation


@pytest.mark.parametrize("field,value", [
    ("read_latency_us", -1.0),
    ("write_latency_us", 10_000_001.0),
    ("write_latency_us", float("nan")),
    ("read_bandwidth_mb_s", 0.0),
    ("write_bandwidth_mb_s", 2e6),
    ("write_bandwidth_mb_s", float("inf")),
    ("local_call_us", -0.5),
    ("round_trip_us", 10_000_001.0),
    ("read_ahead_kb", 2),
    ("read_ahead_kb", 128.0),
    ("queue_depth", 0),
    ("queue_depth", 1025),
    ("queue_depth", 2.0),
    ("queue_depth", True),
    ("read_latency_us", "5"),
    ("name", ""),
    ("description", None),
    ("channel_mb_s", 0.0),
    ("channel_mb_s", -5.0),
    ("channel_mb_s", 2e6),
    ("channel_mb_s", float("nan")),
    ("channel_mb_s", "fast"),
])
def test_profile_validation(field, value):
    with pytest.raises(ParameterError) as info:
        _profile(**{field: value})
    assert info.value.name == f"device.{field}"
    assert f"device.{field}" in str(info.value)
    assert "allowed" in str(info.value)


def test_evolve_revalidates_and_ints_become_floats():
    base = get_profile("san")
    fast = attrs.evolve(base, name="fast-san", write_latency_us=100)
    assert fast.write_latency_us == 100.0 and isinstance(fast.write_latency_us, float)
    assert fast.read_latency_us == base.read_latency_us
    with pytest.raises(ParameterError, match="device.write_latency_us"):
        attrs.evolve(base, write_latency_us=-1)


def test_channel_defaults_to_the_larger_bandwidth_and_follows_it():
    p = _profile(read_bandwidth_mb_s=300.0, write_bandwidth_mb_s=100.0)
    assert p.channel_mb_s is None and p.channel == 300.0
    # derived with a faster write: the unstated channel is that bandwidth, not a stale 300
    faster = attrs.evolve(p, write_bandwidth_mb_s=500)
    assert faster.channel == 500.0
    stated = attrs.evolve(p, channel_mb_s=1000)
    assert stated.channel == 1000.0 and isinstance(stated.channel_mb_s, float)


def test_narrow_channel_limits_even_a_lone_transfer():
    p = _profile(write_latency_us=10.0, write_bandwidth_mb_s=100.0, channel_mb_s=40.0)
    assert p.write_time_us(4000) == pytest.approx(10.0 + 4000 / 40.0)


def test_profiles_are_frozen():
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        get_profile("ssd").queue_depth = 2  # type: ignore[misc]


# ------------------------------------------------------------------ user files


def test_user_profile_inherits_from_builtin(tmp_path):
    path = _write(tmp_path, '[mydisk]\nbase = "san"\nwrite_latency_us = 120\n')
    profiles = load_profiles(path)
    assert list(profiles) == ["mydisk"]
    mine, san = profiles["mydisk"], get_profile("san")
    assert mine.name == "mydisk"
    assert mine.write_latency_us == 120.0
    assert attrs.evolve(mine, name="san", write_latency_us=san.write_latency_us) == san
    assert get_profile(str(path)) == mine
    assert get_profile(f"{path}:mydisk") == mine


def test_user_file_full_profile_and_base_on_earlier_profile(tmp_path):
    path = _write(tmp_path, """
[a]
description = "a"
read_latency_us = 10
write_latency_us = 20.5
read_bandwidth_mb_s = 100
write_bandwidth_mb_s = 200
queue_depth = 4

[b]
base = "a"
queue_depth = 1
""")
    profiles = load_profiles(path)
    assert list(profiles) == ["a", "b"]
    assert profiles["b"].queue_depth == 1
    assert profiles["b"].write_latency_us == 20.5
    assert get_profile(f"{path}:b") == profiles["b"]
    with pytest.raises(DeviceProfileError, match="choose one"):
        get_profile(str(path))
    with pytest.raises(DeviceProfileError, match="'zz'.*a, b"):
        get_profile(f"{path}:zz")


def test_user_file_with_and_without_channel(tmp_path):
    path = _write(tmp_path, """
[plain]
description = "no channel stated"
read_latency_us = 10
write_latency_us = 20
read_bandwidth_mb_s = 300
write_bandwidth_mb_s = 200
queue_depth = 4

[wide]
base = "plain"
channel_mb_s = 900

[faster]
base = "plain"
write_bandwidth_mb_s = 700

[san-narrow]
base = "san"
channel_mb_s = 600.5
""")
    profiles = load_profiles(path)
    assert profiles["plain"].channel_mb_s is None and profiles["plain"].channel == 300.0
    assert profiles["wide"].channel == 900.0
    assert profiles["faster"].channel == 700.0  # unstated: follows the inherited fields
    assert profiles["san-narrow"].channel == 600.5
    # a built-in's stated channel is inherited
    assert load_profiles(_write(tmp_path, '[s]\nbase = "san"\n', "s.toml"))["s"].channel == get_profile("san").channel


@pytest.mark.parametrize("text,needles", [
    ('[d]\nbase = "san"\nchannel_mb_s = 0\n', ["[d]", "channel_mb_s", "(0, 1000000]"]),
    ('[d]\nbase = "san"\nchannel_mb_s = "wide"\n', ["[d]", "channel_mb_s", "number"]),
    ('[d]\nbase = "san"\nwrite_latncy_us = 1\n', ["[d]", "write_latncy_us"]),
    ('[d]\nbase = "san"\nwrite_latency_us = -1\n', ["[d]", "write_latency_us"]),
    ('[d]\nbase = "san"\nwrite_latency_us = "fast"\n', ["[d]", "write_latency_us", "number"]),
    ('[d]\nbase = "san"\nqueue_depth = 2.5\n', ["[d]", "queue_depth", "integer"]),
    ('[d]\nbase = "san"\ndescription = 3\n', ["[d]", "description", "string"]),
    ('[d]\nbase = "tape"\n', ["[d]", "base", "tape", "san"]),
    ('[d]\nbase = "later"\n[later]\nbase = "ssd"\n', ["[d]", "base", "later"]),
    ('[d]\nwrite_latency_us = 1\n', ["[d]", "missing", "read_latency_us"]),
    ('[d]\nbase = "san"\nwrite_latency_us = 1\n[broken\n', ["not valid TOML"]),
    ('write_latency_us = 1\n', ["write_latency_us", "not a profile table"]),
    ('', ["no device profiles"]),
    ('[d]\nbase = "san"\nname = "x"\n', ["[d]", "name"]),
])
def test_bad_user_files(tmp_path, text, needles):
    path = _write(tmp_path, text)
    with pytest.raises((DeviceProfileError, ParameterError)) as info:
        load_profiles(path)
    message = str(info.value)
    assert str(path) in message
    for needle in needles:
        assert needle in message


def test_missing_file_and_unknown_name():
    with pytest.raises(DeviceProfileError, match="nope.toml"):
        get_profile("/nonexistent/nope.toml")
    with pytest.raises(DeviceProfileError) as info:
        get_profile("tape")
    assert isinstance(info.value, MqlogError)
    for name in REQUIRED:
        assert name in str(info.value)


def test_file_is_data_not_code(tmp_path):
    path = _write(tmp_path, '[d]\nbase = "san"\ndescription = "__import__(\'os\').system(\'false\')"\n')
    assert load_profiles(path)["d"].description.startswith("__import__")


def test_profile_fields_match_packaged_table():
    for profile in load_profiles().values():
        assert set(attrs.asdict(profile)) == set(PROFILE_FIELDS) | {"name"}


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


def _schedule(profile: DeviceProfile, ios):
    """Run ``ios`` -- (start_us, "read"|"write", nbytes) -- each in its own process;
    returns the device, each I/O's finish time and the service time each call returned."""
    env = simpy.Environment()
    device = Device(env, profile)
    finished = [None] * len(ios)
    returned = [None] * len(ios)

    def io(i, start, kind, nbytes):
        yield env.timeout(start)
        returned[i] = yield from getattr(device, kind)(nbytes)
        finished[i] = env.now

    for i, (start, kind, nbytes) in enumerate(ios):
        env.process(io(i, start, kind, nbytes))
    env.run()
    return device, finished, returned


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
    path = _write(tmp_path, '[one-path]\nbase = "san"\nchannel_mb_s = 1200\n'
                            '[wide]\nbase = "san"\nchannel_mb_s = 12000\n')
    narrow, wide = _run_metrics(f"{path}:one-path"), _run_metrics(f"{path}:wide")
    for m in (narrow, wide):
        assert m["device_writes"] >= m["physical_writes"] > 0
        assert m["device_bytes_written"] >= m["physical_bytes"]
        assert m["device_busy_us"] == pytest.approx(m["device_read_us"] + m["device_write_us"]
                                                    + m["device_file_op_total_us"])
    assert narrow["device_shared_us"] > 0
    assert wide["device_shared_us"] == pytest.approx(0.0, abs=1e-6)
