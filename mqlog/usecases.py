"""What the commands that run the model do, as functions that do it and return what happened: a
new run (:func:`run`: ``mqlog run``, in memory or into a run directory), a restart
(:func:`restart`: ``mqlog restart DIR``) and carrying on (:func:`carry_on`: ``mqlog run --in
DIR``). Each holds the run directory's lock from reading run.json to its last write, opens the
queue manager's files, reads and extends the application journal, restarts the queue manager
where it must, and keeps run.json (:class:`~mqlog.runrecord.RunRecord`) and the directory's
metrics and error log up to date; each returns its outcome (the run's
:class:`~mqlog.core.workload.run.RunResult`, or an attrs outcome) and prints nothing. The
command line (:mod:`mqlog.cli.running`) parses the options, calls them and prints what they
return; ``mqlog compare`` (Spark) and ``mqlog calibrate`` run their in-memory runs through
:func:`run` too.

A caller that shows progress passes a factory of :class:`Progress` objects; it is called once
the work is about to start (after everything that can refuse it), so that whatever it prints
comes after any refusal and before the run's own output."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Callable, Protocol

import attrs

from mqlog.core.errors import MqlogError
from mqlog.rundir import (JOURNAL_FILE, METRICS_FILE, QM_DIR, RUN_FILE, append_messages, keep_metrics, load_run,
                          locked, read_json, record_ending, run_maker, run_qm_config, save_run, start_run,
                          write_run)
from mqlog.runrecord import RunRecord


class Progress(Protocol):
    """How far a run (virtual seconds, log records) or a restart (records replayed) has got."""

    def update(self, *figures) -> None: ...

    def close(self) -> None: ...


def nothing_measured(m: dict) -> bool:
    """Whether a workload that runs for a duration ended (uncrashed) before its set-up and ramp
    did: at hundreds of queues on a slow device the definitions alone can outlast a short
    duration, and the run then measured nothing of the workload. ``m``: a run's metrics, or a
    compare's or sweep's row (its ``params`` as JSON text)."""
    return bool(_duration(m)) and not m.get("crashed") and not m.get("measured_s")


def why_nothing_measured(m: dict, figures: str) -> str:
    """Why a run that :func:`nothing_measured` measured nothing, and what to do."""
    return (f"the set-up (its queue definitions, each forced to the log) and ramp took all of workload.duration "
            f"({_duration(m):g} s), so {figures} is the workload's; lengthen the duration")


#: the fewest write cycles a measured window holds before its figures are shown without a
#: warning: the cycle in flight at each end is counted whole or in part (its bytes and writes
#: when it starts, its busy time up to the window's edge), about a tenth of 20
WINDOW_CYCLES_MIN = 20
#: … and the fewest round trips a requester: each requester may have a round trip in flight
#: at each edge, whose bytes are counted in part, so the error is up to one requester's
#: round trip in this many (a tenth); a window of 1 MB messages on dasd that held 1.3 round
#: trips a requester read a third fewer round trips a second for the same bytes a second
WINDOW_TRIPS_PER_REQUESTER_MIN = 10


def short_window(m: dict) -> str:
    """Why the measured window of a run that measured something is too short for its figures
    (commit time, writer busy, bytes a write, round trips a second) to be the steady state's,
    and what to do; "" if it is long enough. Too short: fewer than :data:`WINDOW_CYCLES_MIN`
    write cycles, or fewer than :data:`WINDOW_TRIPS_PER_REQUESTER_MIN` round trips a
    requester (at hundreds of requesters the ramp – every requester's first reply – can take
    nearly all of a short duration). ``m``: as :func:`nothing_measured`'s."""
    if not _duration(m) or m.get("crashed") or not m.get("measured_s"):
        return ""
    cycles, trips = m.get("measured_write_cycles") or 0, m.get("measured_round_trips") or 0
    requesters = _params(m).get("requesters")
    if cycles >= WINDOW_CYCLES_MIN and not (requesters and trips < WINDOW_TRIPS_PER_REQUESTER_MIN * requesters):
        return ""
    held = f"{cycles} write cycle{'s' if cycles != 1 else ''}"
    if requesters:
        held += f" and {trips} round trip{'s' if trips != 1 else ''} of {requesters} requesters"
    before = (m.get("workload_s") or 0.0) - m["measured_s"]
    return (f"the measured window ({m['measured_s'] * 1e3:.3g} ms of workload.duration {_duration(m):g} s; the "
            f"{m.get('measured_from') or 'set-up'} before it took {before * 1e3:.3g} ms) holds {held}: its figures "
            f"may be a write or a round trip off at each end; lengthen the duration")


