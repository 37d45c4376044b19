"""Console message tables: every event the core (and each platform's own log space) reports is
known to each platform's table – written or deliberately silent – and the tables lay out
their lines as the platforms' consoles do."""

from __future__ import annotations

import re
from pathlib import Path

import attrs
import pytest
from mqlog.core.messages import REFERENCE_MESSAGES, Message, MessageTable
from mqlog.core.reference import reference_console
from mqlog.core.format.records import NO_ADDRESS
from mqlog.distributed.messages import MESSAGES as DISTRIBUTED_MESSAGES
from mqlog.distributed.messages import console as distributed_console
from mqlog.zos.messages import MESSAGES as ZOS_MESSAGES
from mqlog.zos.messages import console as zos_console
from mqlog.zos.platform import rba_addressing

ROOT = Path(__file__).resolve().parent.parent
_SAID = re.compile(r"""\bsay\(\s*["']([A-Za-z0-9-]+)["']""")
_SPACE_EVENT = re.compile(r"""events\.append\(\(\s*["']([A-Za-z0-9-]+)["']""")


def events_in(directory: str, pattern: re.Pattern) -> set[str]:
    found = set()
    for path in (ROOT / directory).rglob("*.py"):
        found.update(pattern.findall(path.read_text(encoding="utf-8")))
    return found


CORE_EVENTS = events_in("core", _SAID)


def test_the_core_reports_events_at_all():
    # the grep below only means something if it finds what the core says
    assert {"restart-begin", "replay-complete", "checkpoint", "log-full"} <= CORE_EVENTS


@pytest.mark.parametrize("table, own", [
    (REFERENCE_MESSAGES, set()),
    (DISTRIBUTED_MESSAGES, events_in("distributed", _SPACE_EVENT) | events_in("distributed", _SAID)),
    (ZOS_MESSAGES, events_in("zos", _SPACE_EVENT) | events_in("zos", _SAID)),
], ids=["reference", "distributed", "zos"])
def test_each_table_knows_every_event_the_core_and_its_platform_report(table, own):
    missing = (CORE_EVENTS | own) - set(table)
    assert not missing, f"events with no entry (add their lines, or () for silence): {sorted(missing)}"


@pytest.mark.parametrize("console", [reference_console, distributed_console("QM1"),
                                     zos_console("CSQ1", rba_addressing(True))],
                         ids=["reference", "distributed", "zos"])
def test_an_unknown_or_silent_event_gives_no_message(console):
    assert console("no-such-event", {}) is None
    assert console("checkpoint", {"number": 1, "reason": "records", "address": 0}) is None


@pytest.mark.parametrize("table", [DISTRIBUTED_MESSAGES, ZOS_MESSAGES], ids=["distributed", "zos"])
def test_message_ids_look_like_the_platforms(table):
    # (a z/OS component may be a digit: CSQ3 subsystem support, CSQ9 the command preprocessor)
    pattern = r"AMQ\d{4}[A-Z]?" if table is DISTRIBUTED_MESSAGES else r"CSQ[A-Z0-9]\d{3}[A-Z]"
    for event, lines in table.items():
        for line in lines:
            assert line.id == "" or re.fullmatch(pattern, line.id), (event, line.id)


def test_zos_lines_carry_id_and_queue_manager_and_rbas_in_the_modes_width():
    six = zos_console("CSQ2", rba_addressing(False))
    assert six("restart-begin", {"checkpoint": 0x1000}) == (
        "CSQR001I CSQ2 RESTART INITIATED\nCSQR003I CSQ2 RESTART - PRIOR CHECKPOINT RBA=000000001000")
    assert six("restart-begin", {"checkpoint": NO_ADDRESS}) == "CSQR001I CSQ2 RESTART INITIATED"


def test_zos_long_uow_says_offloads_or_switches_as_archiving_is_on_or_off():
    # (as the core reports it: a unit's event carries ``begin``, its Begin record's address)
    fields = {"uow": 0xA, "begin": 0x2000, "application": "APP", "checkpoints": 4, "first": 0, "times": 2}
    on = zos_console("CSQ1", rba_addressing(True), offload=True)("long-uow-at-switch", fields)
    off = zos_console("CSQ1", rba_addressing(True), offload=False)("long-uow-at-switch", fields)
    assert "AFTER 2 OFFLOADS" in on and "AFTER 2 ACTIVE LOG SWITCHES" in off


@attrs.frozen
class _End:
    reason: str
    problem: str = ""


def test_distributed_replay_message_says_when_the_log_ends_at_a_torn_page():
    console = distributed_console("QM1")
    clean = console("replay-complete", {"records": 5, "end": _End("end")})
    torn = console("replay-complete", {"records": 5, "end": _End("torn", "bad checksum")})
    assert clean.splitlines()[1] == "AMQ7230I: Log replay for queue manager 'QM1' complete."
    assert torn.splitlines()[1].endswith("The log ends at a damaged or torn page: bad checksum.")


def test_a_table_uses_its_values_specs_and_lines_when_they_apply():
    table = MessageTable({"e": (Message("X1", "{n:hex} for {who}"),
                                Message("", "only if big", when=lambda f: f["n"] > 9),
                                Message("X2", "{m}", extra=lambda f: {"m": f["n"] * 2}))},
                         layout="<{id}|{who}> {text}", values={"who": "me"}, specs={"hex": hex})
    assert table("e", {"n": 3}) == "<X1|me> 0x3 for me\n<X2|me> 6"
    assert table("e", {"n": 10}) == "<X1|me> 0xa for me\nonly if big\n<X2|me> 20"


def test_a_console_line_made_once_is_made_again_for_a_value_that_prints_differently():
    """A console keeps the lines it has made (a full log says the same ones at every
    checkpoint), by event and fields – and each field's type: 1, 1.0 and True are equal as
    keys but print differently; a field that cannot be a key (a list) is made every time."""
    from mqlog.core.messages import Message, MessageTable

    table = MessageTable({"e": (Message("X1", "{n} bytes"),)})
    assert [table("e", {"n": v}) for v in (1, 1.0, True, 1, [1], [1])] == [
        "X1 1 bytes", "X1 1.0 bytes", "X1 True bytes", "X1 1 bytes", "X1 [1] bytes", "X1 [1] bytes"]
    assert table("e", {"n": 2}) == "X1 2 bytes" and table("f", {"n": 1}) is None
