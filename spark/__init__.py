"""Spark jobs: comparison runs, sweeps, the ``mqlog`` log data source and reports.

``mqlog.spark.register(spark)`` makes ``spark.read.format("mqlog").load(DIR)`` read the log a
run left in DIR, one row per record."""


def register(spark) -> None:
    """Register the ``mqlog`` data source on ``spark`` (see :mod:`mqlog.spark.datasource`)."""
    from mqlog.spark.datasource import register as _register

    _register(spark)
