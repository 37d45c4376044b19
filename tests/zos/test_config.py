"""The z/OS log configuration: CSQ6LOGP/CSQ6SYSP/CSQ6ARVP parameters, RBA limits, SET LOG."""

from __future__ import annotations

import pytest
from mqlog.core.errors import MqlogError, ParameterError
from mqlog.zos.config import (
    PARAMETERS,
    RBA6_END,
    RBA6_TERMINATION,
    RBA6_WARNING,
    RBA8_END,
    RBA8_TERMINATION,
    RBA8_WARNING,
    NotChangeableError,
    RbaThreshold,
    ZosConfigFileError,
    ZosConfigFileValueError,
    ZosLogConfig,
    configure,
    describe,
    rba_threshold,
)

KiB, MiB = 1 << 10, 1 << 20

# ------------------------------------------------------------------ defaults (CSQ6LOGP / CSQ6SYSP)


def test_defaults_match_spec():
    c = ZosLogConfig()
    assert c.to_settings() == {
        "TWOACTV": "YES", "TWOARCH": "YES", "TWOBSDS": "YES", "OFFLOAD": "YES",
        "MAXARCH": 500, "MAXCNOFF": 31, "OUTBUFF": 4000, "INBUFF": 60, "WRTHRSH": 20, "MAXRTU": 2,
        "DEALLCT": 0, "COMPLOG": "NONE", "ZSTD_IN_ANY": "NO", "LOGLOAD": 500_000,
        "ARCPFX1": "CSQARC1", "ARCPFX2": "CSQARC2", "ACTIVE_LOGS": 3, "ACTIVE_LOG_CIS": 4096,
        "RBA8": "YES", "STARTRBA": "0x0000000000000000", "SHARED_QUEUES": "NONE",
        "BUFFERS": 1000,  # DEFINE BUFFPOOL's default
    }


def test_default_derived_sizes():
    c = ZosLogConfig()
    assert c.output_buffer_bytes == 4000 * KiB
    assert c.output_buffer_cis == 1000
    assert c.input_buffer_bytes == 60 * KiB
    assert c.data_set_bytes == 16 * MiB
    assert c.active_log_bytes == 48 * MiB
    assert c.active_data_sets == 6  # dual logging: the same count per copy
    assert c.active_disk_bytes == 96 * MiB
    assert c.bytes_written(1000) == 2000
    assert c.archive_limit == 500
    assert c.archived_bytes_limit == 500 * 16 * MiB
    assert c.rba_headroom_bytes == RBA8_TERMINATION


def test_single_logging_writes_each_byte_once_and_halves_the_data_sets():
    c = ZosLogConfig(twoactv=False)
    assert c.bytes_written(1000) == 1000
    assert c.active_data_sets == 3
    assert c.active_log_bytes == ZosLogConfig().active_log_bytes


def test_outbuff_is_used_in_whole_cis_and_wrthrsh_never_exceeds_the_buffer():
    c = ZosLogConfig.from_settings({"OUTBUFF": "41", "WRTHRSH": "256"})
    assert c.output_buffer_cis == 11  # 41 KB rounded up to 44 KiB
    assert c.output_buffer_bytes == 44 * KiB
    assert c.write_threshold_cis == 11


def test_complog_any_uses_zstd_only_with_the_model_switch():
    assert ZosLogConfig().compression_algorithms == ()
    assert ZosLogConfig(complog="RLE").compression_algorithms == ("RLE",)
    assert ZosLogConfig(complog="ANY").compression_algorithms == ("RLE",)
    assert ZosLogConfig(complog="ANY", zstd_in_any=True).compression_algorithms == ("RLE", "ZSTD")
    assert ZosLogConfig(complog="RLE", zstd_in_any=True).compression_algorithms == ("RLE",)


# ------------------------------------------------------------------ numeric bounds

NUMERIC_BOUNDS = [
    ("MAXARCH", 10, 1000, "10 to 1000"),
    ("OUTBUFF", 40, 4000, "40 to 4000 KB"),
    ("INBUFF", 28, 60, "28 to 60 KB"),
    ("WRTHRSH", 1, 256, "1 to 256"),
    ("MAXRTU", 1, 99, "1 to 99"),
    ("DEALLCT", 0, 1440, "0 to 1440"),
    ("LOGLOAD", 200, 16_000_000, "200 to 16000000"),
    ("ACTIVE_LOGS", 2, 310, "2 to 310"),
    ("ACTIVE_LOG_CIS", 16, 1 << 20, "16 to 1048576"),
]


