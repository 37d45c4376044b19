"""The toy platform's one registry line, added for the tests that use it."""

from __future__ import annotations

import pytest

from mqlog import platforms
from toyplatform.toy import REGISTRY_LINE


@pytest.fixture
def toy_registered(monkeypatch):
    """:data:`mqlog.platforms.PLATFORMS` with the toy platform's line added (and removed after)."""
    for name, descriptor in REGISTRY_LINE.items():
        monkeypatch.setitem(platforms.PLATFORMS, name, descriptor)
    return REGISTRY_LINE
