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
    builder = SparkSession.builder
    submitted = "PYSPARK_GATEWAY_PORT" in os.environ  # under spark-submit: its --master rules
    if master is not None or not submitted:
        builder = builder.master(master or "local[*]")
    builder = (builder.appName(app_name)
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")  # mqlog reports its own progress
               .config("spark.log.level", "ERROR")
               .config("spark.sql.shuffle.partitions", "4")
               .config("spark.sql.session.timeZone", "UTC"))
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    if not spark.sparkContext.master.startswith("local"):
        # A cluster's executors may not have mqlog installed: the job ships it.
        spark.sparkContext.addPyFile(str(package_zip()))
    return spark


#: the installed package's parts: import name -> where its sources are (setuptools package-dir)
_PARTS = ("mqlog", "mqlog.core", "mqlog.distributed", "mqlog.zos", "mqlog.spark")


def package_zip() -> Path:
    """A zip of the ``mqlog`` namespace as it is installed (``mqlog/core/…`` laid out as one
    package, data files included), for executors to import from. Rebuilt when the sources
    change: its name carries a hash of their contents."""
    import hashlib
    import importlib
    import zipfile

    files = []
    for name in _PARTS:
        module = importlib.import_module(name)
        root = Path(module.__file__).parent
        arc = Path(*name.split("."))
        for path in sorted(root.iterdir()):
            if path.is_file() and path.suffix in (".py", ".toml"):
                files.append((path, arc / path.name))
    digest = hashlib.sha256()
    for path, arc in files:
        digest.update(str(arc).encode() + path.read_bytes())
    target = Path(tempfile.gettempdir()) / f"mqlog-{digest.hexdigest()[:16]}.zip"
    if not target.exists():
        partial = target.with_suffix(".tmp")
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as zf:
            for path, arc in files:
                zf.writestr(zipfile.ZipInfo(str(arc), date_time=(1980, 1, 1, 0, 0, 0)), path.read_bytes())
        partial.replace(target)
    return target
