"""A z/OS queue manager's log configuration: CSQ6LOGP, CSQ6SYSP, CSQ6ARVP and SET LOG.

:class:`ZosLogConfig` holds every log parameter of SPEC §5.0 under its IBM name in lower
case (``TWOACTV`` → ``twoactv``); :data:`PARAMETERS` gives each one's macro, default, range,
meaning and whether (and when) a command may change it while the queue manager runs. A value
out of range fails at construction with a :class:`~mqlog.core.errors.ParameterError` naming
the parameter, the value and what is allowed.

The parameters come from three places on a real system, plus the model's own:

* CSQ6LOGP (logging): TWOACTV, TWOARCH, TWOBSDS, OFFLOAD, MAXARCH, OUTBUFF, INBUFF,
  WRTHRSH, MAXRTU, DEALLCT, COMPLOG;
* CSQ6SYSP (system): LOGLOAD;
* CSQ6ARVP (archiving): ARCPFX1, ARCPFX2;
* the model (not IBM keywords): ACTIVE_LOGS and ACTIVE_LOG_CIS, the shape of the active log
  that a real system defines with IDCAMS and CSQJU003 NEWLOG (or DEFINE LOG); RBA8 (8-byte
  RBA, what CSQJUCNV converts to and the default for queue managers created at MQ 9.3 or
  later); STARTRBA (where the log starts, as CSQJU003 sets it after a log reset); and
  ZSTD_IN_ANY, which lets ``COMPLOG(ANY)`` choose zstd as well as RLE. **ZSTD_IN_ANY is
  not real z/OS**: IBM's ANY picks among IBM's algorithms, today RLE only (SPEC §5.7).

Value notation, wherever text is read (``--set log.NAME=VALUE``, files, :meth:`set_log`):
names in any case, with or without ``log.``; YES/NO for switches (any case); whole decimal
numbers, in KB where IBM's parameter is in KB (OUTBUFF, INBUFF); DEALLCT also takes NOLIMIT
(= 1440); STARTRBA in hex as ``0x00000000F000`` or ``X'F000'``, or in decimal.

Files (:meth:`ZosLogConfig.from_file`) hold either

* **assembler macro text** as in a CSQ4ZPRM job – recognised by its first statement being
  CSQ6LOGP, CSQ6SYSP or CSQ6ARVP (:meth:`ZosLogConfig.from_macros`): ``*`` in column 1 is a
  comment; a statement is ``[label] operation operands [remarks]``; a non-blank column 72
  (or, leniently, an operand field ending in a comma) continues the operands on the next
  line. CSQ6LOGP's keywords must all be known (the model's, or MAXCNOFF/ZHYWRITE/ZHYLINK,
  accepted and ignored); CSQ6SYSP and CSQ6ARVP carry many keywords of other components, so
  only LOGLOAD and ARCPFX1/ARCPFX2 are read from them and the rest ignored, as are other
  statements (CSQ6USGP, END, ...). The model's own parameters keep their defaults (or
  ``base``'s); or
* **NAME=VALUE lines**, one parameter a line, names as ``--set`` takes them; blank lines and
  lines starting with ``*``, ``#`` or ``;`` are comments.

Either way an error names the file and line (:class:`ZosConfigFileError`).

Run-time changes follow IBM: :meth:`ZosLogConfig.set_log` for WRTHRSH (immediately),
MAXARCH (at the next offload), COMPLOG (at any time), MAXRTU and DEALLCT;
:meth:`ZosLogConfig.set_system` for LOGLOAD. Anything else is refused with
:class:`NotChangeableError` saying where it can be set.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

import attrs

from mqlog.core.errors import ConfigFileError, ConfigFileValueError, ParameterError

__all__ = [
    "CI_BYTES",
    "PARAMETERS",
    "RBA6",
    "RBA6_END",
    "RBA6_TERMINATION",
    "RBA6_WARNING",
    "RBA8",
    "RBA8_END",
    "RBA8_TERMINATION",
    "RBA8_WARNING",
    "NotChangeableError",
    "ParameterRow",
    "RbaLimits",
    "RbaThreshold",
    "ZosConfigFileError",
    "ZosConfigFileValueError",
    "ZosLogConfig",
    "ZosParameter",
    "configure",
    "describe",
    "rba_limits",
    "rba_threshold",
]

#: The log is written in VSAM control intervals of 4 KiB; buffers and data sets are whole CIs.
CI_BYTES = 4096
#: IBM's KB in OUTBUFF and INBUFF.
KB = 1024

# ------------------------------------------------------------------------ RBA limits

#: 6-byte RBA: from here the used range is "significant" (CSQI045I/CSQJ032E; SPEC §5.3).
RBA6_WARNING = 0xF000_0000_0000
#: 6-byte RBA: the queue manager terminates with reason 00D10257 on reaching this.
RBA6_TERMINATION = 0xFFF8_0000_0000
#: 6-byte RBA: the last address there is.
RBA6_END = 0xFFFF_FFFF_FFFF
RBA8_WARNING = 0xFFFF_8000_0000_0000
RBA8_TERMINATION = 0xFFFF_FFC0_0000_0000
RBA8_END = 0xFFFF_FFFF_FFFF_FFFF


class RbaThreshold(enum.IntEnum):
    """The furthest RBA threshold an address has reached; ordered, so ``>=`` compares."""

    NONE = 0
    #: CSQI045I/CSQI046E/CSQI047E, CSQJ032E: plan a log reset or conversion to 8-byte RBA
    WARNING = 1
    #: reason code 00D10257: the queue manager terminates
    TERMINATION = 2
    #: the last address of the mode; the RBA must never wrap to 0
    END_OF_RANGE = 3


@attrs.frozen
class RbaLimits:
    """The thresholds of one RBA mode (6 or 8 bytes)."""

    width: int  # bytes in an RBA
    warning: int
    termination: int
    end: int

    @property
    def hex_digits(self) -> int:
        return 2 * self.width

    def hex(self, rba: int) -> str:
        """``rba`` as z/OS prints it: upper-case hex, zero-padded to the mode's width."""
        return f"{rba:0{self.hex_digits}X}"

    def threshold(self, rba: int) -> RbaThreshold:
        """The furthest threshold ``rba`` has reached (at a threshold counts as reached).

        An address outside 0..``end`` raises :class:`ParameterError`.
        """
        if isinstance(rba, bool) or not isinstance(rba, int) or not 0 <= rba <= self.end:
            raise ParameterError("RBA", rba, f"0 to X'{self.hex(self.end)}' ({self.width}-byte RBA)")
        if rba >= self.end:
            return RbaThreshold.END_OF_RANGE
        if rba >= self.termination:
            return RbaThreshold.TERMINATION
        if rba >= self.warning:
            return RbaThreshold.WARNING
        return RbaThreshold.NONE


