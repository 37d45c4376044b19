"""The ``mqlog`` command line.

User errors (bad parameters, damaged files, unknown profiles) print one line and exit 2;
a traceback means a bug in mqlog.
"""

from __future__ import annotations

import contextlib
import json
import math
import shutil
import sys
from pathlib import Path

import click

from mqlog._version import __version__
from mqlog.core.errors import MqlogError
from mqlog.rundir import JOURNAL_FILE, LOCK_FILE, METRICS_FILE, QM_DIR, RUN_FILE
from mqlog.rundir import load_run as _load_run
from mqlog.rundir import read_json as _read_json
from mqlog.rundir import locked, read_locked, run_platform, save_run, write_json
from mqlog.torture import FAULT_CLASSES


def _parse_list(text: str, name: str) -> list[int]:
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise click.BadParameter(f"{text!r} is not a comma-separated list of whole numbers",
                                 param_hint=name) from None
    if not values:
        raise click.BadParameter("give at least one value", param_hint=name)
    return values


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="mqlog")
def cli() -> None:
    """mqlog: a model of IBM MQ's recovery log on distributed platforms and z/OS.

    Log records, pages, a write-ahead log buffer with group commit and storage devices in
    virtual time; real bytes in real log files.
    """


@cli.command("groupcommit")
@click.option("--committers", default="1,2,5,10,20,50", show_default=True,
              help="Comma-separated numbers of concurrent committing applications.")
@click.option("--commits", default=50, show_default=True, help="Commits per application.")
@click.option("--message-size", default=2048, show_default=True, help="Persistent message size in bytes.")
@click.option("--device", default="ssd", show_default=True,
              help="Device profile: ssd, san, nfs1, nfs2, nfs3, ram, or FILE.toml[:NAME].")
@click.option("--think-us", default=100.0, show_default=True,
              help="Mean virtual time each application spends between commits (exponential).")
@click.option("--seed", default=0, show_default=True, help="Seed for payloads and think times.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              help="Write each run's real log file under this directory.")
@click.option("--json", "as_json", is_flag=True, help="Print results as JSON lines.")
def groupcommit(committers: str, commits: int, message_size: int, device: str, think_us: float, seed: int,
                out: Path | None, as_json: bool) -> None:
    """Group commit on the real log writer: more concurrent committers, fewer writes per commit.

    Each application repeatedly puts one persistent message and commits (a forced write);
    the table shows how many commits each physical write carries as concurrency rises.
    """
    from mqlog.core.disk.storage import DirectoryStorage
    from mqlog.groupcommit import run_group_commit

    counts = _parse_list(committers, "--committers")
    rows = []
    for n in counts:
        storage = DirectoryStorage(out / f"committers-{n}") if out else None
        try:
            result = run_group_commit(n, commits, message_size, device=device, storage=storage,
                                      think_us=think_us, seed=seed)
        finally:
            if storage is not None:
                storage.close()
        rows.append(result)
        if as_json:
            click.echo(json.dumps(result.as_dict(), sort_keys=True))
    if as_json:
        return
    click.echo(f"Group commit on device '{rows[0].device}', {message_size}-byte persistent messages, "
               f"{commits} commits per application (virtual time)\n")
    header = (f"{'committers':>10} {'commits':>8} {'phys writes':>11} {'commits/write':>13} "
              f"{'KiB/write':>9} {'commit µs':>10} {'commits/s':>10} {'read back':>9}")
    click.echo(header)
    click.echo("-" * len(header))
    for r in rows:
        click.echo(f"{r.committers:>10} {r.commits:>8} {r.physical_writes:>11} {r.commits_per_write:>13.2f} "
                   f"{r.useful_bytes_per_write / 1024:>9.1f} {r.commit_latency_us:>10.1f} "
                   f"{r.commits_per_second:>10.0f} {r.records_read_back:>9}")
    if out:
        click.echo(f"\nLog files written under {out}/committers-N/reference.log")


@cli.command("devices")
@click.option("--file", "path", type=click.Path(dir_okay=False), help="A TOML file of your own profiles.")
def devices(path: str | None) -> None:
    """List device profiles: latency per I/O and bandwidth."""
    from mqlog.core.disk.devices import load_profiles

    profiles = load_profiles(path)
    click.echo(f"{'name':<8} {'write µs':>9} {'read µs':>8} {'file op µs':>10} {'write MB/s':>10} "
               f"{'read MB/s':>9}  description")
    for p in profiles.values():
        click.echo(f"{p.name:<8} {p.write_latency_us:>9.0f} {p.read_latency_us:>8.0f} {p.file_op_us:>10.0f} "
                   f"{p.write_bandwidth_mb_s:>10.0f} {p.read_bandwidth_mb_s:>9.0f}  {p.description}")


@cli.command("scan")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--records", "show", is_flag=True, help="List every record, not just the summary.")
def scan_cmd(path: Path, show: bool) -> None:
    """Read a reference-format log file back and report its records and how it ends."""
    from collections import Counter

    from mqlog.core.log.reader import LogReader
    from mqlog.core.log.space import ReferenceLogSpace
    from mqlog.core.disk.storage import DirectoryStorage

    from mqlog.core.errors import LogFormatError
    from mqlog.core.format.pages import check_page

    # A log file of a run (DIR/qm/FILE, run.json or a lock there): read under the run's lock,
    # shared, like every other reader of a run directory.
    run_dir = path.resolve().parent.parent
    of_a_run = path.resolve().parent.name == QM_DIR and any((run_dir / n).is_file() for n in (RUN_FILE, LOCK_FILE))
    with (read_locked(run_dir) if of_a_run else contextlib.nullcontext()):
        storage = DirectoryStorage(path.parent)
        try:
            _, problem = check_page(storage.read(path.name, 0, 4096), 0)
            if problem is not None:
                raise LogFormatError(f"not an mqlog log: its first page is {problem}", source=str(path), offset=0)
            reader = LogReader(ReferenceLogSpace(storage, file=path.name), 0)
            kinds: Counter[str] = Counter()
            for address, record in reader:
                kinds[type(record).__name__] += 1
                if show:
                    click.echo(f"{address:016X} {type(record).__name__:<16} uow={record.uow:x}")
        finally:
            storage.close()
    end = reader.end
    click.echo(f"{sum(kinds.values())} records in {reader.pages_read} pages read: "
               + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())))
    click.echo(f"log ends at {end.address:016X}: {end.reason}"
               + (f" ({end.problem} at {end.source} offset {end.offset})" if end.reason != "end" else ""))


