"""``mqlog sweep`` over topologies (issue 42): a grid of topology runs – channel attributes
(BATCHSZ, BATCHINT, ...), the link (latency_us, ...), the workload's parameters and seeds – one
Spark task a cell, one Parquet row a queue manager a cell.

Every queue manager of a topology runs in the one task of its cell, because they share one
virtual time (:func:`mqlog.core.workload.topology.run_topology`): a channel's batch waits on its
partner's log forces. The cells are independent, so a sweep parallelises as a sweep of single
queue managers does. A topology sweep is a sweep document whose ``topology`` field names a
built-in topology or a topology spec file (``mqlog topology list``)::

    topology = "zos-linux-feed"     # a built-in topology, or a topology spec file
    seeds = [0, 1]                  # default [0]
    [set]                           # held fixed, as --set items: workload.X, channel.X, link.X
    workload.messages_per_putter = 100
    [grid]                          # swept (lists), the same keys
    channel.BATCHSZ = [1, 10, 50]
    channel.BATCHINT = [0, 20]
    link.latency_us = [250, 5000]
    [plot]                          # optional: what the report draws
    x = "channel.BATCHSZ"           # a swept key [default: the first]
    y = "writes_per_message"        # a row's figure [default: writes_per_message]

``channel.X`` sets attribute X (BATCHSZ, BATCHINT, BATCHLIM, NPMSPEED, PIPELINELENGTH) on every
channel of the topology and ``link.X`` every channel's link, as ``mqlog topology run --set``
does. Every cell's topology is built and checked on the driver before Spark starts, so an
unknown key, a value out of MQ's range (BATCHSZ 1-9999) or an unknown topology is one line
naming the field.

A row carries the queue manager's run metrics (those of a one-queue-manager sweep, so ``mqlog
report`` and the console table read it), ``qmgr``, ``topology``, the swept values (``sweep``),
the log per delivered message (``writes_per_message``, ``log_bytes_per_message``,
``records_per_message``, ``forces_per_message``; delivered: the messages every channel moved)
and its channels' figures: the batches and messages it sent (``sent_batches``,
``sent_messages``, ``messages_per_batch``, ``in_doubt_ms``: the time its sender was in doubt, as
DISPLAY CHSTATUS's batches and IBM's "in-doubt" window) and those it received
(``received_batches``, ``received_messages``); and, swept or not, the BATCHSZ, BATCHINT and link
latency in force (``channel_batchsz``, ``channel_batchint_ms``, ``link_latency_us``: of the first
channel the queue manager sends on, else receives on), as columns to group by.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from pathlib import Path

from mqlog.core.errors import MqlogError

#: the fields a topology sweep document may have
TOPOLOGY_SWEEP_FIELDS = ("topology", "seeds", "set", "grid", "plot")
#: the sections a set or grid key names (mqlog topology run --set's)
SECTIONS = ("workload", "channel", "link")
#: the figure a topology sweep's plot draws unless its document says
DEFAULT_Y = "writes_per_message"
#: the headline columns of a topology sweep's table: (label, row key)
TOPOLOGY_COLUMNS = (("log records", "log_records"), ("physical writes", "physical_writes"), ("forces", "forces"),
                    ("logical bytes", "logical_bytes"), ("writes/msg", "writes_per_message"),
                    ("log B/msg", "log_bytes_per_message"), ("batches sent", "sent_batches"),
                    ("msgs/batch", "messages_per_batch"), ("in doubt ms", "in_doubt_ms"),
                    ("batches received", "received_batches"))


def is_topology_sweep(doc: dict) -> bool:
    return isinstance(doc, dict) and "topology" in doc


def _keys(table, origin: str, field: str, *, lists: bool) -> dict[str, object]:
    """A [set] or [grid] table as ``{"section.KEY": value}``: TOML's dotted keys
    (``channel.BATCHSZ = ...``, a table ``channel``) and quoted ones (``"channel.BATCHSZ"``)."""
    from mqlog.core.workload.topology import TOPOLOGY_WORKLOADS
    from mqlog.topology import CHANNEL_ATTRIBUTES, LINK_KEYS

    if not isinstance(table, dict):
        raise MqlogError(f"{origin}: field {field!r} must be a table of workload.X, channel.X, link.X")
    flat = {}
    for section, value in table.items():
        if isinstance(value, dict):
            flat.update({f"{section}.{k}": v for k, v in value.items()})
        else:
            flat[section] = value
    known = {"workload": {k for w in TOPOLOGY_WORKLOADS.values() for k in w}, "channel": set(CHANNEL_ATTRIBUTES),
             "link": set(LINK_KEYS)}
    for key, value in flat.items():
        section, dot, name = key.partition(".")
        if not dot or section not in SECTIONS:
            raise MqlogError(f"{origin}: {field}.{key}: give workload.X, channel.X or link.X")
        if (name.upper() if section == "channel" else name) not in known[section]:
            raise MqlogError(f"{origin}: {field}.{key}: unknown {section} key {name!r} "
                             f"(known: {', '.join(sorted(known[section]))})")
        if lists and (not isinstance(value, list) or not value):
            raise MqlogError(f"{origin}: {field}.{key} must be a non-empty list")
    return flat


def _sets(items: dict[str, object]) -> dict[str, dict[str, object]]:
    """``{"channel.BATCHSZ": 10}`` as :func:`mqlog.topology.apply_sets` takes it."""
    out: dict[str, dict[str, object]] = {}
    for key, value in items.items():
        section, _, name = key.partition(".")
        out.setdefault(section, {})[name] = value
    return out


def topology_cells(doc: dict, *, origin: str = "sweep", host: str | None = None) -> list[dict]:
    """The sweep's cells, each a task for :func:`run_topology_cell` (the topology's spec
    document and the cell's set items: the task needs no file), with its ``sweep`` values and
    ``key``; every cell's topology built and checked here, errors naming the field."""
    from mqlog.topology import build, builtins, read_spec, apply_sets

    unknown = sorted(set(doc) - set(TOPOLOGY_SWEEP_FIELDS))
    if unknown:
        raise MqlogError(f"{origin}: unknown field {unknown[0]!r} (a topology sweep has "
                         f"{', '.join(TOPOLOGY_SWEEP_FIELDS)})")
    if host is not None:  # each queue manager's host is its topology's
        raise MqlogError(f"{origin}: a topology sweep's hosts are its topology's (qmgr.host); give no --host")
    source = doc["topology"]
    if not isinstance(source, str):
        raise MqlogError(f"{origin}: field 'topology' must be a built-in topology's name or a spec file")
    try:
        document, spec_origin = read_spec(source)
    except MqlogError as exc:
        raise MqlogError(f"{origin}: field 'topology': {exc}") from None
    seeds = doc.get("seeds", [0])
    if not isinstance(seeds, list) or not seeds or any(type(s) is not int for s in seeds):
        raise MqlogError(f"{origin}: field 'seeds' must be a non-empty list of whole numbers, got {seeds!r}")
    fixed = _keys(doc.get("set", {}), origin, "set", lists=False)
    grid = _keys(doc.get("grid", {}), origin, "grid", lists=True)
    axes = list(grid.items())
    name = source if source in builtins() else Path(source).stem
    out = []
    for values in itertools.product(*[v for _, v in axes]):
        swept = {k: v for (k, _), v in zip(axes, values)}
        for seed in seeds:
            try:
                topology = build(apply_sets(document, _sets({**fixed, **swept})), spec_origin, seed=seed)
            except MqlogError as exc:
                where = " ".join(f"grid.{k}={v!r}" for k, v in swept.items()) or "set"
                raise MqlogError(f"{origin}: {where}: {exc}") from None
            qmgrs = topology.document["qmgr"]
            task = {"topology": name, "document": topology.document, "origin": spec_origin, "seed": seed,
                    "sweep": swept, "name": name, "params": dict(topology.document["params"]),
                    "device": "+".join(q["device"] for q in qmgrs), "host": "+".join(q["host"] for q in qmgrs)}
            task["key"] = hashlib.sha256(json.dumps({"topology": topology.document, "seed": seed}, sort_keys=True,
                                                    default=str).encode()).hexdigest()[:24]
            out.append(task)
    _check_plot(doc, grid, origin)
    return out


