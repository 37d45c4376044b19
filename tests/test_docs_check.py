"""``mqlog docs --check`` (issue 36): a published figure that drifted from what its command
prints now fails the check, naming the page, the row (or line) and both values; a prose
comparison that flipped fails it too; ``--write`` puts the commands' figures in. Through the
real command line, run from the checkout as a developer runs it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PAGE4 = REPO / "docs" / "guide" / "04-dual-logging-and-write-integrity.md"


def docs(*args, cwd=REPO):
    return subprocess.run([sys.executable, "-m", "mqlog", "docs", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=900)


DEVICES = """# a page

<!-- mqlog docs: table dev view=fields rows=devices columns="device=name;write latency, µs=write_latency_us:,.1f"
mqlog devices --json
-->
{table}
<!-- mqlog docs: end -->

A write to `dasd` takes longer than one to `ssd`.
<!-- mqlog docs: claim {claim} -->
"""

RIGHT = 'dev["dasd"]["write latency, µs"] > dev["ssd"]["write latency, µs"]'


def _devices_table() -> str:
    rows = json.loads(subprocess.run([sys.executable, "-m", "mqlog", "devices", "--json"], capture_output=True,
                                     text=True, check=True).stdout)["devices"]
    return "\n".join(["| device | write latency, µs |", "|---|---:|"] +
                     [f"| {d['name']} | {d['write_latency_us']:,.1f} |" for d in rows])


def _page(tmp_path, table: str, claim: str = RIGHT) -> Path:
    page = tmp_path / "page.md"
    page.write_text(DEVICES.format(table=table, claim=claim))
    return page


def test_the_fast_subset_of_the_published_pages_reproduces():
    """What the default test run checks: README's quick transcripts (group commit, scan, the
    crash and restarts, history, the refused --set, mqldt both ways, the table of what the device
    profiles imply and its claim), re-run from scratch."""
    out = docs("--fast")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "README.md: 11 block(s) checked, 0 mismatch(es)" in out.stdout, out.stdout  # and the group-commit claim


def test_a_guide_number_edited_by_hand_fails_the_check_naming_page_row_and_both_values(tmp_path):
    """Guide page 4's fault-campaign table re-run: every cell matches but the one edited, which
    is reported with its page, row, column and both values; the page's claims still hold."""
    text = PAGE4.read_text()
    row = "| | | lost | nothing | 87 (87) | 19 | 67 | 1 | 0 | 0 |"
    assert row in text
    edited = REPO / "docs" / "guide" / f".edited-{tmp_path.name}.md"   # beside the guide, as a hand edit is
    edited.write_text(text.replace(row, row.replace("| 67 |", "| 68 |")))
    try:
        out = docs("--only", "risk", edited)
    finally:
        edited.unlink()
    assert out.returncode == 1, out.stdout + out.stderr
    mismatches = [line for line in out.stdout.splitlines() if "the page shows" in line]
    assert mismatches == [f"docs/guide/{edited.name}: table risk, row 'TWOACTV=NO / lost', column 'detected': "
                          "the page shows '68', the command now gives '67'"], out.stdout
    assert "10 block(s) checked, 1 mismatch(es)" in out.stdout  # the table and its nine claims


def test_a_claim_that_no_longer_holds_fails_the_check(tmp_path):
    page = _page(tmp_path, _devices_table())
    assert docs(page).returncode == 0
    flipped = _page(tmp_path, _devices_table(), claim=RIGHT.replace(" > ", " < "))
    out = docs(flipped)
    assert out.returncode == 1
    assert "claim dev[\"dasd\"][\"write latency, µs\"] < dev[\"ssd\"]" in out.stdout, out.stdout
    assert "the comparison the prose makes no longer holds" in out.stdout


def test_write_puts_the_commands_figures_in(tmp_path):
    right = _devices_table()
    page = _page(tmp_path, right.replace("| ssd | 50.0 |", "| ssd | 49.0 |"))
    out = docs(page)
    assert out.returncode == 1
    assert "row 'ssd', column 'write latency, µs': the page shows '49.0', the command now gives '50.0'" in out.stdout
    assert docs("--write", page).returncode == 0
    assert right in page.read_text()
    assert docs(page).returncode == 0


def test_a_console_transcript_is_rerun_and_a_changed_line_named(tmp_path):
    printed = subprocess.run([sys.executable, "-m", "mqlog", "hosts"], capture_output=True, text=True,
                             check=True).stdout.splitlines()
    shown = [printed[0], "...", printed[-1].replace(printed[-1].split()[-1], "999")]
    page = tmp_path / "console.md"
    page.write_text("<!-- mqlog docs: console -->\n```\n$ .venv/bin/mqlog hosts\n" + "\n".join(shown) + "\n```\n")
    out = docs(page)
    assert out.returncode == 1
    assert f"line 6 (.venv/bin/mqlog hosts): the page shows {shown[2]!r}, the command now gives {printed[-1]!r}" \
        in out.stdout, out.stdout
    assert docs("--write", page).returncode == 0
    assert docs(page).returncode == 0
