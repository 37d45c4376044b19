"""Bad input everywhere: every file the tool reads, given random or mutated bytes,
gives either a correct result or mqlog's own one-line error naming the file (and where
in it) – never a traceback, a hang or a memory blow-up from a corrupt length.

Each reader is fed hypothesis-mutated copies of a valid file (bytes flipped, cut short,
lengthened, spliced) and plain random bytes. The readers: workload spec TOML, device profile
TOML, qm.ini, compare matrix TOML, sweep TOML, run.json / metrics.json / journal.json, and a
run's own files – log extents and control file (distributed), active log data sets and BSDS
(z/OS), queue files – read back by restart, ``mqlog print`` and the log scanner.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mqlog.core.errors import MqlogError
from mqlog.core.workload.run import RunConfig, restart_run, run_workload
from mqlog.core.workload.spec import BUILTINS, build_spec
from mqlog.core.disk.storage import MemoryStorage
from mqlog.platforms import choose

FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                       HealthCheck.too_slow])


@st.composite
def mutated(draw, original: bytes):
    """``original`` with a few random edits: byte changes, a cut, an extension, a splice."""
    data = bytearray(original)
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["flip", "set", "cut", "extend", "splice", "zero"]))
        at = draw(st.integers(0, max(0, len(data) - 1)))
        if kind == "flip" and data:
            data[at] ^= 1 << draw(st.integers(0, 7))
        elif kind == "set" and data:
            data[at] = draw(st.integers(0, 255))
        elif kind == "cut":
            del data[at:]
        elif kind == "extend":
            data += draw(st.binary(max_size=64))
        elif kind == "splice":
            chunk = draw(st.binary(min_size=1, max_size=16))
            data[at:at + len(chunk)] = chunk
        elif kind == "zero" and data:
            data[at:at + draw(st.integers(1, 64))] = bytes(min(64, len(data) - at))
    return bytes(data)


def inputs(original: bytes):
    return st.one_of(mutated(original), st.binary(max_size=300))


def either_result_or_our_error(call, *names: str):
    """Run ``call``; an MqlogError must be one line and name one of ``names`` (the file)."""
    try:
        return call()
    except MqlogError as exc:
        text = str(exc)
        assert "\n" not in text.strip() and "Traceback" not in text
        assert not names or any(n in text for n in names), text
        return None


# -- text files ------------------------------------------------------------------------------

SPEC = b'workload = "putget-pairs"\nseed = 3\n[params]\npairs = 2\nmessage_size = 100\n[log]\nLogFilePages = 64\n'
PROFILE = b'[mydisk]\nbase = "san"\nwrite_latency_us = 900\nread_latency_us = 300\n'
QM_INI = (b"Log:\n   LogPrimaryFiles=3\n   LogSecondaryFiles=2\n   LogFilePages=4096\n   LogType=CIRCULAR\n"
          b"   LogBufferPages=0\n   LogPath=/var/mqm/log/QM1/\n   LogWriteIntegrity=TripleWrite\n")
MATRIX = b'[[config]]\nname = "a"\nplatform = "zos"\n[config.log]\nCOMPLOG = "RLE"\n'
SWEEP = (b'workload = "putget-pairs"\nseeds = [0, 1]\n[params]\nmessages_per_pair = 5\n[grid]\npairs = [1, 2]\n'
         b'[[config]]\nname = "d"\nplatform = "distributed"\n[config.sweep]\nLogPrimaryFiles = [2, 3]\n')


@FUZZ
@given(data=inputs(SPEC))
def test_workload_spec_files(tmp_path, data):
    from mqlog.core.workload.spec import load_spec_file

    path = tmp_path / "spec.toml"
    path.write_bytes(data)
    either_result_or_our_error(lambda: load_spec_file(path, BUILTINS), "spec.toml")


@FUZZ
@given(data=inputs(PROFILE))
def test_device_profile_files(tmp_path, data):
    from mqlog.core.disk.devices import load_profiles

    path = tmp_path / "disks.toml"
    path.write_bytes(data)
    either_result_or_our_error(lambda: load_profiles(path), "disks.toml")


HOSTS = b'[myhost]\nbase = "v93-xeon"\ncores = 4\nlog_record_us = 7.5\n'


@FUZZ
@given(data=inputs(HOSTS))
def test_host_profile_files(tmp_path, data):
    from mqlog.core.host.profiles import load_hosts

    path = tmp_path / "hosts.toml"
    path.write_bytes(data)
    either_result_or_our_error(lambda: load_hosts(path), "hosts.toml")


@FUZZ
@given(data=inputs(QM_INI))
def test_qm_ini(data):
    from mqlog.distributed.config import LogConfig

    either_result_or_our_error(lambda: LogConfig.from_qm_ini(data.decode("utf-8", "replace"), source="qm.ini"),
                               "qm.ini")


@FUZZ
@given(data=inputs(MATRIX))
def test_compare_matrix_files(tmp_path, data):
    from mqlog.spark.compare import check_matrix, load_matrix

    path = tmp_path / "matrix.toml"
    path.write_bytes(data)
    either_result_or_our_error(lambda: check_matrix(load_matrix(path)), "matrix.toml", "configuration")


@FUZZ
@given(data=inputs(SWEEP))
def test_sweep_files(tmp_path, data):
    from mqlog.spark.sweep import cells, load_sweep

    path = tmp_path / "grid.toml"
    path.write_bytes(data)
    either_result_or_our_error(lambda: cells(load_sweep(str(path))[1], origin=str(path)), "grid.toml")


def test_a_configuration_name_cannot_escape_the_output_directory(tmp_path):
    from mqlog.spark.compare import load_matrix

    for name in ("../outside", "/etc", "a/b", ".hidden", ""):
        path = tmp_path / "m.toml"
        path.write_text(f'[[config]]\nname = {json.dumps(name)}\nplatform = "zos"\n')
        with pytest.raises(MqlogError, match="name"):
            load_matrix(path)


# -- a run's files ---------------------------------------------------------------------------

def small_run(platform: str, log: dict | None = None, crash_after: int | None = 40):
    choice = choose(platform)
    values = choice.configure(dict(log or {}))
    spec = build_spec(BUILTINS["putget-pairs"], {"pairs": "2", "messages_per_pair": "15"}, origin="test")
    result = run_workload(RunConfig(platform, choice.maker(values), values, spec, seed=2,
                                    crash_after_writes=crash_after), MemoryStorage())
    return choice.maker(values), result


@pytest.fixture(scope="module")
def dist_run():
    return small_run("distributed", {"LogFilePages": "64", "LogType": "LINEAR"})


@pytest.fixture(scope="module")
def zos_run():
    return small_run("zos", {"ACTIVE_LOG_CIS": "16"})


def copy_with(storage, name: str, data: bytes) -> MemoryStorage:
    out = MemoryStorage()
    for n in storage.list():
        out.write(n, 0, storage.read(n, 0, storage.size(n)))
    out.replace(name, data)
    return out


def restart_on(maker, storage, names, journal=None, clean=None):
    """Restart on damaged files: our error naming a file, or a restart whose queues check
    out against ``journal`` (every message read back as MQGET would). A restart that
    "succeeds" with messages lost or wrong is allowed only where restart said so (every wrong
    message on a queue it marked damaged, AMQ7472), or where the damage hit the log's last
    written page on a single copy – which cannot be told from a torn last write (the one
    expected loss of docs/reliability.md); ``clean`` is the undamaged restart's report."""
    from mqlog.core.format.pages import PAGE_SIZE

    def restart_and_read():
        report, verdict, qm = restart_run(maker, storage, journal=journal)
        for queue in qm.queues.values():
            for message in list(queue.messages.values()):
                queue.read(message)
        return report, verdict

    done = either_result_or_our_error(restart_and_read, *names)
    if done is None or journal is None:
        return
    report, verdict = done
    if verdict.ok:
        return
    wrong_queues = {journal.messages[d[1]].queue for d in verdict.details
                    if len(d) > 1 and d[1] in journal.messages}
    if report.queues_damaged and wrong_queues <= set(report.queues_damaged):
        return  # detected: restart marked the queues damaged
    end, clean_end = report.end_of_log, clean.end_of_log
    last_page = clean_end.page_address - PAGE_SIZE if clean_end.page_address is not None else None
    assert end is not None and end.reason != "end" and end.page_address == last_page, (
        "restart succeeded over lost or wrong messages with nothing said", verdict.as_dict(), verdict.details[:5],
        end, clean_end)


