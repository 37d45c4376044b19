"""Settings changed at a restart and carrying on after one, through the command line (issue 22,
"MQ's habits"): ``mqlog restart DIR --set log.X=V --device D --host H`` and ``mqlog run --in
DIR``. Every restart a test makes is verified against the application journal: ``restart
--verify``, or ``run --in``'s own check before its workload starts."""

from __future__ import annotations

import json
import shutil

import pytest

from clikit import mqlog, one_line_error

LONG_UOW = ["--workload", "long-uow", "--set", "workload.background=2", "--set", "workload.duration=0.05"]
PUTGET = ["--workload", "putget", "--set", "workload.apps=2", "--set", "workload.messages=30"]


def ok(out):
    assert out.returncode == 0, (out.returncode, out.stdout, out.stderr)
    return out


def verified(directory, *more):
    """``restart DIR --verify [more] --json``: the recovery report, its check passed."""
    report = json.loads(ok(mqlog("restart", directory, "--verify", *more, "--json")).stdout)
    assert report["committed_missing"] == report["uncommitted_present"] == report["duplicates"] == 0
    assert "not_verified" not in report
    return report


def run_json(directory):
    return json.loads((directory / "run.json").read_text())


def journal_ids(directory):
    return set(json.loads((directory / "journal.json").read_text())["messages"])


def incarnation(msg_id: str) -> str:
    # a message id is "AMQ " + the queue manager's name (8) + its incarnation (4 bytes) + a counter
    return msg_id[24:32]


@pytest.mark.parametrize("platform", ["distributed", "zos"])
def test_crash_then_carry_on_then_crash_then_verify_checks_everything(platform, tmp_path):
    d = tmp_path / "qm"
    ok(mqlog("run", "--platform", platform, *LONG_UOW, "--crash-at", "0.03", "--out", d))
    first = journal_ids(d)
    out = json.loads(ok(mqlog("run", "--in", d, "--crash-at", "0.03", "--json")).stdout)
    # the restart before the workload recovered the crash (the long unit of work backed out)
    # and was checked against the journal
    assert out["restart"]["uows_backed_out"] >= 1
    assert out["restart"]["committed_missing"] == out["restart"]["uncommitted_present"] == 0
    assert out["crashed"] and out["messages_put"] > 0 and out["workload"] == "long-uow"
    # the journal now holds the old messages and the new ones, told apart by incarnation
    both = journal_ids(d)
    assert first < both
    assert {incarnation(i) for i in first}.isdisjoint({incarnation(i) for i in both - first})
    run = run_json(d)
    assert [h["command"] for h in run["history"]] == ["run", "run --in"]
    assert run["finished"] and run["journal_complete"] and run["crashed"]
    verified(d)


@pytest.mark.parametrize("platform", ["distributed", "zos"])
def test_carry_on_after_a_clean_end(platform, tmp_path):
    d = tmp_path / "qm"
    ok(mqlog("run", "--platform", platform, *PUTGET, "--out", d))
    text = ok(mqlog("run", "--in", d, "--workload", "long-uow", "--set", "workload.background=2",
                    "--set", "workload.duration=0.02")).stdout
    assert "verify: " in text and "OK" in text
    assert "long-uow on " + platform in text and "ended with a controlled shutdown" in text
    # the restart's messages are in the queue manager's error log once, as after any restart
    error_log = d / json.loads((d / "metrics.json").read_text())["error_log"]
    begins = {"distributed": "AMQ5037I", "zos": "CSQR001I"}[platform]
    assert error_log.read_text().count(begins) == 1
    run = run_json(d)
    assert run["workload"] == "long-uow" and run["params"]["background"] == 2
    assert [h["command"] for h in run["history"]] == ["run", "run --in"]
    verified(d)


def _damage(d):
    """Flip a bit in the middle of a page of the queue manager's first log file (of both copies
    on z/OS, where dual logging would read the other copy); its name. The page is the second,
    or on distributed the first after it that TripleWrite's spare file (amqhlspr.lfh) does not
    hold a copy of: restart rightly repairs a page from its spare copy, and since issue 38 pads
    grouped writes' partial pages the spare's two slots can keep the second page's last image
    to the end of the run (long-uow, crash at 0.03: pages 0 and 1)."""
    qm = d / "qm"
    logs = sorted(p for p in qm.rglob("*") if p.is_file() and p.name in ("S0000000.LOG", "LOGCOPY1.DS01",
                                                                         "LOGCOPY2.DS01"))
    spare = qm / "amqhlspr.lfh"
    held = set()
    if spare.is_file():
        slots = spare.read_bytes()
        held = {slots[o + 8:o + 16] for o in range(0, len(slots), 4096) if slots[o:o + 4] == b"MQLP"}
    page = 1
    if held:  # a page's address is in its header, 8 bytes at offset 8, as in the spare's slots
        data = logs[0].read_bytes()
        while data[page * 4096 + 8:page * 4096 + 16] in held:
            page += 1
        assert data[page * 4096:page * 4096 + 4] == b"MQLP", page  # a written page, read by restart
    for log in logs:
        data = bytearray(log.read_bytes())
        data[page * 4096 + 600] ^= 0x10
        log.write_bytes(bytes(data))
    return logs[0].name


