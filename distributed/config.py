"""A distributed queue manager's log configuration: qm.ini's ``Log:`` stanza and ``crtmqm``.

:class:`LogConfig` holds every parameter of the qm.ini Log stanza and the checkpoint settings under the qm.ini name in
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

The qm.ini file format is read and rewritten by :mod:`mqlog.distributed.qmini`; what this
module takes from it:

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

from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

import attrs

from mqlog.core.errors import ParameterError
from mqlog.core.params import (
    Choice,
    Number,
    Parameter,
    ParameterRow,
    ParameterSet,
    Text,
    field,
    human_bytes,
    quoted,
    renamed,
)
from mqlog.distributed import qmini
from mqlog.distributed.qmini import QmIniError, QmIniValueError

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
    "LogSizeNotValid",
    "ParameterRow",
    "QmIniError",
    "QmIniValueError",
]

#: MQ sizes every log quantity (file, buffer) in pages of 4 KiB.
LOG_PAGE_BYTES = 4096
#: LogBufferPages=0 asks the queue manager to choose; since V8 it chooses 512 pages (2 MiB).
BUFFER_PAGES_WHEN_ZERO = 512
#: A running unit of work may span only ~80% of the active log (IBM MQ, "Managing logs": long-running transactions): the other ~20%
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
#: ``where`` of a setting of the model that no qm.ini key holds (``--set log.NAME`` only):
#: never read from nor written to qm.ini
MODEL_SETTING = "model"
RECORDS = "records"
OPERATIONS = "operations"

#: Longer digit strings are refused as not being whole numbers at all (no log parameter
#: comes near 12 digits).
_MAX_DIGITS = 12


# ----------------------------------------------------------------------------- errors


class LogSizeNotValid(ParameterError):
    """``crtmqm`` refuses a log parameter above its maximum ("log size not valid").

    A value *below* the minimum at creation is replaced by the default instead
    (:meth:`LogConfig.at_creation`).
    """

    def __init__(self, name: str, value: object, allowed: str):
        super().__init__(name, value, allowed)
        self.args = (f"log size not valid: {self.args[0]}",)


# ------------------------------------------------------------------------- parameters


def _number(low: int, high: int, special: tuple[int, ...] = ()) -> Number:
    return Number(low, high, special, max_digits=_MAX_DIGITS)


LOG_PRIMARY_FILES = Parameter(
    "LogPrimaryFiles", 3, _number(2, 510),
    "log files allocated at creation (a change takes effect at restart, as files are needed)",
    LOG_STANZA, attribute="log_primary_files")
LOG_SECONDARY_FILES = Parameter(
    "LogSecondaryFiles", 2, _number(1, 509),
    "log files allocated only when the primaries are exhausted",
    LOG_STANZA, attribute="log_secondary_files")
LOG_FILE_PAGES = Parameter(
    "LogFilePages", 4096, _number(64, 65535),
    "size of each log file in 4 KiB pages; fixed at creation",
    LOG_STANZA, attribute="log_file_pages")
LOG_TYPE = Parameter(
    "LogType", CIRCULAR, Choice((CIRCULAR, LINEAR)),
    "CIRCULAR reuses a ring of files; LINEAR keeps a stream for media recovery; fixed at creation",
    LOG_STANZA, attribute="log_type")
LOG_BUFFER_PAGES = Parameter(
    "LogBufferPages", 0, _number(18, 4096, special=(0,)),
    f"log buffer in 4 KiB pages; 0 means {BUFFER_PAGES_WHEN_ZERO}; a change needs a restart",
    LOG_STANZA, attribute="log_buffer_pages")
#: LogDefaultPath is the mqs.ini LogDefaults: name; ``--set`` takes it too (qm.ini does not)
LOG_PATH = Parameter(
    "LogPath", "/var/mqm/log", Text("a path"),
    "directory of the log files (informational in the model)",
    LOG_STANZA, attribute="log_path", aliases=("LogDefaultPath",))
LOG_WRITE_INTEGRITY = Parameter(
    "LogWriteIntegrity", TRIPLE_WRITE, Choice((SINGLE_WRITE, DOUBLE_WRITE, TRIPLE_WRITE)),
    "how a partial page is rewritten: in place (SingleWrite) or elsewhere first "
    "(TripleWrite; DoubleWrite behaves as TripleWrite)",
    LOG_STANZA, attribute="log_write_integrity")
LOG_MANAGEMENT = Parameter(
    "LogManagement", MANUAL, Choice((MANUAL, AUTOMATIC, ARCHIVE)),
    "what happens to inactive linear log files: left to the administrator (Manual), "
    "reused (Automatic), reused once archived (Archive); ignored for CIRCULAR",
    LOG_STANZA, attribute="log_management")
CHECKPOINT_LOG_RECD_MAX = Parameter(
    "CheckPointLogRecdMax", 50_000, _number(1000, 100_000),
    "logged records (as checkpoint_basis counts them) that trigger a checkpoint",
    TUNING_STANZA, attribute="checkpoint_log_recd_max")
CHECKPOINT_LOG_RECD_MIN = Parameter(
    "CheckPointLogRecdMin", 100, _number(0, 2000),
    "records (as checkpoint_basis counts them) needed since the last checkpoint for a timed one",
    TUNING_STANZA, attribute="checkpoint_log_recd_min")
CHECKPOINT_WAIT_LEN = Parameter(
    "CheckPointWaitLen", 30, _number(5, 60),
    "minutes between timed checkpoints",
    TUNING_STANZA, attribute="checkpoint_wait_len")
DEFAULT_PQ_BUFFER_SIZE = Parameter(
    "DefaultPQBufferSize", 262_144, _number(0, 104_857_600),
    "bytes of persistent messages a queue keeps in memory before it spills them to its queue "
    "file (128 KiB, doubled on 64-bit; IBM's tuning scripts for performance runs set up to "
    "100 MB, the most the model takes); for queues created after the change",
    TUNING_STANZA, attribute="default_pq_buffer_size")
#: What CheckPointLogRecdMax/Min count. IBM's sources disagree: the V6/V7 technote counts
#: "persistent MQGET and/or MQPUT operations", the parameter's name and the IBM i page say
#: log records, a later deck "recoverable log operations". The default is log records (the
#: current parameter's own name); the technote's basis stays available. Not a qm.ini key.
CHECKPOINT_BASIS = Parameter(
    "checkpoint_basis", RECORDS, Choice((RECORDS, OPERATIONS)),
    "what CheckPointLogRecdMax/Min count: every log record (records, the default) or "
    "persistent MQPUT/MQGET operations only (operations, the V6/V7 technote's basis); "
    "a setting of the model, not a qm.ini key",
    MODEL_SETTING, attribute="checkpoint_basis")

#: Every parameter, in the order qm.ini and ``describe()`` list them.
PARAMETERS: tuple[Parameter, ...] = (
    LOG_PRIMARY_FILES, LOG_SECONDARY_FILES, LOG_FILE_PAGES, LOG_TYPE, LOG_BUFFER_PAGES,
    LOG_PATH, LOG_WRITE_INTEGRITY, LOG_MANAGEMENT,
    CHECKPOINT_LOG_RECD_MAX, CHECKPOINT_LOG_RECD_MIN, CHECKPOINT_WAIT_LEN, DEFAULT_PQ_BUFFER_SIZE,
    CHECKPOINT_BASIS,
)
#: looked up by qm.ini name or alias in any case (``--set``, ``at_creation``) or by attribute
_SET = ParameterSet(PARAMETERS, "a log parameter of platform distributed")
#: lower-case key → parameter, per stanza this module reads
_STANZA_KEYS = {
    stanza: {p.name.lower(): p for p in PARAMETERS if p.where == stanza}
    for stanza in (LOG_STANZA, TUNING_STANZA)
}

_TOTAL_NAME = f"{LOG_PRIMARY_FILES.name} + {LOG_SECONDARY_FILES.name}"
_TOTAL_ALLOWED = f"{ACTIVE_LOG_FILES_MIN} to {ACTIVE_LOG_FILES_MAX} files in the active log"

#: crtmqm's flags that set a parameter at creation
_CRTMQM_VALUE_FLAGS = {"-lp": LOG_PRIMARY_FILES, "-ls": LOG_SECONDARY_FILES,
                       "-lf": LOG_FILE_PAGES, "-ld": LOG_PATH}
#: crtmqm's log-type switches: (LogType, LogManagement or None to leave it)
_CRTMQM_TYPE_FLAGS = {"-lc": (CIRCULAR, None), "-ll": (LINEAR, None),
                      "-lla": (LINEAR, AUTOMATIC), "-lln": (LINEAR, MANUAL)}
_CRTMQM_USAGE = "-lp N, -ls N, -lf N, -ld PATH and one of -lc, -ll, -lla, -lln"


def _check_total(primary: int, secondary: int, error: type[ParameterError]) -> None:
    total = primary + secondary
    if not ACTIVE_LOG_FILES_MIN <= total <= ACTIVE_LOG_FILES_MAX:
        raise error(_TOTAL_NAME, total, f"{_TOTAL_ALLOWED} (here {LOG_PRIMARY_FILES.name}="
                                        f"{primary}, {LOG_SECONDARY_FILES.name}={secondary})")


class Created(NamedTuple):
    """A configuration as ``crtmqm`` would create it, with what it changed on the way."""

    config: LogConfig
    #: one sentence per value below its minimum that the default replaced
    notes: list[str]


# ------------------------------------------------------------------------ the config


@attrs.frozen
class LogConfig:
    """The log parameters of one distributed queue manager (IBM MQ, "Log stanza of the qm.ini file").

    Attribute names are the qm.ini names in snake_case; :data:`PARAMETERS` gives each one's
    qm.ini spelling, range and meaning. Construction checks every value and that the
    active log holds 3 to 511 files; ``attrs.evolve`` derives a changed copy, checked again.
    """

    log_primary_files: int = field(LOG_PRIMARY_FILES)
    log_secondary_files: int = field(LOG_SECONDARY_FILES)
    log_file_pages: int = field(LOG_FILE_PAGES)
    log_type: str = field(LOG_TYPE)
    log_buffer_pages: int = field(LOG_BUFFER_PAGES)
    log_path: str = field(LOG_PATH)
    log_write_integrity: str = field(LOG_WRITE_INTEGRITY)
    log_management: str = field(LOG_MANAGEMENT)
    checkpoint_log_recd_max: int = field(CHECKPOINT_LOG_RECD_MAX)
    checkpoint_log_recd_min: int = field(CHECKPOINT_LOG_RECD_MIN)
    checkpoint_wait_len: int = field(CHECKPOINT_WAIT_LEN)
    default_pq_buffer_size: int = field(DEFAULT_PQ_BUFFER_SIZE)
    checkpoint_basis: str = field(CHECKPOINT_BASIS)

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
        of work is rolled back or forward (AMQ7469)."""
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
            parameter = _SET.by_attribute(key) or _SET.get(key)
            if parameter is None:
                raise ParameterError(key, quoted(value), "a log parameter: "
                                     + ", ".join(p.attribute for p in PARAMETERS))
            if parameter.attribute in chosen:
                raise ParameterError(parameter.name, quoted(value), "to be given once")
            kind = parameter.kind
            if (isinstance(kind, Number) and isinstance(value, int) and not isinstance(value, bool)
                    and value not in kind.special):
                if value < kind.low:
                    notes.append(f"{parameter.name}={value} is below the minimum {kind.low}: "
                                 f"the default {parameter.default} is used")
                    value = parameter.default
                elif value > kind.high:
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
                raise ParameterError("crtmqm flag", quoted(flag), f"a log flag: {_CRTMQM_USAGE}")
            name = f"crtmqm {flag} ({parameter.name})"
            if flag in seen:
                raise ParameterError(name, quoted(args[i + 1]) if i + 1 < len(args) else None,
                                     "to be given once")
            seen.add(flag)
            if i + 1 >= len(args) or args[i + 1] in (*_CRTMQM_VALUE_FLAGS, *_CRTMQM_TYPE_FLAGS):
                raise ParameterError(name, None, f"{flag} followed by a value: {parameter.allowed}")
            text = args[i + 1]
            values[parameter.attribute] = (_whole_number(parameter, text, name)
                                           if isinstance(parameter.kind, Number) else text)
            i += 2
        flag_names = {p.name: f"crtmqm {f} ({p.name})" for f, p in _CRTMQM_VALUE_FLAGS.items()}
        flag_names[_TOTAL_NAME] = f"crtmqm -lp + -ls ({_TOTAL_NAME})"
        try:
            return cls.at_creation(**values)
        except ParameterError as exc:
            raise renamed(exc, flag_names.get(exc.name, exc.name)) from None

    @classmethod
    def from_settings(cls, values: Mapping[str, str | int], *,
                      base: LogConfig | None = None) -> LogConfig:
        """``base`` (default: all defaults) with ``--set log.NAME=VALUE`` items applied.

        Names are qm.ini names in any case, with or without the ``log.`` prefix
        (``LogPrimaryFiles``, ``log.logprimaryfiles``; ``LogDefaultPath`` for LogPath).
        Values are text (or ints). Strict: out of range either way is refused, each error
        naming ``log.NAME``; an unknown name lists the known ones.
        """
        chosen = _SET.choose(values)
        try:
            return attrs.evolve(base if base is not None else cls(), **chosen)
        except ParameterError as exc:
            name = (f"log.{LOG_PRIMARY_FILES.name} + log.{LOG_SECONDARY_FILES.name}"
                    if exc.name == _TOTAL_NAME else f"log.{exc.name}")
            raise renamed(exc, name) from None

    @classmethod
    def from_qm_ini(cls, text: str, *, source: str = "qm.ini") -> LogConfig:
        """The configuration a qm.ini text gives (format: see the module docstring).

        Raises :class:`QmIniError` for a malformed line, an unknown or repeated key or a
        repeated stanza, and :class:`QmIniValueError` for a bad value – each naming
        ``source`` and the line.
        """
        lines = qmini.scan(text, source)
        values: dict[str, Any] = {}
        where: dict[str, int] = {}
        for stanza in qmini.locate(lines, source, _STANZA_KEYS, _unknown_key).values():
            for attribute, index in stanza.entries.items():
                line = lines[index]
                try:
                    values[attribute] = _SET.by_attribute(attribute).parse(line.value)
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
            if p.where != LOG_STANZA:
                continue
            if p is LOG_MANAGEMENT and not self.is_linear and value == p.default:
                continue
            out.append(f"{qmini.DEFAULT_INDENT}{p.name}={p.written(value)}{eol}")
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
        wanted = {stanza: [(p, getattr(self, p.attribute)) for p in PARAMETERS if p.where == stanza]
                  for stanza in (LOG_STANZA, TUNING_STANZA)}
        return qmini.update(text, source, _STANZA_KEYS, _unknown_key, wanted, self._new_stanza)

    def _new_stanza(self, stanza: str, eol: str) -> str:
        """A stanza ``update_qm_ini`` appends: ``Log:`` in full, ``TuningParameters:`` only
        with the tunables that differ from their defaults (or nothing)."""
        if stanza == LOG_STANZA:
            return self.to_qm_ini_stanza(eol)
        missing = [p for p in PARAMETERS if p.where == stanza
                   and getattr(self, p.attribute) != p.default]
        if not missing:
            return ""
        return f"{stanza}:{eol}" + "".join(
            f"{qmini.DEFAULT_INDENT}{p.name}={p.written(getattr(self, p.attribute))}{eol}"
            for p in missing)

    # ------------------------------------------------------------------ describing

    def describe(self) -> list[ParameterRow]:
        """One row per parameter: qm.ini name, value, default, what is allowed, meaning."""
        return _SET.rows(lambda p: getattr(self, p.attribute))

    def derived(self) -> dict[str, dict[str, Any]]:
        """The sizes that follow from the parameters, each as ``{"bytes": n, "text": ...}``."""
        file_size = human_bytes(self.file_bytes)
        zero = (f"; LogBufferPages=0 means {BUFFER_PAGES_WHEN_ZERO}"
                if self.log_buffer_pages == 0 else "")
        sizes = {
            "buffer_bytes": (self.buffer_bytes, (
                f"{human_bytes(self.buffer_bytes)} log buffer "
                f"({self.buffer_pages} pages of 4 KiB{zero})")),
            "file_bytes": (self.file_bytes, (
                f"{file_size} per log file ({self.log_file_pages} pages of 4 KiB)")),
            "primary_bytes": (self.primary_bytes, (
                f"{human_bytes(self.primary_bytes)} of primary files, allocated at creation "
                f"({self.log_primary_files} × {file_size})")),
            "active_log_bytes": (self.active_log_bytes, (
                f"{human_bytes(self.active_log_bytes)} active log at most "
                f"({self.log_primary_files} primary + {self.log_secondary_files} secondary "
                f"files × {file_size})")),
            "usable_bytes": (self.usable_bytes, (
                f"{human_bytes(self.usable_bytes)} usable by running units of work "
                f"({USABLE_PERCENT}% of the active log; the rest is kept so checkpoints "
                f"can always be written)")),
        }
        return {name: {"bytes": n, "text": text} for name, (n, text) in sizes.items()}


