"""``mqlog calibrate``'s Spark job: each calibration case is one Spark task, which runs the
case's runs and computes its figures (:func:`mqlog.calibration.cases.run_case`), as
``mqlog sweep`` runs each cell; local by default, or on ``--master``."""

from __future__ import annotations


def _run_case_task(task: dict) -> dict:
    from mqlog.calibration.cases import run_case

    return run_case(task["case"], task["device"], task.get("host"))


def run_cases(spark, cases: dict, *, device: str | None = None, host: str | None = None, progress=None) -> dict:
    """Every case of ``cases`` as one Spark task; the results by case id."""
    from mqlog.spark.session import run_tasks

    tasks = [{"case": case, "device": device, "host": host} for case in cases.values()]
    results = run_tasks(spark, tasks, _run_case_task, what="a calibration case failed", progress=progress)
    return {r["id"]: r for r in results}
