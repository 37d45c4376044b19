"""`mqlog run / restart / workloads / config` through the real entry point, and the metrics schema they share."""

from __future__ import annotations

import hashlib
import json
import shutil

import pytest
from clikit import SMALL, mqlog, one_line_error, sets

AVAILABLE_PLATFORMS = ["reference", "distributed", "zos"]

SCHEMA = ("platform workload seed device config virtual_s workload_s messages_put messages_got commits backouts "
          "forces logical_bytes physical_bytes logical_writes log_records write_cycles physical_writes "
          "write_size_short_bytes write_size_long_bytes write_size_max_bytes write_time_short_us write_time_long_us "
          "write_time_max_us checkpoints log_switches "
          "active_log_capacity_bytes active_log_used_bytes_max log_full_events uows_rolled_back "
          "uows_rolled_forward shunts archive_offloads compression_in_bytes compression_out_bytes "
          "log_full_refusals log_full_wait_us media_images media_image_bytes queues_recreated shunted_bytes shunts_failed "
          "pages_written partial_page_writes partial_page_rewrites host host_cores cpu_busy_us cpu_wait_us "
          "device_busy_us device_wait_us device_shared_us device_writes device_bytes_written").split()
RESTART_SCHEMA = ("records_replayed bytes_read uows_backed_out uows_committed uows_indoubt messages_reconciled "
                  "queues_loaded restart_virtual_s restart_phases provenance").split()
VERIFY = ("committed_missing", "uncommitted_present", "duplicates", "indoubt")


@pytest.mark.parametrize("platform", AVAILABLE_PLATFORMS)
@pytest.mark.parametrize("workload", sorted(SMALL))
def test_every_builtin_runs_and_reports_the_schema(platform, workload):
    out = mqlog("run", "--platform", platform, "--workload", workload, *sets(workload), "--json")
    assert out.returncode == 0, out.stderr
    m = json.loads(out.stdout)
    assert set(SCHEMA) <= set(m)
    assert m["platform"] == platform and m["workload"] == workload and not m["crashed"]
    assert m["virtual_s"] > 0 and m["checkpoints"] >= 2  # start and shutdown
    assert m["physical_bytes"] >= m["physical_writes"] * 4096 > 0
    if workload != "log-fill" or True:
        assert m["messages_put"] > 0


def test_one_committer_rewrites_the_partial_page_its_last_commit_left():
    """Each commit of a lone application forces a write that ends mid-page; the next write
    starts by rewriting that page. With many committers sharing forces, pages fill more."""
    def run(requesters):
        out = mqlog("run", "--platform", "zos", "--workload", "requester-responder", "--set", "workload.duration=0.05",
                    "--set", f"workload.requesters={requesters}", "--set", f"workload.responders={requesters}",
                    "--json")
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)

    alone, crowd = run(1), run(20)
    for m in (alone, crowd):
        assert m["pages_written"] >= m["physical_writes"] > 0
        assert m["partial_page_rewrites"] <= m["partial_page_writes"] <= m["physical_writes"]
    assert alone["partial_page_rewrites"] >= 0.9 * alone["forces"]
    assert crowd["pages_written"] / crowd["physical_writes"] > alone["pages_written"] / alone["physical_writes"]


def test_putget_pairs_numbers_follow_the_parameters():
    out = mqlog("run", "--platform", "reference", "--workload", "putget-pairs", "--set", "workload.pairs=2",
                "--set", "workload.messages_per_pair=25", "--json")
    m = json.loads(out.stdout)
    assert m["messages_put"] == 50 and m["messages_got"] == 50
    assert m["commits"] == 100  # a commit after each put and each get
    out = mqlog("run", "--platform", "reference", "--workload", "putget-pairs", "--set", "workload.pairs=2",
                "--set", "workload.messages_per_pair=25", "--set", "workload.persistent=false", "--json")
    np = json.loads(out.stdout)
    assert np["logical_bytes"] < m["logical_bytes"] / 5  # non-persistent work is never logged


