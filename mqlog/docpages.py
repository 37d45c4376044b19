"""Published figures that cannot go stale (``mqlog docs``, issue 36).

A page (README.md, a guide page) marks each generated table, each console transcript and each
prose comparison with an HTML comment, so that the page stays readable Markdown and says which
command made what it shows:

``<!-- mqlog docs: table ID view=VIEW key=COLUMN,... [fast]``, more options a line each
(``columns="..."``) if need be, then one command a line (``LABEL: mqlog ... --json``), then ``-->``; the Markdown table follows, and ``<!-- mqlog docs: end -->``
closes it. The view (:mod:`mqlog.docviews`) turns the commands' JSON documents into the table's
rows; the key columns (the first unless given) name a row (a blank cell repeats the one above).

``<!-- mqlog docs: figure img/NAME.png ...`` draws a plot from its commands' runs
(:mod:`mqlog.docfigures`); ``--check`` compares the points it carries, ``--write`` draws it.

``<!-- mqlog docs: console [fast] [skip=REGEX] -->`` just above a fenced block of ``$ mqlog ...``
lines and what they printed: every command is run again, in order, in one scratch directory, and
every line the page shows must be printed in that order; a line ``...`` stands for any number of
lines. ``skip`` names lines (progress in completion order, say) that are not compared.

A console block with ``id=ID`` also names the aligned table its commands print (``mqlog
compare``'s, rows named by their first cell: ``ID["commits"]["zos-single-none"]``) for claims.

``<!-- mqlog docs: claim EXPR -->`` after a sentence that compares figures: EXPR compares cells
of the page's tables, ``ID["row key"]["column"]`` (a row key of several columns joined by
`` / ``; ``*`` in it sums every matching row), with numbers, ``+ - * /``, comparisons, ``and``,
``or``, ``not``. The check evaluates it on the figures the commands print now, so a comparison
that flips fails the check, naming the sentence's claim.

:func:`check_page` re-runs a page's blocks and returns every mismatch (page, row, column, the
page's value and the command's); :func:`write_page` puts the commands' figures in. Commands run
as ``python -m mqlog`` in a scratch directory (their ``--out`` is there too), never beside the page.
"""

from __future__ import annotations

import ast
import difflib
import fnmatch
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from mqlog.docresults import results
from mqlog.docviews import VIEWS, DocsError, render_table

VIEWS = {**VIEWS, "results": results}

_OPEN = re.compile(r"<!--\s*mqlog docs:\s*(table|figure|console|claim)\b(.*?)(-->|$)", re.S)
_END = "<!-- mqlog docs: end -->"


@dataclass
class Block:
    kind: str                 # table | figure | console | claim
    start: int                # first line of the block's body (0-based)
    end: int                  # one past its last line
    line: int                 # the comment's line, 1-based, for messages
    ident: str = ""
    options: dict = field(default_factory=dict)
    commands: list = field(default_factory=list)    # (label, argv text)
    expr: str = ""

    @property
    def fast(self) -> bool:
        return "fast" in self.options


@dataclass
class Mismatch:
    page: str
    where: str                # "table risk, row 'TWOACTV=NO / lost', column 'detected'" or "line 123"
    shown: str
    now: str

    def __str__(self) -> str:
        return f"{self.page}: {self.where}: the page shows {self.shown!r}, the command now gives {self.now!r}"


def _options(words: list[str]) -> dict:
    out = {}
    for word in words:
        key, eq, value = word.partition("=")
        out[key] = value if eq else True
    return out


