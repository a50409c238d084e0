"""The OpenAI-compatible backend against the loopback stub server: request shapes, retries with
backoff, errors, the API key, concurrency; and the resumable driver that writes the samples file."""

from __future__ import annotations

import json

import pytest

from coding_framework.evals.benchmarks import get_benchmark
from coding_framework.evals.datasets.humaneval import load_humaneval
from coding_framework.evals.errors import GenerationError
from coding_framework.evals.generation.base import GenerationConfig, GenerationRequest
from coding_framework.evals.generation.driver import generate_samples
from coding_framework.evals.generation.openai_backend import OpenAICompatibleBackend
from coding_framework.evals.prompts import Prompt
from coding_framework.evals.stub_openai_server import StubOpenAIServer

HUMANEVAL = load_humaneval()
FIRST_FIVE = dict(list(HUMANEVAL.items())[:5])
COMPLETION = Prompt(
    style="completion", text="def f():\n", stop=("\ndef", "\nclass", "\nif", "\nprint", "\n#")
)
CHAT = Prompt(style="instruct", text="Write f.")


def _canonical(body: dict) -> str:
    """The stub's answer: the canonical solution of the prompt it was sent, plus junk after a stop."""
    prompt = body.get("prompt") or body["messages"][-1]["content"]
    for problem in HUMANEVAL.values():
        if problem.prompt == prompt:
            return problem.canonical_solution + "\ndef junk():\n    pass\n"
    return "pass"


def _backend(server: StubOpenAIServer, sleeps: list | None = None, **kwargs) -> OpenAICompatibleBackend:
    recorder = sleeps.append if sleeps is not None else (lambda s: None)
    return OpenAICompatibleBackend(server.url, "stub-model", sleep=recorder, **kwargs)


DEFAULT_CONFIG = GenerationConfig(max_new_tokens=64, seed=5)


def _one(backend, prompt=COMPLETION, index=0, config=DEFAULT_CONFIG):
    return list(backend.generate([GenerationRequest("T/0", index, prompt)], config))


def test_completion_and_chat_requests_follow_the_openai_api():
    with StubOpenAIServer(lambda body: "text") as server:
        backend = _backend(server)
        assert _one(backend, index=3)[0][1] == "text"
        assert _one(backend, prompt=CHAT)[0][1] == "text"
        sampled = GenerationConfig(temperature=0.8, top_p=0.9)
        _one(backend, config=sampled)
    completion, chat, sampling = server.bodies
    assert completion == {
        "model": "stub-model",
        "max_tokens": 64,
        "temperature": 0.0,
        "n": 1,
        "seed": 8,
        "prompt": "def f():\n",
        "stop": ["\ndef", "\nclass", "\nif", "\nprint"],
    }
    assert chat["messages"] == [{"role": "user", "content": "Write f."}] and "prompt" not in chat
    assert (sampling["temperature"], sampling["top_p"]) == (0.8, 0.9)


def test_transient_statuses_are_retried_with_exponential_backoff():
    sleeps: list[float] = []
    with StubOpenAIServer(lambda body: "ok", script=[503, 429, 500]) as server:
        assert _one(_backend(server, sleeps, backoff_s=1.0))[0][1] == "ok"
    assert len(server.bodies) == 4
    assert [s >= 0.5 * 2**i and s <= 2**i for i, s in enumerate(sleeps)] == [True, True, True]


def test_retry_after_is_honoured():
    sleeps: list[float] = []
    with StubOpenAIServer(lambda body: "ok", script=[429], retry_after_s=0.25) as server:
        _one(_backend(server, sleeps))
    assert sleeps == [0.25]


def test_client_errors_stop_at_once_with_the_servers_message():
    expected = r"/v1/completions answered 400: stub: scripted 400$"
    with (
        StubOpenAIServer(lambda body: "ok", script=[400]) as server,
        pytest.raises(GenerationError, match=expected),
    ):
        _one(_backend(server))
    assert len(server.bodies) == 1


def test_giving_up_after_the_retries():
    with (
        StubOpenAIServer(lambda body: "ok", script=[502] * 5) as server,
        pytest.raises(GenerationError, match=r"T/0 failed after 3 attempts \(HTTP 502: stub: scripted 502\)"),
    ):
        _one(_backend(server, [], max_retries=2))


def test_unreachable_server_is_retried_then_reported():
    server = StubOpenAIServer(lambda body: "ok").start()
    url = server.url
    server.stop()
    backend = OpenAICompatibleBackend(url, "m", max_retries=1, sleep=lambda s: None)
    with pytest.raises(GenerationError, match=r"failed after 2 attempts \(ConnectError"):
        _one(backend)


def test_api_key_comes_from_the_environment(monkeypatch):
    with StubOpenAIServer(lambda body: "ok", api_key="sekrit") as server:
        monkeypatch.delenv("MY_KEY", raising=False)
        with pytest.raises(GenerationError, match=r"answered 401: .* \(is \$MY_KEY set\?\)"):
            _one(_backend(server, api_key_env="MY_KEY"))
        monkeypatch.setenv("MY_KEY", "sekrit")
        assert _one(_backend(server, api_key_env="MY_KEY"))[0][1] == "ok"


