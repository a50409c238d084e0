"""A loopback OpenAI-compatible server for tests and demos: no model, answers come from a function.

`StubOpenAIServer(answer)` serves `POST /v1/completions`, `POST /v1/chat/completions` and
`GET /v1/models` on 127.0.0.1 (an ephemeral port) from a background thread. `answer(body)` returns
the text for a request body. Scripted failures exercise clients: `script` gives the statuses of the
first requests (e.g. [503, 429] before serving normally), `fail_after` makes every request after the
first N answered ones fail with HTTP 400 (an interrupted run), `delay_s` holds each answer (to see
concurrency), `api_key` requires `Authorization: Bearer <key>`. It records every body it received.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class StubOpenAIServer:
    """Context manager: `with StubOpenAIServer(fn) as server: client(server.url)`."""

    def __init__(
        self,
        answer: Callable[[dict[str, Any]], str],
        *,
        model: str = "stub-model",
        script: Sequence[int] = (),
        fail_after: int | None = None,
        delay_s: float = 0.0,
        api_key: str | None = None,
        retry_after_s: float | None = None,
    ):
        self.answer = answer
        self.model = model
        self.script = list(script)
        self.fail_after = fail_after
        self.delay_s = delay_s
        self.api_key = api_key
        self.retry_after_s = retry_after_s
        self.bodies: list[dict[str, Any]] = []
        """Every POST body received (scripted failures included), in arrival order."""
        self.answered = 0
        """Requests answered with HTTP 200."""
        self.max_in_flight = 0
        self._in_flight = 0
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """Base URL as OpenAI clients take it: http://127.0.0.1:PORT/v1."""
        if self._server is None:
            raise RuntimeError("the stub server is not running")
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def start(self) -> StubOpenAIServer:
        handler = type("Handler", (_Handler,), {"stub": self})
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True, name="stub-openai"
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def __enter__(self) -> StubOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _reply(
        self, path: str, body: dict[str, Any], auth: str | None
    ) -> tuple[int, dict[str, Any], dict[str, str]]:
        """(status, JSON body, extra headers) for one POST; called from handler threads."""
        with self._lock:
            self.bodies.append(body)
            scripted = self.script.pop(0) if self.script else None
            stopped = self.fail_after is not None and self.answered >= self.fail_after
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
        try:
            if self.delay_s:
                time.sleep(self.delay_s)
            if self.api_key is not None and auth != f"Bearer {self.api_key}":
                return 401, {"error": {"message": "stub: missing or wrong API key"}}, {}
            if scripted is not None:
                headers = {"Retry-After": f"{self.retry_after_s:g}"} if self.retry_after_s is not None else {}
                return scripted, {"error": {"message": f"stub: scripted {scripted}"}}, headers
            if stopped:
                return 400, {"error": {"message": "stub: the run was interrupted"}}, {}
            if path.endswith("/chat/completions"):
                choice = {"index": 0, "message": {"role": "assistant", "content": self.answer(body)},
                          "finish_reason": "stop"}  # fmt: skip
                kind = "chat.completion"
            elif path.endswith("/completions"):
                choice = {"index": 0, "text": self.answer(body), "finish_reason": "stop"}
                kind = "text_completion"
            else:
                return 404, {"error": {"message": f"stub: no route {path}"}}, {}
            with self._lock:
                self.answered += 1
            return (
                200,
                {"id": f"stub-{len(self.bodies)}", "object": kind, "model": self.model, "choices": [choice]},
                {},
            )
        finally:
            with self._lock:
                self._in_flight -= 1


class _Handler(BaseHTTPRequestHandler):
    stub: StubOpenAIServer

    def log_message(self, format: str, *args: Any) -> None:  # quiet: tests read results, not logs
        pass

    def _send(self, status: int, payload: dict[str, Any], headers: dict[str, str]) -> None:
        data = json.dumps(payload).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/v1/models"):
            self._send(200, {"object": "list", "data": [{"id": self.stub.model, "object": "model"}]}, {})
        else:
            self._send(404, {"error": {"message": f"stub: no route {self.path}"}}, {})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except json.JSONDecodeError:
            self._send(400, {"error": {"message": "stub: body is not JSON"}}, {})
            return
        status, payload, headers = self.stub._reply(self.path, body, self.headers.get("Authorization"))
        self._send(status, payload, headers)