def parse(text: str) -> list[Block]:
    """The page's marked blocks, in order."""
    lines = text.split("\n")
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        m = _OPEN.search(lines[i])
        if not m or not lines[i].lstrip().startswith("<!--"):
            i += 1
            continue
        kind, rest = m.group(1), m.group(2)
        if kind == "claim":
            body = rest
            j = i
            while m.group(3) != "-->" and "-->" not in lines[j]:
                j += 1
                if j >= len(lines):
                    raise DocsError(f"line {i + 1}: a claim's comment never ends")
                body += " " + lines[j]
            expr = body.split("-->")[0].strip()
            blocks.append(Block("claim", i, j + 1, i + 1, expr=expr))
            i = j + 1
            continue
        if kind == "console":
            words = shlex.split(rest.strip())
            j = i + 1
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            k = j + 1
            while k < len(lines) and not lines[k].startswith("```"):
                k += 1
            if k >= len(lines):
                raise DocsError(f"line {i + 1}: a console block needs a fenced block after it")
            options = _options(words)
            ident = options["id"] if isinstance(options.get("id"), str) else ""
            blocks.append(Block("console", j + 1, k, i + 1, ident=ident, options=options))
            i = k + 1
            continue
        # a table or a figure: header words on the comment's first line, commands until -->
        words = shlex.split(rest.strip())
        if not words:
            raise DocsError(f"line {i + 1}: a {kind} block needs " + ("an id" if kind == "table" else "its image's path"))
        block = Block(kind, 0, 0, i + 1, ident=words[0], options=_options(words[1:]))
        j = i + 1
        while j < len(lines) and "-->" not in lines[j]:
            command = lines[j].strip()
            if re.match(r"^[a-z][a-z0-9_]*=", command) and not block.commands:  # an option on a line of its own
                block.options.update(_options(shlex.split(command)))
            elif command:
                label, sep, argv = command.partition(": mqlog ")
                block.commands.append((label.strip(), "mqlog " + argv) if sep else ("", command))
            j += 1
        if kind == "figure":   # no body: the image is a file beside the page
            block.start = block.end = j + 1
            blocks.append(block)
            i = j + 1
            continue
        k = j + 1
        while k < len(lines) and lines[k].strip() != _END:
            k += 1
        if k >= len(lines):
            raise DocsError(f"line {i + 1}: table {block.ident} has no {_END}")
        block.start, block.end = j + 1, k
        blocks.append(block)
        i = k + 1
    return blocks


# -- running the page's commands ------------------------------------------------------------

def _argv(command: str) -> list[str]:
    words = shlex.split(command)
    if not words or Path(words[0]).name != "mqlog":
        raise DocsError(f"{command!r}: only mqlog commands are re-run")
    return [sys.executable, "-m", "mqlog", *words[1:]]


def run_command(command: str, cwd: Path, *, merge: bool = False) -> str:
    """What ``command`` (``mqlog ...``) prints on stdout (``merge``: and stderr, as a terminal
    shows them), run in ``cwd`` with no terminal width, so lines are never wrapped."""
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    done = subprocess.run(_argv(command), cwd=cwd, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT if merge else subprocess.PIPE, text=True)
    if not merge and done.returncode not in (0, 1):
        raise DocsError(f"{command!r} failed (exit {done.returncode}): {done.stderr.strip()[-500:]}")
    return done.stdout


class Scratch:
    """A scratch directory where a page's commands run: the repository's ``docs`` and ``tests``
    are linked in, so the paths a page names resolve, and every ``out/...`` lands here."""

    def __init__(self, root: Path):
        self._tmp = tempfile.TemporaryDirectory(prefix="mqlog-docs-", ignore_cleanup_errors=True)  # a killed sweep may still write
        self.path = Path(self._tmp.name)
        for name in ("docs", "tests"):
            if (root / name).exists():
                (self.path / name).symlink_to((root / name).resolve())

    def close(self) -> None:
        self._tmp.cleanup()


# -- tables ---------------------------------------------------------------------------------

def _cells(line: str) -> list[str]:
    """A table line's cells; an escaped ``\\|`` is part of its cell."""
    return [c.strip() for c in re.split(r"(?<!\\)\|", line.strip().removeprefix("|").removesuffix("|"))]


def _plain(cell: str) -> str:
    return cell.replace("**", "").replace("`", "").replace("\\|", "|").strip()


def table_rows(lines: list[str]) -> tuple[list[str], list[list[str]]]:
    """A Markdown table's header and body rows (cells as written)."""
    rows = [_cells(line) for line in lines if line.strip().startswith("|")]
    if len(rows) < 2:
        return [], []
    return rows[0], rows[2:]


