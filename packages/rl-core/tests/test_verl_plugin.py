"""The VERL plugin: registration, and parity of every cf_<name> with VERL's built-in <name>.

Parity goes through VERL's own lookups (`get_adv_estimator_fn("cf_<name>")` against
`get_adv_estimator_fn("<name>")`, likewise for policy losses) on random batches with uneven and
singleton groups, partial masks and masked feedback spans, at atol 1e-5, values and gradients.
"""

import importlib
import importlib.metadata
import importlib.util
import itertools
import os
import subprocess
import sys
import textwrap

import pytest
import torch

if importlib.util.find_spec("verl") is None:
    pytest.skip("verl is not installed (the optional `verl` extra)", allow_module_level=True)

# The plugin is imported before anything from verl: in a process of its own (one Bazel target per
# file) this exercises the plugin-first order, where the plugin's own `import verl` loads the entry
# point while the plugin module is still half-initialised.
from coding_framework.rl_core import verl_plugin  # isort: skip
from verl import DataProto
from verl.trainer.config import AlgoConfig
from verl.trainer.ppo import core_algos
from verl.workers.config import ActorConfig

from coding_framework import rl_core

ATOL = 1e-5
ADV_NAMES = list(rl_core.ADVANTAGE_ESTIMATORS)
LOSS_NAMES = list(rl_core.POLICY_LOSSES)


def assert_close(ours, theirs, msg=""):
    torch.testing.assert_close(ours, theirs.to(ours.dtype), atol=ATOL, rtol=0, msg=msg)


# --- registration --------------------------------------------------------------------------------


def test_every_registry_entry_has_an_adapter_registered_as_cf_name():
    assert list(verl_plugin.ADVANTAGE_ADAPTERS) == ADV_NAMES
    assert list(verl_plugin.POLICY_LOSS_ADAPTERS) == LOSS_NAMES
    for name in ADV_NAMES:
        assert core_algos.get_adv_estimator_fn(f"cf_{name}") is verl_plugin.ADVANTAGE_ADAPTERS[name]
    for name in LOSS_NAMES:
        assert core_algos.get_policy_loss_fn(f"cf_{name}") is verl_plugin.POLICY_LOSS_ADAPTERS[name]


@pytest.mark.parametrize(
    ("name", "ours", "theirs"),
    [(n, verl_plugin.ADVANTAGE_ADAPTERS[n], core_algos.get_adv_estimator_fn(n)) for n in ADV_NAMES]
    + [
        (n, verl_plugin.POLICY_LOSS_ADAPTERS[n], _verl)
        for n, _verl in (
            ("vanilla", core_algos.compute_policy_loss_vanilla),
            ("gspo", core_algos.compute_policy_loss_gspo),
            ("gpg", core_algos.compute_policy_loss_gpg),
        )
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_adapters_accept_the_parameters_of_verls_builtin_in_the_same_order(name, ours, theirs):
    import inspect

    def positional(fn):
        kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
        return [p.name for p in inspect.signature(fn).parameters.values() if p.kind in kinds]

    theirs_params, ours_params = positional(theirs), positional(ours)
    assert ours_params[: len(theirs_params)] == theirs_params, name
    # Where VERL has a default ours is the same, except norm_adv_by_std_in_grpo (None: from config);
    # where VERL requires an argument, cf_gae makes it optional only to raise a clearer error.
    empty = inspect.Parameter.empty
    defaults = {
        p.name: p.default for p in inspect.signature(theirs).parameters.values() if p.default is not empty
    }
    for p in inspect.signature(ours).parameters.values():
        if p.name in defaults and p.name != "norm_adv_by_std_in_grpo":
            assert p.default == defaults[p.name], f"{name}.{p.name}"


def test_registration_is_idempotent():
    verl_plugin.register()
    verl_plugin.register()
    reloaded = importlib.reload(verl_plugin)  # new function objects under the same names
    assert core_algos.get_adv_estimator_fn("cf_grpo") is reloaded.cf_grpo
    assert core_algos.get_policy_loss_fn("cf_vanilla") is reloaded.cf_vanilla


def test_a_foreign_cf_entry_is_not_overwritten(monkeypatch):
    def someone_elses(**kwargs):
        """Not ours."""

    monkeypatch.setitem(core_algos.ADV_ESTIMATOR_REGISTRY, "cf_grpo", someone_elses)
    with pytest.raises(RuntimeError, match="someone_elses"):
        verl_plugin.register()


def test_entry_point_is_declared_in_the_verl_plugins_group():
    points = importlib.metadata.entry_points(group="verl.plugins")
    assert "coding_framework.rl_core.verl_plugin" in {p.value for p in points}


_CHECK = """
from verl.trainer.ppo.core_algos import get_adv_estimator_fn, get_policy_loss_fn
names = {names!r}
for name in names["adv"]:
    get_adv_estimator_fn("cf_" + name)
for name in names["loss"]:
    get_policy_loss_fn("cf_" + name)
print("resolved", len(names["adv"]) + len(names["loss"]))
"""


def test_cf_names_resolve_after_a_bare_import_verl():
    # A fresh interpreter: VERL loads the entry point inside its own __init__ and swallows a failure
    # at debug level, so only a clean process shows whether a bare `import verl` registers us.
    script = "import verl\n" + _CHECK.format(names={"adv": ADV_NAMES, "loss": LOSS_NAMES})
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("VERL_USE_EXTERNAL_PLUGINS", "VERL_USE_EXTERNAL_MODULES")
    }
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)], capture_output=True, text=True, env=env, timeout=300
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert f"resolved {len(ADV_NAMES) + len(LOSS_NAMES)}" in result.stdout


