"""The RLE byte format of z/OS log compression (zos/rle.py; docs: "RLE (codec 1)")."""

from __future__ import annotations

import os
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mqlog.core.errors import LogFormatError
from mqlog.zos.rle import max_encoded_length, rle_decode, rle_encode

# Data made of runs: the shapes RLE exists for, including runs across every length boundary.
runs = st.lists(
    st.tuples(st.sampled_from([0x00, 0x20, 0x40, 0xFF, 0x0A]) | st.integers(0, 255),
              st.integers(1, 300) | st.sampled_from([2, 3, 128, 129, 130, 131, 65_665, 65_666, 65_667, 65_668])),
    max_size=12)


@settings(max_examples=300)
@given(st.binary(max_size=3000))
def test_arbitrary_bytes_round_trip_within_the_bound(data):
    stored = rle_encode(data)
    assert rle_decode(stored) == data
    assert rle_decode(stored, expected_length=len(data)) == data
    assert len(stored) <= max_encoded_length(len(data))


@settings(max_examples=200)
@given(runs)
def test_data_built_from_runs_round_trips(parts):
    data = b"".join(bytes([b]) * n for b, n in parts)
    stored = rle_encode(data)
    assert rle_decode(stored, expected_length=len(data)) == data
    assert len(stored) <= max_encoded_length(len(data))


@settings(max_examples=300)
@given(st.binary(max_size=600), st.integers(0, 5000))
def test_any_bytes_either_decode_or_raise_a_format_error(stored, expected):
    # a reader fed damaged bytes must fail with the format error, never anything else
    try:
        data = rle_decode(stored, expected_length=expected)
    except LogFormatError as exc:
        assert exc.offset is not None and 0 <= exc.offset <= len(stored)
    else:
        assert len(data) == expected


@settings(max_examples=200)
@given(st.binary(max_size=600))
def test_whatever_a_reader_accepts_encodes_back_to_the_same_data(stored):
    # items a writer would not make (a run of 2 as literals, a long run of 130) still decode
    try:
        data = rle_decode(stored)
    except LogFormatError:
        return
    assert rle_decode(rle_encode(data)) == data


def test_the_documented_example():
    data = b"AB" + b" " * 6 + b"\x00" * 200
    assert rle_encode(data) == bytes.fromhex("014142 8320 FF460000")
    assert rle_decode(bytes.fromhex("014142 8320 FF460000")) == data


# --- padding compresses; random data does not grow past the bound ---------------------------

def card_images(count: int, pad: bytes) -> bytes:
    """80-byte records: a key and a short varying text, blank-padded (record-oriented data)."""
    rng = random.Random(7)
    words = [b"CUSTOMER", b"ORDER", b"INVOICE", b"SMITH", b"JONES", b"LONDON", b"ZURICH"]
    out = []
    for i in range(count):
        text = b"%08d " % i + b" ".join(rng.choice(words) for _ in range(rng.randint(1, 2)))
        out.append(text.ljust(80, pad))
    return b"".join(out)


def zero_filled_structs(count: int) -> bytes:
    """512-byte control blocks: an eye-catcher, a few counters, the rest reserved (zeros)."""
    out = []
    for i in range(count):
        struct = bytearray(512)
        struct[0:4] = b"MQCB"
        struct[8:16] = i.to_bytes(8, "little")
        struct[100:104] = (i * 7919).to_bytes(4, "big")
        out.append(bytes(struct))
    return b"".join(out)


@pytest.mark.parametrize("data, factor", [
    (card_images(500, b"\x40"), 3),  # EBCDIC blanks
    (card_images(500, b" "), 3),  # ASCII blanks
    (zero_filled_structs(200), 20),
    (bytes(1 << 20), 10_000),  # a megabyte of zeros: long runs, not 64:1 PackBits
], ids=["ebcdic-cards", "ascii-cards", "zero-structs", "zero-megabyte"])
def test_padded_record_oriented_data_shrinks_by_a_large_factor(data, factor):
    stored = rle_encode(data)
    assert len(data) / len(stored) >= factor
    assert rle_decode(stored, expected_length=len(data)) == data


