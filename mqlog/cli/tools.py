"""The commands over the log writer and its files without a queue manager: ``groupcommit``
(the group-commit study on the real writer), ``devices`` and ``hosts`` (the device and host
profiles; ``devices --from-mqldt`` fits one to an mqldt measurement), ``mqldt`` (mqldt's test
on a device profile in virtual time) and ``scan`` (read one log file back – a reference log,
a distributed extent, a z/OS data set – and say how it ends; any other file is named for what
it is, :mod:`mqlog.scanfile`).
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import click

from mqlog.cli.group import cli, emit_json, fitted, json_option, jsonl_option, parse_list, terminal_width
from mqlog.rundir import LOCK_FILE, QM_DIR, RUN_FILE, read_locked


@cli.command("groupcommit")
@click.option("--committers", default="1,2,5,10,20,50", show_default=True,
              help="Comma-separated numbers of concurrent committing applications.")
@click.option("--commits", default=50, show_default=True, help="Commits per application.")
@click.option("--message-size", default=2048, show_default=True, help="Persistent message size in bytes.")
@click.option("--device", default="ssd", show_default=True,
              help="Device profile: ssd, san, nfs1, nfs2, nfs3, ram, or FILE.toml[:NAME].")
@click.option("--think-us", default=100.0, show_default=True,
              help="Mean virtual time each application spends between commits (exponential).")
@click.option("--seed", type=click.IntRange(0, 2**64 - 1), default=0, show_default=True,
              help="Seed for payloads and think times, 0 to 2^64-1.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              help="Write each run's real log file under this directory.")
@json_option("the results, one per number of committers,")
@jsonl_option("each number of committers' result as it finishes")
def groupcommit(committers: str, commits: int, message_size: int, device: str, think_us: float, seed: int,
                out: Path | None, as_json: bool, as_jsonl: bool) -> None:
    """Group commit on the real log writer: more concurrent committers, fewer writes per commit.

    Each application repeatedly puts one persistent message and commits (a forced write);
    the table shows how many commits each physical write carries as concurrency rises.
    """
    from mqlog.core.disk.storage import DirectoryStorage
    from mqlog.groupcommit import run_group_commit

    counts = parse_list(committers, "--committers")
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
        if as_jsonl:
            emit_json(result.as_dict())  # one document a line
    if as_jsonl:
        return
    if as_json:
        emit_json({"device": rows[0].device, "message_size_bytes": message_size, "commits_per_application": commits,
                   "results": [r.as_dict() for r in rows]})
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
@click.option("--from-mqldt", "mqldt", type=click.Path(dir_okay=False),
              help="Fit a profile to mqldt's output (its --csvFile CSV, or its console report).")
@click.option("--name", help="With --from-mqldt: the fitted profile's name (default: the file's name).")
@click.option("-o", "--output", type=click.Path(dir_okay=False),
              help="With --from-mqldt: write the fitted profile to this TOML file (else it is printed).")
@click.option("--calls", is_flag=True,
              help="Show what each file-system call costs on each profile, and which calls are served by the "
                   "kernel, make a network round trip or reach the device.")
@json_option("the profiles (or the fit)")
def devices(path: str | None, mqldt: str | None, name: str | None, output: str | None, calls: bool,
            as_json: bool) -> None:
    """List device profiles: latency per I/O, bandwidth, the channel transfers share, the round
    trip to a file server and the read-ahead window (--calls: each file-system call's cost);
    or, with --from-mqldt, fit one to an mqldt measurement of your own log volume."""
    from mqlog.core.disk.devices import load_profiles

    if mqldt is not None:
        if path is not None:
            raise click.UsageError("give --file (list a file's profiles) or --from-mqldt (fit one), not both")
        _fit_mqldt(mqldt, name, output, as_json)
        return
    if name is not None or output is not None:
        raise click.UsageError("--name and --output go with --from-mqldt FILE")
    profiles = load_profiles(path)
    if as_json:
        import attrs

        # channel_mb_s stays as the file gave it (null: not given); the effective one beside it
        emit_json({"devices": [dict(attrs.asdict(p), effective_channel_mb_s=p.channel) for p in profiles.values()]})
        return
    if calls:
        _calls_table(profiles.values())
        return
    # The channel is the one concurrent transfers divide; a profile that leaves it out
    # gets its larger bandwidth, marked "*" so the reader knows it was not stated.
    width = terminal_width()
    w = max(8, *(len(p.name) for p in profiles.values()))  # the names' column, as wide as the longest
    header = (f"{'name':<{w}} {'wr µs':>6} {'rd µs':>6} {'RTT µs':>6} {'RA KiB':>6} {'wr MB/s':>7} "
              f"{'rd MB/s':>7} {'ch MB/s':>8} {'queue':>5} {'atomic':>6}")
    # the description is the free text at the end: a row it does not fit on has it on lines of
    # its own under the figures, wrapped (group.fitted, as config and compare do), so that no
    # line is wider than the terminal; the header names the column while a row still has it
    rows = []
    for p in profiles.values():
        channel = f"{p.channel:.0f}" + (" " if p.channel_mb_s is not None else "*")
        rtt = f"{p.round_trip_us:.0f}" if p.fs_calls.by_class()["round-trip"] else "-"
        rows.append((f"{p.name:<{w}} {p.write_latency_us:>6.0f} {p.read_latency_us:>6.0f} {rtt:>6} "
                     f"{p.read_ahead_kb:>6} {p.write_bandwidth_mb_s:>7.0f} {p.read_bandwidth_mb_s:>7.0f} "
                     f"{channel:>8} {p.queue_depth:>5} {p.atomic_write_bytes:>6}  ", p.description))
    inline = width is None or any(len(figures) + len(text) <= width for figures, text in rows)
    click.echo(header + "  description" if inline else header)
    for figures, text in rows:
        for line in fitted(figures, text, width):
            click.echo(line)
    if any(p.channel_mb_s is None for p in profiles.values()):
        click.echo("* channel_mb_s not given: the larger of the two bandwidths")
    click.echo("wr, rd: a write's and a read's latency and bandwidth; ch: the channel")
    click.echo("concurrent transfers share; RTT: a round trip to a file server (-: no call")
    click.echo("makes one); RA: the read-ahead window; atomic: the block (bytes) a crash never")
    click.echo("splits: a torn write lands whole ones")
    click.echo("what each file-system call costs on each profile: mqlog devices --calls")


def _calls_table(profiles) -> None:
    """``devices --calls``: each profile's file-system calls by what they cost."""
    from mqlog.core.disk.fscalls import CALLS

    names = list(CALLS)
    profiles = list(profiles)
    w = max(8, *(len(p.name) for p in profiles))
    click.echo(f"{'name':<{w}} " + " ".join(f"{c:>7}" for c in names))
    for p in profiles:
        click.echo(f"{p.name:<{w}} " + " ".join(f"{p.call_us(c):>7g}" for c in names))
    click.echo("µs a call: 'local' calls the kernel serves (local_call_us), 'round-trip' calls a file server "
               "answers (round_trip_us), 'device' calls made durable (write_latency_us):")
    for p in profiles:
        by = p.fs_calls.by_class()
        click.echo(f"  {p.name}: " + "; ".join(f"{k} {', '.join(v)}" for k, v in by.items() if v))


def _fit_mqldt(source: str, name: str | None, output: str | None, as_json: bool = False) -> None:
    """``devices --from-mqldt``: fit, show each row against the fit, write or print the profile."""
    import re

    from mqlog.core.disk.devicefit import fit_profile, profile_toml
    from mqlog.core.disk.mqldt import read_mqldt
    from mqlog.core.catalogue import fmt_number

    if name is None:
        name = re.sub(r"[^A-Za-z0-9_-]+", "-", Path(source).stem).strip("-") or "mqldt"
    elif not re.fullmatch(r"[A-Za-z0-9_-]+", name):
        raise click.BadParameter(f"{name!r}: a profile name is letters, digits, '-' and '_'", param_hint="--name")
    rows = read_mqldt(source)
    fit = fit_profile(rows, name, source)
    p = fit.profile
    if as_json:
        import attrs

        text = profile_toml(fit, source)
        if output is not None:
            _write_profile(output, text)
        emit_json({"source": source, "profile": attrs.asdict(p), "assumptions": list(fit.assumptions),
                   "rows": [{"line": r.row.line, "qm": r.row.qm, "blocksize_bytes": r.row.blocksize,
                             "measured_latency_us": r.measured_latency_us, "latency_us": r.latency_us,
                             "latency_error_fraction": r.latency_error, "measured_mb_s": r.measured_mb_s,
                             "mb_s": r.mb_s, "mb_s_error_fraction": r.mb_s_error} for r in fit.rows],
                   "worst_error_fraction": fit.worst.worst_error, "profile_toml": text, "wrote": output})
        return
    sizes = sorted({r.blocksize for r in rows if r.qm == 1})
    many = sorted({r.qm for r in rows if r.qm > 1})
    click.echo(f"Device profile '{p.name}' fitted to {len(rows)} result{'s' if len(rows) != 1 else ''} of mqldt output {source} "
               f"({len(sizes)} block size{'s' if len(sizes) != 1 else ''} with 1 queue manager"
               + (f"; runs of {', '.join(map(str, many))} queue managers" if many else "") + ")\n")
    header = (f"{'line':>5} {'qm':>3} {'blocksize':>9}   {'latency µs':>10} {'fitted':>9} {'error':>7}   "
              f"{'MB/s':>9} {'fitted':>9} {'error':>7}")
    click.echo(header)
    click.echo("-" * len(header))
    for r in fit.rows:
        click.echo(f"{r.row.line or '':>5} {r.row.qm:>3} {r.row.blocksize:>9}   {r.measured_latency_us:>10.1f} "
                   f"{r.latency_us:>9.1f} {r.latency_error:>+7.2%}   {r.measured_mb_s:>9.1f} {r.mb_s:>9.1f} "
                   f"{r.mb_s_error:>+7.2%}")
    worst = fit.worst
    click.echo(f"worst error: {worst.worst_error:.2%} (line {worst.row.line}: {worst.row.qm} queue manager"
               f"{'s' if worst.row.qm > 1 else ''}, blocksize {worst.row.blocksize})\n")
    click.echo(f"fitted: write latency {fmt_number(p.write_latency_us)} µs, write bandwidth "
               f"{fmt_number(p.write_bandwidth_mb_s)} MB/s, channel {fmt_number(p.channel)} MB/s"
               f"{'' if p.channel_mb_s is not None else ' (not given: the bandwidth)'}, "
               f"queue depth {p.queue_depth}")
    click.echo("how, and what is assumed (mqldt measures only synchronous writes):")
    for a in fit.assumptions:
        click.echo(f"  - {a}")
    text = profile_toml(fit, source)
    if output is None:
        click.echo("\n" + text, nl=False)
        return
    _write_profile(output, text)
    click.echo(f"\nwrote {output}: use it as --device {output} (e.g. mqlog compare --device {output})")


def _write_profile(output: str, text: str) -> None:
    from mqlog.core.disk.devices import get_profile

    try:
        Path(output).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise click.FileError(output, exc.strerror or str(exc)) from None
    get_profile(output)  # read back through the path every --device FILE.toml takes


@cli.command("mqldt")
@click.option("--device", default="ssd", show_default=True,
              help="Device profile: ssd, san, nfs1, nfs2, nfs3, dasd, ram, or FILE.toml[:NAME].")
@click.option("--bsize", required=True, help="Block sizes of the writes, as mqldt takes them: 4K,16K,64K,...")
@click.option("--numFiles", "--num-files", "num_files", type=int, default=8, show_default=True,
              help="Files each queue manager writes in turn (as mqldt; no file is written).")
@click.option("--fileSize", "--file-size", "file_size", type=int, default=1638400, show_default=True,
              help="Size of each file in bytes (as mqldt; bounds --bsize).")
@click.option("--duration", type=int, default=10, show_default=True, help="Virtual seconds each block size runs.")
@click.option("--qm", type=int, default=1, show_default=True,
              help="Simulated queue managers writing at once (1 to 10; above 1 a single --bsize, as mqldt).")
@click.option("--csvFile", "--csv-file", "csv_file", type=click.Path(dir_okay=False),
              help="Write mqldt's CSV here too (overwritten with --qm 1, appended to above 1, as mqldt does).")
@click.option("--dir", "directory", default=".", show_default=True, help="Echoed as mqldt echoes it; unused.")
@click.option("--filePrefix", "--file-prefix", "file_prefix", default="mqldt_testfile", show_default=True,
              help="Echoed as mqldt echoes it; unused.")
@json_option("each block size's result")
def mqldt_cmd(device: str, bsize: str, num_files: int, file_size: int, duration: int, qm: int, csv_file: str | None,
              directory: str, file_prefix: str, as_json: bool) -> None:
    """mqldt (IBM's MQ Log Disk Tester) run on a device profile in virtual time.

    Each simulated queue manager writes --bsize blocks synchronously, one at a time, as mqldt
    does; the report has mqldt's fields and layout, and --csvFile its CSV columns, so a profile
    can be set beside a real mqldt run, or fitted back with 'mqlog devices --from-mqldt'.
    """
    from mqlog.core.disk.devices import get_profile
    from mqlog.core.disk.mqldt import MqldtOptions, console_text, csv_text, parse_bsizes, replay

    options = MqldtOptions(bsizes=parse_bsizes(bsize), num_files=num_files, file_size=file_size, duration=duration,
                           qm=qm, directory=directory, file_prefix=file_prefix)
    profile = get_profile(device)
    rows = replay(profile, options)
    if as_json:
        import attrs

        # mqldt's own field names (they carry their units: _ns, _bytes_sec), blocksize's given
        emit_json({"device": profile.name, "qm": qm, "duration_s": duration,
                   "results": [{("blocksize_bytes" if k == "blocksize" else k): v
                                for k, v in attrs.asdict(r).items()} for r in rows]})
    else:
        click.echo(f"mqlog mqldt: mqldt's test on device profile '{profile.name}' in virtual time; no file is written")
        click.echo(console_text(rows, options), nl=False)
    if csv_file is not None:
        try:
            with open(csv_file, "w" if qm == 1 else "a", encoding="utf-8", newline="\n") as f:
                f.write(csv_text(rows, qm))
        except OSError as exc:
            raise click.FileError(csv_file, exc.strerror or str(exc)) from None


@cli.command("hosts")
@click.option("--file", "path", type=click.Path(dir_okay=False), help="A TOML file of your own host profiles.")
@json_option("the profiles")
def hosts(path: str | None, as_json: bool) -> None:
    """List host profiles: cores, CPU per MQI call, and what a request/reply round trip costs."""
    from mqlog.core.host.profiles import DEFAULT_HOST, load_hosts

    profiles = load_hosts(path)
    if as_json:
        import attrs

        emit_json({"default": DEFAULT_HOST, "hosts": [
            dict(attrs.asdict(p), round_trip_2kb_nonpersistent_us=p.round_trip_us(2048, persistent=False),
                 round_trip_2kb_persistent_us=p.round_trip_us(2048, persistent=True)) for p in profiles.values()]})
        return
    # The round trip is IBM's MQ-CPH one (4 calls, 4 commits, 2 KB messages): the figure the
    # profile was split from, so a user's own profile can be checked against its source.
    # A row wider than the terminal keeps its figures in columns and wraps the round trip
    # and the description under them (issue 22: tables fit COLUMNS; --json has it all).
    width = terminal_width()
    for line in fitted(f"{'name':<10} {'cores':>5} {'put/get µs':>10} {'commit µs':>9} {'record µs':>9} "
                       f"{'force µs':>8} {'app µs':>6} {'jitter':>6} ", f"{'2 KB round trip µs: np / persistent':>36}  description",
                       width, wrapped="2 KB round trip µs: np / persistent, description"):
        click.echo(line)
    for p in profiles.values():
        np_, pers = p.round_trip_us(2048, persistent=False), p.round_trip_us(2048, persistent=True)
        mark = " (default)" if p.name == DEFAULT_HOST and path is None else ""
        for line in fitted(f"{p.name:<10} {p.cores:>5} {p.put_us:>4g}/{p.get_us:<5g} {p.commit_us:>9g} "
                           f"{p.log_record_us:>9g} {p.force_wait_us:>8g} {p.app_call_us:>6g} "
                           f"{'±' + format(p.cpu_jitter, '.0%') if p.cpu_jitter else 'none':>6} ",
                           f"{np_:>22.1f} / {pers:<11.1f}  {p.description}{mark}", width,
                           wrapped=f"{np_:.1f} / {pers:.1f}, {p.description}{mark}"):
            click.echo(line)
    # Restart's own CPU (issue 21): what restart pays per record replayed, per uncommitted
    # message backed out and per message's index entry loaded, on one core.
    click.echo("")
    click.echo(f"{'restart CPU':<11} {'replay a record µs':>18} {'back out a msg µs':>17} {'load a msg µs':>13} "
               f"{'copy ns/byte':>12}")
    for p in profiles.values():
        click.echo(f"{p.name:<11} {p.replay_record_us:>18g} {p.reconcile_message_us:>17g} {p.load_message_us:>13g} "
                   f"{p.copy_ns_per_byte:>12g}")
    # The log writer's own CPU: the distributed writer wakes each caller it released; z/OS's
    # single logger task pays for each write it starts (0 on the x86 hosts: H1 holds it).
    click.echo("")
    click.echo(f"{'log writer':<11} {'wake a caller µs':>16} {'start a write µs':>16}")
    for p in profiles.values():
        click.echo(f"{p.name:<11} {p.wake_us:>16g} {p.log_io_us:>16g}")


def _notation(platform: str | None):
    """How ``scan`` writes a log file's addresses: as the platform's dump and messages do (an
    LSN <a:b:c:d> on distributed, as dmpmqlog and AMQ7230I; an RBA in hex on z/OS, as CSQ1LOGP;
    the reference log's byte address in hex): the bare form for a column, a labelled one for a
    sentence ("LSN <0:0:12:0> (00000000000C0000)"), and the column's width."""
    from mqlog.platforms import PLATFORMS

    return PLATFORMS[platform if platform in PLATFORMS else "reference"].notation()


def _address(address: int, platform: str | None, key: str = "address") -> dict:
    """An address in ``scan --json`` as ``restart --json`` gives the end of the log: ``KEY`` the
    byte address (a number), ``KEY_text`` the same address as the platform writes it."""
    return {key: address, f"{key}_text": _notation(platform)[0](address)}


@cli.command("scan")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--records", "show", is_flag=True, help="List every record, not just the summary.")
@json_option("the summary (and with --records the records)")
def scan_cmd(path: Path, show: bool, as_json: bool) -> None:
    """Read one log file back and report its records and how it ends: a reference log, a
    distributed extent or a z/OS active or archive data set, each read from the log address
    its own first page names. Any other file (a BSDS, a queue file, the control file) is
    refused as not a log file, saying what it is."""
    from collections import Counter

    from mqlog.core.errors import LogFormatError, MqlogError
    from mqlog.core.log.reader import LogReader
    from mqlog.core.disk.storage import DirectoryStorage
    from mqlog.core.format.pages import STALE
    from mqlog.platforms import PLATFORMS, record_types
    from mqlog.scanfile import FileFromBase, first_record, identify

    # A log file of a run (DIR/qm/FILE, run.json or a lock there): read under the run's lock,
    # shared, like every other reader of a run directory.
    run_dir = path.resolve().parent.parent
    of_a_run = path.resolve().parent.name == QM_DIR and any((run_dir / n).is_file() for n in (RUN_FILE, LOCK_FILE))
    with (read_locked(run_dir) if of_a_run else contextlib.nullcontext()):
        storage = DirectoryStorage(path.parent)
        try:
            size = storage.size(path.name)
            kind = identify(path.name, storage.read(path.name, 0, 4096), size)
            written, labelled, width = _notation(kind.platform)
            if kind.kind == "other":
                raise MqlogError(f"{path}: not a log file: {kind.what}"
                                 + (f" (its run directory: {run_dir})" if of_a_run and "use mqlog" in kind.what
                                    else ""))
            if kind.kind == "damaged":
                raise LogFormatError(kind.what, source=str(path), offset=0)
            source = FileFromBase(storage, path.name, kind.base)
            start = first_record(source, size) if kind.kind == "log" else None
            kinds: Counter[str] = Counter()
            listed = []
            reader = None
            if start is not None:
                # the platforms' record type codes never meet (docs/FORMAT.md §3.2): a file of
                # any decodes with every platform's record classes
                reader = LogReader(source, start, record_types=record_types())
                for address, record in reader:
                    kinds[type(record).__name__] += 1
                    if show and as_json:
                        listed.append({**_address(address, kind.platform), "type": type(record).__name__,
                                       "uow": f"{record.uow:x}"})
                    elif show:
                        click.echo(f"{written(address):<{width}} {type(record).__name__:<16} uow={record.uow:x}")
        finally:
            storage.close()
    if reader is None:  # formatted and never written, or no record starts in it
        end = {**_address(kind.base, kind.platform), "reason": "end"}
        note = kind.what if kind.kind == "unwritten" else "no record starts in it (one record fills it whole)"
        if as_json:
            emit_json({"file": str(path), "kind": kind.what, **_address(kind.base, kind.platform, "base_address"),
                       "records": 0,
                       "pages_read": 0, "by_type": {}, "end": end, **({"record_list": []} if show else {})})
            return
        click.echo(f"0 records: {note}")
        return
    end = reader.end
    past_file = end.offset is not None and end.offset >= size
    stale = end.reason == "end" and end.problem == str(STALE)
    # what the end is, in words, beyond the reader's verdict: a platform's extent or data set
    # is one stretch of a longer log, and a stale page is a page of an earlier use of the file
    if kind.platform is not None and past_file:
        beyond = ("its last record continues in the next " if end.reason == "incomplete" else
                  "the file is full; the log goes on in the next ")
        beyond += PLATFORMS[kind.platform].log_file_noun
    elif stale:
        beyond = f"{end.problem} at {end.source} offset {end.offset}: the rest of the file is from an earlier use"
    else:
        beyond = None
    if as_json:
        emit_json({"file": str(path), "kind": kind.what, **_address(kind.base, kind.platform, "base_address"),
                   "records": sum(kinds.values()), "pages_read": reader.pages_read,
                   "by_type": dict(sorted(kinds.items())),
                   "end": {**_address(end.address, kind.platform), "reason": end.reason,
                           **({"problem": end.problem, "source": end.source, "offset_bytes": end.offset}
                              if end.reason != "end" or stale else {}),
                           **({"note": beyond} if beyond else {})},
                   **({"record_list": listed} if show else {})})
        return
    if kind.platform is not None:
        click.echo(f"{path.name}: {kind.what}, holding log from {labelled(kind.base)}")
    click.echo(f"{sum(kinds.values())} records in {reader.pages_read} pages read: "
               + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())))
    if beyond is not None:
        click.echo(f"log ends at {labelled(end.address)}: {end.reason} ({beyond})")
        return
    click.echo(f"log ends at {labelled(end.address)}: {end.reason}"
               + (f" ({end.problem} at {end.source} offset {end.offset})" if end.reason != "end" else ""))
