"""``mqlog sweep``: a grid of runs – workload parameters, log parameters of either platform,
device profiles, host profiles and seeds – as Spark tasks, results to Parquet partitioned by platform.

A sweep is a TOML document::

    workload = "long-uow"           # a built-in workload
    seeds = [0, 1]                  # default [0]
    devices = ["ssd"]               # default ["ssd"]
    hosts = ["v93-xeon"]            # default [the host mqlog sweep --host names, else v93-xeon]
    [params]                        # workload parameters held fixed
    duration = 0.3
    [grid]                          # workload parameters swept (lists)
    background = [2, 4]
    [[config]]                      # the configurations (as for mqlog compare)
    name = "dist"
    platform = "distributed"
    [config.log]
    LogFilePages = 64
    [config.sweep]                  # this configuration's log parameters swept (lists)
    LogPrimaryFiles = [2, 3, 4]
    [config.qmgr]                   # optional: queue manager attributes (MAXUMSGS, MAXDEPTH)
    MAXUMSGS = 100000
    [plot]                          # optional: what the report draws
    x = "log.LogPrimaryFiles"       # a swept parameter ("log.X" or "workload.X")
    y = "uows_rolled_back"          # a metric

The cells are the cross product. Each has a key (a hash of everything that decides its run),
so re-running a sweep into the same directory skips the cells already there. The built-in
sweeps (:data:`BUILTIN_SWEEPS`) answer the questions of docs/guide/.
"""

from __future__ import annotations

import hashlib
import itertools
import json
try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]
from pathlib import Path

from mqlog.core.errors import MqlogError
from mqlog.spark.compare import cell_qmgr, check_matrix, read_toml, run_cell

BUILTIN_SWEEPS: dict[str, str] = {
    "log-size-vs-rollbacks": """
# How big must the active log be before a long unit of work stops being rolled back?
workload = "long-uow"
[params]
duration = 0.3
background = 4
[[config]]
name = "dist-circular"
platform = "distributed"
[config.log]
LogFilePages = 64
[config.sweep]
LogPrimaryFiles = [2, 3, 4, 6]
[plot]
x = "log.LogPrimaryFiles"
y = "uows_rolled_back"
""",
    "complog-vs-payload": """
# What does COMPLOG buy for each kind of message body?
workload = "putget-pairs"
[params]
pairs = 2
messages_per_pair = 150
message_size = 4000
[grid]
payload = ["random", "text", "padded-records", "mixed"]
[[config]]
name = "zos-none"
platform = "zos"
[config.log]
COMPLOG = "NONE"
[[config]]
name = "zos-rle"
platform = "zos"
[config.log]
COMPLOG = "RLE"
[plot]
x = "workload.payload"
y = "logical_bytes"
""",
    "logload-vs-shunting": """
# How often is a long unit of work shunted, and how much does restart read, as LOGLOAD varies?
workload = "long-uow"
[params]
duration = 0.3
background = 4
[[config]]
name = "zos-dual"
platform = "zos"
[config.log]
ACTIVE_LOG_CIS = 64
[config.sweep]
LOGLOAD = [200, 1000, 5000, 20000]
[plot]
x = "log.LOGLOAD"
y = "shunts"
""",
    "dual-vs-single": """
# What does dual logging cost, as concurrency grows?
workload = "requester-responder"
[params]
duration = 0.2
[grid]
requesters = [1, 4, 16]
[[config]]
name = "zos-dual"
platform = "zos"
[config.log]
TWOACTV = "YES"
TWOARCH = "NO"
[[config]]
name = "zos-single"
platform = "zos"
[config.log]
TWOACTV = "NO"
TWOARCH = "NO"
[plot]
x = "workload.requesters"
y = "commits"
""",
    "write-integrity-vs-concurrency": """
# SingleWrite against TripleWrite as concurrency grows: TripleWrite's extra writes shrink.
workload = "requester-responder"
[params]
duration = 0.2
[grid]
requesters = [1, 4, 16]
[[config]]
name = "triple"
platform = "distributed"
[config.log]
LogWriteIntegrity = "TripleWrite"
[[config]]
name = "single"
platform = "distributed"
[config.log]
LogWriteIntegrity = "SingleWrite"
[plot]
x = "workload.requesters"
y = "physical_writes"
""",
    "batchsz-vs-channel-log": """
# How do BATCHSZ (1, 10, 50) and BATCHINT change log writes per message on both ends of a channel?
# (a z/OS queue manager feeding a Linux one: mqlog.spark.topologysweep)
topology = "zos-linux-feed"
[grid]
channel.BATCHSZ = [1, 10, 50]
channel.BATCHINT = [0, 20]
[plot]
x = "channel.BATCHSZ"
y = "writes_per_message"
""",
}


