"""Message payloads: exact sizes, determinism from the seed, compressibility in the right order."""

from __future__ import annotations

import random
import re
import zlib

import pytest
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st
from mqlog.core.errors import ParameterError
from mqlog.core.workload.payload import PAYLOAD_KINDS, make_payload

PLAIN = ("random", "text", "padded-records")
_RUN = re.compile(rb"(.)\1{3,}", re.DOTALL)


def run_fraction(data: bytes) -> float:
    """The fraction of bytes lying in runs of 4 or more equal bytes: what RLE can shorten."""
    return sum(len(m.group()) for m in _RUN.finditer(data)) / len(data)


def zstd_ratio(data: bytes) -> float:
    return len(data) / len(zstandard.ZstdCompressor(level=1).compress(data))


def zlib_ratio(data: bytes) -> float:
    return len(data) / len(zlib.compress(data))


def messages(kind: str, size: int = 4096, count: int = 20) -> list[bytes]:
    rng = random.Random(1234)
    return [make_payload(kind, size, rng) for _ in range(count)]


def test_kinds_are_the_ones_workloads_accept():
    assert set(PAYLOAD_KINDS) == {"random", "text", "padded-records", "mixed"}


@settings(max_examples=60, deadline=None)
@given(kind=st.sampled_from(PAYLOAD_KINDS), size=st.integers(0, 20_000), seed=st.integers(0, 2**32))
def test_every_payload_is_exactly_the_size_asked_for(kind, size, seed):
    assert len(make_payload(kind, size, random.Random(seed))) == size


@pytest.mark.parametrize("kind", PAYLOAD_KINDS)
def test_sizes_at_record_and_sentence_boundaries_are_exact(kind):
    rng = random.Random(5)
    for size in (0, 1, 2, 79, 80, 81, 119, 120, 121, 240, 2047, 2048, 2049):
        assert len(make_payload(kind, size, rng)) == size
    assert make_payload(kind, 0, rng) == b""


@pytest.mark.parametrize("kind", PAYLOAD_KINDS)
def test_same_seed_same_bytes_other_seed_other_bytes(kind):
    def stream(seed):
        rng = random.Random(seed)
        return [make_payload(kind, 1000, rng) for _ in range(10)]

    assert stream(7) == stream(7)
    assert stream(7) != stream(8)
    # Successive messages from one generator differ too.
    first, second = stream(7)[:2]
    assert first != second


def test_padded_records_have_long_runs_text_hardly_any():
    records = min(run_fraction(m) for m in messages("padded-records"))
    text = max(run_fraction(m) for m in messages("text"))
    rand = max(run_fraction(m) for m in messages("random"))
    assert records > 0.4          # blanks, zeros and low-values dominate a record
    assert text < 0.02            # prose has almost no runs of one byte
    assert rand < 0.01
    assert records > 20 * max(text, rand, 0.001)


def test_the_runs_are_of_blanks_zeros_and_low_values():
    data = b"".join(messages("padded-records"))
    run_bytes = {m.group()[0] for m in _RUN.finditer(data)}
    assert {0x20, 0x30, 0x00} <= run_bytes


@pytest.mark.parametrize("ratio, raw", [(zstd_ratio, 0.99), (zlib_ratio, 0.98)])
def test_general_codecs_shrink_text_and_records_but_not_random(ratio, raw):
    for message in messages("text") + messages("padded-records"):
        assert ratio(message) > 2
    for message in messages("random"):
        assert raw <= ratio(message) < 1.01  # stored (nearly) raw: nothing to find


def test_text_at_the_default_message_size_still_compresses():
    assert min(zstd_ratio(m) for m in messages("text", size=2048)) > 2


def test_text_is_words_and_sentences():
    data = b"".join(messages("text"))
    assert data.isascii()
    words = re.findall(rb"[a-z]+", data.lower())
    assert len(set(words)) > 150                 # a real vocabulary, not a few repeated words
    assert sum(map(len, words)) / len(words) < 8  # English-length words
    assert data.count(b". ") > 50


def test_mixed_gives_all_three_kinds_across_messages():
    def classify(message: bytes) -> str:
        if run_fraction(message) > 0.3:
            return "padded-records"
        return "text" if zstd_ratio(message) > 1.5 else "random"

    assert {classify(m) for m in messages("mixed", count=40)} == set(PLAIN)


def test_unknown_kind_and_negative_size_name_the_parameter():
    with pytest.raises(ParameterError, match="payload='binary'.*random, text, padded-records"):
        make_payload("binary", 10, random.Random(0))
    with pytest.raises(ParameterError, match="message_size=-1"):
        make_payload("text", -1, random.Random(0))