def _params(m: dict) -> dict:
    params = m.get("params") or {}
    return json.loads(params) if isinstance(params, str) else params


def _duration(m: dict):
    return _params(m).get("duration")


def restart_figures(report) -> dict:
    """A restart's figures for its history entry: its virtual seconds, what it replayed and
    what it backed out (``mqlog history`` shows them)."""
    return {"restart_s": report.restart_virtual_s, "records_replayed": report.records_replayed,
            "uows_backed_out": report.uows_backed_out, "uows_indoubt": report.uows_indoubt}


def changed_device_host(run: RunRecord, device: str | None, host: str | None) -> dict:
    """{"device"/"host": [old, new]} of the ones a restart gives a new value (None: not given)."""
    return {name: [getattr(run, name), new] for name, new in (("device", device), ("host", host))
            if new is not None and new != getattr(run, name)}


@attrs.frozen
class Updates:
    """A :class:`Progress` that is an update function alone (nothing to close)."""

    update: Callable

    def close(self) -> None:
        pass


@contextlib.contextmanager
def _watching(progress: Callable[[], Progress] | None):
    """The update function of the caller's progress (None: none), closed after the block."""
    sink = progress() if progress is not None else None
    try:
        yield sink.update if sink is not None else None
    finally:
        if sink is not None:
            sink.close()


# --- a new run --------------------------------------------------------------------------------

def run(cfg, *, out: Path | None = None, device: str | None = None, qmgr: dict | None = None, storage=None,
        progress: Callable[[], Progress] | None = None):
    """Run ``cfg`` (a :class:`~mqlog.core.workload.run.RunConfig`): in memory (on ``storage``,
    the files an earlier run left, or new ones), or with ``out`` into that run directory
    (locked for it, refused if it already holds a run), its queue manager's files under
    ``out/qm`` written as it goes and run.json written first, so that a process that dies
    leaves a directory ``restart`` accepts; ``device`` and ``qmgr`` are how run.json names the
    device and the queue manager attributes. Returns the RunResult."""
    from mqlog.core.disk.storage import MemoryStorage
    from mqlog.core.workload.run import run_workload

    with (locked(out, "--out") if out is not None else contextlib.nullcontext()):
        storage = storage if storage is not None else MemoryStorage()
        if out is not None:
            storage = _out_storage(out, lambda: start_run(
                out, platform=cfg.platform, log=cfg.log_config, device=device, host=cfg.host,
                workload=cfg.spec.workload, params=dict(cfg.spec.params), seed=cfg.seed, qmgr=qmgr))
        try:
            with _watching(progress) as update:
                result = run_workload(cfg, storage, progress=update)
        finally:
            storage.close()
        if out is not None:
            save_run(out, platform=cfg.platform, log=cfg.log_config, device=device, host=cfg.host,
                     workload=cfg.spec.workload, params=dict(cfg.spec.params), seed=cfg.seed, result=result,
                     qmgr=qmgr)
    return result


def keep(out: Path, result, **record) -> None:
    """A run held in memory (``result``) written into the run directory ``out`` as ``mqlog run
    --out`` leaves it – its files under ``out/qm``, run.json (``record``: the fields
    :func:`mqlog.rundir.save_run` takes), metrics, journal and error log – under the
    directory's lock, as a writer of it."""
    from mqlog.rundir import copy_files

    try:
        out.mkdir(parents=True, exist_ok=True)
        with locked(out):
            copy_files(result.storage.durable, out / QM_DIR)
            save_run(out, result=result, **record)
    except OSError as exc:
        raise MqlogError(f"{out}: cannot write the run's files: {exc.strerror or exc}") from None


def recover(result, make_platform, *, device: str, host: str, qm_config):
    """Restart a run held in memory where it crashed (``result``: its files as the crash left
    them), verified against its applications' journal, as ``mqlog restart --verify`` restarts
    a run directory's: (recovery report, verdict, restarted queue manager)."""
    from mqlog.core.workload.run import restart_run

    return restart_run(make_platform, result.storage.durable, device=device, host=host, journal=result.journal,
                       qm_config=qm_config)


