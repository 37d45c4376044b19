"""The distributed queue manager's utilities over a run directory: ``qmstatus`` (DISPLAY
QMSTATUS's log fields), ``dump`` (the logger dump, like amqldmpa), and the administrative
commands that restart the queue manager to act on it: ``rcdmqimg``, ``rcrmqobj`` and
``set-log-archived``.
"""

from __future__ import annotations

from pathlib import Path

import click

from mqlog.cli.group import cli, device_for_restart, emit_json, reading, text_value
from mqlog.core.errors import MqlogError
from mqlog.rundir import METRICS_FILE, QM_DIR
from mqlog.rundir import load_run as _load_run
from mqlog.rundir import read_json as _read_json
from mqlog.rundir import locked, run_platform, run_qm_config


def _distributed_space(directory: Path):
    """The distributed log space a run left in ``directory``, its config, and the log's head
    (the caller holds the directory's lock, shared: :func:`reading`)."""
    from mqlog.core.errors import MqlogError
    from mqlog.core.log.reader import LogReader
    from mqlog.rundir import open_platform

    run, values, platform = open_platform(directory, platform="distributed", label="distributed")
    space = platform.space
    storage = space.storage
    control = space.load_control()
    if control is None:
        raise MqlogError(f"{directory}: the queue manager was never created (no checkpoint on disk)")
    reader = LogReader(space, control.checkpoint, record_types=platform.record_types)
    for _ in reader:
        pass
    return run, values, space, reader.end.address, storage


@cli.command("qmstatus")
@click.argument("directory", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True)
def qmstatus_cmd(directory: Path, as_json: bool):
    """DISPLAY QMSTATUS's log fields for the distributed queue manager a run left in DIRECTORY."""
    with reading(directory):
        run, values, space, head, storage = _distributed_space(directory)
        storage.close()
    status = space.status(head)
    if as_json:
        emit_json(status)
        return
    click.echo("AMQ8705I: Display Queue Manager Status Details.")
    for key, value in status.items():
        click.echo(f"   {key}({value})")


def _administer(directory: Path, action):
    """Run an administrative ``action(qm)`` on the distributed queue manager left in
    ``directory``: restart it, act, shut it down; its messages go to the error log."""
    from mqlog.core.workload.run import administer
    from mqlog.core.disk.storage import DirectoryStorage

    def keep_messages(qm):  # also when the action fails part way: what it did is on disk
        with open(directory / qm.platform.error_log, "a", encoding="utf-8") as log:
            for line in qm.messages:
                log.write(line + "\n")

    _load_run(directory)  # not a run directory: say so before taking its lock
    with locked(directory):  # from reading run.json to the last message logged
        run = _load_run(directory)
        if run["platform"] != "distributed":
            raise MqlogError(f"{directory}: a {run['platform']} queue manager; this command is for distributed ones")
        if not (directory / QM_DIR).is_dir():
            raise MqlogError(f"{directory}: no {QM_DIR}/ directory with the queue manager's files")
        choice, values = run_platform(directory, run)
        storage = DirectoryStorage(directory / QM_DIR)
        try:
            return administer(choice.maker(values), storage, action, device=device_for_restart(run["device"]),
                              host=run["host"], qm_config=run_qm_config(run),
                              on_exit=keep_messages)
        finally:
            storage.close()


def _admin_report(qm, as_json: bool, summary: dict) -> None:
    status = qm.platform.space.status(qm.writer.next_address)
    summary = dict(summary, CURRLOG=status["CURRLOG"], RECLOG=status["RECLOG"], MEDIALOG=status["MEDIALOG"],
                   ARCHLOG=status["ARCHLOG"], messages=list(qm.messages))
    if as_json:
        emit_json(summary)
        return
    for line in qm.messages:
        click.echo(line)
    # "; " between the fields: a field's own value may be a comma-separated list
    click.echo("; ".join(f"{k} {text_value(v)}" for k, v in summary.items() if k != "messages"))


