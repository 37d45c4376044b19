"""The distributed log configuration: parameters, creation rules, qm.ini, crtmqm, --set."""

from __future__ import annotations

import re

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mqlog.core.errors import MqlogError, ParameterError
from mqlog.distributed.config import (
    PARAMETERS,
    LogConfig,
    LogSizeNotValid,
    QmIniError,
    QmIniValueError,
)

KiB, MiB = 1 << 10, 1 << 20

# A qm.ini as a Linux queue manager has it: comments, stanzas before and after Log:, a
# TuningParameters stanza with another component's key beside a checkpoint tunable.
QM_INI = """\
#*******************************************************************#
#* Module Name: qm.ini                                             *#
#* Type       : IBM MQ queue manager configuration file            *#
#*******************************************************************#
ExitPath:
   ExitsDefaultPath=/var/mqm/exits/
   ExitsDefaultPath64=/var/mqm/exits64/
Log:
   LogPrimaryFiles=10
   LogSecondaryFiles=5
   LogFilePages=16384
   LogType=LINEAR
   LogBufferPages=0
   LogPath=/var/mqm/log/QM1/
   LogWriteIntegrity=TripleWrite
   LogManagement=Automatic
; service components follow
Service:
   Name=AuthorizationService
   EntryPoints=14
   SecurityPolicy=Default
ServiceComponent:
   Service=AuthorizationService
   Name=MQSeries.UNIX.auth.service
   Module=amqzfu
   ComponentDataSize=0
TuningParameters:
   ImplSyncOpenOutput=OFF
   CheckPointLogRecdMax=20000
Channels:
   MQIBindType=FASTPATH
"""

OUR_STANZAS = {"log", "tuningparameters"}


def _other_lines(text: str) -> list[str]:
    """The lines outside Log: and TuningParameters:, as written (without line ends), in order."""
    out, ours = [], False
    for line in re.findall(r"[^\n]*\n|[^\n]+$", text):  # lines end at \n only, as in qm.ini
        stripped = line.strip()
        if stripped.endswith(":") and "=" not in stripped and not stripped.startswith((";", "#")):
            ours = stripped[:-1].strip().lower() in OUR_STANZAS
        if not ours:
            out.append(line.rstrip("\r\n"))
    return out


def _line_of(text: str, fragment: str) -> int:
    return next(n for n, line in enumerate(text.splitlines(), 1) if fragment in line)


# ------------------------------------------------------------------ the qm.ini Log stanza's limits


def test_defaults_give_2_mib_buffer_16_mib_files_80_mib_active_log_64_mib_usable():
    config = LogConfig()
    assert config.buffer_pages == 512  # LogBufferPages=0 means 512
    assert config.buffer_bytes == 2 * MiB
    assert config.file_bytes == 16 * MiB
    assert config.primary_bytes == 3 * 16 * MiB
    assert config.active_log_bytes == 80 * MiB
    assert config.usable_bytes == pytest.approx(64 * MiB, rel=0.01)
    assert config.usable_bytes < config.active_log_bytes  # ~20% held back for checkpoints


def test_derived_sizes_follow_the_parameters_and_say_so():
    config = LogConfig(log_primary_files=4, log_secondary_files=4, log_file_pages=8192,
                       log_buffer_pages=1024)
    derived = config.derived()
    assert derived["buffer_bytes"]["bytes"] == 4 * MiB
    assert derived["file_bytes"]["bytes"] == 32 * MiB
    assert derived["active_log_bytes"]["bytes"] == 8 * 32 * MiB
    assert derived["usable_bytes"]["bytes"] == 8 * 32 * MiB * 80 // 100
    assert "256 MiB" in derived["active_log_bytes"]["text"]
    defaults = LogConfig().derived()
    for name, size in (("buffer_bytes", "2 MiB"), ("file_bytes", "16 MiB"),
                       ("active_log_bytes", "80 MiB"), ("usable_bytes", "64 MiB")):
        assert defaults[name]["text"].startswith(size)


def test_every_way_of_asking_for_defaults_agrees():
    assert LogConfig.from_crtmqm([]) == (LogConfig(), [])
    assert LogConfig.from_settings({}) == LogConfig()
    assert LogConfig.from_qm_ini("") == LogConfig()
    assert LogConfig.from_qm_ini(LogConfig().to_qm_ini_stanza()) == LogConfig()


