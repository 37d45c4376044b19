"""The application functions behind ``mqlog run``, ``restart`` and ``run --in``
(mqlog/usecases.py, issue 41), called directly, without the command line: each does the run
directory's bookkeeping (run.json, journal, metrics, the error log) and returns what happened,
printing nothing."""

from __future__ import annotations

import pytest

from mqlog.core.errors import MqlogError
from mqlog.core.qm.config import qmgr_settings
from mqlog.core.workload.run import RunConfig
from mqlog.core.workload.spec import BUILTINS, build_spec
from mqlog.platforms import choose
from mqlog.rundir import load_run
from mqlog.usecases import carry_on, restart, run

LONG_UOW = {"background": 2, "duration": 0.05}


def config(**options) -> RunConfig:
    choice = choose("distributed")
    values = choice.configure({})
    return RunConfig("distributed", choice.maker(values), values, build_spec(BUILTINS["long-uow"], LONG_UOW, origin=""),
                     **options)


def resolve(workload: str, sets: dict):
    """What the command line's --workload NAME gives: the built-in with the sets over it."""
    return build_spec(BUILTINS[workload], sets["workload"], origin=""), sets["log"], None, qmgr_settings({})


class Shown:
    """A caller's progress: every update it was given, and whether it was closed."""

    def __init__(self):
        self.updates, self.closed = [], False

    def update(self, *figures):
        self.updates.append(figures)

    def close(self):
        self.closed = True


def test_a_run_crash_restart_and_carry_on_keep_the_directory_without_the_command_line(tmp_path, capsys):
    d = tmp_path / "qm"
    shown = Shown()
    result = run(config(crash_at_s=0.03), out=d, device="ssd", qmgr={}, progress=lambda: shown)
    assert result.crashed and shown.closed
    record = load_run(d)
    assert (record.platform, record.workload, record.crashed, record.finished) == ("distributed", "long-uow", True, True)

    restarted = restart(d, verify=True, log_sets={"LogPrimaryFiles": "5"})
    assert restarted.verdict.ok and restarted.unverifiable is None
    assert restarted.changed == {"LogPrimaryFiles": [3, 5]}
    assert restarted.restarted_after == record.ended and restarted.report.uows_backed_out > 0
    assert [h["command"] for h in load_run(d).history] == ["run", "restart"]

    started = []
    carried = carry_on(d, resolve=resolve, sets={"workload": {"duration": 0.01}, "log": {}},
                       starting=lambda spec, platform, seed: started.append((spec.workload, platform, seed)))
    assert carried.verdict.ok and not carried.result.crashed and carried.changed == {}
    assert started == [("long-uow", "distributed", 0)]
    after = load_run(d)
    assert [h["command"] for h in after.history] == ["run", "restart", "run --in"]
    assert after.finished and after.journal_complete and after.params["duration"] == 0.01

    again = restart(d, verify=True)
    assert again.verdict.ok and again.restarted_after == after.ended
    assert capsys.readouterr() == ("", "")  # the functions print nothing: the command line does


def test_a_run_in_memory_writes_nothing_and_a_used_directory_is_refused(tmp_path):
    result = run(config())
    assert not result.crashed and result.metrics["messages_put"] > 0 and list(tmp_path.iterdir()) == []
    run(config(), out=tmp_path / "qm", device="ssd", qmgr={})
    with pytest.raises(MqlogError, match="already holds a run"):
        run(config(), out=tmp_path / "qm", device="ssd", qmgr={})


def test_carrying_on_after_a_process_that_died_is_refused_before_anything_runs(tmp_path):
    d = tmp_path / "qm"
    run(config(crash_at_s=0.03), out=d, device="ssd", qmgr={})
    (d / "journal.json").unlink()
    with pytest.raises(MqlogError, match="no journal.json to verify the restart against"):
        carry_on(d, resolve=resolve)
    assert [h["command"] for h in load_run(d).history] == ["run"]
