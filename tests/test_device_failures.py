"""What the queue manager does when its storage fails under it: an fsync that
returns EIO, a file system that fills. It never acknowledges what is not durable, ends
abnormally naming the failure (as MQ does), and the next restart loses nothing it was told.
"""

from __future__ import annotations

import pytest

from mqlog.core.disk.faults import FaultPlan
from mqlog.core.workload.run import RunConfig, restart_run, run_workload
from mqlog.core.workload.spec import BUILTINS, build_spec
from mqlog.core.disk.storage import MemoryStorage
from mqlog.platforms import choose


def _config(platform, plan=None):
    choice = choose(platform)
    values = choice.configure({})
    spec = build_spec(BUILTINS["putget-pairs"], {"pairs": "2", "messages_per_pair": "20"}, origin="test")
    return choice.maker(values), RunConfig(platform, choice.maker(values), values, spec, seed=3, fault_plan=plan)


@pytest.mark.parametrize("platform", ["distributed", "zos"])
def test_a_failed_fsync_ends_the_queue_manager_and_loses_nothing_acknowledged(platform):
    maker, clean = _config(platform)
    syncs = run_workload(clean, MemoryStorage()).storage.syncs
    failures = 0
    for k in range(1, syncs + 1, max(1, syncs // 12)):
        _, cfg = _config(platform, FaultPlan(sync_error_at=k))
        result = run_workload(cfg, MemoryStorage())
        assert result.crashed and "EIO" in result.metrics["abnormal_end"], k
        assert any("ended abnormally" in m and "EIO" in m for m in result.messages)
        _, verdict, _ = restart_run(maker, result.storage.durable, journal=result.journal)
        assert verdict.ok, (k, verdict.as_dict())
        failures += 1
    assert failures >= 10


@pytest.mark.parametrize("platform, message", [("distributed", "AMQ6708"), ("zos", "CSQJ103E")])
def test_a_full_file_system_is_a_log_full_error_and_loses_nothing_acknowledged(platform, message):
    maker, clean = _config(platform)
    counted = run_workload(_config(platform, FaultPlan(enospc_at=10 ** 9))[1], MemoryStorage()).storage.allocations
    assert counted >= 3
    for k in range(1, counted + 1):
        _, cfg = _config(platform, FaultPlan(enospc_at=k))
        result = run_workload(cfg, MemoryStorage())
        assert result.crashed and "ENOSPC" in result.metrics["abnormal_end"], k
        _, verdict, _ = restart_run(maker, result.storage.durable, journal=result.journal)
        assert verdict.ok, (k, verdict.as_dict())
    # a log file that could not be formatted says so in the platform's words
    _, cfg = _config(platform, FaultPlan(enospc_at=2))
    assert any(message in m for m in run_workload(cfg, MemoryStorage()).messages)
