"""Prometheus gauges holding the latest value of every logged metric, labelled with the run name.

The gauges live in a CollectorRegistry the caller can expose (e.g. the gateway's /metrics) or that
this sink serves itself over HTTP. Gauges are unregistered on close so a later run can reuse the
same registry.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping

from prometheus_client import CollectorRegistry, Gauge, start_http_server

from coding_framework.monitor.names import NameMap, prometheus_name
from coding_framework.monitor.sink import RunStatus, Sink


class PrometheusSink(Sink):
    """`<namespace>_<metric>{run="<run name>"}` gauges plus `<namespace>_step{run=...}`."""

    name = "prometheus"

    def __init__(
        self,
        *,
        registry: CollectorRegistry,
        namespace: str,
        run_name: str,
        port: int | None = None,
        addr: str = "127.0.0.1",
    ) -> None:
        self.registry = registry
        self._namespace = namespace
        self._run = run_name
        self._names = NameMap("Prometheus", lambda name: prometheus_name(namespace, name))
        self._gauges: dict[str, Gauge] = {}
        self._lock = threading.Lock()
        self._names.reserve(f"{namespace}_step", "<the step gauge>")
        self._step = Gauge(f"{namespace}_step", "Last training step logged", ["run"], registry=registry)
        self._server = None
        self.port: int | None = None
        if port is not None:
            try:
                self._server, _thread = start_http_server(port, addr=addr, registry=registry)
            except OSError as exc:
                registry.unregister(self._step)
                raise OSError(f"cannot serve Prometheus metrics on {addr}:{port} ({exc}); choose a free "
                              "port or 0 for any") from exc
            self.port = self._server.server_port

    def _gauge(self, name: str) -> Gauge | None:
        key = self._names.key(name)
        if key is None:
            return None
        gauge = self._gauges.get(key)
        if gauge is None:
            gauge = Gauge(key, f"Latest value of the metric {name!r}", ["run"], registry=self.registry)
            self._gauges[key] = gauge
        return gauge

    def log_metrics(self, metrics: Mapping[str, float], step: int) -> None:
        with self._lock:
            for name, value in metrics.items():
                gauge = self._gauge(name)
                if gauge is not None:
                    gauge.labels(run=self._run).set(value)
            self._step.labels(run=self._run).set(step)

    def close(self, status: RunStatus) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        with self._lock:
            for collector in [self._step, *self._gauges.values()]:
                self.registry.unregister(collector)
            self._gauges.clear()
