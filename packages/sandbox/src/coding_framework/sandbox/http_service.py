"""A SandboxFusion-compatible HTTP front end to a SandboxPool.

`POST /run_code` accepts SandboxFusion's request body (code, language, stdin, run_timeout,
compile_timeout, memory_limit_MB, files, fetch_files) and answers in its response shape
(`status` Success / Failed / SandboxError, `message`, `run_result{status Finished / TimeLimitExceeded /
Error, execution_time, return_code, stdout, stderr}`), which is what VERL's sandbox_fusion reward client
sends and parses. Point VERL's `reward.sandbox_fusion.url` at `http://HOST:PORT/run_code`.

Differences from SandboxFusion, each reported to the caller rather than ignored silently:
- only the languages the pool implements run; any other gets status SandboxError naming them;
- `files` and `fetch_files` must be empty (SandboxError otherwise): the pool's jobs carry no files;
- `compile_timeout` is accepted and unused (nothing is compiled for Python);
- `run_timeout` and `memory_limit_MB` above the server's caps are 422 errors rather than a very long
  job or no memory limit;
- a body over `max_body_bytes` is refused with 413, and a request arriving while the bodies of requests
  in flight (read, queued or running) hold more than `max_pending_bytes` with 503 (the server's memory
  is bounded by them, not by its clients, up to what parsing a body costs: a 30 MiB body of
  `[{},{},...]` peaks at ~10 bytes of memory per body byte with pydantic's JSON parser, which this
  service uses, against ~25 with json.loads); a body that is not strict JSON (a lone surrogate escape,
  nesting deeper than ~235 levels, an integer of more than ~4,300 digits) is a 400 naming what is
  wrong and where;
- the job of a client that disconnects before a worker takes it is dropped (a client that timed out,
  as VERL's does after compile_timeout + run_timeout + 10 s, does not leave work in the queue);
- SandboxFusion starts every request at once; this service runs as many as it has workers and queues
  the rest. A job that has not started `compile_timeout + queue_slack_s` (8) seconds after its request
  could no longer finish inside VERL's client timeout (which counts the wait): it is withdrawn and
  answered HTTP 504, which VERL's client retries (it retries nothing else), rather than run for a
  client that has given up, scoring a correct sample as an API error (red-team round 41). Keep VERL's
  `max_concurrent` near `--workers` so that retries are rare.

Its threat model is the code it runs, not its clients: serve it on a private network or behind a
reverse proxy that times out idle and slow connections (uvicorn alone keeps a connection that never
sends its headers, and enough of them use up the process's file descriptors).

Needs the `service` extra: `pip install 'coding-framework-sandbox[service]'` (fastapi, uvicorn).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Literal

try:
    import fastapi
    import fastapi.responses
    import pydantic
    from pydantic import BaseModel, ConfigDict, Field
    from starlette.requests import ClientDisconnect
except ImportError as exc:  # pragma: no cover - exercised only without the extra installed
    raise ImportError(
        "the sandbox HTTP service needs fastapi and uvicorn: pip install 'coding-framework-sandbox[service]'"
    ) from exc

from coding_framework.sandbox import Limits, ProgramJob, SandboxPool, Status, Verdict

DEFAULT_MAX_RUN_TIMEOUT_S = 300.0
"""Longest `run_timeout` a request may ask for, unless the server is started with another cap."""
DEFAULT_MAX_MEMORY_MB = 8192
"""Largest `memory_limit_MB` a request may ask for."""
DEFAULT_MAX_BODY_BYTES = 32 << 20
"""Largest request body (code and stdin together, as JSON)."""
DEFAULT_MAX_PENDING_BYTES = 256 << 20
"""Request bodies the server holds at once, over every request in flight."""
DEFAULT_QUEUE_SLACK_S = 8.0
"""A request's job must start within its compile_timeout plus this (VERL's client allows compile_timeout
+ run_timeout + 10 s in all) or it is answered 504."""
SHUTDOWN_GRACE_S = 10.0
"""On SIGINT/SIGTERM, `serve` lets the requests in flight run this long, then drops them (their clients see
the connection close) and stops the pool: it ran every queued job first, for as long as they took."""
_DISCONNECT_POLL_S = 0.5


class RunCodeRequest(BaseModel):
    """SandboxFusion's /run_code body. Unknown fields are ignored, as SandboxFusion does."""

    model_config = ConfigDict(extra="ignore")

    code: str
    language: str
    stdin: str | None = None
    compile_timeout: float = Field(10.0, ge=0)
    run_timeout: float = Field(10.0, gt=0)
    memory_limit_MB: int = -1
    """MiB for the program's address space; zero or negative: the server's default."""
    files: dict[str, str | None] = Field(default_factory=dict)
    fetch_files: list[str] = Field(default_factory=list)


