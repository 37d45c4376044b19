"""The HTML report of a comparison: one self-contained page (no external files or scripts)
with the side-by-side table and the plots an architect would rather look at than read – log
bytes, physical writes, bytes per write, log space used and compression, per configuration.

Plots are drawn with matplotlib (Agg backend, no display) and embedded as base64 PNGs.
"""

from __future__ import annotations

import base64
import html
import io
import json

from mqlog.spark.compare import table_cells
from mqlog.usecases import nothing_measured, short_window, why_nothing_measured

def _colours(rows: list[dict]) -> list[str]:
    """Each row's colour: its platform's palette (the descriptor's; blues unless it has its
    own, z/OS's oranges), in turn among the rows drawn in that palette."""
    from mqlog.core.descriptor import DEFAULT_PALETTE
    from mqlog.platforms import PLATFORMS

    used: dict[tuple, int] = {}
    out = []
    for r in rows:
        descriptor = PLATFORMS.get(r["platform"])
        palette = descriptor.palette if descriptor is not None else DEFAULT_PALETTE
        out.append(palette[used.get(palette, 0) % len(palette)])
        used[palette] = used.get(palette, 0) + 1
    return out


def _png(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight", metadata={"Software": None})
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _json(value):
    """A nested metric: as computed, or as the JSON text a Parquet row holds."""
    return json.loads(value) if isinstance(value, str) else value


def plots(rows: list[dict]) -> list[tuple[str, str]]:
    """(title, base64 PNG) for each plot."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    names = [r["config_name"] for r in rows]
    colours = _colours(rows)
    out = []

    def finish(fig, ax, title: str, *, xlabel: str = "", ylabel: str = "") -> None:
        """Label a line or grouped plot, with a legend of the configurations, and keep it."""
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        ax.legend(fontsize=7)
        out.append((title, _png(fig)))
        plt.close(fig)

    def bars(title: str, values: list[float], ylabel: str):
        fig, ax = plt.subplots(figsize=(7.5, 3.2))
        ax.bar(names, values, color=colours)
        ax.set_title(title)
        ax.set_ylabel(ylabel)
        ax.tick_params(axis="x", rotation=25)
        for i, v in enumerate(values):
            ax.annotate(f"{v:,.0f}", (i, v), ha="center", va="bottom", fontsize=8)
        out.append((title, _png(fig)))
        plt.close(fig)

    fig, ax = plt.subplots(figsize=(7.5, 3.2))
    xs = range(len(rows))
    ax.bar([x - 0.2 for x in xs], [r["logical_bytes"] / 1e6 for r in rows], width=0.4, label="logical (records)",
           color="#7f7f7f")
    ax.bar([x + 0.2 for x in xs], [r["physical_bytes"] / 1e6 for r in rows], width=0.4, label="physical (written)",
           color=colours)
    ax.set_xticks(list(xs), names, rotation=25)
    ax.set_ylabel("MB")
    ax.set_title("Log bytes: logical vs physical")
    ax.legend(fontsize=8)
    out.append(("Log bytes: logical vs physical", _png(fig)))
    plt.close(fig)

    if any(r.get("log_in_use_series") for r in rows):
        fig, ax = plt.subplots(figsize=(7.5, 3.2))
        for r, colour in zip(rows, colours):
            series = _json(r.get("log_in_use_series")) or []
            if series:
                ax.plot([t for t, _ in series], [b / 1e6 for _, b in series], label=r["config_name"], color=colour)
        finish(fig, ax, "Log in use over time", xlabel="virtual seconds", ylabel="MB from tail to head")
    histograms = [_json(r.get("write_size_histogram")) or [] for r in rows]
    if any(histograms):
        labels = [label for label, _ in next(h for h in histograms if h)]
        used = [i for i, label in enumerate(labels) if any(dict(h).get(label) for h in histograms)]
        labels = labels[:used[-1] + 1] if used else labels  # no empty buckets past the largest write
        fig, ax = plt.subplots(figsize=(7.5, 3.2))
        width = 0.8 / len(rows)
        for i, (r, h, colour) in enumerate(zip(rows, histograms, colours)):
            counts = dict(h)
            total = sum(counts.values()) or 1
            ax.bar([x - 0.4 + width * (i + 0.5) for x in range(len(labels))],
                   [100.0 * counts.get(label, 0) / total for label in labels], width=width,
                   color=colour, label=r["config_name"])
        ax.set_xticks(list(range(len(labels))), labels)
        finish(fig, ax, "Write size distribution", xlabel="bytes per physical write", ylabel="% of physical writes")
    bars("Physical writes", [r["physical_writes"] for r in rows], "writes")
    bars("Bytes per physical write", [r["physical_bytes"] / r["physical_writes"] if r["physical_writes"] else 0
                                      for r in rows], "bytes")
    bars("Most log in use at once (head to tail)", [r["active_log_used_bytes_max"] / 1e6 for r in rows], "MB")
    restarts = [_json(r.get("restart_phases")) or {} for r in rows]
    if any(restarts):
        # IBM's two phases stacked per configuration – replay, then recovery as its queue
        # loading and its backout – with media recovery and the final checkpoint on top
        parts = (("replay", "replay_s"), ("recovery: queue loading", "recovery_queue_load_s"),
                 ("recovery: backout", "recovery_backout_s"), ("media recovery", "media_recovery_s"),
                 ("checkpoint", "checkpoint_s"))
        fig, ax = plt.subplots(figsize=(7.5, 3.2))
        bottom = [0.0] * len(rows)
        for label, key in parts:
            values = [r.get(key, 0.0) * 1e3 for r in restarts]
            if not any(values):
                continue
            ax.bar(names, values, bottom=bottom, label=label)
            bottom = [b + v for b, v in zip(bottom, values)]
        ax.set_ylabel("virtual ms")
        ax.set_title("Restart after the same crash: replay and recovery")
        ax.tick_params(axis="x", rotation=25)
        ax.legend(fontsize=8)
        out.append(("Restart phases", _png(fig)))
        plt.close(fig)
    if any(r.get("compression_in_bytes") for r in rows):
        ratios = [(r["compression_out_bytes"] / r["compression_in_bytes"]) if r.get("compression_in_bytes") else 1.0
                  for r in rows]
        fig, ax = plt.subplots(figsize=(7.5, 3.2))
        ax.bar(names, ratios, color=colours)
        ax.set_ylim(0, max(1.05, max(ratios) * 1.1))
        ax.set_title("Message data stored / offered (1.0: not compressed)")
        ax.tick_params(axis="x", rotation=25)
        out.append(("Compression", _png(fig)))
        plt.close(fig)
    return out


#: the columns a comparison's rows must have to be drawn (a sweep's: these and ``sweep``)
REQUIRED = ("config_name", "platform", "workload", "seed", "fingerprint", "logical_bytes", "physical_bytes",
            "physical_writes", "active_log_used_bytes_max")


def check_result_rows(rows: list[dict], source, *, sweep: bool = False) -> None:
    """Rows read back from a results directory: a one-line error naming it unless every row
    has the columns the report draws."""
    from mqlog.core.errors import MqlogError

    if not rows:
        raise MqlogError(f"{source}: no result rows")
    need = REQUIRED + (("sweep",) if sweep else ())
    for key in need:
        if any(r.get(key) is None for r in rows):
            raise MqlogError(f"{source}: not results written by mqlog: column {key!r} is missing or empty")


def read_result_rows(path, *, sweep: bool = False) -> list[dict]:
    """The rows of a results directory (compare's results.parquet, or a sweep's results/,
    partitioned by platform and appended to run by run) read with pyarrow, without starting
    Spark: redrawing a page needs no JVM. A directory that is not Parquet is one line naming it.

    Columns are flat (bool, long, double, string: :func:`mqlog.spark.compare.results_frame`),
    so pyarrow gives the values Spark's ``Row.asDict`` would; appends with more columns are
    merged into one schema as Spark's ``mergeSchema`` does; a sweep's ``sweep`` column is parsed."""
    import pyarrow as pa
    import pyarrow.dataset as ds

    from mqlog.core.errors import MqlogError

    try:
        partitioning = ds.HivePartitioning.discover(infer_dictionary=False) if sweep else None
        found = ds.dataset(str(path), format="parquet", partitioning=partitioning)
        schema = pa.unify_schemas([fragment.physical_schema for fragment in found.get_fragments()]
                                  + [found.schema])
        table = ds.dataset(str(path), format="parquet", partitioning=partitioning, schema=schema).to_table()
    except (pa.ArrowException, OSError, ValueError) as exc:
        first = next((line.strip() for line in str(exc).splitlines() if line.strip()), type(exc).__name__)
        raise MqlogError(f"{path}: cannot be read as mqlog results: {first[:300]}") from None
    rows = table.to_pylist()
    if sweep:
        for row in rows:
            row["sweep"] = json.loads(row["sweep"]) if isinstance(row.get("sweep"), str) else row.get("sweep") or {}
    return rows


#: record types drawn on their own in the contents plot; the rest are "other"
_CONTENT_TYPES = 7


def contents_plot(names: list[str], contents: dict[str, dict]) -> tuple[str, str]:
    """Bytes on disk by record type, one stacked bar per configuration."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    totals: dict[str, int] = {}
    for name in names:
        for kind, v in contents[name]["by_type"].items():
            totals[kind] = totals.get(kind, 0) + v["bytes"]
    kinds = [k for k, _ in sorted(totals.items(), key=lambda kv: (-kv[1], kv[0]))]
    shown, rest = kinds[:_CONTENT_TYPES], kinds[_CONTENT_TYPES:]
    fig, ax = plt.subplots(figsize=(7.5, 0.6 + 0.45 * len(names)))
    left = [0.0] * len(names)
    cmap = plt.get_cmap("tab10")
    for i, kind in enumerate(shown + (["other"] if rest else [])):
        group = [kind] if kind != "other" else rest
        values = [sum(contents[n]["by_type"].get(k, {}).get("bytes", 0) for k in group) / 1e6 for n in names]
        ax.barh(names, values, left=left, label=kind, color=cmap(i % 10))
        left = [a + b for a, b in zip(left, values)]
    ax.invert_yaxis()
    ax.set_xlabel("MB of log records on disk")
    ax.set_title("What each log holds at the end, by record type")
    if kinds:
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    title = "Log contents by record type"
    png = _png(fig)
    plt.close(fig)
    return title, png


def contents_table(names: list[str], contents: dict[str, dict]) -> list[tuple[str, list[str]]]:
    """The contents summary as text cells, one column per configuration."""
    def cell(name, fn):
        c = contents.get(name)
        return "-" if c is None else fn(c)

    def uows(c, outcome):
        return f"{c['uows'].get(outcome, {}).get('uows', 0):,}"

    def stored(c):
        offered = sum(v["payload_bytes"] or 0 for v in c["compression"].values())
        kept = sum(v["stored_bytes"] or 0 for v in c["compression"].values())
        return f"{kept / offered:.3f}" if offered else "-"

    def mean_records(c):
        v = c["uows"].get("committed")
        return f"{v['records_per_uow']:.1f}" if v else "-"

    spec = (
        ("records on disk", lambda c: f"{c['records']:,}"),
        ("bytes of records", lambda c: f"{c['bytes']:,}"),
        ("units of work: committed", lambda c: uows(c, "committed")),
        ("units of work: backed out", lambda c: uows(c, "backed_out")),
        ("units of work: in doubt", lambda c: uows(c, "in_doubt")),
        ("units of work: in flight", lambda c: uows(c, "in_flight")),
        ("records per committed unit", mean_records),
        ("message data stored / offered", stored),
        ("shunt records / bytes", lambda c: f"{c['shunt_records']:,} / {c['shunted_bytes']:,}"),
        ("damage or torn end", lambda c: str(len(c["bad_rows"])) if c["bad_rows"] else "none"),
    )
    return [(label, [cell(n, fn) for n in names]) for label, fn in spec]


def _table(table_id: str, lines: list[tuple[str, list[str]]], head: list[str]) -> str:
    cols = "".join(f"<th>{html.escape(c)}</th>" for c in head)
    body = "\n".join(
        f"<tr><th class='label'>{html.escape(label)}</th>" + "".join(f"<td>{html.escape(c)}</td>" for c in cells)
        + "</tr>" for label, cells in lines)
    return (f'<table id="{table_id}"><thead><tr><th class="label">metric</th>{cols}</tr></thead>\n'
            f"<tbody>\n{body}\n</tbody></table>")


def _figure(title: str, png: str) -> str:
    return (f"<figure><img alt='{html.escape(title)}' src='data:image/png;base64,{png}'>"
            f"<figcaption>{html.escape(title)}</figcaption></figure>")


def provenance_section(rows: list[dict]) -> str:
    """How far to trust the page's figures: calibrated by case id, or the model's assumption."""
    from mqlog.provenance import for_rows

    items = "".join(f"<li><b>{html.escape(e['figure'])}</b>: {html.escape(e['basis'])}"
                    + (f" ({html.escape(', '.join(e['cases']))})" if e["cases"] else "")
                    + (f": {html.escape(e['note'])}" if e["note"] else "") + "</li>" for e in for_rows(rows))
    return (f"<h2>How far to trust these figures</h2><p class=\"note\">Calibrated: checked against IBM's "
            f"published results by case (docs/calibration.md, <code>mqlog calibrate</code>); published: an input "
            f"taken from an IBM document; assumption: the model's own.</p><ul id=\"provenance\">{items}</ul>")


def compare_heading(rows: list[dict]) -> tuple[str, str]:
    """A comparison page's title and the line under it, from its rows: the workload, seed,
    device and host every configuration shared, then the workload parameters. Both
    ``mqlog compare`` and ``mqlog report`` (from results.parquet, where ``params`` is JSON
    text) call this, so that a redrawn page says what the first one said."""
    first = rows[0]
    params = first.get("params") or {}
    if isinstance(params, str):
        params = json.loads(params)
    title = (f"mqlog compare: {first['workload']}, seed {first['seed']}, device {first['device']}, "
             f"host {first['host']}")
    return title, ", ".join(f"{k}={v}" for k, v in sorted(params.items()))


def render(rows: list[dict], *, title: str, subtitle: str = "", contents: dict[str, dict] | None = None) -> str:
    """The report page for ``rows`` (metrics rows of one comparison); with ``contents``
    (:func:`mqlog.spark.contents.log_contents`), a section on what each log holds at the end."""
    lines = table_cells(rows)
    table = _table("comparison", lines[1:], lines[0][1])
    figures = "\n".join(_figure(t, png) for t, png in plots(rows))
    names = [r["config_name"] for r in rows]
    section = ""
    if contents and any(n in contents for n in names):
        kept = [n for n in names if n in contents]
        section = f"""<h2>What each log holds at the end</h2>
<p class="note">Read back from each configuration's files by the <code>mqlog</code> Spark data source
(run directories under <code>runs/</code>). A circular log holds only its active ring; a linear
log the extents not yet reused; z/OS its active data sets and the archives the BSDS records.</p>
{_table("contents", contents_table(kept, contents), kept)}
{_figure(*contents_plot(kept, contents))}
"""
    fingerprint = rows[0]["fingerprint"] if rows else ""
    trust = provenance_section(rows)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2em; color: #222; }}
table {{ border-collapse: collapse; margin: 1em 0; }}
th, td {{ border: 1px solid #ccc; padding: 4px 10px; text-align: right; }}
th.label {{ text-align: left; background: #f4f4f4; }}
thead th {{ background: #e8eef6; }}
figure {{ display: inline-block; margin: 0.5em; }}
figcaption {{ font-size: 0.85em; color: #555; text-align: center; }}
.note {{ color: #555; font-size: 0.9em; }}
.warning {{ color: #a00; }}
</style></head>
<body>
<h1>{html.escape(title)}</h1>
<p class="note">{html.escape(subtitle)}</p>
<p class="note">Every configuration ran the same application calls with the same payload bytes
(workload fingerprint <code>{html.escape(fingerprint[:16])}</code>), in virtual time on the same
device profile. Distributed configurations are shown in blue, z/OS in orange.</p>
{nothing_measured_note(rows)}
{table}
{trust}
{figures}
{section}
</body></html>
"""


def empty_cells(rows: list[dict], test=nothing_measured) -> list[str]:
    """The rows that measured nothing (:func:`mqlog.usecases.nothing_measured`; or that
    ``test`` picks), each named by its configuration, and in a sweep by the values that made
    its cell, its device and seed."""
    return [" ".join([r["config_name"], *(f"{k}={v}" for k, v in sorted((r.get("sweep") or {}).items())),
                      *((f"device={r.get('device')}", f"seed={r.get('seed')}") if "sweep" in r else ())])
            for r in rows if test(r)]


def window_warnings(rows: list[dict]) -> list[tuple[str, list[str], str]]:
    """What a table of runs must say about their measured windows: (label, the rows it names,
    why) for the rows that measured nothing (NOTHING MEASURED) and those whose window was too
    short for its figures to be the steady state's (SHORT MEASURED WINDOW,
    :func:`mqlog.usecases.short_window`: why is the first one's)."""
    warnings = []
    for label, test, why in (("NOTHING MEASURED", nothing_measured, lambda r: why_nothing_measured(r, "no figure of theirs")),
                             ("SHORT MEASURED WINDOW", short_window, short_window)):
        named = empty_cells(rows, test)
        if named:
            text = why(next(r for r in rows if test(r)))
            warnings.append((label, named, f"the first: {text}" if len(named) > 1 and test is short_window else text))
    return warnings


def _of_rows(named: list[str], rows: list[dict]) -> str:
    return f"{len(named)} of {len(rows)} {'cells' if 'sweep' in rows[0] else 'configurations'}"


def window_lines(rows: list[dict]) -> list[str]:
    """:func:`window_warnings` as the console's lines under a compare's or sweep's table."""
    return [f"{label} in {_of_rows(named, rows)} ({'; '.join(named)}): {why}"
            for label, named, why in window_warnings(rows)]


def nothing_measured_note(rows: list[dict]) -> str:
    """:func:`window_warnings` as a report's warnings (HTML); "" if none."""
    return "\n".join(f"<p class='warning'><strong>{label}</strong> in {_of_rows(named, rows)}: "
                     f"{html.escape('; '.join(named))}. {html.escape(why[0].upper() + why[1:])}.</p>"
                     for label, named, why in window_warnings(rows))


#: the headline metrics of a sweep's cells, in its console table and its report: (label, key)
SWEEP_COLUMNS = (("messages put", "messages_put"), ("commits", "commits"), ("logical bytes", "logical_bytes"),
                 ("physical writes", "physical_writes"), ("physical bytes", "physical_bytes"),
                 ("units rolled back", "uows_rolled_back"), ("shunts", "shunts"),
                 ("compressed bytes", "compression_out_bytes"))
#: the axes a sweep can vary besides its swept parameters, as the rows name them
_ROW_AXES = {"configuration": "config_name", "device": "device", "host": "host", "seed": "seed"}


def axis_value(row: dict, axis: str):
    """A cell's value on ``axis``: the configuration, device, host, seed or a swept parameter."""
    if axis in _ROW_AXES:
        return row.get(_ROW_AXES[axis])
    return (row.get("sweep") or {}).get(axis)


def axis_order(value):
    """Sort key of an axis's values: numbers by value (16 before 256 before 1024), then text."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return (0, float(value), "")
    return (1, 0.0, str(value))


def sweep_axes(rows: list[dict]) -> list[str]:
    """Every axis the sweep varied, in a fixed order: the configuration (always), each swept
    parameter, then device, host and seed when the cells hold more than one of it."""
    params = sorted({k for r in rows for k in (r.get("sweep") or {})})
    axes = ["configuration"] + params + ["device", "host", "seed"]
    return [a for a in axes if a == "configuration" or a in params or
            len({json.dumps(axis_value(r, a), sort_keys=True) for r in rows}) > 1]


def sweep_cells(rows: list[dict], columns: tuple = SWEEP_COLUMNS) -> tuple[list[str], list[list[str]]]:
    """The cells as a table: one column per axis the sweep varied and per headline metric, one
    row per cell, sorted by every axis (numbers numerically). One format per metric: whole
    numbers with thousands separators."""
    axes = sweep_axes(rows)
    ordered = sorted(rows, key=lambda r: [axis_order(axis_value(r, a)) for a in axes])
    body = [[str(axis_value(r, a)) for a in axes] + [_count(r.get(k)) for _, k in columns] for r in ordered]
    return axes + [label for label, _ in columns], body


def values_text(values: list) -> str:
    """A sweep axis's values: ``LOW to HIGH`` for three or more numbers, else the values."""
    numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)
    if numbers and len(values) > 2:
        return f"{min(values):g} to {max(values):g} ({len(values)} values)"
    return ", ".join(f"{v:g}" if numbers else str(v) for v in values)


def _count(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, float) and not value.is_integer():  # a ratio (writes per message): its fraction shows
        return f"{value:,.2f}"
    return f"{value:,.0f}" if isinstance(value, (int, float)) else str(value)


def format_sweep(rows: list[dict], columns: tuple = SWEEP_COLUMNS) -> str:
    """The cells' headline table for the console: axes left-aligned, metrics right-aligned."""
    head, body = sweep_cells(rows, columns)
    axes = len(sweep_axes(rows))
    widths = [max(len(x) for x in [h] + [r[i] for r in body]) for i, h in enumerate(head)]
    return "\n".join("  ".join(c.ljust(w) if i < axes else c.rjust(w) for i, (c, w) in enumerate(zip(line, widths)))
                     .rstrip() for line in [head] + body)


def render_sweep(rows: list[dict], *, title: str, plot: dict | None = None, figures: str | None = None,
                 columns: tuple = SWEEP_COLUMNS) -> str:
    """The report page of a sweep: the plot its document asks for (the metric against the
    swept parameter, one line for each combination of every other axis the sweep varied; seeds
    averaged, and the caption says so) and a table of cells with a column for every axis.
    ``figures`` (HTML) replaces the plot, ``columns`` the table's metrics: a topology sweep's
    (:mod:`mqlog.spark.topologysweep`)."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    axes = sweep_axes(rows)
    if figures is None:
        figures = ""
    elif plot:
        plot = None  # drawn already
    if plot and rows:
        x_key, y_key = plot.get("x"), plot.get("y")
        others = [a for a in axes if a not in (x_key, "seed")]
        series: dict[tuple, dict] = {}
        for r in rows:
            x = axis_value(r, x_key)
            if x is None or r.get(y_key) is None:
                continue
            label = tuple(axis_value(r, a) for a in others)
            series.setdefault(label, {}).setdefault(x, []).append(r[y_key])
        fig, ax = plt.subplots(figsize=(7.5, 3.6))
        numeric = all(axis_order(x)[0] == 0 for s in series.values() for x in s)
        for label, points in sorted(series.items(), key=lambda kv: [axis_order(v) for v in kv[0]]):
            xs = sorted(points, key=axis_order)
            ys = [sum(points[x]) / len(points[x]) for x in xs]
            name = ", ".join(str(v) if a == "configuration" else f"{a}={v}" for a, v in zip(others, label))
            ax.plot(xs if numeric else [str(x) for x in xs], ys, marker="o", label=name)
        ax.set_xlabel(x_key)
        ax.set_ylabel(y_key)
        seeds = sorted({r.get("seed") for r in rows}, key=axis_order)
        averaged = f", mean of seeds {', '.join(map(str, seeds))}" if "seed" in axes else ""
        ax.set_title(f"{y_key} against {x_key}{averaged}")
        ax.legend(fontsize=8)
        caption = (f"{y_key} against {x_key}, one line per "
                   + (" and ".join(others) if others else "cell") + averaged)
        figures = (f"<figure><img alt='{html.escape(y_key)}' src='data:image/png;base64,{_png(fig)}'>"
                   f"<figcaption>{html.escape(caption)}</figcaption></figure>")
        plt.close(fig)
    head, cells = sweep_cells(rows, columns)
    n_axes = len(axes)
    body = "\n".join("<tr>" + "".join((f"<th class='label'>{html.escape(c)}</th>" if i < n_axes else
                                        f"<td>{html.escape(c)}</td>") for i, c in enumerate(line)) + "</tr>"
                     for line in cells)
    head_html = "".join(f"<th>{html.escape(c)}</th>" for c in head)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<style>body {{ font-family: system-ui, sans-serif; margin: 2em; }} table {{ border-collapse: collapse; }}
th, td {{ border: 1px solid #ccc; padding: 3px 8px; text-align: right; }} th.label {{ text-align: left; }}
.warning {{ color: #a00; }}</style>
</head><body><h1>{html.escape(title)}</h1>
{nothing_measured_note(rows)}
{figures}
<table id="sweep"><thead><tr>{head_html}</tr></thead><tbody>
{body}
</tbody></table>
{provenance_section(rows)}
</body></html>
"""
