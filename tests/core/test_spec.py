"""Workload specs: built-in definitions, values from text, TOML files, --set items, describe()."""

from __future__ import annotations

import re

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mqlog.core.errors import MqlogError, ParameterError, SpecError
from mqlog.core.workload.payload import PAYLOAD_KINDS
from mqlog.core.workload.spec import (
    BUILTINS,
    Param,
    SpecValueError,
    WorkloadDef,
    WorkloadSpec,
    apply_overrides,
    build_spec,
    describe,
    dump_spec,
    load_spec_file,
    parse_set,
    parse_value,
    resolve_workload,
)

# Written down from the workloads' documentation, not from spec.py: each built-in and its documented defaults.
ISSUE_DEFAULTS = {
    "requester-responder": {"requesters": 10, "responders": 10, "queue_pairs": 10,
                            "message_size": 2048, "rate": 0.0, "duration": 1.0,
                            "persistent": True, "think_us": 0.0},
    "putget-pairs": {"pairs": 1, "message_size": 2048, "messages_per_pair": 1000,
                     "syncpoint": True, "persistent": True, "think_us": 0.0},
    "putget": {"apps": 1, "message_size": 2048, "messages": 1000, "syncpoint": True,
               "persistent": True, "think_us": 0.0},
    "long-uow": {"background": 4, "message_size": 2048, "duration": 2.0, "prepared": False,
                 "long_messages": 1},
    "log-fill": {"queues": 10, "messages": 10_000, "message_size": 2048, "transactions": 100,
                 "commit": True},
    "deep-queue": {"queues": 4, "depth": 10_000, "message_size": 1024, "then_messages": 1000},
}


def param(workload: str, name: str) -> Param:
    return BUILTINS[workload].param(name)