# ------------------------------------------------------------------------ qm.ini keys


def _unknown_key(stanza: str, key: str) -> str | None:
    """What to say of a key of ``stanza`` this module does not read (None: leave it)."""
    if stanza == TUNING_STANZA:
        return None  # other components' tuning parameters
    parameter = _SET.get(key)
    if parameter is not None and parameter.where == MODEL_SETTING:
        return f"{parameter.name} is a setting of the model, not a qm.ini key: give it as --set log.{parameter.name}"
    if parameter is not None and parameter.where != LOG_STANZA:
        return f"{parameter.name} belongs in the {parameter.where}: stanza, not {LOG_STANZA}:"
    if parameter is LOG_PATH:
        return f"{key} is the mqs.ini LogDefaults: name; a qm.ini {LOG_STANZA}: stanza says LogPath"
    known = ", ".join(p.name for p in PARAMETERS if p.where == LOG_STANZA)
    return f"unknown key {quoted(key)!r} in the {LOG_STANZA}: stanza; known keys: {known}"


def _whole_number(parameter: Parameter, text: str, name: str) -> int:
    """``text`` as a whole number, not yet checked against the range (crtmqm's creation rules
    judge it); anything else raises :class:`ParameterError` naming ``name``."""
    value = parameter.kind.from_text(text)
    if value is None:
        raise ParameterError(name, quoted(text), parameter.kind.not_a_value(parameter.allowed))
    return value