def _check_plot(doc: dict, grid: dict, origin: str) -> None:
    plot = doc.get("plot", {})
    if not isinstance(plot, dict) or set(plot) - {"x", "y"}:
        raise MqlogError(f"{origin}: field 'plot' must be a table of x and y")
    if "x" in plot and plot["x"] not in grid:
        raise MqlogError(f"{origin}: plot.x {plot['x']!r} is not a key this sweep varies "
                         f"({', '.join(grid) if grid else 'it varies none'})")
    if not isinstance(plot.get("y", DEFAULT_Y), str):
        raise MqlogError(f"{origin}: plot.y must be a string")


def plot_of(doc: dict, rows: list[dict] | None = None) -> dict:
    """What the report draws: the document's plot, x defaulting to its first swept key."""
    plot = dict(doc.get("plot") or {})
    swept = list(_keys(doc.get("grid", {}), "sweep", "grid", lists=True)) if doc else []
    if not swept and rows:
        swept = sorted({k for r in rows for k in r.get("sweep") or {}})
    if "x" not in plot and swept:
        plot["x"] = swept[0]
    plot.setdefault("y", DEFAULT_Y)
    return plot


def describe_topology_sweep(doc: dict, tasks: list[dict]) -> dict:
    """What ``sweep --list --json`` reports of a topology sweep: the topology, the fixed set
    items, its queue managers, every swept axis with its values, and the number of runs; each
    also as a line of text, as a sweep's (:func:`mqlog.spark.sweep.describe_sweep`)."""
    from mqlog.spark.htmlreport import values_text

    grid = _keys(doc.get("grid", {}), "sweep", "grid", lists=True)
    fixed = _keys(doc.get("set", {}), "sweep", "set", lists=False)
    axes = [{"name": k, "values": list(v)} for k, v in grid.items()]
    if len(doc.get("seeds", [0])) > 1:
        axes.append({"name": "seed", "values": list(doc["seeds"])})
    for axis in axes:
        axis["text"] = f"{axis['name']} {values_text(axis['values'])}"
    qmgrs = tasks[0]["document"]["qmgr"] if tasks else []
    return {"topology": doc["topology"], "set": fixed, "qmgrs": [q["name"] for q in qmgrs], "axes": axes,
            "runs": len(tasks),
            "workload_text": ", ".join([f"`{doc['topology']}`", *(f"{k}={v}" for k, v in fixed.items())]),
            "configurations_text": "; ".join(f"`{q['name']}` ({q['platform']}, {q['device']})" for q in qmgrs),
            "swept_text": " × ".join(a["text"] for a in axes) + f" ({len(tasks)} runs)"}