# --- running workloads -------------------------------------------------------------------



def _resolve_spec(workload: str, sets: dict):
    """The workload spec from a built-in name or a TOML file, with --set overrides applied."""
    from mqlog.core.workload.spec import BUILTINS, build_spec, load_spec_file

    log_from_file: dict = {}
    seed = None
    if workload not in BUILTINS and (workload.endswith(".toml") or Path(workload).is_file()):
        spec, log_from_file = load_spec_file(workload, BUILTINS)
        seed = spec.seed
        overrides = {**dict(spec.params), **sets.get("workload", {})}
        name, origin = spec.workload, workload
    else:
        name, overrides, origin = workload, sets.get("workload", {}), "--workload"
    definition = BUILTINS.get(name)
    if definition is None:
        raise click.BadParameter(f"unknown workload {name!r}; built-ins: {', '.join(BUILTINS)}",
                                 param_hint="--workload")
    return build_spec(definition, overrides, origin=origin), {**log_from_file, **sets.get("log", {})}, seed


class _Progress:
    """A progress bar on stderr that appears only for runs longer than two seconds, and
    never when stderr is not a terminal (so --json output and logs stay clean)."""

    DELAY_S = 2.0

    def __init__(self, label: str):
        from tqdm import tqdm

        self.bar = tqdm(desc=label, unit=" virtual s", bar_format="{desc}: {n:.2f}{unit} [{elapsed}]{postfix}",
                        delay=self.DELAY_S, file=sys.stderr, disable=None, leave=True)

    def update(self, virtual_s: float, records: int) -> None:
        # update() (not refresh()) so that tqdm's own delay decides when the bar first shows,
        # and close() then knows whether to end its line.
        self.bar.set_postfix_str(f"{records} log records", refresh=False)
        self.bar.update(virtual_s - self.bar.n)

    def close(self) -> None:
        self.bar.close()


def _restart_bar():
    """A counter on stderr of the records restart has replayed, shown only for restarts
    longer than two seconds and never when stderr is not a terminal."""
    from tqdm import tqdm

    return tqdm(desc="restart: replay", unit=" records", delay=_Progress.DELAY_S, file=sys.stderr, disable=None,
                leave=False)


@cli.command("run")
@click.option("--platform", "platform_name", required=True, help="distributed, zos, or reference.")
@click.option("--workload", required=True, help="A built-in workload name (see 'mqlog workloads') or FILE.toml.")
@click.option("--set", "sets", multiple=True, metavar="SECTION.KEY=VALUE",
              help="workload.KEY=VALUE or log.PARAM=VALUE (the platform's own parameter names); repeatable.")
@click.option("--device", default="ssd", show_default=True, help="Device profile name or FILE.toml[:NAME].")
@click.option("--seed", type=click.IntRange(0, 2**64 - 1), default=None,
              help="Seed for payloads and timing, 0 to 2^64-1 (default: the spec's, else 0).")
@click.option("--out", type=click.Path(file_okay=False), default=None,
              help="Directory for the real log files, queue files, messages, metrics and journal.")
@click.option("--crash-after-writes", type=click.IntRange(min=0), default=None,
              help="Pull the plug after this many physical writes.")
