import socket
import urllib.request

import pytest
from prometheus_client import CollectorRegistry

from coding_framework.monitor import RunLogger, SinkStartError


def test_gauges_hold_latest_values_in_the_callers_registry(local_config, caplog):
    registry = CollectorRegistry()
    config = local_config("r1", console="off", jsonl="off", prometheus="on")
    with RunLogger(config, prometheus_registry=registry) as run:
        run.log_metrics({"reward/mean": 0.25, "pass@1": 0.1}, step=1)
        run.log_metrics({"reward/mean": 0.75, "pass@1": 0.3, "pass_at_1": 9.0}, step=2)
        assert registry.get_sample_value("cf_reward_mean", {"run": "r1"}) == 0.75
        assert registry.get_sample_value("cf_pass_at_1", {"run": "r1"}) == 0.3
        assert registry.get_sample_value("cf_step", {"run": "r1"}) == 2.0
        assert "'pass@1' and 'pass_at_1' both become 'cf_pass_at_1'" in caplog.text
    # Closed: the gauges leave the registry, so the next run can register the same names.
    assert registry.get_sample_value("cf_reward_mean", {"run": "r1"}) is None
    with RunLogger(local_config("r2", console="off", jsonl="off", prometheus="on"),
                   prometheus_registry=registry) as run:
        run.log_metrics({"reward/mean": 0.5}, step=0)
        assert registry.get_sample_value("cf_reward_mean", {"run": "r2"}) == 0.5


def test_http_exposition_serves_and_stops(local_config):
    config = local_config(console="off", jsonl="off", prometheus="on", prometheus_port=0)
    with RunLogger(config) as run:
        run.log_metrics({"loss": 1.5}, step=7)
        port = run.sink("prometheus").port
        body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
        assert 'cf_loss{run="run"} 1.5' in body and 'cf_step{run="run"} 7.0' in body
    with pytest.raises(OSError):
        urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2)


def test_busy_port_is_an_error_when_asked_for_and_a_warning_in_auto(local_config, caplog):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(SinkStartError, match=rf"prometheus sink could not start.*:{port}.*'auto'"):
            RunLogger(local_config("a", console="off", prometheus="on", prometheus_port=port))
        # The failed start logged nothing, so the same run dir works without resume once fixed.
        RunLogger(local_config("a", console="off")).close()
        with RunLogger(local_config("b", console="off", prometheus="auto", prometheus_port=port)) as run:
            assert run.active_sinks == ("jsonl",)
            assert "prometheus sink is off for this run" in caplog.text
            assert "could not start" in run.disabled["prometheus"]
