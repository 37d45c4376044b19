"""Views for ``mqlog docs``: each turns the JSON documents a table block's commands print
(``[(label, document)]``) and the block's options into the lines of a Markdown table. One
format per metric: counts with thousands separators, ratios with the digits a view names.
"""

from __future__ import annotations

import re

from mqlog.core.errors import MqlogError


class DocsError(MqlogError):
    """A page's markup that cannot be read (a table without its end, an unknown view, a claim
    that names no cell)."""


def render_table(header: list[str], rows: list[list[str]], align: str) -> list[str]:
    """A Markdown table: ``align`` has one letter a column, ``l`` or ``r``."""
    rule = ["---" if a == "l" else "---:" for a in align]
    def line(cells):   # a | in a cell (a usage's a|b) is escaped, as Markdown needs it
        return "|" + "|".join(f" {escaped(c)} " if c else " " for c in cells) + "|"

    return [line(header), "|" + "|".join(rule) + "|"] + [line(r) for r in rows]


def escaped(text: str) -> str:
    """A cell's text with each ``|`` not already escaped written ``\\|``."""
    return re.sub(r"(?<!\\)\|", r"\\|", text)


def _get(document, path: str):
    value = document
    for part in path.split(".") if path else []:
        if isinstance(value, list):
            value = value[int(part)]
        elif isinstance(value, dict) and part in value:
            value = value[part]
        else:
            raise DocsError(f"the command's JSON has no {path!r}")
    return value


def cell(value, fmt: str = "") -> str:
    """A value as a table shows it: integers with thousands separators, ``fmt`` (a Python
    format spec) when given, nothing as an en dash."""
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if fmt:
        return format(value, fmt)
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def fields(documents, options, cwd=None) -> list[str]:
    """Rows from a list in each document (``rows=PATH``, dotted; none: the document is the
    row), one column per ``columns="Header=path[:format];..."``; with ``label=Header`` the
    commands' labels are a first column."""
    spec = options.get("columns")
    if not isinstance(spec, str) or not spec:
        raise DocsError("view fields needs columns=\"Header=path;...\"")
    columns = []
    for part in spec.split(";"):
        head, _, rest = part.partition("=")
        path, _, fmt = rest.partition(":")
        columns.append((head.strip(), path.strip(), fmt.strip()))
    label = options.get("label") if isinstance(options.get("label"), str) else None
    rows = []
    for name, document in documents:
        found = _get(document, options["rows"]) if isinstance(options.get("rows"), str) else document
        for row in (found if isinstance(found, list) else [found]):
            rows.append(([name] if label else []) + [cell(_get(row, p), f) for _, p, f in columns])
    header = ([label] if label else []) + [h for h, _, _ in columns]
    align = ("l" if label else "") + "".join("l" if rows and not rows[0][i + bool(label)][:1].isdigit() else "r"
                                             for i in range(len(columns)))
    return render_table(header, rows, align)


def torture(documents, options, cwd=None) -> list[str]:
    """``mqlog torture --json`` campaigns, one group of rows per command (its label the
    setting), one row per fault class the configuration has scenarios for."""
    header = ["setting", "physical writes", "fault", "claim", "tried (of)", "survived", "detected",
              "expected loss", "silent loss", "errors"]
    rows = []
    for label, document in documents:
        first = True
        for c in document["classes"]:
            if not c["possible"]:
                continue  # a fault this configuration has no scenario for (one copy: `copy`)
            rows.append([f"**{label}**" if first else "", cell(document["physical_writes"]) if first else "",
                         c["fault"], c["claim"], f"{c['tried']:,} ({c['possible']:,})", cell(c["survived"]),
                         cell(c["detected"]), cell(c["expected_loss"]), cell(c["silent_loss"]), cell(c["errors"])])
            first = False
    return render_table(header, rows, "lrllrrrrrr")


VIEWS = {"fields": fields, "torture": torture}   # and "results" (mqlog.docresults), added by mqlog.docpages
