"""The qm.ini file format: its lines classified, the stanzas a reader wants located, and
values rewritten in place. A line whose text is ``Name:`` starts a stanza; the stanza's
``Key=Value`` lines (indented in files MQ writes, though indentation is not needed) follow
until the next ``Name:`` line. Blank lines and lines whose first non-blank character is ``;``
or ``#`` are comments. Anything else – and a ``Key=Value`` line before the first stanza – is
malformed, reported with the file and line number (:class:`QmIniError`). Values are taken
verbatim up to the end of the line (no inline comments: a path may contain ``;`` or ``#``),
with surrounding blanks removed; keys and stanza names are read in any case. This module
knows nothing of what the keys mean: the caller (:mod:`mqlog.distributed.config`) says which
stanzas and keys it reads, and what to say of a key it does not know.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

from mqlog.core.errors import ConfigFileError, ConfigFileValueError, ParameterError
from mqlog.core.params import Parameter, quoted

__all__ = ["DEFAULT_INDENT", "Line", "QmIniError", "QmIniValueError", "Stanza", "locate", "scan",
           "update"]

#: indentation of the key lines this module writes, as crtmqm indents them
DEFAULT_INDENT = "   "
_STANZA_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
_VALUE_PART = re.compile(r"(?P<head>[^=]*=[ \t]*)(?P<value>.*?)(?P<tail>\s*)", re.DOTALL)


class QmIniError(ConfigFileError):
    """A qm.ini text is malformed, or its log stanzas hold a key mqlog does not know."""

    def __init__(self, reason: str, *, source: str = "qm.ini", line: int | None = None):
        super().__init__(reason, source=source, line=line)


class QmIniValueError(ConfigFileValueError, QmIniError):
    """A value in qm.ini is of the wrong kind or out of range (a :class:`QmIniError` and a
    :class:`~mqlog.core.errors.ParameterError`)."""


@attrs.frozen
class Line:
    """One line of a qm.ini text, classified."""

    number: int
    raw: str  # with its line end, exactly as in the text
    kind: str  # "blank", "comment", "stanza" or "key"
    name: str = ""  # the stanza's name or the key
    value: str = ""


@attrs.define
class Stanza:
    """Where a stanza the caller reads sits among the lines."""

    header: int  # index of the "Name:" line
    last: int  # index of its last key line (the header while it has none)
    indent: str = DEFAULT_INDENT
    entries: dict[str, int] = attrs.field(factory=dict)  # attribute → index of its key line


def scan(text: str, source: str) -> list[Line]:
    """``text`` split into classified lines; a malformed line raises :class:`QmIniError`."""
    pieces = text.split("\n")
    raws = [piece + "\n" for piece in pieces[:-1]]
    if pieces[-1]:
        raws.append(pieces[-1])
    lines: list[Line] = []
    in_stanza = False
    for number, raw in enumerate(raws, 1):
        content = raw[1:] if number == 1 and raw.startswith("\ufeff") else raw
        stripped = content.strip()
        if not stripped:
            lines.append(Line(number, raw, "blank"))
        elif stripped[0] in ";#":
            lines.append(Line(number, raw, "comment"))
        elif "=" in stripped:
            key, _, value = stripped.partition("=")
            key = key.strip()
            if not key:
                raise QmIniError(f"malformed line {quoted(stripped)!r}: no key before '='",
                                 source=source, line=number)
            if not in_stanza:
                raise QmIniError(f"{key}= appears before any stanza (a stanza starts with a line "
                                 f"'Name:', such as 'Log:')", source=source, line=number)
            lines.append(Line(number, raw, "key", key, value.strip()))
        elif stripped.endswith(":") and _STANZA_NAME.fullmatch(stripped[:-1].rstrip()):
            in_stanza = True
            lines.append(Line(number, raw, "stanza", stripped[:-1].rstrip()))
        else:
            raise QmIniError(f"malformed line {quoted(stripped)!r}: expected 'Name:' starting a "
                             f"stanza, 'Key=Value', a comment (; or #) or a blank line",
                             source=source, line=number)
    return lines


def locate(lines: list[Line], source: str, keys: Mapping[str, Mapping[str, Parameter]],
           unknown: Callable[[str, str], str | None]) -> dict[str, Stanza]:
    """The stanzas named in ``keys`` (stanza name → lower-case key → parameter) among
    ``lines``, with the line of each parameter given.

    A key a stanza does not know is passed to ``unknown(stanza, key)``: None leaves it alone
    (another component's key), text is the reason of a :class:`QmIniError`. A repeated key
    or a repeated stanza raises :class:`QmIniError` naming both lines.
    """
    found: dict[str, Stanza] = {}
    current: str | None = None  # canonical name of the stanza being read, if one of ours
    for index, line in enumerate(lines):
        if line.kind == "stanza":
            current = next((s for s in keys if s.lower() == line.name.lower()), None)
            if current is not None:
                if current in found:
                    first = lines[found[current].header].number
                    raise QmIniError(f"a second {current}: stanza (the first starts at line "
                                     f"{first})", source=source, line=line.number)
                found[current] = Stanza(index, index)
            continue
        if line.kind != "key" or current is None:
            continue
        stanza = found[current]
        if stanza.last == stanza.header:  # the first key sets the stanza's indentation
            stanza.indent = line.raw[:len(line.raw) - len(line.raw.lstrip(" \t"))]
        stanza.last = index
        parameter = keys[current].get(line.name.lower())
        if parameter is None:
            reason = unknown(current, line.name)
            if reason is None:
                continue
            raise QmIniError(reason, source=source, line=line.number)
        if parameter.attribute in stanza.entries:
            first = lines[stanza.entries[parameter.attribute]].number
            raise QmIniError(f"{parameter.name} is given twice in the {current}: stanza "
                             f"(lines {first} and {line.number})", source=source, line=line.number)
        stanza.entries[parameter.attribute] = index
    return found


def update(text: str, source: str, keys: Mapping[str, Mapping[str, Parameter]],
           unknown: Callable[[str, str], str | None],
           wanted: Mapping[str, Sequence[tuple[Parameter, Any]]],
           new_stanza: Callable[[str, str], str]) -> str:
    """``text`` with the stanzas of ``wanted`` (stanza → (parameter, value) in order) saying
    those values; every other line kept byte for byte.

    A key line whose value already means the wanted value is left as it is (even if spelled
    ``linear``); others get the new value with their indentation and key spelling kept. A
    parameter missing from its stanza is added after the stanza's last key when its value is
    not the default. A missing stanza is appended as ``new_stanza(name, eol)`` gives it ("":
    none). ``keys`` and ``unknown`` are as for :func:`locate`.
    """
    lines = scan(text, source)
    stanzas = locate(lines, source, keys, unknown)
    eol = "\r\n" if lines and lines[0].raw.endswith("\r\n") else "\n"
    raws = [line.raw for line in lines]
    after: dict[int, list[str]] = {}
    appended: list[str] = []
    for stanza_name, values in wanted.items():
        stanza = stanzas.get(stanza_name)
        if stanza is None:
            appended.append(new_stanza(stanza_name, eol))
            continue
        added: list[str] = []
        for parameter, want in values:
            index = stanza.entries.get(parameter.attribute)
            if index is None:
                if want != parameter.default:
                    added.append(f"{stanza.indent}{parameter.name}={parameter.written(want)}{eol}")
            elif not _means(parameter, lines[index].value, want):
                raws[index] = _with_value(lines[index].raw, str(parameter.written(want)))
        if added:
            after.setdefault(stanza.last, []).extend(added)
    out: list[str] = []
    for index, raw in enumerate(raws):
        out.append(raw)
        if index in after:
            if not raw.endswith("\n"):  # the stanza's last key ends the text
                out.append(eol)
            out.extend(after[index])
    appended = [piece for piece in appended if piece]
    if appended:
        if out and not out[-1].endswith("\n"):
            out.append(eol)
        out.extend(appended)
    return "".join(out)


def _means(parameter: Parameter, text: str, value: Any) -> bool:
    """Whether ``text`` in qm.ini already stands for ``value``."""
    try:
        return parameter.parse(text) == value
    except ParameterError:
        return False


def _with_value(raw: str, value: str) -> str:
    """Key line ``raw`` with its value replaced, everything around it kept."""
    body = raw.rstrip("\r\n")
    end = raw[len(body):]
    indent = body[:len(body) - len(body.lstrip())]
    match = _VALUE_PART.fullmatch(body[len(indent):])
    assert match is not None  # scan let through only lines with a key and '='
    return f"{indent}{match['head']}{value}{match['tail']}{end}"
