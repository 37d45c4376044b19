"""What the command-line tests of runs share: ``mqlog`` run as a user runs it (a subprocess), a
small setting of each built-in workload, kill -9 at a chosen moment, and the one-line error a
refusal must be."""

from __future__ import annotations

import os
import subprocess
import sys

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
