"""MLflow against a real sqlite store in tmp_path, read back through MlflowClient."""

import json
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from coding_framework.monitor import RunLogger
from coding_framework.monitor.mlflow_sink import default_tracking_uri
from coding_framework.monitor.names import mlflow_key
from coding_framework.monitor.state import STATE_FILE


def _history(client: MlflowClient, run_id: str, key: str) -> list[tuple[int, float]]:
    return sorted((m.step, m.value) for m in client.get_metric_history(run_id, key))


def test_default_sqlite_store_holds_params_metrics_artifacts_and_resumes(local_config, tmp_path, caplog):
    config = local_config(console="off", mlflow="on")
    report = tmp_path / "report.txt"
    report.write_text("pass@1 = 0.5\n")
    samples = tmp_path / "samples"
    samples.mkdir()
    (samples / "a.jsonl").write_text('{"task_id": "HumanEval/0"}\n')

    with RunLogger(config) as run:
        run_id = run.sink("mlflow").run_id
        run.log_params({"algo": {"name": "grpo", "group_size": 8}, "lr": 1e-6})
        run.set_tags({"stage": "smoke"})
        for step in range(3):
            run.log_metrics({"reward/mean": 0.1 * step, "pass@1": 0.25 * step}, step=step)
        run.log_artifact(report)
        run.log_artifact(samples, "eval")

    assert (config.run_dir / "mlflow.db").is_file()
    client = MlflowClient(tracking_uri=default_tracking_uri(config.run_dir))
    finished = client.get_run(run_id)
    assert finished.info.status == "FINISHED" and finished.info.run_name == "run"
    assert finished.data.params == {"algo.name": "grpo", "algo.group_size": "8", "lr": "1e-06"}
    assert finished.data.tags["stage"] == "smoke"
    assert _history(client, run_id, "reward/mean") == [(0, 0.0), (1, 0.1), (2, 0.2)]
    assert _history(client, run_id, "pass_at_1") == [(0, 0.0), (1, 0.25), (2, 0.5)]
    assert sorted(f.path for f in client.list_artifacts(run_id)) == ["eval", "report.txt"]
    assert [f.path for f in client.list_artifacts(run_id, "eval")] == ["eval/a.jsonl"]
    local = Path(client.download_artifacts(run_id, "report.txt", str(tmp_path / "dl")))
    assert local.read_text() == "pass@1 = 0.5\n"
    artifacts_root = (config.run_dir / "mlflow-artifacts").resolve()
    assert Path(finished.info.artifact_uri.removeprefix("file://")).is_relative_to(artifacts_root)

    # A second process resumes: same MLflow run, no duplicated steps, params stay write-once.
    with RunLogger(local_config(console="off", mlflow="on", resume=True)) as run:
        assert run.sink("mlflow").run_id == run_id
        assert client.get_run(run_id).info.status == "RUNNING"
        run.log_params({"lr": 2e-6, "resumed": True})
        for step in range(1, 5):
            run.log_metrics({"reward/mean": 1.0 + step}, step=step)
    assert "param 'lr' is already '1e-06'" in caplog.text
    resumed = client.get_run(run_id)
    assert resumed.info.status == "FINISHED"
    assert resumed.data.params["lr"] == "1e-06" and resumed.data.params["resumed"] == "true"
    assert _history(client, run_id, "reward/mean") == [(0, 0.0), (1, 0.1), (2, 0.2), (3, 4.0), (4, 5.0)]
    state = json.loads((config.run_dir / STATE_FILE).read_text())
    assert state["mlflow"] == {"run_id": run_id, "tracking_uri": "<run_dir>/mlflow.db"}


def test_tracking_uri_from_environment_and_failed_status(local_config, tmp_path, monkeypatch):
    uri = f"sqlite:///{tmp_path / 'shared.db'}"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    config = local_config(console="off", mlflow="on", experiment="shared-exp")
    with pytest.raises(RuntimeError, match="diverged"), RunLogger(config) as run:
        run.log_metrics({"loss": 1.0}, step=0)
        run_id = run.sink("mlflow").run_id
        raise RuntimeError("diverged")
    assert not (config.run_dir / "mlflow.db").exists()
    client = MlflowClient(tracking_uri=uri)
    run = client.get_run(run_id)
    assert run.info.status == "FAILED"
    assert client.get_experiment(run.info.experiment_id).name == "shared-exp"
    assert _history(client, run_id, "loss") == [(0, 1.0)]


@pytest.mark.parametrize(
    ("name", "key"),
    [("pass@1", "pass_at_1"), ("reward/mean", "reward/mean"), ("/a//b/./c/", "a/b/c"),
     ("grad norm (l2)", "grad norm _l2_"), ("..", "_")],
)
def test_metric_names_become_valid_mlflow_keys(name, key):
    assert mlflow_key(name) == key