@pytest.mark.parametrize("platform", ["distributed", "zos"])
def test_carry_on_in_a_damaged_directory_is_refused_as_restart_refuses(platform, tmp_path):
    d = tmp_path / "qm"
    ok(mqlog("run", "--platform", platform, *LONG_UOW, "--crash-at", "0.03", "--out", d))
    name = _damage(d)
    before = (d / "run.json").read_bytes()
    restart = mqlog("restart", d, "--verify")
    one_line_error(restart, name)
    carry_on = mqlog("run", "--in", d)
    one_line_error(carry_on, name)
    # the same refusal, with the file and the address
    assert carry_on.stderr.strip().splitlines()[-1] == restart.stderr.strip().splitlines()[-1]
    assert (d / "run.json").read_bytes() == before  # nothing recorded as run


@pytest.mark.parametrize("platform, setting, word", [
    ("distributed", "log.LogFilePages=8192", "LogFilePages"),
    ("distributed", "log.logtype=LINEAR", "LogType"),
    ("zos", "log.ACTIVE_LOG_CIS=2048", "ACTIVE_LOG_CIS"),
    ("zos", "log.twoactv=NO", "TWOACTV"),
])
def test_a_parameter_fixed_at_creation_is_refused_at_restart(platform, setting, word, tmp_path):
    d = tmp_path / "qm"
    ok(mqlog("run", "--platform", platform, *PUTGET, "--out", d))
    before = (d / "run.json").read_bytes()
    for args in (("restart", d, "--verify"), ("run", "--in", d)):
        out = mqlog(*args, "--set", setting)
        one_line_error(out, word, "cannot change at a restart")
    assert (d / "run.json").read_bytes() == before
    verified(d)  # and the queue manager restarts as it was


def test_restart_set_names_follow_run_set_rules(tmp_path):
    d = tmp_path / "qm"
    ok(mqlog("run", "--platform", "distributed", *PUTGET, "--out", d))
    one_line_error(mqlog("restart", d, "--set", "log.LogPrimaryFile=6"), "LogPrimaryFiles")
    one_line_error(mqlog("restart", d, "--set", "log.LogPrimaryFiles=6", "--set", "log.logprimaryfiles=7"),
                   "given twice")
    one_line_error(mqlog("restart", d, "--set", "log.LogPrimaryFiles=600"), "LogPrimaryFiles")
    one_line_error(mqlog("restart", d, "--set", "workload.messages=3"), "log.PARAM=VALUE")
    one_line_error(mqlog("restart", d, "--device", "floppy"), "floppy")
    verified(d)


def test_more_primary_files_at_restart_take_effect(tmp_path):
    d = tmp_path / "qm"
    ok(mqlog("run", "--platform", "distributed", *PUTGET, "--crash-at", "0.01", "--out", d))
    same = shutil.copytree(d, tmp_path / "same")
    report = verified(d, "--set", "log.logprimaryfiles=6")
    assert report["changed"] == {"LogPrimaryFiles": [3, 6]}
    assert run_json(d)["log"]["LogPrimaryFiles"] == 6  # the next command starts it so
    grown = json.loads(ok(mqlog("run", "--in", d, "--json")).stdout)
    kept = json.loads(ok(mqlog("run", "--in", same, "--json")).stdout)
    assert grown["config"]["LogPrimaryFiles"] == 6 and kept["config"]["LogPrimaryFiles"] == 3
    assert grown["active_log_capacity_bytes"] > kept["active_log_capacity_bytes"]
    verified(d)
    verified(same)


def test_a_bigger_output_buffer_at_restart_takes_effect_on_zos(tmp_path):
    d = tmp_path / "qm"
    ok(mqlog("run", "--platform", "zos", *PUTGET, "--set", "log.OUTBUFF=40", "--out", d))
    small = json.loads((d / "metrics.json").read_text())["log_buffer_bytes"]
    out = json.loads(ok(mqlog("run", "--in", d, "--set", "log.outbuff=400", "--json")).stdout)
    assert out["restart"]["changed"] == {"OUTBUFF": [40, 400]}
    assert out["log_buffer_bytes"] > small
    assert run_json(d)["log"]["OUTBUFF"] == 400
    verified(d)


