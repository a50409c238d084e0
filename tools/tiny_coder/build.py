"""Build the tiny code model: corpus → tokenizer → LlamaForCausalLM → supervised training → evaluation.

    .venv/bin/python -m tools.tiny_coder.build --out models/tiny-coder [--steps N] [--seed S] ...

Writes into --out: config.json, generation_config.json, model.safetensors, tokenizer.json,
tokenizer_config.json, build_info.json (everything the card states, machine-readable) and
MODEL_CARD.md. `--save-at K1,K2` also saves the models after those steps under --candidates/step-K,
each with its own card and numbers; since the learning rate is constant after warmup, step-K is the
model `--steps K` builds.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import shlex
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from tools.tiny_coder.config import BuildConfig, field_help

COMMAND_PREFIX = ".venv/bin/python -m tools.tiny_coder.build"
INFO_FILE = "build_info.json"
CARD_FILE = "MODEL_CARD.md"
SANDBOX_NOTE = "`SandboxPool`, `score_completions` with the default `RewardConfig`"


def parse_args(argv: Sequence[str] | None = None) -> BuildConfig:
    """BuildConfig from command-line flags (--field-name VALUE; booleans as --x / --no-x)."""
    helps = field_help()
    parser = argparse.ArgumentParser(prog=COMMAND_PREFIX, description=__doc__.split("\n")[0])
    for field in dataclasses.fields(BuildConfig):
        flag = "--" + field.name.replace("_", "-")
        default = None if field.default is dataclasses.MISSING else field.default
        if field.type in ("bool", bool):
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=default,
                                help=helps[field.name])
        elif field.name == "save_at":
            parser.add_argument(flag, default="", help=helps[field.name] + " Comma-separated.")
        else:
            kind = {"int": int, "float": float, "str": str}[str(field.type)]
            parser.add_argument(flag, type=kind, default=default, required=default is None,
                                help=helps[field.name] + ("" if default is None else f" Default {default}."))
    args = vars(parser.parse_args(argv))
    text = args.pop("save_at")
    try:
        save_at = tuple(int(k) for k in text.split(",") if k.strip())
    except ValueError:
        parser.error(f"--save-at {text!r}: give comma-separated step numbers, e.g. 200,400")
    try:
        return BuildConfig(save_at=save_at, **args)
    except ValueError as err:
        parser.error(str(err))


def command_for(config: BuildConfig, steps: int | None = None) -> str:
    """The command that rebuilds `config`'s model (with `steps` instead, for a candidate): --out,
    --steps and --seed always, then only non-default options, leaving out those that change nothing in
    the model (candidates, logging)."""
    steps = config.steps if steps is None else steps
    parts = [COMMAND_PREFIX, "--out", shlex.quote(config.out), "--steps", str(steps),
             "--seed", str(config.seed)]
    defaults = BuildConfig(out="x")
    skip = {"out", "steps", "seed", "save_at", "candidates", "log_every"}
    for field in dataclasses.fields(BuildConfig):
        value = getattr(config, field.name)
        if field.name in skip or value == getattr(defaults, field.name):
            continue
        flag = "--" + field.name.replace("_", "-")
        if isinstance(value, bool):
            parts.append(flag if value else "--no-" + field.name.replace("_", "-"))
        else:
            parts += [flag, str(value)]
    return " ".join(parts)


def machine() -> dict[str, Any]:
    """Where the build ran: CPU model, cores, library versions."""
    import tokenizers
    import torch
    import transformers

    cpu = platform.processor() or "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"cpu": cpu, "cores_visible": len(os.sched_getaffinity(0)),
            "torch_threads": torch.get_num_threads(),
            "python": platform.python_version(), "torch": torch.__version__,
            "transformers": transformers.__version__, "tokenizers": tokenizers.__version__,
            "platform": platform.platform()}


def run_build(config: BuildConfig, log: Callable[[str], None] = print) -> dict[str, Any]:
    """Build, save and (if config.evaluate) evaluate; returns the final model's build info."""
    os.environ.setdefault("RAYON_NUM_THREADS", str(config.threads))  # the tokenizer trainer's pool
    import torch

    from tools.tiny_coder.card import render_card
    from tools.tiny_coder.corpus import build_corpus, corpus_summary
    from tools.tiny_coder.files import save_model_dir, write_text_atomic
    from tools.tiny_coder.model import build_model, parameter_count
    from tools.tiny_coder.tokenizer import train_tokenizer
    from tools.tiny_coder.train import encode_pairs, train

    torch.set_num_threads(config.threads)
    torch.use_deterministic_algorithms(True)
    started = time.perf_counter()
    pairs = build_corpus(config.problems, config.seed)
    log(f"corpus: {len(pairs)} sft-split pairs ({time.perf_counter() - started:.0f} s)")
    tokenizer = train_tokenizer([t for p in pairs for t in (p.prompt, p.completion)], config.vocab_size,
                                config.max_positions, split_digits=config.split_digits)
    model = build_model(config, tokenizer)
    examples = encode_pairs(pairs, tokenizer, config.max_positions)
    n_params = parameter_count(model)
    log(f"model: LlamaForCausalLM, {n_params:,} parameters; {len(examples)} examples")
    saved: dict[int, Path] = {}
    train_seconds: dict[int, float] = {}
    train_start = time.perf_counter()
    prep_seconds = train_start - started

    def on_step(step: int) -> None:
        if step in config.save_at:
            train_seconds[step] = time.perf_counter() - train_start
            saved[step] = Path(config.candidates) / f"step-{step}"
            save_model_dir(model, tokenizer, saved[step], config.max_new_tokens)
            log(f"saved candidate {saved[step]}")

    train_log = train(model, examples, config, tokenizer.pad_token_id, on_step=on_step, log=log)
    train_seconds[config.steps] = train_log.seconds
    load = os.getloadavg()
    saved[config.steps] = Path(config.out)
    save_model_dir(model, tokenizer, config.out, config.max_new_tokens)
    build_seconds = time.perf_counter() - started
    common = {
        "corpus": corpus_summary(pairs),
        "corpus_source": f"coding_framework.agents.iter_problems('tiny-coder-{config.seed}', split='sft'), "
                         "distinct statements",
        "parameters": n_params,
        "architecture": model.config.architectures[0] if model.config.architectures else "LlamaForCausalLM",
        "machine": {**machine(), "load_average_1_5_15_min_after_training": [round(x, 2) for x in load]},
    }
    infos: dict[int, dict[str, Any]] = {}
    for step in sorted(saved):
        losses = [(s, v) for s, v in train_log.losses if s <= step]
        seconds = build_seconds if step == config.steps else prep_seconds + train_seconds[step]
        infos[step] = {
            **common,
            "command": command_for(config, step),
            # The config of the build the command describes (a candidate's is the same with its steps).
            "config": dataclasses.asdict(dataclasses.replace(config, steps=step, save_at=())),
            "steps": step,
            "train": {"seconds": train_seconds[step],
                      "examples_seen": step * config.batch_size,
                      "epochs": step * config.batch_size / len(examples),
                      "loss_log": losses},
            "build_seconds_total": seconds,
        }
    if config.evaluate:
        _evaluate_all(config, saved, infos, log)
    for step, where in saved.items():
        info = infos[step]
        write_text_atomic(where / INFO_FILE, json.dumps(info, indent=2, sort_keys=True) + "\n")
        write_text_atomic(where / CARD_FILE, render_card(info))
    log(f"wrote {config.out} ({time.perf_counter() - started:.0f} s in all)")
    return infos[config.steps]