RBA6 = RbaLimits(6, RBA6_WARNING, RBA6_TERMINATION, RBA6_END)
RBA8 = RbaLimits(8, RBA8_WARNING, RBA8_TERMINATION, RBA8_END)


def rba_limits(rba8: bool) -> RbaLimits:
    """The thresholds of the 8-byte (``rba8``) or 6-byte RBA mode."""
    return RBA8 if rba8 else RBA6


def rba_threshold(rba: int, *, rba8: bool = True) -> RbaThreshold:
    """The furthest RBA threshold ``rba`` has reached in the given mode (see :class:`RbaLimits`)."""
    return rba_limits(rba8).threshold(rba)


# ---------------------------------------------------------------------------- errors


class NotChangeableError(ParameterError):
    """A parameter a run-time command (SET LOG, SET SYSTEM) may not change."""

    def __init__(self, name: str, value: object, command: str, reason: str):
        self.name = name
        self.value = value
        self.allowed = reason
        self.command = command
        Exception.__init__(self, f"{name} cannot be changed with {command}: {reason}")


class ZosConfigFileError(ConfigFileError):
    """A CSQ6LOGP-style or NAME=VALUE configuration file is malformed."""


class ZosConfigFileValueError(ConfigFileValueError, ZosConfigFileError):
    """A value in a configuration file is of the wrong kind or out of range."""


#: How many characters of a bad value an error message quotes.
_QUOTE_CHARS = 40


def _short(value: object) -> object:
    if isinstance(value, str) and len(value) > _QUOTE_CHARS:
        return value[:_QUOTE_CHARS] + "..."
    return value


def _renamed(error: ParameterError, name: str) -> ParameterError:
    if isinstance(error, NotChangeableError):
        return NotChangeableError(name, error.value, error.command, error.allowed)
    return ParameterError(name, error.value, error.allowed)


# ------------------------------------------------------------------------ parameters

CSQ6LOGP = "CSQ6LOGP"
CSQ6SYSP = "CSQ6SYSP"
CSQ6ARVP = "CSQ6ARVP"
MODEL = "model"
SET_LOG = "SET LOG"
SET_SYSTEM = "SET SYSTEM"

NUMBER, YESNO, CHOICE, PREFIX, ADDRESS = "number", "yes/no", "choice", "prefix", "address"

NONE, RLE, ANY = "NONE", "RLE", "ANY"
ZSTD = "ZSTD"

