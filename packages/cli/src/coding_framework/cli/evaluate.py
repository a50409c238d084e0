"""`coding-framework evaluate`: score samples on a benchmark in the sandbox and report pass@k.

Samples come from a file (`--samples`), from a local Hugging Face model (`--model-path`), from an
OpenAI-compatible endpoint (`--base-url` + `--model`), or are the benchmark's reference solutions
(`--references`). Generation is resumable: rerunning the same command keeps finished samples.
`coding-framework evaluate compare A B` (evaluate_compare.py) compares two runs.

A thin layer over `coding_framework.evals`: benchmarks come from its registry (no name switches
here), and every input problem it reports becomes a one-line message and a non-zero exit.
"""

from __future__ import annotations

import contextlib
import re
import signal
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from coding_framework.cli import evaluate_compare

# Exit codes: 0 the evaluation ran (whatever the verdicts), 1 bad input, 2 usage errors (typer's),
# 3 the sandbox could not start or failed while running, 4 generation failed (finished samples are
# saved; the same command resumes), 130 interrupted (Ctrl-C or SIGTERM; verdicts so far are saved and
# the same command resumes).
EXIT_BAD_INPUT = 1
EXIT_USAGE = 2
EXIT_SANDBOX = 3
EXIT_GENERATION = 4
EXIT_INTERRUPTED = 130  # as a shell reports a command stopped by Ctrl-C
DEFAULT_OUTPUT_ROOT = Path("eval-results")


def parse_ks(text: str) -> tuple[int, ...]:
    """ "1,10,100" → (1, 10, 100); raises typer.BadParameter on anything else."""
    try:
        ks = tuple(int(part) for part in text.split(","))  # int() takes surrounding spaces, not ""
    except ValueError:
        ks = ()
    if not ks or any(k < 1 for k in ks):
        raise typer.BadParameter(f"expected comma-separated positive integers such as 1,10,100, got {text!r}")
    return ks


def _check_ks(text: str) -> str:
    parse_ks(text)
    return text


def parse_options(items: list[str]) -> dict[str, str]:
    """["calibrated=false", ...] → {"calibrated": "false"}; typer.BadParameter on an item without '='."""
    options = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise typer.BadParameter(f"expected NAME=VALUE, got {item!r}")
        options[name.strip()] = value
    return options


def _check_options(items: list[str] | None) -> list[str]:
    parse_options(items or [])
    return items or []


def _warn(message: str) -> None:
    Console(stderr=True, highlight=False, soft_wrap=True).print(f"[bold yellow]warning:[/] {message}")


def _fail(message: str, code: int) -> typer.Exit:
    Console(stderr=True, highlight=False, soft_wrap=True).print(f"[bold red]error:[/] {message}", markup=True)
    return typer.Exit(code)


@contextlib.contextmanager
def _sigterm_interrupts() -> Iterator[None]:
    """SIGTERM (a scheduler's stop, `kill`) ends an evaluation as Ctrl-C does: pool closed, verdicts so
    far flushed to the results-so-far file, a one-line message."""
    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextlib.contextmanager
def _interrupted(what: str) -> Iterator[None]:
    """Ctrl-C (or SIGTERM, with _sigterm_interrupts) inside: one line saying what is kept, exit 130."""
    try:
        yield
    except KeyboardInterrupt:
        raise _fail(f"interrupted {what}; rerun the same command to resume", EXIT_INTERRUPTED) from None


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "model"


app = typer.Typer(
    name="evaluate",
    help="Score samples (from a file, a local model, an OpenAI-compatible endpoint or the references) "
    "on a benchmark in the sandbox; `evaluate compare A B` compares two runs.",
    add_completion=False,
)
evaluate_compare.register(app)


