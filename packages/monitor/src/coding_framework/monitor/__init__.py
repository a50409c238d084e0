"""One logging facade for training and evaluation runs.

    from coding_framework.monitor import MonitorConfig, RunLogger

    with RunLogger(MonitorConfig(run_dir="runs/grpo-1", mlflow="auto")) as run:
        run.log_params(job_spec)                      # dict or dataclass, flattened
        for step in range(steps):
            run.log_metrics({"reward/mean": r, "pass_rate": p}, step=step)
        run.write_training_curves()

Heavy backends (MLflow, W&B, matplotlib) are imported only when a sink or plot needs them.
"""

from coding_framework.monitor.config import MonitorConfig, SinkMode
from coding_framework.monitor.console import format_step_line, training_progress
from coding_framework.monitor.errors import MonitorError, RunDirInUseError, SinkStartError
from coding_framework.monitor.jsonl import METRICS_FILE, RUN_FILE, StepRecord, metric_series, read_metrics
from coding_framework.monitor.logger import RunLogger
from coding_framework.monitor.plots import plot_benchmark_results, plot_training_curves
from coding_framework.monitor.sink import RunStatus, Sink
from coding_framework.monitor.system import SystemMetricsSampler, SystemMetricsThread, sample_system_metrics

__all__ = [
    "METRICS_FILE",
    "RUN_FILE",
    "MonitorConfig",
    "MonitorError",
    "RunDirInUseError",
    "RunLogger",
    "RunStatus",
    "Sink",
    "SinkMode",
    "SinkStartError",
    "StepRecord",
    "SystemMetricsSampler",
    "SystemMetricsThread",
    "format_step_line",
    "metric_series",
    "plot_benchmark_results",
    "plot_training_curves",
    "read_metrics",
    "sample_system_metrics",
    "training_progress",
]
