"""The model card: every number comes from build_info.json, written by the same build."""

from __future__ import annotations

from typing import Any


def _pct(value: float) -> str:
    return f"{100 * value:.1f}%"


def render_card(info: dict[str, Any]) -> str:
    """MODEL_CARD.md text for one built model."""
    config, corpus, train, mach = info["config"], info["corpus"], info["train"], info["machine"]
    families = ", ".join(f"{name} ({n})" for name, n in corpus["families"].items())
    levels = ", ".join(f"level {lvl}: {n}" for lvl, n in corpus["levels"].items())
    losses = ", ".join(f"{s}: {v:.3f}" for s, v in train["loss_log"])
    load = mach.get("load_average_1_5_15_min_after_training")
    load_text = f" (load average after training, 1/5/15 min: {', '.join(map(str, load))})" if load else ""
    lines = [
        "# tiny-coder",
        "",
        "A small causal LM made by this project, on CPU, as the starting point of the CPU RL demo "
        "(`tools/run`): it writes the body of a Python function from its stub and docstring, and solves "
        "some but far from all held-out problems of `coding_framework.agents`.",
        "",
        "## How it was made",
        "",
        "From the repository root:",
        "",
        "```",
        info["command"],
        "```",
        "",
        f"- Builder: `tools/tiny_coder` (see its README). Seed {config['seed']}; that seed fixes the corpus, "
        "tokenizer, initial weights, batch order and the evaluation's samples.",
        f"- Corpus: {corpus['pairs']} prompt → completion pairs, {info['corpus_source']}; **\"sft\" split "
        "only** (asserted: every problem's split field and recomputed family+constants hash is \"sft\", "
        "and no behaviour or statement is held-out), so the RL \"train\" split holds behaviours the "
        "model never imitated and the held-out set behaviours it never trained on at all. Prompt = "
        "`problem.statement` (the stub), completion = the reference's body that continues it, then EOS.",
        f"- Levels: {levels}.",
        f"- Families ({len(corpus['families'])}): {families}.",
        f"- Tokenizer: byte-level BPE (`tokenizers`), {config['vocab_size']} tokens including `<|pad|>`, "
        "`<|bos|>`, `<|eos|>`; it prepends `<|bos|>` itself; left padding.",
        f"- Architecture: {info['architecture']}, {config['layers']} layers, hidden {config['hidden_size']}, "
        f"{config['heads']} heads, SwiGLU MLP {config['intermediate_size']}, max {config['max_positions']} "
        "positions, "
        f"tied embeddings: **{info['parameters']:,} parameters**, float32 safetensors.",
        f"- Training: {info['steps']} AdamW steps of {config['batch_size']} pairs "
        f"({train['examples_seen']} examples, {train['epochs']:.2f} epochs), loss on completion + EOS tokens "
        f"only, lr {config['lr']} (linear warmup {config['warmup_steps']} steps, then constant), "
        f"weight decay {config['weight_decay']}, grad clip {config['grad_clip']}.",
        f"- Machine: {mach['cpu']}, {mach['torch_threads']} torch threads ({mach['cores_visible']} cores "
        f"visible, shared with other work); torch {mach['torch']}, transformers {mach['transformers']}, "
        f"tokenizers {mach['tokenizers']}, Python {mach['python']}. Training took "
        f"{train['seconds'] / 60:.1f} min{load_text}; the build up to evaluation "
        f"{info['build_seconds_total'] / 60:.1f} min.",
        f"- Training loss (step: mean since previous entry): {losses}.",
        "",
    ]
    held = info.get("heldout")
    if held:
        sampled = ", ".join(f"{k} **{_pct(v)}**" for k, v in held["sampled"].items())
        by_level = ", ".join(f"level {lvl} {_pct(v)}" for lvl, v in held["greedy_pass1_by_level"].items())
        by_level_s = ", ".join(f"level {lvl} {_pct(v)}" for lvl, v in held["sampled_pass1_by_level"].items())
        lines += [
            "## Held-out results",
            "",
            f"On `load_heldout_set()` ({held['problems']} problems, "
            f"{held['problems'] // len(held['greedy_pass1_by_level'])} per level, split \"heldout\"), scored "
            f"in the real sandbox ({info['sandbox']}); a sample passes when every hidden test passes. "
            f"Evaluation took {held['seconds'] / 60:.1f} min.",
            "",
            f"- Greedy pass@1: **{_pct(held['greedy_pass1'])}** ({by_level}).",
            f"- Sampled at T={held['temperature']} (no top-k/top-p), n={held['samples']} per problem, "
            "unbiased: "
            f"{sampled}; pass@1 by level: {by_level_s}.",
            f"- Problems solved by at least one sample: {held['problems_solved_by_some_sample']} of "
            f"{held['problems']}; samples without runnable code: {_pct(held['sampled_no_code'])}; mean "
            f"default reward of the samples: {held['sampled_mean_reward']:.3f}.",
            f"- For comparison, greedy pass@1 on the train-split starter set (`load_starter_set()`): "
            f"{_pct(info['starter_greedy_pass1'])}.",
            "",
        ]
    else:
        lines += ["## Held-out results", "", "Not evaluated (built with `--no-evaluate`).", ""]
    lines += [
        "## Use",
        "",
        "```python",
        "from transformers import AutoModelForCausalLM, AutoTokenizer",
        'model_dir = "models/tiny-coder"  # a local directory: nothing is downloaded',
        "tok = AutoTokenizer.from_pretrained(model_dir, local_files_only=True)",
        "model = AutoModelForCausalLM.from_pretrained(model_dir, local_files_only=True)",
        "ids = tok(problem.statement, return_tensors=\"pt\")",
        "out = model.generate(**ids, max_new_tokens=64)  # generation_config: pure sampling at T=1",
        "body = tok.decode(out[0, ids[\"input_ids\"].shape[1]:], skip_special_tokens=True)",
        "```",
        "",
        "The completion is a bare function body continuing the stub (what `extract_code` reads in body "
        "mode). Evaluate any model directory the same way with "
        "`.venv/bin/python -m tools.tiny_coder.evaluate --model DIR`.",
        "",
        "## Reproducibility",
        "",
        "Rebuilding with the command above on the same machine and library versions reproduces the "
        "weights and tokenizer byte for byte (the builder's tests check this for a short build). Across "
        "CPUs or torch versions float results may differ in the last bits and then diverge over training, "
        "so bit identity is not guaranteed there; the held-out numbers should stay close. Training and "
        "evaluation times depend on machine load.",
        "",
    ]
    return "\n".join(lines)