def test_every_field_has_a_parameter_and_describe_lists_them_all():
    assert [f.name for f in attrs.fields(LogConfig)] == [p.attribute for p in PARAMETERS]
    rows = LogConfig(log_type="linear").describe()
    assert [r.name for r in rows] == [p.name for p in PARAMETERS]
    log_type = next(r for r in rows if r.name == "LogType")
    assert (log_type.value, log_type.default) == ("LINEAR", "CIRCULAR")
    assert all(r.allowed and r.meaning for r in rows)


# ------------------------------------------------------------------ parameter limits

# (qm.ini name, low, high, other values that keep the primary + secondary total legal)
NUMBER_LIMITS = [
    ("LogPrimaryFiles", 2, 510, {"LogSecondaryFiles": 1}),
    ("LogSecondaryFiles", 1, 509, {"LogPrimaryFiles": 2}),
    ("LogFilePages", 64, 65535, {}),
    ("LogBufferPages", 18, 4096, {}),
    ("CheckPointLogRecdMax", 1000, 100_000, {}),
    ("CheckPointLogRecdMin", 0, 2000, {}),
    ("CheckPointWaitLen", 5, 60, {}),
    ("DefaultPQBufferSize", 0, 104_857_600, {}),
]
BOUND_CASES = [
    pytest.param(name, value, ok, others, id=f"{name}={value}")
    for name, low, high, others in NUMBER_LIMITS
    for value, ok in ((low - 1, False), (low, True), (high, True), (high + 1, False))
]
ATTRIBUTE = {p.name: p.attribute for p in PARAMETERS}


@pytest.mark.parametrize("name, value, ok, others", BOUND_CASES)
def test_each_bound_each_side_in_the_constructor(name, value, ok, others):
    kwargs = {ATTRIBUTE[k]: v for k, v in {**others, name: value}.items()}
    if ok:
        assert getattr(LogConfig(**kwargs), ATTRIBUTE[name]) == value
    else:
        with pytest.raises(ParameterError) as caught:
            LogConfig(**kwargs)
        assert caught.value.name == name
        assert caught.value.value == value
        assert name in str(caught.value) and str(value) in str(caught.value)


@pytest.mark.parametrize("name, value, ok, others", BOUND_CASES)
def test_each_bound_each_side_through_set(name, value, ok, others):
    items = {k: str(v) for k, v in {**others, name: value}.items()}
    if ok:
        assert getattr(LogConfig.from_settings(items), ATTRIBUTE[name]) == value
    else:
        with pytest.raises(ParameterError, match=f"log.{name}"):
            LogConfig.from_settings(items)


def test_range_named_in_the_message():
    with pytest.raises(ParameterError, match="LogFilePages=63 is not valid: allowed 64 to 65535"):
        LogConfig(log_file_pages=63)


def test_log_buffer_pages_zero_means_512():
    assert LogConfig(log_buffer_pages=0).buffer_bytes == 512 * 4 * KiB
    assert LogConfig(log_buffer_pages=18).buffer_bytes == 72 * KiB
    assert LogConfig(log_buffer_pages=4096).buffer_bytes == 16 * MiB
    with pytest.raises(ParameterError, match="0 or 18 to 4096"):
        LogConfig(log_buffer_pages=1)


@pytest.mark.parametrize("value", ["5", 5.0, True, None])
def test_numbers_must_be_whole_numbers(value):
    with pytest.raises(ParameterError, match="LogPrimaryFiles"):
        LogConfig(log_primary_files=value)


@pytest.mark.parametrize("attribute, given, kept", [
    ("log_type", "linear", "LINEAR"),
    ("log_type", "Circular", "CIRCULAR"),
    ("log_write_integrity", "singlewrite", "SingleWrite"),
    ("log_write_integrity", "DOUBLEWRITE", "DoubleWrite"),
    ("log_write_integrity", "TripleWrite", "TripleWrite"),
    ("log_management", "archive", "Archive"),
    ("log_management", "AUTOMATIC", "Automatic"),
])
def test_choices_any_case_in_mq_spelling(attribute, given, kept):
    assert getattr(LogConfig(**{attribute: given}), attribute) == kept


@pytest.mark.parametrize("attribute, value, name", [
    ("log_type", "RING", "LogType"),
    ("log_write_integrity", "QuadWrite", "LogWriteIntegrity"),
    ("log_management", "Never", "LogManagement"),
    ("log_path", "", "LogPath"),
    ("log_path", " /var/mqm/log", "LogPath"),
    ("log_path", "/var/mqm\n/log", "LogPath"),
])
def test_bad_choices_and_paths_refused(attribute, value, name):
    with pytest.raises(ParameterError, match=name):
        LogConfig(**{attribute: value})


