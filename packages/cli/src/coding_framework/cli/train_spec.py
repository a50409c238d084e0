"""The job spec of `coding-framework train`: one frozen dataclass composed of the packages' own configs.

`engine` is rl-core's EngineConfig, `environment` agents' EnvironmentConfig; this module adds only what
belongs to a run as a whole (model, run dir, held-out measurement, logging) and the algorithm presets
behind `--algorithm`. It is built from the packaged default YAML, an optional `--config` file, `key=value`
overrides and the CLI flags, in that order, with every key checked (see dataclass_config).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from coding_framework.agents import EnvironmentConfig
from coding_framework.cli.dataclass_config import ConfigError, build, load_yaml, merge, parse_overrides
from coding_framework.rl_core.engine import EngineConfig

SinkMode = Literal["off", "auto", "on"]
DEFAULT_CONFIG = "train_default.yaml"

# What an algorithm preset decides. Every preset sets all of these, so `--algorithm NAME` means the same
# thing whatever the config file under it says (the embedded default turns DAPO's settings on).
_PRESET_BASE: dict[str, Any] = {
    "grpo_norm_by_std": True,
    "loss_agg_mode": "token-mean",
    "clip_ratio_low": None,
    "clip_ratio_high": None,
    "dynamic_sampling": False,
}
ALGORITHM_PRESETS: dict[str, dict[str, Any]] = {
    name: {**_PRESET_BASE, **fields}
    for name, fields in {
        "grpo": {"algorithm": "grpo"},
        "dr_grpo": {
            "algorithm": "grpo",
            "grpo_norm_by_std": False,
            "loss_agg_mode": "seq-mean-token-sum-norm",
        },
        "rloo": {"algorithm": "rloo"},
        "reinforce_plus_plus": {"algorithm": "reinforce_plus_plus"},
        "reinforce_plus_plus_baseline": {"algorithm": "reinforce_plus_plus_baseline"},
        "ppo": {"algorithm": "gae"},
        # DAPO (Yu et al. 2025): clip-higher, token-level loss, dynamic sampling, no KL (its overlong
        # shaping is engine.overlong_buffer, left to the user: the default's answers are far shorter).
        "dapo": {
            "algorithm": "grpo",
            "clip_ratio_low": 0.2,
            "clip_ratio_high": 0.28,
            "dynamic_sampling": True,
            "kl_coef": 0.0,
        },
    }.items()
}
"""`--algorithm NAME` → the engine fields it sets (before any explicit override)."""


def algorithm_label(engine: EngineConfig) -> str:
    """The preset an engine config amounts to (e.g. "dapo" for the embedded default), else its advantage
    estimator's name: what run summaries call the algorithm."""
    for name, fields in ALGORITHM_PRESETS.items():
        if all(getattr(engine, key) == value for key, value in fields.items()):
            return name
    return engine.algorithm


@dataclass(frozen=True)
class HeldoutConfig:
    """How held-out pass@1 is measured before and after training (a set never trained on)."""

    set: Literal["heldout", "validation"] = "heldout"
    """agents' held-out set (300 problems, for reported numbers), or its validation set (90 problems, for
    comparing settings: tune there, so the held-out number is not fitted to its own problems)."""
    n_problems: int | None = None
    """The first N problems of the set; None: all of them."""
    n_samples: int = 1
    """Samples per problem (1 with temperature 0: greedy)."""
    temperature: float = 0.0
    """Sampling temperature of the measurement; 0: greedy decoding."""

    def __post_init__(self) -> None:
        if self.n_problems is not None and self.n_problems < 1:
            raise ValueError(f"heldout.n_problems={self.n_problems}: use a positive number, or null for all")
        if self.n_samples < 1:
            raise ValueError(f"heldout.n_samples={self.n_samples}: must be >= 1")
        if self.temperature < 0:
            raise ValueError(f"heldout.temperature={self.temperature}: must be >= 0 (0: greedy)")
        if self.temperature == 0 and self.n_samples != 1:
            raise ValueError("heldout: greedy decoding (temperature 0) gives one answer; set n_samples=1")


