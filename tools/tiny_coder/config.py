"""The build's configuration: one frozen dataclass whose field docstrings are the CLI help."""

from __future__ import annotations

import ast
import inspect
import itertools
import math
from dataclasses import dataclass, fields


@dataclass(frozen=True)
class BuildConfig:
    """Everything that decides the built model; the same config on the same machine gives the same bytes."""

    out: str
    """Directory to write the model into (config, weights, tokenizer, card); created if missing."""
    seed: int = 0
    """Seeds the corpus stream, weight init, batch order and evaluation sampling."""
    steps: int = 1400
    """Optimizer steps (batches) of supervised training (1400: the committed model; see its card)."""
    problems: int = 8000
    """Distinct sft-split problems in the corpus (see coding_framework.agents.split_of)."""
    vocab_size: int = 768
    """Byte-level BPE vocabulary size, special tokens included."""
    split_digits: bool = True
    """Every digit its own token (so constants are copied token for token from the docstring)."""
    hidden_size: int = 160
    """Model width."""
    layers: int = 4
    """Transformer blocks."""
    heads: int = 4
    """Attention heads (hidden_size must divide by it)."""
    intermediate_size: int = 448
    """SwiGLU MLP width."""
    max_positions: int = 512
    """Longest sequence the model declares (config max_position_embeddings). RoPE has no position
    weights, so this costs no parameters; training sequences are under 200 tokens."""
    batch_size: int = 32
    """Pairs per optimizer step."""
    lr: float = 2e-3
    """AdamW peak learning rate, held constant after warmup (so a checkpoint at step k equals a build
    with --steps k)."""
    warmup_steps: int = 50
    """Linear learning-rate warmup from 0."""
    weight_decay: float = 0.1
    """AdamW weight decay on weight matrices (not on norms)."""
    grad_clip: float = 1.0
    """Clip the gradient's global norm to this."""
    threads: int = 2
    """torch CPU threads (the machine is shared: keep 2)."""
    save_at: tuple[int, ...] = ()
    """Also save (and evaluate) checkpoints after these steps, each under <candidates>/step-<k>."""
    candidates: str = "/tmp/tiny-coder-candidates"
    """Where --save-at checkpoints go (not committed)."""
    evaluate: bool = True
    """Evaluate held-out pass@k in the sandbox after training (needed for the model card's numbers)."""
    eval_samples: int = 8
    """Sampled completions per held-out problem (T=1.0) for unbiased pass@1 / pass@4 / pass@n."""
    temperature: float = 1.0
    """Sampling temperature of the sampled evaluation (pure sampling: no top-k, no top-p)."""
    max_new_tokens: int = 64
    """Generation limit per completion (the longest reference body is about 30 tokens)."""
    log_every: int = 50
    """Print the training loss every this many steps."""

    def __post_init__(self) -> None:
        positive = ("steps", "problems", "hidden_size", "layers", "heads", "intermediate_size",
                    "max_positions", "batch_size", "threads", "eval_samples", "max_new_tokens", "log_every")
        for name in positive:
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"BuildConfig.{name}={value!r}: must be a positive integer")
        if self.warmup_steps < 0:
            raise ValueError(f"BuildConfig.warmup_steps={self.warmup_steps}: must be >= 0")
        if self.hidden_size % self.heads:
            raise ValueError(f"hidden_size={self.hidden_size} does not divide into heads={self.heads}; "
                             "pick a multiple of the head count")
        for name in ("lr", "grad_clip", "temperature"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0):
                raise ValueError(f"BuildConfig.{name}={value}: must be a finite number > 0")
        if not (math.isfinite(self.weight_decay) and self.weight_decay >= 0):
            raise ValueError(f"BuildConfig.weight_decay={self.weight_decay}: must be >= 0")
        object.__setattr__(self, "save_at", tuple(sorted(set(self.save_at))))
        bad = [k for k in self.save_at if not 1 <= k < self.steps]
        if bad:
            raise ValueError(f"save_at steps {bad} are outside 1..steps-1={self.steps - 1}; the final "
                             "model is always saved to --out")
        if not self.out:
            raise ValueError("BuildConfig.out is empty: give the output directory, e.g. models/tiny-coder")


def field_help(cls: type = BuildConfig) -> dict[str, str]:
    """Each field's docstring (the string literal right after it in the class body)."""
    tree = ast.parse(inspect.getsource(cls))
    body = tree.body[0].body  # type: ignore[attr-defined]
    helps: dict[str, str] = {}
    for node, after in itertools.pairwise(body):
        if (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
                and isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)):
            helps[node.target.id] = " ".join(str(after.value.value).split())
    missing = {f.name for f in fields(cls)} - set(helps)
    if missing:
        raise AssertionError(f"{cls.__name__} fields without a docstring: {sorted(missing)}")
    return helps
