"""The layering contracts (``[tool.importlinter]`` in pyproject.toml): dependencies point
inward – command line, Spark jobs, the application layer, the platforms, the workload
simulation, the core's own layers – neither platform imports the other, and no package's
modules import each other in a cycle.

The directories install as one namespace through setuptools' package-dir mapping
(``mqlog.core`` is ``core/``), a layout the import graph cannot walk from the checkout, so
the test copies the package into a temporary directory laid out as installed and runs
import-linter there, in a process of its own.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: package -> directory, as pyproject.toml's package-dir maps them
MAPPING = {"mqlog": "mqlog", "mqlog/core": "core", "mqlog/distributed": "distributed", "mqlog/zos": "zos",
           "mqlog/spark": "spark"}


def installed_copy(where: Path) -> Path:
    for package, directory in MAPPING.items():
        shutil.copytree(ROOT / directory, where / package, ignore=shutil.ignore_patterns("__pycache__"),
                        dirs_exist_ok=True)
    return where


def lint(where: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(where))
    code = ("import sys, mqlog; assert mqlog.__file__.startswith(sys.argv[1]), mqlog.__file__; "
            "from importlinter.cli import lint_imports; sys.exit(lint_imports(config_filename=sys.argv[2]))")
    return subprocess.run([sys.executable, "-c", code, str(where), str(ROOT / "pyproject.toml")], env=env,
                          cwd=where, capture_output=True, text=True, timeout=300)


def test_dependencies_point_inward(tmp_path):
    out = lint(installed_copy(tmp_path))
    assert out.returncode == 0, out.stdout + out.stderr
    assert "2 kept, 0 broken" in out.stdout


@pytest.mark.parametrize("module, upward", [
    ("zos/space.py", "from mqlog.rundir import load_run"),  # a platform reaching into run directories
    ("core/qm/manager.py", "from mqlog.zos.space import ZosLogSpace"),  # the core naming a platform
    ("distributed/space.py", "from mqlog.zos.config import rba_limits"),  # one platform into the other
    ("mqlog/torture/campaign.py", "from mqlog.spark.session import run_tasks"),  # the application into Spark
    ("core/recovery/restart.py", "from mqlog.core.qm.manager import QueueManager"),  # recovery into normal running
    ("core/format/records/base.py", "from mqlog.core.log.writer import LogWriter"),  # the format knowing the writer
    ("core/qm/manager.py", "from mqlog.core.workload.journal import Journal"),  # the core naming its workloads
    ("core/log/stats.py", "from mqlog.core.log.writer import LogWriter"),  # a cycle inside one package
])
def test_an_upward_import_breaks_the_contract(tmp_path, module, upward):
    where = installed_copy(tmp_path)
    path = where / ("mqlog/" + module if not module.startswith("mqlog/") else module)
    path.write_text(path.read_text() + f"\n{upward}  # noqa\n")
    out = lint(where)
    assert out.returncode != 0 and "BROKEN" in out.stdout.upper(), out.stdout + out.stderr
