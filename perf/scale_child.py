"""One measured run for the scale suites, in a fresh process (so its peak memory is its own):
``python perf/scale_child.py PLATFORM MESSAGES_PER_PAIR`` (putget-pairs, suite 5) or
``python perf/scale_child.py log-fill PLATFORM MESSAGES`` (suite 8) prints one JSON line –
records logged, messages, CPU seconds of the simulation alone, peak resident memory, the
resident memory before the run (the Python baseline: interpreter, imports) and the bytes
every file on the in-memory backend holds at the end (logs and queue files)."""

from __future__ import annotations

import json
import resource
import sys
import time

from mqlog.core.workload.run import RunConfig, run_workload
from mqlog.core.workload.spec import BUILTINS, build_spec
from mqlog.core.disk.storage import MemoryStorage
from mqlog.platforms import choose


def _status_bytes(field: str) -> int | None:
    """A memory figure of /proc/self/status (``VmHWM``, ``VmRSS``) in bytes; None without /proc."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def peak_rss() -> int:
    """This process's peak resident memory, in bytes. Linux's VmHWM is the address space's own
    high-water mark, new at exec; getrusage's ru_maxrss is kept across exec, so a child of a
    large parent (the perf session) would report the parent's size."""
    peak = _status_bytes("VmHWM")
    return peak if peak is not None else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def current_rss() -> int:
    """This process's resident memory now, in bytes (0 where /proc is not there)."""
    return _status_bytes("VmRSS") or 0


#: suite 8's log-fill: IBM's restart experiment's shape (every message uncommitted, 100 units
#: of work on connections of their own) into 64 MiB extents, enough for 10^6 messages of 512
#: bytes: 2 primary files, the rest secondaries made only as the log needs them (the in-memory
#: backend holds every file made)
LOG_FILL = {"distributed": {"LogType": "LINEAR", "LogFilePages": "16384", "LogPrimaryFiles": "2",
                            "LogSecondaryFiles": "40"}}


def log_fill(platform: str, messages: int) -> dict:
    choice = choose(platform)
    values = choice.configure(LOG_FILL[platform])
    spec = build_spec(BUILTINS["log-fill"], {"messages": str(messages), "commit": "never", "transactions": "100",
                                             "message_size": "512"}, origin="perf")
    cfg = RunConfig(platform, choice.maker(values), values, spec, seed=1, device="ssd")
    baseline = current_rss()
    start = time.process_time()  # CPU time, as the gate's clock (perf/conftest.py)
    result = run_workload(cfg, MemoryStorage())
    cpu = time.process_time() - start
    storage = result.storage.durable
    m = result.metrics
    return {"platform": platform, "records": m["log_records"], "messages": m["messages_put"], "cpu_s": cpu,
            "peak_rss_bytes": peak_rss(), "baseline_rss_bytes": baseline,
            "storage_bytes": sum(storage.size(name) for name in storage.list())}


def main(platform: str, per_pair: int) -> dict:
    choice = choose(platform)
    values = choice.configure({})
    spec = build_spec(BUILTINS["putget-pairs"], {"pairs": "10", "messages_per_pair": str(per_pair),
                                                 "message_size": "200"}, origin="perf")
    cfg = RunConfig(platform, choice.maker(values), values, spec, seed=1, device="ssd")
    start = time.process_time()
    result = run_workload(cfg, MemoryStorage())
    cpu = time.process_time() - start
    storage = result.storage.durable
    held = sum(storage.size(name) for name in storage.list())
    m = result.metrics
    return {"platform": platform, "records": m["log_records"], "cpu_s": cpu,
            "peak_rss_bytes": peak_rss(),
            "logical_bytes": m["logical_bytes"], "physical_bytes": m["physical_bytes"],
            "storage_bytes": held}


if __name__ == "__main__":
    if sys.argv[1] == "log-fill":
        print(json.dumps(log_fill(sys.argv[2], int(sys.argv[3]))))
    else:
        print(json.dumps(main(sys.argv[1], int(sys.argv[2]))))
