"""The z/OS utilities over a run directory: ``print`` (CSQ1LOGP), ``bsds`` (CSQJU004),
``stats`` (SMF 115 QJST) and ``convert-rba`` (CSQJUCNV), the platform's own utilities (its
descriptor lists them). The work is done by :mod:`mqlog.zosrun` and the descriptor's ``tools``;
these commands parse the options and print what it returns, each line fitted to the terminal
(:func:`fit_lines`); ``--json`` gives the whole of it.
"""

from __future__ import annotations

from pathlib import Path

import click

from mqlog.cli.group import cli, emit_json, json_option, terminal_width
from mqlog.core.errors import MqlogError


def fit_lines(text: str, width: int | None) -> str:
    """``text`` with each line wider than ``width`` wrapped at its spaces, the rest indented
    under it (4 more than the line's own indent), so that nothing is cut and the listing fits
    the terminal; None: as it is (piped output keeps whole lines). A single word wider than
    the terminal – none of these listings has one – is left whole rather than split."""
    import textwrap

    if width is None:
        return text
    out = []
    for line in text.splitlines():
        if len(line) <= width:
            out.append(line)
            continue
        indent = " " * (len(line) - len(line.lstrip()))
        out.extend(textwrap.wrap(line.strip(), width, initial_indent=indent, subsequent_indent=indent + "    ",
                                 break_long_words=False, break_on_hyphens=False))
    return "\n".join(out) + ("\n" if text.endswith("\n") else "")


@cli.command("print")
@click.argument("directory", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--rba-start", default=None, help="First RBA of the range, hex (CSQ1LOGP RBASTART).")
@click.option("--rba-end", default=None, help="Last RBA of the range, hex (RBAEND).")
@click.option("--urid", default=None, help="Only this unit of recovery: its URID, the RBA of its first record (hex).")
@click.option("--queue", default=None, help="Only records naming this queue (the model's PAGESET selection).")
@click.option("--summary", type=click.Choice(["no", "yes", "only"], case_sensitive=False), default="no",
              show_default=True, help="Add the summary of units of recovery, or print only it.")
@click.option("--status", default="incomplete", show_default=True, metavar="incomplete|all|STATUS,...",
              help="The units the summary lists: incomplete (in commit, in doubt, in flight, in backout: "
                   "what restart acts on, as CSQ1LOGP's summary), all, or statuses named (e.g. COMMITTED); "
                   "its counts are of every unit.")
@click.option("--json", "as_json", is_flag=True)
def print_cmd(directory: Path, rba_start, rba_end, urid, queue, summary, status, as_json: bool):
    """Log print (like CSQ1LOGP) of the z/OS queue manager a run left in DIRECTORY."""
    from mqlog.zosrun import PLATFORM, print_run

    try:
        PLATFORM.tools().summary_statuses(status)
    except MqlogError as exc:
        raise click.BadParameter(str(exc).removeprefix("STATUS="), param_hint="--status") from None
    result = print_run(directory, rba_start=rba_start, rba_end=rba_end, urid=urid, queue=queue,
                       summary=summary, status=status, as_json=as_json)
    if as_json:
        emit_json(result)
    else:
        click.echo(fit_lines(result, terminal_width()), nl=False)


@cli.command("bsds")
@click.argument("directory", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True)
def bsds_cmd(directory: Path, as_json: bool):
    """BSDS map (like CSQJU004) of the z/OS queue manager a run left in DIRECTORY."""
    from mqlog.zosrun import bsds_run

    result = bsds_run(directory, as_json=as_json)
    if as_json:
        emit_json(result)
    else:
        click.echo(fit_lines(result, terminal_width()), nl=False)


@cli.command("stats")
@click.argument("directory", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True)
def stats_cmd(directory: Path, as_json: bool):
    """Log statistics (like SMF 115 QJST) of the z/OS run in DIRECTORY, from its metrics.json."""
    from mqlog.zosrun import stats_run

    result = stats_run(directory, as_json=as_json)
    if as_json:
        emit_json(result)
    else:
        click.echo(fit_lines(result, terminal_width()), nl=False)


@cli.command("convert-rba")
@click.argument("directory", type=click.Path(exists=True, file_okay=False, path_type=Path))
@json_option("whether it converted, with the message")
def convert_rba_cmd(directory: Path, as_json: bool):
    """Convert the BSDS of the z/OS queue manager a run left in DIRECTORY to 8-byte RBAs
    (like CSQJUCNV). One way: there is no going back to 6-byte RBAs."""
    from mqlog.zosrun import convert_rba_run

    converted, settings, message = convert_rba_run(directory)
    if as_json:
        emit_json({"converted": converted, **settings, "messages": [message]})
        return
    click.echo(message)