def _out_storage(out: Path, started):
    """Real files under ``out/qm``, after ``started()`` wrote run.json; a directory a run
    already used, or one that cannot be made, is a one-line error before anything is written."""
    from mqlog.core.disk.storage import DirectoryStorage

    if (out / RUN_FILE).is_file() and not load_run(out).finished:
        raise MqlogError(f"{out} holds a run whose process ended before it finished (run.json says so): "
                         f"recover it with 'mqlog restart {out}', or choose another --out or remove it")
    if (out / RUN_FILE).exists() or (out / QM_DIR).exists():
        raise MqlogError(f"{out} already holds a run (run.json or qm/); choose another --out or remove it")
    try:
        out.mkdir(parents=True, exist_ok=True)
        started()
        return DirectoryStorage(out / QM_DIR)
    except OSError as exc:
        raise MqlogError(f"--out {out}: cannot make the directory: {exc.strerror or exc}") from None
    except MqlogError as exc:
        raise MqlogError(f"--out {out}: {exc}") from None


# --- a restart --------------------------------------------------------------------------------

@attrs.frozen
class RestartOutcome:
    """What :func:`restart` did: the recovery report, the verdict against the journal (None: not
    asked for, or not possible – ``unverifiable`` says why), the restarted queue manager, the
    settings it changed ({name: [old, new]}) and run.json as the command found it."""

    run: RunRecord
    report: object
    verdict: object
    qm: object
    changed: dict
    device: str
    host: str
    unverifiable: str | None = None

    @property
    def restarted_after(self) -> dict | None:
        """How the queue manager had last stopped (None: not known, or a run saved before it)."""
        return self.run.ended


def restart(directory: Path, *, log_sets: dict | None = None, device: str | None = None, host: str | None = None,
            verify: bool = False, restart_mode: str = "9.1.1",
            progress: Callable[[], Progress] | None = None) -> RestartOutcome:
    """Restart the queue manager a run left in ``directory`` – with ``log_sets`` (log.X text
    values over run.json's; one fixed at creation refused), on ``device``/``host`` from now on
    (None: the run's) – verified against the journal if ``verify``; its messages go to the
    error log and run.json records it as it now is (written once)."""
    from mqlog.core.disk.storage import DirectoryStorage
    from mqlog.core.workload.journal import Journal
    from mqlog.core.workload.run import later_ending, restart_run
    from mqlog.restarting import restart_log

    directory = Path(directory)
    load_run(directory)  # not a run directory: say so before taking its lock
    with locked(directory):  # from reading run.json to the last message logged
        run = load_run(directory)
        choice, log_config, changed = restart_log(directory, run, log_sets or {})
        changed = {**changed, **changed_device_host(run, device, host)}
        device, host = device or run.device, host or run.host
        journal = None
        unverifiable = None
        if verify:
            path = directory / JOURNAL_FILE
            if not run.journal_complete:
                # A run's process died (Ctrl-C, kill -9) before it wrote its journal: what the
                # applications were told is lost, so the queues cannot be checked. The restart
                # itself (every record read back, checksums, units of work resolved) still runs.
                unverifiable = (f"a run's process ended before it finished, so {JOURNAL_FILE} does not hold what "
                                f"its applications were told: the restart recovered the log, but the queues "
                                f"cannot be checked against it")
            elif not path.is_file():
                raise MqlogError(f"{directory}: no {JOURNAL_FILE} to verify against")
            else:
                journal = Journal.from_json(read_json(path), source=str(path))
        if not (directory / QM_DIR).is_dir():
            raise MqlogError(f"{directory}: no {QM_DIR}/ directory with the queue manager's files")
        storage = DirectoryStorage(directory / QM_DIR)
        try:
            with _watching(progress) as update:
                report, verdict, qm = restart_run(run_maker(choice, log_config, run), storage, device=device, host=host,
                                                  journal=journal,
                                                  qm_config=run_qm_config(run, restart_mode=restart_mode),
                                                  progress=update)
        finally:
            storage.close()
        append_messages(directory, qm.platform, report.messages)
        # the queue manager now runs with these settings, and last stopped after this restart:
        # the next command starts it so, and says so
        write_run(directory, run.restarted(
            log=log_config, device=device, host=host, finished=True,
            ended=later_ending(qm.platform, "restart", report.uows_indoubt),
            segment={"command": "restart", "changed": changed, "finished": True, **restart_figures(report)}))
    return RestartOutcome(run, report, verdict, qm, changed, device, host, unverifiable)


# --- carrying on ------------------------------------------------------------------------------

@attrs.frozen
class CarryOnOutcome:
    """What :func:`carry_on` did: the run (None: the restart's recovery did not verify against
    the journal, and nothing was run), the restart before it (``report`` and ``verdict`` None:
    the run crashed during the restart), the restarted queue manager, the settings changed and
    run.json as the command found it."""

    run: RunRecord
    result: object
    report: object
    verdict: object
    qm: object
    changed: dict

    @property
    def restarted_after(self) -> dict | None:
        """How the queue manager had last stopped (None: not known, or a run saved before it)."""
        return self.run.ended


