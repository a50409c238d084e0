import inspect
import subprocess
import sys
import textwrap

import pytest

from coding_framework import rl_core
from coding_framework.rl_core import Registry, UnknownNameError

REGISTRIES = {
    "ADVANTAGE_ESTIMATORS": rl_core.ADVANTAGE_ESTIMATORS,
    "POLICY_LOSSES": rl_core.POLICY_LOSSES,
    "LOSS_AGGREGATIONS": rl_core.LOSS_AGGREGATIONS,
    "KL_ESTIMATORS": rl_core.KL_ESTIMATORS,
}


def _entries():
    return [(title, name, fn) for title, reg in REGISTRIES.items() for name, fn in reg.items()]


def test_registries_hold_the_names_configs_use():
    assert list(rl_core.ADVANTAGE_ESTIMATORS) == [
        "gae",
        "grpo",
        "rloo",
        "reinforce_plus_plus",
        "reinforce_plus_plus_baseline",
        "remax",
    ]
    assert list(rl_core.POLICY_LOSSES) == ["vanilla", "gspo", "gpg", "reinforce"]
    assert list(rl_core.LOSS_AGGREGATIONS) == [
        "token-mean",
        "token-sum",
        "seq-mean-token-sum",
        "seq-mean-token-mean",
        "seq-mean-token-sum-norm",
    ]
    assert list(rl_core.KL_ESTIMATORS) == ["k1", "k2", "k3"]
    assert rl_core.ADVANTAGE_ESTIMATORS["grpo"] is rl_core.grpo_advantages
    assert rl_core.POLICY_LOSSES["vanilla"] is rl_core.ppo_clip_loss


@pytest.mark.parametrize("title", REGISTRIES)
def test_unknown_name_error_lists_every_valid_name(title):
    registry = REGISTRIES[title]
    with pytest.raises(UnknownNameError) as caught:
        registry["no-such-thing"]
    message = str(caught.value)
    assert "'no-such-thing'" in message and registry.kind in message
    for name in registry:
        assert name in message
    assert caught.value.valid == list(registry)


def test_unknown_name_is_a_key_error_so_mapping_methods_behave():
    registry = rl_core.KL_ESTIMATORS
    assert isinstance(UnknownNameError("x", "y", []), KeyError)
    assert registry.get("nope") is None
    assert "nope" not in registry and "k3" in registry
    assert len(registry) == 3 and dict(registry)["k1"] is rl_core.k1


def test_registry_is_read_only():
    registry = rl_core.KL_ESTIMATORS
    with pytest.raises(TypeError):
        registry["k4"] = rl_core.k1  # type: ignore[index]
    assert not hasattr(registry, "register")


def test_registry_rejects_bad_entries():
    def undocumented(x):
        return x

    with pytest.raises(ValueError, match="docstring"):
        Registry("thing", {"u": undocumented})
    with pytest.raises(TypeError, match="not callable"):
        Registry("thing", {"n": 3})
    with pytest.raises(ValueError, match="non-empty"):
        Registry("thing", {"": rl_core.k1})
    with pytest.raises(ValueError, match="kind"):
        Registry("", {})


@pytest.mark.parametrize(("title", "name", "fn"), _entries(), ids=lambda v: v if isinstance(v, str) else "")
def test_every_entry_has_a_one_line_summary_and_keyword_only_hyperparameters(title, name, fn):
    summary = REGISTRIES[title].summaries()[name]
    assert summary and len(summary) <= 110, summary
    for parameter in inspect.signature(fn).parameters.values():
        if parameter.default is not inspect.Parameter.empty:
            assert parameter.kind is inspect.Parameter.KEYWORD_ONLY, (
                f"{name}: {parameter.name} must be keyword-only"
            )


def test_core_imports_without_verl():
    # A fresh interpreter in which `import verl` fails, as on a machine without the optional extra.
    script = textwrap.dedent(
        """
        import sys

        class NoVerl:
            def find_spec(self, name, path=None, target=None):
                if name == "verl" or name.startswith("verl."):
                    raise ModuleNotFoundError("No module named 'verl' (blocked by the test)")
                return None

        sys.meta_path.insert(0, NoVerl())
        import coding_framework.rl_core as rl_core
        from coding_framework.rl_core import advantages, aggregation, dapo, kl, losses, registry, rewards
        assert "verl" not in sys.modules
        try:
            import coding_framework.rl_core.verl_plugin
        except ModuleNotFoundError as e:
            print("plugin needs verl:", e)
        print(len(rl_core.ADVANTAGE_ESTIMATORS))
        """
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "plugin needs verl" in result.stdout
    assert result.stdout.strip().endswith("6")
