"""`coding-framework evaluate` generating its own samples: a local HF model (tiny, random, built
here), an OpenAI-compatible server on loopback (evals' stub), the references; resuming; errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from coding_framework.cli.main import app
from coding_framework.evals.datasets.humaneval import load_humaneval
from coding_framework.evals.stub_openai_server import StubOpenAIServer

BY_PROMPT = {p.prompt: p.canonical_solution for p in load_humaneval().values()}


def _invoke(*args: str):
    return CliRunner().invoke(app, ["evaluate", *args], terminal_width=200)


def _one_line_error(result) -> str:
    assert "Traceback" not in result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, result.output
    return lines[0]


def _build_tiny_model(path: Path) -> Path:
    """A 2-layer random Llama with a byte-level BPE tokenizer trained on three lines."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=280,
        special_tokens=["<pad>", "<eos>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tokenizer.train_from_iterator(
        ["def f(x):\n    return x + 1\n", "for i in range(3):\n    print(i)\n"] * 3, trainer
    )
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, eos_token="<eos>", pad_token="<pad>")
    config = LlamaConfig(
        vocab_size=len(fast),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=256,
        eos_token_id=fast.eos_token_id,
        pad_token_id=fast.pad_token_id,
        bos_token_id=None,
    )
    LlamaForCausalLM(config).save_pretrained(path)
    fast.save_pretrained(path)
    return path


def test_model_path_generates_scores_and_reports(tmp_path):
    model = _build_tiny_model(tmp_path / "tiny-coder")
    out = tmp_path / "run"
    args = [
        "--benchmark",
        "humaneval",
        "--model-path",
        str(model),
        "--n-samples",
        "2",
        "--limit",
        "2",
        "--max-new-tokens",
        "8",
        "--temperature",
        "0.8",
        "--k",
        "1,2",
        "--workers",
        "1",
        "--output-dir",
        str(out),
    ]
    result = _invoke(*args)
    assert result.exit_code == 0, result.output
    assert "generated 4 sample(s) with tiny-coder (completion prompts), kept 0" in result.output
    names = sorted(p.name for p in out.iterdir())
    assert names == [
        "results.jsonl",
        "results_report.md",
        "results_report.png",
        "results_summary.json",
        "samples.jsonl",
    ]
    summary = json.loads((out / "results_summary.json").read_text())
    assert (summary["model"], summary["n_samples"], summary["n_tasks"], summary["n_problems"]) == (
        "tiny-coder",
        4,
        2,
        2,
    )
    assert summary["pass_at_k"] == {"pass@1": 0.0, "pass@2": 0.0}
    again = _invoke(*args)
    assert (
        again.exit_code == 0
        and "generated 0 sample(s) with tiny-coder (completion prompts), kept 4" in again.output
    )


def test_missing_model_dir_is_one_line(tmp_path):
    result = _invoke("--model-path", str(tmp_path / "nope"), "--output-dir", str(tmp_path / "o"))
    assert result.exit_code == 1
    assert "model directory not found" in _one_line_error(result)


def _answer(body: dict) -> str:
    return BY_PROMPT[body["prompt"]]


def test_base_url_generates_resumes_and_scores(tmp_path):
    out = tmp_path / "run"
    args = [
        "--base-url",
        "",
        "--model",
        "stub-model",
        "--prompt-style",
        "completion",
        "--limit",
        "6",
        "--k",
        "1",
        "--workers",
        "2",
        "--output-dir",
        str(out),
        "--no-report",
    ]
    with StubOpenAIServer(_answer, fail_after=4) as server:
        args[1] = server.url
        failed = _invoke(*args)
    assert failed.exit_code == 4
    assert "the run was interrupted" in failed.output and "rerun the same command to resume" in failed.output
    with StubOpenAIServer(_answer) as server:
        args[1] = server.url
        result = _invoke(*args)
    assert result.exit_code == 0, result.output
    assert "generated 2 sample(s) with stub-model (completion prompts), kept 4" in result.output
    assert len(server.bodies) == 2
    summary = json.loads((out / "results_summary.json").read_text())
    assert summary["pass_at_k"] == {"pass@1": 1.0} and summary["model"] == "stub-model"
    assert not (out / "results_report.md").exists()


def _lines(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


def test_sigterm_while_generating_keeps_the_samples_so_far_and_the_same_command_resumes(tmp_path):
    out = tmp_path / "run"
    with StubOpenAIServer(_answer, delay_s=0.3) as server:
        command = [str(Path(sys.executable).with_name("coding-framework")), "evaluate", "--base-url",
                   server.url, "--model", "stub-model", "--prompt-style", "completion", "--limit", "30",
                   "--concurrency", "1", "--k", "1", "--workers", "1", "--output-dir", str(out),
                   "--no-report"]
        env = {**os.environ, "COLUMNS": "200"}
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        samples = out / "samples.jsonl"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and _lines(samples) < 3:
            time.sleep(0.05)
        proc.terminate()
        _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert stderr.strip() == ("error: interrupted while generating: the samples finished so far are kept; "
                              "rerun the same command to resume")
    kept = _lines(samples)
    assert 3 <= kept < 30
    with StubOpenAIServer(_answer) as server:
        command[3] = server.url
        again = subprocess.run(command, capture_output=True, text=True, timeout=300, env=env)
    assert again.returncode == 0, again.stderr
    generated = f"generated {30 - kept} sample(s) with stub-model (completion prompts), kept {kept} from"
    assert generated in again.stderr
    assert json.loads((out / "results_summary.json").read_text())["pass_at_k"] == {"pass@1": 1.0}


def test_references_are_scored(tmp_path):
    result = _invoke(
        "--references", "--limit", "3", "--k", "1", "--output-dir", str(tmp_path), "--workers", "1"
    )
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "results_summary.json").read_text())
    assert summary["pass_at_k"] == {"pass@1": 1.0} and summary["model"] == "reference"


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        ([], 2, "give one source of samples"),
        (["--references", "--samples", "s.jsonl"], 2, "--samples and --references were given"),
        (["--base-url", "http://127.0.0.1:9/v1"], 2, "--base-url needs --model NAME"),
        (["--references", "--option", "nonsense"], 2, "expected NAME=VALUE"),
        (["--references", "--option", "x=1"], 1, "humaneval has no option 'x'; valid options: none"),
    ],
)
def test_usage_and_option_errors(tmp_path, args, code, message):
    result = _invoke(*args, "--output-dir", str(tmp_path))
    assert result.exit_code == code
    assert message in result.output
