"""`mqlog run / restart / workloads / config` through the real entry point, and the metrics schema they share."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys

import pytest

#: small settings per built-in so that each run takes well under a second
SMALL = {
    "requester-responder": ["workload.requesters=3", "workload.responders=3", "workload.queue_pairs=2",
                            "workload.duration=0.05"],
    "putget-pairs": ["workload.pairs=3", "workload.messages_per_pair=40"],
    "putget": ["workload.apps=3", "workload.messages=40"],
    "long-uow": ["workload.background=2", "workload.duration=0.05"],
    "log-fill": ["workload.queues=3", "workload.messages=300", "workload.transactions=20"],
    "deep-queue": ["workload.queues=2", "workload.depth=300", "workload.then_messages=20"],
}
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


def mqlog(*args):
    return subprocess.run([sys.executable, "-m", "mqlog", *map(str, args)], capture_output=True, text=True,
                          timeout=300)


def kill_mqlog_when(args, ready) -> None:
    """Start ``mqlog ARGS`` and kill -9 it as soon as ``ready()`` is true (polled): the first
    kill -9 experiment an MQ person tries. The deadline is a safeguard against a hang, not a
    timing assertion."""
    import signal
    import time

    proc = subprocess.Popen([sys.executable, "-m", "mqlog", *map(str, args)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while not ready():
            assert proc.poll() is None, "the run ended before it could be killed"
            assert time.monotonic() < deadline
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def sets(workload):
    return [x for item in SMALL[workload] for x in ("--set", item)]


def one_line_error(out, *words):
    assert out.returncode == 2, (out.returncode, out.stdout, out.stderr)
    assert "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) <= 3  # click's usage line, hint and the error
    for word in words:
        assert word in out.stderr, (word, out.stderr)


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


def test_distributed_crash_restart_verify_with_real_extents_and_amq_messages(tmp_path):
    out = mqlog("run", "--platform", "distributed", "--workload", "putget-pairs", "--set", "workload.pairs=3",
                "--set", "workload.messages_per_pair=300", "--set", "log.LogFilePages=64",
                "--set", "log.LogWriteIntegrity=SingleWrite", "--crash-after-writes", "400", "--out", tmp_path, "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["crashed"]
    names = sorted(p.name for p in (tmp_path / "qm").iterdir())
    assert "amqhlctl.lfh" in names and "S0000000.LOG" in names
    assert (tmp_path / "qm" / "S0000000.LOG").stat().st_size == 64 * 4096
    restarted = mqlog("restart", tmp_path, "--verify", "--json")
    assert restarted.returncode == 0, restarted.stderr
    report = json.loads(restarted.stdout)
    assert report["committed_missing"] == report["uncommitted_present"] == 0
    assert "AMQ7229I" in (tmp_path / "AMQERR01.LOG").read_text()


def test_distributed_long_uow_is_rolled_back_at_the_80_percent_mark(tmp_path):
    """IBM MQ's documented AMQ7469 behaviour: a long-lived unit of work in a busy log is rolled back once the
    head-to-tail limit is hit; its application is told MQRC_BACKED_OUT (2003); AMQ7469."""
    out = mqlog("run", "--platform", "distributed", "--workload", "long-uow", "--set", "workload.duration=0.3",
                "--set", "workload.background=4", "--set", "log.LogFilePages=64", "--out", tmp_path, "--json")
    assert out.returncode == 0, out.stderr
    m = json.loads(out.stdout)
    assert m["uows_rolled_back"] >= 1 and m["applications_backed_out"] >= 1
    assert m["active_log_used_bytes_max"] < m["active_log_capacity_bytes"]  # it never filled
    assert "AMQ7469" in (tmp_path / "AMQERR01.LOG").read_text()
    restarted = json.loads(mqlog("restart", tmp_path, "--verify", "--json").stdout)
    assert restarted["committed_missing"] == restarted["uncommitted_present"] == 0


@pytest.mark.parametrize("logtype", ["CIRCULAR", "LINEAR"])
def test_qmstatus_and_dump_describe_the_distributed_log_on_disk(tmp_path, logtype):
    out = mqlog("run", "--platform", "distributed", "--workload", "putget-pairs", "--set", "workload.pairs=3",
                "--set", "workload.messages_per_pair=600", "--set", "log.LogFilePages=64",
                "--set", f"log.LogType={logtype}", "--set", "log.LogPrimaryFiles=4", "--out", tmp_path, "--json")
    assert out.returncode == 0, out.stderr
    metrics = json.loads(out.stdout)
    status = json.loads(mqlog("qmstatus", tmp_path, "--json").stdout)
    assert (status["LOGPRIM"], status["LOGSEC"], status["LOGEXTSZ"], status["LOGTYPE"]) == (4, 2, 64, logtype)
    on_disk = {p.name for p in (tmp_path / "qm").iterdir()}
    assert status["CURRLOG"] in on_disk and status["RECLOG"] in on_disk
    assert status["RECLOG"] <= status["CURRLOG"] or logtype == "CIRCULAR"
    assert 0 < status["RECSZ"] <= 4 * 64 * 4096 / 1e6 * 1.25
    assert (status["MEDIALOG"] != "") == (logtype == "LINEAR")
    dump = json.loads(mqlog("dump", tmp_path, "--json").stdout)
    assert (dump["logactive"], dump["loginactive"]) == (4, 2)
    assert set(dump["filenum"]) <= on_disk and dump["FileCount"] == len(dump["filenum"])
    for key in ("staLogicalBytes", "staPhysicalBytes", "staLogicalWrites", "staPhysicalWrites"):
        assert dump[key] == metrics[key.replace("sta", "").replace("Logical", "logical_").replace(
            "Physical", "physical_").lower()]
    assert dump["WriteSizeMax"] == metrics["write_size_max_bytes"] and dump["logBufSz"] == 512
    assert all(name.endswith(".LOG") for name in dump["WorstWriteByFile"])
    text = mqlog("qmstatus", tmp_path)
    assert f"LOGTYPE({logtype})" in text.stdout
    # the resource monitor's DISK/Log figures, in the run's metrics
    assert metrics["platform_log_bytes_max"] == 6 * 64 * 4096
    assert metrics["platform_log_physical_bytes_written"] == metrics["physical_bytes"]
    assert metrics["platform_log_slowest_write_since_restart_us"] == metrics["write_time_max_us"]
    assert 0 < metrics["platform_log_bytes_in_use"] <= metrics["platform_log_bytes_max"]


def test_qmstatus_on_a_reference_run_is_a_one_line_error(tmp_path):
    assert mqlog("run", "--platform", "reference", "--workload", "putget-pairs", *sets("putget-pairs"),
                 "--out", tmp_path).returncode == 0
    one_line_error(mqlog("qmstatus", tmp_path), "distributed")


def test_distributed_prepared_long_uow_is_rolled_forward_not_backed_out(tmp_path):
    """The other half of AMQ7469: a prepared unit of work is re-logged at the head (AMQ7469)
    and stays in doubt; restart finds it still in doubt."""
    out = mqlog("run", "--platform", "distributed", "--workload", "long-uow", "--set", "workload.duration=0.3",
                "--set", "workload.background=4", "--set", "workload.prepared=true",
                "--set", "log.LogFilePages=64", "--out", tmp_path, "--json")
    assert out.returncode == 0, out.stderr
    m = json.loads(out.stdout)
    assert m["uows_rolled_forward"] >= 1 and m["uows_rolled_back"] == 0
    assert "rolled forward" in (tmp_path / "AMQERR01.LOG").read_text()
    restarted = json.loads(mqlog("restart", tmp_path, "--verify", "--json").stdout)
    assert restarted["uows_indoubt"] == 1
    assert restarted["committed_missing"] == restarted["uncommitted_present"] == 0


def test_media_image_archive_and_recovery_of_a_damaged_queue_from_the_command_line(tmp_path):
    out = mqlog("run", "--platform", "distributed", "--workload", "putget-pairs", "--set", "workload.pairs=2",
                "--set", "workload.messages_per_pair=300", "--set", "log.LogFilePages=64",
                "--set", "log.LogType=LINEAR", "--set", "log.LogManagement=Archive", "--out", tmp_path)
    assert out.returncode == 0, out.stderr
    before = json.loads(mqlog("qmstatus", tmp_path, "--json").stdout)
    # the queues were empty at shutdown, and MQ images empty queues at every shutdown
    assert before["MEDIALOG"] == before["RECLOG"] != "S0000000.LOG"
    imaged = mqlog("rcdmqimg", tmp_path, "PAIR.00000", "PAIR.00001", "--json")
    assert imaged.returncode == 0, imaged.stderr
    after = json.loads(imaged.stdout)
    assert set(after["imaged"]) == {"PAIR.00000", "PAIR.00001"} and after["MEDIALOG"] >= before["MEDIALOG"]
    assert "AMQ7468" in (tmp_path / "AMQERR01.LOG").read_text()
    archived = json.loads(mqlog("set-log-archived", tmp_path, "S0000000.LOG", "--json").stdout)
    assert archived["archived"] == ["S0000000.LOG"]
    assert json.loads(mqlog("qmstatus", tmp_path, "--json").stdout)["REUSESZ"] > 0
    # the queue's file is destroyed; restart re-creates it from the image and the log
    (tmp_path / "qm" / "PAIR.00000.mqq").write_bytes(b"\xff" * 2048)
    restarted = mqlog("restart", tmp_path, "--verify", "--json")
    assert restarted.returncode == 0, restarted.stderr
    report = json.loads(restarted.stdout)
    assert report["queues_recreated"] == 1 and report["committed_missing"] == 0
    assert "AMQ7472" in (tmp_path / "AMQERR01.LOG").read_text()
    redone = json.loads(mqlog("rcrmqobj", tmp_path, "PAIR.00001", "--json").stdout)
    assert redone["damaged"] == [] and "PAIR.00001" in redone["recreated"]
    one_line_error(mqlog("rcdmqimg", tmp_path, "NO.SUCH.QUEUE"), "2085", "NO.SUCH.QUEUE")
    one_line_error(mqlog("set-log-archived", tmp_path, "S0000099.LOG"), "not recognized")


@pytest.mark.parametrize("args, words", [
    (["rcdmqimg", "{d}", "PAIR.00000"], ["LINEAR"]),
    (["rcrmqobj", "{d}", "PAIR.00000"], ["LINEAR"]),
    (["set-log-archived", "{d}", "S0000000.LOG"], ["LogManagement=Archive"]),
])
def test_media_commands_on_a_circular_log_give_a_one_line_error(tmp_path, args, words):
    out = mqlog("run", "--platform", "distributed", "--workload", "putget-pairs", "--set", "workload.pairs=2",
                "--set", "workload.messages_per_pair=20", "--out", tmp_path)
    assert out.returncode == 0, out.stderr
    one_line_error(mqlog(*[a.format(d=tmp_path) for a in args]), *words)


def test_zos_rba_limit_ends_the_run_abnormally_and_conversion_lets_it_restart(tmp_path):
    """IBM MQ for z/OS, "Larger log Relative Byte Address": at the 6-byte termination RBA the queue manager ends (00D10257); the files
    are left; after converting the BSDS to 8-byte RBAs it restarts and verifies."""
    out = mqlog("run", "--platform", "zos", "--workload", "putget-pairs", "--set", "workload.pairs=1",
                "--set", "workload.messages_per_pair=200", "--set", "log.RBA8=NO",
                "--set", "log.STARTRBA=0xFFF7FFFF0000", "--set", "log.ACTIVE_LOG_CIS=16", "--out", tmp_path, "--json")
    assert out.returncode == 0, out.stderr
    metrics = json.loads(out.stdout)
    assert "00D10257" in metrics["abnormal_end"] and metrics["crashed"]
    log = (tmp_path / "CSQMSTR.JESMSGLG").read_text()
    assert "CSQJ032E" in log and "00D10257" in log
    converted = mqlog("convert-rba", tmp_path)
    assert converted.returncode == 0 and "8-byte" in converted.stdout
    assert json.loads((tmp_path / "run.json").read_text())["log"]["RBA8"] == "YES"
    restarted = json.loads(mqlog("restart", tmp_path, "--verify", "--json").stdout)
    assert restarted["committed_missing"] == restarted["uncommitted_present"] == 0
    again = mqlog("convert-rba", tmp_path)
    assert again.returncode == 0 and "nothing to do" in again.stdout


def test_zos_utilities_from_the_command_line(tmp_path):
    out = mqlog("run", "--platform", "zos", "--workload", "long-uow", "--set", "workload.duration=0.1",
                "--set", "log.ACTIVE_LOG_CIS=16", "--set", "log.COMPLOG=RLE",
                "--set", "workload.payload=padded-records", "--out", tmp_path, "--json")
    assert out.returncode == 0, out.stderr
    metrics = json.loads(out.stdout)
    assert metrics["shunts"] >= 1 and metrics["platform_QJSTCMPCOMP"] < metrics["platform_QJSTCMPUNCMP"]
    bsds = json.loads(mqlog("bsds", tmp_path, "--json").stdout)
    stats = json.loads(mqlog("stats", tmp_path, "--json").stdout)
    assert stats["QJSTLLCP"] == metrics["checkpoints"] and bsds
    summary = mqlog("print", tmp_path, "--summary", "only")
    assert summary.returncode == 0 and "BACKED OUT" in summary.stdout
    one_line_error(mqlog("print", tmp_path, "--rba-start", "zz"), "zz")
    one_line_error(mqlog("bsds", tmp_path / "qm"), "run.json")


def test_a_run_directory_in_use_is_refused_not_shared(tmp_path):
    """Two commands writing one run directory at once would interleave their writes into one
    log: while one holds DIR, a second run (or restart) into it refuses, and nothing of DIR
    changes; once the first is done, the directory is usable again."""
    from mqlog.rundir import LOCK_FILE, locked

    out = tmp_path / "run"
    with locked(out):
        second = mqlog("run", "--platform", "distributed", "--workload", "putget-pairs", *sets("putget-pairs"),
                       "--out", out)
        assert second.returncode == 2 and "in use by another mqlog command" in second.stderr
        assert f"process {os.getpid()}" in second.stderr and "Traceback" not in second.stderr
        assert sorted(p.name for p in out.iterdir()) == [LOCK_FILE]  # nothing written
    first = mqlog("run", "--platform", "distributed", "--workload", "putget-pairs", *sets("putget-pairs"),
                  "--crash-after-writes", "30", "--out", out)
    assert first.returncode == 0, first.stderr
    with locked(out):
        busy = mqlog("restart", out, "--verify")
        assert busy.returncode == 2 and "in use" in busy.stderr
    assert mqlog("restart", out, "--verify").returncode == 0


def test_restart_mode_chooses_mq_911_or_the_restart_before_it(tmp_path):
    """Restart from MQ 9.1.1 or before it: the user chooses; the legacy restart loads the
    queues recovery needs one by one, pays a file-system call for each replayed record that
    changes a queue and reads the log a page and a file-system call at a time, so on slow
    storage it takes longer, and recovers the same."""
    out = mqlog("run", "--platform", "distributed", "--workload", "requester-responder",
                "--set", "workload.duration=0.2", "--device", "nfs3", "--crash-at", "0.15", "--out", tmp_path / "a")
    assert out.returncode == 0, out.stderr
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    modern = mqlog("restart", tmp_path / "a", "--verify", "--json")
    legacy = mqlog("restart", tmp_path / "b", "--verify", "--json", "--restart-mode", "legacy")
    assert modern.returncode == 0 and legacy.returncode == 0, modern.stderr + legacy.stderr
    modern, legacy = json.loads(modern.stdout), json.loads(legacy.stdout)
    assert legacy["records_replayed"] == modern["records_replayed"] > 0
    assert legacy["queues_loaded"] == modern["queues_loaded"]
    assert legacy["queues_loaded"] + legacy["queues_deferred"] > 1
    # requests and replies got soon after they were put: 9.1.1 holds them in the queue buffers
    # and makes no queue-file call at all, legacy one per record that changes a queue
    assert legacy["restart_phases"]["replay_queue_files_s"] > 0 == modern["restart_phases"]["replay_queue_files_s"]
    assert legacy["restart_phases"]["replay_s"] > 2 * modern["restart_phases"]["replay_s"]
    one_line_error(mqlog("restart", tmp_path / "a", "--restart-mode", "9.2"), "--restart-mode")


def test_the_command_line_offers_exactly_the_restart_modes_the_core_has():
    """The CLI spells the choices out (importing the core at start-up would slow every
    command): they must stay the core's."""
    from mqlog import cli
    from mqlog.core.qm.config import RESTART_MODES

    for command in (cli.restart_cmd, cli.compare_cmd, cli.torture_cmd):
        (option,) = [p for p in command.params if p.name == "restart_mode"]
        assert tuple(option.type.choices) == RESTART_MODES
