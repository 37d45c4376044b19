"""The SparkSession mqlog's jobs run on: ``local[*]`` by default, or a ``--master`` URL.

Spark's web UI is off (nothing to look at for a short job, and a port less to find), and
shuffles use few partitions (the jobs here move little data). Spark's own log output is
turned down to errors so a user sees mqlog's, not Spark's.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

_LOG4J2 = """\
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = stderr
appender.stderr.type = Console
appender.stderr.name = stderr
appender.stderr.target = SYSTEM_ERR
appender.stderr.layout.type = PatternLayout
appender.stderr.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n
"""


def spark_session(master: str | None = None, app_name: str = "mqlog"):
    """A SparkSession (created, or the active one) on ``master`` (default ``local[*]``)."""
    from pyspark.sql import SparkSession

    # The executors' Python must be the one running mqlog (the package is installed there).
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    if "PYSPARK_SUBMIT_ARGS" not in os.environ:
        # Spark's JVM logs from its first line; a log4j2 file of our own keeps it to errors.
        config = Path(tempfile.gettempdir()) / "mqlog-log4j2.properties"
        if not config.exists():
            config.write_text(_LOG4J2)
        os.environ["PYSPARK_SUBMIT_ARGS"] = (f"--driver-java-options -Dlog4j.configurationFile=file:{config} "
                                             "pyspark-shell")
    builder = (SparkSession.builder.master(master or "local[*]").appName(app_name)
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")  # mqlog reports its own progress
               .config("spark.log.level", "ERROR")
               .config("spark.sql.shuffle.partitions", "4")
               .config("spark.sql.session.timeZone", "UTC"))
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark
