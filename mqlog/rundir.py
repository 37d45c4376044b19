"""The directory ``mqlog run --out`` leaves: its file names, and reading it back (run.json,
metrics.json, the platform over its ``qm/`` files) for the commands that work on it –
restart, qmstatus, dump, the media and z/OS utilities – and its lock: a command writing the
directory holds it exclusively (:func:`locked`), one reading it holds it shared
(:func:`read_locked`), so nobody reads what is being written. Errors are one-line
MqlogErrors naming the file."""

from __future__ import annotations

import contextlib
import json
import os
import re
from pathlib import Path

import attrs

from mqlog.core.errors import MqlogError
from mqlog.core.host.profiles import DEFAULT_HOST
from mqlog.runrecord import METRICS_FILE, RunRecord

RUN_FILE = "run.json"
#: the latest run's metrics (what ``mqlog stats``, ``report`` and the Spark readers read):
#: :data:`mqlog.runrecord.METRICS_FILE`
#: an earlier run's metrics, kept when ``run --in`` carries on: N is the run's place in
#: run.json's ``history`` (0: the first run), whose ``metrics`` names the file
KEPT_METRICS = "metrics-{}.json"
_METRICS_NAME = re.compile(r"metrics(-\d+)?\.json\Z")
JOURNAL_FILE = "journal.json"
QM_DIR = "qm"
#: flock'ed by every command that uses a run directory: exclusively by the one writing it
#: (its pid in the file), shared by the ones reading it
LOCK_FILE = ".mqlog.lock"
#: where an internal error's traceback goes when the command was writing a run directory
INTERNAL_ERROR_FILE = "mqlog-internal-error.txt"

#: the run directory this process last held for writing (:func:`locked`): where an internal
#: error's traceback belongs (:func:`last_written`)
_last_written: Path | None = None


def last_written() -> Path | None:
    """The run directory this process last held for writing, if any (None before any)."""
    return _last_written


def _fcntl():
    try:
        import fcntl
    except ImportError:  # not a POSIX system: no advisory locks (the model targets Linux)
        return None
    return fcntl


def _where(directory: Path, option: str) -> str:
    return f"{option} {directory}" if option else str(directory)


def _holder(fd: int) -> str:
    """The pid the writer holding the lock wrote into the file ("unknown" if it has not yet)."""
    return os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "unknown"


@contextlib.contextmanager
def locked(directory: Path, option: str = ""):
    """Hold ``directory``'s lock exclusively for the block: one command at a time writes a run
    directory (two ``mqlog run --out DIR`` at once would interleave their writes into one
    log), and nobody reads it meanwhile (:func:`read_locked` refuses). The lock is an
    ``flock`` on DIR/.mqlog.lock, so it goes with the process that held it, even at a crash;
    while held the file says which process holds it. ``option`` names the command-line option
    the directory came from, for errors. A writer holds it for everything it does, from
    reading run.json to its last write."""
    fcntl = _fcntl()
    directory = Path(directory)
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd = os.open(directory / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise MqlogError(f"{_where(directory, option)}: cannot make or lock the directory: "
                         f"{exc.strerror or exc}") from None
    try:
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                try:  # readers hold it shared, a writer exclusively: which is it?
                    fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                except BlockingIOError:
                    raise MqlogError(f"{directory} is in use by another mqlog command (process {_holder(fd)}); "
                                     "wait for it to finish or use another directory") from None
                raise MqlogError(f"{directory} is in use: another mqlog command is reading it; "
                                 "wait for it to finish or use another directory") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        _held.append(directory)
        global _last_written
        _last_written = directory
        try:
            yield
        finally:
            _held.remove(directory)
            os.ftruncate(fd, 0)  # no writer now: a reader refused later never names a stale pid
    finally:
        os.close(fd)  # closing releases the flock


#: the directories this process holds locked for writing, innermost last
_held: list[Path] = []


def held_directories() -> list[Path]:
    """The directories this process is writing now (an interrupt names them: what to recover)."""
    return list(_held)


@contextlib.contextmanager
def read_locked(directory: Path, option: str = ""):
    """Hold ``directory``'s lock shared for the block: any number of commands may read a run
    directory at once, none while a command writes it (a half-written log, control file or
    run.json read back would be wrong, not just old). While a writer holds the lock this
    refuses at once, one line naming the writer's process. The file is opened read-only, so
    a reader never touches the pid the writer wrote.

    ``directory`` must exist (call :func:`load_run` first, so that a directory that is not a
    run's is told so and gets no lock file). In a directory this process may not write
    (someone else's run, examined read-only) the lock file cannot be made if it is missing:
    no writer ever locked it, and the read goes on unlocked."""
    fcntl = _fcntl()
    directory = Path(directory)
    path = directory / LOCK_FILE
    try:
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CREAT, 0o644)
        except PermissionError:
            fd = os.open(path, os.O_RDONLY)  # a directory we may read, not write
    except FileNotFoundError:
        yield
        return
    except OSError as exc:
        raise MqlogError(f"{_where(directory, option)}: cannot lock the directory to read it: "
                         f"{exc.strerror or exc}") from None
    try:
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                raise MqlogError(f"{directory} is being written by another mqlog command (process {_holder(fd)}); "
                                 "wait for it to finish") from None
        yield
    finally:
        os.close(fd)  # closing releases the flock


