"""``mqlog calibrate``'s Spark job: each run of each calibration case is one Spark task
(:func:`mqlog.calibration.cases.run_one`: the run, and its restart if it crashes), as ``mqlog
sweep`` runs each cell; a case's figures are computed on the driver once its runs are in.
Local by default, or on ``--master``. One task a run, not a case, because R1 has eighteen
runs at IBM's scale (a minute each): as one task they would take one core for the lot."""

from __future__ import annotations


def _run_task(task: dict) -> dict:
    from mqlog.calibration.cases import run_one

    return {"id": task["case"]["id"], "run": task["run"],
            "metrics": run_one(task["case"], task["run"], task["device"], task.get("host"))}


def run_cases(spark, cases: dict, *, device: str | None = None, host: str | None = None, progress=None) -> dict:
    """Every run of every case of ``cases`` as one Spark task; each case's result (as
    :func:`~mqlog.calibration.cases.run_case` gives it) by case id, ``progress(result, done,
    total)`` as each case's last run arrives."""
    from mqlog.calibration.cases import figures_of
    from mqlog.spark.session import run_tasks

    # A case that shares another's runs (runs_from) has them run once, under the other's id,
    # when both are chosen
    owner = {case_id: case["runs_from"] if case.get("runs_from") in cases else case_id
             for case_id, case in cases.items()}
    tasks = [{"case": case, "run": name, "device": device, "host": host}
             for case_id, case in cases.items() if owner[case_id] == case_id for name in case["runs"]]
    arrived: dict = {case_id: {} for case_id in cases if owner[case_id] == case_id}
    results: dict = {}

    def on_run(value, _done, _total):
        runs = arrived[value["id"]]
        runs[value["run"]] = value["metrics"]
        for case_id, case in cases.items():
            if owner[case_id] != value["id"] or len(runs) != len(case["runs"]):
                continue
            metrics = {name: runs[name] for name in case["runs"]}  # the case's order, whatever the arrival's
            results[case_id] = {"id": case_id, "runs": metrics, "figures": figures_of(case, metrics)}
            if progress is not None:
                progress(results[case_id], len(results), len(cases))

    run_tasks(spark, tasks, _run_task, what="a calibration run failed", progress=on_run)
    return {case_id: results[case_id] for case_id in cases}
