"""Suite 7, fault campaign rate: ``mqlog torture`` scenarios per CPU second against plain
restarts per second of the same log.

A scenario is a restart on a disk materialised from the recorded run, checked against the
journal (every message read back), so a restart is the most a scenario can cost if
materialising is nearly free. The model: :meth:`Campaign.execute` of crash scenarios at
evenly spaced crash points of ``putget-pairs`` (3 pairs, 100 messages each) – a replay of
the recording up to each point, the journal at that point, the restart and the check.
Baseline: ``restart_run`` on the same crash points' disks, made beforehand (a
copy-on-write view of each per round, so no copying is timed). Target: at least 0.7 ×
its restarts/s.

The log files are small (1024 pages, 4 MiB) so that the baseline's disks, made beforehand,
fit in memory; materialising does not depend on the files' size.
"""

from __future__ import annotations

import pytest

from mqlog.core.workload.recording import CowStorage
from mqlog.core.workload.run import restart_run
from mqlog.core.workload.spec import BUILTINS, build_spec
from mqlog.platforms import choose
from mqlog.torture import Campaign

TARGET = 0.7
SMALL_FILES = {"distributed": {"LogFilePages": "1024"}, "zos": {"ACTIVE_LOG_CIS": "1024"}}


def crash_campaign(platform: str, per_pair: int, points: int):
    """(campaign, its crash scenarios at ``points`` evenly spaced crash points)."""
    choice = choose(platform)
    values = choice.configure(dict(SMALL_FILES[platform]))
    spec = build_spec(BUILTINS["putget-pairs"], {"pairs": "3", "messages_per_pair": str(per_pair)}, origin="perf")
    campaign = Campaign(platform, values, choice.maker(values), spec, seed=1, budget=1_000_000, faults=("crash",))
    scenarios = campaign.plan()
    step = max(1, len(scenarios) // points)
    return campaign, scenarios[step // 2::step][:points]


@pytest.mark.parametrize("platform", ["distributed", "zos"])
def test_scenarios_against_restarts_of_the_same_log(benchmark, gate, platform):
    smoke = gate.smoke(benchmark)
    campaign, scenarios = crash_campaign(platform, 10 if smoke else 100, 3 if smoke else 16)
    recording = campaign._engine.recording
    images = [recording.materialise(s.args[0]) for s in scenarios]
    maker = campaign.make_platform

    def restarts():
        for image in images:
            restart_run(maker, CowStorage(image))

    def run_scenarios():
        results = campaign.execute(scenarios)
        assert all(outcome == "survived" for outcome, _ in results.values()), results

    gate.ratio(benchmark, name=f"torture scenarios on {platform}", group="7 torture rate",
               model=run_scenarios, baseline=restarts, target=TARGET, model_items=len(scenarios),
               baseline_items=len(images), unit="restarts", rounds=5)
