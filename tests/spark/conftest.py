"""One SparkSession for every Spark test (local[2], no UI, 2 shuffle partitions), and the one
rule for a missing system package (Java, Chromium): a skip on a developer's machine, a failure
under ``CI=true``, where ``.ci/run`` provides both and a skip would hide a test that never ran."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest


def under_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


@pytest.fixture(scope="session")
def system_package():
    """``system_package(found, package, install)``: nothing when ``found``; otherwise a skip
    naming the package and how to install it, or under CI a failure saying the same."""

    def need(found: object, package: str, install: str) -> None:
        if found:
            return
        reason = f"{package} is not installed ({install})"
        if under_ci():
            pytest.fail(f"CI=true: {reason}; CI installs it, so its absence is a broken CI machine", pytrace=False)
        pytest.skip(reason)

    return need


@pytest.fixture(scope="session")
def java(system_package) -> str:
    """The java Spark's launcher runs: ``$JAVA_HOME/bin/java``, else ``java`` on PATH."""
    home = os.environ.get("JAVA_HOME")
    path = str(Path(home) / "bin" / "java") if home else shutil.which("java")
    system_package(path and os.access(path, os.X_OK), "Java 17", "apt-get install openjdk-17-jre-headless")
    return path


@pytest.fixture(scope="session")
def spark(java):
    from mqlog.spark.session import spark_session

    session = spark_session("local[2]", "mqlog-tests")
    session.conf.set("spark.sql.shuffle.partitions", "2")
    yield session
    session.stop()
