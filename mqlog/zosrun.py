"""The z/OS utilities over a run directory: what ``mqlog run --platform zos --out DIR`` left,
opened and read under the directory's shared lock, for ``mqlog print``, ``mqlog bsds`` and
``mqlog stats``.

The listings themselves are :mod:`mqlog.zos.utilities`' (they work on a log space); this
module is the application layer's part: finding the run's platform (:mod:`mqlog.rundir`),
its lock, its metrics.json. :func:`open_zos` raises
:class:`~mqlog.core.errors.MqlogError` with a one-line message if DIR is not such a
directory; :func:`print_run`, :func:`bsds_run` and :func:`stats_run` do the whole job for a
directory, so that command-line commands are one-liners.
"""

from __future__ import annotations

from pathlib import Path

from mqlog.core.errors import MqlogError, ParameterError
from mqlog.rundir import load_metrics, load_run, open_platform, read_locked
from mqlog.zos.codec import CompLogCodec
from mqlog.zos.utilities import bsds_dict, bsds_map, format_statistics, log_print, log_report, log_statistics

__all__ = ["open_zos", "print_run", "bsds_run", "stats_run"]


def open_zos(directory: Path):
    """The z/OS queue manager a run left in ``directory``: (space, addressing, codec, metrics).

    ``metrics`` is the run's metrics.json ({} if there is none). The space's storage is a
    :class:`~mqlog.core.disk.storage.DirectoryStorage` over ``directory/qm``; close it
    (``space.storage.close()``) when done. Raises MqlogError (one line) if ``directory`` is
    not a z/OS run's directory."""
    directory = Path(directory)
    qm_dir = directory / "qm"
    run, values, platform = open_platform(directory, platform="zos", label="z/OS")
    storage = platform.space.storage
    try:
        space = platform.space
        space.load_control()  # no BSDS beside log data sets: the BSDS is lost (an error naming it)
        if not any((qm_dir / name).is_file() for name in ("BSDS01", "BSDS02")):
            raise MqlogError(f"{directory}: no BSDS (qm/BSDS01, qm/BSDS02): the queue manager was never created")
        if not space.active:
            raise MqlogError(f"{directory}: the BSDS holds no active log inventory")
        metrics = load_metrics(directory)
    except BaseException:
        storage.close()
        raise
    return space, platform.addressing, platform.codec, metrics



def _codec_stats_from_metrics(metrics: dict) -> dict:
    """The codec's statistics if the run saved them (a ``codec`` object, or ``QJST*`` /
    ``platform_QJST*`` keys); {} otherwise."""
    if isinstance(metrics.get("codec"), dict):
        return dict(metrics["codec"])
    out = {}
    for key, value in metrics.items():
        bare = key[len("platform_"):] if key.startswith("platform_") else key
        if bare.startswith(("QJSTCMP", "QJSTDEC")):
            out[bare] = value
    return out


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
    def action(space, addressing, codec, metrics):
        kwargs = dict(rba_start=None if rba_start is None else addressing.parse(rba_start),
                      rba_end=None if rba_end is None else addressing.parse(rba_end),
                      urid=None if urid is None else _parse_urid(urid, addressing), queue=queue)
        decoder = CompLogCodec("NONE")  # expands any codec; the run's own counters stay as they were
        if as_json:
            return log_report(space, addressing, decoder, summary=summary, status=status, **kwargs)
        return log_print(space, addressing, decoder, summary=summary, status=status, **kwargs)

    return _closing(Path(directory), action)


def _parse_urid(text: str, addressing) -> int:
    """A URID as MQ for z/OS gives it: the RBA of the unit's Begin record, in hex."""
    try:
        return addressing.parse(text.strip().removeprefix("0x").removeprefix("0X"))
    except ParameterError:
        raise ParameterError("URID", text, "a unit of recovery id: the RBA of its first record, in hex") from None


def bsds_run(directory: Path, *, as_json: bool = False):
    """``mqlog bsds DIR``: the BSDS map of a z/OS run's queue manager (text, or a dict)."""
    return _closing(Path(directory), lambda space, addressing, codec, metrics:
                    bsds_dict(space, addressing) if as_json else bsds_map(space, addressing))


def stats_run(directory: Path, *, as_json: bool = False):
    """``mqlog stats DIR``: QJST-style statistics of a z/OS run, from its metrics.json."""
    def action(space, addressing, codec, metrics):
        if not metrics:
            raise MqlogError(f"{directory}: no metrics.json: the run left no statistics")
        stats = log_statistics(space, metrics, _codec_stats_from_metrics(metrics), metrics)
        return stats if as_json else format_statistics(stats)

    return _closing(Path(directory), action)