@cli.command("rcdmqimg")
@click.argument("directory", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.argument("queues", nargs=-1, required=True)
@click.option("--json", "as_json", is_flag=True)
def rcdmqimg_cmd(directory: Path, queues: tuple, as_json: bool):
    """Record media images of QUEUES in the log of the distributed queue manager left in
    DIRECTORY (linear logs only), moving MEDIALOG forward (rcdmqimg -t queue)."""
    from mqlog.distributed.media import rcdmqimg

    def action(qm):
        sizes = {}
        for name in queues:
            _, image = yield from rcdmqimg(qm, name)
            sizes[name] = len(image)
        return sizes

    sizes, qm = _administer(directory, action)
    _admin_report(qm, as_json, {"imaged": sizes})


@cli.command("rcrmqobj")
@click.argument("directory", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.argument("queues", nargs=-1, required=True)
@click.option("--json", "as_json", is_flag=True)
def rcrmqobj_cmd(directory: Path, queues: tuple, as_json: bool):
    """Re-create QUEUES from their media images and the log after them (rcrmqobj -t queue),
    on the distributed queue manager left in DIRECTORY. A damaged queue is re-created at
    restart already when the log is linear; this does it on request."""
    from mqlog.distributed.media import rcrmqobj

    def action(qm):
        depths = {}
        for name in queues:
            queue = yield from rcrmqobj(qm, name)
            depths[name] = queue.depth if queue is not None else None
        return depths

    depths, qm = _administer(directory, action)
    _admin_report(qm, as_json, {"recreated": depths, "damaged": sorted(qm.damaged)})


@cli.command("set-log-archived")
@click.argument("directory", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.argument("extents", nargs=-1, required=True)
@click.option("--json", "as_json", is_flag=True)
def set_log_archived_cmd(directory: Path, extents: tuple, as_json: bool):
    """SET LOG ARCHIVED(EXTENT): tell the distributed queue manager left in DIRECTORY that
    these extents are archived (LogManagement=Archive); it may then reuse them once restart
    and media recovery no longer need them."""
    def action(qm):
        marked = []
        for name in extents:
            try:
                if qm.platform.space.set_log_archived(name):
                    marked.append(name)
            except ValueError as exc:
                raise MqlogError(f"SET LOG ARCHIVED({name}): {exc}") from None
        return marked

    marked, qm = _administer(directory, action)
    _admin_report(qm, as_json, {"archived": marked})


@cli.command("dump")
@click.argument("directory", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True)
def dump_cmd(directory: Path, as_json: bool):
    """The logger dump (like amqldmpa -c H) for the distributed queue manager a run left in DIRECTORY.

    Ring and files come from the log control file; the write statistics from the run's metrics."""
    from mqlog.distributed.space import extent_name

    with reading(directory):
        run, values, space, head, storage = _distributed_space(directory)
        storage.close()
        m = _read_json(directory / METRICS_FILE) if (directory / METRICS_FILE).is_file() else {}
    order = space.ring if not space.linear else space.active_extents()
    worst = m.get("worst_write_by_file", {})
    recent = sorted((kv for kv in worst.items() if kv[0].endswith(".LOG")), key=lambda kv: kv[0])[-8:]  # last 8 extents
    dump = {
        "logactive": space.primary, "loginactive": space.secondary, "FileCount": len(order),
        "filenum": [extent_name(n) for n in order], "logBufSz": m.get("log_buffer_bytes", 0) // 4096,
        "WriteSizeShort": m.get("write_size_short_bytes", 0), "WriteSizeLong": m.get("write_size_long_bytes", 0),
        "WriteSizeMax": m.get("write_size_max_bytes", 0), "WriteTimeShort": m.get("write_time_short_us", 0),
        "WriteTimeLong": m.get("write_time_long_us", 0), "WriteTimeShortMax": m.get("write_time_short_max_us", 0),
        "WriteTimeLongMax": m.get("write_time_long_max_us", 0), "WriteTimeMax": m.get("write_time_max_us", 0),
        "WriteTimeMaxAt": m.get("write_time_max_at_us", 0),
        "WorstWriteByFile": {name: entry.get("us", 0) for name, entry in recent},
        "staLogicalBytes": m.get("logical_bytes", 0), "staPhysicalBytes": m.get("physical_bytes", 0),
        "staLogicalWrites": m.get("logical_writes", 0), "staPhysicalWrites": m.get("physical_writes", 0),
    }
    if as_json:
        emit_json(dump)
        return
    for key, value in dump.items():
        if isinstance(value, dict):
            click.echo(f"{key}:")
            for name, us in value.items():
                click.echo(f"    {name:<14} {us:.1f} µs")
        elif isinstance(value, list):
            click.echo(f"{key:<18} {' '.join(value)}")
        else:
            click.echo(f"{key:<18} {value:.1f}" if isinstance(value, float) else f"{key:<18} {value}")
