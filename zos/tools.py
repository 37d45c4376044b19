"""The z/OS utilities as the ``mqlog`` commands its descriptor lists call them (``print`` like
CSQ1LOGP, ``bsds`` like CSQJU004, ``stats`` like SMF 115 QJST, ``convert-rba`` like
CSQJUCNV), over the log space a run directory holds: the application layer
(:mod:`mqlog.zosrun`) opens the run and its lock and reaches these through the descriptor's
``tools``, never by importing this package. The listings themselves are
:mod:`mqlog.zos.utilities`'."""

from __future__ import annotations

from pathlib import Path

from mqlog.core.errors import MqlogError, ParameterError
from mqlog.zos.bsds import BSDS_FILES
from mqlog.zos.codec import CompLogCodec
from mqlog.zos.utilities import bsds_dict, bsds_map, format_statistics, log_print, log_report, log_statistics
from mqlog.zos.utilities.logprint import summary_statuses

__all__ = ["check_opened", "print_listing", "bsds_listing", "stats_listing", "convert_rba", "summary_statuses"]


def check_opened(space, directory: Path, qm_dir: Path) -> None:
    """Refuse, in one line, a run directory whose queue manager has no log to list: a BSDS
    lost beside its log data sets (an error naming it), none at all (never created), or a
    BSDS without an active log inventory."""
    space.load_control()  # no BSDS beside log data sets: the BSDS is lost (an error naming it)
    if not any((qm_dir / name).is_file() for name in BSDS_FILES):
        raise MqlogError(f"{directory}: no BSDS (qm/BSDS01, qm/BSDS02): the queue manager was never created")
    if not space.active:
        raise MqlogError(f"{directory}: the BSDS holds no active log inventory")


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


def print_listing(space, addressing, *, rba_start: str | None = None, rba_end: str | None = None,
                  urid: str | None = None, queue: str | None = None, summary: str = "NO", status: str = "ALL",
                  as_json: bool = False):
    """The log print (CSQ1LOGP) of ``space``; RBAs and the URID (the RBA of the unit's first
    record, as MQ for z/OS names units) as hex text. Text, or the report dict with ``as_json``."""
    kwargs = dict(rba_start=None if rba_start is None else addressing.parse(rba_start),
                  rba_end=None if rba_end is None else addressing.parse(rba_end),
                  urid=None if urid is None else _parse_urid(urid, addressing), queue=queue)
    decoder = CompLogCodec("NONE")  # expands any codec; the run's own counters stay as they were
    if as_json:
        return log_report(space, addressing, decoder, summary=summary, status=status, **kwargs)
    return log_print(space, addressing, decoder, summary=summary, status=status, **kwargs)


def _parse_urid(text: str, addressing) -> int:
    """A URID as MQ for z/OS gives it: the RBA of the unit's Begin record, in hex."""
    try:
        return addressing.parse(text.strip().removeprefix("0x").removeprefix("0X"))
    except ParameterError:
        raise ParameterError("URID", text, "a unit of recovery id: the RBA of its first record, in hex") from None


def bsds_listing(space, addressing, *, as_json: bool = False):
    """The BSDS map (CSQJU004) of ``space``: text, or a dict."""
    return bsds_dict(space, addressing) if as_json else bsds_map(space, addressing)


def stats_listing(space, metrics: dict, *, as_json: bool = False):
    """QJST-style statistics (SMF 115) from a run's ``metrics``: text, or a dict."""
    stats = log_statistics(space, metrics, _codec_stats_from_metrics(metrics), metrics)
    return stats if as_json else format_statistics(stats)


def convert_rba(space) -> tuple[bool, dict[str, str], str]:
    """Convert the BSDS to 8-byte RBAs (CSQJUCNV; one way): (whether it converted, the log
    settings the queue manager now has, the message)."""
    converted = space.convert_to_rba8()
    message = ("CSQJ445I BSDS converted to 8-byte RBA and LRSN format" if converted
               else "the BSDS already uses 8-byte RBAs: nothing to do")
    return converted, {"RBA8": "YES"}, message
