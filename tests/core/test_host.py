"""The host model (mqlog.core.host): profiles as data and their loader's errors, the
round-trip arithmetic against IBM's published CPU per round trip (the H1 figures of IBM's MQ for Linux performance reports), and
runs whose CPU and throughput follow the profile: charged call by call, on a pool of cores."""

from __future__ import annotations

import re

import attrs
import pytest

from mqlog.core.disk.storage import MemoryStorage
from mqlog.core.errors import HostProfileError
from mqlog.core.host.profiles import DEFAULT_HOST, HostProfile, get_host, load_hosts
from mqlog.core.workload.run import RunConfig, run_workload
from mqlog.core.workload.spec import BUILTINS, build_spec
from mqlog.platforms import choose

KIB = 1024


# -- the profiles against H1 -----------------------------------------------------------------

def test_the_default_host_is_a_builtin_and_both_reports_are_there():
    hosts = load_hosts()
    assert DEFAULT_HOST == "v93-xeon" and {"v93-xeon", "v91-xeon"} <= set(hosts)
    for host in hosts.values():
        # which report, how its CPU was split
        assert re.search(r"IBM MQ (for z/OS )?V9", host.source) and "Split" in host.source, host.name


def test_v91_round_trips_come_out_of_the_split_within_ibms_figures():
    """H1, V9.1: 2 KB non-persistent about 120 µs; persistent 330–390 µs, about 3× it."""
    host = get_host("v91-xeon")
    np_ = host.round_trip_us(2 * KIB, persistent=False)
    pers = host.round_trip_us(2 * KIB, persistent=True)
    assert np_ == pytest.approx(120, rel=0.10)
    assert 330 <= pers <= 390
    assert pers / np_ == pytest.approx(3, rel=0.15)


@pytest.mark.parametrize("size, ibm_us", [(20 * KIB, 176), (200 * KIB, 446), (2048 * KIB, 2900)])
def test_v93_round_trips_come_out_of_the_split_within_ibms_figures(size, ibm_us):
    """H1, V9.3: 2 KB non-persistent ≈ 30 µs and persistent ≈ 160 µs; larger persistent
    messages 176 µs (20 KB), 446 µs (200 KB), 2.9 ms (2 MB) – ±10%, the per-byte copy
    being one figure for all three."""
    host = get_host("v93-xeon")
    assert host.round_trip_us(2 * KIB, persistent=False) == pytest.approx(30, rel=0.15)
    assert host.round_trip_us(2 * KIB, persistent=True) == pytest.approx(160, rel=0.10)
    assert host.round_trip_us(size, persistent=True) == pytest.approx(ibm_us, rel=0.10)


def test_the_round_trip_adds_up_the_calls():
    """The arithmetic is the calls' sum: one more commit costs one commit's path, record,
    wakeup (its own and the log writer's waking it) and the application's CPU around it, and
    nothing else moves."""
    host = get_host("v93-xeon")
    one_more = host.round_trip_us(2 * KIB, persistent=True, commits=4) - host.round_trip_us(
        2 * KIB, persistent=True, commits=3)
    assert one_more == pytest.approx(host.app_call_us + host.commit_us + host.log_record_us + host.force_wait_us
                                     + host.wake_us)
    bigger = host.round_trip_us(3 * KIB, persistent=True) - host.round_trip_us(2 * KIB, persistent=True)
    assert bigger == pytest.approx(4 * KIB * host.copy_ns_per_byte / 1000)  # 2 puts + 2 gets copy it


# -- the loader ------------------------------------------------------------------------------

def test_a_name_is_case_insensitive_and_a_profile_passes_through():
    host = get_host("V91-XEON")
    assert host.name == "v91-xeon" and get_host(host) is host


def test_a_user_file_inherits_from_a_builtin(tmp_path):
    path = tmp_path / "mine.toml"
    path.write_text('[small]\nbase = "v93-xeon"\ncores = 2\n[smaller]\nbase = "small"\ncores = 1\n')
    small, smaller = get_host(f"{path}:small"), get_host(f"{path}:smaller")
    assert (small.cores, smaller.cores) == (2, 1)
    assert small.put_us == get_host("v93-xeon").put_us