def key_columns(block: Block, header: list[str]) -> list[int]:
    """The columns that name a row: ``key=NAME,NAME`` (the first column unless given)."""
    names = block.options.get("key")
    if not isinstance(names, str):
        return [0]
    plain = [_plain(h) for h in header]
    missing = [n for n in names.split(",") if n not in plain]
    if missing:
        raise DocsError(f"table {block.ident}: key column {missing[0]!r} is not in its header")
    return [plain.index(n) for n in names.split(",")]


def row_keys(rows: list[list[str]], key: list[int]) -> list[str]:
    """Each row's name: its key columns' cells, a blank cell repeating the one above."""
    keys, above = [], [""] * len(key)
    for row in rows:
        parts = [(_plain(row[c]) or above[n]) if c < len(row) else above[n] for n, c in enumerate(key)]
        above = parts
        keys.append(" / ".join(parts))
    return keys


def _documents(block: Block, scratch: Path, printed: dict) -> list[tuple[str, dict]]:
    """Each of the block's commands' JSON; ``printed`` (command -> its JSON) keeps what a command
    printed for the page's other blocks, so a sweep two tables read runs once."""
    documents = []
    for label, command in block.commands:
        if command not in printed:
            text = run_command(command, scratch)
            try:
                printed[command] = json.loads(text)
            except json.JSONDecodeError:  # (it failed with exit 1, having printed no document)
                raise DocsError(f"{command!r} printed no JSON document ({text.strip()[-300:] or 'nothing'}): "
                                "run it by hand to see why") from None
        documents.append((label, printed[command]))
    return documents


def generate(block: Block, scratch: Path, printed: dict | None = None) -> list[str]:
    """The table ``block``'s commands make now."""
    view = VIEWS.get(block.options.get("view", ""))
    if view is None:
        raise DocsError(f"table {block.ident}: unknown view {block.options.get('view')!r}; "
                        f"views: {', '.join(VIEWS)}")
    documents = _documents(block, scratch, {} if printed is None else printed)
    try:
        return view(documents, block.options, scratch)
    except DocsError as exc:
        raise DocsError(f"table {block.ident}: {exc}") from None


def _number(cell: str):
    text = _plain(cell).replace(",", "").replace("%", "").replace("−", "-")   # −36.6%: a change
    m = re.match(r"^[-+]?\d+(\.\d+)?", text)
    return float(m.group(0)) if m else None


def compare_tables(page: str, block: Block, shown: list[str], now: list[str]) -> list[Mismatch]:
    head_s, rows_s = table_rows(shown)
    head_n, rows_n = table_rows(now)
    key = key_columns(block, head_n)
    where = f"table {block.ident}"
    out = []
    if head_s != head_n:
        out.append(Mismatch(page, f"{where}, header", " | ".join(head_s), " | ".join(head_n)))
        return out
    keys_s, keys_n = row_keys(rows_s, key), row_keys(rows_n, key)
    by_key = dict(zip(keys_n, rows_n))
    for k, row in zip(keys_s, rows_s):
        if k not in by_key:
            out.append(Mismatch(page, f"{where}, row {k!r}", " | ".join(row), "no such row"))
            continue
        for column, a, b in zip(head_s, row, by_key[k]):
            if a != b:
                out.append(Mismatch(page, f"{where}, row {k!r}, column {_plain(column)!r}", a, b))
    for k in keys_n:
        if k not in keys_s:
            out.append(Mismatch(page, f"{where}, row {k!r}", "no such row", " | ".join(by_key[k])))
    return out


# -- console transcripts ---------------------------------------------------------------------

def _transcript(lines: list[str]) -> list[tuple[str, int, list[tuple[int, str]]]]:
    """(command, its line, [(line number, shown output line)]) for each ``$`` command."""
    out = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("$ "):
            number = i
            command = line[2:]
            while command.rstrip().endswith("\\") and i + 1 < len(lines):
                i += 1
                command = command.rstrip()[:-1] + " " + lines[i].strip()
            command = command.split("  #")[0].strip()
            out.append((command, number, []))
        elif out:
            out[-1][2].append((i, line))
        i += 1
    return out


