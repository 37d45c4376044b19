"""How long a run of a workload spec is expected to take in wall time, before it starts.

The command line warns before a run estimated to be long (issue 22: ``duration=86400`` should
say so, not look hung); the estimate belongs with the specs it reads, not with the printing.
It counts the MQI calls a built-in workload is expected to make and prices each at the wall
time measured for that workload at the run's concurrency, and each message byte at its own; it
also says which parameter scales the run (what to lower to shorten it).

A timed workload's calls are what its applications can make in its duration, and in virtual
time they wait for the log: each commit for a write of the log's device, and all of them
together for what the device can take. So its rate is the least of three (the device's
figures from its profile): what its applications make one round trip after another (each
round trip waits a write for each of its commits: the device's latency, and its two
messages' bytes at its bandwidth), what the device writes (the bytes every round trip logs
at its write bandwidth: large messages are device-bound) and what the host's cores sustain.
Estimated for a fast device alone, a 200 KB requester-responder run on san was announced at
about 70 times its wall time.
"""

from __future__ import annotations

import math

import attrs

from mqlog.core.qm.mqi import PUT_LOG_BYTES
from mqlog.core.workload.spec import WorkloadSpec

#: Wall µs the model spends on one MQI call, by workload, at 10 and at 600 applications
#: (:func:`applications_of`), on the default host and device, 2 KiB messages: measured as CPU
#: seconds of the process per MQI call (MQPUT, MQGET, MQCMIT, MQBACK from the metrics), z/OS and
#: distributed taken at the dearer of the two, on the 2-core development machine, after the
#: costs that grew with the applications were made flat (issue 35). More applications cost
#: more a call (a core's wait is an event of its own, the heaps are deeper): the cost between
#: the two is interpolated on log(applications), and held beyond them.
COST_US = {
    "requester-responder": (95.0, 115.0),
    "putget-pairs": (60.0, 120.0),
    "putget": (85.0, 105.0),
    "long-uow": (70.0, 85.0),
    "log-fill": (110.0, 155.0),
    "deep-queue": (100.0, 120.0),
}
#: Wall ns per byte of a message put and got (the payload made, copied, CRC'd, logged and read
#: back): 1 MiB messages cost about 8.7 ms each more than 2 KiB ones (putget-pairs, measured)
BYTE_NS = 8.5
#: Virtual µs of one requester's round trip (7 calls) and of one background worker's put, commit,
#: get, commit, as fast as possible at the defaults on ssd with few applications (474 and 359 µs)
ROUND_TRIP_US = 470.0
ITERATION_US = 360.0
#: … on a device of this write latency (µs; the ``ssd`` profile's) and bandwidth (MB/s): a
#: device's own replace them, each commit waiting one write (three a round trip, two a
#: background iteration) and each message's bytes going at its bandwidth
BASE_WRITE_LATENCY_US = 50.0
BASE_WRITE_MB_S = 2000.0
COMMITS_PER_ROUND_TRIP = 3
COMMITS_PER_ITERATION = 2
#: log bytes a commit writes (a put's beside its body: the queue manager's own PUT_LOG_BYTES)
COMMIT_LOG_BYTES = 150
#: What the default host and device sustain however many applications there are (virtual):
#: requester-responder's round trips saturate the host's cores (about 115,000 a second at
#: 600 + 600 on v93-xeon and ssd); a slower device or host sustains fewer, so this errs long
MAX_ROUND_TRIPS_PER_S = 120_000.0
MAX_ITERATIONS_PER_S = 150_000.0
#: Runs estimated longer than this (wall seconds) are long: announced before they start
LONG_RUN_S = 60.0


@attrs.frozen
class WallEstimate:
    """A run's expected MQI calls and messages, its wall time at :func:`cost_per_call` a call
    (and :data:`BYTE_NS` a message byte), the cost per call used, and the workload parameter
    that scales it ("" for a workload the estimate does not know)."""

    calls: float
    wall_s: float
    scale: str
    us_per_call: float = 0.0

    @property
    def long(self) -> bool:
        return self.wall_s > LONG_RUN_S


def applications_of(spec: WorkloadSpec) -> int:
    """The applications a built-in workload runs at once (what its cost per call follows)."""
    p = spec.params
    if spec.workload == "requester-responder":
        return p["requesters"] + p["responders"]
    if spec.workload == "putget-pairs":
        return 2 * p["pairs"]
    if spec.workload == "putget":
        return p["apps"]
    if spec.workload == "long-uow":
        return p["background"] + 1
    if spec.workload == "log-fill":
        return p["transactions"] if p["commit"] == "never" else 1
    if spec.workload == "deep-queue":
        return p["queues"]
    return 1


