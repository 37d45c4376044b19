"""The wall-time estimate a long run announces follows the run's workload, its concurrency and
its message size, from measured costs (issue 35): not one cost for every call."""

from __future__ import annotations

import pytest

from mqlog.core.workload.estimate import COST_US, applications_of, cost_per_call, estimate_wall
from mqlog.core.workload.spec import BUILTINS, build_spec


def spec(workload: str, **params):
    return build_spec(BUILTINS[workload], params, origin="test")


@pytest.mark.parametrize("workload", sorted(COST_US))
def test_a_call_costs_more_at_600_applications_than_at_10_and_no_more_beyond(workload):
    assert cost_per_call(workload, 10) < cost_per_call(workload, 100) < cost_per_call(workload, 600)
    assert cost_per_call(workload, 1) == cost_per_call(workload, 10)
    assert cost_per_call(workload, 5000) == cost_per_call(workload, 600)


def test_the_applications_counted_are_the_ones_that_run_at_once():
    assert applications_of(spec("requester-responder", requesters=200, responders=100)) == 300
    assert applications_of(spec("putget-pairs", pairs=30)) == 60
    assert applications_of(spec("log-fill", commit="never", transactions=400)) == 400
    assert applications_of(spec("log-fill", commit="true", transactions=400)) == 1  # one unit after another


def test_requesters_beyond_what_the_host_sustains_add_no_calls():
    ten = estimate_wall(spec("requester-responder", requesters=10, responders=10, duration=1.0))
    many = estimate_wall(spec("requester-responder", requesters=600, responders=600, duration=1.0))
    more = estimate_wall(spec("requester-responder", requesters=2000, responders=2000, duration=1.0))
    assert ten.calls < many.calls < 60 * ten.calls  # not 60 x: the host saturates
    assert more.calls == many.calls
    assert more.us_per_call == many.us_per_call > ten.us_per_call


def test_large_messages_are_estimated_longer_than_small_ones_of_the_same_calls():
    small = estimate_wall(spec("putget-pairs", pairs=2, messages_per_pair=1000, message_size=2048))
    large = estimate_wall(spec("putget-pairs", pairs=2, messages_per_pair=1000, message_size=1048576))
    assert small.calls == large.calls and large.wall_s > 5 * small.wall_s


def _model_calls(platform: str, device: str, **params) -> int:
    """The MQI calls a run of requester-responder made (puts, gets and commits)."""
    from mqlog.core.disk.storage import MemoryStorage
    from mqlog.core.workload.run import RunConfig, run_workload
    from mqlog.platforms import choose

    choice = choose(platform)
    values = choice.configure({})
    m = run_workload(RunConfig(platform, choice.maker(values), values, spec("requester-responder", **params), seed=1,
                               device=device), MemoryStorage()).metrics
    return m["messages_put"] + m["messages_got"] + m["commits"]


@pytest.mark.parametrize("platform, device, size, requesters", [
    ("distributed", "san", 204800, 30),   # device-bound: the log's bytes at san's bandwidth
    ("zos", "dasd", 20480, 60),           # device-bound on a 180 MB/s volume
    ("distributed", "nfs1", 2048, 10),    # latency-bound: each commit waits an NFS write
    ("distributed", "ssd", 2048, 10),     # the base device
])
def test_a_timed_run_is_estimated_from_what_its_device_lets_it_do(platform, device, size, requesters):
    """A timed workload's calls are what its applications can make while each commit waits
    for the device and all of them share its bandwidth: within a factor of three of what the
    model does on that device (announced on ssd's figures, the 200 KB run on san was 20 times
    too many calls)."""
    from mqlog.core.disk.devices import get_profile

    params = dict(requesters=requesters, responders=requesters, message_size=size, duration=0.1)
    done = _model_calls(platform, device, **params)
    estimate = estimate_wall(spec("requester-responder", **params), device=get_profile(device))
    assert done / 3 < estimate.calls < 3 * done, (estimate.calls, done)


def test_a_slower_device_is_estimated_at_fewer_calls_and_a_faster_host_bound_one_not():
    from mqlog.core.disk.devices import get_profile

    large = spec("requester-responder", requesters=30, responders=30, message_size=204800, duration=1.0)
    on = {name: estimate_wall(large, device=get_profile(name)).calls for name in ("ram", "ssd", "san", "dasd")}
    assert on["ram"] > on["ssd"] > on["san"] > on["dasd"]
    # the device's bandwidth bounds the round trips: two 200 KB messages logged each
    assert on["dasd"] / 7 <= 180e6 / (2 * 204800)
    # no device given: the base device's figures (ssd's)
    assert estimate_wall(large).calls == on["ssd"]
    # 600 requesters of 2 KB saturate the host's cores on a fast device, not the device
    small = spec("requester-responder", requesters=600, responders=600, duration=1.0)
    assert estimate_wall(small, device=get_profile("ram")).calls == estimate_wall(small).calls
    # non-persistent messages wait for no write
    quick = spec("requester-responder", requesters=30, responders=30, message_size=204800, duration=1.0,
                 persistent=False)
    assert estimate_wall(quick, device=get_profile("dasd")).calls == estimate_wall(quick).calls > on["ssd"]
