"""What ``mqlog calibrate`` shows: the table, the JSON, and calibration.md with its plot.

Each takes the cases (:func:`mqlog.calibration.cases.load_cases`) and their results
(:func:`~mqlog.calibration.cases.run_case`, by case id), in the cases' order. The plot shows
each figure as the model's value over IBM's, with the tolerance as a band around it.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from mqlog.calibration.figures import bounds
from mqlog.core.errors import MqlogError

MISSED = "MISSED"


def _number(value: float | None) -> str:
    if value is None:
        return "-"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.4g}"


def rows(cases: dict, results: dict) -> list[tuple[str, str, str, str, str, str]]:
    """(case, figure, IBM, model, tolerance, ok/MISSED) for every figure."""
    out = []
    for case_id in cases:
        for name, f in results[case_id]["figures"].items():
            out.append((case_id, name, _number(f["ibm"]), _number(f["model"]), f["tolerance"],
                        "ok" if f["ok"] else MISSED))
    return out


def table(cases: dict, results: dict) -> str:
    """The plain-text table ``mqlog calibrate`` prints."""
    header = ("case", "figure", "IBM", "model", "tolerance", "")
    body = rows(cases, results)
    widths = [max(len(r[i]) for r in [header] + body) for i in range(len(header))]
    lines = []
    for r in [header] + body:
        cells = [r[0].ljust(widths[0]), r[1].ljust(widths[1]), r[2].rjust(widths[2]), r[3].rjust(widths[3]),
                 r[4].ljust(widths[4]), r[5]]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def missed(results: dict) -> int:
    """How many figures are outside their tolerance (or have no model value)."""
    return sum(not f["ok"] for r in results.values() for f in r["figures"].values())


def as_json(cases: dict, results: dict) -> dict:
    """``{case: {figure: {ibm, model, tolerance, ok, note}}}``."""
    return {case_id: {name: dict(f) for name, f in results[case_id]["figures"].items()} for case_id in cases}


def plot(cases: dict, results: dict, path: Path) -> None:
    """Model / IBM for every figure (a dot; none where the model has no value), with the
    tolerance as a band of the same ratio, written as a PNG to ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels, values, bands, oks = [], [], [], []
    for case_id in cases:
        for name, f in results[case_id]["figures"].items():
            figure = next(x for x in cases[case_id]["figures"] if x["name"] == name)
            ibm = f["ibm"]
            low, high = bounds(ibm, figure["tolerance"])
            labels.append(f"{case_id} {name}")
            values.append(f["model"] / ibm if f["model"] is not None and ibm else math.nan)
            top = high / ibm if ibm and math.isfinite(high) else 2.5  # open-ended: to the edge
            bands.append((low / ibm if ibm and math.isfinite(low) else 0.0, top))
            oks.append(f["ok"])
    height = max(3.0, 0.35 * len(labels) + 1.2)
    fig, ax = plt.subplots(figsize=(9, height))
    ys = list(range(len(labels)))[::-1]
    for y, (low, high) in zip(ys, bands):
        ax.barh(y, high - low, left=low, height=0.6, color="#cfe3f3", edgecolor="#7aa9cf")
    for y, value, ok in zip(ys, values, oks):
        if math.isnan(value):
            ax.text(1.0, y, "no model value", va="center", ha="center", fontsize=8, color="#b00020")
        else:
            ax.plot([min(max(value, 0.0), 2.5)], [y], "o", color="#1b7f3b" if ok else "#b00020")
    ax.axvline(1.0, color="#444444", linewidth=0.8)
    ax.set_yticks(ys)
    ax.set_yticklabels(labels, fontsize=8)
    ax.set_xlim(0.0, 2.5)
    ax.set_xlabel("model / IBM (band: the tolerance; green within it, red MISSED)")
    ax.set_title("mqlog calibrate: the model against IBM's figures")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _run_text(run: dict) -> str:
    """One run as the case's "Runs." line shows it: the workload, platform and log, and what
    else sets it apart (device, queue-manager attributes, a crash and its restart, a run before)."""
    text = (f"{run['workload']} on {run['platform']} "
            f"({', '.join(f'{k}={v}' for k, v in sorted(run['log'].items())) or 'default log'})")
    from mqlog.core.workload.spec import BUILTINS, build_spec

    def changed(workload: str, params: dict) -> str:
        # the parameters a run gives that differ from the workload's defaults
        defaults = dict(build_spec(BUILTINS[workload], {}, origin="").params)
        return " ".join(f"{k}={str(v).lower() if isinstance(v, bool) else v}"
                        for k, v in sorted(params.items()) if defaults.get(k) != v)

    given = changed(run["workload"], run.get("params", {}))
    extra = [given] if given else []
    if run.get("device", "ssd") != "ssd":
        extra.append(f"on {run['device']}")
    if run.get("qmgr"):
        extra.append(", ".join(f"{k}={v}" for k, v in sorted(run["qmgr"].items())))
    if run.get("before"):
        before = run["before"]
        params = changed(before["workload"], before.get("params", {}))
        extra.append(f"after a clean run of {before['workload']}" + (f" ({params})" if params else ""))
    crash = run.get("crash_at")
    if crash is not None:
        extra.append("crashed at the workload's end" if crash == "end" else f"crashed at {crash:g} s")
        restart = run.get("restart") or {}
        extra.append(f"restarted {restart.get('mode', '9.1.1')}"
                     + (f" on {restart['device']}" if restart.get("device") else ""))
    return text + (", " + ", ".join(extra) if extra else "")


