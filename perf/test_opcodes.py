"""Suite 9, interpreted work per log record: the whole model's Python opcodes against the
scheduled loop's, counted, not timed.

A timed ratio on a shared machine can only hold a target some way under what main measures
(suite 4's sits 15% under the machine's slow state), so a change that makes the model 10% slower lands unless the machine
happens to be quiet. Opcodes executed are deterministic (the same code, the same count, in any
process on any machine state), so this suite catches a slower model's interpreted work
exactly; what a change moves into or out of C (``struct``, ``zlib``, generator creation) it
does not see, and suite 4's timed ratio stays for that.

Model: suite 4's ``putget-pairs`` run (10 pairs, 200-byte messages) on each platform, at 100
messages a pair, under ``sys.settrace`` with opcode events (perf/cost_breakdown.py, which
breaks the count down by file and function). Baseline: :func:`perf.baselines.scheduled_loop`
over as many records, counted the same way, so that the ratio does not move with the
interpreter's own opcode set (a Python release that fuses or splits instructions moves both).
The ratio is the baseline's opcodes a record over the model's: higher is cheaper, as in every
other suite. Targets: :data:`TARGETS`.
"""

from __future__ import annotations

import pytest

from .baselines import scheduled_loop
from .cost_breakdown import count_opcodes
from .test_whole_model import fixed_frames, simulate

#: 15% under main's counts: on 2026-11-30 (Python 3.11) 2,276 opcodes a record distributed and
#: 2,509 z/OS (ratios 0.079, 0.072), then, after session 45's levers and its review
#: (perf/README.md), 2,011 and 2,239 (0.0895, 0.0804); the scheduled loop 180 a record.
TARGETS = {"distributed": 0.076, "zos": 0.068}


def opcodes_per_record(platform: str, per_pair: int) -> tuple[float, float]:
    """The model's and the scheduled loop's opcodes per log record, one run each."""
    simulate(platform, 5)  # imports and first calls outside the count
    metrics, counts = count_opcodes(lambda: simulate(platform, per_pair))
    records = metrics["log_records"]
    frames = fixed_frames(records)
    ran, base_counts = count_opcodes(lambda: scheduled_loop(frames))
    assert ran == records
    return sum(counts.values()) / records, sum(base_counts.values()) / records


@pytest.mark.parametrize("platform", ["distributed", "zos"])
def test_whole_model_opcodes_against_the_scheduled_loop(benchmark, gate, platform):
    name = f"opcodes a record, putget-pairs on {platform}"
    if gate.smoke(benchmark):
        benchmark.pedantic(opcodes_per_record, args=(platform, 2), rounds=1)
        gate.smoke_ran(name, TARGETS[platform], ">=")
        return
    model, base = benchmark.pedantic(opcodes_per_record, args=(platform, 100), rounds=1)
    benchmark.group, benchmark.name = "9 opcodes", name
    gate.record(name, base / model, TARGETS[platform], ">=",
                f"{model:,.0f} opcodes a record vs {base:,.0f} (counted, not timed)")
