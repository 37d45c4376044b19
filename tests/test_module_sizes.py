"""No module over 600 lines, source or test (issue 41): past that a module holds more than one
idea, and the next person reads the whole of it to change one. A module that grows past it
splits by topic – a test module's shared makers into a kit at the top of tests/."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIMIT = 600
#: the checkout's own code: the package's directories, the tests and the perf suites
TREES = ("core", "distributed", "zos", "spark", "mqlog", "tests", "perf")


def modules() -> list[Path]:
    found = sorted(path for tree in TREES for path in (ROOT / tree).rglob("*.py"))
    return [*found, ROOT / "conftest.py"]


def test_no_module_is_over_600_lines():
    every = modules()
    assert len(every) > 200 and ROOT / "core" / "qm" / "manager.py" in every  # the walk sees the tree
    over = {str(path.relative_to(ROOT)): n for path in every
            if (n := len(path.read_text(encoding="utf-8").splitlines())) > LIMIT}
    assert not over, f"modules over {LIMIT} lines (split them by topic): {over}"