def _segments(shown: list[tuple[int, str]]) -> list[list[tuple[int, str]]]:
    segments, current = [], []
    for number, line in shown:
        if line.strip() == "...":
            segments.append(current)
            current = []
        else:
            current.append((number, line))
    segments.append(current)
    return [s for s in segments if s]


def console_table(block: Block, printed: list[str]) -> _Table:
    """The aligned table a console block's commands printed (``mqlog compare``'s), for claims:
    its header line starts with ``configuration`` (``table=WORD``: with WORD), cells are apart by
    two spaces or more (``columns=A,B,...``: the columns' names, cells apart by any space), and
    a row is named by its first cell (``commits``)."""
    first = block.options.get("table") if isinstance(block.options.get("table"), str) else "configuration"
    named = block.options["columns"].split(",") if isinstance(block.options.get("columns"), str) else None
    split = [re.split(r"\s+" if named else r"\s{2,}", line.strip()) for line in printed]
    start = next((i for i, cells in enumerate(split) if cells[0] == first), None)
    if start is None:
        raise DocsError(f"console {block.options['id']} (line {block.line}): no line starting {first!r} was printed")
    header, rows = named or split[start], []
    for cells in split[start + 1:]:
        if re.fullmatch(r"-+", cells[0]) and not rows:   # a rule under the header
            continue
        if len(cells) != len(header):
            break
        rows.append(cells)
    return _Table(block.options["id"], header, rows, [0])


def compare_console(page: str, block: Block, lines: list[str], scratch: Path,
                    fixes: dict | None = None, outputs: list | None = None) -> list[Mismatch]:
    """Re-run a console block's commands; every shown line must be printed, in order. ``fixes``
    (line number -> the line printed) collects what ``--write`` puts in; ``outputs`` every
    line the commands printed."""
    skip = re.compile(block.options["skip"]) if isinstance(block.options.get("skip"), str) else None
    out = []
    for command, number, shown in _transcript(lines[block.start:block.end]):
        if not command.split()[0].endswith("mqlog"):
            raise DocsError(f"{page}: line {block.start + number + 1}: only mqlog commands are re-run "
                            f"in a console block: {command!r}")
        printed = run_command(command, scratch, merge=True).rstrip("\n").split("\n")
        if outputs is not None:
            outputs += printed
        printed = [p for p in printed if not (skip and skip.search(p))]
        position = 0
        for segment in _segments([(n, s) for n, s in shown if not (skip and skip.search(s))]):
            first = segment[0][1]
            texts = [s for _, s in segment]
            found = next((p for p in range(position, len(printed) - len(texts) + 1)
                          if printed[p:p + len(texts)] == texts), None)
            if found is not None:
                position = found + len(texts)
                continue
            start = next((p for p in range(position, len(printed)) if printed[p] == first), None)
            if start is None:
                close = difflib.get_close_matches(first, printed[position:], n=1, cutoff=0.5)
                start = printed.index(close[0], position) if close else None
            if start is None:
                out.append(Mismatch(page, f"line {block.start + segment[0][0] + 1} ({command})", first,
                                    "no such line"))
                continue
            # lines the command now prints within the segment (a new table row) are taken in by
            # --write: the segment runs on to the line with its last line's label
            last = segment[-1][1]
            label = last[:24]
            stop = next((k for k in range(start + len(segment) - 1, min(len(printed), start + len(segment) + 12))
                         if printed[k][:24] == label), start + len(segment) - 1)
            for offset, (n, text) in enumerate(segment):
                now = printed[start + offset] if start + offset < len(printed) else ""
                if offset == len(segment) - 1:
                    now = "\n".join(printed[start + offset:stop + 1]) or now
                if now != text:
                    out.append(Mismatch(page, f"line {block.start + n + 1} ({command})", text, now))
                    if fixes is not None:
                        fixes[block.start + n] = now
            position = min(max(stop + 1, start + len(segment)), len(printed))
    return out


