"""What a file-system call costs on a device profile's file system (issue 40): the calls a
local file system serves in the kernel, those NFS sends to the server, those made durable;
the table in a user's TOML file, inherited call by call; and the device charging them."""

from __future__ import annotations

import pytest
import simpy

from mqlog.core.disk.devices import Device, get_profile, load_profiles
from mqlog.core.disk.fscalls import CALLS, CLASSES
from mqlog.core.errors import DeviceProfileError


def _write(tmp_path, text: str):
    path = tmp_path / "disks.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_every_builtin_profile_has_a_class_for_every_call():
    for profile in load_profiles().values():
        by_class = profile.fs_calls.by_class()
        assert sorted(c for calls in by_class.values() for c in calls) == sorted(CALLS)
        assert set(by_class) == set(CLASSES)


def test_a_local_file_system_serves_metadata_in_the_kernel_and_nfs_asks_the_server():
    ssd, san, nfs1, nfs3 = (get_profile(n) for n in ("ssd", "san", "nfs1", "nfs3"))
    for local in (ssd, san):
        # open, stat, a buffered write: far below a device write; what is made durable is one
        assert local.call_us("open") < local.write_latency_us / 10
        assert local.call_us("write") == local.call_us("stat") == local.call_us("open")
        assert local.call_us("create") == local.call_us("fsync") == local.write_latency_us
    for nfs in (nfs1, nfs3):
        # close-to-open: the open revalidates with the server, the close flushes and commits
        assert nfs.call_us("open") == nfs.call_us("stat") == nfs.round_trip_us > 0
        assert nfs.call_us("close") == nfs.write_latency_us
        # a read the client's cache holds and a buffered write stay on the client
        assert nfs.call_us("read") == nfs.call_us("write") < nfs.round_trip_us / 10
    # san and nfs1 write at about the same latency, but an open costs 50 times more on NFS
    assert nfs1.call_us("open") > 40 * san.call_us("open")


def test_a_user_profile_inherits_the_table_call_by_call(tmp_path):
    path = _write(tmp_path, """
[remote]
base = "nfs3"
fs_calls = { close = "round-trip" }

[mine]
base = "san"
round_trip_us = 300
[mine.fs_calls]
open = "round-trip"
""")
    profiles = load_profiles(path)
    remote, mine = profiles["remote"], profiles["mine"]
    nfs3, san = get_profile("nfs3"), get_profile("san")
    assert remote.call_us("close") == nfs3.round_trip_us  # overridden
    assert remote.call_us("open") == nfs3.call_us("open")  # inherited
    assert mine.call_us("open") == 300 and mine.call_us("stat") == san.call_us("stat")
    assert get_profile(f"{path}:mine") == mine


@pytest.mark.parametrize("table,field", [
    ('fs_calls = { open = "remote" }', "fs_calls.open"),
    ('fs_calls = { opne = "local" }', "fs_calls.opne"),
    ('fs_calls = "local"', "fs_calls"),
    ("local_call_us = -1", "local_call_us"),
    ("read_ahead_kb = 1", "read_ahead_kb"),
])
def test_a_bad_table_names_the_file_the_profile_and_the_field(tmp_path, table, field):
    path = _write(tmp_path, f'[bad]\nbase = "ssd"\n{table}\n')
    with pytest.raises(DeviceProfileError) as info:
        load_profiles(path)
    message = str(info.value)
    assert str(path) in message and "[bad]" in message and f"'{field}'" in message


def test_file_op_is_the_old_field_no_more(tmp_path):
    path = _write(tmp_path, '[old]\nbase = "ssd"\nfile_op_us = 50\n')
    with pytest.raises(DeviceProfileError, match="file_op_us.*allowed.*fs_calls"):
        load_profiles(path)


def test_a_local_call_holds_no_device_slot_and_a_round_trip_does():
    env = simpy.Environment()
    device = Device(env, "nfs3")   # queue depth 32: fill it with slow writes
    ends = {}

    def writer():
        yield from device.write(1 << 20)

    def call(name):
        yield from device.file_op(name)
        ends[name] = env.now

    for _ in range(32):
        env.process(writer())
    env.process(call("write"))   # buffered: the kernel's, never waits for a slot
    env.process(call("stat"))    # a GETATTR: waits for a slot behind the writes
    env.run()
    profile = device.profile
    assert ends["write"] == pytest.approx(profile.local_call_us)
    assert ends["stat"] > profile.write_time_us(1 << 20)
    assert device.calls == {"write": 1, "stat": 1} and device.file_ops == 2
    assert device.busy_us == pytest.approx(device.write_us + profile.round_trip_us)  # not the local call


def test_devices_calls_lists_each_profiles_table():
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "mqlog", "devices", "--calls"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    header, *rows = out.stdout.splitlines()
    assert header.split()[1:] == list(CALLS)
    nfs3 = next(r for r in rows if r.startswith("nfs3 ")).split()
    assert float(nfs3[1 + list(CALLS).index("open")]) == get_profile("nfs3").round_trip_us
    assert any(line.strip().startswith("nfs3: local read, write; round-trip open") for line in rows)
