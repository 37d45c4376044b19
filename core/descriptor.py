"""A platform's descriptor: everything the rest of mqlog needs to know about one platform, in
one object its package exports (SQLAlchemy's dialect, a ZODB storage's configuration).

The application layer, the Spark jobs and the command line never branch on a platform's name:
they look the platform up in the registry (:mod:`mqlog.platforms`) and ask its
:class:`PlatformDescriptor` – its parameters and which of them are fixed when the queue manager
is created, how to build it over a storage, what its files are called and what each is to
restart, how it writes a log address, the log ranges a reader of its files needs, what it
claims to survive, how calibration scales it, which of the model's figures are calibrated for
it, and which ``mqlog`` commands are its own utilities. A descriptor imports its platform's
modules only when one of its functions is called, so that listing the platforms (``mqlog
--help``) stays fast.

:data:`REFERENCE` is the core's own idealised log's descriptor (one growing file, no limits),
whose three parameters are defined here.
"""

from __future__ import annotations

from types import MappingProxyType, ModuleType
from typing import Any, Callable, Mapping

import attrs

from mqlog.core.disk.faults import NOTHING, FileRoles
from mqlog.core.disk.storage import Storage
from mqlog.core.errors import ParameterError
from mqlog.core.params import Number, Parameter, ParameterSet
from mqlog.core.platform import Platform
from mqlog.core.reference import reference_platform

#: the colours a platform's configurations are drawn in, in turn (a report's plots), unless
#: its descriptor gives its own: blues
DEFAULT_PALETTE = ("#1f4e79", "#2e75b6", "#9dc3e6")

#: a log range as a reader of the platform's files needs it: (file, first address, end address)
LogRange = tuple[str, int, int]


@attrs.frozen
class PlatformDescriptor:
    """One platform as the rest of mqlog sees it (see the module's docstring)."""

    name: str
    description: str
    factory: Callable[[Storage, dict], Platform]
    #: a platform without a configuration object of its own: its parameters (checked here)
    params: tuple[Parameter, ...] = ()
    #: checks across parameters, on the effective values (raise ParameterError)
    check: Callable[[dict], None] | None = None
    #: a platform with its own configuration object: text overrides -> effective values
    configurer: Callable[[dict], dict] | None = None
    #: a platform with its own configuration object: its whole parameter table, by which
    #: ``--set log.X`` names are looked up in any case
    parameter_table: Callable[[], tuple[Parameter, ...]] | None = None
    #: rows (name, value, default, allowed, meaning) and derived sizes for `mqlog config`
    describer: Callable[[dict], tuple[list, dict]] | None = None
    #: where the platform's real parameter names come from ("qm.ini Log: keys"), and a function
    #: giving the names of those of its parameters that are the model's own (no such real name):
    #: an MQ professional must see which settings have no counterpart on a real queue manager
    real_names: str = ""
    model_only: Callable[[], tuple[str, ...]] | None = None
    #: the parameters a restart may not change, each with why (IBM's word for it): they were
    #: fixed when the queue manager was created
    fixed_at_creation: Mapping[str, str] = attrs.field(default=MappingProxyType({}), converter=MappingProxyType)
    #: what the configuration (effective values) claims against the fault classes its log's
    #: design decides: {fault class: (SURVIVE/DETECT/NOTHING, why)} over the generic claims
    #: of :func:`mqlog.torture.claims.claims`
    fault_claims: Callable[[dict], dict[str, tuple[str, str]]] = lambda values: {}
    #: what each of its files is to restart (a :class:`~mqlog.core.disk.faults.FileRoles`)
    file_roles: Callable[[], FileRoles] = lambda: REFERENCE_FILES
    #: its log files' names, for ``mqlog scan``, which sees one file: (regular expression of
    #: the whole name, what such a file is in words)
    file_names: tuple[tuple[str, str], ...] = ()
    #: the markers its other files start with, and what each such file is
    file_markers: Mapping[bytes, str] = attrs.field(default=MappingProxyType({}), converter=MappingProxyType)
    #: its files of log pages that hold no stretch of log, by name, and what each is
    page_files: Mapping[str, str] = attrs.field(default=MappingProxyType({}), converter=MappingProxyType)
    #: what one of its log files is called in prose ("extent", "data set")
    log_file_noun: str = "file"
    #: its own log record classes (codes in its range): a file of it decodes with these
    record_types: Callable[[], tuple] = lambda: ()
    #: ``log_ranges(space)``: every file holding a range of its log now, as a reader of the
    #: files (the Spark data source) needs them, by start; None: its log is not read that way
    log_ranges: Callable[[Any], list[LogRange]] | None = None
    #: how it writes a log address, as its own dump and messages do: (the bare form for a
    #: column, a labelled one for a sentence, the column's width); the default is the
    #: reference log's byte address in hex
    notation: Callable[[], tuple[Callable[[int], str], Callable[[int], str], int]] = \
        lambda: ("{:016X}".format, "{:016X}".format, 16)
    #: the log settings calibration scales with the work: (name, default, minimum)
    scaled_log: tuple[tuple[str, int, int], ...] = ()
    #: which of a run's figures are calibrated for it: ``run_provenance(metrics)`` -> entries
    #: (figure, basis, cases, note); None: the reference log's (no platform's rules)
    run_provenance: Callable[[dict], list[tuple]] | None = None
    #: the same for a restart's figures (entries); empty: restart's mechanisms only assumed
    restart_provenance: tuple[tuple, ...] = ()
    #: figures its restart reports beyond the core's (``restart_X`` of a comparison's row),
    #: and ``restart_readings(space)``: their values once a restart over ``space`` completed
    restart_figures: tuple[str, ...] = ()
    restart_readings: Callable[[Any], dict] = lambda space: {}
    #: configurations a comparison runs by default: (name, log settings)
    examples: tuple[tuple[str, Mapping[str, str]], ...] = ()
    #: the colours its configurations are drawn in, in turn
    palette: tuple[str, ...] = DEFAULT_PALETTE
    #: the ``mqlog`` commands that are its own utilities (its dump, its media images), and the
    #: module of functions they call (imported when asked for)
    commands: tuple[str, ...] = ()
    tools: Callable[[], ModuleType] | None = None
    #: the command that formats its log, and the IBM utility it is like: named when a run of
    #: it is handed to another platform's log formatter
    log_formatter: tuple[str, str] | None = None
    #: how prose and tables name the platform ("z/OS"); its ``name`` unless given
    title: str = ""
    #: the factory takes the queue manager's name too (``qm_name=``: the name its messages and
    #: error log carry), as several queue managers of one topology need
    named: bool = False

    @property
    def shown(self) -> str:
        """The platform's name as prose and tables write it."""
        return self.title or self.name

    def parameters(self) -> ParameterSet:
        """The platform's parameters, looked up by name in any case (as ``--set`` takes them)."""
        table = self.parameter_table() if self.parameter_table is not None else self.params
        return ParameterSet(tuple(table), f"a log parameter of platform {self.name}")

    def model_only_names(self) -> tuple[str, ...]:
        """The parameters that are the model's own, not the platform's real names (all of them
        for a platform without real names)."""
        if self.model_only is not None:
            return self.model_only()
        return tuple(p.name for p in self.params) if not self.real_names else ()

    def configure(self, overrides: dict[str, str]) -> dict:
        """The effective log parameters: defaults with ``overrides`` (text) applied and checked."""
        if self.configurer is not None:
            return self.configurer(overrides)
        known = ParameterSet(self.params, f"a log parameter of platform {self.name}")
        values = {p.name: p.default for p in self.params}
        for key, text in overrides.items():
            param = known.lookup(key, text)
            values[param.name] = param.parse(text, f"log.{param.name}")
        if self.check is not None:
            self.check(values)
        return values

    def maker(self, values: dict) -> Callable[[Storage], Platform]:
        factory = self.factory
        return lambda storage: factory(storage, values)

    def named_maker(self, values: dict, qm_name: str) -> Callable[[Storage], Platform]:
        """:meth:`maker` for the queue manager ``qm_name`` (its messages say its name, where the
        platform's do)."""
        if not self.named:
            return self.maker(values)
        factory = self.factory
        return lambda storage: factory(storage, values, qm_name=qm_name)


