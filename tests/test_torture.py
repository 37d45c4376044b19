"""``mqlog torture``: the fault campaign finds what it is meant to find, and says why."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from mqlog.core.disk.faults import WriteRecord
from mqlog.core.workload.spec import BUILTINS, build_spec
from mqlog.platforms import choose
from mqlog.torture import DETECT, NOTHING, SURVIVE, Campaign, claims, in_place_writes

SMALL = {"pairs": "2", "messages_per_pair": "25"}


def campaign(platform: str, log: dict | None = None, *, budget: int = 15, faults=None,
             restart_mode: str = "9.1.1", workload: dict = SMALL, kind: str = "putget-pairs") -> Campaign:
    choice = choose(platform)
    values = choice.configure(dict(log or {}))
    spec = build_spec(BUILTINS[kind], workload, origin="test")
    kwargs = {"faults": tuple(faults)} if faults else {}
    return Campaign(platform, values, choice.maker(values), spec, seed=3, budget=budget, restart_mode=restart_mode,
                    **kwargs).run()


def counts(c: Campaign, fault: str) -> dict:
    return c.tallies[fault].counts


def test_triplewrite_survives_crashes_tears_and_crashes_in_restart():
    c = campaign("distributed")
    assert not c.failed
    for fault in ("crash", "torn", "restart"):
        tally = c.tallies[fault]
        assert tally.claim.level == SURVIVE
        assert tally.tried > 0 and tally.counts["survived"] == tally.tried, (fault, tally.counts)
    assert c.tallies["torn"].possible < c.physical_writes  # only writes over pages already written
    # a bit flip is survived (unread bytes, a repairable page) or refused with the file named
    flips = counts(c, "bitflip")
    assert flips["silent_loss"] == flips["error"] == 0 and flips["survived"] + flips["detected"] == 15
    refused = [d for _, d in c.tallies["bitflip"].examples.get("detected", [])]
    assert all(("offset" in d) or ("damaged" in d) for d in refused)


def test_the_restart_before_mq_911_survives_crashes_and_crashes_in_restart_too():
    """A campaign restarts the way it is told (--restart-mode): the legacy restart loads the
    queues one after another, so its load phase takes longer, and it is as crash-safe."""
    # The load phase loads the queues that units in flight at the crash touched, so the last
    # restart compared must have such units on more than one queue: with one (all putget-pairs
    # could give on main, the two phases then equal but for rounding) or none (since issue 38
    # the two pairs keep in step, a write carrying both putters' or both getters' units whole:
    # 1 of 64 crash points leaves a unit in flight) there is nothing to load one after another.
    # log-fill holds an uncommitted message on each of its 3 queues for the whole run.
    fill = {"queues": "3", "messages": "200", "transactions": "20"}
    legacy = campaign("distributed", budget=8, faults=("crash", "restart"), restart_mode="legacy",
                      workload=fill, kind="log-fill")
    modern = campaign("distributed", budget=8, faults=("crash", "restart"), workload=fill, kind="log-fill")
    assert not legacy.failed
    for fault in ("crash", "restart"):
        tally = legacy.tallies[fault]
        assert tally.tried > 0 and tally.counts["survived"] == tally.tried, (fault, tally.counts)
    assert legacy._last_report.queues_loaded == modern._last_report.queues_loaded == 3
    assert legacy._last_report.phases["load"] > modern._last_report.phases["load"] > 0


#: one putter and one getter: each commit's write carries one force, so it leaves its partial
#: last page to be rewritten by the next. (With two pairs – SMALL – most writes carry both
#: putters' forces and, since issue 38, a write carrying several forces closes its partial page
#: with padding: 5 rewrites in the run, none of them a loss when torn.)
ONE_PAIR = {"pairs": "1", "messages_per_pair": "25"}


def test_singlewrite_loses_under_a_torn_rewrite_and_the_report_says_why():
    c = campaign("distributed", {"LogWriteIntegrity": "SingleWrite"}, budget=25, faults=("torn",),
                 workload=ONE_PAIR)
    tally = c.tallies["torn"]
    # the scenario: partial pages rewritten in place, more of them than the budget tears
    assert tally.possible > tally.tried == 25
    assert tally.claim.level == NOTHING and "SingleWrite" in tally.claim.why
    assert tally.counts["expected_loss"] > 0 and tally.counts["silent_loss"] == 0
    assert not c.failed  # expected losses are not failures
    assert "expected losses" in c.table() and "SingleWrite" in c.table()


def test_zos_dual_logging_survives_the_loss_of_either_copy():
    c = campaign("zos", faults=("copy", "torn"))
    copy = c.tallies["copy"]
    assert copy.claim.level == SURVIVE and copy.tried == 15 and copy.counts["survived"] == 15
    assert counts(c, "torn")["survived"] == c.tallies["torn"].tried
    single = campaign("zos", {"TWOACTV": "NO", "TWOARCH": "NO"}, faults=("copy",))
    assert single.tallies["copy"].claim.level == NOTHING and single.tallies["copy"].tried == 0


def test_a_log_that_acknowledges_before_writing_is_caught(monkeypatch):
    """The campaign can fail: a writer that confirms a force before the bytes are on disk
    (a write-ahead bug) loses committed messages at a crash, and the campaign says so."""
    from mqlog.core.log.writer import LogWriter

    original = LogWriter.force

    def force(self, upto=None):
        original(self, upto)  # the write still happens, later
        event = self.env.event()
        event.succeed(self.durable)  # but the caller is told "on disk" at once: the bug
        return event

    monkeypatch.setattr(LogWriter, "force", force)
    c = campaign("distributed", budget=30, faults=("crash",))
    assert c.failed and counts(c, "crash")["silent_loss"] > 0
    assert "SILENT LOSS" in c.table()


def test_claims_follow_the_configuration():
    assert claims("distributed", {"LogWriteIntegrity": "TripleWrite"})["torn"].level == SURVIVE
    assert claims("distributed", {"LogWriteIntegrity": "SingleWrite"})["torn"].level == NOTHING
    assert claims("zos", {"TWOACTV": "YES"})["copy"].level == SURVIVE
    assert claims("zos", {"TWOACTV": "NO"})["torn"].level == NOTHING
    assert claims("zos", {})["bitflip"].level == DETECT


def test_in_place_writes_are_rewrites_of_pages_already_written():
    writes = [WriteRecord(1, "L", 0, 4096, False), WriteRecord(2, "L", 4096, 8192, False),
              WriteRecord(3, "L", 8192, 4096, False), WriteRecord(4, "C", 0, 100, False, "replace"),
              WriteRecord(5, "C", 0, 100, False, "replace"), WriteRecord(6, "M", 0, 512, False)]
    assert [w.number for w in in_place_writes(writes)] == [3]


def mqlog(*args):
    return subprocess.run([sys.executable, "-m", "mqlog", *args], capture_output=True, text=True, timeout=600)


def test_the_command_line_small_budget():
    out = mqlog("torture", "--platform", "zos", "--workload", "putget-pairs", "--set", "workload.pairs=2",
                "--set", "workload.messages_per_pair=20", "--budget", "6", "--json")
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert [c["fault"] for c in result["classes"]] == ["crash", "torn", "bitflip", "copy", "restart", "missing",
                                                       "stale", "lost", "misdirected", "fsync", "enospc"]
    for c in result["classes"]:
        assert c["silent_loss"] == c["errors"] == 0 and c["tried"] <= 6


@pytest.mark.parametrize("args, words", [
    (["--faults", "crash,flood"], ["'flood'", "crash, torn, bitflip, copy, restart, missing, stale, lost"]),
    (["--budget", "0"], ["--budget"]),
    (["--set", "log.TWOACTV=MAYBE"], ["TWOACTV"]),
])
def test_bad_options_are_one_line_errors(args, words):
    out = mqlog("torture", "--platform", "zos", "--workload", "putget-pairs", *args)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert all(w in out.stderr for w in words), out.stderr


def test_a_matrix_runs_one_campaign_per_configuration(tmp_path):
    matrix = tmp_path / "m.toml"
    matrix.write_text('[[config]]\nname = "single"\nplatform = "distributed"\n[config.log]\n'
                      'LogWriteIntegrity = "SingleWrite"\n[[config]]\nname = "dual"\nplatform = "zos"\n')
    out = mqlog("torture", "--matrix", str(matrix), "--workload", "putget-pairs", "--set", "workload.pairs=2",
                "--set", "workload.messages_per_pair=10", "--budget", "4", "--faults", "torn,copy", "--json")
    assert out.returncode == 0, out.stderr
    configs = {c["name"]: {k["fault"]: k for k in c["classes"]} for c in json.loads(out.stdout)["configs"]}
    assert configs["single"]["torn"]["claim"] == "nothing" and configs["dual"]["torn"]["claim"] == "survive"
    assert configs["dual"]["copy"]["survived"] == configs["dual"]["copy"]["tried"] == 4
    both = mqlog("torture", "--matrix", "default", "--platform", "zos", "--workload", "putget-pairs")
    assert both.returncode == 2 and "--platform or --matrix" in both.stderr


def test_a_refused_restart_breaks_a_survive_claim(monkeypatch):
    """A configuration that claims to survive crashes must restart after every one: a restart
    that refuses (even with the damage named) fails the campaign, it is not 'detected'."""
    import mqlog.torture.campaign as torture
    from mqlog.core.errors import LogCorruptionError

    def refuse(*args, **kwargs):
        raise LogCorruptionError("the log is damaged", source="S0000000.LOG", offset=0)

    monkeypatch.setattr(torture, "restart_run", refuse)
    c = campaign("distributed", budget=5, faults=("crash",))
    assert c.tallies["crash"].counts["detected"] == 5 and c.tallies["crash"].broken and c.failed
    assert "CLAIM BROKEN" in c.table()


def test_an_error_that_is_not_damage_is_an_error_not_a_detection(monkeypatch):
    import mqlog.torture.campaign as torture
    from mqlog.core.errors import StorageError

    def broken(*args, **kwargs):
        raise StorageError("memory: S0000000.LOG: no such file")

    monkeypatch.setattr(torture, "restart_run", broken)
    c = campaign("distributed", budget=3, faults=("crash", "restart"))
    assert c.tallies["crash"].counts["error"] == 3 and c.failed
    # the restart class could not even set up its scenarios: that is reported, not dropped
    assert c.tallies["restart"].counts["error"] > 0


def test_the_reference_platform_control_file_is_flipped_too():
    c = campaign("reference", budget=30, faults=("bitflip",))
    details = [d for _, d in c.tallies["bitflip"].examples.get("detected", [])]
    labels = [label for v in c.tallies["bitflip"].examples.values() for label, _ in v]
    assert c.tallies["bitflip"].tried > 0 and not c.failed
    assert any(".ctl" in label for label in labels) or any("control file" in d for d in details)


def test_a_bug_while_choosing_a_page_to_damage_is_an_error_not_no_scenario(monkeypatch):
    """Choosing a log page to damage restarts the queue manager first: a restart that fails
    with a bug (not damage) is the tool failing, counted as an error, never 'no page to
    damage' (which would quietly drop the scenario)."""
    import mqlog.torture.campaign as torture

    def broken(*args, **kwargs):
        raise TypeError("a bug in restart")

    monkeypatch.setattr(torture, "restart_run", broken)
    c = campaign("zos", budget=4, faults=("copy",))
    tally = c.tallies["copy"]
    assert tally.tried == 4 and tally.counts["error"] == 4 and c.failed
    assert all("TypeError" in d for _, d in tally.examples["error"])


