"""MLflow tracking through MlflowClient (no global active run, so several loggers can coexist).

Default store: sqlite at `<run_dir>/mlflow.db` (MLflow 3's default kind of store; the file store is
deprecated), artifacts under `<run_dir>/mlflow-artifacts`. `MLFLOW_TRACKING_URI` or the config's
URI overrides it. The run id is kept in the run dir's state so a resumed run continues it.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from coding_framework.monitor.names import NameMap, mlflow_key
from coding_framework.monitor.sink import RunStatus, Sink
from coding_framework.monitor.state import RunState
from coding_framework.monitor.values import ParamValue, param_as_text

MLFLOW_DB = "mlflow.db"
MLFLOW_ARTIFACTS = "mlflow-artifacts"
MLFLOW_MAX_PARAM_VALUE = 6000
"""MLflow truncates longer param values to this many characters (mlflow.utils.validation)."""
DEFAULT_STORE = "<run_dir>/mlflow.db"
"""What the state file records for the default store, so a moved run dir still resumes its run."""

log = logging.getLogger(__name__)


def default_tracking_uri(run_dir: Path) -> str:
    return f"sqlite:///{(Path(run_dir) / MLFLOW_DB).resolve()}"


@contextlib.contextmanager
def _quiet_schema_setup() -> Iterator[None]:
    """MLflow announces creating and migrating its sqlite tables at INFO; that is noise on a
    training console, so those loggers are raised to WARNING while the store opens."""
    names = ("mlflow.store.db.utils", "alembic.runtime.migration", "alembic")
    loggers = [logging.getLogger(name) for name in names]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.WARNING)
    try:
        yield
    finally:
        for lg, level in zip(loggers, levels, strict=True):
            lg.setLevel(level)


class MlflowSink(Sink):
    """Params, per-step metrics, tags and artifacts of one MLflow run."""

    name = "mlflow"

    def __init__(
        self, *, run_dir: Path, run_name: str, experiment: str, tracking_uri: str, state: RunState,
        resume: bool,
    ) -> None:
        """`resume`: continue the MLflow run recorded in `state` (if any) instead of creating one."""
        from mlflow.tracking import MlflowClient

        self.default_store = not tracking_uri
        self.tracking_uri = tracking_uri or default_tracking_uri(run_dir)
        self._run_dir = Path(run_dir)
        # Params, metrics and tags are separate namespaces in MLflow, so each gets its own collision map.
        self._param_keys = NameMap("MLflow params", mlflow_key)
        self._metric_keys = NameMap("MLflow metrics", mlflow_key)
        self._tag_keys = NameMap("MLflow tags", mlflow_key)
        self._params: dict[str, str] = {}
        self._warned_params: set[str] = set()
        with _quiet_schema_setup():
            self._client = MlflowClient(tracking_uri=self.tracking_uri)
            store = DEFAULT_STORE if self.default_store else self.tracking_uri
            previous = state.get("mlflow") if resume else None
            self.run_id = self._continue(previous, store) or self._create(experiment, run_name)
        state.set("mlflow", {"tracking_uri": store, "run_id": self.run_id})

    @property
    def artifact_uri(self) -> str:
        return self._client.get_run(self.run_id).info.artifact_uri

    def _continue(self, previous: dict[str, Any] | None, store: str) -> str | None:
        from mlflow.exceptions import MlflowException

        if not previous:
            return None
        if previous.get("tracking_uri") != store:
            log.warning(
                "MLflow: this run dir was logged to %s, now the tracking URI is %s; starting a new run",
                previous.get("tracking_uri"), store,
            )
            return None
        run_id = str(previous.get("run_id"))
        try:
            run = self._client.get_run(run_id)
        except MlflowException as exc:
            log.warning("MLflow: run %s recorded in the run dir is gone (%s); starting a new run",
                        run_id, exc)
            return None
        if run.info.lifecycle_stage != "active":
            log.warning("MLflow: run %s was deleted; starting a new run", run_id)
            return None
        self._client.update_run(run_id, status="RUNNING")
        self._params = dict(run.data.params)
        return run_id

    def _create(self, experiment: str, run_name: str) -> str:
        from mlflow.exceptions import MlflowException

        found = self._client.get_experiment_by_name(experiment)
        if found is None:
            location = (self._run_dir / MLFLOW_ARTIFACTS).resolve().as_uri() if self.default_store else None
            try:
                experiment_id = self._client.create_experiment(experiment, artifact_location=location)
            except MlflowException:
                # Another process created it between our lookup and create; use theirs.
                found = self._client.get_experiment_by_name(experiment)
                if found is None:
                    raise
                experiment_id = found.experiment_id
        else:
            experiment_id = found.experiment_id
            if found.lifecycle_stage == "deleted":
                self._client.restore_experiment(experiment_id)
        run = self._client.create_run(
            experiment_id, run_name=run_name, tags={"cf.run_dir": str(self._run_dir.resolve())}
        )
        return run.info.run_id

    def log_params(self, params: Mapping[str, ParamValue]) -> None:
        from mlflow.entities import Param

        new = []
        for name, value in params.items():
            key = self._param_keys.key(name)
            if key is None:
                continue
            text = param_as_text(value)[:MLFLOW_MAX_PARAM_VALUE]
            if key not in self._params:
                self._params[key] = text
                new.append(Param(key, text))
            elif self._params[key] != text and key not in self._warned_params:
                # MLflow params are write-once; the new value still reaches run.json and W&B.
                self._warned_params.add(key)
                log.warning("MLflow: param %r is already %r in this run; not changing it to %r (params are "
                            "write-once in MLflow)", key, self._params[key], text)
        if new:
            self._client.log_batch(self.run_id, params=new)

    def log_metrics(self, metrics: Mapping[str, float], step: int) -> None:
        from mlflow.entities import Metric

        now_ms = int(time.time() * 1000)
        batch = [
            Metric(key, value, now_ms, step)
            for name, value in metrics.items()
            if (key := self._metric_keys.key(name)) is not None
        ]
        if batch:
            self._client.log_batch(self.run_id, metrics=batch)

    def set_tags(self, tags: Mapping[str, str]) -> None:
        from mlflow.entities import RunTag

        keyed = ((self._tag_keys.key(name), value) for name, value in tags.items())
        batch = [RunTag(key, value) for key, value in keyed if key is not None]
        if batch:
            self._client.log_batch(self.run_id, tags=batch)

    def log_artifact(self, path: Path, artifact_path: str | None) -> None:
        if path.is_dir():
            self._client.log_artifacts(self.run_id, str(path), artifact_path)
        else:
            self._client.log_artifact(self.run_id, str(path), artifact_path)

    def close(self, status: RunStatus) -> None:
        self._client.set_terminated(self.run_id, status=status)
