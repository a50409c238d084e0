"""The SandboxFusion-compatible service, over real HTTP on a loopback port, with the real pool.

VERL's own sandbox_fusion client (verl.utils.reward_score.sandbox_fusion) calling this server is the
compatibility proof: what it sends must be accepted and what we answer must parse to the verdicts it
would get from SandboxFusion.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
import uvicorn

from coding_framework.sandbox import Limits, SandboxPool, Status, Verdict
from coding_framework.sandbox.http_service import create_app, to_response

RUN_TIMEOUT = 5


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def _serving(app) -> Iterator[str]:
    """Run `app` under a real uvicorn server on a free loopback port; yields its base URL."""
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)


@pytest.fixture(scope="module")
def url():
    with SandboxPool(workers=2) as pool, _serving(create_app(pool, max_run_timeout_s=30)) as base:
        yield base


def _run(url: str, **body) -> dict:
    body = {"language": "python", "run_timeout": RUN_TIMEOUT, **body}
    response = httpx.post(f"{url}/run_code", json=body, timeout=60)
    assert response.status_code == 200, response.text
    return response.json()


def test_health_and_ping(url):
    assert httpx.get(f"{url}/health").json() == {"status": "ok"}
    assert httpx.get(f"{url}/v1/ping").json() == "pong"


def test_success_reports_stdout_and_exit_code(url):
    out = _run(url, code="print('hello')\nimport sys; print('warn', file=sys.stderr)")
    assert out["status"] == "Success" and out["message"] == ""
    run = out["run_result"]
    assert (run["status"], run["return_code"], run["stdout"], run["stderr"]) == (
        "Finished",
        0,
        "hello\n",
        "warn\n",
    )
    assert 0 < run["execution_time"] < RUN_TIMEOUT
    assert out["compile_result"] is None and out["files"] == {}


def test_stdin_is_fed(url):
    out = _run(url, code="a, b = map(int, input().split())\nprint(a * b)", stdin="6 7\n")
    assert out["run_result"]["stdout"] == "42\n"


def test_nonzero_exit_is_failed_with_its_code(url):
    out = _run(url, code="import sys\nprint('x')\nsys.exit(3)")
    assert out["status"] == "Failed"
    assert (out["run_result"]["status"], out["run_result"]["return_code"]) == ("Finished", 3)


def test_exception_is_failed_with_traceback_on_stderr(url):
    out = _run(url, code="1 / 0")
    assert out["status"] == "Failed"
    assert out["run_result"]["status"] == "Finished"
    assert out["run_result"]["return_code"] not in (0, None)
    assert "ZeroDivisionError" in out["run_result"]["stderr"]


def test_time_limit(url):
    start = time.monotonic()
    out = _run(url, code="while True:\n    pass", run_timeout=1)
    assert time.monotonic() - start < 10
    assert out["status"] == "Failed"
    assert out["run_result"]["status"] == "TimeLimitExceeded"


def test_memory_limit_is_honoured(url):
    code = "x = bytearray(400 * 1024 * 1024)\nprint('allocated')"
    assert _run(url, code=code, memory_limit_MB=2048)["status"] == "Success"
    limited = _run(url, code=code, memory_limit_MB=128)
    assert limited["status"] == "Failed"
    assert "allocated" not in (limited["run_result"]["stdout"] or "")


def test_program_runs_as_main(url):
    # VERL's function-call wrapper only prints under `if __name__ == '__main__'`.
    out = _run(url, code="if __name__ == '__main__':\n    print('main')")
    assert out["run_result"]["stdout"] == "main\n"


def test_unsupported_language_is_a_sandbox_error(url):
    out = _run(url, code="int main(){}", language="cpp")
    assert out["status"] == "SandboxError"
    assert "cpp" in out["message"]


def test_files_are_refused_not_ignored(url):
    out = _run(url, code="print(open('a.txt').read())", files={"a.txt": "aGk="})
    assert out["status"] == "SandboxError" and "files" in out["message"]


def test_unknown_fields_are_ignored(url):
    assert _run(url, code="print(1)", some_future_field=True)["status"] == "Success"


def test_bad_requests_are_422(url):
    assert httpx.post(f"{url}/run_code", json={"language": "python"}).status_code == 422
    assert (
        httpx.post(f"{url}/run_code", json={"code": "1", "language": "python", "run_timeout": 0}).status_code
        == 422
    )
    over = httpx.post(f"{url}/run_code", json={"code": "1", "language": "python", "run_timeout": 31})
    assert over.status_code == 422 and "cap" in over.text


@pytest.mark.parametrize("body", [
    # JSON that Python parses but the model refuses: FastAPI's 422 repeated the value, could not
    # serialise it, and answered 500 with a traceback in the log.
    b'{"code": "1", "language": "python", "run_timeout": NaN}',
    b'{"code": "1", "language": "python", "memory_limit_MB": NaN}',
])
def test_invalid_values_are_422_naming_the_field(url, body):
    response = httpx.post(f"{url}/run_code", content=body, headers={"content-type": "application/json"})
    assert response.status_code == 422, response.text
    assert response.json()["detail"][0]["loc"][-1] in ("run_timeout", "memory_limit_MB")


def test_memory_limits_over_the_servers_cap_are_422(url):
    # Any value up to 2**43 - 1 MiB was taken as the program's address-space cap: no limit at all.
    over = httpx.post(f"{url}/run_code", json={"code": "1", "language": "python", "memory_limit_MB": 8193})
    assert over.status_code == 422 and "memory_limit_MB 8193 is over the server's cap 8192" in over.text
    assert _run(url, code="print(1)", memory_limit_MB=8192)["status"] == "Success"


@pytest.mark.parametrize(("body", "what"), [
    # Python's json.loads takes each of these; the body is parsed as strict JSON (pydantic's parser,
    # which builds nothing for fields it ignores: json.loads made ~26 bytes of objects per body byte).
    (b'{"code": "print(1)", "language": "python", "stdin": "a\\ud800"}', "hex escape at line 1 column 61"),
    (b'{"code": "1", "language": "python", "x": ' + b"[" * 300 + b"]" * 300 + b"}", "recursion limit"),
    (b'{"code": "1", "language": "python", "x": ' + b"9" * 5000 + b"}", "number out of range"),
    (b'{"code": "1", "language": "python"', "EOF while parsing an object"),
])
def test_bodies_that_are_not_strict_json_are_400_saying_where(url, body, what):
    response = httpx.post(f"{url}/run_code", content=body, headers={"content-type": "application/json"})
    assert response.status_code == 400, response.text
    detail = response.json()["detail"]
    assert detail.startswith("the request body is not valid JSON: ") and what in detail, detail
    assert _run(url, code="print(input())", stdin="fine")["run_result"]["stdout"] == "fine\n"


def test_bodies_over_the_limits_are_refused():
    with SandboxPool(workers=1) as pool, _serving(create_app(
            pool, max_body_bytes=1 << 16, max_pending_bytes=1 << 17)) as base:
        big = httpx.post(f"{base}/run_code", json={"code": "#" + "x" * (1 << 16), "language": "python"})
        assert big.status_code == 413, big.text
        # Two requests of 60 KiB in flight (both sleeping) hold 120 KiB: a third is told to retry.
        body = {"code": "import time; time.sleep(2)  #" + "x" * 60_000, "language": "python"}
        with ThreadPoolExecutor(2) as ex:
            slow = [ex.submit(httpx.post, f"{base}/run_code", json=body, timeout=30) for _ in range(2)]
            time.sleep(0.8)
            refused = httpx.post(f"{base}/run_code", json=body, timeout=30)
            assert refused.status_code == 503 and "retry" in refused.text, refused.text
            assert [f.result().json()["status"] for f in slow] == ["Success", "Success"]
        assert _run(base, code="print(5)")["run_result"]["stdout"] == "5\n"  # the count went back down


def test_jobs_of_clients_that_went_away_are_dropped():
    # One worker, busy for 2 s; then six clients each give up after 0.3 s on a 3 s job. Their jobs once
    # all ran (18 s), ahead of every later request; a job whose client left before a worker took it
    # is now dropped.
    with SandboxPool(workers=1) as pool, _serving(create_app(pool)) as base:
        with ThreadPoolExecutor(1) as ex:
            busy = ex.submit(_run, base, code="import time; time.sleep(2)")
            time.sleep(0.3)
            for _ in range(6):
                with pytest.raises(httpx.TimeoutException):
                    httpx.post(f"{base}/run_code", timeout=0.3,
                               json={"code": "import time; time.sleep(3)", "language": "python"})
            started = time.monotonic()
            assert _run(base, code="print(7)")["run_result"]["stdout"] == "7\n"
            waited = time.monotonic() - started
            assert busy.result()["status"] == "Success"
        # Behind the busy job (~1 s left) and at most the two taken before their clients left: 7 s.
        assert waited < 8, waited


def test_a_job_that_cannot_start_in_time_is_answered_504():
    # VERL's client gives a request compile_timeout + run_timeout + 10 s, the wait in our queue included,
    # and retries only a 504: a correct sample queued behind looping ones timed out and scored as an API
    # error (red-team round 41). A job not started compile_timeout + queue_slack_s after its request is
    # withdrawn and answered 504.
    with SandboxPool(workers=1) as pool, _serving(create_app(pool, queue_slack_s=0.5)) as base:
        with ThreadPoolExecutor(1) as ex:
            busy = ex.submit(_run, base, code="import time; time.sleep(5)", run_timeout=10)
            time.sleep(0.3)
            started = time.monotonic()
            response = httpx.post(f"{base}/run_code", timeout=10, json={
                "code": "print(1)", "language": "python", "compile_timeout": 0.5})
            assert response.status_code == 504 and "did not run" in response.json()["detail"], response.text
            assert time.monotonic() - started < 3.5  # not after the busy job
            assert busy.result()["status"] == "Success"
        assert _run(base, code="print(7)")["run_result"]["stdout"] == "7\n"
    with pytest.raises(ValueError, match="queue_slack_s"):
        create_app(workers=1, queue_slack_s=-1)


def test_concurrent_requests(url):
    codes = [f"print({i} * {i})" for i in range(12)]
    with ThreadPoolExecutor(6) as ex:
        outs = list(ex.map(lambda c: _run(url, code=c), codes))
    assert [o["run_result"]["stdout"] for o in outs] == [f"{i * i}\n" for i in range(12)]


# --- VERL's own client ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def verl_sf():
    from verl.utils.reward_score import sandbox_fusion
    from verl.utils.reward_score.sandbox_fusion import utils

    return sandbox_fusion, utils


def test_verl_call_sandbox_api(url, verl_sf):
    _, utils = verl_sf
    response, error = utils.call_sandbox_api(
        sandbox_fusion_url=f"{url}/run_code", code="print(input()[::-1])", stdin="abc\n",
        compile_timeout=5, run_timeout=5, memory_limit_mb=1024, language="python",
    )  # fmt: skip
    assert error is None
    assert response["status"] == "Success"
    assert response["run_result"]["stdout"] == "cba\n"


def test_verl_check_correctness_stdin_cases(url, verl_sf):
    _, utils = verl_sf
    in_outs = {"inputs": ["1 2\n", "10 20\n", "2 2\n"], "outputs": ["3\n", "30\n", "4\n"]}
    right = "a, b = map(int, input().split())\nprint(a + b)"
    wrong = "a, b = map(int, input().split())\nprint(a * b)"
    results, meta = utils.check_correctness(f"{url}/run_code", in_outs, right, timeout=5)
    assert results == [True, True, True], meta
    results, _ = utils.check_correctness(f"{url}/run_code", in_outs, wrong, timeout=5)
    assert results == [False, False, True]  # 2 * 2 == 2 + 2


def test_verl_check_correctness_error_codes(url, verl_sf):
    _, utils = verl_sf
    in_outs = {"inputs": ["1\n"], "outputs": ["1\n"]}
    crash, meta = utils.check_correctness(f"{url}/run_code", in_outs, "raise ValueError('no')", timeout=5)
    assert crash == [-2] and meta[0]["status"] == "runtime_error"
    hang, meta = utils.check_correctness(f"{url}/run_code", in_outs, "while True:\n    pass", timeout=1)
    assert hang == [-3] and meta[0]["status"] == "timeout"


def test_verl_function_call_wrapper(url, verl_sf):
    _, utils = verl_sf
    in_outs = {"fn_name": "add", "inputs": ["1\n2", "[1]\n[2, 3]"], "outputs": ["3", "[1, 2, 3]"]}
    results, meta = utils.check_correctness(
        f"{url}/run_code", in_outs, "def add(a, b):\n    return a + b", timeout=5
    )
    assert results == [True, True], meta


def test_verl_assert_cases(url, verl_sf):
    _, utils = verl_sf
    cases = {
        "inputs": ["", ""],
        "outputs": [None, None],
        "assert_case": ["assert f(2) == 4", "assert f(3) == 10"],
    }
    results, _ = utils.check_correctness(f"{url}/run_code", cases, "def f(x):\n    return x * x", timeout=5)
    assert results == [True, -2]  # the failing assert exits non-zero: VERL calls that a runtime error


def test_verl_compute_score(url, verl_sf):
    sandbox_fusion, _ = verl_sf
    completion = "Here you go:\n```python\nn = int(input())\nprint(n * 2)\n```"
    tests = {"inputs": ["2\n", "21\n"], "outputs": ["4\n", "42\n"]}
    score, _ = sandbox_fusion.compute_score(f"{url}/run_code", None, 1024, completion, tests)
    assert score == 1.0
    half, _ = sandbox_fusion.compute_score(
        f"{url}/run_code", None, 1024, completion, {**tests, "outputs": ["4\n", "0\n"]}
    )
    assert half == 0.5


# --- mapping, every status -----------------------------------------------------------------------


@pytest.mark.parametrize("status", list(Status))
def test_every_status_maps_to_the_protocol(status):
    rc = {Status.PASSED: 0, Status.TIMEOUT: -9, Status.MEMORY: -9, Status.SANDBOX_ERROR: None}.get(status, 1)
    resp = to_response(
        Verdict(status=status, message="m", duration_s=0.5, stdout="o", stderr="e", return_code=rc)
    )
    expected_top = {Status.PASSED: "Success", Status.SANDBOX_ERROR: "SandboxError"}.get(status, "Failed")
    expected_run = {Status.TIMEOUT: "TimeLimitExceeded", Status.SANDBOX_ERROR: "Error"}.get(
        status, "Finished"
    )
    assert resp.status == expected_top
    assert resp.run_result.status == expected_run
    assert (resp.run_result.stdout, resp.run_result.return_code, resp.run_result.execution_time) == (
        "o",
        rc,
        0.5,
    )


def test_app_owns_its_pool_when_none_is_given():
    with _serving(create_app(workers=1, limits=Limits(timeout_s=5))) as base:
        assert httpx.get(f"{base}/health").json() == {"status": "ok"}
        out = _run(base, code="print(2 + 2)")
        assert out["status"] == "Success" and out["run_result"]["stdout"] == "4\n"
