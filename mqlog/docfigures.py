"""Figures of ``mqlog docs`` (:mod:`mqlog.docpages`): a guide plot drawn from the runs of the
commands a figure block names, so ``--write`` draws it again and ``--check`` can tell a
figure that drifted.

``<!-- mqlog docs: figure img/NAME.png x=PATH y=PATH [series=PATH,...] [style=PATH] [logx]``
(more options a line each: ``title=``, ``xlabel=``, ``ylabel=``, ``where=PATH=A|B,...``, ``xorder=A|B|C``
for a categorical x), then one command a line as for a table, then ``-->``. Each run is a
point (``x``, ``y``; paths as in :mod:`mqlog.docresults`; ``y=PATH/PATH`` a ratio of two
fields; ``y=A,B`` a line for each of several fields), one line per value of the ``series``
fields (a colour each; ``label``, as ``series`` or as ``x``, is the label of the command the
run is from), drawn solid, dashed, dotted by the value of ``style``
(``style=device:ssd|dasd``: in that order). ``trace=PATH`` draws a run's own series instead
(a field holding ``[[x, y], ...]``: ``log_in_use_series``, or ``write_size_histogram``'s named
buckets), one line a run, every ``trace_step``-th
point (1 unless given) and the last (``x`` and ``y`` then only name the axes); ``logy`` a
logarithmic y axis.

``kind=outcome`` draws a yes/no figure per run instead: one row per value of ``series`` (a
label each, ``series_label="N = {} s"``), each run a marker at ``x`` (``xscale=FACTOR`` scales
it: bytes to MiB) that is a red cross where ``y`` is not zero and an open circle where it is
(``outcome="YES LABEL|NO LABEL"`` names them in the legend). ``ticks="LABEL=EXPR;..."`` adds a
reference tick to each row: EXPR is arithmetic (``+ - * /``, numbers, a run's fields by path)
on the row's run with the largest ``x`` (``2 * (sweep.workload.duration + 1) * logical_bytes /
workload_s / 1048576``: IBM's sizing rule), the first tick grey and dashed, the next orange.
``kind=bars`` draws grouped bars in panels side by side, one ``panelN="..."`` option a panel
(``panel1``, ``panel2``, ...), each holding ``y={FIELD}`` (a field as a table's template writes
it, :mod:`mqlog.docresults`: ``{physical_bytes*1e-6}``, ``{restart_bytes_read/restart_records_replayed}``,
``{workload_s vs config_name=zos-none}``, the change in percent), and optionally ``x=PATH`` (the
figure's ``x`` unless given; ``label``: the command's label), ``rows=LABEL,...`` (the commands
whose runs it draws), ``hatch=PATH`` (plain bars for the first value, hatched for the next) and
``title='...'`` (``\\n`` a line break). A category of x is a group (``xorder``), a value of ``series`` a colour in it;
``names="VALUE=NAME|..."`` names the colours in the legend.
The PNG carries the points it draws (a ``tEXt``
chunk ``mqlog-docs``), so ``--check`` compares them, series by series and point by point, with
what the commands give now; a figure without them was drawn by hand. ``--write`` draws a
figure again only when a point moved.
"""

from __future__ import annotations

import ast
import io
import json
import struct
import zlib
from pathlib import Path

import re
import shlex

from mqlog.docresults import _FIELD, _get, _Runs, field_value, load_rows
from mqlog.docviews import DocsError

CHUNK = "mqlog-docs"


