"""The z/OS log's parameters: CSQ6LOGP, CSQ6SYSP and CSQ6ARVP keywords (and the model's own
settings), each with its default, range, meaning, where it is set and what kind of value it
takes; :mod:`mqlog.zos.config` builds and checks a configuration from them.
"""

from __future__ import annotations

import re
from typing import Any

import attrs

from mqlog.core.params import Choice, Kind, Number, Parameter, ParameterSet, Switch
from mqlog.zos.rba import RbaAddress

#: IBM's KB in OUTBUFF and INBUFF.
KB = 1024

# ------------------------------------------------------------------------ parameters

CSQ6LOGP = "CSQ6LOGP"
CSQ6SYSP = "CSQ6SYSP"
CSQ6ARVP = "CSQ6ARVP"
MODEL = "model"
SET_LOG = "SET LOG"
SET_SYSTEM = "SET SYSTEM"
DEFINE_BUFFPOOL = "DEFINE BUFFPOOL"

NONE, RLE, ANY = "NONE", "RLE", "ANY"
ZSTD = "ZSTD"

#: One data set name qualifier: a letter or national character, then up to 7 of those,
#: digits or hyphens (z/OS data set naming rules).
_QUALIFIER = r"[A-Z@#$][A-Z0-9@#$-]{0,7}"
_PREFIX = re.compile(rf"{_QUALIFIER}(?:\.{_QUALIFIER})*")
#: ARCPFXn: the archive name adds its own qualifiers after it, so IBM allows 35 characters.
PREFIX_MAX_CHARS = 35
#: DEALLCT(NOLIMIT) is the same as the top of its range.
DEALLCT_NOLIMIT = 1440


@attrs.frozen
class Keyword(Choice):
    """One of IBM's keyword values: read in any case, upper-cased before it is judged."""

    any_case_note: bool = False

    def canonical(self, value: Any) -> Any:
        return value.strip().upper() if isinstance(value, str) else value


@attrs.frozen
class DataSetPrefix(Kind):
    """A data set name prefix (ARCPFXn): dotted qualifiers, upper-cased, at most 35 characters."""

    def allowed(self) -> str:
        return (f"up to {PREFIX_MAX_CHARS} characters of dotted qualifiers "
                f"(1-8 of A-Z 0-9 @ # $ -, not starting with a digit or -)")

    def canonical(self, value: Any) -> Any:
        return value.strip().upper() if isinstance(value, str) else value

    def ok(self, value: Any) -> bool:
        return (isinstance(value, str) and len(value) <= PREFIX_MAX_CHARS
                and _PREFIX.fullmatch(value) is not None)


#: an MQ queue name: 1-48 of A-Z a-z 0-9 . / _ %
_QUEUE_NAME = re.compile(r"[A-Za-z0-9./_%]{1,48}")


@attrs.frozen
class QueueNames(Kind):
    """NONE, or MQ queue names separated by commas (SHARED_QUEUES)."""

    def allowed(self) -> str:
        return "NONE, or queue names separated by commas (1-48 characters each of A-Z a-z 0-9 . / _ %)"

    def from_text(self, text: str) -> str:
        text = text.strip()
        return NONE if text.upper() == NONE else ",".join(name.strip() for name in text.split(","))

    def ok(self, value: Any) -> bool:
        return isinstance(value, str) and (value == NONE or all(
            _QUEUE_NAME.fullmatch(name) for name in value.split(",")))


def _number(low: int, high: int, **more: Any) -> Number:
    # z/OS says only the range for text that is no number ("a whole number" is implied)
    return Number(low, high, not_a_number="{allowed}", **more)


def _parameter(name: str, default: Any, meaning: str, where: str, kind: Kind,
               command: str | None = None, takes_effect: str = "") -> Parameter:
    return Parameter(name, default, kind, meaning, where, command=command,
                     takes_effect=takes_effect)


TWOACTV = _parameter("TWOACTV", True, "dual active logs: every CI is written to copy 1 and copy 2",
                     CSQ6LOGP, Switch())
TWOARCH = _parameter("TWOARCH", True, "dual archive data sets (ARCPFX1 and ARCPFX2)", CSQ6LOGP,
                     Switch())
TWOBSDS = _parameter("TWOBSDS", True, "dual bootstrap data sets", CSQ6LOGP, Switch())
OFFLOAD = _parameter("OFFLOAD", True,
                     "archiving on; NO (test systems only) lets the log wrap and overwrite",
                     CSQ6LOGP, Switch())
MAXARCH = _parameter("MAXARCH", 500, "archive data sets recorded in the BSDS", CSQ6LOGP,
                     _number(10, 1000), command=SET_LOG, takes_effect="at the next offload")
