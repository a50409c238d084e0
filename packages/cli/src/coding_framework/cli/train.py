"""`coding-framework train`: RL post-training of a local model on the coding environment, on CPU or one GPU.

With no arguments it runs the embedded default: the project's small model (models/tiny-coder), GRPO on
generated train-split problems scored in the sandbox, held-out pass@1 measured before and after, every
metric to the console, metrics.jsonl and MLflow, and RUN_DIR/summary.json at the end. With
`benchmarks.every=N` a benchmark subset is also run with the current policy every N steps
(train_benchmarks.py).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

EXIT_BAD_INPUT = 1
SUMMARY_FILE = "summary.json"
HELDOUT_BEFORE_FILE = "heldout_before.json"
SET_NAMES = {"heldout": "held-out", "validation": "validation"}
"""heldout.set → how the console names it."""


def _write_json(path: Path, data: dict[str, Any]) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    os.replace(tmp, path)


def _evaluation_tasks(trainer, job) -> list:
    tasks = trainer.environment.heldout_tasks()
    return tasks[: job.heldout.n_problems] if job.heldout.n_problems is not None else tasks


def _check_same_problems(before: dict[str, Any], tasks: list, path: Path, set_name: str) -> None:
    """A resumed run's stored "before" measurement must cover exactly the problems "after" will measure."""
    from coding_framework.cli.dataclass_config import ConfigError

    if set(before.get("per_task", ())) != {task.id for task in tasks}:
        raise ConfigError(
            f"{path} holds pass@1 of other problems than this run's {set_name} set ({len(tasks)} problems): "
            "it was written by an earlier version (agents < 0.5 measured what is now the validation set) or "
            "with other heldout.* settings; resume with those settings (heldout.set=validation for an older "
            "run), or start a new --run-dir"
        )


def _pass_at_one(trainer, job) -> dict[str, Any]:
    tasks = _evaluation_tasks(trainer, job)
    result = trainer.evaluate_pass_at_1(
        tasks, n_samples=job.heldout.n_samples, temperature=job.heldout.temperature
    )
    return {
        "pass_at_1": result.pass_at_1,
        "n_problems": result.n_tasks,
        "n_samples": result.n_samples,
        "seconds": result.seconds,
        "per_task": result.per_task,
    }