#: One data set name qualifier: a letter or national character, then up to 7 of those,
#: digits or hyphens (z/OS data set naming rules).
_QUALIFIER = r"[A-Z@#$][A-Z0-9@#$-]{0,7}"
_PREFIX = re.compile(rf"{_QUALIFIER}(?:\.{_QUALIFIER})*")
#: ARCPFXn: the archive name adds its own qualifiers after it, so IBM allows 35 characters.
PREFIX_MAX_CHARS = 35
#: Longer digit strings cannot be in any range here (RBAs included); refusing them early also
#: keeps Python's int() limit on huge digit strings out of the way.
_MAX_DIGITS = 20
#: DEALLCT(NOLIMIT) is the same as the top of its range.
DEALLCT_NOLIMIT = 1440


@attrs.frozen
class ZosParameter:
    """One log parameter: its IBM (or model) name, where it is set, default and range.

    ``kind`` is a whole number (``low``..``high``, ``unit`` being IBM's unit), a YES/NO
    switch, a choice among ``choices``, a data set name prefix, or an RBA (``address``).
    ``command`` is the run-time command that may change it (None: only at start) and
    ``takes_effect`` says when such a change applies.
    """

    name: str
    default: int | str | bool
    meaning: str
    macro: str
    kind: str
    low: int | None = None
    high: int | None = None
    unit: str = ""
    choices: tuple[str, ...] = ()
    command: str | None = None
    takes_effect: str = ""

    @property
    def attribute(self) -> str:
        return self.name.lower()

    @property
    def allowed(self) -> str:
        """What the parameter may be, as error messages and ``describe()`` say it."""
        if self.kind == NUMBER:
            unit = f" {self.unit}" if self.unit else ""
            extra = " (or NOLIMIT = 1440)" if self.name == "DEALLCT" else ""
            return f"{self.low} to {self.high}{unit}{extra}"
        if self.kind == YESNO:
            return "YES or NO"
        if self.kind == CHOICE:
            return "one of " + ", ".join(self.choices)
        if self.kind == PREFIX:
            return (f"up to {PREFIX_MAX_CHARS} characters of dotted qualifiers "
                    f"(1-8 of A-Z 0-9 @ # $ -, not starting with a digit or -)")
        return "a multiple of 4096 (hex ending in 000) below the termination RBA of the mode"

    def check(self, value: Any) -> None:
        """Raise :class:`ParameterError` unless ``value`` (canonical) is allowed."""
        is_int = isinstance(value, int) and not isinstance(value, bool)
        if self.kind == NUMBER:
            ok = is_int and self.low <= value <= self.high
        elif self.kind == YESNO:
            ok = isinstance(value, bool)
        elif self.kind == CHOICE:
            ok = value in self.choices
        elif self.kind == PREFIX:
            ok = (isinstance(value, str) and len(value) <= PREFIX_MAX_CHARS
                  and _PREFIX.fullmatch(value) is not None)
        else:
            ok = is_int and 0 <= value <= RBA8_END and value % CI_BYTES == 0
        if not ok:
            shown = f"0x{value:X}" if self.kind == ADDRESS and is_int else _short(value)
            raise ParameterError(self.name, shown, self.allowed)

    def canonical(self, value: Any) -> Any:
        """Choices and prefixes in upper case; anything else unchanged (``check`` judges it)."""
        if isinstance(value, str) and self.kind in (CHOICE, PREFIX):
            return value.strip().upper()
        return value

    def parse(self, text: str | int | bool) -> int | str | bool:
        """The value ``text`` (from ``--set``, a file or a command) stands for, checked."""
        if isinstance(text, str):
            value = self._from_text(text)
        elif isinstance(text, bool):
            value = text if self.kind == YESNO else None
        elif isinstance(text, int) and self.kind in (NUMBER, ADDRESS):
            value = text
        else:
            value = None
        if value is None:
            raise ParameterError(self.name, _short(text), self.allowed)
        value = self.canonical(value)
        self.check(value)
        return value

    def _from_text(self, text: str) -> int | str | bool | None:
        word = text.strip().upper()
        if self.kind == NUMBER:
            if self.name == "DEALLCT" and word == "NOLIMIT":
                return DEALLCT_NOLIMIT
            return _whole_number(word, 10)
        if self.kind == YESNO:
            return {"YES": True, "NO": False}.get(word)
        if self.kind == ADDRESS:
            if word.startswith("0X"):
                return _whole_number(word[2:], 16)
            quoted = re.fullmatch(r"X'([0-9A-F]+)'", word)
            if quoted:
                return _whole_number(quoted[1], 16)
            return _whole_number(word, 10)
        return text

    def text(self, value: int | str | bool, *, rba8: bool = True) -> int | str:
        """``value`` as :meth:`ZosLogConfig.to_settings` gives it: YES/NO for switches, hex
        for an address, the value itself otherwise."""
        if self.kind == YESNO:
            return "YES" if value else "NO"
        if self.kind == ADDRESS:
            return "0x" + rba_limits(rba8).hex(value)
        return value