def test_double_write_behaves_as_triple_write():
    assert LogConfig(log_write_integrity="DoubleWrite").effective_write_integrity == "TripleWrite"
    assert LogConfig(log_write_integrity="SingleWrite").effective_write_integrity == "SingleWrite"


def test_checkpoint_wait_is_in_minutes():
    assert LogConfig().checkpoint_wait_us == 30 * 60 * 1_000_000


# ------------------------------------------------------ primary + secondary cross-check


@pytest.mark.parametrize("primary, secondary, ok", [
    (510, 1, True), (2, 509, True), (255, 256, True),
    (510, 2, False), (256, 256, False), (300, 300, False),
])
def test_primary_plus_secondary_at_most_511(primary, secondary, ok):
    if ok:
        config = LogConfig(log_primary_files=primary, log_secondary_files=secondary)
        assert config.active_log_files == primary + secondary
        return
    with pytest.raises(ParameterError) as caught:
        LogConfig(log_primary_files=primary, log_secondary_files=secondary)
    message = str(caught.value)
    assert "LogPrimaryFiles" in message and "LogSecondaryFiles" in message
    assert str(primary + secondary) in message and "511" in message


def test_evolve_is_checked_again():
    config = LogConfig(log_primary_files=500)
    with pytest.raises(ParameterError, match="LogSecondaryFiles"):
        attrs.evolve(config, log_secondary_files=50)


# ----------------------------------------------------------------------- at creation


def test_at_creation_replaces_too_low_values_by_defaults_and_says_so():
    config, notes = LogConfig.at_creation(log_primary_files=1, log_secondary_files=0,
                                          log_file_pages=32, log_buffer_pages=5)
    assert (config.log_primary_files, config.log_secondary_files) == (3, 2)
    assert (config.log_file_pages, config.log_buffer_pages) == (4096, 0)
    assert len(notes) == 4
    assert any("LogFilePages=32" in n and "4096" in n for n in notes)


def test_at_creation_keeps_values_in_range_without_notes():
    created = LogConfig.at_creation(LogPrimaryFiles=20, log_secondary_files=10, log_type="linear")
    assert created.notes == []
    assert created.config == LogConfig(log_primary_files=20, log_secondary_files=10,
                                       log_type="LINEAR")


@pytest.mark.parametrize("values", [
    {"log_primary_files": 511}, {"log_secondary_files": 510}, {"log_file_pages": 65536},
    {"log_primary_files": 300, "log_secondary_files": 300},
])
def test_at_creation_refuses_too_high_values_log_size_not_valid(values):
    with pytest.raises(LogSizeNotValid, match="log size not valid"):
        LogConfig.at_creation(**values)


def test_at_creation_still_refuses_nonsense():
    with pytest.raises(ParameterError, match="LogType"):
        LogConfig.at_creation(log_type="spiral")
    with pytest.raises(ParameterError, match="log_primary_files"):
        LogConfig.at_creation(primaries=3)


# ---------------------------------------------------------------------------- qm.ini


def test_parse_a_realistic_qm_ini():
    config = LogConfig.from_qm_ini(QM_INI)
    assert config == LogConfig(
        log_primary_files=10, log_secondary_files=5, log_file_pages=16384, log_type="LINEAR",
        log_buffer_pages=0, log_path="/var/mqm/log/QM1/", log_write_integrity="TripleWrite",
        log_management="Automatic", checkpoint_log_recd_max=20000)
    assert config.active_log_bytes == 15 * 64 * MiB


def test_parse_crlf_keys_in_any_case_and_no_indentation():
    text = "Log:\r\nlogprimaryfiles = 4\r\n\tLOGTYPE=linear\r\n#x\r\nExitPath:\r\n"
    assert LogConfig.from_qm_ini(text) == LogConfig(log_primary_files=4, log_type="LINEAR")


def test_no_log_stanza_means_defaults():
    assert LogConfig.from_qm_ini("ExitPath:\n   ExitsDefaultPath=/var/mqm/exits/\n") == LogConfig()


