"""PNG plots of a run's training curves and of benchmark results, written atomically.

matplotlib is used through Figure + FigureCanvasAgg, never pyplot: no global figure state, no GUI
backend, safe in a trainer's background thread.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path

from coding_framework.monitor.files import atomic_write_with
from coding_framework.monitor.jsonl import StepRecord, metric_series, read_metrics

DEFAULT_CURVES = ("reward/mean", "pass_rate")
"""Series plotted when none are named: the trainer's mean reward and hidden-test pass rate."""


def _new_figure(width_in: float, height_in: float, dpi: int):  # -> (Figure, FigureCanvasAgg)
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width_in, height_in), dpi=dpi, layout="constrained")
    return figure, FigureCanvasAgg(figure)


def _save_png(figure, path: Path, dpi: int) -> Path:
    path = Path(path)
    if path.suffix.lower() != ".png":
        raise ValueError(f"plots are written as PNG; give a path ending in .png, not {path.name!r}")
    atomic_write_with(path, lambda tmp: figure.savefig(tmp, format="png", dpi=dpi))
    return path


def _moving_average(values: Sequence[float], window: int) -> list[float]:
    """Trailing mean over the last `window` values (fewer at the start)."""
    out, total = [], 0.0
    for i, value in enumerate(values):
        total += value
        if i >= window:
            total -= values[i - window]
        out.append(total / min(i + 1, window))
    return out


def available_series(records: Sequence[StepRecord]) -> list[str]:
    names: dict[str, None] = {}
    for record in records:
        names.update(dict.fromkeys(record.metrics))
    return sorted(names)


def plot_training_curves(
    metrics_path: Path,
    out_path: Path,
    series: Sequence[str] | None = None,
    *,
    smooth: int = 1,
    title: str = "",
    dpi: int = 100,
) -> Path:
    """One panel per series (value vs step) from a metrics.jsonl, stacked with a shared step axis.

    `series`: metric names to plot; every one must be in the file. None: those of DEFAULT_CURVES
    present in the file (an error if none is). `smooth` > 1 adds a trailing moving average over
    that many points on top of the raw curve. Returns `out_path`.
    """
    if isinstance(smooth, bool) or not isinstance(smooth, int) or smooth < 1:
        raise ValueError(f"smooth must be a window of >= 1 points, got {smooth!r}")
    records = read_metrics(metrics_path)
    present = available_series(records)
    if series is None:
        chosen = [name for name in DEFAULT_CURVES if name in present]
        if not chosen:
            raise ValueError(f"{metrics_path} has none of the default series {list(DEFAULT_CURVES)}; "
                             f"name the series to plot, e.g. one of {present[:20]}")
    else:
        chosen = list(series)
        missing = [name for name in chosen if name not in present]
        if not chosen or missing:
            raise ValueError(f"series {missing or chosen} not in {metrics_path}; available: {present[:40]}")

    figure, _canvas = _new_figure(8.0, 2.6 * len(chosen) + 0.4, dpi)
    axes = figure.subplots(len(chosen), 1, sharex=True, squeeze=False)[:, 0]
    for ax, name in zip(axes, chosen, strict=True):
        steps, values = metric_series(records, name)
        if not steps:
            ax.text(0.5, 0.5, "no finite values", transform=ax.transAxes, ha="center", va="center")
        elif smooth > 1:
            ax.plot(steps, values, color="C0", alpha=0.3, linewidth=1, label="raw")
            ax.plot(steps, _moving_average(values, smooth), color="C0", linewidth=2,
                    label=f"mean of {smooth}")
            ax.legend(loc="best", fontsize="small")
        else:
            ax.plot(steps, values, color="C0", linewidth=1.5, marker="." if len(steps) < 50 else None)
        ax.set_ylabel(name)
        ax.grid(True, alpha=0.3)
    axes[-1].set_xlabel("step")
    if title:
        figure.suptitle(title)
    return _save_png(figure, out_path, dpi)


def plot_benchmark_results(
    results: Mapping[str, Mapping[str, Mapping[str, float]]],
    out_path: Path,
    *,
    title: str = "",
    dpi: int = 100,
) -> Path:
    """Grouped bars of pass@k: one panel per metric (e.g. pass@1, pass@10), benchmarks on the x axis,
    one bar per model, each bar labelled with its value in percent.

    `results[benchmark][model][metric]` is a fraction in [0, 1]. A missing (benchmark, model, metric)
    combination is left as a gap. Returns `out_path`.
    """
    benchmarks = list(results)
    if not benchmarks:
        raise ValueError("results is empty; pass {benchmark: {model: {'pass@1': fraction}}}")
    models: dict[str, None] = {}
    metrics: dict[str, None] = {}
    for benchmark, by_model in results.items():
        if not isinstance(by_model, Mapping) or not by_model:
            raise ValueError(f"results[{benchmark!r}] must map model names to {{metric: fraction}}")
        for model, scores in by_model.items():
            models[model] = None
            for metric, value in scores.items():
                if not isinstance(value, (int, float)) or not (0.0 <= value <= 1.0) or math.isnan(value):
                    raise ValueError(f"results[{benchmark!r}][{model!r}][{metric!r}] = {value!r}; "
                                     "pass@k values are fractions in [0, 1]")
                metrics[metric] = None
    model_names, metric_names = list(models), sorted(metrics, key=_metric_order)

    width = max(6.0, 1.2 + len(benchmarks) * (0.5 + 0.35 * len(model_names)))
    figure, _canvas = _new_figure(width, 3.2 * len(metric_names) + 0.4, dpi)
    axes = figure.subplots(len(metric_names), 1, squeeze=False)[:, 0]
    bar_width = 0.8 / len(model_names)
    for ax, metric in zip(axes, metric_names, strict=True):
        for m, model in enumerate(model_names):
            xs, heights = [], []
            for b, benchmark in enumerate(benchmarks):
                value = results[benchmark].get(model, {}).get(metric)
                if value is not None:
                    xs.append(b - 0.4 + bar_width * (m + 0.5))
                    heights.append(100.0 * value)
            bars = ax.bar(xs, heights, bar_width, label=model, color=f"C{m % 10}")
            ax.bar_label(bars, fmt="%.1f", fontsize="x-small", padding=1)
        ax.set_xticks(range(len(benchmarks)), benchmarks)
        ax.set_ylim(0, 105)
        ax.set_ylabel(f"{metric} (%)")
        ax.grid(True, axis="y", alpha=0.3)
        ax.legend(loc="upper right", fontsize="small")
    if title:
        figure.suptitle(title)
    return _save_png(figure, out_path, dpi)


def _metric_order(name: str) -> tuple[int, str]:
    """pass@1 before pass@10 before pass@100; other names after, alphabetically."""
    prefix, _, k = name.partition("@")
    return (int(k), prefix) if k.isdigit() else (1 << 30, name)