class _NotVerified(Exception):
    """The restart before ``run --in``'s workload recovered queues its journal does not agree with."""


def carry_on(directory: Path, *, resolve, workload: str | None = None, sets: dict | None = None,
             seed: int | None = None, device: str | None = None, host: str | None = None,
             crash_after_writes: int | None = None, crash_at_s: float | None = None, crash_at_end: bool = False,
             end: str | None = None, end_at: float | None = None, starting=None) -> CarryOnOutcome:
    """Carry on in ``directory``: restart the queue manager it holds with its settings
    (``sets["log"]``, ``device``, ``host`` changing them as :func:`restart` does), verify the
    recovered queues against its journal, then run ``workload`` (default: the run's own, with
    its parameters; ``sets["workload"]`` over them) on it and extend the journal, so that a
    later ``restart --verify`` checks everything ever committed. ``resolve(workload, sets)`` is
    the caller's reading of a workload name or file (spec, log values, the file's seed, qmgr
    attributes); ``starting(spec, platform, seed)``, called just before the restart, returns
    the run's :class:`Progress` (or None). The new messages' ids carry the restarted queue
    manager's incarnation, so they differ from every earlier message's."""
    from mqlog.core.disk.storage import DirectoryStorage
    from mqlog.core.qm.config import QmConfig, qmgr_settings, with_qmgr
    from mqlog.core.workload.journal import Journal
    from mqlog.core.workload.run import RunConfig, run_workload
    from mqlog.restarting import restart_log

    directory = Path(directory)
    sets = {"workload": {}, "log": {}, **(sets or {})}
    load_run(directory)  # not a run directory: say so before taking its lock
    with locked(directory, "--in"):
        run = load_run(directory)
        if not run.journal_complete:
            raise MqlogError(f"{directory}: a run's process ended before it finished, so {JOURNAL_FILE} does not hold "
                             f"what its applications were told: a run carried on from it could not be verified "
                             f"(recover it with 'mqlog restart {directory}', or start a new run with --out)")
        path = directory / JOURNAL_FILE
        if not path.is_file():
            raise MqlogError(f"{directory}: no {JOURNAL_FILE} to verify the restart against and to extend")
        journal = Journal.from_json(read_json(path), source=str(path))
        if not (directory / QM_DIR).is_dir():
            raise MqlogError(f"{directory}: no {QM_DIR}/ directory with the queue manager's files")
        if workload is None and run.workload is None:
            raise MqlogError(f"{directory / RUN_FILE}: field 'workload' is missing (the workload to carry on with: "
                             f"give --workload)")
        # the run's own workload and parameters unless told otherwise; --set workload.X over them
        spec, log_sets, spec_seed, qmgr = resolve(
            workload or run.workload,
            {"workload": {**({} if workload else run.params or {}), **sets["workload"]}, "log": sets["log"]})
        if qmgr not in (qmgr_settings({}), run.qmgr):  # a spec file's [qmgr] table: not the queue manager's
            raise MqlogError(f"--workload {workload}: its [qmgr] table would change the queue manager's attributes, "
                             f"which --in keeps as the run's ({run.qmgr})")
        choice, log_config, changed = restart_log(directory, run, log_sets)
        changed = {**changed, **changed_device_host(run, device, host)}
        device, host = device or run.device, host or run.host
        seed = seed if seed is not None else (spec_seed if spec_seed is not None else
                                              run.seed if run.seed is not None else 0)
        restart: dict = {}

        def started(qm, report):
            # Between the restart and the workload's first call: the recovered queues are
            # checked against the journal as 'restart --verify' checks them, and run.json
            # says from now on that this run is under way (a process that dies from here
            # leaves a journal that no longer holds everything, and says so).
            verdict = journal.verify(qm)
            restart.update(report=report, verdict=verdict, qm=qm)
            if not verdict.ok:
                raise _NotVerified()
            journal.settle(journal.settlement(qm))
            # the last run's metrics.json is copied aside (and run.json names the copy) before
            # this run overwrites it: every run's metrics stay in the directory
            restart["run"] = attrs.evolve(run, history=keep_metrics(directory, run.history)).restarted(
                log=log_config, device=device, host=host, finished=False, journal_complete=False,
                workload=spec.workload, params=dict(spec.params), seed=seed, crashed=None,
                segment={"command": "run --in", "changed": changed, "workload": spec.workload, "seed": seed,
                         "finished": False, "crashed": None, **restart_figures(report)})
            write_run(directory, restart["run"])

        cfg = RunConfig(choice.name, run_maker(choice, log_config, run), log_config, spec, seed, device,
                        crash_after_writes, crash_at_s, crash_at_end=crash_at_end,
                        qm_config=with_qmgr(QmConfig(), run.qmgr), host=host, end=end, end_at_s=end_at)
        progress = (lambda: starting(spec, choice.name, seed)) if starting is not None else None
        storage = DirectoryStorage(directory / QM_DIR)
        try:
            with _watching(progress) as update:
                result = run_workload(cfg, storage, progress=update, journal=journal, started=started)
        except _NotVerified:
            result = None
        finally:
            storage.close()
        report, verdict = restart.get("report"), restart.get("verdict")
        if result is None:  # the restart's recovery did not pass: nothing was run, the journal is as it was
            write_run(directory, run.restarted(log=log_config, device=device, host=host, finished=True,
                                               segment={"command": "run --in", "changed": changed, "finished": True,
                                                        "stopped": "the restart's recovery did not verify"}))
            append_messages(directory, restart["qm"].platform, restart["qm"].messages)
            record_ending(directory, None)  # stopped at the check, not by a shutdown: how is not known
        else:
            # (a crash during the restart: the hook never ran, and the last run's metrics are
            # copied aside here)
            history = [*(restart["run"].history[:-1] if "run" in restart else keep_metrics(directory, run.history)),
                       {"command": "run --in", "changed": changed, "workload": spec.workload, "seed": seed,
                        "finished": True, "crashed": result.crashed, "metrics": METRICS_FILE,
                        **(restart_figures(report) if report is not None else {})}]
            save_run(directory, platform=choice.name, log=log_config, device=device, host=host,
                     workload=spec.workload, params=dict(spec.params), seed=seed, result=result, qmgr=run.qmgr,
                     history=history, continuing=True)
    if result is not None and result.crashed and report is None and result.metrics.get("abnormal_end"):
        # A storage error ended the restart itself (a file it could not read or write): no
        # crash was asked for and nothing of the workload ran, so it is an error, in the
        # words `mqlog restart` refuses the same directory with.
        raise MqlogError(f"{result.metrics['abnormal_end']} (during the restart, before the workload's first call: "
                         f"nothing was run; 'mqlog restart {directory} --verify' recovers it once that is mended)")
    return CarryOnOutcome(run, result, report, verdict, restart.get("qm"), changed)