@pytest.mark.parametrize("text, words", [
    ('[h]\nbase = "v93-xeon"\ncores = 0\n', ["hosts.toml", "[h]", "'cores'", "[1, 4096]"]),
    ('[h]\nbase = "v93-xeon"\nput_us = -1\n', ["hosts.toml", "[h]", "'put_us'", "[0, 1000000]"]),
    ('[h]\nbase = "v93-xeon"\ncopy_ns_per_byte = 5000\n', ["[h]", "'copy_ns_per_byte'", "[0, 1000]"]),
    ('[h]\nbase = "v93-xeon"\ncores = 2.5\n', ["[h]", "'cores'", "an integer"]),
    ('[h]\nbase = "v93-xeon"\nput_us = "fast"\n', ["[h]", "'put_us'", "a number"]),
    ('[h]\nbase = "v93-xeon"\nthreads = 8\n', ["[h]", "unknown field 'threads'", "cores"]),
    ('[h]\ncores = 8\n', ["[h]", "missing fields", "'put_us'", "base"]),
    ('[h]\nbase = "nosuch"\n', ["[h]", "base 'nosuch'", "v93-xeon"]),
    ('cores = 8\n', ["'cores' is not a host table"]),
    ('[h\n', ["hosts.toml", "not valid TOML"]),
    ('', ["hosts.toml", "no host profiles"]),
])
def test_a_bad_host_file_is_one_line_naming_file_host_and_field(tmp_path, text, words):
    path = tmp_path / "hosts.toml"
    path.write_text(text)
    with pytest.raises(HostProfileError) as err:
        get_host(str(path))
    message = str(err.value)
    assert "\n" not in message
    for word in words:
        assert word in message, message


def test_unknown_names_and_ambiguous_files_say_what_there_is(tmp_path):
    with pytest.raises(HostProfileError, match="unknown host profile 'laptop'.*v93-xeon.*v91-xeon"):
        get_host("laptop")
    path = tmp_path / "two.toml"
    path.write_text('[a]\nbase = "v93-xeon"\n[b]\nbase = "v91-xeon"\n')
    with pytest.raises(HostProfileError, match=r"defines 2 hosts \(a, b\); choose one"):
        get_host(str(path))
    with pytest.raises(HostProfileError, match="no host 'c'; it defines: a, b"):
        get_host(f"{path}:c")
    with pytest.raises(HostProfileError, match="cannot read"):
        get_host(str(tmp_path / "missing.toml"))


# -- runs --------------------------------------------------------------------------------------

def _run(host, *, workload="requester-responder", device="ssd", **params):
    choice = choose("distributed")
    values = choice.configure({})
    spec = build_spec(BUILTINS[workload], {k: str(v) for k, v in params.items()}, origin="test")
    return run_workload(RunConfig("distributed", choice.maker(values), values, spec, seed=3, device=device,
                                  host=host), MemoryStorage()).metrics


def _small(tmp_path, **fields) -> HostProfile:
    return attrs.evolve(get_host("v93-xeon"), name="small", **fields)


@pytest.mark.parametrize("persistent, commits", [(False, 0), (True, 3)])
def test_a_request_reply_runs_cpu_per_round_trip_is_the_profiles_arithmetic(persistent, commits):
    """Every call is charged where it happens; per round trip they add up to the profile's
    arithmetic. The built-in requester-responder runs non-persistent work outside syncpoint
    (no commits) and, persistent, commits three times a round trip (the responder gets and
    puts in one unit of work). Calls of round trips the end cut short are the only slack."""
    host = get_host("v91-xeon")
    size = 2 * KIB
    m = _run(host, persistent=persistent, message_size=size, duration=0.05, requesters=4, responders=4,
             queue_pairs=4)
    assert m["host"] == host.name and m["host_cores"] == 24 and m["cpu_wait_us"] == 0
    per_trip = host.round_trip_us(size, persistent=persistent, commits=commits)
    slack = 8 * per_trip  # at most one round trip's calls per application left unfinished
    assert m["round_trips"] > 100
    assert abs(m["cpu_busy_us"] - m["round_trips"] * per_trip) <= slack
    assert m["cpu_busy_us"] == pytest.approx(m["cpu_app_us"] + m["cpu_mqi_us"] + m["cpu_log_us"] + m["cpu_force_us"]
                                                 + m["cpu_logger_us"] + m["cpu_lock_us"] + m["cpu_compress_us"])
    assert (m["cpu_log_us"] > 0) == persistent


