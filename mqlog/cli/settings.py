"""What a run can be given: ``workloads`` (the built-ins, their parameters and defaults) and
``config`` (a platform's effective log parameters, validated, and the queue manager
attributes every platform takes).
"""

from __future__ import annotations

import click

from mqlog.cli.group import cli, emit_json, fitted, json_option, terminal_width


@cli.command("workloads")
@json_option("the workloads and their parameters")
def workloads_cmd(as_json):
    """List the built-in workloads with their parameters and defaults."""
    from mqlog.core.workload.spec import BUILTINS, describe, format_value

    if as_json:
        # a default JSON cannot hold as it is (a choice, a size with its unit) goes as --set takes it
        emit_json({"workloads": [
            {"name": d.name, "description": d.doc,
             "params": [{"name": p.name, "kind": p.kind.__name__, "allowed": str(p.allowed), "meaning": p.doc,
                         "default": p.default if isinstance(p.default, (bool, int, float, str)) else
                         format_value(p.default)} for p in d.params]}
            for d in BUILTINS.values()]})
        return
    click.echo(describe(BUILTINS))


@cli.command("config")
@click.option("--platform", "platform_name", required=True, help="distributed, zos, or reference.")
@click.option("--set", "sets", multiple=True, metavar="log.PARAM=VALUE", help="A log parameter; repeatable.")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def config_cmd(platform_name, sets, as_json):
    """Show a platform's effective log configuration, validated: the qm.ini Log: names for
    distributed, the CSQ6LOGP/CSQ6SYSP/CSQ6ARVP names for z/OS, in any case; which parameters
    are the model's own, the derived sizes, and the queue manager attributes (qmgr.NAME)."""
    from mqlog.core.workload.spec import parse_set
    from mqlog.platforms import choose

    parsed = parse_set(list(sets))
    if parsed.get("workload") or parsed.get("qmgr"):
        raise click.UsageError("config takes log.PARAM=VALUE settings only")
    choice = choose(platform_name)
    platform_name = choice.name
    values = choice.configure(parsed.get("log", {}))
    qmgr = qmgr_attributes()
    if choice.describer is not None:
        rows, derived = choice.describer(values)
        if as_json:
            emit_json({"platform": platform_name, "log": values,
                       "derived": {k: v["bytes"] for k, v in derived.items()},
                       "model_only": list(choice.model_only_names()), "qmgr": qmgr})
            return
        click.echo(f"platform {platform_name}: {choice.description}")
        width = terminal_width()
        for r in rows:
            mark = "" if r.value == r.default else "   (set)"
            for line in fitted(f"  {r.name:<22} {str(r.value):>14}   ", f"{r.allowed:<28} {r.meaning}{mark}", width,
                               wrapped=f"{r.allowed}: {r.meaning}{mark}"):
                click.echo(line)
        if choice.model_only_names():
            for line in fitted("", f"model only (no {choice.real_names}): {', '.join(choice.model_only_names())}",
                               width):
                click.echo(line)
        click.echo("derived:")
        for item in derived.values():
            for line in fitted("  ", item["text"], width):
                click.echo(line)
        _echo_qmgr(qmgr, width)
        return
    if as_json:
        emit_json({"platform": platform_name, "log": values, "model_only": list(choice.model_only_names()),
                   "qmgr": qmgr})
        return
    click.echo(f"platform {platform_name}: {choice.description}")
    width = terminal_width()
    for p in choice.params:
        mark = "" if values[p.name] == p.default else "   (set)"
        for line in fitted(f"  {p.name:<24} {values[p.name]:>12}   ", f"{p.low}..{p.high}  {p.doc}{mark}", width,
                           wrapped=f"{p.low}..{p.high}: {p.doc}{mark}"):
            click.echo(line)
    for line in fitted("", f"model only (no real queue manager has them): {', '.join(choice.model_only_names())}",
                       width):
        click.echo(line)
    _echo_qmgr(qmgr, width)


def qmgr_attributes() -> list[dict]:
    """The queue manager attributes a run may set (``--set qmgr.NAME=V``, on every platform),
    from the core's parameter table: name, default, what is allowed, what it sets, where MQ
    keeps it."""
    from mqlog.core.qm.config import QMGR_PARAMETERS

    return [{"name": p.name, "set_as": f"qmgr.{p.name}", "default": p.default, "allowed": p.allowed,
             "meaning": p.meaning, "where": p.where} for p in QMGR_PARAMETERS]


def _echo_qmgr(qmgr: list[dict], width: int) -> None:
    click.echo("queue manager attributes (--set qmgr.NAME=V, every platform):")
    for a in qmgr:
        for line in fitted(f"  {a['name']:<22} {a['default']:>14}   ", f"{a['allowed']:<28} {a['meaning']}", width,
                           wrapped=f"{a['allowed']}: {a['meaning']}"):
            click.echo(line)
