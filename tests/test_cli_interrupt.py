"""Issue 36: Ctrl-C and SIGTERM stop a command as at a crash, release its lock, say how to
recover (``mqlog restart DIR``) and exit 128 + the signal (130 for Ctrl-C). Through the real
command line: a long run is started and signalled once its queue manager exists (its first
checkpoint is on disk); a run stopped before that is told there is nothing to recover."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest
from clikit import mqlog

from mqlog.cli.interrupt import Interrupted, stopped
from mqlog.rundir import created

LONG = ("run", "--platform", "distributed", "--workload", "requester-responder", "--set", "workload.duration=60")


def _exists(run_dir) -> bool:
    """Whether the run's first checkpoint is on disk yet (a control file part-written as it is
    read counts as not yet)."""
    try:
        return (run_dir / "run.json").is_file() and created(run_dir)
    except Exception:
        return False


def _signalled(run_dir, signum):
    proc = subprocess.Popen([sys.executable, "-m", "mqlog", *LONG, "--out", str(run_dir)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120  # a safeguard against a hang, not a timing assertion
        lock = run_dir / ".mqlog.lock"
        while not (lock.is_file() and lock.read_text().strip() and _exists(run_dir)):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline
            time.sleep(0.05)
        proc.send_signal(signum)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, err


@pytest.mark.parametrize("signum, code, name", [(signal.SIGINT, 130, "Ctrl-C"), (signal.SIGTERM, 143, "SIGTERM")])
def test_an_interrupted_run_says_how_to_recover_and_releases_its_lock(tmp_path, signum, code, name):
    run_dir = tmp_path / "run"
    returncode, err = _signalled(run_dir, signum)
    assert returncode == code, err
    assert "Traceback" not in err
    assert err.strip().splitlines()[-1] == (
        f"mqlog: stopped by {name}: the queue manager in {run_dir} stopped where it was, as at a crash "
        f"(its lock released); 'mqlog restart {run_dir}' recovers it")
    assert (run_dir / ".mqlog.lock").read_text() == ""  # no process named as its holder
    restarted = mqlog("restart", run_dir, "--verify")
    assert "Restart complete" in restarted.stdout or "started" in restarted.stdout, restarted.stderr
    assert "NOT VERIFIED" in restarted.stdout  # its journal was never written, and restart says so


@pytest.mark.parametrize("writes, created_", [(0, False), (200, True)])
def test_the_line_after_an_interrupt_agrees_with_what_restart_finds(tmp_path, capsys, writes, created_):
    # A run stopped before its first checkpoint reached the disk has no queue manager: the line
    # must not promise that restart recovers one (restart says "never created").
    run_dir = tmp_path / "r"
    out = mqlog("run", "--platform", "distributed", "--workload", "putget-pairs",
                "--crash-after-writes", str(writes), "--out", run_dir)
    assert out.returncode == 0, out.stderr
    assert stopped(Interrupted(signal.SIGINT, [run_dir])) == 130
    line = capsys.readouterr().err.strip()
    restarted = mqlog("restart", run_dir, "--verify")
    assert restarted.returncode == 0, restarted.stderr
    if created_:
        assert line.endswith(f"'mqlog restart {run_dir}' recovers it"), line
        assert "started" in restarted.stdout or "Restart complete" in restarted.stdout
    else:
        assert "never created" in line and "nothing to recover" in line, line
        assert "never created" in restarted.stdout
