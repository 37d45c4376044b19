"""The channel contract, run on every pair of platforms (``topologies.CHANNEL_PAIRS``: each
registered platform sending to each, itself included) and both topology workloads: a crash of
either queue manager at a storage write – the other killed at the same instant –, then a
restart of both, each channel's batches in doubt resolved with its partner (IBM: by the
receiver's last committed LUWID), and every message checked end to end. Each end's journal
verdict is ok and, across the channel, nothing is lost and nothing delivered twice; the sweep
meets both resolutions (a batch the receiver had committed, committed at the sender; one it
had not, backed out) so that neither way is left untried.

Every storage write of one cross-platform feed is crashed at; elsewhere every ``SAMPLE``-th
write, from an offset that differs by pair, so the sample spreads evenly over the run and
the pairs' samples fall on different writes (each crash point a re-run: the whole sweep
stays under a minute of CI). ``mqlog torture`` runs the same scenarios at any budget
(:mod:`mqlog.torture.channels`). Nothing here names a platform.
"""

from __future__ import annotations

import functools

import pytest

from .topologies import CHANNEL_PAIRS, crash_sweep, topology

WORKLOADS = {"channel-feed": {"putters": 2, "messages_per_putter": 4},
             "channel-request-reply": {"requesters": 2, "requests": 3}}
#: the pair and workload crashed at every storage write: the first pair across platforms
EVERY = (next(p for p in CHANNEL_PAIRS if p[0] != p[1]), "channel-feed")
#: elsewhere, every SAMPLE-th storage write
SAMPLE = 5
CASES = [(pair, workload) for pair in CHANNEL_PAIRS for workload in WORKLOADS if (pair, workload) != EVERY]


def check(seen: dict) -> None:
    assert seen["runs"] > 10, seen
    assert not seen["bad"], seen["bad"][:3]
    # both resolutions were met: the receiver had committed a batch in doubt, and had not
    assert seen["commit"] and seen["backout"], seen


def test_a_crash_at_every_storage_write_of_either_end_loses_and_duplicates_nothing():
    pair, workload = EVERY
    make = functools.partial(topology, pair, workload, **WORKLOADS[workload])
    seen = crash_sweep(make)
    check(seen)


@pytest.mark.parametrize("pair, workload", CASES, ids=[f"{'-'.join(p)}-{w}" for p, w in CASES])
def test_a_crash_at_evenly_spread_storage_writes_of_either_end_loses_and_duplicates_nothing(pair, workload):
    make = functools.partial(topology, pair, workload, **WORKLOADS[workload])
    seen = crash_sweep(make, SAMPLE, offset=CHANNEL_PAIRS.index(pair))
    check(seen)