def write_json(path: Path, data) -> None:
    """``data`` as ``path``, replaced atomically and durably: a crash leaves the old file or
    the new one, whole (the new one is fsynced before the rename, the directory after it).
    A failure is a one-line error naming the file."""
    from mqlog.core.errors import StorageError
    from mqlog.core.disk.storage import sync_directory

    path = Path(path)
    tmp = path.with_suffix(path.suffix + ".tmp")
    text = (json.dumps(data, indent=2, sort_keys=True) + "\n").encode("utf-8")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            view = memoryview(text)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
        sync_directory(path.parent)
    except OSError as exc:
        with contextlib.suppress(OSError):  # (the error to report is the one above)
            tmp.unlink(missing_ok=True)
        raise MqlogError(f"{path}: cannot write it: {exc.strerror or exc}") from None
    except StorageError as exc:
        raise MqlogError(f"{path}: written, but not durably: {exc}") from None


def start_run(out: Path, *, platform: str, log: dict, device: str, workload: str, params: dict, seed: int,
              host: str = DEFAULT_HOST, qmgr: dict | None = None) -> None:
    """Write run.json before the run's first write, with ``"finished": false``: a run whose
    process dies (Ctrl-C, kill -9) leaves a directory that says what ran, so that ``mqlog
    restart`` can recover its queue manager. :func:`save_run` rewrites it when the run ends.
    Such a run has no journal.json (the journal is written at the end): ``restart --verify``
    says it cannot check the queues against it rather than claiming they are right."""
    write_run(out, RunRecord.new(platform=platform, log=log, device=device, workload=workload, params=params,
                                 seed=seed, host=host, qmgr=qmgr, finished=False, crashed=None))


def save_run(out: Path, *, platform: str, log: dict, device: str, workload: str, params: dict, seed: int,
             result, host: str = DEFAULT_HOST, qmgr: dict | None = None, history: list | None = None,
             continuing: bool = False, qm_name: str | None = None) -> None:
    """Write a finished run (a :class:`~mqlog.core.workload.run.RunResult`) as ``mqlog run --out`` leaves
    it: run.json, metrics.json, journal.json and the platform's message log. run.json keeps the
    queue manager attributes (``qmgr``, by MQ's names: the defaults unless given), so that every
    later command starts the queue manager with the run's settings. The queue manager's
    files are the caller's (``mqlog run`` writes them under ``qm/`` as it goes; see
    :func:`copy_files` for a run held in memory). ``history``: the commands that ran the queue
    manager before and including this one (``mqlog run --in``; default: this run alone).
    ``qm_name``: the queue manager's name where it is not the platform's default (a topology's).
    ``continuing``: the queue manager ran on the directory's files before (``run --in``), so its
    messages' stamps go on from where the error log's clock had got to."""
    out = Path(out)
    write_json(out / METRICS_FILE, result.metrics)
    write_json(out / JOURNAL_FILE, result.journal.to_json())
    from mqlog.core.workload.run import ENDING_KEYS

    ended = {k: result.metrics.get(k) for k in ENDING_KEYS}  # how it ended: restart says so
    write_run(out, RunRecord.new(platform=platform, log=log, device=device, workload=workload, params=params,
                                 seed=seed, host=host, qmgr=qmgr, finished=True, crashed=result.crashed,
                                 history=history, ended=ended, qm_name=qm_name))
    append_messages(out, result.qm.platform, result.messages, continuing=continuing)


