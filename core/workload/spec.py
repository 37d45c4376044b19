"""Workload specifications: the built-in workloads' parameters, TOML spec files, ``--set`` items.

A workload spec is a workload *name* plus its parameters (and optionally a seed). It comes from
one of three places, all checked the same way against the workload's :class:`WorkloadDef`:

* a built-in name with its defaults (``mqlog run --workload putget-pairs``);
* a TOML spec file (``mqlog run --workload nightly.toml``)::

      workload = "putget-pairs"   # required: a built-in workload
      seed = 7                    # optional
      [params]                    # optional: any of the workload's parameters
      pairs = 10
      payload = "padded-records"
      [log]                       # optional: the platform's log parameters, checked by the
      LogFilePages = 16384        #   platform under its own parameter names
      [qmgr]                      # optional: queue manager attributes by MQ's names (any
      MAXUMSGS = 500000           #   case): MAXUMSGS, MAXDEPTH (mqlog.core.qm.config)

* ``--set workload.KEY=VALUE`` / ``--set log.PARAM=VALUE`` / ``--set qmgr.ATTR=VALUE`` items on
  the command line (:func:`parse_set`), applied over either of the above.

A parameter, its values and their errors are :mod:`mqlog.core.workload.param`'s. Errors name
what to fix. Anything malformed about a spec is a
:class:`~mqlog.core.errors.SpecError` naming the file (or ``--set``) and the field; a bad value
is a :class:`SpecValueError`, which is also a :class:`~mqlog.core.errors.ParameterError`
naming the parameter, the value and what is allowed::

    spec.toml: params.message_size: expected an integer 0 to 104857600, got 'big'
    workload.message_size=-5 is not valid: allowed 0 to 104857600

Spec files are data only: read with :mod:`tomllib`, never evaluated, and nothing in them names
another file.
"""

from __future__ import annotations

import difflib
import math
import os
import textwrap
import types
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

try:  # Python 3.11+
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

from mqlog.core.errors import ParameterError, SpecError, UnknownParameterError
from mqlog.core.qm.config import qmgr_settings
from mqlog.core.workload.param import MAX_MESSAGE_SIZE, Param, SpecValueError, format_value, parse_value, short_repr
from mqlog.core.workload.payload import PAYLOAD_KINDS

__all__ = [
    "BUILTINS",
    "MAX_MESSAGE_SIZE",
    "Param",
    "SpecValueError",
    "WorkloadDef",
    "WorkloadSpec",
    "apply_overrides",
    "build_spec",
    "describe",
    "dump_spec",
    "format_value",
    "load_spec_document",
    "load_spec_file",
    "parse_set",
    "parse_value",
    "resolve_workload",
]

#: The sections a ``--set`` item may address.
SET_SECTIONS = ("workload", "log", "qmgr")

#: The keys a spec file may have at its top level.
SPEC_FILE_KEYS = ("workload", "seed", "params", "log", "qmgr")
_MAX_SEED = 2**64 - 1
_SEED_ALLOWED = f"an integer 0 to {_MAX_SEED}"


def _unique_names(instance: Any, attribute: attrs.Attribute, params: tuple[Param, ...]) -> None:
    names = [p.name for p in params]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"workload parameters named more than once: {', '.join(duplicates)}")


@attrs.frozen
class WorkloadDef:
    """A workload's definition: its name, what it does, and the parameters it takes."""

    name: str
    doc: str
    params: tuple[Param, ...] = attrs.field(converter=tuple, validator=_unique_names)

    def param(self, name: str, *, section: str = "workload",
              source: str | None = None) -> Param:
        """The parameter called ``name`` (in any case, as MQ reads parameter names); a
        :class:`SpecError` listing the known ones if none."""
        for p in self.params:
            if p.name.lower() == name.strip().lower():
                return p
        known = [p.name for p in self.params]
        hint = difflib.get_close_matches(name.strip().lower(), known, n=3)
        reason = (f"unknown parameter of workload {self.name!r}"
                  + (f" (did you mean {' or '.join(map(repr, hint))}?)" if hint else "")
                  + f"; known: {', '.join(known)}")
        raise SpecError(reason, source=source, field=f"{section}.{_toml_key(name)}")

    def defaults(self) -> dict[str, object]:
        """Every parameter's default, by name."""
        return {p.name: p.default for p in self.params}