def load_sweep(source: str) -> tuple[str, dict]:
    """A built-in sweep's name, or a TOML file: (name, parsed document)."""
    if source in BUILTIN_SWEEPS:
        return source, tomllib.loads(BUILTIN_SWEEPS[source])
    path = Path(source)
    if not path.is_file():
        raise MqlogError(f"no sweep {source!r}: built-ins are {', '.join(BUILTIN_SWEEPS)}, or give a TOML file")
    return path.stem, read_toml(path, "sweep")


#: the fields a sweep document, each of its [[config]] tables and its [plot] table may have
SWEEP_FIELDS = ("workload", "seeds", "devices", "hosts", "params", "grid", "config", "plot")
CONFIG_FIELDS = ("name", "platform", "log", "qmgr", "sweep")
PLOT_FIELDS = ("x", "y")


def check_plot(doc: dict, tasks: list[dict], *, origin: str = "sweep") -> None:
    """The [plot] table, if any: x and y strings, x one of the parameters the sweep varies
    (else the report's plot would be empty); errors name the field."""
    plot = doc.get("plot")
    if plot is None:
        return
    if not isinstance(plot, dict):
        raise MqlogError(f"{origin}: field 'plot' must be a table (x, y)")
    unknown = sorted(set(plot) - set(PLOT_FIELDS))
    if unknown:
        raise MqlogError(f"{origin}: plot: unknown field {unknown[0]!r} (x, y)")
    for key in PLOT_FIELDS:
        if not isinstance(plot.get(key), str):
            raise MqlogError(f"{origin}: plot.{key} must be a string")
    swept = sorted({k for task in tasks for k in task["sweep"]})
    if plot["x"] not in swept:
        raise MqlogError(f"{origin}: plot.x {plot['x']!r} is not a parameter this sweep varies "
                         f"({', '.join(swept) if swept else 'it varies none'})")


def _check_profiles(origin: str, field: str, kind: str, names: list, get) -> None:
    """Every name in a sweep's ``hosts`` or ``devices`` a profile ``get`` knows (before any
    work starts): one line naming the field otherwise."""
    for name in names:
        if not isinstance(name, str):
            raise MqlogError(f"{origin}: field '{field}' must be a list of {kind} profile names or files")
        try:
            get(name)
        except MqlogError as exc:
            raise MqlogError(f"{origin}: {field}: {exc}") from None


