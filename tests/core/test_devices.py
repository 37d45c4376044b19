"""Device profiles (the data, the loader) and the simulated device in SimPy."""

from __future__ import annotations

import attrs
import pytest
from devicekit import profile as _profile, schedule as _schedule
from mqlog.core.disk.devices import PROFILE_FIELDS, get_profile, load_profiles
from mqlog.core.errors import DeviceProfileError, MqlogError, ParameterError

REQUIRED = ("ssd", "san", "nfs1", "nfs2", "nfs3")

# From the spec, not from devices.toml: extra network delay *each way* over nfs1.
EXTRA_ONE_WAY_US = {"nfs2": 500.0, "nfs3": 1000.0}


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