def _frozen_params(params: Mapping[str, object]) -> Mapping[str, object]:
    return types.MappingProxyType(dict(params))


def _check_seed(instance: Any, attribute: attrs.Attribute, value: Any) -> None:
    if value is not None and (type(value) is not int or not 0 <= value <= _MAX_SEED):
        raise SpecValueError("seed", value, _SEED_ALLOWED)


@attrs.frozen
class WorkloadSpec:
    """A workload to run: its name, every parameter's value (defaults filled in), and a seed.

    ``params`` is read-only. ``seed`` is ``None`` when the spec does not fix one (the command
    line's ``--seed`` then decides). ``origin`` says where the spec came from (a file name,
    ``built-in``, ``--set``); it is for reports and does not take part in equality.
    """

    workload: str
    params: Mapping[str, object] = attrs.field(converter=_frozen_params, hash=False)
    seed: int | None = attrs.field(default=None, validator=_check_seed)
    origin: str = attrs.field(default="", eq=False)

    def get(self, name: str) -> object:
        """The value of parameter ``name``; a :class:`SpecError` listing the known ones if none."""
        try:
            return self.params[name]
        except KeyError:
            raise SpecError(f"workload {self.workload!r} has no parameter {short_repr(name)}; "
                            f"known: {', '.join(self.params)}") from None


def build_spec(definition: WorkloadDef, overrides: Mapping[str, object], *, origin: str,
               section: str = "workload", seed: int | None = None, text: bool = True) -> WorkloadSpec:
    """``definition``'s defaults with ``overrides`` applied and checked.

    An override may be a typed value (from TOML or code) or, for a non-text parameter and with
    ``text`` (the default), text to parse as :func:`parse_value` does (from ``--set``). Without
    ``text`` (a spec file, whose values are typed) a string where a number or a boolean belongs is
    refused naming the field and the type expected, never read as a number. Errors name ``origin`` (a file name or
    ``--set``; empty for none) and the field ``<section>.<name>``. An unknown parameter is a
    :class:`SpecError` listing the known ones; a bad value a :class:`SpecValueError`.
    """
    source = origin or None
    values = definition.defaults()
    for name, value in overrides.items():
        param = definition.param(name, section=section, source=source)
        field = f"{section}.{param.name}"
        if isinstance(value, str) and param.kind is not str and text:
            values[param.name] = parse_value(param, value, field=field, source=source)
        else:
            values[param.name] = param.check(value, field=field, source=source)
    return WorkloadSpec(definition.name, values, seed, origin)


def apply_overrides(spec: WorkloadSpec, definition: WorkloadDef,
                    overrides: Mapping[str, object], *, origin: str = "--set") -> WorkloadSpec:
    """``spec`` with ``overrides`` (e.g. ``parse_set(...)["workload"]``) applied and checked."""
    if definition.name != spec.workload:
        raise SpecError(f"spec is for workload {spec.workload!r}, not {definition.name!r}")
    merged = build_spec(definition, overrides, origin=origin)
    changed = {definition.param(name).name: merged.params[definition.param(name).name] for name in overrides}
    return WorkloadSpec(spec.workload, {**spec.params, **changed}, spec.seed, spec.origin)


def _type_name(value: object) -> str:
    return {dict: "a table", list: "an array", str: "a string", bool: "a boolean",
            int: "an integer", float: "a number"}.get(type(value), type(value).__name__)


def load_spec_file(path: str | os.PathLike[str],
                   definitions: Mapping[str, WorkloadDef]) -> tuple[WorkloadSpec, dict]:
    """The workload spec in the TOML file at ``path``, and its raw ``[log]`` table
    (:func:`load_spec_document` without the ``[qmgr]`` table)."""
    spec, log, _ = load_spec_document(path, definitions)
    return spec, log