def administer(directory: Path, action, *, platform, resolve_device: Callable[[str], str]):
    """Run an administrative ``action(qm)`` (rcdmqimg, rcrmqobj, SET LOG ARCHIVED) on the queue
    manager a run left in ``directory``: restart it, act, shut it down with a controlled end;
    its console messages go to the error log, also when the action fails part way (what it did
    is on disk). ``platform`` is the descriptor whose command this is: a run of another is
    refused naming both; ``resolve_device`` turns run.json's device into a profile. Returns
    what ``action`` returned and the queue manager. run.json records the ending: a controlled
    one, or none known when the action failed."""
    from mqlog.core.disk.storage import DirectoryStorage
    from mqlog.core.workload.run import administer as administer_qm, later_ending
    from mqlog.rundir import run_platform

    def keep_messages(qm):
        append_messages(directory, qm.platform, qm.messages)

    load_run(directory)  # not a run directory: say so before taking its lock
    with locked(directory):  # from reading run.json to the last message logged
        record = load_run(directory)
        if record.platform != platform.name:
            raise MqlogError(f"{directory}: a {record.platform} queue manager; this command is for {platform.name} ones")
        if not (directory / QM_DIR).is_dir():
            raise MqlogError(f"{directory}: no {QM_DIR}/ directory with the queue manager's files")
        choice, values = run_platform(directory, record)
        storage = DirectoryStorage(directory / QM_DIR)
        try:
            done = administer_qm(run_maker(choice, values, record), storage, action, device=resolve_device(record.device),
                                 host=record.host, qm_config=run_qm_config(record), on_exit=keep_messages)
        except BaseException:
            record_ending(directory, None)  # stopped part way: how is not known
            raise
        finally:
            storage.close()
        # it ended with a controlled shutdown: a later restart says so, not the run's own end
        record_ending(directory, later_ending(done[1].platform, "controlled", len(done[1].in_doubt())))
        return done