def file_strategy(run, predicate):
    maker, result = run
    disk = result.storage.durable
    names = [n for n in disk.list() if predicate(n)]
    assert names, disk.list()
    return st.sampled_from(names).flatmap(
        lambda n: st.tuples(st.just(n), mutated_in_use(disk.read(n, 0, disk.size(n)))))


def mutated_in_use(original: bytes):
    """``original`` mutated where it holds something: log extents and data sets are
    formatted to their full size and mostly zeros, and edits there would seldom reach the
    log restart reads. A mutation that shortens the part in use truncates the file there;
    any other keeps the rest of the file after it."""
    used = len(original.rstrip(b"\0")) or len(original)
    return st.one_of(mutated(original[:used]).map(lambda m: m if len(m) < used else m + original[len(m):]),
                     st.integers(0, max(0, used - 1)).map(lambda at: original[:at]))  # `truncate -s`


@pytest.mark.parametrize("which", ["dist_run", "zos_run"])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_every_file_of_a_run_damaged_then_restarted(request, which, data):
    """Distributed: log extents, control file, queue files; z/OS: active data sets, BSDS,
    queue files."""
    run = request.getfixturevalue(which)
    maker, result = run
    name, damaged = data.draw(file_strategy(run, lambda n: True))
    disk = copy_with(result.storage.durable, name, damaged)
    restart_on(maker, disk, result.storage.durable.list(), journal=result.journal,
               clean=clean_restart(which, run))


