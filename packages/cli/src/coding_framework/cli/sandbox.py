"""`coding-framework sandbox ...`: the sandbox as a service.

`sandbox serve` starts the SandboxFusion-compatible HTTP service (coding_framework.sandbox.http_service)
so VERL's sandbox_fusion reward, or anything else that speaks SandboxFusion, can use our sandbox.
"""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console

EXIT_MISSING_EXTRA = 1
EXIT_SANDBOX = 3

sandbox_app = typer.Typer(
    name="sandbox",
    help="The code-execution sandbox as a service.",
    no_args_is_help=True,
)


def _fail(message: str, code: int) -> typer.Exit:
    Console(stderr=True, highlight=False, soft_wrap=True).print(f"[bold red]error:[/] {message}")
    return typer.Exit(code)


@sandbox_app.command("serve")
def serve(
    host: Annotated[str, typer.Option("--host", help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=1, max=65535, help="TCP port.")] = 8080,
    workers: Annotated[
        int | None,
        typer.Option("--workers", min=1, help="Sandbox worker processes; default: one per CPU core."),
    ] = None,
    max_run_timeout: Annotated[
        float,
        typer.Option("--max-run-timeout", min=0.001, help="Largest run_timeout (seconds) a request may ask."),
    ] = 300.0,
    max_memory_mb: Annotated[
        int,
        typer.Option("--max-memory-mb", min=64, help="Largest memory_limit_MB (MiB) a request may ask."),
    ] = 8192,
    max_body_mb: Annotated[
        int,
        typer.Option("--max-body-mb", min=1, help="Largest request body in MiB (413 above it)."),
    ] = 32,
    max_pending_mb: Annotated[
        int,
        typer.Option("--max-pending-mb", min=1,
                     help="MiB of request bodies held at once, over all requests in flight (503 above it)."),
    ] = 256,
) -> None:
    """Serve POST /run_code (SandboxFusion's API), GET /health and GET /v1/ping until interrupted."""
    try:
        from coding_framework.sandbox import http_service
    except ImportError as exc:
        raise _fail(str(exc), EXIT_MISSING_EXTRA) from None
    from coding_framework.sandbox import SandboxPool, SandboxStartError

    if max_pending_mb < max_body_mb:
        raise _fail(f"--max-pending-mb ({max_pending_mb}) must be at least --max-body-mb ({max_body_mb}): "
                    "a request of the largest size could never be taken", 2)
    # The pool starts before the server so that a sandbox that cannot start is a one-line error
    # here, not a traceback from inside uvicorn's startup.
    try:
        pool = SandboxPool(workers=workers)
    except SandboxStartError as exc:
        raise _fail(f"the sandbox could not start: {exc}", EXIT_SANDBOX) from None
    except ValueError as exc:  # more workers than the host can use
        raise _fail(str(exc), 2) from None
    try:
        Console(stderr=True).print(
            f"sandbox service on http://{host}:{port} (POST /run_code, GET /health); Ctrl-C stops it"
        )
        http_service.serve(host, port, pool=pool, max_run_timeout_s=max_run_timeout,
                           max_memory_mb=max_memory_mb, max_body_bytes=max_body_mb << 20,
                           max_pending_bytes=max_pending_mb << 20)
    finally:
        pool.close()


def register(app: typer.Typer) -> None:
    app.add_typer(sandbox_app, name="sandbox")