@pytest.mark.parametrize(("name", "low", "high", "allowed"), NUMERIC_BOUNDS)
def test_each_bound_is_accepted_at_the_edge(name, low, high, allowed):
    for value in (low, high):
        c = ZosLogConfig.from_settings({name: str(value)})
        assert c.to_settings()[name] == value


@pytest.mark.parametrize(("name", "low", "high", "allowed"), NUMERIC_BOUNDS)
def test_one_past_each_bound_is_refused_naming_the_parameter_and_range(name, low, high, allowed):
    for value in (low - 1, high + 1):
        if value < 0:
            continue  # "-1" is not a whole number: checked below
        with pytest.raises(ParameterError) as info:
            ZosLogConfig.from_settings({name: str(value)})
        assert info.value.name == f"log.{name}"
        assert allowed in str(info.value)
        assert f"log.{name}={value}" in str(info.value)


@pytest.mark.parametrize(("name", "low", "high", "allowed"), NUMERIC_BOUNDS)
def test_the_constructor_refuses_the_same_values(name, low, high, allowed):
    for value in (low - 1, high + 1):
        with pytest.raises(ParameterError, match=allowed):
            ZosLogConfig(**{name.lower(): value})


@pytest.mark.parametrize("text", ["-1", "1.5", "ten", "", "0x10", "1e3"])
def test_numbers_must_be_whole_decimal_numbers(text):
    with pytest.raises(ParameterError, match="log.DEALLCT"):
        ZosLogConfig.from_settings({"DEALLCT": text})


def test_deallct_nolimit_is_1440():
    assert ZosLogConfig.from_settings({"deallct": "nolimit"}).deallct == 1440


def test_dual_logging_covers_4_to_620_data_sets():
    assert ZosLogConfig(active_logs=2).active_data_sets == 4
    assert ZosLogConfig(active_logs=310).active_data_sets == 620
    assert ZosLogConfig(active_logs=310, twoactv=False).active_data_sets == 310


# ------------------------------------------------------------------ YES/NO and choices

SWITCHES = ["TWOACTV", "TWOARCH", "TWOBSDS", "OFFLOAD", "ZSTD_IN_ANY", "RBA8"]


@pytest.mark.parametrize("name", SWITCHES)
@pytest.mark.parametrize(("text", "value"), [("YES", True), ("no", False), (" Yes ", True), ("NO", False)])
def test_switches_read_yes_and_no_in_any_case(name, text, value):
    c = ZosLogConfig.from_settings({name: text})
    assert getattr(c, name.lower()) is value
    assert c.to_settings()[name] == ("YES" if value else "NO")


@pytest.mark.parametrize("text", ["Y", "true", "1", "", "ON"])
def test_switches_refuse_anything_but_yes_or_no(text):
    with pytest.raises(ParameterError, match="log.TWOACTV.*YES or NO"):
        ZosLogConfig.from_settings({"TWOACTV": text})


def test_complog_choices_in_any_case_and_others_refused():
    assert ZosLogConfig.from_settings({"complog": "rle"}).complog == "RLE"
    assert ZosLogConfig.from_settings({"COMPLOG": "Any"}).complog == "ANY"
    with pytest.raises(ParameterError, match="log.COMPLOG.*NONE, RLE, ANY"):
        ZosLogConfig.from_settings({"COMPLOG": "ZSTD"})


# ------------------------------------------------------------------ archive prefixes


@pytest.mark.parametrize("prefix", ["A", "CSQARC1", "#@$-9ABC", "MQ.QM1.ARCLOG1",
                                    "A1234567.B1234567.C1234567.D1234567"])
def test_archive_prefixes_accepted(prefix):
    assert len(prefix) <= 35
    assert ZosLogConfig.from_settings({"ARCPFX1": prefix}).arcpfx1 == prefix


@pytest.mark.parametrize("prefix", [
    "", "1CSQ", "CSQARC123", "MQ..ARC", "MQ.ARC.", ".MQ", "MQ ARC", "MQ_ARC", "-MQ",
    "A1234567.B1234567.C1234567.D12345.EF",  # 36 characters
])
def test_archive_prefixes_refused(prefix):
    assert len(prefix) != 35
    with pytest.raises(ParameterError, match="log.ARCPFX1.*up to 35 characters"):
        ZosLogConfig.from_settings({"ARCPFX1": prefix})


def test_archive_prefix_is_upper_cased():
    assert ZosLogConfig.from_settings({"ARCPFX2": "mq.arc2"}).arcpfx2 == "MQ.ARC2"


