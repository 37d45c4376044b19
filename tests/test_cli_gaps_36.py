"""Issue 36's smaller bullets, through the real command line: a target rate the run could not
reach is said in its summary; ``print --summary`` lists the incomplete units by default, as
CSQ1LOGP's summary does; ``history`` shows a killed run's workload and each restart's time."""

from __future__ import annotations

import json

from test_cli_run import mqlog, one_line_error

RATE = ("run", "--platform", "distributed", "--workload", "requester-responder", "--set", "workload.duration=0.2")


def test_a_target_rate_the_run_could_not_reach_is_said_in_the_summary():
    slow = mqlog(*RATE, "--set", "workload.rate=5000", "--device", "nfs3")
    assert slow.returncode == 0, slow.stderr
    line = next(x for x in slow.stdout.splitlines() if x.strip().startswith("target rate"))
    assert "5,000 round trips/s, achieved" in line and "NOT REACHED" in line
    reached = json.loads(mqlog(*RATE, "--set", "workload.rate=500", "--json").stdout)["target_rate"]
    assert reached["target_per_s"] == 500 and reached["reached"]
    missed = json.loads(mqlog(*RATE, "--set", "workload.rate=5000", "--device", "nfs3", "--json").stdout)
    assert not missed["target_rate"]["reached"] and missed["target_rate"]["achieved_per_s"] < 1000
    assert json.loads(mqlog(*RATE, "--json").stdout)["target_rate"] is None  # unpaced: no target
    assert "target rate" not in mqlog(*RATE).stdout


def test_print_summary_lists_the_incomplete_units_by_default(tmp_path):
    d = tmp_path / "z"
    assert mqlog("run", "--platform", "zos", "--workload", "long-uow", "--set", "workload.duration=0.1",
                 "--crash-at", "0.05", "--out", d).returncode == 0
    text = mqlog("print", d, "--summary", "only").stdout
    units = [line for line in text.splitlines() if line.startswith("UR URID(")]
    assert units and all("STATUS(INFLIGHT)" in u for u in units), units
    assert "SUMMARY(ONLY) STATUS(INCOMPLETE)" in text
    everything = json.loads(mqlog("print", d, "--summary", "only", "--status", "all", "--json").stdout)
    assert {r["status"] for r in everything["summary"]} == {"INFLIGHT", "COMMITTED"}
    committed = json.loads(mqlog("print", d, "--summary", "only", "--status", "committed", "--json").stdout)
    assert {r["status"] for r in committed["summary"]} == {"COMMITTED"}
    assert committed["counts"] == everything["counts"]  # the counts are of every unit
    one_line_error(mqlog("print", d, "--summary", "only", "--status", "finished"), "--status", "'finished'")


def test_history_shows_a_killed_runs_workload_and_each_restarts_time(tmp_path):
    from test_cli_interrupt import _signalled
    import signal

    d = tmp_path / "run"
    assert _signalled(d, signal.SIGINT)[0] == 130
    restart = json.loads(mqlog("restart", d, "--json").stdout)
    text = mqlog("history", d).stdout.splitlines()
    run_row = next(line.split() for line in text if line.split()[:2] == ["1", "run"])
    assert run_row[2:5] == ["requester-responder", "0", "-"] and "killed" in run_row
    restart_row = next(line.split() for line in text if line.split()[:2] == ["2", "restart"])
    assert restart_row[4] == f"{restart['restart_virtual_s']:.6f}" and "restarted" in restart_row
    assert any(line.strip().startswith(f"restart {restart['restart_virtual_s']:.6f} virtual s: "
                                       f"{restart['records_replayed']:,} records replayed") for line in text)
    entries = json.loads(mqlog("history", d, "--json").stdout)["history"]
    assert entries[1]["restart_s"] == restart["restart_virtual_s"]
