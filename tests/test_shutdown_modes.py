"""MQ's shutdown modes as a run's ending (`mqlog run --end controlled|immediate|preemptive
--end-at SECONDS`), through the real command line on both platforms: what each does to the
calls after it and to the units of work in flight, and that every restart after one verifies."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from mqlog.core.disk.faults import FaultInjectingStorage
from mqlog.core.disk.storage import MemoryStorage
from clikit import mqlog, one_line_error

PLATFORMS = ["distributed", "zos"]
#: a busy request/reply queue manager: its waiting MQGETs are what a quiesce cancels
BUSY = ["--workload", "requester-responder", "--set", "workload.requesters=3", "--set", "workload.responders=3",
        "--set", "workload.queue_pairs=2", "--set", "workload.duration=0.05"]
#: one unit of work always in flight (LONGUOW) beside four workers committing as fast as they can
LONG = ["--workload", "long-uow", "--set", "workload.background=4", "--set", "workload.duration=0.05"]
#: two holders' units in flight throughout, and one filler putting units of 100 messages (no MQGET
#: at all: whatever is refused is refused at the call's entry)
FILL = ["--workload", "log-fill", "--set", "workload.queues=2", "--set", "workload.messages=3000",
        "--set", "workload.transactions=30"]


def run(tmp_path: Path, name: str, platform: str, *args) -> dict:
    out = mqlog("run", "--platform", platform, *args, "--out", tmp_path / name, "--json")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def restart(tmp_path: Path, name: str) -> dict:
    out = mqlog("restart", tmp_path / name, "--verify", "--json")
    assert out.returncode == 0, (out.stdout, out.stderr)  # --verify fails the command if the check fails
    report = json.loads(out.stdout)
    assert not any(report[k] for k in ("committed_missing", "uncommitted_present", "duplicates"))
    return report


@pytest.mark.parametrize("platform", PLATFORMS)
def test_controlled_mid_run_quiesces_and_leaves_nothing_to_back_out(tmp_path, platform):
    whole = run(tmp_path, "whole", platform, *BUSY)
    m = run(tmp_path, "quiesced", platform, *BUSY, "--end", "controlled", "--end-at", "0.02")
    assert m["ended"] == "controlled" and m["ended_at_s"] == 0.02
    assert m["end_command"] == ("endmqm -c" if platform == "distributed" else "STOP QMGR MODE(QUIESCE)")
    # the waiting MQGETs were told the queue manager is quiescing; nothing else was refused
    assert set(m["failed_calls"]) == {"MQRC_Q_MGR_QUIESCING"}
    assert m["failed_calls"]["MQRC_Q_MGR_QUIESCING"]["reason"] == 2161
    assert m["uows_in_flight_at_end"] == 0  # every application finished its unit of work first
    assert 0 < m["commits"] < whole["commits"] and m["workload_s"] < whole["workload_s"]
    report = restart(tmp_path, "quiesced")
    assert report["uows_backed_out"] == 0 and report["restarted_after"]["ended"] == "controlled"


@pytest.mark.parametrize("platform", PLATFORMS)
def test_immediate_mid_run_refuses_later_calls_and_backs_out_the_units_in_flight(tmp_path, platform):
    whole = run(tmp_path, "whole", platform, *FILL)
    m = run(tmp_path, "immediate", platform, *FILL, "--end", "immediate", "--end-at", "0.01")
    assert m["ended"] == "immediate" and m["ended_at_s"] == 0.01
    # the filler's puts after the command, and its commit, were refused (it has no MQGET to refuse)
    assert set(m["failed_calls"]) == {"MQRC_Q_MGR_STOPPING"}
    assert m["failed_calls"]["MQRC_Q_MGR_STOPPING"]["reason"] == 2162 and m["failed_calls"]["MQRC_Q_MGR_STOPPING"]["calls"] > 0
    in_flight = m["uows_in_flight_at_end"]
    assert in_flight == 3  # the two holders' and the filler's, caught part way
    # It stopped once the calls in progress completed (a put's spill, a force: a few ms at
    # most), far before the workload would have ended.
    assert m["virtual_s"] - 0.01 < 0.005 and whole["workload_s"] > 2 * m["virtual_s"]
    report = restart(tmp_path, "immediate")
    assert report["restarted_after"]["ended"] == "immediate"
    if platform == "distributed":
        # endmqm -i: "incomplete units of work are rolled back when the queue manager is next started"
        assert m["uows_backed_out_at_stop"] == 0 and report["uows_backed_out"] == in_flight
    else:
        # STOP QMGR MODE(FORCE): active threads are backed out before the shutdown checkpoint
        assert m["uows_backed_out_at_stop"] == in_flight and report["uows_backed_out"] == 0


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("workload, applications", [(FILL, 2 + 1), (BUSY, 3 + 3)], ids=["log-fill", "requester-responder"])
def test_an_application_ends_at_the_first_call_an_immediate_end_refuses(tmp_path, platform, workload, applications):
    """IBM's programmer response to 2162: "The application should tidy up and end" – so each
    application is refused once at most (log-fill: the filler, part way through its unit of
    100 puts, is refused one put, not the rest of them and its commit), and the journal of what
    the refused calls were told still checks every message at restart."""
    m = run(tmp_path, "immediate", platform, *workload, "--end", "immediate", "--end-at", "0.01")
    assert set(m["failed_calls"]) == {"MQRC_Q_MGR_STOPPING"}
    assert 0 < m["failed_calls"]["MQRC_Q_MGR_STOPPING"]["calls"] <= applications
    restart(tmp_path, "immediate")


@pytest.mark.parametrize("platform", PLATFORMS)
def test_preemptive_mid_run_needs_recovery_from_the_log(tmp_path, platform):
    controlled = run(tmp_path, "controlled", platform, *BUSY, "--end", "controlled", "--end-at", "0.02")
    m = run(tmp_path, "preemptive", platform, *BUSY, "--end", "preemptive", "--end-at", "0.02")
    assert m["ended"] == "preemptive" and not m["crashed"] and m["virtual_s"] == 0.02
    # no shutdown checkpoint: only the start's and any the records asked for
    assert m["checkpoints"] == controlled["checkpoints"] - 1
    after_preemptive = restart(tmp_path, "preemptive")
    after_controlled = restart(tmp_path, "controlled")
    assert after_preemptive["records_replayed"] > 10 * after_controlled["records_replayed"]
    assert after_preemptive["restarted_after"]["ended"] == "preemptive"


def test_a_kill_keeps_what_the_os_accepted_and_a_crash_does_not():
    """endmqm -p kills the processes, the machine stays up: unsynced writes are in the page
    cache and reach the disk whole; a plug-pull loses them."""
    for end, kept in (("kill", b"accepted"), ("crash", b"")):
        fs = FaultInjectingStorage(MemoryStorage())
        fs.create("LOG", 0)
        fs.write("LOG", 0, b"accepted")
        getattr(fs, end)()
        assert fs.durable.read("LOG", 0, fs.durable.size("LOG")) == kept, end


@pytest.mark.parametrize("platform", PLATFORMS)
def test_the_default_end_is_a_controlled_one_byte_for_byte(tmp_path, platform):
    plain = run(tmp_path, "plain", platform, *BUSY)
    asked = run(tmp_path, "asked", platform, *BUSY, "--end", "Controlled")  # any case, like other choices
    assert asked == plain and plain["ended"] == "controlled" and plain["failed_calls"] == {}
    files = sorted(p.relative_to(tmp_path / "plain") for p in (tmp_path / "plain" / "qm").rglob("*") if p.is_file())
    assert files and all((tmp_path / "plain" / f).read_bytes() == (tmp_path / "asked" / f).read_bytes() for f in files)


def test_an_end_command_after_the_workload_ended_is_issued_when_it_ends(tmp_path):
    out = mqlog("run", "--platform", "distributed", *BUSY, "--end", "immediate", "--end-at", "5", "--json")
    assert out.returncode == 0, out.stderr
    m = json.loads(out.stdout)
    assert m["ended"] == "immediate" and m["ended_at_s"] == m["workload_s"] < 5
    assert "came after the workload ended" in out.stderr and m["failed_calls"] == {}


def test_the_summary_names_the_platforms_own_command():
    out = mqlog("run", "--platform", "zos", *LONG, "--end", "immediate", "--end-at", "0.02")
    assert out.returncode == 0, out.stderr
    first = out.stdout.splitlines()[0]
    assert "ended with an immediate shutdown (STOP QMGR MODE(FORCE) at 0.020000 s" in first
    assert "backed out by the queue manager as it stopped" in first


@pytest.mark.parametrize("args, words", [
    (["--end", "sideways"], ["--end", "sideways"]),
    (["--end-at", "-1"], ["--end-at", "-1"]),
    (["--end-at", "nan"], ["--end-at"]),
    (["--end", "immediate", "--crash-at", "0.01"], ["--end", "--crash-at"]),
    (["--end-at", "0.01", "--crash-after-writes", "5"], ["--end-at", "--crash-after-writes"]),
    (["--end", "preemptive", "--crash-at", "end"], ["--end", "--crash-at"]),
])
def test_a_bad_end_is_a_one_line_error(args, words):
    one_line_error(mqlog("run", "--platform", "distributed", *BUSY, *args), *words)


def test_restart_says_what_it_restarts_after_and_run_json_stays_true(tmp_path):
    """The run's own end first; after a restart (recovery and its checkpoint, no shutdown) or
    an administrative command (a controlled shutdown), that, not the run's end."""
    run(tmp_path, "stop", "distributed", *FILL, "--set", "log.LogType=LINEAR", "--end", "preemptive",
        "--end-at", "0.01")
    first = mqlog("restart", tmp_path / "stop", "--verify")
    assert first.returncode == 0, first.stderr
    assert first.stdout.splitlines()[0].startswith("restarting after a preemptive shutdown (endmqm -p) at 0.010000")
    again = mqlog("restart", tmp_path / "stop", "--verify", "--json")
    assert json.loads(again.stdout)["restarted_after"]["ended"] == "restart"
    assert mqlog("rcdmqimg", tmp_path / "stop", "FILL.0000").returncode == 0
    last = mqlog("restart", tmp_path / "stop", "--verify")
    assert last.returncode == 0, last.stderr
    assert last.stdout.splitlines()[0] == "restarting after a controlled shutdown (endmqm -c), no unit of work in flight"