def points(documents, options, cwd: Path) -> dict:
    """What the figure draws: ``{"x": PATH, "y": PATH, "series": {name: [[x, y], ...]}}`` (and,
    with ``ticks``, ``"ticks": {label: [[row, value], ...]}``)."""
    if options.get("kind", "line") not in ("line", "outcome", "bars"):
        raise DocsError(f"kind={options.get('kind')}: a figure's kind is line (the default), outcome or bars")
    if options.get("kind") == "bars":
        return _bar_points(documents, options, cwd)
    for need in ("x", "y"):
        if not isinstance(options.get(need), str):
            raise DocsError(f"a figure needs {need}=PATH")
    if options.get("kind") == "outcome":
        return _outcome_points(documents, options, cwd)
    series_keys = options["series"].split(",") if isinstance(options.get("series"), str) else []
    style_key = options["style"].partition(":")[0] if isinstance(options.get("style"), str) else None
    conditions = _where(options)
    trace = options.get("trace") if isinstance(options.get("trace"), str) else None
    step = int(options.get("trace_step", 1)) if isinstance(options.get("trace_step", 1), (int, str)) else 1
    series: dict[str, list] = {}
    for label, document in documents:
        for row in load_rows(document, cwd):
            if any(str(_get(row, path)) not in values for path, values in conditions):   # where=config_name=a|b: either
                continue
            name = " ".join(label if k == "label" else str(_get(row, k))
                            for k in series_keys + ([style_key] if style_key else [])) or options["y"]
            if trace:   # the run's own [[x, y], ...]
                pts = _get(row, trace)
                pts = json.loads(pts) if isinstance(pts, str) else pts
                pts = list(pts.items()) if isinstance(pts, dict) else list(pts or [])
                kept = pts[::max(step, 1)] + ([pts[-1]] if pts and (len(pts) - 1) % max(step, 1) else [])
                series[name] = [[x if isinstance(x, str) else round(float(x), 6), round(float(y), 6)]
                                for x, y in kept]   # a histogram's buckets are named
                continue
            x = label if options["x"] == "label" else _get(row, options["x"])
            ys = options["y"].split(",")
            for path in ys:   # y=A,B: a line for each (a restart's phases, say)
                y = _ratio(row, path)
                line = name if len(ys) == 1 else (f"{name} {path}" if series_keys else path)
                series.setdefault(line, []).append([x, None if y is None else round(float(y), 6)])
    order = options["xorder"].split("|") if isinstance(options.get("xorder"), str) else None
    for name in series if not trace else ():   # a trace keeps the run's own order
        series[name].sort(key=(lambda p: order.index(str(p[0])) if str(p[0]) in order else len(order)) if order
                          else (lambda p: (isinstance(p[0], str), p[0])))
    return {"x": options["x"], "y": options["y"], "series": dict(sorted(series.items()))}


def _where(options) -> list[tuple[str, list[str]]]:
    conditions = options["where"].split(",") if isinstance(options.get("where"), str) else []
    return [(path.strip(), [v.strip() for v in value.split("|")]) for path, _, value in (c.partition("=") for c in conditions)]


def _outcome_points(documents, options, cwd: Path) -> dict:
    """``kind=outcome``: each row (a value of ``series``) its runs' [x, y], and each tick's value
    on the row's run with the largest x."""
    if not isinstance(options.get("series"), str) or "," in options["series"]:
        raise DocsError("kind=outcome needs series=PATH (one field: a row of the figure each value)")
    try:
        scale = float(options.get("xscale", 1))
    except (TypeError, ValueError):
        raise DocsError(f"xscale={options.get('xscale')}: not a number") from None
    ticks = []
    if isinstance(options.get("ticks"), str):
        for part in options["ticks"].split(";"):
            label, eq, expr = part.partition("=")
            if not eq or not label.strip() or not expr.strip():
                raise DocsError(f"ticks: {part.strip()!r} is not LABEL=EXPR")
            ticks.append((label.strip(), _parse_expr(expr.strip())))
    conditions = _where(options)
    rows: dict[str, list] = {}
    for _, document in documents:
        for row in load_rows(document, cwd):
            if any(str(_get(row, path)) not in values for path, values in conditions):
                continue
            rows.setdefault(str(_get(row, options["series"])), []).append(row)
    series, marks = {}, {label: [] for label, _ in ticks}
    for name, runs in rows.items():
        pts = sorted([round(float(_get(r, options["x"])) * scale, 6), _get(r, options["y"])] for r in runs)
        series[name] = pts
        widest = max(runs, key=lambda r: float(_get(r, options["x"])))
        for label, tree in ticks:
            marks[label].append([name, round(float(_evaluate(tree, widest)), 6)])
    out = {"x": options["x"], "y": options["y"], "series": dict(sorted(series.items(), key=lambda kv: _sortable(kv[0])))}
    if ticks:
        out["ticks"] = {label: sorted(pts, key=lambda p: _sortable(p[0])) for label, pts in marks.items()}
    return out