@pytest.mark.parametrize("seed", range(8))
def test_random_bytes_never_grow_beyond_the_bound(seed):
    rng = random.Random(seed)
    for n in [0, 1, 2, 127, 128, 129, 255, 256, 4096, rng.randint(1, 200_000)]:
        data = rng.randbytes(n)
        stored = rle_encode(data)
        assert len(stored) <= max_encoded_length(n)
        assert rle_decode(stored) == data
    data = os.urandom(100_000)
    assert len(rle_encode(data)) <= max_encoded_length(len(data))


def test_the_bound_is_reached_by_data_without_runs():
    data = bytes(range(256)) * 40  # no byte repeats, so every byte is a literal
    assert len(rle_encode(data)) == max_encoded_length(len(data))
    assert max_encoded_length(len(data)) > len(data)


def test_short_runs_between_literals_never_cost_more_than_the_bound():
    # the worst mixture for a run-length coder: runs of 3 broken by single bytes
    data = b"".join(bytes([i % 251]) * 3 + bytes([(i + 100) % 251]) for i in range(5000))
    assert len(rle_encode(data)) <= len(data)
    data = b"".join(bytes([i % 251]) * 2 + bytes([(i + 100) % 251]) for i in range(5000))  # runs of 2
    assert len(rle_encode(data)) <= max_encoded_length(len(data))


def test_a_megabyte_of_mixed_data_round_trips():
    # (its speed is a perf/ benchmark: perf/test_rle_speed.py)
    data = random.Random(1).randbytes(1 << 20) + card_images(10_000, b"\x40")
    assert rle_decode(rle_encode(data)) == data


# --- damaged input ---------------------------------------------------------------------------

@pytest.mark.parametrize("stored, offset", [
    (b"\x05abc", 0),  # a literal of 6 with 3 bytes
    (b"\x01AB\x83", 3),  # a run with no byte to repeat
    (b"\x83 \xff\x46", 2),  # a long run cut in its count
    (b"\x83 \xff\x46\x00", 2),  # ... cut before its byte
    (b"\xff", 0),
    (b"\x00A\x7f" + bytes(127), 2),  # the second literal is one byte short
], ids=["literal", "run", "long-run-count", "long-run-byte", "lone-long-run", "second-literal"])
def test_truncated_items_are_format_errors_naming_the_offset(stored, offset):
    with pytest.raises(LogFormatError) as caught:
        rle_decode(stored)
    assert caught.value.offset == offset
    assert f"offset {offset}" in str(caught.value)


def test_every_truncation_of_real_data_is_caught_with_the_expected_length():
    data = card_images(20, b"\x40") + bytes(300) + b"tail"
    stored = rle_encode(data)
    for cut in range(len(stored)):
        with pytest.raises(LogFormatError) as caught:
            rle_decode(stored[:cut], expected_length=len(data))
        assert 0 <= caught.value.offset <= cut


def test_the_wrong_expanded_length_is_a_format_error():
    stored = rle_encode(b"x" * 10 + b"abc")
    with pytest.raises(LogFormatError, match="expected 14") as caught:
        rle_decode(stored, expected_length=14)
    assert caught.value.offset == len(stored)  # all items read, data too short
    with pytest.raises(LogFormatError, match="beyond the expected 5") as caught:
        rle_decode(stored, expected_length=5)
    assert caught.value.offset == 0  # the first item already overflows


def test_damaged_long_run_counts_cannot_expand_far_beyond_the_expected_length():
    stored = b"\xff\xff\xff\x00" * 1000  # would expand to 65 MB
    with pytest.raises(LogFormatError) as caught:
        rle_decode(stored, expected_length=100)
    assert caught.value.offset == 0


def test_corrupt_bytes_give_a_format_error_or_data_of_the_right_length():
    data = card_images(50, b"\x40") + zero_filled_structs(4)
    stored = rle_encode(data)
    rng = random.Random(3)
    caught = 0
    for _ in range(300):
        damaged = bytearray(stored)
        damaged[rng.randrange(len(damaged))] ^= 1 << rng.randrange(8)
        try:
            out = rle_decode(bytes(damaged), expected_length=len(data))
        except LogFormatError:
            caught += 1
        else:
            assert len(out) == len(data)  # a flipped data byte: the record CRC's job
    assert caught > 0


def test_the_error_names_its_source_when_given():
    with pytest.raises(LogFormatError, match=r"^Q1 put at 0000A000, offset 0: RLE data truncated"):
        rle_decode(b"\x10", source="Q1 put at 0000A000")


def test_a_negative_length_has_no_bound():
    with pytest.raises(ValueError):
        max_encoded_length(-1)
