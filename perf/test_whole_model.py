"""Suite 4, the whole model: a virtual-time simulation of ``putget-pairs`` (10 pairs) on each
platform – applications, scheduling, the queue manager, the writer, devices and I/O into
in-memory storage – as log records written per CPU second.

Baseline (the gate's, since 2026-11-30): :func:`perf.baselines.scheduled_loop`, the same
number of records run through a minimal discrete-event scheduler (an event object and a heap
entry a record, a generator resumed, ``struct`` + ``zlib.crc32`` into a reused page):
interpreter-bound as the model is, so the machine's state moves both alike (perf/baselines.py
says what the raw loop did instead). Targets: :data:`TARGETS`.

Reported beside it, not gated: the ratio against the record path's raw loop (suite 1:
``struct.pack`` + ``zlib.crc32`` + ``bytearray`` append), each body a fixed
:data:`BASELINE_BODY_BYTES` – the yardstick issue 35's target (0.05) is stated against.

The raw loop's body is fixed, not the records' own: the loop's cost is mostly its bytes, and issue 38's
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

from .baselines import scheduled_loop
from .test_record_path import frames_of, make_records, raw_loop

#: the baseline's body per record: the mean of suite 1's records when the target was set
#: (28,547,552 bytes for 60,016 records, before issue 38's record sizes)
BASELINE_BODY_BYTES = 476


def fixed_frames(count: int) -> list[tuple]:
    """``count`` frames as the raw loop packs them, each header as suite 1's record gives it
    and each body :data:`BASELINE_BODY_BYTES` long."""
    return [(*head, (body * (BASELINE_BODY_BYTES // max(1, len(body)) + 1))[:BASELINE_BODY_BYTES])
            for *head, body in frames_of(make_records(count))]

#: Against the scheduled loop, interleaved rounds, median of the rounds' ratios: 15% under the
#: lowest main measured on 2026-11-30 – distributed 0.058-0.068, z/OS 0.049-0.061 in four gate
#: runs (0.0625-0.0646 and 0.0535-0.0555 in three processes of a plain script). The ratio
#: moves about ±10% from process to process however quiet the machine: the same loop took
#: 100-119 ms in fresh processes with the garbage collector ruled out (the memory's layout);
#: suite 9 counts instead.
TARGETS = {"distributed": 0.049, "zos": 0.042}

#: issue 35's target for the whole model against the raw record loop (reported, not gated;
#: not met: 0.02-0.03 measured). Before 2026-11-30 the gate held this ratio itself, at 0.02 on
#: both until that day, when the code before sessions 42-43 (10a7370) measured
#: 0.022 (distributed) and 0.017 (z/OS) on a quiet machine at 10:34, main 0.023 and 0.016 in
#: the CI run at 10:30, where that morning main measured 0.024 and 0.021 (simulate('zos', 1000)
#: took 1.7-1.8 CPU seconds then, 2.4-2.6 for base and main alike at 10:33): the machine's
#: state; then at 0.018 / 0.014, 15% under the low state – a gate that a model a third slower
#: passed.
RAW_LOOP_TARGET = 0.05


def simulate(platform: str, messages_per_pair: int, log: dict | None = None) -> dict:
    """One putget-pairs run (10 pairs, 200-byte messages) in memory; its metrics."""
    choice = choose(platform)
    values = choice.configure(dict(log or {}))
    spec = build_spec(BUILTINS["putget-pairs"], {"pairs": "10", "messages_per_pair": str(messages_per_pair),
                                                 "message_size": "200"}, origin="perf")
    return run_workload(RunConfig(platform, choice.maker(values), values, spec, seed=1, device="ssd"),
                        MemoryStorage()).metrics


@pytest.mark.parametrize("platform", ["distributed", "zos"])
def test_whole_model_against_the_scheduled_loop(benchmark, gate, platform):
    per_pair = 5 if gate.smoke(benchmark) else 1000
    records = simulate(platform, per_pair)["log_records"]  # deterministic: the same every run
    frames = fixed_frames(records)
    assert scheduled_loop(frames) == records
    gate.ratio(benchmark, name=f"whole model, putget-pairs on {platform}", group="4 whole model",
               model=lambda: simulate(platform, per_pair), baseline=lambda: scheduled_loop(frames),
               target=TARGETS[platform], model_items=records, baseline_items=records, unit="records", rounds=5,
               also={"against the raw record loop": (lambda: raw_loop(frames), RAW_LOOP_TARGET)})