# -- the device-level fault classes -------------------------------------------------------

NEW_CLASSES = ("missing", "lost", "misdirected", "fsync", "enospc")


@pytest.mark.parametrize("platform, log", [("distributed", {}), ("distributed", {"LogType": "LINEAR"}),
                                           ("zos", {}), ("zos", {"TWOACTV": "NO"})])
def test_every_new_class_runs_with_no_silent_loss_and_no_error(platform, log):
    """The small campaign CI keeps: every new class on both platforms, each scenario a fault
    that happened (or a file that was there to remove)."""
    c = campaign(platform, log, budget=12, faults=NEW_CLASSES)
    assert not c.failed, c.table()
    for fault in NEW_CLASSES:
        tally = c.tallies[fault]
        assert tally.tried > 0, fault
        assert tally.counts["silent_loss"] == tally.counts["error"] == 0, (fault, tally.counts)
    for fault in ("fsync", "enospc"):  # never acknowledged, so nothing to lose or refuse
        assert counts(c, fault)["survived"] == c.tallies[fault].tried, (fault, c.table())
    # removing files restart needs is seen: refused naming the file, or a queue marked damaged
    missing = c.tallies["missing"]
    assert missing.counts["detected"] > 0
    assert all(any(w in d for w in (".LOG", "LOGCOPY", "BSDS", "lfh", ".mqq", "CSQARC", "damaged"))
               for _, d in missing.examples.get("detected", []))


