"""Suite 4, the whole model: a virtual-time simulation of ``putget-pairs`` (10 pairs) on each
platform – applications, scheduling, the queue manager, the writer, devices and I/O into
in-memory storage – as log records written per CPU second.

Baseline: the record path's raw loop (suite 1: ``struct.pack`` + ``zlib.crc32`` +
``bytearray`` append) over the same number of records, each body a fixed
:data:`BASELINE_BODY_BYTES`. Targets: :data:`TARGETS`; suite 9 (test_opcodes.py) counts the same run's
opcodes, which no machine state moves.

The body is fixed, not the records' own: the loop's cost is mostly its bytes, and issue 38's
V9 record sizes (a 120-byte commit) cut suite 1's records from 28.5 MB to 15.9 MB for the
same count – the baseline ran about a quarter more records a second and the ratio fell from
about 0.021 to 0.018 while the model took no longer (1.74 s against 1.90 s for the same
60,016 records). A fixed body keeps the baseline the work the target was set against.
"""

from __future__ import annotations

import pytest

from mqlog.core.workload.run import RunConfig, run_workload
from mqlog.core.workload.spec import BUILTINS, build_spec
from mqlog.core.disk.storage import MemoryStorage
from mqlog.platforms import choose

from .test_record_path import frames_of, make_records, raw_loop

#: the baseline's body per record: the mean of suite 1's records when the target was set
#: (28,547,552 bytes for 60,016 records, before issue 38's record sizes)
BASELINE_BODY_BYTES = 476


def fixed_frames(count: int) -> list[tuple]:
    """``count`` frames as the raw loop packs them, each header as suite 1's record gives it
    and each body :data:`BASELINE_BODY_BYTES` long."""
    return [(*head, (body * (BASELINE_BODY_BYTES // max(1, len(body)) + 1))[:BASELINE_BODY_BYTES])
            for *head, body in frames_of(make_records(count))]

#: 0.02 on both until 2026-11-30, then 0.018 / 0.014, 15% under the machine's slow state that
#: morning (main 0.022-0.024 / 0.016-0.021). Session 45 took a fifth of the model's machine
#: instructions a record away (perf/README.md), and the ratio rose to 0.027-0.028 (distributed)
#: and 0.020-0.024 (z/OS) in three processes. The targets sit 15% under that morning's slow
#: state scaled by the same fifth (0.026 / 0.019), which is also about 15% under today's lowest
#: on z/OS: a gate that unchanged code fails in a slow hour blocks every landing, and suite 9
#: (opcodes counted) catches 15% of interpreted work exactly. Tried and dropped
#: the same day: a scheduled loop (perf/baselines.py) as this suite's baseline, its rounds
#: interleaved with the model's – its ratio moved 0.083-0.119 over the same three processes,
#: more than the raw loop's; the raw loop's best round tracks the model's best better.
#: Then the final fresh-clone CI run read 0.022 on distributed (its raw loop's best round
#: 1.52 M records/s against 1.13-1.36 M in the runs before): 0.021 would have been a 5% margin,
#: so distributed holds 0.019, 15% under that run.
TARGETS = {"distributed": 0.019, "zos": 0.016}


def simulate(platform: str, messages_per_pair: int, log: dict | None = None) -> dict:
    """One putget-pairs run (10 pairs, 200-byte messages) in memory; its metrics."""
    choice = choose(platform)
    values = choice.configure(dict(log or {}))
    spec = build_spec(BUILTINS["putget-pairs"], {"pairs": "10", "messages_per_pair": str(messages_per_pair),
                                                 "message_size": "200"}, origin="perf")
    return run_workload(RunConfig(platform, choice.maker(values), values, spec, seed=1, device="ssd"),
                        MemoryStorage()).metrics


@pytest.mark.parametrize("platform", ["distributed", "zos"])
def test_whole_model_against_the_raw_record_loop(benchmark, gate, platform):
    per_pair = 5 if gate.smoke(benchmark) else 1000
    records = simulate(platform, per_pair)["log_records"]  # deterministic: the same every run
    frames = fixed_frames(records)
    gate.ratio(benchmark, name=f"whole model, putget-pairs on {platform}", group="4 whole model",
               model=lambda: simulate(platform, per_pair), baseline=lambda: raw_loop(frames), target=TARGETS[platform],
               model_items=records, baseline_items=records, unit="records", rounds=3)
