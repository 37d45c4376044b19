"""``run --in`` whose restart meets a storage error: an error naming the file, exit 2.

Before the fix a storage error during the restart that ``run --in`` makes before its workload
(a file of the queue manager's that cannot be read or written) was taken for an abnormal end
of the run: the command printed the run's figures, said "the crash came during the restart",
and exited 0, as if a crash had been asked for and tested. ``mqlog restart`` refuses the same
directory with one line naming the file; ``run --in`` now does the same, runs nothing, and the
directory restarts (verified) once the file is mended.
"""

from __future__ import annotations

import json
import shutil

import pytest

from logdamage import fresh, mqlog


@pytest.fixture(scope="module")
def crashed(tmp_path_factory):
    out = tmp_path_factory.mktemp("runs") / "run"
    done = mqlog("run", "--platform", "distributed", "--workload", "putget-pairs", "--set", "workload.pairs=1",
                 "--set", "workload.messages_per_pair=50", "--crash-at", "end", "--out", out)
    assert done.returncode == 0, done.stderr
    return out


CARRY_ON = ("--workload", "putget-pairs", "--set", "workload.messages_per_pair=10")


@pytest.mark.parametrize("name, says", [("PAIR.00000.mqq", "PAIR.00000.mqq: replace failed: Is a directory"),
                                        ("amqhlspr.lfh", "amqhlspr.lfh: cannot create, file exists")])
def test_a_storage_error_during_run_ins_restart_is_an_error_naming_the_file(crashed, tmp_path, name, says):
    run = fresh(crashed, tmp_path)
    kept = tmp_path / name
    shutil.move(run / "qm" / name, kept)
    (run / "qm" / name).mkdir()  # a file the restart must write cannot be: the OS says why
    out = mqlog("run", "--in", run, *CARRY_ON)
    assert out.returncode == 2, (out.returncode, out.stdout, out.stderr)
    assert "Traceback" not in out.stderr and len(out.stderr.strip().splitlines()) == 1, out.stderr
    assert says in out.stderr and f"{run / 'qm'}" in out.stderr, out.stderr
    assert "during the restart, before the workload's first call: nothing was run" in out.stderr
    assert "the crash came during the restart" not in out.stderr + out.stdout
    assert "storage writes" not in out.stdout  # (no figures of a run that did not run)
    as_json = mqlog("run", "--in", run, *CARRY_ON, "--json")
    assert as_json.returncode == 2 and says in json.loads(as_json.stdout)["error"], as_json.stdout
    # mended, the directory restarts and verifies: nothing the failed attempts did lost anything
    (run / "qm" / name).rmdir()
    shutil.move(kept, run / "qm" / name)
    again = mqlog("restart", run, "--verify")
    assert again.returncode == 0 and "OK" in again.stdout, again.stdout + again.stderr