@pytest.mark.parametrize("platform, log", [("distributed", {}), ("distributed", {"LogWriteIntegrity": "SingleWrite"}),
                                           ("distributed", {"LogType": "LINEAR"}), ("zos", {}),
                                           ("zos", {"TWOACTV": "NO"})])
def test_stale_files_are_refused_or_an_expected_loss_past_the_high_water_mark(platform, log):
    """Issue 37's fault class: files present and full-size that disagree with the control
    data (zeroed, swapped, restored from an earlier crash point, the control data restored,
    a hole of 17-1,000 pages). Refused naming the file, or survived; a loss only where the
    damage lies past the control data's high-water mark, never silent."""
    c = campaign(platform, log, budget=40, faults=("stale",))
    tally = c.tallies["stale"]
    assert tally.tried > 0 and not c.failed, c.table()
    assert tally.counts["silent_loss"] == tally.counts["error"] == 0, tally.counts
    assert tally.counts["detected"] > 0, tally.counts
    for _, detail in tally.examples.get("detected", []):
        assert any(w in detail for w in ("AMQ6762E", "CSQJ102E", "high-water mark", "bad pages in a row",
                                         "older than the queue files", "good pages follow", "good page follows",
                                         "damaged", "forced log records are gone", "missing", "short of")), detail
    for _, detail in tally.examples.get("expected_loss", []):
        assert "past the control data's high-water mark" in detail, detail


