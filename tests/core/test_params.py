"""The parameter framework: definitions, reading values from text, the attrs field, lookups."""

from __future__ import annotations

import attrs
import pytest
from mqlog.core.errors import ParameterError, UnknownParameterError
from mqlog.core.params import (
    Choice,
    Number,
    Parameter,
    ParameterSet,
    Switch,
    Text,
    field,
    human_bytes,
)

PAGES = Parameter("BufferPages", 0, Number(18, 4096, special=(0,), unit="pages"),
                  "buffer size", "Log", attribute="buffer_pages")
TYPE = Parameter("LogType", "CIRCULAR", Choice(("CIRCULAR", "LINEAR")), "the log's type", "Log",
                 attribute="log_type")
PATH = Parameter("LogPath", "/var/log", Text("a path"), "where", "Log", aliases=("LogDefaultPath",),
                 attribute="log_path")
DUAL = Parameter("DUAL", True, Switch(), "two copies", "MACRO", command="SET X",
                 takes_effect="immediately")
LIMIT = Parameter("LIMIT", 0, Number(0, 1440, words=(("NOLIMIT", 1440),)), "minutes", "MACRO")
SET = ParameterSet((PAGES, TYPE, PATH, DUAL, LIMIT), "a parameter of the test")


@attrs.frozen
class Config:
    buffer_pages: int = field(PAGES)
    log_type: str = field(TYPE)
    log_path: str = field(PATH)


def test_a_value_out_of_range_names_the_parameter_the_value_and_the_range():
    with pytest.raises(ParameterError) as caught:
        PAGES.parse("17")
    assert (caught.value.name, caught.value.value) == ("BufferPages", 17)
    assert "BufferPages=17" in str(caught.value)
    assert "0 or 18 to 4096 pages" in str(caught.value)
    assert PAGES.parse(" 4096 ") == 4096
    assert PAGES.parse("0") == 0  # a special value outside the range


def test_text_that_is_no_number_says_a_whole_number_is_wanted():
    with pytest.raises(ParameterError, match=r"BufferPages='12x' .*a whole number: 0 or 18 to 4096"):
        PAGES.parse("12x")
    with pytest.raises(ParameterError, match="a whole number"):
        PAGES.parse("9" * 30)  # too many digits to be a number at all
    with pytest.raises(ParameterError):
        PAGES.parse(True)  # a bool is not a number


def test_an_error_can_name_the_parameter_as_the_user_wrote_it():
    with pytest.raises(ParameterError) as caught:
        PAGES.parse("5000", name="log.BufferPages")
    assert caught.value.name == "log.BufferPages"


def test_long_bad_text_is_quoted_as_a_prefix():
    with pytest.raises(ParameterError) as caught:
        TYPE.parse("x" * 100)
    assert caught.value.value == "x" * 40 + "..."


def test_words_stand_for_numbers():
    assert LIMIT.parse("nolimit") == 1440
    assert "0 to 1440 (or NOLIMIT = 1440)" in LIMIT.allowed


def test_choice_values_are_read_in_any_case_and_kept_in_their_spelling():
    assert TYPE.parse("linear") == "LINEAR"
    assert TYPE.parse(" Circular ") == "CIRCULAR"
    assert Config(log_type="lInEaR").log_type == "LINEAR"
    with pytest.raises(ParameterError, match=r"one of CIRCULAR, LINEAR \(any case\)"):
        TYPE.parse("ring")


def test_switches_are_yes_or_no_in_any_case():
    assert DUAL.parse("yes") is True and DUAL.parse("No") is False
    assert DUAL.written(False) == "NO"
    with pytest.raises(ParameterError, match="YES or NO"):
        DUAL.parse("1")
    with pytest.raises(ParameterError):
        DUAL.parse(1)  # an int is not a switch


def test_text_must_be_one_line_without_blanks_around_it():
    assert PATH.parse("  /a b/c ") == "/a b/c"
    for bad in ("", "   ", "a\nb"):
        with pytest.raises(ParameterError, match="a path"):
            PATH.parse(bad)


def test_the_field_factory_refuses_a_bad_value_at_construction_and_evolve():
    assert Config().buffer_pages == 0
    with pytest.raises(ParameterError, match="BufferPages"):
        Config(buffer_pages=5)
    with pytest.raises(ParameterError, match="LogPath"):
        attrs.evolve(Config(), log_path=" x")
    assert attrs.fields(Config).buffer_pages.metadata["parameter"] is PAGES


def test_lookup_takes_names_and_aliases_in_any_case_with_or_without_the_prefix():
    assert SET.lookup("log.logdefaultpath", "x") is PATH
    assert SET.lookup("LOGTYPE", "x") is TYPE
    assert SET.get("dual") is DUAL
    with pytest.raises(ParameterError) as caught:
        SET.lookup("log.Nonsense", "3")
    assert caught.value.name == "log.Nonsense"
    assert isinstance(caught.value, UnknownParameterError)  # a wrong name, not a bad value
    assert str(caught.value).endswith(f"not a parameter of the test; known: {SET.known}")
    assert caught.value.allowed == f"a parameter of the test: {SET.known}"
    with pytest.raises(UnknownParameterError, match=r"did you mean LogType or LogPath\?"):
        SET.lookup("log.LogTyp", "3")


def test_choose_parses_set_items_and_refuses_a_parameter_given_twice():
    assert SET.choose({"log.BufferPages": "64", "LogDefaultPath": "/x"}) == {
        "buffer_pages": 64, "log_path": "/x"}
    with pytest.raises(ParameterError, match=r"log\.BufferPages=4097"):
        SET.choose({"bufferpages": "4097"})
    with pytest.raises(ParameterError, match="log.LogPath.*set once"):
        SET.choose({"LogPath": "/a", "logdefaultpath": "/b"})


def test_rows_describe_value_default_range_and_where_a_command_changes_it():
    rows = SET.rows({"buffer_pages": 64, "log_type": "LINEAR", "log_path": "/p", "dual": False,
                     "limit": 3})
    assert [r.name for r in rows] == ["BufferPages", "LogType", "LogPath", "DUAL", "LIMIT"]
    dual = rows[3]
    assert (dual.value, dual.default) == ("NO", "YES")
    assert dual.meaning == "two copies; SET X, immediately"
    assert rows[0].meaning == "buffer size"


@pytest.mark.parametrize("n, text", [(0, "0 bytes"), (1023, "1023 bytes"), (1024, "1 KiB"),
                                     (1536, "1.5 KiB"), (3 << 30, "3 GiB"), (5 << 40, "5 TiB"),
                                     (1 << 60, "1 EiB")])
def test_human_bytes(n, text):
    assert human_bytes(n) == text
