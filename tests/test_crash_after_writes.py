"""What ``--crash-after-writes N`` counts (trial s33 defect 2): storage writes, to every file of
the queue manager (log, queue files, control file or BSDS, archives) – not the log's own
``physical_writes``, which are fewer. The run reports that count as ``storage_writes`` (the
summary's "storage writes, every file"), so a user picks N from what the tool shows: a crash
after N leaves exactly N made, and a crash point past the end names the count metrics.json
holds."""

from __future__ import annotations

import json

import pytest

from clikit import mqlog

from mqlog.core.disk.storage import MemoryStorage
from mqlog.core.workload.run import RunConfig, run_workload
from mqlog.core.workload.spec import BUILTINS, build_spec
from mqlog.platforms import choose

FILL = ["--workload", "log-fill", "--set", "workload.messages=2000", "--set", "workload.transactions=40"]


def _run(platform: str, crash_after: int | None):
    choice = choose(platform)
    values = choice.configure({})
    spec = build_spec(BUILTINS["log-fill"], {"messages": "2000", "transactions": "40"}, origin="test")
    return run_workload(RunConfig(platform, choice.maker(values), values, spec, seed=0, crash_after_writes=crash_after,
                                  keep_write_log=True), MemoryStorage())


@pytest.mark.parametrize("platform", ["reference", "distributed", "zos"])
def test_a_crash_after_k_writes_comes_after_the_kth_storage_write(platform):
    k = 60
    result = _run(platform, k)
    assert result.crashed
    log = result.storage.write_log
    # writes 1..k were made; the (k+1)-th was the one the plug cut, and nothing came after it
    assert [w.number for w in log] == list(range(1, k + 2)) and result.storage.crash_write == k + 1
    assert result.metrics["storage_writes"] == k
    # the files those writes went to are more than the log's: the log's own count is less
    assert len({w.name for w in log[:k]}) > 1 and result.metrics["physical_writes"] < k


def test_the_summary_and_metrics_name_the_count_n_counts(tmp_path):
    out = mqlog("run", "--platform", "distributed", *FILL, "--crash-after-writes", "60", "--out", tmp_path / "cw")
    assert out.returncode == 0, out.stderr
    lines = {line[2:].split("  ")[0]: line.rsplit("  ", 1)[1].strip()
             for line in out.stdout.splitlines() if line.startswith("  ")}
    assert lines["storage writes, every file"] == "60"
    metrics = json.loads((tmp_path / "cw" / "metrics.json").read_text())
    assert metrics["crashed"] and metrics["storage_writes"] == 60
    assert lines["physical bytes / writes"].endswith(f" / {metrics['physical_writes']}")


def test_a_crash_point_never_reached_names_the_count_metrics_hold(tmp_path):
    small = ["--workload", "putget", "--set", "workload.messages=100"]
    out = mqlog("run", "--platform", "zos", *small, "--crash-after-writes", "100000", "--out", tmp_path / "nr")
    assert out.returncode == 0, out.stderr
    metrics = json.loads((tmp_path / "nr" / "metrics.json").read_text())
    assert not metrics["crashed"]
    assert metrics["crash_not_reached"].endswith(f"after {metrics['storage_writes']} storage writes")
    # the same run without a crash point made as many
    plain = json.loads(mqlog("run", "--platform", "zos", *small, "--json").stdout)
    assert plain["storage_writes"] == metrics["storage_writes"] > plain["physical_writes"]
