"""A distributed queue manager's log configuration: qm.ini's ``Log:`` stanza and ``crtmqm``.

:class:`LogConfig` holds every parameter of SPEC §4.1 and §4.6 under the qm.ini name in
snake_case (``LogPrimaryFiles`` → ``log_primary_files``); :data:`PARAMETERS` maps each to its
qm.ini spelling, stanza, default, range and meaning. A value out of range fails at
construction with a :class:`~mqlog.core.errors.ParameterError` naming the parameter, the
value and the range. Limits are those of AIX and Linux (Windows allows fewer files).

Where a configuration comes from, each with its own named constructor:

* :meth:`LogConfig.from_qm_ini` – a queue manager's ``qm.ini`` text;
* :meth:`LogConfig.from_crtmqm` – ``crtmqm`` flags (``-lp -ls -lf -lc/-ll/-lla/-lln -ld``),
  with creation semantics (:meth:`LogConfig.at_creation`): a value below its minimum is
  replaced by the default, with a note saying so; one above its maximum is refused
  ("log size not valid", :class:`LogSizeNotValid`);
* :meth:`LogConfig.from_settings` – ``--set log.NAME=VALUE`` items, qm.ini names in any case;
  strict, like the plain constructor: too low and too high are both refused.

The qm.ini format, as read here. A line whose text is ``Name:`` starts a stanza; the
stanza's ``Key=Value`` lines (indented in files MQ writes, though indentation is not needed)
follow until the next ``Name:`` line. Blank lines and lines whose first non-blank character
is ``;`` or ``#`` are comments. Anything else – and a ``Key=Value`` line before the first
stanza – is malformed, reported with the file and line number (:class:`QmIniError`).
Values are taken verbatim up to the end of the line (no inline comments: a path may
contain ``;`` or ``#``), with surrounding blanks removed; keys and the choice values
(``LogType=linear``) are read in any case and written in MQ's spelling.

* ``Log:`` holds LogPrimaryFiles, LogSecondaryFiles, LogFilePages, LogType, LogBufferPages,
  LogPath, LogWriteIntegrity and LogManagement. Any other key there is an error naming the
  key and its line.
* The checkpoint tunables (CheckPointLogRecdMax/Min, CheckPointWaitLen) are read from
  ``TuningParameters:``, where IBM's checkpoint technote puts them; that stanza's other keys
  belong to other components and are left alone. Written in ``Log:`` they are an error
  saying where they belong.
* A key given twice in a stanza, or a second ``Log:`` or ``TuningParameters:`` stanza, is an
  error naming both lines: MQ's own choice between them is undocumented, and silently
  taking one would hide a mistake.
* Other stanzas (``ExitPath:``, ``Service:``, ...) are checked only for well-formed lines.
* With no ``Log:`` stanza at all, every log parameter keeps its default.

:meth:`LogConfig.update_qm_ini` writes a configuration back into a full qm.ini text: only
the lines of ``Log:`` and ``TuningParameters:`` whose value changes are rewritten (keeping
their indentation and spelling of the key), keys that must now differ from the default are
added after the stanza's last key, a missing ``Log:`` stanza is appended in full; every
other line is left byte for byte as it was. ``from_qm_ini(config.update_qm_ini(text)) ==
config`` for any text ``from_qm_ini`` accepts the structure of.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

import attrs

from mqlog.core.errors import ConfigFileError, ConfigFileValueError, ParameterError

__all__ = [
    "ACTIVE_LOG_FILES_MAX",
    "ACTIVE_LOG_FILES_MIN",
    "ARCHIVE",
    "AUTOMATIC",
    "CIRCULAR",
    "DOUBLE_WRITE",
    "LINEAR",
    "LOG_PAGE_BYTES",
    "MANUAL",
    "PARAMETERS",
    "SINGLE_WRITE",
    "TRIPLE_WRITE",
    "USABLE_PERCENT",
    "Created",
    "LogConfig",
    "LogParameter",
    "LogSizeNotValid",
    "ParameterRow",
    "QmIniError",
    "QmIniValueError",
]

#: MQ sizes every log quantity (file, buffer) in pages of 4 KiB.
LOG_PAGE_BYTES = 4096
#: LogBufferPages=0 asks the queue manager to choose; since V8 it chooses 512 pages (2 MiB).
BUFFER_PAGES_WHEN_ZERO = 512
#: A running unit of work may span only ~80% of the active log (SPEC §4.4): the other ~20%
#: is held back so that checkpoints – which free log space – can always be written.
USABLE_PERCENT = 80
#: Primary plus secondary files in the active log (AIX and Linux; Windows: at most 255).
ACTIVE_LOG_FILES_MIN = 3
ACTIVE_LOG_FILES_MAX = 511

CIRCULAR = "CIRCULAR"
LINEAR = "LINEAR"
SINGLE_WRITE = "SingleWrite"
DOUBLE_WRITE = "DoubleWrite"
TRIPLE_WRITE = "TripleWrite"
MANUAL = "Manual"
AUTOMATIC = "Automatic"
ARCHIVE = "Archive"

LOG_STANZA = "Log"
TUNING_STANZA = "TuningParameters"

#: How many characters of a bad value an error message quotes.
_QUOTE_CHARS = 40
#: Longer digit strings cannot be in any range here; refusing them early also keeps Python's
#: int() limit on huge digit strings out of the way.
_MAX_DIGITS = 12


def _short(value: object) -> object:
    """``value`` as an error message may quote it: long text cut to a readable prefix."""
    if isinstance(value, str) and len(value) > _QUOTE_CHARS:
        return value[:_QUOTE_CHARS] + "..."
    return value


# ----------------------------------------------------------------------------- errors


class LogSizeNotValid(ParameterError):
    """``crtmqm`` refuses a log parameter above its maximum ("log size not valid").

    A value *below* the minimum at creation is replaced by the default instead
    (:meth:`LogConfig.at_creation`).
    """

    def __init__(self, name: str, value: object, allowed: str):
        super().__init__(name, value, allowed)
        self.args = (f"log size not valid: {self.args[0]}",)


class QmIniError(ConfigFileError):
    """A qm.ini text is malformed, or its log stanzas hold a key mqlog does not know."""

    def __init__(self, reason: str, *, source: str = "qm.ini", line: int | None = None):
        super().__init__(reason, source=source, line=line)


class QmIniValueError(ConfigFileValueError, QmIniError):
    """A value in qm.ini is of the wrong kind or out of range (a :class:`QmIniError` and a
    :class:`~mqlog.core.errors.ParameterError`)."""


def _renamed(error: ParameterError, name: str) -> ParameterError:
    """The same complaint about the same value, naming the parameter as the user wrote it."""
    return type(error)(name, error.value, error.allowed)


# ------------------------------------------------------------------------- parameters


@attrs.frozen
class LogParameter:
    """One log parameter: its qm.ini name, where it lives, its default and what it may be.

    A parameter is a number (``low``..``high``, plus any ``special`` values outside that
    range), a choice among ``choices`` (read in any case, kept in MQ's spelling), or – with
    neither – a path.
    """

    name: str
    attribute: str
    default: int | str
    meaning: str
    stanza: str = LOG_STANZA
    low: int | None = None
    high: int | None = None
    special: tuple[int, ...] = ()
    choices: tuple[str, ...] = ()
    #: other names ``--set`` accepts (never qm.ini: there the stanza's own name is required)
    aliases: tuple[str, ...] = ()
    #: the ``crtmqm`` flag that sets it at creation, if any
    flag: str | None = None

    @property
    def is_number(self) -> bool:
        return self.low is not None

    @property
    def allowed(self) -> str:
        """What the parameter may be, as error messages and ``describe()`` say it."""
        if self.is_number:
            span = f"{self.low} to {self.high}"
            return " or ".join([*(str(v) for v in self.special), span])
        if self.choices:
            return f"one of {', '.join(self.choices)} (any case)"
        return "a path: one line, not empty, no leading or trailing blanks"

    def canonical(self, value: Any) -> Any:
        """MQ's spelling of a choice given in any case; anything else unchanged (the
        validator judges it)."""
        if self.choices and isinstance(value, str):
            return {c.lower(): c for c in self.choices}.get(value.strip().lower(), value)
        return value

    def check(self, value: Any) -> None:
        """Raise :class:`ParameterError` unless ``value`` is allowed (already canonical)."""
        if self.is_number:
            ok = (isinstance(value, int) and not isinstance(value, bool)
                  and (self.low <= value <= self.high or value in self.special))
        elif self.choices:
            ok = value in self.choices
        else:
            ok = (isinstance(value, str) and value != "" and value == value.strip()
                  and len(value.splitlines()) == 1)
        if not ok:
            raise ParameterError(self.name, _short(value), self.allowed)

    def parse(self, text: str | int) -> int | str:
        """The value ``text`` (from qm.ini, a flag or ``--set``) stands for, checked."""
        if isinstance(text, bool) or not isinstance(text, (str, int)):
            raise ParameterError(self.name, _short(text), self.allowed)
        if isinstance(text, int):
            value: int | str = text
        elif self.is_number:
            value = self.whole_number(text)
        else:
            value = self.canonical(text.strip())
        self.check(value)
        return value

    def whole_number(self, text: str, name: str | None = None) -> int:
        """``text`` as a whole number (decimal digits, blanks around allowed), not yet checked
        against the range; anything else raises :class:`ParameterError` naming ``name``."""
        digits = text.strip()
        if not (re.fullmatch(r"[0-9]+", digits) and len(digits.lstrip("0")) <= _MAX_DIGITS):
            raise ParameterError(name or self.name, _short(text), f"a whole number: {self.allowed}")
        return int(digits)

    def text(self, value: int | str) -> str:
        """``value`` as qm.ini writes it."""
        return str(value)


def _field(parameter: LogParameter) -> Any:
    return attrs.field(default=parameter.default, converter=parameter.canonical,
                       validator=lambda _inst, _attr, value: parameter.check(value),
                       metadata={"parameter": parameter})


LOG_PRIMARY_FILES = LogParameter(
    "LogPrimaryFiles", "log_primary_files", 3,
    "log files allocated at creation (a change takes effect at restart, as files are needed)",
    low=2, high=510, flag="-lp")
LOG_SECONDARY_FILES = LogParameter(
    "LogSecondaryFiles", "log_secondary_files", 2,
    "log files allocated only when the primaries are exhausted",
    low=1, high=509, flag="-ls")
LOG_FILE_PAGES = LogParameter(
    "LogFilePages", "log_file_pages", 4096,
    "size of each log file in 4 KiB pages; fixed at creation",
    low=64, high=65535, flag="-lf")
LOG_TYPE = LogParameter(
    "LogType", "log_type", CIRCULAR,
    "CIRCULAR reuses a ring of files; LINEAR keeps a stream for media recovery; fixed at creation",
    choices=(CIRCULAR, LINEAR))
LOG_BUFFER_PAGES = LogParameter(
    "LogBufferPages", "log_buffer_pages", 0,
    f"log buffer in 4 KiB pages; 0 means {BUFFER_PAGES_WHEN_ZERO}; a change needs a restart",
    low=18, high=4096, special=(0,))
LOG_PATH = LogParameter(
    "LogPath", "log_path", "/var/mqm/log",
    "directory of the log files (informational in the model)",
    aliases=("LogDefaultPath",), flag="-ld")
LOG_WRITE_INTEGRITY = LogParameter(
    "LogWriteIntegrity", "log_write_integrity", TRIPLE_WRITE,
    "how a partial page is rewritten: in place (SingleWrite) or elsewhere first "
    "(TripleWrite; DoubleWrite behaves as TripleWrite)",
    choices=(SINGLE_WRITE, DOUBLE_WRITE, TRIPLE_WRITE))
LOG_MANAGEMENT = LogParameter(
    "LogManagement", "log_management", MANUAL,
    "what happens to inactive linear log files: left to the administrator (Manual), "
    "reused (Automatic), reused once archived (Archive); ignored for CIRCULAR",
    choices=(MANUAL, AUTOMATIC, ARCHIVE))
CHECKPOINT_LOG_RECD_MAX = LogParameter(
    "CheckPointLogRecdMax", "checkpoint_log_recd_max", 50_000,
    "logged operations that trigger a checkpoint",
    stanza=TUNING_STANZA, low=1000, high=100_000)
CHECKPOINT_LOG_RECD_MIN = LogParameter(
    "CheckPointLogRecdMin", "checkpoint_log_recd_min", 100,
    "operations needed since the last checkpoint for a timed one",
    stanza=TUNING_STANZA, low=0, high=2000)
CHECKPOINT_WAIT_LEN = LogParameter(
    "CheckPointWaitLen", "checkpoint_wait_len", 30,
    "minutes between timed checkpoints",
    stanza=TUNING_STANZA, low=5, high=60)

#: Every parameter, in the order qm.ini and ``describe()`` list them.
PARAMETERS: tuple[LogParameter, ...] = (
    LOG_PRIMARY_FILES, LOG_SECONDARY_FILES, LOG_FILE_PAGES, LOG_TYPE, LOG_BUFFER_PAGES,
    LOG_PATH, LOG_WRITE_INTEGRITY, LOG_MANAGEMENT,
    CHECKPOINT_LOG_RECD_MAX, CHECKPOINT_LOG_RECD_MIN, CHECKPOINT_WAIT_LEN,
)
_BY_ATTRIBUTE = {p.attribute: p for p in PARAMETERS}
#: lower-case qm.ini name (and alias) → parameter, for ``--set`` and ``at_creation``
_BY_LOWER_NAME = {n.lower(): p for p in PARAMETERS for n in (p.name, *p.aliases)}
#: lower-case key → parameter, per stanza this module reads
_STANZA_KEYS = {
    stanza.lower(): {p.name.lower(): p for p in PARAMETERS if p.stanza == stanza}
    for stanza in (LOG_STANZA, TUNING_STANZA)
}

_TOTAL_NAME = f"{LOG_PRIMARY_FILES.name} + {LOG_SECONDARY_FILES.name}"
_TOTAL_ALLOWED = f"{ACTIVE_LOG_FILES_MIN} to {ACTIVE_LOG_FILES_MAX} files in the active log"

_CRTMQM_VALUE_FLAGS = {p.flag: p for p in PARAMETERS if p.flag}
#: crtmqm's log-type switches: (LogType, LogManagement or None to leave it)
_CRTMQM_TYPE_FLAGS = {"-lc": (CIRCULAR, None), "-ll": (LINEAR, None),
                      "-lla": (LINEAR, AUTOMATIC), "-lln": (LINEAR, MANUAL)}
_CRTMQM_USAGE = "-lp N, -ls N, -lf N, -ld PATH and one of -lc, -ll, -lla, -lln"


def _check_total(primary: int, secondary: int, error: type[ParameterError]) -> None:
    total = primary + secondary
    if not ACTIVE_LOG_FILES_MIN <= total <= ACTIVE_LOG_FILES_MAX:
        raise error(_TOTAL_NAME, total, f"{_TOTAL_ALLOWED} (here {LOG_PRIMARY_FILES.name}="
                                        f"{primary}, {LOG_SECONDARY_FILES.name}={secondary})")


class ParameterRow(NamedTuple):
    """One line of ``mqlog config --platform distributed``."""

    name: str
    value: int | str
    default: int | str
    allowed: str
    meaning: str


class Created(NamedTuple):
    """A configuration as ``crtmqm`` would create it, with what it changed on the way."""

    config: LogConfig
    #: one sentence per value below its minimum that the default replaced
    notes: list[str]


def _human_bytes(n: int) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n // size} {unit}" if n % size == 0 else f"{n / size:.1f} {unit}"
    return f"{n} bytes"


# ------------------------------------------------------------------------ the config


@attrs.frozen
class LogConfig:
    """The log parameters of one distributed queue manager (SPEC §4.1, §4.6).

    Attribute names are the qm.ini names in snake_case; :data:`PARAMETERS` gives each one's
    qm.ini spelling, range and meaning. Construction checks every value and that the
    active log holds 3 to 511 files; ``attrs.evolve`` derives a changed copy, checked again.
    """

    log_primary_files: int = _field(LOG_PRIMARY_FILES)
    log_secondary_files: int = _field(LOG_SECONDARY_FILES)
    log_file_pages: int = _field(LOG_FILE_PAGES)
    log_type: str = _field(LOG_TYPE)
    log_buffer_pages: int = _field(LOG_BUFFER_PAGES)
    log_path: str = _field(LOG_PATH)
    log_write_integrity: str = _field(LOG_WRITE_INTEGRITY)
    log_management: str = _field(LOG_MANAGEMENT)
    checkpoint_log_recd_max: int = _field(CHECKPOINT_LOG_RECD_MAX)
    checkpoint_log_recd_min: int = _field(CHECKPOINT_LOG_RECD_MIN)
    checkpoint_wait_len: int = _field(CHECKPOINT_WAIT_LEN)

    def __attrs_post_init__(self) -> None:
        _check_total(self.log_primary_files, self.log_secondary_files, ParameterError)

    # ------------------------------------------------------------- derived values

    @property
    def buffer_pages(self) -> int:
        """Log buffer pages in effect (LogBufferPages, with 0 meaning 512)."""
        return self.log_buffer_pages or BUFFER_PAGES_WHEN_ZERO

    @property
    def buffer_bytes(self) -> int:
        return self.buffer_pages * LOG_PAGE_BYTES

    @property
    def file_bytes(self) -> int:
        """Size of each log file (extent)."""
        return self.log_file_pages * LOG_PAGE_BYTES

    @property
    def primary_bytes(self) -> int:
        """Space the primary files take, allocated at creation."""
        return self.log_primary_files * self.file_bytes

    @property
    def active_log_files(self) -> int:
        """The most files the active log may hold (primaries plus secondaries)."""
        return self.log_primary_files + self.log_secondary_files

    @property
    def active_log_bytes(self) -> int:
        """The active log's maximum size: IBM's (primary + secondary) × LogFilePages × 4 KiB."""
        return self.active_log_files * self.file_bytes

    @property
    def usable_bytes(self) -> int:
        """How far the log's head may run ahead of its tail before the longest-running unit
        of work is rolled back or forward (SPEC §4.4)."""
        return self.active_log_bytes * USABLE_PERCENT // 100

    @property
    def is_linear(self) -> bool:
        return self.log_type == LINEAR

    @property
    def effective_write_integrity(self) -> str:
        """The write algorithm in effect: DoubleWrite is deprecated and behaves as TripleWrite."""
        integrity = self.log_write_integrity
        return TRIPLE_WRITE if integrity == DOUBLE_WRITE else integrity

    @property
    def checkpoint_wait_us(self) -> int:
        """CheckPointWaitLen in the model's virtual time unit (microseconds)."""
        return self.checkpoint_wait_len * 60 * 1_000_000

    # ------------------------------------------------------------ named constructors

    @classmethod
    def at_creation(cls, **values: Any) -> Created:
        """The configuration ``crtmqm`` creates from ``values``.

        Keys are attribute names or qm.ini names (any case). A number below its minimum is
        replaced by the default, and a note says so; one above its maximum – or primaries
        plus secondaries above 511 – raises :class:`LogSizeNotValid`. Anything else wrong
        raises :class:`~mqlog.core.errors.ParameterError` as the constructor does.
        """
        chosen: dict[str, Any] = {}
        notes: list[str] = []
        for key, value in values.items():
            parameter = _BY_ATTRIBUTE.get(key) or _BY_LOWER_NAME.get(key.lower())
            if parameter is None:
                raise ParameterError(key, _short(value), "a log parameter: "
                                     + ", ".join(p.attribute for p in PARAMETERS))
            if parameter.attribute in chosen:
                raise ParameterError(parameter.name, _short(value), "to be given once")
            if (parameter.is_number and isinstance(value, int) and not isinstance(value, bool)
                    and value not in parameter.special):
                if value < parameter.low:
                    notes.append(f"{parameter.name}={value} is below the minimum {parameter.low}: "
                                 f"the default {parameter.default} is used")
                    value = parameter.default
                elif value > parameter.high:
                    raise LogSizeNotValid(parameter.name, value, parameter.allowed)
            chosen[parameter.attribute] = value
        primary = chosen.get(LOG_PRIMARY_FILES.attribute, LOG_PRIMARY_FILES.default)
        secondary = chosen.get(LOG_SECONDARY_FILES.attribute, LOG_SECONDARY_FILES.default)
        if isinstance(primary, int) and isinstance(secondary, int):
            _check_total(primary, secondary, LogSizeNotValid)
        return Created(cls(**chosen), notes)

    @classmethod
    def from_crtmqm(cls, args: Iterable[str]) -> Created:
        """The configuration ``crtmqm`` creates given these log flags, with creation
        semantics (:meth:`at_creation`): ``-lp N``, ``-ls N``, ``-lf N``, ``-ld PATH`` and one
        of ``-lc`` (circular), ``-ll`` (linear), ``-lla`` (linear, LogManagement=Automatic),
        ``-lln`` (linear, LogManagement=Manual). Errors name the flag.
        """
        args = list(args)
        values: dict[str, Any] = {}
        seen: set[str] = set()
        type_flag: str | None = None
        i = 0
        while i < len(args):
            flag = args[i]
            if flag in _CRTMQM_TYPE_FLAGS:
                if type_flag is not None:
                    raise ParameterError(f"crtmqm {flag}", flag,
                                         f"one of -lc, -ll, -lla, -lln once (already {type_flag})")
                type_flag = flag
                log_type, management = _CRTMQM_TYPE_FLAGS[flag]
                values[LOG_TYPE.attribute] = log_type
                if management is not None:
                    values[LOG_MANAGEMENT.attribute] = management
                i += 1
                continue
            parameter = _CRTMQM_VALUE_FLAGS.get(flag)
            if parameter is None:
                raise ParameterError("crtmqm flag", _short(flag), f"a log flag: {_CRTMQM_USAGE}")
            name = f"crtmqm {flag} ({parameter.name})"
            if flag in seen:
                raise ParameterError(name, _short(args[i + 1]) if i + 1 < len(args) else None,
                                     "to be given once")
            seen.add(flag)
            if i + 1 >= len(args) or args[i + 1] in (*_CRTMQM_VALUE_FLAGS, *_CRTMQM_TYPE_FLAGS):
                raise ParameterError(name, None, f"{flag} followed by a value: {parameter.allowed}")
            text = args[i + 1]
            values[parameter.attribute] = (parameter.whole_number(text, name) if parameter.is_number
                                           else text)
            i += 2
        flag_names = {p.name: f"crtmqm {p.flag} ({p.name})" for p in _CRTMQM_VALUE_FLAGS.values()}
        flag_names[_TOTAL_NAME] = f"crtmqm -lp + -ls ({_TOTAL_NAME})"
        try:
            return cls.at_creation(**values)
        except ParameterError as exc:
            raise _renamed(exc, flag_names.get(exc.name, exc.name)) from None

    @classmethod
    def from_settings(cls, values: Mapping[str, str | int], *,
                      base: LogConfig | None = None) -> LogConfig:
        """``base`` (default: all defaults) with ``--set log.NAME=VALUE`` items applied.

        Names are qm.ini names in any case, with or without the ``log.`` prefix
        (``LogPrimaryFiles``, ``log.logprimaryfiles``; ``LogDefaultPath`` for LogPath).
        Values are text (or ints). Strict: out of range either way is refused, each error
        naming ``log.NAME``; an unknown name lists the known ones.
        """
        chosen: dict[str, Any] = {}
        for key, text in values.items():
            bare = key[4:] if key.lower().startswith("log.") else key
            parameter = _BY_LOWER_NAME.get(bare.strip().lower())
            if parameter is None:
                raise ParameterError(f"log.{bare}", _short(text), "a log parameter of platform "
                                     "distributed: " + ", ".join(p.name for p in PARAMETERS))
            if parameter.attribute in chosen:
                raise ParameterError(f"log.{parameter.name}", _short(text), "to be set once")
            try:
                chosen[parameter.attribute] = parameter.parse(text)
            except ParameterError as exc:
                raise _renamed(exc, f"log.{parameter.name}") from None
        try:
            return attrs.evolve(base if base is not None else cls(), **chosen)
        except ParameterError as exc:
            name = (f"log.{LOG_PRIMARY_FILES.name} + log.{LOG_SECONDARY_FILES.name}"
                    if exc.name == _TOTAL_NAME else f"log.{exc.name}")
            raise _renamed(exc, name) from None

    @classmethod
    def from_qm_ini(cls, text: str, *, source: str = "qm.ini") -> LogConfig:
        """The configuration a qm.ini text gives (format: see the module docstring).

        Raises :class:`QmIniError` for a malformed line, an unknown or repeated key or a
        repeated stanza, and :class:`QmIniValueError` for a bad value – each naming
        ``source`` and the line.
        """
        lines = _scan(text, source)
        values: dict[str, Any] = {}
        where: dict[str, int] = {}
        for stanza in _locate(lines, source).values():
            for attribute, index in stanza.entries.items():
                line = lines[index]
                try:
                    values[attribute] = _BY_ATTRIBUTE[attribute].parse(line.value)
                except ParameterError as exc:
                    raise QmIniValueError(exc, source=source, line=line.number) from None
                where[attribute] = line.number
        try:
            return cls(**values)
        except ParameterError as exc:  # every single value passed: the total is wrong
            lines_of_total = [where[a] for a in (LOG_PRIMARY_FILES.attribute,
                                                 LOG_SECONDARY_FILES.attribute) if a in where]
            raise QmIniValueError(exc, source=source,
                                  line=max(lines_of_total, default=None)) from None

    # ----------------------------------------------------------------- writing out

    def settings(self) -> dict[str, int | str]:
        """Every parameter by qm.ini name: what ``from_settings`` takes back (as text or not)."""
        return {p.name: getattr(self, p.attribute) for p in PARAMETERS}

    def to_qm_ini_stanza(self, eol: str = "\n") -> str:
        """The ``Log:`` stanza as ``crtmqm`` writes it: every Log key, LogManagement only
        when it matters (a linear log) or differs from its default.

        The checkpoint tunables live in ``TuningParameters:``; :meth:`to_qm_ini` and
        :meth:`update_qm_ini` write them too.
        """
        out = [f"{LOG_STANZA}:{eol}"]
        for p in PARAMETERS:
            value = getattr(self, p.attribute)
            if p.stanza != LOG_STANZA:
                continue
            if p is LOG_MANAGEMENT and not self.is_linear and value == p.default:
                continue
            out.append(f"{_DEFAULT_INDENT}{p.name}={p.text(value)}{eol}")
        return "".join(out)

    def to_qm_ini(self) -> str:
        """A qm.ini text holding just this configuration: the ``Log:`` stanza, and a
        ``TuningParameters:`` stanza if a checkpoint tunable differs from its default."""
        return self.update_qm_ini("")

    def update_qm_ini(self, text: str, *, source: str = "qm.ini") -> str:
        """``text`` with its log stanzas saying this configuration; every other line kept.

        Lines of ``Log:``/``TuningParameters:`` whose value already means the configured
        value are left as they are (even if spelled ``linear``); others get the new value
        with their indentation and key spelling kept. Keys missing from a stanza are added
        after its last key when their value is not the default; a missing ``Log:`` stanza
        is appended in full, a missing ``TuningParameters:`` only if needed. Raises
        :class:`QmIniError` if ``text`` is malformed or has unknown or repeated log keys
        (bad *values* are fine: they are overwritten).
        """
        lines = _scan(text, source)
        stanzas = _locate(lines, source)
        eol = "\r\n" if lines and lines[0].raw.endswith("\r\n") else "\n"
        raws = [line.raw for line in lines]
        after: dict[int, list[str]] = {}
        appended: list[str] = []
        for stanza_name in (LOG_STANZA, TUNING_STANZA):
            stanza = stanzas.get(stanza_name)
            if stanza is None:
                if stanza_name == LOG_STANZA:
                    appended.append(self.to_qm_ini_stanza(eol))
                    continue
                missing = [p for p in PARAMETERS if p.stanza == stanza_name
                           and getattr(self, p.attribute) != p.default]
                if missing:
                    appended.append(f"{stanza_name}:{eol}" + "".join(
                        f"{_DEFAULT_INDENT}{p.name}={p.text(getattr(self, p.attribute))}{eol}"
                        for p in missing))
                continue
            added: list[str] = []
            for p in PARAMETERS:
                if p.stanza != stanza_name:
                    continue
                want = getattr(self, p.attribute)
                index = stanza.entries.get(p.attribute)
                if index is None:
                    if want != p.default:
                        added.append(f"{stanza.indent}{p.name}={p.text(want)}{eol}")
                elif not _means(p, lines[index].value, want):
                    raws[index] = _with_value(lines[index].raw, p.text(want))
            if added:
                after.setdefault(stanza.last, []).extend(added)
        out: list[str] = []
        for index, raw in enumerate(raws):
            out.append(raw)
            if index in after:
                if not raw.endswith("\n"):  # the stanza's last key ends the text
                    out.append(eol)
                out.extend(after[index])
        if appended:
            if out and not out[-1].endswith("\n"):
                out.append(eol)
            out.extend(appended)
        return "".join(out)

    # ------------------------------------------------------------------ describing

    def describe(self) -> list[ParameterRow]:
        """One row per parameter: qm.ini name, value, default, what is allowed, meaning."""
        return [ParameterRow(p.name, getattr(self, p.attribute), p.default, p.allowed, p.meaning)
                for p in PARAMETERS]

    def derived(self) -> dict[str, dict[str, Any]]:
        """The sizes that follow from the parameters, each as ``{"bytes": n, "text": ...}``."""
        file_size = _human_bytes(self.file_bytes)
        zero = (f"; LogBufferPages=0 means {BUFFER_PAGES_WHEN_ZERO}"
                if self.log_buffer_pages == 0 else "")
        sizes = {
            "buffer_bytes": (self.buffer_bytes, (
                f"{_human_bytes(self.buffer_bytes)} log buffer "
                f"({self.buffer_pages} pages of 4 KiB{zero})")),
            "file_bytes": (self.file_bytes, (
                f"{file_size} per log file ({self.log_file_pages} pages of 4 KiB)")),
            "primary_bytes": (self.primary_bytes, (
                f"{_human_bytes(self.primary_bytes)} of primary files, allocated at creation "
                f"({self.log_primary_files} × {file_size})")),
            "active_log_bytes": (self.active_log_bytes, (
                f"{_human_bytes(self.active_log_bytes)} active log at most "
                f"({self.log_primary_files} primary + {self.log_secondary_files} secondary "
                f"files × {file_size})")),
            "usable_bytes": (self.usable_bytes, (
                f"{_human_bytes(self.usable_bytes)} usable by running units of work "
                f"({USABLE_PERCENT}% of the active log; the rest is kept so checkpoints "
                f"can always be written)")),
        }
        return {name: {"bytes": n, "text": text} for name, (n, text) in sizes.items()}