def cells(doc: dict, *, origin: str = "sweep", host: str | None = None) -> list[dict]:
    """The sweep's cells, each a task for :func:`mqlog.spark.compare.run_cell` plus its
    ``sweep`` values and ``key``; errors name the field. ``host``: the host profile of a
    document that names no ``hosts`` (naming both is an error: which one would it be?)."""
    from mqlog.core.host.profiles import DEFAULT_HOST, get_host
    from mqlog.core.workload.spec import BUILTINS, build_spec
    from mqlog.spark.topologysweep import is_topology_sweep, topology_cells

    if is_topology_sweep(doc):  # a topology in every cell (issue 42)
        return topology_cells(doc, origin=origin, host=host)

    def need(key, kind, default=None):
        value = doc.get(key, default)
        if not isinstance(value, kind):
            raise MqlogError(f"{origin}: field {key!r} must be a {kind.__name__}")
        return value

    unknown = sorted(set(doc) - set(SWEEP_FIELDS))
    if unknown:  # a misspelt table would otherwise be ignored, and the sweep be another one
        raise MqlogError(f"{origin}: unknown field {unknown[0]!r} ({', '.join(SWEEP_FIELDS)})")
    for required, what in (("workload", "the built-in workload every cell runs, e.g. workload = \"long-uow\""),
                           ("config", "at least one [[config]] table: name, platform, [config.log]")):
        if required not in doc:
            raise MqlogError(f"{origin}: field {required!r} is missing: {what}")
    workload = need("workload", str)
    if workload not in BUILTINS:
        raise MqlogError(f"{origin}: field 'workload': unknown workload {workload!r}")
    seeds, devices = need("seeds", list, [0]), need("devices", list, ["ssd"])
    if host is not None and "hosts" in doc:
        raise MqlogError(f"{origin}: names its hosts; --host {host} would contradict them (give one or the other)")
    hosts = need("hosts", list, [host or DEFAULT_HOST])
    from mqlog.core.disk.devices import get_profile

    _check_profiles(origin, "hosts", "host", hosts, get_host)
    _check_profiles(origin, "devices", "device", devices, get_profile)
    for seed in seeds:
        if type(seed) is not int:  # a seed "1" is a string, refused as a spec file refuses one
            raise MqlogError(f"{origin}: field 'seeds' must be a list of whole numbers, got {seed!r}")
    params, grid = need("params", dict, {}), need("grid", dict, {})
    configs = need("config", list)
    for key, values in grid.items():
        if not isinstance(values, list) or not values:
            raise MqlogError(f"{origin}: grid.{key} must be a non-empty list")
    # the values are TOML's, typed: a string where a number belongs is refused naming the field
    # (params.X, grid.X), as a workload spec file refuses one, never read as the number
    build_spec(BUILTINS[workload], params, origin=origin, section="params", text=False)
    for key, values in grid.items():
        for value in values:
            build_spec(BUILTINS[workload], {key: value}, origin=origin, section="grid", text=False)
    out = []
    for config in configs:
        if not isinstance(config, dict) or not isinstance(config.get("name"), str):
            raise MqlogError(f"{origin}: each [[config]] needs a name")
        unknown = sorted(set(config) - set(CONFIG_FIELDS))
        if unknown:
            raise MqlogError(f"{origin}: config {config['name']!r}: unknown field {unknown[0]!r} "
                             f"({', '.join(CONFIG_FIELDS)}; a sweep has no crash, so no restart_mode)")
        if not isinstance(config.get("log", {}), dict):
            raise MqlogError(f"{origin}: config {config['name']!r}: field 'log' must be a table")
        sweep = config.get("sweep", {})
        if not isinstance(sweep, dict) or not all(isinstance(v, list) and v for v in sweep.values()):
            raise MqlogError(f"{origin}: config {config['name']!r}: sweep values must be non-empty lists")
        qmgr = cell_qmgr(config, f"{origin}: config {config['name']!r}")
        log_axes = sorted(sweep.items())
        work_axes = sorted(grid.items())
        for log_values in itertools.product(*[v for _, v in log_axes]):
            log = dict(config.get("log", {}))
            log.update({k: v for (k, _), v in zip(log_axes, log_values)})
            try:
                (cell,) = check_matrix([{"name": config["name"], "platform": config.get("platform", ""),
                                         "log": {k: str(v) for k, v in log.items()}}])
            except MqlogError as exc:
                raise MqlogError(f"{origin}: {exc}") from None
            for work_values in itertools.product(*[v for _, v in work_axes]):
                chosen = dict(params)
                chosen.update({k: v for (k, _), v in zip(work_axes, work_values)})
                spec = build_spec(BUILTINS[workload], chosen, origin=f"{origin} ({config['name']})", text=False)
                for seed, device, host_name in itertools.product(seeds, devices, hosts):
                    swept = {f"log.{k}": v for (k, _), v in zip(log_axes, log_values)}
                    swept.update({f"workload.{k}": v for (k, _), v in zip(work_axes, work_values)})
                    task = dict(cell, workload=workload, params=dict(spec.params), seed=int(seed),
                                device=str(device), host=host_name, sweep=swept, qmgr=qmgr)
                    task["key"] = cell_key(task)
                    out.append(task)
    check_plot(doc, out, origin=origin)
    return out


