"""The distributed queue manager's utilities over a run directory: ``qmstatus`` (DISPLAY
QMSTATUS's log fields), ``dump`` (the logger dump, like amqldmpa), and the administrative
commands that restart the queue manager to act on it: ``rcdmqimg``, ``rcrmqobj`` and
``set-log-archived``. They are the platform's own utilities: its descriptor lists them, and
their work comes from the descriptor's ``tools`` (this module names no platform).
"""

from __future__ import annotations

from pathlib import Path

import click

from mqlog.cli.group import cli, device_for_restart, emit_json, reading, text_value
from mqlog.core.errors import MqlogError
from mqlog.platforms import PLATFORMS, owner
from mqlog.rundir import METRICS_FILE
from mqlog.rundir import load_run as _load_run
from mqlog.rundir import read_json as _read_json

#: the platform these commands are the utilities of (its descriptor lists them): its functions
#: come from the descriptor's ``tools``, a run of another platform is refused naming it
PLATFORM = owner("dmpmqlog")


def _distributed_space(directory: Path):
    """The log space of the platform's run in ``directory``, its config, and the log's head
    (the caller holds the directory's lock, shared: :func:`reading`)."""
    from mqlog.core.errors import MqlogError
    from mqlog.core.log.reader import LogReader
    from mqlog.rundir import open_platform

    run, values, platform = open_platform(directory, platform=PLATFORM.name, label=PLATFORM.name)
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
    _after_the_crash(directory, run, space.log_use(head)["rec_bytes"])
    if as_json:
        emit_json(status)
        return
    click.echo("AMQ8705I: Display Queue Manager Status Details.")
    for key, value in status.items():
        click.echo(f"   {key}({value if value != '' else ' '})")  # runmqsc shows a blank value as ( )


def _after_the_crash(directory: Path, run, in_use_bytes: int) -> None:
    """When the last thing that happened to ``directory`` was a run that crashed, say on stderr
    why its metrics.json's ``platform_log_*`` figures differ from DISPLAY QMSTATUS's: the
    metrics are the queue manager's at the crash instant, which count the log records still
    in the log buffer and in the write the crash cut; QMSTATUS reads the log the files hold
    after it, where those records never arrived. Both come from one computation
    (``log_use``), so with no crash between them they agree."""
    last = (run.history or [{}])[-1]
    if not (str(last.get("command", "")).startswith("run") and last.get("crashed")):
        return
    metrics_path = directory / METRICS_FILE
    metrics = _read_json(metrics_path) if metrics_path.is_file() else {}
    at_crash = metrics.get("platform_log_bytes_in_use")
    if isinstance(at_crash, int) and at_crash != in_use_bytes:
        percent = metrics.get("platform_log_current_primary_space_in_use_percent")
        click.echo(f"mqlog qmstatus: the log as its files hold it after the crash: {in_use_bytes} bytes in use "
                   f"(RECSZ, LOGINUSE); {METRICS_FILE}'s platform_log_bytes_in_use {at_crash} and "
                   f"platform_log_current_primary_space_in_use_percent {percent} are the queue manager's at the "
                   f"crash instant, with the log records still in its buffer or in the write the crash cut, "
                   f"which never reached the files", err=True)


def _administer(directory: Path, action):
    """Run an administrative ``action(qm)`` on the platform's queue manager left in
    ``directory`` (:func:`mqlog.usecases.administer`)."""
    from mqlog.usecases import administer

    return administer(directory, action, platform=PLATFORM, resolve_device=device_for_restart)


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
    # a blank ARCHLOG (nothing waits for SET LOG ARCHIVED) would read as a field cut off
    click.echo("; ".join(f"{k} {text_value(v) if v != '' else 'none'}" for k, v in summary.items() if k != "messages"))


def _generic_names(qm, names: tuple, command: str, *, damaged: bool = False) -> list:
    """The queues ``names`` select, in order, each once. A name may end in an asterisk, as
    rcdmqimg's and rcrmqobj's GenericObjName may ("can have a trailing asterisk to [record |
    re-create] any objects with names matching the portion of the name before the asterisk",
    IBM MQ, "rcdmqimg (record media image)" / "rcrmqobj (re-create object)"): ``*`` alone is
    every queue (``rcdmqimg -t all *``), ``FILL.*`` every queue whose name starts ``FILL.``.
    An asterisk anywhere else is no name MQ accepts, and a generic name that selects no queue
    is refused rather than doing nothing quietly. ``damaged``: damaged queues match too
    (rcrmqobj re-creates them)."""
    known = sorted(set(qm.queues) | (set(qm.damaged) if damaged else set()))
    chosen: list = []
    for name in names:
        if "*" in name[:-1]:
            raise MqlogError(f"{command}: {name!r}: an asterisk may only end a generic name (as in 'FILL.*' or '*')")
        if not name.endswith("*"):
            found = [name]  # a single queue: the command itself says if there is no such queue (2085)
        else:
            found = [q for q in known if q.startswith(name[:-1])]
            if not found:
                raise MqlogError(f"{command}: no queue matches the generic name {name!r} "
                                 f"on queue manager {qm.config.name}")
        chosen += [q for q in found if q not in chosen]
    return chosen


