"""perf/cost_breakdown.py counts the whole model's Python opcodes per log record, by the code
that ran them: the same run gives the same count (within a process, to the few opcodes the
caches a first run warms save a second), and the count lands on the model's own hot path
(the queue manager's append, the writer, the host's CPU charge)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from perf.cost_breakdown import opcodes  # noqa: E402


def test_the_count_is_deterministic_and_lands_on_the_hot_path():
    records, counts = opcodes("distributed", per_pair=10)
    again, counts_again = opcodes("distributed", per_pair=10)
    assert records == again > 0
    assert abs(sum(counts.values()) - sum(counts_again.values())) <= 0.001 * sum(counts.values())
    names = {(Path(code.co_filename).name, code.co_name) for code in counts}
    assert {("manager.py", "_log"), ("writer.py", "put"), ("profiles.py", "charge")} <= names
    # a record costs hundreds to thousands of opcodes, not a handful: the run was traced
    assert 200 < sum(counts.values()) / records < 20_000
