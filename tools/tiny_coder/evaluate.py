"""Held-out pass@k of any local causal-LM directory, scored by the real sandbox.

Generation continues each problem's statement (the tokenizer adds its own BOS, if any), stops at EOS or
`max_new_tokens`, and the decoded new text is scored by `score_completions` with the default
RewardConfig: a sample passes when every hidden test passes. Greedy decoding gives one sample per
problem; sampling at temperature T (no top-k, no top-p) gives n, from which pass@1, pass@4 and pass@n
are the unbiased estimates (Chen et al. 2021). Run as
`python -m tools.tiny_coder.evaluate --model DIR` for any local HF model directory.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass

import torch

from coding_framework.agents import Problem, RewardConfig, load_heldout_set, score_completions
from coding_framework.evals import mean_pass_at_k
from coding_framework.sandbox import SandboxPool

MAX_SEQUENCES_PER_CALL = 128
"""Sequences per `generate` call: bounds memory and keeps left padding short."""


@torch.no_grad()
def generate_completions(model, tokenizer, prompts: Sequence[str], *, samples: int, do_sample: bool,
                         temperature: float = 1.0, max_new_tokens: int = 64,
                         seed: int = 0) -> list[list[str]]:
    """`samples` completions per prompt (the decoded new text, special tokens dropped).

    Prompts are left-padded in chunks; sampling is pure (top_k=0, top_p=1.0) at `temperature`, seeded.
    Returns a list (per prompt) of lists (per sample) of strings.
    """
    if samples < 1 or (not do_sample and samples != 1):
        raise ValueError(f"samples={samples}: greedy decoding gives exactly 1 sample; sampling needs >= 1")
    model.eval()
    torch.manual_seed(seed)
    tokenizer.padding_side = "left"
    per_call = max(1, MAX_SEQUENCES_PER_CALL // samples)
    out: list[list[str]] = []
    for start in range(0, len(prompts), per_call):
        chunk = list(prompts[start:start + per_call])
        enc = tokenizer(chunk, return_tensors="pt", padding=True)
        options = dict(do_sample=True, temperature=temperature, top_k=0, top_p=1.0) if do_sample else \
            dict(do_sample=False, temperature=None, top_k=None, top_p=None)
        generated = model.generate(
            input_ids=enc["input_ids"], attention_mask=enc["attention_mask"], max_new_tokens=max_new_tokens,
            num_return_sequences=samples, pad_token_id=tokenizer.pad_token_id,
            eos_token_id=tokenizer.eos_token_id, **options,
        )
        new = generated[:, enc["input_ids"].shape[1]:]
        texts = tokenizer.batch_decode(new, skip_special_tokens=True)
        out.extend(texts[i * samples:(i + 1) * samples] for i in range(len(chunk)))
    return out


@dataclass(frozen=True)
class EvalResult:
    """Held-out numbers of one model."""

    problems: int
    greedy_pass1: float
    """Fraction of problems whose greedy completion passes every hidden test."""
    sampled: dict[str, float]
    """{"pass@1": ..., "pass@4": ..., "pass@<n>": ...}, unbiased, from `samples` samples per problem."""
    samples: int
    temperature: float
    greedy_pass1_by_level: dict[str, float]
    sampled_pass1_by_level: dict[str, float]
    sampled_mean_reward: float
    """Mean default-RewardConfig reward (correctness + format, clipped to [-1, 1]) of the samples."""
    sampled_no_code: float
    """Fraction of samples with no runnable code (missing or a syntax error)."""
    problems_solved_by_some_sample: int
    seconds: float


def _passes(problems: Sequence[Problem], completions: Sequence[str], pool) -> tuple[list[bool], list]:
    scores = score_completions(problems, completions, pool, RewardConfig())
    return [s.attempt is not None and s.attempt.all_passed for s in scores], scores


def _by_level(problems: Sequence[Problem], values: Sequence[float]) -> dict[str, float]:
    groups: dict[str, list[float]] = defaultdict(list)
    for problem, value in zip(problems, values, strict=True):
        groups[str(problem.difficulty)].append(value)
    return {level: sum(v) / len(v) for level, v in sorted(groups.items())}


def greedy_passes(model, tokenizer, problems: Sequence[Problem], pool,
                  max_new_tokens: int = 64) -> list[bool]:
    """For each problem, whether its greedy completion passes every hidden test."""
    prompts = [p.statement for p in problems]
    greedy = [c[0] for c in generate_completions(model, tokenizer, prompts, samples=1, do_sample=False,
                                                 max_new_tokens=max_new_tokens)]
    return _passes(problems, greedy, pool)[0]


def greedy_pass1(model, tokenizer, problems: Sequence[Problem], pool, max_new_tokens: int = 64) -> float:
    """Fraction of `problems` whose greedy completion passes every hidden test."""
    return sum(greedy_passes(model, tokenizer, problems, pool, max_new_tokens)) / len(problems)


def evaluate(model, tokenizer, problems: Sequence[Problem], pool, *, samples: int = 8,
             temperature: float = 1.0, max_new_tokens: int = 64, seed: int = 0) -> EvalResult:
    """Greedy and sampled pass@k of `model` on `problems` through `pool` (a SandboxPool)."""
    start = time.perf_counter()
    prompts = [p.statement for p in problems]
    greedy_ok = greedy_passes(model, tokenizer, problems, pool, max_new_tokens)
    sampled = generate_completions(model, tokenizer, prompts, samples=samples, do_sample=True,
                                   temperature=temperature, max_new_tokens=max_new_tokens, seed=seed)
    flat_problems = [p for p in problems for _ in range(samples)]
    flat = [c for group in sampled for c in group]
    sampled_ok, scores = _passes(flat_problems, flat, pool)
    counts = {p.id: (samples, sum(sampled_ok[i * samples:(i + 1) * samples])) for i, p in enumerate(problems)}
    ks = sorted({1, min(4, samples), samples})
    per_problem_pass1 = [c / n for n, c in counts.values()]
    no_code = sum(s.attempt is None or not s.attempt.extraction.ok for s in scores) / len(scores)
    return EvalResult(
        problems=len(problems),
        greedy_pass1=sum(greedy_ok) / len(problems),
        sampled=mean_pass_at_k(counts, ks),
        samples=samples,
        temperature=temperature,
        greedy_pass1_by_level=_by_level(problems, [float(x) for x in greedy_ok]),
        sampled_pass1_by_level=_by_level(problems, per_problem_pass1),
        sampled_mean_reward=math.fsum(s.reward for s in scores) / len(scores),
        sampled_no_code=no_code,
        problems_solved_by_some_sample=sum(c > 0 for _, c in counts.values()),
        seconds=time.perf_counter() - start,
    )


def load_model_dir(model_dir: str, threads: int = 2):
    """(model, tokenizer) from a local HF causal-LM directory, fp32, eval mode, no download."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.set_num_threads(threads)
    tokenizer = AutoTokenizer.from_pretrained(model_dir, local_files_only=True)
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    model = AutoModelForCausalLM.from_pretrained(model_dir, local_files_only=True, dtype=torch.float32)
    return model.eval(), tokenizer


