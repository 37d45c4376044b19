"""What mqlog is made of, as data: ``mqlog commands`` (every command of the click group, its
usage and what it does, read from the commands themselves) and ``mqlog layout`` (the source
tree: each package's directory and what its docstring says it holds). README.md's command
and layout tables are made from their ``--json`` (``mqlog docs``), so a command or package
added, renamed or re-documented shows in the README at the next ``mqlog docs --write``.
"""

from __future__ import annotations

import ast
import importlib.util
import re
from pathlib import Path

import click

from mqlog.cli.group import cli, emit_json, json_option
from mqlog.core.errors import MqlogError

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]


#: the metavars click gives a value by its type alone: the usage names the option's value instead
_GENERIC = {"TEXT", "INTEGER", "INTEGER RANGE", "FLOAT", "FLOAT RANGE"}


def _metavar(param: click.Option, ctx: click.Context) -> str:
    """An option's value as the usage names it: its metavar, its choices (``a|b``), FILE or
    DIRECTORY for a path, its type's own (``SECONDS|END``), else the option's name
    (``--device DEVICE``)."""
    if param.metavar:
        return param.metavar
    if isinstance(param.type, click.Choice):
        return "|".join(str(c) for c in param.type.choices)
    if isinstance(param.type, click.Path):
        return "DIRECTORY" if not param.type.file_okay else "FILE"
    shown = param.make_metavar(ctx).removesuffix("...").strip()
    if shown and shown not in _GENERIC:
        return shown
    return max(param.opts, key=len).lstrip("-").upper()


def usage(command: click.Command, ctx: click.Context) -> str:
    """``mqlog NAME ARGS [--option VALUE] ...``: the command's arguments and options as its
    parameters define them (required ones unbracketed, choices as ``a|b``, flags bare, one
    flag of a group of ``flag_value`` options standing for its choices); ``--help`` left out."""
    words = [f"mqlog {ctx.command_path[len('mqlog '):] if ctx.command_path.startswith('mqlog ') else command.name}"]
    flag_groups: dict[str, list[str]] = {}
    help_option = command.get_help_option(ctx)
    for param in command.get_params(ctx):
        if isinstance(param, click.Argument):
            words.append(param.make_metavar(ctx))
            continue
        if not isinstance(param, click.Option) or param.hidden or param is help_option:
            continue
        name = max(param.opts, key=len)
        if param.is_flag and param.flag_value is not True and not param.secondary_opts:  # --check | --write
            flag_groups.setdefault(param.name, []).append(name)
            continue
        text = name if param.is_flag else f"{name} {_metavar(param, ctx)}"
        if param.multiple:
            text += " ..."
        words.append(text if param.required else f"[{text}]")
    for names in flag_groups.values():
        words.append(f"[{' | '.join(names)}]")
    return " ".join(words)


def summary(command: click.Command) -> str:
    """What a command does: its help's first paragraph, on one line."""
    return " ".join((command.help or "").split("\n\n")[0].split())


def command_rows(group: click.Group, ctx: click.Context | None = None, prefix: str = "") -> list[dict]:
    """One row a visible command of ``group`` (a group's commands each a row of their own,
    ``topology run``): its name, usage, what it does, and whether it takes ``--json``."""
    ctx = ctx if ctx is not None else click.Context(group, info_name="mqlog")
    rows = []
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if command is None or command.hidden:
            continue
        sub = click.Context(command, parent=ctx, info_name=name)
        if isinstance(command, click.Group):
            rows += command_rows(command, sub, f"{prefix}{name} ")
            continue
        rows.append({"name": prefix + name, "usage": usage(command, sub), "summary": summary(command),
                     "json": any(isinstance(p, click.Option) and "--json" in p.opts for p in command.params)})
    return rows


@cli.command("commands")
@json_option("every command with its usage and what it does")
def commands_cmd(as_json):
    """List mqlog's commands: each one's usage (arguments and options, from the command
    itself) and what it does (its help's first paragraph)."""
    rows = command_rows(cli)
    if as_json:
        emit_json({"commands": rows})
        return
    for row in rows:
        click.echo(f"{row['usage']}\n    {row['summary']}")


# -- the source tree ---------------------------------------------------------------------------

def _docstring_head(path: Path) -> str:
    """A module's docstring's first sentence (a trailing colon dropped), on one line."""
    try:
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    except (OSError, SyntaxError):
        return ""
    first = " ".join(doc.split("\n\n")[0].split())
    sentence = re.split(r"(?<=[.;])\s", first, maxsplit=1)[0]
    return sentence.rstrip(":").rstrip(".")


def _readme_head(path: Path) -> str:
    """A README's first heading, without its ``# DIR/:`` prefix."""
    try:
        first = path.read_text(encoding="utf-8").split("\n", 1)[0]
    except OSError:
        return ""
    return re.sub(r"^#+\s*(\S+/:\s*)?", "", first).strip()


def _pyproject(root: Path) -> dict:
    try:
        return tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return {}


def layout_rows() -> list[dict]:
    """The source tree of the checkout mqlog is installed from (editable): the ``mqlog``
    package's directory, then each package pyproject.toml maps to a directory of its own (the
    core, the platforms, the Spark jobs), then the directories pytest collects (its
    ``testpaths``), each with what its package docstring (or README) says it holds."""
    spec = importlib.util.find_spec("mqlog")
    home = Path(next(iter(spec.submodule_search_locations)))
    root = home.parent
    project = _pyproject(root)
    if not project:
        raise MqlogError(f"{root}: no pyproject.toml; 'mqlog layout' describes a checkout (pip install -e)")
    rows = [{"directory": f"{home.name}/", "package": "mqlog", "what": _docstring_head(home / "__init__.py")}]
    mapping = project.get("tool", {}).get("setuptools", {}).get("package-dir", {})
    for package, where in mapping.items():
        if package != "mqlog" and (root / where).is_dir():
            rows.append({"directory": f"{where}/", "package": package,
                         "what": _docstring_head(root / where / "__init__.py")})
    for name in project.get("tool", {}).get("pytest", {}).get("ini_options", {}).get("testpaths", []):
        where = root / name
        what = _docstring_head(where / "__init__.py") or _readme_head(where / "README.md")
        rows.append({"directory": f"{name}/", "package": None, "what": what})
    return rows


@cli.command("layout")
@json_option("every directory with its package and what it holds")
def layout_cmd(as_json):
    """List the source tree of this checkout: each directory, the package it is imported as,
    and what it holds (its package docstring's first sentence, or its README's heading)."""
    rows = layout_rows()
    if as_json:
        emit_json({"layout": rows})
        return
    for row in rows:
        click.echo(f"{row['directory']:<14} {row['package'] or '':<18} {row['what']}")
