"""The platform configurations the recovery contract runs against, registered by each
platform's own test package.

A configuration (:class:`~contract.harness.PlatformConfig`: a name, a factory of the
platform over a storage, a device, what it claims to survive) belongs to its platform's
tests, not to the contract suite: ``tests/<package>/contract_configs.py`` defines
``CONFIGS``, a list of them. :func:`configurations` finds them by directory, so that a new
platform adds its file beside its own tests and edits nothing here, and so that running
only ``tests/contract`` still collects every configuration – registration never depends on
which other test directories pytest happened to import.

Order (which fixes the order of the parametrised tests): the core's own reference platform
first (``tests/contract/contract_configs.py``), then every other package under ``tests/``
that has a ``contract_configs`` module, by directory name, each in its list's order. Such a
package is a regular one (it has an ``__init__.py``) and imports by its directory name:
``tests/`` is on ``sys.path`` (see ``tests/conftest.py``). Names must be unique.
"""

from __future__ import annotations

import functools
import importlib
from pathlib import Path

from .harness import PlatformConfig

#: the test tree: each directory under it may register configurations
TESTS = Path(__file__).resolve().parent.parent
#: the module a package registers its configurations in (as its list ``CONFIGS``)
MODULE = "contract_configs"
#: the contract suite's own package: the core's reference platform, registered first
OWN = Path(__file__).resolve().parent.name


def packages() -> list[str]:
    """The test packages that register configurations, in registration order."""
    others = sorted(path.parent.name for path in TESTS.glob(f"*/{MODULE}.py") if path.parent.name != OWN)
    return [OWN, *others]


@functools.cache
def configurations() -> tuple[PlatformConfig, ...]:
    """Every registered configuration, in order."""
    found: list[PlatformConfig] = []
    for package in packages():
        expected = TESTS / package / f"{MODULE}.py"
        module = importlib.import_module(f"{package}.{MODULE}")
        if Path(module.__file__).resolve() != expected:
            # Another package of that name came first on sys.path (a source directory, say).
            raise ImportError(f"{package}.{MODULE} imported from {module.__file__}, not {expected}")
        found += module.CONFIGS
    names = [config.name for config in found]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise ValueError(f"contract configurations registered twice: {', '.join(duplicates)}")
    return tuple(found)