@app.callback(invoke_without_command=True)
def evaluate(
    ctx: typer.Context,
    samples: Annotated[
        Path | None,
        typer.Option(
            "--samples",
            "-s",
            help="Samples: JSON lines with task_id and completion (or solution). With --model-path or "
            "--base-url: where generated samples go (and are resumed from).",
        ),
    ] = None,
    benchmark: Annotated[
        str,
        typer.Option(
            "--benchmark",
            "-b",
            help="Benchmark name (humaneval, humaneval+, mbpp, mbpp+, "
            "bigcodebench, bigcodebench-hard, stdio).",
        ),
    ] = "humaneval",
    problem_file: Annotated[
        Path | None,
        typer.Option(
            "--problem-file",
            help="Problems in the benchmark's official format; default: the "
            "packaged data or the benchmark's environment variable / $CF_EVALS_DATA_DIR.",
        ),
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            help="Per-sample results JSONL; default: <samples>_results.jsonl, "
            "or <output-dir>/results.jsonl when generating.",
        ),
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
        typer.Option("--timeout", min=0.001, help="Wall-clock seconds per job; default: the benchmark's."),
    ] = None,
    host_memory_floor_mb: Annotated[
        int | None,
        typer.Option("--host-memory-floor-mb", min=0,
                     help="Rootless sandboxes (no cgroup) only: kill a sample (verdict memory) when the "
                     "host's available memory falls under this many MiB; 0: off; default: 5% of RAM, "
                     "at least 256."),
    ] = None,
    option: Annotated[
        list[str] | None,
        typer.Option(
            "--option",
            callback=_check_options,
            help="Benchmark option NAME=VALUE, repeatable (e.g. calibrated=false, split=validation, "
            "min_time_limit_s=1).",
        ),
    ] = None,
    limit: Annotated[
        int | None, typer.Option("--limit", min=1, help="Only the first N problems of the benchmark.")
    ] = None,
    report: Annotated[
        bool, typer.Option("--report/--no-report", help="Write the markdown report + chart.")
    ] = True,
    references: Annotated[
        bool, typer.Option("--references", help="Score the benchmark's reference solutions (a data check).")
    ] = False,
    model_path: Annotated[
        Path | None,
        typer.Option("--model-path", help="Generate with this local Hugging Face model directory."),
    ] = None,
    base_url: Annotated[
        str | None,
        typer.Option(
            "--base-url", help="Generate through this OpenAI-compatible API, e.g. http://127.0.0.1:8000/v1."
        ),
    ] = None,
    model: Annotated[
        str | None, typer.Option("--model", help="Model name to request from --base-url.")
    ] = None,
    api_key_env: Annotated[
        str, typer.Option("--api-key-env", help="Environment variable holding the API key for --base-url.")
    ] = "OPENAI_API_KEY",
    output_dir: Annotated[
        Path | None,
        typer.Option(
            "--output-dir",
            help="Where generation runs write samples, results and report; default: "
            "eval-results/<model>/<benchmark>.",
        ),
    ] = None,
    n_samples: Annotated[
        int, typer.Option("--n-samples", min=1, help="Samples per problem to generate.")
    ] = 1,
    temperature: Annotated[float, typer.Option("--temperature", min=0.0, help="0: greedy.")] = 0.0,
    top_p: Annotated[float, typer.Option("--top-p", min=0.0, max=1.0, help="Nucleus sampling mass.")] = 0.95,
    max_new_tokens: Annotated[int, typer.Option("--max-new-tokens", min=1, help="Tokens per sample.")] = 512,
    seed: Annotated[int, typer.Option("--seed", help="Sample i of a problem uses seed + i.")] = 0,
    prompt_style: Annotated[
        str | None,
        typer.Option(
            "--prompt-style", help="completion or instruct; default: instruct for chat models/APIs."
        ),
    ] = None,
    concurrency: Annotated[
        int, typer.Option("--concurrency", min=1, help="Requests in flight (--base-url).")
    ] = 8,
    max_retries: Annotated[
        int, typer.Option("--max-retries", min=0, help="Retries per request (--base-url).")
    ] = 5,
    device: Annotated[
        str | None, typer.Option("--device", help="cpu or cuda (--model-path); default: auto.")
    ] = None,
    batch_size: Annotated[
        int, typer.Option("--batch-size", min=1, help="Samples per forward (--model-path).")
    ] = 8,
) -> None:
    """Run samples against a benchmark's tests in the sandbox; write per-sample results, a summary and a
    markdown report with a chart; print pass@k."""
    if ctx.invoked_subcommand is not None:
        return
    # Imported here so that `coding-framework --version` does not load the sandbox.
    from coding_framework.evals import (
        EvalConfig,
        EvalError,
        GenerationError,
        ModelNotFoundError,
        evaluate_file,
        get_benchmark,
    )
    from coding_framework.sandbox import SandboxDegradedWarning, SandboxStartError

    sources = [
        name
        for name, on in (
            ("--samples", samples is not None and not (model_path or base_url)),
            ("--model-path", model_path is not None),
            ("--base-url", base_url is not None),
            ("--references", references),
        )
        if on
    ]
    if len(sources) != 1:
        what = "none was" if not sources else f"{' and '.join(sources)} were"
        raise _fail(
            "give one source of samples: --samples FILE, --model-path DIR, --base-url URL --model NAME, or "
            f"--references ({what} given)",
            EXIT_USAGE,
        )
    if base_url is not None and not model:
        raise _fail("--base-url needs --model NAME (the model the server serves)", EXIT_USAGE)
    ks = parse_ks(k)
    options = parse_options(option or [])
    model_name = ""
    try:
        bench = get_benchmark(benchmark)
        if sources[0] != "--samples":
            generating = _interrupted("while generating: the samples finished so far are kept")
            with _sigterm_interrupts(), generating:
                samples, model_name = _make_samples(
                    bench,
                    sources[0],
                    problem_file=problem_file,
                    options=options,
                    limit=limit,
                    samples=samples,
                    output_dir=output_dir,
                    model_path=model_path,
                    base_url=base_url,
                    model=model,
                    api_key_env=api_key_env,
                    n_samples=n_samples,
                    temperature=temperature,
                    top_p=top_p,
                    max_new_tokens=max_new_tokens,
                    seed=seed,
                    prompt_style=prompt_style,
                    concurrency=concurrency,
                    max_retries=max_retries,
                    device=device,
                    batch_size=batch_size,
                )
            if output is None:
                output = samples.with_name("results.jsonl")
        config = EvalConfig(
            samples_file=samples,
            benchmark=benchmark,
            problem_file=problem_file,
            output_file=output,
            ks=ks,
            workers=workers,
            timeout_s=timeout,
            host_memory_floor_mb=host_memory_floor_mb,
            options=options,
            limit=limit,
            report=report,
            model=model_name,
        )
        with warnings.catch_warnings(record=True) as caught, _sigterm_interrupts():
            warnings.simplefilter("always", SandboxDegradedWarning)
            try:
                evaluation = evaluate_file(config)
            except KeyboardInterrupt:
                from coding_framework.evals.checkpoint import partial_path_for

                partial = partial_path_for(config.output_path)
                kept = f"verdicts so far are kept in {partial}" if partial.exists() else "nothing was judged"
                raise _fail(f"interrupted: {kept}; rerun the same command to resume",
                            EXIT_INTERRUPTED) from None
        # A degraded sandbox is said once, on one line, rather than as a Python warning with source.
        for warning in caught:
            if issubclass(warning.category, SandboxDegradedWarning):
                _warn(str(warning.message))
            else:
                warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
    except ModelNotFoundError as exc:
        raise _fail(str(exc), EXIT_BAD_INPUT) from None
    except GenerationError as exc:
        raise _fail(
            f"{exc} (finished samples are saved; rerun the same command to resume)", EXIT_GENERATION
        ) from None
    except (EvalError, ValueError) as exc:
        raise _fail(str(exc), EXIT_BAD_INPUT) from None
    except SandboxStartError as exc:
        raise _fail(f"the sandbox could not start: {exc}", EXIT_SANDBOX) from None
    except OSError as exc:
        raise _fail(f"cannot write results: {exc}", EXIT_BAD_INPUT) from None
    _print_summary(evaluation, ks)


