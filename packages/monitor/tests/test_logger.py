"""The facade's own guarantees: fan-out, failure isolation, run status, input checks."""

import dataclasses
import json
import sys

import pytest

from coding_framework.monitor import (
    METRICS_FILE,
    RUN_FILE,
    MonitorError,
    RunLogger,
    Sink,
    SinkStartError,
    read_metrics,
)


class RecordingSink(Sink):
    """Fake sink for these unit tests: remembers every call."""

    name = "recording"

    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def log_params(self, params):
        self.calls.append(("params", dict(params)))

    def log_metrics(self, metrics, step):
        self.calls.append(("metrics", step, dict(metrics)))

    def set_tags(self, tags):
        self.calls.append(("tags", dict(tags)))

    def log_artifact(self, path, artifact_path):
        self.calls.append(("artifact", path.name, artifact_path))

    def close(self, status):
        self.calls.append(("close", status))


class FakeFlakySink(RecordingSink):
    """Fake sink that fails on its second metrics call, like a tracking server going away."""

    name = "flaky"

    def log_metrics(self, metrics, step):
        if step == 1:
            raise ConnectionError("server went away")
        super().log_metrics(metrics, step)


@dataclasses.dataclass(frozen=True)
class Spec:
    lr: float = 1e-6
    rollout: dict = dataclasses.field(default_factory=lambda: {"n": 8})


def test_fan_out_and_a_failing_sink_is_disabled_not_fatal(local_config, tmp_path, caplog):
    recording, flaky = RecordingSink(), FakeFlakySink()
    artifact = tmp_path / "ckpt.txt"
    artifact.write_text("x")
    config = local_config(console="off")
    with RunLogger(config, extra_sinks=[recording, flaky]) as run:
        run.log_params(Spec())
        for step in range(3):
            run.log_metrics({"loss": 1.0 / (step + 1)}, step=step)
        run.set_tags({"attempt": 2})
        run.log_artifact(artifact, "checkpoints")
        assert run.active_sinks == ("jsonl", "recording")
        assert run.disabled == {"flaky": "log_metrics failed: ConnectionError: server went away"}

    assert "flaky sink disabled for the rest of the run" in caplog.text
    assert flaky.calls == [("params", {"lr": 1e-6, "rollout.n": 8}), ("metrics", 0, {"loss": 1.0}),
                           ("close", "FAILED")]
    assert recording.calls == [
        ("params", {"lr": 1e-6, "rollout.n": 8}),
        ("metrics", 0, {"loss": 1.0}), ("metrics", 1, {"loss": 0.5}), ("metrics", 2, {"loss": 1 / 3}),
        ("tags", {"attempt": "2"}), ("artifact", "ckpt.txt", "checkpoints"), ("close", "FINISHED"),
    ]
    assert [r.step for r in read_metrics(config.run_dir / METRICS_FILE)] == [0, 1, 2]


@pytest.mark.parametrize(("error", "status"), [(ValueError, "FAILED"), (KeyboardInterrupt, "KILLED")])
def test_context_manager_records_how_the_run_ended(local_config, error, status):
    config = local_config(console="off")
    recording = RecordingSink()
    with pytest.raises(error), RunLogger(config, extra_sinks=[recording]):
        raise error()
    assert recording.calls == [("close", status)]
    assert json.loads((config.run_dir / RUN_FILE).read_text())["status"] == status


def test_bad_input_reaches_the_caller_and_no_sink(local_config, tmp_path):
    recording = RecordingSink()
    run = RunLogger(local_config(console="off"), extra_sinks=[recording])
    with pytest.raises(FileNotFoundError, match="does not exist"):
        run.log_artifact(tmp_path / "missing.bin")
    with pytest.raises(ValueError, match="relative folder"):
        run.log_artifact(tmp_path, "../outside")
    with pytest.raises(TypeError, match="mapping or a dataclass"):
        run.log_params(["lr", 1])
    with pytest.raises(ValueError, match="tag names"):
        run.set_tags({"": "x"})
    assert run.log_metrics({}, step=0) is False
    assert recording.calls == []
    run.close()
    run.close()  # idempotent
    with pytest.raises(MonitorError, match="closed"):
        run.log_metrics({"x": 1.0}, step=1)


def test_missing_backend_is_a_warning_in_auto_and_an_error_in_on(local_config, monkeypatch, caplog):
    # As if mlflow were not installed: importing it raises ImportError.
    monkeypatch.setitem(sys.modules, "mlflow", None)
    monkeypatch.setitem(sys.modules, "mlflow.tracking", None)
    with RunLogger(local_config("auto", console="off", mlflow="auto")) as run:
        assert run.active_sinks == ("jsonl",)
    assert "pip install 'coding-framework-monitor[mlflow]'" in caplog.text
    expected = r"mlflow sink could not start: ModuleNotFoundError.*pip install.*mlflow='auto'"
    with pytest.raises(SinkStartError, match=expected):
        RunLogger(local_config("on", console="off", mlflow="on"))
