"""run.json as a RunRecord (issue 41): what a run writes reads back to the same record and the
same bytes; a field missing or of the wrong type is refused naming the file and the field
before any work starts; a directory written before a field existed reads as it always did."""

from __future__ import annotations

import json

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mqlog.core.errors import MqlogError
from mqlog.core.host.profiles import DEFAULT_HOST
from mqlog.core.qm.config import qmgr_settings
from mqlog.rundir import load_run, write_json, write_run
from mqlog.runrecord import RunRecord

names = st.text(st.characters(min_codepoint=32, max_codepoint=0x2FF), max_size=12)
scalars = st.one_of(st.none(), st.booleans(), st.integers(-2**63, 2**64), names)
tables = st.dictionaries(names, scalars, max_size=4)
histories = st.lists(st.dictionaries(names, scalars, max_size=4), max_size=3)
qmgrs = st.builds(lambda depth: qmgr_settings({} if depth is None else {"MAXDEPTH": depth}),
                  st.none() | st.integers(1, 999_999_999))
#: keys a later version might add: kept as they were
extras = st.dictionaries(names.filter(lambda k: k not in attrs.fields_dict(RunRecord)), scalars, max_size=2)

records = st.builds(
    RunRecord, platform=names, log=tables, device=names, host=names, workload=st.none() | names,
    params=st.none() | tables, seed=st.none() | st.integers(0, 2**64 - 1), qmgr=qmgrs,
    crashed=st.none() | st.booleans(), finished=st.booleans(), journal_complete=st.booleans(), history=histories,
    ended=st.none() | tables, version=st.none() | st.just(1), extra=extras)


@settings(max_examples=200, deadline=None)
@given(record=records)
def test_a_record_reads_back_from_its_json_unchanged(record):
    text = json.dumps(record.to_json(), sort_keys=True)
    assert RunRecord.from_json(json.loads(text), "run.json") == record


@settings(max_examples=50, deadline=None)
@given(record=records)
def test_a_record_written_and_read_back_is_written_again_byte_for_byte(tmp_path_factory, record):
    d = tmp_path_factory.mktemp("run")
    write_run(d, record)
    first = (d / "run.json").read_bytes()
    write_run(d, load_run(d))
    assert (d / "run.json").read_bytes() == first


def test_a_new_runs_record_is_the_json_mqlog_run_has_always_written():
    record = RunRecord.new(platform="distributed", log={"LogPrimaryFiles": 3}, device="ssd", host=DEFAULT_HOST,
                           workload="putget", params={"apps": 2}, seed=7, qmgr=None, finished=False, crashed=None)
    assert record.to_json() == {
        "version": 1, "platform": "distributed", "log": {"LogPrimaryFiles": 3}, "device": "ssd",
        "host": DEFAULT_HOST, "workload": "putget", "params": {"apps": 2}, "seed": 7, "qmgr": qmgr_settings({}),
        "crashed": None, "finished": False, "journal_complete": False,
        "history": [{"command": "run", "workload": "putget", "seed": 7, "finished": False, "crashed": None}]}


OLDEST = {"version": 1, "platform": "distributed", "log": {}, "device": "ssd", "workload": "putget",
          "params": {}, "seed": 0, "crashed": True}


def test_a_run_json_from_before_host_qmgr_and_history_reads_as_it_always_did(tmp_path):
    write_json(tmp_path / "run.json", OLDEST)
    run = load_run(tmp_path)
    assert (run.host, run.qmgr, run.finished, run.journal_complete, run.ended) == (
        DEFAULT_HOST, qmgr_settings({}), True, True, None)
    assert run.history == [{"command": "run", "workload": "putget", "seed": 0, "finished": True, "crashed": True}]
    unfinished = {**OLDEST, "finished": False}
    write_json(tmp_path / "run.json", unfinished)
    assert not load_run(tmp_path).journal_complete


@pytest.mark.parametrize("field, value", [
    ("platform", None), ("log", None), ("device", None),  # None: left out
    ("platform", 3), ("log", "LogPrimaryFiles=3"), ("device", ["ssd"]), ("host", 1), ("workload", {}),
    ("params", []), ("seed", "7"), ("seed", True), ("crashed", "no"), ("finished", 1), ("journal_complete", "yes"),
    ("history", {}), ("qmgr", [1]), ("ended", "controlled"), ("version", 1.5)])
def test_a_field_missing_or_of_the_wrong_type_is_refused_naming_the_file_and_the_field(tmp_path, field, value):
    doc = dict(OLDEST)
    if value is None:
        del doc[field]
    else:
        doc[field] = value
    write_json(tmp_path / "run.json", doc)
    with pytest.raises(MqlogError) as err:
        load_run(tmp_path)
    message = str(err.value)
    assert message.startswith(str(tmp_path / "run.json")) and f"field '{field}'" in message and "must be" in message
    assert "\n" not in message


def test_a_history_entry_that_is_not_an_object_or_a_bad_qmgr_attribute_is_refused_naming_it(tmp_path):
    write_json(tmp_path / "run.json", {**OLDEST, "history": [{"command": "run"}, "restart"]})
    with pytest.raises(MqlogError, match=r"run\.json: history entry 2 is not a JSON object"):
        load_run(tmp_path)
    write_json(tmp_path / "run.json", {**OLDEST, "qmgr": {"MAXDEPTH": -1}})
    with pytest.raises(MqlogError, match=r"run\.json: .*MAXDEPTH"):
        load_run(tmp_path)
    (tmp_path / "run.json").write_text("[1, 2]")
    with pytest.raises(MqlogError, match=r"run\.json: not a JSON object"):
        load_run(tmp_path)
