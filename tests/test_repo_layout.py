"""Repo-wide rules every package follows (DESIGN §2).

The test reads the real source tree (runfiles are symlinks into it) and also checks that Bazel hands
it every package, so a new package cannot slip past by not being listed in tests/BUILD.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

REQUIRED = ("pyproject.toml", "BUILD", "README.md", "CHANGELOG.md", "tests")


def _repo_root() -> Path:
    workspace = Path(__file__).resolve().parent.parent / "WORKSPACE"
    assert workspace.is_file(), f"cannot find the repo root from {__file__}"
    return workspace.parent


ROOT = _repo_root()
PACKAGES = sorted(p for p in (ROOT / "packages").iterdir() if p.is_dir() and not p.name.startswith("."))


def _tracked(path: Path) -> bool:
    return "__pycache__" not in path.parts and ".egg-info" not in str(path)


def test_there_are_packages():
    assert {p.name for p in PACKAGES} >= {"cli", "rl-core"}


def test_every_package_is_listed_in_tests_build():
    build = (ROOT / "tests" / "BUILD").read_text()
    missing = [p.name for p in PACKAGES if f'"//packages/{p.name}:package_files"' not in build]
    assert not missing, f"add //packages/<name>:package_files to tests/BUILD for: {missing}"


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.name)
def test_package_has_required_files(package: Path):
    missing = [name for name in REQUIRED if not (package / name).exists()]
    assert not missing, f"{package.name} lacks {missing}"
    assert list((package / "tests").glob("test_*.py")), f"{package.name}/tests has no test_*.py"
    readme = (package / "README.md").read_text()
    assert f"bazel test //packages/{package.name}/..." in readme, f"{package.name}/README.md: how to test"


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.name)
def test_namespace_package_has_no_init(package: Path):
    namespace = package / "src" / "coding_framework"
    assert namespace.is_dir(), f"{package.name}: code belongs under src/coding_framework/"
    assert not (namespace / "__init__.py").exists(), "coding_framework is a PEP 420 namespace package"
    modules = [p for p in namespace.iterdir() if p.is_dir() and _tracked(p)]
    assert [m.name for m in modules] == [package.name.replace("-", "_")], (
        f"{package.name} must hold exactly coding_framework/{package.name.replace('-', '_')}"
    )


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.name)
def test_version_lives_only_in_pyproject(package: Path):
    project = tomllib.loads((package / "pyproject.toml").read_text())["project"]
    assert re.fullmatch(r"\d+\.\d+\.\d+", project["version"]), project["version"]
    assert "dynamic" not in project or "version" not in project["dynamic"]
    expected_name = "coding-framework" if package.name == "cli" else f"coding-framework-{package.name}"
    assert project["name"] == expected_name
    version_assignment = re.compile(r"^\s*(__version__|VERSION|version)\s*=\s*['\"]\d", re.M)
    for source in (package / "src").rglob("*.py"):
        assert not version_assignment.search(source.read_text()), f"{source}: a version outside pyproject"
    for extra in ("setup.py", "setup.cfg", "VERSION", "version.txt"):
        assert not (package / extra).exists(), f"{package.name}/{extra}: the version lives in pyproject.toml"


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.name)
def test_changelog_mentions_current_version(package: Path):
    version = tomllib.loads((package / "pyproject.toml").read_text())["project"]["version"]
    assert version in (package / "CHANGELOG.md").read_text(), f"{package.name}: CHANGELOG lacks {version}"


def test_dependency_pins_live_in_one_place():
    """Package manifests name dependencies; only tools/requirements.lock pins versions."""
    for package in PACKAGES:
        project = tomllib.loads((package / "pyproject.toml").read_text())["project"]
        deps = list(project.get("dependencies", []))
        for extra in project.get("optional-dependencies", {}).values():
            deps += extra
        pinned = [d for d in deps if "==" in d]
        assert not pinned, f"{package.name} pins {pinned}: pin in tools/requirements.lock instead"
    lock = (ROOT / "tools" / "requirements.lock").read_text().splitlines()
    entries = [line for line in lock if line and not line.startswith("#")]
    assert entries and all("==" in line for line in entries), "every lock entry is an exact pin"


def test_root_readme_gives_both_commands_and_links_packages():
    readme = (ROOT / "README.md").read_text()
    assert "tools/run" in readme and "tools/test" in readme
    for package in PACKAGES:
        assert f"packages/{package.name}/README.md" in readme, f"README does not link {package.name}"
