"""The kit of the tests that damage a run's log files as a user would and restart it with the
command line (``tests/test_log_end_checks.py``, ``tests/test_log_holes.py``): the command, a
digest of the queue manager's files, a fresh copy of a run to damage, pages zeroed in place,
and the checks that a restart refused the damage in one line and wrote nothing.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

from mqlog.core.format.pages import PAGE_SIZE


def mqlog(*args) -> subprocess.CompletedProcess:
    """The command line, as a user runs it."""
    return subprocess.run([sys.executable, "-m", "mqlog", *map(str, args)], capture_output=True, text=True,
                          timeout=300)


def digest(run: Path) -> str:
    """One hash of every file of the run's queue manager, names and bytes."""
    h = hashlib.sha256()
    for f in sorted((run / "qm").iterdir()):
        h.update(f.name.encode())
        h.update(f.read_bytes())
    return h.hexdigest()


def fresh(run: Path, tmp_path: Path, name: str = "run") -> Path:
    """A copy of ``run`` to damage (the module's runs are shared by its tests)."""
    copy = tmp_path / name
    shutil.copytree(run, copy)
    return copy


def zero(path: Path, first_page: int, pages: int | None = None, *, log_after: bool = False) -> None:
    """Zero ``pages`` pages (all to the end of the file if None) from ``first_page``: the file
    stays full-size, as a freshly formatted one is. The pages must hold something (else there
    is no damage); with ``log_after``, so must the page after the next one (a hole, not the end
    of the log)."""
    end = path.stat().st_size if pages is None else (first_page + pages) * PAGE_SIZE
    start = first_page * PAGE_SIZE
    with open(path, "r+b") as f:
        f.seek(start)
        assert any(f.read(end - start)), "nothing to zero there: no damage"
        if log_after:
            f.seek(end + PAGE_SIZE)
            assert any(f.read(PAGE_SIZE)), "no log after the hole: this would be the end of the log"
        f.seek(start)
        f.write(bytes(end - start))


def said_refused(out: subprocess.CompletedProcess, *words) -> None:
    """The command failed with one line (no traceback) naming every word, and said nothing
    about a started queue manager or a verdict."""
    assert out.returncode == 2, (out.returncode, out.stdout, out.stderr)
    assert "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1, out.stderr
    for word in words:
        assert word in out.stderr, (word, out.stderr)
    for said in ("AMQ8003I", "CSQR002I", "verify:"):
        assert said not in out.stdout, out.stdout


def refused(run: Path, *words) -> str:
    """``restart --verify`` refuses ``run`` (:func:`said_refused`) and writes nothing: twice,
    the same line both times, which it returns."""
    before = digest(run)
    first = None
    for _ in range(2):
        out = mqlog("restart", run, "--verify")
        said_refused(out, *words)
        assert digest(run) == before
        assert first is None or out.stderr == first
        first = out.stderr
    return first
