"""The errors mqlog raises, one specific type per thing a user can act on.

Every error a user can cause (a bad parameter, a damaged file, a malformed spec) derives
from :class:`MqlogError`; the command line prints its message on one line and exits
non-zero, never a traceback. Platform layers subclass these rather than inventing
parallel hierarchies.
"""

from __future__ import annotations


class MqlogError(Exception):
    """Base of every error mqlog reports to a user."""


class ParameterError(MqlogError, ValueError):
    """A configuration parameter is out of range or of the wrong kind.

    The message names the parameter, the value given and what is allowed.
    """

    def __init__(self, name: str, value: object, allowed: str):
        self.name = name
        self.value = value
        self.allowed = allowed
        super().__init__(f"{name}={value!r} is not valid: allowed {allowed}")


class UnknownParameterError(ParameterError):
    """A parameter name that names no parameter: not a bad value but a wrong name, said so,
    with the nearest names there are (``close``, from :mod:`difflib`) and all of them.

    ``allowed`` is ``"<owner>: <known names>"``, as a :class:`ParameterError` about the name
    said before, so that code that re-raises one with a file and line keeps working."""

    def __init__(self, name: str, value: object, allowed: str, *, owner: str = "",
                 known: tuple[str, ...] = (), close: tuple[str, ...] = ()):
        self.name = name
        self.value = value
        self.allowed = allowed
        self.owner = owner
        self.known = tuple(known)
        self.close = tuple(close)
        hint = f" (did you mean {' or '.join(self.close)}?)" if self.close else ""
        what = f"not {owner}" if owner else "no such parameter"
        known_text = f"; known: {', '.join(self.known)}" if self.known else ""
        Exception.__init__(self, f"{name} is unknown: {what}{hint}{known_text}")


class LogFormatError(MqlogError):
    """Bytes read from a log (or a control file) are not what the format says.

    ``source`` names the file (extent, data set, control file) and ``offset`` the byte
    offset in it; ``address`` is the log address (LSN/RBA) where known, already formatted
    by the platform's addressing.
    """

    def __init__(self, reason: str, *, source: str | None = None, offset: int | None = None,
                 address: str | None = None):
        self.reason = reason
        self.source = source
        self.offset = offset
        self.address = address
        where = []
        if source is not None:
            where.append(source)
        if offset is not None:
            where.append(f"offset {offset}")
        if address is not None:
            where.append(f"log address {address}")
        prefix = (", ".join(where) + ": ") if where else ""
        super().__init__(prefix + reason)


class LogCorruptionError(LogFormatError):
    """Damage in the middle of the log: good pages follow a bad one, so this is not a torn tail."""


class LogFileMissingError(LogCorruptionError):
    """A file the log's control data lists as holding log that is still needed (restart,
    undo, media recovery, an archive read) is absent or shorter than its format: the log
    it held is gone. Never taken for the end of the log or for a new queue manager."""


class RecordTooLargeError(MqlogError, ValueError):
    """A record would exceed the format's size limit (see ``records.MAX_RECORD_SIZE``)."""


class StorageError(MqlogError):
    """An I/O request failed (a real OS error, or one injected by a fault plan)."""


class StorageFullError(StorageError):
    """The file system is full (ENOSPC): a file could not be created or grow. Nothing of the
    failed call was written."""


class LogWriteError(StorageError):
    """The log could not be written. Like a real queue manager, the log is then unusable:
    every waiting force and every later append fails with this error. ``cause`` is the
    storage error that made it so (a full file system, an I/O error), where known."""

    cause: StorageError | None = None


class SimulatedCrash(MqlogError):
    """The fault plan pulled the plug: everything not yet forced is gone.

    Raised out of the write that triggered it; the storage refuses further I/O until it
    is reopened for restart.
    """


class DeviceProfileError(MqlogError):
    """A device profile is unknown or malformed."""


class MeasurementFileError(MqlogError):
    """A storage measurement a user gives mqlog (mqldt's CSV or console report) is unreadable,
    malformed or not one at all: ``source`` names the file and ``line`` the 1-based line
    where known."""

    def __init__(self, reason: str, *, source: str, line: int | None = None):
        self.reason = reason
        self.source = source
        self.line = line
        super().__init__(f"{source}{'' if line is None else f', line {line}'}: {reason}")


class HostProfileError(MqlogError):
    """A host profile (cores and CPU per MQI call) is unknown or malformed."""


class QueueFileError(LogFormatError):
    """A queue file's bytes are not what the format says (docs/FORMAT.md, "Queue files").

    ``source`` names the queue file and ``offset`` the byte offset of the damaged block
    (or field) in it. Raised instead of any other exception for every damaged or foreign
    file, so a restart can report which queue to restore.
    """


class JournalError(MqlogError):
    """An application journal file is malformed."""


class SpecError(MqlogError):
    """A workload spec is malformed: an unreadable or non-TOML file, an unknown workload,
    key or parameter, a value of the wrong type, a bad ``--set`` item.

    ``source`` names where the spec came from (the file, or ``--set``) and ``field`` the
    dotted key in it (``params.message_size``), where known.
    """

    def __init__(self, reason: str, *, source: str | None = None, field: str | None = None):
        self.reason = reason
        self.source = source
        self.field = field
        prefix = "".join(f"{part}: " for part in (source, field) if part)
        super().__init__(prefix + reason)


class CalibrationCaseError(SpecError):
    """A calibration case file (``mqlog calibrate --cases``) is malformed: ``source`` names the
    file and ``field`` the case and key (``D1.figures[2].tolerance``)."""


class CalibrationRunError(MqlogError):
    """A calibration run did not do what its case says: it ended before its ``crash_at``, or
    the restart after its crash failed verification against the applications' journal (a
    figure must never be computed from a wrong restart). Names the case and the run."""


class ConfigFileError(MqlogError):
    """A configuration file (a platform's parameter file) is malformed; ``source`` names the
    file and ``line`` the 1-based line where known."""

    def __init__(self, reason: str, *, source: str, line: int | None = None):
        self.reason = reason
        self.source = source
        self.line = line
        where = source if line is None else f"{source}, line {line}"
        # Not super().__init__: in ConfigFileValueError the next class in line is
        # ParameterError, whose signature differs.
        Exception.__init__(self, f"{where}: {reason}")


class ConfigFileValueError(ConfigFileError, ParameterError):
    """A value in a configuration file is of the wrong kind or out of range: both a
    :class:`ConfigFileError` (``source``, ``line``) and a :class:`ParameterError`
    (``name``, ``value``, ``allowed``)."""

    def __init__(self, error: ParameterError, *, source: str, line: int | None):
        self.name = error.name
        self.value = error.value
        self.allowed = error.allowed
        ConfigFileError.__init__(self, str(error), source=source, line=line)