def run_training(job, *, resume: bool = False, console: Console | None = None) -> dict[str, Any]:
    """Train as `job` says and return the summary (also written to RUN_DIR/summary.json)."""
    from transformers.utils import logging as hf_logging

    from coding_framework.agents import CodingEnvironment, load_evaluation_set
    from coding_framework.cli.dataclass_config import as_dict
    from coding_framework.cli.train_benchmarks import (
        BENCHMARKS_DIR,
        BenchmarkHook,
        describe,
        recorded_results,
    )
    from coding_framework.cli.train_spec import algorithm_label
    from coding_framework.monitor import MonitorConfig, RunLogger
    from coding_framework.rl_core.engine import Trainer, latest_checkpoint

    hf_logging.disable_progress_bar()  # weight-loading bars would interleave with the per-step lines
    console = console or Console()
    began = time.perf_counter()
    run_dir = job.resolved_run_dir()
    if resume and latest_checkpoint(run_dir) is None:
        raise FileNotFoundError(f"--resume: {run_dir} holds no complete checkpoint to continue from")
    run_dir.mkdir(parents=True, exist_ok=True)
    bench = job.benchmarks
    monitor = MonitorConfig(
        run_dir=run_dir,
        experiment=job.logging.experiment,
        resume=resume,
        mlflow=job.logging.mlflow,
        wandb=job.logging.wandb,
        prometheus=job.logging.prometheus,
        console_every=job.logging.console_every,
        console_metrics=(
            "reward/mean",
            "pass_rate",
            "kl",
            "entropy",
            "time/step",
            "time/scoring_share",
            *(f"bench/{name}/pass@1" for name in bench.names if bench.every),
        ),
    )
    bench_hook = None
    if bench.every:
        bench_hook = BenchmarkHook(
            bench,
            run_dir,
            max_steps=job.engine.max_steps,
            seed=job.engine.seed,
            workers=job.workers,
            on_result=lambda step, name, evaluation: console.print(describe(step, name, evaluation)),
        )
    set_name = SET_NAMES[job.heldout.set]
    environment = CodingEnvironment(
        job.environment, heldout=load_evaluation_set(job.heldout.set), workers=job.workers
    )
    try:
        with RunLogger(monitor, console=console) as logger:
            logger.log_params(
                {"job": as_dict(job), "model_path": str(job.model_path), "run_dir": str(run_dir)}
            )
            trainer = Trainer(
                job.engine,
                job.model_path,
                environment,
                run_dir,
                on_metrics=lambda step, metrics: logger.log_metrics(metrics, step),
                resume=resume,
                on_step_end=bench_hook,
            )
            before_path = run_dir / HELDOUT_BEFORE_FILE
            if before_path.exists():
                before = json.loads(before_path.read_text())
                _check_same_problems(before, _evaluation_tasks(trainer, job), before_path, set_name)
            else:
                console.print(f"measuring {set_name} pass@1 of {job.model_path} before training ...")
                before = _pass_at_one(trainer, job)
                _write_json(before_path, before)
            if bench_hook is not None:
                baseline = bench_hook.baseline(trainer)
                if baseline:
                    logger.log_metrics(baseline, 0)
            trainer.run()
            checkpoint = latest_checkpoint(run_dir)  # the trainer always checkpoints its last step
            console.print(f"measuring {set_name} pass@1 after training ...")
            after = _pass_at_one(trainer, job)
            history = trainer.history
            shares = [m["time/scoring_share"] for m in history if "time/scoring_share" in m]
            step_times = [m["time/step"] for m in history if "time/step" in m]
            summary = {
                "algorithm": algorithm_label(job.engine),
                "engine": as_dict(job.engine),
                "model_path": str(job.model_path),
                "seed": job.engine.seed,
                "steps": trainer.step,
                "wall_seconds": time.perf_counter() - began,
                "reward_curve": [m.get("reward/mean") for m in history],
                "pass_rate_curve": [m.get("pass_rate") for m in history],
                "reward_time_share": (
                    sum(m["time/scoring"] for m in history) / sum(step_times) if step_times else None
                ),
                "reward_time_share_per_step": shares,
                "heldout": {
                    "set": job.heldout.set,
                    "n_problems": after["n_problems"],
                    "n_samples": after["n_samples"],
                    "temperature": job.heldout.temperature,
                    "pass_at_1_before": before["pass_at_1"],
                    "pass_at_1_after": after["pass_at_1"],
                },
                "benchmarks": recorded_results(run_dir, up_to_step=trainer.step),
                "checkpoint": str(checkpoint),
                "run_dir": str(run_dir),
            }
            _write_json(run_dir / SUMMARY_FILE, summary)
            logger.log_metrics(
                {
                    "heldout/pass_at_1_before": before["pass_at_1"],
                    "heldout/pass_at_1_after": after["pass_at_1"],
                },
                trainer.step,
            )
            logger.write_training_curves()
            if summary["benchmarks"]:
                names = sorted({name for results in summary["benchmarks"].values() for name in results})
                logger.write_training_curves(
                    [f"bench/{name}/pass@1" for name in names], filename="benchmark_curves.png"
                )
                logger.log_artifact(run_dir / BENCHMARKS_DIR, BENCHMARKS_DIR)
            logger.log_artifact(run_dir / SUMMARY_FILE)
    finally:
        environment.close()
        if bench_hook is not None:
            bench_hook.close()
    _print_summary(console, summary)
    return summary