def panels(options) -> list[dict]:
    """``kind=bars``'s panels, in order: each ``panelN``'s words as a dict."""
    numbered = sorted((int(k[5:]), v) for k, v in options.items() if re.fullmatch(r"panel\d+", k))
    if not numbered:
        raise DocsError("kind=bars needs panel1=\"y={FIELD} ...\" (a panel each)")
    out = []
    for n, text in numbered:
        words = dict(w.partition("=")[::2] for w in shlex.split(text if isinstance(text, str) else ""))
        unknown = set(words) - {"y", "x", "rows", "hatch", "title"}
        if unknown:
            raise DocsError(f"panel{n}: {sorted(unknown)[0]!r} is not a panel's option (y, x, rows, hatch, title)")
        if not _FIELD.fullmatch(words.get("y", "")):
            raise DocsError(f"panel{n}: y={words.get('y', '')!r} is not a field ({{PATH}}, as a table writes it)")
        x = words.get("x") or options.get("x")
        if not isinstance(x, str) or not x:
            raise DocsError(f"panel{n}: no x=PATH (on the panel or the figure)")
        out.append({"n": n, "y": words["y"], "x": x, "rows": words["rows"].split(",") if words.get("rows") else None,
                    "hatch": words.get("hatch"), "title": words.get("title", words["y"]).replace("\\n", "\n")})
    return out


def _bar_points(documents, options, cwd: Path) -> dict:
    """``kind=bars``: ``{"series": {"N / colour[ / hatch]": [[x, y], ...]}}``, N the panel."""
    if not isinstance(options.get("series"), str) or "," in options["series"]:
        raise DocsError("kind=bars needs series=PATH (one field: a colour each value)")
    loaded = [(label, load_rows(document, cwd)) for label, document in documents]
    runs = _Runs(loaded)
    labels = {label for label, _ in loaded}
    conditions = _where(options)
    series: dict[str, list] = {}
    for panel in panels(options):
        missing = [r for r in panel["rows"] or () if r not in labels]
        if missing:
            raise DocsError(f"panel{panel['n']}: rows={missing[0]} names no command of the figure")
        match = _FIELD.fullmatch(panel["y"])
        for label, rows in loaded:
            if panel["rows"] is not None and label not in panel["rows"]:
                continue
            for row in rows:
                if any(str(_get(row, path)) not in values for path, values in conditions):
                    continue
                x = label if panel["x"] == "label" else str(_get(row, panel["x"]))
                parts = [str(panel["n"]), str(_get(row, options["series"]))]
                if panel["hatch"]:
                    path = panel["hatch"].partition(":")[0]
                    parts.append(label if path == "label" else str(_get(row, path)))
                y = field_value(match, row, label, runs)
                series.setdefault(" / ".join(parts), []).append([x, None if y is None else round(float(y), 6)])
    order = options["xorder"].split("|") if isinstance(options.get("xorder"), str) else []
    for pts in series.values():
        pts.sort(key=lambda p: (order.index(p[0]) if p[0] in order else len(order), p[0]))
    return {"x": options.get("x", "panels"), "y": "panels", "series": dict(sorted(series.items()))}