class CommandRunResult(BaseModel):
    status: Literal["Finished", "Error", "TimeLimitExceeded"]
    execution_time: float | None = None
    return_code: int | None = None
    stdout: str | None = None
    stderr: str | None = None


class RunCodeResponse(BaseModel):
    status: Literal["Success", "Failed", "SandboxError"]
    message: str = ""
    compile_result: CommandRunResult | None = None
    run_result: CommandRunResult | None = None
    executor_pod_name: str | None = None
    files: dict[str, str] = Field(default_factory=dict)


# Status of the run, SandboxFusion's words. Memory and output limits end a run that SandboxFusion
# would report as Finished with a non-zero exit (killed, or an error exit), so they map to Finished.
_RUN_STATUS = {
    Status.PASSED: "Finished",
    Status.FAILED: "Finished",
    Status.ERROR: "Finished",
    Status.MEMORY: "Finished",
    Status.OUTPUT_LIMIT: "Finished",
    Status.TIMEOUT: "TimeLimitExceeded",
    Status.SANDBOX_ERROR: "Error",
}

_MESSAGE = {
    Status.MEMORY: "memory limit exceeded",
    Status.OUTPUT_LIMIT: "output limit exceeded",
    Status.TIMEOUT: "time limit exceeded",
}


def sandbox_error(message: str) -> RunCodeResponse:
    """A response for a request the sandbox could not run (not a verdict on the code)."""
    return RunCodeResponse(status="SandboxError", message=message)


def to_response(verdict: Verdict) -> RunCodeResponse:
    """SandboxFusion's response for one finished ProgramJob.

    Success iff the program exited 0 within every limit; SandboxError only for our own failures.
    """
    status = Status(verdict.status)
    run_status = _RUN_STATUS[status]
    run_result = CommandRunResult(
        status=run_status,
        execution_time=verdict.duration_s,
        return_code=verdict.return_code,
        stdout=verdict.stdout,
        stderr=verdict.stderr,
    )
    if status is Status.PASSED:
        return RunCodeResponse(status="Success", run_result=run_result)
    if status is Status.SANDBOX_ERROR:
        return RunCodeResponse(status="SandboxError", message=verdict.message, run_result=run_result)
    return RunCodeResponse(status="Failed", message=_MESSAGE.get(status, ""), run_result=run_result)


def build_job(request: RunCodeRequest, defaults: Limits) -> ProgramJob:
    """The ProgramJob for a request; ValueError/TypeError with a message for what cannot be run."""
    if request.files:
        raise ValueError("this sandbox does not take input files: send an empty `files`")
    if request.fetch_files:
        raise ValueError("this sandbox does not return files: send an empty `fetch_files`")
    changes: dict[str, Any] = {"timeout_s": float(request.run_timeout)}
    if request.memory_limit_MB > 0:
        changes["memory_mb"] = int(request.memory_limit_MB)
    limits = dataclasses.replace(defaults, **changes)
    return ProgramJob(
        program=request.code, stdin=request.stdin or "", language=request.language, limits=limits
    )


