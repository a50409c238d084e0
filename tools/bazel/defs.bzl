"""Build macros shared by every package: one library, one test target per test file, one lint test.

Third-party dependencies are not Bazel targets: they live in the repo's .venv (pinned in
tools/requirements.lock), whose interpreter runs every test. Dependencies between our own packages
are Bazel targets, so `bazel test //packages/x/...` rebuilds only what x depends on.
"""

def cf_py_library(name, deps = [], data = [], **kwargs):
    """The package's library: everything under src/, importable as coding_framework.<pkg>."""
    native.py_library(
        name = name,
        srcs = native.glob(["src/**/*.py"]),
        data = data + native.glob(["src/**/*"], exclude = ["src/**/*.py", "src/**/__pycache__/**"]),
        imports = ["src"],
        deps = deps,
        visibility = ["//visibility:public"],
        **kwargs
    )

def cf_py_tests(srcs, deps = [], data = [], size = "small", sizes = {}, tags = [], extra_tags = {}, shared_srcs = []):
    """One py_test per test file, run by pytest.

    Args:
      srcs: test files, one target each, named after the file.
      deps: libraries the tests import.
      data: files the tests read.
      size: default Bazel size; `sizes` overrides it per file name (use "large" for slow end-to-end
        tests: they still run under `bazel test //...`).
      tags: tags for every target; `extra_tags` adds some per file name.
      shared_srcs: helper modules (conftest.py, fixtures) every target needs.
    """
    for src in srcs:
        name = src.split("/")[-1][:-len(".py")]
        native.py_test(
            name = name,
            srcs = [src, "//tools/bazel:pytest_main.py"] + shared_srcs,
            main = "//tools/bazel:pytest_main.py",
            args = ["$(location %s)" % src],
            python_version = "PY3",
            deps = deps,
            data = data,
            size = sizes.get(src, size),
            tags = tags + extra_tags.get(src, []),
        )

def cf_lint_test(name = "lint", srcs = None):
    """ruff over the package's Python files, with the repo's ruff.toml."""
    if srcs == None:
        srcs = native.glob(["**/*.py"])
    native.py_test(
        name = name,
        srcs = ["//tools/bazel:lint_main.py"],
        main = "//tools/bazel:lint_main.py",
        args = ["$(location %s)" % s for s in srcs],
        data = srcs + ["//:ruff.toml"],
        python_version = "PY3",
        size = "small",
    )

def cf_package_files(name = "package_files"):
    """Every file of the package, for the repo-wide layout checks in //tests."""
    native.filegroup(
        name = name,
        srcs = native.glob(["**"], exclude = ["**/__pycache__/**", "**/*.egg-info/**"]),
        visibility = ["//visibility:public"],
    )
