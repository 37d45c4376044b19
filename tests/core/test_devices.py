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
                  read_bandwidth_mb_s=100.0, write_bandwidth_mb_s=100.0, file_op_us=10.0,
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
    lambda p: p.file_op_us,
    lambda p: p.write_time_us(4096),
    lambda p: p.read_time_us(4096),
], ids=["write", "read", "file_op", "write_4k", "read_4k"])
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
    assert slow.file_op_us - base.file_op_us == pytest.approx(round_trip)
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
    ("file_op_us", -0.5),
    ("queue_depth", 0),
    ("queue_depth", 1025),
    ("queue_depth", 2.0),
    ("queue_depth", True),
    ("read_latency_us", "5"),
    ("name", ""),
    ("description", None),
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
file_op_us = 5
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


@pytest.mark.parametrize("text,needles", [
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
    profile = _profile(queue_depth=2)
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
        returned.append((yield from device.file_op()))
        returned.append((yield from device.write(4096)))
        returned.append((yield from device.write(1000)))
        returned.append((yield from device.read(65536)))

    env.process(proc())
    env.run()
    w = profile.write_time_us(4096) + profile.write_time_us(1000)
    r = profile.read_time_us(65536)
    f = profile.file_op_us
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
