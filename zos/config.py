"""A z/OS queue manager's log configuration: CSQ6LOGP, CSQ6SYSP, CSQ6ARVP and SET LOG.

:class:`ZosLogConfig` holds every log parameter of CSQ6LOGP, CSQ6SYSP and SET LOG under its IBM name in lower
case (``TWOACTV`` → ``twoactv``); :data:`PARAMETERS` gives each one's macro, default, range,
meaning and whether (and when) a command may change it while the queue manager runs. A value
out of range fails at construction with a :class:`~mqlog.core.errors.ParameterError` naming
the parameter, the value and what is allowed.

The parameters come from three places on a real system, plus the model's own:

* CSQ6LOGP (logging): TWOACTV, TWOARCH, TWOBSDS, OFFLOAD, MAXARCH, MAXCNOFF, OUTBUFF, INBUFF,
  WRTHRSH, MAXRTU, DEALLCT, COMPLOG;
* CSQ6SYSP (system): LOGLOAD;
* CSQ6ARVP (archiving): ARCPFX1, ARCPFX2;
* the model (not IBM keywords): ACTIVE_LOGS and ACTIVE_LOG_CIS, the shape of the active log
  that a real system defines with IDCAMS and CSQJU003 NEWLOG (or DEFINE LOG); RBA8 (8-byte
  RBA, what CSQJUCNV converts to and the default for queue managers created at MQ 9.3 or
  later); STARTRBA (where the log starts, as CSQJU003 sets it after a log reset); and
  ZSTD_IN_ANY, which lets ``COMPLOG(ANY)`` choose zstd as well as RLE. **ZSTD_IN_ANY is
  not real z/OS**: IBM's ANY picks among IBM's algorithms, today RLE only (IBM MQ for z/OS, "SET LOG": COMPLOG).
  SHARED_QUEUES names queues that a run defines QSGDISP(SHARED) in a queue-sharing group of
  this one queue manager (a CF structure keeps them; records carry LRSNs): what DEFINE
  QLOCAL ... QSGDISP(SHARED) does on a real system (mqlog.zos.qsg.attach_shared_queues), for a run to put to shared and private
  queues side by side (COMPLOG never compresses the shared ones).

Value notation, wherever text is read (``--set log.NAME=VALUE``, files, :meth:`set_log`):
names in any case, with or without ``log.``; YES/NO for switches (any case); whole decimal
numbers, in KB where IBM's parameter is in KB (OUTBUFF, INBUFF); DEALLCT also takes NOLIMIT
(= 1440); STARTRBA in hex as ``0x00000000F000`` or ``X'F000'``, or in decimal.

Files (:meth:`ZosLogConfig.from_file`) hold either

* **assembler macro text** as in a CSQ4ZPRM job (read by :mod:`mqlog.zos.parmlib`) –
  recognised by its first statement being CSQ6LOGP, CSQ6SYSP or CSQ6ARVP
  (:meth:`ZosLogConfig.from_macros`). CSQ6LOGP's keywords must all be known (the model's, or
  ZHYWRITE/ZHYLINK, accepted and ignored); CSQ6SYSP and CSQ6ARVP carry many keywords
  of other components, so only LOGLOAD and ARCPFX1/ARCPFX2 are read from them and the rest
  ignored, as are other statements (CSQ6USGP, END, ...). The model's own parameters keep
  their defaults (or ``base``'s); or
* **NAME=VALUE lines**, one parameter a line, names as ``--set`` takes them; blank lines and
  lines starting with ``*``, ``#`` or ``;`` are comments.

Either way an error names the file and line (:class:`ZosConfigFileError`).

Run-time changes follow IBM: :meth:`ZosLogConfig.set_log` for WRTHRSH (immediately),
MAXARCH (at the next offload), COMPLOG (at any time), MAXRTU and DEALLCT;
:meth:`ZosLogConfig.set_system` for LOGLOAD. Anything else is refused with
:class:`NotChangeableError` saying where it can be set.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from mqlog.core.errors import ParameterError
from mqlog.core.params import (
    Parameter,
    ParameterRow,
    field,
    human_bytes,
    quoted,
    renamed,
)
from mqlog.zos.parameters import (  # noqa: F401  (the parameter table, re-exported)
    ANY,
    NONE,
    RLE,
    ACTIVE_LOGS,
    ACTIVE_LOG_CIS,
    ARCPFX1,
    ARCPFX2,
    BUFFERS,
    COMPLOG,
    CSQ6ARVP,
    CSQ6LOGP,
    CSQ6SYSP,
    DEALLCT,
    INBUFF,
    KB,
    LOGLOAD,
    MAXARCH,
    MAXCNOFF,
    MAXRTU,
    MODEL,
    OFFLOAD,
    OUTBUFF,
    PARAMETERS,
    PARAMETER_SET,
    RBA8_PARAM,
    SET_LOG,
    SET_SYSTEM,
    SHARED_QUEUES,
    STARTRBA,
    TWOACTV,
    TWOARCH,
    TWOBSDS,
    WRTHRSH,
    ZSTD,
    ZSTD_IN_ANY,
)
from mqlog.zos import parmlib
from mqlog.zos.parmlib import ZosConfigFileError, ZosConfigFileValueError
from mqlog.zos.rba import (
    CI_BYTES,
    RBA6,
    RBA6_END,
    RBA6_TERMINATION,
    RBA6_WARNING,
    RBA8,
    RBA8_END,
    RBA8_TERMINATION,
    RBA8_WARNING,
    RbaAddress,
    RbaLimits,
    RbaThreshold,
    rba_limits,
    rba_threshold,
)

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
    "configure",
    "describe",
    "rba_limits",
    "rba_threshold",
]

# ---------------------------------------------------------------------------- errors


class NotChangeableError(ParameterError):
    """A parameter a run-time command (SET LOG, SET SYSTEM) may not change."""

    def __init__(self, name: str, value: object, command: str, reason: str):
        self.name = name
        self.value = value
        self.allowed = reason
        self.command = command
        Exception.__init__(self, f"{name} cannot be changed with {command}: {reason}")


# ------------------------------------------------------------------------ the config


@attrs.frozen
class ZosLogConfig:
    """The log parameters of one z/OS queue manager (IBM MQ for z/OS, "Using CSQ6LOGP" and "Using CSQ6SYSP").

    Attribute names are the IBM (or model) names in lower case; :data:`PARAMETERS` gives each
    one's range and meaning. Construction checks every value, that STARTRBA lies below the
    termination RBA of its mode, and that dual archives have two different prefixes.
    """

    twoactv: bool = field(TWOACTV)
    twoarch: bool = field(TWOARCH)
    twobsds: bool = field(TWOBSDS)
    offload: bool = field(OFFLOAD)
    maxarch: int = field(MAXARCH)
    maxcnoff: int = field(MAXCNOFF)
    outbuff: int = field(OUTBUFF)
    inbuff: int = field(INBUFF)
    wrthrsh: int = field(WRTHRSH)
    maxrtu: int = field(MAXRTU)
    deallct: int = field(DEALLCT)
    complog: str = field(COMPLOG)
    zstd_in_any: bool = field(ZSTD_IN_ANY)
    logload: int = field(LOGLOAD)
    arcpfx1: str = field(ARCPFX1)
    arcpfx2: str = field(ARCPFX2)
    active_logs: int = field(ACTIVE_LOGS)
    active_log_cis: int = field(ACTIVE_LOG_CIS)
    rba8: bool = field(RBA8_PARAM)
    startrba: int = field(STARTRBA)
    shared_queues: str = field(SHARED_QUEUES)
    buffers: int = field(BUFFERS)

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
    def shared_queue_names(self) -> tuple[str, ...]:
        """The queues SHARED_QUEUES names (none for NONE)."""
        return () if self.shared_queues == NONE else tuple(self.shared_queues.split(","))

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
        chosen = PARAMETER_SET.choose(values)
        try:
            return attrs.evolve(base if base is not None else cls(), **chosen)
        except ParameterError as exc:
            raise renamed(exc, f"log.{exc.name}") from None

    @classmethod
    def from_file(cls, path: str | Path, *, base: ZosLogConfig | None = None) -> ZosLogConfig:
        """The configuration a file gives: assembler macro text or NAME=VALUE lines (module
        docstring), told apart by the first statement."""
        path = Path(path)
        text = path.read_text(encoding="utf-8")
        operation = parmlib.first_operation(text)
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
                raise ZosConfigFileError(f"malformed line {quoted(stripped)!r}: expected NAME=VALUE",
                                         source=source, line=number)
            try:
                parameter = PARAMETER_SET.lookup(key, value.strip())
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
        for number, operation, operands in parmlib.statements(text, source):
            macro = operation.upper()
            if macro not in (CSQ6LOGP, CSQ6SYSP, CSQ6ARVP):
                continue
            for keyword, value in parmlib.operands(operands, source, number):
                parameter = PARAMETER_SET.get(keyword)
                if parameter is None or parameter.where != macro:
                    if parameter is not None and parameter.where != MODEL:
                        raise ZosConfigFileError(f"{parameter.name} belongs in {parameter.where}, "
                                                 f"not {macro}", source=source, line=number)
                    if macro == CSQ6LOGP and keyword.upper() not in _CSQ6LOGP_IGNORED:
                        known = ", ".join(p.name for p in PARAMETERS if p.where == CSQ6LOGP)
                        raise ZosConfigFileError(
                            f"unknown CSQ6LOGP keyword {quoted(keyword)!r}; known: {known} "
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
                values[attribute] = PARAMETER_SET.by_attribute(attribute).parse(text)
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
            parameter = PARAMETER_SET.lookup(key, value)
            if parameter.command != command:
                raise NotChangeableError(parameter.name, quoted(value), command,
                                         _where_set(parameter))
            chosen[parameter.attribute] = parameter.parse(value)
        return attrs.evolve(self, **chosen)

    # ----------------------------------------------------------------- writing out

    def to_settings(self) -> dict[str, int | str]:
        """Every parameter by name, as ``from_settings`` takes it back: numbers as ints,
        switches as YES/NO, STARTRBA in hex."""
        return {p.name: _written(p, getattr(self, p.attribute), self.rba8) for p in PARAMETERS}

    def describe(self) -> list[ParameterRow]:
        """One row per parameter: name, value, default, what is allowed, meaning."""
        settings = self.to_settings()
        return [ParameterRow(p.name, settings[p.name], _written(p, p.default, self.rba8),
                             p.allowed, p.described_meaning()) for p in PARAMETERS]

    def derived(self) -> dict[str, dict[str, Any]]:
        """The sizes that follow from the parameters, each as ``{"bytes": n, "text": ...}``."""
        data_set = human_bytes(self.data_set_bytes)
        copies = "dual" if self.twoactv else "single"
        limits = self.rba_limits
        sizes = {
            "output_buffer_bytes": (self.output_buffer_bytes, (
                f"{human_bytes(self.output_buffer_bytes)} output buffer ({self.output_buffer_cis} "
                f"CIs of 4 KiB from OUTBUFF={self.outbuff} KB); a write starts when "
                f"{self.write_threshold_cis} are full (WRTHRSH)")),
            "input_buffer_bytes": (self.input_buffer_bytes, (
                f"{human_bytes(self.input_buffer_bytes)} input buffer (INBUFF)")),
            "data_set_bytes": (self.data_set_bytes, (
                f"{data_set} per active log data set ({self.active_log_cis} CIs of 4 KiB)")),
            "active_log_bytes": (self.active_log_bytes, (
                f"{human_bytes(self.active_log_bytes)} active log per copy "
                f"({self.active_logs} data sets × {data_set})")),
            "active_disk_bytes": (self.active_disk_bytes, (
                f"{human_bytes(self.active_disk_bytes)} of active log data sets in all "
                f"({copies} logging: {self.active_data_sets} data sets)")),
            "bytes_written_per_ci": (self.bytes_written(CI_BYTES), (
                f"{human_bytes(self.bytes_written(CI_BYTES))} written per 4 KiB CI of log "
                f"({copies} logging: {self.copies} "
                f"cop{'ies' if self.copies > 1 else 'y'})")),
            "archived_bytes_limit": (self.archived_bytes_limit, (
                f"{human_bytes(self.archived_bytes_limit)} of archived log recorded in the BSDS "
                f"per copy ({self.archive_limit} archive data sets (MAXARCH) × {data_set}"
                f"{'' if self.offload else '; OFFLOAD=NO: nothing is archived, the log wraps'})")),
            "rba_headroom_bytes": (self.rba_headroom_bytes, (
                f"{human_bytes(self.rba_headroom_bytes)} can be logged from STARTRBA "
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


def _where_set(parameter: Parameter) -> str:
    if parameter.command is not None:
        return f"it is changed with {parameter.command}"
    if parameter.where == MODEL:
        return f"it is the model's start-time setting log.{parameter.name}"
    return f"it is set only at queue manager start ({parameter.where})"


def _written(parameter: Parameter, value: Any, rba8: bool) -> Any:
    """``value`` as :meth:`ZosLogConfig.to_settings` gives it: YES/NO for switches, an RBA in
    hex as wide as the mode's, the value itself otherwise."""
    if isinstance(parameter.kind, RbaAddress):
        return "0x" + rba_limits(rba8).hex(value)
    return parameter.written(value)


#: CSQ6LOGP keywords IBM has that the model accepts in macro text and ignores.
_CSQ6LOGP_IGNORED = frozenset({"ZHYWRITE", "ZHYLINK"})