@dataclass(frozen=True)
class BenchmarksConfig:
    """Benchmarks run with the current policy during training (as `coding-framework evaluate` scores them)."""

    every: int = 0
    """Evaluate after every N-th training step; 0: never (the default)."""
    names: tuple[str, ...] = ("humaneval",)
    """Benchmarks to run: any `coding-framework evaluate --benchmark` name whose data is on this machine."""
    limit: int | None = None
    """The subset: the first N problems of each benchmark; None: all of them."""
    n_samples: int = 1
    """Samples per problem (pass@k is logged for every k in `ks` up to this)."""
    temperature: float = 0.0
    """Sampling temperature; 0: greedy decoding (then n_samples must be 1)."""
    top_p: float = 0.95
    """Nucleus sampling mass (used only when sampling)."""
    max_new_tokens: int = 512
    """Most tokens generated per sample."""
    prompt_style: Literal["completion", "instruct"] | None = None
    """Prompt style; None: instruct for models with a chat template, else completion."""
    ks: tuple[int, ...] = (1, 10, 100)
    """pass@k values to log; a k above n_samples is left out, pass@1 is always there."""
    timeout_s: float | None = None
    """Wall-clock seconds per sandbox job; None: each benchmark's default."""
    at_end: bool = True
    """Also evaluate after the last step when it is not a multiple of `every`."""
    at_start: bool = True
    """Also evaluate the starting model as step 0, before the first step (not again on --resume): the
    baseline the later steps are read against."""
    problem_files: dict[str, str] = field(default_factory=dict)
    """Data file per benchmark, e.g. {mbpp: /data/mbpp.jsonl}; a benchmark without one reads its packaged
    data or its environment variable / $CF_EVALS_DATA_DIR, as `coding-framework evaluate` does."""
    options: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Benchmark options per benchmark, e.g. {mbpp: {split: validation}} (`evaluate --option`)."""

    def __post_init__(self) -> None:
        from coding_framework.evals.benchmarks import BENCHMARKS, benchmark_names

        if type(self.every) is not int or self.every < 0:
            raise ValueError(f"benchmarks.every={self.every!r}: use a number of steps >= 1, or 0 for off")
        if not self.names:
            raise ValueError("benchmarks.names is empty: name at least one benchmark, e.g. [humaneval]")
        unknown = [name for name in self.names if name not in BENCHMARKS]
        if unknown:
            raise ValueError(
                f"benchmarks.names: unknown benchmark {unknown[0]!r}; "
                f"use any of {', '.join(benchmark_names())}"
            )
        if len(set(self.names)) != len(self.names):
            raise ValueError(f"benchmarks.names={list(self.names)} names a benchmark twice; list each once")
        if self.limit is not None and self.limit < 1:
            raise ValueError(
                f"benchmarks.limit={self.limit}: use a positive number of problems, or null for all"
            )
        if self.n_samples < 1:
            raise ValueError(f"benchmarks.n_samples={self.n_samples}: must be >= 1")
        if not (self.temperature >= 0 and math.isfinite(self.temperature)):
            raise ValueError(
                f"benchmarks.temperature={self.temperature}: must be a finite number >= 0 (0: greedy)"
            )
        if self.temperature == 0 and self.n_samples != 1:
            raise ValueError(
                "benchmarks: greedy decoding (temperature 0) gives one answer per problem; set n_samples=1, "
                "or a temperature > 0 for several samples"
            )
        if not 0 < self.top_p <= 1:
            raise ValueError(f"benchmarks.top_p={self.top_p}: must be in (0, 1]")
        if self.max_new_tokens < 1:
            raise ValueError(f"benchmarks.max_new_tokens={self.max_new_tokens}: must be >= 1")
        if not self.ks or any(k < 1 for k in self.ks):
            raise ValueError(f"benchmarks.ks={list(self.ks)}: give positive integers, e.g. [1, 10]")
        if self.timeout_s is not None and not self.timeout_s > 0:
            raise ValueError(
                f"benchmarks.timeout_s={self.timeout_s}: use a positive number of seconds, or null"
            )
        for key in ("problem_files", "options"):
            stray = sorted(set(getattr(self, key)) - set(self.names))
            if stray:
                raise ValueError(
                    f"benchmarks.{key} has an entry for {stray[0]!r}, which is not in benchmarks.names "
                    f"{list(self.names)}: add it there or remove the entry"
                )
        for name, path in self.problem_files.items():
            if not isinstance(path, str) or not path:
                raise ValueError(f"benchmarks.problem_files.{name}={path!r}: give the data file's path")
        for name, given in self.options.items():
            if not isinstance(given, dict):
                raise ValueError(f"benchmarks.options.{name} must map option names to values, got {given!r}")
            BENCHMARKS[name].resolve_options(given)  # its error lists the valid options

    def check_data(self) -> None:
        """Load every named benchmark's problems (the subset must exist); ConfigError saying how to get
        what is missing. Called when a job with benchmarks on is built, before any model is loaded."""
        from coding_framework.evals import EvalError, get_benchmark

        for name in self.names:
            benchmark = get_benchmark(name)
            path = self.problem_files.get(name)
            try:
                problems = benchmark.load(path, self.options.get(name))
            except EvalError as exc:
                hint = (
                    f"fix benchmarks.problem_files.{name}"
                    if path
                    else f"or set benchmarks.problem_files.{name}=PATH"
                )
                raise ConfigError(
                    f"benchmarks: {name}: {exc} ({hint}, or leave {name!r} out of benchmarks.names)"
                ) from None
            if not problems:
                raise ConfigError(f"benchmarks: {name} has no problems in its data file; check the file")


@dataclass(frozen=True)
class LoggingConfig:
    """Where the run's metrics go besides metrics.jsonl in the run dir (see the monitor package)."""

    mlflow: SinkMode = "on"
    """MLflow run (sqlite store in the run dir unless MLFLOW_TRACKING_URI is set): params, metrics, plot."""
    wandb: SinkMode = "off"
    """Weights & Biases, offline unless WANDB_API_KEY is set."""
    prometheus: SinkMode = "off"
    """Prometheus gauges of the latest metrics."""
    experiment: str = "coding-framework"
    """MLflow experiment / W&B project."""
    console_every: int = 1
    """Print a metrics line every this many steps."""


@dataclass(frozen=True)
class TrainJob:
    """A local training run: model, environment, engine, measurement and logging."""

    model_path: Path = Path("models/tiny-coder")
    """The starting model: any local Hugging Face causal LM directory (config.json, weights, tokenizer)."""
    run_dir: Path | None = None
    """Where checkpoints, metrics, plots and summary.json go; None: runs/train-<algorithm>-s<seed>-<time>."""
    workers: int | None = None
    """Sandbox worker processes for scoring; None: one per CPU core."""
    engine: EngineConfig = field(default_factory=EngineConfig)
    """The training engine (rl-core): algorithm, sampling, optimisation, KL, checkpoints."""
    environment: EnvironmentConfig = field(default_factory=EnvironmentConfig)
    """The coding environment (agents): episodes, rewards, curriculum."""
    heldout: HeldoutConfig = field(default_factory=HeldoutConfig)
    """Held-out pass@1 measurement before and after training."""
    benchmarks: BenchmarksConfig = field(default_factory=BenchmarksConfig)
    """Benchmark subsets run with the current policy every N steps (off by default)."""
    logging: LoggingConfig = field(default_factory=LoggingConfig)
    """Metric sinks."""

    def resolved_run_dir(self) -> Path:
        if self.run_dir is not None:
            return self.run_dir
        stamp = time.strftime("%Y%m%d-%H%M%S")
        return Path("runs") / f"train-{algorithm_label(self.engine)}-s{self.engine.seed}-{stamp}"


def default_config() -> dict[str, Any]:
    """The embedded default run's settings (the packaged YAML), as a mapping."""
    return load_yaml(Path(__file__).with_name("configs") / DEFAULT_CONFIG)


def build_job(
    *,
    config_file: Path | None = None,
    overrides: list[str] = (),
    algorithm: str | None = None,
    flags: dict[str, Any] | None = None,
) -> TrainJob:
    """Defaults ← config file ← algorithm preset ← key=value overrides ← explicit flags.

    `flags` is a nested mapping holding only the flags the user gave (e.g. {"engine": {"seed": 7}}).
    """
    data = default_config()
    if config_file is not None:
        data = merge(data, load_yaml(config_file))
    if algorithm is not None:
        if algorithm not in ALGORITHM_PRESETS:
            raise ConfigError(
                f"unknown --algorithm {algorithm!r}; choose one of {', '.join(ALGORITHM_PRESETS)} "
                "(or set engine.algorithm=<estimator> directly)"
            )
        data = merge(data, {"engine": ALGORITHM_PRESETS[algorithm]})
    data = merge(data, parse_overrides(overrides))
    if flags:
        data = merge(data, flags)
    job = build(TrainJob, data)
    if job.benchmarks.every:
        job.benchmarks.check_data()
    return job
