"""Shared test setup: fixture files, an isolated oracle cache and no stray data-path variables."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
REPO = Path(__file__).parents[3]
DATA_ENV = (
    "CF_EVALS_DATA_DIR",
    "CF_EVALS_HUMANEVAL_PLUS",
    "CF_EVALS_MBPP",
    "CF_EVALS_MBPP_PLUS",
    "CF_EVALS_BIGCODEBENCH",
    "CF_EVALS_BIGCODEBENCH_HARD",
    "CF_EVALS_STDIO",
)


@pytest.fixture(scope="session")
def oracle_cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("oracle-cache")


@pytest.fixture(autouse=True)
def _isolated_data_env(monkeypatch, oracle_cache):
    """Tests see only the data paths they set; computed oracles go to a per-session cache."""
    for name in DATA_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CF_EVALS_CACHE_DIR", str(oracle_cache))


def load_benchmark_script(relative: str) -> ModuleType:
    """A script under benchmarks/ (a Bazel data dependency of the tests), imported as a module."""
    path = REPO / "benchmarks" / relative
    name = path.stem
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses in the script look their module up here
    spec.loader.exec_module(module)
    return module
