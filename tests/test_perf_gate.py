"""The perf gate's method (perf/conftest.py): the baseline's rounds run back to back before and
after the model's, and each side's best round sets the ratio, so one disturbed round on either
side does not move it, while a model slower in every round misses its target. A miss is
measured again (a slow state of the machine lasts minutes) and fails only when every
measurement misses. The scheduled
loop (perf/baselines.py, suite 9's yardstick) runs every record it is given through its
scheduler."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import perf.conftest as gate_module  # noqa: E402
from perf.baselines import scheduled_loop  # noqa: E402
from perf.test_record_path import frames_of, make_records  # noqa: E402


class FakeBenchmark:
    """pytest-benchmark's fixture as the gate uses it: ``pedantic`` runs the rounds, whose
    times the test hands it, and keeps their best."""

    disabled = False

    def __init__(self, model_times):
        self.model_times = list(model_times)
        self.stats = SimpleNamespace(stats=SimpleNamespace(min=None))
        self.extra_info = {}

    def pedantic(self, target, setup=None, rounds=1, warmup_rounds=0):
        self.stats.stats.min = min(self.model_times[:rounds])


@pytest.fixture
def fake_clock(monkeypatch):
    clock = SimpleNamespace(now=0.0)
    monkeypatch.setattr(gate_module, "CLOCK", lambda: clock.now)
    return clock


def baseline_taking(clock, times):
    times = iter(times)

    def run():
        clock.now += next(times)
    return run


def test_one_disturbed_round_on_either_side_does_not_move_the_ratio(fake_clock):
    gate = gate_module.Gate()
    # three baseline rounds before the model's, three after; one of each side ran on a busy machine
    base = baseline_taking(fake_clock, [0.1, 0.3, 0.1, 0.1, 0.1, 0.25])
    ratio = gate.ratio(FakeBenchmark([2.0, 5.0, 2.0]), name="m", group="g", model=lambda: None, baseline=base,
                       target=0.04, model_items=100, baseline_items=100, unit="records", rounds=3)
    assert ratio == pytest.approx(0.05)  # (100 / 2.0) / (100 / 0.1)
    assert gate.outcomes[-1].ok


def taking(clock, times):
    """A side whose calls take ``times`` in turn, the last one from then on."""
    times = list(times)

    def run():
        clock.now += times.pop(0) if len(times) > 1 else times[0]
    return run


def test_a_model_slower_in_every_round_misses_its_target(fake_clock):
    gate = gate_module.Gate()
    model = taking(fake_clock, [3.0])
    with pytest.raises(pytest.fail.Exception, match=r"ratio 0.033, target >= 0.04 .*best of 3 measurements"):
        gate.ratio(FakeBenchmark([3.0, 3.2, 3.1]), name="m", group="g", model=model,
                   baseline=taking(fake_clock, [0.1]), target=0.04, model_items=100, baseline_items=100,
                   unit="records", rounds=3)
    assert gate_module.ATTEMPTS == 3 and not gate.outcomes[-1].ok


def test_a_miss_in_a_slow_state_is_measured_again_and_the_best_measurement_counts(fake_clock):
    gate = gate_module.Gate()
    # the first measurement's model rounds all ran slow (FakeBenchmark); the next measurement's did not
    model = taking(fake_clock, [1.8])
    ratio = gate.ratio(FakeBenchmark([3.0, 3.2, 3.1]), name="m", group="g", model=model,
                       baseline=taking(fake_clock, [0.1]), target=0.04, model_items=100, baseline_items=100,
                       unit="records", rounds=3)
    assert ratio == pytest.approx(0.1 / 1.8)
    assert gate.outcomes[-1].ok and "best of 2 measurements" in gate.outcomes[-1].detail


def test_a_ratio_met_at_once_is_measured_once(fake_clock):
    gate = gate_module.Gate()
    calls = []
    model = taking(fake_clock, [1.0])
    gate.ratio(FakeBenchmark([2.0] * 3), name="m", group="g", model=lambda: calls.append(model()),
               baseline=taking(fake_clock, [0.1]), target=0.04, model_items=100, baseline_items=100,
               unit="records", rounds=3)
    assert calls == [] and "best of" not in gate.outcomes[-1].detail


def test_the_scheduled_loop_runs_every_record_through_its_scheduler():
    frames = frames_of(make_records(600))
    assert scheduled_loop(frames) == len(frames)
    assert scheduled_loop(frames[:7], tasks=3) == 7
    assert scheduled_loop([]) == 0
