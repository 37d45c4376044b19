"""A run directory's lock: a command writing the directory holds it exclusively
for everything it does; a command only reading it holds it shared, and refuses – naming the
writer's process – while a writer has it.

flock locks belong to an open file description, so a lock held here through one descriptor
conflicts with the command's own (the commands run in this process through
:func:`mqlog.cli.main`, as the installed ``mqlog`` runs them); one test holds the lock from
another process too.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mqlog.cli import main
from mqlog.core.errors import MqlogError
from mqlog.rundir import LOCK_FILE, locked, read_locked, write_json

SMALL = ["--workload", "putget-pairs", "--set", "workload.pairs=2", "--set", "workload.messages_per_pair=20"]


def _run(out: Path, platform: str, *extra: str) -> Path:
    done = subprocess.run([sys.executable, "-m", "mqlog", "run", "--platform", platform, *SMALL, *extra,
                           "--out", str(out)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("locks")
    return {"distributed": _run(base / "dist", "distributed", "--set", "log.LogType=LINEAR"),
            "zos": _run(base / "zos", "zos"), "reference": _run(base / "ref", "reference")}


def mqlog(capsys, *args) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err


def _reference_log(directory: Path) -> Path:
    (log,) = [p for p in (directory / "qm").iterdir() if p.suffix == ".log"]
    return log


#: every read-only command over a run directory, by the platform whose run it reads
READERS = [("distributed", ["qmstatus", "{d}"]), ("distributed", ["dump", "{d}"]),
           ("zos", ["print", "{d}", "--summary", "only"]), ("zos", ["bsds", "{d}"]), ("zos", ["stats", "{d}"]),
           ("reference", ["scan", "{log}"])]


def _args(runs, platform, args):
    d = runs[platform]
    log = _reference_log(d) if platform == "reference" else None
    return [a.format(d=d, log=log) for a in args]


@pytest.mark.parametrize("platform,args", READERS, ids=[a[0] for _, a in READERS])
def test_a_reader_is_refused_while_a_writer_holds_the_directory(runs, capsys, platform, args):
    directory = runs[platform]
    argv = _args(runs, platform, args)
    with locked(directory):
        code, out, err = mqlog(capsys, *argv)
        assert code == 2 and out == "", (code, err)
        assert f"{directory} is being written by another mqlog command (process {os.getpid()})" in err
        assert len(err.strip().splitlines()) == 1
        # the reader left the writer's pid where it was
        assert (directory / LOCK_FILE).read_text().strip() == str(os.getpid())
    code, out, err = mqlog(capsys, *argv)
    assert code == 0 and out, err


def test_a_reader_names_a_writer_in_another_process(runs, capsys):
    directory = runs["distributed"]
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys; from mqlog.rundir import locked\n"
                               f"with locked({str(directory)!r}):\n print('held', flush=True); sys.stdin.read()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        code, _, err = mqlog(capsys, "qmstatus", directory)
        assert code == 2 and f"(process {holder.pid})" in err
    finally:
        holder.stdin.close()
        holder.wait(timeout=60)
    assert mqlog(capsys, "qmstatus", directory)[0] == 0


def test_readers_at_once_all_read(runs, capsys):
    directory = runs["zos"]
    with read_locked(directory), read_locked(directory):
        code, out, err = mqlog(capsys, "print", directory, "--summary", "only")
        assert code == 0 and out, err
        assert mqlog(capsys, "bsds", directory)[0] == 0


def test_a_writer_is_refused_while_a_reader_holds_the_directory(runs, tmp_path, capsys):
    directory = shutil.copytree(runs["distributed"], tmp_path / "dist")
    before = {p.name: p.read_bytes() for p in (directory / "qm").iterdir()}
    with read_locked(directory):
        for argv in (["restart", directory], ["rcdmqimg", directory, "APP.Q1"]):
            code, _, err = mqlog(capsys, *argv)
            assert code == 2 and f"{directory} is in use: another mqlog command is reading it" in err, err
    assert {p.name: p.read_bytes() for p in (directory / "qm").iterdir()} == before  # nothing written
    assert mqlog(capsys, "restart", directory, "--verify")[0] == 0


def test_a_restart_holds_the_lock_from_reading_run_json(runs, tmp_path, capsys, monkeypatch):
    """A writer reads run.json under its lock: what it reads is what no other writer is changing."""
    import mqlog.usecases as usecases

    directory = shutil.copytree(runs["distributed"], tmp_path / "dist")
    seen = []
    real = usecases.load_run

    def load_run(d):
        try:
            with read_locked(d):
                seen.append("unlocked")
        except MqlogError:
            seen.append("locked")
        return real(d)

    monkeypatch.setattr(usecases, "load_run", load_run)
    assert mqlog(capsys, "restart", directory, "--verify")[0] == 0
    assert seen[-1] == "locked"


def test_compare_deletes_each_old_run_under_its_lock(tmp_path, capsys, monkeypatch):
    """compare replaces OUT/runs: each run directory there is deleted while compare holds its
    lock, so no command can start on it between the check and the delete."""
    import types

    import mqlog.spark.compare as spark_compare
    import mqlog.spark.session as spark_session

    out = tmp_path / "out"
    for name in ("a", "b"):
        (out / "runs" / name).mkdir(parents=True)
        (out / "runs" / name / "run.json").write_text("{}")
    held = {}
    real_rmtree = shutil.rmtree

    def rmtree(path, *args, **kwargs):
        for run in Path(path).iterdir():
            try:
                with read_locked(run):
                    held[run.name] = False
            except MqlogError:
                held[run.name] = True
        return real_rmtree(path, *args, **kwargs)

    def stop(*args, **kwargs):
        raise MqlogError("stopped after the old runs were deleted")

    monkeypatch.setattr(shutil, "rmtree", rmtree)
    monkeypatch.setattr(spark_session, "spark_session",
                        lambda *a, **k: types.SimpleNamespace(sparkContext=types.SimpleNamespace(master="test")))
    monkeypatch.setattr(spark_compare, "compare", stop)
    code, _, err = mqlog(capsys, "compare", "--workload", "putget-pairs", "--out", out, "--logs")
    assert code == 2 and "stopped after" in err
    assert held == {"a": True, "b": True} and not (out / "runs").exists()


def test_a_compare_task_writes_its_run_directory_under_the_lock(tmp_path):
    from mqlog.spark.compare import check_matrix, run_cell

    (cell,) = check_matrix([{"name": "one", "platform": "distributed", "log": {}}])
    task = dict(cell, workload="putget-pairs", params={"pairs": "1", "messages_per_pair": "5"}, seed=0,
                device="ssd", runs_dir=str(tmp_path))
    (tmp_path / "one").mkdir()
    with read_locked(tmp_path / "one"):
        with pytest.raises(MqlogError, match="another mqlog command is reading it"):
            run_cell(task)
    assert sorted(p.name for p in (tmp_path / "one").iterdir()) == [LOCK_FILE]
    run_cell(task)
    assert (tmp_path / "one" / "run.json").is_file()


def test_write_json_syncs_the_file_before_the_rename_and_the_directory_after(tmp_path, monkeypatch):
    """A crash leaves the old file or the new one, whole: the new bytes are on disk before the
    rename, and the rename is on disk (its directory synced) before write_json returns."""
    events = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd):
        events.append(("fsync", os.readlink(f"/proc/self/fd/{fd}")))
        return real_fsync(fd)

    def replace(src, dst, *args, **kwargs):
        events.append(("replace", str(src), str(dst)))
        return real_replace(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    target = tmp_path / "run.json"
    write_json(target, {"a": 1})
    tmp = str(target) + ".tmp"
    assert events == [("fsync", tmp), ("replace", tmp, str(target)), ("fsync", str(tmp_path))]
    assert json.loads(target.read_text()) == {"a": 1} and not Path(tmp).exists()
