"""The job spec of `coding-framework train`: one frozen dataclass composed of the packages' own configs.

`engine` is rl-core's EngineConfig, `environment` agents' EnvironmentConfig; this module adds only what
belongs to a run as a whole (model, run dir, held-out measurement, logging) and the algorithm presets
behind `--algorithm`. It is built from the packaged default YAML, an optional `--config` file, `key=value`
overrides and the CLI flags, in that order, with every key checked (see dataclass_config).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from coding_framework.agents import EnvironmentConfig
from coding_framework.cli.dataclass_config import ConfigError, build, load_yaml, merge, parse_overrides
from coding_framework.rl_core.engine import EngineConfig

SinkMode = Literal["off", "auto", "on"]
DEFAULT_CONFIG = "train_default.yaml"

ALGORITHM_PRESETS: dict[str, dict[str, Any]] = {
    "grpo": {"algorithm": "grpo", "grpo_norm_by_std": True},
    "dr_grpo": {"algorithm": "grpo", "grpo_norm_by_std": False, "loss_agg_mode": "seq-mean-token-sum-norm"},
    "rloo": {"algorithm": "rloo"},
    "reinforce_plus_plus": {"algorithm": "reinforce_plus_plus"},
    "reinforce_plus_plus_baseline": {"algorithm": "reinforce_plus_plus_baseline"},
    "ppo": {"algorithm": "gae"},
    # DAPO (Yu et al. 2025): clip-higher, token-level loss, dynamic sampling, overlong shaping, no KL.
    "dapo": {
        "algorithm": "grpo",
        "clip_ratio_low": 0.2,
        "clip_ratio_high": 0.28,
        "loss_agg_mode": "token-mean",
        "dynamic_sampling": True,
        "kl_coef": 0.0,
    },
}
"""`--algorithm NAME` → the engine fields it sets (before any explicit override)."""


@dataclass(frozen=True)
class HeldoutConfig:
    """How held-out pass@1 is measured before and after training (agents' held-out set, never trained on)."""

    n_problems: int | None = None
    """The first N held-out problems; None: all of them."""
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
    logging: LoggingConfig = field(default_factory=LoggingConfig)
    """Metric sinks."""

    def resolved_run_dir(self) -> Path:
        if self.run_dir is not None:
            return self.run_dir
        stamp = time.strftime("%Y%m%d-%H%M%S")
        return Path("runs") / f"train-{self.engine.algorithm}-s{self.engine.seed}-{stamp}"


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
    return build(TrainJob, data)
