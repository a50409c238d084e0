"""The policy update: log-probabilities on the final token sequences, rewards on the last trainable token,
advantages, policy loss, KL, entropy and value terms from rl-core's registries, gradient accumulation,
clipping, AdamW with a warm-up schedule.

Every (B, T) tensor here covers the batch's response window (`TokenBatch.start` to the end): prompt
columns and padding are masked, multi-turn feedback tokens too. A micro-batch is a subset of rows whose
own window is the last T' ≤ T columns; full-batch tensors are sliced to it from the right.
"""

from __future__ import annotations

import contextlib
import inspect
import math
from collections.abc import Callable
from dataclasses import dataclass

import torch

from ..advantages import ADVANTAGE_ESTIMATORS, per_token
from ..aggregation import LOSS_AGGREGATIONS, GlobalBatch
from ..kl import KL_ESTIMATORS, AdaptiveKLController, FixedKLController, kl_loss, kl_penalized_rewards
from ..losses import POLICY_LOSSES, entropy_bonus, token_entropy
from ..masking import masked_count, masked_mean, masked_sum
from .config import EngineConfig
from .policy import Policy, ValueHead
from .rollout import TokenBatch
from .sampling import accepts, position_ids_of


@dataclass(frozen=True)
class TokenStats:
    """Per-token quantities over a batch's last `window` tokens."""

    log_probs: torch.Tensor
    """(B, T) log π(token | context), float32."""
    entropy: torch.Tensor | None
    """(B, T) entropy of the predictive distribution (nats), when asked for."""
    values: torch.Tensor | None
    """(B, T) value-head predictions, when a value head was given."""


def forward_stats(
    model: torch.nn.Module,
    tokens: TokenBatch,
    window: int,
    *,
    with_entropy: bool = False,
    entropy_grad: bool = False,
    value_head: ValueHead | None = None,
    autocast: Callable | None = None,
    temperature: float = 1.0,
) -> TokenStats:
    """One forward pass: log-probabilities (and entropy, values) of the last `window` tokens of each row.

    `temperature` must be the one the rollouts were sampled at: the log-probs (and entropy) are those of
    softmax(logits / temperature), the distribution the tokens were drawn from, so importance ratios,
    KL and the policy gradient all refer to the sampling policy.

    The logits at position p − 1 predict the token at p, so `window + 1` positions of logits are kept
    (`logits_to_keep` where the model supports it: the prompt's logits are never materialised). The
    entropy carries gradients only with `entropy_grad` (an entropy bonus); else it is a detached metric.
    """
    length = tokens.input_ids.shape[1]
    if not 1 <= window < length:
        raise ValueError(f"window={window} must be in [1, {length - 1}] for sequences of {length} tokens")
    kwargs = {"input_ids": tokens.input_ids, "attention_mask": tokens.attention_mask, "use_cache": False}
    if accepts(model, "position_ids"):
        kwargs["position_ids"] = position_ids_of(tokens.attention_mask)
    if accepts(model, "logits_to_keep"):
        kwargs["logits_to_keep"] = window + 1
    if value_head is not None:
        kwargs["output_hidden_states"] = True
    with autocast() if autocast is not None else contextlib.nullcontext():
        out = model(**kwargs)
    if not (temperature > 0 and math.isfinite(temperature)):
        raise ValueError(f"temperature={temperature}: log-probs need a finite temperature > 0")
    logits = out.logits[:, -(window + 1) : -1, :].float()
    if temperature != 1.0:
        logits = logits / temperature
    targets = tokens.input_ids[:, -window:]
    log_probs = logits.gather(-1, targets.unsqueeze(-1)).squeeze(-1) - torch.logsumexp(logits, dim=-1)
    entropy = None
    if with_entropy:
        with torch.set_grad_enabled(entropy_grad and torch.is_grad_enabled()):
            entropy = token_entropy(logits if entropy_grad else logits.detach())
    values = None
    if value_head is not None:
        values = value_head(out.hidden_states[-1][:, -(window + 1) : -1, :])
    return TokenStats(log_probs, entropy, values)


