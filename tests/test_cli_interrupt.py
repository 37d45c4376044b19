"""Issue 36: Ctrl-C and SIGTERM stop a command as at a crash, release its lock, say how to
recover (``mqlog restart DIR``) and exit 128 + the signal (130 for Ctrl-C). Through the real
command line: a long run is started and signalled once its run directory holds its log."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest
from test_cli_run import mqlog

LONG = ("run", "--platform", "distributed", "--workload", "requester-responder", "--set", "workload.duration=60")


def _signalled(run_dir, signum):
    proc = subprocess.Popen([sys.executable, "-m", "mqlog", *LONG, "--out", str(run_dir)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120  # a safeguard against a hang, not a timing assertion
        lock = run_dir / ".mqlog.lock"
        while not (lock.is_file() and lock.read_text().strip() and any((run_dir / "qm").glob("*"))):
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