def _per(count: float, delivered: int) -> float:
    return round(count / delivered, 4) if delivered else 0.0


def run_topology_cell(task: dict) -> list[dict]:
    """One cell (in an executor): the whole topology in memory, a row per queue manager."""
    from mqlog.topology import build, run

    topology = build(task["document"], task["origin"], seed=task["seed"])
    result = run(topology)
    delivered = sum(c["messages_sent"] for c in result.channels.values())
    rows = []
    for order, q in enumerate(topology.config.qmgrs):
        m = dict(result.metrics[q.name])
        sent = [result.channels[c.name] for c in topology.config.channels if c.sender == q.name]
        received = [result.channels[c.name] for c in topology.config.channels if c.receiver == q.name]
        batches, messages = sum(c["batches"] for c in sent), sum(c["messages_sent"] for c in sent)
        # the effective attributes (swept or not), of the first channel this end sends on, else receives on
        own = next((c for c in topology.config.channels if c.sender == q.name), None) or next(
            c for c in topology.config.channels if c.receiver == q.name)
        m.update({"config_name": q.name, "qmgr": q.name, "qmgr_order": order, "topology": task["topology"],
                  "cell_key": task["key"], "sweep": dict(task["sweep"]), "messages_delivered": delivered,
                  "writes_per_message": _per(m["physical_writes"], delivered),
                  "log_bytes_per_message": _per(m["logical_bytes"], delivered),
                  "records_per_message": _per(m["log_records"], delivered),
                  "forces_per_message": _per(m["forces"], delivered),
                  "sent_batches": batches, "sent_messages": messages,
                  "messages_per_batch": round(messages / batches, 4) if batches else 0.0,
                  "in_doubt_ms": round(sum(c["in_doubt_us"] for c in sent) / 1000, 3),
                  "received_batches": sum(c["batches"] for c in received),
                  "received_messages": sum(c["messages_sent"] for c in received),
                  "channel_batchsz": own.batchsz, "channel_batchint_ms": own.batchint_ms,
                  "link_latency_us": own.link.latency_us,
                  "channels": {c.name: result.channels[c.name] for c in topology.config.channels
                               if q.name in (c.sender, c.receiver)}})
        rows.append(m)
    return rows


