"""mqldt in mqlog (issue 23), through the real command line: ``mqlog mqldt`` (mqldt's test on a
device profile in virtual time, its report and CSV) and ``mqlog devices --from-mqldt`` (a
profile fitted to mqldt's output), the round trip between them, the committed samples of real
mqldt output, and bad input as one line naming the file and line or the option.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mqlog.core.disk.devices import get_profile
from clikit import mqlog, one_line_error

DATA = Path(__file__).parent / "data" / "mqldt"
#: how close a profile fitted to ``mqlog mqldt``'s own output must come to the profile it ran on
#: (the fit keeps four significant digits; mqldt's figures are whole nanoseconds and bytes)
TOLERANCE = 0.01


def ok(out):
    assert out.returncode == 0, (out.stdout, out.stderr)
    return out.stdout


def close(fitted: float, true: float) -> bool:
    return abs(fitted / true - 1) <= TOLERANCE


def measure(tmp_path: Path, device: str, csv: Path, *, many=(2, 4), bsize="64K") -> None:
    """mqldt's usual campaign, on a profile: several block sizes alone, then runs of several
    queue managers, each appending its section to the CSV as mqldt does."""
    ok(mqlog("mqldt", "--device", device, "--bsize", "4K,16K,64K,128K,256K", "--duration", 2, "--csvFile", csv))
    for qm in many:
        ok(mqlog("mqldt", "--device", device, "--bsize", bsize, "--qm", qm, "--duration", 2, "--csvFile", csv))


def test_a_profile_fitted_to_mqldt_on_san_gives_san_back_and_runs(tmp_path):
    csv, toml = tmp_path / "san.csv", tmp_path / "mine.toml"
    measure(tmp_path, "san", csv)
    text = csv.read_text()
    assert text.count("Blocksize,") == 3 and "Running MQLDT over 4 Queue Managers" in text
    report = ok(mqlog("devices", "--from-mqldt", csv, "--name", "mine", "-o", toml))
    fitted, san = get_profile(str(toml)), get_profile("san")
    assert fitted.name == "mine"
    assert close(fitted.write_latency_us, san.write_latency_us)
    assert close(fitted.write_bandwidth_mb_s, san.write_bandwidth_mb_s)
    # two writers at 64 KiB divide san's 1,600 MB/s path: that is where the channel shows
    assert close(fitted.channel_mb_s, san.channel_mb_s)
    assert fitted.queue_depth >= 4  # four writers never waited for a slot
    # what mqldt cannot measure is assumed, and the user is told so
    assert fitted.read_latency_us == fitted.write_latency_us and fitted.fs_calls == san.fs_calls
    assert "reads are assumed to cost as writes" in report and "the file system is assumed local" in report
    worst = next(line for line in report.splitlines() if line.startswith("worst error:"))
    assert float(worst.split()[2].rstrip("%")) < 100 * TOLERANCE
    # it loads as any user profile does, and a queue manager runs on it
    listed = ok(mqlog("devices", "--file", toml))
    assert "mine" in listed.split()
    run = json.loads(ok(mqlog("run", "--platform", "distributed", "--workload", "putget", "--set", "workload.apps=3",
                              "--set", "workload.messages=40", "--device", toml, "--json")))
    assert run["device_writes"] > 0 and "mine" in run["device"]


def test_a_queue_depth_the_writers_wait_for_is_found(tmp_path):
    narrow = tmp_path / "narrow.toml"
    narrow.write_text('[narrow]\nbase = "san"\nqueue_depth = 2\n', encoding="utf-8")
    csv = tmp_path / "narrow.csv"
    measure(tmp_path, str(narrow), csv, many=(2, 3, 4), bsize="16K")
    ok(mqlog("devices", "--from-mqldt", csv, "-o", tmp_path / "fitted.toml"))
    fitted, san = get_profile(str(tmp_path / "fitted.toml")), get_profile("san")
    assert fitted.name == "narrow" and fitted.queue_depth == 2
    assert close(fitted.write_latency_us, san.write_latency_us)
    assert close(fitted.write_bandwidth_mb_s, san.write_bandwidth_mb_s)


def test_the_console_report_fits_as_the_csv_does(tmp_path):
    csv = tmp_path / "run.csv"
    console = ok(mqlog("mqldt", "--device", "nfs1", "--bsize", "4K,64K,256K", "--duration", 2, "--csvFile", csv))
    pasted = tmp_path / "ticket.txt"
    pasted.write_text("$ mqldt --dir=/mnt/nfs --bsize=4K,64K,256K --duration=2\n" + console, encoding="utf-8")

    def profile_part(path):
        report = ok(mqlog("devices", "--from-mqldt", path, "--name", "nfs"))
        return report[report.index("[nfs]"):].replace(path.name, "")

    assert profile_part(pasted) == profile_part(csv)
    ok(mqlog("devices", "--from-mqldt", pasted, "-o", tmp_path / "nfs.toml"))
    assert close(get_profile(str(tmp_path / "nfs.toml")).write_latency_us, get_profile("nfs1").write_latency_us)


def test_mqlog_mqldt_keeps_mqldt_arithmetic(tmp_path):
    """Writes of exactly 0.7 s for 2 s, worked through mqldt's source by hand: the test ends
    at the first write past 2 s (3 writes); the first interval closes at the write that
    brings it past one second and is not rescaled (2 writes in 1.4 s: 8,192 bytes/s); the
    last, 0.7 s long, is rescaled to a second (4,096 / 0.7 = 5,851) and the average of the
    two is an integer mean (7,021)."""
    slow = tmp_path / "slow.toml"
    slow.write_text('[slow]\nbase = "san"\nwrite_latency_us = 699999\nwrite_bandwidth_mb_s = 4096\n'
                    'channel_mb_s = 4096\n', encoding="utf-8")
    csv = tmp_path / "slow.csv"
    console = ok(mqlog("mqldt", "--device", slow, "--bsize", "4K", "--duration", 2, "--csvFile", csv))
    header, row = csv.read_text().splitlines()
    assert header.split(",") == [
        "Blocksize", "Total writes to files", "Total bytes written to files",
        "Max bytes/sec written to files (over 1 sec interval)", "Min bytes/sec written to files (over 1 sec interval)",
        "Avg bytes/sec written to files", "Max latency of write (ns)", "Min latency of write (ns)",
        "Avg latency of write (ns)", "Min bytes/sec (slowest write)", "Max bytes/sec (fastest write)"]
    assert row == "4096,3,12288,8192,5851,7021,700000000,700000000,700000000,5851,5851"
    assert "Max latency of write (ns)      :     700,000,000 (#1)" in console
    assert "Avg bytes/sec written to files                       :           7,021" in console


def test_mqlog_mqldt_is_deterministic(tmp_path):
    def once(name):
        csv = tmp_path / name
        out = ok(mqlog("mqldt", "--device", "ssd", "--bsize", "8K", "--qm", 3, "--duration", 1, "--csvFile", csv))
        return out, csv.read_bytes()

    assert once("a.csv") == once("b.csv")


@pytest.mark.parametrize("sample", ["readme-128k.csv", "readme-128k-console.txt"])
def test_the_published_mqldt_sample_fits(tmp_path, sample):
    """mqldt's README example (128 KiB writes for 20 s: 46,790 writes, 306,754,931 bytes/s on
    average, 415,704 ns average latency) as its CSV and as pasted console output. One block
    size, so the fit says latency and bandwidth are not told apart. The time per write comes
    from the rate: 20 s over 46,790 writes is 427.4 µs each, which mqldt's integer running
    mean of latencies reports as 415.7."""
    toml = tmp_path / "readme.toml"
    report = ok(mqlog("devices", "--from-mqldt", DATA / sample, "-o", toml))
    assert "only one block size (131072 bytes)" in report
    fitted = get_profile(str(toml))
    assert fitted.write_time_us(131072) == pytest.approx(20e6 / 46790, rel=1e-3)
    row = next(line for line in report.splitlines() if line.split()[1:3] == ["1", "131072"])
    assert "415.7" in row and "306.8" in row


@pytest.mark.parametrize("content, words", [
    ("hello, world\nthis is not mqldt\n", ["line 1", "not mqldt output"]),
    ("Blocksize,Total writes to files,Avg bytes/sec written to files,Avg latency of write (ns)\n4096,10,400\n",
     ["line 2", "4 comma-separated whole numbers", "line 1"]),
    ("Blocksize,Total writes to files,Avg bytes/sec written to files\n4096,10,400\n",
     ["line 1", "Avg latency of write (ns)"]),
    ("Blocksize,Avg bytes/sec written to files,Avg latency of write (ns)\n4096,1000,0\n", ["line 2", "0 ns"]),
    ("Blocksize,Avg bytes/sec written to files by all queue managers,Avg latency of write (ns)\n4096,1,1\n",
     ["line 1", "Running MQLDT over N Queue Managers"]),
    ("Executing test for write blocksize 4096 (4k). Seconds elapsed -> 1/1\n\nAvg latency of write (ns)  : 1,000\n"
     "Avg latency of write (ns)  : 2,000\n", ["line 4", "a second time", "line 1"]),
    ("Avg latency of write (ns)  : 1,000\n", ["line 1", "before any"]),
    ("Executing test for write blocksize 4096 (4k). Seconds elapsed -> 1/1\n\nTotal writes to files : 7\n"
     "Avg latency of write (ns) : 1,000\n", ["line 1", "Avg bytes/sec written to files"]),
    ("Running MQLDT over 2 Queue Managers\nBlocksize,Avg bytes/sec written to files by all queue managers,"
     "Avg latency of write (ns)\n4096,1000,1000\n", ["no result of one queue manager", "--qm 1"]),
    ("\n\n  \n", ["empty"]),
    (b"Blocksize,\xff\xfe\n", ["line 1", "not UTF-8"]),
])
def test_malformed_or_foreign_mqldt_output_is_one_line_naming_the_line(tmp_path, content, words):
    path = tmp_path / "measured.csv"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    one_line_error(mqlog("devices", "--from-mqldt", path), str(path), *words)


def test_a_missing_mqldt_file_is_named(tmp_path):
    one_line_error(mqlog("devices", "--from-mqldt", tmp_path / "nowhere.csv"), "nowhere.csv", "cannot read")


@pytest.mark.parametrize("args, words", [
    (("mqldt", "--bsize", "4096"), ["--bsize", "<n>K"]),
    (("mqldt", "--bsize", "4K", "--qm", "11"), ["--qm", "1 to 10"]),
    (("mqldt", "--bsize", "4K,8K", "--qm", "2"), ["--bsize", "single block size"]),
    (("mqldt", "--bsize", "4K", "--duration", "0"), ["--duration", "1 to 3600"]),
    (("mqldt", "--bsize", "4K", "--numFiles", "0"), ["--numFiles", "1 to 10000"]),
    (("mqldt", "--bsize", "8K", "--fileSize", "4096"), ["--bsize", "--fileSize"]),
    (("mqldt", "--bsize", "4K", "--duration", "3600", "--device", "ram"), ["--duration", "simulated writes"]),
    (("mqldt", "--bsize", "4K", "--device", "floppy"), ["floppy", "ssd"]),
    (("devices", "--from-mqldt", DATA / "readme-128k.csv", "--name", "my disk"), ["--name"]),
    (("devices", "--from-mqldt", DATA / "readme-128k.csv", "--file", DATA / "readme-128k.csv"), ["--from-mqldt"]),
    (("devices", "--name", "mine"), ["--from-mqldt"]),
])
def test_bad_options_are_one_line_naming_the_option(args, words):
    out = mqlog(*args)
    assert out.returncode != 0 and "Traceback" not in out.stderr, out.stderr
    assert len(out.stderr.strip().splitlines()) <= 3
    for word in words:
        assert word in out.stderr, (word, out.stderr)


@pytest.mark.parametrize("qm, queue_depth", [(3, 2), (5, 2), (4, 32)])
def test_the_fit_predicts_what_the_device_does(qm, queue_depth):
    """The fitter's rule for N writers in lock step is the device's: replayed on the Device,
    the average time per write is what ``predict_us`` says (to the nanosecond clock)."""
    import attrs

    from mqlog.core.disk.devicefit import predict_us
    from mqlog.core.disk.mqldt import MqldtOptions, replay

    profile = attrs.evolve(get_profile("san"), queue_depth=queue_depth)
    row, = replay(profile, MqldtOptions(bsizes=(65536,), qm=qm, duration=1))
    assert row.avg_latency_ns / 1000 == pytest.approx(predict_us(profile, 65536, qm), rel=2e-3)
