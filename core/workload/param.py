"""A workload parameter: :class:`Param` (its name, default, kind, range or choices, and what
it means), reading a value for it from a spec file or a ``--set`` word (:func:`parse_value`:
booleans as words, integers in decimal or hex, numbers checked against the range), writing one
back (:func:`format_value`), and :class:`SpecValueError`, the error that names the field, the
value and what is allowed. :mod:`mqlog.core.workload.spec` builds workload definitions and
specs from these.
"""

from __future__ import annotations

import math
from typing import Any

import attrs

from mqlog.core.errors import ParameterError, SpecError

#: The largest message MQ accepts (MAXMSGL's upper limit, 100 MiB).
MAX_MESSAGE_SIZE = 104_857_600

_KINDS = (int, float, bool, str)
_BOOL_WORDS = {"true": True, "yes": True, "on": True, "1": True,
               "false": False, "no": False, "off": False, "0": False}


class SpecValueError(SpecError, ParameterError):
    """A workload parameter's value is of the wrong kind or out of range.

    Both a :class:`SpecError` (the spec is wrong) and a :class:`ParameterError`: ``name`` is the
    dotted field (``workload.message_size``, ``params.message_size``), ``value`` what was given,
    ``allowed`` what would do. ``reason``, when given, replaces the ``name=value is not valid``
    wording (used for values that are not even of the right kind).
    """

    def __init__(self, name: str, value: object, allowed: str, *, source: str | None = None,
                 reason: str | None = None):
        if reason is None:
            reason = f"{name}={short_repr(value)} is not valid: allowed {allowed}"
            prefix = f"{source}: " if source else ""
        else:
            prefix = "".join(f"{part}: " for part in (source, name) if part)
        # Neither base's __init__: their signatures differ, so set both sets of attributes here.
        Exception.__init__(self, prefix + reason)
        self.reason = reason
        self.source = source
        self.field = name
        self.name = name
        self.value = value
        self.allowed = allowed


def short_repr(value: object, limit: int = 60) -> str:
    """``repr(value)``, cut short so that an error message stays one readable line."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _fmt_number(x: int | float) -> str:
    if isinstance(x, float) and x.is_integer() and abs(x) < 1e16:
        return str(int(x))
    return str(x)


def format_value(value: object) -> str:
    """``value`` as ``--set workload.NAME=VALUE`` writes it: ``true``, ``2048``, ``text``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _check_kind(instance: Any, attribute: attrs.Attribute, value: Any) -> None:
    if value not in _KINDS:
        raise TypeError(f"Param.kind must be one of int, float, bool, str, got {value!r}")