def load_spec_document(path: str | os.PathLike[str], definitions: Mapping[str, WorkloadDef]
                       ) -> tuple[WorkloadSpec, dict, dict[str, int]]:
    """The workload spec in the TOML file at ``path``, its raw ``[log]`` table and its
    ``[qmgr]`` table checked.

    The ``[log]`` table (``{}`` if absent) is returned unchecked, for the platform to validate
    with its own parameter names. The ``[qmgr]`` table's attributes come back by MQ's names
    (only those given). Every problem raises a :class:`SpecError` (or its
    :class:`SpecValueError`) naming the file and, for TOML syntax, the line, otherwise the field.
    """
    source = os.fspath(path)
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as exc:
        reason = f"cannot read the spec file: {exc.strerror or exc}"
        raise SpecError(reason, source=source) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise SpecError(f"not UTF-8 text (line {line}, byte offset {exc.start})",
                        source=source) from None
    try:
        doc = tomllib.loads(text)
    except ValueError as exc:  # TOMLDecodeError, whose message gives the line and column
        raise SpecError(f"not valid TOML: {exc}", source=source) from None
    except RecursionError:
        raise SpecError("not valid TOML: nested too deeply", source=source) from None

    for key in doc:
        if key not in SPEC_FILE_KEYS:
            raise SpecError(f"unknown key; a spec file has only {', '.join(SPEC_FILE_KEYS)}",
                            source=source, field=_toml_key(key))
    name = doc.get("workload")
    known = ", ".join(definitions)
    if name is None:
        raise SpecError(f"missing: say which workload to run, one of {known}",
                        source=source, field="workload")
    if not isinstance(name, str):
        raise SpecError(f"expected a workload name (one of {known}), got {short_repr(name)}",
                        source=source, field="workload")
    definition = definitions.get(name)
    if definition is None:
        raise SpecError(f"unknown workload {short_repr(name)}; known: {known}",
                        source=source, field="workload")
    seed = doc.get("seed")
    if seed is not None and type(seed) is not int:
        raise SpecValueError("seed", seed, _SEED_ALLOWED, source=source,
                             reason=f"expected {_SEED_ALLOWED}, got {short_repr(seed)}")
    if seed is not None and not 0 <= seed <= _MAX_SEED:
        raise SpecValueError("seed", seed, _SEED_ALLOWED, source=source)
    tables = {}
    for key in ("params", "log", "qmgr"):
        table = doc.get(key, {})
        if not isinstance(table, dict):
            got = f"{_type_name(table)} {short_repr(table)}"
            raise SpecError(f"expected a table [{key}], got {got}",
                            source=source, field=_toml_key(key))
        tables[key] = table
    spec = build_spec(definition, tables["params"], origin=source, section="params", seed=seed, text=False)
    try:
        qmgr = qmgr_settings(tables["qmgr"], defaults=False)
    except UnknownParameterError as exc:  # a wrong name, not a bad value
        raise SpecError(str(exc), source=source) from None
    except ParameterError as exc:
        raise SpecValueError(exc.name, exc.value, exc.allowed, source=source) from None
    return spec, dict(tables["log"]), qmgr


def _toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        escaped = []
        for ch in value:
            if ch in '"\\':
                escaped.append("\\" + ch)
            elif ch < " " or ch == "\x7f":
                escaped.append(f"\\u{ord(ch):04x}")
            else:
                escaped.append(ch)
        return '"' + "".join(escaped) + '"'
    raise SpecError(f"cannot write {_type_name(value)} {short_repr(value)} to a spec file")


def _toml_key(key: str) -> str:
    bare = key and all(c.isascii() and (c.isalnum() or c in "-_") for c in key)
    return key if bare else _toml_value(key)


def dump_spec(spec: WorkloadSpec, log: Mapping[str, object] | None = None,
              qmgr: Mapping[str, object] | None = None) -> str:
    """``spec`` (and optional ``[log]`` and ``[qmgr]`` tables of scalars) as spec-file TOML text.

    :func:`load_spec_file` reads it back to an equal spec.
    """
    lines = [f"workload = {_toml_value(spec.workload)}"]
    if spec.seed is not None:
        lines.append(f"seed = {spec.seed}")
    lines += ["", "[params]"]
    lines += [f"{_toml_key(k)} = {_toml_value(v)}" for k, v in spec.params.items()]
    if log:
        lines += ["", "[log]"]
        lines += [f"{_toml_key(k)} = {_toml_value(v)}" for k, v in log.items()]
    if qmgr:
        lines += ["", "[qmgr]"]
        lines += [f"{_toml_key(k)} = {_toml_value(v)}" for k, v in qmgr.items()]
    return "\n".join(lines) + "\n"