#: what each platform's console says of an end command: when it is accepted, and when the queue
#: manager has ended (distributed: AMQ8004I only; z/OS: STOP QMGR's CSQY002I, then CSQ9022I and
#: CSQ3104I); a kill (endmqm -p, a CANCEL) or a crash says none of them
STOPPING = {"distributed": [], "zos": ["CSQY002I"]}
ENDED = {"distributed": ["AMQ8004I"], "zos": ["CSQ9022I", "CSQ3104I"]}
_JOB_LOG_LINE = re.compile(r"^(\d\d)\.(\d\d)\.(\d\d)\.(\d{6}) (CSQ\w+) ", re.MULTILINE)
_AMQERR_ENTRY = re.compile(r"Time\(2026-01-01T(\d\d):(\d\d):(\d\d)\.(\d{6})Z\)\n\n(AMQ\w+)")


def console(directory: Path, platform: str) -> list[tuple[float, str]]:
    """Each message of the run directory's error log: (its stamp in virtual seconds, its id)."""
    path = directory / ("AMQERR01.LOG" if platform == "distributed" else "CSQMSTR.JESMSGLG")
    text = path.read_text() if path.is_file() else ""
    found = (_AMQERR_ENTRY if platform == "distributed" else _JOB_LOG_LINE).findall(text)
    return [(int(h) * 3600 + int(m) * 60 + int(s) + int(us) / 1e6, msg_id) for h, m, s, us, msg_id in found]


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("end", [["--end", "controlled", "--end-at", "0.01"], ["--end", "immediate", "--end-at", "0.01"],
                                 []], ids=["controlled", "immediate", "default"])