# -- claims ----------------------------------------------------------------------------------

_ALLOWED = (ast.Expression, ast.Compare, ast.BoolOp, ast.UnaryOp, ast.BinOp, ast.Constant, ast.Subscript,
            ast.Name, ast.Load, ast.And, ast.Or, ast.Not, ast.USub, ast.Add, ast.Sub, ast.Mult, ast.Div,
            ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Eq, ast.NotEq)


class _Table:
    def __init__(self, ident: str, header: list[str], rows: list[list[str]], key: list[int]):
        self.ident, self.columns = ident, [_plain(h) for h in header]
        self.rows = dict(zip(row_keys(rows, key), rows))

    def value(self, row: str, column: str) -> float:
        if column not in self.columns:
            raise DocsError(f"table {self.ident} has no column {column!r}")
        index = self.columns.index(column)
        matched = [r for k, r in self.rows.items() if fnmatch.fnmatchcase(k, row)]
        if not matched:
            raise DocsError(f"table {self.ident} has no row {row!r}")
        values = [_number(r[index]) if index < len(r) else None for r in matched]
        if any(v is None for v in values):
            raise DocsError(f"table {self.ident}, row {row!r}, column {column!r} is not a number")
        return sum(values)


def evaluate(expr: str, tables: dict[str, _Table]) -> bool:
    """A claim's truth on ``tables`` (id -> table)."""
    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError as exc:
        raise DocsError(f"claim {expr!r}: {exc.msg}") from None
    for node in ast.walk(tree):
        if not isinstance(node, _ALLOWED):
            raise DocsError(f"claim {expr!r}: {type(node).__name__} is not allowed")

    def value(node):
        if isinstance(node, ast.Expression):
            return value(node.body)
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Subscript):  # ID["row"]["column"]
            inner = node.value
            if not (isinstance(inner, ast.Subscript) and isinstance(inner.value, ast.Name)):
                raise DocsError(f"claim {expr!r}: write a cell as ID[\"row\"][\"column\"]")
            name = inner.value.id
            if name not in tables:
                raise DocsError(f"claim {expr!r}: no table {name!r} on the page")
            return tables[name].value(value(inner.slice), value(node.slice))
        if isinstance(node, ast.UnaryOp):
            v = value(node.operand)
            return not v if isinstance(node.op, ast.Not) else -v
        if isinstance(node, ast.BinOp):
            a, b = value(node.left), value(node.right)
            return {ast.Add: a + b, ast.Sub: a - b, ast.Mult: a * b}.get(type(node.op)) \
                if not isinstance(node.op, ast.Div) else a / b
        if isinstance(node, ast.BoolOp):
            results = [value(v) for v in node.values]
            return all(results) if isinstance(node.op, ast.And) else any(results)
        if isinstance(node, ast.Compare):
            left = value(node.left)
            for op, right_node in zip(node.ops, node.comparators):
                right = value(right_node)
                ok = {ast.Lt: left < right, ast.LtE: left <= right, ast.Gt: left > right, ast.GtE: left >= right,
                      ast.Eq: left == right, ast.NotEq: left != right}[type(op)]
                if not ok:
                    return False
                left = right
            return True
        if isinstance(node, ast.Name):
            raise DocsError(f"claim {expr!r}: write a cell as {node.id}[\"row\"][\"column\"]")
        raise DocsError(f"claim {expr!r}: cannot evaluate {type(node).__name__}")

    return bool(value(tree))


# -- a page ----------------------------------------------------------------------------------

@dataclass
class PageResult:
    page: str
    checked: int = 0          # blocks re-run or evaluated
    skipped: int = 0          # blocks left out (--fast)
    mismatches: list = field(default_factory=list)
    text: str | None = None   # the page with the commands' figures in (write_page)


