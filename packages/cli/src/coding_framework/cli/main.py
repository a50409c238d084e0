"""The `coding-framework` command. Each subcommand group lives in its own module and is added here."""

from __future__ import annotations

import typer
from rich.console import Console
from rich.table import Table

from coding_framework.cli import algorithms, evaluate, sandbox, train
from coding_framework.cli.versions import installed_packages

app = typer.Typer(
    name="coding-framework",
    help="Reinforcement-learning post-training for code LLMs: train, evaluate, serve.",
    no_args_is_help=True,
    add_completion=False,
)
algorithms.register(app)
evaluate.register(app)
sandbox.register(app)
train.register(app)


def _print_versions(value: bool) -> None:
    if not value:
        return
    table = Table(title="coding-framework packages", show_edge=False)
    table.add_column("distribution")
    table.add_column("version")
    for package in installed_packages():
        table.add_row(package.distribution, package.version)
    Console().print(table)
    raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_print_versions, is_eager=True,
        help="Show the version of every installed coding-framework package and exit.",
    ),
) -> None:
    """Reinforcement-learning post-training for code LLMs."""


def main() -> None:
    app()


if __name__ == "__main__":
    main()
