"""A one-page markdown report of an evaluation run, with a PNG chart beside it.

The chart is drawn with matplotlib's object API on an Agg canvas (no pyplot, no global backend
switch), so it works headless and does not disturb a caller's own plotting.
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Sequence
from pathlib import Path

from coding_framework.evals.jsonl import write_bytes_atomic
from coding_framework.evals.results import SampleResult, Summary

MAX_LISTED_TASKS = 20


def report_path_for(results_path: str | os.PathLike[str]) -> Path:
    """`x.jsonl` / `x.jsonl.gz` → `x_report.md` beside it (the chart is `x_report.png`)."""
    path = Path(results_path)
    stem = re.sub(r"\.jsonl(\.gz)?$", "", path.name)
    return path.with_name(f"{stem}_report.md")


def _percent(value: float) -> str:
    return f"{100 * value:.1f}%"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")[:160]


def _metric_order(name: str) -> int:
    return int(name.split("@", 1)[1]) if "@" in name and name.split("@", 1)[1].isdigit() else 0


def render_report(summary: Summary, results: Sequence[SampleResult], chart_name: str | None) -> str:
    """The markdown text; `chart_name` is the PNG's file name relative to the report (None: no chart)."""
    title = f"# {summary.benchmark}" + (f": {summary.model}" if summary.model else "")
    lines = [title, ""]
    timeout = f" · limit per job {summary.timeout_s:g} s" if summary.timeout_s else ""
    lines.append(
        f"{summary.n_samples} samples · {summary.n_tasks} of {summary.n_problems} problems attempted"
        f" · {summary.samples_per_s:.1f} samples/s{timeout}"
    )
    if summary.options:
        lines.append("Options: " + ", ".join(f"`{k}={v}`" for k, v in summary.options.items()))
    lines.append("")
    parts = list(summary.parts_pass_at_k)
    names = set(summary.pass_at_k).union(*[set(p) for p in summary.parts_pass_at_k.values()])
    metrics = sorted(names, key=_metric_order)
    if metrics:
        columns = ["all tests"] + [f"{p} tests" for p in parts] if parts else ["value"]
        lines.append("| metric | " + " | ".join(columns) + " |")
        lines.append("|---|---|" + "---|" * len(parts))
        for metric in metrics:
            cells = [summary.pass_at_k.get(metric)] + [summary.parts_pass_at_k[p].get(metric) for p in parts]
            lines.append(
                f"| {metric} | " + " | ".join("n/a" if v is None else _percent(v) for v in cells) + " |"
            )
    else:
        lines.append("No pass@k: some task has fewer samples than the smallest k.")
    lines.append("")
    if chart_name:
        lines += [f"![pass@k and verdicts]({chart_name})", ""]
    lines += ["## Verdicts", "", "| status | samples |", "|---|---|"]
    lines += [f"| {status} | {count} |" for status, count in summary.status_counts.items() if count]
    lines.append("")
    if summary.warnings:
        lines += ["## Data warnings", ""] + [f"- {_cell(w)}" for w in summary.warnings] + [""]
    unsolved: dict[str, tuple[int, str]] = {}
    solved = {r.task_id for r in results if r.passed}
    for res in results:
        if res.task_id not in solved:
            n, first = unsolved.get(res.task_id, (0, res.result))
            unsolved[res.task_id] = (n + 1, first)
    lines += [f"## Unsolved tasks ({len(unsolved)} of {summary.n_tasks})", ""]
    if unsolved:
        lines += ["| task | samples | first sample's result |", "|---|---|---|"]
        for task_id, (n, first) in list(unsolved.items())[:MAX_LISTED_TASKS]:
            lines.append(f"| {_cell(task_id)} | {n} | {_cell(first)} |")
        if len(unsolved) > MAX_LISTED_TASKS:
            lines.append(f"\n{len(unsolved) - MAX_LISTED_TASKS} more in the results file.")
    else:
        lines.append("Every attempted task was solved by at least one sample.")
    lines += ["", f"Results: `{summary.results_file}`", ""]
    return "\n".join(lines)


def chart_png(summary: Summary, *, dpi: int = 100) -> bytes:
    """Two panels as PNG bytes: pass@k bars (all tests and each reported part), verdict counts."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(9, 3.6), dpi=dpi)
    FigureCanvasAgg(fig)
    left, right = fig.subplots(1, 2, gridspec_kw={"width_ratios": [3, 2]})
    series = {"all tests": summary.pass_at_k} | {f"{p} tests": v for p, v in summary.parts_pass_at_k.items()}
    metrics = sorted({m for values in series.values() for m in values}, key=_metric_order)
    width = 0.8 / max(1, len(series))
    for i, (label, values) in enumerate(series.items()):
        xs = [j + i * width for j, m in enumerate(metrics) if m in values]
        ys = [100 * values[m] for m in metrics if m in values]
        bars = left.bar(xs, ys, width=width, label=label)
        left.bar_label(bars, labels=[f"{y:.1f}" for y in ys], fontsize=8)
    left.set_xticks([j + width * (len(series) - 1) / 2 for j in range(len(metrics))], metrics)
    left.set_ylim(0, 105)
    left.set_ylabel("% of tasks")
    left.set_title(f"{summary.benchmark}" + (f" — {summary.model}" if summary.model else ""), fontsize=10)
    if len(series) > 1:
        left.legend(fontsize=8, loc="upper left")
    counts = [(s, c) for s, c in summary.status_counts.items() if c]
    right.barh([s for s, _ in counts], [c for _, c in counts], color="tab:gray")
    right.invert_yaxis()
    right.set_xlabel("samples")
    right.set_title("verdicts", fontsize=10)
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    return buffer.getvalue()


def write_report(path: str | os.PathLike[str], summary: Summary, results: Sequence[SampleResult]) -> Path:
    """Write the chart (`<report stem>.png`) and the markdown report atomically; returns the report."""
    path = Path(path)
    chart = path.with_suffix(".png")
    write_bytes_atomic(chart, chart_png(summary))
    # backslashreplace: a lone surrogate in a task id or message must not lose the report.
    write_bytes_atomic(path, render_report(summary, results, chart.name).encode("utf-8", "backslashreplace"))
    return path
