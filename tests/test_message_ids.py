"""Message ids in MQ's own form (issue 22): every z/OS console id is CSQ, a component letter, three
digits and its severity letter; every distributed id is AMQ, four digits and its severity
letter (IBM MQ on Multiplatforms: I, W, E, S or T). The stderr echo of a run's warnings,
which goes by that letter, is driven through the command line."""

from __future__ import annotations

import re

import pytest

from mqlog.core.messages import REFERENCE_MESSAGES
from mqlog.distributed.messages import MESSAGES as DISTRIBUTED
from mqlog.zos.messages import MESSAGES as ZOS
from clikit import mqlog

#: AMQ ids written without their letter: IBM's severity for each could not be confirmed from
#: the message reference (the model's docs lookups found the texts, not the severities), and a
#: letter is not guessed. The set is exact, so that one given its letter leaves it here.
UNVERIFIED = {"AMQ6708", "AMQ6767", "AMQ7463", "AMQ7465", "AMQ7466", "AMQ7469", "AMQ7472"}


def _ids(table) -> set[str]:
    return {message.id for lines in table.values() for message in lines if message.id}


@pytest.mark.parametrize("table, pattern", [
    (ZOS, r"CSQ[A-Z0-9]\d{3}[IWEAD]"),
    (DISTRIBUTED, r"AMQ\d{4}[IWEST]"),
])
def test_every_console_id_has_the_platforms_form_and_its_severity_letter(table, pattern):
    ids = _ids(table)
    assert ids
    wrong = {i for i in ids if not re.fullmatch(pattern, i)}
    if table is DISTRIBUTED:
        assert wrong == UNVERIFIED and all(re.fullmatch(r"AMQ\d{4}", i) for i in wrong)
    else:
        assert not wrong, wrong
    assert not _ids(REFERENCE_MESSAGES)  # the reference platform's notes carry no MQ id


def test_a_zos_log_full_run_echoes_its_suffixed_action_message_on_stderr_and_no_informational_one():
    # The active logs fill only when the putters log faster than offload empties them: since
    # issue 38 (120-byte commit records, the queue lock held for a whole MQPUT) two pairs log
    # about 27 MB a virtual second, which offload keeps up with (main's 40 MB/s filled them),
    # so the fewest pairs that fill them is searched for (3 now) and must be found.
    for pairs in (2, 3, 4, 6, 8):
        out = mqlog("run", "--platform", "zos", "--workload", "putget-pairs", "--set", "log.ACTIVE_LOGS=2",
                    "--set", "log.ACTIVE_LOG_CIS=16", "--set", f"workload.pairs={pairs}",
                    "--set", "workload.messages_per_pair=200")
        assert out.returncode == 0, out.stderr
        echoed = out.stderr.splitlines()
        if any(re.fullmatch(r"CSQJ111A CSQ1 OUT OF SPACE IN ACTIVE LOG DATA SETS(  \[\d+ times\])?", line)
               for line in echoed):
            break
    else:
        pytest.fail(f"no run of 2 to 8 pairs filled the active logs: {echoed}")
    assert not [line for line in echoed if re.match(r"CSQ\w\d{3}I ", line)]
