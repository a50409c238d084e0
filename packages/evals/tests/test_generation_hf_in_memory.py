"""`HFBackend.from_model`: generating with a model object a training loop already holds."""

from __future__ import annotations

import pytest
from tiny_model import build_tiny_model

from coding_framework.evals.benchmarks import get_benchmark
from coding_framework.evals.datasets.humaneval import load_humaneval
from coding_framework.evals.generation.base import GenerationConfig, GenerationRequest
from coding_framework.evals.generation.hf_backend import HFBackend

PROBLEM = load_humaneval()["HumanEval/0"]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "tiny-model")


def _loaded(model_dir):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    return (
        AutoModelForCausalLM.from_pretrained(model_dir, local_files_only=True),
        AutoTokenizer.from_pretrained(model_dir, local_files_only=True),
    )


def test_an_in_memory_model_generates_what_the_same_weights_loaded_from_disk_do(model_dir):
    model, tokenizer = _loaded(model_dir)
    model.eval()
    backend = HFBackend.from_model(model, tokenizer, name="run/step_3", batch_size=2)
    assert backend.model is model and backend.tokenizer is tokenizer  # no copy
    assert backend.name == "run/step_3" and backend.default_style == "completion"
    assert backend.max_positions == 128 and str(backend.device) == "cpu"
    from_disk = HFBackend(model_dir, device="cpu", batch_size=2)
    prompt = get_benchmark("humaneval").make_prompt(PROBLEM, "completion")
    requests = [GenerationRequest("HumanEval/0", i, prompt) for i in range(3)]
    for config in (
        GenerationConfig(n_samples=3, temperature=1.0, max_new_tokens=10, seed=4),
        GenerationConfig(max_new_tokens=10),
    ):
        ours = [(r.index, text) for r, text in backend.generate(requests, config)]
        theirs = [(r.index, text) for r, text in from_disk.generate(requests, config)]
        assert ours == theirs
        assert len({text for _, text in ours}) == (3 if config.temperature else 1)


def test_the_model_is_left_in_the_mode_the_caller_chose(model_dir):
    model, tokenizer = _loaded(model_dir)
    model.train()
    backend = HFBackend.from_model(model, tokenizer, name="m")
    prompt = get_benchmark("humaneval").make_prompt(PROBLEM, "completion")
    list(backend.generate([GenerationRequest("HumanEval/0", 0, prompt)], GenerationConfig(max_new_tokens=2)))
    assert model.training


def test_bad_arguments_are_named(model_dir):
    model, tokenizer = _loaded(model_dir)
    with pytest.raises(ValueError, match="name must say which model"):
        HFBackend.from_model(model, tokenizer, name="")
    with pytest.raises(ValueError, match="batch_size must be at least 1, got 0"):
        HFBackend.from_model(model, tokenizer, name="m", batch_size=0)
