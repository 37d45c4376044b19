"""One measured run for the scale suite, in a fresh process (so its peak memory is its own):
``python perf/scale_child.py PLATFORM MESSAGES_PER_PAIR`` prints one JSON line – records
logged, wall seconds of the simulation alone, peak resident memory, and the log's bytes."""

from __future__ import annotations

import json
import resource
import sys
import time

from mqlog.core.workload.run import RunConfig, run_workload
from mqlog.core.workload.spec import BUILTINS, build_spec
from mqlog.core.disk.storage import MemoryStorage
from mqlog.platforms import choose


def peak_rss() -> int:
    """This process's peak resident memory, in bytes. Linux's VmHWM is the address space's own
    high-water mark, new at exec; getrusage's ru_maxrss is kept across exec, so a child of a
    large parent (the perf session) would report the parent's size."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def main(platform: str, per_pair: int) -> dict:
    choice = choose(platform)
    values = choice.configure({})
    spec = build_spec(BUILTINS["putget-pairs"], {"pairs": "10", "messages_per_pair": str(per_pair),
                                                 "message_size": "200"}, origin="perf")
    cfg = RunConfig(platform, choice.maker(values), values, spec, seed=1, device="ssd")
    start = time.perf_counter()
    result = run_workload(cfg, MemoryStorage())
    wall = time.perf_counter() - start
    storage = result.storage.durable
    held = sum(storage.size(name) for name in storage.list())
    m = result.metrics
    return {"platform": platform, "records": m["log_records"], "wall_s": wall,
            "peak_rss_bytes": peak_rss(),
            "logical_bytes": m["logical_bytes"], "physical_bytes": m["physical_bytes"],
            "storage_bytes": held}


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], int(sys.argv[2]))))
