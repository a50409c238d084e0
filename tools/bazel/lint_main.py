"""Lint test: ruff over the files Bazel hands in, configured by the repo's ruff.toml."""

import os
import subprocess
import sys


def main() -> int:
    files = sys.argv[1:]
    config = os.path.join(os.environ["TEST_SRCDIR"], os.environ["TEST_WORKSPACE"], "ruff.toml")
    cmd = [sys.executable, "-m", "ruff", "check", "--no-cache", "--config", config, *files]
    result = subprocess.run(cmd, check=False)
    if result.returncode == 0:
        print(f"ruff: {len(files)} files clean")
    return result.returncode


if __name__ == "__main__":
    sys.exit(main())