@pytest.mark.parametrize("bad_line, expect", [
    ("   LogPrimaryFiles 5", "malformed line"),
    ("   =5", "no key"),
    ("Log Stanza", "malformed line"),
    ("   LogPrimaryFile=5", "unknown key 'LogPrimaryFile'"),
    ("   CheckPointLogRecdMax=2000", "belongs in the TuningParameters: stanza"),
    ("   LogDefaultPath=/var/mqm/log", "LogPath"),
    ("   LogBufferPages=9", "LogBufferPages=9 is not valid: allowed 0 or 18 to 4096"),
    ("   LogBufferPages=lots", "whole number"),
    ("   LogManagement=Never", "LogManagement"),
])
def test_a_bad_line_is_named_with_file_and_line_number(bad_line, expect):
    # in place of two lines, so that the bad line is the only one with its key
    text = QM_INI.replace("   LogManagement=Automatic\n", "").replace(
        "   LogBufferPages=0\n", f"{bad_line}\n")
    line = _line_of(text, bad_line)
    with pytest.raises(QmIniError) as caught:
        LogConfig.from_qm_ini(text, source="/var/mqm/qmgrs/QM1/qm.ini")
    assert caught.value.line == line
    assert f"/var/mqm/qmgrs/QM1/qm.ini, line {line}: " in str(caught.value)
    assert expect in str(caught.value)


def test_malformed_line_in_another_stanza_is_reported_too():
    text = QM_INI.replace("   EntryPoints=14\n", "   EntryPoints 14\n")
    with pytest.raises(QmIniError, match=f"line {_line_of(text, 'EntryPoints 14')}: malformed"):
        LogConfig.from_qm_ini(text)


def test_key_before_any_stanza_is_refused():
    with pytest.raises(QmIniError, match="line 2: LogType= appears before any stanza"):
        LogConfig.from_qm_ini("; top\nLogType=LINEAR\nLog:\n")


def test_a_bad_value_is_also_a_parameter_error():
    text = QM_INI.replace("LogPrimaryFiles=10", "LogPrimaryFiles=600")
    with pytest.raises(QmIniValueError) as caught:
        LogConfig.from_qm_ini(text)
    assert isinstance(caught.value, ParameterError)
    assert (caught.value.name, caught.value.value) == ("LogPrimaryFiles", 600)
    assert caught.value.line == _line_of(text, "LogPrimaryFiles=600")


def test_primary_plus_secondary_in_qm_ini_names_the_later_line():
    text = QM_INI.replace("LogPrimaryFiles=10", "LogPrimaryFiles=500").replace(
        "LogSecondaryFiles=5", "LogSecondaryFiles=100")
    total = "LogPrimaryFiles \\+ LogSecondaryFiles=600"
    with pytest.raises(QmIniValueError, match=total) as caught:
        LogConfig.from_qm_ini(text)
    assert caught.value.line == _line_of(text, "LogSecondaryFiles=100")


def test_a_key_given_twice_is_refused_naming_both_lines():
    text = QM_INI.replace("   LogManagement=Automatic\n",
                          "   LogManagement=Automatic\n   logprimaryfiles=12\n")
    first, second = _line_of(text, "LogPrimaryFiles=10"), _line_of(text, "logprimaryfiles=12")
    with pytest.raises(QmIniError, match=f"line {second}: LogPrimaryFiles is given twice in the "
                                         f"Log: stanza \\(lines {first} and {second}\\)"):
        LogConfig.from_qm_ini(text)


def test_a_second_log_stanza_is_refused():
    text = QM_INI + "Log:\n   LogPrimaryFiles=4\n"
    with pytest.raises(QmIniError, match=f"a second Log: stanza \\(the first starts at line "
                                         f"{_line_of(QM_INI, 'Log:')}\\)"):
        LogConfig.from_qm_ini(text)


# ------------------------------------------------------------------ writing qm.ini back


def test_update_keeps_everything_else_byte_identical():
    config = attrs.evolve(LogConfig.from_qm_ini(QM_INI), log_primary_files=20,
                          log_write_integrity="SingleWrite", log_buffer_pages=1024,
                          checkpoint_wait_len=10)
    updated = config.update_qm_ini(QM_INI)
    assert LogConfig.from_qm_ini(updated) == config
    assert _other_lines(updated) == _other_lines(QM_INI)
    expected = (QM_INI.replace("LogPrimaryFiles=10", "LogPrimaryFiles=20")
                .replace("LogWriteIntegrity=TripleWrite", "LogWriteIntegrity=SingleWrite")
                .replace("LogBufferPages=0", "LogBufferPages=1024")
                .replace("   CheckPointLogRecdMax=20000\n",
                         "   CheckPointLogRecdMax=20000\n   CheckPointWaitLen=10\n"))
    assert updated == expected