def _evaluate_all(config: BuildConfig, saved: dict[int, Path], infos: dict[int, dict[str, Any]],
                  log: Callable[[str], None]) -> None:
    """Held-out greedy + sampled pass@k and starter-set greedy pass@1 of every saved model, loaded back
    from disk (so the numbers are those of the files)."""
    from coding_framework.agents import load_heldout_set, load_starter_set
    from coding_framework.sandbox import SandboxPool
    from tools.tiny_coder.evaluate import evaluate, greedy_pass1, load_model_dir, summary_line

    heldout, starter = load_heldout_set(), load_starter_set()
    with SandboxPool(workers=config.threads) as pool:
        for step, where in sorted(saved.items()):
            model, tokenizer = load_model_dir(str(where), config.threads)
            result = evaluate(model, tokenizer, heldout, pool, samples=config.eval_samples,
                              temperature=config.temperature, max_new_tokens=config.max_new_tokens,
                              seed=config.seed)
            starter_pass1 = greedy_pass1(model, tokenizer, starter, pool, config.max_new_tokens)
            infos[step]["heldout"] = dataclasses.asdict(result)
            infos[step]["starter_greedy_pass1"] = starter_pass1
            infos[step]["sandbox"] = SANDBOX_NOTE
            log(f"step {step}: {summary_line(result)} | starter (train split) greedy {starter_pass1:.3f}")


def main(argv: Sequence[str] | None = None) -> int:
    config = parse_args(argv)
    run_build(config, log=lambda line: print(line, flush=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
