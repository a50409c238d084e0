import struct

import pytest
from PIL import Image

from coding_framework.monitor import METRICS_FILE, RunLogger, plot_benchmark_results, plot_training_curves

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
BLUE, ORANGE = (0x1F, 0x77, 0xB4), (0xFF, 0x7F, 0x0E)  # matplotlib's C0 and C1


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == PNG_SIGNATURE and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def _pixels_of(path, rgb: tuple[int, int, int]) -> int:
    image = Image.open(path).convert("RGB")
    return sum(count for count, colour in image.getcolors(maxcolors=1 << 20) if colour == rgb)


def test_training_curves_from_the_runs_jsonl(local_config):
    config = local_config(console="off")
    with RunLogger(config) as run:
        for step in range(40):
            run.log_metrics({"reward/mean": step / 40, "pass_rate": (step % 7) / 7, "loss": 1 / (step + 1)},
                            step=step)
        path = run.write_training_curves()
        assert path == config.run_dir / "plots" / "training_curves.png"

    data = path.read_bytes()
    # Default series: reward and pass rate, one panel each, 8 in wide, 2.6 in per panel + 0.4, at 100 dpi.
    assert _png_size(data) == (800, 560) and len(data) > 15_000
    assert _pixels_of(path, BLUE) > 500  # the curves themselves are drawn, not just axes
    assert [p.name for p in path.parent.iterdir()] == ["training_curves.png"]  # no temp file left

    one = plot_training_curves(config.run_dir / METRICS_FILE, config.run_dir / "loss.png", ["loss"], smooth=5)
    assert _png_size(one.read_bytes()) == (800, 300)

    with pytest.raises(ValueError, match=r"series \['missing'\] not in .*available: \['loss', 'pass_rate'"):
        plot_training_curves(config.run_dir / METRICS_FILE, config.run_dir / "x.png", ["missing"])
    with pytest.raises(ValueError, match=r"ending in \.png"):
        plot_training_curves(config.run_dir / METRICS_FILE, config.run_dir / "x.jpg", ["loss"])
    assert not (config.run_dir / "x.png").exists() and not (config.run_dir / "x.jpg").exists()


def test_benchmark_bar_chart(tmp_path):
    results = {
        "humaneval": {"base": {"pass@1": 0.30, "pass@10": 0.52}, "grpo": {"pass@1": 0.41, "pass@10": 0.60}},
        "mbpp": {"base": {"pass@1": 0.35}, "grpo": {"pass@1": 0.44}},
    }
    path = plot_benchmark_results(results, tmp_path / "bench.png", title="pass@k")
    data = path.read_bytes()
    # Two panels (pass@1, pass@10) of 3.2 in + 0.4 in; width max(6, 1.2 + 2 × (0.5 + 0.35 × 2)) in.
    assert _png_size(data) == (600, 680) and len(data) > 15_000
    assert _pixels_of(path, BLUE) > 1000 and _pixels_of(path, ORANGE) > 1000  # one colour per model

    with pytest.raises(ValueError, match=r"\['grpo'\]\['pass@1'\] = 44; pass@k values are fractions"):
        plot_benchmark_results({"mbpp": {"grpo": {"pass@1": 44}}}, tmp_path / "bad.png")
    with pytest.raises(ValueError, match="results is empty"):
        plot_benchmark_results({}, tmp_path / "bad.png")
    assert not (tmp_path / "bad.png").exists()