_CLEAN: dict = {}


def clean_restart(which, run):
    """The undamaged run's restart report (once per run), verified: the baseline the fuzzed
    restarts are judged against."""
    if which not in _CLEAN:
        maker, result = run
        report, verdict, _ = restart_run(maker, copy_with(result.storage.durable, "x.unused", b""),
                                         journal=result.journal)
        assert verdict.ok, verdict.as_dict()
        _CLEAN[which] = report
    return _CLEAN[which]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_log_scanner_and_print_on_damaged_logs(zos_run, dist_run, tmp_path_factory, data):
    """The read-only tools: ``mqlog print`` (z/OS) and the raw log scanner (distributed)."""
    from mqlog.core.log.reader import scan
    from mqlog.rundir import QM_DIR, copy_files, write_json
    from mqlog.zosrun import print_run

    maker, result = dist_run
    name, damaged = data.draw(file_strategy(dist_run, lambda n: n.endswith(".LOG")))
    disk = copy_with(result.storage.durable, name, damaged)
    either_result_or_our_error(lambda: scan(maker(disk).space, 0), *disk.list())

    zmaker, zresult = zos_run
    zname, zdamaged = data.draw(file_strategy(zos_run, lambda n: n.startswith(("LOGCOPY", "BSDS"))))
    zdisk = copy_with(zresult.storage.durable, zname, zdamaged)
    out = tmp_path_factory.mktemp("zrun")
    copy_files(zdisk, out / QM_DIR)
    write_json(out / "run.json", {"version": 1, "platform": "zos", "log": {"ACTIVE_LOG_CIS": 16}, "device": "ssd"})
    either_result_or_our_error(lambda: print_run(out), *zdisk.list(), str(out))


# -- JSON a run leaves ----------------------------------------------------------------------

@FUZZ
@given(data=inputs(b'{"version": 1, "platform": "zos", "log": {"COMPLOG": "RLE"}, "device": "ssd"}'))
def test_run_json(tmp_path, data):
    from mqlog.rundir import load_run, open_platform

    (tmp_path / "run.json").write_bytes(data)
    (tmp_path / "qm").mkdir(exist_ok=True)

    def read():
        run, values, platform = open_platform(tmp_path)
        platform.space.storage.close()
        return run

    either_result_or_our_error(read, "run.json", str(tmp_path))
    either_result_or_our_error(lambda: load_run(tmp_path), "run.json")


@pytest.fixture(scope="module")
def journal_doc(dist_run):
    return dist_run[1].journal.to_json()


