"""Where the whole model's time goes, counted so that a busy machine cannot blur it.

Suite 4's wall-clock ratio moves by ±20% from one minute to the next on a shared machine, too
much to tell a 5% saving from noise. This script counts instead:

- **Python opcodes per log record** (default): ``putget-pairs`` (10 pairs, 200-byte messages,
  suite 4's run) under ``sys.settrace`` with opcode tracing, by source file and by function.
  Deterministic: the same code gives the same count in a fresh process (a second run in the
  same one differs by a few opcodes in 10⁶: caches the first warmed). It misses what runs in C (generator
  creation, ``struct``, ``zlib``), so a change that moves work into or out of C needs the
  next measure too.
- **Machine instructions per log record** (``--instructions``): the same run at two sizes under
  valgrind's cachegrind (``Ir``), the difference divided by the records between them, so the
  interpreter's start-up and imports cancel out. Within about 1% from run to run; needs the
  ``valgrind`` system package and takes about 20 s a platform.

    python perf/cost_breakdown.py [--platform distributed|zos] [--top 40] [--instructions]

perf/README.md ("Whole model") records what these showed and the levers left.
"""

from __future__ import annotations

import argparse
import collections
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _simulate(platform: str, per_pair: int) -> dict:
    sys.path.insert(0, str(ROOT))
    from perf.test_whole_model import simulate

    return simulate(platform, per_pair)


def count_opcodes(fn) -> tuple[object, collections.Counter]:
    """``fn()``'s result and the Python opcodes it executed, per code object."""
    counts: collections.Counter = collections.Counter()

    def trace(frame, event, _arg):
        if event == "opcode":
            counts[frame.f_code] += 1
        elif event == "call":
            frame.f_trace_opcodes = True
        return trace

    previous = sys.gettrace()
    sys.settrace(trace)
    try:
        result = fn()
    finally:
        sys.settrace(previous)
    return result, counts


def opcodes(platform: str, per_pair: int = 100) -> tuple[int, collections.Counter]:
    """Records logged and opcodes executed per code object, for one run."""
    _simulate(platform, 5)  # imports and first-call set-up outside the count
    metrics, counts = count_opcodes(lambda: _simulate(platform, per_pair))
    return metrics["log_records"], counts


def _name(code) -> str:
    path = code.co_filename
    path = path.split("site-packages/")[-1] if "site-packages/" in path else path.replace(str(ROOT) + "/", "")
    return path


def instructions(platform: str) -> float:
    """Machine instructions per record: cachegrind's Ir at 150 and 50 messages a pair."""
    if shutil.which("valgrind") is None:
        raise SystemExit("--instructions needs valgrind (apt-get install valgrind)")
    refs, records = [], []
    for per_pair in (150, 50):
        code = (f"import sys; sys.path.insert(0, {str(ROOT)!r}); from perf.test_whole_model import simulate; "
                f"print('RECORDS', simulate({platform!r}, {per_pair})['log_records'])")
        done = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
                               sys.executable, "-c", code], capture_output=True, text=True, check=True)
        refs.append(int(re.search(r"I\s+refs:\s+([\d,]+)", done.stderr).group(1).replace(",", "")))
        records.append(int(re.search(r"RECORDS (\d+)", done.stdout).group(1)))
    return (refs[0] - refs[1]) / (records[0] - records[1])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--platform", default="distributed", choices=("distributed", "zos"))
    parser.add_argument("--top", type=int, default=30, help="functions to list (default 30)")
    parser.add_argument("--instructions", action="store_true", help="also count machine instructions (valgrind)")
    args = parser.parse_args(argv)
    records, counts = opcodes(args.platform)
    total = sum(counts.values())
    by_file: collections.Counter = collections.Counter()
    by_function: collections.Counter = collections.Counter()
    for code, n in counts.items():
        by_file[_name(code)] += n
        by_function[f"{_name(code)}:{code.co_name}"] += n
    print(f"{args.platform}: {records} records, {total / records:.0f} Python opcodes a record")
    for title, table, rows in (("by file", by_file, 20), ("by function", by_function, args.top)):
        print(f"\n{title}: opcodes a record, share")
        for name, n in table.most_common(rows):
            print(f"{n / records:8.0f} {100 * n / total:5.1f}%  {name}")
    if args.instructions:
        print(f"\nmachine instructions a record: {instructions(args.platform):,.0f}")


if __name__ == "__main__":
    main()
