"""The ``mqlog`` command line: one click group (:mod:`mqlog.cli.group`, with :func:`main`, the
console script's entry point) and its commands by family: running and restarting
(:mod:`~mqlog.cli.running`), the Spark jobs and calibration (:mod:`~mqlog.cli.jobs`), the distributed and the
z/OS utilities over a run directory (:mod:`~mqlog.cli.distributed`, :mod:`~mqlog.cli.zos`),
fault campaigns (:mod:`~mqlog.cli.torture`), the writer's own tools
(:mod:`~mqlog.cli.tools`) and what mqlog is made of (:mod:`~mqlog.cli.about`: its commands and layout). User errors (bad parameters, damaged files, unknown profiles) print
one line and exit 2; a traceback means a bug in mqlog.
"""

from __future__ import annotations

import sys

# Importing each family registers its commands on the group.
from mqlog.cli import about, channels, distributed, docs, history, jobs, running, settings, tools, torture, zos  # noqa: F401
from mqlog.cli.about import commands_cmd, layout_cmd
from mqlog.cli.channels import chstatus_cmd, resolve_cmd, topology_group
from mqlog.cli.docs import docs_cmd
from mqlog.cli.distributed import dmpmqlog_cmd, dump_cmd, qmstatus_cmd, rcdmqimg_cmd, rcrmqobj_cmd, set_log_archived_cmd
from mqlog.cli.group import cli, main
from mqlog.cli.history import history_cmd
from mqlog.cli.jobs import calibrate_cmd, compare_cmd, report_cmd, sweep_cmd
from mqlog.cli.running import restart_cmd, run_cmd
from mqlog.cli.settings import config_cmd, workloads_cmd
from mqlog.cli.tools import devices, groupcommit, hosts, mqldt_cmd, scan_cmd
from mqlog.cli.torture import torture_cmd
from mqlog.cli.zos import bsds_cmd, convert_rba_cmd, print_cmd, stats_cmd

__all__ = ["cli", "main", "run_cmd", "restart_cmd", "workloads_cmd", "config_cmd", "compare_cmd", "sweep_cmd", "calibrate_cmd",
           "report_cmd", "qmstatus_cmd", "dump_cmd", "rcdmqimg_cmd", "rcrmqobj_cmd", "set_log_archived_cmd",
           "print_cmd", "bsds_cmd", "stats_cmd", "convert_rba_cmd", "torture_cmd", "groupcommit", "devices", "hosts",
           "mqldt_cmd", "scan_cmd", "docs_cmd", "history_cmd", "dmpmqlog_cmd", "commands_cmd", "layout_cmd",
           "topology_group", "chstatus_cmd", "resolve_cmd"]

if __name__ == "__main__":  # pragma: no cover - run as a script (spark-submit mqlog/cli/__init__.py ...)
    sys.exit(main())
