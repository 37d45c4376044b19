"""The z/OS utilities over a run directory: what ``mqlog run --platform zos --out DIR`` left,
opened and read under the directory's shared lock, for ``mqlog print``, ``mqlog bsds`` and
``mqlog stats``.

The listings themselves are the platform's (its descriptor's ``tools``: they work on a log
space); this module is the application layer's part: finding the run's platform
(:mod:`mqlog.rundir`), its lock, its metrics.json. :func:`open_zos` raises
:class:`~mqlog.core.errors.MqlogError` with a one-line message if DIR is not such a
directory; :func:`print_run`, :func:`bsds_run`, :func:`stats_run` and :func:`convert_rba_run`
do the whole job for a directory, so that command-line commands are one-liners.
"""

from __future__ import annotations

from pathlib import Path

from mqlog.core.errors import MqlogError
from mqlog.platforms import owner
from mqlog.rundir import load_metrics, load_run, locked, open_platform, read_locked, write_run

__all__ = ["PLATFORM", "open_zos", "print_run", "bsds_run", "stats_run", "convert_rba_run"]

#: the platform whose utilities these are (its descriptor lists ``mqlog print``)
PLATFORM = owner("print")


def open_zos(directory: Path):
    """The z/OS queue manager a run left in ``directory``: (space, addressing, codec, metrics).

    ``metrics`` is the run's metrics.json ({} if there is none). The space's storage is a
    :class:`~mqlog.core.disk.storage.DirectoryStorage` over ``directory/qm``; close it
    (``space.storage.close()``) when done. Raises MqlogError (one line) if ``directory`` is
    not a z/OS run's directory."""
    directory = Path(directory)
    run, values, platform = open_platform(directory, platform=PLATFORM.name, label=PLATFORM.shown)
    storage = platform.space.storage
    try:
        PLATFORM.tools().check_opened(platform.space, directory, directory / "qm")
        metrics = load_metrics(directory)
    except BaseException:
        storage.close()
        raise
    return platform.space, platform.addressing, platform.codec, metrics


def _closing(directory: Path, action):
    """``action`` on the run in ``directory``, read under the directory's shared lock (refused
    while a command writes it: a log, BSDS or metrics.json half written is not the run's)."""
    load_run(directory)  # not a run directory: say so before taking its lock
    with read_locked(directory):
        space, addressing, codec, metrics = open_zos(directory)
        try:
            return action(space, addressing, codec, metrics)
        finally:
            space.storage.close()


def print_run(directory: Path, *, rba_start: str | None = None, rba_end: str | None = None,
              urid: str | None = None, queue: str | None = None, summary: str = "NO",
              status: str = "ALL", as_json: bool = False):
    """``mqlog print DIR``: the log print of a z/OS run's queue manager; RBAs and the URID
    (the RBA of the unit's first record, as MQ for z/OS names units) as hex text. Returns text, or the report dict with ``as_json``."""
    return _closing(Path(directory), lambda space, addressing, codec, metrics: PLATFORM.tools().print_listing(
        space, addressing, rba_start=rba_start, rba_end=rba_end, urid=urid, queue=queue, summary=summary,
        status=status, as_json=as_json))


def bsds_run(directory: Path, *, as_json: bool = False):
    """``mqlog bsds DIR``: the BSDS map of a z/OS run's queue manager (text, or a dict)."""
    return _closing(Path(directory), lambda space, addressing, codec, metrics:
                    PLATFORM.tools().bsds_listing(space, addressing, as_json=as_json))


def stats_run(directory: Path, *, as_json: bool = False):
    """``mqlog stats DIR``: QJST-style statistics of a z/OS run, from its metrics.json."""
    def action(space, addressing, codec, metrics):
        if not metrics:
            raise MqlogError(f"{directory}: no metrics.json: the run left no statistics")
        return PLATFORM.tools().stats_listing(space, metrics, as_json=as_json)

    return _closing(Path(directory), action)


def convert_rba_run(directory: Path) -> tuple[bool, dict, str]:
    """CSQJUCNV on the run in ``directory``, under its lock: the BSDS converted to 8-byte RBAs
    (one way), and run.json's log settings as the conversion left them. Returns whether it
    converted, those settings and the utility's message."""
    import attrs

    load_run(directory)  # not a run directory: say so before taking its lock
    with locked(directory):
        space, _, _, _ = open_zos(directory)
        try:
            if space.load_control() is None:
                raise MqlogError(f"{directory}: the queue manager was never created (no checkpoint on disk)")
            converted, settings, message = PLATFORM.tools().convert_rba(space)
        finally:
            space.storage.close()
        run = load_run(directory)
        write_run(directory, attrs.evolve(run, log={**run.log, **settings}))
    return converted, settings, message