def test_a_lying_cache_loses_on_a_single_copy_and_the_report_says_why():
    c = campaign("distributed", {"LogWriteIntegrity": "SingleWrite"}, budget=40, faults=("lost",))
    tally = c.tallies["lost"]
    assert tally.claim.level == NOTHING and "never makes" in tally.claim.why
    assert tally.counts["expected_loss"] > 0 and tally.counts["detected"] > 0  # the last write / a hole
    assert not c.failed


def test_a_writer_that_acknowledges_after_a_failed_fsync_is_caught(monkeypatch):
    """The fsync class can fail: a writer that treats a failed sync as done (the fsyncgate
    bug) acknowledges commits whose data the kernel dropped, and the campaign says so."""
    from mqlog.core.log import writer as writer_module
    from mqlog.core.errors import StorageError

    original = writer_module.LogWriter._physical_write

    def ignoring_sync_errors(self, pw):
        storage = self.space.storage
        sync = storage.sync

        def careless(name):
            try:
                sync(name)
            except StorageError:
                pass

        storage.sync = careless
        try:
            yield from original(self, pw)
        finally:
            del storage.sync

    monkeypatch.setattr(writer_module.LogWriter, "_physical_write", ignoring_sync_errors)
    c = campaign("distributed", budget=40, faults=("fsync",))
    got = counts(c, "fsync")
    # the dropped pages are a hole the reader refuses (a broken survive claim) or a lost end
    assert c.failed and got["silent_loss"] + got["detected"] > 0, got


