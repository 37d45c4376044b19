"""Named profiles kept as TOML data – the storage devices (``devices.toml``) and the hosts
(``hosts.toml``) – and how a user's own file of them is read and one of them chosen.

A :class:`ProfileCatalogue` knows one kind of profile: its attrs class, its fields (which are
whole numbers, which text, the rest numbers), the exception to raise and the packaged file. A
file has one table per profile; a table may say ``base = "<profile>"`` (a built-in, or one
defined earlier in the same file) and give only the fields that differ, otherwise every field
is required but the catalogue's optional ones. Nothing in a file is evaluated: it is TOML data, and every problem – unreadable,
not UTF-8, not TOML, an unknown key, a value of the wrong type or out of range, a missing
field, an unknown base, an unknown name – is one line naming the file, the profile and the
field.
"""

from __future__ import annotations

import functools
import json
import math
import os
import types
from importlib import resources
from typing import Any, Mapping

import attrs

try:  # Python 3.11+
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

from mqlog.core.errors import MqlogError, ParameterError

__all__ = ["ProfileCatalogue", "as_float", "is_number", "fmt_number", "check_range", "check_text"]


def as_float(value: Any) -> Any:
    """An int from TOML as a float; anything else unchanged (the validator judges it)."""
    return float(value) if isinstance(value, int) and not isinstance(value, bool) else value


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def fmt_number(x: float) -> str:
    """A bound as a reader writes it: 10000000 not 1e+07, 0.5 not 0.50000."""
    return f"{int(x):d}" if float(x).is_integer() and not math.isinf(x) else f"{x:g}"


def check_range(prefix: str, lo: float, hi: float, unit: str = "", *, lo_open: bool = False,
                integer: bool = False):
    """An attrs validator raising :class:`ParameterError` named ``<prefix><field>``."""
    left = "(" if lo_open else "["
    allowed = f"{'an integer' if integer else 'a number'} in {left}{fmt_number(lo)}, {fmt_number(hi)}]{unit}"

    def validate(instance: Any, attribute: attrs.Attribute, value: Any) -> None:
        if integer:
            ok = isinstance(value, int) and not isinstance(value, bool)
        else:
            ok = is_number(value) and not math.isnan(value)
        if not (ok and (lo < value if lo_open else lo <= value) and value <= hi):
            raise ParameterError(f"{prefix}{attribute.name}", value, allowed)

    return validate


def check_text(prefix: str):
    """An attrs validator: a string (``name``: a non-empty one), else ``<prefix><field>``'s error."""
    def validate(instance: Any, attribute: attrs.Attribute, value: Any) -> None:
        if not isinstance(value, str) or (attribute.name == "name" and not value.strip()):
            raise ParameterError(f"{prefix}{attribute.name}", value,
                                 "a non-empty string" if attribute.name == "name" else "a string")
    return validate


