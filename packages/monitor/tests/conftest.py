"""Shared fixtures: every test gets a clean environment and a console that writes to a buffer."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from rich.console import Console

from coding_framework.monitor import MonitorConfig


@pytest.fixture(autouse=True, scope="session")
def _matplotlib_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    """One font cache for the session: building it takes seconds, so not once per test's HOME."""
    os.environ.setdefault("MPLCONFIGDIR", str(tmp_path_factory.mktemp("matplotlib")))


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test may log to a real tracking server or write into the user's home directory."""
    for name in ("MLFLOW_TRACKING_URI", "WANDB_API_KEY", "WANDB_MODE", "WANDB_DIR"):
        monkeypatch.delenv(name, raising=False)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("WANDB_CONFIG_DIR", str(home / ".config" / "wandb"))
    monkeypatch.setenv("WANDB_CACHE_DIR", str(home / ".cache" / "wandb"))
    monkeypatch.setenv("WANDB_DATA_DIR", str(home / ".local" / "wandb"))


@pytest.fixture
def console_buffer() -> tuple[Console, io.StringIO]:
    buffer = io.StringIO()
    return Console(file=buffer, width=60, color_system=None, force_terminal=False), buffer


@pytest.fixture
def local_config(tmp_path: Path):
    """MonitorConfig factory for tests that need no tracking service: console + JSONL only by default."""

    def make(name: str = "run", **overrides) -> MonitorConfig:
        fields = {"run_dir": tmp_path / name, "mlflow": "off", **overrides}
        return MonitorConfig(**fields)

    return make
