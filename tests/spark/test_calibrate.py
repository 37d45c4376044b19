"""``mqlog calibrate``'s Spark path: a case runs as one Spark task and gives the figures it
gives in-process."""

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
[[S1.figures]]
name = "writes_per_iteration"
compute = "per_round_trip"
metric = "sw.physical_writes"
ibm = 2
tolerance = [2.0, 2.4]
"""


def test_a_case_runs_as_a_spark_task_with_the_figures_it_gives_in_process(spark):
    cases = parse_cases(tomllib.loads(CASE), "test")
    seen = []
    results = run_cases(spark, cases, progress=lambda r, done, total: seen.append((r["id"], done, total)))
    assert seen == [("S1", 1, 1)]
    assert results["S1"]["figures"] == run_case(cases["S1"])["figures"]
    assert results["S1"]["figures"]["writes_per_iteration"]["model"] > 0