def test_dual_archives_need_two_prefixes_single_does_not():
    with pytest.raises(ParameterError, match="log.ARCPFX2.*other than ARCPFX1"):
        ZosLogConfig.from_settings({"ARCPFX2": "CSQARC1"})
    c = ZosLogConfig.from_settings({"ARCPFX2": "CSQARC1", "TWOARCH": "NO"})
    assert c.arcpfx2 == "CSQARC1"


# ------------------------------------------------------------------ STARTRBA


@pytest.mark.parametrize(("text", "value"), [
    ("0x00000000F000", 0xF000), ("0XF000", 0xF000), ("X'F000'", 0xF000), ("x'f000'", 0xF000),
    ("61440", 0xF000), ("0", 0),
])
def test_startrba_in_hex_or_decimal(text, value):
    assert ZosLogConfig.from_settings({"STARTRBA": text}).startrba == value


@pytest.mark.parametrize("text", ["0x1001", "4095", "0xF00", "0x", "F000", "X'F00G'", "-4096"])
def test_startrba_must_be_a_multiple_of_4096(text):
    with pytest.raises(ParameterError, match="log.STARTRBA.*multiple of 4096"):
        ZosLogConfig.from_settings({"STARTRBA": text})


@pytest.mark.parametrize(("rba8", "termination"), [("YES", RBA8_TERMINATION), ("NO", RBA6_TERMINATION)])
def test_startrba_must_lie_below_the_termination_rba_of_its_mode(rba8, termination):
    highest = termination - 4096
    c = ZosLogConfig.from_settings({"RBA8": rba8, "STARTRBA": hex(highest)})
    assert c.startrba == highest
    assert c.rba_headroom_bytes == 4096
    with pytest.raises(ParameterError) as info:
        ZosLogConfig.from_settings({"RBA8": rba8, "STARTRBA": hex(termination)})
    assert info.value.name == "log.STARTRBA"
    assert f"to 0x{highest:X}" in str(info.value)


def test_a_6_byte_log_refuses_an_8_byte_start():
    with pytest.raises(ParameterError, match="6-byte RBA"):
        ZosLogConfig.from_settings({"RBA8": "NO", "STARTRBA": "0x1000000000000"})
    assert ZosLogConfig.from_settings({"STARTRBA": "0x1000000000000"}).startrba == 1 << 48


def test_startrba_is_written_with_the_width_of_its_mode():
    assert ZosLogConfig(rba8=False, startrba=0xF000).to_settings()["STARTRBA"] == "0x00000000F000"
    assert ZosLogConfig(startrba=0xF000).to_settings()["STARTRBA"] == "0x000000000000F000"


# ------------------------------------------------------------------ RBA thresholds

THRESHOLDS = [
    (True, RBA8_WARNING, RbaThreshold.WARNING),
    (True, RBA8_TERMINATION, RbaThreshold.TERMINATION),
    (True, RBA8_END, RbaThreshold.END_OF_RANGE),
    (False, RBA6_WARNING, RbaThreshold.WARNING),
    (False, RBA6_TERMINATION, RbaThreshold.TERMINATION),
    (False, RBA6_END, RbaThreshold.END_OF_RANGE),
]


def test_threshold_values_are_ibms():
    assert (RBA6_WARNING, RBA6_TERMINATION, RBA6_END) == (
        0xF00000000000, 0xFFF800000000, 0xFFFFFFFFFFFF)
    assert (RBA8_WARNING, RBA8_TERMINATION, RBA8_END) == (
        0xFFFF800000000000, 0xFFFFFFC000000000, 0xFFFFFFFFFFFFFFFF)


@pytest.mark.parametrize(("rba8", "at", "reached"), THRESHOLDS)
def test_threshold_reached_at_not_just_below(rba8, at, reached):
    assert rba_threshold(at, rba8=rba8) is reached
    assert rba_threshold(at - 1, rba8=rba8) is RbaThreshold(reached - 1)
    assert ZosLogConfig(rba8=rba8).rba_threshold(at) is reached


@pytest.mark.parametrize(("rba8", "at", "reached"), THRESHOLDS[:2] + THRESHOLDS[3:5])
def test_threshold_still_reached_just_above(rba8, at, reached):
    assert rba_threshold(at + 1, rba8=rba8) is reached


@pytest.mark.parametrize(("rba8", "end"), [(True, RBA8_END), (False, RBA6_END)])
def test_beyond_the_end_of_range_is_not_an_rba(rba8, end):
    assert rba_threshold(0, rba8=rba8) is RbaThreshold.NONE
    with pytest.raises(ParameterError, match="RBA"):
        rba_threshold(end + 1, rba8=rba8)
    with pytest.raises(ParameterError):
        rba_threshold(-1, rba8=rba8)


