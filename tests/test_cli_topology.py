"""``mqlog topology``, ``chstatus`` and ``resolve`` (issue 42) through the real entry point: a
topology kept as a run directory per queue manager, a crash that leaves a sender in doubt (shown
by DISPLAY CHSTATUS SAVED), restart with channel resolution and end-to-end verification, RESOLVE
CHANNEL by hand (the wrong action is caught as a duplicate), and bad specs refused before any
work."""

from __future__ import annotations

import json

import pytest

from clikit import mqlog

SMALL = ["--set", "workload.requesters=2", "--set", "workload.responders=2", "--set", "workload.requests=10"]


def _json(result) -> dict:
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_the_built_in_topologies_are_listed_with_their_queue_managers_and_channels():
    listed = _json(mqlog("topology", "list", "--json"))["topologies"]
    names = {t["name"] for t in listed}
    assert {"zos-linux", "zos-linux-feed", "linux-feed"} <= names
    assert all(t["channels"] and len(t["qmgrs"]) >= 2 for t in listed)


def test_a_topology_run_keeps_a_run_directory_each_queue_manager_that_their_tools_read(tmp_path):
    out = tmp_path / "t"
    doc = _json(mqlog("topology", "run", "zos-linux", *SMALL, "--out", out, "--json"))
    assert set(doc["qmgrs"]) == {"ZQM1", "LQM1"}
    assert doc["delivery"]["ZQM1.TO.LQM1"] == {"delivered": 20, "waiting": 0, "lost": 0, "duplicated": 0}
    assert doc["qmgrs"]["ZQM1"]["round_trips"] == 20
    for name in ("ZQM1", "LQM1"):
        assert (out / name / "run.json").is_file() and (out / name / "journal.json").is_file()
    # each queue manager's directory is an ordinary run directory: its platform's tools read it
    printed = mqlog("print", out / "ZQM1")
    assert printed.returncode == 0 and "SYSTEM.CHANNEL.SYNCQ" in printed.stdout
    dumped = mqlog("dmpmqlog", out / "LQM1")
    assert dumped.returncode == 0, dumped.stderr
    # one end restarted on its own keeps its name: run.json says it, its messages say it
    assert json.loads((out / "LQM1" / "run.json").read_text())["qm_name"] == "LQM1"
    before = (out / "LQM1" / "AMQERR01.LOG").read_text()
    restarted = mqlog("restart", out / "LQM1", "--verify")
    assert restarted.returncode == 0, restarted.stderr
    added = (out / "LQM1" / "AMQERR01.LOG").read_text()[len(before):]
    assert "queue manager 'LQM1' started" in added and "'QM1'" not in added


