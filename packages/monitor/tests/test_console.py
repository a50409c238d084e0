import io

import pytest
from rich.console import Console

from coding_framework.monitor import RunLogger, format_step_line, training_progress


def test_step_line_shows_chosen_metrics_in_order():
    metrics = {"loss": 0.000123456, "reward/mean": 0.53125, "pass_rate": 0.4, "tokens": 2048.0}
    line = format_step_line(12, metrics, ("pass_rate", "reward/mean", "absent"))
    assert line is not None and line.plain == "step 12  pass_rate 0.4  reward/mean 0.5312"
    everything = format_step_line(3, {"a": float("nan"), "system/cpu_percent": 5.0, "n": 2048.0})
    assert everything is not None and everything.plain == "step 3  a nan  n 2048"
    assert format_step_line(3, {"system/cpu_percent": 5.0}) is None


def test_console_sink_prints_every_nth_step(local_config, console_buffer):
    console, buffer = console_buffer
    config = local_config(jsonl="off", console_metrics=("reward/mean",), console_every=2)
    with RunLogger(config, console=console) as run:
        for step in range(5):
            run.log_metrics({"reward/mean": step / 4, "loss": 1.0}, step=step)
    lines = buffer.getvalue().splitlines()
    assert lines[0].startswith("run run → ") and lines[0].endswith("[console]")
    assert lines[1:] == [
        "step 0  reward/mean 0", "step 2  reward/mean 0.5", "step 4  reward/mean 1", "run run finished"
    ]


def test_progress_bar_counts_steps_and_shares_the_console(local_config):
    buffer = io.StringIO()
    console = Console(file=buffer, width=120, force_terminal=True, color_system=None)
    with RunLogger(local_config(jsonl="off"), console=console) as run, run.progress(4, completed=1) as bar:
        for step in range(2, 5):
            run.log_metrics({"reward/mean": 0.5}, step=step)
            bar.advance()
        assert bar.completed == 4
    output = buffer.getvalue()
    assert "step 4  reward/mean 0.5" in output and "4/4" in output

    with pytest.raises(ValueError, match="positive number of steps"), training_progress(0):
        pass
    with pytest.raises(ValueError, match=r"in 0\.\.total"), training_progress(3, completed=4):
        pass
