import json
import math

import numpy as np
import pytest

from coding_framework.monitor import (
    METRICS_FILE,
    RUN_FILE,
    MonitorError,
    RunDirInUseError,
    RunLogger,
    metric_series,
    read_metrics,
)


def test_one_line_per_call_written_through_before_close(local_config):
    config = local_config(console="off")
    run = RunLogger(config)
    run.log_params({"optim": {"lr": 3e-6, "betas": (0.9, 0.99)}, "model": "tiny"})
    run.set_tags({"stage": "smoke"})
    run.log_metrics({"reward/mean": 0.25, "loss": float("nan")}, step=0)
    run.log_metrics({"reward/mean": 0.5, "loss": 1.5}, step=1)

    # Read while the logger is still open: every line must already be on disk.
    lines = (config.run_dir / METRICS_FILE).read_text().splitlines()
    assert len(lines) == 2
    first = json.loads(lines[0])
    assert first["step"] == 0 and first["metrics"] == {"reward/mean": 0.25, "loss": None}
    records = read_metrics(config.run_dir / METRICS_FILE)
    assert metric_series(records, "loss") == ([1], [1.5])
    assert metric_series(records, "reward/mean") == ([0, 1], [0.25, 0.5])
    run.close()

    info = json.loads((config.run_dir / RUN_FILE).read_text())
    assert info["params"] == {"optim.lr": 3e-6, "optim.betas": [0.9, 0.99], "model": "tiny"}
    assert info["tags"] == {"stage": "smoke"} and info["status"] == "FINISHED"


def test_resume_appends_without_duplicating_logged_steps(local_config):
    config = local_config(console="off")
    with RunLogger(config) as run:
        for step in range(5):
            run.log_metrics({"x": float(step)}, step=step)

    with pytest.raises(RunDirInUseError, match="resume=True"):
        RunLogger(config)

    resumed_config = local_config(console="off", resume=True)
    with RunLogger(resumed_config) as run:
        assert run.resumed_after == 4 and run.current_step == 4
        # The trainer restarts from its step-2 checkpoint: steps 3 and 4 are already logged.
        written = [run.log_metrics({"x": 100.0 + step}, step=step) for step in range(3, 8)]
    assert written == [False, False, True, True, True]

    steps, values = metric_series(read_metrics(config.run_dir / METRICS_FILE), "x")
    assert steps == [0, 1, 2, 3, 4, 5, 6, 7]
    assert values == [0.0, 1.0, 2.0, 3.0, 4.0, 105.0, 106.0, 107.0]


def test_torn_last_line_is_ignored_then_cut_on_resume(local_config):
    config = local_config(console="off")
    with RunLogger(config) as run:
        run.log_metrics({"x": 1.0}, step=0)
    path = config.run_dir / METRICS_FILE
    with open(path, "a") as handle:  # a crash in the middle of writing step 1
        handle.write('{"step":1,"time":17000')

    assert [r.step for r in read_metrics(path)] == [0]
    with RunLogger(local_config(console="off", resume=True)) as run:
        assert run.resumed_after == 0
        run.log_metrics({"x": 2.0}, step=1)
    assert [json.loads(line)["step"] for line in path.read_text().splitlines()] == [0, 1]


def test_malformed_inner_line_is_an_error_naming_the_line(tmp_path):
    path = tmp_path / METRICS_FILE
    path.write_text('{"step":0,"time":1,"metrics":{}}\nnot json\n{"step":2,"time":1,"metrics":{}}\n')
    with pytest.raises(MonitorError, match=rf"{METRICS_FILE}:2"):
        read_metrics(path)
    with pytest.raises(FileNotFoundError, match="jsonl on"):
        read_metrics(tmp_path / "missing.jsonl")


def test_values_are_coerced_or_rejected(local_config):
    config = local_config(console="off")
    with RunLogger(config) as run:
        run.log_metrics({"flag": True, "count": np.int64(3), "mean": np.float32(0.5), "arr": np.array([2.5])},
                        step=np.int64(0))
        with pytest.raises(TypeError, match="'bad' has value 'high'"):
            run.log_metrics({"bad": "high"}, step=1)
        with pytest.raises(TypeError, match="one-element"):
            run.log_metrics({"vec": np.array([1.0, 2.0])}, step=1)
        with pytest.raises(ValueError, match="step must be >= 0"):
            run.log_metrics({"x": 1.0}, step=-1)
        with pytest.raises(TypeError, match="step must be an integer"):
            run.log_metrics({"x": 1.0}, step=1.5)
    (record,) = read_metrics(config.run_dir / METRICS_FILE)
    assert record.metrics == {"flag": 1.0, "count": 3.0, "mean": 0.5, "arr": 2.5}
    assert all(math.isfinite(v) for v in record.metrics.values())
