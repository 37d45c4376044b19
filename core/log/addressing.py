"""Log addressing: the platform decides what a log address looks like; the core only orders them.

Inside the core a log address is an unsigned integer that grows by one for every byte of
the paged log stream (page headers included), starting from a page-aligned first address.
That is what both of MQ's schemes are underneath: the distributed LSN and the z/OS RBA are
byte positions in the log. What differs is owned by the platform through this protocol:
where the log starts (a z/OS log reset starts at a new RBA), how wide an address may grow
(6- or 8-byte RBA), how an address is shown to a user (``<0:0:4:1234>`` vs
``00000001A2B3``), and whether records carry an extra ordering stamp (the z/OS LRSN,
derived from a clock rather than the position, that orders several queue managers' logs).
"""

from __future__ import annotations

from typing import Protocol

import attrs

from mqlog.core.errors import ParameterError


class Addressing(Protocol):
    """What a platform tells the core about its log addresses."""

    #: the name users know the address by ("LSN", "RBA")
    name: str
    #: the first address of a new log (page-aligned)
    start: int
    #: addresses must stay below this; the platform reacts before it is reached
    limit: int
    #: whether :meth:`stamp` gives records a stamp (the writer skips the call otherwise)
    stamps: bool

    def format(self, address: int) -> str:
        """The address as a user sees it."""

    def parse(self, text: str) -> int:
        """The inverse of :meth:`format`; raises ParameterError on bad text."""

    def stamp(self, now_us: float) -> int:
        """The ordering stamp for a record written now (0 when the platform has none)."""


@attrs.frozen
class PlainAddressing:
    """The reference platform's addresses: byte positions shown as 16 hex digits, no stamp."""

    name: str = "address"
    start: int = 0
    limit: int = 1 << 64
    stamps: bool = False

    def format(self, address: int) -> str:
        if address < 0:  # (never a log address: said as what it is, not as "-0000…")
            return f"{address} (not a log address)"
        return f"{address:016X}"

    def parse(self, text: str) -> int:
        try:
            value = int(text, 16)
        except ValueError:
            raise ParameterError(self.name, text, "a hexadecimal log address") from None
        if not 0 <= value < self.limit:
            raise ParameterError(self.name, text, f"0..{self.limit - 1:X}")
        return value

    def stamp(self, now_us: float) -> int:
        return 0