def test_the_console_says_the_end_was_accepted_and_the_queue_manager_ended_at_their_times(tmp_path, platform, end):
    m = run(tmp_path, "ended", platform, *FILL, *end)
    said = console(tmp_path / "ended", platform)
    ids = [msg_id for _, msg_id in said]
    # each once, the ended lines last, everything in time order
    assert [i for i in ids if i in STOPPING[platform] + ENDED[platform]] == STOPPING[platform] + ENDED[platform]
    assert ids[-len(ENDED[platform]):] == ENDED[platform]
    assert [t for t, _ in said] == sorted(t for t, _ in said)
    at = dict((msg_id, t) for t, msg_id in said)
    # accepted when the command was issued; ended when the shutdown (its checkpoint) was done
    assert all(abs(at[i] - m["ended_at_s"]) <= 1e-6 for i in STOPPING[platform])
    assert all(abs(at[i] - m["virtual_s"]) <= 1e-6 for i in ENDED[platform])
    assert m["ended_at_s"] < m["virtual_s"]
    restart(tmp_path, "ended")  # the restart's lines follow, later
    after = console(tmp_path / "ended", platform)
    assert after[:len(said)] == said and len(after) > len(said) and after[len(said)][0] > said[-1][0]


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("end", [["--end", "preemptive", "--end-at", "0.01"], ["--end", "preemptive"],
                                 ["--crash-at", "0.01"], ["--crash-at", "end"]],
                         ids=["preemptive", "preemptive-at-end", "crash", "crash-at-end"])
def test_a_kill_or_a_crash_leaves_no_end_messages(tmp_path, platform, end):
    m = run(tmp_path, "killed", platform, *FILL, *end)
    assert m["ended"] in ("preemptive", "crash")
    ids = [msg_id for _, msg_id in console(tmp_path / "killed", platform)]
    assert not set(ids) & set(STOPPING[platform] + ENDED[platform]), ids