# IBM ("Using CSQ6LOGP", https://www.ibm.com/support/knowledgecenter/SSFKSJ_8.0.0/com.ibm.mq.con.doc/q019310_.htm):
# "Maximum number of CSQJOFF7 offload tasks that can be run in parallel", default 31. The range
# is not in what was found of IBM's pages: the model takes 1 to the default (an assumption).
MAXCNOFF = _parameter("MAXCNOFF", 31, "offload tasks that may run at once (the rest wait their turn)",
                      CSQ6LOGP, _number(1, 31))
OUTBUFF = _parameter("OUTBUFF", 4000, "output buffer, used in whole 4 KiB CIs", CSQ6LOGP,
                     _number(40, 4000, unit="KB"))
INBUFF = _parameter("INBUFF", 60, "input buffer for reading active and archive logs (an offload "
                    "reads its data set in requests of this size, in whole CIs)",
                    CSQ6LOGP, _number(28, 60, unit="KB"))
WRTHRSH = _parameter("WRTHRSH", 20, "full output buffer CIs that start a write nobody forced",
                     CSQ6LOGP, _number(1, 256), command=SET_LOG, takes_effect="immediately")
MAXRTU = _parameter("MAXRTU", 2, "tape units for reading archives (accepted, not modelled)",
                    CSQ6LOGP, _number(1, 99), command=SET_LOG, takes_effect="immediately")
DEALLCT = _parameter("DEALLCT", 0, "minutes an unused archive tape unit stays allocated "
                     "(accepted, not modelled)", CSQ6LOGP,
                     _number(0, DEALLCT_NOLIMIT, words=(("NOLIMIT", DEALLCT_NOLIMIT),)),
                     command=SET_LOG, takes_effect="immediately")
COMPLOG = _parameter("COMPLOG", NONE, "compression of persistent message data on private queues",
                     CSQ6LOGP, Keyword((NONE, RLE, ANY)), command=SET_LOG,
                     takes_effect="for records written from now on")
ZSTD_IN_ANY = _parameter("ZSTD_IN_ANY", False,
                         "model only, not real z/OS: COMPLOG(ANY) may also choose zstd",
                         MODEL, Switch())
SHARED_QUEUES = _parameter("SHARED_QUEUES", NONE,
                           "model only: queues defined QSGDISP(SHARED) in a queue-sharing group of "
                           "this queue manager alone (kept in a CF structure, never compressed)",
                           MODEL, QueueNames())
BUFFERS = _parameter("BUFFERS", 1000,
                     "4 KB buffers of the buffer pool the queues' page set uses (DEFINE BUFFPOOL): "
                     "a queue's persistent messages stay in it until it is 85% full, then go to the page set",
                     DEFINE_BUFFPOOL, _number(100, 999_999_999))
LOGLOAD = _parameter("LOGLOAD", 500_000, "log records between checkpoints", CSQ6SYSP,
                     _number(200, 16_000_000), command=SET_SYSTEM,
                     takes_effect="from the next checkpoint")
ARCPFX1 = _parameter("ARCPFX1", "CSQARC1", "name prefix of archive copy 1", CSQ6ARVP,
                     DataSetPrefix())
ARCPFX2 = _parameter("ARCPFX2", "CSQARC2", "name prefix of archive copy 2", CSQ6ARVP,
                     DataSetPrefix())
ACTIVE_LOGS = _parameter("ACTIVE_LOGS", 3, "active log data sets per copy (dual logging: twice "
                         "as many in all, 4 to 620)", MODEL, _number(2, 310))
ACTIVE_LOG_CIS = _parameter("ACTIVE_LOG_CIS", 4096, "size of each active data set in 4 KiB CIs "
                            "(real ones are allocated in cylinders; at most 4 GiB)",
                            MODEL, _number(16, 1 << 20))
RBA8_PARAM = _parameter("RBA8", True, "8-byte RBA (default since MQ 9.3); NO is the 6-byte RBA",
                        MODEL, Switch())
STARTRBA = _parameter("STARTRBA", 0, "RBA of the first log byte (CSQJU003 after a log reset)",
                      MODEL, RbaAddress())

#: Every parameter, in the order ``describe()`` and ``to_settings()`` list them.
PARAMETERS: tuple[Parameter, ...] = (
    TWOACTV, TWOARCH, TWOBSDS, OFFLOAD, MAXARCH, MAXCNOFF, OUTBUFF, INBUFF, WRTHRSH, MAXRTU, DEALLCT,
    COMPLOG, ZSTD_IN_ANY, LOGLOAD, ARCPFX1, ARCPFX2, ACTIVE_LOGS, ACTIVE_LOG_CIS, RBA8_PARAM,
    STARTRBA,
    SHARED_QUEUES, BUFFERS,
)
#: looked up by name in any case, with or without ``log.``
PARAMETER_SET = ParameterSet(PARAMETERS, "a log parameter of platform zos")
