"""Configuration parameters: their definitions, how a value is read from text and checked,
and how a configuration describes itself; shared by every platform and the platform registry.

A :class:`Parameter` has a name (and ``aliases``), a default, a meaning, where it is set
(``where``: the file section or statement that holds it; ``command``: what may change it while
running, and ``takes_effect``: when) and a *kind* saying what it may be: a whole number in a
range (:class:`Number`), a YES/NO switch (:class:`Switch`), one of a few words
(:class:`Choice`) or one line of text (:class:`Text`); a platform adds kinds of its own by
subclassing :class:`Kind`. :meth:`Parameter.parse` turns text into a checked value, each error
a :class:`~mqlog.core.errors.ParameterError` naming the parameter, the value (long text cut to
a readable prefix) and what is allowed; :func:`field` makes an attrs field that refuses a bad
value at construction; :class:`ParameterSet` looks parameters up by name in any case (an unknown
name is an :class:`~mqlog.core.errors.UnknownParameterError` with the closest names) and
applies ``--set`` items; :class:`ParameterRow` is one line of ``mqlog config`` and
:func:`human_bytes` the sizes it prints.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import attrs

from mqlog.core.errors import ParameterError, UnknownParameterError

__all__ = [
    "MAX_DIGITS",
    "QUOTE_CHARS",
    "Choice",
    "Kind",
    "Number",
    "Parameter",
    "ParameterRow",
    "ParameterSet",
    "Switch",
    "Text",
    "field",
    "human_bytes",
    "quoted",
    "renamed",
]

#: How many characters of a bad value an error message quotes.
QUOTE_CHARS = 40
#: Longer digit strings are not read as numbers (an RBA has at most 20 decimal digits);
#: refusing them early also keeps Python's int() limit on huge digit strings out of the way.
MAX_DIGITS = 20


def quoted(value: object) -> object:
    """``value`` as an error message may quote it: long text cut to a readable prefix."""
    if isinstance(value, str) and len(value) > QUOTE_CHARS:
        return value[:QUOTE_CHARS] + "..."
    return value


def renamed(error: ParameterError, name: str) -> ParameterError:
    """The same complaint about the same value, naming the parameter as the user wrote it
    (``log.NAME``, a command-line flag). The error's class must take ``(name, value,
    allowed)``, as :class:`ParameterError` does."""
    return type(error)(name, error.value, error.allowed)


def whole_number(digits: str, base: int = 10, max_digits: int = MAX_DIGITS) -> int | None:
    """``digits`` (upper-case, no blanks) as a whole number in ``base``, or None if it is not
    one or has more than ``max_digits`` significant digits."""
    pattern = r"[0-9]+" if base == 10 else r"[0-9A-F]+"
    if not re.fullmatch(pattern, digits) or len(digits.lstrip("0")) > max_digits:
        return None
    return int(digits, base)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


# ------------------------------------------------------------------------------ kinds


class Kind:
    """What a parameter may be. A kind reads text (:meth:`from_text`) and values given
    already typed (:meth:`from_value`), puts a value in its canonical form, judges it
    (:meth:`ok`), says what is allowed and how a value is written back."""

    def allowed(self) -> str:
        raise NotImplementedError

    def from_text(self, text: str) -> Any:
        """The value ``text`` stands for, not yet judged; None if it stands for none."""
        return text

    def from_value(self, value: Any) -> Any:
        """A value given already typed (not text), or None if this kind takes none such."""
        return None

    def canonical(self, value: Any) -> Any:
        """The canonical spelling of ``value``; anything not recognised unchanged."""
        return value

    def ok(self, value: Any) -> bool:
        raise NotImplementedError

    def shown(self, value: Any) -> object:
        """A bad value (text read, or a canonical value) as an error message quotes it."""
        return quoted(value)

    def not_a_value(self, allowed: str) -> str:
        """What an error says is allowed when text stands for no value at all."""
        return allowed

    def written(self, value: Any) -> Any:
        """``value`` as settings and files write it (what :meth:`Parameter.parse` reads back)."""
        return value


@attrs.frozen
class Number(Kind):
    """A whole number from ``low`` to ``high`` in decimal digits (blanks around allowed), or
    one of ``special`` values outside that range (such as 0 for "choose for me"), or one of
    ``words`` standing for a number (such as NOLIMIT). ``unit`` is said after the range;
    ``not_a_number`` is what an error says is allowed for text that is no number at all
    (``{allowed}``, ``{low}`` and ``{high}`` are replaced)."""

    low: int
    high: int
    special: tuple[int, ...] = ()
    unit: str = ""
    words: tuple[tuple[str, int], ...] = ()
    not_a_number: str = "a whole number: {allowed}"
    max_digits: int = MAX_DIGITS

    def allowed(self) -> str:
        unit = f" {self.unit}" if self.unit else ""
        span = " or ".join([*(str(v) for v in self.special), f"{self.low} to {self.high}{unit}"])
        return span + "".join(f" (or {word} = {value})" for word, value in self.words)

    def from_text(self, text: str) -> int | None:
        word = text.strip().upper()
        for name, value in self.words:
            if word == name:
                return value
        return whole_number(word, 10, self.max_digits)

    def from_value(self, value: Any) -> int | None:
        return value if _is_int(value) else None

    def ok(self, value: Any) -> bool:
        return _is_int(value) and (self.low <= value <= self.high or value in self.special)

    def not_a_value(self, allowed: str) -> str:
        return self.not_a_number.format(allowed=allowed, low=self.low, high=self.high)


@attrs.frozen
class Switch(Kind):
    """YES or NO, in any case; the value is a bool."""

    def allowed(self) -> str:
        return "YES or NO"

    def from_text(self, text: str) -> bool | None:
        return {"YES": True, "NO": False}.get(text.strip().upper())

    def from_value(self, value: Any) -> bool | None:
        return value if isinstance(value, bool) else None

    def ok(self, value: Any) -> bool:
        return isinstance(value, bool)

    def written(self, value: Any) -> str:
        return "YES" if value else "NO"


@attrs.frozen
class Choice(Kind):
    """One of ``choices``, read in any case and kept in the spelling given here.
    ``any_case_note``: whether :meth:`allowed` says that case does not matter."""

    choices: tuple[str, ...]
    any_case_note: bool = True

    def allowed(self) -> str:
        note = " (any case)" if self.any_case_note else ""
        return f"one of {', '.join(self.choices)}{note}"

    def from_text(self, text: str) -> str:
        return text.strip()

    def canonical(self, value: Any) -> Any:
        if isinstance(value, str):
            return {c.lower(): c for c in self.choices}.get(value.strip().lower(), value)
        return value

    def ok(self, value: Any) -> bool:
        return value in self.choices


@attrs.frozen
class Text(Kind):
    """One line of text, not empty, with no blanks around it (blanks around text read are
    removed first). ``what`` names it in :meth:`allowed` ("a path")."""

    what: str = "text"

    def allowed(self) -> str:
        return f"{self.what}: one line, not empty, no leading or trailing blanks"

    def from_text(self, text: str) -> str:
        return text.strip()

    def ok(self, value: Any) -> bool:
        return (isinstance(value, str) and value != "" and value == value.strip()
                and len(value.splitlines()) == 1)


# -------------------------------------------------------------------------- parameter


@attrs.frozen
class Parameter:
    """One configuration parameter: its name, default, kind, meaning and where it is set.

    ``attribute`` is its name in a configuration object (default: the name in lower case);
    ``aliases`` are other names a lookup accepts; ``where`` is the file section or statement
    that holds it, ``command`` the run-time command that may change it (None: only at start)
    and ``takes_effect`` when such a change applies.
    """

    name: str
    default: Any
    kind: Kind
    meaning: str
    where: str = ""
    attribute: str = attrs.field(default=attrs.Factory(lambda self: self.name.lower(), takes_self=True))
    aliases: tuple[str, ...] = ()
    command: str | None = None
    takes_effect: str = ""

    @property
    def allowed(self) -> str:
        """What the parameter may be, as error messages and ``mqlog config`` say it."""
        return self.kind.allowed()

    @property
    def names(self) -> tuple[str, ...]:
        return (self.name, *self.aliases)

    def canonical(self, value: Any) -> Any:
        return self.kind.canonical(value)

    def check(self, value: Any, name: str | None = None) -> None:
        """Raise :class:`ParameterError` (naming ``name``, default the parameter's) unless
        ``value``, in canonical form, is allowed."""
        if not self.kind.ok(value):
            raise ParameterError(name or self.name, self.kind.shown(value), self.allowed)

    def parse(self, text: Any, name: str | None = None) -> Any:
        """The checked value ``text`` stands for: text (from a file, a flag or ``--set``) or a
        value already of the kind's type. Errors name ``name`` (default: the parameter)."""
        name = name or self.name
        if isinstance(text, str):
            value = self.kind.from_text(text)
            if value is None:
                raise ParameterError(name, self.kind.shown(text), self.kind.not_a_value(self.allowed))
        else:
            value = self.kind.from_value(text)
            if value is None:
                raise ParameterError(name, self.kind.shown(text), self.allowed)
        value = self.canonical(value)
        self.check(value, name)
        return value

    def written(self, value: Any) -> Any:
        """``value`` as settings and files write it; :meth:`parse` reads it back."""
        return self.kind.written(value)

    def described_meaning(self) -> str:
        """The meaning, with the command that changes it while running and when, if any."""
        if self.command is None:
            return self.meaning
        return f"{self.meaning}; {self.command}, {self.takes_effect}"

    def row(self, value: Any) -> ParameterRow:
        """This parameter's line of ``mqlog config`` when it has ``value``."""
        return ParameterRow(self.name, self.written(value), self.written(self.default),
                            self.allowed, self.described_meaning())


def field(parameter: Parameter) -> Any:
    """An attrs field holding ``parameter``: its default, converted to the canonical form and
    checked whenever an object is made (``attrs.evolve`` included); the parameter is in the
    field's metadata under ``"parameter"``."""
    return attrs.field(default=parameter.default, converter=parameter.canonical,
                       validator=lambda _inst, _attr, value: parameter.check(value),
                       metadata={"parameter": parameter})


class ParameterRow(NamedTuple):
    """One line of ``mqlog config``: name, value, default, what is allowed, meaning."""

    name: str
    value: Any
    default: Any
    allowed: str
    meaning: str


# ---------------------------------------------------------------------- parameter set


@attrs.frozen
class ParameterSet:
    """The parameters of one platform, in the order it lists them; looked up by name or alias
    in any case. ``owner`` names them in errors ("a log parameter of platform zos")."""

    parameters: tuple[Parameter, ...]
    owner: str
    _by_name: dict[str, Parameter] = attrs.field(
        init=False, repr=False, eq=False,
        default=attrs.Factory(lambda self: {n.lower(): p for p in self.parameters for n in p.names}, takes_self=True))
    _by_attribute: dict[str, Parameter] = attrs.field(
        init=False, repr=False, eq=False,
        default=attrs.Factory(lambda self: {p.attribute: p for p in self.parameters}, takes_self=True))

    def __iter__(self):
        return iter(self.parameters)

    def __len__(self) -> int:
        return len(self.parameters)

    @property
    def known(self) -> str:
        """The names, for an error about an unknown one."""
        return ", ".join(p.name for p in self.parameters)

    def get(self, name: str) -> Parameter | None:
        """The parameter ``name`` (or an alias of it) names, in any case; or None."""
        return self._by_name.get(name.lower())

    def by_attribute(self, attribute: str) -> Parameter | None:
        return self._by_attribute.get(attribute)

    def lookup(self, key: str, value: object, prefix: str = "log.") -> Parameter:
        """The parameter ``key`` names, in any case and with or without ``prefix``; an
        unknown name raises :class:`ParameterError` naming ``prefix + key`` and listing the
        known ones."""
        bare = key.strip()
        if prefix and bare.lower().startswith(prefix.lower()):
            bare = bare[len(prefix):]
        parameter = self.get(bare.strip())
        if parameter is None:
            raise self.unknown(f"{prefix}{bare}", bare.strip(), value)
        return parameter

    def unknown(self, shown: str, name: str, value: object) -> UnknownParameterError:
        """The error for ``name`` (shown as ``shown``) naming no parameter here: a wrong
        name, not a bad value, with the closest names (aliases too, as spelt) and all."""
        spelt = {n.lower(): n for p in self.parameters for n in p.names}
        close = difflib.get_close_matches(name.lower(), list(spelt), n=3)
        return UnknownParameterError(shown, quoted(value), f"{self.owner}: {self.known}", owner=self.owner,
                                     known=tuple(p.name for p in self.parameters),
                                     close=tuple(spelt[c] for c in close))

    def choose(self, values: Mapping[str, Any], prefix: str = "log.") -> dict[str, Any]:
        """``--set`` items (``prefix``NAME → text or value) as checked values by attribute;
        every error names ``prefix``NAME, a parameter given twice (in two spellings) too."""
        chosen: dict[str, Any] = {}
        given: dict[str, str] = {}
        for key, text in values.items():
            parameter = self.lookup(key, text, prefix)
            name = f"{prefix}{parameter.name}"
            if parameter.attribute in chosen:
                raise ParameterError(name, quoted(text), f"to be set once: {given[parameter.attribute]} and "
                                     f"{prefix}{key.strip().removeprefix(prefix)} name the same parameter")
            given[parameter.attribute] = f"{prefix}{key.strip().removeprefix(prefix)}"
            chosen[parameter.attribute] = parameter.parse(text, name)
        return chosen

    def rows(self, values: Callable[[Parameter], Any] | Mapping[str, Any]) -> list[ParameterRow]:
        """One :class:`ParameterRow` per parameter; ``values`` gives each one's value (by
        attribute, or a function of the parameter)."""
        get = values if callable(values) else (lambda p: values[p.attribute])
        return [p.row(get(p)) for p in self.parameters]


def human_bytes(n: int) -> str:
    """``n`` bytes as ``mqlog config`` says a size: whole binary units, or one decimal."""
    for unit, size in (("EiB", 1 << 60), ("PiB", 1 << 50), ("TiB", 1 << 40), ("GiB", 1 << 30),
                       ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n // size} {unit}" if n % size == 0 else f"{n / size:.1f} {unit}"
    return f"{n} bytes"
