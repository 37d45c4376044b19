"""An internal error (a bug in mqlog) reaches the user as one line, exit code 3, with the
command and seed that reproduce it and the traceback in a file; the run directory it was
writing stays restartable (issue 35).

The bug is planted in a real ``mqlog`` process: an MQGET part-way through the run raises an
AssertionError, as the queue flush at 180 requesters did."""

from __future__ import annotations

import json
import subprocess
import sys

#: a real mqlog process whose 500th MQGET fails part-way through the run, as a bug would
PLANTED = """
import sys
from mqlog.core.objects import queues
real, calls = queues.Queue.take_first, [0]
def take_first(self, *args, **kwargs):
    calls[0] += 1
    if calls[0] == 500:
        raise AssertionError("planted: message of APP.Q1 has no data to write")
    return real(self, *args, **kwargs)
queues.Queue.take_first = take_first
from mqlog.cli import main
sys.exit(main(sys.argv[1:]))
"""
RUN = ["run", "--platform", "distributed", "--workload", "putget-pairs", "--set", "workload.pairs=3",
       "--set", "qmgr.MAXDEPTH=5000", "--set", "workload.messages_per_pair=400"]


def planted(*args):
    return subprocess.run([sys.executable, "-c", PLANTED, *map(str, args)], capture_output=True, text=True,
                          timeout=300)


def mqlog(*args):
    return subprocess.run([sys.executable, "-m", "mqlog", *map(str, args)], capture_output=True, text=True,
                          timeout=300)


def test_an_internal_error_is_one_line_with_its_reproduction_and_the_traceback_in_the_run_directory(tmp_path):
    out = tmp_path / "run"
    done = planted(*RUN, "--out", out)
    assert done.returncode == 3, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr  # no traceback on the terminal
    line = lines[0]
    assert line.startswith("mqlog: failed internally (a bug in mqlog): AssertionError: planted"), line
    assert "reproduce with: mqlog run --platform distributed --workload putget-pairs" in line
    assert "--seed 0" in line  # the seed it ran with, which the command line did not name
    saved = out / "mqlog-internal-error.txt"
    assert f"traceback in {saved}" in line
    assert line.endswith(f"recover {out} with: mqlog restart {out}")
    text = saved.read_text()
    assert "Traceback (most recent call last)" in text and "planted" in text and "--seed 0" in text
    assert "Traceback" not in done.stdout


def test_the_run_directory_an_internal_error_left_restarts(tmp_path):
    # Left as a crash leaves it: run.json was written first, the log and queue files hold
    # what reached them, and restart recovers it (its journal is incomplete, as after a kill -9:
    # 'run --in' then refuses, saying so, rather than carry on unverifiable)
    out = tmp_path / "run"
    assert planted(*RUN, "--seed", "5", "--out", out).returncode == 3
    restarted = mqlog("restart", out, "--json")
    assert restarted.returncode == 0, restarted.stderr
    report = json.loads(restarted.stdout)
    assert report["records_replayed"] > 0
    status = mqlog("qmstatus", out)
    assert status.returncode == 0, status.stderr


def test_an_internal_error_under_json_is_one_document_and_without_a_run_directory_a_temporary_file(tmp_path):
    done = planted(*RUN, "--json")
    assert done.returncode == 3
    document = json.loads(done.stdout)
    assert document["exit_code"] == 3 and "planted" in document["error"]
    where = document["error"].rsplit("traceback in ", 1)[1]
    try:
        assert "mqlog-internal-error-" in where and "planted" in open(where).read()
    finally:
        import os
        os.unlink(where)
