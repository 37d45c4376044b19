"""The bootstrap data set's bytes: the 4-byte magic ``MQLB``, a CRC-32 (little-endian) of the
rest, then the inventory as a JSON object (docs/FORMAT.md §6.5). One encoder and one decoder,
for the log space that keeps the BSDS and the BSDS map that shows each copy, so the two always
agree on which copy is valid and why another is not.
"""

from __future__ import annotations

import json
import zlib

#: the BSDS copies, in order (the second with TWOBSDS)
BSDS_FILES = ("BSDS01", "BSDS02")
BSDS_MAGIC = b"MQLB"


def encode_bsds(inventory: dict) -> bytes:
    """A BSDS copy's bytes for ``inventory`` (keys sorted, so the same inventory gives the same bytes)."""
    body = json.dumps(inventory, sort_keys=True).encode()
    return BSDS_MAGIC + zlib.crc32(body).to_bytes(4, "little") + body


def decode_bsds(raw: bytes) -> tuple[dict | None, str | None]:
    """A BSDS copy's inventory, or why it is not one: ``(inventory, None)`` or ``(None,
    problem)``, ``problem`` being ``"magic or checksum"`` or ``"contents: ..."`` (a good
    checksum over something that is not a BSDS: not JSON, or no whole-number sequence)."""
    if raw[:4] != BSDS_MAGIC or zlib.crc32(raw[8:]) != int.from_bytes(raw[4:8], "little"):
        return None, "magic or checksum"
    try:
        inventory = json.loads(raw[8:])
    except RecursionError:
        return None, "contents: nested too deep to decode"
    except ValueError as exc:  # (UnicodeDecodeError too) its checksum is good, its contents are not JSON
        return None, f"contents: {exc}"
    sequence = inventory.get("sequence") if isinstance(inventory, dict) else None
    if not isinstance(sequence, int):
        return None, "contents: no sequence number"
    return inventory, None