def json_mutations(doc):
    """A JSON document with one value replaced (by a value of another type, an out-of-range
    number, a huge string) or one key removed, anywhere in it: what a hand-edited or damaged
    journal looks like once it still parses."""
    def paths(node, prefix=()):
        yield prefix
        if isinstance(node, dict):
            for k, v in node.items():
                yield from paths(v, prefix + (k,))
        elif isinstance(node, list):
            for i, v in enumerate(node[:5]):
                yield from paths(v, prefix + (i,))

    replacement = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70), st.floats(allow_nan=True),
                            st.text(max_size=20), st.just("x" * 10_000), st.lists(st.integers(), max_size=3),
                            st.dictionaries(st.text(max_size=5), st.integers(), max_size=3), st.just("DELETE"))

    @st.composite
    def mutate(draw):
        import copy

        out = copy.deepcopy(doc)
        for _ in range(draw(st.integers(1, 3))):
            where = draw(st.sampled_from(list(paths(out))[1:] or [()]))
            if not where:
                return draw(replacement)
            parent = out
            for key in where[:-1]:
                parent = parent[key]
            value = draw(replacement)
            if value == "DELETE" and isinstance(parent, dict):
                del parent[where[-1]]
            else:
                parent[where[-1]] = value
        return out
    return mutate()


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_journal_json(journal_doc, data):
    from mqlog.core.workload.journal import Journal

    doc = data.draw(json_mutations(journal_doc))
    either_result_or_our_error(lambda: Journal.from_json(doc, source="journal.json"), "journal.json")


def test_the_journal_mutations_reach_the_reader(journal_doc):
    """Not vacuous: the unmutated journal reads back, and a mutated one is refused by name."""
    from mqlog.core.workload.journal import Journal

    assert Journal.from_json(journal_doc, source="journal.json").messages
    broken = dict(journal_doc)
    broken[next(iter(broken))] = "not what it should be"
    with pytest.raises(MqlogError, match="journal.json"):
        Journal.from_json(broken, source="journal.json")


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_log_contents_json(data):
    """log_contents.json as mqlog report reads it: a shape check that refuses by name what
    the report could not draw, and the report draws what it accepts."""
    from mqlog.spark.contents import check_contents
    from mqlog.spark.htmlreport import contents_plot, contents_table

    good = {"a": {"records": 10, "bytes": 1000, "by_type": {"PUT": {"records": 4, "bytes": 800}},
                  "uows": {"committed": {"uows": 2, "records_per_uow": 3.0, "most_records": 3}},
                  "compression": {"RLE": {"puts": 4, "payload_bytes": 900, "stored_bytes": 600, "ratio": 0.67}},
                  "shunt_records": 0, "shunted_bytes": 0, "bad_rows": []}}
    doc = data.draw(json_mutations(good))
    accepted = either_result_or_our_error(lambda: check_contents(doc, "log_contents.json") or True,
                                          "log_contents.json")
    if accepted:
        names = list(doc)
        contents_table(names, doc)
        if names:
            contents_plot(names, doc)


def test_results_directory_that_is_not_one(tmp_path):
    """``mqlog report`` on a directory whose Parquet is garbage: one line, not a JVM trace."""
    import subprocess
    import sys

    results = tmp_path / "results.parquet"
    results.mkdir()
    (results / "part-00000.parquet").write_bytes(b"PAR1 this is not parquet")
    (tmp_path / "log_contents.json").write_text("[1, 2")
    out = subprocess.run([sys.executable, "-m", "mqlog", "report", str(tmp_path)], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 2, out.stderr
    assert "Traceback" not in out.stderr and str(tmp_path) in out.stderr
    assert len([line for line in out.stderr.splitlines() if line.startswith("mqlog: error")]) == 1


def test_file_readers_never_evaluate_their_input():
    """No pickle, eval or exec anywhere in the source: nothing read can be evaluated."""
    root = Path(__file__).resolve().parent.parent
    offenders = []
    for part in ("core", "distributed", "zos", "spark", "mqlog"):
        for path in (root / part).rglob("*.py"):
            for n, line in enumerate(path.read_text().splitlines(), 1):
                for word in ("pickle.load", "eval(", "exec(", "marshal.load", "yaml.load("):
                    if word in line:
                        offenders.append(f"{path.relative_to(root)}:{n}: {word}")
    assert offenders == []
