"""tiny_coder: builds the project's own small code model on CPU (see README.md).

Run `python -m tools.tiny_coder.build --out models/tiny-coder` from the repo root.
"""