def test_the_new_classes_are_reported_in_json():
    out = subprocess.run([sys.executable, "-m", "mqlog", "torture", "--platform", "zos", "--workload",
                          "putget-pairs", "--set", "workload.pairs=2", "--set", "workload.messages_per_pair=10",
                          "--faults", ",".join(NEW_CLASSES), "--budget", "3", "--json"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    classes = {c["fault"]: c for c in json.loads(out.stdout)["classes"]}
    assert set(classes) == set(NEW_CLASSES)
    for c in classes.values():
        assert {"tried", "survived", "detected", "expected_loss", "silent_loss", "errors"} <= set(c)


def test_a_campaign_runs_on_its_host_and_carries_it_to_spark_executors():
    """The campaign's runs are configured with its host, what an executor rebuilds has the
    same host, and a bad --host is a one-line error before anything runs."""
    from mqlog.spark.torture import describe, rebuild

    choice = choose("distributed")
    values = choice.configure({})
    spec = build_spec(BUILTINS["putget-pairs"], SMALL, origin="test")
    one = Campaign("distributed", values, choice.maker(values), spec, seed=3, budget=2, host="v91-xeon",
                   faults=("crash",))
    assert one._config().host == "v91-xeon"
    assert rebuild(describe(one)).host == "v91-xeon" and one.as_dict()["host"] == "v91-xeon"
    out = mqlog("torture", "--platform", "reference", "--workload", "putget-pairs", "--set", "workload.pairs=2",
                "--set", "workload.messages_per_pair=5", "--faults", "crash", "--budget", "2", "--host", "laptop")
    assert out.returncode == 2 and "unknown host profile 'laptop'" in out.stderr and "Traceback" not in out.stderr


def test_the_campaign_runs_and_restarts_with_the_queue_manager_attributes_set():
    """--set qmgr.MAXUMSGS reaches the recorded run (a unit of work refused beyond 5 puts logs
    far less) and the executors' copy of the campaign (mqlog.spark.torture's plain dict)."""
    from mqlog.spark.torture import describe, rebuild

    fill = ["--workload", "log-fill", "--set", "workload.queues=1", "--set", "workload.transactions=1",
            "--set", "workload.messages=2000", "--faults", "crash", "--budget", "2", "--json"]
    default = mqlog("torture", "--platform", "reference", *fill)
    small = mqlog("torture", "--platform", "reference", *fill, "--set", "qmgr.MAXUMSGS=5")
    assert default.returncode == small.returncode == 0, small.stderr
    writes = json.loads(default.stdout)["physical_writes"], json.loads(small.stdout)["physical_writes"]
    assert writes[1] < writes[0] / 4, writes
    choice = choose("zos")
    values = choice.configure({})
    spec = build_spec(BUILTINS["log-fill"], {}, origin="test")
    c = Campaign("zos", values, choice.maker(values), spec, qmgr={"MAXUMSGS": 5, "MAXDEPTH": 9})
    assert rebuild(describe(c)).qmgr == {"MAXUMSGS": 5, "MAXDEPTH": 9}


def test_a_new_fault_class_plugs_in_with_one_registry_entry(monkeypatch):
    """A fault class is one entry of the registry (its claim, points, plan and injection):
    the campaign plans, injects, judges and reports it with nothing else naming it. Here a
    crash at every fifth write, injected as the crash class injects it."""
    from mqlog.torture import FAULTS, FaultClass

    def points(c, rng, claimed):
        return list(range(0, c.physical_writes, 5))

    def plan(c, k, rng):
        return f"crash at write {k} (every fifth)", k, (k,)

    def inject(c, cursor, scenario):
        (k,) = scenario.args
        return c._check(cursor.image(k), cursor.journal(k))

    monkeypatch.setitem(FAULTS, "fifth", FaultClass("fifth", claims("distributed", {})["crash"], points, plan,
                                                    inject, planned=len(FAULTS)))
    c = campaign("distributed", budget=1000, faults=("fifth",))
    tally = counts(c, "fifth")
    assert c.tallies["fifth"].possible == len(range(0, c.physical_writes, 5)) > 3
    assert sum(tally.values()) == c.tallies["fifth"].possible and tally["survived"] == c.tallies["fifth"].possible
    assert c.table().splitlines()[1].split()[:4] == ["fifth", "survive", str(tally["survived"]),
                                                     str(c.tallies["fifth"].possible)]
    assert [t["fault"] for t in c.as_dict()["classes"]] == ["fifth"]


def test_a_platform_decides_its_own_claims_where_its_log_design_does(monkeypatch):
    """The generic claim of each class holds unless the platform's descriptor says otherwise:
    the reference platform, which rewrites partial pages in place, claims nothing against a
    torn rewrite; give its descriptor a spare-copy claim and the campaign holds it to that."""
    import attrs

    from mqlog import platforms

    assert claims("reference", {})["torn"].level == NOTHING
    assert claims("reference", {})["crash"].level == SURVIVE
    patched = attrs.evolve(platforms.PLATFORMS["reference"],
                           fault_claims=lambda values: {"torn": (SURVIVE, "a test's claim")})
    monkeypatch.setitem(platforms.PLATFORMS, "reference", patched)
    assert claims("reference", {})["torn"].level == SURVIVE
    c = campaign("reference", budget=40, faults=("torn",))
    # the reference log does lose to a torn rewrite: under a claim to survive, that is a
    # silent loss and the campaign fails (under its own claim it is an expected loss)
    assert counts(c, "torn")["silent_loss"] > 0 and c.failed


def test_the_reference_platform_claims_only_what_its_control_data_can_check():
    """The reference log's control data keeps no high-water mark, so it cannot tell a log cut
    short after its last checkpoint from a crash's end: it claims nothing against a missing or
    short file (the platforms with one claim to detect it), and a campaign there says so
    rather than failing with a silent loss."""
    assert claims("reference", {})["missing"].level == NOTHING
    assert claims("distributed", {})["missing"].level == claims("zos", {})["missing"].level == DETECT
    c = campaign("reference", budget=20, faults=("missing",))
    t = counts(c, "missing")
    assert t["silent_loss"] == 0 and t["error"] == 0 and not c.failed
    assert t["detected"] > 0  # a deleted or badly cut file is still refused
