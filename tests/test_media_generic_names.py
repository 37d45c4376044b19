"""``rcdmqimg`` and ``rcrmqobj`` take MQ's generic object names (issue 22): ``*`` for every
queue (``rcdmqimg -m QM -t all *``), a trailing asterisk for every queue whose name starts with
what comes before it, and nothing else; through the real command line."""

from __future__ import annotations

import json

from clikit import mqlog, one_line_error


def _deep_linear_run(directory):
    """A linear-log run that leaves 50 messages on each of two queues."""
    out = mqlog("run", "--platform", "distributed", "--workload", "deep-queue", "--set", "workload.queues=2",
                "--set", "workload.depth=50", "--set", "workload.then_messages=5", "--set", "log.LogFilePages=64",
                "--set", "log.LogType=LINEAR", "--out", directory)
    assert out.returncode == 0, out.stderr


def test_rcdmqimg_star_images_every_queue_and_rcrmqobj_recreates_one_from_it(tmp_path):
    _deep_linear_run(tmp_path)
    queues = sorted(p.stem for p in (tmp_path / "qm").glob("*.mqq"))
    assert len(queues) == 2
    imaged = mqlog("rcdmqimg", tmp_path, "*", "--json")
    assert imaged.returncode == 0, imaged.stderr
    report = json.loads(imaged.stdout)
    assert sorted(report["imaged"]) == queues and all(size > 0 for size in report["imaged"].values())
    log = (tmp_path / "AMQERR01.LOG").read_text()
    assert all(f"Media image of queue {q} recorded" in log for q in queues)
    # one queue's file destroyed, then re-created on request from the images '*' recorded
    (tmp_path / "qm" / f"{queues[0]}.mqq").write_bytes(b"\xff" * 2048)
    redone = mqlog("rcrmqobj", tmp_path, queues[0], "--json")
    assert redone.returncode == 0, redone.stderr
    result = json.loads(redone.stdout)
    assert result["recreated"] == {queues[0]: 50} and result["damaged"] == []
    verified = mqlog("restart", tmp_path, "--verify", "--json")
    assert verified.returncode == 0, verified.stderr
    check = json.loads(verified.stdout)
    assert check["committed_missing"] == check["uncommitted_present"] == check["duplicates"] == 0


def test_a_trailing_asterisk_selects_by_prefix_and_anything_else_is_refused(tmp_path):
    _deep_linear_run(tmp_path)
    by_prefix = mqlog("rcrmqobj", tmp_path, "DEEP.0001*", "--json")
    assert by_prefix.returncode == 0, by_prefix.stderr
    assert json.loads(by_prefix.stdout)["recreated"] == {"DEEP.0001": 50}
    both = json.loads(mqlog("rcdmqimg", tmp_path, "DEEP.*", "DEEP.0000", "--json").stdout)
    assert list(both["imaged"]) == ["DEEP.0000", "DEEP.0001"]  # each once
    one_line_error(mqlog("rcdmqimg", tmp_path, "FILL.*"), "FILL.*", "no queue matches")
    one_line_error(mqlog("rcdmqimg", tmp_path, "DEEP*0"), "DEEP*0", "asterisk")


def test_a_blank_archlog_reads_as_none_not_as_a_field_cut_off(tmp_path):
    """With LogManagement=Manual nothing waits for SET LOG ARCHIVED, so ARCHLOG is blank: the
    summary says "none" and qmstatus shows runmqsc's blank value, ( )."""
    _deep_linear_run(tmp_path)
    imaged = mqlog("rcdmqimg", tmp_path, "*")
    assert imaged.returncode == 0, imaged.stderr
    assert imaged.stdout.splitlines()[-1].endswith("; ARCHLOG none")
    assert json.loads(mqlog("rcdmqimg", tmp_path, "*", "--json").stdout)["ARCHLOG"] == ""
    assert "   ARCHLOG( )" in mqlog("qmstatus", tmp_path).stdout.splitlines()
