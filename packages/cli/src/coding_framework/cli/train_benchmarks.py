"""Benchmarks during `coding-framework train`: a subset run with the current in-memory policy every N steps
(and on the starting model as step 0).

`BenchmarkHook` is the engine's `on_step_end` hook (rl-core knows nothing of evals; this module joins
them). When a step is due it generates with the trainer's own model object through evals'
`HFBackend.from_model` (no checkpoint reload, no copy; the engine has already put the model in eval
mode, turned autograd off and will restore every RNG state afterwards), scores the samples in the
sandbox with evals' `evaluate_file` — the same pipeline as `coding-framework evaluate`, so the numbers
agree with evaluating the step's checkpoint with the same settings — and returns
`bench/<name>/pass@k` metrics, which the engine adds to the step's metrics (and so to every monitor
sink and the checkpointed history).

Files per evaluation, each written atomically by evals:
`RUN_DIR/benchmarks/step_<N>/<name>.jsonl` (per-sample results with verdicts),
`<name>_summary.json` (pass@k, status counts, timings) and `<name>_samples.jsonl` (the generations).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

BENCHMARKS_DIR = "benchmarks"
_STEP_DIR = re.compile(r"step_(\d+)")
_SUMMARY_SUFFIX = "_summary.json"


def is_due(step: int, *, every: int, max_steps: int, at_end: bool) -> bool:
    """Whether the benchmarks run after `step`: every `every`-th step, and the last one when `at_end`."""
    if every <= 0:
        return False
    return step % every == 0 or (at_end and step == max_steps)


def step_dir(run_dir: str | Path, step: int) -> Path:
    """RUN_DIR/benchmarks/step_<step>."""
    return Path(run_dir) / BENCHMARKS_DIR / f"step_{step}"


def recorded_results(run_dir: str | Path, *, up_to_step: int | None = None) -> dict[str, dict[str, float]]:
    """`{"<step>": {name: pass@1}}` of every evaluation whose summary is on disk, steps ascending.

    Steps above `up_to_step` are left out (a run that crashed after evaluating a step it had not yet
    checkpointed left them; the resumed run evaluates them again).
    """
    root = Path(run_dir) / BENCHMARKS_DIR
    found: dict[int, dict[str, float]] = {}
    if root.is_dir():
        for entry in root.iterdir():
            match = _STEP_DIR.fullmatch(entry.name)
            if not match or not entry.is_dir():
                continue
            step = int(match.group(1))
            if up_to_step is not None and step > up_to_step:
                continue
            for path in sorted(entry.glob(f"*{_SUMMARY_SUFFIX}")):
                summary = json.loads(path.read_text(encoding="utf-8"))
                found.setdefault(step, {})[summary["benchmark"]] = float(summary["pass_at_k"]["pass@1"])
    return {str(step): dict(sorted(found[step].items())) for step in sorted(found)}


class _KeptPool:
    """A sandbox pool `evaluate_file` may close after each evaluation while it stays up for the next:
    starting the sandbox workers at every evaluation would cost more than scoring a small subset."""

    def __init__(self, pool: Any):
        self.pool = pool

    def run_iter(self, jobs, *, keep_output=True):
        return self.pool.run_iter(jobs, keep_output=keep_output)

    def close(self) -> None:
        pass


class BenchmarkHook:
    """`on_step_end(trainer, step)`: run the configured benchmarks when the step is due.

    Args:
        config: the job's `benchmarks` section (a BenchmarksConfig).
        run_dir: the run directory; results go to RUN_DIR/benchmarks/step_<N>/.
        max_steps: the run's last step (for `at_end`).
        seed: generation seed (sample i of a problem uses seed + i, as `coding-framework evaluate`).
        workers: sandbox worker processes; None: one per CPU core.
        pool_factory: builds a sandbox pool as evals' runner calls it; default SandboxPool.
        on_result: called as `on_result(step, name, evaluation)` after each benchmark (for console lines).
    """

    def __init__(
        self,
        config: Any,
        run_dir: str | Path,
        *,
        max_steps: int,
        seed: int = 0,
        workers: int | None = None,
        pool_factory: Callable[..., Any] | None = None,
        on_result: Callable[[int, str, Any], Any] | None = None,
    ):
        from coding_framework.evals import get_benchmark
        from coding_framework.evals.generation.base import GenerationConfig

        self.config = config
        self.run_dir = Path(run_dir)
        self.max_steps = max_steps
        self.workers = workers
        self.on_result = on_result
        self.generation = GenerationConfig(
            n_samples=config.n_samples,
            temperature=config.temperature,
            top_p=config.top_p,
            max_new_tokens=config.max_new_tokens,
            seed=seed,
            prompt_style=config.prompt_style,
        )
        self.problems: dict[str, dict[str, Any]] = {}
        for name in config.names:
            problems = get_benchmark(name).load(config.problem_files.get(name), config.options.get(name))
            self.problems[name] = dict(list(problems.items())[: config.limit])
        self._pool_factory = pool_factory
        self._pools: dict[str, _KeptPool] = {}
        self.evaluated_steps: list[int] = []

    def is_due(self, step: int) -> bool:
        return is_due(step, every=self.config.every, max_steps=self.max_steps, at_end=self.config.at_end)

    def __call__(self, trainer: Any, step: int) -> dict[str, float]:
        if not self.is_due(step):
            return {}
        return self._evaluate_policy(trainer.policy, step)

    def baseline(self, trainer: Any) -> dict[str, float]:
        """Evaluate the starting model as step 0 when `at_start` asks for it and the trainer has not
        stepped yet; returns the `bench/...` metrics ({} when it did not run). Inside the trainer's
        `evaluation_mode`, so training afterwards is the same as without it."""
        if not (self.config.every and self.config.at_start) or trainer.step != 0:
            return {}
        with trainer.evaluation_mode() as policy:
            return self._evaluate_policy(policy, 0)

    def _evaluate_policy(self, policy: Any, step: int) -> dict[str, float]:
        from coding_framework.evals.generation.hf_backend import HFBackend

        name = f"{self.run_dir.name}/step_{step}"
        backend = HFBackend.from_model(policy.model, policy.tokenizer, name=name)
        with policy.autocast():
            metrics = self.evaluate(backend, step)
        self.evaluated_steps.append(step)
        return metrics

    def evaluate(self, backend: Any, step: int) -> dict[str, float]:
        """Every configured benchmark with `backend` at `step`; returns the `bench/...` metrics."""
        metrics: dict[str, float] = {}
        for name in self.config.names:
            began = time.perf_counter()
            evaluation = self._evaluate_one(name, backend, step)
            prefix = f"bench/{name}"
            for key, value in evaluation.summary.pass_at_k.items():
                metrics[f"{prefix}/{key}"] = float(value)
            for part, values in evaluation.summary.parts_pass_at_k.items():
                for key, value in values.items():
                    metrics[f"{prefix}/{part}/{key}"] = float(value)
            metrics[f"{prefix}/seconds"] = time.perf_counter() - began
            if self.on_result is not None:
                self.on_result(step, name, evaluation)
        return metrics

    def _evaluate_one(self, name: str, backend: Any, step: int) -> Any:
        from coding_framework.evals import EvalConfig, evaluate_file, get_benchmark
        from coding_framework.evals.generation.driver import generate_samples

        config = self.config
        options = config.options.get(name, {})
        out = step_dir(self.run_dir, step)
        out.mkdir(parents=True, exist_ok=True)
        samples = out / f"{name}_samples.jsonl"
        # A run that crashed after this step but before its checkpoint left samples of weights that the
        # resumed run recomputes; the driver would keep them, so they go.
        samples.unlink(missing_ok=True)
        benchmark = get_benchmark(name)
        generate_samples(benchmark, self.problems[name], backend, self.generation, samples, options=options)
        eval_config = EvalConfig(
            samples_file=samples,
            benchmark=name,
            problem_file=config.problem_files.get(name),
            output_file=out / f"{name}.jsonl",
            ks=tuple(config.ks),
            workers=self.workers,
            timeout_s=config.timeout_s,
            options=options,
            limit=config.limit,
            report=False,
            model=backend.name,
        )
        return evaluate_file(eval_config, pool_factory=lambda **kwargs: self._pool(name, kwargs))

    def _pool(self, name: str, kwargs: dict[str, Any]) -> _KeptPool:
        if name not in self._pools:
            factory = self._pool_factory
            if factory is None:
                from coding_framework.sandbox import SandboxPool as factory
            self._pools[name] = _KeptPool(factory(**kwargs))
        return self._pools[name]

    def close(self) -> None:
        """Stop the sandbox pools (idempotent)."""
        pools, self._pools = self._pools, {}
        for kept in pools.values():
            kept.pool.close()


def describe(step: int, name: str, evaluation: Any) -> str:
    """One console line: `benchmark humaneval at step 4: pass@1 0.0000 (2 problems x 1 sample, failed 2)`."""
    summary = evaluation.summary
    scores = "  ".join(f"{k} {v:.4f}" for k, v in summary.pass_at_k.items())
    statuses = ", ".join(f"{s} {n}" for s, n in summary.status_counts.items() if n)
    per = summary.n_samples // max(summary.n_tasks, 1)
    return (
        f"benchmark {name} at step {step}: {scores} ({summary.n_tasks} problems x {per} "
        f"sample{'s' if per != 1 else ''}; {statuses})"
    )


__all__ = ["BENCHMARKS_DIR", "BenchmarkHook", "describe", "is_due", "recorded_results", "step_dir"]
