"""Every run's metrics in a run directory are kept (issue 22): ``mqlog run --in`` used to
overwrite metrics.json, so after crash -> restart -> carry on the first run's numbers were
gone. Now the earlier run's metrics.json is copied to metrics-N.json (N: its place in
run.json's history, whose entry names the file) before the carried-on run writes its own, and
``mqlog history DIR`` shows each run's headline numbers (--json: all of them). Through the
command line."""

from __future__ import annotations

import json

from clikit import mqlog, one_line_error
from test_restart_settings import LONG_UOW, ok, run_json, verified


def history(directory):
    return json.loads(ok(mqlog("history", directory, "--json")).stdout)["history"]


def printed(out):
    """The metrics a ``run --json`` printed, as the run directory keeps them (``run --in``
    adds its restart's report, which is the restart's, not the run's; every run adds how far
    to trust its figures and its target rate, which are read from the metrics)."""
    m = json.loads(ok(out).stdout)
    for derived in ("restart", "provenance", "target_rate"):
        m.pop(derived, None)
    return m


def test_run_crash_carry_on_keeps_every_runs_metrics_as_each_printed_them(tmp_path):
    d = tmp_path / "qm"
    first = printed(mqlog("run", "--platform", "distributed", *LONG_UOW, "--crash-at", "0.03", "--out", d, "--json"))
    verified(d, "--set", "log.LogPrimaryFiles=5")
    second = printed(mqlog("run", "--in", d, "--crash-at", "0.02", "--json"))
    third = printed(mqlog("run", "--in", d, "--set", "workload.duration=0.01", "--json"))
    entries = history(d)
    assert [e["command"] for e in entries] == ["run", "restart", "run --in", "run --in"]
    assert [e["metrics"] for e in entries] == [first, None, second, third]
    assert [e["metrics_file"] for e in entries] == ["metrics-0.json", None, "metrics-2.json", "metrics.json"]
    assert entries[1]["changed"] == {"LogPrimaryFiles": [3, 5]}
    # metrics.json stays the latest run's, for stats, report and the Spark readers
    assert json.loads((d / "metrics.json").read_text()) == third
    # the text shows each run's headline numbers, as that run printed them, and what each
    # restart changed
    text = ok(mqlog("history", d)).stdout.splitlines()
    rows = {line.split()[0]: line.split() for line in text[2:] if line.split()[0].isdigit()}
    assert [rows[n][1] for n in "1234"] == ["run", "restart", "run", "run"]
    assert "LogPrimaryFiles 3 -> 5" in text[text.index(next(t for t in text if t.split()[:2] == ["2", "restart"])) + 1]
    for n, m, name in (("1", first, "metrics-0.json"), ("3", second, "metrics-2.json"), ("4", third, "metrics.json")):
        row = rows[n]
        assert row[-1] == name and row[-2] == str(m["physical_bytes"]) and row[-3] == str(m["commits"])
        assert f"{m['messages_put']} / {m['messages_got']}" in " ".join(row)
        assert f"{m['virtual_s']:.6f}" in row
    assert "crashed" in rows["1"] and "crashed" in rows["3"] and "controlled" in rows["4"]
    verified(d)


def test_a_crash_during_the_restart_of_run_in_keeps_the_earlier_runs_metrics(tmp_path):
    d = tmp_path / "qm"
    first = printed(mqlog("run", "--platform", "distributed", *LONG_UOW, "--crash-at", "0.03", "--out", d, "--json"))
    # the crash comes before the workload's first call: run --in's started hook never runs
    second = printed(mqlog("run", "--in", d, "--crash-after-writes", "1", "--json"))
    assert second["crashed"] and second["messages_put"] == 0
    assert [e["metrics"] for e in history(d)] == [first, second]
    verified(d)


def test_a_directory_from_before_metrics_were_kept_still_loads_and_keeps_them_from_now_on(tmp_path):
    d = tmp_path / "qm"
    first = printed(mqlog("run", "--platform", "distributed", *LONG_UOW, "--crash-at", "0.03", "--out", d, "--json"))
    verified(d)
    run = run_json(d)  # as saved before: no history entry names a metrics file
    for entry in run["history"]:
        entry.pop("metrics", None)
    (d / "run.json").write_text(json.dumps(run))
    entries = history(d)
    assert [e["metrics_file"] for e in entries] == ["metrics.json", None] and entries[0]["metrics"] == first
    # and older still: no history at all (the run alone)
    del run["history"]
    (d / "run.json").write_text(json.dumps(run))
    assert [e["metrics"] for e in history(d)] == [first]
    second = printed(mqlog("run", "--in", d, "--json"))
    assert [e["metrics"] for e in history(d)] == [first, second]
    assert (d / "metrics-0.json").is_file()


def test_a_history_naming_a_missing_or_foreign_metrics_file_is_refused_with_the_file(tmp_path):
    d = tmp_path / "qm"
    ok(mqlog("run", "--platform", "distributed", *LONG_UOW, "--crash-at", "0.03", "--out", d))
    ok(mqlog("run", "--in", d))
    (d / "metrics-0.json").unlink()
    one_line_error(mqlog("history", d), "metrics-0.json", "missing", "history entry 1")
    run = run_json(d)
    run["history"][0]["metrics"] = "../../etc/passwd"
    (d / "run.json").write_text(json.dumps(run))
    one_line_error(mqlog("history", d, "--json"), "run.json", "history entry 1", "not a metrics file")


def test_a_carried_on_run_stopped_by_its_check_keeps_the_metrics_where_they_were(tmp_path):
    d = tmp_path / "qm"
    first = printed(mqlog("run", "--platform", "distributed", "--workload", "deep-queue", "--set", "workload.queues=1",
                          "--set", "workload.depth=20", "--set", "workload.then_messages=2", "--out", d, "--json"))
    journal = json.loads((d / "journal.json").read_text())
    # one message the queue holds, as if its put had never committed: the check fails
    msg_id = next(i for i, (_, persistent, put, got) in journal["messages"].items()
                  if persistent and put == "committed" and got == "")
    journal["messages"][msg_id][2] = "pending"
    (d / "journal.json").write_text(json.dumps(journal))
    assert mqlog("run", "--in", d).returncode == 1
    entries = history(d)
    assert [e["metrics"] for e in entries] == [first, None] and "stopped" in entries[1]
    assert not (d / "metrics-0.json").exists()
