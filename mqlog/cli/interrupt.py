"""Ctrl-C and SIGTERM (issue 36): the command stops as at a crash, every lock it holds is
released on the way out (the ``with`` blocks unwind), and one line says how to recover:
``mqlog restart DIR`` for a run directory it was writing. Exit 130 for SIGINT, 143 for SIGTERM
(128 + the signal, as a shell reports them).

:func:`install` sets the handlers; :func:`stopped` prints the line and gives the exit code.
The command group's ``main`` calls both and nothing else of this.
"""

from __future__ import annotations

import signal
from pathlib import Path

import click


class Interrupted(BaseException):
    """The process was told to stop (SIGINT, SIGTERM) while it ran a command. A BaseException,
    as KeyboardInterrupt is, so that no ``except Exception`` swallows it; ``directories``: the
    ones it held locked for writing when the signal came."""

    def __init__(self, signum: int, directories: list[Path]):
        super().__init__(signum, directories)  # both, so that SimPy's re-raise can rebuild it
        self.signum = signum
        self.directories = directories


def _handler(signum, frame):
    from mqlog.rundir import held_directories

    raise Interrupted(signum, held_directories())


def install() -> None:
    """Turn SIGINT and SIGTERM into :class:`Interrupted` in the main thread (elsewhere, as
    under a test runner's thread, the defaults stay)."""
    try:
        signal.signal(signal.SIGINT, _handler)
        signal.signal(signal.SIGTERM, _handler)
    except ValueError:  # not the main thread
        pass


def _created(directory: Path) -> bool:
    """Whether restart has a queue manager to recover there; when that cannot be told (a
    damaged file), restart is the command that says what is wrong, so the line names it."""
    from mqlog.rundir import created

    try:
        return created(directory)
    except Exception:
        return True


def stopped(exc: BaseException) -> int:
    """The one line an interrupted command ends with, and its exit code."""
    from mqlog.rundir import RUN_FILE

    signum = getattr(exc, "signum", signal.SIGINT)
    name = "Ctrl-C" if signum == signal.SIGINT else signal.Signals(signum).name
    directories = getattr(exc, "directories", [])
    runs = [d for d in directories if (Path(d) / RUN_FILE).is_file()]
    if runs and not _created(runs[-1]):
        click.echo(f"mqlog: stopped by {name}: the queue manager in {runs[-1]} stopped before its first checkpoint "
                   "reached the disk, so it was never created (its lock released); nothing to recover: "
                   "run the command again", err=True)
    elif runs:
        where = runs[-1]
        click.echo(f"mqlog: stopped by {name}: the queue manager in {where} stopped where it was, as at a crash "
                   f"(its lock released); 'mqlog restart {where}' recovers it", err=True)
    elif directories:
        click.echo(f"mqlog: stopped by {name}: {directories[-1]} is incomplete (its lock released); "
                   "run the command again to finish it", err=True)
    else:
        click.echo(f"mqlog: stopped by {name}", err=True)
    return 128 + int(signum)
