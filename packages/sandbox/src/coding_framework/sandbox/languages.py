"""How a stdin/stdout program in each language is built and run inside the sandbox.

Python runs in the forked sandbox child itself (no interpreter start-up per sample). Compiled languages
will compile in one sandboxed step and run the binary in a second; their rows are shaped here so that
adding one is a table entry plus its runner, but only Python is implemented.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Language:
    """One row of the language table."""

    name: str
    source_file: str
    """File name the program is given (argv[0], tracebacks)."""
    compile_argv: tuple[str, ...] = ()
    """Compiler command, `{src}` and `{bin}` substituted; empty for interpreted languages."""
    run_argv: tuple[str, ...] = ()
    """Command for a compiled binary; empty when the program runs in the forked sandbox child."""
    implemented: bool = False


LANGUAGES: dict[str, Language] = {
    "python": Language("python", "main.py", implemented=True),
    "cpp": Language("cpp", "main.cpp", ("g++", "-O2", "-std=c++17", "-o", "{bin}", "{src}"), ("{bin}",)),
    "java": Language("java", "Main.java", ("javac", "-d", "{dir}", "{src}"),
                     ("java", "-cp", "{dir}", "Main")),
    "go": Language("go", "main.go", ("go", "build", "-o", "{bin}", "{src}"), ("{bin}",)),
    "rust": Language("rust", "main.rs", ("rustc", "-O", "-o", "{bin}", "{src}"), ("{bin}",)),
}


def get_language(name: str) -> Language:
    """The table row for `name`; a clear error for unknown or not-yet-implemented languages."""
    lang = LANGUAGES.get(name)
    if lang is None:
        raise ValueError(f"unknown language {name!r}; known: {sorted(LANGUAGES)}")
    if not lang.implemented:
        done = sorted(k for k, v in LANGUAGES.items() if v.implemented)
        raise ValueError(f"language {name!r} is not implemented yet; implemented: {done}")
    return lang