def test_crash_then_restart_verify_passes(tmp_path):
    out = mqlog("run", "--platform", "reference", "--workload", "putget-pairs", "--set", "workload.pairs=4",
                "--set", "workload.messages_per_pair=60", "--crash-after-writes", "70", "--out", tmp_path, "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["crashed"]
    for name in ("metrics.json", "journal.json", "run.json", "messages.log"):  # reference's error log
        assert (tmp_path / name).is_file(), name
    restarted = mqlog("restart", tmp_path, "--verify", "--json")
    assert restarted.returncode == 0, restarted.stderr
    report = json.loads(restarted.stdout)
    assert set(RESTART_SCHEMA) <= set(report) and set(VERIFY) <= set(report)
    assert report["committed_missing"] == report["uncommitted_present"] == report["duplicates"] == 0
    assert report["records_replayed"] > 0
    assert "Restart complete" in (tmp_path / "messages.log").read_text()


def test_crash_at_a_virtual_time(tmp_path):
    out = mqlog("run", "--platform", "reference", "--workload", "requester-responder", *sets("requester-responder"),
                "--crash-at", "0.02", "--out", tmp_path, "--json")
    m = json.loads(out.stdout)
    assert m["crashed"] and m["virtual_s"] == pytest.approx(0.02)
    restarted = mqlog("restart", tmp_path, "--verify")
    assert restarted.returncode == 0, restarted.stdout + restarted.stderr
    assert "OK" in restarted.stdout


def test_verify_fails_when_a_committed_message_is_missing(tmp_path):
    mqlog("run", "--platform", "reference", "--workload", "deep-queue", *sets("deep-queue"), "--out", tmp_path)
    journal = json.loads((tmp_path / "journal.json").read_text())
    # Claim one more committed message than the queue manager ever had.
    journal["messages"]["00" * 24] = ["DEEP.0000", True, "committed", ""]
    (tmp_path / "journal.json").write_text(json.dumps(journal))
    out = mqlog("restart", tmp_path, "--verify", "--json")
    assert out.returncode == 1
    assert json.loads(out.stdout)["committed_missing"] == 1


def test_same_spec_and_seed_give_byte_identical_logs_and_metrics(tmp_path):
    def run(where, seed):
        out = mqlog("run", "--platform", "reference", "--workload", "requester-responder",
                    *sets("requester-responder"), "--seed", seed, "--out", where, "--json")
        digest = hashlib.sha256()
        for path in sorted((where / "qm").iterdir()):
            digest.update(path.name.encode() + path.read_bytes())
        return json.loads(out.stdout), digest.hexdigest()

    a, b, c = run(tmp_path / "a", 3), run(tmp_path / "b", 3), run(tmp_path / "c", 4)
    assert a == b
    assert a[1] != c[1] and a[0]["fingerprint"] != c[0]["fingerprint"]


def test_a_spec_file_gives_the_same_run_as_the_same_settings(tmp_path):
    spec = tmp_path / "pairs.toml"
    spec.write_text('workload = "putget-pairs"\nseed = 9\n[params]\npairs = 2\nmessages_per_pair = 30\n'
                    'payload = "padded-records"\n')
    from_file = json.loads(mqlog("run", "--platform", "reference", "--workload", spec, "--json").stdout)
    from_flags = json.loads(mqlog("run", "--platform", "reference", "--workload", "putget-pairs",
                                  "--set", "workload.pairs=2", "--set", "workload.messages_per_pair=30",
                                  "--set", "workload.payload=padded-records", "--seed", "9", "--json").stdout)
    assert from_file == from_flags


def test_workloads_lists_every_builtin_with_its_parameters():
    from mqlog.core.workload.spec import BUILTINS

    out = mqlog("workloads")
    assert out.returncode == 0
    for name, definition in BUILTINS.items():
        assert name in out.stdout
        for param in definition.params:
            assert param.name in out.stdout


def test_config_shows_and_validates_log_parameters():
    out = mqlog("config", "--platform", "reference", "--set", "log.checkpoint_records=500", "--json")
    assert json.loads(out.stdout)["log"]["checkpoint_records"] == 500
    one_line_error(mqlog("config", "--platform", "reference", "--set", "log.checkpoint_records=0"),
                   "log.checkpoint_records", "1 to 16000000")


@pytest.mark.parametrize("args, words", [
    (["run", "--platform", "reference", "--workload", "putget-pairs", "--set", "workload.pairs=0"],
     ["pairs"]),
    (["run", "--platform", "reference", "--workload", "putget-pairs", "--set", "workload.nonsense=1"],
     ["nonsense"]),
    (["run", "--platform", "reference", "--workload", "no-such-workload"], ["no-such-workload"]),
    (["run", "--platform", "reference", "--workload", "putget-pairs", "--set", "log.buffer_pages=1"],
     ["log.buffer_pages", "2 to 65535"]),
    (["run", "--platform", "reference", "--workload", "putget-pairs", "--set", "log.no_such=3"], ["log.no_such"]),
    (["run", "--platform", "mainframe", "--workload", "putget-pairs"], ["--platform", "mainframe"]),
    (["run", "--platform", "zos", "--workload", "putget-pairs", "--set", "log.WRTHRSH=300"],
     ["WRTHRSH", "256"]),
    (["run", "--platform", "zos", "--workload", "putget-pairs", "--set", "log.STARTRBA=0x1001"],
     ["STARTRBA"]),
    (["run", "--platform", "reference", "--workload", "putget-pairs", "--set", "noequals"], ["noequals"]),
    (["run", "--platform", "reference", "--workload", "putget-pairs", "--crash-after-writes", "5",
      "--crash-at", "1"], ["not both"]),
])
def test_bad_input_gives_a_one_line_error(args, words):
    one_line_error(mqlog(*args), *words)


def test_bad_spec_file_names_the_field(tmp_path):
    spec = tmp_path / "bad.toml"
    spec.write_text('workload = "putget-pairs"\n[params]\nmessage_size = "big"\n')
    one_line_error(mqlog("run", "--platform", "reference", "--workload", spec), "message_size")
    broken = tmp_path / "broken.toml"
    broken.write_text('workload = "putget-pairs\n')
    one_line_error(mqlog("run", "--platform", "reference", "--workload", broken), "broken.toml")


def test_bad_directories_give_one_line_errors(tmp_path):
    one_line_error(mqlog("restart", tmp_path), "run.json")
    (tmp_path / "run.json").write_text("{not json")
    one_line_error(mqlog("restart", tmp_path), "run.json")
    assert mqlog("run", "--platform", "reference", "--workload", "putget-pairs", *sets("putget-pairs"),
                 "--out", tmp_path / "used").returncode == 0
    one_line_error(mqlog("run", "--platform", "reference", "--workload", "putget-pairs", "--out", tmp_path / "used"),
                   "already holds")
    (tmp_path / "used" / "journal.json").write_text('{"version": 1, "messages": {"zz": 1}}')
    one_line_error(mqlog("restart", tmp_path / "used", "--verify"), "journal.json", "messages.zz")


def test_a_user_device_profile_carries_over_to_restart(tmp_path):
    profile = tmp_path / "slow.toml"
    profile.write_text('[slow]\nbase = "nfs3"\nread_latency_us = 9000\n')
    out = mqlog("run", "--platform", "reference", "--workload", "putget-pairs", *sets("putget-pairs"),
                "--device", profile, "--crash-after-writes", "20", "--out", tmp_path / "run")
    assert out.returncode == 0, out.stderr
    fast = mqlog("run", "--platform", "reference", "--workload", "putget-pairs", *sets("putget-pairs"),
                 "--crash-after-writes", "20", "--out", tmp_path / "fast")
    assert fast.returncode == 0
    slow_restart = json.loads(mqlog("restart", tmp_path / "run", "--verify", "--json").stdout)
    fast_restart = json.loads(mqlog("restart", tmp_path / "fast", "--verify", "--json").stdout)
    assert slow_restart["restart_virtual_s"] > 10 * fast_restart["restart_virtual_s"]


def test_mqlog_hosts_lists_the_profiles_and_refuses_a_bad_file(tmp_path):
    out = mqlog("hosts")
    assert out.returncode == 0, out.stderr
    calls, restart, writer = out.stdout.split("\n\n")
    rows = []  # a row wider than the terminal (COLUMNS=80 here) goes on under it, indented
    for line in calls.splitlines():
        if line.startswith(" "):
            rows[-1] += " " + line.strip()
        else:
            rows.append(line)
    lines = {line.split()[0]: line for line in rows[1:]}
    assert "(default)" in lines["v93-xeon"] and "(default)" not in lines["v91-xeon"]
    assert "30.0 / 162.9" in lines["v93-xeon"]  # the H1 round trip each profile was split from
    # Restart's CPU is listed from each profile: a user's own figure shows as given.
    assert restart.splitlines()[0].startswith("restart CPU") and len(restart.splitlines()) == len(lines) + 1
    # the log writer's own CPU: z/OS's logger task pays IBM's z14 figure for each write there
    assert writer.splitlines()[0].startswith("log writer")
    assert {line.split()[0]: line.split()[1:] for line in writer.splitlines()[1:]}["z14-3cp"] == ["1.5", "28"]
    own = tmp_path / "own.toml"
    own.write_text('[slowrestart]\nbase = "v93-xeon"\ndescription = "x"\nreplay_record_us = 42\n'
                   'reconcile_message_us = 77\n')
    listed = mqlog("hosts", "--file", own)
    assert listed.returncode == 0, listed.stderr
    row = listed.stdout.split("\n\n")[1].splitlines()[1].split()
    assert row[0] == "slowrestart" and row[1:3] == ["42", "77"]
    bad = tmp_path / "hosts.toml"
    bad.write_text('[tiny]\nbase = "v93-xeon"\ncores = 0\n')
    one_line_error(mqlog("hosts", "--file", bad), "hosts.toml", "[tiny]", "'cores'", "[1, 4096]")
    one_line_error(mqlog("run", "--platform", "reference", "--workload", "putget-pairs", "--host", "laptop"),
                   "--host", "unknown host profile 'laptop'", "v93-xeon")


def test_the_host_is_in_the_metrics_and_moves_them():
    runs = {}
    for host in ("v93-xeon", "v91-xeon"):
        out = mqlog("run", "--platform", "distributed", "--workload", "requester-responder",
                    *sets("requester-responder"), "--host", host, "--json")
        assert out.returncode == 0, out.stderr
        runs[host] = json.loads(out.stdout)
    assert runs["v91-xeon"]["host"] == "v91-xeon" and runs["v91-xeon"]["host_cores"] == 24
    assert runs["v93-xeon"]["host"] == "v93-xeon" and runs["v93-xeon"]["host_cores"] == 32
    assert runs["v91-xeon"]["round_trips"] < runs["v93-xeon"]["round_trips"]  # slower calls


def test_a_user_host_profile_is_kept_in_run_json_for_restart(tmp_path):
    """run.json names the host (a file by its absolute path), so a restart of the saved run
    builds the queue manager on that host from any directory; a run.json from before the
    host model (no host) restarts on the default one."""
    profile = tmp_path / "mine.toml"
    profile.write_text('[two]\nbase = "v91-xeon"\ncores = 2\n')
    out = mqlog("run", "--platform", "reference", "--workload", "putget-pairs", *sets("putget-pairs"),
                "--host", f"{profile}:two", "--crash-after-writes", "20", "--out", tmp_path / "run")
    assert out.returncode == 0, out.stderr
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    assert run["host"] == f"{profile.resolve()}:two"
    assert json.loads((tmp_path / "run" / "metrics.json").read_text())["host_cores"] == 2
    shutil.copytree(tmp_path / "run", tmp_path / "old")
    assert mqlog("restart", tmp_path / "run", "--verify", "--json").returncode == 0
    profile.unlink()  # the restart does load the host the run named
    one_line_error(mqlog("restart", tmp_path / "run"), "mine.toml", "cannot read host profile file")
    del run["host"]
    (tmp_path / "old" / "run.json").write_text(json.dumps(run))
    restarted = mqlog("restart", tmp_path / "old", "--verify", "--json")
    assert restarted.returncode == 0, restarted.stderr


def test_nonpersistent_requester_responder_finishes_and_logs_nothing():
    out = mqlog("run", "--platform", "reference", "--workload", "requester-responder", *sets("requester-responder"),
                "--set", "workload.persistent=false", "--json")
    m = json.loads(out.stdout)
    assert m["round_trips"] > 100 and m["virtual_s"] == pytest.approx(0.05, rel=0.01)
    assert m["log_records"] < 20  # only checkpoints and queue definitions


@pytest.mark.parametrize("rate", [20, 200])
def test_requester_responder_honours_rate_and_duration(rate):
    out = mqlog("run", "--platform", "reference", "--workload", "requester-responder", "--set", "workload.requesters=4",
                "--set", "workload.responders=2", "--set", f"workload.rate={rate}", "--set", "workload.duration=5",
                "--json")
    m = json.loads(out.stdout)
    expected = rate * 5
    assert abs(m["round_trips"] - expected) < 4 * expected ** 0.5 + 2  # Poisson arrivals
    assert m["virtual_s"] < 5.1


def test_a_paced_requester_whose_round_trip_runs_past_the_duration_just_stops():
    # Four paced requesters on two pairs at 2,000/s for 0.4 s: a round trip that ends after the
    # duration must end that requester, not ask SimPy to wait a negative time (a traceback).
    out = mqlog("run", "--platform", "distributed", "--workload", "requester-responder",
                "--set", "workload.requesters=4", "--set", "workload.responders=4", "--set", "workload.queue_pairs=2",
                "--set", "workload.rate=2000", "--set", "workload.duration=0.4", "--set", "workload.message_size=1024",
                "--json")
    assert out.returncode == 0, out.stderr
    m = json.loads(out.stdout)
    assert m["round_trips"] > 0 and m["workload_s"] >= 0.4


@pytest.mark.parametrize("crash", [["--crash-after-writes", "0"], ["--crash-after-writes", "2"], ["--crash-at", "0"]])
def test_a_crash_before_the_first_checkpoint_restarts_to_nothing_and_writes_nothing(tmp_path, crash):
    out = mqlog("run", "--platform", "reference", "--workload", "putget-pairs", *crash, "--out", tmp_path / "r")
    assert out.returncode == 0
    before = sorted((p.name, p.stat().st_size) for p in (tmp_path / "r" / "qm").iterdir())
    restarted = mqlog("restart", tmp_path / "r", "--verify", "--json")
    assert restarted.returncode == 0, restarted.stderr
    report = json.loads(restarted.stdout)
    assert report["committed_missing"] == 0 and "never created" in report["messages"][0]
    assert sorted((p.name, p.stat().st_size) for p in (tmp_path / "r" / "qm").iterdir()) == before


def test_a_missing_log_is_an_error_not_an_empty_recovery(tmp_path):
    assert mqlog("run", "--platform", "reference", "--workload", "putget-pairs", *sets("putget-pairs"),
                 "--out", tmp_path).returncode == 0
    (tmp_path / "qm" / "reference.log").unlink()
    one_line_error(mqlog("restart", tmp_path), "reference.log", "checkpoint")


def test_out_that_cannot_be_a_directory_is_a_one_line_error(tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("x")
    one_line_error(mqlog("run", "--platform", "reference", "--workload", "putget-pairs", "--out", afile / "sub"),
                   "--out", "afile")
    one_line_error(mqlog("run", "--platform", "reference", "--workload", "putget-pairs", "--out", ""), "--out")


def test_config_checks_parameters_against_each_other():
    one_line_error(mqlog("config", "--platform", "reference", "--set", "log.buffer_pages=10",
                         "--set", "log.write_threshold_pages=20"), "log.write_threshold_pages", "log.buffer_pages")
