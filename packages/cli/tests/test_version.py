import re
import tomllib
from pathlib import Path

from typer.testing import CliRunner

from coding_framework.cli.main import app
from coding_framework.cli.versions import installed_packages

PACKAGES = Path(__file__).resolve().parents[2]


def _declared_versions() -> dict[str, str]:
    versions = {}
    for manifest in sorted(PACKAGES.glob("*/pyproject.toml")):
        project = tomllib.loads(manifest.read_text())["project"]
        versions[project["name"]] = project["version"]
    return versions


def test_installed_versions_match_each_pyproject():
    declared = _declared_versions()
    installed = {p.distribution: p.version for p in installed_packages()}
    missing = set(declared) - set(installed)
    assert not missing, f"not installed: {missing}; run tools/setup"
    for name, version in declared.items():
        assert installed[name] == version, name


def test_version_flag_lists_every_package():
    result = CliRunner().invoke(app, ["--version"], terminal_width=200)
    assert result.exit_code == 0, result.output
    for name, version in _declared_versions().items():
        pattern = rf"^\W*{re.escape(name)}[\s│]+{re.escape(version)}\b"
        assert re.search(pattern, result.output, re.M), (name, result.output)


def test_umbrella_listed_first():
    names = [p.distribution for p in installed_packages()]
    assert names[0] == "coding-framework"
