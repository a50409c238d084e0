from typer.testing import CliRunner

from coding_framework import rl_core
from coding_framework.cli.algorithms import registries, summary
from coding_framework.cli.main import app


def test_lists_every_registered_name_with_its_summary():
    result = CliRunner().invoke(app, ["algorithms"], terminal_width=200)
    assert result.exit_code == 0, result.output
    for registry in registries().values():
        for name, fn in registry.items():
            assert name in result.output
            assert summary(fn)[:40] in result.output


def test_names_the_core_algorithms():
    assert {"grpo", "rloo", "gae", "reinforce_plus_plus"} <= set(rl_core.ADVANTAGE_ESTIMATORS)
    assert {"token-mean", "seq-mean-token-sum"} <= set(rl_core.LOSS_AGGREGATIONS)


def test_every_entry_has_a_summary():
    empty = [name for registry in registries().values() for name, fn in registry.items() if not summary(fn)]
    assert not empty, f"registered functions without a docstring: {empty}"
