"""How long a run of a workload spec is expected to take in wall time, before it starts.

The command line warns before a run estimated to be long (issue 22: ``duration=86400`` should
say so, not look hung); the estimate belongs with the specs it reads, not with the printing.
It counts the MQI calls a built-in workload is expected to make and prices each at a measured
wall time; it also says which parameter scales the run (what to lower to shorten it).
"""

from __future__ import annotations

import attrs

from mqlog.core.workload.spec import WorkloadSpec

#: Wall time the model spends on one MQI call, an assumption for the estimate: measured on the
#: 2-core development machine, requester-responder (10 requesters) and long-uow (4 workers) at
#: their defaults cost about 80 µs of wall time a call (MQPUT, MQGET, MQCMIT and MQBACK counted
#: from the metrics); perf's suite 4 (putget-pairs, about 50,000 log records a wall second,
#: perf/results/README.md) is faster, so the estimate errs long.
WALL_US_PER_CALL = 80.0
#: Virtual µs of one requester's round trip (7 calls) and of one background worker's put, commit,
#: get, commit, as fast as possible at the defaults on ssd (measured as above: 474 and 359 µs)
ROUND_TRIP_US = 470.0
ITERATION_US = 360.0
#: Runs estimated longer than this (wall seconds) are long: announced before they start
LONG_RUN_S = 60.0


@attrs.frozen
class WallEstimate:
    """A run's expected MQI calls, its wall time at :data:`WALL_US_PER_CALL` a call, and the
    workload parameter that scales it ("" for a workload the estimate does not know)."""

    calls: float
    wall_s: float
    scale: str

    @property
    def long(self) -> bool:
        return self.wall_s > LONG_RUN_S


def expected_calls(spec: WorkloadSpec) -> tuple[float, str]:
    """The MQI calls a built-in workload is expected to make, and the parameter that scales
    them (what to lower to shorten the run)."""
    p = spec.params
    per_message = 4 if p.get("syncpoint", True) else 2  # put and get, each committed or not
    if spec.workload == "requester-responder":
        fast = p["requesters"] * p["duration"] * 1e6 / (ROUND_TRIP_US + p.get("think_us", 0.0))
        trips = min(fast, p["rate"] * p["duration"]) if p["rate"] > 0 else fast
        return trips * 7, "duration"
    if spec.workload == "long-uow":
        return p["background"] * p["duration"] * 1e6 / (ITERATION_US + p.get("think_us", 0.0)) * 4, "duration"
    if spec.workload == "putget-pairs":
        return p["pairs"] * p["messages_per_pair"] * per_message, "messages_per_pair"
    if spec.workload == "putget":
        return p["apps"] * p["messages"] * per_message, "messages"
    if spec.workload == "log-fill":
        return p["queues"] + p["messages"] + p["transactions"], "messages"
    if spec.workload == "deep-queue":
        return p["queues"] * p["depth"] + p["then_messages"] * 4, "depth"
    return 0.0, ""


def estimate_wall(spec: WorkloadSpec, crash_at_s: float | None = None) -> WallEstimate:
    """The wall time a run of ``spec`` is expected to take; a crash at ``crash_at_s`` virtual
    seconds into a timed workload pulls the plug before its end, and shortens it."""
    calls, scale = expected_calls(spec)
    if crash_at_s is not None and "duration" in spec.params and spec.params["duration"] > 0:
        calls *= min(1.0, crash_at_s / spec.params["duration"])
    return WallEstimate(calls, calls * WALL_US_PER_CALL / 1e6, scale)