def test_non_persistent_throughput_scales_with_cores_while_the_cpu_bounds_it(tmp_path):
    """Non-persistent request/reply never waits for the log: with fewer cores than busy
    applications the CPU is the bound, and each core added carries about one core's worth
    of round trips more (time / CPU per round trip), until there are cores to spare."""
    per_trip = get_host("v93-xeon").round_trip_us(2 * KIB, persistent=False, commits=0)
    duration = 0.02
    trips = {}
    for cores in (1, 2, 4, 32):
        m = _run(_small(tmp_path, cores=cores), persistent=False, message_size=2 * KIB, duration=duration,
                 requesters=8, responders=8, queue_pairs=8)
        trips[cores] = m["round_trips"]
        if cores < 8:
            assert m["cpu_wait_us"] > 0  # calls queued for a core
            # no more round trips than the cores can carry: their CPU fits in the cores'
            # capacity over the run (simulated core-µs from the metrics, not wall-clock time)
            capacity = cores * m["virtual_s"] * 1e6
            assert trips[cores] * per_trip / capacity <= 1.0
    # (the queues are defined first, on the device's time, so the applications' time is
    # the same for every host but a little short of the duration: compare the hosts)
    assert trips[2] / trips[1] == pytest.approx(2, rel=0.05)
    assert trips[4] / trips[1] == pytest.approx(4, rel=0.05)
    assert trips[32] > trips[4]
    m = _run(_small(tmp_path, cores=32), persistent=False, message_size=2 * KIB, duration=duration,
             requesters=8, responders=8, queue_pairs=8)
    assert m["cpu_wait_us"] == 0  # 16 applications, 32 cores: nobody queues


def test_a_persistent_workload_is_slower_on_a_slower_or_smaller_host():
    """The same persistent request/reply on the same device: V9.1's slower calls, or one
    core for every application, give fewer round trips; the log's share stays the device's."""
    params = dict(persistent=True, message_size=2 * KIB, duration=0.05, requesters=8, responders=8, queue_pairs=8)
    v93 = _run("v93-xeon", **params)
    v91 = _run("v91-xeon", **params)
    one_core = _run(attrs.evolve(get_host("v93-xeon"), name="one", cores=1), **params)
    assert v91["round_trips"] < v93["round_trips"]
    assert one_core["round_trips"] < v93["round_trips"] and one_core["cpu_wait_us"] > 0
    # the CPU a round trip takes is the host's, whatever the throughput
    assert v91["cpu_busy_us"] / v91["round_trips"] > 2 * v93["cpu_busy_us"] / v93["round_trips"]


def test_the_same_host_and_seed_give_the_same_metrics():
    params = dict(persistent=True, message_size=512, duration=0.01, requesters=6, responders=6, queue_pairs=3)
    small = attrs.evolve(get_host("v91-xeon"), name="two", cores=2)
    assert _run(small, **params) == _run(small, **params)


def test_the_distributed_logger_wakes_each_caller_it_released_and_the_z_os_logger_pays_for_each_write():
    """The distributed log writer wakes every caller its write released, one futex wake
    (``wake_us``) each on its own thread before its next write; z/OS's logger task pays its
    own CPU for each write it starts (``log_io_us``: issuing it, being dispatched again after
    it), and posts its waiters at no modelled cost (no IBM figure; the host's wake is a Linux
    one)."""
    host = get_host("v93-xeon")
    runs = {}
    for platform in ("distributed", "zos"):
        choice = choose(platform)
        values = choice.configure({})
        spec = build_spec(BUILTINS["requester-responder"], {"requesters": "8", "responders": "8",
                                                             "duration": "0.02"}, origin="test")
        runs[platform] = run_workload(RunConfig(platform, choice.maker(values), values, spec, seed=3,
                                                device="ssd", host=host), MemoryStorage()).metrics
    dist = runs["distributed"]
    # (the forces the shutdown's last write released are woken after the run's figures)
    assert dist["forces_waited"] - 2 <= dist["cpu_logger_us"] / host.wake_us <= dist["forces_waited"]
    # the x86 hosts' CPU per round trip holds the logger's work already: z/OS's writes add none
    assert host.log_io_us == 0 and runs["zos"]["forces_waited"] > 0 and runs["zos"]["cpu_logger_us"] == 0
    z14 = get_host("z14-3cp")
    choice = choose("zos")
    values = choice.configure({})
    zos = run_workload(RunConfig("zos", choice.maker(values), values, spec, seed=3, device="ssd", host=z14),
                       MemoryStorage()).metrics
    # every write of the log, copy 2's too, each charge within the host's jitter
    writes, jitter = zos["physical_writes"], z14.cpu_jitter
    assert z14.log_io_us == 28 and zos["forces_waited"] > 0 and writes > 0
    assert (1 - jitter) * writes * z14.log_io_us <= zos["cpu_logger_us"] <= (1 + jitter) * writes * z14.log_io_us
