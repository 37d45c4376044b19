"""A crash right after a queue file's write must leave a queue manager that restarts.

Found by issue 37's re-run with 64-page extents: under TripleWrite the spare copy of a run's
first page released forces early and made the log "durable" to the end of that page, though a
put's record began there and ended on the run's next page. A spill then wrote that put to its
queue file (storage write 679), the crash came before the rest of the run (write 680), and
restart refused the undamaged files: "queue file PAIR.00000.mqq holds a message put at log
address <0:0:34:24010>, but the log ends at <0:0:34:24010>". Each crash point here is one of
those the re-run found; the restart must start and verify."""

from __future__ import annotations

import subprocess
import sys

import pytest


def mqlog(*args):
    return subprocess.run([sys.executable, "-m", "mqlog", *map(str, args)], capture_output=True, text=True,
                          timeout=300)


@pytest.mark.parametrize("writes", [679, 1307])
def test_a_crash_after_a_spill_ahead_of_its_records_end_restarts_and_verifies(tmp_path, writes):
    run = tmp_path / "qm"
    made = mqlog("run", "--platform", "distributed", "--workload", "putget-pairs", "--set", "workload.pairs=3",
                 "--set", "workload.messages_per_pair=400", "--set", "log.LogFilePages=64", "--seed", "1",
                 "--crash-after-writes", writes, "--out", run)
    assert made.returncode == 0, made.stderr
    assert "crash" in made.stdout.lower()
    restarted = mqlog("restart", run, "--verify")
    assert restarted.returncode == 0, restarted.stderr
    assert "AMQ8003I" in restarted.stdout
    (verdict,) = [line for line in restarted.stdout.splitlines() if line.startswith("verify:")]
    assert "committed_missing 0" in verdict and verdict.rstrip().endswith("OK"), restarted.stdout
