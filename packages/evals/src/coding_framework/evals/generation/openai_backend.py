"""Any OpenAI-compatible endpoint (vLLM, SGLang, the project's gateway, OpenAI itself).

Completion-style prompts go to `POST {base_url}/completions`, instruct prompts to
`POST {base_url}/chat/completions` (base_url as the OpenAI SDK takes it, e.g.
`http://127.0.0.1:8000/v1`). One request per sample, `concurrency` in flight. Transport errors and
the statuses servers use for "try again" (408, 409, 429, 5xx) are retried with exponential backoff
and jitter, honouring `Retry-After`; other errors stop the run at once with the server's message.
The API key is read from an environment variable (OPENAI_API_KEY by default) and never logged.
"""

from __future__ import annotations

import os
import random
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any

import httpx

from coding_framework.evals.errors import GenerationError
from coding_framework.evals.generation.base import GenerationConfig, GenerationRequest
from coding_framework.evals.prompts import PromptStyle

RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504})
MAX_STOP_SEQUENCES = 4  # OpenAI's limit; the full list is applied to the text afterwards anyway


class OpenAICompatibleBackend:
    """Generates through an OpenAI-compatible HTTP API."""

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key_env: str = "OPENAI_API_KEY",
        concurrency: int = 8,
        max_retries: int = 5,
        backoff_s: float = 1.0,
        max_backoff_s: float = 30.0,
        request_timeout_s: float = 300.0,
        default_style: PromptStyle = "instruct",
        sleep: Callable[[float], None] = time.sleep,
        transport: httpx.BaseTransport | None = None,
    ):
        if not base_url.startswith(("http://", "https://")):
            raise ValueError(
                f"base_url must be an http(s) URL such as http://127.0.0.1:8000/v1, got {base_url!r}"
            )
        if not model:
            raise ValueError("model must name the served model (what /v1/models lists)")
        if concurrency < 1 or max_retries < 0 or backoff_s < 0 or request_timeout_s <= 0:
            raise ValueError(
                "concurrency >= 1, max_retries >= 0, backoff_s >= 0 and request_timeout_s > 0 needed"
            )
        self.base_url = base_url.rstrip("/")
        self.name = model
        self.default_style = default_style
        self.concurrency = concurrency
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.max_backoff_s = max_backoff_s
        self._sleep = sleep
        self._jitter = random.Random()
        self._jitter_lock = threading.Lock()
        headers = {"Content-Type": "application/json"}
        key = os.environ.get(api_key_env)
        if key:
            headers["Authorization"] = f"Bearer {key}"
        self._api_key_env = api_key_env
        self._client = httpx.Client(headers=headers, timeout=request_timeout_s, transport=transport)

    def close(self) -> None:
        self._client.close()

    def _body(self, request: GenerationRequest, config: GenerationConfig) -> tuple[str, dict[str, Any]]:
        prompt = request.prompt
        body: dict[str, Any] = {
            "model": self.name,
            "max_tokens": config.max_new_tokens,
            "temperature": config.temperature,
            "n": 1,
            "seed": config.seed + request.index,
        }
        if config.temperature > 0:
            body["top_p"] = config.top_p
        if prompt.style == "instruct":
            body["messages"] = prompt.messages
            return "/chat/completions", body
        body["prompt"] = prompt.text
        if prompt.stop:
            body["stop"] = list(prompt.stop[:MAX_STOP_SEQUENCES])
        return "/completions", body

    def _delay(self, attempt: int, response: httpx.Response | None) -> float:
        if response is not None:
            retry_after = response.headers.get("Retry-After", "")
            try:
                return min(self.max_backoff_s, max(0.0, float(retry_after)))
            except ValueError:
                pass
        with self._jitter_lock:
            jitter = self._jitter.uniform(0.5, 1.0)
        return min(self.max_backoff_s, self.backoff_s * 2**attempt) * jitter

    def complete(self, request: GenerationRequest, config: GenerationConfig) -> str:
        """One sample's text, retrying transient failures; GenerationError when it cannot be had."""
        path, body = self._body(request, config)
        url = self.base_url + path
        last = ""
        for attempt in range(self.max_retries + 1):
            response = None
            try:
                response = self._client.post(url, json=body)
            except httpx.TransportError as exc:
                last = f"{type(exc).__name__}: {exc}"
            else:
                if response.status_code == 200:
                    return _text(response, request.prompt.style, url)
                detail = _error_detail(response)
                if response.status_code not in RETRY_STATUSES:
                    hint = f" (is ${self._api_key_env} set?)" if response.status_code in (401, 403) else ""
                    raise GenerationError(f"{url} answered {response.status_code}: {detail}{hint}")
                last = f"HTTP {response.status_code}: {detail}"
            if attempt < self.max_retries:
                self._sleep(self._delay(attempt, response))
        raise GenerationError(
            f"{url}: {request.task_id} failed after {self.max_retries + 1} attempts ({last})"
        )

    def generate(
        self, requests: Sequence[GenerationRequest], config: GenerationConfig
    ) -> Iterator[tuple[GenerationRequest, str]]:
        """Yield samples as they finish, `concurrency` requests in flight.

        On the first request that fails for good, no new request is started; those already in
        flight are awaited and their samples still yielded; then the error is raised.
        """
        pending = iter(requests)
        failure: GenerationError | None = None
        with ThreadPoolExecutor(max_workers=self.concurrency, thread_name_prefix="openai-gen") as pool:
            inflight: dict[Future, GenerationRequest] = {}

            def top_up() -> None:
                while failure is None and len(inflight) < self.concurrency:
                    request = next(pending, None)
                    if request is None:
                        return
                    inflight[pool.submit(self.complete, request, config)] = request

            top_up()
            while inflight:
                done, _ = wait(inflight, return_when=FIRST_COMPLETED)
                for future in done:
                    request = inflight.pop(future)
                    try:
                        text = future.result()
                    except GenerationError as exc:
                        failure = failure or exc
                        continue
                    yield request, text
                top_up()
        if failure is not None:
            raise failure


def _error_detail(response: httpx.Response) -> str:
    try:
        data = response.json()
    except ValueError:
        return response.text[:300] or response.reason_phrase
    if isinstance(data, dict):
        error = data.get("error", data.get("detail"))
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return error["message"][:300]
        if isinstance(error, str):
            return error[:300]
    return str(data)[:300]


def _text(response: httpx.Response, style: PromptStyle, url: str) -> str:
    try:
        choice = response.json()["choices"][0]
        text = choice["message"]["content"] if style == "instruct" else choice["text"]
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise GenerationError(f"{url}: the reply is not an OpenAI {style} response ({exc!r})") from None
    if text is None:
        return ""
    if not isinstance(text, str):
        raise GenerationError(f"{url}: the reply's text is a {type(text).__name__}, not a string")
    return text
