"""The ``mqlog`` command line.

User errors (bad parameters, damaged files, unknown profiles) print one line and exit 2;
a traceback means a bug in mqlog.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from mqlog._version import __version__
from mqlog.core.errors import MqlogError


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
    from mqlog.core.storage import DirectoryStorage
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
    from mqlog.core.devices import load_profiles

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

    from mqlog.core.reader import LogReader
    from mqlog.core.space import ReferenceLogSpace
    from mqlog.core.storage import DirectoryStorage

    from mqlog.core.errors import LogFormatError
    from mqlog.core.pages import check_page

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


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the CLI, turning mqlog's own errors into one line on stderr."""
    try:
        cli.main(args=argv, prog_name="mqlog", standalone_mode=False)
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.ClickException as exc:
        exc.show()
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