def topology_figures(rows: list[dict], plot: dict) -> str:
    """The report's figure: one panel per queue manager, side by side on one y scale, each
    drawing ``plot["y"]`` against ``plot["x"]`` with a line for every combination of the other
    swept keys (seeds averaged, as the caption says)."""
    import html

    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    from mqlog.spark.htmlreport import _png, axis_order, axis_value, sweep_axes

    x_key, y_key = plot.get("x"), plot.get("y", DEFAULT_Y)
    qmgrs = list(dict.fromkeys(r["qmgr"] for r in sorted(rows, key=lambda r: (r.get("qmgr_order", 0), r["qmgr"]))))
    if not x_key or not qmgrs:
        return ""
    others = [a for a in sweep_axes(rows) if a not in (x_key, "seed", "configuration", "device", "host")]
    fig, panels = plt.subplots(1, len(qmgrs), figsize=(4.2 * len(qmgrs), 3.6), sharey=True, squeeze=False)
    for qmgr, ax in zip(qmgrs, panels[0]):
        series: dict[tuple, dict] = {}
        for r in rows:
            if r["qmgr"] == qmgr and r.get(y_key) is not None and axis_value(r, x_key) is not None:
                label = tuple(axis_value(r, a) for a in others)
                series.setdefault(label, {}).setdefault(axis_value(r, x_key), []).append(r[y_key])
        numeric = all(axis_order(x)[0] == 0 for s in series.values() for x in s)
        for label, points in sorted(series.items(), key=lambda kv: [axis_order(v) for v in kv[0]]):
            xs = sorted(points, key=axis_order)
            ys = [sum(points[x]) / len(points[x]) for x in xs]
            ax.plot(xs if numeric else [str(x) for x in xs], ys, marker="o",
                    label=", ".join(f"{a}={v}" for a, v in zip(others, label)) or qmgr)
        platform = next(r["platform"] for r in rows if r["qmgr"] == qmgr)
        ax.set_title(f"{qmgr} ({platform})")
        ax.set_xlabel(x_key)
        if others:
            ax.legend(fontsize=7)
    panels[0][0].set_ylabel(y_key)
    fig.tight_layout()
    seeds = sorted({r.get("seed") for r in rows}, key=axis_order)
    caption = (f"{y_key} against {x_key}, a panel per queue manager"
               + (f", a line per {' and '.join(others)}" if others else "")
               + (f", mean of seeds {', '.join(map(str, seeds))}" if len(seeds) > 1 else ""))
    out = (f"<figure><img alt='{html.escape(y_key)}' src='data:image/png;base64,{_png(fig)}'>"
           f"<figcaption>{html.escape(caption)}</figcaption></figure>")
    plt.close(fig)
    return out


def render_topology_sweep(rows: list[dict], *, title: str, plot: dict) -> str:
    """A topology sweep's report page: the side-by-side panels and a row per queue manager
    per cell (the table of a sweep, with the channel's and per-message figures)."""
    from mqlog.spark.htmlreport import render_sweep

    return render_sweep(rows, title=title, figures=topology_figures(rows, plot), columns=TOPOLOGY_COLUMNS)
