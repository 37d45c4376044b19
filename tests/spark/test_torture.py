"""``mqlog torture --master``: the scenarios as Spark tasks, the figures those of one process."""

from __future__ import annotations

import json

from click.testing import CliRunner

from mqlog.cli import cli
from mqlog.core.workload.spec import BUILTINS, build_spec
from mqlog.platforms import choose
from mqlog.spark.torture import run_campaigns
from mqlog.torture import Campaign

SPEC = build_spec(BUILTINS["putget-pairs"], {"pairs": "2", "messages_per_pair": "8"}, origin="test")


def campaign(platform: str, log: dict) -> Campaign:
    choice = choose(platform)
    values = choice.configure(dict(log))
    return Campaign(platform, values, choice.maker(values), SPEC, seed=11, budget=12)


def test_scenarios_as_spark_tasks_tally_as_one_process_does(spark):
    configs = [("distributed", {"LogWriteIntegrity": "SingleWrite"}), ("zos", {"TWOACTV": "YES"})]
    alone = [campaign(*c).run().as_dict() for c in configs]
    ticks, planned = [], []
    # batches of 5: many tasks, ending in no particular order
    spread = run_campaigns(spark, [campaign(*c) for c in configs], batch=5, on_planned=planned.append,
                           progress=ticks.append)
    assert [c.as_dict() for c in spread] == alone
    # progress: every scenario once, as its batch ends
    assert sum(ticks) == planned[0] == sum(len(campaign(*c).plan()) for c in configs)
    assert len(ticks) > 4 and any(t["expected_loss"] for t in alone[0]["classes"])


def test_the_command_line_with_master(spark):
    args = ["torture", "--platform", "zos", "--workload", "putget-pairs", "--set", "workload.pairs=2",
            "--set", "workload.messages_per_pair=8", "--budget", "5", "--seed", "2", "--faults", "crash,copy", "--json"]
    runner = CliRunner()
    alone = runner.invoke(cli, args)
    spread = runner.invoke(cli, args + ["--master", "local[2]"])
    assert alone.exit_code == spread.exit_code == 0, spread.output
    assert json.loads(spread.stdout) == json.loads(alone.stdout)