def _whole_number(digits: str, base: int) -> int | None:
    pattern = r"[0-9]+" if base == 10 else r"[0-9A-F]+"
    if not re.fullmatch(pattern, digits) or len(digits.lstrip("0")) > _MAX_DIGITS:
        return None
    return int(digits, base)


def _field(parameter: ZosParameter) -> Any:
    return attrs.field(default=parameter.default, converter=parameter.canonical,
                       validator=lambda _inst, _attr, value: parameter.check(value),
                       metadata={"parameter": parameter})


TWOACTV = ZosParameter("TWOACTV", True, "dual active logs: every CI is written to copy 1 and copy 2",
                       CSQ6LOGP, YESNO)
TWOARCH = ZosParameter("TWOARCH", True, "dual archive data sets (ARCPFX1 and ARCPFX2)", CSQ6LOGP, YESNO)
TWOBSDS = ZosParameter("TWOBSDS", True, "dual bootstrap data sets", CSQ6LOGP, YESNO)
OFFLOAD = ZosParameter("OFFLOAD", True,
                       "archiving on; NO (test systems only) lets the log wrap and overwrite",
                       CSQ6LOGP, YESNO)
MAXARCH = ZosParameter("MAXARCH", 500, "archive data sets recorded in the BSDS", CSQ6LOGP, NUMBER,
                       low=10, high=1000, command=SET_LOG, takes_effect="at the next offload")
OUTBUFF = ZosParameter("OUTBUFF", 4000, "output buffer, used in whole 4 KiB CIs", CSQ6LOGP, NUMBER,
                       low=40, high=4000, unit="KB")
INBUFF = ZosParameter("INBUFF", 60, "input buffer for reading active and archive logs",
                      CSQ6LOGP, NUMBER, low=28, high=60, unit="KB")
WRTHRSH = ZosParameter("WRTHRSH", 20, "full output buffer CIs that start a write nobody forced",
                       CSQ6LOGP, NUMBER, low=1, high=256, command=SET_LOG, takes_effect="immediately")
MAXRTU = ZosParameter("MAXRTU", 2, "tape units for reading archives (accepted, not modelled)",
                      CSQ6LOGP, NUMBER, low=1, high=99, command=SET_LOG, takes_effect="immediately")
DEALLCT = ZosParameter("DEALLCT", 0, "minutes an unused archive tape unit stays allocated "
                       "(accepted, not modelled)", CSQ6LOGP, NUMBER, low=0, high=DEALLCT_NOLIMIT,
                       command=SET_LOG, takes_effect="immediately")
COMPLOG = ZosParameter("COMPLOG", NONE, "compression of persistent message data on private queues",
                       CSQ6LOGP, CHOICE, choices=(NONE, RLE, ANY), command=SET_LOG,
                       takes_effect="for records written from now on")
ZSTD_IN_ANY = ZosParameter("ZSTD_IN_ANY", False,
                           "model only, not real z/OS: COMPLOG(ANY) may also choose zstd",
                           MODEL, YESNO)
LOGLOAD = ZosParameter("LOGLOAD", 500_000, "log records between checkpoints", CSQ6SYSP, NUMBER,
                       low=200, high=16_000_000, command=SET_SYSTEM,
                       takes_effect="from the next checkpoint")
ARCPFX1 = ZosParameter("ARCPFX1", "CSQARC1", "name prefix of archive copy 1", CSQ6ARVP, PREFIX)
ARCPFX2 = ZosParameter("ARCPFX2", "CSQARC2", "name prefix of archive copy 2", CSQ6ARVP, PREFIX)
ACTIVE_LOGS = ZosParameter("ACTIVE_LOGS", 3, "active log data sets per copy (dual logging: twice "
                           "as many in all, 4 to 620)", MODEL, NUMBER, low=2, high=310)
ACTIVE_LOG_CIS = ZosParameter("ACTIVE_LOG_CIS", 4096, "size of each active data set in 4 KiB CIs "
                              "(real ones are allocated in cylinders; at most 4 GiB)",
                              MODEL, NUMBER, low=16, high=1 << 20)
RBA8_PARAM = ZosParameter("RBA8", True, "8-byte RBA (default since MQ 9.3); NO is the 6-byte RBA",
                          MODEL, YESNO)
STARTRBA = ZosParameter("STARTRBA", 0, "RBA of the first log byte (CSQJU003 after a log reset)",
                        MODEL, ADDRESS)

