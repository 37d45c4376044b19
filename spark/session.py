"""The SparkSession mqlog's jobs run on: ``local[*]`` by default, or a ``--master`` URL.

Spark's web UI is off (nothing to look at for a short job, and a port less to find), and
shuffles use few partitions (the jobs here move little data). Spark's own log output is
turned down to errors so a user sees mqlog's, not Spark's.

**On a cluster** (any master that is not ``local``) the job brings what its executors import,
so nothing has to be installed on the workers but a Python of the same version as the
driver's (``PYSPARK_PYTHON`` names it; by default the driver's own interpreter path):

* mqlog itself, as a zip of its sources (:func:`package_zip`, ``addPyFile``);
* its run-time dependencies that executors import (:data:`EXECUTOR_DISTRIBUTIONS`, pyarrow
  too when the job reads logs with the data source), copied from the driver's installation
  into a ``tar.gz`` (:func:`deps_archive`) that Spark unpacks in each executor's working
  directory (``spark.archives``) and puts on its Python workers' path
  (``spark.executorEnv.PYTHONPATH``). zstandard has a C extension, which cannot be imported
  from a zip: hence an archive, built for the driver's platform and Python version.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import tempfile
from pathlib import Path

from mqlog.core.errors import MqlogError

_LOG4J2 = """\
rootLogger.level = fatal
rootLogger.appenderRef.stderr.ref = stderr
appender.stderr.type = Console
appender.stderr.name = stderr
appender.stderr.target = SYSTEM_ERR
appender.stderr.layout.type = PatternLayout
appender.stderr.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n
"""


def spark_session(master: str | None = None, app_name: str = "mqlog", *, arrow: bool = False):
    """A SparkSession (created, or the active one) on ``master`` (default ``local[*]``).

    ``arrow``: the job reads logs with the ``mqlog`` data source, whose Python workers need
    pyarrow: on a cluster, ship it too."""
    from pyspark.sql import SparkSession

    # The executors' Python must be the one running mqlog (the package is installed there).
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    if "PYSPARK_SUBMIT_ARGS" not in os.environ:
        # Spark's JVM logs from its first line; a log4j2 file of our own keeps it to errors.
        # Fatal only: a failed task's error comes back to mqlog as an exception, which says
        # it in one line; Spark's own ERROR lines would print the JVM stack as well.
        config = Path(tempfile.gettempdir()) / "mqlog-log4j2-fatal.properties"
        if not config.exists():
            config.write_text(_LOG4J2)
        os.environ["PYSPARK_SUBMIT_ARGS"] = (f"--driver-java-options -Dlog4j.configurationFile=file:{config} "
                                             "pyspark-shell")
    builder = SparkSession.builder
    submitted = "PYSPARK_GATEWAY_PORT" in os.environ  # under spark-submit: its --master rules
    if master is not None or not submitted:
        builder = builder.master(master or "local[*]")
    if master is not None and not master.startswith("local"):
        from pyspark import SparkContext

        if SparkContext._gateway is None:
            # Some Python workers run beside the driver (a data source's planning): they
            # start from the driver's JVM, whose environment is this process's, with the
            # executors' Python. They import what the driver does.
            paths = [str(package_zip())] + [p for p in sys.path if Path(p).name in ("site-packages", "dist-packages")
                                            and Path(p).is_dir()]
            if os.environ.get("PYTHONPATH"):
                paths.append(os.environ["PYTHONPATH"])
            os.environ["PYTHONPATH"] = os.pathsep.join(paths)
            # They start as `python -m pyspark.daemon` in the JVM's working directory, which
            # Python puts first on sys.path: in a source checkout its mqlog/ directory (the
            # command line and application layer only, not core/ or zos/) would shadow the
            # zip. Python 3.11+ leaves it out when asked (PYTHONSAFEPATH).
            os.environ["PYTHONSAFEPATH"] = "1"
        archive = deps_archive(EXECUTOR_DISTRIBUTIONS + (("pyarrow",) if arrow else ()))
        builder = (builder.config("spark.archives", f"{archive}#{DEPS_ALIAS}")
                   .config("spark.executorEnv.PYTHONPATH", DEPS_ALIAS))
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
        for path in sorted(root.rglob("*")):  # the core's sub-packages too
            if path.is_file() and path.suffix in (".py", ".toml") and "__pycache__" not in path.parts:
                files.append((path, arc / path.relative_to(root)))
    digest = hashlib.sha256()
    for path, arc in files:
        digest.update(str(arc).encode() + path.read_bytes())
    target = Path(tempfile.gettempdir()) / f"mqlog-{digest.hexdigest()[:16]}.zip"
    if not target.exists():
        partial = target.with_suffix(f".{os.getpid()}.tmp")
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as zf:
            for path, arc in files:
                zf.writestr(zipfile.ZipInfo(str(arc), date_time=(1980, 1, 1, 0, 0, 0)), path.read_bytes())
        partial.replace(target)
    return target


#: what executors import beyond mqlog (the model's run-time dependencies; pyspark is theirs)
EXECUTOR_DISTRIBUTIONS = ("attrs", "numpy", "simpy", "sortedcontainers", "zstandard")
#: the directory the dependencies' archive is unpacked into, in each executor's working directory
DEPS_ALIAS = "mqlog_deps"
#: distributions executors always have (Spark's own Python side) or never import
_NOT_SHIPPED = {"pyspark", "py4j", "pandas"}


def _closure(names) -> list:
    """The installed distributions ``names`` and everything they require (markers evaluated
    for this interpreter, extras not followed), sorted by name."""
    from importlib import metadata

    try:
        from packaging.requirements import Requirement
    except ImportError:  # pragma: no cover - packaging comes with pip and setuptools
        Requirement = None
    seen: dict[str, object] = {}
    todo = [(name, True) for name in names]
    while todo:
        name, needed = todo.pop()
        key = re.sub(r"[-_.]+", "-", name).lower()
        if key in seen or key in _NOT_SHIPPED:
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            if not needed:  # required only under a marker this interpreter may not meet
                continue
            raise MqlogError(f"{name} is not installed here, so it cannot be shipped to the executors") from None
        seen[key] = dist
        for spec in dist.requires or ():
            if Requirement is not None:
                req = Requirement(spec)
                if req.marker is not None and not req.marker.evaluate({"extra": ""}):
                    continue
                todo.append((req.name, True))
            else:  # no marker evaluation here: ship what is installed of the conditional ones
                todo.append((re.split(r"[\s<>=!~\[(;]", spec, maxsplit=1)[0], ";" not in spec))
    return [seen[k] for k in sorted(seen)]


def deps_archive(names) -> Path:
    """A ``tar.gz`` of the installed distributions ``names`` and what they require (their files
    as installed: packages, extension modules, metadata; no scripts or caches), for executors
    to unpack and import from. Cached by the distributions' names and versions, the Python
    version and the platform."""
    import hashlib
    import platform
    import tarfile

    dists = _closure(names)
    ident = [f"{d.metadata['Name']}=={d.version}" for d in dists]
    ident += [sys.implementation.cache_tag, platform.machine(), sys.platform]
    digest = hashlib.sha256("\n".join(ident).encode()).hexdigest()[:16]
    target = Path(tempfile.gettempdir()) / f"mqlog-deps-{digest}.tar.gz"
    if target.exists():
        return target
    partial = target.with_suffix(f".{os.getpid()}.tmp")  # another process may be building it too
    with tarfile.open(partial, "w:gz", compresslevel=1) as tar:
        for dist in dists:
            for entry in sorted(dist.files or (), key=str):
                parts = Path(entry).parts
                if not parts or parts[0] == ".." or "__pycache__" in parts or entry.suffix == ".pyc":
                    continue
                path = Path(dist.locate_file(entry))
                if path.is_file():
                    info = tar.gettarinfo(str(path), arcname=str(Path(entry)))
                    info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "", ""
                    with path.open("rb") as data:
                        tar.addfile(info, data)
    partial.replace(target)
    return target


#: the last line of a Python worker's traceback: the exception's class and message
_WORKER_ERROR = re.compile(r"^(mqlog\.[\w.]*?(\w*Error)): (.*)$")


@contextlib.contextmanager
def task_errors(what: str):
    """Turn a Spark task that failed with one of mqlog's own errors (bad input, a corrupt log)
    into that error, one line, instead of Spark's wrapped worker traceback; anything else
    (a bug) goes up as it is."""
    try:
        yield
    except Exception as exc:  # PythonException, Py4JJavaError: both carry the worker's traceback as text
        if isinstance(exc, MqlogError):
            raise
        # The worker's final exception is its traceback's last line that is not the JVM's
        # own stack ("at ..."), a Spark error code or blank: only if that one is mqlog's
        # (not a chained earlier one) is it a user's error rather than a bug.
        for line in reversed(str(exc).splitlines()):
            line = line.strip()
            if not line or line.startswith(("at ", "...", "SQLSTATE", "JVM stacktrace")):
                continue
            match = _WORKER_ERROR.match(line)
            if match:
                raise MqlogError(f"{what}: {match.group(3)}") from None
            break
        raise


def run_tasks(spark, tasks: list, fn, *, what: str, progress=None) -> list:
    """``fn(task)`` for every task as one Spark task each; the results as they arrive (in no
    particular order), ``progress(result, done, total)`` after each. A task that fails with
    mqlog's own error is that error, one line (``what`` says whose).

    Each task is a job of its own, submitted from a pool of driver threads so that as many
    run at once as the cluster has cores (an RDD's ``toLocalIterator`` would run them one
    partition at a time), and a result is reported the moment its job ends."""
    import queue
    from concurrent.futures import ThreadPoolExecutor

    if not tasks:
        return []
    sc = spark.sparkContext
    rdd = sc.parallelize(tasks, len(tasks)).map(fn)
    done: queue.Queue = queue.Queue()

    def run(i: int):
        try:
            done.put((True, sc.runJob(rdd, lambda rows: list(rows), [i])[0]))
        except BaseException as exc:  # handed to the driver's thread, which raises it
            done.put((False, exc))

    results = []
    workers = min(len(tasks), max(2, 2 * sc.defaultParallelism))
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="mqlog-task")
    try:
        with task_errors(what):
            for i in range(len(tasks)):
                pool.submit(run, i)
            for _ in range(len(tasks)):
                ok, value = done.get()
                if not ok:
                    raise value
                results.append(value)
                if progress is not None:
                    progress(value, len(results), len(tasks))
    except BaseException:
        sc.cancelAllJobs()  # the rest would only be thrown away
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    return results
