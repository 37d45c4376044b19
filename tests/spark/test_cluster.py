"""The cluster path: a real Spark standalone master and worker, started from the pip package's
``bin/spark-class`` on 127.0.0.1; ``mqlog compare --master`` runs there, ships the package and
its dependencies to the executors itself, and gives exactly the local result.

The executors run a *bare* Python (a venv with nothing installed), as a worker machine that
never had mqlog or its dependencies installed would: everything they import beyond Spark's
own Python side arrives with the job."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mqlog.spark.compare import check_matrix, compare, load_matrix

SETS = ["--set", "workload.pairs=1", "--set", "workload.messages_per_pair=20"]


# One deadline for the whole start (master alive, worker registered): a JVM pair starts in
# seconds; this is for a loaded machine, and is reached only when something is broken.
START_SECONDS = 120
TAIL_LINES = 40

MASTER_URL = re.compile(r"Starting Spark master at (spark://127\.0\.0\.1:\d+)")
MASTER_ALIVE = "New state: ALIVE"
WORKER_REGISTERED = "Successfully registered with master"


def _tail(path: Path) -> str:
    if not path.exists():
        return "(no log written)"
    lines = path.read_text(errors="replace").splitlines()[-TAIL_LINES:]
    return "\n".join(lines) or "(empty)"


def _start(command: list[str], log: Path, env: dict) -> subprocess.Popen:
    """One daemon in a process group of its own (it and the executors it forks are killed
    together), its output in ``log``; the child keeps its own copy of the descriptor."""
    with log.open("w") as out:
        return subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env,
                                start_new_session=True)


def _stop(proc: subprocess.Popen) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
        try:
            proc.wait(timeout=20)
            return
        except subprocess.TimeoutExpired:
            continue


@pytest.fixture(scope="module")
def cluster(java, tmp_path_factory):
    import pyspark

    home = Path(pyspark.__file__).parent
    spark_class = home / "bin" / "spark-class"
    assert spark_class.exists(), f"the pyspark package at {home} has no bin/spark-class"
    logs = tmp_path_factory.mktemp("cluster")
    # Loopback only: every service binds 127.0.0.1 (SPARK_LOCAL_IP covers the web UIs and the
    # executors); port 0 lets each pick a free port, and the master's log says which it took.
    # The master's REST submission server would take the fixed port 6066: off, as nothing submits that way.
    env = dict(os.environ, SPARK_HOME=str(home), SPARK_LOCAL_IP="127.0.0.1", SPARK_WORKER_DIR=str(logs / "work"),
               SPARK_MASTER_OPTS="-Dspark.master.rest.enabled=false")
    master_log, worker_log = logs / "master.log", logs / "worker.log"

    def broken(what: str) -> None:
        pytest.fail(f"{what}\n--- master log ({master_log}), last lines:\n"
                    f"{_tail(master_log)}\n--- worker log ({worker_log}), last lines:\n{_tail(worker_log)}",
                    pytrace=False)

    deadline = time.monotonic() + START_SECONDS
    master = worker = None
    try:
        master = _start([str(spark_class), "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                         "--port", "0", "--webui-port", "0"], master_log, env)
        url = None
        while True:
            if url is None:
                text = master_log.read_text(errors="replace")
                found = MASTER_URL.search(text)
                if found and MASTER_ALIVE in text:  # a standby master turns a worker away
                    url = found[1]
                    worker = _start([str(spark_class), "org.apache.spark.deploy.worker.Worker", url, "--host",
                                     "127.0.0.1", "--port", "0", "--webui-port", "0", "--cores", "2", "--memory", "1g"],
                                    worker_log, env)
            elif WORKER_REGISTERED in worker_log.read_text(errors="replace"):
                break
            if master.poll() is not None:
                broken(f"the Spark master exited with status {master.returncode}")
            if worker is not None and worker.poll() is not None:
                broken(f"the Spark worker exited with status {worker.returncode}")
            if time.monotonic() > deadline:
                broken(f"the Spark {'master did not start' if url is None else 'worker did not register'} "
                       f"within {START_SECONDS}s")
            time.sleep(0.25)
        yield url
    finally:
        for proc in (worker, master):
            if proc is not None:
                _stop(proc)


@pytest.fixture(scope="module")
def bare_python(tmp_path_factory):
    """A Python of the driver's version with no packages at all, for the executors."""
    where = tmp_path_factory.mktemp("bare") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True, timeout=120)
    python = where / "bin" / "python"
    probe = subprocess.run([str(python), "-c", "import zstandard"], capture_output=True, text=True)
    assert probe.returncode != 0, "the bare Python must not have mqlog's dependencies"
    return str(python)


def test_compare_on_a_standalone_cluster_equals_the_local_result(cluster, bare_python, spark, tmp_path):
    out = subprocess.run([sys.executable, "-m", "mqlog", "compare", "--workload", "putget-pairs", *SETS,
                          "--master", cluster, "--out", str(tmp_path), "--jsonl", "--logs"],
                         capture_output=True, text=True, timeout=600, env=dict(os.environ, PYSPARK_PYTHON=bare_python))
    assert out.returncode == 0, out.stderr
    remote = [json.loads(line) for line in out.stdout.splitlines()]
    from mqlog.core.workload.spec import BUILTINS, build_spec

    spec = build_spec(BUILTINS["putget-pairs"], {"pairs": "1", "messages_per_pair": "20"}, origin="test")
    local = compare(spark, workload="putget-pairs", params=dict(spec.params), seed=0, device="ssd",
                    cells=check_matrix(load_matrix("default")))
    assert len(remote) == 6
    for r, row in zip(remote, local):
        assert r["config_name"] == row["config_name"]
        for key in ("fingerprint", "logical_bytes", "physical_bytes", "physical_writes", "commits", "checkpoints"):
            assert r[key] == row[key], (row["config_name"], key)
    # The executors also read every log back with the data source (pyarrow shipped too).
    contents = json.loads((tmp_path / "log_contents.json").read_text())
    assert set(contents) == {row["config_name"] for row in local}
    for row in local:
        assert contents[row["config_name"]]["uows"]["committed"]["uows"] == row["commits"]
    assert 'id="contents"' in (tmp_path / "report.html").read_text()


def test_the_executors_import_the_package_and_dependencies_the_job_shipped(cluster, bare_python):
    script = (
        "import sys\n"
        "from mqlog.spark.session import spark_session\n"
        f"spark = spark_session({cluster!r}, 'ship-check')\n"
        "def where(_):\n"
        "    import mqlog, zstandard, simpy, attrs, sortedcontainers\n"
        "    return [m.__file__ for m in (mqlog, zstandard, simpy, attrs, sortedcontainers)] + [sys.executable]\n"
        "print('\\n'.join(spark.sparkContext.parallelize([0], 1).map(where).collect()[0]))\n"
        "spark.stop()\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                         env=dict(os.environ, PYSPARK_PYTHON=bare_python))
    assert out.returncode == 0, out.stderr
    package, *deps, python = out.stdout.split()
    assert "mqlog-" in package and ".zip" in package
    assert all("/mqlog_deps/" in d for d in deps), deps  # from the job's archive, not an install
    assert python == bare_python
