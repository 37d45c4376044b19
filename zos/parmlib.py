"""Assembler macro text as in a CSQ4ZPRM job (the system parameter module's CSQ6LOGP, CSQ6SYSP
and CSQ6ARVP statements), split into statements and operands. ``*`` (or ``.*``) in column 1
starts a comment; a statement is ``[label] operation operands [remarks]``; a non-blank column
72 (or, leniently, an operand field ending in a comma) continues the operands on the next
line, and columns 73-80 are sequence numbers. An operand is ``KEYWORD=value``, split at
commas outside parentheses and quotes. What the keywords mean is
:mod:`mqlog.zos.config`'s business; this module only reads the text, each error naming the
file and line (:class:`ZosConfigFileError`).
"""

from __future__ import annotations

from typing import Any

from mqlog.core.errors import ConfigFileError, ConfigFileValueError
from mqlog.core.params import quoted

__all__ = ["ZosConfigFileError", "ZosConfigFileValueError", "first_operation", "operands",
           "statements"]


class ZosConfigFileError(ConfigFileError):
    """A CSQ6LOGP-style or NAME=VALUE configuration file is malformed."""


class ZosConfigFileValueError(ConfigFileValueError, ZosConfigFileError):
    """A value in a configuration file is of the wrong kind or out of range."""


def first_operation(text: str) -> str:
    """The operation of the first statement in ``text`` ("" if none), in the case written:
    the first word of a line starting with a blank, else the word after the label."""
    first = next((line for line in text.splitlines()
                  if line.strip() and not line.startswith(("*", ".*", "#", ";"))), "")
    words = first.split()
    if first[:1] not in ("", " ", "\t") and len(words) > 1:
        return words[1]
    return words[0] if words else ""


#: Assembler source: column 72 marks a continuation, columns 73-80 are sequence numbers.
_CONTINUATION_COLUMN = 71


def statements(text: str, source: str) -> list[tuple[int, str, str]]:
    """Assembler statements in ``text``: (line of the first line, operation, operand field)."""
    out: list[tuple[int, str, str]] = []
    current: list[Any] | None = None  # [line, operation, operands] of a continued statement
    for number, raw in enumerate(text.splitlines(), 1):
        body = raw[:_CONTINUATION_COLUMN]
        marked = len(raw) > _CONTINUATION_COLUMN and not raw[_CONTINUATION_COLUMN].isspace()
        if current is not None:
            words = body.split()
            piece = words[0] if words else ""
            current[2] += piece
            if not (marked or piece.endswith(",")):
                out.append(tuple(current))  # type: ignore[arg-type]
                current = None
            continue
        if not body.strip() or raw.startswith(("*", ".*")):
            continue
        words = body.split()
        if not body[0].isspace():
            words = words[1:]  # the label
        if not words:
            raise ZosConfigFileError("a label with no operation", source=source, line=number)
        operands = words[1] if len(words) > 1 else ""
        statement = [number, words[0], operands]
        if marked or operands.endswith(","):
            current = statement
        else:
            out.append(tuple(statement))  # type: ignore[arg-type]
    if current is not None:
        raise ZosConfigFileError("the last statement is continued but no line follows",
                                 source=source, line=current[0])
    return out


def operands(field: str, source: str, line: int) -> list[tuple[str, str]]:
    """``KEY=VALUE`` operands of a macro, split at commas outside parentheses and quotes."""
    parts: list[str] = []
    depth, in_quotes, start = 0, False, 0
    for i, ch in enumerate(field):
        if ch == "'":
            in_quotes = not in_quotes
        elif not in_quotes and ch == "(":
            depth += 1
        elif not in_quotes and ch == ")":
            depth -= 1
        elif not in_quotes and depth == 0 and ch == ",":
            parts.append(field[start:i])
            start = i + 1
    parts.append(field[start:])
    out = []
    for part in parts:
        if not part:
            continue
        keyword, equals, value = part.partition("=")
        if not equals or not keyword:
            raise ZosConfigFileError(f"malformed operand {quoted(part)!r}: expected KEYWORD=value",
                                     source=source, line=line)
        out.append((keyword, value))
    return out