# --------------------------------------------------------------------- qm.ini lines

#: indentation of the key lines this module writes, as crtmqm indents them
_DEFAULT_INDENT = "   "
_STANZA_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
_VALUE_PART = re.compile(r"(?P<head>[^=]*=[ \t]*)(?P<value>.*?)(?P<tail>\s*)", re.DOTALL)


@attrs.frozen
class _Line:
    """One line of a qm.ini text, classified."""

    number: int
    raw: str  # with its line end, exactly as in the text
    kind: str  # "blank", "comment", "stanza" or "key"
    name: str = ""  # the stanza's name or the key
    value: str = ""


@attrs.define
class _Stanza:
    """Where a stanza this module reads sits among the lines."""

    header: int  # index of the "Name:" line
    last: int  # index of its last key line (the header while it has none)
    indent: str = _DEFAULT_INDENT
    entries: dict[str, int] = attrs.field(factory=dict)  # attribute → index of its key line


def _scan(text: str, source: str) -> list[_Line]:
    """``text`` split into classified lines; a malformed line raises :class:`QmIniError`."""
    pieces = text.split("\n")
    raws = [piece + "\n" for piece in pieces[:-1]]
    if pieces[-1]:
        raws.append(pieces[-1])
    lines: list[_Line] = []
    in_stanza = False
    for number, raw in enumerate(raws, 1):
        content = raw[1:] if number == 1 and raw.startswith("\ufeff") else raw
        stripped = content.strip()
        if not stripped:
            lines.append(_Line(number, raw, "blank"))
        elif stripped[0] in ";#":
            lines.append(_Line(number, raw, "comment"))
        elif "=" in stripped:
            key, _, value = stripped.partition("=")
            key = key.strip()
            if not key:
                raise QmIniError(f"malformed line {_short(stripped)!r}: no key before '='",
                                 source=source, line=number)
            if not in_stanza:
                raise QmIniError(f"{key}= appears before any stanza (a stanza starts with a line "
                                 f"'Name:', such as 'Log:')", source=source, line=number)
            lines.append(_Line(number, raw, "key", key, value.strip()))
        elif stripped.endswith(":") and _STANZA_NAME.fullmatch(stripped[:-1].rstrip()):
            in_stanza = True
            lines.append(_Line(number, raw, "stanza", stripped[:-1].rstrip()))
        else:
            raise QmIniError(f"malformed line {_short(stripped)!r}: expected 'Name:' starting a "
                             f"stanza, 'Key=Value', a comment (; or #) or a blank line",
                             source=source, line=number)
    return lines