def _draw_bars(data: dict, options) -> bytes:
    """The PNG of ``kind=bars``: a panel each, a group per x, a colour per series value."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt
    from matplotlib.patches import Patch

    chosen = panels(options)
    names = dict(part.split("=", 1) for part in options["names"].split("|")) if isinstance(options.get("names"), str) else {}
    fig, axes = plt.subplots(1, len(chosen), figsize=(4.25 * len(chosen), 3.9), squeeze=False)
    colours: dict[str, str] = {}
    for ax, panel in zip(axes[0], chosen):
        mine = {k.split(" / ", 1)[1]: v for k, v in data["series"].items() if k.split(" / ", 1)[0] == str(panel["n"])}
        xs = list(dict.fromkeys(p[0] for pts in mine.values() for p in pts))
        order = options["xorder"].split("|") if isinstance(options.get("xorder"), str) else []
        xs.sort(key=lambda x: (order.index(x) if x in order else len(order), x))
        listed = (panel["hatch"] or "").partition(":")[2].split("|")   # hatch=label:ssd|dasd: plain ssd
        hatches = sorted(dict.fromkeys(k.split(" / ")[1] for k in mine if " / " in k),
                         key=lambda h: (listed.index(h) if h in listed else len(listed), h))
        named = list(names)
        mine = dict(sorted(mine.items(), key=lambda kv: (
            named.index(kv[0].partition(" / ")[0]) if kv[0].partition(" / ")[0] in named else len(named),
            hatches.index(kv[0].partition(" / ")[2]) if kv[0].partition(" / ")[2] in hatches else 0)))
        width = 0.8 / max(len(mine), 1)
        for i, (key, pts) in enumerate(mine.items()):
            colour_key, _, hatch = key.partition(" / ")
            colour = colours.setdefault(colour_key, f"C{len(colours) % 10}")
            at = {p[0]: p[1] for p in pts if p[1] is not None}
            ax.bar([xs.index(x) - 0.4 + width * (i + 0.5) for x in at], list(at.values()), width, color=colour,
                   hatch="//" if hatch and hatches.index(hatch) else None, edgecolor="white" if hatch else None)
        ax.set_xticks(range(len(xs)), xs)
        ax.set_title(panel["title"], fontsize=9)
        ax.grid(True, axis="y", alpha=0.3)
        ax.axhline(0, color="black", linewidth=0.8)
        if hatches:
            ax.legend(handles=[Patch(facecolor="grey", hatch="//" if n else None, edgecolor="white", label=h)
                               for n, h in enumerate(hatches)], fontsize=7, loc="lower left")
    axes[0][0].legend(handles=[Patch(color=c, label=names.get(k, k)) for k, c in colours.items()], fontsize=7,
                      loc="lower left")
    if isinstance(options.get("title"), str):
        fig.suptitle(options["title"], fontsize=10)
    fig.tight_layout()
    out = io.BytesIO()
    fig.savefig(out, format="png", dpi=100, metadata={"Software": None, CHUNK: json.dumps(data, sort_keys=True)})
    plt.close(fig)
    return out.getvalue()


def _sortable(name: str):
    try:
        return (0, float(name), "")
    except ValueError:
        return (1, 0.0, name)


_OPS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
        ast.Div: lambda a, b: a / b}


def _parse_expr(text: str):
    try:
        tree = ast.parse(text, mode="eval").body
    except SyntaxError as exc:
        raise DocsError(f"ticks: {text!r}: {exc.msg}") from None
    for node in ast.walk(tree):
        if not isinstance(node, (ast.BinOp, ast.Constant, ast.Name, ast.Attribute, ast.Load, ast.UnaryOp, ast.USub,
                                 *_OPS)):
            raise DocsError(f"ticks: {text!r}: {type(node).__name__} is not allowed (numbers, fields, + - * /)")
    return tree


def _evaluate(node, row: dict) -> float:
    """An arithmetic tree's value on a run: a name or dotted name is the run's field."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.UnaryOp):
        return -_evaluate(node.operand, row)
    if isinstance(node, ast.BinOp):
        return _OPS[type(node.op)](_evaluate(node.left, row), _evaluate(node.right, row))
    parts = []
    while isinstance(node, ast.Attribute):
        parts.insert(0, node.attr)
        node = node.value
    value = _get(row, ".".join([node.id, *parts]))
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise DocsError(f"ticks: {'.'.join([node.id, *parts])} = {value!r} is not a number")
    return value


def _draw_outcome(ax, data: dict, options) -> None:
    yes, _, no = (options["outcome"] if isinstance(options.get("outcome"), str) else "yes|no").partition("|")
    label = options["series_label"] if isinstance(options.get("series_label"), str) else "{}"
    names = list(data["series"])
    for i, name in enumerate(names):
        hit = [p[0] for p in data["series"][name] if p[1]]
        miss = [p[0] for p in data["series"][name] if not p[1]]
        ax.plot(hit, [i] * len(hit), "x", color="#cc0000", markersize=9, label=yes if i == 0 else None)
        ax.plot(miss, [i] * len(miss), "o", markerfacecolor="none", color="C0", markersize=8,
                label=no if i == 0 else None)
    for n, (tick, pts) in enumerate(data.get("ticks", {}).items()):
        colour, dash, width = [("grey", "--", 1.5), ("#c0601a", "-", 2.5)][n % 2]
        for k, (name, value) in enumerate(pts):
            i = names.index(name)
            ax.plot([value, value], [i - 0.35, i + 0.35], linestyle=dash, color=colour, linewidth=width,
                    label=tick if k == 0 else None)
    ax.set_yticks(range(len(names)), [label.format(n) for n in names])
    ax.set_ylim(-0.7, len(names) - 0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))


