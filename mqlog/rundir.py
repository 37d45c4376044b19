"""The directory ``mqlog run --out`` leaves: its file names, and reading it back (run.json,
metrics.json, the platform over its ``qm/`` files) for the commands that work on it –
restart, qmstatus, dump, the media and z/OS utilities. Errors are one-line MqlogErrors
naming the file."""

from __future__ import annotations

import json
from pathlib import Path

from mqlog.core.errors import MqlogError

RUN_FILE = "run.json"
METRICS_FILE = "metrics.json"
JOURNAL_FILE = "journal.json"
QM_DIR = "qm"


def read_json(path: Path):
    """A JSON file a run wrote; anything else is a one-line error naming it."""
    try:
        return json.loads(Path(path).read_text())
    except (ValueError, UnicodeDecodeError, OSError) as exc:
        raise MqlogError(f"{path}: not valid JSON ({exc})") from None


def load_run(directory: Path) -> dict:
    """``run.json``, its fields checked."""
    path = Path(directory) / RUN_FILE
    if not path.is_file():
        raise MqlogError(f"{directory}: no {RUN_FILE}: not a directory written by 'mqlog run --out'")
    run = read_json(path)
    for key, kind in (("platform", str), ("log", dict), ("device", str)):
        if not isinstance(run, dict) or not isinstance(run.get(key), kind):
            raise MqlogError(f"{path}: field {key!r} is missing or of the wrong type")
    return run


def load_metrics(directory: Path) -> dict:
    """``metrics.json`` ({} if the run left none)."""
    path = Path(directory) / METRICS_FILE
    metrics = read_json(path) if path.is_file() else {}
    if not isinstance(metrics, dict):
        raise MqlogError(f"{path}: not a JSON object")
    return metrics


def open_platform(directory: Path, *, platform: str | None = None, label: str = ""):
    """The queue manager a run left in ``directory``: (run, effective log values, Platform
    over a DirectoryStorage of ``qm/``). With ``platform``, a run of another platform is an
    error (``label`` names the expected one). The caller closes ``platform.space.storage``."""
    from mqlog.core.storage import DirectoryStorage
    from mqlog.platforms import choose

    directory = Path(directory)
    run = load_run(directory)
    if platform is not None and run["platform"] != platform:
        raise MqlogError(f"{directory}: a {run['platform']} queue manager; this command is for {label} ones")
    qm_dir = directory / QM_DIR
    if not qm_dir.is_dir():
        raise MqlogError(f"{directory}: no {QM_DIR}/ directory with the queue manager's files")
    choice = choose(run["platform"])
    values = choice.configure({k: str(v) for k, v in run["log"].items()})
    return run, values, choice.maker(values)(DirectoryStorage(qm_dir))
