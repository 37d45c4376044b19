"""The published pages as ``mqlog docs`` lists them (README.md and the guide), and what on a
page no command makes: a Markdown table outside a table block, an image outside a figure
block (each fails ``mqlog docs --check``; :mod:`mqlog.docpages` checks the blocks).
"""

from __future__ import annotations

import re
from pathlib import Path

from mqlog.docpages import parse


def pages(root: Path) -> list[Path]:
    """The published pages: README.md and every page of the guide."""
    return [root / "README.md", *sorted((root / "docs" / "guide").glob("*.md"))]


def describe_page(path: Path, root: Path) -> dict:
    """A published page as ``mqlog docs --list`` shows it: its path, file name, number (a
    guide study's ``NN-`` prefix; None for the others) and title (its first heading, without
    the number)."""
    heading = next((line for line in path.read_text(encoding="utf-8").split("\n") if line.startswith("# ")), "# ")
    number = re.match(r"^(\d+)-", path.name)
    title = re.sub(r"^\d+\.\s*", "", heading[2:].strip())
    shown = path.relative_to(root) if path.is_relative_to(root) else path   # not resolved: docs/ may be a link
    return {"page": str(shown), "file": path.name, "number": int(number.group(1)) if number else None,
            "title": title, "study": number is not None}


def unmarked_tables(text: str) -> int:
    """How many Markdown tables on a page no table block makes (each fails ``mqlog docs --check``)."""
    lines = text.split("\n")
    inside = set()
    for block in parse(text):
        if block.kind == "table":
            inside.update(range(block.start, block.end))
    count = 0
    for i, line in enumerate(lines):
        if re.match(r"^\s*\|[-: |]+\|\s*$", line) and "-" in line and i not in inside:
            count += 1
    return count


def unmarked_figures(text: str) -> int:
    """How many images on a page no figure block draws (each fails ``mqlog docs --check``)."""
    drawn = {b.ident for b in parse(text) if b.kind == "figure"}
    return sum(path not in drawn for path in re.findall(r"!\[[^\]]*\]\(([^)\s]+\.png)\)", text))
