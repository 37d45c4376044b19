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
