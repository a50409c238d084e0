"""The local training engine: RL post-training of any local Hugging Face causal LM on CPU or one GPU.

`Trainer(config, model_dir, environment, run_dir).run()` trains; the environment is anything with the
`Environment` protocol's methods (packages/agents' `CodingEnvironment` is one, without importing this
package). Needs `transformers` (and `tokenizers` for `write_tiny_model`), which rl-core's core does not:
`from coding_framework import rl_core` never imports this subpackage.
"""

from .checkpoint import (
    capture_rng,
    checkpoint_dir,
    latest_checkpoint,
    list_checkpoints,
    prune_checkpoints,
    read_engine_state,
    read_trainer_state,
    restore_rng,
    save_checkpoint,
)
from .config import EngineConfig, field_help
from .environment import (
    Environment,
    GenerateFn,
    SampledText,
    SegmentLike,
    Trajectory,
    check_environment,
)
from .policy import ModelDirError, Policy, ValueHead, check_model_dir, load_policy
from .rollout import (
    EncodedTrajectory,
    PolicySampler,
    TokenBatch,
    build_token_batch,
    encode_segments,
    truncate_left,
)
from .sampling import Sample, filter_top_p, left_pad, sample
from .toy import (
    CharacterTargetEnvironment,
    ToySegment,
    ToyTask,
    ToyTrajectory,
    byte_tokenizer,
    write_tiny_model,
)
from .trainer import PassAtOne, Trainer
from .update import (
    TokenStats,
    UpdateBatch,
    Updater,
    compute_advantages,
    forward_stats,
    lr_multiplier,
    place_rewards,
    value_loss,
)

__all__ = [
    "CharacterTargetEnvironment",
    "EncodedTrajectory",
    "EngineConfig",
    "Environment",
    "GenerateFn",
    "ModelDirError",
    "PassAtOne",
    "Policy",
    "PolicySampler",
    "Sample",
    "SampledText",
    "SegmentLike",
    "TokenBatch",
    "TokenStats",
    "ToySegment",
    "ToyTask",
    "ToyTrajectory",
    "Trainer",
    "Trajectory",
    "UpdateBatch",
    "Updater",
    "ValueHead",
    "build_token_batch",
    "byte_tokenizer",
    "capture_rng",
    "check_environment",
    "check_model_dir",
    "checkpoint_dir",
    "compute_advantages",
    "encode_segments",
    "field_help",
    "filter_top_p",
    "forward_stats",
    "latest_checkpoint",
    "left_pad",
    "list_checkpoints",
    "load_policy",
    "lr_multiplier",
    "place_rewards",
    "prune_checkpoints",
    "read_engine_state",
    "read_trainer_state",
    "restore_rng",
    "sample",
    "save_checkpoint",
    "truncate_left",
    "value_loss",
    "write_tiny_model",
]
