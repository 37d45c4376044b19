"""run.json as a value: :class:`RunRecord`, what a run directory says about the queue manager
its ``qm/`` files hold – its platform and current settings (``log``, ``device``, ``host``, the
``qmgr`` attributes), the workload that last ran on it, how its last command ended, and the
``history`` of the commands that ran it (see :mod:`mqlog.restarting`). Every reader of run.json
goes through :meth:`RunRecord.from_json`, which refuses a damaged or hand-edited file before any
work starts with one line naming the file, the field and what it may be; every writer goes
through :meth:`RunRecord.to_json`, whose dict is the one run.json has always held (written with
sorted keys by :func:`mqlog.rundir.write_json`), so directories written by every earlier version
read as they did and are written back as they were.

Fields earlier versions lacked are filled as those versions meant them: a run saved before the
host model names no host (the default one); before run.json was written first, one exists only
once the run finished; before restarts were recorded, the journal is whole if the run finished
and the history is the run alone; before the ``[qmgr]`` section, the attributes are the
defaults. ``version``, ``workload``, ``params``, ``seed`` and ``ended`` are written only when
present (None: the file had none – ``ended`` is dropped when how the queue manager stopped is
not known); keys this version does not know are kept as they were (``extra``)."""

from __future__ import annotations

from pathlib import Path

import attrs

from mqlog.core.errors import MqlogError
from mqlog.core.host.profiles import DEFAULT_HOST
from mqlog.core.qm.config import qmgr_settings

#: the latest run's metrics, beside run.json (its history entry names the file; see
#: :func:`mqlog.rundir.keep_metrics` for the earlier runs')
METRICS_FILE = "metrics.json"
#: the one run.json layout there has been (new fields were added with defaults, not versions)
VERSION = 1

#: (field, type(s), what it may be) checked in this order; a missing field of this table is refused
_REQUIRED = (("platform", str, "a platform name"),
             ("log", dict, "a table of log parameters"),
             ("device", str, "a device profile name or file"))
#: fields that may be missing (older versions), with what a present one may be
_OPTIONAL = (("version", int, "an integer"),
             ("host", str, "a host profile name or file"),
             ("workload", str, "a workload name"),
             ("params", dict, "a table of workload parameters"),
             ("seed", int, "an integer seed"),
             ("crashed", (bool, type(None)), "true, false or null"),
             ("finished", bool, "true or false"),
             ("journal_complete", bool, "true or false"),
             ("history", list, "a list of the commands that ran the queue manager"),
             ("qmgr", dict, "a table of queue manager attributes"),
             ("ended", dict, "how the queue manager last stopped, a JSON object"),
             ("qm_name", str, "the queue manager's name"))
_KNOWN = {name for name, _, _ in _REQUIRED + _OPTIONAL}
#: written only when present (the rest always are)
_WHEN_PRESENT = ("version", "workload", "params", "seed", "ended", "qm_name")


def _is(value, kind) -> bool:
    # JSON's true/false are not integers here (Python's bool is an int)
    return isinstance(value, kind) and not (isinstance(value, bool) and kind is int)


