"""The cluster path: a real Spark standalone master and worker, started from the pip package's
``bin/spark-class`` on 127.0.0.1; ``mqlog compare --master`` runs there, ships the package to
the executors itself, and gives exactly the local result."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mqlog.spark.compare import check_matrix, compare, load_matrix

SETS = ["--set", "workload.pairs=1", "--set", "workload.messages_per_pair=20"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for(path: Path, text: str, seconds: float = 60) -> bool:
    deadline = time.time() + seconds
    while time.time() < deadline:
        if path.exists() and text in path.read_text(errors="replace"):
            return True
        time.sleep(0.5)
    return False


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    import pyspark

    home = Path(pyspark.__file__).parent
    spark_class = home / "bin" / "spark-class"
    if not spark_class.exists():
        pytest.skip("the pyspark package has no bin/spark-class")
    logs = tmp_path_factory.mktemp("cluster")
    env = dict(os.environ, SPARK_HOME=str(home), SPARK_LOCAL_IP="127.0.0.1",
               SPARK_WORKER_DIR=str(logs / "work"))
    port = _free_port()
    master_log, worker_log = logs / "master.log", logs / "worker.log"
    master = subprocess.Popen([str(spark_class), "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                               "--port", str(port), "--webui-port", str(_free_port())],
                              stdout=master_log.open("w"), stderr=subprocess.STDOUT, env=env)
    worker = None
    try:
        if not _wait_for(master_log, "ALIVE"):
            pytest.skip("the Spark master did not start")
        url = f"spark://127.0.0.1:{port}"
        worker = subprocess.Popen([str(spark_class), "org.apache.spark.deploy.worker.Worker", url, "--host",
                                   "127.0.0.1", "--webui-port", str(_free_port()), "--cores", "2", "--memory", "1g"],
                                  stdout=worker_log.open("w"), stderr=subprocess.STDOUT, env=env)
        if not _wait_for(master_log, "Registering worker"):
            pytest.skip("the Spark worker did not register")
        yield url
    finally:
        for proc in (worker, master):
            if proc is not None:
                proc.terminate()
                try:
                    proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    proc.kill()


def test_compare_on_a_standalone_cluster_equals_the_local_result(cluster, spark, tmp_path):
    out = subprocess.run([sys.executable, "-m", "mqlog", "compare", "--workload", "putget-pairs", *SETS,
                          "--master", cluster, "--out", str(tmp_path), "--json"],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    remote = [json.loads(line) for line in out.stdout.splitlines()]
    from mqlog.core.spec import BUILTINS, build_spec

    spec = build_spec(BUILTINS["putget-pairs"], {"pairs": "1", "messages_per_pair": "20"}, origin="test")
    local = compare(spark, workload="putget-pairs", params=dict(spec.params), seed=0, device="ssd",
                    cells=check_matrix(load_matrix("default")))
    assert len(remote) == 6
    for r, row in zip(remote, local):
        assert r["config_name"] == row["config_name"]
        for key in ("fingerprint", "logical_bytes", "physical_bytes", "physical_writes", "commits", "checkpoints"):
            assert r[key] == row[key], (row["config_name"], key)


def test_the_executors_import_the_package_the_job_shipped(cluster):
    script = (
        "import sys\n"
        "from mqlog.spark.session import spark_session\n"
        f"spark = spark_session({cluster!r}, 'ship-check')\n"
        "where = spark.sparkContext.parallelize([0], 1).map(lambda _: __import__('mqlog').__file__).collect()[0]\n"
        "print(where)\n"
        "spark.stop()\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "mqlog-" in out.stdout and ".zip" in out.stdout