#: Every parameter, in the order ``describe()`` and ``to_settings()`` list them.
PARAMETERS: tuple[ZosParameter, ...] = (
    TWOACTV, TWOARCH, TWOBSDS, OFFLOAD, MAXARCH, OUTBUFF, INBUFF, WRTHRSH, MAXRTU, DEALLCT,
    COMPLOG, ZSTD_IN_ANY, LOGLOAD, ARCPFX1, ARCPFX2, ACTIVE_LOGS, ACTIVE_LOG_CIS, RBA8_PARAM,
    STARTRBA,
)
_BY_NAME = {p.name: p for p in PARAMETERS}
_KNOWN = ", ".join(p.name for p in PARAMETERS)


def _lookup(key: str, value: object) -> ZosParameter:
    """The parameter ``key`` names (any case, ``log.`` optional), or a ParameterError."""
    bare = key.strip()
    bare = bare[4:] if bare.lower().startswith("log.") else bare
    parameter = _BY_NAME.get(bare.upper())
    if parameter is None:
        raise ParameterError(f"log.{bare}", _short(value),
                             f"a log parameter of platform zos: {_KNOWN}")
    return parameter


class ParameterRow(NamedTuple):
    """One line of ``mqlog config --platform zos`` (values as :meth:`to_settings` gives them)."""

    name: str
    value: int | str
    default: int | str
    allowed: str
    meaning: str