def _print_summary(console: Console, summary: dict[str, Any]) -> None:
    heldout = summary["heldout"]
    table = Table(
        title=f"{SET_NAMES[heldout['set']]} pass@1 ({heldout['n_problems']} problems never trained on)",
        title_justify="left",
        show_edge=False,
    )
    table.add_column("model")
    table.add_column("pass@1", justify="right")
    table.add_row("before", f"{heldout['pass_at_1_before']:.3f}")
    table.add_row(
        f"after {summary['steps']} steps of {summary['algorithm']}", f"{heldout['pass_at_1_after']:.3f}"
    )
    delta = heldout["pass_at_1_after"] - heldout["pass_at_1_before"]
    table.add_row("change", f"{delta:+.3f}")
    console.print(table)
    share = summary["reward_time_share"]
    console.print(
        f"wall {summary['wall_seconds']:.0f} s; reward computation {share:.1%} of step time; "
        f"checkpoint {summary['checkpoint']}"
        if share is not None
        else f"checkpoint {summary['checkpoint']}"
    )
    if summary["benchmarks"]:
        last_step, results = list(summary["benchmarks"].items())[-1]
        scores = ", ".join(f"{name} pass@1 {value:.3f}" for name, value in results.items())
        console.print(f"benchmarks at step {last_step}: {scores} (every step: summary.json 'benchmarks')")
    console.print(f"summary: {Path(summary['run_dir']) / SUMMARY_FILE}")


def train(
    overrides: Annotated[
        list[str] | None,
        typer.Argument(
            help="key=value overrides of the job spec, e.g. engine.lr=1e-4 heldout.n_problems=60."
        ),
    ] = None,
    config: Annotated[
        Path | None, typer.Option("--config", help="YAML job spec merged over the defaults.")
    ] = None,
    algorithm: Annotated[
        str | None,
        typer.Option("--algorithm", help="grpo (default), dr_grpo, rloo, reinforce_plus_plus, ppo, dapo."),
    ] = None,
    model_path: Annotated[
        Path | None,
        typer.Option("--model-path", help="Starting model: any local Hugging Face causal LM dir."),
    ] = None,
    max_steps: Annotated[int | None, typer.Option("--max-steps", min=1, help="Training steps.")] = None,
    seed: Annotated[int | None, typer.Option("--seed", help="Seed of sampling, data order and init.")] = None,
    run_dir: Annotated[
        Path | None, typer.Option("--run-dir", help="Run directory (checkpoints, metrics).")
    ] = None,
    resume: Annotated[
        bool, typer.Option("--resume", help="Continue the run in --run-dir from its newest checkpoint.")
    ] = False,
    save_every: Annotated[
        int | None, typer.Option("--save-every", min=1, help="Checkpoint every N steps.")
    ] = None,
) -> None:
    """Train a code model with RL from execution feedback; report held-out pass@1 before and after."""
    from coding_framework.cli.dataclass_config import ConfigError
    from coding_framework.cli.train_spec import build_job
    from coding_framework.rl_core.engine import ModelDirError

    err = Console(stderr=True, highlight=False, soft_wrap=True)
    if resume and run_dir is None:
        err.print("[bold red]error:[/] --resume needs --run-dir: the run directory to continue")
        raise typer.Exit(EXIT_BAD_INPUT)
    engine = {
        k: v
        for k, v in {"max_steps": max_steps, "seed": seed, "save_every": save_every}.items()
        if v is not None
    }
    flags: dict[str, Any] = {
        k: str(v) for k, v in {"model_path": model_path, "run_dir": run_dir}.items() if v
    }
    if engine:
        flags["engine"] = engine
    try:
        job = build_job(config_file=config, overrides=list(overrides or []), algorithm=algorithm, flags=flags)
        if not job.model_path.is_dir():
            raise ConfigError(
                f"no model directory at {job.model_path}: pass --model-path DIR (a local Hugging Face causal "
                "LM directory), or run from the repository root where models/tiny-coder lives"
            )
        run_training(job, resume=resume)
    except (ConfigError, ModelDirError, FileExistsError, FileNotFoundError) as exc:
        err.print(f"[bold red]error:[/] {exc}")
        raise typer.Exit(EXIT_BAD_INPUT) from None


def register(app: typer.Typer) -> None:
    app.command("train")(train)
