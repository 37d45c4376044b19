"""A run of unwritten pages in the middle of the log is a hole, never the end of the log.

Trial s33 #1, as a user makes it with the CLI: a crashed run, a few pages of the log zeroed
in the middle (a lost write of several pages looks exactly like that), then ``restart``.
Before the fix two zeroed pages or more were taken for the end of the log: restart dropped
the committed work after them, said it had started (AMQ8003I, CSQR002I RESTART COMPLETED),
and wrote its own records over the hole; the next restart refused the log naming the
TripleWrite spare file. One zeroed page was refused already. Now any run of up to
HOLE_PAGES bad pages with later writes after it is refused with one line naming the file,
the offset and the log address of the first zeroed page, and nothing is written.
"""

from __future__ import annotations

import pytest

from logdamage import fresh, mqlog, refused, zero
from mqlog.core.format.pages import PAGE_SIZE
from mqlog.core.log.reader import HOLE_PAGES


CRASHED = ["--workload", "log-fill", "--set", "workload.messages=4000", "--set", "workload.transactions=40",
           "--crash-after-writes", "120"]


@pytest.fixture(scope="module")
def dist_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("dist") / "run"
    done = mqlog("run", "--platform", "distributed", *CRASHED, "--out", out)
    assert done.returncode == 0, done.stderr
    return out


@pytest.fixture(scope="module")
def zos_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("zos") / "run"
    done = mqlog("run", "--platform", "zos", *CRASHED, "--out", out)
    assert done.returncode == 0, done.stderr
    return out


def test_the_undamaged_runs_restart_and_verify(dist_run, zos_run, tmp_path):
    for n, run in enumerate((dist_run, zos_run)):
        out = mqlog("restart", fresh(run, tmp_path / str(n)), "--verify")
        assert out.returncode == 0 and "OK" in out.stdout, out.stdout + out.stderr


@pytest.mark.parametrize("pages", [1, 2, 5, HOLE_PAGES])
def test_distributed_zeroed_pages_in_the_middle_of_the_log_are_refused(dist_run, tmp_path, pages):
    run = fresh(dist_run, tmp_path)
    zero(run / "qm" / "S0000000.LOG", (3 << 20) // PAGE_SIZE, pages, log_after=True)
    # nothing was written: the refusal is the same the second time
    refused(run, "S0000000.LOG, offset 3145728", "log address <0:0:48:0>", "unwritten", "good pages follow")


@pytest.mark.parametrize("pages", [2, 5])
def test_zos_zeroed_cis_in_both_copies_are_refused(zos_run, tmp_path, pages):
    run = fresh(zos_run, tmp_path)
    for copy in (1, 2):
        zero(run / "qm" / f"LOGCOPY{copy}.DS01", 200, pages, log_after=True)
    refused(run, "LOGCOPY1.DS01, offset 819200", "log address 00000000000C8000", "unwritten",
            f"the first of {pages} bad pages in a row")


def test_zos_zeroed_cis_in_one_copy_are_read_from_the_other(zos_run, tmp_path):
    """Dual logging: a run of CIs zeroed in copy 1 only is read from copy 2, CI by CI."""
    run = fresh(zos_run, tmp_path)
    zero(run / "qm" / "LOGCOPY1.DS01", 200, 5, log_after=True)
    out = mqlog("restart", run, "--verify")
    assert out.returncode == 0 and "OK" in out.stdout, out.stdout + out.stderr
