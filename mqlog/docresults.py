"""The ``results`` view of ``mqlog docs`` (:mod:`mqlog.docpages`): a guide table made from the
rows of ``mqlog sweep --json`` (its ``results/`` Parquet, read with pyarrow), ``mqlog
compare --json`` (its ``rows``) and ``mqlog mqldt --json`` (its ``results``, a block size
each), one table row per run.

Options (on the block's comment line):

- ``columns="Header=TEMPLATE;..."``: a cell is its template's text with each ``{FIELD}`` put in.
  FIELD is ``[LABEL@]PATH[-PATH][*FACTOR...][/PATH][ vs|over KEY=VALUE][:FORMAT]``: PATH a dotted path in the
  run's row (``sweep.payload``, ``config_name``, ``restart_phases.replay_s``, a histogram's bucket
  ``write_size_histogram.<=4K``); ``LABEL@`` takes
  it from the run of the command labelled LABEL with the same configuration and swept values
  (a second device, say); ``*NUMBER`` scales it, ``/PATH`` divides it by another field (an en
  dash when that is 0; both: ``{restart_total_s*1e6/restart_records_replayed}``, µs a record); ``vs KEY=VALUE`` is the change against the run that differs only in
  KEY (``vs config_name=zos-none``: +0.0%, −36.6%), ``over KEY=VALUE`` the ratio to it
  (``{commits over config_name=zos-single:.3f}``: 0.614); ``A-B`` a difference of two fields
  (``{write_cycles-partial_page_writes}``), and a scale may be several factors, numbers or
  fields (``{workload_s*sweep.workload.requesters*1e6/round_trips}``), a field plus a number among them
  (``{logical_bytes*2*sweep.workload.duration+1/workload_s}``: 2 × (N + 1) × B); FORMAT a Python format spec (integers get
  thousands separators without one; a trailing ``~`` drops trailing zeros: ``.2f~`` gives
  0.19 and 3; ``?YES|NO`` is YES where the value is not zero, ``%s`` in YES the value itself:
  ``{restart_failed:?fails, %s|completes}``). ``{label}`` is the label of the command the run is from.
- ``list=PATH``: the rows are the list at PATH (dotted) in each command's JSON, or the one
  dict there (``mqlog config --json``'s ``qmgr``, ``mqlog commands --json``'s ``commands``):
  a listing rather than runs.
- ``rows=LABEL,...``: the commands whose runs are the table's rows (all of them unless given).
- ``where="PATH=VALUE,..."``: only the runs with these values (``PATH=A|B``: either).
- ``sort="PATH[:A|B|C],..."``: the rows' order, by these fields (numbers numerically; ``A|B|C``
  an explicit order), the runs' own order after that.
- ``across=TEMPLATE``: the last column spread across, one column per value of TEMPLATE (a
  table of N against log sizes), one row per value of the others.
- ``collapse=Header,...``: rows next to each other alike but in these columns as one row,
  ``FIRST to LAST`` in them.
- ``once=Header,...``: in these columns a cell like the one above is left blank (a row's key
  cell repeats the one above, so it still names the row).
- ``transpose``: a run a column, headed by its first cell, and a row a template.
- ``align=lr...``: a letter a column (``l`` or ``r``); unless given, a column of numbers is
  right-aligned.

Every cell comes from a command the page names: a figure cannot be typed in by hand.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from mqlog.docviews import DocsError, cell, render_table

_FIELD = re.compile(r"\{(?:(?P<label>[\w-]+)@)?(?P<path>[\w.]+(?:\.[<>=]+\w+)?)"
                    r"(?:-(?P<minus>[a-z_][\w.]*))?"
                    r"(?:\*(?P<scale>[\w.+-]+(?:\*[\w.+-]+)*))?(?:/(?P<over>[\w.]+))?"
                    r"(?:\s+(?P<vs_op>vs|over)\s+(?P<vs_key>[\w.]+)=(?P<vs_value>[^:}]+))?"
                    r"(?::(?P<format>[^}]*))?\}")


#: reads a sweep's ``results/`` (Parquet) into rows, ``(path, sweep=True) -> [dict]``: the
#: command line sets it (``mqlog.spark.htmlreport.read_result_rows``), as this layer imports no
#: module of the Spark jobs' layer
read_rows = None


def load_rows(document: dict, cwd: Path) -> list[dict]:
    """A command's runs: a compare's ``rows``, or a sweep's ``results/`` read back."""
    if isinstance(document.get("results"), str):   # mqlog sweep --json
        if read_rows is None:
            raise DocsError("view results: no reader for a sweep's results/ (run it through mqlog docs)")
        return read_rows(cwd / document["results"], sweep=True)
    if isinstance(document.get("rows"), list):     # mqlog compare --json
        return document["rows"]
    if isinstance(document.get("results"), list):  # mqlog mqldt --json: a block size each
        return document["results"]
    raise DocsError("view results needs mqlog sweep --json, mqlog compare --json or mqlog mqldt --json")


