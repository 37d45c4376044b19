"""The checkpoint counting basis (issue 19 item 6, CALIBRATION C1): CheckPointLogRecdMax counts
log records by default, or persistent MQPUT/MQGET operations with checkpoint_basis=operations."""

from __future__ import annotations

import pytest

from mqlog.core.disk.storage import MemoryStorage
from mqlog.core.errors import ParameterError
from mqlog.core.platform import RecordCountCheckpoints
from mqlog.core.workload.run import RunConfig, run_workload
from mqlog.core.workload.spec import BUILTINS, build_spec
from mqlog.distributed.config import LogConfig
from mqlog.platforms import choose


def run(log: dict, **params):
    choice = choose("distributed")
    values = choice.configure(log)
    spec = build_spec(BUILTINS["putget"], {k: str(v) for k, v in params.items()}, origin="test")
    return run_workload(RunConfig("distributed", choice.maker(values), values, spec), MemoryStorage()).metrics


def intervals(metrics) -> list[tuple[int, int]]:
    """(messages put, log records) between each checkpoint the record count triggered and the one before."""
    marks = metrics["checkpoint_marks"]
    return [(b["messages_put"] - a["messages_put"], b["log_records"] - a["log_records"])
            for a, b in zip(marks, marks[1:]) if b["reason"] == "records"]


def test_the_default_basis_is_log_records():
    assert LogConfig().checkpoint_basis == "records"
    assert LogConfig.from_settings({}).settings()["checkpoint_basis"] == "records"


def test_records_checkpoint_more_often_per_message_than_operations():
    records = run({"CheckPointLogRecdMax": "1000"}, messages=700, message_size=100)
    operations = run({"CheckPointLogRecdMax": "1000", "checkpoint_basis": "operations"},
                     messages=700, message_size=100)
    assert records["config"]["checkpoint_basis"] == "records"
    assert operations["config"]["checkpoint_basis"] == "operations"
    by_records, by_operations = intervals(records), intervals(operations)
    assert by_records and by_operations
    # operations: a message is one persistent MQPUT and one MQGET, so 1000 operations = 500 messages
    assert all(messages == 500 for messages, _ in by_operations)
    # records: every record counts, so a checkpoint comes after 1000 records (give or take the
    # checkpoint's own), fewer messages than under operations by the records each message takes
    for messages, logged in by_records:
        assert 1000 <= logged <= 1010
        assert messages <= 1000 / 4 + 1  # put, commit, get, commit at least
    assert records["checkpoints"] >= 2 * operations["checkpoints"] - 1


@pytest.mark.parametrize("value", ["messages", "", "record"])
def test_a_bad_basis_names_the_parameter_and_the_allowed_values(value):
    with pytest.raises(ParameterError) as caught:
        LogConfig.from_settings({"checkpoint_basis": value})
    text = str(caught.value)
    assert "log.checkpoint_basis" in text and "records" in text and "operations" in text
    with pytest.raises(ParameterError, match="checkpoint_basis.*records or operations"):
        RecordCountCheckpoints(basis=value)


def test_the_basis_is_not_a_qm_ini_key():
    config = LogConfig(checkpoint_basis="operations")
    assert "checkpoint_basis" not in config.to_qm_ini()
    from mqlog.distributed.qmini import QmIniError

    with pytest.raises(QmIniError, match="setting of the model"):
        LogConfig.from_qm_ini("Log:\n   checkpoint_basis=operations\n")