# --- advantage estimators ------------------------------------------------------------------------

ADV_CASES = {
    "gae": [{"gamma": 1.0, "lam": 1.0}, {"gamma": 0.99, "lam": 0.95}],
    "grpo": [{"norm_adv_by_std_in_grpo": True}, {"norm_adv_by_std_in_grpo": False}],
    "rloo": [{}],
    "reinforce_plus_plus": [{"gamma": 1.0}, {"gamma": 0.9}],
    "reinforce_plus_plus_baseline": [{}],
    "remax": [{}],
}


def _adv_kwargs(name, b, setting):
    """The keyword arguments VERL's compute_advantage passes to the built-in `name`."""
    config = AlgoConfig(gamma=setting.get("gamma", 1.0), lam=setting.get("lam", 1.0))
    if name == "gae":
        return {
            "token_level_rewards": b.dense_rewards,
            "values": b.values,
            "response_mask": b.mask,
            "gamma": setting["gamma"],
            "lam": setting["lam"],
        }
    if name == "grpo":
        flag = setting["norm_adv_by_std_in_grpo"]
        return {
            "token_level_rewards": b.rewards,
            "response_mask": b.mask,
            "index": b.uids,
            "norm_adv_by_std_in_grpo": flag,
        }
    kwargs = {"token_level_rewards": b.rewards, "response_mask": b.mask, "config": config}
    if name == "reinforce_plus_plus":
        kwargs["token_level_rewards"] = b.dense_rewards
    if name in ("rloo", "reinforce_plus_plus_baseline"):
        kwargs["index"] = b.uids
    if name == "remax":
        kwargs["reward_baselines"] = b.baselines
    return kwargs


@pytest.mark.parametrize("binary", [False, True], ids=["continuous", "binary"])
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize(
    ("name", "setting"),
    [(n, s) for n in ADV_NAMES for s in ADV_CASES[n]],
    ids=lambda v: v if isinstance(v, str) else "-".join(f"{k}={x}" for k, x in v.items()) or "default",
)
def test_advantage_estimator_parity(make_batch, name, setting, seed, binary):
    b = make_batch(seed, binary_scores=binary)
    kwargs = _adv_kwargs(name, b, setting)
    ours = core_algos.get_adv_estimator_fn(f"cf_{name}")(**kwargs)
    theirs = core_algos.get_adv_estimator_fn(name)(**kwargs)
    masked = ~b.mask.bool()
    for label, o, t in zip(("advantages", "returns"), ours, theirs, strict=True):
        # VERL leaves carried-over values on masked tokens for gae / remax; ours are 0 there.
        assert_close(o, t * b.mask, msg=f"{name} {label}")
        assert torch.equal(o[masked], torch.zeros_like(o[masked])), f"{name} {label} under the mask"