# --- the reference platform ----------------------------------------------------------------

@attrs.frozen
class WholeNumber(Number):
    """The reference platform's notation: Python's integer literals (``0x200``, ``1_000``);
    text that is none says so with the range, quoted in full."""

    not_a_number: str = "a whole number from {low} to {high}"

    def from_text(self, text: str) -> int | None:
        try:
            return int(text.replace("_", ""), 0)
        except ValueError:
            return None

    def from_value(self, value: Any) -> int | None:
        return self.from_text(str(value))

    def shown(self, value: Any) -> object:
        return value


@attrs.frozen
class LogParam(Parameter):
    """A reference platform parameter, with the range and meaning ``mqlog config`` lists."""

    @property
    def low(self) -> int:
        return self.kind.low

    @property
    def high(self) -> int:
        return self.kind.high

    @property
    def doc(self) -> str:
        return self.meaning


def _reference_check(values: dict) -> None:
    if values["write_threshold_pages"] > values["buffer_pages"]:
        raise ParameterError("log.write_threshold_pages", values["write_threshold_pages"],
                             f"1 to log.buffer_pages ({values['buffer_pages']})")


def _reference(storage: Storage, values: dict) -> Platform:
    return reference_platform(storage, checkpoint_records=values["checkpoint_records"],
                              buffer_pages=values["buffer_pages"],
                              write_threshold_pages=values["write_threshold_pages"])


#: the reference log (reference.log) and its control file (reference.ctl)
REFERENCE_FILES = FileRoles(control=lambda name: name.endswith(".ctl"), log=lambda name: name.endswith(".log"),
                            needed=lambda name: name.endswith(".log"),
                            single_copy=lambda values: "the reference log")


def _reference_fault_claims(values: dict) -> dict:
    # Its control file keeps the checkpoint and the tail, not a high-water mark as the
    # platforms' control data does: a log file cut short after the checkpoint ends where a
    # crash's log would (found by `mqlog torture --platform reference`, whose `missing`
    # class lost messages silently under the generic claim to detect).
    return {"torn": (NOTHING, "the reference platform rewrites partial pages in place"),
            "missing": (NOTHING, "the reference platform's control data keeps no high-water mark: a log file "
                                 "cut short after the last checkpoint looks like a crash's end of the log; a "
                                 "missing file or one cut before the checkpoint is refused")}


REFERENCE = PlatformDescriptor(
    "reference", "the core's idealised log: one growing file, no space limits", _reference,
    (LogParam("checkpoint_records", 10_000, WholeNumber(1, 16_000_000), "log records between checkpoints"),
     LogParam("buffer_pages", 512, WholeNumber(2, 65_535), "log buffer size in 4 KiB pages"),
     LogParam("write_threshold_pages", 20, WholeNumber(1, 65_535),
              "full buffer pages that start a write nobody forced")),
    check=_reference_check, fault_claims=_reference_fault_claims,
    file_markers={b"MQLC": "a log control file (the reference platform's checkpoint pointer)"})