@attrs.frozen
class Param:
    """One parameter of a workload: its name, default, kind, one-line doc and allowed values.

    ``low``/``high`` bound numbers (inclusive, unless ``low_exclusive``); ``choices`` lists the
    values a ``str`` parameter may take; ``words`` are values a ``bool`` parameter takes
    besides true and false (log-fill's ``commit=never``), kept as the word in lower case.
    :meth:`check` validates a typed value and :func:`parse_value` one given as text.
    """

    name: str
    default: object
    kind: type = attrs.field(validator=_check_kind)
    doc: str
    low: int | float | None = None
    high: int | float | None = None
    choices: tuple[str, ...] | None = attrs.field(
        default=None, converter=attrs.converters.optional(tuple))
    low_exclusive: bool = False
    words: tuple[str, ...] = attrs.field(default=(), converter=tuple)

    def __attrs_post_init__(self) -> None:
        self.check(self.default)  # a definition whose default is invalid is a bug

    @property
    def allowed(self) -> str:
        """What values are allowed, in words: ``0 to 104857600``, ``true or false``, ..."""
        if self.kind is bool:
            return f"true, false or {' or '.join(self.words)}" if self.words else "true or false"
        if self.kind is str:
            if self.choices:
                return "one of " + ", ".join(self.choices)
            return "any text"
        if self.low is not None and self.high is not None:
            if self.low_exclusive:
                return f"more than {_fmt_number(self.low)}, up to {_fmt_number(self.high)}"
            return f"{_fmt_number(self.low)} to {_fmt_number(self.high)}"
        if self.low is not None:
            return f"{'more than' if self.low_exclusive else 'at least'} {_fmt_number(self.low)}"
        if self.high is not None:
            return f"at most {_fmt_number(self.high)}"
        return "any integer" if self.kind is int else "any finite number"

    @property
    def expected(self) -> str:
        """The kind and range together, for a value of the wrong kind: ``an integer 0 to 10``."""
        if self.kind is bool or (self.kind is str and self.choices):
            return self.allowed
        noun = {int: "an integer", float: "a number", str: "a string"}[self.kind]
        if self.kind is str or self.allowed.startswith("any"):
            return noun
        return f"{noun} {self.allowed}"

    def check(self, value: object, *, field: str | None = None,
              source: str | None = None) -> object:
        """``value`` validated for this parameter (an ``int`` given for a float becomes a float).

        Raises :class:`SpecValueError` naming ``field`` (default ``workload.<name>``).
        """
        field = field or f"workload.{self.name}"
        kind = self.kind
        if kind is bool and self.words and type(value) is str:
            # a spec file's commit = "never" (or "true", as text): the word, or the bool it spells
            word = value.strip().lower()
            if word in self.words:
                return word
            if word in _BOOL_WORDS:
                return _BOOL_WORDS[word]
        if kind is float and type(value) is int:
            try:
                value = float(value)
            except OverflowError:  # beyond any float, so beyond any range
                raise SpecValueError(field, value, self.allowed, source=source) from None
        if type(value) is not kind:
            raise SpecValueError(field, value, self.allowed, source=source,
                                 reason=f"expected {self.expected}, got {short_repr(value)}")
        if kind is str:
            if self.choices and value not in self.choices:
                # any case, as MQ reads its own values; the choice's own spelling is kept
                canonical = {c.lower(): c for c in self.choices}.get(value.strip().lower())
                if canonical is None:
                    raise SpecValueError(field, value, self.allowed, source=source)
                return canonical
            return value
        if kind is float and not math.isfinite(value):
            raise SpecValueError(field, value, self.allowed, source=source)
        if self.low is not None and (value <= self.low if self.low_exclusive else value < self.low):
            raise SpecValueError(field, value, self.allowed, source=source)
        if self.high is not None and value > self.high:
            raise SpecValueError(field, value, self.allowed, source=source)
        return value


def parse_value(param: Param, text: str, *, field: str | None = None,
                source: str | None = None) -> object:
    """The value of ``param`` written as ``text`` (a ``--set`` value), checked.

    Booleans are ``true/false``, ``yes/no``, ``on/off`` or ``1/0`` (any case); integers may use
    ``_`` separators and ``0x``/``0o``/``0b`` prefixes; floats are Python float literals; text is
    taken as is. Raises :class:`SpecValueError` naming ``field`` (default ``workload.<name>``),
    the value and what is allowed.
    """
    field = field or f"workload.{param.name}"
    kind = param.kind
    if kind is str:
        return param.check(text, field=field, source=source)
    word = text.strip()
    value: object = None
    if word.isascii():
        if kind is bool:
            value = word.lower() if word.lower() in param.words else _BOOL_WORDS.get(word.lower())
        elif kind is int:
            value = _parse_int(word)
        else:
            value = _parse_float(word)
    if value is None:
        raise SpecValueError(field, text, param.allowed, source=source,
                             reason=f"expected {param.expected}, got {short_repr(text)}")
    return param.check(value, field=field, source=source)


def _parse_int(word: str) -> int | None:
    try:
        return int(word, 10)
    except ValueError:
        pass
    try:
        return int(word, 0)  # 0x.., 0o.., 0b..
    except ValueError:  # also int()'s limit on the number of digits
        return None


def _parse_float(word: str) -> float | None:
    try:
        value = float(word)
    except ValueError:
        value = _parse_int(word)  # a hex integer is a fine number too
        return None if value is None else _int_to_float(value)
    return value


def _int_to_float(value: int) -> float | None:
    try:
        return float(value)
    except OverflowError:
        return None

