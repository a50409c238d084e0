import threading
import time

import psutil

from coding_framework.monitor import METRICS_FILE, RunLogger, SystemMetricsSampler, read_metrics
from coding_framework.monitor.system import MIB, SystemMetricsThread, gpu_metrics


def test_sample_has_plausible_cpu_and_memory_and_no_gpu_without_cuda():
    import torch  # the CPU build: torch is loaded but CUDA is not available

    assert not torch.cuda.is_available()
    sampler = SystemMetricsSampler()
    deadline = time.perf_counter() + 0.3
    while time.perf_counter() < deadline:  # keep a core busy so the CPU reading has time to measure
        pass
    sample = sampler.sample()
    assert 0.0 < sample["system/cpu_percent"] <= 100.0
    assert 0.0 < sample["system/process_cpu_percent"] <= 100.0 * psutil.cpu_count() + 1
    rss_mib = psutil.Process().memory_info().rss / MIB
    assert abs(sample["system/process_rss_mib"] - rss_mib) < 0.1 * rss_mib
    assert 0.0 < sample["system/memory_used_percent"] < 100.0
    assert 0.0 < sample["system/memory_available_mib"] <= psutil.virtual_memory().total / MIB
    assert not [key for key in sample if "gpu" in key]


class FakeCuda:
    """Stands in for torch.cuda with two devices: the first with a context and NVML, the second
    without NVML (utilization raises, as torch does when pynvml is missing)."""

    def __init__(self, initialized: bool) -> None:
        self._initialized = initialized

    def is_available(self) -> bool:
        return True

    def is_initialized(self) -> bool:
        return self._initialized

    def device_count(self) -> int:
        return 2

    def memory_allocated(self, index: int) -> int:
        return (index + 1) * 512 * MIB

    def memory_reserved(self, index: int) -> int:
        return (index + 1) * 1024 * MIB

    def mem_get_info(self, index: int) -> tuple[int, int]:
        return (60 * 1024 * MIB, 80 * 1024 * MIB)

    def utilization(self, index: int) -> int:
        if index == 1:
            raise ModuleNotFoundError("pynvml")
        return 87


def test_gpu_metrics_per_device_and_absent_rather_than_zero():
    assert gpu_metrics(FakeCuda(initialized=True)) == {
        "system/gpu0/memory_allocated_mib": 512.0,
        "system/gpu0/memory_reserved_mib": 1024.0,
        "system/gpu0/memory_used_mib": 20 * 1024.0,
        "system/gpu0/memory_total_mib": 80 * 1024.0,
        "system/gpu0/utilization_percent": 87.0,
        "system/gpu1/memory_allocated_mib": 1024.0,
        "system/gpu1/memory_reserved_mib": 2048.0,
        "system/gpu1/memory_used_mib": 20 * 1024.0,
        "system/gpu1/memory_total_mib": 80 * 1024.0,
    }
    # Without a CUDA context of its own the process must not create one just to read device totals.
    assert "system/gpu0/memory_used_mib" not in gpu_metrics(FakeCuda(initialized=False))
    assert gpu_metrics(None) == {}
    assert "system/gpu0/utilization_percent" in SystemMetricsSampler(cuda=FakeCuda(True)).sample()


def test_background_thread_logs_until_close(local_config):
    config = local_config(console="off", system_metrics_interval_s=0.1)
    run = RunLogger(config)
    run.log_metrics({"reward/mean": 0.5}, step=3)
    time.sleep(0.55)
    run.close()
    assert not [t for t in threading.enumerate() if t.name == "cf-system-metrics" and t.is_alive()]
    path = config.run_dir / METRICS_FILE
    system = [r for r in read_metrics(path) if "system/process_rss_mib" in r.metrics]
    assert len(system) >= 3
    assert {r.step for r in system} <= {0, 3}
    count = len(path.read_text().splitlines())
    time.sleep(0.3)
    assert len(path.read_text().splitlines()) == count


def test_thread_stops_itself_when_sampling_fails(caplog):
    class BrokenSampler(SystemMetricsSampler):
        def sample(self) -> dict[str, float]:
            raise PermissionError("no /proc")

    seen = []
    thread = SystemMetricsThread(0.1, seen.append, BrokenSampler()).start()
    time.sleep(0.35)
    assert not thread.alive and seen == []
    assert "sampling failed" in caplog.text
    thread.stop()
