"""The command line through its real entry point: one-line errors, no tracebacks."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


def mqlog(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "mqlog", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=120)


def test_version_and_help():
    from mqlog import __version__

    out = mqlog("--version")
    assert out.returncode == 0 and __version__ in out.stdout
    helped = mqlog("--help")
    assert helped.returncode == 0
    for command in ("groupcommit", "scan", "devices", "mqldt"):
        assert command in helped.stdout


def test_groupcommit_json_shows_group_commit_and_reads_everything_back(tmp_path):
    out = mqlog("groupcommit", "--committers", "1,8", "--commits", "10", "--json", "--out", tmp_path)
    assert out.returncode == 0, out.stderr
    one, eight = json.loads(out.stdout)["results"]
    assert one["physical_writes"] == one["commits"] == 10
    assert eight["physical_writes"] < eight["commits"] == 80
    assert eight["useful_bytes_per_write"] > one["useful_bytes_per_write"]
    # begin + put + commit per commit, all read back from the real file
    assert eight["records_read_back"] == 3 * 80
    assert (tmp_path / "committers-8" / "reference.log").stat().st_size % 4096 == 0


def test_scan_reads_a_log_and_reports_damage_with_file_and_offset(tmp_path):
    assert mqlog("groupcommit", "--committers", "3", "--commits", "20", "--out", tmp_path).returncode == 0
    log = tmp_path / "committers-3" / "reference.log"
    good = mqlog("scan", log)
    assert good.returncode == 0
    assert "Commit 60" in good.stdout and "end" in good.stdout
    data = bytearray(log.read_bytes())
    data[4096 * 2 + 100] ^= 0x10  # a bit in the third page, with good pages after it
    log.write_bytes(bytes(data))
    bad = mqlog("scan", log)
    assert bad.returncode == 2
    assert bad.stderr.count("\n") == 1 and "Traceback" not in bad.stderr
    assert "reference.log" in bad.stderr and "offset 8192" in bad.stderr


@pytest.mark.parametrize("args, words", [
    (("groupcommit", "--device", "floppy"), ["floppy", "ssd"]),
    (("groupcommit", "--committers", "0"), ["committers", "1 to 10000"]),
    (("groupcommit", "--committers", "a,b"), ["--committers"]),
    (("groupcommit", "--message-size", "-1"), ["message_size"]),
])
def test_bad_input_is_one_line_naming_the_parameter(args, words):
    out = mqlog(*args)
    assert out.returncode == 2
    assert "Traceback" not in out.stderr
    for word in words:
        assert word in out.stderr


def test_user_device_profile_file(tmp_path):
    profile = tmp_path / "mine.toml"
    profile.write_text('[slowdisk]\nbase = "san"\nwrite_latency_us = 5000\n')
    out = mqlog("groupcommit", "--committers", "1", "--commits", "5", "--device", profile, "--json")
    assert out.returncode == 0, out.stderr
    [row] = json.loads(out.stdout)["results"]
    assert row["device"] == "slowdisk" and row["commit_latency_us"] >= 5000
    broken = tmp_path / "broken.toml"
    broken.write_text('[x]\nbase = "san"\nwrite_latency_us = "fast"\n')
    out = mqlog("groupcommit", "--device", broken)
    assert out.returncode == 2 and "write_latency_us" in out.stderr and "Traceback" not in out.stderr


def test_public_api_names_all_resolve():
    import mqlog

    for name in mqlog.__all__:
        assert getattr(mqlog, name) is not None, name
    with pytest.raises(AttributeError):
        mqlog.no_such_thing  # noqa: B018


def test_devices_lists_each_profiles_channel(tmp_path):
    out = mqlog("devices")
    assert out.returncode == 0, out.stderr
    header, *rows = out.stdout.splitlines()
    assert "ch MB/s" in header and "ch: the channel" in out.stdout  # the channel transfers share
    dasd = next(r for r in rows if r.startswith("dasd "))
    assert "5120" in dasd.split()
    # a profile of the user's without channel_mb_s: its larger bandwidth, marked as not stated
    path = tmp_path / "disks.toml"
    path.write_text('[wide]\nbase = "san"\nchannel_mb_s = 4800\n[plain]\ndescription = "d"\nread_latency_us = 1\n'
                    'write_latency_us = 1\nread_bandwidth_mb_s = 300\nwrite_bandwidth_mb_s = 700\n'
                    'queue_depth = 2\n', encoding="utf-8")
    out = mqlog("devices", "--file", path)
    assert out.returncode == 0, out.stderr
    rows = {line.split()[0]: line.split() for line in out.stdout.splitlines()[1:]}
    assert "4800" in rows["wide"] and "700*" in rows["plain"]
    bad = tmp_path / "bad.toml"
    bad.write_text('[d]\nbase = "san"\nchannel_mb_s = 0\n', encoding="utf-8")
    out = mqlog("devices", "--file", bad)
    assert out.returncode != 0 and "Traceback" not in out.stderr
    assert "channel_mb_s" in out.stderr and str(bad) in out.stderr
