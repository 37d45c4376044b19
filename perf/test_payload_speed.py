"""Payload generation (core/workload/payload.py) against ``random.Random.randbytes`` of the same size,
the cheapest seeded bytes Python makes. Every kind must keep at least 0.25 × its MB/s: the
workloads make a payload for every message, so a slow kind would slow every run."""

from __future__ import annotations

import random

import pytest

from mqlog.core.workload.payload import PAYLOAD_KINDS, make_payload

TARGET = 0.25


@pytest.mark.parametrize("kind", PAYLOAD_KINDS)
def test_payload_generation_against_randbytes(benchmark, gate, kind):
    count = 20 if gate.smoke(benchmark) else 2000
    rng = random.Random(0)
    make_payload(kind, 2048, rng)  # the pools are built once, outside the timing
    gate.ratio(benchmark, name=f"payload {kind}", group="0 payloads",
               model=lambda: [make_payload(kind, 2048, rng) for _ in range(count)],
               baseline=lambda: [rng.randbytes(2048) for _ in range(count)], target=TARGET,
               model_items=count * 2048 / 1e6, baseline_items=count * 2048 / 1e6, unit="MB")
