"""IBM's restart-time experiments, as a user writes them on the command line (issue 21):
log-fill's ``commit=never``, the ``[qmgr]`` section (``--set qmgr.MAXUMSGS=N``, a spec's
``[qmgr]`` table, the metrics' ``config.qmgr``, run.json), ``run --crash-at end`` and the
busy queue manager killed at a chosen time, each through the real ``mqlog`` command line."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from mqlog.cli import cli, main

#: IBM's log-fill experiment at a small scale: 3 held messages, 7 units taking 3000 messages
NEVER = ["--workload", "log-fill", "--set", "workload.queues=3", "--set", "workload.transactions=7",
         "--set", "workload.messages=3000", "--set", "workload.commit=never"]
#: a small requester-responder that ends by itself well inside a second
SMALL_RR = ["--workload", "requester-responder", "--set", "workload.requesters=2", "--set", "workload.responders=2",
            "--set", "workload.queue_pairs=2", "--set", "workload.duration=0.05"]


def invoke(*args) -> dict:
    """``mqlog ARGS --json``'s JSON object (the command must succeed)."""
    out = CliRunner().invoke(cli, [*map(str, args), "--json"], catch_exceptions=False)
    assert out.exit_code == 0, out.output
    return json.loads(out.stdout)


def fails(capsys, *args) -> str:
    """The one line ``mqlog ARGS`` prints on stderr as it refuses them (exit 2, no traceback)."""
    assert main([*map(str, args)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    return err


@pytest.mark.parametrize("platform", ["distributed", "zos"])
def test_commit_never_leaves_every_unit_in_flight_at_the_end_and_restart_backs_them_all_out(tmp_path, platform):
    out = tmp_path / "run"
    m = invoke("run", "--platform", platform, *NEVER, "--crash-at", "end", "--out", out)
    assert m["crashed"] is True
    assert m["commits"] == 0 and m["backouts"] == 0 and m["messages_put"] == 3 + 3000
    # the plug was pulled the moment the last call returned: no shutdown ran after it
    assert m["virtual_s"] == m["workload_s"]
    report = invoke("restart", out, "--verify")
    # every filler unit and every holder was in flight, and each is backed out
    assert report["uows_backed_out"] == 7 + 3
    assert report["uows_committed"] == 0 and report["uows_indoubt"] == 0
    assert report["committed_missing"] == report["uncommitted_present"] == report["duplicates"] == 0


def test_commit_never_spreads_the_messages_round_robin_one_unit_each(tmp_path):
    from mqlog.core.format.records import Put
    from mqlog.core.log.reader import scan
    from mqlog.rundir import open_platform

    out = tmp_path / "run"
    invoke("run", "--platform", "reference", *NEVER, "--set", "workload.message_size=64", "--crash-at", "end",
           "--out", out)
    _, _, platform = open_platform(out)
    try:
        puts = [r for _, r in scan(platform.space, 0)[0] if isinstance(r, Put)]
    finally:
        platform.space.storage.close()
    holders, fillers = puts[:3], puts[3:]
    # (the crash lost the tail never forced: nothing forces a unit that never commits)
    assert 2900 < len(fillers) <= 3000 and len({r.uow for r in holders} | {r.uow for r in fillers}) == 3 + 7
    # message i went to unit i % 7: the units take turns
    order = list(dict.fromkeys(r.uow for r in fillers))
    assert [r.uow for r in fillers] == [order[i % 7] for i in range(len(fillers))]


def test_commit_true_and_false_are_the_runs_they_were(tmp_path):
    # the same spec whether commit comes as a TOML boolean, TOML text or a --set word
    for word, toml in (("true", "true"), ("false", '"false"')):
        spec = tmp_path / f"{word}.toml"
        spec.write_text(f'workload = "log-fill"\n[params]\nmessages = 400\ntransactions = 7\ncommit = {toml}\n')
        from_file = invoke("run", "--platform", "distributed", "--workload", spec)
        from_set = invoke("run", "--platform", "distributed", "--workload", "log-fill", "--set", "workload.messages=400",
                          "--set", "workload.transactions=7", "--set", f"workload.commit={word}")
        assert from_file["fingerprint"] == from_set["fingerprint"]
        assert from_file["params"]["commit"] is (word == "true")
        assert (from_set["commits"], from_set["backouts"]) == ((7, 0) if word == "true" else (0, 7))


FILL_ONE_UNIT = ["--workload", "log-fill", "--set", "workload.queues=1", "--set", "workload.transactions=1",
                 "--set", "workload.messages=10001", "--set", "workload.message_size=64", "--set", "workload.commit=never"]


def test_at_the_default_maxumsgs_the_10001st_put_is_refused_and_counted():
    m = invoke("run", "--platform", "distributed", *FILL_ONE_UNIT, "--crash-at", "end")
    assert m["config"]["qmgr"] == {"MAXUMSGS": 10_000, "MAXDEPTH": 5000}
    assert m["messages_put"] == 1 + 10_000  # the holder's, then the unit's up to MAXUMSGS
    # MQRC 2024 told to the application, which went on
    assert m["failed_calls"] == {"MQRC_SYNCPOINT_LIMIT_REACHED": {"reason": 2024, "calls": 1}}


@pytest.mark.parametrize("platform", ["distributed", "zos"])
def test_maxumsgs_raised_lets_one_unit_hold_more_than_10000_messages(tmp_path, platform):
    out = tmp_path / "run"
    fill = [x.replace("workload.messages=10001", "workload.messages=15000") for x in FILL_ONE_UNIT]  # a key once
    m = invoke("run", "--platform", platform, *fill,
               "--set", "qmgr.maxumsgs=20000", "--crash-at", "end", "--out", out)
    assert m["config"]["qmgr"] == {"MAXUMSGS": 20_000, "MAXDEPTH": 5000}
    assert m["messages_put"] == 1 + 15_000 and m["failed_calls"] == {}
    # run.json keeps the attributes, so every later command starts the queue manager with them
    from mqlog.rundir import load_run, run_qm_config

    run = load_run(out)
    assert run.qmgr == {"MAXUMSGS": 20_000, "MAXDEPTH": 5000}
    assert run_qm_config(run, restart_mode="legacy").max_uow_messages == 20_000
    report = invoke("restart", out, "--verify")
    # (less the tail no force had written before the crash, still more than 10,000 in one unit)
    assert report["uows_backed_out"] == 2 and report["messages_reconciled"] > 10_001
    assert report["committed_missing"] == report["uncommitted_present"] == 0


def test_a_spec_files_qmgr_table_and_set_over_it(tmp_path):
    spec = tmp_path / "fill.toml"
    spec.write_text('workload = "log-fill"\n[params]\nmessages = 50\n[qmgr]\nmaxumsgs = 123\nMaxDepth = 77\n')
    m = invoke("run", "--platform", "zos", "--workload", spec)
    assert m["config"]["qmgr"] == {"MAXUMSGS": 123, "MAXDEPTH": 77}
    m = invoke("run", "--platform", "zos", "--workload", spec, "--set", "qmgr.MAXUMSGS=456")
    assert m["config"]["qmgr"] == {"MAXUMSGS": 456, "MAXDEPTH": 77}


def test_bad_qmgr_keys_and_values_are_one_line_naming_them(capsys, tmp_path):
    base = ["run", "--platform", "distributed", "--workload", "log-fill"]
    err = fails(capsys, *base, "--set", "qmgr.MAXMSGS=5")
    assert "qmgr.MAXMSGS" in err and "MAXUMSGS, MAXDEPTH" in err
    err = fails(capsys, *base, "--set", "qmgr.MAXUMSGS=0")
    assert "qmgr.MAXUMSGS=0" in err and "1 to 999999999" in err
    err = fails(capsys, *base, "--set", "qmgr.maxdepth=1000000000")
    assert "qmgr.MAXDEPTH=1000000000" in err and "0 to 999999999" in err
    err = fails(capsys, *base, "--set", "qmgr.MAXUMSGS=lots")
    assert "qmgr.MAXUMSGS='lots'" in err
    spec = tmp_path / "bad.toml"
    spec.write_text('workload = "log-fill"\n[qmgr]\nMAXUMSGS = true\n')
    err = fails(capsys, "run", "--platform", "zos", "--workload", spec)
    assert str(spec) in err and "qmgr.MAXUMSGS" in err
    err = fails(capsys, *base, "--set", "workload.commit=sometimes")
    assert "workload.commit" in err and "true, false or never" in err
    err = fails(capsys, "config", "--platform", "zos", "--set", "qmgr.MAXUMSGS=5")
    assert "log.PARAM=VALUE" in err


def test_crash_at_end_crashes_and_a_time_beyond_the_run_still_does_not(tmp_path, capsys):
    ended = invoke("run", "--platform", "zos", *SMALL_RR, "--crash-at", "end", "--out", tmp_path / "end")
    assert ended["crashed"] is True and ended["virtual_s"] == ended["workload_s"]
    assert json.loads((tmp_path / "end" / "run.json").read_text())["crashed"] is True
    assert invoke("restart", tmp_path / "end", "--verify")["committed_missing"] == 0
    beyond = invoke("run", "--platform", "zos", *SMALL_RR, "--crash-at", "100")
    assert beyond["crashed"] is False and beyond["virtual_s"] > beyond["workload_s"]  # shut down
    err = fails(capsys, "run", "--platform", "zos", *SMALL_RR, "--crash-at", "soon")
    assert "--crash-at" in err and "'end'" in err
    err = fails(capsys, "run", "--platform", "zos", *SMALL_RR, "--crash-at", "-1")
    assert "--crash-at" in err
    err = fails(capsys, "compare", *SMALL_RR, "--crash", "0")
    assert "--crash" in err and "more than 0" in err


def test_the_busy_queue_manager_killed_later_in_a_checkpoint_interval_replays_more(tmp_path):
    busy = ["--platform", "distributed", "--workload", "requester-responder", "--set", "workload.rate=2000",
            "--set", "workload.duration=1", "--set", "workload.requesters=4", "--set", "workload.responders=4"]
    replayed, checkpoints = [], []
    for at in (0.2, 0.5):
        out = tmp_path / f"at-{at}"
        m = invoke("run", *busy, "--crash-at", at, "--out", out)
        assert m["crashed"] is True and m["virtual_s"] == pytest.approx(at)
        checkpoints.append(m["checkpoints"])
        report = invoke("restart", out, "--verify")
        assert report["committed_missing"] == 0
        replayed.append(report["records_replayed"])
    assert checkpoints[0] == checkpoints[1]  # both crashes in one checkpoint interval
    assert replayed[1] > 1.5 * replayed[0] > 0
