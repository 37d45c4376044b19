"""The perf gate's machinery: every target is a ratio of two throughputs measured in the same
process – the model's operation against a baseline doing the comparable raw work – never an
absolute time (the machines are shared and noisy). See perf/README.md for the method.

``gate.ratio(benchmark, ...)`` times the model with pytest-benchmark (``pedantic``: fixed
rounds, one warm-up round, so the JSON output and ``--benchmark-compare`` work as usual) and
the baseline with the same timer just before each of its rounds (in pytest-benchmark's untimed
set-up): each round gives a ratio of two throughputs measured seconds apart, and the gate's
ratio is the median of the rounds'. Until 2026-11-30 each side's best round was taken, the
baseline's three before and three after the model's: a lucky baseline round (a raw loop run on
a fresh heap is up to three times faster than one run after the model freed its objects) or a
window of a busier machine on one side only moved the ratio by ±15%. The test fails when the
ratio misses its target; the session ends with a table of every ratio.

The timer is the process's CPU time (:data:`CLOCK`, and pytest-benchmark's through
``--benchmark-timer`` in pyproject.toml), not the wall clock: every suite timed so is one
Python thread, and on a shared machine its wall time counts the other jobs' turns on the cores
as its own. With four other jobs on the two cores, suite 4's z/OS run took 4.4-4.7 s of wall
time for 1.7-1.8 s of CPU: the wall-clock ratio wandered 0.016-0.020 over three trials, the
CPU-time ratio 0.020-0.021 (0.023 alone). Suites whose work runs in other processes (Spark)
time the wall clock themselves.

Under ``--benchmark-disable`` (smoke mode, how the normal test run collects ``perf/``) each
model and baseline runs once at the test's small size, checking the suites still work
without timing anything.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

import attrs
import pytest

#: the gate's clock: the CPU time of this process (see the module's docstring)
CLOCK = time.process_time
CLOCK_NAME = "time.process_time"


def pytest_configure(config):
    timer = config.getoption("benchmark_timer", None)
    if timer is not None and str(timer) != CLOCK_NAME:
        raise pytest.UsageError(f"perf: the gate times both sides with {CLOCK_NAME}; pytest-benchmark's timer is "
                                f"{timer} (pyproject.toml's addopts sets --benchmark-timer={CLOCK_NAME})")


@attrs.define
class Outcome:
    name: str
    ratio: float | None
    target: float
    sense: str  # ">=" (at least the target) or "<=" (at most)
    detail: str
    gated: bool = True  # False: reported beside the gate, never failing it

    @property
    def ok(self) -> bool:
        if self.ratio is None or not self.gated:
            return True
        return self.ratio >= self.target if self.sense == ">=" else self.ratio <= self.target


class Gate:
    def __init__(self) -> None:
        self.outcomes: list[Outcome] = []

    @staticmethod
    def smoke(benchmark) -> bool:
        """Whether benchmarks are off (the normal test run): run each side once, time nothing."""
        return bool(benchmark.disabled)

    def ratio(self, benchmark, *, name: str, group: str, model: Callable, baseline: Callable, target: float,
              model_items: float, baseline_items: float, unit: str, rounds: int = 5,
              setup: Callable[[], tuple] | None = None,
              also: dict[str, tuple[Callable, float]] | None = None) -> float | None:
        """Throughput of ``model`` (``model_items`` per call) over that of ``baseline``
        (``baseline_items`` per call); fails the test below ``target``. ``setup`` (untimed)
        returns the model's arguments for each round. ``also`` names further baselines
        (``name: (callable, target)``, ``baseline_items`` each) timed in the same rounds and
        reported beside the gate's ratio, never failing it: a figure stated against another
        yardstick (issue 35's whole-model target against the raw record loop), measured as
        it was stated: the best round of each side, the other baseline's ``rounds`` back to
        back before the model's rounds and again after them."""
        benchmark.group = group
        benchmark.name = name
        if self.smoke(benchmark):
            benchmark.pedantic(model, setup=(lambda: (setup(), {})) if setup else None, rounds=1)
            baseline()
            for other, _ in (also or {}).values():
                other()
            self.smoke_ran(name, target, ">=")
            return None
        # Interleaved: each model round is preceded by a baseline round, timed in the set-up
        # pytest-benchmark runs (untimed) before every round, so the two sides of a round's
        # ratio see the same few seconds of the machine; the warm-up round's pair is dropped.
        base_times: list[float] = []
        others: dict[str, list[float]] = {label: [] for label in also or {}}

        def time_others():  # back to back, the way the gate timed every baseline before
            for label, (other, _) in (also or {}).items():
                for _ in range(rounds):
                    start = CLOCK()
                    other()
                    others[label].append(CLOCK() - start)

        def timed_setup():
            start = CLOCK()
            baseline()
            base_times.append(CLOCK() - start)
            return (setup(), {}) if setup else None

        time_others()
        benchmark.pedantic(model, setup=timed_setup, rounds=rounds, warmup_rounds=1)
        time_others()
        model_times = list(benchmark.stats.stats.data)
        pairs = [(model_items / m) / (baseline_items / b) for m, b in zip(model_times, base_times[1:])]
        ratio = statistics.median(pairs)
        model_rate = model_items / statistics.median(model_times)
        base_rate = baseline_items / statistics.median(base_times[1:])
        spread = max(pairs) / min(pairs)
        detail = f"{model_rate:,.0f} vs {base_rate:,.0f} {unit}/s; {len(pairs)} rounds' ratios spread {spread:.2f}x"
        benchmark.extra_info.update(ratio=round(ratio, 4), target=target, model_rate=model_rate,
                                    baseline_rate=base_rate, unit=unit)
        self.record(name, ratio, target, ">=", detail)
        for label, times in others.items():
            # as the gate measured every ratio before 2026-11-30: the best round of each side,
            # the baseline's rounds back to back before and after the model's
            other = (model_items / min(model_times)) / (baseline_items / min(times))
            verdict = "met" if other >= also[label][1] else "not met"
            self.outcomes.append(Outcome(f"{name}, {label}", other, also[label][1], ">=",
                                         f"reported, not gated: {verdict}", gated=False))
        return ratio

    def smoke_ran(self, name: str, target: float, sense: str) -> None:
        self.outcomes.append(Outcome(name, None, target, sense, "smoke: ran once, not timed"))

    def record(self, name: str, ratio: float, target: float, sense: str, detail: str) -> None:
        """Record a ratio measured some other way (scale, memory) and fail the test if it misses."""
        outcome = Outcome(name, ratio, target, sense, detail)
        self.outcomes.append(outcome)
        if not outcome.ok:
            pytest.fail(f"{name}: ratio {ratio:.3f}, target {sense} {target} ({detail})", pytrace=False)


_GATE = Gate()


@pytest.fixture
def gate() -> Gate:
    return _GATE


def pytest_terminal_summary(terminalreporter):
    if not _GATE.outcomes:
        return
    tr = terminalreporter
    if all(o.ratio is None for o in _GATE.outcomes):
        tr.write_line(f"perf suites: {len(_GATE.outcomes)} checks ran once in smoke mode, untimed; the gate "
                      "itself is 'pytest perf --benchmark-enable' (see perf/README.md)")
        return
    tr.section("perf gate: ratios against same-process baselines")
    width = max(len(o.name) for o in _GATE.outcomes)
    for o in _GATE.outcomes:
        got = "   -   " if o.ratio is None else f"{o.ratio:7.3f}"
        verdict = "smoke" if o.ratio is None else ("info" if not o.gated else "ok" if o.ok else "MISSED")
        tr.write_line(f"{o.name:<{width}}  {got}  target {o.sense} {o.target:<5}  {verdict:<6}  {o.detail}")