class _PendingBytes:
    """ASGI middleware: counts the body bytes of every request in flight, from the first byte read to
    the end of its response, and refuses a request (503) whose body would take the count past `limit`."""

    def __init__(self, app, limit: int):
        self.app, self.limit, self.held = app, limit, 0

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        held = 0

        async def counted():
            nonlocal held
            message = await receive()
            size = len(message.get("body", b"")) if message["type"] == "http.request" else 0
            if size and self.held + size > self.limit:
                raise fastapi.HTTPException(
                    status_code=503, headers={"Retry-After": "1"},
                    detail=f"the server holds {self.held} bytes of requests in flight, its limit is "
                           f"{self.limit}: retry when fewer are queued")
            held += size
            self.held += size
            return message

        try:
            await self.app(scope, counted, send)
        finally:
            self.held -= held


def _refusal(exc: pydantic.ValidationError) -> fastapi.Response:
    """400 for a body that is not JSON; else 422 naming each invalid field, without echoing its value
    (FastAPI's default repeats the input, which fails to serialise for NaN and sent huge inputs back)."""
    errors = exc.errors(include_url=False, include_input=False, include_context=False)
    broken = [error for error in errors if error.get("type") == "json_invalid"]
    if broken:
        body = {"detail": f"the request body is not valid JSON: {broken[0].get('msg', '')}"}
        return fastapi.Response(json.dumps(body, ensure_ascii=True), status_code=400,
                                media_type="application/json")
    detail = [{"loc": ["body", *(str(part) for part in error.get("loc", ()))],
               "msg": str(error.get("msg", "")), "type": str(error.get("type", ""))} for error in errors]
    return fastapi.Response(json.dumps({"detail": detail}, ensure_ascii=True), status_code=422,
                            media_type="application/json")


