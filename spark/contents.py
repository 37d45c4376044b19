"""What each configuration's log holds when a comparison ends, for the report: the ``mqlog``
data source over every configuration's run directory, through the analysis transforms.

``mqlog compare --logs`` leaves one run directory per configuration under ``DIR/runs/NAME``
(the files ``mqlog run --out`` leaves: ``mqlog print``, ``mqlog restart`` and the data source
work on them). :func:`log_contents` reads them all as one frame with a ``config_name`` column
and reduces it, in Spark, to a small JSON-able summary per configuration, which the report
draws and ``DIR/log_contents.json`` keeps (so ``mqlog report`` can draw it again without
reading the logs).

What a log holds at the end is not what was written: a circular log holds only its active
ring, a linear log every extent not yet reused, and z/OS its active data sets plus the
archives the BSDS still records. The summary says what is on disk now.
"""

from __future__ import annotations

import functools
from pathlib import Path

# pyspark and the data source are imported where a frame is made: mqlog report reads
# CONTENTS_FILE and check_contents from here without starting (or importing) Spark.
RUNS_DIR = "runs"
CONTENTS_FILE = "log_contents.json"
BY = ("config_name",)


def runs_frame(spark, runs: dict[str, Path]) -> DataFrame:
    """Every run's log records as one frame (PERMISSIVE: damage is a ``bad`` row), with the
    configuration's name in ``config_name``."""
    from pyspark.sql import DataFrame
    from pyspark.sql import functions as F

    from mqlog.spark.datasource import PERMISSIVE, register

    register(spark)
    frames = [spark.read.format("mqlog").option("mode", PERMISSIVE).load(str(path))
              .withColumn("config_name", F.lit(name)) for name, path in runs.items()]
    return functools.reduce(DataFrame.unionByName, frames)


def log_contents(spark, runs: dict[str, Path]) -> dict[str, dict]:
    """Per configuration: records and bytes on disk, bytes by record type, units of work by
    outcome, compression by codec, shunt records, and bad rows (damage or a torn end)."""
    from pyspark.sql import functions as F

    from mqlog.spark.transforms import bytes_by_record_type, compression_by_codec, shunted_bytes, uow_lifetimes

    if not runs:
        return {}
    df = runs_frame(spark, runs).cache()
    try:
        out: dict[str, dict] = {name: {"records": 0, "bytes": 0, "by_type": {}, "uows": {}, "compression": {},
                                       "shunt_records": 0, "shunted_bytes": 0, "bad_rows": []} for name in runs}
        for r in bytes_by_record_type(df, BY).collect():
            summary = out[r["config_name"]]
            summary["by_type"][r["record_type"]] = {"records": r["records"], "bytes": r["bytes"]}
            summary["records"] += r["records"]
            summary["bytes"] += r["bytes"]
        lifetimes = uow_lifetimes(df, BY).groupBy(*BY, "outcome").agg(
            F.count(F.lit(1)).alias("uows"), F.avg("records").alias("records_per_uow"),
            F.max("records").alias("most_records"))
        for r in lifetimes.collect():
            out[r["config_name"]]["uows"][r["outcome"]] = {
                "uows": r["uows"], "records_per_uow": r["records_per_uow"], "most_records": r["most_records"]}
        for r in compression_by_codec(df, BY).collect():
            out[r["config_name"]]["compression"][r["codec"]] = {
                "puts": r["puts"], "payload_bytes": r["payload_bytes"], "stored_bytes": r["stored_bytes"],
                "ratio": r["ratio"]}
        shunts = shunted_bytes(df, BY).groupBy(*BY).agg(F.sum("shunt_records").alias("records"),
                                                        F.sum("bytes").alias("bytes"))
        for r in shunts.collect():
            out[r["config_name"]].update(shunt_records=r["records"], shunted_bytes=r["bytes"])
        for r in df.where(F.col("bad")).select(*BY, "error").orderBy(*BY, "address").collect():
            out[r["config_name"]]["bad_rows"].append(r["error"])
        return out
    finally:
        df.unpersist()


def check_contents(contents, source) -> None:
    """``log_contents.json`` as read back: a one-line error naming it unless it has the shape
    :func:`log_contents` writes."""
    from mqlog.core.errors import MqlogError

    def bad(why: str):
        raise MqlogError(f"{source}: not a log contents summary written by mqlog: {why}")

    if not isinstance(contents, dict):
        bad("not a JSON object")
    for name, c in contents.items():
        if not isinstance(c, dict):
            bad(f"{name!r} is not an object")
        for key, kind in (("records", int), ("bytes", int), ("by_type", dict), ("uows", dict),
                          ("compression", dict), ("shunt_records", int), ("shunted_bytes", int), ("bad_rows", list)):
            if not isinstance(c.get(key), kind) or isinstance(c.get(key), bool):
                bad(f"{name!r}: field {key!r} is missing or of the wrong type")
        for kind, v in c["by_type"].items():
            if not (isinstance(v, dict) and isinstance(v.get("bytes"), int) and isinstance(v.get("records"), int)):
                bad(f"{name!r}: by_type {kind!r} needs integer records and bytes")
        for outcome, v in c["uows"].items():
            if not (isinstance(v, dict) and isinstance(v.get("uows"), int)
                    and isinstance(v.get("records_per_uow"), (int, float))):
                bad(f"{name!r}: uows {outcome!r} needs integer uows and a records_per_uow number")
        for codec, v in c["compression"].items():
            if not (isinstance(v, dict) and all(k in v and type(v[k]) in (int, type(None))
                                                for k in ("payload_bytes", "stored_bytes"))):
                bad(f"{name!r}: compression {codec!r} needs payload_bytes and stored_bytes")
