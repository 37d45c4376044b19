"""The ``putget`` built-in (MQ-CPH's PutGet) and the ``think_us`` parameter of the workloads
that take it: what each application issues, the errors naming the field, and think time
moving virtual time."""

from __future__ import annotations

import pytest

from mqlog.core.disk.storage import MemoryStorage
from mqlog.core.errors import ParameterError
from mqlog.core.reference import reference_platform
from mqlog.core.workload.run import RunConfig, run_workload
from mqlog.core.workload.spec import BUILTINS, build_spec


def run(workload: str, **params):
    spec = build_spec(BUILTINS[workload], {k: str(v) for k, v in params.items()}, origin="test")
    cfg = RunConfig("reference", lambda storage: reference_platform(storage), {}, spec, seed=3)
    return run_workload(cfg, MemoryStorage())



def test_each_application_puts_commits_gets_commits_on_its_own_queue():
    result = run("putget", apps=3, messages=7, message_size=100)
    m = result.metrics
    assert m["messages_put"] == m["messages_got"] == 3 * 7
    # a put+commit and a get+commit per iteration: two units of work, each committed
    assert m["commits"] == 2 * 3 * 7
    assert m["round_trips"] == 3 * 7
    assert sorted(result.qm.queues) == ["PUTGET.00000", "PUTGET.00001", "PUTGET.00002"]
    assert all(q.depth == 0 for q in result.qm.queues.values())  # every message came back
    # persistent under syncpoint: each commit forces the log
    assert m["forces"] >= m["commits"]


def test_outside_syncpoint_nothing_is_committed_and_each_call_forces():
    result = run("putget", apps=2, messages=5, message_size=100, syncpoint="false")
    m = result.metrics
    assert m["messages_put"] == m["messages_got"] == 10
    assert m["commits"] == 0
    assert m["round_trips"] == 10
    assert m["forces"] >= 20  # a persistent put or get outside syncpoint forces on its own


def test_non_persistent_putget_logs_no_message():
    persistent = run("putget", apps=1, messages=20, message_size=1000)
    not_persistent = run("putget", apps=1, messages=20, message_size=1000, persistent="false")
    assert not_persistent.metrics["messages_got"] == 20
    assert not_persistent.metrics["logical_bytes"] < persistent.metrics["logical_bytes"] - 20 * 1000


@pytest.mark.parametrize("workload, params", [
    ("putget", {"apps": 2, "messages": 10}),
    ("putget-pairs", {"pairs": 2, "messages_per_pair": 10}),
    ("requester-responder", {"requesters": 2, "responders": 2, "queue_pairs": 2, "duration": 0.05}),
])
def test_think_time_moves_virtual_time_and_not_the_work(workload, params):
    quick = run(workload, **params).metrics
    slow = run(workload, **params, think_us=2000).metrics
    if workload == "requester-responder":  # bounded by a duration: thinking leaves time for fewer
        assert 0 < slow["round_trips"] < quick["round_trips"]
        assert slow["round_trips"] <= 2 * 0.05 / 2000e-6 + 2
    else:  # bounded by a message count: the same work, spread over more virtual time
        assert slow["messages_got"] == quick["messages_got"]
        # each application thinks after each of its 10 iterations, one after the other
        assert slow["virtual_s"] >= 10 * 2000e-6 > quick["virtual_s"]


@pytest.mark.parametrize("field, value", [("apps", 0), ("messages", 0), ("think_us", -1),
                                          ("syncpoint", "maybe")])
def test_a_bad_putget_parameter_names_the_field(field, value):
    with pytest.raises(ParameterError) as info:
        build_spec(BUILTINS["putget"], {field: str(value)}, origin="--set")
    assert f"workload.{field}" in str(info.value)
