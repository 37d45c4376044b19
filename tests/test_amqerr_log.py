"""AMQERR01.LOG in MQ's layout (issue 22), driven through the command line: an entry a message,
its header's first line the date and time and its Time() stamp from the run's virtual clock,
the message line as the queue manager said it, a dashed line after it; stamps never go
back, a restart's come after the run's end, and the same run gives the same bytes."""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone

from clikit import mqlog
from test_refused_calls import TOO_BIG

ENTRY = re.compile(r"(\d\d/\d\d/\d{4} \d\d:\d\d:\d\d [AP]M) - QMgr\(QM1\)\n {24}Time\(([-0-9T:.]+)Z\)\n\n"
                   r"([^\n]+)\n-{79}\n")


def _entries(path) -> list[tuple[float, str]]:
    """Each entry as (seconds after the virtual epoch, message line); the file is entries only."""
    text = path.read_text()
    found = list(ENTRY.finditer(text))
    assert "".join(m.group(0) for m in found) == text  # nothing but whole entries
    epoch = datetime(2026, 1, 1, tzinfo=timezone.utc)
    out = []
    for m in found:
        when = datetime.fromisoformat(m.group(2)).replace(tzinfo=timezone.utc)
        assert m.group(1) == when.strftime("%m/%d/%Y %I:%M:%S %p")  # the header's first line says the same time
        out.append(((when - epoch).total_seconds(), m.group(3)))
    return out


def test_error_log_entries_are_stamped_from_the_virtual_clock_and_a_restart_comes_after_the_run(tmp_path):
    runs = []
    for name in ("a", "b"):
        out = tmp_path / name
        run = mqlog("run", *TOO_BIG, "--crash-at", "end", "--out", out, "--json")
        assert run.returncode == 0, run.stderr
        ran = _entries(out / "AMQERR01.LOG")
        restart = mqlog("restart", out, "--verify")
        assert restart.returncode == 0, restart.stderr
        runs.append((out, json.loads(run.stdout), ran, _entries(out / "AMQERR01.LOG"), restart.stdout,
                     (out / "AMQERR01.LOG").read_bytes()))
    # the same spec and seed: the same error log, byte for byte (virtual time, never the wall clock)
    assert runs[0][5] == runs[1][5]
    out, metrics, ran, after, restart_out, _ = runs[0]
    assert ran[0][1] == "AMQ7463: The log for queue manager QM1 is full."
    assert 0 < ran[0][0] and ran[-1][0] <= metrics["virtual_s"]
    times = [t for t, _ in after]
    assert times == sorted(times)
    restarted = after[len(ran):]
    assert restarted[0][1].startswith("AMQ5037I: ") and restarted[0][0] > metrics["virtual_s"]
    # the message lines are what restart printed, in order
    assert [m for _, m in restarted] == [line for line in restart_out.splitlines() if line.startswith("AMQ")]
    # a second restart goes on after the first
    assert mqlog("restart", out, "--verify").returncode == 0
    again = _entries(out / "AMQERR01.LOG")[len(after):]
    assert again and again[0][0] > after[-1][0]


def _restart_lines(out) -> list[str]:
    """The message lines of the last restart in out's AMQERR01.LOG, from AMQ5037I on."""
    lines = [line for _, line in _entries(out / "AMQERR01.LOG")]
    first = max(i for i, line in enumerate(lines) if line.startswith("AMQ5037I: "))
    return lines[first:]


def test_restart_reports_its_recovery_phase_in_ibms_three_lines(tmp_path):
    # After replay MQ writes AMQ7231I (records the recovery phase read), AMQ7232I and AMQ7233I
    # ("n out of m in-flight transactions resolved"): units backed out are resolved, a unit in
    # doubt is not. Crash a long unit of work in flight, then one left prepared.
    for prepared in ("false", "true"):
        out = tmp_path / prepared
        run = mqlog("run", "--platform", "distributed", "--workload", "long-uow", "--set", "workload.duration=0.3",
                    "--set", f"workload.prepared={prepared}", "--crash-at", "0.2", "--out", out)
        assert run.returncode == 0, run.stderr
        restart = mqlog("restart", out, "--verify", "--json")
        assert restart.returncode == 0, restart.stderr
        report = json.loads(restart.stdout)
        backed_out, in_doubt = report["uows_backed_out"], report["uows_indoubt"]
        assert backed_out + in_doubt > 0  # the scenario: units were in flight at the crash
        assert (in_doubt > 0) == (prepared == "true")
        ids = [line.split(":")[0] for line in _restart_lines(out)]
        assert ids[:6] == ["AMQ5037I", "AMQ7229I", "AMQ7230I", "AMQ7231I", "AMQ7232I", "AMQ7233I"]
        lines = _restart_lines(out)
        walked = int(re.match(r"AMQ7231I: (\d+) log records accessed on queue manager 'QM1' during the "
                              r"recovery phase\.$", lines[3]).group(1))
        assert walked >= backed_out + in_doubt  # at least each unit's Begin record was read back
        assert lines[4] == "AMQ7232I: Transaction manager state recovered for queue manager 'QM1'."
        assert lines[5] == (f"AMQ7233I: {backed_out} out of {backed_out + in_doubt} in-flight transactions "
                            f"resolved for queue manager 'QM1'.")
