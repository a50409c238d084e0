"""A full HumanEval run driven by an OpenAI-compatible server on loopback (the project's stub),
interrupted part-way and resumed without regenerating finished samples, then scored in the sandbox."""

from __future__ import annotations

import json

import pytest

from coding_framework.evals.benchmarks import get_benchmark
from coding_framework.evals.datasets.humaneval import load_humaneval
from coding_framework.evals.errors import GenerationError
from coding_framework.evals.generation.base import GenerationConfig
from coding_framework.evals.generation.driver import generate_samples
from coding_framework.evals.generation.openai_backend import OpenAICompatibleBackend
from coding_framework.evals.runner import EvalConfig, evaluate_file
from coding_framework.evals.stub_openai_server import StubOpenAIServer

PROBLEMS = load_humaneval()
BY_PROMPT = {p.prompt: p.canonical_solution for p in PROBLEMS.values()}


def _answer(body: dict) -> str:
    # A model that knows HumanEval: the canonical body, then text a stop sequence must cut off.
    return BY_PROMPT[body["prompt"]] + "\n\nif __name__ == '__main__':\n    print('demo')\n"


def test_full_humaneval_through_a_loopback_server(tmp_path):
    bench = get_benchmark("humaneval")
    samples = tmp_path / "samples.jsonl"
    config = GenerationConfig(prompt_style="completion", max_new_tokens=400)
    with StubOpenAIServer(_answer, fail_after=60) as server:
        backend = OpenAICompatibleBackend(server.url, "stub-model", concurrency=8, sleep=lambda s: None)
        with pytest.raises(GenerationError, match="the run was interrupted"):
            generate_samples(bench, PROBLEMS, backend, config, samples)
    finished = {json.loads(line)["task_id"]: line for line in samples.read_text().splitlines()}
    assert len(finished) == 60

    with StubOpenAIServer(_answer) as server:
        backend = OpenAICompatibleBackend(server.url, "stub-model", concurrency=8)
        run = generate_samples(bench, PROBLEMS, backend, config, samples)
    assert (run.generated, run.reused) == (104, 60)
    asked = {prompt for body in server.bodies for prompt in [body["prompt"]]}
    assert len(server.bodies) == 104 and not asked & {PROBLEMS[t].prompt for t in finished}
    lines = samples.read_text().splitlines()
    assert [json.loads(line)["task_id"] for line in lines] == list(PROBLEMS)
    assert all(
        finished[json.loads(line)["task_id"]] == line
        for line in lines
        if json.loads(line)["task_id"] in finished
    )

    ev = evaluate_file(EvalConfig(samples, ks=(1,), workers=2, model=run.model))
    assert ev.summary.n_samples == 164 and ev.summary.pass_at_k == {"pass@1": 1.0}
    assert ev.report_path is not None and ev.report_path.with_suffix(".png").is_file()
