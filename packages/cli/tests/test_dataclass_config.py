from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import pytest

from coding_framework.cli.dataclass_config import (
    ConfigError,
    as_dict,
    build,
    load_yaml,
    merge,
    parse_overrides,
    replace,
)


@dataclass(frozen=True)
class Inner:
    lr: float = 1e-3
    mode: Literal["a", "b"] = "a"
    layers: tuple[int, ...] = (1, 2)

    def __post_init__(self):
        if self.lr <= 0:
            raise ValueError(f"lr must be positive, got {self.lr}")


@dataclass(frozen=True)
class Outer:
    seed: int = 0
    name: str = "run"
    path: Path | None = None
    verbose: bool = False
    inner: Inner = field(default_factory=Inner)


def test_overrides_nest_and_parse_values_as_yaml():
    got = parse_overrides(["inner.lr=1e-5", "seed=3", "name=x", "verbose=true", "inner.layers=[4,5]"])
    assert got == {"inner": {"lr": "1e-5", "layers": [4, 5]}, "seed": 3, "name": "x", "verbose": True}
    # YAML 1.1 leaves 1e-5 a string; the float field takes it as the number.
    assert build(Outer, got).inner.lr == 1e-5


@pytest.mark.parametrize("bad", ["seed", "=3", "a..b=1", "inner.=2"])
def test_malformed_override_is_an_error(bad):
    with pytest.raises(ConfigError, match="key=value"):
        parse_overrides([bad])


def test_build_converts_types_and_nests():
    cfg = build(Outer, {"seed": 7, "path": "runs/a", "inner": {"lr": 2, "layers": [3], "mode": "b"}})
    assert cfg == Outer(seed=7, path=Path("runs/a"), inner=Inner(lr=2.0, mode="b", layers=(3,)))
    assert isinstance(cfg.inner.lr, float)


def test_unknown_key_names_the_valid_keys_and_a_close_match():
    with pytest.raises(ConfigError) as err:
        build(Outer, {"inner": {"lrr": 0.1}})
    message = str(err.value)
    assert "'inner.lrr'" in message and "did you mean 'lr'" in message and "mode" in message


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        ({"seed": "x"}, "seed must be an integer"),
        ({"seed": True}, "seed must be an integer"),
        ({"verbose": "yes"}, "verbose must be true or false"),
        ({"inner": {"mode": "c"}}, "inner.mode='c' is not allowed; use one of a, b"),
        ({"inner": {"lr": -1.0}}, "lr must be positive"),
        ({"inner": 3}, "inner must be a mapping"),
    ],
)
def test_bad_values_are_named(data, fragment):
    with pytest.raises(ConfigError, match=fragment.replace("(", r"\(").replace("[", r"\[")):
        build(Outer, data)


@dataclass(frozen=True)
class Sinks:
    mlflow: Literal["off", "auto", "on"] = "auto"


@pytest.mark.parametrize(("text", "expected"), [("off", "off"), ("on", "on"), ("auto", "auto")])
def test_yaml_booleans_become_literal_words(text, expected):
    # YAML 1.1 parses on/off as booleans; a Literal field of words takes them back.
    assert build(Sinks, parse_overrides([f"mlflow={text}"])).mlflow == expected


def test_replace_keeps_other_fields_and_revalidates():
    base = Outer(seed=1, inner=Inner(lr=0.5, mode="b"))
    updated = replace(base, {"inner": {"lr": 0.25}})
    assert updated == Outer(seed=1, inner=Inner(lr=0.25, mode="b"))
    with pytest.raises(ConfigError, match="lr must be positive"):
        replace(base, {"inner": {"lr": 0.0}})


def test_merge_is_deep_and_right_biased():
    assert merge({"a": {"b": 1, "c": 2}, "d": 1}, {"a": {"c": 3}, "d": {"e": 1}}) == {
        "a": {"b": 1, "c": 3},
        "d": {"e": 1},
    }


def test_yaml_file_round_trip(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("seed: 4\ninner:\n  lr: 0.01\n")
    cfg = build(Outer, load_yaml(path))
    assert cfg.seed == 4 and cfg.inner.lr == 0.01
    assert as_dict(cfg) == {
        "seed": 4, "name": "run", "path": None, "verbose": False,
        "inner": {"lr": 0.01, "mode": "a", "layers": [1, 2]},
    }


@pytest.mark.parametrize(
    ("text", "fragment"), [("- 1\n- 2\n", "must hold a mapping"), ("a: [1\n", "not valid YAML")]
)
def test_bad_yaml_files(tmp_path, text, fragment):
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=fragment):
        load_yaml(path)


def test_missing_file_is_named(tmp_path):
    with pytest.raises(ConfigError, match=r"cannot read config file .*nope\.yaml"):
        load_yaml(tmp_path / "nope.yaml")