def append_messages(directory: Path, platform, messages, *, continuing: bool = True) -> None:
    """Append the queue manager's ``messages`` to the platform's error log in ``directory``,
    in the platform's layout with their virtual time stamps (a platform without one: a line
    a message). A run's clock starts at the epoch; a queue manager started again on the
    run's files (``continuing``: restart, an administrative command) goes on a µs after where
    the clock had got to – the end of the run (metrics.json) or the last stamp in the log,
    whichever is later – so that its lines come after everything before them."""
    path = Path(directory) / platform.error_log
    form = platform.error_log_format
    if form is None:
        text = "".join(f"{line}\n" for line in messages)
    else:
        base = 0.0
        if continuing:
            metrics = Path(directory) / METRICS_FILE
            if metrics.is_file():
                try:
                    saved = json.loads(metrics.read_text())
                    base = float(saved.get("virtual_s", saved.get("virtual_seconds", 0))) * 1e6  # (older runs: _seconds)
                except (ValueError, TypeError, AttributeError, RecursionError):
                    base = 0.0  # unreadable metrics: the log's own stamps still order it
            if path.is_file():
                base = max(base, form.clock_us(path.read_text(encoding="utf-8", errors="replace")) or 0.0)
            base += 1.0  # (µs) the queue manager starts again after what is already written
        text = form.entries(messages, base)
    with open(path, "a", encoding="utf-8") as log:
        log.write(text)


def record_ending(directory: Path, ending: dict | None) -> None:
    """Say in run.json how the queue manager on DIR's files last stopped (``ended``: see
    :data:`mqlog.core.workload.run.ENDING_KEYS`), after a command that started it there; None:
    not known (the command failed part way), so that ``restart`` claims nothing."""
    write_run(directory, attrs.evolve(load_run(directory), ended=ending))


#: :func:`copy_files` leaves runs of zero bytes this long as holes
_HOLE = 64 * 1024


def copy_files(storage, qm_dir: Path) -> int:
    """Copy every file of ``storage`` (a run held in memory) into ``qm_dir`` as real files,
    sparse where a file was formatted but never written; the bytes copied (holes excluded)."""
    qm_dir = Path(qm_dir)
    qm_dir.mkdir(parents=True, exist_ok=True)
    zeros = bytes(_HOLE)
    copied = 0
    for name in storage.list():
        size = storage.size(name)
        path = qm_dir / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.is_symlink():
            raise MqlogError(f"{path}: a symbolic link: refused (the run directory's files are written without "
                             f"following links)")
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o644)
        try:
            for offset in range(0, size, _HOLE):
                chunk = storage.read(name, offset, min(_HOLE, size - offset))
                if chunk != zeros[:len(chunk)]:
                    os.pwrite(fd, chunk, offset)
                    copied += len(chunk)
            os.ftruncate(fd, size)
        finally:
            os.close(fd)
    return copied


def read_json(path: Path):
    """A JSON file a run wrote; anything else is a one-line error naming it."""
    try:
        return json.loads(Path(path).read_text())
    except RecursionError:
        raise MqlogError(f"{path}: not valid JSON (nested too deep to decode)") from None
    except (ValueError, UnicodeDecodeError, OSError) as exc:
        raise MqlogError(f"{path}: not valid JSON ({exc})") from None


def load_run(directory: Path) -> RunRecord:
    """``run.json``, its fields checked (:meth:`RunRecord.from_json`)."""
    path = Path(directory) / RUN_FILE
    if not path.is_file():
        raise MqlogError(f"{directory}: no {RUN_FILE}: not a directory written by 'mqlog run --out'")
    return RunRecord.from_json(read_json(path), path)


def write_run(directory: Path, run: RunRecord) -> None:
    """``run`` as ``directory``'s run.json (replaced atomically: :func:`write_json`)."""
    write_json(Path(directory) / RUN_FILE, run.to_json())


def run_qm_config(run: RunRecord, **settings):
    """The :class:`~mqlog.core.qm.config.QmConfig` the run ``run`` ran with (its ``qmgr``
    attributes), with ``settings`` (``restart_mode``, say)."""
    from mqlog.core.qm.config import QmConfig, with_qmgr

    return with_qmgr(QmConfig(**settings), run.qmgr)


def load_metrics(directory: Path) -> dict:
    """``metrics.json`` ({} if the run left none)."""
    path = Path(directory) / METRICS_FILE
    metrics = read_json(path) if path.is_file() else {}
    if not isinstance(metrics, dict):
        raise MqlogError(f"{path}: not a JSON object")
    return metrics


def _metrics_owner(history: list) -> int | None:
    """The place in ``history`` of the run whose metrics metrics.json holds: the entry that
    names it; in a directory saved before metrics were kept (no entry names a file), the last
    run that finished and was not stopped before its workload (the one that wrote it)."""
    named = [i for i, h in enumerate(history) if isinstance(h, dict) and "metrics" in h]
    if named:
        return next((i for i in reversed(named) if history[i]["metrics"] == METRICS_FILE), None)
    return next((i for i in reversed(range(len(history))) if isinstance(history[i], dict)
                 and history[i].get("command") in ("run", "run --in") and history[i].get("finished")
                 and not history[i].get("stopped")), None)