def _locate(lines: list[_Line], source: str) -> dict[str, _Stanza]:
    """The ``Log:`` and ``TuningParameters:`` stanzas among ``lines`` and their keys.

    Raises :class:`QmIniError` for an unknown key in ``Log:``, a repeated key, or a
    repeated stanza.
    """
    found: dict[str, _Stanza] = {}
    current: str | None = None  # canonical name of the stanza being read, if one of ours
    for index, line in enumerate(lines):
        if line.kind == "stanza":
            current = next((s for s in (LOG_STANZA, TUNING_STANZA)
                            if s.lower() == line.name.lower()), None)
            if current is not None:
                if current in found:
                    first = lines[found[current].header].number
                    raise QmIniError(f"a second {current}: stanza (the first starts at line "
                                     f"{first})", source=source, line=line.number)
                found[current] = _Stanza(index, index)
            continue
        if line.kind != "key" or current is None:
            continue
        stanza = found[current]
        if stanza.last == stanza.header:  # the first key sets the stanza's indentation
            stanza.indent = line.raw[:len(line.raw) - len(line.raw.lstrip(" \t"))]
        stanza.last = index
        parameter = _STANZA_KEYS[current.lower()].get(line.name.lower())
        if parameter is None:
            if current == TUNING_STANZA:
                continue  # other components' tuning parameters
            raise QmIniError(_unknown_log_key(line.name), source=source, line=line.number)
        if parameter.attribute in stanza.entries:
            first = lines[stanza.entries[parameter.attribute]].number
            raise QmIniError(f"{parameter.name} is given twice in the {current}: stanza "
                             f"(lines {first} and {line.number})", source=source, line=line.number)
        stanza.entries[parameter.attribute] = index
    return found


def _unknown_log_key(key: str) -> str:
    parameter = _BY_LOWER_NAME.get(key.lower())
    if parameter is not None and parameter.stanza != LOG_STANZA:
        return f"{parameter.name} belongs in the {parameter.stanza}: stanza, not {LOG_STANZA}:"
    if parameter is LOG_PATH:
        return f"{key} is the mqs.ini LogDefaults: name; a qm.ini {LOG_STANZA}: stanza says LogPath"
    known = ", ".join(p.name for p in PARAMETERS if p.stanza == LOG_STANZA)
    return f"unknown key {_short(key)!r} in the {LOG_STANZA}: stanza; known keys: {known}"


def _means(parameter: LogParameter, text: str, value: int | str) -> bool:
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
    assert match is not None  # _scan let through only lines with a key and '='
    return f"{indent}{match['head']}{value}{match['tail']}{end}"