def _make_samples(
    bench: Any, source: str, *, problem_file, options, limit, samples, output_dir, **gen
) -> tuple:
    """Generate (or write the references as) a samples file; returns (its path, the model name)."""
    from coding_framework.evals.generation.base import GenerationConfig
    from coding_framework.evals.generation.driver import generate_samples, write_reference_samples

    problems = bench.load(problem_file, options)
    if limit is not None:
        problems = dict(list(problems.items())[:limit])
    console = Console(stderr=True, highlight=False, soft_wrap=True)
    if source == "--references":
        path = samples or (output_dir or DEFAULT_OUTPUT_ROOT / "references" / bench.name) / "samples.jsonl"
        path, missing = write_reference_samples(bench, problems, path)
        if missing:
            listed = ", ".join(missing[:5])
            _warn(f"{len(missing)} problem(s) have no reference solution and are left out: {listed}")
        return path, "reference"
    backend = _backend(source, gen)
    config = GenerationConfig(
        n_samples=gen["n_samples"],
        temperature=gen["temperature"],
        top_p=gen["top_p"],
        max_new_tokens=gen["max_new_tokens"],
        seed=gen["seed"],
        prompt_style=gen["prompt_style"],
    )
    path = samples or (output_dir or DEFAULT_OUTPUT_ROOT / _slug(backend.name) / bench.name) / "samples.jsonl"
    try:
        run = generate_samples(bench, problems, backend, config, path, options=options)
    finally:
        close = getattr(backend, "close", None)
        if close is not None:
            close()
    console.print(
        f"generated {run.generated} sample(s) with {run.model} ({run.prompt_style} prompts), "
        f"kept {run.reused} from an earlier run: {run.samples_path}"
    )
    return run.samples_path, run.model


