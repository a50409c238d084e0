import re
from pathlib import Path

import pytest

from coding_framework.monitor import MonitorConfig


def test_defaults_and_name(tmp_path):
    config = MonitorConfig(run_dir=str(tmp_path / "grpo-7"))
    assert config.run_dir == tmp_path / "grpo-7" and isinstance(config.run_dir, Path)
    assert config.name == "grpo-7"
    assert MonitorConfig(run_dir=tmp_path, run_name="named").name == "named"
    assert (config.console, config.jsonl, config.mlflow, config.wandb, config.prometheus) == (
        "on", "on", "auto", "off", "off")


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"mlflow": True}, "mlflow=True is not a sink mode"),
        ({"wandb": "offline"}, "use one of off, auto, on"),
        ({"console_every": 0}, "console_every must be an integer >= 1"),
        ({"mlflow": "off", "mlflow_tracking_uri": "sqlite:///x.db"}, "set mlflow='on'"),
        ({"prometheus_port": 9100}, "set prometheus='on'"),
        ({"prometheus": "on", "prometheus_port": 70000}, "0..65535"),
        ({"prometheus_namespace": "9lives"}, "not a Prometheus metric name prefix"),
        ({"system_metrics_interval_s": 0.01}, "too short"),
        ({"system_metrics_interval_s": float("nan")}, "must be seconds or None"),
        ({"experiment": " "}, "experiment must be a non-empty name"),
        ({"console_metrics": ("ok", "")}, "console_metrics must be metric names"),
    ],
)
def test_bad_values_rejected_with_what_to_do(tmp_path, overrides, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        MonitorConfig(run_dir=tmp_path, **overrides)


def test_run_dir_that_is_a_file_is_rejected(tmp_path):
    file = tmp_path / "f"
    file.write_text("x")
    with pytest.raises(ValueError, match="is not a directory"):
        MonitorConfig(run_dir=file)
