"""``mqlog calibrate``'s Spark path: each run of a case is one Spark task, and the case gives
the figures it gives in-process."""

from __future__ import annotations

import tomllib

import pytest

from mqlog.calibration.cases import parse_cases, run_case
from mqlog.spark.calibrate import run_cases

pytestmark = pytest.mark.spark

CASE = """
[S1]
title = "one thread's loop, SingleWrite"
source = "a test"
[S1.runs.sw]
workload = "putget"
params = { apps = 1, messages = 30, message_size = 512 }
log = { LogWriteIntegrity = "SingleWrite" }
[S1.runs.tw]
workload = "putget"
params = { apps = 1, messages = 300, message_size = 512 }
log = { LogWriteIntegrity = "TripleWrite" }
[[S1.figures]]
name = "writes_per_iteration"
compute = "per_round_trip"
metric = "sw.physical_writes"
ibm = 2
tolerance = [2.0, 2.4]
"""


def test_a_cases_runs_run_as_spark_tasks_with_the_figures_it_gives_in_process(spark):
    cases = parse_cases(tomllib.loads(CASE), "test")
    seen = []
    results = run_cases(spark, cases, progress=lambda r, done, total: seen.append((r["id"], done, total)))
    assert seen == [("S1", 1, 1)]
    # one result a case, when its last run is in; its runs in the case's order (tw, ten times
    # longer, arrives last but is second either way)
    assert results["S1"] == run_case(cases["S1"]) and list(results["S1"]["runs"]) == ["sw", "tw"]
    assert results["S1"]["figures"]["writes_per_iteration"]["model"] > 0


def test_cases_that_share_runs_have_them_run_once(spark, monkeypatch):
    import mqlog.spark.session as session

    shared = CASE + """
[S2]
title = "S1's runs, another figure"
source = "a test"
runs_from = "S1"
[[S2.figures]]
name = "tw_writes_per_iteration"
compute = "per_round_trip"
metric = "tw.physical_writes"
ibm = 2
tolerance = [1.0, 3.0]
"""
    cases = parse_cases(tomllib.loads(shared), "test")
    ran = []
    real = session.run_tasks
    monkeypatch.setattr(session, "run_tasks", lambda spark, tasks, *a, **k: ran.append(len(tasks)) or real(
        spark, tasks, *a, **k))
    results = run_cases(spark, cases)
    assert ran == [2]  # S1's two runs, once
    assert results["S2"]["runs"] == results["S1"]["runs"] == run_case(cases["S1"])["runs"]
    assert results["S2"]["figures"]["tw_writes_per_iteration"]["model"] > 0
    # chosen alone, a sharing case runs the runs itself
    alone = run_cases(spark, {"S2": cases["S2"]})
    assert alone["S2"]["runs"] == results["S1"]["runs"]