def test_update_with_the_same_config_changes_nothing():
    assert LogConfig.from_qm_ini(QM_INI).update_qm_ini(QM_INI) == QM_INI
    lower_case = QM_INI.replace("LogType=LINEAR", "LogType=linear")
    assert LogConfig.from_qm_ini(lower_case).update_qm_ini(lower_case) == lower_case


def test_update_keeps_indentation_key_spelling_and_line_ends():
    text = "Log:\r\n\tlogfilepages = 4096  \r\nExitPath:\r\n  ExitsDefaultPath=/x/\r\n"
    updated = LogConfig(log_file_pages=8192, log_secondary_files=4).update_qm_ini(text)
    assert updated == ("Log:\r\n\tlogfilepages = 8192  \r\n\tLogSecondaryFiles=4\r\n"
                       "ExitPath:\r\n  ExitsDefaultPath=/x/\r\n")


def test_update_adds_a_missing_log_stanza_and_tuning_parameters():
    text = "ExitPath:\n   ExitsDefaultPath=/var/mqm/exits/"  # no final newline
    config = LogConfig(log_type="LINEAR", checkpoint_log_recd_min=500)
    updated = config.update_qm_ini(text)
    assert updated.startswith(text + "\nLog:\n   LogPrimaryFiles=3\n")
    assert "   LogManagement=Manual\n" in updated  # crtmqm writes it for a linear log
    assert updated.endswith("TuningParameters:\n   CheckPointLogRecdMin=500\n")
    assert LogConfig.from_qm_ini(updated) == config


def test_update_after_a_last_line_without_newline():
    text = "Log:\n   LogType=CIRCULAR"
    updated = LogConfig(log_primary_files=5).update_qm_ini(text)
    assert updated == "Log:\n   LogType=CIRCULAR\n   LogPrimaryFiles=5\n"


def test_update_overwrites_bad_values_but_not_bad_structure():
    text = "Log:\n   LogPrimaryFiles=9999\n"
    assert LogConfig().update_qm_ini(text) == "Log:\n   LogPrimaryFiles=3\n"
    with pytest.raises(QmIniError, match="unknown key"):
        LogConfig().update_qm_ini("Log:\n   LogSize=3\n")


def test_to_qm_ini_round_trips():
    config = LogConfig(log_primary_files=7, log_type="LINEAR", log_management="Archive",
                       checkpoint_log_recd_max=1000)
    assert LogConfig.from_qm_ini(config.to_qm_ini()) == config
    assert LogConfig.from_qm_ini(config.to_qm_ini_stanza()) == attrs.evolve(
        config, checkpoint_log_recd_max=50_000)


# ---------------------------------------------------------------------------- crtmqm


def test_crtmqm_flags():
    config, notes = LogConfig.from_crtmqm(
        ["-lp", "12", "-ls", "8", "-lf", "65535", "-ll", "-ld", "/mq/logs"])
    assert notes == []
    assert config == LogConfig(log_primary_files=12, log_secondary_files=8, log_file_pages=65535,
                               log_type="LINEAR", log_path="/mq/logs")


@pytest.mark.parametrize("flag, log_type, management", [
    ("-lc", "CIRCULAR", "Manual"), ("-ll", "LINEAR", "Manual"),
    ("-lla", "LINEAR", "Automatic"), ("-lln", "LINEAR", "Manual"),
])
def test_crtmqm_log_type_flags(flag, log_type, management):
    config = LogConfig.from_crtmqm([flag]).config
    assert (config.log_type, config.log_management) == (log_type, management)


def test_crtmqm_too_low_is_replaced_too_high_refused():
    created = LogConfig.from_crtmqm(["-lp", "1", "-lf", "16"])
    assert (created.config.log_primary_files, created.config.log_file_pages) == (3, 4096)
    assert len(created.notes) == 2
    with pytest.raises(LogSizeNotValid, match="log size not valid: crtmqm -lf"):
        LogConfig.from_crtmqm(["-lf", "65536"])
    with pytest.raises(LogSizeNotValid, match="crtmqm -lp \\+ -ls"):
        LogConfig.from_crtmqm(["-lp", "400", "-ls", "200"])