@click.option("--crash-at", type=click.FloatRange(min=0), default=None, help="Pull the plug at this virtual time (s).")
@click.option("--json", "as_json", is_flag=True, help="Print the metrics as one JSON object.")
def run_cmd(platform_name, workload, sets, device, seed, out, crash_after_writes, crash_at, as_json):
    """Run a workload on a platform in virtual time and report the log's figures."""
    from mqlog.core.disk.devices import get_profile
    from mqlog.core.workload.run import RunConfig, run_workload

    from mqlog.core.workload.spec import parse_set
    from mqlog.core.disk.storage import MemoryStorage
    from mqlog.platforms import choose

    if crash_after_writes is not None and crash_at is not None:
        raise click.UsageError("give --crash-after-writes or --crash-at, not both")
    if crash_at is not None and not math.isfinite(crash_at):
        raise click.BadParameter(f"{crash_at} is not a finite number of seconds", param_hint="--crash-at")
    parsed = parse_set(list(sets))
    spec, log_overrides, spec_seed = _resolve_spec(workload, parsed)
    choice = choose(platform_name)
    log_config = choice.configure(log_overrides)
    get_profile(device)  # a bad profile is reported before anything runs
    seed = seed if seed is not None else (spec_seed if spec_seed is not None else 0)
    if out is not None:
        if not out.strip():
            raise click.BadParameter("needs a directory name", param_hint="--out")
        out = Path(out)
    with (locked(out, "--out") if out is not None else contextlib.nullcontext()):
        storage = _out_storage(out) if out is not None else MemoryStorage()
        cfg = RunConfig(platform_name, choice.maker(log_config), log_config, spec, seed, device,
                        crash_after_writes, crash_at)
        progress = _Progress(f"{spec.workload} on {platform_name}")
        try:
            result = run_workload(cfg, storage, progress=progress.update)
        finally:
            progress.close()
            storage.close()
        if out is not None:
            save_run(out, platform=platform_name, log=log_config, device=_device_for_restart(device),
                     workload=spec.workload, params=dict(spec.params), seed=seed, result=result)
    metrics = result.metrics
    if as_json:
        click.echo(json.dumps(metrics, sort_keys=True))
        return
    _print_metrics(metrics, out)


def _out_storage(out: Path):
    """Real files under ``out/qm``; a directory a run already used, or one that cannot be
    made, is a one-line error before anything is written."""
    from mqlog.core.errors import MqlogError
    from mqlog.core.disk.storage import DirectoryStorage

    if (out / RUN_FILE).exists() or (out / QM_DIR).exists():
        raise MqlogError(f"{out} already holds a run (run.json or qm/); choose another --out or remove it")
    try:
        out.mkdir(parents=True, exist_ok=True)
        return DirectoryStorage(out / QM_DIR)
    except OSError as exc:
        raise MqlogError(f"--out {out}: cannot make the directory: {exc.strerror or exc}") from None
    except MqlogError as exc:
        raise MqlogError(f"--out {out}: {exc}") from None


def _device_for_restart(device: str) -> str:
    """How run.json names the device: a built-in's name, or a profile file's absolute path
    (so that restart finds it from any working directory)."""
    path, name = device.rsplit(":", 1) if ".toml:" in device else (device, "")
    if Path(path).is_file():
        return str(Path(path).resolve()) + (f":{name}" if name else "")
    return device


def _print_metrics(m: dict, out) -> None:
    state = "crashed" if m["crashed"] else "ended with a controlled shutdown"
    if m.get("abnormal_end"):
        state = f"ended abnormally ({m['abnormal_end']})"
    click.echo(f"{m['workload']} on {m['platform']} ({m['device']}), seed {m['seed']}: "
               f"{m['virtual_seconds']:.6f} virtual seconds, {state}")
    rows = [
        ("messages put / got", f"{m['messages_put']} / {m['messages_got']}"),
        ("commits / backouts", f"{m['commits']} / {m['backouts']}"),
        ("forces", m["forces"]),
        ("logical bytes / writes", f"{m['logical_bytes']} / {m['logical_writes']}"),
        ("physical bytes / writes", f"{m['physical_bytes']} / {m['physical_writes']}"),
        ("write size short / long / max", f"{m['write_size_short']:.0f} / {m['write_size_long']:.0f} / "
                                          f"{m['write_size_max']}"),
        ("write time short / long / max (µs)", f"{m['write_time_short_us']:.1f} / {m['write_time_long_us']:.1f} / "
                                               f"{m['write_time_max_us']:.1f}"),
        ("checkpoints", m["checkpoints"]),
        ("log in use, most (bytes)", m["active_log_used_bytes_max"]),
        ("units of work rolled back / forward", f"{m['uows_rolled_back']} / {m['uows_rolled_forward']}"),
        ("compression in / out (bytes)", f"{m['compression_in_bytes']} / {m['compression_out_bytes']}"),
        ("workload fingerprint", m["fingerprint"][:16]),
    ]
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        click.echo(f"  {key:<{width}}  {value}")
    if out is not None:
        click.echo(f"Files in {out}: {QM_DIR}/ (log and queue files), {METRICS_FILE}, {JOURNAL_FILE}, "
                   f"{m['error_log']}")


def _restart_mode_option(scope: str, default: str | None = "9.1.1"):
    """``--restart-mode`` (SPEC §3.6: let a user choose MQ 9.1.1's restart or the one before)."""
    return click.option(
        "--restart-mode", type=click.Choice(["9.1.1", "legacy"]), default=default, show_default=default is not None,
        help="How the queue manager restarts: as MQ 9.1.1 and later (queues loaded in parallel, replay "
             "reading 16 pages a time) or as before it (queues loaded one by one, a page and a file-system "
             f"call per replay read).{scope}")


