"""What the sandbox covers from its candidates: the folder the problem file really lies in (through a
symlink too) and the oracle cache of expected outputs, when the sandbox would show them."""

from __future__ import annotations

import os

import coding_framework.sandbox.filesystem as filesystem
from coding_framework.evals.benchmarks import get_benchmark
from coding_framework.evals.datasets.evalplus_oracle import CACHE_ENV
from coding_framework.evals.runner import _pool_extras, hidden_paths


def _shown(monkeypatch, tmp_path):
    shown = tmp_path / "shown"
    (shown / "data").mkdir(parents=True)
    monkeypatch.setattr(filesystem, "default_visible", lambda: [str(shown), "/usr"])
    return shown


def test_only_folders_inside_a_shown_path_are_hidden(tmp_path):
    (tmp_path / "shown-not").mkdir()
    visible = [str(tmp_path / "shown") + "/"]
    paths = [tmp_path / "shown", tmp_path / "shown" / "a", tmp_path / "shown-not", tmp_path / "elsewhere"]
    assert hidden_paths(paths, visible) == (str(tmp_path / "shown"), str(tmp_path / "shown" / "a"))


def test_a_symlinked_problem_file_hides_the_folder_of_its_target(monkeypatch, tmp_path):
    shown = _shown(monkeypatch, tmp_path)
    (shown / "data" / "p.jsonl").write_text("{}\n")
    (tmp_path / "mine").mkdir()
    link = tmp_path / "mine" / "p.jsonl"
    link.symlink_to(shown / "data" / "p.jsonl")
    extras = _pool_extras(get_benchmark("stdio"), link)
    assert extras["hidden_paths"] == (os.path.realpath(shown / "data"),)


def test_a_problem_file_in_a_shown_folder_reached_through_a_linked_folder(monkeypatch, tmp_path):
    shown = _shown(monkeypatch, tmp_path)
    (shown / "data" / "p.jsonl").write_text("{}\n")
    (tmp_path / "alias").symlink_to(shown / "data")
    extras = _pool_extras(get_benchmark("stdio"), tmp_path / "alias" / "p.jsonl")
    assert extras["hidden_paths"] == (os.path.realpath(shown / "data"),)


def test_the_oracle_cache_is_hidden_for_the_benchmarks_that_use_it(monkeypatch, tmp_path):
    shown = _shown(monkeypatch, tmp_path)
    monkeypatch.setenv(CACHE_ENV, str(shown / "cache"))
    for name in ("humaneval+", "mbpp+"):
        assert _pool_extras(get_benchmark(name), None)["hidden_paths"] == (os.path.realpath(shown / "cache"),)
    assert "hidden_paths" not in _pool_extras(get_benchmark("stdio"), None)
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))  # outside what the sandbox shows
    assert "hidden_paths" not in _pool_extras(get_benchmark("mbpp+"), None)