def test_a_slower_device_at_restart_makes_a_longer_restart_and_stays(tmp_path):
    d = tmp_path / "qm"
    ok(mqlog("run", "--platform", "distributed", *LONG_UOW, "--crash-at", "0.03", "--out", d))
    moved = shutil.copytree(d, tmp_path / "moved")
    fast = verified(d)
    slow = verified(moved, "--device", "nfs3")
    assert slow["changed"] == {"device": ["ssd", "nfs3"]}
    assert slow["restart_phases"]["replay_log_read_s"] > fast["restart_phases"]["replay_log_read_s"]
    assert run_json(moved)["device"] == "nfs3" and run_json(d)["device"] == "ssd"
    carried = json.loads(ok(mqlog("run", "--in", moved, "--json")).stdout)
    assert carried["device"] == "nfs3"  # the next command runs on the new device


def test_restart_of_a_run_whose_process_died_brings_run_json_up_to_date(tmp_path):
    d = tmp_path / "qm"
    ok(mqlog("run", "--platform", "distributed", *PUTGET, "--crash-at", "0.01", "--out", d))
    # what a run killed part way leaves (run.json written first, no journal)
    run = run_json(d)
    run.update(finished=False)
    del run["history"], run["journal_complete"]
    (d / "run.json").write_text(json.dumps(run))
    (d / "journal.json").unlink()
    out = mqlog("restart", d, "--verify")
    assert out.returncode == 1 and "NOT VERIFIED" in out.stdout
    after = run_json(d)
    assert after["finished"] and not after["journal_complete"]
    assert [h["command"] for h in after["history"]] == ["run", "restart"]
    # the journal stays lost: a later restart still says it cannot check, and carrying on is refused
    again = mqlog("restart", d, "--verify")
    assert again.returncode == 1 and "NOT VERIFIED" in again.stdout
    one_line_error(mqlog("run", "--in", d), "journal.json", "restart")


def test_in_and_out_together_are_refused(tmp_path):
    d = tmp_path / "qm"
    ok(mqlog("run", "--platform", "reference", *PUTGET, "--out", d))
    one_line_error(mqlog("run", "--in", d, "--out", tmp_path / "other"), "--in", "--out")
    one_line_error(mqlog("run", "--in", d, "--platform", "zos"), "--platform")
    one_line_error(mqlog("run", "--workload", "putget"), "--platform")
    assert not (tmp_path / "other").exists()
    spec = tmp_path / "w.toml"
    spec.write_text('workload = "putget"\n[params]\nmessages = 5\n[qmgr]\nMAXUMSGS = 50\n')
    one_line_error(mqlog("run", "--in", d, "--workload", spec), "[qmgr]", "MAXUMSGS")
    verified(d)


def test_the_same_commands_give_the_same_files(tmp_path):
    def experiment(d):
        ok(mqlog("run", "--platform", "zos", *LONG_UOW, "--crash-at", "0.03", "--out", d))
        ok(mqlog("run", "--in", d, "--set", "log.OUTBUFF=400", "--crash-at", "0.02"))
        verified(d, "--device", "san")
        return {p.relative_to(d): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}

    assert experiment(tmp_path / "a") == experiment(tmp_path / "b")


class _Queue:
    def __init__(self, name, messages):
        self.name, self.messages = name, messages


class _Stored:
    def __init__(self, state):
        self.state = state


class _Qm:
    def __init__(self, **queues):
        self.queues = {name: _Queue(name, {i: _Stored(s) for i, s in msgs.items()}) for name, msgs in queues.items()}
        self.damaged = {}  # (no queue restart marked damaged)


def test_a_carried_on_journal_knows_what_the_restart_decided():
    """A put whose commit was in flight at the crash is "maybe" (there or not, both right);
    once a verified restart showed it committed, the journal carried on by ``run --in`` must
    hold it as committed, so that a later restart that lost it fails the check."""
    from mqlog.core.objects.queuelayout import MessageState
    from mqlog.core.workload.journal import Journal

    committed, lost, got = (bytes([n]) * 24 for n in (1, 2, 3))
    journal = Journal()
    for msg_id in (committed, lost):
        journal.put("app.0", msg_id, "Q", persistent=True, syncpoint=True)
    journal.commit_asked("app.0")
    journal.put("app.1", got, "Q", persistent=True, syncpoint=False)
    journal.get_asked("Q", syncpoint=False)  # in flight at the crash: it may have taken a message
    journal.crash()
    restarted = _Qm(Q={committed: MessageState.COMMITTED, lost: MessageState.COMMITTED})
    assert journal.verify(restarted).ok
    journal.settle(journal.settlement(restarted))
    # later, after more work, a restart finds one of them gone: that is now a loss, not a maybe
    later = _Qm(Q={committed: MessageState.COMMITTED})
    verdict = journal.verify(later)
    assert verdict.committed_missing == 1 and not verdict.ok
    # and the message the in-flight get took is known to be gone: its coming back is caught
    back = _Qm(Q={committed: MessageState.COMMITTED, lost: MessageState.COMMITTED, got: MessageState.COMMITTED})
    assert journal.verify(back).uncommitted_present == 1


