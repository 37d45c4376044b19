"""The distributed log's use, two ways (trial s33 defect 6): metrics.json's ``platform_log_*``
(the resource monitor's figures) are byte counts, not DISPLAY QMSTATUS's two-decimal MB times
10^6, and their percentages are the ones ``mqlog qmstatus`` computes – one computation for
both. After a crash they differ for a reason the user is told: the metrics are the queue
manager's at the crash instant, records in its log buffer included; qmstatus reads the files
the crash left."""

from __future__ import annotations

import json

from clikit import mqlog

from mqlog.cli.distributed import _distributed_space

LINEAR = ["--platform", "distributed", "--workload", "putget-pairs", "--set", "workload.pairs=2",
          "--set", "workload.messages_per_pair=300", "--set", "log.LogFilePages=64", "--set", "log.LogType=LINEAR",
          "--set", "log.LogManagement=Archive"]
FILL = ["--platform", "distributed", "--workload", "log-fill", "--set", "workload.messages=4000",
        "--set", "workload.transactions=40"]


def _files_use(directory):
    """The log's use as the run directory's files give it (read as qmstatus reads them)."""
    _, _, space, head, storage = _distributed_space(directory)
    storage.close()
    return space.log_use(head)


def test_metrics_count_the_bytes_qmstatus_shows_in_mb(tmp_path):
    out = mqlog("run", *LINEAR, "--out", tmp_path / "r")
    assert out.returncode == 0, out.stderr
    metrics = json.loads((tmp_path / "r" / "metrics.json").read_text())
    use = _files_use(tmp_path / "r")
    # after a controlled end the run's last figures are the files': exact bytes, not MB rounded
    assert metrics["platform_log_bytes_in_use"] == use["rec_bytes"] > 0
    assert metrics["platform_log_bytes_required_for_media_recovery"] == use["media_bytes"] > 0
    assert metrics["platform_log_bytes_in_reusable_extents"] == use["reusable_bytes"]
    status = json.loads(mqlog("qmstatus", tmp_path / "r", "--json").stdout)
    assert round(metrics["platform_log_bytes_in_use"] / 1e6, 2) == status["RECSZ"]
    assert round(metrics["platform_log_bytes_required_for_media_recovery"] / 1e6, 2) == status["MEDIASZ"]
    assert metrics["platform_log_current_primary_space_in_use_percent"] == status["LOGINUSE"]
    assert metrics["platform_log_workload_primary_space_utilization_percent"] == status["LOGUTIL"]


def test_after_a_crash_qmstatus_says_why_the_metrics_differ(tmp_path):
    out = mqlog("run", *FILL, "--crash-after-writes", "120", "--out", tmp_path / "c")
    assert out.returncode == 0, out.stderr
    metrics = json.loads((tmp_path / "c" / "metrics.json").read_text())
    files = _files_use(tmp_path / "c")["rec_bytes"]
    # the crash cut log the queue manager had: the metrics (its figures then) count it
    assert metrics["crashed"] and metrics["platform_log_bytes_in_use"] > files
    shown = mqlog("qmstatus", tmp_path / "c")
    assert shown.returncode == 0 and f"RECSZ({round(files / 1e6, 2)})" in shown.stdout
    (note,) = shown.stderr.splitlines()
    assert note.startswith(f"mqlog qmstatus: the log as its files hold it after the crash: {files} bytes in use")
    assert f"platform_log_bytes_in_use {metrics['platform_log_bytes_in_use']} and" in note
    assert "crash instant" in note
    # --json: the note on stderr, stdout one document
    as_json = mqlog("qmstatus", tmp_path / "c", "--json")
    assert as_json.stderr == shown.stderr and json.loads(as_json.stdout)["RECSZ"] == round(files / 1e6, 2)
    # once restarted, the files have moved on from the crash: no note about it
    assert mqlog("restart", tmp_path / "c").returncode == 0
    assert mqlog("qmstatus", tmp_path / "c").stderr == ""