def _get(row: dict, path: str):
    """``path``'s value in a run; a key may itself hold dots (``sweep.workload.payload``)."""
    value, parts = row, path.split(".")
    while parts:
        if isinstance(value, str) and value[:1] in "{[":   # a JSON column (params, sweep, a histogram)
            value = json.loads(value)
        if isinstance(value, list) and all(isinstance(p, list) and len(p) == 2 for p in value):
            value = {str(k): v for k, v in value}           # [["<=4K", 31], ...]: by its labels
        for n in range(len(parts), 0, -1):
            if isinstance(value, dict) and ".".join(parts[:n]) in value:
                value, parts = value[".".join(parts[:n])], parts[n:]
                break
        else:
            raise DocsError(f"view results: a run has no field {path!r}")
    return value


def _identity(row: dict, leave_out: str = "") -> tuple:
    """What makes a run the same cell across commands: configuration, swept values, payload..."""
    sweep = row.get("sweep") if isinstance(row.get("sweep"), dict) else {}
    parts = [("config_name", row.get("config_name"))] + sorted((f"sweep.{k}", str(v)) for k, v in sweep.items())
    return tuple((k, v) for k, v in parts if k != leave_out)


def _number(value):
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _change(now, then) -> str:
    if _number(now) is None or not then:
        return "–"
    return f"{now / then - 1:+.1%}".replace("-", "−")


class _Runs:
    def __init__(self, documents):
        self.by_label = {label: rows for label, rows in documents}

    def twin(self, label: str, row: dict, key: str = "", value: str = "") -> dict:
        """The run of command ``label`` that is ``row``'s cell (with ``key`` = ``value``)."""
        if label not in self.by_label:
            raise DocsError(f"view results: no command labelled {label!r}")
        want = _identity(row, key)
        matches = [other for other in self.by_label[label]
                   if _identity(other, key) == want and (not key or str(_get(other, key)) == value)]
        # a sweep over devices or hosts has one such run a device: the one on the row's own
        # (``LABEL@`` reaches across commands, each on a device of its own: any of them)
        same = [o for o in matches if all(o.get(k) == row.get(k) for k in ("device", "host", "seed") if k != key)]
        if same or matches:
            return (same or matches)[0]
        where = ", ".join(f"{k}={v}" for k, v in want) + (f", {key}={value}" if key else "")
        raise DocsError(f"view results: command {label!r} has no run with {where}")


def _value(g: dict, r: dict):
    """A field's number in run ``r`` (``g``: the field's parts): PATH, A-B, scaled, divided."""
    v = _get(r, g["path"])
    if g["minus"]:   # A-B: a difference of two fields
        b = _get(r, g["minus"])
        v = v - b if _number(v) is not None and _number(b) is not None else None
    for factor in (g["scale"] or "").split("*") if g["scale"] else ():   # *NUMBER or *PATH, any number
        try:
            f = float(factor)
        except ValueError:   # PATH, or PATH+NUMBER: (N + 1) in IBM's 2 x (N + 1) x B
            path, plus, add = factor.partition("+")
            f = _get(r, path)
            if plus:
                try:
                    f = f + float(add) if _number(f) is not None else None
                except ValueError:
                    raise DocsError(f"view results: {factor!r}: PATH+NUMBER adds a number to a field") from None
        v = v * f if _number(v) is not None and _number(f) is not None else None
    if g["over"]:
        d = _get(r, g["over"])
        v = v / d if _number(v) is not None and _number(d) else None
    return v


def field_value(match, row: dict, label: str, runs: _Runs):
    """A ``{FIELD}``'s value in ``row`` before it is formatted: a number (``vs``: the change in
    percent, +2.5 for +2.5%), or None where there is none."""
    g = match.groupdict()
    source = runs.twin(g["label"], row) if g["label"] else row
    v = _value(g, source)
    if g["vs_key"]:
        then = _value(g, runs.twin(g["label"] or label, source, g["vs_key"], g["vs_value"].strip()))
        if _number(v) is None or not then:
            return None
        return v / then if g["vs_op"] == "over" else (v / then - 1) * 100
    return v


def _field(match, row: dict, label: str, runs: _Runs) -> str:
    g = match.groupdict()
    if g["path"] == "label" and not g["label"]:
        return label   # the command's label (a compare run a payload, say)
    if g["vs_key"] and g["vs_op"] == "vs":   # a change against the other run: +0.0%, −36.6%
        source = runs.twin(g["label"], row) if g["label"] else row
        base = runs.twin(g["label"] or label, source, g["vs_key"], g["vs_value"].strip())
        return _change(_value(g, source), _value(g, base))
    v = field_value(match, row, label, runs)
    fmt = g["format"] or ""
    if fmt.startswith("?"):   # ?YES|NO: YES where the value is not zero (%s in it: the value)
        yes, _, no = fmt[1:].partition("|")
        return yes.replace("%s", str(v)) if v else no
    try:
        if fmt.endswith("~"):   # trailing zeros dropped: 0.19, 3, 0.75
            text = cell(v, fmt[:-1])
            return text.rstrip("0").rstrip(".") if "." in text else text
        return cell(v, fmt)
    except (TypeError, ValueError):
        raise DocsError(f"view results: {g['path']} = {v!r} does not take the format {g['format']!r}") from None