def test_an_8_byte_address_far_past_the_6_byte_limits_is_not_even_a_warning():
    assert rba_threshold(RBA6_END + 1, rba8=True) is RbaThreshold.NONE


# ------------------------------------------------------------------ names


def test_names_in_any_case_with_or_without_the_log_prefix():
    c = ZosLogConfig.from_settings({"log.wrthrsh": "5", "MaxArch": "20", "LOG.LOGLOAD": "1000"})
    assert (c.wrthrsh, c.maxarch, c.logload) == (5, 20, 1000)


def test_unknown_name_is_named_and_the_valid_ones_listed():
    with pytest.raises(ParameterError) as info:
        ZosLogConfig.from_settings({"LogPrimaryFiles": "3"})
    message = str(info.value)
    assert "log.LogPrimaryFiles" in message
    for p in PARAMETERS:
        assert p.name in message


def test_a_name_given_twice_is_refused():
    with pytest.raises(ParameterError, match="log.WRTHRSH.*once"):
        ZosLogConfig.from_settings({"WRTHRSH": "5", "log.wrthrsh": "6"})


def test_from_settings_applies_to_a_base():
    base = ZosLogConfig(twoactv=False)
    assert ZosLogConfig.from_settings({"WRTHRSH": "5"}, base=base).twoactv is False


# ------------------------------------------------------------------ round trip


@pytest.mark.parametrize("settings", [
    {},
    {"TWOACTV": "NO", "OFFLOAD": "NO", "COMPLOG": "ANY", "ZSTD_IN_ANY": "YES", "RBA8": "NO",
     "STARTRBA": "0xFFF7FFFFF000", "ACTIVE_LOGS": "310", "ACTIVE_LOG_CIS": "16",
     "ARCPFX1": "MQ.QM1.ARC1", "ARCPFX2": "MQ.QM1.ARC2", "DEALLCT": "NOLIMIT"},
])
def test_from_settings_of_to_settings_is_the_same_config(settings):
    c = ZosLogConfig.from_settings(settings)
    assert ZosLogConfig.from_settings(c.to_settings()) == c
    assert ZosLogConfig.from_settings({k: str(v) for k, v in c.to_settings().items()}) == c


def test_configure_and_describe_for_the_command_line():
    values = configure({"log.TWOACTV": "NO", "WRTHRSH": "5"})
    assert values["TWOACTV"] == "NO" and values["WRTHRSH"] == 5
    rows, derived = describe(values)
    by_name = {r.name: r for r in rows}
    assert [r.name for r in rows] == [p.name for p in PARAMETERS]
    assert by_name["TWOACTV"].value == "NO" and by_name["TWOACTV"].default == "YES"
    assert by_name["OUTBUFF"].allowed == "40 to 4000 KB"
    assert by_name["ZSTD_IN_ANY"].meaning.startswith("model only, not real z/OS")
    assert derived["bytes_written_per_ci"]["bytes"] == 4096
    assert derived["archived_bytes_limit"]["count"] == 500
    assert all({"bytes", "text"} <= set(item) for item in derived.values())
    assert describe(ZosLogConfig.from_settings(values)) == (rows, derived)


# ------------------------------------------------------------------ SET LOG / SET SYSTEM


def test_set_log_changes_what_ibm_allows():
    c = ZosLogConfig().set_log(WRTHRSH=5, maxarch="20", COMPLOG="rle", MAXRTU=99, DEALLCT="NOLIMIT")
    assert (c.wrthrsh, c.maxarch, c.complog, c.maxrtu, c.deallct) == (5, 20, "RLE", 99, 1440)


def test_set_log_returns_a_new_config():
    c = ZosLogConfig()
    c.set_log(WRTHRSH=5)
    assert c.wrthrsh == 20


def test_set_log_checks_the_range():
    with pytest.raises(ParameterError, match="WRTHRSH.*1 to 256"):
        ZosLogConfig().set_log(WRTHRSH=257)


@pytest.mark.parametrize(("name", "value", "where"), [
    ("TWOACTV", "NO", "CSQ6LOGP"), ("OFFLOAD", "NO", "CSQ6LOGP"), ("OUTBUFF", 400, "CSQ6LOGP"),
    ("INBUFF", 28, "CSQ6LOGP"), ("ARCPFX1", "X", "CSQ6ARVP"), ("LOGLOAD", 1000, "SET SYSTEM"),
    ("ACTIVE_LOGS", 4, "log.ACTIVE_LOGS"), ("ZSTD_IN_ANY", "YES", "log.ZSTD_IN_ANY"),
])
def test_set_log_refuses_the_others_saying_where_they_are_set(name, value, where):
    with pytest.raises(NotChangeableError) as info:
        ZosLogConfig().set_log(**{name: value})
    assert info.value.name == name
    assert "SET LOG" in str(info.value) and where in str(info.value)


