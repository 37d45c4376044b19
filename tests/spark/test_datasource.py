"""The ``mqlog`` Spark data source over real run directories, and the analysis transforms.

Run directories come from the real CLI (``python -m mqlog run --out``, a few tenths of a
second each). What the data source returns is checked against reads made without it: a
:class:`~mqlog.core.log.reader.LogReader` walk of the whole distributed log, and ``mqlog print
--json`` for z/OS: the counts match what ``mqlog print`` shows.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.spark

PY = sys.executable


def _run(out: Path, *args: str) -> Path:
    subprocess.run([PY, "-m", "mqlog", "run", *args, "--out", str(out)], check=True, capture_output=True,
                   timeout=300)
    return out


def _print_json(directory: Path) -> dict:
    done = subprocess.run([PY, "-m", "mqlog", "print", str(directory), "--json"], check=True, capture_output=True,
                          text=True, timeout=300)
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def mqlog_spark(spark):
    from mqlog.spark.datasource import register

    register(spark)
    return spark


@pytest.fixture(scope="module")
def dist_run(tmp_path_factory) -> Path:
    return _run(tmp_path_factory.mktemp("ds") / "dist", "--platform", "distributed", "--workload", "putget-pairs",
                "--set", "workload.pairs=2", "--set", "workload.messages_per_pair=100",
                "--set", "log.LogFilePages=64")


@pytest.fixture(scope="module")
def zos_run(tmp_path_factory) -> Path:
    return _run(tmp_path_factory.mktemp("ds") / "zos", "--platform", "zos", "--workload", "putget-pairs",
                "--set", "workload.pairs=2", "--set", "workload.messages_per_pair=100",
                "--set", "log.ACTIVE_LOG_CIS=16", "--set", "log.COMPLOG=RLE",
                "--set", "workload.payload=padded-records")


@pytest.fixture(scope="module")
def shunt_run(tmp_path_factory) -> Path:
    # LOGLOAD=1000 gives the 0.1 s long unit of work the three checkpoints that shunt it.
    return _run(tmp_path_factory.mktemp("ds") / "long", "--platform", "zos", "--workload", "long-uow",
                "--set", "workload.duration=0.1", "--set", "log.LOGLOAD=1000")


def _load(spark, directory: Path, **options):
    reader = spark.read.format("mqlog")
    for key, value in options.items():
        reader = reader.option(key, value)
    return reader.load(str(directory))


def _distributed_walk(directory: Path) -> tuple[list[tuple], object]:
    """Every record on disk, by a LogReader from the first record of the oldest extent."""
    from mqlog.core.format.pages import NO_FIRST_RECORD, PAGE_HEADER_SIZE, PAGE_SIZE, check_page
    from mqlog.core.log.reader import LogReader
    from mqlog.core.format.records import Put
    from mqlog.core.disk.storage import DirectoryStorage
    from mqlog.platforms import choose

    run = json.loads((directory / "run.json").read_text())
    choice = choose("distributed")
    storage = DirectoryStorage(directory / "qm")
    try:
        space = choice.maker(choice.configure({k: str(v) for k, v in run["log"].items()}))(storage).space
        space.load_control()
        page = min(space.by_start)
        while True:
            raw, _, _ = space.read_page(page)
            header, problem = check_page(raw, page)
            assert problem is None
            if header.first_record != NO_FIRST_RECORD:
                break
            page += PAGE_SIZE
        reader = LogReader(space, page + PAGE_HEADER_SIZE + header.first_record)
        rows = [(a, r.TYPE.name, r.uow, r.message_length if isinstance(r, Put) else None) for a, r in reader]
        return rows, reader.end
    finally:
        storage.close()


# --- reading ------------------------------------------------------------------------------------

def test_distributed_rows_match_a_reader_walk(mqlog_spark, dist_run):
    expected, end = _distributed_walk(dist_run)
    assert end.reason == "end"
    df = _load(mqlog_spark, dist_run)
    assert df.rdd.getNumPartitions() > 1
    rows = df.collect()
    assert len(rows) == len(expected)
    assert not any(r.bad for r in rows)
    got = sorted((r.address, r.record_type, r.uow, r.payload_length) for r in rows)
    assert got == sorted(expected)
    files = {r.file for r in rows}
    assert len(files) > 1 and all(f.startswith("S") and f.endswith(".LOG") for f in files)
    assert {r.platform for r in rows} == {"distributed"}
    # Each record is attributed to the extent holding its first byte: addresses per file
    # form disjoint ranges.
    spans = sorted((min(r.address for r in rows if r.file == f), max(r.address for r in rows if r.file == f))
                   for f in files)
    assert all(a[1] < b[0] for a, b in zip(spans, spans[1:]))
    put = next(r for r in rows if r.record_type == "PUT")
    assert (put.payload_length, put.stored_length, put.codec, put.rm) == (2048, 2048, "NONE", "MESSAGE")
    assert put.address_text.startswith("<") and put.prev is not None
    begin = next(r for r in rows if r.record_type == "BEGIN")
    assert begin.prev is None and begin.payload_length is None and begin.codec is None


def test_zos_rows_match_log_print(mqlog_spark, zos_run):
    printed = _print_json(zos_run)
    assert printed["read"]["end"] == "end"
    df = _load(mqlog_spark, zos_run)
    assert df.rdd.getNumPartitions() > 1
    rows = df.collect()
    assert len(rows) == printed["read"]["records_read"] == len(printed["records"])
    got = sorted((r.address, r.address_text, r.record_type, r.rm, r.uow, r.length, r.stamp, r.payload_length,
                  r.stored_length, r.codec) for r in rows)
    want = sorted((p["address"], p["address_text"], p["type"], p["rm"], p["uow"], p["length_bytes"], p["lrsn"],
                   p.get("message_length_bytes") if p["type"] == "PUT" else None,
                   p.get("stored_length_bytes") if p["type"] in ("PUT", "PUT_SEGMENT") else None,
                   p.get("codec") if p["type"] in ("PUT", "PUT_SEGMENT") else None) for p in printed["records"])
    assert got == want
    files = {r.file for r in rows}
    assert any(f.startswith("CSQARC1.A") for f in files) and any(f.startswith("LOGCOPY1.DS") for f in files)
    assert all(r.codec == "RLE" and r.stored_length < r.payload_length for r in rows if r.record_type == "PUT")


def _flip(path: Path, offset: int) -> None:
    with open(path, "r+b") as f:
        f.seek(offset)
        byte = f.read(1)
        f.seek(offset)
        f.write(bytes([byte[0] ^ 0xFF]))


def test_corrupt_byte_failfast_and_permissive(mqlog_spark, dist_run, tmp_path):
    clean = _load(mqlog_spark, dist_run).groupBy("file").count().collect()
    clean = {r["file"]: r["count"] for r in clean}
    damaged = tmp_path / "damaged"
    shutil.copytree(dist_run, damaged)
    from mqlog.core.disk.storage import DirectoryStorage
    from mqlog.distributed.space import extent_name

    from mqlog.platforms import choose

    run = json.loads((damaged / "run.json").read_text())
    choice = choose("distributed")
    storage = DirectoryStorage(damaged / "qm")
    space = choice.maker(choice.configure({k: str(v) for k, v in run["log"].items()}))(storage).space
    space.load_control()
    # The oldest extent (full, not the last partition): a byte in the middle of its page 32.
    victim = extent_name(space.by_start.peekitem(0)[1])
    storage.close()
    offset = 32 * 4096
    _flip(damaged / "qm" / victim, offset + 2000)

    with pytest.raises(Exception) as info:
        _load(mqlog_spark, damaged).count()
    text = str(info.value)
    assert f"{victim}, offset {offset}" in text and "LogCorruptionError" in text and "PERMISSIVE" in text

    rows = _load(mqlog_spark, damaged, mode="permissive").collect()
    bad = [r for r in rows if r.bad]
    assert len(bad) == 1
    assert bad[0].file == victim and f"offset {offset}" in bad[0].error and bad[0].record_type is None
    good = [r for r in rows if not r.bad]
    counts = {}
    for r in good:
        counts[r.file] = counts.get(r.file, 0) + 1
    assert 0 < counts[victim] < clean[victim]  # the partition stopped at the damage
    assert all(counts[f] == clean[f] for f in clean if f != victim)  # the others read on


def test_missing_extent_in_the_middle_is_not_a_silent_stop(mqlog_spark, dist_run, tmp_path):
    from mqlog.spark.datasource import MqlogReader

    parts = MqlogReader(str(dist_run)).partitions()
    assert len(parts) >= 3
    middle = parts[1].file
    gone = tmp_path / "gone"
    shutil.copytree(dist_run, gone)
    (gone / "qm" / middle).unlink()
    with pytest.raises(Exception) as info:
        _load(mqlog_spark, gone).count()
    # the log space refuses the read of an extent its control file lists (AMQ6767)
    assert f"log extent {middle} is missing" in str(info.value)
    rows = _load(mqlog_spark, gone, mode="PERMISSIVE").collect()
    bad = [r for r in rows if r.bad]
    assert len(bad) == 1 and bad[0].file == middle and f"log extent {middle} is missing" in bad[0].error
    assert {r.file for r in rows if not r.bad} == {p.file for p in parts} - {middle}


def test_torn_last_write_is_a_normal_end(mqlog_spark, zos_run, tmp_path):
    """The page of the log's last write damaged in both copies: the reader takes it for a
    write torn by a crash – the log ends before it. FAILFAST says nothing; PERMISSIVE adds
    one final bad row."""
    rows = _load(mqlog_spark, zos_run).select("address", "file").collect()
    last = max(rows, key=lambda r: r.address)
    page = last.address - last.address % 4096
    torn = tmp_path / "torn"
    shutil.copytree(zos_run, torn)
    from mqlog.zosrun import open_zos

    space, _, _, _ = open_zos(torn)
    ds = next(d for d in space.active if d.start <= page < d.start + space.ds_bytes)
    space.storage.close()
    for copy in (1, 2):
        _flip(torn / "qm" / f"LOGCOPY{copy}.DS{ds.number:02d}", page - ds.start + 3000)
    printed = _print_json(torn)  # the log print reads the same log, to where it ends
    assert printed["read"]["end"] in ("torn", "incomplete")
    before = printed["read"]["records_read"]
    assert before < len(rows)

    assert _load(mqlog_spark, torn).count() == before
    permissive = _load(mqlog_spark, torn, mode="PERMISSIVE").collect()
    assert len(permissive) == before + 1
    end = [r for r in permissive if r.bad]
    assert len(end) == 1 and "end of log" in end[0].error and printed["read"]["end"] in end[0].error
    assert end[0].address == page and end[0].file == f"LOGCOPY1.DS{ds.number:02d}"


def test_bad_mode_and_not_a_run_directory(mqlog_spark, dist_run, tmp_path):
    with pytest.raises(Exception, match="mode"):
        _load(mqlog_spark, dist_run, mode="DROPMALFORMED").count()
    with pytest.raises(Exception, match="no run.json"):
        _load(mqlog_spark, tmp_path).count()


def test_partitions_and_reader_pickle(dist_run):
    import pickle

    from mqlog.spark.datasource import FAILFAST, MqlogReader

    reader = pickle.loads(pickle.dumps(MqlogReader(str(dist_run), FAILFAST)))
    parts = pickle.loads(pickle.dumps(reader.partitions()))
    assert len(parts) > 1 and sum(p.last for p in parts) == 1 and parts[-1].last
    assert all(a.end <= b.start for a, b in zip(parts, parts[1:]))


def test_the_data_source_reads_under_the_run_directory_lock(dist_run, tmp_path):
    """Planning (driver) and reading a partition (task) both hold the directory's lock shared:
    refused, naming the process, while a command writes the directory."""
    import os

    from mqlog.core.errors import MqlogError
    from mqlog.rundir import locked
    from mqlog.spark.datasource import FAILFAST, MqlogReader

    directory = shutil.copytree(dist_run, tmp_path / "dist")
    reader = MqlogReader(str(directory), FAILFAST)
    with locked(directory):
        with pytest.raises(MqlogError, match=f"being written by another mqlog command \\(process {os.getpid()}\\)"):
            reader.partitions()
    parts = reader.partitions()
    with locked(directory):
        with pytest.raises(MqlogError, match="being written"):
            list(reader.read(parts[0]))
    assert list(reader.read(parts[0]))


def test_a_directory_written_after_planning_is_not_read_with_the_old_plan(dist_run, tmp_path):
    """A writer that ran between planning and a task (here a restart, which appends to the log
    and saves the control file) makes the plan stale: the task refuses rather than read
    ranges that no longer hold what the plan says."""
    from mqlog.core.errors import MqlogError
    from mqlog.spark.datasource import FAILFAST, MqlogReader

    directory = shutil.copytree(dist_run, tmp_path / "dist")
    reader = MqlogReader(str(directory), FAILFAST)
    parts = reader.partitions()
    subprocess.run([PY, "-m", "mqlog", "restart", str(directory), "--verify"], check=True, capture_output=True, timeout=300)
    with pytest.raises(MqlogError, match="read it again"):
        list(reader.read(parts[0]))
    assert list(reader.read(reader.partitions()[0]))


# --- transforms on real data --------------------------------------------------------------------

def test_transforms_on_real_logs(mqlog_spark, zos_run, shunt_run):
    from mqlog.spark import transforms as T

    df = _load(mqlog_spark, zos_run)
    comp = T.compression_by_codec(df).collect()
    assert len(comp) == 1 and comp[0].codec == "RLE" and comp[0].puts == 200
    assert comp[0].payload_bytes == 200 * 2048 and 0 < comp[0].ratio < 1
    by_type = {r.record_type: r for r in T.bytes_by_record_type(df).collect()}
    assert by_type["PUT"].records == 200 and by_type["GET"].records == 200
    assert sum(r.bytes for r in by_type.values()) == df.groupBy().sum("length").collect()[0][0]

    printed = _print_json(shunt_run)
    shunts = [p for p in printed["records"] if p["type"] == "SHUNT"]
    assert shunts, "the long-UOW run should shunt"
    long_df = _load(mqlog_spark, shunt_run)
    got = {r.uow: (r.shunt_records, r.bytes) for r in T.shunted_bytes(long_df).collect()}
    want = {}
    for p in shunts:
        n, b = want.get(p["uow"], (0, 0))
        want[p["uow"]] = (n + 1, b + p["length_bytes"])
    assert got == want
    outcomes = {r.uow: r.outcome for r in T.uow_lifetimes(long_df).collect()}
    assert {outcomes[u] for u in want} <= {"backed_out", "in_flight", "committed"}
    assert sum(o == "backed_out" for o in outcomes.values()) == sum(p["type"] == "BACKOUT" for p in printed["records"])


# --- transforms on hand-built frames -----------------------------------------------------------

def _frame(spark, rows):
    """A data-source-shaped frame from dicts (missing columns null, ``bad`` false)."""
    from mqlog.spark.datasource import SCHEMA

    names = [c.strip().split()[0] for c in SCHEMA.split(",")]
    full = [tuple(r.get(n, False if n == "bad" else None) for n in names) for r in rows]
    return spark.createDataFrame(full, SCHEMA)


def _rec(address, record_type, uow=0, length=100, **more):
    return dict(platform="zos", file="LOGCOPY1.DS01", address=address, record_type=record_type, uow=uow,
                length=length, **more)


@pytest.fixture(scope="module")
def tiny(spark):
    return _frame(spark, [
        _rec(100, "BEGIN", 1, 72),
        _rec(200, "PUT", 1, 800, payload_length=1000, stored_length=500, codec="RLE"),
        _rec(300, "PUT_SEGMENT", 1, 400, stored_length=100, codec="RLE"),
        _rec(400, "COMMIT", 1, 750),
        _rec(500, "BEGIN", 2, 72),
        _rec(600, "PUT", 2, 1000, payload_length=250, stored_length=250, codec="NONE"),
        _rec(700, "BACKOUT", 2, 1012),
        _rec(800, "BEGIN", 3, 72),
        _rec(900, "PREPARE", 3, 750),
        _rec(1000, "BEGIN", 4, 72),
        _rec(1100, "SHUNT", 4, 104),
        _rec(1200, "SHUNT", 4, 192),
        _rec(1300, "CHECKPOINT_BEGIN", 0, 52),
        dict(platform="zos", file="LOGCOPY1.DS01", address=1400, bad=True, error="damage"),
    ])


def assert_frames_equal(actual, expected):
    """The same columns (names and types) and the same rows in any order, doubles to 1e-9.

    Not pyspark.testing's assertDataFrameEqual: it imports pyspark.pandas whenever pandas is
    installed, and pyspark.pandas does not import under pandas 3 (pandas.tseries.frequencies
    lost DateOffset), so the helper fails in any environment that has pandas 3 for another
    reason; these frames are small enough to collect and compare here."""
    assert [(f.name, f.dataType) for f in actual.schema.fields] == \
        [(f.name, f.dataType) for f in expected.schema.fields]
    got, want = (sorted((tuple(r) for r in frame.collect()), key=repr) for frame in (actual, expected))
    assert len(got) == len(want), (got, want)
    for row, expected_row in zip(got, want):
        assert [pytest.approx(v, rel=1e-9) if isinstance(v, float) else v for v in expected_row] == list(row), \
            (got, want)


def test_bytes_by_record_type(spark, tiny):
    from mqlog.spark.transforms import bytes_by_record_type

    expected = spark.createDataFrame([
        ("BEGIN", 4, 288), ("PUT", 2, 1800), ("PUT_SEGMENT", 1, 400), ("COMMIT", 1, 750), ("BACKOUT", 1, 1012),
        ("PREPARE", 1, 750), ("SHUNT", 2, 296), ("CHECKPOINT_BEGIN", 1, 52),
    ], "record_type STRING, records BIGINT, bytes BIGINT")
    assert_frames_equal(bytes_by_record_type(tiny), expected)


def test_uow_lifetimes(spark, tiny):
    from mqlog.spark.transforms import uow_lifetimes

    expected = spark.createDataFrame([
        (1, 100, 400, 4, "committed"), (2, 500, 700, 3, "backed_out"), (3, 800, 900, 2, "in_doubt"),
        (4, 1000, 1200, 3, "in_flight"),
    ], "uow BIGINT, first_address BIGINT, last_address BIGINT, records BIGINT, outcome STRING")
    assert_frames_equal(uow_lifetimes(tiny), expected)


def test_compression_by_codec(spark, tiny):
    from mqlog.spark.transforms import compression_by_codec

    expected = spark.createDataFrame([("RLE", 1, 1000, 600, 0.6), ("NONE", 1, 250, 250, 1.0)],
                                     "codec STRING, puts BIGINT, payload_bytes BIGINT, stored_bytes BIGINT, "
                                     "ratio DOUBLE")
    assert_frames_equal(compression_by_codec(tiny), expected)


def test_shunted_bytes(spark, tiny):
    from mqlog.spark.transforms import shunted_bytes

    expected = spark.createDataFrame([(4, 2, 296)], "uow BIGINT, shunt_records BIGINT, bytes BIGINT")
    assert_frames_equal(shunted_bytes(tiny), expected)


def test_transforms_group_by_extra_columns(spark, tiny):
    """``by``: one frame holding several runs' logs gives each run's figures."""
    from mqlog.spark.transforms import bytes_by_record_type, compression_by_codec, shunted_bytes, uow_lifetimes
    from pyspark.sql import functions as F

    both = tiny.withColumn("config_name", F.lit("a")).unionByName(
        tiny.where(F.col("uow") == 1).withColumn("config_name", F.lit("b")))
    by = ["config_name"]
    assert_frames_equal(bytes_by_record_type(both, by).where("config_name = 'b'"), spark.createDataFrame(
        [("b", "BEGIN", 1, 72), ("b", "PUT", 1, 800), ("b", "PUT_SEGMENT", 1, 400), ("b", "COMMIT", 1, 750)],
        "config_name STRING, record_type STRING, records BIGINT, bytes BIGINT"))
    assert_frames_equal(bytes_by_record_type(both, by).where("config_name = 'a'").drop("config_name"),
                         bytes_by_record_type(tiny))
    assert_frames_equal(uow_lifetimes(both, by).where("config_name = 'b'"), spark.createDataFrame(
        [("b", 1, 100, 400, 4, "committed")],
        "config_name STRING, uow BIGINT, first_address BIGINT, last_address BIGINT, records BIGINT, outcome STRING"))
    assert compression_by_codec(both, by).where("config_name = 'b'").select("codec").collect() == [("RLE",)]
    assert shunted_bytes(both, by).where("config_name = 'b'").count() == 0


def test_the_dependency_archive_holds_what_executors_import():
    """The archive a cluster job ships: the model's dependencies as installed (zstandard's C
    extension included), nothing of Spark's own Python side."""
    import tarfile

    from mqlog.spark.session import EXECUTOR_DISTRIBUTIONS, deps_archive

    names = tarfile.open(deps_archive(EXECUTOR_DISTRIBUTIONS)).getnames()
    tops = {n.split("/")[0] for n in names}
    assert {"attr", "attrs", "numpy", "simpy", "sortedcontainers", "zstandard"} <= tops
    assert any(n.startswith("zstandard/") and n.endswith(".so") for n in names)
    assert not any(t in tops for t in ("pyspark", "py4j")) and not any("__pycache__" in n for n in names)
    assert deps_archive(EXECUTOR_DISTRIBUTIONS) == deps_archive(EXECUTOR_DISTRIBUTIONS)  # cached, not rebuilt
