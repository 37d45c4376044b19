"""Suite 8, IBM's customer scale: the model's cost stays flat where IBM measures (60 to 600
applications, hundreds of thousands of messages held).

- **Cost per MQI call at 600 applications** (requester-responder, 300 + 300) over its cost at
  10 (5 + 5), the same virtual duration, in this process, best of the rounds: CPU seconds
  over MQPUT + MQGET + MQCMIT + MQBACK. Before issue 35 the model walked every open unit of
  work before each record, described each at every space check, and left a stale timeout per
  MQGET wait in the event queue: 2 × at 400 + 400.
- **Cost per message of a log-fill at 10⁶ messages** over its cost at 25,000 (commit=never,
  100 units of work, 512-byte messages, 64 MiB linear extents), each in a fresh process
  (perf/scale_child.py), and **memory per message held**: the peak resident memory less the
  process before the run (the Python baseline) and less the bytes of every file the
  in-memory backend holds (the log and the queue files, which it must keep), per message.

Targets as the gate holds them (each at least 15% from what main measures, so that noise does
not fail it and a regression does); issue 35 asks for 1.25 × and 0.5 KB on the log-fill: the
growth meets it, and the memory since a queue holds its messages in columns (463-469 bytes;
perf/README.md says what a message still costs).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mqlog.core.disk.storage import MemoryStorage
from mqlog.core.workload.run import RunConfig, run_workload
from mqlog.core.workload.spec import BUILTINS, build_spec
from mqlog.platforms import choose

from .conftest import ATTEMPTS

CHILD = Path(__file__).with_name("scale_child.py")
#: cost per call at 600 applications over 10 (measured 1.07-1.11 on distributed, 1.20-1.31 on
#: z/OS on a quiet machine; 1.54 once while another process shared it: the 600-application run
#: is long enough for a busy spell to land in it)
CONCURRENCY_TARGET = 1.6
#: cost per message of the log-fill, 10^6 over 25,000. Issue 35 asks for 1.25, which main
#: meets since queue-file format 2 writes only the directory blocks a spill changed (measured
#: 0.89-1.15: 1.15 on a quiet machine in the fresh-clone CI run; 1.4-1.9 before, when each
#: spill rewrote the whole directory); the gate sits 15% above the highest of those, so that
#: noise does not fail it and a return of the O(depth) flush (1.4+) does
FILL_GROWTH_TARGET = 1.33
#: resident bytes per message held beyond the baseline and the files (measured 463-469 since a
#: queue holds its messages in columns, a Message built only when one is read, and a unit of
#: work its addresses and lengths in an array – 464, 467, 468 in session 39, redo working on the
#: rows; 597-612 before, 891 before that, about 1,140 before the queue file kept each entry
#: once, packed); the gate sits 15% above session 39's highest.
#: Issue 35 asks for 500, which the model meets; the gate cannot hold 500 itself until main
#: measures under about 435 (perf/README.md says what a message still costs).
MEMORY_PER_MESSAGE_TARGET = 538


def cost_per_call(platform: str, each: int, duration: float) -> float:
    """CPU seconds per MQI call of requester-responder at ``each`` requesters and responders."""
    choice = choose(platform)
    values = choice.configure({})
    spec = build_spec(BUILTINS["requester-responder"], {"requesters": each, "responders": each, "queue_pairs": 10,
                                                        "duration": duration}, origin="perf")
    start = time.process_time()  # CPU time, as the gate's clock (perf/conftest.py)
    m = run_workload(RunConfig(platform, choice.maker(values), values, spec, seed=1), MemoryStorage()).metrics
    cpu = time.process_time() - start
    return cpu / (m["messages_put"] + m["messages_got"] + m["commits"] + m["backouts"])


@pytest.mark.parametrize("platform", ["distributed", "zos"])
def test_cost_per_call_at_600_applications_against_10(benchmark, gate, platform):
    benchmark.group = "8 customer scale"
    if gate.smoke(benchmark):
        benchmark.pedantic(cost_per_call, args=(platform, 30, 0.02), rounds=1)
        cost_per_call(platform, 5, 0.02)
        gate.smoke_ran(f"cost per call at 600 applications on {platform}", CONCURRENCY_TARGET, "<=")
        return
    # each side's best of two, the low side before and after the high (as the other suites
    # time their baselines), so a machine busier for a while slows both alike
    low_before = cost_per_call(platform, 5, 0.1)
    high = min(benchmark.pedantic(cost_per_call, args=(platform, 300, 0.1), rounds=1),
               cost_per_call(platform, 300, 0.1))
    low = min(low_before, cost_per_call(platform, 5, 0.1))
    ratio = high / low
    benchmark.extra_info.update(ratio=round(ratio, 4), target=CONCURRENCY_TARGET, low_us=low * 1e6, high_us=high * 1e6)
    gate.record(f"cost per call at 600 applications over 10 on {platform}", ratio, CONCURRENCY_TARGET, "<=",
                f"{low * 1e6:.1f} -> {high * 1e6:.1f} us/call (requester-responder 5+5 -> 300+300, 0.1 virtual s)")


def fill(messages: int) -> dict:
    out = subprocess.run([sys.executable, str(CHILD), "log-fill", "distributed", str(messages)], capture_output=True,
                         text=True, timeout=3600, check=True)
    return json.loads(out.stdout)


def _growth(small: dict, large: dict) -> float:
    """CPU per message of the large log-fill over the small one's."""
    return (large["cpu_s"] / large["messages"]) / (small["cpu_s"] / small["messages"])


def test_log_fill_cost_per_message_is_flat_and_its_memory_bounded(benchmark, gate):
    benchmark.group = "8 customer scale"
    smoke = gate.smoke(benchmark)
    small_n, large_n = (500, 5000) if smoke else (25_000, 1_000_000)
    small = fill(small_n)
    large = benchmark.pedantic(fill, args=(large_n,), rounds=1)
    assert large["messages"] >= large_n and small["messages"] >= small_n
    if smoke:
        gate.smoke_ran("log-fill cost per message, 10^6 over 25,000", FILL_GROWTH_TARGET, "<=")
        return
    per_message = (large["peak_rss_bytes"] - large["baseline_rss_bytes"] - large["storage_bytes"]) / large["messages"]
    growth, tries = _growth(small, large), 1
    while growth > FILL_GROWTH_TARGET and tries < ATTEMPTS:
        # a miss is measured again, both sides, before it fails, as the timed ratios are
        # (conftest.ATTEMPTS): right after the whole test run, the same code read 1.38 once
        # where it reads 1.13-1.21 (the 10^6 run's 2.4 GB of files on a machine whose memory
        # the tests had filled); an O(depth) flush come back misses every measurement
        tries += 1
        again = fill(small_n), fill(large_n)
        if _growth(*again) < growth:
            growth, (small, large) = _growth(*again), again
    benchmark.extra_info.update(small=small, large=large, growth=growth, memory_per_message=per_message)
    gate.record("log-fill cost per message, 10^6 over 25,000", growth, FILL_GROWTH_TARGET, "<=",
                f"{small['cpu_s'] / small['messages'] * 1e6:.1f} -> {large['cpu_s'] / large['messages'] * 1e6:.1f} "
                f"us/message" + (f" (best of {tries} measurements)" if tries > 1 else ""))
    gate.record(f"log-fill memory per message held, bytes over {MEMORY_PER_MESSAGE_TARGET}",
                per_message / MEMORY_PER_MESSAGE_TARGET, 1.0,
                "<=", f"{per_message:,.0f} bytes a message beyond the baseline and the {large['storage_bytes'] / 1e6:,.0f} "
                f"MB of files held")
