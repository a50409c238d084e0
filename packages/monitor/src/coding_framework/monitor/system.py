"""CPU, memory and GPU usage of this process and machine, as a flat dict of floats.

Names (all under `system/`; memory in MiB, utilisation in percent):
  cpu_percent             machine-wide CPU use since the previous sample, 0..100 (absent when
                          too little time passed to measure)
  process_cpu_percent     this process's CPU use since the previous sample, 0..100 × cores
  process_rss_mib         this process's resident memory
  memory_used_percent     machine-wide memory in use, 0..100
  memory_available_mib    machine-wide memory available to new processes
  gpu<i>/memory_allocated_mib, gpu<i>/memory_reserved_mib
                          this process's PyTorch tensors / caching allocator on CUDA device i
  gpu<i>/memory_used_mib, gpu<i>/memory_total_mib
                          whole device (only once this process has initialised CUDA)
  gpu<i>/utilization_percent
                          device busy time (only where NVML is importable)
GPU keys are absent, not zero, when torch is not imported or CUDA is unavailable.
"""

from __future__ import annotations

import contextlib
import logging
import sys
import threading
from collections.abc import Callable
from types import ModuleType
from typing import Any

import psutil

PREFIX = "system/"
MIB = 1024 * 1024

log = logging.getLogger(__name__)


def _loaded_torch_cuda() -> ModuleType | None:
    """torch.cuda if torch is already imported; a process that never imported torch uses no GPU
    through it, and importing torch here would cost seconds."""
    torch = sys.modules.get("torch")
    return getattr(torch, "cuda", None) if torch is not None else None


def gpu_metrics(cuda: Any) -> dict[str, float]:
    """Per-device GPU metrics from a `torch.cuda`-like module; {} when CUDA is unavailable.

    Device-wide numbers need a CUDA context; they are read only when this process already has one,
    since creating a context reserves memory on every device it touches.
    """
    if cuda is None or not cuda.is_available():
        return {}
    out: dict[str, float] = {}
    initialized = cuda.is_initialized()
    for index in range(cuda.device_count()):
        key = f"{PREFIX}gpu{index}/"
        out[key + "memory_allocated_mib"] = cuda.memory_allocated(index) / MIB
        out[key + "memory_reserved_mib"] = cuda.memory_reserved(index) / MIB
        if initialized:
            free, total = cuda.mem_get_info(index)
            out[key + "memory_used_mib"] = (total - free) / MIB
            out[key + "memory_total_mib"] = total / MIB
        # NVML missing or unsupported on this device: the key stays absent rather than a fake 0.
        with contextlib.suppress(Exception):
            out[key + "utilization_percent"] = float(cuda.utilization(index))
    return out


def _busy_and_total(times: Any) -> tuple[float, float]:
    """(busy, total) CPU seconds from psutil.cpu_times(); guest time is already inside user time on
    Linux, so it is not counted twice, and iowait counts as idle (as top and psutil do)."""
    total = sum(times) - getattr(times, "guest", 0.0) - getattr(times, "guest_nice", 0.0)
    idle = times.idle + getattr(times, "iowait", 0.0)
    return total - idle, total


class SystemMetricsSampler:
    """Samples the metrics above on demand, from any thread.

    CPU percentages cover the time since the previous sample of this sampler, so the constructor
    takes a first reading. (psutil.cpu_percent keeps that reading per calling thread, which would
    make a background thread's first sample a meaningless 0; the sampler keeps its own.) Two samples
    too close together to measure leave `cpu_percent` out rather than report a fake 0.
    """

    def __init__(self, *, cuda: Any = "auto") -> None:
        self._process = psutil.Process()
        self._cuda = cuda
        self._lock = threading.Lock()
        self._cpu_times = _busy_and_total(psutil.cpu_times())
        self._process.cpu_percent(interval=None)

    def sample(self) -> dict[str, float]:
        with self._lock:
            busy0, total0 = self._cpu_times
            self._cpu_times = busy1, total1 = _busy_and_total(psutil.cpu_times())
            with self._process.oneshot():
                process_cpu = self._process.cpu_percent(interval=None)
                rss = self._process.memory_info().rss
        memory = psutil.virtual_memory()
        out: dict[str, float] = {}
        if total1 > total0:
            out[f"{PREFIX}cpu_percent"] = min(100.0, max(0.0, 100.0 * (busy1 - busy0) / (total1 - total0)))
        out.update({
            f"{PREFIX}process_cpu_percent": float(process_cpu),
            f"{PREFIX}process_rss_mib": rss / MIB,
            f"{PREFIX}memory_used_percent": float(memory.percent),
            f"{PREFIX}memory_available_mib": memory.available / MIB,
        })
        cuda = _loaded_torch_cuda() if self._cuda == "auto" else self._cuda
        out.update(gpu_metrics(cuda))
        return out


def sample_system_metrics() -> dict[str, float]:
    """One sample from a fresh sampler. Its CPU percentages cover only the moment since the sampler
    was made; keep a SystemMetricsSampler for meaningful CPU numbers across calls."""
    return SystemMetricsSampler().sample()


class SystemMetricsThread:
    """Calls `callback(sampler.sample())` every `interval_s` seconds in a daemon thread until stop().

    A failing sample or callback is logged once and ends the thread; it never reaches the trainer.
    """

    def __init__(
        self, interval_s: float, callback: Callable[[dict[str, float]], None],
        sampler: SystemMetricsSampler | None = None,
    ) -> None:
        if not interval_s > 0:
            raise ValueError(f"interval_s must be positive seconds, got {interval_s!r}")
        self.interval_s = interval_s
        self._callback = callback
        self._sampler = sampler or SystemMetricsSampler()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="cf-system-metrics", daemon=True)

    def start(self) -> SystemMetricsThread:
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            try:
                self._callback(self._sampler.sample())
            except Exception:
                log.exception("system metrics: sampling failed; no more background samples for this run")
                return

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout)

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()