def test_set_system_changes_logload_only():
    assert ZosLogConfig().set_system(LOGLOAD=200).logload == 200
    with pytest.raises(ParameterError, match="200 to 16000000"):
        ZosLogConfig().set_system(LOGLOAD=199)
    with pytest.raises(NotChangeableError, match="WRTHRSH cannot be changed with SET SYSTEM"):
        ZosLogConfig().set_system(WRTHRSH=5)


# ------------------------------------------------------------------ files

MACROS = """\
*  CSQ4ZPRM: system parameters for QM1
         CSQ6SYSP CTHREAD=300,IDBACK=20,                                       X
               LOGLOAD=100000,                                         X
               SMFSTAT=NO
         CSQ6LOGP INBUFF=60,       input buffer                               X
               OUTBUFF=400,                                            X
               MAXRTU=2,MAXCNOFF=31,                                   X
               TWOACTV=NO,COMPLOG=RLE,                                 X
               WRTHRSH=25
         CSQ6ARVP ALCUNIT=BLK,ARCPFX1=MQ.ARC1,                         X
               ARCPFX2=MQ.ARC2,ARCWRTC=(1,3,4)
         END
"""


def _write(tmp_path, text):
    path = tmp_path / "params"
    path.write_text(text)
    return path


def test_macro_text_is_read_with_continuations_and_other_keywords_ignored(tmp_path):
    c = ZosLogConfig.from_file(_write(tmp_path, MACROS))
    assert (c.logload, c.inbuff, c.outbuff, c.twoactv, c.complog, c.wrthrsh) == (
        100_000, 60, 400, False, "RLE", 25)
    assert (c.arcpfx1, c.arcpfx2) == ("MQ.ARC1", "MQ.ARC2")
    assert c.active_logs == 3  # the model's own parameters keep their defaults


def test_macro_unknown_csq6logp_keyword_names_the_line(tmp_path):
    text = "         CSQ6LOGP WRTHSH=5\n"
    with pytest.raises(ZosConfigFileError, match=r"line 1: unknown CSQ6LOGP keyword 'WRTHSH'"):
        ZosLogConfig.from_file(_write(tmp_path, text))


def test_macro_keyword_in_the_wrong_macro(tmp_path):
    text = "         CSQ6LOGP LOGLOAD=1000\n"
    with pytest.raises(ZosConfigFileError, match="LOGLOAD belongs in CSQ6SYSP"):
        ZosLogConfig.from_file(_write(tmp_path, text))


def test_macro_bad_value_names_the_line_and_parameter(tmp_path):
    text = "* comment\n         CSQ6LOGP INBUFF=60,                                                X\n" \
           "               OUTBUFF=39\n"
    with pytest.raises(ZosConfigFileValueError) as info:
        ZosLogConfig.from_file(_write(tmp_path, text))
    assert info.value.line == 2 and info.value.name == "OUTBUFF"
    assert "40 to 4000 KB" in str(info.value)


def test_name_value_file(tmp_path):
    text = "# test system\n\nTWOACTV=NO\nlog.active_logs = 4\nSTARTRBA=0x0000F000\n"
    c = ZosLogConfig.from_file(_write(tmp_path, text))
    assert (c.twoactv, c.active_logs, c.startrba) == (False, 4, 0xF000)


@pytest.mark.parametrize(("text", "line", "match"), [
    ("WRTHRSH=5\nWRTHRSH=6\n", 2, "given twice"),
    ("WRTHRSH 5\n", 1, "expected NAME=VALUE"),
    ("\nNOSUCH=1\n", 2, "log.NOSUCH"),
    ("OFFLOAD=maybe\n", 1, "YES or NO"),
])
def test_name_value_file_errors_name_the_line(tmp_path, text, line, match):
    with pytest.raises(ZosConfigFileError, match=match) as info:
        ZosLogConfig.from_file(_write(tmp_path, text))
    assert info.value.line == line


def test_every_error_is_an_mqlog_error():
    for bad in ({"TWOACTV": "x"}, {"nope": "1"}, {"STARTRBA": "1"}):
        with pytest.raises(MqlogError):
            ZosLogConfig.from_settings(bad)
