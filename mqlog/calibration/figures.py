"""The figures of a calibration case: the named computations over the runs' metrics, and
tolerances.

A figure is computed from the runs' metrics by a small named computation chosen from the fixed
registry :data:`COMPUTATIONS` (no expression is evaluated; :mod:`mqlog.calibration.cases`
describes the case file and checks each figure's arguments against the registry). A metric is
named RUN.METRIC, where METRIC may be dotted into a nested table
(``busy.restart_phases.replay_s``); a run that does not report it raises
:class:`MissingMetric`, and the figure is MISSED with a note saying which. A tolerance is a ±
fraction of IBM's value, the model's [low, high] (``inf`` allowed), or one-sided from IBM's
value (:data:`ONE_SIDED`): :func:`bounds`, :func:`within`, :func:`tolerance_text`.
"""

from __future__ import annotations

import math
from typing import Callable

#: bytes in a log page: IBM's counters and the model's are both whole 4 KiB pages
PAGE_BYTES = 4096
#: the one-sided tolerances, from IBM's value: name -> (side, strict)
ONE_SIDED = {"at least": ("low", False), "more than": ("low", True),
             "at most": ("high", False), "less than": ("high", True)}


class MissingMetric(Exception):
    """A figure's input metric is not among a run's metrics (not an error of the case)."""

    def __init__(self, run: str, metric: str):
        super().__init__(f"{run}.{metric}")
        self.run, self.metric = run, metric


def _lookup(metrics: dict, metric: str):
    """``metric`` in one run's metrics: a key of its own, else a dotted path into nested
    tables (``restart_phases.replay_s``); None when absent."""
    if metric in metrics:
        return metrics[metric]
    value = metrics
    for part in metric.split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value


def _metric(runs: dict, ref: str) -> float:
    run, _, metric = ref.partition(".")
    value = _lookup(runs.get(run, {}), metric)
    if value is None:
        raise MissingMetric(run, metric)
    return value


def _ratio(a: float, b: float) -> float:
    return a / b if b else math.nan


def ratio(runs: dict, num: str, den: str) -> float:
    """``num`` / ``den``, each RUN.METRIC."""
    return _ratio(_metric(runs, num), _metric(runs, den))


def ratio_less(runs: dict, num: str, den: str, less: str) -> float:
    """``num`` / (``den`` − ``less``), each RUN.METRIC: a ratio over the part of a count that
    ``less`` does not cover (write cycles that wrote a new page: all less the rewrite-only)."""
    return _ratio(_metric(runs, num), _metric(runs, den) - _metric(runs, less))


def pages_per_write(runs: dict, run: str) -> float:
    """Pages per physical write: physical bytes (whole pages) / 4096 / physical writes."""
    return _ratio(_metric(runs, f"{run}.physical_bytes") / PAGE_BYTES, _metric(runs, f"{run}.physical_writes"))


def utilisation(runs: dict, run: str) -> float:
    """Logical bytes / physical bytes (amqldmpa's utilisation)."""
    return _ratio(_metric(runs, f"{run}.logical_bytes"), _metric(runs, f"{run}.physical_bytes"))


def per_round_trip(runs: dict, metric: str) -> float:
    """RUN.METRIC per iteration of the workload (its ``round_trips``)."""
    run = metric.partition(".")[0]
    return _ratio(_metric(runs, metric), _metric(runs, f"{run}.round_trips"))


def throughput_ratio(runs: dict, num: str, den: str) -> float:
    """Messages got per virtual second of the workload (``workload_s``: to its last
    call, not through the shutdown after it) in run ``num`` over the same in run ``den``."""
    def rate(run: str) -> float:
        return _ratio(_metric(runs, f"{run}.messages_got"), _metric(runs, f"{run}.workload_s"))

    return _ratio(rate(num), rate(den))


def cpu_busy(runs: dict, run: str) -> float:
    """The host's CPU busy over the workload, a fraction of all its cores (IBM's CPU %)."""
    return _ratio(_metric(runs, f"{run}.cpu_busy_us"),
                  _metric(runs, f"{run}.workload_s") * 1e6 * _metric(runs, f"{run}.host_cores"))


def per_round_trip_ratio(runs: dict, metric: str, num: str, den: str) -> float:
    """METRIC per round trip in run ``num`` over the same in run ``den`` (CPU per round trip as
    concurrency rises)."""
    return _ratio(per_round_trip(runs, f"{num}.{metric}"), per_round_trip(runs, f"{den}.{metric}"))


def write_size_kib(runs: dict, run: str) -> float:
    """amqsrua's "Log - write size": physical bytes per physical write, in KiB, over the
    measured window (from the end of the workload's set-up: IBM's figures are amqsrua's
    intervals in a steady run, its queues defined beforehand; a short run's set-up – a small
    forced write for each queue defined, with its TripleWrite spare copy – would otherwise
    weigh in the mean)."""
    return _ratio(_metric(runs, f"{run}.measured_physical_bytes") / 1024,
                  _metric(runs, f"{run}.measured_physical_writes"))


