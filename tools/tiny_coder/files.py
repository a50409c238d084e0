"""Writing a model directory: every file lands atomically (temp file + os.replace)."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

from transformers import GenerationConfig

MODEL_FILES = ("config.json", "generation_config.json", "model.safetensors", "tokenizer.json",
               "tokenizer_config.json")
"""What `save_model_dir` writes (besides the card)."""


def write_text_atomic(path: str | os.PathLike, text: str) -> None:
    """Write `text` to `path` through a temp file in the same directory and os.replace."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(tmp, 0o644)  # mkstemp makes 0600; these are ordinary repository files
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def generation_config(tokenizer, max_new_tokens: int) -> GenerationConfig:
    """Defaults for `generate`: pure sampling at T=1 (what the card's sampled numbers use), stop at EOS."""
    return GenerationConfig(
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        do_sample=True,
        temperature=1.0,
        top_k=0,
        top_p=1.0,
        max_new_tokens=max_new_tokens,
    )


def portable_tokenizer_class(path: Path) -> None:
    """Name the tokenizer class `PreTrainedTokenizerFast`: transformers 5 writes `TokenizersBackend`,
    which transformers 4 cannot load, while both load `PreTrainedTokenizerFast` from tokenizer.json."""
    config = json.loads(path.read_text(encoding="utf-8"))
    config["tokenizer_class"] = "PreTrainedTokenizerFast"
    write_text_atomic(path, json.dumps(config, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


def save_model_dir(model, tokenizer, out: str | os.PathLike, max_new_tokens: int) -> list[Path]:
    """Save model (safetensors), generation config and tokenizer into `out`.

    Everything is first written to a temporary sibling directory, then each file is moved into `out`
    with os.replace, so a reader never sees a half-written file, and other files in `out` (the card,
    a BUILD file) are left alone. Returns the paths written.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.staging."))
    try:
        model.generation_config = generation_config(tokenizer, max_new_tokens)
        model.save_pretrained(staging, safe_serialization=True)
        tokenizer.save_pretrained(staging)
        portable_tokenizer_class(staging / "tokenizer_config.json")
        produced = sorted(p.name for p in staging.iterdir() if p.is_file())
        unexpected = set(produced) - set(MODEL_FILES)
        missing = set(MODEL_FILES) - set(produced)
        if unexpected or missing:
            raise RuntimeError(f"save_pretrained wrote {produced}; expected {list(MODEL_FILES)} "
                               "(the transformers version changed what it saves: update MODEL_FILES)")
        written = []
        for name in produced:
            os.chmod(staging / name, 0o644)
            os.replace(staging / name, out / name)
            written.append(out / name)
        return written
    finally:
        shutil.rmtree(staging, ignore_errors=True)
