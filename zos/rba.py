"""The RBA ranges of a z/OS queue manager's log: for the 6-byte RBA of older queue managers and
the 8-byte RBA (the default since MQ 9.3, what CSQJUCNV converts to), the address from which
the used range is significant (CSQI045I and CSQJ032E warn), the one at which the queue
manager terminates (reason code 00D10257) and the last address there is; how far an address
has come (:class:`RbaThreshold`), how z/OS prints an RBA (upper-case hex, zero-padded to
the mode's width) and how a parameter holding one is read (:class:`RbaAddress`).
"""

from __future__ import annotations

import enum
import re
from typing import Any

import attrs

from mqlog.core.errors import ParameterError
from mqlog.core.params import Kind, quoted, whole_number

__all__ = ["CI_BYTES", "RBA6", "RBA6_END", "RBA6_TERMINATION", "RBA6_WARNING", "RBA8", "RBA8_END",
           "RBA8_TERMINATION", "RBA8_WARNING", "RbaAddress", "RbaLimits", "RbaThreshold", "rba_limits",
           "rba_threshold"]

#: The log is written in VSAM control intervals of 4 KiB; buffers and data sets are whole CIs.
CI_BYTES = 4096

#: 6-byte RBA: from here the used range is "significant" (CSQI045I/CSQJ032E; IBM MQ for z/OS, "Larger log Relative Byte Address").
RBA6_WARNING = 0xF000_0000_0000
#: 6-byte RBA: the queue manager terminates with reason 00D10257 on reaching this.
RBA6_TERMINATION = 0xFFF8_0000_0000
#: 6-byte RBA: the last address there is.
RBA6_END = 0xFFFF_FFFF_FFFF
RBA8_WARNING = 0xFFFF_8000_0000_0000
RBA8_TERMINATION = 0xFFFF_FFC0_0000_0000
RBA8_END = 0xFFFF_FFFF_FFFF_FFFF


class RbaThreshold(enum.IntEnum):
    """The furthest RBA threshold an address has reached; ordered, so ``>=`` compares."""

    NONE = 0
    #: CSQI045I/CSQI046E/CSQI047E, CSQJ032E: plan a log reset or conversion to 8-byte RBA
    WARNING = 1
    #: reason code 00D10257: the queue manager terminates
    TERMINATION = 2
    #: the last address of the mode; the RBA must never wrap to 0
    END_OF_RANGE = 3


@attrs.frozen
class RbaLimits:
    """The thresholds of one RBA mode (6 or 8 bytes)."""

    width: int  # bytes in an RBA
    warning: int
    termination: int
    end: int

    @property
    def hex_digits(self) -> int:
        return 2 * self.width

    def hex(self, rba: int) -> str:
        """``rba`` as z/OS prints it: upper-case hex, zero-padded to the mode's width."""
        if rba < 0:  # (never an RBA: said as what it is, not as "-0000…")
            return f"{rba} (not an RBA)"
        return f"{rba:0{self.hex_digits}X}"

    def threshold(self, rba: int) -> RbaThreshold:
        """The furthest threshold ``rba`` has reached (at a threshold counts as reached).

        An address outside 0..``end`` raises :class:`ParameterError`.
        """
        if isinstance(rba, bool) or not isinstance(rba, int) or not 0 <= rba <= self.end:
            raise ParameterError("RBA", rba, f"0 to X'{self.hex(self.end)}' ({self.width}-byte RBA)")
        if rba >= self.end:
            return RbaThreshold.END_OF_RANGE
        if rba >= self.termination:
            return RbaThreshold.TERMINATION
        if rba >= self.warning:
            return RbaThreshold.WARNING
        return RbaThreshold.NONE


RBA6 = RbaLimits(6, RBA6_WARNING, RBA6_TERMINATION, RBA6_END)
RBA8 = RbaLimits(8, RBA8_WARNING, RBA8_TERMINATION, RBA8_END)


def rba_limits(rba8: bool) -> RbaLimits:
    """The thresholds of the 8-byte (``rba8``) or 6-byte RBA mode."""
    return RBA8 if rba8 else RBA6


def rba_threshold(rba: int, *, rba8: bool = True) -> RbaThreshold:
    """The furthest RBA threshold ``rba`` has reached in the given mode (see :class:`RbaLimits`)."""
    return rba_limits(rba8).threshold(rba)


@attrs.frozen
class RbaAddress(Kind):
    """An RBA on a CI boundary: hex as ``0x00000000F000`` or ``X'F000'``, or decimal."""

    def allowed(self) -> str:
        return "a multiple of 4096 (hex ending in 000) below the termination RBA of the mode"

    def from_text(self, text: str) -> int | None:
        word = text.strip().upper()
        if word.startswith("0X"):
            return whole_number(word[2:], 16)
        quoted_hex = re.fullmatch(r"X'([0-9A-F]+)'", word)
        if quoted_hex:
            return whole_number(quoted_hex[1], 16)
        return whole_number(word, 10)

    def from_value(self, value: Any) -> int | None:
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    def ok(self, value: Any) -> bool:
        return (isinstance(value, int) and not isinstance(value, bool)
                and 0 <= value <= RBA8_END and value % CI_BYTES == 0)

    def shown(self, value: Any) -> object:
        if isinstance(value, int) and not isinstance(value, bool):
            return f"0x{value:X}"
        return quoted(value)