def check_page(path: Path, *, root: Path, fast: bool = False, only: set | None = None,
               write: bool = False, progress=None) -> PageResult:
    """Re-run ``path``'s marked blocks (``fast``: only those marked fast; ``only``: the tables
    and console blocks with these ids and the claims on them) and report every difference; with ``write`` the
    result's ``text`` is the page with the commands' figures in."""
    text = path.read_text()
    lines = text.split("\n")
    page = str(path.relative_to(root)) if path.is_relative_to(root) else str(path)
    result = PageResult(page)
    blocks = parse(text)
    tables: dict[str, _Table] = {}
    replace: dict[int, list[str]] = {}    # a block's start -> its new lines (tables)
    fixes: dict[int, str] = {}            # a line -> its new text (console)
    printed: dict[str, dict] = {}         # a table command -> its JSON, run once a page
    scratch = Scratch(root)
    try:
        for block in blocks:
            chosen = (not fast or block.fast) and (only is None or block.ident in only or
                                                    (block.kind == "claim" and only is not None))
            if block.kind == "claim":
                continue
            if not chosen:
                result.skipped += 1
                continue
            if progress:
                progress(page, block)
            if block.kind == "table":
                try:
                    now = generate(block, scratch.path, printed)
                except DocsError as exc:
                    raise DocsError(f"{page}: {exc}") from None
                shown = lines[block.start:block.end]
                result.mismatches += compare_tables(page, block, shown, now)
                head, rows = table_rows(now)
                tables[block.ident] = _Table(block.ident, head, rows, key_columns(block, head))
                replace[block.start] = now
            elif block.kind == "figure":
                result.mismatches += _figure(page, path.parent, block, scratch.path, printed, write)
            else:
                printed_lines: list[str] = []
                result.mismatches += compare_console(page, block, lines, scratch.path, fixes, printed_lines)
                if isinstance(block.options.get("id"), str):
                    tables[block.options["id"]] = console_table(block, printed_lines)
            result.checked += 1
    finally:
        scratch.close()
    for block in blocks:
        if block.kind != "claim":
            continue
        names = set(re.findall(r"([A-Za-z_][A-Za-z0-9_]*)\s*\[", block.expr))
        if not names <= tables.keys():
            result.skipped += 1   # a claim on a table not re-run this time
            continue
        result.checked += 1
        try:
            holds = evaluate(block.expr, tables)
        except DocsError as exc:
            # (a cell the new figures no longer have – a row merged into a range, say – is the
            # claim's mismatch, not the end of the run: --write still writes the figures)
            result.mismatches.append(Mismatch(page, f"line {block.line}: claim {block.expr}", "true",
                                              f"cannot be evaluated: {exc}"))
            continue
        if not holds:
            result.mismatches.append(Mismatch(page, f"line {block.line}: claim {block.expr}", "true",
                                              "false: the comparison the prose makes no longer holds"))
    if write:
        out, i = [], 0
        ends = {b.start: b.end for b in blocks if b.kind == "table"}
        while i < len(lines):
            if i in replace:   # once: an empty table's body ends where it starts
                out += replace.pop(i)
                i = ends[i]
                continue
            out.append(fixes.get(i, lines[i]))
            i += 1
        result.text = "\n".join(out)
    return result


def _figure(page: str, here: Path, block: Block, scratch: Path, printed: dict, write: bool) -> list[Mismatch]:
    """Draw a figure block's image from its commands' runs: every point that moved is a
    mismatch; ``write`` saves the image."""
    from mqlog.docfigures import differences, draw, points, read_points

    try:
        now = points(_documents(block, scratch, printed), block.options, scratch)
    except DocsError as exc:
        raise DocsError(f"{page}: figure {block.ident}: {exc}") from None
    image = here / block.ident
    found = differences(read_points(image), now)
    if write and found:
        try:
            image.write_bytes(draw(now, block.options))
        except OSError as exc:
            raise DocsError(f"{page}: figure {block.ident}: cannot write {image}: {exc.strerror or exc}") from None
    return [Mismatch(page, f"figure {block.ident}" + (f", {where}" if where else ""), shown, given)
            for where, shown, given in found]