def describe_sweep(doc: dict, tasks: list[dict]) -> dict:
    """What a sweep (its document, checked by :func:`cells`, and its cells) runs, as
    ``sweep --list --json`` reports it: the workload and its fixed parameters, each
    configuration and what it sets, every swept axis (a configuration's log parameters, the
    workload's grid, devices, hosts, seeds when more than one) with its values, and the
    number of runs; each also as a line of text."""
    from mqlog.spark.compare import describe_matrix
    from mqlog.spark.htmlreport import values_text
    from mqlog.spark.topologysweep import describe_topology_sweep, is_topology_sweep

    if is_topology_sweep(doc):
        return describe_topology_sweep(doc, tasks)

    params = doc.get("params", {})
    configurations = describe_matrix([{"name": c["name"], "platform": c.get("platform", ""),
                                       "log": {k: str(v) for k, v in c.get("log", {}).items()},
                                       **({"qmgr": c["qmgr"]} if c.get("qmgr") else {})}
                                      for c in doc["config"]])
    axes: list[dict] = []
    log_axes = [sorted(c.get("sweep", {}).items()) for c in doc["config"]]
    shared = all(a == log_axes[0] for a in log_axes)
    for config, own in zip(doc["config"], log_axes):
        for name, values in own:
            axes.append({"name": name, "values": list(values), "configurations": None if shared else [config["name"]]})
        if shared:
            break
    for name, values in sorted(doc.get("grid", {}).items()):
        axes.append({"name": name, "values": list(values), "configurations": None})
    for field, name in (("devices", "device"), ("hosts", "host"), ("seeds", "seed")):
        if len(doc.get(field, [])) > 1:
            axes.append({"name": name, "values": list(doc[field]), "configurations": None})
    for axis in axes:
        axis["text"] = f"{axis['name']} {values_text(axis['values'])}" + (
            f" ({', '.join(axis['configurations'])})" if axis["configurations"] else "")
    return {"workload": doc["workload"], "params": dict(params), "configurations": configurations, "axes": axes,
            "runs": len(tasks),
            "workload_text": ", ".join([f"`{doc['workload']}`", *(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}"
                                                                   for k, v in sorted(params.items()))]),
            "configurations_text": "; ".join(f"`{c['name']}` ({c['platform_title']}: {c['settings']})"
                                             for c in configurations),
            "swept_text": " × ".join(a["text"] for a in axes) + f" ({len(tasks)} runs)"}


def cell_key(task: dict) -> str:
    """What decides a run, hashed: the same key means the same result."""
    decisive = {k: task[k] for k in ("platform", "values", "workload", "params", "seed", "device", "host")}
    if task.get("qmgr"):  # only when set: the cells of a sweep without any keep the keys they had
        decisive["qmgr"] = task["qmgr"]
    return hashlib.sha256(json.dumps(decisive, sort_keys=True, default=str).encode()).hexdigest()[:24]


def run_sweep_cell(task: dict) -> dict:
    metrics = run_cell(task)
    metrics["cell_key"] = task["key"]
    metrics["sweep"] = dict(task["sweep"])
    return metrics


def done_keys(spark, out: Path) -> set[str]:
    results = out / "results"
    if not results.exists():
        return set()
    return {r["cell_key"] for r in spark.read.option("mergeSchema", "true").parquet(str(results))
            .select("cell_key").collect()}


def read_results(spark, out: Path) -> list[dict]:
    """Every cell's row in ``out/results`` (all runs so far), as dicts with ``sweep`` parsed."""
    rows = [r.asDict() for r in spark.read.option("mergeSchema", "true").parquet(str(out / "results")).collect()]
    for row in rows:
        row["sweep"] = json.loads(row["sweep"]) if isinstance(row.get("sweep"), str) else row.get("sweep") or {}
    return rows


def run_sweep(spark, tasks: list[dict], out: Path, *, progress=None) -> tuple[int, int]:
    """Run the cells not yet in ``out/results`` (Parquet, partitioned by platform); returns
    (cells run, cells skipped). A topology sweep's cell is a row per queue manager, each
    given to ``progress``."""
    from mqlog.spark.compare import results_frame
    from mqlog.spark.topologysweep import run_topology_cell

    done = done_keys(spark, out)
    todo = [t for t in tasks if t["key"] not in done]
    if not todo:
        return 0, len(tasks)
    from mqlog.spark.session import run_tasks

    if "topology" in todo[0]:
        each = (lambda rows, done, total: [progress(r, done, total) for r in rows]) if progress else None
        rows = [row for cell in run_tasks(spark, todo, run_topology_cell, what="a topology sweep cell failed",
                                          progress=each) for row in cell]
    else:
        rows = run_tasks(spark, todo, run_sweep_cell, what="a sweep cell failed", progress=progress)
    frame = results_frame(spark, rows)
    frame.write.mode("append").partitionBy("platform").parquet(str(out / "results"))
    return len(todo), len(tasks) - len(todo)
