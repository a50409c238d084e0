"""The local Hugging Face backend with a tiny random model built in the test."""

from __future__ import annotations

import json

import pytest
from tiny_model import build_tiny_model

from coding_framework.evals.benchmarks import get_benchmark
from coding_framework.evals.datasets.humaneval import load_humaneval
from coding_framework.evals.errors import ModelNotFoundError
from coding_framework.evals.generation.base import GenerationConfig, GenerationRequest
from coding_framework.evals.generation.driver import generate_samples
from coding_framework.evals.generation.hf_backend import HFBackend, check_model_dir
from coding_framework.evals.runner import EvalConfig, evaluate_file

ALL = load_humaneval()
PROBLEMS = dict(list(ALL.items())[:2])


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "tiny-model")


def test_missing_or_incomplete_model_dirs_are_clear(tmp_path):
    with pytest.raises(ModelNotFoundError, match=r"model directory not found: .*nope"):
        HFBackend(tmp_path / "nope")
    (tmp_path / "half").mkdir()
    (tmp_path / "half" / "config.json").write_text("{}")
    with pytest.raises(ModelNotFoundError, match=r"missing weights .*, a tokenizer"):
        check_model_dir(tmp_path / "half")


def test_generates_reproducibly_with_long_prompts_truncated(model_dir):
    backend = HFBackend(model_dir, device="cpu", batch_size=2)
    assert backend.name == "tiny-model" and backend.default_style == "completion"
    prompt = get_benchmark("humaneval").make_prompt(PROBLEMS["HumanEval/0"], "completion")
    assert len(backend.tokenizer(prompt.text)["input_ids"]) > 128  # longer than the model's context
    requests = [GenerationRequest("HumanEval/0", i, prompt) for i in range(3)]
    config = GenerationConfig(n_samples=3, temperature=1.0, max_new_tokens=12, seed=1)
    first = list(backend.generate(requests, config))
    again = list(backend.generate(requests, config))
    assert [r.index for r, _ in first] == [0, 1, 2]
    assert [text for _, text in first] == [text for _, text in again]
    assert all(isinstance(text, str) for _, text in first)
    greedy = list(backend.generate(requests[:2], GenerationConfig(max_new_tokens=8)))
    assert greedy[0][1] == greedy[1][1]  # greedy decoding: the same text for every sample


def test_driver_and_sandbox_end_to_end(model_dir, tmp_path):
    backend = HFBackend(model_dir, device="cpu")
    path = tmp_path / "samples.jsonl"
    bench = get_benchmark("humaneval")
    config = GenerationConfig(n_samples=2, max_new_tokens=8)
    run = generate_samples(bench, PROBLEMS, backend, config, path)
    assert (run.generated, run.reused, run.prompt_style) == (4, 0, "completion")
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert {r["model"] for r in rows} == {"tiny-model"}
    ev = evaluate_file(EvalConfig(path, ks=(1, 2), workers=1, limit=2, model=run.model, report=False))
    assert ev.summary.n_samples == 4 and ev.summary.model == "tiny-model"
    assert ev.summary.pass_at_k["pass@1"] == 0.0  # random weights write no working code


def test_chat_template_makes_instruct_the_default(tmp_path):
    template = "{% for m in messages %}<{{ m['role'] }}>{{ m['content'] }}\n{% endfor %}<assistant>"
    path = build_tiny_model(tmp_path / "chatty", chat_template=template)
    backend = HFBackend(path, device="cpu")
    assert backend.default_style == "instruct"
    prompt = get_benchmark("humaneval").make_prompt(ALL["HumanEval/2"], "instruct")
    ids = backend._encode(prompt)
    assert backend.tokenizer.decode(ids[0]).startswith("<user>Please provide a self-contained Python script")
    run = generate_samples(
        get_benchmark("humaneval"),
        {"HumanEval/2": ALL["HumanEval/2"]},
        backend,
        GenerationConfig(max_new_tokens=6),
        tmp_path / "s.jsonl",
    )
    row = json.loads((tmp_path / "s.jsonl").read_text())
    assert run.prompt_style == "instruct" and "solution" in row and row["completion"] == ""
