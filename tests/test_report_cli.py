"""``mqlog report`` redraws a compare's or a sweep's page from its Parquet without Spark (issue
22): the command runs here in a Python where ``import pyspark`` fails, on results written as
Spark writes them (part files beside ``_SUCCESS`` and ``.crc`` files; a sweep's partitioned by
platform, appended to with more columns); and an ``-o`` it cannot write is one line naming it
before anything is read.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from clikit import one_line_error

from mqlog.spark.compare import check_matrix, flatten, load_matrix, run_cell

#: the command line in a Python where pyspark cannot be imported: a report that starts
#: Spark (or only imports it) fails
NO_SPARK = ("import sys; sys.modules['pyspark'] = None; from mqlog.cli import main; "
            "sys.exit(main(sys.argv[1:]))")


def report(*args):
    return subprocess.run([sys.executable, "-c", NO_SPARK, "report", *map(str, args)], capture_output=True,
                          text=True, timeout=300)


def rows_of(cells, **params):
    """What compare's tasks return for these cells, run here (one small workload)."""
    params = {"pairs": 1, "messages_per_pair": 5, **params}
    return [run_cell(dict(cell, workload="putget-pairs", params=params, seed=0, device="ssd", qmgr={}))
            for cell in cells]


def write_as_spark(directory, rows, part=0):
    """``rows`` as Spark leaves them: flat columns in a part file, with its checksum and marker."""
    directory.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist([flatten(r) for r in rows]), directory / f"part-{part:05d}-x.snappy.parquet")
    (directory / f".part-{part:05d}-x.snappy.parquet.crc").write_bytes(b"\0crc")
    (directory / "_SUCCESS").write_bytes(b"")


@pytest.fixture(scope="module")
def cells():
    return check_matrix(load_matrix("default"))[:2]


def test_report_of_a_compare_redraws_the_page_without_spark(cells, tmp_path):
    rows = rows_of(cells)
    write_as_spark(tmp_path / "results.parquet", rows)
    out = report(tmp_path, "-o", tmp_path / "again.html", "--json")
    assert out.returncode == 0, out.stderr
    document = json.loads(out.stdout)
    assert {k: document[k] for k in ("rows", "wrote")} == {"rows": len(rows), "wrote": str(tmp_path / "again.html")}
    assert {e["basis"] for e in document["provenance"]} >= {"calibrated", "assumption"}  # how far to trust it
    page = (tmp_path / "again.html").read_text()
    assert '<table id="comparison">' in page and all(r["config_name"] in page for r in rows)
    assert "mqlog compare: putget-pairs, seed 0" in page


def _heading(page):
    """A report page's title line and the note under it, as a reader sees them."""
    import re

    return re.search(r"<h1>(.*?)</h1>\n<p class=\"note\">(.*?)</p>", page).groups()


def test_a_redrawn_compare_page_keeps_device_host_and_parameters(cells, tmp_path):
    """Trial s33 defect 5: the page redrawn from Parquet says what the job's said – the device
    and host every configuration ran on, and the workload parameters – not only workload and
    seed (an ssd page could not be told from a dasd one)."""
    from mqlog.core.host.profiles import DEFAULT_HOST

    rows = rows_of(cells, message_size=777)
    write_as_spark(tmp_path / "results.parquet", rows)
    assert report(tmp_path, "-o", tmp_path / "again.html").returncode == 0
    title, params = _heading((tmp_path / "again.html").read_text())
    assert title == f"mqlog compare: putget-pairs, seed 0, device ssd, host {DEFAULT_HOST}"
    assert "message_size=777" in params.split(", ")
    assert "messages_per_pair=5" in params.split(", ") and "pairs=1" in params.split(", ")


def test_report_of_a_sweep_merges_its_appends_without_spark(cells, tmp_path):
    sweep = tmp_path / "sweep-mine"
    first, second = rows_of(cells[:1]), rows_of(cells[1:], message_size=4000)
    for row, grid in ((first[0], {"workload.message_size": 2048}), (second[0], {"workload.message_size": 4000})):
        row["sweep"] = grid
        row["key"] = f"k{grid['workload.message_size']}"
    second[0]["a_later_column_bytes"] = 7  # a later run's rows may carry more columns
    for n, row in enumerate(first + second):
        platform = row.pop("platform")
        write_as_spark(sweep / "results" / f"platform={platform}", [row], part=n)
    out = report(sweep)
    assert out.returncode == 0, out.stderr
    assert out.stdout == f"wrote {sweep / 'report.html'}\n"
    page = (sweep / "report.html").read_text()
    assert "mqlog sweep: mine" in page and all(r["config_name"] in page for r in first + second)


def test_results_that_are_not_parquet_are_one_line_naming_them(tmp_path):
    (tmp_path / "results.parquet").mkdir()
    (tmp_path / "results.parquet" / "part-00000.parquet").write_bytes(b"PAR1 this is not parquet")
    one_line_error(report(tmp_path), str(tmp_path / "results.parquet"), "cannot be read as mqlog results")


@pytest.mark.parametrize("where", ["no/such/dir/r.html", "{results}", "{file}/r.html"])
def test_an_unwritable_output_is_refused_first_naming_it(tmp_path, where):
    # the results are garbage: the -o error coming instead of theirs shows nothing was read first
    (tmp_path / "results.parquet").mkdir()
    (tmp_path / "results.parquet" / "part-00000.parquet").write_bytes(b"PAR1 this is not parquet")
    (tmp_path / "a-file").write_text("")
    output = tmp_path / where.format(results="results.parquet", file="a-file")
    out = report(tmp_path, "-o", output)
    one_line_error(out, "-o", str(output))
    assert "cannot be read" not in out.stderr
