"""One SparkSession for every Spark test (local[2], no UI, 2 shuffle partitions)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def spark():
    from mqlog.spark.session import spark_session

    session = spark_session("local[2]", "mqlog-tests")
    session.conf.set("spark.sql.shuffle.partitions", "2")
    yield session
    session.stop()