@cli.command("restart")
@click.argument("directory", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--verify", is_flag=True, help="Check the recovered queues against the application journal.")
@_restart_mode_option("")
@click.option("--json", "as_json", is_flag=True, help="Print the recovery report as JSON.")
def restart_cmd(directory: Path, verify: bool, restart_mode: str, as_json: bool):
    """Restart the queue manager a run left in DIRECTORY and report the recovery."""
    from mqlog.core.errors import MqlogError
    from mqlog.core.workload.journal import Journal
    from mqlog.core.qm.manager import QmConfig
    from mqlog.core.workload.run import restart_run
    from mqlog.core.disk.storage import DirectoryStorage

    _load_run(directory)  # not a run directory: say so before taking its lock
    with locked(directory):  # from reading run.json to the last message logged
        run = _load_run(directory)
        choice, log_config = run_platform(directory, run)
        journal = None
        if verify:
            path = directory / JOURNAL_FILE
            if not path.is_file():
                raise MqlogError(f"{directory}: no {JOURNAL_FILE} to verify against")
            journal = Journal.from_json(_read_json(path), source=str(path))
        if not (directory / QM_DIR).is_dir():
            raise MqlogError(f"{directory}: no {QM_DIR}/ directory with the queue manager's files")
        storage = DirectoryStorage(directory / QM_DIR)
        bar = _restart_bar()
        try:
            report, verdict, qm = restart_run(choice.maker(log_config), storage, device=run["device"],
                                              journal=journal, qm_config=QmConfig(restart_mode=restart_mode),
                                              progress=lambda n: bar.update(n - bar.n))
        finally:
            bar.close()
            storage.close()
        with open(directory / qm.platform.error_log, "a", encoding="utf-8") as log:
            for line in report.messages:
                log.write(line + "\n")
    result = report.as_dict()
    if verdict is not None:
        result.update(verdict.as_dict())
    if as_json:
        click.echo(json.dumps(result, sort_keys=True))
    else:
        for line in report.messages:
            click.echo(line)
        click.echo(f"records replayed {report.records_replayed}, bytes read {report.bytes_read}, "
                   f"units of work committed {report.uows_committed} / backed out {report.uows_backed_out} / "
                   f"in doubt {report.uows_indoubt}, messages reconciled {report.messages_reconciled}, "
                   f"queues loaded {report.queues_loaded}"
                   + (f", re-created from media images {report.queues_recreated}" if report.queues_recreated else "")
                   + (f", DAMAGED {' '.join(report.queues_damaged)}" if report.queues_damaged else ""))
        click.echo("phases (virtual s): " + ", ".join(f"{k} {v:.6f}" for k, v in report.phases.items()))
        if verdict is not None:
            click.echo("verify: " + ", ".join(f"{k} {v}" for k, v in verdict.as_dict().items())
                       + ("  OK" if verdict.ok else "  FAILED"))
    if verdict is not None and not verdict.ok:
        raise click.exceptions.Exit(1)


def _distributed_space(directory: Path):
    """The distributed log space a run left in ``directory``, its config, and the log's head
    (the caller holds the directory's lock, shared: :func:`_reading`)."""
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


@contextlib.contextmanager
def _reading(directory: Path):
    """Hold ``directory``'s lock shared while a read-only command reads it (refused, naming the
    process, while a command writes it); a directory that is not a run's is told so first."""
    _load_run(directory)
    with read_locked(directory):
        yield


@cli.command("qmstatus")
@click.argument("directory", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True)
def qmstatus_cmd(directory: Path, as_json: bool):
    """DISPLAY QMSTATUS's log fields for the distributed queue manager a run left in DIRECTORY."""
    with _reading(directory):
        run, values, space, head, storage = _distributed_space(directory)
        storage.close()
    status = space.status(head)
    if as_json:
        click.echo(json.dumps(status, sort_keys=True))
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
            return administer(choice.maker(values), storage, action, device=_device_for_restart(run["device"]),
                              on_exit=keep_messages)
        finally:
            storage.close()


def _admin_report(qm, as_json: bool, summary: dict) -> None:
    status = qm.platform.space.status(qm.writer.next_address)
    summary = dict(summary, CURRLOG=status["CURRLOG"], RECLOG=status["RECLOG"], MEDIALOG=status["MEDIALOG"],
                   ARCHLOG=status["ARCHLOG"], messages=list(qm.messages))
    if as_json:
        click.echo(json.dumps(summary, sort_keys=True))
        return
    for line in qm.messages:
        click.echo(line)
    click.echo(", ".join(f"{k} {v}" for k, v in summary.items() if k != "messages"))


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

    with _reading(directory):
        run, values, space, head, storage = _distributed_space(directory)
        storage.close()
        m = _read_json(directory / METRICS_FILE) if (directory / METRICS_FILE).is_file() else {}
    order = space.ring if not space.linear else space.active_extents()
    worst = m.get("worst_write_by_file", {})
    recent = sorted((kv for kv in worst.items() if kv[0].endswith(".LOG")), key=lambda kv: kv[0])[-8:]  # last 8 extents
    dump = {
        "logactive": space.primary, "loginactive": space.secondary, "FileCount": len(order),
        "filenum": [extent_name(n) for n in order], "logBufSz": m.get("log_buffer_bytes", 0) // 4096,
        "WriteSizeShort": m.get("write_size_short", 0), "WriteSizeLong": m.get("write_size_long", 0),
        "WriteSizeMax": m.get("write_size_max", 0), "WriteTimeShort": m.get("write_time_short_us", 0),
        "WriteTimeLong": m.get("write_time_long_us", 0), "WriteTimeShortMax": m.get("write_time_short_max_us", 0),
        "WriteTimeLongMax": m.get("write_time_long_max_us", 0), "WriteTimeMax": m.get("write_time_max_us", 0),
        "WriteTimeMaxAt": m.get("write_time_max_at_us", 0),
        "WorstWriteByFile": {name: entry.get("us", 0) for name, entry in recent},
        "staLogicalBytes": m.get("logical_bytes", 0), "staPhysicalBytes": m.get("physical_bytes", 0),
        "staLogicalWrites": m.get("logical_writes", 0), "staPhysicalWrites": m.get("physical_writes", 0),
    }
    if as_json:
        click.echo(json.dumps(dump, sort_keys=True))
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


@cli.command("print")
@click.argument("directory", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--rba-start", default=None, help="First RBA of the range, hex (CSQ1LOGP RBASTART).")
@click.option("--rba-end", default=None, help="Last RBA of the range, hex (RBAEND).")
@click.option("--urid", default=None, help="Only this unit of recovery (hex).")
@click.option("--queue", default=None, help="Only records naming this queue (the model's PAGESET selection).")
@click.option("--summary", type=click.Choice(["no", "yes", "only"], case_sensitive=False), default="no",
              show_default=True, help="Add the summary of units of recovery, or print only it.")
@click.option("--json", "as_json", is_flag=True)
def print_cmd(directory: Path, rba_start, rba_end, urid, queue, summary, as_json: bool):
    """Log print (like CSQ1LOGP) of the z/OS queue manager a run left in DIRECTORY."""
    from mqlog.zosrun import print_run

    result = print_run(directory, rba_start=rba_start, rba_end=rba_end, urid=urid, queue=queue,
                       summary=summary, as_json=as_json)
    click.echo(json.dumps(result, sort_keys=True) if as_json else result, nl=as_json)


@cli.command("bsds")
@click.argument("directory", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True)
def bsds_cmd(directory: Path, as_json: bool):
    """BSDS map (like CSQJU004) of the z/OS queue manager a run left in DIRECTORY."""
    from mqlog.zosrun import bsds_run

    result = bsds_run(directory, as_json=as_json)
    click.echo(json.dumps(result, sort_keys=True) if as_json else result, nl=as_json)


@cli.command("stats")
@click.argument("directory", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True)
def stats_cmd(directory: Path, as_json: bool):
    """Log statistics (like SMF 115 QJST) of the z/OS run in DIRECTORY, from its metrics.json."""
    from mqlog.zosrun import stats_run

    result = stats_run(directory, as_json=as_json)
    click.echo(json.dumps(result, sort_keys=True) if as_json else result, nl=as_json)


@cli.command("convert-rba")
@click.argument("directory", type=click.Path(exists=True, file_okay=False, path_type=Path))
def convert_rba_cmd(directory: Path):
    """Convert the BSDS of the z/OS queue manager a run left in DIRECTORY to 8-byte RBAs
    (like CSQJUCNV). One way: there is no going back to 6-byte RBAs."""
    from mqlog.zosrun import open_zos

    _load_run(directory)  # not a run directory: say so before taking its lock
    with locked(directory):
        space, _, _, _ = open_zos(directory)
        try:
            if space.load_control() is None:
                raise MqlogError(f"{directory}: the queue manager was never created (no checkpoint on disk)")
            converted = space.convert_to_rba8()
        finally:
            space.storage.close()
        run = _load_run(directory)
        run["log"]["RBA8"] = "YES"
        write_json(directory / RUN_FILE, run)
    click.echo("CSQJ445I BSDS converted to 8-byte RBA and LRSN format" if converted
               else "the BSDS already uses 8-byte RBAs: nothing to do")


@cli.command("torture")
@click.option("--platform", "platform_name", default=None, help="distributed, zos, or reference (or use --matrix).")
@click.option("--matrix", default=None,
              help="Instead of --platform: 'default' (the compare matrix: 3 distributed, 3 z/OS "
                   "configurations) or a TOML file of [[config]] tables; one campaign each.")
@click.option("--workload", required=True, help="A built-in workload name or FILE.toml. It runs once, recorded; "
                                                "each scenario restarts on a disk materialised from the recording.")
@click.option("--set", "sets", multiple=True, metavar="SECTION.KEY=VALUE",
              help="workload.KEY=VALUE or log.PARAM=VALUE (log.* only with --platform); repeatable.")
@click.option("--faults", default=",".join(FAULT_CLASSES), show_default=True,
              help="Fault classes to inject, comma-separated.")
@click.option("--budget", type=click.IntRange(1, 1_000_000), default=100, show_default=True,
              help="Most scenarios per fault class (a seeded sample when there are more).")
@click.option("--device", default="ssd", show_default=True, help="Device profile name or FILE.toml[:NAME].")
@click.option("--seed", type=click.IntRange(0, 2**64 - 1), default=None,
              help="Seed of the workload and of the campaign's choices (default: the spec's, else 0).")
@_restart_mode_option(" Every restart of the campaign; a matrix configuration's restart_mode wins.")
@click.option("--master", default=None, help="Run the scenarios as Spark tasks on this master (local[*], "
                                            "spark://HOST:PORT); the figures are those of a run without it.")
@click.option("--json", "as_json", is_flag=True, help="Print the campaign's figures as JSON.")
def torture_cmd(platform_name, matrix, workload, sets, faults, budget, device, seed, restart_mode, master, as_json):
    """Inject crashes, torn writes, bit flips, single-copy damage and crashes during restart,
    one scenario at a time; restart after each and check the queues against what
    applications were told. Exits 1 if any loss went undetected under a fault the
    configuration claims to survive or detect (or the tool itself failed)."""
    from tqdm import tqdm

    from mqlog.core.disk.devices import get_profile
    from mqlog.core.workload.spec import parse_set
    from mqlog.platforms import choose
    from mqlog.torture import Campaign

    chosen = tuple(dict.fromkeys(f.strip() for f in faults.split(",") if f.strip()))  # in order, once each
    unknown = [f for f in chosen if f not in FAULT_CLASSES]
    if unknown or not chosen:
        raise click.BadParameter(f"{unknown[0] if unknown else faults!r} is not a fault class; choose from "
                                 + ", ".join(FAULT_CLASSES), param_hint="--faults")
    if (platform_name is None) == (matrix is None):
        raise click.UsageError("give --platform or --matrix (one of them)")
    spec, log_overrides, spec_seed = _resolve_spec(workload, parse_set(list(sets)))
    if matrix is not None:
        from mqlog.spark.compare import check_matrix, load_matrix

        if log_overrides:
            raise click.UsageError("with --matrix, log parameters belong in the matrix, not in --set log.* "
                                   "or the workload file's [log] table")
        cells = [(c["name"], c["platform"], c["log"], c["values"], c.get("restart_mode") or restart_mode)
                 for c in check_matrix(load_matrix(matrix))]
    else:
        cells = [(platform_name, platform_name, log_overrides, choose(platform_name).configure(log_overrides),
                  restart_mode)]
    get_profile(device)
    seed = seed if seed is not None else (spec_seed if spec_seed is not None else 0)
    campaigns = [(name, log, Campaign(platform, values, choose(platform).maker(values), spec, seed=seed,
                                      device=device, budget=budget, faults=chosen, restart_mode=mode))
                 for name, platform, log, values, mode in cells]
    bar = tqdm(total=sum(c.planned() for _, _, c in campaigns), desc="torture", unit=" scenarios",
               file=sys.stderr, disable=None, delay=1.0, leave=False)

    def planned(total):  # the bar's total was an upper bound until the scenarios were chosen
        bar.total = total
        bar.refresh()

    try:
        if master is not None:
            from mqlog.spark.session import spark_session
            from mqlog.spark.torture import run_campaigns

            run_campaigns(spark_session(master, "mqlog-torture"), [c for _, _, c in campaigns],
                          on_planned=planned, progress=bar.update)
        else:
            plans = [c.plan() for _, _, c in campaigns]
            planned(sum(len(p) for p in plans))
            for (_, _, campaign), scenarios in zip(campaigns, plans):
                campaign.finish(scenarios, campaign.execute(scenarios, progress=bar.update))
    finally:
        bar.close()
    if as_json:
        if matrix is None:
            click.echo(json.dumps(campaigns[0][2].as_dict(), sort_keys=True))
        else:
            click.echo(json.dumps({"matrix": matrix, "configs": [dict(c.as_dict(), name=name)
                                                                 for name, _, c in campaigns]}, sort_keys=True))
    else:
        for n, (name, log, campaign) in enumerate(campaigns):
            settings = " ".join(f"{k}={v}" for k, v in sorted(log.items()))
            label = name if matrix is not None else campaign.platform
            click.echo(("\n" if n else "") + f"{label} {settings}".rstrip()
                       + f", {spec.workload} (seed {seed}): {campaign.physical_writes} physical writes")
            click.echo(campaign.table())
    if any(c.failed for _, _, c in campaigns):
        raise click.exceptions.Exit(1)


@cli.command("compare")
@click.option("--workload", required=True, help="A built-in workload name (see 'mqlog workloads') or FILE.toml.")
@click.option("--set", "sets", multiple=True, metavar="workload.KEY=VALUE", help="A workload parameter; repeatable.")
@click.option("--matrix", default="default", show_default=True,
              help="'default' (3 distributed, 3 z/OS configurations) or a TOML file of [[config]] tables.")
@click.option("--device", default="ssd", show_default=True, help="Device profile name or FILE.toml[:NAME].")
@click.option("--seed", type=click.IntRange(0, 2**64 - 1), default=None, help="Seed (default: the spec's, else 0).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=Path("out/compare"),
              show_default=True, help="Directory for results.parquet and report.html.")
@click.option("--master", default=None, help="Spark master URL (default local[*]).")
@click.option("--crash", "crash_at", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Crash every configuration at this virtual time (s), restart it and compare the restarts.")
@_restart_mode_option(" With --crash (9.1.1 unless given); a matrix configuration's restart_mode wins.",
                      default=None)
@click.option("--logs", "keep_logs", is_flag=True,
              help="Also leave each configuration's files in OUT/runs/NAME (as 'mqlog run --out' does: "
                   "real logs, up to some hundreds of MB each) and report what each log holds, read back "
                   "with the mqlog data source.")
@click.option("--json", "as_json", is_flag=True, help="Print the result rows as JSON lines.")
def compare_cmd(workload, sets, matrix, device, seed, out, master, crash_at, restart_mode, keep_logs, as_json):
    """Run one workload against a matrix of platform configurations, one Spark task each,
    and compare them side by side (results.parquet, report.html)."""
    from mqlog.core.workload.spec import parse_set
    from mqlog.spark.compare import check_matrix, compare, format_lines, format_table, load_matrix, results_frame
    from mqlog.spark.contents import CONTENTS_FILE, RUNS_DIR, log_contents
    from mqlog.spark.report import contents_table, render
    from mqlog.spark.session import spark_session, task_errors

    parsed = parse_set(list(sets))
    if parsed.get("log"):
        raise click.UsageError("compare takes workload.KEY=VALUE settings; log parameters belong in --matrix")
    spec, _, spec_seed = _resolve_spec(workload, parsed)
    seed = seed if seed is not None else (spec_seed or 0)
    cells = check_matrix(load_matrix(matrix))
    if crash_at is None and (restart_mode is not None or any("restart_mode" in c for c in cells)):
        raise click.UsageError("a restart mode (--restart-mode, or restart_mode in the matrix) needs --crash: "
                               "without a crash nothing restarts")
    device = _device_for_restart(device)
    spark = spark_session(master, "mqlog compare", arrow=keep_logs)
    click.echo(f"comparing {len(cells)} configurations of {spec.workload} (seed {seed}) on Spark "
               f"{spark.sparkContext.master} ...", err=True)
    def progress(row, done, total):
        click.echo(f"  [{done}/{total}] {row['config_name']}: {row['messages_put']} messages put, "
                   f"{row['physical_writes']} physical writes", err=True)

    with locked(out, "--out"):  # one comparison at a time writes OUT
        out.mkdir(parents=True, exist_ok=True)
        runs_dir = out / RUNS_DIR
        if runs_dir.exists():  # a previous comparison's runs: this one's replace them
            foreign = [p.name for p in sorted(runs_dir.iterdir()) if not (p / RUN_FILE).is_file()]
            if foreign:
                raise MqlogError(f"{runs_dir}: holds {foreign[0]!r}, which is not a run directory; "
                                 "choose another --out or move it")
            with contextlib.ExitStack() as runs:
                for run in sorted(runs_dir.iterdir()):
                    # refuses if a command (mqlog restart, print, ...) is using it; held until
                    # the run is deleted, so none can start on it in between
                    runs.enter_context(locked(run))
                shutil.rmtree(runs_dir)
        (out / CONTENTS_FILE).unlink(missing_ok=True)
        rows = compare(spark, workload=spec.workload, params=dict(spec.params), seed=seed, device=device, cells=cells,
                       crash_at_s=crash_at, progress=progress, runs_dir=runs_dir if keep_logs else None,
                       restart_mode=restart_mode or "9.1.1")
        results_frame(spark, rows).coalesce(1).write.mode("overwrite").parquet(str(out / "results.parquet"))
        contents = None
        if keep_logs:
            click.echo(f"reading the {len(rows)} logs back with the mqlog data source ...", err=True)
            with task_errors("reading the logs back"):
                contents = log_contents(spark, {r["config_name"]: runs_dir / r["config_name"] for r in rows})
            write_json(out / CONTENTS_FILE, contents)
        title = f"mqlog compare: {spec.workload}, seed {seed}, device {device}"
        subtitle = ", ".join(f"{k}={v}" for k, v in sorted(dict(spec.params).items()))
        (out / "report.html").write_text(render(rows, title=title, subtitle=subtitle, contents=contents),
                                         encoding="utf-8")
    if as_json:
        for row in rows:
            click.echo(json.dumps(row, sort_keys=True))
        return
    click.echo(format_table(rows))
    if contents is not None:
        names = [r["config_name"] for r in rows]
        click.echo("\nwhat each log holds at the end (read back with the mqlog data source):")
        click.echo(format_lines([("configuration", names)] + contents_table(names, contents)))
    click.echo(f"fingerprint {rows[0]['fingerprint'][:16]} (identical in every configuration)")
    click.echo(f"wrote {out / 'results.parquet'} and {out / 'report.html'}"
               + (f"; each configuration's run directory in {runs_dir}" if keep_logs else ""))


@cli.command("sweep")
@click.argument("sweep")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Directory for results/ (Parquet, by platform) and report.html [default: out/sweep-NAME].")
@click.option("--master", default=None, help="Spark master URL (default local[*]).")
@click.option("--list", "list_only", is_flag=True, help="List the cells without running them.")
def sweep_cmd(sweep, out, master, list_only):
    """Run SWEEP (a built-in name, or a TOML file) as Spark tasks; cells already in OUT are
    skipped. Built-ins: log-size-vs-rollbacks, complog-vs-payload, logload-vs-shunting,
    dual-vs-single, write-integrity-vs-concurrency."""
    from mqlog.spark.report import render_sweep
    from mqlog.spark.sweep import cells, load_sweep, read_results, run_sweep
    from mqlog.spark.session import spark_session

    name, doc = load_sweep(sweep)
    tasks = cells(doc, origin=sweep)
    if list_only:
        for t in tasks:
            click.echo(f"{t['key']}  {t['name']:<20} seed {t['seed']} {t['device']:<6} "
                       + " ".join(f"{k}={v}" for k, v in sorted(t["sweep"].items())))
        return
    out = out if out is not None else Path("out") / f"sweep-{name}"
    spark = spark_session(master, f"mqlog sweep {name}")
    click.echo(f"sweep {name}: {len(tasks)} cells on Spark {spark.sparkContext.master} ...", err=True)

    def progress(row, done, total):
        click.echo(f"  [{done}/{total}] {row['config_name']} "
                   + " ".join(f"{k}={v}" for k, v in sorted(row["sweep"].items())), err=True)

    with locked(out, "--out"):  # one sweep at a time adds to OUT
        ran, skipped = run_sweep(spark, tasks, out, progress=progress)
        rows = read_results(spark, out)
        (out / "report.html").write_text(render_sweep(rows, title=f"mqlog sweep: {name}", plot=doc.get("plot")),
                                         encoding="utf-8")
    click.echo(f"{ran} cells run, {skipped} already done; {len(rows)} rows in {out / 'results'}; "
               f"report {out / 'report.html'}")


@cli.command("report")
@click.argument("directory", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="The HTML file to write [default: DIRECTORY/report.html].")
def report_cmd(directory: Path, output):
    """Write the HTML report of a 'mqlog compare' or 'mqlog sweep' output directory again."""
    from mqlog.spark.contents import CONTENTS_FILE, check_contents
    from mqlog.spark.report import check_result_rows, render, render_sweep
    from mqlog.spark.session import spark_read_errors, spark_session
    from mqlog.spark.sweep import BUILTIN_SWEEPS, load_sweep, read_results

    output = output if output is not None else directory / "report.html"
    if not ((directory / "results.parquet").is_dir() or (directory / "results").is_dir()):
        raise MqlogError(f"{directory}: neither results.parquet (mqlog compare) nor results/ (mqlog sweep) is there")
    # A compare or sweep writing DIRECTORY holds its lock: read it shared, or exclusively when
    # the page goes into it (the default), as any writer of a directory does.
    writes_there = output.resolve().parent == directory.resolve()
    with (locked(directory) if writes_there else read_locked(directory)):
        if (directory / "results.parquet").is_dir():
            spark = spark_session(None, "mqlog report")
            with spark_read_errors(directory / "results.parquet"):
                rows = [r.asDict() for r in spark.read.parquet(str(directory / "results.parquet")).collect()]
            check_result_rows(rows, directory / "results.parquet")
            rows.sort(key=lambda r: r.get("config_name", ""))
            contents_path = directory / CONTENTS_FILE
            contents = _read_json(contents_path) if contents_path.is_file() else None
            if contents is not None:
                check_contents(contents, contents_path)
            page = render(rows, title=f"mqlog compare: {rows[0]['workload']}, seed {rows[0]['seed']}",
                          contents=contents)
        else:  # results/ (a sweep's)
            spark = spark_session(None, "mqlog report")
            with spark_read_errors(directory / "results"):
                rows = read_results(spark, directory)
            check_result_rows(rows, directory / "results", sweep=True)
            name = directory.name.removeprefix("sweep-")
            plot = load_sweep(name)[1].get("plot") if name in BUILTIN_SWEEPS else None
            page = render_sweep(rows, title=f"mqlog sweep: {name}", plot=plot)
        try:
            output.write_text(page, encoding="utf-8")
        except OSError as exc:
            raise MqlogError(f"-o {output}: cannot write the report: {exc.strerror or exc}") from None
    click.echo(f"wrote {output}")


@cli.command("workloads")
def workloads_cmd():
    """List the built-in workloads with their parameters and defaults."""
    from mqlog.core.workload.spec import BUILTINS, describe

    click.echo(describe(BUILTINS))


@cli.command("config")
@click.option("--platform", "platform_name", required=True, help="distributed, zos, or reference.")
@click.option("--set", "sets", multiple=True, metavar="log.PARAM=VALUE", help="A log parameter; repeatable.")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def config_cmd(platform_name, sets, as_json):
    """Show a platform's effective log configuration, validated."""
    from mqlog.core.workload.spec import parse_set
    from mqlog.platforms import choose

    parsed = parse_set(list(sets))
    if parsed.get("workload"):
        raise click.UsageError("config takes log.PARAM=VALUE settings only")
    choice = choose(platform_name)
    values = choice.configure(parsed.get("log", {}))
    if choice.describer is not None:
        rows, derived = choice.describer(values)
        if as_json:
            click.echo(json.dumps({"platform": platform_name, "log": values,
                                   "derived": {k: v["bytes"] for k, v in derived.items()}}, sort_keys=True))
            return
        click.echo(f"platform {platform_name}: {choice.description}")
        for r in rows:
            mark = "" if r.value == r.default else "   (set)"
            click.echo(f"  {r.name:<22} {str(r.value):>14}   {r.allowed:<28} {r.meaning}{mark}")
        click.echo("derived:")
        for item in derived.values():
            click.echo(f"  {item['text']}")
        return
    if as_json:
        click.echo(json.dumps({"platform": platform_name, "log": values}, sort_keys=True))
        return
    click.echo(f"platform {platform_name}: {choice.description}")
    for p in choice.params:
        mark = "" if values[p.name] == p.default else "   (set)"
        click.echo(f"  {p.name:<24} {values[p.name]:>12}   {p.low}..{p.high}  {p.doc}{mark}")


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the CLI, turning mqlog's own errors into one line on stderr."""
    try:
        # Without standalone mode, click returns an Exit's code instead of raising it.
        code = cli.main(args=argv, prog_name="mqlog", standalone_mode=False)
        if isinstance(code, int):
            return code
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.ClickException as exc:
        # One line, like mqlog's own errors; usage errors point at --help.
        hint = ""
        if isinstance(exc, click.UsageError) and exc.ctx is not None:
            hint = f" (see '{exc.ctx.command_path} --help')"
        click.echo(f"mqlog: error: {exc.format_message()}{hint}", err=True)
        return exc.exit_code
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        return 1
    except MqlogError as exc:
        click.echo(f"mqlog: error: {exc}", err=True)
        return 2
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