def evaluate_dir(model_dir: str, *, samples: int = 8, temperature: float = 1.0, max_new_tokens: int = 64,
                 seed: int = 0, threads: int = 2, workers: int = 2,
                 problems: Sequence[Problem] | None = None) -> EvalResult:
    """Load a local HF causal-LM directory and evaluate it on `problems` (default: the held-out set)."""
    model, tokenizer = load_model_dir(model_dir, threads)
    with SandboxPool(workers=workers) as pool:
        return evaluate(model, tokenizer, list(problems) if problems is not None else load_heldout_set(),
                        pool, samples=samples, temperature=temperature, max_new_tokens=max_new_tokens,
                        seed=seed)


def summary_line(result: EvalResult) -> str:
    """One line: greedy pass@1, sampled pass@k, how many problems any sample solved."""
    sampled = " ".join(f"{k} {v:.3f}" for k, v in result.sampled.items())
    return (f"held-out ({result.problems}): greedy pass@1 {result.greedy_pass1:.3f} | T={result.temperature} "
            f"n={result.samples}: {sampled} | solved by some sample {result.problems_solved_by_some_sample}")


def main(argv: Sequence[str] | None = None, emit: Callable[[str], None] = print) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.tiny_coder.evaluate",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--model", required=True, help="local HF causal-LM directory")
    parser.add_argument("--samples", type=int, default=8, help="sampled completions per problem")
    parser.add_argument("--temperature", type=float, default=1.0)
    parser.add_argument("--max-new-tokens", type=int, default=64)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", help="also write the result here as JSON")
    args = parser.parse_args(argv)
    result = evaluate_dir(args.model, samples=args.samples, temperature=args.temperature,
                          max_new_tokens=args.max_new_tokens, seed=args.seed)
    emit(summary_line(result))
    if args.json:
        from tools.tiny_coder.files import write_text_atomic

        write_text_atomic(args.json, json.dumps(asdict(result), indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