@cli.command("rcdmqimg")
@click.argument("directory", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.argument("queues", nargs=-1, required=True)
@click.option("--json", "as_json", is_flag=True)
def rcdmqimg_cmd(directory: Path, queues: tuple, as_json: bool):
    """Record media images of QUEUES in the log of the distributed queue manager left in
    DIRECTORY (linear logs only), moving MEDIALOG forward (rcdmqimg -t queue). A name may
    end in '*' (quote it from the shell): '*' images every queue, 'FILL.*' every queue whose
    name starts 'FILL.'."""
    rcdmqimg = PLATFORM.tools().rcdmqimg

    def action(qm):
        sizes = {}
        for name in _generic_names(qm, queues, "rcdmqimg"):
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
    restart already when the log is linear; this does it on request. A name may end in '*'
    (quote it from the shell): '*' re-creates every queue, damaged ones included."""
    rcrmqobj = PLATFORM.tools().rcrmqobj

    def action(qm):
        depths = {}
        for name in _generic_names(qm, queues, "rcrmqobj", damaged=True):
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
    with reading(directory):
        run, values, space, head, storage = _distributed_space(directory)
        storage.close()
        m = _read_json(directory / METRICS_FILE) if (directory / METRICS_FILE).is_file() else {}
    dump = PLATFORM.tools().logger_dump(space, m)
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


def _lsn_option(ctx, param, value):
    parse_lsn = PLATFORM.tools().parse_lsn

    if value is None:
        return None
    try:
        return parse_lsn(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


@cli.command("dmpmqlog")
@click.argument("directory", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--base", "-b", is_flag=True,
              help="dmpmqlog -b: from the base LSN, the start of the extent holding the oldest record restart "
                   "needs (RECLOG).")
@click.option("--from-lsn", "-s", "from_lsn", callback=_lsn_option, metavar="LSN",
              help="dmpmqlog -s: from the record at this LSN (0:0:4:1234 or <0:0:4:1234>).")
@click.option("--extent", "-n", type=click.IntRange(0, 9_999_999), metavar="N",
              help="dmpmqlog -n: from the first record of extent N (SnnnnnnN.LOG); linear logs only.")
@click.option("--to-lsn", "-e", "to_lsn", callback=_lsn_option, metavar="LSN",
              help="dmpmqlog -e: stop after the record at this LSN (else at the end of the log).")
@click.option("--json", "as_json", is_flag=True)
def dmpmqlog_cmd(directory: Path, base: bool, from_lsn: int | None, extent: int | None, to_lsn: int | None,
                 as_json: bool):
    """dmpmqlog: every log record of the distributed queue manager a run left in DIRECTORY,
    over all its extents in log order, from the oldest record restart needs (the first record
    of the active log, in RECLOG) to the end of the log, and how the log ends.

    Damage (a missing extent, a corrupt page) is an error naming the file and the LSN, never
    taken for the end. For a z/OS queue manager use 'mqlog print' (CSQ1LOGP)."""
    import itertools

    from mqlog.rundir import open_platform

    tools = PLATFORM.tools()
    LogDump, summary_line, format_lsn = tools.LogDump, tools.summary_line, tools.format_lsn
    with reading(directory):
        run = _load_run(directory)
        other = PLATFORMS.get(run.platform)
        if other is not None and other is not PLATFORM and other.log_formatter is not None:
            command, like = other.log_formatter  # the other platform's own log formatter
            raise MqlogError(f"{directory}: a {other.shown} queue manager; its log is formatted by 'mqlog {command} "
                             f"{directory}' ({like}), dmpmqlog is for {PLATFORM.name} ones")
        _, _, platform = open_platform(directory, platform=PLATFORM.name, label=PLATFORM.name)
        try:
            dump = LogDump(platform.space, platform.record_types, from_lsn=from_lsn, base=base, extent=extent,
                           to_lsn=to_lsn)
            header = dump.header()
            walk = dump.records()
            # the first record before any output: a start LSN no record starts at is refused
            # before the header is printed, not after it
            first = next(walk, None)
            if not as_json:
                click.echo("Log File Header")
                for key, value in header.items():
                    click.echo(f"  {key:<13}{value}")
                click.echo(f"\n{'LSN':<22} {'extent':<13} {'LogRecdType':<16} {'XTranid':>8} {'length':>6}  queue")
            listed, count = [], 0
            for r in itertools.chain([first] if first is not None else [], walk):
                count += 1
                if as_json:
                    listed.append({"lsn": format_lsn(r.lsn), "extent": r.extent, "type": r.type,
                                   "uow": f"{r.uow:x}" if r.uow else None, "queue": r.queue or None,
                                   "length_bytes": r.length})
                else:
                    click.echo(f"{format_lsn(r.lsn):<22} {r.extent:<13} {r.type:<16} "
                               f"{(f'{r.uow:x}' if r.uow else '-'):>8} {r.length:>6}  {r.queue}".rstrip())
        finally:
            platform.space.storage.close()
    summary = dump.summary(count)
    if as_json:
        emit_json({"header": dict(header, nextlsn=summary["nextlsn"]), "records": listed, "summary": summary})
        return
    click.echo(summary_line(summary))