@attrs.frozen
class RunRecord:
    """A run directory's run.json. Derive a changed copy with ``attrs.evolve``."""

    platform: str
    log: dict
    device: str
    host: str = DEFAULT_HOST
    workload: str | None = None
    params: dict | None = None
    seed: int | None = None
    qmgr: dict = attrs.field(factory=dict)
    #: the queue manager's name where it is not the platform's default (a topology's queue
    #: managers: ``ZQM1``, ``LQM1``); its messages say it after every restart
    qm_name: str | None = None
    crashed: bool | None = None
    finished: bool = True
    journal_complete: bool = True
    #: the commands that ran the queue manager, oldest first (JSON objects: see mqlog.restarting)
    history: list = attrs.field(factory=list)
    #: how the queue manager last stopped (:data:`mqlog.core.workload.run.ENDING_KEYS`); None: not known
    ended: dict | None = None
    version: int | None = VERSION
    #: keys this version does not know, written back as they were
    extra: dict = attrs.field(factory=dict)

    @classmethod
    def new(cls, *, platform: str, log: dict, device: str, host: str, workload: str, params: dict, seed: int,
            qmgr: dict | None, finished: bool, crashed: bool | None, history: list | None = None,
            journal_complete: bool | None = None, ended: dict | None = None,
            qm_name: str | None = None) -> RunRecord:
        """A run's record as ``mqlog run`` writes it: ``history`` (default: this run alone,
        naming metrics.json once it finished), ``journal_complete`` (default: whether it
        finished – a run's journal is written at its end)."""
        if history is None:
            history = [{"command": "run", "workload": workload, "seed": seed, "finished": finished,
                        "crashed": crashed}]
            if finished:
                history[0]["metrics"] = METRICS_FILE  # (written beside it by save_run)
        return cls(platform=platform, log=dict(log), device=device, host=host, workload=workload,
                   params=dict(params), seed=seed, qmgr=qmgr_settings(qmgr or {}), crashed=crashed,
                   finished=finished, journal_complete=finished if journal_complete is None else journal_complete,
                   history=history, ended=ended, qm_name=qm_name)

    @classmethod
    def from_json(cls, data, path: Path | str = "run.json") -> RunRecord:
        """The record ``data`` (run.json's JSON, read from ``path``) holds, with the fields older
        versions lacked filled in; a field missing or of the wrong type is a one-line
        MqlogError naming ``path``, the field and what it may be."""
        if not isinstance(data, dict):
            raise MqlogError(f"{path}: not a JSON object (a run's record: platform, log, device, ...)")
        for name, kind, what in _REQUIRED:
            if not _is(data.get(name), kind):
                raise MqlogError(f"{path}: field {name!r} is missing or of the wrong type (must be {what})")
        for name, kind, what in _OPTIONAL:
            if name in data and not _is(data[name], kind):
                raise MqlogError(f"{path}: field {name!r} is of the wrong type (must be {what})")
        finished = data.get("finished", True)
        history = data.get("history")
        if history is None:
            history = [{"command": "run", "workload": data.get("workload"), "seed": data.get("seed"),
                        "finished": finished, "crashed": data.get("crashed")}]
        for i, entry in enumerate(history):
            if not isinstance(entry, dict):
                raise MqlogError(f"{path}: history entry {i + 1} is not a JSON object")
        try:
            qmgr = qmgr_settings(data.get("qmgr", {}))
        except MqlogError as exc:
            raise MqlogError(f"{path}: {exc}") from None
        return cls(platform=data["platform"], log=data["log"], device=data["device"],
                   host=data.get("host", DEFAULT_HOST), workload=data.get("workload"), params=data.get("params"),
                   seed=data.get("seed"), qmgr=qmgr, crashed=data.get("crashed"), finished=finished,
                   journal_complete=data.get("journal_complete", finished), history=history,
                   ended=data.get("ended"), version=data.get("version"), qm_name=data.get("qm_name"),
                   extra={k: v for k, v in data.items() if k not in _KNOWN})

    def to_json(self) -> dict:
        """run.json's JSON (:func:`mqlog.rundir.write_json` writes it with sorted keys)."""
        doc = {**self.extra, "platform": self.platform, "log": dict(self.log), "device": self.device,
               "host": self.host, "qmgr": dict(self.qmgr), "crashed": self.crashed, "finished": self.finished,
               "journal_complete": self.journal_complete, "history": list(self.history)}
        for name in _WHEN_PRESENT:
            value = getattr(self, name)
            if value is not None:
                doc[name] = dict(value) if isinstance(value, dict) else value
        return doc

    def restarted(self, *, log: dict, device: str, host: str, segment: dict, **fields) -> RunRecord:
        """The record of the queue manager as it now is: ``log``, ``device`` and ``host`` as it
        last started, ``segment`` (the command that started it) appended to its history,
        ``fields`` (finished, journal_complete, workload, ...) over the rest."""
        return attrs.evolve(self, log=dict(log), device=device, host=host, **fields,
                            history=[*self.history, segment])
