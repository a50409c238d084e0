"""Shared test setup: fixture files, an isolated oracle cache and no stray data-path variables."""

from __future__ import annotations

from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
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