def _human_bytes(n: int) -> str:
    for unit, size in (("EiB", 1 << 60), ("PiB", 1 << 50), ("TiB", 1 << 40), ("GiB", 1 << 30),
                       ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n // size} {unit}" if n % size == 0 else f"{n / size:.1f} {unit}"
    return f"{n} bytes"


# ------------------------------------------------------------------------ the config


@attrs.frozen
class ZosLogConfig:
    """The log parameters of one z/OS queue manager (SPEC §5.0–§5.3).

    Attribute names are the IBM (or model) names in lower case; :data:`PARAMETERS` gives each
    one's range and meaning. Construction checks every value, that STARTRBA lies below the
    termination RBA of its mode, and that dual archives have two different prefixes.
    """

    twoactv: bool = _field(TWOACTV)
    twoarch: bool = _field(TWOARCH)
    twobsds: bool = _field(TWOBSDS)
    offload: bool = _field(OFFLOAD)
    maxarch: int = _field(MAXARCH)
    outbuff: int = _field(OUTBUFF)
    inbuff: int = _field(INBUFF)
    wrthrsh: int = _field(WRTHRSH)
    maxrtu: int = _field(MAXRTU)
    deallct: int = _field(DEALLCT)
    complog: str = _field(COMPLOG)
    zstd_in_any: bool = _field(ZSTD_IN_ANY)
    logload: int = _field(LOGLOAD)
    arcpfx1: str = _field(ARCPFX1)
    arcpfx2: str = _field(ARCPFX2)
    active_logs: int = _field(ACTIVE_LOGS)
    active_log_cis: int = _field(ACTIVE_LOG_CIS)
    rba8: bool = _field(RBA8_PARAM)
    startrba: int = _field(STARTRBA)

    def __attrs_post_init__(self) -> None:
        limits = self.rba_limits
        if self.startrba >= limits.termination:
            highest = limits.termination - CI_BYTES
            raise ParameterError(
                STARTRBA.name, "0x" + limits.hex(self.startrba),
                f"a multiple of 4096 from 0x{limits.hex(0)} to 0x{limits.hex(highest)} "
                f"({limits.width}-byte RBA, RBA8={'YES' if self.rba8 else 'NO'}: it terminates "
                f"at 0x{limits.hex(limits.termination)})")
        if self.twoarch and self.arcpfx1 == self.arcpfx2:
            raise ParameterError(ARCPFX2.name, self.arcpfx2,
                                 f"a prefix other than ARCPFX1 ({self.arcpfx1}) with TWOARCH=YES")

    # ------------------------------------------------------------- derived values

    @property
    def copies(self) -> int:
        """Copies of the active log every CI is written to (TWOACTV)."""
        return 2 if self.twoactv else 1

    @property
    def archive_copies(self) -> int:
        return 2 if self.twoarch else 1

    @property
    def output_buffer_cis(self) -> int:
        """OUTBUFF in whole CIs (a part-CI is rounded up)."""
        return -(-self.outbuff * KB // CI_BYTES)

    @property
    def output_buffer_bytes(self) -> int:
        return self.output_buffer_cis * CI_BYTES

    @property
    def input_buffer_bytes(self) -> int:
        return self.inbuff * KB

    @property
    def write_threshold_cis(self) -> int:
        """Full CIs that start a write: WRTHRSH, but never more than the buffer holds."""
        return min(self.wrthrsh, self.output_buffer_cis)

    @property
    def data_set_bytes(self) -> int:
        """Size of each active log data set."""
        return self.active_log_cis * CI_BYTES

    @property
    def active_log_bytes(self) -> int:
        """Log one copy of the active log holds: ACTIVE_LOGS data sets."""
        return self.active_logs * self.data_set_bytes

    @property
    def active_data_sets(self) -> int:
        """Active log data sets in all copies (2 to 310 single, 4 to 620 dual)."""
        return self.active_logs * self.copies

    @property
    def active_disk_bytes(self) -> int:
        """Disk the active log takes, all copies."""
        return self.active_data_sets * self.data_set_bytes

    def bytes_written(self, log_bytes: int) -> int:
        """Bytes of I/O for ``log_bytes`` of log: each copy is written in full."""
        return log_bytes * self.copies

    @property
    def archive_limit(self) -> int:
        """Archive data sets per copy the BSDS records (MAXARCH); older ones drop out."""
        return self.maxarch

    @property
    def archived_bytes_limit(self) -> int:
        """Log the recorded archives of one copy can hold: each holds one active data set."""
        return self.maxarch * self.data_set_bytes

    @property
    def compression_algorithms(self) -> tuple[str, ...]:
        """What COMPLOG lets the queue manager try on a record, best of them kept."""
        if self.complog == RLE:
            return (RLE,)
        if self.complog == ANY:
            return (RLE, ZSTD) if self.zstd_in_any else (RLE,)
        return ()

    @property
    def rba_limits(self) -> RbaLimits:
        return rba_limits(self.rba8)

    def rba_threshold(self, rba: int) -> RbaThreshold:
        """The furthest RBA threshold ``rba`` has reached in this configuration's mode."""
        return self.rba_limits.threshold(rba)

    @property
    def rba_headroom_bytes(self) -> int:
        """Log that can be written from STARTRBA before the queue manager terminates (00D10257)."""
        return self.rba_limits.termination - self.startrba

    # ------------------------------------------------------------ named constructors

    @classmethod
    def from_settings(cls, values: Mapping[str, str | int | bool], *,
                      base: ZosLogConfig | None = None) -> ZosLogConfig:
        """``base`` (default: all defaults) with ``--set log.NAME=VALUE`` items applied.

        Names in any case, with or without ``log.``; values as text (notation in the module
        docstring) or already as int/bool. Every error names ``log.NAME``; an unknown name
        lists the known ones.
        """
        chosen: dict[str, Any] = {}
        for key, text in values.items():
            parameter = _lookup(key, text)
            if parameter.attribute in chosen:
                raise ParameterError(f"log.{parameter.name}", _short(text), "to be set once")
            try:
                chosen[parameter.attribute] = parameter.parse(text)
            except ParameterError as exc:
                raise _renamed(exc, f"log.{parameter.name}") from None
        try:
            return attrs.evolve(base if base is not None else cls(), **chosen)
        except ParameterError as exc:
            raise _renamed(exc, f"log.{exc.name}") from None

    @classmethod
    def from_file(cls, path: str | Path, *, base: ZosLogConfig | None = None) -> ZosLogConfig:
        """The configuration a file gives: assembler macro text or NAME=VALUE lines (module
        docstring), told apart by the first statement."""
        path = Path(path)
        text = path.read_text(encoding="utf-8")
        first = next((line for line in text.splitlines()
                      if line.strip() and not line.startswith(("*", ".*", "#", ";"))), "")
        words = first.split()
        operation = words[1] if first[:1] not in ("", " ", "\t") and len(words) > 1 else \
            (words[0] if words else "")
        if operation.upper() in (CSQ6LOGP, CSQ6SYSP, CSQ6ARVP):
            return cls.from_macros(text, source=str(path), base=base)
        return cls.from_lines(text, source=str(path), base=base)

    @classmethod
    def from_lines(cls, text: str, *, source: str = "settings",
                   base: ZosLogConfig | None = None) -> ZosLogConfig:
        """The configuration NAME=VALUE lines give, on top of ``base``."""
        values: dict[str, Any] = {}
        where: dict[str, int] = {}
        for number, line in enumerate(text.splitlines(), 1):
            stripped = line.strip()
            if not stripped or stripped.startswith(("*", "#", ";")):
                continue
            key, equals, value = stripped.partition("=")
            if not equals or not key.strip():
                raise ZosConfigFileError(f"malformed line {_short(stripped)!r}: expected NAME=VALUE",
                                         source=source, line=number)
            try:
                parameter = _lookup(key, value.strip())
            except ParameterError as exc:
                raise ZosConfigFileValueError(exc, source=source, line=number) from None
            if parameter.attribute in values:
                raise ZosConfigFileError(f"{parameter.name} is given twice (lines "
                                         f"{where[parameter.attribute]} and {number})",
                                         source=source, line=number)
            values[parameter.attribute] = value.strip()
            where[parameter.attribute] = number
        return cls._from_located(values, where, source, base)

    @classmethod
    def from_macros(cls, text: str, *, source: str = "CSQ4ZPRM",
                    base: ZosLogConfig | None = None) -> ZosLogConfig:
        """The configuration CSQ6LOGP/CSQ6SYSP/CSQ6ARVP macro text gives, on top of ``base``
        (which supplies the model's own parameters)."""
        values: dict[str, Any] = {}
        where: dict[str, int] = {}
        for number, operation, operands in _statements(text, source):
            macro = operation.upper()
            if macro not in (CSQ6LOGP, CSQ6SYSP, CSQ6ARVP):
                continue
            for keyword, value in _operands(operands, source, number):
                parameter = _BY_NAME.get(keyword.upper())
                if parameter is None or parameter.macro != macro:
                    if parameter is not None and parameter.macro != MODEL:
                        raise ZosConfigFileError(f"{parameter.name} belongs in {parameter.macro}, "
                                                 f"not {macro}", source=source, line=number)
                    if macro == CSQ6LOGP and keyword.upper() not in _CSQ6LOGP_IGNORED:
                        known = ", ".join(p.name for p in PARAMETERS if p.macro == CSQ6LOGP)
                        raise ZosConfigFileError(
                            f"unknown CSQ6LOGP keyword {_short(keyword)!r}; known: {known} "
                            f"(and {', '.join(sorted(_CSQ6LOGP_IGNORED))}, not modelled)",
                            source=source, line=number)
                    continue
                if parameter.attribute in values:
                    raise ZosConfigFileError(f"{parameter.name} is given twice (lines "
                                             f"{where[parameter.attribute]} and {number})",
                                             source=source, line=number)
                values[parameter.attribute] = value
                where[parameter.attribute] = number
        return cls._from_located(values, where, source, base)

    @classmethod
    def _from_located(cls, texts: dict[str, str], where: dict[str, int], source: str,
                      base: ZosLogConfig | None) -> ZosLogConfig:
        values: dict[str, Any] = {}
        for attribute, text in texts.items():
            try:
                values[attribute] = _BY_NAME[attribute.upper()].parse(text)
            except ParameterError as exc:
                raise ZosConfigFileValueError(exc, source=source, line=where[attribute]) from None
        try:
            return attrs.evolve(base if base is not None else cls(), **values)
        except ParameterError as exc:  # a check across parameters
            raise ZosConfigFileValueError(exc, source=source,
                                          line=where.get(exc.name.lower())) from None

    # ------------------------------------------------------------ run-time changes

    def set_log(self, **changes: str | int) -> ZosLogConfig:
        """A copy changed as ``SET LOG`` would: WRTHRSH (immediately), MAXARCH (at the next
        offload), COMPLOG (at any time), MAXRTU, DEALLCT. Names in any case; values as int
        or text. Any other parameter raises :class:`NotChangeableError`."""
        return self._changed(SET_LOG, changes)

    def set_system(self, **changes: str | int) -> ZosLogConfig:
        """A copy changed as ``SET SYSTEM`` would: LOGLOAD only (among the log parameters)."""
        return self._changed(SET_SYSTEM, changes)

    def _changed(self, command: str, changes: Mapping[str, str | int]) -> ZosLogConfig:
        chosen: dict[str, Any] = {}
        for key, value in changes.items():
            parameter = _lookup(key, value)
            if parameter.command != command:
                raise NotChangeableError(parameter.name, _short(value), command,
                                         _where_set(parameter))
            chosen[parameter.attribute] = parameter.parse(value)
        return attrs.evolve(self, **chosen)

    # ----------------------------------------------------------------- writing out

    def to_settings(self) -> dict[str, int | str]:
        """Every parameter by name, as ``from_settings`` takes it back: numbers as ints,
        switches as YES/NO, STARTRBA in hex."""
        return {p.name: p.text(getattr(self, p.attribute), rba8=self.rba8) for p in PARAMETERS}

    def describe(self) -> list[ParameterRow]:
        """One row per parameter: name, value, default, what is allowed, meaning."""
        settings = self.to_settings()
        return [ParameterRow(p.name, settings[p.name], p.text(p.default, rba8=self.rba8),
                             p.allowed, _meaning(p)) for p in PARAMETERS]

    def derived(self) -> dict[str, dict[str, Any]]:
        """The sizes that follow from the parameters, each as ``{"bytes": n, "text": ...}``."""
        data_set = _human_bytes(self.data_set_bytes)
        copies = "dual" if self.twoactv else "single"
        limits = self.rba_limits
        sizes = {
            "output_buffer_bytes": (self.output_buffer_bytes, (
                f"{_human_bytes(self.output_buffer_bytes)} output buffer ({self.output_buffer_cis} "
                f"CIs of 4 KiB from OUTBUFF={self.outbuff} KB); a write starts when "
                f"{self.write_threshold_cis} are full (WRTHRSH)")),
            "input_buffer_bytes": (self.input_buffer_bytes, (
                f"{_human_bytes(self.input_buffer_bytes)} input buffer (INBUFF)")),
            "data_set_bytes": (self.data_set_bytes, (
                f"{data_set} per active log data set ({self.active_log_cis} CIs of 4 KiB)")),
            "active_log_bytes": (self.active_log_bytes, (
                f"{_human_bytes(self.active_log_bytes)} active log per copy "
                f"({self.active_logs} data sets × {data_set})")),
            "active_disk_bytes": (self.active_disk_bytes, (
                f"{_human_bytes(self.active_disk_bytes)} of active log data sets in all "
                f"({copies} logging: {self.active_data_sets} data sets)")),
            "bytes_written_per_ci": (self.bytes_written(CI_BYTES), (
                f"{_human_bytes(self.bytes_written(CI_BYTES))} written per 4 KiB CI of log "
                f"({copies} logging: {self.copies} "
                f"cop{'ies' if self.copies > 1 else 'y'})")),
            "archived_bytes_limit": (self.archived_bytes_limit, (
                f"{_human_bytes(self.archived_bytes_limit)} of archived log recorded in the BSDS "
                f"per copy ({self.archive_limit} archive data sets (MAXARCH) × {data_set}"
                f"{'' if self.offload else '; OFFLOAD=NO: nothing is archived, the log wraps'})")),
            "rba_headroom_bytes": (self.rba_headroom_bytes, (
                f"{_human_bytes(self.rba_headroom_bytes)} can be logged from STARTRBA "
                f"0x{limits.hex(self.startrba)} before the queue manager terminates at "
                f"0x{limits.hex(limits.termination)} ({limits.width}-byte RBA; warnings from "
                f"0x{limits.hex(limits.warning)})")),
        }
        out = {name: {"bytes": n, "text": text} for name, (n, text) in sizes.items()}
        out["archived_bytes_limit"]["count"] = self.archive_limit
        return out


# --------------------------------------------------------------------- CLI wiring


def configure(overrides: Mapping[str, str]) -> dict[str, int | str]:
    """The effective z/OS log parameters: defaults with ``--set`` ``overrides`` applied,
    checked, as :meth:`ZosLogConfig.to_settings` gives them (for ``mqlog/platforms.py``)."""
    return ZosLogConfig.from_settings(overrides).to_settings()


def describe(config: ZosLogConfig | Mapping[str, Any]) -> tuple[list[ParameterRow], dict]:
    """Rows and derived sizes for ``mqlog config --platform zos``: of a configuration, or of
    the settings :func:`configure` returned."""
    if not isinstance(config, ZosLogConfig):
        config = ZosLogConfig.from_settings(dict(config))
    return config.describe(), config.derived()


# ------------------------------------------------------------------- helpers


def _where_set(parameter: ZosParameter) -> str:
    if parameter.command is not None:
        return f"it is changed with {parameter.command}"
    if parameter.macro == MODEL:
        return f"it is the model's start-time setting log.{parameter.name}"
    return f"it is set only at queue manager start ({parameter.macro})"


def _meaning(parameter: ZosParameter) -> str:
    if parameter.command is None:
        return parameter.meaning
    return f"{parameter.meaning}; {parameter.command}, {parameter.takes_effect}"


#: CSQ6LOGP keywords IBM has that the model accepts in macro text and ignores.
_CSQ6LOGP_IGNORED = frozenset({"MAXCNOFF", "ZHYWRITE", "ZHYLINK"})
#: Assembler source: column 72 marks a continuation, columns 73-80 are sequence numbers.
_CONTINUATION_COLUMN = 71


def _statements(text: str, source: str) -> list[tuple[int, str, str]]:
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


def _operands(field: str, source: str, line: int) -> list[tuple[str, str]]:
    """``KEY=VALUE`` operands of a macro, split at commas outside parentheses and quotes."""
    parts: list[str] = []
    depth, quoted, start = 0, False, 0
    for i, ch in enumerate(field):
        if ch == "'":
            quoted = not quoted
        elif not quoted and ch == "(":
            depth += 1
        elif not quoted and ch == ")":
            depth -= 1
        elif not quoted and depth == 0 and ch == ",":
            parts.append(field[start:i])
            start = i + 1
    parts.append(field[start:])
    out = []
    for part in parts:
        if not part:
            continue
        keyword, equals, value = part.partition("=")
        if not equals or not keyword:
            raise ZosConfigFileError(f"malformed operand {_short(part)!r}: expected KEYWORD=value",
                                     source=source, line=line)
        out.append((keyword, value))
    return out