def _order(spec: str):
    keys = []
    for part in spec.split(","):
        path, _, listed = part.strip().partition(":")
        order = listed.split("|") if listed else None
        keys.append((path, order))

    def key(row):
        out = []
        for path, order in keys:
            v = _get(row, path)
            if order is not None:
                out.append((0, order.index(str(v)) if str(v) in order else len(order), ""))
            elif _number(v) is not None:
                out.append((0, v, ""))
            else:
                out.append((1, 0, str(v)))
        return out

    return key


def results(documents, options, cwd: Path) -> list[str]:
    spec = options.get("columns")
    if not isinstance(spec, str) or not spec:
        raise DocsError("view results needs columns=\"Header=TEMPLATE;...\"")
    columns = [(h.strip(), t) for h, _, t in (part.partition("=") for part in spec.split(";"))]
    listed = options.get("list")
    loaded = [(label, _listed(document, listed) if isinstance(listed, str) else load_rows(document, cwd))
              for label, document in documents]
    runs = _Runs(loaded)
    wanted = options.get("rows").split(",") if isinstance(options.get("rows"), str) else None
    chosen = [(label, row) for label, rows in loaded if wanted is None or label in wanted for row in rows]
    if isinstance(options.get("where"), str):
        for condition in options["where"].split(","):
            path, _, value = condition.partition("=")
            chosen = [(label, row) for label, row in chosen
                      if str(_get(row, path.strip())) in [v.strip() for v in value.split("|")]]   # a|b: either
    if isinstance(options.get("sort"), str):
        key = _order(options["sort"])
        chosen.sort(key=lambda pair: key(pair[1]))
    body = [[_FIELD.sub(lambda m: _field(m, row, label, runs), template) for _, template in columns]
            for label, row in chosen]
    header = [h for h, _ in columns]
    if isinstance(options.get("across"), str):
        header, body = _across(header, body, [_FIELD.sub(lambda m: _field(m, row, label, runs), options["across"])
                                              for label, row in chosen])
    if isinstance(options.get("collapse"), str):
        body = _collapse(header, body, options["collapse"].split(","))
    if isinstance(options.get("once"), str):
        body = _once(header, body, options["once"].split(","))
    if "transpose" in options:   # a run a column: the first column's cells head them
        header, body = [header[0]] + [r[0] for r in body], [[h] + [r[i] for r in body]
                                                             for i, h in enumerate(header) if i]
    columns = header
    align = options.get("align")
    if not isinstance(align, str):
        align = "".join("r" if body and all(re.match(r"^[-+−]?[\d.,]+", r[i]) or r[i] == "–" for r in body)
                        else "l" for i in range(len(columns)))
    if len(align) != len(columns):
        raise DocsError(f"view results: align={align} has {len(align)} letters for {len(columns)} columns")
    return render_table(header, body, align)


def _listed(document: dict, path: str) -> list[dict]:
    """The rows a listing command gives: the list (or the one dict) at ``path``."""
    found = _get(document, path)
    if isinstance(found, dict):
        return [found]
    if not isinstance(found, list) or not all(isinstance(r, dict) for r in found):
        raise DocsError(f"view results: list={path} is not a list of rows in the command's JSON")
    return found


def _once(header: list[str], body: list[list[str]], columns: list[str]) -> list[list[str]]:
    """The ``columns``' cells left blank where they repeat the row above."""
    missing = [c for c in columns if c not in header]
    if missing:
        raise DocsError(f"view results: once names {missing[0]!r}, not a column")
    index = [header.index(c) for c in columns]
    out = []
    for n, row in enumerate(body):
        out.append([("" if n and i in index and c == body[n - 1][i] else c) for i, c in enumerate(row)])
    return out


def _across(header: list[str], body: list[list[str]], across: list[str]) -> tuple[list[str], list[list[str]]]:
    """Spread the last column across: one column per value of ``across`` (in the rows' order),
    one row per value of the other columns."""
    tops = list(dict.fromkeys(across))
    rows: dict[tuple, dict] = {}
    for row, top in zip(body, across):
        rows.setdefault(tuple(row[:-1]), {})[top] = row[-1]
    return header[:-1] + tops, [list(k) + [cells.get(t, "–") for t in tops] for k, cells in rows.items()]


def _collapse(header: list[str], body: list[list[str]], ranged: list[str]) -> list[list[str]]:
    """Rows next to each other that differ only in the ``ranged`` columns as one row whose
    cells there read ``FIRST to LAST``."""
    missing = [c for c in ranged if c not in header]
    if missing:
        raise DocsError(f"view results: collapse names {missing[0]!r}, not a column")
    loose = {header.index(c) for c in ranged}
    out: list[list[list[str]]] = []
    for row in body:
        if out and all(a == b for i, (a, b) in enumerate(zip(out[-1][0], row)) if i not in loose):
            out[-1].append(row)
        else:
            out.append([row])
    return [[c if len(run) == 1 or i not in loose or c == run[-1][i] else f"{c} to {run[-1][i]}"
             for i, c in enumerate(run[0])] for run in out]