def _backend(source: str, gen: dict) -> Any:
    if source == "--model-path":
        from coding_framework.evals.generation.hf_backend import HFBackend

        return HFBackend(gen["model_path"], device=gen["device"], batch_size=gen["batch_size"])
    from coding_framework.evals.generation.openai_backend import OpenAICompatibleBackend

    return OpenAICompatibleBackend(
        gen["base_url"],
        gen["model"],
        api_key_env=gen["api_key_env"],
        concurrency=gen["concurrency"],
        max_retries=gen["max_retries"],
    )


def _print_summary(evaluation: Any, ks: tuple[int, ...]) -> None:
    summary = evaluation.summary
    console = Console()
    if not console.is_terminal:
        console.width = max(console.width, 120)  # piped output keeps whole table rows
    title = f"{summary.benchmark}: {summary.n_samples} samples, {summary.n_tasks} tasks"
    table = Table(
        title=title + (f" ({summary.model})" if summary.model else ""), title_justify="left", show_edge=False
    )
    table.add_column("metric", style="bold")
    table.add_column("value", justify="right")
    parts = list(summary.parts_pass_at_k)
    for part in parts:
        table.add_column(f"{part} tests", justify="right")
    for name, value in summary.pass_at_k.items():
        table.add_row(name, f"{value:.4f}", *(_fmt(summary.parts_pass_at_k[p].get(name)) for p in parts))
    skipped = [kk for kk in ks if f"pass@{kk}" not in summary.pass_at_k]
    for kk in skipped:
        table.add_row(f"pass@{kk}", "n/a (fewer than k samples for some task)", *("" for _ in parts))
    for status, count in summary.status_counts.items():
        if count:
            table.add_row(status, str(count), *("" for _ in parts))
    table.add_row("samples/s", f"{summary.samples_per_s:.1f}", *("" for _ in parts))
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
    for line in summary.warnings[:10]:
        console.print(f"[bold yellow]data warning:[/] {line}", highlight=False)
    if len(summary.warnings) > 10:
        console.print(f"... and {len(summary.warnings) - 10} more data warnings in the summary")
    console.print(f"results: {evaluation.results_path}")
    console.print(f"summary: {evaluation.summary_path}")
    if evaluation.report_path is not None:
        console.print(f"report:  {evaluation.report_path}")


def _fmt(value: float | None) -> str:
    return "" if value is None else f"{value:.4f}"


def register(main_app: typer.Typer) -> None:
    main_app.add_typer(app, name="evaluate")