def log_mb_per_s(runs: dict, run: str) -> float:
    """Physical log bytes written per virtual second of the measured window, MB (10^6 bytes)."""
    return _ratio(_metric(runs, f"{run}.measured_physical_bytes") / 1e6, _metric(runs, f"{run}.measured_s"))


def log_duty(runs: dict, run: str) -> float:
    """The share of the measured window the log had a write in flight: the window's writes'
    times summed / the window's time (S4: MB/s is 0.6-1.0 x write size / latency on SAN and
    NFS, one write in flight). (Physical writes x the long-term average write time, as it was
    computed, strayed where a window holds a few dozen large writes.)"""
    return _ratio(_metric(runs, f"{run}.measured_write_time_total_us"), _metric(runs, f"{run}.measured_s") * 1e6)


def io_time_per_write(runs: dict, run: str) -> float:
    """The mean I/O time of a write to the log's own copy over the measured window, µs (SMF
    115's I/O time per write to LOGCOPY1: a second copy's writes are not in it)."""
    return _ratio(_metric(runs, f"{run}.measured_primary_write_time_us"),
                  _metric(runs, f"{run}.measured_primary_writes"))


def commit_elapsed(runs: dict, run: str) -> float:
    """The mean elapsed time of an MQCMIT over the measured window, µs (SMF 116's commit time)."""
    return _metric(runs, f"{run}.measured_commit_elapsed_us")


def rate_ratio(runs: dict, num: str, den: str) -> float:
    """:func:`log_mb_per_s` of run ``num`` over that of run ``den``: how the sustained log rate
    grows from one configuration to another (a curve's shape, not its level)."""
    return _ratio(log_mb_per_s(runs, num), log_mb_per_s(runs, den))


def io_busy_share(runs: dict, run: str) -> float:
    """The writer's I/O busy over its task busy in the measured window (IBM's "Logger I/O
    busy" / "Logger task busy"): how much of the time the writer is at work it has a write in
    flight, the rest its own CPU around each write."""
    return _ratio(_metric(runs, f"{run}.measured_io_busy_us"), _metric(runs, f"{run}.measured_writer_busy_us"))


#: what a checkpoint interval is measured in: the key of the run's checkpoint marks
_INTERVAL_MEASURES = {"log_records": "log_records", "messages": "messages_put"}


def checkpoint_interval(runs: dict, run: str, measure: str) -> float:
    """The mean ``measure`` (log_records or messages) between a checkpoint the record count
    triggered and the checkpoint before it (from the run's ``checkpoint_marks``); NaN when
    the run had no such checkpoint (too short for the cadence)."""
    marks = _metric(runs, f"{run}.checkpoint_marks")
    key = _INTERVAL_MEASURES[measure]
    gaps = [b[key] - a[key] for a, b in zip(marks, marks[1:]) if b.get("reason") == "records"]
    return sum(gaps) / len(gaps) if gaps else math.nan


def shunt_cadence(runs: dict, run: str) -> float:
    """The mean number of checkpoints between two successive rounds of shunting of one unit
    of work (from the run's ``shunt_rounds``); NaN when no unit was shunted twice."""
    by_uow: dict = {}
    for r in _metric(runs, f"{run}.shunt_rounds"):
        by_uow.setdefault(r["uow"], []).append(r["checkpoint"])
    gaps = [b - a for marks in by_uow.values() for a, b in zip(marks, marks[1:])]
    return sum(gaps) / len(gaps) if gaps else math.nan


def units_shunted_whole(runs: dict, run: str) -> float:
    """Units of work with a round of shunting written that covers at least the workload's
    ``long_messages`` operations (the long-uow workload's long unit, all of it)."""
    whole = _metric(runs, f"{run}.params")["long_messages"]
    return float(len({r["uow"] for r in _metric(runs, f"{run}.shunt_rounds") if r["operations"] >= whole}))


def linear_r2(runs: dict, over: list, x: str, y: str) -> float:
    """R² of the least-squares straight line through (``x``, ``y``) over the runs ``over``
    (each a metric name in every run: restart_s against records_replayed); NaN when ``x`` or
    ``y`` does not vary (no line to judge)."""
    xs = [float(_metric(runs, f"{run}.{x}")) for run in over]
    ys = [float(_metric(runs, f"{run}.{y}")) for run in over]
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((a - mx) ** 2 for a in xs)
    syy = sum((b - my) ** 2 for b in ys)
    sxy = sum((a - mx) * (b - my) for a, b in zip(xs, ys))
    if not sxx or not syy:
        return math.nan
    return sxy * sxy / (sxx * syy)


