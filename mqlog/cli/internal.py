"""An internal error – a bug in mqlog, not in what the user gave it – reaches the user as one
line: that mqlog failed internally, the command (and seed) that reproduce it, and where the
traceback went, with exit code 3. The traceback goes into the run directory the command was
writing (``mqlog-internal-error.txt`` beside run.json), or a temporary file when it was
writing none. Nothing else is changed: a run directory is left as a crash would leave it
(its run.json was written first), so ``mqlog restart DIR`` recovers it."""

from __future__ import annotations

import os
import platform
import shlex
import sys
import tempfile
import traceback

from mqlog._version import __version__
from mqlog.rundir import INTERNAL_ERROR_FILE, last_written

#: an internal error's exit code (2: mqlog's own errors, 1: aborted)
EXIT_INTERNAL = 3
#: what the line says after "mqlog: " (mqlog's own errors say "error")
INTERNAL_LABEL = "failed internally (a bug in mqlog)"

#: the seed the running command resolved (a run's --seed, else its spec's, else 0), for the
#: reproduction line when the command line did not name one
_seed: int | None = None


def remember_seed(seed: int) -> None:
    """Note the seed the command runs with, for the reproduction line of an internal error."""
    global _seed
    _seed = seed


def reproduction(argv: list[str]) -> str:
    """The command line that reproduces the failure: as given, with the seed it ran with."""
    words = ["mqlog", *argv]
    if _seed is not None and "--seed" not in argv and not any(w.startswith("--seed=") for w in argv):
        words += ["--seed", str(_seed)]
    return shlex.join(words)


def _write_traceback(text: str) -> str:
    directory = last_written()
    if directory is not None:
        path = directory / INTERNAL_ERROR_FILE
        try:
            path.write_text(text, encoding="utf-8")
            return str(path)
        except OSError:
            pass  # a directory gone or read-only: a temporary file instead
    fd, name = tempfile.mkstemp(prefix="mqlog-internal-error-", suffix=".txt")
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text)
    return name


def internal_error_line(exc: BaseException, argv: list[str]) -> str:
    """Write ``exc``'s traceback to a file and return the one line that tells the user."""
    command = reproduction(argv)
    text = (f"mqlog {__version__} failed internally (a bug in mqlog)\n"
            f"command: {command}\n"
            f"python: {sys.version.split()[0]} on {platform.platform()}\n\n"
            + "".join(traceback.format_exception(exc)))
    try:
        where = f"traceback in {_write_traceback(text)}"
    except OSError as err:
        where = f"the traceback could not be written ({err.strerror or err})"
    what = f"{type(exc).__name__}: {exc}".splitlines()[0] if str(exc) else type(exc).__name__
    directory = last_written()
    recover = f"; recover {directory} with: {shlex.join(['mqlog', 'restart', str(directory)])}" if directory else ""
    return f"{what}; reproduce with: {command}; {where}{recover}"
