"""`coding-framework algorithms`: what rl-core offers, by registry name."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping

import typer
from rich.console import Console
from rich.table import Table


def registries() -> dict[str, Mapping[str, Callable]]:
    """rl-core's registries by title. Imported here, not at module level: torch is slow to import and
    `coding-framework --version` should not pay for it."""
    from coding_framework import rl_core

    return {
        "advantage estimators": rl_core.ADVANTAGE_ESTIMATORS,
        "policy losses": rl_core.POLICY_LOSSES,
        "loss aggregations": rl_core.LOSS_AGGREGATIONS,
        "KL estimators": rl_core.KL_ESTIMATORS,
    }


def summary(fn: Callable) -> str:
    """First line of the function's docstring: its one-line description."""
    doc = inspect.getdoc(fn) or ""
    return doc.splitlines()[0] if doc else ""


def list_algorithms() -> None:
    """List every registered advantage estimator, policy loss, loss aggregation and KL estimator."""
    console = Console()
    for title, registry in registries().items():
        table = Table(title=title, title_justify="left", show_edge=False)
        table.add_column("name", style="bold")
        table.add_column("description")
        for name, fn in registry.items():
            table.add_row(name, summary(fn))
        console.print(table)
        console.print()


def register(app: typer.Typer) -> None:
    app.command("algorithms")(list_algorithms)
