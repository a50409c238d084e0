"""Checkpoints: RUN_DIR/checkpoints/step_<N>/, written atomically, holding everything resume needs.

A checkpoint directory is a Hugging Face model directory (config.json, safetensors weights, tokenizer
files: `from_pretrained` and serving read it as is) plus:

- `trainer_state.pt` — optimizer state, value head, KL coefficient, and every RNG state (Python,
  NumPy, torch CPU and CUDA, the engine's own generators); loaded with `weights_only=True`.
- `engine_state.json` — step, base model path, the engine config, the environment's state and the
  metrics history. Written last: a directory without it is not a checkpoint.

Everything is written into a hidden temporary directory next to the final one, flushed to disk, then
renamed into place with `os.replace`, so a crash at any moment leaves either the complete checkpoint or
none (a leftover `.tmp-*` directory, which `latest_checkpoint` ignores and the next save removes).
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import uuid
from pathlib import Path
from typing import Any

import numpy as np
import torch

CHECKPOINTS = "checkpoints"
ENGINE_STATE = "engine_state.json"
TRAINER_STATE = "trainer_state.pt"
FORMAT_VERSION = 1
_STEP_DIR = re.compile(r"step_(\d+)")


def checkpoint_dir(run_dir: str | os.PathLike[str], step: int) -> Path:
    """RUN_DIR/checkpoints/step_<step>."""
    return Path(run_dir) / CHECKPOINTS / f"step_{step}"


def list_checkpoints(run_dir: str | os.PathLike[str]) -> list[tuple[int, Path]]:
    """Complete checkpoints of a run, oldest first: (step, path). Incomplete or foreign dirs are skipped."""
    root = Path(run_dir) / CHECKPOINTS
    if not root.is_dir():
        return []
    found = []
    for entry in root.iterdir():
        match = _STEP_DIR.fullmatch(entry.name)
        if (
            match
            and entry.is_dir()
            and (entry / ENGINE_STATE).is_file()
            and (entry / TRAINER_STATE).is_file()
        ):
            found.append((int(match.group(1)), entry))
    return sorted(found)


def latest_checkpoint(run_dir: str | os.PathLike[str]) -> Path | None:
    """The newest complete checkpoint of the run, or None."""
    found = list_checkpoints(run_dir)
    return found[-1][1] if found else None


def _fsync_tree(path: Path) -> None:
    for name in sorted(os.listdir(path)):
        child = path / name
        if child.is_dir():
            _fsync_tree(child)
        else:
            with open(child, "rb") as handle:
                os.fsync(handle.fileno())
    _fsync_dir(path)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def save_checkpoint(
    run_dir: str | os.PathLike[str],
    step: int,
    *,
    model: Any,
    tokenizer: Any,
    trainer_state: dict[str, Any],
    engine_state: dict[str, Any],
) -> Path:
    """Write checkpoint `step` atomically and return its path.

    Args:
        model, tokenizer: saved with `save_pretrained` (safetensors weights).
        trainer_state: tensors and plain data for `torch.save` (loadable with weights_only=True).
        engine_state: JSON-able data; written last.
    """
    root = Path(run_dir) / CHECKPOINTS
    root.mkdir(parents=True, exist_ok=True)
    for leftover in root.glob(".tmp-*"):
        shutil.rmtree(leftover, ignore_errors=True)
    final = checkpoint_dir(run_dir, step)
    tmp = root / f".tmp-step_{step}-{uuid.uuid4().hex[:8]}"
    tmp.mkdir()
    try:
        model.save_pretrained(str(tmp), safe_serialization=True)
        tokenizer.save_pretrained(str(tmp))
        torch.save(trainer_state, tmp / TRAINER_STATE)
        try:
            text = json.dumps({"format": FORMAT_VERSION, **engine_state}, indent=1, sort_keys=True)
        except TypeError as err:
            raise TypeError(
                f"checkpoint engine state is not JSON-able ({err}); an environment's state_dict "
                "must return plain data"
            ) from None
        (tmp / ENGINE_STATE).write_text(text, encoding="utf-8")
        _fsync_tree(tmp)
        if final.exists():
            # Re-saving a step (e.g. after a resume): move the old one aside first, since a directory
            # cannot replace a non-empty one; the moment in between has the older checkpoints intact.
            old = root / f".tmp-old-{final.name}-{uuid.uuid4().hex[:8]}"
            os.replace(final, old)
            os.replace(tmp, final)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, final)
        _fsync_dir(root)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return final


def prune_checkpoints(run_dir: str | os.PathLike[str], keep: int) -> list[Path]:
    """Delete all but the newest `keep` complete checkpoints; returns the deleted paths."""
    if keep < 1:
        raise ValueError(f"keep={keep}: keep at least one checkpoint")
    found = list_checkpoints(run_dir)
    doomed = [path for _, path in found[:-keep]]
    for path in doomed:
        # Rename first so a crash mid-delete leaves a hidden leftover, not a half checkpoint.
        hidden = path.parent / f".tmp-del-{path.name}-{uuid.uuid4().hex[:8]}"
        os.replace(path, hidden)
        shutil.rmtree(hidden, ignore_errors=True)
    return doomed


def read_engine_state(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The JSON state of a checkpoint directory."""
    state = json.loads((Path(path) / ENGINE_STATE).read_text(encoding="utf-8"))
    if state.get("format") != FORMAT_VERSION:
        raise ValueError(
            f"{path}: checkpoint format {state.get('format')!r}, this engine reads {FORMAT_VERSION}"
        )
    return state


def read_trainer_state(path: str | os.PathLike[str], device: torch.device | str = "cpu") -> dict[str, Any]:
    """The tensor state of a checkpoint directory (weights_only: no code is unpickled)."""
    return torch.load(Path(path) / TRAINER_STATE, map_location=device, weights_only=True)


def capture_rng(generators: dict[str, torch.Generator]) -> dict[str, Any]:
    """Every random state a training step reads: Python, NumPy, torch (CPU, CUDA) and `generators`."""
    version, internal, gauss = random.getstate()
    kind, keys, pos, has_gauss, cached = np.random.get_state()
    state: dict[str, Any] = {
        "python": {"version": version, "state": torch.tensor(internal, dtype=torch.int64), "gauss": gauss},
        "numpy": {
            "kind": kind,
            "keys": torch.from_numpy(keys.astype(np.int64)),
            "pos": int(pos),
            "has_gauss": int(has_gauss),
            "cached": float(cached),
        },
        "torch": torch.get_rng_state(),
        "cuda": torch.cuda.get_rng_state_all()
        if torch.cuda.is_available() and torch.cuda.is_initialized()
        else [],
        "generators": {name: g.get_state() for name, g in generators.items()},
    }
    return state


def restore_rng(state: dict[str, Any], generators: dict[str, torch.Generator]) -> None:
    """Put back what `capture_rng` captured."""
    py = state["python"]
    random.setstate((py["version"], tuple(int(v) for v in py["state"].tolist()), py["gauss"]))
    npy = state["numpy"]
    np.random.set_state(
        (npy["kind"], npy["keys"].numpy().astype(np.uint32), npy["pos"], npy["has_gauss"], npy["cached"])
    )
    torch.set_rng_state(state["torch"].cpu())
    if state["cuda"] and torch.cuda.is_available():
        torch.cuda.set_rng_state_all([s.cpu() for s in state["cuda"]])
    saved = state["generators"]
    missing = set(generators) - set(saved)
    if missing:
        raise ValueError(f"checkpoint lacks the RNG state of generator(s) {sorted(missing)}")
    for name, generator in generators.items():
        generator.set_state(saved[name].cpu())