def test_parity_cases_cover_every_estimator_and_singletons(make_batch):
    assert set(ADV_CASES) == set(ADV_NAMES)
    b = make_batch(0)
    sizes = torch.bincount(b.group_ids)
    assert (sizes == 1).any() and (sizes > 2).any()
    assert ((b.mask[:, :-1] == 0) & (b.mask[:, 1:] == 1)).any(), "a masked span inside a response"


def _data(b, **extra):
    tensors = {"token_level_rewards": b.rewards, "response_mask": b.mask, **extra}
    return DataProto.from_dict(tensors=tensors, non_tensors={"uid": b.uids})


@pytest.mark.parametrize("norm", [True, False])
@pytest.mark.parametrize(
    "name", ["grpo", "rloo", "reinforce_plus_plus", "reinforce_plus_plus_baseline", "remax"]
)
def test_drop_in_through_verl_compute_advantage(make_batch, name, norm):
    from verl.trainer.ppo.ray_trainer import compute_advantage

    b = make_batch(7)
    config = AlgoConfig(gamma=0.95, norm_adv_by_std_in_grpo=norm)
    extra = {"reward_baselines": b.baselines} if name == "remax" else {}
    # As RayPPOTrainer calls it: the flag explicitly, config alongside.
    common = {"gamma": config.gamma, "lam": config.lam, "norm_adv_by_std_in_grpo": norm, "config": config}
    ours = compute_advantage(_data(b, **extra), adv_estimator=f"cf_{name}", **common)
    theirs = compute_advantage(_data(b, **extra), adv_estimator=name, **common)
    for key in ("advantages", "returns"):
        assert_close(ours.batch[key], theirs.batch[key] * b.mask, msg=f"{name} {key}")


def test_cf_gae_through_verl_compute_advantage_says_why_it_cannot_work(make_batch):
    from verl.trainer.ppo.ray_trainer import compute_advantage

    b = make_batch(0)
    with pytest.raises(ValueError, match=r"values.*adv_estimator=gae"):
        compute_advantage(_data(b, values=b.values), adv_estimator="cf_gae", config=AlgoConfig())


def test_group_estimators_need_the_uid(make_batch):
    b = make_batch(0)
    with pytest.raises(ValueError, match="uid"):
        verl_plugin.cf_rloo(b.rewards, b.mask, None)
    with pytest.raises(ValueError, match="config"):
        verl_plugin.cf_reinforce_plus_plus(b.rewards, b.mask)


# --- policy losses -------------------------------------------------------------------------------

CLIPS = {
    "symmetric": {"clip_ratio": 0.2, "clip_ratio_low": 0.2, "clip_ratio_high": 0.2, "clip_ratio_c": 3.0},
    "clip-higher": {"clip_ratio": 0.2, "clip_ratio_low": 0.2, "clip_ratio_high": 0.28, "clip_ratio_c": 3.0},
    "tight-dual-clip": {
        "clip_ratio": 0.2,
        "clip_ratio_low": 0.1,
        "clip_ratio_high": 0.4,
        "clip_ratio_c": 1.5,
    },
    "fallback-to-clip_ratio": {
        "clip_ratio": 0.25,
        "clip_ratio_low": None,
        "clip_ratio_high": None,
        "clip_ratio_c": 2.0,
    },
}
BATCH_INFO = {
    "local": {},
    "two-ranks": {"dp_size": 2, "batch_num_tokens": 61, "global_batch_size": 23, "loss_scale_factor": 12},
}


DRIFT = 1.0  # std of log π − log π_old: enough for every clip branch, dual-clip at 3 included


def _actor_config(clip, info):
    config = ActorConfig(strategy="fsdp", rollout_n=1, ppo_micro_batch_size_per_gpu=1, **CLIPS[clip])
    config.global_batch_info.update(BATCH_INFO[info])
    return config


def _verl_loss(name):
    if name == "reinforce":  # VERL has the function but registers no loss mode for it
        return core_algos.compute_policy_loss_reinforce
    return core_algos.get_policy_loss_fn(name)