def write(tmp_path, text: str, name: str = "spec.toml"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# --------------------------------------------------------------------------- definitions


def test_builtins_are_the_issue_workloads_with_their_defaults():
    assert set(BUILTINS) == set(ISSUE_DEFAULTS)
    for name, defaults in ISSUE_DEFAULTS.items():
        spec = build_spec(BUILTINS[name], {}, origin="built-in")
        assert spec.workload == name
        assert dict(spec.params) == {**defaults, "payload": "random"}
        for key, value in defaults.items():
            assert type(spec.get(key)) is type(value)


def test_every_parameter_has_a_doc_and_every_workload_takes_payload():
    for definition in BUILTINS.values():
        assert definition.doc
        for p in definition.params:
            assert p.doc and "\n" not in p.doc
        payload = definition.param("payload")
        assert payload.kind is str and payload.default == "random"
        assert set(payload.choices) == set(PAYLOAD_KINDS)


@pytest.mark.parametrize("workload, name, low, high", [
    ("requester-responder", "requesters", 1, 10_000),
    ("requester-responder", "queue_pairs", 1, 1_000),
    ("requester-responder", "message_size", 0, 104_857_600),
    ("putget-pairs", "messages_per_pair", 1, 10**7),
    ("putget", "apps", 1, 10_000),
    ("putget", "messages", 1, 10**7),
    ("long-uow", "background", 0, 1_000),
    ("long-uow", "long_messages", 1, 10**6),
    ("log-fill", "messages", 0, 10**8),
    ("deep-queue", "depth", 0, 10**8),
])
def test_integer_ranges_are_inclusive_and_errors_name_them(workload, name, low, high):
    p = param(workload, name)
    assert parse_value(p, str(low)) == low
    assert parse_value(p, str(high)) == high
    for bad in (low - 1, high + 1):
        with pytest.raises(ParameterError) as info:
            parse_value(p, str(bad))
        assert str(info.value) == f"workload.{name}={bad} is not valid: allowed {low} to {high}"


def test_duration_must_be_positive_and_at_most_a_day():
    p = param("requester-responder", "duration")
    assert parse_value(p, "0.001") == 0.001
    assert parse_value(p, "86400") == 86400.0
    for bad in ("0", "-1", "86400.5", "nan", "inf"):
        with pytest.raises(ParameterError, match=r"workload\.duration=.*more than 0, up to 86400"):
            parse_value(p, bad)


def test_rate_zero_means_as_fast_as_possible_and_is_allowed():
    p = param("requester-responder", "rate")
    assert parse_value(p, "0") == 0.0
    assert parse_value(p, "2_500") == 2500.0
    with pytest.raises(ParameterError, match=r"rate=-1\.0 .*0 to 10000000"):
        parse_value(p, "-1")


def test_a_definition_with_an_invalid_default_is_refused():
    with pytest.raises(ParameterError, match="workload.n=0"):
        Param("n", 0, int, "a count", low=1, high=5)
    with pytest.raises(ValueError, match="more than once: n"):
        WorkloadDef("w", "doc", (Param("n", 1, int, "a"), Param("n", 2, int, "b")))


# --------------------------------------------------------------------------- values from text


@pytest.mark.parametrize("text, value", [
    ("true", True), ("TRUE", True), ("yes", True), ("1", True), ("on", True), (" True ", True),
    ("false", False), ("No", False), ("0", False), ("off", False),
])
def test_booleans_in_the_usual_spellings(text, value):
    assert parse_value(param("putget-pairs", "syncpoint"), text) is value


@pytest.mark.parametrize("text, value", [
    ("2048", 2048), ("1_024", 1024), ("0x800", 2048), ("+7", 7), (" 12 ", 12), ("0b101", 5),
])
def test_integers_with_separators_and_prefixes(text, value):
    assert parse_value(param("putget-pairs", "message_size"), text) == value


@pytest.mark.parametrize("text", ["big", "2.5", "1e3", "", "0x", "١٢", "2048 bytes"])
def test_a_non_integer_names_the_parameter_and_what_is_expected(text):
    with pytest.raises(SpecValueError) as info:
        parse_value(param("putget-pairs", "message_size"), text)
    assert str(info.value) == (
        f"workload.message_size: expected an integer 0 to 104857600, got {text!r}")
    assert isinstance(info.value, ParameterError) and isinstance(info.value, SpecError)


def test_bad_boolean_and_payload_name_what_is_allowed():
    with pytest.raises(SpecValueError, match=r"^workload\.persistent: expected true or false, "
                                             r"got 'maybe'$"):
        parse_value(param("putget-pairs", "persistent"), "maybe")
    with pytest.raises(ParameterError, match=r"^workload\.payload='Texts' is not valid: allowed "
                                             r"one of random, text, padded-records, mixed$"):
        parse_value(param("putget-pairs", "payload"), "Texts")
    assert parse_value(param("putget-pairs", "payload"), "padded-records") == "padded-records"
    # any case, as MQ reads its values (issue 22); the choice's own spelling is kept
    assert parse_value(param("putget-pairs", "payload"), "Text") == "text"


def test_floats_accept_integers_and_exponents():
    p = param("long-uow", "duration")
    assert parse_value(p, "3") == 3.0 and type(parse_value(p, "3")) is float
    assert parse_value(p, "1.5e2") == 150.0


@settings(max_examples=150, deadline=None)
@given(workload=st.sampled_from(sorted(BUILTINS)), data=st.data(), text=st.text(max_size=40))
def test_any_text_either_parses_or_raises_a_spec_error(workload, data, text):
    p = data.draw(st.sampled_from(BUILTINS[workload].params))
    try:
        value = parse_value(p, text)
    except (SpecError, ParameterError) as exc:
        assert f"{p.name}" in str(exc) and "\n" not in str(exc)
    else:
        assert type(value) is p.kind
        assert p.check(value) == value


# --------------------------------------------------------------------------- build_spec


def test_overrides_may_be_typed_or_text():
    spec = build_spec(BUILTINS["putget-pairs"], {"pairs": 10, "syncpoint": "no",
                                                 "payload": "text"}, origin="--set")
    assert (spec.get("pairs"), spec.get("syncpoint"), spec.get("payload")) == (10, False, "text")
    assert spec.get("message_size") == 2048
    assert spec.origin == "--set"


def test_an_unknown_parameter_is_named_with_the_known_ones():
    with pytest.raises(SpecError) as info:
        build_spec(BUILTINS["putget-pairs"], {"pairz": 3}, origin="--set")
    message = str(info.value)
    assert message.startswith("--set: workload.pairz: unknown parameter")
    assert "did you mean 'pairs'" in message
    for p in BUILTINS["putget-pairs"].params:
        assert p.name in message


@pytest.mark.parametrize("value, shown", [(2.5, "2.5"), (True, "True"), ([1], r"\[1\]")])
def test_a_value_of_the_wrong_type_names_the_parameter(value, shown):
    with pytest.raises(SpecValueError, match=rf"^workload\.pairs: expected an integer 1 to "
                                             rf"10000, got {shown}$"):
        build_spec(BUILTINS["putget-pairs"], {"pairs": value}, origin="")


def test_spec_is_read_only_and_unknown_get_names_the_parameter():
    spec = build_spec(BUILTINS["deep-queue"], {}, origin="built-in")
    with pytest.raises(TypeError):
        spec.params["depth"] = 1  # type: ignore[index]
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        spec.seed = 3  # type: ignore[misc]
    with pytest.raises(SpecError, match="no parameter 'deepth'.*depth"):
        spec.get("deepth")
    assert hash(spec) == hash(build_spec(BUILTINS["deep-queue"], {}, origin="elsewhere"))


def test_apply_overrides_keeps_the_rest_of_the_spec():
    base = build_spec(BUILTINS["log-fill"], {"queues": 3}, origin="f.toml", seed=9)
    spec = apply_overrides(base, BUILTINS["log-fill"], {"commit": "false"})
    assert (spec.get("queues"), spec.get("commit"), spec.seed) == (3, False, 9)
    with pytest.raises(ParameterError, match=r"^--set: workload\.queues=0 is not valid"):
        apply_overrides(base, BUILTINS["log-fill"], {"queues": "0"})


# --------------------------------------------------------------------------- spec files


def test_a_spec_file_gives_workload_seed_params_and_raw_log(tmp_path):
    path = write(tmp_path, """
        workload = "putget-pairs"
        seed = 7
        [params]
        pairs = 10
        payload = "padded-records"
        persistent = false
        [log]
        COMPLOG = "RLE"
        LOGPRIMARY = 3
    """)
    spec, log = load_spec_file(path, BUILTINS)
    assert spec == WorkloadSpec("putget-pairs", {**ISSUE_DEFAULTS["putget-pairs"], "pairs": 10,
                                                 "persistent": False,
                                                 "payload": "padded-records"}, seed=7)
    assert log == {"COMPLOG": "RLE", "LOGPRIMARY": 3}
    assert spec.origin == str(path)


def test_a_spec_file_round_trips(tmp_path):
    spec = build_spec(BUILTINS["requester-responder"],
                      {"rate": 2500.0, "duration": 0.25, "payload": "mixed"},
                      origin="", seed=2**40)
    log = {"LogFilePages": 4096, "LogType": "CIRCULAR", "odd key": 'a "quoted"\tvalue'}
    loaded, loaded_log = load_spec_file(write(tmp_path, dump_spec(spec, log)), BUILTINS)
    assert loaded == spec and loaded.seed == 2**40
    assert loaded_log == log


def test_only_the_workload_is_required(tmp_path):
    spec, log = load_spec_file(write(tmp_path, 'workload = "long-uow"\n'), BUILTINS)
    assert spec == build_spec(BUILTINS["long-uow"], {}, origin="")
    assert spec.seed is None and log == {}


def test_malformed_toml_names_the_file_and_line(tmp_path):
    path = write(tmp_path, 'workload = "log-fill"\n[params]\nqueues = = 3\n')
    with pytest.raises(SpecError) as info:
        load_spec_file(path, BUILTINS)
    assert str(info.value).startswith(f"{path}: not valid TOML")
    assert "line 3" in str(info.value)


def test_a_file_that_is_not_utf8_names_the_line(tmp_path):
    path = tmp_path / "spec.toml"
    path.write_bytes(b'workload = "log-fill"\n# caf\xe9\n')
    with pytest.raises(SpecError, match=r"not UTF-8 text \(line 2"):
        load_spec_file(path, BUILTINS)


def test_a_missing_file_is_a_spec_error(tmp_path):
    with pytest.raises(SpecError, match=r"nope\.toml: cannot read the spec file"):
        load_spec_file(tmp_path / "nope.toml", BUILTINS)


@pytest.mark.parametrize("text, message", [
    ('workload = "log-fill"\nworkers = 3\n',
     r"spec\.toml: workers: unknown key; a spec file has only workload, seed, params, log, qmgr$"),
    ('workload = "log-fill"\n[params]\nqueuez = 3\n',
     r"spec\.toml: params\.queuez: unknown parameter of workload 'log-fill' "
     r"\(did you mean 'queues'\?\); known: queues, messages"),
    ('workload = "log-fill"\n[params]\nmessage_size = "big"\n',
     r"^.*spec\.toml: params\.message_size: expected an integer 0 to 104857600, got 'big'$"),
    ('workload = "log-fill"\n[params]\nmessage_size = -5\n',
     r"spec\.toml: params\.message_size=-5 is not valid: allowed 0 to 104857600$"),
    ('workload = "log-fill"\n[params]\ncommit = 1\n',
     r"spec\.toml: params\.commit: expected true, false or never, got 1$"),
    ('workload = "nightly"\n',
     r"spec\.toml: workload: unknown workload 'nightly'; known: requester-responder, "),
    ('workload = 3\n', r"spec\.toml: workload: expected a workload name"),
    ('seed = 3\n', r"spec\.toml: workload: missing"),
    ('workload = "log-fill"\nseed = "x"\n', r"spec\.toml: seed: expected an integer 0 to"),
    ('workload = "log-fill"\nseed = -1\n', r"spec\.toml: seed=-1 is not valid"),
    ('workload = "log-fill"\nparams = 3\n', r"spec\.toml: params: expected a table \[params\]"),
    ('workload = "log-fill"\nlog = "RLE"\n', r"spec\.toml: log: expected a table \[log\]"),
    ('workload = "log-fill"\n[params.queues]\nx = 1\n',
     r"spec\.toml: params\.queues: expected an integer 1 to 1000, got \{'x': 1\}"),
])
def test_a_bad_field_is_named(tmp_path, text, message):
    with pytest.raises(SpecError, match=message):
        load_spec_file(write(tmp_path, text), BUILTINS)


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(raw=st.one_of(
    st.binary(max_size=200),
    st.lists(st.sampled_from([b'workload = "putget-pairs"\n', b"[params]\n", b"[log]\n",
                              b"pairs = 3\n", b"pairs = -3\n", b"seed = 1\n", b"x = 1\n",
                              b'payload = "text"\n', b"= =\n", b"\xff", b"[[params]]\n",
                              b"message_size = 1e999\n"]), max_size=8).map(b"".join),
))
def test_any_bytes_as_a_spec_file_raise_only_spec_errors(tmp_path, raw):
    path = tmp_path / "fuzz.toml"
    path.write_bytes(raw)
    try:
        spec, log = load_spec_file(path, BUILTINS)
    except SpecError as exc:
        assert str(exc).startswith(str(path)) and "\n" not in str(exc)
    else:
        assert spec.workload in BUILTINS and isinstance(log, dict)


# --------------------------------------------------------------------------- --set and --workload


def test_set_items_go_to_their_sections_as_text():
    got = parse_set(["workload.pairs=10", "log.COMPLOG=RLE", "workload.payload=text",
                     "log.LogFilePages=4096", "log.Path=a=b"])
    assert got == {"workload": {"pairs": "10", "payload": "text"},
                   "log": {"COMPLOG": "RLE", "LogFilePages": "4096", "Path": "a=b"}, "qmgr": {}}
    assert parse_set([]) == {"workload": {}, "log": {}, "qmgr": {}}


def test_a_set_key_given_twice_in_any_case_is_refused_not_the_last_one_winning():
    # issue 22: which of two values was meant is the user's to say
    with pytest.raises(SpecError, match=r"^--set workload\.PAIRS is given twice \('workload\.pairs=10' and "
                                        r"'workload\.PAIRS=12'\)"):
        parse_set(["workload.pairs=10", "log.pairs=1", "workload.PAIRS=12"])


@pytest.mark.parametrize("item", ["pairs=10", "workload.pairs", "queue.depth=3", "workload.=3",
                                  "=3", "", "log.my key=1"])
def test_a_malformed_set_item_is_quoted(item):
    with pytest.raises(SpecError) as info:
        parse_set(["workload.pairs=1", item])
    assert str(info.value).startswith(f"--set {item!r}: ")
    assert "SECTION.KEY=VALUE" in str(info.value)


def test_set_then_build_reports_the_bad_value():
    overrides = parse_set(["workload.message_size=-5"])["workload"]
    with pytest.raises(ParameterError) as info:
        build_spec(BUILTINS["putget-pairs"], overrides, origin="")
    assert str(info.value) == "workload.message_size=-5 is not valid: allowed 0 to 104857600"


def test_workload_option_takes_a_builtin_or_a_file(tmp_path):
    spec, log = resolve_workload("deep-queue", BUILTINS)
    assert spec.get("depth") == 10_000 and log == {}
    path = write(tmp_path, 'workload = "deep-queue"\n[params]\ndepth = 5\n', "dq.toml")
    spec, _ = resolve_workload(str(path), BUILTINS)
    assert spec.get("depth") == 5
    with pytest.raises(SpecError, match="unknown workload 'deepqueue'.*deep-queue.*\\.toml"):
        resolve_workload("deepqueue", BUILTINS)
    with pytest.raises(SpecError, match="cannot read"):
        resolve_workload(str(tmp_path / "missing.toml"), BUILTINS)


# --------------------------------------------------------------------------- describe


def test_describe_lists_every_workload_and_every_parameter_with_its_default():
    text = describe(BUILTINS)
    sections = {}
    current = None
    for line in text.splitlines():
        if line and not line.startswith(" ") and line in BUILTINS:
            current = sections.setdefault(line, {})
        elif current is not None and (m := re.match(r"^    (\w+)=(\S*)\s+(.*)", line)):
            current[m.group(1)] = (m.group(2), m.group(3))
    assert set(sections) == set(BUILTINS)
    for name, definition in BUILTINS.items():
        assert definition.doc.split()[0] in text
        assert set(sections[name]) == {p.name for p in definition.params}
        for p in definition.params:
            shown_default, rest = sections[name][p.name]
            # What describe shows is what --set takes back to the default.
            assert parse_value(p, shown_default) == p.default
            assert p.doc.split()[0] in rest


def test_describe_shows_ranges_and_choices():
    text = " ".join(describe(BUILTINS).split())  # undo the line wrapping
    assert "0 to 104857600" in text
    assert "more than 0, up to 86400" in text
    assert "one of random, text, padded-records, mixed" in text


def test_errors_are_all_mqlog_errors():
    assert issubclass(SpecError, MqlogError) and issubclass(SpecValueError, MqlogError)