def parse_set(items: Iterable[str]) -> dict[str, dict[str, str]]:
    """Command-line ``--set SECTION.KEY=VALUE`` items by section:
    ``{"workload": {}, "log": {}, "qmgr": {}}``.

    Every section is always present. Values stay text, for :func:`build_spec` (workload), the
    platform (log) or :func:`~mqlog.core.qm.config.qmgr_settings` (qmgr) to check. A malformed item (no ``=``, no
    section, an unknown section, an empty key) raises a :class:`SpecError` quoting it, and so
    does a key given twice (in any case: names are read in any case, so ``pairs`` and
    ``PAIRS`` are one parameter): which of two values was meant is the user's to say, not
    for the last one to win quietly.
    """
    out: dict[str, dict[str, str]] = {section: {} for section in SET_SECTIONS}
    seen: dict[tuple[str, str], str] = {}
    usage = f"expected SECTION.KEY=VALUE with SECTION one of {', '.join(SET_SECTIONS)}"
    for item in items:
        target, eq, value = item.partition("=")
        section, dot, key = target.strip().partition(".")
        key = key.strip()
        if not eq or not dot:
            raise SpecError(f"--set {item!r}: {usage}")
        if section not in out:
            raise SpecError(f"--set {item!r}: unknown section {section!r}; {usage}")
        if not key or any(c.isspace() for c in key):
            raise SpecError(f"--set {item!r}: {'empty' if not key else 'malformed'} key; {usage}")
        earlier = seen.get((section, key.lower()))
        seen[(section, key.lower())] = item
        if earlier is not None:
            raise SpecError(f"--set {section}.{key} is given twice ({earlier!r} and {item!r}); "
                            "give each parameter once")
        out[section][key] = value
    return out


def resolve_workload(name_or_file: str, definitions: Mapping[str, WorkloadDef]
                     ) -> tuple[WorkloadSpec, dict]:
    """What ``--workload NAME|FILE.toml`` names: a built-in with its defaults, or a spec file.

    Returns the spec and the raw ``[log]`` table (``{}`` for a built-in).
    """
    definition = definitions.get(name_or_file)
    if definition is not None:
        return build_spec(definition, {}, origin="built-in"), {}
    if name_or_file.endswith(".toml") or os.path.exists(name_or_file):
        return load_spec_file(name_or_file, definitions)
    known = ", ".join(definitions)
    raise SpecError(f"unknown workload {name_or_file!r}: name a built-in ({known}) "
                    "or a spec file ending in .toml")


def describe(definitions: Mapping[str, WorkloadDef]) -> str:
    """The text ``mqlog workloads`` prints: each workload, what it does, its parameters.

    Each parameter is shown as ``NAME=DEFAULT`` (as ``--set workload.NAME=VALUE`` takes it),
    then its kind and allowed values, then what it means.
    """
    out = ["Workloads. Change a parameter with --set workload.NAME=VALUE, or write a spec file:",
           '  workload = "NAME", optional seed = N, a [params] table, a [log] table and a [qmgr] table',
           "  (queue manager attributes: MAXUMSGS, MAXDEPTH; or --set qmgr.MAXUMSGS=N).", ""]
    for definition in definitions.values():
        out.append(definition.name)
        out += textwrap.wrap(definition.doc, 88, initial_indent="  ", subsequent_indent="  ")
        settings = [f"{p.name}={format_value(p.default)}" for p in definition.params]
        width = max(map(len, settings), default=0)
        for setting, p in zip(settings, definition.params, strict=True):
            out += textwrap.wrap(f"{p.doc} ({p.kind.__name__}, {p.allowed})", 88,
                                 initial_indent=f"    {setting:<{width}}  ",
                                 subsequent_indent=" " * (width + 6), break_on_hyphens=False)
        out.append("")
    return "\n".join(out)


# --------------------------------------------------------------------------- built-ins

def _message_size(default: int = 2048) -> Param:
    return Param("message_size", default, int, "bytes in each message body",
                 low=0, high=MAX_MESSAGE_SIZE)


def _duration(default: float) -> Param:
    return Param("duration", default, float, "virtual seconds the workload runs",
                 low=0.0, high=86_400.0, low_exclusive=True)


def _persistent() -> Param:
    return Param("persistent", True, bool,
                 "persistent messages (logged) or, if false, non-persistent (not logged)")


def _think_us(who: str) -> Param:
    # MQ-CPH's applications do no work of their own between calls (think time 0); a real
    # application does, and that spaces out its forces: a workload parameter, not the host's.
    return Param("think_us", 0.0, float, f"virtual µs {who} spends between iterations "
                 "(its own work; 0, as MQ-CPH, goes straight on)", low=0.0, high=60e6)


