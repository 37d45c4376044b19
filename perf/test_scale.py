"""Suite 5, scale: the whole model's cost per log record stays flat from 10⁴ to 10⁶ records
(at most 1.3 × growth), and a 10⁶-record run on the in-memory backend peaks at no more than
2 × the log bytes it holds + 300 MB.

Each run is ``putget-pairs`` (10 pairs, 200-byte messages) in a fresh process
(perf/scale_child.py), so that its peak resident memory is its own; the cost per record is
the simulation's CPU time (imports and set-up excluded) over the records logged. "The log
bytes it holds" are every log file on the in-memory backend at the end – active logs (both
copies under z/OS dual logging) and z/OS archives (both copies) – which the backend must keep.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

CHILD = Path(__file__).with_name("scale_child.py")
GROWTH_TARGET = 1.3
MEMORY_SLACK = 300 << 20


def measure(platform: str, per_pair: int) -> dict:
    out = subprocess.run([sys.executable, str(CHILD), platform, str(per_pair)], capture_output=True, text=True,
                         timeout=1800, check=True)
    return json.loads(out.stdout)


@pytest.mark.parametrize("platform", ["distributed", "zos"])
def test_cost_per_record_is_flat_and_memory_bounded(benchmark, gate, platform):
    benchmark.group = "5 scale"
    smoke = gate.smoke(benchmark)
    small_pairs, large_pairs = (2, 20) if smoke else (170, 17_000)  # about 10^4 and 10^6 records (x10^-2 smoke)
    small = measure(platform, small_pairs)
    large = benchmark.pedantic(measure, args=(platform, large_pairs), rounds=1)
    assert large["records"] > 5 * small["records"]
    if smoke:
        gate.smoke_ran(f"scale on {platform}", GROWTH_TARGET, "<=")
        return
    growth = (large["cpu_s"] / large["records"]) / (small["cpu_s"] / small["records"])
    limit = 2 * large["storage_bytes"] + MEMORY_SLACK
    benchmark.extra_info.update(small=small, large=large, growth=growth, memory_limit_bytes=limit)
    gate.record(f"scale on {platform}: cost/record 10^6 over 10^4", growth, GROWTH_TARGET, "<=",
                f"{small['cpu_s'] / small['records'] * 1e6:.1f} -> {large['cpu_s'] / large['records'] * 1e6:.1f} "
                f"us/record ({small['records']:,} -> {large['records']:,} records)")
    gate.record(f"scale on {platform}: peak memory over 2 x log + 300 MB", large["peak_rss_bytes"] / limit, 1.0,
                "<=", f"peak {large['peak_rss_bytes'] / 1e6:,.0f} MB, log held {large['storage_bytes'] / 1e6:,.0f} MB "
                f"(logical {large['logical_bytes'] / 1e6:,.0f} MB)")

