"""The local engine's configuration: one frozen dataclass, one docstring per field (the CLI's help text).

Names of estimators, losses, aggregations and KL estimators are checked against rl-core's registries
when the config is built, so a typo fails before a model is loaded, with the list of valid names.
"""

from __future__ import annotations

import inspect
import math
from dataclasses import asdict, dataclass, fields
from typing import Any, Literal

from ..advantages import ADVANTAGE_ESTIMATORS
from ..aggregation import LOSS_AGGREGATIONS
from ..kl import KL_ESTIMATORS
from ..losses import POLICY_LOSSES
from ..registry import UnknownNameError

KLMode = Literal["loss", "reward"]
KLController = Literal["fixed", "adaptive"]
LRDecay = Literal["constant", "linear", "cosine"]
DType = Literal["auto", "float32", "bfloat16", "float16"]

# Fields that may change between a run and its resumption; every other field must match the checkpoint.
RESUMABLE_CHANGES = frozenset(
    {"max_steps", "save_every", "keep_checkpoints", "device", "num_threads", "rollout_batch_size"}
)


@dataclass(frozen=True)
class EngineConfig:
    """Everything the local engine's training run depends on, besides the model and the environment."""

    # --- algorithm -------------------------------------------------------------------------------
    algorithm: str = "grpo"
    """Advantage estimator (rl-core ADVANTAGE_ESTIMATORS): grpo, rloo, reinforce_plus_plus,
    reinforce_plus_plus_baseline, remax (adds one greedy rollout per prompt as baseline), or gae (PPO:
    trains a value head)."""
    policy_loss: str = "vanilla"
    """Policy loss (rl-core POLICY_LOSSES): vanilla (PPO clip), gspo, gpg, reinforce."""
    loss_agg_mode: str = "token-mean"
    """How per-token losses become one number (rl-core LOSS_AGGREGATIONS): token-mean (DAPO, VERL's
    default), seq-mean-token-mean (GRPO), seq-mean-token-sum, seq-mean-token-sum-norm (Dr. GRPO),
    token-sum."""
    grpo_norm_by_std: bool = True
    """grpo only: divide by the group's std; False is Dr. GRPO."""
    gamma: float = 1.0
    """Discount of gae and reinforce_plus_plus returns."""
    lam: float = 1.0
    """GAE's λ (gae only)."""
    clip_ratio_low: float | None = None
    """PPO-style losses: the ratio floor is 1 - clip_ratio_low. None: the loss's own default (0.2 for
    vanilla, 3e-4 for gspo)."""
    clip_ratio_high: float | None = None
    """PPO-style losses: the ratio ceiling is 1 + clip_ratio_high (DAPO's clip-higher: 0.28). None: the
    loss's own default."""
    clip_ratio_c: float | None = 3.0
    """vanilla only: dual-clip bound for negative advantages (> 1); None turns dual-clip off."""

    # --- batch and sampling ----------------------------------------------------------------------
    prompts_per_step: int = 8
    """Prompts (problems) drawn per training step."""
    group_size: int = 8
    """Samples per prompt (G); a step trains on prompts_per_step × group_size episodes."""
    max_new_tokens: int = 64
    """Tokens the policy may generate per turn."""
    temperature: float = 1.0
    """Sampling temperature of training rollouts (> 0)."""
    top_p: float = 1.0
    """Nucleus sampling of training rollouts: keep the smallest set of tokens whose probability reaches
    top_p (1 = off)."""
    rollout_batch_size: int | None = None
    """Prompts generated in one batch; None: all of a call at once (lower it to save memory)."""

    # --- optimisation ----------------------------------------------------------------------------
    lr: float = 1e-5
    """Peak learning rate of the policy (AdamW)."""
    warmup_steps: int = 0
    """Training steps of linear warm-up: step s (0-based) uses lr · (s + 1) / warmup_steps until the
    peak."""
    lr_decay: LRDecay = "constant"
    """After warm-up: constant, or linear / cosine decay to 0 at max_steps."""
    weight_decay: float = 0.0
    """AdamW weight decay of the policy."""
    adam_betas: tuple[float, float] = (0.9, 0.999)
    """AdamW's β1, β2."""
    max_grad_norm: float | None = 1.0
    """Clip the global gradient norm to this before each optimizer step; None: no clipping."""
    ppo_epochs: int = 1
    """Passes over each step's samples."""
    mini_batches: int = 1
    """Optimizer steps per pass: the step's samples are split into this many mini-batches."""
    grad_accum: int = 1
    """Micro-batches per mini-batch whose gradients are accumulated before the optimizer step (memory,
    not maths: the loss is the same for any value)."""
    loss_norm_length: int | None = None
    """seq-mean-token-sum-norm's constant L; None: max_new_tokens."""

    # --- KL to the reference model ---------------------------------------------------------------
    kl_coef: float = 0.0
    """Weight of KL(π ‖ π_ref); 0 turns it off (and no reference model is loaded)."""
    kl_estimator: str = "k3"
    """Per-token KL estimator (rl-core KL_ESTIMATORS): k1, k2, k3 (VERL's low_var_kl)."""
    kl_mode: KLMode = "loss"
    """loss: coef · KL added to the loss (GRPO); reward: −coef · KL added to each token's reward before
    advantages (PPO-RLHF)."""
    kl_controller: KLController = "fixed"
    """reward mode: fixed coefficient, or adaptive towards kl_target (Ziegler et al. 2019)."""
    kl_target: float = 0.1
    """Adaptive controller: the KL it steers towards."""
    kl_horizon: int = 10000
    """Adaptive controller: samples over which the coefficient adapts."""

    # --- entropy ---------------------------------------------------------------------------------
    entropy_coeff: float = 0.0
    """Weight of the entropy bonus (0 = off; entropy is still reported)."""

    # --- DAPO ------------------------------------------------------------------------------------
    dynamic_sampling: bool = False
    """DAPO dynamic sampling: drop groups whose samples all scored the same and draw more prompts until
    prompts_per_step groups remain (or dynamic_sampling_max_rounds is reached)."""
    dynamic_sampling_max_rounds: int = 3
    """Rollout rounds per step at most when dynamic_sampling is on."""
    overlong_buffer: int = 0
    """DAPO overlong penalty: the last this-many tokens before max_new_tokens cost up to
    overlong_penalty_factor reward (0 = off)."""
    overlong_penalty_factor: float = 1.0
    """DAPO overlong penalty at max_new_tokens."""

    # --- value head (gae) ------------------------------------------------------------------------
    critic_lr: float = 1e-3
    """Learning rate of the value head (gae only)."""
    value_coef: float = 0.5
    """Weight of the value loss (gae only)."""
    value_clip: float | None = 0.5
    """Clip the value prediction to within this of the rollout's value (PPO value clipping); None: off."""

    # --- run -------------------------------------------------------------------------------------
    seed: int = 0
    """Seeds Python, NumPy and torch, and the sampling generator."""
    max_steps: int = 100
    """Training steps of the run."""
    save_every: int = 10
    """Write a checkpoint every this many steps (and always after the last); 0: only after the last."""
    keep_checkpoints: int | None = None
    """Keep only the newest this-many checkpoints; None: keep all."""
    device: str = "auto"
    """auto (CUDA if available, else CPU), cpu, cuda or cuda:N."""
    dtype: DType = "auto"
    """Compute dtype (weights and optimizer stay float32): auto = bfloat16 on a CUDA device that
    supports it, else float32. Bit-exact resume is guaranteed for float32 on CPU."""
    num_threads: int | None = None
    """torch CPU threads for this process (torch.set_num_threads); None: torch's default."""
    attn_implementation: str | None = None
    """Passed to from_pretrained (eager, sdpa, ...); None: the model's default."""

    def __post_init__(self) -> None:
        for name, registry in (
            ("algorithm", ADVANTAGE_ESTIMATORS),
            ("policy_loss", POLICY_LOSSES),
            ("loss_agg_mode", LOSS_AGGREGATIONS),
            ("kl_estimator", KL_ESTIMATORS),
        ):
            try:
                registry[getattr(self, name)]
            except UnknownNameError as err:
                raise ValueError(f"EngineConfig.{name}: {err}") from None
        _choice(self, "kl_mode", ("loss", "reward"))
        _choice(self, "kl_controller", ("fixed", "adaptive"))
        _choice(self, "lr_decay", ("constant", "linear", "cosine"))
        _choice(self, "dtype", ("auto", "float32", "bfloat16", "float16"))
        for name in (
            "prompts_per_step",
            "group_size",
            "max_new_tokens",
            "max_steps",
            "ppo_epochs",
            "mini_batches",
            "grad_accum",
            "dynamic_sampling_max_rounds",
            "kl_horizon",
        ):
            _int(self, name, minimum=1)
        for name in ("warmup_steps", "save_every", "overlong_buffer", "seed"):
            _int(self, name, minimum=0)
        for name in ("rollout_batch_size", "keep_checkpoints", "num_threads", "loss_norm_length"):
            if getattr(self, name) is not None:
                _int(self, name, minimum=1)
        for name in ("lr", "critic_lr", "temperature", "kl_target"):
            _number(self, name, low=0.0, low_open=True)
        for name in ("weight_decay", "kl_coef", "entropy_coeff", "value_coef", "overlong_penalty_factor"):
            _number(self, name, low=0.0)
        _number(self, "top_p", low=0.0, low_open=True, high=1.0)
        for name in ("gamma", "lam"):
            _number(self, name, low=0.0, high=1.0)
        for name in ("max_grad_norm", "value_clip"):
            if getattr(self, name) is not None:
                _number(self, name, low=0.0, low_open=True)
        if self.clip_ratio_low is not None and not 0 <= self.clip_ratio_low < 1:
            raise ValueError(
                f"EngineConfig.clip_ratio_low={self.clip_ratio_low}: must be in [0, 1) "
                "(the ratio floor is 1 - clip_ratio_low), or None for the loss's default"
            )
        if self.clip_ratio_high is not None:
            _number(self, "clip_ratio_high", low=0.0)
        if self.clip_ratio_c is not None and not self.clip_ratio_c > 1:
            raise ValueError(
                f"EngineConfig.clip_ratio_c={self.clip_ratio_c}: must be > 1, or None to turn dual-clip off"
            )
        betas = tuple(self.adam_betas)
        if len(betas) != 2 or not all(isinstance(b, int | float) and 0 <= b < 1 for b in betas):
            raise ValueError(f"EngineConfig.adam_betas={self.adam_betas!r}: give two numbers in [0, 1)")
        object.__setattr__(self, "adam_betas", (float(betas[0]), float(betas[1])))
        if self.overlong_buffer > self.max_new_tokens:
            raise ValueError(
                f"EngineConfig.overlong_buffer={self.overlong_buffer} exceeds max_new_tokens="
                f"{self.max_new_tokens}: the penalty window must lie inside the generation limit"
            )
        samples = self.prompts_per_step * self.group_size
        if self.mini_batches * self.grad_accum > samples:
            raise ValueError(
                f"EngineConfig: mini_batches × grad_accum = {self.mini_batches * self.grad_accum}"
                f" exceeds the {samples} samples of a step (prompts_per_step × group_size); "
                "lower one of them"
            )
        if self.dynamic_sampling and self.group_size < 2:
            raise ValueError(
                "EngineConfig.dynamic_sampling needs group_size >= 2: it drops groups whose "
                "samples all scored the same"
            )
        if self.kl_mode == "loss" and self.kl_controller == "adaptive":
            raise ValueError(
                "EngineConfig.kl_controller='adaptive' needs kl_mode='reward' (the KL loss "
                "uses a fixed coefficient)"
            )
        if self.device != "auto" and not (self.device == "cpu" or self.device.startswith("cuda")):
            raise ValueError(f"EngineConfig.device={self.device!r}: use auto, cpu, cuda or cuda:N")

    @property
    def advantage_inputs(self) -> frozenset[str]:
        """The parameter names of the chosen estimator: what the engine must compute for it."""
        return frozenset(inspect.signature(ADVANTAGE_ESTIMATORS[self.algorithm]).parameters)

    @property
    def uses_value_head(self) -> bool:
        """True for estimators that need a critic (gae)."""
        return "values" in self.advantage_inputs

    @property
    def uses_greedy_baseline(self) -> bool:
        """True for estimators whose baseline is the reward of a greedy response (remax)."""
        return "baselines" in self.advantage_inputs

    @property
    def uses_reference(self) -> bool:
        """True when a frozen reference model is needed (KL on)."""
        return self.kl_coef > 0

    def to_dict(self) -> dict[str, Any]:
        """JSON-able copy (tuples become lists)."""
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EngineConfig:
        """Inverse of to_dict; unknown keys raise with the list of valid ones."""
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - names)
        if unknown:
            raise ValueError(f"unknown EngineConfig field(s) {unknown}; valid: {sorted(names)}")
        values = dict(data)
        if "adam_betas" in values:
            values["adam_betas"] = tuple(values["adam_betas"])
        return cls(**values)

    def resume_differences(self, saved: EngineConfig) -> dict[str, tuple[Any, Any]]:
        """Fields that differ from `saved` and may not change on resume: {name: (saved, now)}."""
        out = {}
        for f in fields(self):
            if f.name in RESUMABLE_CHANGES:
                continue
            before, now = getattr(saved, f.name), getattr(self, f.name)
            if before != now:
                out[f.name] = (before, now)
        return out


