"""Channel crash scenarios of ``mqlog torture`` (issue 42): a topology recorded once, each
crash of either queue manager materialised from the recording exactly as a re-run with that
crash leaves it, restarted, resolved and checked end to end; the report's rows; the command
line's channel scenarios and what it refuses before any work."""

from __future__ import annotations

import json

import attrs
import pytest

from clikit import mqlog, one_line_error
from mqlog.core.disk.storage import MemoryStorage
from mqlog.core.errors import ParameterError
from mqlog.core.workload import channels
from mqlog.core.workload.recording import files_of
from mqlog.core.workload.topology import run_topology
from mqlog.torture.channels import ChannelCampaign, TopologyRecording, channel_topology, topology_params

SMALL = {"putters": 2, "messages_per_putter": 4}


def small(workload="channel-feed", pair=("zos", "distributed"), **params):
    return channel_topology(pair, workload, {**SMALL, **params} if workload == "channel-feed" else params, seed=1,
                            batchsz=5)


@pytest.mark.parametrize("workload, params", [("channel-feed", {}), ("channel-request-reply",
                                                                     {"requesters": 2, "requests": 3})])
def test_a_crash_materialised_from_the_recording_is_the_disk_and_journal_a_rerun_leaves(workload, params):
    cfg = small(workload, **params)
    recording = TopologyRecording(cfg)
    compared = 0
    for victim in ("QMA", "QMB"):
        for k in range(0, recording.writes[victim], 10):
            disks, journals = recording.crash(victim, k)
            crashed = attrs.evolve(cfg, crash=(victim, k))
            rerun = run_topology(crashed, {q.name: MemoryStorage() for q in crashed.qmgrs})
            assert rerun.crashed == victim
            for name in ("QMA", "QMB"):
                assert files_of(disks[name]) == files_of(rerun.storages[name].durable), (victim, k, name)
                assert journals[name].to_json() == rerun.journals[name].to_json(), (victim, k, name)
            compared += 1
    assert compared >= 8


def test_a_crash_point_outside_the_run_is_refused_naming_it():
    recording = TopologyRecording(small())
    with pytest.raises(ParameterError, match="crash point"):
        recording.crash("QMA", recording.writes["QMA"])
    with pytest.raises(ParameterError, match="crash point"):
        recording.crash("QMC", 0)


def test_a_channel_campaign_survives_every_crash_of_either_end_and_meets_both_resolutions():
    campaign = ChannelCampaign(small(), seed=3, budget=1000).run()
    rows = {t.fault: t for t in campaign.tallies.values()}
    assert set(rows) == {"crash QMA", "crash QMB"}
    for name, tally in rows.items():
        assert tally.tried == tally.possible == campaign.physical_writes[name.split()[1]] > 30
        assert tally.counts["survived"] == tally.tried, tally.examples
    assert campaign.resolved["commit"] and campaign.resolved["backout"], campaign.resolved
    assert not campaign.failed


def test_the_budget_draws_the_same_crash_points_for_the_same_seed():
    def points(seed):
        return [s.label for s in ChannelCampaign(small(), seed=seed, budget=7).plan()]

    assert points(5) == points(5)
    assert len(points(5)) == 14 and points(5) != points(6)


@pytest.mark.parametrize("wrong", [lambda record, position: False, lambda record, position: True],
                         ids=["always-backout", "always-commit"])
def test_a_channel_that_resolves_wrongly_is_reported_as_a_silent_loss(monkeypatch, wrong):
    # the campaign could pass vacuously; a channel that always backs out (or always commits)
    # its batches in doubt delivers twice (or loses), and the report must say so
    monkeypatch.setattr(channels, "resolution", wrong)
    campaign = ChannelCampaign(small(), seed=3, budget=25).run()
    assert campaign.failed
    silent = sum(t.counts["silent_loss"] for t in campaign.tallies.values())
    assert silent > 0
    assert ("duplicated" if wrong(None, None) is False else "lost") in campaign.table()
    assert "SILENT LOSS" in campaign.table()


@pytest.mark.parametrize("texts, named", [({"messages_per_putter": "ten"}, "workload.messages_per_putter"),
                                          ({"colour": "red"}, "workload.colour"),
                                          ({"persistent": "perhaps"}, "workload.persistent"),
                                          ({"putters": "0"}, "workload.putters")])
def test_a_bad_workload_parameter_is_refused_naming_it(texts, named):
    with pytest.raises(ParameterError, match=named.replace(".", r"\.")):
        topology_params("channel-feed", texts)


def test_channel_scenarios_need_two_platforms():
    with pytest.raises(ParameterError, match="--platform"):
        channel_topology(("zos",), "channel-feed")
    with pytest.raises(ParameterError, match="--workload"):
        channel_topology(("zos", "zos"), "putget")


# --- through the command line ---------------------------------------------------------------

ARGS = ["torture", "--workload", "channel-feed", "--set", "workload.messages_per_putter=5", "--budget", "8", "--seed", "2"]


def test_mqlog_torture_runs_channel_scenarios_and_reports_a_row_per_queue_manager():
    out = mqlog(*ARGS, "--platform", "zos,distributed")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("QMA zos -> QMB distributed, channel-feed (seed 2): storage writes QMA ")
    rows = {line.split()[1]: line.split() for line in lines if line.startswith("crash ")}
    assert set(rows) == {"QMA", "QMB"}
    for row in rows.values():
        # claim, tried (the budget), of, survived = tried, nothing detected, lost or failed
        assert row[2] == "survive" and row[3] == "8" and int(row[4]) > 8 and row[5] == "8"
        assert row[6:] == ["0", "0", "0", "0"]
    assert lines[-1].startswith("batches in doubt resolved: commit ")


def test_mqlog_torture_channel_scenarios_as_json():
    out = mqlog(*ARGS, "--platform", "distributed,zos", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert [q["platform"] for q in data["topology"]] == ["distributed", "zos"]
    assert [c["fault"] for c in data["classes"]] == ["crash QMA", "crash QMB"]
    assert all(c["tried"] == 8 and c["survived"] == 8 and c["claim"] == "survive" for c in data["classes"])
    assert data["params"]["messages_per_putter"] == 5


@pytest.mark.parametrize("extra, words", [
    (["--platform", "zos"], ["--platform", "SENDER,RECEIVER"]),
    (["--matrix", "default"], ["--platform", "not --matrix"]),
    (["--platform", "zos,distributed", "--master", "local[2]"], ["--master"]),
    (["--platform", "zos,distributed", "--faults", "torn"], ["--faults", "crash"]),
    (["--platform", "zos,distributed", "--set", "log.LogFilePages=64"], ["--set", "log.LogFilePages"]),
    (["--platform", "zos,distributed", "--set", "workload.messages_per_putter=many"], ["workload.messages_per_putter", "whole number"]),
    (["--platform", "zos,mvs"], ["--platform", "mvs"]),
])
def test_mqlog_torture_refuses_what_channel_scenarios_cannot_take_before_any_work(extra, words):
    out = mqlog("torture", "--workload", "channel-feed", *extra)
    one_line_error(out, *words)


def test_two_platforms_with_a_single_queue_manager_workload_are_refused():
    one_line_error(mqlog("torture", "--workload", "putget", "--platform", "zos,distributed"), "--workload",
                   "channel-feed")


def test_mqlog_torture_help_documents_channel_scenarios():
    out = mqlog("torture", "--help")
    text = " ".join(out.stdout.split())
    assert "SENDER,RECEIVER" in text and "channel-request-reply" in text and "crash QMA" in text