@attrs.frozen
class ProfileCatalogue:
    """One kind of profile: how its TOML tables are read and one of them is chosen."""

    #: the attrs class a profile is (its fields but ``name`` are the table's fields)
    cls: type
    #: raised for every problem (a subclass of MqlogError)
    error: type[MqlogError]
    #: what a profile is called in messages: "profile" (devices), "host"
    noun: str
    #: what the file holds, in messages: "device profiles", "host profiles"
    plural: str
    #: an example table name for the empty-file message: "mydisk", "myhost"
    example: str
    #: the option that names one, for messages about an unknown name ("" for none)
    option: str
    #: the packaged file (package data of ``package``), and the directory it is in when the
    #: package is not installed (a source checkout run without an install)
    package: str
    filename: str
    here: str
    int_fields: frozenset = frozenset()
    text_fields: frozenset = frozenset({"description"})
    #: fields a table without ``base`` may leave out (the class gives their default)
    optional_fields: frozenset = frozenset()
    #: the prefix of the attrs validators' ParameterError names ("device.", "host.")
    param_prefix: str = ""
    #: fields whose value is a table of its own (``fs_calls = { open = "round-trip" }``): a
    #: table with ``base`` overrides the base's entries one by one
    table_fields: frozenset = frozenset()

    @property
    def fields(self) -> tuple[str, ...]:
        return tuple(a.name for a in attrs.fields(self.cls) if a.name != "name")

    # -- reading ---------------------------------------------------------------------------

    def parse(self, data: Mapping[str, Any], source: str, inherit: Mapping[str, Any]) -> dict[str, Any]:
        """Profiles from a parsed TOML document; ``inherit`` are the bases besides earlier ones."""
        error, fields = self.error, self.fields
        allowed = ("base",) + fields
        if not data:
            raise error(f"{source}: no {self.plural} (expected tables like [{self.example}])")
        out: dict[str, Any] = {}
        for name, table in data.items():
            where = f"{source}: {self.noun} [{name}]"
            if not isinstance(table, dict):
                raise error(f"{source}: top-level key {name!r} is not a {self.noun} table; write it as a "
                            f"[{name}] section with the fields {', '.join(fields)}")
            unknown = [k for k in table if k not in allowed]
            if unknown:
                raise error(f"{where}: unknown field {unknown[0]!r}; allowed: {', '.join(allowed)}")
            for key, value in table.items():
                if key in self.table_fields:
                    ok, want = isinstance(value, dict), "a table"
                elif key == "base" or key in self.text_fields:
                    ok, want = isinstance(value, str), "a string"
                elif key in self.int_fields:
                    ok, want = isinstance(value, int) and not isinstance(value, bool), "an integer"
                else:
                    ok, want = is_number(value), "a number"
                if not ok:
                    raise error(f"{where}: field {key!r} must be {want}, got {type(value).__name__} {value!r}")
            if "base" in table:
                base = out.get(table["base"]) or inherit.get(table["base"])
                if base is None:
                    known = list(out) + [k for k in inherit if k not in out]
                    raise error(f"{where}: field 'base': base {table['base']!r} is not a built-in {self.noun} or one "
                                f"defined earlier in the file (known: {', '.join(known) or 'none'})")
                values = attrs.asdict(base)
                for key, value in table.items():
                    if key in self.table_fields and isinstance(values.get(key), dict):
                        values[key] = {**values[key], **value}  # entry by entry
                    elif key != "base":
                        values[key] = value
            else:
                missing = [f for f in fields if f not in table and f not in self.optional_fields]
                if missing:
                    raise error(f"{where}: missing field{'s' if len(missing) > 1 else ''} "
                                f"{', '.join(repr(m) for m in missing)} (or say base = \"<{self.noun}>\" to "
                                f"inherit them)")
                values = dict(table)
            values["name"] = name
            try:
                out[name] = self.cls(**values)
            except ParameterError as exc:
                raise error(f"{where}: field {exc.name.removeprefix(self.param_prefix)!r}: {exc}") from exc
        return out

    def parse_bytes(self, raw: bytes, source: str) -> dict[str, Any]:
        try:
            return tomllib.loads(raw.decode("utf-8"))
        except UnicodeDecodeError as exc:
            raise self.error(f"{source}: not UTF-8 text: {exc}") from exc
        except tomllib.TOMLDecodeError as exc:
            raise self.error(f"{source}: not valid TOML: {exc}") from exc

    def builtins(self) -> Mapping[str, Any]:
        """The packaged profiles (read once per catalogue)."""
        return _builtins(self)

    def load(self, path: str | os.PathLike[str] | None = None) -> dict[str, Any]:
        """The packaged profiles, or (with ``path``) only those that file defines, in file order."""
        if path is None:
            return dict(self.builtins())
        source = os.fspath(path)
        try:
            with open(source, "rb") as f:
                raw = f.read()
        except OSError as exc:
            raise self.error(f"{source}: cannot read {self.plural[:-1]} file: {exc.strerror or exc}") from exc
        return self.parse(self.parse_bytes(raw, source), source, self.builtins())

    def dump(self, profiles: Any, comments: Any = ()) -> str:
        """``profiles`` as a file of this kind (:meth:`load` reads it back to equal profiles),
        after ``comments`` (lines, each starting with ``#``); optional fields left unset are
        left out."""
        lines = list(comments)
        for profile in profiles:
            bare = profile.name and all(c.isascii() and (c.isalnum() or c in "-_") for c in profile.name)
            lines += ["", f"[{profile.name if bare else _toml_scalar(profile.name)}]"]
            values = attrs.asdict(profile)
            lines += [f"{field} = {_toml_scalar(values[field])}" for field in self.fields if values[field] is not None]
        return "\n".join(lines).lstrip("\n") + "\n"

    def get(self, spec: Any) -> Any:
        """One profile: a built-in name (any case), ``file.toml`` (its only profile) or
        ``file.toml:name``; a profile object is returned unchanged."""
        if isinstance(spec, self.cls):
            return spec
        error, option = self.error, f"{self.option}: " if self.option else ""
        if not isinstance(spec, str) or not spec.strip():
            raise error(f"{option}a {self.plural[:-1]} is a name or a file.toml[:name], got {spec!r}")
        builtins = self.builtins()
        key = spec.strip()
        for candidate in (key, key.lower()):
            if candidate in builtins:
                return builtins[candidate]
        file, name = key, None
        if not key.lower().endswith(".toml"):
            head, sep, tail = key.rpartition(":")
            if sep and head.lower().endswith(".toml"):
                file, name = head, tail
            else:
                raise error(f"{option}unknown {self.plural[:-1]} {spec!r}; known: {', '.join(builtins)} "
                            f"(or give a file: file.toml or file.toml:name)")
        profiles = self.load(file)
        if name is None:
            if len(profiles) == 1:
                return next(iter(profiles.values()))
            raise error(f"{file}: defines {len(profiles)} {self.noun}s ({', '.join(profiles)}); "
                        f"choose one with {file}:<name>")
        if name not in profiles:
            raise error(f"{file}: no {self.noun} {name!r}; it defines: {', '.join(profiles)}")
        return profiles[name]


def _toml_scalar(value: Any) -> str:
    """A profile's value as TOML: strings as basic strings (JSON's escapes are TOML's, but for
    DEL, which TOML wants escaped too), numbers as Python writes them (finite: validated)."""
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")
    if isinstance(value, dict):  # a table field, as an inline table
        return "{ " + ", ".join(f"{k} = {_toml_scalar(v)}" for k, v in value.items()) + " }"
    return repr(value)


@functools.lru_cache(maxsize=None)
def _builtins(catalogue: ProfileCatalogue) -> Mapping[str, Any]:
    try:
        raw = resources.files(catalogue.package).joinpath(catalogue.filename).read_bytes()
    except (ImportError, OSError, TypeError, ValueError):  # pragma: no cover - not installed
        with open(os.path.join(catalogue.here, catalogue.filename), "rb") as f:
            raw = f.read()
    source = f"{catalogue.package}/{catalogue.filename} (built-in)"
    return types.MappingProxyType(catalogue.parse(catalogue.parse_bytes(raw, source), source, {}))