def field_help() -> dict[str, str]:
    """Each field's docstring, for CLI help: {name: text}."""
    import ast
    import itertools
    import textwrap

    source = textwrap.dedent(inspect.getsource(EngineConfig))
    body = ast.parse(source).body[0].body
    out: dict[str, str] = {}
    for node, following in itertools.pairwise(body):
        if (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and isinstance(following, ast.Expr)
            and isinstance(following.value, ast.Constant)
            and isinstance(following.value.value, str)
        ):
            out[node.target.id] = " ".join(following.value.value.split())
    return out


def _choice(config: EngineConfig, name: str, allowed: tuple[str, ...]) -> None:
    value = getattr(config, name)
    if value not in allowed:
        raise ValueError(f"EngineConfig.{name}={value!r}: use one of {', '.join(allowed)}")


def _int(config: EngineConfig, name: str, *, minimum: int) -> None:
    value = getattr(config, name)
    if type(value) is not int or value < minimum:
        raise ValueError(f"EngineConfig.{name}={value!r}: must be an int >= {minimum}")


def _number(
    config: EngineConfig, name: str, *, low: float, low_open: bool = False, high: float | None = None
) -> None:
    value = getattr(config, name)
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    ok = ok and (value > low if low_open else value >= low) and (high is None or value <= high)
    if not ok:
        bound = f"> {low}" if low_open else f">= {low}"
        if high is not None:
            bound += f" and <= {high}"
        raise ValueError(f"EngineConfig.{name}={value!r}: must be a finite number {bound}")
