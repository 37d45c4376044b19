"""``mqlog torture --master``: a fault campaign's scenarios as Spark tasks.

The driver plans each configuration's campaign (:meth:`mqlog.torture.Campaign.plan`: the
workload's run recorded, every random choice made), cuts its scenarios into batches of
neighbouring crash points and runs each batch as a Spark task; the executor records the
same run again (it is deterministic: the same bytes), materialises each scenario's disk
and restarts on it. The driver tallies the outcomes in the campaign's own order
(:meth:`~mqlog.torture.Campaign.finish`), so the report is identical to a single-process
run with the same seed and budget, whatever order the tasks end in.
"""

from __future__ import annotations

from collections.abc import Callable

#: scenarios a task takes at most: a task re-records the workload's run first, so a batch
#: should be worth that; smaller ones report progress more often
MAX_BATCH = 200


def describe(campaign) -> dict:
    """What an executor needs to rebuild ``campaign`` (plain data)."""
    return {"platform": campaign.platform, "values": dict(campaign.values), "workload": campaign.spec.workload,
            "params": dict(campaign.spec.params), "seed": campaign.seed, "device": campaign.device,
            "host": campaign.host, "budget": campaign.budget, "faults": list(campaign.faults), "restart_mode": campaign.restart_mode,
            "qmgr": dict(campaign.qmgr)}


def rebuild(data: dict):
    """The campaign :func:`describe` described (in an executor)."""
    from mqlog.core.workload.spec import BUILTINS, build_spec
    from mqlog.platforms import choose
    from mqlog.torture import Campaign

    spec = build_spec(BUILTINS[data["workload"]], data["params"], origin="torture")
    return Campaign(data["platform"], data["values"], choose(data["platform"]).maker(data["values"]), spec,
                    seed=data["seed"], device=data["device"], host=data["host"], budget=data["budget"], faults=tuple(data["faults"]),
                    restart_mode=data["restart_mode"], qmgr=data.get("qmgr", {}))


def run_batch(task: dict) -> dict:
    """One batch of one campaign's scenarios (in an executor): their outcomes by index."""
    campaign = rebuild(task["campaign"])
    results = campaign.execute(task["scenarios"])
    return {"campaign": task["index"], "count": len(task["scenarios"]),
            "results": [[i, outcome, detail] for i, (outcome, detail) in sorted(results.items())]}


def batches(scenarios: list, size: int) -> list[list]:
    """``scenarios`` in the order they execute (by crash point), cut into batches of ``size``."""
    ordered = sorted(scenarios, key=lambda s: (s.at, s.index))
    return [ordered[i:i + size] for i in range(0, len(ordered), size)]


def run_campaigns(spark, campaigns: list, *, on_planned: Callable[[int], None] | None = None,
                  progress: Callable[[int], None] | None = None, batch: int | None = None,
                  on_baseline: Callable[[float, int], None] | None = None) -> list:
    """Plan every campaign here, execute their scenarios as Spark tasks, tally them here.
    ``on_planned(total scenarios)`` once planned, ``progress(n)`` as each batch of ``n``
    ends. The campaigns are returned finished."""
    from mqlog.spark.session import run_tasks

    plans = []
    for i, campaign in enumerate(campaigns):
        plans.append(campaign.plan(on_baseline if i == 0 else None))
        campaign._engine = None  # (the driver executes nothing: let the recording go)
    total = sum(len(p) for p in plans)
    if on_planned is not None:
        on_planned(total)
    size = batch or max(1, min(MAX_BATCH, -(-total // (4 * spark.sparkContext.defaultParallelism))))
    tasks = [{"index": i, "campaign": describe(c), "scenarios": part}
             for i, (c, scenarios) in enumerate(zip(campaigns, plans)) for part in batches(scenarios, size)]
    merged: list[dict] = [{} for _ in campaigns]

    def arrived(result, done, count):
        if progress is not None:
            progress(result["count"])

    for result in run_tasks(spark, tasks, run_batch, what="a torture scenario failed", progress=arrived):
        merged[result["campaign"]].update({i: (outcome, detail) for i, outcome, detail in result["results"]})
    for campaign, scenarios, results in zip(campaigns, plans, merged):
        campaign.finish(scenarios, results)
    return campaigns