_PAYLOAD = Param("payload", "random", str,
                 "what message bodies look like: random is incompressible, text suits "
                 "general codecs, padded-records (fixed-width records) suits RLE",
                 choices=PAYLOAD_KINDS)

#: The built-in workloads (`mqlog workloads` lists them), by name. Every one also takes ``payload``.
BUILTINS: dict[str, WorkloadDef] = {d.name: d for d in (
    WorkloadDef("requester-responder",
                "Requesters put requests round-robin onto request queues; responders get each "
                "and put a same-size reply on the matching reply queue (MQ-CPH style).",
                (Param("requesters", 10, int, "requesting applications, each awaiting its "
                       "reply before the next request", low=1, high=10_000),
                 Param("responders", 10, int, "responding applications, each getting requests "
                       "and putting replies", low=1, high=10_000),
                 Param("queue_pairs", 10, int, "request/reply queue pairs the requests are "
                       "spread over", low=1, high=1_000),
                 _message_size(),
                 Param("rate", 0.0, float, "target round trips per second over all "
                       "requesters; 0 means as fast as possible", low=0.0, high=1e7),
                 _duration(1.0),
                 _persistent(),
                 _think_us("each requester"),
                 _PAYLOAD)),
    WorkloadDef("putget-pairs",
                "Putter/getter pairs, each pair on its own queue: one application puts and "
                "commits, the other gets and commits.",
                (Param("pairs", 1, int, "putter/getter pairs, each with its own queue",
                       low=1, high=10_000),
                 _message_size(),
                 Param("messages_per_pair", 1000, int, "messages each putter puts (and its "
                       "getter gets)", low=1, high=10**7),
                 Param("syncpoint", True, bool, "put and get under syncpoint, committing each; "
                       "false puts and gets outside any unit of work"),
                 _persistent(),
                 _think_us("each putter"),
                 _PAYLOAD)),
    WorkloadDef("putget",
                "MQ-CPH's PutGet: each application puts a message to its own queue and gets it "
                "back, committing each call (under syncpoint), then thinks before the next.",
                (Param("apps", 1, int, "applications, each with its own queue", low=1, high=10_000),
                 _message_size(),
                 Param("messages", 1000, int, "messages each application puts and gets back",
                       low=1, high=10**7),
                 Param("syncpoint", True, bool, "put and get under syncpoint, committing each; "
                       "false puts and gets outside any unit of work (nothing to commit)"),
                 _persistent(),
                 _think_us("each application"),
                 _PAYLOAD)),
    WorkloadDef("long-uow",
                "One unit of work puts early and never commits while background workers keep "
                "logging, until the logger must act on it (a rollback, or shunting).",
                (Param("background", 4, int, "workers putting and committing while the long "
                       "unit of work stays open", low=0, high=1_000),
                 _message_size(),
                 _duration(2.0),
                 Param("prepared", False, bool, "leave the long unit of work prepared (in "
                       "doubt) instead of in flight"),
                 Param("long_messages", 1, int, "messages the long unit of work puts before "
                       "it stalls", low=1, high=10**6),
                 _PAYLOAD)),
    WorkloadDef("log-fill",
                "Holds one uncommitted message open on each queue, then puts many messages "
                "over many units of work, filling the log.",
                (Param("queues", 10, int, "queues, each holding one uncommitted message for "
                       "the whole run", low=1, high=1_000),
                 Param("messages", 10_000, int, "messages put after the held ones, spread "
                       "over the queues", low=0, high=10**8),
                 _message_size(),
                 Param("transactions", 100, int, "units of work the messages are spread over",
                       low=1, high=10**8),
                 Param("commit", True, bool, "commit each unit of work; false backs each out; "
                       "never leaves all of them open to the end, each on its own connection, "
                       "messages round-robin over them (in flight at a crash at the end)",
                       words=("never",)),
                 _PAYLOAD)),
    WorkloadDef("deep-queue",
                "Pre-loads queues with many committed messages, then runs a small put/get "
                "workload: shows how deep queues lengthen restart.",
                (Param("queues", 4, int, "queues to pre-load", low=1, high=1_000),
                 Param("depth", 10_000, int, "committed messages pre-loaded on each queue",
                       low=0, high=10**8),
                 _message_size(1024),
                 Param("then_messages", 1000, int, "messages put and got, each committed, "
                       "after the pre-load", low=0, high=10**8),
                 _PAYLOAD)),
)}
