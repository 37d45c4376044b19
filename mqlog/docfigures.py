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
logarithmic y axis. The PNG carries the points it draws (a ``tEXt``
chunk ``mqlog-docs``), so ``--check`` compares them, series by series and point by point, with
what the commands give now; a figure without them was drawn by hand. ``--write`` draws a
figure again only when a point moved.
"""

from __future__ import annotations

import io
import json
import struct
import zlib
from pathlib import Path

from mqlog.docresults import _get, load_rows
from mqlog.docviews import DocsError

CHUNK = "mqlog-docs"


def points(documents, options, cwd: Path) -> dict:
    """What the figure draws: ``{"x": PATH, "y": PATH, "series": {name: [[x, y], ...]}}``."""
    for need in ("x", "y"):
        if not isinstance(options.get(need), str):
            raise DocsError(f"a figure needs {need}=PATH")
    series_keys = options["series"].split(",") if isinstance(options.get("series"), str) else []
    style_key = options["style"].partition(":")[0] if isinstance(options.get("style"), str) else None
    conditions = [c.partition("=") for c in options["where"].split(",")] if isinstance(options.get("where"), str) else []
    trace = options.get("trace") if isinstance(options.get("trace"), str) else None
    step = int(options.get("trace_step", 1)) if isinstance(options.get("trace_step", 1), (int, str)) else 1
    series: dict[str, list] = {}
    for label, document in documents:
        for row in load_rows(document, cwd):
            if any(str(_get(row, path.strip())) not in [v.strip() for v in value.split("|")]
                   for path, _, value in conditions):   # where=config_name=a|b: either
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
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    style = options["style"] if isinstance(options.get("style"), str) else ""
    listed = style.partition(":")[2].split("|") if ":" in style else []
    styles = {v: ["-", "--", ":", "-."][i % 4] for i, v in enumerate(listed)}
    colours: dict[str, str] = {}
    fig, ax = plt.subplots(figsize=(7.5, 3.6))
    for name, pts in data["series"].items():
        line, _, last = name.rpartition(" ") if style else (name, "", "")
        dash = styles.setdefault(last, ["-", "--", ":", "-."][len(styles) % 4])
        colour = colours.setdefault(line, f"C{len(colours) % 10}")   # one colour a line, whatever its style
        pts = [p for p in pts if p[1] is not None]   # a run with no such figure (a restart that failed)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=None if "trace" in options else "o", linestyle=dash, color=colour, label=name)
    if "logx" in options:
        ax.set_xscale("log")
    if "logy" in options:
        ax.set_yscale("log")
    if any(isinstance(p[0], str) for pts in data["series"].values() for p in pts):
        ax.tick_params(axis="x", labelrotation=20, labelsize=8)   # category names side by side
    ax.set_xlabel(options.get("xlabel") if isinstance(options.get("xlabel"), str) else data["x"])
    ax.set_ylabel(options.get("ylabel") if isinstance(options.get("ylabel"), str) else data["y"])
    if isinstance(options.get("title"), str):
        ax.set_title(options["title"])
    ax.grid(True, alpha=0.3)
    if len(data["series"]) > 1:
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
    for name in sorted(set(shown["series"]) | set(now["series"])):
        a = {str(x): y for x, y in shown["series"].get(name, [])}
        b = {str(x): y for x, y in now["series"].get(name, [])}
        for x in sorted(set(a) | set(b), key=lambda v: (len(v), v)):
            if a.get(x, "no point") != b.get(x, "no point"):
                out.append((f"series {name!r}, x={x}", str(a.get(x, "no point")), str(b.get(x, "no point"))))
    return out