@pytest.mark.parametrize("args, flag", [
    (["-lp"], "-lp"),
    (["-lp", "-ll"], "-lp"),
    (["-ls", "two"], "-ls"),
    (["-lf", "-5"], "-lf"),
    (["-lq", "3"], "-lq"),
    (["-lc", "-ll"], "-ll"),
    (["-lp", "3", "-lp", "4"], "-lp"),
])
def test_crtmqm_bad_args_name_the_flag(args, flag):
    with pytest.raises(ParameterError, match=flag):
        LogConfig.from_crtmqm(args)


# ---------------------------------------------------------------------------- --set


def test_set_names_in_any_case_with_or_without_prefix():
    config = LogConfig.from_settings({"log.LogPrimaryFiles": "5", "logsecondaryfiles": "4",
                                      "LOG.LOGTYPE": "linear", "LogDefaultPath": "/mq"})
    assert config == LogConfig(log_primary_files=5, log_secondary_files=4, log_type="LINEAR",
                               log_path="/mq")


def test_set_unknown_name_lists_the_known_ones():
    with pytest.raises(ParameterError) as caught:
        LogConfig.from_settings({"LogSize": "5"})
    assert caught.value.name == "log.LogSize"
    assert all(p.name in str(caught.value) for p in PARAMETERS)


def test_set_is_strict_both_ways_and_applies_over_a_base():
    with pytest.raises(ParameterError, match="log.LogPrimaryFiles"):
        LogConfig.from_settings({"LogPrimaryFiles": "1"})
    base = LogConfig.from_qm_ini(QM_INI)
    assert LogConfig.from_settings({"LogPrimaryFiles": "11"}, base=base) == attrs.evolve(
        base, log_primary_files=11)
    with pytest.raises(ParameterError, match="log.LogPrimaryFiles \\+ log.LogSecondaryFiles"):
        LogConfig.from_settings({"LogPrimaryFiles": "510"}, base=base)


def test_settings_round_trip_as_text():
    config = LogConfig(log_type="LINEAR", log_buffer_pages=64, checkpoint_log_recd_min=0)
    assert LogConfig.from_settings({k: str(v) for k, v in config.settings().items()}) == config


# ------------------------------------------------------------------------ properties

configs = st.builds(
    LogConfig,
    log_primary_files=st.integers(2, 255),
    log_secondary_files=st.integers(1, 256),
    log_file_pages=st.integers(64, 65535),
    log_type=st.sampled_from(["CIRCULAR", "linear"]),
    log_buffer_pages=st.one_of(st.just(0), st.integers(18, 4096)),
    log_path=st.sampled_from(["/var/mqm/log", "/mq/log;1", "C:\\MQ\\log"]),
    log_write_integrity=st.sampled_from(["SingleWrite", "DoubleWrite", "triplewrite"]),
    log_management=st.sampled_from(["Manual", "Automatic", "Archive"]),
    checkpoint_log_recd_max=st.integers(1000, 100_000),
    checkpoint_log_recd_min=st.integers(0, 2000),
    checkpoint_wait_len=st.integers(5, 60),
)

# Fragments that make random text look like qm.ini often enough to reach past the first line.
FRAGMENTS = ["Log:", "TuningParameters:", "ExitPath:", "LogPrimaryFiles", "LogSecondaryFiles",
             "LogType", "LogPath", "LogFilePages", "CheckPointWaitLen", "Name", "=", "==", " ",
             "\t", ";", "#", ":", "\n", "\r\n", "\r", "0", "3", "510", "99999999999999999999",
             "linear", "TripleWrite", "\ufeff", "\x0b", "é"]
qm_ini_like = st.lists(st.sampled_from(FRAGMENTS), max_size=40).map("".join)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(), qm_ini_like))
def test_random_text_raises_only_the_modules_own_errors(text):
    try:
        config = LogConfig.from_qm_ini(text)
    except QmIniError as exc:
        assert isinstance(exc, MqlogError) and str(exc).startswith("qm.ini")
        return
    assert isinstance(config, LogConfig)


@settings(max_examples=200, deadline=None)
@given(configs, st.one_of(st.just(QM_INI), st.just(""), qm_ini_like))
def test_update_then_parse_gives_the_config_back(config, text):
    try:
        LogConfig.from_qm_ini(text)
    except QmIniValueError:
        pass  # a bad value is overwritten by update
    except QmIniError:
        with pytest.raises(QmIniError):
            config.update_qm_ini(text)
        return
    updated = config.update_qm_ini(text)
    assert LogConfig.from_qm_ini(updated) == config
    assert _other_lines(updated)[:len(_other_lines(text))] == _other_lines(text)