def cost_per_call(workload: str, applications: int) -> float:
    """Wall µs a call of ``workload`` costs the model at ``applications`` (see :data:`COST_US`)."""
    low, high = COST_US.get(workload, (100.0, 130.0))
    share = (math.log(min(max(applications, 10), 600)) - math.log(10)) / (math.log(600) - math.log(10))
    return low + (high - low) * share


def _sustained(apps: int, base_us: float, commits: int, messages: int, host_max: float, spec: WorkloadSpec,
               device) -> float:
    """Iterations a second of a timed workload (see the module docstring): ``apps`` each
    making one after another (``base_us`` on the base device, each of its ``commits`` waiting
    a write, its ``messages`` bodies written), at most what the device writes and what the
    host sustains (``host_max``)."""
    p = spec.params
    latency = device.write_latency_us if device is not None else BASE_WRITE_LATENCY_US
    mb_s = device.write_bandwidth_mb_s if device is not None else BASE_WRITE_MB_S
    persistent = p.get("persistent", True)
    logged = (messages * (p.get("message_size", 0) + PUT_LOG_BYTES) + commits * COMMIT_LOG_BYTES) if persistent else 0
    one = (base_us + p.get("think_us", 0.0)
           + (commits * (latency - BASE_WRITE_LATENCY_US) + logged / mb_s - logged / BASE_WRITE_MB_S
              if persistent else 0.0))
    rate = min(apps / (max(one, 1.0) / 1e6), host_max)
    return min(rate, mb_s * 1e6 / logged) if logged else rate


def expected_calls(spec: WorkloadSpec, device=None) -> tuple[float, str]:
    """The MQI calls a built-in workload is expected to make, and the parameter that scales
    them (what to lower to shorten the run); ``device``: the run's device profile (a
    :class:`~mqlog.core.disk.devices.DeviceProfile`; None: the base device, ``ssd``'s figures)."""
    p = spec.params
    per_message = 4 if p.get("syncpoint", True) else 2  # put and get, each committed or not
    if spec.workload == "requester-responder":
        fast = _sustained(p["requesters"], ROUND_TRIP_US, COMMITS_PER_ROUND_TRIP, 2, MAX_ROUND_TRIPS_PER_S, spec,
                          device)
        rate = min(fast, p["rate"]) if p["rate"] > 0 else fast
        return rate * p["duration"] * 7, "duration"
    if spec.workload == "long-uow":
        rate = _sustained(p["background"], ITERATION_US, COMMITS_PER_ITERATION, 1, MAX_ITERATIONS_PER_S, spec,
                          device)
        return rate * p["duration"] * 4, "duration"
    if spec.workload == "putget-pairs":
        return p["pairs"] * p["messages_per_pair"] * per_message, "messages_per_pair"
    if spec.workload == "putget":
        return p["apps"] * p["messages"] * per_message, "messages"
    if spec.workload == "log-fill":
        return p["queues"] + p["messages"] + p["transactions"], "messages"
    if spec.workload == "deep-queue":
        return p["queues"] * p["depth"] + p["then_messages"] * 4, "depth"
    return 0.0, ""


def _messages(spec: WorkloadSpec, calls: float) -> float:
    """Messages put (and got) among ``calls``: what their bytes cost."""
    per_message = {"requester-responder": 3.5, "long-uow": 2.0, "log-fill": 1.0, "deep-queue": 1.0}
    return calls / per_message.get(spec.workload, 2.0 if spec.params.get("syncpoint", True) else 1.0)


def estimate_wall(spec: WorkloadSpec, crash_at_s: float | None = None, device=None) -> WallEstimate:
    """The wall time a run of ``spec`` on ``device`` (a device profile; None: ``ssd``'s
    figures) is expected to take; a crash at ``crash_at_s`` virtual seconds into a timed
    workload pulls the plug before its end, and shortens it."""
    calls, scale = expected_calls(spec, device)
    if crash_at_s is not None and "duration" in spec.params and spec.params["duration"] > 0:
        calls *= min(1.0, crash_at_s / spec.params["duration"])
    us = cost_per_call(spec.workload, applications_of(spec))
    size = spec.params.get("message_size", 0)
    return WallEstimate(calls, (calls * us + _messages(spec, calls) * size * BYTE_NS / 1e3) / 1e6, scale, us)