def test_carrying_on_stops_when_the_recovered_queues_disagree_with_the_journal(tmp_path):
    d = tmp_path / "qm"
    ok(mqlog("run", "--platform", "distributed", "--workload", "deep-queue", "--set", "workload.queues=1",
             "--set", "workload.depth=20", "--set", "workload.then_messages=2", "--out", d))
    journal = json.loads((d / "journal.json").read_text())
    # one message the queue holds, as if its put had never committed: the queues now disagree
    msg_id = next(i for i, (_, persistent, put, got) in journal["messages"].items()
                  if persistent and put == "committed" and got == "")
    journal["messages"][msg_id][2] = "pending"
    (d / "journal.json").write_text(json.dumps(journal))
    before = (d / "journal.json").read_bytes()
    out = mqlog("run", "--in", d)
    assert out.returncode == 1 and "uncommitted_present 1" in out.stdout and "FAILED" in out.stdout
    assert "messages put" not in out.stdout  # nothing was run on it
    assert (d / "journal.json").read_bytes() == before
    assert run_json(d)["history"][-1]["stopped"] == "the restart's recovery did not verify"


def test_a_crash_during_the_restart_of_run_in_is_recovered_by_the_next(tmp_path):
    d = tmp_path / "qm"
    ok(mqlog("run", "--platform", "distributed", *LONG_UOW, "--crash-at", "0.03", "--out", d))
    # --crash-at counts from the restart's start: this one comes before the workload's first call
    out = ok(mqlog("run", "--in", d, "--crash-after-writes", "1", "--json"))
    m = json.loads(out.stdout)
    assert m["crashed"] and m["messages_put"] == 0 and "during the restart" in out.stderr
    assert run_json(d)["journal_complete"]
    verified(d)


def test_a_run_in_whose_process_is_killed_leaves_a_directory_that_says_it_cannot_be_verified(tmp_path):
    from clikit import kill_mqlog_when

    d = tmp_path / "qm"
    ok(mqlog("run", "--platform", "distributed", *PUTGET, "--out", d))
    # run.json says the carried-on run is under way once the restart verified and before
    # the workload's first call: kill it after that
    kill_mqlog_when(["run", "--in", d, "--workload", "putget-pairs", "--set", "workload.messages_per_pair=10000000"],
                    lambda: run_json(d)["history"][-1]["command"] == "run --in")
    run = run_json(d)
    assert not run["finished"] and not run["journal_complete"] and run["workload"] == "putget-pairs"
    # the old journal.json is still there, but it does not hold the killed run's messages
    verify = mqlog("restart", d, "--verify")
    assert verify.returncode == 1 and "NOT VERIFIED" in verify.stdout
    one_line_error(mqlog("run", "--in", d), "journal.json")


def test_carrying_on_can_end_with_a_shutdown_mode_and_restart_says_so(tmp_path):
    """crash -> run --in ... --end immediate --end-at T -> restart --verify: the carried-on run
    ends with endmqm -i at T (later calls refused, its in-flight units left to the restart),
    run.json says so, and the restart backs them out and verifies everything ever committed."""
    d = tmp_path / "qm"
    ok(mqlog("run", "--platform", "distributed", *LONG_UOW, "--crash-at", "0.03", "--out", d))
    out = json.loads(ok(mqlog("run", "--in", d, "--end", "IMMEDIATE", "--end-at", "0.02", "--json")).stdout)
    assert out["ended"] == "immediate" and out["ended_at_s"] == 0.02 and out["uows_in_flight_at_end"] >= 1
    assert "MQRC_Q_MGR_STOPPING" in out["failed_calls"]
    assert run_json(d)["ended"]["ended"] == "immediate"
    report = verified(d)
    assert report["restarted_after"]["ended"] == "immediate"
    assert report["uows_backed_out"] >= out["uows_in_flight_at_end"]
    one_line_error(mqlog("run", "--in", d, "--end", "immediate", "--crash-at", "0.01"), "--end", "--crash-at")
    # run --in restarts too, and says what it restarts after as restart does
    again = ok(mqlog("run", "--in", d, "--set", "workload.duration=0.01"))
    assert again.stdout.splitlines()[0].startswith("restarting after an earlier 'mqlog restart'")
    assert json.loads(ok(mqlog("run", "--in", d, "--set", "workload.duration=0.01", "--json")).stdout
                      )["restart"]["restarted_after"]["ended"] == "controlled"
