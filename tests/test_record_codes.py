"""Platform record codes: the core reserves type codes 0x40-0x7F and resource managers above
its own for platforms and names none of them; each platform claims a sub-range of the type
codes and names its codes in enums of its own. The claims must not meet, and the names a log
print shows for the platforms' codes are the ones docs/FORMAT.md §3.2 lists.
"""

from __future__ import annotations

import pytest

from mqlog.core.format.records import (PLATFORM_RMS, PLATFORM_TYPES, OpaqueRecord, RecordType, ResourceManager,
                                       code_names, decode_record, record_table)
from mqlog.distributed import media
from mqlog.zos import records as zos_records

PLATFORMS = {"distributed": media, "zos": zos_records}


@pytest.mark.parametrize("name", sorted(PLATFORMS))
def test_a_platforms_records_lie_in_the_sub_range_it_claims(name):
    module = PLATFORMS[name]
    assert module.RECORD_CODES.start in PLATFORM_TYPES and module.RECORD_CODES[-1] in PLATFORM_TYPES
    for cls in module.RECORD_TYPES:
        assert int(cls.TYPE) in module.RECORD_CODES, cls
        assert int(cls.RM) in ResourceManager._value2member_map_ or int(cls.RM) in PLATFORM_RMS, cls
    record_table(module.RECORD_TYPES)  # the core accepts them


def test_the_platforms_claims_do_not_meet():
    claimed = [set(m.RECORD_CODES) for m in PLATFORMS.values()]
    assert not set.intersection(*claimed)
    own_rms = [{int(c.RM) for c in m.RECORD_TYPES} & set(PLATFORM_RMS) for m in PLATFORMS.values()]
    assert not set.intersection(*own_rms)
    record_table(media.RECORD_TYPES + zos_records.RECORD_TYPES)  # one table can hold both


def test_the_core_names_no_platform_code():
    assert not {int(c) for c in RecordType} & set(PLATFORM_TYPES)
    assert not {int(r) for r in ResourceManager} & set(PLATFORM_RMS)


def test_a_log_print_names_platform_codes_as_the_format_lists_them():
    types, rms = code_names(media.RECORD_TYPES + zos_records.RECORD_TYPES)
    assert {code: types[code] for code in (0x40, 0x60, 0x61, 0x62)} == {
        0x40: "MEDIA_IMAGE", 0x60: "SHUNT", 0x61: "PAGESET_CONTROL", 0x62: "CF_BACKUP"}
    assert {code: rms[code] for code in range(1, 8)} == {
        1: "RECOVERY", 2: "MESSAGE", 3: "OBJECT", 4: "CHECKPOINT", 5: "MEDIA", 6: "PAGESET", 7: "CF"}
    core_types, core_rms = code_names()
    assert 0x40 not in core_types and 5 not in core_rms  # without the platforms' classes: shown as codes


def test_a_platform_record_without_its_classes_is_opaque_with_its_bytes_kept():
    image = media.MediaImage("Q1", 0x1000, 0, 1, b"image")
    raw = image.to_bytes()
    opaque = decode_record(raw)
    assert isinstance(opaque, OpaqueRecord) and (opaque.type, opaque.rm) == (0x40, 5)
    assert opaque.to_bytes() == raw
    assert decode_record(raw, types=record_table(media.RECORD_TYPES)) == image