def create_app(
    pool: SandboxPool | None = None,
    *,
    workers: int | None = None,
    limits: Limits | None = None,
    max_run_timeout_s: float = DEFAULT_MAX_RUN_TIMEOUT_S,
    max_memory_mb: int = DEFAULT_MAX_MEMORY_MB,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    max_pending_bytes: int = DEFAULT_MAX_PENDING_BYTES,
    queue_slack_s: float = DEFAULT_QUEUE_SLACK_S,
) -> fastapi.FastAPI:
    """The FastAPI app. With `pool` given the caller owns it; otherwise the app starts a
    SandboxPool(workers, limits) at startup and closes it at shutdown.

    `limits` are the defaults each request's run_timeout / memory_limit_MB override, up to
    `max_run_timeout_s` and `max_memory_mb`. Bodies over `max_body_bytes` get 413; requests arriving
    while those in flight hold `max_pending_bytes` get 503; a job not started `compile_timeout +
    queue_slack_s` seconds after its request gets 504.
    """
    if not max_run_timeout_s > 0:
        raise ValueError(f"max_run_timeout_s must be positive, got {max_run_timeout_s}")
    if not queue_slack_s >= 0:
        raise ValueError(f"queue_slack_s must be >= 0 seconds, got {queue_slack_s}")
    for name, value, least in (("max_memory_mb", max_memory_mb, 64), ("max_body_bytes", max_body_bytes, 1),
                               ("max_pending_bytes", max_pending_bytes, max_body_bytes)):
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise ValueError(f"{name} must be an int of at least {least}, got {value!r}")
    defaults = limits or Limits()
    state: dict[str, SandboxPool] = {}

    @asynccontextmanager
    async def lifespan(app: fastapi.FastAPI) -> AsyncIterator[None]:
        if pool is not None:
            state["pool"] = pool
            yield
            return
        owned = SandboxPool(workers=workers, limits=defaults)
        state["pool"] = owned
        try:
            yield
        finally:
            owned.close()

    app = fastapi.FastAPI(
        title="coding-framework sandbox",
        description="SandboxFusion-compatible code execution backed by coding_framework.sandbox.",
        lifespan=lifespan,
        max_body_size=max_body_bytes,
    )
    app.add_middleware(_PendingBytes, limit=max_pending_bytes)
    body_schema = {"requestBody": {"required": True, "content": {
        "application/json": {"schema": RunCodeRequest.model_json_schema()}}}}

    @app.post("/run_code", response_model=RunCodeResponse, openapi_extra=body_schema)
    async def run_code(http: fastapi.Request) -> RunCodeResponse | fastapi.Response:
        arrived = asyncio.get_running_loop().time()
        try:
            request = RunCodeRequest.model_validate_json(await http.body())
        except pydantic.ValidationError as exc:
            return _refusal(exc)
        except ClientDisconnect:  # gone while sending its body: nobody to answer (and nothing to log)
            return fastapi.Response(status_code=400)
        if request.run_timeout > max_run_timeout_s:
            raise fastapi.HTTPException(
                status_code=422,
                detail=f"run_timeout {request.run_timeout} s is over the server's cap {max_run_timeout_s} s",
            )
        if request.memory_limit_MB > max_memory_mb:
            raise fastapi.HTTPException(
                status_code=422,
                detail=f"memory_limit_MB {request.memory_limit_MB} is over the server's cap {max_memory_mb}",
            )
        try:
            job = build_job(request, defaults)
        except (ValueError, TypeError) as exc:
            return sandbox_error(str(exc))
        try:
            future = state["pool"].submit(job)
            waiter = asyncio.wrap_future(future)
            start_by = arrived + request.compile_timeout + queue_slack_s
            while not (await asyncio.wait({waiter}, timeout=_DISCONNECT_POLL_S))[0]:
                if await http.is_disconnected() and future.cancel():
                    return sandbox_error("the client went away before the job started; it did not run")
                if asyncio.get_running_loop().time() > start_by and future.cancel():
                    return fastapi.responses.JSONResponse(status_code=504, content={"detail": (
                        f"every sandbox worker stayed busy for {request.compile_timeout + queue_slack_s:g} s "
                        "(compile_timeout + the server's queue slack): the job did not run; send it again")})
            verdict = waiter.result()
        except Exception as exc:  # the pool failing is our error, reported in the protocol's terms
            return sandbox_error(f"{type(exc).__name__}: {exc}")
        return to_response(verdict)

    @app.get("/health")
    async def health() -> dict[str, str]:
        return {"status": "ok" if "pool" in state else "starting"}

    @app.get("/v1/ping")
    async def ping() -> str:
        # SandboxFusion's liveness probe; kept so its users' health checks work unchanged.
        return "pong"

    return app


def serve(
    host: str = "127.0.0.1",
    port: int = 8080,
    *,
    pool: SandboxPool | None = None,
    workers: int | None = None,
    limits: Limits | None = None,
    max_run_timeout_s: float = DEFAULT_MAX_RUN_TIMEOUT_S,
    max_memory_mb: int = DEFAULT_MAX_MEMORY_MB,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    max_pending_bytes: int = DEFAULT_MAX_PENDING_BYTES,
    log_level: str = "info",
) -> None:
    """Serve the app with uvicorn until interrupted (one process; concurrency comes from the pool)."""
    try:
        import uvicorn
    except ImportError as exc:  # pragma: no cover - exercised only without the extra installed
        raise ImportError(
            "the sandbox HTTP service needs uvicorn: pip install 'coding-framework-sandbox[service]'"
        ) from exc
    app = create_app(pool, workers=workers, limits=limits, max_run_timeout_s=max_run_timeout_s,
                     max_memory_mb=max_memory_mb, max_body_bytes=max_body_bytes,
                     max_pending_bytes=max_pending_bytes)
    uvicorn.run(app, host=host, port=port, log_level=log_level, timeout_graceful_shutdown=SHUTDOWN_GRACE_S)