def markdown(cases: dict, results: dict, *, image: str, command: str) -> str:
    """calibration.md: what was run, the table, each case's source and assumptions, the plot."""
    out = ["# Calibration: the model against IBM's figures", "",
           f"Written by `{command}`. Each case runs its workloads on the model and computes its "
           "figures from the runs' metrics; IBM's values are IBM's (D1's from IBM's own amqldmpa "
           "counters, by the same computation). A figure is ok within its tolerance, MISSED outside "
           "it or when the model does not report an input yet. The cases are data: "
           "`mqlog/calibration/cases.toml`.", "",
           f"{missed(results)} of {sum(len(r['figures']) for r in results.values())} figures MISSED.", "",
           "| case | figure | IBM | model | tolerance | |", "|---|---|---:|---:|---|---|"]
    out += [f"| {' | '.join(r)} |" for r in rows(cases, results)]
    out += ["", f"![model / IBM per figure, with the tolerance band]({image})", ""]
    for case_id, case in cases.items():
        out += [f"## {case_id}: {case['title']}", "", f"**IBM's source.** {case['source']}", ""]
        if case["assumption"]:
            out += [f"**Assumed (IBM did not say).** {case['assumption']}", ""]
        if case.get("mechanism"):
            out += [f"**What produces the figures.** {case['mechanism']}", ""]
        runs = ", ".join(f"`{name}`: {_run_text(run)}" for name, run in case["runs"].items())
        out += [f"**Runs.** {runs}.", ""]
        notes = [(name, f["note"]) for name, f in results[case_id]["figures"].items() if f["note"]]
        out += [f"- `{name}`: {note}" for name, note in notes]
        out.append("")
    return "\n".join(out)


def write(cases: dict, results: dict, md: Path, png: Path, *, command: str, image: str,
          results_json: Path | None = None) -> None:
    """calibration.md at ``md`` (linking the plot as ``image``), the plot at ``png``, and
    the JSON at ``results_json`` if given."""
    try:
        md.parent.mkdir(parents=True, exist_ok=True)
        png.parent.mkdir(parents=True, exist_ok=True)
        plot(cases, results, png)
        md.write_text(markdown(cases, results, image=image, command=command), encoding="utf-8")
        if results_json is not None:
            results_json.write_text(json.dumps(as_json(cases, results), indent=2, sort_keys=True) + "\n",
                                    encoding="utf-8")
    except OSError as exc:
        raise MqlogError(f"{exc.filename or md}: cannot write the calibration report: {exc.strerror or exc}") from None
