"""Entry point of every Python test target: runs pytest on the target's own test files.

Bazel's py_test runs one script; the test files are its `srcs`. Bazel passes nothing else we need,
so the files come in through the CF_PYTEST_FILES argument list that `cf_py_tests` writes.
"""

import os
import sys

import pytest


def main() -> int:
    files = sys.argv[1:]
    if not files:
        print("pytest_main: no test files given", file=sys.stderr)
        return 2
    args = ["-q", "-p", "no:cacheprovider", "--no-header", "-rfEs"]
    # Bazel gives each test a private, writable TEST_TMPDIR; keep pytest's tmp_path inside it.
    tmp = os.environ.get("TEST_TMPDIR")
    if tmp:
        args += ["--basetemp", os.path.join(tmp, "pytest")]
    xml = os.environ.get("XML_OUTPUT_FILE")
    if xml:
        args += ["--junitxml", xml]
    return pytest.main(args + files)


if __name__ == "__main__":
    sys.exit(main())
