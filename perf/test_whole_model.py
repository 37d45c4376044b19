"""Suite 4, the whole model: a virtual-time simulation of ``putget-pairs`` (10 pairs) on each
platform – applications, scheduling, the queue manager, the writer, devices and I/O into
in-memory storage – as log records written per CPU second.

Baseline: the record path's raw loop (suite 1: ``struct.pack`` + ``zlib.crc32`` +
``bytearray`` append) over the same number of records, each body a fixed
:data:`BASELINE_BODY_BYTES`. Target: at least 0.02 × its records/s.

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

#: 0.02 on both until 2026-11-30, when the code before sessions 42-43 (10a7370) measured
#: 0.022 (distributed) and 0.017 (z/OS) on a quiet machine at 10:34, main 0.023 and 0.016 in
#: the CI run at 10:30, where that morning main measured 0.024 and 0.021 (simulate('zos', 1000)
#: took 1.7-1.8 CPU seconds then, 2.4-2.6 for base and main alike at 10:33): the machine's
#: state. Each target sits 15% under the low state (see test_replay.py's TARGET).
TARGETS = {"distributed": 0.018, "zos": 0.014}


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
