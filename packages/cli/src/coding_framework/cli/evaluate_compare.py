"""`coding-framework evaluate compare A B`: per-benchmark deltas of run B against run A with paired-
bootstrap confidence intervals, and the tasks A solves that B does not (regressions)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

EXIT_BAD_INPUT = 1
MAX_LISTED = 30


def compare(
    run_a: Annotated[
        Path, typer.Argument(metavar="A", help="Baseline run: a results file, summary or run directory.")
    ],
    run_b: Annotated[Path, typer.Argument(metavar="B", help="Run compared against A (same kinds of path).")],
    k: Annotated[int, typer.Option("--k", min=1, help="Compare pass@k per task.")] = 1,
    resamples: Annotated[int, typer.Option("--resamples", min=100, help="Bootstrap resamples.")] = 10_000,
    confidence: Annotated[
        float, typer.Option("--confidence", min=0.5, max=0.999, help="Interval coverage.")
    ] = 0.95,
    seed: Annotated[int, typer.Option("--seed", help="Bootstrap seed (same inputs, same interval).")] = 0,
    json_out: Annotated[
        Path | None, typer.Option("--json", help="Also write the comparison as JSON.")
    ] = None,
) -> None:
    """Compare run B against run A, benchmark by benchmark, task by task."""
    from coding_framework.evals.compare import compare_runs
    from coding_framework.evals.errors import EvalError
    from coding_framework.evals.jsonl import write_json_atomic

    try:
        comparison = compare_runs(run_a, run_b, k=k, n_resamples=resamples, confidence=confidence, seed=seed)
        if json_out is not None:
            write_json_atomic(json_out, comparison.to_json())
    except (EvalError, ValueError, OSError) as exc:
        Console(stderr=True, highlight=False, soft_wrap=True).print(f"[bold red]error:[/] {exc}")
        raise typer.Exit(EXIT_BAD_INPUT) from None

    console = Console(highlight=False)
    if not console.is_terminal:
        console.width = max(console.width, 160)  # a piped table keeps its columns instead of wrapping
    level = f"{round(100 * confidence)}%"
    table = Table(title=f"B ({run_b}) vs A ({run_a})", title_justify="left", show_edge=False)
    for column in (
        "benchmark",
        "tasks",
        f"A pass@{k}",
        f"B pass@{k}",
        "delta",
        f"{level} CI",
        "regressions",
        "improvements",
    ):
        table.add_column(column, justify="left" if column == "benchmark" else "right")
    for d in comparison.deltas:
        mark = "*" if d.significant else ""
        table.add_row(
            d.benchmark,
            str(d.n_paired),
            f"{100 * d.a:.1f}%",
            f"{100 * d.b:.1f}%",
            f"{100 * d.delta:+.1f}{mark}",
            f"[{100 * d.ci_low:+.1f}, {100 * d.ci_high:+.1f}]",
            str(len(d.regressions)),
            str(len(d.improvements)),
        )
    console.print(table)
    console.print(
        f"delta in percentage points; * the {level} interval excludes 0 (paired bootstrap over tasks)"
    )
    for d in comparison.deltas:
        if d.only_a or d.only_b:
            console.print(f"{d.benchmark}: {d.only_a} task(s) only in A, {d.only_b} only in B (not compared)")
        if d.regressions:
            shown = ", ".join(d.regressions[:MAX_LISTED])
            more = f" and {len(d.regressions) - MAX_LISTED} more" if len(d.regressions) > MAX_LISTED else ""
            console.print(f"{d.benchmark} regressions (solved by A, not by B): {shown}{more}")
    for name, only in (("A", comparison.only_in_a), ("B", comparison.only_in_b)):
        if only:
            console.print(f"only in {name}: {', '.join(only)}")


def register(app: typer.Typer) -> None:
    app.command("compare")(compare)