def _ratio(row: dict, path: str):
    """``PATH``'s value in a run, or ``A/B``'s: A divided by B (None where B is 0 or missing)."""
    top, slash, under = path.partition("/")
    value = _get(row, top)
    if not slash or value is None:
        return value
    below = _get(row, under)
    return value / below if below else None


def draw(data: dict, options) -> bytes:
    """The PNG of ``data`` (points' own order on a categorical x), with the points in it."""
    if options.get("kind") == "bars":
        return _draw_bars(data, options)
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    style = options["style"] if isinstance(options.get("style"), str) else ""
    listed = style.partition(":")[2].split("|") if ":" in style else []
    styles = {v: ["-", "--", ":", "-."][i % 4] for i, v in enumerate(listed)}
    colours: dict[str, str] = {}
    fig, ax = plt.subplots(figsize=(7.5, 3.6) if options.get("kind") != "outcome" else (8.5, 3.6))
    for name, pts in data["series"].items() if options.get("kind") != "outcome" else ():
        line, _, last = name.rpartition(" ") if style else (name, "", "")
        dash = styles.setdefault(last, ["-", "--", ":", "-."][len(styles) % 4])
        colour = colours.setdefault(line, f"C{len(colours) % 10}")   # one colour a line, whatever its style
        pts = [p for p in pts if p[1] is not None]   # a run with no such figure (a restart that failed)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=None if "trace" in options else "o", linestyle=dash, color=colour, label=name)
    if options.get("kind") == "outcome":
        _draw_outcome(ax, data, options)
    if "logx" in options:
        ax.set_xscale("log")
    if "logy" in options:
        ax.set_yscale("log")
    if any(isinstance(p[0], str) for pts in data["series"].values() for p in pts):
        ax.tick_params(axis="x", labelrotation=20, labelsize=8)   # category names side by side
    ax.set_xlabel(options.get("xlabel") if isinstance(options.get("xlabel"), str) else data["x"])
    if options.get("kind") != "outcome" or isinstance(options.get("ylabel"), str):
        ax.set_ylabel(options.get("ylabel") if isinstance(options.get("ylabel"), str) else data["y"])
    if isinstance(options.get("title"), str):
        ax.set_title(options["title"])
    ax.grid(True, alpha=0.3)
    if len(data["series"]) > 1 and options.get("kind") != "outcome":
        ax.legend(fontsize=8)
    fig.tight_layout()
    out = io.BytesIO()
    fig.savefig(out, format="png", dpi=100, metadata={"Software": None, CHUNK: json.dumps(data, sort_keys=True)})
    plt.close(fig)
    return out.getvalue()


def read_points(png: Path) -> dict | None:
    """The points a PNG drawn by :func:`draw` carries (None: drawn by hand, or not there)."""
    try:
        data = png.read_bytes()
    except OSError:
        return None
    at = 8
    while at + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[at:at + 8])
        body = data[at + 8:at + 8 + length]
        if kind == b"tEXt" and body.startswith(CHUNK.encode() + b"\0"):
            return json.loads(body[len(CHUNK) + 1:].decode("latin-1"))
        if kind == b"zTXt" and body.startswith(CHUNK.encode() + b"\0"):
            return json.loads(zlib.decompress(body[len(CHUNK) + 2:]).decode("latin-1"))
        at += 12 + length
    return None


def differences(shown: dict | None, now: dict) -> list[tuple[str, str, str]]:
    """(where, the figure's value, the command's) for every point that moved."""
    if shown is None:
        return [("", "drawn by hand (no points in it)", f"{sum(len(p) for p in now['series'].values())} points")]
    out = []
    if (shown.get("x"), shown.get("y")) != (now["x"], now["y"]):
        out.append(("axes", f"{shown.get('x')} / {shown.get('y')}", f"{now['x']} / {now['y']}"))
    for part, what, at in (("series", "series", "x"), ("ticks", "tick", "row")):
        old, new = shown.get(part) or {}, now.get(part) or {}
        for name in sorted(set(old) | set(new)):
            a = {str(x): y for x, y in old.get(name, [])}
            b = {str(x): y for x, y in new.get(name, [])}
            for x in sorted(set(a) | set(b), key=lambda v: (len(v), v)):
                if a.get(x, "no point") != b.get(x, "no point"):
                    out.append((f"{what} {name!r}, {at}={x}", str(a.get(x, "no point")), str(b.get(x, "no point"))))
    return out