def _loss_parity(b, name, mode, clip, info, weights, mask):
    results = {}
    for side, fn in (("ours", core_algos.get_policy_loss_fn(f"cf_{name}")), ("theirs", _verl_loss(name))):
        log_prob = b.log_prob.clone().requires_grad_()
        loss, metrics = fn(
            b.old_log_prob, log_prob, b.advantages, mask, mode, _actor_config(clip, info), weights
        )
        loss.backward()
        results[side] = (loss, metrics, log_prob.grad)
    (ours, our_metrics, our_grad), (theirs, their_metrics, their_grad) = results["ours"], results["theirs"]
    assert_close(ours, theirs, msg="loss")
    assert_close(our_grad, their_grad, msg="gradient")
    for key, value in their_metrics.items():
        assert our_metrics[key] == pytest.approx(value, abs=1e-6), key
    assert all(isinstance(v, float) for v in our_metrics.values())


@pytest.mark.parametrize("with_weights", [False, True], ids=["no-is-weights", "is-weights"])
@pytest.mark.parametrize("info", BATCH_INFO)
@pytest.mark.parametrize("clip", CLIPS)
@pytest.mark.parametrize("mode", rl_core.LOSS_AGGREGATIONS)
@pytest.mark.parametrize("name", LOSS_NAMES)
def test_policy_loss_parity(make_batch, name, mode, clip, info, with_weights):
    b = make_batch(11, drift=DRIFT)
    _loss_parity(b, name, mode, clip, info, b.weights if with_weights else None, b.mask)


@pytest.mark.parametrize("mode", rl_core.LOSS_AGGREGATIONS)
@pytest.mark.parametrize("name", LOSS_NAMES)
def test_policy_loss_parity_with_a_bool_mask(make_batch, name, mode):
    # VERL's workers pass response_mask as bool.
    b = make_batch(12, drift=DRIFT)
    _loss_parity(b, name, mode, "clip-higher", "two-ranks", b.weights, b.mask.bool())


def test_parity_data_exercises_every_clip_branch(make_batch):
    b = make_batch(11, drift=DRIFT)
    for clip in CLIPS:
        _, metrics = verl_plugin.cf_vanilla(
            b.old_log_prob, b.log_prob, b.advantages, b.mask, config=_actor_config(clip, "local")
        )
        assert metrics["actor/pg_clipfrac"] > 0.05 and metrics["actor/pg_clipfrac_lower"] > 0.0, clip
    _, metrics = verl_plugin.cf_gspo(
        b.old_log_prob, b.log_prob, b.advantages, b.mask, config=_actor_config("symmetric", "local")
    )
    assert metrics["actor/pg_clipfrac"] > 0.05


def test_policy_losses_are_called_the_way_verl_workers_call_them(make_batch):
    # verl/workers/utils/losses.py passes everything by keyword, with a bool mask.
    b = make_batch(2)
    for name in LOSS_NAMES:
        fn = core_algos.get_policy_loss_fn(f"cf_{name}")
        loss, metrics = fn(
            old_log_prob=b.old_log_prob,
            log_prob=b.log_prob,
            advantages=b.advantages,
            response_mask=b.mask.bool(),
            loss_agg_mode="token-mean",
            config=_actor_config("clip-higher", "local"),
            rollout_is_weights=None,
        )
        assert loss.dim() == 0 and torch.isfinite(loss) and "actor/ppo_kl" in metrics, name


def test_losses_without_config_say_so(make_batch):
    b = make_batch(0)
    for name in LOSS_NAMES:
        with pytest.raises(ValueError, match="config"):
            core_algos.get_policy_loss_fn(f"cf_{name}")(b.old_log_prob, b.log_prob, b.advantages, b.mask)


def test_parity_grid_covers_every_loss_mode_and_setting():
    grid = list(itertools.product(LOSS_NAMES, rl_core.LOSS_AGGREGATIONS, CLIPS, BATCH_INFO))
    assert len(grid) == len(LOSS_NAMES) * 5 * len(CLIPS) * len(BATCH_INFO)