def test_requests_run_concurrently_up_to_the_limit():
    requests = [GenerationRequest(f"T/{i}", 0, COMPLETION) for i in range(12)]
    with StubOpenAIServer(lambda body: "ok", delay_s=0.05) as server:
        out = list(_backend(server, concurrency=4).generate(requests, GenerationConfig()))
    assert sorted(r.task_id for r, _ in out) == sorted(r.task_id for r in requests)
    assert server.max_in_flight == 4


def test_a_failing_run_yields_what_finished_then_raises():
    requests = [GenerationRequest(f"T/{i}", 0, COMPLETION) for i in range(8)]
    got = []
    server = StubOpenAIServer(lambda body: "ok", fail_after=5)
    with server, pytest.raises(GenerationError, match="the run was interrupted"):
        for item in _backend(server, concurrency=1).generate(requests, GenerationConfig()):
            got.append(item)
    assert len(got) == 5 and len(server.bodies) == 6  # nothing started after the failure


def test_bad_backend_settings():
    with pytest.raises(ValueError, match="http"):
        OpenAICompatibleBackend("127.0.0.1:8000", "m")
    with pytest.raises(ValueError, match="model"):
        OpenAICompatibleBackend("http://127.0.0.1:1/v1", "")


# -- the driver --------------------------------------------------------------------------------------
def _rows(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_driver_writes_samples_and_resumes_after_an_interruption(tmp_path):
    bench = get_benchmark("humaneval")
    path = tmp_path / "samples.jsonl"
    config = GenerationConfig(n_samples=2, prompt_style="completion")
    with StubOpenAIServer(_canonical, fail_after=4) as server, pytest.raises(GenerationError):
        generate_samples(bench, FIRST_FIVE, _backend(server, concurrency=1), config, path)
    first = _rows(path)
    assert len(first) == 4
    with StubOpenAIServer(_canonical) as server:
        run = generate_samples(bench, FIRST_FIVE, _backend(server, concurrency=3), config, path)
    assert (run.generated, run.reused) == (6, 4) and len(server.bodies) == 6  # nothing regenerated
    rows = _rows(path)
    assert [(r["task_id"], r["sample_index"]) for r in rows] == [(t, i) for t in FIRST_FIVE for i in range(2)]
    assert [
        r
        for r in rows
        if (r["task_id"], r["sample_index"]) in {(f["task_id"], f["sample_index"]) for f in first}
    ] == first
    row = rows[0]
    assert row["completion"] == HUMANEVAL["HumanEval/0"].canonical_solution  # cut at the "\ndef" stop
    assert row["raw_generation"].endswith("def junk():\n    pass\n")
    assert (row["model"], row["benchmark"], row["prompt_style"]) == ("stub-model", "humaneval", "completion")
    with StubOpenAIServer(_canonical) as server:
        again = generate_samples(bench, FIRST_FIVE, _backend(server), config, path)
    assert (again.generated, len(server.bodies)) == (0, 0)


def test_a_torn_last_line_is_generated_again(tmp_path):
    bench = get_benchmark("humaneval")
    path = tmp_path / "samples.jsonl"
    config = GenerationConfig(prompt_style="completion")
    with StubOpenAIServer(_canonical) as server:
        generate_samples(bench, FIRST_FIVE, _backend(server), config, path)
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:-1]) + lines[-1][:20])  # a crash in the middle of a write
    with StubOpenAIServer(_canonical) as server:
        run = generate_samples(bench, FIRST_FIVE, _backend(server), config, path)
    assert (run.generated, run.reused) == (1, 4)
    assert len(_rows(path)) == 5


def test_resuming_with_another_model_or_style_is_refused(tmp_path):
    bench = get_benchmark("humaneval")
    path = tmp_path / "samples.jsonl"
    with StubOpenAIServer(_canonical) as server:
        generate_samples(
            bench, FIRST_FIVE, _backend(server), GenerationConfig(prompt_style="completion"), path
        )
        with pytest.raises(
            GenerationError, match=r"holds samples of .*'prompt_style': 'completion'.* not .*instruct"
        ):
            generate_samples(bench, FIRST_FIVE, _backend(server), GenerationConfig(), path)  # chat default


def test_instruct_samples_are_whole_programs(tmp_path):
    answer = (
        "Here you go:\n```python\nfrom typing import List\n\n"
        "def has_close_elements(numbers, threshold):\n    return False\n```"
    )
    with StubOpenAIServer(lambda body: answer) as server:
        generate_samples(
            get_benchmark("humaneval"),
            dict(list(FIRST_FIVE.items())[:1]),
            _backend(server),
            GenerationConfig(),
            tmp_path / "s.jsonl",
        )
    (row,) = _rows(tmp_path / "s.jsonl")
    assert row["prompt_style"] == "instruct" and row["completion"] == ""
    assert (
        row["solution"]
        == "from typing import List\n\ndef has_close_elements(numbers, threshold):\n    return False\n"
    )