def share(runs: dict, run: str, part: str, whole: str) -> float:
    """``part`` / ``whole`` in one run (a phase's share of restart: restart_phases.replay_s
    of restart_s)."""
    return _ratio(_metric(runs, f"{run}.{part}"), _metric(runs, f"{run}.{whole}"))


def gain_lead(runs: dict, metric: str, lead: list, others: list) -> float:
    """The gain (``metric`` in a pair's first run over its second: legacy restart_s over
    9.1.1's) in the ``lead`` pair, over the largest gain among the ``others`` pairs; above 1
    when the lead pair gains most."""
    def gain(pair) -> float:
        return _ratio(_metric(runs, f"{pair[0]}.{metric}"), _metric(runs, f"{pair[1]}.{metric}"))

    rivals = [gain(pair) for pair in others]
    return _ratio(gain(lead), max(rivals))


#: name -> (function, {argument: kind}); a kind is "run" (a run of the case), "metric"
#: (RUN.METRIC), "name" (a metric name, looked up in each run a computation names), "runs"
#: (three or more runs), "pair" (two runs), "pairs" (one or more pairs), or a tuple of words
COMPUTATIONS: dict[str, tuple[Callable[..., float], dict[str, object]]] = {
    "ratio": (ratio, {"num": "metric", "den": "metric"}),
    "ratio_less": (ratio_less, {"num": "metric", "den": "metric", "less": "metric"}),
    "pages_per_write": (pages_per_write, {"run": "run"}),
    "utilisation": (utilisation, {"run": "run"}),
    "per_round_trip": (per_round_trip, {"metric": "metric"}),
    "throughput_ratio": (throughput_ratio, {"num": "run", "den": "run"}),
    "cpu_busy": (cpu_busy, {"run": "run"}),
    "per_round_trip_ratio": (per_round_trip_ratio, {"metric": "name", "num": "run", "den": "run"}),
    "write_size_kib": (write_size_kib, {"run": "run"}),
    "log_mb_per_s": (log_mb_per_s, {"run": "run"}),
    "log_duty": (log_duty, {"run": "run"}),
    "io_time_per_write": (io_time_per_write, {"run": "run"}),
    "commit_elapsed": (commit_elapsed, {"run": "run"}),
    "rate_ratio": (rate_ratio, {"num": "run", "den": "run"}),
    "io_busy_share": (io_busy_share, {"run": "run"}),
    "checkpoint_interval": (checkpoint_interval, {"run": "run", "measure": tuple(_INTERVAL_MEASURES)}),
    "shunt_cadence": (shunt_cadence, {"run": "run"}),
    "units_shunted_whole": (units_shunted_whole, {"run": "run"}),
    "linear_r2": (linear_r2, {"over": "runs", "x": "name", "y": "name"}),
    "share": (share, {"run": "run", "part": "name", "whole": "name"}),
    "gain_lead": (gain_lead, {"metric": "name", "lead": "pair", "others": "pairs"}),
}


def compute(figure: dict, runs: dict) -> float:
    """``figure``'s computation over ``runs`` (run name -> metrics); raises
    :class:`MissingMetric` when an input is not reported."""
    function, args = COMPUTATIONS[figure["compute"]]
    return function(runs, **{name: figure[name] for name in args})


# --------------------------------------------------------------------------- tolerance

def bounds(ibm: float, tolerance) -> tuple[float, float]:
    """The model's allowed range: ±fraction of ``ibm`` for a number, [low, high] for a list,
    and from ``ibm`` to ±infinity for a one-sided word ("at least", ...)."""
    if isinstance(tolerance, str):
        side, _ = ONE_SIDED[tolerance]
        return (ibm, math.inf) if side == "low" else (-math.inf, ibm)
    if isinstance(tolerance, list):
        return float(tolerance[0]), float(tolerance[1])
    return ibm - abs(ibm) * tolerance, ibm + abs(ibm) * tolerance


def tolerance_text(tolerance, ibm: float | None = None) -> str:
    """``±20%``, ``2 to 2.4``, ``at least 0.95``, ``more than 0.5`` (a one-sided word with
    IBM's value ``ibm``)."""
    if isinstance(tolerance, str):
        return f"{tolerance} {ibm:g}"
    if not isinstance(tolerance, list):
        return f"±{tolerance * 100:g}%"
    low, high = tolerance
    if math.isinf(high):
        return f"at least {low:g}"
    if math.isinf(low):
        return f"at most {high:g}"
    return f"{low:g} to {high:g}"


def within(model: float | None, ibm: float, tolerance) -> bool:
    if model is None or math.isnan(model):
        return False
    low, high = bounds(ibm, tolerance)
    if isinstance(tolerance, str) and ONE_SIDED[tolerance][1]:
        return low < model < high  # strictly: "more than 0.5" is not met by 0.5
    return low <= model <= high


# --------------------------------------------------------------------------- loading