def keep_metrics(directory: Path, history: list) -> list:
    """Before ``run --in`` overwrites metrics.json: copy the run's metrics it holds to
    ``metrics-N.json`` (N: that run's place in ``history``) and return ``history`` with that
    entry naming the copy, for run.json. Written before run.json says so, so a crash in
    between leaves a spare copy, never an entry naming a file that is not there."""
    directory = Path(directory)
    owner = _metrics_owner(history)
    if owner is None or not (directory / METRICS_FILE).is_file():
        return history
    kept = KEPT_METRICS.format(owner)
    write_json(directory / kept, load_metrics(directory))
    history = [dict(h) for h in history]
    history[owner]["metrics"] = kept
    return history


def history_metrics(directory: Path, run: dict) -> list:
    """Each entry of ``run``'s history (from :func:`load_run`) with the metrics of the run it
    records (None: a command that made none, a restart say): the file its ``metrics`` names,
    or in a directory saved before metrics were kept, metrics.json for the run that wrote it.
    A name that is not a metrics file of the directory, or a file that is gone, is a one-line
    error naming it."""
    directory = Path(directory)
    history = run.history
    legacy = _metrics_owner(history) if not any(isinstance(h, dict) and "metrics" in h for h in history) else None
    out = []
    for i, entry in enumerate(history):
        if not isinstance(entry, dict):
            raise MqlogError(f"{directory / RUN_FILE}: history entry {i + 1} is not a JSON object")
        name = entry.get("metrics", METRICS_FILE if i == legacy else None)
        metrics = None
        if name is not None:
            if not isinstance(name, str) or not _METRICS_NAME.match(name):
                raise MqlogError(f"{directory / RUN_FILE}: history entry {i + 1} names {name!r} for its metrics, "
                                 f"not a metrics file of the run directory (metrics.json or metrics-N.json)")
            path = directory / name
            if not path.is_file():
                raise MqlogError(f"{path}: missing: {RUN_FILE}'s history entry {i + 1} "
                                 f"('{entry.get('command')}') keeps its metrics there")
            metrics = read_json(path)
            if not isinstance(metrics, dict):
                raise MqlogError(f"{path}: not a JSON object")
        out.append((entry, name, metrics))
    return out


def open_platform(directory: Path, *, platform: str | None = None, label: str = ""):
    """The queue manager a run left in ``directory``: (run, effective log values, Platform
    over a DirectoryStorage of ``qm/``). With ``platform``, a run of another platform is an
    error (``label`` names the expected one). The caller closes ``platform.space.storage``."""
    from mqlog.core.disk.storage import DirectoryStorage

    directory = Path(directory)
    run = load_run(directory)
    if platform is not None and run.platform != platform:
        raise MqlogError(f"{directory}: a {run.platform} queue manager; this command is for {label} ones")
    qm_dir = directory / QM_DIR
    if not qm_dir.is_dir():
        raise MqlogError(f"{directory}: no {QM_DIR}/ directory with the queue manager's files")
    choice, values = run_platform(directory, run)
    return run, values, run_maker(choice, values, run)(DirectoryStorage(qm_dir))


def created(directory: Path) -> bool:
    """Whether the queue manager of the run in ``directory`` was ever created: its first
    checkpoint reached the disk, so ``mqlog restart`` has something to recover. Reads only;
    a damaged control file or run.json raises, as restart would."""
    _, _, platform = open_platform(directory)
    try:
        return platform.space.load_control() is not None
    finally:
        platform.space.storage.close()


def run_maker(choice, values: dict, run: RunRecord):
    """The platform maker for the queue manager ``run.json`` describes: under its own name
    where run.json keeps one (a topology's queue managers), else the platform's default."""
    return choice.named_maker(values, run.qm_name) if run.qm_name else choice.maker(values)


def run_platform(directory: Path, run: RunRecord):
    """The platform choice and effective log values ``run.json`` names; a bad platform or
    log value is an error naming run.json."""
    from mqlog.platforms import choose

    try:
        choice = choose(run.platform)
        return choice, choice.configure({str(k): str(v) for k, v in run.log.items()})
    except MqlogError as exc:
        raise MqlogError(f"{Path(directory) / RUN_FILE}: {exc}") from None
