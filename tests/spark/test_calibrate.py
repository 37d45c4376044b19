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
