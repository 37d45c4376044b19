"""The perf gate's method (perf/conftest.py): each round's ratio pairs a model round with the
baseline round timed just before it, the gate's ratio is their median, and a baseline named in
``also`` is reported beside the gate, never failing it. The scheduled loop (perf/baselines.py)
runs every record it is given through its scheduler, in order of time."""

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
    """pytest-benchmark's fixture as the gate uses it: ``pedantic`` calls ``setup`` before every
    round (warm-up included) and records each round's time from the fake clock."""

    disabled = False

    def __init__(self, model_times):
        self.model_times = list(model_times)
        self.stats = SimpleNamespace(stats=SimpleNamespace(data=[]))
        self.extra_info = {}

    def pedantic(self, target, setup=None, rounds=1, warmup_rounds=0):
        for i in range(warmup_rounds + rounds):
            if setup:
                setup()
            if i >= warmup_rounds:
                self.stats.stats.data.append(self.model_times[i - warmup_rounds])


@pytest.fixture
def fake_clock(monkeypatch):
    """A clock the baselines advance by the times they are handed, one call at a time."""
    clock = SimpleNamespace(now=0.0)
    monkeypatch.setattr(gate_module, "CLOCK", lambda: clock.now)
    return clock


def baseline_taking(clock, times):
    times = iter(times)

    def run():
        clock.now += next(times)
    return run


def test_one_disturbed_baseline_round_does_not_move_the_ratio(fake_clock):
    gate = gate_module.Gate()
    # warm-up, then five rounds; the third baseline round ran on a busy machine (3x)
    base = baseline_taking(fake_clock, [1.0, 0.1, 0.1, 0.3, 0.1, 0.1])
    ratio = gate.ratio(FakeBenchmark([2.0] * 5), name="m", group="g", model=lambda: None, baseline=base,
                       target=0.04, model_items=100, baseline_items=100, unit="records", rounds=5)
    assert ratio == pytest.approx(0.05)  # (100 / 2.0) / (100 / 0.1)
    assert gate.outcomes[-1].ok


def test_a_slower_model_misses_its_target(fake_clock):
    gate = gate_module.Gate()
    base = baseline_taking(fake_clock, [0.1] * 6)
    with pytest.raises(pytest.fail.Exception, match="ratio 0.033, target >= 0.04"):
        gate.ratio(FakeBenchmark([3.0] * 5), name="m", group="g", model=lambda: None, baseline=base,
                   target=0.04, model_items=100, baseline_items=100, unit="records", rounds=5)


def test_another_yardstick_is_reported_not_gated(fake_clock):
    gate = gate_module.Gate()
    # the other yardstick's three rounds back to back, the interleaved baseline's four (warm-up
    # included), the other's three again
    times = iter([0.6, 0.5, 0.7] + [0.1] * 4 + [0.9, 0.8, 0.55])

    def next_time():
        fake_clock.now += next(times)
    gate.ratio(FakeBenchmark([2.0, 1.0, 2.0]), name="m", group="g", model=lambda: None, baseline=next_time,
               target=0.04, model_items=100, baseline_items=100, unit="records", rounds=3,
               also={"raw": (next_time, 0.9)})
    gated, other = gate.outcomes
    assert gated.ok and gated.gated
    # measured as it was stated: the best round of each side (the model's 1.0, the other's 0.5)
    assert other.ratio == pytest.approx(0.5) and not other.gated and other.ok
    assert "not met" in other.detail


def test_the_scheduled_loop_runs_every_record_through_its_scheduler():
    frames = frames_of(make_records(600))
    assert scheduled_loop(frames) == len(frames)
    assert scheduled_loop(frames[:7], tasks=3) == 7
    assert scheduled_loop([]) == 0