def _in_doubt_point() -> int:
    """A storage write of ZQM1 after which a crash leaves its sender with a batch in doubt that
    LQM1 had committed (found in memory, through the same spec the command line reads)."""
    from mqlog.core.disk.storage import MemoryStorage
    from mqlog.core.workload.channels import receiver_position, in_doubt_batches
    from mqlog.core.workload.run import restart_run
    from mqlog.core.workload.topology import run_topology
    from mqlog.topology import load

    sets = {"workload": {"requesters": "2", "responders": "2", "requests": "10"}}
    writes = run_topology(load("zos-linux", sets).config, {"ZQM1": MemoryStorage(), "LQM1": MemoryStorage()}
                          ).metrics["ZQM1"]["storage_writes"]
    for k in range(writes // 3, writes):
        cfg = load("zos-linux", sets, crash=f"ZQM1:{k}").config
        result = run_topology(cfg, {"ZQM1": MemoryStorage(), "LQM1": MemoryStorage()})
        qms = {q.name: restart_run(q.make_platform, result.storages[q.name].durable, device=q.device,
                                   qm_config=q.qm_config)[2] for q in cfg.qmgrs}
        doubt = in_doubt_batches(qms["ZQM1"], "ZQM1.TO.LQM1")
        if doubt and receiver_position(qms["LQM1"], "ZQM1.TO.LQM1")[1] == doubt[0][1].luwid:
            return k
    pytest.fail("no crash point left ZQM1's sender in doubt with a batch LQM1 had committed")


def _crashed_in_doubt(tmp_path):
    out = tmp_path / "crashed"
    ran = mqlog("topology", "run", "zos-linux", *SMALL, "--out", out, "--crash", f"ZQM1:{_in_doubt_point()}", "--json")
    assert _json(ran)["crashed"] == "ZQM1"
    rows = _json(mqlog("chstatus", out, "--json"))["chstatus"]
    sender = next(r for r in rows if r["CHANNEL"] == "ZQM1.TO.LQM1" and r["CHLTYPE"] == "SDR")
    receiver = next(r for r in rows if r["CHANNEL"] == "ZQM1.TO.LQM1" and r["CHLTYPE"] == "RCVR")
    assert sender["INDOUBT"] == "YES" and receiver["LSTLUWID"] == sender["CURLUWID"], rows
    return out, sender, receiver


def test_chstatus_shows_the_batch_in_doubt_and_restart_resolves_it_by_the_receivers_luwid(tmp_path):
    out, sender, receiver = _crashed_in_doubt(tmp_path)
    assert sender["CURSEQNO"] > sender["LSTSEQNO"] and receiver["LSTSEQNO"] == sender["CURSEQNO"]
    restarted = _json(mqlog("topology", "restart", out, "--verify", "--json"))
    assert restarted["ok"]
    assert [d["committed"] for d in restarted["resolved"]["ZQM1.TO.LQM1"]] == [True]  # the receiver had it
    assert all(d["lost"] == d["duplicated"] == 0 for d in restarted["delivery"].values())
    after = _json(mqlog("chstatus", out, "--json"))["chstatus"]
    assert all(r["INDOUBT"] == "NO" for r in after)


def test_resolve_by_hand_with_the_wrong_action_is_caught_as_a_duplicate(tmp_path):
    # the receiver committed the batch; RESOLVE ... ACTION(BACKOUT) puts its messages back on
    # the transmission queue, to be sent again: IBM's warning, shown by the end-to-end check
    out, _sender, _receiver = _crashed_in_doubt(tmp_path)
    resolved = _json(mqlog("resolve", out, "--channel", "ZQM1.TO.LQM1", "--action", "backout", "--json"))
    assert [d["committed"] for d in resolved["resolved"]] == [False]
    plain = _json(mqlog("topology", "restart", out, "--json"))  # without --verify: restarted, not judged
    assert "delivery" not in plain and "verdicts" not in plain
    again = mqlog("topology", "restart", out, "--verify", "--json")
    assert again.returncode == 1
    assert json.loads(again.stdout)["delivery"]["ZQM1.TO.LQM1"]["duplicated"] > 0


@pytest.mark.parametrize("args, says", [
    (["--set", "channel.BATCHSZ=0"], "BATCHSZ"),
    (["--set", "workload.pairs=3"], "pairs"),
    (["--set", "link.latency_us=-5"], "latency_us"),
    (["--crash", "ZQM1"], "QMGR:N"),
    (["--crash", "QMX:10"], "QMX"),
    (["--set", "bogus.x=1"], "SECTION"),
])
def test_bad_input_is_refused_naming_it_before_anything_is_written(tmp_path, args, says):
    out = tmp_path / "never"
    result = mqlog("topology", "run", "zos-linux", "--out", out, *args)
    assert result.returncode == 2 and says in result.stderr and "Traceback" not in result.stderr
    assert not out.exists()


def test_a_spec_file_with_an_unknown_field_or_platform_is_refused_naming_the_file_and_field(tmp_path):
    spec = tmp_path / "bad.toml"
    spec.write_text('workload = "channel-feed"\n[[qmgr]]\nname = "A"\nplatform = "vms"\n'
                    '[[qmgr]]\nname = "B"\nplatform = "distributed"\n'
                    '[[channel]]\nname = "A.TO.B"\nfrom = "A"\nto = "B"\n')
    result = mqlog("topology", "run", spec)
    assert result.returncode == 2 and "bad.toml" in result.stderr and "qmgr[0]" in result.stderr
    spec.write_text(spec.read_text().replace('platform = "vms"', 'platform = "zos"\ncolour = "red"'))
    result = mqlog("topology", "run", spec)
    assert result.returncode == 2 and "colour" in result.stderr