def place_rewards(scores: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Outcome scores onto the last trainable token of each row: (B,), (B, T) → (B, T), 0 elsewhere.

    A row with no trainable token gets no reward anywhere (it cannot be trained on).
    """
    if scores.shape != mask.shape[:1]:
        raise ValueError(f"scores must be (batch,) = {tuple(mask.shape[:1])}, got {tuple(scores.shape)}")
    valid = mask.bool()
    positions = torch.arange(mask.shape[1], device=mask.device).expand_as(mask)
    last = torch.where(valid, positions, torch.full_like(positions, -1)).max(dim=1).values
    rewards = torch.zeros(mask.shape, dtype=torch.float32, device=mask.device)
    rows = (last >= 0).nonzero().squeeze(-1)
    rewards[rows, last[rows]] = scores[rows].float()
    return rewards


def compute_advantages(
    config: EngineConfig,
    *,
    scores: torch.Tensor,
    group_ids: torch.Tensor,
    rewards: torch.Tensor,
    mask: torch.Tensor,
    values: torch.Tensor | None = None,
    baselines: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Advantages (B, T) and returns (B, T) or None, from the configured registry estimator.

    Each estimator receives the inputs its signature names: `scores` (B,) outcome per sample (any
    per-token KL penalty summed in), `group_ids` (B,), `rewards` (B, T) token-level rewards, `mask`,
    `values` (B, T) from the value head, `baselines` (B,) greedy-response rewards; and the keyword
    hyperparameters it accepts among gamma, lam and norm_by_std. A (B,) result is spread over the
    row's trainable tokens.
    """
    estimator = ADVANTAGE_ESTIMATORS[config.algorithm]
    available = {
        "scores": scores,
        "group_ids": group_ids,
        "rewards": rewards,
        "mask": mask,
        "values": values,
        "baselines": baselines,
    }
    hyper = {"gamma": config.gamma, "lam": config.lam, "norm_by_std": config.grpo_norm_by_std}
    arguments = {}
    for name, parameter in inspect.signature(estimator).parameters.items():
        if parameter.kind is inspect.Parameter.KEYWORD_ONLY:
            if name in hyper:
                arguments[name] = hyper[name]
            continue
        if available.get(name) is None:
            raise ValueError(
                f"advantage estimator {config.algorithm!r} needs {name!r}, which this step lacks"
            )
        arguments[name] = available[name]
    result = estimator(**arguments)
    advantages, returns = result if isinstance(result, tuple) else (result, None)
    if advantages.dim() == 1:
        advantages = per_token(advantages, mask)
    return advantages.float(), returns


def value_loss(
    values: torch.Tensor,
    old_values: torch.Tensor,
    returns: torch.Tensor,
    mask: torch.Tensor,
    *,
    clip: float | None,
    aggregate,
    batch: GlobalBatch,
) -> torch.Tensor:
    """PPO's clipped value loss `½ max((V − R)², (clip(V, V_old ± c) − R)²)`, aggregated like the policy loss.

    Shapes: (B, T) each → scalar. Without `clip`: `½ (V − R)²`.
    """
    error = (values - returns).square()
    if clip is not None:
        clipped = old_values + (values - old_values).clamp(-clip, clip)
        error = torch.maximum(error, (clipped - returns).square())
    return aggregate(0.5 * error, mask, batch=batch)


def lr_multiplier(step_index: int, config: EngineConfig) -> float:
    """The factor on the peak learning rate for training step `step_index` (0-based).

    Warm-up: `(s + 1) / warmup_steps` for s < warmup_steps, so the first step already learns and step
    warmup_steps − 1 reaches the peak. Then constant, or a linear / cosine decay over the remaining
    steps: with W warm-up steps and M = max_steps, progress p = (s − W) / (M − W), so the first step after
    warm-up has the peak and the curve would reach 0 at step M (one past the last).
    """
    warmup = config.warmup_steps
    if step_index < warmup:
        return (step_index + 1) / warmup
    if config.lr_decay == "constant":
        return 1.0
    span = max(1, config.max_steps - warmup)
    progress = min(1.0, (step_index - warmup) / span)
    if config.lr_decay == "linear":
        return 1.0 - progress
    return 0.5 * (1.0 + math.cos(math.pi * progress))


@dataclass(frozen=True)
class UpdateBatch:
    """Everything one update reads."""

    tokens: TokenBatch
    scores: torch.Tensor
    """(B,) float32 outcome score of each sample (after reward shaping)."""
    group_ids: torch.Tensor
    """(B,) long, the prompt each sample answers."""
    baselines: torch.Tensor | None = None
    """(B,) greedy-response reward of the sample's prompt (remax)."""


# The policy losses' metric names → the engine's.
_LOSS_METRIC_NAMES = {"clipfrac": "clip_frac", "clipfrac_lower": "clip_frac_lower", "approx_kl": "approx_kl"}


def _policy_loss_kwargs(config: EngineConfig) -> dict:
    accepted = inspect.signature(POLICY_LOSSES[config.policy_loss]).parameters
    wanted = {"clip_low": config.clip_ratio_low, "clip_high": config.clip_ratio_high}
    kwargs = {k: v for k, v in wanted.items() if k in accepted and v is not None}
    if "clip_c" in accepted:
        kwargs["clip_c"] = config.clip_ratio_c
    return kwargs


class Updater:
    """Owns the optimizer and the KL coefficient; `update` runs one training step's optimisation."""

    def __init__(self, policy: Policy, config: EngineConfig, shuffle_generator: torch.Generator):
        self.policy = policy
        self.config = config
        self.shuffle_generator = shuffle_generator
        groups = [
            {
                "params": [p for p in policy.model.parameters() if p.requires_grad],
                "lr": config.lr,
                "weight_decay": config.weight_decay,
                "name": "policy",
            }
        ]
        if policy.value_head is not None:
            groups.append(
                {
                    "params": list(policy.value_head.parameters()),
                    "lr": config.critic_lr,
                    "weight_decay": 0.0,
                    "name": "critic",
                }
            )
        self.peak_lrs = [g["lr"] for g in groups]
        self.optimizer = torch.optim.AdamW(groups, betas=config.adam_betas, foreach=False)
        if config.kl_controller == "adaptive":
            self.kl_controller = AdaptiveKLController(
                config.kl_coef, target=config.kl_target, horizon=config.kl_horizon
            )
        else:
            self.kl_controller = FixedKLController(config.kl_coef)
        self.policy_loss = POLICY_LOSSES[config.policy_loss]
        self.policy_loss_kwargs = _policy_loss_kwargs(config)
        self.aggregate = LOSS_AGGREGATIONS[config.loss_agg_mode]
        self.kl_estimator = KL_ESTIMATORS[config.kl_estimator]

    @property
    def parameters(self) -> list[torch.nn.Parameter]:
        return [p for group in self.optimizer.param_groups for p in group["params"]]

    def set_lr(self, step_index: int) -> float:
        """Apply the schedule for training step `step_index` (0-based); returns the policy's lr."""
        factor = lr_multiplier(step_index, self.config)
        for group, peak in zip(self.optimizer.param_groups, self.peak_lrs, strict=True):
            group["lr"] = peak * factor
        return self.optimizer.param_groups[0]["lr"]

    def _stats(
        self,
        model,
        tokens: TokenBatch,
        window: int,
        *,
        grad: bool,
        with_entropy: bool = False,
        value_head: ValueHead | None = None,
    ) -> TokenStats:
        with torch.set_grad_enabled(grad):
            return forward_stats(
                model,
                tokens,
                window,
                with_entropy=with_entropy,
                entropy_grad=self.config.entropy_coeff > 0,
                value_head=value_head,
                autocast=self.policy.autocast,
                temperature=self.config.temperature,
            )

    def _chunks(self, size: int) -> list[torch.Tensor]:
        per = math.ceil(size / (self.config.mini_batches * self.config.grad_accum))
        return list(torch.arange(size).split(per))

    def _no_grad_pass(self, model, batch: TokenBatch, window: int, value_head=None):
        """Log-probs (and values) for every row, micro-batch by micro-batch, without gradients."""
        log_probs = torch.zeros(batch.size, window, device=batch.input_ids.device)
        values = torch.zeros_like(log_probs) if value_head is not None else None
        for rows in self._chunks(batch.size):
            sub = batch.rows(rows)
            sub_window = sub.input_ids.shape[1] - sub.start
            stats = self._stats(model, sub, sub_window, grad=False, value_head=value_head)
            log_probs[rows, window - sub_window :] = stats.log_probs
            if values is not None:
                values[rows, window - sub_window :] = stats.values
        return log_probs, values

    def update(self, batch: UpdateBatch, step_index: int) -> dict[str, float]:
        """Advantages, then ppo_epochs × mini_batches optimizer steps over `batch`; returns metrics."""
        config, policy = self.config, self.policy
        tokens = batch.tokens
        window = tokens.input_ids.shape[1] - tokens.start
        mask = tokens.response_mask
        size = tokens.size
        lr = self.set_lr(step_index)
        kl_in_reward = config.uses_reference and config.kl_mode == "reward"
        reuse_current = config.ppo_epochs == 1 and config.mini_batches == 1 and not kl_in_reward
        old_log_probs = old_values = ref_log_probs = None
        if not reuse_current or policy.value_head is not None:
            old_log_probs, old_values = self._no_grad_pass(policy.model, tokens, window, policy.value_head)
        if config.uses_reference:
            ref_log_probs, _ = self._no_grad_pass(policy.reference, tokens, window)

        metrics: dict[str, float] = {}
        rewards = place_rewards(batch.scores, mask)
        scores = batch.scores.float()
        if kl_in_reward:
            penalised, mean_kl = kl_penalized_rewards(
                rewards,
                old_log_probs,
                ref_log_probs,
                mask,
                coef=self.kl_controller.value,
                estimator=self.kl_estimator,
            )
            scores = scores + masked_sum(penalised - rewards, mask, dim=-1)
            rewards = penalised
            metrics["kl/reward_penalty_kl"] = float(mean_kl)
            self.kl_controller.update(float(mean_kl), size)
        metrics["kl/coef"] = float(self.kl_controller.value)
        advantages, returns = compute_advantages(
            config,
            scores=scores,
            group_ids=batch.group_ids,
            rewards=rewards,
            mask=mask,
            values=old_values,
            baselines=batch.baselines,
        )
        metrics["advantage/mean"] = float(masked_mean(advantages, mask))
        metrics["advantage/abs_mean"] = float(masked_mean(advantages.abs(), mask))
        if old_values is not None:
            metrics["value/mean"] = float(masked_mean(old_values, mask))
            metrics["value/returns_mean"] = float(masked_mean(returns, mask))

        sums: dict[str, float] = {}
        updates = skipped = 0
        for _ in range(config.ppo_epochs):
            order = (
                torch.randperm(size, generator=self.shuffle_generator)
                if config.mini_batches > 1
                else torch.arange(size)
            )
            for mini in order.tensor_split(config.mini_batches):
                mini_metrics = self._optimise(
                    tokens, mini, window, mask, advantages, returns, old_log_probs, old_values, ref_log_probs
                )
                if mini_metrics.pop("skipped"):
                    skipped += 1
                updates += 1
                for key, value in mini_metrics.items():
                    sums[key] = sums.get(key, 0.0) + value
        metrics.update({key: value / updates for key, value in sums.items()})
        metrics["update/optimizer_steps"] = float(updates - skipped)
        metrics["update/skipped"] = float(skipped)
        metrics["lr"] = lr
        return metrics

    def _optimise(
        self, tokens, mini, window, mask, advantages, returns, old_log_probs, old_values, ref_log_probs
    ) -> dict[str, float]:
        config, policy = self.config, self.policy
        mini_mask = mask[mini]
        total_tokens = masked_count(mini_mask)
        total_sequences = (mini_mask.sum(-1) > 0).float().sum()
        norm = config.loss_norm_length or config.max_new_tokens
        global_batch = GlobalBatch(num_tokens=total_tokens, num_sequences=total_sequences, norm_length=norm)
        sums = {"loss/policy": 0.0, "loss/total": 0.0, "entropy": 0.0}
        self.optimizer.zero_grad(set_to_none=True)
        for rows in mini.tensor_split(config.grad_accum):
            if len(rows) == 0:
                continue
            sub = tokens.rows(rows)
            sub_window = sub.input_ids.shape[1] - sub.start
            cols = slice(window - sub_window, window)
            sub_mask = mask[rows, cols]
            share = float(masked_count(sub_mask) / total_tokens.clamp(min=1))
            stats = self._stats(
                policy.model, sub, sub_window, grad=True, with_entropy=True, value_head=policy.value_head
            )
            old = stats.log_probs.detach() if old_log_probs is None else old_log_probs[rows, cols]
            out = self.policy_loss(
                old, stats.log_probs, advantages[rows, cols], sub_mask, **self.policy_loss_kwargs
            )
            loss_policy = self.aggregate(out.per_token, sub_mask, batch=global_batch)
            loss = loss_policy
            sums["loss/policy"] += float(loss_policy.detach())
            for key, value in out.metrics.items():
                name = _LOSS_METRIC_NAMES.get(key, f"actor/{key}")
                sums[name] = sums.get(name, 0.0) + float(value) * share
            sums["entropy"] += float(masked_mean(stats.entropy.detach(), sub_mask)) * share
            if config.entropy_coeff > 0:
                bonus = entropy_bonus(
                    stats.entropy,
                    sub_mask,
                    coef=config.entropy_coeff,
                    aggregate=self.aggregate,
                    batch=global_batch,
                )
                loss = loss + bonus
                sums["loss/entropy"] = sums.get("loss/entropy", 0.0) + float(bonus.detach())
            if ref_log_probs is not None:
                ref = ref_log_probs[rows, cols]
                estimate = self.kl_estimator(stats.log_probs.detach(), ref)
                sums["kl"] = sums.get("kl", 0.0) + float(masked_mean(estimate, sub_mask)) * share
                if config.kl_mode == "loss":
                    term = kl_loss(
                        stats.log_probs,
                        ref,
                        sub_mask,
                        coef=self.kl_controller.value,
                        estimator=self.kl_estimator,
                        aggregate=self.aggregate,
                        batch=global_batch,
                    )
                    loss = loss + term
                    sums["loss/kl"] = sums.get("loss/kl", 0.0) + float(term.detach())
            if stats.values is not None:
                term = config.value_coef * value_loss(
                    stats.values,
                    old_values[rows, cols],
                    returns[rows, cols],
                    sub_mask,
                    clip=config.value_clip,
                    aggregate=self.aggregate,
                    batch=global_batch,
                )
                loss = loss + term
                sums["loss/value"] = sums.get("loss/value", 0.0) + float(term.detach())
            sums["loss/total"] += float(loss.detach())
            loss.backward()
        max_norm = config.max_grad_norm if config.max_grad_norm is not None else float("inf")
        grad_norm = float(torch.nn.utils.clip_grad_norm_(self.parameters, max_norm))
        skipped = not math.isfinite(grad_norm)
        if skipped:
            self.optimizer.zero_grad(set_to_none=True)
        else:
            self.optimizer.step()
        sums["grad_norm"] = grad_norm
        sums["skipped"] = skipped
        return sums
