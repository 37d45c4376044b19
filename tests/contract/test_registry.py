"""The contract's configurations come from the platforms' test packages, whatever runs.

Registration must not depend on which test directories pytest imported before the contract
suite: run on its own, the suite still collects every configuration of every package that
registers some, in the registry's order.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from .registry import TESTS, configurations, packages


def test_the_contract_suite_run_alone_collects_every_registered_configuration():
    names = [config.name for config in configurations()]
    contributed = {package: len(__import__(f"{package}.contract_configs", fromlist=["CONFIGS"]).CONFIGS)
                   for package in packages()}
    assert set(contributed) >= {"contract", "distributed", "zos"} and all(contributed.values())
    assert sum(contributed.values()) == len(names) == len(set(names))
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
         str(Path(TESTS, "contract", "test_contract.py"))],
        cwd=TESTS.parent, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    collected = re.findall(r"::test_workload_runs_to_the_end_and_shuts_down_cleanly\[(.+)\]", done.stdout)
    assert collected == names
